//! The bounds a tournament keeps: how long an arena runs, how many rounds a Swiss tournament
//! has, how many players each format takes, its name, how far ahead it is scheduled, when
//! joining opens and when an arena stops pairing.
//!
//! Each bound is defined here once: `decide` holds a tournament to them, and the HTTP edge reads
//! them for its OpenAPI schema, its error texts and the catalogue's `limits` (`GET /v1/games`),
//! from which the web client bounds its form.

use std::ops::RangeInclusive;

use time::Duration;

/// How long an arena may run, in minutes.
pub const ARENA_MINUTES: RangeInclusive<u32> = 10..=1440;
/// How many rounds a Swiss tournament may have.
pub const SWISS_ROUNDS: RangeInclusive<u32> = 3..=50;
/// The most players a round robin takes.
pub const ROUND_ROBIN_MAX: u32 = 16;
/// The fewest players a tournament may be limited to (`max_players`).
pub const PLAYERS_MIN: u32 = 2;
/// The most players any tournament takes.
pub const PLAYERS_MAX: u32 = 20_000;
/// The longest name.
pub const NAME_MAX: usize = 60;
/// How far ahead a tournament may be scheduled, in days.
pub const SCHEDULED_DAYS_MAX: u32 = 90;
/// How far ahead a tournament may be scheduled.
pub const SCHEDULED_AT_MOST: Duration = Duration::days(SCHEDULED_DAYS_MAX as i64);
/// Joining opens this long before the start.
pub const JOINS_OPEN_BEFORE: Duration = Duration::hours(1);
/// An arena stops taking players and making pairings this long before its end.
pub const ARENA_CLOSES_BEFORE_END: Duration = Duration::seconds(60);
/// The turn limit of a tournament's games when its creator does not say, in seconds (one of
/// [`crate::matches::TurnSeconds::ALLOWED`]).
pub const DEFAULT_TURN_SECONDS: u32 = 30;
