//! Players and tokens: sign-up, profile, refresh, and every way a token is refused.

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::StatusCode;
use serde_json::json;

use api::auth::{Claims, Role};

use crate::helpers::spawn_app;

#[tokio::test]
async fn a_new_player_gets_a_token_that_opens_their_profile() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let res = app
        .get(&format!("/v1/players/{}", ada.id), &ada.token)
        .await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body["name"], "Ada");
    let r = &res.body["ratings"]["reversi"];
    assert_eq!(
        (r["rating"].as_f64(), r["deviation"].as_f64()),
        (Some(1500.0), Some(350.0))
    );
    assert_eq!(
        (r["games"].as_u64(), r["provisional"].as_bool()),
        (Some(0), Some(true))
    );
}

#[tokio::test]
async fn names_must_have_one_to_thirty_two_characters_none_that_reorder_text() {
    let app = spawn_app().await;
    for (body, status) in [
        (json!({"name": ""}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"name": "   "}), StatusCode::UNPROCESSABLE_ENTITY),
        (
            json!({"name": "x".repeat(33)}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (json!({"name": 7}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({}), StatusCode::UNPROCESSABLE_ENTITY),
        (
            json!({"name": "Ada", "admin": true}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        // Control characters, and characters that reorder the text shown around a name.
        (
            json!({"name": "Ada\u{7}"}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"name": "Ada\u{202E}nimda"}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"name": "\u{2067}Ada"}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"name": "Ada\u{200F}"}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        // Characters that show as nothing: "Ada" and "A\u{200B}da" would read the same.
        (
            json!({"name": "A\u{200B}da"}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"name": "\u{3164}"}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"name": "Ada\u{AD}"}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
    ] {
        let res = app
            .send(
                app.http
                    .post(format!("{}/v1/players", app.base))
                    .json(&body),
            )
            .await;
        assert_eq!(res.status, status, "{body}");
        assert_eq!(res.code(), "invalid_request");
    }
    let res = app
        .send(
            app.http
                .post(format!("{}/v1/players", app.base))
                .header("content-type", "application/json")
                .body("{\"name\": "),
        )
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST);
    assert_eq!(res.code(), "invalid_request");
    assert!(
        app.player(&"é".repeat(32)).await.id.len() > 10,
        "32 characters, not bytes"
    );
}

#[tokio::test]
async fn a_valid_token_is_traded_for_a_fresh_one() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let res = app.post("/v1/tokens/refresh", &ada.token, json!({})).await;
    assert_eq!(res.status, StatusCode::OK);
    let fresh = res.body["token"].as_str().expect("a token");
    let me = app.get(&format!("/v1/players/{}", ada.id), fresh).await;
    assert_eq!(me.status, StatusCode::OK);
}

fn sign(claims: &Claims, secret: &[u8]) -> String {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret).expect("a key"),
    )
    .expect("signed")
}

