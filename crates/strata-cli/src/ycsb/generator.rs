//! YCSB's request distributions: uniform, zipfian (scrambled), hotspot and latest.
//!
//! Ported from YCSB's `ZipfianGenerator`, `ScrambledZipfianGenerator`,
//! `HotspotIntegerGenerator` and `SkewedLatestGenerator` (Gray et al., "Quickly
//! Generating Billion-Record Synthetic Databases", SIGMOD 1994).
//!
//! - Zipfian draws item `i` of `n` with probability proportional to `1 / (i+1)^theta`;
//!   item 0 is the most popular. `zeta(n)` is computed once, then extended
//!   incrementally when `n` grows (for "latest").
//! - Scrambled zipfian hashes the zipfian rank with FNV-1a 64 so popular items are
//!   scattered over the key space instead of clustered at its start. YCSB draws ranks
//!   over 10^10 items with a precomputed zeta; we draw over exactly `n` (same shape, no
//!   truncation effects for small `n`). The hash maps into a fixed space (YCSB's: the
//!   loaded items and twice the inserts a run expects), and a draw of an item not yet
//!   inserted is drawn again, so a popular rank keeps its item while inserts go on.
//! - Hotspot sends `hot_op_fraction` of requests uniformly to the first
//!   `hot_set_fraction` of items and the rest uniformly to the others.
//! - Uniform and hotspot draw over the items loaded before the run, as YCSB's
//!   `CoreWorkload` does (its generators' bounds are fixed at the insert count): a
//!   run's inserts neither grow the hot set nor receive reads.
//! - Latest is zipfian over recency: the newest inserted item is the most popular.
//!
//! Generators are per-thread (`&mut self`, own RNG); clone one to share its zeta.

use rand::Rng;

