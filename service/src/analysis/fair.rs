//! Fair play around analysis: the server never helps a player during a ranked match (SPEC
//! `in_ranked_match`). A player's latest ranked match is the one their queue slot points to.

use uuid::Uuid;

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
