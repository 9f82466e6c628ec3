//! What the API reads from the tournaments projection's tables: the listed tournaments and a
//! tournament's pairings.

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;

use domain::games::GameId;
use domain::ids::{MatchId, PlayerId, TournamentId};
use domain::tournaments::{Format, Phase};

use crate::Error;

fn model(reason: String) -> Error {
    Error::Model {
        table: "tournaments",
        reason,
    }
}

/// A tournament row, as lists read it.
#[derive(Debug, Clone)]
pub struct ListedRow {
    pub tournament_id: TournamentId,
    pub game: GameId,
    pub format: Format,
    pub name: String,
    pub phase: Phase,
    pub starts_at: OffsetDateTime,
    pub ends_at: Option<OffsetDateTime>,
    pub rounds: u32,
    pub round: u32,
    pub rated: bool,
    pub players: u32,
}

/// The public tournaments in `phases` (and `game`), by start (`ascending` or not), `limit` of
/// them, starting after (`ascending`) or before `from`.
pub async fn listed(
    client: &impl GenericClient,
    phases: &[Phase],
    game: Option<GameId>,
    from: Option<OffsetDateTime>,
    ascending: bool,
    limit: i64,
) -> Result<Vec<ListedRow>, Error> {
    let (order, cmp) = if ascending {
        ("ASC", ">")
    } else {
        ("DESC", "<")
    };
    let sql = format!(
        "SELECT tournament_id, game, format, name, state, starts_at, ends_at, rounds, round, \
                rated, players \
           FROM tournaments \
          WHERE NOT private AND state = ANY($1) AND ($2::text IS NULL OR game = $2) \
            AND ($3::timestamptz IS NULL OR starts_at {cmp} $3) \
          ORDER BY starts_at {order}, tournament_id LIMIT $4"
    );
    let states: Vec<&str> = phases.iter().map(|p| p.as_str()).collect();
    let game = game.map(GameId::as_str);
    let rows = client.query(&sql, &[&states, &game, &from, &limit]).await?;
    let count = |v: i32| u32::try_from(v).map_err(|_| model(format!("a negative count {v}")));
    rows.iter()
        .map(|r| {
            let (game, format, phase): (&str, &str, &str) = (r.get(1), r.get(2), r.get(4));
            Ok(ListedRow {
                tournament_id: TournamentId::from_uuid(r.get(0)),
                game: game
                    .parse()
                    .map_err(|_| model(format!("unknown game `{game}`")))?,
                format: Format::named(format)
                    .ok_or_else(|| model(format!("unknown format `{format}`")))?,
                name: r.get(3),
                phase: Phase::named(phase)
                    .ok_or_else(|| model(format!("unknown phase `{phase}`")))?,
                starts_at: r.get(5),
                ends_at: r.get(6),
                rounds: count(r.get(7))?,
                round: count(r.get(8))?,
                rated: r.get(9),
                players: count(r.get(10))?,
            })
        })
        .collect()
}

/// A projected pairing or bye.
#[derive(Debug, Clone)]
pub struct PairingRow {
    pub round: u32,
    pub match_id: Option<MatchId>,
    pub first_player: PlayerId,
    pub second_player: Option<PlayerId>,
    pub result: Option<String>,
    pub winner: Option<PlayerId>,
    /// A bye's half-points.
    pub half_points: Option<u32>,
}

/// Tournament `id`'s latest `limit` pairings (of `round`, of `player`), oldest first.
pub async fn pairings(
    client: &impl GenericClient,
    id: TournamentId,
    round: Option<u32>,
    player: Option<PlayerId>,
    limit: i64,
) -> Result<Vec<PairingRow>, Error> {
    let (id, player) = (id.as_uuid(), player.map(|p| p.as_uuid()));
    let round = round.map(|r| i32::try_from(r).unwrap_or(i32::MAX));
    let rows = client
        .query(
            "SELECT round, match_id, first_player, second_player, result, winner, half_points \
               FROM tournament_pairings \
              WHERE tournament_id = $1 AND ($2::int IS NULL OR round = $2) \
                AND ($3::uuid IS NULL OR first_player = $3 OR second_player = $3) \
              ORDER BY version DESC LIMIT $4",
            &[&id, &round, &player, &limit],
        )
        .await?;
    let count = |v: i32| u32::try_from(v).map_err(|_| model(format!("a negative count {v}")));
    rows.iter()
        .rev()
        .map(|r| {
            Ok(PairingRow {
                round: count(r.get(0))?,
                match_id: r.get::<_, Option<uuid::Uuid>>(1).map(MatchId::from_uuid),
                first_player: PlayerId::from_uuid(r.get(2)),
                second_player: r.get::<_, Option<uuid::Uuid>>(3).map(PlayerId::from_uuid),
                result: r.get(4),
                winner: r.get::<_, Option<uuid::Uuid>>(5).map(PlayerId::from_uuid),
                half_points: r.get::<_, Option<i32>>(6).map(count).transpose()?,
            })
        })
        .collect()
}
