//! Group commit: many commands' appends in one statement and one transaction, each checked on
//! its own.

use eventlog::{AppendError, AppendOutcome, EventLog, StreamAppend};
use uuid::Uuid;

use crate::support::{Logged, TestDb, count_events, moves, to_stream};

type Answers = Vec<Result<AppendOutcome, AppendError>>;

/// One batch in a transaction of its own, committed or rolled back.
async fn batch(db: &TestDb, commands: &[(Uuid, Vec<StreamAppend>)], commit: bool) -> Answers {
    let borrowed: Vec<(Uuid, &[StreamAppend])> =
        commands.iter().map(|(id, a)| (*id, a.as_slice())).collect();
    let mut client = db.log().pool().get().await.expect("client");
    let tx = client.transaction().await.expect("begin");
    let answers = EventLog::append_batch_on(&tx, &borrowed)
        .await
        .expect("the batch runs");
    if commit {
        tx.commit().await.expect("commit");
    } else {
        tx.rollback().await.expect("rollback");
    }
    answers
}

#[tokio::test]
async fn a_conflict_in_a_batch_fails_only_its_own_command() {
    let db = TestDb::migrated(2).await;
    // match-b exists at version 2; the batch's command on it expects 1.
    let _ = db
        .log()
        .append(Uuid::new_v4(), to_stream("match-b", 0, moves(0, 2)))
        .await
        .expect("setup");
    let commands = vec![
        (Uuid::new_v4(), vec![to_stream("match-a", 0, moves(0, 2))]),
        (Uuid::new_v4(), vec![to_stream("match-b", 1, moves(1, 1))]),
        (Uuid::new_v4(), vec![to_stream("match-c", 0, moves(0, 1))]),
    ];
    let answers = batch(&db, &commands, true).await;

    assert_eq!(answers.len(), 3);
    let Ok(AppendOutcome::Appended(a)) = &answers[0] else {
        panic!("first command: {:?}", answers[0]);
    };
    assert_eq!(a.iter().map(|e| e.version).collect::<Vec<_>>(), [1, 2]);
    assert!(
        matches!(
            &answers[1],
            Err(AppendError::Conflict { stream, expected: 1, actual: 2 }) if stream == "match-b"
        ),
        "{:?}",
        answers[1]
    );
    let Ok(AppendOutcome::Appended(c)) = &answers[2] else {
        panic!("third command: {:?}", answers[2]);
    };
    // All of a batch's events commit in one transaction; what it answered is what is stored.
    assert_eq!(a[0].tx, c[0].tx);
    assert_eq!(db.log().read_stream("match-a").await.expect("read"), *a);
    assert_eq!(db.log().read_stream("match-c").await.expect("read"), *c);
    assert_eq!(
        db.log()
            .read_stream("match-b")
            .await
            .expect("read")
            .iter()
            .map(|e| e.version)
            .collect::<Vec<_>>(),
        [1, 2]
    );
    assert_eq!(count_events(&db).await, 5);
    let report = db.log().verify_all().await.expect("verify");
    assert!(report.broken.is_empty(), "{report:?}");
}

#[tokio::test]
async fn a_command_twice_in_a_batch_or_after_it_writes_once() {
    let db = TestDb::migrated(2).await;
    let id = Uuid::new_v4();
    let commands = vec![
        (id, vec![to_stream("match-a", 0, moves(0, 2))]),
        (Uuid::new_v4(), vec![to_stream("match-b", 0, moves(0, 1))]),
        (id, vec![to_stream("match-a", 0, moves(0, 2))]),
    ];
    let answers = batch(&db, &commands, true).await;
    let Ok(AppendOutcome::Appended(first)) = &answers[0] else {
        panic!("{:?}", answers[0]);
    };
    let Ok(AppendOutcome::AlreadyApplied(again)) = &answers[2] else {
        panic!("{:?}", answers[2]);
    };
    // The copy answers with the first copy's events only, not the batch's other command's.
    assert_eq!(again, first);

    // And in a later batch, the same.
    let later = batch(&db, &commands[..1], true).await;
    assert!(
        matches!(&later[0], Ok(AppendOutcome::AlreadyApplied(e)) if e == first),
        "{later:?}"
    );
    assert_eq!(count_events(&db).await, 3);
}

#[tokio::test]
async fn a_rolled_back_batch_leaves_nothing() {
    let db = TestDb::migrated(2).await;
    let commands = vec![
        (Uuid::new_v4(), vec![to_stream("match-a", 0, moves(0, 2))]),
        (Uuid::new_v4(), vec![to_stream("match-b", 0, moves(0, 1))]),
    ];
    let answers = batch(&db, &commands, false).await;
    assert!(
        answers
            .iter()
            .all(|a| matches!(a, Ok(AppendOutcome::Appended(_))))
    );
    assert_eq!(count_events(&db).await, 0);
    // The same commands go through afterwards, from version 0.
    let again = batch(&db, &commands, true).await;
    assert!(
        again
            .iter()
            .all(|a| matches!(a, Ok(AppendOutcome::Appended(_))))
    );
    assert_eq!(count_events(&db).await, 3);
}
