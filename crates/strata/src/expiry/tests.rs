use super::*;
use crate::coding::fixture_hex::hex;
use proptest::prelude::*;

fn stored(value: &[u8], deadline: u64) -> Vec<u8> {
    let mut out = Vec::new();
    encode(value, deadline, &mut out);
    out
}

/// The layout, byte for byte (format version 1): the caller's value, then the
/// deadline as a little-endian u64. Frozen: a change here misreads every value
/// written before it.
#[test]
fn frozen_layout() {
    assert_eq!(
        hex(&stored(b"abc", 0x0102_0304_0506_0708)),
        "6162630807060504030201"
    );
    assert_eq!(hex(&stored(b"", 0)), "0000000000000000");
    assert_eq!(split(&stored(b"xy", 7)), Some((&b"xy"[..], 7)));
}

#[test]
fn reads_hide_expired_values_and_strip_the_trailer() {
    let clock = ReadClock { now: 1000 };
    assert_eq!(
        clock.visible(b"k", &stored(b"v", 0)).unwrap(),
        Some(&b"v"[..])
    );
    assert_eq!(
        clock.visible(b"k", &stored(b"v", 1001)).unwrap(),
        Some(&b"v"[..])
    );
    assert_eq!(clock.visible(b"k", &stored(b"v", 1000)).unwrap(), None);
    assert_eq!(clock.visible(b"k", &stored(b"v", 1)).unwrap(), None);
    assert_eq!(
        clock.answer(b"k", Some(stored(b"vv", 5000))).unwrap(),
        Some(b"vv".to_vec())
    );
    assert_eq!(clock.answer(b"k", None).unwrap(), None);
    let e = clock.visible(b"key7", b"short").unwrap_err();
    assert!(e.is_corruption());
    assert!(e.to_string().contains("key7"), "{e}");
}

#[test]
fn deadlines_are_never_zero_and_saturate() {
    assert!(deadline_after(Duration::ZERO) >= 1);
    assert_eq!(deadline_after(Duration::MAX), u64::MAX);
    let soon = deadline_after(Duration::from_secs(60));
    assert!(soon > now_ms() && soon <= now_ms() + 60_000);
}

#[test]
fn stamp_puts_each_deadline_on_its_own_record_and_only_in_expiring_families() {
    let mut b = WriteBatch::new();
    b.add_record(3, ValueKind::Put, b"a", b"1");
    b.put_with_ttl(b"b", b"2", Duration::from_secs(3600));
    b.delete(b"c");
    b.put(b"d", b"4");
    b.add_record(3, ValueKind::RangeDelete, b"e", b"f");
    b.put_with_ttl(b"g", b"7", Duration::ZERO);
    let deadlines = b.deadlines().to_vec();
    assert_eq!(deadlines.iter().map(|d| d.0).collect::<Vec<_>>(), [1, 5]);
    let out = stamp(b, |id| id == 0, |id| id.to_string()).unwrap();
    let mut seen = Vec::new();
    out.iterate_cf(|f, _, kind, k, v| seen.push((f, kind, k.to_vec(), v.to_vec())))
        .unwrap();
    assert_eq!(
        seen,
        vec![
            (3, ValueKind::Put, b"a".to_vec(), b"1".to_vec()),
            (
                0,
                ValueKind::Put,
                b"b".to_vec(),
                stored(b"2", deadlines[0].1)
            ),
            (0, ValueKind::Delete, b"c".to_vec(), Vec::new()),
            (0, ValueKind::Put, b"d".to_vec(), stored(b"4", 0)),
            (3, ValueKind::RangeDelete, b"e".to_vec(), b"f".to_vec()),
            (
                0,
                ValueKind::Put,
                b"g".to_vec(),
                stored(b"7", deadlines[1].1)
            ),
        ]
    );
}

