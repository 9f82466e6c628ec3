//! Reading the log: one stream by version, or everything in commit-safe global order.
//!
//! # Across a failover
//! Every read waits until a synchronous standby holds what it returns (`confirm_replicated`):
//! PostgreSQL shows a commit on the primary when the committing backend's wait for the standby is
//! cut short (its postmaster killed, the query cancelled), and a reader that took such a commit
//! would stream an event the promoted standby never had. The commit horizon then holds across
//! the promotion: the standby replays every WAL record carrying an xid, and replay moves its next
//! xid past each, so every transaction begun after the promotion has an `xid8` above every one
//! the old primary logged, and a checkpoint `(tx, position)` taken before stays below everything
//! written later. A transaction in flight at the failure is aborted on the new primary (no commit
//! record), so the horizon never waits on it, and its `position` values (sequences are WAL-logged
//! ahead) are never reused. Without the wait, a checkpoint past an unreplicated commit would pass
//! an `xid8` the new primary hands out again, and the event written later with it would be
//! skipped. With no synchronous standby configured, or on a standby, there is nothing to wait for.

use std::collections::HashMap;
use std::time::Duration;

use deadpool_postgres::GenericClient;
use serde_json::Value;
use time::OffsetDateTime;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::EventLog;
use crate::canonical::{EventContent, Hash};
use crate::error::Error;

/// An event as stored, with everything needed to fold it, to follow the log from it, and to
/// check its link in the stream's hash chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedEvent {
    /// Global insertion order. Not commit order: follow the log with [`Checkpoint`]s.
    pub position: i64,
    /// The id of the transaction that wrote the event (PostgreSQL `xid8`, as a 64-bit integer).
    pub tx: i64,
    /// The stream the event belongs to.
    pub stream: String,
    /// 1, 2, 3 ... within the stream, without gaps.
    pub version: i64,
    /// Deterministic per (command, stream, index): see [`crate::event_id`].
    pub event_id: Uuid,
    /// The snake_case type on the wire.
    pub event_type: String,
    /// The version of `data`'s shape, as written (the domain's `decode` functions upcast it).
    pub schema_version: i16,
    /// The payload, as stored (jsonb keeps a number's value, not its spelling).
    pub data: Value,
    /// The player who caused the event, if any.
    pub actor: Option<Uuid>,
    /// UTC, to the microsecond.
    pub recorded_at: OffsetDateTime,
    /// The hash of the previous event of the stream (zeros for version 1).
    pub prev_hash: Hash,
    /// `sha256(prev_hash || canonical bytes)`: see [`crate::canonical`].
    pub hash: Hash,
}

impl RecordedEvent {
    /// The checkpoint just after this event: pass it to [`EventLog::read_all_after`] to read
    /// what follows.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            tx: self.tx,
            position: self.position,
        }
    }

    /// The fields the hash covers.
    pub fn content(&self) -> EventContent<'_> {
        EventContent {
            stream: &self.stream,
            version: self.version,
            event_id: self.event_id,
            event_type: &self.event_type,
            schema_version: self.schema_version,
            data: &self.data,
            actor: self.actor,
            recorded_at: self.recorded_at,
        }
    }
}

/// Where a reader of the whole log stands: the `(tx, position)` of the last event it has
/// processed. Ordered like the log. Projections store it with their read model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Checkpoint {
    /// The writing transaction of the last event processed.
    pub tx: i64,
    /// The position of the last event processed.
    pub position: i64,
}

impl Checkpoint {
    /// Before the first event.
    pub const START: Checkpoint = Checkpoint { tx: 0, position: 0 };
}

// Columns are qualified throughout: the output column `tx::text::bigint` is named `tx`, and
// an unqualified `ORDER BY tx` would sort by that bigint instead of walking the xid8 index.
const READ_STREAM: &str = "SELECT e.position, e.tx::text::bigint, e.stream_id, e.version, \
    e.event_id, e.event_type, e.schema_version, e.data, e.actor, e.recorded_at, e.prev_hash, \
    e.hash \
    FROM events e WHERE e.stream_id = $1 AND e.version > $2 ORDER BY e.version";

