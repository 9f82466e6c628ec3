//! Typed ids and seats: parsed at the edge, opaque inside.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// An id string that is not a UUID, or a seat that is not 1 or 2.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("`{0}` is not a valid id (a UUID is expected)")]
    NotUuid(String),
    #[error("`{0}` is not a seat (1 or 2)")]
    NotSeat(String),
}

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[serde(transparent)]
        pub struct $name(Uuid);

        impl $name {
            pub const fn from_uuid(id: Uuid) -> Self {
                $name(id)
            }

            pub fn as_uuid(&self) -> Uuid {
                self.0
            }
        }

        impl FromStr for $name {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, IdError> {
                Uuid::parse_str(s).map($name).map_err(|_| IdError::NotUuid(s.to_owned()))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

uuid_id!(
    /// A player: the `sub` of their token.
    PlayerId
);
uuid_id!(
    /// A match; its events live in the stream `match-<id>`.
    MatchId
);

impl MatchId {
    /// The match a command creates, derived from the command's id: a retried command names
    /// the same match.
    pub fn of_command(command_id: Uuid) -> MatchId {
        MatchId(Uuid::new_v5(&command_id, b"match"))
    }

    /// The prefix of every match stream's id.
    pub const STREAM_PREFIX: &'static str = "match-";

    /// The event-log stream of this match.
    pub fn stream(&self) -> String {
        format!("{}{}", Self::STREAM_PREFIX, self.0)
    }

    /// The match whose stream `stream` is, if it is a match stream.
    pub fn of_stream(stream: &str) -> Option<MatchId> {
        stream
            .strip_prefix(Self::STREAM_PREFIX)
            .and_then(|s| Uuid::parse_str(s).ok())
            .map(MatchId)
    }
}

uuid_id!(
    /// A queue ticket; its events live in the stream `ticket-<id>`.
    TicketId
);

uuid_id!(
    /// A background analysis job (`/v1/analysis/jobs`).
    JobId
);

uuid_id!(
    /// A tournament; its events live in the stream `tournament-<id>`.
    TournamentId
);

impl TournamentId {
    /// The prefix of every tournament stream's id.
    pub const STREAM_PREFIX: &'static str = "tournament-";

    /// The event-log stream of this tournament.
    pub fn stream(&self) -> String {
        format!("{}{}", Self::STREAM_PREFIX, self.0)
    }

    /// The tournament whose stream `stream` is, if it is a tournament stream.
    pub fn of_stream(stream: &str) -> Option<TournamentId> {
        stream
            .strip_prefix(Self::STREAM_PREFIX)
            .and_then(|s| Uuid::parse_str(s).ok())
            .map(TournamentId)
    }
}

uuid_id!(
    /// A challenge from one player to another; its events live in the stream `challenge-<id>`.
    ChallengeId
);

impl ChallengeId {
    /// The challenge a command sends, derived from the command's id: a retried command names
    /// the same challenge.
    pub fn of_command(command_id: Uuid) -> ChallengeId {
        ChallengeId(Uuid::new_v5(&command_id, b"challenge"))
    }
}

impl TicketId {
    /// The event-log stream of this ticket.
    pub fn stream(&self) -> String {
        format!("ticket-{}", self.0)
    }
}

/// One of the two seats of a match. Seat 1 is the first seat (not necessarily the first to move).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct Seat(u8);

impl Seat {
    pub const ONE: Seat = Seat(1);
    pub const TWO: Seat = Seat(2);
    pub const BOTH: [Seat; 2] = [Seat::ONE, Seat::TWO];

    pub fn number(self) -> u8 {
        self.0
    }

    pub fn other(self) -> Seat {
        if self.0 == 1 { Seat::TWO } else { Seat::ONE }
    }

    /// 0 for seat 1, 1 for seat 2: an index into per-seat arrays.
    pub fn index(self) -> usize {
        usize::from(self.0 - 1)
    }
}

impl TryFrom<u8> for Seat {
    type Error = IdError;
    fn try_from(n: u8) -> Result<Self, IdError> {
        match n {
            1 | 2 => Ok(Seat(n)),
            _ => Err(IdError::NotSeat(n.to_string())),
        }
    }
}

impl From<Seat> for u8 {
    fn from(s: Seat) -> u8 {
        s.0
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Seat {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Seat".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "enum": [1, 2]})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_are_one_or_two_only() {
        assert_eq!(Seat::try_from(1), Ok(Seat::ONE));
        assert_eq!(Seat::try_from(2), Ok(Seat::TWO));
        assert!(Seat::try_from(0).is_err());
        assert!(Seat::try_from(3).is_err());
        assert!(serde_json::from_str::<Seat>("3").is_err());
        assert_eq!(serde_json::to_string(&Seat::TWO).ok().as_deref(), Some("2"));
    }

    #[test]
    fn ids_reject_anything_but_uuids() {
        assert!("not-a-uuid".parse::<MatchId>().is_err());
        let id: MatchId = "0192d7a0-0000-7000-8000-000000000001"
            .parse()
            .expect("valid uuid");
        assert_eq!(id.stream(), "match-0192d7a0-0000-7000-8000-000000000001");
    }
}
