//! What the API reads from the tables this crate writes: ratings and rating points, match
//! history, leaderboards, the queue and its pairings, projection checkpoints and rebuilds. The
//! SQL on these tables lives here and in the projections that write them, nowhere else.

use std::collections::{BTreeMap, HashMap};

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::games::GameId;
use domain::ids::PlayerId;
use domain::matches::{DaysPerMove, TurnSeconds};
use domain::ratings::{Ladder, Rating};

use crate::Error;

/// A stored rating: its values, the rated matches behind it, when the last one ended.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRating {
    pub rating: Rating,
    pub games: i32,
    pub last_ended_at: Option<OffsetDateTime>,
}

const RATING_COLUMNS: &str = "game, rating, deviation, volatility, games, last_ended_at";

fn stored_rating(r: &tokio_postgres::Row) -> StoredRating {
    StoredRating {
        rating: Rating {
            rating: r.get(1),
            deviation: r.get(2),
            volatility: r.get(3),
        },
        games: r.get(4),
        last_ended_at: r.get(5),
    }
}

fn game_of(table: &'static str, raw: &str) -> Result<GameId, Error> {
    raw.parse().map_err(|_| Error::Model {
        table,
        reason: format!("unknown game `{raw}`"),
    })
}

fn ladder_of(table: &'static str, raw: &str) -> Result<Ladder, Error> {
    raw.parse().map_err(|_| Error::Model {
        table,
        reason: format!("unknown ladder `{raw}`"),
    })
}

/// Whether `a` and `b` have played a finished match together (as the match history shows it).
pub async fn played_together(
    client: &impl GenericClient,
    a: PlayerId,
    b: PlayerId,
) -> Result<bool, Error> {
    let row = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM match_history WHERE player_id = $1 AND opponent = $2)",
            &[&a.as_uuid(), &b.as_uuid()],
        )
        .await?;
    Ok(row.get(0))
}

/// A player's stored ratings by ladder (a ladder never rated on is absent).
pub async fn ratings_of(
    client: &impl GenericClient,
    player: PlayerId,
) -> Result<BTreeMap<Ladder, StoredRating>, Error> {
    let rows = client
        .query(
            &format!("SELECT {RATING_COLUMNS} FROM ratings WHERE player_id = $1"),
            &[&player.as_uuid()],
        )
        .await?;
    rows.iter()
        .map(|r| Ok((ladder_of("ratings", r.get(0))?, stored_rating(r))))
        .collect()
}

/// A player's stored rating on one ladder, if rated.
pub async fn rating_in(
    client: &impl GenericClient,
    player: PlayerId,
    ladder: Ladder,
) -> Result<Option<StoredRating>, Error> {
    let row = client
        .query_opt(
            &format!("SELECT {RATING_COLUMNS} FROM ratings WHERE player_id = $1 AND game = $2"),
            &[&player.as_uuid(), &ladder.as_str()],
        )
        .await?;
    Ok(row.as_ref().map(stored_rating))
}

/// One finished match of a player's history.
#[derive(Debug, Clone)]
pub struct HistoryRow {
    pub match_id: Uuid,
    pub game: GameId,
    pub ranked: bool,
    /// A correspondence game (days per move).
    pub correspondence: bool,
    /// None for the CPU.
    pub opponent: Option<Uuid>,
    /// `win`, `loss` or `draw`, for this player.
    pub result: String,
    pub rating_before: Option<f64>,
    pub rating_after: Option<f64>,
    pub ended_at: OffsetDateTime,
    /// The named opening (`domain::openings`): its name and line; `None` before the first move,
    /// or for a row written before the history had openings (until its rebuild).
    pub opening: Option<(String, String)>,
}

