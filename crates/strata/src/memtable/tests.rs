//! Memtable tests: snapshot semantics, a BTreeMap oracle driven by random operations, and
//! one or four writers racing three readers.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering as MemOrder};
use std::sync::Arc;

use proptest::prelude::*;

use super::{MemGet, MemTable};
use crate::iter::InternalIterator;
use crate::key::{
    make_internal_key, pack_trailer, parse_internal_key, LookupKey, ValueKind, KIND_SEEK,
    MAX_SEQUENCE,
};

/// Oracle: `(user key, Reverse(trailer))` sorts exactly like `compare_internal`.
type Model = BTreeMap<(Vec<u8>, Reverse<u64>), (ValueKind, Vec<u8>)>;

fn ikey_of(k: &(Vec<u8>, Reverse<u64>)) -> Vec<u8> {
    let mut v = k.0.clone();
    v.extend_from_slice(&k.1 .0.to_le_bytes());
    v
}

fn model_get<'m>(model: &'m Model, user_key: &[u8], seq: u64) -> MemGet<'m> {
    let from = (user_key.to_vec(), Reverse(pack_trailer(seq, KIND_SEEK)));
    match model.range(from..).next() {
        Some(((uk, Reverse(trailer)), (kind, v))) if uk == user_key => {
            let seq = trailer >> 8;
            match kind {
                ValueKind::Delete => MemGet::Deleted(seq),
                ValueKind::Merge => MemGet::Merge(seq),
                ValueKind::Put => MemGet::Found(seq, v),
                ValueKind::RangeDelete => MemGet::NotFound,
            }
        }
        _ => MemGet::NotFound,
    }
}

fn kind_of(k: u8) -> ValueKind {
    match k % 3 {
        0 => ValueKind::Delete,
        1 => ValueKind::Put,
        _ => ValueKind::Merge,
    }
}

fn entry(it: &dyn InternalIterator) -> Option<(Vec<u8>, Vec<u8>)> {
    it.valid().then(|| (it.key().to_vec(), it.value().to_vec()))
}

#[test]
fn empty_memtable() {
    let mem = Arc::new(MemTable::new());
    assert!(mem.is_empty());
    assert_eq!(mem.smallest_seqno(), None);
    assert_eq!(
        mem.get(&LookupKey::new(b"a", MAX_SEQUENCE)),
        MemGet::NotFound
    );
    let mut it = mem.iter();
    assert!(!it.valid());
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek(&make_internal_key(b"a", 1, ValueKind::Put));
    assert!(!it.valid());
    it.seek_for_prev(&make_internal_key(b"a", 1, ValueKind::Put));
    assert!(!it.valid());
    assert!(it.status().is_ok());
}

#[test]
fn get_sees_newest_version_at_snapshot() {
    let mem = MemTable::new();
    mem.add(10, ValueKind::Put, b"k", b"v10");
    mem.add(20, ValueKind::Delete, b"k", b"");
    mem.add(30, ValueKind::Put, b"k", b"v30");
    mem.add(35, ValueKind::Merge, b"k", b"m35");
    mem.add(15, ValueKind::Put, b"j", b"j15");
    mem.add(25, ValueKind::Put, b"l", b"l25");
    let get = |k: &[u8], s| mem.get(&LookupKey::new(k, s));
    assert_eq!(get(b"k", 9), MemGet::NotFound);
    assert_eq!(get(b"k", 10), MemGet::Found(10, b"v10"));
    assert_eq!(get(b"k", 19), MemGet::Found(10, b"v10"));
    assert_eq!(get(b"k", 20), MemGet::Deleted(20));
    assert_eq!(get(b"k", 29), MemGet::Deleted(20));
    assert_eq!(get(b"k", 30), MemGet::Found(30, b"v30"));
    assert_eq!(get(b"k", 35), MemGet::Merge(35));
    assert_eq!(get(b"k", MAX_SEQUENCE), MemGet::Merge(35));
    assert_eq!(get(b"j", 14), MemGet::NotFound);
    assert_eq!(get(b"j", 100), MemGet::Found(15, b"j15"));
    assert_eq!(get(b"l", 24), MemGet::NotFound);
    assert_eq!(get(b"kk", 100), MemGet::NotFound);
    assert_eq!(get(b"", 100), MemGet::NotFound);
    assert_eq!(mem.len(), 6);
    assert_eq!(mem.smallest_seqno(), Some(10));
}

#[test]
fn memory_usage_counts_keys_values_and_overhead() {
    let mem = MemTable::new();
    let empty = mem.approximate_memory_usage();
    mem.add(1, ValueKind::Put, &[1u8; 100], &[2u8; 1000]);
    let one = mem.approximate_memory_usage() - empty;
    assert!((1108..1108 + 256).contains(&one), "{one}");
    mem.add(2, ValueKind::Put, &[1u8; 10], &[2u8; 300_000]);
    assert!(mem.approximate_memory_usage() - empty - one >= 300_018);
}