#[tokio::test]
async fn expired_malformed_forged_unsigned_and_foreign_tokens_get_401() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let claims = |exp: i64, aud: &str| Claims {
        sub: ada.id.clone(),
        role: Role::Player,
        iat: now - 10,
        exp,
        aud: aud.to_owned(),
        r#gen: 0,
    };
    let config = crate::helpers::config(&app.db_url);
    let file = discs::startup::secret_file(&config.edge.auth, &config.core.db);
    let secret = api::auth::load_secret(&app.state.pool, None, &file)
        .await
        .expect("the secret");
    // Sanity: a token we sign with the server's secret works.
    let good = sign(&claims(now + 600, "discs"), &secret);
    assert_eq!(
        app.get(&format!("/v1/players/{}", ada.id), &good)
            .await
            .status,
        StatusCode::OK
    );

    let expired = sign(&claims(now - 3600, "discs"), &secret);
    let foreign = sign(&claims(now + 600, "elsewhere"), &secret);
    let forged = sign(
        &claims(now + 600, "discs"),
        b"not the server's secret at all!!",
    );
    let header = base64url(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = base64url(
        serde_json::to_string(&claims(now + 600, "discs"))
            .expect("json")
            .as_bytes(),
    );
    let unsigned = format!("{header}.{payload}.");
    for token in [
        expired,
        foreign,
        forged,
        unsigned,
        "garbage".to_owned(),
        String::new(),
    ] {
        let res = app.get(&format!("/v1/players/{}", ada.id), &token).await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{token}");
        assert_eq!(res.code(), "unauthorized");
        assert_eq!(
            res.headers
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("application/problem+json")
        );
    }
    let none = app
        .send(app.http.get(format!("{}/v1/players/{}", app.base, ada.id)))
        .await;
    assert_eq!(none.status, StatusCode::UNAUTHORIZED);
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

#[tokio::test]
async fn the_generated_secret_survives_a_restart_and_works_on_another_instance() {
    let app = spawn_app().await;
    let ada = app.player("Ada").await;
    let other = crate::helpers::spawn_on(&app.db_url, crate::helpers::config(&app.db_url)).await;
    let res = other
        .get(&format!("/v1/players/{}", ada.id), &ada.token)
        .await;
    assert_eq!(res.status, StatusCode::OK);
}

/// An application whose players may make three state-changing calls, then one per 100 s.
async fn three_calls_app() -> (crate::helpers::TestApp, database::testing::TestDb) {
    let db = database::testing::TestDb::migrated(2).await;
    let mut config = crate::helpers::config(&db.url);
    config.edge.rate_per_second = 0.01;
    config.edge.rate_burst = 3.0;
    (crate::helpers::spawn_on(&db.url, config).await, db)
}

#[tokio::test]
async fn state_changing_calls_beyond_the_rate_limit_get_429_with_retry_after() {
    let (app, _db) = three_calls_app().await;
    let ada = app.player("Ada").await;
    let mut statuses = Vec::new();
    for _ in 0..4 {
        let res = app
            .post("/v1/rooms", &ada.token, json!({"game": "reversi"}))
            .await;
        statuses.push(res.status);
        if res.status == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(res.code(), "rate_limited");
            assert!(res.headers.get("retry-after").is_some());
        }
    }
    assert_eq!(
        statuses,
        [
            StatusCode::CREATED,
            StatusCode::CREATED,
            StatusCode::CREATED,
            StatusCode::TOO_MANY_REQUESTS
        ]
    );
}

/// Every operation of the served document that changes state (not `GET`) and needs a token,
/// called with a spent bucket, is refused 429 before it does anything: an admin's for the
/// admin's routes, a player's for the others, every id in the path a fresh one.
#[tokio::test]
async fn every_state_changing_operation_takes_the_callers_rate_bucket() {
    let (app, _db) = three_calls_app().await;
    let (ada, admin) = (app.player("Ada").await, app.admin("Arbiter").await);
    for p in [&ada, &admin] {
        for _ in 0..3 {
            let res = app.get(&format!("/v1/players/{}", p.id), &p.token).await;
            assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
        }
    }
    let doc = app
        .send(app.http.get(format!("{}/openapi.json", app.base)))
        .await
        .body;
    let mut called = 0;
    for (path, methods) in doc["paths"].as_object().expect("paths") {
        for (method, op) in methods.as_object().expect("methods") {
            if method == "get" || op["security"].is_null() {
                continue;
            }
            let token = if path.starts_with("/v1/admin/") {
                &admin.token
            } else {
                &ada.token
            };
            let url: String = path
                .split('/')
                .map(|part| match part.starts_with('{') {
                    true => uuid::Uuid::new_v4().to_string(),
                    false => part.to_owned(),
                })
                .collect::<Vec<_>>()
                .join("/");
            let method =
                reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).expect("a method");
            let res = app
                .send(
                    app.http
                        .request(method.clone(), format!("{}{url}", app.base))
                        .bearer_auth(token)
                        .json(&json!({})),
                )
                .await;
            assert_eq!(
                (res.status, res.code()),
                (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
                "{method} {path}: {:?}",
                res.body
            );
            called += 1;
        }
    }
    assert!(called >= 30, "{called} operations");
}

