//! Correspondence games (days per move): the deadline is a row the workers read by time, so a
//! game is lost on time by whichever instance sees it due, after a restart too; nobody is away
//! and the CPU never plays one; a challenge may offer one; the correspondence pool pairs and
//! rates on a ladder of its own, seats nobody, and its live games are guarded by the boundary.

use reqwest::StatusCode;
use serde_json::json;
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use crate::helpers::{Player, TestApp, config, spawn_app, spawn_on, types};

fn deadline(view: &serde_json::Value) -> OffsetDateTime {
    OffsetDateTime::parse(view["deadline"].as_str().expect("a deadline"), &Rfc3339).expect("a time")
}

#[tokio::test]
async fn a_correspondence_game_is_lost_on_time_across_a_restart() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = app
        .room_match_with(&ada, &bob, "four_in_a_row", json!({"days_per_move": 1}))
        .await;
    let view = app.view(&ada, &id).await;
    assert_eq!(view["settings"]["days_per_move"], 1);
    let started = deadline(&view);
    assert_eq!(started - app.state.now(), Duration::days(1));

    // Half a day later Ada moves: Bob has a whole day from then.
    app.advance(12 * 3600).await;
    let res = app.play(&ada, &id, "4").await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let view = app.view(&bob, &id).await;
    assert_eq!(deadline(&view), started + Duration::hours(12));
    // Played over days, it is read from the log when it moves: never kept in memory, and no
    // work row for the workers' scan of real-time play; its deadline is a row of its own.
    let match_id: domain::ids::MatchId = id.parse().expect("a match id");
    assert!(app.state.cache.get(match_id).is_none());
    let client = database::testing::raw_client(&app.db_url).await;
    let work: i64 = client
        .query_one(
            "SELECT count(*) FROM match_work WHERE match_id = $1",
            &[&match_id.as_uuid()],
        )
        .await
        .expect("a count")
        .get(0);
    assert_eq!(work, 0);
    let due: OffsetDateTime = client
        .query_one(
            "SELECT due FROM correspondence_games WHERE match_id = $1",
            &[&match_id.as_uuid()],
        )
        .await
        .expect("a due row")
        .get(0);
    assert_eq!(due, deadline(&view));
    // Nobody is away in a correspondence game: hours without a call, and both are still here.
    app.advance(20 * 3600).await;
    let view = app.view(&ada, &id).await;
    assert_eq!(view["status"], "active");
    for seat in view["seats"].as_array().expect("seats") {
        assert_eq!(seat["controller"], "human", "{seat}");
    }
    let res = app
        .post(&format!("/v1/matches/{id}/leave"), &bob.token, json!({}))
        .await;
    assert_eq!(res.status, StatusCode::CONFLICT, "{:?}", res.body);

    // Another instance starts on the database, with no match in its memory, a day later: its
    // workers find the deadline among the rows and Bob loses on time.
    let later = spawn_on(&app.db_url, config(&app.db_url)).await;
    later
        .clock
        .advance(app.state.now() - later.state.now() + Duration::days(1));
    assert!(later.state.now() > deadline(&view));
    later.run_workers().await;
    let view = later.view(&ada, &id).await;
    assert_eq!(view["status"], "finished", "{view}");
    assert_eq!(view["result"]["reason"], "out_of_time");
    assert_eq!(view["result"]["winner_seat"], 1);
    let events = later.events(&ada, &id).await;
    assert_eq!(
        types(&events)[events.len() - 2..],
        ["turn_timed_out", "match_ended"]
    );
    let left: i64 = client
        .query_one(
            "SELECT count(*) FROM correspondence_games WHERE match_id = $1",
            &[&match_id.as_uuid()],
        )
        .await
        .expect("a count")
        .get(0);
    assert_eq!(left, 0, "an ended game's due row goes");
}

#[tokio::test]
async fn the_cpu_never_plays_a_correspondence_game() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let res = app
        .post(
            "/v1/matches",
            &ada.token,
            json!({"game": "reversi", "cpu_level": 1, "settings": {"days_per_move": 3}}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CONFLICT, "{:?}", res.body);
    let room = app
        .post(
            "/v1/rooms",
            &ada.token,
            json!({"game": "reversi", "settings": {"days_per_move": 3}}),
        )
        .await;
    assert_eq!(room.status, StatusCode::CREATED, "{:?}", room.body);
    let alone = app
        .post(
            &format!(
                "/v1/rooms/{}/matches",
                room.body["room_id"].as_str().expect("an id")
            ),
            &ada.token,
            json!({}),
        )
        .await;
    assert_eq!(alone.status, StatusCode::CONFLICT, "{:?}", alone.body);
    // One clock a match, and only the offered days.
    for settings in [
        json!({"days_per_move": 3, "turn_seconds": 30}),
        json!({"days_per_move": 4}),
    ] {
        let res = app
            .post(
                "/v1/rooms",
                &ada.token,
                json!({"game": "reversi", "settings": settings}),
            )
            .await;
        assert_eq!(
            res.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{settings}: {:?}",
            res.body
        );
    }
}

