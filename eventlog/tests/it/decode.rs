//! Payload versions read back from the log.

use eventlog::{DecodeError, PayloadSchema, decode};
use serde_json::json;
use uuid::Uuid;

use crate::support::{TestDb, event, to_stream};

#[derive(Debug, serde::Deserialize, PartialEq)]
struct Passed {
    seat: u8,
}

#[tokio::test]
async fn a_payload_from_a_newer_build_is_an_unknown_schema_version_error() {
    let db = TestDb::migrated(2).await;
    let mut newer = event("passed", json!({"seat": 2, "reason": "no_moves"}));
    newer.schema_version = 2;
    let _ = db
        .log
        .append(
            Uuid::new_v4(),
            to_stream(
                "match-d",
                0,
                vec![event("passed", json!({"seat": 1})), newer],
            ),
        )
        .await
        .expect("append");
    let stored = db.log.read_stream("match-d").await.expect("read");
    assert_eq!(
        decode::<Passed>(&stored[0], PayloadSchema::V1).expect("v1"),
        Passed { seat: 1 }
    );
    let err = decode::<Passed>(&stored[1], PayloadSchema::V1).expect_err("v2 is unknown");
    assert!(
        matches!(
            &err,
            DecodeError::UnknownSchemaVersion { event_type, version: 2, current: 1 } if event_type == "passed"
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "unknown schema version 2 of event type passed (this build reads up to 1)"
    );
}
