//! The Merkle tree over the whole log, kept in the database as tiles (the tables `log_tree` and
//! `log_tree_tiles`, migration V19), grown by [`EventLog::grow_tree`] and read for proofs by
//! [`EventLog::inclusion`].
//!
//! A tile of level `L` holds up to 256 consecutive nodes of height `8 L` (level 0: the leaf
//! hashes); a proof or a root reads a handful of tiles whatever the log's length. Leaves are the
//! events in commit-safe `(tx, position)` order, below the snapshot horizon, as projections read
//! them: a late commit sorts after every leaf already in the tree, so an event's leaf index never
//! changes. The tiles are a cache of the events' hashes: a writer who edits them gains nothing,
//! since the roots that count are signed and kept outside the database ([`crate::merkle`]).

use std::collections::HashMap;

use deadpool_postgres::GenericClient;

use crate::EventLog;
use crate::canonical::Hash;
use crate::error::Error;
use crate::merkle::{self, Nodes};
use crate::read::{Checkpoint, hash_at};

/// Nodes per tile; a tile of level `L + 1` holds the roots of 256 tiles of level `L`.
const TILE: u64 = 256;
/// Heights per tile level (`TILE = 2^8`).
const TILE_HEIGHT: u32 = 8;

/// The tree's size and root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeHead {
    /// Leaves (events) in the tree.
    pub size: u64,
    /// Its root ([`merkle::root`]).
    pub root: Hash,
    /// Where its last leaf is in the log ([`Checkpoint::START`] for an empty tree).
    pub cursor: Checkpoint,
}

/// A leaf as published: where the event is and its chain hash ([`EventLog::leaves_between`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    /// The event's stream.
    pub stream: String,
    /// Its version in the stream.
    pub version: i64,
    /// Its chain hash (the leaf's data).
    pub hash: Hash,
}

/// Tiles read from the database, answering [`Nodes`] for the complete subtrees they hold.
#[derive(Debug, Default, Clone)]
pub struct Tiles {
    tiles: HashMap<(u32, u64), Vec<Hash>>,
}

