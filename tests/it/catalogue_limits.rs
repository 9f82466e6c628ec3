//! One source per limit (issue 52, item 3): each limit a client meets — the turn limits, an
//! arena's minutes, a Swiss tournament's rounds, a tournament's players, how far ahead it may be
//! scheduled, the names' lengths — is defined once where it is a rule
//! (`domain::tournaments::limits`, `domain::matches::TurnSeconds`, `service::checks`), and the
//! catalogue's `limits` (`GET /v1/games`), the OpenAPI document's bounds, the texts of the real
//! refusals in both languages and the web client's forms all say the same numbers.

use reqwest::StatusCode;
use serde_json::{Value, json};
use time::Duration;

use domain::matches::TurnSeconds;
use domain::tournaments::limits as tournament;

use crate::helpers::{Res, TestApp, spawn_app};
use crate::tournaments::at;

const LANGS: [&str; 2] = ["en", "pt"];

/// `GET /v1/games` in `lang`.
pub(crate) async fn catalogue(app: &TestApp, lang: &str) -> Value {
    let res = app
        .send(
            app.http
                .get(format!("{}/v1/games", app.base))
                .header("accept-language", lang),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{lang}: {:?}", res.body);
    res.body
}

/// A limit of the catalogue as a number.
#[track_caller]
fn n(value: &Value) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("a number: {value}"))
}

/// The whole numbers a text states, in order.
fn numbers(text: &str) -> Vec<u64> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter_map(|run| run.parse().ok())
        .collect()
}

#[tokio::test]
async fn the_catalogue_serves_each_limit_as_it_is_defined() {
    let app = spawn_app().await;
    let en = catalogue(&app, "en").await;
    assert_eq!(
        en["limits"],
        json!({
            "turn_seconds": TurnSeconds::ALLOWED,
            "days_per_move": domain::matches::DaysPerMove::ALLOWED,
            "player_name_max": service::checks::PLAYER_NAME_MAX,
            "tournament": {
                "name_max": tournament::NAME_MAX,
                "arena_minutes": {
                    "min": tournament::ARENA_MINUTES.start(),
                    "max": tournament::ARENA_MINUTES.end(),
                },
                "swiss_rounds": {
                    "min": tournament::SWISS_ROUNDS.start(),
                    "max": tournament::SWISS_ROUNDS.end(),
                },
                "players": {"min": tournament::PLAYERS_MIN, "max": tournament::PLAYERS_MAX},
                "round_robin_players_max": tournament::ROUND_ROBIN_MAX,
                "scheduled_within_days": tournament::SCHEDULED_DAYS_MAX,
                "default_turn_seconds": domain::tournaments::limits::DEFAULT_TURN_SECONDS,
            },
            "challenge": {
                "open_max": domain::challenges::OPEN_MAX,
                "per_minute": domain::challenges::PER_MINUTE,
                "lifetime_hours": domain::challenges::LIFETIME.whole_hours(),
            },
        })
    );
    assert_eq!(
        tournament::SCHEDULED_AT_MOST,
        Duration::days(tournament::SCHEDULED_DAYS_MAX.into())
    );
    let default = u32::try_from(n(&en["limits"]["tournament"]["default_turn_seconds"]))
        .expect("a turn limit");
    assert!(TurnSeconds::try_from(default).is_ok());
    // The limits are no text: both languages serve the same.
    assert_eq!(catalogue(&app, "pt").await["limits"], en["limits"]);
    // And each game's `turn_seconds` setting offers the same turn limits.
    for game in en["games"].as_array().expect("games") {
        let setting = game["settings"]
            .as_array()
            .expect("settings")
            .iter()
            .find(|s| s["name"] == "turn_seconds")
            .expect("a turn_seconds setting");
        let mut offered = vec![Value::Null];
        offered.extend(
            en["limits"]["turn_seconds"]
                .as_array()
                .expect("a list")
                .clone(),
        );
        assert_eq!(setting["values"], Value::Array(offered), "{}", game["id"]);
    }
}

