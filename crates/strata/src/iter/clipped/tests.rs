use proptest::prelude::*;

use super::*;
use crate::iter::test_util::FailingIter;
use crate::key::{compare_internal, make_internal_key, KIND_SEEK, MAX_SEQUENCE};

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Sequence numbers of entries and targets: both ends of the range and a few between.
const SEQS: [u64; 6] = [0, 1, 5, 6, 200, MAX_SEQUENCE];

fn kind(k: u8) -> ValueKind {
    ValueKind::from_u8(k % 4).unwrap()
}

fn ik(user_key: &[u8], seq: u64, kind: ValueKind) -> Vec<u8> {
    make_internal_key(user_key, seq, kind)
}

/// Sorts by the internal order, drops duplicate keys and gives each entry its own value.
fn sorted(mut keys: Vec<Vec<u8>>) -> Entries {
    keys.sort_by(|a, b| compare_internal(a, b));
    keys.dedup();
    keys.into_iter()
        .enumerate()
        .map(|(i, k)| (k, format!("v{i}").into_bytes()))
        .collect()
}

fn clipped(entries: &Entries, lo: &[u8], hi: &[u8]) -> ClippedIterator<FailingIter> {
    ClippedIterator::new(FailingIter::new(entries.clone(), usize::MAX), lo, hi)
}

/// How a generated range's upper key bounds it.
#[derive(Clone, Copy, Debug)]
enum UpperKind {
    Included,
    Excluded,
    Unbounded,
}

impl UpperKind {
    fn of(self, hi: &[u8]) -> Upper<'_> {
        match self {
            UpperKind::Included => Upper::Included(hi),
            UpperKind::Excluded => Upper::Excluded(hi),
            UpperKind::Unbounded => Upper::Unbounded,
        }
    }

    /// The model: is user key `k` under the bound `hi`?
    fn admits(self, k: &[u8], hi: &[u8]) -> bool {
        match self {
            UpperKind::Included => k <= hi,
            UpperKind::Excluded => k < hi,
            UpperKind::Unbounded => true,
        }
    }
}

fn upper_kind() -> impl Strategy<Value = UpperKind> {
    prop_oneof![
        2 => Just(UpperKind::Included),
        1 => Just(UpperKind::Excluded),
        1 => Just(UpperKind::Unbounded),
    ]
}

fn entry(it: &dyn InternalIterator) -> Option<(Vec<u8>, Vec<u8>)> {
    it.valid().then(|| (it.key().to_vec(), it.value().to_vec()))
}

/// Every entry from a seek to the first, forward, then from a seek to the last,
/// backward (reversed back to forward order).
fn scans(it: &mut dyn InternalIterator) -> (Entries, Entries) {
    let mut fwd = Vec::new();
    it.seek_to_first();
    while let Some(e) = entry(it) {
        fwd.push(e);
        it.next();
    }
    let mut back = Vec::new();
    it.seek_to_last();
    while let Some(e) = entry(it) {
        back.push(e);
        it.prev();
    }
    back.reverse();
    (fwd, back)
}

/// User keys just outside and just inside `k`: its immediate successor `k ++ [0]`, the
/// prefix without its last byte, and the keys with the last byte one lower and higher.
fn neighbours(k: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![[k, &[0]].concat()];
    if let Some((&last, head)) = k.split_last() {
        out.push(head.to_vec());
        out.push([head, &[last.wrapping_sub(1)]].concat());
        out.push([head, &[last.wrapping_add(1)]].concat());
    }
    out
}

/// A user key: random from a small alphabet (so that random keys often meet the bounds),
/// or one of the bounds or their neighbours.
#[derive(Clone, Debug)]
struct Pick {
    near_bound: bool,
    index: usize,
    random: Vec<u8>,
}

fn pick() -> impl Strategy<Value = Pick> {
    (
        any::<bool>(),
        any::<usize>(),
        prop::collection::vec(0u8..3, 0..4),
    )
        .prop_map(|(near_bound, index, random)| Pick {
            near_bound,
            index,
            random,
        })
}

impl Pick {
    fn resolve(&self, lo: &[u8], hi: &[u8]) -> Vec<u8> {
        if !self.near_bound {
            return self.random.clone();
        }
        let mut c = vec![lo.to_vec(), hi.to_vec()];
        c.extend(neighbours(lo));
        c.extend(neighbours(hi));
        c[self.index % c.len()].clone()
    }
}

