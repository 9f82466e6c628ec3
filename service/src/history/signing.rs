//! The signer and what it signs: the operator's key (configured, or read from its file, or made
//! there), the signed note of a checkpoint, and the checks a verifier makes of one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use eventlog::merkle::{hash_from_hex, to_hex};
use eventlog::{Hash, TreeHead};

use crate::config::{DatabaseConfig, HistoryConfig};

/// The first line of every signed note; a new format gets a new line.
const NOTE_TAG: &str = "discs checkpoint v2";

/// The first line of the notes signed before logs had an identity (no `log` line).
const NOTE_TAG_V1: &str = "discs checkpoint v1";

/// The signer's side: key, the log's identity, folder, interval, and the ledger of closed
/// accounts.
pub struct History {
    pub(super) key: SigningKey,
    pub(super) log: Uuid,
    pub(super) dir: PathBuf,
    pub(super) closings: PathBuf,
    /// The machine's shared ledger of earlier versions, read beside `closings`.
    pub(super) shared_closings: Option<PathBuf>,
    pub(super) interval: Duration,
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
    ///
    /// [`EventLog::identity`]: eventlog::EventLog::identity
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

#[cfg(test)]
mod tests {
    use eventlog::Checkpoint;
    use eventlog::merkle;

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
