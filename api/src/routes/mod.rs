//! The route table: every route is declared once, and that one declaration both registers the
//! handler and describes it in the OpenAPI document served at `/openapi.json`.

use actix_web::dev::ResourceDef;
use actix_web::{HttpResponse, web};
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::ratelimit::ByAddress;

pub mod admin;
pub mod analysis;
pub mod games;
pub mod health;
pub mod leaderboards;
pub mod matches;
pub mod players;
pub mod queue;
pub mod rooms;
pub mod stream;

/// One documented route.
pub struct RouteDoc {
    pub method: &'static str,
    pub path: &'static str,
    pub summary: &'static str,
    pub auth: bool,
    /// JSON schema of the body, if the call takes one.
    pub body: Option<fn() -> Value>,
    /// The success status.
    pub status: u16,
}

macro_rules! routes {
    ($( $method:ident $path:literal => $handler:path, $status:literal, auth = $auth:literal, body = $body:expr, $summary:literal; )*) => {
        /// Registers every route of the table, grouped by [`Routes`].
        pub fn configure(cfg: &mut web::ServiceConfig) {
            let mut routes = Routes::default();
            $( routes.add(stringify!($method), $path, web::$method().to($handler)); )*
            routes.register(cfg);
        }

        /// The table, for the OpenAPI document.
        pub fn table() -> Vec<RouteDoc> {
            vec![$( RouteDoc {
                method: stringify!($method),
                path: $path,
                summary: $summary,
                auth: $auth,
                body: $body,
                status: $status,
            }, )*]
        }
    };
}

/// A route of a group: the rest of its path after the group's prefix, its method, its route.
type Declared = (&'static str, &'static str, actix_web::Route);

/// Routes grouped by the static part of their path before the first `{parameter}`: each group
/// is a scope whose prefix is matched by comparing strings, so a request runs the patterns (regular
/// expressions) of its own group only, not of every route registered before its own.
#[derive(Default)]
struct Routes {
    /// The groups (prefix and routes), in the order their first route was declared.
    groups: Vec<(&'static str, Vec<Declared>)>,
}

impl Routes {
    fn add(&mut self, method: &'static str, path: &'static str, route: actix_web::Route) {
        let prefix = prefix_of(path);
        let rest = &path[prefix.len()..];
        let method = method_name(method);
        match self.groups.iter_mut().find(|(p, _)| *p == prefix) {
            Some((_, routes)) => routes.push((rest, method, route)),
            None => self.groups.push((prefix, vec![(rest, method, route)])),
        }
    }

