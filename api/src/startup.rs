//! Start-up in one shape: `Application::build(config)` finds the database (starting a private
//! PostgreSQL where none answers), migrates, binds the listener and starts the workers;
//! `run_until_stopped` serves.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::{Server, Service};
use actix_web::http::header;
use actix_web::{App, HttpResponse, HttpServer, web};

use crate::auth::Keys;
use crate::catalogue::Lang;
use crate::clock::{Clock, SystemClock};
use crate::config::ServeConfig;
use crate::error::{ApiError, render};
use crate::ratelimit::RateLimiter;
use crate::state::AppState;
use crate::{routes, workers};

/// Analysis searches one instance runs at once (`POST /v1/analysis`, match analyses): each holds
/// a blocking thread and a core for up to its `budget_ms`.
const ANALYSES_AT_ONCE: usize = 4;

pub struct Application {
    port: u16,
    server: Server,
    state: AppState,
}

impl Application {
    /// Builds the application on the system clock.
    pub async fn build(config: ServeConfig) -> anyhow::Result<Application> {
        Self::build_with_clock(config, Arc::new(SystemClock)).await
    }

    /// Builds the application with a given clock (tests move a manual one).
    pub async fn build_with_clock(
        config: ServeConfig,
        clock: Arc<dyn Clock>,
    ) -> anyhow::Result<Application> {
        let url = eventlog::locate(&config.db.url, &config.db.data_dir()).await?;
        let pool = eventlog::connect(&url, config.db.pool_size).await?;
        eventlog::migrate(&pool).await?;
        let secret = crate::auth::load_secret(&pool, config.auth.jwt_secret.as_deref()).await?;
        let external = match &config.auth.jwt_public_key_file {
            Some(path) => Some(std::fs::read(path).map_err(|e| {
                anyhow::anyhow!("cannot read the public key {}: {e}", path.display())
            })?),
            None => None,
        };
        let keys = Keys::new(&secret, external.as_deref(), config.auth.token_days)?;
        let projections = projections::Runner::new(eventlog::EventLog::new(pool.clone()));
        let state = AppState {
            log: eventlog::EventLog::new(pool.clone()),
            pool: pool.clone(),
            keys,
            clock,
            play: config.play,
            limiter: Arc::new(RateLimiter::new(config.rate_per_second, config.rate_burst)),
            projections,
            cache: Arc::new(crate::cache::MatchCache::new(config.live.match_cache)),
            committer: crate::commit::Committer::new(
                eventlog::settings(&url)?,
                config.live.committers,
            ),
            live: Arc::new(crate::live::Live::new(
                config.live.streams_per_player,
                config.live.max_streams,
            )),
            waves: Arc::new(tokio::sync::Notify::new()),
            metrics: Arc::new(crate::metrics::Metrics::default()),
            analyses: Arc::new(tokio::sync::Semaphore::new(ANALYSES_AT_ONCE)),
        };
        let listener = TcpListener::bind(&config.addr)
            .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.addr))?;
        let port = listener.local_addr()?.port();
        let data = web::Data::new(state.clone());
        let mut server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .wrap_fn(|req, srv| {
                    let lang = Lang::from_accept_language(
                        req.headers()
                            .get(header::ACCEPT_LANGUAGE)
                            .and_then(|v| v.to_str().ok()),
                    );
                    let fut = srv.call(req);
                    async move {
                        let res = fut.await?;
                        // Errors render in English by default; re-render in the client's
                        // language where it asked for another.
                        if lang != Lang::En
                            && let Some(api) = res
                                .response()
                                .error()
                                .and_then(|e| e.as_error::<ApiError>())
                        {
                            let localized = render(api, lang);
                            return Ok(res.into_response(localized));
                        }
                        Ok(res)
                    }
                })
                .configure(routes::configure)
                .default_service(web::to(|| async {
                    Err::<HttpResponse, ApiError>(ApiError::NoRoute)
                }))
        })
        .listen(listener)?;
        if let Some(n) = config.http_workers {
            server = server.workers(n);
        }
        let server = server.disable_signals().run();
        // The log reader runs everywhere: open streams follow other instances through it.
        tokio::spawn(crate::live::run_tail(
            state.clone(),
            Duration::from_millis(config.live.log_poll_ms.max(1)),
        ));
        if !config.no_workers {
            let worker_state = state.clone();
            let interval = Duration::from_millis(config.worker_interval_ms.max(10));
            tokio::spawn(workers::repair_then_run(worker_state, interval));
            state
                .projections
                .clone()
                .run_forever(interval, state.live.batches())
                .await;
            tokio::spawn(crate::ranked::waves_forever(
                state.clone(),
                Duration::from_millis(config.wave_interval_ms.max(10)),
                config.wave_trigger.max(2),
            ));
        }
        tracing::info!(addr = %config.addr, port, "discs is serving");
        Ok(Application {
            port,
            server,
            state,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The shared state, for tests that drive workers or read the log directly.
    pub fn state(&self) -> AppState {
        self.state.clone()
    }

    /// The server handle, to stop it.
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.server.handle()
    }

    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}
