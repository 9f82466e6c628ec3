//! Audits of the hash chains: recompute every link from the stored columns and report the
//! first broken one of each stream.

use futures_util::TryStreamExt;
use tokio_postgres::{IsolationLevel, Row};

use crate::EventLog;
use crate::canonical::{self, GENESIS, Hash};
use crate::error::Error;
use crate::read::{RecordedEvent, event_from_row, hash_at};

/// The result of an audit: how much was checked and every stream whose chain is broken.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChainReport {
    /// Streams looked at (with events, or with a head row only).
    pub streams_checked: u64,
    /// Events whose links were recomputed or skipped after a break.
    pub events_checked: u64,
    /// The first broken link of each broken stream, by stream id.
    pub broken: Vec<BrokenLink>,
}

impl ChainReport {
    /// True when every chain checked is intact.
    pub fn is_ok(&self) -> bool {
        self.broken.is_empty()
    }
}

/// Where a stream's chain first breaks. Everything after it in that stream is unverified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenLink {
    /// The broken stream.
    pub stream: String,
    /// The version of the event where the break shows (for a head mismatch: the version of
    /// the stream's last event, 0 if it has none).
    pub version: i64,
    /// What is wrong there.
    pub problem: LinkProblem,
}

/// What is wrong with a link.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)] // fields: what the chain says (expected/computed) against what is stored
pub enum LinkProblem {
    /// Versions do not run 1, 2, 3 ...: an event is missing or was inserted.
    Gap { expected_version: i64 },
    /// The event's `prev_hash` is not its predecessor's hash: the predecessor was altered
    /// (and re-hashed), or an event was removed or inserted before this one.
    PrevHash { expected: Hash, stored: Hash },
    /// Hashing the stored `prev_hash` and columns gives another hash: the event was altered.
    Hash { computed: Hash, stored: Hash },
    /// The `streams` row disagrees with the chain's last event (the tail was cut or
    /// extended), or a stream has a head row and no events.
    Head {
        head_version: Option<i64>,
        head_hash: Option<Hash>,
        last_hash: Option<Hash>,
    },
}

/// Events with their stream's head (joined on stream id, so every row carries the head
/// version; the head hash only on the row at that version).
const VERIFY_STREAM: &str = "SELECT e.position, e.tx::text::bigint, e.stream_id, e.version, \
    e.event_id, e.event_type, e.schema_version, e.data, e.actor, e.recorded_at, e.prev_hash, \
    e.hash, s.version, CASE WHEN s.version = e.version THEN s.last_hash END \
    FROM events e LEFT JOIN streams s ON s.stream_id = e.stream_id \
    WHERE e.stream_id = $1 ORDER BY e.version";

const VERIFY_ALL: &str = "SELECT e.position, e.tx::text::bigint, e.stream_id, e.version, \
    e.event_id, e.event_type, e.schema_version, e.data, e.actor, e.recorded_at, e.prev_hash, \
    e.hash, s.version, CASE WHEN s.version = e.version THEN s.last_hash END \
    FROM events e LEFT JOIN streams s ON s.stream_id = e.stream_id \
    ORDER BY e.stream_id, e.version";

const HEAD_OF: &str = "SELECT stream_id, version, last_hash FROM streams WHERE stream_id = $1";

const HEADS_WITHOUT_EVENTS: &str = "SELECT s.stream_id, s.version, s.last_hash FROM streams s \
    WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.stream_id = s.stream_id) \
    ORDER BY s.stream_id";

impl EventLog {
    /// Verifies one stream's chain and head. A stream that does not exist verifies as an
    /// empty report.
    pub async fn verify_stream(&self, stream: &str) -> Result<ChainReport, Error> {
        let mut client = self.pool.get().await?;
        let tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let mut report = ChainReport::default();
        let mut checker = StreamChecker::default();
        let rows = tx.query_raw(VERIFY_STREAM, [stream]).await?;
        futures_util::pin_mut!(rows);
        while let Some(row) = rows.try_next().await? {
            checker.push(&row, &mut report)?;
        }
        checker.finish(&mut report);
        if report.streams_checked == 0 {
            for row in tx.query(HEAD_OF, &[&stream]).await? {
                report.broken.push(head_without_events(&row)?);
                report.streams_checked += 1;
            }
        }
        tx.commit().await?;
        Ok(report)
    }

