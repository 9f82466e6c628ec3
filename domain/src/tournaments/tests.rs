//! The tournament's decide/evolve, given / when / then, and by property.

use std::collections::HashSet;

use proptest::prelude::*;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::games::GameId;
use crate::ids::{MatchId, PlayerId};

use super::standings::{removal_report, standings};
use super::*;

/// 2026-12-05 12:00 UTC.
const NOW: OffsetDateTime =
    OffsetDateTime::UNIX_EPOCH.saturating_add(Duration::seconds(1_796_472_000));

fn id(i: u128) -> PlayerId {
    PlayerId::from_uuid(Uuid::from_u128(i))
}

fn match_id(i: u128) -> MatchId {
    MatchId::from_uuid(Uuid::from_u128(1_000_000 + i))
}

fn created(format: Format) -> TournamentCreated {
    TournamentCreated {
        name: "Friday".into(),
        game: GameId::FourInARow,
        format,
        starts_at: NOW + Duration::minutes(30),
        minutes: (format == Format::Arena).then_some(60),
        rounds: (format == Format::Swiss).then_some(5),
        rated: true,
        turn_seconds: None,
        private: false,
        created_by: id(999),
        max_players: if format == Format::RoundRobin {
            16
        } else {
            1000
        },
    }
}

/// Decides and applies `command` at `at`, panicking on a refusal.
fn run(t: Option<Tournament>, command: Command, at: OffsetDateTime) -> Tournament {
    let events = decide(t.as_ref(), &command, at).unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let mut t = t;
    for e in &events {
        // Every event goes through its wire form and back.
        let back =
            TournamentEvent::decode(e.event_type(), TournamentEvent::SCHEMA_VERSION, &e.data())
                .expect("decodes");
        assert_eq!(&back, e);
        t = evolve(t, at, e);
    }
    t.expect("a tournament")
}

/// `t` with the game `match_id` recorded as a draw at `at`.
fn drawn(t: Tournament, match_id: MatchId, at: OffsetDateTime) -> Tournament {
    run(
        Some(t),
        Command::Record {
            match_id,
            winner: None,
        },
        at,
    )
}

fn with_players(format: Format, n: u128) -> Tournament {
    let mut t = run(None, Command::Create(created(format)), NOW);
    for i in 1..=n {
        t = run(
            Some(t),
            Command::Join {
                player_id: id(i),
                rating: 1500.0 + i as f64,
            },
            NOW,
        );
    }
    t
}

#[test]
fn bad_creations_are_refused_with_their_reason() {
    let refused = |f: fn(&mut TournamentCreated)| {
        let mut c = created(Format::Swiss);
        f(&mut c);
        decide(None, &Command::Create(c), NOW).expect_err("refused")
    };
    assert_eq!(refused(|c| c.rounds = Some(0)), TournamentError::Rounds);
    assert_eq!(refused(|c| c.rounds = Some(1000)), TournamentError::Rounds);
    assert_eq!(
        refused(|c| c.starts_at = NOW - Duration::minutes(1)),
        TournamentError::StartsAt
    );
    assert_eq!(
        refused(|c| c.starts_at = NOW + Duration::days(91)),
        TournamentError::StartsAt
    );
    assert_eq!(refused(|c| c.name = String::new()), TournamentError::Name);
    assert_eq!(refused(|c| c.name = "x".repeat(61)), TournamentError::Name);
    assert_eq!(refused(|c| c.minutes = Some(60)), TournamentError::Setting);
    let mut arena = created(Format::Arena);
    arena.minutes = Some(5);
    assert_eq!(
        decide(None, &Command::Create(arena.clone()), NOW),
        Err(TournamentError::Minutes)
    );
    arena.minutes = Some(24 * 60 + 1);
    assert_eq!(
        decide(None, &Command::Create(arena), NOW),
        Err(TournamentError::Minutes)
    );
    let mut rr = created(Format::RoundRobin);
    rr.max_players = 17;
    assert_eq!(
        decide(None, &Command::Create(rr), NOW),
        Err(TournamentError::MaxPlayers(16))
    );
    assert_eq!(
        decide(
            None,
            &Command::Join {
                player_id: id(1),
                rating: 1500.0
            },
            NOW
        ),
        Err(TournamentError::Missing)
    );
}

