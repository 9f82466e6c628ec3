//! The facts of finished matches, read from `match_created` and `match_ended` events: who sat
//! where, who started, who won, and the positions of both events; and their first moves, from
//! their `move_played` events.

use std::collections::HashMap;

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::games::GameId;
use domain::ids::{MatchId, PlayerId, Seat};
use domain::matches::{
    EndedBecause, MatchCreated, MatchEnded, MatchEvent, MatchState, Occupant, Outcome,
};
use eventlog::RecordedEvent;

use crate::Error;

/// A finished match as the projections see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub match_id: MatchId,
    pub game: GameId,
    pub ranked: bool,
    /// A correspondence game (days per move): rated on its game's correspondence ladder.
    pub correspondence: bool,
    /// The human in each seat (seat 1, seat 2); `None` for a CPU seat.
    pub players: [Option<PlayerId>; 2],
    pub first_seat: Seat,
    pub outcome: Outcome,
    pub winner_seat: Option<Seat>,
    pub reason: EndedBecause,
    pub ended_at: OffsetDateTime,
    pub created_position: i64,
    pub ended_position: i64,
}

impl Finished {
    /// The score of `seat`: 1 win, 0.5 draw, 0 loss.
    pub fn score_of(&self, seat: Seat) -> domain::ratings::Score {
        use domain::ratings::Score;
        match (self.outcome, self.winner_seat) {
            (Outcome::Draw, _) | (_, None) => Score::Draw,
            (Outcome::Win, Some(w)) if w == seat => Score::Win,
            (Outcome::Win, Some(_)) => Score::Loss,
        }
    }

    /// The ladder it is rated on, if it is rated.
    pub fn ladder(&self) -> domain::ratings::Ladder {
        domain::ratings::Ladder {
            game: self.game,
            correspondence: self.correspondence,
        }
    }

    /// Whether the match counts for ratings: ranked, two humans.
    pub fn is_rated(&self) -> bool {
        self.ranked && self.players.iter().all(Option::is_some)
    }
}

/// A `match_created` event kept until its match ends.
#[derive(Debug, Clone)]
pub struct Created {
    pub data: MatchCreated,
    pub position: i64,
}

fn decode(e: &RecordedEvent) -> Result<MatchEvent, Error> {
    crate::fold::decode::<MatchState>(e)
}

fn match_id_of(stream: &str, position: i64) -> Result<MatchId, Error> {
    MatchId::of_stream(stream).ok_or_else(|| Error::Event {
        position,
        reason: format!("`{stream}` is not a match stream"),
    })
}

/// The finished matches of a batch, in log order. The `match_created` of a match that ended in
/// this batch but started in an earlier one is read from the log (version 1 of its stream).
pub async fn finished_in(
    client: &impl GenericClient,
    events: &[RecordedEvent],
) -> Result<Vec<Finished>, Error> {
    let mut created: HashMap<String, Created> = HashMap::new();
    let mut ended: Vec<(&RecordedEvent, MatchEnded)> = Vec::new();
    for e in events {
        match e.event_type.as_str() {
            "match_created" => {
                if let MatchEvent::MatchCreated(data) = decode(e)? {
                    created.insert(
                        e.stream.clone(),
                        Created {
                            data,
                            position: e.position,
                        },
                    );
                }
            }
            "match_ended" => {
                if let MatchEvent::MatchEnded(data) = decode(e)? {
                    ended.push((e, data));
                }
            }
            _ => {}
        }
    }
    let missing: Vec<String> = ended
        .iter()
        .filter(|(e, _)| !created.contains_key(&e.stream))
        .map(|(e, _)| e.stream.clone())
        .collect();
    if !missing.is_empty() {
        for first in eventlog::first_events(client, &missing).await? {
            if let MatchEvent::MatchCreated(data) = decode(&first)? {
                let position = first.position;
                created.insert(first.stream, Created { data, position });
            }
        }
    }
    ended
        .into_iter()
        .map(|(e, end)| {
            let c = created.get(&e.stream).ok_or_else(|| Error::Event {
                position: e.position,
                reason: format!("{} ended but was never created", e.stream),
            })?;
            Ok(finished(match_id_of(&e.stream, e.position)?, c, e, end))
        })
        .collect()
}

/// Joins a match's creation and its end.
pub fn finished(match_id: MatchId, c: &Created, e: &RecordedEvent, end: MatchEnded) -> Finished {
    let player = |o: &Occupant| match o {
        Occupant::Human { player_id } => Some(*player_id),
        Occupant::Cpu { .. } => None,
    };
    Finished {
        match_id,
        game: c.data.game,
        ranked: c.data.ranked,
        correspondence: c.data.settings.days_per_move.is_some(),
        players: [player(&c.data.seats[0]), player(&c.data.seats[1])],
        first_seat: c.data.first_seat,
        outcome: end.outcome,
        winner_seat: end.winner_seat,
        reason: end.reason,
        ended_at: e.recorded_at,
        created_position: c.position,
        ended_position: e.position,
    }
}

/// The wire name of an end reason (`four_in_a_row`, `resigned`, ...).
pub fn reason_name(r: EndedBecause) -> &'static str {
    match r {
        EndedBecause::FourInARow => "four_in_a_row",
        EndedBecause::BoardFull => "board_full",
        EndedBecause::NoMoves => "no_moves",
        EndedBecause::Resigned => "resigned",
        EndedBecause::OutOfTime => "out_of_time",
    }
}

/// The first moves of these matches, by match, as their `move_played` events give them: as
/// many as `plies` says for the game (the history: what their openings' names can depend on,
/// `domain::openings::plies_needed`), each stream's read stopping there.
pub(crate) async fn moves_of(
    client: &impl GenericClient,
    finished: &[Finished],
    plies: impl Fn(GameId) -> usize,
) -> Result<HashMap<Uuid, Vec<String>>, Error> {
    let streams: Vec<String> = finished.iter().map(|f| f.match_id.stream()).collect();
    let needed: Vec<i64> = finished.iter().map(|f| plies(f.game) as i64).collect();
    let rows = eventlog::first_values(client, &streams, &needed, "move_played", "move").await?;
    let mut moves: HashMap<Uuid, Vec<String>> = HashMap::new();
    for (stream, mv) in rows {
        let Some(id) = MatchId::of_stream(&stream) else {
            continue;
        };
        moves.entry(id.as_uuid()).or_default().extend(mv);
    }
    Ok(moves)
}
