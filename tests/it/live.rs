//! The live path: one commit per command (crashes before and after it), the work-row repair,
//! stale cache entries, checkpoints that step over other events, streams across instances and
//! their caps.

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{Value, json};
use service::live::commit::Stage;

use crate::helpers::{Player, TestApp, config, spawn_app, spawn_app_with, spawn_on, types};

/// A Four in a Row room match of `a` (moves first) and `b` with a 30-second turn limit.
async fn timed_match(app: &TestApp, a: &Player, b: &Player) -> String {
    app.room_match_with(a, b, "four_in_a_row", json!({"turn_seconds": 30}))
        .await
}

/// A move with an `Idempotency-Key`: its status, body and whether it was a replay.
async fn keyed_move(
    app: &TestApp,
    p: &Player,
    id: &str,
    mv: &str,
    key: &str,
) -> (StatusCode, Value, bool) {
    let res = app.keyed_move(p, id, mv, key).await;
    let replayed = res.headers.contains_key("idempotent-replayed");
    (res.status, res.body, replayed)
}

/// The match's `match_work` row: (state_due is set, version), if any.
async fn work_row(app: &TestApp, id: &str) -> Option<(bool, i64)> {
    let client = database::testing::raw_client(&app.db_url).await;
    let id: uuid::Uuid = id.parse().expect("uuid");
    client
        .query_opt(
            "SELECT state_due IS NOT NULL, version FROM match_work WHERE match_id = $1",
            &[&id],
        )
        .await
        .expect("query")
        .map(|r| (r.get(0), r.get(1)))
}

async fn stored_answers(app: &TestApp) -> i64 {
    let client = database::testing::raw_client(&app.db_url).await;
    client
        .query_one("SELECT count(*) FROM idempotency_keys", &[])
        .await
        .expect("query")
        .get(0)
}

fn crash_at(app: &TestApp, at: Stage) {
    app.state
        .committer
        .set_hook(Some(Arc::new(move |stage| stage != at)));
}

#[tokio::test]
async fn a_crash_before_the_commit_leaves_nothing_and_the_retry_goes_through() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = timed_match(&app, &ada, &bob).await;
    let before = (app.events(&ada, &id).await.len(), work_row(&app, &id).await);
    let answers = stored_answers(&app).await;

    crash_at(&app, Stage::BeforeCommit);
    let (status, _, _) = keyed_move(&app, &ada, &id, "4", "m1").await;
    app.state.committer.set_hook(None);
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    // Not the events, not the work row, not the stored answer.
    assert_eq!(
        (app.events(&ada, &id).await.len(), work_row(&app, &id).await),
        before
    );
    assert_eq!(stored_answers(&app).await, answers);

    let (status, body, replayed) = keyed_move(&app, &ada, &id, "4", "m1").await;
    assert_eq!((status, replayed), (StatusCode::OK, false), "{body:?}");
    assert_eq!(body["version"], 2);
    // The failed batch dropped the match from the cache: the retry, on the match read again,
    // does not know when the row brings the workers, and writes it with its events.
    assert_eq!(work_row(&app, &id).await, Some((true, 2)));
    assert_eq!(stored_answers(&app).await, answers + 1);
}

#[tokio::test]
async fn a_crash_after_the_commit_keeps_all_of_it_and_the_timeout_still_fires() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = timed_match(&app, &ada, &bob).await;

    crash_at(&app, Stage::AfterCommit);
    let (status, _, _) = keyed_move(&app, &ada, &id, "4", "m1").await;
    app.state.committer.set_hook(None);
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    // The move and the answer committed together; the row, whose deadline is no later than
    // Bob's new one, still serves (version 1).
    assert_eq!(
        types(&app.events(&ada, &id).await),
        ["match_created", "move_played"]
    );
    assert_eq!(work_row(&app, &id).await, Some((true, 1)));

    // The retry gets the stored answer and writes nothing.
    let (status, body, replayed) = keyed_move(&app, &ada, &id, "4", "m1").await;
    assert_eq!((status, replayed), (StatusCode::OK, true), "{body:?}");
    assert_eq!(body["version"], 2);
    assert_eq!(app.events(&ada, &id).await.len(), 2);

    // Bob's turn runs out: the deadline the row kept brings the workers, which fire it.
    app.advance(31).await;
    let events = app.events(&ada, &id).await;
    let t = types(&events);
    assert_eq!(t[2..4], ["turn_timed_out", "move_played"], "{t:?}");
}

