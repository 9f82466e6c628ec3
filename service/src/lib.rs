//! The application core of discs: what the server does, without HTTP. The live path (commands,
//! group commit, the match cache, the fan-out to viewers), ranked tickets and waves, analysis
//! searches, jobs and the solved cache, the background workers, configuration and the clock;
//! its own typed error ([`Error`]), which the HTTP edge (`api`) maps to statuses and texts.
//!
//! # Layers
//! The top-level modules form layers with no cycle (`tests/it/modules.rs` fails on one), from the
//! bottom: the leaves (`reasons`, `error`, `clock`, `chance`, `config`, `metrics`, `secrets`,
//! `checks`, `views`, `replicas`, `searches`); [`core`](crate::core) (`Core`: the pool, the log,
//! the clock, the chance, the metrics, the replicas, the stop signal), `answers` and
//! `aggregates` (one way to run an aggregate: load, cache, command) above it; `players`; `standing`
//! (what `live` reads of a player: seated, banned); [`live`] (`LivePath`: the core plus the play
//! settings, the match cache, the committer, the fan-out and the search cap); the services, each with the context it needs (`analysis`:
//! `Analyses`, the live path plus the jobs; `ranked`: `Ranked`, the live path plus the waves' pool,
//! schedule and wake-up; `rooms`, `challenges` (`Challenges`: the live path plus the challenges' folds) and `player_feed` (a player's own stream) above it, `explorer`, `history`, `closing`, `records` (a player's
//! ratings, history and the leaderboards), `audits` (what admins ask of the log and the
//! projections); `tournaments`: `Tournaments`,
//! the live path plus the folds it read and the organiser's wake-up); `decisions` (an admin's
//! decision on a player, and a ban's reach into the queue and the tournaments) above them;
//! [`state`] (`AppState`, composing every context, for the edge and the loops) and `workers` above
//! it. A service takes the narrowest context it uses, never `AppState`.

pub mod aggregates;
pub mod analysis;
pub mod answers;
pub mod audits;
pub mod challenges;
pub mod chance;
pub mod checks;
pub mod clock;
pub mod closing;
pub mod config;
pub mod core;
pub mod decisions;
pub mod error;
pub mod explorer;
pub mod history;
pub mod live;
pub mod metrics;
pub mod player_feed;
pub mod players;
pub mod ranked;
pub mod reasons;
pub mod records;
pub mod replicas;
pub mod rooms;
pub mod searches;
pub mod secrets;
pub mod standing;
pub mod state;
pub mod tournaments;
pub mod views;
pub mod workers;

pub use error::{Error, unexpected};
