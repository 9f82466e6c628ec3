//! Correspondence games as rows: their players (`correspondence_seats`, what a player's inbox and
//! stream read) and their deadlines (`correspondence_games`, read by time through an index), with
//! a rated game's fair-play guard beside its deadline.
//! A game played over days has no `match_work` row and no place in the match cache, so any
//! number of open ones costs the workers' scan of real-time play and an instance's memory
//! nothing; its due row is its only trace between moves.
//!
//! The rows are written before the game is created ([`open_on`]: a game is never without them)
//! and after each command on it ([`keep_due`]); the workers' pass ([`run_due`]) decides the loss
//! on time from the log, so a row left stale by a crash (a deadline that moved, a game that
//! ended or was never created) is only a wake-up: it is set right, or dropped, by the pass.

use time::OffsetDateTime;
use uuid::Uuid;

use domain::boundary::Guard;
use domain::ids::{MatchId, PlayerId, Seat};
use domain::matches::{Action, CreateMatch};

use crate::error::{Error, unexpected};
use crate::live::LivePath;
use crate::live::play::{self, Loaded, derived_id};

/// Records the players and the first deadline of correspondence game `id`, before it is
/// created (rows of a creation that failed are dropped by the workers' pass and purge).
pub async fn open_on(
    client: &impl deadpool_postgres::GenericClient,
    id: MatchId,
    create: &CreateMatch,
    at: OffsetDateTime,
) -> Result<(), Error> {
    let Some(days) = create.settings.days_per_move else {
        return Ok(());
    };
    let players: Vec<Uuid> = create.players().iter().map(|p| p.as_uuid()).collect();
    client
        .execute(
            "INSERT INTO correspondence_seats (player_id, match_id, seated_at) \
             SELECT p, $2, $3 FROM unnest($1::uuid[]) AS p ON CONFLICT DO NOTHING",
            &[&players, &id.as_uuid(), &at],
        )
        .await
        .map_err(unexpected)?;
    let due = at + time::Duration::days(i64::from(days.get()));
    client
        .execute(
            "INSERT INTO correspondence_games (match_id, due) VALUES ($1, $2) \
             ON CONFLICT (match_id) DO NOTHING",
            &[&id.as_uuid(), &due],
        )
        .await
        .map_err(unexpected)?;
    Ok(())
}

/// Sets the due row of `loaded`, a correspondence game just committed, to its deadline and,
/// for a rated game, its fair-play guard (`live::guards` reads it as it reads a live ranked
/// match's), or drops it once the game has ended. Nothing for a real-time match. Written just
/// after the commit: meanwhile the guard of the position before the move, which the new one
/// can follow, still stands.
pub async fn keep_due(app: &LivePath, loaded: &Loaded) -> Result<(), Error> {
    let Some(m) = loaded.state.get().filter(|m| m.is_correspondence()) else {
        return Ok(());
    };
    let client = app.pool.get().await.map_err(unexpected)?;
    let id = loaded.id.as_uuid();
    let guard = m
        .ranked
        .then(|| Guard::of_line(&m.position, &m.moves, app.play.public_plies.of(m.game)))
        .flatten();
    let key = guard.as_ref().map(Guard::key);
    let version = loaded.state.version() as i64;
    // Written just after the commit: a write from an older version (two commands close
    // together) leaves a newer one's row as it is.
    match m.deadline() {
        // A guard takes the next number (`live::guards::Held` reads the guards by it).
        Some(due) if key.is_some() => {
            client
                .execute(
                    "WITH numbered AS (UPDATE guard_epochs SET n = n + 1 RETURNING n) \
                     INSERT INTO correspondence_games \
                         (match_id, due, live_key, guard_epoch, version) \
                     SELECT $1, $2, $3, n, $4 FROM numbered \
                     ON CONFLICT (match_id) DO UPDATE \
                     SET due = EXCLUDED.due, live_key = EXCLUDED.live_key, \
                         guard_epoch = EXCLUDED.guard_epoch, version = EXCLUDED.version \
                     WHERE correspondence_games.version <= EXCLUDED.version",
                    &[&id, &due, &key, &version],
                )
                .await
        }
        Some(due) => {
            client
                .execute(
                    "INSERT INTO correspondence_games (match_id, due, version) \
                     VALUES ($1, $2, $3) \
                     ON CONFLICT (match_id) DO UPDATE \
                     SET due = EXCLUDED.due, version = EXCLUDED.version \
                     WHERE correspondence_games.version <= EXCLUDED.version",
                    &[&id, &due, &version],
                )
                .await
        }
        None => {
            drop(client);
            return forget(app, id).await;
        }
    }
    .map_err(unexpected)?;
    Ok(())
}

