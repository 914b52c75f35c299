//! Fragments against a naive model: every query answered by scanning all tombstones.

use super::*;
use proptest::prelude::*;

use RangeTombstone as R;

fn t(start: &str, end: &str, seq: u64) -> RangeTombstone {
    R::of(start, end, seq)
}

#[test]
fn overlapping_tombstones_fragment_at_every_boundary() {
    let f = Fragments::new(&[t("a", "m", 5), t("f", "z", 9), t("q", "r", 2)]);
    let got: Vec<(String, String, Vec<u64>)> = f
        .fragments()
        .iter()
        .map(|f| {
            (
                String::from_utf8(f.start.clone()).unwrap(),
                String::from_utf8(f.end.clone()).unwrap(),
                f.seqs.clone(),
            )
        })
        .collect();
    let s = |a: &str, b: &str, v: &[u64]| (a.to_string(), b.to_string(), v.to_vec());
    assert_eq!(
        got,
        vec![
            s("a", "f", &[5]),
            s("f", "m", &[9, 5]),
            s("m", "q", &[9]),
            s("q", "r", &[9, 2]),
            s("r", "z", &[9]),
        ]
    );
    assert_eq!(f.max_covering(b"g", 100), 9);
    assert_eq!(f.max_covering(b"g", 8), 5);
    assert_eq!(f.max_covering(b"g", 4), 0);
    assert_eq!(f.max_covering(b"z", 100), 0, "end is exclusive");
    assert_eq!(f.max_covering(b"a", 100), 5, "start is inclusive");
    assert!(f.covers_within(b"g", 4, Some(5)));
    assert!(!f.covers_within(b"g", 5, Some(8)));
    assert!(f.covers_within(b"g", 5, None));
    assert_eq!(f.len(), 7);
    assert!(Fragments::new(&[t("b", "b", 3), t("c", "a", 4)]).is_empty());
}

fn model_max(ts: &[RangeTombstone], key: &[u8], read: u64) -> u64 {
    ts.iter()
        .filter(|t| t.start.as_slice() <= key && key < t.end.as_slice() && t.seq <= read)
        .map(|t| t.seq)
        .max()
        .unwrap_or(0)
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(b'a'..=b'e', 0..3)
}

proptest! {
    #[test]
    fn fragments_answer_as_the_tombstones_do(
        raw in proptest::collection::vec((key(), key(), 1u64..40), 0..12),
        probes in proptest::collection::vec((key(), 0u64..45, proptest::option::of(0u64..45)), 1..30),
    ) {
        // Unique sequence numbers, as the engine assigns them.
        let ts: Vec<RangeTombstone> = raw
            .into_iter()
            .enumerate()
            .map(|(i, (a, b, s))| RangeTombstone { start: a, end: b, seq: s * 16 + i as u64 })
            .collect();
        let f = Fragments::new(&ts);
        for w in f.fragments().windows(2) {
            prop_assert!(w[0].end <= w[1].start, "disjoint and sorted");
        }
        for fr in f.fragments() {
            prop_assert!(fr.start < fr.end);
            prop_assert!(fr.seqs.windows(2).all(|w| w[0] > w[1]));
        }
        for (k, read, upper) in probes {
            let read = read * 16;
            prop_assert_eq!(f.max_covering(&k, read), model_max(&ts, &k, read));
            let upper = upper.map(|u| u * 16);
            let want = ts.iter().any(|t| {
                t.start.as_slice() <= k.as_slice() && k.as_slice() < t.end.as_slice()
                    && t.seq > read && upper.is_none_or(|u| t.seq <= u)
            });
            prop_assert_eq!(f.covers_within(&k, read, upper), want);
        }
        // `end_within` agrees with clipping.
        for (lo, hi) in [(None, b"c".as_slice()), (Some(b"b".as_slice()), b"dd".as_slice())] {
            let clipped = f.clip(lo, Some(hi));
            let want = clipped.fragments().last().map(|fr| fr.end.clone());
            prop_assert_eq!(f.end_within(lo, hi).map(<[u8]>::to_vec), want);
        }
        // Re-fragmenting the stored tombstones changes nothing.
        let again = Fragments::new(&f.tombstones().collect::<Vec<_>>());
        prop_assert_eq!(again, f);
    }
}

#[test]
fn clipping_keeps_the_part_inside() {
    let f = Fragments::new(&[t("b", "m", 5), t("f", "z", 9)]);
    let c = f.clip(Some(b"d"), Some(b"g"));
    assert_eq!(
        c.tombstones().collect::<Vec<_>>(),
        vec![t("d", "f", 5), t("f", "g", 9), t("f", "g", 5)]
    );
    assert!(f.clip(Some(b"z"), None).is_empty());
    assert!(f.clip(None, Some(b"b")).is_empty());
    assert_eq!(f.clip(None, None), f);
    // Adjacent pieces left with the same sequence numbers are not re-merged: the
    // same coverage, in two fragments.
    let newest = f.retain_seqs(|_, s| s == 9);
    assert_eq!(
        newest.tombstones().collect::<Vec<_>>(),
        vec![t("f", "m", 9), t("m", "z", 9)]
    );
}

