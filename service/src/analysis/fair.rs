//! Fair play after the game: the engine-assistance evidence and flags, read from the move-quality
//! assessments (`move_quality`, `quality`) against a yardstick calibrated on the ladder
//! (`domain::fairplay`). What is kept from players during a live ranked match is
//! [`super::boundary`]'s.

use std::collections::{BTreeMap, BTreeSet};

use time::OffsetDateTime;
use uuid::Uuid;

use deadpool_postgres::GenericClient;
use domain::fairplay::{self, Calibration, CriticalMove, evidence};
use domain::ids::{MatchId, PlayerId};
use domain::search::SOLVER_VERSION;
use projections::audit::{Flag, FlagRules};

use crate::error::{Error, unexpected};
use crate::state::AppState;

/// One player's engine-assistance evidence in one game, over their most recent assessed ranked
/// games of it.
#[derive(Clone, Debug)]
pub struct PlayerEvidence {
    pub game: String,
    pub player: Uuid,
    /// The games, newest first (those that held a critical position).
    pub matches: Vec<Uuid>,
    pub evidence: fairplay::Evidence,
}

/// The engine-assistance evidence of every player who met a critical position, per game (the
/// model is ARCHITECTURE.md's, "Fair play"): their critical positions in their last
/// `rules.engine_recent_games` assessed ranked matches of the game, their optimal moves against
/// what the ladder's players of the same ratings find at the same phase of the game
/// (`domain::fairplay::Calibration`, calibrated on every other player's critical positions of
/// that game). In two passes: the players the first pass flags are left out of the second
/// pass's yardstick (a relay among the strongest players would make them all look ordinary).
/// Read from `move_quality` (current solver version) and the ratings projection; it changes
/// nothing.
pub async fn engine_evidence(
    client: &impl GenericClient,
    rules: &FlagRules,
) -> Result<Vec<PlayerEvidence>, Error> {
    let rows = client
        .query(
            "SELECT q.player_id, q.game, q.match_id, q.ended_at, cardinality(q.best_moves), \
                    q.legal_moves, q.optimal, q.think_ms, q.ply \
             FROM move_quality q JOIN match_quality m USING (match_id) \
             WHERE q.critical AND q.by_human AND q.player_id IS NOT NULL AND m.solver = $1",
            &[&SOLVER_VERSION],
        )
        .await
        .map_err(unexpected)?;
    let matches: Vec<Uuid> = rows.iter().map(|r| r.get(2)).collect();
    let ratings = projections::queries::ratings_before(client, &matches)
        .await
        .map_err(unexpected)?;
    let new = domain::ratings::Rating::NEW;
    let mut by: BTreeMap<(String, Uuid), Games> = BTreeMap::new();
    for r in &rows {
        let (player, game, match_id): (Uuid, String, Uuid) = (r.get(0), r.get(1), r.get(2));
        let (rating, deviation) = ratings
            .get(&(player, match_id))
            .copied()
            .unwrap_or((new.rating, new.deviation));
        let m = CriticalMove {
            rating,
            deviation,
            // The row's ply counts the move (1: the first): the position lay one ply before.
            ply: u32::try_from(r.get::<_, i32>(8) - 1).unwrap_or(0),
            best: u32::try_from(r.get::<_, i32>(4)).unwrap_or(0),
            legal: u32::try_from(r.get::<_, i32>(5)).unwrap_or(0),
            optimal: r.get(6),
            think_ms: r.get(7),
        };
        by.entry((game, player))
            .or_default()
            .entry(match_id)
            .or_insert_with(|| (r.get(3), Vec::new()))
            .1
            .push(m);
    }
    let first = assess(&by, &BTreeSet::new(), rules);
    let flagged: BTreeSet<(String, Uuid)> = first
        .iter()
        .filter(|e| reaches_bar(&e.evidence, rules))
        .map(|e| (e.game.clone(), e.player))
        .collect();
    Ok(if flagged.is_empty() {
        first
    } else {
        assess(&by, &flagged, rules)
    })
}

/// A player's critical moves in one game, by match (with its end).
type Games = BTreeMap<Uuid, (OffsetDateTime, Vec<CriticalMove>)>;

/// Whether `e` reaches the flag's bar.
fn reaches_bar(e: &fairplay::Evidence, rules: &FlagRules) -> bool {
    e.critical >= rules.engine_min_critical && e.z >= rules.engine_z
}

/// Every player's evidence, against a yardstick calibrated on every other player but
/// `left_out`.
fn assess(
    by: &BTreeMap<(String, Uuid), Games>,
    left_out: &BTreeSet<(String, Uuid)>,
    rules: &FlagRules,
) -> Vec<PlayerEvidence> {
    let mut calibrations: BTreeMap<&str, Calibration> = BTreeMap::new();
    for (key, games) in by {
        let c = calibrations.entry(key.0.as_str()).or_default();
        if !left_out.contains(key) {
            for (_, moves) in games.values() {
                c.add(moves, 1.0);
            }
        }
    }
    let mut out = Vec::new();
    for (key, games) in by {
        let (game, player) = key;
        let Some(mut calibration) = calibrations.get(game.as_str()).cloned() else {
            continue;
        };
        // The player under test is left out of their own yardstick.
        if !left_out.contains(key) {
            for (_, moves) in games.values() {
                calibration.add(moves, -1.0);
            }
        }
        let mut recent: Vec<(&Uuid, &(OffsetDateTime, Vec<CriticalMove>))> = games.iter().collect();
        recent.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(b.0.cmp(a.0)));
        recent.truncate(rules.engine_recent_games as usize);
        let moves: Vec<Vec<CriticalMove>> = recent.iter().map(|(_, (_, m))| m.clone()).collect();
        out.push(PlayerEvidence {
            game: game.clone(),
            player: *player,
            matches: recent.iter().map(|(id, _)| **id).collect(),
            evidence: evidence(&moves, &calibration),
        });
    }
    out
}

/// The engine-assistance flags: the players whose evidence ([`engine_evidence`]) reaches
/// `engine_z` standard deviations over their last `engine_recent_games` games with at least
/// `engine_min_critical` critical positions.
pub async fn engine_flags(app: &AppState, rules: &FlagRules) -> Result<Vec<Flag>, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let all = engine_evidence(&client, rules).await?;
    drop(client);
    let mut flags = Vec::new();
    for PlayerEvidence {
        game,
        player,
        matches,
        evidence: e,
    } in all
    {
        if !reaches_bar(&e, rules) {
            continue;
        }
        let Ok(game) = game.parse() else {
            continue;
        };
        let ids: Vec<MatchId> = matches.into_iter().map(MatchId::from_uuid).collect();
        flags.push(Flag::EngineAssistance {
            game,
            player: PlayerId::from_uuid(player),
            replays: ids.iter().map(|id| format!("/matches/{id}")).collect(),
            suspect_matches: e.suspect_games.iter().map(|&i| ids[i]).collect(),
            matches: ids,
            critical: e.critical,
            optimal: e.optimal,
            optimal_share: f64::from(e.optimal) / f64::from(e.critical.max(1)),
            expected_share: e.expected / f64::from(e.critical.max(1)),
            z: e.z,
            z_pooled: e.z_pooled,
            z_games: e.z_games,
            engine_share: e.engine_share,
            think_cv: e.think_cv,
        });
    }
    Ok(flags)
}
