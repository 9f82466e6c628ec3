//! An admin's decision on a player's standing, and how far a ban reaches. The decision is an
//! event of the player's stream (`crate::standing`); a ban, in the same transaction, also
//! cancels the player's waiting queue ticket (a `ticket_cancelled` of the ticket's stream, at
//! the version it was read at, and its `queue_slots` row) and marks the player in
//! `player_bans`, which the waves and the tournaments' organiser read to leave them out. After
//! it commits, the ban pauses the player in each tournament of theirs that has not ended,
//! through the tournaments' own command path (a `player_paused` each). A wave that matched the
//! ticket first makes the ban's append conflict on the ticket: the ban is decided again, on a
//! ticket no longer waiting. A ticket whose opening committed after the ban read the slot is
//! closed under the player's standing lock, which an opening takes before its slot's (so one that
//! commits later sees the ban). A pause that does not happen (the instance stops) is made up for
//! by the organiser, which leaves banned players out of every pass that starts after the ban
//! commits, and by a retry of the request. Then it withdraws the player's open challenges, both
//! ways (a `challenge_withdrawn` each; one left open cannot start a match anyway). A pass that read its players just before the ban
//! committed pairs nobody it bans: the ban and the pass's step take the player's standing lock
//! (`standing::banned_under_lock`), so the step sees the ban and is lost, or commits first and
//! the ban follows the pairing. A bot's declaration reaches as far as a ban into human play (its
//! waiting ticket, its tournament entries), and no further: a bot keeps its challenges.

use domain::challenges::Withdrawal;
use domain::ids::PlayerId;
use domain::standing::{self as rules, Decision, Standing};
use eventlog::{AppendError, AppendOutcome, EventLog};
use uuid::Uuid;

use crate::aggregates::{self, Asked};
use crate::challenges::{self, Challenges};
use crate::error::{Error, unexpected};
use crate::players;
use crate::ranked;
use crate::standing;
use crate::tournaments::{Tournaments, commands};

/// Records `admin`'s decision on `player` as command `command_id` (a retry writes nothing
/// twice), with its reach (above); the standing after it. `not_found` for no such player; a ban
/// needs a reason, read through [`crate::checks::reason`].
pub async fn decide(
    app: &Tournaments,
    challenged: &Challenges,
    command_id: Uuid,
    admin: PlayerId,
    player: PlayerId,
    decision: Decision,
    reason: &str,
) -> Result<Standing, Error> {
    let reason = crate::checks::reason(reason)?;
    {
        let client = app.pool.get().await.map_err(unexpected)?;
        players::exists(&client, player).await?;
    }
    let (after, _) = aggregates::command_with(
        app,
        &app.standings,
        player,
        Some(admin),
        command_id,
        // A ban or a declaration also cancels the player's waiting ticket, at the version read
        // here: a wave that matches it first makes the append conflict, and this is asked again.
        async |_: &Standing, now| {
            let (ticket, cancel) = match decision {
                Decision::Banned | Decision::Bot => {
                    let client = app.pool.get().await.map_err(unexpected)?;
                    ranked::cancel_waiting(app, &client, player, admin, now).await?
                }
                Decision::Cleared | Decision::Human => None,
            }
            .unzip();
            Ok(Asked {
                command: rules::Command {
                    admin,
                    decision,
                    reason: reason.clone(),
                },
                context: ticket,
                also: cancel.into_iter().collect(),
            })
        },
        async |tx, _, ticket, now| {
            standing::record_on(tx, player, decision, now).await?;
            if let Some(id) = ticket {
                ranked::free_slot_on(tx, player, *id).await?;
            } else if matches!(decision, Decision::Banned | Decision::Bot) {
                // A ticket opened after `ask` read the slot, committed before the standing
                // lock `record_on` took (an opening takes it too, so a later one sees this
                // decision): cancelled here as well, unless a wave matched it meanwhile.
                if let Some((late, cancel)) =
                    ranked::cancel_waiting(app, tx, player, admin, now).await?
                {
                    // A conflict is an error of the statement: the savepoint keeps the rest.
                    tx.batch_execute("SAVEPOINT late_ticket")
                        .await
                        .map_err(unexpected)?;
                    let late_command = Uuid::new_v5(&command_id, b"late ticket");
                    match EventLog::append_on(tx, late_command, vec![cancel]).await {
                        Ok(AppendOutcome::Appended(_)) => {
                            ranked::free_slot_on(tx, player, late).await?;
                        }
                        Ok(AppendOutcome::AlreadyApplied(_)) => {}
                        Err(AppendError::Conflict { .. }) => {
                            tx.batch_execute("ROLLBACK TO SAVEPOINT late_ticket")
                                .await
                                .map_err(unexpected)?;
                        }
                        Err(e) => return Err(unexpected(e)),
                    }
                }
            }
            Ok(())
        },
    )
    .await?;
    app.wake_projections();
    // This instance's streams of a banned player end before the ban is answered.
    if let Err(e) = crate::live::streams::enforce(app, player).await {
        tracing::warn!(error = %e, "a banned player's streams were not checked");
    }
    if after.banned() || after.bot() {
        commands::pause_everywhere(app, player, admin, command_id).await?;
    }
    if after.banned() {
        challenges::withdraw_all(challenged, player, Withdrawal::Banned).await?;
    }
    Ok(after)
}
