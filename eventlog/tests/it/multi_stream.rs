//! One command writing several streams: all or nothing, each at its own expected version.

use std::sync::Arc;

use eventlog::{AppendError, AppendOutcome};
use tokio::sync::Barrier;
use uuid::Uuid;

use crate::support::{Logged, TestDb, count_events, moves, to_stream};

#[tokio::test]
async fn a_multi_stream_append_writes_every_stream_in_one_transaction() {
    let db = TestDb::migrated(2).await;
    let _ = db
        .log()
        .append(Uuid::new_v4(), to_stream("ticket-1", 0, moves(0, 1)))
        .await
        .expect("seed");
    let outcome = db
        .log()
        .append_many(
            Uuid::new_v4(),
            vec![
                to_stream("match-m", 0, moves(0, 1)),
                to_stream("ticket-1", 1, moves(1, 1)),
                to_stream("ticket-2", 0, moves(2, 2)),
            ],
        )
        .await
        .expect("append");
    let AppendOutcome::Appended(events) = outcome else {
        panic!("expected Appended, got {outcome:?}");
    };
    let summary: Vec<(&str, i64)> = events
        .iter()
        .map(|e| (e.stream.as_str(), e.version))
        .collect();
    // In the caller's order, with ascending positions, all in one transaction.
    assert_eq!(
        summary,
        [
            ("match-m", 1),
            ("ticket-1", 2),
            ("ticket-2", 1),
            ("ticket-2", 2)
        ]
    );
    assert!(
        events
            .windows(2)
            .all(|w| w[0].position < w[1].position && w[0].tx == w[1].tx)
    );
    assert!(db.log().verify_all().await.expect("verify").is_ok());
}

#[tokio::test]
async fn a_conflict_on_one_stream_writes_nothing_to_the_others() {
    let db = TestDb::migrated(2).await;
    let _ = db
        .log()
        .append(Uuid::new_v4(), to_stream("ticket-9", 0, moves(0, 2)))
        .await
        .expect("seed");
    let before = count_events(&db).await;
    // The failing stream sorts after the good ones, so they were already written in the
    // transaction when the conflict is found.
    let err = db
        .log()
        .append_many(
            Uuid::new_v4(),
            vec![
                to_stream("match-new", 0, moves(0, 1)),
                to_stream("ticket-8", 0, moves(0, 1)),
                to_stream("ticket-9", 1, moves(2, 1)),
            ],
        )
        .await
        .expect_err("ticket-9 is at version 2");
    assert!(
        matches!(&err, AppendError::Conflict { stream, expected: 1, actual: 2 } if stream == "ticket-9"),
        "{err:?}"
    );
    assert_eq!(count_events(&db).await, before);
    assert!(
        db.log()
            .read_stream("match-new")
            .await
            .expect("read")
            .is_empty()
    );
    assert!(
        db.log()
            .read_stream("ticket-8")
            .await
            .expect("read")
            .is_empty()
    );
    // The streams table was rolled back too: the new streams can still be created.
    let again = db
        .log()
        .append_many(
            Uuid::new_v4(),
            vec![
                to_stream("match-new", 0, moves(0, 1)),
                to_stream("ticket-8", 0, moves(0, 1)),
                to_stream("ticket-9", 2, moves(2, 1)),
            ],
        )
        .await
        .expect("append");
    assert!(matches!(again, AppendOutcome::Appended(ref e) if e.len() == 3));
}

#[tokio::test]
async fn a_stream_named_twice_in_one_command_is_refused() {
    let db = TestDb::migrated(2).await;
    let err = db
        .log()
        .append_many(
            Uuid::new_v4(),
            vec![
                to_stream("a", 0, moves(0, 1)),
                to_stream("a", 1, moves(1, 1)),
            ],
        )
        .await;
    assert!(
        matches!(err, Err(AppendError::DuplicateStream(ref s)) if s == "a"),
        "{err:?}"
    );
}

/// Two commands over the same streams, listed in opposite orders, race many times: streams
/// are locked in a fixed order, so one wins and the other conflicts, never a deadlock.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn crossing_multi_stream_appends_do_not_deadlock() {
    let db = TestDb::migrated(4).await;
    db.warm_up(2).await;
    for round in 0..20_i64 {
        let barrier = Arc::new(Barrier::new(2));
        let tasks: Vec<_> = [["x", "y"], ["y", "x"]]
            .into_iter()
            .map(|order| {
                let log = db.log();
                let barrier = barrier.clone();
                let appends = order
                    .iter()
                    .map(|s| to_stream(s, round, moves(0, 1)))
                    .collect();
                tokio::spawn(async move {
                    barrier.wait().await;
                    log.append_many(Uuid::new_v4(), appends).await
                })
            })
            .collect();
        let mut wins = 0;
        for task in tasks {
            match task.await.expect("task") {
                Ok(AppendOutcome::Appended(_)) => wins += 1,
                Err(AppendError::Conflict { .. }) => {}
                other => panic!("round {round}: {other:?}"),
            }
        }
        assert_eq!(wins, 1, "round {round}");
    }
    assert_eq!(count_events(&db).await, 40);
}
