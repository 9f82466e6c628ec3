//! A player's own stream: each kind of event as it commits (a challenge received and accepted,
//! the match starting, their turn in a correspondence game, the match ending), and a resume
//! after `Last-Event-ID` on a second instance that gets exactly what followed.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{Player, TestApp, config, spawn_app, spawn_on};

/// A stream opened: frames are read from it as they come.
pub(crate) struct Frames {
    res: reqwest::Response,
    buf: String,
}

impl Frames {
    pub(crate) async fn open(app: &TestApp, p: &Player, last_event_id: Option<&str>) -> Frames {
        let mut req = app
            .http
            .get(format!("{}/v1/players/me/stream", app.base))
            .bearer_auth(&p.token);
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id);
        }
        let res = req.send().await.expect("the stream opens");
        assert_eq!(res.status(), StatusCode::OK);
        Frames {
            res,
            buf: String::new(),
        }
    }

    /// The next `n` frames: (id, event, data).
    pub(crate) async fn next(&mut self, n: usize) -> Vec<(String, String, Value)> {
        let mut out = Vec::new();
        while out.len() < n {
            if let Some(end) = self.buf.find("\n\n") {
                let frame: String = self.buf.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (None, String::new(), Value::Null);
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        id = Some(v.to_owned());
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        event = v.to_owned();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data = serde_json::from_str(v).expect("json data");
                    }
                }
                if let Some(id) = id {
                    out.push((id, event, data));
                }
                continue;
            }
            let chunk = self
                .res
                .chunk()
                .await
                .expect("a chunk")
                .expect("more frames");
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
        out
    }

    /// The next `n` frames but the start of any match in `begun` (matches that began before the
    /// stream opened without `Last-Event-ID`): "from now" is the log's commit-safe place when
    /// the stream opened, which a transaction still open anywhere on the cluster holds back, so
    /// such a start may still come through the tail.
    pub(crate) async fn next_past_starts(
        &mut self,
        n: usize,
        begun: &[&str],
    ) -> Vec<(String, String, Value)> {
        let mut out = Vec::new();
        while out.len() < n {
            for frame in self.next(1).await {
                let started = frame.1 == "match_started"
                    && begun.iter().any(|id| frame.2["match_id"] == json!(id));
                if !started {
                    out.push(frame);
                }
            }
        }
        out
    }
}

pub(crate) fn kinds(frames: &[(String, String, Value)]) -> Vec<String> {
    frames
        .iter()
        .map(|(_, event, data)| match data["type"].as_str() {
            Some(t) => format!("{event}:{t}"),
            None => event.clone(),
        })
        .collect()
}

#[tokio::test]
async fn the_player_stream_tells_each_kind_and_resumes_on_another_instance() {
    let app = spawn_app().await;
    let (ada, bob, cy) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Cy").await,
    );
    let mut bobs = Frames::open(&app, &bob, None).await;

    let sent = app
        .post(
            "/v1/challenges",
            &ada.token,
            json!({"opponent": bob.id, "game": "four_in_a_row", "days_per_move": 2,
                   "first": "challenger"}),
        )
        .await;
    assert_eq!(sent.status, StatusCode::CREATED, "{:?}", sent.body);
    let id = sent.body["challenge_id"]
        .as_str()
        .expect("an id")
        .to_owned();
    // Nothing of other players reaches Bob: a challenge between Ada and Cy.
    let other = app
        .post(
            "/v1/challenges",
            &ada.token,
            json!({"opponent": cy.id, "game": "reversi"}),
        )
        .await;
    assert_eq!(other.status, StatusCode::CREATED, "{:?}", other.body);
    let accepted = app
        .post(
            &format!("/v1/challenges/{id}/accept"),
            &bob.token,
            json!({}),
        )
        .await;
    assert_eq!(accepted.status, StatusCode::OK, "{:?}", accepted.body);
    let match_id = accepted.body["match_id"]
        .as_str()
        .expect("a match")
        .to_owned();
    let res = app.play(&ada, &match_id, "4").await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app
        .post(
            &format!("/v1/matches/{match_id}/resign"),
            &bob.token,
            json!({}),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);

    let frames = bobs.next(5).await;
    assert_eq!(
        kinds(&frames),
        [
            "challenge:challenge_sent",
            "challenge:challenge_accepted",
            "match_started",
            "your_turn",
            "match_ended",
        ]
    );
    assert_eq!(frames[0].2["challenge_id"], json!(id));
    assert_eq!(frames[1].2["match_id"], json!(match_id));
    assert_eq!(frames[2].2["match_id"], json!(match_id));
    assert_eq!(frames[3].2["match_id"], json!(match_id));
    assert!(frames[3].2["deadline"].is_string());
    assert_eq!(frames[4].2["result"]["reason"], "resigned");

    // Another instance, after the first frame: the same four that followed, from the log.
    let other = spawn_on(&app.db_url, config(&app.db_url)).await;
    let mut resumed = Frames::open(&other, &bob, Some(&frames[0].0)).await;
    let again = resumed.next(4).await;
    assert_eq!(again, frames[1..].to_vec());

    // A Last-Event-ID that is no frame's id is refused.
    let res = other
        .send(
            other
                .http
                .get(format!("{}/v1/players/me/stream", other.base))
                .bearer_auth(&bob.token)
                .header("last-event-id", "seven"),
        )
        .await;
    assert_eq!(
        res.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{:?}",
        res.body
    );
}

