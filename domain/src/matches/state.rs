//! The state of a match as the fold of its events (`evolve`), and what the state tells callers.

use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::commands::Command;
use super::decide::DomainError;
use super::events::{LeaveReason, MatchEnded, MatchEvent, MovedBy, Occupant, Stamped};
use super::settings::Settings;
use crate::aggregate::Aggregate;
use crate::games::{AnyPosition, GameId, Side};
use crate::ids::{PlayerId, Seat};

/// The lowest CPU level whose moves are long searches (levels 4 and 5).
pub const STRONG_CPU_LEVEL: u8 = 4;

/// The human of a match with these seats if it is a solo match against the CPU at level 4 or
/// 5 (the long searches).
pub fn strong_solo_player(seats: &[Occupant; 2]) -> Option<PlayerId> {
    match *seats {
        [Occupant::Human { player_id }, Occupant::Cpu { level }]
        | [Occupant::Cpu { level }, Occupant::Human { player_id }]
            if level >= STRONG_CPU_LEVEL =>
        {
            Some(player_id)
        }
        _ => None,
    }
}

/// Where the player of a human seat is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    Here,
    /// Left (or went silent) at `since`; nobody plays for them yet.
    Away {
        since: OffsetDateTime,
        reason: LeaveReason,
    },
    /// Left at `since` and the CPU at `level` plays the seat until they return.
    Replaced {
        since: OffsetDateTime,
        level: u8,
    },
}

/// Who is moving for a seat right now (the match view's `controller`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Controller {
    Human,
    Cpu,
    Away,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeatState {
    pub occupant: Occupant,
    pub presence: Presence,
    /// How many times the seat's player left on their own (`player_left`, reason `left`).
    pub leaves: u32,
    /// When the seat's player last acted in the log: their last move or return, else the
    /// match's creation. (Being seen without acting, a look at the match, is not an event.)
    pub acted_at: OffsetDateTime,
}

impl SeatState {
    pub fn player_id(&self) -> Option<PlayerId> {
        self.occupant.player_id()
    }

    pub fn controller(&self) -> Controller {
        match (self.occupant, self.presence) {
            (Occupant::Cpu { .. }, _) => Controller::Cpu,
            (_, Presence::Here) => Controller::Human,
            (_, Presence::Away { .. }) => Controller::Away,
            (_, Presence::Replaced { .. }) => Controller::Cpu,
        }
    }

    /// The CPU level moving for this seat, if a CPU does.
    pub fn cpu_level(&self) -> Option<u8> {
        match (self.occupant, self.presence) {
            (Occupant::Cpu { level }, _) => Some(level),
            (_, Presence::Replaced { level, .. }) => Some(level),
            _ => None,
        }
    }
}

/// A match that exists: everything the events said, folded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    pub game: GameId,
    pub seats: [SeatState; 2],
    pub settings: Settings,
    pub first_seat: Seat,
    pub ranked: bool,
    pub room_id: Option<Uuid>,
    pub tournament_id: Option<crate::ids::TournamentId>,
    pub cpu_seed: u64,
    pub position: AnyPosition,
    /// Moves in canonical notation, passes omitted.
    pub moves: Vec<String>,
    pub created_at: OffsetDateTime,
    /// When the side to move got the turn (the turn limit counts from here).
    pub turn_started_at: OffsetDateTime,
    pub result: Option<MatchEnded>,
    pub ended_at: Option<OffsetDateTime>,
}

impl Match {
    pub fn is_finished(&self) -> bool {
        self.result.is_some()
    }

    /// The human of a solo match against the CPU at level 4 or 5 (the long searches), if this
    /// match is one.
    pub fn strong_solo_player(&self) -> Option<PlayerId> {
        strong_solo_player(&[self.seats[0].occupant, self.seats[1].occupant])
    }

    pub fn seat(&self, seat: Seat) -> &SeatState {
        &self.seats[seat.index()]
    }

    /// The seat playing `side` (the first seat plays red / black).
    pub fn seat_of(&self, side: Side) -> Seat {
        match side {
            Side::First => self.first_seat,
            Side::Second => self.first_seat.other(),
        }
    }

    pub fn side_of(&self, seat: Seat) -> Side {
        if seat == self.first_seat {
            Side::First
        } else {
            Side::Second
        }
    }

    /// The colour letter of a seat (`R`/`Y`, `B`/`W`).
    pub fn color_of(&self, seat: Seat) -> char {
        self.position.color(self.side_of(seat))
    }

    /// The seat to move; `None` once the match is over.
    pub fn to_move(&self) -> Option<Seat> {
        if self.is_finished() {
            None
        } else {
            Some(self.seat_of(self.position.side_to_move()))
        }
    }

    /// When the current turn times out (its turn limit, or its days per move); `None` without a
    /// clock or once finished.
    pub fn deadline(&self) -> Option<OffsetDateTime> {
        if self.is_finished() {
            return None;
        }
        if let Some(days) = self.settings.days_per_move {
            return Some(self.turn_started_at + Duration::days(i64::from(days.get())));
        }
        let limit = self.settings.turn_seconds?;
        Some(self.turn_started_at + Duration::seconds(i64::from(limit.get())))
    }

