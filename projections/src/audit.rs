//! Rating audits (admins): recompute every rating from the log alone and diff it
//! against every table that keeps one (`ratings`, `leaderboard`), verify the hash chains, explain a rating match by match, replay the
//! ratings without some players' matches (what-if refunds), and flag suspicious patterns.
//!
//! Nothing here writes: a what-if is a report, never a rewrite of the log.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use domain::games::GameId;
use domain::ids::{MatchId, PlayerId};
use domain::matches::MatchEvent;
use domain::ratings::{Ladder, Rating};
use eventlog::{Checkpoint, EventLog};

use crate::Error;
use crate::facts::{self, Created, Finished};
use crate::ledger::{Ledger, RatedStep};

/// Every finished match of the log, in log order, and how many events were read.
pub async fn finished_matches(log: &EventLog) -> Result<(Vec<Finished>, u64), Error> {
    let mut created: HashMap<String, Created> = HashMap::new();
    let mut finished = Vec::new();
    let mut scanned = 0u64;
    let mut failure: Option<Error> = None;
    let types = ["match_created", "match_ended"];
    let mut checkpoint = Checkpoint::START;
    loop {
        let events = log.read_types_after(checkpoint, &types, 10_000).await?;
        let Some(last) = events.last() else { break };
        checkpoint = last.checkpoint();
        for e in &events {
            scanned += 1;
            let event = match MatchEvent::decode(&e.event_type, e.schema_version, &e.data) {
                Ok(ev) => ev,
                Err(err) => {
                    failure.get_or_insert(Error::Event {
                        position: e.position,
                        reason: err.to_string(),
                    });
                    continue;
                }
            };
            match event {
                MatchEvent::MatchCreated(data) => {
                    created.insert(
                        e.stream.clone(),
                        Created {
                            data,
                            position: e.position,
                        },
                    );
                }
                MatchEvent::MatchEnded(end) => {
                    let (Some(c), Some(id)) = (
                        created.remove(&e.stream),
                        MatchId::of_stream(&e.stream).map(|id| id.as_uuid()),
                    ) else {
                        continue;
                    };
                    finished.push(facts::finished(MatchId::from_uuid(id), &c, e, end));
                }
                _ => {}
            }
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok((finished, scanned)),
    }
}

/// The ratings as the log says they are: every rated match replayed through the ledger,
/// skipping the matches of `excluded` players.
pub fn replay(finished: &[Finished], excluded: &HashSet<PlayerId>) -> (Ledger, Vec<RatedStep>) {
    let mut ledger = Ledger::default();
    let mut steps = Vec::new();
    for f in finished {
        if f.players.iter().flatten().any(|p| excluded.contains(p)) {
            continue;
        }
        if let Some(pair) = ledger.apply(f) {
            steps.extend(pair);
        }
    }
    (ledger, steps)
}

/// Glicko-2 values as shown in reports.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "RatingValues"))]
pub struct Values {
    pub rating: f64,
    pub deviation: f64,
    pub volatility: f64,
    pub games: u32,
}

/// A stored rating that the log does not give.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Mismatch {
    /// The table that holds it: `ratings` (with each step in `rating_points`) or `leaderboard`.
    pub table: &'static str,
    pub player_id: PlayerId,
    pub game: GameId,
    /// On the game's correspondence ladder (else its real-time one).
    pub correspondence: bool,
    /// `None`: the projection has no row (or the log has no match) for this player and ladder.
    pub stored: Option<Values>,
    pub recomputed: Option<Values>,
    /// The first match whose stored step differs from the recomputed one (`ratings` only: the
    /// leaderboard keeps no steps).
    pub first_diverging_match: Option<MatchId>,
}

/// The tables that keep their own copy of every rating, checked by [`ratings`].
const RATING_TABLES: [&str; 2] = ["ratings", "leaderboard"];

/// A player's rating with and without the excluded players' matches.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WhatIf {
    pub player_id: PlayerId,
    pub game: GameId,
    /// On the game's correspondence ladder (else its real-time one).
    pub correspondence: bool,
    pub rating: f64,
    pub what_if: f64,
    pub delta: f64,
    pub deviation: f64,
    pub what_if_deviation: f64,
    /// Rated matches of this player that the exclusion removes.
    pub matches_removed: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BrokenChain {
    pub stream: String,
    pub version: i64,
    pub problem: String,
}

