//! Ranked play end to end: queue, waves, play, projections (ratings, history, leaderboards),
//! races on tickets, two instances, a projection stopped before its commit, rebuilds, audits
//! and the admin calls.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{Player, TestApp, config, spawn_app, spawn_on};

/// Glicko-2 written out from Glickman's paper (steps 2 to 8, Illinois iteration), independent
/// of the `skillratings` crate the server uses: one rating period with one game.
fn glicko2(r: f64, rd: f64, sigma: f64, opp_r: f64, opp_rd: f64, score: f64) -> (f64, f64, f64) {
    const SCALE: f64 = 173.7178;
    let tau = 0.5;
    let (mu, phi) = ((r - 1500.0) / SCALE, rd / SCALE);
    let (mu_j, phi_j) = ((opp_r - 1500.0) / SCALE, opp_rd / SCALE);
    let g = 1.0 / (1.0 + 3.0 * phi_j * phi_j / std::f64::consts::PI.powi(2)).sqrt();
    let e = 1.0 / (1.0 + (-g * (mu - mu_j)).exp());
    let v = 1.0 / (g * g * e * (1.0 - e));
    let delta = v * g * (score - e);
    let a = (sigma * sigma).ln();
    let f = |x: f64| {
        let ex = x.exp();
        ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex).powi(2))
            - (x - a) / (tau * tau)
    };
    let mut big_a = a;
    let mut big_b = if delta * delta > phi * phi + v {
        (delta * delta - phi * phi - v).ln()
    } else {
        let mut k = 1.0;
        while f(a - k * tau) < 0.0 {
            k += 1.0;
        }
        a - k * tau
    };
    let (mut fa, mut fb) = (f(big_a), f(big_b));
    while (big_b - big_a).abs() > 1e-6 {
        let c = big_a + (big_a - big_b) * fa / (fb - fa);
        let fc = f(c);
        if fc * fb <= 0.0 {
            big_a = big_b;
            fa = fb;
        } else {
            fa /= 2.0;
        }
        big_b = c;
        fb = fc;
    }
    let sigma2 = (big_a / 2.0).exp();
    let phi_star = (phi * phi + sigma2 * sigma2).sqrt();
    let phi2 = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
    let mu2 = mu + phi2 * phi2 * g * (score - e);
    (mu2 * SCALE + 1500.0, phi2 * SCALE, sigma2)
}

fn rating(body: &Value, game: &str) -> (f64, f64, f64, u64) {
    let r = &body["ratings"][game];
    (
        r["rating"].as_f64().expect("rating"),
        r["deviation"].as_f64().expect("deviation"),
        r["volatility"].as_f64().expect("volatility"),
        r["games"].as_u64().expect("games"),
    )
}

