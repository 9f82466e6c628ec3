//! The live path: a command on a match from its cached state to its commit (`play`, `commit`,
//! `cache`, `loaded`), the live guards of the fair-play boundary as the services read them
//! (`guards`), and the instance's one reader of the log feeding the projections and every
//! open stream (`fanout`), the registry of open streams and the rights they hold to
//! (`streams`), what each kind of stream sends (`feeds`), correspondence games' players and
//! deadlines as rows (`correspondence`), a match created beside another command (`created`),
//! a match's work row and when a command writes it (`work`);
//! [`LivePath`], the context its functions take.

pub mod cache;
pub mod commit;
pub mod correspondence;
pub mod created;
pub mod fanout;
pub mod feeds;
pub mod guards;
pub mod loaded;
pub mod play;
pub mod streams;
pub mod work;

use std::ops::Deref;
use std::sync::Arc;

use domain::standing::Standing;
use domain::tickets::Ticket;

use crate::aggregates::Kept;
use crate::config::PlayConfig;
use crate::core::Core;

/// What the live path uses: the core, the play settings, the match cache, the committer, the
/// fan-out, the cap on concurrent searches (the CPU's moves), the correspondence guards held and
/// the writers' turns of tickets and standings. Cheap to clone.
#[derive(Clone)]
pub struct LivePath {
    pub core: Core,
    pub play: PlayConfig,
    /// Recent match states.
    pub cache: Arc<cache::MatchCache>,
    /// Commits commands in batches.
    pub committer: commit::Committer,
    /// The reader of the log and the fan-out to open streams.
    pub live: Arc<fanout::Live>,
    /// The cap on concurrent CPU searches (moves and analyses).
    pub searches: Arc<crate::searches::Searches>,
    /// The open rated correspondence games' fair-play guards, as this instance holds them.
    pub guards: Arc<guards::Held>,
    /// The turns of this instance's writers of queue tickets and of players' standings (streams
    /// of a few events, read whole by each command: `aggregates::Kept::turns_only`).
    pub tickets: Arc<Kept<Ticket>>,
    pub standings: Arc<Kept<Standing>>,
}

impl Deref for LivePath {
    type Target = Core;

    fn deref(&self) -> &Core {
        &self.core
    }
}

impl LivePath {
    /// Tells this instance's reader of the log that the log has grown (projections follow).
    pub fn wake_projections(&self) {
        self.live.wake();
    }
}
