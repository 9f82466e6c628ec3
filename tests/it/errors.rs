//! Every error code over HTTP, in problem+json, and that bad input changes nothing.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{Player, Res, TestApp, spawn_app};

#[tokio::test]
async fn every_match_error_has_its_status_and_code_and_writes_nothing() {
    let app = spawn_app().await;
    let (ada, bob, eve) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Eve").await,
    );
    let id = app.room_match(&ada, &bob, "four_in_a_row").await;
    for (ask, status, code) in failing_asks(&id, &ada, &bob, &eve) {
        let res = ask.send(&app, "en").await;
        if code.is_empty() {
            continue;
        }
        let place = format!("{} {}: {:?}", ask.method, ask.path, res.body);
        assert_eq!((res.status, res.code()), (status, code), "{place}");
        for field in ["type", "title", "status", "detail", "code"] {
            assert!(!res.body[field].is_null(), "{field} missing in {place}");
        }
    }
    // Nothing of the above reached the log.
    assert_eq!(app.events(&ada, &id).await.len(), 1);
}

#[tokio::test]
async fn errors_speak_portuguese_when_asked() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let res = app
        .send(
            app.http
                .get(format!("{}/v1/matches/{}", app.base, uuid::Uuid::new_v4()))
                .bearer_auth(&ada.token)
                .header("accept-language", "pt-BR,pt;q=0.9,en;q=0.5"),
        )
        .await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    assert_eq!(res.body["title"], "Não encontrado");
    assert_eq!(res.code(), "not_found");
    let english = app
        .get(&format!("/v1/matches/{}", uuid::Uuid::new_v4()), &ada.token)
        .await;
    assert_eq!(english.body["title"], "Not found");
    let games = app
        .send(
            app.http
                .get(format!("{}/v1/games", app.base))
                .header("accept-language", "pt"),
        )
        .await;
    assert_eq!(games.status, StatusCode::OK);
    assert_eq!(games.body["games"][0]["id"], "four_in_a_row");
    assert_ne!(
        games.body["games"][0]["name"],
        app.send(app.http.get(format!("{}/v1/games", app.base)))
            .await
            .body["games"][0]["name"]
    );
}

/// One request of [`errors_read_the_same_in_both_languages`]: method, path, token, body, and
/// the `Idempotency-Key` it carries.
struct Ask {
    method: reqwest::Method,
    path: String,
    token: Option<String>,
    body: Option<String>,
    key: Option<&'static str>,
}

impl Ask {
    fn post(path: &str, token: &str, body: &str) -> Ask {
        Ask {
            method: reqwest::Method::POST,
            path: path.to_owned(),
            token: Some(token.to_owned()),
            body: Some(body.to_owned()),
            key: None,
        }
    }

    fn get(path: &str, token: Option<&str>) -> Ask {
        Ask {
            method: reqwest::Method::GET,
            path: path.to_owned(),
            token: token.map(str::to_owned),
            body: None,
            key: None,
        }
    }

    /// Sends this request asking for `lang`.
    async fn send(&self, app: &TestApp, lang: &str) -> Res {
        let mut req = app
            .http
            .request(self.method.clone(), format!("{}{}", app.base, self.path))
            .header("accept-language", lang);
        if let Some(token) = &self.token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = &self.body {
            req = req
                .header("content-type", "application/json")
                .body(body.clone());
        }
        if let Some(key) = self.key {
            req = req.header("idempotency-key", key);
        }
        app.send(req).await
    }
}

