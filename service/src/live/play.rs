//! The command path of a match, through the one runner (`aggregates::run`, with a match's
//! [`aggregates::Steps`]): take the state (cached, or read and folded), `decide`, let the CPU
//! answer where its level answers at once, and commit the events, the match's work row and the
//! request's stored answer together with the version it was all decided on.
//!
//! The CPU replies in the same command up to [`INLINE_CPU_LEVEL`]; level 5, which may search for
//! a second, plays its moves as commands of their own ([`run_cpu`]), and every searched choice
//! ([`cpu_move`]) runs on a blocking thread. A conflict or a refusal decided on a cached state
//! reloads the match from the log and decides again. Also here: opening a match ([`start`]), the
//! `match_work` row of a state, presence (an asynchronous commit: "last seen" only), and the
//! strong-solo limit (`strong_solo_turn`, under the player's advisory lock).

use std::collections::HashMap;
use std::sync::Arc;

use time::OffsetDateTime;
use uuid::Uuid;

use domain::cpu;
use domain::games::{AnyPosition, GameId};
use domain::ids::{MatchId, PlayerId, Seat};
use domain::matches::{
    Action, Command, CreateMatch, FirstMoveRule, LeaveReason, Match, MatchState, MovedBy, Occupant,
    Presence, Settings, Stamped, decide, evolve, strong_solo_player,
};
use eventlog::{AppendError, AppendOutcome, NewEvent, RecordedEvent, StreamAppend};

use crate::aggregates::{self, Appended};
use crate::answers::{self, KeyRecord};
use crate::checks;
use crate::error::{Error, unexpected};
use crate::live::LivePath;
use crate::live::cache::Cached;
use crate::live::commit::{CommitError, Job, StoredAnswer, WorkRow};
pub use crate::live::loaded::{Loaded, RowHint, stamped};
use crate::metrics::Limit;
use crate::reasons::Missing;
use crate::views::MatchView;

/// The level of the CPU that stands in for absent players and timed-out turns.
pub const STAND_IN_LEVEL: u8 = 2;

/// The strongest CPU level whose reply is committed with the command it answers; level 5 may
/// search for a second, so its moves are commands of their own.
pub const INLINE_CPU_LEVEL: u8 = 4;

/// Keeps `loaded` in the instance's match cache; never a correspondence game:
/// a game played over days is read from the log when it moves, so that any number of open ones
/// costs an instance no memory.
fn remember(app: &LivePath, loaded: &Loaded) {
    if let Some(m) = loaded.state.get()
        && m.is_correspondence()
    {
        app.cache.forget(loaded.id);
        return;
    }
    app.cache.put(
        loaded.id,
        Cached {
            state: loaded.state.clone(),
            names: loaded.names.clone(),
            head: loaded.head,
            row: loaded.row,
        },
    );
}

/// The match as it is in the log now: the cached state brought up to date by one read of the
/// events after it (usually none), or the whole stream when nothing is cached.
pub async fn load(app: &LivePath, id: MatchId) -> Result<Loaded, Error> {
    let Some(cached) = app.cache.get(id) else {
        return load_fresh(app, id).await;
    };
    let newer = app
        .log
        .read_stream_after(&id.stream(), cached.state.version() as i64)
        .await
        .map_err(unexpected)?;
    let state = aggregates::fold::<MatchState>(cached.state.clone(), &newer)?;
    let loaded = Loaded {
        id,
        state,
        names: cached.names.clone(),
        head: newer.last().map(|e| e.hash).or(cached.head),
        row: cached.row,
    };
    if !newer.is_empty() {
        remember(app, &loaded);
    }
    Ok(loaded)
}

/// A match as a command found it: from the cache (a guess its expected version will prove), or
/// read from the log.
pub struct Known {
    pub loaded: Loaded,
    cached: bool,
}

/// The match for a command: the cached state without asking the log, or read from the log.
pub async fn load_command(app: &LivePath, id: MatchId) -> Result<Known, Error> {
    Ok(match app.cache.get(id) {
        Some(c) => Known {
            loaded: Loaded {
                id,
                state: c.state.clone(),
                names: c.names.clone(),
                head: c.head,
                row: c.row,
            },
            cached: true,
        },
        None => Known {
            loaded: load_fresh(app, id).await?,
            cached: false,
        },
    })
}

