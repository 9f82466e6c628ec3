//! Background analysis jobs over HTTP and in the database: queued, claimed and answered exactly
//! (and cached; Reversi beyond the interactive solver's empties too), taken up by another
//! instance when theirs dies, cut at their time cap, giving way to an interactive analysis; a
//! match analysis answered from the cache and queueing jobs for what it left inexact; CPU
//! choices blind to the cache.

use reqwest::StatusCode;
use serde_json::{Value, json};

use domain::analysis::position_after;
use domain::games::GameId;
use domain::ids::JobId;
use service::analysis::jobs::{Ended, LEASE, MAX_ATTEMPTS};

use crate::helpers::{Player, Res, TestApp, config, spawn_app, spawn_app_with, spawn_on};

const L2_R1: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../oracles/connect4/Test_L2_R1"
));

/// The `n`-th line of a Connect Four test set: a position by its moves, and its score.
fn solver_line(set: &str, n: usize) -> (Value, i64) {
    let line = set.lines().nth(n).expect("a line");
    let (moves, score) = line.split_once(' ').expect("`<moves> <score>`");
    (
        json!({"game": "four_in_a_row", "moves": moves}),
        score.parse().expect("a score"),
    )
}

impl TestApp {
    async fn queue_job(&self, p: &Player, body: Value) -> Res {
        self.post("/v1/analysis/jobs", &p.token, body).await
    }

    async fn job(&self, p: &Player, id: &str) -> Res {
        self.get(&format!("/v1/analysis/jobs/{id}"), &p.token).await
    }
}

fn job_id(res: &Res) -> String {
    res.body["job_id"].as_str().expect("a job id").to_owned()
}

#[tokio::test]
async fn a_job_is_queued_run_to_an_exact_answer_and_cached() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let (body, score) = solver_line(L2_R1, 3);
    let queued = app.queue_job(&ada, body.clone()).await;
    assert_eq!(queued.status, StatusCode::ACCEPTED, "{:?}", queued.body);
    let id = job_id(&queued);
    assert_eq!(queued.body["status"], "queued");
    assert_eq!(queued.body["result"], Value::Null);
    assert_eq!(app.job(&ada, &id).await.body, queued.body);
    // A job is its asker's alone.
    let foreign = app.job(&bob, &id).await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    assert_eq!(foreign.code(), "not_found");

    let ran = service::analysis::jobs::run_next(&app.state)
        .await
        .expect("a run");
    assert_eq!(
        ran.map(|(id, ended)| (id.to_string(), ended)),
        Some((id.clone(), Ended::Done))
    );
    assert_eq!(
        service::analysis::jobs::run_next(&app.state)
            .await
            .expect("a look"),
        None
    );
    let done = app.job(&ada, &id).await;
    assert_eq!(done.status, StatusCode::OK);
    assert_eq!(done.body["status"], "done", "{:?}", done.body);
    let result = &done.body["result"];
    assert_eq!(
        (&result["score"], &result["exact"]),
        (&json!(score), &json!(true))
    );
    assert!(done.body["nodes"].as_u64() > Some(0), "{:?}", done.body);
    // The same answer as an interactive analysis, which now comes from the cache.
    let now = app.analyse(&ada, body.clone(), None).await;
    assert_eq!(now.body["source"], "cache", "{:?}", now.body);
    assert_eq!(now.body["best_moves"], result["best_moves"]);
    // A job on a solved position is done as it is queued.
    let again = app.queue_job(&bob, body).await;
    assert_eq!(again.status, StatusCode::ACCEPTED);
    assert_eq!(again.body["status"], "done");
    assert_eq!(again.body["result"], *result);
    assert_eq!(again.body["nodes"], 0);
}

