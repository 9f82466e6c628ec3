//! The integration tests live in `it/`; this crate has no library code of its own.
