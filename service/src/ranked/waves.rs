//! The matchmaking waves: read a pool's waiting tickets, pair them (`domain::matchmaking`), and
//! write the pairings up to a hundred to a transaction, each pairing one atomic command; the loop
//! that runs them.
//!
//! A wave reads the open tickets from `queue_slots` (the write side), not from the queue
//! projection, which under a burst trails the log by seconds, leaving out the players seated in a
//! live ranked match or banned. Each match seats its players (`ranked_seats`) in the transaction
//! that creates it. A chunk of pairings that loses to another writer as a whole (a deadlock, a
//! unique violation: a player seated meanwhile by a tournament) is written again pairing by
//! pairing; a single pairing that finds a player seated is lost, its tickets wait. The loop
//! ([`waves_forever`]) runs a wave `interval` after the previous one started, at once after a wave
//! that took longer, or when a ticket opens into a full pool; waves read and write on connections
//! of their own (`Ranked::wave_pool`), so that a burst of requests queueing for the shared pool
//! does not hold back the wave that would pair them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use serde::Serialize;
use time::OffsetDateTime;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use domain::ids::{MatchId, PlayerId, Seat, TicketId};
use domain::matches::{CreateMatch, FirstMoveRule, Occupant, Settings};
use domain::matches::{DaysPerMove, TurnSeconds};
use domain::matchmaking::{self, Candidate, Rules};
use domain::tickets::{Pool, Ticket, TicketEvent, TicketMatched};
use eventlog::{AppendError, AppendOutcome, EventLog, StreamAppend};

use crate::aggregates;
use crate::error::Error;
use crate::error::unexpected;
use crate::live::commit;
use crate::live::created::{Created, write_beside};
use crate::ranked::Ranked;

/// What one wave over one pool did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WaveReport {
    pub waiting: usize,
    pub paired: usize,
    /// Pairings that lost a race (a ticket cancelled or matched elsewhere meanwhile).
    pub lost: usize,
    pub matches: Vec<MatchId>,
}

/// The pools that have open tickets.
async fn busy_pools(app: &Ranked) -> Result<Vec<Pool>, Error> {
    let client = app.wave_pool.get().await.map_err(unexpected)?;
    let rows = client
        .query(
            "SELECT DISTINCT game, turn_seconds, days_per_move FROM queue_slots \
              WHERE ticket_id IS NOT NULL ORDER BY 1, 2, 3",
            &[],
        )
        .await
        .map_err(unexpected)?;
    Ok(rows
        .iter()
        .filter_map(|r| {
            Some(Pool {
                game: r.get::<_, Option<String>>(0)?.parse().ok()?,
                turn_seconds: TurnSeconds::from_code(r.get::<_, Option<i32>>(1)?),
                days_per_move: DaysPerMove::from_code(r.get(2)),
            })
        })
        .collect())
}

/// A pool's open tickets, longest-waiting first, as the write side holds them (the players'
/// slots, changed in the transactions that open, match and cancel tickets).
async fn open_tickets(
    client: &deadpool_postgres::Client,
    pool: Pool,
    now: OffsetDateTime,
) -> Result<Vec<Waiting>, tokio_postgres::Error> {
    // A player whose tournament has started waits: they are not in the queue meanwhile; so
    // does one seated in a live ranked match (a rated tournament's game taken after the ticket
    // opened). Neither holds for a correspondence pool (`$4` its days): a correspondence game
    // seats nobody. A banned player's ticket is closed by the ban, a bot's by its declaration;
    // one read before it is left out. Tickets opened at the same time are taken in their
    // players' order (a player has one open ticket), so that a wave's pairs and the order its
    // coins apply in follow from the queue alone.
    let rows = client
        .query(
            "SELECT s.ticket_id, s.player_id, s.rating, s.deviation, s.opened_at \
               FROM queue_slots s \
              WHERE s.ticket_id IS NOT NULL AND s.game = $1 AND s.turn_seconds = $2 \
                AND s.days_per_move = $4 \
                AND ($4 > 0 OR (NOT EXISTS (SELECT 1 FROM tournament_seats t \
                                 WHERE t.player_id = s.player_id AND t.starts_at <= $3) \
                AND NOT EXISTS (SELECT 1 FROM ranked_seats r WHERE r.player_id = s.player_id))) \
                AND NOT EXISTS (SELECT 1 FROM player_bans b WHERE b.player_id = s.player_id) \
                AND NOT EXISTS (SELECT 1 FROM player_bots b WHERE b.player_id = s.player_id) \
              ORDER BY s.opened_at, s.player_id",
            &[
                &pool.game.as_str(),
                &TurnSeconds::code(pool.turn_seconds),
                &now,
                &DaysPerMove::code(pool.days_per_move),
            ],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Waiting {
            ticket: TicketId::from_uuid(r.get(0)),
            player: PlayerId::from_uuid(r.get(1)),
            rating: r.get(2),
            deviation: r.get(3),
            opened_at: r.get(4),
        })
        .collect())
}

