//! The OpenAPI 3.0 document served at `/openapi.json`: built from the route table, with the
//! request, query and response schemas generated from the Rust types the handlers read and
//! write (schemars), the path parameters' formats, and links from each created resource to its
//! routes.

use schemars::generate::{Contract, SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

use domain::games::GameId;
use domain::matches::Settings;

use super::{KEYED, RouteDoc, Tag, table};

/// Writes the schema of a type (a `$ref` for a named one, in a response generator).
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// `T`'s schema.
pub fn of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// What a route answers with on success.
pub enum Reply {
    /// `application/json`, of this type.
    Json(SchemaFn),
    /// A page (`text/html`).
    Html,
    /// Server-sent events (`text/event-stream`).
    EventStream,
    /// Prometheus' text format.
    Prometheus,
}

/// Schema transform of the bodies that pick a game and settings: legal moves can be hidden
/// only in the games that have that setting ([`Settings::can_hide_legal_moves`]: Reversi;
/// `show_legal_moves: false` with Four in a Row is refused).
pub fn legal_moves_hidden_where_the_game_allows(schema: &mut Schema) {
    let (hiding, showing): (Vec<GameId>, Vec<GameId>) = GameId::ALL
        .into_iter()
        .partition(|&g| Settings::can_hide_legal_moves(g));
    let ids = |games: Vec<GameId>| games.into_iter().map(GameId::as_str).collect::<Vec<_>>();
    schema.insert(
        "oneOf".into(),
        json!([
            {"properties": {"game": {"enum": ids(hiding)}}},
            {"properties": {"game": {"enum": ids(showing)},
                            "settings": {"properties": {"show_legal_moves": {"enum": [true]}}}}}
        ]),
    );
}

/// The schema of a path parameter, by its name in the route table.
fn path_parameter(name: &str) -> Value {
    match name {
        "id" | "room_id" | "ticket" | "job_id" => json!({"type": "string", "format": "uuid"}),
        "game" => json!({"type": "string", "enum": GameId::ALL.map(|g| g.as_str())}),
        "code" => json!({"type": "string", "pattern": "^[ABCDEFGHJKMNPQRSTUVWXYZ2-9]{6}$",
                         "description": "a room's invite code"}),
        "name" => json!({"type": "string",
            "enum": projections::Projection::ALL.map(projections::Projection::name)}),
        other => unreachable!("path parameter `{other}` has no schema"),
    }
}

/// Links from what a route creates to the routes of the created resource: (the parameter, where
/// the answer holds it, the routes' path prefix).
fn links_of(r: &RouteDoc) -> Option<(&'static str, &'static str, &'static str)> {
    match (r.method, r.path) {
        ("post", "/v1/players") => Some(("id", "player_id", "/v1/players/{id}")),
        ("post", "/v1/matches") | ("post", "/v1/rooms/{room_id}/matches") => {
            Some(("id", "match_id", "/v1/matches/{id}"))
        }
        ("post", "/v1/queue") => Some(("ticket", "ticket_id", "/v1/queue/{ticket}")),
        ("post", "/v1/rooms") => Some(("room_id", "room_id", "/v1/rooms/{room_id}")),
        ("post", "/v1/analysis/jobs") => Some(("job_id", "job_id", "/v1/analysis/jobs/{job_id}")),
        _ => None,
    }
}

/// The document.
pub fn document() -> Value {
    // Requests: everything inline (their schemas describe what is read: defaults optional).
    let mut requests = SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.contract = Contract::Deserialize;
        })
        .into_generator();
    // Responses: named types under components (what is written: every field present).
    let mut responses = SchemaSettings::openapi3()
        .with(|s| s.contract = Contract::Serialize)
        .into_generator();
    let routes = table();
    let mut paths = Map::new();
    for r in &routes {
        let mut op = Map::new();
        op.insert("operationId".into(), json!(r.operation_id));
        op.insert("tags".into(), json!([r.tag.name()]));
        op.insert("summary".into(), json!(r.summary));
        op.insert("responses".into(), responses_of(r, &routes, &mut responses));
        if r.auth {
            op.insert("security".into(), json!([{"bearer": []}]));
        }
        if let Some(body) = r.body {
            op.insert(
                "requestBody".into(),
                json!({"required": true, "content": {"application/json": {"schema": inline(body, &mut requests)}}}),
            );
        }
        op.insert(
            "parameters".into(),
            Value::Array(parameters_of(r, &mut requests)),
        );
        let entry = paths.entry(r.path.to_owned()).or_insert_with(|| json!({}));
        entry[r.method] = Value::Object(op);
    }
    let schemas = responses.take_definitions(true);
    let tags: Vec<Value> = Tag::ALL
        .iter()
        .map(|t| json!({"name": t.name(), "description": t.description()}))
        .collect();
    json!({
        "openapi": "3.0.3",
        "info": {"title": "discs", "version": env!("CARGO_PKG_VERSION"),
                 "description": "Event-sourced ranked matchmaking for Four in a Row and Reversi."},
        "tags": tags,
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
            "schemas": schemas,
        }
    })
}