#[tokio::test]
async fn a_challenge_offers_a_correspondence_game() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let sent = app
        .post(
            "/v1/challenges",
            &ada.token,
            json!({"opponent": bob.id, "game": "reversi", "days_per_move": 3,
                   "first": "challenger"}),
        )
        .await;
    assert_eq!(sent.status, StatusCode::CREATED, "{:?}", sent.body);
    assert_eq!(sent.body["days_per_move"], 3);
    let listed = app.get("/v1/challenges", &bob.token).await;
    assert_eq!(listed.body["received"][0]["days_per_move"], 3);
    let id = sent.body["challenge_id"].as_str().expect("an id");
    let accepted = app
        .post(
            &format!("/v1/challenges/{id}/accept"),
            &bob.token,
            json!({}),
        )
        .await;
    assert_eq!(accepted.status, StatusCode::OK, "{:?}", accepted.body);
    let match_id = accepted.body["match_id"].as_str().expect("a match");
    let view = app.view(&ada, match_id).await;
    assert_eq!(view["settings"]["days_per_move"], 3);
    assert_eq!(view["ranked"], false);
    assert_eq!(deadline(&view) - app.state.now(), Duration::days(3));
}

async fn inbox(app: &TestApp, p: &Player) -> serde_json::Value {
    let res = app.get("/v1/players/me/inbox", &p.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    res.body
}

#[tokio::test]
async fn the_inbox_lists_the_games_awaiting_your_move_nearest_deadline_first() {
    let app = spawn_app().await;
    let (ada, bob, cy) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Cy").await,
    );
    // Ada moves first in both: a 3-day game with Bob, then a 1-day game with Cy.
    let slow = app
        .room_match_with(&ada, &bob, "four_in_a_row", json!({"days_per_move": 3}))
        .await;
    app.advance(3600).await;
    let fast = app
        .room_match_with(&ada, &cy, "reversi", json!({"days_per_move": 1}))
        .await;
    let turns = |body: &serde_json::Value| -> Vec<String> {
        body["your_turn"]
            .as_array()
            .expect("a list")
            .iter()
            .map(|t| t["match_id"].as_str().expect("an id").to_owned())
            .collect()
    };
    let mine = inbox(&app, &ada).await;
    assert_eq!(turns(&mine), [fast.as_str(), slow.as_str()], "{mine}");
    assert_eq!(mine["your_turn"][0]["opponent"]["name"], "Cy");
    assert_eq!(mine["your_turn"][0]["days_per_move"], 1);
    assert!(turns(&inbox(&app, &bob).await).is_empty());

    // Ada moves in the slow game: it leaves her inbox for Bob's.
    let res = app.play(&ada, &slow, "4").await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(turns(&inbox(&app, &ada).await), [fast.as_str()]);
    assert_eq!(turns(&inbox(&app, &bob).await), [slow.as_str()]);

    // A challenge shows in both inboxes; a real-time game never does.
    let res = app
        .post(
            "/v1/challenges",
            &cy.token,
            json!({"opponent": bob.id, "game": "reversi", "days_per_move": 7}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    let bobs = inbox(&app, &bob).await;
    assert_eq!(
        bobs["challenges"]["received"][0]["challenger"]["name"],
        "Cy"
    );
    let cys = inbox(&app, &cy).await;
    assert_eq!(cys["challenges"]["sent"][0]["challenged"]["name"], "Bob");
    app.room_match(&bob, &cy, "four_in_a_row").await;
    assert_eq!(turns(&inbox(&app, &bob).await), [slow.as_str()]);

    // A game that ends leaves the inbox.
    let res = app
        .post(&format!("/v1/matches/{slow}/resign"), &bob.token, json!({}))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert!(turns(&inbox(&app, &bob).await).is_empty());
}

#[tokio::test]
async fn the_correspondence_pool_pairs_and_rates_on_its_own_ladder_and_seats_nobody() {
    use domain::games::GameId;
    let app = spawn_app().await;
    let (ada, bob, cy, dee) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Cy").await,
        app.player("Dee").await,
    );
    // Ada sits in a live ranked match: that keeps her from the real-time queue, not from the
    // correspondence pool.
    let (live, _, _) = app.ranked_with(&ada, &cy, "four_in_a_row").await;
    let res = app
        .post("/v1/queue", &ada.token, json!({"game": "reversi"}))
        .await;
    assert_eq!(res.code(), "in_match", "{:?}", res.body);
    let res = app
        .post(
            "/v1/queue",
            &ada.token,
            json!({"game": "reversi", "days_per_move": 3, "turn_seconds": 30}),
        )
        .await;
    assert_eq!(
        res.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{:?}",
        res.body
    );
    let pool = json!({"game": "reversi", "days_per_move": 3});
    for p in [&ada, &bob] {
        let res = app.post("/v1/queue", &p.token, pool.clone()).await;
        assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
        assert_eq!(res.body["days_per_move"], 3);
    }
    app.clock.advance(Duration::seconds(60));
    assert_eq!(app.wave().await, 1, "one pair, in the correspondence pool");
    let view = app.latest_match(&bob).await;
    assert_eq!(
        (
            view["ranked"].clone(),
            view["settings"]["days_per_move"].clone()
        ),
        (json!(true), json!(3))
    );
    let id = view["match_id"].as_str().expect("an id").to_owned();
    let first_is_ada = view["seats"][0]["player_id"] == json!(ada.id);
    let (first, second) = if first_is_ada {
        (&ada, &bob)
    } else {
        (&bob, &ada)
    };
    // Nobody is seated by it: Bob may queue for real-time play while it runs.
    let res = app
        .post("/v1/queue", &bob.token, json!({"game": "four_in_a_row"}))
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    let ticket = res.body["ticket_id"].as_str().expect("a ticket").to_owned();
    let res = app.delete(&format!("/v1/queue/{ticket}"), &bob.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);

    // Past its public opening, the game is guarded as a live ranked match is: Dee gets nothing
    // of its position; Bob, who plays only correspondence, still analyses what is not guarded.
    let (line, _) = crate::boundary::live_line(GameId::Reversi, 20, 11);
    crate::boundary::play_line(&app, &id, first, second, &line).await;
    let asked = json!({"game": "reversi", "moves": line.concat()});
    let res = app.analyse(&dee, asked.clone(), Some(50)).await;
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::CONFLICT, "in_ranked_match"),
        "{:?}",
        res.body
    );
    let start = json!({"game": "four_in_a_row", "moves": "44"});
    let res = app.analyse(&bob, start.clone(), Some(50)).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app.analyse(&ada, start, Some(50)).await;
    assert_eq!(
        res.code(),
        "in_ranked_match",
        "seated in real time: {:?}",
        res.body
    );

    // It ends: rated on Reversi's correspondence ladder only, then answered in full.
    let res = app
        .post(&format!("/v1/matches/{id}/resign"), &bob.token, json!({}))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app
        .post(&format!("/v1/matches/{live}/resign"), &cy.token, json!({}))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    app.project().await;
    let profile = app
        .get(&format!("/v1/players/{}", ada.id), &dee.token)
        .await;
    assert_eq!(
        profile.body["correspondence"]["reversi"]["games"], 1,
        "{:?}",
        profile.body
    );
    assert_eq!(profile.body["ratings"]["reversi"]["games"], 0);
    assert_eq!(profile.body["ratings"]["four_in_a_row"]["games"], 1);
    let won = profile.body["correspondence"]["reversi"]["rating"]
        .as_f64()
        .expect("a rating");
    assert!(won > 1500.0, "{won}");
    let points = app
        .get(
            &format!("/v1/players/{}/ratings/reversi?correspondence=true", ada.id),
            &dee.token,
        )
        .await;
    assert_eq!(
        points.body["points"][0]["match_id"],
        json!(id),
        "{:?}",
        points.body
    );
    let points = app
        .get(
            &format!("/v1/players/{}/ratings/reversi", ada.id),
            &dee.token,
        )
        .await;
    assert_eq!(points.body["points"], json!([]));
    let history = app
        .get(&format!("/v1/players/{}/matches", ada.id), &dee.token)
        .await;
    let mut paces: Vec<(&str, bool)> = history.body["matches"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|m| {
            (
                m["game"].as_str().unwrap_or_default(),
                m["correspondence"] == true,
            )
        })
        .collect();
    paces.sort_unstable();
    assert_eq!(
        paces,
        [("four_in_a_row", false), ("reversi", true)],
        "{history:?}"
    );
    let admin = app.admin("Arbiter").await;
    let audit = app.get("/v1/admin/audits/ratings", &admin.token).await;
    assert_eq!(audit.body["mismatches"], json!([]), "{:?}", audit.body);
    let explained = app
        .get(
            &format!(
                "/v1/admin/players/{}/ratings/reversi/explain?correspondence=true",
                ada.id
            ),
            &admin.token,
        )
        .await;
    assert_eq!(
        explained.body["log_check"]["agrees"], true,
        "{:?}",
        explained.body
    );
    assert_eq!(explained.body["steps"][0]["match_id"], json!(id));
    let res = app.analyse(&dee, asked, Some(50)).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
}

