//! The JSON shapes of SPEC §6 built from folded state: the match view, events, replay plies.

use std::collections::HashMap;

use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::games::GameId;
use domain::ids::{MatchId, PlayerId, Seat};
use domain::matches::replay::PlyView;
use domain::matches::{Controller, Match, MatchEnded, Settings};
use eventlog::RecordedEvent;

#[derive(Debug, Serialize)]
pub struct MatchView {
    pub match_id: MatchId,
    pub game: GameId,
    pub ranked: bool,
    pub status: &'static str,
    pub version: u64,
    pub seats: Vec<SeatView>,
    pub to_move: Option<Seat>,
    pub board: Vec<String>,
    pub legal_moves: Vec<String>,
    pub moves: String,
    #[serde(with = "time::serde::rfc3339::option")]
    pub deadline: Option<OffsetDateTime>,
    pub settings: Settings,
    pub result: Option<MatchEnded>,
    pub room_id: Option<Uuid>,
}

#[derive(Debug, Serialize)]
pub struct SeatView {
    pub seat: Seat,
    pub player_id: Option<PlayerId>,
    pub name: String,
    pub color: String,
    pub controller: &'static str,
}

impl MatchView {
    pub fn new(
        id: MatchId,
        m: &Match,
        version: u64,
        names: &HashMap<PlayerId, String>,
    ) -> MatchView {
        let seats = Seat::BOTH
            .iter()
            .map(|&seat| {
                let s = m.seat(seat);
                let player_id = s.player_id();
                SeatView {
                    seat,
                    player_id,
                    name: player_id
                        .and_then(|p| names.get(&p).cloned())
                        .unwrap_or_else(|| "CPU".to_owned()),
                    color: m.color_of(seat).to_string(),
                    controller: match s.controller() {
                        Controller::Human => "human",
                        Controller::Cpu => "cpu",
                        Controller::Away => "away",
                    },
                }
            })
            .collect();
        let hide = m.game == GameId::Reversi && !m.settings.show_legal_moves;
        MatchView {
            match_id: id,
            game: m.game,
            ranked: m.ranked,
            status: if m.is_finished() {
                "finished"
            } else {
                "active"
            },
            version,
            seats,
            to_move: m.to_move(),
            board: m.position.rows(),
            legal_moves: if m.is_finished() || hide {
                Vec::new()
            } else {
                m.position.legal_moves()
            },
            moves: m.moves.concat(),
            deadline: m.deadline(),
            settings: m.settings,
            result: m.result.clone(),
            room_id: m.room_id,
        }
    }
}

/// One stored event as `/events` and the stream show it.
#[derive(Debug, Serialize)]
pub struct EventView {
    pub version: i64,
    pub position: i64,
    #[serde(rename = "type")]
    pub event_type: String,
    pub data: serde_json::Value,
    #[serde(with = "time::serde::rfc3339")]
    pub recorded_at: OffsetDateTime,
}

impl EventView {
    /// `e` as clients see it. While the match is active, `match_created` hides its
    /// `cpu_seed` (with it the CPU's next moves, stand-ins included, could be computed ahead);
    /// once the match is finished it is shown, so that replays and audits stay checkable.
    pub fn shown(e: &RecordedEvent, finished: bool) -> Self {
        let mut data = e.data.clone();
        if !finished
            && e.event_type == "match_created"
            && let Some(fields) = data.as_object_mut()
        {
            fields.remove("cpu_seed");
        }
        EventView {
            version: e.version,
            position: e.position,
            event_type: e.event_type.clone(),
            data,
            recorded_at: e.recorded_at,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct PlyJson {
    pub ply: u32,
    pub seat: Option<Seat>,
    #[serde(rename = "move")]
    pub mv: Option<String>,
    pub board: Vec<String>,
    pub to_move: Option<Seat>,
    pub legal_moves: Vec<String>,
}

impl PlyJson {
    pub fn new(p: PlyView, hide_legal: bool) -> PlyJson {
        PlyJson {
            ply: p.ply,
            seat: p.seat,
            mv: p.mv,
            board: p.board,
            to_move: p.to_move,
            legal_moves: if hide_legal {
                Vec::new()
            } else {
                p.legal_moves
            },
        }
    }
}
