//! A player's standing in fair play (`domain::standing`): the admins' decisions, each an event of
//! the player's stream `player-<id>`, read from the log when it matters (a stream of a few
//! events): a banned player opens no ranked ticket and joins no room.

use time::OffsetDateTime;
use uuid::Uuid;

use domain::ids::PlayerId;
use domain::standing::{self, Decision, Standing, StandingEvent};
use eventlog::{AppendError, NewEvent, StreamAppend};

use crate::core::Core;
use crate::error::{Error, unexpected};
use crate::players;
use crate::reasons::{Invalid, Refused};

/// The stream of a player's standing.
pub fn stream(player: PlayerId) -> String {
    format!("player-{player}")
}

/// A player's standing, folded from their stream, and when its last decision was recorded.
pub async fn of(app: &Core, player: PlayerId) -> Result<(Standing, Option<OffsetDateTime>), Error> {
    let events = app
        .log
        .read_stream(&stream(player))
        .await
        .map_err(unexpected)?;
    let mut standing = Standing::default();
    let mut at = None;
    for e in events {
        if let Some(event) = StandingEvent::from_stored(&e.event_type, &e.data) {
            standing::evolve(&mut standing, event);
            at = Some(e.recorded_at);
        } else {
            standing.version += 1;
        }
    }
    Ok((standing, at))
}

/// `Err(Forbidden(Banned))` while an admin's last decision on `player` is a ban.
pub async fn refuse_banned(app: &Core, player: PlayerId) -> Result<(), Error> {
    if of(app, player).await?.0.banned() {
        Err(Error::Forbidden(Refused::Banned))
    } else {
        Ok(())
    }
}

/// Records `admin`'s decision on `player` (`not_found` for no such player; a ban needs a
/// reason), as the next event of the player's stream under the command `command_id` (a retry
/// writes nothing twice); the standing after it.
pub async fn decide(
    app: &Core,
    command_id: Uuid,
    admin: PlayerId,
    player: PlayerId,
    decision: Decision,
    reason: &str,
) -> Result<Standing, Error> {
    {
        let client = app.pool.get().await.map_err(unexpected)?;
        players::exists(&client, player).await?;
    }
    let event = standing::decide(admin, decision, reason).map_err(|e| match e {
        standing::StandingError::ReasonRequired => Invalid::BanReason,
        standing::StandingError::ReasonTooLong => Invalid::ReasonLength {
            max: standing::MAX_REASON,
        },
    })?;
    let (mut current, _) = of(app, player).await?;
    let append = StreamAppend {
        stream: stream(player),
        expected_version: current.version,
        events: vec![NewEvent {
            event_type: event.event_type().to_owned(),
            schema_version: StandingEvent::SCHEMA_VERSION,
            data: event.data(),
            actor: Some(admin.as_uuid()),
            recorded_at: app.now(),
        }],
    };
    match app.log.append(command_id, append).await {
        Ok(_) => {}
        Err(AppendError::Conflict {
            expected, actual, ..
        }) => {
            return Err(Error::VersionConflict {
                expected: u64::try_from(expected).unwrap_or(0),
                actual: u64::try_from(actual).unwrap_or(0),
            });
        }
        Err(e) => return Err(unexpected(e)),
    }
    standing::evolve(&mut current, event);
    Ok(current)
}
