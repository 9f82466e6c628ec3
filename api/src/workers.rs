//! Background work: turn timeouts, presence, CPU stand-ins and CPU moves, driven by the
//! `match_work` rows in PostgreSQL so that any number of instances can run it.
//!
//! A pass claims due rows with a short lease (`FOR UPDATE SKIP LOCKED`, then `lease_until`), so
//! two instances never work on one match at once; and every action is a command whose id
//! derives from the match version, with that version expected, so even a lease that expired
//! mid-work cannot make a timeout fire twice or the CPU move twice.

use std::time::Duration as StdDuration;

use time::Duration;
use uuid::Uuid;

use domain::ids::{MatchId, Seat};
use domain::matches::{Action, LeaveReason, Occupant, Presence};

use crate::error::ApiError;
use crate::play::{self, Loaded, STAND_IN_LEVEL, derived_id, unexpected};
use crate::state::AppState;

/// How long a claimed match stays with the instance that claimed it.
const LEASE: Duration = Duration::seconds(30);

const CLAIM: &str = "UPDATE match_work SET lease_until = $3 \
    WHERE match_id IN ( \
        SELECT match_id FROM match_work \
        WHERE (lease_until IS NULL OR lease_until < $1) \
          AND (state_due <= $1 OR (watch1 AND seen1 <= $2) OR (watch2 AND seen2 <= $2)) \
        ORDER BY match_id LIMIT 32 FOR UPDATE SKIP LOCKED) \
    RETURNING match_id, seen1, seen2";

/// Runs one pass over the due matches; returns how many it worked on.
pub async fn run_due(app: &AppState) -> Result<usize, ApiError> {
    let now = app.now();
    let presence_limit = now - Duration::seconds(i64::from(app.play.presence_seconds));
    let rows = {
        let client = app.pool.get().await.map_err(unexpected)?;
        client
            .query(CLAIM, &[&now, &presence_limit, &(now + LEASE)])
            .await
            .map_err(unexpected)?
    };
    let claimed = rows.len();
    for row in rows {
        let id = MatchId::from_uuid(row.get::<_, Uuid>(0));
        let seen: [time::OffsetDateTime; 2] = [row.get(1), row.get(2)];
        if let Err(e) = work_on(app, id, seen).await {
            // The lease stays: the match is tried again when it expires, not in a hot loop.
            tracing::warn!(match_id = %id, error = %e, "background work failed");
        }
    }
    Ok(claimed)
}

/// Runs passes until nothing is due (tests call this after moving the clock); bounded, so a
/// match that stays due cannot hold it forever.
pub async fn run_until_idle(app: &AppState) -> Result<usize, ApiError> {
    let mut total = 0;
    for _ in 0..64 {
        let n = run_due(app).await?;
        if n == 0 {
            break;
        }
        total += n;
    }
    Ok(total)
}

/// The background loop of `discs serve`.
pub async fn run_forever(app: AppState, interval: StdDuration) {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if let Err(e) = run_until_idle(&app).await {
            tracing::warn!(error = %e, "background pass failed");
        }
    }
}

/// Does everything that is due on one match, then writes its work row back (lease released).
async fn work_on(
    app: &AppState,
    id: MatchId,
    seen: [time::OffsetDateTime; 2],
) -> Result<(), ApiError> {
    let now = app.now();
    let presence = Duration::seconds(i64::from(app.play.presence_seconds));
    let mut loaded = play::load(app, id).await?;
    for _ in 0..128 {
        let Some(action) = due_action(app, &loaded, seen, presence, now).await? else {
            break;
        };
        let version = loaded.state.version();
        let command_id = derived_id(id, action_name(&action), version);
        loaded = match play::execute_from(
            app,
            Some(loaded),
            id,
            command_id,
            action,
            None,
            Some(version),
        )
        .await
        {
            Ok(next) => next,
            Err(ApiError::VersionConflict { .. }) => play::load(app, id).await?,
            Err(e) => return Err(e),
        };
    }
    play::write_work(app, &loaded, None, play::Commit::Release).await
}

fn action_name(a: &Action) -> &'static str {
    match a {
        Action::PlayMove { .. } => "cpu",
        Action::TimeOutTurn { .. } => "timeout",
        Action::TakeOver { .. } => "takeover",
        Action::Leave { .. } => "absent",
        _ => "other",
    }
}

/// The first thing due on a match at `now`, in order: a CPU move, a timed-out turn, a stand-in
/// for a player away too long, a player gone silent. CPU choices run on a blocking thread.
async fn due_action(
    app: &AppState,
    loaded: &Loaded,
    seen: [time::OffsetDateTime; 2],
    presence: Duration,
    now: time::OffsetDateTime,
) -> Result<Option<Action>, ApiError> {
    let Some(m) = loaded.state.get() else {
        return Ok(None);
    };
    if m.is_finished() {
        return Ok(None);
    }
    if let Some((seat, level)) = m.cpu_to_move() {
        let mv = play::cpu_move(m.position, level, m.cpu_seed).await?;
        return Ok(mv.map(|mv| Action::PlayMove {
            seat,
            mv,
            by: domain::matches::MovedBy::Cpu,
        }));
    }
    if let (Some(deadline), Some(seat)) = (m.deadline(), m.to_move())
        && deadline <= now
    {
        let cpu_move = play::cpu_move(m.position, STAND_IN_LEVEL, m.cpu_seed).await?;
        return Ok(cpu_move.map(|cpu_move| Action::TimeOutTurn { seat, cpu_move }));
    }
    let return_after = Duration::seconds(i64::from(app.play.return_seconds));
    for seat in Seat::BOTH {
        if let Presence::Away { since, .. } = m.seat(seat).presence
            && since + return_after <= now
        {
            return Ok(Some(Action::TakeOver {
                seat,
                level: STAND_IN_LEVEL,
                return_seconds: app.play.return_seconds,
            }));
        }
    }
    for seat in Seat::BOTH {
        let s = m.seat(seat);
        if matches!(s.occupant, Occupant::Human { .. })
            && s.presence == Presence::Here
            && seen[seat.index()] + presence <= now
        {
            return Ok(Some(Action::Leave {
                seat,
                reason: LeaveReason::Absent,
            }));
        }
    }
    Ok(None)
}
