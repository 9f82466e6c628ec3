//! The organiser: what a tournament needs next at a given time, as a command to decide — a pure
//! function of its state, so that any instance (and a test) runs the same tournament, and two
//! instances deciding at once write one of their commands (the other's append conflicts).
//!
//! - An open tournament at its start: cancelled with fewer than two active players; an arena
//!   starts; a Swiss or round robin starts with its first round's pairings.
//! - A running arena pairs its idle players (joined, not paused, not playing) until pairing
//!   closes, and finishes at its end once no game is left without a result.
//! - A running Swiss or round robin waits for the round's results, then pairs the next round
//!   ([`swiss::pair`] from the standings, [`berger::round`] over the roster fixed at the start:
//!   a game with a player paused, withdrawn or removed is not played); it finishes after its
//!   last round, and a Swiss one early when no valid pairing is left.
//!
//! Match ids come from the tournament's id and its stream version: the same decision gives the
//! same ids everywhere.
//!
//! A player the caller says is busy ([`next_with`]: seated in a live ranked match elsewhere, or
//! banned) is never paired: an arena leaves them out of its idle players (they wait until
//! free), a Swiss or round robin about to pair a round pauses them first, one command each.

use std::collections::HashSet;

use time::OffsetDateTime;
use uuid::Uuid;

use crate::ids::{MatchId, PlayerId, TournamentId};

use super::arena::{self, Idle};
use super::standings::standings;
use super::swiss::{self, Entry};
use super::{
    ARENA_CLOSES_BEFORE_END, Bye, Command, EntrantStatus, Format, PairingMade, Status, Tournament,
    berger,
};

/// The match of the `k`-th pairing decided at `version` of tournament `id`.
pub fn match_id(id: TournamentId, version: u64, k: usize) -> MatchId {
    MatchId::from_uuid(Uuid::new_v5(
        &id.as_uuid(),
        format!("pairing:{version}:{k}").as_bytes(),
    ))
}

/// The next command for `t` (tournament `id`) at `now`, if any, with nobody busy.
pub fn next(id: TournamentId, t: &Tournament, now: OffsetDateTime) -> Option<Command> {
    next_with(id, t, now, &HashSet::new())
}

/// The next command for `t` (tournament `id`) at `now`, if any, where the players in `busy`
/// may not be paired now: left out of an arena's idle players, paused before a Swiss or round
/// robin round is paired (a [`Command::Pause`] for the first of them still joined; the caller
/// asks again after each).
pub fn next_with(
    id: TournamentId,
    t: &Tournament,
    now: OffsetDateTime,
    busy: &HashSet<PlayerId>,
) -> Option<Command> {
    match t.status(now) {
        Status::Scheduled | Status::Finished | Status::Cancelled => None,
        Status::Open if now < t.created.starts_at => None,
        Status::Open if t.active().count() < 2 => Some(Command::Cancel {
            reason: "fewer than two players at the start".into(),
        }),
        Status::Open if t.created.format == Format::Arena => Some(Command::Start),
        Status::Open => pause_busy(t, busy).or_else(|| next_round(id, t)),
        Status::Running if t.created.format == Format::Arena => next_in_arena(id, t, now, busy),
        Status::Running => {
            if t.has_unfinished() {
                None
            } else if t.round >= t.rounds() {
                Some(Command::Finish)
            } else {
                pause_busy(t, busy).or_else(|| next_round(id, t).or(Some(Command::Finish)))
            }
        }
    }
}

/// A pause for the first joined player who is busy, before a round is paired.
fn pause_busy(t: &Tournament, busy: &HashSet<PlayerId>) -> Option<Command> {
    if busy.is_empty() {
        return None;
    }
    t.active()
        .find(|e| busy.contains(&e.player_id))
        .map(|e| Command::Pause {
            player_id: e.player_id,
        })
}

fn pairing(
    id: TournamentId,
    t: &Tournament,
    round: u32,
    k: usize,
    players: [PlayerId; 2],
) -> PairingMade {
    PairingMade {
        round,
        match_id: match_id(id, t.version, k),
        players,
    }
}

fn next_in_arena(
    id: TournamentId,
    t: &Tournament,
    now: OffsetDateTime,
    busy: &HashSet<PlayerId>,
) -> Option<Command> {
    let end = t.ends_at()?;
    if now >= end {
        return (!t.has_unfinished()).then_some(Command::Finish);
    }
    if now >= end - ARENA_CLOSES_BEFORE_END {
        return None;
    }
    let idle: Vec<Idle> = standings(t)
        .iter()
        .filter(|l| {
            l.status == EntrantStatus::Joined
                && !t.playing(l.player_id)
                && !busy.contains(&l.player_id)
        })
        .map(|l| Idle::of(t, l.player_id, l.rank))
        .collect();
    let pairs = arena::pair(&idle);
    (!pairs.is_empty()).then(|| Command::Pair {
        pairings: pairs
            .into_iter()
            .enumerate()
            .map(|(k, (a, b))| pairing(id, t, 1, k, [a, b]))
            .collect(),
    })
}