/// The model of `covers_range`: sweeps the union of the qualifying tombstones from
/// `lo`, jumping to the farthest end of any tombstone that contains the sweep point.
fn model_covers_range(ts: &[RangeTombstone], lo: &[u8], hi: &[u8], incl: bool, min: u64) -> bool {
    if hi < lo || (hi == lo && !incl) {
        return false;
    }
    let mut at = lo.to_vec();
    loop {
        let past = if incl {
            at.as_slice() > hi
        } else {
            at.as_slice() >= hi
        };
        if past {
            return true;
        }
        let next = ts
            .iter()
            .filter(|t| t.seq > min && t.start <= at && at < t.end)
            .map(|t| t.end.clone())
            .max();
        match next {
            Some(end) => at = end,
            None => return false,
        }
    }
}

proptest! {
    #[test]
    fn covers_range_agrees_with_the_union_of_qualifying_tombstones(
        raw in proptest::collection::vec((key(), key(), 1u64..40), 0..12),
        probes in proptest::collection::vec((key(), key(), any::<bool>(), 0u64..45), 1..30),
    ) {
        let ts: Vec<RangeTombstone> = raw
            .into_iter()
            .enumerate()
            .map(|(i, (a, b, s))| RangeTombstone { start: a, end: b, seq: s * 16 + i as u64 })
            .collect();
        let f = Fragments::new(&ts);
        for (lo, hi, incl, min) in probes {
            let min = min * 16;
            prop_assert_eq!(
                f.covers_range(&lo, &hi, incl, |s| s > min),
                model_covers_range(&ts, &lo, &hi, incl, min),
                "lo={:?} hi={:?} incl={} min={}", lo, hi, incl, min
            );
        }
    }
}

#[test]
fn covers_range_needs_touching_qualifying_fragments() {
    // Adjacent tombstones of different sequence numbers cover their union.
    let f = Fragments::new(&[t("a", "c", 5), t("c", "f", 9), t("g", "k", 9)]);
    let any = |_| true;
    assert!(f.covers_range(b"a", b"e", true, any));
    assert!(
        f.covers_range(b"b", b"f", false, any),
        "[b, f) ends where [c, f) ends"
    );
    assert!(
        !f.covers_range(b"b", b"f", true, any),
        "f itself is not covered"
    );
    assert!(!f.covers_range(b"b", b"h", true, any), "gap [f, g)");
    assert!(
        !f.covers_range(b"a", b"e", true, |s| s > 5),
        "[a, c) is too old"
    );
    assert!(f.covers_range(b"c", b"e", true, |s| s > 5));
    assert!(
        !f.covers_range(b"e", b"d", true, any),
        "an empty range is not covered"
    );
    assert!(!Fragments::default().covers_range(b"a", b"a", true, any));
}

proptest! {
    /// `punch(k, below)` changes what covers `k` only, and there only drops the
    /// tombstones older than `below`; the result keeps the module's invariants.
    #[test]
    fn punch_takes_one_key_out_of_the_older_tombstones(
        raw in proptest::collection::vec((key(), key(), 1u64..40), 0..12),
        hole in key(),
        below in 0u64..700,
        probes in proptest::collection::vec((key(), 0u64..700), 1..30),
    ) {
        let ts: Vec<RangeTombstone> = raw
            .into_iter()
            .enumerate()
            .map(|(i, (a, b, s))| RangeTombstone { start: a, end: b, seq: s * 16 + i as u64 })
            .collect();
        let f = Fragments::new(&ts).punch(&hole, below);
        for w in f.fragments().windows(2) {
            prop_assert!(w[0].end <= w[1].start, "{:?}", f);
        }
        for fr in f.fragments() {
            prop_assert!(fr.start < fr.end && !fr.seqs.is_empty(), "{:?}", f);
            prop_assert!(fr.seqs.windows(2).all(|s| s[0] > s[1]), "{:?}", f);
        }
        let mut probes = probes;
        probes.push((hole.clone(), 699));
        probes.push(([hole.as_slice(), &[0]].concat(), 699));
        for (k, read) in probes {
            let kept: Vec<RangeTombstone> = ts
                .iter()
                .filter(|t| k != hole || t.seq >= below)
                .cloned()
                .collect();
            prop_assert_eq!(f.max_covering(&k, read), model_max(&kept, &k, read), "k={:?}", k);
        }
    }
}

#[test]
fn punch_splits_the_fragment_around_the_key() {
    let f = Fragments::new(&[t("a", "m", 5), t("c", "z", 9)]).punch(b"d", 9);
    let spans: Vec<(Vec<u8>, Vec<u8>, Vec<u64>)> = f
        .fragments()
        .iter()
        .map(|f| (f.start.clone(), f.end.clone(), f.seqs.clone()))
        .collect();
    let s = |a: &[u8], b: &[u8], v: &[u64]| (a.to_vec(), b.to_vec(), v.to_vec());
    assert_eq!(
        spans,
        vec![
            s(b"a", b"c", &[5]),
            s(b"c", b"d", &[9, 5]),
            s(b"d", b"d\0", &[9]),
            s(b"d\0", b"m", &[9, 5]),
            s(b"m", b"z", &[9]),
        ]
    );
    let untouched = Fragments::new(&[t("a", "m", 5)]);
    assert_eq!(
        untouched.punch(b"d", 5),
        untouched,
        "no tombstone older than 5"
    );
    assert_eq!(untouched.punch(b"n", 9), untouched, "n is not covered");
}
