//! The service's own documents: health, readiness, the game catalogue, the OpenAPI document and
//! its docs page.

use domain::games::GameId;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::spawn_app;

#[tokio::test]
async fn health_readiness_and_the_api_documents_answer_without_a_token() {
    let app = spawn_app().await;
    let get = |path: &str| app.send(app.http.get(format!("{}{path}", app.base)));
    assert_eq!(get("/healthz").await.status, StatusCode::OK);
    let ready = get("/readyz").await;
    assert_eq!(
        (ready.status, ready.body["status"].as_str()),
        (StatusCode::OK, Some("ready"))
    );

    let doc = get("/openapi.json").await;
    assert_eq!(doc.status, StatusCode::OK);
    assert!(
        doc.body["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3."))
    );
    let paths = doc.body["paths"].as_object().expect("paths");
    for route in api::routes::table() {
        let op = &paths[route.path][route.method];
        assert!(
            op.is_object(),
            "{} {} is documented",
            route.method,
            route.path
        );
        assert_eq!(
            op["security"].is_array(),
            route.auth,
            "{} {}",
            route.method,
            route.path
        );
    }
    assert!(paths["/v1/matches/{id}/moves"]["post"]["requestBody"].is_object());

    let docs = app.send(app.http.get(format!("{}/docs", app.base))).await;
    assert_eq!(docs.status, StatusCode::OK);
    let page = app
        .http
        .get(format!("{}/docs", app.base))
        .send()
        .await
        .expect("docs")
        .text()
        .await
        .expect("html");
    assert!(page.contains("/v1/matches/{id}/moves"));
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "nothing loads from elsewhere"
    );
}

/// A client draws a game's board and names its moves from the catalogue alone: each game's
/// `board` and `notation` are the domain's, in both languages, and the OpenAPI document
/// describes them.
#[tokio::test]
async fn the_catalogue_gives_each_games_board_and_notation_as_the_domain_has_them() {
    let app = spawn_app().await;
    for lang in ["en", "pt"] {
        let catalogue = crate::catalogue_limits::catalogue(&app, lang).await;
        let games = catalogue["games"].as_array().expect("games");
        assert_eq!(games.len(), GameId::ALL.len(), "{lang}");
        for (entry, game) in games.iter().zip(GameId::ALL) {
            assert_eq!(entry["id"], game.as_str(), "{lang}");
            let board = game.board();
            assert_eq!(
                entry["board"],
                json!({"rows": board.rows, "columns": board.columns}),
                "{lang} {game}"
            );
            assert_eq!(
                entry["notation"],
                serde_json::to_value(game.notation()).expect("a notation"),
                "{lang} {game}"
            );
        }
        // As the notations write them: Four in a Row's moves are columns 1–7 of a 6 × 7 board,
        // Reversi's squares a1–h8 of an 8 × 8 one.
        let shape = |i: usize| (&games[i]["board"], games[i]["notation"].as_str());
        assert_eq!(
            shape(0),
            (&json!({"rows": 6, "columns": 7}), Some("column"))
        );
        assert_eq!(
            shape(1),
            (&json!({"rows": 8, "columns": 8}), Some("square"))
        );
    }

    let doc = app
        .send(app.http.get(format!("{}/openapi.json", app.base)))
        .await
        .body;
    let schemas = &doc["components"]["schemas"];
    // A schema, its `$ref` followed (also when wrapped in `allOf` to carry a description).
    let resolve = |schema: &Value| -> Value {
        let reference = schema["$ref"]
            .as_str()
            .or_else(|| schema["allOf"][0]["$ref"].as_str());
        match reference {
            Some(r) => schemas[r.trim_start_matches("#/components/schemas/")].clone(),
            None => schema.clone(),
        }
    };
    let entry = &schemas["GameEntry"];
    let required: Vec<&str> = entry["required"]
        .as_array()
        .expect("required fields")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        required.contains(&"board") && required.contains(&"notation"),
        "{entry}"
    );
    let board = resolve(&entry["properties"]["board"]);
    for field in ["rows", "columns"] {
        assert_eq!(board["properties"][field]["type"], "integer", "{board}");
    }
    let notation = resolve(&entry["properties"]["notation"]);
    let mut names: Vec<&str> = notation["enum"]
        .as_array()
        .map(|values| values.iter().filter_map(Value::as_str).collect())
        .or_else(|| {
            notation["oneOf"].as_array().map(|variants| {
                variants
                    .iter()
                    .flat_map(|v| v["enum"].as_array().into_iter().flatten())
                    .filter_map(Value::as_str)
                    .collect()
            })
        })
        .unwrap_or_default();
    names.sort_unstable();
    assert_eq!(names, ["column", "square"], "{notation}");
}

