//! Challenges over the live path: a player challenges another ([`send`]), who accepts (the
//! match starts in the same transaction: [`accept`]) or declines; the challenger may cancel; the
//! workers let lapse what nobody answered ([`expire_due`]). Each command is decided on the
//! challenge's stream (`domain::challenges`) through the one runner (`aggregates::command`), with
//! the `challenges` row (the write side's index: the inbox, the bounds, the deadlines) changed in
//! the same transaction.
//!
//! The rules every other road to a match keeps hold here too, where the match is made: nobody
//! banned or closed challenges or is challenged, and an acceptance reads both players' bans
//! under their standing locks; a rated challenge makes a ranked match, so its players are seated
//! (`ranked_seats`) in its transaction and the database refuses a second live ranked match.

use std::ops::Deref;
use std::sync::{Arc, Mutex};

use deadpool_postgres::Transaction;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use domain::aggregate::{Aggregate, At};
use domain::challenges::{
    Accepting, Challenge, ChallengeAccepted, ChallengeError, ChallengeSent, Command, DeclineReason,
    FirstMover, LIFETIME, OPEN_MAX, PER_MINUTE, Status, Terms, Withdrawal,
};
use domain::ids::{ChallengeId, MatchId, PlayerId};
use domain::matches::{DaysPerMove, TurnSeconds};
use eventlog::{AppendOutcome, EventLog, RecordedEvent};

use crate::aggregates::{self, Kept};
use crate::error::{Error, unexpected};
use crate::live::LivePath;
use crate::live::commit::lost_to_another_writer;
use crate::live::created::{Created, write_beside};
use crate::live::play;
use crate::reasons::{Missing, Refused};

/// What challenges use: the live path (an acceptance starts a match there) and the folds this
/// instance read. Cheap to clone.
#[derive(Clone)]
pub struct Challenges {
    pub path: LivePath,
    pub kept: Arc<Kept<Challenge>>,
}

impl Deref for Challenges {
    type Target = LivePath;

    fn deref(&self) -> &LivePath {
        &self.path
    }
}

impl Challenges {
    pub fn new(path: LivePath) -> Challenges {
        Challenges {
            path,
            kept: Arc::default(),
        }
    }
}

/// A challenge as its two players see it: the fold, and its events for the history.
pub struct Seen {
    pub id: ChallengeId,
    pub challenge: Challenge,
    pub events: Vec<RecordedEvent>,
}

/// An open challenge in a player's list.
#[derive(Debug, Clone)]
pub struct Listed {
    pub id: ChallengeId,
    pub challenger: PlayerId,
    pub challenged: PlayerId,
    pub terms: Terms,
    pub sent_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
}

/// Sends `opponent` a challenge on `terms` from `challenger`, as command `command_id` (the
/// challenge's id derives from it). Refused to a banned challenger; `forbidden` where the
/// opponent cannot be challenged by them (banned, closed, or not accepting challenges from
/// them); over the bounds, 429 (open challenges at once, challenges a minute).
pub async fn send(
    app: &Challenges,
    challenger: PlayerId,
    opponent: PlayerId,
    terms: Terms,
    command_id: Uuid,
) -> Result<Seen, Error> {
    if opponent == challenger {
        return Err(Error::Challenge(ChallengeError::Yourself));
    }
    crate::standing::refuse_banned(app, challenger).await?;
    refuse_unchallengeable(app, challenger, opponent).await?;
    let id = ChallengeId::of_command(command_id);
    aggregates::command(
        app,
        &app.kept,
        id,
        Some(challenger),
        command_id,
        |_, now| {
            let sent = ChallengeSent {
                challenger,
                challenged: opponent,
                terms,
                expires_at: now + LIFETIME,
            };
            Ok((
                At {
                    at: now,
                    command: Command::Send(sent.clone()),
                },
                sent,
            ))
        },
        async |tx, _, sent, now| {
            within_bounds(tx, challenger, now).await?;
            insert_row(tx, id, sent, now).await
        },
    )
    .await?;
    app.wake_projections();
    seen(app, challenger, id).await
}

/// `forbidden` unless `challenger` may challenge `opponent`: an account that exists, is open,
/// is not banned, and accepts challenges from them; `not_found` for no such player.
async fn refuse_unchallengeable(
    app: &Challenges,
    challenger: PlayerId,
    opponent: PlayerId,
) -> Result<(), Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    crate::players::exists(&client, opponent).await?;
    let refused = Err(Error::Forbidden(Refused::NotChallengeable));
    if crate::players::closed(&client, opponent).await?
        || crate::standing::banned(&client, opponent).await?
    {
        return refused;
    }
    let accepting = accepting(&client, opponent).await?;
    let played = match accepting {
        Accepting::Played => projections::queries::played_together(&client, opponent, challenger)
            .await
            .map_err(unexpected)?,
        _ => false,
    };
    if accepting.lets_in(played) {
        Ok(())
    } else {
        refused
    }
}

