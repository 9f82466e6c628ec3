//! Ranked play: queue tickets (open, cancel, read) and the matchmaking waves that pair them.
//!
//! A ticket is a stream of its own. The write side keeps one row per player in `queue_slots`,
//! changed in the same transaction as the ticket's events, which is what makes "one open ticket
//! per player, none during a ranked match" hold under any race. A wave reads the waiting
//! tickets of a pool (the `queue` projection), pairs them with the pure
//! [`domain::matchmaking::pair`], and writes each pairing — the match's creation and both
//! `ticket_matched` events, each ticket expected at version 1 — as one atomic append: a ticket
//! cancelled meanwhile makes that pairing fail whole, and no ticket can be matched twice, also
//! with several instances running waves at once.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::games::GameId;
use domain::ids::{MatchId, PlayerId, Seat, TicketId};
use domain::matches::{
    Action, Command, CreateMatch, FirstMoveRule, MatchState, Occupant, Settings, Stamped,
    TurnSeconds, decide, evolve,
};
use domain::matchmaking::{self, Candidate, Rules};
use domain::ratings::{Rating, decay, idle_days};
use domain::tickets::{Pool, Status, Ticket, TicketEvent, TicketMatched, TicketOpened};
use eventlog::{AppendError, AppendOutcome, EventLog, NewEvent, StreamAppend};

use crate::error::ApiError;
use crate::error::unexpected;
use crate::play::{self, Loaded};
use crate::state::AppState;

/// A ticket as the API shows it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TicketView {
    pub ticket_id: TicketId,
    pub status: Status,
    pub match_id: Option<MatchId>,
    pub game: GameId,
    pub turn_seconds: Option<TurnSeconds>,
    #[serde(with = "time::serde::rfc3339")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub opened_at: OffsetDateTime,
    /// The rating and deviation the ticket recorded when it opened.
    pub rating: f64,
    pub deviation: f64,
    /// While waiting: how far from `rating` an opponent may be now (it widens with the wait,
    /// on the schedule of `GET /v1/admin/queue/stats`); null once matched or cancelled.
    pub allowed_gap: Option<f64>,
}

impl TicketView {
    fn new(id: TicketId, t: &Ticket, now: OffsetDateTime) -> TicketView {
        let waited_ms = (now - t.opened_at).whole_milliseconds().max(0) as u64;
        let allowed_gap = (t.status == Status::Waiting).then(|| {
            Rules::default().allowed_gap(&Candidate {
                player: t.opened.player_id,
                rating: t.opened.rating,
                deviation: t.opened.deviation,
                waited_ms,
                previous_opponent: None,
            })
        });
        TicketView {
            ticket_id: id,
            status: t.status,
            match_id: t.match_id,
            game: t.opened.game,
            turn_seconds: t.opened.turn_seconds,
            opened_at: t.opened_at,
            rating: t.opened.rating,
            deviation: t.opened.deviation,
            allowed_gap,
        }
    }
}

fn new_event(e: &TicketEvent, actor: Option<PlayerId>, at: OffsetDateTime) -> NewEvent {
    NewEvent {
        event_type: e.event_type().to_owned(),
        schema_version: TicketEvent::SCHEMA_VERSION,
        data: e.data(),
        actor: actor.map(|p| p.as_uuid()),
        recorded_at: at,
    }
}

