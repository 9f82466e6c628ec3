//! Fair play after the game: every finished ranked match assessed once, ply by ply, by the
//! exact solvers in the background (move quality, critical positions, thinking times), the
//! match analysis saying the same per ply; and simulated ranked players over the real server,
//! honest ones playing like CPU levels 1–3 and one relaying an engine, only the relay flagged.

use reqwest::StatusCode;
use serde_json::{Value, json};

use domain::analysis::Analyser;
use domain::cpu::choose_move;
use domain::games::{AnyPosition, GameId};
use domain::rng::SplitMix64;
use domain::search::Limits;
use service::analysis::quality::{self, Outcome};
use service::config::QualityNodes;

use crate::helpers::{Player, TestApp, spawn_app, spawn_app_with};

#[tokio::test]
async fn a_finished_ranked_match_is_assessed_once_ply_by_ply() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let (id, first, second) = app.ranked_with(&ada, &bob, "four_in_a_row").await;
    // Seven plies: the first player stacks column 4 and wins; three seconds per move.
    for (i, mv) in ["4", "1", "4", "1", "4", "1", "4"].into_iter().enumerate() {
        app.clock.advance(time::Duration::seconds(3));
        let p = if i % 2 == 0 { &first } else { &second };
        let res = app.play(p, &id, mv).await;
        assert_eq!(res.status, StatusCode::OK, "{mv}: {:?}", res.body);
    }
    app.project().await;
    let (assessed, outcome) = quality::assess_next(&app.state)
        .await
        .expect("a pass")
        .expect("a queued match");
    assert_eq!(assessed.to_string(), id);
    let Outcome::Assessed { plies, exact } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(plies, 7);
    assert!(
        exact >= 3,
        "the last plies are solved within the budget: {exact}"
    );
    // Computed once: the queue is empty, and queueing the match again only drops it.
    assert_eq!(
        quality::assess_next(&app.state).await.expect("a look"),
        None
    );
    let client = database::testing::raw_client(&app.db_url).await;
    client
        .execute(
            "INSERT INTO move_quality_pending (match_id, queued_at) VALUES ($1::text::uuid, now())",
            &[&id],
        )
        .await
        .expect("queued again");
    let again = quality::assess_next(&app.state).await.expect("a pass");
    assert_eq!(again.map(|(_, o)| o), Some(Outcome::AlreadyDone));

    let stored = quality::of_match(&app.state, assessed)
        .await
        .expect("the rows");
    assert_eq!(stored.len(), 7);
    for row in &stored {
        let mover = if row.ply % 2 == 1 { &first } else { &second };
        assert_eq!(
            row.player.map(|p| p.to_string()).as_deref(),
            Some(mover.id.as_str())
        );
        assert!(row.by_human);
        // Three seconds on the clock between moves (the first from the match's creation).
        assert!(row.think_ms >= 3000, "{row:?}");
        assert_eq!(row.quality.is_some(), row.exact, "{row:?}");
        if row.exact {
            assert_eq!(
                row.optimal,
                row.quality == Some(domain::fairplay::Quality::Best),
                "{row:?}"
            );
        }
    }
    // The winning move: best, optimal, and no critical choice (a one-move win).
    let last = &stored[6];
    assert_eq!(
        (last.mv.as_str(), last.exact, last.optimal, last.critical),
        ("4", true, true, false)
    );
    // Ply 6 left the threat in column 4 open: the solver calls it at best an inaccuracy.
    let sixth = &stored[5];
    assert!(sixth.exact && !sixth.optimal, "{sixth:?}");

    // The match analysis says the same, ply by ply.
    let res = app
        .get(&format!("/v1/matches/{id}/analysis"), &first.token)
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let plies = res.body["plies"].as_array().expect("plies");
    for (p, row) in plies.iter().zip(&stored) {
        let quality = row.quality.map_or(Value::Null, |q| Value::from(q.as_str()));
        assert_eq!(p["quality"], quality, "{p:?}");
        assert_eq!(p["critical"], row.critical, "{p:?}");
    }
}

/// How a simulated player picks its moves.
#[derive(Clone, Copy, Debug)]
enum Plays {
    /// Like the CPU at this level.
    Level(u8),
    /// The solver's best move wherever it proves one within its budget (level 3 elsewhere):
    /// an engine relayed into a ranked game.
    Engine,
}

