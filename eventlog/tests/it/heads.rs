//! Appends on known heads (the group commit's fast path): the chain continued from the head the
//! caller holds, and a head that moved or does not match failing only its own command.

use eventlog::{AppendError, AppendOutcome, EventLog, HeadAppend, StreamAppend};
use uuid::Uuid;

use crate::support::{Logged, TestDb, count_events, moves, to_stream};

type Answers = Vec<Result<AppendOutcome, AppendError>>;

type Command = (Uuid, StreamAppend, eventlog::Hash);

fn heads_of(commands: &[Command]) -> Vec<HeadAppend<'_>> {
    commands
        .iter()
        .map(|(id, append, head)| HeadAppend {
            command_id: *id,
            append,
            head: *head,
        })
        .collect()
}

/// The log holds `events` events and every chain checks.
async fn assert_log(db: &TestDb, events: i64) {
    assert_eq!(count_events(db).await, events);
    let report = db.log().verify_all().await.expect("verify");
    assert!(report.broken.is_empty(), "{report:?}");
}

/// Commands (id, append, head) in one committed transaction.
async fn on_heads(db: &TestDb, commands: &[Command]) -> Answers {
    let heads = heads_of(commands);
    let mut client = db.log().pool().get().await.expect("client");
    let tx = client.transaction().await.expect("begin");
    let answers = EventLog::append_on_heads(&tx, &heads)
        .await
        .expect("the batch runs");
    tx.commit().await.expect("commit");
    answers
}

/// A stream of `n` events; its head hash.
async fn stream_of(db: &TestDb, stream: &str, n: usize) -> eventlog::Hash {
    let outcome = db
        .log()
        .append(Uuid::new_v4(), to_stream(stream, 0, moves(0, n)))
        .await
        .expect("setup");
    outcome.events().last().expect("events").hash
}

#[tokio::test]
async fn commands_on_known_heads_write_the_chain_the_log_would() {
    let db = TestDb::migrated(2).await;
    let a = stream_of(&db, "match-a", 2).await;
    let b = stream_of(&db, "match-b", 1).await;
    let answers = on_heads(
        &db,
        &[
            (Uuid::new_v4(), to_stream("match-a", 2, moves(2, 2)), a),
            (Uuid::new_v4(), to_stream("match-b", 1, moves(1, 1)), b),
        ],
    )
    .await;
    for (answer, stream) in answers.iter().zip(["match-a", "match-b"]) {
        let Ok(AppendOutcome::Appended(written)) = answer else {
            panic!("{stream}: {answer:?}");
        };
        // What the call answered is what is stored, hashes included.
        let stored = db.log().read_stream(stream).await.expect("read");
        assert_eq!(stored[stored.len() - written.len()..], written[..]);
    }
    assert_log(&db, 6).await;
}

#[tokio::test]
async fn a_moved_or_wrong_head_fails_only_its_own_command() {
    let db = TestDb::migrated(2).await;
    let a = stream_of(&db, "match-a", 2).await;
    stream_of(&db, "match-b", 2).await;
    let c = stream_of(&db, "match-c", 1).await;
    let answers = on_heads(
        &db,
        &[
            // match-a is at 2, not 1.
            (Uuid::new_v4(), to_stream("match-a", 1, moves(1, 1)), a),
            // Right version, wrong hash: a head no read of the log gave.
            (
                Uuid::new_v4(),
                to_stream("match-b", 2, moves(2, 1)),
                [7; 32],
            ),
            (Uuid::new_v4(), to_stream("match-c", 1, moves(1, 1)), c),
        ],
    )
    .await;
    assert!(
        matches!(&answers[0], Err(AppendError::Conflict { stream, expected: 1, actual: 2 }) if stream == "match-a"),
        "{:?}",
        answers[0]
    );
    assert!(
        matches!(&answers[1], Err(AppendError::Conflict { stream, expected: 2, actual: 2 }) if stream == "match-b"),
        "{:?}",
        answers[1]
    );
    assert!(
        matches!(&answers[2], Ok(AppendOutcome::Appended(e)) if e.len() == 1),
        "{:?}",
        answers[2]
    );
    assert_log(&db, 6).await;
}

#[tokio::test]
async fn a_command_applied_before_answers_with_its_events() {
    let db = TestDb::migrated(2).await;
    let head = stream_of(&db, "match-a", 1).await;
    let id = Uuid::new_v4();
    let command = (id, to_stream("match-a", 1, moves(1, 2)), head);
    let first = on_heads(&db, std::slice::from_ref(&command)).await;
    let Ok(AppendOutcome::Appended(written)) = &first[0] else {
        panic!("{:?}", first[0]);
    };
    let again = on_heads(&db, &[command]).await;
    assert!(
        matches!(&again[0], Ok(AppendOutcome::AlreadyApplied(e)) if e == written),
        "{:?}",
        again[0]
    );
    assert_eq!(count_events(&db).await, 3);
}

#[tokio::test]
async fn a_stream_twice_or_a_new_stream_is_refused_whole() {
    let db = TestDb::migrated(2).await;
    let head = stream_of(&db, "match-a", 1).await;
    let twice = [
        (Uuid::new_v4(), to_stream("match-a", 1, moves(1, 1)), head),
        (Uuid::new_v4(), to_stream("match-a", 1, moves(1, 1)), head),
    ];
    let new = [(
        Uuid::new_v4(),
        to_stream("match-new", 0, moves(0, 1)),
        [0; 32],
    )];
    for commands in [&twice[..], &new[..]] {
        let heads = heads_of(commands);
        let client = db.log().pool().get().await.expect("client");
        let refused = EventLog::append_on_heads(&client, &heads).await;
        assert!(refused.is_err(), "{refused:?}");
    }
    assert_eq!(count_events(&db).await, 1);
}
