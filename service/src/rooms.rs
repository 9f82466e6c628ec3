//! Rooms (the table `rooms`): a host opens one with settings and an invite code, a friend
//! joins, members start matches and rematches (alternating who starts when `alternate_first`
//! is on), settings change between matches.

use serde_json::json;
use tokio_postgres::Row;
use uuid::Uuid;

use domain::games::GameId;
use domain::ids::{MatchId, PlayerId, Seat};
use domain::matches::{CreateMatch, FirstMoveRule, FirstSetting, Occupant, Settings};

use crate::checks;
use crate::core::Core;
use crate::error::{Error, unexpected};
use crate::live::LivePath;
use crate::live::play;
use crate::reasons::{Active, Invalid, Missing, Refused};
use crate::views::MatchView;

/// Invite codes: no letters or digits that read alike (0/O, 1/I/L).
pub(crate) const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/// A room as stored.
pub struct Room {
    pub room_id: Uuid,
    /// The invite code.
    pub code: String,
    pub game: GameId,
    pub settings: Settings,
    /// In seat 1.
    pub host: PlayerId,
    /// In seat 2, once joined.
    pub guest: Option<PlayerId>,
    /// The room's latest match.
    pub match_id: Option<MatchId>,
    last_first_seat: Option<Seat>,
}

const COLUMNS: &str = "room_id, code, game, settings, host, guest, match_id, last_first_seat";

