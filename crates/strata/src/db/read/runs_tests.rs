//! Reads over a level of several runs (`version::run`) on an open database: gets,
//! batches, iterators both ways, snapshots and the transaction conflict check answer
//! exactly as they did when the same files were two levels.
//!
//! The runs are made by hand, by an edit that moves every file of L1 into L2 as a file
//! of column group 5 or 9 (alternately), beside L2's row run: every entry it moves is
//! newer than every entry of L2, so the level's merge holds the same versions of every
//! key, in the same order, as the two levels did.

use super::tests::{check_reads, fill, install, key, merged, opts, split, write_newer, Model};
use super::*;
use crate::db::Db;
use crate::options::WriteOptions;
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

mod written_by_compactions {
    //! Runs written by the one executor: a policy that compacts all of L0, with every
    //! file of L1 (any run) its range meets, widened until closed, into three runs of
    //! L1, each key sent to a run chosen afresh by every job; and, once L1 is large,
    //! all of L1 and L2 into L2's row run. Every job rewrites all of L1's entries in
    //! its range, so each level's merge stays one sorted run of the right versions,
    //! while keys move from run to run. Reads during and after must equal a model.

    use super::*;
    use crate::compaction::picker::Busy;
    use crate::compaction::plan::{Input, OutputStream, Partitioning, Router, SingleStream};
    use crate::compaction::{
        Action, CompactionPolicy, Coverage, PlacementPolicy, Plan, Reason, Requests,
    };
    use crate::key::ParsedKey;
    use crate::options::Options;
    use crate::version::Version;
    use std::collections::BTreeMap;

    const GROUPS: [u32; 3] = [0, 5, 9];

    /// Sends a user key to the stream its hash, salted per job, picks.
    #[derive(Debug)]
    struct Scatter(u64);

    impl Router for Scatter {
        fn route(&self, newest: &ParsedKey<'_>, _value: &[u8]) -> usize {
            let h = newest
                .user_key
                .iter()
                .fold(self.0 ^ 0xcbf2_9ce4_8422_2325, |h, &b| {
                    (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                });
            (h % GROUPS.len() as u64) as usize
        }
    }

    #[derive(Debug)]
    struct ScatterPolicy;

    fn span(files: &[Arc<FileMetaData>]) -> Option<(Vec<u8>, Vec<u8>)> {
        let lo = files.iter().map(|f| f.smallest_user_key()).min()?;
        let hi = files.iter().map(|f| f.largest_user_key()).max()?;
        Some((lo.to_vec(), hi.to_vec()))
    }

    /// Every file of any run of `level` meeting `[lo, hi]`, widened until closed.
    fn closure(version: &Version, level: usize, lo: &[u8], hi: &[u8]) -> Vec<Arc<FileMetaData>> {
        let (mut lo, mut hi) = (lo.to_vec(), hi.to_vec());
        loop {
            let files: Vec<Arc<FileMetaData>> = version
                .runs(level)
                .flat_map(|r| r.sorted_overlapping(Some(&lo), Some(&hi)).to_vec())
                .collect();
            let Some((a, b)) = span(&files) else {
                return files;
            };
            if a >= lo && b <= hi {
                return files;
            }
            (lo, hi) = (a.min(lo), b.max(hi));
        }
    }

    fn plan(opts: &Options, inputs: Vec<Input>, level: usize, streams: &[u32], salt: u64) -> Plan {
        let target = opts.target_file_size_base;
        Plan {
            action: Action::Rewrite,
            inputs,
            outputs: streams
                .iter()
                .map(|&g| OutputStream {
                    column_group: g,
                    ..OutputStream::for_level(opts, level, 0, Partitioning::Fixed { target })
                })
                .collect(),
            router: match streams.len() {
                1 => Arc::new(SingleStream),
                _ => Arc::new(Scatter(salt)),
            },
            bottommost: level == 2,
            log_number: None,
            reason: Reason::LevelSize,
            range: None,
        }
    }