async fn profile(app: &TestApp, p: &Player) -> Value {
    let res = app.get(&format!("/v1/players/{}", p.id), &p.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    res.body
}

#[tokio::test]
async fn queue_match_play_and_ratings_equal_an_independent_glicko2() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let t = app
        .post("/v1/queue", &ada.token, json!({"game": "four_in_a_row"}))
        .await;
    assert_eq!(t.status, StatusCode::CREATED, "{:?}", t.body);
    assert_eq!(t.body["status"], "waiting");
    let ticket = t.body["ticket_id"].as_str().expect("an id").to_owned();
    // Alone in the pool: a wave pairs nobody.
    assert_eq!(app.wave().await, 0);
    let b = app
        .post("/v1/queue", &bob.token, json!({"game": "four_in_a_row"}))
        .await;
    assert_eq!(b.status, StatusCode::CREATED, "{:?}", b.body);
    assert_eq!(app.wave().await, 1);
    let view = app.latest_match(&ada).await;
    let id = view["match_id"].as_str().expect("an id").to_owned();
    let (first, second) = if view["seats"][0]["player_id"] == json!(ada.id) {
        (ada.clone(), bob.clone())
    } else {
        (bob.clone(), ada.clone())
    };
    let mine = app.get(&format!("/v1/queue/{ticket}"), &ada.token).await;
    assert_eq!(mine.body["status"], "matched", "{:?}", mine.body);
    assert_eq!(mine.body["match_id"], json!(id));
    let view = app.view(&first, &id).await;
    assert_eq!(view["ranked"], true);
    let created = &app.events(&first, &id).await[0];
    assert_eq!(created["data"]["ranked"], true);
    assert!(
        ["fewer_starts", "coin_flip"].contains(
            &created["data"]["first_rule"]["rule"]
                .as_str()
                .expect("a rule")
        ),
        "{created:?}"
    );
    app.finish_four(&id, &first, &second, true).await;
    app.project().await;

    let (w, l) = (
        glicko2(1500.0, 350.0, 0.06, 1500.0, 350.0, 1.0),
        glicko2(1500.0, 350.0, 0.06, 1500.0, 350.0, 0.0),
    );
    let won = rating(&profile(&app, &first).await, "four_in_a_row");
    let lost = rating(&profile(&app, &second).await, "four_in_a_row");
    for (got, want) in [(won, w), (lost, l)] {
        assert!((got.0 - want.0).abs() < 1e-6, "{got:?} vs {want:?}");
        assert!((got.1 - want.1).abs() < 1e-6, "{got:?} vs {want:?}");
        assert!((got.2 - want.2).abs() < 1e-6, "{got:?} vs {want:?}");
        assert_eq!(got.3, 1);
    }
    // Untouched game: the starting values.
    assert_eq!(
        rating(&profile(&app, &first).await, "reversi"),
        (1500.0, 350.0, 0.06, 0)
    );

    // A second match, a day and a half later: the winner's deviation first grows one idle day.
    app.clock.advance(time::Duration::hours(36));
    let (id2, f2, s2) = app.ranked_with(&first, &second, "four_in_a_row").await;
    app.finish_four(&id2, &f2, &s2, false).await;
    app.project().await;
    let before = |p: &Player| if p.id == first.id { won } else { lost };
    let grown = |rd: f64, sigma: f64| {
        let phi = rd / 173.7178;
        (phi * phi + sigma * sigma).sqrt() * 173.7178
    };
    let (b1, b2) = (before(&f2), before(&s2));
    let expect_f2 = glicko2(b1.0, grown(b1.1, b1.2), b1.2, b2.0, grown(b2.1, b2.2), 0.0);
    let got_f2 = rating(&profile(&app, &f2).await, "four_in_a_row");
    assert!(
        (got_f2.0 - expect_f2.0).abs() < 1e-6,
        "{got_f2:?} vs {expect_f2:?}"
    );
    assert!(
        (got_f2.1 - expect_f2.1).abs() < 1e-6,
        "{got_f2:?} vs {expect_f2:?}"
    );
    assert_eq!(got_f2.3, 2);

    // History: newest first, ratings before and after; casual matches have none.
    app.solo(&first, "four_in_a_row", json!({"cpu_level": 1}))
        .await;
    let h = app
        .get(&format!("/v1/players/{}/matches", f2.id), &f2.token)
        .await;
    assert_eq!(h.status, StatusCode::OK, "{:?}", h.body);
    let list = h.body["matches"].as_array().expect("matches");
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["match_id"], json!(id2));
    assert_eq!(list[0]["result"], "loss");
    assert_eq!(list[0]["opponent"]["player_id"], json!(s2.id));
    assert_eq!(list[0]["rating_before"].as_f64(), Some(b1.0));
    assert_eq!(list[0]["rating_after"].as_f64(), Some(got_f2.0));
    // Each match's opening, as its replay names it.
    for entry in list {
        let id = entry["match_id"].as_str().expect("an id");
        let replay = app
            .get(&format!("/v1/matches/{id}/replay"), &f2.token)
            .await;
        assert!(entry["opening"]["name"].is_string(), "{entry}");
        assert_eq!(entry["opening"], replay.body["opening"]);
    }
    let points = app
        .get(
            &format!("/v1/players/{}/ratings/four_in_a_row", f2.id),
            &f2.token,
        )
        .await;
    let points = points.body["points"].as_array().expect("points").clone();
    assert_eq!(points.len(), 2);
    assert_eq!(points[1]["rating"].as_f64(), Some(got_f2.0));
    // Everyone is still provisional: the leaderboard is empty.
    let board = app.get("/v1/leaderboards/four_in_a_row", &f2.token).await;
    assert_eq!(board.body["entries"], json!([]));
}

