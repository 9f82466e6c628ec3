//! Closing an account: the ledger outside the database records it, the name is erased (not
//! hidden) in one transaction with the player's stored answers and tokens, and a restore from an
//! older backup closes it again ([`reapply_closings`]). Games, ratings and events stay, under
//! [`players::closed_label`].

use time::OffsetDateTime;

use domain::ids::PlayerId;

use crate::error::{Error, unexpected};
use crate::history::History;
use crate::live::LivePath;
use crate::players::{self, closed_label};
use crate::reasons::Missing;

/// A closed account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    pub player: PlayerId,
    /// The anonymous label its games and ratings now carry.
    pub label: String,
    pub closed_at: OffsetDateTime,
}

/// Closes `player`'s account: the ledger outside the database records it (so that a restore from
/// an older backup closes it again), then, in one transaction, its name is overwritten by an
/// anonymous label (erased, not hidden), its stored answers (which may repeat the name) are
/// deleted, and every token it holds is ended. Its games, ratings and events stay, under the
/// label; no event changes, so every chain and checkpoint still verifies. Refused while the
/// player holds a queue ticket (`already_queued`) or sits in an unfinished ranked match
/// (`in_ranked_match`); `not_found` for an unknown or already closed account.
pub async fn close(
    app: &LivePath,
    history: &History,
    player: PlayerId,
    at: OffsetDateTime,
) -> Result<Closed, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_opt(
            "SELECT closed_at IS NOT NULL FROM players WHERE player_id = $1",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    if row.is_none_or(|r| r.get::<_, bool>(0)) {
        return Err(Error::NotFound(Missing::Player));
    }
    let queued = client
        .query_opt(
            "SELECT 1 FROM queue_slots WHERE player_id = $1 AND ticket_id IS NOT NULL",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    drop(client);
    if queued.is_some() {
        return Err(Error::AlreadyQueued);
    }
    crate::analysis::boundary::refuse_seated(app, player).await?;
    crate::history::record_closing(history, player.as_uuid(), at).map_err(unexpected)?;
    erase(app, player, at)
        .await?
        .ok_or(Error::NotFound(Missing::Player))
}

/// The erasure itself (see [`close`]); `None` when the account is unknown or already closed.
async fn erase(
    app: &LivePath,
    player: PlayerId,
    at: OffsetDateTime,
) -> Result<Option<Closed>, Error> {
    let label = closed_label(player);
    let mut client = app.pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    let name = tx
        .query_opt(
            "SELECT name FROM players WHERE player_id = $1 AND closed_at IS NULL FOR UPDATE",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    let Some(name) = name.map(|r| r.get::<_, String>(0)) else {
        return Ok(None);
    };
    tx.execute(
        "UPDATE players SET name = $2, closed_at = $3 WHERE player_id = $1",
        &[&player.as_uuid(), &label, &at],
    )
    .await
    .map_err(unexpected)?;
    // The player's own stored answers go; their opponents' (a match view names both seats)
    // keep answering a retry, with the label where the name was.
    tx.execute(
        "DELETE FROM idempotency_keys WHERE player_id = $1",
        &[&player.as_uuid()],
    )
    .await
    .map_err(unexpected)?;
    tx.execute(
        "UPDATE idempotency_keys \
            SET body = replace(body::text, to_jsonb($1::text)::text, to_jsonb($2::text)::text)::jsonb \
          WHERE strpos(body::text, to_jsonb($1::text)::text) > 0",
        &[&name, &label],
    )
    .await
    .map_err(unexpected)?;
    players::next_generation(&tx, player, at).await?;
    tx.commit().await.map_err(unexpected)?;
    app.cache.forget_player(player);
    Ok(Some(Closed {
        player,
        label,
        closed_at: at,
    }))
}

/// Closes again every account the ledger says is closed and the database does not (after a
/// restore from a backup taken before the closing); the number closed again.
pub async fn reapply_closings(app: &LivePath, history: &History) -> Result<usize, Error> {
    let ledger = crate::history::closings(history).map_err(unexpected)?;
    let mut closed = 0;
    for (player, at) in ledger {
        if erase(app, PlayerId::from_uuid(player), at).await?.is_some() {
            closed += 1;
        }
    }
    Ok(closed)
}