/// Runs one wave over every pool with waiting tickets.
pub async fn run_waves(app: &Ranked) -> Result<HashMap<Pool, WaveReport>, Error> {
    let mut reports = HashMap::new();
    for pool in busy_pools(app).await? {
        let report = run_wave(app, pool).await?;
        reports.insert(pool, report);
    }
    Ok(reports)
}

/// An open ticket as the wave reads it.
struct Waiting {
    ticket: TicketId,
    player: PlayerId,
    rating: f64,
    deviation: f64,
    opened_at: OffsetDateTime,
}

/// One wave over one pool: read the waiting tickets, pair them, write every pairing.
pub async fn run_wave(app: &Ranked, pool: Pool) -> Result<WaveReport, Error> {
    let started = std::time::Instant::now();
    let now = app.now();
    let client = app.wave_pool.get().await.map_err(unexpected)?;
    let waiting = open_tickets(&client, pool, now).await.map_err(unexpected)?;
    let players: Vec<PlayerId> = waiting.iter().map(|t| t.player).collect();
    // Each player's previous ranked opponent and first moves in their last 10 ranked games, at
    // the pool's pace.
    let previous = projections::queries::ranked_pasts(&client, pool.ladder(), &players)
        .await
        .map_err(unexpected)?;
    drop(client);
    let candidates: Vec<Candidate> = waiting
        .iter()
        .map(|t| Candidate {
            player: t.player,
            rating: t.rating,
            deviation: t.deviation,
            waited_ms: u64::try_from((now - t.opened_at).whole_milliseconds().max(0)).unwrap_or(0),
            previous_opponent: previous.get(&t.player).and_then(|p| p.previous_opponent),
        })
        .collect();
    let rules = Rules::default();
    let pairing = matchmaking::pair(&candidates, &rules);
    let mut report = WaveReport {
        waiting: waiting.len(),
        ..WaveReport::default()
    };
    let mut planned = Vec::with_capacity(pairing.pairs.len());
    for &(i, j) in &pairing.pairs {
        let starts = |k: usize| {
            previous
                .get(&waiting[k].player)
                .map_or(0, |p| u32::try_from(p.started_of_last_10).unwrap_or(0))
        };
        let repeat = candidates[i].previous_opponent == Some(candidates[j].player)
            || candidates[j].previous_opponent == Some(candidates[i].player);
        let coin = app.chance.coin();
        let (first, by_coin) = matchmaking::first_seat([starts(i), starts(j)], coin);
        let (a, b) = if first == 0 { (i, j) } else { (j, i) };
        let pairing = Pairing {
            first: &waiting[a],
            second: &waiting[b],
            gap: (candidates[a].rating - candidates[b].rating).abs(),
            repeat,
            coin: by_coin.then_some(coin),
            seed: app.chance.bits(),
        };
        planned.push(plan(pool, &pairing, now)?);
    }
    let planned_in = started.elapsed();
    for chunk in planned.chunks(PAIRINGS_PER_WRITE) {
        let written = match write_pairings(app, chunk).await {
            Err(e) if chunk.len() > 1 && lost_to_another_writer(&e) => {
                // A deadlock or a serialization failure with another writer undoes the whole
                // chunk: each of its pairings is tried again on its own.
                let mut written = Vec::with_capacity(chunk.len());
                for one in chunk {
                    written.extend(write_pairings(app, std::slice::from_ref(one)).await?);
                }
                written
            }
            other => other?,
        };
        for (one, made) in chunk.iter().zip(written) {
            if made {
                report.paired += 1;
                report.matches.push(one.id);
            } else {
                report.lost += 1;
            }
        }
    }
    if report.paired + report.lost > 0 {
        tracing::info!(
            pool = %pool,
            waiting = report.waiting,
            paired = report.paired,
            lost = report.lost,
            read_and_pair_ms = planned_in.as_millis() as u64,
            ms = started.elapsed().as_millis() as u64,
            "wave"
        );
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
    /// The seed of the CPU's choices in the match (a stand-in's).
    seed: u64,
}

/// Pairings written in one transaction at most: a wave's pairings are written in a few
/// set-based transactions (the burst of a tournament start writes thousands of pairings per
/// second), none holding its locks for long.
pub const PAIRINGS_PER_WRITE: usize = 100;

/// One pairing made ready to write: the match's creation and both `ticket_matched` events, the
/// slot rows to move and the match's work row.
struct Planned {
    command_id: Uuid,
    id: MatchId,
    appends: Vec<StreamAppend>,
    players: [Uuid; 2],
    tickets: [Uuid; 2],
    /// The match, and what it commits with.
    created: Created,
}

/// Decides one pairing's match (seat 1 to `first`, who moves first). Its command id (and so the
/// match's id) derives from the two tickets, whichever got seat 1 (a coin may differ between
/// instances): an instance that writes the same pairing again writes nothing.
fn plan(pool: Pool, pairing: &Pairing<'_>, now: OffsetDateTime) -> Result<Planned, Error> {
    let (a, b) = (pairing.first, pairing.second);
    let (lo, hi) = if a.ticket.as_uuid() < b.ticket.as_uuid() {
        (a.ticket.as_uuid(), b.ticket.as_uuid())
    } else {
        (b.ticket.as_uuid(), a.ticket.as_uuid())
    };
    let command_id = Uuid::new_v5(&lo, hi.as_bytes());
    let id = MatchId::of_command(command_id);
    let created = Created::decide(id, ranked_match(pool, pairing), now)?;
    Ok(Planned {
        command_id,
        id,
        appends: pairing_appends(created.append(), id, pairing, now),
        players: [a.player.as_uuid(), b.player.as_uuid()],
        tickets: [a.ticket.as_uuid(), b.ticket.as_uuid()],
        created,
    })
}

/// Moves the slot rows of the players of the pairings that went through: each player's slot
/// from the matched ticket to the new match.
const SLOTS_MATCHED: &str = "UPDATE queue_slots s SET ticket_id = NULL, match_id = u.match_id \
      FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS u(player_id, ticket_id, match_id) \
     WHERE s.player_id = u.player_id AND s.ticket_id = u.ticket_id";

/// Writes pairings in one transaction: every match with both its tickets matched
/// (`eventlog_append_batch`, each pairing one command, so a pairing fails whole and alone), then
/// the slot rows, work rows and ranked seats of the pairings that went through, then the commit.
/// Whether each pairing was written by this call; one that lost (a ticket cancelled or matched
/// elsewhere meanwhile, or the same pairing written by another instance) was not.
async fn write_pairings(app: &Ranked, chunk: &[Planned]) -> Result<Vec<bool>, Error> {
    let commands: Vec<(Uuid, &[StreamAppend])> = chunk
        .iter()
        .map(|p| (p.command_id, p.appends.as_slice()))
        .collect();
    let mut client = app.wave_pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    let mut answers = EventLog::append_batch_on(&tx, &commands)
        .await
        .map_err(unexpected)?;
    tracing::debug!(pairings = chunk.len(), "pairings appended");
    // A conflict is a pairing that lost its race; anything else fails the chunk.
    if let Some(failed) = answers
        .iter()
        .position(|a| matches!(a, Err(e) if !matches!(e, AppendError::Conflict { .. })))
        && let Err(e) = answers.swap_remove(failed)
    {
        return Err(unexpected(e));
    }
    let mut written = Vec::with_capacity(chunk.len());
    let (mut players, mut tickets, mut matches) = (Vec::new(), Vec::new(), Vec::new());
    let mut made: Vec<&Created> = Vec::new();
    for (p, answer) in chunk.iter().zip(&answers) {
        let went = matches!(answer, Ok(AppendOutcome::Appended(_)));
        if went {
            players.extend(p.players);
            tickets.extend(p.tickets);
            matches.extend([p.id.as_uuid(); 2]);
            made.push(&p.created);
        }
        written.push(went);
    }
    if !players.is_empty() {
        let slot_params: [&(dyn ToSql + Sync); 3] = [&players, &tickets, &matches];
        tx.execute(SLOTS_MATCHED, &slot_params)
            .await
            .map_err(unexpected)?;
        // The matches' rows, their seats last. A player seated meanwhile (a rated tournament's
        // pairing) fails the whole transaction: a pairing alone is then lost, a chunk is written
        // again pairing by pairing.
        if let Err(e) = write_beside(app, &tx, &made).await? {
            // Seated meanwhile, or a deadlock with the writer that seated them.
            if chunk.len() == 1 && commit::lost_to_another_writer(&e) {
                tracing::info!(
                    match_id = %chunk[0].id,
                    "pairing lost: a player was seated in another ranked match meanwhile"
                );
                return Ok(vec![false]);
            }
            return Err(unexpected(e));
        }
    }
    tx.commit().await.map_err(unexpected)?;
    for (p, answer) in chunk.iter().zip(&answers) {
        if let Ok(AppendOutcome::Appended(events)) = answer {
            app.live.committed(&app.log, p.id, events);
        }
    }
    Ok(written)
}

/// Whether a failed write lost to another writer, so that its pairings may go through one by
/// one ([`commit::lost_to_another_writer`]).
fn lost_to_another_writer(e: &Error) -> bool {
    let Error::Unexpected(e) = e else {
        return false;
    };
    e.chain()
        .filter_map(|c| c.downcast_ref::<tokio_postgres::Error>())
        .any(commit::lost_to_another_writer)
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
            days_per_move: pool.days_per_move,
            ..Settings::default()
        },
        first_seat: Seat::ONE,
        first_rule: match pairing.coin {
            Some(heads) => FirstMoveRule::CoinFlip { heads },
            None => FirstMoveRule::FewerStarts,
        },
        ranked: true,
        room_id: None,
        tournament_id: None,
        cpu_seed: pairing.seed,
    }
}