#[tokio::test]
async fn the_openapi_documents_bounds_are_the_catalogues() {
    let app = spawn_app().await;
    let limits = catalogue(&app, "en").await["limits"].clone();
    let t = &limits["tournament"];
    let doc = app
        .send(app.http.get(format!("{}/openapi.json", app.base)))
        .await
        .body;
    let schemas = &doc["components"]["schemas"];
    let bounds = |schema: &Value| (schema["minimum"].clone(), schema["maximum"].clone());
    let create = &schemas["CreateTournamentRequest"]["properties"];
    assert_eq!(
        bounds(&create["minutes"]),
        (
            t["arena_minutes"]["min"].clone(),
            t["arena_minutes"]["max"].clone()
        )
    );
    assert_eq!(
        bounds(&create["rounds"]),
        (
            t["swiss_rounds"]["min"].clone(),
            t["swiss_rounds"]["max"].clone()
        )
    );
    assert_eq!(
        bounds(&create["max_players"]),
        (t["players"]["min"].clone(), t["players"]["max"].clone())
    );
    assert_eq!(
        (&create["name"]["minLength"], &create["name"]["maxLength"]),
        (&json!(1), &t["name_max"])
    );
    assert_eq!(
        schemas["TournamentSettings"]["properties"]["turn_seconds"]["default"],
        t["default_turn_seconds"]
    );
    assert_eq!(schemas["TurnSeconds"]["enum"], limits["turn_seconds"]);
    let sign_up = &schemas["SignUpRequest"]["properties"]["name"];
    assert_eq!(
        (&sign_up["minLength"], &sign_up["maxLength"]),
        (&json!(1), &limits["player_name_max"])
    );
    let find = doc["paths"]["/v1/admin/players"]["get"]["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .find(|p| p["name"] == "name")
        .expect("the name to find")["schema"]
        .clone();
    assert_eq!(
        (&find["minLength"], &find["maxLength"]),
        (&json!(1), &limits["player_name_max"])
    );

    // The catalogue's answer documents its limits, every one required.
    let catalogue = &schemas["Catalogue"];
    assert!(
        catalogue["required"]
            .as_array()
            .is_some_and(|r| r.contains(&json!("limits"))),
        "{catalogue}"
    );
    for (schema, answered) in [("Limits", &limits), ("TournamentLimits", t)] {
        let mut required: Vec<&str> = schemas[schema]["required"]
            .as_array()
            .unwrap_or_else(|| panic!("{schema}: required fields"))
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let mut keys: Vec<&str> = answered
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        required.sort_unstable();
        keys.sort_unstable();
        assert_eq!(required, keys, "{schema}");
    }

    // No prose of the document states a limit of its own: the bounds above carry them. (Only
    // the limits from 10 up: a small number is too common in prose to tell — "at most 3
    // combining marks", "win 2".)
    let stated = limit_numbers(&limits)
        .into_iter()
        .filter(|(_, value)| *value >= 10)
        .collect::<Vec<_>>();
    let mut prose = vec![(
        "POST /v1/tournaments".to_owned(),
        doc["paths"]["/v1/tournaments"]["post"]["summary"].clone(),
    )];
    for schema in [
        "CreateTournamentRequest",
        "TournamentSettings",
        "SignUpRequest",
    ] {
        for (field, property) in schemas[schema]["properties"]
            .as_object()
            .expect("properties")
        {
            prose.push((format!("{schema}.{field}"), property["description"].clone()));
        }
    }
    for (place, text) in prose {
        let text = text.as_str().unwrap_or_default();
        for (limit, value) in &stated {
            assert!(
                !numbers(text).contains(value),
                "{place} states {value} ({limit}) itself: {text}"
            );
        }
    }
}

/// Every limit of the catalogue's `limits`, named by its path.
fn limit_numbers(limits: &Value) -> Vec<(String, u64)> {
    fn walk(at: &str, value: &Value, out: &mut Vec<(String, u64)>) {
        match value {
            Value::Object(fields) => {
                for (key, v) in fields {
                    walk(&format!("{at}.{key}"), v, out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(&format!("{at}[{i}]"), v, out);
                }
            }
            Value::Number(number) => {
                out.push((at.to_owned(), number.as_u64().expect("a whole number")));
            }
            _ => panic!("{at}: not a limit: {value}"),
        }
    }
    let mut out = Vec::new();
    walk("limits", limits, &mut out);
    out
}

/// Asserts that `res` is a refusal of bad input whose detail states every number of `expected`
/// and has no placeholder left.
#[track_caller]
fn states(res: &Res, lang: &str, what: &str, expected: &[u64]) {
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"),
        "{what} ({lang}): {:?}",
        res.body
    );
    let detail = res.body["detail"].as_str().unwrap_or_default();
    assert!(!detail.contains('{'), "{what} ({lang}): {detail}");
    let said = numbers(detail);
    for number in expected {
        assert!(
            said.contains(number),
            "{what} ({lang}): the detail does not say {number}: {detail}"
        );
    }
}

#[tokio::test]
async fn the_refusals_state_the_catalogues_numbers_in_both_languages() {
    let app = spawn_app().await;
    let admin = app.admin("Arbiter").await;
    let limits = catalogue(&app, "en").await["limits"].clone();
    let t = &limits["tournament"];
    let (minutes, rounds, players) = (&t["arena_minutes"], &t["swiss_rounds"], &t["players"]);
    let turns: Vec<u64> = limits["turn_seconds"]
        .as_array()
        .expect("turn limits")
        .iter()
        .map(n)
        .collect();
    let days = n(&t["scheduled_within_days"]);
    let now = app.state.now();
    let soon = at(now + Duration::minutes(10));
    let too_far = at(now + Duration::days(i64::try_from(days).expect("days") + 1));
    let arena = json!({"format": "arena", "minutes": minutes["min"]});
    let cases: Vec<(&str, Value, Vec<u64>)> = vec![
        (
            "an arena too long",
            json!({"format": "arena", "minutes": n(&minutes["max"]) + 1}),
            vec![n(&minutes["min"]), n(&minutes["max"])],
        ),
        (
            "an arena too short",
            json!({"format": "arena", "minutes": n(&minutes["min"]) - 1}),
            vec![n(&minutes["min"]), n(&minutes["max"])],
        ),
        (
            "too many rounds",
            json!({"format": "swiss", "rounds": n(&rounds["max"]) + 1}),
            vec![n(&rounds["min"]), n(&rounds["max"])],
        ),
        (
            "too few rounds",
            json!({"format": "swiss", "rounds": n(&rounds["min"]) - 1}),
            vec![n(&rounds["min"]), n(&rounds["max"])],
        ),
        (
            "too many players",
            json!({"max_players": n(&players["max"]) + 1}),
            vec![n(&players["min"]), n(&players["max"])],
        ),
        (
            "too few players",
            json!({"max_players": n(&players["min"]) - 1}),
            vec![n(&players["min"]), n(&players["max"])],
        ),
        (
            "a round robin too large",
            json!({"format": "round_robin", "max_players": n(&t["round_robin_players_max"]) + 1}),
            vec![n(&players["min"]), n(&t["round_robin_players_max"])],
        ),
        (
            "a name too long",
            json!({"name": "x".repeat(usize::try_from(n(&t["name_max"])).expect("a length") + 1)}),
            vec![n(&t["name_max"])],
        ),
        (
            "a start too far ahead",
            json!({"starts_at": too_far}),
            vec![days],
        ),
        (
            "a turn limit not offered",
            json!({"settings": {"turn_seconds": turns.iter().max().expect("a turn limit") + 1}}),
            turns.clone(),
        ),
    ];
    for (what, case, expected) in &cases {
        let mut body = json!({"game": "reversi", "name": "Cup", "starts_at": soon});
        // An arena of the least length unless the case names its format.
        let format = if case.get("format").is_some() {
            None
        } else {
            Some(&arena)
        };
        for fields in format.into_iter().chain([case]) {
            for (k, v) in fields.as_object().expect("fields") {
                body[k] = v.clone();
            }
        }
        for lang in LANGS {
            let res = app
                .send(
                    app.http
                        .post(format!("{}/v1/tournaments", app.base))
                        .bearer_auth(&admin.token)
                        .header("accept-language", lang)
                        .json(&body),
                )
                .await;
            states(&res, lang, what, expected);
        }
    }

    // A player's name: at sign-up, and as an admin looks for one.
    let name_max = n(&limits["player_name_max"]);
    let long = "y".repeat(usize::try_from(name_max).expect("a length") + 1);
    for lang in LANGS {
        let res = app
            .send(
                app.http
                    .post(format!("{}/v1/players", app.base))
                    .header("accept-language", lang)
                    .json(&json!({"name": long})),
            )
            .await;
        states(&res, lang, "a player's name too long", &[name_max]);
        let res = app
            .get_in(
                lang,
                &format!("/v1/admin/players?name={long}"),
                &admin.token,
            )
            .await;
        states(&res, lang, "a name to find too long", &[name_max]);
    }
}

/// The numeric literals of a script equal to one of `limits`, as `(line, literal, limit)`,
/// outside comments; a literal is allowed only as a named default (`const DEFAULT_… = n;`) or a
/// date field's width (`padStart(2, …)`). Strings are scanned too (`'30'`).
fn literal_limits(script: &str, limits: &[(String, u64)]) -> Vec<(usize, u64, String)> {
    let code = without_comments(script);
    let mut found = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let bytes = line.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            let starts = bytes[at].is_ascii_digit()
                && (at == 0 || {
                    let before = bytes[at - 1];
                    !(before.is_ascii_alphanumeric() || matches!(before, b'_' | b'$' | b'.'))
                });
            if !starts {
                at += 1;
                continue;
            }
            let end = (at..bytes.len())
                .find(|&j| !(bytes[j].is_ascii_digit() || bytes[j] == b'_'))
                .unwrap_or(bytes.len());
            let literal: u64 = line[at..end].replace('_', "").parse().unwrap_or(u64::MAX);
            let before = line[..at].trim_end();
            let named_default = line.trim_start().starts_with("const DEFAULT_")
                && before.ends_with('=')
                && line[end..].trim() == ";";
            let width = before.ends_with("padStart(");
            if !named_default && !width {
                for (limit, value) in limits {
                    if *value == literal {
                        found.push((i + 1, literal, limit.clone()));
                    }
                }
            }
            at = end;
        }
    }
    found
}

