//! Challenges: a player asks another for a game on stated terms (the game, rated or not, the
//! turn limit, who moves first); the challenged player accepts (the match starts) or declines
//! with a reason from a fixed list, the challenger may cancel, and a challenge nobody answers
//! lapses after [`LIFETIME`]. Each challenge is a stream of its own (`challenge-<id>`): its
//! events, the pure `decide` and `evolve` of that small life, and the match an acceptance makes.

use serde::{Deserialize, Serialize};
use time::{Duration, OffsetDateTime};

use crate::aggregate::{Aggregate, At};
use crate::games::GameId;
use crate::ids::{ChallengeId, MatchId, PlayerId, Seat};
use crate::matches::{CreateMatch, DaysPerMove, FirstMoveRule, Occupant, Settings, TurnSeconds};

/// How long a challenge waits for its answer before it lapses.
pub const LIFETIME: Duration = Duration::hours(24);

/// How many open challenges a player may have sent at once.
pub const OPEN_MAX: u32 = 10;

/// How many challenges a player may send in a minute.
pub const PER_MINUTE: u32 = 5;

/// Who moves first in the challenge's match: the challenger, the challenged player, or (the
/// default) a coin drawn when the challenge is accepted.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FirstMover {
    Challenger,
    Challenged,
    #[default]
    Random,
}

impl FirstMover {
    pub const ALL: [FirstMover; 3] = [
        FirstMover::Challenger,
        FirstMover::Challenged,
        FirstMover::Random,
    ];

    /// Its name on the wire and in the tables.
    pub fn as_str(self) -> &'static str {
        match self {
            FirstMover::Challenger => "challenger",
            FirstMover::Challenged => "challenged",
            FirstMover::Random => "random",
        }
    }

    /// The choice a stored name stands for (random for a name this build does not know).
    pub fn named(name: &str) -> FirstMover {
        FirstMover::ALL
            .into_iter()
            .find(|f| f.as_str() == name)
            .unwrap_or_default()
    }
}

/// The game a challenge offers.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Terms {
    pub game: GameId,
    /// A rated game counts for both players' ratings, as a ranked match does.
    pub rated: bool,
    pub turn_seconds: Option<TurnSeconds>,
    /// A correspondence game's days per move (never with `turn_seconds`).
    #[serde(default)]
    pub days_per_move: Option<DaysPerMove>,
    pub first: FirstMover,
}

/// Why a challenged player declines: a fixed list, each reason shown to the challenger in their
/// own language.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeclineReason {
    #[default]
    Generic,
    Later,
    TooFast,
    TooSlow,
    Rated,
    Casual,
    Game,
}

impl DeclineReason {
    pub const ALL: [DeclineReason; 7] = [
        DeclineReason::Generic,
        DeclineReason::Later,
        DeclineReason::TooFast,
        DeclineReason::TooSlow,
        DeclineReason::Rated,
        DeclineReason::Casual,
        DeclineReason::Game,
    ];

    /// The reason's name on the wire and in the texts.
    pub fn as_str(self) -> &'static str {
        match self {
            DeclineReason::Generic => "generic",
            DeclineReason::Later => "later",
            DeclineReason::TooFast => "too_fast",
            DeclineReason::TooSlow => "too_slow",
            DeclineReason::Rated => "rated",
            DeclineReason::Casual => "casual",
            DeclineReason::Game => "game",
        }
    }
}

/// Whom a player accepts challenges from: everyone (the default), only players they have
/// played a finished match with, or nobody.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Accepting {
    #[default]
    Everyone,
    Played,
    Nobody,
}

impl Accepting {
    pub const ALL: [Accepting; 3] = [Accepting::Everyone, Accepting::Played, Accepting::Nobody];

