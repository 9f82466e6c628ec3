//! The events of a tournament stream: their payloads (the creation's facts with its
//! [`Format`], a pairing), their wire names and schema version, encoded and decoded.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::games::GameId;
use crate::ids::{MatchId, PlayerId};
use crate::matches::TurnSeconds;

/// The three formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Arena,
    Swiss,
    RoundRobin,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::Arena, Format::Swiss, Format::RoundRobin];

    /// Its name on the wire and in the read models (`arena`, `swiss`, `round_robin`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Arena => "arena",
            Format::Swiss => "swiss",
            Format::RoundRobin => "round_robin",
        }
    }

    /// The format named `name` ([`Format::name`]).
    pub fn named(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// A score of the standings ([`super::standings::Line::score`]) in points: an arena counts
    /// whole points, the others half-points (a draw is half a point).
    pub fn points(self, score: u32) -> f64 {
        match self {
            Format::Arena => f64::from(score),
            Format::Swiss | Format::RoundRobin => half_points(score),
        }
    }
}

/// Half-points in points.
pub fn half_points(half: u32) -> f64 {
    f64::from(half) / 2.0
}

/// The facts of a tournament's creation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentCreated {
    pub name: String,
    pub game: GameId,
    pub format: Format,
    #[serde(with = "time::serde::rfc3339")]
    pub starts_at: OffsetDateTime,
    /// Arena: how long it runs.
    pub minutes: Option<u32>,
    /// Swiss: how many rounds (a round robin's follow from its players).
    pub rounds: Option<u32>,
    /// Whether its games move Glicko-2 ratings.
    pub rated: bool,
    pub turn_seconds: Option<TurnSeconds>,
    /// A private tournament is joined with its invite code, which the service keeps apart
    /// (never in an event: the stream is replayed to its followers).
    pub private: bool,
    pub created_by: PlayerId,
    pub max_players: u32,
}

/// A pairing: a match between two players, `players[0]` moving first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairingMade {
    pub round: u32,
    pub match_id: MatchId,
    pub players: [PlayerId; 2],
}

/// Every event of a tournament stream. On the wire: `{"type": "<snake_case>", "data": {...}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum TournamentEvent {
    TournamentCreated(TournamentCreated),
    /// `rating`: the player's rating in the game when they joined (seeding, performance).
    PlayerJoined {
        player_id: PlayerId,
        rating: f64,
    },
    PlayerWithdrew {
        player_id: PlayerId,
    },
    PlayerPaused {
        player_id: PlayerId,
    },
    PlayerResumed {
        player_id: PlayerId,
    },
    /// The tournament runs from round 1 (an arena has that one round).
    RoundStarted {
        round: u32,
    },
    PairingMade(PairingMade),
    /// `half_points`: 2 for a full point, 1 for a half.
    ByeGiven {
        round: u32,
        player_id: PlayerId,
        half_points: u32,
    },
    /// `winner`: `None` for a draw.
    ResultRecorded {
        match_id: MatchId,
        winner: Option<PlayerId>,
    },
    PlayerRemoved {
        player_id: PlayerId,
        reason: String,
        by: PlayerId,
    },
    TournamentFinished {},
    TournamentCancelled {
        reason: String,
    },
}

impl TournamentEvent {
    pub const TYPES: [&'static str; 12] = [
        "tournament_created",
        "player_joined",
        "player_withdrew",
        "player_paused",
        "player_resumed",
        "round_started",
        "pairing_made",
        "bye_given",
        "result_recorded",
        "player_removed",
        "tournament_finished",
        "tournament_cancelled",
    ];
    pub const SCHEMA_VERSION: i16 = 1;

    pub fn event_type(&self) -> &'static str {
        let i = match self {
            TournamentEvent::TournamentCreated(_) => 0,
            TournamentEvent::PlayerJoined { .. } => 1,
            TournamentEvent::PlayerWithdrew { .. } => 2,
            TournamentEvent::PlayerPaused { .. } => 3,
            TournamentEvent::PlayerResumed { .. } => 4,
            TournamentEvent::RoundStarted { .. } => 5,
            TournamentEvent::PairingMade(_) => 6,
            TournamentEvent::ByeGiven { .. } => 7,
            TournamentEvent::ResultRecorded { .. } => 8,
            TournamentEvent::PlayerRemoved { .. } => 9,
            TournamentEvent::TournamentFinished {} => 10,
            TournamentEvent::TournamentCancelled { .. } => 11,
        };
        Self::TYPES[i]
    }

    /// The payload (`data`) as JSON.
    pub fn data(&self) -> serde_json::Value {
        serde_json::to_value(self)
            .ok()
            .and_then(|mut v| v.get_mut("data").map(serde_json::Value::take))
            .unwrap_or(serde_json::Value::Null)
    }

    /// Reads a stored tournament event.
    pub fn decode(
        event_type: &str,
        version: i16,
        data: &serde_json::Value,
    ) -> Result<TournamentEvent, String> {
        if version != Self::SCHEMA_VERSION {
            return Err(format!(
                "event `{event_type}` has schema version {version}, which this build does not know"
            ));
        }
        if !Self::TYPES.contains(&event_type) {
            return Err(format!("unknown tournament event type `{event_type}`"));
        }
        serde_json::from_value(serde_json::json!({"type": event_type, "data": data}))
            .map_err(|e| format!("event `{event_type}` is malformed: {e}"))
    }
}