impl Room {
    fn from_row(r: &Row) -> Result<Room, Error> {
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

    /// The members by seat: the host, then the guest once joined.
    pub fn members(&self) -> impl Iterator<Item = (Seat, PlayerId)> {
        std::iter::once((Seat::ONE, self.host)).chain(self.guest.map(|g| (Seat::TWO, g)))
    }
}

/// A room as one of its members sees it (`forbidden` for anyone else).
pub async fn of_member(app: &Core, raw_id: &str, player: PlayerId) -> Result<Room, Error> {
    let room_id = Uuid::parse_str(raw_id).map_err(|_| Invalid::RoomId(raw_id.to_owned()))?;
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_opt(
            &format!("SELECT {COLUMNS} FROM rooms WHERE room_id = $1"),
            &[&room_id],
        )
        .await
        .map_err(unexpected)?
        .ok_or(Error::NotFound(Missing::Room))?;
    let room = Room::from_row(&row)?;
    if room.is_member(player) {
        Ok(room)
    } else {
        Err(Error::Forbidden(Refused::NotRoomMember))
    }
}

fn settings_for(game: GameId, settings: Settings) -> Result<Settings, Error> {
    settings
        .validate_for(game)
        .map_err(|e| Error::InvalidRequest(e.into()))?;
    Ok(settings)
}

/// Opens a room for `host` with a fresh invite code.
pub async fn create(
    app: &Core,
    host: PlayerId,
    game: GameId,
    settings: Settings,
) -> Result<Room, Error> {
    let settings = settings_for(game, settings)?;
    crate::standing::refuse_banned(app, host).await?;
    let client = app.pool.get().await.map_err(unexpected)?;
    for _ in 0..8 {
        let row = client
            .query_opt(
                &format!(
                    "INSERT INTO rooms (room_id, code, game, settings, host, created_at) \
                     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (code) DO NOTHING \
                     RETURNING {COLUMNS}"
                ),
                &[
                    &Uuid::now_v7(),
                    &invite_code(),
                    &game.as_str(),
                    &json!(settings),
                    &host.as_uuid(),
                    &app.now(),
                ],
            )
            .await
            .map_err(unexpected)?;
        if let Some(row) = row {
            return Room::from_row(&row);
        }
    }
    Err(Error::Unexpected(anyhow::anyhow!("no free invite code")))
}

/// Six characters from the operating system's random source (a code derived from anything a
/// client knows could be guessed; a retried creation finds its room through its
/// `Idempotency-Key` answer instead).
pub(crate) fn invite_code() -> String {
    let bytes = Uuid::new_v4().into_bytes();
    bytes[..6]
        .iter()
        .map(|b| CODE_ALPHABET[usize::from(*b) % CODE_ALPHABET.len()] as char)
        .collect()
}

/// Joins the room of invite code `raw_code` as its guest (a member joining again finds it as
/// it is); two members at most; not for a player an admin banned.
pub async fn join(app: &Core, player: PlayerId, raw_code: &str) -> Result<Room, Error> {
    let code = raw_code.trim().to_ascii_uppercase();
    if code.len() != 6 || !code.bytes().all(|b| CODE_ALPHABET.contains(&b)) {
        return Err(Error::NotFound(Missing::Room));
    }
    crate::standing::refuse_banned(app, player).await?;
    let client = app.pool.get().await.map_err(unexpected)?;
    let joined = client
        .query_opt(
            &format!(
                "UPDATE rooms SET guest = $2 WHERE code = $1 AND guest IS NULL AND host <> $2 \
                 RETURNING {COLUMNS}"
            ),
            &[&code, &player.as_uuid()],
        )
        .await
        .map_err(unexpected)?;
    if let Some(row) = joined {
        return Room::from_row(&row);
    }
    let row = client
        .query_opt(
            &format!("SELECT {COLUMNS} FROM rooms WHERE code = $1"),
            &[&code],
        )
        .await
        .map_err(unexpected)?
        .ok_or(Error::NotFound(Missing::Room))?;
    let room = Room::from_row(&row)?;
    if room.is_member(player) {
        Ok(room)
    } else {
        Err(Error::RoomFull)
    }
}

/// Whether the room's current match is still being played.
async fn match_active(app: &LivePath, room: &Room) -> Result<bool, Error> {
    let Some(id) = room.match_id else {
        return Ok(false);
    };
    match play::load(app, id).await {
        Ok(loaded) => Ok(!loaded.get()?.is_finished()),
        Err(Error::NotFound(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Changes a room's settings, between matches.
pub async fn change_settings(
    app: &LivePath,
    player: PlayerId,
    raw_id: &str,
    settings: Settings,
) -> Result<Room, Error> {
    let room = of_member(app, raw_id, player).await?;
    let settings = settings_for(room.game, settings)?;
    if match_active(app, &room).await? {
        return Err(Error::MatchActive(Active::Settings));
    }
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_one(
            &format!("UPDATE rooms SET settings = $2 WHERE room_id = $1 RETURNING {COLUMNS}"),
            &[&room.room_id, &json!(settings)],
        )
        .await
        .map_err(unexpected)?;
    Room::from_row(&row)
}

/// Starts a match (or a rematch) in a room, as command `command_id` of `player`; alone,
/// against the CPU at `cpu_level` (default [`domain::cpu::DEFAULT_LEVEL`]). Not while either
/// member is a player an admin banned (`forbidden`), though they joined the room before the
/// ban: the caller, or the other member whom the match would seat.
pub async fn start(
    app: &LivePath,
    player: PlayerId,
    raw_id: &str,
    command_id: Uuid,
    cpu_level: Option<u8>,
) -> Result<MatchView, Error> {
    let level = cpu_level.unwrap_or(domain::cpu::DEFAULT_LEVEL);
    checks::cpu_level(level)?;
    let room = of_member(app, raw_id, player).await?;
    for member in std::iter::once(room.host).chain(room.guest) {
        crate::standing::refuse_banned(app, member).await?;
    }
    if match_active(app, &room).await? {
        return Err(Error::MatchActive(Active::RoomPlaying));
    }
    let (first_seat, first_rule) = first_move(&room, app.chance.coin());
    let id = MatchId::of_command(command_id);
    // Reserve the room for this match first, so that two members starting at once cannot both
    // create one.
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
    // Given back before the match is created, which takes connections of its own.
    drop(client);
    if reserved == 0 {
        return Err(Error::MatchActive(Active::RoomPlaying));
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
        tournament_id: None,
        cpu_seed: app.chance.bits(),
    };
    let (view, _) = play::start(app, id, command_id, create, player, None).await?;
    Ok(view)
}

/// Who moves first in the room's next match, and by which rule: the other seat than last time
/// when starts alternate, the same otherwise; the room's setting for its first match.
fn first_move(room: &Room, coin: bool) -> (Seat, FirstMoveRule) {
    match room.last_first_seat {
        Some(last) if room.settings.alternate_first => (last.other(), FirstMoveRule::Alternated),
        Some(last) => (last, FirstMoveRule::Setting),
        None => match room.settings.first {
            FirstSetting::Seat1 => (Seat::ONE, FirstMoveRule::Setting),
            FirstSetting::Seat2 => (Seat::TWO, FirstMoveRule::Setting),
            FirstSetting::Random => {
                // From the instance's chance (the operating system's random source), not from
                // anything a member could choose (the Idempotency-Key) or know (the player ids).
                let heads = coin;
                let seat = if heads { Seat::ONE } else { Seat::TWO };
                (seat, FirstMoveRule::CoinFlip { heads })
            }
        },
    }
}
