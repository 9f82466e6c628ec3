//! The fair-play boundary tried as an adversary would, over the real server: a ranked match is
//! live (Four in a Row at ply 14, Reversi at ply 20) and two other accounts, and the seated
//! player, try every road to the value of its position or of one that can follow it — the
//! position itself by moves and by board, every image of the board, Reversi's colours
//! exchanged, positions one to four plies on, another move order, a job, a finished room game
//! through it read through its analysis, the explorer around it. No answer carries a value or a
//! best move of a guarded position; once the match ends, everything answers in full.

use reqwest::StatusCode;
use serde_json::{Value, json};

use domain::games::{AnyPosition, GameId};
use domain::rng::SplitMix64;

use crate::helpers::{Player, Res, TestApp, spawn_app};

/// A line of `plies` moves from the start of a seeded random game with no pass and no end on
/// it (so that its record is its moves), and its position.
pub(crate) fn live_line(game: GameId, plies: usize, mut seed: u64) -> (Vec<String>, AnyPosition) {
    'seeds: loop {
        let mut rng = SplitMix64(seed);
        seed += 1;
        let mut pos = AnyPosition::start(game);
        let mut line = Vec::new();
        while line.len() < plies {
            if pos.outcome().is_some() || pos.must_pass() {
                continue 'seeds;
            }
            let legal = pos.legal_moves();
            let mv = legal[rng.index(legal.len())].clone();
            pos.play(&mv).expect("a legal move");
            line.push(mv);
        }
        if pos.outcome().is_none() && !pos.must_pass() {
            return (line, pos);
        }
    }
}

/// Positions one to four plies on from `pos` along random lines (passes as they come, not
/// written), with their records after `record`.
fn descendants(
    record: &str,
    pos: &AnyPosition,
    rng: &mut SplitMix64,
) -> Vec<(String, AnyPosition)> {
    let mut out = Vec::new();
    for _ in 0..6 {
        let (mut moves, mut next) = (record.to_owned(), *pos);
        for _ in 0..4 {
            if next.outcome().is_some() {
                break;
            }
            if next.must_pass() {
                next.pass();
            }
            let legal = next.legal_moves();
            let mv = legal[rng.index(legal.len())].clone();
            next.play(&mv).expect("a legal move");
            moves.push_str(&mv);
            if next.outcome().is_none() {
                out.push((moves.clone(), next));
            }
        }
    }
    out
}

/// The position as `POST /v1/analysis` bodies by board: every board that asks the same
/// question (each image and, in Reversi, the colours exchanged with the other side to move).
fn boards(pos: &AnyPosition) -> Vec<Value> {
    domain::boundary::same_questions(pos)
        .iter()
        .map(|p| {
            json!({"game": p.game(), "board": p.rows(), "side": p.color(p.side_to_move()).to_string()})
        })
        .collect()
}

/// Another order of the same moves reaching the same position: two moves of one side
/// exchanged (Four in a Row), if there is one.
fn another_order(game: GameId, line: &[String], pos: &AnyPosition) -> Option<String> {
    for i in 0..line.len() {
        for j in (i + 2..line.len()).step_by(2) {
            let mut other = line.to_vec();
            other.swap(i, j);
            let record = other.concat();
            if let Ok(p) = domain::analysis::position_after(game, &record)
                && p.rows() == pos.rows()
                && other != line
            {
                return Some(record);
            }
        }
    }
    None
}

#[track_caller]
fn refused(res: &Res, what: &str) {
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::CONFLICT, "in_ranked_match"),
        "{what}: {:?}",
        res.body
    );
}

/// Plays `line` in match `id`, `first` and `second` in turn (no pass on the line).
pub(crate) async fn play_line(
    app: &TestApp,
    id: &str,
    first: &Player,
    second: &Player,
    line: &[String],
) {
    for (i, mv) in line.iter().enumerate() {
        let p = if i.is_multiple_of(2) { first } else { second };
        let res = app.play(p, id, mv).await;
        assert_eq!(res.status, StatusCode::OK, "{mv}: {:?}", res.body);
    }
}

/// Whether a match analysis ply says anything about a position's value.
fn carries_values(ply: &Value) -> bool {
    !ply["score_before"].is_null()
        || !ply["score_after"].is_null()
        || ply["best_moves"].as_array().is_some_and(|m| !m.is_empty())
        || !ply["outcome"].is_null()
        || !ply["quality"].is_null()
        || ply["exact"] == true
}

