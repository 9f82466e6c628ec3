//! Proofs against signed checkpoints: that one checkpoint's log extends another's (RFC 9162's
//! consistency proof), and a finished match's events with their inclusion in a checkpoint's
//! tree (`GET /v1/matches/{id}/proof`, `discs verify-match`), each checked offline.

use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use eventlog::merkle::{self, hash_from_hex, to_hex};
use eventlog::{Hash, RecordedEvent, canonical};

use super::publish::{LAST_SIGNED, SignError, recorded};
use super::signing::SignedCheckpoint;
use crate::core::Core;

/// That the log of checkpoint `to` extends the log of checkpoint `from`: both, and RFC 9162's
/// consistency proof between their trees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Consistency {
    pub from: SignedCheckpoint,
    pub to: SignedCheckpoint,
    /// The proof's hashes, in hexadecimal (RFC 9162 §2.1.4).
    pub proof: Vec<String>,
}

impl Consistency {
    /// Checks it offline: both checkpoints are the operator's and the proof holds.
    pub fn check(&self, operator: &VerifyingKey) -> Result<(), String> {
        self.from.check(operator)?;
        self.to.check(operator)?;
        let proof: Vec<Hash> = self
            .proof
            .iter()
            .map(|h| hash_from_hex(h).ok_or_else(|| format!("{h} is not a hash")))
            .collect::<Result<_, _>>()?;
        let (Some(a), Some(b)) = (self.from.root_hash(), self.to.root_hash()) else {
            return Err("a root is not a hash".into());
        };
        if merkle::verify_consistency(self.from.size, self.to.size, &a, &b, &proof) {
            Ok(())
        } else {
            Err(format!(
                "checkpoint {} does not extend checkpoint {}",
                self.to.seq, self.from.seq
            ))
        }
    }
}

/// The consistency proof from recorded checkpoint `from` to recorded checkpoint `to`; `None`
/// when either is not recorded or `from` is the later one.
pub async fn consistency(
    core: &Core,
    from: i64,
    to: i64,
) -> Result<Option<Consistency>, SignError> {
    let (Some(a), Some(b)) = (
        recorded(core, Some(from)).await?,
        recorded(core, Some(to)).await?,
    ) else {
        return Ok(None);
    };
    let parse = |t: &str| {
        serde_json::from_str::<SignedCheckpoint>(t)
            .map_err(|e| SignError::Folder(format!("a recorded checkpoint does not parse: {e}")))
    };
    let (a, b) = (parse(&a)?, parse(&b)?);
    if a.size > b.size {
        return Ok(None);
    }
    let Some(proof) = core.log.consistency(a.size, b.size).await? else {
        return Ok(None);
    };
    Ok(Some(Consistency {
        from: a,
        to: b,
        proof: proof.iter().map(|h| to_hex(h)).collect(),
    }))
}

/// One event of a proof, with every field its chain hash covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProofEvent {
    pub stream: String,
    pub version: i64,
    pub event_id: Uuid,
    #[serde(rename = "type")]
    pub event_type: String,
    pub schema_version: i16,
    pub data: serde_json::Value,
    pub actor: Option<Uuid>,
    /// Microseconds since the Unix epoch (UTC): what the hash covers.
    pub recorded_at_micros: i64,
    /// The previous event's chain hash (hexadecimal; zeros for version 1).
    pub prev_hash: String,
    /// This event's chain hash (hexadecimal).
    pub hash: String,
}

/// A finished match's proof: its events, and the inclusion of its last event in a signed
/// checkpoint's tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MatchProof {
    pub match_id: Uuid,
    pub events: Vec<ProofEvent>,
    /// The last event's index among the log's events (the tree's leaves).
    pub leaf_index: u64,
    /// The sibling hashes from that leaf to the root (hexadecimal, RFC 9162's order).
    pub inclusion: Vec<String>,
    pub checkpoint: SignedCheckpoint,
}