#[test]
fn joins_open_an_hour_before_and_a_player_joins_once() {
    let mut c = created(Format::Swiss);
    c.starts_at = NOW + Duration::hours(3);
    let t = run(None, Command::Create(c), NOW);
    assert_eq!(t.status(NOW), Status::Scheduled);
    let join = |p| Command::Join {
        player_id: id(p),
        rating: 1500.0,
    };
    assert_eq!(
        decide(Some(&t), &join(1), NOW),
        Err(TournamentError::JoiningClosed)
    );
    let open = NOW + Duration::hours(2);
    assert_eq!(t.status(open), Status::Open);
    let t = run(Some(t), join(1), open);
    assert_eq!(
        decide(Some(&t), &join(1), open),
        Err(TournamentError::AlreadyJoined)
    );
    let t = run(Some(t), Command::Withdraw { player_id: id(1) }, open);
    assert_eq!(
        decide(Some(&t), &Command::Withdraw { player_id: id(1) }, open),
        Err(TournamentError::AlreadyWithdrawn)
    );
    // Before the start, one who withdrew may come back, once.
    let t = run(Some(t), join(1), open);
    assert_eq!(
        decide(Some(&t), &join(1), open),
        Err(TournamentError::AlreadyJoined)
    );
    assert_eq!(
        decide(Some(&t), &Command::Withdraw { player_id: id(2) }, open),
        Err(TournamentError::NotJoined)
    );
}

#[test]
fn a_full_round_robin_refuses_the_seventeenth_and_a_finished_one_everyone() {
    let t = with_players(Format::RoundRobin, 16);
    assert_eq!(
        decide(
            Some(&t),
            &Command::Join {
                player_id: id(17),
                rating: 1500.0
            },
            NOW
        ),
        Err(TournamentError::Full)
    );
    let mut t = Some(t);
    let start = NOW + Duration::minutes(30);
    let rounds = t.as_ref().map_or(0, Tournament::rounds);
    assert_eq!(rounds, 30);
    for r in 1..=rounds {
        let round = berger::round(16, r).expect("a round");
        let pairings: Vec<PairingMade> = round
            .games
            .iter()
            .enumerate()
            .map(|(k, &(a, b))| PairingMade {
                round: r,
                match_id: match_id(u128::from(r) * 100 + k as u128),
                players: [id(a as u128 + 1), id(b as u128 + 1)],
            })
            .collect();
        let mut next = run(
            t,
            Command::StartRound {
                pairings: pairings.clone(),
                byes: vec![],
            },
            start,
        );
        for p in &pairings {
            next = run(
                Some(next),
                Command::Record {
                    match_id: p.match_id,
                    winner: Some(p.players[0]),
                },
                start,
            );
        }
        t = Some(next);
    }
    let t = t.expect("a tournament");
    assert_eq!(
        decide(
            Some(&t),
            &Command::StartRound {
                pairings: vec![],
                byes: vec![]
            },
            start
        ),
        Err(TournamentError::NoRoundLeft)
    );
    let t = run(Some(t), Command::Finish, start);
    assert_eq!(t.status(start), Status::Finished);
    assert_eq!(
        decide(
            Some(&t),
            &Command::Join {
                player_id: id(40),
                rating: 1500.0
            },
            start
        ),
        Err(TournamentError::Over)
    );
    // First movers won every game: each player won 15 and lost 15.
    let lines = standings(&t);
    assert!(
        lines
            .iter()
            .all(|l| l.wins == 15 && l.losses == 15 && l.score == 30),
        "{lines:?}"
    );
}

