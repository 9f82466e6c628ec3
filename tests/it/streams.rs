//! The stream registry: every stream (a match's, a tournament's) under the same caps, ended on
//! every instance when its player's rights end (revocation, closing, ban), and no frame sent
//! after a closing carries the old name.

use futures_util::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use domain::ids::PlayerId;

use crate::helpers::{Player, TestApp, config, spawn_app, spawn_on};

/// An open event stream, read frame by frame.
struct Sse {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buf: String,
}

/// One frame: its event name (empty for a comment) and its data.
#[derive(Debug)]
struct Frame {
    event: String,
    data: Value,
}

impl Sse {
    async fn open(app: &TestApp, path: &str, p: &Player) -> Result<Sse, StatusCode> {
        let res = app
            .http
            .get(format!("{}{path}", app.base))
            .bearer_auth(&p.token)
            .send()
            .await
            .expect("the server answers");
        if res.status() != StatusCode::OK {
            return Err(res.status());
        }
        Ok(Sse {
            body: res.bytes_stream().map(|c| c.map(|b| b.to_vec())).boxed(),
            buf: String::new(),
        })
    }

    /// The next frame with an event, or `None` once the server has ended the stream.
    async fn next(&mut self) -> Option<Frame> {
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let text: String = self.buf.drain(..end + 2).collect();
                let mut frame = Frame {
                    event: String::new(),
                    data: Value::Null,
                };
                for line in text.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        frame.event = v.to_owned();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        frame.data = serde_json::from_str(v).expect("json data");
                    }
                }
                if !frame.event.is_empty() {
                    return Some(frame);
                }
            }
            let chunk = self.body.next().await?.expect("a chunk");
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// Reads to the end of the stream; its last frame.
    async fn last(mut self) -> Frame {
        let mut last = None;
        while let Some(f) = self.next().await {
            last = Some(f);
        }
        last.expect("a frame")
    }
}

fn id_of(p: &Player) -> PlayerId {
    p.id.parse().expect("an id")
}

/// `A` and `B`: two instances on one database.
async fn two_instances() -> (TestApp, TestApp) {
    let a = spawn_app().await;
    let b = spawn_on(&a.db_url, config(&a.db_url)).await;
    (a, b)
}

async fn keyed_post(app: &TestApp, path: &str, p: &Player, key: &str, body: Value) -> Value {
    let res = app
        .send(
            app.http
                .post(format!("{}{path}", app.base))
                .bearer_auth(&p.token)
                .header("idempotency-key", key)
                .json(&body),
        )
        .await;
    assert!(res.status.is_success(), "{path}: {:?}", res.body);
    res.body
}

