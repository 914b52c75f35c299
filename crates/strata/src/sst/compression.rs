//! Block compression codecs and the 5-byte block trailer that every block on disk ends
//! with.
//!
//! # Format
//! ```text
//! +---------------------------+-----------+------------------------------+
//! | stored contents (n bytes) | type: u8  | crc: u32 LE                  |
//! +---------------------------+-----------+------------------------------+
//!   crc = mask_crc(crc32c(stored contents ++ type))
//! type 1 = raw:  stored contents are the block contents
//! type 2 = lz4:  varint64 raw length ++ LZ4 block-format payload
//! type 3 = zstd: varint64 raw length ++ one zstd frame (level 3)
//! ```
//! Type 0 is never written (zeroed space must not decode). Values are append-only.
//!
//! # Invariants
//! 1. A compressed block is stored only if it saves at least 1/8 of the raw size;
//!    otherwise the raw bytes are stored, so decompression cost buys real space.
//! 2. Decoding checks the CRC before looking at anything else, then bounds the claimed
//!    raw length (at most [`MAX_BLOCK_LEN`], and for LZ4 at most
//!    [`lz4_max_raw_len`] of the payload) so crafted input cannot make the reader
//!    allocate without limit.
//! 3. The writer never stores a compressed block the reader would refuse: a block
//!    longer than [`MAX_BLOCK_LEN`], or an LZ4 block over [`lz4_max_raw_len`], is
//!    stored raw. Both sides use the same constant and function (`crate::limits`
//!    invariant 2), so they cannot drift apart.

use crate::coding::{get_varint64, mask_crc, put_varint64, unmask_crc};
use crate::Compression;

/// Bytes of the trailer after each block's stored contents.
pub const BLOCK_TRAILER_LEN: usize = 5;

/// Largest raw length of a compressed block (its one home is [`crate::limits`]).
pub use crate::limits::MAX_BLOCK_LEN;

/// Largest raw length the reader accepts for an LZ4 payload of `payload_len` bytes:
/// 256 times the payload plus 64 (LZ4's best ratio is about 255:1), saturating.
pub const fn lz4_max_raw_len(payload_len: usize) -> usize {
    payload_len.saturating_mul(256).saturating_add(64)
}

/// Zstandard compression level used for [`Compression::Zstd`].
pub const ZSTD_LEVEL: i32 = 3;

/// On-disk block type bytes. Append-only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BlockType {
    /// Stored as is.
    Raw = 1,
    /// LZ4 block format, raw length prefixed.
    Lz4 = 2,
    /// Zstandard frame, raw length prefixed.
    Zstd = 3,
}

impl BlockType {
    /// Decodes a type byte.
    pub fn from_u8(b: u8) -> Option<BlockType> {
        match b {
            1 => Some(BlockType::Raw),
            2 => Some(BlockType::Lz4),
            3 => Some(BlockType::Zstd),
            _ => None,
        }
    }
}

/// Stable on-disk code of a [`Compression`] setting (properties block).
pub fn compression_code(c: Compression) -> u8 {
    match c {
        Compression::None => BlockType::Raw as u8,
        Compression::Lz4 => BlockType::Lz4 as u8,
        Compression::Zstd => BlockType::Zstd as u8,
    }
}

/// Inverse of [`compression_code`].
pub fn compression_from_code(b: u8) -> Option<Compression> {
    Some(match BlockType::from_u8(b)? {
        BlockType::Raw => Compression::None,
        BlockType::Lz4 => Compression::Lz4,
        BlockType::Zstd => Compression::Zstd,
    })
}

/// Encodes `raw` as a block on disk (stored contents + trailer) into `out`, compressing
/// with `c` when it pays off (invariant 1) and the reader accepts the result
/// (invariant 3; otherwise the block is stored raw). `out` is cleared first.
///
/// Returns the type used; the block handle's size is `out.len() - BLOCK_TRAILER_LEN`.
pub fn seal_block(raw: &[u8], c: Compression, out: &mut Vec<u8>) -> BlockType {
    out.clear();
    let mut kind = BlockType::Raw;
    let limit = raw.len() - raw.len() / 8;
    let c = if raw.len() > MAX_BLOCK_LEN {
        Compression::None
    } else {
        c
    };
    match c {
        Compression::None => {}
        Compression::Lz4 => {
            put_varint64(out, raw.len() as u64);
            let start = out.len();
            out.resize(
                start + lz4_flex::block::get_maximum_output_size(raw.len()),
                0,
            );
            let n = out
                .get_mut(start..)
                .and_then(|dst| lz4_flex::block::compress_into(raw, dst).ok());
            let readable = |n: usize| raw.len() <= lz4_max_raw_len(n);
            if let Some(n) = n.filter(|&n| start + n <= limit && readable(n)) {
                out.truncate(start + n);
                kind = BlockType::Lz4;
            }
        }
        Compression::Zstd => {
            put_varint64(out, raw.len() as u64);
            if let Ok(z) = zstd::bulk::compress(raw, ZSTD_LEVEL) {
                if out.len() + z.len() <= limit {
                    out.extend_from_slice(&z);
                    kind = BlockType::Zstd;
                }
            }
        }
    }
    if kind == BlockType::Raw {
        out.clear();
        out.extend_from_slice(raw);
    }
    out.push(kind as u8);
    let crc = mask_crc(crc32c::crc32c(out));
    out.extend_from_slice(&crc.to_le_bytes());
    kind
}