/// A request-side schema written out whole, transforms applied, without its `$schema` key.
fn inline(f: SchemaFn, generator: &mut SchemaGenerator) -> Value {
    let mut schema = f(generator);
    for transform in generator.settings().transforms.clone().iter_mut() {
        transform.transform(&mut schema);
    }
    let mut value = schema.to_value();
    if let Some(o) = value.as_object_mut() {
        o.remove("$schema");
    }
    value
}

fn parameters_of(r: &RouteDoc, requests: &mut SchemaGenerator) -> Vec<Value> {
    let mut params = Vec::new();
    for name in r
        .path
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
    {
        params.push(
            json!({"name": name, "in": "path", "required": true, "schema": path_parameter(name)}),
        );
    }
    if let Some(query) = r.query {
        let schema = inline(query, requests);
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(props) = schema["properties"].as_object() {
            for (name, prop) in props {
                let mut prop = prop.clone();
                let description = prop.as_object_mut().and_then(|o| o.remove("description"));
                let mut p = json!({"name": name, "in": "query", "required": required.contains(&name.as_str()),
                                   "schema": prop});
                if let Some(d) = description {
                    p["description"] = d;
                }
                params.push(p);
            }
        }
    }
    params.push(json!({"name": "X-Request-Id", "in": "header", "required": false,
        "schema": {"type": "string"},
        "description": "The request's id in the server's logs and in problem documents, when 1 to 128 visible ASCII characters; otherwise the server makes one. Answered in X-Request-Id."}));
    params.push(json!({"name": "Accept-Language", "in": "header", "required": false,
        "schema": {"type": "string"},
        "description": "`pt` for Portuguese problem titles and details (and catalogue); English otherwise."}));
    if KEYED.contains(&(r.method, r.path)) {
        params.push(json!({"name": "Idempotency-Key", "in": "header", "required": false,
            "schema": {"type": "string", "pattern": "^[ \t]*[!-~]{1,200}[ \t]*$"},
            "description": "1 to 200 visible ASCII characters (HTTP drops surrounding blanks). A retry with the same key and body gets the first answer and writes nothing."}));
    }
    if r.path == "/v1/matches/{id}/stream" {
        params.push(
            json!({"name": "Last-Event-ID", "in": "header", "required": false,
            "schema": {"type": "string", "pattern": "^[0-9]{1,18}$"},
            "description": "The version of the last event received: the stream resumes after it."}),
        );
        params.push(
            json!({"name": "access_token", "in": "query", "required": false,
            "schema": {"type": "string"},
            "description": "The token, for clients that cannot set a header (EventSource)."}),
        );
    }
    params
}

