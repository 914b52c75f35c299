use super::*;
use crate::coding::fixture_hex::hex;
use crate::env::{FileSystem, PosixFs};

fn write(path: &std::path::Path, records: &[Vec<u8>]) {
    let fs = PosixFs;
    let mut w = LogWriter::new(fs.create(path).expect("create"));
    for r in records {
        w.add_record(r).expect("append");
    }
    w.sync().expect("sync");
}

fn read_all(path: &std::path::Path) -> (Vec<Vec<u8>>, Option<LogError>) {
    let fs = PosixFs;
    let mut r = LogReader::new(fs.open_sequential(path).expect("open"));
    let mut out = Vec::new();
    let mut buf = Vec::new();
    loop {
        match r.read_record(&mut buf) {
            Ok(Some(_)) => out.push(buf.clone()),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

fn records() -> Vec<Vec<u8>> {
    (0..200usize)
        .map(|i| vec![(i % 251) as u8; (i * 997) % 70_000])
        .collect()
}

#[test]
fn round_trip_across_blocks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("1.log");
    let recs = records();
    write(&p, &recs);
    let (got, err) = read_all(&p);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got, recs);
}

#[test]
fn every_truncation_yields_a_prefix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("1.log");
    let recs: Vec<Vec<u8>> = (0..20usize).map(|i| vec![i as u8; i * 3000]).collect();
    write(&p, &recs);
    let full = std::fs::read(&p).expect("read");
    for cut in (0..full.len()).step_by(777) {
        std::fs::write(&p, &full[..cut]).expect("write");
        let (got, err) = read_all(&p);
        assert!(recs.starts_with(&got), "cut {cut}: not a prefix");
        if let Some(e) = err {
            assert!(matches!(e, LogError::Truncated { .. }), "cut {cut}: {e:?}");
        }
    }
}

#[test]
fn flipped_byte_is_detected_not_returned() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("1.log");
    let recs = records();
    write(&p, &recs);
    let full = std::fs::read(&p).expect("read");
    for pos in (0..full.len()).step_by(40_009) {
        let mut bad = full.clone();
        bad[pos] ^= 0x40;
        std::fs::write(&p, &bad).expect("write");
        let (got, err) = read_all(&p);
        assert!(err.is_some(), "flip at {pos} not detected");
        assert!(recs.starts_with(&got), "flip at {pos}: wrong records");
    }
}

/// Format version 1 bytes of a log holding the records `hello` and `` (empty): for
/// each, masked CRC32C of type byte + payload (LE), length (LE u16), type 1 = FULL,
/// payload. Frozen: never edit; a format change adds a new fixture.
const LOG_FIXTURE_V1: &str = "0bb9575805000168656c6c6f052b2843000001";

#[test]
fn frozen_log_fixture_v1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("fixture.log");
    write(&p, &[b"hello".to_vec(), Vec::new()]);
    let bytes = std::fs::read(&p).expect("read");
    assert_eq!(hex(&bytes), LOG_FIXTURE_V1, "log encoding changed");
    // And the frozen bytes, not just what this build wrote, read back.
    let frozen: Vec<u8> = (0..LOG_FIXTURE_V1.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&LOG_FIXTURE_V1[i..i + 2], 16).expect("hex"))
        .collect();
    std::fs::write(&p, frozen).expect("write");
    let (got, err) = read_all(&p);
    assert!(err.is_none());
    assert_eq!(got, vec![b"hello".to_vec(), Vec::new()]);
}

/// A follower (`read_written` + `resume`) of a log that grows cut by cut, at every
/// 777th byte (mid-header, mid-fragment, across blocks, at padding): each cut reads a
/// prefix of whole records without an error, and resuming where the last whole record
/// ended reads every record exactly once, in order.
#[test]
fn a_follower_of_a_growing_log_reads_each_whole_record_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("1.log");
    let recs: Vec<Vec<u8>> = (0..20usize).map(|i| vec![i as u8; i * 3000 + 1]).collect();
    write(&p, &recs);
    let full = std::fs::read(&p).expect("read");
    let mut got: Vec<Vec<u8>> = Vec::new();
    let mut at = 0u64;
    let cuts = (0..full.len()).step_by(777).chain([full.len()]);
    for cut in cuts {
        std::fs::write(&p, &full[..cut]).expect("write");
        let file = PosixFs.open_sequential(&p).expect("open");
        let mut r = LogReader::resume(file, at).expect("resume");
        let mut buf = Vec::new();
        while r
            .read_written(&mut buf, &p)
            .expect("no error at a cut")
            .is_some()
        {
            got.push(buf.clone());
            at = r.position();
        }
        assert!(recs.starts_with(&got), "cut {cut}: not a prefix");
    }
    assert_eq!(got, recs);
}

/// A whole record that fails its checksum is corruption for a follower, naming the
/// file and the offset, even though more records follow.
#[test]
fn a_follower_reports_a_damaged_whole_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("1.log");
    write(&p, &[vec![1; 100], vec![2; 100], vec![3; 100]]);
    let mut bytes = std::fs::read(&p).expect("read");
    bytes[HEADER_SIZE + 100 + HEADER_SIZE + 5] ^= 0xff;
    std::fs::write(&p, &bytes).expect("write");
    let mut r = LogReader::new(PosixFs.open_sequential(&p).expect("open"));
    let mut buf = Vec::new();
    assert!(r.read_written(&mut buf, &p).expect("first").is_some());
    let e = r.read_written(&mut buf, &p).expect_err("damaged");
    assert_eq!(e.kind(), crate::ErrorKind::Corruption, "{e}");
    assert!(
        e.to_string().contains("1.log") && e.to_string().contains("107"),
        "{e}"
    );
}
