//! The commands of players and admins on a tournament: create (a private one with an invite
//! code), join (by id, or by code), withdraw, pause, resume, mark as following (presence), and
//! an admin's removal with its exact what-if. Each is decided against the stream's fold and
//! appended at its version, with the write side's `tournament_seats` row changed in the same
//! transaction; a command that loses a race to another writer is decided again.

use std::sync::Arc;

use time::OffsetDateTime;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use domain::aggregate::At;
use domain::games::GameId;
use domain::ids::{PlayerId, TournamentId};
use domain::matches::TurnSeconds;
use domain::tournaments::standings::{Change, removal_report};
use domain::tournaments::{
    Command, Format, PLAYERS_MAX, Tournament, TournamentCreated, TournamentError,
};

use super::{Tournaments, load};
use crate::aggregates;
use crate::error::{Error, unexpected};
use crate::live::LivePath;
use crate::reasons::{Missing, Refused};

/// A new tournament, as its creator asks for it.
#[derive(Debug, Clone)]
pub struct NewTournament {
    pub name: String,
    pub game: GameId,
    pub format: Format,
    pub starts_at: OffsetDateTime,
    pub minutes: Option<u32>,
    pub rounds: Option<u32>,
    pub rated: bool,
    pub turn_seconds: Option<TurnSeconds>,
    pub private: bool,
    pub max_players: Option<u32>,
}

/// What a command changes beside the log, in its transaction.
enum SeatChange {
    None,
    /// The player takes (or keeps) a place, seen now.
    Take(PlayerId),
    /// The player leaves the tournament (withdrawn, removed).
    Free(PlayerId),
    /// The player is seen now.
    Seen(PlayerId),
}

/// Creates a tournament: an admin a public one, any player a private one, whose invite code
/// comes back with it. The tournament's id derives from `command_id`.
pub async fn create(
    app: &Tournaments,
    creator: PlayerId,
    admin: bool,
    new: NewTournament,
    command_id: Uuid,
) -> Result<(Arc<Tournament>, TournamentId, Option<String>), Error> {
    if !new.private && !admin {
        return Err(Error::Forbidden(Refused::AdminsOnly));
    }
    crate::standing::refuse_banned(app, creator).await?;
    let id = TournamentId::from_uuid(Uuid::new_v5(&command_id, b"tournament"));
    let now = app.now();
    let created = TournamentCreated {
        name: crate::checks::valid_title(&new.name, domain::tournaments::NAME_MAX)?,
        game: new.game,
        format: new.format,
        starts_at: new.starts_at,
        minutes: new.minutes,
        rounds: new.rounds,
        rated: new.rated,
        turn_seconds: new.turn_seconds,
        private: new.private,
        created_by: creator,
        max_players: new.max_players.unwrap_or(match new.format {
            Format::RoundRobin => domain::tournaments::ROUND_ROBIN_MAX,
            _ => PLAYERS_MAX,
        }),
    };
    let command = At {
        at: now,
        command: Command::Create(created),
    };
    let starts_at = new.starts_at;
    let private = new.private;
    aggregates::command(
        app,
        &app.folds.kept,
        id,
        Some(creator),
        command_id,
        |_, _| Ok((command.clone(), ())),
        async |tx, _, (), _| {
            let params: [&(dyn ToSql + Sync); 2] = [&id.as_uuid(), &starts_at];
            tx.execute(
                "INSERT INTO tournament_schedule (tournament_id, starts_at) VALUES ($1, $2)",
                &params,
            )
            .await
            .map_err(unexpected)?;
            if private {
                insert_code(tx, id).await?;
            }
            Ok(())
        },
    )
    .await?;
    app.wake_projections();
    app.wake.notify_one();
    let t = load(app, id).await?;
    let code = code_of(app, id).await?;
    Ok((t, id, code))
}

/// A fresh invite code for `id`, drawn again on the rare collision.
async fn insert_code(tx: &tokio_postgres::Transaction<'_>, id: TournamentId) -> Result<(), Error> {
    for _ in 0..8 {
        let inserted = tx
            .execute(
                "INSERT INTO tournament_codes (tournament_id, code) VALUES ($1, $2) \
                 ON CONFLICT (code) DO NOTHING",
                &[&id.as_uuid(), &crate::rooms::invite_code()],
            )
            .await
            .map_err(unexpected)?;
        if inserted == 1 {
            return Ok(());
        }
    }
    Err(Error::Unexpected(anyhow::anyhow!("no free invite code")))
}

/// The tournaments `player` is entered in that have not ended (their `tournament_seats`), by id.
pub async fn entered(app: &LivePath, player: PlayerId) -> Result<Vec<TournamentId>, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let rows = client
        .query(
            "SELECT tournament_id FROM tournament_seats WHERE player_id = $1 \
             ORDER BY tournament_id",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    Ok(rows
        .iter()
        .map(|r| TournamentId::from_uuid(r.get(0)))
        .collect())
}

