//! Given/when/then tests of the match aggregate, and the replay property.

use std::collections::BTreeMap;

use proptest::prelude::*;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::events::*;
use super::replay::plies;
use super::*;
use crate::games::{AnyPosition, GameId};
use crate::ids::{PlayerId, Seat};

const ALICE: PlayerId = player(1);
const BOB: PlayerId = player(2);

const fn player(n: u128) -> PlayerId {
    PlayerId::from_uuid(Uuid::from_u128(n))
}

fn t0() -> OffsetDateTime {
    OffsetDateTime::UNIX_EPOCH + Duration::days(20_000)
}

fn at(secs: i64) -> OffsetDateTime {
    t0() + Duration::seconds(secs)
}

fn create(game: GameId, seats: [Occupant; 2]) -> CreateMatch {
    CreateMatch {
        game,
        seats,
        settings: Settings::default(),
        first_seat: Seat::ONE,
        first_rule: FirstMoveRule::Setting,
        ranked: false,
        room_id: None,
        tournament_id: None,
        cpu_seed: 7,
    }
}

fn humans(game: GameId) -> CreateMatch {
    create(
        game,
        [
            Occupant::Human { player_id: ALICE },
            Occupant::Human { player_id: BOB },
        ],
    )
}

fn created(c: CreateMatch) -> MatchEvent {
    let [event] = <[MatchEvent; 1]>::try_from(
        decide(
            &MatchState::default(),
            &Command {
                at: t0(),
                action: Action::CreateMatch(c),
            },
        )
        .expect("a valid creation"),
    )
    .expect("creation is one event");
    event
}

fn moved(seat: u8, mv: &str) -> MatchEvent {
    MatchEvent::MovePlayed(MovePlayed {
        seat: seat_(seat),
        mv: mv.to_owned(),
        by: MovedBy::Human,
    })
}

fn seat_(n: u8) -> Seat {
    Seat::try_from(n).expect("seat 1 or 2")
}

/// Given these events (one second apart from t0), when `action` happens at `secs`...
struct Given(Vec<Stamped>);

fn given(events: impl IntoIterator<Item = MatchEvent>) -> Given {
    Given(
        events
            .into_iter()
            .enumerate()
            .map(|(i, event)| Stamped {
                at: at(i as i64),
                event,
            })
            .collect(),
    )
}

/// The moves of a game, alternating seats 1 and 2 from seat 1 (no passes).
fn game(game: GameId, moves: &[&str]) -> Given {
    let mut events = vec![created(humans(game))];
    for (i, mv) in moves.iter().enumerate() {
        events.push(moved(if i % 2 == 0 { 1 } else { 2 }, mv));
    }
    given(events)
}

impl Given {
    fn state(&self) -> MatchState {
        MatchState::replay(&self.0)
    }

    fn when_at(&self, secs: i64, action: Action) -> Result<Vec<MatchEvent>, DomainError> {
        decide(
            &self.state(),
            &Command {
                at: at(secs),
                action,
            },
        )
    }

    fn when(&self, action: Action) -> Result<Vec<MatchEvent>, DomainError> {
        self.when_at(1_000, action)
    }
}

fn play(seat: u8, mv: &str) -> Action {
    Action::PlayMove {
        seat: seat_(seat),
        mv: mv.to_owned(),
        by: MovedBy::Human,
    }
}

fn cpu_play(seat: u8, mv: &str) -> Action {
    Action::PlayMove {
        seat: seat_(seat),
        mv: mv.to_owned(),
        by: MovedBy::Cpu,
    }
}

fn ended(winner: Option<u8>, reason: EndedBecause, discs: &[(char, u32)]) -> MatchEvent {
    MatchEvent::MatchEnded(MatchEnded {
        outcome: if winner.is_some() {
            Outcome::Win
        } else {
            Outcome::Draw
        },
        winner_seat: winner.map(seat_),
        reason,
        discs: discs.iter().copied().collect::<BTreeMap<_, _>>(),
    })
}

// --- creation ---------------------------------------------------------------------------------

