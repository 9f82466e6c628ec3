//! The analysis calls over HTTP: positions scored as the published test sets say (by moves or by
//! board and side), refusals and budgets, a finished match judged ply by ply, and solo games
//! against the search levels 3 to 5.

use reqwest::StatusCode;
use serde_json::{Value, json};

use domain::analysis::position_after;
use domain::games::{FourInARow, Game, GameId, Reversi, Symmetry};
use domain::ids::PlayerId;

use crate::helpers::{Player, TestApp, spawn_app, spawn_app_with};

const L3_R1: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../oracles/connect4/Test_L3_R1"
));
const L2_R1: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../oracles/connect4/Test_L2_R1"
));
const L1_R1: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../oracles/connect4/Test_L1_R1"
));
const FFO_1_19: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../oracles/reversi/fforum-1-19.obf"
));

/// An FFO line as a board-and-side body, with its best score and every move reaching it.
fn ffo(line: &str) -> (Value, i64, Vec<String>) {
    let line = domain::oracles::ffo_line(line).expect("an FFO line");
    let side = match line.to_move {
        domain::games::Side::First => "B",
        domain::games::Side::Second => "W",
    };
    let best = i64::from(line.best_score().expect("a move"));
    let moves = line.best_moves().iter().map(|m| m.to_string()).collect();
    (
        json!({"game": "reversi", "board": line.rows, "side": side}),
        best,
        moves,
    )
}

/// The first `n` lines of a Connect Four test set: (moves, score).
fn sample(set: &str, n: usize) -> Vec<(String, i64)> {
    set.lines()
        .take(n)
        .map(|line| {
            let (moves, score) = line.split_once(' ').expect("`<moves> <score>`");
            (moves.to_owned(), score.parse().expect("a score"))
        })
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|s| s.as_str().expect("a string").to_owned())
        .collect()
}

/// The board-and-side body of the position after `moves`.
fn board_body(game: GameId, moves: &str) -> Value {
    let pos = position_after(game, moves).expect("a legal record");
    json!({
        "game": game.as_str(),
        "board": pos.rows(),
        "side": pos.color(pos.side_to_move()).to_string(),
    })
}

#[tokio::test]
async fn four_in_a_row_positions_score_as_the_published_test_sets() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    for (set, n) in [(L3_R1, 4), (L2_R1, 4), (L1_R1, 3)] {
        for (moves, score) in sample(set, n) {
            let res = app
                .analyse(&ada, json!({"game": "four_in_a_row", "moves": moves}), None)
                .await;
            assert_eq!(res.status, StatusCode::OK, "{moves}: {:?}", res.body);
            assert_eq!(res.body["score"], score, "{moves}");
            assert_eq!(res.body["exact"], true, "{moves}");
            let legal = position_after(GameId::FourInARow, &moves)
                .expect("a position")
                .legal_moves();
            let best = strings(&res.body["best_moves"]);
            assert!(!best.is_empty(), "{moves}");
            assert!(best.iter().all(|m| legal.contains(m)), "{moves}: {best:?}");
        }
    }
}

#[tokio::test]
async fn reversi_endgames_score_as_the_ffo_suite_says() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    for line in FFO_1_19.lines().take(3) {
        let (body, score, best) = ffo(line);
        let res = app.analyse(&ada, body, Some(30_000)).await;
        assert_eq!(res.status, StatusCode::OK, "{line}: {:?}", res.body);
        assert_eq!(res.body["score"], score, "{line}");
        assert_eq!(res.body["exact"], true, "{line}");
        let mut found = strings(&res.body["best_moves"]);
        found.sort();
        assert_eq!(found, best, "{line}");
    }
}

/// `body`'s board seen through `s`, the side to move unchanged.
fn turned(body: &Value, s: Symmetry) -> Value {
    let rows: Vec<String> = strings(&body["board"]);
    json!({"game": body["game"], "board": s.rows(&rows), "side": body["side"]})
}

