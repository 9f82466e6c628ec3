//! An admin's decision on a player's standing, and how far a ban reaches. The decision is an
//! event of the player's stream (`crate::standing`); a ban, in the same transaction and under
//! the player's standing lock, also cancels their waiting queue ticket (a `ticket_cancelled` of
//! the ticket's stream and its `queue_slots` row: `ranked::cancel_waiting_on`) and marks the
//! player in `player_bans`, which the waves and the tournaments' organiser read to leave them
//! out. A ticket's opening takes the same lock before its slot's, so the ban sees it or it sees
//! the ban; a wave that matched the ticket first makes the cancel conflict, and the match
//! stands. After it commits, the ban pauses the player in each tournament of theirs that has not
//! ended, through the tournaments' own command path (a `player_paused` each). A pause that does
//! not happen (the instance stops) is made up for by the organiser, which leaves banned players
//! out of every pass that starts after the ban commits, and by a retry of the request. Then it
//! withdraws the player's open challenges, both ways (a `challenge_withdrawn` each; one left open
//! cannot start a match anyway). A pass that read its players just before the ban committed
//! pairs nobody it bans: the ban and the pass's step take the player's standing lock
//! (`standing::banned_under_lock`), so the step sees the ban and is lost, or commits first and
//! the ban follows the pairing. A bot's declaration reaches as far as a ban into human play (its
//! waiting ticket, its tournament entries), and no further: a bot keeps its challenges.

use domain::challenges::Withdrawal;
use domain::ids::PlayerId;
use domain::standing::{self as rules, Decision, Standing};
use uuid::Uuid;

use crate::aggregates;
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
    let (after, ()) = aggregates::command(
        app,
        &app.standings,
        player,
        Some(admin),
        command_id,
        |_, _| {
            Ok((
                rules::Command {
                    admin,
                    decision,
                    reason: reason.clone(),
                },
                (),
            ))
        },
        async |tx, _, (), now| {
            // `record_on` takes the player's standing lock: a ticket opening meanwhile waits.
            standing::record_on(tx, player, decision, now).await?;
            match decision {
                Decision::Banned | Decision::Bot => {
                    ranked::cancel_waiting_on(app, tx, player, admin, command_id, now).await
                }
                Decision::Cleared | Decision::Human => Ok(()),
            }
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