/// What a pairing appends: the match's creation and each ticket's `ticket_matched`, at the
/// versions a waiting ticket and a new match have.
fn pairing_appends(
    created: StreamAppend,
    id: MatchId,
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
        created,
        StreamAppend {
            stream: a.ticket.stream(),
            expected_version: 1,
            events: aggregates::new_events::<Ticket>(&[matched(a, b.player)], None, now),
        },
        StreamAppend {
            stream: b.ticket.stream(),
            expected_version: 1,
            events: aggregates::new_events::<Ticket>(&[matched(b, a.player)], None, now),
        },
    ]
}

/// When an instance's wave loop runs ([`waves_forever`]).
#[derive(Debug, Clone, Copy)]
pub struct WaveSchedule {
    /// From the start of one wave to the start of the next at most.
    pub interval: StdDuration,
    /// A ticket opening here starts a wave at once when its pool holds this many tickets.
    pub trigger: i64,
}

/// The background loop of `discs serve`: a wave over every pool `interval` after the previous
/// one started, and at once when a ticket opens on this instance and its pool holds `trigger`
/// tickets or more. Under a burst a wave may take longer than the interval: the next one then
/// starts as soon as it has committed, over the tickets waiting then, so a ticket waits for at
/// most the wave in progress and its own.
pub async fn waves_forever(app: Ranked) {
    let WaveSchedule { interval, trigger } = app.wave_schedule;
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
        let started = tokio::time::Instant::now();
        if let Err(e) = run_waves(&app).await {
            tracing::warn!(error = %e, "matchmaking wave failed");
        }
        next = started + interval;
    }
}

/// Whether some pool holds at least `trigger` waiting tickets.
async fn pool_full(app: &Ranked, trigger: i64) -> bool {
    let Ok(client) = app.wave_pool.get().await else {
        return false;
    };
    client
        .query_one(
            "SELECT coalesce(max(n), 0) FROM (SELECT count(*) n FROM queue_slots \
              WHERE ticket_id IS NOT NULL GROUP BY game, turn_seconds, days_per_move) c",
            &[],
        )
        .await
        .is_ok_and(|r| r.get::<_, i64>(0) >= trigger)
}