/// Reads and folds the whole stream (and the players' names); `not_found` when it has no
/// events. Caches what it read.
pub async fn load_fresh(app: &LivePath, id: MatchId) -> Result<Loaded, Error> {
    Ok(load_with_events(app, id).await?.0)
}

/// [`load_fresh`], keeping the events (the events, replay and stream calls).
pub async fn load_with_events(
    app: &LivePath,
    id: MatchId,
) -> Result<(Loaded, Vec<RecordedEvent>), Error> {
    let events = app
        .log
        .read_stream(&id.stream())
        .await
        .map_err(unexpected)?;
    if events.is_empty() {
        return Err(Error::NotFound(Missing::Match));
    }
    let state = aggregates::fold::<MatchState>(MatchState::default(), &events)?;
    let names = match app.cache.get(id) {
        Some(c) => c.names.clone(),
        None => Arc::new(names(app, state.get().ok_or(Error::NotFound(Missing::Match))?).await?),
    };
    Ok(keep(app, id, state, names, events))
}

/// A match folded from its whole stream `events`, kept in the cache.
fn keep(
    app: &LivePath,
    id: MatchId,
    state: MatchState,
    names: Arc<HashMap<PlayerId, String>>,
    events: Vec<RecordedEvent>,
) -> (Loaded, Vec<RecordedEvent>) {
    let loaded = Loaded {
        id,
        state,
        names,
        head: events.last().map(|e| e.hash),
        row: None,
    };
    remember(app, &loaded);
    (loaded, events)
}

/// Which view a stored answer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerAt {
    /// Right after the caller's own command (a move: the CPU's reply is seen by GET or the
    /// stream).
    Own,
    /// After the CPU's replies too (a new match that the CPU opens).
    Last,
}

/// The answer a request stores with its command (`Idempotency-Key`).
pub struct Answering {
    pub key: KeyRecord,
    /// The answer's status as the edge renders it ([`answers::OK`], [`answers::CREATED`]).
    pub status: u16,
    pub at: AnswerAt,
}

impl Answering {
    /// A 200 with the match right after the caller's command, for a request with a key.
    pub fn own(key: Option<KeyRecord>) -> Option<Answering> {
        key.map(|key| Answering {
            key,
            status: answers::OK,
            at: AnswerAt::Own,
        })
    }
}

/// One command on a match.
pub struct MatchCommand {
    pub id: MatchId,
    pub command_id: Uuid,
    pub action: Action,
    pub actor: Option<PlayerId>,
    /// The client's `expected_version`: a stale view is a `version_conflict`. Without it a
    /// lost race is decided again on the fresh state (where it may become `not_your_turn`).
    pub expected: Option<u64>,
    /// The seat whose player is seen acting now (presence).
    pub seen: Option<Seat>,
    pub answer: Option<Answering>,
}

impl MatchCommand {
    /// A seated player's command from a request (its key's command id and stored answer).
    pub fn by_player(
        id: MatchId,
        key: crate::answers::Key,
        action: Action,
        player: PlayerId,
        expected: Option<u64>,
        seen: Option<Seat>,
    ) -> MatchCommand {
        MatchCommand {
            id,
            command_id: key.command_id,
            action,
            actor: Some(player),
            expected,
            seen,
            answer: Answering::own(key.record),
        }
    }
}

/// What a seated player asks of their match (their seat is the one they hold).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    Move(String),
    Resign,
}

/// A seated player's move or resignation on match `id`, as the request of `key`, at the
/// version they chose it at (`expected`, if they say): decided and committed, then the CPU's
/// searched replies (level 5) in commands of their own. Answers with the match right after the
/// player's own command, and whether the request's answer was stored with it.
pub async fn seated_command(
    app: &LivePath,
    player: PlayerId,
    id: MatchId,
    key: crate::answers::Key,
    asked: Asked,
    expected: Option<u64>,
) -> Result<(MatchView, bool), Error> {
    let known = load_command(app, id).await?;
    let seat = known.loaded.seat_required(player)?;
    let action = match asked {
        Asked::Move(mv) => Action::PlayMove {
            seat,
            mv,
            by: MovedBy::Human,
        },
        Asked::Resign => Action::Resign { seat },
    };
    let cmd = MatchCommand::by_player(id, key, action, player, expected, Some(seat));
    let done = execute_on(app, cmd, Some(known)).await?;
    let view = done.own.view()?;
    run_cpu(app, done.last).await?;
    Ok((view, done.stored))
}

