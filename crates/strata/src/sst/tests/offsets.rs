//! [`Table::approximate_offset_of`] and [`Table::approximate_range_bytes`] against the
//! true layout of the data blocks (read here through the index and every block), with
//! the index held, cached, or evicted, and with a damaged index.

use super::model::model_entries;
use super::*;
use crate::key::{compare_internal, user_key, KIND_SEEK, MAX_SEQUENCE};
use crate::sst::block_iter::BlockIter;
use crate::sst::footer::{BlockHandle, Footer, FOOTER_LEN};
use std::cmp::Ordering;

/// A data block as written: `[start, end)` in the file (with its trailer), its keys.
struct DataBlock {
    start: u64,
    end: u64,
    keys: Vec<Vec<u8>>,
}

/// Every data block of `t`, in order, checked to tile `[0, data_size)` exactly.
fn data_blocks(t: &Table) -> Vec<DataBlock> {
    let mut out: Vec<DataBlock> = Vec::new();
    let mut index = BlockIter::new(t.index_block().expect("index"));
    index.seek_to_first();
    while index.valid() {
        let h = t.index_handle(index.value()).expect("handle");
        let mut it = BlockIter::new(t.read_data_block(h, false).expect("data block"));
        let mut keys = Vec::new();
        it.seek_to_first();
        while it.valid() {
            keys.push(it.key().to_vec());
            it.next();
        }
        let start = out.last().map_or(0, |b| b.end);
        assert_eq!(h.offset, start, "blocks are contiguous from offset 0");
        out.push(DataBlock {
            start,
            end: h.end().expect("end"),
            keys,
        });
        index.next();
    }
    let p = t.properties();
    assert_eq!(out.last().map_or(0, |b| b.end), p.data_size);
    assert_eq!(out.len() as u64, p.num_data_blocks);
    out
}

/// The offsets `approximate_offset_of(probe)` may answer, from the blocks alone: the
/// start of the block holding the first entry `>= probe`, or, when that entry begins
/// its block and is past `probe`, also the previous block's start (the separator
/// between them may sort on either side of `probe`); past every entry, the last
/// block's start or the end of the data.
fn allowed(blocks: &[DataBlock], probe: &[u8]) -> Vec<u64> {
    for (b, block) in blocks.iter().enumerate() {
        let Some(i) = block
            .keys
            .iter()
            .position(|k| compare_internal(k, probe) != Ordering::Less)
        else {
            continue;
        };
        let mut ok = vec![block.start];
        if i == 0 && b > 0 && block.keys[0] != probe {
            ok.push(blocks[b - 1].start);
        }
        return ok;
    }
    let end = blocks.last().map_or(0, |b| b.end);
    vec![blocks.last().map_or(0, |b| b.start), end]
}

/// Probe keys around every entry: the entry itself, the first and last possible keys
/// of its user key, and the first possible key of the next user key.
fn probes(entries: &Entries) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (k, _) in entries {
        let uk = user_key(k);
        out.push(k.clone());
        out.push(ikey(uk, MAX_SEQUENCE, KIND_SEEK));
        out.push(ikey(uk, 0, ValueKind::Delete));
        out.push(ikey(&[uk, &[0]].concat(), MAX_SEQUENCE, KIND_SEEK));
    }
    out.sort_by(|a, b| compare_internal(a, b));
    out.dedup();
    out
}

/// A key before every internal key, and one after every key of a model table (whose
/// user keys are shorter than 20 bytes and start below 0xff).
fn before_all() -> Vec<u8> {
    ikey(b"", MAX_SEQUENCE, ValueKind::RangeDelete)
}
fn after_all() -> Vec<u8> {
    ikey(&[0xff; 20], 0, ValueKind::Delete)
}

/// Option sets with and without a filter (the data end is then the filter's offset or
/// the index block's), one entry or many per block, compressed or not.
fn option_sets() -> Vec<(u64, TableOptions)> {
    let plain = |block_size, interval, bits, compression| TableOptions {
        block_size,
        block_restart_interval: interval,
        bloom_bits_per_key: bits,
        compression,
        column_group: 0,
    };
    vec![
        (21, small_opts(Compression::None)),
        (22, small_opts(Compression::Lz4)),
        (23, plain(64, 1, 0, Compression::None)),
        (24, plain(4096, 16, 0, Compression::Zstd)),
    ]
}