#[tokio::test]
async fn the_cpu_reply_commits_with_the_move_in_one_transaction() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let view = app
        .solo(&ada, "four_in_a_row", json!({"cpu_level": 1}))
        .await;
    let id = view["match_id"].as_str().expect("id").to_owned();
    let res = app.play(&ada, &id, "4").await;
    assert_eq!(res.status, StatusCode::OK);
    // The answer is the match right after the player's move; the CPU's reply is already in.
    assert_eq!(res.body["version"], 2);
    assert_eq!(app.view(&ada, &id).await["version"], 3);
    let client = database::testing::raw_client(&app.db_url).await;
    let txs: Vec<i64> = client
        .query(
            "SELECT tx::text::bigint FROM events WHERE stream_id = $1 ORDER BY version",
            &[&format!("match-{id}")],
        )
        .await
        .expect("query")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(txs.len(), 3);
    assert_ne!(txs[0], txs[1], "creation and move are two commands");
    assert_eq!(txs[1], txs[2], "the move and the CPU's reply are one");
    // No turn limit, the same seats watched: the creation's row still serves.
    assert_eq!(work_row(&app, &id).await.map(|w| w.1), Some(1));
}

#[tokio::test]
async fn the_repair_recreates_missing_and_stale_work_rows_and_the_timeout_fires() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let lost = timed_match(&app, &ada, &bob).await;
    let stale = timed_match(&app, &ada, &bob).await;
    let done = timed_match(&app, &ada, &bob).await;
    let serving = timed_match(&app, &ada, &bob).await;
    for id in [&lost, &stale, &done, &serving] {
        assert_eq!(app.play(&ada, id, "4").await.status, StatusCode::OK);
    }
    // Each move left its row (version 1) as it was: the row still serves.
    assert_eq!(work_row(&app, &serving).await, Some((true, 1)));
    let resigned = app
        .post(&format!("/v1/matches/{done}/resign"), &bob.token, json!({}))
        .await;
    assert_eq!(resigned.status, StatusCode::OK);
    // What an old crash could leave: a missing row, a row from an older version without its
    // deadline, a row left behind by a finished match.
    let client = database::testing::raw_client(&app.db_url).await;
    let uuid = |s: &str| s.parse::<uuid::Uuid>().expect("uuid");
    client
        .execute(
            "DELETE FROM match_work WHERE match_id = $1",
            &[&uuid(&lost)],
        )
        .await
        .expect("delete");
    client
        .execute(
            "UPDATE match_work SET state_due = NULL, version = 1 WHERE match_id = $1",
            &[&uuid(&stale)],
        )
        .await
        .expect("update");
    client
        .execute(
            "INSERT INTO match_work (match_id, watch1, watch2, seen1, seen2, version) \
             VALUES ($1, true, true, now(), now(), 2)",
            &[&uuid(&done)],
        )
        .await
        .expect("insert");

    let report = service::workers::repair_work(&app.state)
        .await
        .expect("repair");
    assert_eq!(
        report,
        service::workers::Repair {
            created: 1,
            fixed: 1,
            removed: 1
        }
    );
    assert_eq!(work_row(&app, &lost).await, Some((true, 2)));
    assert_eq!(work_row(&app, &stale).await, Some((true, 2)));
    assert_eq!(work_row(&app, &done).await, None);
    // Older than its match's last event, and serving it: left alone.
    assert_eq!(work_row(&app, &serving).await, Some((true, 1)));
    // Nothing left to repair.
    let again = service::workers::repair_work(&app.state)
        .await
        .expect("repair");
    assert_eq!(again, service::workers::Repair::default());

    app.advance(31).await;
    for id in [&lost, &stale, &serving] {
        let events = app.events(&ada, id).await;
        let t = types(&events);
        assert!(t.contains(&"turn_timed_out"), "{t:?}");
    }
}

