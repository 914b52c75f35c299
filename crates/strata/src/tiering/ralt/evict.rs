//! Eviction thresholds (the paper's §3.2, Figure 4) and the auto-tuned limits (§3.7,
//! Algorithm 1, lines 17–21).
//!
//! Records are sorted by key, not by score, so the score below which a fraction of
//! the bytes lies is found by sampling: `N` positions drawn uniformly in the *size
//! space* `[0, A)` (each record occupying its size), the record at each position noted
//! with its rank, and the `k`-th largest of those ranks, `k = filled · A′ / A`, taken
//! as the threshold that keeps about `A′` bytes. This is done twice in one scan: in
//! the space of hot sizes (the hot-set threshold) and of physical sizes (the eviction
//! threshold). A [`Sampler`] is fed the merged records in key order; the positions are
//! drawn in advance from an estimate of `A` (the tables' own totals, which count a key
//! held in two levels twice), and `k` is taken relative to the positions that were
//! reached, as the reference code does.

/// Positions sampled in each size space (the reference code's 10^4).
pub const SAMPLES: usize = 10_000;

/// Draws sorted positions in `[0, total)` and notes the rank of the record covering
/// each.
#[derive(Debug)]
pub struct Sampler {
    positions: Vec<u64>,
    next: usize,
    seen: u64,
    ranks: Vec<f64>,
}

impl Sampler {
    /// `n` positions uniform in `[0, total)`, from a generator seeded with `seed`.
    pub fn new(total: u64, n: usize, seed: u64) -> Sampler {
        let mut state = seed | 1;
        let mut positions: Vec<u64> = (0..n)
            .map(|_| {
                // xorshift64*: positions need not be cryptographic, only spread.
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
                ((u128::from(r) * u128::from(total.max(1))) >> 64) as u64
            })
            .collect();
        positions.sort_unstable();
        Sampler {
            positions,
            next: 0,
            seen: 0,
            ranks: Vec::with_capacity(n),
        }
    }

    /// Feeds the next record (in scan order), of `size` bytes and rank `rank`.
    pub fn feed(&mut self, size: u64, rank: f64) {
        let end = self.seen.saturating_add(size);
        while self.positions.get(self.next).is_some_and(|&p| p < end) {
            self.ranks.push(rank);
            self.next += 1;
        }
        self.seen = end;
    }

    /// The rank at or above which about `keep` of the bytes fed lie: the `k`-th
    /// largest sampled rank, `k = filled · keep / fed`; −∞ if everything is kept or
    /// nothing was sampled; +∞ if nothing is.
    pub fn threshold(mut self, keep: u64) -> f64 {
        if keep >= self.seen || self.ranks.is_empty() {
            return f64::NEG_INFINITY;
        }
        let k =
            (self.ranks.len() as u128 * u128::from(keep) / u128::from(self.seen.max(1))) as usize;
        if k == 0 {
            return f64::INFINITY;
        }
        self.ranks.sort_unstable_by(|a, b| b.total_cmp(a));
        self.ranks.get(k - 1).copied().unwrap_or(f64::NEG_INFINITY)
    }
}

/// Algorithm 1's parameters, as fractions of the fast tier's budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tuning {
    /// L_hs: the least hot-set limit.
    pub min_hot: u64,
    /// R_hs: the greatest hot-set limit.
    pub max_hot: u64,
    /// D_hs: the room left for unstable records.
    pub room: u64,
}

impl Tuning {
    /// The paper's values for a fast budget of `fd_size` bytes: L_hs = 0.05, R_hs =
    /// 0.7 and D_hs = 0.1 · R_hs of it.
    pub fn for_fd_size(fd_size: u64) -> Tuning {
        let of = |f: f64| (fd_size as f64 * f) as u64;
        Tuning {
            min_hot: of(0.05),
            max_hot: of(0.7),
            room: of(0.07),
        }
    }

    /// The limits after an eviction whose scan found `stable_hot` hot bytes and
    /// `stable_phys` physical bytes of stable records, with `ratio` physical bytes per
    /// hot byte over all records (Algorithm 1, lines 20–21).
    pub fn limits(&self, stable_hot: u64, stable_phys: u64, ratio: f64) -> (u64, u64) {
        let hot = stable_hot
            .saturating_add(self.room)
            .min(self.max_hot)
            .max(self.min_hot);
        let phys = stable_phys.saturating_add((ratio * self.room as f64) as u64);
        (hot, phys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thousand records of sizes 1..=1000 with rank = size: keeping half the bytes
    /// keeps the largest records, the threshold near the size whose suffix sum is half.
    #[test]
    fn thresholds_keep_about_the_asked_bytes() {
        let total: u64 = (1..=1000u64).sum();
        let mut s = Sampler::new(total, SAMPLES, 42);
        for size in 1..=1000u64 {
            s.feed(size, size as f64);
        }
        let t = s.threshold(total / 2);
        let kept: u64 = (1..=1000u64).filter(|&x| x as f64 >= t).sum();
        let error = (kept as f64 - (total / 2) as f64).abs() / total as f64;
        assert!(error < 0.03, "threshold {t} keeps {kept} of {total}");
    }

    #[test]
    fn edges() {
        let mut s = Sampler::new(100, 10, 1);
        s.feed(100, 5.0);
        assert_eq!(s.threshold(100), f64::NEG_INFINITY, "everything kept");
        let mut s = Sampler::new(100, 10, 1);
        s.feed(100, 5.0);
        assert_eq!(s.threshold(0), f64::INFINITY, "nothing kept");
        assert_eq!(Sampler::new(100, 10, 1).threshold(5), f64::NEG_INFINITY);
    }

    #[test]
    fn limits_follow_algorithm_1() {
        let t = Tuning::for_fd_size(1000);
        assert_eq!(
            t,
            Tuning {
                min_hot: 50,
                max_hot: 700,
                room: 70
            }
        );
        assert_eq!(t.limits(0, 0, 0.2), (70, 14));
        assert_eq!(t.limits(300, 60, 0.2), (370, 74));
        assert_eq!(t.limits(690, 100, 0.2).0, 700, "capped at R_hs");
        let tiny = Tuning { room: 0, ..t };
        assert_eq!(tiny.limits(0, 0, 0.2).0, 50, "at least L_hs");
    }
}
