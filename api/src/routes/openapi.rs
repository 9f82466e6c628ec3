//! The OpenAPI 3.0 document served at `/openapi.json`: built from the route table (each
//! operation's id and tag), with the request, query and response schemas generated from the
//! Rust types the handlers read and write (schemars), the path parameters' formats, and links
//! from each created resource to its routes.
//!
//! Written for client generators as well as for validators: bodies and answers are named
//! schemas under `components` (a type read in another shape than it is written gets the suffix
//! `Input`), a body that comes in several forms is a `oneOf` of named forms, an internally
//! tagged enum's variants are named and discriminated, a nullable reference is `anyOf` the
//! reference and `null`, and rules that a type cannot state (a game that cannot hide its legal
//! moves) are `not`s, which validators apply and generators leave out. `.ci/client` generates
//! a Python and a TypeScript client from the served document and plays with the Python one.

use schemars::generate::{Contract, SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

use domain::games::GameId;
use domain::matches::Settings;

use super::{KEYED, RouteDoc, Tag, table};

/// Writes the schema of a type: a `$ref` to it under `components/schemas` for a named one.
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// `T`'s schema, named: request bodies and answers are `$ref`s, so that generated clients name
/// their types after ours (`PlayMoveRequest`, `MatchView`).
pub fn of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// `T`'s own schema written out: a query string's struct, each of whose fields is a parameter.
pub fn fields<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    T::json_schema(generator)
}

