//! Limits against abuse that hold per match and per player: leaving a match over and over, and
//! more solo matches against the long-searching CPU levels than one player can play.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{TestApp, spawn_app};

/// `POST /v1/matches/{id}/{what}` with an empty body.
async fn presence(app: &TestApp, token: &str, id: &str, what: &str) -> crate::helpers::Res {
    app.post(&format!("/v1/matches/{id}/{what}"), token, json!({}))
        .await
}

#[tokio::test]
async fn leaving_a_match_beyond_the_allowance_gets_429_until_the_match_has_run_long_enough() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let id = app.solo_four(&ada).await;
    // The allowance at once (DISCS_LEAVES_PER_MATCH = 5 in the tests' configuration).
    for round in 1..=5 {
        let left = presence(&app, &ada.token, &id, "leave").await;
        assert_eq!(
            left.status,
            StatusCode::OK,
            "leave {round}: {:?}",
            left.body
        );
        let back = presence(&app, &ada.token, &id, "return").await;
        assert_eq!(
            back.status,
            StatusCode::OK,
            "return {round}: {:?}",
            back.body
        );
    }
    let version = app.view(&ada, &id).await["version"].clone();
    let refused = presence(&app, &ada.token, &id, "leave").await;
    // One more leave is earned after DISCS_LEAVE_REFILL_SECONDS = 300 s of the match.
    refused.assert_rate_limited("300");
    let view = app.view(&ada, &id).await;
    assert_eq!(view["version"], version, "a refused leave writes nothing");
    assert!(
        app.metrics_text()
            .await
            .contains("discs_rate_limited_total{limit=\"leaves\"} 1\n")
    );
    // The next leave is earned with the match's time.
    app.clock.advance(time::Duration::seconds(299));
    let still = presence(&app, &ada.token, &id, "leave").await;
    still.assert_rate_limited("1");
    app.clock.advance(time::Duration::seconds(1));
    let earned = presence(&app, &ada.token, &id, "leave").await;
    assert_eq!(earned.status, StatusCode::OK, "{:?}", earned.body);
    let again = presence(&app, &ada.token, &id, "return").await;
    assert_eq!(again.status, StatusCode::OK, "{:?}", again.body);
    let next = presence(&app, &ada.token, &id, "leave").await;
    next.assert_rate_limited("300");
}

#[tokio::test]
async fn a_fourth_active_solo_match_against_levels_four_and_five_gets_429() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let bob = app.player("Bob").await;
    let strong = |level: u8, game: &str| json!({"game": game, "cpu_level": level, "first": "me"});
    // DISCS_STRONG_SOLO_PER_PLAYER = 3 in the tests' configuration.
    let mut ids = Vec::new();
    for (level, game) in [(4, "four_in_a_row"), (5, "reversi"), (4, "reversi")] {
        let res = app
            .post("/v1/matches", &ada.token, strong(level, game))
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
        ids.push(res.body["match_id"].as_str().expect("an id").to_owned());
    }
    let refused = app
        .post("/v1/matches", &ada.token, strong(5, "four_in_a_row"))
        .await;
    refused.assert_rate_limited("60");
    assert!(
        app.metrics_text()
            .await
            .contains("discs_rate_limited_total{limit=\"strong_solo\"} 1\n")
    );
    // Weaker levels, and other players, are not held back.
    app.solo(&ada, "four_in_a_row", json!({"cpu_level": 3}))
        .await;
    app.post("/v1/matches", &bob.token, strong(5, "four_in_a_row"))
        .await;
    // A match that ends frees its place.
    let resigned = app
        .post(
            &format!("/v1/matches/{}/resign", ids[0]),
            &ada.token,
            json!({}),
        )
        .await;
    assert_eq!(resigned.status, StatusCode::OK, "{:?}", resigned.body);
    let res = app
        .post("/v1/matches", &ada.token, strong(5, "four_in_a_row"))
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
}

#[tokio::test]
async fn racing_creations_of_strong_solo_matches_never_pass_the_limit_together() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    // DISCS_STRONG_SOLO_PER_PLAYER = 3: twelve creations at once, each with its own key.
    let attempts = (0..12).map(|i| {
        let game = if i % 2 == 0 {
            "reversi"
        } else {
            "four_in_a_row"
        };
        app.post(
            "/v1/matches",
            &ada.token,
            json!({"game": game, "cpu_level": 5, "first": "me"}),
        )
    });
    let answers = futures_util::future::join_all(attempts).await;
    let created = answers
        .iter()
        .filter(|r| r.status == StatusCode::CREATED)
        .count();
    for refused in answers.iter().filter(|r| r.status != StatusCode::CREATED) {
        refused.assert_rate_limited("60");
    }
    assert!((1..=3).contains(&created), "{created} created");
    // Whatever raced, the player holds no more than the limit, and the next one is refused.
    let next = app
        .post(
            "/v1/matches",
            &ada.token,
            json!({"game": "reversi", "cpu_level": 4, "first": "me"}),
        )
        .await;
    if created == 3 {
        next.assert_rate_limited("60");
    } else {
        assert_eq!(next.status, StatusCode::CREATED, "{:?}", next.body);
    }
}
