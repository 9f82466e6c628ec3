//! Queue tickets: a ticket is a stream of its own (`ticket-<id>`): opened, then either
//! cancelled by its owner or matched by a wave. The events and the pure decide/evolve of that
//! small life.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::aggregate::Aggregate;
use crate::games::GameId;
use crate::ids::{MatchId, PlayerId};
use crate::matches::{DaysPerMove, TurnSeconds};
use crate::ratings::Ladder;

/// A matchmaking pool: one game at one clock, a turn limit (or none) for real-time play, or
/// days per move for a correspondence pool (then `turn_seconds` is `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Pool {
    pub game: GameId,
    pub turn_seconds: Option<TurnSeconds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days_per_move: Option<DaysPerMove>,
}

impl Pool {
    /// A real-time pool.
    pub fn live(game: GameId, turn_seconds: Option<TurnSeconds>) -> Pool {
        Pool {
            game,
            turn_seconds,
            days_per_move: None,
        }
    }

    /// The ladder its matches are rated on.
    pub fn ladder(&self) -> Ladder {
        Ladder {
            game: self.game,
            correspondence: self.days_per_move.is_some(),
        }
    }
}

impl std::fmt::Display for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.turn_seconds, self.days_per_move) {
            (_, Some(d)) => write!(f, "{}/{}d", self.game, d.get()),
            (Some(s), None) => write!(f, "{}/{}", self.game, s.get()),
            (None, None) => write!(f, "{}/none", self.game),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TicketOpened {
    pub player_id: PlayerId,
    pub game: GameId,
    pub turn_seconds: Option<TurnSeconds>,
    /// A correspondence pool's days per move; absent for real-time play.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days_per_move: Option<DaysPerMove>,
    /// The player's rating and deviation on the pool's ladder when the ticket opened.
    pub rating: f64,
    pub deviation: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TicketMatched {
    pub match_id: MatchId,
    pub opponent: PlayerId,
    /// The rating gap of the pair and how long this ticket waited, as the wave saw them.
    pub rating_gap: f64,
    pub waited_ms: u64,
    /// Whether the opponent was this player's previous ranked opponent.
    pub repeat: bool,
}

/// Every event of a ticket stream. On the wire: `{"type": "<snake_case>", "data": {...}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum TicketEvent {
    TicketOpened(TicketOpened),
    TicketCancelled {},
    TicketMatched(TicketMatched),
}

impl TicketEvent {
    pub const TYPES: [&'static str; 3] = ["ticket_opened", "ticket_cancelled", "ticket_matched"];
    pub const SCHEMA_VERSION: i16 = 1;

    pub fn event_type(&self) -> &'static str {
        match self {
            TicketEvent::TicketOpened(_) => "ticket_opened",
            TicketEvent::TicketCancelled {} => "ticket_cancelled",
            TicketEvent::TicketMatched(_) => "ticket_matched",
        }
    }

    /// The payload (`data`) as JSON.
    pub fn data(&self) -> serde_json::Value {
        match self {
            TicketEvent::TicketOpened(e) => serde_json::to_value(e),
            TicketEvent::TicketCancelled {} => Ok(serde_json::json!({})),
            TicketEvent::TicketMatched(e) => serde_json::to_value(e),
        }
        .unwrap_or(serde_json::Value::Null)
    }

    /// Reads a stored ticket event (the place where old payload versions would be upcast).
    pub fn decode(
        event_type: &str,
        version: i16,
        data: &serde_json::Value,
    ) -> Result<TicketEvent, String> {
        if version != Self::SCHEMA_VERSION {
            return Err(format!(
                "event `{event_type}` has schema version {version}, which this build does not know"
            ));
        }
        let bad = |e: serde_json::Error| format!("event `{event_type}` is malformed: {e}");
        match event_type {
            "ticket_opened" => TicketOpened::deserialize(data)
                .map(TicketEvent::TicketOpened)
                .map_err(bad),
            "ticket_cancelled" => Ok(TicketEvent::TicketCancelled {}),
            "ticket_matched" => TicketMatched::deserialize(data)
                .map(TicketEvent::TicketMatched)
                .map_err(bad),
            other => Err(format!("unknown ticket event type `{other}`")),
        }
    }
}

/// Where a ticket stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", schemars(rename = "TicketStatus"))]
pub enum Status {
    Waiting,
    Matched,
    Cancelled,
}

/// A ticket folded from its events.
#[derive(Clone, Debug, PartialEq)]
pub struct Ticket {
    pub opened: TicketOpened,
    pub opened_at: OffsetDateTime,
    pub status: Status,
    pub match_id: Option<MatchId>,
    /// The stream version.
    pub version: u64,
}

/// What can be asked of a ticket.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Its player opens it.
    Open(TicketOpened),
    /// Its owner cancels it.
    Cancel,
    /// A wave matches it.
    Match(TicketMatched),
}