/// A rated Four in a Row correspondence game (2 days a move) of `a` and `b`, paired by the
/// pool: its id, and its players in the order they move.
async fn rated_four_in_a_row<'p>(
    app: &TestApp,
    a: &'p Player,
    b: &'p Player,
) -> (String, &'p Player, &'p Player) {
    let pool = json!({"game": "four_in_a_row", "days_per_move": 2});
    for p in [a, b] {
        let res = app.post("/v1/queue", &p.token, pool.clone()).await;
        assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    }
    app.clock.advance(Duration::seconds(60));
    assert_eq!(app.wave().await, 1);
    let view = app.latest_match(b).await;
    let id = view["match_id"].as_str().expect("an id").to_owned();
    if view["seats"][0]["player_id"] == json!(a.id) {
        (id, a, b)
    } else {
        (id, b, a)
    }
}

#[tokio::test]
async fn every_instance_holds_the_correspondence_guards_as_they_change_and_lets_them_go() {
    use domain::games::GameId;
    let app = spawn_app().await;
    let other = spawn_on(&app.db_url, config(&app.db_url)).await;
    let (ada, bob, dee) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Dee").await,
    );
    let (id, first, second) = rated_four_in_a_row(&app, &ada, &bob).await;
    // The other instance reads the guards while there is none (the game in its public
    // opening), then holds them.
    let (line, _) = crate::boundary::live_line(GameId::FourInARow, 12, 3);
    let at = |plies: usize| json!({"game": "four_in_a_row", "moves": line[..plies].concat()});
    crate::boundary::play_line(&app, &id, first, second, &line[..7]).await;
    for plies in [10, 12] {
        let res = other.analyse(&dee, at(plies), Some(50)).await;
        assert_eq!(res.status, StatusCode::OK, "{plies}: {:?}", res.body);
    }
    // Played on the first instance: the guard written reaches the other one's next question,
    // as do the positions that can follow it.
    crate::boundary::play_line(&app, &id, second, first, &line[7..10]).await;
    for plies in [10, 12] {
        let res = other.analyse(&dee, at(plies), Some(50)).await;
        assert_eq!(res.code(), "in_ranked_match", "{plies}: {:?}", res.body);
    }
    // It ends: the guard is dropped under a number, and the other instance lets it go.
    let res = app
        .post(&format!("/v1/matches/{id}/resign"), &bob.token, json!({}))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    for plies in [10, 12] {
        let res = other.analyse(&dee, at(plies), Some(50)).await;
        assert_eq!(res.status, StatusCode::OK, "{plies}: {:?}", res.body);
    }
    let client = database::testing::raw_client(&app.db_url).await;
    let drops: Vec<String> = client
        .query("SELECT match_id::text FROM guard_drops", &[])
        .await
        .expect("the drops")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(drops, [id]);
}