/// YCSB's default zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// FNV-1a 64 of the 8 little-endian bytes of `v` (YCSB's `Utils.fnvhash64`).
pub fn fnv1a64(v: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in v.to_le_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// `sum_{i=from}^{to-1} 1/(i+1)^theta` added to `initial`.
fn zeta(from: u64, to: u64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    for i in from..to {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// Zipfian over `[0, n)`, item 0 most popular.
#[derive(Clone, Debug)]
pub struct Zipfian {
    items: u64,
    theta: f64,
    alpha: f64,
    zeta2: f64,
    zetan: f64,
    eta: f64,
}

impl Zipfian {
    /// A zipfian over `items` (>= 1) items with constant `theta` in (0, 1).
    pub fn new(items: u64, theta: f64) -> Zipfian {
        let items = items.max(1);
        let zeta2 = zeta(0, 2, theta, 0.0);
        let zetan = zeta(0, items, theta, 0.0);
        let mut z = Zipfian {
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zeta2,
            zetan,
            eta: 0.0,
        };
        z.eta = z.eta_for(items);
        z
    }

    fn eta_for(&self, n: u64) -> f64 {
        (1.0 - (2.0 / n as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2 / self.zetan)
    }

    /// Grows (never shrinks) the item count to `n`, extending zeta incrementally.
    pub fn grow_to(&mut self, n: u64) {
        if n > self.items {
            self.zetan = zeta(self.items, n, self.theta, self.zetan);
            self.items = n;
            self.eta = self.eta_for(n);
        }
    }

    /// The next rank in `[0, items)`.
    pub fn next(&mut self, rng: &mut impl Rng) -> u64 {
        let u: f64 = rng.random();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1.min(self.items - 1);
        }
        let r = (self.items as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        r.min(self.items - 1)
    }
}

/// A request-key chooser: over the items inserted so far (zipfian, latest) or over
/// those loaded before the run (uniform, hotspot).
#[derive(Clone, Debug)]
pub enum KeyChooser {
    /// Uniform over the loaded items (`[0, min(items, n))`; `items` 0: `[0, n)`).
    Uniform {
        /// The items loaded before the run.
        items: u64,
    },
    /// Zipfian ranks scattered by FNV hash over `[0, space)`, drawn again until the
    /// item exists.
    ScrambledZipfian {
        zipfian: Zipfian,
        /// The items a rank hashes into, fixed (at least the loaded items).
        space: u64,
    },
    /// `op_fraction` of requests to the `set_fraction` of items starting at item
    /// `start`.
    /// Over the loaded items, as [`KeyChooser::Uniform`].
    Hotspot {
        /// The items loaded before the run.
        items: u64,
        /// Fraction of items that are hot.
        set_fraction: f64,
        /// Fraction of requests that go to hot items.
        op_fraction: f64,
        /// The first hot item (0: the first ones). Fixed, not a fraction of the
        /// items now, so that inserts do not slide the hot set: two hot sets whose
        /// starts are a set's width apart share no item (the HotRAP paper's shifted
        /// hotspot).
        start: u64,
    },
    /// Zipfian over recency: `n - 1 - zipf`.
    Latest(Zipfian),
}

impl KeyChooser {
    /// A scrambled zipfian chooser for `items` items that never grow.
    pub fn scrambled_zipfian(items: u64, theta: f64) -> KeyChooser {
        KeyChooser::scrambled_zipfian_in(items, items, theta)
    }

    /// A scrambled zipfian chooser with ranks over `items` loaded items, hashed into
    /// `space` items (YCSB: the loaded items and twice the inserts a run expects).
    pub fn scrambled_zipfian_in(items: u64, space: u64, theta: f64) -> KeyChooser {
        KeyChooser::ScrambledZipfian {
            zipfian: Zipfian::new(items, theta),
            space: space.max(items).max(1),
        }
    }

    /// A latest chooser starting with `items` items.
    pub fn latest(items: u64, theta: f64) -> KeyChooser {
        KeyChooser::Latest(Zipfian::new(items, theta))
    }

    /// The next item in `[0, n)` where `n` (>= 1) items exist now.
    pub fn next(&mut self, rng: &mut impl Rng, n: u64) -> u64 {
        let n = n.max(1);
        match self {
            KeyChooser::Uniform { items } => rng.random_range(0..loaded(*items, n)),
            KeyChooser::ScrambledZipfian { zipfian, space } => {
                // Ranks are drawn over the load-time item count (YCSB keeps it fixed),
                // hashed into the fixed space; an item not inserted yet is drawn
                // again (YCSB's loop), a bounded number of times.
                for _ in 0..64 {
                    let k = fnv1a64(zipfian.next(rng)) % *space;
                    if k < n {
                        return k;
                    }
                }
                fnv1a64(zipfian.next(rng)) % n
            }
            KeyChooser::Hotspot {
                items,
                set_fraction,
                op_fraction,
                start,
            } => {
                let n = loaded(*items, n);
                let hot = ((n as f64 * *set_fraction) as u64).clamp(1, n);
                // A set that would pass the last item (rounding, or fewer items than
                // `start` was chosen for) ends at the last item.
                let start = (*start).min(n - hot);
                if rng.random::<f64>() < *op_fraction || hot == n {
                    start + rng.random_range(0..hot)
                } else {
                    let cold = rng.random_range(0..n - hot);
                    if cold < start {
                        cold
                    } else {
                        cold + hot
                    }
                }
            }
            KeyChooser::Latest(z) => {
                z.grow_to(n);
                n - 1 - z.next(rng).min(n - 1)
            }
        }
    }
}

/// The items a chooser over `items` loaded items draws from when `n` (>= 1) exist.
fn loaded(items: u64, n: u64) -> u64 {
    if items == 0 {
        n
    } else {
        items.min(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn counts(chooser: &mut KeyChooser, n: u64, draws: usize) -> Vec<u64> {
        let mut rng = SmallRng::seed_from_u64(42);
        let mut c = vec![0u64; n as usize];
        for _ in 0..draws {
            let k = chooser.next(&mut rng, n);
            assert!(k < n);
            c[k as usize] += 1;
        }
        c
    }

    /// Exact zipfian probability of rank `r` among `n`.
    fn p(r: u64, n: u64, theta: f64) -> f64 {
        (1.0 / ((r + 1) as f64).powf(theta)) / zeta(0, n, theta, 0.0)
    }

    #[test]
    fn zipfian_top_ranks_match_theory() {
        let (n, draws) = (1000u64, 400_000usize);
        let mut z = Zipfian::new(n, ZIPFIAN_CONSTANT);
        let mut rng = SmallRng::seed_from_u64(7);
        let mut c = vec![0u64; n as usize];
        for _ in 0..draws {
            c[z.next(&mut rng) as usize] += 1;
        }
        for r in 0..2u64 {
            let got = c[r as usize] as f64 / draws as f64;
            let want = p(r, n, ZIPFIAN_CONSTANT);
            assert!((got - want).abs() < 0.01, "rank {r}: {got} vs {want}");
        }
        // Rank 0 is the most popular, ~13% for n=1000, theta=0.99.
        assert!(c[0] > c[1] && c[1] > c[10] && c[10] > c[500]);
        // The head is heavy: the top 1% of ranks take a large share.
        let top: u64 = c[..10].iter().sum();
        assert!(top as f64 / draws as f64 > 0.35, "{top}");
    }

    #[test]
    fn scrambled_zipfian_scatters_hot_keys() {
        let n = 1000;
        let mut ch = KeyChooser::scrambled_zipfian(n, ZIPFIAN_CONSTANT);
        let c = counts(&mut ch, n, 200_000);
        let (hot, max) = c
            .iter()
            .enumerate()
            .max_by_key(|(_, v)| **v)
            .map(|(i, v)| (i as u64, *v))
            .unwrap_or_default();
        // The hottest key is rank 0's hash, not key 0.
        assert_eq!(hot, fnv1a64(0) % n);
        assert!(max as f64 / 200_000.0 > 0.1);
        // Hot keys are spread over the key space: the first tenth of the keys holds
        // nowhere near the zipfian head's share.
        let first_tenth: u64 = c[..100].iter().sum();
        assert!((first_tenth as f64 / 200_000.0) < 0.3, "{first_tenth}");
    }

    #[test]
    fn scrambled_zipfian_keeps_its_hot_items_while_inserts_go_on() {
        // 1,000 loaded items hashed into 3,000: rank 0 hashes to item 1405, not yet
        // inserted, so it is drawn again and rank 1's item (996) is the hottest; once
        // item 1405 exists it is the hottest, and stays so as inserts go on (it used
        // to be `hash % n`, another item after every insert).
        let n = 1000;
        let (rank0, rank1) = (fnv1a64(0) % (3 * n), fnv1a64(1) % (3 * n));
        assert_eq!((rank0, rank1), (1405, 996));
        let hottest = |items: u64| {
            let mut ch = KeyChooser::scrambled_zipfian_in(n, 3 * n, ZIPFIAN_CONSTANT);
            let c = counts(&mut ch, items, 100_000);
            (0..items).max_by_key(|&i| c[i as usize]).unwrap_or(0)
        };
        assert_eq!(hottest(n), rank1);
        assert_eq!(hottest(n + 700), rank0);
        assert_eq!(hottest(3 * n), rank0);
    }

    #[test]
    fn hotspot_sends_op_fraction_to_hot_set() {
        let n = 10_000;
        let mut ch = KeyChooser::Hotspot {
            items: n,
            set_fraction: 0.05,
            op_fraction: 0.95,
            start: 0,
        };
        let c = counts(&mut ch, n, 100_000);
        let hot: u64 = c[..500].iter().sum();
        let frac = hot as f64 / 100_000.0;
        assert!((frac - 0.95).abs() < 0.01, "{frac}");
    }

    #[test]
    fn hotspot_offset_moves_the_hot_set_and_keeps_the_cold_uniform() {
        let n = 10_000;
        let mut ch = KeyChooser::Hotspot {
            items: n,
            set_fraction: 0.05,
            op_fraction: 0.95,
            start: 5000,
        };
        let c = counts(&mut ch, n, 100_000);
        let hot: u64 = c[5000..5500].iter().sum();
        let frac = hot as f64 / 100_000.0;
        assert!((frac - 0.95).abs() < 0.01, "{frac}");
        // The cold draws cover both sides of the hot set, evenly per item.
        let (below, above): (u64, u64) = (c[..5000].iter().sum(), c[5500..].iter().sum());
        let (per_below, per_above) = (below as f64 / 5000.0, above as f64 / 4500.0);
        assert!((per_below / per_above - 1.0).abs() < 0.1, "{below} {above}");
        // No cold draw lands in the hot set.
        let mut cold_only = KeyChooser::Hotspot {
            items: n,
            set_fraction: 0.05,
            op_fraction: 0.0,
            start: 5000,
        };
        let c = counts(&mut cold_only, n, 20_000);
        assert_eq!(c[5000..5500].iter().sum::<u64>(), 0);
        // A start too late for the items keeps the whole set inside them.
        let mut late = KeyChooser::Hotspot {
            items: n,
            set_fraction: 0.05,
            op_fraction: 1.0,
            start: 9900,
        };
        let c = counts(&mut late, n, 10_000);
        assert_eq!(c[9500..].iter().sum::<u64>(), 10_000);
        assert!(
            c[9500..9900].iter().sum::<u64>() > 0,
            "{:?}",
            &c[9500..9510]
        );
    }

    #[test]
    fn uniform_and_hotspot_draw_over_the_loaded_items_only() {
        // Inserts neither grow nor slide the hot set, nor receive reads (YCSB's
        // bounds, fixed at the load's count): with twice the items, the same set.
        let n = 10_000;
        let mut grown = KeyChooser::Hotspot {
            items: n,
            set_fraction: 0.05,
            op_fraction: 0.95,
            start: 5000,
        };
        let c = counts(&mut grown, 2 * n, 20_000);
        assert_eq!(c[n as usize..].iter().sum::<u64>(), 0);
        let hot: u64 = c[5000..5500].iter().sum();
        assert!((hot as f64 / 20_000.0 - 0.95).abs() < 0.01, "{hot}");
        let mut uniform = KeyChooser::Uniform { items: n };
        let c = counts(&mut uniform, 2 * n, 20_000);
        assert_eq!(c[n as usize..].iter().sum::<u64>(), 0);
        // Fewer items than loaded (a run before its load finished): the items now
        // (`counts` asserts each draw is below them).
        counts(&mut uniform, 10, 1_000);
        // No load count: the items now.
        let mut now = KeyChooser::Uniform { items: 0 };
        let c = counts(&mut now, 2 * n, 20_000);
        assert!(c[n as usize..].iter().sum::<u64>() > 9_000);
    }

    #[test]
    fn latest_prefers_newest_and_follows_growth() {
        let mut ch = KeyChooser::latest(1000, ZIPFIAN_CONSTANT);
        let c = counts(&mut ch, 1000, 100_000);
        assert!(c[999] > c[998] && c[998] > c[900] && c[900] >= c[0]);
        let mut rng = SmallRng::seed_from_u64(1);
        let mut newest = 0;
        for _ in 0..10_000 {
            if ch.next(&mut rng, 2000) == 1999 {
                newest += 1;
            }
        }
        // After growth the newest item is still the most popular (~12%).
        assert!(newest > 800, "{newest}");
    }

    #[test]
    fn incremental_zeta_equals_direct() {
        let mut a = Zipfian::new(100, 0.99);
        a.grow_to(5000);
        let b = Zipfian::new(5000, 0.99);
        assert!((a.zetan - b.zetan).abs() < 1e-9);
        assert!((a.eta - b.eta).abs() < 1e-9);
    }

    #[test]
    fn uniform_is_flat() {
        let mut ch = KeyChooser::Uniform { items: 10 };
        let c = counts(&mut ch, 10, 100_000);
        assert!(c.iter().all(|v| (*v as i64 - 10_000).abs() < 500), "{c:?}");
    }
}
