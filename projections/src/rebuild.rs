//! Rebuilds: a projection is built again from position 0 into a schema beside the live tables
//! (`discs_rebuild`), then swapped in when it has caught up, in one transaction that holds the
//! live checkpoint, so readers see either the old tables or the new, never a half.

use std::time::Instant;

use eventlog::Checkpoint;
use uuid::Uuid;

use crate::runner::Runner;
use crate::{Error, Projection, tables};

const SHADOW: &str = "discs_rebuild";
const RETIRED: &str = "discs_retired";

/// How far a rebuild is, for progress bars and the admin API.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Events applied so far.
    pub events: u64,
    /// Position of the last event applied, and of the last event of the log when it started.
    pub position: i64,
    pub last_position: i64,
    /// Events per second so far.
    pub rate: f64,
}

impl Progress {
    fn now(events: u64, at: Checkpoint, last_position: i64, started: Instant) -> Progress {
        Progress {
            events,
            position: at.position,
            last_position,
            rate: events as f64 / started.elapsed().as_secs_f64().max(1e-9),
        }
    }
}

/// Rebuilds `p` from position 0 and swaps it in; calls `progress` after every batch. Returns the
/// events applied. Refuses to run while another rebuild of the same projection runs.
pub async fn rebuild(
    runner: &Runner,
    p: Projection,
    rebuild_id: Uuid,
    mut progress: impl FnMut(Progress),
) -> Result<u64, Error> {
    let pool = runner.log().pool().clone();
    // One rebuild of a projection at a time, across instances.
    let guard = pool.get().await?;
    let held: bool = guard
        .query_one("SELECT pg_try_advisory_lock($1)", &[&(p.lock_key() + 64)])
        .await?
        .get(0);
    if !held {
        return Err(Error::Event {
            position: 0,
            reason: format!("a rebuild of {p} is already running"),
        });
    }
    let result = run(runner, p, rebuild_id, &mut progress).await;
    let _ = guard
        .query("SELECT pg_advisory_unlock($1)", &[&(p.lock_key() + 64)])
        .await;
    let client = pool.get().await?;
    let (status, error) = match &result {
        Ok(_) => ("done", None),
        Err(e) => ("failed", Some(e.to_string())),
    };
    client
        .execute(
            "UPDATE projection_rebuilds SET status = $2, error = $3, finished_at = now() \
             WHERE rebuild_id = $1",
            &[&rebuild_id, &status, &error],
        )
        .await?;
    result
}

/// Records a rebuild as running (the admin API answers with its id at once).
pub async fn register(runner: &Runner, p: Projection) -> Result<Uuid, Error> {
    let id = Uuid::now_v7();
    let client = runner.log().pool().get().await?;
    client
        .execute(
            "INSERT INTO projection_rebuilds (rebuild_id, name, status, events, started_at) \
             VALUES ($1, $2, 'running', 0, now())",
            &[&id, &p.name()],
        )
        .await?;
    Ok(id)
}

async fn run(
    runner: &Runner,
    p: Projection,
    rebuild_id: Uuid,
    progress: &mut impl FnMut(Progress),
) -> Result<u64, Error> {
    let pool = runner.log().pool().clone();
    let started = Instant::now();
    {
        let client = pool.get().await?;
        let mut ddl =
            format!("CREATE SCHEMA IF NOT EXISTS {SHADOW}; CREATE SCHEMA IF NOT EXISTS {RETIRED};");
        for t in p.tables() {
            ddl.push_str(&format!(
                "DROP TABLE IF EXISTS {SHADOW}.{t}; \
                 CREATE TABLE {SHADOW}.{t} (LIKE public.{t} INCLUDING ALL);"
            ));
        }
        client.batch_execute(&ddl).await?;
    }
    let last_position = eventlog::last_position(&pool.get().await?).await?;
    // Everything committed before the rebuild started is in it, whatever holds the horizon back.
    let target = runner.last_committed(p).await?.unwrap_or(Checkpoint::START);
    let mut checkpoint = Checkpoint::START;
    let mut applied = 0u64;
    let batch = 5000;
    // Folds of its own: the live runner's describe the live tables, not these.
    let folds = crate::tournaments::Folds::default();
    loop {
        let events = runner
            .log()
            .read_types_after(checkpoint, p.event_types(), batch)
            .await?;
        let behind = events.len() as i64 == batch || {
            let next = events.last().map_or(checkpoint, |e| e.checkpoint());
            next < target
        };
        let mut client = pool.get().await?;
        let tx = client.transaction().await?;
        tx.batch_execute(&format!("SET LOCAL search_path TO {SHADOW}, public"))
            .await?;
        if !events.is_empty() {
            tables::apply(&tx, p, &events, runner.explorer_plies(), &folds).await?;
            applied += events.len() as u64;
            if let Some(last) = events.last() {
                checkpoint = last.checkpoint();
            }
        }
        if behind {
            if events.is_empty() {
                // The horizon has not reached the target yet: a transaction still runs.
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            tx.execute(
                "UPDATE public.projection_rebuilds SET events = $2 WHERE rebuild_id = $1",
                &[&rebuild_id, &(applied as i64)],
            )
            .await?;
            tx.commit().await?;
            progress(Progress::now(applied, checkpoint, last_position, started));
            continue;
        }
        // Caught up: hold the live checkpoint (the live runner waits), apply what came in
        // meanwhile, and swap the tables.
        tx.query_one(
            "SELECT 1 FROM public.projection_checkpoints WHERE name = $1 FOR UPDATE",
            &[&p.name()],
        )
        .await?;
        loop {
            let late = runner
                .log()
                .read_types_after(checkpoint, p.event_types(), batch)
                .await?;
            let Some(last) = late.last() else { break };
            checkpoint = last.checkpoint();
            tables::apply(&tx, p, &late, runner.explorer_plies(), &folds).await?;
            applied += late.len() as u64;
        }
        let mut swap = String::from("SET LOCAL search_path TO public;");
        for t in p.tables() {
            swap.push_str(&format!(
                "ALTER TABLE public.{t} SET SCHEMA {RETIRED}; \
                 ALTER TABLE {SHADOW}.{t} SET SCHEMA public; \
                 DROP TABLE {RETIRED}.{t};"
            ));
        }
        tx.batch_execute(&swap).await?;
        let total = applied as i64;
        tx.execute(
            "UPDATE projection_checkpoints SET tx = $2, position = $3, events = $4, \
             updated_at = now() WHERE name = $1",
            &[&p.name(), &checkpoint.tx, &checkpoint.position, &total],
        )
        .await?;
        tx.execute(
            "UPDATE projection_rebuilds SET events = $2 WHERE rebuild_id = $1",
            &[&rebuild_id, &total],
        )
        .await?;
        tx.commit().await?;
        progress(Progress::now(applied, checkpoint, last_position, started));
        return Ok(applied);
    }
}
