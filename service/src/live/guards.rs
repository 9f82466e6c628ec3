//! The live guards where the services read them: a live ranked match beyond its public opening
//! publishes its guard with each move (`match_work`'s `live_key` and `live_depth`, written by the
//! live path under the row's version guard), an open rated correspondence game its own
//! (`correspondence_games`, by `live::correspondence`), and a [`Boundary`] is the guards of one game read
//! for one question: an analysis, the explorer, or the CPU about to choose a move (whose level
//! that searches plays the level-2 policy at a guarded position, [`cpu_level_at`]). The rule is
//! `domain::boundary`'s; who is refused what is `analysis::boundary`'s.

use deadpool_postgres::GenericClient;

use domain::boundary::{Asked, Guard, withheld};
use domain::cpu;
use domain::games::{AnyPosition, GameId};

use crate::error::{Error, unexpected};
use crate::live::LivePath;

/// The live guards of one game, as read for one question.
#[derive(Clone, Debug)]
pub struct Boundary {
    public: u32,
    guards: Vec<Guard>,
}

impl Boundary {
    /// A boundary that withholds nothing, for the readers of the solved-position cache whose
    /// answers reach nobody before they pass a boundary of their own: the move-quality
    /// assessor (read by admins), a job's runner (its result is read through
    /// `analysis::boundary::refuse_position`).
    pub fn internal() -> Boundary {
        Boundary {
            public: u32::MAX,
            guards: Vec::new(),
        }
    }

    /// Whether an answer about `pos` must leave out its value and best moves.
    pub fn withholds(&self, pos: &AnyPosition) -> bool {
        !self.guards.is_empty() && withheld(&Asked::of(pos), self.public, &self.guards)
    }

    /// How many live guards it holds.
    pub fn guards(&self) -> usize {
        self.guards.len()
    }
}

/// The boundary for questions about positions of `game` no deeper than `deepest` discs: the
/// guards of its live ranked matches that deep or shallower (a deeper live position has no
/// follower that shallow).
pub async fn load(app: &LivePath, game: GameId, deepest: u32) -> Result<Boundary, Error> {
    let public = app.play.public_plies.of(game);
    if deepest <= public {
        return Ok(Boundary {
            public,
            guards: Vec::new(),
        });
    }
    let client = app.pool.get().await.map_err(unexpected)?;
    let guards = guards(&client, game, deepest).await?;
    drop(client);
    Ok(Boundary { public, guards })
}

/// The guards of `game`'s live ranked matches and open rated correspondence games no deeper
/// than `deepest` discs, as published in `match_work` (one row per active match, scanned: no
/// index, so that a move's update of its row stays a HOT update) and `correspondence_games`
/// (through its index of the rows that hold a guard: a casual game costs nothing here).
pub async fn guards(
    client: &impl GenericClient,
    game: GameId,
    deepest: u32,
) -> Result<Vec<Guard>, Error> {
    let statement = client
        .prepare_cached(
            "SELECT live_key FROM match_work \
             WHERE live_depth <= $1 AND starts_with(live_key, $2) \
             UNION ALL \
             SELECT live_key FROM correspondence_games \
             WHERE live_key IS NOT NULL AND live_depth <= $1 AND starts_with(live_key, $2)",
        )
        .await
        .map_err(unexpected)?;
    let depth = i16::try_from(deepest).unwrap_or(i16::MAX);
    let prefix = format!("{game}:");
    let rows = client
        .query(&statement, &[&depth, &prefix])
        .await
        .map_err(unexpected)?;
    Ok(rows
        .iter()
        .filter_map(|row| Guard::parse(row.get(0)))
        .filter(|g| g.game() == game)
        .collect())
}

/// The level the CPU plays at `position` when asked for `level`: the levels that search (and
/// reach the exact solvers, the solved positions and the books) play [`cpu::GUARDED_LEVEL`]'s
/// policy at a position the fair-play boundary guards, whoever the CPU plays for, so that no
/// CPU move relays a live ranked position's best move.
pub async fn cpu_level_at(app: &LivePath, position: &AnyPosition, level: u8) -> Result<u8, Error> {
    if level <= cpu::GUARDED_LEVEL {
        return Ok(level);
    }
    let guarded = load(app, position.game(), position.ply())
        .await?
        .withholds(position);
    Ok(if guarded { cpu::GUARDED_LEVEL } else { level })
}