#[tokio::test]
async fn a_known_path_with_another_method_gets_405_with_allow_and_an_unknown_one_404() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let call = |method: reqwest::Method, path: &str| {
        app.send(
            app.http
                .request(method, format!("{}{path}", app.base))
                .bearer_auth(&ada.token),
        )
    };
    for (method, path, allow) in [
        (reqwest::Method::PUT, "/v1/matches/abc/moves", "POST"),
        (reqwest::Method::DELETE, "/v1/matches/abc", "GET"),
        (reqwest::Method::PATCH, "/v1/queue/abc", "GET, DELETE"),
        (reqwest::Method::POST, "/healthz", "GET"),
        (reqwest::Method::GET, "/v1/players", "POST"),
    ] {
        let res = call(method.clone(), path).await;
        assert_eq!(
            res.status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}: {:?}",
            res.body
        );
        assert_eq!(res.code(), "method_not_allowed");
        assert_eq!(res.headers["allow"], allow, "{method} {path}");
    }
    for path in ["/v1/nothing", "/v1/matches/abc/nothing", "/healthz/more"] {
        let res = call(reqwest::Method::GET, path).await;
        assert_eq!(res.status, StatusCode::NOT_FOUND, "{path}: {:?}", res.body);
        assert_eq!(res.code(), "not_found");
    }
}