fn pick(pos: &AnyPosition, plays: Plays, rng: &mut SplitMix64, engine: &mut Analyser) -> String {
    let seed = rng.next_u64();
    if let Plays::Engine = plays {
        let verdict = engine
            .analyse(pos, &Limits::stoppable(ENGINE_NODES, None))
            .expect("an unfinished position");
        if verdict.exact && !verdict.best_moves.is_empty() {
            let i = rng.index(verdict.best_moves.len());
            return verdict.best_moves[i].clone();
        }
    }
    let level = match plays {
        Plays::Level(level) => level,
        Plays::Engine => 3,
    };
    choose_move(pos, level, seed).expect("a move")
}

/// The cheater's engine budget per move (the assessor gets the same: what it proves, the
/// engine found). A quarter of the million it was, in a quarter of the time (13 s, against 45 s:
/// the longest test). The games are the same on every run (the test's instance draws who moves
/// first from a seed, `helpers::chance`): the relay's z 8.02, every critical position optimal;
/// the honest players' at most 2.35, under the flag's 4.75. When the coins drew from the
/// operating system, 20 runs gave the relay 5.99 to 9.18 and the honest players up to 4.24.
const ENGINE_NODES: u64 = 250_000;

/// Plays a ranked Four in a Row game between `a` and `b` to its end.
async fn ranked_game(
    app: &TestApp,
    (a, a_plays): (&Player, Plays),
    (b, b_plays): (&Player, Plays),
    rng: &mut SplitMix64,
) {
    // The engine keeps its tables from move to move, as an engine does.
    let mut engine = Analyser::new();
    let (id, first, _) = app.ranked_with(a, b, "four_in_a_row").await;
    let mut pos = AnyPosition::start(GameId::FourInARow);
    let seats = if first.id == a.id {
        [(a, a_plays), (b, b_plays)]
    } else {
        [(b, b_plays), (a, a_plays)]
    };
    while pos.outcome().is_none() {
        let (p, plays) = seats[pos.side_to_move().index()];
        let mv = pick(&pos, plays, rng, &mut engine);
        app.clock.advance(time::Duration::seconds(2));
        let res = app.play(p, &id, &mv).await;
        assert_eq!(res.status, StatusCode::OK, "{mv}: {:?}", res.body);
        pos.play(&mv).expect("a legal move");
    }
}

