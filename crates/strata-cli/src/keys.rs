//! Benchmark keys: fixed-width, zero-padded decimal numbers, so byte order is number
//! order (db_bench's `%016d`-style keys).
//!
//! `KeyFormat { key_size: 16, prefix: b"" }` turns 42 into `0000000000000042`; YCSB uses
//! the prefix `user` (`user000000000042`). A number wider than the digits available keeps
//! its lowest digits (the key space wraps; [`KeyFormat::capacity`] says where).

/// How numbers become keys.
#[derive(Clone, Copy, Debug)]
pub struct KeyFormat {
    /// Total key length in bytes (prefix included).
    pub key_size: usize,
    /// Bytes before the digits.
    pub prefix: &'static [u8],
}

impl KeyFormat {
    /// Digits after the prefix.
    pub fn digits(&self) -> usize {
        self.key_size.saturating_sub(self.prefix.len())
    }

    /// Distinct keys this format can express (saturating at `u64::MAX`).
    pub fn capacity(&self) -> u64 {
        u32::try_from(self.digits())
            .ok()
            .and_then(|d| 10u64.checked_pow(d))
            .unwrap_or(u64::MAX)
    }

    /// Writes the key of `n` into `buf` (cleared first); `buf.len() == key_size` after.
    /// Inlined: called once per operation by every benchmark loop.
    #[inline]
    pub fn write(&self, n: u64, buf: &mut Vec<u8>) {
        buf.clear();
        buf.extend_from_slice(self.prefix);
        let start = buf.len();
        buf.resize(start + self.digits(), b'0');
        let mut v = n;
        for b in buf.iter_mut().skip(start).rev() {
            *b = b'0' + (v % 10) as u8;
            v /= 10;
        }
        buf.truncate(self.key_size);
    }

    /// The key of `n` as a new vector.
    #[cfg(test)]
    pub fn key(&self, n: u64) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.key_size);
        self.write(n, &mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_fixed_width_and_ordered() {
        let f = KeyFormat {
            key_size: 16,
            prefix: b"",
        };
        assert_eq!(f.key(42), b"0000000000000042");
        assert_eq!(f.key(0).len(), 16);
        assert!(f.key(9) < f.key(10));
        assert!(f.key(999_999) < f.key(1_000_000));
        assert_eq!(f.capacity(), 10u64.pow(16));
    }

    #[test]
    fn prefix_and_wrapping() {
        let f = KeyFormat {
            key_size: 8,
            prefix: b"user",
        };
        assert_eq!(f.key(7), b"user0007");
        assert_eq!(f.key(12_345), b"user2345");
        assert_eq!(f.capacity(), 10_000);
        let tiny = KeyFormat {
            key_size: 2,
            prefix: b"user",
        };
        assert_eq!(tiny.key(5).len(), 2);
    }
}
