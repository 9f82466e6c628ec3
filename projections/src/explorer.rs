//! The opening explorer's projection and its reads: every finished match adds, for each position
//! of its first plies where a move was chosen, that move's result for the side that played it,
//! by ranked or casual, rating band and month (migration V17, `domain::explorer`), and the match
//! to the last and the highest-rated games through the position.

use std::collections::{HashMap, HashSet};

use deadpool_postgres::GenericClient;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use domain::explorer;
use domain::games::{GameId, Side};
use domain::ids::Seat;
use domain::ratings::Score;

use crate::facts::Finished;
use crate::ledger::Ledger;
use crate::{Error, facts, standings};

/// How many of the last and of the highest-rated games are kept per position, ranked or casual,
/// band and month (and so the most an answer lists of each).
pub const GAMES_KEPT: i64 = 8;

/// How many plies of each game the explorer counts (`domain::explorer::default_plies` unless the
/// operator says otherwise). A change takes effect for the matches that end afterwards; `discs
/// rebuild explorer` counts every match again at the new depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plies(pub [usize; GameId::ALL.len()]);

impl Default for Plies {
    fn default() -> Plies {
        Plies(GameId::ALL.map(explorer::default_plies))
    }
}

impl Plies {
    pub fn of(&self, game: GameId) -> usize {
        self.0[game as usize]
    }
}

/// The month a match ended in: its first day.
fn month_of(at: OffsetDateTime) -> Date {
    at.date().replace_day(1).unwrap_or(at.date())
}

/// One row of `explorer_moves` being summed for a batch.
#[derive(Default)]
struct Counts {
    games: i32,
    wins: i32,
    draws: i32,
    losses: i32,
    rating_sum: f64,
    rated: i32,
}

/// Applies a batch of `match_created` / `match_ended` events to the explorer's tables.
pub async fn apply(
    client: &impl GenericClient,
    finished: &[Finished],
    plies: &Plies,
) -> Result<(), Error> {
    if finished.is_empty() {
        return Ok(());
    }
    let ratings = rate(client, finished).await?;
    let moves = facts::moves_of(client, finished, |g| plies.of(g)).await?;
    type Key = (Uuid, bool, i16, Date, String);
    let mut counts: HashMap<Key, Counts> = HashMap::new();
    let mut games: Vec<(Uuid, bool, i16, Date, Uuid, f64, i64)> = Vec::new();
    for (f, rating) in finished.iter().zip(&ratings) {
        let played = moves
            .get(&f.match_id.as_uuid())
            .map_or(&[][..], Vec::as_slice);
        let steps =
            explorer::steps(f.game, played, plies.of(f.game)).map_err(|e| Error::Event {
                position: f.ended_position,
                reason: format!("match {}: {e}", f.match_id),
            })?;
        let humans: Vec<f64> = rating.iter().flatten().copied().collect();
        let average = if humans.is_empty() {
            domain::ratings::Rating::NEW.rating
        } else {
            humans.iter().sum::<f64>() / humans.len() as f64
        };
        let band = explorer::band(average);
        let month = month_of(f.ended_at);
        let mut seen = HashSet::new();
        for step in steps {
            let seat = match step.side {
                Side::First => f.first_seat,
                Side::Second => f.first_seat.other(),
            };
            let c = counts
                .entry((step.position, f.ranked, band, month, step.mv))
                .or_default();
            c.games += 1;
            match f.score_of(seat) {
                Score::Win => c.wins += 1,
                Score::Draw => c.draws += 1,
                Score::Loss => c.losses += 1,
            }
            if let Some(r) = rating[seat.index()] {
                c.rating_sum += r;
                c.rated += 1;
            }
            if seen.insert(step.position) {
                games.push((
                    step.position,
                    f.ranked,
                    band,
                    month,
                    f.match_id.as_uuid(),
                    average,
                    f.ended_position,
                ));
            }
        }
    }
    let crowded = write_moves(client, counts).await?;
    write_games(client, &games, &crowded).await
}

/// Each human's rating before each match, by seat, from the explorer's own ledger (which a
/// rated match then moves); the ledger's standings are written back.
async fn rate(
    client: &impl GenericClient,
    finished: &[Finished],
) -> Result<Vec<[Option<f64>; 2]>, Error> {
    let players: Vec<Uuid> = finished
        .iter()
        .flat_map(|f| f.players.iter().flatten().map(|p| p.as_uuid()))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let mut ledger: Ledger = standings::load_ledger(client, "explorer_ratings", &players).await?;
    let mut steps = Vec::new();
    let before = finished
        .iter()
        .map(|f| {
            let before = Seat::BOTH.map(|seat| {
                f.players[seat.index()].map(|p| ledger.standing(p, f.ladder()).rating.rating)
            });
            steps.extend(ledger.apply(f).into_iter().flatten());
            before
        })
        .collect();
    standings::write_standings(client, "explorer_ratings", &ledger, &steps).await?;
    Ok(before)
}

