//! The one typed configuration, read from flags and `DISCS_*` / `DATABASE_URL` variables.

use std::path::PathBuf;

use clap::Args;

use domain::games::GameId;

/// Where the database is, with defaults that run out of the box.
#[derive(Clone, Debug, Args)]
pub struct DatabaseConfig {
    /// PostgreSQL URL; its database is created if missing.
    #[arg(
        long = "database-url",
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/discs"
    )]
    pub url: String,
    /// Data folder of the private PostgreSQL cluster started when no server answers.
    #[arg(long = "pg-data-dir", env = "DISCS_PG_DATA_DIR")]
    pub pg_data_dir: Option<PathBuf>,
    /// Connections in the pool.
    #[arg(
        long = "db-pool-size",
        env = "DISCS_DB_POOL_SIZE",
        default_value_t = 16,
        value_parser = between::<4, 10_000>
    )]
    pub pool_size: usize,
}

impl DatabaseConfig {
    pub fn data_dir(&self) -> PathBuf {
        self.pg_data_dir
            .clone()
            .unwrap_or_else(database::cluster::default_data_dir)
    }
}

/// What the projections need beside the database (read by `discs serve` and `discs rebuild`).
#[derive(Clone, Debug, Args)]
pub struct ProjectionConfig {
    /// How many plies of each finished game the opening explorer counts, `game=plies`
    /// comma-separated (defaults `four_in_a_row=30,reversi=40`); a change applies to the
    /// matches that end afterwards, and to all after `discs rebuild explorer`.
    #[arg(long, env = "DISCS_EXPLORER_PLIES", value_parser = explorer_plies, default_value = "")]
    pub explorer_plies: projections::explorer::Plies,
}

fn explorer_plies(raw: &str) -> Result<projections::explorer::Plies, String> {
    let defaults = GameId::ALL.map(domain::explorer::default_plies);
    Ok(projections::explorer::Plies(per_game::<1, 128>(
        raw, defaults, false,
    )?))
}

/// What the application core needs to serve (the HTTP edge's own settings are `api::config`'s);
/// each flag also reads a `DISCS_*` variable.
#[derive(Clone, Debug, Args)]
pub struct CoreConfig {
    #[command(flatten)]
    pub db: DatabaseConfig,
    #[command(flatten)]
    pub projections: ProjectionConfig,
    #[command(flatten)]
    pub play: PlayConfig,
    #[command(flatten)]
    pub live: LiveConfig,
    #[command(flatten)]
    pub replicas: ReplicaConfig,
    #[command(flatten)]
    pub history: HistoryConfig,
    /// CPU searches (moves of levels 3–5, analyses and analysis jobs) this instance runs at once (default: one
    /// per core); analyses never take the last one.
    #[arg(long, env = "DISCS_SEARCHES", value_parser = between::<1, 1_024>)]
    pub searches: Option<usize>,
    /// CPU moves that may wait for a search slot; beyond, 429 `rate_limited`.
    #[arg(long, env = "DISCS_SEARCH_QUEUE", default_value_t = 64, value_parser = between::<0, 100_000>)]
    pub search_queue: usize,
    /// Analyses one player may run at once on an instance; beyond, 429 `rate_limited`.
    #[arg(long, env = "DISCS_ANALYSES_PER_PLAYER", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub analyses_per_player: u32,
    /// How long one background analysis job (`/v1/analysis/jobs`) may search, in seconds,
    /// before it answers with its best estimate.
    #[arg(long, env = "DISCS_ANALYSIS_JOB_SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub analysis_job_seconds: u64,
    /// Analysis jobs one player may have queued or running at once (a job joining another
    /// one's search counts too); beyond, 429 `rate_limited` until one ends.
    #[arg(long, env = "DISCS_JOBS_PER_PLAYER", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub jobs_per_player: u32,
    /// How long a finished analysis job (done or failed) is kept, in hours; older ones are
    /// purged by the background work.
    #[arg(long, env = "DISCS_JOB_KEEP_HOURS", default_value_t = 168, value_parser = clap::value_parser!(u32).range(1..=87_600))]
    pub job_keep_hours: u32,
    /// How long a verdict stays in the cache of solved positions, in days (verdicts of an
    /// older solver version go at once); older ones are purged by the background work.
    /// Nodes the solver may spend on each position when it assesses a finished ranked match's
    /// move quality (beyond, the position counts as not exact): one number for every game, or
    /// `game=nodes` comma-separated over the defaults (`four_in_a_row=8000000,reversi=2000000`).
    #[arg(long, env = "DISCS_QUALITY_PLY_NODES", value_parser = QualityNodes::parse, default_value = "")]
    pub quality_ply_nodes: QualityNodes,
    /// Nodes the solver may spend on each position when a finished match is analysed for a
    /// reader (`GET /v1/matches/{id}/analysis`, the replay page), so that one hard opening
    /// position cannot eat the time budget of all the others; what is left inexact is queued
    /// as jobs.
    #[arg(long, env = "DISCS_ANALYSIS_PLY_NODES", default_value_t = 2_000_000, value_parser = clap::value_parser!(u64).range(1_000..=1_000_000_000))]
    pub analysis_ply_nodes: u64,
    #[arg(long, env = "DISCS_SOLVED_KEEP_DAYS", default_value_t = 365, value_parser = clap::value_parser!(u32).range(1..=36_500))]
    pub solved_keep_days: u32,
    /// How long stored `Idempotency-Key` answers are kept, in hours (at least 24); older ones
    /// are purged by the background work.
    #[arg(long, env = "DISCS_IDEMPOTENCY_HOURS", default_value_t = 24, value_parser = clap::value_parser!(u32).range(24..=8_760))]
    pub idempotency_hours: u32,
    /// How long a room is kept after it was created without starting a match, or after its
    /// last match ended, in hours; older ones are purged by the background work.
    #[arg(long, env = "DISCS_ROOM_IDLE_HOURS", default_value_t = 24, value_parser = clap::value_parser!(u32).range(1..=8_760))]
    pub room_idle_hours: u32,
    /// How often background work (timeouts, presence, CPU moves) is looked for, in milliseconds.
    #[arg(long, env = "DISCS_WORKER_INTERVAL_MS", default_value_t = 250, value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    pub worker_interval_ms: u64,
    /// Milliseconds between matchmaking waves.
    #[arg(long, env = "DISCS_WAVE_INTERVAL_MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    pub wave_interval_ms: u64,
    /// A pool with this many waiting tickets gets a wave at once.
    #[arg(long, env = "DISCS_WAVE_TRIGGER", default_value_t = 32, value_parser = clap::value_parser!(i64).range(2..=1_000_000))]
    pub wave_trigger: i64,
    /// Do not run background workers in this process (tests drive them by hand).
    #[arg(long, env = "DISCS_NO_WORKERS")]
    pub no_workers: bool,
}

