//! History nobody can quietly rewrite: signed checkpoints of the whole log, published outside
//! the database, their verification (`discs verify --checkpoints`), a finished match's proof
//! against one (`GET /v1/matches/{id}/proof`, `discs verify-match`), and the ledger of closed
//! accounts that a restore re-applies.
//!
//! # What is signed
//! Every `interval`, when the log grew, the core grows the Merkle tree over the log
//! ([`eventlog::tree`]) and signs its head with Ed25519: the note
//!
//! ```text
//! discs checkpoint v2
//! log <the log's id>
//! seq <n>
//! size <leaves>
//! root <hex>
//! time <RFC 3339>
//! ```
//!
//! The log's id is its identity ([`EventLog::identity`], kept in the database, so that a restore
//! keeps it); checkpoints signed before logs had one carry none (`discs checkpoint v1`, no `log`
//! line) and count as the log's whose folder holds them. The key is read from
//! `DISCS_CHECKPOINT_KEY` or its file; the database never holds it. Each checkpoint is kept in
//! `log_checkpoints` (served at `GET /v1/checkpoints`) and written to the operator's folder
//! (by default `checkpoints/<log id>` beside the private cluster's data folder: one per log) as
//! `checkpoint-<seq>.json`, beside `leaves-<seq>.txt`: the events it added,
//! one per line (`<chain hash> <version> <stream>`), so that a check can name the first event
//! that changed. A writer who rewrites an event and recomputes every chain changes that event's
//! chain hash, hence its leaf and every later root: the database no longer extends the signed
//! roots, and [`verify_folder`] names the event.
//!
//! The signer never signs a head that does not extend the last checkpoint of its log in the
//! database or in the folder (after a restore to an earlier moment, say): it reports the
//! divergence and waits for an operator. Another log's checkpoints never stop it: it does not
//! publish into a folder that holds them (and says so), and [`verify_folder`] answers that the
//! folder is another log's rather than report a rewrite.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::Pool;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use eventlog::merkle::{self, MemoryTree, hash_from_hex, to_hex};
use eventlog::{Checkpoint, EventLog, Hash, RecordedEvent, TreeHead, canonical};

use crate::config::{DatabaseConfig, HistoryConfig};

/// The first line of every signed note; a new format gets a new line.
const NOTE_TAG: &str = "discs checkpoint v2";

/// The first line of the notes signed before logs had an identity (no `log` line).
const NOTE_TAG_V1: &str = "discs checkpoint v1";

/// Leaves appended to the tree per statement while catching up.
const GROW_BATCH: i64 = 20_000;

/// The signer's side: key, the log's identity, folder, interval, and the ledger of closed
/// accounts.
pub struct History {
    key: SigningKey,
    log: Uuid,
    dir: PathBuf,
    closings: PathBuf,
    /// The machine's shared ledger of earlier versions, read beside `closings`.
    shared_closings: Option<PathBuf>,
    interval: Duration,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History")
            .field("key", &to_hex(self.key.verifying_key().as_bytes()))
            .field("log", &self.log)
            .field("dir", &self.dir)
            .field("closings", &self.closings)
            .finish()
    }
}

impl History {
    /// From the configuration, for the log whose identity is `log` ([`EventLog::identity`]): the
    /// key (configured, or read from its file, or generated there at the first start), the
    /// folder (by default the log's own) and the ledger.
    pub fn from_config(
        config: &HistoryConfig,
        db: &DatabaseConfig,
        log: Uuid,
    ) -> anyhow::Result<History> {
        let (dir, key_file, closings) = config.paths(db, log);
        Ok(History {
            key: load_key(config.checkpoint_key.as_deref(), &key_file)?,
            log,
            dir,
            closings,
            shared_closings: config.shared_closings(db),
            interval: Duration::from_secs(config.checkpoint_interval),
        })
    }

    /// The public half of the signing key: what a verifier must be given.
    pub fn public_key(&self) -> VerifyingKey {
        self.key.verifying_key()
    }

    /// The folder checkpoints are published in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The identity of the log it signs.
    pub fn log(&self) -> Uuid {
        self.log
    }
}

