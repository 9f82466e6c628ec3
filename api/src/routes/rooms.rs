//! Rooms: a host opens one with settings and an invite code, a friend joins, members start
//! matches and rematches (alternating who starts when `alternate_first` is on).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use service::checks;
use tokio_postgres::Row;
use uuid::Uuid;

use domain::games::GameId;
use domain::ids::{MatchId, PlayerId, Seat};
use domain::matches::{CreateMatch, FirstMoveRule, FirstSetting, Occupant, Settings};

use crate::auth::Auth;
use crate::error::ApiError;
use crate::error::unexpected;
use crate::idempotency;
use crate::input;
use crate::state::ApiState;
use service::Error;
use service::live::answers::Body;
use service::live::play;
use service::reasons::{Active, Invalid, Missing, Refused};
use service::state::AppState;

/// Invite codes: no letters or digits that read alike (0/O, 1/I/L).
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

struct Room {
    room_id: Uuid,
    code: String,
    game: GameId,
    settings: Settings,
    host: PlayerId,
    guest: Option<PlayerId>,
    match_id: Option<MatchId>,
    last_first_seat: Option<Seat>,
}

const COLUMNS: &str = "room_id, code, game, settings, host, guest, match_id, last_first_seat";

impl Room {
    fn from_row(r: &Row) -> Result<Room, ApiError> {
        let settings: serde_json::Value = r.get(3);
        Ok(Room {
            room_id: r.get(0),
            code: r.get(1),
            game: r.get::<_, String>(2).parse().map_err(unexpected)?,
            settings: serde_json::from_value(settings).map_err(unexpected)?,
            host: PlayerId::from_uuid(r.get(4)),
            guest: r.get::<_, Option<Uuid>>(5).map(PlayerId::from_uuid),
            match_id: r.get::<_, Option<Uuid>>(6).map(MatchId::from_uuid),
            last_first_seat: r
                .get::<_, Option<i16>>(7)
                .and_then(|s| u8::try_from(s).ok())
                .and_then(|s| Seat::try_from(s).ok()),
        })
    }

    fn is_member(&self, p: PlayerId) -> bool {
        self.host == p || self.guest == Some(p)
    }

    async fn view(&self, app: &AppState) -> Result<RoomView, ApiError> {
        let client = app.pool.get().await.map_err(unexpected)?;
        let ids: Vec<Uuid> = std::iter::once(self.host)
            .chain(self.guest)
            .map(|p| p.as_uuid())
            .collect();
        let rows = client
            .query(
                "SELECT player_id, name FROM players WHERE player_id = ANY($1)",
                &[&ids],
            )
            .await
            .map_err(unexpected)?;
        let name = |p: PlayerId| {
            rows.iter()
                .find(|r| r.get::<_, Uuid>(0) == p.as_uuid())
                .map(|r| r.get::<_, String>(1))
                .unwrap_or_default()
        };
        let mut members = vec![Member {
            seat: Seat::ONE,
            player_id: self.host,
            name: name(self.host),
        }];
        if let Some(g) = self.guest {
            members.push(Member {
                seat: Seat::TWO,
                player_id: g,
                name: name(g),
            });
        }
        Ok(RoomView {
            room_id: self.room_id,
            code: self.code.clone(),
            game: self.game,
            settings: self.settings,
            members,
            match_id: self.match_id,
        })
    }
}

/// A room as its members see it.
#[derive(Serialize, JsonSchema)]
pub struct RoomView {
    room_id: Uuid,
    /// The invite code (`POST /v1/rooms/{code}/join`).
    code: String,
    game: GameId,
    settings: Settings,
    /// The host in seat 1, the guest (once joined) in seat 2.
    members: Vec<Member>,
    /// The room's latest match.
    match_id: Option<MatchId>,
}

#[derive(Serialize, JsonSchema)]
pub struct Member {
    seat: Seat,
    player_id: PlayerId,
    name: String,
}

/// A room as one of its members sees it (`forbidden` for anyone else).
async fn load_as_member(app: &AppState, raw_id: &str, player: PlayerId) -> Result<Room, ApiError> {
    let room = load(app, room_id(raw_id)?).await?;
    if room.is_member(player) {
        Ok(room)
    } else {
        Err(Error::Forbidden(Refused::NotRoomMember).into())
    }
}