/// Signed checkpoints of the log and the ledger of closed accounts, both kept outside the
/// database (`service::history`).
#[derive(Clone, Debug, Args)]
pub struct HistoryConfig {
    /// The folder where signed checkpoints are published (and read by `discs verify
    /// --checkpoints`). Default: `checkpoints/<log id>` beside the private cluster's data
    /// folder, one per log (the log's id is kept in its database).
    #[arg(long, env = "DISCS_CHECKPOINT_DIR")]
    pub checkpoint_dir: Option<PathBuf>,
    /// The Ed25519 signing key, 64 hexadecimal digits (its 32-byte seed). Takes precedence over
    /// the key file. The database never holds it.
    #[arg(long, env = "DISCS_CHECKPOINT_KEY", hide_env_values = true)]
    pub checkpoint_key: Option<String>,
    /// The file holding the signing key (64 hexadecimal digits), generated (mode 0600) at the
    /// first start when missing. Default: `checkpoint-key` beside the private cluster's data folder.
    #[arg(long, env = "DISCS_CHECKPOINT_KEY_FILE")]
    pub checkpoint_key_file: Option<PathBuf>,
    /// Seconds between signed checkpoints (one is signed only when the log grew).
    #[arg(long, env = "DISCS_CHECKPOINT_INTERVAL", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub checkpoint_interval: u64,
    /// The ledger of closed accounts (player ids only), kept outside the database so that a
    /// restore from a backup older than a closing closes the account again. Default:
    /// `closed-accounts-<log id>` beside the private cluster's data folder (one per log; the
    /// shared `closed-accounts` of earlier versions is still read).
    #[arg(long, env = "DISCS_CLOSINGS_FILE")]
    pub closings_file: Option<PathBuf>,
}

impl HistoryConfig {
    /// These settings with the folder, the key file and the ledger all under `dir`: for
    /// instances embedded in tests and benches, which must never publish into the operator's
    /// default folder.
    pub fn under(self, dir: &std::path::Path) -> HistoryConfig {
        HistoryConfig {
            checkpoint_dir: Some(dir.join("checkpoints")),
            checkpoint_key_file: Some(dir.join("checkpoint-key")),
            closings_file: Some(dir.join("closed-accounts")),
            ..self
        }
    }