/// Requests that fail, each with the code it fails with, on the room match `id` of Ada (to
/// move) and Bob, with Eve outside it; an empty code is a request that succeeds (the first use
/// of an `Idempotency-Key`).
fn failing_asks(
    id: &str,
    ada: &Player,
    bob: &Player,
    eve: &Player,
) -> Vec<(Ask, StatusCode, &'static str)> {
    let moves = format!("/v1/matches/{id}/moves");
    let (ada, bob, eve) = (ada.token.as_str(), bob.token.as_str(), eve.token.as_str());
    vec![
        (
            Ask::post(
                &moves,
                ada,
                &format!(r#"{{"move":"{}"}}"#, "4".repeat(100_000)),
            ),
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
        ),
        (
            Ask::post(&moves, ada, r#"{"move":"d3"}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "illegal_move",
        ),
        (
            Ask::post("/v1/matches", ada, r#"{"game":"chess"}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask::post(&moves, ada, r#"{"move":"9"}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "illegal_move",
        ),
        (
            Ask::post(&moves, ada, r#"{"move":4}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask::post(&moves, ada, r#"{"mov":"4"}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask::post(&moves, ada, r#"{"move":["4"]}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask::post(&moves, ada, r#"{"move":"4","expected_version":-1}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask::post(&moves, ada, r#"{"move":"4","move":"5"}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask::post(&moves, ada, r#"{"move":"#),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            Ask::post(&moves, bob, r#"{"move":"4"}"#),
            StatusCode::CONFLICT,
            "not_your_turn",
        ),
        (
            Ask::post(&moves, ada, r#"{"move":"4","expected_version":7}"#),
            StatusCode::CONFLICT,
            "version_conflict",
        ),
        (
            Ask::post(&moves, eve, r#"{"move":"4"}"#),
            StatusCode::FORBIDDEN,
            "forbidden",
        ),
        (
            Ask::post(&moves, "not-a-token", r#"{"move":"4"}"#),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            Ask::get(&format!("/v1/matches/{id}"), None),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            Ask::post("/v1/matches/not-a-uuid/moves", ada, r#"{"move":"4"}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask::get(&format!("/v1/matches/{}", uuid::Uuid::new_v4()), Some(ada)),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            Ask::get("/v1/nothing-here", Some(ada)),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            Ask::get("/v1/admin/flags", Some(ada)),
            StatusCode::FORBIDDEN,
            "forbidden",
        ),
        (
            Ask::get("/v1/leaderboards/chess", Some(ada)),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask::get("/v1/leaderboards/reversi?limit=0", Some(ada)),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask::get("/v1/leaderboards/reversi?limit=x", Some(ada)),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask::post(
                "/v1/matches",
                ada,
                r#"{"game":"reversi","settings":{"turn_seconds":45}}"#,
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask::post(
                "/v1/analysis",
                ada,
                r#"{"game":"four_in_a_row","board":["......."],"side":"R"}"#,
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask::post(
                "/v1/analysis",
                ada,
                r#"{"game":"four_in_a_row","moves":"4444449"}"#,
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "illegal_move",
        ),
        (
            Ask::get(&format!("/v1/matches/{id}/analysis"), Some(ada)),
            StatusCode::CONFLICT,
            "match_active",
        ),
        (
            Ask::get(&format!("/v1/matches/{id}/replay?ply=99"), Some(ada)),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            Ask {
                key: Some("same-key"),
                ..Ask::post("/v1/matches", eve, r#"{"game":"reversi"}"#)
            },
            StatusCode::OK,
            "",
        ),
        (
            Ask {
                key: Some("same-key"),
                ..Ask::post("/v1/matches", eve, r#"{"game":"four_in_a_row"}"#)
            },
            StatusCode::CONFLICT,
            "idempotency_key_reused",
        ),
        (
            Ask {
                method: reqwest::Method::DELETE,
                ..Ask::get("/v1/games", None)
            },
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
        ),
    ]
}

#[tokio::test]
async fn errors_read_the_same_in_both_languages() {
    let app = spawn_app().await;
    let (ada, bob, eve) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Eve").await,
    );
    let id = app.room_match(&ada, &bob, "four_in_a_row").await;
    for (ask, _, code) in failing_asks(&id, &ada, &bob, &eve) {
        let en = ask.send(&app, "en").await;
        let pt = ask.send(&app, "pt-BR").await;
        if code.is_empty() {
            continue;
        }
        let place = format!("{} {}: {:?} / {:?}", ask.method, ask.path, en.body, pt.body);
        assert_eq!((en.code(), pt.code()), (code, code), "{place}");
        assert_eq!(en.status, pt.status, "{place}");
        assert_eq!(en.headers["content-language"], "en", "{place}");
        assert_eq!(pt.headers["content-language"], "pt-BR", "{place}");
        for field in ["title", "detail"] {
            assert_ne!(en.body[field], pt.body[field], "{field} of {place}");
        }
    }
    let moves = format!("/v1/matches/{id}/moves");
    let illegal = Ask::post(&moves, &ada.token, r#"{"move":"9"}"#)
        .send(&app, "pt")
        .await;
    assert_eq!(illegal.body["title"], "Jogada ilegal");
    assert_eq!(illegal.body["detail"], "`9` não é uma jogada deste jogo");
    let active = Ask::get(&format!("/v1/matches/{id}/analysis"), Some(&ada.token))
        .send(&app, "pt")
        .await;
    assert_eq!(
        active.body["detail"],
        "A partida ainda está em andamento: só partidas encerradas são analisadas"
    );
    let field = Ask::post(&moves, &ada.token, r#"{"mov":"4"}"#)
        .send(&app, "pt")
        .await;
    let detail = field.body["detail"].as_str().expect("a detail");
    assert!(
        detail.starts_with("Campo desconhecido: `mov`; esperava"),
        "{detail}"
    );
    // None of the refused commands reached the log.
    assert_eq!(app.events(&ada, &id).await.len(), 1);
}

/// The words of a problem's title and detail, lower-cased, without what it quotes (the
/// client's own values, field names and ids between backticks or double quotes).
fn words(body: &serde_json::Value) -> Vec<String> {
    let mut text = String::new();
    for field in ["title", "detail"] {
        let mut quoted = None;
        for c in body[field].as_str().unwrap_or("").chars() {
            match quoted {
                Some(q) if c == q => quoted = None,
                Some(_) => {}
                None if c == '`' || c == '"' => quoted = Some(c),
                None => text.push(c),
            }
        }
        text.push(' ');
    }
    // A name with an underscore is a field's (`turn_seconds`), written alike in both.
    text.split(|c: char| !c.is_alphabetic() && c != '_')
        .filter(|w| !w.is_empty() && !w.contains('_'))
        .map(str::to_lowercase)
        .collect()
}

#[tokio::test]
async fn a_portuguese_answer_has_no_english_word() {
    // Words both languages write alike: technical names and the few words they share.
    const SHARED: [&str; 17] = [
        "a",
        "e",
        "o",
        "no",
        "json",
        "token",
        "bearer",
        "idempotency",
        "key",
        "cpu",
        "id",
        "ascii",
        "audience",
        "bytes",
        "uuid",
        "null",
        "get",
    ];
    let app = spawn_app().await;
    let (ada, bob, eve) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Eve").await,
    );
    let id = app.room_match(&ada, &bob, "four_in_a_row").await;
    let mut english = std::collections::BTreeSet::new();
    let mut answers = Vec::new();
    for (ask, _, code) in failing_asks(&id, &ada, &bob, &eve) {
        let en = ask.send(&app, "en").await;
        let pt = ask.send(&app, "pt-BR").await;
        if code.is_empty() {
            continue;
        }
        english.extend(words(&en.body));
        answers.push((format!("{} {}", ask.method, ask.path), pt.body));
    }
    assert!(
        english.len() > 50,
        "the English answers say enough to compare: {english:?}"
    );
    let found: Vec<String> = answers
        .iter()
        .flat_map(|(place, pt)| {
            words(pt)
                .into_iter()
                .filter(|w| english.contains(w) && !SHARED.contains(&w.as_str()))
                .map(move |w| format!("{place}: {w:?} in {}", pt["detail"]))
        })
        .collect();
    assert!(found.is_empty(), "English in Portuguese: {found:#?}");
}

#[tokio::test]
async fn no_input_produces_a_500() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let view = app.solo(&ada, "reversi", json!({})).await;
    let id = view["match_id"].as_str().expect("an id").to_owned();
    let bodies = [
        "",
        "null",
        "[]",
        "0",
        "\"x\"",
        "{\"move\":null}",
        "{\"move\":\"\"}",
        "{\"move\":\"ñ\"}",
        "{\"move\":\"a1a1a1a1a1\"}",
        "{\"move\":\"\\u0000\"}",
        "{\"move\":\"d3\",\"expected_version\":-1}",
        "{\"move\":\"d3\",\"expected_version\":1e40}",
        "{\"game\":{}}",
        "\u{feff}{}",
    ];
    let paths = [
        format!("/v1/matches/{id}/moves"),
        format!("/v1/matches/{id}/resign"),
        format!("/v1/matches/{id}/leave"),
        "/v1/matches".to_owned(),
        "/v1/rooms".to_owned(),
        "/v1/rooms/%00%00/join".to_owned(),
        "/v1/players".to_owned(),
    ];
    for path in &paths {
        for body in bodies {
            let res = app
                .send(
                    app.http
                        .post(format!("{}{path}", app.base))
                        .bearer_auth(&ada.token)
                        .header("content-type", "application/json")
                        .body(body),
                )
                .await;
            assert!(
                res.status.as_u16() < 500,
                "{path} {body:?} -> {} {:?}",
                res.status,
                res.body
            );
        }
    }
    for path in [
        "/v1/matches/%20",
        "/v1/rooms/1",
        "/v1/players/zzz",
        "/v1/matches/x/replay?ply=-1",
    ] {
        let res = app.get(path, &ada.token).await;
        assert!(res.status.as_u16() < 500, "{path} -> {}", res.status);
    }
}

/// A body is a JSON object, and so is every object inside it: serde would read a struct from an
/// array of its fields too (`{"settings": []}` as the defaults), which nothing here means.
#[tokio::test]
async fn arrays_where_objects_belong_are_refused_and_change_nothing() {
    let app = spawn_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let room = app
        .room(&ada, &bob, "reversi", json!({"show_legal_moves": false}))
        .await;
    let path = format!("/v1/rooms/{}", room["room_id"].as_str().expect("an id"));
    let patch = |body: serde_json::Value| {
        app.send(
            app.http
                .patch(format!("{}{path}", app.base))
                .bearer_auth(&ada.token)
                .json(&body),
        )
    };
    for body in [
        json!({"settings": []}),
        json!({"settings": [null, true]}),
        json!([{}]),
    ] {
        let res = patch(body.clone()).await;
        assert_eq!(
            (res.status, res.code()),
            (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"),
            "{body}: {:?}",
            res.body
        );
    }
    let res = app.get(&path, &ada.token).await;
    assert_eq!(res.body["settings"]["show_legal_moves"], false, "unchanged");
    for (path, body) in [
        ("/v1/players", json!(["Cy"])),
        ("/v1/rooms", json!({"game": "reversi", "settings": []})),
        ("/v1/matches", json!({"game": "reversi", "settings": [30]})),
    ] {
        let res = app.post(path, &ada.token, body.clone()).await;
        assert_eq!(
            res.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {:?}",
            res.body
        );
    }
}
