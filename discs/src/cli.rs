//! The operator CLI: `discs serve` (the default) `| migrate | token | rebuild | audit |
//! repair-work | checkpoint | verify | verify-match | replay | perft`.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Instant;

use clap::{CommandFactory, Parser, Subcommand};
use domain::games::{AnyPosition, GameId, PerftMode, Side, split_moves};

use api::auth::{Keys, Role};
use api::config::AuthConfig;
use api::error::ApiError;
use service::config::{DatabaseConfig, HistoryConfig, ProjectionConfig};

use crate::config::ServeConfig;

use crate::startup::Application;

#[derive(Debug, Parser)]
#[command(
    name = "discs",
    version,
    about = "Event-sourced ranked matchmaking for Four in a Row and Reversi"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Serve the API (the default): finds or starts PostgreSQL, migrates, listens.
    Serve {
        #[command(flatten)]
        config: ServeConfig,
    },
    /// Print a token: `--admin <name>` creates an admin player of that name.
    Token {
        /// The admin's name.
        #[arg(long)]
        admin: String,
        #[command(flatten)]
        db: DatabaseConfig,
        #[command(flatten)]
        auth: AuthConfig,
    },
    /// Create the database if missing, apply the migrations (under an advisory lock) and make
    /// the log's identity; with an instances' role, give it its rights. Run as the owner.
    Migrate {
        #[command(flatten)]
        db: DatabaseConfig,
        /// The role the instances connect as: created (LOGIN) when missing and granted what
        /// `database/src/instance_role.sql` says (every table read and written; the event log
        /// only read and appended to). Unset: no role is touched.
        #[arg(long, env = "DISCS_INSTANCE_ROLE")]
        instance_role: Option<String>,
        /// A file holding that role's password, set at every run (unset: left as it is).
        #[arg(long, env = "DISCS_INSTANCE_PASSWORD_FILE", requires = "instance_role")]
        instance_password_file: Option<std::path::PathBuf>,
    },
    /// Rebuild projections from position 0 beside the live ones and switch when caught up
    /// (all of them when no name is given): ratings, history, leaderboards, queue, explorer,
    /// tournaments.
    Rebuild {
        projection: Option<String>,
        #[command(flatten)]
        db: DatabaseConfig,
        #[command(flatten)]
        projections: ProjectionConfig,
    },
    /// Recreate every missing or stale `match_work` row (the matches' deadlines) from the log,
    /// and remove the rows of finished matches; `discs serve` also does this at start-up.
    RepairWork {
        #[command(flatten)]
        config: ServeConfig,
    },
    /// Audits for admins.
    Audit {
        #[command(subcommand)]
        what: AuditCmd,
    },
    /// Sign a checkpoint of the log now (when it grew) and publish every recorded one the
    /// folder lacks, as `discs serve` does every DISCS_CHECKPOINT_INTERVAL seconds.
    Checkpoint {
        #[command(flatten)]
        db: DatabaseConfig,
        #[command(flatten)]
        history: HistoryConfig,
    },
    /// Prove that the database still extends every checkpoint published in a folder, or name
    /// the first event that does not (exit status 1).
    Verify {
        /// The folder of published checkpoints.
        #[arg(long)]
        checkpoints: std::path::PathBuf,
        /// The operator's public key (64 hexadecimal digits, or a file holding them); by
        /// default the public half of the signing key discs is configured with.
        #[arg(long)]
        public_key: Option<String>,
        #[command(flatten)]
        db: DatabaseConfig,
        #[command(flatten)]
        history: HistoryConfig,
    },
    /// Check a finished match's proof (`GET /v1/matches/{id}/proof`, saved to a file) offline:
    /// its events chain, and its last event is in the operator's signed checkpoint (exit
    /// status 1 when it does not hold).
    VerifyMatch {
        /// The proof, as the API answered it.
        proof: std::path::PathBuf,
        /// The operator's public key (64 hexadecimal digits, or a file holding them).
        #[arg(long)]
        public_key: String,
        /// A checkpoint you hold (from the operator's folder, or an earlier answer of
        /// `GET /v1/checkpoints/{seq}`): the proof must be against that one.
        #[arg(long)]
        checkpoint: Option<std::path::PathBuf>,
    },
    /// Print the boards of a game ply by ply, for checking a game by eye.
    Replay {
        /// `four_in_a_row` or `reversi`.
        game: String,
        /// The game's moves, concatenated (`4453`, `f5d6c3`).
        moves: String,
    },
    /// Count the move sequences of exactly `depth` discs from the start (passes are not plies).
    Perft {
        game: String,
        depth: u32,
        /// Count a game that ended before `depth` as one leaf (Egaroucid's convention).
        #[arg(long)]
        ended_games_are_leaves: bool,
    },
}

