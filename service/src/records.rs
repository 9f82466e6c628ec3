//! A player's records as the projections keep them: the profile's ratings, the match history,
//! the rating after each ranked match, and the leaderboards; each read from a replica when one
//! has caught up with the projection it reads ([`Core::read`]).

use std::collections::{BTreeMap, HashMap};

use time::OffsetDateTime;

use domain::games::GameId;
use domain::ids::PlayerId;
use domain::ratings::Ladder;
use eventlog::EventLog;
use projections::Projection;

pub use projections::queries::{HistoryRow, LeaderRow, RatingPointRow, StoredRating};

use crate::core::Core;
use crate::error::{Error, unexpected};
use crate::players;

/// A player's name and stored ratings by ladder (a ladder never rated on is absent);
/// `not_found` when there is no such player.
pub async fn ratings(
    core: &Core,
    player: PlayerId,
) -> Result<(String, BTreeMap<Ladder, StoredRating>), Error> {
    let client = core.pool.get().await.map_err(unexpected)?;
    let name = players::name(&client, player).await?;
    let stored = projections::queries::ratings_of(&client, player)
        .await
        .map_err(unexpected)?;
    Ok((name, stored))
}

/// A player's finished matches, newest first (of one game or all, ended before `before`, at
/// most `limit`), with their opponents' names; `not_found` when there is no such player.
pub async fn history(
    core: &Core,
    player: PlayerId,
    game: Option<GameId>,
    before: Option<OffsetDateTime>,
    limit: i64,
) -> Result<(Vec<HistoryRow>, HashMap<PlayerId, String>), Error> {
    core.read(Projection::History, async |log: &EventLog| {
        let client = log.pool().get().await.map_err(unexpected)?;
        players::exists(&client, player).await?;
        let rows = projections::queries::history(&client, player, game, before, limit)
            .await
            .map_err(unexpected)?;
        let opponents: Vec<PlayerId> = rows
            .iter()
            .filter_map(|r| r.opponent.map(PlayerId::from_uuid))
            .collect();
        let names = players::names(&client, &opponents).await?;
        Ok((rows, names))
    })
    .await
}

/// A player's rating after each rated match on `ladder`, oldest first; `not_found` when there is
/// no such player.
pub async fn rating_points(
    core: &Core,
    player: PlayerId,
    ladder: Ladder,
) -> Result<Vec<RatingPointRow>, Error> {
    core.read(Projection::Ratings, async |log: &EventLog| {
        let client = log.pool().get().await.map_err(unexpected)?;
        players::exists(&client, player).await?;
        projections::queries::rating_points(&client, player, ladder)
            .await
            .map_err(unexpected)
    })
    .await
}

/// The best `limit` non-provisional players of `ladder`, best first, each with their name: the
/// humans, or (`bots`) the declared bots' board.
pub async fn leaderboard(
    core: &Core,
    ladder: Ladder,
    limit: i64,
    bots: bool,
) -> Result<Vec<(LeaderRow, String)>, Error> {
    core.read(Projection::Leaderboards, async |log: &EventLog| {
        let client = log.pool().get().await.map_err(unexpected)?;
        let rows = projections::queries::leaderboard(&client, ladder, limit, bots)
            .await
            .map_err(unexpected)?;
        let ids: Vec<PlayerId> = rows
            .iter()
            .map(|r| PlayerId::from_uuid(r.player_id))
            .collect();
        let names = players::names(&client, &ids).await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let name = names
                    .get(&PlayerId::from_uuid(r.player_id))
                    .cloned()
                    .unwrap_or_default();
                (r, name)
            })
            .collect())
    })
    .await
}