/// The correspondence games of `player` that are open (a reader checks each one: a row may be
/// a moment behind the log).
pub async fn of(app: &LivePath, player: PlayerId) -> Result<Vec<MatchId>, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let rows = client
        .query(
            "SELECT s.match_id FROM correspondence_seats s \
              WHERE s.player_id = $1 \
                AND EXISTS (SELECT 1 FROM correspondence_games g WHERE g.match_id = s.match_id)",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    Ok(rows.iter().map(|r| MatchId::from_uuid(r.get(0))).collect())
}

/// Resigns `player` from each of their open correspondence games (their account closed: nobody
/// will move for them again, and an opponent should not wait days for the loss on time); how
/// many. Each is one command, derived from the game and the closing, so a closing retried
/// resigns nothing twice.
pub async fn resign_all(app: &LivePath, player: PlayerId) -> Result<usize, Error> {
    let mut resigned = 0;
    for id in of(app, player).await? {
        let loaded = play::load(app, id).await?;
        let Some(seat) = loaded
            .state
            .get()
            .filter(|m| !m.is_finished())
            .and_then(|m| {
                Seat::BOTH
                    .into_iter()
                    .find(|&s| m.seat(s).player_id() == Some(player))
            })
        else {
            continue;
        };
        let cmd = play::MatchCommand {
            id,
            command_id: derived_id(id, "account_closed", 0),
            action: Action::Resign { seat },
            actor: Some(player),
            expected: None,
            seen: None,
            answer: None,
        };
        play::execute(app, cmd).await?;
        resigned += 1;
    }
    Ok(resigned)
}

/// One pass over the correspondence games whose due row has come (by the index on `due`):
/// each whose player to move let their days run out loses on time; a row that is stale is set
/// to the game's deadline, or dropped for a game that ended or does not exist. How many rows
/// it looked at.
pub async fn run_due(app: &LivePath) -> Result<usize, Error> {
    let now = app.now();
    let due: Vec<Uuid> = {
        let client = app.pool.get().await.map_err(unexpected)?;
        client
            .query(
                "SELECT match_id FROM correspondence_games WHERE due <= $1 \
                  ORDER BY due LIMIT 64",
                &[&now],
            )
            .await
            .map_err(unexpected)?
            .iter()
            .map(|r| r.get(0))
            .collect()
    };
    for &raw in &due {
        let id = MatchId::from_uuid(raw);
        let loaded = match play::load(app, id).await {
            Ok(loaded) => loaded,
            Err(Error::NotFound(_)) => {
                forget(app, raw).await?;
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut last = loaded;
        if let Some(m) = last.state.get()
            && let (Some(deadline), Some(seat)) = (m.deadline(), m.to_move())
            && deadline <= now
        {
            last = play::step(app, &last, "out_of_time", Action::LoseOnTime { seat }, None).await?;
        }
        match last.state.get() {
            Some(m) if m.is_correspondence() && !m.is_finished() => {
                keep_due(app, &last).await?;
            }
            _ => forget(app, raw).await?,
        }
    }
    Ok(due.len())
}

/// Drops the due row of game `id`; a guard it held is dropped under the next number
/// (`guard_drops`: what tells every instance to let it go).
async fn forget(app: &LivePath, id: Uuid) -> Result<(), Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    client
        .execute(
            "WITH gone AS (DELETE FROM correspondence_games WHERE match_id = $1 \
                           RETURNING live_key), \
                  numbered AS (UPDATE guard_epochs SET n = n + 1 \
                                WHERE EXISTS (SELECT 1 FROM gone WHERE live_key IS NOT NULL) \
                               RETURNING n) \
             INSERT INTO guard_drops (epoch, match_id, dropped_at) \
             SELECT n, $1, $2 FROM numbered",
            &[&id, &app.now()],
        )
        .await
        .map_err(unexpected)?;
    Ok(())
}

/// Purges the seats of correspondence games that have no due row (ended, or never created) and
/// were written before `before`; how many.
pub async fn purge_seats(app: &LivePath, before: OffsetDateTime) -> Result<u64, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    client
        .execute(
            "DELETE FROM correspondence_seats s WHERE s.seated_at < $1 \
               AND NOT EXISTS (SELECT 1 FROM correspondence_games g WHERE g.match_id = s.match_id)",
            &[&before],
        )
        .await
        .map_err(unexpected)
}

/// The open correspondence games' ids (the repair of `match_work` rows passes them by).
pub async fn open_ids(app: &LivePath) -> Result<std::collections::HashSet<Uuid>, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    Ok(client
        .query("SELECT match_id FROM correspondence_games", &[])
        .await
        .map_err(unexpected)?
        .iter()
        .map(|r| r.get(0))
        .collect())
}
