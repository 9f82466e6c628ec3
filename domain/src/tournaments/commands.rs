//! The commands a tournament accepts, each decided against its state at the time beside it.

use crate::ids::{MatchId, PlayerId};

use super::events::{PairingMade, TournamentCreated};
use super::state::Bye;

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