#[derive(Clone, Debug)]
enum Target {
    /// `(user key, SEQS[seq], kind)`.
    Key(Pick, usize, u8),
    /// The internal key of an entry, exactly.
    Entry(usize),
    /// A user key with the trailer `u64::MAX` (the adapter's own lower sentinel).
    MaxTrailer(Pick),
    /// A malformed key, shorter than a trailer.
    Short(Vec<u8>),
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        4 => (pick(), 0..SEQS.len(), 0u8..4).prop_map(|(p, s, k)| Target::Key(p, s, k)),
        2 => any::<usize>().prop_map(Target::Entry),
        1 => pick().prop_map(Target::MaxTrailer),
        1 => prop::collection::vec(0u8..3, 0..8).prop_map(Target::Short),
    ]
}

impl Target {
    fn resolve(&self, entries: &Entries, lo: &[u8], hi: &[u8]) -> Vec<u8> {
        match self {
            Target::Key(p, s, k) => ik(&p.resolve(lo, hi), SEQS[s % SEQS.len()], kind(*k)),
            Target::Entry(i) if !entries.is_empty() => entries[i % entries.len()].0.clone(),
            Target::Entry(_) => ik(lo, 0, ValueKind::Put),
            Target::MaxTrailer(p) => [&p.resolve(lo, hi)[..], &u64::MAX.to_le_bytes()].concat(),
            Target::Short(k) => k.clone(),
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    First,
    Last,
    Seek(Target),
    SeekForPrev(Target),
    Next,
    Prev,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::First),
        1 => Just(Op::Last),
        2 => target().prop_map(Op::Seek),
        2 => target().prop_map(Op::SeekForPrev),
        4 => Just(Op::Next),
        4 => Just(Op::Prev),
    ]
}

/// `lo` and `hi`: usually `lo <= hi`, sometimes equal, sometimes reversed (empty).
fn bounds() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
    let key = || prop::collection::vec(0u8..3, 0..4);
    (0u8..4, key(), key()).prop_map(|(shape, a, b)| match shape {
        0 => (a.clone(), a),
        1 => (a, b),
        _ if a <= b => (a, b),
        _ => (b, a),
    })
}

/// Runs `ops` on the adapter and on the model (the entries in range, in a `Vec`),
/// comparing the position after every operation.
fn run(lo: &[u8], hi: &[u8], upper: UpperKind, spec: &[(Pick, usize, u8)], ops: &[Op]) {
    let keys = spec
        .iter()
        .map(|(p, s, k)| ik(&p.resolve(lo, hi), SEQS[s % SEQS.len()], kind(*k)))
        .collect();
    let entries = sorted(keys);
    let model: Entries = entries
        .iter()
        .filter(|e| {
            let k = key::user_key(&e.0);
            lo <= k && upper.admits(k, hi)
        })
        .cloned()
        .collect();
    let mut it = ClippedIterator::with_upper(
        FailingIter::new(entries.clone(), usize::MAX),
        lo,
        upper.of(hi),
    );
    assert!(!it.valid());
    let mut pos: Option<usize> = None;
    for op in ops {
        match op {
            Op::First => {
                it.seek_to_first();
                pos = (!model.is_empty()).then_some(0);
            }
            Op::Last => {
                it.seek_to_last();
                pos = model.len().checked_sub(1);
            }
            Op::Seek(t) => {
                let t = t.resolve(&entries, lo, hi);
                it.seek(&t);
                let p = model.partition_point(|e| compare_internal(&e.0, &t).is_lt());
                pos = (p < model.len()).then_some(p);
            }
            Op::SeekForPrev(t) => {
                let t = t.resolve(&entries, lo, hi);
                it.seek_for_prev(&t);
                let p = model.partition_point(|e| compare_internal(&e.0, &t).is_le());
                pos = p.checked_sub(1);
            }
            Op::Next => {
                let Some(p) = pos else { continue };
                it.next();
                pos = (p + 1 < model.len()).then_some(p + 1);
            }
            Op::Prev => {
                let Some(p) = pos else { continue };
                it.prev();
                pos = p.checked_sub(1);
            }
        }
        assert_eq!(entry(&it), pos.map(|p| model[p].clone()), "after {op:?}");
        assert!(it.status().is_ok());
    }
    assert_eq!(scans(&mut it), (model.clone(), model), "full scans");
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 1024 },
        ..ProptestConfig::default()
    })]

    #[test]
    fn clipped_matches_model(
        (lo, hi) in bounds(),
        upper in upper_kind(),
        spec in prop::collection::vec((pick(), 0..SEQS.len(), 0u8..4), 0..60),
        ops in prop::collection::vec(op(), 0..100),
    ) {
        run(&lo, &hi, upper, &spec, &ops);
    }
}

