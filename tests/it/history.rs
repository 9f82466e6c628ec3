//! History nobody can quietly rewrite (issue 45): signed checkpoints and what they catch, a
//! match's proof, a key that is not the operator's, a folder with a gap or out of order, two
//! logs on one machine each signing its own (issue 51), and closing an account (erased
//! everywhere, re-applied after a restore).

use reqwest::StatusCode;
use serde_json::{Value, json};
use time::OffsetDateTime;

use discs::config::ServeConfig;
use eventlog::canonical;
use service::config::HistoryConfig;
use service::history::{self, MatchProof, SignedCheckpoint};

use crate::helpers::{Player, TestApp, spawn_app, spawn_app_with};

async fn checkpoint(app: &TestApp) -> Option<SignedCheckpoint> {
    history::checkpoint_committed(
        &app.state.pool,
        &app.state.log,
        &app.state.history,
        app.state.clock.as_ref(),
    )
    .await
    .expect("a checkpoint is signed")
}

async fn verify(app: &TestApp, key: &ed25519_dalek::VerifyingKey) -> history::FolderReport {
    history::verify_folder(&app.state.log, app.state.history.dir(), key)
        .await
        .expect("the folder is read")
}

/// A finished Four in a Row match between `a` and `b` in a room.
async fn finished_match(app: &TestApp, a: &Player, b: &Player) -> String {
    let id = app.room_match(a, b, "four_in_a_row").await;
    let view = app.view(a, &id).await;
    let first = view["seats"][0]["player_id"].as_str().expect("a seat");
    let (first, second) = if first == a.id { (a, b) } else { (b, a) };
    app.finish_four(&id, first, second, true).await;
    id
}

/// Rewrites the `data` of one event of `stream` as a database superuser would, and recomputes
/// every chain hash after it and the stream's head, so that the chain audit sees nothing.
async fn rewrite_and_rechain(app: &TestApp, stream: &str, version: i64, data: Value) {
    let client = database::testing::raw_client(&app.db_url).await;
    let events = app.state.log.read_stream(stream).await.expect("the stream");
    client
        .batch_execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        .await
        .expect("a superuser disables the guard");
    let mut prev = canonical::GENESIS;
    for mut e in events {
        if e.version == version {
            e.data = data.clone();
        }
        let mut bytes = Vec::new();
        canonical::event_bytes(&e.content(), &mut bytes);
        let hash = canonical::chain_hash(&prev, &bytes);
        client
            .execute(
                "UPDATE events SET data = $1, prev_hash = $2, hash = $3 \
                 WHERE stream_id = $4 AND version = $5",
                &[
                    &e.data,
                    &prev.as_slice(),
                    &hash.as_slice(),
                    &stream,
                    &e.version,
                ],
            )
            .await
            .expect("rewritten");
        client
            .execute(
                "UPDATE streams SET last_hash = $1 WHERE stream_id = $2 AND version = $3",
                &[&hash.as_slice(), &stream, &e.version],
            )
            .await
            .expect("head moved");
        prev = hash;
    }
    client
        .batch_execute("ALTER TABLE events ENABLE TRIGGER events_append_only")
        .await
        .expect("guard back");
}

