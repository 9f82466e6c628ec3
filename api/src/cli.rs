//! The operator CLI: `discs serve` (the default) `| migrate | token | replay | perft`.

use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use domain::games::{
    AnyPosition, FourInARow, Game, GameId, PerftMode, Reversi, Side, perft, split_moves,
};

use crate::auth::{Keys, Role};
use crate::config::{AuthConfig, DatabaseConfig, ServeConfig};
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
    /// Create the database if missing and apply the migrations (under an advisory lock).
    Migrate {
        #[command(flatten)]
        db: DatabaseConfig,
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

pub fn main() -> ExitCode {
    let cli = Cli::parse();
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
        Cmd::Migrate { db } => migrate(db),
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

fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).try_init();
}

fn serve(config: ServeConfig) -> anyhow::Result<()> {
    init_logs();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let app = Application::build(config).await?;
        app.run_until_stopped().await?;
        Ok(())
    })
}

fn token(name: &str, db: DatabaseConfig, auth: AuthConfig) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let pool = eventlog::open(&db.url, &db.data_dir(), 2).await?;
        eventlog::migrate(&pool).await?;
        let name = crate::routes::players::valid_name(name).map_err(|e| anyhow::anyhow!("{e}"))?;
        let secret = crate::auth::load_secret(&pool, auth.jwt_secret.as_deref()).await?;
        let keys = Keys::new(&secret, None, auth.token_days)?;
        let player = domain::ids::PlayerId::from_uuid(uuid::Uuid::now_v7());
        let now = time::OffsetDateTime::now_utc();
        pool.get()
            .await?
            .execute(
                "INSERT INTO players (player_id, name, created_at) VALUES ($1, $2, $3)",
                &[&player.as_uuid(), &name, &now],
            )
            .await?;
        println!("{}", keys.issue(player, Role::Admin, now)?);
        Ok(())
    })
}

fn migrate(db: DatabaseConfig) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let pool = eventlog::open(&db.url, &db.data_dir(), db.pool_size).await?;
        let applied = eventlog::migrate(&pool).await?;
        println!("migrations applied: {applied:?}");
        Ok(())
    })
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
    let nodes = match game.parse::<GameId>()? {
        GameId::FourInARow => perft(&FourInARow::start(), depth, mode),
        GameId::Reversi => perft(&Reversi::start(), depth, mode),
    };
    let secs = started.elapsed().as_secs_f64();
    println!(
        "perft {game} {depth}: {nodes} ({secs:.3} s, {:.1} M leaves/s)",
        nodes as f64 / secs.max(1e-9) / 1e6
    );
    Ok(())
}