/// Adds the batch's counts; answers the groups (position, ranked, band, month) the batch
/// touched: those whose games may want trimming. Every one of them, whatever its moves' counts:
/// a group trimmed only when one move passed a count would keep, under many small batches,
/// games that one batch over the same events trims (a group's games are its moves' together),
/// and a rebuild would no longer equal the projection it replaces (the restore drill found it).
async fn write_moves(
    client: &impl GenericClient,
    counts: HashMap<(Uuid, bool, i16, Date, String), Counts>,
) -> Result<Vec<(Uuid, bool, i16, Date)>, Error> {
    let n = counts.len();
    let (mut position, mut ranked, mut band, mut month, mut mv) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut games, mut wins, mut draws, mut losses, mut rating_sum, mut rated) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for ((p, r, b, m, v), c) in counts {
        position.push(p);
        ranked.push(r);
        band.push(b);
        month.push(m);
        mv.push(v);
        games.push(c.games);
        wins.push(c.wins);
        draws.push(c.draws);
        losses.push(c.losses);
        rating_sum.push(c.rating_sum);
        rated.push(c.rated);
    }
    let rows = client
        .query(
            "INSERT INTO explorer_moves AS t (position, ranked, band, month, mv, games, wins, \
               draws, losses, rating_sum, rated) \
             SELECT * FROM unnest($1::uuid[], $2::bool[], $3::int2[], $4::date[], $5::text[], \
               $6::int4[], $7::int4[], $8::int4[], $9::int4[], $10::float8[], $11::int4[]) \
             ON CONFLICT (position, ranked, band, month, mv) DO UPDATE SET \
               games = t.games + excluded.games, wins = t.wins + excluded.wins, \
               draws = t.draws + excluded.draws, losses = t.losses + excluded.losses, \
               rating_sum = t.rating_sum + excluded.rating_sum, rated = t.rated + excluded.rated \
             RETURNING position, ranked, band, month, games",
            &[
                &position,
                &ranked,
                &band,
                &month,
                &mv,
                &games,
                &wins,
                &draws,
                &losses,
                &rating_sum,
                &rated,
            ],
        )
        .await?;
    let mut crowded: Vec<(Uuid, bool, i16, Date)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    crowded.sort_unstable();
    crowded.dedup();
    Ok(crowded)
}

/// Adds the games, and trims the `crowded` groups to their last and highest-rated
/// [`GAMES_KEPT`]. A group is trimmed once one of its moves has more than twice that many games,
/// so a group keeps at most that many rows per move until then: the trim bounds the storage of
/// the popular positions, and the answers never depend on it (they take the last and the
/// highest-rated of whatever rows are kept).
async fn write_games(
    client: &impl GenericClient,
    rows: &[(Uuid, bool, i16, Date, Uuid, f64, i64)],
    crowded: &[(Uuid, bool, i16, Date)],
) -> Result<(), Error> {
    if rows.is_empty() {
        return Ok(());
    }
    let position: Vec<Uuid> = rows.iter().map(|r| r.0).collect();
    let ranked: Vec<bool> = rows.iter().map(|r| r.1).collect();
    let band: Vec<i16> = rows.iter().map(|r| r.2).collect();
    let month: Vec<Date> = rows.iter().map(|r| r.3).collect();
    let match_id: Vec<Uuid> = rows.iter().map(|r| r.4).collect();
    let rating: Vec<f64> = rows.iter().map(|r| r.5).collect();
    let ended: Vec<i64> = rows.iter().map(|r| r.6).collect();
    client
        .execute(
            "INSERT INTO explorer_games (position, ranked, band, month, match_id, rating, \
               ended_position) \
             SELECT * FROM unnest($1::uuid[], $2::bool[], $3::int2[], $4::date[], $5::uuid[], \
               $6::float8[], $7::int8[])",
            &[
                &position, &ranked, &band, &month, &match_id, &rating, &ended,
            ],
        )
        .await?;
    if crowded.is_empty() {
        return Ok(());
    }
    let position: Vec<Uuid> = crowded.iter().map(|r| r.0).collect();
    let ranked: Vec<bool> = crowded.iter().map(|r| r.1).collect();
    let band: Vec<i16> = crowded.iter().map(|r| r.2).collect();
    let month: Vec<Date> = crowded.iter().map(|r| r.3).collect();
    client
        .execute(
            "WITH touched AS ( \
               SELECT DISTINCT * FROM unnest($1::uuid[], $2::bool[], $3::int2[], $4::date[]) \
                 AS t(position, ranked, band, month)), \
             numbered AS ( \
               SELECT g.position, g.ranked, g.band, g.month, g.match_id, \
                 row_number() OVER (PARTITION BY g.position, g.ranked, g.band, g.month \
                   ORDER BY g.ended_position DESC) AS recent, \
                 row_number() OVER (PARTITION BY g.position, g.ranked, g.band, g.month \
                   ORDER BY g.rating DESC, g.ended_position DESC) AS top \
               FROM explorer_games g JOIN touched USING (position, ranked, band, month)) \
             DELETE FROM explorer_games g USING numbered n \
             WHERE n.recent > $5 AND n.top > $5 AND g.position = n.position \
               AND g.ranked = n.ranked AND g.band = n.band AND g.month = n.month \
               AND g.match_id = n.match_id",
            &[&position, &ranked, &band, &month, &GAMES_KEPT],
        )
        .await?;
    Ok(())
}

