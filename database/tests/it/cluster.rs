//! A private cluster starts where no server answers, and later callers share it.

use database::cluster::{self, Server};

#[tokio::test]
async fn a_private_cluster_starts_where_no_server_answers() {
    let root = std::env::temp_dir().join(format!(
        "discs-cluster-test-{}",
        uuid::Uuid::new_v4().simple()
    ));
    // Port 1 never has a PostgreSQL on it.
    let url = "postgres://postgres@127.0.0.1:1/postgres";
    // A port free now: one derived from the pid may be a client socket's (the ephemeral range
    // covers it) after a busy run.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let (r, u) = (root.clone(), url.to_owned());
    let server = tokio::task::spawn_blocking(move || cluster::ensure_server_on(&u, &r, port))
        .await
        .expect("joined")
        .expect("a private cluster");
    let Server::Private {
        url: private_url,
        data_dir,
    } = server
    else {
        panic!("a private cluster, not {server:?}");
    };
    assert_eq!(data_dir, root);
    // The URL carries the generated password, kept 0600 in a 0700 folder.
    let password = std::fs::read_to_string(root.join("password")).expect("the password file");
    assert_eq!(
        private_url,
        format!(
            "postgres://postgres:{}@127.0.0.1:{port}/postgres",
            password.trim()
        )
    );
    use std::os::unix::fs::PermissionsExt;
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    assert_eq!(mode(&root.join("password")), 0o600);
    assert_eq!(mode(&root), 0o700);

    let client = database::testing::raw_client(&private_url).await;
    let one: i32 = client
        .query_one("SELECT 1", &[])
        .await
        .expect("a query")
        .get(0);
    assert_eq!(one, 1);
    // Without the password, or with another one, a TCP connection is refused.
    for url in [
        format!("postgres://postgres@127.0.0.1:{port}/postgres"),
        format!("postgres://postgres:guess@127.0.0.1:{port}/postgres"),
    ] {
        assert!(
            tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .is_err(),
            "{url} was let in"
        );
    }

    // A second caller finds it running and shares it.
    let (r, u) = (root.clone(), url.to_owned());
    let again = tokio::task::spawn_blocking(move || cluster::ensure_server_on(&u, &r, port))
        .await
        .expect("joined")
        .expect("the same cluster");
    assert_eq!(again.url(), private_url);

    drop(client);
    let stop = |r: std::path::PathBuf| async move {
        tokio::task::spawn_blocking(move || cluster::stop(&r))
            .await
            .expect("joined")
            .expect("stopped");
    };
    stop(root.clone()).await;

    // A cluster of an earlier version trusted every connection and kept no password: at its
    // next start it gets one and stops trusting.
    std::fs::remove_file(root.join("password")).expect("the password file goes");
    let hba = root.join("data/pg_hba.conf");
    let rules = std::fs::read_to_string(&hba).expect("pg_hba.conf");
    std::fs::write(&hba, rules.replace("scram-sha-256", "trust")).expect("trust written");
    let (r, u) = (root.clone(), url.to_owned());
    let upgraded = tokio::task::spawn_blocking(move || cluster::ensure_server_on(&u, &r, port))
        .await
        .expect("joined")
        .expect("the cluster starts again");
    assert_ne!(upgraded.url(), private_url, "a new password");
    let client = database::testing::raw_client(upgraded.url()).await;
    drop(client);
    assert!(
        tokio_postgres::connect(
            &format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            tokio_postgres::NoTls
        )
        .await
        .is_err(),
        "no trust left"
    );
    stop(root.clone()).await;
    let _ = std::fs::remove_dir_all(&root);
}
