//! The operator's folder of checkpoints: its files' names (`checkpoint-<seq>.json`,
//! `leaves-<seq>.txt`), each written whole or not at all, and read back.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use uuid::Uuid;

use eventlog::Hash;
use eventlog::merkle::hash_from_hex;

use super::signing::SignedCheckpoint;

pub(super) fn make_folder(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)
}

pub(super) fn write_whole(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let aside = file.with_extension(format!("tmp.{}", Uuid::new_v4()));
    let mut f = std::fs::File::create(&aside)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&aside, file)
}

pub(super) fn checkpoint_name(seq: u64) -> String {
    format!("checkpoint-{seq:08}.json")
}

pub(super) fn leaves_name(seq: u64) -> String {
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
pub(super) fn folder_seqs(dir: &Path) -> Result<std::collections::BTreeSet<u64>, String> {
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
pub(super) fn read_checkpoint(dir: &Path, seq: u64) -> Result<SignedCheckpoint, String> {
    std::fs::read_to_string(dir.join(checkpoint_name(seq)))
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str::<SignedCheckpoint>(&t).map_err(|e| e.to_string()))
}

/// A published leaf: the event's chain hash, its version and stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PublishedLeaf {
    pub(super) hash: Hash,
    pub(super) version: i64,
    pub(super) stream: String,
}

pub(super) fn read_leaves(file: &Path) -> Result<Option<Vec<PublishedLeaf>>, String> {
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
