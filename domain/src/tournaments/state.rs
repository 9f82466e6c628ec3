//! The state of a tournament as the fold of its events (`evolve`, and [`Tournament`] as an
//! [`Aggregate`]): its
//! entrants, games and byes, where it and each player stand, and what the state tells callers.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use time::{Duration, OffsetDateTime};

use crate::ids::{MatchId, PlayerId};

use crate::aggregate::{Aggregate, At};

use super::berger;
use super::commands::Command;
use super::errors::TournamentError;
use super::events::{Format, PairingMade, TournamentCreated, TournamentEvent};
use super::limits::JOINS_OPEN_BEFORE;

/// Where a tournament stands at a given time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", schemars(rename = "TournamentStatus"))]
pub enum Status {
    Scheduled,
    Open,
    Running,
    Finished,
    Cancelled,
}

/// Where a tournament is in its life without a clock: [`Status`] less the difference between
/// scheduled and open, which is the reader's time (what the projection stores).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Upcoming,
    Running,
    Finished,
    Cancelled,
}

impl Phase {
    pub const ALL: [Phase; 4] = [
        Phase::Upcoming,
        Phase::Running,
        Phase::Finished,
        Phase::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Upcoming => "upcoming",
            Phase::Running => "running",
            Phase::Finished => "finished",
            Phase::Cancelled => "cancelled",
        }
    }

    /// The phase named `name` ([`Phase::as_str`]).
    pub fn named(name: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// The status of a tournament in this phase that starts at `starts_at`, at `now`: an
    /// upcoming one is open to joins from [`JOINS_OPEN_BEFORE`] before its start.
    pub fn status(self, starts_at: OffsetDateTime, now: OffsetDateTime) -> Status {
        match self {
            Phase::Cancelled => Status::Cancelled,
            Phase::Finished => Status::Finished,
            Phase::Running => Status::Running,
            Phase::Upcoming if now >= starts_at - JOINS_OPEN_BEFORE => Status::Open,
            Phase::Upcoming => Status::Scheduled,
        }
    }
}

/// Where a player stands in a tournament.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", schemars(rename = "EntrantStatus"))]
pub enum EntrantStatus {
    Joined,
    Paused,
    Withdrawn,
    Removed,
}

/// A player who joined.
#[derive(Clone, Debug, PartialEq)]
pub struct Entrant {
    pub player_id: PlayerId,
    pub rating: f64,
    pub joined_at: OffsetDateTime,
    pub status: EntrantStatus,
}

/// A pairing with its result, once recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Game {
    pub pairing: PairingMade,
    pub paired_at: OffsetDateTime,
    /// `Some(winner)` once recorded (`Some(None)` for a draw).
    pub result: Option<Option<PlayerId>>,
}

/// A bye given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bye {
    pub round: u32,
    pub player_id: PlayerId,
    pub half_points: u32,
}

/// A tournament folded from its events.
#[derive(Clone, Debug, PartialEq)]
pub struct Tournament {
    pub created: TournamentCreated,
    /// In the order they joined.
    pub entrants: Vec<Entrant>,
    /// The last round started (0 before the start).
    pub round: u32,
    pub started_at: Option<OffsetDateTime>,
    /// In the order they were made.
    pub games: Vec<Game>,
    pub byes: Vec<Bye>,
    /// Players removed by an admin, with the reason.
    pub removed: Vec<(PlayerId, String)>,
    /// A round robin's players, fixed when it starts (those who had not withdrawn), in the
    /// order they joined.
    pub roster: Vec<PlayerId>,
    /// Where each entrant is in `entrants`, each player's games in `games` (in order), and each
    /// match's game: indexes `evolve` keeps, so that a wave over 10,000 players reads each
    /// player's history without scanning every game.
    seats: HashMap<PlayerId, usize>,
    played: HashMap<PlayerId, Vec<usize>>,
    by_match: HashMap<MatchId, usize>,
    /// Games without a result.
    open: usize,
    pub finished: bool,
    pub cancelled: bool,
    /// The stream version.
    pub version: u64,
}

