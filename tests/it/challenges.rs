//! Challenges over HTTP: sent, listed both ways, accepted (the match starts on the challenge's
//! terms, ranked when rated), declined with a reason shown in the challenger's language,
//! cancelled and lapsed, each step an event of the challenge's stream; and the refusals
//! (yourself, nobody or only players played, banned, closed, seated, over the bounds).

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{Player, Res, TestApp, spawn_app};

async fn challenge(app: &TestApp, from: &Player, to: &Player, terms: Value) -> Res {
    let mut body = terms;
    body["opponent"] = json!(to.id);
    app.post("/v1/challenges", &from.token, body).await
}

async fn sent(app: &TestApp, from: &Player, to: &Player, terms: Value) -> String {
    let res = challenge(app, from, to, terms).await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    assert_eq!(res.body["status"], "open");
    res.body["challenge_id"].as_str().expect("an id").to_owned()
}

async fn act(app: &TestApp, p: &Player, id: &str, what: &str, body: Value) -> Res {
    app.post(&format!("/v1/challenges/{id}/{what}"), &p.token, body)
        .await
}

fn history(view: &Value) -> Vec<&str> {
    view["history"]
        .as_array()
        .expect("a history")
        .iter()
        .map(|s| s["type"].as_str().expect("a type"))
        .collect()
}

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|c| c["challenge_id"].as_str().expect("an id"))
        .collect()
}

async fn set_accepting(app: &TestApp, p: &Player, accepting: &str) {
    let res = app
        .send(
            app.http
                .put(format!("{}/v1/players/me/challenge-settings", app.base))
                .bearer_auth(&p.token)
                .json(&json!({ "accepting": accepting })),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let read = app.get("/v1/players/me/challenge-settings", &p.token).await;
    assert_eq!(read.body["accepting"], accepting);
}

#[tokio::test]
async fn an_accepted_challenge_starts_its_match_on_its_terms() {
    let app = spawn_app().await;
    let (ada, bob, cy) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Cy").await,
    );
    let terms = json!({"game": "reversi", "turn_seconds": 30, "first": "challenged"});
    let id = sent(&app, &ada, &bob, terms).await;

    let mine = app.get("/v1/challenges", &ada.token).await;
    assert_eq!(
        (ids(&mine.body["sent"]), ids(&mine.body["received"]).len()),
        (vec![id.as_str()], 0)
    );
    let theirs = app.get("/v1/challenges", &bob.token).await;
    assert_eq!(ids(&theirs.body["received"]), vec![id.as_str()]);
    assert_eq!(theirs.body["received"][0]["challenger"]["name"], "Ada");
    assert_eq!(theirs.body["received"][0]["turn_seconds"], 30);

    // Only its two players see it; only the challenged player answers it.
    let res = app.get(&format!("/v1/challenges/{id}"), &cy.token).await;
    assert_eq!(res.status, StatusCode::NOT_FOUND, "{:?}", res.body);
    let res = act(&app, &cy, &id, "accept", json!({})).await;
    assert_eq!(res.status, StatusCode::NOT_FOUND, "{:?}", res.body);
    let res = act(&app, &ada, &id, "accept", json!({})).await;
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::FORBIDDEN, "forbidden")
    );

    let res = act(&app, &bob, &id, "accept", json!({})).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(res.body["status"], "accepted");
    assert_eq!(res.body["challenger_first"], false);
    assert_eq!(history(&res.body), ["challenge_sent", "challenge_accepted"]);
    let match_id = res.body["match_id"].as_str().expect("its match").to_owned();

    let view = app.view(&bob, &match_id).await;
    assert_eq!(view["game"], "reversi");
    assert_eq!(view["ranked"], false);
    assert_eq!(view["settings"]["turn_seconds"], 30);
    assert_eq!(view["seats"][0]["player_id"], json!(ada.id));
    assert_eq!(view["seats"][1]["player_id"], json!(bob.id));
    assert_eq!(view["to_move"], 2, "the challenged player moves first");
    let res = app.play(&bob, &match_id, "d3").await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);

    // Answered once: accepting again is refused and starts nothing.
    let res = act(&app, &bob, &id, "accept", json!({})).await;
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::CONFLICT, "challenge_closed")
    );
    let theirs = app.get("/v1/challenges", &bob.token).await;
    assert!(ids(&theirs.body["received"]).is_empty());
    let read = app.get(&format!("/v1/challenges/{id}"), &ada.token).await;
    assert_eq!(
        history(&read.body),
        ["challenge_sent", "challenge_accepted"]
    );
    assert_eq!(read.body["match_id"], json!(match_id));
}

