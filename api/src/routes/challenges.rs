//! The challenges' routes over `service::challenges`: send one to a player, list your open ones
//! both ways, read one with its history, accept, decline (with a reason) or cancel it, and say
//! whom you accept challenges from.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use domain::challenges::{Accepting, DeclineReason, FirstMover, Status, Terms};
use domain::games::GameId;
use domain::ids::{ChallengeId, MatchId, PlayerId};
use domain::matches::{DaysPerMove, TurnSeconds};
use service::answers::Body;
use service::challenges::{self, Listed, Seen};
use service::state::AppState;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::idempotency;
use crate::input;
use crate::state::ApiState;

/// A player of a challenge.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "ChallengePlayer")]
pub struct Player {
    player_id: PlayerId,
    name: String,
}

/// A step of a challenge's life: an event of its stream.
#[derive(Serialize, JsonSchema)]
pub struct ChallengeStep {
    /// `challenge_sent`, `challenge_accepted`, `challenge_declined`, `challenge_cancelled`,
    /// `challenge_expired` or `challenge_withdrawn` (a ban or a closing of one of its players).
    #[serde(rename = "type")]
    kind: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schemars(with = "String")]
    at: OffsetDateTime,
}

/// A challenge as its two players see it.
#[derive(Serialize, JsonSchema)]
pub struct ChallengeView {
    challenge_id: ChallengeId,
    status: Status,
    challenger: Player,
    challenged: Player,
    #[serde(flatten)]
    terms: Terms,
    #[serde(with = "time::serde::rfc3339")]
    #[schemars(with = "String")]
    sent_at: OffsetDateTime,
    /// When it lapses if nobody answers.
    #[serde(with = "time::serde::rfc3339")]
    #[schemars(with = "String")]
    expires_at: OffsetDateTime,
    /// The match its acceptance started.
    match_id: Option<MatchId>,
    /// Whether the challenger moves first (once accepted).
    challenger_first: Option<bool>,
    /// Why it was declined.
    declined: Option<DeclineReason>,
    /// The reason in the reader's language.
    declined_text: Option<String>,
    /// Its events, oldest first.
    history: Vec<ChallengeStep>,
}

impl ChallengeView {
    async fn of(app: &AppState, seen: Seen) -> Result<ChallengeView, ApiError> {
        let c = seen.challenge;
        let (a, b) = (c.sent.challenger, c.sent.challenged);
        let names = service::players::names_of(app, &[a, b]).await?;
        let player = |p: PlayerId| Player {
            player_id: p,
            name: names.get(&p).cloned().unwrap_or_default(),
        };
        Ok(ChallengeView {
            challenge_id: seen.id,
            status: c.status,
            challenger: player(a),
            challenged: player(b),
            terms: c.sent.terms,
            sent_at: c.sent_at,
            expires_at: c.sent.expires_at,
            match_id: c.match_id,
            challenger_first: c.challenger_first,
            declined: c.declined,
            declined_text: c
                .declined
                .map(|r| crate::texts::note(&format!("challenge.declined.{}", r.as_str()), &[])),
            history: seen
                .events
                .iter()
                .map(|e| ChallengeStep {
                    kind: e.event_type.clone(),
                    at: e.recorded_at,
                })
                .collect(),
        })
    }
}

/// An open challenge in a list.
#[derive(Serialize, JsonSchema)]
pub struct OpenChallenge {
    challenge_id: ChallengeId,
    challenger: Player,
    challenged: Player,
    #[serde(flatten)]
    terms: Terms,
    #[serde(with = "time::serde::rfc3339")]
    #[schemars(with = "String")]
    sent_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schemars(with = "String")]
    expires_at: OffsetDateTime,
}

/// Your open challenges: received (to answer) and sent (to wait for, or cancel), oldest first.
#[derive(Serialize, JsonSchema)]
pub struct ChallengeList {
    received: Vec<OpenChallenge>,
    sent: Vec<OpenChallenge>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "SendChallengeRequest")]
