//! The properties block: table-wide statistics kept in memory while a table is open.
//!
//! # Format (properties block contents)
//! A sequence of records, tags ascending:
//! ```text
//! tag: varint32 | len: varint64 | value: len bytes
//! ```
//! Integer values are a varint64 filling `value` exactly; key values are raw bytes.
//!
//! | tag | field | | tag | field |
//! |----:|-------|-|----:|-------|
//! | 1 | num_entries | | 8 | filter_size |
//! | 2 | num_deletions | | 9 | smallest_key (internal key) |
//! | 3 | num_data_blocks | | 10 | largest_key (internal key) |
//! | 4 | raw_key_size | | 11 | smallest_seqno |
//! | 5 | raw_value_size | | 12 | largest_seqno |
//! | 6 | data_size | | 13 | column_group |
//! | 7 | index_size | | 14 | compression (block type code, see `compression`) |
//! | 15 | range-deletion block handle (varint offset, varint size; format v2 only) | | 16 | num_range_deletions (v2 only) |
//!
//! # Invariants
//! 1. Tags are append-only and 0 is never used. Readers skip unknown tags, so adding a
//!    property needs no format version bump; a missing tag reads as 0/empty.
//! 2. `file_size` and `format_version` are not stored here: they come from the file
//!    and the footer.

use super::compression::{compression_code, compression_from_code};
use super::footer::BlockHandle;
use super::TableProperties;
use crate::coding::{get_varint64, put_length_prefixed, put_varint32, put_varint64, Decoder};
use crate::Compression;

/// Encodes `p` (plus the table's compression setting) as properties block contents.
pub fn encode(p: &TableProperties, compression: Compression) -> Vec<u8> {
    let mut out = Vec::new();
    let int = |out: &mut Vec<u8>, tag: u32, v: u64| {
        let mut val = Vec::with_capacity(10);
        put_varint64(&mut val, v);
        put_varint32(out, tag);
        put_length_prefixed(out, &val);
    };
    int(&mut out, 1, p.num_entries);
    int(&mut out, 2, p.num_deletions);
    int(&mut out, 3, p.num_data_blocks);
    int(&mut out, 4, p.raw_key_size);
    int(&mut out, 5, p.raw_value_size);
    int(&mut out, 6, p.data_size);
    int(&mut out, 7, p.index_size);
    int(&mut out, 8, p.filter_size);
    put_varint32(&mut out, 9);
    put_length_prefixed(&mut out, &p.smallest_key);
    put_varint32(&mut out, 10);
    put_length_prefixed(&mut out, &p.largest_key);
    int(&mut out, 11, p.smallest_seqno);
    int(&mut out, 12, p.largest_seqno);
    int(&mut out, 13, u64::from(p.column_group));
    int(&mut out, 14, u64::from(compression_code(compression)));
    if let Some(h) = p.range_del_block {
        let mut val = Vec::with_capacity(20);
        h.encode_to(&mut val);
        put_varint32(&mut out, 15);
        put_length_prefixed(&mut out, &val);
        int(&mut out, 16, p.num_range_deletions);
    }
    out
}

/// Decodes properties block contents. `file_size` and `format_version` are left 0 for
/// the caller to fill.
///
/// # Errors
/// A static reason for truncated records, integers that do not fill their record, or
/// out-of-range values. Never panics.
pub fn decode(src: &[u8]) -> Result<(TableProperties, Compression), &'static str> {
    let mut p = TableProperties::default();
    let mut compression = Compression::None;
    let mut d = Decoder::new(src);
    while !d.is_empty() {
        let tag = d.varint32().ok_or("truncated property tag")?;
        let val = d.length_prefixed().ok_or("truncated property value")?;
        let int = || -> Result<u64, &'static str> {
            match get_varint64(val) {
                Some((v, n)) if n == val.len() => Ok(v),
                _ => Err("malformed integer property"),
            }
        };
        match tag {
            0 => return Err("property tag 0"),
            1 => p.num_entries = int()?,
            2 => p.num_deletions = int()?,
            3 => p.num_data_blocks = int()?,
            4 => p.raw_key_size = int()?,
            5 => p.raw_value_size = int()?,
            6 => p.data_size = int()?,
            7 => p.index_size = int()?,
            8 => p.filter_size = int()?,
            9 => p.smallest_key = val.to_vec(),
            10 => p.largest_key = val.to_vec(),
            11 => p.smallest_seqno = int()?,
            12 => p.largest_seqno = int()?,
            13 => {
                p.column_group = u32::try_from(int()?).map_err(|_| "column group out of range")?
            }
            14 => {
                compression = u8::try_from(int()?)
                    .ok()
                    .and_then(compression_from_code)
                    .ok_or("unknown compression code")?
            }
            15 => {
                p.range_del_block =
                    Some(BlockHandle::decode(val).ok_or("malformed range-deletion handle")?)
            }
            16 => p.num_range_deletions = int()?,
            _ => {} // Added by a newer writer: skip (invariant 1).
        }
    }
    // The writer records both or neither (tags 15 and 16): tombstones without their
    // block, or a block counted empty, is damage (a fuzz finding: the count alone did
    // not survive a re-encode).
    if p.range_del_block.is_some() != (p.num_range_deletions > 0) {
        return Err("range-deletion count and block disagree");
    }
    Ok((p, compression))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_truncation() {
        let p = TableProperties {
            num_entries: 1000,
            num_deletions: 3,
            num_data_blocks: 9,
            raw_key_size: 12_000,
            raw_value_size: 1 << 40,
            data_size: 40_000,
            index_size: 300,
            filter_size: 1280,
            smallest_key: b"a\0\0\0\0\0\0\0\x01".to_vec(),
            largest_key: b"zz\x01\0\0\0\0\0\0\0".to_vec(),
            smallest_seqno: 1,
            largest_seqno: u64::MAX >> 8,
            column_group: 7,
            file_size: 0,
            format_version: 0,
            num_range_deletions: 0,
            range_del_block: None,
        };
        let bytes = encode(&p, Compression::Zstd);
        assert_eq!(decode(&bytes), Ok((p.clone(), Compression::Zstd)));
        // Format version 2: the range-deletion block and its count.
        let v2 = TableProperties {
            num_range_deletions: 4,
            range_del_block: Some(BlockHandle {
                offset: 4096,
                size: 77,
            }),
            ..p
        };
        assert_eq!(
            decode(&encode(&v2, Compression::None)),
            Ok((v2, Compression::None))
        );
        for cut in 0..bytes.len() {
            // Either a clean prefix of records or an error; never a panic.
            let _ = decode(&bytes[..cut]);
        }
        let mut unknown = bytes.clone();
        put_varint32(&mut unknown, 99);
        put_length_prefixed(&mut unknown, b"future");
        assert!(decode(&unknown).is_ok());
    }
}
