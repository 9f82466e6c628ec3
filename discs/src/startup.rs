//! Start-up in one shape: `Application::build(config)` finds the database (starting a private
//! PostgreSQL where none answers), migrates, binds the listener and starts the workers;
//! `run_until_signalled` serves until SIGTERM or SIGINT and shuts down gracefully.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use actix_web::dev::{Server, Service};
use actix_web::http::header;
use actix_web::{App, HttpResponse, HttpServer, web};
use futures_util::FutureExt;
use tracing::Instrument;

use crate::config::ServeConfig;
use api::auth::Keys;
use api::error::ApiError;
use api::lang::Lang;
use api::ratelimit::RateLimiter;
use api::state::ApiState;
use api::tokens::Generations;
use api::{requests, routes};
use service::aggregates::Kept;
use service::analysis::Analyses;
use service::analysis::queue::Jobs;
use service::chance::{Chance, SystemChance};
use service::clock::{Clock, SystemClock};
use service::core::Core;
use service::history::History;
use service::live::LivePath;
use service::live::cache::MatchCache;
use service::live::commit::Committer;
use service::live::fanout::Live;
use service::metrics::Metrics;
use service::ranked::Ranked;
use service::replicas::Replicas;
use service::searches::Searches;
use service::state::AppState;
use service::workers;

pub struct Application {
    port: u16,
    server: Server,
    state: AppState,
    /// What the HTTP edge holds besides the state: token keys and rate limits.
    edge: ApiState,
    /// Set on shutdown (see [`AppState::stopping`]).
    stop: watch::Sender<bool>,
    /// The background loops that hold leases (workers, waves), awaited on shutdown.
    background: Vec<JoinHandle<()>>,
    grace: Duration,
}

impl Application {
    /// Builds the application on the system clock and the operating system's chance.
    pub async fn build(config: ServeConfig) -> anyhow::Result<Application> {
        Self::build_with(config, Arc::new(SystemClock), Arc::new(SystemChance)).await
    }

    /// Builds the application with a given clock and chance (tests move a manual clock and draw
    /// from a seed): the database, the shared state, the HTTP server on its listener, then the
    /// background work.
    pub async fn build_with(
        config: ServeConfig,
        clock: Arc<dyn Clock>,
        chance: Arc<dyn Chance>,
    ) -> anyhow::Result<Application> {
        // The catalogue's texts are data files: a build with one that does not parse never serves.
        api::texts::check()?;
        if config.core.idempotency_hours < 24 {
            anyhow::bail!(
                "DISCS_IDEMPOTENCY_HOURS must be at least 24 (the API promises a day), not {}",
                config.core.idempotency_hours
            );
        }
        let url = database::locate(&config.core.db.url, &config.core.db.data_dir()).await?;
        let pool = database::connect(&url, config.core.db.pool_size).await?;
        database::migrate_pending(&pool).await?;
        // The checkpoints' signer, for this database's log (its identity names the folder).
        let history = History::from_config(
            &config.core.history,
            &config.core.db,
            eventlog::EventLog::new(pool.clone()).identity().await?,
        )?;
        let (stop, stopping) = watch::channel(false);
        let state = app_state(
            &config,
            &url,
            pool.clone(),
            (clock, chance),
            stopping,
            history,
        )?;
        // A restore from a backup older than a closing brings the account back: close it again
        // (tried until it succeeds; the instance serves meanwhile).
        tokio::spawn(service::closing::keep_closed(
            service::live::LivePath::clone(&state),
            Arc::clone(&state.history),
            state.stopping.clone(),
        ));
        let edge = ApiState {
            app: state.clone(),
            keys: keys(&config, &pool).await?,
            limiter: Arc::new(RateLimiter::new(
                config.edge.rate_per_second,
                config.edge.rate_burst,
            )),
            signups: Arc::new(RateLimiter::new(
                config.edge.signups_per_minute / 60.0,
                config.edge.signups_per_minute,
            )),
            anonymous: Arc::new(RateLimiter::new(
                config.edge.anon_per_second,
                config.edge.anon_burst,
            )),
            trusted_proxies: config.edge.trusted_proxies.clone().into(),
            generations: Generations::new(pool.clone()),
        };
        tokio::spawn(Arc::clone(&edge.generations).listen(
            database::settings(&url)?,
            service::live::LivePath::clone(&state),
            state.stopping.clone(),
        ));
        let listener = TcpListener::bind(&config.edge.addr)
            .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.edge.addr))?;
        let port = listener.local_addr()?.port();
        let server = http_server(&config, edge.clone(), listener)?;
        let background = spawn_background(&config, &state).await;
        tracing::info!(addr = %config.edge.addr, port, "discs is serving");
        Ok(Application {
            port,
            server,
            state,
            edge,
            stop,
            background,
            grace: Duration::from_secs(config.edge.shutdown_seconds),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The shared state, for tests that drive workers or read the log directly.
    pub fn state(&self) -> AppState {
        self.state.clone()
    }

    /// The edge's state, for tests that issue tokens or read the rate limits.
    pub fn edge(&self) -> ApiState {
        self.edge.clone()
    }

    /// The server handle, to stop it.
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.server.handle()
    }

    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }

    /// Serves until SIGTERM or SIGINT, then shuts down gracefully: stops accepting
    /// connections, ends open event streams with a retry hint, lets requests in flight finish
    /// (for up to `DISCS_SHUTDOWN_SECONDS`), lets the background pass under way finish and
    /// release its leases, and closes the database connections (which releases the
    /// projections' locks).
    pub async fn run_until_signalled(self) -> anyhow::Result<()> {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        self.run_until(async move {
            tokio::select! {
                _ = terminate.recv() => "SIGTERM",
                _ = tokio::signal::ctrl_c() => "SIGINT",
            }
        })
        .await
    }

    /// Serves until `shutdown` completes (with the name of what asked), then shuts down as
    /// [`Application::run_until_signalled`] does.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = &'static str> + Send + 'static,
    ) -> anyhow::Result<()> {
        let Application {
            server,
            state,
            stop,
            background,
            grace,
            ..
        } = self;
        let handle = server.handle();
        let signalled = tokio::spawn(async move {
            let name = shutdown.await;
            tracing::info!(
                signal = name,
                "shutting down: finishing the requests in flight"
            );
            let _ = stop.send(true);
            handle.stop(true).await;
        });
        server.await?;
        signalled.abort();
        if tokio::time::timeout(grace, futures_util::future::join_all(background))
            .await
            .is_err()
        {
            tracing::warn!("the background pass did not finish in time");
        }
        state.pool.close();
        state.ranked.wave_pool.close();
        for replica in state.replicas.iter().flat_map(|r| r.nodes()) {
            replica.log().pool().close();
        }
        tracing::info!("stopped");
        Ok(())
    }
}