#[tokio::test]
async fn a_due_row_written_late_from_an_older_version_leaves_the_newer_one() {
    use domain::games::GameId;
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let (id, first, second) = rated_four_in_a_row(&app, &ada, &bob).await;
    let (line, _) = crate::boundary::live_line(GameId::FourInARow, 10, 5);
    crate::boundary::play_line(&app, &id, first, second, &line[..9]).await;
    let match_id: domain::ids::MatchId = id.parse().expect("a match id");
    let older = service::live::play::load_fresh(&app.state, match_id)
        .await
        .expect("the match");
    app.advance(3600).await;
    crate::boundary::play_line(&app, &id, second, first, &line[9..10]).await;
    let client = database::testing::raw_client(&app.db_url).await;
    let row = async || -> (String, i64, OffsetDateTime) {
        let r = client
            .query_one(
                "SELECT live_key, version, due FROM correspondence_games \
                  WHERE match_id = $1::text::uuid",
                &[&id],
            )
            .await
            .expect("the due row");
        (r.get(0), r.get(1), r.get(2))
    };
    let newer = row().await;
    assert_eq!(
        newer.1, 11,
        "written from the version of its creation and ten moves"
    );
    // The ninth move's write, arriving late: nothing changes.
    service::live::correspondence::keep_due(&app.state, &older)
        .await
        .expect("written");
    assert_eq!(row().await, newer);
}
