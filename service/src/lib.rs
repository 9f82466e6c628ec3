//! The application core of discs: what the server does, without HTTP. The live path (commands,
//! group commit, the match cache, the fan-out to viewers), ranked tickets and waves, analysis
//! searches, jobs and the solved cache, the background workers, configuration and the clock;
//! its own typed error ([`Error`]), which the HTTP edge (`api`) maps to statuses and texts.

pub mod analysis;
pub mod answers;
pub mod checks;
pub mod clock;
pub mod closing;
pub mod config;
pub mod core;
pub mod error;
pub mod explorer;
pub mod history;
pub mod live;
pub mod metrics;
pub mod players;
pub mod ranked;
pub mod reasons;
pub mod replicas;
pub mod rooms;
pub mod searches;
pub mod secrets;
pub mod standing;
pub mod state;
pub mod views;
pub mod workers;

pub use error::{Error, unexpected};
