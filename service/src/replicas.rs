//! Reads from replicas (`DATABASE_READ_URL`): a pool per standby, which standbys are in the
//! rotation (a poller measures each one's replay lag behind the primary, in time and in WAL
//! bytes), and the rules that keep a read from a replica as fresh as the same read from the
//! primary: a finished match is read where the replica holds its end, a projection's tables
//! where the replica's checkpoint of that projection has reached the primary's.
//!
//! # Why a checkpoint, not the caller's WAL position
//! GitLab's way keeps the position of a caller's last write and reads a replica past it. It needs
//! that position on whichever instance serves the read (one more write or one more primary read
//! per call here), and it is not the right bar for a projection: a move's commit comes before the
//! projection's commit that puts the match in the history, so a standby past the move's LSN may
//! still lack the history row the primary shows. The projection's checkpoint is the position the
//! read's data was projected to; it is read on the primary and on the standby at once (a one-row
//! lookup each), and the read starts after that check on the same server, so its snapshot holds
//! all the check saw. Any failure sends the read to the primary.
//!
//! # The rotation
//! A poller measures every standby each `DISCS_REPLICA_POLL_MS`: replay lag in time
//! (`now() - pg_last_xact_replay_timestamp()`, zero while everything received is replayed) and
//! in bytes (the primary's WAL position less the standby's replay position). Beyond
//! `DISCS_REPLICA_MAX_LAG_MS` or `DISCS_REPLICA_MAX_LAG_BYTES`, not in recovery (promoted) or
//! down, a standby leaves the rotation until a measurement finds it within them again; a read that
//! cannot reach it takes it out at once. Reads go round robin over the standbys in the rotation.
//! What stays on the primary: every write, the live match (its view, commands and stream), the
//! fair-play guard (it reads live ranked positions), analysis jobs and profiles (one-row reads).
//! Tested against a real streaming standby whose apply is held back an hour
//! (`recovery_min_apply_delay`, `tests/it/replicas.rs`); measured by `bench/replica-reads.sh`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use deadpool_postgres::Pool;
use eventlog::{EventLog, RecordedEvent};
use projections::Projection;
use tokio::sync::watch;

use crate::config::ReplicaConfig;
use crate::error::Error;

/// How far a replica may lag and stay in the rotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LagLimits {
    /// Milliseconds between now and the last transaction replayed, while WAL is left to replay.
    pub millis: u64,
    /// Bytes of WAL between the primary's position and the replica's replay.
    pub bytes: u64,
}

/// What one measurement of a server listed as a replica found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// It did not answer.
    Down,
    /// It is not in recovery: a primary (a promoted standby, or a wrong URL).
    NotStandby,
    /// A standby, lagging by `millis` and (when the primary answered) `bytes`.
    Standby { millis: u64, bytes: Option<u64> },
}

impl Probe {
    /// Whether a replica so measured serves reads: a standby within both limits (a byte lag
    /// unknown because the primary is out of reach is judged by time alone).
    pub fn in_rotation(self, limits: LagLimits) -> bool {
        match self {
            Probe::Down | Probe::NotStandby => false,
            Probe::Standby { millis, bytes } => {
                millis <= limits.millis && bytes.is_none_or(|b| b <= limits.bytes)
            }
        }
    }
}

/// Where a read that could go to a replica went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// A replica answered it.
    Replica,
    /// The primary, because the replica's copy was behind (its projection's checkpoint short of
    /// the primary's, or the match not finished there).
    Behind,
    /// The primary, because no replica was in the rotation.
    NoReplica,
    /// The primary, because the replica's read failed (a replica out of reach then leaves
    /// the rotation until its next measurement).
    Failed,
}

impl Route {
    pub const ALL: [Route; 4] = [
        Route::Replica,
        Route::Behind,
        Route::NoReplica,
        Route::Failed,
    ];

    /// The `route` label in `/metrics`.
    pub fn label(self) -> &'static str {
        match self {
            Route::Replica => "replica",
            Route::Behind => "primary_replica_behind",
            Route::NoReplica => "primary_no_replica",
            Route::Failed => "primary_replica_failed",
        }
    }
}