/// A player's finished matches, newest first: of one game or all, ended before `before` (if
/// given), at most `limit`.
pub async fn history(
    client: &impl GenericClient,
    player: PlayerId,
    game: Option<GameId>,
    before: Option<OffsetDateTime>,
    limit: i64,
) -> Result<Vec<HistoryRow>, Error> {
    let rows = client
        .query(
            "SELECT h.match_id, h.game, h.ranked, h.opponent, h.result, \
               p.before_rating, p.rating, h.ended_at, h.opening_name, h.opening_line, \
               h.correspondence \
             FROM match_history h \
             LEFT JOIN rating_points p ON p.match_id = h.match_id AND p.player_id = h.player_id \
             WHERE h.player_id = $1 AND ($2::text IS NULL OR h.game = $2) \
               AND ($3::timestamptz IS NULL OR h.ended_at < $3) \
             ORDER BY h.ended_at DESC, h.match_id DESC LIMIT $4",
            &[
                &player.as_uuid(),
                &game.map(GameId::as_str),
                &before,
                &limit,
            ],
        )
        .await?;
    rows.iter()
        .map(|r| {
            Ok(HistoryRow {
                match_id: r.get(0),
                game: game_of("match_history", r.get(1))?,
                ranked: r.get(2),
                correspondence: r.get(10),
                opponent: r.get(3),
                result: r.get(4),
                rating_before: r.get(5),
                rating_after: r.get(6),
                ended_at: r.get(7),
                opening: r
                    .get::<_, Option<String>>(8)
                    .zip(r.get::<_, Option<String>>(9)),
            })
        })
        .collect()
}

/// A player's rating after one ranked match.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingPointRow {
    pub match_id: Uuid,
    pub at: OffsetDateTime,
    pub rating: f64,
    pub deviation: f64,
}

/// A player's rating after each rated match on a ladder, oldest first.
pub async fn rating_points(
    client: &impl GenericClient,
    player: PlayerId,
    ladder: Ladder,
) -> Result<Vec<RatingPointRow>, Error> {
    let rows = client
        .query(
            "SELECT match_id, at, rating, deviation FROM rating_points \
             WHERE player_id = $1 AND game = $2 ORDER BY games",
            &[&player.as_uuid(), &ladder.as_str()],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| RatingPointRow {
            match_id: r.get(0),
            at: r.get(1),
            rating: r.get(2),
            deviation: r.get(3),
        })
        .collect())
}

/// One player on a leaderboard.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderRow {
    pub player_id: Uuid,
    pub rating: f64,
    pub deviation: f64,
    pub games: i32,
}

/// The best `limit` players of a ladder whose rating is no longer provisional, best first: the
/// humans, or (`bots`) the declared bots, who are rated on a board of their own.
pub async fn leaderboard(
    client: &impl GenericClient,
    ladder: Ladder,
    limit: i64,
    bots: bool,
) -> Result<Vec<LeaderRow>, Error> {
    let rows = client
        .query(
            "SELECT l.player_id, l.rating, l.deviation, l.games FROM leaderboard l \
             WHERE l.game = $1 AND l.deviation <= $3 \
               AND EXISTS (SELECT 1 FROM leaderboard_bots b WHERE b.player_id = l.player_id) = $4 \
             ORDER BY l.rating DESC, l.player_id LIMIT $2",
            &[&ladder.as_str(), &limit, &Rating::PROVISIONAL_ABOVE, &bots],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| LeaderRow {
            player_id: r.get(0),
            rating: r.get(1),
            deviation: r.get(2),
            games: r.get(3),
        })
        .collect())
}

/// What the pairing rules need of a player's ranked past in a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankedPast {
    /// The opponent of the latest ranked match.
    pub previous_opponent: Option<PlayerId>,
    /// How many of the last 10 ranked matches the player started.
    pub started_of_last_10: i64,
}

/// The ranked past on `ladder` (its game, at its pace) of each of `players` who has one.
pub async fn ranked_pasts(
    client: &impl GenericClient,
    ladder: Ladder,
    players: &[PlayerId],
) -> Result<HashMap<PlayerId, RankedPast>, Error> {
    let ids: Vec<Uuid> = players.iter().map(|p| p.as_uuid()).collect();
    let rows = client
        .query(
            "SELECT player_id, \
               (array_agg(opponent ORDER BY ended_at DESC, match_id))[1], \
               count(*) FILTER (WHERE started AND rn <= 10) \
             FROM (SELECT player_id, opponent, started, ended_at, match_id, \
                     row_number() OVER (PARTITION BY player_id ORDER BY ended_at DESC, match_id) rn \
                   FROM match_history WHERE ranked AND game = $1 AND player_id = ANY($2) \
                     AND correspondence = $3) h \
             GROUP BY player_id",
            &[&ladder.game.as_str(), &ids, &ladder.correspondence],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let opponent: Option<Uuid> = r.get(1);
            (
                PlayerId::from_uuid(r.get(0)),
                RankedPast {
                    previous_opponent: opponent.map(PlayerId::from_uuid),
                    started_of_last_10: r.get(2),
                },
            )
        })
        .collect())
}