/// `RateLimited` or `ChallengeLimit` where `challenger` has sent too many challenges, counted
/// under their lock (held until `tx` ends), so that racing sends never pass a bound together.
async fn within_bounds(
    tx: &Transaction<'_>,
    challenger: PlayerId,
    now: OffsetDateTime,
) -> Result<(), Error> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('challenges:' || $1::uuid::text, 0))",
        &[&challenger.as_uuid()],
    )
    .await
    .map_err(unexpected)?;
    let minute_ago = now - Duration::MINUTE;
    let row = tx
        .query_one(
            "SELECT count(*) FILTER (WHERE status = 'open' AND expires_at > $2), \
                    count(*) FILTER (WHERE sent_at > $3), \
                    min(sent_at) FILTER (WHERE sent_at > $3) \
               FROM challenges WHERE challenger = $1",
            &[&challenger.as_uuid(), &now, &minute_ago],
        )
        .await
        .map_err(unexpected)?;
    let (open, last_minute): (i64, i64) = (row.get(0), row.get(1));
    if open >= i64::from(OPEN_MAX) {
        return Err(Error::ChallengeLimit(OPEN_MAX));
    }
    if last_minute >= i64::from(PER_MINUTE) {
        let oldest: OffsetDateTime = row.get(2);
        let wait = (oldest + Duration::MINUTE - now).whole_seconds().max(1);
        return Err(Error::RateLimited(u64::try_from(wait).unwrap_or(1)));
    }
    Ok(())
}

async fn insert_row(
    tx: &Transaction<'_>,
    id: ChallengeId,
    sent: &ChallengeSent,
    now: OffsetDateTime,
) -> Result<(), Error> {
    let terms = sent.terms;
    tx.execute(
        "INSERT INTO challenges (challenge_id, challenger, challenged, game, rated, \
                                 turn_seconds, days_per_move, first, status, sent_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'open', $9, $10)",
        &[
            &id.as_uuid(),
            &sent.challenger.as_uuid(),
            &sent.challenged.as_uuid(),
            &terms.game.as_str(),
            &terms.rated,
            &TurnSeconds::code(terms.turn_seconds),
            &terms.days_per_move.map_or(0, |d| d.get() as i32),
            &terms.first.as_str(),
            &now,
            &sent.expires_at,
        ],
    )
    .await
    .map_err(unexpected)?;
    Ok(())
}

async fn set_status(
    tx: &impl deadpool_postgres::GenericClient,
    id: ChallengeId,
    status: Status,
    match_id: Option<MatchId>,
) -> Result<(), Error> {
    tx.execute(
        "UPDATE challenges SET status = $2, match_id = $3 WHERE challenge_id = $1",
        &[
            &id.as_uuid(),
            &status.as_str(),
            &match_id.map(|m| m.as_uuid()),
        ],
    )
    .await
    .map_err(unexpected)?;
    Ok(())
}

/// The challenge `raw_id` as one of its two players sees it; `not_found` for anyone else.
pub async fn get(app: &Challenges, player: PlayerId, raw_id: &str) -> Result<Seen, Error> {
    let id: ChallengeId = crate::checks::id(raw_id)?;
    seen(app, player, id).await
}

async fn seen(app: &Challenges, player: PlayerId, id: ChallengeId) -> Result<Seen, Error> {
    let events = app
        .log
        .read_stream(&Challenge::stream(id))
        .await
        .map_err(unexpected)?;
    let challenge = aggregates::fold::<Challenge>(None, &events)?
        .filter(|c| c.involves(player))
        .ok_or(Error::NotFound(Missing::Challenge))?;
    Ok(Seen {
        id,
        challenge,
        events,
    })
}

