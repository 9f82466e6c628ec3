//! Reversi engine: a PVS midgame search with iterative deepening and an exact endgame solver.
//!
//! Everything works on two raw bitboards, `p` (the side to move) and `o` (its opponent), with the
//! square numbering of [`Square::index`] (`a1` = bit 0, `h8` = bit 63).
//!
//! Scores are final disc differences from the side to move's point of view, empty squares going
//! to the winner (the FFO convention). The midgame search works in hundredths of a
//! disc ([`SCALE`]) and reports its estimate rounded to whole discs.
//!
//! - The **midgame** search is a principal variation search (PVS) with iterative deepening, a
//!   transposition table and move ordering (table move first, then children by their static
//!   value). The evaluation weighs mobility, potential mobility, corners, the squares next to
//!   empty corners, stable discs and parity, with weights that shift as the board fills.
//! - The **endgame** solver is exact. Above a few empties it orders moves fastest-first (fewest
//!   replies for the opponent, corners counted twice, odd regions first; far from the end, the
//!   opponent's replies and the evaluation after the move, or a two-ply search), probes the
//!   table (fetching the children's slots into the cache while it orders them, and far from
//!   the end probing every child's entry before searching any) and cuts on
//!   stability (discs of the opponent that can never flip bound the score from above); for the last
//!   [`SHALLOW_EMPTIES`] squares it walks the empty squares directly, those in regions with an
//!   odd number of empties first, and counts the last move's flips alone.
//! - An analysis may solve on several threads ([`Limits::threads`]): they share the table
//!   without a lock; a node far enough from the end shares its moves after the first with the
//!   threads to spare (young brothers wait, `Search::split`), and after the first root move the
//!   others are shared too (`Search::solve_root`). CPU choices use one thread.
//!
//! Searches are bounded by node counts (and an optional stop flag), never by a clock, so a CPU
//! move is the same on every machine. The exact solver's recursive steps exist twice
//! (`arch::two_copies!`): compiled for the build's target and for the x86-64-v3 instructions,
//! the second taken where the processor has them; both visit the same nodes.

use std::sync::Mutex;
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicI64, AtomicIsize, AtomicU64, AtomicUsize, Ordering,
};

use smallvec::SmallVec;

use super::{Limits, SplitMix64, Verdict, arch};
use crate::games::reversi::{flips, moves};
use crate::games::{Game, Reversi, Square};

/// Evaluation units per disc.
pub const SCALE: i32 = 100;

/// The most empties at which [`Engine::analyse`] tries an exact solve straight away (it also
/// solves any position whose midgame search reached the end of the game within the budget).
pub const EXACT_MAX_EMPTIES: u32 = 26;

/// Below this many empties the solver walks the empty squares without a table.
const SHALLOW_EMPTIES: u32 = 6;

/// From this many empties the solver stores and probes the transposition table.
const TABLE_MIN_EMPTIES: u32 = 8;
/// From this many empties, the solver looks up every child in the table before searching any
/// (enhanced transposition cutoff): a child already proved bad enough for the opponent cuts at
/// once.
const ETC_MIN_EMPTIES: u32 = 14;
/// From this many empties, a node of a parallel solve shares its moves with the threads to spare.
const SPLIT_MIN_EMPTIES: u32 = 14;
/// From this many empties, the solver orders moves by the opponent's mobility and the
/// evaluation of the position after them, rather than by mobility, parity and corners alone.
const EVALUATED_ORDER_EMPTIES: u32 = 14;
/// From this many empties, by the opponent's mobility and a midgame search of
/// [`SEARCHED_ORDER_DEPTH`] plies after them: such nodes are few, their subtrees large.
const SEARCHED_ORDER_EMPTIES: u32 = 17;
const SEARCHED_ORDER_DEPTH: i32 = 2;

const NOT_A: u64 = 0xFEFE_FEFE_FEFE_FEFE;
const NOT_H: u64 = 0x7F7F_7F7F_7F7F_7F7F;
const CORNERS: u64 = 0x8100_0000_0000_0081;
const EDGES: u64 = 0xFF81_8181_8181_81FF;
const COLUMNS_A_H: u64 = 0x8181_8181_8181_8181;
const ROWS_1_8: u64 = 0xFF00_0000_0000_00FF;
/// The four 4x4 quadrants, for parity.
const QUADRANTS: [u64; 4] = [
    0x0000_0000_0F0F_0F0F,
    0x0000_0000_F0F0_F0F0,
    0x0F0F_0F0F_0000_0000,
    0xF0F0_F0F0_0000_0000,
];

// ---------------------------------------------------------------------------------------------
// Bitboard primitives
// ---------------------------------------------------------------------------------------------

/// The final score of a finished game for `p`: disc difference, empties to the winner.
#[inline]
fn final_score(p: u64, o: u64) -> i32 {
    let np = p.count_ones() as i32;
    let no = o.count_ones() as i32;
    let empties = 64 - np - no;
    match np.cmp(&no) {
        std::cmp::Ordering::Greater => np - no + empties,
        std::cmp::Ordering::Less => np - no - empties,
        std::cmp::Ordering::Equal => 0,
    }
}

/// The diagonals running towards h8 (`DIAGONALS[0]`) and towards a8 (`DIAGONALS[1]`).
const DIAGONALS: [[u64; 15]; 2] = {
    let mut diagonals = [[0u64; 15]; 2];
    let mut sq = 0;
    while sq < 64 {
        let (r, c) = (sq / 8, sq % 8);
        diagonals[0][c + 7 - r] |= 1u64 << sq;
        diagonals[1][c + r] |= 1u64 << sq;
        sq += 1;
    }
    diagonals
};

/// The squares whose row, column, and two diagonals are full (each as one mask).
#[inline]
fn full_lines(filled: u64) -> [u64; 4] {
    let mut h = filled & (filled >> 4);
    h &= h >> 2;
    h &= h >> 1;
    let rows = (h & 0x0101_0101_0101_0101) * 0xFF;
    let mut v = filled & (filled >> 32);
    v &= v >> 16;
    v &= v >> 8;
    let columns = (v & 0xFF) * 0x0101_0101_0101_0101;
    let mut d9 = 0;
    let mut d7 = 0;
    for (&a, &b) in DIAGONALS[0].iter().zip(&DIAGONALS[1]) {
        if filled & a == a {
            d9 |= a;
        }
        if filled & b == b {
            d7 |= b;
        }
    }
    [rows, columns, d9, d7]
}

/// Discs of `p` that can never flip: along each of the four lines through a disc, the line is
/// full, or a neighbour on it is the board's edge or a stable disc of the same colour.
fn stable_discs(p: u64, o: u64) -> u64 {
    if p & CORNERS == 0 && (p | o) != u64::MAX {
        // Without a corner, a stable disc needs a full line in every direction; rare enough
        // before the board fills that the search does not pay to look.
        return 0;
    }
    let [rows, columns, d9, d7] = full_lines(p | o);
    let mut stable = 0u64;
    loop {
        let h = ((stable << 1) & NOT_A) | ((stable >> 1) & NOT_H) | rows | COLUMNS_A_H;
        let v = (stable << 8) | (stable >> 8) | columns | ROWS_1_8;
        let a = ((stable << 9) & NOT_A) | ((stable >> 9) & NOT_H) | d9 | EDGES;
        let b = ((stable << 7) & NOT_H) | ((stable >> 7) & NOT_A) | d7 | EDGES;
        let next = p & h & v & a & b;
        if next == stable {
            return stable;
        }
        stable = next;
    }
}

/// The squares next to a disc of `b` (any of eight directions; `b`'s own squares only where
/// they are next to another).
#[inline]
const fn neighbours(b: u64) -> u64 {
    let h = ((b << 1) & NOT_A) | ((b >> 1) & NOT_H);
    let hv = b | h;
    h | (hv << 8) | (hv >> 8)
}

/// The empty squares of a position as the endgame solver keeps them from node to node: how many,
/// and their parity (bit `q` set when quadrant `q` holds an odd number of them).
#[derive(Clone, Copy)]
struct Empties {
    count: u32,
    parity: usize,
}

impl Empties {
    #[inline]
    fn of(empty: u64) -> Self {
        let parity = QUADRANTS
            .iter()
            .enumerate()
            .map(|(q, &mask)| (((empty & mask).count_ones() & 1) as usize) << q)
            .sum();
        Empties {
            count: empty.count_ones(),
            parity,
        }
    }

    /// The empties once `sq` is played: one fewer, and its quadrant's parity flipped.
    #[inline(always)]
    fn played(self, sq: u8) -> Self {
        Empties {
            count: self.count - 1,
            parity: self.parity ^ (1 << ((((sq >> 5) & 1) << 1) | ((sq >> 2) & 1))),
        }
    }

    /// The empty squares' quadrants holding an odd number of them (to try first).
    #[inline(always)]
    fn odd_squares(self) -> u64 {
        ODD_SQUARES[self.parity]
    }
}

/// The squares of the odd quadrants, by [`Empties::parity`].
const ODD_SQUARES: [u64; 16] = {
    let mut odd = [0u64; 16];
    let mut parity = 0;
    while parity < 16 {
        let mut q = 0;
        while q < 4 {
            if parity & (1 << q) != 0 {
                odd[parity] |= QUADRANTS[q];
            }
            q += 1;
        }
        parity += 1;
    }
    odd
};

// ---------------------------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------------------------

/// X-squares (b2, g2, b7, g7) and the corner each one sits next to.
const X_SQUARES: [(u64, u64); 4] = [
    (1 << 9, 1 << 0),
    (1 << 14, 1 << 7),
    (1 << 49, 1 << 56),
    (1 << 54, 1 << 63),
];

/// C-squares (the edge squares next to a corner) and their corner.
const C_SQUARES: [(u64, u64); 4] = [
    ((1 << 1) | (1 << 8), 1 << 0),
    ((1 << 6) | (1 << 15), 1 << 7),
    ((1 << 48) | (1 << 57), 1 << 56),
    ((1 << 55) | (1 << 62), 1 << 63),
];

