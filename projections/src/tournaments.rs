//! The tournaments projection: each tournament's row (`tournaments`), its standings with every
//! tie-break (`tournament_standings`) and its pairings and byes (`tournament_pairings`), folded
//! from the tournament streams with the domain's own `Tournament` and `standings`, so that what
//! a page shows is what the organiser decides on and what the audit recounts.
//!
//! Standings depend on every game of a tournament, so a batch that touches one refolds it: from
//! the fold this runner kept at the version just before the batch ([`Folds`]), else from its
//! stream read in the batch's transaction up to the batch's last event. The fold is of the log
//! alone, so keeping it across a rolled-back batch is harmless. Every line is written with an
//! upsert that skips rows that did not change.

use std::collections::HashMap;
use std::sync::Mutex;

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::ids::TournamentId;
use domain::tournaments::standings::{Line, standings};
use domain::tournaments::{EntrantStatus, Format, Tournament, TournamentEvent, evolve};
use eventlog::RecordedEvent;

use crate::Error;

/// The folds a runner keeps, by stream, at the version of the last batch it applied, with the
/// standing lines that batch wrote (a later batch writes only the lines that changed).
#[derive(Debug, Default)]
pub struct Folds(Mutex<HashMap<String, Kept>>);

#[derive(Debug)]
struct Kept {
    t: Tournament,
    lines: HashMap<Uuid, Line>,
}

impl Folds {
    /// The fold at `version`, if kept; a batch that starts anywhere else (a retry after a
    /// rollback, a rebuild) refolds from the log and writes every line.
    fn take(&self, stream: &str, version: u64) -> Option<Kept> {
        let mut folds = self.0.lock().unwrap_or_else(|p| p.into_inner());
        folds.remove(stream).filter(|k| k.t.version == version)
    }

    fn keep(&self, stream: String, kept: Kept) {
        let mut folds = self.0.lock().unwrap_or_else(|p| p.into_inner());
        folds.insert(stream, kept);
    }
}

/// Decodes a stored tournament event.
pub fn decode(e: &RecordedEvent) -> Result<TournamentEvent, Error> {
    TournamentEvent::decode(&e.event_type, e.schema_version, &e.data).map_err(|reason| {
        Error::Event {
            position: e.position,
            reason,
        }
    })
}

/// Folds `events` (a stream's, in version order) onto `state`.
pub fn fold_onto(
    mut state: Option<Tournament>,
    events: &[&RecordedEvent],
) -> Result<Option<Tournament>, Error> {
    for e in events {
        state = evolve(state, e.recorded_at, &decode(e)?);
    }
    Ok(state)
}

/// Where a tournament is in its life, as the table stores it (`upcoming` covers scheduled and
/// open, which depend on the reader's clock).
pub fn state_of(t: &Tournament) -> &'static str {
    if t.cancelled {
        "cancelled"
    } else if t.finished {
        "finished"
    } else if t.started_at.is_some() {
        "running"
    } else {
        "upcoming"
    }
}

pub fn format_name(f: Format) -> &'static str {
    match f {
        Format::Arena => "arena",
        Format::Swiss => "swiss",
        Format::RoundRobin => "round_robin",
    }
}

pub fn entrant_status_name(s: EntrantStatus) -> &'static str {
    match s {
        EntrantStatus::Joined => "joined",
        EntrantStatus::Paused => "paused",
        EntrantStatus::Withdrawn => "withdrawn",
        EntrantStatus::Removed => "removed",
    }
}