/// The invite code of a private tournament.
pub async fn code_of(app: &Tournaments, id: TournamentId) -> Result<Option<String>, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_opt(
            "SELECT code FROM tournament_codes WHERE tournament_id = $1",
            &[&id.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    Ok(row.map(|r| r.get(0)))
}

/// The private tournament of invite code `raw` (`not_found` otherwise).
pub async fn by_code(app: &Tournaments, raw: &str) -> Result<TournamentId, Error> {
    let code = raw.trim().to_ascii_uppercase();
    if code.len() != 6
        || !code
            .bytes()
            .all(|b| crate::rooms::CODE_ALPHABET.contains(&b))
    {
        return Err(Error::NotFound(Missing::Tournament));
    }
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_opt(
            "SELECT tournament_id FROM tournament_codes WHERE code = $1",
            &[&code],
        )
        .await
        .map_err(unexpected)?;
    row.map(|r| TournamentId::from_uuid(r.get(0)))
        .ok_or(Error::NotFound(Missing::Tournament))
}

/// Joins `player` to tournament `id` with their current rating in its game. A private
/// tournament is joined with its code (`via_code`), or by its creator.
pub async fn join(
    app: &Tournaments,
    id: TournamentId,
    player: PlayerId,
    via_code: bool,
    command_id: Uuid,
) -> Result<Arc<Tournament>, Error> {
    crate::standing::refuse_outside_human_play(app, player).await?;
    let t = load(app, id).await?;
    if t.created.private && !via_code && t.created.created_by != player {
        return Err(Error::Forbidden(Refused::InviteOnly));
    }
    let client = app.pool.get().await.map_err(unexpected)?;
    let rating = crate::ranked::current_rating(
        &client,
        player,
        domain::ratings::Ladder::live(t.created.game),
        app.now(),
    )
    .await?;
    drop(client);
    let command = Command::Join {
        player_id: player,
        rating: rating.rating,
    };
    let t = run(
        app,
        id,
        command,
        Some(player),
        command_id,
        SeatChange::Take(player),
    )
    .await?;
    app.wake.notify_one();
    Ok(t)
}

/// Withdraws `player` from tournament `id`: not paired again; their games stand.
pub async fn withdraw(
    app: &Tournaments,
    id: TournamentId,
    player: PlayerId,
    command_id: Uuid,
) -> Result<Arc<Tournament>, Error> {
    let command = Command::Withdraw { player_id: player };
    run(
        app,
        id,
        command,
        Some(player),
        command_id,
        SeatChange::Free(player),
    )
    .await
}

/// Pauses `player`: not paired until they resume.
pub async fn pause(
    app: &Tournaments,
    id: TournamentId,
    player: PlayerId,
    command_id: Uuid,
) -> Result<Arc<Tournament>, Error> {
    let command = Command::Pause { player_id: player };
    run(app, id, command, Some(player), command_id, SeatChange::None).await
}

/// Resumes a paused `player` (seen now); not a banned one or a declared bot (`forbidden`).
pub async fn resume(
    app: &Tournaments,
    id: TournamentId,
    player: PlayerId,
    command_id: Uuid,
) -> Result<Arc<Tournament>, Error> {
    crate::standing::refuse_outside_human_play(app, player).await?;
    let command = Command::Resume { player_id: player };
    let t = run(
        app,
        id,
        command,
        Some(player),
        command_id,
        SeatChange::Seen(player),
    )
    .await?;
    app.wake.notify_one();
    Ok(t)
}

/// Pauses `player` in every tournament of theirs that has not ended and where they are
/// joined (an admin's ban or bot declaration, as command `command_id` of `admin`). How many it
/// paused.
pub async fn pause_everywhere(
    app: &Tournaments,
    player: PlayerId,
    admin: PlayerId,
    command_id: Uuid,
) -> Result<usize, Error> {
    let pause = || (Command::Pause { player_id: player }, SeatChange::None);
    in_each_entered(app, player, admin, command_id, pause).await
}

/// Withdraws `player` from each tournament of theirs that has not ended (their account is
/// closed: nobody will play for them again), as their command `command_id`; how many
/// withdrawals were recorded. The organiser pairs no closed account anyway
/// ([`crate::standing::busy`]): a withdrawal this misses (the instance stops) leaves the entry
/// unpaired.
pub async fn withdraw_everywhere(
    app: &Tournaments,
    player: PlayerId,
    command_id: Uuid,
) -> Result<usize, Error> {
    let withdraw = || {
        (
            Command::Withdraw { player_id: player },
            SeatChange::Free(player),
        )
    };
    in_each_entered(app, player, player, command_id, withdraw).await
}

/// Gives `command` (with what it changes beside the log) as `actor` in each tournament that
/// `player` entered: each is a command of its own, decided and appended as any other, its id
/// derived from `command_id` and the tournament's, so that a retry writes nothing twice. A
/// tournament where it no longer applies (done already, withdrawn, removed, or ended
/// meanwhile) is passed over. How many took it.
async fn in_each_entered(
    app: &Tournaments,
    player: PlayerId,
    actor: PlayerId,
    command_id: Uuid,
    command: impl Fn() -> (Command, SeatChange),
) -> Result<usize, Error> {
    let mut took = 0;
    for id in entered(app, player).await? {
        let (command, seat) = command();
        let each_id = Uuid::new_v5(&command_id, id.as_uuid().as_bytes());
        match run(app, id, command, Some(actor), each_id, seat).await {
            Ok(_) => took += 1,
            Err(Error::Tournament(
                TournamentError::AlreadyPaused
                | TournamentError::AlreadyWithdrawn
                | TournamentError::Removed
                | TournamentError::NotJoined
                | TournamentError::Over
                | TournamentError::Missing,
            ))
            | Err(Error::NotFound(Missing::Tournament)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(took)
}

/// Notes that `player` follows tournament `id` now (a heartbeat, an open stream, a read of the
/// tournament): the arena's organiser does not pause them. Writes at most every 10 seconds.
pub async fn seen(app: &Tournaments, id: TournamentId, player: PlayerId) -> Result<(), Error> {
    let now = app.now();
    let client = app.pool.get().await.map_err(unexpected)?;
    client
        .execute(
            "UPDATE tournament_seats SET seen_at = $3 \
              WHERE player_id = $1 AND tournament_id = $2 AND seen_at < $3::timestamptz - interval '10 seconds'",
            &[&player.as_uuid(), &id.as_uuid(), &now],
        )
        .await
        .map_err(unexpected)?;
    Ok(())
}

/// What an admin's removal did: the standings' changes, computed as a what-if on the fold the
/// removal was decided on, then recorded.
#[derive(Debug, Clone)]
pub struct Removal {
    pub removed: PlayerId,
    /// The tournament's format: what its scores count ([`Format::points`]).
    pub format: Format,
    pub changes: Vec<Change>,
}

/// Removes `player` from tournament `id` (an admin, with a reason): every game of theirs is
/// scored as a forfeit, every pairing kept.
pub async fn remove(
    app: &Tournaments,
    id: TournamentId,
    player: PlayerId,
    reason: &str,
    admin: PlayerId,
    command_id: Uuid,
) -> Result<Removal, Error> {
    let reason = crate::checks::reason(reason)?;
    load(app, id).await?;
    let seat = SeatChange::Free(player);
    let (_, (format, changes)) = aggregates::command(
        app,
        &app.folds.kept,
        id,
        Some(admin),
        command_id,
        |t: &Option<Arc<Tournament>>, at| {
            let t = t.as_ref().ok_or(Error::NotFound(Missing::Tournament))?;
            let command = Command::Remove {
                player_id: player,
                reason: reason.clone(),
                by: admin,
            };
            let report = (t.created.format, removal_report(t, player));
            Ok((At { at, command }, report))
        },
        async |tx, t, _, now| change_seat(tx, id, t, &seat, now).await,
    )
    .await?;
    Ok(Removal {
        removed: player,
        format,
        changes,
    })
}

/// Decides `command` on tournament `id` and appends it, with the seat's change, again after a
/// lost race.
async fn run(
    app: &Tournaments,
    id: TournamentId,
    command: Command,
    actor: Option<PlayerId>,
    command_id: Uuid,
    seat: SeatChange,
) -> Result<Arc<Tournament>, Error> {
    // A tournament that does not exist is refused before it gets a turn.
    load(app, id).await?;
    let (t, ()) = aggregates::command(
        app,
        &app.folds.kept,
        id,
        actor,
        command_id,
        |_, at| {
            let command = command.clone();
            Ok((At { at, command }, ()))
        },
        async |tx, t, (), now| change_seat(tx, id, t, &seat, now).await,
    )
    .await?;
    t.ok_or(Error::NotFound(Missing::Tournament))
}

async fn change_seat(
    tx: &tokio_postgres::Transaction<'_>,
    id: TournamentId,
    t: &Option<Arc<Tournament>>,
    seat: &SeatChange,
    now: OffsetDateTime,
) -> Result<(), Error> {
    let Some(t) = t else {
        return Err(Error::NotFound(Missing::Tournament));
    };
    let (sql, player) = match seat {
        SeatChange::None => return Ok(()),
        SeatChange::Take(p) => (
            "INSERT INTO tournament_seats (player_id, tournament_id, starts_at, seen_at) \
             VALUES ($1, $2, $3, $4) \
             ON CONFLICT (player_id, tournament_id) DO UPDATE SET seen_at = EXCLUDED.seen_at",
            p,
        ),
        SeatChange::Free(p) => (
            "DELETE FROM tournament_seats WHERE player_id = $1 AND tournament_id = $2 \
               AND $3::timestamptz IS NOT NULL AND $4::timestamptz IS NOT NULL",
            p,
        ),
        SeatChange::Seen(p) => (
            "UPDATE tournament_seats SET seen_at = $4 \
              WHERE player_id = $1 AND tournament_id = $2 AND $3::timestamptz IS NOT NULL",
            p,
        ),
    };
    let params: [&(dyn ToSql + Sync); 4] =
        [&player.as_uuid(), &id.as_uuid(), &t.created.starts_at, &now];
    tx.execute(sql, &params).await.map_err(unexpected)?;
    Ok(())
}