#[tokio::test]
async fn one_open_ticket_per_player_and_none_during_a_ranked_match() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let body = json!({"game": "reversi", "turn_seconds": 30});
    assert_eq!(
        app.post("/v1/queue", &ada.token, body.clone()).await.status,
        StatusCode::CREATED
    );
    let again = app
        .post("/v1/queue", &ada.token, json!({"game": "four_in_a_row"}))
        .await;
    assert_eq!(
        (again.status, again.code()),
        (StatusCode::CONFLICT, "already_queued")
    );
    assert_eq!(
        app.post("/v1/queue", &bob.token, body.clone()).await.status,
        StatusCode::CREATED
    );
    assert_eq!(app.wave().await, 1);
    let during = app.post("/v1/queue", &ada.token, body.clone()).await;
    assert_eq!(
        (during.status, during.code()),
        (StatusCode::CONFLICT, "in_match")
    );
    let m = app.latest_match(&ada).await;
    assert_eq!(m["settings"]["turn_seconds"], 30);
    let id = m["match_id"].as_str().expect("an id");
    let res = app
        .post(&format!("/v1/matches/{id}/resign"), &ada.token, json!({}))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(
        app.post("/v1/queue", &ada.token, body).await.status,
        StatusCode::CREATED
    );
    // Bad input changes nothing.
    for bad in [
        json!({"game": "chess"}),
        json!({"game": "reversi", "turn_seconds": 45}),
        json!({"game": "reversi", "x": 1}),
    ] {
        let res = app.post("/v1/queue", &bob.token, bad).await;
        assert_eq!(
            (res.status, res.code()),
            (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request")
        );
    }
    let res = app.get("/v1/queue/not-a-uuid", &bob.token).await;
    assert_eq!(res.code(), "invalid_request");
}

#[tokio::test]
async fn a_ticket_is_cancelled_or_matched_never_both() {
    let app = spawn_app().await;
    for round in 0..8 {
        let a = app.player(&format!("A{round}")).await;
        let b = app.player(&format!("B{round}")).await;
        let mut tickets = Vec::new();
        for p in [&a, &b] {
            let t = app
                .post("/v1/queue", &p.token, json!({"game": "four_in_a_row"}))
                .await;
            tickets.push(t.body["ticket_id"].as_str().expect("an id").to_owned());
        }
        app.project().await;
        let path = format!("/v1/queue/{}", tickets[0]);
        let cancel = app.delete(&path, &a.token);
        let wave = service::ranked::run_waves(&app.state.ranked);
        let (cancelled, waved) = tokio::join!(cancel, wave);
        let paired: usize = waved.expect("wave").values().map(|r| r.paired).sum();
        let first = app
            .get(&format!("/v1/queue/{}", tickets[0]), &a.token)
            .await;
        let second = app
            .get(&format!("/v1/queue/{}", tickets[1]), &b.token)
            .await;
        if cancelled.status == StatusCode::OK {
            assert_eq!(paired, 0, "round {round}");
            assert_eq!(first.body["status"], "cancelled");
            assert_eq!(second.body["status"], "waiting");
            // Tidy up so the next round's pool is fresh.
            app.delete(&format!("/v1/queue/{}", tickets[1]), &b.token)
                .await;
        } else {
            assert_eq!(cancelled.code(), "ticket_closed", "round {round}");
            assert_eq!(paired, 1);
            assert_eq!(first.body["status"], "matched");
            assert_eq!(first.body["match_id"], second.body["match_id"]);
            let id = first.body["match_id"].as_str().expect("a match");
            app.post(&format!("/v1/matches/{id}/resign"), &a.token, json!({}))
                .await;
        }
        // A closed ticket stays closed.
        let late = app
            .delete(&format!("/v1/queue/{}", tickets[0]), &a.token)
            .await;
        assert_eq!(late.code(), "ticket_closed");
        // Someone else's ticket is not theirs to see.
        assert_eq!(
            app.get(&format!("/v1/queue/{}", tickets[0]), &b.token)
                .await
                .status,
            StatusCode::NOT_FOUND
        );
    }
    let client = database::testing::raw_client(&app.db_url).await;
    let rows = client
        .query(
            "SELECT stream_id, count(*) FROM events WHERE stream_id LIKE 'ticket-%' GROUP BY 1",
            &[],
        )
        .await
        .expect("counts");
    assert!(
        rows.iter().all(|r| r.get::<_, i64>(1) <= 2),
        "a ticket closed twice"
    );
}

