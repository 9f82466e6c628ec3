//! Move quality from the exact solvers: every finished ranked match, ply by ply, assessed once
//! in the background (never on the move path) and stored in `move_quality` (migration V14), a
//! projection of the log and of the cache of solved positions.
//!
//! The history projection queues each finished ranked match (`move_quality_pending`, its
//! outbox). Any instance claims the oldest queued match with a lease, judges its record with the
//! analyser on one thread, so that the result is a function of the record and the budget
//! (`Analyser::analyse_game`, `DISCS_QUALITY_PLY_NODES` per ply, what the cache knows taken as it
//! is), in the assessor's own search slot (`Searches::for_assessor`: analyses never take it nor
//! ask it to give way, so a busy instance still assesses), and in one transaction stores the
//! verdicts it solved into the cache, one row per ply (values before and after the move for the mover, best moves, quality, critical,
//! optimal, the mover's thinking time), the match's summary, and drops the queued row. A match
//! already assessed by the current solver version is only dropped from the queue.
//! `run_forever` runs one assessor per instance; `fair` reads the assessments for the flags.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use time::OffsetDateTime;
use uuid::Uuid;

use domain::analysis::{Analyser, Analysis, game_positions};
use domain::fairplay;
use domain::ids::{MatchId, Seat};
use domain::matches::{MatchEvent, MovedBy, Occupant};
use domain::search::{Limits, SOLVER_VERSION};

use crate::analysis::Analyses;
use crate::analysis::boundary::Boundary;
use crate::analysis::solved;
use crate::core::Core;
use crate::error::{Error, unexpected};
use crate::live::loaded::stamped;
use crate::live::play;
use crate::searches::StopOnDrop;

/// How long a claim of a queued match holds.
const LEASE: time::Duration = time::Duration::minutes(10);
/// Claims of one match before it is left alone (each ended by its instance's death).
const MAX_ATTEMPTS: i32 = 3;
/// How often an idle assessor looks for queued matches.
const POLL_EVERY: Duration = Duration::from_secs(2);

/// One ply as assessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessed {
    pub ply: u32,
    /// The human of the seat that moved (`None` for a CPU seat).
    pub player: Option<Uuid>,
    pub by_human: bool,
    pub mv: String,
    pub score_before: i32,
    pub score_after: i32,
    pub best_moves: Vec<String>,
    /// How many legal moves the mover had.
    pub legal_moves: i32,
    pub exact: bool,
    pub quality: Option<fairplay::Quality>,
    pub critical: bool,
    pub optimal: bool,
    pub think_ms: i64,
}

/// What an assessment pass did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The match's plies were stored.
    Assessed { plies: usize, exact: usize },
    /// The match was assessed before by this solver version: only its queued row went.
    AlreadyDone,
    /// Claimed too often: left alone.
    GaveUp,
}

/// Claims the oldest queued match no live lease holds and assesses it; `None` when none waits.
pub async fn assess_next(app: &Analyses) -> Result<Option<(MatchId, Outcome)>, Error> {
    let now = app.now();
    let client = app.pool.get().await.map_err(unexpected)?;
    let claimed = projections::queries::claim_assessment(&client, now, now + LEASE)
        .await
        .map_err(unexpected)?;
    drop(client);
    let Some((id, attempts)) = claimed else {
        return Ok(None);
    };
    let id = MatchId::from_uuid(id);
    let outcome = if attempts > MAX_ATTEMPTS {
        tracing::warn!(match_id = %id, attempts, "move quality assessment given up");
        settle(app, id, None).await?;
        Outcome::GaveUp
    } else {
        assess(app, id).await?
    };
    Ok(Some((id, outcome)))
}

