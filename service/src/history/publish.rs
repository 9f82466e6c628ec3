//! Publishing checkpoints: the tree grown to the log, a new checkpoint signed when it holds
//! events no checkpoint covers (never one that does not extend the last), recorded in
//! `log_checkpoints` and written to the operator's folder, every `interval`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::Pool;

use eventlog::merkle::{self, to_hex};
use eventlog::{Checkpoint, EventLog, Hash, TreeHead};

use super::folder::{
    checkpoint_name, folder_seqs, leaves_name, make_folder, read_checkpoint, write_whole,
};
use super::signing::{History, SignedCheckpoint, sign};
use crate::core::Core;

/// Leaves appended to the tree per statement while catching up.
const GROW_BATCH: i64 = 20_000;

/// Why a checkpoint was not signed.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// The log no longer extends a checkpoint already signed (restored to before it, or
    /// rewritten): nothing more is signed until an operator looks.
    #[error(
        "the log does not extend checkpoint {seq} ({size} events): {why}; run `discs verify --checkpoints`"
    )]
    Diverged { seq: u64, size: u64, why: String },
    #[error(transparent)]
    Log(#[from] eventlog::Error),
    #[error(transparent)]
    Db(#[from] tokio_postgres::Error),
    #[error(transparent)]
    Pool(#[from] deadpool_postgres::PoolError),
    #[error("the checkpoint folder: {0}")]
    Folder(String),
}

/// Grows the tree to the committed log, in batches.
pub async fn grow(log: &EventLog) -> Result<TreeHead, eventlog::Error> {
    let mut head = log.grow_tree(GROW_BATCH).await?;
    loop {
        let next = log.grow_tree(GROW_BATCH).await?;
        if next.size == head.size {
            return Ok(next);
        }
        head = next;
    }
}

/// Grows the tree until it holds every event committed when called, waiting (polling every few
/// milliseconds, up to 30 s) for the commit horizon to pass them: a transaction still running
/// anywhere in the cluster holds it back. For `discs checkpoint` and the tests, which sign what
/// they just wrote; the server's loop signs what is below the horizon and catches up next time.
pub async fn grow_to_committed(log: &EventLog) -> Result<TreeHead, SignError> {
    let target = log.committed_leaves().await?;
    let mut pause = Duration::from_millis(1);
    let mut waited = Duration::ZERO;
    loop {
        let head = grow(log).await?;
        if head.size >= target {
            return Ok(head);
        }
        if waited >= Duration::from_secs(30) {
            return Err(SignError::Folder(format!(
                "the tree holds {} of {target} committed events after 30 s: a transaction stays open",
                head.size
            )));
        }
        tokio::time::sleep(pause).await;
        waited += pause;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

pub(super) const LAST_SIGNED: &str =
    "SELECT seq, size, root, tx, position, note FROM log_checkpoints ORDER BY seq DESC LIMIT 1";

const RECORD: &str = "INSERT INTO log_checkpoints (seq, size, root, tx, position, signed_at, note) \
    VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (seq) DO NOTHING";

/// [`checkpoint_now`] over every event committed when called ([`grow_to_committed`]).
pub async fn checkpoint_committed(
    pool: &Pool,
    log: &EventLog,
    history: &History,
    clock: &dyn crate::clock::Clock,
) -> Result<Option<SignedCheckpoint>, SignError> {
    grow_to_committed(log).await?;
    checkpoint_now(pool, log, history, clock).await
}

/// Grows the tree and, when it holds events no checkpoint covers, signs a new checkpoint,
/// records it and publishes it (with every recorded checkpoint the folder lacks). `None` when
/// there was nothing new to sign.
pub async fn checkpoint_now(
    pool: &Pool,
    log: &EventLog,
    history: &History,
    clock: &dyn crate::clock::Clock,
) -> Result<Option<SignedCheckpoint>, SignError> {
    let head = grow(log).await?;
    // One signer at a time, across instances: each reads the last checkpoint, and the time,
    // after the one before it recorded its own.
    let mut client = pool.get().await?;
    let client = client.transaction().await?;
    client
        .execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('log_checkpoints', 0))",
            &[],
        )
        .await?;
    let at = clock.now();
    let last_recorded = client.query_opt(LAST_SIGNED, &[]).await?;
    let recorded: Option<SignedCheckpoint> = match &last_recorded {
        Some(row) => Some(serde_json::from_str(row.get::<_, &str>(5)).map_err(|e| {
            SignError::Folder(format!("a recorded checkpoint does not parse: {e}"))
        })?),
        None => None,
    };
    // The newest checkpoint of the folder that reads (one file parsed, not all of them), if it
    // is this log's: another log's say nothing of this one (`publish` refuses their folder).
    let published = folder_seqs(&history.dir)
        .map_err(SignError::Folder)?
        .into_iter()
        .rev()
        .find_map(|seq| read_checkpoint(&history.dir, seq).ok())
        .filter(|c| c.is_of(history.log));
    let last = [recorded, published]
        .into_iter()
        .flatten()
        .max_by_key(|c| c.seq);
    let mut signed = None;
    let covered = last.as_ref().map_or(0, |c| c.size);
    if let Some(last) = &last {
        let root = log.tree_root_at(last.size).await?;
        let why = match root {
            None => Some(format!("the log holds {} events", head.size)),
            Some(r) if Some(r) != last.root_hash() => Some(format!(
                "its root at {} events is {}, not {}",
                last.size,
                to_hex(&r),
                last.root
            )),
            Some(_) => None,
        };
        if let Some(why) = why {
            return Err(SignError::Diverged {
                seq: last.seq,
                size: last.size,
                why,
            });
        }
    }
    if head.size > covered {
        let seq = last.as_ref().map_or(1, |c| c.seq + 1);
        let checkpoint = sign(&history.key, history.log, seq, &head, at);
        let json = serde_json::to_string(&checkpoint).unwrap_or_default();
        let inserted = client
            .execute(
                RECORD,
                &[
                    &(seq as i64),
                    &(head.size as i64),
                    &head.root.as_slice(),
                    &head.cursor.tx,
                    &head.cursor.position,
                    &at,
                    &json,
                ],
            )
            .await?;
        if inserted == 1 {
            signed = Some(checkpoint);
        }
    }
    client.commit().await?;
    publish(pool, log, &history.dir).await?;
    Ok(signed)
}

/// A recorded checkpoint as published (JSON): number `seq`, or the latest when `None`.
pub async fn recorded(core: &Core, seq: Option<i64>) -> Result<Option<String>, SignError> {
    let client = core.pool.get().await?;
    Ok(client
        .query_opt(
            "SELECT note FROM log_checkpoints \
             WHERE seq = coalesce($1, (SELECT max(seq) FROM log_checkpoints))",
            &[&seq],
        )
        .await?
        .map(|r| r.get(0)))
}

/// Writes to `dir` every recorded checkpoint it lacks, each with its leaves, leaves first and
/// each file whole or not at all (written aside, then renamed). Refused, with both ids named,
/// when the folder's newest checkpoint is another log's.
pub async fn publish(pool: &Pool, log: &EventLog, dir: &Path) -> Result<usize, SignError> {
    let ours = log.identity().await?;
    if let Some(theirs) = folder_seqs(dir)
        .map_err(SignError::Folder)?
        .into_iter()
        .rev()
        .find_map(|seq| read_checkpoint(dir, seq).ok())
        .and_then(|c| c.log.filter(|&l| l != ours))
    {
        return Err(SignError::Folder(format!(
            "{} holds the checkpoints of another log ({theirs}), not of this one ({ours}): \
             give each log its own folder (DISCS_CHECKPOINT_DIR)",
            dir.display()
        )));
    }
    let client = pool.get().await?;
    let rows = client
        .query(
            "SELECT seq, tx, position, size FROM log_checkpoints ORDER BY seq",
            &[],
        )
        .await?;
    make_folder(dir).map_err(|e| SignError::Folder(format!("{}: {e}", dir.display())))?;
    let present = folder_seqs(dir).map_err(SignError::Folder)?;
    let mut previous = (Checkpoint::START, 0u64);
    let mut written = 0;
    for row in rows {
        let seq: i64 = row.get(0);
        let cursor = Checkpoint {
            tx: row.get(1),
            position: row.get(2),
        };
        let size = u64::try_from(row.get::<_, i64>(3)).unwrap_or(0);
        if !present.contains(&(seq as u64)) {
            let json: String = client
                .query_one("SELECT note FROM log_checkpoints WHERE seq = $1", &[&seq])
                .await?
                .get(0);
            let file = dir.join(checkpoint_name(seq as u64));
            // The events as the log holds them now must be those the tree took in.
            let leaves = log.leaves_between(previous.0, cursor).await?;
            let tree = log.tree_leaves(previous.1, size).await?;
            let held: Vec<Hash> = leaves.iter().map(|l| merkle::leaf_hash(&l.hash)).collect();
            if held != tree {
                let at = held
                    .iter()
                    .zip(&tree)
                    .position(|(a, b)| a != b)
                    .unwrap_or(held.len().min(tree.len()));
                return Err(SignError::Diverged {
                    seq: seq as u64,
                    size,
                    why: format!(
                        "its event {} is not in the log as the tree took it in (the log holds {} of its {} events)",
                        previous.1 + at as u64,
                        held.len(),
                        tree.len()
                    ),
                });
            }
            let mut text = String::with_capacity(leaves.len() * 120);
            for leaf in &leaves {
                text.push_str(&format!(
                    "{} {} {}\n",
                    to_hex(&leaf.hash),
                    leaf.version,
                    leaf.stream
                ));
            }
            let io = |e: std::io::Error| SignError::Folder(format!("{}: {e}", dir.display()));
            write_whole(&dir.join(leaves_name(seq as u64)), text.as_bytes()).map_err(io)?;
            write_whole(&file, format!("{json}\n").as_bytes()).map_err(io)?;
            written += 1;
        }
        previous = (cursor, size);
    }
    Ok(written)
}

/// Signs and publishes checkpoints every `interval` until the instance stops. Any instance may
/// run it: the tree grows under a row lock and a checkpoint number is recorded once.
pub async fn run_forever(
    pool: Pool,
    log: EventLog,
    history: Arc<History>,
    clock: Arc<dyn crate::clock::Clock>,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        match checkpoint_now(&pool, &log, &history, clock.as_ref()).await {
            Ok(Some(c)) => tracing::info!(seq = c.seq, size = c.size, "signed a checkpoint"),
            Ok(None) => {}
            // Signed and recorded but not published (a folder of another log's, say), or not
            // signed: the error says which.
            Err(e) => tracing::error!(error = %e, "checkpoint not signed or not published"),
        }
        tokio::select! {
            _ = tokio::time::sleep(history.interval) => {}
            _ = stopping.changed() => return,
        }
        if *stopping.borrow() {
            return;
        }
    }
}