/// `script` with its comments blanked (`//` to the line's end, `/* … */`), its strings kept.
fn without_comments(script: &str) -> String {
    let mut out = String::with_capacity(script.len());
    let mut chars = script.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('\'' | '"' | '`', _) => {
                quote = Some(c);
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[test]
fn the_web_forms_take_their_bounds_from_the_catalogue() {
    let limits = serde_json::to_value(api::catalogue::Limits::now()).expect("the limits");
    let all = limit_numbers(&limits);
    // The tournament form's limits: a tournament's bounds and the turn limits.
    let form: Vec<(String, u64)> = all
        .iter()
        .filter(|(at, _)| {
            at.starts_with("limits.tournament") || at.starts_with("limits.turn_seconds")
        })
        .cloned()
        .collect();
    let tournaments = include_str!("../../api/web/tournaments.js");
    assert_eq!(
        literal_limits(tournaments, &form),
        [],
        "api/web/tournaments.js writes a limit itself: read it from the catalogue's `limits`"
    );
    for read in ["c.limits.turn_seconds", "c.limits.tournament"] {
        assert!(tournaments.contains(read), "the form reads {read}");
    }

    // The player's name: the sign-up form and the admin's search bound it by the catalogue.
    let name: Vec<(String, u64)> = all
        .iter()
        .filter(|(at, _)| at == "limits.player_name_max")
        .cloned()
        .collect();
    assert_eq!(name.len(), 1);
    for (file, script) in [
        ("home.js", include_str!("../../api/web/home.js")),
        ("admin.js", include_str!("../../api/web/admin.js")),
    ] {
        assert_eq!(literal_limits(script, &name), [], "api/web/{file}");
        assert!(script.contains("limits.player_name_max"), "api/web/{file}");
    }

    // The scan finds what it looks for: the form as it was before the catalogue served its
    // limits, and a limit in a string.
    let before = "/** The turn limits (`null`: none), the first the default: 30. */\n\
                  const TURN_LIMITS = [30, 60, null];\n\
                  const DEFAULT_START_MINUTES = 30;\n\
                  h('input', { name: 'minutes', type: 'number', min: 10, max: 1440, value: 30 });\n\
                  h('input', { name: 'rounds', type: 'number', min: 3, max: 50, value: 5 });\n\
                  h('input', { name: 'name', required: true, maxlength: 60 });\n\
                  select('turn_seconds', options, '30'); p(date.getMonth() + 1).padStart(2, '0');";
    let lines: Vec<usize> = literal_limits(before, &form)
        .into_iter()
        .map(|(line, ..)| line)
        .collect();
    assert!(
        [2, 4, 5, 6, 7].iter().all(|line| lines.contains(line)) && !lines.contains(&1),
        "{lines:?}"
    );
    assert!(!lines.contains(&3), "a named default is no limit");
    let found = literal_limits(before, &form);
    for literal in [10, 1440, 3, 50, 60] {
        assert!(
            found.iter().any(|(_, l, _)| *l == literal),
            "{literal}: {found:?}"
        );
    }
    assert!(
        !found.iter().any(|(line, l, _)| *line == 7 && *l == 2),
        "a date field's width is no limit: {found:?}"
    );
}
