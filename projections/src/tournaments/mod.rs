//! The tournaments projection: each tournament's row (`tournaments`), its standings with every
//! tie-break (`tournament_standings`) and its pairings and byes (`tournament_pairings`), folded
//! from the tournament streams with the domain's own `Tournament` and `standings`, so that what
//! a page shows is what the organiser decides on and what the audit recounts.
//!
//! Standings depend on every game of a tournament, so a batch that touches one refolds it: from
//! the fold this runner kept at the version just before the batch ([`Folds`]), else from its
//! stream read in the batch's transaction up to the batch's last event. The fold is of the log
//! alone, so keeping it across a rolled-back batch is harmless. Every line is written with an
//! upsert that skips rows that did not change.

pub mod fold;
pub mod queries;
pub mod recount;
pub mod tables;

pub use fold::Folds;
pub use queries::{ListedRow, PairingRow, listed, pairings};
pub use recount::{TournamentsAudit, audit};
pub use tables::{apply, entrant_status_name, format_name, state_of};
