//! Migrations under the advisory lock.

use std::sync::Arc;

use tokio::sync::Barrier;

use database::testing::TestDb;

fn migration_files() -> i64 {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations");
    std::fs::read_dir(dir)
        .expect("migrations folder")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".sql"))
        })
        .count() as i64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_instances_migrating_a_fresh_database_at_once_all_succeed() {
    let db = TestDb::empty(1).await;
    let barrier = Arc::new(Barrier::new(4));
    let instances: Vec<_> = (0..4)
        .map(|_| {
            let url = db.url.clone();
            let barrier = barrier.clone();
            tokio::spawn(async move {
                // Each instance has its own pool, as separate processes would.
                let pool = database::connect(&url, 1).await.expect("connect");
                barrier.wait().await;
                database::migrate(&pool).await
            })
        })
        .collect();
    let mut applied = 0;
    for instance in instances {
        let report = instance.await.expect("task").expect("migration succeeds");
        applied += report.applied.len() as i64;
    }
    let files = migration_files();
    assert_eq!(
        applied, files,
        "each migration applied by exactly one instance"
    );
    let client = db.client().await;
    let rows: i64 = client
        .query_one("SELECT count(*) FROM refinery_schema_history", &[])
        .await
        .expect("history")
        .get(0);
    let distinct: i64 = client
        .query_one(
            "SELECT count(DISTINCT version) FROM refinery_schema_history",
            &[],
        )
        .await
        .expect("history")
        .get(0);
    assert_eq!((rows, distinct), (files, files));
    // And the lock was released: a fifth run gets it and finds nothing to do.
    let report = database::migrate(&db.pool).await.expect("migrate again");
    assert!(report.applied.is_empty());
}
