//! The executor on hand-made plans: a memtable flush through two routed streams, and a
//! trivial move.

use super::*;
use crate::compaction::plan::{OutputRange, OutputStream, Partitioning, Reason, Router, Routing};
use crate::env::PosixFs;
use crate::filename::Dirs;
use crate::key::{ParsedKey, ValueKind};
use crate::memtable::MemTable;
use crate::sst::TableBuilder;
use crate::stats::Statistics;
use crate::version::file_meta::ALL_COLUMNS;
use crate::version::virtual_table::Slice;
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
    VersionSet::create(
        Arc::new(PosixFs),
        Dirs::new(dir, []),
        u64::MAX,
        4,
        Vec::new(),
    )
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
        compaction_filter: None,
        version: None,
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
    plan.routing = Routing::Keys(Arc::new(ByParity));
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
    plan.routing = Routing::Keys(Arc::new(Bad));
    let ctx = context(&vs, &cache);
    let err = execute(&plan, &ctx).expect_err("bad route");
    assert_eq!(err.kind(), crate::ErrorKind::Internal, "{err}");
}

/// Keys of `set` go to stream 1, the others to stream 0.
#[derive(Debug)]
struct ToStreamOne(&'static [&'static [u8]]);

impl Router for ToStreamOne {
    fn route(&self, newest: &ParsedKey<'_>, _value: &[u8]) -> usize {
        usize::from(self.0.contains(&newest.user_key))
    }
}

/// A flush of `mem` into an unbounded stream 0 (L2) and a stream 1 (L1) bounded to
/// `[start, end)`, routed by `router`.
fn bounded_plan(mem: Arc<MemTable>, start: &[u8], end: &[u8], router: ToStreamOne) -> Plan {
    let opts = Options::default();
    let mut plan = Plan::flush(&opts, mem, 0, None, Reason::Flush);
    plan.outputs[0].level = 2;
    let mut bounded = plan.outputs[0].clone();
    bounded.level = 1;
    bounded.bounds = Some(KeyRange {
        start: Some(start.to_vec()),
        end: Some(end.to_vec()),
    });
    plan.outputs.push(bounded);
    plan.routing = Routing::Keys(Arc::new(router));
    plan
}

/// A bounded stream's files hold its keys and only the part of the job's range
/// tombstones inside its bounds, less the keys sent to the deeper stream with newer
/// entries; the unbounded stream keeps every tombstone.
#[test]
fn a_bounded_stream_keeps_its_files_and_tombstones_inside_its_bounds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = versions(dir.path());
    let cache = table_cache(&vs);
    let mem = Arc::new(MemTable::new());
    mem.add(1, ValueKind::RangeDelete, b"a", b"z");
    for (seq, k) in (2u64..).zip([b"b", b"d", b"f", b"m", b"x"]) {
        mem.add(seq, ValueKind::Put, k, b"v");
    }
    let plan = bounded_plan(mem, b"c", b"n", ToStreamOne(&[b"d", b"f"]));
    let out = execute(&plan, &context(&vs, &cache)).expect("execute");
    let at = |level: usize| -> Vec<&FileMetaData> {
        out.edit
            .new_files
            .iter()
            .filter(|(l, _)| *l == level)
            .map(|(_, f)| f)
            .collect()
    };
    let (fast, slow) = (at(1), at(2));
    assert_eq!(keys(&cache, &fast), b"df");
    assert_eq!(keys(&cache, &slow), b"bmx");
    let (_, fast_rd) = contents(&cache, fast.iter().copied());
    let (_, slow_rd) = contents(&cache, slow.iter().copied());
    let spans = |rd: &[RangeTombstone]| -> Vec<(Vec<u8>, Vec<u8>)> {
        rd.iter()
            .map(|t| (t.start.clone(), t.end.clone()))
            .collect()
    };
    // `m`, inside the bounds but sent down with an entry newer than the tombstone, is
    // left out of the bounded stream's copy: a get stops at the first level whose
    // tombstone covers its key.
    assert_eq!(
        spans(&fast_rd),
        vec![
            (b"c".to_vec(), b"m".to_vec()),
            (b"m\0".to_vec(), b"n".to_vec())
        ]
    );
    assert_eq!(spans(&slow_rd), vec![(b"a".to_vec(), b"z".to_vec())]);
    for f in &fast {
        assert!(f.smallest_user_key() >= b"c".as_slice(), "{f:?}");
        assert!(f.largest_user_key() <= b"n".as_slice(), "{f:?}");
    }
    // The stream's hold in `Busy` is the input range cut to its bounds; a flush has
    // no input files, so a compaction of the same shape is needed to see it.
    let mut busy = crate::compaction::picker::Busy::default();
    let compaction = Plan {
        inputs: vec![Input::Files {
            level: 1,
            files: vec![Arc::new(FileMetaData::for_test(9, "a", "z", 1, 1, 10))],
        }],
        ..plan
    };
    busy.add_plan(&compaction);
    assert_eq!(
        busy.output_ranges,
        vec![
            OutputRange::rows(2, b"a", b"z"),
            OutputRange::rows(1, b"c", b"n")
        ]
    );
    busy.remove_plan(&compaction);
    assert!(busy.output_ranges.is_empty());
}

