//! Closing an account: the name is erased (not hidden) in one transaction with the player's
//! stored answers and tokens, the ledger outside the database records the closing once it has
//! committed, and a restore from an older backup closes it again ([`reapply_closings`], which
//! start-up keeps trying without ever refusing to serve: [`keep_closed`]). Games, ratings and
//! events stay, under [`players::closed_label`].

use time::OffsetDateTime;
use uuid::Uuid;

use domain::ids::PlayerId;

use domain::challenges::Withdrawal;

use crate::answers;
use crate::challenges::{self, Challenges};
use crate::error::{Error, unexpected};
use crate::history::History;
use crate::live::LivePath;
use crate::players::{self, closed_label};
use crate::reasons::Missing;
use crate::tournaments::Tournaments;

/// A closed account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    pub player: PlayerId,
    /// The anonymous label its games and ratings now carry.
    pub label: String,
    pub closed_at: OffsetDateTime,
}

/// Closes `player`'s account: in one transaction, its name is overwritten by an anonymous label
/// (erased, not hidden), its own stored answers are deleted, the label replaces the name in the
/// other players' stored answers that show it ([`answers::erase_player`]: structurally, never as
/// text), and every token it holds is ended; once that has committed, the ledger outside the
/// database records it (so that a restore from an older backup closes it again; a ledger that
/// could not be written is caught up from the database by [`reapply_closings`]). Its games, ratings and events stay, under the
/// label; no event changes, so every chain and checkpoint still verifies. Refused while the
/// player holds a queue ticket (`already_queued`) or sits in an unfinished ranked match
/// (`in_ranked_match`); `not_found` for an unknown or already closed account. Its open
/// challenges, both ways, are withdrawn after it, it resigns its open correspondence games, and
/// it withdraws from its tournaments that have not ended (which pair no closed account anyway:
/// `standing::busy`).
pub async fn close(
    app: &Challenges,
    tournaments: &Tournaments,
    history: &History,
    player: PlayerId,
    at: OffsetDateTime,
) -> Result<Closed, Error> {
    let closed = erase(app, player, at)
        .await?
        .ok_or(Error::NotFound(Missing::Player))?;
    if let Err(e) = crate::history::record_closing(history, player.as_uuid(), at) {
        // The closing stands; the next pass of `reapply_closings` writes the line.
        tracing::error!(player = %player, error = %e, "the ledger of closings could not be written");
    }
    // One left open cannot start a match: an acceptance reads both players' closings.
    if let Err(e) = challenges::withdraw_all(app, player, Withdrawal::Closed).await {
        tracing::warn!(player = %player, error = %e, "a closed player's challenges stayed open");
    }
    // Nobody will move for them again: their games over days end now, not at their deadlines
    // (which still end any that this leaves open).
    if let Err(e) = crate::live::correspondence::resign_all(app, player).await {
        tracing::warn!(player = %player, error = %e, "a closed player's correspondence games stayed open");
    }
    // One closing per account: the withdrawals' ids derive from it, so a retry writes none twice.
    let closing_id = Uuid::new_v5(&player.as_uuid(), b"closing");
    if let Err(e) =
        crate::tournaments::commands::withdraw_everywhere(tournaments, player, closing_id).await
    {
        tracing::warn!(player = %player, error = %e, "a closed player stayed entered in a tournament");
    }
    Ok(closed)
}

