//! Edmonds' blossom algorithm for maximum-weight matching in general graphs, exact on integers.
//!
//! A port of Joris van Rantwijk's `mwmatching.py` (the code behind networkx's
//! `max_weight_matching` and Lichess's `WMMatching`), which follows Z. Galil, "Efficient
//! Algorithms for Finding Maximum Matching in Graphs", ACM Computing Surveys, 1986: the blossom
//! method for augmenting paths with the primal–dual method for weights, O(n³). Names follow the
//! original so the two read side by side; `NONE` stands for its `-1`. Weights are `i64`, so the
//! dual variables (kept doubled, as in the original) stay integers and the optimum is exact.
//!
//! Vertices are `0..n`; non-trivial blossoms are `n..2n`. Edge `k` has the endpoints `2k` and
//! `2k + 1`; `endpoint[p]` is the vertex of endpoint `p`, and `p ^ 1` is the other end.

/// The original's `-1`: no vertex, edge, endpoint or blossom.
const NONE: usize = usize::MAX;

/// Label of a top-level blossom: free, S (outer), T (inner); `BREADCRUMB` is or-ed in while
/// `scan_blossom` walks back, and `RECYCLED` marks a blossom number not in use.
const FREE: i8 = 0;
const S: i8 = 1;
const T: i8 = 2;
const BREADCRUMB: i8 = 4;
const RECYCLED: i8 = -1;

/// A maximum-weight matching of the graph on vertices `0..n` with the undirected `edges`
/// `(i, j, weight)` (at most one edge per pair, no loops). With `max_cardinality`, only matchings
/// of maximum cardinality are considered. Returns `mate`: `mate[v]` is `Some(partner)`.
///
/// Panics if an edge names a vertex `>= n` or is a loop (callers build the graph themselves).
pub fn max_weight_matching(
    n: usize,
    edges: &[(usize, usize, i64)],
    max_cardinality: bool,
) -> Vec<Option<usize>> {
    if edges.is_empty() || n == 0 {
        return vec![None; n];
    }
    for &(i, j, _) in edges {
        assert!(
            i < n && j < n && i != j,
            "bad edge ({i}, {j}) for {n} vertices"
        );
    }
    let mut m = Matcher::new(n, edges, max_cardinality);
    m.solve();
    m.mate
        .iter()
        .map(|&p| (p != NONE).then(|| m.endpoint[p]))
        .collect()
}

struct Matcher<'a> {
    n: usize,
    edges: &'a [(usize, usize, i64)],
    max_cardinality: bool,
    endpoint: Vec<usize>,
    /// `neighbend[v]`: the remote endpoints of the edges at `v`, flattened (CSR) for speed:
    /// the ones of `v` are `neighbend[nb_start[v]..nb_start[v + 1]]`.
    neighbend: Vec<usize>,
    nb_start: Vec<usize>,
    mate: Vec<usize>,
    label: Vec<i8>,
    labelend: Vec<usize>,
    inblossom: Vec<usize>,
    blossomparent: Vec<usize>,
    blossomchilds: Vec<Vec<usize>>,
    blossombase: Vec<usize>,
    blossomendps: Vec<Vec<usize>>,
    bestedge: Vec<usize>,
    blossombestedges: Vec<Option<Vec<usize>>>,
    unusedblossoms: Vec<usize>,
    dualvar: Vec<i64>,
    allowedge: Vec<bool>,
    queue: Vec<usize>,
    /// Scratch space reused by `add_blossom` (the original allocates it each time).
    bestedgeto: Vec<usize>,
}

