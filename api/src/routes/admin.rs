//! Admin calls: rating audits, explanations, flags, queue statistics, projection rebuilds, and
//! the Prometheus `/metrics` page. Every call here but `/metrics` needs an admin token (there it
//! adds the pools' statistics).

use actix_web::http::StatusCode;
use actix_web::{FromRequest, HttpRequest, HttpResponse, web};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use service::checks;
use uuid::Uuid;

use domain::games::GameId;
use domain::ids::PlayerId;
use domain::standing::Decision;
use service::audits::{self, Projection};

use crate::auth::Auth;
use crate::error::ApiError;
use crate::idempotency;
use crate::input;
use crate::ratelimit::ByAddress;
use crate::state::ApiState;
use crate::texts;
use service::answers::Body;
use service::metrics;
use service::reasons::Invalid;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    /// Only this game's ratings.
    game: Option<GameId>,
    /// Comma-separated player ids whose matches a what-if leaves out.
    exclude_players: Option<String>,
}

/// A player's rating step by step, with the rules applied and the check against the log.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "RatingExplanation")]
pub struct Explained {
    player_id: PlayerId,
    game: GameId,
    /// The game's correspondence ladder (else its real-time one).
    correspondence: bool,
    /// The Glicko-2 constants and conventions (`domain::ratings`).
    rules: serde_json::Value,
    steps: Vec<audits::ExplainedStep>,
    log_check: audits::LogCheck,
}

/// The queue's pools and the allowed-gap schedule.
#[derive(Serialize, JsonSchema)]
pub struct QueueStats {
    pools: Vec<metrics::PoolStats>,
    /// The allowed-gap schedule and pairing costs the waves use.
    schedule: serde_json::Value,
}

/// A rebuild started in the background.
#[derive(Serialize, JsonSchema)]
pub struct RebuildStarted {
    rebuild_id: Uuid,
}

/// A projection's checkpoint and its latest rebuild.
#[derive(Serialize, JsonSchema)]
pub struct ProjectionStatus {
    name: &'static str,
    /// The log position of the last event applied.
    position: i64,
    /// Events applied since the projection started.
    events: i64,
    /// The log's last position.
    log_position: i64,
    tables: Vec<&'static str>,
    rebuild: Option<RebuildStatus>,
}

#[derive(Serialize, JsonSchema)]
pub struct RebuildStatus {
    rebuild_id: Uuid,
    /// `running`, `done` or `failed`.
    status: String,
    events: i64,
    #[schemars(extend("format" = "date-time"))]
    started_at: Option<String>,
    #[schemars(extend("format" = "date-time"))]
    finished_at: Option<String>,
    error: Option<String>,
}

/// `GET /v1/admin/audits/ratings?game&exclude_players=id,id`.
pub async fn audit_ratings(
    app: web::Data<ApiState>,
    auth: Auth,
    query: Result<web::Query<AuditQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    auth.require_admin()?;
    let q = query.map_err(input::query_error)?;
    let exclude = checks::player_list(q.exclude_players.as_deref())?;
    let report = audits::ratings(&app, q.game, &exclude).await?;
    Ok(HttpResponse::Ok().json(report))
}

/// `GET /v1/admin/players/{id}/ratings/{game}/explain?correspondence`.
pub async fn explain(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<(String, String)>,
    query: Result<web::Query<super::players::LadderQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    auth.require_admin()?;
    let (raw_player, raw_game) = path.into_inner();
    let player: PlayerId = checks::id(&raw_player)?;
    let game = checks::game(&raw_game)?;
    let ladder = query.map_err(input::query_error)?.ladder(game);
    let explanation = audits::explain(&app, player, ladder).await?;
    Ok(HttpResponse::Ok().json(Explained {
        player_id: player,
        game,
        correspondence: ladder.correspondence,
        rules: json!({"tau": domain::ratings::TAU, "start": {"rating": 1500.0, "deviation": 350.0, "volatility": 0.06},
                  "idle_growth": texts::note("rules.idle_growth", &[]),
                  "provisional_above": domain::ratings::Rating::PROVISIONAL_ABOVE,
                  "engine": texts::note("rules.engine", &[])}),
        steps: explanation.steps,
        log_check: explanation.log_check,
    }))
}

/// `GET /v1/admin/flags`. The engine-assistance flags show the best moves of finished games'
/// critical positions: refused to an admin seated in a ranked match, as every position service
/// is.
pub async fn flags(app: web::Data<ApiState>, auth: Auth) -> Result<HttpResponse, ApiError> {
    auth.require_admin()?;
    let flags = audits::flags(&app, auth.player).await?;
    Ok(HttpResponse::Ok().json(flags))
}