/// One standby.
pub struct Replica {
    /// `host:port`, as `/metrics` labels it.
    pub name: String,
    log: EventLog,
    in_rotation: AtomicBool,
    /// The last measured lag (-1: unknown).
    lag_millis: AtomicI64,
    lag_bytes: AtomicI64,
}

impl Replica {
    /// The replica's log (its pool is the log's).
    pub fn log(&self) -> &EventLog {
        &self.log
    }

    pub fn in_rotation(&self) -> bool {
        self.in_rotation.load(Ordering::Relaxed)
    }

    /// The last measured lag: milliseconds and bytes, when known.
    pub fn lag(&self) -> (Option<u64>, Option<u64>) {
        let known = |v: i64| u64::try_from(v).ok();
        (
            known(self.lag_millis.load(Ordering::Relaxed)),
            known(self.lag_bytes.load(Ordering::Relaxed)),
        )
    }

    fn record(&self, probe: Probe, limits: LagLimits) {
        let (millis, bytes) = match probe {
            Probe::Standby { millis, bytes } => (
                millis as i64,
                bytes.map_or(-1, |b| i64::try_from(b).unwrap_or(i64::MAX)),
            ),
            Probe::Down | Probe::NotStandby => (-1, -1),
        };
        self.lag_millis.store(millis, Ordering::Relaxed);
        self.lag_bytes.store(bytes, Ordering::Relaxed);
        let now = probe.in_rotation(limits);
        if self.in_rotation.swap(now, Ordering::Relaxed) != now {
            tracing::info!(replica = %self.name, ?probe, in_rotation = now, "replica rotation");
        }
    }

    /// Takes the replica out of the rotation until its next measurement says otherwise.
    fn leave(&self) {
        self.in_rotation.store(false, Ordering::Relaxed);
    }

    /// Measures the replica against the primary's WAL position `primary_lsn` (if known).
    async fn probe(&self, primary_lsn: Option<&str>) -> Probe {
        let Ok(client) = self.log.pool().get().await else {
            return Probe::Down;
        };
        // The time lag counts only while WAL is left to replay: an idle standby that has
        // replayed all it received is not late, however old its last transaction.
        let row = client
            .query_one(
                "SELECT pg_is_in_recovery(),
                        CASE WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn()
                             THEN 0
                             ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000, 0)
                        END::bigint,
                        greatest(pg_wal_lsn_diff($1::text::pg_lsn, pg_last_wal_replay_lsn()), 0)::bigint",
                &[&primary_lsn],
            )
            .await;
        match row {
            Err(_) => Probe::Down,
            Ok(row) if !row.get::<_, bool>(0) => Probe::NotStandby,
            Ok(row) => Probe::Standby {
                millis: row.get::<_, i64>(1).max(0) as u64,
                bytes: row.get::<_, Option<i64>>(2).map(|b| b.max(0) as u64),
            },
        }
    }
}

/// The standbys of `DATABASE_READ_URL` and where reads went.
pub struct Replicas {
    nodes: Vec<Replica>,
    limits: LagLimits,
    poll: Duration,
    next: AtomicUsize,
    routes: [AtomicU64; Route::ALL.len()],
}

