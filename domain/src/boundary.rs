//! The fair-play boundary: which positions no service may say anything about while a ranked
//! match is live. Not a list of positions but a rule: a live ranked position beyond the public
//! opening guards itself and **every position that can follow it within its horizon** ([`reach`]:
//! [`horizon_plies`] plies on, or to the end of the game where the rest is short), in every image
//! of the game's board and, where the game allows it (Reversi), with the colours exchanged and the
//! other side to move (the same question asked of the other colour).
//!
//! # Why a horizon, and its price
//! Whoever wants the best move of a live position through the server, without asking the position
//! itself, can ask every position just beyond the horizon that can follow it and take the best
//! move back up by minimax. [`horizon_plies`] is chosen so that this costs at least
//! [`PRICE`] distinct questions (positions up to their images, [`questions_at`]) for the live
//! positions the boundary bench plays, and the rest of a game is guarded to its end where it is
//! short enough for the count to fall below that ([`reach`]). A deeper position is answered:
//! without the horizon, a shallow live position (just past the opening) guards nearly every late
//! position of every other game, and honest players lose the analysis of their finished games.
//!
//! # What "can follow" means
//! It is read off what the live position makes permanent ([`Game::permanent`]): in Four in a Row
//! every disc stays where it is in its colour, so a following position holds every live disc in
//! the same colour; in Reversi every occupied square stays occupied, the stable discs (corners and
//! what they anchor, [`crate::games::reversi::stable_discs`]) keep their colour, and a disc whose
//! colour changed must lie on a line of occupied squares from a square that was empty in the live
//! position (a disc flips only when a disc placed later brackets it). A position reached from the
//! live one by any legal line within the horizon holds all of that, so it is caught; a few
//! positions that hold it without being reachable are caught too (refused though unrelated), the
//! price of a check that costs a few word operations per live match.
//!
//! A live match publishes its [`Guard`] (what it makes permanent, its discs, its depth and its
//! reach) with each move; a question is an [`Asked`] (the asked position's images), and
//! [`withheld`] decides.
//!
//! [`Game::permanent`]: crate::games::Game::permanent

use std::collections::HashSet;

use crate::games::any::dispatch;
use crate::games::{AnyPosition, Board, Game, GameId, Side, Symmetry};

/// The least number of distinct questions that pre-fetching the positions just beyond a live
/// position's horizon must take ([`questions_at`]): more than running a public exact engine
/// costs (BENCHMARKS.md, "The boundary's horizon and its price").
pub const PRICE: usize = 1_000_000;

/// How many plies past a live position its guard reaches ([`reach`]): the shallowest horizon at
/// which the positions one ply beyond it number at least [`PRICE`] for the live positions the
/// boundary bench plays (minimum and 1st percentile in BENCHMARKS.md).
pub fn horizon_plies(game: GameId) -> u32 {
    match game {
        GameId::FourInARow => 12,
        GameId::Reversi => 7,
    }
}

/// The deepest ply (discs placed) a live position at `live` guards: [`horizon_plies`] past it,
/// or every ply to the end of the game where the rest of the game is short ([`rest_is_short`]).
pub fn reach(live: &AnyPosition) -> u32 {
    let [first, second] = live.disc_masks();
    reach_of(live, first | second)
}

/// [`reach`], the live position's occupied cells given.
fn reach_of(live: &AnyPosition, occupied: u64) -> u32 {
    if short_rest(live, occupied) {
        u32::MAX
    } else {
        live.ply() + horizon_plies(live.game())
    }
}

/// Whether too few positions lie one ply beyond `live`'s horizon for the price to hold, by a
/// rule that costs a few operations (the live path applies it at every move): in Reversi, at
/// most [`REVERSI_SHORT_EMPTIES`] empty squares left; in Four in a Row, fewer than
/// [`FOUR_SHORT_SHAPES`] ways to stack the next `horizon + 1` discs in the open columns (the
/// shapes of the board, each at least one position where no line ends on the way). The bench
/// counts the positions of every live position it plays and checks the rule against them.
pub fn rest_is_short(live: &AnyPosition) -> bool {
    let [first, second] = live.disc_masks();
    short_rest(live, first | second)
}

/// [`rest_is_short`], the live position's occupied cells given.
fn short_rest(live: &AnyPosition, occupied: u64) -> bool {
    match live.game() {
        GameId::Reversi => 64 - occupied.count_ones() <= REVERSI_SHORT_EMPTIES,
        GameId::FourInARow => {
            let plies = horizon_plies(GameId::FourInARow) + 1;
            shapes(occupied, GameId::FourInARow.board(), plies) < FOUR_SHORT_SHAPES
        }
    }
}

/// Reversi: the empty squares left at or below which a live position is guarded to the end.
pub const REVERSI_SHORT_EMPTIES: u32 = 20;
/// Four in a Row: the ways to stack the next discs below which a live position is guarded to
/// the end.
pub const FOUR_SHORT_SHAPES: u64 = 6_500;

/// The ways to stack `discs` more discs on a gravity board whose occupied cells are `occupied`
/// (bit `row * columns + column`, the top row first): how many different sets of cells the
/// next `discs` discs can fill, colours aside.
pub fn shapes(occupied: u64, board: Board, discs: u32) -> u64 {
    let (columns, rows) = (u32::from(board.columns), u32::from(board.rows));
    // ways[k]: the ways to place k discs in the columns seen so far.
    let mut ways = vec![0u64; discs as usize + 1];
    ways[0] = 1;
    for x in 0..columns {
        let free = (0..rows)
            .filter(|&y| occupied & 1 << (y * columns + x) == 0)
            .count() as u32;
        let mut next = vec![0u64; discs as usize + 1];
        for (k, &w) in ways.iter().enumerate() {
            if w == 0 {
                continue;
            }
            for add in 0..=free.min(discs - k as u32) {
                next[k + add as usize] = next[k + add as usize].saturating_add(w);
            }
        }
        ways = next;
    }
    ways[discs as usize]
}

