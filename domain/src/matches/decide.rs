//! `decide`: checks a command against the state of a match and says which events it causes.

use std::collections::BTreeMap;

use time::Duration;

use super::commands::{Action, Command, CreateMatch};
use super::events::{
    CpuTookOver, EndedBecause, MatchCreated, MatchEnded, MatchEvent, MovePlayed, MovedBy, Occupant,
    Outcome, Passed, PlayerLeft, PlayerReturned, Resigned, TurnTimedOut,
};
use super::state::{Match, MatchState, Presence};
use crate::games::{AnyPosition, GameId, MoveError, Side};
use crate::ids::Seat;

/// The CPU levels a seat may have (1 weakest .. 5 strongest).
pub const CPU_LEVELS: std::ops::RangeInclusive<u8> = 1..=5;

/// The level of a CPU seat when none is asked for.
pub const CPU_DEFAULT_LEVEL: u8 = 2;

/// Why a command is refused. Nothing is written for a refused command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    #[error("the match already exists")]
    AlreadyCreated,
    #[error("the match does not exist")]
    NotCreated,
    #[error("the match is over")]
    MatchFinished,
    #[error("seat {0} is not a human seat")]
    NotAHumanSeat(Seat),
    #[error("seat {0} is not played by the CPU")]
    NotCpuControlled(Seat),
    #[error("it is not seat {0}'s turn")]
    NotYourTurn(Seat),
    #[error("{0}")]
    IllegalMove(MoveError),
    #[error("seat {0} is already away")]
    AlreadyAway(Seat),
    #[error("seat {0} is not away")]
    NotAway(Seat),
    #[error("the CPU already plays seat {0}")]
    AlreadyReplaced(Seat),
    #[error("this match has no turn limit")]
    NoTurnLimit,
    #[error("the turn has not run out yet")]
    TooEarly,
    #[error("CPU level {0} does not exist (1..5)")]
    BadCpuLevel(u8),
    #[error("one player cannot take both seats")]
    SamePlayerTwice,
    #[error("a ranked match needs two human players")]
    RankedNeedsHumans,
    #[error("{0} has no setting show_legal_moves = false")]
    SettingNotForGame(GameId),
    #[error("a match has one clock: turn_seconds or days_per_move")]
    TwoClocks,
    /// Nobody is away in a correspondence game and the CPU never plays one.
    #[error("not in a correspondence game")]
    Correspondence,
    /// A turn limit's timeout (the CPU's move) asked of a correspondence game, or a loss on
    /// time of a real-time one.
    #[error("this match has another clock")]
    OtherClock,
}

/// Decides the events a command causes, or refuses it.
pub fn decide(state: &MatchState, cmd: &Command) -> Result<Vec<MatchEvent>, DomainError> {
    if let Action::CreateMatch(create) = &cmd.action {
        if state.get().is_some() {
            return Err(DomainError::AlreadyCreated);
        }
        return create_match(create);
    }
    let m = state.get().ok_or(DomainError::NotCreated)?;
    if m.is_finished() {
        return Err(DomainError::MatchFinished);
    }
    match &cmd.action {
        Action::CreateMatch(_) => Err(DomainError::AlreadyCreated),
        Action::PlayMove { seat, mv, by } => play_move(m, *seat, mv, *by),
        Action::Leave { seat, reason } => {
            human(m, *seat)?;
            if m.is_correspondence() {
                return Err(DomainError::Correspondence);
            }
            match m.seat(*seat).presence {
                Presence::Here => Ok(vec![MatchEvent::PlayerLeft(PlayerLeft {
                    seat: *seat,
                    reason: *reason,
                })]),
                _ => Err(DomainError::AlreadyAway(*seat)),
            }
        }
        Action::Return { seat } => {
            human(m, *seat)?;
            match m.seat(*seat).presence {
                Presence::Here => Err(DomainError::NotAway(*seat)),
                _ => Ok(vec![MatchEvent::PlayerReturned(PlayerReturned {
                    seat: *seat,
                })]),
            }
        }
        Action::TimeOutTurn { seat, cpu_move } => {
            ran_out(m, *seat, false, cmd.at)?;
            let mut events = vec![MatchEvent::TurnTimedOut(TurnTimedOut { seat: *seat })];
            events.extend(move_effects(m, *seat, cpu_move, MovedBy::Cpu)?);
            Ok(events)
        }
        Action::LoseOnTime { seat } => {
            ran_out(m, *seat, true, cmd.at)?;
            Ok(vec![
                MatchEvent::TurnTimedOut(TurnTimedOut { seat: *seat }),
                MatchEvent::MatchEnded(MatchEnded {
                    outcome: Outcome::Win,
                    winner_seat: Some(seat.other()),
                    reason: EndedBecause::OutOfTime,
                    discs: discs(&m.position),
                }),
            ])
        }
        Action::TakeOver {
            seat,
            level,
            return_seconds,
        } => {
            human(m, *seat)?;
            if m.is_correspondence() {
                return Err(DomainError::Correspondence);
            }
            if !CPU_LEVELS.contains(level) {
                return Err(DomainError::BadCpuLevel(*level));
            }
            match m.seat(*seat).presence {
                Presence::Here => Err(DomainError::NotAway(*seat)),
                Presence::Replaced { .. } => Err(DomainError::AlreadyReplaced(*seat)),
                Presence::Away { since, .. } => {
                    if cmd.at < since + Duration::seconds(i64::from(*return_seconds)) {
                        return Err(DomainError::TooEarly);
                    }
                    Ok(vec![MatchEvent::CpuTookOver(CpuTookOver {
                        seat: *seat,
                        level: *level,
                    })])
                }
            }
        }
        Action::Resign { seat } => {
            human(m, *seat)?;
            let winner = seat.other();
            Ok(vec![
                MatchEvent::Resigned(Resigned { seat: *seat }),
                MatchEvent::MatchEnded(MatchEnded {
                    outcome: Outcome::Win,
                    winner_seat: Some(winner),
                    reason: EndedBecause::Resigned,
                    discs: discs(&m.position),
                }),
            ])
        }
    }
}

