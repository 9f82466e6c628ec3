//! The projections on their own (issue 43): each fold over events appended to a real log, read
//! back through this crate's queries, without a server. Matches are decided by the domain, as
//! the live path decides them.

use database::testing::TestDb;
use domain::games::{AnyPosition, GameId};
use domain::ids::{MatchId, PlayerId, Seat};
use domain::matches::state::evolve;
use domain::matches::{
    Action, Command, CreateMatch, FirstMoveRule, MatchEvent, MatchState, MovedBy, Occupant,
    Settings, Stamped, decide,
};
use domain::ratings::Ladder;
use domain::tickets::{TicketEvent, TicketMatched, TicketOpened};
use eventlog::{EventLog, NewEvent, StreamAppend};
use projections::{Projection, Runner, queries};
use time::OffsetDateTime;
use uuid::Uuid;

fn player(n: u128) -> PlayerId {
    PlayerId::from_uuid(Uuid::from_u128(n << 1 | 1))
}

/// A Four in a Row match between `first` (seat 1, moves first) and `second`, ranked or not,
/// played with `moves` (columns), appended to its stream at `at`; its id.
async fn play(
    log: &EventLog,
    n: u128,
    first: PlayerId,
    second: PlayerId,
    ranked: bool,
    moves: &str,
    at: OffsetDateTime,
) -> MatchId {
    let id = MatchId::from_uuid(Uuid::from_u128(0xabc0_0000 + n));
    let mut state = MatchState::default();
    let mut events = Vec::new();
    let mut actions = vec![Action::CreateMatch(CreateMatch {
        game: GameId::FourInARow,
        seats: [
            Occupant::Human { player_id: first },
            Occupant::Human { player_id: second },
        ],
        settings: Settings::default(),
        first_seat: Seat::ONE,
        first_rule: FirstMoveRule::Setting,
        ranked,
        room_id: None,
        tournament_id: None,
        cpu_seed: 1,
    })];
    for (i, mv) in moves.chars().enumerate() {
        actions.push(Action::PlayMove {
            seat: if i % 2 == 0 { Seat::ONE } else { Seat::TWO },
            mv: mv.to_string(),
            by: MovedBy::Human,
        });
    }
    for action in actions {
        let decided = decide(&state, &Command { at, action }).expect("a legal command");
        for event in decided {
            evolve(
                &mut state,
                &Stamped {
                    at,
                    event: event.clone(),
                },
            );
            events.push(event);
        }
    }
    let typed = events
        .iter()
        .map(|e: &MatchEvent| (e.event_type(), e.schema_version(), e.data()));
    append(log, 0xc0de_0000 + n, id.stream(), typed, at).await;
    id
}

async fn setup() -> (TestDb, EventLog, Runner) {
    let db = TestDb::migrated(4).await;
    let log = eventlog::EventLog::new(db.pool.clone());
    let runner = Runner::new(log.clone());
    (db, log, runner)
}

fn t(secs: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_800_000_000 + secs).expect("a time")
}

