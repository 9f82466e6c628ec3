//! Whole games over HTTP: to a win and to a draw in each game, solo against the CPU, and replay
//! at every ply equal to the live board.

use reqwest::StatusCode;
use serde_json::{Value, json};

use domain::games::{AnyPosition, GameId};

use crate::helpers::{Player, TestApp, spawn_app, types};

/// A complete Four in a Row game in which no disc completes a line of four.
const DRAW_42: &str = "257771314744647214154617633623313656555222";

/// Plays `moves` in a room match of `host` (seat 1, moves first) and `guest`; returns the
/// views after each move and the match id.
async fn play_room_game(
    app: &TestApp,
    host: &Player,
    guest: &Player,
    game: &str,
    moves: &[String],
) -> (String, Vec<Value>) {
    let room = app.room(host, guest, game, json!({})).await;
    let room_id = room["room_id"].as_str().expect("a room id");
    let started = app
        .post(
            &format!("/v1/rooms/{room_id}/matches"),
            &host.token,
            json!({}),
        )
        .await;
    assert_eq!(started.status, StatusCode::CREATED, "{:?}", started.body);
    let match_id = started.body["match_id"]
        .as_str()
        .expect("a match id")
        .to_owned();
    let mut views = vec![started.body.clone()];
    for mv in moves {
        let to_move = views.last().expect("a view")["to_move"].as_u64();
        let player = if to_move == Some(1) { host } else { guest };
        let res = app.play(player, &match_id, mv).await;
        assert_eq!(res.status, StatusCode::OK, "{mv}: {:?}", res.body);
        views.push(res.body);
    }
    (match_id, views)
}

fn split(game: GameId, moves: &str) -> Vec<String> {
    domain::games::split_moves(game, moves).expect("moves")
}

#[tokio::test]
async fn a_four_in_a_row_game_is_won_over_http() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let (id, views) = play_room_game(
        &app,
        &ada,
        &bob,
        "four_in_a_row",
        &split(GameId::FourInARow, "4141414"),
    )
    .await;
    let last = views.last().expect("a view");
    assert_eq!(last["status"], "finished");
    assert_eq!(last["to_move"], Value::Null);
    assert_eq!(last["legal_moves"], json!([]));
    assert_eq!(last["moves"], "4141414");
    assert_eq!(
        last["result"],
        json!({"outcome": "win", "winner_seat": 1, "reason": "four_in_a_row", "discs": {"R": 4, "Y": 3}})
    );
    assert_eq!(last["seats"][0]["color"], "R");
    assert_eq!(last["seats"][1]["name"], "Bob");
    let events = app.events(&ada, &id).await;
    assert_eq!(types(&events).first(), Some(&"match_created"));
    assert_eq!(types(&events).last(), Some(&"match_ended"));
    assert_eq!(events.len(), 9, "created, 7 moves, ended");
    let after = app.play(&bob, &id, "2").await;
    assert_eq!(after.code(), "match_finished");
}

#[tokio::test]
async fn a_four_in_a_row_game_is_drawn_over_http() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let (_, views) = play_room_game(
        &app,
        &ada,
        &bob,
        "four_in_a_row",
        &split(GameId::FourInARow, DRAW_42),
    )
    .await;
    let last = views.last().expect("a view");
    assert_eq!(
        last["result"],
        json!({"outcome": "draw", "winner_seat": null, "reason": "board_full", "discs": {"R": 21, "Y": 21}})
    );
}

/// A Reversi game (seeded random play) that ends the way `want` says.
fn reversi_game(want: impl Fn(&AnyPosition) -> bool) -> String {
    reversi_game_from("", want)
}

/// A Reversi game that starts with `prefix` and goes on by seeded random play, ending the way
/// `want` says.
fn reversi_game_from(prefix: &str, want: impl Fn(&AnyPosition) -> bool) -> String {
    let mut seed: u64 = 7;
    for _ in 0..200_000 {
        let mut p = AnyPosition::start(GameId::Reversi);
        for mv in split(GameId::Reversi, prefix) {
            p.play(&mv).expect("a legal prefix");
        }
        let mut moves = prefix.to_owned();
        while p.outcome().is_none() {
            if p.must_pass() {
                p.pass();
            }
            let legal = p.legal_moves();
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mv = legal[((seed >> 33) % legal.len() as u64) as usize].clone();
            p.play(&mv).expect("legal");
            moves.push_str(&mv);
        }
        if want(&p) {
            return moves;
        }
    }
    panic!("no such game");
}