#[derive(Debug, Subcommand)]
enum AuditCmd {
    /// Recompute every rating from the log and diff it against the projection; verify every
    /// hash chain; with --exclude, what the ratings would be without those players' matches.
    Ratings {
        /// Only this game (`four_in_a_row`, `reversi`).
        #[arg(long)]
        game: Option<String>,
        /// Comma-separated player ids whose matches a what-if leaves out.
        #[arg(long)]
        exclude: Option<String>,
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        db: DatabaseConfig,
    },
}

pub fn main() -> ExitCode {
    let cli = Cli::try_parse().unwrap_or_else(|e| {
        let variable = service::config::variable_of(&e, &Cli::command());
        let _ = e.print();
        if let Some(variable) = variable {
            eprintln!("(that value comes from `{variable}` when the flag is not given)");
        }
        std::process::exit(e.exit_code())
    });
    let command = match cli.command {
        Some(c) => c,
        None => match Cli::try_parse_from(["discs", "serve"]) {
            Ok(Cli { command: Some(c) }) => c,
            Ok(_) => return ExitCode::FAILURE,
            Err(e) => e.exit(),
        },
    };
    let result = match command {
        Cmd::Serve { config } => serve(config),
        Cmd::Token { admin, db, auth } => token(&admin, db, auth),
        Cmd::Migrate {
            db,
            instance_role,
            instance_password_file,
        } => migrate(
            db,
            instance_role.as_deref(),
            instance_password_file.as_deref(),
        ),
        Cmd::RepairWork { config } => repair_work(config),
        Cmd::Rebuild {
            projection,
            db,
            projections,
        } => rebuild(projection.as_deref(), db, &projections),
        Cmd::Audit {
            what:
                AuditCmd::Ratings {
                    game,
                    exclude,
                    json,
                    db,
                },
        } => audit_ratings(game.as_deref(), exclude.as_deref(), json, db),
        Cmd::Checkpoint { db, history } => checkpoint(db, history),
        Cmd::Verify {
            checkpoints,
            public_key,
            db,
            history,
        } => verify(&checkpoints, public_key.as_deref(), db, history),
        Cmd::VerifyMatch {
            proof,
            public_key,
            checkpoint,
        } => verify_match(&proof, &public_key, checkpoint.as_deref()),
        Cmd::Replay { game, moves } => replay(&game, &moves).map(|text| print!("{text}")),
        Cmd::Perft {
            game,
            depth,
            ended_games_are_leaves,
        } => run_perft(&game, depth, ended_games_are_leaves),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("discs: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Logs to standard error, filtered by `RUST_LOG` (default `info`), in the format
/// `DISCS_LOG_FORMAT` names: `json` (one JSON object per line, with the request's id; the
/// default when standard error is not a terminal) or `text` (coloured only on a terminal).
fn init_logs() -> anyhow::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let terminal = std::io::stderr().is_terminal();
    let json = match std::env::var("DISCS_LOG_FORMAT") {
        Ok(f) if f == "json" => true,
        Ok(f) if f == "text" => false,
        Ok(f) => anyhow::bail!("DISCS_LOG_FORMAT must be `json` or `text`, not `{f}`"),
        Err(_) => !terminal,
    };
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if json {
        logs.json()
            .with_current_span(true)
            .with_span_list(false)
            .try_init()
    } else {
        logs.with_ansi(terminal).try_init()
    };
    Ok(())
}

fn serve(config: ServeConfig) -> anyhow::Result<()> {
    init_logs()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let app = Application::build(config).await?;
        app.run_until_signalled().await?;
        Ok(())
    })
}