#[tokio::test]
async fn a_reversi_job_solves_beyond_what_an_interactive_analysis_can() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    // 30 empties (an interactive analysis solves up to 26), from a random game; the domain
    // tests check -62 and its best moves move by move.
    let line = domain::oracles::ffo_line(
        "-OOOOOO---OOOO--XOXOO-X-OOOOOX--XXXXX----X-X-X--X--X--X--------X X; A2:-62;",
    )
    .expect("an FFO line");
    let body = json!({"game": "reversi", "board": line.rows, "side": "B"});
    let estimate = app.analyse(&ada, body.clone(), Some(100)).await;
    assert_eq!(estimate.status, StatusCode::OK, "{:?}", estimate.body);
    assert_eq!(estimate.body["exact"], false, "{:?}", estimate.body);

    let id = job_id(&app.queue_job(&ada, body.clone()).await);
    let ran = service::analysis::jobs::run_next(&app.state)
        .await
        .expect("a run");
    assert_eq!(ran.map(|(_, ended)| ended), Some(Ended::Done));
    let done = app.job(&ada, &id).await;
    assert_eq!(done.body["status"], "done", "{:?}", done.body);
    assert_eq!(
        done.body["result"],
        json!({"score": -62, "best_moves": ["a2", "b2", "f3"], "exact": true})
    );
    let now = app.analyse(&ada, body, Some(100)).await;
    assert_eq!(
        (&now.body["source"], &now.body["exact"]),
        (&json!("cache"), &json!(true))
    );
}

#[tokio::test]
async fn a_retried_job_request_finds_its_job_and_bad_ones_are_refused() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let (body, _) = solver_line(L2_R1, 4);
    let send = |key: &str, body: &Value| {
        app.send(
            app.http
                .post(format!("{}/v1/analysis/jobs", app.base))
                .bearer_auth(&ada.token)
                .header("Idempotency-Key", key)
                .json(body),
        )
    };
    let first = send("job-1", &body).await;
    let retry = send("job-1", &body).await;
    assert_eq!(first.status, StatusCode::ACCEPTED);
    assert_eq!((retry.status, &retry.body), (first.status, &first.body));
    let other = send("job-2", &body).await;
    assert_ne!(job_id(&other), job_id(&first));

    let finished = app
        .queue_job(&ada, json!({"game": "four_in_a_row", "moves": "4141414"}))
        .await;
    assert_eq!(finished.status, StatusCode::UNPROCESSABLE_ENTITY);
    let both = app
        .queue_job(
            &ada,
            json!({"game": "four_in_a_row", "moves": "4", "side": "R"}),
        )
        .await;
    assert_eq!(
        both.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{:?}",
        both.body
    );
    let bad_id = app.job(&ada, "not-a-uuid").await;
    assert_eq!(bad_id.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(bad_id.code(), "invalid_request");
    let unknown = app.job(&ada, &uuid::Uuid::new_v4().to_string()).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_job_whose_instance_died_is_taken_up_by_another_and_completes() {
    let first = spawn_app().await;
    let url = first.db_url.clone();
    let second = spawn_on(&url, config(&url)).await;
    let ada = first.player("Ada").await;
    let (body, score) = solver_line(L2_R1, 5);
    let id = job_id(&first.queue_job(&ada, body).await);

    // The first instance claims the job, then dies: it never renews its lease.
    let claimed = service::analysis::jobs::claim(&first.state)
        .await
        .expect("a claim")
        .expect("the queued job");
    assert_eq!(
        (claimed.job_id.to_string(), claimed.attempt),
        (id.clone(), 1)
    );
    drop(claimed);
    // (The database outlives the instance.)
    let _db = first.db.clone();
    drop(first);
    assert_eq!(second.job(&ada, &id).await.body["status"], "running");
    // While the lease holds, nobody else takes it.
    assert!(
        service::analysis::jobs::claim(&second.state)
            .await
            .expect("a look")
            .is_none()
    );

    second
        .clock
        .advance(time::Duration::try_from(LEASE).expect("a lease") + time::Duration::SECOND);
    let ran = service::analysis::jobs::run_next(&second.state)
        .await
        .expect("a run");
    assert_eq!(
        ran,
        Some((id.parse::<JobId>().expect("an id"), Ended::Done))
    );
    let done = second.job(&ada, &id).await;
    assert_eq!(done.body["status"], "done", "{:?}", done.body);
    assert_eq!(done.body["result"]["score"], score);
    assert_eq!(done.body["result"]["exact"], true);
}

#[tokio::test]
async fn a_job_whose_instances_keep_dying_fails_after_its_last_attempt() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let (body, _) = solver_line(L2_R1, 6);
    let id = job_id(&app.queue_job(&ada, body).await);
    let lease = time::Duration::try_from(LEASE).expect("a lease") + time::Duration::SECOND;
    for attempt in 1..=MAX_ATTEMPTS {
        let claimed = service::analysis::jobs::claim(&app.state)
            .await
            .expect("a claim");
        assert_eq!(claimed.map(|c| c.attempt), Some(attempt));
        app.clock.advance(lease);
    }
    let ran = service::analysis::jobs::run_next(&app.state)
        .await
        .expect("a run");
    assert_eq!(ran.map(|(_, ended)| ended), Some(Ended::Failed));
    let failed = app.job(&ada, &id).await;
    assert_eq!(failed.body["status"], "failed");
    assert_eq!(failed.body["result"], Value::Null);
    assert!(
        failed.body["error"]
            .as_str()
            .is_some_and(|e| e.contains("attempts"))
    );
    // Told in the asker's language, from the texts.
    let em_portugues = app
        .get_in("pt", &format!("/v1/analysis/jobs/{id}"), &ada.token)
        .await;
    assert_eq!(
        em_portugues.body["error"],
        format!(
            "Abandonada depois de {MAX_ATTEMPTS} tentativas: cada uma terminou com a instância que a executava"
        )
    );
}

