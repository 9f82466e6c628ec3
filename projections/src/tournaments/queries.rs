//! What the API reads from the tournaments projection's tables: the listed tournaments and a
//! tournament's pairings.

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::Error;

/// A tournament row, as lists read it.
#[derive(Debug, Clone)]
pub struct ListedRow {
    pub tournament_id: Uuid,
    pub game: String,
    pub format: String,
    pub name: String,
    /// `upcoming`, `running`, `finished` or `cancelled`.
    pub state: String,
    pub starts_at: OffsetDateTime,
    pub ends_at: Option<OffsetDateTime>,
    pub rounds: i32,
    pub round: i32,
    pub rated: bool,
    pub players: i32,
}

/// The public tournaments in `states` (and `game`), by start (`ascending` or not), `limit` of
/// them, starting after (`ascending`) or before `from`.
pub async fn listed(
    client: &impl GenericClient,
    states: &[&str],
    game: Option<&str>,
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
    let states: Vec<String> = states.iter().map(|s| (*s).to_owned()).collect();
    let rows = client.query(&sql, &[&states, &game, &from, &limit]).await?;
    Ok(rows
        .iter()
        .map(|r| ListedRow {
            tournament_id: r.get(0),
            game: r.get(1),
            format: r.get(2),
            name: r.get(3),
            state: r.get(4),
            starts_at: r.get(5),
            ends_at: r.get(6),
            rounds: r.get(7),
            round: r.get(8),
            rated: r.get(9),
            players: r.get(10),
        })
        .collect())
}

/// A projected pairing or bye.
#[derive(Debug, Clone)]
pub struct PairingRow {
    pub round: i32,
    pub match_id: Option<Uuid>,
    pub first_player: Uuid,
    pub second_player: Option<Uuid>,
    pub result: Option<String>,
    pub winner: Option<Uuid>,
    pub half_points: Option<i32>,
}

/// Tournament `id`'s latest `limit` pairings (of `round`, of `player`), oldest first.
pub async fn pairings(
    client: &impl GenericClient,
    id: Uuid,
    round: Option<i32>,
    player: Option<Uuid>,
    limit: i64,
) -> Result<Vec<PairingRow>, Error> {
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
    Ok(rows
        .iter()
        .rev()
        .map(|r| PairingRow {
            round: r.get(0),
            match_id: r.get(1),
            first_player: r.get(2),
            second_player: r.get(3),
            result: r.get(4),
            winner: r.get(5),
            half_points: r.get(6),
        })
        .collect())
}
