//! A match as the command path and the live streams know it: its folded state, its players'
//! names and the hash of its last event; and how a stored event is read back into the domain.

use std::sync::Arc;

use domain::ids::{MatchId, PlayerId, Seat};
use domain::matches::{Match, MatchState, Stamped};
use eventlog::{Hash, RecordedEvent};

use crate::error::Error;
use crate::live::cache::Names;
use crate::reasons::{Missing, Refused};
use crate::views::MatchView;

/// A match as the command path knows it: its folded state and its players' names.
#[derive(Clone)]
pub struct Loaded {
    pub id: MatchId,
    pub state: MatchState,
    pub names: Arc<Names>,
    /// The hash of the match's event at `state.version()`, when known: a command on it then
    /// takes the log's fast path ([`eventlog::HeadAppend`]).
    pub head: Option<Hash>,
    /// The work row this instance last wrote for the match, when it did: a hint of when the row
    /// brings the workers, which a command uses to write it again before it does.
    pub row: Option<RowHint>,
}

/// When a match's work row, as written, brings the workers: its due time and its times seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowHint {
    pub due: Option<time::OffsetDateTime>,
    pub seen: [time::OffsetDateTime; 2],
}

impl Loaded {
    pub fn get(&self) -> Result<&Match, Error> {
        self.state.get().ok_or(Error::NotFound(Missing::Match))
    }

    /// The seat of a player who must have one (a `forbidden` answer otherwise).
    pub fn seat_required(&self, player: PlayerId) -> Result<Seat, Error> {
        self.seat_of(player)
            .ok_or_else(|| Error::Forbidden(Refused::NoSeat))
    }

    /// The seat of a player in this match, if they have one.
    pub fn seat_of(&self, player: PlayerId) -> Option<Seat> {
        let m = self.state.get()?;
        Seat::BOTH
            .into_iter()
            .find(|&s| m.seat(s).player_id() == Some(player))
    }

    /// The match view.
    pub fn view(&self) -> Result<MatchView, Error> {
        let m = self.get()?;
        Ok(MatchView::new(
            self.id,
            m,
            self.state.version(),
            &self.names,
        ))
    }
}

impl RowHint {
    /// The hint of a row as it is written.
    pub fn of(row: &crate::live::commit::Pending) -> RowHint {
        RowHint {
            due: row.state_due,
            seen: row.seen,
        }
    }
}

/// A stored event as the domain reads it.
pub fn stamped(e: &RecordedEvent) -> Result<Stamped, Error> {
    Ok(Stamped {
        at: e.recorded_at,
        event: crate::aggregates::decode::<MatchState>(e)?,
    })
}
