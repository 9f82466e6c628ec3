//! Fair play after the game: every finished ranked match assessed once, ply by ply, by the
//! exact solvers in the background (move quality, critical positions, thinking times), the
//! match analysis saying the same per ply.

use reqwest::StatusCode;
use serde_json::Value;

use service::analysis::quality::{self, Outcome};

use crate::helpers::spawn_app;

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
    let client = eventlog::testing::raw_client(&app.db_url).await;
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