/// Applies a batch of tournament events.
pub async fn apply(
    client: &impl GenericClient,
    events: &[RecordedEvent],
    folds: &Folds,
) -> Result<(), Error> {
    let mut streams: Vec<&str> = Vec::new();
    let mut by_stream: HashMap<&str, Vec<&RecordedEvent>> = HashMap::new();
    for e in events {
        let mine = by_stream.entry(e.stream.as_str()).or_default();
        if mine.is_empty() {
            streams.push(&e.stream);
        }
        mine.push(e);
    }
    for stream in streams {
        let mine = &by_stream[stream];
        let first = mine[0].version;
        let last = mine[mine.len() - 1].version;
        let kept = folds.take(stream, (first - 1) as u64);
        let (before, written) = match kept {
            Some(k) => (Some(k.t), Some(k.lines)),
            None if first == 1 => (None, None),
            None => {
                let earlier = eventlog::stream_events(client, stream, 0, first - 1).await?;
                (fold_onto(None, &earlier.iter().collect::<Vec<_>>())?, None)
            }
        };
        let Some(t) = fold_onto(before, mine)? else {
            continue;
        };
        let id = TournamentId::of_stream(stream)
            .map(|t| t.as_uuid())
            .ok_or_else(|| Error::Event {
                position: mine[0].position,
                reason: format!("`{stream}` is not a tournament stream"),
            })?;
        debug_assert_eq!(t.version, last as u64);
        let lines: HashMap<Uuid, Line> = standings(&t)
            .into_iter()
            .map(|l| (l.player_id.as_uuid(), l))
            .collect();
        write_tournament(client, id, &t).await?;
        write_standings(client, id, &lines, written.as_ref()).await?;
        write_pairings(client, id, mine).await?;
        folds.keep(stream.to_owned(), Kept { t, lines });
    }
    Ok(())
}

async fn write_tournament(
    client: &impl GenericClient,
    id: Uuid,
    t: &Tournament,
) -> Result<(), Error> {
    let c = &t.created;
    let players = t
        .entrants
        .iter()
        .filter(|e| matches!(e.status, EntrantStatus::Joined | EntrantStatus::Paused))
        .count() as i32;
    client
        .execute(
            "INSERT INTO tournaments (tournament_id, game, format, name, state, starts_at, \
                 ends_at, rounds, round, rated, private, turn_seconds, created_by, players, \
                 max_players, version) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) \
             ON CONFLICT (tournament_id) DO UPDATE SET state = EXCLUDED.state, \
                 rounds = EXCLUDED.rounds, round = EXCLUDED.round, players = EXCLUDED.players, \
                 version = EXCLUDED.version",
            &[
                &id,
                &c.game.as_str(),
                &format_name(c.format),
                &c.name,
                &state_of(t),
                &c.starts_at,
                &t.ends_at(),
                &(t.rounds() as i32),
                &(t.round as i32),
                &c.rated,
                &c.private,
                &domain::matches::TurnSeconds::code(c.turn_seconds),
                &c.created_by.as_uuid(),
                &players,
                &(c.max_players as i32),
                &(t.version as i64),
            ],
        )
        .await?;
    Ok(())
}

/// Writes the lines that differ from `written` (the lines as the table holds them, when known),
/// and deletes the lines of players who have none any more (a removal); without `written`,
/// upserts every line, skipping the rows that did not change.
async fn write_standings(
    client: &impl GenericClient,
    id: Uuid,
    all: &HashMap<Uuid, Line>,
    written: Option<&HashMap<Uuid, Line>>,
) -> Result<(), Error> {
    let gone: Vec<Uuid> = match written {
        Some(w) => w.keys().filter(|p| !all.contains_key(p)).copied().collect(),
        None => Vec::new(),
    };
    if written.is_none() || !gone.is_empty() {
        let players: Vec<Uuid> = all.keys().copied().collect();
        client
            .execute(
                "DELETE FROM tournament_standings WHERE tournament_id = $1 \
                   AND NOT (player_id = ANY($2))",
                &[&id, &players],
            )
            .await?;
    }
    let lines: Vec<&Line> = all
        .iter()
        .filter(|(p, l)| written.is_none_or(|w| w.get(p) != Some(l)))
        .map(|(_, l)| l)
        .collect();
    if lines.is_empty() {
        return Ok(());
    }
    let n = |f: fn(&Line) -> u32| -> Vec<i32> { lines.iter().map(|l| f(l) as i32).collect() };
    let players: Vec<Uuid> = lines.iter().map(|l| l.player_id.as_uuid()).collect();
    let fire: Vec<bool> = lines.iter().map(|l| l.on_fire).collect();
    let performance: Vec<f64> = lines.iter().map(|l| l.performance).collect();
    let status: Vec<&str> = lines
        .iter()
        .map(|l| entrant_status_name(l.status))
        .collect();
    client
        .execute(
            "INSERT INTO tournament_standings AS s (tournament_id, player_id, rank, score, \
                 games, wins, draws, losses, streak, on_fire, buchholz, sonneborn_berger, \
                 performance, status) \
             SELECT $1, * FROM unnest($2::uuid[], $3::int[], $4::int[], $5::int[], $6::int[], \
                 $7::int[], $8::int[], $9::int[], $10::bool[], $11::int[], $12::int[], \
                 $13::float8[], $14::text[]) \
             ON CONFLICT (tournament_id, player_id) DO UPDATE SET rank = EXCLUDED.rank, \
                 score = EXCLUDED.score, games = EXCLUDED.games, wins = EXCLUDED.wins, \
                 draws = EXCLUDED.draws, losses = EXCLUDED.losses, streak = EXCLUDED.streak, \
                 on_fire = EXCLUDED.on_fire, buchholz = EXCLUDED.buchholz, \
                 sonneborn_berger = EXCLUDED.sonneborn_berger, \
                 performance = EXCLUDED.performance, status = EXCLUDED.status \
             WHERE (s.rank, s.score, s.games, s.wins, s.draws, s.losses, s.streak, s.on_fire, \
                    s.buchholz, s.sonneborn_berger, s.performance, s.status) \
                IS DISTINCT FROM (EXCLUDED.rank, EXCLUDED.score, EXCLUDED.games, \
                    EXCLUDED.wins, EXCLUDED.draws, EXCLUDED.losses, EXCLUDED.streak, \
                    EXCLUDED.on_fire, EXCLUDED.buchholz, EXCLUDED.sonneborn_berger, \
                    EXCLUDED.performance, EXCLUDED.status)",
            &[
                &id,
                &players,
                &n(|l| l.rank),
                &n(|l| l.score),
                &n(|l| l.games),
                &n(|l| l.wins),
                &n(|l| l.draws),
                &n(|l| l.losses),
                &n(|l| l.streak),
                &fire,
                &n(|l| l.buchholz),
                &n(|l| l.sonneborn_berger),
                &performance,
                &status,
            ],
        )
        .await?;
    Ok(())
}