/// How many distinct questions (positions up to the game's images and, in Reversi, the colours
/// exchanged) with exactly `ply` discs placed legal lines from `live` reach without the game
/// ending on the way; counting stops once `cap` is certain (a count of `cap` means at least
/// `cap`). What pre-fetching every position just beyond a horizon costs.
pub fn questions_at(live: &AnyPosition, ply: u32, cap: usize) -> usize {
    if let AnyPosition::Reversi(p) = live {
        let (player, opponent) = p.boards();
        return reversi_questions_at(player, opponent, p.ply(), ply, cap);
    }
    let images = live.symmetries().len() * if live.colours_exchange() { 2 } else { 1 };
    let layer: Vec<AnyPosition> = dispatch!(live, p => layer(*p, ply, cap.saturating_mul(images))
        .into_iter()
        .map(AnyPosition::from)
        .collect());
    if layer.len() >= cap.saturating_mul(images) {
        return cap;
    }
    let classes: HashSet<[u64; 2]> = layer
        .iter()
        .map(|p| {
            let asked = Asked::of(p);
            asked.images[..asked.len]
                .iter()
                .copied()
                .min()
                .unwrap_or_default()
        })
        .collect();
    classes.len().min(cap)
}

/// [`questions_at`] for Reversi, on the raw boards of the side to move and its opponent: a
/// question is the pair up to the board's eight symmetries (the colours exchanged with the other
/// side to move is the very same pair), so every layer is kept as classes.
fn reversi_questions_at(player: u64, opponent: u64, from: u32, ply: u32, cap: usize) -> usize {
    use crate::games::reversi::{flips, moves};
    let mut current: HashSet<(u64, u64)> = HashSet::from([reversi_class(player, opponent)]);
    for _ in from..ply {
        let mut next: HashSet<(u64, u64)> = HashSet::with_capacity(current.len() * 8);
        'expand: for (mut p, mut o) in current {
            let mut legal = moves(p, o);
            if legal == 0 {
                // A pass, or the end of the game.
                if moves(o, p) == 0 {
                    continue;
                }
                (p, o) = (o, p);
                legal = moves(p, o);
            }
            while legal != 0 {
                let sq = legal.trailing_zeros() as usize;
                legal &= legal - 1;
                let f = flips(p, o, sq);
                let (np, no) = (o & !f, p | f | 1 << sq);
                // A game over on the way (no move for either side) is no question.
                if moves(np, no) == 0 && moves(no, np) == 0 {
                    continue;
                }
                next.insert(reversi_class(np, no));
                if next.len() >= cap {
                    break 'expand;
                }
            }
        }
        current = next;
    }
    current.len().min(cap)
}

/// The least of a Reversi position's eight images (the raw boards, row by row).
fn reversi_class(player: u64, opponent: u64) -> (u64, u64) {
    fn vertical(x: u64) -> u64 {
        x.swap_bytes()
    }
    fn horizontal(x: u64) -> u64 {
        let (k1, k2, k4) = (
            0x5555_5555_5555_5555,
            0x3333_3333_3333_3333,
            0x0f0f_0f0f_0f0f_0f0f,
        );
        let x = ((x >> 1) & k1) | ((x & k1) << 1);
        let x = ((x >> 2) & k2) | ((x & k2) << 2);
        ((x >> 4) & k4) | ((x & k4) << 4)
    }
    fn transpose(mut x: u64) -> u64 {
        let (k1, k2, k4) = (
            0x5500_5500_5500_5500u64,
            0x3333_0000_3333_0000u64,
            0x0f0f_0f0f_0000_0000u64,
        );
        let t = k4 & (x ^ (x << 28));
        x ^= t ^ (t >> 28);
        let t = k2 & (x ^ (x << 14));
        x ^= t ^ (t >> 14);
        let t = k1 & (x ^ (x << 7));
        x ^= t ^ (t >> 7);
        x
    }
    let images = |x: u64| {
        let t = transpose(x);
        [
            x,
            vertical(x),
            horizontal(x),
            vertical(horizontal(x)),
            t,
            vertical(t),
            horizontal(t),
            vertical(horizontal(t)),
        ]
    };
    let (ps, os) = (images(player), images(opponent));
    (0..8)
        .map(|i| (ps[i], os[i]))
        .min()
        .unwrap_or((player, opponent))
}

/// The distinct positions with `ply` discs placed that legal lines from `start` reach (passes
/// as they come), at most `cap` of them.
fn layer<G: Game>(start: G, ply: u32, cap: usize) -> Vec<G> {
    let mut current: HashSet<G> = HashSet::from([start]);
    for _ in start.ply()..ply {
        let mut next: HashSet<G> = HashSet::with_capacity(current.len() * 8);
        'expand: for mut p in current {
            if p.outcome().is_some() {
                continue;
            }
            if p.must_pass() {
                p.pass();
            }
            for mv in p.legal_moves() {
                let mut after = p;
                after.play(mv);
                if after.outcome().is_none() || after.ply() == ply {
                    next.insert(after);
                    if next.len() >= cap {
                        break 'expand;
                    }
                }
            }
        }
        current = next;
    }
    current
        .into_iter()
        .filter(|p| p.outcome().is_none() && p.ply() == ply)
        .collect()
}

/// What a live ranked position keeps from every service: the cells any position that can follow
/// it holds occupied, the discs it holds in their colour (masks as in
/// [`crate::games::disc_masks`]), its discs as they are, its game, its depth and the deepest ply
/// it guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    game: GameId,
    depth: u32,
    limit: u32,
    occupied: u64,
    first: u64,
    second: u64,
    /// The live discs of each player and the side to move (`None` in the older stored forms,
    /// which did not carry them: no flip test, no exact test).
    live: Option<([u64; 2], Side)>,
    /// The cells of the live line's last disc and the one before (0 when unknown): the
    /// positions its own line passed through are not variants of it ([`Asked::varies`]).
    recent: [u64; 2],
}

impl Guard {
    /// The guard a live ranked match at `live` publishes: `None` while nothing it could be asked
    /// about lies beyond the `public` plies (a position one move on would still be public), or
    /// once the game is over.
    pub fn of(live: &AnyPosition, public: u32) -> Option<Guard> {
        Guard::of_line(live, &[], public)
    }

