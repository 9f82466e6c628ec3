//! Appends on known heads: the group-commit fast path for commands whose stream head the
//! caller already holds (a cached match), in one set-based statement per batch.
//!
//! The caller knows each stream's version *and* the hash of its last event, so the hash chain
//! is computed here and the database (one statement, [`append_on_heads_with!`]) only
//! compare-and-sets each `streams` row on both (version and last hash) and inserts the events of
//! the rows that moved: no subtransaction, one set-based statement for the whole batch. A head
//! that moved (or a hash that does not match, which a correct cache never produces) leaves its
//! command unwritten; it is then answered as
//! `eventlog_append` would: `AlreadyApplied` if its events are stored, `Conflict` otherwise.

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;
use tokio_postgres::Row;
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

/// The append as the `WITH` clauses of one statement, on [`HeadBatch::arguments`] as its
/// parameters `$1` to `$15`: `moved` compare-and-sets each head on its version and last hash
/// (its rows: the streams that moved), `appended` inserts the events of the streams that moved,
/// in the arguments' order (its rows: `r_stream`, `r_event_id`, `r_position`, `r_tx`). A caller
/// with rows of its own to write in the same statement (so in the same transaction, committed
/// without `BEGIN` or `COMMIT`) adds its own clauses after these, filtered on `moved`, and
/// selects `appended`'s rows for [`HeadBatch::answers`]. Sent as it is, not wrapped in a
/// database function: a PL/pgSQL layer cost the live path's round about 40 % of its execution
/// (BENCHMARKS.md, issue 53).
///
/// The plan must stay index lookups on `streams` whatever the statistics said when it was made
/// (a generic plan made on an empty table would scan it): the connections that run it disable
/// sequential scans ([`WRITERS_OPTIONS`]).
#[macro_export]
macro_rules! append_on_heads_with {
    () => {
        "c AS ( \
             SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bytea[], $5::bytea[]) \
                 AS c(stream, expected, version, head, last) \
         ), moved AS ( \
             UPDATE streams s SET version = c.version, last_hash = c.last \
               FROM c \
              WHERE s.stream_id = c.stream AND s.version = c.expected AND s.last_hash = c.head \
             RETURNING s.stream_id \
         ), appended AS ( \
             INSERT INTO events AS e (stream_id, version, event_id, event_type, schema_version, \
                                      data, actor, recorded_at, prev_hash, hash) \
             SELECT u.stream, u.version, u.event_id, u.event_type, u.schema_version, u.data, \
                    u.actor, u.recorded_at, u.prev_hash, u.hash \
               FROM unnest($6::text[], $7::bigint[], $8::uuid[], $9::text[], $10::smallint[], \
                           $11::jsonb[], $12::uuid[], $13::timestamptz[], $14::bytea[], \
                           $15::bytea[]) \
                    WITH ORDINALITY AS u(stream, version, event_id, event_type, schema_version, \
                                         data, actor, recorded_at, prev_hash, hash, ord) \
              WHERE u.stream IN (SELECT m.stream_id FROM moved m) \
              ORDER BY u.ord \
             RETURNING e.stream_id AS r_stream, e.event_id AS r_event_id, \
                       e.position AS r_position, e.tx::text::bigint AS r_tx \
         )"
    };
}

/// The options (`tokio_postgres::Config::options`) of a connection that runs
/// [`append_on_heads_with!`]'s statements: no sequential scan where an index serves.
pub const WRITERS_OPTIONS: &str = "-c enable_seqscan=off";

/// The append alone: [`append_on_heads_with!`] and its rows.
const APPEND_ON_HEADS: &str = concat!(
    "WITH ",
    append_on_heads_with!(),
    " SELECT r_stream, r_event_id, r_position, r_tx FROM appended"
);

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
    /// A caller that writes its own rows in the same statement composes its own statement
    /// ([`append_on_heads_with!`]) with a [`HeadBatch`]'s arguments instead. The connection
    /// must run with [`WRITERS_OPTIONS`].
    pub async fn append_on_heads(
        client: &impl GenericClient,
        commands: &[HeadAppend<'_>],
    ) -> Result<Vec<Result<AppendOutcome, AppendError>>, AppendError> {
        let batch = HeadBatch::new(commands)?;
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let arguments = batch.arguments();
        let statement = client.prepare_cached(APPEND_ON_HEADS).await?;
        let rows = client.query(&statement, &arguments.params()).await?;
        batch.answers(client, &rows).await
    }
}

/// Commands on known heads made ready for [`append_on_heads_with!`]: checked, each one's chain
/// continued from its known head.
///
/// A caller with rows of its own to write in the same statement (so in the same transaction,
/// committed on its own without `BEGIN` or `COMMIT`) sends [`append_on_heads_with!`]'s clauses
/// followed by its own, with [`HeadBatch::arguments`] followed by its own parameters, and hands
/// `appended`'s rows to [`HeadBatch::answers`].
pub struct HeadBatch<'c> {
    commands: &'c [HeadAppend<'c>],
    ready: Vec<Ready>,
}

