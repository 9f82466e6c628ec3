//! `discs serve`'s settings: the core's (`service::config::CoreConfig`) and the HTTP edge's
//! (`api::config::EdgeConfig`), flattened into one set of flags, each with its `DISCS_*`
//! variable.

use clap::Args;

use api::config::EdgeConfig;
use service::config::CoreConfig;

/// Everything `discs serve` needs.
#[derive(Clone, Debug, Args)]
pub struct ServeConfig {
    #[command(flatten)]
    pub core: CoreConfig,
    #[command(flatten)]
    pub edge: EdgeConfig,
}

impl ServeConfig {
    /// The settings `discs serve` would read from this environment (its `DISCS_*` variables),
    /// on `database_url`: for tools that work beside a running server.
    pub fn from_env(database_url: &str) -> anyhow::Result<ServeConfig> {
        use clap::{Command, FromArgMatches};
        let command = ServeConfig::augment_args(Command::new("discs"));
        let matches = command.try_get_matches_from(["discs", "--database-url", database_url])?;
        Ok(ServeConfig::from_arg_matches(&matches)?)
    }

    /// The shipped defaults (each flag's default value), with `database_url`, read from nothing
    /// else: no argument, no variable of the environment. Instances embedded in tests and
    /// benches start from these and change what they need, so a new setting is declared once.
    pub fn defaults(database_url: &str) -> anyhow::Result<ServeConfig> {
        use clap::{Command, FromArgMatches};
        let command =
            ServeConfig::augment_args(Command::new("discs")).mut_args(|a| a.env(None::<&str>));
        let matches = command.try_get_matches_from(["discs", "--database-url", database_url])?;
        Ok(ServeConfig::from_arg_matches(&matches)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::games::GameId;
    use service::config::variable_of;

    #[test]
    fn the_shipped_defaults_come_from_the_flags_declarations() {
        let ServeConfig { core: c, edge: e } =
            ServeConfig::defaults("postgres://db.example/discs_x").expect("they parse");
        assert_eq!(c.db.url, "postgres://db.example/discs_x");
        assert_eq!((e.addr.as_str(), c.db.pool_size), ("127.0.0.1:8080", 16));
        assert_eq!(
            (c.play.leaves_per_match, c.play.leave_refill_seconds),
            (5, 300)
        );
        assert_eq!((c.live.committers, c.live.match_cache), (2, 100_000));
        assert_eq!((e.rate_per_second, e.anon_burst), (50.0, 40.0));
        assert!(!c.no_workers && e.http_workers.is_none() && c.searches.is_none());
        assert_eq!(c.play.public_plies.of(GameId::FourInARow), 8);
        assert_eq!(c.play.public_plies.of(GameId::Reversi), 12);
    }

    #[test]
    fn out_of_range_values_are_refused_naming_their_variable() {
        use clap::{Command, FromArgMatches};
        let command =
            ServeConfig::augment_args(Command::new("discs")).mut_args(|a| a.env(None::<&str>));
        for (flag, value, variable) in [
            ("--worker-interval-ms", "5", "DISCS_WORKER_INTERVAL_MS"),
            ("--wave-trigger", "1", "DISCS_WAVE_TRIGGER"),
            ("--committers", "0", "DISCS_COMMITTERS"),
            ("--rate-per-second", "0", "DISCS_RATE_PER_SECOND"),
            ("--anon-burst", "0.5", "DISCS_ANON_BURST"),
            ("--db-pool-size", "2", "DISCS_DB_POOL_SIZE"),
            // Above the upper bounds: no setting overflows the arithmetic it goes into.
            ("--token-days", "9223372036854775807", "DISCS_TOKEN_DAYS"),
            (
                "--idempotency-hours",
                "4294967295",
                "DISCS_IDEMPOTENCY_HOURS",
            ),
            ("--presence-seconds", "4294967295", "DISCS_PRESENCE_SECONDS"),
            (
                "--wave-interval-ms",
                "18446744073709551615",
                "DISCS_WAVE_INTERVAL_MS",
            ),
            ("--match-cache", "18446744073709551615", "DISCS_MATCH_CACHE"),
            ("--http-workers", "0", "DISCS_HTTP_WORKERS"),
            ("--trusted-proxies", "10.0.0.0/33", "DISCS_TRUSTED_PROXIES"),
        ] {
            let error = command
                .clone()
                .try_get_matches_from(["discs", flag, value])
                .expect_err(flag);
            let with_env = ServeConfig::augment_args(Command::new("discs"));
            assert_eq!(
                variable_of(&error, &with_env).as_deref(),
                Some(variable),
                "{flag}"
            );
        }
        let fine = command
            .try_get_matches_from(["discs", "--worker-interval-ms", "10", "--wave-trigger", "2"])
            .expect("the least allowed values");
        let c = ServeConfig::from_arg_matches(&fine).expect("a config");
        assert_eq!((c.core.worker_interval_ms, c.core.wave_trigger), (10, 2));
    }
}
