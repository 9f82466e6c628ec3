//! tournament-bench: what the tournament pairings cost, and how the Swiss pairing compares with
//! FIDE's Dutch system (issue 44):
//! - an arena pairing wave's CPU time at 1,000, 5,000 and 10,000 idle players
//!   (`domain::tournaments::arena::pair`);
//! - a Swiss round of 10,000 players, the first and the fifth (`swiss::pair`);
//! - the organiser's next arena wave (`organiser::next`: the standings, each idle player's
//!   history, the pairing) in a folded arena of 10,000 players after 4 and 8 waves of games;
//! - generated Swiss events (8 to 40 players, 5 to 7 rounds, results drawn from the ratings)
//!   paired by `swiss::pair`, each round's standings also given to the Dutch oracle
//!   (`bench/swiss_oracle.py`, caissify-pairings in `bench/.venv-swiss`; skipped, saying so,
//!   where it is not installed): how often the two agree on a pair, a first mover and the bye,
//!   the score gaps each leaves, and any rematch or second bye.
//!
//!   cargo run --release -p bench --bin tournament-bench [-- EVENTS]

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::Instant;

use domain::ids::PlayerId;
use domain::rng::SplitMix64;
use domain::tournaments::arena::{self, Idle};
use domain::tournaments::swiss::{self, Entry};
use domain::tournaments::{
    Command, Format, Tournament, TournamentCreated, TournamentEvent, decide, evolve, organiser,
};
use serde_json::{Value, json};
use uuid::Uuid;

fn id(i: usize) -> PlayerId {
    PlayerId::from_uuid(Uuid::from_u128(i as u128 + 1))
}

/// `n` idle arena players with the history a running arena gives them.
fn idle(n: usize, rng: &mut SplitMix64) -> Vec<Idle> {
    (0..n)
        .map(|i| {
            let streak = rng.index(3) as u32;
            let first = rng.chance(50);
            Idle {
                player: id(i),
                rank: i as u32 + 1,
                rating: 1000.0 + rng.index(1200) as f64,
                last_opponent: Some(id(rng.index(n))),
                firsts: rng.index(8) as u32,
                seconds: rng.index(8) as u32,
                first_streak: if first { streak } else { 0 },
                second_streak: if first { 0 } else { streak },
            }
        })
        .collect()
}

/// The median of `runs` timings of `f`, in milliseconds, with its last result.
fn timed<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        last = Some(f());
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    (times[runs / 2], last.expect("a run"))
}

/// A Swiss event being played: entries in standings order, with what the oracle needs too.
struct Event {
    entries: Vec<Entry>,
    ratings: Vec<f64>,
    colours: HashMap<PlayerId, Vec<&'static str>>,
    floats: HashMap<PlayerId, Vec<&'static str>>,
    byes: HashMap<PlayerId, u32>,
}

impl Event {
    fn new(n: usize, rng: &mut SplitMix64) -> Event {
        let ratings: Vec<f64> = (0..n).map(|_| 1000.0 + rng.index(1000) as f64).collect();
        let entries = (0..n)
            .map(|i| Entry {
                player: id(i),
                score: 0,
                rating: ratings[i],
                opponents: Vec::new(),
                firsts: 0,
                seconds: 0,
                first_streak: 0,
                second_streak: 0,
                had_bye: false,
            })
            .collect();
        Event {
            entries,
            ratings,
            colours: HashMap::new(),
            floats: HashMap::new(),
            byes: HashMap::new(),
        }
    }

    fn sort(&mut self) {
        self.entries
            .sort_by(|a, b| b.score.cmp(&a.score).then(b.rating.total_cmp(&a.rating)));
    }

    /// Plays a round paired as `pairing`, results drawn from the ratings.
    fn play(&mut self, pairing: &swiss::RoundPairing, rng: &mut SplitMix64) {
        let pos: HashMap<PlayerId, usize> = self
            .entries
            .iter()
            .enumerate()
            .map(|(k, e)| (e.player, k))
            .collect();
        let before: HashMap<PlayerId, u32> =
            self.entries.iter().map(|e| (e.player, e.score)).collect();
        if let Some(b) = pairing.bye {
            let e = &mut self.entries[pos[&b]];
            e.had_bye = true;
            e.score += 2;
            *self.byes.entry(b).or_default() += 1;
            self.floats.entry(b).or_default().push("down");
        }
        for &(a, b) in &pairing.games {
            let (ra, rb) = (self.ratings[index(a)], self.ratings[index(b)]);
            let p = 1.0 / (1.0 + 10f64.powf((rb - ra) / 400.0));
            let roll = rng.unit();
            let (sa, sb) = if roll < 0.1 {
                (1, 1)
            } else if roll < 0.1 + 0.9 * p {
                (2, 0)
            } else {
                (0, 2)
            };
            for (me, other, s, first) in [(a, b, sa, true), (b, a, sb, false)] {
                let float = match before[&other].cmp(&before[&me]) {
                    std::cmp::Ordering::Greater => "up",
                    std::cmp::Ordering::Less => "down",
                    std::cmp::Ordering::Equal => "none",
                };
                self.floats.entry(me).or_default().push(float);
                self.colours
                    .entry(me)
                    .or_default()
                    .push(if first { "W" } else { "B" });
                let e = &mut self.entries[pos[&me]];
                e.score += s;
                e.opponents.push(other);
                if first {
                    e.firsts += 1;
                    e.first_streak += 1;
                    e.second_streak = 0;
                } else {
                    e.seconds += 1;
                    e.second_streak += 1;
                    e.first_streak = 0;
                }
            }
        }
    }