#[tokio::test]
async fn ratings_history_and_the_leaderboard_fold_ranked_matches_and_skip_casual_ones() {
    let (_db, log, runner) = setup().await;
    let (ada, bob) = (player(1), player(2));
    // Ada wins a ranked game (column 4 four times), loses one, and wins a casual one.
    let won = play(&log, 1, ada, bob, true, "4141414", t(0)).await;
    let lost = play(&log, 2, bob, ada, true, "4141414", t(60)).await;
    let casual = play(&log, 3, ada, bob, false, "4141414", t(120)).await;
    runner.sync_all().await.expect("projections catch up");
    let client = log.pool().get().await.expect("a client");

    let ratings = queries::ratings_of(&client, ada).await.expect("ratings");
    let mine = &ratings[&Ladder::live(GameId::FourInARow)];
    assert_eq!(mine.games, 2, "the casual game is not rated");
    let points = queries::rating_points(&client, ada, Ladder::live(GameId::FourInARow))
        .await
        .expect("points");
    assert_eq!(
        points.iter().map(|p| p.match_id).collect::<Vec<_>>(),
        [won.as_uuid(), lost.as_uuid()]
    );
    assert!(points[0].rating > 1500.0, "a win raises the rating");
    assert!(points[1].rating < points[0].rating, "a loss lowers it");
    assert_eq!(points[1].rating, mine.rating.rating);

    let history = queries::history(&client, ada, None, None, 10)
        .await
        .expect("history");
    let seen: Vec<(Uuid, &str, bool)> = history
        .iter()
        .map(|h| (h.match_id, h.result.as_str(), h.ranked))
        .collect();
    assert_eq!(
        seen,
        [
            (casual.as_uuid(), "win", false),
            (lost.as_uuid(), "loss", true),
            (won.as_uuid(), "win", true),
        ],
        "newest first"
    );
    assert_eq!(history[0].opponent, Some(bob.as_uuid()));
    assert!(
        history[0].rating_after.is_none(),
        "a casual game moves no rating"
    );
    assert_eq!(history[2].rating_after, Some(points[0].rating));
    assert!(history[2].opening.is_some(), "named by its first moves");

    // Two games leave both provisional: the leaderboard is empty.
    let board = queries::leaderboard(&client, Ladder::live(GameId::FourInARow), 10, false)
        .await
        .expect("leaderboard");
    assert!(board.is_empty(), "{board:?}");
    // The leaderboard keeps its own copy of every rating, equal to the ratings'.
    let (checkpoint, applied) = runner
        .checkpoint(Projection::Leaderboards)
        .await
        .expect("a checkpoint");
    assert!(applied > 0 && checkpoint.position > 0);
}

#[tokio::test]
async fn the_explorer_counts_each_move_for_the_side_that_played_it() {
    let (_db, log, runner) = setup().await;
    let (ada, bob) = (player(1), player(2));
    play(&log, 1, ada, bob, true, "4141414", t(0)).await;
    play(&log, 2, bob, ada, true, "4343434", t(60)).await;
    // Bob (second) wins this one: Ada's 3 at the start loses.
    play(&log, 3, ada, bob, false, "31414141", t(120)).await;
    runner.sync_all().await.expect("projections catch up");
    let client = log.pool().get().await.expect("a client");
    let start = AnyPosition::start(GameId::FourInARow);
    let (key, _) = start.canonical();
    let stats = projections::explorer::position(
        &client,
        domain::explorer::position_id(&key),
        &projections::explorer::Filter::default(),
    )
    .await
    .expect("the start's statistics");
    let total: i64 = stats.moves.iter().map(|m| m.games).sum();
    assert_eq!(total, 3, "{stats:?}");
    let three = stats.moves.iter().find(|m| m.mv == "3").expect("column 3");
    assert_eq!((three.games, three.wins, three.losses), (1, 0, 1));
    // Column 4 was played twice at the start, by the side that then won both games.
    let four = stats
        .moves
        .iter()
        .map(|m| (m.games, m.wins, m.losses))
        .max()
        .expect("moves");
    assert_eq!(four, (2, 2, 0), "{stats:?}");
    assert_eq!(stats.recent_games.len(), 3);
    let ranked_only = projections::explorer::Filter {
        ranked: Some(true),
        ..Default::default()
    };
    let ranked =
        projections::explorer::position(&client, domain::explorer::position_id(&key), &ranked_only)
            .await
            .expect("filtered");
    assert_eq!(ranked.moves.iter().map(|m| m.games).sum::<i64>(), 2);
}

async fn ticket(log: &EventLog, n: u128, events: &[TicketEvent], at: OffsetDateTime) {
    let typed = events
        .iter()
        .map(|e| (e.event_type(), TicketEvent::SCHEMA_VERSION, e.data()));
    let stream = format!("ticket-{}", Uuid::from_u128(0x71c0_0000 + n));
    append(log, 0x7e7e_0000 + n, stream, typed, at).await;
}

/// Appends a new stream's events `(type, schema version, data)` as command `command`.
async fn append<'a>(
    log: &EventLog,
    command: u128,
    stream: String,
    events: impl Iterator<Item = (&'a str, i16, serde_json::Value)>,
    at: OffsetDateTime,
) {
    let events = events
        .map(|(event_type, schema_version, data)| NewEvent {
            event_type: event_type.to_owned(),
            schema_version,
            data,
            actor: None,
            recorded_at: at,
        })
        .collect();
    let _appended = log
        .append(
            Uuid::from_u128(command),
            StreamAppend {
                stream,
                expected_version: 0,
                events,
            },
        )
        .await
        .expect("appended");
}

