//! The frozen format-version-1 fixture: `src/sst/fixtures/sst_v1.sst`.
//!
//! Protects the on-disk format: the current reader must read the committed bytes
//! exactly, and the current builder must still produce them byte for byte. If the
//! second check fails, the format changed: bump `FORMAT_VERSION` and add a new fixture
//! instead of regenerating this one. Regenerate only a brand-new fixture with
//! `STRATA_REGEN_FIXTURES=1 cargo test -p strata --lib fixture`.

use super::*;
use crate::iter::InternalIterator;
use crate::key::KIND_SEEK;

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sst/fixtures/sst_v1.sst")
}

fn fixture_entries() -> Entries {
    (0..100u32)
        .map(|i| {
            let kind = if i % 10 == 3 {
                ValueKind::Delete
            } else {
                ValueKind::Put
            };
            let k = ikey(
                format!("fixture-key-{i:04}").as_bytes(),
                u64::from(i) + 1,
                kind,
            );
            let v = if kind == ValueKind::Delete {
                Vec::new()
            } else {
                format!("value-{i}-")
                    .repeat((i % 5) as usize + 1)
                    .into_bytes()
            };
            (k, v)
        })
        .collect()
}

fn fixture_opts() -> TableOptions {
    TableOptions {
        block_size: 256,
        block_restart_interval: 4,
        bloom_bits_per_key: 10,
        compression: Compression::None,
        column_group: 2,
    }
}

#[test]
fn frozen_fixture_v1_reads_exactly_and_builds_identically() {
    let entries = fixture_entries();
    let (built, _) = build(&entries, &fixture_opts());
    if std::env::var_os("STRATA_REGEN_FIXTURES").is_some() {
        std::fs::write(fixture_path(), &built).expect("write fixture");
    }
    let frozen = std::fs::read(fixture_path()).expect("fixture present");
    let t = open(frozen.clone(), None, Arc::default(), true).expect("open fixture");
    let p = t.properties();
    assert_eq!(p.format_version, 1);
    assert_eq!((p.num_entries, p.num_deletions), (100, 10));
    assert_eq!(
        (p.smallest_seqno, p.largest_seqno, p.column_group),
        (1, 100, 2)
    );
    assert_eq!(p.smallest_key, entries[0].0);
    assert_eq!(p.largest_key, entries[99].0);
    assert_eq!(p.file_size, frozen.len() as u64);
    let mut it = t.iter();
    it.seek_to_first();
    for (k, v) in &entries {
        assert!(it.valid());
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
        let lookup = ikey(crate::key::user_key(k), 1000, KIND_SEEK);
        let got = t
            .get(&lookup, |gk, gv| (gk.to_vec(), gv.to_vec()))
            .expect("get");
        assert_eq!(got, Some((k.clone(), v.clone())));
        it.next();
    }
    assert!(!it.valid() && it.status().is_ok());
    assert!(
        built == frozen,
        "builder output differs from the frozen v1 fixture"
    );
}

fn v2_fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sst/fixtures/sst_v2_range_dels.sst")
}

/// The frozen format-version-2 fixture: the v1 fixture's first 20 entries plus
/// overlapping range tombstones, one reaching past the last entry and one before the
/// first. Reads exactly, builds identically, and its bounds cover the tombstones.
#[test]
fn frozen_fixture_v2_range_dels_reads_exactly_and_builds_identically() {
    use crate::range_del::{Fragments, RangeTombstone};
    let entries: Entries = fixture_entries().into_iter().take(20).collect();
    let t = RangeTombstone::of;
    let tombstones = [
        t("fixture-key-0005", "fixture-key-0012", 50),
        t("fixture-key-0010", "fixture-key-9999", 60),
        t("a", "fixture-key-0001", 3),
    ];
    let frags = Fragments::new(&tombstones);
    let (built, _) = build_with_range_dels(&entries, &fixture_opts(), frags.clone());
    if std::env::var_os("STRATA_REGEN_FIXTURES").is_some() {
        std::fs::write(v2_fixture_path(), &built).expect("write fixture");
    }
    let frozen = std::fs::read(v2_fixture_path()).expect("fixture present");
    let table = open(frozen.clone(), None, Arc::default(), true).expect("open fixture");
    let p = table.properties();
    assert_eq!(p.format_version, 2);
    assert_eq!(p.num_entries, 20);
    assert_eq!(p.num_range_deletions, frags.len() as u64);
    assert_eq!((p.smallest_seqno, p.largest_seqno), (1, 60));
    assert_eq!(p.smallest_key, ikey(b"a", 3, ValueKind::RangeDelete));
    assert_eq!(
        p.largest_key,
        ikey(
            b"fixture-key-9999",
            crate::key::MAX_SEQUENCE,
            ValueKind::RangeDelete
        )
    );
    assert_eq!(table.range_dels(), Some(&frags));
    assert_eq!(
        table
            .range_dels()
            .map(|f| f.max_covering(b"fixture-key-0011", 100)),
        Some(60)
    );
    let mut it = table.iter();
    it.seek_to_first();
    for (k, v) in &entries {
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
        it.next();
    }
    assert!(!it.valid() && it.status().is_ok());
    assert!(
        built == frozen,
        "builder output differs from the frozen v2 fixture"
    );
    // A v1 table is still written as v1: without tombstones nothing changed.
    let (v1, props) = build(&entries, &fixture_opts());
    assert_eq!(props.format_version, 1);
    assert!(open(v1, None, Arc::default(), true)
        .expect("v1")
        .range_dels()
        .is_none());
}