/// Assesses one match and stores the result.
async fn assess(app: &Analyses, id: MatchId) -> Result<Outcome, Error> {
    {
        let client = app.pool.get().await.map_err(unexpected)?;
        let done: Option<i16> = client
            .query_opt(
                "SELECT solver FROM match_quality WHERE match_id = $1",
                &[&id.as_uuid()],
            )
            .await
            .map_err(unexpected)?
            .map(|r| r.get(0));
        if done == Some(SOLVER_VERSION) {
            drop(client);
            settle(app, id, None).await?;
            return Ok(Outcome::AlreadyDone);
        }
    }
    let (loaded, events) = play::load_with_events(app, id).await?;
    let m = loaded.get()?.clone();
    let ended_at = m.ended_at.unwrap_or(m.created_at);
    // Who moved each ply and how long they took (from the turn's start: the previous move or
    // pass, or the match's creation).
    let mut movers: Vec<(Seat, bool, i64)> = Vec::with_capacity(m.moves.len());
    let mut turn_start = m.created_at;
    for e in &events {
        let s = stamped(e)?;
        match s.event {
            MatchEvent::MovePlayed(p) => {
                let think = (s.at - turn_start).whole_milliseconds();
                movers.push((
                    p.seat,
                    p.by == MovedBy::Human,
                    i64::try_from(think.max(0)).unwrap_or(i64::MAX),
                ));
                turn_start = s.at;
            }
            MatchEvent::Passed(_) => turn_start = s.at,
            _ => {}
        }
    }
    let (before, end) = game_positions(m.game, &m.moves).map_err(unexpected)?;
    let mut positions: Vec<_> = before.iter().map(|(pos, _)| *pos).collect();
    positions.push(end);
    let known = {
        let client = app.pool.get().await.map_err(unexpected)?;
        // The assessments are read by admins only: the assessor sees the whole cache.
        solved::lookup_all(&client, &Boundary::internal(), &positions).await?
    };
    let cached: Vec<bool> = known.iter().map(Option::is_some).collect();
    // The assessor's own slot: analyses never take it nor ask it to give way.
    let slot = app.searches.for_assessor().await?;
    let stop = Arc::new(AtomicBool::new(false));
    let _stop_on_drop = StopOnDrop(Arc::clone(&stop));
    let (game, moves) = (m.game, m.moves.clone());
    let flag = Arc::clone(&stop);
    let nodes = app.jobs.quality_ply_nodes.of(m.game);
    let judged = tokio::task::spawn_blocking(move || {
        // One thread: a node budget then decides exactly what is proven, so an assessment is
        // the same on every run and every machine (a projection rebuilt gives the same rows).
        let per_ply = Limits::stoppable(nodes, Some(&flag));
        Analyser::new().analyse_game(game, &moves, &per_ply, &known)
    })
    .await
    .map_err(unexpected)?
    .map_err(unexpected)?;
    drop(slot);
    let players = m.seats.map(|s| match s.occupant {
        Occupant::Human { player_id, .. } => Some(player_id.as_uuid()),
        _ => None,
    });
    let rows: Vec<Assessed> = judged
        .plies
        .iter()
        .zip(&before)
        .zip(&movers)
        .map(|((p, (pos, _)), &(seat, by_human, think_ms))| Assessed {
            ply: p.ply,
            player: players[seat.index()],
            by_human,
            mv: p.mv.clone(),
            score_before: p.score_before,
            score_after: p.score_after,
            best_moves: p.best_moves.clone(),
            legal_moves: i32::try_from(pos.legal_moves().len()).unwrap_or(i32::MAX),
            exact: p.exact,
            quality: p
                .exact
                .then(|| fairplay::quality(p.score_before, p.score_after)),
            critical: p.exact && fairplay::is_critical(pos, p.best_moves.len()),
            optimal: p.exact && p.best_moves.contains(&p.mv),
            think_ms,
        })
        .collect();
    let solved_now: Vec<(domain::games::AnyPosition, Analysis)> = judged
        .before
        .iter()
        .zip(&cached)
        .filter(|(_, cached)| !**cached)
        .map(|(verdict, _)| verdict.clone())
        .collect();
    let exact = rows.iter().filter(|r| r.exact).count();
    let summary = Summary {
        game: m.game.as_str(),
        ended_at,
        rows: &rows,
        solved: &solved_now,
    };
    settle(app, id, Some(summary)).await?;
    Ok(Outcome::Assessed {
        plies: rows.len(),
        exact,
    })
}

/// What an assessment stores.
struct Summary<'a> {
    game: &'static str,
    ended_at: OffsetDateTime,
    rows: &'a [Assessed],
    solved: &'a [(domain::games::AnyPosition, Analysis)],
}

