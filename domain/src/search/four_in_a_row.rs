//! Four in a Row search: an exact solver (negamax with alpha-beta on bitboards) and the CPU levels
//! 3 to 5 built on it.
//!
//! The solver follows Pascal Pons' design (blog.gamesolver.org, "Solving Connect 4"): it never
//! expands a position where the side to move wins at once, plays only moves that do not hand the
//! opponent an immediate win, orders moves by the number of winning cells they create (centre
//! first on ties), remembers upper and lower bounds in a transposition table, and finds the score
//! by a series of null-window searches that bisect the possible range, biased towards 0 so that
//! win / draw / loss is settled first. Beyond the reference, a node asks the processor to fetch
//! its children's table slots while it searches the first child, so that their probes rarely
//! wait for main memory (where most of the time went); the nodes visited are the same.
//!
//! Scores follow the analysis' convention: 0 is a draw, `+k` means the side to move wins with
//! its `(22 - k)`-th disc, `-k` that it loses to the opponent's `(22 - k)`-th disc. A side that can win at once with
//! `n` discs on the board scores `(43 - n) / 2`.
//!
//! Level 5 opens from a shipped book of proven winning moves for the first player ([`book`]).
//! The CPU levels use a depth-limited alpha-beta search with a small evaluation (cell weights,
//! winning cells and their row parity); its values are in "milli-scores": a proven result `k` is
//! `1000 k`, and every heuristic value lies strictly between -1000 and 1000. Everything is bounded
//! by node counts, never by a clock, so a CPU move is the same on every machine. An analysis may
//! solve on several threads ([`Limits::threads`], sharing the table); CPU choices use one.

use crate::games::four_in_a_row::{BOARD, BOARD_COLUMN, BOTTOM, HEIGHT, STRIDE, WIDTH};
use crate::games::{Column, FourInARow, Game};

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};

use super::{Engine, Limits, SplitMix64, Verdict, arch};

pub mod book;
pub mod outcomes;

/// Cells on the board.
const CELLS: i32 = (WIDTH as i32) * (HEIGHT as i32);
/// Column indices, centre first: central columns take part in more lines.
const CENTRE_FIRST: [u8; WIDTH as usize] = [3, 2, 4, 1, 5, 0, 6];
/// How often (in nodes) the solver reads the caller's stop flag.
const STOP_CHECK_EVERY: u64 = 1 << 10;

/// The cells of column `c` (0-based), as a bitboard.
const fn column_cells(c: u8) -> u64 {
    BOARD_COLUMN << (c as u32 * STRIDE as u32)
}

/// The empty cells that would complete a four for the discs `own`, given the occupied `mask`.
fn winning_cells(own: u64, mask: u64) -> u64 {
    // Three discs straight below.
    let mut cells = (own << 1) & (own << 2) & (own << 3);
    // Across (STRIDE) and both diagonals (STRIDE - 1 and STRIDE + 1): the missing disc may be at
    // either end of three, or inside (two on one side and one on the other).
    for s in [STRIDE - 1, STRIDE, STRIDE + 1] {
        let s = u32::from(s);
        let pair = (own << s) & (own << (2 * s));
        cells |= pair & (own << (3 * s));
        cells |= pair & (own >> s);
        let pair = (own >> s) & (own >> (2 * s));
        cells |= pair & (own << s);
        cells |= pair & (own >> (3 * s));
    }
    cells & (BOARD ^ mask)
}

/// The column a one-bit move (a drop cell) falls into.
fn column_of(bit: u64) -> Option<Column> {
    Column::new((bit.trailing_zeros() / u32::from(STRIDE)) as u8)
}

/// The columns of a set of drop cells, left to right.
fn columns_of(mut bits: u64) -> Vec<Column> {
    let mut out = Vec::with_capacity(bits.count_ones() as usize);
    while bits != 0 {
        let bit = bits & bits.wrapping_neg();
        out.extend(column_of(bit));
        bits ^= bit;
    }
    out
}

/// The search's own view of a position: the side to move's discs, every disc, and the count.
#[derive(Clone, Copy, Debug)]
struct Pos {
    current: u64,
    mask: u64,
    moves: i32,
}

impl Pos {
    fn new(pos: &FourInARow) -> Pos {
        let (mask, first) = pos.bitboards();
        let moves = mask.count_ones() as i32;
        let current = if moves % 2 == 0 { first } else { mask ^ first };
        Pos {
            current,
            mask,
            moves,
        }
    }

    /// A unique number per position (49 bits): each column's discs plus one bit above them.
    fn key(&self) -> u64 {
        self.current + self.mask
    }

    /// The [`Pos::key`] of the position after `bit` is played.
    fn child_key(&self, bit: u64) -> u64 {
        (self.current ^ self.mask) + (self.mask | bit)
    }

    /// The drop cell of every column that is not full.
    fn possible(&self) -> u64 {
        (self.mask + BOTTOM) & BOARD
    }

    /// Plays a drop cell (one bit of `possible`) and hands the turn over.
    fn play(&mut self, bit: u64) {
        self.current ^= self.mask;
        self.mask |= bit;
        self.moves += 1;
    }

    fn own_winning_cells(&self) -> u64 {
        winning_cells(self.current, self.mask)
    }

    fn opponent_winning_cells(&self) -> u64 {
        winning_cells(self.current ^ self.mask, self.mask)
    }

    /// The drop cells where the side to move completes a four at once.
    fn winning_moves(&self) -> u64 {
        self.own_winning_cells() & self.possible()
    }

    /// The moves after which the opponent cannot win at once: the forced block when there is one
    /// threat, nothing when there are two, and never the cell right below an opponent's winning
    /// cell.
    fn non_losing_moves(&self) -> u64 {
        let mut possible = self.possible();
        let theirs = self.opponent_winning_cells();
        let forced = possible & theirs;
        if forced != 0 {
            if forced & (forced - 1) != 0 {
                return 0;
            }
            possible = forced;
        }
        possible & !(theirs >> 1)
    }

    /// How promising a move looks: the winning cells the mover has after it.
    fn move_score(&self, bit: u64) -> u32 {
        winning_cells(self.current | bit, self.mask | bit).count_ones()
    }

    /// The score of winning at once: the mover places its `(moves / 2 + 1)`-th disc.
    fn win_now_score(&self) -> i32 {
        (CELLS + 1 - self.moves) / 2
    }

    /// The score of losing to the opponent's next disc.
    fn lose_next_score(&self) -> i32 {
        -(CELLS - self.moves) / 2
    }
}

/// Up to seven moves, sorted so that `next` yields the best-looking first; among equal scores,
/// the one added last comes first (moves are added in reverse centre order).
struct MoveOrder {
    len: usize,
    entries: [(u64, u32); WIDTH as usize],
}

impl MoveOrder {
    /// The moves in `candidates`, best first.
    fn new(pos: &Pos, candidates: u64) -> MoveOrder {
        let mut order = MoveOrder {
            len: 0,
            entries: [(0, 0); WIDTH as usize],
        };
        for &c in CENTRE_FIRST.iter().rev() {
            let bit = candidates & column_cells(c);
            if bit != 0 {
                order.add(bit, pos.move_score(bit));
            }
        }
        order
    }

    fn add(&mut self, bit: u64, score: u32) {
        let mut i = self.len;
        self.len += 1;
        while i > 0 && self.entries[i - 1].1 > score {
            self.entries[i] = self.entries[i - 1];
            i -= 1;
        }
        self.entries[i] = (bit, score);
    }
}

impl Iterator for MoveOrder {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.entries[self.len].0)
    }
}

