//! The opening explorer's answers: the statistics of a position (the `explorer` projection,
//! read from a replica where one has caught up) in the asker's orientation, with the exact
//! outcome after each move where it is known, through the fair-play boundary: a live ranked
//! position (or one that can follow it) is refused, and the value after a move that leads to
//! one is withheld.

use time::Date;
use uuid::Uuid;

use domain::explorer;
use domain::games::{AnyPosition, GameOutcome, Side};
use domain::ids::PlayerId;
use domain::search::four_in_a_row::outcomes;
use eventlog::EventLog;
use projections::Projection;
pub use projections::explorer::{Filter, GameRef};

use crate::analysis::{boundary, solved};
use crate::error::{Error, unexpected};
use crate::live::LivePath;

/// The node budget of the bounded solve of each position after a move that neither the cache of
/// solved positions nor the outcome book knows: enough for Four in a Row's late plies, a
/// millisecond or so each, so that an answer stays fast.
const SOLVE_NODES: u64 = 20_000;

/// Whether [`SOLVE_NODES`] can settle `pos`: Four in a Row from its middle game on (the
/// published test sets' positions of 14 discs or more take a few thousand nodes on average),
/// Reversi in its last dozen empty squares. Elsewhere the solve would spend its budget for an
/// estimate the explorer does not show.
fn within_a_bounded_solve(pos: &AnyPosition) -> bool {
    const FOUR_IN_A_ROW_DISCS: u32 = 16;
    const REVERSI_EMPTIES: u32 = 12;
    match pos {
        AnyPosition::FourInARow(_) => pos.ply() >= FOUR_IN_A_ROW_DISCS,
        AnyPosition::Reversi(_) => 64 - pos.discs().iter().sum::<u32>() <= REVERSI_EMPTIES,
    }
}

/// An outcome for the side that played a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Win,
    Draw,
    Loss,
}

/// One move from the position, in the asker's orientation.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveLine {
    pub mv: String,
    pub games: i64,
    pub wins: i64,
    pub draws: i64,
    pub losses: i64,
    /// Of all the games counted from the position.
    pub share: f64,
    pub average_rating: Option<f64>,
    /// The exact score of the position after the move for the side that played it (the game's
    /// convention), where the cache of solved positions knows it or a bounded solve finds it.
    pub value: Option<i32>,
    /// The exact outcome after the move for the side that played it, where it is known: from an
    /// exact score, the game's end, or Four in a Row's outcome book (which knows the outcome
    /// without its distance: `value` is then null).
    pub outcome: Option<Outcome>,
    /// The position after the move lies within the fair-play boundary of a live ranked match:
    /// its value and outcome are left out.
    pub withheld: bool,
}

/// What the explorer answers for a position.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub moves: Vec<MoveLine>,
    pub recent_games: Vec<GameRef>,
    pub top_games: Vec<GameRef>,
}

/// The explorer's answer for `pos`, asked by `player`. Refused (`InRankedMatch`) to a player
/// seated in a live ranked match where the values after its moves lie beyond the public opening,
/// and (`LivePosition`) where the position is a live ranked one or can follow one; the value
/// after a move that leads within the boundary is withheld.
pub async fn explore(
    app: &LivePath,
    player: PlayerId,
    pos: &AnyPosition,
    filter: &Filter,
) -> Result<Answer, Error> {
    // The answer tells the values after each move: one ply deeper than the position.
    let boundary = boundary::guard(app, player, pos, pos.ply() + 1).await?;
    let (key, symmetry) = pos.canonical();
    let id: Uuid = explorer::position_id(&key);
    let stats = app
        .read(Projection::Explorer, async |log: &EventLog| {
            let client = log.pool().get().await.map_err(unexpected)?;
            projections::explorer::position(&client, id, filter)
                .await
                .map_err(unexpected)
        })
        .await?;
    let total: i64 = stats.moves.iter().map(|m| m.games).sum();
    let mut lines = Vec::with_capacity(stats.moves.len());
    let mut after = Vec::with_capacity(stats.moves.len());
    for m in stats.moves {
        let mv = pos
            .move_from_canonical(&m.mv, symmetry)
            .map_err(unexpected)?;
        let mut next = *pos;
        next.play(&mv).map_err(unexpected)?;
        after.push(next);
        lines.push(MoveLine {
            mv,
            games: m.games,
            wins: m.wins,
            draws: m.draws,
            losses: m.losses,
            share: if total > 0 {
                m.games as f64 / total as f64
            } else {
                0.0
            },
            average_rating: m.average_rating,
            value: None,
            outcome: None,
            withheld: false,
        });
    }
    let client = app.pool.get().await.map_err(unexpected)?;
    let withheld: Vec<bool> = after.iter().map(|next| boundary.withholds(next)).collect();
    let mut known: Vec<Option<i32>> = solved::lookup_all(&client, &boundary, &after)
        .await?
        .into_iter()
        .map(|a| a.map(|a| a.score))
        .collect();
    drop(client);
    // A bounded solve of the positions neither the cache nor the book knows: the cheap ones
    // (Four in a Row's late plies) come out exact, and go to the cache.
    let open: Vec<AnyPosition> = after
        .iter()
        .zip(&known)
        .zip(&withheld)
        .filter(|((next, k), withheld)| {
            !**withheld
                && k.is_none()
                && next.outcome().is_none()
                && domain::analysis::proven_outcome(next, 0, false).is_none()
                && within_a_bounded_solve(next)
        })
        .map(|((next, _), _)| *next)
        .collect();
    // The solves run in a search slot (an analysis one, the player's): without one free now,
    // the moves go without the values a solve would have found.
    let slot = match open.is_empty() {
        true => None,
        false => app.searches.for_analysis(player).await.ok(),
    };
    if let Some(_slot) = slot {
        let searched = open.clone();
        let solved_now = tokio::task::spawn_blocking(move || {
            let mut analyser = domain::analysis::Analyser::new();
            let limits = domain::search::Limits::nodes(SOLVE_NODES);
            searched
                .into_iter()
                .filter_map(|p| {
                    let a = analyser.analyse(&p, &limits).ok()?;
                    a.exact.then_some((p, a))
                })
                .collect::<Vec<_>>()
        })
        .await
        .map_err(unexpected)?;
        for (p, a) in &solved_now {
            for (next, k) in after.iter().zip(known.iter_mut()) {
                if next == p {
                    *k = Some(a.score);
                }
            }
        }
        if !solved_now.is_empty() {
            let client = app.pool.get().await.map_err(unexpected)?;
            solved::store_all(&client, &solved_now, app.now()).await?;
        }
    }
    let mover = pos.side_to_move();
    for (((line, next), known), withheld) in lines.iter_mut().zip(&after).zip(known).zip(withheld) {
        line.withheld = withheld;
        if !withheld {
            (line.value, line.outcome) = value_after(next, mover, known);
        }
    }
    Ok(Answer {
        moves: lines,
        recent_games: stats.recent_games,
        top_games: stats.top_games,
    })
}