#[tokio::test]
async fn a_stale_cache_entry_costs_a_reload_never_a_wrong_answer() {
    let one = spawn_app().await;
    let two = spawn_on(&one.db_url, config(&one.db_url)).await;
    let (ada, bob) = (one.player("Ada").await, one.player("Bob").await);
    let id = one.room_match(&ada, &bob, "four_in_a_row").await;
    // Instance one caches the match after Bob's move (Ada to move, version 3).
    assert_eq!(one.play(&ada, &id, "4").await.status, StatusCode::OK);
    assert_eq!(one.play(&bob, &id, "3").await.status, StatusCode::OK);
    // Instance two moves on: version 5, Ada to move again.
    assert_eq!(two.play(&ada, &id, "4").await.status, StatusCode::OK);
    assert_eq!(two.play(&bob, &id, "3").await.status, StatusCode::OK);

    // On its stale state one would accept Ada's move at version 3: the append conflicts, one
    // reloads and decides again.
    let res = one.play(&ada, &id, "5").await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(res.body["version"], 6);
    assert_eq!(res.body["moves"], "43435");
    // Bob's turn now, whatever one's cache said before.
    let res = one.play(&ada, &id, "5").await;
    assert_eq!(res.code(), "not_your_turn");
    // A client's expected_version is checked against the log, not the cache.
    let res = two
        .post(
            &format!("/v1/matches/{id}/moves"),
            &bob.token,
            json!({"move": "1", "expected_version": 6}),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = one
        .post(
            &format!("/v1/matches/{id}/moves"),
            &ada.token,
            json!({"move": "1", "expected_version": 7}),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(res.body["version"], 8);
    let versions: Vec<u64> = one
        .events(&ada, &id)
        .await
        .iter()
        .map(|e| e["version"].as_u64().expect("version"))
        .collect();
    assert_eq!(versions, (1..=8).collect::<Vec<_>>());
}

/// The match's `match_work` row as (seen1, seen2, version), if any.
async fn seen(app: &TestApp, id: &str) -> Option<(String, String, i64)> {
    let client = database::testing::raw_client(&app.db_url).await;
    let id: uuid::Uuid = id.parse().expect("uuid");
    client
        .query_opt(
            "SELECT seen1::text, seen2::text, version FROM match_work WHERE match_id = $1",
            &[&id],
        )
        .await
        .expect("query")
        .map(|r| (r.get(0), r.get(1), r.get(2)))
}

#[tokio::test]
async fn a_command_that_loses_its_race_leaves_no_work_row_and_no_answer_behind() {
    let one = spawn_app().await;
    let two = spawn_on(&one.db_url, config(&one.db_url)).await;
    let (ada, bob) = (one.player("Ada").await, one.player("Bob").await);
    let id = one.room_match(&ada, &bob, "four_in_a_row").await;
    // Instance one caches the match with Ada to move; two moves on for her.
    assert_eq!(one.play(&ada, &id, "4").await.status, StatusCode::OK);
    assert_eq!(one.play(&bob, &id, "3").await.status, StatusCode::OK);
    assert_eq!(two.play(&ada, &id, "4").await.status, StatusCode::OK);
    let before = seen(&one, &id).await;
    assert!(before.is_some());
    // Later, one takes Ada's move on its stale state: its append (with the work row that would
    // mark her seen now, sent in the same round trip) loses, and the log says Bob is to move.
    // Its answer, sent in the same statement, is not stored either: the key keeps the answer
    // the request finally got.
    one.clock.advance(time::Duration::seconds(5));
    let (status, body, replayed) = keyed_move(&one, &ada, &id, "5", "late").await;
    assert_eq!(
        (status, replayed),
        (StatusCode::CONFLICT, false),
        "{body:?}"
    );
    assert_eq!(body["code"], "not_your_turn");
    assert_eq!(seen(&one, &id).await, before);
    let (status, again, replayed) = keyed_move(&one, &ada, &id, "5", "late").await;
    assert_eq!(
        (status, replayed),
        (StatusCode::CONFLICT, true),
        "{again:?}"
    );
    assert_eq!(again, body);
}

#[tokio::test]
async fn a_keyed_move_on_a_cached_match_commits_its_answer_and_work_row_in_its_statement() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    // A ranked match past its public opening (8 plies): each move publishes the match's new
    // fair-play guard in its work row. The opening's moves go through this instance, which then
    // holds the match's head, so the next command takes the one-statement path.
    let (id, first, second) = app.ranked_with(&ada, &bob, "four_in_a_row").await;
    for (i, mv) in ["1", "2", "1", "2", "3", "4", "3", "4"]
        .into_iter()
        .enumerate()
    {
        let p = if i % 2 == 0 { &first } else { &second };
        assert_eq!(app.play(p, &id, mv).await.status, StatusCode::OK);
    }
    let answers = stored_answers(&app).await;

    let (status, body, replayed) = keyed_move(&app, &first, &id, "5", "k1").await;
    assert_eq!((status, replayed), (StatusCode::OK, false), "{body:?}");
    assert_eq!(body["version"], 10);
    assert_eq!(work_row(&app, &id).await, Some((false, 10)));
    assert_eq!(stored_answers(&app).await, answers + 1);

    let (status, again, replayed) = keyed_move(&app, &first, &id, "5", "k1").await;
    assert_eq!((status, replayed), (StatusCode::OK, true));
    assert_eq!(again, body);
    assert_eq!(app.events(&first, &id).await.len(), 10);
}

/// A timed match (30 s a turn, nobody away within a minute) in which Ada moved at 10 s: Bob's
/// deadline (40 s) is later than the row's (Ada's, 30 s, 20 s away), so the move left the row as
/// it was.
async fn a_timed_match_moved_at_10_s() -> (TestApp, Player, String) {
    let app = spawn_app_with(|c| c.core.play.presence_seconds = 300).await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = timed_match(&app, &ada, &bob).await;
    app.advance(10).await;
    assert_eq!(app.play(&ada, &id, "4").await.status, StatusCode::OK);
    assert_eq!(work_row(&app, &id).await, Some((true, 1)));
    (app, bob, id)
}

#[tokio::test]
async fn moves_leave_a_row_that_still_serves_and_the_workers_come_early_and_fire_on_time() {
    let (app, bob, id) = a_timed_match_moved_at_10_s().await;
    // At 31 s the workers come for the row's deadline, find Bob's turn still running, and write
    // the row the match asks for; nothing fires.
    app.advance(21).await;
    assert_eq!(work_row(&app, &id).await, Some((true, 2)));
    assert_eq!(
        types(&app.events(&bob, &id).await),
        ["match_created", "move_played"]
    );
    // At 41 s Bob's turn has run out.
    app.advance(10).await;
    let events = app.events(&bob, &id).await;
    assert_eq!(types(&events)[2..4], ["turn_timed_out", "move_played"]);
    assert_eq!(events[2]["data"], json!({"seat": 2}));
}

#[tokio::test]
async fn a_player_who_moved_since_the_row_last_saw_them_is_not_marked_away() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    // No turn limit; away after 30 s without a sign. Both move early: their moves leave the
    // creation's row (which saw them at 0 s) as it is.
    let id = app
        .room_match_with(&ada, &bob, "four_in_a_row", json!({}))
        .await;
    app.advance(5).await;
    assert_eq!(app.play(&ada, &id, "1").await.status, StatusCode::OK);
    app.advance(5).await;
    assert_eq!(app.play(&bob, &id, "2").await.status, StatusCode::OK);
    assert_eq!(work_row(&app, &id).await, Some((false, 1)));
    // At 31 s the row brings the workers; they take each player's last move from the match
    // (5 s and 10 s) and mark nobody away. (Bob reads the events: a look counts as a sign.)
    app.advance(21).await;
    let events = app.events(&bob, &id).await;
    let t = types(&events);
    assert!(!t.contains(&"player_left"), "{t:?}");
    // Ada, to move and silent since 5 s, is away at 35 s.
    app.advance(5).await;
    let events = app.events(&bob, &id).await;
    let left: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "player_left")
        .collect();
    assert_eq!(left.len(), 1, "{events:?}");
    assert_eq!(left[0]["data"], json!({"seat": 1, "reason": "absent"}));
}