#[tokio::test]
async fn a_solved_position_answers_its_images_from_the_shared_cache() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let (moves, score) = sample(L2_R1, 1).remove(0);
    let four = board_body(GameId::FourInARow, &moves);
    let ffo_line = FFO_1_19.lines().next().expect("an FFO line");
    let (reversi, reversi_score, _) = ffo(ffo_line);
    // (position, its score, the symmetry its image is seen through, where the position's own
    // answer comes from: searched the first time, from the cache once solved).
    let cases = [
        (four, score, Symmetry::MirrorColumns, "search"),
        (reversi.clone(), reversi_score, Symmetry::Rotate90, "search"),
        (reversi, reversi_score, Symmetry::Transpose, "cache"),
    ];
    for (body, score, s, source) in cases {
        let first = app.analyse(&ada, body.clone(), Some(30_000)).await;
        assert_eq!(first.status, StatusCode::OK, "{:?}", first.body);
        assert_eq!(first.body["source"], source, "{s:?}");
        assert_eq!(
            (first.body["score"].as_i64(), first.body["exact"].as_bool()),
            (Some(score), Some(true))
        );
        let image = app.analyse(&ada, turned(&body, s), Some(30_000)).await;
        assert_eq!(image.status, StatusCode::OK, "{:?}", image.body);
        assert_eq!(image.body["source"], "cache", "{s:?}: {:?}", image.body);
        assert_eq!(image.body["score"], score);
        assert_eq!(image.body["exact"], true);
        // The image's best moves are the first answer's, seen through the same symmetry.
        let mut expected: Vec<String> = strings(&first.body["best_moves"])
            .iter()
            .map(|m| match body["game"].as_str() {
                Some("reversi") => {
                    Reversi::transform_move(m.parse().expect("a square"), s).to_string()
                }
                _ => FourInARow::transform_move(m.parse().expect("a column"), s).to_string(),
            })
            .collect();
        let mut found = strings(&image.body["best_moves"]);
        expected.sort();
        found.sort();
        assert_eq!(found, expected, "{s:?}");
    }
}

#[tokio::test]
async fn a_reversi_side_that_must_pass_gets_the_negated_score_after_the_pass() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    // Black (b1) flanks nothing; white takes b1 with c1 and wipes black out: +64 for white.
    let board = [
        "WB......", "........", "........", "...WW...", "...WW...", "........", "........",
        "........",
    ];
    let res = app
        .analyse(
            &ada,
            json!({"game": "reversi", "board": board, "side": "b"}),
            None,
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(
        res.body,
        json!({"score": -64, "best_moves": [], "exact": true, "outcome": "loss", "source": "search"})
    );
    // The opening by moves, upper case accepted: moves come back canonical.
    let opening = app
        .analyse(&ada, json!({"game": "reversi", "moves": "F5D6"}), Some(200))
        .await;
    assert_eq!(opening.status, StatusCode::OK, "{:?}", opening.body);
    let legal = position_after(GameId::Reversi, "f5d6")
        .expect("a position")
        .legal_moves();
    let best = strings(&opening.body["best_moves"]);
    assert!(
        !best.is_empty() && best.iter().all(|m| legal.contains(m)),
        "{best:?}"
    );
}

#[tokio::test]
async fn a_board_and_side_get_the_same_answer_as_the_moves_that_led_there() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    for (moves, score) in sample(L2_R1, 3) {
        let by_moves = app
            .analyse(&ada, json!({"game": "four_in_a_row", "moves": moves}), None)
            .await;
        let by_board = app
            .analyse(&ada, board_body(GameId::FourInARow, &moves), None)
            .await;
        assert_eq!(by_board.status, StatusCode::OK, "{:?}", by_board.body);
        for field in ["score", "best_moves", "exact"] {
            assert_eq!(
                by_board.body[field], by_moves.body[field],
                "{moves}: {field}"
            );
        }
        assert_eq!(by_board.body["score"], score);
        // The same position: solved by the first ask, the second is answered from the cache.
        assert_eq!(
            (
                by_moves.body["source"].as_str(),
                by_board.body["source"].as_str()
            ),
            (Some("search"), Some("cache")),
            "{moves}"
        );
    }
}

