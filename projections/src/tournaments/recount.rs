//! The tournaments' audit: every tournament's standings recounted from the log and diffed
//! against the projection, line by line.

use std::collections::HashMap;

use uuid::Uuid;

use domain::ids::TournamentId;
use domain::tournaments::standings::standings;
use domain::tournaments::{Tournament, TournamentEvent};
use eventlog::RecordedEvent;

use super::tables::entrant_status_name;
use crate::Error;
use crate::fold::fold;

/// What a recount of the tournaments from the log found against the projection.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TournamentsAudit {
    /// Tournaments recounted.
    pub tournaments: u64,
    /// Standing lines compared.
    pub lines_checked: u64,
    pub events_scanned: u64,
    /// Tournaments the projection has not reached yet (created since its checkpoint).
    pub not_projected_yet: u64,
    /// Each line (or tournament row) the projection holds otherwise than the recount, in words.
    pub mismatches: Vec<String>,
}

/// Recounts every tournament's standings from the log, each at the version its projected row
/// has read (so a projection behind the log is not a mismatch), and diffs them against
/// `tournament_standings` line by line.
pub async fn audit(log: &eventlog::EventLog) -> Result<TournamentsAudit, Error> {
    let mut streams: HashMap<String, Vec<RecordedEvent>> = HashMap::new();
    let mut checkpoint = eventlog::Checkpoint::START;
    let mut report = TournamentsAudit::default();
    loop {
        let events = log
            .read_types_after(checkpoint, &TournamentEvent::TYPES, 10_000)
            .await?;
        let Some(last) = events.last() else { break };
        checkpoint = last.checkpoint();
        report.events_scanned += events.len() as u64;
        for e in events {
            streams.entry(e.stream.clone()).or_default().push(e);
        }
    }
    let mut client = log.pool().get().await?;
    let mut ids: Vec<&String> = streams.keys().collect();
    ids.sort();
    for stream in ids {
        let Some(id) = TournamentId::of_stream(stream) else {
            continue;
        };
        report.tournaments += 1;
        // The row's version and its lines from one snapshot: the projection may move on
        // meanwhile, and is then recounted at the version it had.
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let version: Option<i64> = tx
            .query_opt(
                "SELECT version FROM tournaments WHERE tournament_id = $1",
                &[&id.as_uuid()],
            )
            .await?
            .map(|r| r.get(0));
        let Some(version) = version else {
            // Created after the projection's checkpoint: nothing projected to compare yet.
            report.not_projected_yet += 1;
            continue;
        };
        let rows = tx
            .query(
                "SELECT player_id, rank, score, games, wins, draws, losses, streak, on_fire, \
                        buchholz, sonneborn_berger, performance, status \
                   FROM tournament_standings WHERE tournament_id = $1",
                &[&id.as_uuid()],
            )
            .await?;
        tx.commit().await?;
        let read = &streams[stream];
        let later;
        let events = if read.last().is_some_and(|e| e.version >= version) {
            read
        } else {
            later = log.read_stream(stream).await?;
            &later
        };
        let upto: Vec<&RecordedEvent> = events.iter().filter(|e| e.version <= version).collect();
        let Some(t) = fold::<Tournament>(None, &upto)? else {
            continue;
        };
        let mut stored: HashMap<Uuid, String> = rows
            .iter()
            .map(|r| {
                let n = |i: usize| r.get::<_, i32>(i);
                let line = format!(
                    "rank {} score {} games {} {}-{}-{} streak {} fire {} buchholz {} sb {} \
                     performance {} {}",
                    n(1),
                    n(2),
                    n(3),
                    n(4),
                    n(5),
                    n(6),
                    n(7),
                    r.get::<_, bool>(8),
                    n(9),
                    n(10),
                    r.get::<_, f64>(11),
                    r.get::<_, String>(12)
                );
                (r.get(0), line)
            })
            .collect();
        for l in standings(&t) {
            report.lines_checked += 1;
            let recount = format!(
                "rank {} score {} games {} {}-{}-{} streak {} fire {} buchholz {} sb {} \
                 performance {} {}",
                l.rank,
                l.score,
                l.games,
                l.wins,
                l.draws,
                l.losses,
                l.streak,
                l.on_fire,
                l.buchholz,
                l.sonneborn_berger,
                l.performance,
                entrant_status_name(l.status)
            );
            match stored.remove(&l.player_id.as_uuid()) {
                Some(line) if line == recount => {}
                Some(line) => report.mismatches.push(format!(
                    "{id}, player {}: projected `{line}`, recounted `{recount}`",
                    l.player_id
                )),
                None => report.mismatches.push(format!(
                    "{id}, player {}: no projected line, recounted `{recount}`",
                    l.player_id
                )),
            }
        }
        for (player, line) in stored {
            report.mismatches.push(format!(
                "{id}, player {player}: projected `{line}`, not in the recount"
            ));
        }
    }
    Ok(report)
}
