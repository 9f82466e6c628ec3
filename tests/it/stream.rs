//! The event stream: every event in order with the match view, resumable with Last-Event-ID.

use futures_util::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::spawn_app;

/// Reads SSE frames until `n` events have arrived.
async fn read_events(
    http: &reqwest::Client,
    url: &str,
    last_event_id: Option<u64>,
    n: usize,
) -> Vec<(u64, String, Value)> {
    let mut req = http.get(url);
    if let Some(id) = last_event_id {
        req = req.header("last-event-id", id.to_string());
    }
    let res = req.send().await.expect("the stream opens");
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        res.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let mut body = res.bytes_stream();
    let mut buf = String::new();
    let mut out = Vec::new();
    while out.len() < n {
        let chunk = body.next().await.expect("more frames").expect("a chunk");
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let frame: String = buf.drain(..end + 2).collect();
            let mut id = None;
            let mut event = String::new();
            let mut data = Value::Null;
            for line in frame.lines() {
                if let Some(v) = line.strip_prefix("id: ") {
                    id = v.parse().ok();
                } else if let Some(v) = line.strip_prefix("event: ") {
                    event = v.to_owned();
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data = serde_json::from_str(v).expect("json data");
                }
            }
            if let Some(id) = id {
                out.push((id, event, data));
            }
        }
    }
    out
}

#[tokio::test]
async fn the_stream_sends_every_event_in_order_and_resumes() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let room = app.room(&ada, &bob, "four_in_a_row", json!({})).await;
    let room_id = room["room_id"].as_str().expect("id");
    let started = app
        .post(
            &format!("/v1/rooms/{room_id}/matches"),
            &ada.token,
            json!({}),
        )
        .await;
    let id = started.body["match_id"].as_str().expect("id").to_owned();
    let url = format!(
        "{}/v1/matches/{id}/stream?access_token={}",
        app.base, bob.token
    );

    let reader = {
        let (url, http) = (url.clone(), app.http.clone());
        tokio::spawn(async move { read_events(&http, &url, None, 8).await })
    };
    for (i, mv) in ["4", "1", "4", "1", "4", "1", "4"].iter().enumerate() {
        let p = if i % 2 == 0 { &ada } else { &bob };
        assert_eq!(app.play(p, &id, mv).await.status, StatusCode::OK);
    }
    let frames = reader.await.expect("reader");
    let versions: Vec<u64> = frames.iter().map(|f| f.0).collect();
    assert_eq!(versions, (1..=8).collect::<Vec<_>>());
    assert_eq!(frames[0].1, "match_created");
    assert_eq!(frames[1].1, "move_played");
    assert_eq!(frames[1].2["event"]["data"]["move"], "4");
    assert_eq!(frames[1].2["match"]["version"], 2);
    assert_eq!(frames[7].2["match"]["moves"], "4141414");

    let resumed = read_events(&app.http, &url, Some(6), 3).await;
    let versions: Vec<u64> = resumed.iter().map(|f| f.0).collect();
    assert_eq!(versions, [7, 8, 9]);
    assert_eq!(resumed[2].1, "match_ended");
}

#[tokio::test]
async fn the_cpu_seed_stays_hidden_while_the_match_is_played_and_shows_once_it_ends() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let id = app.solo_four(&ada).await;
    assert_eq!(app.play(&ada, &id, "4").await.status, StatusCode::OK);
    let url = format!(
        "{}/v1/matches/{id}/stream?access_token={}",
        app.base, ada.token
    );
    // The stream's history (created, the move, the CPU's reply) and `/events`.
    let frames = read_events(&app.http, &url, None, 3).await;
    assert_eq!(frames[0].1, "match_created");
    for (_, _, data) in &frames {
        assert!(!data.to_string().contains("cpu_seed"), "{data}");
    }
    let events = app.events(&ada, &id).await;
    assert_eq!(events[0]["type"], "match_created");
    assert!(events[0]["data"].get("cpu_seed").is_none(), "{}", events[0]);

    let resigned = app
        .post(&format!("/v1/matches/{id}/resign"), &ada.token, json!({}))
        .await;
    assert_eq!(resigned.status, StatusCode::OK, "{:?}", resigned.body);
    let events = app.events(&ada, &id).await;
    assert!(events[0]["data"]["cpu_seed"].is_u64(), "{}", events[0]);
}
