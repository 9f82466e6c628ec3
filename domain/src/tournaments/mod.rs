//! Tournaments (issue 44): a tournament is a stream of its own (`tournament-<id>`), and
//! every step of it is an event: its creation, every join, withdrawal, pause and resume, each
//! round's start, each pairing and bye, each result, an admin's removal of a player, the end.
//! This module holds the events and the pure decide/evolve of that life; the pairings are pure
//! functions of the state ([`arena`], [`swiss`], [`berger`]), [`organiser`] says what a
//! tournament needs next at a given time, and the standings ([`standings`]) are recomputed
//! exactly when a player is removed.
//!
//! `decide` refuses what no pairing may do (a player twice, a player not active or still
//! playing, an arena's immediate rematch or third first move in a row, a Swiss rematch, a second
//! 1-point bye); which pairs a round holds is the organiser's choice, not checked here. Unlike
//! the match aggregate, `evolve` builds the state from nothing (`Option<Tournament>`) and takes
//! the event's time, and `decide` takes the time of the command beside it.
//!
//! A tournament is scheduled until its joins open ([`JOINS_OPEN_BEFORE`] its start), open until
//! it starts, running until it finishes, or cancelled. Time comes in with each command.
//! Formats:
//! - **Arena**: runs `minutes` from its start; joined players who are idle are paired
//!   continuously; joining and pairing close [`ARENA_CLOSES_BEFORE_END`] before the end.
//! - **Swiss**: `rounds` rounds, each paired from the standings; joining closes after half of
//!   them; a late joiner gets a ½-point bye for each round already started.
//! - **Round robin**: at most [`ROUND_ROBIN_MAX`] players, each pair twice with the first move
//!   swapped (Berger tables); joining closes at the start.

pub mod arena;
pub mod berger;
pub mod organiser;
pub mod standings;
pub mod swiss;

use std::collections::{HashMap, HashSet};
use std::ops::RangeInclusive;

use serde::{Deserialize, Serialize};
use time::{Duration, OffsetDateTime};

use crate::games::GameId;
use crate::ids::{MatchId, PlayerId};
use crate::matches::TurnSeconds;

/// How long an arena may run, in minutes.
pub const ARENA_MINUTES: RangeInclusive<u32> = 10..=1440;
/// How many rounds a Swiss tournament may have.
pub const SWISS_ROUNDS: RangeInclusive<u32> = 3..=50;
/// The most players a round robin takes.
pub const ROUND_ROBIN_MAX: u32 = 16;
/// The most players any tournament takes.
pub const PLAYERS_MAX: u32 = 20_000;
/// The longest name.
pub const NAME_MAX: usize = 60;
/// How far ahead a tournament may be scheduled.
pub const SCHEDULED_AT_MOST: Duration = Duration::days(90);
/// Joining opens this long before the start.
pub const JOINS_OPEN_BEFORE: Duration = Duration::hours(1);
/// An arena stops taking players and making pairings this long before its end.
pub const ARENA_CLOSES_BEFORE_END: Duration = Duration::seconds(60);

/// The three formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Arena,
    Swiss,
    RoundRobin,
}

/// The facts of a tournament's creation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentCreated {
    pub name: String,
    pub game: GameId,
    pub format: Format,
    #[serde(with = "time::serde::rfc3339")]
    pub starts_at: OffsetDateTime,
    /// Arena: how long it runs.
    pub minutes: Option<u32>,
    /// Swiss: how many rounds (a round robin's follow from its players).
    pub rounds: Option<u32>,
    /// Whether its games move Glicko-2 ratings.
    pub rated: bool,
    pub turn_seconds: Option<TurnSeconds>,
    /// A private tournament is joined with its invite code, which the service keeps apart
    /// (never in an event: the stream is replayed to its followers).
    pub private: bool,
    pub created_by: PlayerId,
    pub max_players: u32,
}

/// A pairing: a match between two players, `players[0]` moving first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairingMade {
    pub round: u32,
    pub match_id: MatchId,
    pub players: [PlayerId; 2],
}

