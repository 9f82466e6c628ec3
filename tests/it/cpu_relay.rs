//! The CPU road to a live ranked position, tried as the relay that once won a ranked game: an
//! accomplice plays a solo match against CPU level 5 whose every position is the live ranked
//! match's (the seated player copies the CPU's moves into the ranked match and the opponent's
//! replies into the solo match). Beyond the public opening every CPU reply is the guarded
//! policy's (level 2), never the solver's; a seated player cannot open a searching CPU at all;
//! once the ranked match ends the CPU searches again.

use reqwest::StatusCode;
use serde_json::json;

use domain::cpu::{GUARDED_LEVEL, choose_move};
use domain::games::GameId;
use domain::rng::SplitMix64;

use crate::helpers::spawn_app;

#[tokio::test]
async fn a_searching_cpu_plays_the_guarded_policy_at_a_live_ranked_position() {
    let app = spawn_app().await;
    let (ada, bob, cy) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Cy").await,
    );
    let (ranked, red, yellow) = app.ranked_with(&ada, &bob, "four_in_a_row").await;

    // Seated: no CPU that searches; level 2 (which never reads a solver) is still open.
    for level in [3, 5] {
        let res = app
            .post(
                "/v1/matches",
                &red.token,
                json!({"game": "four_in_a_row", "cpu_level": level}),
            )
            .await;
        assert_eq!(
            (res.status, res.code()),
            (StatusCode::CONFLICT, "in_ranked_match"),
            "level {level}: {:?}",
            res.body
        );
    }
    let res = app
        .post(
            "/v1/matches",
            &red.token,
            json!({"game": "four_in_a_row", "cpu_level": 2}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);

    // The accomplice's solo match: the CPU (level 5) plays red, as the seated player does.
    let solo = app
        .solo(
            &cy,
            "four_in_a_row",
            json!({"cpu_level": 5, "first": "cpu"}),
        )
        .await;
    let solo_id = solo["match_id"].as_str().expect("an id").to_owned();
    let public = GameId::FourInARow.public_plies() as usize;
    let mut rng = SplitMix64(7);
    let mut line: Vec<String> = Vec::new();
    let mut guarded = Vec::new();
    loop {
        // The CPU's last move in the solo match is the seated player's next move.
        let view = app.view(&cy, &solo_id).await;
        // Four in a Row's record: one character a move.
        let moves: Vec<String> = view["moves"]
            .as_str()
            .expect("the record")
            .chars()
            .map(String::from)
            .collect();
        assert_eq!(moves.len(), line.len() + 1, "{view}");
        let cpu = moves.last().expect("the CPU's move").clone();
        let before = domain::analysis::position_after(GameId::FourInARow, &line.concat())
            .expect("the live position");
        if line.len() > public {
            // The position the CPU moved from is the live ranked match's: guarded.
            guarded.push((before, cpu.clone()));
        }
        let res = app.play(&red, &ranked, &cpu).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
        line.push(cpu);
        let pos = domain::analysis::position_after(GameId::FourInARow, &line.concat())
            .expect("a position");
        if pos.outcome().is_some() || line.len() >= 24 {
            break;
        }
        // The opponent's reply (a deep search), in both matches; it neither ends the game nor
        // leaves the CPU a win while the test still wants guarded replies.
        let reply = lasting_reply(&pos, rng.next_u64());
        let res = app.play(&yellow, &ranked, &reply).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
        line.push(reply.clone());
        let after = domain::analysis::position_after(GameId::FourInARow, &line.concat())
            .expect("a position");
        let res = app.play(&cy, &solo_id, &reply).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
        if after.outcome().is_some() {
            break;
        }
    }
    // The CPU's seed shows once its match ends: every reply at a guarded position was the
    // guarded policy's choice.
    if app.view(&cy, &solo_id).await["status"] != "finished" {
        let res = app
            .post(
                &format!("/v1/matches/{solo_id}/resign"),
                &cy.token,
                json!({}),
            )
            .await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    }
    let seed = app.events(&cy, &solo_id).await[0]["data"]["cpu_seed"]
        .as_u64()
        .expect("the CPU's seed");
    assert!(guarded.len() >= 4, "{} guarded CPU replies", guarded.len());
    for (before, cpu) in &guarded {
        assert_eq!(
            Some(cpu.clone()),
            choose_move(before, GUARDED_LEVEL, seed),
            "ply {}: the guarded policy's move",
            before.ply()
        );
    }

    // The ranked match ends: the seated player may open a searching CPU again.
    if app.view(&red, &ranked).await["status"] != "finished" {
        let res = app
            .post(
                &format!("/v1/matches/{ranked}/resign"),
                &red.token,
                json!({}),
            )
            .await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    }
    let res = app
        .post(
            "/v1/matches",
            &red.token,
            json!({"game": "four_in_a_row", "cpu_level": 5}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
}

/// A deep search's reply at `pos`, unless the game would end there or the CPU could then win at
/// once: then the first move that does neither, so that the game reaches the plies the test
/// needs whatever the CPU's seed plays (a move that ends it where none other is left).
fn lasting_reply(pos: &domain::games::AnyPosition, seed: u64) -> String {
    let lasting = |mv: &String| {
        let mut after = *pos;
        after.play(mv).expect("a legal move");
        after.outcome().is_none()
            && after.legal_moves().iter().all(|cpu| {
                let mut next = after;
                next.play(cpu).expect("a legal move");
                next.outcome().is_none()
            })
    };
    let searched = choose_move(pos, 4, seed).expect("a move");
    if lasting(&searched) {
        return searched;
    }
    pos.legal_moves()
        .into_iter()
        .find(lasting)
        .unwrap_or(searched)
}
