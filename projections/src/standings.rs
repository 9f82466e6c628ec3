//! The standing tables (`ratings`, `leaderboard`, `explorer_ratings`, which share their columns):
//! a [`Ledger`] loaded from one for a batch's players, and their final standings written back.

use std::collections::BTreeMap;

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::ids::PlayerId;
use domain::ratings::{Ladder, Rating, Standing};

use crate::Error;
use crate::ledger::{Ledger, RatedStep};

/// The standings of `players` in `table` (a table with the columns of `ratings`); a player
/// with none is a newcomer.
pub(crate) async fn load_ledger(
    client: &impl GenericClient,
    table: &str,
    players: &[Uuid],
) -> Result<Ledger, Error> {
    let mut ledger = Ledger::default();
    if players.is_empty() {
        return Ok(ledger);
    }
    let rows = client
        .query(
            &format!(
                "SELECT player_id, game, rating, deviation, volatility, games, last_ended_at \
                 FROM {table} WHERE player_id = ANY($1)"
            ),
            &[&players],
        )
        .await?;
    for row in rows {
        let ladder: String = row.get(1);
        let Ok(ladder) = ladder.parse::<Ladder>() else {
            continue;
        };
        let games: i32 = row.get(5);
        ledger.standings.insert(
            (PlayerId::from_uuid(row.get(0)), ladder),
            Standing {
                rating: Rating {
                    rating: row.get(2),
                    deviation: row.get(3),
                    volatility: row.get(4),
                },
                games: u32::try_from(games).unwrap_or(0),
                last_ended_at: Some(row.get(6)),
            },
        );
    }
    Ok(ledger)
}

/// Upserts the final standing of every (player, ladder) that moved in this batch; the `game`
/// column holds the ladder's name.
pub(crate) async fn write_standings(
    client: &impl GenericClient,
    table: &str,
    ledger: &Ledger,
    steps: &[RatedStep],
) -> Result<(), Error> {
    let keys: BTreeMap<(Uuid, &'static str), Standing> = steps
        .iter()
        .map(|s| {
            (
                (s.player.as_uuid(), s.ladder.as_str()),
                ledger.standing(s.player, s.ladder),
            )
        })
        .collect();
    if keys.is_empty() {
        return Ok(());
    }
    let mut cols = StandingColumns::default();
    for ((player, game), s) in keys {
        cols.player.push(player);
        cols.game.push(game.to_owned());
        cols.rating.push(s.rating.rating);
        cols.deviation.push(s.rating.deviation);
        cols.volatility.push(s.rating.volatility);
        cols.games.push(i32::try_from(s.games).unwrap_or(i32::MAX));
        cols.last
            .push(s.last_ended_at.unwrap_or(OffsetDateTime::UNIX_EPOCH));
    }
    client
        .execute(
            &format!(
                "INSERT INTO {table} (player_id, game, rating, deviation, volatility, games, \
                 last_ended_at) \
                 SELECT * FROM unnest($1::uuid[], $2::text[], $3::float8[], $4::float8[], \
                   $5::float8[], $6::int4[], $7::timestamptz[]) \
                 ON CONFLICT ON CONSTRAINT {table}_pkey DO UPDATE SET rating = excluded.rating, \
                   deviation = excluded.deviation, volatility = excluded.volatility, \
                   games = excluded.games, last_ended_at = excluded.last_ended_at"
            ),
            &[
                &cols.player,
                &cols.game,
                &cols.rating,
                &cols.deviation,
                &cols.volatility,
                &cols.games,
                &cols.last,
            ],
        )
        .await?;
    Ok(())
}

#[derive(Default)]
struct StandingColumns {
    player: Vec<Uuid>,
    game: Vec<String>,
    rating: Vec<f64>,
    deviation: Vec<f64>,
    volatility: Vec<f64>,
    games: Vec<i32>,
    last: Vec<OffsetDateTime>,
}