/// The challenged player accepts, as command `command_id`: the challenge's acceptance and its
/// match (its creation, its work row and, rated, its players' seats) commit together, or
/// nothing does. Refused where either player is banned or closed, and for a rated challenge
/// where either is seated in a live ranked match (`in_ranked_match`).
pub async fn accept(
    app: &Challenges,
    player: PlayerId,
    raw_id: &str,
    command_id: Uuid,
) -> Result<Seen, Error> {
    let id: ChallengeId = crate::checks::id(raw_id)?;
    let match_id = MatchId::of_command(command_id);
    // From the instance's chance (the operating system's random source), as a room's first
    // coin is.
    let coin = app.chance.coin();
    let seed = app.chance.bits();
    let made: Mutex<Vec<RecordedEvent>> = Mutex::default();
    aggregates::command(
        app,
        &app.kept,
        id,
        Some(player),
        command_id,
        |state, now| {
            let c = state.as_ref().ok_or(Error::NotFound(Missing::Challenge))?;
            if !c.involves(player) {
                return Err(Error::NotFound(Missing::Challenge));
            }
            let command = At {
                at: now,
                command: Command::Accept {
                    by: player,
                    match_id,
                    coin,
                },
            };
            let accepted = match Challenge::decide(state, &command)?.pop() {
                Some(domain::challenges::ChallengeEvent::ChallengeAccepted(a)) => a,
                _ => return Err(Error::Unexpected(anyhow::anyhow!("no acceptance decided"))),
            };
            Ok((command, accepted))
        },
        async |tx, state, accepted, now| {
            let c = state.as_ref().ok_or(Error::NotFound(Missing::Challenge))?;
            let written = start_match(app, tx, c, accepted, seed, command_id, now).await?;
            set_status(tx, id, Status::Accepted, Some(match_id)).await?;
            *made.lock().unwrap_or_else(|p| p.into_inner()) = written;
            Ok(())
        },
    )
    .await?;
    let written = made.into_inner().unwrap_or_else(|p| p.into_inner());
    if written.is_empty() {
        app.wake_projections();
    } else {
        app.live.committed(&app.log, match_id, &written);
    }
    seen(app, player, id).await
}

/// Appends the match `accepted` starts, in the acceptance's transaction, with its work row and,
/// rated, its players' seats; refused where a player is banned, closed or (rated) seated.
async fn start_match(
    app: &Challenges,
    tx: &Transaction<'_>,
    c: &Challenge,
    accepted: &ChallengeAccepted,
    seed: u64,
    command_id: Uuid,
    now: OffsetDateTime,
) -> Result<Vec<RecordedEvent>, Error> {
    let players = [c.sent.challenger.as_uuid(), c.sent.challenged.as_uuid()];
    if !crate::standing::banned_under_lock(tx, &players)
        .await?
        .is_empty()
    {
        return Err(Error::Forbidden(Refused::NotChallengeable));
    }
    for p in [c.sent.challenger, c.sent.challenged] {
        if crate::players::closed(tx, p).await? {
            return Err(Error::Forbidden(Refused::NotChallengeable));
        }
    }
    let create = c.create_match(accepted, seed);
    if create.seats_players() {
        for p in [c.sent.challenger, c.sent.challenged] {
            if crate::standing::seated_in(tx, p).await?.is_some() {
                return Err(Error::InRankedMatch);
            }
        }
    }
    let created = Created::decide(accepted.match_id, create, now)?;
    let match_command = Uuid::new_v5(&command_id, b"challenge match");
    let written = match EventLog::append_on(tx, match_command, vec![created.append()])
        .await
        .map_err(unexpected)?
    {
        AppendOutcome::Appended(written) => written,
        AppendOutcome::AlreadyApplied(_) => Vec::new(),
    };
    match write_beside(app, tx, &[&created]).await? {
        Ok(()) => {}
        // Seated meanwhile by another road (a wave, a tournament): the database refuses.
        Err(e) if lost_to_another_writer(&e) => return Err(Error::InRankedMatch),
        Err(e) => return Err(unexpected(e)),
    }
    Ok(written)
}

/// The challenged player declines, with a reason from the fixed list.
pub async fn decline(
    app: &Challenges,
    player: PlayerId,
    raw_id: &str,
    reason: DeclineReason,
    command_id: Uuid,
) -> Result<Seen, Error> {
    answer(app, player, raw_id, command_id, Status::Declined, |by| {
        Command::Decline { by, reason }
    })
    .await
}

/// The challenger takes the challenge back.
pub async fn cancel(
    app: &Challenges,
    player: PlayerId,
    raw_id: &str,
    command_id: Uuid,
) -> Result<Seen, Error> {
    answer(app, player, raw_id, command_id, Status::Cancelled, |by| {
        Command::Cancel { by }
    })
    .await
}

