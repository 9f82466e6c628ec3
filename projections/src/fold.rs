//! Stored events read and folded as the domain's aggregates define them (`domain::aggregate`):
//! every projection reads an aggregate's events through [`decode`] and folds them through
//! [`fold`], so a payload version is upcast in one place, and an event this build cannot read
//! stops the batch with its position.

use domain::aggregate::Aggregate;
use eventlog::RecordedEvent;

use crate::Error;

/// A stored event of `A`'s streams, as the domain reads it.
pub fn decode<A: Aggregate>(e: &RecordedEvent) -> Result<A::Event, Error> {
    A::decode(&e.event_type, e.schema_version, &e.data).map_err(|reason| Error::Event {
        position: e.position,
        reason,
    })
}

/// `state` with `events` (one stream's, after its version, in order) applied.
pub fn fold<A: Aggregate>(
    mut state: A::State,
    events: &[&RecordedEvent],
) -> Result<A::State, Error> {
    for e in events {
        A::evolve(&mut state, e.recorded_at, &decode::<A>(e)?);
    }
    Ok(state)
}
