//! The database out of reach: requests get 503 `unavailable` with `Retry-After` (never 500),
//! `/readyz` says not ready without the raw error, and the service comes back by itself; a
//! move retried with its `Idempotency-Key` lands once, and no acknowledged move is lost.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{Player, Private, TestApp, config, free_port, spawn_on};

/// A keyed move: its status, body and `Retry-After`.
async fn keyed_move(
    app: &TestApp,
    p: &Player,
    id: &str,
    mv: &str,
    key: &str,
) -> (StatusCode, Value, Option<String>) {
    let res = app.keyed_move(p, id, mv, key).await;
    let retry = res
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (res.status, res.body, retry)
}

#[tokio::test]
async fn a_database_restart_gets_503s_and_the_service_comes_back_by_itself() {
    let private = Private {
        root: std::env::temp_dir().join(format!("discs-outage-{}", uuid::Uuid::new_v4().simple())),
        port: free_port(),
    };
    let server = private.start().await;
    let url = format!(
        "{}/discs_outage",
        server.rsplit_once('/').expect("a database in the URL").0
    );
    let app = spawn_on(&url, config(&url)).await;
    let ada = app.player("Ada").await;
    let mut matches = Vec::new();
    for _ in 0..4 {
        matches.push(app.solo_four(&ada).await);
    }
    for id in &matches {
        let (status, body, _) = keyed_move(&app, &ada, id, "4", &format!("{id}-1")).await;
        assert_eq!(status, StatusCode::OK, "{body:?}");
    }

    private.stop().await;
    // Moves on every match at once, a sign-up and the readiness probe: 503, never 500.
    let keys: Vec<String> = matches.iter().map(|id| format!("{id}-2")).collect();
    let moves = futures_util::future::join_all(
        matches
            .iter()
            .zip(&keys)
            .map(|(id, key)| keyed_move(&app, &ada, id, "1", key)),
    )
    .await;
    for (status, body, retry) in moves {
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body:?}");
        assert_eq!(body["code"], "unavailable");
        assert_eq!(retry.as_deref(), Some("2"));
    }
    let signup = app
        .send(
            app.http
                .post(format!("{}/v1/players", app.base))
                .json(&json!({"name": "Bob"})),
        )
        .await;
    assert_eq!(
        signup.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{:?}",
        signup.body
    );
    let ready = app.send(app.http.get(format!("{}/readyz", app.base))).await;
    assert_eq!(ready.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        ready.body,
        json!({"status": "not_ready", "reason": "the database does not answer"})
    );

    private.start().await;
    // No restart of the server: the same keyed moves now go through, once each.
    for id in &matches {
        let key = format!("{id}-2");
        let (status, body, _) = keyed_move(&app, &ada, id, "1", &key).await;
        assert_eq!(status, StatusCode::OK, "{body:?}");
        let (status, again, _) = keyed_move(&app, &ada, id, "1", &key).await;
        assert_eq!((status, &again), (StatusCode::OK, &body));
        // Both moves acknowledged, each with the CPU's reply: five events.
        assert_eq!(app.events(&ada, id).await.len(), 5, "{id}");
    }
    let ready = app.send(app.http.get(format!("{}/readyz", app.base))).await;
    assert_eq!(ready.status, StatusCode::OK, "{:?}", ready.body);

    drop(app);
    private.stop().await;
    let _ = std::fs::remove_dir_all(&private.root);
}
