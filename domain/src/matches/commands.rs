//! The commands a match accepts, each stamped with the time it is decided at.

use time::OffsetDateTime;
use uuid::Uuid;

use super::events::{FirstMoveRule, LeaveReason, MovedBy, Occupant};
use super::settings::Settings;
use crate::games::GameId;
use crate::ids::{PlayerId, Seat, TournamentId};

/// A command with the time it happens; the events it causes carry that time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    pub at: OffsetDateTime,
    pub action: Action,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    CreateMatch(CreateMatch),
    /// A move for `seat`: by its human (which also brings an away player back) or by the CPU
    /// that controls the seat.
    PlayMove {
        seat: Seat,
        mv: String,
        by: MovedBy,
    },
    Leave {
        seat: Seat,
        reason: LeaveReason,
    },
    Return {
        seat: Seat,
    },
    /// The turn of `seat` ran out: the CPU plays `cpu_move` (chosen by the caller's CPU player on
    /// the current position) for that one turn.
    TimeOutTurn {
        seat: Seat,
        cpu_move: String,
    },
    /// A correspondence game's player to move, `seat`, let their days run out: they lose.
    LoseOnTime {
        seat: Seat,
    },
    /// `seat` left and did not come back within `return_seconds`: the CPU at `level` plays it
    /// until its player returns.
    TakeOver {
        seat: Seat,
        level: u8,
        return_seconds: u32,
    },
    Resign {
        seat: Seat,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateMatch {
    pub game: GameId,
    pub seats: [Occupant; 2],
    pub settings: Settings,
    pub first_seat: Seat,
    pub first_rule: FirstMoveRule,
    pub ranked: bool,
    pub room_id: Option<Uuid>,
    /// The tournament this match is a game of, if any.
    pub tournament_id: Option<TournamentId>,
    pub cpu_seed: u64,
}

impl CreateMatch {
    /// Whether its players are seated in it as in a live ranked match: ranked and real-time.
    /// "One live ranked match per player" is a rule of real-time play; a rated correspondence
    /// game seats nobody (a player may have many open at once).
    pub fn seats_players(&self) -> bool {
        self.ranked && !self.settings.is_correspondence()
    }

    /// Its human players, seat 1's first.
    pub fn players(&self) -> Vec<PlayerId> {
        self.seats.iter().filter_map(|o| o.player_id()).collect()
    }
}