#[tokio::test]
async fn an_engine_relayed_into_ranked_games_is_flagged_and_honest_players_are_not() {
    let app = spawn_app_with(|c| c.core.quality_ply_nodes = QualityNodes::all(ENGINE_NODES)).await;
    let admin = app.admin("Warden").await;
    let mut honest = Vec::new();
    for (i, level) in [1u8, 1, 2, 2, 3, 3].into_iter().enumerate() {
        honest.push((app.player(&format!("Honest{i}")).await, Plays::Level(level)));
    }
    let cheater = app.player("Relay").await;
    let mut rng = SplitMix64(29);
    // Every honest pair meets once; the cheater plays 20 games against them (each meets it three
    // or four times; their games against it share one weight in the yardstick), the weakest
    // first: once its rating has run away, a level 1 player can be beyond the widest window a
    // wave allows (500 points between established ratings), and the wave would pair nobody.
    for i in 0..honest.len() {
        for j in i + 1..honest.len() {
            let (a, b) = (&honest[i], &honest[j]);
            ranked_game(&app, (&a.0, a.1), (&b.0, b.1), &mut rng).await;
        }
    }
    // `honest` is listed weakest first.
    let mut schedule: Vec<usize> = (0..20).map(|g| g % honest.len()).collect();
    schedule.sort();
    for i in schedule {
        let (o, plays) = &honest[i];
        ranked_game(&app, (&cheater, Plays::Engine), (o, *plays), &mut rng).await;
    }
    app.project().await;
    let mut assessed = 0;
    while let Some((_, outcome)) = quality::assess_next(&app.state).await.expect("a pass") {
        assert!(matches!(outcome, Outcome::Assessed { .. }), "{outcome:?}");
        assessed += 1;
    }
    assert_eq!(assessed, 35);

    let res = app.get("/v1/admin/flags", &admin.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let engine: Vec<&Value> = res.body["flags"]
        .as_array()
        .expect("flags")
        .iter()
        .filter(|f| f["kind"] == "engine_assistance")
        .collect();
    let flags = &res.body["flags"];
    // Every player's evidence, to say why when the flags are not as expected.
    let client = app.state.pool.get().await.expect("a connection");
    let evidence: Vec<String> = service::analysis::fair::engine_evidence(
        &client,
        &projections::audit::FlagRules::default(),
    )
    .await
    .expect("the evidence")
    .iter()
    .map(|e| {
        format!(
            "{}: critical {} optimal {} expected {:.1} z {:.2} (pooled {:.2}, games {:.2})",
            e.player,
            e.evidence.critical,
            e.evidence.optimal,
            e.evidence.expected,
            e.evidence.z,
            e.evidence.z_pooled,
            e.evidence.z_games
        )
    })
    .collect();
    drop(client);
    eprintln!("relay {}: {evidence:#?}", cheater.id);
    assert_eq!(
        engine.len(),
        1,
        "only the relay ({}) is flagged: {flags}\n{evidence:#?}",
        cheater.id
    );
    let flag = engine[0];
    assert_eq!(flag["player"], cheater.id.as_str(), "{flag:?}");
    assert_eq!(flag["game"], "four_in_a_row");
    // Its games that held a critical position (a quick win may hold none), within 20.
    let games = flag["matches"].as_array().map_or(0, Vec::len);
    assert!((13..=20).contains(&games), "{flag:?}");
    // The engine proves what the assessor proves (the same budget, one thread each).
    assert!(flag["optimal_share"].as_f64() >= Some(0.9), "{flag:?}");
    assert!(flag["z"].as_f64() >= Some(4.75), "{flag:?}");
    assert!(
        flag["expected_share"].as_f64() < flag["optimal_share"].as_f64(),
        "{flag:?}"
    );
    // Every game relayed: it fits as engine-played throughout, and its suspect games are its own.
    assert!(flag["engine_share"].as_f64() >= Some(0.8), "{flag:?}");
    let suspects = flag["suspect_matches"].as_array().expect("suspects");
    assert!(suspects.len() * 10 >= games * 8, "{flag:?}");
    assert!(
        suspects
            .iter()
            .all(|s| flag["matches"].as_array().is_some_and(|m| m.contains(s))),
        "{flag:?}"
    );
    let z = |k: &str| flag[k].as_f64().unwrap_or(f64::NAN);
    assert_eq!(z("z"), z("z_pooled").max(z("z_games")), "{flag:?}");
    let replay = flag["replays"][0].as_str().expect("a replay");
    assert_eq!(
        replay,
        format!("/matches/{}", flag["matches"][0].as_str().expect("an id"))
    );
    assert_eq!(res.body["rules"]["engine_z"], 4.75);
    // What the admin reviews: the name, and the critical positions of the suspect games, each
    // with the move played and the best ones (optimal here: the relay's), in those games.
    assert_eq!(flag["name"], "Relay", "{flag:?}");
    let positions = flag["positions"].as_array().expect("positions");
    assert!(!positions.is_empty(), "{flag:?}");
    for p in positions {
        assert!(suspects.contains(&p["match_id"]), "{p}");
        let best = p["best_moves"].as_array().expect("best moves");
        assert!(!best.is_empty(), "{p}");
        assert_eq!(p["optimal"], best.contains(&p["move"]), "{p}");
    }
    assert!(flag["decision"].is_null(), "{flag:?}");

    // Declared a bot (an engine by its own account), it is no longer assessed: no flag, and
    // nobody else is flagged with its games out of the yardstick.
    let res = app
        .post(
            &format!("/v1/admin/players/{}/decisions", cheater.id),
            &admin.token,
            json!({"decision": "bot"}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    let res = app.get("/v1/admin/flags", &admin.token).await;
    let engine = res.body["flags"]
        .as_array()
        .expect("flags")
        .iter()
        .filter(|f| f["kind"] == "engine_assistance")
        .count();
    assert_eq!(engine, 0, "{:?}", res.body);
}

#[tokio::test]
async fn an_admins_decision_is_an_event_and_a_ban_keeps_the_player_out_until_cleared() {
    let app = spawn_app().await;
    let (ada, bob, admin) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.admin("Root").await,
    );
    // Found by name (a part of it, case aside), never by an id typed by hand; admins only.
    let res = app.get("/v1/admin/players?name=aD", &admin.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(res.body["players"][0]["player_id"], ada.id.as_str());
    assert_eq!(res.body["players"][0]["banned"], false);
    let res = app.get("/v1/admin/players?name=ad", &bob.token).await;
    assert_eq!(res.status, StatusCode::FORBIDDEN);
    let res = app.get("/v1/admin/players?name=", &admin.token).await;
    assert_eq!(res.code(), "invalid_request", "{:?}", res.body);
    // A control character (NUL included: PostgreSQL refuses it in text) names nobody: refused,
    // not a 500 (schemathesis found it).
    for name in ["%C2%83%00", "a%00", "%07"] {
        let res = app
            .get(&format!("/v1/admin/players?name={name}"), &admin.token)
            .await;
        assert_eq!(res.code(), "invalid_request", "{name}: {:?}", res.body);
    }

    let decisions = format!("/v1/admin/players/{}/decisions", ada.id);
    let res = app
        .post(&decisions, &admin.token, json!({"decision": "banned"}))
        .await;
    assert_eq!(
        res.code(),
        "invalid_request",
        "a ban needs a reason: {:?}",
        res.body
    );
    let res = app
        .post(&decisions, &bob.token, json!({"decision": "cleared"}))
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN);
    let res = app
        .post(
            &decisions,
            &admin.token,
            json!({"decision": "banned", "reason": " relayed an engine "}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    assert_eq!(res.body["banned"], true);
    assert_eq!(res.body["reason"], "relayed an engine");
    assert_eq!(res.body["version"], 1);

    // Banned: no ranked queue, no room to open or join.
    let forbidden = |res: &crate::helpers::Res| {
        assert_eq!(
            (res.status, res.code()),
            (StatusCode::FORBIDDEN, "forbidden"),
            "{:?}",
            res.body
        );
    };
    let queue = json!({"game": "four_in_a_row"});
    forbidden(&app.post("/v1/queue", &ada.token, queue.clone()).await);
    forbidden(
        &app.post("/v1/rooms", &ada.token, json!({"game": "reversi"}))
            .await,
    );
    let room = app
        .post("/v1/rooms", &bob.token, json!({"game": "reversi"}))
        .await;
    assert_eq!(room.status, StatusCode::CREATED, "{:?}", room.body);
    let code = room.body["code"].as_str().expect("a code");
    let join = format!("/v1/rooms/{code}/join");
    forbidden(&app.post(&join, &ada.token, json!({})).await);
    let res = app.get("/v1/admin/players?name=ada", &admin.token).await;
    assert_eq!(res.body["players"][0]["banned"], true);

    // The decision is an event of the player's stream, by the admin, and the chains verify.
    let events = app
        .state
        .log
        .read_stream(&format!("player-{}", ada.id))
        .await
        .expect("the stream");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event_type, "player_banned");
    assert_eq!(
        events[0].actor.map(|a| a.to_string()),
        Some(admin.id.clone())
    );
    assert_eq!(events[0].data["reason"], "relayed an engine");
    let audit = app.get("/v1/admin/audits/ratings", &admin.token).await;
    assert_eq!(audit.body["chains_ok"], true, "{:?}", audit.body);

    // Cleared: the ban is lifted.
    let res = app
        .post(&decisions, &admin.token, json!({"decision": "cleared"}))
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    assert_eq!(
        (res.body["banned"].clone(), res.body["version"].clone()),
        (json!(false), json!(2))
    );
    let res = app.post("/v1/queue", &ada.token, queue).await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    let res = app.post(&join, &ada.token, json!({})).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app
        .post(
            "/v1/admin/players/00000000-0000-0000-0000-000000000000/decisions",
            &admin.token,
            json!({"decision": "cleared"}),
        )
        .await;
    assert_eq!(res.status, StatusCode::NOT_FOUND, "{:?}", res.body);
}