pub struct NewChallenge {
    /// The player challenged (their id, from their page or a list).
    opponent: PlayerId,
    game: GameId,
    /// Rated: the match counts for both players' ratings, as a ranked match does (default no).
    #[serde(default)]
    rated: bool,
    /// The turn limit (none by default).
    #[serde(default)]
    turn_seconds: Option<TurnSeconds>,
    /// Days per move: a correspondence game (never with `turn_seconds`; not rated).
    #[serde(default)]
    days_per_move: Option<DaysPerMove>,
    /// Who moves first: `challenger`, `challenged` or `random` (a coin drawn on acceptance; the
    /// default).
    #[serde(default)]
    first: FirstMover,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "DeclineChallengeRequest")]
pub struct DeclineBody {
    /// Why (default `generic`), shown to the challenger in their language.
    #[serde(default)]
    reason: DeclineReason,
}

/// Whom you accept challenges from.
#[derive(Serialize, JsonSchema)]
pub struct ChallengeSettings {
    /// `everyone` (the default), `played` (players you have finished a match with) or `nobody`.
    accepting: Accepting,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "SetChallengeSettingsRequest")]
pub struct SettingsBody {
    /// `everyone`, `played` (players you have finished a match with) or `nobody`.
    accepting: Accepting,
}

/// A correspondence game waiting for your move.
#[derive(Serialize, JsonSchema)]
pub struct TurnWaiting {
    match_id: MatchId,
    game: GameId,
    opponent: Player,
    /// When your move is due: past it, you lose on time.
    #[serde(with = "time::serde::rfc3339")]
    #[schemars(with = "String")]
    deadline: OffsetDateTime,
    days_per_move: Option<DaysPerMove>,
    /// A rated game (on the game's correspondence ladder).
    ranked: bool,
    /// Moves played so far.
    moves: usize,
}

/// What waits for you.
#[derive(Serialize, JsonSchema)]
pub struct Inbox {
    /// Your correspondence games where it is your turn, the nearest deadline first.
    your_turn: Vec<TurnWaiting>,
    /// Your other open correspondence games (your opponent to move; `deadline` is theirs), the
    /// nearest deadline first.
    their_turn: Vec<TurnWaiting>,
    /// Your open challenges: received (to answer) and sent, oldest first.
    challenges: ChallengeList,
}

/// `POST /v1/challenges`.
pub async fn send(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |command_id, body| async move {
        let new: NewChallenge = input::json(&body)?;
        let terms = Terms {
            game: new.game,
            rated: new.rated,
            turn_seconds: new.turn_seconds,
            days_per_move: new.days_per_move,
            first: new.first,
        };
        let seen = challenges::send(
            &app.challenges,
            auth.player,
            new.opponent,
            terms,
            command_id,
        )
        .await?;
        Ok((
            StatusCode::CREATED,
            Body::of(&ChallengeView::of(app, seen).await?)?,
        ))
    })
    .await
}

/// `GET /v1/challenges`.
pub async fn list(app: web::Data<ApiState>, auth: Auth) -> Result<HttpResponse, ApiError> {
    let (received, sent) = challenges::open_of(&app.challenges, auth.player).await?;
    Ok(HttpResponse::Ok().json(listed(&app, received, sent).await?))
}

/// `GET /v1/players/me/inbox`.
pub async fn inbox(app: web::Data<ApiState>, auth: Auth) -> Result<HttpResponse, ApiError> {
    let inbox = challenges::inbox(&app.challenges, auth.player).await?;
    let mut games = Vec::new();
    for (mine, turn) in inbox
        .your_turn
        .iter()
        .map(|t| (true, t))
        .chain(inbox.their_turn.iter().map(|t| (false, t)))
    {
        let m = turn.loaded.get()?;
        let opponent = m
            .seats
            .iter()
            .filter_map(|s| s.player_id())
            .find(|&p| p != auth.player);
        if let Some(opponent) = opponent {
            games.push((mine, turn, m, opponent));
        }
    }
    let opponents: Vec<PlayerId> = games.iter().map(|&(_, _, _, p)| p).collect();
    let names = service::players::names_of(&app, &opponents).await?;
    let (mut your_turn, mut their_turn) = (Vec::new(), Vec::new());
    for (mine, turn, m, opponent) in games {
        let waiting = TurnWaiting {
            match_id: turn.loaded.id,
            game: m.game,
            opponent: Player {
                player_id: opponent,
                name: names.get(&opponent).cloned().unwrap_or_default(),
            },
            deadline: turn.deadline,
            days_per_move: m.settings.days_per_move,
            ranked: m.ranked,
            moves: m.moves.len(),
        };
        if mine {
            your_turn.push(waiting);
        } else {
            their_turn.push(waiting);
        }
    }
    Ok(HttpResponse::Ok().json(Inbox {
        your_turn,
        their_turn,
        challenges: listed(&app, inbox.received, inbox.sent).await?,
    }))
}