/// Drops the match's queued row, storing its assessment first when given: one transaction.
async fn settle(app: &Core, id: MatchId, summary: Option<Summary<'_>>) -> Result<(), Error> {
    let mut client = app.pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    let match_id = id.as_uuid();
    if let Some(s) = summary {
        solved::store_all(&tx, s.solved, app.now()).await?;
        let r = s.rows;
        let plies: Vec<i32> = r.iter().map(|a| a.ply as i32).collect();
        let players: Vec<Option<Uuid>> = r.iter().map(|a| a.player).collect();
        let by_human: Vec<bool> = r.iter().map(|a| a.by_human).collect();
        let moves: Vec<&str> = r.iter().map(|a| a.mv.as_str()).collect();
        let before: Vec<i32> = r.iter().map(|a| a.score_before).collect();
        let after: Vec<i32> = r.iter().map(|a| a.score_after).collect();
        // Arrays of arrays must be rectangular in PostgreSQL: each list travels as one text.
        let best: Vec<String> = r.iter().map(|a| a.best_moves.join(" ")).collect();
        let legal: Vec<i32> = r.iter().map(|a| a.legal_moves).collect();
        let exact: Vec<bool> = r.iter().map(|a| a.exact).collect();
        let quality: Vec<Option<&str>> = r.iter().map(|a| a.quality.map(|q| q.as_str())).collect();
        let critical: Vec<bool> = r.iter().map(|a| a.critical).collect();
        let optimal: Vec<bool> = r.iter().map(|a| a.optimal).collect();
        let think: Vec<i64> = r.iter().map(|a| a.think_ms).collect();
        tx.execute("DELETE FROM move_quality WHERE match_id = $1", &[&match_id])
            .await
            .map_err(unexpected)?;
        tx.execute(
            "INSERT INTO move_quality (match_id, ply, game, player_id, by_human, mv, \
               score_before, score_after, best_moves, legal_moves, exact, quality, critical, \
               optimal, think_ms, ended_at) \
             SELECT $1, u.ply, $2, u.player, u.human, u.mv, u.before, u.after, \
               CASE WHEN u.best = '' THEN '{}'::text[] ELSE string_to_array(u.best, ' ') END, \
               u.legal, u.exact, u.quality, u.critical, u.optimal, u.think, $3 \
             FROM unnest($4::int4[], $5::uuid[], $6::bool[], $7::text[], $8::int4[], \
                         $9::int4[], $10::text[], $11::int4[], $12::bool[], $13::text[], \
                         $14::bool[], $15::bool[], $16::int8[]) \
               AS u(ply, player, human, mv, before, after, best, legal, exact, quality, \
                    critical, optimal, think)",
            &[
                &match_id,
                &s.game,
                &s.ended_at,
                &plies,
                &players,
                &by_human,
                &moves,
                &before,
                &after,
                &best,
                &legal,
                &exact,
                &quality,
                &critical,
                &optimal,
                &think,
            ],
        )
        .await
        .map_err(unexpected)?;
        let exact_plies = exact.iter().filter(|e| **e).count() as i32;
        tx.execute(
            "INSERT INTO match_quality (match_id, game, plies, exact_plies, solver, assessed_at) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (match_id) DO UPDATE SET plies = EXCLUDED.plies, \
               exact_plies = EXCLUDED.exact_plies, solver = EXCLUDED.solver, \
               assessed_at = EXCLUDED.assessed_at",
            &[
                &match_id,
                &s.game,
                &(r.len() as i32),
                &exact_plies,
                &SOLVER_VERSION,
                &app.now(),
            ],
        )
        .await
        .map_err(unexpected)?;
    }
    projections::queries::settle_assessment(&tx, match_id)
        .await
        .map_err(unexpected)?;
    tx.commit().await.map_err(unexpected)
}

/// A match's stored assessment, ply by ply (empty before it is assessed).
pub async fn of_match(app: &Core, id: MatchId) -> Result<Vec<Assessed>, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let rows = client
        .query(
            "SELECT q.ply, q.player_id, q.by_human, q.mv, q.score_before, q.score_after, \
                    q.best_moves, q.exact, q.quality, q.critical, q.optimal, q.think_ms, \
                    q.legal_moves \
             FROM move_quality q JOIN match_quality m USING (match_id) \
             WHERE q.match_id = $1 AND m.solver = $2 ORDER BY q.ply",
            &[&id.as_uuid(), &SOLVER_VERSION],
        )
        .await
        .map_err(unexpected)?;
    Ok(rows
        .iter()
        .map(|row| {
            let ply: i32 = row.get(0);
            Assessed {
                ply: ply as u32,
                player: row.get(1),
                by_human: row.get(2),
                mv: row.get(3),
                score_before: row.get(4),
                score_after: row.get(5),
                best_moves: row.get(6),
                exact: row.get(7),
                quality: row
                    .get::<_, Option<&str>>(8)
                    .and_then(|q| fairplay::Quality::ALL.into_iter().find(|x| x.as_str() == q)),
                critical: row.get(9),
                optimal: row.get(10),
                think_ms: row.get(11),
                legal_moves: row.get(12),
            }
        })
        .collect())
}

/// The assessors of `discs serve`: one loop taking queued matches one at a time until the
/// instance shuts down.
pub async fn run_forever(app: Analyses) {
    let mut stopping = app.stopping.clone();
    loop {
        if *stopping.borrow() {
            return;
        }
        match assess_next(&app).await {
            Ok(Some((id, outcome))) => {
                tracing::info!(match_id = %id, outcome = ?outcome, "move quality assessed");
                continue;
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "move quality assessment failed"),
        }
        tokio::select! {
            () = tokio::time::sleep(POLL_EVERY) => {}
            _ = stopping.wait_for(|s| *s) => return,
        }
    }
}