#[tokio::test]
async fn a_job_at_its_time_cap_answers_with_its_best_estimate() {
    let app = spawn_app_with(|c| c.core.analysis_job_seconds = 1).await;
    let ada = app.player("Ada").await;
    // The empty board: far beyond a second.
    let id = job_id(
        &app.queue_job(&ada, json!({"game": "four_in_a_row", "moves": ""}))
            .await,
    );
    let ran = service::analysis::jobs::run_next(&app.state)
        .await
        .expect("a run");
    assert_eq!(ran.map(|(_, ended)| ended), Some(Ended::Done));
    let done = app.job(&ada, &id).await;
    assert_eq!(done.body["status"], "done");
    assert_eq!(done.body["result"]["exact"], false);
    let best = done.body["result"]["best_moves"].as_array().expect("moves");
    assert_eq!(best.len(), 1, "{:?}", done.body);
    assert!(
        done.body["elapsed_ms"].as_u64() >= Some(1000),
        "{:?}",
        done.body
    );
    assert!(done.body["nodes"].as_u64() > Some(0));
    // An estimate is not cached.
    let after = app
        .analyse(&ada, json!({"game": "four_in_a_row", "moves": ""}), Some(1))
        .await;
    assert_eq!(after.body["source"], "search");
}

#[tokio::test]
async fn a_running_job_gives_way_to_an_analysis_and_resumes_to_the_same_answer() {
    let app = spawn_app_with(|c| c.core.searches = Some(2)).await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let (body, score) = solver_line(L2_R1, 7);
    let id = job_id(&app.queue_job(&ada, body).await);
    let claimed = service::analysis::jobs::claim(&app.state)
        .await
        .expect("a claim")
        .expect("the job");
    let state = app.state.clone();
    let running = tokio::spawn(async move { service::analysis::jobs::run(&state, claimed).await });
    // Whether the job searches already or not, the analysis is not refused: the job gives way.
    let (other, _) = solver_line(L2_R1, 8);
    let analysis = app.analyse(&bob, other, None).await;
    assert_eq!(analysis.status, StatusCode::OK, "{:?}", analysis.body);
    assert_eq!(running.await.expect("joined").expect("a run"), Ended::Done);
    let done = app.job(&ada, &id).await;
    assert_eq!(done.body["result"]["score"], score);
    assert_eq!(done.body["result"]["exact"], true);
}