#[tokio::test]
async fn signed_checkpoints_prove_a_match_and_catch_a_rewritten_event_that_every_chain_hides() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let operator = app.state.history.public_key();
    // Nothing signed yet: the public endpoint says so.
    let none = app.get("/v1/checkpoints/latest", "").await;
    assert_eq!(
        (none.status, none.code()),
        (StatusCode::NOT_FOUND, "not_found")
    );
    let first = finished_match(&app, &ada, &bob).await;
    // A match not covered yet has no proof.
    let early = app
        .get(&format!("/v1/matches/{first}/proof"), &ada.token)
        .await;
    assert_eq!(
        (early.status, early.code()),
        (StatusCode::CONFLICT, "conflict")
    );
    let c1 = checkpoint(&app).await.expect("the log grew");
    assert_eq!(c1.seq, 1);
    assert!(c1.size > 0);
    assert_eq!(checkpoint(&app).await, None, "nothing new, nothing signed");
    let latest = app.get("/v1/checkpoints/latest", "").await;
    assert_eq!(latest.status, StatusCode::OK, "{:?}", latest.body);
    assert_eq!(latest.body, serde_json::to_value(&c1).expect("json"));
    assert_eq!(app.get("/v1/checkpoints/1", "").await.body, latest.body);
    let missing = app.get("/v1/checkpoints/9", "").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    // Published outside the database: a file per checkpoint, and its leaves.
    let dir = app.state.history.dir().to_owned();
    assert!(dir.join("checkpoint-00000001.json").is_file());
    assert!(dir.join("leaves-00000001.txt").is_file());
    let report = verify(&app, &operator).await;
    assert!(report.is_ok(), "{report:?}");
    assert_eq!(report.covered, c1.size);

    // The match's proof checks offline, against the operator's key only.
    let second = finished_match(&app, &bob, &ada).await;
    let c2 = checkpoint(&app).await.expect("the log grew");
    let proof: MatchProof = serde_json::from_value(
        app.get(&format!("/v1/matches/{first}/proof"), &bob.token)
            .await
            .body,
    )
    .expect("a proof");
    assert_eq!(proof.checkpoint, c2, "the latest checkpoint by default");
    let said = history::verify_match_proof(&proof, &operator, Some(&c2)).expect("it holds");
    assert!(said.contains(&first), "{said}");
    // Against a checkpoint the player held before.
    let older: MatchProof = serde_json::from_value(
        app.get(
            &format!("/v1/matches/{first}/proof?checkpoint=1"),
            &bob.token,
        )
        .await
        .body,
    )
    .expect("a proof");
    history::verify_match_proof(&older, &operator, Some(&c1)).expect("it holds against c1");
    let mismatch = history::verify_match_proof(&proof, &operator, Some(&c1)).expect_err("c2");
    assert!(mismatch.contains("not the one held"), "{mismatch}");
    // The second match is not in checkpoint 1.
    let not_in = app
        .get(
            &format!("/v1/matches/{second}/proof?checkpoint=1"),
            &bob.token,
        )
        .await;
    assert_eq!(not_in.status, StatusCode::CONFLICT, "{:?}", not_in.body);
    // Checkpoint 2 extends checkpoint 1, provably.
    let consistent: history::Consistency = serde_json::from_value(
        app.get("/v1/checkpoints/2/consistency?from=1", "")
            .await
            .body,
    )
    .expect("a consistency proof");
    consistent.check(&operator).expect("it holds");
    let mut bent = consistent.clone();
    bent.from = c2.clone();
    bent.to = c1.clone();
    assert!(bent.check(&operator).is_err());
    let backwards = app.get("/v1/checkpoints/1/consistency?from=2", "").await;
    assert_eq!(backwards.status, StatusCode::NOT_FOUND);
    // Another key is refused; a changed event breaks the proof.
    let stranger = ed25519_dalek::SigningKey::from_bytes(&[9; 32]).verifying_key();
    let refused = history::verify_match_proof(&proof, &stranger, None).expect_err("other key");
    assert!(refused.contains("not the operator's"), "{refused}");
    let mut forged = proof.clone();
    forged.events[1].data = json!({"column": 7});
    assert!(history::verify_match_proof(&forged, &operator, None).is_err());
    // An active match has no proof.
    let live = app.room_match(&ada, &bob, "four_in_a_row").await;
    let active = app
        .get(&format!("/v1/matches/{live}/proof"), &ada.token)
        .await;
    assert_eq!(
        (active.status, active.code()),
        (StatusCode::CONFLICT, "match_active")
    );

    // A superuser rewrites a move of the first match and recomputes every chain: the chain
    // audit finds nothing, the checkpoints name the event.
    let stream = format!("match-{first}");
    let events = app.state.log.read_stream(&stream).await.expect("events");
    let moved = events
        .iter()
        .find(|e| e.event_type == "move_played")
        .expect("a move");
    let mut data = moved.data.clone();
    data["move"] = json!(if data["move"] == json!("4") { "5" } else { "4" });
    rewrite_and_rechain(&app, &stream, moved.version, data).await;
    assert!(
        app.state.log.verify_all().await.expect("audit").is_ok(),
        "every chain was recomputed: the audit alone cannot see it"
    );
    let report = verify(&app, &operator).await;
    assert!(!report.is_ok());
    let named = report.problems.join("\n");
    assert!(
        named.contains(&format!("stream {stream} version {}", moved.version))
            && named.contains("rewritten"),
        "{named}"
    );
    // The signer's tree keeps the hashes it saw: it signs on, and the rewrite stays named.
    checkpoint(&app).await.expect("the live match's events");
    let still = verify(&app, &operator).await.problems.join("\n");
    assert!(still.contains("rewritten"), "{still}");
    // A writer who also rebuilds the tree from the rewritten events gets no signature: the
    // signer refuses a log that does not extend its checkpoints.
    let client = database::testing::raw_client(&app.db_url).await;
    client
        .batch_execute(
            "DELETE FROM log_tree_tiles; UPDATE log_tree SET size = 0, tx = 0, position = 0",
        )
        .await
        .expect("the tree dropped");
    let err = history::checkpoint_now(
        &app.state.pool,
        &app.state.log,
        &app.state.history,
        app.state.clock.as_ref(),
    )
    .await;
    assert!(
        matches!(err, Err(history::SignError::Diverged { .. })),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_key_that_is_not_the_operators_a_gap_and_a_checkpoint_out_of_order_are_said_plainly() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let operator = app.state.history.public_key();
    for _ in 0..3 {
        finished_match(&app, &ada, &bob).await;
        checkpoint(&app).await.expect("signed");
    }
    assert!(verify(&app, &operator).await.is_ok());
    let stranger = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let refused = verify(&app, &stranger.verifying_key()).await;
    assert!(!refused.is_ok());
    assert!(
        refused.problems[0].contains("not the operator's")
            && refused.problems[0].contains("refused"),
        "{refused:?}"
    );
    let dir = app.state.history.dir().to_owned();
    // A checkpoint signed by the operator's key but out of order (fewer events than the one
    // before it).
    let head = eventlog::TreeHead {
        size: 1,
        root: eventlog::merkle::empty_root(),
        cursor: eventlog::Checkpoint::START,
    };
    let key = history::load_key(None, &key_file(&app)).expect("the operator's key");
    let late = history::sign(
        &key,
        app.state.history.log(),
        4,
        &head,
        OffsetDateTime::now_utc(),
    );
    std::fs::write(
        dir.join("checkpoint-00000004.json"),
        serde_json::to_string(&late).expect("json"),
    )
    .expect("written");
    let out_of_order = verify(&app, &operator).await;
    assert!(
        out_of_order
            .problems
            .iter()
            .any(|p| p.starts_with("checkpoint 4 (1 events") && p.contains("out of order")),
        "{out_of_order:?}"
    );
    std::fs::remove_file(dir.join("checkpoint-00000004.json")).expect("removed");
    // One missing from the middle.
    std::fs::remove_file(dir.join("checkpoint-00000002.json")).expect("removed");
    let gap = verify(&app, &operator).await;
    assert_eq!(
        gap.problems[0], "checkpoint 2 is missing: the folder goes from 1 to 3",
        "{gap:?}"
    );
    // The signer writes the recorded one back.
    history::publish(&app.state.pool, &app.state.log, &dir)
        .await
        .expect("published");
    assert!(verify(&app, &operator).await.is_ok());
}

