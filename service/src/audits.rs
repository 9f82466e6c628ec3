//! What an admin asks of the log and the projections: the ratings recomputed and diffed, a
//! rating explained step by step, the suspicious patterns, every tournament recounted, and the
//! projections' checkpoints and rebuilds.

use uuid::Uuid;

use domain::games::GameId;
use domain::ids::PlayerId;
use domain::ratings::Ladder;
use eventlog::EventLog;
use projections::{audit, rebuild};

pub use projections::Projection;
pub use projections::audit::{
    ExplainedStep, Explanation, FlagRules, Flags, LogCheck, RatingsAudit,
};
pub use projections::queries::{CheckpointRow, RebuildRow};
pub use projections::tournaments::TournamentsAudit;

use crate::core::Core;
use crate::error::{Error, unexpected};
use crate::live::LivePath;
use crate::reasons::Missing;

/// Every rating (of `game`, or both) recomputed from the log and diffed against the projection,
/// every hash chain verified, and what excluding `exclude`'s matches would change.
pub async fn ratings(
    core: &Core,
    game: Option<GameId>,
    exclude: &[PlayerId],
) -> Result<RatingsAudit, Error> {
    core.read(Projection::Ratings, async |log: &EventLog| {
        audit::ratings(log, game, exclude).await.map_err(unexpected)
    })
    .await
}

/// A player's rating on `ladder`, step by step, each step with the events it came from and
/// checked against the steps recomputed from the log.
pub async fn explain(core: &Core, player: PlayerId, ladder: Ladder) -> Result<Explanation, Error> {
    core.read(Projection::Ratings, async |log: &EventLog| {
        audit::explain(log, player, ladder)
            .await
            .map_err(unexpected)
    })
    .await
}

/// The suspicious patterns under the default rules: repeated pairs, very short losses, and
/// engine assistance. These show the best moves of finished games' critical positions, so they
/// are refused to an admin seated in a ranked match, as every position service is.
pub async fn flags(live: &LivePath, admin: PlayerId) -> Result<Flags, Error> {
    crate::analysis::boundary::refuse_seated(live, admin).await?;
    let rules = FlagRules::default();
    let mut flags = audit::flags(&live.log, rules).await.map_err(unexpected)?;
    flags
        .flags
        .extend(crate::analysis::fair::engine_flags(live, &rules).await?);
    Ok(flags)
}

/// Every tournament's standings recounted from the log and diffed against the projection.
pub async fn tournaments(core: &Core) -> Result<TournamentsAudit, Error> {
    audit::tournaments(&core.log).await.map_err(unexpected)
}

/// A projection's checkpoint (beside the end of the log) and its latest rebuild.
pub async fn projection(
    core: &Core,
    p: Projection,
) -> Result<(CheckpointRow, Option<RebuildRow>), Error> {
    let client = core.pool.get().await.map_err(unexpected)?;
    let checkpoint = projections::queries::checkpoint(&client, p.name())
        .await
        .map_err(unexpected)?
        .ok_or(Error::NotFound(Missing::Projection))?;
    let last = projections::queries::latest_rebuild(&client, p.name())
        .await
        .map_err(unexpected)?;
    Ok((checkpoint, last))
}

/// Starts a rebuild of `p` in the background: its id, to follow with [`projection`].
pub async fn start_rebuild(runner: &projections::Runner, p: Projection) -> Result<Uuid, Error> {
    let id = rebuild::register(runner, p).await.map_err(unexpected)?;
    let runner = runner.clone();
    tokio::spawn(async move {
        if let Err(e) = rebuild::rebuild(&runner, p, id, |_| {}).await {
            tracing::warn!(projection = %p, error = %e, "rebuild failed");
        }
    });
    Ok(id)
}