#[tokio::test]
async fn a_match_analysis_is_answered_from_the_cache_and_queues_jobs_for_what_is_inexact() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = app.room_match(&ada, &bob, "four_in_a_row").await;
    app.finish_four(&id, &ada, &bob, true).await;
    // A second per analysis: the first plies stay inexact, the last ones are solved.
    let path = format!("/v1/matches/{id}/analysis?budget_ms=1000");
    let first = app.get(&path, &ada.token).await;
    assert_eq!(first.status, StatusCode::OK, "{:?}", first.body);
    let plies = first.body["plies"].as_array().expect("plies").clone();
    assert!(plies.iter().all(|p| p["source"] == "search"), "{plies:?}");
    // The empty board and the first plies are beyond a match analysis' budget.
    assert_eq!(plies[0]["exact"], false);
    let jobs: Vec<String> = first.body["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| j.as_str().expect("an id").to_owned())
        .collect();
    assert!(!jobs.is_empty());
    for job in &jobs {
        let res = app.job(&ada, job).await;
        assert_eq!(res.body["status"], "queued", "{:?}", res.body);
    }

    // Asked again: the plies solved the first time come from the cache, with the same answers,
    // and the same jobs are named, none queued twice.
    let second = app.get(&path, &ada.token).await;
    assert_eq!(second.body["jobs"], first.body["jobs"]);
    let again = second.body["plies"].as_array().expect("plies");
    let exact_before: Vec<bool> = {
        let (before, _) = domain::analysis::game_positions(
            GameId::FourInARow,
            &["4", "1", "4", "1", "4", "1", "4"].map(str::to_owned),
        )
        .expect("the record");
        let mut solved = Vec::new();
        for (pos, _) in &before {
            let body = json!({
                "game": "four_in_a_row",
                "board": pos.rows(),
                "side": pos.color(pos.side_to_move()).to_string(),
            });
            let res = app.analyse(&ada, body, Some(1)).await;
            solved.push(res.body["source"] == "cache");
        }
        solved
    };
    for ((p, q), cached) in plies.iter().zip(again).zip(&exact_before) {
        let expected = if *cached { "cache" } else { "search" };
        assert_eq!(q["source"], expected, "{q}");
        if p["exact"] == true {
            assert_eq!(
                (&q["score_before"], &q["best_moves"]),
                (&p["score_before"], &p["best_moves"])
            );
        }
    }
    assert!(exact_before.iter().any(|c| *c) && !exact_before[0]);
    let queued: i64 = {
        let client = database::testing::raw_client(&app.db_url).await;
        client
            .query_one("SELECT count(*) FROM analysis_jobs", &[])
            .await
            .expect("a count")
            .get(0)
    };
    assert_eq!(queued, jobs.len() as i64);
}

#[tokio::test]
async fn a_match_analysis_does_not_queue_a_position_another_job_has_open() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = app.room_match(&ada, &bob, "four_in_a_row").await;
    app.finish_four(&id, &ada, &bob, true).await;
    // Bob has the empty board queued already.
    let empty = domain::games::AnyPosition::start(GameId::FourInARow);
    let body = json!({
        "game": "four_in_a_row",
        "board": empty.rows(),
        "side": empty.color(empty.side_to_move()).to_string(),
    });
    let open = app.queue_job(&bob, body).await;
    assert_eq!(open.body["status"], "queued", "{:?}", open.body);
    let open_id = job_id(&open);

    let path = format!("/v1/matches/{id}/analysis?budget_ms=1000");
    let res = app.get(&path, &ada.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(res.body["plies"][0]["exact"], false);
    let jobs = res.body["jobs"].as_array().expect("jobs");
    assert!(!jobs.is_empty() && !jobs.contains(&json!(open_id)));
    let client = database::testing::raw_client(&app.db_url).await;
    let (key, _) = empty.canonical();
    let count = |sql: &'static str| {
        let client = &client;
        let key = key.clone();
        async move {
            let row = client.query_one(sql, &[&key]).await.expect("a count");
            row.get::<_, i64>(0)
        }
    };
    // One job for the empty board (Bob's), and one per other inexact ply.
    assert_eq!(
        count("SELECT count(*) FROM analysis_jobs WHERE key = $1").await,
        1
    );
    assert_eq!(
        count("SELECT count(*) FROM analysis_jobs WHERE key <> $1").await,
        jobs.len() as i64
    );
}