#[tokio::test]
async fn authenticated_reads_take_the_players_rate_bucket_too() {
    let (app, _db) = three_calls_app().await;
    let (ada, bob) = (app.player("Ada").await, app.player("Bob").await);
    let me = format!("/v1/players/{}", ada.id);
    for _ in 0..2 {
        let res = app.get(&me, &ada.token).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    }
    // Two reads and a write fill the bucket of three; the next read and write are refused.
    let res = app
        .post("/v1/rooms", &ada.token, json!({"game": "reversi"}))
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    app.get(&me, &ada.token).await.assert_rate_limited("100");
    let res = app
        .post("/v1/rooms", &ada.token, json!({"game": "reversi"}))
        .await;
    assert_eq!(res.status, StatusCode::TOO_MANY_REQUESTS, "{:?}", res.body);
    // Another player's reads have their own bucket.
    assert_eq!(app.get(&me, &bob.token).await.status, StatusCode::OK);
}

#[tokio::test]
async fn a_fresh_token_shares_its_players_rate_limit() {
    let (app, _db) = three_calls_app().await;
    let ada = app.player("Ada").await;
    for _ in 0..2 {
        let res = app
            .post("/v1/rooms", &ada.token, json!({"game": "reversi"}))
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    }
    // The refresh is the third call; the new token's call is the fourth of the same bucket.
    let refreshed = app.post("/v1/tokens/refresh", &ada.token, json!({})).await;
    assert_eq!(refreshed.status, StatusCode::OK, "{:?}", refreshed.body);
    let token = refreshed.body["token"].as_str().expect("a token");
    let res = app
        .post("/v1/rooms", token, json!({"game": "reversi"}))
        .await;
    assert_eq!(res.status, StatusCode::TOO_MANY_REQUESTS, "{:?}", res.body);
    assert_eq!(res.code(), "rate_limited");
}

#[tokio::test]
async fn sign_ups_beyond_the_limit_per_address_get_429_with_retry_after() {
    let db = database::testing::TestDb::migrated(2).await;
    let mut config = crate::helpers::config(&db.url);
    config.edge.signups_per_minute = 2.0;
    let app = crate::helpers::spawn_on(&db.url, config).await;
    app.player("Ada").await;
    app.player("Bob").await;
    let res = app
        .send(
            app.http
                .post(format!("{}/v1/players", app.base))
                .json(&json!({"name": "Cid"})),
        )
        .await;
    assert_eq!(res.status, StatusCode::TOO_MANY_REQUESTS, "{:?}", res.body);
    assert_eq!(res.code(), "rate_limited");
    assert_eq!(
        res.headers.get("retry-after").and_then(|v| v.to_str().ok()),
        Some("30")
    );
    let metrics = app.metrics_text().await;
    assert!(
        metrics.contains("discs_rate_limited_total{limit=\"signup\"} 1\n"),
        "{metrics}"
    );
    assert!(metrics.contains("discs_rate_limit_burst{limit=\"signup\"} 2\n"));
}

/// A token of the fixture's external issuer (ES256) with these claims.
fn external_token(claims: &serde_json::Value) -> String {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
    let private =
        std::fs::read(format!("{fixtures}/issuer-es256-private.pem")).expect("the fixture");
    jsonwebtoken::encode(
        &Header::new(Algorithm::ES256),
        claims,
        &EncodingKey::from_ec_pem(&private).expect("an EC key"),
    )
    .expect("signed")
}

