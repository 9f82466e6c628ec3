//! House rules of a match: its clock (a turn limit in seconds, or days per move: a
//! correspondence game), who starts, rematch alternation, legal-move hints.

use serde::{Deserialize, Serialize};

use crate::games::GameId;

/// A turn limit: only the values the product offers ([`TurnSeconds::ALLOWED`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub struct TurnSeconds(u32);

impl TurnSeconds {
    pub const ALLOWED: [u32; 2] = [30, 60];

    pub fn get(self) -> u32 {
        self.0
    }

    /// A turn limit as the tables store it: 0 is "no limit" (a pool's key has no null).
    pub fn code(limit: Option<TurnSeconds>) -> i32 {
        limit.map_or(0, |t| t.0 as i32)
    }

    /// The turn limit of a stored [`TurnSeconds::code`]: `None` for 0 (or any value the
    /// product does not offer).
    pub fn from_code(code: i32) -> Option<TurnSeconds> {
        u32::try_from(code)
            .ok()
            .and_then(|n| TurnSeconds::try_from(n).ok())
    }
}

impl TryFrom<u32> for TurnSeconds {
    type Error = SettingsError;
    fn try_from(n: u32) -> Result<Self, SettingsError> {
        if Self::ALLOWED.contains(&n) {
            Ok(TurnSeconds(n))
        } else {
            Err(SettingsError::TurnSeconds(n))
        }
    }
}

impl From<TurnSeconds> for u32 {
    fn from(t: TurnSeconds) -> u32 {
        t.0
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for TurnSeconds {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "TurnSeconds".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "enum": TurnSeconds::ALLOWED})
    }
}

/// Days per move: a correspondence game's clock, only the values the product offers
/// ([`DaysPerMove::ALLOWED`]). Each move gives the player to move that many days; when they run
/// out, that player loses on time. Nobody is "away" in such a game and the CPU never plays it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub struct DaysPerMove(u32);

impl DaysPerMove {
    pub const ALLOWED: [u32; 6] = [1, 2, 3, 5, 7, 14];

    pub fn get(self) -> u32 {
        self.0
    }

    /// As a column stores it: the days, 0 for a real-time game.
    pub fn code(days: Option<DaysPerMove>) -> i32 {
        days.map_or(0, |d| d.0 as i32)
    }

    /// The days of a stored [`DaysPerMove::code`]: `None` for 0 (or any value not offered).
    pub fn from_code(code: i32) -> Option<DaysPerMove> {
        u32::try_from(code)
            .ok()
            .and_then(|n| DaysPerMove::try_from(n).ok())
    }
}

impl TryFrom<u32> for DaysPerMove {
    type Error = SettingsError;
    fn try_from(n: u32) -> Result<Self, SettingsError> {
        if Self::ALLOWED.contains(&n) {
            Ok(DaysPerMove(n))
        } else {
            Err(SettingsError::DaysPerMove(n))
        }
    }
}

impl From<DaysPerMove> for u32 {
    fn from(d: DaysPerMove) -> u32 {
        d.0
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for DaysPerMove {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DaysPerMove".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "enum": DaysPerMove::ALLOWED})
    }
}

/// Who starts a room's first match.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FirstSetting {
    #[default]
    Seat1,
    Seat2,
    Random,
}

/// The settings a match starts with; missing keys take the defaults.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub turn_seconds: Option<TurnSeconds>,
    /// A correspondence game's days per move (never with `turn_seconds`).
    pub days_per_move: Option<DaysPerMove>,
    pub alternate_first: bool,
    pub first: FirstSetting,
    /// Reversi only: whether the match view lists the legal moves. Four in a Row always does.
    pub show_legal_moves: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            turn_seconds: None,
            days_per_move: None,
            alternate_first: true,
            first: FirstSetting::Seat1,
            show_legal_moves: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("turn_seconds must be null or an offered limit, not {0}")]
    TurnSeconds(u32),
    #[error("days_per_move must be null or an offered number of days, not {0}")]
    DaysPerMove(u32),
    #[error("{0} has no setting show_legal_moves = false")]
    NotForGame(GameId),
    #[error("a match has one clock: turn_seconds or days_per_move, not both")]
    TwoClocks,
}

impl Settings {
    /// Whether `game` has the setting `show_legal_moves`: hiding the legal moves is a Reversi
    /// setting (Four in a Row always shows them); each game's rules say ([`GameId::can_hide_legal_moves`]).
    pub fn can_hide_legal_moves(game: GameId) -> bool {
        game.can_hide_legal_moves()
    }

    /// Whether these settings apply to a match of `game` (see [`Settings::can_hide_legal_moves`]).
    pub fn validate_for(&self, game: GameId) -> Result<(), SettingsError> {
        if !Self::can_hide_legal_moves(game) && !self.show_legal_moves {
            return Err(SettingsError::NotForGame(game));
        }
        if self.turn_seconds.is_some() && self.days_per_move.is_some() {
            return Err(SettingsError::TwoClocks);
        }
        Ok(())
    }

    /// Whether these are a correspondence game's settings (days per move).
    pub fn is_correspondence(&self) -> bool {
        self.days_per_move.is_some()
    }

    /// Whether a view of a match of `game` with these settings lists the legal moves.
    pub fn shows_legal_moves(&self, game: GameId) -> bool {
        !Self::can_hide_legal_moves(game) || self.show_legal_moves
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_keys_take_the_defaults() {
        let s: Settings = serde_json::from_str("{}").expect("empty settings parse");
        assert_eq!(s, Settings::default());
        let s: Settings = serde_json::from_str(r#"{"turn_seconds":30,"first":"random"}"#)
            .expect("partial settings parse");
        assert_eq!(s.turn_seconds.map(TurnSeconds::get), Some(30));
        assert_eq!(s.first, FirstSetting::Random);
        assert!(s.alternate_first);
    }

    #[test]
    fn only_offered_turn_limits_and_known_keys_are_accepted() {
        assert!(serde_json::from_str::<Settings>(r#"{"turn_seconds":45}"#).is_err());
        assert!(serde_json::from_str::<Settings>(r#"{"turn_seconds":"30"}"#).is_err());
        assert!(serde_json::from_str::<Settings>(r#"{"colour":"red"}"#).is_err());
        assert!(serde_json::from_str::<Settings>(r#"{"turn_seconds":null}"#).is_ok());
        assert!(serde_json::from_str::<Settings>(r#"{"days_per_move":4}"#).is_err());
        let s: Settings = serde_json::from_str(r#"{"days_per_move":3}"#).expect("3 days");
        assert_eq!(s.days_per_move.map(DaysPerMove::get), Some(3));
        assert!(s.is_correspondence());
        assert_eq!(s.validate_for(GameId::Reversi), Ok(()));
    }

    #[test]
    fn a_match_has_one_clock() {
        let both: Settings =
            serde_json::from_str(r#"{"days_per_move":1,"turn_seconds":30}"#).expect("parses");
        assert_eq!(
            both.validate_for(GameId::FourInARow),
            Err(SettingsError::TwoClocks)
        );
    }
}