/// The xid8 horizon read (see the crate docs): one statement, so the horizon and the rows come
/// from the same snapshot. Served by the (tx, position) index, in index order.
const READ_ALL_AFTER: &str = "SELECT e.position, e.tx::text::bigint, e.stream_id, e.version, \
    e.event_id, e.event_type, e.schema_version, e.data, e.actor, e.recorded_at, e.prev_hash, \
    e.hash \
    FROM events e \
    WHERE e.tx < pg_snapshot_xmin(pg_current_snapshot()) \
      AND (e.tx, e.position) > ($1::bigint::text::xid8, $2::bigint) \
    ORDER BY e.tx, e.position \
    LIMIT $3";

/// [`READ_ALL_AFTER`] without the horizon: every event this statement's snapshot sees, in log
/// order. Only for a reader of a prefix that the horizon once passed (the signed checkpoints):
/// a transaction still running sorts after every event of such a prefix.
const READ_VISIBLE_AFTER: &str = "SELECT e.position, e.tx::text::bigint, e.stream_id, e.version, \
    e.event_id, e.event_type, e.schema_version, e.data, e.actor, e.recorded_at, e.prev_hash, \
    e.hash \
    FROM events e \
    WHERE (e.tx, e.position) > ($1::bigint::text::xid8, $2::bigint) \
    ORDER BY e.tx, e.position \
    LIMIT $3";

/// Sent right after a read on the same connection, so that it runs after the read's snapshot:
/// the primary's WAL flush position (every commit the read saw is flushed below it), and
/// whether a synchronous standby has flushed that far. `NULL` when there is nothing to wait
/// for: on a standby (it holds only what its primary sent), or with no synchronous standby
/// configured (a lone server, or Patroni's synchronous mode relaxed while the standby is away).
const REPLICATED: &str = "SELECT w.lsn::text, w.lsn IS NULL OR coalesce((SELECT max(r.flush_lsn) \
    FROM pg_stat_replication r WHERE r.sync_state IN ('sync', 'quorum')) >= w.lsn, false) \
    FROM (SELECT CASE WHEN pg_is_in_recovery() \
        OR current_setting('synchronous_standby_names') = '' THEN NULL \
        ELSE pg_current_wal_flush_lsn() END AS lsn) w";

/// Whether a synchronous standby has flushed WAL up to `$1` (or none is required any more).
const STANDBY_FLUSHED: &str = "SELECT current_setting('synchronous_standby_names') = '' \
    OR coalesce((SELECT max(r.flush_lsn) FROM pg_stat_replication r \
        WHERE r.sync_state IN ('sync', 'quorum')) >= $1::text::pg_lsn, false)";

/// [`READ_ALL_AFTER`] keeping only some event types (a projection's interest).
const READ_TYPES_AFTER: &str = "SELECT e.position, e.tx::text::bigint, e.stream_id, e.version, \
    e.event_id, e.event_type, e.schema_version, e.data, e.actor, e.recorded_at, e.prev_hash, \
    e.hash \
    FROM events e \
    WHERE e.tx < pg_snapshot_xmin(pg_current_snapshot()) \
      AND (e.tx, e.position) > ($1::bigint::text::xid8, $2::bigint) \
      AND e.event_type = ANY($4) \
    ORDER BY e.tx, e.position \
    LIMIT $3";

/// The last event below the horizon: where a reader that wants only what comes next starts.
const LAST_CHECKPOINT: &str = "SELECT e.tx::text::bigint, e.position FROM events e \
    WHERE e.tx < pg_snapshot_xmin(pg_current_snapshot()) \
    ORDER BY e.tx DESC, e.position DESC LIMIT 1";

/// The streams of a kind whose last event is not of a closing type.
const OPEN_STREAMS: &str = "SELECT s.stream_id, s.version FROM streams s \
    JOIN events e ON e.stream_id = s.stream_id AND e.version = s.version \
    WHERE starts_with(s.stream_id, $1) AND e.event_type <> $2";