/// What an explorer question selects: ranked or casual games (or both), rating bands (indices
/// into `domain::explorer::BANDS`; empty: all), and months (first days, inclusive).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    pub ranked: Option<bool>,
    pub bands: Vec<i16>,
    pub since: Option<Date>,
    pub until: Option<Date>,
}

/// A move's statistics, in the canonical orientation, from the mover's point of view.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveStats {
    pub mv: String,
    pub games: i64,
    pub wins: i64,
    pub draws: i64,
    pub losses: i64,
    /// The average rating of the side that played it, over the games a human played it.
    pub average_rating: Option<f64>,
}

/// A game through a position.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRef {
    pub match_id: Uuid,
    /// The average of both players' ratings before the match.
    pub rating: f64,
    pub month: Date,
}

/// What the explorer knows of a position.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PositionStats {
    /// Most played first.
    pub moves: Vec<MoveStats>,
    /// The last games through the position, last first.
    pub recent_games: Vec<GameRef>,
    /// The highest-rated games through it, highest first.
    pub top_games: Vec<GameRef>,
}

/// The statistics of the position with id `position` (`domain::explorer::position_id`).
pub async fn position(
    client: &impl GenericClient,
    position: Uuid,
    filter: &Filter,
) -> Result<PositionStats, Error> {
    const WHERE: &str = "position = $1 AND ($2::bool IS NULL OR ranked = $2) \
         AND (cardinality($3::int2[]) = 0 OR band = ANY($3)) \
         AND ($4::date IS NULL OR month >= $4) AND ($5::date IS NULL OR month <= $5)";
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] = [
        &position,
        &filter.ranked,
        &filter.bands,
        &filter.since,
        &filter.until,
    ];
    let moves = client
        .query(
            &format!(
                "SELECT mv, sum(games)::int8, sum(wins)::int8, sum(draws)::int8, \
                   sum(losses)::int8, sum(rating_sum), sum(rated)::int8 \
                 FROM explorer_moves WHERE {WHERE} GROUP BY mv ORDER BY 2 DESC, mv"
            ),
            &params,
        )
        .await?
        .iter()
        .map(|r| {
            let rated: i64 = r.get(6);
            let sum: f64 = r.get(5);
            MoveStats {
                mv: r.get(0),
                games: r.get(1),
                wins: r.get(2),
                draws: r.get(3),
                losses: r.get(4),
                average_rating: (rated > 0).then(|| sum / rated as f64),
            }
        })
        .collect();
    let games = |order: &str| {
        format!(
            "SELECT match_id, rating, month FROM explorer_games WHERE {WHERE} \
             ORDER BY {order} LIMIT {GAMES_KEPT}"
        )
    };
    let to_ref = |r: &tokio_postgres::Row| GameRef {
        match_id: r.get(0),
        rating: r.get(1),
        month: r.get(2),
    };
    let recent_games = client
        .query(&games("ended_position DESC"), &params)
        .await?
        .iter()
        .map(to_ref)
        .collect();
    let top_games = client
        .query(&games("rating DESC, ended_position DESC"), &params)
        .await?
        .iter()
        .map(to_ref)
        .collect();
    Ok(PositionStats {
        moves,
        recent_games,
        top_games,
    })
}
