//! Appends on known heads: the group-commit fast path for commands whose stream head the
//! caller already holds (a cached match), in one set-based statement per batch.
//!
//! The caller knows each stream's version *and* the hash of its last event, so the hash chain
//! is computed here and the database only compare-and-sets each `streams` row on both (version
//! and last hash) and inserts the events of the rows that moved: no PL/pgSQL, no subtransaction,
//! one plan for the whole batch. A head that moved (or a hash that does not match, which a
//! correct cache never produces) leaves its command unwritten; it is then answered as
//! `eventlog_append` would: `AlreadyApplied` if its events are stored, `Conflict` otherwise.

use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::EventLog;
use crate::append::{self, AppendOutcome, Prepared, StreamAppend};
use crate::canonical::{self, Hash};
use crate::error::{AppendError, Error};
use crate::read::RecordedEvent;

/// A command on one existing stream whose head the caller knows.
#[derive(Debug, Clone, Copy)]
pub struct HeadAppend<'a> {
    /// The command's id (its events' ids derive from it, as for every append).
    pub command_id: Uuid,
    /// The events, on a stream that exists (`expected_version` at least 1).
    pub append: &'a StreamAppend,
    /// The hash of the stream's event at `append.expected_version`.
    pub head: Hash,
}

/// Moves every head still at its expected version and hash, then inserts the events of the
/// streams that moved. Rows are updated in the arrays' order (callers sort by stream), and
/// each stream appears once, so every row is updated at most once. [`Alongside`] writes go
/// between the two parts.
const MOVE_HEADS: &str = "WITH c AS ( \
        SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bytea[], $5::bytea[]) \
            AS c(stream, expected, version, head, last) \
    ), moved AS ( \
        UPDATE streams s SET version = c.version, last_hash = c.last \
          FROM c \
         WHERE s.stream_id = c.stream AND s.version = c.expected AND s.last_hash = c.head \
        RETURNING s.stream_id \
    )";

const INSERT_EVENTS: &str = " \
    INSERT INTO events AS e (stream_id, version, event_id, event_type, schema_version, data, \
                             actor, recorded_at, prev_hash, hash) \
    SELECT u.stream, u.version, u.event_id, u.event_type, u.schema_version, u.data, u.actor, \
           u.recorded_at, u.prev_hash, u.hash \
      FROM unnest($6::text[], $7::bigint[], $8::uuid[], $9::text[], $10::smallint[], \
                  $11::jsonb[], $12::uuid[], $13::timestamptz[], $14::bytea[], $15::bytea[]) \
           WITH ORDINALITY AS u(stream, version, event_id, event_type, schema_version, data, \
                                actor, recorded_at, prev_hash, hash, ord) \
     WHERE u.stream IN (SELECT m.stream_id FROM moved m) \
     ORDER BY u.ord \
    RETURNING e.event_id, e.position, e.tx::text::bigint";

/// The number of the first parameter of [`Alongside`] writes (the append takes `$1`–`$15`).
pub const ALONGSIDE_FIRST_PARAM: usize = 16;

/// Writes of the caller's own tables that go in the append's statement, hence in its
/// transaction, for the streams it moved: with them the statement is a whole transaction,
/// committed on its own without `BEGIN` or `COMMIT`.
pub struct Alongside<'a> {
    /// More items of the statement's `WITH` list (`name AS (INSERT ...)`, comma-separated).
    /// Each may join `moved(stream_id)`, the streams whose heads the statement moved; its
    /// parameters are numbered from [`ALONGSIDE_FIRST_PARAM`]. PostgreSQL runs every
    /// data-modifying item once, whether or not anything reads its output.
    pub ctes: &'a str,
    /// The values of those parameters, in order.
    pub params: Vec<&'a (dyn ToSql + Sync)>,
}

const HEADS_NOW: &str = "SELECT stream_id, version FROM streams WHERE stream_id = ANY($1)";

/// One command made ready: its arguments, and its events with their versions and hashes.
struct Ready {
    prepared: Prepared,
    versions: Vec<i64>,
    prev: Vec<Hash>,
    hashes: Vec<Hash>,
}

