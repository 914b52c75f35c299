//! Tests of MANIFEST creation, appends and recovery, including damaged files.

use super::*;
use crate::env::PosixFs;
use crate::key::{make_internal_key, ValueKind};
use crate::version::{FileKind, FileMetaData};

fn fs() -> Arc<dyn FileSystem> {
    Arc::new(PosixFs)
}

fn meta(number: u64, lo: &str, hi: &str) -> FileMetaData {
    FileMetaData {
        number,
        path_id: 0,
        size: 1000 + number,
        smallest: make_internal_key(lo.as_bytes(), 9, ValueKind::Put),
        largest: make_internal_key(hi.as_bytes(), 1, ValueKind::Delete),
        smallest_seqno: 1,
        largest_seqno: 9,
        num_entries: 5,
        num_deletions: 1,
        column_group: 0,
        kind: FileKind::Real,
        num_range_deletions: 0,
        creation_time: 0,
    }
}

fn snapshot() -> VersionEdit {
    VersionEdit {
        log_number: Some(3),
        next_file_number: Some(10),
        last_sequence: Some(100),
        deleted_files: vec![],
        new_files: vec![(1, meta(4, "a", "c")), (2, meta(5, "a", "z"))],
        ..Default::default()
    }
}

/// Files padding the flush edit so its record spans several 32 KiB log blocks.
const PAD_FILES: u64 = 1500;

/// Later edits: a flush to L0, then a compaction of L0+L1 into L1. Each is a big
/// record (padded with many files) so the file spans several log blocks.
fn edits() -> Vec<VersionEdit> {
    let mut flush = VersionEdit {
        log_number: Some(12),
        next_file_number: Some(13),
        last_sequence: Some(200),
        ..Default::default()
    };
    flush.new_files.push((0, meta(11, "b", "d")));
    for i in 0..PAD_FILES {
        let k = format!("zz{i:05}");
        flush.new_files.push((3, meta(1000 + i, &k, &k)));
    }
    let compaction = VersionEdit {
        next_file_number: Some(15),
        deleted_files: vec![(0, 11), (1, 4)],
        new_files: vec![(1, meta(14, "a", "d"))],
        ..Default::default()
    };
    vec![flush, compaction]
}

fn expected(upto: usize) -> Version {
    let mut v = Version::new(4).apply(&snapshot()).expect("snapshot");
    for e in edits().iter().take(upto) {
        v = v.apply(e).expect("edit");
    }
    v
}

fn same(a: &Version, b: &Version) {
    for level in 0..a.num_levels().max(b.num_levels()) {
        assert_eq!(a.files(level), b.files(level), "level {level}");
    }
}

/// Writes a manifest with the snapshot and all edits; returns (dir, manifest path,
/// record end offsets).
fn write_all() -> (tempfile::TempDir, PathBuf, Vec<u64>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let fs = fs();
    let mut m = Manifest::create(&fs, dir.path(), 2, &[snapshot()]).expect("create");
    assert_eq!(m.number(), 2);
    let mut ends = vec![m.size()];
    for e in edits() {
        m.append(&e).expect("append");
        ends.push(m.size());
    }
    let path = dir.path().join(filename::manifest_name(2));
    (dir, path, ends)
}

#[test]
fn missing_current_is_none() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(recover(&PosixFs, dir.path(), &|_| 4)
        .expect("recover")
        .is_none());
}

#[test]
fn recover_round_trip() {
    let (dir, _, ends) = write_all();
    assert!(ends.windows(2).all(|w| w[0] < w[1]));
    let current = std::fs::read(dir.path().join(CURRENT)).expect("CURRENT");
    assert_eq!(current, b"MANIFEST-000002\n");
    let r = recover(&PosixFs, dir.path(), &|_| 4)
        .expect("recover")
        .expect("some");
    same(&r.families[0].version, &expected(2));
    r.families[0]
        .version
        .check_invariants()
        .expect("invariants");
    assert_eq!(r.families[0].log_number, 12);
    // next_file_number is raised above the live padding files.
    assert_eq!(r.next_file_number, 1000 + PAD_FILES);
    assert_eq!(r.last_sequence, 200);
    assert_eq!(r.manifest_number, 2);

    // Rolling to a new manifest from the recovered snapshot gives the same state.
    let mut snap = r.families[0].version.to_snapshot_edit();
    snap.log_number = Some(r.families[0].log_number);
    snap.next_file_number = Some(r.next_file_number + 1);
    snap.last_sequence = Some(r.last_sequence);
    Manifest::create(&fs(), dir.path(), r.next_file_number, &[snap]).expect("roll");
    let r2 = recover(&PosixFs, dir.path(), &|_| 4)
        .expect("recover")
        .expect("some");
    same(&r2.families[0].version, &r.families[0].version);
    assert_eq!(r2.manifest_number, 1000 + PAD_FILES);
}

#[test]
fn truncated_last_record_is_tolerated() {
    let (dir, path, ends) = write_all();
    assert!(ends[1] - ends[0] > 2 * crate::wal::BLOCK_SIZE as u64);
    let full = std::fs::read(&path).expect("read");
    // Cut inside the last record: the state is that of the records before it.
    for cut in [
        ends[1] + 1,
        ends[1] + 8,
        (ends[1] + ends[2]) / 2,
        ends[2] - 1,
    ] {
        std::fs::write(&path, &full[..cut as usize]).expect("write");
        let r = recover(&PosixFs, dir.path(), &|_| 4)
            .expect("recover")
            .expect("some");
        same(&r.families[0].version, &expected(1));
    }
    // Cut inside the second record (multi-block): only the snapshot survives.
    for cut in [ends[0] + 3, ends[0] + 40_000, ends[1] - 1] {
        std::fs::write(&path, &full[..cut as usize]).expect("write");
        let r = recover(&PosixFs, dir.path(), &|_| 4)
            .expect("recover")
            .expect("some");
        same(&r.families[0].version, &expected(0));
    }
}