impl<'a> Matcher<'a> {
    fn new(n: usize, edges: &'a [(usize, usize, i64)], max_cardinality: bool) -> Self {
        let maxweight = edges.iter().map(|e| e.2).max().unwrap_or(0).max(0);
        let endpoint = (0..2 * edges.len())
            .map(|p| {
                let e = edges[p / 2];
                if p % 2 == 0 { e.0 } else { e.1 }
            })
            .collect();
        let mut degree = vec![0usize; n + 1];
        for &(i, j, _) in edges {
            degree[i + 1] += 1;
            degree[j + 1] += 1;
        }
        for v in 0..n {
            degree[v + 1] += degree[v];
        }
        let nb_start = degree;
        let mut fill = nb_start.clone();
        let mut neighbend = vec![0; 2 * edges.len()];
        for (k, &(i, j, _)) in edges.iter().enumerate() {
            neighbend[fill[i]] = 2 * k + 1;
            fill[i] += 1;
            neighbend[fill[j]] = 2 * k;
            fill[j] += 1;
        }
        let mut blossombase: Vec<usize> = (0..n).collect();
        blossombase.resize(2 * n, NONE);
        let mut dualvar = vec![maxweight; n];
        dualvar.resize(2 * n, 0);
        Matcher {
            n,
            edges,
            max_cardinality,
            endpoint,
            neighbend,
            nb_start,
            mate: vec![NONE; n],
            label: vec![FREE; 2 * n],
            labelend: vec![NONE; 2 * n],
            inblossom: (0..n).collect(),
            blossomparent: vec![NONE; 2 * n],
            blossomchilds: vec![Vec::new(); 2 * n],
            blossombase,
            blossomendps: vec![Vec::new(); 2 * n],
            bestedge: vec![NONE; 2 * n],
            blossombestedges: vec![None; 2 * n],
            unusedblossoms: (n..2 * n).collect(),
            dualvar,
            allowedge: vec![false; edges.len()],
            queue: Vec::new(),
            bestedgeto: vec![NONE; 2 * n],
        }
    }

    /// Twice the slack of edge `k` (not valid inside blossoms).
    fn slack(&self, k: usize) -> i64 {
        let (i, j, wt) = self.edges[k];
        self.dualvar[i] + self.dualvar[j] - 2 * wt
    }

    /// Appends the leaf vertices of blossom `b` to `out`.
    fn leaves(&self, b: usize, out: &mut Vec<usize>) {
        if b < self.n {
            out.push(b);
        } else {
            for &t in &self.blossomchilds[b] {
                if t < self.n {
                    out.push(t);
                } else {
                    self.leaves(t, out);
                }
            }
        }
    }

    fn leaves_of(&self, b: usize) -> Vec<usize> {
        let mut out = Vec::new();
        self.leaves(b, &mut out);
        out
    }

    /// Python-style index into a blossom's cyclic child list (negative wraps).
    fn at(list: &[usize], j: isize) -> usize {
        list[j.rem_euclid(list.len() as isize) as usize]
    }

    /// Labels the top-level blossom of `w` with `t`, reached through remote endpoint `p`.
    fn assign_label(&mut self, w: usize, t: i8, p: usize) {
        let b = self.inblossom[w];
        debug_assert!(self.label[w] == FREE && self.label[b] == FREE);
        self.label[w] = t;
        self.label[b] = t;
        self.labelend[w] = p;
        self.labelend[b] = p;
        self.bestedge[w] = NONE;
        self.bestedge[b] = NONE;
        if t == S {
            let mut queue = std::mem::take(&mut self.queue);
            self.leaves(b, &mut queue);
            self.queue = queue;
        } else if t == T {
            let base = self.blossombase[b];
            let m = self.mate[base];
            debug_assert!(m != NONE);
            self.assign_label(self.endpoint[m], S, m ^ 1);
        }
    }

