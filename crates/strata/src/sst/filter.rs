//! The table's bloom filter over user keys: cache-line-blocked, one per table.
//!
//! Role: [`FilterBuilder`] collects the hash of every distinct user key the table
//! builder adds; [`BloomFilter`] answers "may contain" for [`super::Table::get`]. The
//! filter is over *user* keys so a lookup at any snapshot can use it.
//!
//! # Format (filter block contents, format version 1)
//! ```text
//! +----------------------------------+----------------+----------------------+
//! | lines: num_lines × 64 bytes      | num_probes: u8 | num_lines: u32 LE    |
//! +----------------------------------+----------------+----------------------+
//! ```
//! Hash: `h = hash64(user_key)` ([`hash64`], frozen: changing it breaks every filter
//! on disk). Line: `((h >> 32) * num_lines) >> 32`. Probes: `a = h as u32`,
//! `b = (h >> 17) as u32 | 1`; probe `i` sets bit `(a + i*b) mod 512` of the line
//! (double hashing inside one 64-byte cache line, so a query touches one line).
//! Bit `j` of a line is bit `j % 8` of byte `j / 8`.
//!
//! # Invariants
//! 1. `num_probes` in 1..=30 and `num_lines >= 1`, and the block length is exactly
//!    `64 * num_lines + 5`; anything else fails to decode.
//! 2. No false negatives: every added key answers true.
//! 3. At 10 bits per key the false-positive rate is about 1% (pinned by a test).

/// Bytes per bloom line (one CPU cache line).
const LINE_BYTES: usize = 64;
/// Bits per bloom line.
const LINE_BITS: u32 = (LINE_BYTES * 8) as u32;

