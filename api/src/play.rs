//! The command path of a match: load the stream, fold it, `decide`, append with the version it
//! was decided on; then the CPU's replies and the match's row of pending work.

use std::collections::HashMap;

use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use domain::cpu;
use domain::games::AnyPosition;
use domain::ids::{MatchId, PlayerId, Seat};
use domain::matches::{
    Action, Command, CreateMatch, DomainError, Match, MatchEvent, MatchState, MovedBy, Occupant,
    Presence, Stamped, decide, evolve,
};
use eventlog::{AppendError, AppendOutcome, NewEvent, RecordedEvent, StreamAppend};

use crate::error::ApiError;
use crate::state::AppState;
use crate::views::MatchView;

/// The level of the CPU that stands in for absent players and timed-out turns (SPEC §2).
pub const STAND_IN_LEVEL: u8 = 2;

/// A match read from the log.
pub struct Loaded {
    pub id: MatchId,
    pub state: MatchState,
    pub events: Vec<RecordedEvent>,
}

impl Loaded {
    pub fn get(&self) -> Result<&Match, ApiError> {
        self.state.get().ok_or(ApiError::NotFound("match"))
    }

    /// The seat of a player who must have one (a `forbidden` answer otherwise).
    pub fn seat_required(&self, player: PlayerId) -> Result<Seat, ApiError> {
        self.seat_of(player)
            .ok_or_else(|| ApiError::Forbidden("you have no seat in this match".into()))
    }

    /// The seat of a player in this match, if they have one.
    pub fn seat_of(&self, player: PlayerId) -> Option<Seat> {
        let m = self.state.get()?;
        Seat::BOTH
            .into_iter()
            .find(|&s| m.seat(s).player_id() == Some(player))
    }
}

/// Reads and folds a match stream; `not_found` when it has no events.
pub async fn load(app: &AppState, id: MatchId) -> Result<Loaded, ApiError> {
    let events = app
        .log
        .read_stream(&id.stream())
        .await
        .map_err(unexpected)?;
    if events.is_empty() {
        return Err(ApiError::NotFound("match"));
    }
    let mut state = MatchState::default();
    for e in &events {
        evolve(&mut state, &stamped(e)?);
    }
    Ok(Loaded { id, state, events })
}

/// A stored event as the domain reads it.
pub fn stamped(e: &RecordedEvent) -> Result<Stamped, ApiError> {
    let event = MatchEvent::decode(&e.event_type, e.schema_version, &e.data)
        .map_err(|err| ApiError::Unexpected(anyhow::anyhow!("event {}: {err}", e.event_id)))?;
    Ok(Stamped {
        at: e.recorded_at,
        event,
    })
}

/// Decides `action` on the match and appends its events.
///
/// With `expected` (the client's `expected_version`) a stale view is a `version_conflict`;
/// without it a lost race is retried on the fresh state (where it may become `not_your_turn`).
/// The same `command_id` twice writes once.
pub async fn execute(
    app: &AppState,
    id: MatchId,
    command_id: Uuid,
    action: Action,
    actor: Option<PlayerId>,
    expected: Option<u64>,
) -> Result<Loaded, ApiError> {
    execute_from(app, None, id, command_id, action, actor, expected).await
}

/// [`execute`] deciding first on a match the caller has just read (`known`), so the common
/// case reads the stream once; a lost race reads it again.
pub async fn execute_from(
    app: &AppState,
    mut known: Option<Loaded>,
    id: MatchId,
    command_id: Uuid,
    action: Action,
    actor: Option<PlayerId>,
    expected: Option<u64>,
) -> Result<Loaded, ApiError> {
    let at = app.now();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let loaded = match (&action, known.take()) {
            (Action::CreateMatch(_), _) => Loaded {
                id,
                state: MatchState::default(),
                events: Vec::new(),
            },
            (_, Some(loaded)) if loaded.id == id => loaded,
            _ => load(app, id).await?,
        };
        let version = loaded.state.version();
        if let Some(expected) = expected
            && expected != version
        {
            return Err(ApiError::VersionConflict {
                expected,
                actual: version,
            });
        }
        let events = decide(
            &loaded.state,
            &Command {
                at,
                action: action.clone(),
            },
        )
        .map_err(domain_error)?;
        let append = StreamAppend {
            stream: id.stream(),
            expected_version: version as i64,
            events: events
                .iter()
                .map(|e| NewEvent {
                    event_type: e.event_type().to_owned(),
                    schema_version: MatchEvent::SCHEMA_VERSION,
                    data: e.data(),
                    actor: actor.map(|p| p.as_uuid()),
                    recorded_at: at,
                })
                .collect(),
        };
        match app.log.append(command_id, append).await {
            Ok(AppendOutcome::Appended(written)) => {
                let mut loaded = loaded;
                for (e, rec) in events.into_iter().zip(written) {
                    evolve(&mut loaded.state, &Stamped { at, event: e });
                    loaded.events.push(rec);
                }
                app.notify(id);
                return Ok(loaded);
            }
            // A retry of a command that went through: its outcome is the match as it is.
            Ok(AppendOutcome::AlreadyApplied(_)) => return load(app, id).await,
            Err(AppendError::Conflict { actual, .. }) => {
                if let Some(expected) = expected {
                    return Err(ApiError::VersionConflict {
                        expected,
                        actual: actual as u64,
                    });
                }
                if matches!(action, Action::CreateMatch(_)) || attempts >= 5 {
                    return Err(ApiError::VersionConflict {
                        expected: version,
                        actual: actual as u64,
                    });
                }
            }
            Err(e) => return Err(unexpected(e)),
        }
    }
}