#[test]
fn creating_a_match_records_seats_settings_and_who_starts() {
    let mut c = humans(GameId::Reversi);
    c.first_seat = Seat::TWO;
    c.first_rule = FirstMoveRule::CoinFlip { heads: false };
    let events = given([])
        .when(Action::CreateMatch(c.clone()))
        .expect("created");
    let MatchEvent::MatchCreated(e) = &events[0] else {
        panic!("expected match_created, got {events:?}");
    };
    assert_eq!(events.len(), 1);
    assert_eq!(
        (e.game, e.seats, e.first_seat),
        (c.game, c.seats, Seat::TWO)
    );
    assert_eq!(e.first_rule, FirstMoveRule::CoinFlip { heads: false });
    let state = given(events).state();
    let m = state.get().expect("created");
    assert_eq!(
        m.to_move(),
        Some(Seat::TWO),
        "seat 2 plays black and starts"
    );
    assert_eq!(m.color_of(Seat::TWO), 'B');
    assert_eq!(state.version(), 1);
}

#[test]
fn a_match_is_created_only_once() {
    assert_eq!(
        game(GameId::FourInARow, &[]).when(Action::CreateMatch(humans(GameId::FourInARow))),
        Err(DomainError::AlreadyCreated)
    );
}

#[test]
fn commands_before_creation_are_refused() {
    assert_eq!(given([]).when(play(1, "4")), Err(DomainError::NotCreated));
}

#[test]
fn creation_rejects_bad_cpu_levels_twin_seats_cpu_in_ranked_and_foreign_settings() {
    let cpu = |level| {
        create(
            GameId::FourInARow,
            [
                Occupant::Human { player_id: ALICE },
                Occupant::Cpu { level },
            ],
        )
    };
    assert_eq!(
        given([]).when(Action::CreateMatch(cpu(0))),
        Err(DomainError::BadCpuLevel(0))
    );
    assert_eq!(
        given([]).when(Action::CreateMatch(cpu(6))),
        Err(DomainError::BadCpuLevel(6))
    );
    assert!(given([]).when(Action::CreateMatch(cpu(5))).is_ok());

    let twins = create(
        GameId::Reversi,
        [
            Occupant::Human { player_id: ALICE },
            Occupant::Human { player_id: ALICE },
        ],
    );
    assert_eq!(
        given([]).when(Action::CreateMatch(twins)),
        Err(DomainError::SamePlayerTwice)
    );

    let mut ranked = cpu(2);
    ranked.ranked = true;
    assert_eq!(
        given([]).when(Action::CreateMatch(ranked)),
        Err(DomainError::RankedNeedsHumans)
    );

    let mut hidden = humans(GameId::FourInARow);
    hidden.settings.show_legal_moves = false;
    assert_eq!(
        given([]).when(Action::CreateMatch(hidden)),
        Err(DomainError::SettingNotForGame(GameId::FourInARow))
    );
}

// --- moves ------------------------------------------------------------------------------------

#[test]
fn the_seat_to_move_plays_and_the_turn_passes() {
    let g = game(GameId::FourInARow, &["4"]);
    assert_eq!(g.when(play(2, "4")), Ok(vec![moved(2, "4")]));
    assert_eq!(
        g.when(play(1, "3")),
        Err(DomainError::NotYourTurn(Seat::ONE))
    );
}

#[test]
fn moves_are_stored_in_canonical_notation() {
    let g = game(GameId::Reversi, &[]);
    assert_eq!(g.when(play(1, "D3")), Ok(vec![moved(1, "d3")]));
}

#[test]
fn illegal_and_malformed_moves_are_refused() {
    let full = game(GameId::FourInARow, &["1", "1", "1", "2", "1", "1", "1"]);
    assert!(matches!(
        full.when(play(2, "1")),
        Err(DomainError::IllegalMove(crate::games::MoveError::Illegal(
            _
        )))
    ));
    for bad in ["0", "8", "x", "", "44"] {
        assert!(
            matches!(
                full.when(play(2, bad)),
                Err(DomainError::IllegalMove(crate::games::MoveError::Parse(_)))
            ),
            "{bad:?} must not parse"
        );
    }
    let reversi = game(GameId::Reversi, &[]);
    assert!(matches!(
        reversi.when(play(1, "a1")),
        Err(DomainError::IllegalMove(_))
    ));
    assert!(matches!(
        reversi.when(play(1, "i9")),
        Err(DomainError::IllegalMove(_))
    ));
}

#[test]
fn a_winning_move_ends_the_match_with_the_facts() {
    // Red stacks column 4; yellow plays column 1.
    let g = game(GameId::FourInARow, &["4", "1", "4", "1", "4", "1"]);
    assert_eq!(
        g.when(play(1, "4")),
        Ok(vec![
            moved(1, "4"),
            ended(Some(1), EndedBecause::FourInARow, &[('R', 4), ('Y', 3)])
        ])
    );
}