/// Inserts the batch's pairings and byes, and sets the results it records.
async fn write_pairings(
    client: &impl GenericClient,
    id: Uuid,
    events: &[&RecordedEvent],
) -> Result<(), Error> {
    let mut rows = Pairings::default();
    let (mut results, mut winners, mut outcomes): (Vec<Uuid>, Vec<Option<Uuid>>, Vec<&str>) =
        Default::default();
    for e in events {
        match decode(e)? {
            TournamentEvent::PairingMade(p) => rows.push(
                e,
                p.round,
                Some(p.match_id.as_uuid()),
                [p.players[0].as_uuid(), p.players[1].as_uuid()],
                None,
            ),
            TournamentEvent::ByeGiven {
                round,
                player_id,
                half_points,
            } => rows.push(e, round, None, [player_id.as_uuid()], Some(half_points)),
            TournamentEvent::ResultRecorded { match_id, winner } => {
                results.push(match_id.as_uuid());
                winners.push(winner.map(|w| w.as_uuid()));
                outcomes.push(if winner.is_some() { "win" } else { "draw" });
            }
            _ => {}
        }
    }
    if !rows.versions.is_empty() {
        client
            .execute(
                "INSERT INTO tournament_pairings (tournament_id, version, round, match_id, \
                     first_player, second_player, result, half_points, paired_at) \
                 SELECT $1, * FROM unnest($2::bigint[], $3::int[], $4::uuid[], $5::uuid[], \
                     $6::uuid[], $7::text[], $8::int[], $9::timestamptz[]) \
                 ON CONFLICT DO NOTHING",
                &[
                    &id,
                    &rows.versions,
                    &rows.rounds,
                    &rows.matches,
                    &rows.first,
                    &rows.second,
                    &rows.result,
                    &rows.half_points,
                    &rows.at,
                ],
            )
            .await?;
    }
    if !results.is_empty() {
        client
            .execute(
                "UPDATE tournament_pairings p SET result = u.result, winner = u.winner \
                   FROM unnest($2::uuid[], $3::uuid[], $4::text[]) AS u(match_id, winner, result) \
                  WHERE p.tournament_id = $1 AND p.match_id = u.match_id",
                &[&id, &results, &winners, &outcomes],
            )
            .await?;
    }
    Ok(())
}