#[tokio::test]
async fn a_match_in_play_writes_its_row_again_before_it_would_bring_the_workers() {
    let (app, bob, id) = a_timed_match_moved_at_10_s().await;
    // At 22 s it is 8 s away: Bob's move writes the row (Ada's deadline, 52 s).
    app.advance(12).await;
    assert_eq!(app.play(&bob, &id, "4").await.status, StatusCode::OK);
    assert_eq!(work_row(&app, &id).await, Some((true, 3)));
    // So at 31 s the workers have nothing to come for.
    app.clock.advance(time::Duration::seconds(9));
    assert_eq!(app.run_workers().await, 0);
}

#[tokio::test]
async fn a_projection_checkpoint_moves_past_events_it_does_not_handle() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = app.room_match(&ada, &bob, "four_in_a_row").await;
    for (p, mv) in [(&ada, "4"), (&bob, "3"), (&ada, "4")] {
        assert_eq!(app.play(p, &id, mv).await.status, StatusCode::OK);
    }
    let client = database::testing::raw_client(&app.db_url).await;
    let last = client
        .query_one(
            "SELECT tx::text::bigint, position FROM events WHERE stream_id = $1 \
             ORDER BY version DESC LIMIT 1",
            &[&format!("match-{id}")],
        )
        .await
        .expect("query");
    let last = eventlog::Checkpoint {
        tx: last.get(0),
        position: last.get(1),
    };
    let runner = &app.state.projections;
    let p = projections::Projection::Queue;
    runner.sync_to(p, last).await.expect("sync");
    // The queue projection reads ticket events only; its checkpoint still stands on the
    // last move (or later), and a step reads nothing old again.
    let (checkpoint, applied) = runner.checkpoint(p).await.expect("checkpoint");
    assert!(checkpoint >= last, "{checkpoint:?} < {last:?}");
    assert_eq!(applied, 0);
    assert_eq!(
        runner.step(p).await.expect("step"),
        projections::runner::Step::CaughtUp
    );
}

