//! Retried and duplicated commands: answered with the first outcome, never written twice.

use std::sync::Arc;

use eventlog::{AppendOutcome, EventLog};
use tokio::sync::Barrier;
use uuid::Uuid;

use crate::support::{Logged, TestDb, count_events, moves, to_stream, wait_until_blocked};

#[tokio::test]
async fn a_retried_command_returns_the_first_outcome_and_writes_nothing() {
    let db = TestDb::migrated(2).await;
    let command = Uuid::new_v4();
    let _ = db
        .log()
        .append(Uuid::new_v4(), to_stream("match-r", 0, moves(0, 2)))
        .await
        .expect("seed");
    let first = db
        .log()
        .append(command, to_stream("match-r", 2, moves(2, 2)))
        .await
        .expect("first");
    let AppendOutcome::Appended(written) = first else {
        panic!("expected Appended, got {first:?}");
    };
    let rows = count_events(&db).await;
    // The retry carries the same command id (its clock reading may differ).
    let retry = db
        .log()
        .append(command, to_stream("match-r", 2, moves(2, 2)))
        .await
        .expect("retry");
    assert_eq!(retry, AppendOutcome::AlreadyApplied(written.clone()));
    // Even when the stream has moved on since.
    let _ = db
        .log()
        .append(Uuid::new_v4(), to_stream("match-r", 4, moves(4, 1)))
        .await
        .expect("later");
    let late_retry = db
        .log()
        .append(command, to_stream("match-r", 2, moves(2, 2)))
        .await
        .expect("late retry");
    assert_eq!(late_retry, AppendOutcome::AlreadyApplied(written));
    assert_eq!(count_events(&db).await, rows + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_identical_racing_commands_give_one_appended_and_one_already_applied() {
    let db = TestDb::migrated(4).await;
    db.warm_up(2).await;
    for round in 0..20 {
        let stream = format!("match-twin-{round}");
        // Half the rounds race on a new stream (insert path), half on an existing one.
        let expected = if round % 2 == 0 {
            0
        } else {
            let _ = db
                .log()
                .append(Uuid::new_v4(), to_stream(&stream, 0, moves(0, 3)))
                .await
                .expect("seed");
            3
        };
        let command = Uuid::new_v4();
        let barrier = Arc::new(Barrier::new(2));
        let twins: Vec<_> = (0..2)
            .map(|_| {
                let log = db.log();
                let barrier = barrier.clone();
                let append = to_stream(&stream, expected, moves(3, 2));
                tokio::spawn(async move {
                    barrier.wait().await;
                    log.append(command, append).await
                })
            })
            .collect();
        let mut outcomes = Vec::new();
        for twin in twins {
            outcomes.push(twin.await.expect("task").expect("no error for a twin"));
        }
        let (appended, already): (Vec<_>, Vec<_>) = outcomes
            .into_iter()
            .partition(|o| matches!(o, AppendOutcome::Appended(_)));
        assert_eq!((appended.len(), already.len()), (1, 1), "round {round}");
        assert_eq!(appended[0].events(), already[0].events(), "round {round}");
        let stored = db.log().read_stream(&stream).await.expect("read");
        assert_eq!(stored.len() as i64, expected + 2, "round {round}");
    }
}

/// The loser of the race waits on the winner's lock, then finds the stream moved on: its
/// conflict must be recognised as its own twin's success.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_twin_that_waited_for_the_winner_answers_already_applied() {
    for expected in [0, 3] {
        let db = TestDb::migrated(1).await;
        if expected > 0 {
            let _ = db
                .log()
                .append(Uuid::new_v4(), to_stream("match-w", 0, moves(0, 3)))
                .await
                .expect("seed");
        }
        let command = Uuid::new_v4();
        // The pool has one connection: the log's next call runs on this backend.
        let log_pid: i32 = {
            let c = db.pool.get().await.expect("client");
            c.query_one("SELECT pg_backend_pid()", &[])
                .await
                .expect("pid")
                .get(0)
        };
        // The winner runs the same command inside a transaction held open on its own pool.
        let winner_pool = database::connect(&db.url, 1).await.expect("winner pool");
        let mut winner = winner_pool.get().await.expect("winner client");
        let winner_tx = winner.transaction().await.expect("begin");
        let won = EventLog::append_on(
            &winner_tx,
            command,
            vec![to_stream("match-w", expected, moves(3, 2))],
        )
        .await
        .expect("winner appends");
        let loser = {
            let log = db.log();
            tokio::spawn(async move {
                log.append(command, to_stream("match-w", expected, moves(3, 2)))
                    .await
            })
        };
        let observer = db.client().await;
        wait_until_blocked(&observer, log_pid).await;
        winner_tx.commit().await.expect("commit");
        let lost = loser
            .await
            .expect("task")
            .expect("the loser gets an answer");
        let AppendOutcome::Appended(written) = won else {
            panic!("winner: {won:?}");
        };
        assert_eq!(
            lost,
            AppendOutcome::AlreadyApplied(written),
            "expected {expected}"
        );
        assert_eq!(count_events(&db).await, expected + 2);
    }
}