#[test]
fn a_finished_match_accepts_nothing() {
    let g = game(GameId::FourInARow, &["4", "1", "4", "1", "4", "1", "4"]);
    let mut events = g.0.clone();
    events.push(Stamped {
        at: at(50),
        event: ended(Some(1), EndedBecause::FourInARow, &[('R', 4), ('Y', 3)]),
    });
    let g = Given(events);
    assert_eq!(g.when(play(2, "1")), Err(DomainError::MatchFinished));
    assert_eq!(
        g.when(Action::Resign { seat: Seat::TWO }),
        Err(DomainError::MatchFinished)
    );
    assert_eq!(
        g.when(Action::Leave {
            seat: Seat::TWO,
            reason: LeaveReason::Left
        }),
        Err(DomainError::MatchFinished)
    );
}

#[test]
fn the_last_disc_of_a_full_board_without_a_line_is_a_draw() {
    let moves: Vec<String> = DRAW_42.chars().map(String::from).collect();
    let refs: Vec<&str> = moves.iter().map(String::as_str).collect();
    let g = game(GameId::FourInARow, &refs[..41]);
    assert_eq!(
        g.when(play(2, refs[41])),
        Ok(vec![
            moved(2, refs[41]),
            ended(None, EndedBecause::BoardFull, &[('R', 21), ('Y', 21)])
        ])
    );
}

/// A complete Four in a Row game of 42 discs in which no disc completes a line of four (found by a
/// seeded random search that never played a winning move).
const DRAW_42: &str = "257771314744647214154617633623313656555222";

// --- Reversi passes and endings -----------------------------------------------------------

#[test]
fn a_move_that_leaves_the_opponent_without_moves_appends_their_pass() {
    let (moves, mover, passer) = find_reversi_forced_pass();
    let refs: Vec<&str> = moves.iter().map(String::as_str).collect();
    let given_events = seats_for_moves(GameId::Reversi, &refs[..refs.len() - 1]);
    let last = refs[refs.len() - 1];
    let result = given_events.when(play(mover, last)).expect("legal");
    assert_eq!(
        result,
        vec![
            moved(mover, last),
            MatchEvent::Passed(Passed {
                seat: seat_(passer)
            })
        ]
    );
    let mut after = given_events.0.clone();
    after.extend(
        result
            .into_iter()
            .map(|event| Stamped { at: at(999), event }),
    );
    let state = Given(after).state();
    assert_eq!(
        state.get().and_then(Match::to_move),
        Some(seat_(mover)),
        "the mover plays again"
    );
}

#[test]
fn when_neither_side_can_move_no_pass_is_written_and_the_match_ends() {
    // The shortest Reversi games end after 9 discs with empty squares left.
    let moves = find_reversi_game(9, |p| p.outcome().is_some());
    let refs: Vec<&str> = moves.iter().map(String::as_str).collect();
    let g = seats_for_moves(GameId::Reversi, &refs[..refs.len() - 1]);
    let state = g.state();
    let mover = state.get().and_then(Match::to_move).expect("active");
    let events = g
        .when(play(mover.number(), refs[refs.len() - 1]))
        .expect("legal");
    assert_eq!(events.len(), 2, "{events:?}");
    let MatchEvent::MatchEnded(end) = &events[1] else {
        panic!("expected the end, got {events:?}");
    };
    assert_eq!(end.reason, EndedBecause::NoMoves);
    assert_eq!(end.outcome, Outcome::Win);
    assert_eq!(end.discs.values().sum::<u32>(), 13);
}

/// Plays random legal Reversi games (fixed seed) of at most `max_ply` discs until `stop` holds.
fn find_reversi_game(max_ply: u32, stop: impl Fn(&AnyPosition) -> bool) -> Vec<String> {
    let mut rng = crate::rng::SplitMix64(42);
    for _ in 0..2_000_000 {
        let mut p = AnyPosition::start(GameId::Reversi);
        let mut moves = Vec::new();
        while p.outcome().is_none() {
            if p.must_pass() {
                p.pass();
            }
            let legal = p.legal_moves();
            let mv = legal[rng.index(legal.len())].clone();
            p.play(&mv).expect("legal move");
            moves.push(mv);
            if stop(&p) {
                return moves;
            }
            if p.ply() >= max_ply {
                break;
            }
        }
    }
    panic!("no game found");
}