/// Reads SSE frames until `n` have arrived: their versions and types.
async fn frames(res: reqwest::Response, n: usize) -> Vec<(u64, String)> {
    use futures_util::StreamExt;
    let mut body = res.bytes_stream();
    let (mut buf, mut out) = (String::new(), Vec::new());
    while out.len() < n {
        let chunk = body.next().await.expect("more frames").expect("a chunk");
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let frame: String = buf.drain(..end + 2).collect();
            let id = frame.lines().find_map(|l| l.strip_prefix("id: "));
            let event = frame.lines().find_map(|l| l.strip_prefix("event: "));
            if let (Some(id), Some(event)) = (id, event) {
                out.push((id.parse().expect("a version"), event.to_owned()));
            }
        }
    }
    out
}

#[tokio::test]
async fn a_stream_on_one_instance_sees_moves_made_on_another() {
    let one = spawn_app().await;
    let two = spawn_on(&one.db_url, config(&one.db_url)).await;
    let (ada, bob, eve) = (
        one.player("Ada").await,
        one.player("Bob").await,
        one.player("Eve").await,
    );
    let id = one.room_match(&ada, &bob, "four_in_a_row").await;
    // Two viewers on instance one (one watch, one read per event for both).
    let open = || {
        one.http
            .get(format!(
                "{}/v1/matches/{id}/stream?access_token={}",
                one.base, eve.token
            ))
            .send()
    };
    let (a, b) = tokio::join!(open(), open());
    let (a, b) = (a.expect("stream"), b.expect("stream"));
    assert_eq!((a.status(), b.status()), (StatusCode::OK, StatusCode::OK));
    let readers = (tokio::spawn(frames(a, 4)), tokio::spawn(frames(b, 4)));
    for (p, mv) in [(&ada, "4"), (&bob, "3"), (&ada, "4")] {
        assert_eq!(two.play(p, &id, mv).await.status, StatusCode::OK);
    }
    let expected: Vec<(u64, String)> = [
        (1, "match_created"),
        (2, "move_played"),
        (3, "move_played"),
        (4, "move_played"),
    ]
    .iter()
    .map(|(v, t)| (*v, (*t).to_owned()))
    .collect();
    assert_eq!(readers.0.await.expect("reader"), expected);
    assert_eq!(readers.1.await.expect("reader"), expected);
}

