//! Virtualize on hand-built tables: tiles cut like the stream (fixed size, aligned),
//! covering the inputs' range without gaps, overlaps or split user keys; slices inside
//! their parents adding up to the parents' bytes; virtual inputs' slices inherited
//! clipped to the tiles; and a real compaction of the result yields exactly the
//! original entries.

use super::*;
use crate::compaction::executor::tests::{
    build_table, cache_of, contents, coverage, install, keep_all_context, probes, rewrite_plan,
    version_set, Row,
};
use crate::compaction::executor::{execute, Outcome};
use crate::compaction::plan::{Action, Reason, Routing};
use crate::range_del::RangeTombstone;
use crate::version::{Version, VersionEdit, VersionSet};
use crate::Options;
use std::collections::BTreeMap;

const MAX_SEQ: u64 = 1000;

fn k(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

/// Rows for keys `i` in `range` stepping by `step`, at sequence numbers from `seq0`;
/// every fifth key also has an older version, every seventh newest one is a delete,
/// every eleventh a merge operand.
fn rows(range: std::ops::Range<u32>, step: usize, seq0: u64) -> Vec<Row> {
    let mut out = Vec::new();
    for (n, i) in (0u64..).zip(range.step_by(step)) {
        let seq = seq0 + 2 * n;
        let kind = match i {
            _ if i % 7 == 0 => ValueKind::Delete,
            _ if i % 11 == 0 => ValueKind::Merge,
            _ => ValueKind::Put,
        };
        let value = match kind {
            ValueKind::Delete => Vec::new(),
            _ => format!("value-{i:04}-{seq:04}-{}", "x".repeat(20)).into_bytes(),
        };
        out.push((k(i), seq + 1, kind, value));
        if i % 5 == 0 {
            out.push((
                k(i),
                seq,
                ValueKind::Put,
                format!("old-{i:04}").into_bytes(),
            ));
        }
    }
    out
}

fn tombstone(lo: u32, hi: u32, seq: u64) -> RangeTombstone {
    RangeTombstone {
        start: k(lo),
        end: k(hi),
        seq,
    }
}

/// The five real tables of the scenario: L1 `[0, 100)` and `[100, 200)`, L2 `[1, 150)`
/// and `[150, 250)` (older), L3 `[200, 300)` (oldest), each with a tombstone.
struct Scenario {
    dir: tempfile::TempDir,
    vs: VersionSet,
    rows: Vec<Row>,
    tombstones: Vec<RangeTombstone>,
    l1: Vec<Arc<FileMetaData>>,
    l2: Vec<Arc<FileMetaData>>,
    l3: Vec<Arc<FileMetaData>>,
    version: Arc<Version>,
}

fn scenario() -> Scenario {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = version_set(dir.path(), 5);
    let specs: [(usize, std::ops::Range<u32>, usize, u64, RangeTombstone); 5] = [
        (1, 0..100, 1, 700, tombstone(10, 20, 900)),
        (1, 100..200, 1, 800, tombstone(150, 160, 950)),
        (2, 1..150, 2, 400, tombstone(30, 90, 690)),
        (2, 150..250, 2, 500, tombstone(240, 245, 699)),
        (3, 200..300, 3, 100, tombstone(205, 210, 399)),
    ];
    let mut all_rows = Vec::new();
    let mut all_rd = Vec::new();
    let mut edit = VersionEdit::default();
    let mut refs = Vec::new();
    let mut levels: BTreeMap<usize, Vec<Arc<FileMetaData>>> = BTreeMap::new();
    for (level, range, step, seq0, rd) in specs {
        let r = rows(range, step, seq0);
        let (meta, file_ref) = build_table(&vs, &r, std::slice::from_ref(&rd), 256);
        all_rows.extend(r);
        all_rd.push(rd);
        edit.new_files.push((level, meta.clone()));
        refs.push(file_ref);
        levels.entry(level).or_default().push(Arc::new(meta));
    }
    let version = install(&vs, edit, &refs);
    let mut level = |l| levels.remove(&l).unwrap_or_default();
    Scenario {
        l1: level(1),
        l2: level(2),
        l3: level(3),
        dir,
        vs,
        rows: all_rows,
        tombstones: all_rd,
        version,
    }
}

fn virtualize_plan(inputs: Vec<Input>, level: usize, partitioning: Partitioning) -> Plan {
    Plan {
        action: Action::Virtualize,
        inputs,
        outputs: vec![OutputStream::for_level(
            &Options::default(),
            level,
            0,
            partitioning,
        )],
        routing: Routing::single(),
        bottommost: false,
        log_number: None,
        reason: Reason::LevelSize,
        range: None,
    }
}

fn files(level: usize, files: &[Arc<FileMetaData>]) -> Input {
    Input::Files {
        level,
        files: files.to_vec(),
    }
}

fn slices(f: &FileMetaData) -> &[Slice] {
    match &f.kind {
        FileKind::Virtual { slices } => slices,
        FileKind::Real => panic!("file {} is real", f.number),
    }
}

/// The tiles of `out` (all in `level`, in key order) cover the inputs' internal-key
/// range without gaps or overlaps: each next tile starts at the least user key after
/// the previous one's end. Every input row's user key lies in exactly one tile.
fn check_tiles(out: &Outcome, plan: &Plan, level: usize, rows: &[Row]) -> Vec<FileMetaData> {
    let mut tiles: Vec<FileMetaData> = out
        .edit
        .new_files
        .iter()
        .map(|(l, f)| {
            assert_eq!(*l, level);
            f.clone()
        })
        .collect();
    tiles.sort_by(|a, b| key::compare_internal(&a.smallest, &b.smallest));
    let first = plan
        .input_files()
        .map(|(_, f)| f.smallest.clone())
        .min_by(|a, b| key::compare_internal(a, b))
        .expect("inputs");
    let last = plan
        .input_files()
        .map(|(_, f)| f.largest.clone())
        .max_by(|a, b| key::compare_internal(a, b))
        .expect("inputs");
    assert_eq!(tiles.first().map(|t| &t.smallest), Some(&first));
    assert_eq!(tiles.last().map(|t| &t.largest), Some(&last));
    for w in tiles.windows(2) {
        let [a, b] = w else { continue };
        assert_eq!(
            b.smallest_user_key(),
            key_after(a.largest_user_key()).as_slice(),
            "tiles {} and {} are contiguous",
            a.number,
            b.number
        );
        assert_eq!(
            key::compare_internal(&a.largest, &b.smallest),
            std::cmp::Ordering::Less
        );
    }
    for (user_key, ..) in rows {
        let holders = tiles
            .iter()
            .filter(|t| {
                t.smallest_user_key() <= user_key.as_slice()
                    && user_key.as_slice() <= t.largest_user_key()
            })
            .count();
        assert_eq!(holders, 1, "user key {user_key:?} in exactly one tile");
    }
    for t in &tiles {
        let s = slices(t);
        assert!(!s.is_empty());
        assert_eq!(t.size, s.iter().map(|s| s.bytes).sum::<u64>());
        assert!(s
            .iter()
            .all(|s| t.smallest_user_key() <= s.smallest.as_slice()
                && s.largest.as_slice() <= t.largest_user_key()));
    }
    tiles
}

/// Per parent, its slices over `tiles`, in key order.
fn by_parent(tiles: &[FileMetaData]) -> BTreeMap<u64, Vec<Slice>> {
    let mut map: BTreeMap<u64, Vec<Slice>> = BTreeMap::new();
    for t in tiles {
        for s in slices(t) {
            map.entry(s.parent).or_default().push(s.clone());
        }
    }
    for v in map.values_mut() {
        v.sort_by(|a, b| a.smallest.cmp(&b.smallest));
    }
    map
}

/// A real compaction (keeping every version) of the virtual tables of `level` into
/// `level + 1` yields exactly `rows` and tombstones deleting what `tombstones` do, and
/// reads exactly the tables' bytes.
fn compact_and_compare(s: &Scenario, version: &Arc<Version>, level: usize) {
    let cache = cache_of(&s.vs);
    let tables = version.files(level).to_vec();
    let bytes: u64 = tables.iter().map(|t| t.size).sum();
    let plan = rewrite_plan(vec![files(level, &tables)], level + 1);
    let out = execute(&plan, &keep_all_context(&s.vs, &cache, version, MAX_SEQ)).expect("compact");
    assert_eq!(out.bytes_read, bytes);
    let outputs: Vec<FileMetaData> = out.edit.new_files.iter().map(|(_, f)| f.clone()).collect();
    let (got, got_rd) = contents(&cache, &outputs);
    let mut want: Vec<(Vec<u8>, Vec<u8>)> = s
        .rows
        .iter()
        .map(|(k, seq, kind, v)| (key::make_internal_key(k, *seq, *kind), v.clone()))
        .collect();
    want.sort_by(|a, b| key::compare_internal(&a.0, &b.0));
    assert_eq!(got.len(), want.len());
    assert!(
        got == want,
        "the compaction of the virtual tables yields the original entries"
    );
    let probes = probes(&s.rows, &s.tombstones);
    assert!(
        coverage(&got_rd, &probes) == coverage(&s.tombstones, &probes),
        "the tombstones delete what the originals did: {got_rd:?}"
    );
    let after = install(&s.vs, out.edit, &out.refs);
    assert_eq!(after.parents().count(), 0);
}

/// Phase 1: the two L1 and the two L2 tables become L2 virtual tables cut by
/// `first`; phase 2: those and the L3 table become L3 virtual tables cut by
/// `second`, inheriting the L2 tables' slices clipped to the new tiles; then a real
/// compaction of them yields the original entries.
fn virtualize_twice(first: Partitioning, second: Partitioning) -> (usize, usize) {
    let s = scenario();
    let cache = cache_of(&s.vs);
    let ctx = keep_all_context(&s.vs, &cache, &s.version, MAX_SEQ);
    // Phase 1.
    let plan = virtualize_plan(vec![files(1, &s.l1), files(2, &s.l2)], 2, first);
    let out = execute(&plan, &ctx).expect("virtualize");
    assert!(out.refs.is_empty() && out.bytes_read == 0 && out.bytes_written() == 0);
    let l1_l2_rows: Vec<Row> = s.rows.iter().filter(|r| r.0 < k(250)).cloned().collect();
    let tiles = check_tiles(&out, &plan, 2, &l1_l2_rows);
    let real: Vec<&Arc<FileMetaData>> = s.l1.iter().chain(&s.l2).collect();
    let mut parents: Vec<u64> = out.edit.new_parents.iter().map(|p| p.number).collect();
    parents.sort_unstable();
    assert_eq!(parents, real.iter().map(|f| f.number).collect::<Vec<_>>());
    let sliced = by_parent(&tiles);
    for p in &real {
        // The slices of a real input cover it exactly, and their bytes add up to its
        // file's size: a parent just virtualized has no garbage.
        let sl = &sliced[&p.number];
        assert_eq!(
            sl.first().map(|s| s.smallest.as_slice()),
            Some(p.smallest_user_key())
        );
        assert_eq!(
            sl.last().map(|s| s.largest.as_slice()),
            Some(p.largest_user_key())
        );
        for w in sl.windows(2) {
            let [a, b] = w else { continue };
            assert_eq!(b.smallest, key_after(&a.largest));
        }
        assert_eq!(sl.iter().map(|s| s.bytes).sum::<u64>(), p.size);
    }
    // A tile counts its parents' tombstones where its slices meet them (each parent
    // holds one).
    for t in &tiles {
        let meeting: u64 = slices(t)
            .iter()
            .map(|sl| {
                let parent = real.iter().find(|p| p.number == sl.parent).expect("parent");
                let table = cache.get(parent).expect("open");
                let rd = table.range_dels().expect("each parent has a tombstone");
                u64::from(
                    !rd.clip(Some(&sl.smallest), Some(&key_after(&sl.largest)))
                        .is_empty(),
                )
            })
            .sum();
        assert_eq!(t.num_range_deletions, meeting, "tile {}", t.number);
    }
    let n_first = tiles.len();
    let v2 = install(&s.vs, out.edit, &[]);
    assert_eq!(v2.parents().count(), 4);
    assert!(v2.files(1).is_empty());
    let again = Version::new(5)
        .apply(&v2.to_snapshot_edit())
        .expect("apply");
    again
        .check_invariants()
        .expect("snapshot of the virtualized version");

    // Phase 2: the L2 virtual tables and the real L3 table.
    let l2 = v2.files(2).to_vec();
    let l3 = v2.files(3).to_vec();
    assert_eq!(l3, s.l3);
    let ctx = keep_all_context(&s.vs, &cache, &v2, MAX_SEQ);
    let plan = virtualize_plan(vec![files(2, &l2), files(3, &l3)], 3, second);
    let out = execute(&plan, &ctx).expect("virtualize again");
    let tiles3 = check_tiles(&out, &plan, 3, &s.rows);
    assert_eq!(
        out.edit
            .new_parents
            .iter()
            .map(|p| p.number)
            .collect::<Vec<_>>(),
        l3.iter().map(|f| f.number).collect::<Vec<_>>(),
        "only the real input is a new parent"
    );
    let new_sliced = by_parent(&tiles3);
    for (parent, old) in &sliced {
        let new = &new_sliced[parent];
        // Each inherited slice lies inside one old slice of its parent, and the old
        // slices' bytes are split without loss.
        for n in new {
            assert!(
                old.iter()
                    .any(|o| o.smallest <= n.smallest && n.largest <= o.largest),
                "slice {n:?} of parent {parent} inside an old slice"
            );
        }
        assert_eq!(
            new.iter().map(|s| s.bytes).sum::<u64>(),
            old.iter().map(|s| s.bytes).sum::<u64>()
        );
    }
    let v3 = install(&s.vs, out.edit, &[]);
    assert_eq!(v3.parents().count(), 5);
    assert!(v3.files(2).is_empty());
    compact_and_compare(&s, &v3, 3);
    drop(s.dir);
    (n_first, tiles3.len())
}

#[test]
fn fixed_size_tiles_then_aligned_tiles_keep_every_entry() {
    let grandparents: Vec<Arc<FileMetaData>> =
        [("k0000", "k0040"), ("k0041", "k0120"), ("k0200", "k0260")]
            .iter()
            .enumerate()
            .map(|(i, (lo, hi))| {
                Arc::new(FileMetaData::for_test(900 + i as u64, lo, hi, 1, 1, 1000))
            })
            .collect();
    let (a, b) = virtualize_twice(
        Partitioning::Fixed { target: 4096 },
        Partitioning::Aligned {
            grandparents,
            target: 8192,
            variance: 2.0,
        },
    );
    assert!(a > 2 && b > 1, "several tiles: {a}, {b}");
}

#[test]
fn aligned_tiles_then_fixed_size_tiles_keep_every_entry() {
    let grandparents: Vec<Arc<FileMetaData>> =
        [("k0020", "k0060"), ("k0061", "k0130"), ("k0131", "k0300")]
            .iter()
            .enumerate()
            .map(|(i, (lo, hi))| {
                Arc::new(FileMetaData::for_test(900 + i as u64, lo, hi, 1, 1, 1000))
            })
            .collect();
    let (a, b) = virtualize_twice(
        Partitioning::Aligned {
            grandparents,
            target: 4096,
            variance: 2.0,
        },
        Partitioning::Fixed { target: 6000 },
    );
    assert!(a > 1 && b > 1, "several tiles: {a}, {b}");
}

/// Fixed-size tiles end at the first block boundary past the target; aligned tiles
/// end at a grandparent's end once past `target / variance`, never inside a
/// grandparent below `target * variance`.
#[test]
fn tiles_are_cut_where_the_stream_cuts() {
    let s = scenario();
    let cache = cache_of(&s.vs);
    let ctx = keep_all_context(&s.vs, &cache, &s.version, MAX_SEQ);
    let inputs = || vec![files(1, &s.l1), files(2, &s.l2)];
    let target = 4096;
    let plan = virtualize_plan(inputs(), 2, Partitioning::Fixed { target });
    let out = execute(&plan, &ctx).expect("fixed");
    let tiles = check_tiles(&out, &plan, 2, &[]);
    let (last, interior) = tiles.split_last().expect("tiles");
    assert!(interior.len() >= 2);
    for t in interior {
        assert!(t.size >= target, "tile {} of {} bytes", t.number, t.size);
        assert!(
            t.size < 2 * target,
            "cut at the first boundary past the target"
        );
    }
    assert!(last.size > 0);
    let grandparents: Vec<Arc<FileMetaData>> =
        [("k0000", "k0030"), ("k0031", "k0090"), ("k0091", "k0190")]
            .iter()
            .enumerate()
            .map(|(i, (lo, hi))| {
                Arc::new(FileMetaData::for_test(900 + i as u64, lo, hi, 1, 1, 1000))
            })
            .collect();
    let plan = virtualize_plan(
        inputs(),
        2,
        Partitioning::Aligned {
            grandparents: grandparents.clone(),
            target,
            variance: 2.0,
        },
    );
    let out = execute(&plan, &ctx).expect("aligned");
    let tiles = check_tiles(&out, &plan, 2, &[]);
    let (_, interior) = tiles.split_last().expect("tiles");
    assert!(!interior.is_empty());
    for t in interior {
        let end = t.largest_user_key();
        let at_grandparent_end = grandparents.iter().any(|g| g.largest_user_key() == end);
        let inside = grandparents
            .iter()
            .any(|g| g.smallest_user_key() <= end && end < g.largest_user_key());
        if at_grandparent_end {
            assert!(
                t.size >= target / 2,
                "aligned cut of a tile of {} bytes",
                t.size
            );
        } else if inside {
            assert!(
                t.size >= target * 2,
                "cut inside a grandparent below the max"
            );
        } else {
            assert!(t.size >= target, "cut in a gap below the target");
        }
    }
    assert!(
        interior.iter().any(|t| grandparents
            .iter()
            .any(|g| g.largest_user_key() == t.largest_user_key())),
        "some tile ends at a grandparent's end"
    );
}

#[test]
fn a_malformed_virtualize_plan_is_an_internal_error() {
    let s = scenario();
    let cache = cache_of(&s.vs);
    let ctx = keep_all_context(&s.vs, &cache, &s.version, MAX_SEQ);
    let fixed = Partitioning::Fixed { target: 4096 };
    // Into L0.
    let plan = virtualize_plan(vec![files(1, &s.l1)], 0, fixed.clone());
    let err = execute(&plan, &ctx).expect_err("L0");
    assert_eq!(err.kind(), crate::ErrorKind::Internal, "{err}");
    // A parent on another path than the stream's.
    let mut plan = virtualize_plan(vec![files(1, &s.l1)], 2, fixed.clone());
    plan.outputs[0].path_id = 1;
    let err = execute(&plan, &ctx).expect_err("path");
    assert!(err.to_string().contains("path_id"), "{err}");
    assert_eq!(err.kind(), crate::ErrorKind::Internal, "{err}");
    // No output stream.
    let mut plan = virtualize_plan(vec![files(1, &s.l1)], 2, fixed);
    plan.outputs.clear();
    let err = execute(&plan, &ctx).expect_err("no stream");
    assert_eq!(err.kind(), crate::ErrorKind::Internal, "{err}");
}

/// The block boundaries of a range lie in it, ascending, and split its bytes exactly.
#[test]
fn block_boundaries_split_a_range_exactly() {
    let s = scenario();
    let cache = cache_of(&s.vs);
    let f = s.l1.first().expect("L1 file");
    let table = cache.get(f).expect("open");
    let (lo, hi) = (k(10), k(40));
    let cuts = table.block_boundaries(&lo, &hi).expect("boundaries");
    assert!(cuts.len() > 2, "blocks of 256 bytes: {cuts:?}");
    assert!(cuts.windows(2).all(|w| w[0] < w[1]));
    assert!(cuts.iter().all(|u| lo <= *u && *u <= hi));
    let whole = table.approximate_range_bytes(&lo, &hi).expect("bytes");
    for u in cuts.iter().filter(|u| **u < hi) {
        let left = table.approximate_range_bytes(&lo, u).expect("left");
        let right = table
            .approximate_range_bytes(&key_after(u), &hi)
            .expect("right");
        assert!(left > 0 && right > 0, "a cut at {u:?} falls between blocks");
        assert_eq!(left + right, whole);
    }
}