#[tokio::test]
async fn cpu_choices_ignore_a_poisoned_cache() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    // Every position where the CPU moves below claims, exactly, that column 1 alone is best.
    let mut keys = Vec::new();
    for a in 1..=7 {
        keys.push(format!("{a}"));
        for b in 1..=7 {
            keys.extend((1..=7).map(|c| format!("{a}{b}{c}")));
        }
    }
    let keys: Vec<String> = keys
        .iter()
        .map(|moves| {
            let pos = position_after(GameId::FourInARow, moves).expect("a position");
            pos.canonical().0
        })
        .collect();
    let client = database::testing::raw_client(&app.db_url).await;
    let planted = client
        .execute(
            "INSERT INTO solved_positions (key, game, score, best_moves, solved_at, solver) \
             SELECT DISTINCT k, 'four_in_a_row', 18, ARRAY['1'], now(), 1 \
             FROM unnest($1::text[]) k",
            &[&keys],
        )
        .await
        .expect("planted");
    assert!(planted > 100);
    for level in [3u8, 4, 5] {
        let view = app
            .solo(
                &ada,
                "four_in_a_row",
                json!({"cpu_level": level, "first": "me"}),
            )
            .await;
        let id = view["match_id"].as_str().expect("an id").to_owned();
        let played = app.play(&ada, &id, "4").await;
        assert_eq!(played.status, StatusCode::OK, "{:?}", played.body);
        let played = app.play(&ada, &id, "3").await;
        assert_eq!(played.status, StatusCode::OK, "{:?}", played.body);
        let resigned = app
            .post(&format!("/v1/matches/{id}/resign"), &ada.token, json!({}))
            .await;
        assert_eq!(resigned.status, StatusCode::OK, "{:?}", resigned.body);
        let events = app.events(&ada, &id).await;
        let seed = events[0]["data"]["cpu_seed"].as_u64().expect("the seed");
        let moves: Vec<String> = events
            .iter()
            .filter(|e| e["type"] == "move_played")
            .map(|e| e["data"]["move"].as_str().expect("a move").to_owned())
            .collect();
        assert_eq!(moves.len(), 4, "{events:?}");
        // Each reply is the CPU's pure choice for its position and the match's seed.
        for reply in [1, 3] {
            let before =
                position_after(GameId::FourInARow, &moves[..reply].concat()).expect("a position");
            let choice = domain::cpu::choose_move(&before, level, seed);
            assert_eq!(
                choice.as_deref(),
                Some(moves[reply].as_str()),
                "level {level}, ply {}",
                reply + 1
            );
        }
    }
}

/// A Four in a Row record seen in the mirror (column c becomes 8 - c).
fn mirrored(body: &Value) -> Value {
    let moves: String = body["moves"]
        .as_str()
        .expect("moves")
        .chars()
        .map(|c| char::from_digit(8 - c.to_digit(10).expect("a column"), 10).expect("a column"))
        .collect();
    json!({"game": "four_in_a_row", "moves": moves})
}

