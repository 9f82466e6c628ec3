//! Stored answers of `Idempotency-Key` requests (SPEC §6), the table `idempotency_keys`: the
//! answer's body and status as the edge rendered it, kept so that a retried request gets the
//! first answer and writes nothing. The edge decides what is stored; this reads and writes it.

use time::OffsetDateTime;
use uuid::Uuid;

use crate::core::Core;
use crate::error::{Error, unexpected};

/// A JSON answer: a value, or bytes serialized once from a typed view (the moves' answers,
/// which never need to become a `serde_json::Value` on their way out).
#[derive(Debug, Clone)]
pub enum Body {
    Value(serde_json::Value),
    Serialized(Vec<u8>),
}

impl Body {
    /// `value` serialized now.
    pub fn of<T: serde::Serialize>(value: &T) -> Result<Body, Error> {
        serde_json::to_vec(value)
            .map(Body::Serialized)
            .map_err(unexpected)
    }

    /// As a value (to store it).
    pub fn to_value(&self) -> Result<serde_json::Value, Error> {
        match self {
            Body::Value(v) => Ok(v.clone()),
            Body::Serialized(bytes) => serde_json::from_slice(bytes).map_err(unexpected),
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        match self {
            Body::Value(v) => serde_json::to_vec(&v).unwrap_or_default(),
            Body::Serialized(bytes) => bytes,
        }
    }
}

impl From<serde_json::Value> for Body {
    fn from(v: serde_json::Value) -> Body {
        Body::Value(v)
    }
}

/// The status of an answer stored for a command that changed something.
pub const OK: u16 = 200;
/// The status of an answer stored for a command that created its match.
pub const CREATED: u16 = 201;

/// A request's `Idempotency-Key`, as its answer is stored under.
#[derive(Debug, Clone)]
pub struct KeyRecord {
    pub player: Uuid,
    pub key: String,
    pub request_hash: Vec<u8>,
}

/// The command id a handler gives the log, and the key its answer is stored under (none
/// without an `Idempotency-Key`).
#[derive(Debug, Clone)]
pub struct Key {
    pub command_id: Uuid,
    pub record: Option<KeyRecord>,
}

/// An answer as it was stored.
pub struct Stored {
    pub request_hash: Vec<u8>,
    pub status: u16,
    pub body: serde_json::Value,
}

/// The answer stored under (player, key), if any.
pub async fn stored(app: &Core, player: Uuid, key: &str) -> Result<Option<Stored>, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_opt(
            "SELECT request_hash, status, body FROM idempotency_keys WHERE player_id = $1 AND key = $2",
            &[&player, &key],
        )
        .await
        .map_err(unexpected)?;
    Ok(row.map(|r| Stored {
        request_hash: r.get(0),
        status: u16::try_from(r.get::<_, i32>(1)).unwrap_or(200),
        body: r.get(2),
    }))
}

/// Stores an answer under its key; `false` when a twin request stored one first (its answer
/// is the answer).
pub async fn store(
    app: &Core,
    record: &KeyRecord,
    status: u16,
    body: &serde_json::Value,
    at: OffsetDateTime,
) -> Result<bool, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let inserted = client
        .execute(
            "INSERT INTO idempotency_keys (player_id, key, request_hash, status, body, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            &[
                &record.player,
                &record.key,
                &record.request_hash,
                &i32::from(status),
                body,
                &at,
            ],
        )
        .await
        .map_err(unexpected)?;
    Ok(inserted > 0)
}
