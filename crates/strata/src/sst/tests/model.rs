//! Round trips against a `BTreeMap` model ordered by `compare_internal`.

use super::*;
use crate::iter::InternalIterator;
use crate::key::{compare_internal, user_key, KIND_SEEK};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;

/// An internal key ordered like the engine orders it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct IKey(Vec<u8>);

impl Ord for IKey {
    fn cmp(&self, o: &Self) -> Ordering {
        compare_internal(&self.0, &o.0)
    }
}
impl PartialOrd for IKey {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

type Model = BTreeMap<IKey, Vec<u8>>;

fn random_user_key(rng: &mut StdRng) -> Vec<u8> {
    // Shared prefixes (to exercise prefix compression) and the odd 0xff byte.
    let prefix = ["", "user", "user0", "zz\u{ff}"][rng.random_range(0..4)];
    let mut k = prefix.as_bytes().to_vec();
    for _ in 0..rng.random_range(0..12) {
        k.push(if rng.random_bool(0.05) {
            0xff
        } else {
            rng.random_range(b'0'..=b'z')
        });
    }
    k
}

fn model(seed: u64, n: usize) -> Model {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut m = Model::new();
    while m.len() < n {
        let uk = random_user_key(&mut rng);
        for _ in 0..rng.random_range(1..4) {
            let seq = rng.random_range(1..1_000_000);
            let kind = if rng.random_bool(0.1) {
                ValueKind::Delete
            } else {
                ValueKind::Put
            };
            let len = if rng.random_bool(0.02) {
                rng.random_range(0..3000)
            } else {
                rng.random_range(0..40)
            };
            let v: Vec<u8> = (0..len).map(|_| rng.random_range(b'a'..=b'f')).collect();
            m.insert(IKey(ikey(&uk, seq, kind)), v);
        }
    }
    m
}

fn entries(m: &Model) -> Entries {
    m.iter().map(|(k, v)| (k.0.clone(), v.clone())).collect()
}

/// The sorted entries of `model(seed, n)`, for the other table tests.
pub(super) fn model_entries(seed: u64, n: usize) -> Entries {
    entries(&model(seed, n))
}

fn collect_forward(it: &mut TableIterator) -> Entries {
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    assert!(it.status().is_ok());
    out
}

fn check_table(seed: u64, m: &Model, opts: &TableOptions, cache: Option<Arc<BlockCache>>) {
    check_table_with(seed, m, opts, cache, false);
}

/// [`check_table`], with the index block and filter in the block cache iff
/// `cache_meta`.
fn check_table_with(
    seed: u64,
    m: &Model,
    opts: &TableOptions,
    cache: Option<Arc<BlockCache>>,
    cache_meta: bool,
) {
    let want = entries(m);
    let (bytes, props) = build(&want, opts);
    let stats = Arc::new(Statistics::default());
    let t = open_with(bytes, cache, Arc::clone(&stats), cache_meta, true).expect("open");
    assert_eq!(t.properties(), &props);
    assert_eq!(props.num_entries, want.len() as u64);
    assert_eq!(
        props.smallest_key,
        want.first().map(|e| e.0.clone()).unwrap_or_default()
    );
    assert_eq!(
        props.largest_key,
        want.last().map(|e| e.0.clone()).unwrap_or_default()
    );
    assert!(t.verify_checksums().expect("verify") > props.num_data_blocks);

    let mut it = t.iter();
    assert_eq!(collect_forward(&mut it), want, "seed {seed}: forward scan");
    let mut back = Vec::new();
    it.seek_to_last();
    while it.valid() {
        back.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    back.reverse();
    assert_eq!(back, want, "seed {seed}: backward scan");

    let mut rng = StdRng::seed_from_u64(seed ^ 0xabcdef);
    let keys: Vec<&IKey> = m.keys().collect();
    for _ in 0..2000 {
        // Targets: existing keys, and random (mostly absent) keys at random snapshots.
        let target = if rng.random_bool(0.5) && !keys.is_empty() {
            let k = &keys[rng.random_range(0..keys.len())].0;
            let seq = crate::key::sequence(k) + rng.random_range(0..2);
            ikey(user_key(k), seq, KIND_SEEK)
        } else {
            ikey(
                &random_user_key(&mut rng),
                rng.random_range(0..1_000_001),
                KIND_SEEK,
            )
        };
        let t_key = IKey(target.clone());
        let ge = m.range((Bound::Included(&t_key), Bound::Unbounded)).next();
        let le = m
            .range((Bound::Unbounded, Bound::Included(&t_key)))
            .next_back();

        it.seek(&target);
        assert_eq!(it.valid(), ge.is_some(), "seed {seed}: seek validity");
        if let Some((k, v)) = ge {
            assert_eq!((it.key(), it.value()), (&k.0[..], &v[..]));
            // Step both ways from a seek.
            it.prev();
            let before = m.range((Bound::Unbounded, Bound::Excluded(k))).next_back();
            assert_eq!(it.valid(), before.is_some());
            if let Some((bk, _)) = before {
                assert_eq!(it.key(), &bk.0[..]);
                it.next();
                assert_eq!(it.key(), &k.0[..]);
            }
        }
        it.seek_for_prev(&target);
        assert_eq!(
            it.valid(),
            le.is_some(),
            "seed {seed}: seek_for_prev validity"
        );
        if let Some((k, _)) = le {
            assert_eq!(it.key(), &k.0[..]);
        }

        let got = t
            .get(&target, |k, v| (k.to_vec(), v.to_vec()))
            .expect("get");
        let expect = ge
            .filter(|(k, _)| user_key(&k.0) == user_key(&target))
            .map(|(k, v)| (k.0.clone(), v.clone()));
        assert_eq!(got, expect, "seed {seed}: get");
    }
    let s = stats.snapshot();
    assert_eq!(s.tables_probed, 2000);
    assert!(s.bloom_checked == 2000 || opts.bloom_bits_per_key == 0);
}

#[test]
fn round_trip_matches_model_across_options() {
    let m = model(1, 3000);
    for c in [Compression::None, Compression::Lz4, Compression::Zstd] {
        check_table(1, &m, &small_opts(c), None);
    }
    let cache = Arc::new(BlockCache::new(1 << 20));
    check_table(
        1,
        &m,
        &small_opts(Compression::Lz4),
        Some(Arc::clone(&cache)),
    );
    assert!(cache.usage() > 0);
    for (seed, block_size, interval, bits) in [(2, 64, 1, 0), (3, 4096, 16, 10), (4, 1000, 128, 3)]
    {
        let opts = TableOptions {
            block_size,
            block_restart_interval: interval,
            bloom_bits_per_key: bits,
            compression: Compression::None,
            column_group: 3,
        };
        check_table(seed, &model(seed, 1500), &opts, None);
    }
    check_table(5, &model(5, 1), &small_opts(Compression::None), None);
}

/// With `cache_index_and_filter_blocks`, the same answers whether the index block and
/// filter stay cached (a roomy cache) or are evicted at once and read back from the
/// file on every use (a cache that holds nothing).
#[test]
fn round_trip_matches_model_with_index_and_filter_in_the_cache() {
    let m = model(6, 3000);
    for capacity in [1 << 20, 0] {
        for c in [Compression::None, Compression::Lz4] {
            let cache = Arc::new(BlockCache::new(capacity));
            check_table_with(6, &m, &small_opts(c), Some(cache), true);
        }
    }
}

/// Where the index block and filter live, counted: held by the table, no reads after
/// open; cached, one cache hit each per lookup; cached but evicted (a cache that holds
/// nothing), one file read each per lookup.
#[test]
fn index_and_filter_in_the_cache_are_read_through_it() {
    let m = model(10, 2000);
    let (bytes, _) = build(&entries(&m), &small_opts(Compression::None));
    let (k, v) = m.iter().nth(555).expect("entry");
    let lookup = ikey(user_key(&k.0), crate::key::sequence(&k.0), KIND_SEEK);
    let absent = ikey(b"absent-key", 5, KIND_SEEK);
    // (capacity, cache_meta) -> blocks read by one present and one absent lookup, the
    // data block already cached where the cache holds anything.
    for (capacity, cache_meta, reads_present, reads_absent) in [
        (1 << 20, false, 0, 0),
        (1 << 20, true, 0, 0),
        (0, false, 1, 0),
        (0, true, 3, 1),
    ] {
        let stats = Arc::new(Statistics::default());
        let cache = Arc::new(BlockCache::new(capacity));
        let t = open_with(
            bytes.clone(),
            Some(Arc::clone(&cache)),
            Arc::clone(&stats),
            cache_meta,
            false,
        )
        .expect("open");
        if capacity > 0 && cache_meta {
            assert!(cache.len() >= 2, "index block and filter cached at open");
        }
        let warm = t.get(&lookup, |_, val| val.to_vec()).expect("get");
        assert_eq!(warm.as_ref(), Some(v));
        let before = stats.snapshot();
        let got = t.get(&lookup, |_, val| val.to_vec()).expect("get");
        assert_eq!(got.as_ref(), Some(v));
        let s = stats.snapshot();
        let case = format!("capacity {capacity}, cache_meta {cache_meta}");
        assert_eq!(
            s.blocks_read - before.blocks_read,
            reads_present,
            "{case}: present"
        );
        if capacity > 0 {
            let hits = if cache_meta { 3 } else { 1 };
            assert_eq!(s.block_cache_hits - before.block_cache_hits, hits, "{case}");
        }
        let before = stats.snapshot();
        assert_eq!(t.get(&absent, |_, _| ()).expect("get"), None);
        let s = stats.snapshot();
        assert_eq!(
            s.bloom_negatives - before.bloom_negatives,
            1,
            "{case}: bloom rejects"
        );
        assert_eq!(
            s.blocks_read - before.blocks_read,
            reads_absent,
            "{case}: absent"
        );
        assert!(t.may_contain(user_key(&lookup)));
    }
}

/// `model(seed, n)` as a table of small blocks over a 1 MiB block cache: the model, the
/// table, its counters and its data block count.
fn open_cached(seed: u64, n: usize) -> (Model, Arc<Table>, Arc<Statistics>, u64) {
    let m = model(seed, n);
    let (bytes, props) = build(&entries(&m), &small_opts(Compression::None));
    let stats = Arc::new(Statistics::default());
    let cache = Arc::new(BlockCache::new(1 << 20));
    let t = open(bytes, Some(cache), Arc::clone(&stats), false).expect("open");
    (m, t, stats, props.num_data_blocks)
}

#[test]
fn get_counts_bloom_and_cache_events() {
    let (m, t, stats, _) = open_cached(9, 2000);
    let (k, v) = m.iter().nth(777).expect("entry");
    let lookup = ikey(user_key(&k.0), crate::key::sequence(&k.0), KIND_SEEK);
    for round in 0..2u64 {
        let before = stats.snapshot();
        let got = t.get(&lookup, |_, val| val.to_vec()).expect("get");
        assert_eq!(got.as_ref(), Some(v));
        let s = stats.snapshot();
        assert_eq!(s.block_cache_hits - before.block_cache_hits, round);
        assert_eq!(s.block_cache_misses - before.block_cache_misses, 1 - round);
        assert_eq!(s.blocks_read - before.blocks_read, 1 - round);
    }
    let mut negatives = 0;
    for i in 0..1000 {
        let absent = ikey(format!("absent{i}").as_bytes(), 5, KIND_SEEK);
        negatives += u64::from(!t.may_contain(user_key(&absent)));
        assert_eq!(t.get(&absent, |_, _| ()).expect("get"), None);
    }
    let s = stats.snapshot();
    assert_eq!(s.bloom_negatives, negatives);
    assert_eq!(s.bloom_checked, 1002);
    assert_eq!(s.bloom_false_positives, 1000 - negatives);
    assert!(negatives > 950, "bloom rejected only {negatives} of 1000");
}

/// A table cache of `capacity` over a temporary directory (path 1; path 0 does not
/// exist) holding table 42, written from `model(11, 500)`.
struct CachedTable {
    dir: tempfile::TempDir,
    tc: crate::cache::TableCache,
    meta: crate::version::FileMetaData,
    model: Model,
    path: PathBuf,
}

fn cached_table(capacity: usize) -> CachedTable {
    use crate::cache::TableCache;
    use crate::env::{FileSystem, PosixFs};
    use crate::version::FileMetaData;
    let dir = tempfile::tempdir().expect("tempdir");
    let fs: Arc<dyn FileSystem> = Arc::new(PosixFs);
    let m = model(11, 500);
    let path = crate::filename::table_file(dir.path(), 42);
    let mut b = TableBuilder::new(
        fs.create(&path).expect("create"),
        small_opts(Compression::Zstd),
    );
    for (k, v) in &m {
        b.add(&k.0, v).expect("add");
    }
    let props = b.finish().expect("finish");
    let tc = TableCache::new(
        Arc::clone(&fs),
        vec![PathBuf::from("/nonexistent"), dir.path().to_path_buf()],
        capacity,
        Some(Arc::new(BlockCache::new(1 << 20))),
        Arc::new(Statistics::default()),
        true,
    );
    let meta = FileMetaData {
        number: 42,
        path_id: 1,
        size: props.file_size,
        smallest: props.smallest_key.clone(),
        largest: props.largest_key.clone(),
        smallest_seqno: props.smallest_seqno,
        largest_seqno: props.largest_seqno,
        num_entries: props.num_entries,
        num_deletions: props.num_deletions,
        column_group: 0,
        kind: Default::default(),
        num_range_deletions: props.num_range_deletions,
        creation_time: 0,
    };
    CachedTable {
        dir,
        tc,
        meta,
        model: m,
        path,
    }
}

#[test]
fn table_cache_opens_once_and_evicts() {
    use crate::version::FileMetaData;
    let CachedTable {
        dir: _dir,
        tc,
        meta,
        model: m,
        path,
    } = cached_table(16);
    let t1 = tc.get(&meta).expect("open");
    let t2 = tc.get(&meta).expect("cached");
    assert!(Arc::ptr_eq(&t1, &t2));
    assert_eq!(t1.path(), path.as_path());
    assert_eq!(t1.properties().file_size, meta.size);
    tc.evict(42);
    let t3 = tc.get(&meta).expect("reopen");
    assert!(!Arc::ptr_eq(&t1, &t3));
    let mut it = t1.iter();
    assert_eq!(
        collect_forward(&mut it).len(),
        m.len(),
        "evicted table still readable"
    );
    let bad_tier = FileMetaData {
        path_id: 5,
        ..meta.clone()
    };
    assert!(matches!(
        tc.get(&FileMetaData {
            number: 43,
            ..bad_tier
        }),
        Err(Error::Internal(_))
    ));
    assert!(tc
        .get(&FileMetaData {
            number: 44,
            path_id: 0,
            ..meta
        })
        .is_err());
}

#[test]
fn pinned_table_skips_the_cache_and_closes_with_its_file() {
    use crate::version::file_ref::{FileRef, Obsolete, ObsoleteFiles};
    use std::borrow::Cow;
    let CachedTable {
        dir: _dir,
        tc,
        meta,
        model: m,
        ..
    } = cached_table(16);
    let queue = Arc::new(ObsoleteFiles::default());
    let file = FileRef::new(meta.number, meta.path_id, &queue);
    let first = tc.get_pinned(&meta, Some(&file)).expect("open and pin");
    assert!(
        matches!(first, Cow::Borrowed(_)),
        "pinned on its first open"
    );
    let weak = Arc::downgrade(&first);
    assert_eq!(tc.pinned_count(), 1);
    let lookups = tc.lookups();
    for (k, v) in m.iter().take(100) {
        let t = tc.get_pinned(&meta, Some(&file)).expect("pinned");
        let got = t.get(&k.0, |_, val| val.to_vec()).expect("get");
        assert_eq!(got.as_ref(), Some(v));
    }
    assert_eq!(
        tc.lookups(),
        lookups,
        "a pinned probe makes no cache lookup"
    );
    // Other paths (compaction inputs, checksums) still find the one open table.
    let cached = tc.get(&meta).expect("cached");
    assert!(weak.upgrade().is_some_and(|t| Arc::ptr_eq(&t, &cached)));
    drop(cached);

    // The last reference goes: the pin is released, the file queued; the deleter's
    // eviction then closes the table.
    drop(file);
    assert_eq!(tc.pinned_count(), 0);
    assert_eq!(
        queue.take(),
        vec![Obsolete::Table {
            number: meta.number,
            path_id: meta.path_id
        }]
    );
    assert!(
        weak.upgrade().is_some(),
        "still a cache entry until evicted"
    );
    tc.evict(meta.number);
    assert!(weak.upgrade().is_none(), "closed once evicted");
}

#[test]
fn pins_stay_within_half_the_capacity_and_are_never_evicted() {
    use crate::version::file_ref::{FileRef, ObsoleteFiles};
    use crate::version::FileMetaData;
    use std::borrow::Cow;
    let CachedTable {
        dir,
        tc,
        meta,
        path,
        ..
    } = cached_table(4);
    let copy = |number: u64| {
        let to = crate::filename::table_file(dir.path(), number);
        std::fs::copy(&path, to).expect("copy");
        FileMetaData {
            number,
            ..meta.clone()
        }
    };
    let queue = Arc::new(ObsoleteFiles::default());
    let files: Vec<(FileMetaData, Arc<FileRef>)> = (50..53)
        .map(|n| (copy(n), FileRef::new(n, meta.path_id, &queue)))
        .collect();
    let pinned: Vec<bool> = files
        .iter()
        .map(|(m, f)| {
            let t = tc.get_pinned(m, Some(f)).expect("open");
            matches!(t, Cow::Borrowed(_))
        })
        .collect();
    assert_eq!(pinned, [true, true, false], "capacity 4 pins at most 2");
    assert_eq!(tc.pinned_count(), 2);
    // Churn more unpinned tables through the cache than it holds: the pinned ones stay
    // cache entries (counted, not evicted, so never opened twice).
    for n in 60..70 {
        let m = copy(n);
        for _ in 0..3 {
            drop(tc.get(&m).expect("open"));
        }
    }
    for (m, f) in files.iter().take(2) {
        let pin = f.pinned_table().expect("pinned");
        assert!(Arc::ptr_eq(pin, &tc.get(m).expect("cached")));
    }
}

/// Reads that do not fill the cache (compaction inputs) are counted apart, so
/// per-lookup figures can leave them out; a user scan counts none.
#[test]
fn compaction_reads_are_counted_apart() {
    let (_, t, stats, data_blocks) = open_cached(12, 1500);
    let scan = |mut it: TableIterator| {
        it.seek_to_first();
        while it.valid() {
            it.next();
        }
    };
    let before = stats.snapshot();
    scan(t.iter_no_fill());
    let s = stats.snapshot();
    assert_eq!(
        s.compaction_blocks_read - before.compaction_blocks_read,
        data_blocks
    );
    assert_eq!(s.blocks_read - before.blocks_read, data_blocks);
    let before = s;
    scan(t.iter());
    let s = stats.snapshot();
    assert_eq!(s.compaction_blocks_read, before.compaction_blocks_read);
    assert_eq!(s.blocks_read - before.blocks_read, data_blocks);
}

/// `get_each` visits every entry of the key from the lookup on, newest first, across
/// block ends, stops when told, reads the next block only when the separator says the
/// key runs on, and agrees with the model for keys with many versions.
#[test]
fn get_each_walks_a_keys_versions_across_blocks() {
    let mut entries = Entries::new();
    for (k, versions) in [(&b"a"[..], 3u64), (b"k", 120), (b"m", 1), (b"z", 40)] {
        for seq in (1..=versions).rev() {
            let kind = if seq % 7 == 0 {
                ValueKind::Put
            } else {
                ValueKind::Merge
            };
            entries.push((ikey(k, seq, kind), format!("{seq:04}").into_bytes()));
        }
    }
    let (bytes, _) = build(&entries, &small_opts(Compression::None));
    let stats = Arc::new(Statistics::default());
    let t = open(bytes, None, Arc::clone(&stats), false).unwrap();
    let seqs = |k: &[u8], at: u64, limit: usize| {
        let mut got = Vec::new();
        let called = t
            .get_each(&ikey(k, at, KIND_SEEK), |ik, v| {
                let seq = crate::key::parse_internal_key(ik).unwrap().seq;
                assert_eq!(v, format!("{seq:04}").as_bytes());
                got.push(seq);
                got.len() < limit
            })
            .unwrap();
        assert_eq!(called, !got.is_empty());
        got
    };
    assert_eq!(
        seqs(b"k", 200, usize::MAX),
        (1..=120).rev().collect::<Vec<_>>()
    );
    assert_eq!(
        seqs(b"k", 60, usize::MAX),
        (1..=60).rev().collect::<Vec<_>>()
    );
    assert_eq!(seqs(b"k", 60, 3), vec![60, 59, 58]);
    assert_eq!(seqs(b"z", 5, usize::MAX), vec![5, 4, 3, 2, 1]);
    assert_eq!(seqs(b"a", 9, usize::MAX), vec![3, 2, 1]);
    assert!(seqs(b"b", 9, usize::MAX).is_empty());
    assert!(seqs(b"m", 9, usize::MAX) == vec![1]);
    // `m`'s one entry: one data block at most (its neighbours' versions fill others).
    let before = stats.snapshot().blocks_read;
    seqs(b"m", 9, usize::MAX);
    assert_eq!(stats.snapshot().blocks_read - before, 1);
}
