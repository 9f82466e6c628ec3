//! The Merkle tree over the whole log (RFC 9162's, as certificate transparency logs use it):
//! tree hashes, inclusion and consistency proofs, and their checks. Pure: nodes come in through
//! [`Nodes`], so the same code answers from memory, from the tiles stored in the database
//! ([`crate::tree`]) or from a published copy of the leaves.
//!
//! A leaf is one event, in the log's commit-safe `(tx, position)` order; its data is the
//! event's chain hash (which covers its content and, through `prev_hash`, its stream's past).
//! `leaf = sha256(0x00 || event hash)`, `node = sha256(0x01 || left || right)`; the root of `n`
//! leaves splits at the largest power of two below `n`.

use sha2::{Digest, Sha256};

use crate::canonical::Hash;

/// The hash of a leaf whose data is `event_hash`.
pub fn leaf_hash(event_hash: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(event_hash);
    h.finalize().into()
}

/// The hash of an inner node.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// The root of an empty tree: `sha256()` of nothing.
pub fn empty_root() -> Hash {
    Sha256::new().finalize().into()
}

/// Complete subtrees: the node of height `height` at `index` covers the leaves
/// `[index << height, (index + 1) << height)`. Height 0 is the leaf hashes themselves.
pub trait Nodes {
    /// The node's hash; `None` when it is not known (its leaves are not all there).
    fn node(&self, height: u32, index: u64) -> Option<Hash>;
}

/// The largest power of two strictly below `n` (`n >= 2`).
fn split(n: u64) -> u64 {
    debug_assert!(n >= 2);
    1 << (63 - (n - 1).leading_zeros())
}

/// The complete subtrees `(height, index)` that cover `[lo, hi)`, left to right, as RFC 9162's
/// recursion meets them when `lo` is aligned to the range's left part.
fn cover(lo: u64, hi: u64, out: &mut Vec<(u32, u64)>) {
    let n = hi - lo;
    if n == 0 {
        return;
    }
    if n.is_power_of_two() && lo.is_multiple_of(n) {
        out.push((n.trailing_zeros(), lo >> n.trailing_zeros()));
        return;
    }
    let k = split(n);
    cover(lo, lo + k, out);
    cover(lo + k, hi, out);
}

/// The tree hash of the leaves `[lo, hi)` (`lo` aligned as a left subtree of the tree is).
fn range_hash(nodes: &impl Nodes, lo: u64, hi: u64) -> Option<Hash> {
    let n = hi - lo;
    if n.is_power_of_two() && lo.is_multiple_of(n) {
        return nodes.node(n.trailing_zeros(), lo >> n.trailing_zeros());
    }
    let k = split(n);
    Some(node_hash(
        &range_hash(nodes, lo, lo + k)?,
        &range_hash(nodes, lo + k, hi)?,
    ))
}

/// The root of the tree of the first `size` leaves.
pub fn root(nodes: &impl Nodes, size: u64) -> Option<Hash> {
    if size == 0 {
        return Some(empty_root());
    }
    range_hash(nodes, 0, size)
}

/// The complete subtrees a proof of `leaf` in a tree of `size` leaves reads (to fetch them
/// before computing it).
pub fn inclusion_nodes(leaf: u64, size: u64) -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    let (mut lo, mut hi) = (0, size);
    while hi - lo > 1 {
        let k = split(hi - lo);
        if leaf < lo + k {
            cover(lo + k, hi, &mut out);
            hi = lo + k;
        } else {
            cover(lo, lo + k, &mut out);
            lo += k;
        }
    }
    out
}

/// The inclusion proof of `leaf` in the tree of `size` leaves: the sibling hashes from the leaf
/// up to the root. `None` when `leaf >= size` or a node is missing.
pub fn inclusion_proof(nodes: &impl Nodes, leaf: u64, size: u64) -> Option<Vec<Hash>> {
    if leaf >= size {
        return None;
    }
    let mut path = Vec::new();
    let (mut lo, mut hi) = (0, size);
    while hi - lo > 1 {
        let k = split(hi - lo);
        if leaf < lo + k {
            path.push(range_hash(nodes, lo + k, hi)?);
            hi = lo + k;
        } else {
            path.push(range_hash(nodes, lo, lo + k)?);
            lo += k;
        }
    }
    path.reverse();
    Some(path)
}

