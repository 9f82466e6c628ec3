//! One way to run an aggregate (`domain::aggregate::Aggregate`): its stored events decoded and
//! folded ([`decode`], [`fold`], [`read`]), the folds an instance keeps and catches up with the
//! log ([`Kept`], [`load`]), and a command ([`run`]): this instance's writers of a stream take
//! turns, the command is decided against the fold (a refusal on a kept guess is decided again on
//! the log's), appended at the fold's version with what it writes beside the log in the same
//! transaction, and decided again after a race lost to another instance. What differs between
//! aggregates is [`Steps`]: tournaments, challenges, queue tickets and players' standings take
//! theirs with kept folds and a transaction per command ([`Logged`], through [`command`]); a
//! match with the match cache and the live path's group commit (`live::play`). A wave's or an
//! organiser's pass is not a command on one stream: it appends several aggregates at once,
//! each at the version it was decided on, whole or not at all, and leaves a race lost to the
//! next pass (`live::created` makes their matches).

use std::collections::HashMap;
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

impl<A: Aggregate> Kept<A> {
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
pub async fn load<A: Aggregate>(core: &Core, kept: &Kept<A>, id: A::Id) -> Result<A::State, Error> {
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

/// One command on an aggregate, as the runner ([`run`]) takes its steps: where the stream's
/// fold is found and kept, how the command is decided on it, and how its events are written.
/// Every aggregate but matches takes them with the folds this instance keeps and a transaction
/// per command ([`Logged`]); a match with the match cache and the group commit (`live::play`:
/// many matches' commands in one statement). Steps are made for one command.
// Every implementation is this crate's, used with its concrete type: whether a command's
// future is `Send` follows from theirs.
#[allow(async_fn_in_trait)]
pub trait Steps<A: Aggregate> {
    /// A fold with what the instance keeps beside it.
    type Found;
    /// The command decided on a fold: its events and what commits with them.
    type Decision;
    /// What the command answers once written.
    type Done;
    /// This instance's turn to write a stream, held through the command.
    type Turn;
    /// How many races the command may lose before it gives up.
    const ATTEMPTS: usize;

    /// Waits for this instance's turn to write the stream of `id`.
    async fn turn(&self, id: A::Id) -> Self::Turn;
    /// The fold of `id`: what the instance keeps, which may be a guess (`true`: the append's
    /// expected version proves it), or, with `from_log`, the log's (never a guess).
    async fn find(&self, id: A::Id, from_log: bool) -> Result<(Self::Found, bool), Error>;
    /// The fold inside what was found.
    fn state(found: &Self::Found) -> &A::State;
    /// The command decided on `found`, or why not.
    async fn decide(&self, found: &Self::Found) -> Result<Self::Decision, Error>;
    /// Appends `decision`, expected at `found`'s version, with what commits beside it; a
    /// retried command id answers the stream as it is.
    async fn append(
        &self,
        id: A::Id,
        found: &Self::Found,
        decision: Self::Decision,
    ) -> Result<Appended<Self::Done>, Error>;
    /// Forgets what the instance keeps of `id` (the log is ahead of it).
    fn forget(&self, id: A::Id);
    /// The answer after [`Self::ATTEMPTS`] attempts, the last one a race lost at version
    /// `tried` to a stream at `actual` (`lost`), or not written for a passing reason.
    fn gave_up(&self, lost: Option<(u64, u64)>) -> Error;
}

/// What became of an append.
pub enum Appended<D> {
    /// Written (or written before, by the same command id).
    Done(D),
    /// Lost to another writer: the stream is at `actual`.
    Conflict { actual: u64 },
    /// Not written for a passing reason (a twin of the command committed while its batch ran):
    /// decided again on the same fold.
    Again,
}

/// The one way a command runs on an aggregate: waits for this instance's turn on the stream of
/// `id`, takes its fold (`first`, or the steps' own), decides (which may refuse), appends at the
/// fold's version with what is written beside, and answers. A refusal decided on a guess is
/// decided again on the log's fold (refusals come from the log only); a race lost to another
/// writer forgets the kept fold and decides again on the log's.
pub async fn run<A, S>(
    steps: &S,
    id: A::Id,
    first: Option<(S::Found, bool)>,
) -> Result<S::Done, Error>
where
    A: Aggregate,
    S: Steps<A>,
{
    let _turn = steps.turn(id).await;
    let (mut found, mut guess) = match first {
        Some(first) => first,
        None => steps.find(id, false).await?,
    };
    let mut lost = None;
    let mut attempts = 0;
    while attempts < S::ATTEMPTS {
        let decision = match steps.decide(&found).await {
            Ok(decision) => decision,
            Err(_) if guess => {
                (found, guess) = (steps.find(id, true).await?.0, false);
                continue;
            }
            Err(e) => return Err(e),
        };
        attempts += 1;
        match steps.append(id, &found, decision).await? {
            Appended::Done(done) => return Ok(done),
            Appended::Conflict { actual } => {
                lost = Some((A::version(S::state(&found)), actual));
                steps.forget(id);
                (found, guess) = (steps.find(id, true).await?.0, false);
            }
            Appended::Again => lost = None,
        }
    }
    Err(steps.gave_up(lost))
}

/// The steps of every aggregate's command but a match's: the folds this instance keeps
/// (`kept`, caught up with the log at each command), the command asked of `ask` on the fold
/// (which may refuse) and decided by the aggregate, and one transaction per command, in which
/// the events and `beside`'s writes commit together.
pub struct Logged<'a, A: Aggregate, Q, B> {
    pub core: &'a Core,
    pub kept: &'a Kept<A>,
    pub actor: Option<PlayerId>,
    pub command_id: Uuid,
    pub ask: Q,
    pub beside: B,
}

impl<'a, A, Q, B, C> Steps<A> for Logged<'a, A, Q, B>
where
    A: Aggregate,
    Error: From<A::Error>,
    Q: Fn(&A::State, OffsetDateTime) -> Result<(A::Command, C), Error>,
    B: AsyncFn(&Transaction<'_>, &A::State, &C, OffsetDateTime) -> Result<(), Error>,
{
    type Found = A::State;
    type Decision = (Vec<A::Event>, C, OffsetDateTime);
    type Done = (A::State, C);
    type Turn = Turn<'a, A>;
    const ATTEMPTS: usize = ATTEMPTS;

    async fn turn(&self, id: A::Id) -> Turn<'a, A> {
        Turn {
            kept: self.kept,
            id,
            turn: Some(self.kept.writer(id).await),
        }
    }

    async fn find(&self, id: A::Id, _from_log: bool) -> Result<(A::State, bool), Error> {
        Ok((load(self.core, self.kept, id).await?, false))
    }

    fn state(found: &A::State) -> &A::State {
        found
    }

    async fn decide(&self, state: &A::State) -> Result<Self::Decision, Error> {
        let now = self.core.now();
        let (command, context) = (self.ask)(state, now)?;
        Ok((A::decide(state, &command)?, context, now))
    }

    async fn append(
        &self,
        id: A::Id,
        state: &A::State,
        (events, context, now): Self::Decision,
    ) -> Result<Appended<Self::Done>, Error> {
        let append = StreamAppend {
            stream: A::stream(id),
            expected_version: A::version(state) as i64,
            events: new_events::<A>(&events, self.actor, now),
        };
        let mut client = self.core.pool.get().await.map_err(unexpected)?;
        let tx = client.transaction().await.map_err(unexpected)?;
        let written = match EventLog::append_on(&tx, self.command_id, vec![append]).await {
            Ok(AppendOutcome::Appended(written)) => {
                (self.beside)(&tx, state, &context, now).await?;
                tx.commit().await.map_err(unexpected)?;
                written
            }
            Ok(AppendOutcome::AlreadyApplied(_)) => {
                drop(tx);
                return Ok(Appended::Done((
                    load(self.core, self.kept, id).await?,
                    context,
                )));
            }
            // Another instance wrote first, or the fold is ahead of the log (a commit a
            // failover lost).
            Err(AppendError::Conflict { actual, .. }) => {
                return Ok(Appended::Conflict {
                    actual: actual as u64,
                });
            }
            Err(e) => return Err(unexpected(e)),
        };
        let next = fold::<A>(state.clone(), &written)?;
        self.kept.keep(id, next.clone());
        Ok(Appended::Done((next, context)))
    }

    fn forget(&self, id: A::Id) {
        self.kept.forget(id);
    }

    fn gave_up(&self, _: Option<(u64, u64)>) -> Error {
        Error::Unavailable(format!(
            "the {} changed too often under this command",
            A::KIND
        ))
    }
}

/// A writer's turn on a stream of this instance, ended when dropped.
pub struct Turn<'a, A: Aggregate> {
    kept: &'a Kept<A>,
    id: A::Id,
    turn: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl<A: Aggregate> Drop for Turn<'_, A> {
    fn drop(&mut self) {
        if let Some(turn) = self.turn.take() {
            self.kept.release(self.id, turn);
        }
    }
}

