//! A player's standing in fair play: the admins' decisions (`domain::standing`), each an event of
//! the player's stream `player-<id>`, read from the log when it matters (a stream of a few
//! events), and indexed for the write side in `player_bans` (V21) in the decision's own
//! transaction; and whether the player is seated in a live ranked match (`ranked_seats`, V21),
//! the one rule of "one live ranked match per player" that the queue's waves, the tournaments'
//! organiser, the fair-play boundary and the queue all read. A banned player opens no ranked
//! ticket, no solo match, no room match and joins no room or tournament; how far a ban reaches
//! beyond that (the player's waiting ticket, their tournament entries) is `crate::decisions`.
//! A declared bot (`player_bots`, V26, written with its declaration) enters no human pool and no
//! tournament ([`refuse_outside_human_play`], [`busy`]); `crate::players` tags its name.

use std::collections::HashSet;

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::aggregate::Aggregate;
use domain::ids::{MatchId, PlayerId};
use domain::standing::{Decision, Standing};

use crate::aggregates;
use crate::core::Core;
use crate::error::{Error, unexpected};
use crate::reasons::{Missing, Refused};

/// The stream of a player's standing.
pub fn stream(player: PlayerId) -> String {
    Standing::stream(player)
}

/// A player's standing, folded from their stream, and when its last decision was recorded.
pub async fn of(app: &Core, player: PlayerId) -> Result<(Standing, Option<OffsetDateTime>), Error> {
    let events = app
        .log
        .read_stream(&stream(player))
        .await
        .map_err(unexpected)?;
    let at = events.last().map(|e| e.recorded_at);
    Ok((
        aggregates::fold::<Standing>(Standing::default(), &events)?,
        at,
    ))
}

/// `Err(Forbidden(Banned))` while an admin's last decision on `player` is a ban.
pub async fn refuse_banned(app: &Core, player: PlayerId) -> Result<(), Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    if banned(&client, player).await? {
        Err(Error::Forbidden(Refused::Banned))
    } else {
        Ok(())
    }
}

/// `Err(Forbidden(Banned))` for a banned player, `Err(Forbidden(Bot))` for a declared bot: the
/// one check of the ranked queue and the tournaments, which are human play.
pub async fn refuse_outside_human_play(app: &Core, player: PlayerId) -> Result<(), Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    refuse_on(&client, player).await
}

/// [`refuse_outside_human_play`] under the player's standing lock, held until `tx` ends: a ban
/// or a declaration commits before this read sees it, or waits for `tx` and then reaches what
/// `tx` wrote (a ticket's opening: `crate::decisions`).
pub async fn refuse_outside_human_play_on(
    tx: &impl GenericClient,
    player: PlayerId,
) -> Result<(), Error> {
    lock(tx, &[player.as_uuid()]).await?;
    refuse_on(tx, player).await
}

async fn refuse_on(client: &impl GenericClient, player: PlayerId) -> Result<(), Error> {
    let row = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM player_bans WHERE player_id = $1),                     EXISTS (SELECT 1 FROM player_bots WHERE player_id = $1)",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    match (row.get(0), row.get(1)) {
        (true, _) => return Err(Error::Forbidden(Refused::Banned)),
        (false, true) => return Err(Error::Forbidden(Refused::Bot)),
        (false, false) => {}
    }
    // A closing that committed after the caller's token was checked: nobody plays for them.
    if crate::players::closed_among(client, &[player.as_uuid()])
        .await?
        .is_empty()
    {
        Ok(())
    } else {
        Err(Error::NotFound(Missing::Player))
    }
}

/// Whether an admin's last decision on `player` is a ban (their `player_bans` row, written with
/// the decision).
pub async fn banned(client: &impl GenericClient, player: PlayerId) -> Result<bool, Error> {
    let row = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM player_bans WHERE player_id = $1)",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    Ok(row.get(0))
}

/// Writes `player`'s row of `player_bans` (or `player_bots`) as `decision` leaves it, in the
/// transaction that appends it, and tells every instance on the tokens channel.
pub async fn record_on(
    tx: &impl GenericClient,
    player: PlayerId,
    decision: Decision,
    at: OffsetDateTime,
) -> Result<(), Error> {
    let done = match decision {
        Decision::Banned => {
            lock(tx, &[player.as_uuid()]).await?;
            tx.execute(
                "INSERT INTO player_bans (player_id, banned_at) VALUES ($1, $2) \
                 ON CONFLICT (player_id) DO NOTHING",
                &[&player.as_uuid(), &at],
            )
            .await
        }
        Decision::Cleared => {
            tx.execute(
                "DELETE FROM player_bans WHERE player_id = $1",
                &[&player.as_uuid()],
            )
            .await
        }
        Decision::Bot => {
            lock(tx, &[player.as_uuid()]).await?;
            tx.execute(
                "INSERT INTO player_bots (player_id, declared_at) VALUES ($1, $2) \
                 ON CONFLICT (player_id) DO NOTHING",
                &[&player.as_uuid(), &at],
            )
            .await
        }
        Decision::Human => {
            tx.execute(
                "DELETE FROM player_bots WHERE player_id = $1",
                &[&player.as_uuid()],
            )
            .await
        }
    };
    done.map_err(unexpected)?;
    // Every instance hears that the player's rights changed when this commits (their streams
    // end on a ban: `live::streams`).
    tx.execute(
        "SELECT pg_notify($1, $2)",
        &[&crate::players::TOKENS_CHANNEL, &player.to_string()],
    )
    .await
    .map_err(unexpected)?;
    Ok(())
}

