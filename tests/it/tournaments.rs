//! Tournaments over HTTP on the manual clock: an arena and a Swiss tournament to their ends,
//! round robins, private tournaments, the bad inputs (which change nothing), the ranked queue's
//! exclusion, the event stream, an admin's removal whose what-if equals a recount of the log,
//! two instances organising one tournament at once, and a step's events stamped in time order
//! after a game that ended during the pass.

use std::collections::{HashMap, HashSet};

use reqwest::StatusCode;
use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use domain::ids::{PlayerId, TournamentId};
use domain::tournaments::Tournament;
use domain::tournaments::standings::standings;
use service::tournaments::organiser::{Pass, organise};

use crate::helpers::{Player, TestApp, spawn_app, spawn_on, waiting_for_locks};

pub(crate) fn at(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).expect("a time")
}

impl TestApp {
    /// Organiser passes on this instance until every game whose match has ended has its
    /// result (a pass reads results up to the log's commit horizon, which a transaction still
    /// running anywhere in the cluster holds back: a result may wait a pass); their sum.
    pub(crate) async fn organise(&self) -> Pass {
        let mut total = Pass::default();
        for _ in 0..10_000 {
            let pass = organise(&self.state.tournaments)
                .await
                .expect("the organiser runs");
            total.tournaments = pass.tournaments;
            total.steps += pass.steps;
            total.pairings += pass.pairings;
            total.results += pass.results;
            total.pauses += pass.pauses;
            total.lost += pass.lost;
            if !self.an_ended_game_waits().await {
                return total;
            }
            tokio::task::yield_now().await;
        }
        panic!("results never recorded");
    }

    /// Whether some tournament has a game without a result whose match has ended.
    async fn an_ended_game_waits(&self) -> bool {
        let client = database::testing::raw_client(&self.db_url).await;
        let rows = client
            .query("SELECT tournament_id FROM tournament_schedule", &[])
            .await
            .expect("the schedule reads");
        for row in rows {
            let id: uuid::Uuid = row.get(0);
            let t = self.folded(&id.to_string()).await;
            for g in t.unfinished() {
                let events = self
                    .state
                    .log
                    .read_stream(&g.pairing.match_id.stream())
                    .await
                    .expect("the match reads");
                if events.iter().any(|e| e.event_type == "match_ended") {
                    return true;
                }
            }
        }
        false
    }

    /// Creates a tournament as `by`; its view.
    pub(crate) async fn tournament(&self, by: &Player, body: Value) -> Value {
        let res = self.post("/v1/tournaments", &by.token, body).await;
        assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
        res.body
    }

    pub(crate) async fn join(&self, p: &Player, id: &str) -> crate::helpers::Res {
        self.post(&format!("/v1/tournaments/{id}/join"), &p.token, json!({}))
            .await
    }

    /// The tournament's stream folded, as the log has it.
    pub(crate) async fn folded(&self, id: &str) -> Tournament {
        let id: TournamentId = id.parse().expect("an id");
        let events = self
            .state
            .log
            .read_stream(&id.stream())
            .await
            .expect("the stream reads");
        let folded = service::aggregates::fold::<Tournament>(None, &events).expect("it folds");
        Tournament::clone(&folded.expect("it exists"))
    }

    /// Plays every game under way of tournament `id` to its end (the first mover wins when
    /// `first_wins` says so for the pair); returns how many.
    async fn play_round(
        &self,
        id: &str,
        players: &[Player],
        first_wins: impl Fn(&Player, &Player) -> bool,
    ) -> usize {
        let t = self.folded(id).await;
        let by_id: HashMap<PlayerId, &Player> = players
            .iter()
            .map(|p| (p.id.parse().expect("an id"), p))
            .collect();
        let games: Vec<_> = t.unfinished().cloned().collect();
        for g in &games {
            let [a, b] = g.pairing.players;
            let (first, second) = (by_id[&a], by_id[&b]);
            self.finish_four(
                &g.pairing.match_id.to_string(),
                first,
                second,
                first_wins(first, second),
            )
            .await;
        }
        games.len()
    }
}

