//! The matchmaking waves: read a pool's waiting tickets, pair them (`domain::matchmaking`), and
//! write each pairing as one append; the loop that runs them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::ids::{MatchId, PlayerId, Seat, TicketId};
use domain::matches::{
    Action, Command, CreateMatch, FirstMoveRule, MatchEvent, MatchState, Occupant, Settings,
    Stamped, decide, evolve,
};
use domain::matchmaking::{self, Candidate, Rules};
use domain::tickets::{Pool, TicketEvent, TicketMatched};
use eventlog::{AppendError, AppendOutcome, NewEvent, StreamAppend};

use super::{append_with_slot, new_event};
use crate::error::Error;
use crate::error::unexpected;
use crate::live::play::{self, Loaded};
use crate::state::AppState;

/// What one wave over one pool did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WaveReport {
    pub waiting: usize,
    pub paired: usize,
    /// Pairings that lost a race (a ticket cancelled or matched elsewhere meanwhile).
    pub lost: usize,
    pub matches: Vec<MatchId>,
}

/// The pools that have waiting tickets.
async fn busy_pools(app: &AppState) -> Result<Vec<Pool>, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    projections::queries::busy_pools(&client)
        .await
        .map_err(unexpected)
}

/// Runs one wave over every pool with waiting tickets.
pub async fn run_waves(app: &AppState) -> Result<HashMap<Pool, WaveReport>, Error> {
    let mut reports = HashMap::new();
    for pool in busy_pools(app).await? {
        let report = run_wave(app, pool).await?;
        reports.insert(pool, report);
    }
    Ok(reports)
}

/// A waiting ticket as the wave reads it.
struct Waiting {
    ticket: TicketId,
    player: PlayerId,
    opened_at: OffsetDateTime,
}

/// One wave over one pool: read the waiting tickets, pair them, write every pairing.
pub async fn run_wave(app: &AppState, pool: Pool) -> Result<WaveReport, Error> {
    let now = app.now();
    let client = app.pool.get().await.map_err(unexpected)?;
    let tickets = projections::queries::waiting_tickets(&client, pool)
        .await
        .map_err(unexpected)?;
    let players: Vec<PlayerId> = tickets.iter().map(|t| t.player).collect();
    // Each player's previous ranked opponent and first moves in their last 10 ranked games.
    let previous = projections::queries::ranked_pasts(&client, pool.game, &players)
        .await
        .map_err(unexpected)?;
    drop(client);
    let mut waiting = Vec::with_capacity(tickets.len());
    let mut candidates = Vec::with_capacity(tickets.len());
    for t in &tickets {
        let waited_ms = u64::try_from((now - t.opened_at).whole_milliseconds().max(0)).unwrap_or(0);
        candidates.push(Candidate {
            player: t.player,
            rating: t.rating,
            deviation: t.deviation,
            waited_ms,
            previous_opponent: previous.get(&t.player).and_then(|p| p.previous_opponent),
        });
        waiting.push(Waiting {
            ticket: t.ticket,
            player: t.player,
            opened_at: t.opened_at,
        });
    }
    let rules = Rules::default();
    let pairing = matchmaking::pair(&candidates, &rules);
    let mut report = WaveReport {
        waiting: waiting.len(),
        ..WaveReport::default()
    };
    for &(i, j) in &pairing.pairs {
        let starts = |k: usize| {
            previous
                .get(&waiting[k].player)
                .map_or(0, |p| u32::try_from(p.started_of_last_10).unwrap_or(0))
        };
        let repeat = candidates[i].previous_opponent == Some(candidates[j].player)
            || candidates[j].previous_opponent == Some(candidates[i].player);
        let coin = Uuid::new_v4().as_bytes()[0] & 1 == 1;
        let (first, by_coin) = matchmaking::first_seat([starts(i), starts(j)], coin);
        let (a, b) = if first == 0 { (i, j) } else { (j, i) };
        let pairing = Pairing {
            first: &waiting[a],
            second: &waiting[b],
            gap: (candidates[a].rating - candidates[b].rating).abs(),
            repeat,
            coin: by_coin.then_some(coin),
        };
        match write_pairing(app, pool, &pairing, now).await {
            Ok(Some(id)) => {
                report.paired += 1;
                report.matches.push(id);
            }
            Ok(None) | Err(Error::VersionConflict { .. }) => report.lost += 1,
            Err(e) => return Err(e),
        }
    }
    app.metrics.wave(pool, report.paired);
    if report.paired > 0 {
        app.wake_projections();
    }
    Ok(report)
}

/// Two waiting tickets the wave pairs, `first` in seat 1 (who moves first).
struct Pairing<'a> {
    first: &'a Waiting,
    second: &'a Waiting,
    /// The rating gap between the two tickets.
    gap: f64,
    /// Whether they met in their previous ranked match.
    repeat: bool,
    /// The coin flip that chose `first`, when the rule had to flip one.
    coin: Option<bool>,
}

