//! Concurrency over HTTP: racing moves on one match, idempotent retries.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::spawn_app;

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

/// The one runner of aggregates (`service::aggregates`): a command that also appends to another
/// stream, decided on that stream as read, is decided again when the other stream moves before
/// the append (a ban's cancel of a ticket that its owner cancels meanwhile), and writes once.
#[tokio::test]
async fn a_command_whose_other_stream_moves_under_it_is_decided_again_and_writes_once() {
    use domain::ids::{PlayerId, TicketId};
    use domain::standing::{Command, Decision, Standing};
    use service::aggregates::{self, Asked};

    let app = spawn_app().await;
    let (admin, ada) = (app.admin("Arbiter").await, app.player("Ada").await);
    let queued = app
        .post("/v1/queue", &ada.token, json!({"game": "reversi"}))
        .await;
    assert_eq!(queued.status, StatusCode::CREATED, "{:?}", queued.body);
    let ticket: TicketId = queued.body["ticket_id"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("a ticket");
    let (player, by): (PlayerId, PlayerId) = (
        ada.id.parse().expect("an id"),
        admin.id.parse().expect("an id"),
    );
    let path = &app.state.ranked.path;
    let asked = std::cell::Cell::new(0);
    let (after, cancelled) = aggregates::command_with(
        path,
        &path.standings,
        player,
        Some(by),
        uuid::Uuid::new_v4(),
        async |_: &Standing, now| {
            asked.set(asked.get() + 1);
            let client = path.pool.get().await.expect("a connection");
            let cancel = service::ranked::cancel_waiting(path, &client, player, by, now).await?;
            if asked.get() == 1 {
                // Ada cancels the ticket herself after it was read: the append conflicts.
                service::ranked::cancel_ticket(path, player, ticket).await?;
            }
            let (id, cancel) = cancel.unzip();
            Ok(Asked {
                command: Command {
                    admin: by,
                    decision: Decision::Banned,
                    reason: "relayed an engine".into(),
                },
                context: id,
                also: cancel.into_iter().collect(),
            })
        },
        async |_, _, _, _| Ok(()),
    )
    .await
    .expect("decided again");
    assert_eq!(asked.get(), 2, "asked again after the conflict");
    assert!(after.banned());
    assert_eq!(cancelled, None, "the second ask found no ticket waiting");
    let log = |stream: String| {
        let log = app.state.log.clone();
        async move { log.read_stream(&stream).await.expect("reads") }
    };
    let standing = log(format!("player-{player}")).await;
    assert_eq!(standing.len(), 1, "one decision written");
    let types: Vec<String> = log(format!("ticket-{ticket}"))
        .await
        .into_iter()
        .map(|e| e.event_type)
        .collect();
    assert_eq!(types, ["ticket_opened", "ticket_cancelled"]);
}