/// A body that comes in several forms, each a subset of `T`'s fields: `T`'s name becomes a
/// `oneOf` of one named schema per form (name, description, fields), each field required and
/// not null, nothing else allowed. `T` reads them all (its handler tells them apart); the
/// document gives clients one type per form rather than one type whose valid combinations only
/// a validator knows.
pub fn one_of_forms<T: JsonSchema>(
    generator: &mut SchemaGenerator,
    forms: &[(&str, &str, &[&str])],
) -> Schema {
    let name = T::schema_name().into_owned();
    if !generator.definitions().contains_key(&name) {
        let whole = T::json_schema(generator).to_value();
        let mut variants = Vec::new();
        for (form, description, form_fields) in forms {
            let mut properties = Map::new();
            for field in *form_fields {
                let mut property = whole["properties"][field].clone();
                assert!(property.is_object(), "{name} has no field {field}");
                not_null(&mut property);
                properties.insert((*field).to_owned(), property);
            }
            assert!(
                !generator.definitions().contains_key(*form),
                "{form} is taken"
            );
            generator.definitions_mut().insert(
                (*form).to_owned(),
                json!({"type": "object", "description": description, "properties": properties,
                       "required": form_fields, "additionalProperties": false}),
            );
            variants.push(reference(form));
        }
        let mut union = json!({"oneOf": variants});
        if let Some(description) = whole.get("description") {
            union["description"] = description.clone();
        }
        generator.definitions_mut().insert(name.clone(), union);
    }
    Schema::try_from(reference(&name)).expect("a reference is a schema")
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
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

/// An OpenAPI 3.0 document: the answer of `/openapi.json`.
#[derive(JsonSchema)]
#[allow(dead_code)] // only its schema is used
pub struct OpenApiDocument(Map<String, Value>);

/// Schema transform of the bodies that pick a game and settings: legal moves can be hidden
/// only in the games that have that setting ([`Settings::can_hide_legal_moves`]: Reversi;
/// `show_legal_moves: false` with Four in a Row is refused). A `not`, which validators apply and
/// client generators leave out: the body stays one type, and the refusal is a 422 like any other.
pub fn legal_moves_hidden_where_the_game_allows(schema: &mut Schema) {
    let showing: Vec<&str> = GameId::ALL
        .into_iter()
        .filter(|&g| !Settings::can_hide_legal_moves(g))
        .map(GameId::as_str)
        .collect();
    schema.insert(
        "not".into(),
        json!({"required": ["game", "settings"],
               "properties": {"game": {"enum": showing},
                              "settings": {"required": ["show_legal_moves"],
                                           "properties": {"show_legal_moves": {"enum": [false]}}}}}),
    );
}

/// The schema of a path parameter, by its name in the route table.
fn path_parameter(name: &str, generator: &mut SchemaGenerator) -> Value {
    match name {
        "id" | "room_id" | "ticket" | "job_id" => json!({"type": "string", "format": "uuid"}),
        "game" => of::<GameId>(generator).to_value(),
        "code" => json!({"type": "string", "pattern": "^[ABCDEFGHJKMNPQRSTUVWXYZ2-9]{6}$",
                         "description": "a room's invite code"}),
        "name" => reference(PROJECTION_NAME),
        "seq" => {
            json!({"type": "integer", "format": "int64", "minimum": 1, "maximum": 9_007_199_254_740_991u64,
                        "description": "a checkpoint's number"})
        }
        other => unreachable!("path parameter `{other}` has no schema"),
    }
}

/// The schema of `{name}` in the projections' routes, which no Rust type reads.
const PROJECTION_NAME: &str = "ProjectionName";

fn projection_name() -> Value {
    json!({"type": "string", "description": "A projection (read model) built from the log.",
           "enum": service::audits::Projection::ALL.map(service::audits::Projection::name)})
}

/// The schema of an event of the match stream, which no Rust type writes as JSON.
const STREAM_EVENT: &str = "MatchStreamEvent";

fn stream_event() -> Value {
    json!({"type": "object",
           "description": "Each event: `id` the match version, `event` the event type, `data` `{\"event\": <event>, \"match\": <match view>}`; the last, when the player's rights end, `event: ended` with `data` `{\"reason\": \"revoked\" | \"banned\"}` (no id).",
           "properties": {"id": {"type": "string"}, "event": {"type": "string"}, "data": {"type": "string"},
                          "retry": {"type": "string"}}})
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
    // Requests: what is read (fields with defaults optional), bodies named.
    let mut requests = SchemaSettings::openapi3()
        .with(|s| s.contract = Contract::Deserialize)
        .into_generator();
    // Responses: what is written (every field present).
    let mut responses = SchemaSettings::openapi3()
        .with(|s| s.contract = Contract::Serialize)
        .into_generator();
    let routes = table();
    // The request side first: a type read in another shape than it is written (the settings,
    // whose keys may be left out) is renamed once both sides are known.
    let mut bodies: Vec<Option<Value>> = routes
        .iter()
        .map(|r| r.body.map(|f| f(&mut requests).to_value()))
        .collect();
    let mut parameters: Vec<Value> = routes
        .iter()
        .map(|r| Value::Array(parameters_of(r, &mut requests)))
        .collect();
    let answers: Vec<Value> = routes
        .iter()
        .map(|r| responses_of(r, &routes, &mut responses))
        .collect();
    let mut request_schemas = requests.take_definitions(true);
    let mut schemas = responses.take_definitions(true);
    // Renamed: those whose schema differs, then those that refer to a renamed one.
    let mut renamed: Vec<(String, String)> = Vec::new();
    loop {
        let more: Vec<(String, String)> = request_schemas
            .iter()
            .filter(|(name, schema)| {
                !renamed.iter().any(|(from, _)| from == *name)
                    && schemas.get(*name).is_some_and(|s| {
                        s != *schema
                            || renamed.iter().any(|(from, _)| {
                                schema
                                    .to_string()
                                    .contains(&format!("\"#/components/schemas/{from}\""))
                            })
                    })
            })
            .map(|(name, _)| (name.clone(), format!("{name}Input")))
            .collect();
        if more.is_empty() {
            break;
        }
        renamed.extend(more);
    }
    for (from, to) in &renamed {
        let schema = request_schemas.remove(from).expect("a request schema");
        assert!(!schemas.contains_key(to), "{to} is taken");
        request_schemas.insert(to.clone(), schema);
    }
    for value in request_schemas
        .values_mut()
        .chain(bodies.iter_mut().flatten())
        .chain(parameters.iter_mut())
    {
        rename_references(value, &renamed);
    }
    schemas.extend(request_schemas);
    schemas.insert(PROJECTION_NAME.into(), projection_name());
    schemas.insert(STREAM_EVENT.into(), stream_event());
    name_tagged_variants(&mut schemas);
    for schema in schemas.values_mut() {
        for_generators(schema);
    }

    let mut paths = Map::new();
    for ((r, body), (parameters, answer)) in routes
        .iter()
        .zip(bodies)
        .zip(parameters.into_iter().zip(answers))
    {
        let mut op = Map::new();
        op.insert("operationId".into(), json!(r.operation_id));
        op.insert("tags".into(), json!([r.tag.name()]));
        op.insert("summary".into(), json!(r.summary));
        op.insert("responses".into(), answer);
        if r.auth {
            op.insert("security".into(), json!([{"bearer": []}]));
        }
        if let Some(body) = body {
            op.insert(
                "requestBody".into(),
                json!({"required": true, "content": {"application/json": {"schema": body}}}),
            );
        }
        op.insert("parameters".into(), parameters);
        let entry = paths.entry(r.path.to_owned()).or_insert_with(|| json!({}));
        entry[r.method] = Value::Object(op);
    }
    let tags: Vec<Value> = Tag::ALL
        .iter()
        .map(|t| json!({"name": t.name(), "description": t.description()}))
        .collect();
    json!({
        "openapi": "3.0.3",
        "info": {"title": "discs", "version": env!("CARGO_PKG_VERSION"),
                 "description": "Event-sourced ranked matchmaking for Four in a Row and Reversi.\n\nEvery string of a request body or a query string (free text, ids, codes and moves alike) passes one checker: no control character (C0 with NUL, DEL, C1), none that changes the direction of the text, none that shows as nothing (zero-width spaces and joiners, the word joiner, the byte order mark, the soft hyphen, fillers), at most 3 combining marks on a character. Every date-time, in a query or a body, is RFC 3339 of the years 0001 to 9999 in UTC. Anything else is a 422 `invalid_request` problem naming the field."},
        "tags": tags,
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
            "schemas": schemas,
        }
    })
}