/// A command of one of the two players that closes the challenge with `status`.
async fn answer(
    app: &Challenges,
    player: PlayerId,
    raw_id: &str,
    command_id: Uuid,
    status: Status,
    command: impl Fn(PlayerId) -> Command,
) -> Result<Seen, Error> {
    let id: ChallengeId = crate::checks::id(raw_id)?;
    aggregates::command(
        app,
        &app.kept,
        id,
        Some(player),
        command_id,
        |state, now| match state {
            Some(c) if c.involves(player) => Ok((
                At {
                    at: now,
                    command: command(player),
                },
                (),
            )),
            _ => Err(Error::NotFound(Missing::Challenge)),
        },
        async |tx, _, (), _| set_status(tx, id, status, None).await,
    )
    .await?;
    app.wake_projections();
    seen(app, player, id).await
}

/// Lets every open challenge whose time is up lapse (`challenge_expired`); the number that
/// lapsed. Any instance may run it: each lapse is a command whose id derives from the
/// challenge, so two instances write it once.
pub async fn expire_due(app: &Challenges) -> Result<usize, Error> {
    let due: Vec<Uuid> = {
        let client = app.pool.get().await.map_err(unexpected)?;
        client
            .query(
                "SELECT challenge_id FROM challenges \
                  WHERE status = 'open' AND expires_at <= $1 ORDER BY expires_at LIMIT 100",
                &[&app.now()],
            )
            .await
            .map_err(unexpected)?
            .iter()
            .map(|r| r.get(0))
            .collect()
    };
    close_each(app, &due, "challenge expired", || Command::Expire).await
}

/// Withdraws every open challenge `player` sent or received (`challenge_withdrawn`): a ban or a
/// closing of their account, after it commits. One that stays open (the instance stops first)
/// can still not start a match: an acceptance reads both players' bans and closings; and it
/// lapses in its time. The number withdrawn.
pub async fn withdraw_all(
    app: &Challenges,
    player: PlayerId,
    because: Withdrawal,
) -> Result<usize, Error> {
    let open: Vec<Uuid> = {
        let client = app.pool.get().await.map_err(unexpected)?;
        client
            .query(
                "SELECT challenge_id FROM challenges \
                  WHERE (challenger = $1 OR challenged = $1) AND status = 'open'",
                &[&player.as_uuid()],
            )
            .await
            .map_err(unexpected)?
            .iter()
            .map(|r| r.get(0))
            .collect()
    };
    close_each(app, &open, "challenge withdrawn", || Command::Withdraw {
        player,
        because,
    })
    .await
}

/// Runs `command` on each challenge of `ids` (a command id derived from the challenge and
/// `what`: two instances write it once), then sets its row to the stream's status; the number
/// closed by this call. The row follows the stream after the commit (the workers' loop cannot
/// hold the runner's transaction across its own writes); a row a crash left open in between is
/// set right on the next pass, when the stream refuses the command as closed.
async fn close_each(
    app: &Challenges,
    ids: &[Uuid],
    what: &str,
    command: impl Fn() -> Command,
) -> Result<usize, Error> {
    let mut closed = 0;
    for &raw in ids {
        let id = ChallengeId::from_uuid(raw);
        let done = aggregates::command(
            app,
            &app.kept,
            id,
            None,
            Uuid::new_v5(&raw, what.as_bytes()),
            |_, now| {
                Ok((
                    At {
                        at: now,
                        command: command(),
                    },
                    (),
                ))
            },
            async |_, _, (), _| Ok(()),
        )
        .await;
        let status = match done {
            Ok((state, ())) => {
                closed += 1;
                app.wake_projections();
                state.map_or(Status::Open, |c| c.status)
            }
            // Closed meanwhile, or before a crash: the row follows the stream.
            Err(Error::Challenge(ChallengeError::Closed(status))) => status,
            Err(e) => {
                tracing::warn!(challenge = %id, error = %e, "a challenge stayed open");
                continue;
            }
        };
        let client = app.pool.get().await.map_err(unexpected)?;
        client
            .execute(
                "UPDATE challenges SET status = $2 WHERE challenge_id = $1 AND status = 'open'",
                &[&raw, &status.as_str()],
            )
            .await
            .map_err(unexpected)?;
    }
    Ok(closed)
}

/// Purges the rows of challenges closed for a day or more (what the bounds no longer count; the
/// streams keep everything); how many.
pub async fn purge(app: &Challenges) -> Result<u64, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    client
        .execute(
            "DELETE FROM challenges WHERE status <> 'open' AND expires_at < $1",
            &[&app.now()],
        )
        .await
        .map_err(unexpected)
}