/// The static value of a position for `p`, in [`SCALE`] units of final disc difference.
fn evaluate(p: u64, o: u64) -> i32 {
    let mp = moves(p, o);
    let mo = moves(o, p);
    if mp | mo == 0 {
        return final_score(p, o) * SCALE;
    }
    let empty = !(p | o);
    let empties = empty.count_ones() as i32;
    // 0 at the start of the game, 60 at its end.
    let phase = 60 - empties;

    let count = |b: u64| b.count_ones() as i32;
    let mobility = count(mp) + count(mp & CORNERS) - count(mo) - count(mo & CORNERS);
    let potential = count(neighbours(o) & empty) - count(neighbours(p) & empty);
    let corners = count(p & CORNERS) - count(o & CORNERS);
    let mut near_corners = 0;
    for &(x, corner) in &X_SQUARES {
        if corner & empty != 0 {
            near_corners += 3 * (count(p & x) - count(o & x));
        }
    }
    for &(c, corner) in &C_SQUARES {
        if corner & empty != 0 {
            near_corners += count(p & c) - count(o & c);
        }
    }
    let stable = count(stable_discs(p, o)) - count(stable_discs(o, p));
    let discs = count(p) - count(o);
    // The side to move gets the last move of the game when the number of empties is odd.
    let parity = if empties % 2 == 1 { 1 } else { -1 };

    let score = mobility * (160 - phase) + potential * (50 - phase / 2) + corners * 700
        - near_corners * 120
        + stable * 180
        + discs * (phase - 35).max(0) * 4
        + parity * phase * 2;
    score.clamp(-63 * SCALE, 63 * SCALE)
}

// ---------------------------------------------------------------------------------------------
// Transposition table
// ---------------------------------------------------------------------------------------------

const NO_MOVE: u8 = 64;

/// One remembered position: its two boards, bounds on its value, the depth they hold for (or the
/// empties of an exact solve) and the best move found.
#[derive(Clone, Copy, Debug)]
struct Entry {
    p: u64,
    o: u64,
    lower: i16,
    upper: i16,
    /// Midgame: the search depth; exact entries: the number of empties (the work behind them).
    draft: u8,
    /// Bounds in whole discs from the exact solver, rather than midgame [`SCALE`] units.
    exact: bool,
    mv: u8,
    age: u8,
}

/// A fixed-size table of positions, indexed by a hash of the boards; an entry is replaced when it
/// comes from an earlier search or holds less work than the new one.
///
/// The threads of one analysis share it without a lock: an entry is three words, the two boards
/// each XOR-ed with the data word, and the data (Hyatt and Mann's lockless hashing). Words
/// written by two threads at once may mix, and a mixed entry does not verify: it reads as empty.
///
/// A slot is aligned to 32 bytes (padded to four words), so that no entry straddles two cache
/// lines: a probe is at most one trip to memory. For a power-of-two size in bytes this holds as
/// many entries as three-word slots would (the count is a power of two either way).
struct Table {
    entries: Vec<Slot>,
    mask: usize,
}

#[derive(Default)]
#[repr(align(32))]
struct Slot([AtomicU64; 3]);

impl Entry {
    fn pack(&self) -> u64 {
        u64::from(self.lower as u16)
            | u64::from(self.upper as u16) << 16
            | u64::from(self.draft) << 32
            | u64::from(self.exact) << 40
            | u64::from(self.mv) << 48
            | u64::from(self.age) << 56
    }

    fn unpack(p: u64, o: u64, data: u64) -> Entry {
        Entry {
            p,
            o,
            lower: data as u16 as i16,
            upper: (data >> 16) as u16 as i16,
            draft: (data >> 32) as u8,
            exact: (data >> 40) & 1 != 0,
            mv: (data >> 48) as u8,
            age: (data >> 56) as u8,
        }
    }
}

impl Table {
    fn new(bytes: usize) -> Table {
        let wanted = (bytes / std::mem::size_of::<Slot>()).max(1);
        // The largest power of two that fits (so that indexing is a mask).
        let len = 1usize << (usize::BITS - 1 - wanted.leading_zeros());
        Table {
            entries: arch::table(len, Slot::default),
            mask: len - 1,
        }
    }

    #[inline]
    fn index(&self, p: u64, o: u64) -> usize {
        let h = p.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ o.rotate_left(29).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        ((h ^ (h >> 29)) as usize) & self.mask
    }

    /// The entry in slot `i`, whatever position it holds (an empty slot holds the empty board).
    #[inline]
    fn read(&self, i: usize) -> Entry {
        let [kp, ko, data] = &self.entries[i].0;
        let data = data.load(Ordering::Relaxed);
        Entry::unpack(
            kp.load(Ordering::Relaxed) ^ data,
            ko.load(Ordering::Relaxed) ^ data,
            data,
        )
    }

    /// Brings the slot of (`p`, `o`) into the cache ahead of a probe or a store.
    #[inline]
    fn prefetch(&self, p: u64, o: u64) {
        arch::prefetch(&self.entries[self.index(p, o)]);
    }

    #[inline]
    fn probe(&self, p: u64, o: u64) -> Option<Entry> {
        let e = self.read(self.index(p, o));
        (e.p == p && e.o == o && (p | o) != 0).then_some(e)
    }

    #[inline]
    fn write(&self, i: usize, e: &Entry) {
        let data = e.pack();
        let [kp, ko, d] = &self.entries[i].0;
        kp.store(e.p ^ data, Ordering::Relaxed);
        ko.store(e.o ^ data, Ordering::Relaxed);
        d.store(data, Ordering::Relaxed);
    }

    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn store(
        &self,
        age: u8,
        p: u64,
        o: u64,
        lower: i32,
        upper: i32,
        draft: u8,
        exact: bool,
        mv: u8,
    ) {
        let i = self.index(p, o);
        let mut e = self.read(i);
        if e.p == p && e.o == o && e.exact == exact && e.draft == draft {
            // The same search again: both sets of bounds hold, keep the tighter.
            e.lower = e.lower.max(lower as i16);
            e.upper = e.upper.min(upper as i16);
            e.age = age;
            if mv != NO_MOVE {
                e.mv = mv;
            }
            self.write(i, &e);
            return;
        }
        if e.age != age || draft >= e.draft || (exact && !e.exact) {
            self.write(
                i,
                &Entry {
                    p,
                    o,
                    lower: lower as i16,
                    upper: upper as i16,
                    draft,
                    exact,
                    mv,
                    age,
                },
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------------------------

/// A Reversi analyser: owns its transposition table, so that consecutive analyses of one game
/// share what they learned. Build it once per match (or per worker) and reuse it.
pub struct Engine {
    table: Table,
    /// The number of the current analysis, written into the entries it stores: older ones give
    /// way first.
    age: u8,
}

impl Engine {
    /// The table size [`choose`] uses at its strongest level.
    pub const DEFAULT_TABLE_BYTES: usize = 16 << 20;

    /// An engine whose transposition table takes at most `table_bytes` bytes (rounded down to a
    /// power-of-two number of entries, at least one).
    pub fn new(table_bytes: usize) -> Engine {
        Engine {
            table: Table::new(table_bytes),
            age: 0,
        }
    }

    /// The value of `pos` for the side to move and its best moves.
    ///
    /// With at most [`EXACT_MAX_EMPTIES`] empties, with any number under
    /// [`Limits::to_the_end`] (after a short midgame deepening that orders the root moves), or
    /// once the midgame search has reached the end of the game within the budget, the endgame
    /// solver proves the score and lists every move that reaches it. When the node budget or
    /// the stop flag ends the search first, the answer is the deepest completed midgame
    /// estimate, `exact: false`, with one best move (a one-ply
    /// estimate is always completed, so there is always a move). A side that must pass gets the
    /// negated score of the position after the pass and no moves; a finished game its final
    /// score. Without a node budget a midgame position runs to the end of the game: callers
    /// give one.
    ///
    /// With `limits.threads` above one, the exact solve runs on that many threads sharing the
    /// table ([`Search::solve_root`]); the nodes are every thread's. An exact verdict is the
    /// same whatever the threads.
    pub fn analyse(&mut self, pos: &Reversi, limits: &Limits) -> Verdict<Square> {
        let (p, o) = pos.boards();
        self.age = self.age.wrapping_add(1);
        if moves(p, o) == 0 {
            if moves(o, p) == 0 {
                return Verdict {
                    score: final_score(p, o),
                    best_moves: Vec::new(),
                    exact: true,
                    nodes: 0,
                };
            }
            let after = self.analyse_moving(o, p, limits);
            return Verdict {
                score: -after.score,
                best_moves: Vec::new(),
                ..after
            };
        }
        self.analyse_moving(p, o, limits)
    }

    /// [`Engine::analyse`] for a side that has a move.
    fn analyse_moving(&self, p: u64, o: u64, limits: &Limits) -> Verdict<Square> {
        let mut search = Search::new(&self.table, self.age, limits);
        // A job may solve whatever the empties (a board has at most 60).
        let exact_empties = if limits.to_the_end {
            64
        } else {
            EXACT_MAX_EMPTIES
        };
        let verdict = search.analyse(p, o, u32::MAX, exact_empties);
        Verdict {
            nodes: search.nodes,
            ..verdict
        }
    }
}

/// What the threads of a parallel exact solve share at the root ([`Search::solve_root`]).
struct Root<'r> {
    p: u64,
    o: u64,
    order: &'r [RootMove],
    /// The next root move to take (the first is solved before the others are shared).
    next: AtomicUsize,
    /// The best exact value found so far: a move is first tested against it.
    best: AtomicI32,
    /// Set when the search is given up: everybody stops.
    abort: AtomicBool,
    /// The root moves found to reach at least the best of their time, with their exact value.
    reaching: Mutex<Vec<(u8, i32)>>,
}

/// A node of the deep solver once opened: its moves and its window.
struct Node {
    list: MoveList,
    alpha: i32,
    beta: i32,
    /// The window's lower end as opened, for the bounds stored.
    alpha0: i32,
    use_table: bool,
}

impl Node {
    /// A node not opened yet: no moves, the window to be set by [`Search::open_deep`].
    #[inline]
    fn new() -> Node {
        Node {
            list: MoveList::new(),
            alpha: 0,
            beta: 0,
            alpha0: 0,
            use_table: false,
        }
    }
}

/// What the threads of one [`Search::split`] share.
struct Split<'p> {
    /// The next move to take.
    next: AtomicUsize,
    /// The best value so far (at least the node's alpha): the null window of the next test.
    alpha: AtomicI32,
    /// The best value and move so far.
    best: Mutex<(i32, u8)>,
    /// Set once a move reached beta (or a thread had to stop): the others leave.
    cut: AtomicBool,
    /// The split this one's node lies under, if any: its cut ends this one too.
    parent: Option<&'p Split<'p>>,
}

impl Split<'_> {
    /// Whether this split or one it lies under was cut.
    fn is_cut(&self) -> bool {
        self.cut.load(Ordering::Relaxed) || self.parent.is_some_and(Split::is_cut)
    }
}

/// Takes up to `wanted` of the `spare` threads; how many it got. The count may fall below zero
/// for a moment (a thread that lent itself while it waited takes itself back).
fn take_spare(spare: &AtomicIsize, wanted: usize) -> usize {
    let mut free = spare.load(Ordering::Acquire);
    loop {
        let take = free.min(wanted as isize);
        if take <= 0 {
            return 0;
        }
        match spare.compare_exchange(free, free - take, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return take as usize,
            Err(now) => free = now,
        }
    }
}

/// One search: the table, the budget and the counters.
struct Search<'a> {
    table: &'a Table,
    /// The age this search stores its entries with.
    age: u8,
    /// A second stop flag: the threads of a parallel solve stop when it is given up.
    also_stop: Option<&'a AtomicBool>,
    /// The split this search works for, if any: it stops when that split is cut.
    split: Option<&'a Split<'a>>,
    /// The threads of a parallel solve not searching at the moment: a node of the exact solver
    /// with enough empties takes them once its first move is searched ([`Search::split`]).
    /// `None`: one thread.
    spare: Option<&'a AtomicIsize>,
    /// The nodes every thread of a parallel solve may still visit, together: each takes what
    /// it visited from it as it reads the stop flag.
    pool: Option<&'a AtomicI64>,
    limits: Limits<'a>,
    max_nodes: u64,
    nodes: u64,
    next_check: u64,
    /// The node count last reported to the limits' progress.
    reported: u64,
    aborted: bool,
    /// Whether the exact solver runs its copy for the x86-64-v3 instructions ([`arch::has_v3`]).
    v3: bool,
}

