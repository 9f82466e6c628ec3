//! The registry of open event streams: every stream the server offers (a match's, a
//! tournament's) takes its place here, under the per-player and per-instance caps, and gives it
//! back when it ends. A place ends when its player's rights end ([`enforce`]): their token
//! generation rose past the token the stream was opened with (revocation, closing), their
//! account closed, or an admin banned them. Every instance enforces on hearing the change
//! (the tokens channel), and a stream that opens while the change is under way sees it
//! ([`Registry::admit`]): registered first, then checked.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use deadpool_postgres::GenericClient;
use tokio::sync::watch;

use domain::ids::PlayerId;

use crate::error::{Error, unexpected};
use crate::live::LivePath;
use crate::players::TokenRights;

/// What a stream's player may do now, read once per check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rights {
    /// Their tokens' generation, and whether the account is closed (or unknown: nothing of
    /// theirs streams).
    pub tokens: TokenRights,
    pub banned: bool,
}

impl Rights {
    /// Whether a stream opened with a token of `generation` (none: an external issuer's) may
    /// go on.
    pub fn allow(&self, generation: Option<u32>) -> Result<(), Ended> {
        if self.tokens.ended(generation) {
            Err(Ended::Revoked)
        } else if self.banned {
            Err(Ended::Banned)
        } else {
            Ok(())
        }
    }
}

/// Why a stream was ended (or refused) by its player's rights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The token was revoked or the account closed.
    Revoked,
    /// An admin banned the player.
    Banned,
}

/// `player`'s rights as the database has them.
pub async fn rights(client: &impl GenericClient, player: PlayerId) -> Result<Rights, Error> {
    Ok(Rights {
        tokens: TokenRights {
            generation: crate::players::token_generation(client, player).await?,
            closed: crate::players::closed(client, player).await?,
        },
        banned: crate::standing::banned(client, player).await?,
    })
}

/// The open streams of one instance.
pub struct Registry {
    places: Mutex<Places>,
    next: AtomicU64,
    per_player: usize,
    max_streams: usize,
}

#[derive(Default)]
struct Places {
    total: usize,
    by_player: HashMap<PlayerId, Vec<Open>>,
}

struct Open {
    slot: u64,
    generation: Option<u32>,
    /// The stream of a match the player is seated in.
    own: bool,
    end: watch::Sender<Option<Ended>>,
}

/// A stream's place: held while it runs, given back when dropped. [`Place::ended`] resolves
/// when the player's rights end.
pub struct Place {
    registry: std::sync::Arc<Registry>,
    player: PlayerId,
    slot: u64,
    ended: watch::Receiver<Option<Ended>>,
}

impl Place {
    pub fn player(&self) -> PlayerId {
        self.player
    }

    /// Resolves once the registry ends this place (never otherwise); cancel-safe.
    pub async fn ended(&mut self) -> Ended {
        match self.ended.wait_for(Option::is_some).await {
            Ok(why) => why.unwrap_or(Ended::Revoked),
            Err(_) => std::future::pending().await,
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut guard = self.registry.lock();
        let p = &mut *guard;
        if let Some(open) = p.by_player.get_mut(&self.player)
            && let Some(i) = open.iter().position(|o| o.slot == self.slot)
        {
            open.swap_remove(i);
            p.total = p.total.saturating_sub(1);
            if open.is_empty() {
                p.by_player.remove(&self.player);
            }
        }
    }
}

impl Registry {
    pub fn new(per_player: usize, max_streams: usize) -> Registry {
        Registry {
            places: Mutex::new(Places::default()),
            next: AtomicU64::new(0),
            per_player,
            max_streams,
        }
    }

    /// A place for a stream of `player`, opened with a token of `generation` (none: an external
    /// issuer's), under the caps: at most `per_player` streams of the player and `max_streams`
    /// on the instance, 429 `rate_limited` beyond them. The stream of a match the player is
    /// seated in (`own`) always gets a place while the player has fewer than `per_player` of
    /// those: their game must not go on unseen because others watch or because they follow
    /// tournaments. Not yet checked against the player's rights: [`Registry::admit`] does,
    /// after this.
    pub fn open(
        self: &std::sync::Arc<Self>,
        player: PlayerId,
        generation: Option<u32>,
        own: bool,
    ) -> Result<Place, Error> {
        let mut p = self.lock();
        let open = p
            .by_player
            .get(&player)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let allowed = if own {
            open.iter().filter(|o| o.own).count() < self.per_player
        } else {
            open.len() < self.per_player && p.total < self.max_streams
        };
        if !allowed {
            return Err(Error::RateLimited(5));
        }
        let slot = self.next.fetch_add(1, Ordering::Relaxed);
        let (end, ended) = watch::channel(None);
        p.total += 1;
        p.by_player.entry(player).or_default().push(Open {
            slot,
            generation,
            own,
            end,
        });
        Ok(Place {
            registry: std::sync::Arc::clone(self),
            player,
            slot,
            ended,
        })
    }

