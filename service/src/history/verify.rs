//! `discs verify --checkpoints`: whether the database still extends every checkpoint of the
//! folder, or the first event that differs.

use std::collections::BTreeMap;
use std::path::Path;

use ed25519_dalek::VerifyingKey;
use serde::Serialize;
use uuid::Uuid;

use eventlog::merkle::{self, MemoryTree, to_hex};
use eventlog::{Checkpoint, EventLog, RecordedEvent, canonical};

use super::folder::{PublishedLeaf, checkpoint_name, leaves_name, read_folder, read_leaves};
use super::signing::SignedCheckpoint;

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