/// RFC 9162 §2.1.3.2: true when `proof` shows the leaf `leaf_hash` at `leaf` in the tree of
/// `size` leaves whose root is `root`.
pub fn verify_inclusion(
    leaf_hash: &Hash,
    leaf: u64,
    size: u64,
    proof: &[Hash],
    root: &Hash,
) -> bool {
    if leaf >= size {
        return false;
    }
    let (mut f_n, mut s_n) = (leaf, size - 1);
    let mut r = *leaf_hash;
    for p in proof {
        if s_n == 0 {
            return false;
        }
        if f_n & 1 == 1 || f_n == s_n {
            r = node_hash(p, &r);
            if f_n & 1 == 0 {
                while f_n & 1 == 0 && f_n != 0 {
                    f_n >>= 1;
                    s_n >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        f_n >>= 1;
        s_n >>= 1;
    }
    s_n == 0 && r == *root
}

/// The consistency proof from the tree of `old` leaves to the tree of `new` leaves (RFC 9162
/// §2.1.4.1); empty when `old` is 0 or equals `new`. `None` when `old > new` or a node is
/// missing.
pub fn consistency_proof(nodes: &impl Nodes, old: u64, new: u64) -> Option<Vec<Hash>> {
    if old > new {
        return None;
    }
    if old == 0 || old == new {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    subproof(nodes, old, 0, new, true, &mut out)?;
    Some(out)
}

fn subproof(
    nodes: &impl Nodes,
    m: u64,
    lo: u64,
    hi: u64,
    whole: bool,
    out: &mut Vec<Hash>,
) -> Option<()> {
    let n = hi - lo;
    if m == n {
        if !whole {
            out.push(range_hash(nodes, lo, hi)?);
        }
        return Some(());
    }
    let k = split(n);
    if m <= k {
        subproof(nodes, m, lo, lo + k, whole, out)?;
        out.push(range_hash(nodes, lo + k, hi)?);
    } else {
        subproof(nodes, m - k, lo + k, hi, false, out)?;
        out.push(range_hash(nodes, lo, lo + k)?);
    }
    Some(())
}

/// RFC 9162 §2.1.4.2: true when `proof` shows that the tree of `new` leaves with root
/// `new_root` extends the tree of `old` leaves with root `old_root`.
pub fn verify_consistency(
    old: u64,
    new: u64,
    old_root: &Hash,
    new_root: &Hash,
    proof: &[Hash],
) -> bool {
    if old > new {
        return false;
    }
    if old == new {
        return proof.is_empty() && old_root == new_root;
    }
    if old == 0 {
        return proof.is_empty();
    }
    let mut path = proof.to_vec();
    if old.is_power_of_two() {
        path.insert(0, *old_root);
    }
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    let (mut f_n, mut s_n) = (old - 1, new - 1);
    while f_n & 1 == 1 {
        f_n >>= 1;
        s_n >>= 1;
    }
    let (mut fr, mut sr) = (*first, *first);
    for c in rest {
        if s_n == 0 {
            return false;
        }
        if f_n & 1 == 1 || f_n == s_n {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            if f_n & 1 == 0 {
                while f_n & 1 == 0 && f_n != 0 {
                    f_n >>= 1;
                    s_n >>= 1;
                }
            }
        } else {
            sr = node_hash(&sr, c);
        }
        f_n >>= 1;
        s_n >>= 1;
    }
    s_n == 0 && fr == *old_root && sr == *new_root
}

/// Lower-case hexadecimal.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// A hash written in hexadecimal (either case); `None` for anything else.
pub fn hash_from_hex(text: &str) -> Option<Hash> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let digit = |c: u8| char::from(c).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// A whole tree in memory, built from its leaf hashes: every complete node kept by height.
/// For checks that read every leaf anyway (`discs verify`) and for tests.
#[derive(Debug, Clone, Default)]
pub struct MemoryTree {
    /// `levels[h][i]`: the node of height `h` at index `i`, for every complete one.
    levels: Vec<Vec<Hash>>,
}

impl MemoryTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a leaf whose hash is `leaf` (from [`leaf_hash`]), completing the nodes it closes.
    pub fn push(&mut self, leaf: Hash) {
        let mut node = leaf;
        let mut height = 0;
        loop {
            if self.levels.len() == height {
                self.levels.push(Vec::new());
            }
            let level = &mut self.levels[height];
            level.push(node);
            if level.len() % 2 == 1 {
                return;
            }
            node = node_hash(&level[level.len() - 2], &level[level.len() - 1]);
            height += 1;
        }
    }

    /// The number of leaves.
    pub fn size(&self) -> u64 {
        self.levels.first().map_or(0, |l| l.len() as u64)
    }

    /// The root of the whole tree.
    pub fn root(&self) -> Hash {
        root(self, self.size()).unwrap_or_else(empty_root)
    }
}

impl Nodes for MemoryTree {
    fn node(&self, height: u32, index: u64) -> Option<Hash> {
        let level = self.levels.get(usize::try_from(height).ok()?)?;
        level.get(usize::try_from(index).ok()?).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(n: u64) -> Vec<Hash> {
        (0..n)
            .map(|i| {
                let mut data = [0u8; 32];
                data[..8].copy_from_slice(&i.to_be_bytes());
                leaf_hash(&data)
            })
            .collect()
    }

    /// RFC 9162's definition, written as it reads.
    fn reference(leaves: &[Hash]) -> Hash {
        match leaves.len() {
            0 => empty_root(),
            1 => leaves[0],
            n => {
                let k = split(n as u64) as usize;
                node_hash(&reference(&leaves[..k]), &reference(&leaves[k..]))
            }
        }
    }

    fn tree(leaves: &[Hash]) -> MemoryTree {
        let mut t = MemoryTree::new();
        leaves.iter().for_each(|l| t.push(*l));
        t
    }

    #[test]
    fn the_root_is_rfc_9162s_for_every_size_up_to_70() {
        let all = leaves(70);
        for n in 0..=70 {
            let t = tree(&all[..n]);
            assert_eq!(t.root(), reference(&all[..n]), "size {n}");
            // A bigger tree answers the smaller one's root from the same nodes.
            assert_eq!(root(&tree(&all), n as u64), Some(reference(&all[..n])));
        }
    }

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_a_hash() {
        let h = leaf_hash(&[3; 32]);
        assert_eq!(hash_from_hex(&to_hex(&h)), Some(h));
        assert_eq!(hash_from_hex(&to_hex(&h).to_uppercase()), Some(h));
        assert_eq!(hash_from_hex("00"), None);
        assert_eq!(hash_from_hex(&"g".repeat(64)), None);
        assert_eq!(to_hex(&[0, 255, 16]), "00ff10");
    }

    #[test]
    fn the_empty_root_and_a_known_vector() {
        // sha256 of nothing.
        assert_eq!(
            empty_root()[..4],
            [0xe3, 0xb0, 0xc4, 0x42],
            "RFC 9162's empty tree hash is sha256()"
        );
        // One leaf: the root is that leaf's hash, which prefixes 0x00.
        let l = leaf_hash(&[7; 32]);
        assert_eq!(tree(&[l]).root(), l);
        assert_ne!(l, [7; 32]);
    }

    #[test]
    fn every_inclusion_proof_verifies_and_no_other_leaf_or_index_does() {
        let all = leaves(37);
        let t = tree(&all);
        for n in 1..=37u64 {
            let r = root(&t, n).expect("root");
            for i in 0..n {
                let p = inclusion_proof(&t, i, n).expect("proof");
                assert!(
                    verify_inclusion(&all[i as usize], i, n, &p, &r),
                    "{i} of {n}"
                );
                let other = (i + 1) % n;
                if other != i {
                    assert!(!verify_inclusion(&all[other as usize], i, n, &p, &r));
                    assert!(!verify_inclusion(&all[i as usize], other, n, &p, &r));
                }
                if n < 37 {
                    // The proof is of the tree of n leaves, not of a bigger one.
                    let bigger = root(&t, n + 1).expect("root");
                    assert!(!verify_inclusion(&all[i as usize], i, n + 1, &p, &bigger));
                }
                assert!(!verify_inclusion(&all[i as usize], i, n, &p, &[0; 32]));
                let mut needed = inclusion_nodes(i, n);
                needed.sort_unstable();
                needed.dedup();
                assert!(needed.len() >= p.len(), "the nodes cover the path");
            }
            assert!(inclusion_proof(&t, n, n).is_none());
        }
    }

    #[test]
    fn every_consistency_proof_verifies_and_a_rewritten_past_does_not() {
        let all = leaves(33);
        let t = tree(&all);
        let mut changed = all.clone();
        changed[5] = leaf_hash(&[9; 32]);
        let forged = tree(&changed);
        for new in 1..=33u64 {
            let new_root = root(&t, new).expect("root");
            for old in 0..=new {
                let old_root = root(&t, old).expect("root");
                let p = consistency_proof(&t, old, new).expect("proof");
                assert!(
                    verify_consistency(old, new, &old_root, &new_root, &p),
                    "{old} -> {new}"
                );
                if old > 5 {
                    // A log rewritten at leaf 5 cannot prove it extends the old head.
                    let q = consistency_proof(&forged, old, new).expect("proof");
                    let forged_root = root(&forged, new).expect("root");
                    assert!(!verify_consistency(old, new, &old_root, &forged_root, &q));
                }
                if old > 0 && old < new {
                    assert!(!verify_consistency(old, new, &[0; 32], &new_root, &p));
                }
            }
        }
    }
}