#[test]
fn iterator_walks_internal_key_order_not_bytewise() {
    let mem = Arc::new(MemTable::new());
    // Bytewise, seq 256's trailer (LE 0x01,0x01,..) would sort after seq 1's (0x01,0x01? no:
    // 0x01,0x00 ..); internal order must put the newest (256) first regardless.
    mem.add(1, ValueKind::Put, b"a", b"1");
    mem.add(256, ValueKind::Put, b"a", b"256");
    mem.add(2, ValueKind::Put, b"ab", b"ab");
    let mut it = mem.iter();
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push(it.value().to_vec());
        it.next();
    }
    assert_eq!(seen, [b"256".to_vec(), b"1".to_vec(), b"ab".to_vec()]);
}

#[derive(Clone, Debug)]
enum Op {
    Add {
        key: u8,
        seq: u64,
        kind: u8,
        value: Vec<u8>,
    },
    Get {
        key: u8,
        seq: u64,
    },
    Seek {
        key: u8,
        seq: u64,
        kind: u8,
    },
    SeekForPrev {
        key: u8,
        seq: u64,
        kind: u8,
    },
    First,
    Last,
    Next,
    Prev,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let key = 0u8..24;
    let seq = 0u64..64;
    prop_oneof![
        4 => (key.clone(), seq.clone(), 0u8..3, prop::collection::vec(any::<u8>(), 0..12))
            .prop_map(|(key, seq, kind, value)| Op::Add { key, seq, kind, value }),
        2 => (key.clone(), seq.clone()).prop_map(|(key, seq)| Op::Get { key, seq }),
        1 => (key.clone(), seq.clone(), 0u8..3)
            .prop_map(|(key, seq, kind)| Op::Seek { key, seq, kind }),
        1 => (key, seq, 0u8..3).prop_map(|(key, seq, kind)| Op::SeekForPrev { key, seq, kind }),
        1 => Just(Op::First),
        1 => Just(Op::Last),
        3 => Just(Op::Next),
        3 => Just(Op::Prev),
    ]
}

/// Short user keys from a small alphabet, so that versions and prefixes collide.
fn user_key(k: u8) -> Vec<u8> {
    let mut v = vec![b'a' + k % 4; usize::from(k / 4) % 3];
    v.push(k);
    v
}

fn run_ops(ops: &[Op]) {
    let mem = Arc::new(MemTable::new());
    let mut model = Model::new();
    let mut it = mem.iter();
    // The model's position: the current key, if valid.
    let mut pos: Option<(Vec<u8>, Reverse<u64>)> = None;
    for op in ops {
        match op {
            Op::Add {
                key,
                seq,
                kind,
                value,
            } => {
                let uk = user_key(*key);
                let kind = kind_of(*kind);
                if model.keys().any(|(k, t)| *k == uk && t.0 >> 8 == *seq) {
                    continue; // (seq, user_key) must be unique
                }
                mem.add(*seq, kind, &uk, value);
                model.insert(
                    (uk, Reverse(pack_trailer(*seq, kind))),
                    (kind, value.clone()),
                );
            }
            Op::Get { key, seq } => {
                let uk = user_key(*key);
                let lk = LookupKey::new(&uk, *seq);
                assert_eq!(
                    mem.get(&lk),
                    model_get(&model, &uk, *seq),
                    "get {uk:?}@{seq}"
                );
            }
            Op::Seek { key, seq, kind } => {
                let t = (user_key(*key), Reverse(pack_trailer(*seq, kind_of(*kind))));
                it.seek(&ikey_of(&t));
                pos = model.range(t..).next().map(|e| e.0.clone());
            }
            Op::SeekForPrev { key, seq, kind } => {
                let t = (user_key(*key), Reverse(pack_trailer(*seq, kind_of(*kind))));
                it.seek_for_prev(&ikey_of(&t));
                pos = model.range(..=t).next_back().map(|e| e.0.clone());
            }
            Op::First => {
                it.seek_to_first();
                pos = model.keys().next().cloned();
            }
            Op::Last => {
                it.seek_to_last();
                pos = model.keys().next_back().cloned();
            }
            Op::Next | Op::Prev => {
                let Some(cur) = pos.clone() else { continue };
                if matches!(op, Op::Next) {
                    it.next();
                    pos = model
                        .range((std::ops::Bound::Excluded(cur), std::ops::Bound::Unbounded))
                        .next()
                        .map(|e| e.0.clone());
                } else {
                    it.prev();
                    pos = model.range(..cur).next_back().map(|e| e.0.clone());
                }
            }
        }
        let expected = pos.as_ref().map(|k| (ikey_of(k), model[k].1.clone()));
        assert_eq!(entry(&it), expected, "after {op:?}");
    }
    // Full scans both ways.
    let all: Vec<_> = model
        .iter()
        .map(|(k, v)| (ikey_of(k), v.1.clone()))
        .collect();
    let mut fwd = Vec::new();
    it.seek_to_first();
    while let Some(e) = entry(&it) {
        fwd.push(e);
        it.next();
    }
    assert_eq!(fwd, all);
    let mut back = Vec::new();
    it.seek_to_last();
    while let Some(e) = entry(&it) {
        back.push(e);
        it.prev();
    }
    back.reverse();
    assert_eq!(back, all);
    assert_eq!(mem.len(), model.len());
    let min_seq = model.keys().map(|k| k.1 .0 >> 8).min();
    assert_eq!(mem.smallest_seqno(), min_seq);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 256 }, ..ProptestConfig::default() })]

    #[test]
    fn memtable_matches_btreemap_model(ops in prop::collection::vec(op_strategy(), 0..300)) {
        run_ops(&ops);
    }
}