    /// The guard a live ranked match publishes at `live`, reached by `moves` (its record, passes
    /// omitted): [`Guard::of`] with the cells of the last two discs. The live path calls it at
    /// every move of a ranked match: the board's masks are read once.
    pub fn of_line(live: &AnyPosition, moves: &[String], public: u32) -> Option<Guard> {
        if live.ply() < public || live.outcome().is_some() {
            return None;
        }
        let discs = live.disc_masks();
        let occupied = discs[0] | discs[1];
        Some(Guard {
            recent: recent_cells(live, occupied, moves),
            ..Guard::at(live, discs, reach_of(live, occupied))
        })
    }

    fn at(live: &AnyPosition, discs: [u64; 2], limit: u32) -> Guard {
        let [occupied, first, second] = live.permanent();
        Guard {
            game: live.game(),
            depth: live.ply(),
            limit,
            occupied,
            first,
            second,
            live: Some((discs, live.side_to_move())),
            recent: [0, 0],
        }
    }

    pub fn game(&self) -> GameId {
        self.game
    }

    /// The live position's depth (discs placed): no shallower position can follow it.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The deepest ply it guards (`u32::MAX`: to the end of the game).
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// The same guard reaching `limit` instead (the benches' other horizons).
    pub fn with_limit(self, limit: u32) -> Guard {
        Guard { limit, ..self }
    }

    /// The stored form: `game:depth:limit:side:occupied:first:second:discs1:discs2:last:before`,
    /// the masks in hexadecimal, the limit `end` for the end of the game, the side to move `1` or
    /// `2`, the cells of the last two discs last.
    pub fn key(&self) -> String {
        let limit = if self.limit == u32::MAX {
            "end".to_owned()
        } else {
            self.limit.to_string()
        };
        let ([d1, d2], side) = self
            .live
            .unwrap_or(([self.first, self.second], Side::First));
        format!(
            "{}:{}:{limit}:{}:{:x}:{:x}:{:x}:{d1:x}:{d2:x}:{:x}:{:x}",
            self.game,
            self.depth,
            side.index() + 1,
            self.occupied,
            self.first,
            self.second,
            self.recent[0],
            self.recent[1]
        )
    }

    /// Reads [`Guard::key`]'s form, and the older ones a live match may still hold until its
    /// next move: `game:depth:occupied:first:second` (guarded to the end, no flip test), or the
    /// canonical key of a live position (the form before the boundary). `None` for anything
    /// else.
    pub fn parse(key: &str) -> Option<Guard> {
        let hex = |s: &str| u64::from_str_radix(s, 16).ok();
        let parts: Vec<&str> = key.split(':').collect();
        match parts.as_slice() {
            [
                game,
                depth,
                limit,
                side,
                occupied,
                first,
                second,
                d1,
                d2,
                last,
                before,
            ] => Some(Guard {
                game: game.parse().ok()?,
                depth: depth.parse().ok()?,
                limit: match *limit {
                    "end" => u32::MAX,
                    n => n.parse().ok()?,
                },
                occupied: hex(occupied)?,
                first: hex(first)?,
                second: hex(second)?,
                live: Some((
                    [hex(d1)?, hex(d2)?],
                    match *side {
                        "1" => Side::First,
                        "2" => Side::Second,
                        _ => return None,
                    },
                )),
                recent: [hex(last)?, hex(before)?],
            }),
            [game, depth, occupied, first, second] => Some(Guard {
                game: game.parse().ok()?,
                depth: depth.parse().ok()?,
                limit: u32::MAX,
                occupied: hex(occupied)?,
                first: hex(first)?,
                second: hex(second)?,
                live: None,
                recent: [0, 0],
            }),
            [_, _, _] => {
                position_of_key(key).map(|pos| Guard::at(&pos, pos.disc_masks(), u32::MAX))
            }
            _ => None,
        }
    }
}

/// Most images a position has: the square's eight symmetries, each with the colours exchanged.
const MAX_IMAGES: usize = 16;

/// A position asked about, as the boundary reads it: its game, its depth and the disc masks of
/// each of its images (the board's symmetries, and with the colours exchanged where the game
/// allows it), computed once and checked against every live guard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked {
    game: GameId,
    ply: u32,
    /// The game is over there: its value is its result, which the board shows.
    over: bool,
    /// Whether the game allows one disc's colour to change alone (Reversi).
    exchange: bool,
    images: [[u64; 2]; MAX_IMAGES],
    len: usize,
}

impl Asked {
    pub fn of(pos: &AnyPosition) -> Asked {
        let masks = pos.disc_masks();
        let board = pos.game().board();
        let mut asked = Asked {
            game: pos.game(),
            ply: pos.ply(),
            over: pos.outcome().is_some(),
            exchange: pos.colours_exchange(),
            images: [[0; 2]; MAX_IMAGES],
            len: 0,
        };
        for &s in pos.symmetries() {
            let image = [map(masks[0], s, board), map(masks[1], s, board)];
            asked.push(image);
            if pos.colours_exchange() {
                asked.push([image[1], image[0]]);
            }
        }
        asked
    }

    fn push(&mut self, image: [u64; 2]) {
        if self.len < MAX_IMAGES {
            self.images[self.len] = image;
            self.len += 1;
        }
    }

    pub fn game(&self) -> GameId {
        self.game
    }

    pub fn ply(&self) -> u32 {
        self.ply
    }

    /// Whether the asked position can follow the guarded live one within its reach: it lies
    /// between the live depth and the guard's limit, and one of its images holds every cell the
    /// guard keeps occupied and every disc it keeps in its colour, with every disc whose colour
    /// changed on a line of occupied squares from a newly filled square.
    pub fn follows(&self, guard: &Guard) -> bool {
        guard.game == self.game
            && guard.depth <= self.ply
            && self.ply <= guard.limit
            && self.images[..self.len].iter().any(|&[first, second]| {
                let occupied = first | second;
                guard.occupied & !occupied == 0
                    && guard.first & !first == 0
                    && guard.second & !second == 0
                    && guard.live.is_none_or(|([d1, d2], side)| {
                        let flipped = (d1 & second) | (d2 & first);
                        (flipped == 0
                            || flipped
                                & !lines_from(
                                    occupied & !guard.occupied,
                                    occupied,
                                    self.game.board(),
                                )
                                == 0)
                            && reachable(self.game, [d1, d2], side, [first, second])
                    })
            })
    }
}