fn repair_work(mut config: ServeConfig) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        // The application without its listener's traffic or workers: only its state is used.
        config.edge.addr = "127.0.0.1:0".into();
        config.core.no_workers = true;
        let app = Application::build(config).await?;
        let report = service::workers::repair_work(&app.state())
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        println!(
            "match work rows: {} created, {} fixed, {} removed",
            report.created, report.fixed, report.removed
        );
        Ok(())
    })
}

fn token(name: &str, db: DatabaseConfig, auth: AuthConfig) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let pool = database::open(&db.url, &db.data_dir(), 2).await?;
        database::migrate_pending(&pool).await?;
        let name = service::checks::valid_name(name)
            .map_err(|e| anyhow::anyhow!("{}", ApiError::from(e)))?;
        let file = crate::startup::secret_file(&auth, &db);
        let secret = api::auth::load_secret(&pool, auth.jwt_secret.as_deref(), &file).await?;
        let keys = Keys::new(&secret, None, auth.token_days)?;
        let now = time::OffsetDateTime::now_utc();
        let player = service::players::sign_up_on(&pool.get().await?, &name, now)
            .await
            .map_err(|e| anyhow::anyhow!("{}", ApiError::from(e)))?;
        println!("{}", keys.issue(player, Role::Admin, 0, now)?);
        Ok(())
    })
}

fn checkpoint(db: DatabaseConfig, config: HistoryConfig) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let log = open_log(&db).await?;
        let history = service::history::History::from_config(&config, &db, log.identity().await?)?;
        let signed = service::history::checkpoint_committed(
            log.pool(),
            &log,
            &history,
            &service::clock::SystemClock,
        )
        .await?;
        match signed {
            Some(c) => println!(
                "checkpoint {} signed: {} events, root {} (in {})",
                c.seq,
                c.size,
                c.root,
                history.dir().display()
            ),
            None => println!("nothing new to sign (in {})", history.dir().display()),
        }
        Ok(())
    })
}

fn verify(
    dir: &std::path::Path,
    public_key: Option<&str>,
    db: DatabaseConfig,
    config: HistoryConfig,
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let (report, operator) = runtime.block_on(async {
        let log = open_log(&db).await?;
        let operator = match public_key {
            Some(k) => service::history::public_key(k)?,
            None => service::history::History::from_config(&config, &db, log.identity().await?)?
                .public_key(),
        };
        let report = service::history::verify_folder(&log, dir, &operator).await?;
        anyhow::Ok((report, operator))
    })?;
    for problem in &report.problems {
        println!("NOT OK: {problem}");
    }
    if !report.is_ok() {
        std::process::exit(1);
    }
    println!(
        "ok: the log ({} events) extends all {} checkpoints in {} (up to {} events), signed by {}",
        report.events,
        report.checkpoints,
        dir.display(),
        report.covered,
        eventlog::merkle::to_hex(operator.as_bytes())
    );
    Ok(())
}

fn verify_match(
    proof: &std::path::Path,
    public_key: &str,
    held: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let operator = service::history::public_key(public_key)?;
    let proof: service::history::MatchProof =
        serde_json::from_str(&std::fs::read_to_string(proof)?)?;
    let held: Option<service::history::SignedCheckpoint> = match held {
        Some(f) => Some(serde_json::from_str(&std::fs::read_to_string(f)?)?),
        None => None,
    };
    match service::history::verify_match_proof(&proof, &operator, held.as_ref()) {
        Ok(text) => {
            println!("ok: {text}");
            Ok(())
        }
        Err(e) => {
            println!("NOT OK: {e}");
            std::process::exit(1);
        }
    }
}

fn migrate(
    db: DatabaseConfig,
    instance_role: Option<&str>,
    password_file: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let password = password_file
        .map(|f| {
            std::fs::read_to_string(f)
                .map(|p| p.trim().to_owned())
                .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))
        })
        .transpose()?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let pool = database::open(&db.url, &db.data_dir(), db.pool_size).await?;
        let applied = database::migrate(&pool).await?;
        println!("migrations applied: {applied:?}");
        let log = eventlog::EventLog::new(pool.clone()).identity().await?;
        println!("the log's identity: {log}");
        if let Some(role) = instance_role {
            database::grant_instance_role(&pool, role, password.as_deref()).await?;
            println!("the instances' role {role}: granted");
        }
        Ok(())
    })
}