/// The signing key: `configured` (64 hexadecimal digits), else the one in `file`, generated
/// there (mode 0600) when missing.
pub fn load_key(configured: Option<&str>, file: &Path) -> anyhow::Result<SigningKey> {
    const WHAT: &str = "checkpoint signing key";
    let seed = match configured {
        Some(text) => crate::secrets::from_hex(text.trim())
            .ok_or_else(|| anyhow::anyhow!("DISCS_CHECKPOINT_KEY is not hexadecimal"))?,
        None => match crate::secrets::read_hex(file, WHAT, 32)? {
            Some(seed) => seed,
            None => crate::secrets::write_new(file, WHAT, &crate::secrets::random::<32>()?)?,
        },
    };
    let seed: [u8; 32] = seed
        .as_slice()
        .try_into()
        .map_err(|_| anyhow::anyhow!("the {WHAT} must be 32 bytes (64 hexadecimal digits)"))?;
    Ok(SigningKey::from_bytes(&seed))
}

/// A public key given as 64 hexadecimal digits, or the path of a file holding them.
pub fn public_key(text: &str) -> anyhow::Result<VerifyingKey> {
    let bytes = match hash_from_hex(text.trim()) {
        Some(b) => b,
        None => {
            let content = std::fs::read_to_string(text)
                .map_err(|e| anyhow::anyhow!("{text} is neither a key nor a readable file: {e}"))?;
            hash_from_hex(content.trim())
                .ok_or_else(|| anyhow::anyhow!("{text} does not hold 64 hexadecimal digits"))?
        }
    };
    VerifyingKey::from_bytes(&bytes).map_err(|e| anyhow::anyhow!("not an Ed25519 key: {e}"))
}

/// A signed checkpoint, as published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SignedCheckpoint {
    /// The identity of the log it is a checkpoint of (absent from checkpoints signed before logs
    /// had one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<Uuid>,
    /// 1, 2, 3 ... in the order they were signed.
    pub seq: u64,
    /// The number of events (leaves) the tree held.
    pub size: u64,
    /// The Merkle root of those events, in hexadecimal.
    pub root: String,
    /// When it was signed (RFC 3339).
    pub time: String,
    /// The signer's Ed25519 public key, in hexadecimal.
    pub key: String,
    /// The Ed25519 signature of [`SignedCheckpoint::note`], in hexadecimal.
    pub signature: String,
}

impl SignedCheckpoint {
    /// The signed text.
    pub fn note(&self) -> String {
        note(self.log, self.seq, self.size, &self.root, &self.time)
    }

    /// Whether it is a checkpoint of the log `log`: it says so, or it predates identities.
    pub fn is_of(&self, log: Uuid) -> bool {
        self.log.is_none_or(|l| l == log)
    }

    /// The root as bytes (`None` when it is not 64 hexadecimal digits).
    pub fn root_hash(&self) -> Option<Hash> {
        hash_from_hex(&self.root)
    }

    /// Checks that `operator` signed it: its key is the operator's and the signature verifies.
    pub fn check(&self, operator: &VerifyingKey) -> Result<(), String> {
        let expected = to_hex(operator.as_bytes());
        if !self.key.eq_ignore_ascii_case(&expected) {
            return Err(format!(
                "checkpoint {} is signed by the key {}, not the operator's {expected}: refused",
                self.seq, self.key
            ));
        }
        let signature = crate::secrets::from_hex(&self.signature)
            .and_then(|b| <[u8; 64]>::try_from(b.as_slice()).ok())
            .map(|b| Signature::from_bytes(&b))
            .ok_or_else(|| {
                format!(
                    "checkpoint {}'s signature is not 64 bytes in hexadecimal",
                    self.seq
                )
            })?;
        if self.root_hash().is_none() {
            return Err(format!("checkpoint {}'s root is not a hash", self.seq));
        }
        operator
            .verify_strict(self.note().as_bytes(), &signature)
            .map_err(|_| {
                format!(
                    "checkpoint {}'s signature does not verify: refused",
                    self.seq
                )
            })
    }
}

