//! Bloom filters never hide a key: 100,000 distinct keys of 1 to 60 bytes (random
//! bytes, printable text, long shared prefixes, runs of one byte), flushed with
//! filters on into tables across L0 and deeper levels (a different bits-per-key, so
//! a different probe count, per level), each come back from a point lookup, and a
//! sample of absent keys does not. Point lookups consult the filter of every table
//! whose range holds the key, so a filter answering "absent" for one key in a
//! thousand it holds loses about a hundred keys here. Run with filters held by their
//! tables, in a small block cache (`cache_index_and_filter_blocks`), and read with
//! direct I/O (skipped with a note where the temp directory refuses O_DIRECT).

mod common;

use common::direct_io_tempdir;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;
use std::path::Path;
use strata::{Db, LevelOptions, Options, ReadOptions, WriteBatch, WriteOptions};

const KEYS: usize = 100_000;

/// One key of 1 to 60 bytes, of one of several shapes so that the filter hash sees
/// every length, whole 8-byte words and tails, and keys that differ in one byte.
fn random_key(rng: &mut StdRng) -> Vec<u8> {
    let len = rng.random_range(1..=60usize);
    match rng.random_range(0..8u32) {
        // Any bytes.
        0..=2 => (0..len).map(|_| rng.random()).collect(),
        // Printable text.
        3 | 4 => (0..len).map(|_| rng.random_range(b' '..=b'~')).collect(),
        // A long shared prefix: keys differ only in their last bytes.
        5 | 6 => {
            let mut k = b"tenant-0042/table-users/row-".to_vec();
            k.truncate(len.saturating_sub(4));
            k.extend((k.len()..len).map(|_| rng.random_range(b'0'..=b'9')));
            k
        }
        // A run of one byte (zeros or 0xff, others) with one byte changed.
        _ => {
            let fill = [0u8, 0xff, b'a'][rng.random_range(0..3usize)];
            let mut k = vec![fill; len];
            k[rng.random_range(0..len)] = rng.random();
            k
        }
    }
}

/// `n` distinct keys in random order, from `seed`.
fn distinct_keys(seed: u64, n: usize) -> Vec<Vec<u8>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut seen = HashSet::with_capacity(n);
    let mut keys = Vec::with_capacity(n);
    while keys.len() < n {
        let k = random_key(&mut rng);
        if seen.insert(k.clone()) {
            keys.push(k);
        }
    }
    keys
}

/// The value of the key written `i`-th: short, so tables hold many keys.
fn value(i: usize) -> Vec<u8> {
    format!("v{i}").into_bytes()
}

/// Small memtables and files, so that 100,000 keys make dozens of tables over L0 and
/// two deeper levels; bloom filters on every level, with 10, 6, 14 and 20 bits per key.
fn options() -> Options {
    let bits = [10, 6, 14, 20];
    Options::default()
        .with_write_buffer_size(256 << 10)
        .with_target_file_size_base(128 << 10)
        .with_max_bytes_for_level_base(512 << 10)
        .with_max_bytes_for_level_multiplier(4.0)
        .with_level0_file_num_compaction_trigger(4)
        .with_num_levels(4)
        .with_levels(
            bits.iter()
                .map(|&b| LevelOptions::DEFAULT.with_bloom_bits_per_key(b))
                .collect(),
        )
}