async fn open_log(db: &DatabaseConfig) -> anyhow::Result<eventlog::EventLog> {
    let pool = database::open(&db.url, &db.data_dir(), db.pool_size).await?;
    database::migrate_pending(&pool).await?;
    Ok(eventlog::EventLog::new(pool))
}

fn rebuild(
    name: Option<&str>,
    db: DatabaseConfig,
    settings: &ProjectionConfig,
) -> anyhow::Result<()> {
    use projections::{Projection, rebuild};
    use std::io::Write;
    let targets: Vec<Projection> = match name {
        Some(n) => vec![n.parse().map_err(|e: String| anyhow::anyhow!(e))?],
        None => Projection::ALL.to_vec(),
    };
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let runner = projections::Runner::new(open_log(&db).await?)
            .with_explorer_plies(settings.explorer_plies);
        for p in targets {
            let id = rebuild::register(&runner, p).await?;
            let started = Instant::now();
            let events = rebuild::rebuild(&runner, p, id, |progress| {
                let done = progress.position as f64 / progress.last_position.max(1) as f64;
                let width = 30usize;
                let filled = ((done.min(1.0)) * width as f64) as usize;
                let eta = if progress.rate > 0.0 && done > 0.0 {
                    started.elapsed().as_secs_f64() * (1.0 - done.min(1.0)) / done
                } else {
                    0.0
                };
                eprint!(
                    "\r{p:<12} [{}{}] {:>5.1}%  {} events  {:.0} ev/s  ETA {:.0} s   ",
                    "#".repeat(filled),
                    " ".repeat(width - filled),
                    done.min(1.0) * 100.0,
                    progress.events,
                    progress.rate,
                    eta
                );
                let _ = std::io::stderr().flush();
            })
            .await?;
            eprintln!();
            println!(
                "{p}: rebuilt from {events} events in {:.2} s and switched",
                started.elapsed().as_secs_f64()
            );
        }
        Ok(())
    })
}

fn audit_ratings(
    game: Option<&str>,
    exclude: Option<&str>,
    json: bool,
    db: DatabaseConfig,
) -> anyhow::Result<()> {
    let game: Option<GameId> = game.map(str::parse).transpose()?;
    let exclude = service::checks::player_list(exclude)
        .map_err(|e| anyhow::anyhow!("{}", ApiError::from(e)))?;
    let runtime = tokio::runtime::Runtime::new()?;
    let (report, tournaments) = runtime.block_on(async {
        let log = open_log(&db).await?;
        let ratings = projections::audit::ratings(&log, game, &exclude).await?;
        let tournaments = projections::audit::tournaments(&log).await?;
        anyhow::Ok((ratings, tournaments))
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", audit_table(&report));
        println!(
            "tournaments: {} recounted from the log, {} standing lines checked, {} mismatch(es)",
            tournaments.tournaments,
            tournaments.lines_checked,
            tournaments.mismatches.len()
        );
        for m in &tournaments.mismatches {
            println!("tournament mismatch: {m}");
        }
    }
    if !tournaments.mismatches.is_empty() {
        return Err(anyhow::anyhow!(
            "the audit found {} tournament standing mismatch(es)",
            tournaments.mismatches.len()
        ));
    }
    if report.mismatches.is_empty() && report.chains_ok {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "the audit found {} rating mismatch(es) and {} broken chain(s)",
            report.mismatches.len(),
            report.broken_chains.len()
        ))
    }
}

