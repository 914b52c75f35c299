//! The executor on hand-made plans: a memtable flush through two routed streams, and a
//! trivial move.

use super::*;
use crate::compaction::plan::{Partitioning, Reason, Router, SingleStream};
use crate::env::PosixFs;
use crate::filename::Dirs;
use crate::key::{ParsedKey, ValueKind};
use crate::memtable::MemTable;
use crate::stats::Statistics;
use crate::version::file_meta::ALL_COLUMNS;
use crate::Options;
use std::path::Path;

/// Keys whose first byte is odd go to stream 1, the others to stream 0.
#[derive(Debug)]
struct ByParity;

impl Router for ByParity {
    fn route(&self, newest: &ParsedKey<'_>, _value: &[u8]) -> usize {
        usize::from(newest.user_key.first().is_some_and(|b| b % 2 == 1))
    }
}

fn versions(dir: &Path) -> VersionSet {
    VersionSet::create(Arc::new(PosixFs), Dirs::new(dir, []), u64::MAX, 4)
        .expect("version set")
}

/// A job context on the real file system with no snapshots.
fn context<'a>(vs: &'a VersionSet, cache: &'a TableCache) -> JobContext<'a> {
    JobContext {
        fs: &PosixFs,
        versions: vs,
        table_cache: cache,
        snapshots: Vec::new(),
        merge_operator: None,
    }
}

fn table_cache(vs: &VersionSet) -> TableCache {
    TableCache::new(
        Arc::new(PosixFs),
        vs.dirs().tables.clone(),
        16,
        None,
        Arc::new(Statistics::default()),
        false,
    )
}

/// Every user key of the tables `files`, in order, read back through `cache`.
fn keys(cache: &TableCache, files: &[&FileMetaData]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in files {
        let mut it = cache.get(f).expect("open").iter();
        it.seek_to_first();
        while it.valid() {
            out.extend_from_slice(key::user_key(it.key()));
            it.next();
        }
    }
    out
}

#[test]
fn a_router_splits_one_input_into_streams_with_their_own_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = versions(dir.path());
    let cache = table_cache(&vs);
    let mem = Arc::new(MemTable::new());
    for (seq, k) in (1u64..).zip(b"abcdefgh") {
        mem.add(seq, ValueKind::Put, &[*k], b"v");
    }
    // An older version of `a` that GC drops (no snapshot needs it).
    mem.add(20, ValueKind::Put, b"a", b"newer");
    let opts = Options::default();
    let mut plan = Plan::flush(&opts, Arc::clone(&mem), 0, Some(9), Reason::Flush);
    let mut odd = plan.outputs[0].clone();
    odd.column_group = 7;
    odd.level = 1;
    odd.partitioning = Partitioning::Fixed { target: 1 };
    plan.outputs.push(odd);
    plan.router = Arc::new(ByParity);
    let ctx = context(&vs, &cache);
    let out = execute(&plan, &ctx).expect("execute");
    assert_eq!(out.edit.log_number, Some(9));
    assert!(out.edit.deleted_files.is_empty());
    let l0: Vec<&FileMetaData> = out
        .edit
        .new_files
        .iter()
        .filter(|(l, _)| *l == 0)
        .map(|(_, f)| f)
        .collect();
    let l1: Vec<&FileMetaData> = out
        .edit
        .new_files
        .iter()
        .filter(|(l, _)| *l == 1)
        .map(|(_, f)| f)
        .collect();
    // b, d, f, h are even bytes; a, c, e, g odd (0x61 = 'a').
    assert_eq!(keys(&cache, &l0), b"bdfh");
    assert_eq!(keys(&cache, &l1), b"aceg");
    assert_eq!(l0.len(), 1, "stream 0 cuts no file");
    assert_eq!(l1.len(), 4, "stream 1 cuts after every key");
    assert!(l1.iter().all(|f| f.column_group == 7));
    assert!(l0.iter().all(|f| f.column_group == ALL_COLUMNS));
    assert_eq!(out.refs.len(), 5);
    assert_eq!(out.stream_bytes.len(), 2);
    assert_eq!(
        out.bytes_written(),
        l0.iter().chain(&l1).map(|f| f.size).sum::<u64>()
    );
    let a = l1.first().expect("a");
    assert_eq!(
        a.smallest_seqno, 20,
        "only the newest version of `a` survives"
    );
}