/// Versions of `user_key` at each sequence number in `seqs`, all `Put`.
fn versions(user_key: &[u8], seqs: &[u64]) -> Vec<Vec<u8>> {
    seqs.iter()
        .map(|&s| ik(user_key, s, ValueKind::Put))
        .collect()
}

fn keys(entries: &Entries) -> Vec<Vec<u8>> {
    entries.iter().map(|e| e.0.clone()).collect()
}

/// Every kind of seek leaves `it` invalid with an `Ok` status.
fn assert_empty(it: &mut dyn InternalIterator, probes: &[Vec<u8>]) {
    let (fwd, back) = scans(it);
    assert!(fwd.is_empty() && back.is_empty());
    for t in probes {
        it.seek(t);
        assert!(!it.valid(), "seek {t:?}");
        it.seek_for_prev(t);
        assert!(!it.valid(), "seek_for_prev {t:?}");
    }
    assert!(it.status().is_ok());
}

#[test]
fn lo_above_every_key_is_empty() {
    let entries = sorted([versions(b"a", &[1, 9]), versions(b"e", &[3])].concat());
    let mut probes = keys(&entries);
    probes.push(ik(b"f", MAX_SEQUENCE, ValueKind::RangeDelete));
    probes.push(ik(b"z", 0, ValueKind::Delete));
    // "e\0" is the smallest user key above "e".
    assert_empty(&mut clipped(&entries, b"e\0", b"z"), &probes);
}

#[test]
fn hi_below_every_key_is_empty() {
    // "b\0" is the smallest user key above "b": just outside the range.
    let entries = sorted(
        [
            versions(b"b\0", &[0, 4, MAX_SEQUENCE]),
            versions(b"c", &[2]),
        ]
        .concat(),
    );
    let mut probes = keys(&entries);
    probes.push(ik(b"", MAX_SEQUENCE, ValueKind::RangeDelete));
    probes.push(ik(b"b", 0, ValueKind::Delete));
    assert_empty(&mut clipped(&entries, b"a", b"b"), &probes);
}

#[test]
fn lo_above_hi_is_empty() {
    let entries = sorted(
        [
            versions(b"a", &[1]),
            versions(b"b", &[1]),
            versions(b"c", &[1]),
        ]
        .concat(),
    );
    let probes = keys(&entries);
    assert_empty(&mut clipped(&entries, b"c", b"a"), &probes);
    assert_empty(&mut clipped(&entries, b"b\0", b"b"), &probes);
}

#[test]
fn lo_equal_hi_yields_every_version_of_one_key() {
    let k = &b"k"[..];
    let of_k = vec![
        ik(k, MAX_SEQUENCE, ValueKind::RangeDelete),
        ik(k, MAX_SEQUENCE, ValueKind::Merge),
        ik(k, 9, ValueKind::Put),
        ik(k, 5, ValueKind::Delete),
        ik(k, 1, ValueKind::Merge),
        ik(k, 0, ValueKind::Put),
        ik(k, 0, ValueKind::Delete),
    ];
    let around = [
        versions(b"j", &[0, 7]),
        versions(b"j\xff\xff", &[0, MAX_SEQUENCE]),
        versions(b"k\0", &[MAX_SEQUENCE, 3]),
        versions(b"l", &[1]),
    ]
    .concat();
    let entries = sorted([of_k.clone(), around].concat());
    let mut it = clipped(&entries, k, k);
    let (fwd, back) = scans(&mut it);
    assert_eq!(keys(&fwd), of_k, "forward: every version, newest first");
    assert_eq!(fwd, back, "backward is the exact reverse");

    // A lookup at snapshot 5 lands on the newest version at or below 5.
    it.seek(&ik(k, 5, KIND_SEEK));
    assert_eq!(it.key(), ik(k, 5, ValueKind::Delete));
    it.seek_for_prev(&ik(k, 5, KIND_SEEK));
    assert_eq!(it.key(), ik(k, 9, ValueKind::Put));
    // The oldest version is last: one more step leaves the range ("k\0" follows).
    it.seek(&ik(k, 0, ValueKind::Delete));
    assert_eq!(it.key(), ik(k, 0, ValueKind::Delete));
    it.next();
    assert!(!it.valid());
    // Targets on the neighbouring keys clamp to the range or find nothing.
    it.seek(&ik(b"j", 0, ValueKind::Delete));
    assert_eq!(it.key(), ik(k, MAX_SEQUENCE, ValueKind::RangeDelete));
    it.prev();
    assert!(!it.valid());
    it.seek_for_prev(&ik(b"k\0", MAX_SEQUENCE, ValueKind::RangeDelete));
    assert_eq!(it.key(), ik(k, 0, ValueKind::Delete));
    it.seek(&ik(b"k\0", MAX_SEQUENCE, ValueKind::RangeDelete));
    assert!(!it.valid());
    it.seek_for_prev(&ik(b"j\xff\xff", 0, ValueKind::Delete));
    assert!(!it.valid());
    assert!(it.status().is_ok());
}