/// Most positions the exact test of one image visits before it takes the image as reachable
/// (a test cut short withholds: it never lets a reachable position through).
pub const REACH_BUDGET: u32 = 4_000;

/// Whether legal moves lead from the live discs `from` (`side` to move) to the discs `to`
/// (masks of the same image of the board), the game going on until then: a search over the
/// cells `to` fills, each move on one of them, pruned where a disc that has not its final colour
/// can no longer change (Reversi: no cell left to fill on one of its lines uncut by a cell `to`
/// leaves empty, [`flippers`]), or two such discs can each change only by the same cell placed in
/// two colours, or a cell is not the mover's (Four in a Row). Cut short after [`REACH_BUDGET`]
/// positions, as reachable.
fn reachable(game: GameId, from: [u64; 2], side: Side, to: [u64; 2]) -> bool {
    let mut search = Reach {
        to,
        seen: HashSet::new(),
        budget: REACH_BUDGET,
    };
    match game {
        GameId::Reversi => search.reversi(from, side),
        GameId::FourInARow => search.four(from, side),
    }
}

struct Reach {
    to: [u64; 2],
    seen: HashSet<([u64; 2], Side)>,
    budget: u32,
}

impl Reach {
    /// Whether the search should stop here: `Some(answer)`.
    fn visit(&mut self, at: [u64; 2], side: Side) -> Option<bool> {
        let remaining = (self.to[0] | self.to[1]) & !(at[0] | at[1]);
        if remaining == 0 {
            return Some(at == self.to);
        }
        if self.budget == 0 {
            return Some(true);
        }
        self.budget -= 1;
        // A position seen before failed (a success ends the search).
        (!self.seen.insert((at, side))).then_some(false)
    }

    fn reversi(&mut self, at: [u64; 2], side: Side) -> bool {
        use crate::games::reversi::{flips, moves};
        if let Some(answer) = self.visit(at, side) {
            return answer;
        }
        let filled = self.to[0] | self.to[1];
        let remaining = filled & !(at[0] | at[1]);
        // Every disc not in its final colour flips again later, from a square still to fill;
        // where only one square can, that square's disc is placed in the final colour, so two
        // discs that need it for two colours cannot both be turned.
        let mut wrong = (at[0] ^ self.to[0]) & (at[0] | at[1]);
        let mut placed_by = [0u64; 2];
        while wrong != 0 {
            let sq = wrong.trailing_zeros();
            wrong &= wrong - 1;
            let from = flippers(sq, filled, remaining);
            if from == 0 {
                return false;
            }
            if from & (from - 1) == 0 {
                placed_by[usize::from(self.to[0] & 1 << sq == 0)] |= from;
            }
        }
        if placed_by[0] & placed_by[1] != 0 {
            return false;
        }
        let mover = side.index();
        let (p, o) = (at[mover], at[1 - mover]);
        let all = moves(p, o);
        if all == 0 {
            // A pass, or the end of the game before the asked position.
            return moves(o, p) != 0 && self.reversi(at, side.other());
        }
        let mut legal = all & remaining;
        while legal != 0 {
            let sq = legal.trailing_zeros() as usize;
            legal &= legal - 1;
            let f = flips(p, o, sq);
            let mut next = at;
            next[mover] = p | f | 1 << sq;
            next[1 - mover] = o & !f;
            if self.reversi(next, side.other()) {
                return true;
            }
        }
        false
    }

    fn four(&mut self, at: [u64; 2], side: Side) -> bool {
        if let Some(answer) = self.visit(at, side) {
            return answer;
        }
        let board = GameId::FourInARow.board();
        let (columns, rows) = (u32::from(board.columns), u32::from(board.rows));
        let occupied = at[0] | at[1];
        let remaining = (self.to[0] | self.to[1]) & !occupied;
        let mine = self.to[side.index()];
        for x in 0..columns {
            // The column's lowest empty cell (rows from the top).
            let Some(cell) = (0..rows)
                .rev()
                .map(|y| 1u64 << (y * columns + x))
                .find(|&c| occupied & c == 0)
            else {
                continue;
            };
            if remaining & cell != 0 && mine & cell != 0 {
                let mut next = at;
                next[side.index()] |= cell;
                if self.four(next, side.other()) {
                    return true;
                }
            }
        }
        false
    }
}

/// The squares still to fill (`remaining`, on the way to a board whose occupied squares are
/// `filled`) from which a placed disc can flip the Reversi disc on `sq`: a disc flips only
/// between a disc placed on a square still to fill and a disc beyond it on the same line, every
/// square between them occupied at that moment, and a square the board leaves empty stays empty
/// on the way there, so it cuts the line.
fn flippers(sq: u32, filled: u64, remaining: u64) -> u64 {
    use crate::games::reversi::RAYS;
    // A ray's squares up to the first one left empty: towards higher bits, below its lowest
    // empty square; towards lower bits, above its highest.
    let up = |ray: u64| {
        let block = ray & !filled;
        ray & (block & block.wrapping_neg()).wrapping_sub(1)
    };
    let down = |ray: u64| {
        let block = ray & !filled;
        let top = (1u64 << 63).wrapping_shr(block.leading_zeros()) & block;
        ray & !top.wrapping_shl(1).wrapping_sub(u64::from(top != 0))
    };
    let rays = &RAYS[sq as usize & 63];
    let mut from = 0u64;
    for d in 0..4 {
        let (ahead, behind) = (up(rays[d]), down(rays[d + 4]));
        if behind != 0 {
            from |= ahead & remaining;
        }
        if ahead != 0 {
            from |= behind & remaining;
        }
    }
    from
}

