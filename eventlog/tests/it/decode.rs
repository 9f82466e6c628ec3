//! Payload versions read back from the log exactly as written: the log never lifts or checks a
//! payload's shape (the domain's `decode` functions are where old versions are upcast).

use serde_json::json;
use uuid::Uuid;

use crate::support::{Logged, TestDb, event, to_stream};

#[tokio::test]
async fn every_payload_reads_back_with_the_schema_version_it_was_written_with() {
    let db = TestDb::migrated(2).await;
    let mut newer = event("passed", json!({"seat": 2, "reason": "no_moves"}));
    newer.schema_version = 2;
    let _ = db
        .log()
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
    let stored = db.log().read_stream("match-d").await.expect("read");
    let read: Vec<_> = stored
        .iter()
        .map(|e| (e.schema_version, e.data.clone()))
        .collect();
    assert_eq!(
        read,
        [
            (1, json!({"seat": 1})),
            (2, json!({"seat": 2, "reason": "no_moves"}))
        ]
    );
}
