//! The shared cache of solved positions: every exact analysis is stored once, keyed by the
//! canonical form of its position under the game's symmetries, and any instance answers that
//! position, or any of its images, from it at once (`POST /v1/analysis`, match analyses and
//! jobs), through the fair-play boundary (a position it withholds reads as unknown). The CPU
//! levels never read it, so a CPU choice stays a pure function of the position
//! and the match's seed. Each verdict keeps the solver version that produced it: only the
//! current version's are read, and [`purge`] drops the others and those older than the
//! retention period.

use std::collections::HashMap;

use deadpool_postgres::GenericClient;
use schemars::JsonSchema;
use serde::Serialize;
use time::OffsetDateTime;

use domain::analysis::Analysis;
use domain::games::AnyPosition;
use domain::search::SOLVER_VERSION;

use crate::analysis::boundary::Boundary;
use crate::error::{Error, unexpected};

/// Where an analysis comes from.
#[derive(Serialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Searched now.
    Search,
    /// Solved before: this position or one of its images under the game's symmetries.
    Cache,
}

/// The exact verdict on `pos` if it, or one of its images, was solved before: its best moves
/// in `pos`'s orientation. Every read goes through a fair-play `boundary`: a position it
/// withholds reads as unknown.
pub async fn lookup(
    client: &impl GenericClient,
    boundary: &Boundary,
    pos: &AnyPosition,
) -> Result<Option<Analysis>, Error> {
    Ok(lookup_all(client, boundary, std::slice::from_ref(pos))
        .await?
        .pop()
        .flatten())
}

/// [`lookup`] for many positions in one query, in their order.
pub async fn lookup_all(
    client: &impl GenericClient,
    boundary: &Boundary,
    positions: &[AnyPosition],
) -> Result<Vec<Option<Analysis>>, Error> {
    let keys: Vec<_> = positions
        .iter()
        .map(|pos| (!boundary.withholds(pos)).then(|| pos.canonical()))
        .collect();
    let wanted: Vec<&str> = keys.iter().flatten().map(|(key, _)| key.as_str()).collect();
    if wanted.is_empty() {
        return Ok(vec![None; positions.len()]);
    }
    let rows = client
        .query(
            "SELECT key, score, best_moves FROM solved_positions \
             WHERE key = ANY($1) AND solver = $2",
            &[&wanted, &SOLVER_VERSION],
        )
        .await
        .map_err(unexpected)?;
    let found: HashMap<String, (i32, Vec<String>)> = rows
        .iter()
        .map(|row| (row.get(0), (row.get(1), row.get(2))))
        .collect();
    positions
        .iter()
        .zip(&keys)
        .map(|(pos, key)| {
            let Some((key, s)) = key else {
                return Ok(None);
            };
            let Some((score, canonical)) = found.get(key) else {
                return Ok(None);
            };
            let best_moves = canonical
                .iter()
                .map(|m| pos.move_from_canonical(m, *s))
                .collect::<Result<Vec<_>, _>>()
                .map_err(unexpected)?;
            Ok(Some(Analysis {
                score: *score,
                best_moves,
                exact: true,
                nodes: 0,
            }))
        })
        .collect()
}

/// Stores an exact verdict on `pos` (its best moves in `pos`'s orientation); an estimate is
/// not stored. The first store of a position wins (an exact verdict is the same every time),
/// unless an older solver version stored it.
pub async fn store(
    client: &impl GenericClient,
    pos: &AnyPosition,
    analysis: &Analysis,
    at: OffsetDateTime,
) -> Result<(), Error> {
    store_all(client, &[(*pos, analysis.clone())], at).await
}

/// [`store`] for many positions in one statement; the estimates among them are left out.
pub async fn store_all(
    client: &impl GenericClient,
    verdicts: &[(AnyPosition, Analysis)],
    at: OffsetDateTime,
) -> Result<(), Error> {
    let (mut keys, mut games, mut scores, mut moves) = (vec![], vec![], vec![], vec![]);
    for (pos, analysis) in verdicts.iter().filter(|(_, a)| a.exact) {
        let (key, s) = pos.canonical();
        let best_moves = analysis
            .best_moves
            .iter()
            .map(|m| pos.move_to_canonical(m, s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(unexpected)?;
        keys.push(key);
        games.push(pos.game().as_str());
        scores.push(analysis.score);
        // Arrays of arrays must be rectangular in PostgreSQL: each list travels as one text.
        moves.push(best_moves.join(" "));
    }
    if keys.is_empty() {
        return Ok(());
    }
    client
        .execute(
            "INSERT INTO solved_positions AS p (key, game, score, best_moves, solved_at, solver) \
             SELECT k, g, s, CASE WHEN m = '' THEN '{}'::text[] \
                                  ELSE string_to_array(m, ' ') END, $5, $6 \
             FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[]) AS u(k, g, s, m) \
             ON CONFLICT (key) DO UPDATE SET score = EXCLUDED.score, \
                 best_moves = EXCLUDED.best_moves, solved_at = EXCLUDED.solved_at, \
                 solver = EXCLUDED.solver \
             WHERE p.solver <> EXCLUDED.solver",
            &[&keys, &games, &scores, &moves, &at, &SOLVER_VERSION],
        )
        .await
        .map_err(unexpected)?;
    Ok(())
}

/// Deletes the cached verdicts of other solver versions and those stored before `before`; how
/// many.
pub async fn purge(client: &impl GenericClient, before: OffsetDateTime) -> Result<u64, Error> {
    client
        .execute(
            "DELETE FROM solved_positions \
             WHERE solver < $1 OR solver > $1 OR (solver = $1 AND solved_at < $2)",
            &[&SOLVER_VERSION, &before],
        )
        .await
        .map_err(unexpected)
}