    /// Checks an opened `place` against its player's rights as the database has them now. A
    /// change committed before this read is seen here; one committed after it finds the place
    /// registered, and ends it when its instance hears of it.
    pub async fn admit(
        &self,
        core: &crate::core::Core,
        place: &Place,
        generation: Option<u32>,
    ) -> Result<Result<(), Ended>, Error> {
        let client = core.pool.get().await.map_err(crate::error::unexpected)?;
        Ok(rights(&client, place.player).await?.allow(generation))
    }

    /// Ends every place of `player` that `rights` no longer allow; how many.
    pub fn end(&self, player: PlayerId, rights: Rights) -> usize {
        let p = self.lock();
        let Some(open) = p.by_player.get(&player) else {
            return 0;
        };
        let mut ended = 0;
        for o in open {
            if let Err(why) = rights.allow(o.generation) {
                o.end.send_replace(Some(why));
                ended += 1;
            }
        }
        ended
    }

    /// Open streams on this instance.
    pub fn total(&self) -> usize {
        self.lock().total
    }

    /// The players with a stream open on this instance.
    pub fn players(&self) -> Vec<PlayerId> {
        self.lock().by_player.keys().copied().collect()
    }

    /// Open streams of `player` on this instance.
    pub fn of(&self, player: PlayerId) -> usize {
        self.lock().by_player.get(&player).map_or(0, Vec::len)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Places> {
        self.places.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Applies a change of `player`'s rights on this instance (heard on the tokens channel, or made
/// here): ends the streams they no longer allow, and, for a closed account, renames the player
/// in every watched match, so that no frame sent from now on carries the old name.
pub async fn enforce(app: &LivePath, player: PlayerId) -> Result<(), Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let now = rights(&client, player).await?;
    let label = if now.tokens.closed {
        crate::players::name(&client, player).await.ok()
    } else {
        None
    };
    drop(client);
    app.live.registry.end(player, now);
    if let Some(label) = label {
        app.live.rename(player, &label).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn player(n: u128) -> PlayerId {
        PlayerId::from_uuid(uuid::Uuid::from_u128(n))
    }

    const FINE: Rights = Rights {
        tokens: TokenRights {
            generation: 3,
            closed: false,
        },
        banned: false,
    };

    #[test]
    fn caps_hold_per_player_and_per_instance_and_an_own_match_always_gets_a_place() {
        let r = Arc::new(Registry::new(2, 3));
        let a1 = r.open(player(1), Some(3), false).expect("first");
        let _a2 = r.open(player(1), Some(3), false).expect("second");
        assert!(matches!(
            r.open(player(1), Some(3), false),
            Err(Error::RateLimited(_))
        ));
        // Their own match's streams pass both caps, up to the per-player number of them.
        let _own1 = r.open(player(1), Some(3), true).expect("own match");
        let _own2 = r.open(player(1), Some(3), true).expect("own match again");
        assert!(r.open(player(1), Some(3), true).is_err());
        assert!(
            r.open(player(2), Some(3), false).is_err(),
            "the instance is full"
        );
        let _b = r
            .open(player(2), Some(3), true)
            .expect("own match on a full instance");
        assert_eq!(r.total(), 5);
        drop(a1);
        assert_eq!((r.total(), r.of(player(1))), (4, 3));
    }

    #[tokio::test]
    async fn a_place_ends_when_the_rights_it_was_opened_with_end() {
        let r = Arc::new(Registry::new(8, 100));
        let mut old = r.open(player(1), Some(2), false).expect("old token");
        let mut current = r.open(player(1), Some(3), false).expect("current token");
        let mut external = r.open(player(1), None, false).expect("external token");
        let mut other = r.open(player(2), Some(0), false).expect("someone else");
        assert_eq!(r.end(player(1), FINE), 1);
        assert_eq!(old.ended().await, Ended::Revoked);
        let banned = Rights {
            banned: true,
            ..FINE
        };
        assert_eq!(r.end(player(1), banned), 3);
        assert_eq!(current.ended().await, Ended::Banned);
        assert_eq!(external.ended().await, Ended::Banned);
        let closed = Rights {
            tokens: TokenRights {
                closed: true,
                ..FINE.tokens
            },
            ..FINE
        };
        assert_eq!(r.end(player(2), closed), 1);
        assert_eq!(other.ended().await, Ended::Revoked);
    }
}
