//! Benchmark values: db_bench's `RandomGenerator`, so both engines see the same bytes.
//!
//! A 1 MiB buffer is filled once from a seeded RNG with 100-byte pieces, each made of
//! `round(100 * compression_ratio)` random printable bytes repeated to length (so a
//! compressor shrinks it to about `compression_ratio`). Values are successive slices of
//! the buffer, wrapping to the start when a slice would run past the end.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const BUFFER: usize = 1 << 20;
const PIECE: usize = 100;

/// Produces values of a fixed size from a seeded, compressible byte stream.
#[derive(Clone, Debug)]
pub struct ValueGenerator {
    data: Vec<u8>,
    pos: usize,
}

impl ValueGenerator {
    /// A generator whose stream depends only on `seed` and `compression_ratio`
    /// (clamped to `[0, 1]`). `value_size` must fit the buffer: larger values are
    /// served by growing the buffer to twice the value size.
    pub fn new(seed: u64, compression_ratio: f64, value_size: usize) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let ratio = if compression_ratio.is_finite() {
            compression_ratio.clamp(0.0, 1.0)
        } else {
            1.0
        };
        let len = BUFFER.max(value_size.saturating_mul(2));
        let mut data = Vec::with_capacity(len + PIECE);
        while data.len() < len {
            let raw_len = ((PIECE as f64 * ratio).round() as usize).max(1);
            let raw: Vec<u8> = (0..raw_len)
                .map(|_| rng.random_range(b' '..=b'~'))
                .collect();
            let mut piece = Vec::with_capacity(PIECE);
            while piece.len() < PIECE {
                let take = (PIECE - piece.len()).min(raw.len());
                piece.extend_from_slice(raw.get(..take).unwrap_or_default());
            }
            data.extend_from_slice(&piece);
        }
        data.truncate(len);
        ValueGenerator { data, pos: 0 }
    }

    /// The next `len` bytes of the stream.
    pub fn next(&mut self, len: usize) -> &[u8] {
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        let start = self.pos;
        self.pos += len;
        self.data.get(start..start + len).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_is_deterministic_and_compressible() {
        let mut a = ValueGenerator::new(7, 0.5, 100);
        let mut b = ValueGenerator::new(7, 0.5, 100);
        for _ in 0..20_000 {
            assert_eq!(a.next(100), b.next(100));
        }
        let mut c = ValueGenerator::new(8, 0.5, 100);
        assert_ne!(ValueGenerator::new(7, 0.5, 100).next(100), c.next(100));
        // Half of each 100-byte piece is a repeat of the first half.
        let mut g = ValueGenerator::new(1, 0.5, 100);
        let v = g.next(100).to_vec();
        assert_eq!(v[..50], v[50..]);
        assert!(v.iter().all(|b| (b' '..=b'~').contains(b)));
        let mut big = ValueGenerator::new(1, 0.5, 3 << 20);
        assert_eq!(big.next(3 << 20).len(), 3 << 20);
    }
}