/// `GET /v1/admin/queue/stats`.
pub async fn queue_stats(app: web::Data<ApiState>, auth: Auth) -> Result<HttpResponse, ApiError> {
    auth.require_admin()?;
    let pools = crate::exposition::pool_stats(&app).await?;
    Ok(HttpResponse::Ok().json(QueueStats {
        pools,
        schedule: schedule(app.ranked.wave_schedule),
    }))
}

/// When the waves run, and the allowed-gap schedule and pairing costs they use
/// (`domain::matchmaking`).
pub fn schedule(waves: service::ranked::WaveSchedule) -> serde_json::Value {
    let r = domain::matchmaking::Rules::default();
    let n = |name: &'static str, value: &dyn ToString| (name, value.to_string());
    json!({
        "waves": texts::note("schedule.waves", &[
            n("interval_ms", &waves.interval.as_millis()),
            n("trigger", &waves.trigger),
        ]),
        "allowed_gap": texts::note("schedule.allowed_gap", &[
            n("base", &r.base_gap),
            n("per_second", &r.gap_per_second),
            n("max", &r.max_gap),
            n("factor", &r.provisional_factor),
            n("above", &r.provisional_above),
        ]),
        "pair_allowed": texts::note("schedule.pair_allowed", &[]),
        "objective": [
            texts::note("schedule.most_pairs", &[]),
            texts::note("schedule.longest_waiting", &[]),
            texts::note("schedule.least_cost", &[]),
        ],
        "repeat_penalty": texts::note("schedule.repeat_penalty", &[
            n("points", &r.repeat_penalty),
            n("seconds", &(r.repeat_half_life_ms / 1000)),
        ]),
        "exact_up_to": r.exact_limit,
    })
}

fn projection(raw: &str) -> Result<Projection, ApiError> {
    raw.parse().map_err(|_| {
        let known: Vec<&str> = Projection::ALL.iter().map(|p| p.name()).collect();
        Invalid::UnknownProjection {
            raw: raw.to_owned(),
            known: known.join(", "),
        }
        .into()
    })
}

/// `POST /v1/admin/projections/{name}/rebuild`: starts a rebuild in the background; 202.
pub async fn start_rebuild(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    app.limiter.check(&auth.player)?;
    auth.require_admin()?;
    let p = projection(&path)?;
    let id = audits::start_rebuild(&app.projections, p).await?;
    Ok(HttpResponse::build(StatusCode::ACCEPTED).json(RebuildStarted { rebuild_id: id }))
}

/// `GET /v1/admin/projections/{name}`: the checkpoint and the latest rebuild.
pub async fn get_projection(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    auth.require_admin()?;
    let p = projection(&path)?;
    let (cp, last) = audits::projection(&app, p).await?;
    let rfc = |t: Option<time::OffsetDateTime>| {
        t.and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
    };
    let rebuild = last.map(|r| RebuildStatus {
        rebuild_id: r.rebuild_id,
        status: r.status,
        events: r.events,
        started_at: rfc(Some(r.started_at)),
        finished_at: rfc(r.finished_at),
        error: r.error,
    });
    Ok(HttpResponse::Ok().json(ProjectionStatus {
        name: p.name(),
        position: cp.position,
        events: cp.events,
        log_position: cp.log_position,
        tables: p.tables().to_vec(),
        rebuild,
    }))
}

/// `GET /metrics`: Prometheus text; with an admin token, the pools' statistics too (any other
/// caller, a player's token included, gets the public text and takes the address's bucket).
pub async fn prometheus(
    req: HttpRequest,
    app: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let admin = match Auth::extract(&req).await {
        Ok(auth) => auth.require_admin().is_ok(),
        Err(_) => false,
    };
    if !admin {
        ByAddress::extract(&req).await?;
    }
    let body = crate::exposition::prometheus(&app, admin).await?;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(body))
}

/// What ending a player's tokens answers.
#[derive(Serialize, JsonSchema)]
pub struct PlayerTokensEnded {
    player_id: PlayerId,
    /// The player's token generation now: every token issued before carries a lower one.
    generation: u32,
}