    /// The ledger every log on the machine shared before ledgers were per log, read beside the
    /// log's own when the ledger is not configured.
    pub fn shared_closings(&self, db: &DatabaseConfig) -> Option<PathBuf> {
        self.closings_file
            .is_none()
            .then(|| db.data_dir().with_file_name("closed-accounts"))
    }

    /// The checkpoint folder of the log `log`, the key file and the ledger, defaults resolved
    /// beside `db`'s data folder.
    pub fn paths(&self, db: &DatabaseConfig, log: uuid::Uuid) -> (PathBuf, PathBuf, PathBuf) {
        let beside = |name: &str| db.data_dir().with_file_name(name);
        (
            self.checkpoint_dir
                .clone()
                .unwrap_or_else(|| beside("checkpoints").join(log.to_string())),
            self.checkpoint_key_file
                .clone()
                .unwrap_or_else(|| beside("checkpoint-key")),
            self.closings_file
                .clone()
                .unwrap_or_else(|| beside(&format!("closed-accounts-{log}"))),
        )
    }
}

/// The live path: committing, caching, following the log, streaming.
#[derive(Clone, Copy, Debug, Args)]
pub struct LiveConfig {
    /// Committer tasks per thread that submits commands (each commits one batch at a time,
    /// on a connection of its own).
    #[arg(long, env = "DISCS_COMMITTERS", default_value_t = 2, value_parser = between::<1, 64>)]
    pub committers: usize,
    /// Match states kept in memory.
    #[arg(long, env = "DISCS_MATCH_CACHE", default_value_t = 100_000, value_parser = between::<2, 100_000_000>)]
    pub match_cache: usize,
    /// How often the log is read for other instances' events, in milliseconds.
    #[arg(long, env = "DISCS_LOG_POLL_MS", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub log_poll_ms: u64,
    /// Open event streams allowed per player.
    #[arg(long, env = "DISCS_STREAMS_PER_PLAYER", default_value_t = 8, value_parser = between::<1, 1_000>)]
    pub streams_per_player: usize,
    /// Open event streams allowed per instance.
    #[arg(long, env = "DISCS_MAX_STREAMS", default_value_t = 10_000, value_parser = between::<1, 10_000_000>)]
    pub max_streams: usize,
}

/// Reads from replicas (ARCHITECTURE.md, "Reads from the replicas").
#[derive(Clone, Debug, Args)]
pub struct ReplicaConfig {
    /// Standbys to read from, space-separated PostgreSQL URLs of one server each (a standby
    /// that is promoted, or any server not in recovery, is left out until it is a standby
    /// again). Empty: every read goes to `DATABASE_URL`.
    #[arg(long = "database-read-url", env = "DATABASE_READ_URL", value_delimiter = ' ', num_args = 0..)]
    pub urls: Vec<String>,
    /// Connections in each replica's pool.
    #[arg(long = "replica-pool-size", env = "DISCS_REPLICA_POOL_SIZE", default_value_t = 8, value_parser = between::<1, 10_000>)]
    pub replica_pool_size: usize,
    /// A replica whose replay lags the primary by more than this many milliseconds (while it
    /// has WAL left to replay) leaves the rotation until it catches up.
    #[arg(long, env = "DISCS_REPLICA_MAX_LAG_MS", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(0..=86_400_000))]
    pub replica_max_lag_ms: u64,
    /// A replica whose replay is more than this many bytes of WAL behind the primary's leaves
    /// the rotation until it catches up.
    #[arg(long, env = "DISCS_REPLICA_MAX_LAG_BYTES", default_value_t = 16 * 1024 * 1024, value_parser = clap::value_parser!(u64).range(0..=1 << 40))]
    pub replica_max_lag_bytes: u64,
    /// How often each replica's lag is measured, in milliseconds.
    #[arg(long, env = "DISCS_REPLICA_POLL_MS", default_value_t = 500, value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    pub replica_poll_ms: u64,
}

impl ReplicaConfig {
    /// The URLs given (blank entries of a doubled space dropped).
    pub fn urls(&self) -> impl Iterator<Item = &str> {
        self.urls.iter().map(|u| u.trim()).filter(|u| !u.is_empty())
    }
}

