//! Every error code over HTTP, in problem+json, and that bad input changes nothing.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::spawn_app;

#[tokio::test]
async fn every_match_error_has_its_code_and_writes_nothing() {
    let app = spawn_app().await;
    let (ada, bob, eve) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Eve").await,
    );
    let room = app.room(&ada, &bob, "four_in_a_row", json!({})).await;
    let room_id = room["room_id"].as_str().expect("room id");
    let started = app
        .post(
            &format!("/v1/rooms/{room_id}/matches"),
            &ada.token,
            json!({}),
        )
        .await;
    let id = started.body["match_id"]
        .as_str()
        .expect("match id")
        .to_owned();
    let moves = format!("/v1/matches/{id}/moves");

    let checks = [
        (
            app.post(&moves, &bob.token, json!({"move": "4"})).await,
            StatusCode::CONFLICT,
            "not_your_turn",
        ),
        (
            app.post(&moves, &ada.token, json!({"move": "9"})).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "illegal_move",
        ),
        (
            app.post(&moves, &ada.token, json!({"move": "d3"})).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "illegal_move",
        ),
        (
            app.post(&moves, &ada.token, json!({"move": 4})).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            app.post(&moves, &ada.token, json!({"mov": "4"})).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            app.post(
                &moves,
                &ada.token,
                json!({"move": "4", "expected_version": 7}),
            )
            .await,
            StatusCode::CONFLICT,
            "version_conflict",
        ),
        (
            app.post(&moves, &eve.token, json!({"move": "4"})).await,
            StatusCode::FORBIDDEN,
            "forbidden",
        ),
        (
            app.post(&moves, "not-a-token", json!({"move": "4"})).await,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            app.post(
                "/v1/matches/not-a-uuid/moves",
                &ada.token,
                json!({"move": "4"}),
            )
            .await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            app.post(
                &format!("/v1/matches/{}/moves", uuid::Uuid::new_v4()),
                &ada.token,
                json!({"move": "4"}),
            )
            .await,
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            app.get("/v1/nothing-here", &ada.token).await,
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            app.post("/v1/matches", &ada.token, json!({"game": "chess"}))
                .await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            app.post(
                "/v1/matches",
                &ada.token,
                json!({"game": "reversi", "settings": {"turn_seconds": 45}}),
            )
            .await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
    ];
    for (res, status, code) in &checks {
        assert_eq!((res.status, res.code()), (*status, *code), "{:?}", res.body);
        for field in ["type", "title", "status", "detail", "code"] {
            assert!(
                !res.body[field].is_null(),
                "{field} missing in {:?}",
                res.body
            );
        }
    }
    let not_json = app
        .send(
            app.http
                .post(format!("{}{moves}", app.base))
                .bearer_auth(&ada.token)
                .header("content-type", "application/json")
                .body("{\"move\":"),
        )
        .await;
    assert_eq!(
        (not_json.status, not_json.code()),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );
    let huge = app
        .send(
            app.http
                .post(format!("{}{moves}", app.base))
                .bearer_auth(&ada.token)
                .header("content-type", "application/json")
                .body(format!("{{\"move\":\"{}\"}}", "4".repeat(100_000))),
        )
        .await;
    assert_eq!(
        (huge.status, huge.code()),
        (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
    );
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

#[tokio::test]
async fn errors_read_the_same_in_both_languages() {
    let app = spawn_app().await;
    let (ada, bob, eve) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.player("Eve").await,
    );
    let id = app.room_match(&ada, &bob, "four_in_a_row").await;
    let moves = format!("/v1/matches/{id}/moves");
    let post = |path: &str, token: &str, body: &str| Ask {
        method: reqwest::Method::POST,
        path: path.to_owned(),
        token: Some(token.to_owned()),
        body: Some(body.to_owned()),
        key: None,
    };
    let get = |path: &str, token: Option<&str>| Ask {
        method: reqwest::Method::GET,
        path: path.to_owned(),
        token: token.map(str::to_owned),
        body: None,
        key: None,
    };
    let asks = [
        (post(&moves, &ada.token, r#"{"move":"9"}"#), "illegal_move"),
        (post(&moves, &ada.token, r#"{"move":4}"#), "invalid_request"),
        (
            post(&moves, &ada.token, r#"{"mov":"4"}"#),
            "invalid_request",
        ),
        (post(&moves, &ada.token, r#"{"move":"#), "invalid_request"),
        (post(&moves, &bob.token, r#"{"move":"4"}"#), "not_your_turn"),
        (
            post(&moves, &ada.token, r#"{"move":"4","expected_version":7}"#),
            "version_conflict",
        ),
        (post(&moves, &eve.token, r#"{"move":"4"}"#), "forbidden"),
        (
            post(&moves, "not-a-token", r#"{"move":"4"}"#),
            "unauthorized",
        ),
        (get(&format!("/v1/matches/{id}"), None), "unauthorized"),
        (
            post(
                "/v1/matches/not-a-uuid/moves",
                &ada.token,
                r#"{"move":"4"}"#,
            ),
            "invalid_request",
        ),
        (
            get(
                &format!("/v1/matches/{}", uuid::Uuid::new_v4()),
                Some(&ada.token),
            ),
            "not_found",
        ),
        (get("/v1/nothing-here", Some(&ada.token)), "not_found"),
        (get("/v1/admin/flags", Some(&ada.token)), "forbidden"),
        (
            get("/v1/leaderboards/chess", Some(&ada.token)),
            "invalid_request",
        ),
        (
            get("/v1/leaderboards/reversi?limit=0", Some(&ada.token)),
            "invalid_request",
        ),
        (
            get("/v1/leaderboards/reversi?limit=x", Some(&ada.token)),
            "invalid_request",
        ),
        (
            post(
                "/v1/matches",
                &ada.token,
                r#"{"game":"reversi","settings":{"turn_seconds":45}}"#,
            ),
            "invalid_request",
        ),
        (
            post(
                "/v1/analysis",
                &ada.token,
                r#"{"game":"four_in_a_row","board":["......."],"side":"R"}"#,
            ),
            "invalid_request",
        ),
        (
            post(
                "/v1/analysis",
                &ada.token,
                r#"{"game":"four_in_a_row","moves":"4444449"}"#,
            ),
            "illegal_move",
        ),
        (
            get(&format!("/v1/matches/{id}/analysis"), Some(&ada.token)),
            "match_active",
        ),
        (
            get(&format!("/v1/matches/{id}/replay?ply=99"), Some(&ada.token)),
            "invalid_request",
        ),
        (
            Ask {
                key: Some("same-key"),
                ..post("/v1/matches", &eve.token, r#"{"game":"reversi"}"#)
            },
            "",
        ),
        (
            Ask {
                key: Some("same-key"),
                ..post("/v1/matches", &eve.token, r#"{"game":"four_in_a_row"}"#)
            },
            "idempotency_key_reused",
        ),
        (
            Ask {
                method: reqwest::Method::DELETE,
                ..get("/v1/games", None)
            },
            "method_not_allowed",
        ),
    ];
    for (ask, code) in &asks {
        let mut answers = Vec::new();
        for lang in ["en", "pt-BR"] {
            let mut req = app
                .http
                .request(ask.method.clone(), format!("{}{}", app.base, ask.path))
                .header("accept-language", lang);
            if let Some(token) = &ask.token {
                req = req.bearer_auth(token);
            }
            if let Some(body) = &ask.body {
                req = req
                    .header("content-type", "application/json")
                    .body(body.clone());
            }
            if let Some(key) = ask.key {
                req = req.header("idempotency-key", key);
            }
            answers.push(app.send(req).await);
        }
        let [en, pt] = [&answers[0], &answers[1]];
        if code.is_empty() {
            continue;
        }
        let place = format!("{} {}: {:?} / {:?}", ask.method, ask.path, en.body, pt.body);
        assert_eq!((en.code(), pt.code()), (*code, *code), "{place}");
        assert_eq!(en.status, pt.status, "{place}");
        assert_eq!(en.headers["content-language"], "en", "{place}");
        assert_eq!(pt.headers["content-language"], "pt-BR", "{place}");
        for field in ["title", "detail"] {
            assert_ne!(en.body[field], pt.body[field], "{field} of {place}");
        }
    }
    let pt = |ask: Ask| {
        let app = &app;
        async move {
            let mut req = app
                .http
                .request(ask.method, format!("{}{}", app.base, ask.path))
                .header("accept-language", "pt");
            if let Some(token) = ask.token {
                req = req.bearer_auth(token);
            }
            if let Some(body) = ask.body {
                req = req.header("content-type", "application/json").body(body);
            }
            app.send(req).await
        }
    };
    let illegal = pt(post(&moves, &ada.token, r#"{"move":"9"}"#)).await;
    assert_eq!(illegal.body["title"], "Jogada ilegal");
    assert_eq!(illegal.body["detail"], "`9` não é uma jogada deste jogo");
    let active = pt(get(&format!("/v1/matches/{id}/analysis"), Some(&ada.token))).await;
    assert_eq!(
        active.body["detail"],
        "A partida ainda está em andamento: só partidas encerradas são analisadas"
    );
    let field = pt(post(&moves, &ada.token, r#"{"mov":"4"}"#)).await;
    let detail = field.body["detail"].as_str().expect("a detail");
    assert!(
        detail.starts_with("Campo desconhecido: `mov`; esperava"),
        "{detail}"
    );
    // None of the refused commands reached the log.
    assert_eq!(app.events(&ada, &id).await.len(), 1);
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