fn key_file(app: &TestApp) -> std::path::PathBuf {
    app.state
        .history
        .dir()
        .parent()
        .expect("a parent")
        .join("checkpoint-key")
}

/// Every value of every table of the database, as text: where a name could hide.
async fn database_text(app: &TestApp) -> String {
    let client = database::testing::raw_client(&app.db_url).await;
    let tables = client
        .query(
            "SELECT quote_ident(table_name) FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
            &[],
        )
        .await
        .expect("tables");
    let mut all = String::new();
    for t in tables {
        let table: String = t.get(0);
        let rows = client
            .query(&format!("SELECT t::text FROM {table} t"), &[])
            .await
            .expect("rows");
        for r in rows {
            all.push_str(r.get::<_, &str>(0));
            all.push('\n');
        }
    }
    all
}

#[tokio::test]
async fn a_closed_account_is_erased_from_every_answer_and_closed_again_after_a_restore() {
    let app = spawn_app().await;
    let name = "Zephyrine Quast";
    let zep = app.player(name).await;
    let bob = app.player("Bob").await;
    // Ranked games until Zephyrine's rating is no longer provisional and she is on the
    // leaderboard (some thirty games), and a room game.
    let mut ranked = Vec::new();
    while ranked.len() < 80 {
        let (id, first, second) = app.ranked_with(&zep, &bob, "four_in_a_row").await;
        // Each wins half the games: the ratings stay close and every game tells something.
        let zep_wins = ranked.len() % 2 == 0;
        app.finish_four(&id, &first, &second, (first.id == zep.id) == zep_wins)
            .await;
        ranked.push(id);
        app.project().await;
        let me = app
            .get(&format!("/v1/players/{}", zep.id), &bob.token)
            .await;
        if me.body["ratings"]["four_in_a_row"]["provisional"] == json!(false) {
            break;
        }
    }
    let board = app.get("/v1/leaderboards/four_in_a_row", &bob.token).await;
    let me = app
        .get(&format!("/v1/players/{}", zep.id), &bob.token)
        .await;
    assert!(
        board.body.to_string().contains(name),
        "{} {:?} {:?}",
        ranked.len(),
        board.body,
        me.body
    );
    let room = finished_match(&app, &zep, &bob).await;
    // A move of Bob's with an Idempotency-Key: its stored answer (a match view) names both seats.
    let keyed = app.room_match(&bob, &zep, "four_in_a_row").await;
    let view = app.view(&bob, &keyed).await;
    let bob_first = view["seats"][0]["player_id"] == json!(bob.id);
    if !bob_first {
        assert_eq!(app.play(&zep, &keyed, "1").await.status, StatusCode::OK);
    }
    let stored = app.keyed_move(&bob, &keyed, "4", "bob-move-key-0001").await;
    assert_eq!(stored.status, StatusCode::OK, "{:?}", stored.body);
    assert!(stored.body.to_string().contains(name));
    app.post(
        &format!("/v1/matches/{keyed}/resign"),
        &bob.token,
        json!({"expected_version": stored.body["version"]}),
    )
    .await;
    app.project().await;
    checkpoint(&app).await.expect("signed");

    // Step one: a confirmation, valid 10 minutes, for this account only.
    let asked = app
        .post("/v1/players/me/closing", &zep.token, json!({}))
        .await;
    assert_eq!(asked.status, StatusCode::OK, "{:?}", asked.body);
    let confirmation = asked.body["confirmation"].as_str().expect("a confirmation");
    let label = asked.body["label"].as_str().expect("a label").to_owned();
    assert!(!label.contains("Zephyrine"));
    let bobs = app
        .post("/v1/players/me/closing", &bob.token, json!({}))
        .await;
    let wrong = app
        .post(
            "/v1/players/me/close",
            &zep.token,
            json!({"confirmation": bobs.body["confirmation"]}),
        )
        .await;
    assert_eq!(
        (wrong.status, wrong.code()),
        (StatusCode::FORBIDDEN, "forbidden")
    );
    // A bearer token is not a confirmation.
    let token_as = app
        .post(
            "/v1/players/me/close",
            &zep.token,
            json!({"confirmation": zep.token}),
        )
        .await;
    assert_eq!(token_as.status, StatusCode::FORBIDDEN);
    // Expired after 10 minutes of the server's clock.
    app.advance(11 * 60).await;
    let expired = app
        .post(
            "/v1/players/me/close",
            &zep.token,
            json!({"confirmation": confirmation}),
        )
        .await;
    assert_eq!(expired.status, StatusCode::FORBIDDEN, "{:?}", expired.body);
    let asked = app
        .post("/v1/players/me/closing", &zep.token, json!({}))
        .await;
    let confirmation = asked.body["confirmation"].as_str().expect("a confirmation");
    // Step two.
    let closed = app
        .post(
            "/v1/players/me/close",
            &zep.token,
            json!({"confirmation": confirmation}),
        )
        .await;
    assert_eq!(closed.status, StatusCode::OK, "{:?}", closed.body);
    assert_eq!(closed.body["label"], json!(label));
    // Every token of the account has ended.
    let after = app
        .get(&format!("/v1/players/{}", zep.id), &zep.token)
        .await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED);
    app.project().await;

    // Not in any answer: profile, history, ratings, leaderboard, match views, events, replays,
    // the explorer, the admin's search.
    let admin = app.admin("Root").await;
    let mut answers = Vec::new();
    for path in [
        format!("/v1/players/{}", zep.id),
        format!("/v1/players/{}/matches", bob.id),
        format!("/v1/players/{}/matches", zep.id),
        format!("/v1/players/{}/ratings/four_in_a_row", zep.id),
        "/v1/leaderboards/four_in_a_row".to_owned(),
        format!("/v1/matches/{room}"),
        format!("/v1/matches/{room}/events"),
        format!("/v1/matches/{room}/replay"),
        format!("/v1/matches/{}/replay", ranked[0]),
        format!("/v1/matches/{}", ranked[ranked.len() - 1]),
        "/v1/explorer/four_in_a_row?moves=4".to_owned(),
        "/v1/admin/players?name=Zeph".to_owned(),
        "/v1/admin/flags".to_owned(),
    ] {
        let res = app.get(&path, &admin.token).await;
        assert_eq!(res.status, StatusCode::OK, "{path}: {:?}", res.body);
        answers.push((path, res.body.to_string()));
    }
    for (path, body) in &answers {
        assert!(
            !body.contains("Zephyrine"),
            "{path} still names them: {body}"
        );
    }
    let profile = &answers[0].1;
    assert!(profile.contains(&label), "{profile}");
    assert!(
        answers[4].1.contains(&label),
        "the leaderboard keeps the label"
    );
    // Erased from the database, not hidden: no table holds the name.
    assert!(!database_text(&app).await.contains("Zephyrine"));
    // Bob's retry still gets his stored answer, with the label.
    let retried = app.keyed_move(&bob, &keyed, "4", "bob-move-key-0001").await;
    assert_eq!(retried.status, StatusCode::OK, "{:?}", retried.body);
    assert!(
        retried.body.to_string().contains(&label),
        "{:?}",
        retried.body
    );
    // Every chain and checkpoint still verifies, and a new checkpoint extends the old ones.
    assert!(app.state.log.verify_all().await.expect("audit").is_ok());
    checkpoint(&app).await;
    let report = verify(&app, &app.state.history.public_key()).await;
    assert!(report.is_ok(), "{report:?}");
    // Closing twice: the account is gone.
    let again = app
        .post("/v1/players/me/closing", &zep.token, json!({}))
        .await;
    assert_eq!(again.status, StatusCode::UNAUTHORIZED);

    // A restore from a backup taken before the closing brings the name back; the ledger,
    // kept outside the database, closes the account again (as every start does).
    let client = database::testing::raw_client(&app.db_url).await;
    client
        .execute(
            "UPDATE players SET name = $1, closed_at = NULL WHERE player_id = $2::text::uuid",
            &[&name, &zep.id],
        )
        .await
        .expect("as restored");
    assert_eq!(
        service::closing::reapply_closings(&app.state, &app.state.history)
            .await
            .expect("re-applied"),
        1
    );
    assert!(!database_text(&app).await.contains("Zephyrine"));
    assert_eq!(
        service::closing::reapply_closings(&app.state, &app.state.history)
            .await
            .expect("nothing left"),
        0
    );
}