/// How often (in nodes) the stop flag is read.
const CHECK_EVERY: u64 = 4096;

/// A root move with the value found for it.
#[derive(Clone, Copy, Debug)]
struct RootMove {
    sq: u8,
    score: i32,
}

impl<'a> Search<'a> {
    fn new(table: &'a Table, age: u8, limits: &Limits<'a>) -> Search<'a> {
        Search {
            table,
            age,
            also_stop: None,
            split: None,
            spare: None,
            pool: None,
            limits: *limits,
            max_nodes: limits.max_nodes,
            nodes: 0,
            next_check: 0,
            reported: 0,
            aborted: false,
            v3: arch::has_v3(),
        }
    }

    /// Counts a node; true once the search must unwind (budget spent or stop asked).
    #[inline]
    fn out_of_budget(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes >= self.next_check {
            let visited = self.nodes - self.reported;
            self.reported = self.nodes;
            if self.nodes >= self.max_nodes
                || self.limits.checkpoint(visited)
                || self.also_stop.is_some_and(|s| s.load(Ordering::Relaxed))
                || self.split.is_some_and(Split::is_cut)
                || self.pool.is_some_and(|pool| {
                    let visited = visited as i64;
                    pool.fetch_sub(visited, Ordering::Relaxed) <= visited
                })
            {
                self.aborted = true;
            }
            self.next_check = self.nodes.saturating_add(CHECK_EVERY).min(self.max_nodes);
        }
        self.aborted
    }

    /// The analysis of a position where `p` has a move: midgame iterative deepening up to
    /// `max_depth`, then an exact solve when the empties allow (`exact_empties`) or the midgame
    /// search reached the end of the game.
    fn analyse(&mut self, p: u64, o: u64, max_depth: u32, exact_empties: u32) -> Verdict<Square> {
        let empties = (!(p | o)).count_ones();
        let eligible = empties <= exact_empties;
        let depth_cap = if eligible {
            ((empties as i32 - 8) / 2).clamp(1, 8) as u32
        } else {
            max_depth
        }
        .min(empties.saturating_sub(1))
        .min(max_depth)
        .max(1);
        let (root, reached) = self.iterate(p, o, depth_cap);
        let estimate = Verdict {
            score: ((root[0].score as f64) / f64::from(SCALE)).round() as i32,
            best_moves: vec![square(root[0].sq)],
            exact: false,
            nodes: 0,
        };
        if !eligible && reached + 1 < empties {
            return estimate;
        }
        match self.solve_root(p, o, &root) {
            Some((score, best)) => Verdict {
                score,
                best_moves: best.into_iter().map(square).collect(),
                exact: true,
                nodes: 0,
            },
            None => estimate,
        }
    }

    /// Iterative deepening from depth 1 to `max_depth` (at least 1, less than the empties): the
    /// root moves sorted best first with their values at the deepest completed depth, and that
    /// depth. Depth 1 always completes.
    fn iterate(&mut self, p: u64, o: u64, max_depth: u32) -> (Vec<RootMove>, u32) {
        let mut root: Vec<RootMove> = squares(moves(p, o))
            .map(|sq| {
                let f = flips(p, o, sq as usize);
                let bit = 1u64 << sq;
                RootMove {
                    sq,
                    score: -evaluate(o ^ f, p ^ f ^ bit),
                }
            })
            .collect();
        self.nodes += root.len() as u64;
        root.sort_by_key(|m| std::cmp::Reverse(m.score));
        let mut reached = 1;
        for depth in 2..=max_depth {
            match self.root_search(p, o, &root, depth as i32) {
                Some(next) => {
                    root = next;
                    reached = depth;
                }
                None => break,
            }
        }
        (root, reached)
    }

    /// One PVS iteration at the root: the best move's exact value at `depth` and the others'
    /// bounds, sorted best first; `None` when the budget ran out.
    fn root_search(
        &mut self,
        p: u64,
        o: u64,
        order: &[RootMove],
        depth: i32,
    ) -> Option<Vec<RootMove>> {
        let mut alpha = -64 * SCALE - 1;
        let beta = 64 * SCALE + 1;
        let mut out = Vec::with_capacity(order.len());
        for (i, m) in order.iter().enumerate() {
            let bit = 1u64 << m.sq;
            let f = flips(p, o, m.sq as usize);
            let (np, no) = (o ^ f, p ^ f ^ bit);
            let mut v;
            if i == 0 {
                v = -self.pvs(np, no, depth - 1, -beta, -alpha, false);
            } else {
                v = -self.pvs(np, no, depth - 1, -alpha - 1, -alpha, false);
                if v > alpha && !self.aborted {
                    v = -self.pvs(np, no, depth - 1, -beta, -alpha, false);
                }
            }
            if self.aborted {
                return None;
            }
            out.push(RootMove { sq: m.sq, score: v });
            alpha = alpha.max(v);
        }
        // Stable: among equal values, the earlier (better ordered) move stays first.
        out.sort_by_key(|m| std::cmp::Reverse(m.score));
        Some(out)
    }

    /// Principal variation search for `p` to `depth` plies, in [`SCALE`] units (fail-soft).
    fn pvs(
        &mut self,
        p: u64,
        o: u64,
        depth: i32,
        mut alpha: i32,
        mut beta: i32,
        passed: bool,
    ) -> i32 {
        if self.out_of_budget() {
            return 0;
        }
        if depth <= 0 {
            return evaluate(p, o);
        }
        let empties = (!(p | o)).count_ones();
        if depth as u32 >= empties {
            // The search reaches the end of the game: solve it.
            let a = alpha.div_euclid(SCALE).clamp(-65, 65);
            let b = (-((-beta).div_euclid(SCALE))).clamp(-65, 65);
            return self.solve(p, o, a, b, passed) * SCALE;
        }
        let mut table_move = NO_MOVE;
        if let Some(e) = self.table.probe(p, o) {
            table_move = e.mv;
            let usable = e.exact || e.draft as i32 >= depth;
            if usable {
                let unit = if e.exact { SCALE } else { 1 };
                let (lower, upper) = (e.lower as i32 * unit, e.upper as i32 * unit);
                if lower >= beta {
                    return lower;
                }
                if upper <= alpha {
                    return upper;
                }
                if lower == upper {
                    return lower;
                }
                alpha = alpha.max(lower);
                beta = beta.min(upper);
            }
        }
        let mp = moves(p, o);
        if mp == 0 {
            if passed {
                return final_score(p, o) * SCALE;
            }
            return -self.pvs(o, p, depth, -beta, -alpha, true);
        }
        let mut list = MoveList::new();
        for sq in squares(mp) {
            let f = flips(p, o, sq as usize);
            let bit = 1u64 << sq;
            let key = if sq == table_move {
                i32::MIN
            } else if depth >= 2 {
                evaluate(o ^ f, p ^ f ^ bit)
            } else {
                0
            };
            list.push(sq, f, key);
        }
        let alpha0 = alpha;
        let mut best = -64 * SCALE - 1;
        let mut best_move = NO_MOVE;
        let mut i = 0;
        while let Some((sq, f)) = list.next_best(i) {
            let bit = 1u64 << sq;
            let (np, no) = (o ^ f, p ^ f ^ bit);
            let mut v;
            if i == 0 {
                v = -self.pvs(np, no, depth - 1, -beta, -alpha, false);
            } else {
                v = -self.pvs(np, no, depth - 1, -alpha - 1, -alpha, false);
                if v > alpha && v < beta && !self.aborted {
                    v = -self.pvs(np, no, depth - 1, -beta, -alpha, false);
                }
            }
            if self.aborted {
                return 0;
            }
            i += 1;
            if v > best {
                best = v;
                best_move = sq;
                if v > alpha {
                    alpha = v;
                    if v >= beta {
                        break;
                    }
                }
            }
        }
        let (lower, upper) = bounds(best, alpha0, beta, -64 * SCALE, 64 * SCALE);
        self.table
            .store(self.age, p, o, lower, upper, depth as u8, false, best_move);
        best
    }

    /// The exact value of the root and every move reaching it, or `None` when the budget ran
    /// out. `order` holds the root moves best first by the midgame estimate.
    fn solve_root(&mut self, p: u64, o: u64, order: &[RootMove]) -> Option<(i32, Vec<u8>)> {
        // The last few empties are solved without a look at the flag: look once first.
        if self.aborted || self.limits.stopped() {
            self.aborted = true;
            return None;
        }
        if self.limits.threads > 1 && order.len() > 1 {
            return self.solve_root_parallel(p, o, order);
        }
        let mut best = -65;
        let mut best_moves = Vec::new();
        for m in order {
            let bit = 1u64 << m.sq;
            let f = flips(p, o, m.sq as usize);
            let (np, no) = (o ^ f, p ^ f ^ bit);
            if best_moves.is_empty() {
                best = -self.solve(np, no, -64, 64, false);
                best_moves.push(m.sq);
            } else {
                // Does this move reach `best` too? A null window at best - 1 answers.
                let at_least = -self.solve(np, no, -best, -best + 1, false);
                if self.aborted {
                    return None;
                }
                if at_least >= best {
                    let v = -self.solve(np, no, -64, -best + 1, false);
                    if self.aborted {
                        return None;
                    }
                    if v > best {
                        best = v;
                        best_moves.clear();
                    }
                    best_moves.push(m.sq);
                }
            }
            if self.aborted {
                return None;
            }
        }
        best_moves.sort_unstable();
        Some((best, best_moves))
    }

    /// [`Search::solve_root`] on `limits.threads` threads sharing the table. The first move is
    /// solved first, the other threads joining in below it (young brothers wait: a node with
    /// enough empties shares its moves once its first is searched, [`Search::split`]); then
    /// every thread takes the next root move from a shared counter and tests it against the
    /// best value so far (a null window, then the exact value if it reaches it), and a thread
    /// with no move left lends itself to the others' nodes. The best moves are those whose
    /// exact value is the final best: a move refuted against a lower best is below the final
    /// one too. Every thread reads the caller's stop flag; together they have what is left of
    /// the node budget once per thread, and none more than once; the first to stop gives up for
    /// all.
    fn solve_root_parallel(
        &mut self,
        p: u64,
        o: u64,
        order: &[RootMove],
    ) -> Option<(i32, Vec<u8>)> {
        let threads = self.limits.threads;
        let root = Root {
            p,
            o,
            order,
            next: AtomicUsize::new(1),
            best: AtomicI32::new(-65),
            abort: AtomicBool::new(false),
            reaching: Mutex::new(Vec::new()),
        };
        let spare = AtomicIsize::new(threads as isize - 1);
        let pool = self
            .max_nodes
            .saturating_sub(self.nodes)
            .saturating_mul(threads as u64)
            .min(i64::MAX as u64);
        let pool = AtomicI64::new(pool as i64);
        let left = |nodes: u64| Limits {
            max_nodes: self.max_nodes.saturating_sub(nodes),
            threads,
            ..self.limits
        };
        let mut first = Search::new(self.table, self.age, &left(self.nodes));
        first.spare = Some(&spare);
        first.pool = Some(&pool);
        let (np, no) = after(p, o, order[0].sq);
        let value = -first.solve(np, no, -64, 64, false);
        self.nodes += first.nodes;
        self.reported += first.reported;
        if first.aborted {
            self.aborted = true;
            return None;
        }
        root.best.store(value, Ordering::Release);
        root.reaching
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((order[0].sq, value));
        // Every thread takes root moves now: none is spare until it runs out of them.
        spare.fetch_sub(threads as isize - 1, Ordering::AcqRel);
        let limits = left(self.nodes);
        let (table, age, shared, spare, pool) = (self.table, self.age, &root, &spare, &pool);
        let work = move || {
            let mut worker = Search::new(table, age, &limits);
            worker.also_stop = Some(&shared.abort);
            worker.spare = Some(spare);
            worker.pool = Some(pool);
            worker.root_moves(shared);
            if worker.aborted {
                shared.abort.store(true, Ordering::Release);
            }
            (worker.nodes, worker.reported)
        };
        let counts: Vec<(u64, u64)> = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
            let mut counts = vec![work()];
            // A helper that panicked (it cannot) would only have lost its nodes.
            counts.extend(helpers.into_iter().map(|h| h.join().unwrap_or((0, 0))));
            counts
        });
        for (nodes, reported) in counts {
            self.nodes += nodes;
            self.reported += reported;
        }
        if root.abort.load(Ordering::Acquire) {
            self.aborted = true;
            return None;
        }
        let reaching = root
            .reaching
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        let best = reaching.iter().map(|r| r.1).max()?;
        let mut best_moves: Vec<u8> = reaching
            .iter()
            .filter(|r| r.1 == best)
            .map(|r| r.0)
            .collect();
        best_moves.sort_unstable();
        Some((best, best_moves))
    }

    /// Takes root moves from `root` until there are none left (or the search is given up),
    /// testing each against the best value so far; then lends its thread to the others.
    fn root_moves(&mut self, root: &Root) {
        while let Some(m) = root.order.get(root.next.fetch_add(1, Ordering::AcqRel)) {
            let (np, no) = after(root.p, root.o, m.sq);
            let best = root.best.load(Ordering::Acquire);
            // Does this move reach `best`? A null window at best - 1 answers.
            let at_least = -self.solve(np, no, -best, -best + 1, false);
            if self.aborted {
                return;
            }
            if at_least >= best {
                let v = -self.solve(np, no, -64, -best + 1, false);
                if self.aborted {
                    return;
                }
                root.best.fetch_max(v, Ordering::AcqRel);
                root.reaching
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((m.sq, v));
            }
        }
        if let Some(spare) = self.spare {
            spare.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// The exact value for `p` (fail-soft within `alpha`..`beta`). `passed`: the opponent has
    /// just passed, so if `p` cannot move either the game is over.
    #[inline]
    fn solve(&mut self, p: u64, o: u64, alpha: i32, beta: i32, passed: bool) -> i32 {
        let e = Empties::of(!(p | o));
        if self.v3 {
            self.solve_at::<true>(p, o, alpha, beta, passed, e)
        } else {
            self.solve_at::<false>(p, o, alpha, beta, passed, e)
        }
    }

    /// [`Self::solve`] knowing the [`Empties`], in the copy `V3` says.
    #[inline(always)]
    fn solve_at<const V3: bool>(
        &mut self,
        p: u64,
        o: u64,
        alpha: i32,
        beta: i32,
        passed: bool,
        e: Empties,
    ) -> i32 {
        if e.count <= SHALLOW_EMPTIES {
            self.solve_shallow::<V3>(p, o, alpha, beta, passed, e)
        } else {
            self.solve_deep::<V3>(p, o, alpha, beta, passed, e)
        }
    }

    arch::two_copies! {
        /// The solver above [`SHALLOW_EMPTIES`]: fastest-first ordering, table, stability cutoff;
        /// on several threads, a node with [`SPLIT_MIN_EMPTIES`] or more shares its moves after
        /// the first with the threads to spare ([`Self::split`]).
        fn solve_deep, solve_deep_base, solve_deep_v3 => solve_deep_body(
            &mut self, p: u64, o: u64, alpha: i32, beta: i32, passed: bool, empties: Empties,
        ) -> i32;
    }

    #[inline(always)]
    fn solve_deep_body<const V3: bool>(
        &mut self,
        p: u64,
        o: u64,
        alpha: i32,
        beta: i32,
        passed: bool,
        empties: Empties,
    ) -> i32 {
        // Opened in place: the node (its move list) is never moved.
        let mut node = Node::new();
        if let Some(v) = self.open_deep::<V3>(&mut node, p, o, alpha, beta, passed, empties) {
            return v;
        }
        // Young brothers wait: with threads to spare, the first move alone, then the others
        // shared if any thread is free by then.
        let spare = self
            .spare
            .filter(|_| empties.count >= SPLIT_MIN_EMPTIES && node.list.len() > 1);
        let first_only = if spare.is_some() { 1 } else { MAX_MOVES };
        let (mut best, mut best_move) =
            self.search_moves::<V3>(p, o, &mut node, empties, 0, first_only, -65, NO_MOVE);
        if let Some(spare) = spare
            && !self.aborted
            && best < node.beta
        {
            (best, best_move) = match take_spare(spare, self.limits.threads - 1) {
                0 => {
                    self.search_moves::<V3>(p, o, &mut node, empties, 1, MAX_MOVES, best, best_move)
                }
                taken => {
                    self.split::<V3>(p, o, &mut node, empties, (best, best_move), taken, spare)
                }
            };
        }
        if self.aborted {
            return 0;
        }
        self.store_deep(p, o, &node, empties, best, best_move);
        best
    }

    /// What a node of the deep solver settles before its moves: the budget, the stability
    /// cutoff, the table (and the children's entries: an enhanced transposition cutoff), a
    /// pass: its value. Otherwise `None`, with `node` holding its window and its moves, ordered.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn open_deep<const V3: bool>(
        &mut self,
        node: &mut Node,
        p: u64,
        o: u64,
        mut alpha: i32,
        mut beta: i32,
        passed: bool,
        empties: Empties,
    ) -> Option<i32> {
        if self.out_of_budget() {
            return Some(0);
        }
        let empty = !(p | o);
        // Stability cutoff: `p` can never own the opponent's stable discs.
        if alpha >= stability_threshold(empties.count) {
            let max = 64 - 2 * stable_discs(o, p).count_ones() as i32;
            if max <= alpha {
                return Some(max);
            }
            beta = beta.min(max);
        }
        let use_table = empties.count >= TABLE_MIN_EMPTIES;
        let mut table_move = NO_MOVE;
        if use_table && let Some(e) = self.table.probe(p, o) {
            table_move = e.mv;
            if e.exact {
                let (lower, upper) = (e.lower as i32, e.upper as i32);
                if lower >= beta {
                    return Some(lower);
                }
                if upper <= alpha {
                    return Some(upper);
                }
                if lower == upper {
                    return Some(lower);
                }
                alpha = alpha.max(lower);
                beta = beta.min(upper);
            }
        }
        let mp = moves(p, o);
        if mp == 0 {
            if passed {
                return Some(final_score(p, o));
            }
            return Some(-self.solve_deep::<V3>(o, p, -beta, -alpha, true, empties));
        }
        let odd = empties.odd_squares();
        let exposed = neighbours(empty);
        let etc = empties.count >= ETC_MIN_EMPTIES;
        // The children that probe the table, and are not probed here: their slots are fetched
        // while the moves are ordered, so that their probes do not wait for memory.
        let prefetch = !etc && empties.count > TABLE_MIN_EMPTIES;
        let list = &mut node.list;
        for sq in squares(mp) {
            let f = flips(p, o, sq as usize);
            let bit = 1u64 << sq;
            let (np, no) = (o ^ f, p ^ f ^ bit);
            if prefetch {
                self.table.prefetch(np, no);
            }
            if etc
                && let Some(c) = self.table.probe(np, no)
                && c.exact
                && -(c.upper as i32) >= beta
            {
                return Some(-(c.upper as i32));
            }
            let key = if sq == table_move {
                i32::MIN
            } else {
                let replies = moves(np, no);
                let mobility =
                    (replies.count_ones() + (replies & CORNERS).count_ones()) as i32 * 16;
                if empties.count >= SEARCHED_ORDER_EMPTIES {
                    // Far from the end, the opponent's prospects as a short search sees them.
                    let full = 64 * SCALE + 1;
                    mobility + self.pvs(np, no, SEARCHED_ORDER_DEPTH, -full, full, false) / 16
                } else if empties.count >= EVALUATED_ORDER_EMPTIES {
                    // Nearer, as the evaluation sees them.
                    mobility + evaluate(np, no) / 16
                } else {
                    let mut key = mobility;
                    if bit & odd != 0 {
                        key -= 8;
                    }
                    if bit & CORNERS != 0 {
                        key -= 12;
                    }
                    // Fewer of our discs exposed next to empties: a quieter move.
                    key + (exposed & (p ^ f ^ bit)).count_ones() as i32 / 4
                }
            };
            list.push(sq, f, key);
        }
        if self.aborted {
            return Some(0);
        }
        node.alpha = alpha;
        node.beta = beta;
        node.alpha0 = alpha;
        node.use_table = use_table;
        None
    }

    /// Searches the moves of an opened node from the `from`-th to before the `to`-th (best
    /// first, a null window after the first), given the best so far: the best value and move.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn search_moves<const V3: bool>(
        &mut self,
        p: u64,
        o: u64,
        node: &mut Node,
        empties: Empties,
        from: usize,
        to: usize,
        mut best: i32,
        mut best_move: u8,
    ) -> (i32, u8) {
        let beta = node.beta;
        let mut i = from;
        while i < to
            && let Some((sq, f)) = node.list.next_best(i)
        {
            let bit = 1u64 << sq;
            let (np, no) = (o ^ f, p ^ f ^ bit);
            let e = empties.played(sq);
            let alpha = node.alpha;
            let v = if i == 0 {
                -self.solve_at::<V3>(np, no, -beta, -alpha, false, e)
            } else {
                self.later_move::<V3>(np, no, e, alpha, beta)
            };
            if self.aborted {
                return (0, NO_MOVE);
            }
            i += 1;
            if v > best {
                best = v;
                best_move = sq;
                if v > alpha {
                    node.alpha = v;
                    if v >= beta {
                        break;
                    }
                }
            }
        }
        (best, best_move)
    }

    /// The value (fail-soft) of a move after a node's first, the child (`np`, `no`, `e`) it
    /// leads to: a null window at `alpha` says whether it beats the best so far, and only then
    /// the full window gives its value.
    #[inline(always)]
    fn later_move<const V3: bool>(
        &mut self,
        np: u64,
        no: u64,
        e: Empties,
        alpha: i32,
        beta: i32,
    ) -> i32 {
        let v = -self.solve_at::<V3>(np, no, -alpha - 1, -alpha, false, e);
        if v > alpha && v < beta && !self.aborted {
            return -self.solve_at::<V3>(np, no, -beta, -alpha, false, e);
        }
        v
    }

    /// Stores what a searched node proved.
    #[inline(always)]
    fn store_deep(&self, p: u64, o: u64, node: &Node, empties: Empties, best: i32, mv: u8) {
        if node.use_table {
            let (lower, upper) = bounds(best, node.alpha0, node.beta, -64, 64);
            self.table
                .store(self.age, p, o, lower, upper, empties.count as u8, true, mv);
        }
    }

    /// The moves of `node` after the first, shared among this thread and `helpers` more (taken
    /// from `spare`, and given back by each as it runs out of moves): each takes the next
    /// move, tests it with a null window at the best so far, and searches it with the full
    /// window if it does better; a move that reaches beta stops the others.
    #[allow(clippy::too_many_arguments)]
    fn split<const V3: bool>(
        &mut self,
        p: u64,
        o: u64,
        node: &mut Node,
        empties: Empties,
        (best, best_move): (i32, u8),
        helpers: usize,
        spare: &AtomicIsize,
    ) -> (i32, u8) {
        // Sorted once, then shared as it is.
        for i in 1..node.list.len() {
            node.list.next_best(i);
        }
        let shared = Split {
            next: AtomicUsize::new(1),
            alpha: AtomicI32::new(node.alpha),
            best: Mutex::new((best, best_move)),
            cut: AtomicBool::new(false),
            parent: self.split,
        };
        let (list, beta) = (&node.list, node.beta);
        let budget = self.max_nodes.saturating_sub(self.nodes);
        let limits = Limits {
            max_nodes: budget,
            ..self.limits
        };
        let (table, age, also_stop, pool) = (self.table, self.age, self.also_stop, self.pool);
        let work = |shared: &Split| {
            let mut worker = Search::new(table, age, &limits);
            worker.also_stop = also_stop;
            worker.pool = pool;
            worker.split = Some(shared);
            worker.spare = Some(spare);
            worker.split_moves::<V3>(p, o, list, beta, empties, shared);
            // Stopped by its budget or the caller, not by a cut of this split: all stop.
            let failed = worker.aborted && !shared.cut.load(Ordering::Acquire);
            if failed {
                shared.cut.store(true, Ordering::Release);
            }
            // Out of moves: this thread is spare until the others are done.
            spare.fetch_add(1, Ordering::AcqRel);
            (worker.nodes, worker.reported, failed)
        };
        let results: Vec<(u64, u64, bool)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..helpers)
                .map(|_| scope.spawn(|| work(&shared)))
                .collect();
            let mut results = vec![work(&shared)];
            // A helper that panicked (it cannot) would only have lost its nodes.
            results.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or((0, 0, true))),
            );
            results
        });
        // This thread searches again; the helpers gave their places back.
        spare.fetch_sub(1, Ordering::AcqRel);
        for (nodes, reported, failed) in results {
            self.nodes += nodes;
            self.reported += reported;
            self.aborted |= failed;
        }
        shared.best.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// One thread's share of a [`Self::split`]: takes moves until there are none left or one
    /// reached `beta`.
    fn split_moves<const V3: bool>(
        &mut self,
        p: u64,
        o: u64,
        list: &MoveList,
        beta: i32,
        empties: Empties,
        shared: &Split,
    ) {
        while let Some(&(sq, f, _)) = list.items.get(shared.next.fetch_add(1, Ordering::AcqRel)) {
            if shared.is_cut() {
                return;
            }
            let (np, no) = (o ^ f, p ^ f ^ (1u64 << sq));
            let e = empties.played(sq);
            let v = self.later_move::<V3>(np, no, e, shared.alpha.load(Ordering::Acquire), beta);
            if self.aborted {
                return;
            }
            let mut best = shared.best.lock().unwrap_or_else(|e| e.into_inner());
            if v > best.0 {
                *best = (v, sq);
                shared.alpha.fetch_max(v, Ordering::AcqRel);
                if v >= beta {
                    shared.cut.store(true, Ordering::Release);
                    return;
                }
            }
        }
    }

    arch::two_copies! {
        /// The solver for the last few empties: no move generation, no table; the empty squares
        /// of odd regions first.
        fn solve_shallow, solve_shallow_base, solve_shallow_v3 => solve_shallow_body(
            &mut self, p: u64, o: u64, alpha: i32, beta: i32, passed: bool, empties: Empties,
        ) -> i32;
    }

    #[inline(always)]
    fn solve_shallow_body<const V3: bool>(
        &mut self,
        p: u64,
        o: u64,
        mut alpha: i32,
        beta: i32,
        passed: bool,
        empties: Empties,
    ) -> i32 {
        self.nodes += 1;
        let empty = !(p | o);
        match empties.count {
            1 => return solve_last(p, empty.trailing_zeros() as usize),
            2 => return self.solve_two::<V3>(p, o, alpha, beta, passed),
            _ => {}
        }
        let odd = empties.odd_squares();
        let mut best = -65;
        for sq in squares(empty & odd).chain(squares(empty & !odd)) {
            if NEIGHBOURS[sq as usize] & o == 0 {
                continue;
            }
            let f = flips(p, o, sq as usize);
            if f == 0 {
                continue;
            }
            let bit = 1u64 << sq;
            let v = -self.solve_shallow::<V3>(
                o ^ f,
                p ^ f ^ bit,
                -beta,
                -alpha,
                false,
                empties.played(sq),
            );
            if v > best {
                best = v;
                if v > alpha {
                    alpha = v;
                    if v >= beta {
                        return v;
                    }
                }
            }
        }
        if best == -65 {
            // No move for `p`.
            if passed {
                return final_score(p, o);
            }
            return -self.solve_shallow::<V3>(o, p, -beta, -alpha, true, empties);
        }
        best
    }

    arch::two_copies! {
        /// [`Self::solve_shallow`] with two empties: each move leads straight to the last one.
        /// Both squares have the same parity, so the lower is tried first; a node is counted for
        /// every position, as the general walk does.
        fn solve_two, solve_two_base, solve_two_v3 => solve_two_body(
            &mut self, p: u64, o: u64, alpha: i32, beta: i32, passed: bool,
        ) -> i32;
    }

    #[inline(always)]
    fn solve_two_body<const V3: bool>(
        &mut self,
        p: u64,
        o: u64,
        alpha: i32,
        beta: i32,
        passed: bool,
    ) -> i32 {
        let empty = !(p | o);
        let a = empty.trailing_zeros() as usize;
        let b = 63 - empty.leading_zeros() as usize;
        let mut best = -65;
        for (x, last) in [(a, b), (b, a)] {
            if NEIGHBOURS[x] & o == 0 {
                continue;
            }
            let f = flips(p, o, x);
            if f == 0 {
                continue;
            }
            self.nodes += 1;
            let v = -solve_last(o ^ f, last);
            if v > best {
                best = v;
                if v >= beta {
                    return v;
                }
            }
        }
        if best > -65 {
            return best;
        }
        if passed {
            return final_score(p, o);
        }
        self.nodes += 1;
        -self.solve_two::<V3>(o, p, -beta, -alpha, true)
    }
}

