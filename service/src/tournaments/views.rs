//! What a client reads of tournaments: a tournament (from its fold, with the reader's own place
//! and current match), the lists, standings and pairings (from the tournaments projection).

use domain::tournaments::standings::Line;
use schemars::JsonSchema;
use serde::Serialize;
use time::OffsetDateTime;

use domain::games::GameId;
use domain::ids::{MatchId, PlayerId, TournamentId};
use domain::matches::TurnSeconds;
use domain::tournaments::{EntrantStatus, Format, Phase, Status, Tournament, half_points};

use super::Tournaments;
use crate::error::{Error, unexpected};

/// A tournament as the API shows it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TournamentView {
    pub tournament_id: TournamentId,
    pub game: GameId,
    pub format: Format,
    pub name: String,
    pub status: Status,
    #[serde(with = "time::serde::rfc3339")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub starts_at: OffsetDateTime,
    /// An arena's end (its start plus its minutes); none for the other formats.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schemars(with = "Option<String>", extend("format" = "date-time"))]
    pub ends_at: Option<OffsetDateTime>,
    pub minutes: Option<u32>,
    /// The rounds (an arena has one; a round robin's follow from its players).
    pub rounds: u32,
    /// The round under way (0 before the start).
    pub round: u32,
    pub rated: bool,
    /// The games' turn limit in seconds (none: no limit).
    pub turn_seconds: Option<u32>,
    pub private: bool,
    /// Players joined or paused.
    pub players: u32,
    pub max_players: u32,
    pub created_by: PlayerId,
    /// The invite code of a private tournament, shown to its creator and its players.
    pub code: Option<String>,
    /// The reader's place, if they joined.
    pub me: Option<Me>,
    /// The stream's version (`Last-Event-ID` of its event stream).
    pub version: u64,
    /// The server's clock when it answered: what a countdown counts against.
    #[serde(with = "time::serde::rfc3339")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub server_time: OffsetDateTime,
}

/// The reader's place in a tournament.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Me {
    pub status: EntrantStatus,
    /// Their game under way, if any: what a client opens next.
    pub match_id: Option<MatchId>,
}

impl TournamentView {
    /// `t` (tournament `id`) as `reader` sees it at `now`.
    pub fn of(
        id: TournamentId,
        t: &Tournament,
        reader: Option<PlayerId>,
        code: Option<String>,
        now: OffsetDateTime,
    ) -> TournamentView {
        let c = &t.created;
        let me = reader.and_then(|p| {
            t.entrant(p).map(|e| Me {
                status: e.status,
                match_id: t
                    .games_of(p)
                    .last()
                    .filter(|g| g.result.is_none())
                    .map(|g| g.pairing.match_id),
            })
        });
        let member = reader.is_some_and(|p| p == c.created_by || me.is_some());
        TournamentView {
            tournament_id: id,
            game: c.game,
            format: c.format,
            name: c.name.clone(),
            status: t.status(now),
            starts_at: c.starts_at,
            ends_at: t.ends_at(),
            minutes: c.minutes,
            rounds: t.rounds(),
            round: t.round,
            rated: c.rated,
            turn_seconds: c.turn_seconds.map(TurnSeconds::get),
            private: c.private,
            players: t.would_start().count() as u32,
            max_players: c.max_players,
            created_by: c.created_by,
            code: code.filter(|_| member),
            me,
            version: t.version,
            server_time: now,
        }
    }
}

/// Which tournaments a list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Listed {
    /// Scheduled or open, soonest first.
    Upcoming,
    /// Running, latest start first.
    Running,
    /// Finished or cancelled, latest start first.
    Finished,
}

/// A tournament in a list (from the tournaments projection).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Listing {
    pub tournament_id: TournamentId,
    pub game: GameId,
    pub format: Format,
    pub name: String,
    pub status: Status,
    #[serde(with = "time::serde::rfc3339")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub starts_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schemars(with = "Option<String>", extend("format" = "date-time"))]
    pub ends_at: Option<OffsetDateTime>,
    pub rounds: u32,
    pub round: u32,
    pub rated: bool,
    pub players: u32,
}