/// A seated player leaving their match for a while (`leaving`) or coming back, as the request of
/// `key`: a no-op answered with the match when they already are where they ask to be (a return
/// then counts as being seen). Leaving on one's own is limited (`rate_limited`).
pub async fn presence_command(
    app: &LivePath,
    player: PlayerId,
    id: MatchId,
    key: crate::answers::Key,
    leaving: bool,
    expected: Option<u64>,
) -> Result<(MatchView, bool), Error> {
    let loaded = load(app, id).await?;
    let seat = loaded.seat_required(player)?;
    let m = loaded.get()?;
    if m.is_finished() {
        return Err(Error::MatchFinished);
    }
    if let Some(expected) = expected
        && expected != loaded.state.version()
    {
        return Err(Error::VersionConflict {
            expected,
            actual: loaded.state.version(),
        });
    }
    let here = m.seat(seat).presence == Presence::Here;
    let action = match (leaving, here) {
        (true, true) => Action::Leave {
            seat,
            reason: LeaveReason::Left,
        },
        (false, false) => Action::Return { seat },
        // Already in that state: nothing to write but presence.
        _ => {
            if !leaving {
                mark_seen(app, id, seat).await?;
            }
            return Ok((loaded.view()?, false));
        }
    };
    if leaving
        && let Some(wait) = app
            .play
            .leave_wait(m.seat(seat).leaves, m.created_at, app.now())
    {
        app.metrics.refused(Limit::Leaves);
        return Err(Error::RateLimited(wait));
    }
    let seen = (!leaving).then_some(seat);
    let cmd = MatchCommand::by_player(id, key, action, player, expected, seen);
    let done = execute(app, cmd).await?;
    Ok((done.own.view()?, done.stored))
}

/// What a command did.
pub struct Done {
    /// The match right after the caller's own command.
    pub own: Loaded,
    /// The match after the CPU's replies committed with it.
    pub last: Loaded,
    /// Whether the request's answer was committed with the command.
    pub stored: bool,
}

/// Decides a command (and the CPU's immediate replies) and commits it with the match's work row
/// and the stored answer, in one transaction. The same `command_id` twice writes once.
pub async fn execute(app: &LivePath, cmd: MatchCommand) -> Result<Done, Error> {
    execute_on(app, cmd, None).await
}

/// [`execute`] on a match the caller has just taken with [`load_command`].
pub async fn execute_on(
    app: &LivePath,
    cmd: MatchCommand,
    known: Option<Known>,
) -> Result<Done, Error> {
    let turn = match &cmd.action {
        Action::CreateMatch(create) => {
            refuse_seated_searching_cpu(app, &create.seats).await?;
            strong_solo_turn(app, &create.seats).await?
        }
        _ => None,
    };
    let done = decide_and_commit(app, cmd, known).await;
    if let Some(turn) = turn {
        turn.release().await;
    }
    done
}

async fn decide_and_commit(
    app: &LivePath,
    cmd: MatchCommand,
    known: Option<Known>,
) -> Result<Done, Error> {
    let first = match (&cmd.action, known) {
        (Action::CreateMatch(create), _) => (created(app, cmd.id, create).await?, false),
        (_, Some(known)) if known.loaded.id == cmd.id => (known.loaded, known.cached),
        _ => {
            let known = load_command(app, cmd.id).await?;
            (known.loaded, known.cached)
        }
    };
    let steps = Play {
        app,
        at: app.now(),
        cmd: &cmd,
    };
    aggregates::run(&steps, cmd.id, Some(first)).await
}

/// A match command's steps through the runner (`aggregates::run`): the match from the cache
/// (a guess) or the log, the command decided with the CPU's immediate replies, and the group
/// commit with the match's work row and the request's stored answer.
struct Play<'a> {
    app: &'a LivePath,
    cmd: &'a MatchCommand,
    /// When the command is decided, whichever attempt writes it.
    at: OffsetDateTime,
}

/// A match command decided: its events and states, with the rows that commit beside them.
struct Decision {
    decided: Decided,
    work: Option<WorkRow>,
    answer: Option<StoredAnswer>,
}