/// A bound on a position's score, as the table remembers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    /// The score is at least this.
    Lower(i32),
    /// The score is at most this.
    Upper(i32),
}

/// The transposition table: one `u64` per slot holding the full 49-bit key, the generation that
/// wrote it and the bound, so there are no false hits. Always-replace. The threads of one
/// analysis share it without a lock: a slot is one word, read and written whole.
///
/// Beside the slots, one bit per slot says whether the slot was written since the last clear
/// (`written`: 1/64 of the table, small enough to stay in the processor's L2 or L3 cache). Most
/// probes are for positions never seen, whose slot was never written: the bit answers them
/// without a trip to main memory, which is where most of the solver's time went. It never
/// changes what the table answers, so the node counts are the same with or without it.
struct Table {
    slots: Vec<AtomicU64>,
    written: Vec<AtomicU64>,
    shift: u32,
    generation: u64,
}

const KEY_SHIFT: u32 = 15;
const GENERATION_BITS: u32 = 7;
const LOWER_FLAG: u64 = 0x80;
/// Stored scores are offset by this so that a used slot never has a zero value byte.
const SCORE_OFFSET: i32 = 32;

impl Table {
    fn new(entries: usize) -> Table {
        let bits = entries.max(1024).ilog2();
        Table {
            slots: arch::table(1 << bits, || AtomicU64::new(0)),
            written: arch::table(1 << (bits - 6), || AtomicU64::new(0)),
            shift: 64 - bits,
            generation: 1,
        }
    }

    fn index(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The word of `written` holding slot `i`'s bit, and the bit.
    fn written_bit(&self, i: usize) -> (&AtomicU64, u64) {
        (&self.written[i >> 6], 1 << (i & 63))
    }

    fn tag(&self, key: u64) -> u64 {
        key << KEY_SHIFT | self.generation << 8
    }

    /// Brings the slot of `key` and its written bit into the cache ahead of a [`Table::get`].
    #[inline]
    fn prefetch(&self, key: u64) {
        let i = self.index(key);
        arch::prefetch(self.written_bit(i).0);
        arch::prefetch(&self.slots[i]);
    }

    fn get(&self, key: u64) -> Option<Bound> {
        let i = self.index(key);
        let (word, bit) = self.written_bit(i);
        if word.load(Ordering::Relaxed) & bit == 0 {
            return None;
        }
        let slot = self.slots[i].load(Ordering::Relaxed);
        if slot & !0xFF != self.tag(key) || slot & 0x7F == 0 {
            return None;
        }
        let score = (slot & 0x7F) as i32 - SCORE_OFFSET;
        Some(if slot & LOWER_FLAG != 0 {
            Bound::Lower(score)
        } else {
            Bound::Upper(score)
        })
    }

    fn put(&self, key: u64, bound: Bound) {
        let (score, flag) = match bound {
            Bound::Lower(s) => (s, LOWER_FLAG),
            Bound::Upper(s) => (s, 0),
        };
        let i = self.index(key);
        self.slots[i].store(
            self.tag(key) | flag | (score + SCORE_OFFSET) as u64,
            Ordering::Relaxed,
        );
        // Not a `fetch_or`: a locked instruction would wait for the slot's store to reach the
        // cache. Two threads setting bits of one word at once may lose one; the table then
        // forgets that slot, which costs nodes, never a wrong answer (a read checks the whole
        // key anyway).
        let (word, bit) = self.written_bit(i);
        let bits = word.load(Ordering::Relaxed);
        if bits & bit == 0 {
            word.store(bits | bit, Ordering::Relaxed);
        }
    }

    /// Forgets everything: no slot written, and a new generation (a real wipe of the slots
    /// when the generations run out).
    fn clear(&mut self) {
        for word in &mut self.written {
            *word.get_mut() = 0;
        }
        self.generation += 1;
        if self.generation == 1 << GENERATION_BITS {
            for slot in &mut self.slots {
                *slot.get_mut() = 0;
            }
            self.generation = 1;
        }
    }
}

/// A node's children searched one by one below this many nodes for the first: threads would
/// cost more than they save.
const SPLIT_NODES: u64 = 20_000;

/// A node after its opening checks: settled, or to be searched with its window.
enum Opened {
    Known(i32),
    Search(Node),
}

/// A node to search: its window (narrowed by the bounds), its candidate moves and its key.
#[derive(Clone, Copy)]
struct Node {
    alpha: i32,
    beta: i32,
    candidates: u64,
    key: u64,
}

/// One bounded run of the exact search.
struct Run<'t, 'l> {
    table: &'t Table,
    /// A second stop flag: a thread of a parallel probe leaves once another one cut.
    also_stop: Option<&'t AtomicBool>,
    limits: &'t Limits<'l>,
    /// The node count at which the run gives up (the limits' budget unless extended).
    max_nodes: u64,
    nodes: u64,
    /// The node count last reported to the limits' progress.
    reported: u64,
    aborted: bool,
}

impl<'t, 'l> Run<'t, 'l> {
    fn new(table: &'t Table, limits: &'t Limits<'l>) -> Run<'t, 'l> {
        Run {
            table,
            also_stop: None,
            limits,
            max_nodes: limits.max_nodes,
            nodes: 0,
            reported: 0,
            aborted: false,
        }
    }

    /// Gives a run (cut short or not) `nodes` more to spend.
    fn extend(&mut self, nodes: u64) {
        self.max_nodes = self.nodes + nodes;
        self.aborted = false;
    }

    /// Counts a node; false (and `aborted`) once the budget is spent or the caller said stop.
    fn enter(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes > self.max_nodes || (self.nodes % STOP_CHECK_EVERY == 1 && self.checkpoint())
        {
            self.aborted = true;
        }
        !self.aborted
    }

