//! Following the whole log in commit-safe order: late commits, rollbacks, concurrent writers.

use std::collections::HashSet;

use eventlog::{AppendOutcome, Checkpoint, EventLog, RecordedEvent};
use uuid::Uuid;

use crate::support::{Logged, TestDb, moves, to_stream};

/// Reads what is readable now after `from`, in pages of `page`.
async fn drain(log: &EventLog, from: Checkpoint, page: i64) -> (Vec<RecordedEvent>, Checkpoint) {
    let mut out = Vec::new();
    let mut checkpoint = from;
    loop {
        let batch = log
            .read_all_after(checkpoint, page)
            .await
            .expect("read all");
        let done = (batch.len() as i64) < page;
        if let Some(last) = batch.last() {
            checkpoint = last.checkpoint();
        }
        out.extend(batch);
        if done {
            return (out, checkpoint);
        }
    }
}

/// Polls after `from` until `n` events have been read. The horizon is cluster-wide: a
/// transaction of another test (or of anyone on the server) may hold readers back for a
/// moment, so "eventually" is the only honest expectation; a skipped event makes this hang
/// until the timeout fails the test.
async fn catch_up(
    log: &EventLog,
    from: Checkpoint,
    page: i64,
    n: usize,
) -> (Vec<RecordedEvent>, Checkpoint) {
    let poll = async {
        let mut out = Vec::new();
        let mut checkpoint = from;
        while out.len() < n {
            let (batch, next) = drain(log, checkpoint, page).await;
            checkpoint = next;
            out.extend(batch);
            tokio::task::yield_now().await;
        }
        (out, checkpoint)
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), poll)
        .await
        .expect("the follower never caught up: an event was skipped or a transaction hangs")
}

fn ids(events: &[RecordedEvent]) -> Vec<Uuid> {
    events.iter().map(|e| e.event_id).collect()
}

/// The scenario of Marten#4964: a transaction takes its position first and commits last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_commit_is_not_skipped_by_a_reader_that_polled_in_between() {
    let db = TestDb::migrated(2).await;
    let first = db
        .log()
        .append(Uuid::new_v4(), to_stream("match-0", 0, moves(0, 1)))
        .await
        .expect("first")
        .into_events();
    let (seen, checkpoint) = catch_up(&db.log(), Checkpoint::START, 10, 1).await;
    assert_eq!(ids(&seen), ids(&first));

    // A: inserts (takes the lower position), and stays open.
    let holder_pool = database::connect(&db.url, 1).await.expect("pool");
    let mut holder = holder_pool.get().await.expect("client");
    let held_tx = holder.transaction().await.expect("begin");
    let held = EventLog::append_on(
        &held_tx,
        Uuid::new_v4(),
        vec![to_stream("match-late", 0, moves(0, 1))],
    )
    .await
    .expect("held append")
    .into_events();
    // B: a later position, committed first.
    let early = db
        .log()
        .append(Uuid::new_v4(), to_stream("match-early", 0, moves(0, 1)))
        .await
        .expect("early")
        .into_events();
    assert!(held[0].position < early[0].position);
    assert!(held[0].tx < early[0].tx);

    // B is committed and visible to plain reads, but the follower must not pass A.
    assert_eq!(
        db.log()
            .read_stream("match-early")
            .await
            .expect("read")
            .len(),
        1
    );
    let (while_held, still) = drain(&db.log(), checkpoint, 10).await;
    assert!(
        while_held.is_empty(),
        "read past a running transaction: {while_held:?}"
    );
    assert_eq!(still, checkpoint);

    held_tx.commit().await.expect("commit");
    let (after, end) = catch_up(&db.log(), checkpoint, 10, 2).await;
    assert_eq!(ids(&after), [held[0].event_id, early[0].event_id]);
    assert_eq!(end, early[0].checkpoint());
    // Page by page, from the start: every event exactly once, in (tx, position) order.
    let (all, _) = catch_up(&db.log(), Checkpoint::START, 1, 3).await;
    assert_eq!(
        ids(&all),
        [first[0].event_id, held[0].event_id, early[0].event_id]
    );
    let (nothing, _) = drain(&db.log(), end, 10).await;
    assert!(nothing.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolled_back_append_does_not_stall_readers() {
    let db = TestDb::migrated(2).await;
    let holder_pool = database::connect(&db.url, 1).await.expect("pool");
    let mut holder = holder_pool.get().await.expect("client");
    let held_tx = holder.transaction().await.expect("begin");
    let doomed = EventLog::append_on(
        &held_tx,
        Uuid::new_v4(),
        vec![to_stream("match-doomed", 0, moves(0, 1))],
    )
    .await
    .expect("held append")
    .into_events();
    let kept = db
        .log()
        .append(Uuid::new_v4(), to_stream("match-kept", 0, moves(0, 1)))
        .await
        .expect("kept")
        .into_events();
    held_tx.rollback().await.expect("rollback");
    let (after, end) = catch_up(&db.log(), Checkpoint::START, 10, 1).await;
    assert_eq!(ids(&after), ids(&kept));
    assert!(drain(&db.log(), end, 10).await.0.is_empty());
    // The rolled-back position is a hole nobody waits for.
    assert!(doomed[0].position < kept[0].position);
    assert!(
        db.log()
            .read_stream("match-doomed")
            .await
            .expect("read")
            .is_empty()
    );
}

/// Writers append as fast as they can while a follower polls; the follower's sequence must
/// equal the final log, each event exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_follower_racing_concurrent_writers_sees_every_event_once_in_order() {
    const WRITERS: usize = 6;
    const APPENDS: usize = 40;
    let db = TestDb::migrated(WRITERS + 2).await;
    db.warm_up(WRITERS + 1).await;
    let total = WRITERS * APPENDS * 3 / 2;
    let follower = {
        let log = db.log();
        tokio::spawn(async move { catch_up(&log, Checkpoint::START, 16, total).await })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let log = db.log();
            tokio::spawn(async move {
                for i in 0..APPENDS {
                    // Alternate one-event and two-event commands.
                    let n = 1 + i % 2;
                    let stream = format!("match-{w}-{}", i / 10);
                    let version = (0..i % 10).map(|j| 1 + j % 2).sum::<usize>() as i64;
                    let outcome = log
                        .append(Uuid::new_v4(), to_stream(&stream, version, moves(i, n)))
                        .await
                        .expect("append");
                    assert!(matches!(outcome, AppendOutcome::Appended(_)));
                }
            })
        })
        .collect();
    for w in writers {
        w.await.expect("writer");
    }
    let (seen, end) = follower.await.expect("follower");
    assert!(
        drain(&db.log(), end, 16).await.0.is_empty(),
        "events beyond the total"
    );
    let (all, _) = catch_up(&db.log(), Checkpoint::START, 1000, total).await;
    assert_eq!(all.len(), total);
    assert_eq!(ids(&seen), ids(&all));
    assert_eq!(
        seen.iter()
            .map(|e| e.event_id)
            .collect::<HashSet<_>>()
            .len(),
        all.len()
    );
    assert!(
        all.windows(2)
            .all(|w| w[0].checkpoint() < w[1].checkpoint())
    );
}