impl aggregates::Steps<MatchState> for Play<'_> {
    type Found = Loaded;
    type Decision = Decision;
    type Done = Done;
    type Turn = ();
    /// A match's commands race other instances' (no turn is taken): a command given up after
    /// five races lost is a `version_conflict` the client may retry.
    const ATTEMPTS: usize = 5;

    async fn turn(&self, _: MatchId) {}

    async fn find(&self, id: MatchId, from_log: bool) -> Result<(Loaded, bool), Error> {
        if from_log {
            return Ok((load_fresh(self.app, id).await?, false));
        }
        let known = load_command(self.app, id).await?;
        Ok((known.loaded, known.cached))
    }

    fn state(found: &Loaded) -> &MatchState {
        &found.state
    }

    async fn decide(&self, loaded: &Loaded) -> Result<Decision, Error> {
        let (app, cmd, at) = (self.app, self.cmd, self.at);
        let version = loaded.state.version();
        let expected = match cmd.action {
            // A creation that lost its race finds the match made.
            Action::CreateMatch(_) => Some(0),
            _ => cmd.expected,
        };
        if let Some(expected) = expected
            && expected != version
        {
            return Err(Error::VersionConflict {
                expected,
                actual: version,
            });
        }
        let mut decided = decide_with_cpu(app, loaded, &cmd.action, cmd.actor, at).await?;
        let answer = stored_answer(cmd.answer.as_ref(), &decided, at)?;
        let work = crate::live::work::work_after(app, loaded, &decided.last, cmd.seen, at);
        // The row as this command leaves it: as written, or as it was.
        decided.last.row = match &work {
            Some(w) => w.pending.as_ref().map(RowHint::of),
            None => loaded.row,
        };
        Ok(Decision {
            decided,
            work,
            answer,
        })
    }

    async fn append(
        &self,
        id: MatchId,
        loaded: &Loaded,
        decision: Decision,
    ) -> Result<Appended<Done>, Error> {
        let (app, cmd) = (self.app, self.cmd);
        let Decision {
            mut decided,
            work,
            answer,
        } = decision;
        let stored = answer.is_some();
        let job = Job {
            command_id: cmd.command_id,
            appends: vec![StreamAppend {
                stream: id.stream(),
                expected_version: loaded.state.version() as i64,
                events: decided.events,
            }],
            work,
            answer,
            head: loaded.head,
        };
        match app.committer.submit(job).await {
            Ok(AppendOutcome::Appended(written)) => {
                decided.last.head = written.last().map(|e| e.hash);
                remember(app, &decided.last);
                app.live.committed(&app.log, id, &written);
                if let Err(e) = crate::live::correspondence::keep_due(app, &decided.last).await {
                    // The row keeps the deadline before this command: an early wake-up of the
                    // workers' pass, which sets it right.
                    tracing::warn!(match_id = %id, error = %e, "a correspondence deadline was not moved");
                }
                Ok(Appended::Done(Done {
                    own: decided.own,
                    last: decided.last,
                    stored,
                }))
            }
            // A retry of a command that went through: its outcome is the match as it is.
            Ok(AppendOutcome::AlreadyApplied(_)) => {
                let now = load_fresh(app, id).await?;
                Ok(Appended::Done(Done {
                    own: now.clone(),
                    last: now,
                    stored: false,
                }))
            }
            Err(CommitError::Append(AppendError::Conflict { actual, .. })) => {
                Ok(Appended::Conflict {
                    actual: actual as u64,
                })
            }
            Err(CommitError::Append(AppendError::Retry)) => Ok(Appended::Again),
            // The database out of reach: 503 with a retry hint, not an unexpected error.
            Err(e) if e.is_outage() => {
                Err(Error::Unavailable(format!("{:#}", anyhow::Error::new(e))))
            }
            Err(e) => Err(unexpected(e)),
        }
    }

    fn forget(&self, id: MatchId) {
        self.app.cache.forget(id);
    }

    fn gave_up(&self, lost: Option<(u64, u64)>) -> Error {
        match lost {
            Some((tried, actual)) => Error::VersionConflict {
                expected: self.cmd.expected.unwrap_or(tried),
                actual,
            },
            None => Error::Unavailable("the match's command could not be written".into()),
        }
    }
}