/// The open challenges `player` received and sent, oldest first.
pub async fn open_of(
    app: &Challenges,
    player: PlayerId,
) -> Result<(Vec<Listed>, Vec<Listed>), Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let rows = client
        .query(
            "SELECT challenge_id, challenger, challenged, game, rated, turn_seconds, first, \
                    sent_at, expires_at, days_per_move \
               FROM challenges \
              WHERE (challenged = $1 OR challenger = $1) AND status = 'open' AND expires_at > $2 \
              ORDER BY sent_at, challenge_id",
            &[&player.as_uuid(), &app.now()],
        )
        .await
        .map_err(unexpected)?;
    let mut received = Vec::new();
    let mut sent = Vec::new();
    for r in rows {
        let listed = Listed {
            id: ChallengeId::from_uuid(r.get(0)),
            challenger: PlayerId::from_uuid(r.get(1)),
            challenged: PlayerId::from_uuid(r.get(2)),
            terms: Terms {
                game: r.get::<_, String>(3).parse().map_err(unexpected)?,
                rated: r.get(4),
                turn_seconds: TurnSeconds::from_code(r.get(5)),
                days_per_move: u32::try_from(r.get::<_, i32>(9))
                    .ok()
                    .and_then(|d| DaysPerMove::try_from(d).ok()),
                first: FirstMover::named(r.get(6)),
            },
            sent_at: r.get(7),
            expires_at: r.get(8),
        };
        if listed.challenged == player {
            received.push(listed);
        } else {
            sent.push(listed);
        }
    }
    Ok((received, sent))
}

/// A correspondence game where it is a player's turn.
pub struct YourTurn {
    pub loaded: play::Loaded,
    pub deadline: OffsetDateTime,
}

/// What waits for `player`: their correspondence games where it is their turn (the nearest
/// deadline first; each read from the log or this instance's cache), their others open (where
/// the opponent is to move, the nearest deadline first), and their open challenges both ways.
pub struct Inbox {
    pub your_turn: Vec<YourTurn>,
    pub their_turn: Vec<YourTurn>,
    pub received: Vec<Listed>,
    pub sent: Vec<Listed>,
}

/// [`Inbox`] of `player`.
pub async fn inbox(app: &Challenges, player: PlayerId) -> Result<Inbox, Error> {
    let (mut turns, mut theirs) = (Vec::new(), Vec::new());
    for id in crate::live::correspondence::of(app, player).await? {
        let loaded = match play::load(app, id).await {
            Ok(loaded) => loaded,
            // A seat written for a game whose creation failed.
            Err(Error::NotFound(_)) => continue,
            Err(e) => return Err(e),
        };
        let Some(m) = loaded.state.get() else {
            continue;
        };
        let mine = m
            .to_move()
            .is_some_and(|seat| m.seat(seat).player_id() == Some(player));
        match (mine, m.deadline()) {
            (true, Some(deadline)) => turns.push(YourTurn { loaded, deadline }),
            (false, Some(deadline)) => theirs.push(YourTurn { loaded, deadline }),
            (_, None) => {}
        }
    }
    turns.sort_by_key(|t| (t.deadline, t.loaded.id));
    theirs.sort_by_key(|t| (t.deadline, t.loaded.id));
    let (received, sent) = open_of(app, player).await?;
    Ok(Inbox {
        your_turn: turns,
        their_turn: theirs,
        received,
        sent,
    })
}

/// Whom `player` accepts challenges from.
pub async fn accepting(
    client: &impl deadpool_postgres::GenericClient,
    player: PlayerId,
) -> Result<Accepting, Error> {
    let row = client
        .query_opt(
            "SELECT accepting FROM challenge_settings WHERE player_id = $1",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    Ok(row.map_or(Accepting::Everyone, |r| Accepting::named(r.get(0))))
}

/// Whom `player` accepts challenges from, as they read it.
pub async fn accepting_of(app: &Challenges, player: PlayerId) -> Result<Accepting, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    accepting(&client, player).await
}

/// Sets whom `player` accepts challenges from (challenges already received stay open).
pub async fn set_accepting(
    app: &Challenges,
    player: PlayerId,
    accepting: Accepting,
) -> Result<Accepting, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    client
        .execute(
            "INSERT INTO challenge_settings (player_id, accepting) VALUES ($1, $2) \
             ON CONFLICT (player_id) DO UPDATE SET accepting = EXCLUDED.accepting",
            &[&player.as_uuid(), &accepting.as_str()],
        )
        .await
        .map_err(unexpected)?;
    Ok(accepting)
}