    /// Verifies every stream in one ordered scan of the log (stream by stream, so memory stays
    /// at one stream), inside one snapshot. Also reports head rows of streams without events.
    pub async fn verify_all(&self) -> Result<ChainReport, Error> {
        let mut client = self.pool.get().await?;
        let tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let mut report = ChainReport::default();
        let mut checker = StreamChecker::default();
        let rows = tx.query_raw(VERIFY_ALL, std::iter::empty::<&str>()).await?;
        futures_util::pin_mut!(rows);
        while let Some(row) = rows.try_next().await? {
            checker.push(&row, &mut report)?;
        }
        checker.finish(&mut report);
        for row in tx.query(HEADS_WITHOUT_EVENTS, &[]).await? {
            report.broken.push(head_without_events(&row)?);
            report.streams_checked += 1;
        }
        tx.commit().await?;
        report.broken.sort_by(|a, b| a.stream.cmp(&b.stream));
        Ok(report)
    }
}

fn head_without_events(row: &Row) -> Result<BrokenLink, Error> {
    Ok(BrokenLink {
        stream: row.try_get(0)?,
        version: 0,
        problem: LinkProblem::Head {
            head_version: Some(row.try_get(1)?),
            head_hash: Some(hash_at(row, 2)?),
            last_hash: None,
        },
    })
}

/// Walks the rows of consecutive streams, keeping only the current stream's state.
#[derive(Default)]
struct StreamChecker {
    current: Option<Current>,
    scratch: Vec<u8>,
}

struct Current {
    stream: String,
    last_version: i64,
    last_hash: Hash,
    head_version: Option<i64>,
    head_hash: Option<Hash>,
    broken: bool,
}

impl StreamChecker {
    fn push(&mut self, row: &Row, report: &mut ChainReport) -> Result<(), Error> {
        let event = event_from_row(row)?;
        let head_version: Option<i64> = row.try_get(12)?;
        let head_hash = match row.try_get::<_, Option<&[u8]>>(13)? {
            Some(_) => Some(hash_at(row, 13)?),
            None => None,
        };
        if self.current.as_ref().map(|c| c.stream != event.stream) != Some(false) {
            self.finish(report);
            report.streams_checked += 1;
            self.current = Some(Current {
                stream: event.stream.clone(),
                last_version: 0,
                last_hash: GENESIS,
                head_version,
                head_hash: None,
                broken: false,
            });
        }
        report.events_checked += 1;
        let Some(current) = self.current.as_mut() else {
            return Ok(());
        };
        if head_hash.is_some() {
            current.head_hash = head_hash;
        }
        if current.broken {
            return Ok(());
        }
        if let Some(problem) = check_link(&event, current, &mut self.scratch) {
            current.broken = true;
            report.broken.push(BrokenLink {
                stream: event.stream.clone(),
                version: event.version,
                problem,
            });
            return Ok(());
        }
        current.last_version = event.version;
        current.last_hash = event.hash;
        Ok(())
    }

    /// Closes the current stream: compares its head row with the chain's tail.
    fn finish(&mut self, report: &mut ChainReport) {
        let Some(current) = self.current.take() else {
            return;
        };
        if current.broken {
            return;
        }
        let head_ok = current.head_version == Some(current.last_version)
            && current.head_hash == Some(current.last_hash);
        if !head_ok {
            report.broken.push(BrokenLink {
                stream: current.stream,
                version: current.last_version,
                problem: LinkProblem::Head {
                    head_version: current.head_version,
                    head_hash: current.head_hash,
                    last_hash: Some(current.last_hash),
                },
            });
        }
    }
}

/// Checks one event against the stream so far; `None` when the link holds.
fn check_link(
    event: &RecordedEvent,
    current: &Current,
    scratch: &mut Vec<u8>,
) -> Option<LinkProblem> {
    let expected_version = current.last_version + 1;
    if event.version != expected_version {
        return Some(LinkProblem::Gap { expected_version });
    }
    if event.prev_hash != current.last_hash {
        return Some(LinkProblem::PrevHash {
            expected: current.last_hash,
            stored: event.prev_hash,
        });
    }
    scratch.clear();
    canonical::event_bytes(&event.content(), scratch);
    let computed = canonical::chain_hash(&event.prev_hash, scratch);
    if computed != event.hash {
        return Some(LinkProblem::Hash {
            computed,
            stored: event.hash,
        });
    }
    None
}