/// Key and value of the `i`-th insert; a reader can verify any entry it sees.
fn concurrent_entry(i: usize) -> (Vec<u8>, Vec<u8>) {
    (
        format!("key{i:08}").into_bytes(),
        format!("value-{}", i * 31).into_bytes(),
    )
}

fn index_of(user_key: &[u8]) -> usize {
    std::str::from_utf8(user_key.get(3..).unwrap_or_default())
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(usize::MAX)
}

/// One writer inserts `N` entries in a scrambled order while three readers iterate and
/// look up: every scan must be strictly sorted with correct values, and every key whose
/// insert had completed before a lookup started must be found.
#[test]
fn one_writer_three_readers() {
    writers_race_readers(1, 7919);
}

/// As [`one_writer_three_readers`], with four threads inserting at once (the pipelined
/// write path inserts concurrently): no entry is lost or misplaced by a racing link.
/// Ascending keys make every insert race for the same predecessor, the tail.
#[test]
fn four_writers_three_readers() {
    writers_race_readers(4, 1);
}

/// `writers` threads insert `N` entries, the `j`-th being entry `j * stride % N`
/// (`stride` coprime with `N`), while three readers scan and look up.
fn writers_race_readers(writers: usize, stride: usize) {
    const N: usize = if cfg!(miri) { 300 } else { 100_000 };
    let mem = Arc::new(MemTable::new());
    // Writer `w` inserts the `j`-th entry for every `j % writers == w`, in increasing `j`;
    // `progress[w]` counts how many of its adds have returned.
    let progress: Arc<Vec<AtomicUsize>> =
        Arc::new((0..writers).map(|_| AtomicUsize::new(0)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let order = move |j: usize| j * stride % N;

    let readers: Vec<_> = (0..3)
        .map(|r| {
            let (mem, progress, done) =
                (Arc::clone(&mem), Arc::clone(&progress), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut scans = 0usize;
                let mut probe: usize = r;
                loop {
                    let finished = done.load(MemOrder::Acquire);
                    // A forward scan (partial while the writers run, to keep it quick).
                    let mut it = mem.iter();
                    if r == 2 {
                        it.seek_to_last();
                    } else {
                        it.seek_to_first();
                    }
                    let mut last: Option<Vec<u8>> = None;
                    let mut count = 0;
                    while it.valid() && (finished || count < 2000) {
                        let p = parse_internal_key(it.key()).expect("valid key");
                        let i = index_of(p.user_key);
                        assert_eq!(
                            concurrent_entry(i),
                            (p.user_key.to_vec(), it.value().to_vec())
                        );
                        if let Some(l) = &last {
                            let ord = crate::key::compare_internal(l, it.key());
                            assert!(
                                if r == 2 { ord.is_gt() } else { ord.is_lt() },
                                "unsorted scan"
                            );
                        }
                        last = Some(it.key().to_vec());
                        count += 1;
                        if r == 2 {
                            it.prev()
                        } else {
                            it.next()
                        }
                    }
                    if finished {
                        assert_eq!(count, N, "final scan by reader {r} misses entries");
                    }
                    // Lookups of keys whose insert already returned.
                    for _ in 0..50 {
                        probe = probe.wrapping_mul(1_103_515_245).wrapping_add(12345);
                        let w = probe % writers;
                        let n = progress[w].load(MemOrder::Acquire);
                        if n == 0 {
                            continue;
                        }
                        let j = w + (probe / writers) % n * writers;
                        let (k, v) = concurrent_entry(order(j));
                        assert!(matches!(
                            mem.get(&LookupKey::new(&k, MAX_SEQUENCE)),
                            MemGet::Found(_, got) if got == v.as_slice()
                        ));
                    }
                    scans += 1;
                    if finished {
                        return scans;
                    }
                }
            })
        })
        .collect();

    let inserters: Vec<_> = (0..writers)
        .map(|w| {
            let (mem, progress) = (Arc::clone(&mem), Arc::clone(&progress));
            std::thread::spawn(move || {
                for (k, j) in (w..N).step_by(writers).enumerate() {
                    let (key, v) = concurrent_entry(order(j));
                    mem.add(j as u64 + 1, ValueKind::Put, &key, &v);
                    progress[w].store(k + 1, MemOrder::Release);
                }
            })
        })
        .collect();
    for w in inserters {
        w.join().expect("writer thread panicked");
    }
    done.store(true, MemOrder::Release);
    for r in readers {
        let scans = r.join().expect("reader thread panicked");
        assert!(scans >= 1);
    }
    assert_eq!(mem.len(), N);
    assert_eq!(mem.smallest_seqno(), Some(1));
}