#[test]
fn offset_is_the_start_of_the_block_holding_the_first_entry_at_or_after_the_key() {
    for (seed, opts) in option_sets() {
        let entries = model_entries(seed, 1500);
        let (bytes, props) = build(&entries, &opts);
        let t = open(bytes, None, Arc::default(), false).expect("open");
        let blocks = data_blocks(&t);
        assert!(blocks.len() > 3, "seed {seed}: several blocks");
        let mut last = 0;
        for p in probes(&entries) {
            let got = t.approximate_offset_of(&p).expect("offset");
            let ok = allowed(&blocks, &p);
            assert!(ok.contains(&got), "seed {seed}: {got} not in {ok:?}");
            assert!(
                got >= last,
                "seed {seed}: offsets decrease at {got} < {last}"
            );
            last = got;
        }
        // An entry's own key: exactly its block's start.
        for block in &blocks {
            for k in &block.keys {
                assert_eq!(t.approximate_offset_of(k).expect("offset"), block.start);
            }
        }
        assert_eq!(t.approximate_offset_of(&before_all()).expect("first"), 0);
        assert_eq!(
            t.approximate_offset_of(&props.smallest_key)
                .expect("smallest"),
            0
        );
        let end = t.approximate_offset_of(&after_all()).expect("after all");
        assert_eq!(end, props.data_size, "seed {seed}: past the end");
    }
    let (bytes, props) = build(&[], &small_opts(Compression::None));
    assert!(
        props.filter_size > 0,
        "the empty table has a filter at offset 0"
    );
    let t = open(bytes, None, Arc::default(), false).expect("open empty");
    for k in [before_all(), after_all()] {
        assert_eq!(t.approximate_offset_of(&k).expect("empty"), 0);
    }
    assert_eq!(t.approximate_range_bytes(b"", b"zzz").expect("empty"), 0);
}

/// The bytes of the blocks holding the entries of user keys `[lo, hi]`, 0 if none.
fn true_range_bytes(blocks: &[DataBlock], lo: &[u8], hi: &[u8]) -> u64 {
    let holds = |b: &DataBlock| b.keys.iter().any(|k| (lo..=hi).contains(&user_key(k)));
    match (
        blocks.iter().find(|b| holds(b)),
        blocks.iter().rfind(|b| holds(b)),
    ) {
        (Some(first), Some(last)) => last.end - first.start,
        _ => 0,
    }
}

#[test]
fn range_bytes_partition_the_data_exactly_and_match_the_blocks_to_a_block() {
    for (seed, opts) in option_sets() {
        let entries = model_entries(seed, 1500);
        let (bytes, props) = build(&entries, &opts);
        let t = open(bytes, None, Arc::default(), false).expect("open");
        let blocks = data_blocks(&t);
        let slack = blocks.iter().map(|b| b.end - b.start).max().unwrap_or(0);
        let mut users: Vec<&[u8]> = entries.iter().map(|(k, _)| user_key(k)).collect();
        users.dedup();
        let check = |lo: &[u8], hi: &[u8]| -> u64 {
            let got = t.approximate_range_bytes(lo, hi).expect("range");
            let want = true_range_bytes(&blocks, lo, hi);
            assert!(
                got.abs_diff(want) <= slack,
                "seed {seed}: [{:?}, {:?}]: {got} vs {want} (slack {slack})",
                lo.escape_ascii().to_string(),
                hi.escape_ascii().to_string(),
            );
            got
        };
        // A partition of the user-key space: ["", c1], [c1 ++ 0, c2], ..., [ck ++ 0, ff..].
        let mut lo = Vec::new();
        let mut sum = 0;
        for cut in users.iter().step_by(37) {
            sum += check(&lo, cut);
            lo = [*cut, &[0]].concat();
        }
        sum += check(&lo, user_key(&after_all()));
        assert_eq!(
            sum, props.data_size,
            "seed {seed}: the ranges cover the data once"
        );
        for u in &users {
            check(u, u);
        }
        assert_eq!(t.approximate_range_bytes(b"b", b"a").expect("reversed"), 0);
    }
}

/// With `cache_index_and_filter_blocks`, the same answers whether the index block is
/// held, cached, or evicted at once (a cache that holds nothing); and only the index
/// block is ever read: no reads when it is held or cached, one per call when evicted.
#[test]
fn offsets_read_only_the_index_block_wherever_it_lives() {
    let entries = model_entries(25, 1500);
    let (bytes, _) = build(&entries, &small_opts(Compression::Lz4));
    let probes = probes(&entries);
    let held = open(bytes.clone(), None, Arc::default(), false).expect("open");
    let want: Vec<u64> = probes
        .iter()
        .map(|p| held.approximate_offset_of(p).expect("offset"))
        .collect();
    for (capacity, cache_meta, reads_per_call) in [
        (1 << 20, false, 0),
        (1 << 20, true, 0),
        (0, false, 0),
        (0, true, 1),
    ] {
        let stats = Arc::new(Statistics::default());
        let cache = Arc::new(BlockCache::new(capacity));
        let t = open_with(
            bytes.clone(),
            Some(cache),
            Arc::clone(&stats),
            cache_meta,
            false,
        )
        .expect("open");
        let before = stats.snapshot();
        let got: Vec<u64> = probes
            .iter()
            .map(|p| t.approximate_offset_of(p).expect("offset"))
            .collect();
        let case = format!("capacity {capacity}, cache_meta {cache_meta}");
        assert_eq!(got, want, "{case}");
        let s = stats.snapshot();
        let calls = probes.len() as u64;
        assert_eq!(
            s.blocks_read - before.blocks_read,
            reads_per_call * calls,
            "{case}"
        );
    }
}

