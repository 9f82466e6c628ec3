//! Every text and every instant a client sends, walked from the served OpenAPI document: each
//! string field of each request body gets NUL, BEL, U+0085, RLO and a zero-width space inside an
//! otherwise valid value, each date-time parameter the ends of the time range; the answer is a
//! 422 problem in both languages, never a 5xx, and nothing is stored. Then issue 51's
//! reproductions: the names reserved for the CPU and the closed accounts, piled marks, a NUL in
//! an admin's reason. And every body over the limit, refused alike.

use std::collections::{BTreeMap, BTreeSet};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use time::Duration;
use time::format_description::well_known::Rfc3339;

use crate::helpers::{Player, Res, TestApp, spawn_app};

/// A step into a JSON value: a field, or an array's first item.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Field(String),
    Item,
}

/// A field's place in a body as the server's refusal names it (`settings.first`, `board[0]`).
fn named(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Field(f) if out.is_empty() => out.push_str(f),
            Step::Field(f) => out.push_str(&format!(".{f}")),
            Step::Item => out.push_str("[0]"),
        }
    }
    out
}

/// The value at `path` in `value`, if it is there.
fn at<'a>(value: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    let mut here = value;
    for step in path {
        here = match step {
            Step::Field(f) => here.as_object_mut()?.get_mut(f)?,
            Step::Item => here.as_array_mut()?.first_mut()?,
        };
    }
    Some(here)
}

/// The string fields a schema declares (through references, unions, nested objects and
/// arrays), each with whether it is a date-time.
fn strings_of(
    doc: &Value,
    schema: &Value,
    path: &mut Vec<Step>,
    out: &mut BTreeMap<Vec<Step>, bool>,
) {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference
            .strip_prefix("#/components/schemas/")
            .expect("a reference to a component");
        return strings_of(doc, &doc["components"]["schemas"][name], path, out);
    }
    for union in ["oneOf", "anyOf", "allOf"] {
        for sub in schema[union].as_array().into_iter().flatten() {
            strings_of(doc, sub, path, out);
        }
    }
    let typed = match &schema["type"] {
        Value::String(t) => t == "string",
        Value::Array(ts) => ts.iter().any(|t| t == "string"),
        _ => false,
    };
    let listed = schema["enum"]
        .as_array()
        .is_some_and(|e| e.iter().any(Value::is_string));
    if typed || listed || schema["const"].is_string() {
        let date_time = schema["format"] == "date-time";
        *out.entry(path.clone()).or_default() |= date_time;
    }
    for (field, sub) in schema["properties"].as_object().into_iter().flatten() {
        path.push(Step::Field(field.clone()));
        strings_of(doc, sub, path, out);
        path.pop();
    }
    if schema["items"].is_object() {
        path.push(Step::Item);
        strings_of(doc, &schema["items"], path, out);
        path.pop();
    }
}

/// Whether a parameter's schema is a date-time (through references and unions).
fn is_date_time(doc: &Value, schema: &Value) -> bool {
    let mut found = BTreeMap::new();
    strings_of(doc, schema, &mut Vec::new(), &mut found);
    found.get(&Vec::new()).copied().unwrap_or(false)
}

/// How an operation is called in these tests: its path with real ids, the caller's token, and
/// valid bodies that between them hold every string field of its body.
struct Call {
    path: String,
    token: Option<String>,
    bodies: Vec<Value>,
}

