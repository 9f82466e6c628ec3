//! Fair play around analysis: the server never helps a player during a ranked match (SPEC
//! `in_ranked_match`). A player's latest ranked match is the one their queue slot points to;
//! the positions of live ranked matches beyond the public opening, and the positions one move
//! after them, are refused to everyone (the guard's keys in `match_work`, migration V12, written
//! with each move by the live path; the rules are `domain::fairplay`'s).

use uuid::Uuid;

use domain::fairplay;
use domain::games::AnyPosition;
use domain::ids::{MatchId, PlayerId};

use crate::error::{Error, unexpected};
use crate::live::play;
use crate::state::AppState;

/// `Err(InRankedMatch)` while `player` is seated in an active ranked match.
pub async fn refuse_during_ranked(app: &AppState, player: PlayerId) -> Result<(), Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_opt(
            "SELECT match_id FROM queue_slots WHERE player_id = $1",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    drop(client);
    let Some(id) = row.and_then(|r| r.get::<_, Option<Uuid>>(0)) else {
        return Ok(());
    };
    let loaded = play::load(app, MatchId::from_uuid(id)).await?;
    if loaded.get()?.is_finished() {
        Ok(())
    } else {
        Err(Error::InRankedMatch)
    }
}

/// `Err(LivePosition)` when `pos` is the position of an active ranked match beyond its game's
/// public opening, or one move after it, in any orientation.
pub async fn refuse_live_position(app: &AppState, pos: &AnyPosition) -> Result<(), Error> {
    let public = app.play.public_plies.of(pos.game());
    let Some(depths) = fairplay::live_depths(pos.ply(), public) else {
        return Ok(());
    };
    let depths = depths.map(|d| i16::try_from(d).unwrap_or(i16::MAX));
    let client = app.pool.get().await.map_err(unexpected)?;
    let statement = client
        .prepare_cached(
            "SELECT live_key FROM match_work \
             WHERE live_depth = ANY($1) AND starts_with(live_key, $2)",
        )
        .await
        .map_err(unexpected)?;
    let prefix = format!("{}:", pos.game());
    let rows = client
        .query(&statement, &[&depths.as_slice(), &prefix])
        .await
        .map_err(unexpected)?;
    drop(client);
    if rows
        .iter()
        .any(|row| fairplay::touches(pos, public, row.get(0)))
    {
        Err(Error::LivePosition)
    } else {
        Ok(())
    }
}

/// [`refuse_live_position`] for a position known by its canonical key (a stored job's).
pub async fn refuse_live_key(app: &AppState, key: &str) -> Result<(), Error> {
    match fairplay::position_of_key(key) {
        Some(pos) => refuse_live_position(app, &pos).await,
        None => Ok(()),
    }
}