impl Replicas {
    /// The replicas `config` names, none of them in the rotation until measured; `None`
    /// without any (every read goes to the primary, as before). Opens no connection.
    pub fn from_config(config: &ReplicaConfig) -> Result<Option<Replicas>, database::Error> {
        let nodes = config
            .urls()
            .map(|url| {
                let mut settings = database::settings(url)?;
                // A standby that died must not hold a read long: the primary answers instead.
                settings.connect_timeout(Duration::from_secs(1));
                let name = settings
                    .get_hosts()
                    .iter()
                    .zip(settings.get_ports())
                    .map(|(h, p)| match h {
                        tokio_postgres::config::Host::Tcp(h) => format!("{h}:{p}"),
                        tokio_postgres::config::Host::Unix(h) => format!("{}:{p}", h.display()),
                    })
                    .collect::<Vec<_>>()
                    .join(",");
                Ok(Replica {
                    name,
                    log: EventLog::new(database::pool(settings, config.replica_pool_size)?),
                    in_rotation: AtomicBool::new(false),
                    lag_millis: AtomicI64::new(-1),
                    lag_bytes: AtomicI64::new(-1),
                })
            })
            .collect::<Result<Vec<_>, database::Error>>()?;
        if nodes.is_empty() {
            return Ok(None);
        }
        Ok(Some(Replicas {
            nodes,
            limits: LagLimits {
                millis: config.replica_max_lag_ms,
                bytes: config.replica_max_lag_bytes,
            },
            poll: Duration::from_millis(config.replica_poll_ms),
            next: AtomicUsize::new(0),
            routes: Default::default(),
        }))
    }

    pub fn nodes(&self) -> &[Replica] {
        &self.nodes
    }

    /// Reads that went by `route` on this instance.
    pub fn routed(&self, route: Route) -> u64 {
        self.routes[route as usize].load(Ordering::Relaxed)
    }