    fn register(self, cfg: &mut web::ServiceConfig) {
        for (prefix, routes) in self.groups {
            let mut scope = web::scope(prefix);
            let mut patterns: Vec<(ResourceDef, &'static str)> = Vec::new();
            for (rest, method, route) in routes {
                patterns.push((ResourceDef::new(rest), method));
                scope = scope.route(rest, route);
            }
            let patterns = std::sync::Arc::new(patterns);
            scope = scope.default_service(web::to(move |req: actix_web::HttpRequest| {
                let patterns = patterns.clone();
                async move { Err::<HttpResponse, ApiError>(unmatched(&req, &patterns)) }
            }));
            cfg.service(scope);
        }
    }
}

/// Why a request of a group's prefix matched none of its routes: 405 with the methods its path
/// takes, or 404 when no route has its path.
fn unmatched(req: &actix_web::HttpRequest, patterns: &[(ResourceDef, &'static str)]) -> ApiError {
    let rest = req.match_info().unprocessed();
    let mut allowed: Vec<&'static str> = patterns
        .iter()
        .filter(|(def, _)| def.is_match(rest))
        .map(|(_, method)| *method)
        .collect();
    allowed.dedup();
    if allowed.is_empty() {
        ApiError::NoRoute
    } else {
        ApiError::MethodNotAllowed(allowed)
    }
}

/// The HTTP name of a route table method (`get` → `GET`).
fn method_name(method: &str) -> &'static str {
    match method {
        "get" => "GET",
        "post" => "POST",
        "put" => "PUT",
        "patch" => "PATCH",
        "delete" => "DELETE",
        _ => "OPTIONS",
    }
}

/// The part of `path` before its first `/{parameter}` segment (the whole path if it has none).
fn prefix_of(path: &str) -> &str {
    path.find("/{").map_or(path, |i| &path[..i])
}

fn no_body() -> Option<fn() -> Value> {
    None
}

routes! {
    get "/healthz" => health::healthz, 200, auth = false, body = no_body(), "The process answers.";
    get "/readyz" => health::readyz, 200, auth = false, body = no_body(), "The database answers and every migration is applied.";
    get "/v1/games" => games::list, 200, auth = false, body = no_body(), "The games, their rules, settings and CPU levels (English or Portuguese by Accept-Language).";
    post "/v1/players" => players::create, 201, auth = false, body = Some(schemas::new_player), "Create a player by name; returns the device's token. With an Idempotency-Key (random: it is the retry's only proof), a retry finds the player its first attempt created and gets a fresh token for it.";
    post "/v1/tokens/refresh" => players::refresh, 200, auth = true, body = no_body(), "Trade a valid token for a fresh one.";
    get "/v1/players/{id}" => players::get, 200, auth = true, body = no_body(), "A player's name and ratings.";
    get "/v1/players/{id}/matches" => players::matches, 200, auth = true, body = no_body(), "A player's finished matches, newest first (?game&limit&before=RFC 3339), with ratings before and after for ranked ones.";
    get "/v1/players/{id}/ratings/{game}" => players::rating_history, 200, auth = true, body = no_body(), "A player's rating after each ranked match of a game, oldest first.";
    get "/v1/leaderboards/{game}" => leaderboards::get, 200, auth = true, body = no_body(), "The non-provisional players of a game by rating (?limit, default 50, at most 500).";
    post "/v1/queue" => queue::open, 201, auth = true, body = Some(schemas::new_ticket), "Queue for a ranked match in a pool (game, turn_seconds); one open ticket per player.";
    get "/v1/queue/{ticket}" => queue::get, 200, auth = true, body = no_body(), "Your ticket: waiting, matched (with its match_id) or cancelled.";
    delete "/v1/queue/{ticket}" => queue::cancel, 200, auth = true, body = no_body(), "Cancel your waiting ticket (ticket_closed once matched or cancelled).";
    post "/v1/rooms" => rooms::create, 201, auth = true, body = Some(schemas::new_room), "Open a room with settings; returns its invite code.";
    get "/v1/rooms/{room_id}" => rooms::get, 200, auth = true, body = no_body(), "A room (members only).";
    patch "/v1/rooms/{room_id}" => rooms::patch, 200, auth = true, body = Some(schemas::room_patch), "Change a room's settings between matches.";
    post "/v1/rooms/{code}/join" => rooms::join, 200, auth = true, body = no_body(), "Join a room by its invite code (two members at most).";
    post "/v1/rooms/{room_id}/matches" => rooms::start, 201, auth = true, body = Some(schemas::room_start), "Start a match or a rematch in a room; alone, against the CPU.";
    post "/v1/matches" => matches::create_solo, 201, auth = true, body = Some(schemas::new_solo), "Start a solo match against the CPU.";
    get "/v1/matches/{id}" => matches::get, 200, auth = true, body = no_body(), "The match view.";
    post "/v1/matches/{id}/moves" => matches::post_move, 200, auth = true, body = Some(schemas::new_move), "Play a move; answers with the view right after it (the CPU's reply follows).";
    post "/v1/matches/{id}/leave" => matches::leave, 200, auth = true, body = Some(schemas::version_only), "Leave the match (the CPU plays for you after return_seconds).";
    post "/v1/matches/{id}/return" => matches::return_, 200, auth = true, body = Some(schemas::version_only), "Come back to your seat.";
    post "/v1/matches/{id}/resign" => matches::resign, 200, auth = true, body = Some(schemas::version_only), "Resign: the opponent wins.";
    post "/v1/matches/{id}/heartbeat" => matches::heartbeat, 200, auth = true, body = no_body(), "Say you are here (writes no event).";
    get "/v1/matches/{id}/events" => matches::events, 200, auth = true, body = no_body(), "Every event of the match.";
    get "/v1/matches/{id}/replay" => matches::replay, 200, auth = true, body = no_body(), "The match ply by ply (?ply=n for one).";
    get "/v1/matches/{id}/analysis" => analysis::of_match, 200, auth = true, body = no_body(), "A finished match ply by ply: each move's score before and after it for the mover, the best moves, whether exact (?budget_ms, default 5000, at most 30000; 409 conflict while the match is active).";
    post "/v1/analysis" => analysis::position, 200, auth = true, body = Some(schemas::analysis), "The score and every best move of a position given by moves or by board and side (?budget_ms, default 2000, at most 30000); changes nothing, so takes no Idempotency-Key.";
    get "/v1/matches/{id}/stream" => stream::stream, 200, auth = true, body = no_body(), "Server-sent events: each new event with the match view; resumable with Last-Event-ID; ?access_token= accepted.";
    get "/v1/admin/audits/ratings" => admin::audit_ratings, 200, auth = true, body = no_body(), "Admin: recompute every rating from the log and diff it against the projection; verify every hash chain; ?game&exclude_players=id,id for a what-if.";
    get "/v1/admin/players/{id}/ratings/{game}/explain" => admin::explain, 200, auth = true, body = no_body(), "Admin: a player's rating step by step, each with its match and event positions, and log_check: whether the ratings recomputed from the log give the same steps (else the first diverging match).";
    get "/v1/admin/flags" => admin::flags, 200, auth = true, body = no_body(), "Admin: suspicious patterns (repeated pairs with alternating results, very short lost games) and the thresholds used.";
    get "/v1/admin/queue/stats" => admin::queue_stats, 200, auth = true, body = no_body(), "Admin: per pool, waiting tickets, wait and rating-gap percentiles, repeat-pair rate, waves run; and the allowed-gap schedule.";
    post "/v1/admin/projections/{name}/rebuild" => admin::start_rebuild, 202, auth = true, body = no_body(), "Admin: rebuild a projection (ratings, history, leaderboards, queue) beside the live one and switch when caught up.";
    get "/v1/admin/projections/{name}" => admin::get_projection, 200, auth = true, body = no_body(), "Admin: a projection's checkpoint and its latest rebuild's progress.";
    get "/metrics" => admin::prometheus, 200, auth = false, body = no_body(), "Prometheus metrics: pool statistics, waves, projection positions.";
    get "/openapi.json" => openapi, 200, auth = false, body = no_body(), "This document.";
    get "/docs" => docs, 200, auth = false, body = no_body(), "A readable page of this document (works offline).";
}

/// Request body schemas, in JSON Schema.
mod schemas {
    use serde_json::{Value, json};

    fn settings() -> Value {
        json!({"type": "object", "additionalProperties": false, "properties": {
            "turn_seconds": {"type": ["integer", "null"], "enum": [null, 30, 60]},
            "alternate_first": {"type": "boolean"},
            "first": {"type": "string", "enum": ["seat1", "seat2", "random"]},
            "show_legal_moves": {"type": "boolean"}
        }})
    }

    fn game() -> Value {
        json!({"type": "string", "enum": ["four_in_a_row", "reversi"]})
    }

    pub fn new_player() -> Value {
        json!({"type": "object", "required": ["name"], "additionalProperties": false,
               "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 32}}})
    }

    pub fn new_room() -> Value {
        json!({"type": "object", "required": ["game"], "additionalProperties": false,
               "properties": {"game": game(), "settings": settings()}})
    }

    pub fn room_patch() -> Value {
        json!({"type": "object", "required": ["settings"], "additionalProperties": false,
               "properties": {"settings": settings()}})
    }

    pub fn room_start() -> Value {
        json!({"type": "object", "additionalProperties": false,
               "properties": {"cpu_level": {"type": "integer", "minimum": 1, "maximum": 5}}})
    }

    pub fn new_solo() -> Value {
        json!({"type": "object", "required": ["game"], "additionalProperties": false, "properties": {
            "game": game(),
            "cpu_level": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
            "settings": settings(),
            "first": {"type": "string", "enum": ["me", "cpu"], "default": "me"}
        }})
    }

    pub fn new_move() -> Value {
        json!({"type": "object", "required": ["move"], "additionalProperties": false, "properties": {
            "move": {"type": "string", "description": "\"1\"..\"7\" (Four in a Row) or \"a1\"..\"h8\" (Reversi); upper case accepted"},
            "expected_version": {"type": "integer", "minimum": 0}
        }})
    }

    pub fn new_ticket() -> Value {
        json!({"type": "object", "required": ["game"], "additionalProperties": false, "properties": {
            "game": game(),
            "turn_seconds": {"type": ["integer", "null"], "enum": [null, 30, 60], "default": null}
        }})
    }

    pub fn analysis() -> Value {
        json!({"type": "object", "required": ["game"], "additionalProperties": false,
               "description": "Either `moves`, or `board` and `side`.", "properties": {
            "game": game(),
            "moves": {"type": "string", "description": "the game so far, passes omitted (\"4453\", \"f5d6c3\")"},
            "board": {"type": "array", "items": {"type": "string"},
                      "description": "rows as in the match view: 6 of 7 cells top row first (Four in a Row), 8 of 8 row 1 first (Reversi)"},
            "side": {"type": "string", "enum": ["R", "Y", "B", "W"], "description": "the colour to move"}
        }})
    }

    pub fn version_only() -> Value {
        json!({"type": "object", "additionalProperties": false,
               "properties": {"expected_version": {"type": "integer", "minimum": 0}}})
    }
}

/// The routes that honour an `Idempotency-Key` (their handlers go through
/// `idempotency::command*`, or the sign-up's own keyed path): the only ones the document
/// offers it on.
pub const KEYED: [(&str, &str); 11] = [
    ("post", "/v1/players"),
    ("post", "/v1/queue"),
    ("post", "/v1/rooms"),
    ("patch", "/v1/rooms/{room_id}"),
    ("post", "/v1/rooms/{code}/join"),
    ("post", "/v1/rooms/{room_id}/matches"),
    ("post", "/v1/matches"),
    ("post", "/v1/matches/{id}/moves"),
    ("post", "/v1/matches/{id}/leave"),
    ("post", "/v1/matches/{id}/return"),
    ("post", "/v1/matches/{id}/resign"),
];

/// The OpenAPI 3 document, built from the route table.
pub fn openapi_document() -> Value {
    let mut paths = serde_json::Map::new();
    for r in table() {
        let mut op = json!({
            "summary": r.summary,
            "responses": {
                r.status.to_string(): {"description": "success", "content": {"application/json": {}}},
                "default": {"description": "an error", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
            }
        });
        if r.auth {
            op["security"] = json!([{"bearer": []}]);
        }
        if let Some(schema) = r.body {
            op["requestBody"] =
                json!({"required": true, "content": {"application/json": {"schema": schema()}}});
        }
        if KEYED.contains(&(r.method, r.path)) {
            op["parameters"] = json!([{"name": "Idempotency-Key", "in": "header", "required": false,
                "schema": {"type": "string", "maxLength": 200},
                "description": "A retry with the same key and body gets the first answer and writes nothing."}]);
        }
        let params: Vec<Value> = r
            .path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
            .collect();
        if !params.is_empty() {
            let existing = op
                .get("parameters")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            op["parameters"] = Value::Array(existing.into_iter().chain(params).collect());
        }
        let entry = paths.entry(r.path.to_owned()).or_insert_with(|| json!({}));
        entry[r.method] = op;
    }
    json!({
        "openapi": "3.0.3",
        "info": {"title": "discs", "version": env!("CARGO_PKG_VERSION"),
                 "description": "Event-sourced ranked matchmaking for Four in a Row and Reversi."},
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
            "schemas": {"Problem": {"type": "object", "required": ["type", "title", "status", "detail", "code"], "properties": {
                "type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"},
                "detail": {"type": "string"}, "code": {"type": "string"}}}}
        }
    })
}

async fn openapi(_: ByAddress) -> HttpResponse {
    HttpResponse::Ok().json(openapi_document())
}

/// A self-contained page (no CDN) that lists the document's operations.
async fn docs(_: ByAddress) -> HttpResponse {
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
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>discs API</title>\
         <style>body{{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}}\
         td{{padding:.3rem .6rem;border-bottom:1px solid #ddd;vertical-align:top}}</style></head>\
         <body><h1>discs API</h1><p>The machine-readable document is at \
         <a href=\"/openapi.json\">/openapi.json</a>. Errors are <code>application/problem+json</code> \
         with a stable <code>code</code>.</p><table><tr><th>method</th><th>path</th><th>what</th>\
         <th>auth</th></tr>{rows}</table></body></html>"
    );
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(page)
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_is_grouped_by_its_path_before_the_first_parameter() {
        assert_eq!(prefix_of("/v1/matches/{id}/moves"), "/v1/matches");
        assert_eq!(prefix_of("/v1/matches"), "/v1/matches");
        assert_eq!(prefix_of("/healthz"), "/healthz");
        assert_eq!(
            prefix_of("/v1/admin/players/{id}/ratings/{game}/explain"),
            "/v1/admin/players"
        );
    }
}