    pub fn as_str(self) -> &'static str {
        match self {
            Accepting::Everyone => "everyone",
            Accepting::Played => "played",
            Accepting::Nobody => "nobody",
        }
    }

    /// The setting a stored name stands for (everyone for a name this build does not know).
    pub fn named(name: &str) -> Accepting {
        Accepting::ALL
            .into_iter()
            .find(|a| a.as_str() == name)
            .unwrap_or_default()
    }

    /// Whether a challenge from someone the player has (`played`) or has not played is let in.
    pub fn lets_in(self, played: bool) -> bool {
        match self {
            Accepting::Everyone => true,
            Accepting::Played => played,
            Accepting::Nobody => false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChallengeSent {
    pub challenger: PlayerId,
    pub challenged: PlayerId,
    #[serde(flatten)]
    pub terms: Terms,
    pub expires_at: OffsetDateTime,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChallengeAccepted {
    pub match_id: MatchId,
    /// Whether the challenger moves first, as the terms said or the coin fell.
    pub challenger_first: bool,
    /// The coin drawn for [`FirstMover::Random`]: heads, the challenger moves first.
    pub coin: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChallengeDeclined {
    pub reason: DeclineReason,
}

/// Why an open challenge was withdrawn by the server: one of its players can no longer play it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Withdrawal {
    /// An admin banned one of its players.
    Banned,
    /// One of its players closed their account.
    Closed,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChallengeWithdrawn {
    pub player: PlayerId,
    pub because: Withdrawal,
}

/// Every event of a challenge stream. On the wire: `{"type": "<snake_case>", "data": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChallengeEvent {
    ChallengeSent(ChallengeSent),
    ChallengeAccepted(ChallengeAccepted),
    ChallengeDeclined(ChallengeDeclined),
    ChallengeCancelled,
    ChallengeExpired,
    ChallengeWithdrawn(ChallengeWithdrawn),
}

impl ChallengeEvent {
    pub const TYPES: [&'static str; 6] = [
        "challenge_sent",
        "challenge_accepted",
        "challenge_declined",
        "challenge_cancelled",
        "challenge_expired",
        "challenge_withdrawn",
    ];
    pub const SCHEMA_VERSION: i16 = 1;

    pub fn event_type(&self) -> &'static str {
        match self {
            ChallengeEvent::ChallengeSent(_) => "challenge_sent",
            ChallengeEvent::ChallengeAccepted(_) => "challenge_accepted",
            ChallengeEvent::ChallengeDeclined(_) => "challenge_declined",
            ChallengeEvent::ChallengeCancelled => "challenge_cancelled",
            ChallengeEvent::ChallengeExpired => "challenge_expired",
            ChallengeEvent::ChallengeWithdrawn(_) => "challenge_withdrawn",
        }
    }

    /// The payload (`data`) as JSON.
    pub fn data(&self) -> serde_json::Value {
        match self {
            ChallengeEvent::ChallengeSent(e) => serde_json::to_value(e),
            ChallengeEvent::ChallengeAccepted(e) => serde_json::to_value(e),
            ChallengeEvent::ChallengeDeclined(e) => serde_json::to_value(e),
            ChallengeEvent::ChallengeWithdrawn(e) => serde_json::to_value(e),
            ChallengeEvent::ChallengeCancelled | ChallengeEvent::ChallengeExpired => {
                Ok(serde_json::json!({}))
            }
        }
        .unwrap_or(serde_json::Value::Null)
    }

    /// Reads a stored challenge event (the place where old payload versions would be upcast).
    pub fn decode(
        event_type: &str,
        version: i16,
        data: &serde_json::Value,
    ) -> Result<ChallengeEvent, String> {
        if version != Self::SCHEMA_VERSION {
            return Err(format!(
                "event `{event_type}` has schema version {version}, which this build does not know"
            ));
        }
        let bad = |e: serde_json::Error| format!("event `{event_type}` is malformed: {e}");
        match event_type {
            "challenge_sent" => ChallengeSent::deserialize(data)
                .map(ChallengeEvent::ChallengeSent)
                .map_err(bad),
            "challenge_accepted" => ChallengeAccepted::deserialize(data)
                .map(ChallengeEvent::ChallengeAccepted)
                .map_err(bad),
            "challenge_declined" => ChallengeDeclined::deserialize(data)
                .map(ChallengeEvent::ChallengeDeclined)
                .map_err(bad),
            "challenge_cancelled" => Ok(ChallengeEvent::ChallengeCancelled),
            "challenge_expired" => Ok(ChallengeEvent::ChallengeExpired),
            "challenge_withdrawn" => ChallengeWithdrawn::deserialize(data)
                .map(ChallengeEvent::ChallengeWithdrawn)
                .map_err(bad),
            other => Err(format!("unknown challenge event type `{other}`")),
        }
    }
}

/// Where a challenge stands.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ChallengeStatus"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Open,
    Accepted,
    Declined,
    Cancelled,
    Expired,
    Withdrawn,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Accepted => "accepted",
            Status::Declined => "declined",
            Status::Cancelled => "cancelled",
            Status::Expired => "expired",
            Status::Withdrawn => "withdrawn",
        }
    }
}

