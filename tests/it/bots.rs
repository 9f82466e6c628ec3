//! Declared bots: an admin's declaration (an event of the player's stream), the BOT tag by the
//! name wherever it is shown, no human pool or tournament, and a bot playing a challenge move by
//! move through the API, told when to move by its own player stream.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{Res, spawn_app};
use crate::player_stream::{Frames, kinds};

fn forbidden_as_bot(res: &Res) {
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::FORBIDDEN, "forbidden"),
        "{:?}",
        res.body
    );
    let detail = res.body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("bot"), "{:?}", res.body);
}

#[tokio::test]
async fn a_declared_bot_is_tagged_kept_out_of_human_play_and_plays_a_challenge_through_its_stream()
{
    let app = spawn_app().await;
    let (admin, ada, deep) = (
        app.admin("Arbiter").await,
        app.player("Ada").await,
        app.player("Deep").await,
    );
    // Waiting in the queue when declared: the declaration closes the ticket.
    let queue = json!({"game": "four_in_a_row"});
    let res = app.post("/v1/queue", &deep.token, queue.clone()).await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    let ticket = res.body["ticket_id"].as_str().expect("a ticket").to_owned();

    let decisions = format!("/v1/admin/players/{}/decisions", deep.id);
    let res = app
        .post(&decisions, &ada.token, json!({"decision": "bot"}))
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "admins only");
    let res = app
        .post(
            &decisions,
            &admin.token,
            json!({"decision": "bot", "reason": "an alpha-beta engine, run by its author"}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    assert_eq!(
        (res.body["bot"].clone(), res.body["banned"].clone()),
        (json!(true), json!(false))
    );
    let events = app
        .state
        .log
        .read_stream(&format!("player-{}", deep.id))
        .await
        .expect("the stream");
    assert_eq!(
        events.last().map(|e| e.event_type.as_str()),
        Some("player_declared_bot")
    );
    let res = app.get(&format!("/v1/queue/{ticket}"), &deep.token).await;
    assert_eq!(res.body["status"], "cancelled", "{:?}", res.body);
    let res = app.get("/v1/admin/players?name=deep", &admin.token).await;
    assert_eq!(res.body["players"][0]["bot"], true, "{:?}", res.body);
    assert_eq!(
        res.body["players"][0]["name"], "Deep",
        "the admin finds the name as it is"
    );

    // No human pool, no tournament; nobody may take the tag for a name.
    forbidden_as_bot(&app.post("/v1/queue", &deep.token, queue).await);
    let now = app.state.now();
    let cup = app
        .tournament(
            &ada,
            json!({"game": "four_in_a_row", "format": "round_robin", "name": "Cup",
                   "starts_at": crate::tournaments::at(now + time::Duration::minutes(30)),
                   "private": true}),
        )
        .await;
    let code = cup["code"].as_str().expect("an invite code");
    forbidden_as_bot(
        &app.post(
            &format!("/v1/tournaments/join/{code}"),
            &deep.token,
            json!({}),
        )
        .await,
    );
    let res = app
        .send(
            app.http
                .post(format!("{}/v1/players", app.base))
                .json(&json!({"name": "BOT Deep"})),
        )
        .await;
    assert_eq!(res.code(), "invalid_request", "{:?}", res.body);

    // A challenge: the bot hears it on its stream, accepts, and moves whenever it is told to.
    let mut stream = Frames::open(&app, &deep, None).await;
    let sent = app
        .post(
            "/v1/challenges",
            &ada.token,
            json!({"opponent": deep.id, "game": "four_in_a_row", "days_per_move": 1,
                   "first": "challenger"}),
        )
        .await;
    assert_eq!(sent.status, StatusCode::CREATED, "{:?}", sent.body);
    let mine = app.get("/v1/challenges", &ada.token).await;
    assert_eq!(
        mine.body["sent"][0]["challenged"]["name"], "BOT Deep",
        "{:?}",
        mine.body
    );
    let heard = stream.next(1).await;
    assert_eq!(kinds(&heard), ["challenge:challenge_sent"]);
    let challenge = heard[0].2["challenge_id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let accepted = app
        .post(
            &format!("/v1/challenges/{challenge}/accept"),
            &deep.token,
            json!({}),
        )
        .await;
    assert_eq!(accepted.status, StatusCode::OK, "{:?}", accepted.body);
    let heard = stream.next(2).await;
    assert_eq!(
        kinds(&heard),
        ["challenge:challenge_accepted", "match_started"]
    );
    let match_id = heard[1].2["match_id"].as_str().expect("a match").to_owned();

    for (hers, its) in [("4", "4"), ("3", "5"), ("2", "1")] {
        let res = app.play(&ada, &match_id, hers).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
        let told = stream.next(1).await;
        assert_eq!(kinds(&told), ["your_turn"]);
        assert_eq!(told[0].2["match_id"], json!(match_id));
        let res = app.play(&deep, &match_id, its).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    }
    let view = app
        .get(&format!("/v1/matches/{match_id}"), &ada.token)
        .await;
    assert_eq!(view.body["seats"][1]["name"], "BOT Deep", "{:?}", view.body);
    assert_eq!(view.body["seats"][0]["name"], "Ada");
    let res = app
        .post(
            &format!("/v1/matches/{match_id}/resign"),
            &ada.token,
            json!({}),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let told = stream.next(1).await;
    assert_eq!(kinds(&told), ["match_ended"]);

    // A human again: the tag goes, the queue opens.
    let res = app
        .post(&decisions, &admin.token, json!({"decision": "human"}))
        .await;
    assert_eq!(res.body["bot"], false, "{:?}", res.body);
    let view = app
        .get(&format!("/v1/matches/{match_id}"), &ada.token)
        .await;
    assert_eq!(view.body["seats"][1]["name"], "Deep");
    let res = app
        .post("/v1/queue", &deep.token, json!({"game": "reversi"}))
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
}