fn responses_of(r: &RouteDoc, routes: &[RouteDoc], generator: &mut SchemaGenerator) -> Value {
    let content = match r.reply {
        Reply::Json(f) => json!({"application/json": {"schema": f(generator).to_value()}}),
        Reply::Html => json!({"text/html": {"schema": {"type": "string"}}}),
        Reply::EventStream => json!({"text/event-stream": {"schema": {"type": "object",
            "description": "Each event: `id` the match version, `event` the event type, `data` `{\"event\": <event>, \"match\": <match view>}`.",
            "properties": {"id": {"type": "string"}, "event": {"type": "string"}, "data": {"type": "string"},
                           "retry": {"type": "string"}}}}}),
        Reply::Prometheus => {
            json!({"text/plain; version=0.0.4": {"schema": {"type": "string"}}})
        }
    };
    let request_id = json!({"X-Request-Id": {"description": "The request's id (the client's, or a fresh one).",
        "schema": {"type": "string"}}});
    let mut success = json!({"description": "success", "content": content, "headers": request_id});
    if let Some((param, field, prefix)) = links_of(r) {
        let mut links = Map::new();
        for target in routes
            .iter()
            .filter(|t| t.path.starts_with(prefix) && t.path[prefix.len()..].find('{').is_none())
        {
            links.insert(
                target.operation_id.into(),
                json!({"operationId": target.operation_id,
                       "parameters": {param: format!("$response.body#/{field}")}}),
            );
        }
        if r.path == "/v1/rooms" {
            let join = routes
                .iter()
                .find(|t| t.path == "/v1/rooms/{code}/join")
                .expect("the route that joins a room");
            links.insert(
                join.operation_id.into(),
                json!({"operationId": join.operation_id,
                       "parameters": {"code": "$response.body#/code"}}),
            );
        }
        success["links"] = Value::Object(links);
    }
    let mut responses = Map::new();
    responses.insert(r.status.to_string(), success);
    if r.path == "/readyz" {
        responses.insert(
            "503".into(),
            json!({"description": "not ready", "content": {"application/json": {"schema": of::<super::health::Readiness>(generator).to_value()}}}),
        );
    }
    let problem = json!({"application/problem+json": {"schema": of::<crate::error::Problem>(generator).to_value()}});
    let retry = json!({"Retry-After": {"required": true, "description": "Seconds to wait before trying again.",
        "schema": {"type": "integer", "minimum": 0}}, "X-Request-Id": request_id["X-Request-Id"]});
    if r.path != "/healthz" && r.path != "/readyz" {
        responses.insert(
            "429".into(),
            json!({"description": "a limit was reached (`rate_limited` and the other limits of SPEC §7)",
                   "content": problem, "headers": retry}),
        );
        responses.insert(
            "503".into(),
            json!({"description": "`unavailable`: the database does not answer; a command with an Idempotency-Key is safe to retry",
                   "content": problem, "headers": retry}),
        );
    }
    responses.insert(
        "default".into(),
        json!({"description": "an error", "content": problem, "headers": request_id}),
    );
    Value::Object(responses)
}

/// A self-contained page (no CDN) that lists the document's operations.
pub fn docs_page() -> String {
    let mut rows = String::new();
    for r in table() {
        rows.push_str(&format!(
            "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
            r.method.to_uppercase(),
            html_escape(r.path),
            html_escape(r.summary),
            if r.auth { "bearer" } else { "none" },
        ));
    }
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>discs API</title>\
         <style>body{{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}}\
         td{{padding:.3rem .6rem;border-bottom:1px solid #ddd;vertical-align:top}}</style></head>\
         <body><h1>discs API</h1><p>The machine-readable document is at \
         <a href=\"/openapi.json\">/openapi.json</a>. Errors are <code>application/problem+json</code> \
         with a stable <code>code</code>.</p><table><tr><th>method</th><th>path</th><th>what</th>\
         <th>auth</th></tr>{rows}</table></body></html>"
    )
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
