//! The retention router against its rules, key by key: the range, the first key, the
//! record kind, the keep rule, the room and the retained count.

use super::*;

fn range(lo: &[u8], end: &[u8]) -> KeyRange {
    KeyRange {
        start: Some(lo.to_vec()),
        end: Some(end.to_vec()),
    }
}

fn put(user_key: &[u8], seq: SequenceNumber) -> ParsedKey<'_> {
    ParsedKey {
        user_key,
        seq,
        kind: ValueKind::Put,
    }
}

/// Time-aware tiering's rule: above the sequence number goes fast, at or below it
/// slow; the first key of the range always slow; tombstones slow.
#[test]
fn written_after_keeps_newer_values_past_the_first_key() {
    let retained = Arc::new(AtomicU64::new(0));
    let r = RetentionRouter::new(
        Keep::WrittenAfter(100),
        range(b"b", b"y"),
        (1 << 20, 0),
        Arc::clone(&retained),
    );
    assert_eq!(r.route(&put(b"a", 500), b"v"), SLOW, "outside the range");
    assert_eq!(r.route(&put(b"b", 500), b"v"), SLOW, "the first key");
    assert_eq!(r.route(&put(b"c", 101), b"vv"), FAST);
    assert_eq!(r.route(&put(b"d", 100), b"v"), SLOW, "not newer");
    let tomb = ParsedKey {
        user_key: b"e",
        seq: 600,
        kind: ValueKind::Delete,
    };
    assert_eq!(r.route(&tomb, b""), SLOW, "tombstones go down");
    let merge = ParsedKey {
        user_key: b"f",
        seq: 600,
        kind: ValueKind::Merge,
    };
    assert_eq!(r.route(&merge, b"op"), FAST);
    assert_eq!(r.route(&put(b"z", 900), b"v"), SLOW, "past the range");
    // "c" + "vv" and "f" + "op".
    assert_eq!(retained.load(Ordering::Relaxed), 3 + 3);
}

/// The room: a key is charged its record plus the trailer, at least `min_charge`;
/// once the room is spent, wanted keys go down.
#[test]
fn the_room_bounds_what_goes_back() {
    let retained = Arc::new(AtomicU64::new(0));
    // Room for two keys charged 20 each (min_charge 20 > 1 + 1 + 8).
    let r = RetentionRouter::new(
        Keep::WrittenAfter(0),
        range(b"a", b"z"),
        (45, 20),
        Arc::clone(&retained),
    );
    let routes: Vec<usize> = [b"a", b"b", b"c", b"d"]
        .iter()
        .map(|k| r.route(&put(*k, 1), b"v"))
        .collect();
    assert_eq!(routes, [SLOW, FAST, FAST, SLOW]);
    assert_eq!(retained.load(Ordering::Relaxed), 4);
}

/// HotRAP's rule with retention off and no RALT: only promoted keys go back, and they
/// are not counted as retained.
#[test]
fn promoted_keys_go_back_without_counting_as_retained() {
    let retained = Arc::new(AtomicU64::new(0));
    let r = RetentionRouter::new(
        Keep::Hot {
            ralt: None,
            promoted: [b"c".to_vec()].into_iter().collect(),
        },
        range(b"a", b"z"),
        (1 << 20, 0),
        Arc::clone(&retained),
    );
    assert_eq!(r.route(&put(b"a", 1), b"v"), SLOW);
    assert_eq!(r.route(&put(b"b", 1), b"v"), SLOW);
    assert_eq!(r.route(&put(b"c", 1), b"v"), FAST);
    assert_eq!(retained.load(Ordering::Relaxed), 0);
}
