//! The OpenAPI document as client generators read it: every operation named by its intent and
//! grouped by a declared tag, bodies and answers named schemas, unions in the forms that
//! openapi-python-client and @hey-api/openapi-ts accept (`.ci/client` runs both on the served
//! document and plays with the Python client).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use api::routes::openapi::document;
use api::routes::{Tag, table};

#[test]
fn every_operation_has_a_unique_name_of_intent_and_a_declared_tag() {
    let doc = document();
    let declared: Vec<&str> = doc["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .map(|t| {
            assert!(
                t["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{t}"
            );
            t["name"].as_str().expect("a tag's name")
        })
        .collect();
    assert_eq!(declared, Tag::ALL.map(Tag::name));
    let mut ids = BTreeSet::new();
    let mut used = BTreeSet::new();
    for route in table() {
        let op = &doc["paths"][route.path][route.method];
        let id = op["operationId"].as_str().expect("an operation id");
        assert_eq!(id, route.operation_id);
        assert!(
            id.starts_with(|c: char| c.is_ascii_lowercase())
                && id.chars().all(|c| c.is_ascii_alphanumeric()),
            "{id}: lower camel case"
        );
        assert!(ids.insert(id), "{id} names two operations");
        let tags = op["tags"].as_array().expect("tags");
        assert_eq!(tags.len(), 1, "{id}: one tag");
        let tag = tags[0].as_str().expect("a tag");
        assert!(declared.contains(&tag), "{id}: tag {tag} is declared");
        used.insert(tag);
    }
    assert_eq!(
        used.len(),
        declared.len(),
        "every declared tag has operations"
    );
    assert_eq!(
        doc["paths"]["/v1/matches/{id}/moves"]["post"]["operationId"],
        "playMove"
    );
    assert_eq!(
        doc["paths"]["/v1/matches"]["post"]["operationId"],
        "createSoloMatch"
    );
    assert_eq!(doc["paths"]["/v1/players"]["post"]["operationId"], "signUp");
    assert_eq!(
        doc["paths"]["/v1/queue"]["post"]["operationId"],
        "joinQueue"
    );
}

#[test]
fn bodies_and_json_answers_are_named_schemas() {
    let doc = document();
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    let named = |schema: &Value, what: &str| {
        let name = schema["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix("#/components/schemas/"))
            .unwrap_or_else(|| panic!("{what}: not a named schema: {schema}"));
        assert!(schemas.contains_key(name), "{what}: {name} is defined");
        name.to_owned()
    };
    for route in table() {
        let op = &doc["paths"][route.path][route.method];
        let what = format!("{} {}", route.method, route.path);
        if route.body.is_some() {
            let body = &op["requestBody"]["content"]["application/json"]["schema"];
            assert!(named(body, &what).ends_with("Request"), "{what}: {body}");
        }
        let success = &op["responses"][route.status.to_string()]["content"];
        for (media, content) in success.as_object().expect("content") {
            if media == "application/json" || media == "text/event-stream" {
                named(&content["schema"], &what);
            }
        }
        for p in op["parameters"].as_array().expect("parameters") {
            let s = &p["schema"];
            let simple = s["$ref"].is_string()
                || matches!(
                    s["type"].as_str(),
                    Some("string" | "integer" | "number" | "boolean")
                );
            assert!(simple, "{what}: parameter {}: {s}", p["name"]);
            assert!(
                s.get("nullable").is_none(),
                "{what}: parameter {}",
                p["name"]
            );
        }
    }
    let body = |path: &str, method: &str| {
        doc["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            .clone()
    };
    assert_eq!(
        body("/v1/matches", "post"),
        "#/components/schemas/CreateSoloMatchRequest"
    );
    assert_eq!(
        body("/v1/matches/{id}/moves", "post"),
        "#/components/schemas/PlayMoveRequest"
    );
    assert_eq!(
        body("/v1/analysis", "post"),
        body("/v1/analysis/jobs", "post")
    );
}

#[test]
fn unions_and_nulls_take_the_forms_generators_accept() {
    let doc = document();
    let mut problems = Vec::new();
    for (name, schema) in doc["components"]["schemas"].as_object().expect("schemas") {
        check_schema(schema, name, &mut problems);
    }
    assert!(problems.is_empty(), "{problems:#?}");

    let schemas = &doc["components"]["schemas"];
    // The analysis body: one of two named forms.
    assert_eq!(
        schemas["AnalysisRequest"]["oneOf"],
        json!([{"$ref": "#/components/schemas/PositionByMoves"},
               {"$ref": "#/components/schemas/PositionByBoard"}])
    );
    assert_eq!(
        schemas["PositionByMoves"]["required"],
        json!(["game", "moves"])
    );
    assert_eq!(
        schemas["PositionByBoard"]["required"],
        json!(["game", "board", "side"])
    );
    // A nullable choice: a reference or null, not a null among the values.
    assert_eq!(
        schemas["JoinQueueRequest"]["properties"]["turn_seconds"]["anyOf"],
        json!([{"$ref": "#/components/schemas/TurnSeconds"}, {"enum": [null], "nullable": true}])
    );
    // Settings are read with defaults and written whole: two schemas.
    assert!(schemas["SettingsInput"].get("required").is_none());
    assert!(schemas["Settings"]["required"].is_array());
    // An internally tagged enum: named variants and a discriminator.
    assert_eq!(schemas["Flag"]["discriminator"]["propertyName"], "kind");
    assert!(schemas["RepeatedPairFlag"].is_object() && schemas["ShortLossFlag"].is_object());
}

/// What openapi-python-client 0.29 refuses or names after paths: a union member written inline
/// (other than the null of a nullable reference), `null` among an enum's values, a type list,
/// a default on an object.
fn check_schema(schema: &Value, at: &str, problems: &mut Vec<String>) {
    let Some(o) = schema.as_object() else {
        return;
    };
    let null = json!({"enum": [null], "nullable": true});
    for key in ["oneOf", "anyOf"] {
        for member in o.get(key).and_then(Value::as_array).into_iter().flatten() {
            if member.get("$ref").is_none() && *member != null {
                problems.push(format!("{at}: an inline {key} member {member}"));
            }
        }
    }
    if *schema != null
        && o.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.iter().any(Value::is_null))
    {
        problems.push(format!("{at}: null among the values of an enum"));
    }
    if o.get("type").is_some_and(Value::is_array) {
        problems.push(format!("{at}: a list of types"));
    }
    if o.get("default").is_some_and(Value::is_object) {
        problems.push(format!("{at}: a default object"));
    }
    for (key, value) in o {
        match key.as_str() {
            "properties" => {
                for (name, property) in value.as_object().into_iter().flatten() {
                    check_schema(property, &format!("{at}.{name}"), problems);
                }
            }
            "items" | "additionalProperties" => check_schema(value, &format!("{at}[]"), problems),
            "allOf" | "anyOf" | "oneOf" => {
                for member in value.as_array().into_iter().flatten() {
                    check_schema(member, at, problems);
                }
            }
            _ => {}
        }
    }
}

/// Whether `schema` (following `$ref`s into the document's components) names a property in
/// `names`, at any depth.
fn names_a_property(
    doc: &Value,
    schema: &Value,
    names: &[&str],
    seen: &mut BTreeSet<String>,
) -> bool {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                let Some(name) = r.strip_prefix("#/components/schemas/") else {
                    return false;
                };
                return seen.insert(name.to_owned())
                    && names_a_property(doc, &doc["components"]["schemas"][name], names, seen);
            }
            if let Some(Value::Object(props)) = map.get("properties")
                && props.keys().any(|k| names.contains(&k.as_str()))
            {
                return true;
            }
            map.values().any(|v| names_a_property(doc, v, names, seen))
        }
        Value::Array(items) => items.iter().any(|v| names_a_property(doc, v, names, seen)),
        _ => false,
    }
}