/// A pool's queue quality since some time: waiting tickets, pairings, and the percentiles
/// (50, 95, 99) of their waits and rating gaps.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolQuality {
    /// As stored: a game id (a pool of an unknown game is still reported).
    pub game: String,
    pub turn_seconds: Option<TurnSeconds>,
    /// A correspondence pool's days per move.
    pub days_per_move: Option<DaysPerMove>,
    pub waiting: i64,
    pub pairs: i64,
    pub wait_ms: [f64; 3],
    pub rating_gap: [f64; 3],
    /// The share of pairings that repeated the players' previous ranked match.
    pub repeat_rate: f64,
}

/// Every pool that has waiting tickets or pairings since `since`.
pub async fn pool_quality(
    client: &impl GenericClient,
    since: OffsetDateTime,
) -> Result<Vec<PoolQuality>, Error> {
    let rows = client
        .query(
            "WITH pools AS ( \
               SELECT game, turn_seconds, days_per_move FROM queue_tickets \
               UNION SELECT game, turn_seconds, days_per_move FROM queue_pairs \
                 WHERE matched_at >= $1) \
             SELECT p.game, p.turn_seconds, \
               (SELECT count(*) FROM queue_tickets t WHERE t.game = p.game \
                  AND t.turn_seconds = p.turn_seconds AND t.days_per_move = p.days_per_move), \
               count(q.ticket_id), \
               coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY q.waited_ms), 0), \
               coalesce(percentile_cont(0.95) WITHIN GROUP (ORDER BY q.waited_ms), 0), \
               coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY q.waited_ms), 0), \
               coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY q.rating_gap), 0), \
               coalesce(percentile_cont(0.95) WITHIN GROUP (ORDER BY q.rating_gap), 0), \
               coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY q.rating_gap), 0), \
               coalesce(avg(q.repeat::int), 0)::float8, p.days_per_move \
             FROM pools p LEFT JOIN queue_pairs q ON q.game = p.game \
               AND q.turn_seconds = p.turn_seconds AND q.days_per_move = p.days_per_move \
               AND q.matched_at >= $1 \
             GROUP BY p.game, p.turn_seconds, p.days_per_move \
             ORDER BY p.game, p.days_per_move, p.turn_seconds",
            &[&since],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| PoolQuality {
            game: r.get(0),
            turn_seconds: TurnSeconds::from_code(r.get(1)),
            days_per_move: DaysPerMove::from_code(r.get(11)),
            waiting: r.get(2),
            pairs: r.get(3),
            wait_ms: [r.get(4), r.get(5), r.get(6)],
            rating_gap: [r.get(7), r.get(8), r.get(9)],
            repeat_rate: r.get(10),
        })
        .collect())
}

/// A projection's checkpoint, beside the end of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRow {
    pub name: String,
    /// Events applied since the projection started.
    pub events: i64,
    /// The log position of the last event applied.
    pub position: i64,
    /// The log's last position.
    pub log_position: i64,
}

const CHECKPOINTS: &str =
    "SELECT c.name, c.events, c.position FROM projection_checkpoints c ORDER BY c.name";
const CHECKPOINT: &str =
    "SELECT c.name, c.events, c.position FROM projection_checkpoints c WHERE c.name = $1";

fn checkpoint_row(r: &tokio_postgres::Row, log_position: i64) -> CheckpointRow {
    CheckpointRow {
        name: r.get(0),
        events: r.get(1),
        position: r.get(2),
        log_position,
    }
}

/// Every projection's checkpoint, by name.
pub async fn checkpoints(client: &impl GenericClient) -> Result<Vec<CheckpointRow>, Error> {
    let rows = client.query(CHECKPOINTS, &[]).await?;
    let log_position = eventlog::last_position(client).await?;
    Ok(rows
        .iter()
        .map(|r| checkpoint_row(r, log_position))
        .collect())
}

/// One projection's checkpoint.
pub async fn checkpoint(
    client: &impl GenericClient,
    name: &str,
) -> Result<Option<CheckpointRow>, Error> {
    let row = client.query_opt(CHECKPOINT, &[&name]).await?;
    let log_position = eventlog::last_position(client).await?;
    Ok(row.map(|r| checkpoint_row(&r, log_position)))
}