#[derive(Default)]
struct Pairings {
    versions: Vec<i64>,
    rounds: Vec<i32>,
    matches: Vec<Option<Uuid>>,
    first: Vec<Uuid>,
    second: Vec<Option<Uuid>>,
    result: Vec<Option<&'static str>>,
    half_points: Vec<Option<i32>>,
    at: Vec<OffsetDateTime>,
}

impl Pairings {
    fn push(
        &mut self,
        e: &RecordedEvent,
        round: u32,
        match_id: Option<Uuid>,
        players: impl AsRef<[Uuid]>,
        bye: Option<u32>,
    ) {
        let players = players.as_ref();
        self.versions.push(e.version);
        self.rounds.push(round as i32);
        self.matches.push(match_id);
        self.first.push(players[0]);
        self.second.push(players.get(1).copied());
        self.result.push(bye.map(|_| "bye"));
        self.half_points.push(bye.map(|h| h as i32));
        self.at.push(e.recorded_at);
    }
}

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
        let Some(t) = fold_onto(None, &upto)? else {
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

/// A tournament row, as lists read it.
#[derive(Debug, Clone)]
pub struct ListedRow {
    pub tournament_id: Uuid,
    pub game: String,
    pub format: String,
    pub name: String,
    /// `upcoming`, `running`, `finished` or `cancelled`.
    pub state: String,
    pub starts_at: OffsetDateTime,
    pub ends_at: Option<OffsetDateTime>,
    pub rounds: i32,
    pub round: i32,
    pub rated: bool,
    pub players: i32,
}

/// The public tournaments in `states` (and `game`), by start (`ascending` or not), `limit` of
/// them, starting after (`ascending`) or before `from`.
pub async fn listed(
    client: &impl GenericClient,
    states: &[&str],
    game: Option<&str>,
    from: Option<OffsetDateTime>,
    ascending: bool,
    limit: i64,
) -> Result<Vec<ListedRow>, Error> {
    let (order, cmp) = if ascending {
        ("ASC", ">")
    } else {
        ("DESC", "<")
    };
    let sql = format!(
        "SELECT tournament_id, game, format, name, state, starts_at, ends_at, rounds, round, \
                rated, players \
           FROM tournaments \
          WHERE NOT private AND state = ANY($1) AND ($2::text IS NULL OR game = $2) \
            AND ($3::timestamptz IS NULL OR starts_at {cmp} $3) \
          ORDER BY starts_at {order}, tournament_id LIMIT $4"
    );
    let states: Vec<String> = states.iter().map(|s| (*s).to_owned()).collect();
    let rows = client.query(&sql, &[&states, &game, &from, &limit]).await?;
    Ok(rows
        .iter()
        .map(|r| ListedRow {
            tournament_id: r.get(0),
            game: r.get(1),
            format: r.get(2),
            name: r.get(3),
            state: r.get(4),
            starts_at: r.get(5),
            ends_at: r.get(6),
            rounds: r.get(7),
            round: r.get(8),
            rated: r.get(9),
            players: r.get(10),
        })
        .collect())
}

/// A projected pairing or bye.
#[derive(Debug, Clone)]
pub struct PairingRow {
    pub round: i32,
    pub match_id: Option<Uuid>,
    pub first_player: Uuid,
    pub second_player: Option<Uuid>,
    pub result: Option<String>,
    pub winner: Option<Uuid>,
    pub half_points: Option<i32>,
}

/// Tournament `id`'s latest `limit` pairings (of `round`, of `player`), oldest first.
pub async fn pairings(
    client: &impl GenericClient,
    id: Uuid,
    round: Option<i32>,
    player: Option<Uuid>,
    limit: i64,
) -> Result<Vec<PairingRow>, Error> {
    let rows = client
        .query(
            "SELECT round, match_id, first_player, second_player, result, winner, half_points \
               FROM tournament_pairings \
              WHERE tournament_id = $1 AND ($2::int IS NULL OR round = $2) \
                AND ($3::uuid IS NULL OR first_player = $3 OR second_player = $3) \
              ORDER BY version DESC LIMIT $4",
            &[&id, &round, &player, &limit],
        )
        .await?;
    Ok(rows
        .iter()
        .rev()
        .map(|r| PairingRow {
            round: r.get(0),
            match_id: r.get(1),
            first_player: r.get(2),
            second_player: r.get(3),
            result: r.get(4),
            winner: r.get(5),
            half_points: r.get(6),
        })
        .collect())
}