/// Checks the trailer of a block read from disk and returns its raw contents. The
/// uncompressed case reuses `buf`'s allocation.
///
/// # Errors
/// A static reason for: too short, checksum mismatch, unknown type, bad length or a
/// payload that fails to decompress to exactly the claimed length. Never panics.
pub fn unseal_block(mut buf: Vec<u8>) -> Result<Vec<u8>, &'static str> {
    let body_len = buf
        .len()
        .checked_sub(BLOCK_TRAILER_LEN)
        .ok_or("block shorter than its trailer")?;
    let stored_crc = crate::coding::get_fixed32(&buf, body_len + 1).ok_or("truncated trailer")?;
    let covered = buf.get(..=body_len).ok_or("truncated trailer")?;
    if crc32c::crc32c(covered) != unmask_crc(stored_crc) {
        return Err("block checksum mismatch");
    }
    let type_byte = covered.get(body_len).copied().unwrap_or(0);
    let body = covered.get(..body_len).unwrap_or_default();
    match BlockType::from_u8(type_byte).ok_or("unknown block type")? {
        BlockType::Raw => {
            buf.truncate(body_len);
            Ok(buf)
        }
        BlockType::Lz4 => {
            let (raw_len, payload) = split_len(body)?;
            if raw_len > lz4_max_raw_len(payload.len()) {
                return Err("lz4 raw length exceeds the codec's ratio");
            }
            let mut out = vec![0u8; raw_len];
            match lz4_flex::block::decompress_into(payload, &mut out) {
                Ok(n) if n == raw_len => Ok(out),
                _ => Err("lz4 payload does not decompress to its length"),
            }
        }
        BlockType::Zstd => {
            let (raw_len, payload) = split_len(body)?;
            match zstd::bulk::decompress(payload, raw_len) {
                Ok(out) if out.len() == raw_len => Ok(out),
                _ => Err("zstd payload does not decompress to its length"),
            }
        }
    }
}

fn split_len(body: &[u8]) -> Result<(usize, &[u8]), &'static str> {
    let (len, n) = get_varint64(body).ok_or("bad raw length")?;
    let len = usize::try_from(len)
        .ok()
        .filter(|&l| l <= MAX_BLOCK_LEN)
        .ok_or("raw length too large")?;
    Ok((len, body.get(n..).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compressible(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i / 7 % 13) as u8).collect()
    }

    #[test]
    fn round_trip_every_codec() {
        let random: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for c in [Compression::None, Compression::Lz4, Compression::Zstd] {
            for raw in [vec![], vec![7u8], compressible(4096), random.clone()] {
                let mut out = Vec::new();
                let kind = seal_block(&raw, c, &mut out);
                if c != Compression::None && raw.len() == 4096 && raw[1] == raw[0] {
                    assert_ne!(kind, BlockType::Raw, "{c:?} should compress");
                    assert!(out.len() < raw.len() / 2);
                }
                assert_eq!(unseal_block(out).expect("valid"), raw);
            }
        }
    }

    #[test]
    fn incompressible_data_is_stored_raw() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let raw: Vec<u8> = (0..1000).map(|_| rng.random()).collect();
        let mut out = Vec::new();
        assert_eq!(seal_block(&raw, Compression::Lz4, &mut out), BlockType::Raw);
        assert_eq!(
            seal_block(&raw, Compression::Zstd, &mut out),
            BlockType::Raw
        );
    }

    #[test]
    fn any_flipped_byte_is_rejected() {
        for c in [Compression::None, Compression::Lz4, Compression::Zstd] {
            let mut sealed = Vec::new();
            seal_block(&compressible(2000), c, &mut sealed);
            for i in 0..sealed.len() {
                let mut bad = sealed.clone();
                bad[i] ^= 0x10;
                assert!(unseal_block(bad).is_err(), "{c:?} byte {i}");
            }
            assert!(unseal_block(sealed[..3].to_vec()).is_err());
        }
    }
}
