//! Appending a command's events: expected versions, idempotency, and the one-round-trip call
//! of the `eventlog_append` SQL function (migrations/V1__event_log.sql).

use deadpool_postgres::GenericClient;
use serde_json::Value;
use time::OffsetDateTime;
use tokio_postgres::error::SqlState;
use uuid::Uuid;

use crate::EventLog;
use crate::canonical::{self, EventContent};
use crate::error::{AppendError, Error};
use crate::read::{self, RecordedEvent};

/// An event as the domain hands it over, before the log gives it a version, an id and a hash.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    /// The snake_case type on the wire (`move_played`).
    pub event_type: String,
    /// The version of `data`'s shape, so that readers can upcast old payloads (starts at 1).
    pub schema_version: i16,
    /// The payload. Prefer integers, strings and booleans (see [`crate::canonical`]).
    pub data: Value,
    /// The player who caused the event, if any (none for the CPU or a timer).
    pub actor: Option<Uuid>,
    /// When it happened, as read by the command's caller; stored to the microsecond.
    pub recorded_at: OffsetDateTime,
}

/// The events one command appends to one stream, with the version the command was decided
/// against.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamAppend {
    /// The stream to append to (`match-<uuid>`, `ticket-<uuid>`, ...).
    pub stream: String,
    /// The stream's version when the command was decided: 0 for a stream that must not exist
    /// yet, otherwise the version of its last event.
    pub expected_version: i64,
    /// The events, in order; they get versions `expected_version + 1` onwards.
    pub events: Vec<NewEvent>,
}

/// What an append did. Both cases mean the command's events are in the log; callers that
/// need to know whether *this* call wrote them look at the variant.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum AppendOutcome {
    /// The events were written now, in this order.
    Appended(Vec<RecordedEvent>),
    /// The command id had already been applied: here is what it wrote then (as stored, in
    /// position order); nothing new was written.
    AlreadyApplied(Vec<RecordedEvent>),
}

impl AppendOutcome {
    /// The command's events, whichever call wrote them.
    pub fn events(&self) -> &[RecordedEvent] {
        match self {
            AppendOutcome::Appended(events) | AppendOutcome::AlreadyApplied(events) => events,
        }
    }

    /// Consumes the outcome, keeping the command's events.
    pub fn into_events(self) -> Vec<RecordedEvent> {
        match self {
            AppendOutcome::Appended(events) | AppendOutcome::AlreadyApplied(events) => events,
        }
    }
}

/// SQLSTATE raised by `eventlog_append` when a stream is not at its expected version.
const CONFLICT: &str = "ZC001";

const APPEND: &str = "SELECT r_event_id, r_position, r_tx, r_version, r_prev_hash, r_hash \
    FROM eventlog_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

const EVENTS_OF_COMMAND: &str = "SELECT e.position, e.tx::text::bigint, e.stream_id, \
    e.version, e.event_id, e.event_type, e.schema_version, e.data, e.actor, e.recorded_at, \
    e.prev_hash, e.hash \
    FROM events e \
    WHERE e.tx = (SELECT d.tx FROM events d WHERE d.event_id = ANY($1) LIMIT 1) \
      AND e.stream_id = ANY($2) \
    ORDER BY e.tx, e.position";

const APPEND_BATCH: &str = "SELECT r_command, r_status, r_detail, r_event_id, r_position, r_tx, \
    r_version, r_prev_hash, r_hash \
    FROM eventlog_append_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

/// The arguments of one `eventlog_append` call, in the caller's order.
#[derive(Default)]
pub(crate) struct Prepared {
    pub(crate) streams: Vec<String>,
    pub(crate) expected: Vec<i64>,
    pub(crate) counts: Vec<i32>,
    pub(crate) event_ids: Vec<Uuid>,
    pub(crate) types: Vec<String>,
    pub(crate) schema_versions: Vec<i16>,
    pub(crate) data: Vec<Value>,
    pub(crate) actors: Vec<Option<Uuid>>,
    pub(crate) recorded_at: Vec<OffsetDateTime>,
    pub(crate) content: Vec<Vec<u8>>,
}