#[tokio::test]
async fn a_revocation_ends_the_players_streams_on_every_instance_and_their_presence_with_them() {
    let (a, b) = two_instances().await;
    let (ada, bob) = (a.player("Ada").await, a.player("Bob").await);
    let id = a.room_match(&bob, &ada, "four_in_a_row").await;
    let path = format!("/v1/matches/{id}/stream");
    let mut on_a = Sse::open(&a, &path, &ada).await.expect("opens on A");
    let mut on_b = Sse::open(&b, &path, &ada).await.expect("opens on B");
    let mut bobs = Sse::open(&b, &path, &bob).await.expect("Bob's opens");
    for s in [&mut on_a, &mut on_b, &mut bobs] {
        assert_eq!(s.next().await.expect("history").event, "match_created");
    }
    assert_eq!(
        (
            a.state.live.registry.of(id_of(&ada)),
            b.state.live.registry.of(id_of(&ada))
        ),
        (1, 1)
    );

    keyed_post(
        &a,
        "/v1/tokens/revoke",
        &ada,
        "out",
        json!({"scope": "everywhere"}),
    )
    .await;
    for s in [on_a, on_b] {
        let last = s.last().await;
        assert_eq!(last.event, "ended");
        assert_eq!(last.data, json!({"reason": "revoked"}));
    }
    // Their places are given back: nothing of Ada's streams on either instance.
    assert_eq!(a.state.live.registry.of(id_of(&ada)), 0);
    assert_eq!(b.state.live.registry.of(id_of(&ada)), 0);
    // Bob's stream goes on: his move reaches it.
    assert_eq!(a.play(&bob, &id, "4").await.status, StatusCode::OK);
    assert_eq!(bobs.next().await.expect("Bob's frame").event, "move_played");
    // Nothing marks Ada present any more: past the presence time her seat is away.
    a.advance(31).await;
    let view = a.view(&bob, &id).await;
    let seat = view["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .find(|s| s["player_id"] == json!(ada.id))
        .expect("Ada's seat")
        .clone();
    assert_eq!(seat["controller"], "away", "{view}");
}

#[tokio::test]
async fn a_closing_ends_the_players_streams_and_no_later_frame_names_them_on_any_instance() {
    let (a, b) = two_instances().await;
    let name = "Zephyrine Quast";
    let (zep, bob) = (a.player(name).await, a.player("Bob").await);
    let id = a.room_match(&bob, &zep, "four_in_a_row").await;
    let path = format!("/v1/matches/{id}/stream");
    let mut zeps = Sse::open(&b, &path, &zep)
        .await
        .expect("Zephyrine's opens on B");
    let mut on_a = Sse::open(&a, &path, &bob).await.expect("Bob's opens on A");
    let mut on_b = Sse::open(&b, &path, &bob).await.expect("Bob's opens on B");
    for s in [&mut zeps, &mut on_a, &mut on_b] {
        let first = s.next().await.expect("history");
        assert!(first.data.to_string().contains(name));
    }

    let asked = a
        .post("/v1/players/me/closing", &zep.token, json!({}))
        .await;
    let closed = a
        .post(
            "/v1/players/me/close",
            &zep.token,
            json!({"confirmation": asked.body["confirmation"]}),
        )
        .await;
    assert_eq!(closed.status, StatusCode::OK, "{:?}", closed.body);
    let label = closed.body["label"].as_str().expect("a label").to_owned();
    let last = zeps.last().await;
    assert_eq!(
        (last.event.as_str(), &last.data),
        ("ended", &json!({"reason": "revoked"}))
    );
    assert!(b.edge.generations.caught_up().await, "B has heard");

    // Every frame from now on, on either instance, for old and new streams, shows the label.
    let mut fresh = Sse::open(&b, &path, &bob).await.expect("a new stream on B");
    let history = fresh.next().await.expect("history");
    assert!(
        history.data.to_string().contains(&label),
        "{:?}",
        history.data
    );
    assert_eq!(a.play(&bob, &id, "4").await.status, StatusCode::OK);
    for s in [&mut on_a, &mut on_b, &mut fresh] {
        let frame = s.next().await.expect("the move's frame");
        assert_eq!(frame.event, "move_played");
        let text = frame.data.to_string();
        assert!(!text.contains("Zephyrine"), "{text}");
        assert!(text.contains(&label), "{text}");
    }
}

#[tokio::test]
async fn a_ban_ends_the_players_streams_on_every_instance_and_refuses_new_ones() {
    let (a, b) = two_instances().await;
    let (dee, bob) = (a.player("Dee").await, a.player("Bob").await);
    let admin = a.admin("Root").await;
    let id = a.room_match(&bob, &dee, "four_in_a_row").await;
    let path = format!("/v1/matches/{id}/stream");
    let mut on_a = Sse::open(&a, &path, &dee).await.expect("opens on A");
    let mut on_b = Sse::open(&b, &path, &dee).await.expect("opens on B");
    on_a.next().await.expect("history");
    on_b.next().await.expect("history");
    let res = a
        .post(
            &format!("/v1/admin/players/{}/decisions", dee.id),
            &admin.token,
            json!({"decision": "banned", "reason": "engine use"}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    for s in [on_a, on_b] {
        let last = s.last().await;
        assert_eq!(
            (last.event.as_str(), &last.data),
            ("ended", &json!({"reason": "banned"}))
        );
    }
    assert!(b.edge.generations.caught_up().await);
    for on in [&a, &b] {
        assert_eq!(
            Sse::open(on, &path, &dee).await.err(),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(on.state.live.registry.of(id_of(&dee)), 0);
    }
}

#[tokio::test]
async fn tournament_streams_count_under_the_same_caps_as_match_streams_and_an_own_match_passes() {
    let app = spawn_app().await;
    let (ana, bob) = (app.player("Ana").await, app.player("Bob").await);
    let soon = (OffsetDateTime::now_utc() + Duration::minutes(10))
        .format(&time::format_description::well_known::Rfc3339)
        .expect("a time");
    let res = app
        .post(
            "/v1/tournaments",
            &ana.token,
            json!({"game": "reversi", "format": "round_robin", "name": "Cup", "starts_at": soon, "private": true}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    let path = format!(
        "/v1/tournaments/{}/stream",
        res.body["tournament_id"].as_str().expect("id")
    );
    let mut open = Vec::new();
    for _ in 0..8 {
        open.push(Sse::open(&app, &path, &ana).await.expect("under the cap"));
    }
    assert_eq!(
        Sse::open(&app, &path, &ana).await.err(),
        Some(StatusCode::TOO_MANY_REQUESTS)
    );
    // A match stream counts against the same cap, unless Ana is seated in the match: her own
    // game always gets a place.
    let carl = app.player("Carl").await;
    let theirs = app.room_match(&bob, &carl, "reversi").await;
    assert_eq!(
        Sse::open(&app, &format!("/v1/matches/{theirs}/stream"), &ana)
            .await
            .err(),
        Some(StatusCode::TOO_MANY_REQUESTS)
    );
    assert_eq!(app.state.live.registry.of(id_of(&ana)), 8);
    let hers = app.room_match(&ana, &bob, "reversi").await;
    let own = Sse::open(&app, &format!("/v1/matches/{hers}/stream"), &ana)
        .await
        .expect("her own match");
    assert_eq!(app.state.live.registry.of(id_of(&ana)), 9);
    drop(own);
    drop(open);
}
