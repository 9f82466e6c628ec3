//! The tournaments' routes over `service::tournaments`: create (admins public ones, any player a
//! private one with an invite code), list, read (with the reader's place and current match),
//! join, withdraw, pause, resume, heartbeat, standings, pairings, the event stream, and an
//! admin's removal with its what-if.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use domain::games::GameId;
use domain::ids::{PlayerId, TournamentId};
use domain::matches::TurnSeconds;
use domain::tournaments::limits::{
    ARENA_MINUTES, NAME_MAX, PLAYERS_MAX, PLAYERS_MIN, SWISS_ROUNDS,
};
use domain::tournaments::{EntrantStatus, Format, Tournament};
use service::Error;
use service::answers::Body;
use service::checks::{self, Timestamp};
use service::reasons::{Invalid, JsonIssue};
use service::tournaments::views::{
    Listed, Listing, PairingView, StandingsPage, TournamentView, list, pairings, standings,
};
use service::tournaments::{self as tournaments, Tournaments, commands, feed};

use crate::auth::Auth;
use crate::error::ApiError;
use crate::idempotency;
use crate::input;
use crate::state::ApiState;

/// The turn limit of a tournament's games when its settings do not say (`null`: none).
fn default_turn_seconds() -> Option<TurnSeconds> {
    TurnSeconds::try_from(domain::tournaments::limits::DEFAULT_TURN_SECONDS).ok()
}

/// A tournament's game settings.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "TournamentSettings")]
pub struct TournamentSettings {
    /// Each game's turn limit (`default`); `null` for none.
    #[serde(default = "default_turn_seconds")]
    turn_seconds: Option<TurnSeconds>,
}

impl Default for TournamentSettings {
    fn default() -> Self {
        TournamentSettings {
            turn_seconds: default_turn_seconds(),
        }
    }
}

/// `POST /v1/tournaments`: the body.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "CreateTournamentRequest")]
pub struct NewTournament {
    game: GameId,
    format: Format,
    /// `minLength` to `maxLength` characters once surrounding spaces are dropped; no control
    /// character, none that changes the direction of the text or shows as nothing, at most 3
    /// combining marks on a character.
    #[schemars(length(min = 1, max = NAME_MAX), regex(pattern = checks::NAME_PATTERN))]
    name: String,
    /// In the future, within the days the catalogue's `limits.tournament.scheduled_within_days`
    /// gives (RFC 3339). Players may join from an hour before.
    starts_at: Timestamp,
    /// An arena's length in minutes, `minimum` to `maximum`.
    #[schemars(range(min = *ARENA_MINUTES.start(), max = *ARENA_MINUTES.end()))]
    minutes: Option<u32>,
    /// A Swiss tournament's rounds, `minimum` to `maximum`.
    #[schemars(range(min = *SWISS_ROUNDS.start(), max = *SWISS_ROUNDS.end()))]
    rounds: Option<u32>,
    /// Whether its games move Glicko-2 ratings (as ranked ones do).
    #[serde(default)]
    rated: bool,
    #[serde(default, deserialize_with = "input::object")]
    settings: TournamentSettings,
    /// A private tournament is joined with its invite code; only admins create public ones.
    #[serde(default)]
    private: bool,
    /// `minimum` to `maximum`; a round robin takes fewer (the catalogue's
    /// `limits.tournament.round_robin_players_max`, its default), any other format `maximum` by
    /// default.
    #[schemars(range(min = PLAYERS_MIN, max = PLAYERS_MAX))]
    max_players: Option<u32>,
}

/// A player's place in a tournament, after a command.
#[derive(Serialize, JsonSchema)]
pub struct Membership {
    tournament_id: TournamentId,
    player_id: PlayerId,
    status: EntrantStatus,
}

fn membership(id: TournamentId, t: &Tournament, player: PlayerId) -> Result<Body, Error> {
    let status = t
        .entrant(player)
        .map_or(EntrantStatus::Withdrawn, |e| e.status);
    Body::of(&Membership {
        tournament_id: id,
        player_id: player,
        status,
    })
}

async fn view(
    app: &Tournaments,
    id: TournamentId,
    t: &Tournament,
    reader: PlayerId,
) -> Result<TournamentView, Error> {
    let code = if t.created.private {
        commands::code_of(app, id).await?
    } else {
        None
    };
    Ok(TournamentView::of(id, t, Some(reader), code, app.now()))
}

/// `POST /v1/tournaments`.
pub async fn create(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |command_id, body| async move {
        let b: NewTournament = input::json(&body)?;
        let new = commands::NewTournament {
            name: b.name,
            game: b.game,
            format: b.format,
            starts_at: b.starts_at.get(),
            minutes: b.minutes,
            rounds: b.rounds,
            rated: b.rated,
            turn_seconds: b.settings.turn_seconds,
            private: b.private,
            max_players: b.max_players,
        };
        let admin = auth.require_admin().is_ok();
        let (t, id, code) =
            commands::create(&app.tournaments, auth.player, admin, new, command_id).await?;
        let view = TournamentView::of(id, &t, Some(auth.player), code, app.now());
        Ok((StatusCode::CREATED, Body::of(&view)?))
    })
    .await
}