/// A rebuild of a projection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuildRow {
    pub rebuild_id: Uuid,
    /// `running`, `done` or `failed`.
    pub status: String,
    pub events: i64,
    pub started_at: OffsetDateTime,
    pub finished_at: Option<OffsetDateTime>,
    pub error: Option<String>,
}

/// A projection's latest rebuild, if it had one.
pub async fn latest_rebuild(
    client: &impl GenericClient,
    name: &str,
) -> Result<Option<RebuildRow>, Error> {
    let row = client
        .query_opt(
            "SELECT rebuild_id, status, events, started_at, finished_at, error \
             FROM projection_rebuilds WHERE name = $1 \
             ORDER BY started_at DESC, rebuild_id DESC LIMIT 1",
            &[&name],
        )
        .await?;
    Ok(row.map(|r| RebuildRow {
        rebuild_id: r.get(0),
        status: r.get(1),
        events: r.get(2),
        started_at: r.get(3),
        finished_at: r.get(4),
        error: r.get(5),
    }))
}

/// Each player's rating and its deviation before each of `matches` (ranked matches, from
/// `rating_points`), by (player, match).
pub async fn ratings_before(
    client: &impl GenericClient,
    matches: &[Uuid],
) -> Result<HashMap<(Uuid, Uuid), (f64, f64)>, Error> {
    let rows = client
        .query(
            "SELECT player_id, match_id, before_rating, before_deviation FROM rating_points \
             WHERE match_id = ANY($1)",
            &[&matches],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| ((r.get(0), r.get(1)), (r.get(2), r.get(3))))
        .collect())
}

/// A projection's checkpoint, `(tx, position)` in the log's order (for a replica's read that
/// must not be behind the primary's).
pub async fn position_of(
    client: &impl GenericClient,
    projection: crate::Projection,
) -> Result<(i64, i64), Error> {
    let row = client
        .query_one(
            "SELECT tx, position FROM projection_checkpoints WHERE name = $1",
            &[&projection.name()],
        )
        .await?;
    Ok((row.get(0), row.get(1)))
}

/// Of the matches `(player, match)`, those the player's history shows ended before `before`
/// (the room purge: a room whose last match ended long ago).
pub async fn ended_before(
    client: &impl GenericClient,
    pairs: &[(Uuid, Uuid)],
    before: OffsetDateTime,
) -> Result<Vec<Uuid>, Error> {
    let players: Vec<Uuid> = pairs.iter().map(|p| p.0).collect();
    let matches: Vec<Uuid> = pairs.iter().map(|p| p.1).collect();
    let rows = client
        .query(
            "SELECT h.match_id FROM unnest($1::uuid[], $2::uuid[]) AS w(player_id, match_id) \
             JOIN match_history h ON h.player_id = w.player_id AND h.match_id = w.match_id \
             WHERE h.ended_at < $3",
            &[&players, &matches, &before],
        )
        .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Claims the oldest finished match waiting for its move-quality assessment (the history
/// projection's outbox, `move_quality_pending`) that no live lease holds, leasing it until
/// `lease_until`: its id and how often it was claimed, this time included.
pub async fn claim_assessment(
    client: &impl GenericClient,
    now: OffsetDateTime,
    lease_until: OffsetDateTime,
) -> Result<Option<(Uuid, i32)>, Error> {
    let row = client
        .query_opt(
            "UPDATE move_quality_pending p SET lease_until = $2, attempts = p.attempts + 1 \
             FROM (SELECT match_id FROM move_quality_pending \
                   WHERE lease_until IS NULL OR lease_until < $1 \
                   ORDER BY queued_at LIMIT 1 FOR UPDATE SKIP LOCKED) c \
             WHERE p.match_id = c.match_id RETURNING p.match_id, p.attempts",
            &[&now, &lease_until],
        )
        .await?;
    Ok(row.map(|r| (r.get(0), r.get(1))))
}

/// Takes a match off the assessments' outbox (its assessment is stored, or given up).
pub async fn settle_assessment(client: &impl GenericClient, match_id: Uuid) -> Result<(), Error> {
    client
        .execute(
            "DELETE FROM move_quality_pending WHERE match_id = $1",
            &[&match_id],
        )
        .await?;
    Ok(())
}
