//! The events of a match stream: their payloads, wire names and schema versions.
//!
//! Events carry the facts (who moved, who won and why), so that projections never re-run the
//! rules. Every payload has a schema version; [`MatchEvent::decode`] is the one place where an old
//! version is upcast to the current shape: `match_created` is at version 2, which added `board`,
//! and a version 1 payload is lifted by [`upcast_match_created_v1`] each time it is read (the log
//! keeps it as written).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::settings::Settings;
use crate::games::{Board, EndReason, GameId};
use crate::ids::{PlayerId, Seat, TournamentId};

/// Who sits in a seat when the match is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Occupant {
    Human { player_id: PlayerId },
    Cpu { level: u8 },
}

impl Occupant {
    /// The player in the seat, if a human.
    pub fn player_id(self) -> Option<PlayerId> {
        match self {
            Occupant::Human { player_id } => Some(player_id),
            Occupant::Cpu { .. } => None,
        }
    }
}

/// Why the seat that moves first was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum FirstMoveRule {
    /// The room's `first` setting, or the solo player's `first` choice.
    Setting,
    /// A rematch with `alternate_first`: the other seat than in the previous match.
    Alternated,
    /// Ranked: the seat whose player started fewer of their last ranked games.
    FewerStarts,
    /// A recorded coin flip (`first: random`, or a ranked tie): `heads` means seat 1 starts.
    CoinFlip { heads: bool },
    /// A tournament's pairing: the organiser named who starts (seat 1).
    Pairing,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchCreated {
    pub game: GameId,
    /// Seat 1 then seat 2.
    pub seats: [Occupant; 2],
    pub settings: Settings,
    /// The seat that moves first, playing red / black.
    pub first_seat: Seat,
    pub first_rule: FirstMoveRule,
    pub ranked: bool,
    pub room_id: Option<Uuid>,
    /// The tournament this match is a game of (absent from every payload without one, so the
    /// payloads written before it are unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament_id: Option<TournamentId>,
    /// Seed of every CPU choice in this match, so replays are exact.
    pub cpu_seed: u64,
    /// The board's size (since schema version 2; version 1 payloads get it from `game` when
    /// read, see [`upcast_match_created_v1`]).
    pub board: Board,
}

/// Lifts a version 1 `match_created` payload to version 2: the board's size, which version 1
/// left implicit in `game`, becomes a field.
pub fn upcast_match_created_v1(mut data: serde_json::Value) -> Result<serde_json::Value, String> {
    let game: GameId = data
        .get("game")
        .and_then(serde_json::Value::as_str)
        .ok_or("no game")?
        .parse()
        .map_err(|e: crate::games::ParseError| e.to_string())?;
    let map = data.as_object_mut().ok_or("not an object")?;
    if map.contains_key("board") {
        return Err("a version 1 payload has no board".into());
    }
    map.insert(
        "board".into(),
        serde_json::to_value(game.board()).map_err(|e| e.to_string())?,
    );
    Ok(data)
}

