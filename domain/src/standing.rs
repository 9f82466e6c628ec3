//! A player's standing: an admin's decisions on them, each an event of the player's own stream
//! (`player-<id>`): cleared (the evidence was looked at and is not a case), or banned with a
//! reason (no ranked queue, no room to join, until cleared); and, apart from fair play, declared a
//! bot (an engine playing openly: tagged BOT, kept out of the human pools and tournaments) or a
//! human again. The pure decide/evolve of that small life; the clock and the admin come in with
//! the command.

use serde::{Deserialize, Serialize};

use time::OffsetDateTime;

use crate::aggregate::Aggregate;
use crate::ids::PlayerId;

/// The tag shown before a declared bot's name, wherever the name is shown; no player may take
/// a name that starts with it and a space.
pub const BOT_TAG: &str = "BOT";

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
    /// Declared a bot: an engine playing openly, through challenges, rooms and solo matches,
    /// never in the human ranked pools or tournaments; its name is shown with a BOT tag.
    Bot,
    /// No longer a declared bot.
    Human,
}

/// The payload of every standing event.
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
    PlayerDeclaredBot(Decided),
    PlayerDeclaredHuman(Decided),
}

impl StandingEvent {
    pub const TYPES: [&'static str; 4] = [
        "player_cleared",
        "player_banned",
        "player_declared_bot",
        "player_declared_human",
    ];
    /// The events that change whether a player is a declared bot.
    pub const BOT_TYPES: [&'static str; 2] = ["player_declared_bot", "player_declared_human"];
    pub const SCHEMA_VERSION: i16 = 1;

    pub fn event_type(&self) -> &'static str {
        match self {
            StandingEvent::PlayerCleared(_) => "player_cleared",
            StandingEvent::PlayerBanned(_) => "player_banned",
            StandingEvent::PlayerDeclaredBot(_) => "player_declared_bot",
            StandingEvent::PlayerDeclaredHuman(_) => "player_declared_human",
        }
    }

    /// The payload (`data`) as JSON.
    pub fn data(&self) -> serde_json::Value {
        match self {
            StandingEvent::PlayerCleared(d)
            | StandingEvent::PlayerBanned(d)
            | StandingEvent::PlayerDeclaredBot(d)
            | StandingEvent::PlayerDeclaredHuman(d) => {
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
            "player_declared_bot" => Some(StandingEvent::PlayerDeclaredBot(decided)),
            "player_declared_human" => Some(StandingEvent::PlayerDeclaredHuman(decided)),
            _ => None,
        }
    }

    pub fn decision(&self) -> Decision {
        match self {
            StandingEvent::PlayerCleared(_) => Decision::Cleared,
            StandingEvent::PlayerBanned(_) => Decision::Banned,
            StandingEvent::PlayerDeclaredBot(_) => Decision::Bot,
            StandingEvent::PlayerDeclaredHuman(_) => Decision::Human,
        }
    }
}

/// A player's standing: the last decision, if any, whether it left them banned, and whether
/// they are a declared bot (the two are apart: declaring a bot neither bans nor clears).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Standing {
    pub last: Option<StandingEvent>,
    banned: bool,
    bot: bool,
    /// Events in the stream (its version).
    pub version: i64,
}

impl Standing {
    pub fn banned(&self) -> bool {
        self.banned
    }

    /// A declared bot: no human pool or tournament, a BOT tag by its name.
    pub fn bot(&self) -> bool {
        self.bot
    }

    /// The player whose stream (`player-<id>`) `stream` is.
    pub fn player_of(stream: &str) -> Option<PlayerId> {
        let id = stream
            .strip_prefix(<Standing as Aggregate>::KIND)?
            .strip_prefix('-')?;
        id.parse::<uuid::Uuid>().ok().map(PlayerId::from_uuid)
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
        Decision::Bot => Ok(StandingEvent::PlayerDeclaredBot(decided)),
        Decision::Human => Ok(StandingEvent::PlayerDeclaredHuman(decided)),
    }
}

/// Folds one event into the standing.
pub fn evolve(standing: &mut Standing, event: StandingEvent) {
    standing.version += 1;
    match event {
        StandingEvent::PlayerCleared(_) => standing.banned = false,
        StandingEvent::PlayerBanned(_) => standing.banned = true,
        StandingEvent::PlayerDeclaredBot(_) => standing.bot = true,
        StandingEvent::PlayerDeclaredHuman(_) => standing.bot = false,
    }
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

    #[test]
    fn a_bot_declaration_neither_bans_nor_clears() {
        let mut standing = Standing::default();
        for (decision, reason) in [(Decision::Banned, "relayed an engine"), (Decision::Bot, "")] {
            let e = decide(ADMIN, decision, reason).expect("decided");
            let back = StandingEvent::from_stored(e.event_type(), &e.data()).expect("read back");
            assert_eq!(back.decision(), decision);
            evolve(&mut standing, back);
        }
        assert!(standing.banned() && standing.bot());
        evolve(
            &mut standing,
            decide(ADMIN, Decision::Cleared, "").expect("cleared"),
        );
        assert!(!standing.banned() && standing.bot());
        evolve(
            &mut standing,
            decide(ADMIN, Decision::Human, "").expect("human"),
        );
        assert!(!standing.banned() && !standing.bot());
        assert_eq!(StandingEvent::TYPES.len(), 4);
        let stream = <Standing as Aggregate>::stream(ADMIN);
        assert_eq!(Standing::player_of(&stream), Some(ADMIN));
        assert_eq!(Standing::player_of("tournament-x"), None);
        assert!(
            StandingEvent::BOT_TYPES
                .iter()
                .all(|t| StandingEvent::TYPES.contains(t))
        );
    }
}