    /// Reports the nodes visited since the last report; whether the caller said stop.
    fn checkpoint(&mut self) -> bool {
        let visited = self.nodes - self.reported;
        self.reported = self.nodes;
        self.limits.checkpoint(visited) || self.also_stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// The score of `pos` if it lies in `(alpha, beta)`; otherwise a bound on the same side of the
    /// window. `pos` must be on, with no immediate win for the side to move. Meaningless once
    /// `aborted`.
    fn negamax(&mut self, pos: &Pos, alpha: i32, beta: i32) -> i32 {
        match self.open(pos, alpha, beta) {
            Opened::Known(v) => v,
            Opened::Search(node) => {
                let order = MoveOrder::new(pos, node.candidates);
                // The children's slots are fetched while the first child is searched: most of a
                // node's time would otherwise be waiting for its probe.
                for &(bit, _) in &order.entries[..order.len] {
                    self.table.prefetch(pos.child_key(bit));
                }
                self.children(pos, order, node)
            }
        }
    }

    /// What a node settles before its children: the budget, forced losses, a full board, the
    /// bounds of the moves left and the table's bounds.
    fn open(&mut self, pos: &Pos, mut alpha: i32, mut beta: i32) -> Opened {
        debug_assert!(alpha < beta);
        debug_assert!(pos.winning_moves() == 0);
        if !self.enter() {
            return Opened::Known(0);
        }
        let candidates = pos.non_losing_moves();
        if candidates == 0 {
            return Opened::Known(pos.lose_next_score());
        }
        if pos.moves >= CELLS - 2 {
            // Two cells left, no win for us now, and our move leaves the opponent none.
            return Opened::Known(0);
        }
        // The opponent cannot win with its next disc, and we cannot win with this one.
        let min = -(CELLS - 2 - pos.moves) / 2;
        if alpha < min {
            alpha = min;
            if alpha >= beta {
                return Opened::Known(alpha);
            }
        }
        let max = (CELLS - 1 - pos.moves) / 2;
        if beta > max {
            beta = max;
            if alpha >= beta {
                return Opened::Known(beta);
            }
        }
        let key = pos.key();
        match self.table.get(key) {
            Some(Bound::Lower(low)) if alpha < low => {
                alpha = low;
                if alpha >= beta {
                    return Opened::Known(alpha);
                }
            }
            Some(Bound::Upper(high)) if beta > high => {
                beta = high;
                if alpha >= beta {
                    return Opened::Known(beta);
                }
            }
            _ => {}
        }
        Opened::Search(Node {
            alpha,
            beta,
            candidates,
            key,
        })
    }

    /// Searches the children of an opened node in `order`, and stores what that proves.
    fn children(&mut self, pos: &Pos, order: impl Iterator<Item = u64>, node: Node) -> i32 {
        let Node {
            mut alpha,
            beta,
            key,
            ..
        } = node;
        for bit in order {
            let mut child = *pos;
            child.play(bit);
            let score = -self.negamax(&child, -beta, -alpha);
            if self.aborted {
                return 0;
            }
            if score >= beta {
                self.table.put(key, Bound::Lower(score));
                return score;
            }
            if score > alpha {
                alpha = score;
            }
        }
        self.table.put(key, Bound::Upper(alpha));
        alpha
    }

    /// [`Run::negamax`] for a null window at the root of a probe, on `threads` threads: the
    /// first child alone, then, if it did not cut and its search was big enough to be worth
    /// threads, the others shared among threads (each takes the next), until one cuts or all
    /// are done. With a null window no child raises alpha, so the children are independent.
    fn probe_on_threads(&mut self, pos: &Pos, alpha: i32, threads: usize) -> i32 {
        let node = match self.open(pos, alpha, alpha + 1) {
            Opened::Known(v) => return v,
            Opened::Search(node) => node,
        };
        let mut order = MoveOrder::new(pos, node.candidates);
        let before = self.nodes;
        let Some(first) = order.next() else {
            return self.children(pos, std::iter::empty(), node);
        };
        let mut child = *pos;
        child.play(first);
        let score = -self.negamax(&child, -node.beta, -node.alpha);
        if self.aborted {
            return 0;
        }
        if score >= node.beta {
            self.table.put(node.key, Bound::Lower(score));
            return score;
        }
        let rest: Vec<u64> = order.collect();
        if rest.len() < 2 || self.nodes - before < SPLIT_NODES {
            return self.children(pos, rest.into_iter(), node);
        }
        let next = AtomicUsize::new(0);
        let cut = AtomicBool::new(false);
        let best_cut = AtomicI32::new(i32::MIN);
        let limits = Limits {
            max_nodes: self.max_nodes.saturating_sub(self.nodes),
            threads: 1,
            ..*self.limits
        };
        let (table, (node_alpha, node_beta)) = (self.table, (node.alpha, node.beta));
        let work = || {
            let mut run = Run::new(table, &limits);
            run.also_stop = Some(&cut);
            while let Some(&bit) = rest.get(next.fetch_add(1, Ordering::Relaxed)) {
                let mut child = *pos;
                child.play(bit);
                let score = -run.negamax(&child, -node_beta, -node_alpha);
                if run.aborted {
                    break;
                }
                if score >= node_beta {
                    best_cut.fetch_max(score, Ordering::Relaxed);
                    cut.store(true, Ordering::Relaxed);
                    break;
                }
            }
            // Stopped by the budget or the caller, not by a cut: the probe is unsettled.
            let gave_up = run.aborted && !cut.load(Ordering::Relaxed);
            (run.nodes, gave_up)
        };
        let results: Vec<(u64, bool)> = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
            let mine = work();
            let mut all: Vec<(u64, bool)> = helpers
                .into_iter()
                .map(|h| h.join().unwrap_or((0, true)))
                .collect();
            all.push(mine);
            all
        });
        for (nodes, gave_up) in results {
            self.nodes += nodes;
            self.aborted |= gave_up;
        }
        if cut.into_inner() {
            let score = best_cut.into_inner();
            self.table.put(node.key, Bound::Lower(score));
            self.aborted = false;
            return score;
        }
        if self.aborted {
            return 0;
        }
        self.table.put(node.key, Bound::Upper(node.alpha));
        node.alpha
    }

    /// The exact score of `pos` (on, no immediate win), or the `(min, max)` bracket proven so far
    /// when the run is aborted.
    fn score(&mut self, pos: &Pos) -> Result<i32, (i32, i32)> {
        self.score_within(pos, -(CELLS - pos.moves) / 2, (CELLS + 1 - pos.moves) / 2)
    }

    /// [`Run::score`] for a position whose score is known to lie in `min..=max`.
    fn score_within(&mut self, pos: &Pos, mut min: i32, mut max: i32) -> Result<i32, (i32, i32)> {
        while min < max {
            // Bisect, but probe near 0 first: whether it is a win, a draw or a loss is what
            // prunes most.
            let mut med = min + (max - min) / 2;
            if med <= 0 && min / 2 < med {
                med = min / 2;
            } else if med >= 0 && max / 2 > med {
                med = max / 2;
            }
            let r = if self.limits.threads > 1 {
                self.probe_on_threads(pos, med, self.limits.threads)
            } else {
                self.negamax(pos, med, med + 1)
            };
            if self.aborted {
                return Err((min, max));
            }
            if r <= med {
                max = r;
            } else {
                min = r;
            }
        }
        Ok(min)
    }

    /// Whether playing `bit` in `pos` (which has no immediate win) is worth at least `score`:
    /// with the exact score of `pos`, whether the move is best; with 1, whether it wins. `None`
    /// when aborted.
    fn reaches(&mut self, pos: &Pos, bit: u64, score: i32) -> Option<bool> {
        let mut child = *pos;
        child.play(bit);
        let value_at_least_score = if child.moves == CELLS {
            score <= 0
        } else if child.winning_moves() != 0 {
            -child.win_now_score() >= score
        } else {
            // Our value is at least `score` iff the child's is at most `-score`.
            let r = self.negamax(&child, -score, -score + 1);
            if self.aborted {
                return None;
            }
            r <= -score
        };
        Some(value_at_least_score)
    }
}

impl Solver {
    /// Which moves of `p` reach `score`: each thread takes the next move and searches it;
    /// whether every move was settled; the nodes spent, `run`'s included.
    fn best_moves_on_threads(
        &self,
        mut run: Run,
        p: &Pos,
        score: i32,
        limits: &Limits,
    ) -> (u64, bool, u64) {
        let moves: Vec<u64> = MoveOrder::new(p, p.possible()).collect();
        let next = AtomicUsize::new(0);
        let best = AtomicU64::new(0);
        let unsettled = AtomicBool::new(false);
        let work = |run: &mut Run| {
            while !unsettled.load(Ordering::Relaxed) {
                let Some(&bit) = moves.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    return;
                };
                match run.reaches(p, bit, score) {
                    Some(true) => {
                        best.fetch_or(bit, Ordering::Relaxed);
                    }
                    Some(false) => {}
                    None => unsettled.store(true, Ordering::Relaxed),
                }
            }
        };
        let helper_limits = Limits {
            max_nodes: limits.max_nodes.saturating_sub(run.nodes),
            threads: 1,
            ..*limits
        };
        let helper_nodes: u64 = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..limits.threads.max(1))
                .map(|_| {
                    let (table, helper_limits, work) = (&self.table, &helper_limits, &work);
                    scope.spawn(move || {
                        let mut helper = Run::new(table, helper_limits);
                        work(&mut helper);
                        helper.nodes
                    })
                })
                .collect();
            work(&mut run);
            helpers.into_iter().map(|h| h.join().unwrap_or(0)).sum()
        });
        (
            best.into_inner(),
            !unsettled.into_inner(),
            run.nodes + helper_nodes,
        )
    }
}