/// The token keys: the server's secret (configured, or generated once into its file, never
/// kept in the database) and an external issuer's, if configured.
async fn keys(config: &ServeConfig, pool: &deadpool_postgres::Pool) -> anyhow::Result<Keys> {
    let file = secret_file(&config.edge.auth, &config.core.db);
    let secret =
        api::auth::load_secret(pool, config.edge.auth.jwt_secret.as_deref(), &file).await?;
    let external = api::auth::External::from_config(&config.edge.auth)?;
    Keys::new(&secret, external, config.edge.auth.token_days)
}

/// The application's shared state on `pool`, with the signer of its log's checkpoints.
fn app_state(
    config: &ServeConfig,
    url: &str,
    pool: deadpool_postgres::Pool,
    (clock, chance): (Arc<dyn Clock>, Arc<dyn Chance>),
    stopping: watch::Receiver<bool>,
    history: History,
) -> anyhow::Result<AppState> {
    let live = &config.core.live;
    let searches = config
        .core
        .searches
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));
    let core = Core {
        log: eventlog::EventLog::new(pool.clone()),
        pool,
        clock,
        chance,
        metrics: Arc::new(Metrics::default()),
        replicas: Replicas::from_config(&config.core.replicas)?.map(Arc::new),
        stopping,
    };
    let path = LivePath {
        core,
        play: config.core.play,
        cache: Arc::new(MatchCache::new(live.match_cache)),
        committer: Committer::new(database::settings(url)?, live.committers),
        live: Arc::new(Live::new(live.streams_per_player, live.max_streams)),
        searches: Arc::new(Searches::new(
            searches,
            config.core.search_queue,
            config.core.analyses_per_player as usize,
        )),
        guards: Arc::default(),
        tickets: Arc::new(Kept::turns_only()),
        standings: Arc::new(Kept::turns_only()),
    };
    Ok(AppState {
        projections: projections::Runner::new(eventlog::EventLog::new(path.pool.clone()))
            .with_explorer_plies(config.core.projections.explorer_plies),
        answers_kept: time::Duration::hours(i64::from(config.core.idempotency_hours)),
        rooms_kept: time::Duration::hours(i64::from(config.core.room_idle_hours)),
        ranked: Ranked {
            path: path.clone(),
            waves: Arc::new(tokio::sync::Notify::new()),
            wave_schedule: service::ranked::WaveSchedule {
                interval: Duration::from_millis(config.core.wave_interval_ms),
                trigger: config.core.wave_trigger,
            },
            // The waves' own connections: a burst of requests queueing for the shared pool
            // does not hold back the wave that would pair them.
            wave_pool: database::pool(database::settings(url)?, 2)?,
        },
        tournaments: service::tournaments::Tournaments::new(path.clone()),
        challenges: service::challenges::Challenges::new(path.clone()),
        analysis: Analyses {
            path,
            jobs: Arc::new(Jobs::new(
                Duration::from_secs(config.core.analysis_job_seconds),
                config.core.jobs_per_player,
                time::Duration::hours(i64::from(config.core.job_keep_hours)),
                time::Duration::days(i64::from(config.core.solved_keep_days)),
                config.core.quality_ply_nodes,
                config.core.analysis_ply_nodes,
            )),
        },
        history: Arc::new(history),
    })
}

