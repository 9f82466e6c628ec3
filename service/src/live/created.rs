//! A match created beside another command, in that command's transaction: a wave's pairing
//! (with its two tickets), a tournament's step (with the tournament's events), a challenge's
//! acceptance (with the challenge's). Each such creator appends its own streams together; what
//! the match itself is and commits with is decided here, once: its events on the empty state,
//! its stream's append, and after the append the rows it needs (a correspondence game's players
//! and deadline, a real-time match's work row and players, and a ranked real-time match's seats,
//! last, which the database refuses to a player seated in another live ranked match).

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;

use domain::ids::MatchId;
use domain::matches::{Action, Command, CreateMatch, MatchEvent, MatchState, Stamped, evolve};
use eventlog::StreamAppend;

use crate::aggregates;
use crate::error::{Error, unexpected};
use crate::live::LivePath;
use crate::live::commit::{WorkRow, write_work};
use crate::live::loaded::Loaded;

/// A match decided for creation at `at`, not yet written.
pub struct Created {
    pub id: MatchId,
    create: CreateMatch,
    events: Vec<MatchEvent>,
    at: OffsetDateTime,
}

impl Created {
    /// Decides `create` as match `id` on the empty state.
    pub fn decide(id: MatchId, create: CreateMatch, at: OffsetDateTime) -> Result<Created, Error> {
        let events = domain::matches::decide(
            &MatchState::default(),
            &Command {
                at,
                action: Action::CreateMatch(create.clone()),
            },
        )?;
        Ok(Created {
            id,
            create,
            events,
            at,
        })
    }

    /// The append of its stream (a new one: expected at version 0).
    pub fn append(&self) -> StreamAppend {
        StreamAppend {
            stream: self.id.stream(),
            expected_version: 0,
            events: aggregates::new_events::<MatchState>(&self.events, None, self.at),
        }
    }

    /// The match as its events make it.
    pub fn loaded(&self) -> Loaded {
        let mut state = MatchState::default();
        for e in &self.events {
            evolve(
                &mut state,
                &Stamped {
                    at: self.at,
                    event: e.clone(),
                },
            );
        }
        Loaded {
            id: self.id,
            state,
            names: Default::default(),
            head: None,
            row: None,
        }
    }
}

/// Writes what `created` (appended in `tx` just before) commit with: a correspondence game's
/// rows, the work rows (with their players), then the ranked seats. The seats' failure comes back
/// as the inner error, for the caller to tell a player seated meanwhile
/// (`live::commit::lost_to_another_writer`) from anything else.
pub async fn write_beside(
    app: &LivePath,
    tx: &impl GenericClient,
    created: &[&Created],
) -> Result<Result<(), tokio_postgres::Error>, Error> {
    let mut work: Vec<WorkRow> = Vec::new();
    let (mut players, mut matches) = (Vec::new(), Vec::new());
    for c in created {
        crate::live::correspondence::open_on(tx, c.id, &c.create, c.at).await?;
        work.extend(crate::live::work::work_row(app, &c.loaded(), None, c.at));
        if c.create.seats_players() {
            for p in c.create.players() {
                players.push(p.as_uuid());
                matches.push(c.id.as_uuid());
            }
        }
    }
    write_work(tx, &work.iter().collect::<Vec<_>>())
        .await
        .map_err(unexpected)?;
    Ok(crate::standing::seat_on(tx, &players, &matches).await)
}