/// The exact Four in a Row solver. It keeps its transposition table between calls (the bounds it
/// holds are facts about positions, so they stay valid), which makes analysing the plies of one
/// game in turn cheap; [`Solver::reset`] forgets them.
pub struct Solver {
    table: Table,
}

impl Default for Solver {
    fn default() -> Solver {
        Solver::new(Solver::DEFAULT_ENTRIES)
    }
}

impl Solver {
    /// The default table size: 2^23 slots of 8 bytes (64 MiB, touched lazily).
    pub const DEFAULT_ENTRIES: usize = 1 << 23;

    /// A solver whose table has `entries` slots (rounded down to a power of two, at least 1024),
    /// 8 bytes each.
    pub fn new(entries: usize) -> Solver {
        Solver {
            table: Table::new(entries),
        }
    }

    /// Forgets every stored bound, so that the next solve costs what it would from scratch.
    pub fn reset(&mut self) {
        self.table.clear();
    }

    /// The score of `pos` under perfect play and every column that reaches it, in column
    /// order.
    ///
    /// A finished position gets the score its result stands for (a loss with the winner's disc
    /// count, or 0 for a full board), no moves, and `exact: true`. When `limits` cut the search
    /// short, the verdict says `exact: false`; its score is then the proven value when the search
    /// got that far, otherwise the result of a short look-ahead (a win or loss it can see, 0
    /// otherwise) kept inside the bounds proven so far, and its moves are the best found.
    pub fn solve(&mut self, pos: &FourInARow, limits: &Limits) -> Verdict<Column> {
        self.run(pos, limits, true)
    }

    /// Like [`Solver::solve`] but for the score alone: `best_moves` is always empty (apart from
    /// immediate wins), which saves the per-move searches. For callers that need no moves, such
    /// as the score after each ply of a finished game.
    pub fn score(&mut self, pos: &FourInARow, limits: &Limits) -> Verdict<Column> {
        self.run(pos, limits, false)
    }

    fn run(&mut self, pos: &FourInARow, limits: &Limits, with_moves: bool) -> Verdict<Column> {
        if let Some(outcome) = pos.outcome() {
            let score = match outcome.winner {
                Some(winner) => pos.discs()[winner.index()] as i32 - 22,
                None => 0,
            };
            return Verdict {
                score,
                best_moves: Vec::new(),
                exact: true,
                nodes: 0,
            };
        }
        let p = Pos::new(pos);
        let wins = p.winning_moves();
        if wins != 0 {
            return Verdict {
                score: p.win_now_score(),
                best_moves: columns_of(wins),
                exact: true,
                nodes: 1,
            };
        }
        let mut run = Run::new(&self.table, limits);
        // The outcome book narrows the search to the proven outcome: a draw needs no search for
        // its score, a win or a loss only for its distance (and an estimate stays on its side).
        let (min, max) = match outcomes::lookup(&p) {
            Some(outcomes::Outcome::Draw) => (0, 0),
            Some(outcomes::Outcome::Win) => (1, (CELLS + 1 - p.moves) / 2),
            Some(outcomes::Outcome::Loss) => (-(CELLS - p.moves) / 2, -1),
            None => (-(CELLS - p.moves) / 2, (CELLS + 1 - p.moves) / 2),
        };
        let score = match run.score_within(&p, min, max) {
            Ok(score) => score,
            Err((min, max)) => {
                let (estimate, mut best_moves, nodes) = estimate(&p);
                if !with_moves {
                    best_moves.clear();
                }
                return Verdict {
                    score: estimate.clamp(min, max),
                    best_moves,
                    exact: false,
                    nodes: run.nodes + nodes,
                };
            }
        };
        if !with_moves {
            return Verdict {
                score,
                best_moves: Vec::new(),
                exact: true,
                nodes: run.nodes,
            };
        }
        let (best, complete, mut nodes) = self.best_moves_on_threads(run, &p, score, limits);
        let best_moves = if best == 0 {
            let (_, moves, extra) = estimate(&p);
            nodes += extra;
            moves
        } else {
            columns_of(best)
        };
        Verdict {
            score,
            best_moves,
            exact: complete,
            nodes,
        }
    }
}

/// A short heuristic look-ahead for a search that was cut short: (score, best moves, nodes).
fn estimate(pos: &Pos) -> (i32, Vec<Column>, u64) {
    const DEPTH: u32 = 8;
    const NODES: u64 = 50_000;
    let mut search = Heuristic::new(NODES);
    match search.deepen(pos, DEPTH, 0) {
        Some(root) => {
            let score = if root.best.abs() >= WIN {
                root.best / WIN
            } else {
                0
            };
            let moves = columns_of(root.candidates);
            (score, moves, search.total)
        }
        None => (0, Vec::new(), search.total),
    }
}

// ---------------------------------------------------------------------------------------------
// Depth-limited search for the CPU levels.

/// A proven score `k` is worth `k * WIN` milli-scores; heuristic values stay inside `±(WIN - 1)`.
const WIN: i32 = 1000;
const INFINITY: i32 = 100 * WIN;

/// Bit-planes of the cell weights (the number of four-cell lines through each cell, 3 at a
/// corner to 13 in the middle): a side's positional sum is `Σ 2^k · popcount(discs & PLANE[k])`.
const WEIGHT_PLANES: [u64; 4] = weight_planes();

const fn lines_through(col: i32, row: i32) -> u64 {
    let dirs = [(1, 0), (0, 1), (1, 1), (1, -1)];
    let mut count = 0;
    let mut d = 0;
    while d < 4 {
        let (dc, dr) = dirs[d];
        let mut k = 0;
        while k < 4 {
            let (c0, r0) = (col - k * dc, row - k * dr);
            let (c3, r3) = (c0 + 3 * dc, r0 + 3 * dr);
            let w = WIDTH as i32;
            let h = HEIGHT as i32;
            if c0 >= 0 && c0 < w && c3 >= 0 && c3 < w && r0 >= 0 && r0 < h && r3 >= 0 && r3 < h {
                count += 1;
            }
            k += 1;
        }
        d += 1;
    }
    count
}

const fn weight_planes() -> [u64; 4] {
    let mut planes = [0u64; 4];
    let mut col = 0;
    while col < WIDTH as i32 {
        let mut row = 0;
        while row < HEIGHT as i32 {
            let w = lines_through(col, row);
            let bit = 1u64 << (col * STRIDE as i32 + row);
            let mut k = 0;
            while k < 4 {
                if w & (1 << k) != 0 {
                    planes[k] |= bit;
                }
                k += 1;
            }
            row += 1;
        }
        col += 1;
    }
    planes
}

/// Rows 1, 3 and 5 counted from the bottom (0-based rows 0, 2, 4): the first player's good rows
/// for a threat, since with perfect filling the first player gets the odd rows.
const ODD_ROWS: u64 = BOTTOM * 0b01_0101;
/// Rows 2, 4 and 6: the second player's.
const EVEN_ROWS: u64 = BOTTOM * 0b10_1010;

