//! Encoding primitives shared by every on-disk format: little-endian fixed-width integers
//! and LEB128-style varints (the same varint layout as LevelDB and RocksDB).
//!
//! Decoders never panic: they return `None` on truncated input and the caller turns that
//! into [`crate::Error::Corruption`] with its own file and offset.

/// Appends `v` as 4 little-endian bytes.
pub fn put_fixed32(dst: &mut Vec<u8>, v: u32) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` as 8 little-endian bytes.
pub fn put_fixed64(dst: &mut Vec<u8>, v: u64) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Reads 4 little-endian bytes at `pos`, or `None` if `src` is too short.
pub fn get_fixed32(src: &[u8], pos: usize) -> Option<u32> {
    let b = src.get(pos..pos.checked_add(4)?)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

/// Reads 8 little-endian bytes at `pos`, or `None` if `src` is too short.
pub fn get_fixed64(src: &[u8], pos: usize) -> Option<u64> {
    let b = src.get(pos..pos.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

/// Most bytes a varint of a u32 takes.
pub const MAX_VARINT32_LEN: usize = 5;

/// Most bytes a varint of a u64 takes.
pub const MAX_VARINT64_LEN: usize = 10;

/// Bytes [`put_varint64`] writes for `v`.
pub const fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Appends `v` as a varint (7 bits per byte, low groups first, high bit = more).
pub fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        // Keeps the low 7 bits on purpose; the high bit marks "more bytes follow".
        dst.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
    }
    // `v < 0x80` here: the cast is exact.
    dst.push(v as u8);
}

/// Appends `v` as a varint.
pub fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, u64::from(v));
}

/// Decodes a varint from the front of `src`: `(value, bytes consumed)`, or `None` if
/// truncated or longer than 10 bytes.
pub fn get_varint64(src: &[u8]) -> Option<(u64, usize)> {
    let mut result: u64 = 0;
    for (i, &byte) in src.iter().enumerate().take(MAX_VARINT64_LEN) {
        // `i < 10`: the cast is exact.
        let shift = 7 * i as u32;
        result |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some((result, i + 1));
        }
    }
    None
}

/// Decodes a varint that must fit in 32 bits.
pub fn get_varint32(src: &[u8]) -> Option<(u32, usize)> {
    let (v, n) = get_varint64(src)?;
    Some((u32::try_from(v).ok()?, n))
}

/// Appends a varint length followed by the bytes. The length is a varint64, and
/// `usize` is at most 64 bits wide, so no length is truncated.
pub fn put_length_prefixed(dst: &mut Vec<u8>, bytes: &[u8]) {
    put_varint64(dst, bytes.len() as u64);
    dst.extend_from_slice(bytes);
}

/// Decodes a length-prefixed slice from the front of `src`: `(slice, bytes consumed)`.
pub fn get_length_prefixed(src: &[u8]) -> Option<(&[u8], usize)> {
    let (len, n) = get_varint64(src)?;
    let len = usize::try_from(len).ok()?;
    let end = n.checked_add(len)?;
    Some((src.get(n..end)?, end))
}

/// A cursor over a byte slice for decoders: each getter advances, `None` on truncation.
#[derive(Debug)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// Starts decoding at the front of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, pos: 0 }
    }
    /// Bytes consumed so far: the offset of the next field (for error messages).
    pub fn position(&self) -> usize {
        self.pos
    }
    /// True iff everything was consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }
    /// Next varint.
    pub fn varint64(&mut self) -> Option<u64> {
        let (v, n) = get_varint64(self.buf.get(self.pos..)?)?;
        self.pos += n;
        Some(v)
    }
    /// Next varint that must fit in 32 bits.
    pub fn varint32(&mut self) -> Option<u32> {
        u32::try_from(self.varint64()?).ok()
    }
    /// Next length-prefixed slice.
    pub fn length_prefixed(&mut self) -> Option<&'a [u8]> {
        let (s, n) = get_length_prefixed(self.buf.get(self.pos..)?)?;
        self.pos += n;
        Some(s)
    }
    /// Next byte.
    pub fn u8(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }
    /// Next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.buf.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    /// Next 4 little-endian bytes.
    pub fn fixed32(&mut self) -> Option<u32> {
        let v = get_fixed32(self.buf, self.pos)?;
        self.pos += 4;
        Some(v)
    }
    /// Next 8 little-endian bytes.
    pub fn fixed64(&mut self) -> Option<u64> {
        let v = get_fixed64(self.buf, self.pos)?;
        self.pos += 8;
        Some(v)
    }
}

/// CRC32C masking as in LevelDB: storing the CRC of data that itself contains CRCs is
/// error-prone, so stored checksums are rotated and offset.
pub fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Inverse of [`mask_crc`].
pub fn unmask_crc(masked: u32) -> u32 {
    masked.wrapping_sub(0xa282_ead8).rotate_left(15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip_and_truncation() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint64(&mut b, v);
            assert_eq!(get_varint64(&b), Some((v, b.len())));
            assert_eq!(get_varint64(&b[..b.len() - 1]), None);
        }
        assert_eq!(get_varint64(&[0xff; 11]), None);
    }

    #[test]
    fn varint_len_matches_the_encoding() {
        for v in [
            0u64,
            0x7f,
            0x80,
            0x3fff,
            0x4000,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_varint64(&mut b, v);
            assert_eq!(varint_len(v), b.len(), "{v}");
        }
        assert_eq!(varint_len(u64::from(u32::MAX)), MAX_VARINT32_LEN);
        assert_eq!(varint_len(u64::MAX), MAX_VARINT64_LEN);
    }

    #[test]
    fn crc_mask_round_trip() {
        for c in [0u32, 1, 0xdead_beef, u32::MAX] {
            assert_eq!(unmask_crc(mask_crc(c)), c);
            assert_ne!(mask_crc(c), c);
        }
    }
}

/// Hex text of bytes, for the frozen-fixture tests of the formats.
#[cfg(test)]
pub(crate) mod fixture_hex {
    /// `b` as lowercase hex, two digits per byte.
    pub fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// The bytes of hex text `s`, blanks ignored. Panics on bad hex (tests only).
    pub fn unhex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }
}