/// `GET /v1/tournaments`: the query.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// `upcoming` (soonest first, the default), `running` or `finished` (latest first).
    status: Option<Listed>,
    game: Option<GameId>,
    /// Default 50.
    #[schemars(range(min = 1, max = 500))]
    limit: Option<i64>,
    /// The next page: tournaments starting before this instant (after it for `upcoming`;
    /// RFC 3339, of the years 0001 to 9999 in UTC).
    #[serde(default)]
    before: Option<Timestamp>,
}

/// A list of public tournaments.
#[derive(Serialize, JsonSchema)]
pub struct TournamentList {
    tournaments: Vec<Listing>,
}

/// `GET /v1/tournaments?status&game&limit&before`.
pub async fn index(
    app: web::Data<ApiState>,
    _auth: Auth,
    query: Result<web::Query<ListQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let q = query.map_err(input::query_error)?;
    let limit = checks::limit(q.limit)?;
    let listed = q.status.unwrap_or(Listed::Upcoming);
    let before = q.before.map(Timestamp::get);
    let tournaments = list(&app.tournaments, listed, q.game, limit, before).await?;
    Ok(HttpResponse::Ok().json(TournamentList { tournaments }))
}

/// `GET /v1/tournaments/{id}`: the tournament, with the reader's place and current match (a
/// read by a player counts as following it).
pub async fn get(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id: TournamentId = checks::id(&path)?;
    let t = tournaments::load(&app.tournaments, id).await?;
    if t.entrant(auth.player).is_some() {
        commands::seen(&app.tournaments, id, auth.player).await?;
    }
    Ok(HttpResponse::Ok().json(view(&app.tournaments, id, &t, auth.player).await?))
}

/// What a player does to their place in a tournament.
#[derive(Clone, Copy)]
enum Act {
    Join,
    Withdraw,
    Pause,
    Resume,
}

/// A player's command on their place in tournament `path`, keyed.
async fn act(
    app: &ApiState,
    auth: &Auth,
    req: &HttpRequest,
    path: &str,
    payload: web::Payload,
    act: Act,
) -> HttpResponse {
    idempotency::command(app, auth, req, payload, |command_id, _| async move {
        let id: TournamentId = checks::id(path)?;
        let (app, player) = (&app.tournaments, auth.player);
        let t = match act {
            Act::Join => commands::join(app, id, player, false, command_id).await?,
            Act::Withdraw => commands::withdraw(app, id, player, command_id).await?,
            Act::Pause => commands::pause(app, id, player, command_id).await?,
            Act::Resume => commands::resume(app, id, player, command_id).await?,
        };
        Ok((StatusCode::OK, membership(id, &t, player)?))
    })
    .await
}

/// `POST /v1/tournaments/{id}/join`.
pub async fn join(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    act(&app, &auth, &req, &path, payload, Act::Join).await
}

/// `POST /v1/tournaments/join/{code}`: a private tournament by its invite code.
pub async fn join_by_code(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |command_id, _| async move {
        let id = commands::by_code(&app.tournaments, &path).await?;
        let t = commands::join(&app.tournaments, id, auth.player, true, command_id).await?;
        Ok((StatusCode::OK, membership(id, &t, auth.player)?))
    })
    .await
}

/// `POST /v1/tournaments/{id}/withdraw`.
pub async fn withdraw(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    act(&app, &auth, &req, &path, payload, Act::Withdraw).await
}

/// `POST /v1/tournaments/{id}/pause`.
pub async fn pause(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    act(&app, &auth, &req, &path, payload, Act::Pause).await
}

/// `POST /v1/tournaments/{id}/resume`.
pub async fn resume(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    act(&app, &auth, &req, &path, payload, Act::Resume).await
}

/// `POST /v1/tournaments/{id}/heartbeat`: the player follows the tournament (writes no event).
pub async fn heartbeat(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    app.limiter.check(&auth.player)?;
    let id: TournamentId = checks::id(&path)?;
    let t = tournaments::load(&app.tournaments, id).await?;
    if t.entrant(auth.player).is_none() {
        return Err(Error::Tournament(domain::tournaments::TournamentError::NotJoined).into());
    }
    commands::seen(&app.tournaments, id, auth.player).await?;
    Ok(HttpResponse::Ok().json(Membership {
        tournament_id: id,
        player_id: auth.player,
        status: t
            .entrant(auth.player)
            .map_or(EntrantStatus::Withdrawn, |e| e.status),
    }))
}

/// `GET /v1/tournaments/{id}/standings`: the query.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StandingsQuery {
    /// Default 50.
    #[schemars(range(min = 1, max = 500))]
    limit: Option<i64>,
    /// Lines to skip (default 0).
    #[schemars(range(min = 0))]
    offset: Option<i64>,
}