/// Why a proof cannot be given.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    /// No signed checkpoint covers the match's last event yet (or the one asked for does not).
    #[error("no signed checkpoint covers this match yet")]
    NotYet,
    /// The checkpoint asked for does not exist.
    #[error("no such checkpoint")]
    NoCheckpoint,
    #[error(transparent)]
    Log(#[from] eventlog::Error),
    #[error(transparent)]
    Db(#[from] tokio_postgres::Error),
    #[error(transparent)]
    Pool(#[from] deadpool_postgres::PoolError),
}

/// The proof of a finished match `raw_id` that `player` may read, against signed checkpoint `seq`
/// (the latest by default): `match_active` while it is played, `not_checkpointed` until a
/// signed checkpoint covers its end, `not_found` for a checkpoint that does not exist.
pub async fn proof_for(
    app: &crate::live::LivePath,
    player: domain::ids::PlayerId,
    raw_id: &str,
    seq: Option<u64>,
) -> Result<MatchProof, crate::Error> {
    use crate::reasons::{Active, Clash, Missing};
    let (loaded, events) =
        crate::live::play::open_finished_with_events(app, player, raw_id).await?;
    if !loaded.get()?.is_finished() {
        return Err(crate::Error::MatchActive(Active::Proof));
    }
    match_proof(app, loaded.id.as_uuid(), &events, seq)
        .await
        .map_err(|e| match e {
            ProofError::NotYet => crate::Error::Conflict(Clash::NotCheckpointed),
            ProofError::NoCheckpoint => crate::Error::NotFound(Missing::Checkpoint),
            other => crate::error::unexpected(other),
        })
}

/// The proof of a finished match whose `events` were read from the log, against checkpoint
/// `seq` (the latest one covering it when `None`).
pub async fn match_proof(
    core: &Core,
    match_id: Uuid,
    events: &[RecordedEvent],
    seq: Option<u64>,
) -> Result<MatchProof, ProofError> {
    let last = events.last().ok_or(ProofError::NotYet)?;
    let client = core.pool.get().await?;
    let row = match seq {
        Some(seq) => client
            .query_opt(
                "SELECT note FROM log_checkpoints WHERE seq = $1",
                &[&(seq as i64)],
            )
            .await?
            .ok_or(ProofError::NoCheckpoint)?,
        None => client
            .query_opt(LAST_SIGNED, &[])
            .await?
            .ok_or(ProofError::NotYet)?,
    };
    let note: &str = row.get(if seq.is_some() { 0 } else { 5 });
    let checkpoint: SignedCheckpoint =
        serde_json::from_str(note).map_err(|_| ProofError::NoCheckpoint)?;
    drop(client);
    let (leaf_index, path) = core
        .log
        .inclusion(last.position, checkpoint.size)
        .await?
        .ok_or(ProofError::NotYet)?;
    Ok(MatchProof {
        match_id,
        events: events
            .iter()
            .map(|e| ProofEvent {
                stream: e.stream.clone(),
                version: e.version,
                event_id: e.event_id,
                event_type: e.event_type.clone(),
                schema_version: e.schema_version,
                data: e.data.clone(),
                actor: e.actor,
                recorded_at_micros: canonical::unix_micros(e.recorded_at),
                prev_hash: to_hex(&e.prev_hash),
                hash: to_hex(&e.hash),
            })
            .collect(),
        leaf_index,
        inclusion: path.iter().map(|h| to_hex(h)).collect(),
        checkpoint,
    })
}

/// Checks a match's proof offline: the checkpoint is the operator's and its signature verifies;
/// the events chain from the genesis, each hash recomputed from its fields; the last one's leaf
/// is in the checkpoint's tree at the index given. When `held` is given (a checkpoint the
/// player kept, from the operator's folder say), the proof's checkpoint must be that one.
pub fn verify_match_proof(
    proof: &MatchProof,
    operator: &VerifyingKey,
    held: Option<&SignedCheckpoint>,
) -> Result<String, String> {
    proof.checkpoint.check(operator)?;
    if let Some(held) = held {
        held.check(operator)?;
        if held != &proof.checkpoint {
            return Err(format!(
                "the proof is against checkpoint {}, not the one held ({}): ask for `?checkpoint={}`",
                proof.checkpoint.seq, held.seq, held.seq
            ));
        }
    }
    let mut prev = canonical::GENESIS;
    let mut bytes = Vec::new();
    for (i, e) in proof.events.iter().enumerate() {
        if e.version != i as i64 + 1 {
            return Err(format!(
                "event {i} has version {}, not {}",
                e.version,
                i + 1
            ));
        }
        if hash_from_hex(&e.prev_hash) != Some(prev) {
            return Err(format!(
                "version {}: its prev_hash is not the previous event's hash",
                e.version
            ));
        }
        let recorded_at =
            OffsetDateTime::from_unix_timestamp_nanos(i128::from(e.recorded_at_micros) * 1000)
                .map_err(|_| format!("version {}: recorded_at_micros out of range", e.version))?;
        bytes.clear();
        canonical::event_bytes(
            &canonical::EventContent {
                stream: &e.stream,
                version: e.version,
                event_id: e.event_id,
                event_type: &e.event_type,
                schema_version: e.schema_version,
                data: &e.data,
                actor: e.actor,
                recorded_at,
            },
            &mut bytes,
        );
        let hash = canonical::chain_hash(&prev, &bytes);
        if hash_from_hex(&e.hash) != Some(hash) {
            return Err(format!(
                "version {}: its hash does not match its fields",
                e.version
            ));
        }
        prev = hash;
    }
    let root = proof
        .checkpoint
        .root_hash()
        .ok_or("the checkpoint's root is not a hash")?;
    let path: Vec<Hash> = proof
        .inclusion
        .iter()
        .map(|h| hash_from_hex(h).ok_or_else(|| format!("{h} is not a hash")))
        .collect::<Result<_, _>>()?;
    if !merkle::verify_inclusion(
        &merkle::leaf_hash(&prev),
        proof.leaf_index,
        proof.checkpoint.size,
        &path,
        &root,
    ) {
        return Err(format!(
            "the match's last event is not at leaf {} of checkpoint {}'s tree",
            proof.leaf_index, proof.checkpoint.seq
        ));
    }
    Ok(format!(
        "match {}: {} events, chained from the first; its last event is leaf {} of checkpoint {} \
         ({} events, root {}), signed by {}",
        proof.match_id,
        proof.events.len(),
        proof.leaf_index,
        proof.checkpoint.seq,
        proof.checkpoint.size,
        proof.checkpoint.root,
        proof.checkpoint.key
    ))
}
