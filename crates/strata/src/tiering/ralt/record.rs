//! One access record of RALT: a key's hotness, not its value.
//!
//! A record holds what the paper's Figure 3 and Algorithm 1 need: the size of the
//! key's record in the tree (its *hot size*, key plus value length), the time slice
//! (`tick`) and exponentially smoothed `score` of its accesses, and Algorithm 1's
//! counter `c` and tag `t`. Records of one key meet when RALT's tables are merged and
//! combine with [`Record::merge`].
//!
//! # Scores
//! The paper's score of a key at slice `T` is `Σ a_i α^(T − i)` over slices `i`, with
//! `a_i = 1` if the key was accessed in slice `i`. A record stores the score at its own
//! last slice (`tick`), so its score at any later slice is `α^(T − tick) · score`: no
//! record is rewritten as time passes. Two records compare by their score at a common
//! slice, which is the order of [`Record::rank`], `ln(score) − tick · ln(α)`: a
//! number that does not depend on the current slice, so thresholds stay valid as ticks
//! pass. A record that is *stable* (Algorithm 1: `c > 0` and `t = 1`) ranks above every
//! unstable one ([`STABLE_BONUS`]), which is how eviction takes unstable records first
//! (Algorithm 1, lines 15–16).
//!
//! # Counters
//! Algorithm 1 decrements every key's counter each `R` accessed bytes. A record stores
//! the period (`R`-multiple of accessed bytes) at which its counter was last set, and
//! its counter at period `P` is `max(c − (P − period), 0)`: decrements are applied
//! lazily, exactly, whenever the record is read.
//!
//! # Encoding (the value of a RALT table entry; the entry's key is the user key)
//! ```text
//! hot_size: varint32 | tick: varint32 | score: f64 LE | c: f32 LE
//! | period: varint32 | tag: u8 (0 or 1)
//! ```

use crate::coding::{get_varint32, put_varint32};

/// Added to the rank of stable records, so that every stable record outranks every
/// unstable one (ranks of real records stay far below it: `−tick · ln α` is about
/// 0.001 per slice at α = 0.999, and a slice is a tenth of the fast tier's bytes
/// read). Small enough that [`TIE_BREAK`] survives it: an f64 near 10^6 resolves
/// 1.2·10^-10, so stable records keep about 10^5 tie-breaking steps.
pub const STABLE_BONUS: f64 = 1e6;

/// The span of the tie-breaking term of [`Record::rank`]: a hundredth of the rank
/// step of one slice (`−ln α` = 0.001 at α = 0.999).
pub const TIE_BREAK: f64 = 1e-5;

/// Algorithm 1's parameters, fixed per RALT.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Counting {
    /// The smoothing factor α (0 < α < 1).
    pub alpha: f64,
    /// Δc: what an access adds to a key's counter.
    pub delta_c: f32,
    /// c_max: the counter's cap.
    pub c_max: f32,
}

/// A user key and its record.
pub type Keyed = (Vec<u8>, Record);

/// One key's access record. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Record {
    /// Bytes of the key's record in the tree (key + value length).
    pub hot_size: u32,
    /// The time slice of the last access.
    pub tick: u32,
    /// The smoothed score at `tick` (>= 1 for any accessed key).
    pub score: f64,
    /// Algorithm 1's counter as of `period`.
    pub c: f32,
    /// The counter period at which `c` was set.
    pub period: u32,
    /// Algorithm 1's tag: 1 once the key was accessed again while tracked.
    pub tag: u8,
}

impl Record {
    /// The record of one access at slice `tick` and counter period `period`.
    pub fn access(hot_size: u32, tick: u32, period: u32, counting: &Counting) -> Record {
        Record {
            hot_size,
            tick,
            score: 1.0,
            c: counting.delta_c,
            period,
            tag: 0,
        }
    }

    /// The counter at period `period` (lazy decrements, see the module docs).
    pub fn counter_at(&self, period: u32) -> f32 {
        let elapsed = period.saturating_sub(self.period) as f32;
        (self.c - elapsed).max(0.0)
    }

    /// True iff the record is stable at period `period` (Algorithm 1: `c > 0` and
    /// `t = 1`).
    pub fn is_stable(&self, period: u32) -> bool {
        self.tag == 1 && self.counter_at(period) > 0.0
    }

    /// The rank of `key`'s record: larger is hotter, comparable across records
    /// whatever their ticks (module docs). Keys whose scores tie (every key read once
    /// in one slice) are ordered by a hash of the key, within [`TIE_BREAK`], so that a
    /// threshold among them splits them by bytes instead of keeping all or none.
    pub fn rank(&self, key: &[u8], period: u32, counting: &Counting) -> f64 {
        let tie = (crate::sst::filter::hash64(key) >> 11) as f64 / (1u64 << 53) as f64;
        let base = self.score.max(f64::MIN_POSITIVE).ln()
            - f64::from(self.tick) * counting.alpha.ln()
            + TIE_BREAK * tie;
        if self.is_stable(period) {
            base + STABLE_BONUS
        } else {
            base
        }
    }

