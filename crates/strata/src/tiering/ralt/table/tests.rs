//! RALT tables: the frozen v1 fixture, the index's prefix sums, and damaged files.

use super::*;
use crate::env::{FaultFs, FileSystem};
use std::path::Path;

fn record(hot_size: u32, tick: u32) -> Record {
    Record {
        hot_size,
        tick,
        score: 1.5,
        c: 2.6,
        period: 1,
        tag: u8::from(tick.is_multiple_of(2)),
    }
}

/// Writes a table of `n` keys `k000..` with 300-byte blocks; every third key hot.
fn write(fs: &FaultFs, path: &Path, n: u32) -> TableSummary {
    let io = Arc::new(RaltIo::default());
    let mut w = TableWriter::new(fs.create(path).expect("create"), io, 300, 20);
    for i in 0..n {
        let k = format!("k{i:03}");
        w.add(k.as_bytes(), &record(100 + i, i), i % 3 == 0)
            .expect("add");
    }
    w.finish().expect("finish")
}

fn open(fs: &FaultFs, path: &Path) -> Result<RaltTable> {
    RaltTable::open(
        7,
        path,
        fs.open_random(path).expect("open"),
        Arc::new(RaltIo::default()),
    )
}

#[test]
fn frozen_fixture_v1_reads_back_and_is_written_identically() {
    let fs = FaultFs::new();
    let path = Path::new("/t.ralt");
    let summary = write(&fs, path, 40);
    let written = crate::env::read_to_vec(&fs, path).expect("read");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tiering/ralt/fixtures/ralt-table-v1");
    if std::env::var_os("STRATA_REGEN_FIXTURES").is_some() {
        std::fs::write(&fixture, &written).expect("write fixture");
    }
    let frozen = std::fs::read(&fixture).expect("fixture present");
    assert_eq!(written, frozen, "the RALT table encoding changed");
    let t = open(&fs, path).expect("open");
    assert_eq!(
        (t.records, t.hot_bytes, t.size),
        (40, summary.hot_bytes, summary.size)
    );
    let hot: u64 = (0..40u64)
        .filter(|i| i.is_multiple_of(3))
        .map(|i| 100 + i)
        .sum();
    assert_eq!(t.hot_bytes, hot);
    assert_eq!(t.record_bytes, (0..40u64).map(|i| 100 + i).sum::<u64>());
    assert_eq!((t.first_key(), t.last_key()), (&b"k000"[..], &b"k039"[..]));
    // Every record reads back in order.
    let mut scan = TableScan::new(Arc::new(t), b"").expect("scan");
    for i in 0..40u32 {
        let (k, r) = scan.peek().cloned().expect("record");
        assert_eq!(k, format!("k{i:03}").into_bytes());
        assert_eq!(r, record(100 + i, i));
        scan.advance().expect("advance");
    }
    assert!(scan.peek().is_none());
}

#[test]
fn filters_and_range_sums_come_from_memory() {
    let fs = FaultFs::new();
    let path = Path::new("/t.ralt");
    write(&fs, path, 40);
    let t = open(&fs, path).expect("open");
    for i in 0..40u32 {
        let k = format!("k{i:03}");
        if i.is_multiple_of(3) {
            assert!(t.may_be_hot(k.as_bytes()), "{k}: no false negatives");
        }
    }
    let total = t.hot_bytes;
    assert_eq!(t.range_hot(b"k000", b"k039"), (total, 14));
    assert_eq!(t.range_hot(b"a", b"z"), (total, 14));
    assert_eq!(t.range_hot(b"l", b"z"), (0, 0));
    // Any range's estimate covers its true hot bytes and stays within the table's.
    for lo in 0..40u32 {
        for hi in lo..40u32 {
            let truth: u64 = (lo..=hi)
                .filter(|i| i.is_multiple_of(3))
                .map(|i| u64::from(100 + i))
                .sum();
            let (est, records) = t.range_hot(
                format!("k{lo:03}").as_bytes(),
                format!("k{hi:03}").as_bytes(),
            );
            let true_records = (lo..=hi).filter(|i| i.is_multiple_of(3)).count() as u64;
            assert!(
                truth <= est && est <= total,
                "[{lo}, {hi}]: {truth} <= {est}"
            );
            assert!(true_records <= records && records <= 14, "[{lo}, {hi}]");
        }
    }
    // A scan from the middle starts at its lower bound.
    let mut scan = TableScan::new(Arc::new(t), b"k017").expect("scan");
    assert_eq!(scan.peek().map(|(k, _)| k.clone()), Some(b"k017".to_vec()));
    scan.advance().expect("advance");
    assert_eq!(scan.peek().map(|(k, _)| k.clone()), Some(b"k018".to_vec()));
}

/// Every single-byte change of the file is an error (named corruption or a refused
/// block) or leaves a table that reads back the same records; never a panic.
#[test]
fn damaged_tables_are_corruption_never_a_panic() {
    let fs = FaultFs::new();
    let path = Path::new("/t.ralt");
    write(&fs, path, 12);
    let good = crate::env::read_to_vec(&fs, path).expect("read");
    let damaged = Path::new("/d.ralt");
    for at in 0..good.len() {
        let mut bytes = good.clone();
        bytes[at] ^= 0x41;
        crate::env::write_file_atomic(&fs, Path::new("/"), "d.ralt", &bytes).expect("write");
        let read = open(&fs, damaged).and_then(|t| {
            let mut scan = TableScan::new(Arc::new(t), b"")?;
            let mut n = 0;
            while scan.peek().is_some() {
                n += 1;
                scan.advance()?;
            }
            Ok(n)
        });
        match read {
            Ok(n) => assert_eq!(n, 12, "byte {at}: a changed table read other records"),
            Err(e) => assert_eq!(e.kind(), crate::ErrorKind::Corruption, "byte {at}: {e}"),
        }
    }
    let short = &good[..good.len() - 1];
    crate::env::write_file_atomic(&fs, Path::new("/"), "d.ralt", short).expect("write");
    let err = open(&fs, damaged).expect_err("truncated");
    assert!(err.to_string().contains("d.ralt"), "{err}");
}

#[test]
fn keys_out_of_order_are_refused() {
    let fs = FaultFs::new();
    let io = Arc::new(RaltIo::default());
    let mut w = TableWriter::new(fs.create(Path::new("/x")).expect("create"), io, 300, 20);
    w.add(b"b", &record(1, 0), false).expect("add");
    let err = w.add(b"a", &record(1, 0), false).expect_err("order");
    assert_eq!(err.kind(), crate::ErrorKind::Internal);
}