/// A Reversi game prefix whose last move forces the opponent to pass, with the seats involved.
fn find_reversi_forced_pass() -> (Vec<String>, u8, u8) {
    let moves = find_reversi_game(60, |p| p.must_pass());
    let g = seats_for_moves(
        GameId::Reversi,
        &moves.iter().map(String::as_str).collect::<Vec<_>>()[..moves.len() - 1],
    );
    let mover = g
        .state()
        .get()
        .and_then(Match::to_move)
        .expect("active")
        .number();
    (moves, mover, if mover == 1 { 2 } else { 1 })
}

/// A match stream of these moves, with the seats and passes the rules give (through `decide`).
fn seats_for_moves(game_id: GameId, moves: &[&str]) -> Given {
    let mut state = MatchState::default();
    let mut stream = Vec::new();
    let apply = |state: &mut MatchState, stream: &mut Vec<Stamped>, action| {
        let events = decide(state, &Command { at: t0(), action }).expect("legal");
        for event in events {
            let s = Stamped { at: t0(), event };
            evolve(state, &s);
            stream.push(s);
        }
    };
    apply(
        &mut state,
        &mut stream,
        Action::CreateMatch(humans(game_id)),
    );
    for mv in moves {
        let seat = state.get().and_then(Match::to_move).expect("active");
        apply(&mut state, &mut stream, play(seat.number(), mv));
    }
    Given(stream)
}

// --- CPU seats --------------------------------------------------------------------------------

fn solo() -> Given {
    given([created(create(
        GameId::FourInARow,
        [
            Occupant::Human { player_id: ALICE },
            Occupant::Cpu { level: 2 },
        ],
    ))])
}

#[test]
fn the_cpu_moves_only_for_the_seats_it_controls() {
    let g = solo();
    assert_eq!(
        g.when(cpu_play(1, "4")),
        Err(DomainError::NotCpuControlled(Seat::ONE))
    );
    let mut events = g.0.clone();
    events.push(Stamped {
        at: at(1),
        event: moved(1, "4"),
    });
    let g = Given(events);
    assert_eq!(
        g.when(cpu_play(2, "3")),
        Ok(vec![MatchEvent::MovePlayed(MovePlayed {
            seat: Seat::TWO,
            mv: "3".into(),
            by: MovedBy::Cpu
        })])
    );
    assert_eq!(
        g.when(play(2, "3")),
        Err(DomainError::NotAHumanSeat(Seat::TWO))
    );
    assert_eq!(
        g.when(Action::Resign { seat: Seat::TWO }),
        Err(DomainError::NotAHumanSeat(Seat::TWO))
    );
    assert_eq!(
        g.when(Action::Leave {
            seat: Seat::TWO,
            reason: LeaveReason::Left
        }),
        Err(DomainError::NotAHumanSeat(Seat::TWO))
    );
}

// --- leaving and returning ------------------------------------------------------------------

#[test]
fn a_seat_last_acts_with_its_players_moves_and_returns_not_the_cpus_moves_or_a_leave() {
    // At 0 s the creation, then one event a second.
    let state = given([
        created(humans(GameId::FourInARow)),
        moved(1, "4"),
        moved(2, "4"),
        left(1, LeaveReason::Left),
        MatchEvent::MovePlayed(MovePlayed {
            seat: Seat::ONE,
            mv: "3".to_owned(),
            by: MovedBy::Cpu,
        }),
        MatchEvent::PlayerReturned(PlayerReturned { seat: Seat::ONE }),
        moved(2, "3"),
    ])
    .state();
    let m = state.get().expect("created");
    assert_eq!(m.seat(Seat::ONE).acted_at, at(5));
    assert_eq!(m.seat(Seat::TWO).acted_at, at(6));
    let fresh = game(GameId::FourInARow, &["4"]).state();
    let m = fresh.get().expect("created");
    assert_eq!(
        (m.seat(Seat::ONE).acted_at, m.seat(Seat::TWO).acted_at),
        (at(1), at(0))
    );
}

fn left(seat: u8, reason: LeaveReason) -> MatchEvent {
    MatchEvent::PlayerLeft(PlayerLeft {
        seat: seat_(seat),
        reason,
    })
}

