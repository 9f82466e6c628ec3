//! Players (the table `players`): signing up, once per `Idempotency-Key`, their names as shown
//! (a declared bot's with its BOT tag), and whether one exists.

use std::collections::HashMap;

use deadpool_postgres::GenericClient;
use serde_json::json;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::ids::PlayerId;

use crate::answers;
use crate::core::Core;
use crate::error::{Error, unexpected};
use crate::reasons::Missing;

/// Ids of players created under an `Idempotency-Key` (UUID v5 of the key in this namespace).
const SIGN_UP: Uuid = Uuid::from_u128(0x8f0c_5a52_7d1e_4b8e_9a3c_64e1_d2b7_f019);

/// A new player named `name` (already checked: [`crate::checks::valid_name`]).
pub async fn sign_up(core: &Core, name: &str, now: OffsetDateTime) -> Result<PlayerId, Error> {
    let client = core.pool.get().await.map_err(unexpected)?;
    sign_up_on(&client, name, now).await
}

/// [`sign_up`] through `client`.
pub async fn sign_up_on(
    client: &impl GenericClient,
    name: &str,
    now: OffsetDateTime,
) -> Result<PlayerId, Error> {
    let player = PlayerId::from_uuid(Uuid::now_v7());
    client
        .execute(
            "INSERT INTO players (player_id, name, created_at) VALUES ($1, $2, $3)",
            &[&player.as_uuid(), &name, &now],
        )
        .await
        .map_err(unexpected)?;
    Ok(player)
}

/// The player a sign-up under `key` created (creating it now if it is the first attempt), with
/// the key's record stored beside it in one transaction; `idempotency_key_reused` when the key
/// was used with another request (`hash`).
pub async fn sign_up_once(
    app: &Core,
    key: &str,
    hash: &[u8],
    name: &str,
    now: OffsetDateTime,
) -> Result<(PlayerId, String), Error> {
    crate::checks::sign_up_key(key)?;
    let player = Uuid::new_v5(&SIGN_UP, key.as_bytes());
    let mut client = app.pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    let body = json!({"player_id": player, "name": name}).to_string();
    let written = tx
        .query_one(
            "WITH created AS ( \
                 INSERT INTO players (player_id, name, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (player_id) DO NOTHING RETURNING 1 \
             ), recorded AS ( \
                 INSERT INTO idempotency_keys \
                     (player_id, key, request_hash, status, body, created_at) \
                 VALUES ($1, $4, $5, $7, $6, $3) ON CONFLICT DO NOTHING RETURNING 1 \
             ) \
             SELECT (SELECT count(*) FROM created), (SELECT count(*) FROM recorded)",
            &[
                &player,
                &name,
                &now,
                &key,
                &hash,
                &body,
                &i32::from(answers::CREATED),
            ],
        )
        .await
        .map_err(unexpected)?;
    // The player exists but the key's record did not: the record was purged, and the key is
    // spent. A retry comes within the records' lifetime; after it, the key must never mint a
    // token for the player it once created (dropping the transaction undoes the new record).
    let (created, recorded): (i64, i64) = (written.get(0), written.get(1));
    if created == 0 && recorded == 1 {
        return Err(Error::IdempotencyKeyReused);
    }
    // What the first attempt stored (this one's, or a twin's that committed first), and the
    // player's name as it is (the record may have expired while the player stays).
    let row = tx
        .query_one(
            "SELECT k.request_hash, p.name FROM players p \
               JOIN idempotency_keys k ON k.player_id = p.player_id AND k.key = $2 \
              WHERE p.player_id = $1",
            &[&player, &key],
        )
        .await
        .map_err(unexpected)?;
    let (stored_hash, stored_name): (Vec<u8>, String) = (row.get(0), row.get(1));
    if stored_hash != hash {
        return Err(Error::IdempotencyKeyReused);
    }
    tx.commit().await.map_err(unexpected)?;
    Ok((PlayerId::from_uuid(player), stored_name))
}

