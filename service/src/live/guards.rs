//! The live guards where the services read them: a live ranked match beyond its public opening
//! publishes its guard with each move (`match_work`'s `live_key` and `live_depth`, written by the
//! live path under the row's version guard), an open rated correspondence game its own
//! (`correspondence_games`, by `live::correspondence`, numbered: [`Held`] keeps them on each
//! instance and reads only what changed), and a [`Boundary`] is the guards of one game read for
//! one question: an analysis, the explorer, or the CPU about to choose a move (whose level that
//! searches plays the level-2 policy at a guarded position, [`cpu_level_at`]). The rule is
//! `domain::boundary`'s; who is refused what is `analysis::boundary`'s.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use deadpool_postgres::GenericClient;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use domain::boundary::{Asked, Guard, withheld};
use domain::cpu;
use domain::games::{AnyPosition, GameId};

use crate::error::{Error, unexpected};
use crate::live::LivePath;

/// The live guards of one game, as read for one question.
#[derive(Clone, Debug)]
pub struct Boundary {
    public: u32,
    /// The live ranked matches' guards.
    guards: Vec<Guard>,
    /// The open rated correspondence games' guards no deeper than the question, as held.
    held: Arc<[Guard]>,
    held_len: usize,
}

impl Boundary {
    /// A boundary that withholds nothing, for the readers of the solved-position cache whose
    /// answers reach nobody before they pass a boundary of their own: the move-quality
    /// assessor (read by admins), a job's runner (its result is read through
    /// `analysis::boundary::refuse_position`).
    pub fn internal() -> Boundary {
        Boundary::of(u32::MAX, Vec::new())
    }

    fn of(public: u32, guards: Vec<Guard>) -> Boundary {
        Boundary {
            public,
            guards,
            held: Arc::new([]),
            held_len: 0,
        }
    }

    /// Whether an answer about `pos` must leave out its value and best moves.
    pub fn withholds(&self, pos: &AnyPosition) -> bool {
        if self.guards.is_empty() && self.held_len == 0 {
            return false;
        }
        let asked = Asked::of(pos);
        withheld(&asked, self.public, &self.guards)
            || withheld(&asked, self.public, &self.held[..self.held_len])
    }

    /// How many live guards it holds.
    pub fn guards(&self) -> usize {
        self.guards.len() + self.held_len
    }
}

/// The boundary for questions about positions of `game` no deeper than `deepest` discs: the
/// guards of its live ranked matches and open rated correspondence games that deep or
/// shallower (a deeper live position has no follower that shallow).
pub async fn load(app: &LivePath, game: GameId, deepest: u32) -> Result<Boundary, Error> {
    let public = app.play.public_plies.of(game);
    if deepest <= public {
        return Ok(Boundary::of(public, Vec::new()));
    }
    let client = app.pool.get().await.map_err(unexpected)?;
    let (guards, held) = tokio::join!(
        guards(&client, game, deepest),
        app.guards.current(&client, game, app.now())
    );
    drop(client);
    let held = held?;
    let held_len = held.partition_point(|g| g.depth() <= deepest);
    Ok(Boundary {
        public,
        guards: guards?,
        held,
        held_len,
    })
}

/// The guards of `game`'s live ranked matches no deeper than `deepest` discs, as published in
/// `match_work` (one row per active match, scanned: no index, so that a move's update of its row
/// stays a HOT update).
pub async fn guards(
    client: &impl GenericClient,
    game: GameId,
    deepest: u32,
) -> Result<Vec<Guard>, Error> {
    let statement = client
        .prepare_cached(
            "SELECT live_key FROM match_work \
             WHERE live_depth <= $1 AND starts_with(live_key, $2)",
        )
        .await
        .map_err(unexpected)?;
    let depth = i16::try_from(deepest).unwrap_or(i16::MAX);
    let prefix = format!("{game}:");
    let rows = client
        .query(&statement, &[&depth, &prefix])
        .await
        .map_err(unexpected)?;
    Ok(rows
        .iter()
        .filter_map(|row| Guard::parse(row.get(0)))
        .filter(|g| g.game() == game)
        .collect())
}

/// After this long without looking at the numbers, an instance reads the guards whole: the
/// drops it would read are kept for twice as long ([`purge_drops`]).
const READ_WHOLE_AFTER: Duration = Duration::minutes(30);