/// Reads and folds a ticket stream.
pub async fn load_ticket(app: &AppState, id: TicketId) -> Result<Ticket, ApiError> {
    let events = app
        .log
        .read_stream(&id.stream())
        .await
        .map_err(unexpected)?;
    let decoded = events
        .iter()
        .map(|e| {
            TicketEvent::decode(&e.event_type, e.schema_version, &e.data)
                .map(|t| (e.recorded_at, t))
                .map_err(|err| ApiError::Unexpected(anyhow::anyhow!("event {}: {err}", e.event_id)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ticket::fold(decoded.iter().map(|(at, e)| (*at, e))).ok_or(ApiError::NotFound("ticket"))
}

/// A ticket of `player`'s own, folded (`not_found` for anyone else's: tickets are private).
async fn load_own_ticket(
    app: &AppState,
    player: PlayerId,
    id: TicketId,
) -> Result<Ticket, ApiError> {
    let t = load_ticket(app, id).await?;
    if t.opened.player_id != player {
        return Err(ApiError::NotFound("ticket"));
    }
    Ok(t)
}

/// The view of a ticket of `player`'s own.
pub async fn own_ticket(
    app: &AppState,
    player: PlayerId,
    id: TicketId,
) -> Result<TicketView, ApiError> {
    let t = load_own_ticket(app, player, id).await?;
    Ok(TicketView::new(id, &t, app.now()))
}

/// A player's values in a game as of `now`: the projection's, with the idle days since their
/// last ranked match applied (SPEC §4), or a newcomer's.
pub async fn current_rating(
    app: &AppState,
    player: PlayerId,
    game: GameId,
    now: OffsetDateTime,
) -> Result<Rating, ApiError> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let stored = projections::queries::rating_in(&client, player, game)
        .await
        .map_err(unexpected)?;
    Ok(match stored {
        None => Rating::NEW,
        Some(s) => decay(s.rating, idle_days(s.last_ended_at, now)),
    })
}

/// `POST /v1/queue`: opens a ticket for `player` in the pool, unless they already have one
/// open (`already_queued`) or are playing a ranked match (`in_match`).
pub async fn open_ticket(
    app: &AppState,
    player: PlayerId,
    pool: Pool,
    command_id: Uuid,
) -> Result<TicketView, ApiError> {
    let now = app.now();
    let rating = current_rating(app, player, pool.game, now).await?;
    let id = TicketId::from_uuid(Uuid::new_v5(&command_id, b"ticket"));
    let opened = TicketOpened {
        player_id: player,
        game: pool.game,
        turn_seconds: pool.turn_seconds,
        rating: rating.rating,
        deviation: rating.deviation,
    };
    let mut client = app.pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    tx.execute(
        "INSERT INTO queue_slots (player_id) VALUES ($1) ON CONFLICT DO NOTHING",
        &[&player.as_uuid()],
    )
    .await
    .map_err(unexpected)?;
    let slot = tx
        .query_one(
            "SELECT ticket_id, match_id FROM queue_slots WHERE player_id = $1 FOR UPDATE",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    let (ticket, in_match): (Option<Uuid>, Option<Uuid>) = (slot.get(0), slot.get(1));
    if let Some(t) = ticket {
        // The same request again (same command): its ticket, as it is now.
        if t == id.as_uuid() {
            drop(tx);
            return own_ticket(app, player, id).await;
        }
        return Err(ApiError::AlreadyQueued);
    }
    if let Some(m) = in_match {
        let loaded = play::load(app, MatchId::from_uuid(m)).await?;
        if !loaded.get()?.is_finished() {
            return Err(ApiError::InMatch);
        }
    }
    let event = TicketEvent::TicketOpened(opened);
    let append = StreamAppend {
        stream: id.stream(),
        expected_version: 0,
        events: vec![new_event(&event, Some(player), now)],
    };
    let outcome = append_with_slot(
        tx,
        command_id,
        vec![append],
        None,
        "UPDATE queue_slots SET ticket_id = $2, match_id = NULL WHERE player_id = $1",
        &[&player.as_uuid(), &id.as_uuid()],
    )
    .await?;
    match outcome {
        Ok(AppendOutcome::Appended(_)) => {}
        Ok(AppendOutcome::AlreadyApplied(_)) => return own_ticket(app, player, id).await,
        Err(_) => return Err(ApiError::AlreadyQueued),
    }
    app.wake_projections();
    app.waves.notify_one();
    let t = Ticket::fold([(now, &event)]).ok_or(ApiError::NotFound("ticket"))?;
    Ok(TicketView::new(id, &t, now))
}

/// `DELETE /v1/queue/{ticket}`: the owner cancels a waiting ticket (`ticket_closed` once it is
/// matched or cancelled; a wave that races it wins or loses whole).
pub async fn cancel_ticket(
    app: &AppState,
    player: PlayerId,
    id: TicketId,
) -> Result<TicketView, ApiError> {
    let t = load_own_ticket(app, player, id).await?;
    let event = t.cancel().map_err(|_| ApiError::TicketClosed)?;
    let now = app.now();
    let append = StreamAppend {
        stream: id.stream(),
        expected_version: t.version as i64,
        events: vec![new_event(&event, Some(player), now)],
    };
    let command_id = Uuid::new_v5(&id.as_uuid(), b"cancel");
    let mut client = app.pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    let outcome = append_with_slot(
        tx,
        command_id,
        vec![append],
        None,
        "UPDATE queue_slots SET ticket_id = NULL WHERE player_id = $1 AND ticket_id = $2",
        &[&player.as_uuid(), &id.as_uuid()],
    )
    .await?;
    if !matches!(outcome, Ok(AppendOutcome::Appended(_))) {
        return Err(ApiError::TicketClosed);
    }
    app.wake_projections();
    let mut view = TicketView::new(id, &t, now);
    view.status = Status::Cancelled;
    view.allowed_gap = None;
    Ok(view)
}

/// Appends a queue command and changes the players' `queue_slots` rows in `tx`: both commit or
/// neither. The inner result is the log's answer; a conflict rolls the transaction back.
async fn append_with_slot(
    tx: deadpool_postgres::Transaction<'_>,
    command_id: Uuid,
    appends: Vec<StreamAppend>,
    work: Option<&crate::commit::WorkRow>,
    slot_sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Result<AppendOutcome, AppendError>, ApiError> {
    match EventLog::append_on(&tx, command_id, appends).await {
        Ok(AppendOutcome::Appended(written)) => {
            tx.execute(slot_sql, params).await.map_err(unexpected)?;
            if let Some(work) = work {
                crate::commit::write_work(&tx, &[work])
                    .await
                    .map_err(unexpected)?;
            }
            tx.commit().await.map_err(unexpected)?;
            Ok(Ok(AppendOutcome::Appended(written)))
        }
        // Written before by this very command: nothing to change.
        Ok(already) => Ok(Ok(already)),
        Err(conflict @ AppendError::Conflict { .. }) => Ok(Err(conflict)),
        Err(e) => Err(unexpected(e)),
    }
}

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
async fn busy_pools(app: &AppState) -> Result<Vec<Pool>, ApiError> {
    let client = app.pool.get().await.map_err(unexpected)?;
    projections::queries::busy_pools(&client)
        .await
        .map_err(unexpected)
}

/// Runs one wave over every pool with waiting tickets.
pub async fn run_waves(app: &AppState) -> Result<HashMap<Pool, WaveReport>, ApiError> {
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
pub async fn run_wave(app: &AppState, pool: Pool) -> Result<WaveReport, ApiError> {
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
        match write_pairing(
            app,
            pool,
            &waiting[a],
            &waiting[b],
            &candidates,
            a,
            b,
            repeat,
            by_coin.then_some(coin),
            now,
        )
        .await
        {
            Ok(Some(id)) => {
                report.paired += 1;
                report.matches.push(id);
            }
            Ok(None) | Err(ApiError::VersionConflict { .. }) => report.lost += 1,
            Err(e) => return Err(e),
        }
    }
    app.metrics.wave(pool, report.paired);
    if report.paired > 0 {
        app.wake_projections();
    }
    Ok(report)
}

/// Writes one pairing: the match (seat 1 to `a`, who moves first) and both tickets matched, in
/// one append with the slot rows and the match's work row. Its command id (and so the match's
/// id) derives from the two tickets: an instance that writes the same pairing again writes
/// nothing, and gets `None`, as when it loses to a cancel.
#[allow(clippy::too_many_arguments)]
async fn write_pairing(
    app: &AppState,
    pool: Pool,
    a: &Waiting,
    b: &Waiting,
    candidates: &[Candidate],
    ai: usize,
    bi: usize,
    repeat: bool,
    coin: Option<bool>,
    now: OffsetDateTime,
) -> Result<Option<MatchId>, ApiError> {
    // Whichever ticket got seat 1 (a coin may differ between instances): the same pairing.
    let (lo, hi) = if a.ticket.as_uuid() < b.ticket.as_uuid() {
        (a.ticket.as_uuid(), b.ticket.as_uuid())
    } else {
        (b.ticket.as_uuid(), a.ticket.as_uuid())
    };
    let command_id = Uuid::new_v5(&lo, hi.as_bytes());
    let id = MatchId::from_uuid(Uuid::new_v5(&command_id, b"match"));
    let create = CreateMatch {
        game: pool.game,
        seats: [
            Occupant::Human {
                player_id: a.player,
            },
            Occupant::Human {
                player_id: b.player,
            },
        ],
        settings: Settings {
            turn_seconds: pool.turn_seconds,
            ..Settings::default()
        },
        first_seat: Seat::ONE,
        first_rule: match coin {
            Some(heads) => FirstMoveRule::CoinFlip { heads },
            None => FirstMoveRule::FewerStarts,
        },
        ranked: true,
        room_id: None,
        cpu_seed: play::fresh_seed(),
    };
    let events = decide(
        &MatchState::default(),
        &Command {
            at: now,
            action: Action::CreateMatch(create),
        },
    )
    .map_err(ApiError::from)?;
    let gap = (candidates[ai].rating - candidates[bi].rating).abs();
    let matched = |w: &Waiting, opponent: PlayerId| {
        TicketEvent::TicketMatched(TicketMatched {
            match_id: id,
            opponent,
            rating_gap: gap,
            waited_ms: u64::try_from((now - w.opened_at).whole_milliseconds().max(0)).unwrap_or(0),
            repeat,
        })
    };
    let appends = vec![
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
    ];
    let mut state = MatchState::default();
    for e in &events {
        evolve(
            &mut state,
            &Stamped {
                at: now,
                event: e.clone(),
            },
        );
    }
    let loaded = Loaded {
        id,
        state,
        names: Default::default(),
        head: None,
    };
    // The match's timers commit with it: no crash can leave it without them.
    let work = play::work_row(app, &loaded, None, now);
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
            return Err(ApiError::VersionConflict {
                expected: expected as u64,
                actual: actual as u64,
            });
        }
        Ok(AppendOutcome::Appended(written)) => app.live.committed(app, id, &written),
        Ok(AppendOutcome::AlreadyApplied(_)) => return Ok(None),
        Err(e) => return Err(unexpected(e)),
    }
    Ok(Some(id))
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