    /// Traces back from `v` and `w` to find a new blossom (its base) or an augmenting path
    /// (`NONE`).
    fn scan_blossom(&mut self, mut v: usize, mut w: usize) -> usize {
        let mut path = Vec::new();
        let mut base = NONE;
        while v != NONE || w != NONE {
            let mut b = self.inblossom[v];
            if self.label[b] & BREADCRUMB != 0 {
                base = self.blossombase[b];
                break;
            }
            debug_assert!(self.label[b] == S);
            path.push(b);
            self.label[b] = S | BREADCRUMB;
            debug_assert!(self.labelend[b] == self.mate[self.blossombase[b]]);
            if self.labelend[b] == NONE {
                v = NONE;
            } else {
                v = self.endpoint[self.labelend[b]];
                b = self.inblossom[v];
                debug_assert!(self.label[b] == T && self.labelend[b] != NONE);
                v = self.endpoint[self.labelend[b]];
            }
            if w != NONE {
                std::mem::swap(&mut v, &mut w);
            }
        }
        for b in path {
            self.label[b] = S;
        }
        base
    }

    /// Makes a new S-blossom with the given base from edge `k` between two S-vertices.
    fn add_blossom(&mut self, base: usize, k: usize) {
        let (mut v, mut w, _) = self.edges[k];
        let bb = self.inblossom[base];
        let mut bv = self.inblossom[v];
        let mut bw = self.inblossom[w];
        let b = self
            .unusedblossoms
            .pop()
            .unwrap_or_else(|| unreachable!("a graph on n vertices has fewer than n blossoms"));
        self.blossombase[b] = base;
        self.blossomparent[b] = NONE;
        self.blossomparent[bb] = b;
        let mut path = Vec::new();
        let mut endps = Vec::new();
        while bv != bb {
            self.blossomparent[bv] = b;
            path.push(bv);
            endps.push(self.labelend[bv]);
            debug_assert!(self.labelend[bv] != NONE);
            v = self.endpoint[self.labelend[bv]];
            bv = self.inblossom[v];
        }
        path.push(bb);
        path.reverse();
        endps.reverse();
        endps.push(2 * k);
        while bw != bb {
            self.blossomparent[bw] = b;
            path.push(bw);
            endps.push(self.labelend[bw] ^ 1);
            debug_assert!(self.labelend[bw] != NONE);
            w = self.endpoint[self.labelend[bw]];
            bw = self.inblossom[w];
        }
        debug_assert!(self.label[bb] == S);
        self.label[b] = S;
        self.labelend[b] = self.labelend[bb];
        self.dualvar[b] = 0;
        self.blossomchilds[b] = path.clone();
        self.blossomendps[b] = endps;
        for v in self.leaves_of(b) {
            if self.label[self.inblossom[v]] == T {
                self.queue.push(v);
            }
            self.inblossom[v] = b;
        }
        let mut bestedgeto = std::mem::take(&mut self.bestedgeto);
        let mut touched = Vec::new();
        for &bv in &path {
            let nblist: Vec<usize> = match self.blossombestedges[bv].take() {
                Some(list) => list,
                None => {
                    let mut list = Vec::new();
                    for v in self.leaves_of(bv) {
                        for &p in &self.neighbend[self.nb_start[v]..self.nb_start[v + 1]] {
                            list.push(p / 2);
                        }
                    }
                    list
                }
            };
            for k in nblist {
                let (mut i, mut j, _) = self.edges[k];
                if self.inblossom[j] == b {
                    std::mem::swap(&mut i, &mut j);
                }
                let _ = i;
                let bj = self.inblossom[j];
                if bj != b
                    && self.label[bj] == S
                    && (bestedgeto[bj] == NONE || self.slack(k) < self.slack(bestedgeto[bj]))
                {
                    if bestedgeto[bj] == NONE {
                        touched.push(bj);
                    }
                    bestedgeto[bj] = k;
                }
            }
            self.blossombestedges[bv] = None;
            self.bestedge[bv] = NONE;
        }
        // The original lists them in blossom-number order.
        touched.sort_unstable();
        let list: Vec<usize> = touched.iter().map(|&bj| bestedgeto[bj]).collect();
        for &bj in &touched {
            bestedgeto[bj] = NONE;
        }
        self.bestedgeto = bestedgeto;
        self.bestedge[b] = NONE;
        for &k in &list {
            if self.bestedge[b] == NONE || self.slack(k) < self.slack(self.bestedge[b]) {
                self.bestedge[b] = k;
            }
        }
        self.blossombestedges[b] = Some(list);
    }

