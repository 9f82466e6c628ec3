//! `spawn_app()` and typed helpers over HTTP; workers are driven by hand (`run_workers`) with a
//! manual clock, so nothing ever sleeps.

use std::sync::Arc;

use api::config::EdgeConfig;
use discs::config::ServeConfig;
use discs::startup::Application;
use reqwest::StatusCode;
use serde_json::{Value, json};
use service::clock::ManualClock;
use service::config::{CoreConfig, DatabaseConfig, HistoryConfig};
use service::state::AppState;
use time::{Duration, OffsetDateTime};

pub struct TestApp {
    pub base: String,
    pub http: reqwest::Client,
    pub state: AppState,
    /// The HTTP edge's own state (token keys, rate limits).
    pub edge: api::state::ApiState,
    pub clock: Arc<ManualClock>,
    pub db_url: String,
    /// The test's database, dropped with the last instance that holds it.
    pub db: Option<Arc<database::testing::TestDb>>,
}

#[derive(Clone, Debug)]
pub struct Player {
    pub id: String,
    pub token: String,
}

/// A response: status and JSON body (`Value::Null` when the body is not JSON).
#[derive(Debug)]
pub struct Res {
    pub status: StatusCode,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl Res {
    /// The problem `code` of an error answer.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    /// Asserts a 429 `rate_limited` answer asking to wait `retry_after` seconds.
    #[track_caller]
    pub fn assert_rate_limited(&self, retry_after: &str) {
        assert_eq!(
            self.status,
            StatusCode::TOO_MANY_REQUESTS,
            "{:?}",
            self.body
        );
        assert_eq!(self.code(), "rate_limited");
        assert_eq!(self.headers["retry-after"], retry_after);
    }
}

/// Waits, without sleeping, until `n` sessions on the database at `db_url` wait for a lock that
/// `locks` picks (a condition on `pg_locks`), or `ended()` says that what would wait has ended.
pub async fn waiting_for_locks(db_url: &str, locks: &str, n: i64, ended: impl Fn() -> bool) {
    let client = database::testing::raw_client(db_url).await;
    let count = format!("SELECT count(*) FROM pg_locks WHERE NOT granted AND {locks}");
    for _ in 0..1_000_000 {
        if ended() {
            return;
        }
        let waiting: i64 = client
            .query_one(&count, &[])
            .await
            .expect("the locks read")
            .get(0);
        if waiting >= n {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("never {n} waiting on {locks}");
}

/// Shows the application's logs when `TEST_LOG` is set; silent otherwise.
pub fn init_logs() {
    if std::env::var_os("TEST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
            .with_test_writer()
            .try_init();
    }
}

pub fn config(db_url: &str) -> ServeConfig {
    let defaults = ServeConfig::defaults(db_url).expect("the shipped defaults");
    ServeConfig {
        core: CoreConfig {
            db: DatabaseConfig {
                pool_size: 8,
                ..defaults.core.db
            },
            no_workers: true,
            history: history_of(db_url, defaults.core.history),
            ..defaults.core
        },
        edge: EdgeConfig {
            addr: "127.0.0.1:0".into(),
            rate_per_second: 1000.0,
            rate_burst: 1000.0,
            anon_per_second: 1e9,
            anon_burst: 1e9,
            signups_per_minute: 1_000_000.0,
            http_workers: Some(2),
            ..defaults.edge
        },
    }
}

/// The signed checkpoints, their key and the ledger of closed accounts of the database at
/// `db_url`, in a folder of its own (instances on the same database share it, as a cluster's
/// would).
pub fn history_of(db_url: &str, defaults: HistoryConfig) -> HistoryConfig {
    let database = db_url.rsplit('/').next().unwrap_or("discs");
    defaults.under(&std::env::temp_dir().join("discs-tests").join(database))
}

/// The chance a test's instance draws from: a fixed seed, so that the coins and CPU seeds a test
/// meets (a wave's first mover, say) are the same on every run.
pub fn chance() -> Arc<service::chance::SeededChance> {
    Arc::new(service::chance::SeededChance::new(0x5EED))
}

/// The application on a fresh database.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// The application on a fresh database, its configuration changed by `change`.
pub async fn spawn_app_with(change: impl FnOnce(&mut ServeConfig)) -> TestApp {
    init_logs();
    let db = database::testing::TestDb::migrated(2).await;
    let mut config = config(&db.url);
    change(&mut config);
    let mut app = spawn_on(&db.url, config).await;
    app.db = Some(Arc::new(db));
    app
}

/// Another instance of the application, on a given database.
pub async fn spawn_on(db_url: &str, config: ServeConfig) -> TestApp {
    let start = OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .expect("valid");
    let clock = Arc::new(ManualClock::new(start));
    let app = Application::build_with(config, clock.clone(), chance())
        .await
        .expect("the application builds");
    let base = format!("http://127.0.0.1:{}", app.port());
    let state = app.state();
    let edge = app.edge();
    tokio::spawn(app.run_until_stopped());
    TestApp {
        base,
        http: reqwest::Client::new(),
        state,
        edge,
        clock,
        db_url: db_url.to_owned(),
        db: None,
    }
}

impl TestApp {
    pub async fn send(&self, req: reqwest::RequestBuilder) -> Res {
        let res = req.send().await.expect("the server answers");
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.bytes().await.expect("a body");
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Res {
            status,
            body,
            headers,
        }
    }

    pub async fn get(&self, path: &str, token: &str) -> Res {
        self.send(
            self.http
                .get(format!("{}{path}", self.base))
                .bearer_auth(token),
        )
        .await
    }

    /// [`TestApp::get`] asking for answers in `lang` (`Accept-Language`).
    pub async fn get_in(&self, lang: &str, path: &str, token: &str) -> Res {
        self.send(
            self.http
                .get(format!("{}{path}", self.base))
                .bearer_auth(token)
                .header("accept-language", lang),
        )
        .await
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> Res {
        self.send(
            self.http
                .post(format!("{}{path}", self.base))
                .bearer_auth(token)
                .json(&body),
        )
        .await
    }

    pub async fn player(&self, name: &str) -> Player {
        let res = self
            .send(
                self.http
                    .post(format!("{}/v1/players", self.base))
                    .json(&json!({ "name": name })),
            )
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
        Player {
            id: res.body["player_id"].as_str().expect("an id").to_owned(),
            token: res.body["token"].as_str().expect("a token").to_owned(),
        }
    }

    /// A player with an admin token.
    pub async fn admin(&self, name: &str) -> Player {
        let p = self.player(name).await;
        let id: domain::ids::PlayerId = p.id.parse().expect("a player id");
        let token = self
            .edge
            .keys
            .issue(id, api::auth::Role::Admin, 0, self.state.now())
            .expect("a token");
        Player { id: p.id, token }
    }

    pub async fn delete(&self, path: &str, token: &str) -> Res {
        self.send(
            self.http
                .delete(format!("{}{path}", self.base))
                .bearer_auth(token),
        )
        .await
    }

    /// Queues `a` then `b` in a pool and runs a wave; returns the ranked match they get and
    /// the player in seat 1 (who moves first) and in seat 2.
    pub async fn ranked_with(
        &self,
        a: &Player,
        b: &Player,
        game: &str,
    ) -> (String, Player, Player) {
        let body = json!({ "game": game });
        for p in [a, b] {
            let res = self.post("/v1/queue", &p.token, body.clone()).await;
            assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
        }
        // A minute of waiting widens both windows to any rating gap these tests make.
        self.clock.advance(Duration::seconds(60));
        assert_eq!(self.wave().await, 1, "one pair");
        let view = self.latest_match(a).await;
        let id = view["match_id"].as_str().expect("an id").to_owned();
        let first = view["seats"][0]["player_id"]
            .as_str()
            .expect("a human")
            .to_owned();
        if first == a.id {
            (id, a.clone(), b.clone())
        } else {
            (id, b.clone(), a.clone())
        }
    }

    /// The view of the match of `p`'s last matched ticket.
    pub async fn latest_match(&self, p: &Player) -> Value {
        let client = database::testing::raw_client(&self.db_url).await;
        let row = client
            .query_one(
                "SELECT match_id FROM queue_slots WHERE player_id = $1::text::uuid",
                &[&p.id],
            )
            .await
            .expect("a slot");
        let id: Option<uuid::Uuid> = row.get(0);
        self.view(p, &id.expect("matched").to_string()).await
    }

    /// Plays a Four in a Row match to the end: `first` stacks column 4, the other column 1
    /// (the first player wins at ply 7); or `first` loses when `first_wins` is false.
    pub async fn finish_four(
        &self,
        match_id: &str,
        first: &Player,
        second: &Player,
        first_wins: bool,
    ) {
        let (winner_col, loser_col) = ("4", "1");
        let moves: Vec<(&Player, &str)> = if first_wins {
            vec![
                (first, winner_col),
                (second, loser_col),
                (first, winner_col),
                (second, loser_col),
                (first, winner_col),
                (second, loser_col),
                (first, winner_col),
            ]
        } else {
            vec![
                (first, "7"),
                (second, winner_col),
                (first, "7"),
                (second, winner_col),
                (first, "6"),
                (second, winner_col),
                (first, "6"),
                (second, winner_col),
            ]
        };
        for (p, mv) in moves {
            let res = self.play(p, match_id, mv).await;
            assert_eq!(res.status, StatusCode::OK, "{mv}: {:?}", res.body);
        }
        assert_eq!(self.view(first, match_id).await["status"], "finished");
    }

    /// A solo match; returns its view.
    pub async fn solo(&self, p: &Player, game: &str, body: Value) -> Value {
        let mut b = body;
        b["game"] = json!(game);
        let res = self.post("/v1/matches", &p.token, b).await;
        assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
        res.body
    }

    /// The Prometheus text of `/metrics`, anonymous.
    pub async fn metrics_text(&self) -> String {
        self.metrics_text_as(None).await
    }

    /// The Prometheus text of `/metrics`, with `token` when given.
    pub async fn metrics_text_as(&self, token: Option<&str>) -> String {
        let mut req = self.http.get(format!("{}/metrics", self.base));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        let res = req.send().await.expect("metrics");
        assert_eq!(res.status(), StatusCode::OK);
        res.text().await.expect("text")
    }

    /// A solo Four in a Row match against CPU level 1, `p` to move first; its id.
    pub async fn solo_four(&self, p: &Player) -> String {
        let view = self
            .solo(p, "four_in_a_row", json!({"cpu_level": 1, "first": "me"}))
            .await;
        view["match_id"].as_str().expect("an id").to_owned()
    }

    pub async fn play(&self, p: &Player, match_id: &str, mv: &str) -> Res {
        self.post(
            &format!("/v1/matches/{match_id}/moves"),
            &p.token,
            json!({ "move": mv }),
        )
        .await
    }

    /// A move with an `Idempotency-Key`.
    pub async fn keyed_move(&self, p: &Player, match_id: &str, mv: &str, key: &str) -> Res {
        self.send(
            self.http
                .post(format!("{}/v1/matches/{match_id}/moves", self.base))
                .bearer_auth(&p.token)
                .header("idempotency-key", key)
                .json(&json!({ "move": mv })),
        )
        .await
    }

    pub async fn view(&self, p: &Player, match_id: &str) -> Value {
        let res = self.get(&format!("/v1/matches/{match_id}"), &p.token).await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
        res.body
    }

    pub async fn events(&self, p: &Player, match_id: &str) -> Vec<Value> {
        let res = self
            .get(&format!("/v1/matches/{match_id}/events"), &p.token)
            .await;
        assert_eq!(res.status, StatusCode::OK, "{:?}", res.body);
        res.body["events"].as_array().cloned().unwrap_or_default()
    }

    /// A room with two members: host and guest.
    pub async fn room(&self, host: &Player, guest: &Player, game: &str, settings: Value) -> Value {
        let res = self
            .post(
                "/v1/rooms",
                &host.token,
                json!({"game": game, "settings": settings}),
            )
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
        let code = res.body["code"].as_str().expect("a code").to_owned();
        let joined = self
            .post(&format!("/v1/rooms/{code}/join"), &guest.token, json!({}))
            .await;
        assert_eq!(joined.status, StatusCode::OK, "{:?}", joined.body);
        joined.body
    }

    /// Starts a match in a fresh room of `host` (seat 1, moves first) and `guest`; returns its
    /// id.
    pub async fn room_match(&self, host: &Player, guest: &Player, game: &str) -> String {
        self.room_match_with(host, guest, game, json!({})).await
    }

    /// [`TestApp::room_match`] with room settings.
    pub async fn room_match_with(
        &self,
        host: &Player,
        guest: &Player,
        game: &str,
        settings: Value,
    ) -> String {
        let room = self.room(host, guest, game, settings).await;
        let room_id = room["room_id"].as_str().expect("a room id");
        let started = self
            .post(
                &format!("/v1/rooms/{room_id}/matches"),
                &host.token,
                json!({}),
            )
            .await;
        assert_eq!(started.status, StatusCode::CREATED, "{:?}", started.body);
        started.body["match_id"]
            .as_str()
            .expect("a match id")
            .to_owned()
    }

    /// `POST /v1/analysis` with `body`, and `?budget_ms=` when given.
    pub async fn analyse(&self, p: &Player, body: Value, budget_ms: Option<i64>) -> Res {
        let path = match budget_ms {
            Some(ms) => format!("/v1/analysis?budget_ms={ms}"),
            None => "/v1/analysis".to_owned(),
        };
        self.post(&path, &p.token, body).await
    }

    /// Moves the clock and runs the background work until nothing is due.
    pub async fn advance(&self, seconds: i64) {
        self.clock.advance(Duration::seconds(seconds));
        self.run_workers().await;
    }

    /// Brings every projection up to the committed log.
    pub async fn project(&self) -> u64 {
        self.state
            .projections
            .sync_all()
            .await
            .expect("projections catch up")
    }

    /// Catches the queue projection up, then runs one wave over every pool.
    pub async fn wave(&self) -> usize {
        self.project().await;
        let reports = service::ranked::run_waves(&self.state.ranked)
            .await
            .expect("the wave runs");
        reports.values().map(|r| r.paired).sum()
    }

    pub async fn run_workers(&self) -> usize {
        service::workers::run_until_idle(&self.state)
            .await
            .expect("workers run")
    }
}

/// The event types of a list of events.
pub fn types(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or(""))
        .collect()
}

/// A private PostgreSQL cluster of this test alone, which it can stop and start.
pub struct Private {
    pub root: std::path::PathBuf,
    pub port: u16,
}

impl Private {
    /// Starts the cluster; the URL of its database `postgres` (with its password).
    pub async fn start(&self) -> String {
        // Port 1 never has a PostgreSQL on it, so a private cluster serves.
        let (root, port) = (self.root.clone(), self.port);
        tokio::task::spawn_blocking(move || {
            database::cluster::ensure_server_on(
                "postgres://postgres@127.0.0.1:1/postgres",
                &root,
                port,
            )
        })
        .await
        .expect("joined")
        .expect("the private cluster runs")
        .url()
        .to_owned()
    }

    pub async fn stop(&self) {
        let root = self.root.clone();
        tokio::task::spawn_blocking(move || database::cluster::stop(&root))
            .await
            .expect("joined")
            .expect("the private cluster stops");
    }
}

/// A port nothing listens on, below Linux's ephemeral range (32768–60999): a client
/// connection cannot take it between the cluster's stop and its restart. Each call of the
/// process starts its search further on, so that tests running at once do not pick the same
/// port before either binds it.
pub fn free_port() -> u16 {
    static CALLS: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let first = 20_000 + ((std::process::id() as u16 % 10_000) + call * 16) % 12_000;
    (first..32_000)
        .chain(20_000..first)
        .find(|&port| std::net::TcpListener::bind(("127.0.0.1", port)).is_ok())
        .expect("a free port below 32000")
}