    /// The oracle's input for the next round.
    fn oracle_input(&self, rounds: usize) -> Value {
        let players: Vec<Value> = self
            .entries
            .iter()
            .map(|e| {
                json!({
                    "id": e.player.as_uuid().to_string(),
                    "rating": e.rating,
                    "score_half_points": e.score,
                    "opponents": e.opponents.iter().map(|o| o.as_uuid().to_string()).collect::<Vec<_>>(),
                    "colours": self.colours.get(&e.player).cloned().unwrap_or_default(),
                    "byes": self.byes.get(&e.player).copied().unwrap_or(0),
                    "floats": self.floats.get(&e.player).cloned().unwrap_or_default(),
                })
            })
            .collect();
        json!({"rounds": rounds, "players": players})
    }
}

fn index(p: PlayerId) -> usize {
    (p.as_uuid().as_u128() - 1) as usize
}

/// The Dutch oracle's pairing of `input`, or why not.
fn oracle(root: &Path, input: &Value) -> Result<swiss::RoundPairing, String> {
    let mut child = Process::new(root.join("bench/.venv-swiss/bin/python"))
        .arg(root.join("bench/swiss_oracle.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(input.to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let answer: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    if let Some(error) = answer["error"].as_str() {
        return Err(error.to_owned());
    }
    let player = |v: &Value| -> Result<PlayerId, String> {
        v.as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an id: {v}"))
    };
    let games = answer["games"]
        .as_array()
        .ok_or("no games")?
        .iter()
        .map(|g| Ok((player(&g[0])?, player(&g[1])?)))
        .collect::<Result<Vec<_>, String>>()?;
    let bye = if answer["bye"].is_null() {
        None
    } else {
        Some(player(&answer["bye"])?)
    };
    Ok(swiss::RoundPairing { games, bye })
}

/// The sum of the score gaps (half-points) of a round's games.
fn gaps(event: &Event, pairing: &swiss::RoundPairing) -> u32 {
    let score: HashMap<PlayerId, u32> = event.entries.iter().map(|e| (e.player, e.score)).collect();
    pairing
        .games
        .iter()
        .map(|(a, b)| score[a].abs_diff(score[b]))
        .sum()
}

/// Decides and applies `command` on `t` at `at`.
fn apply(t: Option<Tournament>, command: &Command, at: time::OffsetDateTime) -> Option<Tournament> {
    let events = decide(t.as_ref(), command, at).unwrap_or_else(|e| panic!("{e}"));
    events
        .iter()
        .fold(t, |t, e: &TournamentEvent| evolve(t, at, e))
}

/// A 24-hour arena of 10,000 players, waves of games played to their end: the time of
/// `organiser::next` with everyone idle after 4 and after 8 waves.
fn arena_waves(rng: &mut SplitMix64) {
    let tournament = domain::ids::TournamentId::from_uuid(Uuid::from_u128(44));
    let start = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000);
    let mut now = start - time::Duration::minutes(30);
    let created = TournamentCreated {
        name: "Marathon".into(),
        game: domain::games::GameId::FourInARow,
        format: Format::Arena,
        starts_at: start,
        minutes: Some(1440),
        rounds: None,
        rated: true,
        turn_seconds: None,
        private: false,
        created_by: id(99_999),
        max_players: 10_000,
    };
    let mut t = apply(None, &Command::Create(created), now);
    for i in 0..10_000 {
        let join = Command::Join {
            player_id: id(i),
            rating: 1000.0 + rng.index(1200) as f64,
        };
        t = apply(t, &join, now);
    }
    now = start;
    t = apply(t, &Command::Start, now);
    for wave in 1..=8 {
        let state = t.as_ref().expect("a tournament");
        let (ms, command) = timed(if wave == 5 || wave == 1 { 3 } else { 1 }, || {
            organiser::next(tournament, state, now)
        });
        if wave == 5 || wave == 1 {
            println!(
                "  after {} waves ({} games): {ms:>8.1} ms",
                wave - 1,
                state.games.len()
            );
        }
        let command = command.expect("a wave");
        t = apply(t, &command, now);
        let Command::Pair { pairings } = command else {
            panic!("a wave pairs")
        };
        now += time::Duration::minutes(2);
        for p in pairings {
            let winner = [Some(p.players[0]), Some(p.players[1]), None][rng.index(3)];
            t = apply(
                t,
                &Command::Record {
                    match_id: p.match_id,
                    winner,
                },
                now,
            );
        }
    }
    let state = t.as_ref().expect("a tournament");
    let (ms, _) = timed(3, || organiser::next(tournament, state, now));
    println!(
        "  after 8 waves ({} games): {ms:>8.1} ms",
        state.games.len()
    );
}

