//! One way to run an aggregate (`domain::aggregate::Aggregate`): its stored events decoded and
//! folded ([`decode`], [`fold`], [`read`]), the folds an instance keeps and catches up with the
//! log ([`Kept`], [`load`]), and a command ([`command`]): this instance's writers of a stream
//! take turns, the command is decided against the fold, appended at its version with what it
//! writes beside the log in the same transaction, and decided again after a race lost to
//! another instance. Tournaments, challenges, queue tickets and players' standings run here; a
//! match's moves go through the live path's group commit instead (many streams in one
//! statement), on the same fold, and a wave's or an organiser's pass appends many aggregates'
//! commands at once (`live::created` makes their matches).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use deadpool_postgres::Transaction;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::aggregate::Aggregate;
use domain::ids::PlayerId;
use eventlog::{AppendError, AppendOutcome, EventLog, NewEvent, RecordedEvent, StreamAppend};

use crate::core::Core;
use crate::error::{Error, unexpected};

/// How many times a command is decided again after losing a race (to another instance: on this
/// one, the writers of a stream take turns) before it gives up.
const ATTEMPTS: usize = 16;

/// A stored event of `A`'s stream, read as the domain reads it.
pub fn decode<A: Aggregate>(e: &RecordedEvent) -> Result<A::Event, Error> {
    A::decode(&e.event_type, e.schema_version, &e.data).map_err(|reason| {
        Error::Unexpected(anyhow::anyhow!("{} v{}: {reason}", e.stream, e.version))
    })
}

/// `state` with the stored `events` (of its stream, after its version, in order) applied.
pub fn fold<A: Aggregate>(
    mut state: A::State,
    events: &[RecordedEvent],
) -> Result<A::State, Error> {
    for e in events {
        A::evolve(&mut state, e.recorded_at, &decode::<A>(e)?);
    }
    Ok(state)
}

/// The stream of `id`, read and folded whole.
pub async fn read<A: Aggregate>(core: &Core, id: A::Id) -> Result<A::State, Error> {
    let events = core
        .log
        .read_stream(&A::stream(id))
        .await
        .map_err(unexpected)?;
    fold::<A>(A::State::default(), &events)
}

/// What an append of `events`, decided at `at` by `actor`, writes to the log.
pub fn new_events<A: Aggregate>(
    events: &[A::Event],
    actor: Option<PlayerId>,
    at: OffsetDateTime,
) -> Vec<NewEvent> {
    events
        .iter()
        .map(|e| NewEvent {
            event_type: A::event_type(e).to_owned(),
            schema_version: A::schema_version(e),
            data: A::data(e),
            actor: actor.map(|p| p.as_uuid()),
            recorded_at: at,
        })
        .collect()
}

/// The folds this instance read of `A`'s streams (states cheap to clone: shared inside), each
/// at its version, and the turns of its
/// writers: commands on one stream queue here instead of racing one another to its next version
/// (a race lost is decided again; hundreds of joins at once would lose most of theirs).
pub struct Kept<A: Aggregate> {
    folds: Mutex<HashMap<A::Id, A::State>>,
    writers: Mutex<HashMap<A::Id, Arc<tokio::sync::Mutex<()>>>>,
    /// Whether folds are kept at all: streams of a few events (a ticket, a player's standing)
    /// are read whole each time, and only their writers' turns are kept here.
    keeps: bool,
}

impl<A: Aggregate> Default for Kept<A> {
    fn default() -> Self {
        Kept {
            folds: Mutex::default(),
            writers: Mutex::default(),
            keeps: true,
        }
    }
}