#[tokio::test]
async fn the_document_offers_an_idempotency_key_only_where_it_is_honoured() {
    let app = spawn_app().await;
    let doc = app
        .send(app.http.get(format!("{}/openapi.json", app.base)))
        .await;
    let takes_key = |method: &str, path: &str| {
        doc.body["paths"][path][method]["parameters"]
            .as_array()
            .is_some_and(|ps| ps.iter().any(|p| p["name"] == "Idempotency-Key"))
    };
    let table = api::routes::table();
    for (method, path) in api::routes::KEYED {
        assert!(
            table.iter().any(|r| r.method == method && r.path == path),
            "{method} {path} is a route"
        );
    }
    // A route honours a key when its handler, or a function of its module that it calls, goes
    // through `idempotency::`; the document offers the key on exactly those.
    let (mut honoured, mut wrong) = (0, Vec::new());
    for route in &table {
        let (module, name) = route
            .handler
            .split_once("::")
            .unwrap_or(("mod", route.handler));
        let keyed = handler_goes_through(module, name, "idempotency::");
        let listed = api::routes::KEYED.contains(&(route.method, route.path));
        let offered = takes_key(route.method, route.path);
        if keyed != listed || keyed != offered {
            wrong.push(format!(
                "{} {}: honoured {keyed}, in KEYED {listed}, offered {offered}",
                route.method, route.path
            ));
        }
        honoured += usize::from(keyed);
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(honoured >= 25, "{honoured} routes honour a key");
}

/// Whether handler `name` of `api/src/routes/{module}.rs`, or a function of that file it calls
/// (however deep), names `what` in its code (comments and strings left out).
fn handler_goes_through(module: &str, name: &str, what: &str) -> bool {
    let file = crate::ownership::root()
        .join("api/src/routes")
        .join(format!("{module}.rs"));
    let source = std::fs::read_to_string(file).expect("the routes' source");
    // Each function of the file, by name: its code up to the next function.
    let mut functions: Vec<(String, String)> = Vec::new();
    for line in crate::modules::code_only(&source).lines() {
        let code = line.trim_start();
        let head = ["pub async fn ", "async fn ", "pub fn ", "fn "]
            .iter()
            .find_map(|start| code.strip_prefix(start));
        match (head, functions.last_mut()) {
            (Some(rest), _) => {
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                functions.push((rest[..end].to_owned(), String::new()));
            }
            (None, Some((_, body))) => {
                body.push_str(code);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    let mut seen = vec![name.to_owned()];
    let mut next = vec![name.to_owned()];
    while let Some(f) = next.pop() {
        for (_, body) in functions.iter().filter(|(g, _)| *g == f) {
            if body.contains(what) {
                return true;
            }
            for (callee, _) in &functions {
                if !seen.contains(callee) && body.contains(&format!("{callee}(")) {
                    seen.push(callee.clone());
                    next.push(callee.clone());
                }
            }
        }
    }
    false
}

#[tokio::test]
async fn the_document_types_every_parameter_and_answer_and_links_created_resources() {
    let app = spawn_app().await;
    let doc = app
        .send(app.http.get(format!("{}/openapi.json", app.base)))
        .await
        .body;
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    // Every reference points at a schema of the document.
    let text = doc.to_string();
    for part in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
        let name = &part[..part.find('"').expect("closing quote")];
        assert!(schemas.contains_key(name), "dangling $ref to {name}");
    }
    for route in api::routes::table() {
        let op = &doc["paths"][route.path][route.method];
        let what = format!("{} {}", route.method, route.path);
        let success = &op["responses"][route.status.to_string()]["content"];
        let (media, body) = success
            .as_object()
            .and_then(|c| c.iter().next())
            .unwrap_or_else(|| panic!("{what}: no success content"));
        assert!(
            body["schema"].is_object() && body["schema"] != serde_json::json!({}),
            "{what}: an answer without a schema"
        );
        let expected = match route.path {
            "/docs" => "text/html",
            "/metrics" => "text/plain; version=0.0.4",
            // Every stream, and only a stream, is a path that ends in /stream.
            p if p.ends_with("/stream") => "text/event-stream",
            _ => "application/json",
        };
        assert_eq!(media, expected, "{what}");
        for p in op["parameters"].as_array().into_iter().flatten() {
            if p["in"] == "path" {
                let s = match p["schema"]["$ref"].as_str() {
                    Some(r) => &schemas[r.trim_start_matches("#/components/schemas/")],
                    None => &p["schema"],
                };
                assert!(
                    s["format"].is_string() || s["enum"].is_array() || s["pattern"].is_string(),
                    "{what}: path parameter {} is a bare string",
                    p["name"]
                );
            }
        }
    }
    // The match a solo game creates is reachable by its routes, so a fuzzer can play it.
    let links = &doc["paths"]["/v1/matches"]["post"]["responses"]["201"]["links"];
    let moves = &links["playMove"];
    assert_eq!(moves["operationId"], "playMove");
    assert_eq!(moves["parameters"]["id"], "$response.body#/match_id");
    assert!(doc["paths"]["/v1/matches/{id}/moves"]["post"]["operationId"] == "playMove");
    // Headers: the request id and the language on every call, Retry-After on limits and outages.
    let moves = &doc["paths"]["/v1/matches/{id}/moves"]["post"];
    let headers: Vec<&str> = moves["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .filter(|p| p["in"] == "header")
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(
        headers,
        ["X-Request-Id", "Accept-Language", "Idempotency-Key"]
    );
    for status in ["429", "503"] {
        assert_eq!(
            moves["responses"][status]["headers"]["Retry-After"]["required"],
            true
        );
    }
    // The query string of a call is documented from the type its handler reads.
    let history = doc["paths"]["/v1/players/{id}/matches"]["get"]["parameters"]
        .as_array()
        .expect("parameters");
    let names: Vec<&str> = history.iter().filter_map(|p| p["name"].as_str()).collect();
    assert!(
        ["game", "limit", "before"]
            .iter()
            .all(|n| names.contains(n)),
        "{names:?}"
    );
}
