//! The organiser: one pass ([`organise`]) over every tournament that has not ended records the
//! results of its games that ended, pauses the arena players it has not seen for
//! [`super::PAUSED_AFTER`], and writes what `domain::tournaments::organiser::next` says comes
//! next (the start, a round, an arena's pairing wave, the end), each tournament's step one
//! append at its version. Every instance runs it ([`run_forever`]); two passes that decide the
//! same step write it once (the same command id, the same match ids), and a pass that loses a
//! race leaves the step to the next one.
//!
//! **Results** come from the log, not from the live path's memory: each pass reads the
//! `match_ended` events after where it stood, up to a horizon read *before* it caught up with the
//! tournaments, so every game those events end is in a fold it holds (a pairing commits with its
//! match, before any of the match's moves). A pass that fails, and an instance's first, instead
//! look up every game without a result in the log, so a result never waits on a lost read.
//!
//! **Matches** are created in the transaction that appends their pairings, with their timers
//! (`match_work`) and, for a rated tournament, their players' `ranked_seats` (one live ranked
//! match per player: what the fair-play boundary and the queue read of a seated player). A
//! player seated in a live ranked match elsewhere, or banned, is busy
//! (`domain::tournaments::organiser::next_with`): an arena does not pair them until they are
//! free, a Swiss or round robin pauses them before pairing a round. A player seated meanwhile
//! by another writer fails the step whole, as a lost race: the next pass decides it again.
//!
//! **Time**: a step's events are stamped when the step is decided, in its writer's turn, and
//! never before an event they follow: the `match_ended` of each result it records, the
//! tournament's last pairing.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration as StdDuration;

use time::OffsetDateTime;
use tokio::sync::broadcast::error::RecvError;
use uuid::Uuid;

use domain::aggregate::{Aggregate, fold};
use domain::ids::{MatchId, PlayerId, Seat, TournamentId};
use domain::matches::{CreateMatch, FirstMoveRule, Occupant, Settings};
use domain::tournaments::organiser::{next, next_with};
use domain::tournaments::{
    Command, EntrantStatus, Format, PairingMade, Status, Tournament, TournamentEvent, decide,
};
use eventlog::{AppendError, AppendOutcome, Checkpoint, EventLog, StreamAppend};

use super::{PAUSED_AFTER, Tournaments, load};
use crate::aggregates;
use crate::error::{Error, unexpected};
use crate::live::created::{Created, write_beside};

/// How often a pass runs at the latest; a result seen in the log or a command on this instance
/// runs one sooner.
pub const TICK: StdDuration = StdDuration::from_millis(250);

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pass {
    /// Tournaments looked at.
    pub tournaments: usize,
    /// Steps written (one append each).
    pub steps: usize,
    pub pairings: usize,
    pub results: usize,
    pub pauses: usize,
    /// Steps another writer got to first.
    pub lost: usize,
}