/// The timings of play.
#[derive(Clone, Copy, Debug, Args)]
pub struct PlayConfig {
    /// Seconds without a stream or call after which a player is marked away.
    #[arg(long, env = "DISCS_PRESENCE_SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=86_400))]
    pub presence_seconds: u32,
    /// Seconds after leaving after which the CPU plays for an absent player.
    #[arg(long, env = "DISCS_RETURN_SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=86_400))]
    pub return_seconds: u32,
    /// Times a player may leave one match on their own at once (`POST .../leave`); beyond, one
    /// more per `DISCS_LEAVE_REFILL_SECONDS` of the match, else 429 `rate_limited`. Every leave
    /// is an event: this bounds how fast a match's stream can grow by leaving and returning.
    #[arg(long, env = "DISCS_LEAVES_PER_MATCH", default_value_t = 5, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub leaves_per_match: u32,
    /// Active solo matches against CPU levels 4–5 (the long searches) one player may have; a
    /// further one is refused with 429 `rate_limited` until one of them ends.
    #[arg(long, env = "DISCS_STRONG_SOLO_PER_PLAYER", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub strong_solo_per_player: u32,
    /// Seconds of a match that earn one more leave beyond `DISCS_LEAVES_PER_MATCH`.
    #[arg(long, env = "DISCS_LEAVE_REFILL_SECONDS", default_value_t = 300, value_parser = clap::value_parser!(u32).range(1..=86_400))]
    pub leave_refill_seconds: u32,
    /// The public opening per game, `game=plies` comma-separated (e.g.
    /// `four_in_a_row=8,reversi=12`, the defaults; a game not named keeps its default): no
    /// position within that many plies is kept from analysis during live ranked matches.
    #[arg(long, env = "DISCS_PUBLIC_PLIES", value_parser = PublicPlies::parse, default_value = "")]
    pub public_plies: PublicPlies,
}

/// How deep each game's public opening goes (the fair-play guard's `public` plies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublicPlies([u32; GameId::ALL.len()]);

impl PublicPlies {
    /// Parses `game=plies[,game=plies]` over the games' defaults.
    pub fn parse(raw: &str) -> Result<PublicPlies, String> {
        let defaults = GameId::ALL.map(|g| g.public_plies() as usize);
        let plies = per_game::<0, 128>(raw, defaults, false)?;
        Ok(PublicPlies(plies.map(|n| n as u32)))
    }

    /// The public plies of `game`.
    pub fn of(&self, game: GameId) -> u32 {
        self.0[game as usize]
    }
}

/// The solver's node budget per position of a move-quality assessment, per game. Four in a
/// Row's is what finds a part-time engine user within 40 games (BENCHMARKS.md, "A simulated
/// ladder"); a Reversi game has twice the plies and its solver proves only the last twenty or so
/// empties at budgets of this order, so it keeps a smaller one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QualityNodes([u64; GameId::ALL.len()]);

impl QualityNodes {
    /// Parses a number for every game, or `game=nodes[,game=nodes]` over the defaults.
    pub fn parse(raw: &str) -> Result<QualityNodes, String> {
        let defaults = GameId::ALL.map(|g| match g {
            GameId::FourInARow => 8_000_000,
            GameId::Reversi => 2_000_000,
        });
        let nodes = per_game::<1_000, 1_000_000_000>(raw, defaults, true)?;
        Ok(QualityNodes(nodes.map(|n| n as u64)))
    }

    /// The same budget for every game.
    pub fn all(nodes: u64) -> QualityNodes {
        QualityNodes([nodes; GameId::ALL.len()])
    }

    /// The budget of `game`.
    pub fn of(&self, game: GameId) -> u64 {
        self.0[game as usize]
    }
}

/// A setting per game: `game=n[,game=n]` over `defaults`, each n from `MIN` to `MAX`; with
/// `bare`, a lone number sets every game.
fn per_game<const MIN: usize, const MAX: usize>(
    raw: &str,
    defaults: [usize; GameId::ALL.len()],
    bare: bool,
) -> Result<[usize; GameId::ALL.len()], String> {
    let mut values = defaults;
    if bare && !raw.trim().is_empty() && !raw.contains('=') {
        return Ok([between::<MIN, MAX>(raw)?; GameId::ALL.len()]);
    }
    for pair in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (game, n) = pair
            .split_once('=')
            .ok_or_else(|| format!("`{pair}` is not `game=number`"))?;
        let game: GameId = game.trim().parse().map_err(|e| format!("{e}"))?;
        values[game as usize] = between::<MIN, MAX>(n)?;
    }
    Ok(values)
}

/// A whole number from `MIN` to `MAX`: a bound on what a setting may ask of the machine (and
/// on the arithmetic it goes into).
pub fn between<const MIN: usize, const MAX: usize>(raw: &str) -> Result<usize, String> {
    match raw.trim().parse::<usize>() {
        Ok(n) if (MIN..=MAX).contains(&n) => Ok(n),
        Ok(n) => Err(format!("{n} is outside the allowed range, {MIN} to {MAX}")),
        Err(_) => Err(format!("`{raw}` is not a whole number")),
    }
}

