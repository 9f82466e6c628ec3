//! Integration tests of the database crate against the real PostgreSQL: the private cluster
//! and the migrations under their advisory lock, the test databases given back.

mod cluster;
mod migrate;
mod testdbs;