fn main() {
    let events: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let mut rng = SplitMix64(44);

    println!("arena pairing wave (idle players: median of 5 runs, ms; pairs made)");
    for n in [1_000, 5_000, 10_000] {
        let players = idle(n, &mut rng);
        let (ms, pairs) = timed(5, || arena::pair(&players));
        println!("  {n:>6} idle: {ms:>8.1} ms, {} pairs", pairs.len());
    }

    println!("Swiss round of 10,000 players (median of 3 runs, ms)");
    let mut event = Event::new(10_000, &mut rng);
    for round in 1..=5 {
        event.sort();
        let (ms, pairing) = timed(if round == 1 || round == 5 { 3 } else { 1 }, || {
            swiss::pair(&event.entries)
        });
        let pairing = pairing.expect("a pairing");
        if round == 1 || round == 5 {
            println!(
                "  round {round}: {ms:>8.1} ms, {} games, score gaps {} half-points",
                pairing.games.len(),
                gaps(&event, &pairing)
            );
        }
        event.play(&pairing, &mut rng);
    }

    println!("the organiser's next wave in a folded arena of 10,000 (median of 3 runs, ms)");
    arena_waves(&mut rng);

    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_owned();
    if !root.join("bench/.venv-swiss/bin/python").exists() {
        println!(
            "Swiss against the Dutch oracle: skipped (install it: python3 -m venv bench/.venv-swiss \
             && bench/.venv-swiss/bin/pip install caissify-pairings==0.5.0)"
        );
        return;
    }
    println!(
        "Swiss against the Dutch oracle ({events} generated events, each round's standings to both)"
    );
    let (mut rounds_seen, mut same_pairs, mut games_seen, mut same_first, mut same_bye, mut byes) =
        (0, 0, 0, 0, 0, 0);
    let (mut our_gaps, mut their_gaps, mut oracle_errors, mut ended_early) = (0, 0, 0, 0);
    for _ in 0..events {
        let n = 8 + rng.index(33);
        let rounds = 5 + rng.index(3);
        let mut event = Event::new(n, &mut rng);
        for _ in 0..rounds {
            event.sort();
            let Some(ours) = swiss::pair(&event.entries) else {
                ended_early += 1;
                break;
            };
            // Our rules hold: no rematch, everyone once, one 1-point bye each at most.
            let mut seen = HashSet::new();
            for e in &event.entries {
                assert!(!e.had_bye || ours.bye != Some(e.player), "a second bye");
            }
            for (a, b) in &ours.games {
                assert!(seen.insert(*a) && seen.insert(*b));
                let pa = event
                    .entries
                    .iter()
                    .find(|e| e.player == *a)
                    .expect("a player");
                assert!(!pa.opponents.contains(b), "a rematch");
            }
            match oracle(&root, &event.oracle_input(rounds)) {
                Ok(theirs) => {
                    rounds_seen += 1;
                    let key = |(a, b): &(PlayerId, PlayerId)| (*a.min(b), *a.max(b));
                    let their_pairs: HashMap<(PlayerId, PlayerId), PlayerId> =
                        theirs.games.iter().map(|g| (key(g), g.0)).collect();
                    for g in &ours.games {
                        games_seen += 1;
                        if let Some(first) = their_pairs.get(&key(g)) {
                            same_pairs += 1;
                            if *first == g.0 {
                                same_first += 1;
                            }
                        }
                    }
                    if ours.bye.is_some() {
                        byes += 1;
                        if ours.bye == theirs.bye {
                            same_bye += 1;
                        }
                    }
                    our_gaps += gaps(&event, &ours);
                    their_gaps += gaps(&event, &theirs);
                }
                Err(_) => oracle_errors += 1,
            }
            event.play(&ours, &mut rng);
        }
    }
    let share = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "  rounds compared: {rounds_seen} (the oracle refused {oracle_errors}; ours ended {ended_early} events early)"
    );
    println!(
        "  same pairs: {same_pairs} of {games_seen} games ({:.1} %); same first mover where the pair is the same: {:.1} %",
        share(same_pairs, games_seen),
        share(same_first, same_pairs)
    );
    println!(
        "  same bye: {same_bye} of {byes} ({:.1} %); score gaps (half-points, all rounds): ours {our_gaps}, Dutch {their_gaps}",
        share(same_bye, byes)
    );
}