/// The answer a request stores with its command: the match right after the caller's command,
/// or after the CPU's replies (none yet when level 5 is still to move: the answer is then
/// stored by the request after it).
fn stored_answer(
    answer: Option<&Answering>,
    decided: &Decided,
    at: OffsetDateTime,
) -> Result<Option<StoredAnswer>, Error> {
    let Some(a) = answer else {
        return Ok(None);
    };
    let view = match a.at {
        AnswerAt::Own => decided.own.view()?,
        AnswerAt::Last if !cpu_pending(&decided.last) => decided.last.view()?,
        AnswerAt::Last => return Ok(None),
    };
    Ok(Some(StoredAnswer {
        player: a.key.player,
        key: a.key.key.clone(),
        request_hash: a.key.request_hash.clone(),
        status: a.status,
        body: serde_json::to_string(&view).map_err(unexpected)?,
        at,
    }))
}

/// Refuses a match against a CPU that searches (level 3 and up: the exact solvers, the solved
/// positions and the books are within its reach) to a player seated in a live ranked match
/// (`in_ranked_match`): the CPU would be their engine at a position no guard covers yet.
async fn refuse_seated_searching_cpu(app: &LivePath, seats: &[Occupant; 2]) -> Result<(), Error> {
    let searching = seats
        .iter()
        .any(|s| matches!(s, Occupant::Cpu { level } if *level > cpu::GUARDED_LEVEL));
    if !searching {
        return Ok(());
    }
    let client = app.pool.get().await.map_err(unexpected)?;
    for player in seats.iter().filter_map(|s| s.player_id()) {
        if crate::standing::seated_in(&client, player).await?.is_some() {
            return Err(Error::InRankedMatch);
        }
    }
    Ok(())
}

/// Refuses a new solo match against CPU level 4 or 5 when its player already has
/// `DISCS_STRONG_SOLO_PER_PLAYER` of them active (each ties up search time on every move).
///
/// The count and the new match's commit happen under the player's advisory lock (held by the
/// returned turn on a connection of its own), so racing creations, on any instance, never pass
/// the limit together: while one holds the lock, the others are refused at once as if at the
/// limit (waiting for it would hold pooled connections that the holder may need).
async fn strong_solo_turn(
    app: &LivePath,
    seats: &[Occupant; 2],
) -> Result<Option<StrongSoloTurn>, Error> {
    let Some(player) = strong_solo_player(seats) else {
        return Ok(None);
    };
    let limit = app.play.strong_solo_per_player;
    let client = app.pool.get().await.map_err(unexpected)?;
    let key = strong_solo_lock(player);
    let locked: bool = client
        .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
        .await
        .map_err(unexpected)?
        .get(0);
    if !locked {
        app.metrics.refused(Limit::StrongSolo);
        return Err(Error::StrongSoloLimit(limit));
    }
    let turn = StrongSoloTurn(Some(client), key);
    let active: i64 = turn
        .client()
        .query_one(
            "SELECT count(*) FROM match_work WHERE strong_player = $1",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?
        .get(0);
    if active >= i64::from(limit) {
        turn.release().await;
        app.metrics.refused(Limit::StrongSolo);
        return Err(Error::StrongSoloLimit(limit));
    }
    Ok(Some(turn))
}

/// The advisory lock key of a player's strong solo creations: the player id's first 8 bytes,
/// with a tag of this lock so that it meets no other advisory lock of the database.
fn strong_solo_lock(player: PlayerId) -> i64 {
    let bytes = player.as_uuid().into_bytes();
    let head = i64::from_le_bytes([
        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
    ]);
    head ^ 0x5354_524f_4e47_534f // "STRONGSO"
}

/// A connection holding a player's strong-solo advisory lock (see [`strong_solo_turn`]).
struct StrongSoloTurn(Option<deadpool_postgres::Client>, i64);

impl StrongSoloTurn {
    fn client(&self) -> &deadpool_postgres::Client {
        self.0.as_ref().expect("held until released")
    }

    /// Unlocks and gives the connection back to the pool; a connection that cannot unlock is
    /// closed instead (which unlocks too).
    async fn release(mut self) {
        if let Some(client) = self.0.take() {
            let key = self.1;
            if client
                .execute("SELECT pg_advisory_unlock($1)", &[&key])
                .await
                .is_err()
            {
                drop(deadpool_postgres::Object::take(client));
            }
        }
    }
}

impl Drop for StrongSoloTurn {
    /// A turn dropped unreleased (its request was cancelled, or failed on the way): the
    /// connection leaves the pool and closes, and PostgreSQL drops its lock with it.
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            drop(deadpool_postgres::Object::take(client));
        }
    }
}