#[tokio::test]
async fn a_rated_challenge_makes_a_ranked_match_and_a_seated_player_cannot_accept_another() {
    let app = spawn_app().await;
    let (ada, bob, cy) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Cy").await,
    );
    let first = sent(
        &app,
        &ada,
        &bob,
        json!({"game": "four_in_a_row", "rated": true}),
    )
    .await;
    let second = sent(&app, &cy, &ada, json!({"game": "reversi", "rated": true})).await;
    let casual = sent(&app, &cy, &ada, json!({"game": "reversi"})).await;
    let res = act(&app, &bob, &first, "accept", json!({})).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let ranked = res.body["match_id"].as_str().expect("a match").to_owned();
    assert_eq!(app.view(&ada, &ranked).await["ranked"], true);

    // Seated: the queue, the analysis and a second rated challenge refuse Ada alike.
    let res = app
        .post("/v1/queue", &ada.token, json!({"game": "reversi"}))
        .await;
    assert_eq!(res.status, StatusCode::CONFLICT, "{:?}", res.body);
    let res = app
        .analyse(&ada, json!({"game": "reversi", "moves": ""}), Some(50))
        .await;
    assert_eq!(res.code(), "in_ranked_match", "{:?}", res.body);
    let res = act(&app, &ada, &second, "accept", json!({})).await;
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::CONFLICT, "in_ranked_match"),
        "{:?}",
        res.body
    );
    let read = app
        .get(&format!("/v1/challenges/{second}"), &ada.token)
        .await;
    assert_eq!(read.body["status"], "open", "the refusal changed nothing");
    // A casual game is no second ranked match.
    let res = act(&app, &ada, &casual, "accept", json!({})).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);

    // The ranked match ends: the rated challenge may be accepted.
    let res = app
        .post(
            &format!("/v1/matches/{ranked}/resign"),
            &bob.token,
            json!({}),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = act(&app, &ada, &second, "accept", json!({})).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let next = res.body["match_id"].as_str().expect("a match");
    assert_eq!(app.view(&cy, next).await["ranked"], true);
}

#[tokio::test]
async fn declined_cancelled_and_lapsed_challenges_keep_their_steps() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let terms = json!({"game": "four_in_a_row", "turn_seconds": 30});

    let declined = sent(&app, &ada, &bob, terms.clone()).await;
    let res = act(&app, &ada, &declined, "decline", json!({})).await;
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::FORBIDDEN, "forbidden")
    );
    let res = act(&app, &bob, &declined, "decline", json!({"reason": "slow"})).await;
    assert_eq!(
        res.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{:?}",
        res.body
    );
    let res = act(
        &app,
        &bob,
        &declined,
        "decline",
        json!({"reason": "too_fast"}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(res.body["status"], "declined");
    assert_eq!(history(&res.body), ["challenge_sent", "challenge_declined"]);
    let read = app
        .get_in("pt-BR", &format!("/v1/challenges/{declined}"), &ada.token)
        .await;
    assert_eq!(read.body["declined"], "too_fast");
    let text = read.body["declined_text"].as_str().expect("a text");
    assert!(text.contains("rápido"), "{text}");

    let cancelled = sent(&app, &ada, &bob, terms.clone()).await;
    let res = act(&app, &bob, &cancelled, "cancel", json!({})).await;
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::FORBIDDEN, "forbidden")
    );
    let res = act(&app, &ada, &cancelled, "cancel", json!({})).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(
        history(&res.body),
        ["challenge_sent", "challenge_cancelled"]
    );
    let res = act(&app, &bob, &cancelled, "accept", json!({})).await;
    assert_eq!(res.code(), "challenge_closed", "{:?}", res.body);

    // Nobody answers: a day later it lapses, whichever instance's workers see it.
    let lapsing = sent(&app, &ada, &bob, terms).await;
    app.advance(23 * 3600).await;
    let read = app
        .get(&format!("/v1/challenges/{lapsing}"), &bob.token)
        .await;
    assert_eq!(read.body["status"], "open");
    app.advance(3600).await;
    let read = app
        .get(&format!("/v1/challenges/{lapsing}"), &bob.token)
        .await;
    assert_eq!(read.body["status"], "expired", "{:?}", read.body);
    assert_eq!(history(&read.body), ["challenge_sent", "challenge_expired"]);
    let res = act(&app, &bob, &lapsing, "accept", json!({})).await;
    assert_eq!(res.code(), "challenge_closed", "{:?}", res.body);
    assert!(ids(&app.get("/v1/challenges", &bob.token).await.body["received"]).is_empty());
}

