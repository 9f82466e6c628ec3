//! Hash-chain audits: an intact log verifies, every kind of tampering is pinned to its event.

use eventlog::canonical::{self, Hash};
use eventlog::{BrokenLink, LinkProblem};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::{Logged, TestDb, event, moves, to_stream};

/// Three streams of five events each.
async fn three_streams(db: &TestDb) {
    for s in ["match-1", "match-2", "match-3"] {
        for v in 0..5 {
            let _ = db
                .log()
                .append(Uuid::new_v4(), to_stream(s, v, moves(v as usize, 1)))
                .await
                .expect("append");
        }
    }
}

/// Runs `sql` with the append-only guard switched off, as an intruder with owner rights would.
async fn tamper(db: &TestDb, sql: &str) {
    db.client()
        .await
        .batch_execute(&format!(
            "BEGIN; ALTER TABLE events DISABLE TRIGGER events_append_only; {sql}; \
             ALTER TABLE events ENABLE TRIGGER events_append_only; COMMIT"
        ))
        .await
        .expect("tamper");
}

fn only_break(links: &[BrokenLink]) -> (&str, i64, &LinkProblem) {
    assert_eq!(links.len(), 1, "{links:?}");
    (
        links[0].stream.as_str(),
        links[0].version,
        &links[0].problem,
    )
}

#[tokio::test]
async fn an_intact_log_verifies() {
    let db = TestDb::migrated(2).await;
    three_streams(&db).await;
    let report = db.log().verify_all().await.expect("verify");
    assert!(report.is_ok(), "{report:?}");
    assert_eq!((report.streams_checked, report.events_checked), (3, 15));
    let one = db.log().verify_stream("match-2").await.expect("verify");
    assert!(one.is_ok());
    assert_eq!((one.streams_checked, one.events_checked), (1, 5));
    let none = db.log().verify_stream("match-404").await.expect("verify");
    assert!(none.is_ok() && none.streams_checked == 0);
}

/// jsonb keeps a number's value, not its spelling; the hash must not care.
#[tokio::test]
async fn payloads_keep_their_hash_through_the_jsonb_round_trip() {
    let db = TestDb::migrated(2).await;
    let payload = json!({
        "zeta": 1, "alpha": [true, false, null, "é\u{1F600}\"\\\n\t", {"b": 2, "a": 1}],
        "big": u64::MAX, "small": i64::MIN, "float": 0.1, "third": 1.0 / 3.0,
        "e16": 1e16, "e17": 1.234e17, "tiny": 1e-7, "subnormal": 5e-324, "huge": 1.5e300,
        "neg_zero": -0.0, "one_point_oh": 1.0, "": "empty key", "Key": "upper first",
        // Ratings as a ticket records them: serde_json's default float parser reads this one
        // back one ulp off, which broke its chain until `float_roundtrip` was switched on.
        "rating": 1466.48541734256, "deviation": 252.7145773398545,
    });
    let _ = db
        .log()
        .append(
            Uuid::new_v4(),
            to_stream("match-json", 0, vec![event("odd", payload.clone())]),
        )
        .await
        .expect("append");
    let stored = db.log().read_stream("match-json").await.expect("read");
    assert_eq!(
        canonical::canonical_json(&stored[0].data),
        canonical::canonical_json(&payload)
    );
    // The spelling did change for some of them, which is why numbers are hashed by value.
    assert_ne!(
        stored[0].data["e16"].to_string(),
        payload["e16"].to_string()
    );
    assert!(db.log().verify_all().await.expect("verify").is_ok());
}

#[tokio::test]
async fn an_altered_payload_is_caught_at_its_stream_and_version() {
    let db = TestDb::migrated(2).await;
    three_streams(&db).await;
    tamper(
        &db,
        "UPDATE events SET data = jsonb_set(data, '{move}', '\"7\"') \
         WHERE stream_id = 'match-2' AND version = 3",
    )
    .await;
    let report = db.log().verify_all().await.expect("verify");
    let (stream, version, problem) = only_break(&report.broken);
    assert_eq!((stream, version), ("match-2", 3));
    assert!(matches!(problem, LinkProblem::Hash { .. }), "{problem:?}");
    assert_eq!(report.events_checked, 15);
    let one = db.log().verify_stream("match-2").await.expect("verify");
    assert_eq!(one.broken, report.broken);
    assert!(
        db.log()
            .verify_stream("match-1")
            .await
            .expect("verify")
            .is_ok()
    );
}