/// The empty match a `CreateMatch` is decided on, with its players' names.
async fn created(app: &LivePath, id: MatchId, create: &CreateMatch) -> Result<Loaded, Error> {
    let players = create.players();
    let client = app.pool.get().await.map_err(unexpected)?;
    Ok(Loaded {
        id,
        state: MatchState::default(),
        names: Arc::new(crate::players::names(&client, &players).await?),
        head: None,
        row: None,
    })
}

/// The events of a command and of the CPU's replies that follow at once, with the states after
/// each part.
struct Decided {
    events: Vec<NewEvent>,
    own: Loaded,
    last: Loaded,
}

async fn decide_with_cpu(
    app: &LivePath,
    loaded: &Loaded,
    action: &Action,
    actor: Option<PlayerId>,
    at: OffsetDateTime,
) -> Result<Decided, Error> {
    let mut state = loaded.state.clone();
    let mut events = Vec::new();
    let mut apply = |state: &mut MatchState, action: Action, actor: Option<PlayerId>| {
        let decided = decide(state, &Command { at, action }).map_err(Error::from)?;
        for e in decided {
            events.push(NewEvent {
                event_type: e.event_type().to_owned(),
                schema_version: e.schema_version(),
                data: e.data(),
                actor: actor.map(|p| p.as_uuid()),
                recorded_at: at,
            });
            evolve(state, &Stamped { at, event: e });
        }
        Ok::<(), Error>(())
    };
    apply(&mut state, action.clone(), actor)?;
    let own = Loaded {
        id: loaded.id,
        state: state.clone(),
        names: loaded.names.clone(),
        head: None,
        row: None,
    };
    for _ in 0..64 {
        let Some(m) = state.get() else { break };
        let Some((seat, level)) = m.cpu_to_move() else {
            break;
        };
        if level > INLINE_CPU_LEVEL {
            break;
        }
        let Some(mv) = cpu_move(app, m.position, level, m.cpu_seed).await? else {
            break;
        };
        let action = Action::PlayMove {
            seat,
            mv,
            by: MovedBy::Cpu,
        };
        apply(&mut state, action, None)?;
    }
    Ok(Decided {
        events,
        own,
        last: Loaded {
            id: loaded.id,
            state,
            names: loaded.names.clone(),
            head: None,
            row: None,
        },
    })
}

/// Whether the CPU is to move at a level that answers in a command of its own.
fn cpu_pending(loaded: &Loaded) -> bool {
    loaded
        .state
        .get()
        .and_then(Match::cpu_to_move)
        .is_some_and(|(_, level)| level > INLINE_CPU_LEVEL)
}

/// The CPU's choice. The levels that search (3 and up) run on a blocking thread, as level 5
/// can take a second and must not hold up the async workers; at a position the fair-play
/// boundary guards they play the level-2 policy instead (`guards::cpu_level_at`).
pub async fn cpu_move(
    app: &LivePath,
    position: AnyPosition,
    level: u8,
    seed: u64,
) -> Result<Option<String>, Error> {
    let level = super::guards::cpu_level_at(app, &position, level).await?;
    if level <= 2 {
        return Ok(cpu::choose_move(&position, level, seed));
    }
    // Levels 3–5 search: within the instance's cap on searches, off the async threads.
    let _slot = app.searches.for_move().await?;
    tokio::task::spawn_blocking(move || cpu::choose_move(&position, level, seed))
        .await
        .map_err(unexpected)
}

/// Lets the CPU play its searched moves (level 5) while it is to move; each move is a command of
/// its own whose id follows from the match version, so two instances never play it twice.
pub async fn run_cpu(app: &LivePath, mut loaded: Loaded) -> Result<Loaded, Error> {
    for _ in 0..64 {
        let Some(m) = loaded.state.get() else { break };
        let Some((seat, level)) = m.cpu_to_move() else {
            break;
        };
        let Some(mv) = cpu_move(app, m.position, level, m.cpu_seed).await? else {
            break;
        };
        let action = Action::PlayMove {
            seat,
            mv,
            by: MovedBy::Cpu,
        };
        // Another instance moved first: carry on from the state it left.
        loaded = step(app, &loaded, "cpu", action, None).await?;
    }
    Ok(loaded)
}