#[tokio::test]
async fn finished_positions_bad_moves_and_bad_budgets_are_refused() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let four = |moves: &str| json!({"game": "four_in_a_row", "moves": moves});
    let cases = [
        (four("4141414"), None, "invalid_request"),
        (
            board_body(GameId::FourInARow, "4141414"),
            None,
            "invalid_request",
        ),
        (four("4444444"), None, "illegal_move"),
        (four("48"), None, "illegal_move"),
        (four("44"), Some(0), "invalid_request"),
        (four("44"), Some(30_001), "invalid_request"),
        (four("44"), Some(-5), "invalid_request"),
        (
            json!({"game": "four_in_a_row", "moves": "4", "board": [], "side": "R"}),
            None,
            "invalid_request",
        ),
        (
            json!({"game": "four_in_a_row", "board": [".......", ".......", ".......", ".......", ".......", "......."], "side": "B"}),
            None,
            "invalid_request",
        ),
        (
            json!({"game": "four_in_a_row", "board": ["...R..."], "side": "R"}),
            None,
            "invalid_request",
        ),
        (json!({"game": "four_in_a_row"}), None, "invalid_request"),
    ];
    for (body, budget, code) in cases {
        let res = app.analyse(&ada, body.clone(), budget).await;
        assert_eq!(
            res.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body} {budget:?}: {:?}",
            res.body
        );
        assert_eq!(res.code(), code, "{body} {budget:?}");
    }
    let anonymous = app
        .send(
            app.http
                .post(format!("{}/v1/analysis", app.base))
                .json(&four("44")),
        )
        .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_tiny_budget_on_a_hard_position_gives_an_estimate() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    // The empty board takes billions of nodes to solve: a millisecond proves nothing.
    let res = app
        .analyse(&ada, json!({"game": "four_in_a_row", "moves": ""}), Some(1))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(res.body["exact"], false);
    let score = res.body["score"].as_i64().expect("a score");
    // The outcome book proves the first player's win: the estimate keeps to its side.
    assert!((1..=18).contains(&score), "{score}");
    assert_eq!(res.body["outcome"], "win");
    let columns = ["1", "2", "3", "4", "5", "6", "7"];
    for m in strings(&res.body["best_moves"]) {
        assert!(columns.contains(&m.as_str()), "{m}");
    }
    // After a first disc in column 3 or 5, a proven draw; after column 1, the second player
    // wins: Allis' solution, as the book ships it.
    for (moves, outcome) in [("3", "draw"), ("5", "draw"), ("1", "win"), ("4", "loss")] {
        let res = app
            .analyse(
                &ada,
                json!({"game": "four_in_a_row", "moves": moves}),
                Some(1),
            )
            .await;
        assert_eq!(res.body["outcome"], outcome, "{moves}: {:?}", res.body);
        let score = res.body["score"].as_i64().expect("a score");
        assert_eq!(
            score.signum(),
            [-1, 0, 1][["loss", "draw", "win"]
                .iter()
                .position(|o| *o == outcome)
                .expect("an outcome")],
            "{moves}"
        );
    }
}