fn create_match(c: &CreateMatch) -> Result<Vec<MatchEvent>, DomainError> {
    for occupant in &c.seats {
        if let Occupant::Cpu { level } = occupant
            && !CPU_LEVELS.contains(level)
        {
            return Err(DomainError::BadCpuLevel(*level));
        }
    }
    if let [
        Occupant::Human { player_id: a },
        Occupant::Human { player_id: b },
    ] = c.seats
        && a == b
    {
        return Err(DomainError::SamePlayerTwice);
    }
    if c.ranked && c.seats.iter().any(|o| matches!(o, Occupant::Cpu { .. })) {
        return Err(DomainError::RankedNeedsHumans);
    }
    match c.settings.validate_for(c.game) {
        Ok(()) => {}
        Err(crate::matches::SettingsError::TwoClocks) => return Err(DomainError::TwoClocks),
        Err(_) => return Err(DomainError::SettingNotForGame(c.game)),
    }
    if c.settings.is_correspondence() && c.seats.iter().any(|o| matches!(o, Occupant::Cpu { .. })) {
        return Err(DomainError::Correspondence);
    }
    Ok(vec![MatchEvent::MatchCreated(MatchCreated {
        game: c.game,
        seats: c.seats,
        settings: c.settings,
        first_seat: c.first_seat,
        first_rule: c.first_rule,
        ranked: c.ranked,
        room_id: c.room_id,
        tournament_id: c.tournament_id,
        cpu_seed: c.cpu_seed,
        board: c.game.board(),
    })])
}

/// `Ok` when `seat`'s turn, under a clock of the kind asked for (days per move when
/// `correspondence`, else a turn limit), has run out at `at`.
fn ran_out(
    m: &Match,
    seat: Seat,
    correspondence: bool,
    at: time::OffsetDateTime,
) -> Result<(), DomainError> {
    if m.is_correspondence() != correspondence {
        return Err(DomainError::OtherClock);
    }
    let deadline = m.deadline().ok_or(DomainError::NoTurnLimit)?;
    if m.to_move() != Some(seat) {
        return Err(DomainError::NotYourTurn(seat));
    }
    if at < deadline {
        return Err(DomainError::TooEarly);
    }
    Ok(())
}

fn human(m: &Match, seat: Seat) -> Result<(), DomainError> {
    match m.seat(seat).occupant {
        Occupant::Human { .. } => Ok(()),
        Occupant::Cpu { .. } => Err(DomainError::NotAHumanSeat(seat)),
    }
}

fn play_move(m: &Match, seat: Seat, mv: &str, by: MovedBy) -> Result<Vec<MatchEvent>, DomainError> {
    let state = m.seat(seat);
    let mut events = Vec::new();
    match by {
        MovedBy::Human => {
            human(m, seat)?;
            if m.to_move() != Some(seat) {
                return Err(DomainError::NotYourTurn(seat));
            }
            if state.presence != Presence::Here {
                // Playing is coming back: the seat is theirs again.
                m.position
                    .check_move(mv)
                    .map_err(DomainError::IllegalMove)?;
                events.push(MatchEvent::PlayerReturned(PlayerReturned { seat }));
            }
        }
        MovedBy::Cpu => {
            if state.cpu_level().is_none() {
                return Err(DomainError::NotCpuControlled(seat));
            }
            if m.to_move() != Some(seat) {
                return Err(DomainError::NotYourTurn(seat));
            }
        }
    }
    events.extend(move_effects(m, seat, mv, by)?);
    Ok(events)
}

/// The events of placing a disc: the move, then the opponent's forced pass or the end.
fn move_effects(
    m: &Match,
    seat: Seat,
    mv: &str,
    by: MovedBy,
) -> Result<Vec<MatchEvent>, DomainError> {
    let mut position = m.position;
    let canonical = position.check_move(mv).map_err(DomainError::IllegalMove)?;
    position
        .play(&canonical)
        .map_err(DomainError::IllegalMove)?;
    let mut events = vec![MatchEvent::MovePlayed(MovePlayed {
        seat,
        mv: canonical,
        by,
    })];
    if let Some(end) = position.outcome() {
        let winner_seat = end.winner.map(|side| m.seat_of(side));
        events.push(MatchEvent::MatchEnded(MatchEnded {
            outcome: if winner_seat.is_some() {
                Outcome::Win
            } else {
                Outcome::Draw
            },
            winner_seat,
            reason: end.reason.into(),
            discs: discs(&position),
        }));
    } else if position.must_pass() {
        events.push(MatchEvent::Passed(Passed {
            seat: m.seat_of(position.side_to_move()),
        }));
    }
    Ok(events)
}

/// Discs on the board by colour letter, as `match_ended` records them.
fn discs(position: &AnyPosition) -> BTreeMap<char, u32> {
    let [first, second] = position.discs();
    BTreeMap::from([
        (position.color(Side::First), first),
        (position.color(Side::Second), second),
    ])
}