/// The frozen 64-bit hash of filter keys (a multiply-rotate mix with a murmur3
/// finaliser).
pub fn hash64(data: &[u8]) -> u64 {
    const M: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = 0x5354_5241_5441_0001 ^ (data.len() as u64).wrapping_mul(M);
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(M).rotate_left(31);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w.iter_mut().zip(rest).for_each(|(d, s)| *d = *s);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(M).rotate_left(31);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Probe count for a bits-per-key budget (about `ln 2 × bits`, capped for blocked
/// filters where more probes stop helping).
fn num_probes(bits_per_key: u32) -> u8 {
    // Clamped to 1..=30 (the decoder's accepted range), so the cast is exact.
    (bits_per_key.saturating_mul(69) / 100).clamp(1, 30) as u8
}

#[inline]
fn line_of(h: u64, num_lines: u32) -> usize {
    (((h >> 32) * u64::from(num_lines)) >> 32) as usize
}

#[inline]
fn probe_bits(h: u64, probes: u8) -> impl Iterator<Item = u32> {
    let a = h as u32;
    let b = ((h >> 17) as u32) | 1;
    (0..u32::from(probes)).map(move |i| a.wrapping_add(i.wrapping_mul(b)) % LINE_BITS)
}

/// Collects user-key hashes while a table is built.
#[derive(Debug)]
pub struct FilterBuilder {
    bits_per_key: u32,
    hashes: Vec<u64>,
}

impl FilterBuilder {
    /// A builder spending `bits_per_key` bits per distinct key (must be > 0).
    pub fn new(bits_per_key: u32) -> Self {
        FilterBuilder {
            bits_per_key: bits_per_key.max(1),
            hashes: Vec::new(),
        }
    }

    /// Adds a user key. The caller skips repeats of the previous key (same user key,
    /// older versions) so they do not inflate the filter.
    pub fn add(&mut self, user_key: &[u8]) {
        self.hashes.push(hash64(user_key));
    }

    /// Encodes the filter over every key added (see the module format).
    pub fn finish(&self) -> Vec<u8> {
        let total_bits = (self.hashes.len() as u64).saturating_mul(u64::from(self.bits_per_key));
        // Clamped so the cast is exact and `64 * num_lines + 5` stays below 4 GiB; a
        // table with more keys gets a denser filter (more false positives, never a
        // false negative), not a truncated one.
        let num_lines = total_bits
            .div_ceil(u64::from(LINE_BITS))
            .clamp(1, u64::from(u32::MAX >> 6)) as u32;
        let probes = num_probes(self.bits_per_key);
        let mut out = vec![0u8; num_lines as usize * LINE_BYTES];
        for &h in &self.hashes {
            let base = line_of(h, num_lines) * LINE_BYTES;
            for bit in probe_bits(h, probes) {
                if let Some(byte) = out.get_mut(base + (bit / 8) as usize) {
                    *byte |= 1 << (bit % 8);
                }
            }
        }
        out.push(probes);
        out.extend_from_slice(&num_lines.to_le_bytes());
        out
    }
}

/// A decoded filter. Owns its bits; held by its table for the table's life, or by the
/// block cache (`Options::cache_index_and_filter_blocks`).
#[derive(Debug)]
pub struct BloomFilter {
    data: Vec<u8>,
    num_lines: u32,
    probes: u8,
}

impl BloomFilter {
    /// Validates filter block contents (invariant 1).
    ///
    /// # Errors
    /// A static reason if the header is inconsistent. Never panics.
    pub fn decode(mut data: Vec<u8>) -> Result<BloomFilter, &'static str> {
        let bits_len = data.len().checked_sub(5).ok_or("filter block too short")?;
        let probes = *data.get(bits_len).ok_or("filter block too short")?;
        let num_lines =
            crate::coding::get_fixed32(&data, bits_len + 1).ok_or("filter block too short")?;
        if !(1..=30).contains(&probes) || num_lines == 0 {
            return Err("filter header out of range");
        }
        if (num_lines as usize).checked_mul(LINE_BYTES) != Some(bits_len) {
            return Err("filter length does not match its line count");
        }
        data.truncate(bits_len);
        Ok(BloomFilter {
            data,
            num_lines,
            probes,
        })
    }

    /// False iff `user_key` was certainly not added.
    #[inline]
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        let h = hash64(user_key);
        let base = line_of(h, self.num_lines) * LINE_BYTES;
        let Some(line) = self.data.get(base..base + LINE_BYTES) else {
            return true;
        };
        probe_bits(h, self.probes).all(|bit| {
            line.get((bit / 8) as usize)
                .is_some_and(|b| b & (1 << (bit % 8)) != 0)
        })
    }

    /// Bytes of memory this filter pins (for cache weighting).
    pub fn charge(&self) -> usize {
        self.data.len() + std::mem::size_of::<BloomFilter>()
    }

    /// Bytes of filter bits.
    #[cfg_attr(
        not(feature = "internals"),
        allow(dead_code, reason = "read only by the `block` fuzz check")
    )]
    pub fn size(&self) -> usize {
        self.data.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(n: u32, bits: u32) -> BloomFilter {
        let mut b = FilterBuilder::new(bits);
        for i in 0..n {
            b.add(format!("user-key-{i}").as_bytes());
        }
        BloomFilter::decode(b.finish()).expect("valid")
    }

    #[test]
    fn no_false_negatives_and_about_one_percent_false_positives() {
        for n in [1u32, 10, 1000, 100_000] {
            let f = build(n, 10);
            for i in 0..n {
                assert!(f.may_contain(format!("user-key-{i}").as_bytes()));
            }
            if n >= 1000 {
                let trials = 100_000u32;
                let fp = (0..trials)
                    .filter(|i| f.may_contain(format!("absent-{i}").as_bytes()))
                    .count();
                let rate = fp as f64 / f64::from(trials);
                eprintln!("bloom n={n} bits/key=10: false-positive rate {rate:.4}");
                assert!(rate < 0.02, "n {n}: false-positive rate {rate}");
            }
        }
    }

    #[test]
    fn decode_rejects_inconsistent_headers() {
        assert!(BloomFilter::decode(vec![]).is_err());
        assert!(BloomFilter::decode(vec![0; 5]).is_err());
        let mut ok = build(100, 10).data;
        ok.push(7);
        ok.extend_from_slice(&3u32.to_le_bytes());
        assert!(BloomFilter::decode(ok).is_err(), "line count mismatch");
        // One bad field each, the others consistent (a mutation check found that a
        // header wrong in only one field was accepted when the test had none).
        let header = |probes: u8, lines: u32, bits: usize| {
            let mut d = vec![0u8; bits];
            d.push(probes);
            d.extend_from_slice(&lines.to_le_bytes());
            d
        };
        assert!(BloomFilter::decode(header(6, 1, 64)).is_ok());
        assert!(BloomFilter::decode(header(0, 1, 64)).is_err(), "no probes");
        assert!(
            BloomFilter::decode(header(31, 1, 64)).is_err(),
            "too many probes"
        );
        assert!(BloomFilter::decode(header(7, 0, 0)).is_err(), "no lines");
    }

    #[test]
    fn hash_is_frozen() {
        // Changing hash64 silently breaks every filter on disk.
        assert_eq!(hash64(b""), hash64(b""));
        assert_ne!(hash64(b"a"), hash64(b"b"));
        let frozen = [hash64(b""), hash64(b"a"), hash64(b"strata-key-12345")];
        assert_eq!(frozen, FROZEN_HASHES);
        // Keys whose length is not a multiple of 8 (every tail length): the tail's
        // mixing is frozen too (a mutation of it passed the three keys above).
        let tails: Vec<u64> = TAIL_KEYS.iter().map(|k| hash64(k)).collect();
        assert_eq!(tails, FROZEN_TAIL_HASHES, "{tails:?}");
    }

    const TAIL_KEYS: [&[u8]; 9] = [
        b"x",
        b"ab",
        b"abc",
        b"abcd",
        b"abcde",
        b"abcdef",
        b"abcdefg",
        b"abcdefghi",
        b"abcdefghijklmno",
    ];

    const FROZEN_TAIL_HASHES: [u64; 9] = [
        4_556_381_741_856_718_098,
        11_877_496_969_163_534_216,
        10_480_730_107_525_363_770,
        11_512_388_388_144_810_366,
        16_391_632_140_519_946_813,
        16_312_290_350_647_392_504,
        1_936_680_832_084_802_967,
        5_135_438_182_554_676_673,
        10_917_481_592_396_847_809,
    ];

    const FROZEN_HASHES: [u64; 3] = [
        18_155_062_115_040_690_695,
        9_146_321_098_439_564_570,
        3_581_869_350_793_906_698,
    ];
}
