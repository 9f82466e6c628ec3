//! Appends to one stream: versions, conflicts under a 32-way race, input checks.

use std::sync::Arc;

use eventlog::canonical::GENESIS;
use eventlog::{AppendError, AppendOutcome};
use serde_json::json;
use time::{Date, Month, UtcOffset};
use tokio::sync::Barrier;
use uuid::Uuid;

use crate::support::{Logged, TestDb, count_events, event, moves, to_stream};

#[tokio::test]
async fn a_new_stream_starts_at_version_1_with_a_genesis_link() {
    let db = TestDb::migrated(2).await;
    let outcome = db
        .log()
        .append(Uuid::new_v4(), to_stream("match-a", 0, moves(0, 3)))
        .await
        .expect("append");
    let AppendOutcome::Appended(events) = outcome else {
        panic!("expected Appended, got {outcome:?}");
    };
    assert_eq!(
        events.iter().map(|e| e.version).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(events[0].prev_hash, GENESIS);
    assert_eq!(events[1].prev_hash, events[0].hash);
    assert_eq!(events[2].prev_hash, events[1].hash);
    assert!(events.windows(2).all(|w| w[0].position < w[1].position));
    assert!(events.iter().all(|e| e.tx == events[0].tx));
    // What the append answered is exactly what a reader gets back.
    assert_eq!(db.log().read_stream("match-a").await.expect("read"), events);
}

#[tokio::test]
async fn a_stale_expected_version_is_a_conflict_that_names_the_actual_version() {
    let db = TestDb::migrated(2).await;
    let _ = db
        .log()
        .append(Uuid::new_v4(), to_stream("match-b", 0, moves(0, 2)))
        .await
        .expect("append");
    for expected in [0, 1, 3] {
        let err = db
            .log()
            .append(Uuid::new_v4(), to_stream("match-b", expected, moves(2, 1)))
            .await
            .expect_err("stale");
        match err {
            AppendError::Conflict {
                stream,
                expected: e,
                actual,
            } => {
                assert_eq!((stream.as_str(), e, actual), ("match-b", expected, 2));
            }
            other => panic!("expected a conflict, got {other:?}"),
        }
    }
    let err = db
        .log()
        .append(Uuid::new_v4(), to_stream("match-none", 4, moves(0, 1)))
        .await
        .expect_err("no such stream");
    assert!(
        matches!(err, AppendError::Conflict { actual: 0, .. }),
        "{err:?}"
    );
    assert_eq!(count_events(&db).await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_racing_appends_give_one_success_and_31_conflicts() {
    const WRITERS: usize = 32;
    let db = TestDb::migrated(WRITERS).await;
    let _ = db
        .log()
        .append(Uuid::new_v4(), to_stream("match-race", 0, moves(0, 5)))
        .await
        .expect("seed");
    db.warm_up(WRITERS).await;
    let barrier = Arc::new(Barrier::new(WRITERS));
    let tasks: Vec<_> = (0..WRITERS)
        .map(|i| {
            let log = db.log();
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                let ev = event("move_played", json!({"seat": 1, "move": "4", "writer": i}));
                log.append(Uuid::new_v4(), to_stream("match-race", 5, vec![ev]))
                    .await
            })
        })
        .collect();
    let mut appended = Vec::new();
    let mut conflicts = 0;
    for task in tasks {
        match task.await.expect("task") {
            Ok(AppendOutcome::Appended(events)) => appended.push(events),
            Ok(other) => panic!("unexpected {other:?}"),
            Err(AppendError::Conflict {
                expected: 5,
                actual: 6,
                ..
            }) => conflicts += 1,
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    assert_eq!((appended.len(), conflicts), (1, WRITERS - 1));
    let stream = db.log().read_stream("match-race").await.expect("read");
    assert_eq!(stream.len(), 6);
    assert_eq!(
        stream.iter().map(|e| e.version).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6]
    );
    assert_eq!(stream[5], appended[0][0]);
    assert_eq!(count_events(&db).await, 6);
    assert!(db.log().verify_all().await.expect("verify").is_ok());
}

#[tokio::test]
async fn read_stream_after_returns_only_the_later_events() {
    let db = TestDb::migrated(2).await;
    let _ = db
        .log()
        .append(Uuid::new_v4(), to_stream("match-c", 0, moves(0, 4)))
        .await
        .expect("append");
    let later = db
        .log()
        .read_stream_after("match-c", 2)
        .await
        .expect("read");
    assert_eq!(later.iter().map(|e| e.version).collect::<Vec<_>>(), [3, 4]);
    assert!(
        db.log()
            .read_stream("match-unknown")
            .await
            .expect("read")
            .is_empty()
    );
}

#[tokio::test]
async fn appends_that_cannot_be_stored_faithfully_are_refused_before_writing() {
    let db = TestDb::migrated(2).await;
    let log = &db.log();
    let err = log.append(Uuid::new_v4(), to_stream("s", 0, vec![])).await;
    assert!(matches!(err, Err(AppendError::Empty)), "{err:?}");
    let err = log.append_many(Uuid::new_v4(), vec![]).await;
    assert!(matches!(err, Err(AppendError::Empty)), "{err:?}");
    let err = log
        .append(Uuid::new_v4(), to_stream("s", -1, moves(0, 1)))
        .await;
    assert!(
        matches!(
            err,
            Err(AppendError::InvalidExpectedVersion { expected: -1, .. })
        ),
        "{err:?}"
    );
    let err = log
        .append(
            Uuid::new_v4(),
            to_stream("s", 0, vec![event("x", json!({"name": "a\u{0}b"}))]),
        )
        .await;
    assert!(matches!(err, Err(AppendError::Invalid(_))), "{err:?}");
    let mut bad_version = event("x", json!({}));
    bad_version.schema_version = 0;
    let err = log
        .append(Uuid::new_v4(), to_stream("s", 0, vec![bad_version]))
        .await;
    assert!(matches!(err, Err(AppendError::Invalid(_))), "{err:?}");
    let err = log
        .append(Uuid::new_v4(), to_stream("", 0, moves(0, 1)))
        .await;
    assert!(matches!(err, Err(AppendError::Invalid(_))), "{err:?}");
    assert_eq!(count_events(&db).await, 0);
}

#[tokio::test]
async fn timestamps_are_stored_to_the_microsecond_in_utc() {
    let db = TestDb::migrated(2).await;
    let mut ev = event("x", json!({}));
    let day = Date::from_calendar_date(2026, Month::November, 29).expect("date");
    ev.recorded_at = day
        .with_hms_nano(13, 45, 12, 123_456_789)
        .expect("time")
        .assume_offset(UtcOffset::from_hms(2, 0, 0).expect("offset"));
    let outcome = db
        .log()
        .append(Uuid::new_v4(), to_stream("s", 0, vec![ev]))
        .await
        .expect("append");
    let expected = day
        .with_hms_micro(11, 45, 12, 123_456)
        .expect("time")
        .assume_utc();
    assert_eq!(outcome.events()[0].recorded_at, expected);
    assert_eq!(
        db.log().read_stream("s").await.expect("read")[0].recorded_at,
        expected
    );
}

#[tokio::test]
async fn connecting_to_a_server_that_is_not_there_fails_fast() {
    let started = std::time::Instant::now();
    let err = database::connect("postgres://postgres@127.0.0.1:1/postgres", 2).await;
    assert!(err.is_err());
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}
