//! Block handles and the fixed-size table footer.
//!
//! # Format
//! A block handle in an index entry is `offset: varint64 | size: varint64`, where `size`
//! counts the stored contents without the 5-byte trailer.
//!
//! The footer is the last [`FOOTER_LEN`] = 64 bytes of the file, all little-endian:
//! ```text
//!  0  filter handle      offset u64, size u64   (size 0: the table has no filter)
//! 16  index handle       offset u64, size u64
//! 32  properties handle  offset u64, size u64
//! 48  format_version     u32 (= 1; 2 for a table with a range-deletion block)
//! 52  footer crc         u32 = mask_crc(crc32c(bytes 0..52))
//! 56  magic              u64 = TABLE_MAGIC
//! ```
//!
//! # Invariants
//! 1. The magic is checked first (is this a table at all?), then the CRC, then the
//!    version, so each failure has a precise reason.
//! 2. Every handle lies entirely (with its trailer) before the footer.

use crate::coding::{
    get_varint64, mask_crc, put_fixed32, put_fixed64, put_varint64, unmask_crc, Decoder,
};

use super::compression::BLOCK_TRAILER_LEN;

/// Bytes of the footer.
pub const FOOTER_LEN: usize = 64;

/// Magic number ending every table file (ASCII "STRATSST" read big-endian).
pub const TABLE_MAGIC: u64 = 0x5354_5241_5453_5354;

/// The format version of a table without range tombstones: this code writes it for
/// those and reads it.
pub const FORMAT_VERSION: u32 = 1;

/// The format version of a table with a range-deletion block (`sst::range_del_block`),
/// located by its properties. The newest version this code reads.
pub const FORMAT_VERSION_RANGE_DEL: u32 = 2;

/// Where a block lives in the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockHandle {
    /// Byte offset of the block's first stored byte.
    pub offset: u64,
    /// Stored contents length, without the trailer.
    pub size: u64,
}

impl BlockHandle {
    /// Appends the varint form (index entry values).
    pub fn encode_to(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }

    /// Decodes the varint form; `None` if malformed or followed by extra bytes.
    pub fn decode(src: &[u8]) -> Option<BlockHandle> {
        let (offset, n) = get_varint64(src)?;
        let (size, m) = get_varint64(src.get(n..)?)?;
        (n + m == src.len()).then_some(BlockHandle { offset, size })
    }

    /// Offset just past the block's trailer; `None` on overflow.
    pub fn end(&self) -> Option<u64> {
        self.offset
            .checked_add(self.size)?
            .checked_add(BLOCK_TRAILER_LEN as u64)
    }
}

/// The decoded footer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footer {
    /// Filter block, `None` if the table was built without a filter.
    pub filter: Option<BlockHandle>,
    /// Index block.
    pub index: BlockHandle,
    /// Properties block.
    pub properties: BlockHandle,
    /// Format version ([`FORMAT_VERSION`] or [`FORMAT_VERSION_RANGE_DEL`] after a
    /// successful decode).
    pub format_version: u32,
}

impl Footer {
    /// Encodes the 64-byte footer.
    pub fn encode(&self) -> [u8; FOOTER_LEN] {
        let mut v = Vec::with_capacity(FOOTER_LEN);
        let filter = self.filter.unwrap_or_default();
        for h in [filter, self.index, self.properties] {
            put_fixed64(&mut v, h.offset);
            put_fixed64(&mut v, h.size);
        }
        put_fixed32(&mut v, self.format_version);
        let crc = mask_crc(crc32c::crc32c(&v));
        put_fixed32(&mut v, crc);
        put_fixed64(&mut v, TABLE_MAGIC);
        let mut out = [0u8; FOOTER_LEN];
        out.iter_mut().zip(&v).for_each(|(d, s)| *d = *s);
        out
    }

    /// Decodes and checks a footer read from `file_size - FOOTER_LEN`.
    ///
    /// # Errors
    /// A static reason: wrong length, bad magic, checksum mismatch, unsupported
    /// version, or a handle that does not end before the footer. Never panics.
    pub fn decode(src: &[u8], file_size: u64) -> Result<Footer, &'static str> {
        if src.len() != FOOTER_LEN {
            return Err("footer has the wrong length");
        }
        let mut d = Decoder::new(src);
        let mut handle = || -> Option<BlockHandle> {
            Some(BlockHandle {
                offset: d.fixed64()?,
                size: d.fixed64()?,
            })
        };
        let (filter, index, properties) = match (handle(), handle(), handle()) {
            (Some(f), Some(i), Some(p)) => (f, i, p),
            _ => return Err("truncated footer"),
        };
        let version = d.fixed32().ok_or("truncated footer")?;
        let crc = d.fixed32().ok_or("truncated footer")?;
        let magic = d.fixed64().ok_or("truncated footer")?;
        if magic != TABLE_MAGIC {
            return Err("bad table magic number");
        }
        let covered = src.get(..52).ok_or("truncated footer")?;
        if crc32c::crc32c(covered) != unmask_crc(crc) {
            return Err("footer checksum mismatch");
        }
        if !(FORMAT_VERSION..=FORMAT_VERSION_RANGE_DEL).contains(&version) {
            return Err("unsupported table format version");
        }
        let limit = file_size.saturating_sub(FOOTER_LEN as u64);
        let filter = (filter.size != 0).then_some(filter);
        for h in filter.iter().chain([&index, &properties]) {
            if h.end().is_none_or(|e| e > limit) {
                return Err("block handle points past the footer");
            }
        }
        Ok(Footer {
            filter,
            index,
            properties,
            format_version: version,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trip_and_rejection() {
        let f = Footer {
            filter: Some(BlockHandle {
                offset: 10,
                size: 20,
            }),
            index: BlockHandle {
                offset: 35,
                size: 7,
            },
            properties: BlockHandle {
                offset: 47,
                size: 3,
            },
            format_version: FORMAT_VERSION,
        };
        let bytes = f.encode();
        assert_eq!(Footer::decode(&bytes, 55 + 64), Ok(f));
        assert!(
            Footer::decode(&bytes, 54 + 64).is_err(),
            "handle past footer"
        );
        for i in 0..FOOTER_LEN {
            let mut bad = bytes;
            bad[i] ^= 1;
            assert!(Footer::decode(&bad, 1 << 20).is_err(), "byte {i}");
        }
        assert!(Footer::decode(&bytes[1..], 1 << 20).is_err());
    }

    #[test]
    fn handle_varint_round_trip() {
        let h = BlockHandle {
            offset: 1 << 40,
            size: 300,
        };
        let mut v = Vec::new();
        h.encode_to(&mut v);
        assert_eq!(BlockHandle::decode(&v), Some(h));
        assert_eq!(BlockHandle::decode(&v[..v.len() - 1]), None);
        v.push(0);
        assert_eq!(BlockHandle::decode(&v), None);
    }
}
