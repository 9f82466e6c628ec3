//! The match aggregate: commands, events, `decide` and `evolve`, and replay ply by ply.
//!
//! A match is the fold of its stream (`match-<id>`). `decide` checks a command against the
//! folded state and returns the events it causes (or a `DomainError`); `evolve` applies an event
//! and checks nothing. Time arrives in the command and is stamped on its events.

pub mod commands;
pub mod decide;
pub mod events;
pub mod replay;
pub mod settings;
pub mod state;

#[cfg(test)]
mod tests;

pub use commands::{Action, Command, CreateMatch};
pub use decide::{CPU_DEFAULT_LEVEL, CPU_LEVELS, DomainError, decide};
pub use events::{
    DecodeError, EndedBecause, FirstMoveRule, LeaveReason, MatchCreated, MatchEnded, MatchEvent,
    MovedBy, Occupant, Outcome, Stamped,
};
pub use settings::{DaysPerMove, FirstSetting, Settings, SettingsError, TurnSeconds};
pub use state::{
    Controller, Match, MatchState, Presence, STRONG_CPU_LEVEL, SeatState, evolve,
    strong_solo_player,
};