/// The answer of `GET /v1/admin/audits/ratings` and `discs audit ratings`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RatingsAudit {
    pub events_scanned: u64,
    pub players_checked: u64,
    pub mismatches: Vec<Mismatch>,
    pub chains_ok: bool,
    pub streams_verified: u64,
    pub broken_chains: Vec<BrokenChain>,
    pub excluded_players: Vec<PlayerId>,
    pub what_if: Vec<WhatIf>,
}

fn values(s: &domain::ratings::Standing) -> Values {
    Values {
        rating: s.rating.rating,
        deviation: s.rating.deviation,
        volatility: s.rating.volatility,
        games: s.games,
    }
}

/// Recomputes every rating (of `game`, or both) from the log, diffs it against the projection,
/// verifies every hash chain, and reports what excluding `exclude`'s matches would change.
pub async fn ratings(
    log: &EventLog,
    game: Option<GameId>,
    exclude: &[PlayerId],
) -> Result<RatingsAudit, Error> {
    let (finished, events_scanned) = finished_matches(log).await?;
    let (ledger, steps) = replay(&finished, &HashSet::new());
    let client = log.pool().get().await?;
    let mut stored = Vec::with_capacity(RATING_TABLES.len());
    for table in RATING_TABLES {
        stored.push((table, stored_values(&client, table).await?));
    }
    let wanted = |l: Ladder| game.is_none_or(|x| x == l.game);
    let keys: HashSet<(PlayerId, Ladder)> = stored
        .iter()
        .flat_map(|(_, rows)| rows.keys().copied())
        .chain(ledger.standings.keys().copied())
        .filter(|(_, l)| wanted(*l))
        .collect();
    let mut keys: Vec<_> = keys.into_iter().collect();
    keys.sort();
    let mut mismatches = Vec::new();
    for key in &keys {
        let r = ledger.standings.get(key).map(values);
        for (table, rows) in &stored {
            let s = rows.get(key).copied();
            if s == r {
                continue;
            }
            let first = match *table {
                "ratings" => first_diverging(&client, key.0, key.1, &steps).await?,
                _ => None,
            };
            mismatches.push(Mismatch {
                table,
                player_id: key.0,
                game: key.1.game,
                correspondence: key.1.correspondence,
                stored: s,
                recomputed: r,
                first_diverging_match: first,
            });
        }
    }
    let chains = log.verify_all().await?;
    let broken_chains = chains
        .broken
        .iter()
        .map(|b| BrokenChain {
            stream: b.stream.clone(),
            version: b.version,
            problem: format!("{:?}", b.problem),
        })
        .collect::<Vec<_>>();
    let excluded: HashSet<PlayerId> = exclude.iter().copied().collect();
    let mut what_if = Vec::new();
    if !excluded.is_empty() {
        let (without, _) = replay(&finished, &excluded);
        let mut removed: HashMap<(PlayerId, Ladder), u32> = HashMap::new();
        for f in finished.iter().filter(|f| f.is_rated()) {
            if f.players.iter().flatten().any(|p| excluded.contains(p)) {
                for p in f.players.iter().flatten() {
                    *removed.entry((*p, f.ladder())).or_default() += 1;
                }
            }
        }
        for key in &keys {
            if excluded.contains(&key.0) {
                continue;
            }
            let now = ledger.standing(key.0, key.1).rating;
            let then = without.standing(key.0, key.1).rating;
            if now != then {
                what_if.push(WhatIf {
                    player_id: key.0,
                    game: key.1.game,
                    correspondence: key.1.correspondence,
                    rating: now.rating,
                    what_if: then.rating,
                    delta: then.rating - now.rating,
                    deviation: now.deviation,
                    what_if_deviation: then.deviation,
                    matches_removed: removed.get(key).copied().unwrap_or(0),
                });
            }
        }
    }
    Ok(RatingsAudit {
        events_scanned,
        players_checked: keys.len() as u64,
        mismatches,
        chains_ok: chains.is_ok(),
        streams_verified: chains.streams_checked,
        broken_chains,
        excluded_players: exclude.to_vec(),
        what_if,
    })
}

