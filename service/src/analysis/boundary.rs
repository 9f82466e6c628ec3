//! The fair-play boundary where the services meet it: every answer that carries a position's
//! value or best moves goes through a [`Boundary`] (the rule is `domain::boundary`'s, the guards
//! are read by `live::guards`); a question reads the guards of its game no deeper than the
//! deepest position it covers, and every position of the answer that can follow a live one
//! within its reach is refused or withheld. The list of
//! the routes and functions that go through it is in ARCHITECTURE.md ("The fair-play
//! boundary"). A player seated in a live ranked match gets no position service at all
//! ([`refuse_seated`]).

use domain::games::AnyPosition;
use domain::ids::PlayerId;

use crate::error::{Error, unexpected};
use crate::live::LivePath;
pub use crate::live::guards::{Boundary, guards, load};

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
