//! The JSON shapes of the API built from folded state: the match view, events, replay plies.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::games::GameId;
use domain::ids::{MatchId, PlayerId, Seat, TournamentId};
use domain::matches::replay::PlyView;
use domain::matches::{Controller, Match, MatchEnded, Settings};
use eventlog::RecordedEvent;

/// A match as the API shows it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MatchView {
    pub match_id: MatchId,
    pub game: GameId,
    pub ranked: bool,
    /// `active` or `finished`.
    #[schemars(with = "MatchStatus")]
    pub status: &'static str,
    /// The number of events in the match's stream: `expected_version` of the next command.
    pub version: u64,
    pub seats: Vec<SeatView>,
    pub to_move: Option<Seat>,
    /// The rows of the board: top row first in Four in a Row (`.`, `R`, `Y`), row 1 first in
    /// Reversi (`.`, `B`, `W`).
    pub board: Vec<String>,
    /// Empty when finished, or in Reversi when the setting hides them.
    pub legal_moves: Vec<String>,
    /// The game record, passes omitted.
    pub moves: String,
    /// When the turn's clock runs out (none without a turn limit).
    #[serde(with = "time::serde::rfc3339::option")]
    #[schemars(with = "Option<String>", extend("format" = "date-time"))]
    pub deadline: Option<OffsetDateTime>,
    pub settings: Settings,
    pub result: Option<MatchEnded>,
    pub room_id: Option<Uuid>,
    /// The tournament this match is a game of; absent for any other match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tournament_id: Option<TournamentId>,
}

/// A match's status.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // only its schema is used: the view writes the status as a string
enum MatchStatus {
    Active,
    Finished,
}

/// Who plays a seat.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // only its schema is used
enum SeatController {
    Human,
    Cpu,
    Away,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SeatView {
    pub seat: Seat,
    /// None for the CPU.
    pub player_id: Option<PlayerId>,
    pub name: String,
    /// The colour letter of the seat's discs (`R`, `Y`, `B`, `W`).
    pub color: String,
    /// `away`: the player left and the CPU plays for them.
    #[schemars(with = "SeatController")]
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
        let hide = !m.settings.shows_legal_moves(m.game);
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
            tournament_id: m.tournament_id,
        }
    }
}

/// One stored event as `/events` and the stream show it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EventView {
    pub version: i64,
    pub position: i64,
    #[serde(rename = "type")]
    pub event_type: String,
    /// The event's payload, by its type.
    pub data: serde_json::Value,
    #[serde(with = "time::serde::rfc3339")]
    #[schemars(with = "String", extend("format" = "date-time"))]
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

/// The named opening a game followed (`domain::openings`): Reversi's published names, matched
/// up to the board's symmetries; Four in a Row's first three columns, up to the mirror.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OpeningJson {
    /// Reversi: as the published list spells it, alternatives separated by `/` (`Tiger`,
    /// `Buffalo/Kenichi Variation`). Four in a Row: the first columns with dashes, mirrored when
    /// that reads first (`4-4-3` also names 4-4-5).
    pub name: String,
    /// Reversi: the named line as the list writes it (its orientation starts with c4; upper case
    /// for Black, lower case for White). Four in a Row: the columns as a record (`443`).
    pub line: String,
    /// How many plies of this game the name covers.
    pub plies: usize,
}

impl OpeningJson {
    /// An opening as the history stores it: its name and line.
    pub fn stored(game: GameId, name: String, line: String) -> OpeningJson {
        let plies = line.len() / game.move_chars();
        OpeningJson { name, line, plies }
    }

    /// The opening of a game with these moves (passes omitted), if it has a name.
    pub fn of(game: GameId, moves: &[String]) -> Option<OpeningJson> {
        domain::openings::opening(game, moves).map(|o| OpeningJson {
            name: o.name.into_owned(),
            line: o.line.into_owned(),
            plies: o.plies,
        })
    }
}

/// One ply of a replay: the position after it.
#[derive(Debug, Serialize, JsonSchema)]
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