/// The HTTP server on `listener`: every request in its id's span and its language's scope,
/// the API's routes, the site's pages, and `not_found` for anything else.
fn http_server(
    config: &ServeConfig,
    edge: ApiState,
    listener: TcpListener,
) -> anyhow::Result<Server> {
    let data = web::Data::new(edge);
    let mut server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .wrap_fn(|req, srv| {
                let lang = Lang::from_accept_language(
                    req.headers()
                        .get(header::ACCEPT_LANGUAGE)
                        .and_then(|v| v.to_str().ok()),
                );
                let id = requests::id_of(req.headers());
                let span =
                    tracing::info_span!("request", request_id = id.to_str().unwrap_or_default());
                let serve = srv.call(req);
                requests::scope(id.clone(), lang, serve.instrument(span)).map(move |res| {
                    res.map(|mut res| {
                        res.headers_mut().insert(requests::REQUEST_ID, id);
                        res
                    })
                })
            })
            .configure(routes::configure)
            .configure(api::web::configure)
            .default_service(web::to(|| async {
                Err::<HttpResponse, ApiError>(ApiError::NoRoute)
            }))
    })
    .listen(listener)?;
    if let Some(n) = config.edge.http_workers {
        server = server.workers(n);
    }
    server = server.shutdown_timeout(config.edge.shutdown_seconds);
    Ok(server.disable_signals().run())
}

/// The instance's log reader (everywhere: open streams follow other instances through it) and,
/// unless `--no-workers`, the background loops: workers, projections, jobs and waves. Returns
/// the loops that hold leases, to be awaited on shutdown.
async fn spawn_background(config: &ServeConfig, state: &AppState) -> Vec<JoinHandle<()>> {
    tokio::spawn(service::live::fanout::run_tail(
        state.log.clone(),
        state.live.clone(),
        Duration::from_millis(config.core.live.log_poll_ms),
    ));
    if let Some(replicas) = &state.replicas {
        // Not a worker: reads need the rotation even where tests drive the workers by hand.
        tokio::spawn(
            replicas
                .clone()
                .follow(state.pool.clone(), state.stopping.clone()),
        );
    }
    let mut background = Vec::new();
    if config.core.no_workers {
        return background;
    }
    let interval = Duration::from_millis(config.core.worker_interval_ms);
    background.push(tokio::spawn(workers::repair_and_run(
        state.clone(),
        interval,
    )));
    state
        .projections
        .clone()
        .run_forever(interval, state.live.batches())
        .await;
    background.push(tokio::spawn(service::analysis::jobs::run_forever(
        state.analysis.clone(),
        state.searches.job_runners(),
    )));
    background.push(tokio::spawn(service::analysis::quality::run_forever(
        state.analysis.clone(),
    )));
    background.push(tokio::spawn(service::ranked::waves_forever(
        state.ranked.clone(),
    )));
    background.push(tokio::spawn(service::tournaments::organiser::run_forever(
        state.tournaments.clone(),
    )));
    background.push(tokio::spawn(service::history::run_forever(
        state.pool.clone(),
        state.log.clone(),
        state.history.clone(),
        state.clock.clone(),
        state.stopping.clone(),
    )));
    background
}

/// Where the generated token secret is kept: `DISCS_JWT_SECRET_FILE`, or `jwt-secret` beside the
/// private cluster's data folder.
pub fn secret_file(
    auth: &api::config::AuthConfig,
    db: &service::config::DatabaseConfig,
) -> std::path::PathBuf {
    auth.jwt_secret_file
        .clone()
        .unwrap_or_else(|| db.data_dir().with_file_name("jwt-secret"))
}

/// The token secret a server started with this environment uses (`DISCS_JWT_SECRET`, or its
/// file): for the tools that sign an admin token beside a running server (the drills).
pub async fn server_secret(database_url: &str) -> anyhow::Result<Vec<u8>> {
    let config = ServeConfig::from_env(database_url)?;
    let pool = database::connect(database_url, 4).await?;
    let file = secret_file(&config.edge.auth, &config.core.db);
    api::auth::load_secret(&pool, config.edge.auth.jwt_secret.as_deref(), &file).await
}
