//! The top of discs: start-up (`startup`: the database, the shared state, the HTTP server and
//! the background work, and a graceful shutdown) and the operator CLI (`cli`) over it.

pub mod cli;
pub mod config;
pub mod startup;
