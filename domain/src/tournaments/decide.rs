//! `decide`: checks a command against the state of a tournament at a given time and says which
//! events it causes, refusing what no pairing may do.

use std::collections::HashSet;

use time::OffsetDateTime;

use crate::ids::{MatchId, PlayerId};

use super::arena;
use super::commands::Command;
use super::errors::TournamentError;
use super::events::{Format, PairingMade, TournamentCreated, TournamentEvent};
use super::limits::{
    ARENA_CLOSES_BEFORE_END, ARENA_MINUTES, NAME_MAX, PLAYERS_MAX, PLAYERS_MIN, ROUND_ROBIN_MAX,
    SCHEDULED_AT_MOST, SWISS_ROUNDS,
};
use super::state::{Bye, Entrant, EntrantStatus, Status, Tournament};

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
    if c.max_players < PLAYERS_MIN || c.max_players > most {
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