/// How long a dropped guard's number is kept for the instances that have not read it.
pub const DROPS_KEPT: Duration = Duration::hours(1);

/// The guards of the open rated correspondence games, as this instance holds them: on each
/// read, the last number given (`guard_epochs`) is compared with the one held, and only the
/// guards written or dropped since are read (or all of them, the first time and after
/// [`READ_WHOLE_AFTER`] without a look). Many open games then cost a question one row's read,
/// not their guards' (which changed only when somebody moved in one of them).
#[derive(Default)]
pub struct Held {
    state: RwLock<HeldState>,
    /// One reader of the changes at a time; the others wait for what it read.
    reading: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct HeldState {
    /// The last number read, with every change up to it applied (`None`: nothing read yet).
    epoch: Option<i64>,
    /// When the numbers were last looked at.
    looked: Option<OffsetDateTime>,
    by_match: HashMap<Uuid, Guard>,
    /// Each game's guards by depth, shallowest first: made again after a change.
    by_game: HashMap<GameId, Arc<[Guard]>>,
}

impl HeldState {
    fn fresh(&self, epoch: i64, now: OffsetDateTime) -> bool {
        self.epoch.is_some_and(|held| held >= epoch)
            && self.looked.is_some_and(|at| now - at < READ_WHOLE_AFTER)
    }

    /// Applies changes read in the order of their numbers: a guard written (`Some`) or
    /// dropped (`None`).
    fn apply(&mut self, epoch: i64, changes: impl IntoIterator<Item = (Uuid, Option<Guard>)>) {
        for (id, guard) in changes {
            match guard {
                Some(g) => self.by_match.insert(id, g),
                None => self.by_match.remove(&id),
            };
        }
        self.epoch = Some(self.epoch.map_or(epoch, |held| held.max(epoch)));
        let mut by_game: HashMap<GameId, Vec<Guard>> = HashMap::new();
        for g in self.by_match.values() {
            by_game.entry(g.game()).or_default().push(*g);
        }
        self.by_game = by_game
            .into_iter()
            .map(|(game, mut guards)| {
                guards.sort_by_key(Guard::depth);
                (game, guards.into())
            })
            .collect();
    }
}

impl Held {
    /// `game`'s guards by depth (shallowest first), caught up with the log of changes.
    pub async fn current(
        &self,
        client: &impl GenericClient,
        game: GameId,
        now: OffsetDateTime,
    ) -> Result<Arc<[Guard]>, Error> {
        let epoch = last_epoch(client).await?;
        if let Some(guards) = self.fresh(game, epoch, now) {
            return Ok(guards);
        }
        let _reading = self.reading.lock().await;
        if let Some(guards) = self.fresh(game, epoch, now) {
            return Ok(guards);
        }
        let (whole, after) = {
            let state = self.state.read().unwrap_or_else(|p| p.into_inner());
            let whole = state.looked.is_none_or(|at| now - at >= READ_WHOLE_AFTER);
            (whole || state.epoch.is_none(), state.epoch.unwrap_or(-1))
        };
        let (read, changes) = if whole {
            read_whole(client).await?
        } else {
            read_since(client, after).await?
        };
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        if whole {
            state.by_match.clear();
            state.epoch = None;
        }
        state.apply(read.max(epoch), changes);
        state.looked = Some(now);
        Ok(state
            .by_game
            .get(&game)
            .cloned()
            .unwrap_or_else(|| Arc::new([])))
    }

