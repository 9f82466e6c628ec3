//! Integration tests of the database crate against the real PostgreSQL: the private cluster
//! and the migrations under their advisory lock.

mod cluster;
mod migrate;