/// The world the calls act on, and a call per operation of the document that takes a body or a
/// date-time parameter. An operation missing here fails the walks.
async fn calls(app: &TestApp) -> BTreeMap<&'static str, Call> {
    let main = app.player("Main").await;
    let admin = app.admin("Arbiter").await;
    let target = app.player("Target").await;
    let entrant = app.player("Entrant").await;
    let closer = app.player("Closer").await;
    let leaver = app.player("Leaver").await;
    let fresh = |name: &'static str| async move { app.player(name).await };
    let (roomer, soloist, organiser, queuer) = (
        fresh("Roomer").await,
        fresh("Soloist").await,
        fresh("Organiser").await,
        fresh("Queuer").await,
    );
    let solo = app
        .solo(
            &main,
            "four_in_a_row",
            json!({"cpu_level": 1, "first": "me"}),
        )
        .await;
    let match_id = solo["match_id"].as_str().expect("a match").to_owned();
    let room = app
        .post("/v1/rooms", &main.token, json!({"game": "four_in_a_row"}))
        .await;
    assert_eq!(room.status, StatusCode::CREATED, "{:?}", room.body);
    let room_id = room.body["room_id"].as_str().expect("a room").to_owned();
    let soon = (app.state.now() + Duration::minutes(30))
        .format(&Rfc3339)
        .expect("a time");
    let cup = app
        .post(
            "/v1/tournaments",
            &admin.token,
            json!({"game": "four_in_a_row", "format": "arena", "name": "Cup",
                   "starts_at": soon, "minutes": 60}),
        )
        .await;
    assert_eq!(cup.status, StatusCode::CREATED, "{:?}", cup.body);
    let cup = cup.body["tournament_id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let joined = app
        .post(
            &format!("/v1/tournaments/{cup}/join"),
            &entrant.token,
            json!({}),
        )
        .await;
    assert_eq!(joined.status, StatusCode::OK, "{:?}", joined.body);
    let asked = app
        .post("/v1/players/me/closing", &closer.token, json!({}))
        .await;
    let confirmation = asked.body["confirmation"].as_str().expect("a confirmation");
    let challenger = fresh("Challenger").await;
    let challenge = app
        .post(
            "/v1/challenges",
            &challenger.token,
            json!({"opponent": main.id, "game": "reversi"}),
        )
        .await;
    assert_eq!(
        challenge.status,
        StatusCode::CREATED,
        "{:?}",
        challenge.body
    );
    let challenge = challenge.body["challenge_id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let call = |path: String, p: Option<&Player>, bodies: Vec<Value>| Call {
        path,
        token: p.map(|p| p.token.clone()),
        bodies,
    };
    let by_moves = json!({"game": "four_in_a_row", "moves": "4453"});
    let by_board = json!({"game": "four_in_a_row", "board": vec!["......."; 6], "side": "R"});
    let game = json!({"game": "four_in_a_row", "settings": {"first": "seat1"}});
    let matches = |action: &str| format!("/v1/matches/{match_id}/{action}");
    BTreeMap::from([
        (
            "signUp",
            call(
                "/v1/players".into(),
                None,
                vec![json!({"name": "Ada Lovelace"})],
            ),
        ),
        (
            "endMyTokens",
            call(
                "/v1/tokens/revoke".into(),
                Some(&leaver),
                vec![json!({"scope": "everywhere"})],
            ),
        ),
        (
            "closeAccount",
            call(
                "/v1/players/me/close".into(),
                Some(&closer),
                vec![json!({ "confirmation": confirmation })],
            ),
        ),
        (
            "listPlayerMatches",
            call(
                format!("/v1/players/{}/matches", main.id),
                Some(&main),
                vec![],
            ),
        ),
        (
            "joinQueue",
            call(
                "/v1/queue".into(),
                Some(&queuer),
                vec![json!({"game": "four_in_a_row"})],
            ),
        ),
        (
            "createRoom",
            call("/v1/rooms".into(), Some(&roomer), vec![game.clone()]),
        ),
        (
            "sendChallenge",
            call(
                "/v1/challenges".into(),
                Some(&challenger),
                vec![json!({"opponent": roomer.id, "game": "four_in_a_row",
                            "turn_seconds": 30, "first": "challenger"})],
            ),
        ),
        (
            "declineChallenge",
            call(
                format!("/v1/challenges/{challenge}/decline"),
                Some(&main),
                vec![json!({"reason": "later"})],
            ),
        ),
        (
            "setChallengeSettings",
            call(
                "/v1/players/me/challenge-settings".into(),
                Some(&main),
                vec![json!({"accepting": "played"})],
            ),
        ),
        (
            "changeRoomSettings",
            call(
                format!("/v1/rooms/{room_id}"),
                Some(&main),
                vec![json!({"settings": {"first": "seat2"}})],
            ),
        ),
        (
            "startRoomMatch",
            call(
                format!("/v1/rooms/{room_id}/matches"),
                Some(&main),
                vec![json!({})],
            ),
        ),
        (
            "createTournament",
            call(
                "/v1/tournaments".into(),
                Some(&organiser),
                vec![
                    json!({"game": "four_in_a_row", "format": "arena", "name": "Friday Arena",
                            "starts_at": soon, "minutes": 60, "private": true}),
                ],
            ),
        ),
        (
            "listTournaments",
            call("/v1/tournaments".into(), Some(&main), vec![]),
        ),
        (
            "removeFromTournament",
            call(
                format!("/v1/admin/tournaments/{cup}/removals"),
                Some(&admin),
                vec![json!({"player_id": entrant.id, "reason": "Left the hall"})],
            ),
        ),
        (
            "createSoloMatch",
            call(
                "/v1/matches".into(),
                Some(&soloist),
                vec![
                    json!({"game": "four_in_a_row", "cpu_level": 1, "first": "me",
                            "settings": {"first": "seat1"}}),
                ],
            ),
        ),
        (
            "playMove",
            call(matches("moves"), Some(&main), vec![json!({"move": "4"})]),
        ),
        (
            "leaveMatch",
            call(matches("leave"), Some(&main), vec![json!({})]),
        ),
        (
            "returnToMatch",
            call(matches("return"), Some(&main), vec![json!({})]),
        ),
        (
            "resignMatch",
            call(matches("resign"), Some(&main), vec![json!({})]),
        ),
        (
            "analysePosition",
            call(
                "/v1/analysis?budget_ms=100".into(),
                Some(&main),
                vec![by_moves.clone(), by_board.clone()],
            ),
        ),
        (
            "createAnalysisJob",
            call(
                "/v1/analysis/jobs".into(),
                Some(&main),
                vec![by_moves, by_board],
            ),
        ),
        (
            "decideOnPlayer",
            call(
                format!("/v1/admin/players/{}/decisions", target.id),
                Some(&admin),
                vec![json!({"decision": "banned", "reason": "Engine use in three games"})],
            ),
        ),
    ])
}

