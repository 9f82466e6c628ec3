//! Players and tokens: sign-up by name, token refresh, a player's profile.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use domain::games::GameId;
use domain::ids::PlayerId;
use domain::ratings::{Ladder, Rating};
use time::format_description::well_known::Rfc3339;

use crate::auth::{Auth, Role};
use crate::error::ApiError;
use crate::error::unexpected;
use crate::extract::AnyGeneration;
use crate::idempotency;
use crate::input;
use crate::reasons::Unauthenticated;
use crate::state::ApiState;
use service::answers::{self, Body};
use service::checks::Timestamp;
use service::reasons::Refused;
use service::views::OpeningJson;
use service::{Error, checks, players};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "SignUpRequest")]
pub struct NewPlayer {
    /// `minLength` to `maxLength` characters once surrounding spaces are dropped; no control
    /// character, none that changes the direction of the text or shows as nothing, at most 3
    /// combining marks on a character; not `CPU` (in any case) nor a closed account's label
    /// (`closed-` and 8 hexadecimal digits).
    #[schemars(length(min = 1, max = checks::PLAYER_NAME_MAX), regex(pattern = checks::NAME_PATTERN))]
    name: String,
}

/// A new player and the device's token.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "PlayerCredentials")]
pub struct Created {
    player_id: PlayerId,
    name: String,
    token: String,
}

/// A fresh token.
#[derive(Serialize, JsonSchema)]
pub struct Token {
    token: String,
}

/// A player's name and ratings.
#[derive(Serialize, JsonSchema)]
pub struct Profile {
    player_id: PlayerId,
    name: String,
    /// Real-time play, by game id (`four_in_a_row`, `reversi`); a game never played shows the
    /// starting rating.
    ratings: BTreeMap<GameId, GameRating>,
    /// Correspondence play, rated on a ladder of its own per game, the same way.
    correspondence: BTreeMap<GameId, GameRating>,
}

/// Which of a game's two ladders: real time (the default) or correspondence.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LadderQuery {
    /// `true`: the game's correspondence ladder.
    #[serde(default)]
    correspondence: bool,
}

impl LadderQuery {
    /// The ladder of `game` it names.
    pub fn ladder(&self, game: GameId) -> Ladder {
        Ladder {
            game,
            correspondence: self.correspondence,
        }
    }
}

#[derive(Serialize, JsonSchema)]
pub struct GameRating {
    rating: f64,
    deviation: f64,
    volatility: f64,
    games: i32,
    provisional: bool,
}

/// A player's finished matches, newest first.
#[derive(Serialize, JsonSchema)]
pub struct History {
    matches: Vec<HistoryEntry>,
}

#[derive(Serialize, JsonSchema)]
pub struct HistoryEntry {
    match_id: Uuid,
    game: GameId,
    ranked: bool,
    /// A correspondence game (days per move; rated on the game's correspondence ladder).
    correspondence: bool,
    opponent: Opponent,
    /// `win`, `loss` or `draw`, for this player.
    result: String,
    rating_before: Option<f64>,
    rating_after: Option<f64>,
    #[schemars(extend("format" = "date-time"))]
    ended_at: String,
    /// The named opening the match followed, as in its replay; `null` before a first move (and
    /// for matches projected before openings were, until `discs rebuild history`).
    opening: Option<OpeningJson>,
}

/// The other seat: a player, or the CPU (`player_id` null, name `CPU`).
#[derive(Serialize, JsonSchema)]
pub struct Opponent {
    player_id: Option<Uuid>,
    /// Null for a player since deleted.
    name: Option<String>,
}

/// A player's rating after each ranked match of a game, oldest first.
#[derive(Serialize, JsonSchema)]
pub struct RatingHistory {
    points: Vec<RatingPoint>,
}

#[derive(Serialize, JsonSchema)]
pub struct RatingPoint {
    match_id: Uuid,
    #[schemars(extend("format" = "date-time"))]
    at: String,
    rating: f64,
    deviation: f64,
}

/// `POST /v1/players`: a name in, a player and the device's token out.
///
/// With an `Idempotency-Key`, the player's id is derived from the key, so a retry (same key,
/// same body) finds the player its first attempt created, whether or not that attempt's answer
/// arrived, and gets a fresh token for it; the same key with another body is
/// `idempotency_key_reused`. The key is the only proof of a retry: it must be random (a short or
/// regular key is refused), and once its record is purged it is spent.
pub async fn create(
    app: web::Data<ApiState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    // Per client address (behind trusted proxies, from `X-Forwarded-For`).
    if let Some(client) = crate::ratelimit::client_key(&req, &app.trusted_proxies) {
        app.signups.check(&client)?;
    }
    let key = idempotency::key_of(&req)?;
    let raw = input::body(payload).await?;
    let body: NewPlayer = input::json(&raw)?;
    let name = checks::valid_name(&body.name)?;
    let now = app.now();
    let (player, name) = match key {
        None => (players::sign_up(&app, &name, now).await?, name),
        Some(key) => {
            let hash = idempotency::request_hash(&req, &raw);
            players::sign_up_once(&app, &key, &hash, &name, now).await?
        }
    };
    let token = app.keys.issue(player, Role::Player, 0, now)?;
    Ok(HttpResponse::build(StatusCode::CREATED).json(Created {
        player_id: player,
        name,
        token,
    }))
}