/// Points the `$ref`s of a request-side schema at the renamed schemas.
fn rename_references(value: &mut Value, renamed: &[(String, String)]) {
    match value {
        Value::Object(o) => {
            if let Some(Value::String(target)) = o.get_mut("$ref")
                && let Some((_, to)) = renamed
                    .iter()
                    .find(|(from, _)| target.strip_prefix("#/components/schemas/") == Some(from))
            {
                *target = format!("#/components/schemas/{to}");
            }
            o.values_mut().for_each(|v| rename_references(v, renamed));
        }
        Value::Array(a) => a.iter_mut().for_each(|v| rename_references(v, renamed)),
        _ => {}
    }
}

/// Gives the variants of an internally tagged enum (a `oneOf` of objects that each fix the
/// same required property to one string, `Flag`'s `kind`) a schema name of their own,
/// `<Value><Enum>` (`RepeatedPairFlag`), and the union a discriminator: generated clients then
/// name them rather than number them.
fn name_tagged_variants(schemas: &mut Map<String, Value>) {
    let mut hoisted = Vec::new();
    for (name, schema) in schemas.iter_mut() {
        let Some(variants) = schema["oneOf"].as_array() else {
            continue;
        };
        let tag_of = |v: &Value| -> Option<(String, String)> {
            v.get("properties")?.as_object()?.iter().find_map(|(p, s)| {
                let value = match s["enum"].as_array()?.as_slice() {
                    [Value::String(value)] => value.clone(),
                    _ => return None,
                };
                let required = v["required"].as_array()?.iter().any(|r| r == p);
                required.then(|| (p.clone(), value))
            })
        };
        let tags: Option<Vec<(String, String)>> = variants.iter().map(tag_of).collect();
        let Some(tags) = tags else { continue };
        let Some((property, _)) = tags.first().cloned() else {
            continue;
        };
        if tags.iter().any(|(p, _)| *p != property) {
            continue;
        }
        let mut refs = Vec::new();
        let mut mapping = Map::new();
        for ((_, value), variant) in tags.iter().zip(variants) {
            let variant_name = format!("{}{name}", pascal_case(value));
            refs.push(reference(&variant_name));
            mapping.insert(value.clone(), reference(&variant_name)["$ref"].clone());
            hoisted.push((variant_name, variant.clone()));
        }
        schema["oneOf"] = Value::Array(refs);
        schema["discriminator"] = json!({"propertyName": property, "mapping": mapping});
    }
    for (name, variant) in hoisted {
        assert!(!schemas.contains_key(&name), "{name} is taken");
        schemas.insert(name, variant);
    }
}

