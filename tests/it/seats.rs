//! One live ranked match per player, whatever starts it (issue 50), and how far a ban reaches,
//! over HTTP on the manual clock: a tournament never pairs a player seated elsewhere (a round
//! robin pauses them, an arena waits until they are free) and nothing done in it frees their
//! seat; a queue wave and a tournament's pairing that race for the same players seat each
//! player once; a ban closes the waiting ticket (one opened while it commits too), pauses the
//! tournament entries and refuses solo matches, room starts and resumes, and the waves and the
//! organiser leave a banned player out;
//! the migration's backfill finds the same seats and bans in the log.

use reqwest::StatusCode;
use serde_json::{Value, json};
use time::Duration;

use domain::ids::PlayerId;
use domain::tournaments::EntrantStatus;
use service::tournaments::organiser::organise;

use crate::helpers::{Player, TestApp, spawn_app, spawn_on, waiting_for_locks};
use crate::tournaments::at;

impl TestApp {
    /// The live ranked match `p` is seated in, as the database holds it.
    async fn seat_of(&self, p: &Player) -> Option<String> {
        let client = database::testing::raw_client(&self.db_url).await;
        client
            .query_opt(
                "SELECT match_id::text FROM ranked_seats WHERE player_id = $1::text::uuid",
                &[&p.id],
            )
            .await
            .expect("the seats read")
            .map(|r| r.get(0))
    }

    /// Asserts that `p` gets no analysis (seated: `in_ranked_match`) of `moves`.
    async fn assert_no_analysis(&self, p: &Player, moves: &str, when: &str) {
        let res = self
            .analyse(p, json!({"game": "four_in_a_row", "moves": moves}), None)
            .await;
        assert_eq!(
            (res.status, res.code()),
            (StatusCode::CONFLICT, "in_ranked_match"),
            "{when}: {:?}",
            res.body
        );
    }

    /// Asserts that the ranked queue refuses `p` with `code`.
    async fn assert_queue_refuses(&self, p: &Player, code: &str, when: &str) {
        let res = self
            .post("/v1/queue", &p.token, json!({"game": "reversi"}))
            .await;
        assert_eq!(
            (res.status, res.code()),
            (StatusCode::CONFLICT, code),
            "{when}: {:?}",
            res.body
        );
    }

    /// An admin's decision on `p`.
    async fn decide_on(&self, admin: &Player, p: &Player, body: Value) {
        let res = self
            .post(
                &format!("/v1/admin/players/{}/decisions", p.id),
                &admin.token,
                body,
            )
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    }
}

fn id_of(p: &Player) -> PlayerId {
    p.id.parse().expect("an id")
}

/// Waits, without sleeping, until `n` sessions wait for a lock on `table`.
async fn blocked_on(app: &TestApp, table: &str, n: i64) {
    let locks = format!("relation = '{table}'::regclass");
    waiting_for_locks(&app.db_url, &locks, n, || false).await;
}

/// Every live match (every work row) is ranked here and seats its two players, and no player
/// is seated twice (the primary key): each player is in one live ranked match at most.
async fn assert_one_match_each(app: &TestApp) -> usize {
    let client = database::testing::raw_client(&app.db_url).await;
    let rows = client
        .query(
            "SELECT w.match_id, count(s.player_id) FROM match_work w \
               LEFT JOIN ranked_seats s ON s.match_id = w.match_id GROUP BY w.match_id",
            &[],
        )
        .await
        .expect("the work rows read");
    for r in &rows {
        let (m, seats): (uuid::Uuid, i64) = (r.get(0), r.get(1));
        assert_eq!(seats, 2, "live match {m} seats {seats} players");
    }
    rows.len()
}