#[tokio::test]
async fn a_burst_of_tickets_racing_two_instances_waves_pairs_each_ticket_once() {
    let one = spawn_app().await;
    let mut two = spawn_on(&one.db_url, config(&one.db_url)).await;
    two.db = one.db.clone();
    // More pairings than one transaction of a wave writes.
    let n = 2 * service::ranked::PAIRINGS_PER_WRITE + 40;
    let mut players = Vec::new();
    for i in 0..n {
        players.push(one.player(&format!("P{i}")).await);
    }
    for p in &players[..n / 2] {
        assert_eq!(queue_reversi(&one, p).await, StatusCode::CREATED);
    }
    one.project().await;
    // The other half opens through both instances while both run waves.
    let waves = |app: &TestApp| {
        let state = app.state.clone();
        async move {
            let mut paired = 0;
            for _ in 0..3 {
                state.projections.sync_all().await.expect("projections");
                let reports = service::ranked::run_waves(&state.ranked)
                    .await
                    .expect("wave");
                paired += reports.values().map(|r| r.paired).sum::<usize>();
            }
            paired
        }
    };
    let opening = async {
        for (i, p) in players[n / 2..].iter().enumerate() {
            let app = if i % 2 == 0 { &one } else { &two };
            assert_eq!(queue_reversi(app, p).await, StatusCode::CREATED);
        }
    };
    let ((), a, b) = tokio::join!(opening, waves(&one), waves(&two));
    let mut made = a + b;
    // Then whatever is left.
    for _ in 0..3 {
        made += one.wave().await + two.wave().await;
    }
    assert_eq!(
        made,
        n / 2,
        "every ticket paired exactly once across both instances"
    );
    let client = database::testing::raw_client(&one.db_url).await;
    let rows = client
        .query(
            "SELECT data->'seats'->0->>'player_id', data->'seats'->1->>'player_id' FROM events \
             WHERE event_type = 'match_created'",
            &[],
        )
        .await
        .expect("matches");
    assert_eq!(rows.len(), n / 2);
    let mut seen = HashSet::new();
    for r in &rows {
        for i in 0..2 {
            assert!(
                seen.insert(r.get::<_, String>(i)),
                "a player is in two matches"
            );
        }
    }
    let matched: Vec<i64> = client
        .query(
            "SELECT count(*) FROM events WHERE event_type = 'ticket_matched' GROUP BY stream_id",
            &[],
        )
        .await
        .expect("counts")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(matched.len(), n, "every ticket matched");
    assert!(matched.iter().all(|&c| c == 1), "a ticket matched twice");
}

async fn queue_reversi(app: &TestApp, p: &Player) -> StatusCode {
    app.post("/v1/queue", &p.token, json!({"game": "reversi"}))
        .await
        .status
}

/// Plays `n` ranked Four in a Row matches between pairs of a few players; returns them.
async fn league(app: &TestApp, n: usize) -> Vec<Player> {
    let players = vec![
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Cy").await,
        app.player("Di").await,
    ];
    for i in 0..n {
        let (a, b) = (&players[i % 4], &players[(i + 1 + i / 4) % 4]);
        if a.id == b.id {
            continue;
        }
        let (id, first, second) = app.ranked_with(a, b, "four_in_a_row").await;
        app.finish_four(&id, &first, &second, i % 3 != 0).await;
        app.clock.advance(time::Duration::minutes(7));
    }
    players
}

/// Every row of a table as text, in a stable order.
pub async fn dump(url: &str, table: &str) -> Vec<String> {
    let client = database::testing::raw_client(url).await;
    let rows = client
        .query(
            &format!("SELECT t::text FROM {table} t ORDER BY t::text"),
            &[],
        )
        .await
        .expect("dump");
    rows.iter().map(|r| r.get(0)).collect()
}

#[tokio::test]
async fn a_batch_stopped_before_its_commit_is_applied_once_later() {
    let app = spawn_app().await;
    let players = league(&app, 3).await;
    // One more match whose end (and tickets) no projection has seen yet.
    let (id, first, second) = app
        .ranked_with(&players[0], &players[2], "four_in_a_row")
        .await;
    app.finish_four(&id, &first, &second, true).await;
    let tables = [
        "match_history",
        "ratings",
        "rating_points",
        "leaderboard",
        "queue_pairs",
    ];
    let mut before = Vec::new();
    for t in tables {
        before.push(dump(&app.db_url, t).await);
    }
    let mut checkpoints = Vec::new();
    for p in projections::Projection::ALL {
        checkpoints.push(
            app.state
                .projections
                .checkpoint(p)
                .await
                .expect("checkpoint"),
        );
    }
    let stop = projections::Runner::new(app.state.log.clone())
        .with_hook(Arc::new(|stage, _| stage != projections::Stage::Applied));
    for p in projections::Projection::ALL {
        let err = stop.sync(p).await.expect_err("stopped before commit");
        assert!(matches!(err, projections::Error::Hooked(_)), "{err}");
    }
    for (t, rows) in tables.iter().zip(&before) {
        assert_eq!(&dump(&app.db_url, t).await, rows, "{t} changed");
    }
    for (p, cp) in projections::Projection::ALL.iter().zip(&checkpoints) {
        assert_eq!(
            &app.state
                .projections
                .checkpoint(*p)
                .await
                .expect("checkpoint"),
            cp
        );
    }
    assert!(app.project().await > 0);
    assert_eq!(dump(&app.db_url, "match_history").await.len(), 8);
    assert_eq!(dump(&app.db_url, "rating_points").await.len(), 8);
    // A second runner finds nothing left to do: nothing is applied twice.
    assert_eq!(app.project().await, 0);
    let audit = projections::audit::ratings(&app.state.log, None, &[])
        .await
        .expect("audit");
    assert!(audit.mismatches.is_empty(), "{:?}", audit.mismatches);
}