/// The boards after `p` plays `sq`, from the opponent's side.
#[inline]
fn after(p: u64, o: u64, sq: u8) -> (u64, u64) {
    let f = flips(p, o, sq as usize);
    (o ^ f, p ^ f ^ (1u64 << sq))
}

/// The final score for `p` with one empty square `sq` left: `p` plays it if it can, else the
/// opponent does if it can, else the game ends with the square empty.
#[inline]
fn solve_last(p: u64, sq: usize) -> i32 {
    let np = p.count_ones() as i32;
    let f = last_flip_count(p, sq);
    if f > 0 {
        return 2 * (np + f + 1) - 64;
    }
    let f = last_flip_count(!p & !(1u64 << sq), sq);
    if f > 0 {
        return 2 * (np - f) - 64;
    }
    if np >= 32 { 2 * np - 62 } else { 2 * np - 64 }
}

/// The squares next to each square (any of eight directions): [`neighbours`] of one square.
const NEIGHBOURS: [u64; 64] = {
    let mut n = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        n[sq] = neighbours(1 << sq);
        sq += 1;
    }
    n
};

/// `LINE_FLIPS[x][line]`: the discs `p` flips on a full line of eight by playing at `x`, `line`
/// holding `p`'s squares (bit `x` ignored, every other square the opponent's). A line shorter
/// than eight (a diagonal) reads its off-board squares as the opponent's, which is harmless:
/// they lie beyond the on-board ones, so no run of the opponent's discs ends in `p` through them.
const LINE_FLIPS: [[u8; 256]; 8] = {
    let mut t = [[0u8; 256]; 8];
    let mut x = 0;
    while x < 8 {
        let mut line = 0;
        while line < 256 {
            let mut n = 0;
            let mut i = x as i32 + 1;
            while i < 8 && line & (1 << i) == 0 {
                i += 1;
            }
            if i < 8 {
                n += i - x as i32 - 1;
            }
            let mut i = x as i32 - 1;
            while i >= 0 && line & (1 << i) == 0 {
                i -= 1;
            }
            if i >= 0 {
                n += x as i32 - i - 1;
            }
            t[x][line] = n as u8;
            line += 1;
        }
        x += 1;
    }
    t
};