/// A player's name as shown: the name, with [`domain::standing::BOT_TAG`] and a space before it
/// for a declared bot (`standing`'s `player_bots`; no player may take such a name:
/// `crate::checks::reserved`). Every name a view shows is read through here or [`names`].
const SHOWN: &str = "SELECT p.player_id, \
       CASE WHEN EXISTS (SELECT 1 FROM player_bots b WHERE b.player_id = p.player_id) \
            THEN $2::text || ' ' || p.name ELSE p.name END \
  FROM players p";

/// A player's name as shown (a bot's tagged); `not_found` when there is no such player.
pub async fn name(client: &impl GenericClient, player: PlayerId) -> Result<String, Error> {
    let row = client
        .query_opt(
            &format!("{SHOWN} WHERE p.player_id = $1"),
            &[&player.as_uuid(), &domain::standing::BOT_TAG],
        )
        .await
        .map_err(unexpected)?
        .ok_or(Error::NotFound(Missing::Player))?;
    Ok(row.get(1))
}

/// `not_found` unless the player exists.
pub async fn exists(client: &impl GenericClient, player: PlayerId) -> Result<(), Error> {
    name(client, player).await.map(drop)
}

/// The names as shown (a bot's tagged) of those of `players` that exist.
pub async fn names(
    client: &impl GenericClient,
    players: &[PlayerId],
) -> Result<HashMap<PlayerId, String>, Error> {
    let ids: Vec<Uuid> = players.iter().map(|p| p.as_uuid()).collect();
    let rows = client
        .query(
            &format!("{SHOWN} WHERE p.player_id = ANY($1)"),
            &[&ids, &domain::standing::BOT_TAG],
        )
        .await
        .map_err(unexpected)?;
    Ok(rows
        .into_iter()
        .map(|r| (PlayerId::from_uuid(r.get(0)), r.get(1)))
        .collect())
}

/// [`names`], through a connection of the pool.
pub async fn names_of(
    core: &Core,
    players: &[PlayerId],
) -> Result<HashMap<PlayerId, String>, Error> {
    let client = core.pool.get().await.map_err(unexpected)?;
    names(&client, players).await
}

/// The channel on which a change of a player's token generation is told to every instance.
pub const TOKENS_CHANNEL: &str = "discs_tokens";

/// The generation of `player`'s tokens: 0 until their tokens are first ended.
pub async fn token_generation(client: &impl GenericClient, player: PlayerId) -> Result<u32, Error> {
    let row = client
        .query_opt(
            "SELECT generation FROM token_generations WHERE player_id = $1",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    Ok(row.map_or(0, |r| u32::try_from(r.get::<_, i32>(0)).unwrap_or(0)))
}

/// What a token of a player may still do ([`token_rights`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenRights {
    /// The player's token generation: our tokens issued before it are ended.
    pub generation: u32,
    /// The account is closed: every token of it is ended, an external issuer's too.
    pub closed: bool,
}

impl TokenRights {
    /// Whether a token issued at `generation` (none: an external issuer's) is ended.
    pub fn ended(&self, generation: Option<u32>) -> bool {
        self.closed || generation.is_some_and(|g| g < self.generation)
    }
}