/// The exact value and outcome, for `mover`, of `next` (the position after its move): from the
/// game's end, a cached exact score (the side to move's in `next`), or the outcome book.
fn value_after(
    next: &AnyPosition,
    mover: Side,
    cached: Option<i32>,
) -> (Option<i32>, Option<Outcome>) {
    let of_sign = |s: i32| match s.signum() {
        1 => Outcome::Win,
        0 => Outcome::Draw,
        _ => Outcome::Loss,
    };
    if let Some(GameOutcome { winner, .. }) = next.outcome() {
        return (
            None,
            Some(match winner {
                None => Outcome::Draw,
                Some(w) if w == mover => Outcome::Win,
                Some(_) => Outcome::Loss,
            }),
        );
    }
    // The cached score is the side to move's in `next`: the opponent, or the mover again when
    // the opponent must pass.
    let for_mover = |s: i32| if next.side_to_move() == mover { s } else { -s };
    if let Some(score) = cached {
        let v = for_mover(score);
        return (Some(v), Some(of_sign(v)));
    }
    if let AnyPosition::FourInARow(p) = next
        && let Some(o) = outcomes::of(p)
    {
        return (None, Some(of_sign(for_mover(o as i32))));
    }
    (None, None)
}

/// Parses the `ratings` filter: band lower bounds, comma-separated (`1600,1800`); empty: all.
pub fn bands(raw: Option<&str>) -> Result<Vec<i16>, crate::reasons::Invalid> {
    let Some(raw) = raw.filter(|r| !r.is_empty()) else {
        return Ok(Vec::new());
    };
    let known = || {
        explorer::BANDS
            .iter()
            .map(i16::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out: Vec<i16> = raw
        .split(',')
        .map(|b| {
            Some(b)
                .filter(|b| !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()))
                .and_then(|b| b.parse::<i64>().ok())
                .and_then(explorer::band_of_bound)
                .ok_or_else(|| crate::reasons::Invalid::RatingBand {
                    got: b.to_owned(),
                    bands: known(),
                })
        })
        .collect::<Result<_, _>>()?;
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Parses a month, `YYYY-MM`, into its first day.
pub fn month(raw: Option<&str>) -> Result<Option<Date>, crate::reasons::Invalid> {
    let Some(raw) = raw else { return Ok(None) };
    let bad = || crate::reasons::Invalid::Month(raw.to_owned());
    let (y, m) = raw.split_once('-').ok_or_else(bad)?;
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|c| c.is_ascii_digit());
    if !digits(y, 4) || !digits(m, 2) {
        return Err(bad());
    }
    let year: i32 = y.parse().map_err(|_| bad())?;
    let month: u8 = m.parse().map_err(|_| bad())?;
    let month = time::Month::try_from(month).map_err(|_| bad())?;
    Date::from_calendar_date(year, month, 1)
        .map(Some)
        .map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_and_months_parse_or_say_why_not() {
        assert_eq!(bands(None), Ok(vec![]));
        assert_eq!(bands(Some("1800,1600,1800")), Ok(vec![3, 4]));
        assert_eq!(bands(Some("")), Ok(vec![]));
        assert!(bands(Some(" 1800")).is_err());
        assert!(bands(Some("1800,")).is_err());
        assert!(bands(Some("+1800")).is_err());
        assert_eq!(bands(Some("0,2200")), Ok(vec![0, 6]));
        assert!(bands(Some("1300")).is_err());
        assert!(bands(Some("x")).is_err());
        assert_eq!(
            month(Some("2026-02")),
            Ok(Some(
                Date::from_calendar_date(2026, time::Month::February, 1).expect("a date")
            ))
        );
        for bad in [
            "2026-13", "2026-1", "26-01", "2026", "2026-00", "abcd-ef", "+202-01", "2026-+1",
        ] {
            assert!(month(Some(bad)).is_err(), "{bad}");
        }
    }
}
