//! Closing an account whatever its name: other players' keyed retries answer their first bytes
//! (the erased name aside), and every start of the server afterwards serves; its games over days
//! end at once, and its tournaments pair it no more. A keyed retry is the first answer byte for
//! byte, errors included.

use reqwest::StatusCode;
use serde_json::json;
use time::Duration;

use discs::startup::Application;
use domain::ids::PlayerId;
use domain::tournaments::EntrantStatus;

use crate::helpers::{Player, TestApp, chance, config, spawn_app, waiting_for_locks};
use crate::tournaments::at;

fn id_of(p: &Player) -> PlayerId {
    p.id.parse().expect("an id")
}

/// An answer as sent: status, content type and body bytes.
#[derive(Debug, PartialEq)]
struct Raw {
    status: StatusCode,
    content_type: String,
    body: String,
}

async fn keyed(app: &TestApp, p: &Player, path: &str, key: &str, body: serde_json::Value) -> Raw {
    let res = app
        .http
        .post(format!("{}{path}", app.base))
        .bearer_auth(&p.token)
        .header("idempotency-key", key)
        .json(&body)
        .send()
        .await
        .expect("the server answers");
    Raw {
        status: res.status(),
        content_type: res.headers()["content-type"]
            .to_str()
            .expect("ascii")
            .to_owned(),
        body: res.text().await.expect("a body"),
    }
}

async fn close(app: &TestApp, p: &Player) -> String {
    let asked = app
        .post("/v1/players/me/closing", &p.token, json!({}))
        .await;
    assert_eq!(asked.status, StatusCode::OK, "{:?}", asked.body);
    let closed = app
        .post(
            "/v1/players/me/close",
            &p.token,
            json!({"confirmation": asked.body["confirmation"]}),
        )
        .await;
    assert_eq!(closed.status, StatusCode::OK, "{:?}", closed.body);
    closed.body["label"].as_str().expect("a label").to_owned()
}

#[tokio::test]
async fn a_keyed_retry_answers_the_first_bytes_errors_included() {
    let app = spawn_app().await;
    let bob = app.player("Bob").await;
    let ann = app.player("Ann").await;
    let id = app.room_match(&bob, &ann, "reversi").await;
    let path = format!("/v1/matches/{id}/moves");
    let first = keyed(&app, &bob, &path, "k-move", json!({"move": "d3"})).await;
    assert_eq!(first.status, StatusCode::OK, "{first:?}");
    assert_eq!(first.content_type, "application/json");
    assert_eq!(
        keyed(&app, &bob, &path, "k-move", json!({"move": "d3"})).await,
        first
    );
    // A refusal is an answer too: the same problem, bytes and content type.
    let refused = keyed(&app, &bob, &path, "k-again", json!({"move": "a1"})).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{refused:?}");
    assert_eq!(refused.content_type, "application/problem+json");
    assert_eq!(
        keyed(&app, &bob, &path, "k-again", json!({"move": "a1"})).await,
        refused
    );
    // A solo match's creation, stored with its command.
    let solo = json!({"game": "four_in_a_row", "cpu_level": 1});
    let created = keyed(&app, &ann, "/v1/matches", "k-solo", solo.clone()).await;
    assert_eq!(created.status, StatusCode::CREATED, "{created:?}");
    assert_eq!(
        keyed(&app, &ann, "/v1/matches", "k-solo", solo).await,
        created
    );
}

#[tokio::test]
async fn hostile_names_close_cleanly_leave_other_answers_whole_and_every_start_serves() {
    let app = spawn_app().await;
    let bob = app.player("Bob").await;
    let longest = "Ω".repeat(32);
    let names = [
        "\": [",
        "\"",
        "\\",
        "a\\\"b",
        "}]},{",
        "status",
        "waiting",
        "active",
        "name",
        "player_id",
        "human",
        "Bob",
        longest.as_str(),
    ];
    let mut answers: Vec<(String, String, String)> = Vec::new();
    for (n, name) in names.into_iter().enumerate() {
        let x = app.player(name).await;
        let id = app.room_match(&bob, &x, "four_in_a_row").await;
        let path = format!("/v1/matches/{id}/moves");
        let key = format!("bob-{n}");
        let first = keyed(&app, &bob, &path, &key, json!({"move": "4"})).await;
        assert_eq!(first.status, StatusCode::OK, "{name:?}: {first:?}");
        let shown = format!(
            "\"player_id\":\"{}\",\"name\":{}",
            x.id,
            serde_json::to_string(name).expect("a string")
        );
        assert_eq!(
            first.body.matches(&shown).count(),
            1,
            "{name:?}: {}",
            first.body
        );

        let label = close(&app, &x).await;
        let retried = keyed(&app, &bob, &path, &key, json!({"move": "4"})).await;
        let erased = format!("\"player_id\":\"{}\",\"name\":\"{label}\"", x.id);
        assert_eq!(
            retried,
            Raw {
                body: first.body.replace(&shown, &erased),
                ..first
            },
            "{name:?}"
        );
        // Bob's earlier answers, naming players closed before, are untouched by this closing.
        for (path, key, body) in &answers {
            let again = keyed(&app, &bob, path, key, json!({"move": "4"})).await;
            assert_eq!(&again.body, body, "{name:?} changed {key}");
        }
        answers.push((path.clone(), key.clone(), retried.body.clone()));

        // A start of the server after the closing serves, has nothing left to re-apply, and
        // answers the retry as the first instance does; then it stops.
        let again = Application::build_with(config(&app.db_url), app.clock.clone(), chance())
            .await
            .expect("the server starts");
        let base = format!("http://127.0.0.1:{}", again.port());
        let state = again.state();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(again.run_until(async move {
            let _ = stopped.await;
            "the test"
        }));
        assert_eq!(
            service::closing::reapply_closings(&state, &state.history)
                .await
                .expect("re-applied"),
            0,
            "{name:?}"
        );
        let replayed = app
            .http
            .post(format!("{base}{path}"))
            .bearer_auth(&bob.token)
            .header("idempotency-key", &key)
            .json(&json!({"move": "4"}))
            .send()
            .await
            .expect("the restarted server answers");
        assert_eq!(replayed.status(), StatusCode::OK, "{name:?}");
        assert_eq!(replayed.text().await.expect("a body"), retried.body);
        drop(state);
        let _ = stop.send(());
        serving.await.expect("joined").expect("stopped cleanly");
    }
}