#[test]
fn a_player_leaves_once_and_returns_once() {
    let g = game(GameId::FourInARow, &["4"]);
    let leave = Action::Leave {
        seat: Seat::ONE,
        reason: LeaveReason::Left,
    };
    assert_eq!(g.when(leave.clone()), Ok(vec![left(1, LeaveReason::Left)]));
    assert_eq!(
        g.when(Action::Return { seat: Seat::ONE }),
        Err(DomainError::NotAway(Seat::ONE))
    );

    let mut events = g.0.clone();
    events.push(Stamped {
        at: at(10),
        event: left(1, LeaveReason::Left),
    });
    let away = Given(events);
    assert_eq!(away.when(leave), Err(DomainError::AlreadyAway(Seat::ONE)));
    assert_eq!(
        away.when(Action::Return { seat: Seat::ONE }),
        Ok(vec![MatchEvent::PlayerReturned(PlayerReturned {
            seat: Seat::ONE
        })])
    );
    let m = away.state();
    assert_eq!(
        m.get().map(|m| m.seat(Seat::ONE).controller()),
        Some(Controller::Away)
    );
}

#[test]
fn playing_while_away_is_coming_back() {
    let g = given([
        created(humans(GameId::FourInARow)),
        left(1, LeaveReason::Absent),
    ]);
    assert_eq!(
        g.when(play(1, "4")),
        Ok(vec![
            MatchEvent::PlayerReturned(PlayerReturned { seat: Seat::ONE }),
            moved(1, "4")
        ])
    );
    // An illegal move while away changes nothing, not even presence.
    assert!(matches!(
        g.when(play(1, "9")),
        Err(DomainError::IllegalMove(_))
    ));
}

#[test]
fn the_cpu_takes_over_only_after_return_seconds_and_only_once() {
    // Seat 2 leaves at t0+1 (the second event).
    let g = given([
        created(humans(GameId::FourInARow)),
        left(2, LeaveReason::Left),
    ]);
    let take = Action::TakeOver {
        seat: Seat::TWO,
        level: 2,
        return_seconds: 60,
    };
    assert_eq!(g.when_at(60, take.clone()), Err(DomainError::TooEarly));
    let took = MatchEvent::CpuTookOver(CpuTookOver {
        seat: Seat::TWO,
        level: 2,
    });
    assert_eq!(g.when_at(61, take.clone()), Ok(vec![took.clone()]));
    assert_eq!(
        g.when_at(
            61,
            Action::TakeOver {
                seat: Seat::ONE,
                level: 2,
                return_seconds: 60
            }
        ),
        Err(DomainError::NotAway(Seat::ONE))
    );
    assert_eq!(
        g.when_at(
            61,
            Action::TakeOver {
                seat: Seat::TWO,
                level: 9,
                return_seconds: 60
            }
        ),
        Err(DomainError::BadCpuLevel(9))
    );

    let mut events = g.0.clone();
    events.push(Stamped {
        at: at(61),
        event: took,
    });
    events.push(Stamped {
        at: at(62),
        event: moved(1, "4"),
    });
    let replaced = Given(events);
    assert_eq!(
        replaced.when_at(70, take),
        Err(DomainError::AlreadyReplaced(Seat::TWO))
    );
    let state = replaced.state();
    let m = state.get().expect("created");
    assert_eq!(m.seat(Seat::TWO).controller(), Controller::Cpu);
    assert_eq!(m.cpu_to_move(), Some((Seat::TWO, 2)));
    assert!(
        replaced.when(cpu_play(2, "4")).is_ok(),
        "the stand-in plays the seat"
    );
    assert_eq!(
        replaced.when(Action::Return { seat: Seat::TWO }),
        Ok(vec![MatchEvent::PlayerReturned(PlayerReturned {
            seat: Seat::TWO
        })])
    );
}

// --- turn limit -------------------------------------------------------------------------------

fn timed(seconds: u32) -> Given {
    let mut c = humans(GameId::FourInARow);
    c.settings.turn_seconds = Some(TurnSeconds::try_from(seconds).expect("allowed"));
    given([created(c), moved(1, "4")])
}