#[test]
fn an_arena_scores_streaks_double_and_refuses_an_immediate_rematch() {
    let start = NOW + Duration::minutes(30);
    let t = with_players(Format::Arena, 4);
    assert_eq!(
        decide(Some(&t), &Command::Start, NOW),
        Err(TournamentError::TooEarly)
    );
    let mut t = run(Some(t), Command::Start, start);
    let games = [(1, 2, 1), (1, 3, 1), (2, 3, 2), (4, 1, 1), (2, 1, 1)];
    for (k, (a, b, winner)) in games.into_iter().enumerate() {
        let p = PairingMade {
            round: 1,
            match_id: match_id(k as u128),
            players: [id(a), id(b)],
        };
        t = run(
            Some(t),
            Command::Pair {
                pairings: vec![p.clone()],
            },
            start,
        );
        t = run(
            Some(t),
            Command::Record {
                match_id: p.match_id,
                winner: Some(id(winner)),
            },
            start,
        );
    }
    let lines = standings(&t);
    let one = lines
        .iter()
        .find(|l| l.player_id == id(1))
        .expect("player 1");
    // 2 + 2, then on fire: 4 + 4.
    assert_eq!(
        (one.rank, one.score, one.streak, one.on_fire),
        (1, 12, 4, true)
    );
    let two = lines
        .iter()
        .find(|l| l.player_id == id(2))
        .expect("player 2");
    assert_eq!(
        (two.score, two.wins, two.losses, two.on_fire),
        (2, 1, 2, false)
    );
    let rematch = PairingMade {
        round: 1,
        match_id: match_id(50),
        players: [id(2), id(1)],
    };
    assert_eq!(
        decide(
            Some(&t),
            &Command::Pair {
                pairings: vec![rematch]
            },
            start
        ),
        Err(TournamentError::BadPairing("an immediate rematch"))
    );
    let end = start + Duration::minutes(60);
    assert_eq!(
        decide(
            Some(&t),
            &Command::Pair { pairings: vec![] },
            end - Duration::seconds(30)
        ),
        Err(TournamentError::JoiningClosed)
    );
    assert_eq!(
        decide(Some(&t), &Command::Finish, end - Duration::seconds(1)),
        Err(TournamentError::TooEarly)
    );
    let t = run(Some(t), Command::Finish, end);
    assert_eq!(t.status(end), Status::Finished);
}

#[test]
fn a_removal_scores_the_cheaters_games_as_forfeits_and_reports_every_change() {
    // Swiss: round 1: 1 beats 2, 3 beats 4; round 2: 1 beats 3, 2 draws 4.
    let start = NOW + Duration::minutes(30);
    let mut t = with_players(Format::Swiss, 4);
    let rounds = [
        [(1, 2, Some(1)), (3, 4, Some(3))],
        [(1, 3, Some(1)), (2, 4, None)],
    ];
    let mut k = 0;
    for (r, games) in rounds.iter().enumerate() {
        let pairings: Vec<PairingMade> = games
            .iter()
            .map(|&(a, b, _)| {
                k += 1;
                PairingMade {
                    round: r as u32 + 1,
                    match_id: match_id(k),
                    players: [id(a), id(b)],
                }
            })
            .collect();
        t = run(
            Some(t),
            Command::StartRound {
                pairings: pairings.clone(),
                byes: vec![],
            },
            start,
        );
        for (p, &(_, _, w)) in pairings.iter().zip(games) {
            t = run(
                Some(t),
                Command::Record {
                    match_id: p.match_id,
                    winner: w.map(id),
                },
                start,
            );
        }
    }
    let before = standings(&t);
    assert_eq!(before[0].player_id, id(1));
    assert_eq!(before[0].score, 4);
    let report = removal_report(&t, id(1));
    let change = |p| {
        report
            .iter()
            .find(|c| c.player_id == id(p))
            .expect("a change")
            .clone()
    };
    assert_eq!(change(1).rank_after, None);
    // 2 and 3 lost to the cheater: those games are now theirs.
    assert_eq!((change(2).score_before, change(2).score_after), (1, 3));
    assert_eq!((change(3).score_before, change(3).score_after), (2, 4));
    assert_eq!(change(3).rank_after, Some(1));
    let removed = run(
        Some(t.clone()),
        Command::Remove {
            player_id: id(1),
            reason: "engine assistance".into(),
            by: id(999),
        },
        start,
    );
    // The recorded removal gives the standings the what-if computed.
    let after: Vec<(PlayerId, u32)> = standings(&removed)
        .iter()
        .map(|l| (l.player_id, l.score))
        .collect();
    let expected: Vec<(PlayerId, u32)> = standings::standings_without(&t, &[id(1)])
        .iter()
        .map(|l| (l.player_id, l.score))
        .collect();
    assert_eq!(after, expected);
    assert_eq!(
        decide(
            Some(&removed),
            &Command::Remove {
                player_id: id(1),
                reason: "again".into(),
                by: id(999)
            },
            start
        ),
        Err(TournamentError::Removed)
    );
    assert_eq!(
        decide(
            Some(&removed),
            &Command::Remove {
                player_id: id(2),
                reason: " ".into(),
                by: id(999)
            },
            start
        ),
        Err(TournamentError::Reason)
    );
}