#[test]
fn a_router_index_out_of_range_is_an_internal_error() {
    #[derive(Debug)]
    struct Bad;
    impl Router for Bad {
        fn route(&self, _: &ParsedKey<'_>, _: &[u8]) -> usize {
            3
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = versions(dir.path());
    let cache = table_cache(&vs);
    let mem = Arc::new(MemTable::new());
    mem.add(1, ValueKind::Put, b"k", b"v");
    let mut plan = Plan::flush(&Options::default(), mem, 0, None, Reason::Flush);
    plan.router = Arc::new(Bad);
    let ctx = context(&vs, &cache);
    let err = execute(&plan, &ctx).expect_err("bad route");
    assert_eq!(err.kind(), crate::ErrorKind::Internal, "{err}");
}

#[test]
fn a_trivial_move_re_levels_files_without_io() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = versions(dir.path());
    let cache = table_cache(&vs);
    let f = Arc::new(FileMetaData::for_test(5, "a", "b", 1, 2, 100));
    let plan = Plan {
        action: Action::TrivialMove,
        inputs: vec![Input::Files {
            level: 1,
            files: vec![Arc::clone(&f)],
        }],
        outputs: vec![OutputStream::for_level(
            &Options::default(),
            2,
            0,
            Partitioning::Fixed { target: 1 << 20 },
        )],
        router: Arc::new(SingleStream),
        bottommost: true,
        log_number: None,
        reason: Reason::LevelSize,
    };
    let ctx = context(&vs, &cache);
    let out = execute(&plan, &ctx).expect("move");
    assert_eq!(out.edit.deleted_files, vec![(1, 5)]);
    assert_eq!(out.edit.new_files, vec![(2, FileMetaData::clone(&f))]);
    assert_eq!(out.moved_files, 1);
    assert!(out.refs.is_empty());
    assert_eq!(out.bytes_written(), 0);
}

#[test]
fn a_drop_deletes_its_inputs_without_io() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = versions(dir.path());
    let cache = table_cache(&vs);
    let files = |level, numbers: &[u64]| Input::Files {
        level,
        files: numbers
            .iter()
            .map(|&n| Arc::new(FileMetaData::for_test(n, "a", "b", 1, 2, 100)))
            .collect(),
    };
    let mut plan = Plan {
        action: Action::Drop,
        inputs: vec![files(1, &[5]), files(3, &[7, 8])],
        outputs: Vec::new(),
        router: Arc::new(SingleStream),
        bottommost: false,
        log_number: None,
        reason: Reason::RangeDeletion,
    };
    let ctx = context(&vs, &cache);
    // The files do not exist: nothing is opened.
    let out = execute(&plan, &ctx).expect("drop");
    assert_eq!(out.edit.deleted_files, vec![(1, 5), (3, 7), (3, 8)]);
    assert!(out.edit.new_files.is_empty());
    assert_eq!((out.dropped_files, out.dropped_bytes), (3, 300));
    assert_eq!((out.bytes_read, out.bytes_written()), (0, 0));
    assert_eq!(cache.lookups(), 0);
    // A drop that names an output is malformed.
    plan.outputs.push(OutputStream::for_level(
        &Options::default(),
        2,
        0,
        Partitioning::Fixed { target: 1 << 20 },
    ));
    let err = execute(&plan, &ctx).expect_err("drop with an output");
    assert_eq!(err.kind(), crate::ErrorKind::Internal, "{err}");
}

/// Tombstones at one end of the key space and entries at the other go to two files
/// when grandparent files of more than a target size lie between them, and to one
/// file when they do not.
#[test]
fn tombstones_far_from_the_next_key_end_their_file() {
    let run = |grandparent_size: u64| {
        let dir = tempfile::tempdir().expect("tempdir");
        let vs = versions(dir.path());
        let cache = table_cache(&vs);
        let mem = Arc::new(MemTable::new());
        mem.add(1, ValueKind::RangeDelete, b"a", b"c");
        mem.add(2, ValueKind::Put, b"x", b"v");
        mem.add(3, ValueKind::Put, b"y", b"v");
        let opts = Options::default();
        let mut plan = Plan::flush(&opts, Arc::clone(&mem), 0, None, Reason::Flush);
        let mut gp = FileMetaData::for_test(50, "m", "n", 1, 1, grandparent_size);
        gp.path_id = 0;
        plan.outputs[0].partitioning = Partitioning::Aligned {
            grandparents: vec![Arc::new(gp)],
            target: 1000,
            variance: 2.0,
        };
        let out = execute(&plan, &context(&vs, &cache)).expect("execute");
        let files: Vec<&FileMetaData> = out.edit.new_files.iter().map(|(_, f)| f).collect();
        let ranges: Vec<(Vec<u8>, Vec<u8>, u64)> = files
            .iter()
            .map(|f| {
                (
                    f.smallest_user_key().to_vec(),
                    f.largest_user_key().to_vec(),
                    f.num_range_deletions,
                )
            })
            .collect();
        (ranges, keys(&cache, &files))
    };
    let (split, points) = run(10_000);
    assert_eq!(
        split,
        vec![
            (b"a".to_vec(), b"c".to_vec(), 1),
            (b"x".to_vec(), b"y".to_vec(), 0)
        ]
    );
    assert_eq!(points, b"xy");
    let (one, _) = run(10);
    assert_eq!(one, vec![(b"a".to_vec(), b"y".to_vec(), 1)]);
}