#[test]
fn stamp_refuses_a_deadline_for_a_family_without_the_layout() {
    let mut b = WriteBatch::new();
    b.put(b"a", b"1");
    b.put_with_ttl(b"b", b"2", Duration::from_secs(1));
    let e = stamp(b, |_| false, |_| "plain".into()).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("`plain`"), "{e}");
}

#[test]
fn stamp_holds_the_value_limit_with_the_trailer() {
    let mut b = WriteBatch::new();
    b.put(b"a", &vec![0; crate::MAX_VALUE_LEN]);
    assert!(b.check_limits().is_ok());
    let e = stamp(b, |_| true, |id| id.to_string()).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
}

#[test]
fn appended_batches_keep_their_deadlines_on_their_records() {
    let mut a = WriteBatch::new();
    a.put(b"x", b"1");
    let mut b = WriteBatch::new();
    b.put(b"y", b"2");
    b.put_with_ttl(b"z", b"3", Duration::from_secs(9));
    a.append(&b);
    assert_eq!(a.deadlines().len(), 1);
    assert_eq!(a.deadlines()[0].0, 2);
    a.clear();
    assert!(a.deadlines().is_empty());
}

struct Upper;
impl CompactionFilter for Upper {
    fn filter(&mut self, key: &[u8], value: &[u8]) -> Decision {
        match key {
            b"drop" => Decision::Remove,
            _ => Decision::Change(value.to_ascii_uppercase()),
        }
    }
}
struct UpperFactory;
impl CompactionFilterFactory for UpperFactory {
    fn name(&self) -> &str {
        "upper"
    }
    fn create(&self, _: &FilterContext) -> Option<Box<dyn CompactionFilter>> {
        Some(Box::new(Upper))
    }
}

fn filter_of(opts: Options) -> Box<dyn CompactionFilter> {
    let ctx = FilterContext {
        level: 1,
        manual: false,
        bottommost: true,
    };
    opts.compaction_filter_factory
        .expect("a filter")
        .create(&ctx)
        .expect("a job filter")
}

#[test]
fn the_filter_removes_expired_values_and_wraps_the_applications() {
    assert!(with_expiry_filter(Options::default())
        .compaction_filter_factory
        .is_none());
    let on = Options::default().with_expiring_values(true);
    let alone = with_expiry_filter(on.clone());
    assert_eq!(
        alone.compaction_filter_factory.as_ref().unwrap().name(),
        EXPIRY
    );
    let mut f = filter_of(alone);
    assert_eq!(f.filter(b"k", &stored(b"v", 1)), Decision::Remove);
    assert_eq!(f.filter(b"k", &stored(b"v", 0)), Decision::Keep);
    assert_eq!(f.filter(b"k", &stored(b"v", u64::MAX)), Decision::Keep);
    assert_eq!(f.filter(b"k", b"short"), Decision::Keep);

    let both = with_expiry_filter(on.with_compaction_filter_factory(Some(Arc::new(UpperFactory))));
    assert_eq!(
        both.compaction_filter_factory.as_ref().unwrap().name(),
        "strata.expiry+upper"
    );
    let mut f = filter_of(both);
    assert_eq!(f.filter(b"k", &stored(b"v", 1)), Decision::Remove);
    assert_eq!(
        f.filter(b"k", &stored(b"ab", u64::MAX)),
        Decision::Change(stored(b"AB", u64::MAX))
    );
    assert_eq!(f.filter(b"drop", &stored(b"ab", 0)), Decision::Remove);
}

proptest! {
    /// Any stored bytes: a read never panics, and a value it returns is the stored
    /// bytes less the trailer.
    #[test]
    fn reads_of_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..40), now: u64) {
        let clock = ReadClock { now };
        match clock.visible(b"k", &bytes) {
            Ok(Some(v)) => prop_assert_eq!(v, &bytes[..bytes.len() - TRAILER_LEN]),
            Ok(None) => prop_assert!(bytes.len() >= TRAILER_LEN),
            Err(_) => prop_assert!(bytes.len() < TRAILER_LEN),
        }
    }
}