/// A bounded stream that receives no entry writes no file of tombstones only: the
/// unbounded stream below keeps them (else a level written back into would keep a
/// file there however often it is compacted).
#[test]
fn a_bounded_stream_without_entries_writes_no_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = versions(dir.path());
    let cache = table_cache(&vs);
    let mem = Arc::new(MemTable::new());
    mem.add(1, ValueKind::RangeDelete, b"a", b"z");
    mem.add(2, ValueKind::Put, b"d", b"v");
    let plan = bounded_plan(mem, b"c", b"n", ToStreamOne(&[]));
    let out = execute(&plan, &context(&vs, &cache)).expect("execute");
    let levels: Vec<usize> = out.edit.new_files.iter().map(|(l, _)| *l).collect();
    assert_eq!(levels, vec![2], "{:?}", out.edit.new_files);
    let (_, rd) = contents(&cache, out.edit.new_files.iter().map(|(_, f)| f));
    assert_eq!(rd.len(), 1, "the slow stream keeps the tombstone");
}

/// A router that sends a key outside its stream's bounds fails the job, and so does
/// a bounded stream on a plan that is not a rewrite.
#[test]
fn keys_outside_a_streams_bounds_are_an_internal_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = versions(dir.path());
    let cache = table_cache(&vs);
    let mem = Arc::new(MemTable::new());
    mem.add(1, ValueKind::Put, b"d", b"v");
    mem.add(2, ValueKind::Put, b"q", b"v");
    let plan = bounded_plan(Arc::clone(&mem), b"c", b"n", ToStreamOne(&[b"d", b"q"]));
    let err = execute(&plan, &context(&vs, &cache)).expect_err("q is out of bounds");
    assert_eq!(err.kind(), crate::ErrorKind::Internal, "{err}");
    assert!(err.to_string().contains("outside its bounds"), "{err}");
    let mut moved = bounded_plan(mem, b"c", b"n", ToStreamOne(&[]));
    moved.action = Action::TrivialMove;
    let err = execute(&moved, &context(&vs, &cache)).expect_err("bounded move");
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
        routing: Routing::single(),
        bottommost: true,
        log_number: None,
        reason: Reason::LevelSize,
        range: None,
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
        routing: Routing::single(),
        bottommost: false,
        log_number: None,
        reason: Reason::RangeDeletion,
        range: None,
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

// ---------------------------------------------------------------------------------
// Virtual inputs: hand-built tables, made parents of virtual tables, compacted.
// (The helpers are shared with `compaction::virtualize`'s tests.)

/// One entry of a hand-built table: user key, sequence number, kind, value.
pub(crate) type Row = (Vec<u8>, u64, ValueKind, Vec<u8>);

pub(crate) fn row(k: &str, seq: u64, kind: ValueKind, v: &str) -> Row {
    (k.as_bytes().to_vec(), seq, kind, v.as_bytes().to_vec())
}

/// A version set with `levels` levels in `dir`, its MANIFEST started.
pub(crate) fn version_set(dir: &Path, levels: usize) -> VersionSet {
    let vs = VersionSet::create(
        Arc::new(PosixFs),
        Dirs::new(dir, []),
        u64::MAX,
        levels,
        Vec::new(),
    )
    .expect("version set");
    vs.start_manifest(&[], &[], 1).expect("first manifest");
    vs
}

