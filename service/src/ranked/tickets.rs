//! Queue tickets: open one (one per player; for a real-time pool, none during a live ranked
//! match or a running tournament), cancel it, read it; the view the API shows, with the rating
//! window it has now.

use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::games::GameId;
use domain::ids::{MatchId, PlayerId, TicketId};
use domain::matches::{DaysPerMove, TurnSeconds};
use domain::matchmaking::{Candidate, Rules};
use domain::ratings::{Ladder, Rating, decay, idle_days};
use domain::tickets::{Command, Pool, Status, Ticket, TicketOpened};
use eventlog::{AppendError, AppendOutcome, EventLog, StreamAppend};

use crate::aggregates;
use crate::core::Core;
use crate::error::Error;
use crate::error::unexpected;
use crate::live::LivePath;
use crate::ranked::Ranked;
use crate::reasons::Missing;

/// A ticket as the API shows it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TicketView {
    pub ticket_id: TicketId,
    pub status: Status,
    pub match_id: Option<MatchId>,
    pub game: GameId,
    pub turn_seconds: Option<TurnSeconds>,
    /// A correspondence pool's days per move (rated on the game's correspondence ladder); null
    /// for real-time play.
    pub days_per_move: Option<DaysPerMove>,
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
            days_per_move: t.opened.days_per_move,
            opened_at: t.opened_at,
            rating: t.opened.rating,
            deviation: t.opened.deviation,
            allowed_gap,
        }
    }
}

/// Reads and folds a ticket stream.
pub async fn load_ticket(app: &Core, id: TicketId) -> Result<Ticket, Error> {
    aggregates::read::<Ticket>(app, id)
        .await?
        .ok_or(Error::NotFound(Missing::Ticket))
}

/// A ticket of `player`'s own, folded (`not_found` for anyone else's: tickets are private).
async fn load_own_ticket(app: &Core, player: PlayerId, id: TicketId) -> Result<Ticket, Error> {
    let t = load_ticket(app, id).await?;
    if t.opened.player_id != player {
        return Err(Error::NotFound(Missing::Ticket));
    }
    Ok(t)
}

/// The view of a ticket of `player`'s own.
pub async fn own_ticket(app: &Core, player: PlayerId, id: TicketId) -> Result<TicketView, Error> {
    let t = load_own_ticket(app, player, id).await?;
    Ok(TicketView::new(id, &t, app.now()))
}

/// A player's values on a ladder as of `now`: the projection's, with the idle days since their
/// last rated match on it applied, or a newcomer's.
pub async fn current_rating(
    client: &impl deadpool_postgres::GenericClient,
    player: PlayerId,
    ladder: Ladder,
    now: OffsetDateTime,
) -> Result<Rating, Error> {
    let stored = projections::queries::rating_in(client, player, ladder)
        .await
        .map_err(unexpected)?;
    Ok(match stored {
        None => Rating::NEW,
        Some(s) => decay(s.rating, idle_days(s.last_ended_at, now)),
    })
}

/// `POST /v1/queue`: opens a ticket for `player` in the pool, unless an admin banned them or
/// declared them a bot (`forbidden`) or they already have one open (`already_queued`); for a
/// real-time pool, also unless they are seated in a live ranked match, from the queue or a
/// rated tournament (`in_match`), or play a tournament that has started (`in_tournament`):
/// "one live ranked match per player" is a rule of real-time play, and a correspondence game
/// seats nobody.
pub async fn open_ticket(
    app: &Ranked,
    player: PlayerId,
    pool: Pool,
    command_id: Uuid,
) -> Result<TicketView, Error> {
    crate::standing::refuse_outside_human_play(app, player).await?;
    let id = TicketId::from_uuid(Uuid::new_v5(&command_id, b"ticket"));
    let rating = {
        let client = app.pool.get().await.map_err(unexpected)?;
        current_rating(&client, player, pool.ladder(), app.now()).await?
    };
    let (ticket, ()) = aggregates::command(
        app,
        &app.tickets,
        id,
        Some(player),
        command_id,
        |_, _| {
            Ok((
                Command::Open(TicketOpened {
                    player_id: player,
                    game: pool.game,
                    turn_seconds: pool.turn_seconds,
                    days_per_move: pool.days_per_move,
                    rating: rating.rating,
                    deviation: rating.deviation,
                }),
                (),
            ))
        },
        // Under the player's standing lock, taken before the slot's as a decision takes them
        // (`crate::decisions`): a ban or a declaration committing meanwhile is seen here, or
        // sees this ticket. Then the player's slot, created if missing and locked either way
        // (the upsert's update takes the row lock `FOR UPDATE` would): one open ticket per
        // player.
        async |tx, _, (), now| {
            crate::standing::refuse_outside_human_play_on(tx, player).await?;
            let slot = tx
                .query_one(
                    "INSERT INTO queue_slots (player_id) VALUES ($1) \
                     ON CONFLICT (player_id) DO UPDATE SET player_id = EXCLUDED.player_id \
                     RETURNING ticket_id",
                    &[&player.as_uuid()],
                )
                .await
                .map_err(unexpected)?;
            if slot.get::<_, Option<Uuid>>(0).is_some() {
                return Err(Error::AlreadyQueued);
            }
            if pool.days_per_move.is_none() {
                refuse_seated(tx, player, now).await?;
            }
            tx.execute(
                "UPDATE queue_slots SET ticket_id = $2, match_id = NULL, game = $3, \
                 turn_seconds = $4, rating = $5, deviation = $6, opened_at = $7, \
                 days_per_move = $8 WHERE player_id = $1",
                &[
                    &player.as_uuid(),
                    &id.as_uuid(),
                    &pool.game.as_str(),
                    &TurnSeconds::code(pool.turn_seconds),
                    &rating.rating,
                    &rating.deviation,
                    &now,
                    &DaysPerMove::code(pool.days_per_move),
                ],
            )
            .await
            .map_err(unexpected)?;
            Ok(())
        },
    )
    .await?;
    let t = ticket.ok_or(Error::NotFound(Missing::Ticket))?;
    app.wake_projections();
    app.waves.notify_one();
    Ok(TicketView::new(id, &t, app.now()))
}