/// The CPU's choice, made on a blocking thread: the strongest levels search for up to about a
/// second, which must not hold up the async workers.
pub async fn cpu_move(
    position: AnyPosition,
    level: u8,
    seed: u32,
) -> Result<Option<String>, ApiError> {
    tokio::task::spawn_blocking(move || cpu::choose_move(&position, level, seed))
        .await
        .map_err(unexpected)
}

/// Lets the CPU play while it is to move (CPU seats, stand-ins); each move is a command of its
/// own whose id follows from the match version, so two instances never play it twice.
pub async fn run_cpu(app: &AppState, mut loaded: Loaded) -> Result<Loaded, ApiError> {
    for _ in 0..64 {
        let Some(m) = loaded.state.get() else { break };
        let Some((seat, level)) = m.cpu_to_move() else {
            break;
        };
        let Some(mv) = cpu_move(m.position, level, m.cpu_seed).await? else {
            break;
        };
        let version = loaded.state.version();
        let action = Action::PlayMove {
            seat,
            mv,
            by: MovedBy::Cpu,
        };
        let (id, command_id) = (loaded.id, derived_id(loaded.id, "cpu", version));
        loaded = match execute_from(
            app,
            Some(loaded),
            id,
            command_id,
            action,
            None,
            Some(version),
        )
        .await
        {
            Ok(next) => next,
            // Another instance moved first: carry on from the fresh state.
            Err(ApiError::VersionConflict { .. } | ApiError::NotYourTurn) => load(app, id).await?,
            Err(e) => return Err(e),
        };
    }
    Ok(loaded)
}

/// Creates a match for `player` (solo or in a room), lets the CPU open if it starts, schedules
/// its work, and answers with its view.
pub async fn start(
    app: &AppState,
    id: MatchId,
    command_id: Uuid,
    create: CreateMatch,
    player: PlayerId,
) -> Result<MatchView, ApiError> {
    let action = Action::CreateMatch(create);
    let loaded = execute(app, id, command_id, action, Some(player), None).await?;
    let seat = loaded.seat_of(player);
    let loaded = run_cpu(app, loaded).await?;
    touch(app, &loaded, seat).await?;
    view(app, &loaded).await
}

/// A command id that every instance derives alike for the same step of a match.
pub fn derived_id(id: MatchId, what: &str, version: u64) -> Uuid {
    Uuid::new_v5(&id.as_uuid(), format!("{what}:{version}").as_bytes())
}

/// Brings a seated player back when they act on the match while away (SPEC §2), and records
/// that they are here.
pub async fn presence(
    app: &AppState,
    loaded: Loaded,
    player: PlayerId,
) -> Result<Loaded, ApiError> {
    let Some(seat) = loaded.seat_of(player) else {
        return Ok(loaded);
    };
    let Some(m) = loaded.state.get() else {
        return Ok(loaded);
    };
    if m.is_finished() {
        return Ok(loaded);
    }
    let loaded = if m.seat(seat).presence != Presence::Here {
        let command_id = derived_id(loaded.id, "return", loaded.state.version());
        match execute(
            app,
            loaded.id,
            command_id,
            Action::Return { seat },
            Some(player),
            None,
        )
        .await
        {
            Ok(l) => l,
            Err(ApiError::VersionConflict { .. }) => load(app, loaded.id).await?,
            Err(e) => return Err(e),
        }
    } else {
        loaded
    };
    // Only `seen` changes here: a lost update after a crash costs nothing but a late "away".
    write_work(app, &loaded, Some(seat), Commit::Relaxed).await?;
    Ok(loaded)
}

/// How a `match_work` write commits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Commit {
    /// Waits for the flush: the row carries a new deadline that must survive a crash.
    Durable,
    /// `synchronous_commit = off`: presence only, where losing the last half second is harmless.
    Relaxed,
    /// Durable, and gives back the worker's lease.
    Release,
}

/// The pending-work row of a match after a command: when its next timer is due, and whose
/// presence to watch; `seen` marks a seat as seen now. Finished matches leave the table.
pub async fn touch(app: &AppState, loaded: &Loaded, seen: Option<Seat>) -> Result<(), ApiError> {
    write_work(app, loaded, seen, Commit::Durable).await
}

