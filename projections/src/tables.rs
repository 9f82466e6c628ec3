//! How each projection applies a batch of events to its tables. Every function runs inside the
//! runner's transaction and writes with set-based statements (`unnest` of arrays), so a batch of
//! thousands of events costs a handful of round trips.

use std::collections::HashSet;

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;
use uuid::Uuid;

use domain::ids::Seat;
use domain::matches::{DaysPerMove, TurnSeconds};
use domain::ratings::Score;
use domain::tickets::{Ticket, TicketEvent};
use eventlog::RecordedEvent;

use crate::facts::{self, Finished};
use crate::ledger::{Ledger, RatedStep};
use crate::{Error, Projection, standings};

/// Applies `events` (already filtered to the projection's types) to its tables.
pub async fn apply(
    client: &impl GenericClient,
    projection: Projection,
    events: &[RecordedEvent],
    explorer_plies: &crate::explorer::Plies,
    folds: &crate::tournaments::Folds,
) -> Result<(), Error> {
    match projection {
        Projection::Ratings => {
            let finished = facts::finished_in(client, events).await?;
            let (ledger, steps) = rate(client, "ratings", &finished).await?;
            standings::write_standings(client, "ratings", &ledger, &steps).await?;
            write_points(client, &steps).await
        }
        Projection::Leaderboards => {
            let finished = facts::finished_in(client, events).await?;
            let (ledger, steps) = rate(client, "leaderboard", &finished).await?;
            standings::write_standings(client, "leaderboard", &ledger, &steps).await?;
            write_bots(client, events).await
        }
        Projection::History => {
            let finished = facts::finished_in(client, events).await?;
            write_history(client, &finished).await?;
            queue_assessments(client, &finished).await
        }
        Projection::Queue => apply_queue(client, events).await,
        Projection::Tournaments => crate::tournaments::apply(client, events, folds).await,
        Projection::Explorer => {
            let finished = facts::finished_in(client, events).await?;
            crate::explorer::apply(client, &finished, explorer_plies).await
        }
    }
}

/// Loads the standings of every player of the rated matches from `table` (`ratings` or
/// `leaderboard`, which have the same columns), then rates the matches in order.
async fn rate(
    client: &impl GenericClient,
    table: &str,
    finished: &[Finished],
) -> Result<(Ledger, Vec<RatedStep>), Error> {
    let players: Vec<Uuid> = finished
        .iter()
        .filter(|f| f.is_rated())
        .flat_map(|f| f.players.iter().flatten().map(|p| p.as_uuid()))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let mut ledger = standings::load_ledger(client, table, &players).await?;
    let steps = finished
        .iter()
        .filter_map(|f| ledger.apply(f))
        .flatten()
        .collect();
    Ok((ledger, steps))
}

/// Keeps `leaderboard_bots` as the batch's bot declarations leave it, in log order.
async fn write_bots(client: &impl GenericClient, events: &[RecordedEvent]) -> Result<(), Error> {
    for e in events {
        let declared = match e.event_type.as_str() {
            "player_declared_bot" => true,
            "player_declared_human" => false,
            _ => continue,
        };
        let player =
            domain::standing::Standing::player_of(&e.stream).ok_or_else(|| Error::Event {
                position: e.position,
                reason: format!("`{}` is not a player's stream", e.stream),
            })?;
        let sql = if declared {
            "INSERT INTO leaderboard_bots (player_id) VALUES ($1) ON CONFLICT DO NOTHING"
        } else {
            "DELETE FROM leaderboard_bots WHERE player_id = $1"
        };
        client.execute(sql, &[&player.as_uuid()]).await?;
    }
    Ok(())
}