/// Every (player, ladder) row of a table that keeps ratings (`ratings` or `leaderboard`).
async fn stored_values(
    client: &deadpool_postgres::Client,
    table: &str,
) -> Result<BTreeMap<(PlayerId, Ladder), Values>, Error> {
    let rows = client
        .query(
            &format!("SELECT player_id, game, rating, deviation, volatility, games FROM {table}"),
            &[],
        )
        .await?;
    let mut stored = BTreeMap::new();
    for row in rows {
        let Ok(g) = row.get::<_, String>(1).parse::<Ladder>() else {
            continue;
        };
        let games: i32 = row.get(5);
        stored.insert(
            (PlayerId::from_uuid(row.get(0)), g),
            Values {
                rating: row.get(2),
                deviation: row.get(3),
                volatility: row.get(4),
                games: u32::try_from(games).unwrap_or(0),
            },
        );
    }
    Ok(stored)
}

/// The first stored rating step of (player, ladder) that differs from the recomputed ones.
async fn first_diverging(
    client: &deadpool_postgres::Client,
    player: PlayerId,
    ladder: Ladder,
    steps: &[RatedStep],
) -> Result<Option<MatchId>, Error> {
    let rows = client
        .query(
            "SELECT match_id, rating, deviation, volatility FROM rating_points \
             WHERE player_id = $1 AND game = $2 ORDER BY games",
            &[&player.as_uuid(), &ladder.as_str()],
        )
        .await?;
    let mine: Vec<&RatedStep> = steps
        .iter()
        .filter(|s| s.player == player && s.ladder == ladder)
        .collect();
    for i in 0..rows.len().max(mine.len()) {
        match (rows.get(i), mine.get(i)) {
            (Some(row), Some(step)) => {
                let stored = Rating {
                    rating: row.get(1),
                    deviation: row.get(2),
                    volatility: row.get(3),
                };
                let id = MatchId::from_uuid(row.get(0));
                if id != step.match_id || stored != step.step.after {
                    return Ok(Some(step.match_id));
                }
            }
            (Some(row), None) => return Ok(Some(MatchId::from_uuid(row.get(0)))),
            (None, Some(step)) => return Ok(Some(step.match_id)),
            (None, None) => break,
        }
    }
    Ok(None)
}

/// One line of a rating explanation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExplainedStep {
    pub games: u32,
    pub match_id: MatchId,
    pub ended_at: String,
    pub opponent: PlayerId,
    /// The opponent's values the match was rated against (after their own idle days).
    pub opponent_rating: f64,
    pub opponent_deviation: f64,
    pub score: f64,
    pub before: Values,
    pub idle_days: u32,
    pub pre_match_deviation: f64,
    pub after: Values,
    pub change: f64,
    pub match_created_position: i64,
    pub match_ended_position: i64,
}

/// A rating explained, and whether the log gives the same steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Explanation {
    pub steps: Vec<ExplainedStep>,
    pub log_check: LogCheck,
}

/// The explanation's steps checked against the ratings recomputed from the log alone.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogCheck {
    pub events_scanned: u64,
    /// Every stored step has the match and the values the log gives, and no step is missing.
    pub agrees: bool,
    /// The first match whose stored step the log does not give.
    pub first_diverging_match: Option<MatchId>,
}

/// A player's rating on one ladder, step by step from the projection, each step with the events
/// it came from, checked against the steps recomputed from the log.
pub async fn explain(
    log: &EventLog,
    player: PlayerId,
    ladder: Ladder,
) -> Result<Explanation, Error> {
    let client = log.pool().get().await?;
    let rows = client
        .query(
            "SELECT p.games, p.match_id, p.at, p.opponent, o.before_rating, o.pre_deviation, \
               p.score, p.before_rating, p.before_deviation, p.before_volatility, p.idle_days, \
               p.pre_deviation, p.rating, p.deviation, p.volatility, p.created_position, \
               p.ended_position \
             FROM rating_points p \
             LEFT JOIN rating_points o ON o.match_id = p.match_id AND o.player_id = p.opponent \
             WHERE p.player_id = $1 AND p.game = $2 ORDER BY p.games",
            &[&player.as_uuid(), &ladder.as_str()],
        )
        .await?;
    let (finished, events_scanned) = finished_matches(log).await?;
    let (_, recomputed) = replay(&finished, &HashSet::new());
    let first_diverging_match = first_diverging(&client, player, ladder, &recomputed).await?;
    let log_check = LogCheck {
        events_scanned,
        agrees: first_diverging_match.is_none(),
        first_diverging_match,
    };
    let format = time::format_description::well_known::Rfc3339;
    let steps = rows
        .iter()
        .map(|r| {
            let games = u32::try_from(r.get::<_, i32>(0)).unwrap_or(0);
            let at: time::OffsetDateTime = r.get(2);
            let before = Values {
                rating: r.get(7),
                deviation: r.get(8),
                volatility: r.get(9),
                games: games.saturating_sub(1),
            };
            let after = Values {
                rating: r.get(12),
                deviation: r.get(13),
                volatility: r.get(14),
                games,
            };
            ExplainedStep {
                games,
                match_id: MatchId::from_uuid(r.get(1)),
                ended_at: at.format(&format).unwrap_or_default(),
                opponent: PlayerId::from_uuid(r.get(3)),
                opponent_rating: r.get::<_, Option<f64>>(4).unwrap_or(f64::NAN),
                opponent_deviation: r.get::<_, Option<f64>>(5).unwrap_or(f64::NAN),
                score: r.get(6),
                before,
                idle_days: u32::try_from(r.get::<_, i32>(10)).unwrap_or(0),
                pre_match_deviation: r.get(11),
                after,
                change: after.rating - before.rating,
                match_created_position: r.get(15),
                match_ended_position: r.get(16),
            }
        })
        .collect();
    Ok(Explanation { steps, log_check })
}