fn weighted(discs: u64) -> i32 {
    let mut sum = 0;
    for (k, plane) in WEIGHT_PLANES.iter().enumerate() {
        sum += ((discs & plane).count_ones() << k) as i32;
    }
    sum
}

/// The side to move's prospects in milli-scores, strictly inside `±WIN`.
fn evaluate(pos: &Pos) -> i32 {
    let mine = pos.current;
    let theirs = pos.current ^ pos.mask;
    let my_cells = winning_cells(mine, pos.mask);
    let their_cells = winning_cells(theirs, pos.mask);
    let (my_rows, their_rows) = if pos.moves % 2 == 0 {
        (ODD_ROWS, EVEN_ROWS)
    } else {
        (EVEN_ROWS, ODD_ROWS)
    };
    let threats = my_cells.count_ones() as i32 - their_cells.count_ones() as i32;
    let parity =
        (my_cells & my_rows).count_ones() as i32 - (their_cells & their_rows).count_ones() as i32;
    let h = 3 * (weighted(mine) - weighted(theirs)) + 40 * threats + 40 * parity;
    h.clamp(-(WIN - 1), WIN - 1)
}

/// What a root search found: the best value and every move within the asked margin of it.
#[derive(Clone, Debug)]
struct Root {
    best: i32,
    /// The drop cells of the moves within the margin (exactly equal when `best` is proven).
    candidates: u64,
    /// Every searched move and its value (a bound at most the cut-off for moves that failed low),
    /// best first: the move order for the next iteration.
    order: Vec<(u64, i32)>,
}

/// Depth-limited alpha-beta with a node budget.
struct Heuristic {
    max_nodes: u64,
    /// Nodes of the current iteration.
    nodes: u64,
    /// Nodes of every iteration.
    total: u64,
    aborted: bool,
}

impl Heuristic {
    fn new(max_nodes: u64) -> Heuristic {
        Heuristic {
            max_nodes,
            nodes: 0,
            total: 0,
            aborted: false,
        }
    }

    fn search(&mut self, pos: &Pos, depth: u32, mut alpha: i32, mut beta: i32) -> i32 {
        self.nodes += 1;
        self.total += 1;
        if self.total > self.max_nodes {
            self.aborted = true;
            return 0;
        }
        if pos.winning_moves() != 0 {
            return WIN * pos.win_now_score();
        }
        let candidates = pos.non_losing_moves();
        if candidates == 0 {
            return WIN * pos.lose_next_score();
        }
        if pos.moves >= CELLS - 2 {
            return 0;
        }
        if depth == 0 {
            return evaluate(pos);
        }
        let max = WIN * ((CELLS - 1 - pos.moves) / 2);
        if beta > max {
            beta = max;
            if alpha >= beta {
                return beta;
            }
        }
        let min = -WIN * ((CELLS - 2 - pos.moves) / 2);
        if alpha < min {
            alpha = min;
            if alpha >= beta {
                return alpha;
            }
        }
        for bit in MoveOrder::new(pos, candidates) {
            let mut child = *pos;
            child.play(bit);
            let v = -self.search(&child, depth - 1, -beta, -alpha);
            if self.aborted {
                return 0;
            }
            if v >= beta {
                return v;
            }
            if v > alpha {
                alpha = v;
            }
        }
        alpha
    }

    /// One root search to `depth` over `order`, keeping every move within `margin` of the best
    /// (exactly equal once the best is proven). `None` when the budget ran out.
    fn root(&mut self, pos: &Pos, depth: u32, order: &[u64], margin: i32) -> Option<Root> {
        let mut best = -INFINITY;
        let mut values = Vec::with_capacity(order.len());
        for &bit in order {
            let mut child = *pos;
            child.play(bit);
            let cut = if best == -INFINITY {
                -INFINITY
            } else {
                best - margin - 1
            };
            let v = -self.search(&child, depth.saturating_sub(1), -INFINITY, -cut);
            if self.aborted {
                return None;
            }
            best = best.max(v);
            values.push((bit, v));
        }
        let margin = if best.abs() >= WIN { 0 } else { margin };
        let candidates = values
            .iter()
            .filter(|&&(_, v)| v >= best - margin)
            .fold(0, |acc, &(bit, _)| acc | bit);
        values.sort_by_key(|&(_, v)| std::cmp::Reverse(v));
        Some(Root {
            best,
            candidates,
            order: values,
        })
    }

    /// Iterative deepening up to `max_depth` within the node budget: the deepest finished
    /// iteration, or `None` when not even depth 1 finished. Stops early once a result is proven.
    fn deepen(&mut self, pos: &Pos, max_depth: u32, margin: i32) -> Option<Root> {
        let wins = pos.winning_moves();
        if wins != 0 {
            return Some(Root {
                best: WIN * pos.win_now_score(),
                candidates: wins,
                order: Vec::new(),
            });
        }
        let non_losing = pos.non_losing_moves();
        if non_losing == 0 {
            // Every move loses to the opponent's next disc.
            return Some(Root {
                best: WIN * pos.lose_next_score(),
                candidates: pos.possible(),
                order: Vec::new(),
            });
        }
        let mut order: Vec<u64> = MoveOrder::new(pos, non_losing).collect();
        let mut found = None;
        for depth in 1..=max_depth {
            self.nodes = 0;
            let Some(root) = self.root(pos, depth, &order, margin) else {
                break;
            };
            order = root.order.iter().map(|&(bit, _)| bit).collect();
            let proven = root.best.abs() >= WIN;
            found = Some(root);
            if proven || pos.moves + depth as i32 >= CELLS {
                break;
            }
        }
        found
    }
}

// ---------------------------------------------------------------------------------------------
// CPU levels.

/// Node budget and depth of level 3's search.
const LEVEL3_DEPTH: u32 = 6;
const LEVEL3_NODES: u64 = 200_000;
/// Heuristic values within this of the best count as equally good at level 3.
const LEVEL3_MARGIN: i32 = 30;
/// Level 4: deep search.
const LEVEL4_DEPTH: u32 = 12;
const LEVEL4_NODES: u64 = 2_000_000;
/// Level 5: the exact solver's budget for the score and then for the moves, its table, and the
/// first ply it is tried at (before it the budget cannot suffice).
const LEVEL5_SCORE_NODES: u64 = 4_000_000;
const LEVEL5_MOVE_NODES: u64 = 2_000_000;
/// Level 5 picks among equally good moves with a look-ahead of this depth and budget.
const LEVEL5_PREFERENCE_DEPTH: u32 = 8;
const LEVEL5_PREFERENCE_NODES: u64 = 300_000;
const LEVEL5_TABLE: usize = 1 << 21;
const LEVEL5_SOLVE_FROM_PLY: i32 = 8;

/// The CPU's column at `level` (3: a shallow search, 4: a deep search, 5: the opening book's
/// winning moves as the first player, then perfect play when the solver finishes within its
/// budget, the deep search otherwise), or `None` when the game is
/// over. Levels below 3 play as 3 and above 5 as 5 (levels 1 and 2 live in `crate::cpu`).
///
/// The choice depends only on the position, the level and `seed`: every bound is a node count,
/// and ties between equally good moves are broken by a generator seeded from `seed` and the
/// position.
pub fn choose(pos: &FourInARow, level: u8, seed: u64) -> Option<Column> {
    if pos.outcome().is_some() {
        return None;
    }
    let p = Pos::new(pos);
    let mut rng = SplitMix64(seed ^ p.key().wrapping_mul(0xD1B5_4A32_D192_ED03));
    let candidates = match level {
        ..=3 => deep_candidates(&p, LEVEL3_DEPTH, LEVEL3_NODES, LEVEL3_MARGIN),
        4 => deep_candidates(&p, LEVEL4_DEPTH, LEVEL4_NODES, 0),
        _ => perfect_candidates(&p),
    };
    rng.pick(&candidates)
}