    fn fresh(&self, game: GameId, epoch: i64, now: OffsetDateTime) -> Option<Arc<[Guard]>> {
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        if !state.fresh(epoch, now) {
            return None;
        }
        state.looked = Some(now);
        Some(
            state
                .by_game
                .get(&game)
                .cloned()
                .unwrap_or_else(|| Arc::new([])),
        )
    }
}

/// The last number given to a change of the correspondence guards.
async fn last_epoch(client: &impl GenericClient) -> Result<i64, Error> {
    let statement = client
        .prepare_cached("SELECT n FROM guard_epochs")
        .await
        .map_err(unexpected)?;
    let row = client
        .query_one(&statement, &[])
        .await
        .map_err(unexpected)?;
    Ok(row.get(0))
}

type Changes = (i64, Vec<(Uuid, Option<Guard>)>);

/// Every guard held now, with the highest number among them.
async fn read_whole(client: &impl GenericClient) -> Result<Changes, Error> {
    let rows = client
        .query(
            "SELECT match_id, live_key, guard_epoch FROM correspondence_games \
              WHERE live_key IS NOT NULL",
            &[],
        )
        .await
        .map_err(unexpected)?;
    let epoch = rows.iter().map(|r| r.get::<_, i64>(2)).max().unwrap_or(-1);
    let guards = rows
        .iter()
        .filter_map(|r| Some((r.get(0), Some(Guard::parse(r.get(1))?))))
        .collect();
    Ok((epoch, guards))
}

/// The guards written and dropped after number `after`, in the order of their numbers, with
/// the highest.
async fn read_since(client: &impl GenericClient, after: i64) -> Result<Changes, Error> {
    let rows = client
        .query(
            "SELECT match_id, live_key, guard_epoch FROM correspondence_games \
              WHERE live_key IS NOT NULL AND guard_epoch > $1 \
             UNION ALL \
             SELECT match_id, NULL, epoch FROM guard_drops WHERE epoch > $1 \
             ORDER BY 3",
            &[&after],
        )
        .await
        .map_err(unexpected)?;
    let epoch = rows.last().map_or(after, |r| r.get(2));
    let changes = rows
        .iter()
        .map(|r| {
            let key: Option<&str> = r.get(1);
            (r.get(0), key.and_then(Guard::parse))
        })
        .collect();
    Ok((epoch, changes))
}

/// Purges the numbers of guards dropped before `before`; how many.
pub async fn purge_drops(app: &LivePath, before: OffsetDateTime) -> Result<u64, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    client
        .execute("DELETE FROM guard_drops WHERE dropped_at < $1", &[&before])
        .await
        .map_err(unexpected)
}

/// The level the CPU plays at `position` when asked for `level`: the levels that search (and
/// reach the exact solvers, the solved positions and the books) play [`cpu::GUARDED_LEVEL`]'s
/// policy at a position the fair-play boundary guards, whoever the CPU plays for, so that no
/// CPU move relays a live ranked position's best move.
pub async fn cpu_level_at(app: &LivePath, position: &AnyPosition, level: u8) -> Result<u8, Error> {
    if level <= cpu::GUARDED_LEVEL {
        return Ok(level);
    }
    let guarded = load(app, position.game(), position.ply())
        .await?
        .withholds(position);
    Ok(if guarded { cpu::GUARDED_LEVEL } else { level })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guard of the position `moves` (Four in a Row columns) reaches.
    fn guard(moves: &str) -> Guard {
        let mut pos = AnyPosition::start(GameId::FourInARow);
        for mv in moves.chars() {
            pos.play(&mv.to_string()).expect("a legal move");
        }
        Guard::of(&pos, GameId::FourInARow.public_plies()).expect("past the public opening")
    }

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    fn at(minutes: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + Duration::minutes(minutes)
    }

    #[test]
    fn changes_apply_in_their_order_and_each_game_is_held_by_depth() {
        let (deep, shallow, later) = (
            guard("44533612551177"),
            guard("4453361255"),
            guard("445336125511"),
        );
        let mut state = HeldState::default();
        state.apply(3, [(id(1), Some(deep)), (id(2), Some(shallow))]);
        assert_eq!(state.by_game[&GameId::FourInARow].to_vec(), [shallow, deep]);
        // Game 2 moved on, game 1 ended: the move, then the drop, under later numbers.
        state.apply(5, [(id(2), Some(later)), (id(1), None)]);
        assert_eq!(state.by_game[&GameId::FourInARow].to_vec(), [later]);
        assert_eq!(state.epoch, Some(5));
        // A number lower than the one held (a read that raced a newer one) never lowers it.
        state.apply(4, []);
        assert_eq!(state.epoch, Some(5));
    }

    #[test]
    fn what_is_held_is_fresh_only_at_the_last_number_and_for_a_while() {
        let mut state = HeldState::default();
        assert!(!state.fresh(0, at(0)), "nothing read yet");
        state.apply(7, []);
        state.looked = Some(at(0));
        assert!(state.fresh(7, at(1)));
        assert!(!state.fresh(8, at(1)), "a change since");
        assert!(
            !state.fresh(7, at(30)),
            "not looked at for half an hour: the drops it missed may be purged"
        );
        const { assert!(DROPS_KEPT.whole_minutes() >= 2 * READ_WHOLE_AFTER.whole_minutes()) };
    }
}