/// The diagonal through each square towards h8 and towards a8.
const SQUARE_DIAGONALS: [(u64, u64); 64] = {
    let mut d = [(0u64, 0u64); 64];
    let mut sq = 0;
    while sq < 64 {
        let (r, c) = (sq / 8, sq % 8);
        d[sq] = (DIAGONALS[0][c + 7 - r], DIAGONALS[1][c + r]);
        sq += 1;
    }
    d
};

/// How many discs `p` flips by playing `sq` on a board whose every other square is filled (the
/// last move of a game): the flips of the row, column and both diagonals, each read as one byte.
#[inline(always)]
fn last_flip_count(p: u64, sq: usize) -> i32 {
    let sq = sq & 63;
    let (r, c) = (sq >> 3, sq & 7);
    let row = (p >> (r * 8)) as u8;
    let column =
        ((((p >> c) & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080)) >> 56) as u8;
    let (d9, d7) = SQUARE_DIAGONALS[sq];
    let diag9 = ((p & d9).wrapping_mul(0x0101_0101_0101_0101) >> 56) as u8;
    let diag7 = ((p & d7).wrapping_mul(0x0101_0101_0101_0101) >> 56) as u8;
    i32::from(LINE_FLIPS[c][usize::from(row)])
        + i32::from(LINE_FLIPS[r][usize::from(column)])
        + i32::from(LINE_FLIPS[c][usize::from(diag9)])
        + i32::from(LINE_FLIPS[c][usize::from(diag7)])
}