/// The next round of a Swiss or round robin; `None` when no valid pairing is left.
fn next_round(id: TournamentId, t: &Tournament) -> Option<Command> {
    let round = t.round + 1;
    let (games, byes) = match t.created.format {
        Format::Swiss => {
            let lines = standings(t);
            let round_pairing = swiss::pair(&Entry::all(t, &lines))?;
            let byes = round_pairing
                .bye
                .map(|player_id| Bye {
                    round,
                    player_id,
                    half_points: 2,
                })
                .into_iter()
                .collect();
            (round_pairing.games, byes)
        }
        Format::RoundRobin => {
            // The roster is fixed at the start; before it, the players the start takes.
            let roster: Vec<PlayerId> = if t.started_at.is_some() {
                t.roster.clone()
            } else {
                t.would_start().map(|e| e.player_id).collect()
            };
            let schedule = berger::round(roster.len(), round)?;
            let active = |p: &PlayerId| {
                t.entrant(*p)
                    .is_some_and(|e| e.status == EntrantStatus::Joined)
            };
            let games = schedule
                .games
                .iter()
                .map(|&(a, b)| (roster[a], roster[b]))
                .filter(|(a, b)| active(a) && active(b))
                .collect();
            (games, Vec::new())
        }
        Format::Arena => return None,
    };
    Some(Command::StartRound {
        pairings: games
            .into_iter()
            .enumerate()
            .map(|(k, (a, b))| pairing(id, t, round, k, [a, b]))
            .collect(),
        byes,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use time::Duration;

    use super::super::{TournamentCreated, TournamentEvent, decide, evolve};
    use super::*;
    use crate::games::GameId;
    use crate::rng::SplitMix64;

    fn player(i: u128) -> PlayerId {
        PlayerId::from_uuid(Uuid::from_u128(i))
    }

    /// Runs a whole tournament of `n` players (ratings rising with their number) through the
    /// organiser: results drawn from the ratings, a game ending `game_seconds` after it was
    /// paired; every command the organiser gives must be accepted. Returns the tournament at its
    /// end.
    fn run(format: Format, n: u128, rounds: Option<u32>, seed: u64) -> Tournament {
        let id = TournamentId::from_uuid(Uuid::from_u128(7));
        let start = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        let created = TournamentCreated {
            name: "Test".into(),
            game: GameId::FourInARow,
            format,
            starts_at: start,
            minutes: (format == Format::Arena).then_some(20),
            rounds,
            rated: false,
            turn_seconds: None,
            private: false,
            created_by: player(999),
            max_players: 16,
        };
        let mut now = start - Duration::minutes(30);
        let mut t: Option<Tournament> = None;
        let apply = |t: &mut Option<Tournament>, c: &Command, now| {
            let events = decide(t.as_ref(), c, now).unwrap_or_else(|e| panic!("{c:?}: {e}"));
            for e in &events {
                *t = evolve(t.take(), now, e);
            }
            events
        };
        apply(&mut t, &Command::Create(created), now);
        for i in 1..=n {
            apply(
                &mut t,
                &Command::Join {
                    player_id: player(i),
                    rating: 1400.0 + 10.0 * i as f64,
                },
                now,
            );
        }
        let mut rng = SplitMix64(seed);
        let mut ends: HashMap<MatchId, OffsetDateTime> = HashMap::new();
        now = start;
        for _ in 0..100_000 {
            let state = t.as_ref().expect("a tournament");
            if matches!(state.status(now), Status::Finished | Status::Cancelled) {
                break;
            }
            // Results of the games whose time has come.
            let due: Vec<(MatchId, [PlayerId; 2])> = state
                .unfinished()
                .filter(|g| ends.get(&g.pairing.match_id).is_some_and(|&at| at <= now))
                .map(|g| (g.pairing.match_id, g.pairing.players))
                .collect();
            for (match_id, [a, b]) in due {
                let roll = rng.index(10);
                let winner = match roll {
                    0 => None,
                    1..=3 => Some(a.min(b)),
                    _ => Some(a.max(b)),
                };
                apply(&mut t, &Command::Record { match_id, winner }, now);
            }
            let state = t.as_ref().expect("a tournament");
            if let Some(command) = next(id, state, now) {
                for e in apply(&mut t, &command, now) {
                    if let TournamentEvent::PairingMade(p) = e {
                        ends.insert(
                            p.match_id,
                            now + Duration::seconds(30 + rng.index(90) as i64),
                        );
                    }
                }
            } else {
                now += Duration::seconds(5);
            }
        }
        t.expect("a tournament")
    }

    #[test]
    fn a_round_robin_plays_every_pair_twice_and_finishes() {
        for n in [2, 5, 8] {
            let t = run(Format::RoundRobin, n, None, n as u64);
            assert!(t.finished, "{n}");
            assert_eq!(t.round, t.rounds());
            assert_eq!(t.games.len() as u128, n * (n - 1), "{n}");
        }
    }

    #[test]
    fn a_swiss_plays_its_rounds_or_ends_when_no_pairing_is_left() {
        let t = run(Format::Swiss, 9, Some(5), 1);
        assert!(t.finished);
        assert_eq!(t.round, 5);
        // Nine players, five rounds: four games and a bye each round, five byes to five players.
        assert_eq!(t.games.len(), 20);
        assert_eq!(t.byes.len(), 5);
        let bye_takers: std::collections::HashSet<PlayerId> =
            t.byes.iter().map(|b| b.player_id).collect();
        assert_eq!(bye_takers.len(), 5);
        // Four players have three opponents each: the fourth round has no valid pairing.
        let t = run(Format::Swiss, 4, Some(5), 2);
        assert!(t.finished);
        assert_eq!(t.round, 3);
        assert_eq!(t.games.len(), 6);
    }

    #[test]
    fn an_arena_pairs_until_it_closes_and_finishes_after_the_last_result() {
        let t = run(Format::Arena, 7, None, 3);
        assert!(t.finished);
        let end = t.ends_at().expect("an end");
        assert!(t.games.len() > 20, "{} games", t.games.len());
        assert!(
            t.games
                .iter()
                .all(|g| g.paired_at < end - ARENA_CLOSES_BEFORE_END)
        );
        assert!(t.games.iter().all(|g| g.result.is_some()));
    }

    /// A tournament of `n` joined players at its start.
    fn at_its_start(format: Format, n: u128) -> (TournamentId, Tournament, OffsetDateTime) {
        let id = TournamentId::from_uuid(Uuid::from_u128(8));
        let start = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        let created = TournamentCreated {
            name: "Busy".into(),
            game: GameId::FourInARow,
            format,
            starts_at: start,
            minutes: (format == Format::Arena).then_some(20),
            rounds: (format == Format::Swiss).then_some(3),
            rated: true,
            turn_seconds: None,
            private: false,
            created_by: player(999),
            max_players: 16,
        };
        let joined = start - Duration::minutes(30);
        let mut t = evolve(None, joined, &TournamentEvent::TournamentCreated(created));
        for i in 1..=n {
            t = evolve(
                t,
                joined,
                &TournamentEvent::PlayerJoined {
                    player_id: player(i),
                    rating: 1500.0,
                },
            );
        }
        (id, t.expect("a tournament"), start)
    }

    /// Decides `command` on `t` at `now` and folds its events.
    fn take(t: Tournament, command: &Command, now: OffsetDateTime) -> Tournament {
        let events = decide(Some(&t), command, now).expect("accepted");
        let mut state = Some(t);
        for e in &events {
            state = evolve(state, now, e);
        }
        state.expect("a tournament")
    }

    fn paired(command: &Command) -> Vec<PlayerId> {
        match command {
            Command::Pair { pairings } | Command::StartRound { pairings, .. } => {
                pairings.iter().flat_map(|p| p.players).collect()
            }
            other => panic!("not a pairing: {other:?}"),
        }
    }

    #[test]
    fn a_busy_player_waits_in_an_arena_until_free() {
        let (id, t, start) = at_its_start(Format::Arena, 5);
        let t = take(t, &Command::Start, start);
        let busy: HashSet<PlayerId> = [player(2)].into();
        let command = next_with(id, &t, start, &busy).expect("a pairing");
        let players = paired(&command);
        assert_eq!(players.len(), 4);
        assert!(!players.contains(&player(2)), "{players:?}");
        // Not paused: once free, they are idle again and paired.
        let t = take(t, &command, start);
        assert_eq!(
            t.entrant(player(2)).expect("joined").status,
            EntrantStatus::Joined
        );
        assert!(next_with(id, &t, start, &busy).is_none());
        let mut t = t;
        for g in t.unfinished().cloned().collect::<Vec<_>>() {
            let [a, _] = g.pairing.players;
            t = take(
                t,
                &Command::Record {
                    match_id: g.pairing.match_id,
                    winner: Some(a),
                },
                start,
            );
        }
        let command = next(id, &t, start).expect("a pairing");
        assert!(paired(&command).contains(&player(2)));
    }

    #[test]
    fn a_busy_player_is_paused_before_a_round_is_paired() {
        for format in [Format::Swiss, Format::RoundRobin] {
            let (id, mut t, start) = at_its_start(format, 4);
            let busy: HashSet<PlayerId> = [player(1), player(3)].into();
            let mut pauses = Vec::new();
            let command = loop {
                let command = next_with(id, &t, start, &busy).expect("a command");
                let Command::Pause { player_id } = command else {
                    break command;
                };
                pauses.push(player_id);
                t = take(t, &command, start);
            };
            assert_eq!(pauses, [player(1), player(3)], "{format:?}");
            let players = paired(&command);
            assert!(
                players.iter().all(|p| !busy.contains(p)),
                "{format:?}: {players:?}"
            );
            // A Swiss pairs the two others; a round robin plays the games of its table
            // between players not paused.
            if format == Format::Swiss {
                assert_eq!(players.len(), 2);
            }
        }
    }

    #[test]
    fn too_few_players_cancel_it_at_the_start() {
        let t = run(Format::Swiss, 1, Some(3), 4);
        assert!(t.cancelled);
    }
}
