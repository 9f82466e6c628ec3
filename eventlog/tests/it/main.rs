//! Integration tests of the event log against the real PostgreSQL, one database per test.

mod append;
mod batch;
mod decode;
mod heads;
mod idempotency;
mod multi_stream;
mod read_all;
mod support;
mod verify;