impl Tournament {
    /// A new tournament from its creation.
    fn new(created: TournamentCreated) -> Tournament {
        Tournament {
            created,
            entrants: Vec::new(),
            round: 0,
            started_at: None,
            games: Vec::new(),
            byes: Vec::new(),
            removed: Vec::new(),
            roster: Vec::new(),
            seats: HashMap::new(),
            played: HashMap::new(),
            by_match: HashMap::new(),
            open: 0,
            finished: false,
            cancelled: false,
            version: 0,
        }
    }

    /// When an arena ends (its start plus its minutes); `None` for the other formats.
    pub fn ends_at(&self) -> Option<OffsetDateTime> {
        let minutes = self
            .created
            .minutes
            .filter(|_| self.created.format == Format::Arena)?;
        Some(self.created.starts_at + Duration::minutes(i64::from(minutes)))
    }

    /// How many rounds it has: a Swiss its own, a round robin two cycles of Berger tables over
    /// its roster (before it starts, over the players who would make it), an arena one.
    pub fn rounds(&self) -> u32 {
        match self.created.format {
            Format::Arena => 1,
            Format::Swiss => self.created.rounds.unwrap_or(0),
            Format::RoundRobin => {
                let n = if self.started_at.is_some() {
                    self.roster.len()
                } else {
                    self.would_start().count()
                };
                2 * berger::rounds_per_cycle(n as u32)
            }
        }
    }

    /// The players a start would take: joined or paused, in the order they joined.
    pub fn would_start(&self) -> impl Iterator<Item = &Entrant> {
        self.entrants
            .iter()
            .filter(|e| matches!(e.status, EntrantStatus::Joined | EntrantStatus::Paused))
    }

    pub fn status(&self, now: OffsetDateTime) -> Status {
        self.phase().status(self.created.starts_at, now)
    }

    /// Where it is in its life, whatever the reader's clock.
    pub fn phase(&self) -> Phase {
        if self.cancelled {
            Phase::Cancelled
        } else if self.finished {
            Phase::Finished
        } else if self.started_at.is_some() {
            Phase::Running
        } else {
            Phase::Upcoming
        }
    }

    pub fn entrant(&self, player: PlayerId) -> Option<&Entrant> {
        self.seats.get(&player).map(|&i| &self.entrants[i])
    }

    /// Players who may be paired: joined, not paused, withdrawn or removed.
    pub fn active(&self) -> impl Iterator<Item = &Entrant> {
        self.entrants
            .iter()
            .filter(|e| e.status == EntrantStatus::Joined)
    }

    /// The games without a result.
    pub fn unfinished(&self) -> impl Iterator<Item = &Game> {
        self.games.iter().filter(|g| g.result.is_none())
    }

    /// Whether a game is without a result.
    pub fn has_unfinished(&self) -> bool {
        self.open > 0
    }

    /// Whether `player` is in a game without a result (their last: nobody is paired while
    /// playing).
    pub fn playing(&self, player: PlayerId) -> bool {
        self.games_of(player)
            .last()
            .is_some_and(|g| g.result.is_none())
    }

    /// The games `player` played or plays, in order.
    pub fn games_of(&self, player: PlayerId) -> impl DoubleEndedIterator<Item = &Game> {
        self.played
            .get(&player)
            .into_iter()
            .flatten()
            .map(|&i| &self.games[i])
    }

    /// The game of `match_id`.
    pub fn game(&self, match_id: MatchId) -> Option<&Game> {
        self.by_match.get(&match_id).map(|&i| &self.games[i])
    }
}