#[tokio::test]
async fn a_rebuild_ends_byte_identical_to_the_live_tables() {
    let app = spawn_app().await;
    let players = league(&app, 6).await;
    app.solo(&players[0], "reversi", json!({"cpu_level": 1}))
        .await;
    // A tournament under way, for the tournaments projection: a row, lines and a pairing.
    let admin = app.admin("Arbiter").await;
    let starts = app.state.now() + time::Duration::minutes(1);
    let created = app
        .post(
            "/v1/tournaments",
            &admin.token,
            json!({"game": "reversi", "format": "arena", "name": "Rebuilt", "minutes": 30,
                   "starts_at": starts.format(&time::format_description::well_known::Rfc3339)
                       .expect("a time")}),
        )
        .await;
    let tournament = created.body["tournament_id"].as_str().expect("an id");
    for p in &players[2..4] {
        let joined = app
            .post(
                &format!("/v1/tournaments/{tournament}/join"),
                &p.token,
                json!({}),
            )
            .await;
        assert_eq!(joined.status, StatusCode::OK, "{:?}", joined.body);
    }
    // A declared bot, and one declared and undeclared, for the bots' board.
    let (eve, fay) = (app.player("Eve").await, app.player("Fay").await);
    for (p, decisions) in [(&eve, &["bot"][..]), (&fay, &["bot", "human"])] {
        for d in decisions {
            let res = app
                .post(
                    &format!("/v1/admin/players/{}/decisions", p.id),
                    &admin.token,
                    json!({"decision": d}),
                )
                .await;
            assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
        }
    }
    app.clock.advance(time::Duration::minutes(1));
    let pass = service::tournaments::organiser::organise(&app.state.tournaments)
        .await
        .expect("the organiser runs");
    assert_eq!(pass.pairings, 1);
    // A ticket left waiting and one cancelled, for the queue projection.
    app.post("/v1/queue", &players[0].token, json!({"game": "reversi"}))
        .await;
    let t = app
        .post(
            "/v1/queue",
            &players[1].token,
            json!({"game": "four_in_a_row", "turn_seconds": 60}),
        )
        .await;
    app.delete(
        &format!("/v1/queue/{}", t.body["ticket_id"].as_str().expect("id")),
        &players[1].token,
    )
    .await;
    app.project().await;
    for p in projections::Projection::ALL {
        let mut before = HashMap::new();
        for t in p.tables() {
            before.insert(*t, dump(&app.db_url, t).await);
        }
        let id = projections::rebuild::register(&app.state.projections, p)
            .await
            .expect("registered");
        let applied = projections::rebuild::rebuild(&app.state.projections, p, id, |_| {})
            .await
            .expect("rebuilt");
        assert!(applied > 0, "{p}");
        for t in p.tables() {
            assert_eq!(dump(&app.db_url, t).await, before[t], "{p}: {t}");
            assert!(!before[t].is_empty(), "{p}: {t} is empty");
        }
        // The live runner carries on from the rebuilt checkpoint: nothing new to apply.
        assert_eq!(
            app.state.projections.catch_up(p).await.expect("catch up"),
            0
        );
    }
}