/// Writes every key into `dir` with `opts`, leaving tables in L0 and at least two
/// deeper levels and nothing in the memtable, then gets every key back (in write
/// order, or `in_key_order`) and checks that a sample of keys never written is absent.
fn every_key_comes_back(dir: &Path, opts: Options, name: &str, in_key_order: bool) {
    let keys = distinct_keys(0x5eed_f11e, KEYS);
    let write = |db: &Db, start: usize, chunk: &[Vec<u8>]| {
        for (j, batch) in chunk.chunks(1_000).enumerate() {
            let mut b = WriteBatch::new();
            for (i, k) in batch.iter().enumerate() {
                b.put(k, &value(start + j * 1_000 + i));
            }
            db.write(&WriteOptions::default(), b).unwrap();
        }
        db.flush().unwrap();
        db.wait_for_compactions().unwrap();
    };
    // All but the last memtable's worth, compacted down the levels.
    let (early, last) = keys.split_at(KEYS - 4_000);
    let db = Db::open(dir, opts.clone()).unwrap_or_else(|e| panic!("{name}: open: {e}"));
    write(&db, 0, early);
    db.close().unwrap();
    // The rest as one more L0 file, reopened with a higher trigger so that it stays
    // there whatever number of L0 files the compactions left.
    let opts = opts.with_level0_file_num_compaction_trigger(8);
    let db = Db::open(dir, opts).unwrap_or_else(|e| panic!("{name}: reopen: {e}"));
    write(&db, early.len(), last);
    let levels: Vec<usize> = db.stats().levels.iter().map(|l| l.files).collect();
    let tables: usize = levels.iter().sum();
    let deeper = levels.iter().skip(1).filter(|&&f| f > 0).count();
    assert!(
        levels[0] >= 1 && deeper >= 2 && tables >= 10,
        "{name}: files per level {levels:?}"
    );

    let ro = ReadOptions::default();
    let before = db.stats().counters;
    let mut missing = Vec::new();
    let mut order: Vec<usize> = (0..KEYS).collect();
    if in_key_order {
        order.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
    }
    for i in order {
        let k = &keys[i];
        match db.get(&ro, k).unwrap() {
            Some(v) => assert_eq!(v, value(i), "{name}: key {}", k.escape_ascii()),
            None => missing.push(k),
        }
    }
    assert!(
        missing.is_empty(),
        "{name}: {} of {KEYS} keys not found (files per level {levels:?}), first: {}",
        missing.len(),
        missing
            .iter()
            .take(5)
            .map(|k| format!("`{}`", k.escape_ascii()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let present = db.stats().counters;
    assert!(
        present.bloom_checked - before.bloom_checked >= KEYS as u64,
        "{name}: the gets consulted no filter"
    );

    // Keys never written: another seed, minus any key that happens to be written.
    let written: HashSet<&Vec<u8>> = keys.iter().collect();
    let mut absent = 0;
    for k in distinct_keys(0x00ab_5e47, 10_000) {
        if !written.contains(&k) {
            assert_eq!(
                db.get(&ro, &k).unwrap(),
                None,
                "{name}: {}",
                k.escape_ascii()
            );
            absent += 1;
        }
    }
    let after = db.stats().counters;
    assert!(
        after.bloom_negatives - present.bloom_negatives >= absent / 2,
        "{name}: filters rejected few of {absent} absent keys"
    );
    db.close().unwrap();
}

#[test]
fn filters_held_by_their_tables_find_every_key() {
    let dir = tempfile::tempdir().unwrap();
    every_key_comes_back(dir.path(), options(), "held filters", false);
}

/// Index blocks and filters in a block cache too small to hold them all: filters are
/// evicted and read back from their files during the lookups.
#[test]
fn filters_in_a_small_block_cache_find_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options()
        .with_cache_index_and_filter_blocks(true)
        .with_block_cache_capacity(64 << 10);
    every_key_comes_back(dir.path(), opts, "cached filters", false);
}

/// Tables read with direct I/O, their filters read through the same aligned reads at
/// open and, in the small block cache, again after an eviction. The gets go in key
/// order: in random order each would cost a device read of a data block, and the
/// cached filters thrash (about 200,000 direct reads, 15 s).
#[test]
fn filters_read_with_direct_io_find_every_key() {
    let Some(dir) = direct_io_tempdir("filters_read_with_direct_io_find_every_key") else {
        return;
    };
    let opts = options()
        .with_use_direct_reads(true)
        .with_cache_index_and_filter_blocks(true)
        .with_block_cache_capacity(64 << 10);
    every_key_comes_back(dir.path(), opts, "direct reads", true);
}
