//! Tournaments (issue 44): a tournament is a stream of its own (`tournament-<id>`), and
//! every step of it is an event: its creation, every join, withdrawal, pause and resume, each
//! round's start, each pairing and bye, each result, an admin's removal of a player, the end.
//! This module holds the events and the pure decide/evolve of that life; the pairings are pure
//! functions of the state ([`arena`], [`swiss`], [`berger`]), [`organiser`] says what a
//! tournament needs next at a given time, and the standings ([`standings`]) are recomputed
//! exactly when a player is removed.
//!
//! `decide` refuses what no pairing may do (a player twice, a player not active or still
//! playing, an arena's immediate rematch or third first move in a row, a Swiss rematch, a second
//! 1-point bye); which pairs a round holds is the organiser's choice, not checked here. Unlike
//! the match aggregate, `evolve` builds the state from nothing (`Option<Tournament>`) and takes
//! the event's time, and `decide` takes the time of the command beside it.
//!
//! A tournament is scheduled until its joins open ([`JOINS_OPEN_BEFORE`] its start), open until
//! it starts, running until it finishes, or cancelled. Time comes in with each command.
//! Formats:
//! - **Arena**: runs `minutes` from its start; joined players who are idle are paired
//!   continuously; joining and pairing close [`ARENA_CLOSES_BEFORE_END`] before the end.
//! - **Swiss**: `rounds` rounds, each paired from the standings; joining closes after half of
//!   them; a late joiner gets a ½-point bye for each round already started.
//! - **Round robin**: at most [`ROUND_ROBIN_MAX`] players, each pair twice with the first move
//!   swapped (Berger tables); joining closes at the start.

pub mod arena;
pub mod berger;
pub mod commands;
pub mod decide;
pub mod errors;
pub mod events;
pub mod limits;
pub mod organiser;
pub mod standings;
pub mod state;
pub mod swiss;

#[cfg(test)]
mod tests;

pub use commands::Command;
pub use decide::decide;
pub use errors::TournamentError;
pub use events::{Format, PairingMade, TournamentCreated, TournamentEvent, half_points};
pub use limits::{
    ARENA_CLOSES_BEFORE_END, ARENA_MINUTES, JOINS_OPEN_BEFORE, NAME_MAX, PLAYERS_MAX,
    ROUND_ROBIN_MAX, SCHEDULED_AT_MOST, SWISS_ROUNDS,
};
pub use state::{Bye, Entrant, EntrantStatus, Game, Phase, Status, Tournament, evolve};