#[tokio::test]
async fn the_queue_folds_waiting_tickets_and_pairings_per_pool() {
    let (_db, log, runner) = setup().await;
    let opened = |p: u128, game| {
        TicketEvent::TicketOpened(TicketOpened {
            player_id: player(p),
            game,
            turn_seconds: None,
            days_per_move: None,
            rating: 1500.0,
            deviation: 350.0,
        })
    };
    let matched = |opponent: u128, waited_ms| {
        TicketEvent::TicketMatched(TicketMatched {
            match_id: MatchId::from_uuid(Uuid::from_u128(0xabc0_0099)),
            opponent: player(opponent),
            rating_gap: 40.0,
            waited_ms,
            repeat: false,
        })
    };
    // A pair matched in Four in a Row, one ticket waiting there, one cancelled in Reversi.
    ticket(
        &log,
        1,
        &[opened(1, GameId::FourInARow), matched(2, 1_000)],
        t(0),
    )
    .await;
    ticket(
        &log,
        2,
        &[opened(2, GameId::FourInARow), matched(1, 3_000)],
        t(0),
    )
    .await;
    ticket(&log, 3, &[opened(3, GameId::FourInARow)], t(10)).await;
    ticket(
        &log,
        4,
        &[opened(4, GameId::Reversi), TicketEvent::TicketCancelled {}],
        t(10),
    )
    .await;
    runner.sync_all().await.expect("projections catch up");
    let client = log.pool().get().await.expect("a client");
    let pools = queries::pool_quality(&client, t(-60)).await.expect("pools");
    let seen: Vec<(&str, i64, i64)> = pools
        .iter()
        .map(|p| (p.game.as_str(), p.waiting, p.pairs))
        .collect();
    assert_eq!(
        seen,
        [("four_in_a_row", 1, 2)],
        "the cancelled pool is empty: {pools:?}"
    );
    assert_eq!(pools[0].rating_gap[0], 40.0);
    assert_eq!(pools[0].wait_ms[0], 2_000.0, "the median of 1 s and 3 s");
}

#[tokio::test]
async fn the_leaderboard_lists_players_once_their_ratings_settle_with_the_ratings_values() {
    let (_db, log, runner) = setup().await;
    let (ada, bob) = (player(1), player(2));
    // Forty ranked games, each player first (and winning) every other time.
    for n in 0..40u128 {
        let (first, second) = if n % 2 == 0 { (ada, bob) } else { (bob, ada) };
        play(&log, n, first, second, true, "4141414", t(60 * n as i64)).await;
    }
    runner.sync_all().await.expect("projections catch up");
    let client = log.pool().get().await.expect("a client");
    let board = queries::leaderboard(&client, Ladder::live(GameId::FourInARow), 10, false)
        .await
        .expect("leaderboard");
    let listed: Vec<Uuid> = board.iter().map(|r| r.player_id).collect();
    assert_eq!(listed.len(), 2, "{board:?}");
    for row in &board {
        let ratings = queries::ratings_of(&client, PlayerId::from_uuid(row.player_id))
            .await
            .expect("ratings");
        let r = &ratings[&Ladder::live(GameId::FourInARow)];
        assert_eq!(
            (row.rating, row.deviation, row.games),
            (r.rating.rating, r.rating.deviation, r.games)
        );
        assert!(!r.rating.is_provisional());
        assert_eq!(r.games, 40);
    }

    // Bob is declared a bot: he leaves the humans' board for the bots', with his rating.
    let decided =
        domain::standing::decide(ada, domain::standing::Decision::Bot, "").expect("a declaration");
    append(
        &log,
        900,
        format!("player-{bob}"),
        std::iter::once((decided.event_type(), 1, decided.data())),
        t(60 * 41),
    )
    .await;
    runner.sync_all().await.expect("projections catch up");
    let board = |bots| {
        let client = &client;
        async move {
            queries::leaderboard(client, Ladder::live(GameId::FourInARow), 10, bots)
                .await
                .expect("leaderboard")
                .iter()
                .map(|r| r.player_id)
                .collect::<Vec<Uuid>>()
        }
    };
    assert_eq!(board(false).await, [ada.as_uuid()]);
    assert_eq!(board(true).await, [bob.as_uuid()]);
}
