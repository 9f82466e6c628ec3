//! The chance the application draws from: the operating system's, or a seeded one in tests.
//!
//! The domain never draws: a coin for who moves first and a seed for the CPU's choices come in
//! with the command, drawn here. Tests give the application a [`SeededChance`] so that the games
//! they play are the same on every run, as a [`crate::clock::ManualClock`] makes their times.

use std::sync::Mutex;

use domain::rng::SplitMix64;
use uuid::Uuid;

pub trait Chance: Send + Sync + 'static {
    /// 64 random bits.
    fn bits(&self) -> u64;

    /// A fair coin: who moves first when nothing else decides it.
    fn coin(&self) -> bool {
        self.bits() & 1 == 1
    }
}

/// The operating system's random source (the bytes of a version-4 UUID that hold no version or
/// variant bits): nothing a player chooses or knows, and a CPU seed nobody can brute-force from
/// the moves they see.
#[derive(Debug, Default)]
pub struct SystemChance;

impl Chance for SystemChance {
    fn bits(&self) -> u64 {
        let b = Uuid::new_v4().into_bytes();
        u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[10], b[11]])
    }
}

/// Draws from a seed: the same sequence on every run.
#[derive(Debug)]
pub struct SeededChance(Mutex<SplitMix64>);

impl SeededChance {
    pub fn new(seed: u64) -> SeededChance {
        SeededChance(Mutex::new(SplitMix64(seed)))
    }
}

impl Chance for SeededChance {
    fn bits(&self) -> u64 {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).next_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_draws_64_bits() {
        // Sixteen draws all below 2^32 would come once in 2^512 draws of 64 random bits.
        let draws: Vec<u64> = (0..16).map(|_| SystemChance.bits()).collect();
        assert!(draws.iter().any(|&s| s > u64::from(u32::MAX)), "{draws:?}");
        assert!(draws.iter().any(|&s| s & 0xFFFF_FFFF != 0));
    }

    #[test]
    fn a_seed_draws_the_same_sequence_and_both_sides_of_the_coin() {
        let (a, b) = (SeededChance::new(7), SeededChance::new(7));
        let first: Vec<u64> = (0..8).map(|_| a.bits()).collect();
        let second: Vec<u64> = (0..8).map(|_| b.bits()).collect();
        assert_eq!(first, second);
        let coins: Vec<bool> = (0..32).map(|_| a.coin()).collect();
        assert!(coins.contains(&true) && coins.contains(&false), "{coins:?}");
    }
}
