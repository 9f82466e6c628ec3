//! The `discs` application: configuration, the HTTP API, background workers and the operator
//! CLI.

pub mod auth;
pub mod cache;
pub mod catalogue;
pub mod cli;
pub mod clock;
pub mod commit;
pub mod config;
pub mod error;
pub mod exposition;
pub mod extract;
pub mod idempotency;
pub mod input;
pub mod jobs;
pub mod lang;
pub mod live;
pub mod loaded;
pub mod metrics;
pub mod play;
pub mod ranked;
pub mod ratelimit;
pub mod reasons;
pub mod requests;
pub mod routes;
pub mod searches;
pub mod solved;
pub mod startup;
pub mod state;
pub mod texts;
pub mod views;
pub mod web;
pub mod workers;