/// Why a ticket command is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TicketError {
    #[error("the ticket is already matched or cancelled")]
    Closed,
    #[error("the ticket does not exist")]
    Missing,
    #[error("the ticket is open already")]
    Opened,
}

impl Ticket {
    /// The owner cancels: only a waiting ticket.
    pub fn cancel(&self) -> Result<TicketEvent, TicketError> {
        match self.status {
            Status::Waiting => Ok(TicketEvent::TicketCancelled {}),
            _ => Err(TicketError::Closed),
        }
    }

    /// A wave matches it: only a waiting ticket.
    pub fn matched(&self, event: TicketMatched) -> Result<TicketEvent, TicketError> {
        match self.status {
            Status::Waiting => Ok(TicketEvent::TicketMatched(event)),
            _ => Err(TicketError::Closed),
        }
    }

    pub fn pool(&self) -> Pool {
        Pool {
            game: self.opened.game,
            turn_seconds: self.opened.turn_seconds,
            days_per_move: self.opened.days_per_move,
        }
    }
}

/// A ticket's stream, `ticket-<id>`: `None` until it is opened.
impl Aggregate for Ticket {
    type Id = crate::ids::TicketId;
    type State = Option<Ticket>;
    type Event = TicketEvent;
    type Command = Command;
    type Error = TicketError;

    const KIND: &'static str = "ticket";

