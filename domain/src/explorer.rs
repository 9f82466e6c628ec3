//! The opening explorer's pure half: the positions of a game's first plies, each keyed by its
//! canonical form under the game's symmetries (a position played in two orientations is one
//! entry) with the move played from it in the canonical orientation; the rating bands and the
//! default depth.

use uuid::Uuid;

use crate::games::{AnyPosition, GameId, MoveError, Side};

/// How many plies of every finished game the explorer counts by default: Four in a Row's games
/// are short and its early positions are what players look up; Reversi's named openings run to
/// about 20 plies and its midgame shortly after.
pub fn default_plies(game: GameId) -> usize {
    match game {
        GameId::FourInARow => 30,
        GameId::Reversi => 40,
    }
}

/// The rating bands' lower bounds: band `i` holds average ratings from `BANDS[i]` up to the next
/// bound (the first band: every rating under 1200; the last: 2200 and over).
pub const BANDS: [i16; 7] = [0, 1200, 1400, 1600, 1800, 2000, 2200];

/// The band of an average rating (an index into [`BANDS`]).
pub fn band(rating: f64) -> i16 {
    BANDS
        .iter()
        .rposition(|&low| rating >= f64::from(low))
        .unwrap_or(0) as i16
}

/// The band whose lower bound is `low`, if it is one of [`BANDS`].
pub fn band_of_bound(low: i64) -> Option<i16> {
    BANDS
        .iter()
        .position(|&b| i64::from(b) == low)
        .map(|i| i as i16)
}

/// The id of a position for the explorer's tables: a name-based UUID (v5) of its canonical key
/// ([`AnyPosition::canonical`]), 16 bytes in place of a key of up to 80 characters.
pub fn position_id(canonical_key: &str) -> Uuid {
    /// The namespace of the explorer's position ids (a v4 UUID drawn once for it).
    const NAMESPACE: Uuid = Uuid::from_u128(0x4f1b_2c6e_93a4_4d7e_8a55_0c61_e2d9_b7f3);
    Uuid::new_v5(&NAMESPACE, canonical_key.as_bytes())
}

/// One position of a game where a move was chosen, as the explorer counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// [`position_id`] of the position before the move.
    pub position: Uuid,
    /// The move, in the orientation of the position's canonical image (the smallest of its
    /// images where the position is symmetric: `AnyPosition::canonical_move`).
    pub mv: String,
    /// The side that played it.
    pub side: Side,
}

/// The first `plies` moves of a game record (passes omitted, as the log's moves are), each with
/// its position. A forced pass in Reversi is no choice and is not a step; the game's end stops
/// the walk. An illegal move is an error (a log this build cannot replay).
pub fn steps(game: GameId, moves: &[String], plies: usize) -> Result<Vec<Step>, MoveError> {
    let mut pos = AnyPosition::start(game);
    let mut out = Vec::with_capacity(plies.min(moves.len()));
    for mv in moves.iter().take(plies) {
        if pos.outcome().is_some() {
            break;
        }
        if pos.must_pass() {
            pos.pass();
        }
        let (key, canonical) = pos
            .canonical_move(mv)
            .map_err(|_| MoveError::Illegal(mv.clone()))?;
        out.push(Step {
            position: position_id(&key),
            mv: canonical,
            side: pos.side_to_move(),
        });
        pos.play(mv)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::split_moves;

    fn record(game: GameId, moves: &str) -> Vec<String> {
        split_moves(game, moves).expect("a record")
    }

    #[test]
    fn bands_run_in_200_point_steps_from_1200_to_2200() {
        let cases = [
            (0.0, 0),
            (1199.9, 0),
            (1200.0, 1),
            (1500.0, 2),
            (2199.0, 5),
            (2200.0, 6),
            (3000.0, 6),
        ];
        for (rating, want) in cases {
            assert_eq!(band(rating), want, "{rating}");
        }
        assert_eq!(band_of_bound(1400), Some(2));
        assert_eq!(band_of_bound(1300), None);
    }

    /// Reversi's four first moves are one move from one position up to symmetry, and so are the
    /// positions after them.
    #[test]
    fn mirrored_and_rotated_games_meet_in_one_position_with_one_move() {
        let games = ["f5d6", "e6f4", "d3c5", "c4e3"];
        let walks: Vec<_> = games
            .iter()
            .map(|g| steps(GameId::Reversi, &record(GameId::Reversi, g), 40).expect("legal"))
            .collect();
        for s in &walks {
            assert_eq!(s.len(), 2);
            assert_eq!(s[0], walks[0][0]);
            assert_eq!(s[1], walks[0][1]);
            assert_eq!(s[0].side, Side::First);
            assert_eq!(s[1].side, Side::Second);
        }
        assert_ne!(walks[0][0].position, walks[0][1].position);
        // Four in a Row: a game and its mirror.
        let left = steps(GameId::FourInARow, &record(GameId::FourInARow, "3352"), 30).expect("ok");
        let right = steps(GameId::FourInARow, &record(GameId::FourInARow, "5536"), 30).expect("ok");
        assert_eq!(left, right);
        let other = steps(GameId::FourInARow, &record(GameId::FourInARow, "3353"), 30).expect("ok");
        assert_eq!(left[..3], other[..3]);
        assert_ne!(left[3], other[3]);
    }

    #[test]
    fn the_walk_stops_at_the_depth_and_at_the_end() {
        let moves = record(GameId::FourInARow, "4455667");
        assert_eq!(steps(GameId::FourInARow, &moves, 3).expect("ok").len(), 3);
        assert_eq!(steps(GameId::FourInARow, &moves, 30).expect("ok").len(), 7);
        assert!(
            steps(
                GameId::FourInARow,
                &record(GameId::FourInARow, "44444444"),
                30
            )
            .is_err()
        );
    }

    /// A forced pass is not a step: the side that moves after it is the one that moved before.
    #[test]
    fn a_forced_pass_is_skipped() {
        // Random games until one passes: the record (passes omitted) and the ply of the pass.
        let mut rng = crate::rng::SplitMix64(7);
        let (moves, passed_at) = loop {
            let mut pos = AnyPosition::start(GameId::Reversi);
            let mut moves = Vec::new();
            let mut passed_at = None;
            while pos.outcome().is_none() {
                if pos.must_pass() {
                    passed_at.get_or_insert(moves.len());
                    pos.pass();
                    continue;
                }
                let legal = pos.legal_moves();
                let mv = legal[rng.index(legal.len())].clone();
                pos.play(&mv).expect("legal");
                moves.push(mv);
            }
            if let Some(at) = passed_at {
                break (moves, at);
            }
        };
        let s = steps(GameId::Reversi, &moves, 60).expect("legal");
        assert_eq!(s.len(), moves.len());
        assert_eq!(s[passed_at].side, s[passed_at - 1].side);
        let alternating = s.windows(2).filter(|w| w[0].side != w[1].side).count();
        assert!(alternating < s.len() - 1);
    }
}