/// Inserts every rating step of the batch (a second application would hit the primary key).
async fn write_points(client: &impl GenericClient, steps: &[RatedStep]) -> Result<(), Error> {
    if steps.is_empty() {
        return Ok(());
    }
    let n = steps.len();
    let mut player = Vec::with_capacity(n);
    let mut game = Vec::with_capacity(n);
    let mut games = Vec::with_capacity(n);
    let mut match_id = Vec::with_capacity(n);
    let mut at = Vec::with_capacity(n);
    let mut opponent = Vec::with_capacity(n);
    let mut score = Vec::with_capacity(n);
    let mut before = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::new());
    let mut idle = Vec::with_capacity(n);
    let mut pre_dev = Vec::with_capacity(n);
    let mut after = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::new());
    let mut created = Vec::with_capacity(n);
    let mut ended = Vec::with_capacity(n);
    for s in steps {
        player.push(s.player.as_uuid());
        game.push(s.ladder.as_str().to_owned());
        games.push(i32::try_from(s.games).unwrap_or(i32::MAX));
        match_id.push(s.match_id.as_uuid());
        at.push(s.at);
        opponent.push(s.opponent.as_uuid());
        score.push(s.step.score.points());
        before.0.push(s.step.before.rating);
        before.1.push(s.step.before.deviation);
        before.2.push(s.step.before.volatility);
        idle.push(i32::try_from(s.step.idle_days).unwrap_or(i32::MAX));
        pre_dev.push(s.step.pre_match.deviation);
        after.0.push(s.step.after.rating);
        after.1.push(s.step.after.deviation);
        after.2.push(s.step.after.volatility);
        created.push(s.created_position);
        ended.push(s.ended_position);
    }
    client
        .execute(
            "INSERT INTO rating_points (player_id, game, games, match_id, at, opponent, score, \
               before_rating, before_deviation, before_volatility, idle_days, pre_deviation, \
               rating, deviation, volatility, created_position, ended_position) \
             SELECT * FROM unnest($1::uuid[], $2::text[], $3::int4[], $4::uuid[], \
               $5::timestamptz[], $6::uuid[], $7::float8[], $8::float8[], $9::float8[], \
               $10::float8[], $11::int4[], $12::float8[], $13::float8[], $14::float8[], \
               $15::float8[], $16::int8[], $17::int8[])",
            &[
                &player, &game, &games, &match_id, &at, &opponent, &score, &before.0, &before.1,
                &before.2, &idle, &pre_dev, &after.0, &after.1, &after.2, &created, &ended,
            ],
        )
        .await?;
    Ok(())
}

/// One row per human seat of every finished match.
async fn write_history(client: &impl GenericClient, finished: &[Finished]) -> Result<(), Error> {
    let moves = facts::moves_of(client, finished, domain::openings::plies_needed).await?;
    let mut opening_name: Vec<Option<String>> = Vec::new();
    let mut opening_line: Vec<Option<String>> = Vec::new();
    let mut player = Vec::new();
    let mut match_id = Vec::new();
    let mut game = Vec::new();
    let mut ranked = Vec::new();
    let mut correspondence = Vec::new();
    let mut seat_no = Vec::new();
    let mut started = Vec::new();
    let mut opponent: Vec<Option<Uuid>> = Vec::new();
    let mut result = Vec::new();
    let mut reason = Vec::new();
    let mut ended_at = Vec::new();
    let mut ended_position = Vec::new();
    for f in finished {
        let played = moves
            .get(&f.match_id.as_uuid())
            .map_or(&[][..], Vec::as_slice);
        let opening = domain::openings::opening(f.game, played);
        for seat in Seat::BOTH {
            let Some(p) = f.players[seat.index()] else {
                continue;
            };
            opening_name.push(opening.as_ref().map(|o| o.name.to_string()));
            opening_line.push(opening.as_ref().map(|o| o.line.to_string()));
            player.push(p.as_uuid());
            match_id.push(f.match_id.as_uuid());
            game.push(f.game.as_str().to_owned());
            ranked.push(f.ranked);
            correspondence.push(f.correspondence);
            seat_no.push(i16::from(seat.number()));
            started.push(f.first_seat == seat);
            opponent.push(f.players[seat.other().index()].map(|o| o.as_uuid()));
            result.push(
                match f.score_of(seat) {
                    Score::Win => "win",
                    Score::Draw => "draw",
                    Score::Loss => "loss",
                }
                .to_owned(),
            );
            reason.push(facts::reason_name(f.reason).to_owned());
            ended_at.push(f.ended_at);
            ended_position.push(f.ended_position);
        }
    }
    if player.is_empty() {
        return Ok(());
    }
    client
        .execute(
            "INSERT INTO match_history (player_id, match_id, game, ranked, seat, started, \
               opponent, result, reason, ended_at, ended_position, opening_name, opening_line, \
               correspondence) \
             SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bool[], $5::int2[], \
               $6::bool[], $7::uuid[], $8::text[], $9::text[], $10::timestamptz[], $11::int8[], \
               $12::text[], $13::text[], $14::bool[])",
            &[
                &player,
                &match_id,
                &game,
                &ranked,
                &seat_no,
                &started,
                &opponent,
                &result,
                &reason,
                &ended_at,
                &ended_position,
                &opening_name,
                &opening_line,
                &correspondence,
            ],
        )
        .await?;
    Ok(())
}