async fn load(app: &AppState, room_id: Uuid) -> Result<Room, ApiError> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_opt(
            &format!("SELECT {COLUMNS} FROM rooms WHERE room_id = $1"),
            &[&room_id],
        )
        .await
        .map_err(unexpected)?
        .ok_or(Error::NotFound(Missing::Room))?;
    Room::from_row(&row)
}

fn room_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| Invalid::RoomId(raw.to_owned()).into())
}

fn settings_for(game: GameId, settings: Settings) -> Result<Settings, ApiError> {
    settings
        .validate_for(game)
        .map_err(|e| Error::InvalidRequest(e.into()))?;
    Ok(settings)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::openapi::legal_moves_hidden_where_the_game_allows)]
pub struct NewRoom {
    game: GameId,
    #[serde(default)]
    settings: Settings,
}

/// `POST /v1/rooms`.
pub async fn create(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |_, body| async move {
        let new: NewRoom = input::json(&body)?;
        let settings = settings_for(new.game, new.settings)?;
        let client = app.pool.get().await.map_err(unexpected)?;
        for _ in 0..8 {
            let code = invite_code();
            let row = client
                .query_opt(
                    &format!(
                        "INSERT INTO rooms (room_id, code, game, settings, host, created_at) \
                         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (code) DO NOTHING \
                         RETURNING {COLUMNS}"
                    ),
                    &[
                        &Uuid::now_v7(),
                        &code,
                        &new.game.as_str(),
                        &json!(settings),
                        &auth.player.as_uuid(),
                        &app.now(),
                    ],
                )
                .await
                .map_err(unexpected)?;
            if let Some(row) = row {
                let room = Room::from_row(&row)?;
                return Ok((StatusCode::CREATED, Body::of(&room.view(app).await?)?));
            }
        }
        Err(Error::Unexpected(anyhow::anyhow!("no free invite code")).into())
    })
    .await
}

/// Six characters from the operating system's random source (a code derived from anything a
/// client knows could be guessed; a retried creation finds its room through its
/// `Idempotency-Key` answer instead).
fn invite_code() -> String {
    let bytes = Uuid::new_v4().into_bytes();
    bytes[..6]
        .iter()
        .map(|b| CODE_ALPHABET[usize::from(*b) % CODE_ALPHABET.len()] as char)
        .collect()
}

/// `GET /v1/rooms/{room_id}` (members only).
pub async fn get(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let room = load_as_member(&app, &path, auth.player).await?;
    Ok(HttpResponse::Ok().json(room.view(&app).await?))
}

