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
//!
//! [`EventLog::identity`]: eventlog::EventLog::identity

pub mod folder;
pub mod ledger;
pub mod proofs;
pub mod publish;
pub mod signing;
pub mod verify;

pub use folder::read_folder;
pub use ledger::{closings, record_closing};
pub use proofs::{
    Consistency, MatchProof, ProofError, ProofEvent, consistency, match_proof, proof_for,
    verify_match_proof,
};
pub use publish::{
    SignError, checkpoint_committed, checkpoint_now, grow, grow_to_committed, publish, recorded,
    run_forever,
};
pub use signing::{History, SignedCheckpoint, load_key, public_key, sign};
pub use verify::{FolderReport, verify_folder};