#[tokio::test]
async fn a_finished_match_is_judged_ply_by_ply_and_an_active_one_is_not() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = app.room_match(&ada, &bob, "four_in_a_row").await;
    let path = format!("/v1/matches/{id}/analysis");
    let early = app.get(&path, &ada.token).await;
    assert_eq!(early.status, StatusCode::CONFLICT, "{:?}", early.body);
    assert_eq!(early.code(), "match_active");

    // Ada stacks column 4 and wins with her 4th disc; Bob ignores the threat at ply 6.
    app.finish_four(&id, &ada, &bob, true).await;
    let res = app.get(&path, &bob.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let plies = res.body["plies"].as_array().expect("plies");
    let moves: Vec<&str> = plies
        .iter()
        .map(|p| p["move"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(moves, ["4", "1", "4", "1", "4", "1", "4"]);
    // Every ply's outcome for its mover is proven: the first ones by the outcome book (4 wins
    // for the first player; 1 loses for the second, which 4 already doomed), the rest by search.
    let outcomes: Vec<&str> = plies
        .iter()
        .map(|p| p["outcome"].as_str().unwrap_or("unproven"))
        .collect();
    assert_eq!(outcomes[..2], ["win", "loss"], "{outcomes:?}");
    for (n, p) in (1..).zip(plies) {
        assert_eq!(p["ply"], n);
        for key in ["score_before", "score_after", "best_moves", "exact"] {
            assert!(p.get(key).is_some(), "ply {n} has {key}");
        }
        if p["exact"] == true {
            let (before, after) = (&p["score_before"], &p["score_after"]);
            assert!(after.as_i64() <= before.as_i64(), "ply {n}: {p}");
        }
    }
    let last = &plies[6];
    assert_eq!(
        (&last["score_before"], &last["score_after"], &last["exact"]),
        (&json!(18), &json!(18), &json!(true)),
        "a win with the 4th disc is +18"
    );
    assert_eq!(last["best_moves"], json!(["4"]));
    let sixth = &plies[5];
    assert_eq!(sixth["score_after"], -18, "Bob lets Ada win at once");
    assert_eq!(sixth["exact"], true);
    assert_eq!(sixth["best_moves"], json!(["4"]), "only the block holds");

    let budget = app.get(&format!("{path}?budget_ms=0"), &ada.token).await;
    assert_eq!(budget.status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn a_finished_reversi_match_is_judged_ply_by_ply() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = app.room_match(&ada, &bob, "reversi").await;
    for (p, mv) in [(&ada, "f5"), (&bob, "d6"), (&ada, "c3"), (&bob, "d3")] {
        let res = app.play(p, &id, mv).await;
        assert_eq!(res.status, StatusCode::OK, "{mv}: {:?}", res.body);
    }
    let resigned = app
        .post(&format!("/v1/matches/{id}/resign"), &bob.token, json!({}))
        .await;
    assert_eq!(resigned.status, StatusCode::OK, "{:?}", resigned.body);
    let res = app
        .get(
            &format!("/v1/matches/{id}/analysis?budget_ms=3000"),
            &ada.token,
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let plies = res.body["plies"].as_array().expect("plies");
    let moves: Vec<&str> = plies
        .iter()
        .map(|p| p["move"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(moves, ["f5", "d6", "c3", "d3"]);
    for p in plies {
        for key in ["score_before", "score_after"] {
            let score = p[key].as_i64().expect("a score");
            assert!((-64..=64).contains(&score), "{p}");
        }
        assert!(!strings(&p["best_moves"]).is_empty(), "{p}");
    }
}

/// Plays `turns` of a solo game against the CPU at `level`, the player always taking their
/// first legal move; checks every CPU reply follows at once and hands the turn back.
async fn solo_against(app: &TestApp, p: &Player, game: &str, level: u8, first: &str, turns: usize) {
    let mut view = app
        .solo(p, game, json!({"cpu_level": level, "first": first}))
        .await;
    let id = view["match_id"].as_str().expect("an id").to_owned();
    for _ in 0..turns {
        if view["status"] != "active" {
            break;
        }
        assert_eq!(view["to_move"], 1, "{game} level {level}: the CPU replied");
        let mv = view["legal_moves"][0].as_str().expect("a move").to_owned();
        let res = app.play(p, &id, &mv).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
        app.run_workers().await;
        view = app.view(p, &id).await;
    }
    let events = app.events(p, &id).await;
    let cpu_moves = events
        .iter()
        .filter(|e| e["type"] == "move_played" && e["data"]["by"] == "cpu")
        .count();
    assert!(
        cpu_moves >= turns,
        "{game} level {level}: {cpu_moves} CPU moves"
    );
    // Every CPU move replays: the replay's last board is the live one.
    let replay = app.get(&format!("/v1/matches/{id}/replay"), &p.token).await;
    let plies = replay.body["plies"].as_array().expect("plies");
    assert_eq!(plies.last().expect("a ply")["board"], view["board"]);
}

#[tokio::test]
async fn solo_games_against_levels_three_to_five_get_legal_replies_in_both_games() {
    let app = spawn_app().await;
    // A player per game: one may play three solo matches against levels 4-5 at once.
    for (game, name) in [("four_in_a_row", "Ada"), ("reversi", "Bob")] {
        let p = app.player(name).await;
        for (level, first) in [(3, "me"), (4, "cpu"), (5, "cpu")] {
            solo_against(&app, &p, game, level, first, 3).await;
        }
    }
}

#[tokio::test]
async fn an_instance_busy_with_analyses_refuses_one_more_with_a_429() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    // Every slot an analysis may take, held (by other players: one runs one at a time).
    let mut held = Vec::new();
    for n in 1.. {
        let other = PlayerId::from_uuid(uuid::Uuid::from_u128(n));
        match app.state.searches.for_analysis(other).await {
            Ok(slot) => held.push(slot),
            Err(_) => break,
        }
    }
    assert!(!held.is_empty());
    let body = json!({"game": "four_in_a_row", "moves": "44"});
    let busy = app.analyse(&ada, body.clone(), None).await;
    assert_eq!(
        busy.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{:?}",
        busy.body
    );
    assert_eq!(busy.code(), "rate_limited");
    assert!(busy.headers.contains_key("retry-after"));
    drop(held);
    let free = app.analyse(&ada, body, Some(50)).await;
    assert_eq!(free.status, StatusCode::OK, "{:?}", free.body);
}

#[tokio::test]
async fn a_player_with_an_analysis_running_gets_429_for_another_one() {
    // Room for three analyses on the instance: the limit met is the player's.
    let app = spawn_app_with(|c| c.core.searches = Some(4)).await;
    let ada = app.player("Ada").await;
    let bob = app.player("Bob").await;
    let ada_id = PlayerId::from_uuid(ada.id.parse().expect("a player id"));
    // Ada's one analysis at a time (DISCS_ANALYSES_PER_PLAYER = 1), running.
    let running = app
        .state
        .searches
        .for_analysis(ada_id)
        .await
        .expect("a free slot");
    let body = json!({"game": "four_in_a_row", "moves": "44"});
    let refused = app.analyse(&ada, body.clone(), Some(50)).await;
    refused.assert_rate_limited("1");
    let other = app.analyse(&bob, body.clone(), Some(50)).await;
    assert_eq!(other.status, StatusCode::OK, "{:?}", other.body);
    drop(running);
    let mine = app.analyse(&ada, body, Some(50)).await;
    assert_eq!(mine.status, StatusCode::OK, "{:?}", mine.body);
}

#[tokio::test]
async fn a_player_seated_in_a_ranked_match_gets_no_analysis_until_it_ends() {
    let app = spawn_app().await;
    let (ada, bob, cy) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Cy").await,
    );
    let position = json!({"game": "four_in_a_row", "moves": "4444"});
    let quick = "/v1/analysis?budget_ms=100";
    // A job Ada queued before her ranked match.
    let queued = app
        .post("/v1/analysis/jobs", &ada.token, position.clone())
        .await;
    assert_eq!(queued.status, StatusCode::ACCEPTED, "{:?}", queued.body);
    let job = format!(
        "/v1/analysis/jobs/{}",
        queued.body["job_id"].as_str().expect("a job id")
    );
    let (id, first, _second) = app.ranked_with(&ada, &bob, "four_in_a_row").await;

    // Both seated players are refused every analysis while the match is played.
    for p in [&ada, &bob] {
        let res = app.post("/v1/analysis", &p.token, position.clone()).await;
        assert_eq!(
            (res.status, res.code()),
            (StatusCode::CONFLICT, "in_ranked_match"),
            "{:?}",
            res.body
        );
        let res = app
            .post("/v1/analysis/jobs", &p.token, position.clone())
            .await;
        assert_eq!(res.code(), "in_ranked_match", "{:?}", res.body);
    }
    // The job queued before waits with its answer; the refusal is told in the asker's language.
    let res = app.get(&job, &ada.token).await;
    assert_eq!(res.code(), "in_ranked_match");
    let res = app.get_in("pt", &job, &ada.token).await;
    assert_eq!(res.code(), "in_ranked_match");
    let detail = res.body["detail"].as_str().expect("a detail");
    assert!(detail.contains("partida classificada"), "{detail}");
    // Someone not playing is answered (within a short budget: the answer's depth is not the
    // point here).
    let res = app.post(quick, &cy.token, position.clone()).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);

    // Once the match has ended, Ada is answered again, and her job too.
    let res = app
        .post(&format!("/v1/matches/{id}/resign"), &first.token, json!({}))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app.post(quick, &ada.token, position.clone()).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app.get(&job, &ada.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
}

/// The image of a Four in a Row record in the mirror (column c becomes 8 - c).
fn mirrored(moves: &str) -> String {
    moves
        .chars()
        .map(|c| match c.to_digit(10) {
            Some(d) => char::from_digit(8 - d, 10).expect("a column"),
            None => c,
        })
        .collect()
}

#[tokio::test]
async fn a_live_ranked_position_and_all_that_can_follow_it_are_refused_to_everyone_beyond_the_opening()
 {
    let app = spawn_app().await;
    let (ada, bob, cy, dee) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Cy").await,
        app.player("Dee").await,
    );
    let (id, first, second) = app.ranked_with(&ada, &bob, "four_in_a_row").await;
    let four = |moves: &str| json!({"game": "four_in_a_row", "moves": moves});
    let board = |moves: &str| {
        let pos = position_after(GameId::FourInARow, moves).expect("a position");
        let side = pos.color(pos.side_to_move()).to_string();
        json!({"game": "four_in_a_row", "board": pos.rows(), "side": side})
    };
    let refused = |res: &crate::helpers::Res| {
        assert_eq!(
            (res.status, res.code()),
            (StatusCode::CONFLICT, "in_ranked_match"),
            "{:?}",
            res.body
        );
    };
    // Before the match gets there, Cy solves a position two plies after its ply 8, and a job of
    // his has it done at once.
    let ahead = "4453361257";
    let solved = app.analyse(&cy, four(ahead), Some(20_000)).await;
    assert_eq!(solved.status, StatusCode::OK, "{:?}", solved.body);
    assert_eq!(solved.body["exact"], true, "{:?}", solved.body);
    let queued = app.post("/v1/analysis/jobs", &cy.token, four(ahead)).await;
    assert_eq!(queued.status, StatusCode::ACCEPTED, "{:?}", queued.body);
    assert_eq!(queued.body["status"], "done", "{:?}", queued.body);
    let job = format!(
        "/v1/analysis/jobs/{}",
        queued.body["job_id"].as_str().expect("a job id")
    );
    let res = app.get(&job, &cy.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    // The same job under an Idempotency-Key of his.
    let key = "5b0e2c1a-9f3d-4e7b-8a6c-1d2e3f4a5b6c";
    let keyed = |body: serde_json::Value| {
        app.send(
            app.http
                .post(format!("{}/v1/analysis/jobs", app.base))
                .bearer_auth(&cy.token)
                .header("idempotency-key", key)
                .json(&body),
        )
    };
    let first_keyed = keyed(four(ahead)).await;
    assert_eq!(first_keyed.body["status"], "done", "{:?}", first_keyed.body);
    // Eight plies: the public opening (DISCS_PUBLIC_PLIES, 8 in Four in a Row by default).
    let record = "44533612";
    for (i, mv) in record.chars().enumerate() {
        let p = if i % 2 == 0 { &first } else { &second };
        let res = app.play(p, &id, &mv.to_string()).await;
        assert_eq!(res.status, StatusCode::OK, "{mv}: {:?}", res.body);
    }

    // The live position is public at depth 8; every position that can follow it is not, for
    // anyone, by moves or by board, in either orientation, as a question or as a job: one
    // move on, two moves on (Cy's solved position, and his job's answer, which waits).
    let res = app.analyse(&cy, four(record), Some(50)).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    for column in 1..=7 {
        let next = format!("{record}{column}");
        refused(&app.analyse(&cy, four(&next), Some(50)).await);
        refused(&app.analyse(&dee, four(&mirrored(&next)), Some(50)).await);
        refused(&app.analyse(&dee, board(&mirrored(&next)), Some(50)).await);
    }
    refused(
        &app.post("/v1/analysis/jobs", &cy.token, four("445336125"))
            .await,
    );
    refused(&app.analyse(&dee, four(ahead), Some(50)).await);
    refused(&app.analyse(&dee, board(&mirrored(ahead)), Some(50)).await);
    refused(&app.get(&job, &cy.token).await);
    // Once his stored answer is purged, the key with another, public position finds the keyed
    // job: its answer is still withheld.
    database::testing::raw_client(&app.db_url)
        .await
        .execute(
            "DELETE FROM idempotency_keys WHERE player_id = $1::text::uuid",
            &[&cy.id],
        )
        .await
        .expect("the purge");
    refused(&keyed(four("")).await);
    let res = app
        .get_in(
            "pt",
            "/v1/analysis/jobs/00000000-0000-0000-0000-000000000000",
            &cy.token,
        )
        .await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);

    // Ply 9: the live position is now guarded itself, and Cy's finished job about a position
    // one move after it still waits with its answer, told in his language.
    let res = app.play(&first, &id, "5").await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    refused(
        &app.analyse(&dee, four(&mirrored("445336125")), Some(50))
            .await,
    );
    refused(&app.analyse(&dee, board("445336125"), Some(50)).await);
    let res = app.get_in("pt", &job, &cy.token).await;
    refused(&res);
    let detail = res.body["detail"].as_str().expect("a detail");
    assert!(
        detail.contains("partida classificada em andamento"),
        "{detail}"
    );
    // A position of the same depth off the live line is answered.
    let res = app.analyse(&cy, four("4453361277"), Some(50)).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);

    // Once the ranked match ends, everything opens again.
    let res = app
        .post(
            &format!("/v1/matches/{id}/resign"),
            &second.token,
            json!({}),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app.get(&job, &cy.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(res.body["status"], "done");
    // A casual match in the same position guards nothing.
    let casual = app.room_match(&cy, &dee, "four_in_a_row").await;
    for (i, mv) in "445336125".chars().enumerate() {
        let p = if i % 2 == 0 { &cy } else { &dee };
        let res = app.play(p, &casual, &mv.to_string()).await;
        assert_eq!(res.status, StatusCode::OK, "{mv}: {:?}", res.body);
    }
    let res = app.analyse(&ada, four("4453361251"), Some(50)).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app.analyse(&ada, four("445336125"), Some(50)).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
}