    /// The record combining `older` and `newer`, two records of one key whose
    /// accesses do not overlap but for a shared last slice: the paper's `score* =
    /// α^(tick_j − tick_i) · score_i + score_j` at `tick_j`, where a slice both counted
    /// (equal ticks) counts once, as the score's definition has it; the hot size of the
    /// newer; Algorithm 1's counter `min(c_old + c_new, c_max)` and tag 1 (a hit on a
    /// tracked key), both at the later period.
    pub fn merge(older: &Record, newer: &Record, counting: &Counting) -> Record {
        let (first, last) = if older.tick <= newer.tick {
            (older, newer)
        } else {
            (newer, older)
        };
        let decay = counting
            .alpha
            .powi(i32::try_from(last.tick - first.tick).unwrap_or(i32::MAX));
        let shared = if first.tick == last.tick { 1.0 } else { 0.0 };
        let score = (decay * first.score + last.score - shared).max(first.score.max(last.score));
        let period = older.period.max(newer.period);
        let c = (older.counter_at(period) + newer.counter_at(period)).min(counting.c_max);
        Record {
            hot_size: newer.hot_size,
            tick: last.tick,
            score,
            c,
            period,
            tag: 1,
        }
    }

    /// Appends the encoding (module docs) to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        put_varint32(out, self.hot_size);
        put_varint32(out, self.tick);
        out.extend_from_slice(&self.score.to_le_bytes());
        out.extend_from_slice(&self.c.to_le_bytes());
        put_varint32(out, self.period);
        out.push(self.tag);
    }

    /// Decodes an encoding (module docs); `None` if it is malformed or has bytes
    /// left over.
    pub fn decode(mut src: &[u8]) -> Option<Record> {
        let varint = |src: &mut &[u8]| {
            let (v, n) = get_varint32(src)?;
            *src = src.get(n..)?;
            Some(v)
        };
        let hot_size = varint(&mut src)?;
        let tick = varint(&mut src)?;
        let score = f64::from_le_bytes(src.get(..8)?.try_into().ok()?);
        src = src.get(8..)?;
        let c = f32::from_le_bytes(src.get(..4)?.try_into().ok()?);
        src = src.get(4..)?;
        let period = varint(&mut src)?;
        let (&tag, rest) = src.split_first()?;
        let valid = rest.is_empty()
            && tag <= 1
            && score.is_finite()
            && score > 0.0
            && c.is_finite()
            && c >= 0.0;
        valid.then_some(Record {
            hot_size,
            tick,
            score,
            c,
            period,
            tag,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: Counting = Counting {
        alpha: 0.999,
        delta_c: 2.6,
        c_max: 5.0,
    };

    #[test]
    fn scores_decay_and_a_slice_counts_once() {
        let a = Record::access(100, 10, 0, &C);
        let b = Record::access(100, 10, 0, &C);
        // Two accesses in one slice: still one slice's worth.
        assert_eq!(Record::merge(&a, &b, &C).score, 1.0);
        // Slices 10 and 20: 0.999^10 + 1.
        let c = Record::access(120, 20, 0, &C);
        let m = Record::merge(&a, &c, &C);
        assert!((m.score - (0.999f64.powi(10) + 1.0)).abs() < 1e-12);
        assert_eq!((m.tick, m.hot_size, m.tag), (20, 120, 1));
        // Argument order does not matter for the score.
        assert_eq!(Record::merge(&c, &a, &C).score, m.score);
        // A key accessed at slices 10 and 20 outranks one accessed at 20 only, which
        // outranks one accessed at 10 only.
        assert!(m.rank(b"k", 0, &C) > c.rank(b"k", 0, &C));
        assert!(c.rank(b"k", 0, &C) > a.rank(b"k", 0, &C));
    }

    #[test]
    fn counters_cap_and_decay_lazily() {
        let a = Record::access(10, 0, 3, &C);
        assert_eq!(a.counter_at(3), 2.6);
        assert!(!a.is_stable(3), "a first access is not stable");
        let b = Record::access(10, 1, 3, &C);
        let m = Record::merge(&a, &b, &C);
        assert_eq!(m.c, 5.0, "2.6 + 2.6 capped at 5");
        assert!(m.is_stable(3) && m.is_stable(7));
        assert!(!m.is_stable(8), "five periods later the counter is 0");
        assert!(m.rank(b"k", 3, &C) > STABLE_BONUS / 2.0);
        assert!(m.rank(b"k", 8, &C) < STABLE_BONUS / 2.0);
        // Merging at a later period decrements the old counter first.
        let late = Record::access(10, 2, 6, &C);
        assert!((Record::merge(&m, &late, &C).c - (2.0 + 2.6)).abs() < 1e-6);
    }

    #[test]
    fn encoding_round_trips_and_refuses_garbage() {
        let r = Record {
            hot_size: 1024,
            tick: 77,
            score: 3.25,
            c: 4.5,
            period: 9,
            tag: 1,
        };
        let mut buf = Vec::new();
        r.encode_into(&mut buf);
        assert_eq!(Record::decode(&buf), Some(r));
        for cut in 0..buf.len() {
            assert_eq!(Record::decode(&buf[..cut]), None, "cut at {cut}");
        }
        let mut longer = buf.clone();
        longer.push(0);
        assert_eq!(Record::decode(&longer), None);
        let mut bad_tag = buf.clone();
        *bad_tag.last_mut().unwrap() = 2;
        assert_eq!(Record::decode(&bad_tag), None);
    }
}