impl EventLog {
    /// Appends one command's events to one stream, if the stream is at `expected_version`.
    ///
    /// `command_id` is the idempotency key: calling again with the same id (after a timeout,
    /// say) writes nothing and answers [`AppendOutcome::AlreadyApplied`] with the events the
    /// first call wrote. A stream at another version gives [`AppendError::Conflict`].
    pub async fn append(
        &self,
        command_id: Uuid,
        append: StreamAppend,
    ) -> Result<AppendOutcome, AppendError> {
        self.append_many(command_id, vec![append]).await
    }

    /// Appends one command's events to several streams in one transaction, each at its own
    /// expected version: all are written, or (on any conflict) none.
    pub async fn append_many(
        &self,
        command_id: Uuid,
        appends: Vec<StreamAppend>,
    ) -> Result<AppendOutcome, AppendError> {
        let prepared = prepare(command_id, &appends)?;
        let client = self.pool.get().await?;
        // Two attempts: a unique violation can only come from a race the function's checks
        // did not see (a twin command committing between our check and our insert); the
        // second call sees the committed state and answers properly.
        let mut attempt = 0;
        loop {
            attempt += 1;
            match call(&client, &prepared, &appends, Recheck::Yes).await {
                Err(AppendError::Store(Error::Db(e)))
                    if attempt < 2 && e.code() == Some(&SqlState::UNIQUE_VIOLATION) =>
                {
                    continue;
                }
                other => return other,
            }
        }
    }

    /// Runs the append on a client the caller controls, inside the caller's open transaction:
    /// for commands that must change a write-side table together with the log (the queue's
    /// slots). The events commit or roll back with that transaction. A conflict aborts it, so it
    /// is reported as is, without checking whether a twin of the command won.
    pub async fn append_on(
        client: &impl GenericClient,
        command_id: Uuid,
        appends: Vec<StreamAppend>,
    ) -> Result<AppendOutcome, AppendError> {
        let prepared = prepare(command_id, &appends)?;
        call(client, &prepared, &appends, Recheck::No).await
    }