#[test]
fn a_late_swiss_joiner_gets_half_a_point_a_round_and_joining_closes_after_half() {
    let start = NOW + Duration::minutes(30);
    let mut t = with_players(Format::Swiss, 4);
    let rounds = [[(1, 2), (3, 4)], [(1, 3), (2, 4)], [(1, 4), (2, 3)]];
    for (r, games) in (1u32..).zip(rounds) {
        let pairings: Vec<PairingMade> = games
            .iter()
            .enumerate()
            .map(|(k, &(a, b))| PairingMade {
                round: r,
                match_id: match_id(u128::from(r) * 10 + k as u128),
                players: [id(a), id(b)],
            })
            .collect();
        t = run(
            Some(t),
            Command::StartRound {
                pairings: pairings.clone(),
                byes: vec![],
            },
            start,
        );
        if r == 2 {
            t = run(
                Some(t),
                Command::Join {
                    player_id: id(5),
                    rating: 1500.0,
                },
                start,
            );
            let halves: Vec<u32> = t
                .byes
                .iter()
                .filter(|b| b.player_id == id(5))
                .map(|b| b.half_points)
                .collect();
            assert_eq!(halves, vec![1, 1]);
        }
        for p in &pairings {
            t = drawn(t, p.match_id, start);
        }
    }
    assert_eq!(
        decide(
            Some(&t),
            &Command::Join {
                player_id: id(6),
                rating: 1500.0
            },
            start
        ),
        Err(TournamentError::JoiningClosed)
    );
    // A Swiss round may not repeat a game.
    let rematch = PairingMade {
        round: 4,
        match_id: match_id(99),
        players: [id(2), id(1)],
    };
    assert_eq!(
        decide(
            Some(&t),
            &Command::StartRound {
                pairings: vec![rematch],
                byes: vec![]
            },
            start
        ),
        Err(TournamentError::Rematch)
    );
}

#[test]
fn an_arena_refuses_a_rematch_seen_from_either_player() {
    let start = NOW + Duration::minutes(30);
    let mut t = run(Some(with_players(Format::Arena, 3)), Command::Start, start);
    // a–b, then c–a: b's last opponent is a, a's is c.
    for (k, pair) in [[1, 2], [3, 1]].into_iter().enumerate() {
        let p = PairingMade {
            round: 1,
            match_id: match_id(k as u128),
            players: pair.map(id),
        };
        t = run(
            Some(t),
            Command::Pair {
                pairings: vec![p.clone()],
            },
            start,
        );
        t = drawn(t, p.match_id, start);
    }
    for players in [[1, 2], [2, 1]] {
        let p = PairingMade {
            round: 1,
            match_id: match_id(9),
            players: players.map(id),
        };
        assert_eq!(
            decide(Some(&t), &Command::Pair { pairings: vec![p] }, start),
            Err(TournamentError::BadPairing("an immediate rematch")),
            "{players:?}"
        );
    }
}