/// Every event of a tournament stream. On the wire: `{"type": "<snake_case>", "data": {...}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum TournamentEvent {
    TournamentCreated(TournamentCreated),
    /// `rating`: the player's rating in the game when they joined (seeding, performance).
    PlayerJoined {
        player_id: PlayerId,
        rating: f64,
    },
    PlayerWithdrew {
        player_id: PlayerId,
    },
    PlayerPaused {
        player_id: PlayerId,
    },
    PlayerResumed {
        player_id: PlayerId,
    },
    /// The tournament runs from round 1 (an arena has that one round).
    RoundStarted {
        round: u32,
    },
    PairingMade(PairingMade),
    /// `half_points`: 2 for a full point, 1 for a half.
    ByeGiven {
        round: u32,
        player_id: PlayerId,
        half_points: u32,
    },
    /// `winner`: `None` for a draw.
    ResultRecorded {
        match_id: MatchId,
        winner: Option<PlayerId>,
    },
    PlayerRemoved {
        player_id: PlayerId,
        reason: String,
        by: PlayerId,
    },
    TournamentFinished {},
    TournamentCancelled {
        reason: String,
    },
}

impl TournamentEvent {
    pub const TYPES: [&'static str; 12] = [
        "tournament_created",
        "player_joined",
        "player_withdrew",
        "player_paused",
        "player_resumed",
        "round_started",
        "pairing_made",
        "bye_given",
        "result_recorded",
        "player_removed",
        "tournament_finished",
        "tournament_cancelled",
    ];
    pub const SCHEMA_VERSION: i16 = 1;

    pub fn event_type(&self) -> &'static str {
        let i = match self {
            TournamentEvent::TournamentCreated(_) => 0,
            TournamentEvent::PlayerJoined { .. } => 1,
            TournamentEvent::PlayerWithdrew { .. } => 2,
            TournamentEvent::PlayerPaused { .. } => 3,
            TournamentEvent::PlayerResumed { .. } => 4,
            TournamentEvent::RoundStarted { .. } => 5,
            TournamentEvent::PairingMade(_) => 6,
            TournamentEvent::ByeGiven { .. } => 7,
            TournamentEvent::ResultRecorded { .. } => 8,
            TournamentEvent::PlayerRemoved { .. } => 9,
            TournamentEvent::TournamentFinished {} => 10,
            TournamentEvent::TournamentCancelled { .. } => 11,
        };
        Self::TYPES[i]
    }

    /// The payload (`data`) as JSON.
    pub fn data(&self) -> serde_json::Value {
        serde_json::to_value(self)
            .ok()
            .and_then(|mut v| v.get_mut("data").map(serde_json::Value::take))
            .unwrap_or(serde_json::Value::Null)
    }

    /// Reads a stored tournament event.
    pub fn decode(
        event_type: &str,
        version: i16,
        data: &serde_json::Value,
    ) -> Result<TournamentEvent, String> {
        if version != Self::SCHEMA_VERSION {
            return Err(format!(
                "event `{event_type}` has schema version {version}, which this build does not know"
            ));
        }
        if !Self::TYPES.contains(&event_type) {
            return Err(format!("unknown tournament event type `{event_type}`"));
        }
        serde_json::from_value(serde_json::json!({"type": event_type, "data": data}))
            .map_err(|e| format!("event `{event_type}` is malformed: {e}"))
    }
}

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

/// A command on a tournament, decided against its state at `now`.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Create(TournamentCreated),
    Join {
        player_id: PlayerId,
        rating: f64,
    },
    Withdraw {
        player_id: PlayerId,
    },
    Pause {
        player_id: PlayerId,
    },
    Resume {
        player_id: PlayerId,
    },
    /// Runs an arena (its one round).
    Start,
    /// The next round of a Swiss or round robin, its pairings and byes (the first one starts
    /// the tournament).
    StartRound {
        pairings: Vec<PairingMade>,
        byes: Vec<Bye>,
    },
    /// Arena pairings of idle players.
    Pair {
        pairings: Vec<PairingMade>,
    },
    Record {
        match_id: MatchId,
        winner: Option<PlayerId>,
    },
    Remove {
        player_id: PlayerId,
        reason: String,
        by: PlayerId,
    },
    Finish,
    Cancel {
        reason: String,
    },
}