impl Tiles {
    /// The tiles a set of complete subtrees `(height, index)` needs.
    fn needed(nodes: &[(u32, u64)]) -> Vec<(u32, u64)> {
        let mut out: Vec<(u32, u64)> = nodes
            .iter()
            .map(|&(h, j)| {
                let (level, rest) = (h / TILE_HEIGHT, h % TILE_HEIGHT);
                (level, (j << rest) / TILE)
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl Nodes for Tiles {
    fn node(&self, height: u32, index: u64) -> Option<Hash> {
        let (level, rest) = (height / TILE_HEIGHT, height % TILE_HEIGHT);
        let first = index.checked_shl(rest)?;
        let tile = self.tiles.get(&(level, first / TILE))?;
        let start = usize::try_from(first % TILE).ok()?;
        let count = 1usize << rest;
        let mut layer: Vec<Hash> = tile.get(start..start + count)?.to_vec();
        while layer.len() > 1 {
            layer = layer
                .chunks(2)
                .map(|p| merkle::node_hash(&p[0], &p[1]))
                .collect();
        }
        layer.first().copied()
    }
}

/// The tree's row and the events after its last leaf, read in the transaction that grows it.
const TREE_FOR_UPDATE: &str = "SELECT size, tx, position FROM log_tree FOR UPDATE";

/// The hashes of the events after `(tx, position)` below the horizon, in log order.
const LEAVES_AFTER: &str = "SELECT e.tx::text::bigint, e.position, e.hash \
    FROM events e \
    WHERE e.tx < pg_snapshot_xmin(pg_current_snapshot()) \
      AND (e.tx, e.position) > ($1::bigint::text::xid8, $2::bigint) \
    ORDER BY e.tx, e.position \
    LIMIT $3";

const LEAVES_BETWEEN: &str = "SELECT e.stream_id, e.version, e.hash FROM events e \
    WHERE (e.tx, e.position) > ($1::bigint::text::xid8, $2::bigint) \
      AND (e.tx, e.position) <= ($3::bigint::text::xid8, $4::bigint) \
    ORDER BY e.tx, e.position";

const TILES: &str = "SELECT t.level, t.idx, t.nodes FROM log_tree_tiles t \
    JOIN unnest($1::int[], $2::bigint[]) AS w(level, idx) \
      ON t.level = w.level AND t.idx = w.idx";

const SAVE_TILES: &str = "INSERT INTO log_tree_tiles (level, idx, nodes) \
    SELECT * FROM unnest($1::int[], $2::bigint[], $3::bytea[]) \
    ON CONFLICT (level, idx) DO UPDATE SET nodes = EXCLUDED.nodes";

const SAVE_TREE: &str = "UPDATE log_tree SET size = $1, tx = $2, position = $3";

/// The number of events ordered before the event at `(tx, position)`: its leaf index.
const LEAF_INDEX: &str = "SELECT (SELECT count(*) FROM events e WHERE (e.tx, e.position) < (x.tx, x.position)) \
    FROM events x WHERE x.position = $1";

fn tiles_from(rows: &[tokio_postgres::Row]) -> Result<Tiles, Error> {
    let mut tiles = Tiles::default();
    for row in rows {
        let (level, idx, bytes): (i32, i64, &[u8]) =
            (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
        if bytes.len() % 32 != 0 {
            return Err(Error::Corrupt(format!(
                "tile {level}/{idx} holds {} bytes",
                bytes.len()
            )));
        }
        let nodes = bytes
            .chunks(32)
            .map(|c| Hash::try_from(c).unwrap_or([0; 32]))
            .collect();
        tiles.tiles.insert((level as u32, idx as u64), nodes);
    }
    Ok(tiles)
}

/// Reads the tiles that hold `nodes`.
async fn read_tiles(client: &impl GenericClient, nodes: &[(u32, u64)]) -> Result<Tiles, Error> {
    let needed = Tiles::needed(nodes);
    let levels: Vec<i32> = needed.iter().map(|&(l, _)| l as i32).collect();
    let idx: Vec<i64> = needed.iter().map(|&(_, i)| i as i64).collect();
    let rows = client.query(TILES, &[&levels, &idx]).await?;
    tiles_from(&rows)
}

/// The complete subtrees the root of `size` leaves reads.
fn root_nodes(size: u64) -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    let mut lo = 0;
    for bit in (0..64).rev() {
        let k = 1u64 << bit;
        if size & k != 0 {
            out.push((bit, lo >> bit));
            lo += k;
        }
    }
    out
}

/// The last, incomplete tile of each level for a tree of `size` leaves: `(level, index, nodes
/// in it)`; the tiles a growing tree rewrites.
fn frontier(size: u64) -> Vec<(u32, u64, u64)> {
    let mut out = Vec::new();
    let mut level = 0;
    while level * TILE_HEIGHT < 64 {
        let count = size >> (level * TILE_HEIGHT);
        if count == 0 {
            break;
        }
        out.push((level, count / TILE, count % TILE));
        level += 1;
    }
    out
}

impl EventLog {
    /// Appends to the tree the events committed since its last leaf (up to `limit` of them), in
    /// one transaction that also moves the tree's cursor; a concurrent caller waits for it and
    /// then finds nothing new. Returns the new head.
    pub async fn grow_tree(&self, limit: i64) -> Result<TreeHead, Error> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let row = tx.query_one(TREE_FOR_UPDATE, &[]).await?;
        let (size, cursor): (i64, Checkpoint) = (
            row.try_get(0)?,
            Checkpoint {
                tx: row.try_get(1)?,
                position: row.try_get(2)?,
            },
        );
        let mut size =
            u64::try_from(size).map_err(|_| Error::Corrupt("negative tree size".into()))?;
        let rows = tx
            .query(LEAVES_AFTER, &[&cursor.tx, &cursor.position, &limit.max(1)])
            .await?;
        if rows.is_empty() {
            let tiles = read_tiles(&tx, &root_nodes(size)).await?;
            let root = merkle::root(&tiles, size)
                .ok_or_else(|| Error::Corrupt(format!("the tiles lack the root of {size}")))?;
            tx.commit().await?;
            return Ok(TreeHead { size, root, cursor });
        }
        // The incomplete tiles, in memory, grown leaf by leaf.
        let edge = frontier(size);
        let keys: Vec<(u32, u64)> = edge.iter().map(|&(l, i, _)| (l, i)).collect();
        let stored = read_tiles_exact(&tx, &keys).await?;
        let mut open: Vec<(u64, Vec<Hash>)> = edge
            .iter()
            .map(|&(l, i, n)| {
                let mut nodes = stored.get(&(l, i)).cloned().unwrap_or_default();
                nodes.truncate(usize::try_from(n).unwrap_or(0));
                (i, nodes)
            })
            .collect();
        let mut written: HashMap<(u32, u64), Vec<Hash>> = HashMap::new();
        let mut last = cursor;
        for row in &rows {
            last = Checkpoint {
                tx: row.try_get(0)?,
                position: row.try_get(1)?,
            };
            let hash = hash_at(row, 2)?;
            let mut node = merkle::leaf_hash(&hash);
            let mut level = 0usize;
            loop {
                if open.len() == level {
                    open.push((0, Vec::new()));
                }
                let (index, nodes) = &mut open[level];
                nodes.push(node);
                if nodes.len() as u64 != TILE {
                    break;
                }
                // A full tile: stored as it is, and its root climbs a level.
                let full = std::mem::take(nodes);
                let mut tree = merkle::MemoryTree::new();
                full.iter().for_each(|n| tree.push(*n));
                node = tree.root();
                written.insert((level as u32, *index), full);
                *index += 1;
                level += 1;
            }
            size += 1;
        }
        for (level, (index, nodes)) in open.iter().enumerate() {
            if !nodes.is_empty() {
                written.insert((level as u32, *index), nodes.clone());
            }
        }
        let (mut levels, mut idx, mut blobs) = (Vec::new(), Vec::new(), Vec::new());
        for ((level, index), nodes) in &written {
            levels.push(*level as i32);
            idx.push(*index as i64);
            blobs.push(nodes.concat());
        }
        tx.execute(SAVE_TILES, &[&levels, &idx, &blobs]).await?;
        tx.execute(SAVE_TREE, &[&(size as i64), &last.tx, &last.position])
            .await?;
        let tiles = read_tiles(&tx, &root_nodes(size)).await?;
        let root = merkle::root(&tiles, size)
            .ok_or_else(|| Error::Corrupt(format!("the tiles lack the root of {size}")))?;
        tx.commit().await?;
        Ok(TreeHead {
            size,
            root,
            cursor: last,
        })
    }

    /// The tree's head as stored, and the root it had at `size` leaves (`None` when the tree is
    /// smaller).
    pub async fn tree_root_at(&self, size: u64) -> Result<Option<Hash>, Error> {
        let client = self.pool.get().await?;
        let current: i64 = client
            .query_one("SELECT size FROM log_tree", &[])
            .await?
            .try_get(0)?;
        if size > u64::try_from(current).unwrap_or(0) {
            return Ok(None);
        }
        let tiles = read_tiles(&client, &root_nodes(size)).await?;
        Ok(merkle::root(&tiles, size))
    }

    /// The leaves after `from` up to and including `to`, in log order: what a checkpoint at
    /// `to` adds to the one at `from`.
    pub async fn leaves_between(
        &self,
        from: Checkpoint,
        to: Checkpoint,
    ) -> Result<Vec<Leaf>, Error> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                LEAVES_BETWEEN,
                &[&from.tx, &from.position, &to.tx, &to.position],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok(Leaf {
                    stream: r.try_get(0)?,
                    version: r.try_get(1)?,
                    hash: hash_at(r, 2)?,
                })
            })
            .collect()
    }