    /// Whether this is a correspondence game (days per move: no presence, no CPU, a loss on
    /// time).
    pub fn is_correspondence(&self) -> bool {
        self.settings.is_correspondence()
    }

    /// The seat whose move the CPU owes now (a CPU seat or a stand-in), if any.
    pub fn cpu_to_move(&self) -> Option<(Seat, u8)> {
        let seat = self.to_move()?;
        self.seat(seat).cpu_level().map(|level| (seat, level))
    }
}

/// The fold of a match stream: nothing before `match_created`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchState {
    created: Option<Match>,
    version: u64,
}

impl MatchState {
    /// Folds a whole stream.
    pub fn replay<'a>(events: impl IntoIterator<Item = &'a Stamped>) -> MatchState {
        let mut state = MatchState::default();
        for e in events {
            evolve(&mut state, e);
        }
        state
    }

    pub fn get(&self) -> Option<&Match> {
        self.created.as_ref()
    }

    /// How many events the stream holds: the `expected_version` of the next append.
    pub fn version(&self) -> u64 {
        self.version
    }
}

/// Applies one event. Checks nothing: events are facts that `decide` already checked.
pub fn evolve(state: &mut MatchState, stamped: &Stamped) {
    evolve_at(state, stamped.at, &stamped.event);
}

/// [`evolve`] with the event and its time apart.
fn evolve_at(state: &mut MatchState, at: OffsetDateTime, event: &MatchEvent) {
    state.version += 1;
    if let MatchEvent::MatchCreated(c) = event {
        state.created = Some(Match {
            game: c.game,
            seats: c.seats.map(|occupant| SeatState {
                occupant,
                presence: Presence::Here,
                leaves: 0,
                acted_at: at,
            }),
            settings: c.settings,
            first_seat: c.first_seat,
            ranked: c.ranked,
            room_id: c.room_id,
            tournament_id: c.tournament_id,
            cpu_seed: c.cpu_seed,
            position: AnyPosition::start(c.game),
            moves: Vec::new(),
            created_at: at,
            turn_started_at: at,
            result: None,
            ended_at: None,
        });
        return;
    }
    let Some(m) = state.created.as_mut() else {
        return;
    };
    match event {
        MatchEvent::MatchCreated(_) => {}
        MatchEvent::MovePlayed(p) => {
            // A stored move was legal when decided; replaying the same rules cannot refuse it.
            if m.position.play(&p.mv).is_ok() {
                m.moves.push(p.mv.clone());
            }
            m.turn_started_at = at;
            if p.by == MovedBy::Human {
                m.seats[p.seat.index()].acted_at = at;
            }
        }
        MatchEvent::Passed(_) => {
            m.position.pass();
            m.turn_started_at = at;
        }
        MatchEvent::PlayerLeft(l) => {
            let seat = &mut m.seats[l.seat.index()];
            seat.presence = Presence::Away {
                since: at,
                reason: l.reason,
            };
            if l.reason == LeaveReason::Left {
                seat.leaves += 1;
            }
        }
        MatchEvent::PlayerReturned(r) => {
            let seat = &mut m.seats[r.seat.index()];
            seat.presence = Presence::Here;
            seat.acted_at = at;
        }
        MatchEvent::CpuTookOver(t) => {
            let since = match m.seats[t.seat.index()].presence {
                Presence::Away { since, .. } | Presence::Replaced { since, .. } => since,
                Presence::Here => at,
            };
            m.seats[t.seat.index()].presence = Presence::Replaced {
                since,
                level: t.level,
            };
        }
        MatchEvent::TurnTimedOut(_) | MatchEvent::Resigned(_) => {}
        MatchEvent::MatchEnded(e) => {
            m.result = Some(e.clone());
            m.ended_at = Some(at);
        }
    }
}

/// A match's stream, `match-<id>`. Its commands carry the time they are decided at.
impl Aggregate for MatchState {
    type Id = crate::ids::MatchId;
    type State = MatchState;
    type Event = MatchEvent;
    type Command = Command;
    type Error = DomainError;

    const KIND: &'static str = "match";

    fn event_type(event: &MatchEvent) -> &'static str {
        event.event_type()
    }

    fn schema_version(event: &MatchEvent) -> i16 {
        event.schema_version()
    }

    fn data(event: &MatchEvent) -> serde_json::Value {
        event.data()
    }

    fn decode(
        event_type: &str,
        schema_version: i16,
        data: &serde_json::Value,
    ) -> Result<MatchEvent, String> {
        MatchEvent::decode(event_type, schema_version, data).map_err(|e| e.to_string())
    }

    fn decide(state: &MatchState, command: &Command) -> Result<Vec<MatchEvent>, DomainError> {
        super::decide(state, command)
    }

    fn evolve(state: &mut MatchState, at: OffsetDateTime, event: &MatchEvent) {
        evolve_at(state, at, event);
    }

    fn version(state: &MatchState) -> u64 {
        state.version
    }
}