/// Why a command on a tournament is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TournamentError {
    #[error("the tournament does not exist")]
    Missing,
    #[error("the tournament already exists")]
    Exists,
    #[error("the name must have 1 to {NAME_MAX} characters")]
    Name,
    #[error("the start must be in the future, within 90 days")]
    StartsAt,
    #[error("an arena runs 10 to 1440 minutes")]
    Minutes,
    #[error("a Swiss tournament has 3 to 50 rounds")]
    Rounds,
    #[error("at most {0} players")]
    MaxPlayers(u32),
    #[error("this setting does not belong to this format")]
    Setting,
    #[error("the tournament is over")]
    Over,
    #[error("joining is not open")]
    JoiningClosed,
    #[error("the tournament is full")]
    Full,
    #[error("already joined")]
    AlreadyJoined,
    #[error("not in the tournament")]
    NotJoined,
    #[error("already withdrawn")]
    AlreadyWithdrawn,
    #[error("removed from the tournament")]
    Removed,
    #[error("already paused")]
    AlreadyPaused,
    #[error("not paused")]
    NotPaused,
    #[error("not running")]
    NotRunning,
    #[error("already running")]
    AlreadyRunning,
    #[error("too early")]
    TooEarly,
    #[error("fewer than two players")]
    TooFewPlayers,
    #[error("the round under way has games without a result")]
    RoundUnderWay,
    #[error("every round is played")]
    NoRoundLeft,
    #[error("this format pairs otherwise")]
    WrongFormat,
    #[error("a pairing is not valid: {0}")]
    BadPairing(&'static str),
    #[error("no such pairing")]
    NoSuchPairing,
    #[error("the result is already recorded")]
    AlreadyRecorded,
    #[error("the winner did not play that game")]
    NotAPlayer,
    #[error("a reason is required")]
    Reason,
    #[error("a rating must be a finite number")]
    Rating,
    #[error("a Swiss pairing may not repeat a game")]
    Rematch,
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

    /// Folds a tournament's events (with their times); `None` before `tournament_created`.
    pub fn fold<'a>(
        events: impl IntoIterator<Item = (OffsetDateTime, &'a TournamentEvent)>,
    ) -> Option<Tournament> {
        let mut state: Option<Tournament> = None;
        for (at, event) in events {
            state = evolve(state, at, event);
        }
        state
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
        if self.cancelled {
            Status::Cancelled
        } else if self.finished {
            Status::Finished
        } else if self.started_at.is_some() {
            Status::Running
        } else if now >= self.created.starts_at - JOINS_OPEN_BEFORE {
            Status::Open
        } else {
            Status::Scheduled
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

/// Decides `command` against `state` at `now`: the events to append, or why not.
pub fn decide(
    state: Option<&Tournament>,
    command: &Command,
    now: OffsetDateTime,
) -> Result<Vec<TournamentEvent>, TournamentError> {
    let Some(t) = state else {
        return match command {
            Command::Create(created) => {
                check_creation(created, now)?;
                Ok(vec![TournamentEvent::TournamentCreated(created.clone())])
            }
            _ => Err(TournamentError::Missing),
        };
    };
    let status = t.status(now);
    if matches!(status, Status::Finished | Status::Cancelled)
        && !matches!(command, Command::Remove { .. })
    {
        return Err(match command {
            Command::Create(_) => TournamentError::Exists,
            _ => TournamentError::Over,
        });
    }
    match command {
        Command::Create(_) => Err(TournamentError::Exists),
        Command::Join { player_id, rating } => join(t, status, *player_id, *rating, now),
        Command::Withdraw { player_id } => {
            member(t, *player_id)?;
            Ok(vec![TournamentEvent::PlayerWithdrew {
                player_id: *player_id,
            }])
        }
        Command::Pause { player_id } => match member(t, *player_id)?.status {
            EntrantStatus::Paused => Err(TournamentError::AlreadyPaused),
            _ => Ok(vec![TournamentEvent::PlayerPaused {
                player_id: *player_id,
            }]),
        },
        Command::Resume { player_id } => match member(t, *player_id)?.status {
            EntrantStatus::Paused => Ok(vec![TournamentEvent::PlayerResumed {
                player_id: *player_id,
            }]),
            _ => Err(TournamentError::NotPaused),
        },
        Command::Start => start(t, status, now),
        Command::StartRound { pairings, byes } => start_round(t, status, pairings, byes, now),
        Command::Pair { pairings } => pair(t, status, pairings, now),
        Command::Record { match_id, winner } => record(t, *match_id, *winner),
        Command::Remove {
            player_id,
            reason,
            by,
        } => {
            let entrant = t.entrant(*player_id).ok_or(TournamentError::NotJoined)?;
            if entrant.status == EntrantStatus::Removed {
                return Err(TournamentError::Removed);
            }
            let reason = reason.trim();
            if reason.is_empty() {
                return Err(TournamentError::Reason);
            }
            Ok(vec![TournamentEvent::PlayerRemoved {
                player_id: *player_id,
                reason: reason.to_owned(),
                by: *by,
            }])
        }
        Command::Finish => finish(t, status, now),
        Command::Cancel { reason } => {
            let reason = reason.trim();
            if reason.is_empty() {
                return Err(TournamentError::Reason);
            }
            Ok(vec![TournamentEvent::TournamentCancelled {
                reason: reason.to_owned(),
            }])
        }
    }
}

fn check_creation(c: &TournamentCreated, now: OffsetDateTime) -> Result<(), TournamentError> {
    let name = c.name.trim();
    if name.is_empty() || name.chars().count() > NAME_MAX || name != c.name {
        return Err(TournamentError::Name);
    }
    if c.starts_at <= now || c.starts_at > now + SCHEDULED_AT_MOST {
        return Err(TournamentError::StartsAt);
    }
    match c.format {
        Format::Arena => {
            if c.rounds.is_some() {
                return Err(TournamentError::Setting);
            }
            if !c.minutes.is_some_and(|m| ARENA_MINUTES.contains(&m)) {
                return Err(TournamentError::Minutes);
            }
        }
        Format::Swiss => {
            if c.minutes.is_some() {
                return Err(TournamentError::Setting);
            }
            if !c.rounds.is_some_and(|r| SWISS_ROUNDS.contains(&r)) {
                return Err(TournamentError::Rounds);
            }
        }
        Format::RoundRobin => {
            if c.minutes.is_some() || c.rounds.is_some() {
                return Err(TournamentError::Setting);
            }
        }
    }
    let most = if c.format == Format::RoundRobin {
        ROUND_ROBIN_MAX
    } else {
        PLAYERS_MAX
    };
    if c.max_players < 2 || c.max_players > most {
        return Err(TournamentError::MaxPlayers(most));
    }
    Ok(())
}

/// The entrant `player`, joined or paused (`not_joined`, `already_withdrawn`, `removed`).
fn member(t: &Tournament, player: PlayerId) -> Result<&Entrant, TournamentError> {
    let entrant = t.entrant(player).ok_or(TournamentError::NotJoined)?;
    match entrant.status {
        EntrantStatus::Joined | EntrantStatus::Paused => Ok(entrant),
        EntrantStatus::Withdrawn => Err(TournamentError::AlreadyWithdrawn),
        EntrantStatus::Removed => Err(TournamentError::Removed),
    }
}

fn join(
    t: &Tournament,
    status: Status,
    player: PlayerId,
    rating: f64,
    now: OffsetDateTime,
) -> Result<Vec<TournamentEvent>, TournamentError> {
    if !rating.is_finite() {
        return Err(TournamentError::Rating);
    }
    let open = match (status, t.created.format) {
        (Status::Open, _) => true,
        (Status::Running, Format::Arena) => t
            .ends_at()
            .is_some_and(|end| now < end - ARENA_CLOSES_BEFORE_END),
        (Status::Running, Format::Swiss) => t.round <= t.rounds() / 2,
        _ => false,
    };
    if !open {
        return Err(TournamentError::JoiningClosed);
    }
    match t.entrant(player).map(|e| e.status) {
        None => {}
        Some(EntrantStatus::Removed) => return Err(TournamentError::Removed),
        // A player who withdrew may come back to an arena, or to any tournament before it
        // starts; not into the rounds of a paired one.
        Some(EntrantStatus::Withdrawn)
            if t.created.format == Format::Arena || status == Status::Open => {}
        Some(EntrantStatus::Withdrawn) => return Err(TournamentError::AlreadyWithdrawn),
        Some(_) => return Err(TournamentError::AlreadyJoined),
    }
    let taken = t
        .entrants
        .iter()
        .filter(|e| matches!(e.status, EntrantStatus::Joined | EntrantStatus::Paused))
        .count() as u32;
    if taken >= t.created.max_players {
        return Err(TournamentError::Full);
    }
    let mut events = vec![TournamentEvent::PlayerJoined {
        player_id: player,
        rating,
    }];
    if t.created.format == Format::Swiss {
        // A late joiner: half a point for each round already started.
        events.extend((1..=t.round).map(|round| TournamentEvent::ByeGiven {
            round,
            player_id: player,
            half_points: 1,
        }));
    }
    Ok(events)
}

fn start(
    t: &Tournament,
    status: Status,
    now: OffsetDateTime,
) -> Result<Vec<TournamentEvent>, TournamentError> {
    if t.created.format != Format::Arena {
        return Err(TournamentError::WrongFormat);
    }
    may_start(t, status, now)?;
    Ok(vec![TournamentEvent::RoundStarted { round: 1 }])
}

/// Whether an open tournament may start now (at its time, with two active players).
fn may_start(t: &Tournament, status: Status, now: OffsetDateTime) -> Result<(), TournamentError> {
    if status == Status::Running {
        return Err(TournamentError::AlreadyRunning);
    }
    if now < t.created.starts_at {
        return Err(TournamentError::TooEarly);
    }
    if t.active().count() < 2 {
        return Err(TournamentError::TooFewPlayers);
    }
    Ok(())
}

/// Pairs valid for this tournament now: two distinct active players each, none in a game
/// without a result nor paired twice here, first movers as the hard rules allow.
fn check_pairings(
    t: &Tournament,
    pairings: &[PairingMade],
    round: u32,
) -> Result<(), TournamentError> {
    let mut seen = HashSet::new();
    for p in pairings {
        if p.round != round {
            return Err(TournamentError::BadPairing(
                "the round is not the current one",
            ));
        }
        if t.game(p.match_id).is_some() || !seen.insert(p.match_id.as_uuid()) {
            return Err(TournamentError::BadPairing("a match is paired twice"));
        }
    }
    let mut players = HashSet::new();
    for p in pairings {
        for player in p.players {
            if !players.insert(player) {
                return Err(TournamentError::BadPairing("a player is paired twice"));
            }
            if t.entrant(player).map(|e| e.status) != Some(EntrantStatus::Joined) {
                return Err(TournamentError::BadPairing(
                    "a player is not an active entrant",
                ));
            }
            if t.playing(player) {
                return Err(TournamentError::BadPairing("a player is still playing"));
            }
        }
    }
    Ok(())
}

fn start_round(
    t: &Tournament,
    status: Status,
    pairings: &[PairingMade],
    byes: &[Bye],
    now: OffsetDateTime,
) -> Result<Vec<TournamentEvent>, TournamentError> {
    if t.created.format == Format::Arena {
        return Err(TournamentError::WrongFormat);
    }
    // The first round starts the tournament.
    if t.round == 0 {
        may_start(t, status, now)?;
    } else if status != Status::Running {
        return Err(TournamentError::NotRunning);
    }
    if t.has_unfinished() {
        return Err(TournamentError::RoundUnderWay);
    }
    let round = t.round + 1;
    if round > t.rounds() {
        return Err(TournamentError::NoRoundLeft);
    }
    check_pairings(t, pairings, round)?;
    if t.created.format == Format::Swiss
        && pairings.iter().any(|p| {
            let [a, b] = p.players;
            t.games_of(a).any(|g| g.pairing.players.contains(&b))
        })
    {
        return Err(TournamentError::Rematch);
    }
    let paired: HashSet<PlayerId> = pairings.iter().flat_map(|p| p.players).collect();
    let mut bye_players = HashSet::new();
    for b in byes {
        if b.round != round || !(1..=2).contains(&b.half_points) {
            return Err(TournamentError::BadPairing("a bye is not of this round"));
        }
        if paired.contains(&b.player_id) || !bye_players.insert(b.player_id) {
            return Err(TournamentError::BadPairing("a player has a bye and a game"));
        }
        if t.entrant(b.player_id).map(|e| e.status) != Some(EntrantStatus::Joined) {
            return Err(TournamentError::BadPairing("a bye for a player not active"));
        }
        let full_before = t
            .byes
            .iter()
            .any(|x| x.player_id == b.player_id && x.half_points == 2);
        if b.half_points == 2 && full_before {
            return Err(TournamentError::BadPairing("a second one-point bye"));
        }
    }
    let mut events = vec![TournamentEvent::RoundStarted { round }];
    events.extend(pairings.iter().cloned().map(TournamentEvent::PairingMade));
    events.extend(byes.iter().map(|b| TournamentEvent::ByeGiven {
        round,
        player_id: b.player_id,
        half_points: b.half_points,
    }));
    Ok(events)
}

fn pair(
    t: &Tournament,
    status: Status,
    pairings: &[PairingMade],
    now: OffsetDateTime,
) -> Result<Vec<TournamentEvent>, TournamentError> {
    if t.created.format != Format::Arena {
        return Err(TournamentError::WrongFormat);
    }
    if status != Status::Running {
        return Err(TournamentError::NotRunning);
    }
    if t.ends_at()
        .is_none_or(|end| now >= end - ARENA_CLOSES_BEFORE_END)
    {
        return Err(TournamentError::JoiningClosed);
    }
    check_pairings(t, pairings, 1)?;
    for p in pairings {
        let [a, b] = p.players;
        if arena::last_opponent(t, a) == Some(b) || arena::last_opponent(t, b) == Some(a) {
            return Err(TournamentError::BadPairing("an immediate rematch"));
        }
        if arena::first_streak(t, a) >= 2 {
            return Err(TournamentError::BadPairing("a third first move in a row"));
        }
    }
    Ok(pairings
        .iter()
        .cloned()
        .map(TournamentEvent::PairingMade)
        .collect())
}

fn record(
    t: &Tournament,
    match_id: MatchId,
    winner: Option<PlayerId>,
) -> Result<Vec<TournamentEvent>, TournamentError> {
    let game = t.game(match_id).ok_or(TournamentError::NoSuchPairing)?;
    if game.result.is_some() {
        return Err(TournamentError::AlreadyRecorded);
    }
    if winner.is_some_and(|w| !game.pairing.players.contains(&w)) {
        return Err(TournamentError::NotAPlayer);
    }
    Ok(vec![TournamentEvent::ResultRecorded { match_id, winner }])
}

fn finish(
    t: &Tournament,
    status: Status,
    now: OffsetDateTime,
) -> Result<Vec<TournamentEvent>, TournamentError> {
    if status != Status::Running {
        return Err(TournamentError::NotRunning);
    }
    if t.has_unfinished() {
        return Err(TournamentError::RoundUnderWay);
    }
    if t.ends_at().is_some_and(|end| now < end) {
        return Err(TournamentError::TooEarly);
    }
    Ok(vec![TournamentEvent::TournamentFinished {}])
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

#[cfg(test)]
mod tests;