/// `GET /v1/tournaments/{id}/standings?limit&offset`: a page of standings and the reader's line.
pub async fn get_standings(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
    query: Result<web::Query<StandingsQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let id: TournamentId = checks::id(&path)?;
    let q = query.map_err(input::query_error)?;
    let limit = checks::limit(q.limit)?;
    let offset = q.offset.unwrap_or(0);
    if offset < 0 {
        return Err(Error::InvalidRequest(Invalid::Offset).into());
    }
    let t = tournaments::load(&app.tournaments, id).await?;
    let page: StandingsPage =
        standings(&app.tournaments, id, &t, limit, offset, Some(auth.player)).await?;
    Ok(HttpResponse::Ok().json(page))
}

/// `GET /v1/tournaments/{id}/pairings`: the query.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PairingsQuery {
    /// A round's pairings (Swiss, round robin).
    #[schemars(range(min = 1, max = 2_147_483_647))]
    round: Option<u32>,
    /// A player's games.
    player: Option<PlayerId>,
    /// The latest this many (default 50).
    #[schemars(range(min = 1, max = 500))]
    limit: Option<i64>,
}

/// Pairings, oldest first.
#[derive(Serialize, JsonSchema)]
pub struct Pairings {
    pairings: Vec<PairingView>,
}

/// `GET /v1/tournaments/{id}/pairings?round&player&limit`.
pub async fn get_pairings(
    app: web::Data<ApiState>,
    _auth: Auth,
    path: web::Path<String>,
    query: Result<web::Query<PairingsQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let id: TournamentId = checks::id(&path)?;
    let q = query.map_err(input::query_error)?;
    let limit = checks::limit(q.limit)?;
    if q.round.is_some_and(|r| r == 0 || i32::try_from(r).is_err()) {
        return Err(Error::InvalidRequest(Invalid::Query(JsonIssue::Other(
            "`round` counts from 1".into(),
        )))
        .into());
    }
    tournaments::load(&app.tournaments, id).await?;
    let pairings = pairings(&app.tournaments, id, q.round, q.player, limit).await?;
    Ok(HttpResponse::Ok().json(Pairings { pairings }))
}

/// `POST /v1/admin/tournaments/{id}/removals`: the body.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "RemovalRequest")]
pub struct RemovalBody {
    player_id: PlayerId,
    /// Why (required; at most 500 characters; no control character, none that changes the
    /// direction of the text or shows as nothing, at most 3 combining marks on a character).
    #[schemars(length(min = 1, max = 500), regex(pattern = checks::TEXT_PATTERN))]
    reason: String,
}

/// One player's change in the standings.
#[derive(Serialize, JsonSchema)]
pub struct ChangeView {
    player_id: PlayerId,
    rank_before: u32,
    /// None for the removed player.
    rank_after: Option<u32>,
    score_before: f64,
    score_after: f64,
}

/// A removal: its what-if, as recorded.
#[derive(Serialize, JsonSchema)]
pub struct Removed {
    removed: PlayerId,
    changes: Vec<ChangeView>,
}

/// `POST /v1/admin/tournaments/{id}/removals`: an admin removes a player (a reason required):
/// their games are scored as forfeits, every pairing kept; the answer is each player's change.
pub async fn remove(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |command_id, body| async move {
        auth.require_admin()?;
        let id: TournamentId = checks::id(&path)?;
        let b: RemovalBody = input::json(&body)?;
        let removal = commands::remove(
            &app.tournaments,
            id,
            b.player_id,
            &b.reason,
            auth.player,
            command_id,
        )
        .await?;
        let points = |score: u32| removal.format.points(score);
        let changes = removal
            .changes
            .iter()
            .map(|c| ChangeView {
                player_id: c.player_id,
                rank_before: c.rank_before,
                rank_after: c.rank_after,
                score_before: points(c.score_before),
                score_after: points(c.score_after),
            })
            .collect();
        Ok((
            StatusCode::CREATED,
            Body::of(&Removed {
                removed: removal.removed,
                changes,
            })?,
        ))
    })
    .await
}

/// `GET /v1/tournaments/{id}/stream`: server-sent events of the tournament's stream, each with
/// its version as id (resumable with `Last-Event-ID`): `pairing` (a pairing or a bye), `result`,
/// `standings` (after results or a removal: read the standings again) and `status` (the rest).
/// An open stream counts as following the tournament. Under the same caps and rights as every
/// stream (`service::tournaments::feed`).
pub async fn stream(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id: TournamentId = checks::id(&path)?;
    let after = i64::try_from(super::stream::last_event_id(&req)?)
        .map_err(|_| Error::InvalidRequest(Invalid::LastEventId))?;
    let generation = super::stream::generation(&auth);
    let opened = feed::stream(&app.tournaments, auth.player, generation, id, after).await?;
    super::stream::answer(&app, opened)
}

/// `GET /v1/admin/audits/tournaments`: every tournament's standings recounted from the log and
/// diffed against the projection, line by line.
pub async fn audit(app: web::Data<ApiState>, auth: Auth) -> Result<HttpResponse, ApiError> {
    auth.require_admin()?;
    let report = service::audits::tournaments(&app).await?;
    Ok(HttpResponse::Ok().json(report))
}