/// Writes the `match_work` row of a match (see [`touch`]).
pub async fn write_work(
    app: &AppState,
    loaded: &Loaded,
    seen: Option<Seat>,
    commit: Commit,
) -> Result<(), ApiError> {
    let now = app.now();
    let id = loaded.id.as_uuid();
    let Some(m) = loaded.state.get() else {
        return Ok(());
    };
    let mut client = app.pool.get().await.map_err(unexpected)?;
    if m.is_finished() {
        client
            .execute("DELETE FROM match_work WHERE match_id = $1", &[&id])
            .await
            .map_err(unexpected)?;
        return Ok(());
    }
    let due = state_due(m, app.play.return_seconds, now);
    let watch = |s: Seat| {
        matches!(m.seat(s).occupant, Occupant::Human { .. }) && m.seat(s).presence == Presence::Here
    };
    let seen1 = (seen == Some(Seat::ONE)).then_some(now);
    let seen2 = (seen == Some(Seat::TWO)).then_some(now);
    let release = commit == Commit::Release;
    let tx = client.transaction().await.map_err(unexpected)?;
    if commit == Commit::Relaxed {
        tx.batch_execute("SET LOCAL synchronous_commit = off")
            .await
            .map_err(unexpected)?;
    }
    tx.execute(
        "INSERT INTO match_work (match_id, state_due, watch1, watch2, seen1, seen2) \
         VALUES ($1, $2::timestamptz, $3, $4, coalesce($5::timestamptz, $7::timestamptz), \
           coalesce($6::timestamptz, $7::timestamptz)) \
         ON CONFLICT (match_id) DO UPDATE SET state_due = $2::timestamptz, watch1 = $3, \
           watch2 = $4, seen1 = greatest(match_work.seen1, $5::timestamptz), \
           seen2 = greatest(match_work.seen2, $6::timestamptz), \
           lease_until = CASE WHEN $8 THEN NULL ELSE match_work.lease_until END",
        &[
            &id,
            &due,
            &watch(Seat::ONE),
            &watch(Seat::TWO),
            &seen1,
            &seen2,
            &m.created_at,
            &release,
        ],
    )
    .await
    .map_err(unexpected)?;
    tx.commit().await.map_err(unexpected)?;
    Ok(())
}

/// When the match's own state next needs the server: now for a CPU move, the turn deadline, or
/// the end of an away player's grace period.
fn state_due(m: &Match, return_seconds: u32, now: OffsetDateTime) -> Option<OffsetDateTime> {
    let mut due: Vec<OffsetDateTime> = Vec::new();
    if m.cpu_to_move().is_some() {
        due.push(now);
    }
    due.extend(m.deadline());
    for seat in Seat::BOTH {
        if let Presence::Away { since, .. } = m.seat(seat).presence {
            due.push(since + Duration::seconds(i64::from(return_seconds)));
        }
    }
    due.into_iter().min()
}

/// Names of the human players of a match.
pub async fn names(app: &AppState, m: &Match) -> Result<HashMap<PlayerId, String>, ApiError> {
    let ids: Vec<Uuid> = m
        .seats
        .iter()
        .filter_map(|s| s.player_id())
        .map(|p| p.as_uuid())
        .collect();
    let client = app.pool.get().await.map_err(unexpected)?;
    let rows = client
        .query(
            "SELECT player_id, name FROM players WHERE player_id = ANY($1)",
            &[&ids],
        )
        .await
        .map_err(unexpected)?;
    Ok(rows
        .into_iter()
        .map(|r| (PlayerId::from_uuid(r.get(0)), r.get(1)))
        .collect())
}

/// The match view of a loaded match.
pub async fn view(app: &AppState, loaded: &Loaded) -> Result<MatchView, ApiError> {
    let m = loaded.get()?;
    let names = names(app, m).await?;
    Ok(MatchView::new(loaded.id, m, loaded.state.version(), &names))
}

/// Maps a refusal of the domain to what the client sees.
pub fn domain_error(e: DomainError) -> ApiError {
    match e {
        DomainError::MatchFinished => ApiError::MatchFinished,
        DomainError::NotYourTurn(_) => ApiError::NotYourTurn,
        DomainError::IllegalMove(e) => ApiError::IllegalMove(e.to_string()),
        DomainError::NotCreated => ApiError::NotFound("match"),
        DomainError::NotAHumanSeat(_) => ApiError::Forbidden("that seat is not yours".into()),
        DomainError::AlreadyAway(_) => ApiError::Conflict("you already left this match".into()),
        DomainError::NotAway(_) => ApiError::Conflict("you are not away".into()),
        DomainError::BadCpuLevel(_)
        | DomainError::SamePlayerTwice
        | DomainError::RankedNeedsHumans
        | DomainError::SettingNotForGame(_) => ApiError::InvalidRequest(e.to_string()),
        DomainError::AlreadyCreated
        | DomainError::NotCpuControlled(_)
        | DomainError::AlreadyReplaced(_)
        | DomainError::NoTurnLimit
        | DomainError::TooEarly => ApiError::Conflict(e.to_string()),
    }
}

/// An error the client cannot act on; its cause chain is logged, not shown.
pub fn unexpected<E: std::error::Error + Send + Sync + 'static>(e: E) -> ApiError {
    ApiError::Unexpected(anyhow::Error::new(e))
}
