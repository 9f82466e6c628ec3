//! The test databases: one a test has finished with comes back to the next test as a fresh clone
//! of the template holds it, unless the test changed its schema.

use database::testing::{TestDb, admin};
use tokio_postgres::Client;

/// Every table's rows (as one digest each) and the sequences' states.
async fn contents(client: &Client) -> Vec<String> {
    let tables: Vec<String> = client
        .query(
            "SELECT format('%I.%I', schemaname, tablename) FROM pg_tables \
             WHERE schemaname = 'public' ORDER BY 1",
            &[],
        )
        .await
        .expect("the tables")
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut out = Vec::new();
    for t in tables {
        let digest: String = client
            .query_one(
                &format!(
                    "SELECT count(*) || ' ' || coalesce(md5(string_agg(x::text, ',' ORDER BY x::text)), '') \
                     FROM {t} x"
                ),
                &[],
            )
            .await
            .expect("a table's rows")
            .get(0);
        out.push(format!("{t}: {digest}"));
    }
    for r in client
        .query(
            "SELECT format('%s %s', sequencename, last_value) FROM pg_sequences ORDER BY 1",
            &[],
        )
        .await
        .expect("the sequences")
    {
        out.push(r.get(0));
    }
    out
}

/// Ends `db` as a test does, and says whether its name still reaches a database.
async fn ended(db: TestDb) -> bool {
    let name = db.name.clone();
    drop(db);
    exists(&name).await
}

async fn exists(name: &str) -> bool {
    admin()
        .await
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
        .await
        .expect("a lookup")
        .is_some()
}

/// No other test of this binary takes a migrated database, so each `migrated` here is the spare
/// the one before gave back, or a fresh clone.
#[tokio::test]
async fn a_finished_database_comes_back_as_a_fresh_clone_holds_it_unless_its_schema_changed() {
    let first = TestDb::migrated(1).await;
    assert!(first.name.starts_with("discs_test_"), "{}", first.name);
    let client = first.client().await;
    let fresh = contents(&client).await;
    assert!(
        fresh
            .iter()
            .any(|t| t.starts_with("public.refinery_schema_history: ") && !t.contains(": 0 ")),
        "the migrations' own rows: {fresh:?}"
    );
    // Rows changed, removed and added; the log's sequence advanced.
    client
        .batch_execute(
            "SELECT nextval('events_position_seq'); \
             UPDATE projection_checkpoints SET events = 7; \
             DELETE FROM log_tree; \
             INSERT INTO projection_checkpoints (name, tx, position, events, updated_at) \
             SELECT 'extra', tx, position, events, updated_at FROM projection_checkpoints LIMIT 1",
        )
        .await
        .expect("the changes");
    assert_ne!(contents(&client).await, fresh);
    drop(client);
    assert!(!ended(first).await, "the old name reaches nothing");

    let second = TestDb::migrated(1).await;
    assert!(second.name.starts_with("discs_spare_"), "{}", second.name);
    let client = second.client().await;
    assert_eq!(contents(&client).await, fresh);
    // A schema changed: that database is dropped, and the next one is a fresh clone.
    client
        .batch_execute("ALTER TABLE projection_checkpoints ADD COLUMN extra int")
        .await
        .expect("the change");
    drop(client);
    assert!(!ended(second).await, "the old name reaches nothing");
    let spares: i64 = admin()
        .await
        .query_one(
            "SELECT count(*) FROM pg_database WHERE datname LIKE $1",
            &[&format!("discs\\_spare\\_{}\\_%", std::process::id())],
        )
        .await
        .expect("a count")
        .get(0);
    assert_eq!(spares, 0, "a changed database is dropped, not kept");

    let third = TestDb::migrated(1).await;
    assert!(third.name.starts_with("discs_test_"), "{}", third.name);
    assert_eq!(contents(&third.client().await).await, fresh);
}