/// A rate above zero.
pub fn positive(raw: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("`{raw}` is not a number above 0")),
    }
}

/// A bucket size or a rate per minute: at least 1.
pub fn one_or_more(raw: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(x) if x >= 1.0 && x.is_finite() => Ok(x),
        _ => Err(format!("`{raw}` is not a number of at least 1")),
    }
}

/// The environment variable that sets the flag a clap error is about, said beside the error, so
/// that an operator who set `DISCS_X=0` reads `DISCS_X` in the message and not only `--x`.
pub fn variable_of(error: &clap::Error, command: &clap::Command) -> Option<String> {
    let arg = error.get(clap::error::ContextKind::InvalidArg)?.to_string();
    let long = arg.split_whitespace().next()?.strip_prefix("--")?;
    fn find(command: &clap::Command, long: &str) -> Option<String> {
        command
            .get_arguments()
            .find(|a| a.get_long() == Some(long))
            .and_then(|a| a.get_env())
            .map(|e| e.to_string_lossy().into_owned())
            .or_else(|| command.get_subcommands().find_map(|c| find(c, long)))
    }
    find(command, long)
}

impl PlayConfig {
    /// Seconds until the player of a seat that has left `leaves` times, in a match created at
    /// `created_at`, may leave again; `None` if they may now.
    pub fn leave_wait(
        &self,
        leaves: u32,
        created_at: time::OffsetDateTime,
        now: time::OffsetDateTime,
    ) -> Option<u64> {
        let refill = i64::from(self.leave_refill_seconds.max(1));
        let elapsed = (now - created_at).whole_seconds().max(0);
        let allowed = i64::from(self.leaves_per_match) + elapsed / refill;
        let leaves = i64::from(leaves);
        if leaves < allowed {
            return None;
        }
        // The next leave is earned when `elapsed` reaches this.
        let earned_at = (leaves - i64::from(self.leaves_per_match) + 1) * refill;
        Some((earned_at - elapsed).max(1) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::{Duration, OffsetDateTime};

    #[test]
    fn the_public_opening_is_set_per_game() {
        let p = PublicPlies::parse(" reversi = 20 ").expect("it parses");
        assert_eq!((p.of(GameId::FourInARow), p.of(GameId::Reversi)), (8, 20));
        let p = PublicPlies::parse("four_in_a_row=0,reversi=60").expect("it parses");
        assert_eq!((p.of(GameId::FourInARow), p.of(GameId::Reversi)), (0, 60));
        for bad in ["chess=3", "reversi", "reversi=-1", "reversi=500"] {
            assert!(PublicPlies::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_assessment_budget_is_one_number_or_set_per_game() {
        let d = QualityNodes::parse("").expect("the defaults");
        assert_eq!(
            (d.of(GameId::FourInARow), d.of(GameId::Reversi)),
            (8_000_000, 2_000_000)
        );
        assert_eq!(
            QualityNodes::parse(" 500000 "),
            Ok(QualityNodes::all(500_000))
        );
        let p = QualityNodes::parse("reversi=4000000").expect("it parses");
        assert_eq!(
            (p.of(GameId::FourInARow), p.of(GameId::Reversi)),
            (8_000_000, 4_000_000)
        );
        for bad in ["999", "reversi=10", "chess=5000", "lots", "2000000000"] {
            assert!(QualityNodes::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn leaves_beyond_the_allowance_are_earned_with_the_match_time() {
        let play = PlayConfig {
            presence_seconds: 30,
            return_seconds: 60,
            leaves_per_match: 2,
            leave_refill_seconds: 100,
            strong_solo_per_player: 3,
            public_plies: PublicPlies::parse("").expect("the defaults"),
        };
        let start = OffsetDateTime::UNIX_EPOCH;
        let at = |s: i64| start + Duration::seconds(s);
        assert_eq!(play.leave_wait(0, start, at(0)), None);
        assert_eq!(play.leave_wait(1, start, at(0)), None);
        assert_eq!(play.leave_wait(2, start, at(0)), Some(100));
        assert_eq!(play.leave_wait(2, start, at(99)), Some(1));
        assert_eq!(play.leave_wait(2, start, at(100)), None);
        assert_eq!(play.leave_wait(3, start, at(150)), Some(50));
        assert_eq!(play.leave_wait(4, start, at(250)), Some(50));
        assert_eq!(play.leave_wait(4, start, at(300)), None);
        // A clock behind the match's start earns nothing.
        assert_eq!(
            play.leave_wait(2, start, start - Duration::seconds(5)),
            Some(100)
        );
    }
}