#[tokio::test]
async fn reversi_games_are_won_and_drawn_over_http_with_their_passes() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    for (wanted, outcome) in [("win", "win"), ("draw", "draw")] {
        let moves = reversi_game(|p| {
            let end = p.outcome().expect("over");
            (end.winner.is_none()) == (wanted == "draw")
        });
        let (id, views) =
            play_room_game(&app, &ada, &bob, "reversi", &split(GameId::Reversi, &moves)).await;
        let last = views.last().expect("a view");
        assert_eq!(last["result"]["outcome"], outcome, "{moves}");
        assert_eq!(last["moves"], moves);
        let discs = &last["result"]["discs"];
        let (b, w) = (
            discs["B"].as_u64().unwrap_or(0),
            discs["W"].as_u64().unwrap_or(0),
        );
        match outcome {
            "draw" => assert_eq!(b, w),
            _ => assert_ne!(b, w),
        }
        // Every pass is an event of the same command as the move that caused it.
        let events = app.events(&ada, &id).await;
        let played = types(&events)
            .iter()
            .filter(|t| **t == "move_played")
            .count();
        assert_eq!(played * 2, moves.len());
    }
}

#[tokio::test]
async fn a_solo_game_against_the_cpu_runs_to_its_end() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    for game in ["four_in_a_row", "reversi"] {
        let view = app
            .solo(&ada, game, json!({"cpu_level": 1, "first": "cpu"}))
            .await;
        let id = view["match_id"].as_str().expect("an id").to_owned();
        assert_eq!(view["seats"][1]["name"], "CPU");
        assert_eq!(view["seats"][1]["player_id"], Value::Null);
        assert_eq!(view["seats"][1]["controller"], "cpu");
        assert_eq!(
            view["moves"].as_str().map(str::len),
            Some(if game == "reversi" { 2 } else { 1 }),
            "the CPU opened"
        );
        let mut view = view;
        while view["status"] == "active" {
            assert_eq!(
                view["to_move"], 1,
                "after the CPU's reply it is the player's turn"
            );
            let mv = view["legal_moves"][0]
                .as_str()
                .expect("a legal move")
                .to_owned();
            let res = app.play(&ada, &id, &mv).await;
            assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
            view = app.view(&ada, &id).await;
        }
        let events = app.events(&ada, &id).await;
        let cpu_moves = events
            .iter()
            .filter(|e| e["type"] == "move_played" && e["data"]["by"] == "cpu")
            .count();
        assert!(cpu_moves > 0);
        assert_eq!(types(&events).last(), Some(&"match_ended"));
    }
}

#[tokio::test]
async fn unknown_and_unplayable_cpu_levels_are_refused() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    for level in [0, 6, 9] {
        let res = app
            .post(
                "/v1/matches",
                &ada.token,
                json!({"game": "reversi", "cpu_level": level}),
            )
            .await;
        assert_eq!(
            res.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "level {level}"
        );
        assert_eq!(res.code(), "invalid_request");
    }
}