#[tokio::test]
async fn an_external_issuers_es256_tokens_are_accepted_when_its_key_is_configured() {
    let db = database::testing::TestDb::migrated(2).await;
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
    let mut config = crate::helpers::config(&db.url);
    config.edge.auth.jwt_public_key_file =
        Some(format!("{fixtures}/issuer-es256-public.pem").into());
    config.edge.auth.jwt_issuer = Some("https://id.example".into());
    let app = crate::helpers::spawn_on(&db.url, config).await;
    let ada = app.player("Ada").await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let claims = |iss: &str, aud: &str| {
        // An admin role claim: not trusted, the configured role (player) applies.
        json!({"sub": ada.id, "role": "admin", "iat": now, "exp": now + 600, "iss": iss, "aud": aud})
    };
    let token = external_token(&claims("https://id.example", "discs"));
    let res = app.get(&format!("/v1/players/{}", ada.id), &token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let res = app.get("/v1/admin/flags", &token).await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{:?}", res.body);
    // Not refreshable into a token of ours.
    let res = app.post("/v1/tokens/refresh", &token, json!({})).await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{:?}", res.body);
    // Another issuer, another audience, no issuer: refused.
    for bad in [
        claims("https://evil.example", "discs"),
        claims("https://id.example", "other"),
        json!({"sub": ada.id, "exp": now + 600, "aud": "discs"}),
    ] {
        let res = app
            .get(&format!("/v1/players/{}", ada.id), &external_token(&bad))
            .await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{bad}");
    }

    // Without the key configured, the same token is refused.
    let plain = crate::helpers::spawn_on(&db.url, crate::helpers::config(&db.url)).await;
    let res = plain.get(&format!("/v1/players/{}", ada.id), &token).await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);

    // Once her account is closed, the issuer's tokens end with it: no request, no queue.
    let admin = app.admin("Arbiter").await;
    let closed = app
        .post(
            &format!("/v1/admin/players/{}/close", ada.id),
            &admin.token,
            json!({}),
        )
        .await;
    assert_eq!(closed.status, StatusCode::OK, "{:?}", closed.body);
    let fresh = external_token(&claims("https://id.example", "discs"));
    for res in [
        app.get(&format!("/v1/players/{}", ada.id), &fresh).await,
        app.post("/v1/queue", &fresh, json!({"game": "four_in_a_row"}))
            .await,
    ] {
        assert_eq!(
            (res.status, res.code()),
            (StatusCode::UNAUTHORIZED, "unauthorized"),
            "{:?}",
            res.body
        );
    }
    // Another player's external tokens still serve.
    let bob = app.player("Bob").await;
    let bobs = external_token(
        &json!({"sub": bob.id, "iat": now, "exp": now + 600, "iss": "https://id.example", "aud": "discs"}),
    );
    let res = app.get(&format!("/v1/players/{}", bob.id), &bobs).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
}

#[tokio::test]
async fn a_sign_up_retried_with_its_idempotency_key_finds_the_player_it_created() {
    let app = spawn_app().await;
    let sign_up = |key: Option<&str>, name: &str| {
        let mut req = app
            .http
            .post(format!("{}/v1/players", app.base))
            .json(&json!({ "name": name }));
        if let Some(key) = key {
            req = req.header("idempotency-key", key);
        }
        app.send(req)
    };
    let key = "3f6b1c7e-5d2a-4c8e-9b1f-0a7d6e5c4b3a";
    // The key is a secret: a short or regular one is refused, in the asker's language.
    let weak = sign_up(Some("3f6b1c7e-signup"), "Ada").await;
    assert_eq!(
        weak.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{:?}",
        weak.body
    );
    assert!(
        weak.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("secret")),
        "{:?}",
        weak.body
    );
    let first = sign_up(Some(key), "Ada").await;
    assert_eq!(first.status, StatusCode::CREATED, "{:?}", first.body);
    let again = sign_up(Some(key), "Ada").await;
    assert_eq!(again.status, StatusCode::CREATED, "{:?}", again.body);
    assert_eq!(again.body["player_id"], first.body["player_id"]);
    assert_eq!(again.body["name"], "Ada");
    // The retry's token is the same player's.
    let id = first.body["player_id"].as_str().expect("an id");
    let token = again.body["token"].as_str().expect("a token");
    let me = app.get(&format!("/v1/players/{id}"), token).await;
    assert_eq!(me.status, StatusCode::OK, "{:?}", me.body);
    assert_eq!(me.body["name"], "Ada");
    // The key with another request is refused and creates nobody.
    let other = sign_up(Some(key), "Bob").await;
    assert_eq!(other.status, StatusCode::CONFLICT, "{:?}", other.body);
    assert_eq!(other.code(), "idempotency_key_reused");
    // Without a key, each sign-up is a new player.
    let (a, b) = (sign_up(None, "Ada").await, sign_up(None, "Ada").await);
    assert_ne!(a.body["player_id"], b.body["player_id"]);
    assert_ne!(a.body["player_id"], first.body["player_id"]);
    let players: i64 = app
        .state
        .pool
        .get()
        .await
        .expect("a connection")
        .query_one("SELECT count(*) FROM players", &[])
        .await
        .expect("a count")
        .get(0);
    assert_eq!(players, 3);

    // Once the key's record is purged (a day later), the key is spent: it never mints a token
    // for the player it created, and it creates nobody.
    app.clock.advance(time::Duration::hours(25));
    service::workers::purge_answers(&app.state)
        .await
        .expect("the purge runs");
    let late = sign_up(Some(key), "Ada").await;
    assert_eq!(late.status, StatusCode::CONFLICT, "{:?}", late.body);
    assert_eq!(late.code(), "idempotency_key_reused");
    assert!(late.body.get("token").is_none());
    let late = sign_up(Some(key), "Ada").await;
    assert_eq!(late.code(), "idempotency_key_reused", "and again");
}