/// Runs a command on the stream of `id`, once per `command_id`, through [`run`] with the
/// [`Logged`] steps: asks `ask` for the command on the fold (it may refuse), decides it, and
/// appends its events with `beside`'s writes in the same transaction.
pub async fn command<A, C>(
    core: &Core,
    kept: &Kept<A>,
    id: A::Id,
    actor: Option<PlayerId>,
    command_id: Uuid,
    ask: impl Fn(&A::State, OffsetDateTime) -> Result<(A::Command, C), Error>,
    beside: impl AsyncFn(&Transaction<'_>, &A::State, &C, OffsetDateTime) -> Result<(), Error>,
) -> Result<(A::State, C), Error>
where
    A: Aggregate,
    Error: From<A::Error>,
{
    let steps = Logged {
        core,
        kept,
        actor,
        command_id,
        ask,
        beside,
    };
    run(&steps, id, None).await
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    /// A stream whose fold is its version; its one command adds an event.
    struct Counter;

    impl Aggregate for Counter {
        type Id = u8;
        type State = u64;
        type Event = ();
        type Command = ();
        type Error = Error;
        const KIND: &'static str = "counter";

        fn event_type(_: &()) -> &'static str {
            "counted"
        }
        fn schema_version(_: &()) -> i16 {
            1
        }
        fn data(_: &()) -> serde_json::Value {
            serde_json::Value::Null
        }
        fn decode(_: &str, _: i16, _: &serde_json::Value) -> Result<(), String> {
            Ok(())
        }
        fn decide(_: &u64, _: &()) -> Result<Vec<()>, Error> {
            Ok(vec![()])
        }
        fn evolve(state: &mut u64, _: OffsetDateTime, _: &()) {
            *state += 1;
        }
        fn version(state: &u64) -> u64 {
            *state
        }
    }

    /// Steps over a log held in memory: the log's version, the fold kept (a guess), the
    /// version a command must be decided at (`expected`), the other writers' appends to come
    /// (one before each of the next appends), and what the runner asked, in order.
    struct Memory {
        log: RefCell<u64>,
        kept: RefCell<Option<u64>>,
        expected: Option<u64>,
        races: RefCell<usize>,
        /// Appends to fail for a passing reason, before the others.
        passing: RefCell<usize>,
        asked: RefCell<Vec<String>>,
    }

    impl Memory {
        fn new(log: u64, kept: Option<u64>, expected: Option<u64>, races: usize) -> Memory {
            Memory {
                log: RefCell::new(log),
                kept: RefCell::new(kept),
                expected,
                races: RefCell::new(races),
                passing: RefCell::new(0),
                asked: RefCell::default(),
            }
        }

        fn asked(&self) -> Vec<String> {
            self.asked.borrow().clone()
        }
    }

    impl Steps<Counter> for Memory {
        type Found = u64;
        type Decision = u64;
        type Done = u64;
        type Turn = ();
        const ATTEMPTS: usize = 3;

        async fn turn(&self, _: u8) {}

        async fn find(&self, _: u8, from_log: bool) -> Result<(u64, bool), Error> {
            let kept = *self.kept.borrow();
            Ok(match kept {
                Some(v) if !from_log => {
                    self.asked.borrow_mut().push(format!("guess {v}"));
                    (v, true)
                }
                _ => {
                    let v = *self.log.borrow();
                    self.asked.borrow_mut().push(format!("log {v}"));
                    (v, false)
                }
            })
        }

        fn state(found: &u64) -> &u64 {
            found
        }

        async fn decide(&self, found: &u64) -> Result<u64, Error> {
            if let Some(expected) = self.expected
                && expected != *found
            {
                self.asked.borrow_mut().push(format!("refused at {found}"));
                return Err(Error::VersionConflict {
                    expected,
                    actual: *found,
                });
            }
            Ok(found + 1)
        }

        async fn append(&self, _: u8, found: &u64, next: u64) -> Result<Appended<u64>, Error> {
            if *self.passing.borrow() > 0 {
                *self.passing.borrow_mut() -= 1;
                self.asked
                    .borrow_mut()
                    .push(format!("not written at {found}"));
                return Ok(Appended::Again);
            }
            if *self.races.borrow() > 0 {
                *self.races.borrow_mut() -= 1;
                *self.log.borrow_mut() += 1;
            }
            let actual = *self.log.borrow();
            if actual != *found {
                self.asked
                    .borrow_mut()
                    .push(format!("lost at {found} to {actual}"));
                return Ok(Appended::Conflict { actual });
            }
            *self.log.borrow_mut() = next;
            *self.kept.borrow_mut() = Some(next);
            self.asked.borrow_mut().push(format!("appended {next}"));
            Ok(Appended::Done(next))
        }

        fn forget(&self, _: u8) {
            self.asked.borrow_mut().push("forgot".into());
            *self.kept.borrow_mut() = None;
        }

        fn gave_up(&self, lost: Option<(u64, u64)>) -> Error {
            match lost {
                Some((expected, actual)) => Error::VersionConflict { expected, actual },
                None => Error::Unavailable("not written".into()),
            }
        }
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(f)
    }

    #[test]
    fn a_refusal_on_a_guess_is_decided_again_on_the_log() {
        let steps = Memory::new(3, Some(1), Some(3), 0);
        assert_eq!(block_on(run(&steps, 7, None)).ok(), Some(4));
        assert_eq!(
            steps.asked(),
            ["guess 1", "refused at 1", "log 3", "appended 4"]
        );
    }

    #[test]
    fn a_refusal_on_the_log_is_the_answer() {
        let steps = Memory::new(3, None, Some(2), 0);
        let refused = block_on(run(&steps, 7, None));
        assert!(matches!(
            refused,
            Err(Error::VersionConflict {
                expected: 2,
                actual: 3
            })
        ));
        assert_eq!(steps.asked(), ["log 3", "refused at 3"]);
    }

    #[test]
    fn a_race_lost_forgets_the_fold_and_decides_again_on_the_log() {
        let steps = Memory::new(2, Some(2), None, 1);
        assert_eq!(block_on(run(&steps, 7, None)).ok(), Some(4));
        assert_eq!(
            steps.asked(),
            ["guess 2", "lost at 2 to 3", "forgot", "log 3", "appended 4"]
        );
    }

    #[test]
    fn a_command_that_keeps_losing_gives_up_after_its_attempts() {
        let steps = Memory::new(0, None, None, 5);
        let given_up = block_on(run(&steps, 7, None));
        assert!(matches!(
            given_up,
            Err(Error::VersionConflict {
                expected: 2,
                actual: 3
            })
        ));
        assert_eq!(
            steps
                .asked()
                .iter()
                .filter(|a| a.starts_with("lost"))
                .count(),
            <Memory as Steps<Counter>>::ATTEMPTS
        );
    }

    #[test]
    fn an_append_not_written_for_a_passing_reason_is_decided_again_on_the_same_fold() {
        let steps = Memory::new(2, Some(2), None, 0);
        *steps.passing.borrow_mut() = 1;
        assert_eq!(block_on(run(&steps, 7, None)).ok(), Some(3));
        assert_eq!(steps.asked(), ["guess 2", "not written at 2", "appended 3"]);
        *steps.passing.borrow_mut() = 5;
        let given_up = block_on(run(&steps, 7, None));
        assert!(matches!(given_up, Err(Error::Unavailable(_))));
    }
}