/// The cells reached from `from` along the eight directions through `occupied` cells (the
/// cells a disc placed on `from` can have flipped, with every later flip's line).
fn lines_from(from: u64, occupied: u64, board: Board) -> u64 {
    let (columns, rows) = (u32::from(board.columns), u32::from(board.rows));
    let cells = columns * rows;
    let all = if cells == 64 {
        u64::MAX
    } else {
        (1u64 << cells) - 1
    };
    let mut first_column = 0u64;
    for y in 0..rows {
        first_column |= 1 << (y * columns);
    }
    let last_column = first_column << (columns - 1);
    let step = |m: u64, dx: i32, dy: i32| -> u64 {
        let m = match dx {
            1 => (m & !last_column) << 1,
            -1 => (m & !first_column) >> 1,
            _ => m,
        };
        let m = match dy {
            1 => m << columns,
            -1 => m >> columns,
            _ => m,
        };
        m & all
    };
    let mut reached = 0u64;
    for (dx, dy) in [
        (1, 0),
        (-1, 0),
        (0, 1),
        (0, -1),
        (1, 1),
        (1, -1),
        (-1, 1),
        (-1, -1),
    ] {
        let mut front = from;
        loop {
            front = step(front, dx, dy) & occupied;
            if front == 0 {
                break;
            }
            reached |= front;
        }
    }
    reached
}

impl Asked {
    /// Whether the asked position is a slight variant of the live position itself, the road
    /// around the boundary that asks boards which do not follow it and takes the majority of
    /// their best moves (BENCHMARKS.md measures how well that works): in some image, no cell
    /// the live position leaves empty taken, and one or two changes in all (a live disc
    /// missing, or a disc of another colour; in Four in a Row, whose counts allow no single
    /// change of colour, two of them count as one). The live line's own last two positions (its
    /// last disc missing, or its last two) are not variants: they are answered, as the rest of
    /// the line's record is.
    pub fn varies(&self, guard: &Guard) -> bool {
        let Some(([d1, _], _)) = guard.live else {
            return false;
        };
        let per_change = if self.exchange { 1 } else { 2 };
        guard.game == self.game
            && self.ply + 2 >= guard.depth
            && self.ply <= guard.depth
            && self.images[..self.len].iter().any(|&[first, second]| {
                let occupied = first | second;
                let missing = (guard.occupied & !occupied).count_ones();
                let recoloured = ((first ^ d1) & occupied & guard.occupied).count_ones();
                let gone = guard.occupied & !occupied;
                let [last, before] = guard.recent;
                let own_line = last != 0 && (gone == last || gone == last | before);
                occupied & !guard.occupied == 0
                    && !own_line
                    && (recoloured > 0 || missing > 0)
                    && missing + recoloured.div_ceil(per_change) <= 2
            })
    }
}

/// The cells (as masks) of the last disc placed by `moves` and of the one before, in the position
/// `live` they lead to, whose cells `occupied` holds; 0 for what cannot be read.
fn recent_cells(live: &AnyPosition, occupied: u64, moves: &[String]) -> [u64; 2] {
    let board = live.game().board();
    let columns = u32::from(board.columns);
    let mut out = [0u64; 2];
    let mut taken = 0u64;
    for (k, mv) in moves.iter().rev().take(2).enumerate() {
        let cell = match live {
            AnyPosition::Reversi(_) => mv
                .parse::<crate::games::Square>()
                .map_or(0, |sq| 1u64 << sq.index()),
            // The column's highest disc not already taken by a later move.
            AnyPosition::FourInARow(_) => mv
                .parse::<crate::games::Column>()
                .ok()
                .and_then(|c| {
                    (0..u32::from(board.rows))
                        .map(|y| 1u64 << (y * columns + u32::from(c.index())))
                        .find(|&cell| occupied & cell != 0 && taken & cell == 0)
                })
                .unwrap_or(0),
        };
        taken |= cell;
        out[k] = cell & occupied;
    }
    out
}

/// Whether a question about `asked` is withheld: it lies beyond the `public` plies, the game goes
/// on there (a finished board's value is its result, which anyone reads off the board), and it
/// can follow one of the live `guards` within its reach, or is a slight variant of one
/// ([`Asked::varies`]).
pub fn withheld(asked: &Asked, public: u32, guards: &[Guard]) -> bool {
    !asked.over && asked.ply > public && guards.iter().any(|g| asked.follows(g) || asked.varies(g))
}

/// `mask` (bit `row * columns + column`) seen through `s`.
fn map(mask: u64, s: Symmetry, board: Board) -> u64 {
    let (columns, rows) = (board.columns, board.rows);
    let turned = matches!(
        s,
        Symmetry::Transpose | Symmetry::AntiTranspose | Symmetry::Rotate90 | Symmetry::Rotate270
    );
    let out_columns = if turned { rows } else { columns };
    let mut out = 0u64;
    let mut bits = mask;
    while bits != 0 {
        let bit = bits.trailing_zeros() as u8;
        bits &= bits - 1;
        let (x, y) = s.cell(bit % columns, bit / columns, columns, rows);
        out |= 1 << (u32::from(y) * u32::from(out_columns) + u32::from(x));
    }
    out
}

/// Every board that asks the same question as `pos`: its image under each of the game's
/// symmetries and, where the game allows it, each with the colours exchanged and the other side
/// to move (the identity first). What [`Asked`] reads as masks, as positions.
pub fn same_questions(pos: &AnyPosition) -> Vec<AnyPosition> {
    let rows = pos.rows();
    let [a, b] = [pos.color(Side::First), pos.color(Side::Second)];
    let mut out = Vec::new();
    for &s in pos.symmetries() {
        let turned = s.rows(&rows);
        let refs: Vec<&str> = turned.iter().map(String::as_str).collect();
        out.extend(AnyPosition::from_rows(pos.game(), &refs, pos.side_to_move()).ok());
        if pos.colours_exchange() {
            let swapped: Vec<String> = turned
                .iter()
                .map(|r| {
                    r.chars()
                        .map(|c| match c {
                            c if c == a => b,
                            c if c == b => a,
                            c => c,
                        })
                        .collect()
                })
                .collect();
            let refs: Vec<&str> = swapped.iter().map(String::as_str).collect();
            let other = pos.side_to_move().other();
            out.extend(AnyPosition::from_rows(pos.game(), &refs, other).ok());
        }
    }
    out
}