#[test]
fn flipped_byte_is_corruption_unless_in_the_final_record() {
    let (dir, path, ends) = write_all();
    let full = std::fs::read(&path).expect("read");
    let last_start = ends[ends.len() - 2] as usize;
    let n_edits = ends.len() - 1;
    for pos in (0..full.len()).step_by(97) {
        let mut bad = full.clone();
        bad[pos] ^= 0x10;
        std::fs::write(&path, &bad).expect("write");
        match recover(&PosixFs, dir.path(), &|_| 4) {
            Err(e) => {
                assert!(e.is_corruption(), "flip at {pos}: {e}");
                let msg = e.to_string();
                assert!(
                    msg.contains("MANIFEST-000002"),
                    "flip at {pos}: no file: {msg}"
                );
            }
            // Damage with no intact record after it (in a later log block) reads as a
            // torn final append: recovery yields an earlier state, never a mixture. The
            // database then checks that this state's tables and WAL all exist.
            Ok(Some(r)) => {
                assert!(
                    pos >= ends[0] as usize,
                    "flip at {pos} in the snapshot record"
                );
                let prefix = (0..n_edits).find(|&k| {
                    (0..4).all(|l| r.families[0].version.files(l) == expected(k).files(l))
                });
                assert!(prefix.is_some(), "flip at {pos}: not a prefix state");
                if pos >= last_start {
                    same(&r.families[0].version, &expected(n_edits - 1));
                }
            }
            Ok(None) => panic!("flip at {pos}: manifest vanished"),
        }
    }
}

#[test]
fn bad_current_or_missing_manifest_is_corruption() {
    let (dir, path, _) = write_all();
    for content in [
        &b"MANIFEST-000002"[..],
        b"garbage\n",
        b"../MANIFEST-2\n",
        b"",
    ] {
        std::fs::write(dir.path().join(CURRENT), content).expect("write");
        let e = recover(&PosixFs, dir.path(), &|_| 4).expect_err("bad CURRENT");
        assert!(e.is_corruption(), "{e}");
    }
    std::fs::write(dir.path().join(CURRENT), b"MANIFEST-000002\n").expect("write");
    std::fs::remove_file(&path).expect("rm");
    let e = recover(&PosixFs, dir.path(), &|_| 4).expect_err("missing manifest");
    assert!(e.is_corruption(), "{e}");
}

#[test]
fn inconsistent_or_undecodable_edit_is_corruption() {
    let cases: Vec<(VersionEdit, Option<Vec<u8>>)> = vec![
        // Deletes a file that is not live.
        (
            VersionEdit {
                deleted_files: vec![(1, 77)],
                ..Default::default()
            },
            None,
        ),
        // Overlaps file 5 in L2.
        (
            VersionEdit {
                new_files: vec![(2, meta(8, "b", "b"))],
                ..Default::default()
            },
            None,
        ),
        // A checksummed record that is not an edit.
        (VersionEdit::default(), Some(vec![0x7f, 0x01])),
    ];
    for (edit, raw) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut m = Manifest::create(&fs(), dir.path(), 2, &[snapshot()]).expect("create");
        let offset = m.size();
        match raw {
            Some(bytes) => {
                m.writer.add_record(&bytes).expect("raw");
                m.writer.sync().expect("sync");
            }
            None => m.append(&edit).expect("append"),
        }
        let e = recover(&PosixFs, dir.path(), &|_| 4).expect_err("inconsistent");
        assert!(e.is_corruption(), "{e}");
        if let Error::Corruption { offset: o, .. } = e {
            assert_eq!(o, offset);
        }
    }
}

#[test]
fn manifest_without_counters_is_corruption() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut snap = snapshot();
    snap.last_sequence = None;
    Manifest::create(&fs(), dir.path(), 2, &[snap]).expect("create");
    let e = recover(&PosixFs, dir.path(), &|_| 4).expect_err("no last_sequence");
    assert!(e.is_corruption(), "{e}");
}

/// A MANIFEST whose recorded last sequence is below a table's newest entry (builds
/// between the version-set refactor and its fix could write one in a roll-over
/// snapshot) recovers the table's sequence: reading below it would hide its entries.
#[test]
fn last_sequence_is_raised_to_the_newest_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut snap = snapshot();
    snap.last_sequence = Some(3);
    Manifest::create(&fs(), dir.path(), 2, &[snap]).expect("create");
    let r = recover(&PosixFs, dir.path(), &|_| 4)
        .expect("recover")
        .expect("exists");
    assert_eq!(r.last_sequence, 9, "largest_seqno of the tables");
}

/// `CURRENT` holds the MANIFEST's name and a newline. Frozen: never edit.
const CURRENT_FIXTURE_V1: &[u8] = b"MANIFEST-000002\n";

#[test]
fn frozen_current_fixture_v1() {
    let (dir, _, _) = write_all();
    let current = std::fs::read(dir.path().join(CURRENT)).expect("read CURRENT");
    assert_eq!(current, CURRENT_FIXTURE_V1, "CURRENT encoding changed");
    assert_eq!(super::parse_current(CURRENT_FIXTURE_V1), Some(2));
}