#[tokio::test]
async fn replay_at_every_ply_equals_the_live_board() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    // The Tiger (the list's c4e3f6e6f5, turned to start f5), then wherever play goes.
    let moves = reversi_game_from("f5d6c3d3c4", |p| p.ply() < 60);
    let (id, views) =
        play_room_game(&app, &ada, &bob, "reversi", &split(GameId::Reversi, &moves)).await;
    let replay = app
        .get(&format!("/v1/matches/{id}/replay"), &ada.token)
        .await;
    assert_eq!(replay.status, StatusCode::OK);
    assert_eq!(replay.body["moves"], moves);
    // Named by the Tiger or a longer line through it.
    let opening = &replay.body["opening"];
    let line = opening["line"].as_str().expect("a named opening");
    assert!(line.starts_with("C4e3F6e6F5"), "{opening}");
    assert!(opening["plies"].as_u64() >= Some(5), "{opening}");
    assert!(opening["name"].as_str().is_some_and(|n| !n.is_empty()));
    let plies = replay.body["plies"].as_array().expect("plies");
    assert_eq!(plies.len(), views.len());
    for (n, (ply, view)) in plies.iter().zip(&views).enumerate() {
        assert_eq!(ply["ply"], n);
        assert_eq!(ply["board"], view["board"], "ply {n}");
        assert_eq!(ply["to_move"], view["to_move"], "ply {n}");
        assert_eq!(ply["legal_moves"], view["legal_moves"], "ply {n}");
    }
    assert_eq!(plies[0]["seat"], Value::Null);
    assert_eq!(plies[0]["move"], Value::Null);
    let one = app
        .get(&format!("/v1/matches/{id}/replay?ply=3"), &bob.token)
        .await;
    assert_eq!(one.body["plies"].as_array().map(Vec::len), Some(1));
    assert_eq!(one.body["plies"][0]["board"], views[3]["board"]);
    let past = app
        .get(&format!("/v1/matches/{id}/replay?ply=99"), &bob.token)
        .await;
    assert_eq!(past.code(), "invalid_request");
}

#[tokio::test]
async fn reversi_can_hide_legal_moves_and_four_in_a_row_cannot() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let view = app
        .solo(
            &ada,
            "reversi",
            json!({"settings": {"show_legal_moves": false}}),
        )
        .await;
    assert_eq!(view["legal_moves"], json!([]));
    assert_eq!(view["settings"]["show_legal_moves"], false);
    let res = app
        .post(
            "/v1/matches",
            &ada.token,
            json!({"game": "four_in_a_row", "settings": {"show_legal_moves": false}}),
        )
        .await;
    assert_eq!(res.code(), "invalid_request");
}

#[tokio::test]
async fn a_match_whose_creation_was_written_at_schema_version_one_replays_to_the_same_match() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let id = app.solo_four(&ada).await;
    for mv in ["4", "3"] {
        let res = app.play(&ada, &id, mv).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    }
    let original = app
        .state
        .log
        .read_stream(&format!("match-{id}"))
        .await
        .expect("the stream");
    assert_eq!(original[0].event_type, "match_created");
    assert_eq!(original[0].schema_version, 2, "this build writes board");
    assert_eq!(original[0].data["board"], json!({"columns": 7, "rows": 6}));
    // The same events as the build before `board` wrote them: match_created at version 1,
    // without the field, in a stream of their own.
    let copy = domain::ids::MatchId::from_uuid(uuid::Uuid::new_v4());
    let events = original
        .iter()
        .map(|e| {
            let (mut data, mut schema_version) = (e.data.clone(), e.schema_version);
            if e.event_type == "match_created" {
                data.as_object_mut().expect("an object").remove("board");
                schema_version = 1;
            }
            eventlog::NewEvent {
                event_type: e.event_type.clone(),
                schema_version,
                data,
                actor: e.actor,
                recorded_at: e.recorded_at,
            }
        })
        .collect();
    let appended = app
        .state
        .log
        .append(
            uuid::Uuid::new_v4(),
            eventlog::StreamAppend {
                stream: copy.stream(),
                expected_version: 0,
                events,
            },
        )
        .await
        .expect("the old-shaped stream is appended");
    assert!(matches!(appended, eventlog::AppendOutcome::Appended(_)));
    let copy = copy.to_string();
    let (mut now, mut old) = (app.view(&ada, &id).await, app.view(&ada, &copy).await);
    assert_eq!(old["match_id"], json!(copy));
    now["match_id"] = Value::Null;
    old["match_id"] = Value::Null;
    assert_eq!(old, now);
    // History is not rewritten: the copy's creation is still in its old shape.
    let stored = app.events(&ada, &copy).await;
    assert_eq!(stored[0]["type"], "match_created");
    assert_eq!(stored[0]["data"].get("board"), None);
    // And the match goes on from it.
    let res = app.play(&ada, &copy, "5").await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
}