    /// Appends many independent commands in one statement, inside the caller's transaction
    /// (group commit): each command is checked and written on its own, so a conflict fails
    /// only that command. The answers come back in the commands' order; the events are
    /// durable once the caller commits.
    ///
    /// Two batches that lock the same streams in different orders could deadlock: callers
    /// sort commands by stream id (as a single committer per instance does). Within a batch,
    /// at most one command per stream can succeed at a given expected version, and a second
    /// copy of a command (same id) answers [`AppendOutcome::AlreadyApplied`] with the first
    /// copy's events.
    pub async fn append_batch_on(
        client: &impl GenericClient,
        commands: &[(Uuid, &[StreamAppend])],
    ) -> Result<Vec<Result<AppendOutcome, AppendError>>, AppendError> {
        let mut prepared = Vec::with_capacity(commands.len());
        let mut answers: Vec<Option<Result<AppendOutcome, AppendError>>> =
            Vec::with_capacity(commands.len());
        for (command_id, appends) in commands {
            match prepare(*command_id, appends) {
                Ok(p) => {
                    prepared.push(Some(p));
                    answers.push(None);
                }
                Err(e) => {
                    prepared.push(None);
                    answers.push(Some(Err(e)));
                }
            }
        }
        let mut batch = Prepared::default();
        let mut command_of: Vec<i32> = Vec::new();
        for (index, p) in prepared.iter().enumerate() {
            let Some(p) = p else { continue };
            let index = i32::try_from(index + 1)
                .map_err(|_| AppendError::Invalid("too many commands in one batch".into()))?;
            command_of.extend(std::iter::repeat_n(index, p.streams.len()));
            batch.extend(p);
        }
        if !command_of.is_empty() {
            let statement = client.prepare_cached(APPEND_BATCH).await?;
            let rows = client
                .query(
                    &statement,
                    &[
                        &command_of,
                        &batch.streams,
                        &batch.expected,
                        &batch.counts,
                        &batch.event_ids,
                        &batch.types,
                        &batch.schema_versions,
                        &batch.data,
                        &batch.actors,
                        &batch.recorded_at,
                        &batch.content,
                    ],
                )
                .await?;
            let mut by_command: Vec<Vec<&tokio_postgres::Row>> = vec![Vec::new(); commands.len()];
            for row in &rows {
                let index: i32 = row.try_get(0)?;
                let slot = usize::try_from(index - 1)
                    .ok()
                    .and_then(|i| by_command.get_mut(i))
                    .ok_or_else(|| {
                        Error::Corrupt(format!("eventlog_append_batch named command {index}"))
                    })?;
                slot.push(row);
            }
            for (index, rows) in by_command.into_iter().enumerate() {
                let Some(p) = &prepared[index] else { continue };
                let status: Option<String> = match rows.first() {
                    Some(row) => row.try_get(1)?,
                    None => None,
                };
                let answer = match status.as_deref() {
                    Some("appended") => {
                        let rows = rows
                            .iter()
                            .map(|r| BatchRow::at(r, 3))
                            .collect::<Result<Vec<_>, Error>>()?;
                        recorded(p, commands[index].1, &rows).map(AppendOutcome::Appended)
                    }
                    Some("applied") => match events_of_command(client, p).await? {
                        Some(events) => Ok(AppendOutcome::AlreadyApplied(events)),
                        None => Err(Error::Corrupt(
                            "eventlog_append_batch found a command applied, but its events are gone"
                                .into(),
                        )
                        .into()),
                    },
                    Some("conflict") => {
                        let detail: Option<String> = rows[0].try_get(2)?;
                        Err(conflict_from_detail(detail.as_deref())?)
                    }
                    Some("retry") => Err(AppendError::Retry),
                    other => Err(Error::Corrupt(format!(
                        "eventlog_append_batch answered {other:?} for command {}",
                        index + 1
                    ))
                    .into()),
                };
                answers[index] = Some(answer);
            }
        }
        answers
            .into_iter()
            .map(|a| {
                a.ok_or_else(|| {
                    Error::Corrupt("eventlog_append_batch left a command unanswered".into()).into()
                })
            })
            .collect()
    }
}

/// What the database answers for an appended event.
struct BatchRow {
    event_id: Uuid,
    position: i64,
    tx: i64,
    version: i64,
    prev_hash: crate::Hash,
    hash: crate::Hash,
}

impl BatchRow {
    /// Reads the columns event_id, position, tx, version, prev_hash, hash from `first` on.
    fn at(row: &tokio_postgres::Row, first: usize) -> Result<BatchRow, Error> {
        Ok(BatchRow {
            event_id: row.try_get(first)?,
            position: row.try_get(first + 1)?,
            tx: row.try_get(first + 2)?,
            version: row.try_get(first + 3)?,
            prev_hash: read::hash_at(row, first + 4)?,
            hash: read::hash_at(row, first + 5)?,
        })
    }
}

impl Prepared {
    /// Appends another command's arguments (a batch is the concatenation of its commands').
    fn extend(&mut self, other: &Prepared) {
        self.streams.extend_from_slice(&other.streams);
        self.expected.extend_from_slice(&other.expected);
        self.counts.extend_from_slice(&other.counts);
        self.event_ids.extend_from_slice(&other.event_ids);
        self.types.extend_from_slice(&other.types);
        self.schema_versions
            .extend_from_slice(&other.schema_versions);
        self.data.extend_from_slice(&other.data);
        self.actors.extend_from_slice(&other.actors);
        self.recorded_at.extend_from_slice(&other.recorded_at);
        self.content.extend_from_slice(&other.content);
    }
}