/// The thresholds the flags use, reported with them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FlagRules {
    /// A pair is flagged after this many ranked matches against each other within the window...
    pub repeated_pair_min_matches: u32,
    pub repeated_pair_window_hours: u32,
    /// ... when their results alternate (each match won by the other player than the last).
    pub alternating_results: bool,
    /// A ranked loss is "very short" below this many plies (Four in a Row, Reversi).
    pub short_loss_plies_four_in_a_row: u32,
    pub short_loss_plies_reversi: u32,
    /// A player is flagged for engine assistance when the optimal moves at the critical
    /// positions of their most recent ranked games in a game stand this many standard
    /// deviations above what their rating leads to expect...
    pub engine_z: f64,
    /// ... over their last this many assessed ranked games of that game ...
    pub engine_recent_games: u32,
    /// ... holding at least this many critical positions.
    pub engine_min_critical: u32,
}

impl Default for FlagRules {
    fn default() -> Self {
        FlagRules {
            repeated_pair_min_matches: 4,
            repeated_pair_window_hours: 24,
            alternating_results: true,
            // The quickest possible win takes 7 plies in Four in a Row and 9 in Reversi.
            short_loss_plies_four_in_a_row: 11,
            short_loss_plies_reversi: 16,
            // Regan's bar for a statistical case on its own.
            engine_z: 4.75,
            engine_recent_games: 40,
            engine_min_critical: 20,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Flag {
    RepeatedPair {
        game: GameId,
        players: [PlayerId; 2],
        matches: Vec<MatchId>,
        /// Winner of each match in order (`null` for a draw).
        winners: Vec<Option<PlayerId>>,
    },
    ShortLoss {
        game: GameId,
        match_id: MatchId,
        loser: PlayerId,
        winner: PlayerId,
        plies: u32,
        reason: String,
    },
    /// A player who finds the solver's moves more often than anyone of their rating
    /// (`service::analysis::fair::engine_flags`, over the move-quality assessments).
    EngineAssistance {
        game: GameId,
        player: PlayerId,
        /// The ranked matches the statistic covers, newest first.
        matches: Vec<MatchId>,
        /// Their replays.
        replays: Vec<String>,
        /// Critical positions met in them, and how many the player solved optimally.
        critical: u32,
        optimal: u32,
        optimal_share: f64,
        /// The share the ladder's players of the same ratings reach on those positions.
        expected_share: f64,
        /// The flag's standard score, the larger of the two tests' (flagged from `engine_z`).
        z: f64,
        /// The pooled standard score of the optimal moves over every critical position (steady
        /// help shows here).
        z_pooled: f64,
        /// The games test's score: some share of the games played with an engine against none
        /// (help in some games only shows here).
        z_games: f64,
        /// The share of the games that fits best as engine-played.
        engine_share: f64,
        /// The games more likely engine-played than not at that share, newest first.
        suspect_matches: Vec<MatchId>,
        /// The coefficient of variation of the player's thinking times at those positions
        /// (the second signal: a relay of an engine's answers is steady); null without time.
        think_cv: Option<f64>,
        /// The player's name.
        name: String,
        /// The critical positions of the suspect games (of the newest games when none is),
        /// newest first: each with the move played and the moves that kept the value.
        positions: Vec<CriticalPosition>,
        /// The last admin decision on the player, if any.
        decision: Option<FlagDecision>,
    },
}

/// One critical position of a flagged player, as an admin reviews it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CriticalPosition {
    pub match_id: MatchId,
    /// The move's ply (1: the first move): the replay's `?ply=` shows the position after it.
    pub ply: u32,
    #[serde(rename = "move")]
    pub mv: String,
    pub best_moves: Vec<String>,
    /// Whether the move played was one of them.
    pub optimal: bool,
}

/// An admin's decision on a player (`domain::standing`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FlagDecision {
    pub decision: domain::standing::Decision,
    pub reason: String,
    /// When it was recorded (RFC 3339).
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Flags {
    pub rules: FlagRules,
    pub flags: Vec<Flag>,
}

/// Suspicious patterns among the ranked matches of the log.
pub async fn flags(log: &EventLog, rules: FlagRules) -> Result<Flags, Error> {
    let (finished, _) = finished_matches(log).await?;
    let rated: Vec<&Finished> = finished.iter().filter(|f| f.is_rated()).collect();
    let mut flags = Vec::new();
    // Repeated pairs with alternating results.
    let mut by_pair: BTreeMap<(GameId, PlayerId, PlayerId), Vec<&Finished>> = BTreeMap::new();
    for f in &rated {
        if let [Some(a), Some(b)] = f.players {
            let (x, y) = if a < b { (a, b) } else { (b, a) };
            by_pair.entry((f.game, x, y)).or_default().push(f);
        }
    }
    let window = time::Duration::hours(i64::from(rules.repeated_pair_window_hours));
    let min = rules.repeated_pair_min_matches as usize;
    for ((game, x, y), matches) in by_pair {
        // The longest run of alternating results whose span fits in the window.
        let winner = |f: &Finished| f.winner_seat.and_then(|s| f.players[s.index()]);
        let mut start = 0;
        for end in 0..matches.len() {
            let alternates = end == start || {
                let (w0, w1) = (winner(matches[end - 1]), winner(matches[end]));
                w0.is_some() && w1.is_some() && w0 != w1
            };
            if !alternates {
                start = end;
            }
            while matches[end].ended_at - matches[start].ended_at > window {
                start += 1;
            }
            let run = &matches[start..=end];
            let next_continues = matches.get(end + 1).is_some_and(|n| {
                winner(n).is_some()
                    && winner(n) != winner(matches[end])
                    && n.ended_at - matches[start].ended_at <= window
            });
            if run.len() >= min && !next_continues {
                flags.push(Flag::RepeatedPair {
                    game,
                    players: [x, y],
                    matches: run.iter().map(|f| f.match_id).collect(),
                    winners: run.iter().map(|f| winner(f)).collect(),
                });
                start = end + 1;
            }
        }
    }
    // Very short lost games.
    let ids: Vec<String> = rated
        .iter()
        .filter(|f| f.winner_seat.is_some())
        .map(|f| f.match_id.stream())
        .collect();
    let client = log.pool().get().await?;
    let plies = eventlog::count_of_type(&client, &ids, "move_played").await?;
    for f in &rated {
        let Some(w) = f.winner_seat else { continue };
        let (Some(winner), Some(loser)) = (f.players[w.index()], f.players[w.other().index()])
        else {
            continue;
        };
        let n = u32::try_from(plies.get(&f.match_id.stream()).copied().unwrap_or(0)).unwrap_or(0);
        let limit = match f.game {
            GameId::FourInARow => rules.short_loss_plies_four_in_a_row,
            GameId::Reversi => rules.short_loss_plies_reversi,
        };
        if n < limit {
            flags.push(Flag::ShortLoss {
                game: f.game,
                match_id: f.match_id,
                loser,
                winner,
                plies: n,
                reason: facts::reason_name(f.reason).to_owned(),
            });
        }
    }
    Ok(Flags { rules, flags })
}

/// Recounts every tournament's standings from the log and diffs them against the projection
/// (see [`crate::tournaments::audit`]).
pub async fn tournaments(log: &EventLog) -> Result<crate::tournaments::TournamentsAudit, Error> {
    crate::tournaments::audit(log).await
}
