//! Concurrency over HTTP: racing moves on one match, idempotent retries.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{spawn_app, waiting_for_locks};

#[tokio::test]
async fn twenty_racing_moves_give_one_success_and_an_intact_log() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let room = app.room(&ada, &bob, "four_in_a_row", json!({})).await;
    let room_id = room["room_id"].as_str().expect("room id");
    let started = app
        .post(
            &format!("/v1/rooms/{room_id}/matches"),
            &ada.token,
            json!({}),
        )
        .await;
    let id = started.body["match_id"]
        .as_str()
        .expect("match id")
        .to_owned();
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(20));
    let mut tasks = Vec::new();
    for i in 0..20 {
        let (http, base, token, id, barrier) = (
            app.http.clone(),
            app.base.clone(),
            ada.token.clone(),
            id.clone(),
            barrier.clone(),
        );
        // Half name the version they saw, half do not.
        let body = if i % 2 == 0 {
            json!({"move": ((i % 7) + 1).to_string(), "expected_version": 1})
        } else {
            json!({"move": ((i % 7) + 1).to_string()})
        };
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let res = http
                .post(format!("{base}/v1/matches/{id}/moves"))
                .bearer_auth(token)
                .json(&body)
                .send()
                .await
                .expect("an answer");
            let status = res.status();
            let body: serde_json::Value = res.json().await.unwrap_or_default();
            (status, body["code"].as_str().unwrap_or("").to_owned())
        }));
    }
    let mut ok = 0;
    for t in tasks {
        let (status, code) = t.await.expect("task");
        if status == StatusCode::OK {
            ok += 1;
        } else {
            assert_eq!(status, StatusCode::CONFLICT);
            assert!(
                code == "version_conflict" || code == "not_your_turn",
                "{code}"
            );
        }
    }
    assert_eq!(ok, 1);
    let events = app.events(&ada, &id).await;
    assert_eq!(events.len(), 2, "created and exactly one move");
    let versions: Vec<u64> = events
        .iter()
        .filter_map(|e| e["version"].as_u64())
        .collect();
    assert_eq!(versions, [1, 2]);
    let report = app.state.log.verify_all().await.expect("verify");
    assert!(report.is_ok(), "{report:?}");
}

#[tokio::test]
async fn a_retried_request_gets_the_first_answer_and_writes_nothing() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let view = app
        .solo(&ada, "four_in_a_row", json!({"cpu_level": 1}))
        .await;
    let id = view["match_id"].as_str().expect("an id").to_owned();
    let send = |key: &'static str, mv: &'static str| app.keyed_move(&ada, &id, mv, key);
    let first = send("k-1", "4").await;
    assert_eq!(first.status, StatusCode::OK);
    let count = app.events(&ada, &id).await.len();
    let again = send("k-1", "4").await;
    assert_eq!((again.status, &again.body), (first.status, &first.body));
    assert_eq!(app.events(&ada, &id).await.len(), count, "nothing written");
    let other = send("k-1", "3").await;
    assert_eq!(
        (other.status, other.code()),
        (StatusCode::CONFLICT, "idempotency_key_reused")
    );

    // Errors are answers too: an illegal move, retried, is the same error even once legal.
    let bad = send("k-2", "9").await;
    assert_eq!(bad.code(), "illegal_move");
    assert_eq!(send("k-2", "9").await.body, bad.body);

    // A solo creation retried makes one match.
    let create = |key: &'static str| {
        app.send(
            app.http
                .post(format!("{}/v1/matches", app.base))
                .bearer_auth(&ada.token)
                .header("idempotency-key", key)
                .json(&json!({"game": "reversi"})),
        )
    };
    let a = create("c-1").await;
    let b = create("c-1").await;
    assert_eq!(a.status, StatusCode::CREATED);
    assert_eq!(a.body, b.body);
}

#[tokio::test]
async fn instances_starting_together_create_their_database_once_and_all_start() {
    // Several instances started at once on a database that does not exist yet (a cluster's
    // first start): every one creates it if missing, and the losers' errors are success.
    let admin_url = database::testing::admin_url().await;
    let name = format!("discs_race_{}", uuid::Uuid::now_v7().simple());
    let url = database::testing::url_for(&admin_url, &name);
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(8));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (url, barrier) = (url.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            database::create_database_if_missing(&url).await
        }));
    }
    for t in tasks {
        t.await.expect("a task").expect("created, or found created");
    }
    let admin = database::testing::admin().await;
    let found = admin
        .query_one(
            "SELECT count(*) FROM pg_database WHERE datname = $1",
            &[&name],
        )
        .await
        .expect("the catalogue");
    assert_eq!(found.get::<_, i64>(0), 1);
    admin
        .batch_execute(&format!("DROP DATABASE \"{name}\""))
        .await
        .expect("dropped");
}

/// A ban and its player's own cancel of their waiting ticket, racing on the ticket's stream: the
/// ban's cancel goes first (it waits first) and the player's is refused as closed; the ban is
/// written once and the ticket cancelled once, by the ban.
#[tokio::test]
async fn a_ban_and_the_players_own_cancel_of_the_ticket_cancel_it_once() {
    let app = spawn_app().await;
    let (admin, ada) = (app.admin("Arbiter").await, app.player("Ada").await);
    let queued = app
        .post("/v1/queue", &ada.token, json!({"game": "reversi"}))
        .await;
    assert_eq!(queued.status, StatusCode::CREATED, "{:?}", queued.body);
    let ticket = queued.body["ticket_id"]
        .as_str()
        .expect("a ticket")
        .to_owned();
    // The ticket's stream row held here: both cancels wait for it, the ban's first.
    let holder = database::testing::raw_client(&app.db_url).await;
    holder
        .batch_execute(&format!(
            "BEGIN; SELECT 1 FROM streams WHERE stream_id = 'ticket-{ticket}' FOR UPDATE"
        ))
        .await
        .expect("the row locked");
    let waiting = "locktype IN ('transactionid', 'tuple')";
    let decisions = format!("/v1/admin/players/{}/decisions", ada.id);
    let ban = app.post(
        &decisions,
        &admin.token,
        json!({"decision": "banned", "reason": "relayed an engine"}),
    );
    let own = format!("/v1/queue/{ticket}");
    let meanwhile = async {
        waiting_for_locks(&app.db_url, waiting, 1, || false).await;
        let cancel = app.delete(&own, &ada.token);
        let release = async {
            waiting_for_locks(&app.db_url, waiting, 2, || false).await;
            holder.batch_execute("ROLLBACK").await.expect("let go");
        };
        tokio::join!(cancel, release).0
    };
    let (banned, cancelled) = tokio::join!(ban, meanwhile);
    assert_eq!(banned.status, StatusCode::CREATED, "{:?}", banned.body);
    assert_eq!(
        (cancelled.status, cancelled.code()),
        (StatusCode::CONFLICT, "ticket_closed"),
        "{:?}",
        cancelled.body
    );
    let log = |stream: String| {
        let log = app.state.log.clone();
        async move { log.read_stream(&stream).await.expect("reads") }
    };
    let standing = log(format!("player-{}", ada.id)).await;
    assert_eq!(standing.len(), 1, "one decision written");
    let events = log(format!("ticket-{ticket}")).await;
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(types, ["ticket_opened", "ticket_cancelled"]);
    assert_eq!(
        events[1].actor.map(|a| a.to_string()),
        Some(admin.id.clone())
    );
}