/// Validates the command and computes its ids and canonical bytes.
pub(crate) fn prepare(command_id: Uuid, appends: &[StreamAppend]) -> Result<Prepared, AppendError> {
    if appends.is_empty() {
        return Err(AppendError::Empty);
    }
    let total: usize = appends.iter().map(|a| a.events.len()).sum();
    let mut p = Prepared {
        streams: Vec::with_capacity(appends.len()),
        expected: Vec::with_capacity(appends.len()),
        counts: Vec::with_capacity(appends.len()),
        event_ids: Vec::with_capacity(total),
        types: Vec::with_capacity(total),
        schema_versions: Vec::with_capacity(total),
        data: Vec::with_capacity(total),
        actors: Vec::with_capacity(total),
        recorded_at: Vec::with_capacity(total),
        content: Vec::with_capacity(total),
    };
    for append in appends {
        let stream = &append.stream;
        if stream.is_empty() || stream.contains('\0') {
            return Err(AppendError::Invalid(format!(
                "stream id {stream:?} must be non-empty text without NUL"
            )));
        }
        if p.streams.contains(stream) {
            return Err(AppendError::DuplicateStream(stream.clone()));
        }
        if append.expected_version < 0 {
            return Err(AppendError::InvalidExpectedVersion {
                stream: stream.clone(),
                expected: append.expected_version,
            });
        }
        if append.events.is_empty() {
            return Err(AppendError::Empty);
        }
        let count = i32::try_from(append.events.len())
            .map_err(|_| AppendError::Invalid("too many events in one append".into()))?;
        for (index, event) in append.events.iter().enumerate() {
            validate(stream, event)?;
            let index = u32::try_from(index)
                .map_err(|_| AppendError::Invalid("too many events in one append".into()))?;
            let event_id = canonical::event_id(command_id, stream, index);
            let recorded_at = canonical::truncate_to_micros(event.recorded_at);
            let mut bytes = Vec::with_capacity(128);
            canonical::event_bytes(
                &EventContent {
                    stream,
                    version: append.expected_version + i64::from(index) + 1,
                    event_id,
                    event_type: &event.event_type,
                    schema_version: event.schema_version,
                    data: &event.data,
                    actor: event.actor,
                    recorded_at,
                },
                &mut bytes,
            );
            p.event_ids.push(event_id);
            p.types.push(event.event_type.clone());
            p.schema_versions.push(event.schema_version);
            p.data.push(event.data.clone());
            p.actors.push(event.actor);
            p.recorded_at.push(recorded_at);
            p.content.push(bytes);
        }
        p.streams.push(stream.clone());
        p.expected.push(append.expected_version);
        p.counts.push(count);
    }
    Ok(p)
}

fn validate(stream: &str, event: &NewEvent) -> Result<(), AppendError> {
    if event.event_type.is_empty() || event.event_type.contains('\0') {
        return Err(AppendError::Invalid(format!(
            "event type {:?} on stream {stream} must be non-empty text without NUL",
            event.event_type
        )));
    }
    if event.schema_version < 1 {
        return Err(AppendError::Invalid(format!(
            "schema version {} of {} must be at least 1",
            event.schema_version, event.event_type
        )));
    }
    if has_nul(&event.data) {
        return Err(AppendError::Invalid(format!(
            "payload of {} on stream {stream} contains a NUL character, which jsonb cannot store",
            event.event_type
        )));
    }
    Ok(())
}