/// The moves a deep search finds best (within `margin`).
fn deep_candidates(pos: &Pos, depth: u32, nodes: u64, margin: i32) -> Vec<Column> {
    let mut search = Heuristic::new(nodes);
    match search.deepen(pos, depth, margin) {
        Some(root) => columns_of(root.candidates),
        None => columns_of(pos.possible()),
    }
}

/// Level 5: the opening book's winning column when the first player meets a book position;
/// otherwise the moves proven best by the solver when it finishes within its budget, or by the
/// look-ahead when it sees the end of the game. When the solver runs out before the exact score
/// but has proven a bound (say "at least a draw"), the deep search's first choice that keeps the
/// bound is played; with nothing proven, the deep search's choice.
fn perfect_candidates(p: &Pos) -> Vec<Column> {
    if p.moves < book::BOOK_PLIES
        && let Some(bit) = book::lookup(p)
    {
        return columns_of(bit);
    }
    let table = Table::new(LEVEL5_TABLE);
    let limits = Limits::nodes(LEVEL5_SCORE_NODES);
    let mut run = Run::new(&table, &limits);
    let mut bound = None;
    if p.moves >= LEVEL5_SOLVE_FROM_PLY && p.winning_moves() == 0 {
        match run.score(p) {
            Ok(score) => {
                run.extend(LEVEL5_MOVE_NODES);
                let mut best = 0;
                for bit in MoveOrder::new(p, p.possible()) {
                    match run.reaches(p, bit, score) {
                        Some(true) => best |= bit,
                        Some(false) => {}
                        None => break,
                    }
                }
                if best != 0 && score <= 0 && best.count_ones() > 1 {
                    run.extend(LEVEL5_MOVE_NODES);
                    best = fewest_safe_replies(&mut run, p, best, score).unwrap_or(best);
                }
                if best != 0 {
                    return columns_of(most_promising(p, best));
                }
                bound = Some(score);
            }
            // A bound that every non-losing move keeps tells nothing.
            Err((min, _)) if min > -(CELLS - 2 - p.moves) / 2 => bound = Some(min),
            Err(_) => {}
        }
    }
    let mut search = Heuristic::new(LEVEL4_NODES);
    let Some(deep) = search.deepen(p, LEVEL4_DEPTH, 0) else {
        return columns_of(p.possible());
    };
    if deep.best.abs() >= WIN {
        return columns_of(deep.candidates);
    }
    if let Some(bound) = bound {
        run.extend(LEVEL5_MOVE_NODES);
        for &(bit, _) in &deep.order {
            match run.reaches(p, bit, bound) {
                Some(true) => return columns_of(bit),
                Some(false) => {}
                None => break,
            }
        }
    }
    columns_of(deep.candidates)
}

/// Among `moves`, all reaching `score` (a draw or a loss), those that leave the opponent the
/// fewest replies keeping its due: against a fallible opponent, the best chances to turn the
/// game. `None` when the budget ran out first.
fn fewest_safe_replies(run: &mut Run, p: &Pos, moves: u64, score: i32) -> Option<u64> {
    let mut fewest = u32::MAX;
    let mut chosen = 0;
    let mut rest = moves;
    while rest != 0 {
        let bit = rest & rest.wrapping_neg();
        rest ^= bit;
        let mut child = *p;
        child.play(bit);
        let safe = if child.moves == CELLS || child.winning_moves() != 0 {
            // The game ends now or at once: nothing to hope for from this move.
            u32::MAX - 1
        } else {
            let mut safe = 0;
            let mut replies = child.possible();
            while replies != 0 {
                let reply = replies & replies.wrapping_neg();
                replies ^= reply;
                if run.reaches(&child, reply, -score)? {
                    safe += 1;
                }
            }
            safe
        };
        if safe < fewest {
            fewest = safe;
            chosen = bit;
        } else if safe == fewest {
            chosen |= bit;
        }
    }
    Some(chosen)
}

/// Among moves that are all equally good under perfect play, those a shorter look-ahead likes
/// best: against a fallible opponent, a drawn position is better kept with the move that sets it
/// the most problems.
fn most_promising(p: &Pos, moves: u64) -> u64 {
    if moves.count_ones() <= 1 {
        return moves;
    }
    let order: Vec<u64> = MoveOrder::new(p, moves).collect();
    let mut search = Heuristic::new(LEVEL5_PREFERENCE_NODES);
    match search.root(p, LEVEL5_PREFERENCE_DEPTH, &order, 0) {
        Some(root) if root.candidates != 0 => root.candidates,
        _ => moves,
    }
}

/// Four in a Row table slots of the analysis (8 bytes each: 32 MiB, touched lazily).
pub const ANALYSIS_ENTRIES: usize = 1 << 22;

impl Engine for FourInARow {
    type Analyser = Solver;

    fn analyser() -> Solver {
        Solver::new(ANALYSIS_ENTRIES)
    }

    fn judge(
        solver: &mut Solver,
        pos: &Self,
        limits: &Limits,
        with_moves: bool,
    ) -> Verdict<Column> {
        if with_moves {
            solver.solve(pos, limits)
        } else {
            solver.score(pos, limits)
        }
    }

    fn search_choice(&self, level: u8, seed: u64) -> Option<Column> {
        choose(self, level, seed)
    }