#[tokio::test]
async fn the_audit_finds_a_planted_mismatch_and_a_tampered_event() {
    let app = spawn_app().await;
    let players = league(&app, 5).await;
    app.project().await;
    let admin = app.admin("Root").await;
    let clean = app.get("/v1/admin/audits/ratings", &admin.token).await;
    assert_eq!(clean.status, StatusCode::OK, "{:?}", clean.body);
    assert_eq!(clean.body["mismatches"], json!([]));
    assert_eq!(
        clean.body["chains_ok"], true,
        "{:?}",
        clean.body["broken_chains"]
    );
    assert_eq!(clean.body["players_checked"], 4);
    let report = projections::audit::ratings(&app.state.log, None, &[])
        .await
        .expect("audit");
    assert!(
        discs::cli::audit_table(&report)
            .contains("every stored rating (ratings, leaderboard) equals the log's")
    );

    // Plant a wrong rating: the current row and the step of the player's second match.
    let client = database::testing::raw_client(&app.db_url).await;
    let victim = &players[1];
    let planted: uuid::Uuid = client
        .query_one(
            "UPDATE rating_points SET rating = rating + 7 WHERE player_id = $1::text::uuid \
             AND games = 2 RETURNING match_id",
            &[&victim.id],
        )
        .await
        .expect("planted")
        .get(0);
    client
        .execute(
            "UPDATE ratings SET rating = rating + 7 WHERE player_id = $1::text::uuid",
            &[&victim.id],
        )
        .await
        .expect("planted");
    let found = app
        .get("/v1/admin/audits/ratings?game=four_in_a_row", &admin.token)
        .await;
    let mismatches = found.body["mismatches"].as_array().expect("mismatches");
    assert_eq!(mismatches.len(), 1, "{:?}", found.body);
    assert_eq!(mismatches[0]["player_id"], json!(victim.id));
    assert_eq!(
        mismatches[0]["first_diverging_match"],
        json!(planted.to_string())
    );
    let (s, r) = (
        &mismatches[0]["stored"]["rating"],
        &mismatches[0]["recomputed"]["rating"],
    );
    assert!((s.as_f64().expect("stored") - r.as_f64().expect("recomputed") - 7.0).abs() < 1e-9);
    // The explanation of that rating says where the log disagrees with its steps.
    let ex = app
        .get(
            &format!(
                "/v1/admin/players/{}/ratings/four_in_a_row/explain",
                victim.id
            ),
            &admin.token,
        )
        .await;
    assert_eq!(ex.status, StatusCode::OK, "{:?}", ex.body);
    assert_eq!(ex.body["log_check"]["agrees"], false);
    assert_eq!(
        ex.body["log_check"]["first_diverging_match"],
        json!(planted.to_string())
    );

    // Tamper with an event behind the log's back.
    client
        .batch_execute(
            "ALTER TABLE events DISABLE TRIGGER events_append_only; \
             UPDATE events SET data = jsonb_set(data, '{move}', '\"5\"') \
               WHERE position = (SELECT min(position) FROM events WHERE event_type = 'move_played'); \
             ALTER TABLE events ENABLE TRIGGER events_append_only;",
        )
        .await
        .expect("tampered");
    let tampered = app.get("/v1/admin/audits/ratings", &admin.token).await;
    assert_eq!(tampered.body["chains_ok"], false);
    assert_eq!(
        tampered.body["broken_chains"]
            .as_array()
            .expect("broken")
            .len(),
        1
    );
}

