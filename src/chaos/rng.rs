//! The run's one source of randomness: a seeded SplitMix64, so that a seed
//! gives the same plan on every machine (no crate's generator may change
//! its stream between versions).

/// A seeded pseudo-random generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The generator of `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` above 0).
    pub fn below(&mut self, n: usize) -> usize {
        let n = u64::try_from(n.max(1)).unwrap_or(u64::MAX);
        usize::try_from(self.next_u64() % n).unwrap_or(0)
    }

    /// A number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        // The top 53 bits: every value is exact in an f64.
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `true` with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A generator for a part of the run, independent of how much the
    /// others draw: the same seed and part always give the same stream.
    pub fn part(seed: u64, part: u64) -> Rng {
        let mut mixed = Rng(seed ^ part.wrapping_mul(0xd6e8_feb8_6659_fd93));
        Rng(mixed.next_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_one_stream() {
        let a: Vec<u64> = (0..5)
            .scan(Rng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..5)
            .scan(Rng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..5)
            .scan(Rng::new(8), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn draws_stay_in_range_and_spread() {
        let mut rng = Rng::new(1);
        let mut seen = [0usize; 4];
        for _ in 0..4000 {
            seen[rng.below(4)] += 1;
            let u = rng.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert!(
            seen.iter().all(|count| (800..1200).contains(count)),
            "{seen:?}"
        );
        assert_ne!(Rng::part(1, 1).next_u64(), Rng::part(1, 2).next_u64());
    }
}