    /// Central columns take part in more lines.
    fn weak_weight(&self, column: Column) -> u64 {
        [1, 2, 4, 6, 4, 2, 1][usize::from(column.index())]
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::games::AnyPosition;

    const L3_R1: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../oracles/connect4/Test_L3_R1"
    ));
    const L2_R1: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../oracles/connect4/Test_L2_R1"
    ));
    const L2_R2: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../oracles/connect4/Test_L2_R2"
    ));
    const L1_R1: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../oracles/connect4/Test_L1_R1"
    ));
    const L1_R2: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../oracles/connect4/Test_L1_R2"
    ));
    const L1_R3: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../oracles/connect4/Test_L1_R3"
    ));

    /// The position after `moves` (column digits from the empty board).
    fn replay(moves: &str) -> FourInARow {
        let mut pos = FourInARow::start();
        for ch in moves.chars() {
            let mv: Column = ch.to_string().parse().expect("a column digit");
            assert!(pos.is_legal(mv), "{moves}: {mv} is illegal");
            pos.play(mv);
        }
        pos
    }

    /// The lines of a test set with the given 1-based numbers: (moves, position, score).
    fn lines(
        set: &'static str,
        numbers: impl IntoIterator<Item = usize>,
    ) -> Vec<(&'static str, FourInARow, i32)> {
        let all: Vec<&str> = set.lines().collect();
        numbers
            .into_iter()
            .map(|n| {
                let line = all[n - 1];
                let (moves, score) = line.split_once(' ').expect("`<moves> <score>`");
                (
                    moves,
                    replay(moves),
                    score.parse().expect("an integer score"),
                )
            })
            .collect()
    }

    fn column(digit: u8) -> Column {
        Column::new(digit - 1).expect("a column from 1 to 7")
    }

    /// The exact score of `pos`, solved without limits.
    fn exact_score(solver: &mut Solver, pos: &FourInARow) -> i32 {
        let verdict = solver.score(pos, &Limits::UNLIMITED);
        assert!(verdict.exact);
        verdict.score
    }

    /// A sample of every set: scores as published. The first lines of the quick sets, fewer of the
    /// slow ones, and four Begin-Hard lines that solve in well under half a million nodes (most of
    /// that set takes seconds a position).
    #[test]
    fn the_solver_scores_a_sample_of_every_test_set_as_published() {
        let sample = [
            ("Test_L3_R1", lines(L3_R1, 1..=200)),
            ("Test_L2_R1", lines(L2_R1, 1..=100)),
            ("Test_L2_R2", lines(L2_R2, 1..=20)),
            ("Test_L1_R1", lines(L1_R1, 1..=100)),
            ("Test_L1_R2", lines(L1_R2, 1..=5)),
            ("Test_L1_R3", lines(L1_R3, [162, 209, 276, 282])),
        ];
        let mut solver = Solver::default();
        for (set, positions) in sample {
            for (moves, pos, expected) in positions {
                solver.reset();
                let verdict = solver.score(&pos, &Limits::UNLIMITED);
                assert!(verdict.exact, "{set} {moves}");
                assert_eq!(verdict.score, expected, "{set} {moves}");
            }
        }
    }

    #[test]
    fn the_parallel_solver_gives_the_sequential_scores_and_best_moves() {
        let positions = [
            lines(L2_R2, 1..=10),
            lines(L1_R1, 1..=30),
            lines(L1_R2, 1..=3),
            lines(L1_R3, [162, 209]),
        ];
        let two = Limits {
            threads: 2,
            ..Limits::UNLIMITED
        };
        let (mut one_thread, mut two_threads) = (Solver::default(), Solver::default());
        for (moves, pos, expected) in positions.into_iter().flatten() {
            one_thread.reset();
            two_threads.reset();
            let sequential = one_thread.solve(&pos, &Limits::UNLIMITED);
            let parallel = two_threads.solve(&pos, &two);
            assert!(parallel.exact, "{moves}");
            assert_eq!(parallel.score, expected, "{moves}");
            assert_eq!(parallel.best_moves, sequential.best_moves, "{moves}");
        }
    }

    #[test]
    fn every_listed_best_move_reaches_the_score_and_every_other_move_falls_short() {
        // Late positions only: a bad move early in a game can take seconds to score exactly.
        let mut positions = lines(L3_R1, 1..=10);
        positions.extend(lines(L2_R1, 1..=10));
        positions.extend(lines(L2_R2, 1..=2));
        let mut solver = Solver::default();
        let mut several = 0;
        for (moves, pos, expected) in positions {
            let verdict = solver.solve(&pos, &Limits::UNLIMITED);
            assert!(verdict.exact, "{moves}");
            assert_eq!(verdict.score, expected, "{moves}");
            assert!(!verdict.best_moves.is_empty(), "{moves}");
            if verdict.best_moves.len() > 1 {
                several += 1;
            }
            for mv in pos.legal_moves() {
                let mut child = pos;
                child.play(mv);
                let value = -exact_score(&mut solver, &child);
                if verdict.best_moves.contains(&mv) {
                    assert_eq!(value, expected, "{moves} then {mv}");
                } else {
                    assert!(value < expected, "{moves} then {mv} is missing");
                }
            }
        }
        assert!(several > 0, "no sampled position had two best moves");
    }

    #[test]
    fn a_child_key_is_the_key_of_the_position_after_the_move() {
        for (moves, pos, _) in lines(L1_R2, 1..=50) {
            let pos = Pos::new(&pos);
            let mut possible = pos.possible();
            while possible != 0 {
                let bit = possible & possible.wrapping_neg();
                let mut child = pos;
                child.play(bit);
                assert_eq!(pos.child_key(bit), child.key(), "{moves} then {bit:#x}");
                possible ^= bit;
            }
        }
    }

    #[test]
    fn the_table_answers_what_was_stored_since_the_last_clear_and_nothing_else() {
        let mut table = Table::new(1024);
        let keys: Vec<u64> = (0..4000u64).map(|k| k * 0x1_0203 + 7).collect();
        assert!(keys.iter().all(|&k| table.get(k).is_none()));
        for (n, &key) in keys.iter().enumerate() {
            let s = (n % 37) as i32 - 18;
            let bound = if n % 2 == 0 {
                Bound::Lower(s)
            } else {
                Bound::Upper(s)
            };
            table.put(key, bound);
            assert_eq!(table.get(key), Some(bound), "{n}");
        }
        // 4000 keys in 1024 slots: the later ones replaced the earlier, never a wrong bound.
        let mut kept = 0;
        for (n, &key) in keys.iter().enumerate() {
            let s = (n % 37) as i32 - 18;
            if let Some(b) = table.get(key) {
                kept += 1;
                let stored = if n % 2 == 0 {
                    Bound::Lower(s)
                } else {
                    Bound::Upper(s)
                };
                assert_eq!(b, stored, "{n}");
            }
        }
        assert!(kept > 500 && kept <= 1024, "{kept}");
        table.clear();
        assert!(keys.iter().all(|&k| table.get(k).is_none()));
        // Past the generations' wrap-around too.
        for _ in 0..(1 << GENERATION_BITS) {
            table.put(keys[0], Bound::Upper(3));
            table.clear();
            assert_eq!(table.get(keys[0]), None);
        }
    }

    #[test]
    fn the_table_size_changes_the_cost_never_the_score() {
        let mut tiny = Solver::new(1024);
        for (moves, pos, expected) in lines(L2_R1, 1..=20).into_iter().chain(lines(L1_R1, 1..=20)) {
            let verdict = tiny.solve(&pos, &Limits::UNLIMITED);
            assert!(verdict.exact, "{moves}");
            assert_eq!(verdict.score, expected, "{moves}");
        }
    }

    #[test]
    fn a_win_with_the_next_disc_scores_by_the_winners_disc_count() {
        let mut solver = Solver::new(1 << 16);
        // Red's 4th disc completes column 4: 22 - 4.
        let verdict = solver.solve(&replay("414141"), &Limits::UNLIMITED);
        assert_eq!(
            (verdict.score, verdict.best_moves, verdict.exact),
            (18, vec![column(4)], true)
        );
        // Red has 2, 3 and 4 along the bottom: columns 1 and 5 both win.
        let verdict = solver.solve(&replay("223344"), &Limits::UNLIMITED);
        assert_eq!(verdict.score, 18);
        assert_eq!(verdict.best_moves, vec![column(1), column(5)]);
        // Yellow (second player) wins with its 4th disc in column 2.
        let verdict = solver.solve(&replay("1212726"), &Limits::UNLIMITED);
        assert_eq!((verdict.score, verdict.best_moves), (18, vec![column(2)]));
    }

    /// Perfect play from oracle positions until someone can win at once: the score there is 22
    /// minus the disc count the winner reaches, and the best moves are exactly the winning ones.
    #[test]
    fn late_immediate_wins_follow_the_same_convention() {
        let mut solver = Solver::default();
        let mut checked = 0;
        for (moves, start, expected) in lines(L3_R1, 1..=40) {
            if expected == 0 {
                continue;
            }
            let mut pos = start;
            loop {
                let verdict = solver.solve(&pos, &Limits::UNLIMITED);
                let me = pos.side_to_move();
                let winning: Vec<Column> = pos
                    .legal_moves()
                    .filter(|&mv| {
                        let mut next = pos;
                        next.play(mv);
                        next.outcome().is_some_and(|o| o.winner == Some(me))
                    })
                    .collect();
                if !winning.is_empty() {
                    let discs_at_win = pos.discs()[me.index()] as i32 + 1;
                    assert_eq!(verdict.score, 22 - discs_at_win, "{moves}");
                    assert_eq!(verdict.best_moves, winning, "{moves}");
                    checked += 1;
                    break;
                }
                pos.play(verdict.best_moves[0]);
            }
        }
        assert!(checked >= 20, "only {checked} wins reached");
    }

    #[test]
    fn a_finished_game_gets_the_score_of_its_result_and_no_moves() {
        let mut solver = Solver::new(1 << 16);
        // Red won with its 4th disc; yellow, to move, has lost that way.
        let verdict = solver.solve(&replay("4141414"), &Limits::UNLIMITED);
        assert_eq!(
            (verdict.score, verdict.best_moves.len(), verdict.exact),
            (-18, 0, true)
        );
    }

    #[test]
    fn a_stop_flag_set_beforehand_gives_an_inexact_verdict_at_once() {
        let stop = AtomicBool::new(true);
        let limits = Limits::stoppable(u64::MAX, Some(&stop));
        let (moves, pos, _) = lines(L1_R3, [1]).remove(0);
        let verdict = Solver::default().solve(&pos, &limits);
        assert!(!verdict.exact, "{moves}");
        assert!(verdict.nodes < 100_000, "{} nodes", verdict.nodes);
        assert!(!verdict.best_moves.is_empty());
        assert!(verdict.best_moves.iter().all(|&mv| pos.is_legal(mv)));
    }

    #[test]
    fn a_spent_node_budget_gives_an_estimate_within_the_score_range() {
        let mut solver = Solver::default();
        for (moves, pos, _) in lines(L1_R2, 1..=10) {
            solver.reset();
            let verdict = solver.solve(&pos, &Limits::nodes(5_000));
            assert!(!verdict.exact, "{moves}");
            assert!(
                (-18..=18).contains(&verdict.score),
                "{moves}: {}",
                verdict.score
            );
            assert!(!verdict.best_moves.is_empty(), "{moves}");
            assert!(
                verdict.best_moves.iter().all(|&mv| pos.is_legal(mv)),
                "{moves}"
            );
        }
    }

    /// The proven bounds of a cut-short search are kept: a won position is never estimated as
    /// lost, nor the other way round, once the first probe has settled it.
    #[test]
    fn an_estimate_never_contradicts_what_the_search_proved() {
        let mut solver = Solver::default();
        for (moves, pos, expected) in lines(L2_R2, 1..=10) {
            let full = solver.score(&pos, &Limits::UNLIMITED).nodes;
            solver.reset();
            let verdict = solver.solve(&pos, &Limits::nodes(full - 1));
            solver.reset();
            if !verdict.exact {
                assert!(
                    verdict.score.signum() * expected.signum() >= 0,
                    "{moves}: {} vs {expected}",
                    verdict.score
                );
            }
        }
    }

    /// Level 2 of `crate::cpu`, as the API plays it.
    fn level_two(pos: &FourInARow, seed: u64) -> Option<Column> {
        let mv = crate::cpu::choose_move(&AnyPosition::FourInARow(*pos), 2, seed)?;
        Some(mv.parse().expect("level 2 names a column"))
    }

    /// A game between two CPU players from the empty board; the winner, if any.
    fn play_out(
        first: impl Fn(&FourInARow, u64) -> Option<Column>,
        second: &impl Fn(&FourInARow, u64) -> Option<Column>,
        seed: u64,
    ) -> (Option<crate::games::Side>, String) {
        let mut pos = FourInARow::start();
        let mut moves = String::new();
        while pos.outcome().is_none() {
            let mv = if pos.ply() % 2 == 0 {
                first(&pos, seed)
            } else {
                second(&pos, seed)
            }
            .expect("a move while the game is on");
            assert!(pos.is_legal(mv), "{moves}: {mv}");
            pos.play(mv);
            moves.push_str(&mv.to_string());
        }
        (pos.outcome().and_then(|o| o.winner), moves)
    }

    /// Level 1 of `crate::cpu`: a uniformly random column.
    fn level_one(pos: &FourInARow, seed: u64) -> Option<Column> {
        let mv = crate::cpu::choose_move(&AnyPosition::FourInARow(*pos), 1, seed)?;
        Some(mv.parse().expect("level 1 names a column"))
    }

    /// Level 5 moving first against `opponent` in 20 seeded games: (wins, draws), asserting that
    /// it never loses.
    fn level_five_first_against(
        name: &str,
        opponent: impl Fn(&FourInARow, u64) -> Option<Column> + Sync,
    ) -> (u32, u32) {
        let (mut wins, mut draws) = (0, 0);
        let games = crate::search::on_every_core(20, |seed| {
            play_out(|p, s| choose(p, 5, s), &opponent, seed)
        });
        for (seed, (winner, moves)) in games.into_iter().enumerate() {
            match winner {
                Some(crate::games::Side::First) => wins += 1,
                None => draws += 1,
                Some(crate::games::Side::Second) => panic!("{name}, seed {seed}: lost {moves}"),
            }
        }
        (wins, draws)
    }

    #[test]
    fn level_five_moving_first_beats_level_one_every_time() {
        assert_eq!(level_five_first_against("level 1", level_one), (20, 0));
    }

    #[test]
    fn level_five_moving_first_beats_level_two_every_time() {
        assert_eq!(level_five_first_against("level 2", level_two), (20, 0));
    }

    #[test]
    fn level_five_moving_first_beats_level_three_every_time() {
        let opponent = |p: &FourInARow, seed| choose(p, 3, seed);
        assert_eq!(level_five_first_against("level 3", opponent), (20, 0));
    }

    #[test]
    fn the_same_position_level_and_seed_give_the_same_move() {
        for (moves, pos, _) in lines(L1_R1, 1..=3).into_iter().chain(lines(L2_R1, 1..=3)) {
            for level in 3..=5 {
                let first = choose(&pos, level, 7);
                assert!(first.is_some_and(|mv| pos.is_legal(mv)), "{moves}");
                assert_eq!(choose(&pos, level, 7), first, "{moves} level {level}");
            }
        }
    }

    #[test]
    fn level_three_varies_its_play_with_the_seed() {
        let start = FourInARow::start();
        let seen: std::collections::BTreeSet<Column> =
            (0..40).filter_map(|seed| choose(&start, 3, seed)).collect();
        assert!(seen.len() > 1, "{seen:?}");
    }

    #[test]
    fn every_level_takes_a_win_and_blocks_a_loss() {
        // Red can complete column 4.
        let win = replay("414141");
        // Red threatens column 4; yellow must block.
        let block = replay("41424");
        for level in 3..=5 {
            for seed in 0..5 {
                assert_eq!(choose(&win, level, seed), Some(column(4)), "level {level}");
                assert_eq!(
                    choose(&block, level, seed),
                    Some(column(4)),
                    "level {level}"
                );
            }
        }
    }

    #[test]
    fn level_five_plays_only_best_moves_once_the_solver_can_finish() {
        let mut solver = Solver::default();
        for (moves, pos, _) in lines(L2_R1, 1..=10).into_iter().chain(lines(L1_R1, 1..=10)) {
            let best = solver.solve(&pos, &Limits::UNLIMITED).best_moves;
            for seed in 0..3 {
                let mv = choose(&pos, 5, seed).expect("a move");
                assert!(best.contains(&mv), "{moves}: {mv} is not among {best:?}");
            }
        }
    }

    #[test]
    fn there_is_no_move_in_a_finished_game() {
        assert_eq!(choose(&replay("4141414"), 5, 1), None);
    }
}