/// A step taken in a match on its own account — a turn or a game out of time, the CPU's move,
/// a player back — as command `what` on the match at `loaded`'s version, its id derived from
/// both ([`derived_id`]) so that every instance taking the same step writes it once. A step of
/// the server's (`by` none) is written only on the state it was decided on; a player's own
/// (`by`: the player and their seat) is decided again on the fresh state, as their commands
/// without `expected_version` are. A step another writer got to first (the match has moved
/// on and the step no longer applies) answers the match as that writer left it; a step refused
/// on the state it was decided on is the caller's error.
pub async fn step(
    app: &LivePath,
    loaded: &Loaded,
    what: &str,
    action: Action,
    by: Option<(PlayerId, Seat)>,
) -> Result<Loaded, Error> {
    let version = loaded.state.version();
    let cmd = MatchCommand {
        id: loaded.id,
        command_id: derived_id(loaded.id, what, version),
        action,
        actor: by.map(|(player, _)| player),
        expected: by.is_none().then_some(version),
        seen: by.map(|(_, seat)| seat),
        answer: None,
    };
    match execute(app, cmd).await {
        Ok(done) => Ok(done.last),
        Err(e @ (Error::VersionConflict { .. } | Error::NotYourTurn | Error::Conflict(_))) => {
            let fresh = load_fresh(app, loaded.id).await?;
            if fresh.state.version() > version {
                Ok(fresh)
            } else {
                Err(e)
            }
        }
        Err(e) => Err(e),
    }
}

/// A solo match as its player asks for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Solo {
    pub game: GameId,
    pub cpu_level: u8,
    pub settings: Settings,
    /// The seat that moves first: the player's (1) or the CPU's (2).
    pub first: Seat,
}

/// Starts `player`'s solo match against the CPU as command `command_id`; not for a banned
/// player (`forbidden`). Answers as [`start`] does.
pub async fn start_solo(
    app: &LivePath,
    player: PlayerId,
    command_id: Uuid,
    solo: Solo,
    answer: Option<KeyRecord>,
) -> Result<(MatchView, bool), Error> {
    crate::checks::cpu_level(solo.cpu_level)?;
    crate::standing::refuse_banned(app, player).await?;
    let create = CreateMatch {
        game: solo.game,
        seats: [
            Occupant::Human { player_id: player },
            Occupant::Cpu {
                level: solo.cpu_level,
            },
        ],
        settings: solo.settings,
        first_seat: solo.first,
        first_rule: FirstMoveRule::Setting,
        ranked: false,
        room_id: None,
        tournament_id: None,
        cpu_seed: app.chance.bits(),
    };
    start(
        app,
        MatchId::of_command(command_id),
        command_id,
        create,
        player,
        answer,
    )
    .await
}

/// Creates a match for `player` (solo or in a room); the CPU opens in the same commit when it
/// starts (level 5 just after). Answers with the view after the CPU's opening.
pub async fn start(
    app: &LivePath,
    id: MatchId,
    command_id: Uuid,
    create: CreateMatch,
    player: PlayerId,
    answer: Option<KeyRecord>,
) -> Result<(MatchView, bool), Error> {
    let seat = Seat::BOTH
        .into_iter()
        .find(|&s| matches!(create.seats[s.index()], Occupant::Human { player_id } if player_id == player));
    if create.settings.is_correspondence() {
        let client = app.pool.get().await.map_err(unexpected)?;
        crate::live::correspondence::open_on(&client, id, &create, app.now()).await?;
    }
    let done = execute(
        app,
        MatchCommand {
            id,
            command_id,
            action: Action::CreateMatch(create),
            actor: Some(player),
            expected: None,
            seen: seat,
            answer: answer.map(|key| Answering {
                key,
                status: answers::CREATED,
                at: AnswerAt::Last,
            }),
        },
    )
    .await?;
    let stored = done.stored;
    let last = run_cpu(app, done.last).await?;
    Ok((last.view()?, stored))
}

/// A command id that every instance derives alike for the same step of a match.
pub fn derived_id(id: MatchId, what: &str, version: u64) -> Uuid {
    Uuid::new_v5(&id.as_uuid(), format!("{what}:{version}").as_bytes())
}

/// Brings a seated player back when they act on the match while away, and records
/// that they are here.
pub async fn presence(app: &LivePath, loaded: Loaded, player: PlayerId) -> Result<Loaded, Error> {
    let Some(seat) = loaded.seat_of(player) else {
        return Ok(loaded);
    };
    let Some(m) = loaded.state.get() else {
        return Ok(loaded);
    };
    if m.is_finished() {
        return Ok(loaded);
    }
    if m.seat(seat).presence != Presence::Here {
        return step(
            app,
            &loaded,
            "return",
            Action::Return { seat },
            Some((player, seat)),
        )
        .await;
    }
    mark_seen(app, loaded.id, seat).await?;
    Ok(loaded)
}

