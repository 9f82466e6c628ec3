//! Leaving, coming back, the CPU standing in, turn limits and presence — with a manual clock —
//! and two instances running the background work at once.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{Player, TestApp, spawn_app, spawn_on, types};

async fn room_match(app: &TestApp, a: &Player, b: &Player, settings: Value) -> String {
    app.room_match_with(a, b, "four_in_a_row", settings).await
}

#[tokio::test]
async fn a_player_who_leaves_is_replaced_by_the_cpu_until_they_return() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = room_match(&app, &ada, &bob, json!({})).await;
    assert_eq!(app.play(&ada, &id, "4").await.status, StatusCode::OK);
    let left = app
        .post(&format!("/v1/matches/{id}/leave"), &bob.token, json!({}))
        .await;
    assert_eq!(left.status, StatusCode::OK);
    assert_eq!(left.body["seats"][1]["controller"], "away");

    // Within return_seconds nothing happens (Ada keeps the stream alive meanwhile).
    app.advance(20).await;
    app.post(
        &format!("/v1/matches/{id}/heartbeat"),
        &ada.token,
        json!({}),
    )
    .await;
    app.advance(20).await;
    app.post(
        &format!("/v1/matches/{id}/heartbeat"),
        &ada.token,
        json!({}),
    )
    .await;
    let view = app.view(&ada, &id).await;
    assert_eq!(view["seats"][1]["controller"], "away");
    assert_eq!(view["moves"], "4");

    // Past return_seconds the CPU takes the seat and plays Bob's turn.
    app.advance(21).await;
    let view = app.view(&ada, &id).await;
    assert_eq!(view["seats"][1]["controller"], "cpu");
    assert_eq!(
        view["moves"].as_str().map(str::len),
        Some(2),
        "the stand-in moved"
    );
    let events = app.events(&ada, &id).await;
    let t = types(&events);
    assert!(
        t.contains(&"player_left") && t.contains(&"cpu_took_over"),
        "{t:?}"
    );
    let cpu_move = events
        .iter()
        .rev()
        .find(|e| e["type"] == "move_played")
        .expect("a move");
    assert_eq!(cpu_move["data"]["by"], "cpu");
    assert_eq!(cpu_move["data"]["seat"], 2);

    // Bob comes back (any call of his on the match) and has his seat again.
    let back = app.get(&format!("/v1/matches/{id}"), &bob.token).await;
    assert_eq!(back.body["seats"][1]["controller"], "human");
    assert_eq!(
        types(&app.events(&ada, &id).await).last(),
        Some(&"player_returned")
    );
    let again = app
        .post(&format!("/v1/matches/{id}/return"), &bob.token, json!({}))
        .await;
    assert_eq!(
        again.status,
        StatusCode::OK,
        "returning when here is harmless"
    );
}

#[tokio::test]
async fn a_turn_runs_out_and_the_cpu_plays_that_one_move() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = room_match(&app, &ada, &bob, json!({"turn_seconds": 30})).await;
    let view = app.play(&ada, &id, "4").await.body;
    assert!(view["deadline"].is_string(), "{view:?}");
    app.advance(29).await;
    assert_eq!(app.view(&ada, &id).await["moves"], "4");
    app.post(
        &format!("/v1/matches/{id}/heartbeat"),
        &ada.token,
        json!({}),
    )
    .await;
    app.post(
        &format!("/v1/matches/{id}/heartbeat"),
        &bob.token,
        json!({}),
    )
    .await;
    app.advance(1).await;
    let view = app.view(&ada, &id).await;
    assert_eq!(view["moves"].as_str().map(str::len), Some(2));
    assert_eq!(view["to_move"], 1);
    assert_eq!(
        view["seats"][1]["controller"], "human",
        "only that one move"
    );
    let events = app.events(&ada, &id).await;
    let t = types(&events);
    assert_eq!(&t[t.len() - 2..], ["turn_timed_out", "move_played"]);
    assert_eq!(events.last().expect("event")["data"]["by"], "cpu");
    // Running the workers again fires nothing more.
    assert_eq!(app.run_workers().await, 0);
    assert_eq!(app.events(&ada, &id).await.len(), events.len());
}

#[tokio::test]
async fn a_silent_player_is_marked_away_after_presence_seconds() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = room_match(&app, &ada, &bob, json!({})).await;
    app.advance(25).await;
    app.post(
        &format!("/v1/matches/{id}/heartbeat"),
        &ada.token,
        json!({}),
    )
    .await;
    app.advance(6).await;
    let events = app.events(&ada, &id).await;
    let left: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "player_left")
        .collect();
    assert_eq!(left.len(), 1, "{events:?}");
    assert_eq!(left[0]["data"], json!({"seat": 2, "reason": "absent"}));
}

#[tokio::test]
async fn two_instances_never_fire_a_timeout_twice() {
    let app = spawn_app().await;
    let other = spawn_on(&app.db_url, crate::helpers::config(&app.db_url)).await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let mut ids = Vec::new();
    for _ in 0..6 {
        let id = room_match(&app, &ada, &bob, json!({"turn_seconds": 30})).await;
        app.play(&ada, &id, "4").await;
        ids.push(id);
    }
    app.clock.advance(time::Duration::seconds(31));
    other.clock.advance(time::Duration::seconds(31));
    let (a, b) = tokio::join!(
        service::workers::run_until_idle(&app.state),
        service::workers::run_until_idle(&other.state)
    );
    a.expect("first instance");
    b.expect("second instance");
    for id in &ids {
        let events = app.events(&ada, id).await;
        let t = types(&events);
        assert_eq!(
            t.iter().filter(|x| **x == "turn_timed_out").count(),
            1,
            "{t:?}"
        );
        assert_eq!(
            t.iter().filter(|x| **x == "move_played").count(),
            2,
            "{t:?}"
        );
    }
}