/// `POST /v1/tokens/refresh`: a valid token for a fresh one.
pub async fn refresh(app: web::Data<ApiState>, auth: Auth) -> Result<HttpResponse, ApiError> {
    app.limiter.check(&auth.player)?;
    if auth.external {
        return Err(Error::Forbidden(Refused::ExternalRefresh).into());
    }
    let token = app
        .keys
        .issue(auth.player, auth.role, auth.generation, app.now())?;
    Ok(HttpResponse::Ok().json(Token { token }))
}

/// A sign-out everywhere, said in so many words (a call that ends the caller's own tokens is
/// never made by accident, nor by a request meant for another route).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "EndTokensRequest")]
pub struct EndTokens {
    #[allow(dead_code)] // Its one value is the whole point: the body must say it.
    scope: Scope,
}

/// Which tokens end: all of the caller's (the one value).
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Everywhere,
}

/// What ending one's tokens answers: a fresh token for this device, and the new generation.
#[derive(Serialize, JsonSchema)]
pub struct TokensEnded {
    token: String,
    /// The player's token generation now: every token issued before carries a lower one.
    generation: u32,
}

/// `POST /v1/tokens/revoke` `{"scope":"everywhere"}`: ends every token of the caller issued so
/// far, this one included (every device is signed out), and answers a fresh one for this
/// device. With an `Idempotency-Key`, the answer is stored without its token, as the generation
/// it reached (in the same transaction as the new generation), and a retry of the request gets a
/// token minted again at that generation, as good as the first, although its own token has
/// ended (the stored answer comes before the check).
pub async fn end_my_tokens(
    app: web::Data<ApiState>,
    caller: AnyGeneration,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let auth = caller.0;
    let (app, auth) = (&app, &auth);
    let renew = |stored: &str| {
        let generation = serde_json::from_str::<Generation>(stored)
            .map_err(unexpected)?
            .generation;
        let token = app
            .keys
            .issue(auth.player, auth.role, generation, app.now())?;
        serde_json::to_string(&TokensEnded { token, generation }).map_err(unexpected)
    };
    let handler = |key: answers::Key, body: web::Bytes| async move {
        app.limiter.check(&auth.player)?;
        input::json::<EndTokens>(&body)?;
        if auth.external {
            return Err(Error::Forbidden(Refused::ExternalRefresh).into());
        }
        if app
            .generations
            .current(auth.player)
            .await?
            .ended(Some(auth.generation))
        {
            return Err(ApiError::Unauthorized(Unauthenticated::Revoked));
        }
        let (generation, stored) = match &key.record {
            Some(record) => (
                players::end_tokens_keyed(app, auth.player, record, app.now()).await?,
                true,
            ),
            None => (
                players::end_tokens(app, auth.player, app.now()).await?,
                false,
            ),
        };
        app.generations.changed(app, auth.player).await;
        let token = app
            .keys
            .issue(auth.player, auth.role, generation, app.now())?;
        Ok((
            StatusCode::OK,
            Body::of(&TokensEnded { token, generation })?,
            stored,
        ))
    };
    idempotency::command_renewed(app, auth, &req, payload, handler, &renew).await
}

/// What a keyed sign-out everywhere stores: the generation its token was issued at.
#[derive(Deserialize)]
struct Generation {
    generation: u32,
}

/// What closing an account does, and the confirmation that asks it.
#[derive(Serialize, JsonSchema)]
pub struct ClosingAsked {
    /// Send it to `POST /v1/players/me/close` within 10 minutes.
    confirmation: String,
    expires_at: String,
    /// The label your games, ratings and results will carry.
    label: String,
    /// What the closing does, in the request's language.
    what_happens: String,
}

/// The confirmation of step one.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "CloseAccountRequest")]
pub struct CloseBody {
    #[schemars(length(min = 1, max = 4096))]
    confirmation: String,
}

/// A closed account.
#[derive(Serialize, JsonSchema)]
pub struct AccountClosed {
    player_id: PlayerId,
    /// The anonymous label its games, ratings and results now carry.
    label: String,
    closed_at: String,
}

impl AccountClosed {
    pub fn of(closed: &service::closing::Closed) -> AccountClosed {
        AccountClosed {
            player_id: closed.player,
            label: closed.label.clone(),
            closed_at: closed.closed_at.format(&Rfc3339).unwrap_or_default(),
        }
    }
}

