//! How the tournaments projection applies a batch to its tables: each touched tournament
//! refolded, then its row, its changed standing lines and its new pairings and results written.

use std::collections::HashMap;

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::ids::TournamentId;
use domain::tournaments::standings::{Line, standings};
use domain::tournaments::{EntrantStatus, Format, Tournament, TournamentEvent};
use eventlog::RecordedEvent;

use super::fold::{Folds, Kept};
use crate::Error;
use crate::fold::fold;

/// Where a tournament is in its life, as the table stores it (`Tournament::phase`: `upcoming`
/// covers scheduled and open, which depend on the reader's clock).
pub fn state_of(t: &Tournament) -> &'static str {
    t.phase().as_str()
}

/// A format as the table stores it ([`Format::name`]).
pub fn format_name(f: Format) -> &'static str {
    f.name()
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
                (
                    fold::<Tournament>(None, &earlier.iter().collect::<Vec<_>>())?,
                    None,
                )
            }
        };
        let Some(t) = fold::<Tournament>(before, mine)? else {
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
        match crate::fold::decode::<Tournament>(e)? {
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