impl<A: Aggregate> Kept<A>
where
    A::Id: Hash,
{
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<A::Id, A::State>> {
        self.folds.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The fold of `id`, if kept.
    pub fn get(&self, id: A::Id) -> Option<A::State> {
        self.lock().get(&id).cloned()
    }

    /// Only the writers' turns: every load reads its stream whole.
    pub fn turns_only() -> Self {
        Kept {
            keeps: false,
            ..Kept::default()
        }
    }

    /// Keeps `state` unless a fold at a later version is kept already.
    pub fn keep(&self, id: A::Id, state: A::State) {
        if !self.keeps {
            return;
        }
        let mut folds = self.lock();
        match folds.get(&id) {
            Some(kept) if A::version(kept) >= A::version(&state) => {}
            _ => {
                folds.insert(id, state);
            }
        }
    }

    /// Drops the fold of `id` (an append lost to another writer: the log says what it is).
    pub fn forget(&self, id: A::Id) {
        self.lock().remove(&id);
    }

    /// Keeps only the folds `keep` says, and drops the turns nobody waits for.
    pub fn retain(&self, keep: impl Fn(&A::State) -> bool) {
        self.lock().retain(|_, s| keep(s));
        let mut writers = self.writers.lock().unwrap_or_else(|p| p.into_inner());
        writers.retain(|_, turn| Arc::strong_count(turn) > 1);
    }

    /// Whether the fold of `id` is kept.
    pub fn contains(&self, id: A::Id) -> bool {
        self.lock().contains_key(&id)
    }

    /// Waits for this instance's turn to write the stream of `id`.
    pub async fn writer(&self, id: A::Id) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut writers = self.writers.lock().unwrap_or_else(|p| p.into_inner());
            writers.entry(id).or_default().clone()
        };
        lock.lock_owned().await
    }

    /// Ends a writer's `turn` on `id`, dropping the turn when nobody else waits for it.
    fn release(&self, id: A::Id, turn: tokio::sync::OwnedMutexGuard<()>) {
        drop(turn);
        let mut writers = self.writers.lock().unwrap_or_else(|p| p.into_inner());
        if writers.get(&id).is_some_and(|t| Arc::strong_count(t) == 1) {
            writers.remove(&id);
        }
    }
}

/// The stream of `id` as the log has it now: the fold kept, caught up with the events after it
/// (kept again), or read whole.
pub async fn load<A: Aggregate>(core: &Core, kept: &Kept<A>, id: A::Id) -> Result<A::State, Error>
where
    A::Id: Hash,
{
    let held = kept.get(id);
    let after = held.as_ref().map_or(0, |s| A::version(s));
    let events = core
        .log
        .read_stream_after(&A::stream(id), after as i64)
        .await
        .map_err(unexpected)?;
    match (held, events.is_empty()) {
        (Some(state), true) => Ok(state),
        (held, _) => {
            let state = fold::<A>(held.unwrap_or_default(), &events)?;
            // A stream with no event yet is not kept: asking for ids at random keeps nothing.
            if A::version(&state) > 0 {
                kept.keep(id, state.clone());
            }
            Ok(state)
        }
    }
}

/// Runs a command on the stream of `id`, once per `command_id`: waits for this instance's turn,
/// then asks `ask` for the command on the fold (it may refuse), decides it, appends its events
/// at the fold's version with `beside`'s writes in the same transaction, and keeps the new fold.
/// A race lost to another instance reads the stream again and asks again; a retried
/// `command_id` answers the stream as it is.
pub async fn command<A, C>(
    core: &Core,
    kept: &Kept<A>,
    id: A::Id,
    actor: Option<PlayerId>,
    command_id: Uuid,
    mut ask: impl FnMut(&A::State, OffsetDateTime) -> Result<(A::Command, C), Error>,
    beside: impl AsyncFn(&Transaction<'_>, &A::State, &C, OffsetDateTime) -> Result<(), Error>,
) -> Result<(A::State, C), Error>
where
    A: Aggregate,
    A::Id: Hash,
    Error: From<A::Error>,
{
    let turn = kept.writer(id).await;
    let done = async {
        for _ in 0..ATTEMPTS {
            let state = load(core, kept, id).await?;
            let now = core.now();
            let (command, context) = ask(&state, now)?;
            let events = A::decide(&state, &command)?;
            let append = StreamAppend {
                stream: A::stream(id),
                expected_version: A::version(&state) as i64,
                events: new_events::<A>(&events, actor, now),
            };
            let mut client = core.pool.get().await.map_err(unexpected)?;
            let tx = client.transaction().await.map_err(unexpected)?;
            let written = match EventLog::append_on(&tx, command_id, vec![append]).await {
                Ok(AppendOutcome::Appended(written)) => {
                    beside(&tx, &state, &context, now).await?;
                    tx.commit().await.map_err(unexpected)?;
                    written
                }
                Ok(AppendOutcome::AlreadyApplied(_)) => {
                    drop(tx);
                    return Ok((load(core, kept, id).await?, context));
                }
                Err(AppendError::Conflict { .. }) => {
                    // Another instance wrote first, or the fold is ahead of the log (a commit a
                    // failover lost): read it again from the log.
                    kept.forget(id);
                    continue;
                }
                Err(e) => return Err(unexpected(e)),
            };
            let next = fold::<A>(state, &written)?;
            kept.keep(id, next.clone());
            return Ok((next, context));
        }
        Err(Error::Unavailable(format!(
            "the {} changed too often under this command",
            A::KIND
        )))
    }
    .await;
    kept.release(id, turn);
    done
}