fn has_nul(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(has_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Whether a conflict may be followed by a query on the same client (not inside a caller's
/// transaction, which the conflict has aborted).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Recheck {
    Yes,
    No,
}

/// One call of `eventlog_append`, and the classification of its answer.
async fn call(
    client: &impl GenericClient,
    p: &Prepared,
    appends: &[StreamAppend],
    recheck: Recheck,
) -> Result<AppendOutcome, AppendError> {
    let statement = client.prepare_cached(APPEND).await?;
    let result = client
        .query(
            &statement,
            &[
                &p.streams,
                &p.expected,
                &p.counts,
                &p.event_ids,
                &p.types,
                &p.schema_versions,
                &p.data,
                &p.actors,
                &p.recorded_at,
                &p.content,
            ],
        )
        .await;
    let rows = match result {
        Ok(rows) if rows.is_empty() => {
            // The function found the command's events: answer with what it wrote.
            return match events_of_command(client, p).await? {
                Some(events) => Ok(AppendOutcome::AlreadyApplied(events)),
                None => Err(Error::Corrupt(
                    "eventlog_append found the command applied, but its events are gone".into(),
                )
                .into()),
            };
        }
        Ok(rows) => rows,
        Err(e) if e.code().map(SqlState::code) == Some(CONFLICT) => {
            let conflict = parse_conflict(&e)?;
            if recheck == Recheck::No {
                return Err(conflict);
            }
            // A twin of this command may have won the race: then the answer is its outcome.
            return match events_of_command(client, p).await? {
                Some(events) => Ok(AppendOutcome::AlreadyApplied(events)),
                None => Err(conflict),
            };
        }
        Err(e) => return Err(e.into()),
    };
    let rows = rows
        .iter()
        .map(|r| BatchRow::at(r, 0))
        .collect::<Result<Vec<_>, Error>>()?;
    recorded(p, appends, &rows).map(AppendOutcome::Appended)
}

/// The command's events as written, in the caller's order, matching rows by event id
/// (RETURNING's order is not promised by PostgreSQL).
fn recorded(
    p: &Prepared,
    appends: &[StreamAppend],
    rows: &[BatchRow],
) -> Result<Vec<RecordedEvent>, AppendError> {
    if rows.len() != p.event_ids.len() {
        return Err(Error::Corrupt(format!(
            "eventlog_append wrote {} rows for {} events",
            rows.len(),
            p.event_ids.len()
        ))
        .into());
    }
    let new_events = appends
        .iter()
        .flat_map(|a| a.events.iter().map(move |e| (a.stream.as_str(), e)));
    let mut events = Vec::with_capacity(rows.len());
    for (((stream, event), event_id), recorded_at) in
        new_events.zip(&p.event_ids).zip(&p.recorded_at)
    {
        let row = rows
            .iter()
            .find(|r| r.event_id == *event_id)
            .ok_or_else(|| {
                Error::Corrupt(format!("eventlog_append did not return event {event_id}"))
            })?;
        events.push(RecordedEvent {
            position: row.position,
            tx: row.tx,
            stream: stream.to_owned(),
            version: row.version,
            event_id: *event_id,
            event_type: event.event_type.clone(),
            schema_version: event.schema_version,
            data: event.data.clone(),
            actor: event.actor,
            recorded_at: *recorded_at,
            prev_hash: row.prev_hash,
            hash: row.hash,
        });
    }
    Ok(events)
}

/// The events written by the transaction that stored any of the command's event ids, in
/// position order; `None` if the command has not been applied.
pub(crate) async fn events_of_command(
    client: &impl GenericClient,
    p: &Prepared,
) -> Result<Option<Vec<RecordedEvent>>, AppendError> {
    let statement = client.prepare_cached(EVENTS_OF_COMMAND).await?;
    let rows = client
        .query(&statement, &[&p.event_ids, &p.streams])
        .await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let events = rows
        .iter()
        .map(read::event_from_row)
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(Some(events))
}

fn parse_conflict(e: &tokio_postgres::Error) -> Result<AppendError, AppendError> {
    let detail = e.as_db_error().and_then(|db| db.detail());
    conflict_from_detail(detail).map_err(|_| {
        AppendError::Store(Error::Corrupt(format!(
            "version conflict without a readable detail: {}",
            database::chain(e)
        )))
    })
}

/// The conflict named by the JSON detail `eventlog_append` raises with.
fn conflict_from_detail(detail: Option<&str>) -> Result<AppendError, AppendError> {
    #[derive(serde::Deserialize)]
    struct Detail {
        stream: String,
        expected: i64,
        actual: i64,
    }
    let detail = detail
        .and_then(|d| serde_json::from_str::<Detail>(d).ok())
        .ok_or_else(|| {
            AppendError::Store(Error::Corrupt(format!(
                "version conflict without a readable detail: {detail:?}"
            )))
        })?;
    Ok(AppendError::Conflict {
        stream: detail.stream,
        expected: detail.expected,
        actual: detail.actual,
    })
}