    fn event_type(event: &TicketEvent) -> &'static str {
        event.event_type()
    }

    fn schema_version(_: &TicketEvent) -> i16 {
        TicketEvent::SCHEMA_VERSION
    }

    fn data(event: &TicketEvent) -> serde_json::Value {
        event.data()
    }

    fn decode(
        event_type: &str,
        schema_version: i16,
        data: &serde_json::Value,
    ) -> Result<TicketEvent, String> {
        TicketEvent::decode(event_type, schema_version, data)
    }

    fn decide(state: &Option<Ticket>, command: &Command) -> Result<Vec<TicketEvent>, TicketError> {
        match (command, state) {
            (Command::Open(opened), None) => Ok(TicketEvent::TicketOpened(opened.clone())),
            (Command::Open(_), Some(_)) => Err(TicketError::Opened),
            (_, None) => Err(TicketError::Missing),
            (Command::Cancel, Some(ticket)) => ticket.cancel(),
            (Command::Match(event), Some(ticket)) => ticket.matched(event.clone()),
        }
        .map(|e| vec![e])
    }

    fn evolve(state: &mut Option<Ticket>, at: OffsetDateTime, event: &TicketEvent) {
        match (event, state.as_mut()) {
            (TicketEvent::TicketOpened(o), None) => {
                *state = Some(Ticket {
                    opened: o.clone(),
                    opened_at: at,
                    status: Status::Waiting,
                    match_id: None,
                    version: 1,
                });
            }
            (TicketEvent::TicketCancelled {}, Some(t)) => {
                t.status = Status::Cancelled;
                t.version += 1;
            }
            (TicketEvent::TicketMatched(m), Some(t)) => {
                t.status = Status::Matched;
                t.match_id = Some(m.match_id);
                t.version += 1;
            }
            // Not a sequence decide() writes; counted so versions stay aligned.
            (_, Some(t)) => t.version += 1,
            (_, None) => {}
        }
    }

    fn version(state: &Option<Ticket>) -> u64 {
        state.as_ref().map_or(0, |t| t.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::fold;
    use uuid::Uuid;

    fn opened() -> TicketEvent {
        TicketEvent::TicketOpened(TicketOpened {
            player_id: PlayerId::from_uuid(Uuid::from_u128(7)),
            game: GameId::Reversi,
            turn_seconds: None,
            days_per_move: None,
            rating: 1500.0,
            deviation: 350.0,
        })
    }

    #[test]
    fn a_real_time_ticket_reads_as_before_and_a_correspondence_one_names_its_days() {
        let TicketEvent::TicketOpened(live) = opened() else {
            unreachable!("opened() opens");
        };
        let data = serde_json::to_value(&live).expect("serializes");
        assert!(data.get("days_per_move").is_none(), "{data}");
        let mut old = data.clone();
        old.as_object_mut()
            .expect("an object")
            .remove("days_per_move");
        let back: TicketOpened = serde_json::from_value(old).expect("an old payload reads");
        assert_eq!(back, live);
        let slow = TicketOpened {
            days_per_move: DaysPerMove::try_from(3).ok(),
            ..live
        };
        let pool = Ticket {
            opened: slow,
            opened_at: OffsetDateTime::UNIX_EPOCH,
            status: Status::Waiting,
            match_id: None,
            version: 1,
        }
        .pool();
        assert_eq!(pool.to_string(), "reversi/3d");
        assert_eq!(pool.ladder(), Ladder::correspondence(GameId::Reversi));
        assert_eq!(
            Pool::live(GameId::Reversi, None).ladder(),
            Ladder::live(GameId::Reversi)
        );
    }

    fn matched() -> TicketMatched {
        TicketMatched {
            match_id: MatchId::from_uuid(Uuid::from_u128(9)),
            opponent: PlayerId::from_uuid(Uuid::from_u128(8)),
            rating_gap: 12.5,
            waited_ms: 3000,
            repeat: false,
        }
    }

    fn at() -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH
    }

    #[test]
    fn a_ticket_is_opened_once() {
        let TicketEvent::TicketOpened(o) = opened() else {
            unreachable!("opened() opens");
        };
        let open = Command::Open(o);
        assert_eq!(Ticket::decide(&None, &open), Ok(vec![opened()]));
        let t = fold::<Ticket>(None, [(at(), &opened())]);
        assert_eq!(Ticket::decide(&t, &open), Err(TicketError::Opened));
    }

    #[test]
    fn a_waiting_ticket_can_be_cancelled_or_matched_once() {
        let o = opened();
        let t = fold::<Ticket>(None, [(at(), &o)]).expect("opened");
        assert_eq!((t.status, t.version), (Status::Waiting, 1));
        let cancel = t.cancel().expect("waiting");
        let c = fold::<Ticket>(None, [(at(), &o), (at(), &cancel)]).expect("opened");
        assert_eq!((c.status, c.version), (Status::Cancelled, 2));
        assert_eq!(c.cancel(), Err(TicketError::Closed));
        assert_eq!(c.matched(matched()), Err(TicketError::Closed));
        let m = t.matched(matched()).expect("waiting");
        let done = fold::<Ticket>(None, [(at(), &o), (at(), &m)]).expect("opened");
        assert_eq!(done.status, Status::Matched);
        assert_eq!(done.match_id, Some(matched().match_id));
        assert_eq!(done.cancel(), Err(TicketError::Closed));
        assert_eq!(
            Ticket::decide(&None, &Command::Cancel),
            Err(TicketError::Missing)
        );
        assert_eq!(
            Ticket::decide(&Some(t), &Command::Cancel),
            Ok(vec![TicketEvent::TicketCancelled {}])
        );
    }

    #[test]
    fn events_round_trip_through_their_stored_form() {
        for e in [
            opened(),
            TicketEvent::TicketCancelled {},
            TicketEvent::TicketMatched(matched()),
        ] {
            let back = TicketEvent::decode(e.event_type(), 1, &e.data()).expect("decodes");
            assert_eq!(back, e);
        }
        assert!(TicketEvent::decode("ticket_opened", 2, &opened().data()).is_err());
        assert!(TicketEvent::decode("ticket_exploded", 1, &serde_json::json!({})).is_err());
    }
}