/// `POST /v1/rooms/{code}/join`: two members at most.
pub async fn join(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |_, _body| async move {
        let code = path.trim().to_ascii_uppercase();
        if code.len() != 6 || !code.bytes().all(|b| CODE_ALPHABET.contains(&b)) {
            return Err(Error::NotFound(Missing::Room).into());
        }
        let client = app.pool.get().await.map_err(unexpected)?;
        let joined = client
            .query_opt(
                &format!(
                    "UPDATE rooms SET guest = $2 WHERE code = $1 AND guest IS NULL AND host <> $2 \
                     RETURNING {COLUMNS}"
                ),
                &[&code, &auth.player.as_uuid()],
            )
            .await
            .map_err(unexpected)?;
        let room = match joined {
            Some(row) => Room::from_row(&row)?,
            None => {
                let row = client
                    .query_opt(
                        &format!("SELECT {COLUMNS} FROM rooms WHERE code = $1"),
                        &[&code],
                    )
                    .await
                    .map_err(unexpected)?
                    .ok_or(Error::NotFound(Missing::Room))?;
                let room = Room::from_row(&row)?;
                if !room.is_member(auth.player) {
                    return Err(Error::RoomFull.into());
                }
                room
            }
        };
        Ok((StatusCode::OK, Body::of(&room.view(app).await?)?))
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Patch {
    settings: Settings,
}

/// Whether the room's current match is still being played.
async fn match_active(app: &AppState, room: &Room) -> Result<bool, ApiError> {
    let Some(id) = room.match_id else {
        return Ok(false);
    };
    match play::load(app, id).await {
        Ok(loaded) => Ok(!loaded.get()?.is_finished()),
        Err(Error::NotFound(_)) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// `PATCH /v1/rooms/{room_id}`: settings, between matches.
pub async fn patch(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |_, body| async move {
        let patch: Patch = input::json(&body)?;
        let room = load_as_member(app, &path, auth.player).await?;
        let settings = settings_for(room.game, patch.settings)?;
        if match_active(app, &room).await? {
            return Err(Error::MatchActive(Active::Settings).into());
        }
        let client = app.pool.get().await.map_err(unexpected)?;
        let row = client
            .query_one(
                &format!("UPDATE rooms SET settings = $2 WHERE room_id = $1 RETURNING {COLUMNS}"),
                &[&room.room_id, &json!(settings)],
            )
            .await
            .map_err(unexpected)?;
        Ok((
            StatusCode::OK,
            Body::of(&Room::from_row(&row)?.view(app).await?)?,
        ))
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartBody {
    /// Starting alone: the CPU's level in seat 2 (default 2).
    #[schemars(range(min = *domain::cpu::LEVELS.start(), max = *domain::cpu::LEVELS.end()))]
    cpu_level: Option<u8>,
}

/// `POST /v1/rooms/{room_id}/matches`: start (or rematch); alone, against the CPU.
pub async fn start(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |command_id, body| async move {
        let start: StartBody = input::json(&body)?;
        let level = start.cpu_level.unwrap_or(domain::cpu::DEFAULT_LEVEL);
        checks::cpu_level(level)?;
        let room = load_as_member(app, &path, auth.player).await?;
        if match_active(app, &room).await? {
            return Err(Error::MatchActive(Active::RoomPlaying).into());
        }
        let (first_seat, first_rule) = match room.last_first_seat {
            Some(last) if room.settings.alternate_first => {
                (last.other(), FirstMoveRule::Alternated)
            }
            Some(last) => (last, FirstMoveRule::Setting),
            None => match room.settings.first {
                FirstSetting::Seat1 => (Seat::ONE, FirstMoveRule::Setting),
                FirstSetting::Seat2 => (Seat::TWO, FirstMoveRule::Setting),
                FirstSetting::Random => {
                    // From the operating system's random source, not from anything a member
                    // could choose (the Idempotency-Key) or know (the player ids).
                    let heads = Uuid::new_v4().as_bytes()[15] & 1 == 1;
                    let seat = if heads { Seat::ONE } else { Seat::TWO };
                    (seat, FirstMoveRule::CoinFlip { heads })
                }
            },
        };
        let id = MatchId::of_command(command_id);
        // Reserve the room for this match first, so that two members starting at once cannot
        // both create one.
        let client = app.pool.get().await.map_err(unexpected)?;
        let reserved = client
            .execute(
                "UPDATE rooms SET match_id = $2, last_first_seat = $3 \
                 WHERE room_id = $1 AND match_id IS NOT DISTINCT FROM $4",
                &[
                    &room.room_id,
                    &id.as_uuid(),
                    &i16::from(first_seat.number()),
                    &room.match_id.map(|m| m.as_uuid()),
                ],
            )
            .await
            .map_err(unexpected)?;
        if reserved == 0 {
            return Err(Error::MatchActive(Active::RoomPlaying).into());
        }
        let seats = [
            Occupant::Human {
                player_id: room.host,
            },
            match room.guest {
                Some(g) => Occupant::Human { player_id: g },
                None => Occupant::Cpu { level },
            },
        ];
        let create = CreateMatch {
            game: room.game,
            seats,
            settings: room.settings,
            first_seat,
            first_rule,
            ranked: false,
            room_id: Some(room.room_id),
            cpu_seed: play::fresh_seed(),
        };
        let (view, _) = play::start(app, id, command_id, create, auth.player, None).await?;
        Ok((StatusCode::CREATED, Body::of(&view)?))
    })
    .await
}
