//! The SSTable writer never produces a block its reader refuses (`crate::limits`
//! invariants 1 and 2), at the size limits, for every compression type.
//!
//! Regression (issue 9, item 1): a 300 MiB value flushed with LZ4 became a compressed
//! block claiming a raw length over `MAX_BLOCK_LEN`, which the reader refused as
//! corruption.

use super::*;
use crate::iter::InternalIterator;
use crate::limits::{MAX_KEY_LEN, MAX_SINGLE_ENTRY_BLOCK_LEN, MAX_VALUE_LEN};
use crate::sst::compression::{seal_block, unseal_block, BlockType, MAX_BLOCK_LEN};

const ALL: [Compression; 3] = [Compression::None, Compression::Lz4, Compression::Zstd];

/// `len` compressible bytes (a 4 KiB pseudo-random chunk repeated), built by copying.
fn pattern(len: usize, seed: u8) -> Vec<u8> {
    let chunk: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 ^ seed)
        .collect();
    let mut v = Vec::with_capacity(len);
    while v.len() < len {
        let n = (len - v.len()).min(chunk.len());
        v.extend_from_slice(&chunk[..n]);
    }
    v
}

fn opts(c: Compression) -> TableOptions {
    TableOptions {
        compression: c,
        ..TableOptions::default()
    }
}

/// Builds `entries` with `o`, reopens the table and checks every entry by `get` and by
/// a scan, byte for byte. Returns the properties.
fn round_trip(entries: &[(Vec<u8>, Vec<u8>)], o: &TableOptions) -> TableProperties {
    let (bytes, props) = build(entries, o);
    let t = open(bytes, None, Arc::new(Statistics::default()), true).expect("open");
    for (k, v) in entries {
        let got = t.get(k, |_, value| value == v.as_slice()).expect("get");
        assert_eq!(
            got,
            Some(true),
            "{:?}: entry of {} bytes",
            o.compression,
            v.len()
        );
    }
    let mut it = t.iter();
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        assert_eq!(it.value(), entries[n].1.as_slice());
        n += 1;
        it.next();
    }
    it.status().expect("scan");
    assert_eq!(n, entries.len());
    props
}

#[test]
fn entry_at_the_key_and_value_limits_is_compressed_and_reads_back() {
    let key = ikey(&pattern(MAX_KEY_LEN, 1), 5, ValueKind::Put);
    let value = pattern(MAX_VALUE_LEN, 2);
    let entries = vec![(key, value)];
    for c in ALL {
        let props = round_trip(&entries, &opts(c));
        assert_eq!(props.num_data_blocks, 1);
        if c != Compression::None {
            assert!(
                props.data_size < (MAX_VALUE_LEN / 4) as u64,
                "{c:?}: the maximal single-entry block must be stored compressed"
            );
        }
    }
}

#[test]
fn lz4_block_of_zeros_at_the_bound_round_trips() {
    // Zeros give LZ4 its best ratio: the reader's ratio bound must still accept them.
    for len in [MAX_SINGLE_ENTRY_BLOCK_LEN, MAX_BLOCK_LEN] {
        let raw = vec![0u8; len];
        let mut sealed = Vec::new();
        let kind = seal_block(&raw, Compression::Lz4, &mut sealed);
        assert_eq!(kind, BlockType::Lz4, "len {len}");
        assert!(unseal_block(sealed).expect("readable") == raw, "len {len}");
    }
}

#[test]
fn block_over_the_bound_is_stored_raw() {
    let raw = vec![0u8; MAX_BLOCK_LEN + 1];
    for c in ALL {
        let mut sealed = Vec::new();
        assert_eq!(seal_block(&raw, c, &mut sealed), BlockType::Raw, "{c:?}");
        assert!(unseal_block(sealed).expect("readable") == raw, "{c:?}");
    }
}

#[test]
fn builder_cuts_before_an_entry_that_would_overflow_the_block_bound() {
    // `block_size` out of reach: only the bound can cut the block.
    let o = TableOptions {
        block_size: usize::MAX,
        ..opts(Compression::Zstd)
    };
    let entries = vec![
        (ikey(b"a", 2, ValueKind::Put), pattern(130 << 20, 3)),
        (ikey(b"b", 1, ValueKind::Put), pattern(MAX_VALUE_LEN, 4)),
    ];
    let props = round_trip(&entries, &o);
    assert_eq!(props.num_data_blocks, 2, "cut before the second entry");
    assert!(props.data_size < (64 << 20), "both blocks compressed");
}

#[test]
fn entry_over_the_limits_from_old_data_is_written_raw_and_reads_back() {
    // Written before the limits existed (and replayed or compacted since): readers
    // never check entry sizes, and the writer stores the over-bound block raw.
    let entries = vec![(ikey(b"old", 1, ValueKind::Put), vec![7u8; MAX_BLOCK_LEN])];
    let props = round_trip(&entries, &opts(Compression::Lz4));
    assert!(props.data_size > MAX_BLOCK_LEN as u64, "stored raw");
}