#[tokio::test]
async fn the_player_stream_tells_a_tournament_entered_starting_and_its_game() {
    let app = spawn_app().await;
    let (admin, ana, bob) = (
        app.admin("Arbiter").await,
        app.player("Ana").await,
        app.player("Bob").await,
    );
    let now = app.state.now();
    let created = app
        .tournament(
            &admin,
            json!({"game": "four_in_a_row", "format": "arena", "name": "Evening arena",
                   "starts_at": crate::tournaments::at(now + time::Duration::minutes(30)),
                   "minutes": 20}),
        )
        .await;
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    let res = app.join(&ana, &id).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let mut bobs = Frames::open(&app, &bob, None).await;
    // Joined while the stream is open: followed from the join on.
    let res = app.join(&bob, &id).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    app.clock.advance(time::Duration::minutes(30));
    let pass = app.organise().await;
    assert_eq!(pass.pairings, 1, "{pass:?}");
    let frames = bobs.next(2).await;
    assert_eq!(kinds(&frames), ["tournament_started", "match_started"]);
    assert_eq!(frames[0].2["tournament_id"], json!(id));
}

#[tokio::test]
async fn a_stream_opened_fresh_tells_the_end_of_real_time_matches_begun_before_it() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let solo = app.solo_four(&ada).await;
    let room = app.room_match(&ada, &bob, "reversi").await;
    // Opened after both began, without Last-Event-ID; Bob's on another instance.
    let mut adas = Frames::open(&app, &ada, None).await;
    let other = spawn_on(&app.db_url, config(&app.db_url)).await;
    let mut bobs = Frames::open(&other, &bob, None).await;
    for id in [&solo, &room] {
        let res = app
            .post(&format!("/v1/matches/{id}/resign"), &ada.token, json!({}))
            .await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    }
    let frames = adas.next_past_starts(2, &[&solo, &room]).await;
    assert_eq!(kinds(&frames), ["match_ended", "match_ended"]);
    assert_eq!(frames[0].2["match_id"], json!(solo));
    assert_eq!(frames[1].2["match_id"], json!(room));
    assert_eq!(frames[1].2["result"]["reason"], "resigned");
    let frames = bobs.next_past_starts(1, &[&room]).await;
    assert_eq!(kinds(&frames), ["match_ended"]);
    assert_eq!(frames[0].2["match_id"], json!(room));
    // The seats went with the matches' work rows: nothing is followed that is over.
    let client = database::testing::raw_client(&app.db_url).await;
    let left: i64 = client
        .query_one("SELECT count(*) FROM live_seats", &[])
        .await
        .expect("the seats")
        .get(0);
    assert_eq!(left, 0);
}