/// Every road to a live ranked position of `game` at ply `depth`, tried by the seated player and
/// by two other accounts; then the match ends and the roads open.
async fn no_road_reaches_a_live_ranked_position(game: GameId, depth: usize, seed: u64) {
    let app = spawn_app().await;
    let (ada, bob, cy, dee) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Cy").await,
        app.player("Dee").await,
    );
    let (line, live) = live_line(game, depth, seed);
    let record = line.concat();
    let mut rng = SplitMix64(seed ^ 0x5eed);

    // The accomplices finish a room game through the live position (one move on, then a
    // resignation) before the ranked match reaches it: its analysis and the explorer know it.
    let room = app.room_match(&cy, &dee, game.as_str()).await;
    play_line(&app, &room, &cy, &dee, &line).await;
    let next = live.legal_moves()[0].clone();
    let p = if depth.is_multiple_of(2) { &cy } else { &dee };
    let res = app.play(p, &room, &next).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app
        .post(&format!("/v1/matches/{room}/resign"), &cy.token, json!({}))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    app.project().await;

    let (id, first, second) = app.ranked_with(&ada, &bob, game.as_str()).await;
    play_line(&app, &id, &first, &second, &line).await;
    let by_moves = |moves: &str| json!({"game": game, "moves": moves});

    // The live position: by moves, by every board image (and colours exchanged), as a job.
    for p in [&cy, &dee, &first, &second] {
        refused(&app.analyse(p, by_moves(&record), Some(50)).await, "live");
    }
    for body in boards(&live) {
        refused(
            &app.analyse(&dee, body.clone(), Some(50)).await,
            &format!("{body}"),
        );
        refused(
            &app.post("/v1/analysis/jobs", &cy.token, body.clone()).await,
            &format!("job {body}"),
        );
    }
    if let Some(other) = another_order(game, &line, &live) {
        refused(&app.analyse(&cy, by_moves(&other), Some(50)).await, &other);
    } else {
        assert_eq!(
            game,
            GameId::Reversi,
            "Four in a Row's lines have other orders"
        );
    }
    // One to four plies on, by moves and every board image, as questions and as jobs.
    for (moves, pos) in descendants(&record, &live, &mut rng) {
        refused(&app.analyse(&cy, by_moves(&moves), Some(50)).await, &moves);
        refused(
            &app.post("/v1/analysis/jobs", &dee.token, by_moves(&moves))
                .await,
            &moves,
        );
        for body in boards(&pos) {
            refused(
                &app.analyse(&dee, body.clone(), Some(50)).await,
                &format!("{body}"),
            );
        }
    }
    // A sibling of the live position (another last move) is nobody's live game: answered.
    let parent =
        domain::analysis::position_after(game, &line[..depth - 1].concat()).expect("the parent");
    let sibling = parent
        .legal_moves()
        .into_iter()
        .find(|m| *m != line[depth - 1])
        .expect("another move");
    let sibling = format!("{}{sibling}", line[..depth - 1].concat());
    let res = app.analyse(&cy, by_moves(&sibling), Some(50)).await;
    assert_eq!(res.status, StatusCode::OK, "{sibling}: {:?}", res.body);

    // The finished room game's analysis: the plies reaching the live position or leaving it are
    // withheld, the earlier ones answered; the seated player gets none of it.
    let path = format!("/v1/matches/{room}/analysis?budget_ms=300");
    for p in [&first, &second] {
        refused(&app.get(&path, &p.token).await, "seated: room analysis");
    }
    let res = app.get(&path, &dee.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let plies = res.body["plies"].as_array().expect("plies").clone();
    assert_eq!(plies.len(), depth + 1);
    for ply in &plies {
        let n = ply["ply"].as_u64().expect("a ply") as usize;
        if n >= depth {
            assert_eq!(ply["withheld"], "live_ranked_position", "{ply}");
            assert!(!carries_values(ply), "{ply}");
            assert_eq!(ply["critical"], false, "{ply}");
        } else {
            assert!(ply.get("withheld").is_none(), "{ply}");
        }
    }
    // The jobs that analysis queued are for the plies it answered only.
    for job in res.body["jobs"].as_array().expect("jobs") {
        let view = app
            .get(
                &format!("/v1/analysis/jobs/{}", job.as_str().expect("an id")),
                &dee.token,
            )
            .await;
        assert_eq!(view.status, StatusCode::OK, "{:?}", view.body);
    }

    // The explorer: the live position refused; one ply before it, the move into it withheld.
    let before = line[..depth - 1].concat();
    let explorer = |moves: &str| format!("/v1/explorer/{game}?moves={moves}");
    refused(
        &app.get(&explorer(&record), &dee.token).await,
        "explorer: live",
    );
    refused(
        &app.get(&explorer(&before), &first.token).await,
        "explorer: seated",
    );
    refused(
        &app.get(&explorer(""), &second.token).await,
        "explorer: seated, at the start",
    );
    let res = app.get(&explorer(&before), &dee.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let into = move_line(&res.body, &line[depth - 1]);
    assert_eq!(into["withheld"], "live_ranked_position", "{into}");
    assert!(
        into["value"].is_null() && into["outcome"].is_null(),
        "{into}"
    );
    assert_eq!(into["exact"], false, "{into}");

    // The match ends: everything answers in full.
    let res = app
        .post(&format!("/v1/matches/{id}/resign"), &first.token, json!({}))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app.analyse(&ada, by_moves(&record), Some(50)).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app.get(&path, &ada.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    for ply in res.body["plies"].as_array().expect("plies") {
        assert!(ply.get("withheld").is_none(), "{ply}");
        assert!(!ply["score_before"].is_null(), "{ply}");
    }
    let res = app.get(&explorer(&before), &bob.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert!(
        move_line(&res.body, &line[depth - 1])
            .get("withheld")
            .is_none()
    );
}

/// The explorer's line for `mv`.
fn move_line(explorer: &Value, mv: &str) -> Value {
    explorer["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .find(|m| m["move"] == mv)
        .unwrap_or_else(|| panic!("{mv} in {explorer}"))
        .clone()
}

#[tokio::test]
async fn no_road_reaches_a_live_ranked_four_in_a_row_position() {
    no_road_reaches_a_live_ranked_position(GameId::FourInARow, 14, 42).await;
}

#[tokio::test]
async fn no_road_reaches_a_live_ranked_reversi_position_nor_its_colours_exchanged() {
    no_road_reaches_a_live_ranked_position(GameId::Reversi, 20, 7).await;
}