/// The audit as readable tables.
pub fn audit_table(r: &projections::audit::RatingsAudit) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "events scanned: {}   players checked: {}   streams verified: {}   chains: {}",
        r.events_scanned,
        r.players_checked,
        r.streams_verified,
        if r.chains_ok { "ok" } else { "BROKEN" }
    );
    let show = |v: &Option<projections::audit::Values>| match v {
        Some(v) => format!(
            "{:.2} / {:.2} / {:.6} ({})",
            v.rating, v.deviation, v.volatility, v.games
        ),
        None => "-".to_owned(),
    };
    if r.mismatches.is_empty() {
        let _ = writeln!(
            out,
            "ratings: every stored rating (ratings, leaderboard) equals the log's"
        );
    } else {
        let _ = writeln!(
            out,
            "\nMISMATCHES\n{:<11}  {:<36}  {:<13}  {:<34}  {:<34}  first diverging match",
            "table", "player", "game", "stored", "recomputed"
        );
        for m in &r.mismatches {
            let _ = writeln!(
                out,
                "{:<11}  {:<36}  {:<13}  {:<34}  {:<34}  {}",
                m.table,
                m.player_id.to_string(),
                m.game.to_string(),
                show(&m.stored),
                show(&m.recomputed),
                m.first_diverging_match
                    .map(|id| id.to_string())
                    .unwrap_or_else(|| "-".into())
            );
        }
    }
    for b in &r.broken_chains {
        let _ = writeln!(
            out,
            "broken chain: {} at version {}: {}",
            b.stream, b.version, b.problem
        );
    }
    if !r.excluded_players.is_empty() {
        let _ = writeln!(
            out,
            "\nWHAT IF without {} player(s)\n{:<36}  {:<13}  {:>9}  {:>9}  {:>8}  removed",
            r.excluded_players.len(),
            "player",
            "game",
            "rating",
            "what-if",
            "delta"
        );
        for w in &r.what_if {
            let _ = writeln!(
                out,
                "{:<36}  {:<13}  {:>9.2}  {:>9.2}  {:>+8.2}  {}",
                w.player_id.to_string(),
                w.game.to_string(),
                w.rating,
                w.what_if,
                w.delta,
                w.matches_removed
            );
        }
    }
    out
}

/// Renders a game ply by ply.
pub fn replay(game: &str, moves: &str) -> anyhow::Result<String> {
    use std::fmt::Write;
    let game: GameId = game.parse()?;
    let mut pos = AnyPosition::start(game);
    let mut out = String::new();
    let colour = |p: &AnyPosition| p.color(p.side_to_move());
    writeln!(out, "ply 0: start, {} to move", colour(&pos))?;
    for row in pos.rows() {
        writeln!(out, "  {row}")?;
    }
    for (i, mv) in split_moves(game, moves)?.into_iter().enumerate() {
        let mover = colour(&pos);
        pos.play(&mv)
            .map_err(|e| anyhow::anyhow!("ply {}: {mv}: {e}", i + 1))?;
        write!(out, "ply {}: {mover} plays {mv}", i + 1)?;
        if pos.must_pass() {
            write!(out, ", {} must pass", colour(&pos))?;
            pos.pass();
        }
        writeln!(out)?;
        for row in pos.rows() {
            writeln!(out, "  {row}")?;
        }
    }
    let [a, b] = pos.discs();
    let (ca, cb) = (pos.color(Side::First), pos.color(Side::Second));
    match pos.outcome() {
        Some(end) => match end.winner {
            Some(side) => writeln!(
                out,
                "over: {} wins ({:?}), discs {ca} {a} - {cb} {b}",
                pos.color(side),
                end.reason
            )?,
            None => writeln!(
                out,
                "over: draw ({:?}), discs {ca} {a} - {cb} {b}",
                end.reason
            )?,
        },
        None => writeln!(
            out,
            "{} to move; legal: {}",
            colour(&pos),
            pos.legal_moves().join(" ")
        )?,
    }
    Ok(out)
}

fn run_perft(game: &str, depth: u32, leaves: bool) -> anyhow::Result<()> {
    let mode = if leaves {
        PerftMode::EndedGameIsLeaf
    } else {
        PerftMode::EndedGameDropped
    };
    let started = Instant::now();
    let nodes = AnyPosition::start(game.parse::<GameId>()?).perft(depth, mode);
    let secs = started.elapsed().as_secs_f64();
    println!(
        "perft {game} {depth}: {nodes} ({secs:.3} s, {:.1} M leaves/s)",
        nodes as f64 / secs.max(1e-9) / 1e6
    );
    Ok(())
}
