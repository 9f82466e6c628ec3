//! Replay of a match ply by ply: the board, the side to move and its legal moves after each disc.

use super::events::{MatchEvent, Stamped};
use super::state::{MatchState, evolve};
use crate::ids::Seat;

/// The match as it stood after `ply` discs (ply 0 is the start).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlyView {
    pub ply: u32,
    /// Who placed this ply's disc; `None` at ply 0.
    pub seat: Option<Seat>,
    pub mv: Option<String>,
    pub board: Vec<String>,
    /// The seat to move after this ply (after any forced pass); `None` once the match is over.
    pub to_move: Option<Seat>,
    pub legal_moves: Vec<String>,
}

/// Folds a stream and keeps a view of every ply.
pub fn plies(events: &[Stamped]) -> Vec<PlyView> {
    let mut state = MatchState::default();
    let mut views: Vec<PlyView> = Vec::new();
    for stamped in events {
        evolve(&mut state, stamped);
        let Some(m) = state.get() else { continue };
        let view = |seat: Option<Seat>, mv: Option<String>| PlyView {
            ply: m.position.ply(),
            seat,
            mv,
            board: m.position.rows(),
            to_move: m.to_move(),
            legal_moves: if m.is_finished() {
                Vec::new()
            } else {
                m.position.legal_moves()
            },
        };
        match &stamped.event {
            MatchEvent::MatchCreated(_) => views.push(view(None, None)),
            MatchEvent::MovePlayed(p) => views.push(view(Some(p.seat), Some(p.mv.clone()))),
            MatchEvent::Passed(_) | MatchEvent::MatchEnded(_) => {
                if let Some(last) = views.last_mut() {
                    let refreshed = view(last.seat, last.mv.clone());
                    *last = refreshed;
                }
            }
            _ => {}
        }
    }
    views
}
