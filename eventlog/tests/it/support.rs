//! Helpers of the event log's integration tests; the database harness is `database::testing`.

pub use database::testing::TestDb;
use eventlog::{EventLog, NewEvent, StreamAppend};
use serde_json::Value;
use time::OffsetDateTime;
use tokio_postgres::Client;
use uuid::Uuid;

/// The event log on a test database's pool.
pub trait Logged {
    fn log(&self) -> EventLog;
}

impl Logged for TestDb {
    fn log(&self) -> EventLog {
        EventLog::new(self.pool.clone())
    }
}

/// An event of type `event_type` with payload `data`, recorded now.
pub fn event(event_type: &str, data: Value) -> NewEvent {
    NewEvent {
        event_type: event_type.to_owned(),
        schema_version: 1,
        data,
        actor: Some(Uuid::from_u128(42)),
        recorded_at: OffsetDateTime::now_utc(),
    }
}

/// A one-stream append of the given events.
pub fn to_stream(stream: &str, expected_version: i64, events: Vec<NewEvent>) -> StreamAppend {
    StreamAppend {
        stream: stream.to_owned(),
        expected_version,
        events,
    }
}

/// `n` move events numbered from `from`.
pub fn moves(from: usize, n: usize) -> Vec<NewEvent> {
    (from..from + n)
        .map(|i| event("move_played", serde_json::json!({"seat": 1 + i % 2, "move": format!("{}", 1 + i % 7), "by": "human"})))
        .collect()
}

/// The number of rows in `events`.
pub async fn count_events(db: &TestDb) -> i64 {
    db.client()
        .await
        .query_one("SELECT count(*) FROM events", &[])
        .await
        .expect("count")
        .get(0)
}

/// Blocks (without sleeping) until backend `pid` waits on a lock held by another session.
pub async fn wait_until_blocked(client: &Client, pid: i32) {
    loop {
        let blocked: bool = client
            .query_one("SELECT cardinality(pg_blocking_pids($1)) > 0", &[&pid])
            .await
            .expect("pg_blocking_pids")
            .get(0);
        if blocked {
            return;
        }
        tokio::task::yield_now().await;
    }
}