/// Records that a seat's player is here. Only `seen` changes, committed without waiting for
/// the flush: a lost update after a crash costs nothing but a late "away".
pub async fn mark_seen(app: &LivePath, id: MatchId, seat: Seat) -> Result<(), Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let sql = if seat == Seat::ONE {
        "WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)) \
         UPDATE match_work SET seen1 = greatest(seen1, $2) FROM relaxed WHERE match_id = $1"
    } else {
        "WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)) \
         UPDATE match_work SET seen2 = greatest(seen2, $2) FROM relaxed WHERE match_id = $1"
    };
    let statement = client.prepare_cached(sql).await.map_err(unexpected)?;
    client
        .execute(&statement, &[&id.as_uuid(), &app.now()])
        .await
        .map_err(unexpected)?;
    Ok(())
}

/// Names of the human players of a match.
pub async fn names(app: &LivePath, m: &Match) -> Result<HashMap<PlayerId, String>, Error> {
    let players: Vec<PlayerId> = m.seats.iter().filter_map(|s| s.player_id()).collect();
    let client = app.pool.get().await.map_err(unexpected)?;
    crate::players::names(&client, &players).await
}

/// Loads a match for a caller; a seated caller counts as present (and comes back if away).
pub async fn open(app: &LivePath, player: PlayerId, raw_id: &str) -> Result<Loaded, Error> {
    let id: MatchId = checks::id(raw_id)?;
    let loaded = load(app, id).await?;
    presence(app, loaded, player).await
}

/// [`open`], with every event of the match.
pub async fn open_with_events(
    app: &LivePath,
    player: PlayerId,
    raw_id: &str,
) -> Result<(Loaded, Vec<eventlog::RecordedEvent>), Error> {
    let id: MatchId = checks::id(raw_id)?;
    let (loaded, events) = load_with_events(app, id).await?;
    let version = loaded.state.version();
    let loaded = presence(app, loaded, player).await?;
    if loaded.state.version() == version {
        return Ok((loaded, events));
    }
    // Coming back wrote an event: read the stream again so that it is in the answer.
    load_with_events(app, id).await
}

/// [`open_with_events`] for a read that a finished match's copy on a replica answers as well
/// as the primary (its events, its replay): from a replica in the rotation that holds the
/// match's end, else from the primary (at once for a match this instance has cached as active).
pub async fn open_finished_with_events(
    app: &LivePath,
    player: PlayerId,
    raw_id: &str,
) -> Result<(Loaded, Vec<RecordedEvent>), Error> {
    let id: MatchId = checks::id(raw_id)?;
    // A match this instance knows as active is read on the primary at once (a stale entry,
    // finished elsewhere since, only costs the standby's read).
    let known_active = || {
        app.cache
            .get(id)
            .is_some_and(|c| c.state.get().is_some_and(|m| !m.is_finished()))
    };
    if let Some(replicas) = app.replicas.as_ref().filter(|_| !known_active()) {
        let finished = |events: &[RecordedEvent]| {
            let state = aggregates::fold::<MatchState>(MatchState::default(), events).ok()?;
            state.get()?.is_finished().then_some(state)
        };
        if let Some((events, state)) = replicas.finished_stream(&id.stream(), finished).await {
            // The names from the primary: a closing writes no event, so the replica's copy
            // of a finished match may still hold a name the primary has erased.
            let names = match app.cache.get(id) {
                Some(c) => Ok(c.names.clone()),
                None => seated_names(app, &state).await.map(Arc::new),
            };
            if let Ok(names) = names {
                return Ok(keep(app, id, state, names, events));
            }
        }
    }
    open_with_events(app, player, raw_id).await
}

/// The seated players' names, read on the primary.
async fn seated_names(
    app: &LivePath,
    state: &MatchState,
) -> Result<HashMap<PlayerId, String>, Error> {
    let m = state.get().ok_or(Error::NotFound(Missing::Match))?;
    let players: Vec<PlayerId> = m.seats.iter().filter_map(|s| s.player_id()).collect();
    let client = app.pool.get().await.map_err(unexpected)?;
    crate::players::names(&client, &players).await
}
