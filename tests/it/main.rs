//! One integration-test binary: the real application on a random port against a database of
//! its own, cloned from a migrated template. Logs are silent unless `TEST_LOG=1`.

mod analysis;
mod boundary;
mod catalogue_limits;
mod challenges;
mod cli;
mod closings;
mod correspondence;
mod cpu_relay;
mod docs;
mod errors;
mod explorer;
mod fairplay;
mod helpers;
mod history;
mod inputs;
mod jobs;
mod lifecycle;
mod limits;
mod live;
mod matches;
mod modules;
mod openapi;
mod outage;
mod ownership;
mod players;
mod races;
mod ranked;
mod replicas;
mod rooms;
mod seats;
mod service;
mod site;
mod stream;
mod streams;
mod tournaments;