#[tokio::test]
async fn a_players_open_jobs_are_capped_and_a_position_searched_already_is_joined() {
    let app = spawn_app_with(|c| c.core.jobs_per_player = 2).await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let (first, score) = solver_line(L2_R1, 5);
    let (second, _) = solver_line(L2_R1, 6);
    let (third, _) = solver_line(L2_R1, 7);
    let keyed = |p: &Player, body: Value, key: &str| {
        app.http
            .post(format!("{}/v1/analysis/jobs", app.base))
            .bearer_auth(&p.token)
            .header("Idempotency-Key", key)
            .json(&body)
    };
    let a1 = app
        .send(keyed(&ada, first.clone(), "ada-job-one-0001"))
        .await;
    assert_eq!(a1.status, StatusCode::ACCEPTED, "{:?}", a1.body);
    let a2 = app.queue_job(&ada, second).await;
    assert_eq!(a2.status, StatusCode::ACCEPTED, "{:?}", a2.body);
    // A third open job is refused, in the asker's language; a retry of the first is not.
    let refused = app.queue_job(&ada, third.clone()).await;
    refused.assert_rate_limited("60");
    let em_portugues = app
        .send(
            app.http
                .post(format!("{}/v1/analysis/jobs", app.base))
                .bearer_auth(&ada.token)
                .header("Accept-Language", "pt")
                .json(&third),
        )
        .await;
    assert_eq!(em_portugues.code(), "rate_limited");
    let detail = em_portugues.body["detail"].as_str().expect("a detail");
    assert!(detail.contains("2 análises"), "{detail}");
    let retried = app
        .send(keyed(&ada, first.clone(), "ada-job-one-0001"))
        .await;
    assert_eq!(retried.status, StatusCode::ACCEPTED, "{:?}", retried.body);
    assert_eq!(job_id(&retried), job_id(&a1));
    let metrics = app.metrics_text().await;
    assert!(
        metrics.contains("discs_rate_limited_total{limit=\"analysis_jobs\"} 2"),
        "{metrics}"
    );

    // Bob asks for Ada's first position in the mirror: his job joins hers.
    let b1 = app.queue_job(&bob, mirrored(&first)).await;
    assert_eq!(b1.status, StatusCode::ACCEPTED, "{:?}", b1.body);
    assert_eq!(b1.body["status"], "queued");
    let client = database::testing::raw_client(&app.db_url).await;
    let leader: Option<uuid::Uuid> = client
        .query_one(
            "SELECT leader FROM analysis_jobs WHERE job_id = $1::text::uuid",
            &[&job_id(&b1)],
        )
        .await
        .expect("a row")
        .get(0);
    assert_eq!(leader.map(|l| l.to_string()), Some(job_id(&a1)));
    // Two searches answer three jobs: Ada's two, and Bob's with the first one's answer.
    let mut ran = Vec::new();
    while let Some((id, ended)) = service::analysis::jobs::run_next(&app.state)
        .await
        .expect("a run")
    {
        assert_eq!(ended, Ended::Done);
        ran.push(id.to_string());
    }
    ran.sort();
    let mut expected = vec![job_id(&a1), job_id(&a2)];
    expected.sort();
    assert_eq!(ran, expected);
    let (ada_done, bob_done) = (
        app.job(&ada, &job_id(&a1)).await,
        app.job(&bob, &job_id(&b1)).await,
    );
    assert_eq!(bob_done.body["status"], "done", "{:?}", bob_done.body);
    assert_eq!(bob_done.body["result"]["score"], json!(score));
    assert_eq!(bob_done.body["result"]["exact"], true);
    // Bob's best moves are Ada's, in his orientation.
    let mirror = |moves: &Value| -> Vec<String> {
        let mut m: Vec<String> = moves
            .as_array()
            .expect("moves")
            .iter()
            .map(|m| {
                let c = m
                    .as_str()
                    .expect("a move")
                    .parse::<u32>()
                    .expect("a column");
                (8 - c).to_string()
            })
            .collect();
        m.sort();
        m
    };
    let mut bobs: Vec<String> = bob_done.body["result"]["best_moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| m.as_str().expect("a move").to_owned())
        .collect();
    bobs.sort();
    assert_eq!(bobs, mirror(&ada_done.body["result"]["best_moves"]));
    // With her jobs done, Ada may queue again.
    let again = app.queue_job(&ada, third).await;
    assert_eq!(again.status, StatusCode::ACCEPTED, "{:?}", again.body);
}

#[tokio::test]
async fn finished_jobs_and_old_or_outdated_solved_positions_are_purged() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let (body, _) = solver_line(L2_R1, 8);
    let queued = app.queue_job(&ada, body.clone()).await;
    let id = job_id(&queued);
    let (open_body, _) = solver_line(L2_R1, 9);
    let open = job_id(&app.queue_job(&ada, open_body).await);
    // Run only the first job (the oldest): the second stays queued.
    let ran = service::analysis::jobs::run_next(&app.state)
        .await
        .expect("a run");
    assert_eq!(ran.map(|(id, _)| id.to_string()), Some(id.clone()));
    let client = database::testing::raw_client(&app.db_url).await;
    // A verdict of an older solver version is neither read nor kept.
    let (older, _) = solver_line(L2_R1, 10);
    let pos = position_after(GameId::FourInARow, older["moves"].as_str().expect("moves"))
        .expect("a position");
    client
        .execute(
            "INSERT INTO solved_positions (key, game, score, best_moves, solved_at, solver) \
             VALUES ($1, 'four_in_a_row', 99, ARRAY['1'], now(), $2)",
            &[&pos.canonical().0, &(domain::search::SOLVER_VERSION - 1)],
        )
        .await
        .expect("planted");
    let pooled = app.state.pool.get().await.expect("a connection");
    let read = service::analysis::solved::lookup(
        &pooled,
        &service::analysis::boundary::Boundary::internal(),
        &pos,
    )
    .await
    .expect("a lookup");
    assert_eq!(read, None);
    drop(pooled);
    let (jobs, solved) = service::workers::purge_analyses(&app.state)
        .await
        .expect("a purge");
    assert_eq!((jobs, solved), (0, 1), "only the outdated verdict goes");

    // A week later the finished job and the verdicts stored then go; the open job stays.
    app.clock.advance(time::Duration::hours(169));
    let (jobs, solved) = service::workers::purge_analyses(&app.state)
        .await
        .expect("a purge");
    assert_eq!(jobs, 1);
    assert_eq!(solved, 0, "verdicts are kept a year");
    assert_eq!(app.job(&ada, &id).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.job(&ada, &open).await.status, StatusCode::OK);
    app.clock.advance(time::Duration::days(366));
    let (_, solved) = service::workers::purge_analyses(&app.state)
        .await
        .expect("a purge");
    assert!(solved >= 1, "the year-old verdicts go");
    let left: i64 = client
        .query_one("SELECT count(*) FROM solved_positions", &[])
        .await
        .expect("a count")
        .get(0);
    assert_eq!(left, 0);
}