#[tokio::test]
async fn who_may_be_challenged_and_how_often() {
    let app = spawn_app().await;
    let (ada, bob, admin) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.admin("Root").await,
    );
    let terms = json!({"game": "four_in_a_row"});

    let res = challenge(&app, &ada, &ada, terms.clone()).await;
    assert_eq!(
        res.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{:?}",
        res.body
    );
    let nobody = Player {
        id: uuid::Uuid::new_v4().to_string(),
        token: String::new(),
    };
    let res = challenge(&app, &ada, &nobody, terms.clone()).await;
    assert_eq!(res.status, StatusCode::NOT_FOUND, "{:?}", res.body);

    // Bob takes challenges from nobody, then from players he has played.
    set_accepting(&app, &bob, "nobody").await;
    let res = challenge(&app, &ada, &bob, terms.clone()).await;
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::FORBIDDEN, "forbidden")
    );
    set_accepting(&app, &bob, "played").await;
    let res = challenge(&app, &ada, &bob, terms.clone()).await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{:?}", res.body);
    let played = app.room_match(&ada, &bob, "four_in_a_row").await;
    app.finish_four(&played, &ada, &bob, true).await;
    app.project().await;
    sent(&app, &ada, &bob, terms.clone()).await;

    // Banned: neither challenges nor is challenged; an open challenge to them cannot start.
    let dan = app.player("Dan").await;
    let open_to_dan = sent(&app, &ada, &dan, terms.clone()).await;
    let res = app
        .post(
            &format!("/v1/admin/players/{}/decisions", dan.id),
            &admin.token,
            json!({"decision": "banned", "reason": "relayed an engine"}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    let res = challenge(&app, &dan, &ada, terms.clone()).await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{:?}", res.body);
    let res = challenge(&app, &ada, &dan, terms.clone()).await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{:?}", res.body);
    // The ban withdrew it: an event of its stream, and no match.
    let read = app
        .get(&format!("/v1/challenges/{open_to_dan}"), &ada.token)
        .await;
    assert_eq!(read.body["status"], "withdrawn", "{:?}", read.body);
    assert_eq!(
        history(&read.body),
        ["challenge_sent", "challenge_withdrawn"]
    );
    let res = act(&app, &dan, &open_to_dan, "accept", json!({})).await;
    assert_eq!(res.code(), "challenge_closed", "{:?}", res.body);

    // Closed: not challenged; what was open to them is withdrawn.
    let eve = app.player("Eve").await;
    let open_to_eve = sent(&app, &ada, &eve, terms.clone()).await;
    let asked = app
        .post("/v1/players/me/closing", &eve.token, json!({}))
        .await;
    let closed = app
        .post(
            "/v1/players/me/close",
            &eve.token,
            json!({"confirmation": asked.body["confirmation"]}),
        )
        .await;
    assert_eq!(closed.status, StatusCode::OK, "{:?}", closed.body);
    let res = challenge(&app, &ada, &eve, terms.clone()).await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{:?}", res.body);
    let read = app
        .get(&format!("/v1/challenges/{open_to_eve}"), &ada.token)
        .await;
    assert_eq!(read.body["status"], "withdrawn", "{:?}", read.body);

    // The bounds: 5 a minute (Ada sent 3 this minute: to Bob, Dan and Eve), 10 open at once
    // (1 is: to Bob; the ban and the closing withdrew the others).
    let mut others = Vec::new();
    for i in 0..10 {
        others.push(app.player(&format!("P{i}")).await);
    }
    let cy = app.player("Cy").await;
    for p in &others[..2] {
        sent(&app, &ada, p, terms.clone()).await;
    }
    let res = challenge(&app, &ada, &others[2], terms.clone()).await;
    res.assert_rate_limited("60");
    app.clock.advance(time::Duration::seconds(61));
    for p in &others[2..7] {
        sent(&app, &ada, p, terms.clone()).await;
    }
    app.clock.advance(time::Duration::seconds(61));
    sent(&app, &ada, &others[7], terms.clone()).await;
    sent(&app, &ada, &others[8], terms.clone()).await;
    let res = challenge(&app, &ada, &others[9], terms.clone()).await;
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
        "{:?}",
        res.body
    );
    // Another player's bounds are their own.
    sent(&app, &cy, &others[9], terms).await;
}