/// A table cache over `vs`'s data paths.
pub(crate) fn cache_of(vs: &VersionSet) -> TableCache {
    table_cache(vs)
}

/// A job context over `version` whose snapshots see every sequence number in
/// `1..=max_seq` (so GC keeps every version, and no tombstone hides an entry of
/// another snapshot stripe: the output holds exactly the input's entries).
pub(crate) fn keep_all_context<'a>(
    vs: &'a VersionSet,
    cache: &'a TableCache,
    version: &'a Version,
    max_seq: u64,
) -> JobContext<'a> {
    JobContext {
        snapshots: (1..=max_seq).collect(),
        version: Some(version),
        ..context(vs, cache)
    }
}

/// Writes a table of `rows` (any order) and `tombstones` on path 0 with data blocks of
/// about `block_size` bytes; returns its metadata and reference.
pub(crate) fn build_table(
    vs: &VersionSet,
    rows: &[Row],
    tombstones: &[RangeTombstone],
    block_size: usize,
) -> (FileMetaData, Arc<FileRef>) {
    let mut sorted = rows.to_vec();
    sorted.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let (file_ref, file) = vs.new_table(0).expect("new table");
    let mut opts = crate::sst::TableOptions::for_level(&Options::default(), 1);
    opts.block_size = block_size;
    let mut b = TableBuilder::new(file, opts);
    for (k, seq, kind, v) in &sorted {
        b.add(&key::make_internal_key(k, *seq, *kind), v)
            .expect("add");
    }
    if !tombstones.is_empty() {
        b.set_range_dels(Fragments::new(tombstones));
    }
    let p = b.finish().expect("finish");
    let meta = FileMetaData {
        number: file_ref.number(),
        path_id: 0,
        size: p.file_size,
        smallest: p.smallest_key,
        largest: p.largest_key,
        smallest_seqno: p.smallest_seqno,
        largest_seqno: p.largest_seqno,
        num_entries: p.num_entries,
        num_deletions: p.num_deletions,
        column_group: ALL_COLUMNS,
        kind: FileKind::Real,
        num_range_deletions: p.num_range_deletions,
        creation_time: 0,
    };
    (meta, file_ref)
}

/// Logs and installs `edit` in `vs`'s default family (its new tables' `refs`), checks
/// the installed version's invariants, and returns it.
pub(crate) fn install(vs: &VersionSet, edit: VersionEdit, refs: &[Arc<FileRef>]) -> Arc<Version> {
    let v = vs
        .log_and_apply(&vs.default_family(), edit, refs, |_| {})
        .expect("install");
    v.check_invariants().expect("installed version invariants");
    v
}