/// The alpha from which the stability cutoff is worth computing, by empties: with many empties
/// few discs are stable, so only a high alpha can be cut (after Edax's thresholds).
#[inline]
fn stability_threshold(empties: u32) -> i32 {
    (2 * empties as i32 - 2).min(64)
}

/// The table bounds of a fail-soft result `best` searched with window `alpha`..`beta`.
#[inline]
fn bounds(best: i32, alpha: i32, beta: i32, min: i32, max: i32) -> (i32, i32) {
    if best <= alpha {
        (min, best)
    } else if best >= beta {
        (best, max)
    } else {
        (best, best)
    }
}

/// The squares of a mask, a1 first.
#[inline]
fn squares(mut mask: u64) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let sq = mask.trailing_zeros() as u8;
        mask &= mask - 1;
        Some(sq)
    })
}

fn square(sq: u8) -> Square {
    Square::new(sq).unwrap_or_else(|| unreachable!("bit indexes are below 64"))
}

/// Room for every move of any board: the four centre squares are never empty, so no position
/// has more than 60 legal moves (33 is the most known in a reachable one).
const MAX_MOVES: usize = 60;

/// The moves of a node with their flips and ordering keys (lower first), picked lazily: a cut
/// after the first move or two leaves the rest unsorted. Up to 32 moves live on the stack, left
/// uninitialised until pushed (a node of the solver would otherwise spend more zeroing its list
/// than probing the table); a rare position with more spills to the heap.
struct MoveList {
    items: SmallVec<[(u8, u64, i32); 32]>,
}

impl MoveList {
    #[inline]
    fn new() -> MoveList {
        MoveList {
            items: SmallVec::new(),
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.items.len()
    }

    #[inline]
    fn push(&mut self, sq: u8, flips: u64, key: i32) {
        self.items.push((sq, flips, key));
    }

    /// The move with the lowest key among those from position `i` on, swapped into `i`.
    #[inline]
    fn next_best(&mut self, i: usize) -> Option<(u8, u64)> {
        let items = self.items.get_mut(i..).filter(|rest| !rest.is_empty())?;
        let mut best = 0;
        for j in 1..items.len() {
            if items[j].2 < items[best].2 {
                best = j;
            }
        }
        items.swap(0, best);
        let (sq, f, _) = items[0];
        Some((sq, f))
    }
}

// ---------------------------------------------------------------------------------------------
// CPU levels
// ---------------------------------------------------------------------------------------------

/// What a CPU level may spend, and how far from the best a move it may pick.
struct Level {
    /// Deepest midgame iteration.
    depth: u32,
    /// Node budget of the midgame search (and again of the near-equal test).
    nodes: u64,
    /// At most this many empties: solve exactly first (with `solve_nodes`).
    exact_empties: u32,
    solve_nodes: u64,
    /// Moves within this many [`SCALE`] units of the best are picked at random.
    margin: i32,
    table_bytes: usize,
}

fn level(level: u8) -> Level {
    match level {
        ..=3 => Level {
            depth: 3,
            nodes: 200_000,
            exact_empties: 0,
            solve_nodes: 0,
            margin: 150,
            table_bytes: 1 << 20,
        },
        4 => Level {
            depth: 7,
            nodes: 1_500_000,
            exact_empties: 12,
            solve_nodes: 2_000_000,
            margin: 50,
            table_bytes: 4 << 20,
        },
        _ => Level {
            depth: 9,
            nodes: 1_500_000,
            exact_empties: 16,
            solve_nodes: 10_000_000,
            margin: 0,
            table_bytes: Engine::DEFAULT_TABLE_BYTES,
        },
    }
}

/// The CPU's move at `level` (3: a shallow search, 4: a deep one, 5: deeper still and perfect
/// play from 18 empties; levels below 3 play as 3, above 5 as 5), or `None` when the side to move
/// has no move (a pass is due or the game is over).
///
/// Bounded by depth and node counts only, and drawing from a SplitMix64 keyed by `seed` and the
/// position, so the same position and seed give the same move on every machine. Levels 3 and 4
/// pick at random among the moves their search finds close to the best; level 5 picks among its
/// best moves.
pub fn choose(pos: &Reversi, level_number: u8, seed: u64) -> Option<Square> {
    let (p, o) = pos.boards();
    let mp = moves(p, o);
    if mp == 0 {
        return None;
    }
    if mp.count_ones() == 1 {
        return Some(square(mp.trailing_zeros() as u8));
    }
    let cfg = level(level_number);
    let mut rng = SplitMix64(seed ^ p.wrapping_mul(0xA24B_AED4_963E_E407) ^ o.rotate_left(17));
    let empties = (!(p | o)).count_ones();
    let table = Table::new(cfg.table_bytes);
    let limits = Limits::nodes(cfg.solve_nodes);
    let mut search = Search::new(&table, 0, &limits);

    if empties <= cfg.exact_empties {
        let depth = ((empties as i32 - 8) / 2).clamp(1, 8) as u32;
        let (root, _) = search.iterate(p, o, depth.min(empties - 1).max(1));
        if let Some((_, best)) = search.solve_root(p, o, &root) {
            return rng.pick(&best).map(square);
        }
    }

    search.max_nodes = search.nodes.saturating_add(cfg.nodes);
    search.next_check = 0;
    search.aborted = false;
    let depth = cfg.depth.min(empties.saturating_sub(1)).max(1);
    let (root, reached) = search.iterate(p, o, depth);
    let best = root[0];
    if cfg.margin == 0 {
        return Some(square(best.sq));
    }
    // The moves worth at least `best - margin` at the depth reached: at depth 1 the scores are
    // exact; deeper, only the first is, and each other move takes a null-window test.
    let floor = best.score - cfg.margin;
    let mut near = vec![best.sq];
    search.max_nodes = search.nodes.saturating_add(cfg.nodes);
    search.next_check = 0;
    for m in &root[1..] {
        let good = if reached == 1 {
            m.score >= floor
        } else {
            let bit = 1u64 << m.sq;
            let f = flips(p, o, m.sq as usize);
            let v = -search.pvs(
                o ^ f,
                p ^ f ^ bit,
                reached as i32 - 1,
                -floor,
                -floor + 1,
                false,
            );
            if search.aborted {
                break;
            }
            v >= floor
        };
        if good {
            near.push(m.sq);
        }
    }
    near.sort_unstable();
    rng.pick(&near).map(square)
}

/// Reversi table size of the analysis, in bytes.
pub const ANALYSIS_TABLE_BYTES: usize = 32 << 20;

impl super::Engine for Reversi {
    type Analyser = Engine;