/// The public tournaments of `listed` (and `game`), `limit` of them; `before`: only those that
/// start before it (the next page of a list by latest start), after it for `upcoming`.
pub async fn list(
    app: &Tournaments,
    listed: Listed,
    game: Option<GameId>,
    limit: i64,
    before: Option<OffsetDateTime>,
) -> Result<Vec<Listing>, Error> {
    let (phases, ascending): (&[Phase], bool) = match listed {
        Listed::Upcoming => (&[Phase::Upcoming], true),
        Listed::Running => (&[Phase::Running], false),
        Listed::Finished => (&[Phase::Finished, Phase::Cancelled], false),
    };
    let client = app.pool.get().await.map_err(unexpected)?;
    let rows = projections::tournaments::listed(&client, phases, game, before, ascending, limit)
        .await
        .map_err(unexpected)?;
    let now = app.now();
    Ok(rows
        .into_iter()
        .map(|r| Listing {
            tournament_id: r.tournament_id,
            game: r.game,
            format: r.format,
            name: r.name,
            status: r.phase.status(r.starts_at, now),
            starts_at: r.starts_at,
            ends_at: r.ends_at,
            rounds: r.rounds,
            round: r.round,
            rated: r.rated,
            players: r.players,
        })
        .collect())
}

/// A player's line in the standings.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StandingView {
    pub rank: u32,
    pub player_id: PlayerId,
    pub name: String,
    /// Arena points, or points (Swiss, round robin: a draw is 0.5).
    pub score: f64,
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Wins in a row now.
    pub streak: u32,
    /// An arena player whose next win scores double.
    pub on_fire: bool,
    pub tiebreaks: Tiebreaks,
    pub status: EntrantStatus,
}

/// The tie-breaks of a line.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Tiebreaks {
    /// The arena's: average opponent rating plus 400 × (wins − losses) / games.
    pub performance: f64,
    /// Swiss and round robin: the opponents' points.
    pub buchholz: f64,
    /// Swiss and round robin: the points of the opponents beaten, half those drawn.
    pub sonneborn_berger: f64,
}

/// A page of standings and the reader's own line.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StandingsPage {
    pub standings: Vec<StandingView>,
    pub me: Option<StandingView>,
    /// The version of the tournament's stream these standings count up to.
    pub version: u64,
}

/// The standings of tournament `t` (`id`) from `offset`, `limit` lines, and `reader`'s: from
/// this instance's fold, caught up with the log by the caller, so a result shows as soon as it
/// is recorded (the tournaments projection holds the same lines for the audit and SQL readers).
pub async fn standings(
    app: &Tournaments,
    id: TournamentId,
    t: &Tournament,
    limit: i64,
    offset: i64,
    reader: Option<PlayerId>,
) -> Result<StandingsPage, Error> {
    let lines = app.folds.lines(id, t);
    let from = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(lines.len());
    let page = &lines[from..(from + usize::try_from(limit).unwrap_or(0)).min(lines.len())];
    let mine = reader.and_then(|p| lines.iter().find(|l| l.player_id == p));
    let players: Vec<PlayerId> = page.iter().chain(mine).map(|l| l.player_id).collect();
    let client = app.pool.get().await.map_err(unexpected)?;
    let names = crate::players::names(&client, &players).await?;
    let format = t.created.format;
    let line = |l: &Line| {
        let points = |v: u32| format.points(v);
        StandingView {
            rank: l.rank,
            player_id: l.player_id,
            name: names.get(&l.player_id).cloned().unwrap_or_default(),
            score: points(l.score),
            games: l.games,
            wins: l.wins,
            draws: l.draws,
            losses: l.losses,
            streak: l.streak,
            on_fire: l.on_fire,
            tiebreaks: Tiebreaks {
                performance: l.performance,
                buchholz: half_points(l.buchholz),
                sonneborn_berger: half_points(l.sonneborn_berger) / 2.0,
            },
            status: l.status,
        }
    };
    Ok(StandingsPage {
        standings: page.iter().map(line).collect(),
        me: mine.map(line),
        version: t.version,
    })
}

/// A pairing or a bye.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PairingView {
    pub round: u32,
    /// None for a bye.
    pub match_id: Option<MatchId>,
    /// Who moves first, then the other; a bye has one seat.
    pub seats: Vec<PlayerId>,
    /// `win`, `draw`, `bye`; none while the game is played.
    pub result: Option<String>,
    pub winner: Option<PlayerId>,
    /// A bye's points.
    pub points: Option<f64>,
}

/// The pairings of tournament `id`: of a round, of a player, or the latest `limit`.
pub async fn pairings(
    app: &Tournaments,
    id: TournamentId,
    round: Option<u32>,
    player: Option<PlayerId>,
    limit: i64,
) -> Result<Vec<PairingView>, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let rows = projections::tournaments::pairings(&client, id, round, player, limit)
        .await
        .map_err(unexpected)?;
    Ok(rows
        .into_iter()
        .map(|r| PairingView {
            round: r.round,
            match_id: r.match_id,
            seats: [Some(r.first_player), r.second_player]
                .into_iter()
                .flatten()
                .collect(),
            result: r.result,
            winner: r.winner,
            points: r.half_points.map(half_points),
        })
        .collect())
}