/// The table's bytes with its index block's raw contents changed by `patch` (which
/// must keep their length) and resealed with a valid checksum, as a crafted or
/// mis-written file would have them; plus the decoded original and its offset.
fn patch_index(bytes: &[u8], patch: impl FnOnce(&Block, &mut [u8])) -> (Vec<u8>, u64) {
    let at = bytes.len() - FOOTER_LEN;
    let footer = Footer::decode(&bytes[at..], bytes.len() as u64).expect("footer");
    let (start, len) = (footer.index.offset as usize, footer.index.size as usize);
    let mut raw = bytes[start..start + len].to_vec();
    let block = Block::decode(raw.clone()).expect("index block");
    patch(&block, &mut raw);
    let mut sealed = Vec::new();
    crate::sst::compression::seal_block(&raw, Compression::None, &mut sealed);
    assert_eq!(
        sealed.len(),
        len + crate::sst::compression::BLOCK_TRAILER_LEN
    );
    let mut out = bytes.to_vec();
    out[start..start + sealed.len()].copy_from_slice(&sealed);
    (out, footer.index.offset)
}

fn assert_index_corruption(e: &Error, index_offset: u64, reason: &str) {
    match e {
        Error::Corruption {
            file,
            offset,
            reason: r,
        } => {
            assert_eq!(file, Path::new("/mem/000007.sst"));
            assert_eq!((*offset, r.as_str()), (index_offset, reason), "{e}");
        }
        other => panic!("expected corruption of the index block, got {other:?}"),
    }
}

#[test]
fn damaged_index_with_a_valid_checksum_is_corruption_naming_the_index_block() {
    let entries = model_entries(26, 600);
    let (bytes, props) = build(&entries, &small_opts(Compression::None));
    let (first, last) = (&entries[0].0, &entries[entries.len() - 1].0);
    let entry = |b: &Block, i: usize| {
        let e = b.decode_entry(b.restart(i).expect("restart"));
        e.expect("index entry")
    };

    // Every entry claims a shared prefix, which an index entry (each a restart) can't.
    let (bad, at) = patch_index(&bytes, |b, raw| {
        for i in 0..b.num_restarts() {
            raw[b.restart(i).expect("restart")] = 1;
        }
    });
    let t = open(bad, None, Arc::default(), false).expect("open reads no index entry");
    for k in [before_all(), last.clone(), after_all()] {
        let e = t.approximate_offset_of(&k).expect_err("malformed entries");
        assert_index_corruption(&e, at, "malformed index entry");
    }

    // The first block's handle is not a varint pair.
    let (bad, at) = patch_index(&bytes, |b, raw| raw[entry(b, 0).value].fill(0xff));
    let t = open(bad, None, Arc::default(), false).expect("open");
    let e = t
        .approximate_offset_of(first)
        .expect_err("malformed handle");
    assert_index_corruption(&e, at, "malformed block handle in index");
    let e = t.approximate_range_bytes(b"", b"").expect_err("range");
    assert_index_corruption(&e, at, "malformed block handle in index");

    // The last block's handle, well formed, points at the filter after the data.
    let (bad, at) = patch_index(&bytes, |b, raw| {
        let e = entry(b, b.num_restarts() - 1);
        let old = BlockHandle::decode(&raw[e.value.clone()]).expect("handle");
        let mut v = Vec::new();
        BlockHandle {
            offset: props.data_size,
            size: old.size,
        }
        .encode_to(&mut v);
        assert_eq!(
            v.len(),
            e.value.len(),
            "same handle length, same block length"
        );
        raw[e.value].copy_from_slice(&v);
    });
    let t = open(bad, None, Arc::default(), false).expect("open");
    let e = t
        .approximate_offset_of(last)
        .expect_err("handle past the data");
    assert_index_corruption(&e, at, "block handle in index points past the data blocks");
}