    fn count(&self, route: Route) {
        self.routes[route as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// The next replica in the rotation, round robin.
    fn pick(&self) -> Option<&Replica> {
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        (0..self.nodes.len())
            .map(|i| &self.nodes[(start + i) % self.nodes.len()])
            .find(|n| n.in_rotation())
    }

    /// Measures every replica once against the primary (`primary`'s pool) and sets the
    /// rotation by the limits.
    pub async fn measure(&self, primary: &Pool) {
        let primary_lsn: Option<String> = match primary.get().await {
            Ok(c) => c
                .query_one("SELECT pg_current_wal_lsn()::text", &[])
                .await
                .ok()
                .map(|r| r.get(0)),
            Err(_) => None,
        };
        for node in &self.nodes {
            let probe = node.probe(primary_lsn.as_deref()).await;
            node.record(probe, self.limits);
        }
    }

    /// Measures the replicas every `DISCS_REPLICA_POLL_MS` until the instance stops.
    pub async fn follow(self: Arc<Self>, primary: Pool, mut stopping: watch::Receiver<bool>) {
        loop {
            self.measure(&primary).await;
            tokio::select! {
                _ = tokio::time::sleep(self.poll) => {}
                _ = stopping.wait_for(|s| *s) => return,
            }
        }
    }

    /// Runs `read` on a replica in the rotation whose checkpoint of `projection` and closed
    /// accounts have reached the primary's (so it shows at least what the primary would), else
    /// on the primary. The check and the read run on one replica connection, the read after the
    /// check: its snapshot holds all the check saw. Any failure on the replica sends the read to the
    /// primary.
    pub async fn read<T>(
        &self,
        primary: &EventLog,
        projection: Projection,
        read: impl AsyncFn(&EventLog) -> Result<T, Error>,
    ) -> Result<T, Error> {
        if let Some(node) = self.caught_up(primary, projection).await {
            match read(&node.log).await {
                Ok(answer) => {
                    self.count(Route::Replica);
                    return Ok(answer);
                }
                Err(e) => self.failed(node, &e),
            }
        }
        read(primary).await
    }

    /// A replica in the rotation whose checkpoint of `projection` and count of closed accounts
    /// are at least the primary's.
    async fn caught_up(&self, primary: &EventLog, projection: Projection) -> Option<&Replica> {
        let Some(node) = self.pick() else {
            self.count(Route::NoReplica);
            return None;
        };
        let (ours, theirs) = tokio::join!(
            checkpoint(primary, projection),
            checkpoint(&node.log, projection)
        );
        match (ours, theirs) {
            (Ok(ours), Ok(theirs)) if theirs.holds(&ours) => Some(node),
            (Ok(_), Ok(_)) => {
                self.count(Route::Behind);
                None
            }
            // The primary out of reach: its own read will say so.
            (Err(_), Ok(_)) => None,
            (_, Err(e)) => {
                self.failed(node, &e);
                None
            }
        }
    }

    /// The events of a match and what `finished` makes of them, if a replica in the rotation
    /// holds the stream up to the match's end (`finished` answers `Some`): a finished match's
    /// stream never grows, so the replica's copy is the whole of it. `None` sends the read to
    /// the primary.
    pub async fn finished_stream<U>(
        &self,
        stream: &str,
        finished: impl Fn(&[RecordedEvent]) -> Option<U>,
    ) -> Option<(Vec<RecordedEvent>, U)> {
        let Some(node) = self.pick() else {
            self.count(Route::NoReplica);
            return None;
        };
        match node.log.read_stream(stream).await {
            Ok(events) => match finished(&events) {
                Some(folded) => {
                    self.count(Route::Replica);
                    Some((events, folded))
                }
                None => {
                    self.count(Route::Behind);
                    None
                }
            },
            Err(e) => {
                self.failed(node, &crate::error::unexpected(e));
                None
            }
        }
    }

    /// A read on `node` failed: the primary answers it. A replica out of reach leaves the
    /// rotation; any other failure (a row not there yet, a query cancelled by a conflict with
    /// recovery) leaves it in.
    fn failed(&self, node: &Replica, e: &Error) {
        match e {
            Error::Unavailable(_) => {
                self.count(Route::Failed);
                tracing::warn!(replica = %node.name, error = %e, "a replica is out of reach: the primary answers");
                node.leave();
            }
            Error::Unexpected(_) => {
                self.count(Route::Failed);
                tracing::warn!(replica = %node.name, error = %e, "a read on a replica failed: the primary answers");
            }
            _ => self.count(Route::Behind),
        }
    }
}

/// Where a copy of the database stands for a read of a projection.
struct Stand {
    /// The projection's checkpoint, `(tx, position)` in the log's order.
    checkpoint: (i64, i64),
    /// How many accounts are closed: a closing writes no event, yet a read must not show a
    /// name the primary has erased. The count only grows (a closed account never opens again),
    /// so a copy that counts as many holds every closing the primary does.
    closings: i64,
}

impl Stand {
    /// Whether a copy standing here shows at least what one standing at `primary` does.
    fn holds(&self, primary: &Stand) -> bool {
        self.checkpoint >= primary.checkpoint && self.closings >= primary.closings
    }
}

/// Where the copy behind `log` stands for a read of `projection`.
async fn checkpoint(log: &EventLog, projection: Projection) -> Result<Stand, Error> {
    let client = log.pool().get().await.map_err(crate::error::unexpected)?;
    let checkpoint = projections::queries::position_of(&client, projection)
        .await
        .map_err(crate::error::unexpected)?;
    let closings = client
        .query_one(
            "SELECT count(*) FROM players WHERE closed_at IS NOT NULL",
            &[],
        )
        .await
        .map_err(crate::error::unexpected)?;
    Ok(Stand {
        checkpoint,
        closings: closings.get(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: LagLimits = LagLimits {
        millis: 1_000,
        bytes: 4_096,
    };

    #[test]
    fn a_standby_serves_within_both_limits_only() {
        let standby = |millis, bytes| Probe::Standby { millis, bytes };
        assert!(standby(0, Some(0)).in_rotation(LIMITS));
        assert!(standby(1_000, Some(4_096)).in_rotation(LIMITS));
        assert!(!standby(1_001, Some(0)).in_rotation(LIMITS));
        assert!(!standby(0, Some(4_097)).in_rotation(LIMITS));
        // The primary out of reach: the byte lag is unknown, time decides.
        assert!(standby(10, None).in_rotation(LIMITS));
        assert!(!standby(5_000, None).in_rotation(LIMITS));
    }

    #[test]
    fn a_server_down_or_not_in_recovery_serves_nothing() {
        assert!(!Probe::Down.in_rotation(LIMITS));
        assert!(!Probe::NotStandby.in_rotation(LIMITS));
    }
}