#[tokio::test]
async fn explain_what_if_and_flags() {
    let app = spawn_app().await;
    let players = league(&app, 6).await;
    app.project().await;
    let admin = app.admin("Root").await;
    let who = &players[0];
    let ex = app
        .get(
            &format!("/v1/admin/players/{}/ratings/four_in_a_row/explain", who.id),
            &admin.token,
        )
        .await;
    assert_eq!(ex.status, StatusCode::OK, "{:?}", ex.body);
    assert_eq!(
        ex.body["log_check"]["agrees"], true,
        "{:?}",
        ex.body["log_check"]
    );
    assert_eq!(ex.body["log_check"]["first_diverging_match"], Value::Null);
    let steps = ex.body["steps"].as_array().expect("steps");
    assert!(!steps.is_empty());
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["games"], i + 1);
        let id = s["match_id"].as_str().expect("a match");
        let events = app.events(who, id).await;
        let pos = |t: &str| {
            events
                .iter()
                .find(|e| e["type"] == t)
                .map(|e| e["position"].clone())
        };
        assert_eq!(
            Some(s["match_created_position"].clone()),
            pos("match_created")
        );
        assert_eq!(Some(s["match_ended_position"].clone()), pos("match_ended"));
        if i > 0 {
            assert_eq!(s["before"]["rating"], steps[i - 1]["after"]["rating"]);
        }
    }
    let profile = app
        .get(&format!("/v1/players/{}", who.id), &who.token)
        .await;
    let last = steps.last().expect("a step");
    assert_eq!(
        last["after"]["rating"],
        profile.body["ratings"]["four_in_a_row"]["rating"]
    );

    // Without Ada's matches, her opponents' ratings change; the report says by how much.
    let w = app
        .get(
            &format!("/v1/admin/audits/ratings?exclude_players={}", who.id),
            &admin.token,
        )
        .await;
    let what_if = w.body["what_if"].as_array().expect("what_if");
    assert!(!what_if.is_empty(), "{:?}", w.body);
    assert!(what_if.iter().all(|x| x["player_id"] != json!(who.id)));
    assert!(
        what_if
            .iter()
            .any(|x| x["matches_removed"].as_u64() > Some(0))
    );
    // Nothing was rewritten.
    let again = app.get("/v1/admin/audits/ratings", &admin.token).await;
    assert_eq!(again.body["mismatches"], json!([]));

    // Two players trading quick wins and losses get flagged.
    let (x, y) = (app.player("X").await, app.player("Y").await);
    for i in 0..4 {
        let (id, first, second) = app.ranked_with(&x, &y, "four_in_a_row").await;
        let (winner, loser) = if i % 2 == 0 { (&x, &y) } else { (&y, &x) };
        if first.id == winner.id {
            app.finish_four(&id, &first, &second, true).await;
        } else {
            let _ = loser;
            app.finish_four(&id, &first, &second, false).await;
        }
        app.clock.advance(time::Duration::minutes(3));
    }
    app.project().await;
    let flags = app.get("/v1/admin/flags", &admin.token).await;
    assert_eq!(flags.status, StatusCode::OK, "{:?}", flags.body);
    let list = flags.body["flags"].as_array().expect("flags");
    assert!(
        list.iter().any(|f| f["kind"] == "repeated_pair"
            && f["players"]
                .as_array()
                .is_some_and(|p| p.contains(&json!(x.id)) && p.contains(&json!(y.id)))),
        "{list:?}"
    );
    assert!(list.iter().any(|f| f["kind"] == "short_loss"), "{list:?}");
    assert!(
        flags.body["rules"]["repeated_pair_min_matches"]
            .as_u64()
            .is_some()
    );

    // Queue statistics and metrics see the pairings.
    let stats = app.get("/v1/admin/queue/stats", &admin.token).await;
    // The schedule is told in the asker's language, from the texts.
    assert_eq!(
        stats.body["schedule"]["objective"][0],
        "as many pairs as possible"
    );
    // When the waves run, under a burst too.
    let waves = stats.body["schedule"]["waves"].as_str().expect("waves");
    assert!(
        waves.contains(" ms after the previous one started")
            && waves.contains("starts the next as soon as it has committed"),
        "{waves}"
    );
    let em_portugues = app
        .get_in("pt", "/v1/admin/queue/stats", &admin.token)
        .await;
    assert_eq!(
        em_portugues.body["schedule"]["objective"][0],
        "o maior número possível de pares"
    );
    let pools = stats.body["pools"].as_array().expect("pools");
    assert!(
        pools
            .iter()
            .any(|p| p["game"] == "four_in_a_row" && p["pairs"].as_i64() > Some(0)),
        "{pools:?}"
    );
    let metrics = app
        .send(app.http.get(format!("{}/metrics", app.base)))
        .await;
    assert_eq!(metrics.status, StatusCode::OK);
    // Anonymous scrapes get no pool statistics (nor the scan of the day's pairings behind
    // them); an admin's get them, a player's do not.
    let text = app.metrics_text().await;
    assert!(!text.contains("discs_queue_"), "{text}");
    assert!(!text.contains("discs_waves_total"), "{text}");
    assert!(text.contains("discs_projection_position"), "{text}");
    let text = app.metrics_text_as(Some(&admin.token)).await;
    assert!(
        text.contains("discs_queue_wait_seconds{game=\"four_in_a_row\""),
        "{text}"
    );
    assert!(text.contains("discs_waves_total"), "{text}");
    let player = app.player("Peeker").await;
    let text = app.metrics_text_as(Some(&player.token)).await;
    assert!(!text.contains("discs_queue_"), "{text}");
    assert!(text.contains("discs_projection_position"), "{text}");
}

