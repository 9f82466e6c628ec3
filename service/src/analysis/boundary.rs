//! The fair-play boundary where the services meet it: every answer that carries a position's
//! value or best moves goes through a [`Boundary`] (the rule is `domain::boundary`'s). A live
//! ranked match beyond its public opening publishes its guard with each move (`match_work`'s
//! `live_key` and `live_depth`, written by the live path under the row's version guard); a
//! question reads the guards of its game no deeper than the deepest position it covers, and
//! every position of the answer that can follow a live one is refused or withheld. The list of
//! the routes and functions that go through it is in ARCHITECTURE.md ("The fair-play
//! boundary"). A player seated in a live ranked match gets no position service at all
//! ([`refuse_seated`]).

use deadpool_postgres::GenericClient;

use domain::boundary::{Asked, Guard, withheld};
use domain::games::{AnyPosition, GameId};
use domain::ids::PlayerId;

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
    /// [`refuse_position`]).
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

/// The guards of `game`'s live ranked matches no deeper than `deepest` discs, as published in
/// `match_work` (one row per active match, scanned: no index, so that a move's update of its
/// row stays a HOT update).
pub async fn guards(
    client: &impl GenericClient,
    game: GameId,
    deepest: u32,
) -> Result<Vec<Guard>, Error> {
    let statement = client
        .prepare_cached(
            "SELECT live_key FROM match_work \
             WHERE live_depth <= $1 AND starts_with(live_key, $2)",
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

/// `Err(LivePosition)` when `pos` is a live ranked position beyond the public opening or can
/// follow one, in any image.
pub async fn refuse_position(app: &LivePath, pos: &AnyPosition) -> Result<(), Error> {
    if load(app, pos.game(), pos.ply()).await?.withholds(pos) {
        Err(Error::LivePosition)
    } else {
        Ok(())
    }
}

/// The boundary for a question about `pos` asked by `player`, whose answer reaches positions up
/// to ply `deepest`: refused to a player seated in a live ranked match (`in_ranked_match`), and
/// to anyone where `pos` is a live ranked position or can follow one (`LivePosition`); else the
/// boundary, to withhold what lies deeper.
pub async fn guard(
    app: &LivePath,
    player: PlayerId,
    pos: &AnyPosition,
    deepest: u32,
) -> Result<Boundary, Error> {
    refuse_seated(app, player).await?;
    let boundary = load(app, pos.game(), deepest).await?;
    if boundary.withholds(pos) {
        return Err(Error::LivePosition);
    }
    Ok(boundary)
}

/// `Err(InRankedMatch)` while `player` is seated in a live ranked match (a queue match or a
/// rated tournament game), whatever position is asked: the public opening too, whose exact
/// values (Four in a Row's outcome book) would help in the player's own game as much as later
/// ones. Seated is the player's `ranked_seats` row, which lives exactly as long as the match
/// (V21): nothing a player does elsewhere (a tournament joined, left or resigned) moves it.
pub async fn refuse_seated(app: &LivePath, player: PlayerId) -> Result<(), Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    if crate::standing::seated_in(&client, player).await?.is_some() {
        Err(Error::InRankedMatch)
    } else {
        Ok(())
    }
}
