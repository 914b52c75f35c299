//! Reads over a level of several runs (`version::run`) on an open database: gets,
//! batches, iterators both ways, snapshots and the transaction conflict check answer
//! exactly as they did when the same files were two levels.
//!
//! The runs are made by hand, by an edit that moves every file of L1 into L2 as a file
//! of column group 5 or 9 (alternately), beside L2's row run: every entry it moves is
//! newer than every entry of L2, so the level's merge holds the same versions of every
//! key, in the same order, as the two levels did.

use super::tests::{check_reads, fill, install, key, opts, split, write_newer, Model};
use super::*;
use crate::db::Db;
use crate::version::VersionEdit;

/// Moves every file of L1 into L2's column-group runs 5 and 9; returns how many.
fn stack_into_runs(db: &Db) -> usize {
    let version = db.inner.default.versions.current();
    let mut edit = VersionEdit::default();
    for (i, f) in version.files(1).iter().enumerate() {
        edit.deleted_files.push((1, f.number));
        let group = [5, 9][i % 2];
        edit.new_files.push((
            2,
            FileMetaData {
                column_group: group,
                ..FileMetaData::clone(f)
            },
        ));
    }
    install(db, edit);
    version.files(1).len()
}

/// `newer_sequence` of every key at the last sequence number, above `floor`.
fn newest(db: &Db, floor: SequenceNumber) -> Vec<Option<SequenceNumber>> {
    let sv = db.inner.default.super_version.load_full();
    let last = db.inner.versions.last_sequence();
    (0..3100)
        .map(|i| newer_sequence(&db.inner, &sv, &LookupKey::new(&key(i), last), floor).unwrap())
        .collect()
}

/// The groups of L2's runs, with their file counts.
fn runs_of_l2(db: &Db) -> Vec<(u32, usize)> {
    let v = db.inner.default.versions.current();
    v.runs(2).map(|r| (r.group(), r.files().len())).collect()
}

#[test]
fn a_level_of_several_runs_reads_as_the_merge_of_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (db, model) = fill(dir.path(), |_, _| {});
    let snap = db.snapshot();
    let floor = db.inner.versions.last_sequence() / 2;
    let before = (newest(&db, 0), newest(&db, floor));
    let moved = stack_into_runs(&db);
    assert!(moved >= 2);
    assert_eq!(runs_of_l2(&db).len(), 3, "row run, groups 5 and 9");
    assert!(db.inner.default.versions.current().files(1).is_empty());
    check_reads(&db, &model, &[(snap.clone(), model.clone())]);
    assert_eq!((newest(&db, 0), newest(&db, floor)), before);

    // Newer data in L0 over the runs.
    let newer = write_newer(&db, &model);
    check_reads(&db, &newer, &[(snap.clone(), model.clone())]);
    assert!(db.verify_checksums().unwrap() > 0);
    drop(snap);
    db.close().unwrap();

    // The runs come back from the MANIFEST; with compactions on, L0 goes to L1 and
    // the leveled picker leaves the level of runs alone.
    let runs = runs_of_l2(&Db::open(dir.path(), opts()).unwrap());
    assert_eq!(runs.len(), 3);
    let db = Db::open(
        dir.path(),
        opts().with_level0_file_num_compaction_trigger(1),
    )
    .unwrap();
    db.wait_for_compactions().unwrap();
    let v = db.inner.default.versions.current();
    assert!(v.files(0).is_empty() && !v.files(1).is_empty());
    drop(v);
    assert_eq!(runs_of_l2(&db), runs);
    check_reads(&db, &newer, &[]);
}

#[test]
fn a_virtual_table_in_the_row_run_of_a_level_of_runs_is_read_through_its_slices() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = fill(dir.path(), |_, _| {});
    // Every file of L2 split into virtual halves, the upper half of the first one
    // dropped: what reads see is now the database's own answer before the runs exist.
    split(&db, 2, Some(0));
    let ro = ReadOptions::default();
    let model: Model = (0..3100)
        .filter_map(|i| db.get(&ro, &key(i)).unwrap().map(|v| (key(i), v)))
        .collect();
    let before = newest(&db, 0);
    stack_into_runs(&db);
    let v = db.inner.default.versions.current();
    assert!(v.has_group_runs(2) && v.has_virtual_tables(2));
    drop(v);
    check_reads(&db, &model, &[]);
    assert_eq!(newest(&db, 0), before);
}
