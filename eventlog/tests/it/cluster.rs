//! A private cluster starts where no server answers, and later callers share it.

use eventlog::cluster::{self, Server};

#[tokio::test]
async fn a_private_cluster_starts_where_no_server_answers() {
    let root = std::env::temp_dir().join(format!(
        "discs-cluster-test-{}",
        uuid::Uuid::new_v4().simple()
    ));
    // Port 1 never has a PostgreSQL on it.
    let url = "postgres://postgres@127.0.0.1:1/postgres";
    let port = 54_000 + (std::process::id() % 900) as u16;
    let (r, u) = (root.clone(), url.to_owned());
    let server = tokio::task::spawn_blocking(move || cluster::ensure_server_on(&u, &r, port))
        .await
        .expect("joined")
        .expect("a private cluster");
    let private_url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    assert_eq!(
        server,
        Server::Private {
            url: private_url.clone(),
            data_dir: root.clone()
        }
    );

    let client = eventlog::testing::raw_client(&private_url).await;
    let one: i32 = client
        .query_one("SELECT 1", &[])
        .await
        .expect("a query")
        .get(0);
    assert_eq!(one, 1);

    // A second caller finds it running and shares it.
    let (r, u) = (root.clone(), url.to_owned());
    let again = tokio::task::spawn_blocking(move || cluster::ensure_server_on(&u, &r, port))
        .await
        .expect("joined")
        .expect("the same cluster");
    assert_eq!(again.url(), private_url);

    drop(client);
    let r = root.clone();
    tokio::task::spawn_blocking(move || cluster::stop(&r))
        .await
        .expect("joined")
        .expect("stopped");
    let _ = std::fs::remove_dir_all(&root);
}
