//! What every aggregate of discs is: a stream of its own (`<kind>-<id>`), past-tense events
//! that carry their type name and payload version (older versions upcast where they are read),
//! `decide` (a command against the fold: the events it causes, or why not) and `evolve` (an
//! event applied, nothing checked). Matches, tickets, a player's standing and tournaments
//! implement it; the service's runner loads, caches and commands any of them, and the
//! projections fold through the same trait.

use time::OffsetDateTime;

/// A stream's fold and the events that build it.
pub trait Aggregate {
    /// What names one stream of the kind.
    type Id: Copy + Eq + std::hash::Hash + std::fmt::Display;
    /// The fold of a stream: `Default` before its first event.
    type State: Default + Clone;
    type Event;
    /// A command, with the time it is decided at.
    type Command;
    type Error;

    /// The first segment of its streams' names (`tournament` in `tournament-<id>`).
    const KIND: &'static str;

    /// The stream of `id`: `<KIND>-<id>`.
    fn stream(id: Self::Id) -> String {
        format!("{}-{id}", Self::KIND)
    }
    /// The event's type name in the log.
    fn event_type(event: &Self::Event) -> &'static str;
    /// The payload version this build writes of the event.
    fn schema_version(event: &Self::Event) -> i16;
    /// The event's payload (`data`) as JSON.
    fn data(event: &Self::Event) -> serde_json::Value;
    /// Reads a stored event: the one place where its older payload versions are upcast.
    fn decode(
        event_type: &str,
        schema_version: i16,
        data: &serde_json::Value,
    ) -> Result<Self::Event, String>;

    /// The events `command` causes on `state`, or why it is refused.
    fn decide(
        state: &Self::State,
        command: &Self::Command,
    ) -> Result<Vec<Self::Event>, Self::Error>;
    /// `state` with `event`, recorded at `at`, applied.
    fn evolve(state: &mut Self::State, at: OffsetDateTime, event: &Self::Event);
    /// The stream version `state` was folded to.
    fn version(state: &Self::State) -> u64;
}

/// A command and the time it is decided at, for aggregates whose commands do not carry one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct At<C> {
    pub at: OffsetDateTime,
    pub command: C,
}

/// `state` with `events` (each with the time it was recorded) applied in order.
pub fn fold<'a, A: Aggregate>(
    mut state: A::State,
    events: impl IntoIterator<Item = (OffsetDateTime, &'a A::Event)>,
) -> A::State
where
    A::Event: 'a,
{
    for (at, event) in events {
        A::evolve(&mut state, at, event);
    }
    state
}

/// The events a command caused and the fold they lead to.
pub type Decided<A> = (Vec<<A as Aggregate>::Event>, <A as Aggregate>::State);

/// `state` after `command`, decided at `at`: the events and the state they lead to.
pub fn decided<A: Aggregate>(
    state: &A::State,
    command: &A::Command,
    at: OffsetDateTime,
) -> Result<Decided<A>, A::Error> {
    let events = A::decide(state, command)?;
    let next = fold::<A>(state.clone(), events.iter().map(|e| (at, e)));
    Ok((events, next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{MatchId, PlayerId, TicketId, TournamentId};
    use crate::matches::MatchState;
    use crate::standing::{Decision, Standing, StandingEvent};
    use crate::tickets::Ticket;
    use crate::tournaments::Tournament;
    use uuid::Uuid;

    #[test]
    fn each_aggregate_names_its_streams_as_its_ids_do() {
        let u = Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        assert_eq!(
            MatchState::stream(MatchId::from_uuid(u)),
            MatchId::from_uuid(u).stream()
        );
        assert_eq!(
            Tournament::stream(TournamentId::from_uuid(u)),
            TournamentId::from_uuid(u).stream()
        );
        assert_eq!(
            Ticket::stream(TicketId::from_uuid(u)),
            TicketId::from_uuid(u).stream()
        );
        assert_eq!(
            Standing::stream(PlayerId::from_uuid(u)),
            format!("player-{u}")
        );
    }

    #[test]
    fn decided_gives_the_events_and_the_fold_they_lead_to() {
        let command = crate::standing::Command {
            admin: PlayerId::from_uuid(Uuid::from_u128(1)),
            decision: Decision::Banned,
            reason: " relayed an engine ".into(),
        };
        let (events, after) =
            decided::<Standing>(&Standing::default(), &command, OffsetDateTime::UNIX_EPOCH)
                .expect("a ban with a reason");
        assert!(matches!(events[..], [StandingEvent::PlayerBanned(_)]));
        assert!(after.banned());
        assert_eq!(Standing::version(&after), 1);
        let stored = Standing::decode(
            Standing::event_type(&events[0]),
            Standing::schema_version(&events[0]),
            &Standing::data(&events[0]),
        )
        .expect("reads back");
        assert_eq!(stored, events[0]);
        assert!(Standing::decode("player_renamed", 1, &Standing::data(&events[0])).is_err());
        assert!(Standing::decode("player_banned", 2, &Standing::data(&events[0])).is_err());
        let refused = crate::standing::Command {
            reason: "  ".into(),
            ..command
        };
        assert!(Standing::decide(&after, &refused).is_err());
    }
}