#[tokio::test]
async fn a_round_robin_pauses_a_seated_player_and_leaves_their_seat_where_it_was() {
    let app = spawn_app().await;
    let pia = app.player("Pia").await;
    let quim = app.player("Quim").await;
    let (m1, first, second) = app.ranked_with(&pia, &quim, "four_in_a_row").await;
    assert_eq!(app.play(&first, &m1, "4").await.status, StatusCode::OK);
    assert_eq!(app.play(&second, &m1, "1").await.status, StatusCode::OK);
    app.assert_no_analysis(&pia, "41", "seated in M1").await;
    app.assert_queue_refuses(&pia, "in_match", "seated in M1")
        .await;

    // Pia creates a private rated round robin and joins it, with three friends.
    let now = app.state.now();
    let created = app
        .tournament(
            &pia,
            json!({"game": "four_in_a_row", "format": "round_robin", "name": "Friends",
                   "starts_at": at(now + Duration::minutes(5)), "private": true, "rated": true,
                   "settings": {"turn_seconds": null}}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    let code = created["code"].as_str().expect("a code").to_owned();
    assert_eq!(app.join(&pia, &id).await.status, StatusCode::OK);
    let friends = [
        app.player("Rui").await,
        app.player("Sol").await,
        app.player("Tao").await,
    ];
    for f in &friends {
        let res = app
            .post(&format!("/v1/tournaments/join/{code}"), &f.token, json!({}))
            .await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    }

    // At the start Pia is still seated in M1: paused before the first round, never paired.
    app.clock.advance(Duration::minutes(5));
    let pass = app.organise().await;
    assert!(pass.pauses >= 1, "{pass:?}");
    let t = app.folded(&id).await;
    assert_eq!(t.round, 1);
    assert_eq!(
        t.entrant(id_of(&pia)).expect("joined").status,
        EntrantStatus::Paused
    );
    assert_eq!(t.games_of(id_of(&pia)).count(), 0, "Pia is not paired");
    assert!(t.games.len() == 1, "the friends play: {:?}", t.games);
    assert_eq!(app.seat_of(&pia).await.as_deref(), Some(m1.as_str()));
    app.assert_no_analysis(&pia, "41", "paused in the tournament")
        .await;
    app.assert_queue_refuses(&pia, "in_tournament", "the tournament runs")
        .await;

    // Resumed, she is paused again before the next round while M1 lasts.
    let resumed = app
        .post(
            &format!("/v1/tournaments/{id}/resume"),
            &pia.token,
            json!({}),
        )
        .await;
    assert_eq!(resumed.status, StatusCode::OK, "{:?}", resumed.body);
    let game = &t.games[0];
    let players: Vec<&Player> = game
        .pairing
        .players
        .iter()
        .map(|p| {
            friends
                .iter()
                .find(|f| id_of(f) == *p)
                .expect("a friend plays")
        })
        .collect();
    app.finish_four(
        &game.pairing.match_id.to_string(),
        players[0],
        players[1],
        true,
    )
    .await;
    app.organise().await;
    let t = app.folded(&id).await;
    assert_eq!(t.round, 2);
    assert_eq!(
        t.entrant(id_of(&pia)).expect("joined").status,
        EntrantStatus::Paused
    );
    assert_eq!(t.games_of(id_of(&pia)).count(), 0, "Pia is not paired");

    // Withdrawing leaves the boundary and the queue where they were: M1 is still live.
    let withdrawn = app
        .post(
            &format!("/v1/tournaments/{id}/withdraw"),
            &pia.token,
            json!({}),
        )
        .await;
    assert_eq!(withdrawn.status, StatusCode::OK, "{:?}", withdrawn.body);
    assert_eq!(app.seat_of(&pia).await.as_deref(), Some(m1.as_str()));
    app.assert_no_analysis(&pia, "41", "withdrawn").await;
    app.assert_queue_refuses(&pia, "in_match", "withdrawn")
        .await;

    // M1 ends: the seat goes with it, and both answer again.
    let res = app
        .post(&format!("/v1/matches/{m1}/resign"), &quim.token, json!({}))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(app.seat_of(&pia).await, None);
    let res = app
        .analyse(
            &pia,
            json!({"game": "four_in_a_row", "moves": "41"}),
            Some(50),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app
        .post("/v1/queue", &pia.token, json!({"game": "reversi"}))
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
}

#[tokio::test]
async fn an_arena_pairs_a_seated_player_once_free_and_a_tournament_game_holds_its_seat() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let pia = app.player("Pia").await;
    let quim = app.player("Quim").await;
    let (m1, _, _) = app.ranked_with(&pia, &quim, "four_in_a_row").await;
    let others = [
        app.player("Rui").await,
        app.player("Sol").await,
        app.player("Tao").await,
    ];
    let now = app.state.now();
    let created = app
        .tournament(
            &admin,
            json!({"game": "four_in_a_row", "format": "arena", "name": "Waiting room",
                   "starts_at": at(now + Duration::minutes(1)), "minutes": 30, "rated": true,
                   "settings": {"turn_seconds": null}}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    for p in others.iter().chain([&pia]) {
        assert_eq!(app.join(p, &id).await.status, StatusCode::OK);
    }
    app.clock.advance(Duration::minutes(1));
    let pass = app.organise().await;
    assert_eq!(pass.pairings, 1, "{pass:?}");
    let t = app.folded(&id).await;
    assert_eq!(t.games_of(id_of(&pia)).count(), 0, "Pia waits");
    assert_eq!(
        t.entrant(id_of(&pia)).expect("joined").status,
        EntrantStatus::Joined,
        "an arena does not pause a seated player"
    );
    // Another pass pairs her with nobody while M1 is live.
    let heartbeat = app
        .post(
            &format!("/v1/tournaments/{id}/heartbeat"),
            &pia.token,
            json!({}),
        )
        .await;
    assert_eq!(heartbeat.status, StatusCode::OK, "{:?}", heartbeat.body);
    assert_eq!(app.organise().await.pairings, 0);

    // M1 ends: the next pass pairs her with the one waiting.
    let res = app
        .post(&format!("/v1/matches/{m1}/resign"), &quim.token, json!({}))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(app.organise().await.pairings, 1);
    let t = app.folded(&id).await;
    let game = t.games_of(id_of(&pia)).next().expect("Pia plays").clone();
    let tg = game.pairing.match_id.to_string();
    assert_eq!(app.seat_of(&pia).await.as_deref(), Some(tg.as_str()));

    // Withdrawn while the tournament game is live: still seated, still guarded, still refused.
    let withdrawn = app
        .post(
            &format!("/v1/tournaments/{id}/withdraw"),
            &pia.token,
            json!({}),
        )
        .await;
    assert_eq!(withdrawn.status, StatusCode::OK, "{:?}", withdrawn.body);
    assert_eq!(app.seat_of(&pia).await.as_deref(), Some(tg.as_str()));
    app.assert_no_analysis(&pia, "", "withdrawn, in the game")
        .await;
    app.assert_queue_refuses(&pia, "in_match", "withdrawn, in the game")
        .await;
    // Resigning it ends the game and the seat with it.
    let res = app
        .post(&format!("/v1/matches/{tg}/resign"), &pia.token, json!({}))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(app.seat_of(&pia).await, None);
    assert_eq!(
        assert_one_match_each(&app).await,
        1,
        "the first game goes on"
    );
}

#[tokio::test]
async fn a_wave_and_a_tournament_racing_for_the_same_players_seat_each_once() {
    // Two instances: one runs the queue's wave a minute before the arena starts (so the
    // tickets still count), the other the arena's first pairing at its start.
    let queue = spawn_app().await;
    let organiser = spawn_on(&queue.db_url, crate::helpers::config(&queue.db_url)).await;
    let gap = queue.state.now() - organiser.state.now();
    if gap > Duration::ZERO {
        organiser.clock.advance(gap);
    } else {
        queue.clock.advance(-gap);
    }
    let admin = queue.admin("Arbiter").await;
    let mut players = Vec::new();
    for i in 0..4 {
        players.push(queue.player(&format!("P{i}")).await);
    }
    let now = queue.state.now();
    let created = queue
        .tournament(
            &admin,
            json!({"game": "four_in_a_row", "format": "arena", "name": "Race",
                   "starts_at": at(now + Duration::minutes(10)), "minutes": 30, "rated": true,
                   "settings": {"turn_seconds": null}}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    for p in &players {
        assert_eq!(queue.join(p, &id).await.status, StatusCode::OK);
        let res = queue
            .post("/v1/queue", &p.token, json!({"game": "four_in_a_row"}))
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    }
    queue.project().await;
    queue.clock.advance(Duration::minutes(9));
    organiser.clock.advance(Duration::minutes(10));

    // Both decide on the same four players and block on the seats, then go at once: a
    // player's second seat fails its transaction whole.
    let client = database::testing::raw_client(&queue.db_url).await;
    client
        .batch_execute("BEGIN; LOCK TABLE ranked_seats IN EXCLUSIVE MODE")
        .await
        .expect("the lock");
    let ranked = queue.state.ranked.clone();
    let wave = tokio::spawn(async move { service::ranked::run_waves(&ranked).await });
    let tournaments = organiser.state.tournaments.clone();
    let pass = tokio::spawn(async move { organise(&tournaments).await });
    blocked_on(&queue, "ranked_seats", 2).await;
    client.batch_execute("ROLLBACK").await.expect("unlocked");
    let wave = wave.await.expect("the wave ends").expect("the wave runs");
    let pass = pass
        .await
        .expect("the pass ends")
        .expect("the organiser runs");
    let paired: usize = wave.values().map(|r| r.paired).sum();
    let lost: usize = wave.values().map(|r| r.lost).sum();
    let t = queue.folded(&id).await;
    match (paired, t.games.len()) {
        // The wave won: the arena's step was lost, and nobody is paired in it.
        (2, 0) => assert_eq!(pass.lost, 1, "{pass:?}"),
        // The arena won: both pairings of the wave were lost, the tickets wait.
        (0, 2) => assert_eq!(lost, 2, "{wave:?}"),
        other => panic!("both seated the players: {other:?}, {wave:?}, {pass:?}"),
    }
    assert_eq!(assert_one_match_each(&queue).await, 2);
    for p in &players {
        assert!(queue.seat_of(p).await.is_some(), "{} is seated", p.id);
    }

    // Afterwards neither pairs them again while they play.
    assert_eq!(queue.wave().await, 0);
    let again = organise(&organiser.state.tournaments)
        .await
        .expect("the organiser runs");
    assert_eq!(again.pairings, 0, "{again:?}");
    assert_eq!(assert_one_match_each(&queue).await, 2);
}

#[tokio::test]
async fn a_ban_closes_the_ticket_pauses_the_entries_and_refuses_solo_and_room_starts() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let host = app.player("Host").await;
    let room = app.room(&host, &ada, "four_in_a_row", json!({})).await;
    let room_id = room["room_id"].as_str().expect("a room id").to_owned();
    let now = app.state.now();
    let created = app
        .tournament(
            &admin,
            json!({"game": "reversi", "format": "swiss", "name": "Saturday", "rounds": 3,
                   "starts_at": at(now + Duration::minutes(30))}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    assert_eq!(app.join(&ada, &id).await.status, StatusCode::OK);
    let mut tickets = Vec::new();
    for p in [&ada, &bob] {
        let res = app
            .post("/v1/queue", &p.token, json!({"game": "four_in_a_row"}))
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
        tickets.push(res.body["ticket_id"].as_str().expect("a ticket").to_owned());
    }

    app.decide_on(
        &admin,
        &ada,
        json!({"decision": "banned", "reason": "relayed an engine"}),
    )
    .await;
    // The waiting ticket is closed by the ban, as an event of its stream.
    let ticket = app
        .get(&format!("/v1/queue/{}", tickets[0]), &ada.token)
        .await;
    assert_eq!(ticket.body["status"], "cancelled", "{:?}", ticket.body);
    let events = app
        .state
        .log
        .read_stream(&format!("ticket-{}", tickets[0]))
        .await
        .expect("the ticket reads");
    assert_eq!(
        events.last().map(|e| e.event_type.as_str()),
        Some("ticket_cancelled")
    );
    // The next wave pairs nobody: Bob waits alone.
    app.clock.advance(Duration::seconds(60));
    assert_eq!(app.wave().await, 0);
    let waiting = app
        .get(&format!("/v1/queue/{}", tickets[1]), &bob.token)
        .await;
    assert_eq!(waiting.body["status"], "waiting");
    // The tournament entry is paused, as an event of the tournament's stream.
    let t = app.folded(&id).await;
    assert_eq!(
        t.entrant(id_of(&ada)).expect("joined").status,
        EntrantStatus::Paused
    );
    // Refused: a solo match, a match in the room joined before the ban, a resume, the queue.
    let solo = app
        .post(
            "/v1/matches",
            &ada.token,
            json!({"game": "four_in_a_row", "cpu_level": 1}),
        )
        .await;
    assert_eq!(
        (solo.status, solo.code()),
        (StatusCode::FORBIDDEN, "forbidden")
    );
    // The room's match, by her or by the host, who would seat her.
    let rooms_matches = format!("/v1/rooms/{room_id}/matches");
    let start_by = async |p: &Player| app.post(&rooms_matches, &p.token, json!({})).await;
    for (who, starter) in [("Ada", &ada), ("the host", &host)] {
        let start = start_by(starter).await;
        assert_eq!(
            (start.status, start.code()),
            (StatusCode::FORBIDDEN, "forbidden"),
            "{who}: {:?}",
            start.body
        );
    }
    let resume = app
        .post(
            &format!("/v1/tournaments/{id}/resume"),
            &ada.token,
            json!({}),
        )
        .await;
    assert_eq!(resume.status, StatusCode::FORBIDDEN, "{:?}", resume.body);
    let queued = app
        .post("/v1/queue", &ada.token, json!({"game": "four_in_a_row"}))
        .await;
    assert_eq!(queued.status, StatusCode::FORBIDDEN);

    // Cleared: she plays solo again; her entry stays paused until she resumes it.
    app.decide_on(&admin, &ada, json!({"decision": "cleared"}))
        .await;
    let solo = app
        .post(
            "/v1/matches",
            &ada.token,
            json!({"game": "four_in_a_row", "cpu_level": 1}),
        )
        .await;
    assert_eq!(solo.status, StatusCode::CREATED, "{:?}", solo.body);
    let resume = app
        .post(
            &format!("/v1/tournaments/{id}/resume"),
            &ada.token,
            json!({}),
        )
        .await;
    assert_eq!(resume.status, StatusCode::OK, "{:?}", resume.body);
    // And the host starts the room's match with her.
    let by_host = start_by(&host).await;
    assert_eq!(by_host.status, StatusCode::CREATED, "{:?}", by_host.body);
}

#[tokio::test]
async fn the_waves_and_the_organiser_leave_a_banned_player_out() {
    // A ban recorded whose follow-up did not happen (the instance stopped after the ban's
    // transaction): the ticket and the entry still open, as the log had them before issue 50.
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let players = [
        app.player("Ana").await,
        app.player("Bia").await,
        app.player("Caio").await,
    ];
    let now = app.state.now();
    let created = app
        .tournament(
            &admin,
            json!({"game": "four_in_a_row", "format": "arena", "name": "Banned",
                   "starts_at": at(now + Duration::minutes(5)), "minutes": 30}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    for p in &players[..2] {
        assert_eq!(app.join(p, &id).await.status, StatusCode::OK);
        let res = app
            .post("/v1/queue", &p.token, json!({"game": "reversi"}))
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    }
    assert_eq!(app.join(&players[2], &id).await.status, StatusCode::OK);
    let client = database::testing::raw_client(&app.db_url).await;
    client
        .execute(
            "INSERT INTO player_bans (player_id, banned_at) VALUES ($1::text::uuid, now())",
            &[&players[0].id],
        )
        .await
        .expect("the ban row");
    app.clock.advance(Duration::seconds(60));
    assert_eq!(app.wave().await, 0, "Ana's ticket is left out");
    app.clock.advance(Duration::minutes(5));
    assert_eq!(app.organise().await.pairings, 1);
    let t = app.folded(&id).await;
    assert_eq!(
        t.games_of(id_of(&players[0])).count(),
        0,
        "Ana is not paired"
    );
    assert_eq!(t.games_of(id_of(&players[1])).count(), 1);
}

#[tokio::test]
async fn a_ban_committing_during_an_organiser_pass_is_seen_by_its_step() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let (ana, bia) = (app.player("Ana").await, app.player("Bia").await);
    let now = app.state.now();
    let created = app
        .tournament(
            &admin,
            json!({"game": "four_in_a_row", "format": "arena", "name": "Race", "rated": true,
                   "starts_at": at(now + Duration::minutes(5)), "minutes": 30}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    for p in [&ana, &bia] {
        assert_eq!(app.join(p, &id).await.status, StatusCode::OK);
    }
    app.clock.advance(Duration::minutes(5));

    // Ana's ban is held inside its transaction, after its event and before its ban row, the
    // table being locked: the pass reads Ana as not banned and pairs her with Bia.
    let client = database::testing::raw_client(&app.db_url).await;
    client
        .batch_execute("BEGIN; LOCK TABLE player_bans IN EXCLUSIVE MODE")
        .await
        .expect("the lock");
    let ban = {
        let request = app
            .http
            .post(format!(
                "{}/v1/admin/players/{}/decisions",
                app.base, ana.id
            ))
            .bearer_auth(&admin.token)
            .json(&json!({"decision": "banned", "reason": "relayed an engine"}));
        tokio::spawn(async move { request.send().await.expect("an answer").status() })
    };
    blocked_on(&app, "player_bans", 1).await;
    let tournaments = app.state.tournaments.clone();
    let pass = tokio::spawn(async move { organise(&tournaments).await });
    // The step waits for Ana's standing, which the ban holds (a step that does not wait pairs
    // her, below): then the ban commits.
    waiting_for_locks(&app.db_url, "locktype = 'advisory'", 1, || {
        pass.is_finished()
    })
    .await;
    client.batch_execute("ROLLBACK").await.expect("unlocked");
    assert_eq!(ban.await.expect("the ban ends"), StatusCode::CREATED);
    let pass = pass
        .await
        .expect("the pass ends")
        .expect("the organiser runs");
    assert_eq!((pass.pairings, pass.lost), (0, 1), "{pass:?}");
    let t = app.folded(&id).await;
    assert_eq!(t.games.len(), 0, "nobody paired by the lost step");
    assert!(app.seat_of(&ana).await.is_none() && app.seat_of(&bia).await.is_none());

    // The next pass leaves banned Ana out: Bia alone waits.
    let again = app.organise().await;
    assert_eq!(again.pairings, 0, "{again:?}");
    assert_eq!(app.folded(&id).await.games_of(id_of(&ana)).count(), 0);
}

#[tokio::test]
async fn the_migrations_backfill_seats_the_live_ranked_matches_and_the_banned_players() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let mut players = Vec::new();
    for i in 0..8 {
        players.push(app.player(&format!("P{i}")).await);
    }
    // A live queue match, a finished one, a live rated tournament game.
    app.ranked_with(&players[0], &players[1], "four_in_a_row")
        .await;
    let (done, _, _) = app
        .ranked_with(&players[2], &players[3], "four_in_a_row")
        .await;
    let res = app
        .post(
            &format!("/v1/matches/{done}/resign"),
            &players[2].token,
            json!({}),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let now = app.state.now();
    let created = app
        .tournament(
            &admin,
            json!({"game": "reversi", "format": "arena", "name": "Backfill", "rated": true,
                   "starts_at": at(now + Duration::minutes(5)), "minutes": 30}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    for p in &players[4..6] {
        assert_eq!(app.join(p, &id).await.status, StatusCode::OK);
    }
    app.clock.advance(Duration::minutes(5));
    assert_eq!(app.organise().await.pairings, 1);
    // Banned; banned then cleared.
    let ban = json!({"decision": "banned", "reason": "relayed an engine"});
    app.decide_on(&admin, &players[6], ban.clone()).await;
    app.decide_on(&admin, &players[7], ban).await;
    app.decide_on(&admin, &players[7], json!({"decision": "cleared"}))
        .await;

    let client = database::testing::raw_client(&app.db_url).await;
    let rows = |sql: &'static str| {
        let client = &client;
        async move {
            let mut rows: Vec<String> = client
                .query(sql, &[])
                .await
                .expect("the rows read")
                .iter()
                .map(|r| r.get(0))
                .collect();
            rows.sort();
            rows
        }
    };
    const SEATS: &str = "SELECT player_id::text || ' ' || match_id::text FROM ranked_seats";
    const BANS: &str = "SELECT player_id::text FROM player_bans";
    let (seats, bans) = (rows(SEATS).await, rows(BANS).await);
    assert_eq!(seats.len(), 4, "two live ranked matches: {seats:?}");
    assert_eq!(bans, [players[6].id.clone()]);
    // The migration's backfill, run again on empty tables, finds the same rows in the log.
    let migration =
        std::fs::read_to_string(crate::ownership::root().join("migrations/V21__ranked_seats.sql"))
            .expect("the migration");
    let from = migration
        .find("-- The ranked matches live when this runs")
        .expect("the backfill");
    let backfill = &migration[from..];
    client
        .batch_execute("DELETE FROM ranked_seats; DELETE FROM player_bans")
        .await
        .expect("emptied");
    client.batch_execute(backfill).await.expect("the backfill");
    assert_eq!(rows(SEATS).await, seats);
    assert_eq!(rows(BANS).await, bans);
}

/// A ban and a ticket's opening that race: the opening takes the player's standing lock before
/// their slot's, so it waits for a ban committing meanwhile and is refused; and a ticket that
/// committed after the ban read the player's slot, before the ban took that lock, is closed by
/// the ban. Either way no banned player keeps a waiting ticket.
#[tokio::test]
async fn a_ticket_opened_while_a_ban_commits_is_refused_or_closed_by_the_ban() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);

    // A transaction holding Ada's standing lock with her ban written, as a decision's does
    // between `record_on` and its commit: her ticket's opening waits for it, then is refused.
    let holder = database::testing::raw_client(&app.db_url).await;
    holder
        .batch_execute(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('standing:{0}', 0)); \
             INSERT INTO player_bans (player_id, banned_at) VALUES ('{0}', now())",
            ada.id
        ))
        .await
        .expect("the lock taken");
    let answered = std::cell::Cell::new(false);
    let open = async {
        let res = app
            .post("/v1/queue", &ada.token, json!({"game": "reversi"}))
            .await;
        answered.set(true);
        res
    };
    let release = async {
        waiting_for_locks(&app.db_url, "locktype = 'advisory'", 1, || answered.get()).await;
        holder.batch_execute("COMMIT").await.expect("committed");
    };
    let (opened, ()) = tokio::join!(open, release);
    assert_eq!(
        (opened.status, opened.code()),
        (StatusCode::FORBIDDEN, "forbidden"),
        "{:?}",
        opened.body
    );

    // Bob's ban reads his slot (empty) and stops on his standing stream's row, held here; his
    // ticket opens and commits meanwhile; the ban, let go, closes it under his standing lock.
    app.decide_on(&admin, &bob, json!({"decision": "cleared", "reason": ""}))
        .await;
    let holder = database::testing::raw_client(&app.db_url).await;
    holder
        .batch_execute(&format!(
            "BEGIN; SELECT 1 FROM streams WHERE stream_id = 'player-{}' FOR UPDATE",
            bob.id
        ))
        .await
        .expect("the row locked");
    let decisions = format!("/v1/admin/players/{}/decisions", bob.id);
    let ban = app.post(
        &decisions,
        &admin.token,
        json!({"decision": "banned", "reason": "relayed an engine"}),
    );
    let meanwhile = async {
        // The ban waits for the holder's transaction (a row lock's wait).
        waiting_for_locks(&app.db_url, "locktype = 'transactionid'", 1, || false).await;
        let opened = app
            .post("/v1/queue", &bob.token, json!({"game": "reversi"}))
            .await;
        holder.batch_execute("ROLLBACK").await.expect("let go");
        opened
    };
    let (banned, opened) = tokio::join!(ban, meanwhile);
    assert_eq!(banned.status, StatusCode::CREATED, "{:?}", banned.body);
    assert_eq!(opened.status, StatusCode::CREATED, "{:?}", opened.body);
    let ticket = opened.body["ticket_id"].as_str().expect("a ticket");
    let now = app.get(&format!("/v1/queue/{ticket}"), &bob.token).await;
    assert_eq!(now.body["status"], "cancelled", "{:?}", now.body);
    let events = app
        .state
        .log
        .read_stream(&format!("ticket-{ticket}"))
        .await
        .expect("the ticket reads");
    let last = events.last().expect("its events");
    assert_eq!(last.event_type, "ticket_cancelled");
    assert_eq!(last.actor.map(|a| a.to_string()), Some(admin.id.clone()));
}
