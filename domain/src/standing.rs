//! A player's standing in fair play: an admin's decisions on them, each an event of the player's
//! own stream (`player-<id>`): cleared (the evidence was looked at and is not a case), or banned
//! with a reason (no ranked queue, no room to join, until cleared). The pure decide/evolve of
//! that small life; the clock and the admin come in with the command.

use serde::{Deserialize, Serialize};

use time::OffsetDateTime;

use crate::aggregate::Aggregate;
use crate::ids::PlayerId;

/// The most characters a decision's reason may have.
pub const MAX_REASON: usize = 500;

/// An admin's decision on a player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Looked at and not a case: a ban, if any, is lifted.
    Cleared,
    /// Kept out of ranked play, tournaments, solo matches and rooms until cleared.
    Banned,
}

/// The payload of `player_cleared` and `player_banned`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decided {
    /// The admin who decided.
    pub admin: PlayerId,
    /// Why, in the admin's words (required for a ban).
    pub reason: String,
}

/// Every event of a player's stream. On the wire: `{"type": "<snake_case>", "data": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum StandingEvent {
    PlayerCleared(Decided),
    PlayerBanned(Decided),
}

impl StandingEvent {
    pub const TYPES: [&'static str; 2] = ["player_cleared", "player_banned"];
    pub const SCHEMA_VERSION: i16 = 1;

    pub fn event_type(&self) -> &'static str {
        match self {
            StandingEvent::PlayerCleared(_) => "player_cleared",
            StandingEvent::PlayerBanned(_) => "player_banned",
        }
    }

    /// The payload (`data`) as JSON.
    pub fn data(&self) -> serde_json::Value {
        match self {
            StandingEvent::PlayerCleared(d) | StandingEvent::PlayerBanned(d) => {
                serde_json::to_value(d).unwrap_or(serde_json::Value::Null)
            }
        }
    }

    /// Reads a stored event of a player's stream; `None` for a type it does not know.
    pub fn from_stored(event_type: &str, data: &serde_json::Value) -> Option<StandingEvent> {
        let decided: Decided = serde_json::from_value(data.clone()).ok()?;
        match event_type {
            "player_cleared" => Some(StandingEvent::PlayerCleared(decided)),
            "player_banned" => Some(StandingEvent::PlayerBanned(decided)),
            _ => None,
        }
    }

    pub fn decision(&self) -> Decision {
        match self {
            StandingEvent::PlayerCleared(_) => Decision::Cleared,
            StandingEvent::PlayerBanned(_) => Decision::Banned,
        }
    }
}

/// A player's standing: the last decision, if any.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Standing {
    pub last: Option<StandingEvent>,
    /// Events in the stream (its version).
    pub version: i64,
}

impl Standing {
    pub fn banned(&self) -> bool {
        matches!(self.last, Some(StandingEvent::PlayerBanned(_)))
    }
}

/// Why a decision cannot be recorded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StandingError {
    #[error("a ban needs a reason")]
    ReasonRequired,
    #[error("a reason has at most {MAX_REASON} characters")]
    ReasonTooLong,
}

/// Decides an admin's decision: a ban needs a reason; any reason is at most [`MAX_REASON`]
/// characters, trimmed.
pub fn decide(
    admin: PlayerId,
    decision: Decision,
    reason: &str,
) -> Result<StandingEvent, StandingError> {
    let reason = reason.trim();
    if reason.chars().count() > MAX_REASON {
        return Err(StandingError::ReasonTooLong);
    }
    let decided = Decided {
        admin,
        reason: reason.to_owned(),
    };
    match decision {
        Decision::Banned if reason.is_empty() => Err(StandingError::ReasonRequired),
        Decision::Banned => Ok(StandingEvent::PlayerBanned(decided)),
        Decision::Cleared => Ok(StandingEvent::PlayerCleared(decided)),
    }
}

/// Folds one event into the standing.
pub fn evolve(standing: &mut Standing, event: StandingEvent) {
    standing.version += 1;
    standing.last = Some(event);
}

/// An admin's decision on a player, as asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    pub admin: PlayerId,
    pub decision: Decision,
    pub reason: String,
}

/// A player's stream, `player-<id>`: their standing, empty before any decision.
impl Aggregate for Standing {
    type Id = PlayerId;
    type State = Standing;
    type Event = StandingEvent;
    type Command = Command;
    type Error = StandingError;

    const KIND: &'static str = "player";

    fn event_type(event: &StandingEvent) -> &'static str {
        event.event_type()
    }

    fn schema_version(_: &StandingEvent) -> i16 {
        StandingEvent::SCHEMA_VERSION
    }

    fn data(event: &StandingEvent) -> serde_json::Value {
        event.data()
    }

    fn decode(
        event_type: &str,
        schema_version: i16,
        data: &serde_json::Value,
    ) -> Result<StandingEvent, String> {
        if schema_version != StandingEvent::SCHEMA_VERSION {
            return Err(format!(
                "event `{event_type}` has schema version {schema_version}, which this build does not know"
            ));
        }
        StandingEvent::from_stored(event_type, data)
            .ok_or_else(|| format!("`{event_type}` is not a standing event this build reads"))
    }

    fn decide(_: &Standing, command: &Command) -> Result<Vec<StandingEvent>, StandingError> {
        decide(command.admin, command.decision, &command.reason).map(|e| vec![e])
    }

    fn evolve(state: &mut Standing, _: OffsetDateTime, event: &StandingEvent) {
        evolve(state, event.clone());
    }

    fn version(state: &Standing) -> u64 {
        u64::try_from(state.version).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADMIN: PlayerId = PlayerId::from_uuid(uuid::Uuid::from_u128(1));

    #[test]
    fn a_ban_needs_a_reason_and_a_clearing_lifts_it() {
        assert_eq!(
            decide(ADMIN, Decision::Banned, "  "),
            Err(StandingError::ReasonRequired)
        );
        assert_eq!(
            decide(ADMIN, Decision::Cleared, &"x".repeat(MAX_REASON + 1)),
            Err(StandingError::ReasonTooLong)
        );
        let mut standing = Standing::default();
        assert!(!standing.banned());
        let ban = decide(ADMIN, Decision::Banned, " relayed an engine ").expect("a ban");
        assert_eq!(ban.event_type(), "player_banned");
        let back = StandingEvent::from_stored(ban.event_type(), &ban.data()).expect("read back");
        assert_eq!(back, ban);
        evolve(&mut standing, back);
        assert!(standing.banned());
        let clear = decide(ADMIN, Decision::Cleared, "").expect("cleared");
        evolve(&mut standing, clear);
        assert!(!standing.banned());
        assert_eq!(standing.version, 2);
        assert!(StandingEvent::from_stored("player_renamed", &ban.data()).is_none());
    }
}