#[test]
fn a_withdrawal_before_the_start_frees_the_place_and_leaves_the_round_robin() {
    let mut c = created(Format::RoundRobin);
    c.max_players = 3;
    let mut t = run(None, Command::Create(c), NOW);
    for i in 1..=3 {
        t = run(
            Some(t),
            Command::Join {
                player_id: id(i),
                rating: 1500.0,
            },
            NOW,
        );
    }
    let join = |p| Command::Join {
        player_id: id(p),
        rating: 1500.0,
    };
    assert_eq!(decide(Some(&t), &join(4), NOW), Err(TournamentError::Full));
    assert_eq!(
        decide(
            Some(&t),
            &Command::Join {
                player_id: id(4),
                rating: f64::NAN
            },
            NOW
        ),
        Err(TournamentError::Rating)
    );
    let t = run(Some(t), Command::Withdraw { player_id: id(2) }, NOW);
    // Its place is free, and it may come back before the start.
    let t = run(Some(t), join(4), NOW);
    assert_eq!(decide(Some(&t), &join(2), NOW), Err(TournamentError::Full));
    assert_eq!(t.rounds(), 2 * 3);
    let start = NOW + Duration::minutes(30);
    let round = berger::round(3, 1).expect("a round");
    let roster = [id(1), id(3), id(4)];
    let pairings: Vec<PairingMade> = round
        .games
        .iter()
        .enumerate()
        .map(|(k, &(a, b))| PairingMade {
            round: 1,
            match_id: match_id(k as u128),
            players: [roster[a], roster[b]],
        })
        .collect();
    let t = run(
        Some(t),
        Command::StartRound {
            pairings,
            byes: vec![],
        },
        start,
    );
    assert_eq!(t.roster, roster.to_vec());
    assert_eq!(t.rounds(), 6);
    assert_eq!(
        decide(Some(&t), &join(2), start),
        Err(TournamentError::JoiningClosed)
    );
}

/// A command the property test may try.
fn command(kind: u8, player: u128, t: &Tournament, rng: &mut crate::rng::SplitMix64) -> Command {
    let player_id = id(player);
    match kind % 16 {
        0..=3 => Command::Join {
            player_id,
            rating: 1500.0,
        },
        4 => Command::Withdraw { player_id },
        5 => Command::Pause { player_id },
        6 => Command::Resume { player_id },
        // Any two players, for `decide` to refuse whatever breaks a rule.
        9 | 10 => Command::Pair {
            pairings: vec![PairingMade {
                round: 1,
                match_id: MatchId::from_uuid(Uuid::from_u128(u128::from(rng.next_u64()))),
                players: [player_id, id(1 + rng.index(12) as u128)],
            }],
        },
        7 | 8 => {
            let idle: Vec<arena::Idle> = t
                .active()
                .filter(|e| !t.playing(e.player_id))
                .enumerate()
                .map(|(rank, e)| arena::Idle::of(t, e.player_id, rank as u32 + 1))
                .collect();
            let pairings = arena::pair(&idle)
                .into_iter()
                .map(|(a, b)| PairingMade {
                    round: 1,
                    match_id: MatchId::from_uuid(Uuid::from_u128(u128::from(rng.next_u64()))),
                    players: [a, b],
                })
                .collect();
            Command::Pair { pairings }
        }
        11..=14 => match t.unfinished().next() {
            Some(g) => Command::Record {
                match_id: g.pairing.match_id,
                winner: [Some(g.pairing.players[0]), Some(g.pairing.players[1]), None]
                    [rng.index(3)],
            },
            None => Command::Start,
        },
        _ => Command::Remove {
            player_id,
            reason: "fair play".into(),
            by: id(999),
        },
    }
}

