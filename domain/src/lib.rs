//! The pure core of discs: the games' rules, the aggregates (`aggregate`: matches, tickets, a
//! player's standing, tournaments), their commands and events.
//!
//! Nothing in this crate does I/O, reads a clock or draws a random number: time, ids and random
//! draws arrive inside commands, so that replaying a stream of events is exact and repeatable.

pub mod aggregate;
pub mod analysis;
pub mod boundary;
pub mod challenges;
pub mod cpu;
pub mod explorer;
pub mod fairplay;
pub mod games;
pub mod ids;
pub mod matches;
pub mod matchmaking;
pub mod openings;
pub mod oracles;
pub mod ratings;
pub mod rng;
pub mod search;
pub mod standing;
pub mod tickets;
pub mod tournaments;