    fn analyser() -> Engine {
        Engine::new(ANALYSIS_TABLE_BYTES)
    }

    /// The engine finds its best moves as it goes: `with_moves` changes nothing.
    fn judge(
        engine: &mut Engine,
        pos: &Self,
        limits: &Limits,
        _with_moves: bool,
    ) -> Verdict<Square> {
        engine.analyse(pos, limits)
    }

    fn search_choice(&self, level: u8, seed: u64) -> Option<Square> {
        choose(self, level, seed)
    }

    /// Prefer moves that keep our options open and close the opponent's; corners are gold.
    fn weak_weight(&self, square: Square) -> u64 {
        let mut next = *self;
        next.play(square);
        let theirs = u64::from(next.legal_count());
        let corner = matches!(square.index(), 0 | 7 | 56 | 63);
        let base = 64u64.saturating_sub(theirs * 4).max(2);
        if corner { base * 8 } else { base }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::random_positions;
    use crate::games::{Game, Side};
    use crate::rng::SplitMix64 as TestRng;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn the_last_move_flips_as_many_discs_as_the_move_generator_says() {
        let mut rng = TestRng(14);
        for _ in 0..20_000 {
            let sq = rng.index(64);
            let bit = 1u64 << sq;
            let p = rng.next_u64() & !bit;
            let o = !p & !bit;
            let expected = flips(p, o, sq).count_ones() as i32;
            assert_eq!(last_flip_count(p, sq), expected, "{p:#x} at {sq}");
        }
    }

    /// One FFO line: the position and every legal move with its exact score.
    struct Ffo {
        pos: Reversi,
        scored: Vec<(Square, i32)>,
    }

    impl Ffo {
        fn score(&self) -> i32 {
            self.scored
                .iter()
                .map(|s| s.1)
                .max()
                .expect("FFO lines list moves")
        }

        /// Every move that reaches the best score, a1 first.
        fn best(&self) -> Vec<Square> {
            let score = self.score();
            let mut best: Vec<Square> = self
                .scored
                .iter()
                .filter(|s| s.1 == score)
                .map(|s| s.0)
                .collect();
            best.sort();
            best
        }
    }

    fn ffo_file(text: &str) -> Vec<Ffo> {
        crate::oracles::ffo_lines(text)
            .expect("the FFO file parses")
            .into_iter()
            .map(|line| Ffo {
                pos: line.position().expect("a valid FFO board"),
                scored: line.scored,
            })
            .collect()
    }

    const FFO_1_19: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../oracles/reversi/fforum-1-19.obf"
    ));
    const FFO_20_39: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../oracles/reversi/fforum-20-39.obf"
    ));

    /// Solves each position exactly on `threads` threads and compares the score and the whole
    /// set of best moves.
    fn solves_exactly_on(positions: &[(usize, &Ffo)], threads: usize) {
        let mut engine = Engine::new(16 << 20);
        let limits = Limits {
            threads,
            ..Limits::UNLIMITED
        };
        for &(number, ffo) in positions {
            let v = engine.analyse(&ffo.pos, &limits);
            assert!(v.exact, "FFO #{number}");
            assert_eq!(v.score, ffo.score(), "FFO #{number}");
            assert_eq!(v.best_moves, ffo.best(), "FFO #{number}");
        }
    }

    fn solves_exactly(positions: &[(usize, &Ffo)]) {
        solves_exactly_on(positions, 1);
    }

    #[test]
    fn the_parallel_search_gives_the_sequential_exact_scores_and_best_moves() {
        let first = ffo_file(FFO_1_19);
        let second = ffo_file(FFO_20_39);
        let numbered: Vec<(usize, &Ffo)> = (1..)
            .zip(&first)
            .chain((20..).zip(&second).filter(|(n, _)| *n <= 27))
            .collect();
        solves_exactly_on(&numbered, 2);
        solves_exactly_on(&numbered, 3);
    }

    #[test]
    fn a_parallel_search_stops_for_all_threads_at_the_budget_or_the_flag() {
        let set = ffo_file(FFO_20_39);
        let stop = AtomicBool::new(true);
        for ffo in &set[15..] {
            // Past the midgame iterations, into the threads' exact solve, and out of budget.
            let budget = Limits {
                threads: 2,
                ..Limits::nodes(5_000_000)
            };
            let v = Engine::new(1 << 20).analyse(&ffo.pos, &budget);
            assert!(!v.exact);
            // Each thread's nodes within the budget.
            assert!(v.nodes <= 2 * 5_000_000 + 10_000, "{}", v.nodes);
            let flagged = Limits {
                threads: 2,
                ..Limits::stoppable(u64::MAX, Some(&stop))
            };
            let v = Engine::new(1 << 20).analyse(&ffo.pos, &flagged);
            assert!(!v.exact && v.nodes < 200_000, "{}", v.nodes);
        }
    }

    /// Beyond [`EXACT_MAX_EMPTIES`], a search bounded for an interactive answer gives the midgame
    /// estimate, and one that goes to the end (an analysis job) solves: here 30 empties from a
    /// random game, lost by 62 discs whatever the side to move plays but a2, b2 or f3.
    #[test]
    fn beyond_the_interactive_empties_a_search_to_the_end_solves_exactly() {
        let line = "-OOOOOO---OOOO--XOXOO-X-OOOOOX--XXXXX----X-X-X--X--X--X--------X X; \
                    A2:-62; B2:-62; F3:-62;";
        let ffo = &ffo_file(line)[0];
        let budget = Limits::nodes(20_000_000);
        // The solve to the end below takes 2 M nodes; the midgame search does not reach the
        // end of the game with them.
        let estimate = Engine::new(1 << 20).analyse(&ffo.pos, &Limits::nodes(2_000_000));
        assert!(!estimate.exact);
        for threads in [1, 2] {
            let to_the_end = Limits {
                threads,
                to_the_end: true,
                ..budget
            };
            let v = Engine::new(1 << 20).analyse(&ffo.pos, &to_the_end);
            assert!(v.exact, "{threads} thread(s)");
            assert_eq!(v.score, ffo.score(), "{threads} thread(s)");
            assert_eq!(v.best_moves, ffo.best(), "{threads} thread(s)");
        }
        // The solver below the root agrees, move by move: in a window around -62, the best
        // moves are worth exactly -62 and the others fail below it.
        let table = Table::new(1 << 20);
        let (p, o) = ffo.pos.boards();
        for sq in squares(moves(p, o)) {
            let (np, no) = after(p, o, sq);
            let value = -Search::new(&table, 0, &Limits::UNLIMITED).solve(np, no, 61, 63, false);
            let best = ffo.best().contains(&square(sq));
            assert!(
                value == -62 && best || value < -62 && !best,
                "{sq}: {value}"
            );
        }
    }

    #[test]
    fn ffo_1_to_19_are_solved_with_every_best_move() {
        let set = ffo_file(FFO_1_19);
        assert_eq!(set.len(), 19);
        let numbered: Vec<(usize, &Ffo)> = (1..).zip(&set).collect();
        solves_exactly(&numbered);
    }

    #[test]
    fn both_copies_of_the_solver_give_the_same_values_over_the_same_nodes() {
        // On a processor without the x86-64-v3 instructions both runs take the build's copy.
        for ffo in &ffo_file(FFO_1_19) {
            let (p, o) = ffo.pos.boards();
            let run = |v3: bool| {
                let table = Table::new(1 << 20);
                let mut search = Search::new(&table, 0, &Limits::UNLIMITED);
                search.v3 = v3 && arch::has_v3();
                (search.solve(p, o, -64, 64, false), search.nodes)
            };
            let base = run(false);
            assert_eq!(base.0, ffo.score(), "{:?}", ffo.pos);
            assert_eq!(run(true), base, "{:?}", ffo.pos);
        }
    }

    /// The quick ones of #20–#39 (up to 20 empties, solved in well under a second each).
    #[test]
    fn ffo_20_to_31_are_solved_with_every_best_move() {
        let set = ffo_file(FFO_20_39);
        assert_eq!(set.len(), 20);
        let numbered: Vec<(usize, &Ffo)> = (20..).zip(&set).filter(|(n, _)| *n <= 31).collect();
        solves_exactly(&numbered);
    }

    #[test]
    fn the_fast_primitives_agree_with_the_rules_engine() {
        random_positions::<Reversi>(100, 1, |pos| {
            let (p, o) = pos.boards();
            let legal: Vec<u8> = pos.legal_moves().map(Square::index).collect();
            assert_eq!(squares(moves(p, o)).collect::<Vec<_>>(), legal, "{pos:?}");
            for sq in 0..64u8 {
                let f = flips(p, o, sq as usize);
                let empty = (p | o) & (1 << sq) == 0;
                assert_eq!(empty && f != 0, legal.contains(&sq), "{pos:?} {sq}");
                if empty && f != 0 {
                    let mut next = *pos;
                    next.play(square(sq));
                    assert_eq!(next.boards(), (o ^ f, p ^ f ^ (1 << sq)), "{pos:?} {sq}");
                }
            }
        });
    }

    #[test]
    fn stable_discs_never_flip() {
        let mut checked = 0;
        random_positions::<Reversi>(60, 2, |pos| {
            let (p, o) = pos.boards();
            let (stable_p, stable_o) = (stable_discs(p, o), stable_discs(o, p));
            assert_eq!(stable_p & !p, 0);
            assert_eq!(stable_o & !o, 0);
            checked += (stable_p | stable_o).count_ones();
            // Whoever plays next, in whatever order: no stable disc changes colour.
            for (mover, other, mine, theirs) in
                [(p, o, stable_p, stable_o), (o, p, stable_o, stable_p)]
            {
                for sq in squares(moves(mover, other)) {
                    let f = flips(mover, other, sq as usize);
                    assert_eq!(f & theirs, 0, "{pos:?} {sq}");
                    assert_eq!(mine & !(mover | f | (1 << sq)), 0);
                }
            }
        });
        assert!(
            checked > 1000,
            "the random games gave too few stable discs: {checked}"
        );
    }

    /// Plain negamax over the rules engine, the FFO score convention spelt out.
    fn minimax(pos: &Reversi) -> i32 {
        if let Some(outcome) = pos.outcome() {
            let [first, second] = pos.discs();
            let empty = 64 - first as i32 - second as i32;
            let mine = pos.side_to_move().index();
            let diff = pos.discs()[mine] as i32 - pos.discs()[1 - mine] as i32;
            return match outcome.winner {
                None => 0,
                Some(w) if w == pos.side_to_move() => diff + empty,
                Some(_) => diff - empty,
            };
        }
        if pos.must_pass() {
            let mut next = *pos;
            next.pass();
            return -minimax(&next);
        }
        pos.legal_moves()
            .map(|mv| {
                let mut next = *pos;
                next.play(mv);
                -minimax(&next)
            })
            .max()
            .expect("a legal move")
    }

    #[test]
    fn the_solver_agrees_with_plain_minimax_near_the_end() {
        let mut engine = Engine::new(1 << 20);
        let mut positions = 0;
        random_positions::<Reversi>(40, 3, |pos| {
            let empties = 60 - pos.ply();
            if empties > 9 {
                return;
            }
            positions += 1;
            let v = engine.analyse(pos, &Limits::UNLIMITED);
            assert!(v.exact);
            assert_eq!(v.score, minimax(pos), "{pos:?}");
            if pos.outcome().is_some() || pos.must_pass() {
                assert!(v.best_moves.is_empty());
                return;
            }
            let mut best: Vec<Square> = pos
                .legal_moves()
                .filter(|&mv| {
                    let mut next = *pos;
                    next.play(mv);
                    -minimax(&next) == v.score
                })
                .collect();
            best.sort();
            assert_eq!(v.best_moves, best, "{pos:?}");
        });
        assert!(positions > 300, "{positions}");
    }

    /// A position from a random game where the side to move must pass with few empties left.
    fn a_pass_position() -> Reversi {
        let mut found = None;
        random_positions::<Reversi>(400, 4, |pos| {
            if found.is_none() && pos.must_pass() && 60 - pos.ply() >= 6 && 60 - pos.ply() <= 14 {
                found = Some(*pos);
            }
        });
        found.expect("random games have passes near their end")
    }

    #[test]
    fn a_side_that_must_pass_scores_minus_the_position_after_the_pass_and_has_no_move() {
        let pos = a_pass_position();
        let mut after = pos;
        after.pass();
        let mut engine = Engine::new(1 << 20);
        let v = engine.analyse(&pos, &Limits::UNLIMITED);
        let w = engine.analyse(&after, &Limits::UNLIMITED);
        assert!(v.exact && w.exact);
        assert_eq!(v.score, -w.score);
        assert_eq!(v.score, minimax(&pos));
        assert_eq!(v.best_moves, Vec::<Square>::new());
        assert!(!w.best_moves.is_empty());
        assert_eq!(choose(&pos, 5, 7), None);
    }

    #[test]
    fn a_finished_game_scores_its_discs_with_the_empties_to_the_winner() {
        // d3c3b3d2e1d6d7e3f4: black has 13 discs, white none, 51 empties.
        let mut pos = Reversi::start();
        for mv in ["d3", "c3", "b3", "d2", "e1", "d6", "d7", "e3", "f4"] {
            pos.play(mv.parse().expect("a square"));
        }
        assert!(pos.outcome().is_some());
        assert_eq!(pos.side_to_move(), Side::Second);
        let v = Engine::new(1 << 16).analyse(&pos, &Limits::UNLIMITED);
        assert_eq!(
            v,
            Verdict {
                score: -64,
                best_moves: Vec::new(),
                exact: true,
                nodes: 0
            }
        );
        assert_eq!(choose(&pos, 3, 1), None);
    }

    #[test]
    fn a_stop_flag_set_beforehand_gives_an_estimate_with_a_legal_move() {
        let set = ffo_file(FFO_20_39);
        let stop = AtomicBool::new(true);
        let limits = Limits::stoppable(u64::MAX, Some(&stop));
        for ffo in &set {
            let v = Engine::new(1 << 20).analyse(&ffo.pos, &limits);
            assert!(!v.exact);
            assert_eq!(v.best_moves.len(), 1);
            assert!(ffo.pos.is_legal(v.best_moves[0]));
            assert!(v.nodes < 100_000, "{}", v.nodes);
        }
    }

    #[test]
    fn a_spent_node_budget_falls_back_to_the_midgame_estimate() {
        // FFO #38, 24 empties: far more than 20,000 nodes to prove.
        let set = ffo_file(FFO_20_39);
        let ffo = &set[18];
        let v = Engine::new(1 << 20).analyse(&ffo.pos, &Limits::nodes(20_000));
        assert!(!v.exact);
        assert!(ffo.pos.is_legal(v.best_moves[0]));
        assert!(v.nodes <= 20_000 + CHECK_EVERY, "{}", v.nodes);
        assert!((-64..=64).contains(&v.score));
    }

    #[test]
    fn a_midgame_analysis_within_a_budget_estimates_and_names_a_legal_move() {
        let mut pos = Reversi::start();
        for mv in ["f5", "d6", "c3", "d3", "c4"] {
            pos.play(mv.parse().expect("a square"));
        }
        let v = Engine::new(1 << 20).analyse(&pos, &Limits::nodes(200_000));
        assert!(!v.exact);
        assert_eq!(v.best_moves.len(), 1);
        assert!(pos.is_legal(v.best_moves[0]));
        assert!(
            v.score.abs() <= 20,
            "an opening is not lost by much: {}",
            v.score
        );
        // The same search twice gives the same answer.
        let again = Engine::new(1 << 20).analyse(&pos, &Limits::nodes(200_000));
        assert_eq!(v, again);
    }

    /// Plays one game between two levels; `first` is the level of black. Returns black's
    /// final disc difference.
    fn play(first: u8, second: u8, seed: u64) -> i32 {
        let mut pos = Reversi::start();
        while pos.outcome().is_none() {
            if pos.must_pass() {
                pos.pass();
                continue;
            }
            let level = if pos.side_to_move() == Side::First {
                first
            } else {
                second
            };
            let mv = choose(&pos, level, seed ^ u64::from(pos.ply())).expect("a move");
            assert!(pos.is_legal(mv), "level {level} played {mv} in {pos:?}");
            pos.play(mv);
        }
        let [black, white] = pos.discs();
        black as i32 - white as i32
    }

    #[test]
    fn level_5_beats_level_3_in_at_least_18_of_20_games() {
        let diffs = crate::search::on_every_core(20, |game| {
            if game % 2 == 0 {
                play(5, 3, game)
            } else {
                -play(3, 5, game)
            }
        });
        let wins = diffs.iter().filter(|&&diff| diff > 0).count();
        assert!(wins >= 18, "level 5 won {wins} of 20: {diffs:?}");
    }

    #[test]
    fn the_cpu_is_deterministic_and_plays_legal_moves_at_every_level() {
        let mut rng = TestRng(5);
        let mut pos = Reversi::start();
        let mut moves_seen = 0;
        while pos.outcome().is_none() {
            if pos.must_pass() {
                assert_eq!(choose(&pos, 4, 9), None);
                pos.pass();
                continue;
            }
            // Level 5 takes the longest: every fourth position is enough for it.
            let levels: &[u8] = if moves_seen % 4 == 0 {
                &[3, 4, 5]
            } else {
                &[3, 4]
            };
            for &level in levels {
                let seed = rng.next_u64();
                let mv = choose(&pos, level, seed).expect("a move");
                assert!(pos.is_legal(mv));
                assert_eq!(choose(&pos, level, seed), Some(mv));
            }
            let legal: Vec<Square> = pos.legal_moves().collect();
            pos.play(legal[rng.index(legal.len())]);
            moves_seen += 1;
        }
        assert!(moves_seen > 40);
    }

    #[test]
    fn lower_levels_vary_their_choice_with_the_seed() {
        let pos = Reversi::start();
        let level_3: std::collections::BTreeSet<Square> =
            (0..16).filter_map(|seed| choose(&pos, 3, seed)).collect();
        assert!(level_3.len() > 1, "{level_3:?}");
    }
}
