//! SplitMix64, the crate's one seeded generator: the CPU levels' reproducible draws, and the
//! random games, pools and workloads of the tests and benches (so they are the same on every
//! run). It is a plain function of its seed: nothing random comes from outside.

/// SplitMix64 (Steele, Lea and Flood): the state is the seed, advanced by a constant.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` by multiply-shift (0 when `n` is 0): the CPU's draws. Changing it
    /// changes which moves replays pick, so it stays as it is.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// One of `items` by [`SplitMix64::below`], or `None` when there are none.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
        let i = self.below(items.len() as u64);
        items.get(i as usize).copied()
    }

    /// A number in `0..n` (`n` > 0) by modulo: the tests' random games and pools and the
    /// benches' workloads (the tiny bias does not matter there; changing it would change them).
    pub fn modulo(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// An index into a slice of `len` (> 0) items, by [`SplitMix64::modulo`].
    pub fn index(&mut self, len: usize) -> usize {
        self.modulo(len as u64) as usize
    }

    /// A number in `lo..=hi`, by [`SplitMix64::modulo`].
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.modulo(hi - lo + 1)
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.modulo(100) < percent
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Normal, by Box–Muller.
    pub fn normal(&mut self, mean: f64, sd: f64) -> f64 {
        let u1 = self.unit().max(1e-300);
        let u2 = self.unit();
        mean + sd * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_splitmix64s() {
        // The first outputs for seed 0 (the reference implementation's published values).
        let mut rng = SplitMix64(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn draws_stay_in_range() {
        let mut rng = SplitMix64(9);
        for n in 1..200 {
            assert!(rng.below(n) < n && rng.modulo(n) < n);
            assert!((3..=n + 3).contains(&rng.range(3, n + 3)));
        }
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.pick::<u8>(&[]), None);
    }
}