#[tokio::test]
async fn open_streams_are_capped_per_player() {
    let db = database::testing::TestDb::migrated(2).await;
    let mut cfg = config(&db.url);
    cfg.core.live.streams_per_player = 2;
    let app = spawn_on(&db.url, cfg).await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = app.room_match(&ada, &bob, "four_in_a_row").await;
    let open = |p: &Player| {
        app.http
            .get(format!(
                "{}/v1/matches/{id}/stream?access_token={}",
                app.base, p.token
            ))
            .send()
    };
    let first = open(&ada).await.expect("stream");
    let second = open(&ada).await.expect("stream");
    assert_eq!(
        (first.status(), second.status()),
        (StatusCode::OK, StatusCode::OK)
    );
    let third = open(&ada).await.expect("an answer");
    assert_eq!(third.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(third.headers().contains_key("retry-after"));
    let body: Value = third.json().await.expect("problem");
    assert_eq!(body["code"], "rate_limited");
    // Another player is not held back by Ada's streams.
    assert_eq!(open(&bob).await.expect("stream").status(), StatusCode::OK);
    assert_eq!(app.state.live.open_streams(), 3);
}

#[tokio::test]
async fn a_seated_player_gets_a_stream_on_their_match_whatever_the_instances_cap() {
    let db = database::testing::TestDb::migrated(2).await;
    let mut cfg = config(&db.url);
    cfg.core.live.max_streams = 1;
    let app = spawn_on(&db.url, cfg).await;
    let (ada, bob, cy) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Cy").await,
    );
    let id = app.room_match(&ada, &bob, "four_in_a_row").await;
    let open = |p: &Player| {
        app.http
            .get(format!(
                "{}/v1/matches/{id}/stream?access_token={}",
                app.base, p.token
            ))
            .send()
    };
    // A spectator takes the instance's one place; another is refused.
    let watching = open(&cy).await.expect("stream");
    assert_eq!(watching.status(), StatusCode::OK);
    let refused = open(&cy).await.expect("an answer");
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    // Both seated players get theirs.
    let mut seated = Vec::new();
    for p in [&ada, &bob] {
        let res = open(p).await.expect("stream");
        assert_eq!(res.status(), StatusCode::OK);
        seated.push(res);
    }
    assert_eq!(app.state.live.open_streams(), 3);
    drop((watching, seated));
}

#[tokio::test]
async fn a_leader_applies_the_log_readers_batches_and_writes_only_what_it_must() {
    use projections::runner::{Batch, Follower};
    let app = spawn_app().await;
    let (runner, p) = (&app.state.projections, projections::Projection::History);
    let mut follower = Follower::start(runner, p).await.expect("start");
    let start = follower.position().1;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = app.room_match(&ada, &bob, "four_in_a_row").await;
    for (pl, mv) in [(&ada, "4"), (&bob, "3"), (&ada, "4"), (&bob, "3")] {
        assert_eq!(app.play(pl, &id, mv).await.status, StatusCode::OK);
    }
    let resigned = app
        .post(&format!("/v1/matches/{id}/resign"), &bob.token, json!({}))
        .await;
    assert_eq!(resigned.status, StatusCode::OK);
    // This test's log holds this match alone: batches as the reader would hand them out.
    let events = app
        .state
        .log
        .read_stream(&format!("match-{id}"))
        .await
        .expect("read");
    assert_eq!(events.len(), 7);
    let batch = |from: Option<usize>, to: usize| Batch {
        from: from.map_or(start, |i| events[i].checkpoint()),
        to: events[to].checkpoint(),
        events: events[from.map_or(0, |i| i + 1)..=to].to_vec(),
    };
    let stored = || async { runner.checkpoint(p).await.expect("checkpoint") };

    // match_created and two moves: one transaction applies the creation.
    follower.take(runner, &batch(None, 2)).await.expect("take");
    assert_eq!(stored().await, (events[2].checkpoint(), 1));
    // Two moves: nothing of the history's, nothing written.
    follower
        .take(runner, &batch(Some(2), 4))
        .await
        .expect("take");
    assert_eq!(stored().await, (events[2].checkpoint(), 1));
    assert_eq!(
        follower.position(),
        (events[2].checkpoint(), events[4].checkpoint())
    );
    // The periodic flush moves the checkpoint past them.
    follower.flush(runner).await.expect("flush");
    assert_eq!(stored().await, (events[4].checkpoint(), 1));
    // A batch seen before is skipped; the resignation and the end are applied.
    follower
        .take(runner, &batch(Some(2), 4))
        .await
        .expect("take");
    follower
        .take(runner, &batch(Some(4), 6))
        .await
        .expect("take");
    assert_eq!(stored().await, (events[6].checkpoint(), 2));
    let history = app
        .get(&format!("/v1/players/{}/matches", ada.id), &ada.token)
        .await;
    assert_eq!(history.status, StatusCode::OK, "{:?}", history.body);
    assert_eq!(history.body["matches"][0]["match_id"], id.as_str());
}