/// Point entries as (internal key, value).
pub(crate) type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Every point entry (internal key, value) of the real tables `files`, in
/// internal-key order, and their range tombstones.
pub(crate) fn contents<'a>(
    cache: &TableCache,
    files: impl IntoIterator<Item = &'a FileMetaData>,
) -> (Entries, Vec<RangeTombstone>) {
    let mut rows = Vec::new();
    let mut tombstones = Vec::new();
    for f in files {
        let table = cache.get(f).expect("open");
        let mut it = table.iter();
        it.seek_to_first();
        while it.valid() {
            rows.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.status().expect("read");
        if let Some(rd) = table.range_dels() {
            tombstones.extend(rd.tombstones());
        }
    }
    rows.sort_by(|a, b| key::compare_internal(&a.0, &b.0));
    (rows, tombstones)
}

/// The internal keys and values of `rows` whose user key is in one of `ranges`, in
/// internal-key order.
pub(crate) fn model(rows: &[Row], ranges: &[(&str, &str)]) -> Entries {
    let mut out: Entries = rows
        .iter()
        .filter(|(k, ..)| {
            ranges
                .iter()
                .any(|(lo, hi)| lo.as_bytes() <= k.as_slice() && k.as_slice() <= hi.as_bytes())
        })
        .map(|(k, seq, kind, v)| (key::make_internal_key(k, *seq, *kind), v.clone()))
        .collect();
    out.sort_by(|a, b| key::compare_internal(&a.0, &b.0));
    out
}

/// For each probe user key, the sequence numbers of the tombstones covering it: two
/// sets of tombstones delete the same things iff these agree on every probe (probes
/// at every tombstone bound and entry key).
pub(crate) fn coverage(tombstones: &[RangeTombstone], probes: &[Vec<u8>]) -> Vec<Vec<u64>> {
    probes
        .iter()
        .map(|k| {
            let mut seqs: Vec<u64> = tombstones
                .iter()
                .filter(|t| t.start.as_slice() <= k.as_slice() && k.as_slice() < t.end.as_slice())
                .map(|t| t.seq)
                .collect();
            seqs.sort_unstable();
            seqs.dedup();
            seqs
        })
        .collect()
}

/// Probe keys for [`coverage`]: every bound and row key, and the key right after each.
pub(crate) fn probes(rows: &[Row], tombstones: &[RangeTombstone]) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = rows.iter().map(|r| r.0.clone()).collect();
    for t in tombstones {
        keys.push(t.start.clone());
        keys.push(t.end.clone());
    }
    let after: Vec<Vec<u8>> = keys.iter().map(|k| key_after(k)).collect();
    keys.extend(after);
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// A one-stream rewrite of `inputs` into `level`, one output file.
pub(crate) fn rewrite_plan(inputs: Vec<Input>, level: usize) -> Plan {
    Plan {
        action: Action::Rewrite,
        inputs,
        outputs: vec![OutputStream::for_level(
            &Options::default(),
            level,
            0,
            Partitioning::Fixed { target: u64::MAX },
        )],
        routing: Routing::single(),
        bottommost: false,
        log_number: None,
        reason: Reason::LevelSize,
        range: None,
    }
}

/// A virtual table at user keys `[lo, hi]` (interior-tile bounds) over `slices`.
fn virtual_table(number: u64, lo: &str, hi: &str, slices: Vec<Slice>) -> FileMetaData {
    FileMetaData {
        number,
        path_id: 0,
        size: slices.iter().map(|s| s.bytes).sum(),
        smallest: key::make_internal_key(lo.as_bytes(), key::MAX_SEQUENCE, ValueKind::RangeDelete),
        largest: key::make_internal_key(hi.as_bytes(), 0, ValueKind::Delete),
        smallest_seqno: 1,
        largest_seqno: 30,
        num_entries: 1,
        num_deletions: 0,
        column_group: ALL_COLUMNS,
        kind: FileKind::Virtual { slices },
        num_range_deletions: 1,
        creation_time: 0,
    }
}

/// Parent 1 (`a..h`, tombstones to `i`) is shared by two virtual tables with disjoint
/// slices (`[b, d]` and `[f, g]`), parent 2 (`j..n`) read in `[j, l]` by the second;
/// entries `a`, `e`, `h`, `m`, `n` lie outside every slice. A compaction of both with
/// a real L2 file yields exactly the slices' entries and tombstones and the real
/// file's, reads the slices' bytes, and installs a version that no longer needs the
/// parents.
#[test]
fn a_compaction_reads_each_slice_of_its_virtual_inputs_and_nothing_else() {
    use ValueKind::{Delete, Merge, Put};
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = version_set(dir.path(), 4);
    let cache = cache_of(&vs);
    let p1_rows = vec![
        row("a", 10, Put, "a10"),
        row("b", 11, Put, "b11"),
        row("b", 5, Put, "b5"),
        row("c", 12, Delete, ""),
        row("c", 6, Put, "c6"),
        row("d", 13, Merge, "m2"),
        row("d", 7, Merge, "m1"),
        row("d", 3, Put, "base"),
        row("e", 14, Put, "e14"),
        row("f", 15, Put, "f15"),
        row("g", 16, Put, "g16"),
        row("g", 8, Delete, ""),
        row("h", 17, Put, "h17"),
    ];
    let p1_rd = vec![
        RangeTombstone::of("b", "e", 9),
        RangeTombstone::of("g", "i", 4),
    ];
    let p2_rows = vec![
        row("j", 20, Put, "j20"),
        row("k", 21, Put, "k21"),
        row("k", 18, Delete, ""),
        row("l", 22, Merge, "l22"),
        row("m", 23, Put, "m23"),
        row("n", 24, Put, "n24"),
    ];
    let p2_rd = vec![RangeTombstone::of("k", "n", 19)];
    let r_rows = vec![
        row("c", 2, Put, "c2"),
        row("k", 1, Put, "k1"),
        row("z", 1, Put, "z1"),
    ];
    let r_rd = vec![RangeTombstone::of("x", "y", 1)];
    let (p1, p1_ref) = build_table(&vs, &p1_rows, &p1_rd, 1);
    let (p2, p2_ref) = build_table(&vs, &p2_rows, &p2_rd, 1);
    let (r, r_ref) = build_table(&vs, &r_rows, &r_rd, 1);
    install(
        &vs,
        VersionEdit {
            new_files: vec![(1, p1.clone()), (1, p2.clone()), (2, r.clone())],
            ..VersionEdit::default()
        },
        &[p1_ref, p2_ref, r_ref],
    );
    let bytes = |f: &FileMetaData, lo: &str, hi: &str| {
        let b = cache
            .get(f)
            .expect("open")
            .approximate_range_bytes(lo.as_bytes(), hi.as_bytes())
            .expect("bytes");
        assert!(b > 0, "one entry per block: every slice spans some");
        b
    };
    let slice = |f: &FileMetaData, lo: &str, hi: &str| Slice {
        parent: f.number,
        smallest: lo.as_bytes().to_vec(),
        largest: hi.as_bytes().to_vec(),
        bytes: bytes(f, lo, hi),
    };
    let v1 = virtual_table(100, "b", "d", vec![slice(&p1, "b", "d")]);
    let v2 = virtual_table(
        101,
        "f",
        "l",
        vec![slice(&p1, "f", "g"), slice(&p2, "j", "l")],
    );
    let slice_bytes = v1.size + v2.size;
    assert!(slice_bytes < p1.size + p2.size);
    let version = install(
        &vs,
        VersionEdit {
            deleted_files: vec![(1, p1.number), (1, p2.number)],
            new_files: vec![(1, v1.clone()), (1, v2.clone())],
            new_parents: vec![p1.clone(), p2.clone()],
            ..VersionEdit::default()
        },
        &[],
    );
    assert_eq!(version.parents().count(), 2);
    let plan = rewrite_plan(
        vec![
            Input::Files {
                level: 1,
                files: vec![Arc::new(v1), Arc::new(v2)],
            },
            Input::Files {
                level: 2,
                files: vec![Arc::new(r.clone())],
            },
        ],
        2,
    );
    let out = execute(&plan, &keep_all_context(&vs, &cache, &version, 30)).expect("compact");
    assert_eq!(out.bytes_read, slice_bytes + r.size);
    assert_eq!(out.bytes_read_upper, slice_bytes);
    let outputs: Vec<FileMetaData> = out.edit.new_files.iter().map(|(_, f)| f.clone()).collect();
    let (got, got_rd) = contents(&cache, &outputs);
    let mut want = model(&p1_rows, &[("b", "d"), ("f", "g")]);
    want.extend(model(&p2_rows, &[("j", "l")]));
    want.extend(model(&r_rows, &[("", "zz")]));
    want.sort_by(|a, b| key::compare_internal(&a.0, &b.0));
    assert_eq!(got, want, "exactly the slices' entries and the real file's");
    let want_rd = vec![
        RangeTombstone::of("b", "d\0", 9),
        RangeTombstone::of("g", "g\0", 4),
        RangeTombstone::of("k", "l\0", 19),
        RangeTombstone::of("x", "y", 1),
    ];
    let all_rows: Vec<Row> = [p1_rows.clone(), p2_rows.clone(), r_rows.clone()].concat();
    let all_rd = [p1_rd.clone(), p2_rd.clone(), r_rd.clone(), want_rd.clone()].concat();
    let probes = probes(&all_rows, &all_rd);
    assert_eq!(
        coverage(&got_rd, &probes),
        coverage(&want_rd, &probes),
        "the slices' tombstones, clipped to the slices: {got_rd:?}"
    );

    // GC, tombstones and merge folding as for real inputs: at the bottom with no
    // snapshot and a merge operator, the virtual inputs compact exactly as real tables
    // holding just their slices' entries and tombstones would.
    let part = |rows: &[Row], rd: &[RangeTombstone], lo: &str, hi: &str| {
        let rows: Vec<Row> = rows
            .iter()
            .filter(|r| lo.as_bytes() <= r.0.as_slice() && r.0.as_slice() <= hi.as_bytes())
            .cloned()
            .collect();
        let end = key_after(hi.as_bytes());
        let rd: Vec<RangeTombstone> = Fragments::new(rd)
            .clip(Some(lo.as_bytes()), Some(&end))
            .tombstones()
            .collect();
        (rows, rd)
    };
    let (a_rows, a_rd) = part(&p1_rows, &p1_rd, "b", "d");
    let (b1_rows, b1_rd) = part(&p1_rows, &p1_rd, "f", "g");
    let (b2_rows, b2_rd) = part(&p2_rows, &p2_rd, "j", "l");
    let (t1, _t1_ref) = build_table(&vs, &a_rows, &a_rd, 1);
    let (t2, _t2_ref) = build_table(
        &vs,
        &[b1_rows, b2_rows].concat(),
        &[b1_rd, b2_rd].concat(),
        1,
    );
    let append = crate::merge::Append::new(b",");
    let bottom = |plan: &Plan| {
        let mut plan = plan.clone();
        plan.bottommost = true;
        let ctx = JobContext {
            merge_operator: Some(&append),
            compaction_filter: None,
            version: Some(&version),
            ..context(&vs, &cache)
        };
        let out = execute(&plan, &ctx).expect("compact at the bottom");
        let outputs: Vec<FileMetaData> =
            out.edit.new_files.iter().map(|(_, f)| f.clone()).collect();
        contents(&cache, &outputs)
    };
    let from_virtual = bottom(&plan);
    let real_plan = rewrite_plan(
        vec![
            Input::Files {
                level: 1,
                files: vec![Arc::new(t1), Arc::new(t2)],
            },
            Input::Files {
                level: 2,
                files: vec![Arc::new(r.clone())],
            },
        ],
        2,
    );
    let from_real = bottom(&real_plan);
    assert!(
        !from_real.0.is_empty() && from_real.0.len() < got.len(),
        "GC dropped and folded entries"
    );
    assert_eq!(from_virtual.0, from_real.0);
    assert_eq!(
        coverage(&from_virtual.1, &probes),
        coverage(&from_real.1, &probes)
    );
    let installed = install(&vs, out.edit, &out.refs);
    assert_eq!(
        installed.parents().count(),
        0,
        "no slice names the parents any more"
    );
    assert_eq!(installed.files(1).len(), 0);
}

#[test]
fn a_virtual_table_moves_and_drops_by_metadata_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = versions(dir.path());
    let cache = table_cache(&vs);
    let v = Arc::new(virtual_table(
        9,
        "b",
        "d",
        vec![Slice {
            parent: 4,
            smallest: b"b".to_vec(),
            largest: b"d".to_vec(),
            bytes: 70,
        }],
    ));
    let input = Input::Files {
        level: 1,
        files: vec![Arc::clone(&v)],
    };
    let mut plan = rewrite_plan(vec![input], 2);
    plan.action = Action::TrivialMove;
    // No version is given and parent 4 does not exist: nothing is opened.
    let out = execute(&plan, &context(&vs, &cache)).expect("move");
    assert_eq!(out.edit.new_files, vec![(2, FileMetaData::clone(&v))]);
    assert_eq!(out.edit.deleted_files, vec![(1, 9)]);
    assert!(out.edit.new_parents.is_empty());
    plan.action = Action::Drop;
    plan.outputs.clear();
    let out = execute(&plan, &context(&vs, &cache)).expect("drop");
    assert_eq!((out.dropped_files, out.dropped_bytes), (1, 70));
    assert_eq!(cache.lookups(), 0);
    // A rewrite of it needs the version that knows its parent.
    let mut plan = rewrite_plan(
        vec![Input::Files {
            level: 1,
            files: vec![v],
        }],
        2,
    );
    plan.action = Action::Rewrite;
    let err = execute(&plan, &context(&vs, &cache)).expect_err("no version");
    assert_eq!(err.kind(), crate::ErrorKind::Internal, "{err}");
}