/// `POST /v1/admin/players/{id}/tokens/revoke`: ends every token of a player (a lost or stolen
/// device, an account to shut): refused at once on every instance. The player gets no new one:
/// an admin issues one (`discs token`) if the account is to live on.
pub async fn end_player_tokens(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |_, _| async move {
        auth.require_admin()?;
        let player: PlayerId = checks::id(&path)?;
        if player == auth.player {
            return Err(Invalid::OwnTokens.into());
        }
        let generation = service::players::end_tokens(app, player, app.now()).await?;
        app.generations.changed(app, player).await;
        let ended = PlayerTokensEnded {
            player_id: player,
            generation,
        };
        Ok((StatusCode::OK, Body::of(&ended)?))
    })
    .await
}

/// `POST /v1/admin/players/{id}/close`: closes a player's account on their request.
pub async fn close_player(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    app.limiter.check(&auth.player)?;
    auth.require_admin()?;
    let player: PlayerId = checks::id(&path)?;
    if player == auth.player {
        return Err(Invalid::OwnAccount.into());
    }
    let closed = service::closing::close(
        &app.challenges,
        &app.tournaments,
        &app.history,
        player,
        app.now(),
    )
    .await?;
    app.generations.changed(&app, player).await;
    tracing::info!(%player, admin = %auth.player, "an admin closed an account");
    Ok(HttpResponse::Ok().json(super::players::AccountClosed::of(&closed)))
}

/// `GET /v1/admin/players?name=`: the query.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindQuery {
    /// A part of the name (case aside); the names that start with it come first.
    #[schemars(length(min = 1, max = checks::PLAYER_NAME_MAX))]
    name: String,
}

/// A player found by name.
#[derive(Serialize, JsonSchema)]
pub struct FoundPlayer {
    player_id: PlayerId,
    name: String,
    /// Whether an admin's last decision on them is a ban.
    banned: bool,
    /// Whether an admin declared them a bot.
    bot: bool,
}

/// The players found.
#[derive(Serialize, JsonSchema)]
pub struct Found {
    players: Vec<FoundPlayer>,
}

/// `GET /v1/admin/players?name=`: find players by name (at most 20), with their standing.
pub async fn find_players(
    app: web::Data<ApiState>,
    auth: Auth,
    query: Result<web::Query<FindQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    auth.require_admin()?;
    let q = query.map_err(input::query_error)?;
    // No name holds what the checker of text refuses (PostgreSQL refuses NUL, too).
    checks::text("name", &q.name)?;
    if q.name.is_empty() || q.name.chars().count() > checks::PLAYER_NAME_MAX {
        return Err(Invalid::NameToFind.into());
    }
    let found = service::players::find(&app, &q.name, 20).await?;
    let mut players = Vec::with_capacity(found.len());
    for (player_id, name) in found {
        let (standing, _) = service::standing::of(&app, player_id).await?;
        players.push(FoundPlayer {
            player_id,
            name,
            banned: standing.banned(),
            bot: standing.bot(),
        });
    }
    Ok(HttpResponse::Ok().json(Found { players }))
}

/// `POST /v1/admin/players/{id}/decisions`: the body.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "DecisionRequest")]
pub struct DecisionBody {
    decision: Decision,
    /// Why (required for a ban; at most 500 characters; no control character, none that
    /// changes the direction of the text or shows as nothing, at most 3 combining marks on a
    /// character).
    #[serde(default)]
    #[schemars(length(max = 500), regex(pattern = checks::TEXT_PATTERN))]
    reason: String,
}

/// A decision recorded.
#[derive(Serialize, JsonSchema)]
pub struct Decided {
    player_id: PlayerId,
    decision: Decision,
    reason: String,
    /// Whether the player is banned now.
    banned: bool,
    /// Whether the player is a declared bot now.
    bot: bool,
    /// The version of the player's stream (`player-<id>`) with this decision.
    version: i64,
}

/// `POST /v1/admin/players/{id}/decisions`: an admin's decision on a player (cleared, banned
/// with a reason, declared a bot or a human again), an event of the player's stream; a ban or
/// a bot's declaration also closes the player's waiting ticket and pauses their tournament
/// entries (`service::decisions`).
pub async fn decide(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |command_id, body| async move {
        auth.require_admin()?;
        let player: PlayerId = checks::id(&path)?;
        let b: DecisionBody = input::json(&body)?;
        let standing = service::decisions::decide(
            &app.tournaments,
            &app.challenges,
            command_id,
            auth.player,
            player,
            b.decision,
            &b.reason,
        )
        .await?;
        let decided = Decided {
            player_id: player,
            decision: b.decision,
            reason: b.reason.trim().to_owned(),
            banned: standing.banned(),
            bot: standing.bot(),
            version: standing.version,
        };
        Ok((StatusCode::CREATED, Body::of(&decided)?))
    })
    .await
}