    /// Every event this moment's snapshot sees committed: the size the tree reaches once the
    /// commit horizon has passed them all.
    pub async fn committed_leaves(&self) -> Result<u64, Error> {
        let client = self.pool.get().await?;
        let n: i64 = client
            .query_one("SELECT count(*) FROM events", &[])
            .await?
            .try_get(0)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// The tree's leaves `[from, to)` as its tiles hold them ([`merkle::leaf_hash`]es of the
    /// events' chain hashes, as they were when the tree grew).
    pub async fn tree_leaves(&self, from: u64, to: u64) -> Result<Vec<Hash>, Error> {
        let client = self.pool.get().await?;
        let keys: Vec<(u32, u64)> = (from / TILE..to.div_ceil(TILE)).map(|i| (0, i)).collect();
        let tiles = read_tiles_exact(&client, &keys).await?;
        (from..to)
            .map(|i| {
                tiles
                    .get(&(0, i / TILE))
                    .and_then(|t| t.get((i % TILE) as usize))
                    .copied()
                    .ok_or_else(|| Error::Corrupt(format!("no tile holds leaf {i}")))
            })
            .collect()
    }

    /// An event's place in the tree and the proof that it is there in the tree of `size`
    /// leaves: `(leaf index, audit path)`. `None` when the event is not among those leaves.
    pub async fn inclusion(
        &self,
        position: i64,
        size: u64,
    ) -> Result<Option<(u64, Vec<Hash>)>, Error> {
        let client = self.pool.get().await?;
        let Some(row) = client.query_opt(LEAF_INDEX, &[&position]).await? else {
            return Ok(None);
        };
        let leaf = u64::try_from(row.try_get::<_, i64>(0)?).unwrap_or(u64::MAX);
        if leaf >= size {
            return Ok(None);
        }
        let tiles = read_tiles(&client, &merkle::inclusion_nodes(leaf, size)).await?;
        Ok(merkle::inclusion_proof(&tiles, leaf, size).map(|p| (leaf, p)))
    }

    /// The consistency proof from the tree of `old` leaves to the tree of `new` leaves.
    pub async fn consistency(&self, old: u64, new: u64) -> Result<Option<Vec<Hash>>, Error> {
        let client = self.pool.get().await?;
        // Every complete subtree under `new` that a proof can read: those of both roots and of
        // the boundary at `old` (a handful of tiles).
        let mut nodes = root_nodes(new);
        nodes.extend(root_nodes(old));
        if old > 0 {
            nodes.extend(merkle::inclusion_nodes(old - 1, new));
        }
        let tiles = read_tiles(&client, &nodes).await?;
        Ok(merkle::consistency_proof(&tiles, old, new))
    }
}

/// Reads exactly the tiles `keys`, by `(level, index)`.
async fn read_tiles_exact(
    client: &impl GenericClient,
    keys: &[(u32, u64)],
) -> Result<HashMap<(u32, u64), Vec<Hash>>, Error> {
    let levels: Vec<i32> = keys.iter().map(|&(l, _)| l as i32).collect();
    let idx: Vec<i64> = keys.iter().map(|&(_, i)| i as i64).collect();
    let rows = client.query(TILES, &[&levels, &idx]).await?;
    Ok(tiles_from(&rows)?.tiles)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frontier_and_root_nodes_of_a_tree() {
        assert_eq!(frontier(0), vec![]);
        assert_eq!(frontier(5), vec![(0, 0, 5)]);
        assert_eq!(frontier(256), vec![(0, 1, 0), (1, 0, 1)]);
        assert_eq!(frontier(65_537), vec![(0, 256, 1), (1, 1, 0), (2, 0, 1)]);
        assert_eq!(root_nodes(5), vec![(2, 0), (0, 4)]);
        assert_eq!(
            Tiles::needed(&[(9, 1), (8, 3), (0, 300)]),
            vec![(0, 1), (1, 0)]
        );
    }

    #[test]
    fn tiles_answer_the_nodes_a_memory_tree_does() {
        let mut tree = merkle::MemoryTree::new();
        let mut tiles = Tiles::default();
        let leaves: Vec<Hash> = (0..1000u32)
            .map(|i| merkle::leaf_hash(&[(i % 251) as u8; 32]))
            .collect();
        leaves.iter().for_each(|l| tree.push(*l));
        for (i, chunk) in leaves.chunks(256).enumerate() {
            tiles.tiles.insert((0, i as u64), chunk.to_vec());
        }
        let level1: Vec<Hash> = (0..3).map(|j| tree.node(8, j).expect("node")).collect();
        tiles.tiles.insert((1, 0), level1);
        for size in [1, 2, 255, 256, 257, 700, 1000] {
            assert_eq!(
                merkle::root(&tiles, size),
                merkle::root(&tree, size),
                "{size}"
            );
            for leaf in [0, size / 2, size - 1] {
                assert_eq!(
                    merkle::inclusion_proof(&tiles, leaf, size),
                    merkle::inclusion_proof(&tree, leaf, size)
                );
            }
        }
    }
}