/// Applies one event recorded at `at`.
pub fn evolve(
    state: Option<Tournament>,
    at: OffsetDateTime,
    event: &TournamentEvent,
) -> Option<Tournament> {
    let mut t = match (state, event) {
        (None, TournamentEvent::TournamentCreated(c)) => Tournament::new(c.clone()),
        (None, _) => return None,
        (Some(t), _) => t,
    };
    t.version += 1;
    let set = |t: &mut Tournament, player: PlayerId, status: EntrantStatus| {
        if let Some(&i) = t.seats.get(&player) {
            t.entrants[i].status = status;
        }
    };
    match event {
        TournamentEvent::TournamentCreated(_) => {}
        TournamentEvent::PlayerJoined { player_id, rating } => match t.seats.get(player_id) {
            Some(&i) => t.entrants[i].status = EntrantStatus::Joined,
            None => {
                t.seats.insert(*player_id, t.entrants.len());
                t.entrants.push(Entrant {
                    player_id: *player_id,
                    rating: *rating,
                    joined_at: at,
                    status: EntrantStatus::Joined,
                });
            }
        },
        TournamentEvent::PlayerWithdrew { player_id } => {
            set(&mut t, *player_id, EntrantStatus::Withdrawn)
        }
        TournamentEvent::PlayerPaused { player_id } => {
            set(&mut t, *player_id, EntrantStatus::Paused)
        }
        TournamentEvent::PlayerResumed { player_id } => {
            set(&mut t, *player_id, EntrantStatus::Joined)
        }
        TournamentEvent::RoundStarted { round } => {
            if t.started_at.is_none() {
                t.started_at = Some(at);
                t.roster = t.would_start().map(|e| e.player_id).collect();
            }
            t.round = *round;
        }
        TournamentEvent::PairingMade(p) => {
            let i = t.games.len();
            for player in p.players {
                t.played.entry(player).or_default().push(i);
            }
            t.by_match.insert(p.match_id, i);
            t.open += 1;
            t.games.push(Game {
                pairing: p.clone(),
                paired_at: at,
                result: None,
            });
        }
        TournamentEvent::ByeGiven {
            round,
            player_id,
            half_points,
        } => t.byes.push(Bye {
            round: *round,
            player_id: *player_id,
            half_points: *half_points,
        }),
        TournamentEvent::ResultRecorded { match_id, winner } => {
            if let Some(&i) = t.by_match.get(match_id) {
                if t.games[i].result.is_none() {
                    t.open -= 1;
                }
                t.games[i].result = Some(*winner);
            }
        }
        TournamentEvent::PlayerRemoved {
            player_id, reason, ..
        } => {
            set(&mut t, *player_id, EntrantStatus::Removed);
            t.removed.push((*player_id, reason.clone()));
        }
        TournamentEvent::TournamentFinished {} => t.finished = true,
        TournamentEvent::TournamentCancelled { .. } => t.cancelled = true,
    }
    Some(t)
}

/// A tournament's stream, `tournament-<id>`: `None` until it is created. The fold is shared
/// (`Arc`: a large arena is cloned only when an event changes a fold someone else holds).
impl Aggregate for Tournament {
    type Id = crate::ids::TournamentId;
    type State = Option<Arc<Tournament>>;
    type Event = TournamentEvent;
    type Command = At<Command>;
    type Error = TournamentError;

    const KIND: &'static str = "tournament";

    fn event_type(event: &TournamentEvent) -> &'static str {
        event.event_type()
    }

    fn schema_version(_: &TournamentEvent) -> i16 {
        TournamentEvent::SCHEMA_VERSION
    }

    fn data(event: &TournamentEvent) -> serde_json::Value {
        event.data()
    }

    fn decode(
        event_type: &str,
        schema_version: i16,
        data: &serde_json::Value,
    ) -> Result<TournamentEvent, String> {
        TournamentEvent::decode(event_type, schema_version, data)
    }

    fn decide(
        state: &Option<Arc<Tournament>>,
        command: &At<Command>,
    ) -> Result<Vec<TournamentEvent>, TournamentError> {
        super::decide(state.as_deref(), &command.command, command.at)
    }

    fn evolve(state: &mut Option<Arc<Tournament>>, at: OffsetDateTime, event: &TournamentEvent) {
        *state = evolve(state.take().map(Arc::unwrap_or_clone), at, event).map(Arc::new);
    }

    fn version(state: &Option<Arc<Tournament>>) -> u64 {
        state.as_ref().map_or(0, |t| t.version)
    }
}
