//! Token revocation at the edge: every request's token carries the generation it was issued at
//! (`gen`), and is refused once its player's generation is higher, or their account closed
//! (an external issuer's token too, which carries no generation of ours:
//! `service::players::token_rights`). The rights are cached per instance and the cache is kept true by PostgreSQL:
//! a listener connection hears every change on `discs_tokens` as it commits and drops that
//! player's entry, on every instance. While the listener is not connected (at start, after a
//! lost connection), nothing is cached: every request reads the generation.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use tokio_postgres::AsyncMessage;

use domain::ids::PlayerId;
use service::players::{TOKENS_CHANNEL, TokenRights, token_rights};

use crate::error::{ApiError, unexpected};

/// The most players whose generation one instance keeps (beyond it, the cache starts over).
const MOST_CACHED: usize = 200_000;
/// How long the listener waits before connecting again after a lost connection.
const RECONNECT: Duration = Duration::from_secs(1);

/// The players' token rights this instance has read, kept true by the listener.
pub struct Generations {
    pool: deadpool_postgres::Pool,
    cache: Mutex<HashMap<PlayerId, TokenRights>>,
    /// Whether the listener is connected and listening: the cache is used only then.
    listening: AtomicBool,
    /// Counts the changes heard (and the listener's connections): a generation read while
    /// one was heard may be stale, and is not cached.
    heard: AtomicU64,
    /// The listener's connection, for [`Generations::caught_up`].
    listener: tokio::sync::Mutex<Option<tokio_postgres::Client>>,
}

impl Generations {
    /// The cache, empty and not yet listening; [`Generations::listen`] starts its listener.
    pub fn new(pool: deadpool_postgres::Pool) -> Arc<Generations> {
        Arc::new(Generations {
            pool,
            cache: Mutex::new(HashMap::new()),
            listening: AtomicBool::new(false),
            heard: AtomicU64::new(0),
            listener: tokio::sync::Mutex::new(None),
        })
    }

    /// `player`'s current token rights: from the cache while the listener listens, else from
    /// the database.
    pub async fn current(&self, player: PlayerId) -> Result<TokenRights, ApiError> {
        let listening = self.listening.load(Ordering::Acquire);
        if listening && let Some(&rights) = self.lock().get(&player) {
            return Ok(rights);
        }
        let before = self.heard.load(Ordering::Acquire);
        let client = self.pool.get().await.map_err(unexpected)?;
        let rights = token_rights(&client, player).await?;
        drop(client);
        if listening && self.heard.load(Ordering::Acquire) == before {
            let mut cache = self.lock();
            if cache.len() >= MOST_CACHED {
                cache.clear();
            }
            cache.insert(player, rights);
        }
        Ok(rights)
    }

    /// Waits until the listener has heard (and enforced on the streams) every change committed
    /// before this call (a query on its connection: PostgreSQL sends a session the notifications
    /// committed before the end of its query). For tests and drivers; false when the listener is
    /// not connected.
    pub async fn caught_up(&self) -> bool {
        let listener = self.listener.lock().await;
        match listener.as_ref() {
            Some(client) => client.simple_query("SELECT 1").await.is_ok(),
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PlayerId, TokenRights>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn forget(&self, payload: &str) {
        self.heard.fetch_add(1, Ordering::AcqRel);
        match payload.parse() {
            Ok(player) => {
                self.lock().remove(&player);
            }
            Err(_) => self.lock().clear(),
        }
    }

    /// What a change to `player`'s rights (their tokens ended, their account closed) means on
    /// this instance, in one place: their cached generation dropped, their name dropped from the
    /// match cache, their open streams checked against their rights now
    /// (`service::live::streams::enforce`). The listener does it for each change it hears; the
    /// instance that made the change does it at once, so that it refuses the ended tokens and
    /// ends the streams from its next request on, without waiting to hear itself.
    pub async fn changed(&self, live: &service::live::LivePath, player: PlayerId) {
        self.forget(&player.to_string());
        live.cache.forget_player(player);
        if let Err(e) = service::live::streams::enforce(live, player).await {
            tracing::warn!(error = %e, "a player's streams were not checked");
        }
    }

    fn forget_all(&self) {
        self.heard.fetch_add(1, Ordering::AcqRel);
        self.lock().clear();
    }

    /// Runs the listener until `stopping` is set: connects with `settings`, listens on the
    /// channel, and drops each changed player's entry as the change is heard (on the task that
    /// reads the connection, so before any later answer on it), then has the stream registry
    /// enforce the player's rights (`service::live::streams::enforce`: their streams end, a
    /// closed account's name leaves the watched matches); after a lost connection, stops
    /// caching, forgets everything and connects again.
    pub async fn listen(
        self: Arc<Self>,
        settings: tokio_postgres::Config,
        live: service::live::LivePath,
        stopping: tokio::sync::watch::Receiver<bool>,
    ) {
        let cache = Arc::clone(&live.cache);
        while !*stopping.borrow() {
            match settings.connect(tokio_postgres::NoTls).await {
                Ok((client, mut connection)) => {
                    let me = Arc::clone(&self);
                    let heard = live.clone();
                    let reader = tokio::spawn(async move {
                        let mut messages =
                            futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                        while let Some(Ok(message)) = messages.next().await {
                            if let AsyncMessage::Notification(n) = message {
                                // Awaited here: once `caught_up` answers, every change heard
                                // before it has been applied.
                                match n.payload().parse::<uuid::Uuid>() {
                                    Ok(player) => {
                                        me.changed(&heard, PlayerId::from_uuid(player)).await;
                                    }
                                    Err(_) => me.forget(n.payload()),
                                }
                            }
                        }
                    });
                    let listened = client
                        .batch_execute(&format!("LISTEN {TOKENS_CHANNEL}"))
                        .await;
                    if listened.is_ok() {
                        self.forget_all();
                        cache.clear();
                        // A change may have gone unheard while disconnected: every player with
                        // a stream open here is checked again.
                        let live = live.clone();
                        tokio::spawn(async move {
                            for player in live.live.registry.players() {
                                let _ = service::live::streams::enforce(&live, player).await;
                            }
                        });
                        *self.listener.lock().await = Some(client);
                        self.listening.store(true, Ordering::Release);
                    } else {
                        drop(client);
                    }
                    let _ = reader.await;
                    self.listening.store(false, Ordering::Release);
                    self.listener.lock().await.take();
                    self.forget_all();
                    if listened.is_err() {
                        tracing::warn!("the token listener could not listen");
                    } else {
                        tracing::warn!("the token listener lost its connection");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "the token listener cannot connect"),
            }
            tokio::time::sleep(RECONNECT).await;
        }
    }
}