#[tokio::test]
async fn for_each_after_folds_every_committed_event_and_returns_the_last_checkpoint() {
    let db = TestDb::migrated(2).await;
    for s in 0..5 {
        let _ = db
            .log()
            .append(
                Uuid::new_v4(),
                to_stream(&format!("match-{s}"), 0, moves(0, 3)),
            )
            .await
            .expect("append");
    }
    let (expected, _) = catch_up(&db.log(), Checkpoint::START, 100, 15).await;
    let mut seen = Vec::new();
    let end = db
        .log()
        .for_each_after(Checkpoint::START, 4, |e| seen.push(e.event_id))
        .await
        .expect("fold");
    // Nothing else writes to this database, so by now the fold sees all of it.
    assert_eq!(seen, ids(&expected));
    assert_eq!(end, expected[14].checkpoint());
}

#[tokio::test]
async fn open_streams_are_those_of_the_kind_whose_last_event_does_not_close_them() {
    let db = TestDb::migrated(2).await;
    let append = |stream: &'static str, events| {
        let log = db.log();
        async move {
            let outcome = log
                .append(Uuid::new_v4(), to_stream(stream, 0, events))
                .await
                .expect("append");
            assert!(matches!(outcome, AppendOutcome::Appended(_)));
        }
    };
    append("match-open", moves(0, 2)).await;
    let mut closed = moves(0, 1);
    closed.push(crate::support::event("match_ended", serde_json::json!({})));
    append("match-closed", closed).await;
    append("ticket-open", moves(0, 1)).await;
    // A closing event before the last one does not close the stream.
    let mut reopened = vec![crate::support::event("match_ended", serde_json::json!({}))];
    reopened.extend(moves(1, 2));
    append("match-reopened", reopened).await;

    let mut open = db
        .log()
        .open_streams("match-", "match_ended")
        .await
        .expect("open streams");
    open.sort();
    assert_eq!(
        open,
        [
            ("match-open".to_owned(), 2),
            ("match-reopened".to_owned(), 3)
        ]
    );
}