#[test]
fn a_turn_times_out_at_its_deadline_and_the_cpu_plays_that_move() {
    // Seat 1 moved at t0+1: seat 2's turn runs out at t0+31.
    let g = timed(30);
    let state = g.state();
    assert_eq!(state.get().and_then(Match::deadline), Some(at(31)));
    let timeout = |seat: Seat, mv: &str| Action::TimeOutTurn {
        seat,
        cpu_move: mv.into(),
    };
    assert_eq!(
        g.when_at(30, timeout(Seat::TWO, "4")),
        Err(DomainError::TooEarly)
    );
    assert_eq!(
        g.when_at(31, timeout(Seat::ONE, "4")),
        Err(DomainError::NotYourTurn(Seat::ONE))
    );
    assert!(matches!(
        g.when_at(31, timeout(Seat::TWO, "9")),
        Err(DomainError::IllegalMove(_))
    ));
    assert_eq!(
        g.when_at(31, timeout(Seat::TWO, "4")),
        Ok(vec![
            MatchEvent::TurnTimedOut(TurnTimedOut { seat: Seat::TWO }),
            MatchEvent::MovePlayed(MovePlayed {
                seat: Seat::TWO,
                mv: "4".into(),
                by: MovedBy::Cpu
            }),
        ])
    );
}

#[test]
fn without_a_turn_limit_nothing_times_out() {
    let g = game(GameId::FourInARow, &["4"]);
    assert_eq!(g.state().get().and_then(Match::deadline), None);
    assert_eq!(
        g.when_at(
            100_000,
            Action::TimeOutTurn {
                seat: Seat::TWO,
                cpu_move: "4".into()
            }
        ),
        Err(DomainError::NoTurnLimit)
    );
}

// --- resigning --------------------------------------------------------------------------------

#[test]
fn resigning_ends_the_match_for_the_opponent() {
    let g = game(GameId::Reversi, &["d3"]);
    assert_eq!(
        g.when(Action::Resign { seat: Seat::ONE }),
        Ok(vec![
            MatchEvent::Resigned(Resigned { seat: Seat::ONE }),
            ended(Some(2), EndedBecause::Resigned, &[('B', 4), ('W', 1)])
        ])
    );
}

// --- events on the wire -----------------------------------------------------------------------

#[test]
fn payloads_use_the_wire_names_of_the_spec() {
    assert_eq!(moved(1, "4").event_type(), "move_played");
    assert_eq!(
        moved(1, "4").data(),
        serde_json::json!({"seat": 1, "move": "4", "by": "human"})
    );
    let end = ended(None, EndedBecause::BoardFull, &[('R', 21), ('Y', 21)]);
    assert_eq!(
        end.data(),
        serde_json::json!({"outcome": "draw", "winner_seat": null, "reason": "board_full", "discs": {"R": 21, "Y": 21}})
    );
    assert_eq!(
        MatchEvent::Passed(Passed { seat: Seat::TWO }).data(),
        serde_json::json!({"seat": 2})
    );
}

#[test]
fn every_event_survives_encoding_and_unknown_versions_are_refused() {
    let events = [
        created(humans(GameId::Reversi)),
        moved(2, "d3"),
        MatchEvent::Passed(Passed { seat: Seat::ONE }),
        left(1, LeaveReason::Absent),
        MatchEvent::PlayerReturned(PlayerReturned { seat: Seat::ONE }),
        MatchEvent::TurnTimedOut(TurnTimedOut { seat: Seat::TWO }),
        MatchEvent::CpuTookOver(CpuTookOver {
            seat: Seat::ONE,
            level: 2,
        }),
        MatchEvent::Resigned(Resigned { seat: Seat::ONE }),
        ended(Some(2), EndedBecause::Resigned, &[('B', 3), ('W', 2)]),
    ];
    for e in &events {
        let back = MatchEvent::decode(e.event_type(), e.schema_version(), &e.data());
        assert_eq!(back.as_ref().ok(), Some(e), "{e:?}");
        assert!(matches!(
            MatchEvent::decode(e.event_type(), 99, &e.data()),
            Err(DecodeError::UnknownSchemaVersion { version: 99, .. })
        ));
    }
    assert!(matches!(
        MatchEvent::decode("moved_played", 1, &serde_json::json!({})),
        Err(DecodeError::UnknownType(_))
    ));
    assert!(matches!(
        MatchEvent::decode("passed", 1, &serde_json::json!({"seat": 3})),
        Err(DecodeError::Malformed { .. })
    ));
}