#[tokio::test]
async fn every_admin_call_refuses_a_player_token() {
    let app = spawn_app().await;
    let p = app.player("Eve").await;
    let admin = app.admin("Root").await;
    let gets = [
        "/v1/admin/audits/ratings".to_owned(),
        format!("/v1/admin/players/{}/ratings/reversi/explain", p.id),
        "/v1/admin/flags".to_owned(),
        "/v1/admin/queue/stats".to_owned(),
        "/v1/admin/projections/ratings".to_owned(),
    ];
    for path in &gets {
        let res = app.get(path, &p.token).await;
        assert_eq!(
            (res.status, res.code()),
            (StatusCode::FORBIDDEN, "forbidden"),
            "{path}"
        );
        assert_eq!(
            app.get(path, &admin.token).await.status,
            StatusCode::OK,
            "{path}"
        );
    }
    let res = app
        .post("/v1/admin/projections/ratings/rebuild", &p.token, json!({}))
        .await;
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::FORBIDDEN, "forbidden")
    );
    let res = app
        .post(
            "/v1/admin/projections/nope/rebuild",
            &admin.token,
            json!({}),
        )
        .await;
    assert_eq!(res.code(), "invalid_request");
    let res = app
        .post(
            "/v1/admin/projections/queue/rebuild",
            &admin.token,
            json!({}),
        )
        .await;
    assert_eq!(res.status, StatusCode::ACCEPTED, "{:?}", res.body);
    assert!(res.body["rebuild_id"].is_string());
    let state = app.get("/v1/admin/projections/queue", &admin.token).await;
    assert_eq!(state.body["name"], "queue");
    assert_eq!(state.body["rebuild"]["rebuild_id"], res.body["rebuild_id"]);
}

#[tokio::test]
async fn two_runners_racing_on_one_projection_apply_each_event_once() {
    let app = spawn_app().await;
    let players = league(&app, 2).await;
    for i in 0..3 {
        let (id, first, second) = app
            .ranked_with(&players[i], &players[i + 1], "four_in_a_row")
            .await;
        app.finish_four(&id, &first, &second, i % 2 == 0).await;
    }
    let one = projections::Runner::new(app.state.log.clone()).with_batch(1);
    let two = projections::Runner::new(app.state.log.clone()).with_batch(1);
    let (a, b) = tokio::join!(one.sync_all(), two.sync_all());
    let applied = a.expect("runner one") + b.expect("runner two");
    assert!(applied > 0);
    assert_eq!(dump(&app.db_url, "match_history").await.len(), 10);
    assert_eq!(dump(&app.db_url, "rating_points").await.len(), 10);
    let audit = projections::audit::ratings(&app.state.log, None, &[])
        .await
        .expect("audit");
    assert!(audit.mismatches.is_empty(), "{:?}", audit.mismatches);
    let (_, events) = app
        .state
        .projections
        .checkpoint(projections::Projection::History)
        .await
        .expect("checkpoint");
    // Every match_created and match_ended once: 5 matches.
    assert_eq!(events, 10);
}

#[tokio::test]
async fn the_audit_checks_the_leaderboards_own_copy_of_each_rating() {
    let app = spawn_app().await;
    league(&app, 5).await;
    app.project().await;
    let clean = projections::audit::ratings(&app.state.log, None, &[])
        .await
        .expect("audit");
    assert!(clean.mismatches.is_empty(), "{:?}", clean.mismatches);
    // The leaderboard's row moves away from the log; `ratings` stays right.
    let client = database::testing::raw_client(&app.db_url).await;
    let row = client
        .query_one(
            "UPDATE leaderboard SET deviation = deviation - 3 \
              WHERE (game, player_id) = (SELECT game, player_id FROM leaderboard \
                                         ORDER BY game, player_id LIMIT 1) \
              RETURNING player_id, game",
            &[],
        )
        .await
        .expect("planted");
    let (player, game): (uuid::Uuid, String) = (row.get(0), row.get(1));
    let report = projections::audit::ratings(&app.state.log, None, &[])
        .await
        .expect("audit");
    assert_eq!(report.mismatches.len(), 1, "{:?}", report.mismatches);
    let m = &report.mismatches[0];
    assert_eq!(
        (m.table, m.player_id.as_uuid(), m.game.as_str()),
        ("leaderboard", player, game.as_str())
    );
    let (stored, recomputed) = (m.stored.expect("a row"), m.recomputed.expect("a rating"));
    assert!((recomputed.deviation - stored.deviation - 3.0).abs() < 1e-9);
    assert_eq!(m.first_diverging_match, None);
    assert!(discs::cli::audit_table(&report).contains("leaderboard"));
}