fn pascal_case(snake: &str) -> String {
    snake
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// What client generators read as intended, done to a schema and its subschemas: a `oneOf` of
/// single strings (an enum whose variants have docs) becomes one enum, the docs in its
/// description; an object's default is left out (the type's own fields give their defaults,
/// and generators refuse an object with a default); an `allOf` of one reference and nothing
/// else becomes the reference.
fn for_generators(schema: &mut Value) {
    let Some(o) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(variants)) = o.get("oneOf") {
        let single = |v: &Value| match (v["type"].as_str(), v["enum"].as_array().map(Vec::as_slice))
        {
            (Some("string"), Some([value @ Value::String(_)])) => {
                Some((value.clone(), v["description"].as_str().map(str::to_owned)))
            }
            _ => None,
        };
        if let Some(values) = variants.iter().map(single).collect::<Option<Vec<_>>>() {
            let mut description = o
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            for (value, doc) in &values {
                if let (Some(v), Some(doc)) = (value.as_str(), doc) {
                    description.push_str(&format!("\n- `{v}`: {doc}"));
                }
            }
            o.remove("oneOf");
            o.insert("type".into(), json!("string"));
            o.insert("enum".into(), values.into_iter().map(|(v, _)| v).collect());
            o.insert("description".into(), json!(description.trim_start()));
        }
    }
    if o.get("default").is_some_and(Value::is_object) {
        o.remove("default");
    }
    if o.len() == 1
        && let Some(Value::Array(all)) = o.get("allOf")
        && let [only @ Value::Object(r)] = all.as_slice()
        && r.len() == 1
        && r.contains_key("$ref")
    {
        *schema = only.clone();
        return;
    }
    for (key, value) in o.iter_mut() {
        match key.as_str() {
            "properties" => value
                .as_object_mut()
                .into_iter()
                .flat_map(|p| p.values_mut())
                .for_each(for_generators),
            "items" | "additionalProperties" | "not" => for_generators(value),
            "allOf" | "anyOf" | "oneOf" => value
                .as_array_mut()
                .into_iter()
                .flatten()
                .for_each(for_generators),
            _ => {}
        }
    }
}

/// Makes an optional field's schema that of its value when present: no `null` (a query
/// parameter is absent or a value; a body's form requires its fields).
fn not_null(schema: &mut Value) {
    let Some(o) = schema.as_object_mut() else {
        return;
    };
    o.remove("nullable");
    if o.get("default").is_some_and(Value::is_null) {
        o.remove("default");
    }
    if let Some(Value::Array(types)) = o.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            o.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = o.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    let is_null = |v: &Value| {
        v["type"] == "null"
            || v["enum"]
                .as_array()
                .is_some_and(|e| e.iter().all(Value::is_null))
    };
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(variants)) = o.get(key) else {
            continue;
        };
        let rest: Vec<Value> = variants.iter().filter(|v| !is_null(v)).cloned().collect();
        if rest.len() == variants.len() {
            continue;
        }
        o.remove(key);
        match rest.as_slice() {
            [Value::Object(only)] if !only.contains_key("$ref") => {
                for (k, v) in only {
                    o.insert(k.clone(), v.clone());
                }
            }
            [only] if o.is_empty() => {
                *schema = only.clone();
                return;
            }
            [only] => {
                o.insert("allOf".into(), json!([only]));
            }
            _ => {
                o.insert(key.into(), Value::Array(rest));
            }
        }
    }
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
            json!({"name": name, "in": "path", "required": true, "schema": path_parameter(name, requests)}),
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
                // A parameter is absent or a value: no `null`.
                not_null(&mut prop);
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
    if (r.method, r.path) == ("post", "/v1/players") {
        params.push(json!({"name": "Idempotency-Key", "in": "header", "required": false,
            "schema": {"type": "string", "pattern": "^[ \t]*[!-~]{16,200}[ \t]*$"},
            "description": "A secret: a retry with it gets the player's token. A random UUID or 128 random bits; a key under 16 characters or under 64 bits by its characters is refused (422), and a key whose record was purged is spent (409 idempotency_key_reused)."}));
    } else if KEYED.contains(&(r.method, r.path)) {
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
        Reply::EventStream => {
            json!({"text/event-stream": {"schema": reference(STREAM_EVENT)}})
        }
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
            json!({"description": "a limit was reached (`rate_limited` and the other limits)",
                   "content": problem, "headers": retry}),
        );
        responses.insert(
            "503".into(),
            json!({"description": "`unavailable`: the database does not answer (stopped, or a failover under way: with Patroni, a standby is promoted within its `ttl` plus a few seconds); retry after `Retry-After`. A command with an Idempotency-Key is safe to retry: a command acknowledged before a failover is never lost, and one answered 503 lands at most once however often it is retried with its key",
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