/// Open challenges as a list shows them, with their players' names.
async fn listed(
    app: &AppState,
    received: Vec<Listed>,
    sent: Vec<Listed>,
) -> Result<ChallengeList, ApiError> {
    let players: Vec<PlayerId> = received
        .iter()
        .chain(&sent)
        .flat_map(|l| [l.challenger, l.challenged])
        .collect();
    let names = service::players::names_of(app, &players).await?;
    let view = |l: Listed| {
        let player = |p: PlayerId| Player {
            player_id: p,
            name: names.get(&p).cloned().unwrap_or_default(),
        };
        OpenChallenge {
            challenge_id: l.id,
            challenger: player(l.challenger),
            challenged: player(l.challenged),
            terms: l.terms,
            sent_at: l.sent_at,
            expires_at: l.expires_at,
        }
    };
    Ok(ChallengeList {
        received: received.into_iter().map(view).collect(),
        sent: sent.into_iter().map(view).collect(),
    })
}

/// `GET /v1/challenges/{id}` (its two players only).
pub async fn get(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let seen = challenges::get(&app.challenges, auth.player, &path).await?;
    Ok(HttpResponse::Ok().json(ChallengeView::of(&app, seen).await?))
}

/// `POST /v1/challenges/{id}/accept`.
pub async fn accept(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |command_id, _| async move {
        let seen = challenges::accept(&app.challenges, auth.player, &path, command_id).await?;
        Ok((
            StatusCode::OK,
            Body::of(&ChallengeView::of(app, seen).await?)?,
        ))
    })
    .await
}

/// `POST /v1/challenges/{id}/decline`.
pub async fn decline(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |command_id, body| async move {
        let decline: DeclineBody = if body.is_empty() {
            DeclineBody {
                reason: DeclineReason::default(),
            }
        } else {
            input::json(&body)?
        };
        let seen = challenges::decline(
            &app.challenges,
            auth.player,
            &path,
            decline.reason,
            command_id,
        )
        .await?;
        Ok((
            StatusCode::OK,
            Body::of(&ChallengeView::of(app, seen).await?)?,
        ))
    })
    .await
}

/// `POST /v1/challenges/{id}/cancel`.
pub async fn cancel(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |command_id, _| async move {
        let seen = challenges::cancel(&app.challenges, auth.player, &path, command_id).await?;
        Ok((
            StatusCode::OK,
            Body::of(&ChallengeView::of(app, seen).await?)?,
        ))
    })
    .await
}

/// `GET /v1/players/me/challenge-settings`.
pub async fn settings(app: web::Data<ApiState>, auth: Auth) -> Result<HttpResponse, ApiError> {
    let accepting = challenges::accepting_of(&app.challenges, auth.player).await?;
    Ok(HttpResponse::Ok().json(ChallengeSettings { accepting }))
}

/// `PUT /v1/players/me/challenge-settings`.
pub async fn set_settings(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |_, body| async move {
        let asked: SettingsBody = input::json(&body)?;
        let accepting =
            challenges::set_accepting(&app.challenges, auth.player, asked.accepting).await?;
        Ok((StatusCode::OK, Body::of(&ChallengeSettings { accepting })?))
    })
    .await
}

/// `GET /v1/players/me/stream`: what happens to you anywhere, as it commits; resumable with
/// `Last-Event-ID` (a frame's id), on any instance.
pub async fn stream(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let after = match req.headers().get("last-event-id") {
        None => None,
        Some(v) => Some(service::player_feed::after(v.to_str().unwrap_or_default())?),
    };
    let generation = super::stream::generation(&auth);
    let opened =
        service::player_feed::stream(&app.challenges, auth.player, generation, after).await?;
    super::stream::answer(&app, opened)
}