/// The history's outbox: each finished ranked match is queued for its move-quality assessment
/// (`move_quality_pending`, migration V14), in the batch's transaction, once. Not one of the
/// projection's tables: a rebuild queues the matches again (in `public`, where the table
/// lives), and the assessment skips those already done.
async fn queue_assessments(
    client: &impl GenericClient,
    finished: &[Finished],
) -> Result<(), Error> {
    let (ids, at): (Vec<Uuid>, Vec<OffsetDateTime>) = finished
        .iter()
        .filter(|f| f.ranked)
        .map(|f| (f.match_id.as_uuid(), f.ended_at))
        .unzip();
    if ids.is_empty() {
        return Ok(());
    }
    client
        .execute(
            "INSERT INTO public.move_quality_pending (match_id, queued_at) \
             SELECT * FROM unnest($1::uuid[], $2::timestamptz[]) ON CONFLICT DO NOTHING",
            &[&ids, &at],
        )
        .await?;
    Ok(())
}

/// Waiting tickets in, closed tickets out; each pairing's quality kept for the statistics.
async fn apply_queue(client: &impl GenericClient, events: &[RecordedEvent]) -> Result<(), Error> {
    for e in events {
        let bad = |reason: String| Error::Event {
            position: e.position,
            reason,
        };
        let ticket = e
            .stream
            .strip_prefix("ticket-")
            .and_then(|s| Uuid::parse_str(s).ok())
            .ok_or_else(|| bad(format!("`{}` is not a ticket stream", e.stream)))?;
        match crate::fold::decode::<Ticket>(e)? {
            TicketEvent::TicketOpened(o) => {
                let turn = TurnSeconds::code(o.turn_seconds);
                client
                    .execute(
                        "INSERT INTO queue_tickets (ticket_id, player_id, game, turn_seconds, \
                           rating, deviation, opened_at, days_per_move) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                        &[
                            &ticket,
                            &o.player_id.as_uuid(),
                            &o.game.as_str(),
                            &turn,
                            &o.rating,
                            &o.deviation,
                            &e.recorded_at,
                            &DaysPerMove::code(o.days_per_move),
                        ],
                    )
                    .await?;
            }
            TicketEvent::TicketCancelled {} => {
                client
                    .execute("DELETE FROM queue_tickets WHERE ticket_id = $1", &[&ticket])
                    .await?;
            }
            TicketEvent::TicketMatched(m) => {
                let waited = i64::try_from(m.waited_ms).unwrap_or(i64::MAX);
                client
                    .execute(
                        "WITH gone AS (DELETE FROM queue_tickets WHERE ticket_id = $1 \
                           RETURNING ticket_id, game, turn_seconds, days_per_move) \
                         INSERT INTO queue_pairs (ticket_id, game, turn_seconds, days_per_move, \
                           waited_ms, rating_gap, repeat, matched_at) \
                         SELECT ticket_id, game, turn_seconds, days_per_move, $2, $3, $4, $5 \
                           FROM gone",
                        &[&ticket, &waited, &m.rating_gap, &m.repeat, &e.recorded_at],
                    )
                    .await?;
            }
        }
    }
    Ok(())
}