    /// Expands top-level blossom `b` (at the end of a stage, or a T-blossom during one).
    fn expand_blossom(&mut self, b: usize, endstage: bool) {
        let childs = self.blossomchilds[b].clone();
        for &s in &childs {
            self.blossomparent[s] = NONE;
            if s < self.n {
                self.inblossom[s] = s;
            } else if endstage && self.dualvar[s] == 0 {
                self.expand_blossom(s, endstage);
            } else {
                for v in self.leaves_of(s) {
                    self.inblossom[v] = s;
                }
            }
        }
        if !endstage && self.label[b] == T {
            debug_assert!(self.labelend[b] != NONE);
            let endps = self.blossomendps[b].clone();
            let entrychild = self.inblossom[self.endpoint[self.labelend[b] ^ 1]];
            let mut j = childs
                .iter()
                .position(|&c| c == entrychild)
                .unwrap_or_else(|| unreachable!("the entry child is a child"))
                as isize;
            let (jstep, endptrick): (isize, usize) = if j & 1 == 1 {
                j -= childs.len() as isize;
                (1, 0)
            } else {
                (-1, 1)
            };
            let mut p = self.labelend[b];
            while j != 0 {
                self.label[self.endpoint[p ^ 1]] = FREE;
                let q = Self::at(&endps, j - endptrick as isize);
                self.label[self.endpoint[q ^ endptrick ^ 1]] = FREE;
                self.assign_label(self.endpoint[p ^ 1], T, p);
                self.allowedge[q / 2] = true;
                j += jstep;
                p = Self::at(&endps, j - endptrick as isize) ^ endptrick;
                self.allowedge[p / 2] = true;
                j += jstep;
            }
            let bv = Self::at(&childs, j);
            self.label[self.endpoint[p ^ 1]] = T;
            self.label[bv] = T;
            self.labelend[self.endpoint[p ^ 1]] = p;
            self.labelend[bv] = p;
            self.bestedge[bv] = NONE;
            j += jstep;
            while Self::at(&childs, j) != entrychild {
                let bv = Self::at(&childs, j);
                if self.label[bv] == S {
                    j += jstep;
                    continue;
                }
                let reached = self
                    .leaves_of(bv)
                    .into_iter()
                    .find(|&v| self.label[v] != FREE);
                if let Some(v) = reached {
                    debug_assert!(self.label[v] == T && self.inblossom[v] == bv);
                    self.label[v] = FREE;
                    self.label[self.endpoint[self.mate[self.blossombase[bv]]]] = FREE;
                    self.assign_label(v, T, self.labelend[v]);
                }
                j += jstep;
            }
        }
        self.label[b] = RECYCLED;
        self.labelend[b] = NONE;
        self.blossomchilds[b] = Vec::new();
        self.blossomendps[b] = Vec::new();
        self.blossombase[b] = NONE;
        self.blossombestedges[b] = None;
        self.bestedge[b] = NONE;
        self.unusedblossoms.push(b);
    }