#[test]
fn a_version_one_match_created_is_read_with_the_board_of_its_game() {
    for game in [GameId::FourInARow, GameId::Reversi] {
        let now = created(humans(game));
        assert_eq!(now.schema_version(), 2);
        // The payload as version 1 wrote it: everything but the board.
        let mut v1 = now.data();
        v1.as_object_mut().expect("an object").remove("board");
        assert_eq!(
            MatchEvent::decode("match_created", 1, &v1).ok(),
            Some(now.clone())
        );
        // Version 2 must carry its board; version 1 must not.
        assert!(matches!(
            MatchEvent::decode("match_created", 2, &v1),
            Err(DecodeError::Malformed { .. })
        ));
        assert!(matches!(
            MatchEvent::decode("match_created", 1, &now.data()),
            Err(DecodeError::Upcast { from: 1, .. })
        ));
    }
    let MatchEvent::MatchCreated(c) = created(humans(GameId::FourInARow)) else {
        unreachable!("created() makes a match_created");
    };
    assert_eq!((c.board.columns, c.board.rows), (7, 6));
    assert!(matches!(
        MatchEvent::decode("match_created", 3, &serde_json::json!({})),
        Err(DecodeError::UnknownSchemaVersion { version: 3, .. })
    ));
    // Every other type is still at version 1.
    assert!(matches!(
        MatchEvent::decode("passed", 2, &serde_json::json!({"seat": 1})),
        Err(DecodeError::UnknownSchemaVersion { version: 2, .. })
    ));
}

// --- replay property --------------------------------------------------------------------------

/// One step of a random match: a legal move for the seat to move (by index), or a presence change.
#[derive(Clone, Debug)]
enum Step {
    Move(u16),
    Leave,
    Return,
    Resign,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        20 => any::<u16>().prop_map(Step::Move),
        1 => Just(Step::Leave),
        1 => Just(Step::Return),
        1 => Just(Step::Resign),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn folding_stored_events_reproduces_the_live_state_at_every_ply(
        reversi in any::<bool>(),
        steps in proptest::collection::vec(step(), 0..90),
    ) {
        let game_id = if reversi { GameId::Reversi } else { GameId::FourInARow };
        let mut live = MatchState::default();
        let mut stored: Vec<Stamped> = Vec::new();
        let mut boards: Vec<Vec<String>> = Vec::new();
        let mut clock = 0;
        let mut run = |live: &mut MatchState, stored: &mut Vec<Stamped>, action: Action| {
            clock += 1;
            let Ok(events) = decide(live, &Command { at: at(clock), action }) else { return Ok(false) };
            for event in events {
                // Store as the event log would: type, version and JSON payload.
                let decoded = MatchEvent::decode(event.event_type(), event.schema_version(), &event.data())
                    .expect("own events decode");
                prop_assert_eq!(&decoded, &event);
                let s = Stamped { at: at(clock), event };
                evolve(live, &s);
                stored.push(s);
            }
            Ok(true)
        };
        let _ = run(&mut live, &mut stored, Action::CreateMatch(humans(game_id)));
        boards.push(live.get().expect("created").position.rows());
        for step in steps {
            let Some(m) = live.get() else { break };
            let Some(seat) = m.to_move() else { break };
            let action = match step {
                Step::Move(i) => {
                    let legal = m.position.legal_moves();
                    play(seat.number(), &legal[usize::from(i) % legal.len()])
                }
                Step::Leave => Action::Leave { seat, reason: LeaveReason::Absent },
                Step::Return => Action::Return { seat: seat.other() },
                Step::Resign => Action::Resign { seat },
            };
            let plies_before = m.position.ply();
            if run(&mut live, &mut stored, action)? && live.get().map(|m| m.position.ply()) != Some(plies_before) {
                boards.push(live.get().expect("created").position.rows());
            }
            prop_assert_eq!(&MatchState::replay(&stored), &live);
            prop_assert_eq!(live.version(), stored.len() as u64);
        }
        let views = plies(&stored);
        prop_assert_eq!(views.len(), boards.len());
        for (n, (view, board)) in views.iter().zip(&boards).enumerate() {
            prop_assert_eq!(view.ply as usize, n);
            prop_assert_eq!(&view.board, board);
        }
    }
}