/// A command on a fresh stream of its own.
fn fresh_stream_job(n: u32) -> service::live::commit::Job {
    service::live::commit::Job {
        command_id: uuid::Uuid::now_v7(),
        appends: vec![eventlog::StreamAppend {
            stream: format!("lane-test-{n}-{}", uuid::Uuid::now_v7()),
            expected_version: 0,
            events: vec![eventlog::NewEvent {
                event_type: "lane_tested".into(),
                schema_version: 1,
                data: json!({ "n": n }),
                actor: None,
                recorded_at: time::OffsetDateTime::now_utc(),
            }],
        }],
        work: None,
        answer: None,
        head: None,
    }
}

#[tokio::test]
async fn a_thread_whose_runtime_stopped_gets_a_new_lane_of_the_committer() {
    let app = spawn_app().await;
    let settings = database::settings(&app.db_url).expect("settings");
    let committer = service::live::commit::Committer::new(settings, 1);
    // Two runtimes, one after the other, on one thread (an HTTP worker restarted): the first
    // one's lane stops with it, and the second one's commands still commit.
    let outcomes = std::thread::spawn(move || {
        (1..=2)
            .map(|n| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                let outcome = runtime.block_on(committer.submit(fresh_stream_job(n)));
                drop(runtime);
                outcome
            })
            .collect::<Vec<_>>()
    })
    .join()
    .expect("the thread ends");
    for outcome in outcomes {
        match outcome {
            Ok(eventlog::AppendOutcome::Appended(events)) => assert_eq!(events.len(), 1),
            other => panic!("the command did not commit: {other:?}"),
        }
    }
    let client = database::testing::raw_client(&app.db_url).await;
    let written: i64 = client
        .query_one(
            "SELECT count(*) FROM events WHERE event_type = 'lane_tested'",
            &[],
        )
        .await
        .expect("query")
        .get(0);
    assert_eq!(written, 2);
}

#[tokio::test]
async fn stored_answers_are_purged_after_a_day_and_a_late_retry_is_still_applied_once() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let id = app.solo_four(&ada).await;
    let (status, first, _) = keyed_move(&app, &ada, &id, "4", "old").await;
    assert_eq!(status, StatusCode::OK, "{first:?}");
    app.clock.advance(time::Duration::hours(25));
    let (status, body, _) = keyed_move(&app, &ada, &id, "3", "new").await;
    assert_eq!(status, StatusCode::OK, "{body:?}");
    let answers = stored_answers(&app).await;

    let purged = service::workers::purge_answers(&app.state)
        .await
        .expect("the purge runs");
    assert_eq!(purged, 1, "only the answer older than a day");
    assert_eq!(stored_answers(&app).await, answers - 1);
    // The recent key still replays its answer.
    let (status, again, replayed) = keyed_move(&app, &ada, &id, "3", "new").await;
    assert_eq!((status, replayed, &again), (StatusCode::OK, true, &body));
    // The old key has lost its answer, not its effect: the move is not played twice.
    let (status, late, replayed) = keyed_move(&app, &ada, &id, "4", "old").await;
    assert_eq!((status, replayed), (StatusCode::OK, false), "{late:?}");
    assert_eq!(app.events(&ada, &id).await.len(), 5);
}
