//! The shared cache of solved positions: every exact analysis is stored once, keyed by the
//! canonical form of its position under the game's symmetries, and any instance answers that
//! position, or any of its images, from it at once. The CPU levels never read it, so a CPU
//! choice stays a pure function of the position and the match's seed.

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;

use domain::analysis::Analysis;
use domain::games::AnyPosition;

use crate::error::{ApiError, unexpected};

/// The exact verdict on `pos` if it, or one of its images, was solved before: its best moves
/// in `pos`'s orientation.
pub async fn lookup(
    client: &impl GenericClient,
    pos: &AnyPosition,
) -> Result<Option<Analysis>, ApiError> {
    let (key, s) = pos.canonical();
    let row = client
        .query_opt(
            "SELECT score, best_moves FROM solved_positions WHERE key = $1",
            &[&key],
        )
        .await
        .map_err(unexpected)?;
    let Some(row) = row else {
        return Ok(None);
    };
    let canonical: Vec<String> = row.get(1);
    let best_moves = canonical
        .iter()
        .map(|m| pos.move_from_canonical(m, s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(unexpected)?;
    Ok(Some(Analysis {
        score: row.get(0),
        best_moves,
        exact: true,
    }))
}

/// Stores an exact verdict on `pos` (its best moves in `pos`'s orientation); an estimate is
/// not stored. The first store of a position wins: an exact verdict is the same every time.
pub async fn store(
    client: &impl GenericClient,
    pos: &AnyPosition,
    analysis: &Analysis,
    at: OffsetDateTime,
) -> Result<(), ApiError> {
    if !analysis.exact {
        return Ok(());
    }
    let (key, s) = pos.canonical();
    let best_moves = analysis
        .best_moves
        .iter()
        .map(|m| pos.move_to_canonical(m, s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(unexpected)?;
    client
        .execute(
            "INSERT INTO solved_positions (key, game, score, best_moves, solved_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING",
            &[
                &key,
                &pos.game().as_str(),
                &analysis.score,
                &best_moves,
                &at,
            ],
        )
        .await
        .map_err(unexpected)?;
    Ok(())
}