/// A challenge folded from its events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    pub sent: ChallengeSent,
    pub sent_at: OffsetDateTime,
    pub status: Status,
    /// The match an acceptance started.
    pub match_id: Option<MatchId>,
    pub challenger_first: Option<bool>,
    pub declined: Option<DeclineReason>,
    /// When it was answered, cancelled or lapsed.
    pub closed_at: Option<OffsetDateTime>,
    /// The stream version.
    pub version: u64,
}

/// What can be asked of a challenge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Send(ChallengeSent),
    /// The challenged player accepts: the match `match_id` starts, who moves first drawn by
    /// `coin` (heads, the challenger) when the terms leave it to chance.
    Accept {
        by: PlayerId,
        match_id: MatchId,
        coin: bool,
    },
    Decline {
        by: PlayerId,
        reason: DeclineReason,
    },
    Cancel {
        by: PlayerId,
    },
    /// Nobody answered within its lifetime.
    Expire,
    /// `player`, one of its two, can no longer play it.
    Withdraw {
        player: PlayerId,
        because: Withdrawal,
    },
}

/// Why a challenge command is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChallengeError {
    #[error("the challenge exists already")]
    Exists,
    #[error("the challenge does not exist")]
    Missing,
    #[error("a player cannot challenge themselves")]
    Yourself,
    #[error("the challenge is no longer open")]
    Closed(Status),
    #[error("only the challenged player answers a challenge")]
    NotChallenged,
    #[error("only the challenger cancels a challenge")]
    NotChallenger,
    #[error("the challenge has lapsed")]
    Lapsed,
    #[error("the challenge has not lapsed yet")]
    TooEarly,
    #[error("a challenge lapses after its sending")]
    Expiry,
    #[error("a game has one clock: turn_seconds or days_per_move")]
    TwoClocks,
}

impl Challenge {
    /// The player on the other side from `player`, if `player` is one of the two.
    pub fn other_than(&self, player: PlayerId) -> Option<PlayerId> {
        if player == self.sent.challenger {
            Some(self.sent.challenged)
        } else if player == self.sent.challenged {
            Some(self.sent.challenger)
        } else {
            None
        }
    }

    /// Whether `player` is the challenger or the challenged player.
    pub fn involves(&self, player: PlayerId) -> bool {
        self.other_than(player).is_some()
    }

    /// The match an acceptance starts: the challenger in seat 1, who moves first as accepted,
    /// ranked when the terms are rated.
    pub fn create_match(&self, accepted: &ChallengeAccepted, cpu_seed: u64) -> CreateMatch {
        let terms = self.sent.terms;
        CreateMatch {
            game: terms.game,
            seats: [
                Occupant::Human {
                    player_id: self.sent.challenger,
                },
                Occupant::Human {
                    player_id: self.sent.challenged,
                },
            ],
            settings: Settings {
                turn_seconds: terms.turn_seconds,
                days_per_move: terms.days_per_move,
                ..Settings::default()
            },
            first_seat: if accepted.challenger_first {
                Seat::ONE
            } else {
                Seat::TWO
            },
            first_rule: match accepted.coin {
                Some(heads) => FirstMoveRule::CoinFlip { heads },
                None => FirstMoveRule::Setting,
            },
            ranked: terms.rated,
            room_id: None,
            tournament_id: None,
            cpu_seed,
        }
    }

    fn open(&self, at: OffsetDateTime) -> Result<(), ChallengeError> {
        if self.status != Status::Open {
            return Err(ChallengeError::Closed(self.status));
        }
        if at >= self.sent.expires_at {
            return Err(ChallengeError::Lapsed);
        }
        Ok(())
    }
}

/// A challenge's stream, `challenge-<id>`: `None` until it is sent.
impl Aggregate for Challenge {
    type Id = ChallengeId;
    type State = Option<Challenge>;
    type Event = ChallengeEvent;
    type Command = At<Command>;
    type Error = ChallengeError;

    const KIND: &'static str = "challenge";