/// `player`'s token rights: their generation ([`token_generation`]), and whether their account
/// is closed (a player not stored yet is not).
pub async fn token_rights(
    client: &impl GenericClient,
    player: PlayerId,
) -> Result<TokenRights, Error> {
    let row = client
        .query_one(
            "SELECT (SELECT generation FROM token_generations WHERE player_id = $1), \
                    coalesce((SELECT closed_at IS NOT NULL FROM players WHERE player_id = $1), false)",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    let generation: Option<i32> = row.get(0);
    Ok(TokenRights {
        generation: generation.map_or(0, |g| u32::try_from(g).unwrap_or(0)),
        closed: row.get(1),
    })
}

/// Of `players`, those whose accounts are closed.
pub async fn closed_among(
    client: &impl GenericClient,
    players: &[Uuid],
) -> Result<Vec<PlayerId>, Error> {
    let rows = client
        .query(
            "SELECT player_id FROM players WHERE player_id = ANY($1) AND closed_at IS NOT NULL",
            &[&players],
        )
        .await
        .map_err(unexpected)?;
    Ok(rows.iter().map(|r| PlayerId::from_uuid(r.get(0))).collect())
}

/// Whether `player`'s account is closed (or was never opened).
pub async fn closed(client: &impl GenericClient, player: PlayerId) -> Result<bool, Error> {
    let row = client
        .query_opt(
            "SELECT closed_at IS NOT NULL FROM players WHERE player_id = $1",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    Ok(row.is_none_or(|r| r.get(0)))
}

/// Ends every token of `player` issued so far: their generation goes up by one, and every
/// instance hears of it on [`TOKENS_CHANNEL`] when the change commits. The new generation;
/// `not_found` when there is no such player.
pub async fn end_tokens(core: &Core, player: PlayerId, at: OffsetDateTime) -> Result<u32, Error> {
    let mut client = core.pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    exists(&tx, player).await?;
    let generation = next_generation(&tx, player, at).await?;
    tx.commit().await.map_err(unexpected)?;
    Ok(generation)
}

/// [`end_tokens`], its answer stored under `record` in the same transaction: the generation
/// reached, `{"generation":n}`, never a token (a retry mints one again at that generation:
/// `routes::players::end_my_tokens`). When a twin request with the same key stored first,
/// nothing changes and this fails with `idempotency_key_reused`, which the edge, finding the
/// twin's answer under the key, answers in its stead.
pub async fn end_tokens_keyed(
    core: &Core,
    player: PlayerId,
    record: &answers::KeyRecord,
    at: OffsetDateTime,
) -> Result<u32, Error> {
    let mut client = core.pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    exists(&tx, player).await?;
    let generation = next_generation(&tx, player, at).await?;
    let body = json!({ "generation": generation }).to_string();
    let stored = answers::store_on(&tx, record, answers::OK, &body, at).await?;
    if !stored {
        // Dropping the transaction undoes the new generation.
        return Err(Error::IdempotencyKeyReused);
    }
    tx.commit().await.map_err(unexpected)?;
    Ok(generation)
}

/// Raises `player`'s token generation by one in `tx` and tells every instance on
/// [`TOKENS_CHANNEL`] when `tx` commits; the new generation.
pub(crate) async fn next_generation(
    tx: &deadpool_postgres::Transaction<'_>,
    player: PlayerId,
    at: OffsetDateTime,
) -> Result<u32, Error> {
    let row = tx
        .query_one(
            "INSERT INTO token_generations AS t (player_id, generation, changed_at) \
             VALUES ($1, 1, $2) \
             ON CONFLICT (player_id) DO UPDATE \
                 SET generation = t.generation + 1, changed_at = EXCLUDED.changed_at \
             RETURNING generation",
            &[&player.as_uuid(), &at],
        )
        .await
        .map_err(unexpected)?;
    tx.execute(
        "SELECT pg_notify($1, $2)",
        &[&TOKENS_CHANNEL, &player.to_string()],
    )
    .await
    .map_err(unexpected)?;
    Ok(u32::try_from(row.get::<_, i32>(0)).unwrap_or(0))
}

/// The players whose name holds `part` (case aside), those it starts first, by name; at most
/// `limit`. For admins, who find a player by name, never by an id typed by hand.
pub async fn find(core: &Core, part: &str, limit: i64) -> Result<Vec<(PlayerId, String)>, Error> {
    let client = core.pool.get().await.map_err(unexpected)?;
    let rows = client
        .query(
            "SELECT player_id, name FROM players \
             WHERE strpos(lower(name), lower($1)) > 0 \
             ORDER BY strpos(lower(name), lower($1)) <> 1, lower(name), player_id \
             LIMIT $2",
            &[&part, &limit],
        )
        .await
        .map_err(unexpected)?;
    Ok(rows
        .into_iter()
        .map(|r| (PlayerId::from_uuid(r.get(0)), r.get(1)))
        .collect())
}

/// The label a closed account goes by: no part of its name, only of its id (already public in
/// every match it played).
pub fn closed_label(player: PlayerId) -> String {
    let id = player.as_uuid().simple().to_string();
    format!("closed-{}", &id[id.len() - 8..])
}