#[tokio::test]
async fn calls_without_a_token_beyond_the_limit_per_address_get_429_but_probes_do_not() {
    let app = crate::helpers::spawn_app_with(|c| {
        c.edge.anon_per_second = 0.01;
        c.edge.anon_burst = 2.0;
    })
    .await;
    let get = |path: &str| app.send(app.http.get(format!("{}{path}", app.base)));
    assert_eq!(get("/v1/games").await.status, StatusCode::OK);
    assert_eq!(get("/openapi.json").await.status, StatusCode::OK);
    let refused = get("/docs").await;
    assert_eq!(
        refused.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{:?}",
        refused.body
    );
    assert_eq!(refused.code(), "rate_limited");
    assert!(refused.headers.contains_key("retry-after"));
    // The health probes are not limited; a player's calls have their own bucket.
    assert_eq!(get("/healthz").await.status, StatusCode::OK);
    assert_eq!(get("/readyz").await.status, StatusCode::OK);
    let ada = app.player("Ada").await;
    let me = app
        .get(&format!("/v1/players/{}", ada.id), &ada.token)
        .await;
    assert_eq!(me.status, StatusCode::OK, "{:?}", me.body);
    let counted = app.edge.anonymous.stats();
    assert_eq!((counted.0, counted.1, counted.2), (0.01, 2.0, 1));
}

/// A sign-up through a proxy that says it forwards `forwarded`.
async fn sign_up_forwarded(app: &crate::helpers::TestApp, forwarded: &str) -> crate::helpers::Res {
    app.send(
        app.http
            .post(format!("{}/v1/players", app.base))
            .header("x-forwarded-for", forwarded)
            .json(&json!({"name": "Ada"})),
    )
    .await
}

#[tokio::test]
async fn behind_a_trusted_proxy_sign_ups_count_per_forwarded_address() {
    let sign_up = sign_up_forwarded;
    // The tests' client connects from 127.0.0.1: here it is the trusted proxy.
    let app = crate::helpers::spawn_app_with(|c| {
        c.edge.signups_per_minute = 1.0;
        c.edge.trusted_proxies = vec![api::config::Cidr::parse("127.0.0.0/8").expect("a block")];
    })
    .await;
    assert_eq!(
        sign_up(&app, "203.0.113.5").await.status,
        StatusCode::CREATED
    );
    // The same client again, whatever it forged on the left of the proxy's entry.
    let again = sign_up(&app, "198.51.100.1, 203.0.113.5").await;
    assert_eq!(again.code(), "rate_limited", "{:?}", again.body);
    // Another client behind the same proxy has its own bucket; IPv6 ones count by their /64.
    assert_eq!(
        sign_up(&app, "203.0.113.6").await.status,
        StatusCode::CREATED
    );
    assert_eq!(
        sign_up(&app, "2001:db8::1").await.status,
        StatusCode::CREATED
    );
    assert_eq!(sign_up(&app, "2001:db8::2").await.code(), "rate_limited");

    // Without trusted proxies the header is not read: every caller here is 127.0.0.1.
    let plain = crate::helpers::spawn_app_with(|c| c.edge.signups_per_minute = 1.0).await;
    assert_eq!(
        sign_up(&plain, "203.0.113.5").await.status,
        StatusCode::CREATED
    );
    assert_eq!(sign_up(&plain, "203.0.113.6").await.code(), "rate_limited");
}

