//! The HTTP edge of discs: the routes and their OpenAPI document, the extractors, tokens (JWT),
//! rate limits, `Idempotency-Key`, the problem documents in the client's language from the
//! texts, and the web client's pages. The application itself is `service`; this maps it to HTTP.

pub mod auth;
pub mod catalogue;
pub mod config;
pub mod error;
pub mod exposition;
pub mod extract;
pub mod idempotency;
pub mod input;
pub mod lang;
pub mod ratelimit;
pub mod reasons;
pub mod requests;
pub mod routes;
pub mod state;
pub mod texts;
pub mod tokens;
pub mod web;