fn note(log: Option<Uuid>, seq: u64, size: u64, root: &str, time: &str) -> String {
    let rest = format!("seq {seq}\nsize {size}\nroot {root}\ntime {time}\n");
    match log {
        Some(log) => format!("{NOTE_TAG}\nlog {log}\n{rest}"),
        None => format!("{NOTE_TAG_V1}\n{rest}"),
    }
}

/// Signs the head `head` of the log `log` as checkpoint `seq` at `at`.
pub fn sign(
    key: &SigningKey,
    log: Uuid,
    seq: u64,
    head: &TreeHead,
    at: OffsetDateTime,
) -> SignedCheckpoint {
    let time = at
        .replace_nanosecond(0)
        .unwrap_or(at)
        .format(&Rfc3339)
        .unwrap_or_default();
    let root = to_hex(&head.root);
    let signature = key.sign(note(Some(log), seq, head.size, &root, &time).as_bytes());
    SignedCheckpoint {
        log: Some(log),
        seq,
        size: head.size,
        root,
        time,
        key: to_hex(key.verifying_key().as_bytes()),
        signature: to_hex(&signature.to_bytes()),
    }
}

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

const LAST_SIGNED: &str =
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
pub async fn recorded(pool: &Pool, seq: Option<i64>) -> Result<Option<String>, SignError> {
    let client = pool.get().await?;
    Ok(client
        .query_opt(
            "SELECT note FROM log_checkpoints \
             WHERE seq = coalesce($1, (SELECT max(seq) FROM log_checkpoints))",
            &[&seq],
        )
        .await?
        .map(|r| r.get(0)))
}

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
    pool: &Pool,
    log: &EventLog,
    from: i64,
    to: i64,
) -> Result<Option<Consistency>, SignError> {
    let (Some(a), Some(b)) = (
        recorded(pool, Some(from)).await?,
        recorded(pool, Some(to)).await?,
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
    let Some(proof) = log.consistency(a.size, b.size).await? else {
        return Ok(None);
    };
    Ok(Some(Consistency {
        from: a,
        to: b,
        proof: proof.iter().map(|h| to_hex(h)).collect(),
    }))
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

fn make_folder(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)
}

fn write_whole(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let aside = file.with_extension(format!("tmp.{}", Uuid::new_v4()));
    let mut f = std::fs::File::create(&aside)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&aside, file)
}

fn checkpoint_name(seq: u64) -> String {
    format!("checkpoint-{seq:08}.json")
}

fn leaves_name(seq: u64) -> String {
    format!("leaves-{seq:08}.txt")
}

/// The checkpoints in `dir` by the number in their file name, each parsed or the reason it
/// does not parse. An empty list for a folder that does not exist.
pub fn read_folder(dir: &Path) -> Result<BTreeMap<u64, Result<SignedCheckpoint, String>>, String> {
    Ok(folder_seqs(dir)?
        .into_iter()
        .map(|seq| (seq, read_checkpoint(dir, seq)))
        .collect())
}

/// The numbers of the checkpoint files in `dir`, by their names alone (none for a folder that
/// does not exist).
fn folder_seqs(dir: &Path) -> Result<std::collections::BTreeSet<u64>, String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Default::default()),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    Ok(entries
        .flatten()
        .filter_map(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .strip_prefix("checkpoint-")
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.parse::<u64>().ok())
        })
        .collect())
}

/// Checkpoint `seq` of `dir`, parsed, or why it does not read.
fn read_checkpoint(dir: &Path, seq: u64) -> Result<SignedCheckpoint, String> {
    std::fs::read_to_string(dir.join(checkpoint_name(seq)))
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str::<SignedCheckpoint>(&t).map_err(|e| e.to_string()))
}

/// A published leaf: the event's chain hash, its version and stream.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PublishedLeaf {
    hash: Hash,
    version: i64,
    stream: String,
}