/// Who made a move: the seat's human, or the CPU (a CPU seat, a stand-in, or a timed-out turn).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MovedBy {
    Human,
    Cpu,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovePlayed {
    pub seat: Seat,
    /// The move in canonical notation (`"4"`, `"d3"`).
    #[serde(rename = "move")]
    pub mv: String,
    pub by: MovedBy,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passed {
    pub seat: Seat,
}

/// Why a player is no longer at the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaveReason {
    /// They said so (`/leave`).
    Left,
    /// No stream or call of theirs for `presence_seconds`.
    Absent,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerLeft {
    pub seat: Seat,
    pub reason: LeaveReason,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerReturned {
    pub seat: Seat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnTimedOut {
    pub seat: Seat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTookOver {
    pub seat: Seat,
    /// The stand-in's level (2: leaving never pays).
    pub level: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resigned {
    pub seat: Seat,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Win,
    Draw,
}

/// Why a match ended: by the rules of its game, by a resignation, or (`out_of_time`) because a
/// correspondence game's player to move let their days run out.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndedBecause {
    FourInARow,
    BoardFull,
    NoMoves,
    Resigned,
    OutOfTime,
}

impl From<EndReason> for EndedBecause {
    fn from(r: EndReason) -> Self {
        match r {
            EndReason::FourInARow => EndedBecause::FourInARow,
            EndReason::BoardFull => EndedBecause::BoardFull,
            EndReason::NoMoves => EndedBecause::NoMoves,
        }
    }
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchEnded {
    pub outcome: Outcome,
    pub winner_seat: Option<Seat>,
    pub reason: EndedBecause,
    /// Discs on the board at the end, by colour letter (`{"R":21,"Y":20}`).
    pub discs: BTreeMap<char, u32>,
}

/// Every event of a match stream. On the wire: `{"type": "<snake_case>", "data": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum MatchEvent {
    MatchCreated(MatchCreated),
    MovePlayed(MovePlayed),
    Passed(Passed),
    PlayerLeft(PlayerLeft),
    PlayerReturned(PlayerReturned),
    TurnTimedOut(TurnTimedOut),
    CpuTookOver(CpuTookOver),
    Resigned(Resigned),
    MatchEnded(MatchEnded),
}

/// An event with the time it happened (the time of the command that caused it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamped {
    pub at: OffsetDateTime,
    pub event: MatchEvent,
}

/// A stored payload that this code cannot read.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("unknown event type `{0}`")]
    UnknownType(String),
    #[error("event `{event_type}` has schema version {version}, which this build does not know")]
    UnknownSchemaVersion { event_type: String, version: i16 },
    #[error("event `{event_type}` v{version} has a malformed payload: {source}")]
    Malformed {
        event_type: String,
        version: i16,
        source: serde_json::Error,
    },
    #[error("event `{event_type}` v{from} cannot be upcast: {reason}")]
    Upcast {
        event_type: String,
        from: i16,
        reason: String,
    },
}

impl MatchEvent {
    /// Every wire name, for readers that filter by type.
    pub const TYPES: [&'static str; 9] = [
        "match_created",
        "move_played",
        "passed",
        "player_left",
        "player_returned",
        "turn_timed_out",
        "cpu_took_over",
        "resigned",
        "match_ended",
    ];

    /// The payload version this build writes of an event type: `match_created` is at 2 (it
    /// gained `board`), every other type at 1. Bump a type's version together with an upcaster
    /// in [`MatchEvent::decode`] whenever its payload changes shape.
    pub fn schema_version_of(event_type: &str) -> i16 {
        match event_type {
            "match_created" => 2,
            _ => 1,
        }
    }

    /// The payload version this build writes of this event.
    pub fn schema_version(&self) -> i16 {
        Self::schema_version_of(self.event_type())
    }

    pub fn event_type(&self) -> &'static str {
        match self {
            MatchEvent::MatchCreated(_) => "match_created",
            MatchEvent::MovePlayed(_) => "move_played",
            MatchEvent::Passed(_) => "passed",
            MatchEvent::PlayerLeft(_) => "player_left",
            MatchEvent::PlayerReturned(_) => "player_returned",
            MatchEvent::TurnTimedOut(_) => "turn_timed_out",
            MatchEvent::CpuTookOver(_) => "cpu_took_over",
            MatchEvent::Resigned(_) => "resigned",
            MatchEvent::MatchEnded(_) => "match_ended",
        }
    }

    /// The payload (`data`) as JSON.
    pub fn data(&self) -> serde_json::Value {
        let tagged = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        match tagged {
            serde_json::Value::Object(mut map) => {
                map.remove("data").unwrap_or(serde_json::Value::Null)
            }
            _ => serde_json::Value::Null,
        }
    }

    /// Reads a stored event: the single place where old payload versions are upcast.
    pub fn decode(
        event_type: &str,
        version: i16,
        data: &serde_json::Value,
    ) -> Result<MatchEvent, DecodeError> {
        if !Self::TYPES.contains(&event_type) {
            return Err(DecodeError::UnknownType(event_type.to_owned()));
        }
        if version < 1 || version > Self::schema_version_of(event_type) {
            return Err(DecodeError::UnknownSchemaVersion {
                event_type: event_type.to_owned(),
                version,
            });
        }
        let malformed = |source| DecodeError::Malformed {
            event_type: event_type.to_owned(),
            version,
            source,
        };
        // Old shapes, lifted to the current one (history is never rewritten).
        if (event_type, version) == ("match_created", 1) {
            let lifted =
                upcast_match_created_v1(data.clone()).map_err(|reason| DecodeError::Upcast {
                    event_type: event_type.to_owned(),
                    from: version,
                    reason,
                })?;
            return read(&lifted)
                .map(MatchEvent::MatchCreated)
                .map_err(malformed);
        }
        // Deserialise the payload in place (no copy of the JSON), by type.
        fn read<'a, T: Deserialize<'a>>(data: &'a serde_json::Value) -> serde_json::Result<T> {
            T::deserialize(data)
        }
        let event = match event_type {
            "match_created" => read(data).map(MatchEvent::MatchCreated),
            "move_played" => read(data).map(MatchEvent::MovePlayed),
            "passed" => read(data).map(MatchEvent::Passed),
            "player_left" => read(data).map(MatchEvent::PlayerLeft),
            "player_returned" => read(data).map(MatchEvent::PlayerReturned),
            "turn_timed_out" => read(data).map(MatchEvent::TurnTimedOut),
            "cpu_took_over" => read(data).map(MatchEvent::CpuTookOver),
            "resigned" => read(data).map(MatchEvent::Resigned),
            "match_ended" => read(data).map(MatchEvent::MatchEnded),
            other => return Err(DecodeError::UnknownType(other.to_owned())),
        };
        event.map_err(malformed)
    }
}