    fn event_type(event: &ChallengeEvent) -> &'static str {
        event.event_type()
    }

    fn schema_version(_: &ChallengeEvent) -> i16 {
        ChallengeEvent::SCHEMA_VERSION
    }

    fn data(event: &ChallengeEvent) -> serde_json::Value {
        event.data()
    }

    fn decode(
        event_type: &str,
        schema_version: i16,
        data: &serde_json::Value,
    ) -> Result<ChallengeEvent, String> {
        ChallengeEvent::decode(event_type, schema_version, data)
    }

    fn decide(
        state: &Option<Challenge>,
        command: &At<Command>,
    ) -> Result<Vec<ChallengeEvent>, ChallengeError> {
        let at = command.at;
        let Some(c) = state else {
            return match &command.command {
                Command::Send(sent) if sent.challenger == sent.challenged => {
                    Err(ChallengeError::Yourself)
                }
                Command::Send(sent) if sent.expires_at <= at => Err(ChallengeError::Expiry),
                Command::Send(sent)
                    if sent.terms.turn_seconds.is_some() && sent.terms.days_per_move.is_some() =>
                {
                    Err(ChallengeError::TwoClocks)
                }
                Command::Send(sent) => Ok(vec![ChallengeEvent::ChallengeSent(sent.clone())]),
                _ => Err(ChallengeError::Missing),
            };
        };
        let event = match &command.command {
            Command::Send(_) => return Err(ChallengeError::Exists),
            Command::Accept { by, match_id, coin } => {
                if *by != c.sent.challenged {
                    return Err(ChallengeError::NotChallenged);
                }
                c.open(at)?;
                let (challenger_first, coin) = match c.sent.terms.first {
                    FirstMover::Challenger => (true, None),
                    FirstMover::Challenged => (false, None),
                    FirstMover::Random => (*coin, Some(*coin)),
                };
                ChallengeEvent::ChallengeAccepted(ChallengeAccepted {
                    match_id: *match_id,
                    challenger_first,
                    coin,
                })
            }
            Command::Decline { by, reason } => {
                if *by != c.sent.challenged {
                    return Err(ChallengeError::NotChallenged);
                }
                c.open(at)?;
                ChallengeEvent::ChallengeDeclined(ChallengeDeclined { reason: *reason })
            }
            Command::Cancel { by } => {
                if *by != c.sent.challenger {
                    return Err(ChallengeError::NotChallenger);
                }
                c.open(at)?;
                ChallengeEvent::ChallengeCancelled
            }
            Command::Expire => {
                if c.status != Status::Open {
                    return Err(ChallengeError::Closed(c.status));
                }
                if at < c.sent.expires_at {
                    return Err(ChallengeError::TooEarly);
                }
                ChallengeEvent::ChallengeExpired
            }
            Command::Withdraw { player, because } => {
                if !c.involves(*player) {
                    return Err(ChallengeError::Missing);
                }
                if c.status != Status::Open {
                    return Err(ChallengeError::Closed(c.status));
                }
                ChallengeEvent::ChallengeWithdrawn(ChallengeWithdrawn {
                    player: *player,
                    because: *because,
                })
            }
        };
        Ok(vec![event])
    }

    fn evolve(state: &mut Option<Challenge>, at: OffsetDateTime, event: &ChallengeEvent) {
        let Some(c) = state.as_mut() else {
            if let ChallengeEvent::ChallengeSent(sent) = event {
                *state = Some(Challenge {
                    sent: sent.clone(),
                    sent_at: at,
                    status: Status::Open,
                    match_id: None,
                    challenger_first: None,
                    declined: None,
                    closed_at: None,
                    version: 1,
                });
            }
            return;
        };
        c.version += 1;
        let status = match event {
            // Not a sequence decide() writes; counted so versions stay aligned.
            ChallengeEvent::ChallengeSent(_) => return,
            ChallengeEvent::ChallengeAccepted(a) => {
                c.match_id = Some(a.match_id);
                c.challenger_first = Some(a.challenger_first);
                Status::Accepted
            }
            ChallengeEvent::ChallengeDeclined(d) => {
                c.declined = Some(d.reason);
                Status::Declined
            }
            ChallengeEvent::ChallengeCancelled => Status::Cancelled,
            ChallengeEvent::ChallengeExpired => Status::Expired,
            ChallengeEvent::ChallengeWithdrawn(_) => Status::Withdrawn,
        };
        c.status = status;
        c.closed_at = Some(at);
    }

    fn version(state: &Option<Challenge>) -> u64 {
        state.as_ref().map_or(0, |c| c.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::decided;
    use uuid::Uuid;

    fn player(n: u128) -> PlayerId {
        PlayerId::from_uuid(Uuid::from_u128(n))
    }

    fn at(minutes: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + Duration::minutes(minutes)
    }

    fn sent(first: FirstMover) -> ChallengeSent {
        ChallengeSent {
            challenger: player(1),
            challenged: player(2),
            terms: Terms {
                game: GameId::Reversi,
                rated: true,
                turn_seconds: TurnSeconds::try_from(60).ok(),
                days_per_move: None,
                first,
            },
            expires_at: at(0) + LIFETIME,
        }
    }

    /// The challenge after `commands`, each decided at its minute; the last one's refusal.
    fn run(commands: &[(i64, Command)]) -> (Option<Challenge>, Option<ChallengeError>) {
        let mut state = None;
        for (minute, command) in commands {
            let command = At {
                at: at(*minute),
                command: command.clone(),
            };
            match decided::<Challenge>(&state, &command, at(*minute)) {
                Ok((_, next)) => state = next,
                Err(e) => return (state, Some(e)),
            }
        }
        (state, None)
    }

    #[test]
    fn the_challenged_player_accepts_and_the_match_follows_the_terms() {
        let match_id = MatchId::from_uuid(Uuid::from_u128(9));
        for (first, coin, challenger_first) in [
            (FirstMover::Challenger, false, true),
            (FirstMover::Challenged, true, false),
            (FirstMover::Random, true, true),
            (FirstMover::Random, false, false),
        ] {
            let (c, refused) = run(&[
                (0, Command::Send(sent(first))),
                (
                    5,
                    Command::Accept {
                        by: player(2),
                        match_id,
                        coin,
                    },
                ),
            ]);
            assert_eq!(refused, None);
            let c = c.expect("sent");
            assert_eq!(
                (c.status, c.match_id, c.version, c.closed_at),
                (Status::Accepted, Some(match_id), 2, Some(at(5)))
            );
            assert_eq!(c.challenger_first, Some(challenger_first));
            let accepted = ChallengeAccepted {
                match_id,
                challenger_first,
                coin: (first == FirstMover::Random).then_some(coin),
            };
            let create = c.create_match(&accepted, 77);
            assert!(create.ranked);
            assert_eq!(create.game, GameId::Reversi);
            assert_eq!(
                create.seats,
                [
                    Occupant::Human {
                        player_id: player(1)
                    },
                    Occupant::Human {
                        player_id: player(2)
                    }
                ]
            );
            let expected_first = if challenger_first {
                Seat::ONE
            } else {
                Seat::TWO
            };
            assert_eq!(create.first_seat, expected_first);
            assert_eq!(create.settings.turn_seconds.map(TurnSeconds::get), Some(60));
        }
    }

    #[test]
    fn each_side_may_do_only_its_own_part_and_only_while_it_is_open() {
        let send = (0, Command::Send(sent(FirstMover::Random)));
        let accept = |by, minute| {
            (
                minute,
                Command::Accept {
                    by: player(by),
                    match_id: MatchId::from_uuid(Uuid::from_u128(9)),
                    coin: true,
                },
            )
        };
        let decline = |by| {
            (
                1,
                Command::Decline {
                    by: player(by),
                    reason: DeclineReason::TooFast,
                },
            )
        };
        let cancel = |by| (1, Command::Cancel { by: player(by) });
        assert_eq!(
            run(&[send.clone(), accept(1, 1)]).1,
            Some(ChallengeError::NotChallenged)
        );
        assert_eq!(
            run(&[send.clone(), accept(3, 1)]).1,
            Some(ChallengeError::NotChallenged)
        );
        assert_eq!(
            run(&[send.clone(), decline(1)]).1,
            Some(ChallengeError::NotChallenged)
        );
        assert_eq!(
            run(&[send.clone(), cancel(2)]).1,
            Some(ChallengeError::NotChallenger)
        );
        let (c, refused) = run(&[send.clone(), decline(2)]);
        assert_eq!(refused, None);
        let c = c.expect("sent");
        assert_eq!(
            (c.status, c.declined),
            (Status::Declined, Some(DeclineReason::TooFast))
        );
        assert_eq!(
            run(&[send.clone(), cancel(1), accept(2, 2)]).1,
            Some(ChallengeError::Closed(Status::Cancelled))
        );
        assert_eq!(
            run(&[send.clone(), decline(2), cancel(1)]).1,
            Some(ChallengeError::Closed(Status::Declined))
        );
        assert_eq!(
            run(&[send.clone(), send.clone()]).1,
            Some(ChallengeError::Exists)
        );
        assert_eq!(run(&[cancel(1)]).1, Some(ChallengeError::Missing));
        let mut yourself = sent(FirstMover::Random);
        yourself.challenged = yourself.challenger;
        assert_eq!(
            run(&[(0, Command::Send(yourself))]).1,
            Some(ChallengeError::Yourself)
        );
    }

    #[test]
    fn an_unanswered_challenge_lapses_at_its_time_and_not_before() {
        let send = (0, Command::Send(sent(FirstMover::Challenger)));
        let lapse = LIFETIME.whole_minutes();
        assert_eq!(
            run(&[send.clone(), (lapse - 1, Command::Expire)]).1,
            Some(ChallengeError::TooEarly)
        );
        let late_accept = (
            lapse,
            Command::Accept {
                by: player(2),
                match_id: MatchId::from_uuid(Uuid::from_u128(9)),
                coin: false,
            },
        );
        assert_eq!(
            run(&[send.clone(), late_accept]).1,
            Some(ChallengeError::Lapsed)
        );
        let (c, refused) = run(&[send.clone(), (lapse, Command::Expire)]);
        assert_eq!(refused, None);
        assert_eq!(c.expect("sent").status, Status::Expired);
        assert_eq!(
            run(&[
                send.clone(),
                (lapse, Command::Expire),
                (lapse + 1, Command::Expire)
            ])
            .1,
            Some(ChallengeError::Closed(Status::Expired))
        );
        let mut stale = sent(FirstMover::Random);
        stale.expires_at = at(0);
        assert_eq!(
            run(&[(0, Command::Send(stale))]).1,
            Some(ChallengeError::Expiry)
        );
    }

    #[test]
    fn events_round_trip_through_their_stored_form() {
        let events = [
            ChallengeEvent::ChallengeSent(sent(FirstMover::Challenged)),
            ChallengeEvent::ChallengeAccepted(ChallengeAccepted {
                match_id: MatchId::from_uuid(Uuid::from_u128(9)),
                challenger_first: false,
                coin: Some(false),
            }),
            ChallengeEvent::ChallengeDeclined(ChallengeDeclined {
                reason: DeclineReason::Casual,
            }),
            ChallengeEvent::ChallengeCancelled,
            ChallengeEvent::ChallengeExpired,
            ChallengeEvent::ChallengeWithdrawn(ChallengeWithdrawn {
                player: player(2),
                because: Withdrawal::Banned,
            }),
        ];
        for (e, name) in events.iter().zip(ChallengeEvent::TYPES) {
            assert_eq!(e.event_type(), name);
            let back = ChallengeEvent::decode(name, 1, &e.data()).expect("decodes");
            assert_eq!(&back, e);
        }
        assert!(ChallengeEvent::decode("challenge_sent", 2, &events[0].data()).is_err());
        assert!(ChallengeEvent::decode("challenge_won", 1, &serde_json::json!({})).is_err());
        for reason in DeclineReason::ALL {
            assert_eq!(
                serde_json::to_value(reason).expect("a name"),
                serde_json::json!(reason.as_str())
            );
        }
        for accepting in Accepting::ALL {
            assert_eq!(Accepting::named(accepting.as_str()), accepting);
        }
        for first in FirstMover::ALL {
            assert_eq!(FirstMover::named(first.as_str()), first);
            assert_eq!(
                serde_json::to_value(first).expect("a name"),
                serde_json::json!(first.as_str())
            );
        }
    }

    #[test]
    fn a_challenge_is_withdrawn_once_for_one_of_its_players() {
        let send = (0, Command::Send(sent(FirstMover::Random)));
        let withdraw = |p| {
            (
                1,
                Command::Withdraw {
                    player: player(p),
                    because: Withdrawal::Closed,
                },
            )
        };
        assert_eq!(
            run(&[send.clone(), withdraw(3)]).1,
            Some(ChallengeError::Missing)
        );
        let (c, refused) = run(&[send.clone(), withdraw(2)]);
        assert_eq!(refused, None);
        assert_eq!(c.expect("sent").status, Status::Withdrawn);
        assert_eq!(
            run(&[send, withdraw(1), withdraw(2)]).1,
            Some(ChallengeError::Closed(Status::Withdrawn))
        );
    }

    #[test]
    fn a_setting_lets_in_whom_it_names() {
        assert!(Accepting::Everyone.lets_in(false));
        assert!(Accepting::Played.lets_in(true));
        assert!(!Accepting::Played.lets_in(false));
        assert!(!Accepting::Nobody.lets_in(true));
    }
}
