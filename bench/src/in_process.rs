//! The real application inside a bench binary: started on a random port against a database of
//! its own on the PostgreSQL server of an admin URL, with the rate limits and the presence
//! timers off, and the database dropped once the bench is done.

use std::future::Future;

use anyhow::{Context, Result};
use api::config::EdgeConfig;
use discs::config::ServeConfig;
use discs::startup::Application;
use service::config::{CoreConfig, DatabaseConfig, PlayConfig};

/// The running server as a bench sees it.
pub struct Server {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// Its database's URL, and name.
    pub db_url: String,
    pub name: String,
}

/// Starts the application on database `<prefix>_<pid>`, runs `bench` against it, stops it and
/// drops the database, whatever `bench` answered.
#[allow(
    dead_code,
    reason = "each bench binary compiles this module; fairplay-sim configures"
)]
pub async fn with_server<F, Fut>(admin_url: &str, prefix: &str, bench: F) -> Result<()>
where
    F: FnOnce(Server) -> Fut,
    Fut: Future<Output = Result<()>>,
{
    with_server_configured(admin_url, prefix, |_| {}, bench).await
}

/// [`with_server`] with the configuration changed by `change` first.
pub async fn with_server_configured<F, Fut>(
    admin_url: &str,
    prefix: &str,
    change: impl FnOnce(&mut ServeConfig),
    bench: F,
) -> Result<()>
where
    F: FnOnce(Server) -> Fut,
    Fut: Future<Output = Result<()>>,
{
    let name = format!("{prefix}_{}", std::process::id());
    let db_url = database::testing::url_for(admin_url, &name);
    let defaults = ServeConfig::defaults(&db_url)?;
    let mut config = ServeConfig {
        core: CoreConfig {
            db: DatabaseConfig {
                pool_size: 32,
                ..defaults.core.db
            },
            play: PlayConfig {
                presence_seconds: 3600,
                return_seconds: 3600,
                ..defaults.core.play
            },
            history: defaults
                .core
                .history
                .clone()
                .under(&std::env::temp_dir().join("discs-bench").join(&name)),
            ..defaults.core
        },
        edge: EdgeConfig {
            addr: "127.0.0.1:0".into(),
            rate_per_second: 1e9,
            rate_burst: 1e9,
            anon_per_second: 1e9,
            anon_burst: 1e9,
            signups_per_minute: 1_000_000.0,
            ..defaults.edge
        },
    };
    change(&mut config);
    let app = Application::build(config)
        .await
        .context("start the application")?;
    let base = format!("http://127.0.0.1:{}", app.port());
    let handle = app.handle();
    tokio::spawn(app.run_until_stopped());
    let outcome = bench(Server {
        base,
        db_url,
        name: name.clone(),
    })
    .await;
    handle.stop(true).await;
    let admin = database::testing::raw_client(admin_url).await;
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
        .await?;
    outcome
}