    /// Swaps matched and unmatched edges on the alternating path through blossom `b` from
    /// vertex `v` to its base, and makes `v` the new base.
    fn augment_blossom(&mut self, b: usize, v: usize) {
        let mut t = v;
        while self.blossomparent[t] != b {
            t = self.blossomparent[t];
        }
        if t >= self.n {
            self.augment_blossom(t, v);
        }
        let len = self.blossomchilds[b].len() as isize;
        let i = self.blossomchilds[b]
            .iter()
            .position(|&c| c == t)
            .unwrap_or_else(|| unreachable!("t is a child of b")) as isize;
        let mut j = i;
        let (jstep, endptrick): (isize, usize) = if i & 1 == 1 {
            j -= len;
            (1, 0)
        } else {
            (-1, 1)
        };
        while j != 0 {
            j += jstep;
            let t = Self::at(&self.blossomchilds[b], j);
            let p = Self::at(&self.blossomendps[b], j - endptrick as isize) ^ endptrick;
            if t >= self.n {
                self.augment_blossom(t, self.endpoint[p]);
            }
            j += jstep;
            let t = Self::at(&self.blossomchilds[b], j);
            if t >= self.n {
                self.augment_blossom(t, self.endpoint[p ^ 1]);
            }
            self.mate[self.endpoint[p]] = p ^ 1;
            self.mate[self.endpoint[p ^ 1]] = p;
        }
        self.blossomchilds[b].rotate_left(i as usize);
        self.blossomendps[b].rotate_left(i as usize);
        self.blossombase[b] = self.blossombase[self.blossomchilds[b][0]];
        debug_assert!(self.blossombase[b] == v);
    }

    /// Augments the matching along the path through edge `k` between two S-vertices.
    fn augment_matching(&mut self, k: usize) {
        let (v, w, _) = self.edges[k];
        for (mut s, mut p) in [(v, 2 * k + 1), (w, 2 * k)] {
            loop {
                let bs = self.inblossom[s];
                debug_assert!(self.label[bs] == S);
                debug_assert!(self.labelend[bs] == self.mate[self.blossombase[bs]]);
                if bs >= self.n {
                    self.augment_blossom(bs, s);
                }
                self.mate[s] = p;
                if self.labelend[bs] == NONE {
                    break;
                }
                let t = self.endpoint[self.labelend[bs]];
                let bt = self.inblossom[t];
                debug_assert!(self.label[bt] == T && self.labelend[bt] != NONE);
                s = self.endpoint[self.labelend[bt]];
                let j = self.endpoint[self.labelend[bt] ^ 1];
                debug_assert!(self.blossombase[bt] == t);
                if bt >= self.n {
                    self.augment_blossom(bt, j);
                }
                self.mate[j] = self.labelend[bt];
                p = self.labelend[bt] ^ 1;
            }
        }
    }