/// One pass over every tournament that has not ended.
pub async fn organise(app: &Tournaments) -> Result<Pass, Error> {
    let outcome = pass(app).await;
    if outcome.is_err() {
        // The results read in a failed pass may not have been recorded: look again.
        *app.folds.results.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
    outcome
}

async fn pass(app: &Tournaments) -> Result<Pass, Error> {
    let now = app.now();
    let ids = scheduled(app, now).await?;
    app.folds.forget_ended();
    // Read before the folds are caught up: every game a result up to here ends is in them.
    let horizon = app.log.last_checkpoint().await.map_err(unexpected)?;
    let mut folds = Vec::with_capacity(ids.len());
    for id in ids {
        folds.push((id, load(app, id).await?));
    }
    let results = results(app, &folds, horizon).await?;
    let mut pass = Pass {
        tournaments: folds.len(),
        ..Pass::default()
    };
    let mut failed = None;
    for (id, t) in folds {
        let mine = results.get(&id).map(Vec::as_slice).unwrap_or_default();
        // One tournament's failure does not hold up the others' steps.
        if let Err(e) = turn(app, id, t, mine, &mut pass).await {
            tracing::warn!(tournament = %id, error = %e, "tournament step failed");
            failed = Some(e);
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(pass)
}

/// Tournament `id`'s step in its turn among this instance's writers of it, on its fold as it is
/// then; a step that lost its race leaves its results to be read again.
async fn turn(
    app: &Tournaments,
    id: TournamentId,
    t: Arc<Tournament>,
    results: &[Ended],
    pass: &mut Pass,
) -> Result<(), Error> {
    let _turn = app.folds.kept.writer(id).await;
    let t = if app
        .folds
        .kept
        .get(id)
        .is_some_and(|kept| Tournament::version(&kept) != t.version)
    {
        load(app, id).await?
    } else {
        t
    };
    let now = stamp(app.now(), &t, results);
    let lost = pass.lost;
    step(app, id, &t, results, now, pass).await?;
    if pass.lost > lost {
        // Another writer got there first: its fold goes, and the results are read again.
        app.folds.kept.forget(id);
        *app.folds.results.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
    Ok(())
}

/// When a step is decided and its events recorded: the clock at its turn, but never before an
/// event the step follows (the `match_ended` of a result it records, read from another
/// instance's clock or committed after this pass read the time; the tournament's last pairing).
fn stamp(clock: OffsetDateTime, t: &Tournament, results: &[Ended]) -> OffsetDateTime {
    results
        .iter()
        .map(|r| r.at)
        .chain(t.games.last().map(|g| g.paired_at))
        .chain(t.started_at)
        .fold(clock, OffsetDateTime::max)
}

/// The tournaments that have started and not ended (before its start, a tournament needs
/// nothing of the organiser).
async fn scheduled(app: &Tournaments, now: OffsetDateTime) -> Result<Vec<TournamentId>, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let rows = client
        .query(
            "SELECT tournament_id FROM tournament_schedule WHERE starts_at <= $1 \
              ORDER BY starts_at, tournament_id",
            &[&now],
        )
        .await
        .map_err(unexpected)?;
    Ok(rows
        .iter()
        .map(|r| TournamentId::from_uuid(r.get(0)))
        .collect())
}

/// A game whose match ended: its winner, and when its `match_ended` was recorded.
#[derive(Clone, Copy, Debug)]
struct Ended {
    match_id: MatchId,
    winner: Option<PlayerId>,
    at: OffsetDateTime,
}

type Results = HashMap<TournamentId, Vec<Ended>>;

/// The games without a result in `folds` whose match has ended, with their winners.
async fn results(
    app: &Tournaments,
    folds: &[(TournamentId, Arc<Tournament>)],
    horizon: Checkpoint,
) -> Result<Results, Error> {
    let open: HashMap<MatchId, (TournamentId, [PlayerId; 2])> = folds
        .iter()
        .flat_map(|(id, t)| {
            t.unfinished()
                .map(move |g| (g.pairing.match_id, (*id, g.pairing.players)))
        })
        .collect();
    let cursor = *app.folds.results.lock().unwrap_or_else(|p| p.into_inner());
    let mut ended: Vec<(MatchId, Option<u8>, OffsetDateTime)> = Vec::new();
    match cursor {
        // Every game without a result, looked up in the log.
        None if !open.is_empty() => {
            let streams: Vec<String> = open.keys().map(MatchId::stream).collect();
            let client = app.pool.get().await.map_err(unexpected)?;
            let rows =
                eventlog::first_stamped_values(&client, &streams, "match_ended", "winner_seat")
                    .await
                    .map_err(unexpected)?;
            for (stream, seat, at) in rows {
                if let Some(m) = MatchId::of_stream(&stream) {
                    ended.push((m, seat.and_then(|s| s.parse().ok()), at));
                }
            }
        }
        None => {}
        Some(mut from) => loop {
            let events = app
                .log
                .read_types_after(from, &["match_ended"], 5000)
                .await
                .map_err(unexpected)?;
            let full = events.len() == 5000;
            for e in events.iter().filter(|e| e.checkpoint() <= horizon) {
                if let Some(m) = MatchId::of_stream(&e.stream) {
                    let seat = e.data["winner_seat"].as_u64().map(|s| s as u8);
                    ended.push((m, seat, e.recorded_at));
                }
            }
            match events.last() {
                Some(last) if full && last.checkpoint() < horizon => from = last.checkpoint(),
                _ => break,
            }
        },
    }
    let mut results = Results::new();
    for (m, seat, at) in ended {
        let Some((id, players)) = open.get(&m) else {
            continue;
        };
        let winner = match seat {
            Some(1) => Some(players[0]),
            Some(2) => Some(players[1]),
            _ => None,
        };
        results.entry(*id).or_default().push(Ended {
            match_id: m,
            winner,
            at,
        });
    }
    *app.folds.results.lock().unwrap_or_else(|p| p.into_inner()) = Some(horizon);
    Ok(results)
}

/// Decides and writes what tournament `id` needs now: its results, the pauses of absent arena
/// players, then the organiser's next commands.
async fn step(
    app: &Tournaments,
    id: TournamentId,
    t: &Arc<Tournament>,
    results: &[Ended],
    now: OffsetDateTime,
    pass: &mut Pass,
) -> Result<(), Error> {
    let absent = absent(app, id, t, now).await?;
    // With nothing to record, what comes next is decided on the fold as it is: nothing, or
    // the step's first command unless some player is busy.
    let mut upcoming = None;
    if results.is_empty() && absent.is_empty() {
        upcoming = next(id, t, now);
        if upcoming.is_none() {
            return Ok(());
        }
    }
    let busy = busy(app, t, results).await?;
    if !busy.is_empty() {
        upcoming = None;
    }
    let mut steps = Steps {
        id,
        now,
        state: Some(t.clone()),
        events: Vec::new(),
    };
    for r in results {
        pass.results += usize::from(steps.take(&Command::Record {
            match_id: r.match_id,
            winner: r.winner,
        }));
    }
    for player_id in absent {
        pass.pauses += usize::from(steps.take(&Command::Pause { player_id }));
    }
    // The start, then its first pairings, in one step; at most a few commands besides the
    // pauses of busy players (one each, before a round).
    let mut left = 4;
    while left > 0 {
        let Some(command) = upcoming.take().or_else(|| {
            steps
                .state
                .as_ref()
                .and_then(|s| next_with(id, s, now, &busy))
        }) else {
            break;
        };
        let pause = matches!(command, Command::Pause { .. });
        if !steps.take(&command) {
            break;
        }
        if pause {
            pass.pauses += 1;
        } else {
            left -= 1;
        }
    }
    let events = steps.events;
    if events.is_empty() {
        return Ok(());
    }
    match write(app, id, t, &events, now).await? {
        true => {
            pass.steps += 1;
            pass.pairings += events
                .iter()
                .filter(|e| matches!(e, TournamentEvent::PairingMade(_)))
                .count();
        }
        false => pass.lost += 1,
    }
    Ok(())
}

/// The commands of one step, each decided on the state the ones before it left.
struct Steps {
    id: TournamentId,
    now: OffsetDateTime,
    state: Option<Arc<Tournament>>,
    events: Vec<TournamentEvent>,
}

impl Steps {
    /// Decides `command`; whether it went in (a command the state no longer allows, such as a
    /// result recorded meanwhile, is skipped).
    fn take(&mut self, command: &Command) -> bool {
        let Some(s) = self.state.as_deref() else {
            return false;
        };
        match decide(Some(s), command, self.now) {
            Ok(more) => {
                let now = self.now;
                self.state = fold::<Tournament>(self.state.take(), more.iter().map(|e| (now, e)));
                self.events.extend(more);
                true
            }
            Err(e) => {
                tracing::debug!(tournament = %self.id, error = %e, "organiser command skipped");
                false
            }
        }
    }
}

/// The joined players of `t` who could be paired once `results` are recorded but may not be
/// now: seated in a live ranked match other than `t`'s own games, or banned.
async fn busy(
    app: &Tournaments,
    t: &Tournament,
    results: &[Ended],
) -> Result<HashSet<PlayerId>, Error> {
    let freed: HashSet<PlayerId> = results
        .iter()
        .filter_map(|r| t.game(r.match_id))
        .flat_map(|g| g.pairing.players)
        .collect();
    let players: Vec<Uuid> = t
        .active()
        .map(|e| e.player_id)
        .filter(|p| !t.playing(*p) || freed.contains(p))
        .map(|p| p.as_uuid())
        .collect();
    let own: Vec<Uuid> = t
        .unfinished()
        .map(|g| g.pairing.match_id.as_uuid())
        .collect();
    let client = app.pool.get().await.map_err(unexpected)?;
    crate::standing::busy(&client, &players, &own).await
}

/// The arena players not seen for [`PAUSED_AFTER`], joined and not playing: to be paused.
async fn absent(
    app: &Tournaments,
    id: TournamentId,
    t: &Tournament,
    now: OffsetDateTime,
) -> Result<Vec<PlayerId>, Error> {
    if t.created.format != Format::Arena || t.status(now) != Status::Running {
        return Ok(Vec::new());
    }
    let client = app.pool.get().await.map_err(unexpected)?;
    let rows = client
        .query(
            "SELECT player_id FROM tournament_seats WHERE tournament_id = $1 AND seen_at < $2",
            &[&id.as_uuid(), &(now - PAUSED_AFTER)],
        )
        .await
        .map_err(unexpected)?;
    Ok(rows
        .iter()
        .map(|r| PlayerId::from_uuid(r.get(0)))
        .filter(|p| {
            t.entrant(*p)
                .is_some_and(|e| e.status == EntrantStatus::Joined)
                && !t.playing(*p)
                // Seen through their last game: a game that ended within the window counts.
                && t.games_of(*p).last().is_none_or(|g| g.paired_at < now - PAUSED_AFTER)
        })
        .collect())
}

/// Appends `events` at `t`'s version with the matches of their pairings, their timers and
/// seats; `false` when another writer appended first or seated one of its players.
async fn write(
    app: &Tournaments,
    id: TournamentId,
    t: &Arc<Tournament>,
    events: &[TournamentEvent],
    now: OffsetDateTime,
) -> Result<bool, Error> {
    let command_id = Uuid::new_v5(&id.as_uuid(), format!("step:{}", t.version).as_bytes());
    let mut appends = vec![StreamAppend {
        stream: id.stream(),
        expected_version: t.version as i64,
        events: aggregates::new_events::<Tournament>(events, None, now),
    }];
    let mut created: Vec<Created> = Vec::new();
    let mut paired: Vec<Uuid> = Vec::new();
    for e in events {
        let TournamentEvent::PairingMade(p) = e else {
            continue;
        };
        paired.extend(p.players.map(|player| player.as_uuid()));
        let game = Created::decide(p.match_id, game_of(id, t, p, app.chance.bits()), now)?;
        appends.push(game.append());
        created.push(game);
    }
    let matches: Vec<MatchId> = created.iter().map(|c| c.id).collect();
    let ends = events.iter().any(|e| {
        matches!(
            e,
            TournamentEvent::TournamentFinished {} | TournamentEvent::TournamentCancelled { .. }
        )
    });
    // A game's end counts as its players being seen: a long game does not pause them.
    let finished_playing: Vec<Uuid> = events
        .iter()
        .filter_map(|e| match e {
            TournamentEvent::ResultRecorded { match_id, .. } => t.game(*match_id),
            _ => None,
        })
        .flat_map(|g| g.pairing.players.map(|p| p.as_uuid()))
        .collect();
    let freed: Vec<Uuid> = events
        .iter()
        .filter_map(|e| match e {
            TournamentEvent::PlayerRemoved { player_id, .. } => Some(player_id.as_uuid()),
            _ => None,
        })
        .collect();
    let mut client = app.pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    let written = match EventLog::append_on(&tx, command_id, appends).await {
        Ok(AppendOutcome::Appended(written)) => written,
        Ok(AppendOutcome::AlreadyApplied(_)) | Err(AppendError::Conflict { .. }) => {
            return Ok(false);
        }
        Err(e) => return Err(unexpected(e)),
    };
    tracing::debug!(tournament = %id, events = events.len(), "tournament step appended");
    // A player banned or closed since the pass read its players fails the whole step (the ban,
    // the closing and this read take the player's standing lock: none commits between them and
    // this commit).
    if !crate::standing::banned_under_lock(&tx, &paired)
        .await?
        .is_empty()
        || !crate::players::closed_among(&tx, &paired).await?.is_empty()
    {
        tracing::info!(tournament = %id, "tournament step lost: a player was banned or closed meanwhile");
        app.folds.kept.forget(id);
        return Ok(false);
    }
    // The games' rows, their seats last: a player seated meanwhile in another live ranked match
    // (a queue wave, another tournament) fails the whole step: lost, decided again on the next
    // pass.
    if let Err(e) = write_beside(app, &tx, &created.iter().collect::<Vec<_>>()).await? {
        // Seated meanwhile, or a deadlock with the writer that seated them.
        if crate::live::commit::lost_to_another_writer(&e) {
            tracing::info!(tournament = %id, "tournament step lost: a player was seated meanwhile");
            app.folds.kept.forget(id);
            return Ok(false);
        }
        return Err(unexpected(e));
    }
    if !finished_playing.is_empty() {
        tx.execute(
            "UPDATE tournament_seats SET seen_at = $3 \
              WHERE tournament_id = $1 AND player_id = ANY($2) AND seen_at < $3",
            &[&id.as_uuid(), &finished_playing, &now],
        )
        .await
        .map_err(unexpected)?;
    }
    if ends {
        tx.execute(
            "DELETE FROM tournament_schedule WHERE tournament_id = $1",
            &[&id.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
        tx.execute(
            "DELETE FROM tournament_seats WHERE tournament_id = $1",
            &[&id.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    } else if !freed.is_empty() {
        tx.execute(
            "DELETE FROM tournament_seats WHERE tournament_id = $1 AND player_id = ANY($2)",
            &[&id.as_uuid(), &freed],
        )
        .await
        .map_err(unexpected)?;
    }
    tx.commit().await.map_err(unexpected)?;
    tracing::info!(
        tournament = %id,
        version = t.version + events.len() as u64,
        pairings = matches.len(),
        "tournament step"
    );
    for m in &matches {
        app.live.committed(&app.log, *m, &written);
    }
    app.wake_projections();
    let stream = id.stream();
    let mine: Vec<_> = written.into_iter().filter(|e| e.stream == stream).collect();
    let next = aggregates::fold::<Tournament>(Some(t.clone()), &mine)?;
    app.folds.kept.keep(id, next);
    Ok(true)
}

/// The match of a pairing: `players[0]` in seat 1, moving first, in the tournament's game and
/// turn limit, rated as the tournament is.
fn game_of(id: TournamentId, t: &Tournament, p: &PairingMade, seed: u64) -> CreateMatch {
    CreateMatch {
        game: t.created.game,
        seats: p.players.map(|player_id| Occupant::Human { player_id }),
        settings: Settings {
            turn_seconds: t.created.turn_seconds,
            ..Settings::default()
        },
        first_seat: Seat::ONE,
        first_rule: FirstMoveRule::Pairing,
        ranked: t.created.rated,
        room_id: None,
        tournament_id: Some(id),
        cpu_seed: seed,
    }
}

/// The background loop of `discs serve`: a pass every [`TICK`], sooner when this instance sees
/// a match end in the log or is woken by a command, until the instance stops.
pub async fn run_forever(app: Tournaments) {
    let mut batches = app.live.batches().subscribe();
    let mut stopping = app.stopping.clone();
    let wake = app.wake.clone();
    loop {
        if let Err(e) = organise(&app).await {
            tracing::warn!(error = %e, "tournament pass failed");
        }
        let deadline = tokio::time::Instant::now() + TICK;
        loop {
            let woken = tokio::select! {
                _ = tokio::time::sleep_until(deadline) => true,
                _ = wake.notified() => true,
                batch = batches.recv() => match batch {
                    Ok(batch) => batch.events.iter().any(|e| e.event_type == "match_ended"),
                    Err(RecvError::Lagged(_)) => true,
                    // No reader of the log (shutting down): the tick alone.
                    Err(RecvError::Closed) => {
                        batches = app.live.batches().subscribe();
                        false
                    }
                },
                _ = stopping.wait_for(|s| *s) => true
            };
            if *app.stopping.borrow() {
                return;
            }
            if woken {
                break;
            }
        }
    }
}