/// `already_queued` while `player` holds a queue ticket, `in_ranked_match` while they sit in an
/// unfinished ranked match (the ticket read first: a wave that seats them clears it in the
/// same commit).
async fn refuse_queued_or_seated(
    tx: &impl deadpool_postgres::GenericClient,
    player: PlayerId,
) -> Result<(), Error> {
    let queued = tx
        .query_opt(
            "SELECT 1 FROM queue_slots WHERE player_id = $1 AND ticket_id IS NOT NULL",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    if queued.is_some() {
        return Err(Error::AlreadyQueued);
    }
    if crate::standing::seated_in(tx, player).await?.is_some() {
        return Err(Error::InRankedMatch);
    }
    Ok(())
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
    // Under the player's standing lock, which a ticket's opening, a rated acceptance and a
    // tournament step take before they read closings (`standing::lock`): one that committed
    // first is seen here, and any later one sees the closing.
    crate::standing::lock(&tx, &[player.as_uuid()]).await?;
    refuse_queued_or_seated(&tx, player).await?;
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
    let naming = tx
        .query(
            "SELECT player_id, key, body FROM idempotency_keys \
              WHERE strpos(body, $1) > 0 FOR UPDATE",
            &[&player.to_string()],
        )
        .await
        .map_err(unexpected)?;
    let (mut owners, mut keys, mut bodies) = (Vec::new(), Vec::new(), Vec::new());
    for row in naming {
        if let Some(body) = answers::erase_player(row.get(2), player.as_uuid(), &label) {
            owners.push(row.get::<_, uuid::Uuid>(0));
            keys.push(row.get::<_, String>(1));
            bodies.push(body);
        }
    }
    tx.execute(
        "UPDATE idempotency_keys k SET body = e.body \
           FROM unnest($1::uuid[], $2::text[], $3::text[]) AS e(player_id, key, body) \
          WHERE k.player_id = e.player_id AND k.key = e.key",
        &[&owners, &keys, &bodies],
    )
    .await
    .map_err(unexpected)?;
    drop(name);
    players::next_generation(&tx, player, at).await?;
    tx.commit().await.map_err(unexpected)?;
    // This instance's streams of the player end, its cached name goes and its watched matches
    // show the label before the closing is answered: the caller applies the change here at once
    // (`api::tokens::Generations::changed`), the other instances when they hear of it.
    Ok(Some(Closed {
        player,
        label,
        closed_at: at,
    }))
}

/// Closes again every account the ledger says is closed and the database does not (after a
/// restore from a backup taken before the closing), and writes to the ledger every closing the
/// database holds and the ledger lacks (a line that could not be written when it committed);
/// the number closed again. Idempotent.
pub async fn reapply_closings(app: &LivePath, history: &History) -> Result<usize, Error> {
    let ledger = crate::history::closings(history).map_err(unexpected)?;
    let mut closed = 0;
    for &(player, at) in &ledger {
        if erase(app, PlayerId::from_uuid(player), at).await?.is_some() {
            closed += 1;
        }
    }
    let written: std::collections::HashSet<uuid::Uuid> = ledger.iter().map(|c| c.0).collect();
    let client = app.pool.get().await.map_err(unexpected)?;
    let in_database = client
        .query(
            "SELECT player_id, closed_at FROM players WHERE closed_at IS NOT NULL",
            &[],
        )
        .await
        .map_err(unexpected)?;
    for row in in_database {
        let player: uuid::Uuid = row.get(0);
        if !written.contains(&player) {
            crate::history::record_closing(history, player, row.get(1)).map_err(unexpected)?;
        }
    }
    Ok(closed)
}

/// How long [`keep_closed`] waits before trying again.
const RETRY_CLOSINGS: std::time::Duration = std::time::Duration::from_secs(5);

/// [`reapply_closings`] until it succeeds (or the instance stops), logging each failure: a
/// closing that cannot be re-applied never keeps the server from serving.
pub async fn keep_closed(
    app: LivePath,
    history: std::sync::Arc<History>,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        match reapply_closings(&app, &history).await {
            Ok(0) => return,
            Ok(reclosed) => {
                tracing::warn!(
                    reclosed,
                    "accounts closed after the database's backup closed again"
                );
                return;
            }
            Err(e) => {
                tracing::error!(error = %e, "closings could not be re-applied; trying again")
            }
        }
        tokio::select! {
            () = tokio::time::sleep(RETRY_CLOSINGS) => {}
            _ = stopping.wait_for(|s| *s) => return,
        }
    }
}