    fn solve(&mut self) {
        let n = self.n;
        for _stage in 0..n {
            self.label.fill(FREE);
            self.bestedge.fill(NONE);
            for b in n..2 * n {
                self.blossombestedges[b] = None;
            }
            self.allowedge.fill(false);
            self.queue.clear();
            for v in 0..n {
                if self.mate[v] == NONE && self.label[self.inblossom[v]] == FREE {
                    self.assign_label(v, S, NONE);
                }
            }
            let mut augmented = false;
            loop {
                while !augmented {
                    let Some(v) = self.queue.pop() else { break };
                    debug_assert!(self.label[self.inblossom[v]] == S);
                    for idx in self.nb_start[v]..self.nb_start[v + 1] {
                        let p = self.neighbend[idx];
                        let k = p / 2;
                        let w = self.endpoint[p];
                        if self.inblossom[v] == self.inblossom[w] {
                            continue;
                        }
                        let mut kslack = 0;
                        if !self.allowedge[k] {
                            kslack = self.slack(k);
                            if kslack <= 0 {
                                self.allowedge[k] = true;
                            }
                        }
                        if self.allowedge[k] {
                            if self.label[self.inblossom[w]] == FREE {
                                self.assign_label(w, T, p ^ 1);
                            } else if self.label[self.inblossom[w]] == S {
                                let base = self.scan_blossom(v, w);
                                if base != NONE {
                                    self.add_blossom(base, k);
                                } else {
                                    self.augment_matching(k);
                                    augmented = true;
                                    break;
                                }
                            } else if self.label[w] == FREE {
                                debug_assert!(self.label[self.inblossom[w]] == T);
                                self.label[w] = T;
                                self.labelend[w] = p ^ 1;
                            }
                        } else if self.label[self.inblossom[w]] == S {
                            let b = self.inblossom[v];
                            if self.bestedge[b] == NONE || kslack < self.slack(self.bestedge[b]) {
                                self.bestedge[b] = k;
                            }
                        } else if self.label[w] == FREE
                            && (self.bestedge[w] == NONE || kslack < self.slack(self.bestedge[w]))
                        {
                            self.bestedge[w] = k;
                        }
                    }
                }
                if augmented {
                    break;
                }

                // No augmenting path under these constraints: compute delta (doubled, like
                // the duals) and pump slack out of the dual problem.
                let mut deltatype = 0u8;
                let mut delta = 0i64;
                let mut deltaedge = NONE;
                let mut deltablossom = NONE;
                if !self.max_cardinality {
                    deltatype = 1;
                    delta = self.dualvar[..n].iter().copied().min().unwrap_or(0);
                }
                for v in 0..n {
                    if self.label[self.inblossom[v]] == FREE && self.bestedge[v] != NONE {
                        let d = self.slack(self.bestedge[v]);
                        if deltatype == 0 || d < delta {
                            delta = d;
                            deltatype = 2;
                            deltaedge = self.bestedge[v];
                        }
                    }
                }
                for b in 0..2 * n {
                    if self.blossomparent[b] == NONE
                        && self.label[b] == S
                        && self.bestedge[b] != NONE
                    {
                        let kslack = self.slack(self.bestedge[b]);
                        debug_assert!(kslack % 2 == 0);
                        let d = kslack / 2;
                        if deltatype == 0 || d < delta {
                            delta = d;
                            deltatype = 3;
                            deltaedge = self.bestedge[b];
                        }
                    }
                }
                for b in n..2 * n {
                    if self.blossombase[b] != NONE
                        && self.blossomparent[b] == NONE
                        && self.label[b] == T
                        && (deltatype == 0 || self.dualvar[b] < delta)
                    {
                        delta = self.dualvar[b];
                        deltatype = 4;
                        deltablossom = b;
                    }
                }
                if deltatype == 0 {
                    // Maximum-cardinality optimum: a last update keeps the duals verifiable.
                    debug_assert!(self.max_cardinality);
                    deltatype = 1;
                    delta = self.dualvar[..n].iter().copied().min().unwrap_or(0).max(0);
                }
                for v in 0..n {
                    match self.label[self.inblossom[v]] {
                        S => self.dualvar[v] -= delta,
                        T => self.dualvar[v] += delta,
                        _ => {}
                    }
                }
                for b in n..2 * n {
                    if self.blossombase[b] != NONE && self.blossomparent[b] == NONE {
                        match self.label[b] {
                            S => self.dualvar[b] += delta,
                            T => self.dualvar[b] -= delta,
                            _ => {}
                        }
                    }
                }
                match deltatype {
                    1 => break,
                    2 => {
                        self.allowedge[deltaedge] = true;
                        let (mut i, j, _) = self.edges[deltaedge];
                        if self.label[self.inblossom[i]] == FREE {
                            i = j;
                        }
                        debug_assert!(self.label[self.inblossom[i]] == S);
                        self.queue.push(i);
                    }
                    3 => {
                        self.allowedge[deltaedge] = true;
                        let (i, _, _) = self.edges[deltaedge];
                        debug_assert!(self.label[self.inblossom[i]] == S);
                        self.queue.push(i);
                    }
                    _ => self.expand_blossom(deltablossom, false),
                }
            }
            if !augmented {
                break;
            }
            for b in n..2 * n {
                if self.blossomparent[b] == NONE
                    && self.blossombase[b] != NONE
                    && self.label[b] == S
                    && self.dualvar[b] == 0
                {
                    self.expand_blossom(b, true);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The original's unit tests (all but the floating-point one), vertex for vertex.
    use super::*;

    fn mates(n: usize, edges: &[(usize, usize, i64)], maxcard: bool) -> Vec<i64> {
        max_weight_matching(n, edges, maxcard)
            .into_iter()
            .map(|m| m.map_or(-1, |v| v as i64))
            .collect()
    }

    fn n_of(edges: &[(usize, usize, i64)]) -> usize {
        edges.iter().map(|e| e.0.max(e.1) + 1).max().unwrap_or(0)
    }

    fn check(edges: &[(usize, usize, i64)], maxcard: bool, expect: &[i64]) {
        assert_eq!(mates(n_of(edges), edges, maxcard), expect, "{edges:?}");
    }

    #[test]
    fn simple_graphs_and_negative_weights() {
        assert_eq!(mates(0, &[], false), Vec::<i64>::new());
        check(&[(0, 1, 1)], false, &[1, 0]);
        check(&[(1, 2, 10), (2, 3, 11)], false, &[-1, -1, 3, 2]);
        check(
            &[(1, 2, 5), (2, 3, 11), (3, 4, 5)],
            false,
            &[-1, -1, 3, 2, -1],
        );
        check(&[(1, 2, 5), (2, 3, 11), (3, 4, 5)], true, &[-1, 2, 1, 4, 3]);
        let neg = [(1, 2, 2), (1, 3, -2), (2, 3, 1), (2, 4, -1), (3, 4, -6)];
        check(&neg, false, &[-1, 2, 1, -1, -1]);
        check(&neg, true, &[-1, 3, 4, 1, 2]);
    }

    #[test]
    fn an_s_blossom_used_for_augmentation() {
        // S-blossom, used for augmentation.
        check(
            &[(1, 2, 8), (1, 3, 9), (2, 3, 10), (3, 4, 7)],
            false,
            &[-1, 2, 1, 4, 3],
        );
        check(
            &[
                (1, 2, 8),
                (1, 3, 9),
                (2, 3, 10),
                (3, 4, 7),
                (1, 6, 5),
                (4, 5, 6),
            ],
            false,
            &[-1, 6, 3, 2, 5, 4, 1],
        );
    }

    #[test]
    fn an_s_blossom_relabelled_as_t() {
        // S-blossom relabelled as T-blossom.
        check(
            &[
                (1, 2, 9),
                (1, 3, 8),
                (2, 3, 10),
                (1, 4, 5),
                (4, 5, 4),
                (1, 6, 3),
            ],
            false,
            &[-1, 6, 3, 2, 5, 4, 1],
        );
        check(
            &[
                (1, 2, 9),
                (1, 3, 8),
                (2, 3, 10),
                (1, 4, 5),
                (4, 5, 3),
                (1, 6, 4),
            ],
            false,
            &[-1, 6, 3, 2, 5, 4, 1],
        );
        check(
            &[
                (1, 2, 9),
                (1, 3, 8),
                (2, 3, 10),
                (1, 4, 5),
                (4, 5, 3),
                (3, 6, 4),
            ],
            false,
            &[-1, 2, 1, 6, 5, 4, 3],
        );
    }

    #[test]
    fn a_nested_s_blossom() {
        // Nested S-blossom.
        check(
            &[
                (1, 2, 9),
                (1, 3, 9),
                (2, 3, 10),
                (2, 4, 8),
                (3, 5, 8),
                (4, 5, 10),
                (5, 6, 6),
            ],
            false,
            &[-1, 3, 4, 1, 2, 6, 5],
        );
    }

    #[test]
    fn an_s_blossom_relabelled_as_s_inside_a_nested_one() {
        // S-blossom relabelled as S, included in a nested S-blossom.
        check(
            &[
                (1, 2, 10),
                (1, 7, 10),
                (2, 3, 12),
                (3, 4, 20),
                (3, 5, 20),
                (4, 5, 25),
                (5, 6, 10),
                (6, 7, 10),
                (7, 8, 8),
            ],
            false,
            &[-1, 2, 1, 4, 3, 6, 5, 8, 7],
        );
    }

    #[test]
    fn a_nested_s_blossom_augmented_and_expanded_recursively() {
        // Nested S-blossom, augment, expand recursively.
        check(
            &[
                (1, 2, 8),
                (1, 3, 8),
                (2, 3, 10),
                (2, 4, 12),
                (3, 5, 12),
                (4, 5, 14),
                (4, 6, 12),
                (5, 7, 12),
                (6, 7, 14),
                (7, 8, 12),
            ],
            false,
            &[-1, 2, 1, 5, 6, 3, 4, 8, 7],
        );
    }

    #[test]
    fn an_s_blossom_relabelled_as_t_and_expanded() {
        // S-blossom relabelled as T, expanded.
        check(
            &[
                (1, 2, 23),
                (1, 5, 22),
                (1, 6, 15),
                (2, 3, 25),
                (3, 4, 22),
                (4, 5, 25),
                (4, 8, 14),
                (5, 7, 13),
            ],
            false,
            &[-1, 6, 3, 2, 8, 7, 1, 5, 4],
        );
    }

    #[test]
    fn a_nested_s_blossom_relabelled_as_t_and_expanded() {
        // Nested S-blossom relabelled as T, expanded.
        check(
            &[
                (1, 2, 19),
                (1, 3, 20),
                (1, 8, 8),
                (2, 3, 25),
                (2, 4, 18),
                (3, 5, 18),
                (4, 5, 13),
                (4, 7, 7),
                (5, 6, 7),
            ],
            false,
            &[-1, 8, 3, 2, 7, 6, 5, 4, 1],
        );
    }

    #[test]
    fn a_blossom_relabelled_as_t_in_two_ways_expanded_and_augmented() {
        // Blossom relabelled as T in more than one way, expanded, augmented.
        let nasty = |e48: i64, e57: i64| {
            [
                (1, 2, 45),
                (1, 5, 45),
                (2, 3, 50),
                (3, 4, 45),
                (4, 5, 50),
                (1, 6, 30),
                (3, 9, 35),
                (4, 8, e48),
                (5, 7, e57),
                (9, 10, 5),
            ]
        };
        let nasty_mates = [-1, 6, 3, 2, 8, 7, 1, 5, 4, 10, 9];
        check(&nasty(35, 26), false, &nasty_mates);
        check(&nasty(26, 40), false, &nasty_mates);
        // ... such that a new least-slack S-to-free edge is produced.
        check(&nasty(28, 26), false, &nasty_mates);
    }

    #[test]
    fn a_nested_blossom_relabelled_as_t_in_two_ways_with_the_inner_one_on_the_path() {
        // Nested blossom relabelled as T in more than one way, expanded so that the inner
        // blossom ends up on an augmenting path.
        check(
            &[
                (1, 2, 45),
                (1, 7, 45),
                (2, 3, 50),
                (3, 4, 45),
                (4, 5, 95),
                (4, 6, 94),
                (5, 6, 94),
                (6, 7, 50),
                (1, 8, 30),
                (3, 11, 35),
                (5, 9, 36),
                (7, 10, 26),
                (11, 12, 5),
            ],
            false,
            &[-1, 8, 3, 2, 6, 9, 4, 10, 1, 5, 7, 12, 11],
        );
    }

    #[test]
    fn a_nested_s_blossom_relabelled_as_s_and_expanded_recursively() {
        // Nested S-blossom relabelled as S, expanded recursively.
        check(
            &[
                (1, 2, 40),
                (1, 3, 40),
                (2, 3, 60),
                (2, 4, 55),
                (3, 5, 55),
                (4, 5, 50),
                (1, 8, 15),
                (5, 7, 30),
                (7, 6, 10),
                (8, 10, 10),
                (4, 9, 30),
            ],
            false,
            &[-1, 2, 1, 5, 9, 3, 7, 6, 10, 4, 8],
        );
    }
}
