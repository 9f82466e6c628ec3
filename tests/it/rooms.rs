//! Rooms: codes, two members at most, settings between matches, starting and rematches.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::spawn_app;

#[tokio::test]
async fn a_room_takes_two_members_and_shows_its_match() {
    let app = spawn_app().await;
    let (ada, bob, eve) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Eve").await,
    );
    let created = app
        .post(
            "/v1/rooms",
            &ada.token,
            json!({"game": "reversi", "settings": {"turn_seconds": 60}}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    let code = created.body["code"].as_str().expect("code").to_owned();
    let room_id = created.body["room_id"].as_str().expect("id").to_owned();
    assert_eq!(code.len(), 6);
    assert_eq!(created.body["settings"]["turn_seconds"], 60);
    assert_eq!(created.body["settings"]["alternate_first"], true);

    let outsider = app.get(&format!("/v1/rooms/{room_id}"), &bob.token).await;
    assert_eq!(outsider.code(), "forbidden");
    let joined = app
        .post(
            &format!("/v1/rooms/{}/join", code.to_lowercase()),
            &bob.token,
            json!({}),
        )
        .await;
    assert_eq!(joined.status, StatusCode::OK);
    assert_eq!(joined.body["members"].as_array().map(Vec::len), Some(2));
    assert_eq!(joined.body["members"][1]["name"], "Bob");
    let full = app
        .post(&format!("/v1/rooms/{code}/join"), &eve.token, json!({}))
        .await;
    assert_eq!(
        (full.status, full.code()),
        (StatusCode::CONFLICT, "room_full")
    );
    let rejoin = app
        .post(&format!("/v1/rooms/{code}/join"), &bob.token, json!({}))
        .await;
    assert_eq!(rejoin.status, StatusCode::OK, "joining again is harmless");
    let missing = app
        .post("/v1/rooms/ZZZZZZ/join", &eve.token, json!({}))
        .await;
    assert_eq!(missing.code(), "not_found");

    let started = app
        .post(
            &format!("/v1/rooms/{room_id}/matches"),
            &bob.token,
            json!({}),
        )
        .await;
    assert_eq!(started.status, StatusCode::CREATED);
    let match_id = started.body["match_id"].clone();
    assert_eq!(started.body["settings"]["turn_seconds"], 60);
    assert_eq!(
        started.body["to_move"], 1,
        "seat 1 starts the first match by default"
    );
    let room = app.get(&format!("/v1/rooms/{room_id}"), &ada.token).await;
    assert_eq!(
        room.body["match_id"], match_id,
        "the other member finds the match"
    );

    let busy = app
        .post(
            &format!("/v1/rooms/{room_id}/matches"),
            &ada.token,
            json!({}),
        )
        .await;
    assert_eq!(
        (busy.status, busy.code()),
        (StatusCode::CONFLICT, "match_active")
    );
    let patch = app
        .send(
            app.http
                .patch(format!("{}/v1/rooms/{room_id}", app.base))
                .bearer_auth(&ada.token)
                .json(&json!({"settings": {"turn_seconds": 30}})),
        )
        .await;
    assert_eq!(
        (patch.status, patch.code()),
        (StatusCode::CONFLICT, "match_active"),
        "settings change between matches only"
    );
}

#[tokio::test]
async fn rematches_alternate_who_starts_and_settings_change_between_matches() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let room = app.room(&ada, &bob, "four_in_a_row", json!({})).await;
    let room_id = room["room_id"].as_str().expect("id").to_owned();
    let mut starters = Vec::new();
    for round in 0..3 {
        let started = app
            .post(
                &format!("/v1/rooms/{room_id}/matches"),
                &ada.token,
                json!({}),
            )
            .await;
        assert_eq!(started.status, StatusCode::CREATED, "{:?}", started.body);
        let id = started.body["match_id"].as_str().expect("id").to_owned();
        let first = started.body["to_move"].as_u64().expect("a seat");
        starters.push(first);
        let (first_p, _) = if first == 1 {
            (&ada, &bob)
        } else {
            (&bob, &ada)
        };
        let resigned = app
            .post(
                &format!("/v1/matches/{id}/resign"),
                &first_p.token,
                json!({}),
            )
            .await;
        assert_eq!(resigned.body["result"]["reason"], "resigned");
        assert_eq!(
            resigned.body["result"]["winner_seat"],
            if first == 1 { 2 } else { 1 }
        );
        if round == 1 {
            let patch = app
                .send(
                    app.http
                        .patch(format!("{}/v1/rooms/{room_id}", app.base))
                        .bearer_auth(&bob.token)
                        .json(&json!({"settings": {"alternate_first": false}})),
                )
                .await;
            assert_eq!(patch.status, StatusCode::OK, "{:?}", patch.body);
            assert_eq!(patch.body["settings"]["alternate_first"], false);
        }
    }
    assert_eq!(
        starters,
        [1, 2, 2],
        "alternates, then stays once alternate_first is off"
    );
}

#[tokio::test]
async fn alone_in_a_room_you_play_the_cpu() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let created = app
        .post(
            "/v1/rooms",
            &ada.token,
            json!({"game": "four_in_a_row", "settings": {"first": "seat2"}}),
        )
        .await;
    let room_id = created.body["room_id"].as_str().expect("id").to_owned();
    let started = app
        .post(
            &format!("/v1/rooms/{room_id}/matches"),
            &ada.token,
            json!({"cpu_level": 1}),
        )
        .await;
    assert_eq!(started.status, StatusCode::CREATED);
    assert_eq!(started.body["seats"][1]["name"], "CPU");
    assert_eq!(
        started.body["to_move"], 1,
        "the CPU (seat 2) opened at once"
    );
    assert_eq!(started.body["moves"].as_str().map(str::len), Some(1));
}

#[tokio::test]
async fn rooms_idle_for_a_day_are_purged_unused_or_finished() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let idle = app.room(&ada, &bob, "four_in_a_row", json!({})).await;
    let idle_id = idle["room_id"].as_str().expect("a room id").to_owned();
    // A room whose match is played on, and one whose match ended.
    let active = app.room_match(&ada, &bob, "reversi").await;
    let finished = app.room_match(&bob, &ada, "four_in_a_row").await;
    let res = app
        .post(
            &format!("/v1/matches/{finished}/resign"),
            &ada.token,
            json!({}),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    app.project().await;
    let mut rooms = Vec::new();
    for id in [&active, &finished] {
        let view = app.view(&ada, id).await;
        rooms.push(view["room_id"].as_str().expect("a room id").to_owned());
    }
    let (active_room, finished_room) = (rooms[0].clone(), rooms[1].clone());
    app.clock.advance(time::Duration::hours(23));
    let purged = service::workers::purge_rooms(&app.state)
        .await
        .expect("the purge runs");
    assert_eq!(
        purged, 0,
        "a room idle for less than DISCS_ROOM_IDLE_HOURS stays"
    );
    app.clock.advance(time::Duration::hours(2));
    let purged = service::workers::purge_rooms(&app.state)
        .await
        .expect("the purge runs");
    assert_eq!(
        purged, 2,
        "the room never used and the room whose match ended"
    );
    for (room, status) in [
        (idle_id, StatusCode::NOT_FOUND),
        (finished_room, StatusCode::NOT_FOUND),
        (active_room, StatusCode::OK),
    ] {
        let res = app.get(&format!("/v1/rooms/{room}"), &ada.token).await;
        assert_eq!(res.status, status, "{room}: {:?}", res.body);
    }
}