fn ten_keys() -> Entries {
    sorted(
        (0..10u8)
            .map(|i| ik(&[b'a', i], 1, ValueKind::Put))
            .collect(),
    )
}

#[test]
fn inner_error_is_sticky_and_invalidates() {
    // Three good moves, then the inner iterator fails in the middle of the range.
    let inner = FailingIter::new(ten_keys(), 3);
    let mut it = ClippedIterator::new(inner, b"a\x02", b"a\x08");
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push(it.value().to_vec());
        it.next();
    }
    assert_eq!(seen, [b"v2", b"v3", b"v4"]);
    let err = it.status().expect_err("error must surface");
    assert!(err.is_corruption());
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    assert!(it.status().is_err(), "error is sticky");
}

#[test]
fn error_on_seek_surfaces_immediately() {
    let seeks: [fn(&mut dyn InternalIterator); 4] = [
        |it| it.seek_to_first(),
        |it| it.seek_to_last(),
        |it| it.seek(&ik(b"a\x05", 1, ValueKind::Put)),
        |it| it.seek_for_prev(&ik(b"a\x05", 1, ValueKind::Put)),
    ];
    for seek in seeks {
        let mut it = ClippedIterator::new(FailingIter::new(ten_keys(), 0), b"a\x02", b"a\x08");
        seek(&mut it);
        assert!(!it.valid());
        assert!(it.status().is_err());
    }
}

#[test]
fn seeks_past_the_range_read_nothing() {
    // The inner iterator fails on its first move: these seeks must not make one.
    let mut it = ClippedIterator::new(FailingIter::new(ten_keys(), 0), b"a\x02", b"a\x08");
    it.seek(&ik(b"a\x08\x00", MAX_SEQUENCE, ValueKind::RangeDelete));
    assert!(!it.valid());
    it.seek_for_prev(&ik(b"a\x01", 0, ValueKind::Delete));
    assert!(!it.valid());
    assert!(it.status().is_ok(), "the inner iterator was not moved");
}

#[test]
fn short_keys_count_as_the_empty_user_key() {
    // Internal order: ("", 3, Put) < "xy" (user key "", trailer 0) < ("a", 1, Put).
    let entries = sorted(vec![
        ik(b"", 3, ValueKind::Put),
        b"xy".to_vec(),
        ik(b"a", 1, ValueKind::Put),
    ]);
    assert_eq!(entries[1].0, b"xy");
    let (fwd, _) = scans(&mut clipped(&entries, b"", b""));
    assert_eq!(keys(&fwd), [ik(b"", 3, ValueKind::Put), b"xy".to_vec()]);
    let mut it = clipped(&entries, b"a", b"a");
    let (fwd, back) = scans(&mut it);
    assert_eq!(keys(&fwd), [ik(b"a", 1, ValueKind::Put)]);
    assert_eq!(fwd, back);
    // A short target is below "a": seek clamps to the first entry, seek_for_prev finds none.
    it.seek(b"zz");
    assert_eq!(it.key(), ik(b"a", 1, ValueKind::Put));
    it.seek_for_prev(b"zz");
    assert!(!it.valid());
}

#[test]
fn an_exclusive_end_holds_no_version_of_its_key() {
    let entries = sorted(
        [
            versions(b"a", &[1]),
            versions(b"b", &[0, 4, MAX_SEQUENCE]),
            versions(b"c", &[2]),
        ]
        .concat(),
    );
    let inner = || FailingIter::new(entries.clone(), usize::MAX);
    let mut it = ClippedIterator::with_upper(inner(), b"", Upper::Excluded(b"b"));
    let (fwd, back) = scans(&mut it);
    assert_eq!(keys(&fwd), versions(b"a", &[1]));
    assert_eq!(fwd, back);
    it.seek(&ik(b"b", MAX_SEQUENCE, ValueKind::RangeDelete));
    assert!(!it.valid(), "the end's own entries are outside");
    it.seek_for_prev(&ik(b"c", 2, ValueKind::Put));
    assert_eq!(it.key(), ik(b"a", 1, ValueKind::Put));
    let mut it = ClippedIterator::with_upper(inner(), b"b", Upper::Unbounded);
    let (fwd, back) = scans(&mut it);
    assert_eq!(keys(&fwd), keys(&entries[1..].to_vec()));
    assert_eq!(fwd, back);
}