impl EventLog {
    /// Appends commands on streams whose heads the caller knows, in one statement, inside the
    /// caller's transaction (group commit, like [`EventLog::append_batch_on`], for the common
    /// case of one existing stream per command). Each command is written if its stream is at
    /// its expected version with the given head hash; otherwise it answers
    /// [`AppendOutcome::AlreadyApplied`] (its events are stored) or [`AppendError::Conflict`].
    /// The answers come back in the commands' order.
    ///
    /// Each stream may appear once per call, with `expected_version` at least 1 (creating a
    /// stream, or a command on several streams, goes through [`EventLog::append_batch_on`]).
    pub async fn append_on_heads(
        client: &impl GenericClient,
        commands: &[HeadAppend<'_>],
    ) -> Result<Vec<Result<AppendOutcome, AppendError>>, AppendError> {
        Self::append_on_heads_with(client, commands, None).await
    }

    /// [`EventLog::append_on_heads`] with the caller's own writes in the same statement
    /// ([`Alongside`]): on a client outside a transaction, the whole of it commits as one
    /// statement, in one round trip.
    pub async fn append_on_heads_with(
        client: &impl GenericClient,
        commands: &[HeadAppend<'_>],
        alongside: Option<Alongside<'_>>,
    ) -> Result<Vec<Result<AppendOutcome, AppendError>>, AppendError> {
        let mut ready = Vec::with_capacity(commands.len());
        for (index, c) in commands.iter().enumerate() {
            if c.append.expected_version < 1 {
                return Err(AppendError::Invalid(format!(
                    "append_on_heads: stream {} must exist (expected version {})",
                    c.append.stream, c.append.expected_version
                )));
            }
            if commands[..index]
                .iter()
                .any(|o| o.append.stream == c.append.stream)
            {
                return Err(AppendError::DuplicateStream(c.append.stream.clone()));
            }
            ready.push(make_ready(c)?);
        }
        if ready.is_empty() {
            return Ok(Vec::new());
        }
        let written = write(client, commands, &ready, alongside).await?;

        let mut answers = Vec::with_capacity(commands.len());
        let mut missed = Vec::new();
        for (index, (c, r)) in commands.iter().zip(&ready).enumerate() {
            let rows: Vec<&(Uuid, i64, i64)> = r
                .prepared
                .event_ids
                .iter()
                .filter_map(|id| written.iter().find(|w| w.0 == *id))
                .collect();
            if rows.is_empty() {
                missed.push(index);
                answers.push(None);
            } else if rows.len() == r.prepared.event_ids.len() {
                answers.push(Some(Ok(AppendOutcome::Appended(recorded(c, r, &rows)))));
            } else {
                return Err(Error::Corrupt(format!(
                    "append_on_heads wrote {} of the {} events of a command on {}",
                    rows.len(),
                    r.prepared.event_ids.len(),
                    c.append.stream
                ))
                .into());
            }
        }
        if !missed.is_empty() {
            let streams: Vec<&str> = missed
                .iter()
                .map(|&i| commands[i].append.stream.as_str())
                .collect();
            let statement = client.prepare_cached(HEADS_NOW).await?;
            let heads = client.query(&statement, &[&streams]).await?;
            for i in missed {
                let append = commands[i].append;
                let answer = match append::events_of_command(client, &ready[i].prepared).await? {
                    Some(events) => Ok(AppendOutcome::AlreadyApplied(events)),
                    None => {
                        let actual = heads
                            .iter()
                            .find(|h| h.get::<_, &str>(0) == append.stream)
                            .map_or(Ok(0), |h| h.try_get::<_, i64>(1))?;
                        Err(AppendError::Conflict {
                            stream: append.stream.clone(),
                            expected: append.expected_version,
                            actual,
                        })
                    }
                };
                answers[i] = Some(answer);
            }
        }
        Ok(answers.into_iter().flatten().collect())
    }
}

/// The command's arguments, and its chain continued from the known head.
fn make_ready(c: &HeadAppend<'_>) -> Result<Ready, AppendError> {
    let prepared = append::prepare(c.command_id, std::slice::from_ref(c.append))?;
    let mut last = c.head;
    let n = prepared.content.len();
    let (mut versions, mut prev, mut hashes) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for (k, content) in prepared.content.iter().enumerate() {
        versions.push(c.append.expected_version + k as i64 + 1);
        prev.push(last);
        last = canonical::chain_hash(&last, content);
        hashes.push(last);
    }
    Ok(Ready {
        prepared,
        versions,
        prev,
        hashes,
    })
}

/// Runs the statement; the (event id, position, tx) of every event written.
async fn write(
    client: &impl GenericClient,
    commands: &[HeadAppend<'_>],
    ready: &[Ready],
    alongside: Option<Alongside<'_>>,
) -> Result<Vec<(Uuid, i64, i64)>, AppendError> {
    let streams: Vec<&str> = commands.iter().map(|c| c.append.stream.as_str()).collect();
    let expected: Vec<i64> = commands.iter().map(|c| c.append.expected_version).collect();
    let versions: Vec<i64> = ready
        .iter()
        .filter_map(|r| r.versions.last().copied())
        .collect();
    let heads: Vec<&[u8]> = commands.iter().map(|c| c.head.as_slice()).collect();
    let lasts: Vec<&[u8]> = ready
        .iter()
        .filter_map(|r| r.hashes.last().map(|h| h.as_slice()))
        .collect();
    let mut e_streams: Vec<&str> = Vec::new();
    let mut e_versions: Vec<i64> = Vec::new();
    let mut e_prev: Vec<&[u8]> = Vec::new();
    let mut e_hashes: Vec<&[u8]> = Vec::new();
    let mut e_ids = Vec::new();
    let mut e_types = Vec::new();
    let mut e_schemas = Vec::new();
    let mut e_data = Vec::new();
    let mut e_actors = Vec::new();
    let mut e_at = Vec::new();
    for (c, r) in commands.iter().zip(ready) {
        let p = &r.prepared;
        e_streams.extend(std::iter::repeat_n(
            c.append.stream.as_str(),
            p.event_ids.len(),
        ));
        e_versions.extend_from_slice(&r.versions);
        e_prev.extend(r.prev.iter().map(|h| h.as_slice()));
        e_hashes.extend(r.hashes.iter().map(|h| h.as_slice()));
        e_ids.extend_from_slice(&p.event_ids);
        e_types.extend(p.types.iter().map(String::as_str));
        e_schemas.extend_from_slice(&p.schema_versions);
        e_data.extend(p.data.iter());
        e_actors.extend_from_slice(&p.actors);
        e_at.extend_from_slice(&p.recorded_at);
    }
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![
        &streams,
        &expected,
        &versions,
        &heads,
        &lasts,
        &e_streams,
        &e_versions,
        &e_ids,
        &e_types,
        &e_schemas,
        &e_data,
        &e_actors,
        &e_at,
        &e_prev,
        &e_hashes,
    ];
    debug_assert_eq!(params.len() + 1, ALONGSIDE_FIRST_PARAM);
    let sql = match &alongside {
        Some(a) => {
            params.extend_from_slice(&a.params);
            format!("{MOVE_HEADS}, {}{INSERT_EVENTS}", a.ctes)
        }
        None => format!("{MOVE_HEADS}{INSERT_EVENTS}"),
    };
    let statement = client.prepare_cached(&sql).await?;
    let rows = client.query(&statement, &params).await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
        .collect::<Result<Vec<_>, tokio_postgres::Error>>()
        .map_err(AppendError::from)
}

/// The command's events as written.
fn recorded(c: &HeadAppend<'_>, r: &Ready, rows: &[&(Uuid, i64, i64)]) -> Vec<RecordedEvent> {
    let p = &r.prepared;
    c.append
        .events
        .iter()
        .zip(rows)
        .enumerate()
        .map(|(k, (event, row))| RecordedEvent {
            position: row.1,
            tx: row.2,
            stream: c.append.stream.clone(),
            version: r.versions[k],
            event_id: p.event_ids[k],
            event_type: event.event_type.clone(),
            schema_version: event.schema_version,
            data: event.data.clone(),
            actor: event.actor,
            recorded_at: p.recorded_at[k],
            prev_hash: r.prev[k],
            hash: r.hashes[k],
        })
        .collect()
}