fn read_leaves(file: &Path) -> Result<Option<Vec<PublishedLeaf>>, String> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", file.display())),
    };
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let mut parts = line.splitn(3, ' ');
            let leaf = (|| {
                Some(PublishedLeaf {
                    hash: hash_from_hex(parts.next()?)?,
                    version: parts.next()?.parse().ok()?,
                    stream: parts.next()?.to_owned(),
                })
            })();
            leaf.ok_or_else(|| {
                format!(
                    "{} line {}: not `<hash> <version> <stream>`",
                    file.display(),
                    i + 1
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// What `discs verify --checkpoints` found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FolderReport {
    /// Checkpoints read and checked (signature, order).
    pub checkpoints: usize,
    /// The largest size among them.
    pub covered: u64,
    /// Events of the database walked.
    pub events: u64,
    /// Everything wrong, in the order found; empty when the database extends every checkpoint.
    pub problems: Vec<String>,
}

impl FolderReport {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty() && self.checkpoints > 0
    }
}

/// Proves that the database still extends every checkpoint published in `dir` and signed by
/// `operator`, or names what does not: a folder of another log's checkpoints (said as such, and
/// nothing more compared), a checkpoint missing from the sequence, out of order,
/// signed by another key or not verifying; published leaves that do not give their signed root;
/// the first event of the database that differs from the published one (rewritten, removed or
/// inserted), or the first published event the database lacks.
pub async fn verify_folder(
    log: &EventLog,
    dir: &Path,
    operator: &VerifyingKey,
) -> Result<FolderReport, eventlog::Error> {
    let mut report = FolderReport::default();
    let folder = match read_folder(dir) {
        Ok(f) => f,
        Err(e) => {
            report.problems.push(e);
            return Ok(report);
        }
    };
    if folder.is_empty() {
        report
            .problems
            .push(format!("{} holds no checkpoint", dir.display()));
        return Ok(report);
    }
    // Another log's checkpoints: nothing this log did or did not do.
    let ours = log.identity().await?;
    let theirs: std::collections::BTreeSet<Uuid> = folder
        .values()
        .flatten()
        .filter_map(|c| c.log)
        .filter(|&l| l != ours)
        .collect();
    if !theirs.is_empty() {
        let theirs: Vec<String> = theirs.iter().map(Uuid::to_string).collect();
        report.problems.push(format!(
            "{} holds the checkpoints of another log ({}), not of this database's log ({ours}): \
             verify them against that log's database",
            dir.display(),
            theirs.join(", ")
        ));
        return Ok(report);
    }
    // The checkpoints: each one's signature, the sequence, the order.
    let mut good: Vec<SignedCheckpoint> = Vec::new();
    let mut expected = 1;
    for (seq, parsed) in &folder {
        if *seq != expected {
            report.problems.push(if *seq > expected {
                format!(
                    "checkpoint {expected} is missing: the folder goes from {} to {seq}",
                    expected - 1
                )
            } else {
                format!("checkpoint {seq} appears twice")
            });
        }
        expected = seq + 1;
        let c = match parsed {
            Ok(c) => c,
            Err(e) => {
                report
                    .problems
                    .push(format!("{}: {e}", checkpoint_name(*seq)));
                continue;
            }
        };
        if c.seq != *seq {
            report.problems.push(format!(
                "{} holds checkpoint {}: out of place",
                checkpoint_name(*seq),
                c.seq
            ));
            continue;
        }
        if let Err(e) = c.check(operator) {
            report.problems.push(e);
            continue;
        }
        if let Some(before) = good.last()
            && (c.size < before.size || c.time < before.time)
        {
            report.problems.push(format!(
                    "checkpoint {} ({} events, {}) is out of order: checkpoint {} before it has {} events, {}",
                    c.seq, c.size, c.time, before.seq, before.size, before.time
                ));
            continue;
        }
        good.push(c.clone());
    }
    report.checkpoints = good.len();
    let Some(largest) = good.iter().map(|c| c.size).max() else {
        return Ok(report);
    };
    report.covered = largest;
    // The published leaves, where every checkpoint has its file and they give the signed roots.
    let mut published: Option<Vec<PublishedLeaf>> = Some(Vec::new());
    let mut tree = MemoryTree::new();
    for c in &good {
        let file = dir.join(leaves_name(c.seq));
        match read_leaves(&file) {
            Ok(Some(leaves)) => {
                if let Some(all) = &mut published {
                    leaves
                        .iter()
                        .for_each(|l| tree.push(merkle::leaf_hash(&l.hash)));
                    all.extend(leaves);
                    if tree.size() != c.size || Some(tree.root()) != c.root_hash() {
                        report.problems.push(format!(
                            "the published leaves up to checkpoint {} do not give its signed root: \
                             the folder was altered; comparing roots only",
                            c.seq
                        ));
                        published = None;
                    }
                }
            }
            Ok(None) => published = None,
            Err(e) => {
                report.problems.push(e);
                published = None;
            }
        }
    }
    // The database, event by event in log order, each chain hash recomputed from its columns.
    let roots: BTreeMap<u64, &SignedCheckpoint> = good.iter().map(|c| (c.size, c)).collect();
    let mut db_tree = MemoryTree::new();
    let mut first_difference: Option<String> = None;
    let mut bytes = Vec::new();
    let mut walked = 0u64;
    let mut on_event = |e: &RecordedEvent| {
        if walked >= largest {
            return;
        }
        bytes.clear();
        canonical::event_bytes(&e.content(), &mut bytes);
        let hash = canonical::chain_hash(&e.prev_hash, &bytes);
        if first_difference.is_none()
            && let Some(p) = published.as_ref().and_then(|p| p.get(walked as usize))
            && (p.hash != hash || p.stream != e.stream || p.version != e.version)
        {
            first_difference = Some(format!(
                "event {} of the log (stream {} version {}, position {}) differs from the \
                         published one ({} version {}, hash {}): {}",
                walked,
                e.stream,
                e.version,
                e.position,
                p.stream,
                p.version,
                to_hex(&p.hash),
                if p.stream == e.stream && p.version == e.version {
                    "it was rewritten"
                } else {
                    "an event was removed, inserted or moved here"
                }
            ));
        }
        db_tree.push(merkle::leaf_hash(&hash));
        walked += 1;
    };
    log.for_each_visible_after(Checkpoint::START, 5_000, &mut on_event)
        .await?;
    report.events = walked;
    if let Some(d) = first_difference {
        report.problems.push(d);
    }
    if walked < largest {
        let missing = published
            .as_ref()
            .and_then(|p| p.get(walked as usize))
            .map(|p| {
                format!(
                    ": the first missing is {} version {} (hash {})",
                    p.stream,
                    p.version,
                    to_hex(&p.hash)
                )
            })
            .unwrap_or_default();
        report.problems.push(format!(
            "the log holds {walked} events and the checkpoints cover {largest}{missing}"
        ));
    }
    // The roots, for every checkpoint the database reaches (the only check where the folder
    // keeps no leaves).
    for (size, c) in roots {
        if size > walked {
            break;
        }
        if merkle::root(&db_tree, size) != c.root_hash() {
            report.problems.push(format!(
                "the log does not extend checkpoint {} ({} events): its root differs",
                c.seq, c.size
            ));
            break;
        }
    }
    Ok(report)
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

/// The proof of a finished match whose `events` were read from the log, against checkpoint
/// `seq` (the latest one covering it when `None`).
pub async fn match_proof(
    pool: &Pool,
    log: &EventLog,
    match_id: Uuid,
    events: &[RecordedEvent],
    seq: Option<u64>,
) -> Result<MatchProof, ProofError> {
    let last = events.last().ok_or(ProofError::NotYet)?;
    let client = pool.get().await?;
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
    let (leaf_index, path) = log
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

/// Appends a closed account to the ledger (one line: the player's id and when), synced to disk
/// before the closing is acknowledged.
pub fn record_closing(history: &History, player: Uuid, at: OffsetDateTime) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = history
        .closings
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
    {
        make_folder(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(&history.closings)?;
    let line = format!("{player} {}\n", at.format(&Rfc3339).unwrap_or_default());
    f.write_all(line.as_bytes())?;
    f.sync_all()
}

/// The players the ledger says are closed, with when (the machine's shared ledger of earlier
/// versions included: its other logs' players are unknown here, and closing them does nothing).
pub fn closings(history: &History) -> std::io::Result<Vec<(Uuid, OffsetDateTime)>> {
    let mut all = Vec::new();
    for file in history.shared_closings.iter().chain([&history.closings]) {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        all.extend(text.lines().filter_map(|line| {
            let (id, at) = line.split_once(' ')?;
            Some((
                id.parse().ok()?,
                OffsetDateTime::parse(at.trim(), &Rfc3339).ok()?,
            ))
        }));
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> SigningKey {
        SigningKey::from_bytes(&[byte; 32])
    }

    fn head(size: u64) -> TreeHead {
        TreeHead {
            size,
            root: merkle::leaf_hash(&[size as u8; 32]),
            cursor: Checkpoint::START,
        }
    }

    #[test]
    fn a_checkpoint_verifies_with_its_key_only_and_any_change_breaks_it() {
        let at = OffsetDateTime::from_unix_timestamp(1_800_000_000).expect("time");
        let log = Uuid::from_u128(0x51);
        let c = sign(&key(1), log, 3, &head(10), at);
        assert_eq!(c.check(&key(1).verifying_key()), Ok(()));
        assert!(c.note().starts_with(&format!(
            "discs checkpoint v2\nlog {log}\nseq 3\nsize 10\nroot "
        )));
        assert!(c.is_of(log) && !c.is_of(Uuid::from_u128(0x52)));
        let other = c.check(&key(2).verifying_key()).expect_err("another key");
        assert!(other.contains("not the operator's"), "{other}");
        // The key field swapped for the other key's: the signature no longer verifies.
        let mut swapped = c.clone();
        swapped.key = to_hex(key(2).verifying_key().as_bytes());
        assert!(swapped.check(&key(2).verifying_key()).is_err());
        for change in [
            |c: &mut SignedCheckpoint| c.size += 1,
            |c: &mut SignedCheckpoint| c.seq += 1,
            |c: &mut SignedCheckpoint| c.root = to_hex(&[0; 32]),
            |c: &mut SignedCheckpoint| c.time = "2030-01-01T00:00:00Z".into(),
            |c: &mut SignedCheckpoint| c.log = Some(Uuid::from_u128(0x52)),
            |c: &mut SignedCheckpoint| c.log = None,
        ] {
            let mut changed = c.clone();
            change(&mut changed);
            let e = changed.check(&key(1).verifying_key()).expect_err("changed");
            assert!(e.contains("does not verify"), "{e}");
        }
    }

    #[test]
    fn a_checkpoint_signed_before_logs_had_an_identity_still_verifies_and_is_any_logs() {
        let at = OffsetDateTime::from_unix_timestamp(1_800_000_000).expect("time");
        let mut old = sign(&key(1), Uuid::from_u128(0x51), 2, &head(7), at);
        old.log = None;
        let note = format!(
            "discs checkpoint v1\nseq 2\nsize 7\nroot {}\ntime {}\n",
            old.root, old.time
        );
        assert_eq!(old.note(), note);
        old.signature = to_hex(&key(1).sign(note.as_bytes()).to_bytes());
        assert_eq!(old.check(&key(1).verifying_key()), Ok(()));
        let json = serde_json::to_string(&old).expect("json");
        assert!(!json.contains("\"log\""), "{json}");
        let read: SignedCheckpoint = serde_json::from_str(&json).expect("parses");
        assert_eq!(read, old);
        assert!(read.is_of(Uuid::from_u128(0x51)) && read.is_of(Uuid::from_u128(0x52)));
    }

    #[test]
    fn keys_come_from_the_variable_or_a_file_made_once() {
        let dir = std::env::temp_dir().join(format!("discs-key-{}", Uuid::new_v4()));
        let file = dir.join("checkpoint-key");
        let first = load_key(None, &file).expect("generated");
        let again = load_key(None, &file).expect("read back");
        assert_eq!(first.to_bytes(), again.to_bytes());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let given = load_key(Some(&"11".repeat(32)), &file).expect("configured");
        assert_eq!(given.to_bytes(), [0x11; 32]);
        assert!(load_key(Some("zz"), &file).is_err());
        assert!(load_key(Some("11"), &file).is_err());
        let public = to_hex(first.verifying_key().as_bytes());
        assert_eq!(public_key(&public).expect("hex"), first.verifying_key());
        std::fs::remove_dir_all(&dir).expect("cleaned");
    }
}
