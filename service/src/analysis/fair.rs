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
use projections::audit::{CriticalPosition, Flag, FlagDecision, FlagRules};

use crate::core::Core;
use crate::error::{Error, unexpected};

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
/// A declared bot is an engine by its own account: it is neither assessed nor anyone's
/// yardstick. Read from `move_quality` (current solver version) and the ratings projection; it changes
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
    // Each match's humans (its plies' movers), for the opponents.
    let seated = client
        .query(
            "SELECT DISTINCT match_id, player_id FROM move_quality \
             WHERE match_id = ANY($1) AND player_id IS NOT NULL",
            &[&matches],
        )
        .await
        .map_err(unexpected)?;
    let mut humans: BTreeMap<Uuid, Vec<Uuid>> = BTreeMap::new();
    for r in &seated {
        humans.entry(r.get(0)).or_default().push(r.get(1));
    }
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
        let opponent = humans
            .get(&match_id)
            .and_then(|h| h.iter().find(|&&o| o != player).copied());
        by.entry((game, player))
            .or_default()
            .entry(match_id)
            .or_insert_with(|| Played {
                ended_at: r.get(3),
                opponent,
                moves: Vec::new(),
            })
            .moves
            .push(m);
    }
    let players: Vec<Uuid> = by.keys().map(|(_, p)| *p).collect();
    let bots = crate::standing::bots(client, &players).await?;
    by.retain(|(_, p), _| !bots.contains(&PlayerId::from_uuid(*p)));
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

/// One assessed match of a player: its end, the opponent, and the player's critical moves.
#[derive(Clone, Debug)]
struct Played {
    ended_at: OffsetDateTime,
    opponent: Option<Uuid>,
    moves: Vec<CriticalMove>,
}

/// A player's assessed matches of one game, by match.
type Games = BTreeMap<Uuid, Played>;