impl EventLog {
    /// Runs one read statement and [`REPLICATED`] pipelined on one connection (one round trip),
    /// then returns the rows once every commit they show is safe from a failover.
    async fn read_confirmed(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, Error> {
        let client = self.pool.get().await?;
        let (statement, check) = tokio::try_join!(
            client.prepare_cached(sql),
            client.prepare_cached(REPLICATED)
        )?;
        let (rows, seen) = tokio::try_join!(
            client.query(&statement, params),
            client.query_one(&check, &[])
        )?;
        self.confirm_replicated(&client, seen.get(0), seen.get(1))
            .await?;
        Ok(rows)
    }

    /// Waits until a synchronous standby has flushed WAL up to `lsn` (`None`, or `flushed`:
    /// nothing to wait for), polling with a pause that doubles from 1 ms to 50 ms, for at most
    /// the log's replication wait. While primary and standby are up this takes about one
    /// commit's replication round trip; it is what a read must not skip when the primary dies
    /// with commits it showed but never sent (PostgreSQL makes a commit visible on the primary
    /// when its wait for the standby is cut short).
    async fn confirm_replicated(
        &self,
        client: &deadpool_postgres::Object,
        lsn: Option<String>,
        flushed: bool,
    ) -> Result<(), Error> {
        let Some(lsn) = lsn else {
            return Ok(());
        };
        if flushed {
            return Ok(());
        }
        let deadline = tokio::time::Instant::now() + self.replication_wait;
        let mut pause = Duration::from_millis(1);
        let statement = client.prepare_cached(STANDBY_FLUSHED).await?;
        loop {
            tokio::time::sleep(pause).await;
            if client
                .query_one(&statement, &[&lsn])
                .await?
                .get::<_, bool>(0)
            {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::NotReplicated(lsn));
            }
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// The streams whose id starts with `prefix` and whose last event is not of type
    /// `closing`, with their versions: the open aggregates of a kind (the matches not yet
    /// ended), for a repair that compares them with what other tables say.
    pub async fn open_streams(
        &self,
        prefix: &str,
        closing: &str,
    ) -> Result<Vec<(String, i64)>, Error> {
        let client = self.pool.get().await?;
        let rows = client.query(OPEN_STREAMS, &[&prefix, &closing]).await?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// The checkpoint of the last event below the commit horizon ([`Checkpoint::START`] for an
    /// empty log): [`EventLog::read_all_after`] from it reads only what commits from now on,
    /// never skipping a transaction still running.
    pub async fn last_checkpoint(&self) -> Result<Checkpoint, Error> {
        let rows = self.read_confirmed(LAST_CHECKPOINT, &[]).await?;
        Ok(rows.first().map_or(Checkpoint::START, |r| Checkpoint {
            tx: r.get(0),
            position: r.get(1),
        }))
    }

    /// Every event of `stream`, by version; empty for a stream that does not exist. This is
    /// how an aggregate is loaded: strongly consistent, never behind.
    pub async fn read_stream(&self, stream: &str) -> Result<Vec<RecordedEvent>, Error> {
        self.read_stream_after(stream, 0).await
    }

    /// The events of `stream` after `after_version`, by version: what a client that has seen
    /// that version is missing.
    pub async fn read_stream_after(
        &self,
        stream: &str,
        after_version: i64,
    ) -> Result<Vec<RecordedEvent>, Error> {
        let rows = self
            .read_confirmed(READ_STREAM, &[&stream, &after_version])
            .await?;
        rows.iter().map(event_from_row).collect()
    }

    /// Up to `limit` events after `checkpoint`, in `(tx, position)` order, stopping before any
    /// transaction that might still commit. Never skips an event that commits late, and is
    /// not held up by rolled-back appends (their holes are simply never filled). Feed the last
    /// event's [`RecordedEvent::checkpoint`] to the next call.
    pub async fn read_all_after(
        &self,
        checkpoint: Checkpoint,
        limit: i64,
    ) -> Result<Vec<RecordedEvent>, Error> {
        let rows = self
            .read_confirmed(
                READ_ALL_AFTER,
                &[&checkpoint.tx, &checkpoint.position, &limit.max(0)],
            )
            .await?;
        rows.iter().map(event_from_row).collect()
    }

    /// [`EventLog::read_all_after`] restricted to the given event types: what a projection that
    /// reads only some types asks for. Events of other types are stepped over, never waited on.
    pub async fn read_types_after(
        &self,
        checkpoint: Checkpoint,
        types: &[&str],
        limit: i64,
    ) -> Result<Vec<RecordedEvent>, Error> {
        let rows = self
            .read_confirmed(
                READ_TYPES_AFTER,
                &[&checkpoint.tx, &checkpoint.position, &limit.max(0), &types],
            )
            .await?;
        rows.iter().map(event_from_row).collect()
    }

    /// Folds every event after `from` into `f`, in batches of `batch`, until the reader has
    /// caught up with the committed log; returns the checkpoint of the last event seen (or
    /// `from`). For rebuilds and benchmarks: a live projection would also store the
    /// checkpoint with each batch.
    pub async fn for_each_after(
        &self,
        from: Checkpoint,
        batch: i64,
        f: impl FnMut(&RecordedEvent),
    ) -> Result<Checkpoint, Error> {
        self.for_each_of(READ_ALL_AFTER, from, batch, f).await
    }

    /// [`EventLog::for_each_after`] over every event visible now, past the commit horizon too:
    /// for a check of a prefix of the log that the horizon passed long ago (a signed
    /// checkpoint's), which a transaction still running elsewhere must not cut short.
    pub async fn for_each_visible_after(
        &self,
        from: Checkpoint,
        batch: i64,
        f: impl FnMut(&RecordedEvent),
    ) -> Result<Checkpoint, Error> {
        self.for_each_of(READ_VISIBLE_AFTER, from, batch, f).await
    }

    async fn for_each_of(
        &self,
        sql: &str,
        from: Checkpoint,
        batch: i64,
        mut f: impl FnMut(&RecordedEvent),
    ) -> Result<Checkpoint, Error> {
        let batch = batch.max(1);
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(sql).await?;
        let mut checkpoint = from;
        loop {
            let rows = client
                .query(&statement, &[&checkpoint.tx, &checkpoint.position, &batch])
                .await?;
            for row in &rows {
                let event = event_from_row(row)?;
                f(&event);
                checkpoint = event.checkpoint();
            }
            if i64::try_from(rows.len()).unwrap_or(i64::MAX) < batch {
                return Ok(checkpoint);
            }
        }
    }
}

const FIRST_EVENTS: &str = "SELECT e.position, e.tx::text::bigint, e.stream_id, e.version, \
    e.event_id, e.event_type, e.schema_version, e.data, e.actor, e.recorded_at, e.prev_hash, \
    e.hash \
    FROM events e WHERE e.stream_id = ANY($1) AND e.version = 1";

const FIRST_VALUES: &str = "SELECT s.stream_id, m.v FROM unnest($1::text[], $2::int8[]) \
    AS s(stream_id, n) \
    CROSS JOIN LATERAL (SELECT e.data->>$4::text AS v, e.version FROM events e \
      WHERE e.stream_id = s.stream_id AND e.event_type = $3::text \
      ORDER BY e.version LIMIT s.n) m \
    ORDER BY s.stream_id, m.version";

const FIRST_STAMPED_VALUES: &str = "SELECT DISTINCT ON (e.stream_id) e.stream_id, \
    e.data->>$3::text, e.recorded_at FROM events e \
    WHERE e.stream_id = ANY($1) AND e.event_type = $2::text \
    ORDER BY e.stream_id, e.version";

const COUNT_OF_TYPE: &str = "SELECT e.stream_id, count(*) FROM events e \
    WHERE e.stream_id = ANY($1) AND e.event_type = $2 GROUP BY e.stream_id";

const LAST_POSITION: &str = "SELECT coalesce(max(e.position), 0) FROM events e";

const LAST_OF_TYPES: &str = "SELECT e.tx::text::bigint, e.position FROM events e \
    WHERE e.event_type = ANY($1) ORDER BY e.tx DESC, e.position DESC LIMIT 1";

// Reads for the log's readers that keep their own transaction (a projection reads inside the
// one that moves its checkpoint): on the caller's client.

/// The events of `stream` after version `after` up to version `upto`, by version, on the
/// caller's client: what a projection folds of an aggregate inside its own transaction.
pub async fn stream_events(
    client: &impl GenericClient,
    stream: &str,
    after: i64,
    upto: i64,
) -> Result<Vec<RecordedEvent>, Error> {
    let rows = client.query(READ_STREAM, &[&stream, &after]).await?;
    rows.iter()
        .filter(|r| r.get::<_, i64>(3) <= upto)
        .map(event_from_row)
        .collect()
}

/// The first event (version 1) of each of `streams` that has one, in no particular order.
pub async fn first_events(
    client: &impl GenericClient,
    streams: &[String],
) -> Result<Vec<RecordedEvent>, Error> {
    let rows = client.query(FIRST_EVENTS, &[&streams]).await?;
    rows.iter().map(event_from_row).collect()
}

/// The first `limits[i]` events of type `event_type` of each of `streams[i]`, by version: the
/// text of each one's `data` field `key` (`None` where it has none), as `(stream, value)`, by
/// stream then version. What the history and the explorer fold of a match's moves, each
/// stream's read stopping at its limit.
pub async fn first_values(
    client: &impl GenericClient,
    streams: &[String],
    limits: &[i64],
    event_type: &str,
    key: &str,
) -> Result<Vec<(String, Option<String>)>, Error> {
    let rows = client
        .query(FIRST_VALUES, &[&streams, &limits, &event_type, &key])
        .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// The first event of type `event_type` of each of `streams` that has one: the text of its
/// `data` field `key` (`None` where it has none) and when it was recorded, as
/// `(stream, value, recorded_at)`. What the tournaments' organiser reads of the games that
/// ended, to record each result no earlier than its end.
pub async fn first_stamped_values(
    client: &impl GenericClient,
    streams: &[String],
    event_type: &str,
    key: &str,
) -> Result<Vec<(String, Option<String>, OffsetDateTime)>, Error> {
    let rows = client
        .query(FIRST_STAMPED_VALUES, &[&streams, &event_type, &key])
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

/// How many events of `event_type` each of `streams` holds (streams with none are absent).
pub async fn count_of_type(
    client: &impl GenericClient,
    streams: &[String],
    event_type: &str,
) -> Result<HashMap<String, i64>, Error> {
    let rows = client
        .query(COUNT_OF_TYPE, &[&streams, &event_type])
        .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// The position of the log's last event, committed or not yet (0 for an empty log): how far
/// the log goes, for progress reports.
pub async fn last_position(client: &impl GenericClient) -> Result<i64, Error> {
    Ok(client.query_one(LAST_POSITION, &[]).await?.get(0))
}

/// The last event of one of `types` that the caller's snapshot sees committed: where a reader
/// of those types is up to date once its checkpoint has passed it.
pub async fn last_of_types(
    client: &impl GenericClient,
    types: &[&str],
) -> Result<Option<Checkpoint>, Error> {
    let row = client.query_opt(LAST_OF_TYPES, &[&types]).await?;
    Ok(row.map(|r| Checkpoint {
        tx: r.get(0),
        position: r.get(1),
    }))
}

/// Decodes a row whose columns are, in order: position, tx (as bigint), stream_id, version,
/// event_id, event_type, schema_version, data, actor, recorded_at, prev_hash, hash.
pub(crate) fn event_from_row(row: &Row) -> Result<RecordedEvent, Error> {
    Ok(RecordedEvent {
        position: row.try_get(0)?,
        tx: row.try_get(1)?,
        stream: row.try_get(2)?,
        version: row.try_get(3)?,
        event_id: row.try_get(4)?,
        event_type: row.try_get(5)?,
        schema_version: row.try_get(6)?,
        data: row.try_get(7)?,
        actor: row.try_get(8)?,
        recorded_at: row.try_get(9)?,
        prev_hash: hash_at(row, 10)?,
        hash: hash_at(row, 11)?,
    })
}

/// Reads a 32-byte hash column.
pub(crate) fn hash_at(row: &Row, index: usize) -> Result<Hash, Error> {
    let bytes: &[u8] = row.try_get(index)?;
    Hash::try_from(bytes).map_err(|_| {
        Error::Corrupt(format!(
            "hash column {index} holds {} bytes, not 32",
            bytes.len()
        ))
    })
}