/// Writes one pairing: the match (seat 1 to `a`, who moves first) and both tickets matched, in
/// one append with the slot rows and the match's work row. Its command id (and so the match's
/// id) derives from the two tickets: an instance that writes the same pairing again writes
/// nothing, and gets `None`, as when it loses to a cancel.
async fn write_pairing(
    app: &AppState,
    pool: Pool,
    pairing: &Pairing<'_>,
    now: OffsetDateTime,
) -> Result<Option<MatchId>, Error> {
    let (a, b) = (pairing.first, pairing.second);
    // Whichever ticket got seat 1 (a coin may differ between instances): the same pairing.
    let (lo, hi) = if a.ticket.as_uuid() < b.ticket.as_uuid() {
        (a.ticket.as_uuid(), b.ticket.as_uuid())
    } else {
        (b.ticket.as_uuid(), a.ticket.as_uuid())
    };
    let command_id = Uuid::new_v5(&lo, hi.as_bytes());
    let id = MatchId::of_command(command_id);
    let events = decide(
        &MatchState::default(),
        &Command {
            at: now,
            action: Action::CreateMatch(ranked_match(pool, pairing)),
        },
    )
    .map_err(Error::from)?;
    let appends = pairing_appends(id, &events, pairing, now);
    // The match's timers commit with it: no crash can leave it without them.
    let work = play::work_row(app, &created(id, &events, now), None, now);
    let mut client = app.pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    let outcome = append_with_slot(
        tx,
        command_id,
        appends,
        work.as_ref(),
        "UPDATE queue_slots SET ticket_id = NULL, match_id = $3 \
         WHERE (player_id, ticket_id) IN (($1, $4), ($2, $5))",
        &[
            &a.player.as_uuid(),
            &b.player.as_uuid(),
            &id.as_uuid(),
            &a.ticket.as_uuid(),
            &b.ticket.as_uuid(),
        ],
    )
    .await?;
    match outcome {
        Err(AppendError::Conflict {
            expected, actual, ..
        }) => {
            return Err(Error::VersionConflict {
                expected: expected as u64,
                actual: actual as u64,
            });
        }
        Ok(AppendOutcome::Appended(written)) => app.live.committed(&app.log, id, &written),
        Ok(AppendOutcome::AlreadyApplied(_)) => return Ok(None),
        Err(e) => return Err(unexpected(e)),
    }
    Ok(Some(id))
}

/// The ranked match of a pairing: its two players in the pool's game and turn limit, who
/// moves first drawn by the pairing's coin or, without one, given to who started fewer.
fn ranked_match(pool: Pool, pairing: &Pairing<'_>) -> CreateMatch {
    CreateMatch {
        game: pool.game,
        seats: [
            Occupant::Human {
                player_id: pairing.first.player,
            },
            Occupant::Human {
                player_id: pairing.second.player,
            },
        ],
        settings: Settings {
            turn_seconds: pool.turn_seconds,
            ..Settings::default()
        },
        first_seat: Seat::ONE,
        first_rule: match pairing.coin {
            Some(heads) => FirstMoveRule::CoinFlip { heads },
            None => FirstMoveRule::FewerStarts,
        },
        ranked: true,
        room_id: None,
        cpu_seed: play::fresh_seed(),
    }
}

/// What a pairing appends: the match's creation and each ticket's `ticket_matched`, at the
/// versions a waiting ticket and a new match have.
fn pairing_appends(
    id: MatchId,
    events: &[MatchEvent],
    pairing: &Pairing<'_>,
    now: OffsetDateTime,
) -> Vec<StreamAppend> {
    let (a, b) = (pairing.first, pairing.second);
    let matched = |w: &Waiting, opponent: PlayerId| {
        TicketEvent::TicketMatched(TicketMatched {
            match_id: id,
            opponent,
            rating_gap: pairing.gap,
            waited_ms: u64::try_from((now - w.opened_at).whole_milliseconds().max(0)).unwrap_or(0),
            repeat: pairing.repeat,
        })
    };
    vec![
        StreamAppend {
            stream: id.stream(),
            expected_version: 0,
            events: events
                .iter()
                .map(|e| NewEvent {
                    event_type: e.event_type().to_owned(),
                    schema_version: e.schema_version(),
                    data: e.data(),
                    actor: None,
                    recorded_at: now,
                })
                .collect(),
        },
        StreamAppend {
            stream: a.ticket.stream(),
            expected_version: 1,
            events: vec![new_event(&matched(a, b.player), None, now)],
        },
        StreamAppend {
            stream: b.ticket.stream(),
            expected_version: 1,
            events: vec![new_event(&matched(b, a.player), None, now)],
        },
    ]
}

/// A match just created from `events`, as the command path knows it (for its work row).
fn created(id: MatchId, events: &[MatchEvent], now: OffsetDateTime) -> Loaded {
    let mut state = MatchState::default();
    for e in events {
        evolve(
            &mut state,
            &Stamped {
                at: now,
                event: e.clone(),
            },
        );
    }
    Loaded {
        id,
        state,
        names: Default::default(),
        head: None,
    }
}

/// The background loop of `discs serve`: a wave over every pool each `interval`, and at once
/// when a ticket opens on this instance and its pool holds `trigger` tickets or more.
pub async fn waves_forever(app: AppState, interval: StdDuration, trigger: i64) {
    let wake: Arc<tokio::sync::Notify> = app.waves.clone();
    let mut next = tokio::time::Instant::now() + interval;
    let mut stopping = app.stopping.clone();
    loop {
        let woken = tokio::select! {
            woken = tokio::time::timeout_at(next, wake.notified()) => woken.is_ok(),
            _ = stopping.wait_for(|s| *s) => return,
        };
        if woken && !pool_full(&app, trigger).await {
            continue;
        }
        if let Err(e) = run_waves(&app).await {
            tracing::warn!(error = %e, "matchmaking wave failed");
        }
        next = tokio::time::Instant::now() + interval;
    }
}

/// Whether some pool holds at least `trigger` waiting tickets.
async fn pool_full(app: &AppState, trigger: i64) -> bool {
    let Ok(client) = app.pool.get().await else {
        return false;
    };
    projections::queries::fullest_pool(&client)
        .await
        .is_ok_and(|n| n >= trigger)
}