#[test]
fn a_tournament_game_names_its_tournament_and_no_other_payload_changes() {
    let plain = created(humans(GameId::FourInARow));
    assert!(
        plain.data().get("tournament_id").is_none(),
        "{}",
        plain.data()
    );
    let tournament = crate::ids::TournamentId::from_uuid(Uuid::from_u128(77));
    let mut c = humans(GameId::FourInARow);
    c.tournament_id = Some(tournament);
    let game = created(c);
    assert_eq!(
        game.data()["tournament_id"],
        tournament.as_uuid().to_string()
    );
    let version = MatchEvent::schema_version_of(game.event_type());
    let back = MatchEvent::decode(game.event_type(), version, &game.data()).expect("decodes");
    assert_eq!(back, game);
}

/// A correspondence game of Four in a Row at `days` a move, seat 1 to play first.
fn correspondence(days: u32, seats: [Occupant; 2]) -> CreateMatch {
    let mut c = create(GameId::FourInARow, seats);
    c.settings.days_per_move = crate::matches::DaysPerMove::try_from(days).ok();
    c
}

#[test]
fn a_correspondence_game_is_lost_on_time_at_its_deadline_and_not_before() {
    let humans = [
        Occupant::Human { player_id: ALICE },
        Occupant::Human { player_id: BOB },
    ];
    // Created at 0, seat 1 moves at 1: seat 2 has until 1 s + 2 days.
    let g = given([created(correspondence(2, humans)), moved(1, "4")]);
    let two_days = 2 * 86_400;
    let lose = |n| Action::LoseOnTime { seat: seat_(n) };
    assert_eq!(g.when_at(two_days, lose(2)), Err(DomainError::TooEarly));
    assert_eq!(
        g.when_at(two_days + 1, lose(1)),
        Err(DomainError::NotYourTurn(seat_(1)))
    );
    assert_eq!(
        g.when_at(two_days + 1, lose(2)),
        Ok(vec![
            MatchEvent::TurnTimedOut(TurnTimedOut { seat: seat_(2) }),
            MatchEvent::MatchEnded(MatchEnded {
                outcome: Outcome::Win,
                winner_seat: Some(seat_(1)),
                reason: EndedBecause::OutOfTime,
                discs: [('R', 1), ('Y', 0)].into_iter().collect(),
            }),
        ])
    );
    // Nobody is away in it, and the CPU neither stands in nor times a turn out.
    let leave = Action::Leave {
        seat: seat_(2),
        reason: LeaveReason::Left,
    };
    assert_eq!(g.when(leave), Err(DomainError::Correspondence));
    let take_over = Action::TakeOver {
        seat: seat_(2),
        level: 2,
        return_seconds: 0,
    };
    assert_eq!(g.when(take_over), Err(DomainError::Correspondence));
    let timeout = Action::TimeOutTurn {
        seat: seat_(2),
        cpu_move: "4".into(),
    };
    assert_eq!(
        g.when_at(two_days + 1, timeout),
        Err(DomainError::OtherClock)
    );
    // A real-time game has no loss on time.
    let realtime = game(GameId::FourInARow, &["4"]);
    assert_eq!(
        realtime.when_at(two_days + 1, lose(2)),
        Err(DomainError::OtherClock)
    );
}

#[test]
fn the_cpu_never_plays_a_correspondence_game_and_one_clock_is_enough() {
    let solo = correspondence(
        3,
        [
            Occupant::Human { player_id: ALICE },
            Occupant::Cpu { level: 2 },
        ],
    );
    let refused = decide(
        &MatchState::default(),
        &Command {
            at: t0(),
            action: Action::CreateMatch(solo),
        },
    );
    assert_eq!(refused, Err(DomainError::Correspondence));
    let mut both = correspondence(
        3,
        [
            Occupant::Human { player_id: ALICE },
            Occupant::Human { player_id: BOB },
        ],
    );
    both.settings.turn_seconds = crate::matches::TurnSeconds::try_from(30).ok();
    let refused = decide(
        &MatchState::default(),
        &Command {
            at: t0(),
            action: Action::CreateMatch(both),
        },
    );
    assert_eq!(refused, Err(DomainError::TwoClocks));
}

#[test]
fn a_match_to_create_names_its_human_players_seat_one_first() {
    assert_eq!(humans(GameId::Reversi).players(), [ALICE, BOB]);
    let solo = create(
        GameId::FourInARow,
        [
            Occupant::Cpu { level: 3 },
            Occupant::Human { player_id: BOB },
        ],
    );
    assert_eq!(solo.players(), [BOB]);
    assert_eq!(Occupant::Cpu { level: 1 }.player_id(), None);
}