/// Sends `body` (and `query`) to `path` by `method`, asking for answers in `lang`.
async fn send(
    app: &TestApp,
    method: &str,
    call: &Call,
    lang: &str,
    body: Option<&Value>,
    query: &[(&str, &str)],
) -> Res {
    let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("a method");
    let mut url = format!("{}{}", app.base, call.path);
    for (name, value) in query {
        let sep = if url.contains('?') { '&' } else { '?' };
        url.push_str(&format!("{sep}{name}={}", encoded(value)));
    }
    let mut req = app
        .http
        .request(method, url)
        .header("accept-language", lang);
    if let Some(token) = &call.token {
        req = req.bearer_auth(token);
    }
    if let Some(body) = body {
        req = req.json(body);
    }
    app.send(req).await
}

/// `raw` percent-encoded for a query string (all but the unreserved characters).
fn encoded(raw: &str) -> String {
    raw.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Asserts a 422 `invalid_request` problem in both languages, whose titles and details differ;
/// the English detail.
#[track_caller]
fn refused_in_both_languages(en: &Res, pt: &Res, what: &str) -> String {
    for (res, lang) in [(en, "en"), (pt, "pt-BR")] {
        assert_eq!(
            res.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{what} ({lang}): {:?}",
            res.body
        );
        assert_eq!(
            res.headers["content-type"], "application/problem+json",
            "{what} ({lang})"
        );
        assert_eq!(res.code(), "invalid_request", "{what} ({lang})");
        assert_eq!(res.headers["content-language"], lang, "{what}");
        for member in ["title", "detail"] {
            assert!(
                res.body[member]
                    .as_str()
                    .is_some_and(|t| !t.trim().is_empty()),
                "{what} ({lang}): {member} in {:?}",
                res.body
            );
        }
    }
    for member in ["title", "detail"] {
        assert_ne!(
            en.body[member], pt.body[member],
            "{what}: {member} in one language"
        );
    }
    en.body["detail"].as_str().unwrap_or_default().to_owned()
}

/// What the server has stored: events, players, rooms, analysis jobs, stored answers, bans.
async fn stored(app: &TestApp) -> Vec<i64> {
    let client = database::testing::raw_client(&app.db_url).await;
    let mut counts = Vec::new();
    for table in [
        "events",
        "players",
        "rooms",
        "analysis_jobs",
        "idempotency_keys",
        "player_bans",
    ] {
        let row = client
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await
            .expect("a count");
        counts.push(row.get(0));
    }
    counts
}

/// The operations of the served document: (method, operation id, operation).
async fn operations(app: &TestApp) -> (Value, Vec<(String, String, Value)>) {
    let doc = app
        .send(app.http.get(format!("{}/openapi.json", app.base)))
        .await
        .body;
    let mut ops = Vec::new();
    for (_, methods) in doc["paths"].as_object().expect("paths") {
        for (method, op) in methods.as_object().expect("methods") {
            let id = op["operationId"]
                .as_str()
                .expect("an operation id")
                .to_owned();
            ops.push((method.clone(), id, op.clone()));
        }
    }
    (doc, ops)
}

const HOSTILE: [char; 5] = ['\0', '\u{7}', '\u{85}', '\u{202E}', '\u{200B}'];

#[tokio::test]
async fn every_string_of_every_body_refuses_controls_direction_changes_and_invisibles() {
    let app = spawn_app().await;
    let calls = calls(&app).await;
    let (doc, ops) = operations(&app).await;
    let before = stored(&app).await;
    let mut walked = BTreeSet::new();
    let mut fields = 0;
    for (method, id, op) in &ops {
        let Some(schema) = op["requestBody"]["content"]["application/json"]["schema"].as_object()
        else {
            continue;
        };
        let call = calls
            .get(id.as_str())
            .unwrap_or_else(|| panic!("{id}: a new operation with a body: give it a call here"));
        let mut strings = BTreeMap::new();
        strings_of(
            &doc,
            &Value::Object(schema.clone()),
            &mut Vec::new(),
            &mut strings,
        );
        for path in strings.keys() {
            let field = named(path);
            let mut body = call
                .bodies
                .iter()
                .find(|b| at(&mut (*b).clone(), path).is_some_and(|v| v.is_string()))
                .unwrap_or_else(|| panic!("{id}: no valid body here holds `{field}`"))
                .clone();
            let valid = at(&mut body, path)
                .and_then(|v| v.as_str().map(str::to_owned))
                .expect("a string");
            for c in HOSTILE {
                let mut inside = valid.clone();
                inside.insert(valid.chars().next().map_or(0, char::len_utf8), c);
                *at(&mut body, path).expect("the field") = json!(inside);
                let en = send(&app, method, call, "en", Some(&body), &[]).await;
                let pt = send(&app, method, call, "pt-BR", Some(&body), &[]).await;
                let what = format!("{id} `{field}` with U+{:04X}", u32::from(c));
                let detail = refused_in_both_languages(&en, &pt, &what);
                // The one checker refused it, naming the field and the character.
                assert!(
                    detail.contains(&format!("`{field}`"))
                        && detail.contains(&format!("U+{:04X}", u32::from(c))),
                    "{what}: {detail}"
                );
            }
            fields += 1;
        }
        walked.insert(id.as_str());
    }
    assert!(fields >= 20, "{fields} string fields walked");
    assert_eq!(stored(&app).await, before, "nothing stored");
    // Every call here is of an operation of the document, and every valid body is valid.
    for id in calls.keys() {
        let listed = ops.iter().any(|(_, op_id, _)| op_id == id);
        assert!(listed, "{id} is no operation of the document");
    }
    for (method, id, op) in &ops {
        let Some(call) = calls.get(id.as_str()) else {
            continue;
        };
        let mut strings = BTreeMap::new();
        strings_of(
            &doc,
            &op["requestBody"]["content"]["application/json"]["schema"],
            &mut Vec::new(),
            &mut strings,
        );
        if strings.is_empty() {
            continue;
        }
        for body in &call.bodies {
            let res = send(&app, method, call, "en", Some(body), &[]).await;
            assert!(res.status.is_success(), "{id} {body}: {:?}", res.body);
        }
    }
    assert!(walked.contains("signUp") && walked.contains("decideOnPlayer"));
}

#[tokio::test]
async fn every_body_over_the_limit_is_refused_413_and_nothing_is_stored() {
    let app = spawn_app().await;
    let calls = calls(&app).await;
    let (_, ops) = operations(&app).await;
    let before = stored(&app).await;
    let mut walked = 0;
    for (method, id, op) in &ops {
        if op["requestBody"].is_null() {
            continue;
        }
        let call = calls
            .get(id.as_str())
            .unwrap_or_else(|| panic!("{id}: a new operation with a body: give it a call here"));
        // A valid body, with one field more that takes it past the limit.
        let mut body = call.bodies.first().cloned().unwrap_or_else(|| json!({}));
        body["padding"] = json!("x".repeat(api::input::MAX_BODY));
        let res = send(&app, method, call, "en", Some(&body), &[]).await;
        assert_eq!(
            (res.status, res.code()),
            (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            "{id}: {:?}",
            res.body
        );
        walked += 1;
    }
    assert!(walked >= 20, "{walked} operations with a body");
    assert_eq!(stored(&app).await, before, "nothing stored");
}

/// Instants no timestamp takes: past 9999 or before year 1 in UTC, signed or long years, no
/// offset, no such day, not an instant.
const REFUSED: [&str; 14] = [
    "9999-12-31T23:59:59-23:59",
    "9999-12-31T23:59:59.999999999-00:01",
    "0000-01-01T00:00:00+23:59",
    "0000-12-31T23:59:59Z",
    "0001-01-01T00:00:00+00:01",
    "-0001-01-01T00:00:00Z",
    "+10000-01-01T00:00:00Z",
    "10000-01-01T00:00:00Z",
    "275760-09-13T00:00:00Z",
    "294277-01-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-05-01T12:00:00",
    "now",
    "2026-05-01T12:00:00Z\u{0}",
];

/// The ends of what a timestamp takes: the years 1 and 9999 in UTC, whatever the offset.
const ACCEPTED: [&str; 5] = [
    "0001-01-01T00:00:00Z",
    "0001-01-01T23:58:00+23:58",
    "9999-12-31T23:59:59.999999999Z",
    "9999-12-31T00:00:00-23:59",
    "1970-01-01T00:00:00Z",
];

#[tokio::test]
async fn every_date_time_refuses_what_postgresql_cannot_hold_and_takes_the_rest() {
    let app = spawn_app().await;
    let calls = calls(&app).await;
    let (doc, ops) = operations(&app).await;
    let before = stored(&app).await;
    let mut parameters = 0;
    for (method, id, op) in &ops {
        let call = calls.get(id.as_str());
        for param in op["parameters"].as_array().into_iter().flatten() {
            if param["in"] != "query" || !is_date_time(&doc, &param["schema"]) {
                continue;
            }
            let call = call.unwrap_or_else(|| {
                panic!("{id}: a new operation with a date-time parameter: give it a call here")
            });
            let name = param["name"].as_str().expect("a name");
            for raw in REFUSED {
                let query = [(name, raw)];
                let en = send(&app, method, call, "en", None, &query).await;
                let pt = send(&app, method, call, "pt", None, &query).await;
                refused_in_both_languages(&en, &pt, &format!("{id} {name}={raw:?}"));
            }
            for raw in ACCEPTED {
                let res = send(&app, method, call, "en", None, &[(name, raw)]).await;
                assert_eq!(
                    res.status,
                    StatusCode::OK,
                    "{id} {name}={raw}: {:?}",
                    res.body
                );
                assert!(res.body.is_object(), "{id} {name}={raw}");
            }
            parameters += 1;
        }
        // A date-time in a body takes the same type: its extremes are refused too (no body's
        // date-time accepts the years 1 or 9999 either: a tournament starts within 90 days).
        let Some(schema) = op["requestBody"]["content"]["application/json"]["schema"].as_object()
        else {
            continue;
        };
        let mut strings = BTreeMap::new();
        strings_of(
            &doc,
            &Value::Object(schema.clone()),
            &mut Vec::new(),
            &mut strings,
        );
        for (path, _) in strings.iter().filter(|(_, date_time)| **date_time) {
            let call = call.unwrap_or_else(|| panic!("{id}: no call"));
            let mut body = call.bodies[0].clone();
            for raw in REFUSED.iter().chain(&ACCEPTED) {
                *at(&mut body, path).expect("the field") = json!(raw);
                let en = send(&app, method, call, "en", Some(&body), &[]).await;
                let pt = send(&app, method, call, "pt", Some(&body), &[]).await;
                refused_in_both_languages(&en, &pt, &format!("{id} `{}`={raw:?}", named(path)));
            }
            parameters += 1;
        }
    }
    assert_eq!(
        parameters, 3,
        "listPlayerMatches and listTournaments' before, a tournament's start"
    );
    assert_eq!(stored(&app).await, before, "nothing stored");
}

/// Signs up `name`; the answer.
async fn sign_up(app: &TestApp, name: &str, lang: &str) -> Res {
    app.send(
        app.http
            .post(format!("{}/v1/players", app.base))
            .header("accept-language", lang)
            .json(&json!({ "name": name })),
    )
    .await
}

#[tokio::test]
async fn the_cpus_name_closed_labels_and_piled_marks_are_refused_at_sign_up() {
    let app = spawn_app().await;
    let before = stored(&app).await;
    for name in [
        "CPU",
        "cpu",
        " Cpu ",
        "ＣＰＵ",
        "closed-0123abcd",
        "Closed-0123ABCD",
        "closed-ffffffff",
        "Z\u{36B}\u{36B}\u{36B}\u{36B}algo",
        "a\u{301}\u{302}\u{303}\u{304}",
        "Ada\u{7}",
        "\u{202E}Ada",
        "A\u{200B}da",
        "Ada\u{FEFF}",
        "Ada\u{2060}",
        "Ada\u{200D}",
    ] {
        let en = sign_up(&app, name, "en").await;
        let pt = sign_up(&app, name, "pt").await;
        refused_in_both_languages(&en, &pt, &format!("{name:?}"));
    }
    assert_eq!(stored(&app).await, before, "nobody signed up");
    let reserved = sign_up(&app, "cpu", "pt").await;
    assert!(
        reserved.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("reservado")),
        "{:?}",
        reserved.body
    );
    // Names that only look near them, and marks as languages stack them, are names.
    for name in [
        "CPU fan",
        "closed-0123abc",
        "Nguye\u{302}\u{303}n",
        "Nguyễn",
        "Zoë",
    ] {
        let res = sign_up(&app, name, "en").await;
        assert_eq!(res.status, StatusCode::CREATED, "{name:?}: {:?}", res.body);
        assert_eq!(res.body["name"], name);
    }
}

#[tokio::test]
async fn an_admins_reason_with_a_nul_or_an_invisible_character_is_refused_and_not_stored() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let suspect = app.player("Suspect").await;
    let path = format!("/v1/admin/players/{}/decisions", suspect.id);
    for reason in [
        "engine\u{0}use",
        "engine\u{7}use",
        "engine\u{202E}use",
        "engine\u{200B}use",
        "engine use\u{301}\u{301}\u{301}\u{301}",
    ] {
        let res = app
            .post(
                &path,
                &admin.token,
                json!({"decision": "banned", "reason": reason}),
            )
            .await;
        assert_eq!(
            res.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{reason:?}: {:?}",
            res.body
        );
        assert_eq!(res.code(), "invalid_request");
    }
    let events = app
        .state
        .log
        .read_stream(&format!("player-{}", suspect.id))
        .await
        .expect("the stream reads");
    assert!(events.is_empty(), "no decision recorded");
    let res = app
        .post(
            &path,
            &admin.token,
            json!({"decision": "banned", "reason": " engine use "}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    assert_eq!(res.body["reason"], "engine use");
}

#[tokio::test]
async fn a_query_parameter_with_a_refused_character_is_refused_before_its_call() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    for (path, name, raw) in [
        ("/v1/admin/players", "name", "A\u{0}da"),
        ("/v1/admin/players", "name", "A\u{200B}da"),
        ("/v1/tournaments", "status", "up\u{202E}coming"),
        ("/v1/tournaments", "before", "2026-05-01T12:00:00Z\u{85}"),
        ("/v1/explorer/four_in_a_row", "moves", "4\u{7}4"),
        ("/v1/leaderboards/reversi", "limit", "1\u{200D}0"),
    ] {
        let call = Call {
            path: path.to_owned(),
            token: Some(admin.token.clone()),
            bodies: vec![],
        };
        let query = [(name, raw)];
        let en = send(&app, "get", &call, "en", None, &query).await;
        let pt = send(&app, "get", &call, "pt", None, &query).await;
        let what = format!("{path}?{name}={raw:?}");
        let detail = refused_in_both_languages(&en, &pt, &what);
        assert!(detail.contains(&format!("`{name}`")), "{what}: {detail}");
        assert!(en.headers.contains_key("x-request-id"), "{what}");
    }
    let fine = app.get("/v1/admin/players?name=Arb", &admin.token).await;
    assert_eq!(fine.status, StatusCode::OK, "{:?}", fine.body);
}