/// The position of a canonical key (`game:row/row/..:colour`, [`AnyPosition::canonical`]).
pub fn position_of_key(key: &str) -> Option<AnyPosition> {
    let mut parts = key.splitn(3, ':');
    let game: GameId = parts.next()?.parse().ok()?;
    let rows: Vec<&str> = parts.next()?.split('/').collect();
    let colour = parts.next()?.chars().next()?;
    let start = AnyPosition::start(game);
    let side = [Side::First, Side::Second]
        .into_iter()
        .find(|&s| start.color(s) == colour)?;
    AnyPosition::from_rows(game, &rows, side).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use proptest::prelude::*;

    fn after(game: GameId, moves: &str) -> AnyPosition {
        crate::analysis::position_after(game, moves).expect("a record")
    }

    /// A random legal line from `pos` of up to `plies` placed discs (passes as they come).
    fn random_line(
        mut pos: AnyPosition,
        plies: usize,
        rng: &mut SplitMix64,
        mut visit: impl FnMut(&AnyPosition),
    ) {
        for _ in 0..plies {
            if pos.outcome().is_some() {
                return;
            }
            if pos.must_pass() {
                pos.pass();
                visit(&pos);
            }
            let legal = pos.legal_moves();
            pos.play(&legal[rng.index(legal.len())])
                .expect("a legal move");
            visit(&pos);
        }
    }

    /// Every position along a random game from the start to its end.
    fn random_game(game: GameId, rng: &mut SplitMix64) -> Vec<AnyPosition> {
        let mut out = vec![AnyPosition::start(game)];
        random_line(AnyPosition::start(game), 64, rng, |p| out.push(*p));
        out
    }

    /// How many live positions of each random game the line test takes (at random): all of them
    /// cost the domain's tests a minute a run, for no line a sample of a few thousand misses.
    const LIVE_PER_GAME: usize = 8;

    /// Any live position of a random game guards every position of any legal line from it within
    /// its reach, in every image, and no position past its reach.
    fn every_line_from_a_live_position_is_caught(game: GameId, seed: u64) {
        let mut rng = SplitMix64(seed);
        let line = random_game(game, &mut rng);
        let live: Vec<AnyPosition> = line.into_iter().filter(|p| p.outcome().is_none()).collect();
        let picked: Vec<AnyPosition> = (0..LIVE_PER_GAME)
            .map(|_| rng.pick(&live).expect("a game starts live"))
            .collect();
        let public = 0;
        for live in &picked {
            let guard = Guard::of(live, public).expect("a live position guards");
            let back = Guard::parse(&guard.key()).expect("its key reads back");
            assert_eq!(back, guard);
            assert_eq!(guard.limit(), reach(live));
            let mut followers = vec![*live];
            random_line(*live, 4, &mut rng, |p| followers.push(*p));
            random_line(*live, 60, &mut rng, |p| followers.push(*p));
            for pos in followers {
                let within = pos.ply() <= guard.limit();
                for image in same_questions(&pos) {
                    assert_eq!(
                        Asked::of(&image).follows(&guard),
                        within,
                        "{:?} (ply {}) from {:?} (ply {}, limit {})",
                        image.rows(),
                        pos.ply(),
                        live.rows(),
                        live.ply(),
                        guard.limit()
                    );
                }
            }
        }
    }

    /// Every position `plies` on from `live` by any line (passes as they come), up to the game's
    /// images and colours, as board strings: what [`questions_at`] counts, by another road.
    fn questions_by_strings(live: AnyPosition, plies: u32) -> usize {
        let mut layer = vec![live];
        for _ in 0..plies {
            let mut next = Vec::new();
            for mut p in layer {
                if p.outcome().is_some() {
                    continue;
                }
                if p.must_pass() {
                    p.pass();
                }
                for mv in p.legal_moves() {
                    let mut after = p;
                    after.play(&mv).expect("a legal move");
                    next.push(after);
                }
            }
            layer = next;
        }
        layer
            .iter()
            .filter(|p| p.outcome().is_none())
            .map(|p| {
                same_questions(p)
                    .iter()
                    .map(|q| format!("{}{:?}", q.rows().concat(), q.side_to_move()))
                    .min()
                    .expect("an image")
            })
            .collect::<HashSet<String>>()
            .len()
    }

    #[test]
    fn the_questions_beyond_a_horizon_are_counted_up_to_images_and_colours() {
        let start = AnyPosition::start(GameId::FourInARow);
        // One disc: four columns up to the mirror; two: 49 lines, one of them its own mirror.
        assert_eq!(questions_at(&start, 1, PRICE), 4);
        assert_eq!(questions_at(&start, 2, PRICE), 25);
        for (game, moves, plies) in [
            (GameId::FourInARow, "4453361", 4),
            (GameId::FourInARow, "44444433333", 5),
            (GameId::Reversi, "f5d6c3d3c4f4", 3),
            (GameId::Reversi, "", 4),
        ] {
            let live = after(game, moves);
            assert_eq!(
                questions_at(&live, live.ply() + plies, PRICE),
                questions_by_strings(live, plies),
                "{game} {moves}"
            );
        }
        // Counting stops at the cap.
        assert_eq!(questions_at(&start, 6, 100), 100);
    }

    #[test]
    fn a_short_rest_is_guarded_to_the_end() {
        // Reversi with few empty squares left: the rest of the game is guarded.
        let mut rng = SplitMix64(5);
        let line = random_game(GameId::Reversi, &mut rng);
        for live in line.iter().filter(|p| p.outcome().is_none()) {
            let short = 60 - live.ply() <= REVERSI_SHORT_EMPTIES;
            assert_eq!(rest_is_short(live), short, "{}", live.ply());
            assert_eq!(
                reach(live),
                if short {
                    u32::MAX
                } else {
                    live.ply() + horizon_plies(GameId::Reversi)
                }
            );
        }
        // Four in a Row: a position with no more empty cells than the horizon's discs is short;
        // the start is not.
        let h = horizon_plies(GameId::FourInARow);
        for seed in 0..20 {
            let line = random_game(GameId::FourInARow, &mut SplitMix64(seed));
            for live in line
                .iter()
                .filter(|p| p.outcome().is_none() && 42 - p.ply() <= h)
            {
                assert!(rest_is_short(live), "{:?}", live.rows());
                assert_eq!(reach(live), u32::MAX);
            }
        }
        assert!(!rest_is_short(&AnyPosition::start(GameId::FourInARow)));
        assert_eq!(shapes(0, GameId::FourInARow.board(), 2), 28);
    }

    #[test]
    fn a_position_that_holds_the_live_discs_but_no_line_reaches_is_answered() {
        // Red in column 3, then yellow on it, then red in column 4: reached from the start and
        // from red's first disc in column 3, never from red's first disc in column 4 (yellow,
        // to move, would have to place the disc that lies on red's).
        let asked = after(GameId::FourInARow, "334");
        for (live, follows) in [("3", true), ("4", false), ("33", true)] {
            let guard = Guard::of(&after(GameId::FourInARow, live), 0).expect("a guard");
            assert_eq!(Asked::of(&asked).follows(&guard), follows, "from {live}");
        }
        // Reversi: the start's discs are in every later board, but a board reached from another
        // opening is not reachable from this one three plies on.
        let live = after(GameId::Reversi, "f5d6c3");
        let other = after(GameId::Reversi, "f5f6e6f4");
        let guard = Guard::of(&live, 0).expect("a guard");
        assert!(!Asked::of(&other).follows(&guard));
        assert!(Asked::of(&after(GameId::Reversi, "f5d6c3d3")).follows(&guard));
    }

    #[test]
    fn slight_variants_of_a_live_position_are_withheld_and_its_siblings_and_parent_are_not() {
        let public = 8;
        let live = after(GameId::FourInARow, "4453361212");
        let line: Vec<String> = "4453361212".chars().map(String::from).collect();
        let guard = Guard::of_line(&live, &line, public).expect("beyond the opening");
        assert_eq!(Guard::parse(&guard.key()), Some(guard));
        let rows = |moves: &str| after(GameId::FourInARow, moves).rows();
        let board = |rows: Vec<String>, side: Side| {
            let refs: Vec<&str> = rows.iter().map(String::as_str).collect();
            AnyPosition::from_rows(GameId::FourInARow, &refs, side).expect("a board")
        };
        // The line's own parent and grandparent are answered; another top disc removed (yellow's
        // second move, on top of column 4: yellow to move) is a variant.
        for moves in ["445336121", "44533612"] {
            assert!(!Asked::of(&after(GameId::FourInARow, moves)).varies(&guard));
        }
        let rows_of = |moves: &str| after(GameId::FourInARow, moves).rows();
        let mut removed: Vec<Vec<char>> = rows_of("4453361212")
            .iter()
            .map(|r| r.chars().collect())
            .collect();
        assert_eq!(removed[4][3], 'Y');
        removed[4][3] = '.';
        let removed = board(
            removed.iter().map(|r| r.iter().collect()).collect(),
            Side::Second,
        );
        assert!(withheld(&Asked::of(&removed), public, &[guard]));
        // Two discs of other colours exchanged: the same cells, two colours changed.
        let mut swapped: Vec<Vec<char>> = rows("4453361212")
            .iter()
            .map(|r| r.chars().collect())
            .collect();
        // Red's first disc in column 1 and yellow's in column 2, on the bottom row.
        assert_eq!((swapped[5][0], swapped[5][1]), ('R', 'Y'));
        swapped[5][0] = 'Y';
        swapped[5][1] = 'R';
        let swapped = board(
            swapped.iter().map(|r| r.iter().collect()).collect(),
            live.side_to_move(),
        );
        assert_ne!(swapped, live);
        assert!(withheld(&Asked::of(&swapped), public, &[guard]));
        // A sibling (another tenth disc) and a position two plies back are answered.
        assert!(!withheld(
            &Asked::of(&after(GameId::FourInARow, "4453361213")),
            public,
            &[guard]
        ));
        assert!(!withheld(
            &Asked::of(&after(GameId::FourInARow, "44533612")),
            public,
            &[guard]
        ));
    }

    #[test]
    fn a_reversi_disc_flips_only_on_a_line_from_a_newly_filled_square() {
        let live = after(GameId::Reversi, "f5d6c3d3c4f4c5b3c2e6c6b4");
        let guard = Guard::of(&live, 12).expect("beyond the opening");
        // The live position with one inner disc's colour changed and nothing placed: no line
        // from a new square reaches it, so it does not follow.
        let rows = live.rows();
        let flipped: Vec<String> = rows
            .iter()
            .enumerate()
            .map(|(y, r)| {
                r.chars()
                    .enumerate()
                    .map(|(x, c)| match (x, y, c) {
                        (3, 3, 'B') => 'W',
                        (3, 3, 'W') => 'B',
                        (_, _, c) => c,
                    })
                    .collect()
            })
            .collect();
        let refs: Vec<&str> = flipped.iter().map(String::as_str).collect();
        let changed =
            AnyPosition::from_rows(GameId::Reversi, &refs, live.side_to_move()).expect("a board");
        assert_ne!(changed, live);
        assert!(!Asked::of(&changed).follows(&guard));
        assert!(Asked::of(&live).follows(&guard));
        // An older stored form (no discs, no limit) still guards it, to the end.
        let old = Guard::parse(&format!(
            "reversi:{}:{:x}:{:x}:{:x}",
            guard.depth(),
            live.permanent()[0],
            live.permanent()[1],
            live.permanent()[2]
        ))
        .expect("the older form");
        assert_eq!(old.limit(), u32::MAX);
        assert!(Asked::of(&changed).follows(&old));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn four_in_a_row_lines_from_a_live_position_are_caught_in_every_image(seed: u64) {
            every_line_from_a_live_position_is_caught(GameId::FourInARow, seed);
        }

        #[test]
        fn reversi_lines_from_a_live_position_are_caught_in_every_image_and_colour(seed: u64) {
            every_line_from_a_live_position_is_caught(GameId::Reversi, seed);
        }

        /// Stable discs never flip: along any legal line, each keeps its colour.
        #[test]
        fn reversi_stable_discs_keep_their_colour_along_any_line(seed: u64) {
            let mut rng = SplitMix64(seed);
            for live in random_game(GameId::Reversi, &mut rng) {
                let [_, black, white] = live.permanent();
                random_line(live, 60, &mut rng, |p| {
                    let [b, w] = p.disc_masks();
                    assert_eq!(black & !b, 0, "{:?} from {:?}", p.rows(), live.rows());
                    assert_eq!(white & !w, 0, "{:?} from {:?}", p.rows(), live.rows());
                });
            }
        }
    }

    #[test]
    fn a_reversi_disc_is_flipped_only_from_a_square_to_fill_on_its_line_uncut() {
        let bit = |name: &str| {
            1u64 << name
                .parse::<crate::games::Square>()
                .expect("a square")
                .index()
        };
        // The first row: a1 and b1 occupied, d1 still to fill, c1 left empty by the board asked.
        let (a1, b1, c1, d1) = (bit("a1"), bit("b1"), bit("c1"), bit("d1"));
        let sq = |m: u64| m.trailing_zeros();
        assert_eq!(
            flippers(sq(b1), a1 | b1 | d1, d1),
            0,
            "c1 left empty cuts the row"
        );
        // c1 filled on the way: d1 flips b1 against a1.
        assert_eq!(flippers(sq(b1), a1 | b1 | c1 | d1, d1), d1);
        // Nothing beyond a1 on the row, the column or a diagonal: nothing flips it.
        assert_eq!(flippers(sq(a1), a1 | b1 | c1 | d1, c1 | d1), 0);
        // b2 below b1 and b3 to fill: b1 has nothing above it on its column to bracket it.
        let (b2, b3) = (bit("b2"), bit("b3"));
        assert_eq!(flippers(sq(b1), b1 | b2 | b3, b3), 0);
        // b2 has b1 above it: b3 flips it against b1, and so does b1 when it is still to fill.
        assert_eq!(flippers(sq(b2), b1 | b2 | b3, b3), b3);
        assert_eq!(flippers(sq(b2), b1 | b2 | b3, b1 | b3), b1 | b3);
    }

    #[test]
    fn corners_and_the_edges_they_anchor_are_stable_and_inner_discs_are_not() {
        let rows = [
            "BBB.....", "B.......", "........", "...WB...", "...BW...", "........", "........",
            ".......W",
        ];
        let pos = AnyPosition::from_rows(GameId::Reversi, &rows, Side::First).expect("a board");
        let [occupied, black, white] = pos.permanent();
        let [b, w] = pos.disc_masks();
        assert_eq!(occupied, b | w);
        // a1, b1, c1 along the top edge and a2 down the side; h8's corner.
        assert_eq!(black, 1 | 1 << 1 | 1 << 2 | 1 << 8);
        assert_eq!(white, 1 << 63);
    }

    #[test]
    fn four_in_a_row_siblings_and_shallower_positions_do_not_follow() {
        let public = 8;
        let live = after(GameId::FourInARow, "4453361212");
        let guard = Guard::of(&live, public).expect("beyond the opening");
        // Another tenth disc: a sibling, not a follower (nor its mirror image).
        assert!(!Asked::of(&after(GameId::FourInARow, "4453361213")).follows(&guard));
        assert!(!Asked::of(&after(GameId::FourInARow, "4453361211")).follows(&guard));
        // The position before it is not withheld by it.
        assert!(!Asked::of(&after(GameId::FourInARow, "445336121")).follows(&guard));
        // Two and three plies on are.
        assert!(Asked::of(&after(GameId::FourInARow, "445336121277")).follows(&guard));
        assert!(Asked::of(&after(GameId::FourInARow, "4453361212771")).follows(&guard));
        // The same position reached by another move order is.
        assert!(Asked::of(&after(GameId::FourInARow, "4453361212")).follows(&guard));
        assert!(Asked::of(&after(GameId::FourInARow, "4453163212")).follows(&guard));
    }

    #[test]
    fn the_public_opening_is_never_withheld() {
        let public = GameId::FourInARow.public_plies();
        assert_eq!(public, 8);
        assert_eq!(GameId::Reversi.public_plies(), 12);
        // A live position at depth 7 publishes nothing; at depth 8 it guards depth 9 on.
        assert!(Guard::of(&after(GameId::FourInARow, "4453361"), public).is_none());
        let live = after(GameId::FourInARow, "44533612");
        let guard = Guard::of(&live, public).expect("as built");
        assert_eq!(guard.depth(), 8);
        assert!(!withheld(&Asked::of(&live), public, &[guard]));
        assert!(withheld(
            &Asked::of(&after(GameId::FourInARow, "445336125")),
            public,
            &[guard]
        ));
        // A finished game guards nothing, and a finished board is never withheld (its value is
        // its result), though it holds the live discs.
        let won = after(GameId::FourInARow, "1212121");
        assert!(Guard::of(&won, 0).is_none());
        let live = Guard::of(&after(GameId::FourInARow, "121212"), 0).expect("a guard");
        assert!(Asked::of(&won).follows(&live));
        assert!(!withheld(&Asked::of(&won), 0, &[live]));
    }

    #[test]
    fn a_reversi_board_with_its_colours_exchanged_is_the_same_question() {
        let live = after(GameId::Reversi, "f5d6c3d3c4f4c5b3c2e6c6b4");
        let guard = Guard::of(&live, 12).expect("at the public depth");
        let mut next = live;
        let mv = next.legal_moves()[0].clone();
        next.play(&mv).expect("a legal move");
        for image in same_questions(&next) {
            assert!(
                withheld(&Asked::of(&image), 12, &[guard]),
                "{:?}",
                image.rows()
            );
        }
    }

    #[test]
    fn a_guard_reads_from_an_older_canonical_key() {
        let live = after(GameId::Reversi, "f5d6c3d3c4f4");
        let (key, _) = live.canonical();
        let guard = Guard::parse(&key).expect("a guard");
        // Guarded to the end: the older form says nothing of a horizon.
        assert_eq!(
            Some(guard),
            Guard::of(&position_of_key(&key).expect("a key"), 0).map(|g| g.with_limit(u32::MAX))
        );
        assert!(Asked::of(&live).follows(&guard));
        assert!(Guard::parse("chess:x:R").is_none());
        assert!(Guard::parse("four_in_a_row").is_none());
        assert!(Guard::parse("reversi:1:zz:0:0").is_none());
    }
}