/// Adds a player's games to `calibration` with `sign` (1 in, -1 out), each game weighing
/// what [`fairplay::game_weights`] gives it.
fn calibrate(calibration: &mut Calibration, games: &Games, sign: f64) {
    let opponents: Vec<Option<Uuid>> = games.values().map(|g| g.opponent).collect();
    for (played, weight) in games.values().zip(fairplay::game_weights(&opponents)) {
        calibration.add(&played.moves, sign * weight);
    }
}

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
            calibrate(c, games, 1.0);
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
            calibrate(&mut calibration, games, -1.0);
        }
        let mut recent: Vec<(&Uuid, &Played)> = games.iter().collect();
        recent.sort_by(|a, b| b.1.ended_at.cmp(&a.1.ended_at).then(b.0.cmp(a.0)));
        recent.truncate(rules.engine_recent_games as usize);
        let moves: Vec<Vec<CriticalMove>> = recent.iter().map(|(_, p)| p.moves.clone()).collect();
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
pub async fn engine_flags(app: &Core, rules: &FlagRules) -> Result<Vec<Flag>, Error> {
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
        let player_id = PlayerId::from_uuid(player);
        let reviewed: Vec<Uuid> = if e.suspect_games.is_empty() {
            ids.iter().map(|m| m.as_uuid()).collect()
        } else {
            e.suspect_games.iter().map(|&i| ids[i].as_uuid()).collect()
        };
        let client = app.pool.get().await.map_err(unexpected)?;
        let name = crate::players::name(&client, player_id).await?;
        let positions = client
            .query(
                "SELECT match_id, ply, mv, best_moves, optimal FROM move_quality \
                 WHERE player_id = $1 AND critical AND by_human AND match_id = ANY($2) \
                 ORDER BY ended_at DESC, match_id, ply LIMIT 60",
                &[&player, &reviewed],
            )
            .await
            .map_err(unexpected)?
            .iter()
            .map(|r| CriticalPosition {
                match_id: MatchId::from_uuid(r.get(0)),
                ply: u32::try_from(r.get::<_, i32>(1)).unwrap_or(0),
                mv: r.get(2),
                best_moves: r.get(3),
                optimal: r.get(4),
            })
            .collect();
        drop(client);
        let (standing, at) = crate::standing::of(app, player_id).await?;
        let decision = standing.last.map(|event| FlagDecision {
            decision: event.decision(),
            reason: match event {
                domain::standing::StandingEvent::PlayerCleared(d)
                | domain::standing::StandingEvent::PlayerBanned(d)
                | domain::standing::StandingEvent::PlayerDeclaredBot(d)
                | domain::standing::StandingEvent::PlayerDeclaredHuman(d) => d.reason,
            },
            at: at
                .and_then(|t| {
                    t.format(&time::format_description::well_known::Rfc3339)
                        .ok()
                })
                .unwrap_or_default(),
        });
        flags.push(Flag::EngineAssistance {
            name,
            positions,
            decision,
            game,
            player: player_id,
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

#[cfg(test)]
mod tests {
    use super::*;
    use domain::rng::SplitMix64;

    /// A player's games: each against `opponent(i)`, three critical positions each (two of five
    /// moves keep the value at the first, one of four at the others), optimal with
    /// `chance + (1 − chance) · skill`.
    fn games(
        rng: &mut SplitMix64,
        rating: f64,
        skill: f64,
        count: usize,
        opponent: impl Fn(usize) -> Uuid,
    ) -> Games {
        (0..count)
            .map(|i| {
                let moves = [(2, 5, 12), (1, 4, 20), (1, 4, 28)]
                    .into_iter()
                    .map(|(best, legal, ply)| {
                        let chance = f64::from(best) / f64::from(legal);
                        CriticalMove {
                            rating,
                            deviation: 50.0,
                            ply,
                            best,
                            legal,
                            optimal: rng.unit() < chance + (1.0 - chance) * skill,
                            think_ms: 3_000,
                        }
                    })
                    .collect();
                let played = Played {
                    ended_at: OffsetDateTime::UNIX_EPOCH + time::Duration::minutes(i as i64),
                    opponent: Some(opponent(i)),
                    moves,
                };
                (
                    Uuid::from_u128(u128::from(rng.next_u64()) | 1 << 100),
                    played,
                )
            })
            .collect()
    }

    /// Fake accounts rated in an honest strong player's band play every critical position badly
    /// among themselves, to drag the band's expectation down until the honest player's record
    /// looks like help. Without the bounded weights the player would be flagged; with them
    /// (games against one opponent share a weight, a player weighs at most a cap), not.
    #[test]
    fn fake_accounts_playing_badly_in_a_band_do_not_flag_its_honest_player() {
        let mut rng = SplitMix64(42);
        let rules = FlagRules::default();
        let game = "four_in_a_row".to_owned();
        let id = |n: u128| Uuid::from_u128(n);
        let mut by: BTreeMap<(String, Uuid), Games> = BTreeMap::new();
        // The ladder: eight honest players per band from 1400 to 2000, stronger up the bands,
        // each against forty distinct opponents.
        for band in 0..4u128 {
            let rating = 1500.0 + 200.0 * band as f64;
            let skill = 0.3 + 0.13 * band as f64;
            for k in 0..8u128 {
                let player = id(1_000 + band * 100 + k);
                let g = games(&mut rng, rating, skill, 40, |i| {
                    id(50_000 + i as u128 * 7 + k)
                });
                by.insert((game.clone(), player), g);
            }
        }
        // The honest strong player, as skilled as their band.
        let honest = id(7);
        let g = games(&mut rng, 2100.0, 0.69, 40, |i| id(60_000 + i as u128));
        by.insert((game.clone(), honest), g);
        // Six fakes rated in that band, a hundred games each within their ring, never optimal
        // beyond chance.
        let fakes: Vec<Uuid> = (0..6).map(|k| id(9_000 + k)).collect();
        for (k, &fake) in fakes.iter().enumerate() {
            let ring = fakes.clone();
            let g = games(&mut rng, 2100.0, 0.0, 100, move |i| {
                ring[(k + 1 + i % 5) % 6]
            });
            by.insert((game.clone(), fake), g);
        }

        let assessed = assess(&by, &BTreeSet::new(), &rules);
        let of_honest = assessed
            .iter()
            .find(|e| e.player == honest)
            .expect("assessed");
        assert!(
            !reaches_bar(&of_honest.evidence, &rules),
            "{:?}",
            of_honest.evidence
        );

        // The same ladder weighed game by game, as before the bounds: the attack would work.
        let mut unweighted = Calibration::default();
        for ((_, player), g) in &by {
            if *player != honest {
                for played in g.values() {
                    unweighted.add(&played.moves, 1.0);
                }
            }
        }
        let moves: Vec<Vec<CriticalMove>> = by[&(game, honest)]
            .values()
            .map(|p| p.moves.clone())
            .collect();
        let aimed = evidence(&moves, &unweighted);
        assert!(reaches_bar(&aimed, &rules), "{aimed:?}");
    }
}