    impl CompactionPolicy for ScatterPolicy {
        fn pick(
            &self,
            version: &Version,
            opts: &Options,
            _placement: &dyn PlacementPolicy,
            busy: &Busy,
            _coverage: &Coverage<'_>,
            _requests: &Requests,
        ) -> Option<Plan> {
            if !busy.files.is_empty() {
                return None;
            }
            let l0 = version.files(0);
            if l0.len() >= 2 {
                let (lo, hi) = span(l0)?;
                let salt = l0.iter().map(|f| f.number).max().unwrap_or(0);
                let mut inputs = vec![Input::Files {
                    level: 0,
                    files: l0.to_vec(),
                }];
                let l1 = closure(version, 1, &lo, &hi);
                if !l1.is_empty() {
                    inputs.push(Input::Files {
                        level: 1,
                        files: l1,
                    });
                }
                return Some(plan(opts, inputs, 1, &GROUPS, salt));
            }
            if version.level_bytes(1) < opts.max_bytes_for_level_base {
                return None;
            }
            let inputs = (1..3)
                .map(|level| Input::Files {
                    level,
                    files: version
                        .runs(level)
                        .flat_map(|r| r.files().to_vec())
                        .collect(),
                })
                .filter(|i| matches!(i, Input::Files { files, .. } if !files.is_empty()))
                .collect();
            Some(plan(opts, inputs, 2, &[0], 0))
        }

        fn pick_manual(
            &self,
            _version: &Version,
            _opts: &Options,
            _placement: &dyn PlacementPolicy,
            _level: usize,
            _begin: Option<&[u8]>,
            _end: Option<&[u8]>,
            _busy: &Busy,
            _coverage: &Coverage<'_>,
        ) -> Option<Plan> {
            None
        }

        fn pending_compaction_bytes(&self, _version: &Version, _opts: &Options) -> u64 {
            0
        }

        fn scores(&self, version: &Version, _opts: &Options) -> Vec<f64> {
            vec![0.0; version.num_levels()]
        }
    }

    fn scatter_opts() -> Options {
        opts()
            .with_num_levels(3)
            .with_level0_file_num_compaction_trigger(2)
            .with_max_bytes_for_level_base(96 << 10)
    }

    fn open(dir: &std::path::Path) -> Db {
        Db::builder()
            .compaction_policy(Arc::new(ScatterPolicy))
            .open(dir, scatter_opts())
            .unwrap()
    }

    #[test]
    fn keys_moving_between_runs_read_as_a_model_says() {
        let dir = tempfile::tempdir().unwrap();
        let wo = WriteOptions::default();
        let db = open(dir.path());
        let mut model: Model = BTreeMap::new();
        let mut snaps: Vec<(crate::Snapshot, Model)> = Vec::new();
        let mut seen_runs = 0;
        for round in 0..24u32 {
            for j in 0..400u32 {
                let i = j.wrapping_mul(2_654_435_761).wrapping_add(round * 13) % 3000;
                match (i + round) % 7 {
                    0 => {
                        db.delete(&wo, &key(i)).unwrap();
                        model.remove(&key(i));
                    }
                    1 | 2 => {
                        db.merge(&wo, &key(i), b"m").unwrap();
                        model.insert(key(i), merged(&model, &key(i), b"m"));
                    }
                    _ => {
                        let v = format!("v{round}-{i}-{}", "x".repeat(20)).into_bytes();
                        db.put(&wo, &key(i), &v).unwrap();
                        model.insert(key(i), v);
                    }
                }
            }
            if round % 5 == 2 {
                let lo = (round * 97) % 2900;
                db.delete_range(&wo, &key(lo), &key(lo + 30)).unwrap();
                model.retain(|k, _| !(k.as_slice() >= key(lo).as_slice() && k < &key(lo + 30)));
            }
            if round % 6 == 3 {
                snaps.push((db.snapshot(), model.clone()));
            }
            db.flush().unwrap();
            db.wait_for_compactions().unwrap();
            let v = db.inner.default.versions.current();
            if v.has_group_runs(1) {
                seen_runs += 1;
            }
            drop(v);
            if round % 4 == 3 {
                check_reads(&db, &model, &snaps);
            }
        }
        assert!(
            seen_runs >= 10,
            "L1 held column-group runs after {seen_runs} rounds"
        );
        let v = db.inner.default.versions.current();
        assert!(!v.files(2).is_empty(), "L1 was compacted into L2");
        drop(v);
        check_reads(&db, &model, &snaps);
        snaps.clear();
        db.close().unwrap();
        let db = open(dir.path());
        check_reads(&db, &model, &[]);
        assert!(db.verify_checksums().unwrap() > 0);
    }
}