/// `POST /v1/players/me/closing`: step one of closing one's account.
pub async fn ask_closing(app: web::Data<ApiState>, auth: Auth) -> Result<HttpResponse, ApiError> {
    app.limiter.check(&auth.player)?;
    if auth.external {
        return Err(Error::Forbidden(Refused::ExternalRefresh).into());
    }
    let (confirmation, expires) =
        app.keys
            .closing_confirmation(auth.player, auth.generation, app.now())?;
    Ok(HttpResponse::Ok().json(ClosingAsked {
        confirmation,
        expires_at: expires.format(&Rfc3339).unwrap_or_default(),
        label: players::closed_label(auth.player),
        what_happens: crate::texts::note("account.closing", &[]),
    }))
}

/// `POST /v1/players/me/close`: step two, with step one's confirmation.
pub async fn close(
    app: web::Data<ApiState>,
    auth: Auth,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    app.limiter.check(&auth.player)?;
    let body = input::json::<CloseBody>(&input::body(payload).await?)?;
    if auth.external {
        return Err(Error::Forbidden(Refused::ExternalRefresh).into());
    }
    app.keys.check_closing_confirmation(
        &body.confirmation,
        auth.player,
        auth.generation,
        app.now(),
    )?;
    let closed = service::closing::close(
        &app.challenges,
        &app.tournaments,
        &app.history,
        auth.player,
        app.now(),
    )
    .await?;
    app.generations.changed(&app, auth.player).await;
    Ok(HttpResponse::Ok().json(AccountClosed::of(&closed)))
}

/// `GET /v1/players/{id}`.
pub async fn get(
    app: web::Data<ApiState>,
    _auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let player: PlayerId = checks::id(&path)?;
    let (name, mut stored) = service::records::ratings(&app, player).await?;
    let (mut ratings, mut correspondence) = (BTreeMap::new(), BTreeMap::new());
    for ladder in Ladder::ALL {
        let stored = stored.remove(&ladder).map(|s| (s.rating, s.games));
        let (r, games) = stored.unwrap_or((Rating::NEW, 0));
        let on = if ladder.correspondence {
            &mut correspondence
        } else {
            &mut ratings
        };
        on.insert(
            ladder.game,
            GameRating {
                rating: r.rating,
                deviation: r.deviation,
                volatility: r.volatility,
                games,
                provisional: r.is_provisional(),
            },
        );
    }
    Ok(HttpResponse::Ok().json(Profile {
        player_id: player,
        name,
        ratings,
        correspondence,
    }))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    game: Option<GameId>,
    /// Default 50.
    #[schemars(range(min = 1, max = 500))]
    limit: Option<i64>,
    /// Only matches that ended before this instant (RFC 3339, of the years 0001 to 9999 in
    /// UTC).
    #[serde(default)]
    before: Option<Timestamp>,
}

/// `GET /v1/players/{id}/matches?game&limit&before`: finished matches, newest first.
pub async fn matches(
    app: web::Data<ApiState>,
    _auth: Auth,
    path: web::Path<String>,
    query: Result<web::Query<HistoryQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let player: PlayerId = checks::id(&path)?;
    let q = query.map_err(input::query_error)?;
    let limit = checks::limit(q.limit)?;
    let (rows, names) =
        service::records::history(&app, player, q.game, q.before.map(Timestamp::get), limit)
            .await?;
    let matches = rows
        .into_iter()
        .map(|r| HistoryEntry {
            match_id: r.match_id,
            game: r.game,
            ranked: r.ranked,
            correspondence: r.correspondence,
            opponent: match r.opponent {
                Some(id) => Opponent {
                    player_id: Some(id),
                    name: names.get(&PlayerId::from_uuid(id)).cloned(),
                },
                None => Opponent {
                    player_id: None,
                    name: Some("CPU".to_owned()),
                },
            },
            result: r.result,
            rating_before: r.rating_before,
            rating_after: r.rating_after,
            ended_at: r.ended_at.format(&Rfc3339).unwrap_or_default(),
            opening: r
                .opening
                .map(|(name, line)| OpeningJson::stored(r.game, name, line)),
        })
        .collect();
    Ok(HttpResponse::Ok().json(History { matches }))
}

/// `GET /v1/players/{id}/ratings/{game}?correspondence`: the rating after each rated match on
/// the ladder, oldest first.
pub async fn rating_history(
    app: web::Data<ApiState>,
    _auth: Auth,
    path: web::Path<(String, String)>,
    query: Result<web::Query<LadderQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let (raw_player, raw_game) = path.into_inner();
    let player: PlayerId = checks::id(&raw_player)?;
    let game = checks::game(&raw_game)?;
    let ladder = query.map_err(input::query_error)?.ladder(game);
    let points = service::records::rating_points(&app, player, ladder)
        .await?
        .into_iter()
        .map(|p| RatingPoint {
            match_id: p.match_id,
            at: p.at.format(&Rfc3339).unwrap_or_default(),
            rating: p.rating,
            deviation: p.deviation,
        })
        .collect();
    Ok(HttpResponse::Ok().json(RatingHistory { points }))
}