/// Every operation that takes a position (`moves` or `board`, in its query or its body) or
/// answers with best moves goes through the fair-play boundary, and ARCHITECTURE.md lists them
/// all: an operation added later fails here until it is on the list (and so through the
/// boundary).
#[test]
fn every_operation_about_a_position_is_on_the_fair_play_boundarys_list() {
    let doc = document();
    let architecture = include_str!("../../ARCHITECTURE.md");
    let list = architecture
        .split("### The fair-play boundary")
        .nth(1)
        .and_then(|rest| rest.split("\n#").next())
        .expect("ARCHITECTURE.md's section on the fair-play boundary");
    let mut about_positions = Vec::new();
    for (path, operations) in doc["paths"].as_object().expect("paths") {
        for (method, op) in operations.as_object().expect("operations") {
            let takes_query = op["parameters"].as_array().is_some_and(|ps| {
                ps.iter().any(|p| {
                    p["in"] == "query"
                        && ["moves", "board"].contains(&p["name"].as_str().unwrap_or(""))
                })
            });
            let takes_body = names_a_property(
                &doc,
                &op["requestBody"],
                &["moves", "board"],
                &mut BTreeSet::new(),
            );
            let answers = op["responses"].as_object().is_some_and(|rs| {
                rs.iter().any(|(status, r)| {
                    status.starts_with('2')
                        && names_a_property(&doc, r, &["best_moves"], &mut BTreeSet::new())
                })
            });
            if takes_query || takes_body || answers {
                about_positions.push(format!("`{} {path}`", method.to_uppercase()));
            }
        }
    }
    for op in [
        "`POST /v1/analysis`",
        "`POST /v1/analysis/jobs`",
        "`GET /v1/analysis/jobs/{job_id}`",
        "`GET /v1/matches/{id}/analysis`",
        "`GET /v1/explorer/{game}`",
    ] {
        assert!(
            about_positions.iter().any(|o| o == op),
            "{op} in {about_positions:?}"
        );
    }
    for op in &about_positions {
        assert!(
            list.contains(op.as_str()),
            "{op} takes or answers a position: put it through the fair-play boundary and on \
             ARCHITECTURE.md's list"
        );
    }
}