#[tokio::test]
async fn closing_an_account_resigns_its_correspondence_games_at_once() {
    let app = spawn_app().await;
    let (ada, bob, cy) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Cy").await,
    );
    // Ada plays two games over days: one where she is to move, one where Cy is.
    let waiting = app
        .room_match_with(&ada, &bob, "four_in_a_row", json!({"days_per_move": 3}))
        .await;
    let moved = app
        .room_match_with(&ada, &cy, "reversi", json!({"days_per_move": 7}))
        .await;
    let res = app.play(&ada, &moved, "d3").await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let mut bobs = crate::player_stream::Frames::open(&app, &bob, None).await;
    close(&app, &ada).await;
    // Both end now, won by the opponent, not days later on time.
    for (id, opponent) in [(&waiting, &bob), (&moved, &cy)] {
        let view = app.view(opponent, id).await;
        assert_eq!(view["status"], "finished", "{view:?}");
        assert_eq!(view["result"]["reason"], "resigned", "{view:?}");
        assert_eq!(view["result"]["winner_seat"], 2, "{view:?}");
    }
    let frames = bobs.next_past_starts(1, &[&waiting]).await;
    assert_eq!(crate::player_stream::kinds(&frames), ["match_ended"]);
    assert_eq!(frames[0].2["match_id"], json!(waiting));
    let res = app.get("/v1/players/me/inbox", &bob.token).await;
    assert_eq!(res.body["their_turn"], json!([]), "{:?}", res.body);
}

#[tokio::test]
async fn a_closed_account_leaves_its_tournaments_and_the_organiser_pairs_it_nowhere() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let mut players = Vec::new();
    for name in ["Ana", "Bia", "Caio", "Duda", "Eva"] {
        players.push(app.player(name).await);
    }
    let now = app.state.now();
    let created = app
        .tournament(
            &admin,
            json!({"game": "four_in_a_row", "format": "arena", "name": "Closings",
                   "starts_at": at(now + Duration::minutes(5)), "minutes": 30}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    for p in &players {
        assert_eq!(app.join(p, &id).await.status, StatusCode::OK);
    }
    // Ana closes her account: the closing withdraws her.
    close(&app, &players[0]).await;
    let t = app.folded(&id).await;
    assert_eq!(
        t.entrant(id_of(&players[0])).expect("joined").status,
        EntrantStatus::Withdrawn
    );
    // Duda's closing committed but its follow-up did not happen (the instance stopped): her
    // entry is still open, and the organiser leaves her out all the same.
    let client = database::testing::raw_client(&app.db_url).await;
    client
        .execute(
            "UPDATE players SET closed_at = now() WHERE player_id = $1::text::uuid",
            &[&players[3].id],
        )
        .await
        .expect("the closing");
    app.clock.advance(Duration::minutes(5));
    // Bia, Caio and Eva: one pairing, one of them waits.
    assert_eq!(app.organise().await.pairings, 1);
    let t = app.folded(&id).await;
    for (name, closed) in [("Ana", &players[0]), ("Duda", &players[3])] {
        assert_eq!(t.games_of(id_of(closed)).count(), 0, "{name} is paired");
    }
}

#[tokio::test]
async fn a_ticket_opened_while_the_closing_commits_is_refused_and_the_closing_stands() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let asked = app
        .post("/v1/players/me/closing", &ada.token, json!({}))
        .await;
    // Ada's standing lock, held here: her closing, then her ticket's opening, queue for it.
    let holder = database::testing::raw_client(&app.db_url).await;
    holder
        .batch_execute(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('standing:' || '{}'::uuid::text, 0))",
            ada.id
        ))
        .await
        .expect("the lock taken");
    let answered = std::cell::Cell::new(false);
    let close = async {
        let res = app
            .post(
                "/v1/players/me/close",
                &ada.token,
                json!({"confirmation": asked.body["confirmation"]}),
            )
            .await;
        answered.set(true);
        res
    };
    let meanwhile = async {
        waiting_for_locks(&app.db_url, "locktype = 'advisory'", 1, || answered.get()).await;
        // Her token still serves: the closing has not committed.
        let open = app.post("/v1/queue", &ada.token, json!({"game": "reversi"}));
        let release = async {
            waiting_for_locks(&app.db_url, "locktype = 'advisory'", 2, || answered.get()).await;
            holder.batch_execute("COMMIT").await.expect("let go");
        };
        tokio::join!(open, release).0
    };
    let (closed, opened) = tokio::join!(close, meanwhile);
    assert_eq!(closed.status, StatusCode::OK, "{:?}", closed.body);
    assert_eq!(
        (opened.status, opened.code()),
        (StatusCode::NOT_FOUND, "not_found"),
        "{:?}",
        opened.body
    );
    let client = database::testing::raw_client(&app.db_url).await;
    let tickets: i64 = client
        .query_one(
            "SELECT count(*) FROM queue_slots WHERE player_id = $1::text::uuid AND ticket_id IS NOT NULL",
            &[&ada.id],
        )
        .await
        .expect("the slots read")
        .get(0);
    assert_eq!(tickets, 0);
}