#[tokio::test]
async fn the_token_secret_leaves_the_database_for_a_file_only_its_owner_reads() {
    use std::os::unix::fs::PermissionsExt;
    let db = database::testing::TestDb::migrated(2).await;
    // An earlier version kept its secret in the database: its tokens must stay valid.
    let legacy = [7u8; 32];
    let client = database::testing::raw_client(&db.url).await;
    client
        .execute(
            "INSERT INTO server_secrets (name, secret) VALUES ('jwt_hs256', $1)",
            &[&legacy.as_slice()],
        )
        .await
        .expect("planted");
    let dir = std::env::temp_dir().join(format!("discs-secret-{}", uuid::Uuid::new_v4()));
    let file = dir.join("jwt-secret");
    let mut config = crate::helpers::config(&db.url);
    config.edge.auth.jwt_secret_file = Some(file.clone());
    let app = crate::helpers::spawn_on(&db.url, config.clone()).await;

    let kept = std::fs::read_to_string(&file).expect("the secret's file");
    let hex: String = legacy.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(kept.trim(), hex);
    let mode = std::fs::metadata(&file)
        .expect("its metadata")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let mode = std::fs::metadata(&dir)
        .expect("its folder")
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    let rows = client
        .query("SELECT name FROM server_secrets", &[])
        .await
        .expect("read");
    assert!(rows.is_empty(), "the database keeps no secret");

    // A token signed with the old secret works, and a second instance reads the same file.
    let ada = app.player("Ada").await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let old = sign(
        &Claims {
            sub: ada.id.clone(),
            role: Role::Player,
            iat: now,
            exp: now + 600,
            aud: "discs".to_owned(),
            r#gen: 0,
        },
        &legacy,
    );
    let other = crate::helpers::spawn_on(&db.url, config).await;
    for instance in [&app, &other] {
        let res = instance.get(&format!("/v1/players/{}", ada.id), &old).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
        let res = instance
            .get(&format!("/v1/players/{}", ada.id), &ada.token)
            .await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    }

    // A fresh start with no secret anywhere generates one into a new file.
    let fresh_db = database::testing::TestDb::migrated(2).await;
    let fresh_file = dir.join("fresh").join("jwt-secret");
    let mut config = crate::helpers::config(&fresh_db.url);
    config.edge.auth.jwt_secret_file = Some(fresh_file.clone());
    let fresh = crate::helpers::spawn_on(&fresh_db.url, config).await;
    let kept = std::fs::read_to_string(&fresh_file).expect("generated");
    assert_eq!(kept.trim().len(), 64);
    assert_ne!(kept.trim(), hex);
    let bob = fresh.player("Bob").await;
    let res = fresh
        .get(&format!("/v1/players/{}", bob.id), &bob.token)
        .await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    // A file that is not a secret stops the start with a message, not a fallback.
    std::fs::write(&fresh_file, "short\n").expect("spoiled");
    let err = api::auth::load_secret(&fresh.state.pool, None, &fresh_file)
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("hexadecimal"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `POST path` with a bearer token and an `Idempotency-Key`.
async fn keyed_post(
    app: &crate::helpers::TestApp,
    path: &str,
    token: &str,
    key: &str,
) -> crate::helpers::Res {
    app.send(
        app.http
            .post(format!("{}{path}", app.base))
            .bearer_auth(token)
            .header("Idempotency-Key", key)
            .json(&json!({"scope": "everywhere"})),
    )
    .await
}

#[tokio::test]
async fn ended_tokens_are_refused_at_once_on_every_instance() {
    let app = spawn_app().await;
    let other = crate::helpers::spawn_on(&app.db_url, crate::helpers::config(&app.db_url)).await;
    let (ada, bob, admin) = (
        app.player("Ada").await,
        app.player("Bob").await,
        app.admin("Root").await,
    );
    // Ada's second device: a refreshed token.
    let res = app.post("/v1/tokens/refresh", &ada.token, json!({})).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let second = res.body["token"].as_str().expect("a token").to_owned();
    let profile = |p: &str| format!("/v1/players/{p}");
    // Both instances have read (and cached) Ada's and Bob's generations.
    for instance in [&app, &other] {
        for token in [&ada.token, &second, &bob.token] {
            let res = instance.get(&profile(&ada.id), token).await;
            assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
        }
    }

    // Ada signs out everywhere, on the first instance: a fresh token for this device.
    // Said in so many words: a body without it ends nothing.
    let res = app.post("/v1/tokens/revoke", &ada.token, json!({})).await;
    assert_eq!(
        res.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{:?}",
        res.body
    );
    let ended = keyed_post(&app, "/v1/tokens/revoke", &ada.token, "sign-out-1").await;
    assert_eq!(ended.status, StatusCode::OK, "{:?}", ended.body);
    assert_eq!(ended.body["generation"], 1);
    let fresh = ended.body["token"].as_str().expect("a token").to_owned();
    assert!(
        other.edge.generations.caught_up().await,
        "the listener listens"
    );
    for instance in [&app, &other] {
        for token in [&ada.token, &second] {
            let res = instance.get(&profile(&ada.id), token).await;
            assert_eq!(
                (res.status, res.code()),
                (StatusCode::UNAUTHORIZED, "unauthorized"),
                "{:?}",
                res.body
            );
        }
        let res = instance.get(&profile(&ada.id), &fresh).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    }
    // The stored answer holds no token (no stored answer does): the generation it reached.
    let client = database::testing::raw_client(&app.db_url).await;
    let stored: String = client
        .query_one(
            "SELECT body FROM idempotency_keys WHERE key = 'sign-out-1'",
            &[],
        )
        .await
        .expect("the stored answer")
        .get(0);
    assert_eq!(stored, r#"{"generation":1}"#);
    let tokens: i64 = client
        .query_one(
            "SELECT count(*) FROM idempotency_keys WHERE strpos(body, $1) > 0",
            &[&fresh.split('.').nth(1).expect("a JWT's claims")],
        )
        .await
        .expect("counted")
        .get(0);
    assert_eq!(tokens, 0);
    // The retry of the sign-out gets its answer although its token has ended: a token minted
    // again at that generation (later, so another token), which works as the first does;
    // without its key, the ended token is refused.
    other.advance(5).await;
    let retry = keyed_post(&other, "/v1/tokens/revoke", &ada.token, "sign-out-1").await;
    assert_eq!(retry.status, StatusCode::OK, "{:?}", retry.body);
    assert_eq!(retry.body["generation"], ended.body["generation"]);
    let again = retry.body["token"].as_str().expect("a token").to_owned();
    assert_ne!(again, fresh);
    for instance in [&app, &other] {
        let res = instance.get(&profile(&ada.id), &again).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    }
    let res = keyed_post(&other, "/v1/tokens/revoke", &ada.token, "sign-out-2").await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{:?}", res.body);
    // A refresh of the fresh token carries its generation.
    let res = other.post("/v1/tokens/refresh", &fresh, json!({})).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    let refreshed = res.body["token"].as_str().expect("a token").to_owned();
    let res = app.get(&profile(&ada.id), &refreshed).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);

    // An admin ends Bob's tokens on the second instance; a player may not.
    let path = format!("/v1/admin/players/{}/tokens/revoke", bob.id);
    let res = keyed_post(&app, &path, &fresh, "not-mine").await;
    assert_eq!(
        (res.status, res.code()),
        (StatusCode::FORBIDDEN, "forbidden")
    );
    let res = keyed_post(&other, &path, &admin.token, "bob-1").await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
    assert_eq!(res.body["player_id"], bob.id.as_str());
    assert!(app.edge.generations.caught_up().await);
    for instance in [&app, &other] {
        let res = instance.get(&profile(&bob.id), &bob.token).await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{:?}", res.body);
    }
    let res = keyed_post(
        &app,
        "/v1/admin/players/00000000-0000-0000-0000-000000000000/tokens/revoke",
        &admin.token,
        "nobody",
    )
    .await;
    assert_eq!(res.status, StatusCode::NOT_FOUND, "{:?}", res.body);
    // An admin's own tokens end through the call that gives the device a fresh one.
    let own = format!("/v1/admin/players/{}/tokens/revoke", admin.id);
    let res = keyed_post(&app, &own, &admin.token, "mine").await;
    assert_eq!(res.code(), "invalid_request", "{:?}", res.body);
    let res = app.get(&profile(&bob.id), &admin.token).await;
    assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
}