#[tokio::test]
async fn an_admin_closes_an_account_on_request_but_not_their_own_and_not_during_a_ranked_match() {
    let app = spawn_app().await;
    let admin = app.admin("Root").await;
    let (ada, bob) = (app.player("Ada Lovelace").await, app.player("Bob").await);
    let (id, _, _) = app.ranked_with(&ada, &bob, "four_in_a_row").await;
    let seated = app
        .post(
            &format!("/v1/admin/players/{}/close", ada.id),
            &admin.token,
            json!({}),
        )
        .await;
    assert_eq!(
        (seated.status, seated.code()),
        (StatusCode::CONFLICT, "in_ranked_match"),
        "{:?}",
        seated.body
    );
    let resign = app
        .post(
            &format!("/v1/matches/{id}/resign"),
            &ada.token,
            json!({"expected_version": app.view(&ada, &id).await["version"]}),
        )
        .await;
    assert_eq!(resign.status, StatusCode::OK, "{:?}", resign.body);
    let own = app
        .post(
            &format!("/v1/admin/players/{}/close", admin.id),
            &admin.token,
            json!({}),
        )
        .await;
    assert_eq!(
        own.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{:?}",
        own.body
    );
    let by_player = app
        .post(
            &format!("/v1/admin/players/{}/close", bob.id),
            &ada.token,
            json!({}),
        )
        .await;
    assert_eq!(by_player.status, StatusCode::FORBIDDEN);
    let closed = app
        .post(
            &format!("/v1/admin/players/{}/close", ada.id),
            &admin.token,
            json!({}),
        )
        .await;
    assert_eq!(closed.status, StatusCode::OK, "{:?}", closed.body);
    let view = app.view(&bob, &id).await;
    assert!(!view.to_string().contains("Lovelace"), "{view}");
    let twice = app
        .post(
            &format!("/v1/admin/players/{}/close", ada.id),
            &admin.token,
            json!({}),
        )
        .await;
    assert_eq!(twice.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn two_databases_on_one_machine_each_sign_their_own_checkpoints_in_their_default_folders() {
    // One machine: both servers resolve their default folders beside the same data folder (this
    // test's own, not the machine's), and share its key file, as two `cargo run`s would.
    let machine = std::env::temp_dir().join(format!("discs-machine-{}", uuid::Uuid::new_v4()));
    let on_the_machine = |c: &mut ServeConfig| {
        c.core.db.pg_data_dir = Some(machine.join("pgdata"));
        c.core.history = HistoryConfig {
            checkpoint_dir: None,
            checkpoint_key_file: None,
            closings_file: None,
            ..c.core.history.clone()
        };
    };
    let first = spawn_app_with(on_the_machine).await;
    let (ada, bob) = (first.player("Ada").await, first.player("Bob").await);
    finished_match(&first, &ada, &bob).await;
    let c1 = checkpoint(&first).await.expect("the first log grew");
    let first_log = first.state.history.log();
    assert_eq!(c1.log, Some(first_log));
    assert_eq!(
        first.state.history.dir(),
        machine.join("checkpoints").join(first_log.to_string())
    );

    // Another database, on the same machine: another log, in a folder of its own. Before its
    // first event it has nothing to sign, and the first log's checkpoints do not stop it.
    let second = spawn_app_with(on_the_machine).await;
    let second_log = second.state.history.log();
    assert_ne!(second_log, first_log);
    assert_eq!(
        second.state.history.dir(),
        machine.join("checkpoints").join(second_log.to_string())
    );
    assert_eq!(
        checkpoint(&second).await,
        None,
        "an empty log signs nothing"
    );
    let (cy, dan) = (second.player("Cy").await, second.player("Dan").await);
    finished_match(&second, &cy, &dan).await;
    let d1 = checkpoint(&second).await.expect("the second log grew");
    assert_eq!((d1.seq, d1.log), (1, Some(second_log)));
    assert_ne!(d1.root, c1.root);
    let operator = first.state.history.public_key();
    assert_eq!(second.state.history.public_key(), operator, "one key file");
    for app in [&first, &second] {
        let report = verify(app, &operator).await;
        assert!(report.is_ok(), "{report:?}");
    }
    // The first log signs on.
    finished_match(&first, &bob, &ada).await;
    assert_eq!(checkpoint(&first).await.map(|c| c.seq), Some(2));

    // The second database's log against the first's folder: another log's, said plainly, and
    // nothing reported rewritten.
    let crossed = history::verify_folder(&second.state.log, first.state.history.dir(), &operator)
        .await
        .expect("the folder is read");
    assert!(!crossed.is_ok());
    assert_eq!(crossed.problems.len(), 1, "{crossed:?}");
    let said = &crossed.problems[0];
    assert!(
        said.contains("holds the checkpoints of another log")
            && said.contains(&first_log.to_string())
            && said.contains(&second_log.to_string()),
        "{said}"
    );

    // A folder configured for both logs: the second log's signer signs and records on, and
    // refuses, naming both ids, to publish among the first log's checkpoints.
    let shared = HistoryConfig {
        checkpoint_dir: Some(first.state.history.dir().to_owned()),
        checkpoint_key: None,
        checkpoint_key_file: Some(machine.join("checkpoint-key")),
        checkpoint_interval: 60,
        closings_file: Some(machine.join("closed-accounts")),
    };
    let db = crate::helpers::config(&second.db_url).core.db;
    let shared = history::History::from_config(&shared, &db, second_log).expect("a signer");
    finished_match(&second, &dan, &cy).await;
    history::grow_to_committed(&second.state.log)
        .await
        .expect("grown");
    let refused = history::checkpoint_now(
        &second.state.pool,
        &second.state.log,
        &shared,
        second.state.clock.as_ref(),
    )
    .await
    .expect_err("not published there")
    .to_string();
    assert!(
        refused.contains("holds the checkpoints of another log")
            && refused.contains(&first_log.to_string())
            && refused.contains(&second_log.to_string()),
        "{refused}"
    );
    let recorded = history::recorded(&second.state, None)
        .await
        .expect("read")
        .expect("recorded");
    let recorded: SignedCheckpoint = serde_json::from_str(&recorded).expect("a checkpoint");
    assert_eq!((recorded.seq, recorded.log), (2, Some(second_log)));

    // A restore of the first database to before its checkpoints keeps the log's identity (it
    // lives in the database), hence its folder: its signer still stops.
    let client = database::testing::raw_client(&first.db_url).await;
    client
        .batch_execute(
            "ALTER TABLE events DISABLE TRIGGER events_append_only; \
             TRUNCATE events, streams, log_tree_tiles, log_checkpoints CASCADE; \
             ALTER TABLE events ENABLE TRIGGER events_append_only; \
             UPDATE log_tree SET size = 0, tx = 0, position = 0",
        )
        .await
        .expect("as restored from a backup taken before the first event");
    assert_eq!(
        first.state.log.identity().await.expect("the identity"),
        first_log
    );
    let stopped = history::checkpoint_now(
        &first.state.pool,
        &first.state.log,
        &first.state.history,
        first.state.clock.as_ref(),
    )
    .await;
    assert!(
        matches!(stopped, Err(history::SignError::Diverged { seq: 2, .. })),
        "{stopped:?}"
    );
    std::fs::remove_dir_all(&machine).expect("the machine's folder removed");
}

#[tokio::test]
async fn the_instances_role_serves_but_may_not_change_or_remove_an_event() {
    // The role made as `discs migrate --instance-role` makes it for docker-compose.yml and
    // deploy/local-cluster.sh, on a database the owner migrated.
    let db = database::testing::TestDb::migrated(2).await;
    let role = format!("discs_instance_{}", uuid::Uuid::new_v4().simple());
    database::grant_instance_role(&db.pool, &role, Some("not-a-secret"))
        .await
        .expect("the role and its rights");
    database::grant_instance_role(&db.pool, &role, Some("not-a-secret"))
        .await
        .expect("again: idempotent");
    eventlog::EventLog::new(db.pool.clone())
        .identity()
        .await
        .expect("the log's identity, made by the owner");
    let server = db.url.split_once("://").expect("a URL").1;
    let server = server.split_once('@').map_or(server, |(_, s)| s);
    let url = format!("postgres://{role}:not-a-secret@{server}");

    // A server as that role: it starts (nothing to migrate), plays, projects and signs.
    let app = crate::helpers::spawn_on(&url, crate::helpers::config(&url)).await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let id = finished_match(&app, &ada, &bob).await;
    app.project().await;
    checkpoint(&app).await.expect("signed");
    let history = app
        .get(&format!("/v1/players/{}/matches", ada.id), &ada.token)
        .await;
    assert_eq!(history.status, StatusCode::OK, "{:?}", history.body);
    assert!(history.body.to_string().contains(&id), "{:?}", history.body);

    // The log: read and appended to, never changed nor removed, whatever trigger is there.
    let client = database::testing::raw_client(&url).await;
    let events: i64 = client
        .query_one("SELECT count(*) FROM events", &[])
        .await
        .expect("read")
        .get(0);
    assert!(events > 0);
    for statement in [
        "UPDATE events SET data = data",
        "DELETE FROM events",
        "TRUNCATE events",
        "ALTER TABLE events DISABLE TRIGGER events_append_only",
        "UPDATE log_identity SET log_id = gen_random_uuid()",
        "INSERT INTO refinery_schema_history (version) VALUES (999)",
    ] {
        let refused = client.batch_execute(statement).await.expect_err(statement);
        // insufficient_privilege: "permission denied for table …" ("must be owner …" for the
        // trigger).
        assert_eq!(
            refused.code().map(|c| c.code()),
            Some("42501"),
            "{statement}: {refused:?}"
        );
    }
    drop(client);
    drop(db);
    database::testing::admin()
        .await
        .batch_execute(&format!("DROP ROLE IF EXISTS \"{role}\""))
        .await
        .expect("the role dropped with its database");
}