impl<'c> HeadBatch<'c> {
    /// Checks the commands (each stream once, each existing) and computes their chains.
    pub fn new(commands: &'c [HeadAppend<'c>]) -> Result<Self, AppendError> {
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
        Ok(Self { commands, ready })
    }

    /// Whether the batch has no command.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// [`append_on_heads_with!`]'s parameters, typed, in its order.
    pub fn arguments(&self) -> HeadArguments<'_> {
        let (commands, ready) = (self.commands, &self.ready);
        let mut a = HeadArguments {
            streams: commands.iter().map(|c| c.append.stream.as_str()).collect(),
            expected: commands.iter().map(|c| c.append.expected_version).collect(),
            versions: ready
                .iter()
                .filter_map(|r| r.versions.last().copied())
                .collect(),
            heads: commands.iter().map(|c| c.head.as_slice()).collect(),
            lasts: ready
                .iter()
                .filter_map(|r| r.hashes.last().map(|h| h.as_slice()))
                .collect(),
            ..HeadArguments::default()
        };
        for (c, r) in commands.iter().zip(ready) {
            let p = &r.prepared;
            a.e_streams.extend(std::iter::repeat_n(
                c.append.stream.as_str(),
                p.event_ids.len(),
            ));
            a.e_versions.extend_from_slice(&r.versions);
            a.e_prev.extend(r.prev.iter().map(|h| h.as_slice()));
            a.e_hashes.extend(r.hashes.iter().map(|h| h.as_slice()));
            a.e_ids.extend_from_slice(&p.event_ids);
            a.e_types.extend(p.types.iter().map(String::as_str));
            a.e_schemas.extend_from_slice(&p.schema_versions);
            a.e_data.extend(p.data.iter());
            a.e_actors.extend_from_slice(&p.actors);
            a.e_at.extend_from_slice(&p.recorded_at);
        }
        a
    }

    /// The commands' answers, in their order, from the rows the append returned (one per event
    /// written): a command with its events written is [`AppendOutcome::Appended`]; one without
    /// is [`AppendOutcome::AlreadyApplied`] (a retry) or [`AppendError::Conflict`], asked of the
    /// database on `client` (the same transaction, or a later one).
    pub async fn answers(
        &self,
        client: &impl GenericClient,
        rows: &[Row],
    ) -> Result<Vec<Result<AppendOutcome, AppendError>>, AppendError> {
        let (commands, ready) = (self.commands, &self.ready);
        let written = rows
            .iter()
            .map(|r| {
                Ok((
                    r.try_get("r_event_id")?,
                    r.try_get("r_position")?,
                    r.try_get("r_tx")?,
                ))
            })
            .collect::<Result<Vec<(Uuid, i64, i64)>, tokio_postgres::Error>>()?;
        let mut answers = Vec::with_capacity(commands.len());
        let mut missed = Vec::new();
        for (index, (c, r)) in commands.iter().zip(ready).enumerate() {
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

/// [`append_on_heads_with!`]'s parameters: per command its stream, expected version, version
/// after it, known head hash and new last hash; per event its stream, version, id, type, schema
/// version, data, actor, time, previous hash and hash.
#[derive(Default)]
pub struct HeadArguments<'b> {
    streams: Vec<&'b str>,
    expected: Vec<i64>,
    versions: Vec<i64>,
    heads: Vec<&'b [u8]>,
    lasts: Vec<&'b [u8]>,
    e_streams: Vec<&'b str>,
    e_versions: Vec<i64>,
    e_ids: Vec<Uuid>,
    e_types: Vec<&'b str>,
    e_schemas: Vec<i16>,
    e_data: Vec<&'b serde_json::Value>,
    e_actors: Vec<Option<Uuid>>,
    e_at: Vec<OffsetDateTime>,
    e_prev: Vec<&'b [u8]>,
    e_hashes: Vec<&'b [u8]>,
}

impl HeadArguments<'_> {
    /// How many parameters [`append_on_heads_with!`] takes: a caller's clauses number theirs
    /// from the next one.
    pub const COUNT: usize = 15;

    /// The arguments as statement parameters, in the clauses' order.
    pub fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        vec![
            &self.streams,
            &self.expected,
            &self.versions,
            &self.heads,
            &self.lasts,
            &self.e_streams,
            &self.e_versions,
            &self.e_ids,
            &self.e_types,
            &self.e_schemas,
            &self.e_data,
            &self.e_actors,
            &self.e_at,
            &self.e_prev,
            &self.e_hashes,
        ]
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