proptest! {
    #[test]
    fn any_arena_life_keeps_its_invariants(steps in proptest::collection::vec((any::<u8>(), 1u128..12), 1..160), seed in any::<u64>()) {
        let mut rng = crate::rng::SplitMix64(seed);
        let start = NOW + Duration::minutes(30);
        let mut t = run(None, Command::Create(created(Format::Arena)), NOW);
        for (k, (kind, player)) in steps.into_iter().enumerate() {
            let at = start + Duration::seconds(k as i64);
            let command = command(kind, player, &t, &mut rng);
            if let Ok(events) = decide(Some(&t), &command, at) {
                let mut next = Some(t);
                for e in &events {
                    next = evolve(next, at, e);
                }
                t = next.expect("a tournament");
            }
            // Invariants: entrants unique; nobody in two games at once; every game's players
            // are entrants; no immediate rematch in the pairings made; nobody moved first three
            // times in a row.
            let ids: HashSet<PlayerId> = t.entrants.iter().map(|e| e.player_id).collect();
            prop_assert_eq!(ids.len(), t.entrants.len());
            let mut busy = HashSet::new();
            for g in t.unfinished() {
                for p in g.pairing.players {
                    prop_assert!(busy.insert(p), "{:?} in two games", p);
                }
            }
            for p in &ids {
                let games: Vec<&Game> = t.games_of(*p).collect();
                for w in games.windows(2) {
                    let other = |g: &Game| if g.pairing.players[0] == *p { g.pairing.players[1] } else { g.pairing.players[0] };
                    prop_assert_ne!(other(w[0]), other(w[1]), "an immediate rematch");
                }
                for w in games.windows(3) {
                    prop_assert!(!w.iter().all(|g| g.pairing.players[0] == *p), "three first moves in a row");
                }
            }
            let lines = standings(&t);
            prop_assert_eq!(lines.len(), t.entrants.iter().filter(|e| e.status != EntrantStatus::Removed).count());
            let decided: u32 = t.games.iter().filter(|g| g.result.is_some()).count() as u32;
            let played: u32 = lines.iter().map(|l| l.games).sum::<u32>()
                + t.removed.iter().map(|(p, _)| t.games_of(*p).filter(|g| g.result.is_some()).count() as u32).sum::<u32>();
            prop_assert_eq!(played, 2 * decided);
        }
    }
}

#[test]
fn a_phase_is_named_once_and_gives_the_status_at_the_readers_time() {
    for p in Phase::ALL {
        assert_eq!(Phase::named(p.as_str()), Some(p));
    }
    assert_eq!(Phase::named("open"), None);
    let starts = NOW + Duration::hours(3);
    let upcoming = Phase::Upcoming;
    assert_eq!(upcoming.status(starts, NOW), Status::Scheduled);
    assert_eq!(
        upcoming.status(starts, starts - JOINS_OPEN_BEFORE),
        Status::Open
    );
    assert_eq!(Phase::Running.status(starts, NOW), Status::Running);
    assert_eq!(Phase::Finished.status(starts, NOW), Status::Finished);
    assert_eq!(Phase::Cancelled.status(starts, NOW), Status::Cancelled);
    for f in Format::ALL {
        assert_eq!(Format::named(f.name()), Some(f));
        assert_eq!(
            serde_json::to_value(f).ok(),
            Some(serde_json::json!(f.name()))
        );
    }
    assert_eq!(Format::Arena.points(5), 5.0);
    assert_eq!(Format::Swiss.points(5), 2.5);
    assert_eq!(Format::RoundRobin.points(4), 2.0);
}

#[test]
fn the_default_turn_limit_is_one_the_product_offers() {
    assert!(crate::matches::TurnSeconds::ALLOWED.contains(&limits::DEFAULT_TURN_SECONDS));
}
