//! A match's `match_work` row: what it holds (when the match next needs the server, whose
//! presence to watch, the fair-play guard of a ranked match) and when a command writes it (only
//! when the row it has no longer serves, or would soon bring the workers for nothing).

use time::{Duration, OffsetDateTime};

use domain::boundary::Guard;
use domain::ids::Seat;
use domain::matches::{Match, Occupant, Presence};

use crate::live::LivePath;
use crate::live::commit::{Pending, WorkRow};
use crate::live::loaded::Loaded;

/// The `match_work` row of a match in a given state: when its next timer is due, and whose
/// presence to watch; `seen` marks a seat as seen now. Finished matches leave the table; a
/// correspondence game has none.
pub fn work_row(
    app: &LivePath,
    loaded: &Loaded,
    seen: Option<Seat>,
    now: OffsetDateTime,
) -> Option<WorkRow> {
    let m = loaded.state.get()?;
    if m.is_correspondence() {
        // Its deadline is a row of its own (`live::correspondence`), outside the rows the
        // workers scan for real-time play.
        return None;
    }
    let version = loaded.state.version() as i64;
    let match_id = loaded.id.as_uuid();
    if m.is_finished() {
        return Some(WorkRow {
            match_id,
            version,
            pending: None,
        });
    }
    let seen_at = |s: Seat| {
        if seen == Some(s) {
            now
        } else {
            m.seat(s).acted_at
        }
    };
    Some(WorkRow {
        match_id,
        version,
        pending: Some(Pending {
            state_due: state_due(m, app.play.return_seconds, now),
            watch: watched(m),
            seen: [seen_at(Seat::ONE), seen_at(Seat::TWO)],
            strong_player: m.strong_solo_player().map(|p| p.as_uuid()),
            live_key: m
                .ranked
                .then(|| Guard::of_line(&m.position, &m.moves, app.play.public_plies.of(m.game)))
                .flatten()
                .map(|g| (g.key(), g.depth())),
            players: m
                .seats
                .iter()
                .filter_map(|s| s.player_id())
                .map(|p| p.as_uuid())
                .collect(),
        }),
    })
}

/// The work row a command taking the match from `before` to `after` writes: none when the row
/// the match has still serves it ([`still_serves`]), as it does for most moves.
pub fn work_after(
    app: &LivePath,
    before: &Loaded,
    after: &Loaded,
    seen: Option<Seat>,
    at: OffsetDateTime,
) -> Option<WorkRow> {
    let row = work_row(app, after, seen, at)?;
    (!still_serves(app, before, &row, at)).then_some(row)
}

/// How far ahead a command writes again a row that would otherwise bring the workers: a row
/// whose due time or whose times seen (with the presence limit) come within this long is
/// written with the command, so that a match in play keeps the workers away.
const ROW_AHEAD: Duration = Duration::seconds(10);

/// Whether the work row that served the match in state `before` still serves it once `after`
/// (the row its new state asks for) is its state, so that the command need not write it.
///
/// The workers read three things in a row: when the match is next due, whose presence to watch
/// (and since when), and the fair-play guard of a ranked match. A row serves while the time it
/// holds is no later than the match's next due time (a worker that comes early finds nothing to
/// do and writes the row afresh), and while its watch and guard are the match's. Its times seen
/// may lag: the workers take a seat's last act from the match itself
/// ([`domain::matches::SeatState::acted_at`]). By induction over the match's versions, whose
/// commands commit in order, the row in the table always serves the match's last version: a
/// command either leaves a row that served its `before` and serves its `after`, or writes
/// `after`'s (an older write never replaces a newer row's timers).
///
/// Leaving a row that serves is safe but may bring the workers for nothing; so a row this
/// instance did not write (no hint: another instance's, or one never written here) is written
/// again, and so is one that would bring the workers within [`ROW_AHEAD`] (a match in play
/// writes its row about once per turn limit or presence limit, not once per move).
fn still_serves(app: &LivePath, before: &Loaded, after: &WorkRow, at: OffsetDateTime) -> bool {
    let (Some(m), Some(next), Some(row)) = (before.state.get(), after.pending.as_ref(), before.row)
    else {
        return false;
    };
    let soon = at + ROW_AHEAD;
    let presence = Duration::seconds(i64::from(app.play.presence_seconds));
    if row.due.is_some_and(|d| d <= soon)
        || Seat::BOTH
            .into_iter()
            .any(|s| next.watch[s.index()] && row.seen[s.index()] + presence <= soon)
    {
        return false;
    }
    // A guard published for the boundary changes with every move past the public opening.
    // (A finished match or a correspondence game asks for no row: `after` has none to serve;
    // the strong-solo player follows from the seats' occupants, which never change.)
    if next.live_key.is_some() || watched(m) != next.watch {
        return false;
    }
    // The row's time is still ahead, and the match's next is no earlier.
    let was = state_due(m, app.play.return_seconds, at);
    was.is_none_or(|was| was > at) && due_serves(was, next.state_due)
}

/// Whether a row holding due time `held` serves a match whose next due time is `next`: it
/// brings the workers no later than the match needs them.
pub fn due_serves(held: Option<OffsetDateTime>, next: Option<OffsetDateTime>) -> bool {
    match (held, next) {
        (None, next) => next.is_none(),
        (Some(held), next) => next.is_none_or(|d| d >= held),
    }
}

/// The seats whose presence the workers watch: the humans at the table (of a real-time match:
/// a correspondence game has no work row, and nobody is away in it).
fn watched(m: &Match) -> [bool; 2] {
    Seat::BOTH.map(|s| {
        matches!(m.seat(s).occupant, Occupant::Human { .. }) && m.seat(s).presence == Presence::Here
    })
}

/// When the match's own state next needs the server: now for a CPU move, the turn deadline, or
/// the end of an away player's grace period.
fn state_due(m: &Match, return_seconds: u32, now: OffsetDateTime) -> Option<OffsetDateTime> {
    let mut due: Vec<OffsetDateTime> = Vec::new();
    if m.cpu_to_move().is_some() {
        due.push(now);
    }
    due.extend(m.deadline());
    for seat in Seat::BOTH {
        if let Presence::Away { since, .. } = m.seat(seat).presence {
            due.push(since + Duration::seconds(i64::from(return_seconds)));
        }
    }
    due.into_iter().min()
}