/// Takes the standing lock of each of `players` (sorted, so that two holders of several never
/// wait on each other in a cycle) until `tx` ends. A ban takes its player's before it marks
/// them, and a closing before it erases them; a ticket's opening, a rated acceptance and a
/// tournament step take their players' before they read bans and closings
/// ([`banned_under_lock`], [`refuse_outside_human_play_on`]): either the ban or the closing
/// commits first and the other sees it, or the other commits first and the ban follows it (the
/// closing refuses a player it left queued or seated).
pub async fn lock(tx: &impl GenericClient, players: &[Uuid]) -> Result<(), Error> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('standing:' || p::text, 0)) \
           FROM (SELECT DISTINCT p FROM unnest($1::uuid[]) AS p ORDER BY p) AS sorted",
        &[&players],
    )
    .await
    .map_err(unexpected)?;
    Ok(())
}

/// Of `players`, the declared bots.
pub async fn bots(client: &impl GenericClient, players: &[Uuid]) -> Result<Vec<PlayerId>, Error> {
    let rows = client
        .query(
            "SELECT player_id FROM player_bots WHERE player_id = ANY($1)",
            &[&players],
        )
        .await
        .map_err(unexpected)?;
    Ok(rows.iter().map(|r| PlayerId::from_uuid(r.get(0))).collect())
}

/// Of `players`, those banned, read under their standing locks (held until `tx` ends): no ban
/// of theirs commits before `tx` does without being seen here.
pub async fn banned_under_lock(
    tx: &impl GenericClient,
    players: &[Uuid],
) -> Result<Vec<PlayerId>, Error> {
    if players.is_empty() {
        return Ok(Vec::new());
    }
    lock(tx, players).await?;
    let rows = tx
        .query(
            "SELECT player_id FROM player_bans WHERE player_id = ANY($1)",
            &[&players],
        )
        .await
        .map_err(unexpected)?;
    Ok(rows.iter().map(|r| PlayerId::from_uuid(r.get(0))).collect())
}

/// The live ranked match `player` is seated in (a queue match or a rated tournament game), if
/// any: their `ranked_seats` row, which lives exactly as long as the match's work row.
pub async fn seated_in(
    client: &impl GenericClient,
    player: PlayerId,
) -> Result<Option<MatchId>, Error> {
    let row = client
        .query_opt(
            "SELECT match_id FROM ranked_seats WHERE player_id = $1",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    Ok(row.map(|r| MatchId::from_uuid(r.get(0))))
}

/// Of `players`, those who may not be paired now: seated in a live ranked match other than
/// the matches of `except` (the pairing's own tournament's games), banned, declared bots, or
/// closed accounts (whom nobody will play for again).
pub async fn busy(
    client: &impl GenericClient,
    players: &[Uuid],
    except: &[Uuid],
) -> Result<HashSet<PlayerId>, Error> {
    if players.is_empty() {
        return Ok(HashSet::new());
    }
    let rows = client
        .query(
            "SELECT s.player_id FROM ranked_seats s \
              WHERE s.player_id = ANY($1) AND NOT (s.match_id = ANY($2)) \
             UNION \
             SELECT b.player_id FROM player_bans b WHERE b.player_id = ANY($1) \
             UNION \
             SELECT b.player_id FROM player_bots b WHERE b.player_id = ANY($1)",
            &[&players, &except],
        )
        .await
        .map_err(unexpected)?;
    let mut busy: HashSet<PlayerId> = rows.iter().map(|r| PlayerId::from_uuid(r.get(0))).collect();
    busy.extend(crate::players::closed_among(client, players).await?);
    Ok(busy)
}

/// Seats `players` in the live ranked match `match_id` again (a repaired work row), leaving any
/// of them seated already (in it, or in another match meanwhile) where they are.
pub async fn reseat_on(
    tx: &impl GenericClient,
    players: &[Uuid],
    match_id: MatchId,
) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO ranked_seats (player_id, match_id) \
         SELECT p, $2 FROM unnest($1::uuid[]) AS p ON CONFLICT (player_id) DO NOTHING",
        &[&players, &match_id.as_uuid()],
    )
    .await
    .map_err(unexpected)?;
    Ok(())
}

/// Seats `players[i]` in the live ranked match `matches[i]`, in the transaction that creates
/// the match with its work row. A player seated already fails the statement (a unique
/// violation, or a deadlock with the writer seating them), and so the whole transaction: the
/// database holds "one live ranked match per player".
pub async fn seat_on(
    tx: &impl GenericClient,
    players: &[Uuid],
    matches: &[Uuid],
) -> Result<(), tokio_postgres::Error> {
    if players.is_empty() {
        return Ok(());
    }
    tx.execute(
        "INSERT INTO ranked_seats (player_id, match_id) \
         SELECT * FROM unnest($1::uuid[], $2::uuid[])",
        &[&players, &matches],
    )
    .await
    .map(drop)
}