#[tokio::test]
async fn an_altered_and_rehashed_event_is_caught_by_the_next_link() {
    let db = TestDb::migrated(2).await;
    three_streams(&db).await;
    // The intruder also recomputes the altered event's own hash.
    let mut victim = db.log().read_stream("match-3").await.expect("read")[1].clone();
    victim.data = json!({"seat": 2, "move": "1", "by": "cpu"});
    let mut bytes = Vec::new();
    canonical::event_bytes(&victim.content(), &mut bytes);
    let forged: Hash = canonical::chain_hash(&victim.prev_hash, &bytes);
    let client = db.client().await;
    client
        .batch_execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        .await
        .expect("disable");
    client
        .execute(
            "UPDATE events SET data = $1, hash = $2 WHERE stream_id = 'match-3' AND version = 2",
            &[&victim.data, &forged.as_slice()],
        )
        .await
        .expect("forge");
    let report = db.log().verify_all().await.expect("verify");
    let (stream, version, problem) = only_break(&report.broken);
    assert_eq!((stream, version), ("match-3", 3));
    assert!(
        matches!(problem, LinkProblem::PrevHash { .. }),
        "{problem:?}"
    );
}

#[tokio::test]
async fn a_cut_tail_or_a_missing_event_is_caught() {
    let db = TestDb::migrated(2).await;
    three_streams(&db).await;
    tamper(
        &db,
        "DELETE FROM events WHERE stream_id = 'match-1' AND version = 5",
    )
    .await;
    tamper(
        &db,
        "DELETE FROM events WHERE stream_id = 'match-2' AND version = 2",
    )
    .await;
    let report = db.log().verify_all().await.expect("verify");
    assert_eq!(report.broken.len(), 2, "{report:?}");
    assert_eq!(
        (report.broken[0].stream.as_str(), report.broken[0].version),
        ("match-1", 4)
    );
    assert!(matches!(
        report.broken[0].problem,
        LinkProblem::Head {
            head_version: Some(5),
            ..
        }
    ));
    assert_eq!(
        (report.broken[1].stream.as_str(), report.broken[1].version),
        ("match-2", 3)
    );
    assert!(matches!(
        report.broken[1].problem,
        LinkProblem::Gap {
            expected_version: 2
        }
    ));
}

#[tokio::test]
async fn the_log_refuses_updates_and_deletes() {
    let db = TestDb::migrated(2).await;
    three_streams(&db).await;
    let client = db.client().await;
    for sql in [
        "UPDATE events SET data = '{}'",
        "DELETE FROM events",
        "TRUNCATE events",
    ] {
        let err = client.batch_execute(sql).await.expect_err(sql);
        let message = err.as_db_error().map(|e| e.message().to_owned());
        assert!(
            message
                .as_deref()
                .is_some_and(|m| m.contains("append-only")),
            "{sql}: {err:?}"
        );
    }
    assert!(db.log().verify_all().await.expect("verify").is_ok());
}

#[test]
fn the_canonical_json_of_a_value_does_not_depend_on_key_insertion_order() {
    let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":[1,2],"x":null}}"#).expect("json");
    let b: Value = serde_json::from_str(r#"{"a":{"x":null,"y":[1,2]},"b":1.0}"#).expect("json");
    assert_eq!(canonical::canonical_json(&a), canonical::canonical_json(&b));
}

#[tokio::test]
async fn a_head_row_without_events_is_reported() {
    let db = TestDb::migrated(2).await;
    three_streams(&db).await;
    db.client()
        .await
        .batch_execute("INSERT INTO streams VALUES ('match-ghost', 3, sha256('\\x00'::bytea))")
        .await
        .expect("ghost head");
    let report = db.log().verify_all().await.expect("verify");
    let (stream, version, problem) = only_break(&report.broken);
    assert_eq!((stream, version), ("match-ghost", 0));
    assert!(matches!(
        problem,
        LinkProblem::Head {
            head_version: Some(3),
            last_hash: None,
            ..
        }
    ));
    let one = db.log().verify_stream("match-ghost").await.expect("verify");
    assert_eq!(one.broken, report.broken);
}