/// A real-time ticket's refusals: a player in a tournament that has started (`in_tournament`)
/// or seated in a live ranked match, from the queue or a rated tournament (`in_match`; a seat
/// taken after this read fails the wave's pairing whole: the database holds one live ranked
/// match).
async fn refuse_seated(
    tx: &impl deadpool_postgres::GenericClient,
    player: PlayerId,
    now: OffsetDateTime,
) -> Result<(), Error> {
    let in_tournament = tx
        .query_opt(
            "SELECT 1 FROM tournament_seats WHERE player_id = $1 AND starts_at <= $2 LIMIT 1",
            &[&player.as_uuid(), &now],
        )
        .await
        .map_err(unexpected)?;
    if in_tournament.is_some() {
        return Err(Error::InTournament);
    }
    if crate::standing::seated_in(tx, player).await?.is_some() {
        return Err(Error::InMatch);
    }
    Ok(())
}

/// `DELETE /v1/queue/{ticket}`: the owner cancels a waiting ticket (`ticket_closed` once it is
/// matched or cancelled; a wave that races it wins or loses whole).
pub async fn cancel_ticket(
    app: &LivePath,
    player: PlayerId,
    id: TicketId,
) -> Result<TicketView, Error> {
    let (ticket, ()) = aggregates::command(
        app,
        &app.tickets,
        id,
        Some(player),
        Uuid::new_v5(&id.as_uuid(), b"cancel"),
        |state, _| match state {
            Some(t) if t.opened.player_id == player && t.status == Status::Waiting => {
                Ok((Command::Cancel, ()))
            }
            Some(t) if t.opened.player_id == player => Err(Error::TicketClosed),
            // Tickets are private: anyone else's is not found.
            _ => Err(Error::NotFound(Missing::Ticket)),
        },
        async |tx, _, (), _| free_slot_on(tx, player, id).await,
    )
    .await?;
    let t = ticket.ok_or(Error::NotFound(Missing::Ticket))?;
    app.wake_projections();
    Ok(TicketView::new(id, &t, app.now()))
}

/// Frees a player's slot from a ticket closed in the same transaction.
const SLOT_FREED: &str =
    "UPDATE queue_slots SET ticket_id = NULL WHERE player_id = $1 AND ticket_id = $2";

/// Cancels `player`'s waiting ticket, if any, by `actor` at `now`, in `tx` (an admin's ban or
/// bot declaration, under the player's standing lock, which a ticket's opening also takes before
/// its slot's: a ticket is either seen here or opens after the decision and is refused). A wave
/// that matched the ticket meanwhile makes the cancel conflict: the match stands, and the rest
/// of `tx` with it (the cancel runs under a savepoint). `command_id` is the caller's.
pub async fn cancel_waiting_on(
    app: &LivePath,
    tx: &impl deadpool_postgres::GenericClient,
    player: PlayerId,
    actor: PlayerId,
    command_id: Uuid,
    now: OffsetDateTime,
) -> Result<(), Error> {
    let row = tx
        .query_opt(
            "SELECT ticket_id FROM queue_slots WHERE player_id = $1 AND ticket_id IS NOT NULL",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    let Some(id) = row.map(|r| TicketId::from_uuid(r.get(0))) else {
        return Ok(());
    };
    let t = load_ticket(app, id).await?;
    let Ok(event) = t.cancel() else {
        return Ok(());
    };
    let cancel = StreamAppend {
        stream: id.stream(),
        expected_version: t.version as i64,
        events: aggregates::new_events::<Ticket>(&[event], Some(actor), now),
    };
    // A conflict is an error of its statement, which would end `tx`: a savepoint keeps the rest.
    tx.batch_execute("SAVEPOINT ticket_cancel")
        .await
        .map_err(unexpected)?;
    let cancelled = Uuid::new_v5(&command_id, b"ticket cancel");
    match EventLog::append_on(tx, cancelled, vec![cancel]).await {
        Ok(AppendOutcome::Appended(_)) => free_slot_on(tx, player, id).await?,
        Ok(AppendOutcome::AlreadyApplied(_)) => {}
        Err(AppendError::Conflict { .. }) => {
            tx.batch_execute("ROLLBACK TO SAVEPOINT ticket_cancel")
                .await
                .map_err(unexpected)?;
        }
        Err(e) => return Err(unexpected(e)),
    }
    Ok(())
}

/// Frees `player`'s slot from `ticket`, in the transaction that appended the ticket's cancel.
async fn free_slot_on(
    tx: &impl deadpool_postgres::GenericClient,
    player: PlayerId,
    ticket: TicketId,
) -> Result<(), Error> {
    tx.execute(SLOT_FREED, &[&player.as_uuid(), &ticket.as_uuid()])
        .await
        .map_err(unexpected)?;
    Ok(())
}