/// Nobody is in two games without a result, and no game is paired twice.
fn assert_consistent(t: &Tournament) {
    let mut playing = HashSet::new();
    for g in t.unfinished() {
        for p in g.pairing.players {
            assert!(playing.insert(p), "{p} is in two games at once");
        }
    }
    let matches: HashSet<_> = t.games.iter().map(|g| g.pairing.match_id).collect();
    assert_eq!(matches.len(), t.games.len(), "a match paired twice");
}

#[tokio::test]
async fn an_arena_pairs_records_and_finishes_on_the_manual_clock() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let players = [
        app.player("Ana").await,
        app.player("Bia").await,
        app.player("Caio").await,
        app.player("Duda").await,
    ];
    let now = app.state.now();
    let created = app
        .tournament(
            &admin,
            json!({"game": "four_in_a_row", "format": "arena", "name": "Friday arena",
                   "starts_at": at(now + Duration::minutes(30)), "minutes": 20,
                   "rated": true, "settings": {"turn_seconds": null}}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    assert_eq!(created["status"], "open");
    for p in &players {
        let res = app.join(p, &id).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
        assert_eq!(res.body["status"], "joined");
    }
    // Before the start: nothing to do, and the ranked queue is open to them.
    assert_eq!(app.organise().await.steps, 0);
    let queued = app
        .post("/v1/queue", &players[0].token, json!({"game": "reversi"}))
        .await;
    assert_eq!(queued.status, StatusCode::CREATED, "{:?}", queued.body);
    let ticket = queued.body["ticket_id"]
        .as_str()
        .expect("a ticket")
        .to_owned();
    assert_eq!(
        app.delete(&format!("/v1/queue/{ticket}"), &players[0].token)
            .await
            .status,
        StatusCode::OK
    );

    app.clock.advance(Duration::minutes(30));
    let pass = app.organise().await;
    assert_eq!((pass.steps, pass.pairings), (1, 2), "{pass:?}");
    let t = app.folded(&id).await;
    assert_consistent(&t);
    // Running: the queue refuses them, the view shows each player's game.
    let refused = app
        .post("/v1/queue", &players[1].token, json!({"game": "reversi"}))
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert_eq!(refused.code(), "in_tournament");
    let view = app
        .get(&format!("/v1/tournaments/{id}"), &players[0].token)
        .await;
    assert_eq!(view.body["status"], "running");
    let mine = view.body["me"]["match_id"]
        .as_str()
        .expect("a game")
        .to_owned();
    let game = app.view(&players[0], &mine).await;
    assert_eq!(game["tournament_id"], id.as_str());
    assert_eq!(game["ranked"], true);
    // A rated game's seated player gets no analysis.
    let analysis = app
        .analyse(
            &players[0],
            json!({"game": "four_in_a_row", "moves": ""}),
            None,
        )
        .await;
    assert_eq!(analysis.code(), "in_ranked_match", "{:?}", analysis.body);

    // The first movers win: 2 points each; the next wave pairs nobody with their last opponent.
    assert_eq!(app.play_round(&id, &players, |_, _| true).await, 2);
    let pass = app.organise().await;
    assert_eq!((pass.results, pass.pairings), (2, 2), "{pass:?}");
    let t = app.folded(&id).await;
    assert_consistent(&t);
    for p in t.entrants.iter().map(|e| e.player_id) {
        let games: Vec<_> = t.games_of(p).collect();
        assert_ne!(
            games[0].pairing.players, games[1].pairing.players,
            "an immediate rematch"
        );
    }
    // Winners again: a player with two wins in a row is on fire.
    app.play_round(&id, &players, |_, _| true).await;
    app.organise().await;
    app.project().await;
    let standings = app
        .get(
            &format!("/v1/tournaments/{id}/standings"),
            &players[0].token,
        )
        .await;
    assert_eq!(standings.status, StatusCode::OK, "{:?}", standings.body);
    let lines = standings.body["standings"].as_array().expect("lines");
    assert_eq!(lines.len(), 4);
    let folded = standings_of(&app.folded(&id).await);
    for line in lines {
        let p = line["player_id"].as_str().expect("an id");
        assert_eq!(line["score"], folded[p].0, "{line}");
        assert_eq!(line["rank"], folded[p].1, "{line}");
    }
    assert!(standings.body["me"]["rank"].as_u64().is_some());
    let pairings = app
        .get(&format!("/v1/tournaments/{id}/pairings"), &players[0].token)
        .await;
    assert!(
        pairings.body["pairings"]
            .as_array()
            .expect("pairings")
            .len()
            >= 4,
        "{:?}",
        pairings.body
    );

    // The end: pairing closes a minute before; at the end the games under way finish first.
    app.clock
        .advance(Duration::minutes(19) + Duration::seconds(30));
    let late = app.organise().await;
    assert_eq!(late.pairings, 0, "{late:?}");
    app.clock.advance(Duration::seconds(30));
    app.organise().await;
    let t = app.folded(&id).await;
    assert_eq!(
        t.unfinished().count(),
        2,
        "the third wave's games are under way"
    );
    assert!(!t.finished, "an arena waits for its games under way");
    app.play_round(&id, &players, |_, _| false).await;
    app.organise().await;
    let t = app.folded(&id).await;
    assert!(t.finished, "the arena ends once its games have results");
    let view = app
        .get(&format!("/v1/tournaments/{id}"), &players[0].token)
        .await;
    assert_eq!(view.body["status"], "finished");
    // Its stream read to the end answers 204 (an EventSource stops there); past it, 422.
    for (after, status) in [
        (t.version, StatusCode::NO_CONTENT),
        (t.version + 1, StatusCode::UNPROCESSABLE_ENTITY),
    ] {
        let res = app
            .http
            .get(format!("{}/v1/tournaments/{id}/stream", app.base))
            .bearer_auth(&players[0].token)
            .header("last-event-id", after.to_string())
            .send()
            .await
            .expect("an answer");
        assert_eq!(res.status(), status);
    }
    // Over: joining is refused, the queue is open again, the list shows it finished.
    let late_join = app.join(&app.player("Late").await, &id).await;
    assert_eq!(late_join.code(), "tournament_over");
    let queued = app
        .post("/v1/queue", &players[1].token, json!({"game": "reversi"}))
        .await;
    assert_eq!(queued.status, StatusCode::CREATED, "{:?}", queued.body);
    app.project().await;
    let list = app
        .get("/v1/tournaments?status=finished", &players[0].token)
        .await;
    assert_eq!(list.body["tournaments"][0]["tournament_id"], id.as_str());
    // Its games moved the players' ratings.
    let profile = app
        .get(&format!("/v1/players/{}", players[0].id), &players[0].token)
        .await;
    assert!(
        profile.body.to_string().contains("four_in_a_row"),
        "{:?}",
        profile.body
    );
}

/// Each player's (score, rank) in the domain's standings of `t`.
fn standings_of(t: &Tournament) -> HashMap<String, (f64, u32)> {
    let half = |s: u32| match t.created.format {
        domain::tournaments::Format::Arena => f64::from(s),
        _ => f64::from(s) / 2.0,
    };
    standings(t)
        .into_iter()
        .map(|l| (l.player_id.to_string(), (half(l.score), l.rank)))
        .collect()
}

#[tokio::test]
async fn bad_inputs_are_refused_and_change_nothing() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let ana = app.player("Ana").await;
    let now = app.state.now();
    let soon = at(now + Duration::minutes(10));
    let cases = [
        (json!({"format": "swiss", "rounds": 0}), "invalid_request"),
        (
            json!({"format": "swiss", "rounds": 1000}),
            "invalid_request",
        ),
        (json!({"format": "arena", "minutes": 5}), "invalid_request"),
        (
            json!({"format": "arena", "minutes": 2000}),
            "invalid_request",
        ),
        (
            json!({"format": "arena", "minutes": 30, "starts_at": at(now - Duration::minutes(1))}),
            "invalid_request",
        ),
        (
            json!({"format": "round_robin", "max_players": 17}),
            "invalid_request",
        ),
        (json!({"format": "arena", "rounds": 3}), "invalid_request"),
        (
            json!({"format": "arena", "minutes": 30, "name": ""}),
            "invalid_request",
        ),
    ];
    for (case, code) in cases {
        let mut body = json!({"game": "reversi", "name": "Cup", "starts_at": soon});
        for (k, v) in case.as_object().expect("an object") {
            body[k] = v.clone();
        }
        let res = app
            .post("/v1/tournaments", &admin.token, body.clone())
            .await;
        assert_eq!(res.code(), code, "{body}: {:?}", res.body);
        assert_eq!(res.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    }
    // A player creates private tournaments only.
    let public = app
        .post(
            "/v1/tournaments",
            &ana.token,
            json!({"game": "reversi", "format": "arena", "name": "Mine", "starts_at": soon,
                   "minutes": 30}),
        )
        .await;
    assert_eq!(public.status, StatusCode::FORBIDDEN);
    app.project().await;
    let listed = app.get("/v1/tournaments", &ana.token).await;
    assert_eq!(listed.body["tournaments"], json!([]), "nothing was created");

    // Full, joined twice, withdrawn twice: each refused, the stream unchanged.
    let t = app
        .tournament(
            &admin,
            json!({"game": "reversi", "format": "swiss", "name": "Small", "starts_at": soon,
                   "rounds": 3, "max_players": 2}),
        )
        .await;
    let id = t["tournament_id"].as_str().expect("an id");
    let bia = app.player("Bia").await;
    let caio = app.player("Caio").await;
    assert_eq!(app.join(&ana, id).await.status, StatusCode::OK);
    let version = app.folded(id).await.version;
    let twice = app.join(&ana, id).await;
    assert_eq!(
        (twice.status, twice.code()),
        (StatusCode::CONFLICT, "already_joined")
    );
    assert_eq!(app.join(&bia, id).await.status, StatusCode::OK);
    let full = app.join(&caio, id).await;
    assert_eq!(
        (full.status, full.code()),
        (StatusCode::CONFLICT, "tournament_full")
    );
    let path = format!("/v1/tournaments/{id}/withdraw");
    assert_eq!(
        app.post(&path, &bia.token, json!({})).await.status,
        StatusCode::OK
    );
    let again = app.post(&path, &bia.token, json!({})).await;
    assert_eq!(
        (again.status, again.code()),
        (StatusCode::CONFLICT, "already_withdrawn")
    );
    let never = app.post(&path, &caio.token, json!({})).await;
    assert_eq!(never.code(), "not_joined");
    let missing = app.join(&ana, "00000000-0000-4000-8000-000000000000").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let pt = app
        .send(
            app.http
                .post(format!("{}{}", app.base, path))
                .bearer_auth(&bia.token)
                .header("accept-language", "pt")
                .json(&json!({})),
        )
        .await;
    assert_eq!(pt.body["detail"], "você já desistiu deste torneio");
    // Joined, joined twice (refused), joined, withdrawn, withdrawn twice (refused): 4 events.
    assert_eq!(app.folded(id).await.version, version + 2);
}

#[tokio::test]
async fn a_swiss_tournament_gives_byes_takes_late_joiners_and_ends() {
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
            json!({"game": "four_in_a_row", "format": "swiss", "name": "Swiss",
                   "starts_at": at(now + Duration::minutes(5)), "rounds": 4,
                   "settings": {"turn_seconds": null}}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    for p in &players {
        assert_eq!(app.join(p, &id).await.status, StatusCode::OK);
    }
    app.clock.advance(Duration::minutes(5));
    let pass = app.organise().await;
    assert_eq!(pass.pairings, 1, "three players: a game and a bye");
    let t = app.folded(&id).await;
    assert_eq!((t.round, t.byes.len()), (1, 1));
    // A late joiner gets a half-point bye for the round missed.
    let late = app.player("Duda").await;
    assert_eq!(app.join(&late, &id).await.status, StatusCode::OK);
    let t = app.folded(&id).await;
    let late_id: PlayerId = late.id.parse().expect("an id");
    assert!(
        t.byes
            .iter()
            .any(|b| b.player_id == late_id && b.half_points == 1),
        "{:?}",
        t.byes
    );
    let mut all = players.to_vec();
    all.push(late.clone());
    let mut rounds = 0;
    loop {
        let t = app.folded(&id).await;
        if t.finished {
            break;
        }
        assert_consistent(&t);
        app.play_round(&id, &all, |_, _| true).await;
        app.organise().await;
        rounds += 1;
        assert!(rounds <= 4, "a Swiss of 4 rounds ends");
    }
    let t = app.folded(&id).await;
    // No rematch, at most one full-point bye each.
    let mut pairs = HashSet::new();
    for g in &t.games {
        let mut p = g.pairing.players;
        p.sort();
        assert!(pairs.insert(p), "a rematch: {p:?}");
    }
    let mut full_byes = HashMap::new();
    for b in t.byes.iter().filter(|b| b.half_points == 2) {
        *full_byes.entry(b.player_id).or_insert(0) += 1;
    }
    assert!(full_byes.values().all(|&n| n == 1), "{full_byes:?}");
    app.project().await;
    let round1 = app
        .get(
            &format!("/v1/tournaments/{id}/pairings?round=1"),
            &all[0].token,
        )
        .await;
    let rows = round1.body["pairings"].as_array().expect("pairings");
    assert!(rows.iter().any(|p| p["result"] == "bye"), "{rows:?}");
    let standings = app
        .get(
            &format!("/v1/tournaments/{id}/standings?limit=2&offset=1"),
            &all[0].token,
        )
        .await;
    assert_eq!(
        standings.body["standings"].as_array().expect("lines").len(),
        2
    );
    assert_eq!(standings.body["standings"][0]["rank"], 2);
}

#[tokio::test]
async fn a_round_robin_plays_every_pair_twice_with_the_first_move_swapped() {
    let app = spawn_app().await;
    let host = app.player("Host").await;
    let guests = [app.player("Bia").await, app.player("Caio").await];
    let now = app.state.now();
    let created = app
        .tournament(
            &host,
            json!({"game": "four_in_a_row", "format": "round_robin", "name": "Among friends",
                   "starts_at": at(now + Duration::minutes(5)), "private": true,
                   "settings": {"turn_seconds": null}}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    let code = created["code"]
        .as_str()
        .expect("a private one's code")
        .to_owned();
    // Not by its id without the code; by the code.
    assert_eq!(app.join(&guests[0], &id).await.code(), "forbidden");
    for g in &guests {
        let res = app
            .post(&format!("/v1/tournaments/join/{code}"), &g.token, json!({}))
            .await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    }
    assert_eq!(app.join(&host, &id).await.status, StatusCode::OK);
    let seen = app
        .get(&format!("/v1/tournaments/{id}"), &guests[1].token)
        .await;
    assert_eq!(seen.body["code"], code.as_str());
    let stranger = app.player("Stranger").await;
    let unseen = app
        .get(&format!("/v1/tournaments/{id}"), &stranger.token)
        .await;
    assert_eq!(unseen.body["code"], Value::Null);
    app.project().await;
    let listed = app.get("/v1/tournaments", &stranger.token).await;
    assert_eq!(
        listed.body["tournaments"],
        json!([]),
        "private ones are not listed"
    );

    let mut all = vec![host.clone()];
    all.extend(guests.iter().cloned());
    app.clock.advance(Duration::minutes(5));
    let mut rounds = 0;
    loop {
        app.organise().await;
        let t = app.folded(&id).await;
        if t.finished {
            break;
        }
        app.play_round(&id, &all, |_, _| true).await;
        rounds += 1;
        assert!(rounds <= 6);
    }
    let t = app.folded(&id).await;
    let ordered: HashSet<[PlayerId; 2]> = t.games.iter().map(|g| g.pairing.players).collect();
    assert_eq!(ordered.len(), 6, "3 pairs, each with both first movers");
    assert_eq!(t.games.len(), 6);
    assert_eq!(
        t.round, 6,
        "three players: one sits out each of the 6 rounds"
    );
}

#[tokio::test]
async fn a_removal_scores_forfeits_and_its_what_if_equals_the_recount() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let players = [
        app.player("Ana").await,
        app.player("Bia").await,
        app.player("Caio").await,
        app.player("Duda").await,
    ];
    let now = app.state.now();
    let created = app
        .tournament(
            &admin,
            json!({"game": "four_in_a_row", "format": "swiss", "name": "Clean",
                   "starts_at": at(now + Duration::minutes(5)), "rounds": 3,
                   "settings": {"turn_seconds": null}}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    for p in &players {
        app.join(p, &id).await;
    }
    app.clock.advance(Duration::minutes(5));
    app.organise().await;
    // Ana wins all her games; the others' first movers win.
    let ana = players[0].id.clone();
    for _ in 0..3 {
        app.play_round(&id, &players, |first, second| {
            first.id == ana || second.id != ana
        })
        .await;
        app.organise().await;
    }
    let before = app.folded(&id).await;
    assert!(before.finished);
    app.project().await;
    let removal = app
        .post(
            &format!("/v1/admin/tournaments/{id}/removals"),
            &admin.token,
            json!({"player_id": ana, "reason": "engine assistance"}),
        )
        .await;
    assert_eq!(removal.status, StatusCode::CREATED, "{:?}", removal.body);
    let changes = removal.body["changes"].as_array().expect("changes");
    assert_eq!(changes.len(), 4);
    let removed = changes
        .iter()
        .find(|c| c["player_id"] == ana.as_str())
        .expect("the removed player");
    assert_eq!(removed["rank_before"], 1);
    assert_eq!(removed["rank_after"], Value::Null);
    // The recount: the standings folded from the log after the removal, and the projection.
    let after = app.folded(&id).await;
    let recount = standings_of(&after);
    app.project().await;
    let page = app
        .get(&format!("/v1/tournaments/{id}/standings"), &admin.token)
        .await;
    for c in changes.iter().filter(|c| c["player_id"] != ana.as_str()) {
        let p = c["player_id"].as_str().expect("an id");
        assert_eq!(c["score_after"], recount[p].0, "{c}");
        assert_eq!(c["rank_after"], recount[p].1, "{c}");
        let line = page.body["standings"]
            .as_array()
            .expect("lines")
            .iter()
            .find(|l| l["player_id"] == p)
            .expect("a line");
        assert_eq!(line["score"], c["score_after"]);
        assert_eq!(line["rank"], c["rank_after"]);
    }
    // Only an admin removes; twice is refused.
    let again = app
        .post(
            &format!("/v1/admin/tournaments/{id}/removals"),
            &admin.token,
            json!({"player_id": ana, "reason": "again"}),
        )
        .await;
    assert_eq!(again.code(), "removed");
    let by_player = app
        .post(
            &format!("/v1/admin/tournaments/{id}/removals"),
            &players[1].token,
            json!({"player_id": players[2].id, "reason": "no"}),
        )
        .await;
    assert_eq!(by_player.status, StatusCode::FORBIDDEN);
    // The projection rebuilt from the log is the live one.
    let p = projections::Projection::Tournaments;
    let rebuild = projections::rebuild::register(&app.state.projections, p)
        .await
        .expect("registered");
    let before_rebuild = app
        .get(&format!("/v1/tournaments/{id}/standings"), &admin.token)
        .await
        .body;
    projections::rebuild::rebuild(&app.state.projections, p, rebuild, |_| {})
        .await
        .expect("the tournaments projection rebuilds");
    let rebuilt = app
        .get(&format!("/v1/tournaments/{id}/standings"), &admin.token)
        .await
        .body;
    assert_eq!(rebuilt, before_rebuild);
    let audit = projections::audit::tournaments(&app.state.log)
        .await
        .expect("the audit runs");
    assert_eq!(audit.mismatches, Vec::<String>::new());
    assert_eq!(audit.tournaments, 1);
}

#[tokio::test]
async fn two_instances_organising_at_once_never_pair_a_player_twice() {
    let one = spawn_app().await;
    let two = spawn_on(&one.db_url, crate::helpers::config(&one.db_url)).await;
    let admin = one.admin("Arbiter").await;
    let mut players = Vec::new();
    for i in 0..10 {
        players.push(one.player(&format!("P{i}")).await);
    }
    let now = one.state.now();
    let created = one
        .tournament(
            &admin,
            json!({"game": "four_in_a_row", "format": "arena", "name": "Race",
                   "starts_at": at(now + Duration::minutes(5)), "minutes": 30,
                   "settings": {"turn_seconds": null}}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    for p in &players {
        one.join(p, &id).await;
    }
    for app in [&one, &two] {
        app.clock.advance(Duration::minutes(6));
    }
    for round in 0..4 {
        if round == 0 {
            let (a, b) = tokio::join!(one.organise(), two.organise());
            assert_eq!(a.steps + b.steps, 1, "one of them starts it: {a:?} {b:?}");
            assert_eq!(a.pairings + b.pairings, 5, "{a:?} {b:?}");
        }
        let t = one.folded(&id).await;
        assert_eq!(t.unfinished().count(), 5, "round {round}");
        assert_consistent(&t);
        one.play_round(&id, &players, |_, _| round % 2 == 0).await;
        let (a, b) = tokio::join!(one.organise(), two.organise());
        assert!(a.results + b.results >= 5, "{a:?} {b:?}");
        assert_consistent(&one.folded(&id).await);
        // A pass that lost its race to the other instance's leaves the rest of its step to
        // the next pass: both pass again until neither has anything to do.
        for _ in 0..100 {
            let (a, b) = tokio::join!(one.organise(), two.organise());
            assert_consistent(&one.folded(&id).await);
            if a.steps + b.steps + a.lost + b.lost == 0 {
                break;
            }
        }
    }
    // Every pairing has its match, created with it.
    let t = one.folded(&id).await;
    for g in &t.games {
        let created = one
            .state
            .log
            .read_stream(&g.pairing.match_id.stream())
            .await
            .expect("the match reads");
        assert_eq!(created[0].event_type, "match_created");
    }
    drop(two);
}

#[tokio::test]
async fn the_stream_tells_pairings_and_results_and_resumes() {
    use futures_util::StreamExt;
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let players = [app.player("Ana").await, app.player("Bia").await];
    let now = app.state.now();
    let created = app
        .tournament(
            &admin,
            json!({"game": "four_in_a_row", "format": "arena", "name": "Live",
                   "starts_at": at(now + Duration::minutes(5)), "minutes": 30,
                   "settings": {"turn_seconds": null}}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    for p in &players {
        app.join(p, &id).await;
    }
    let res = app
        .http
        .get(format!("{}/v1/tournaments/{id}/stream", app.base))
        .bearer_auth(&players[0].token)
        .header("last-event-id", "1")
        .send()
        .await
        .expect("the stream opens");
    assert_eq!(res.status(), StatusCode::OK);
    let mut body = res.bytes_stream();
    let mut text = String::new();
    app.clock.advance(Duration::minutes(5));
    app.organise().await;
    while !text.contains("event: pairing") {
        let chunk = body.next().await.expect("more").expect("bytes");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(text.starts_with("id: 2\nevent: status"), "{text}");
    assert!(
        !text.contains("tournament_created"),
        "resumed after version 1"
    );
    app.play_round(&id, &players, |_, _| true).await;
    app.organise().await;
    while !text.contains("event: standings") {
        let chunk = body.next().await.expect("more").expect("bytes");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(text.contains("event: result"), "{text}");
}

#[tokio::test]
async fn a_step_is_stamped_when_written_never_before_the_game_end_it_records() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let mut players = Vec::new();
    for i in 0..6 {
        players.push(app.player(&format!("P{i}")).await);
    }
    let now = app.state.now();
    let created = app
        .tournament(
            &admin,
            json!({"game": "four_in_a_row", "format": "arena", "name": "In order",
                   "starts_at": at(now + Duration::minutes(1)), "minutes": 30,
                   "settings": {"turn_seconds": null}}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    for p in &players {
        assert_eq!(app.join(p, &id).await.status, StatusCode::OK);
    }
    app.clock.advance(Duration::minutes(1));
    assert_eq!(app.organise().await.pairings, 3);
    let t = app.folded(&id).await;
    let by_id: HashMap<PlayerId, &Player> = players
        .iter()
        .map(|p| (p.id.parse().expect("an id"), p))
        .collect();

    // A pass reads the time, then waits (here on a lock the test holds); meanwhile the clock
    // moves and two games end; then the pass records them and pairs their players again.
    let client = database::testing::raw_client(&app.db_url).await;
    client
        .batch_execute("BEGIN; LOCK TABLE tournament_schedule IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("the lock");
    let tournaments = app.state.tournaments.clone();
    let pass = tokio::spawn(async move { organise(&tournaments).await });
    let locks = "relation = 'tournament_schedule'::regclass";
    waiting_for_locks(&app.db_url, locks, 1, || pass.is_finished()).await;
    app.clock.advance(Duration::seconds(10));
    for g in t.unfinished().take(2) {
        let [a, b] = g.pairing.players;
        app.finish_four(&g.pairing.match_id.to_string(), by_id[&a], by_id[&b], true)
            .await;
    }
    client.batch_execute("ROLLBACK").await.expect("unlocked");
    let pass = pass.await.expect("the pass ends").expect("it runs");
    // A result the log's horizon held back is recorded by the next pass.
    let rest = app.organise().await;
    assert_eq!(pass.results + rest.results, 2, "{pass:?} {rest:?}");
    assert!(pass.pairings + rest.pairings >= 1, "{pass:?} {rest:?}");

    // Every event of the tournament is stamped no earlier than the one before it, and each
    // result no earlier than the end of its game.
    let id: TournamentId = id.parse().expect("an id");
    let events = app
        .state
        .log
        .read_stream(&id.stream())
        .await
        .expect("the stream reads");
    for pair in events.windows(2) {
        assert!(
            pair[0].recorded_at <= pair[1].recorded_at,
            "{} at {} before {} at {}",
            pair[1].event_type,
            pair[1].recorded_at,
            pair[0].event_type,
            pair[0].recorded_at
        );
    }
    let mut recorded = 0;
    for e in events.iter().filter(|e| e.event_type == "result_recorded") {
        let match_id: domain::ids::MatchId = e.data["match_id"]
            .as_str()
            .expect("a match")
            .parse()
            .expect("an id");
        let ended = app
            .state
            .log
            .read_stream(&match_id.stream())
            .await
            .expect("the match reads")
            .into_iter()
            .find(|m| m.event_type == "match_ended")
            .expect("ended");
        assert!(
            ended.recorded_at <= e.recorded_at,
            "the result at {} before its game ended at {}",
            e.recorded_at,
            ended.recorded_at
        );
        let next = events
            .iter()
            .find(|n| n.version > e.version && n.event_type == "pairing_made")
            .expect("a pairing after it");
        assert!(ended.recorded_at <= next.recorded_at);
        recorded += 1;
    }
    assert_eq!(recorded, 2);
}

#[tokio::test]
async fn a_tournament_that_does_not_exist_is_not_found_and_nothing_is_kept_of_it() {
    let app = spawn_app().await;
    let ana = app.player("Ana").await;
    let id = TournamentId::from_uuid(uuid::Uuid::new_v4());
    for path in [
        format!("/v1/tournaments/{id}"),
        format!("/v1/tournaments/{id}/standings"),
    ] {
        let res = app.get(&path, &ana.token).await;
        assert_eq!(res.status, StatusCode::NOT_FOUND, "{path}: {:?}", res.body);
    }
    let joined = app
        .post(&format!("/v1/tournaments/{id}/join"), &ana.token, json!({}))
        .await;
    assert_eq!(joined.status, StatusCode::NOT_FOUND, "{:?}", joined.body);
    assert!(
        !app.state.tournaments.folds.kept.contains(id),
        "an empty stream was kept"
    );
}
