//! Golden-style tests of the leveled picker on hand-built versions. Each plan is
//! rendered as one line (`describe`) and compared with the expected line.

use super::*;
use crate::compaction::placement::ByLevel;
use crate::compaction::plan::{OutputRange, Partitioning};
use crate::version::VersionEdit;

/// `(level, number, lo, hi, smallest_seqno, largest_seqno, size)`.
type Spec<'a> = (usize, u64, &'a str, &'a str, u64, u64, u64);

fn version(specs: &[Spec<'_>]) -> Version {
    let mut edit = VersionEdit::default();
    for &(level, number, lo, hi, s0, s1, size) in specs {
        edit.new_files
            .push((level, FileMetaData::for_test(number, lo, hi, s0, s1, size)));
    }
    let v = Version::new(4).apply(&edit).expect("apply");
    v.check_invariants().expect("invariants");
    v
}

/// L1 target 1000 bytes, x10 per level, 4 levels, L0 trigger 4.
fn opts(priority: CompactionPriority) -> Options {
    Options {
        max_bytes_for_level_base: 1000,
        max_bytes_for_level_multiplier: 10.0,
        num_levels: 4,
        level0_file_num_compaction_trigger: 4,
        compaction_priority: priority,
        ..Options::default()
    }
}

fn nums(files: &[Arc<FileMetaData>]) -> String {
    let v: Vec<String> = files.iter().map(|f| f.number.to_string()).collect();
    format!("[{}]", v.join(","))
}

/// One line per plan picked from `v` under `o`, with its start level's score; a trivial
/// move ends in ` move`.
fn describe(v: &Version, o: &Options, plan: Option<Plan>) -> String {
    match plan {
        None => "none".to_string(),
        Some(p) => {
            let level = p.start_level().expect("compaction plans read files");
            let [stream] = p.outputs.as_slice() else {
                panic!("picker plans have one output stream");
            };
            let gp = match &stream.partitioning {
                Partitioning::Aligned { grandparents, .. } => nums(grandparents),
                Partitioning::Fixed { .. } => "-".to_string(),
            };
            format!(
                "L{}->L{} in={} out={} gp={} bottom={} {:?} score={:.2}{}",
                level,
                stream.level,
                nums(p.files_at(level)),
                nums(p.files_at(stream.level)),
                gp,
                p.bottommost,
                p.reason,
                scores(v, o)[level],
                if p.action == Action::TrivialMove {
                    " move"
                } else {
                    ""
                }
            )
        }
    }
}

const MIN: CompactionPriority = CompactionPriority::MinOverlappingRatio;
const OLD: CompactionPriority = CompactionPriority::OldestSmallestSeqFirst;

#[test]
fn targets_and_scores() {
    assert_eq!(level_targets(&opts(MIN)), [0, 1000, 10_000, 100_000]);
    // Entry k stretches L(k+1) and every deeper target; entries past the end are 1.
    let stretched = opts(MIN).with_max_bytes_for_level_multiplier_additional(vec![1.0, 2.5]);
    assert_eq!(level_targets(&stretched), [0, 1000, 25_000, 250_000]);
    let v = version(&[
        (0, 20, "a", "b", 10, 11, 50),
        (0, 21, "a", "b", 12, 13, 50),
        (1, 10, "a", "c", 1, 2, 1500),
        (2, 5, "a", "z", 1, 1, 5000),
        (3, 1, "a", "z", 1, 1, 999_999),
    ]);
    assert_eq!(scores(&v, &opts(MIN)), [0.5, 1.5, 0.5, 0.0]);
}

#[test]
fn l0_trigger_takes_all_l0_and_overlapping_l1() {
    let v = version(&[
        (0, 20, "c", "e", 10, 11, 10),
        (0, 21, "d", "f", 12, 13, 10),
        (0, 22, "a", "b", 14, 15, 10),
        (0, 23, "e", "e", 16, 17, 10),
        (1, 10, "a", "a", 1, 2, 100),
        (1, 11, "b", "d", 1, 2, 100),
        (1, 12, "x", "y", 1, 2, 100),
        (2, 5, "f", "g", 1, 1, 100),
        (2, 6, "h", "i", 1, 1, 100),
    ]);
    assert_eq!(
        describe(
            &v,
            &opts(MIN),
            pick(&v, &opts(MIN), &ByLevel, &Busy::default())
        ),
        "L0->L1 in=[23,22,21,20] out=[10,11] gp=[5] bottom=false L0FileCount score=1.00"
    );
    // One busy L0 file blocks the whole L0 compaction; nothing else scores >= 1.
    let busy = Busy {
        files: [21].into(),
        ..Busy::default()
    };
    assert_eq!(
        describe(&v, &opts(MIN), pick(&v, &opts(MIN), &ByLevel, &busy)),
        "none"
    );
    // So does a busy overlapping L1 file, or a running compaction writing into L1.
    let busy = Busy {
        files: [11].into(),
        ..Busy::default()
    };
    assert_eq!(
        describe(&v, &opts(MIN), pick(&v, &opts(MIN), &ByLevel, &busy)),
        "none"
    );
    let busy = Busy {
        output_ranges: vec![OutputRange::rows(1, b"f", b"g")],
        ..Busy::default()
    };
    assert_eq!(
        describe(&v, &opts(MIN), pick(&v, &opts(MIN), &ByLevel, &busy)),
        "none"
    );
    // A running compaction into L2 does not conflict with L0->L1.
    let busy = Busy {
        output_ranges: vec![OutputRange::rows(2, b"a", b"z")],
        ..Busy::default()
    };
    assert!(pick(&v, &opts(MIN), &ByLevel, &busy).is_some());
}

/// L1 is 2.4x its target. Its files, with the L2 bytes each overlaps:
/// 10 [a,c] 400 bytes, overlaps 5 (4000) -> ratio 10240, smallest_seqno 1
/// 11 [d,f] 800 bytes, overlaps 6 (400)  -> ratio 512,   smallest_seqno 3
/// 12 [g,i] 800 bytes, overlaps 7+8 (1600) -> ratio 2048, smallest_seqno 2
/// 13 [j,k] 400 bytes, overlaps nothing in L2 but 9 in L3 -> ratio 0, seqno 4
fn size_triggered() -> Version {
    version(&[
        (1, 10, "a", "c", 1, 9, 400),
        (1, 11, "d", "f", 3, 9, 800),
        (1, 12, "g", "i", 2, 9, 800),
        (1, 13, "j", "k", 4, 9, 400),
        (2, 5, "a", "c", 0, 0, 4000),
        (2, 6, "d", "f", 0, 0, 400),
        (2, 7, "g", "g", 0, 0, 800),
        (2, 8, "h", "h", 0, 0, 800),
        (3, 1, "a", "a", 0, 0, 1000),
        (3, 9, "k", "m", 0, 0, 1000),
    ])
}

#[test]
fn size_trigger_min_overlapping_ratio() {
    let v = size_triggered();
    assert_eq!(
        describe(
            &v,
            &opts(MIN),
            pick(&v, &opts(MIN), &ByLevel, &Busy::default())
        ),
        "L1->L2 in=[13] out=[] gp=[9] bottom=false LevelSize score=2.40 move"
    );
    // 13 busy: next is 11 (ratio 512), whose range [d,f] has nothing in L3.
    let busy = Busy {
        files: [13].into(),
        ..Busy::default()
    };
    assert_eq!(
        describe(&v, &opts(MIN), pick(&v, &opts(MIN), &ByLevel, &busy)),
        "L1->L2 in=[11] out=[6] gp=[] bottom=true LevelSize score=2.40"
    );
    // ...and if 11's L2 file is busy too, 12 (ratio 2048).
    let busy = Busy {
        files: [13, 6].into(),
        ..Busy::default()
    };
    assert_eq!(
        describe(&v, &opts(MIN), pick(&v, &opts(MIN), &ByLevel, &busy)),
        "L1->L2 in=[12] out=[7,8] gp=[] bottom=true LevelSize score=2.40"
    );
    // A running compaction writing [f,g] into L2 blocks 11 and 12: 10 is left.
    let busy = Busy {
        files: [13].into(),
        output_ranges: vec![OutputRange::rows(2, b"f", b"g")],
    };
    assert_eq!(
        describe(&v, &opts(MIN), pick(&v, &opts(MIN), &ByLevel, &busy)),
        "L1->L2 in=[10] out=[5] gp=[1] bottom=false LevelSize score=2.40"
    );
}

#[test]
fn size_trigger_oldest_smallest_seq_first() {
    let v = size_triggered();
    assert_eq!(
        describe(
            &v,
            &opts(OLD),
            pick(&v, &opts(OLD), &ByLevel, &Busy::default())
        ),
        "L1->L2 in=[10] out=[5] gp=[1] bottom=false LevelSize score=2.40"
    );
    let busy = Busy {
        files: [10].into(),
        ..Busy::default()
    };
    assert_eq!(
        describe(&v, &opts(OLD), pick(&v, &opts(OLD), &ByLevel, &busy)),
        "L1->L2 in=[12] out=[7,8] gp=[] bottom=true LevelSize score=2.40"
    );
}

#[test]
fn highest_score_wins_and_blocked_levels_fall_through() {
    // L0 score 1.25 (5 files), L1 score 2.0.
    let mut specs: Vec<Spec<'_>> = (0..5u64)
        .map(|i| (0, 30 + i, "a", "z", 10 + 2 * i, 11 + 2 * i, 10))
        .collect();
    specs.push((1, 10, "a", "m", 1, 2, 1000));
    specs.push((1, 11, "n", "z", 1, 2, 1000));
    let v = version(&specs);
    assert_eq!(
        describe(
            &v,
            &opts(MIN),
            pick(&v, &opts(MIN), &ByLevel, &Busy::default())
        ),
        "L1->L2 in=[10] out=[] gp=[] bottom=true LevelSize score=2.00 move"
    );
    // Both L1 files busy (say, an L1->L2 compaction each): L0 cannot run either,
    // because its plan needs them.
    let busy = Busy {
        files: [10, 11].into(),
        ..Busy::default()
    };
    assert_eq!(
        describe(&v, &opts(MIN), pick(&v, &opts(MIN), &ByLevel, &busy)),
        "none"
    );
    // Only 10 busy: L1 picks 11; L0 would need both.
    let busy = Busy {
        files: [10].into(),
        ..Busy::default()
    };
    assert_eq!(
        describe(&v, &opts(MIN), pick(&v, &opts(MIN), &ByLevel, &busy)),
        "L1->L2 in=[11] out=[] gp=[] bottom=true LevelSize score=2.00 move"
    );
}

#[test]
fn last_level_never_compacts() {
    let v = version(&[(3, 1, "a", "z", 1, 1, u64::MAX / 2)]);
    assert_eq!(scores(&v, &opts(MIN))[3], 0.0);
    assert_eq!(
        describe(
            &v,
            &opts(MIN),
            pick(&v, &opts(MIN), &ByLevel, &Busy::default())
        ),
        "none"
    );
    assert_eq!(
        describe(
            &v,
            &opts(MIN),
            pick_manual(&v, &opts(MIN), &ByLevel, 3, None, None, &Busy::default())
        ),
        "none"
    );
}

#[test]
fn manual_compaction() {
    let v = version(&[
        (0, 20, "a", "c", 10, 11, 10),
        (0, 21, "c", "f", 12, 13, 10),
        (0, 22, "x", "y", 14, 15, 10),
        (1, 10, "a", "b", 1, 2, 100),
        (1, 11, "e", "g", 1, 2, 100),
        (1, 12, "m", "n", 1, 2, 100),
        (2, 5, "g", "h", 1, 1, 100),
    ]);
    let o = opts(MIN);
    let none = Busy::default();
    // [a,a] overlaps only 20, but 21 overlaps 20's range: the L0 range is widened.
    assert_eq!(
        describe(
            &v,
            &o,
            pick_manual(&v, &o, &ByLevel, 0, Some(b"a"), Some(b"a"), &none)
        ),
        "L0->L1 in=[21,20] out=[10,11] gp=[5] bottom=false Manual score=0.75"
    );
    // Below L0, one file at a time: the first in range, with what it overlaps below.
    assert_eq!(
        describe(
            &v,
            &o,
            pick_manual(&v, &o, &ByLevel, 1, Some(b"c"), Some(b"m"), &none)
        ),
        "L1->L2 in=[11] out=[5] gp=[] bottom=true Manual score=0.30"
    );
    assert_eq!(
        describe(
            &v,
            &o,
            pick_manual(&v, &o, &ByLevel, 1, Some(b"c"), Some(b"d"), &none)
        ),
        "none"
    );
    let busy = Busy {
        files: [5].into(),
        ..Busy::default()
    };
    // File 11 overlaps the busy 5 below; 10 is free and overlaps nothing: it moves.
    assert_eq!(
        describe(&v, &o, pick_manual(&v, &o, &ByLevel, 1, None, None, &busy)),
        "L1->L2 in=[10] out=[] gp=[] bottom=true Manual score=0.30 move"
    );
    let held = Busy {
        files: [10].into(),
        ..Busy::default()
    };
    assert_eq!(
        describe(&v, &o, pick_manual(&v, &o, &ByLevel, 1, None, None, &held)),
        "L1->L2 in=[11] out=[5] gp=[] bottom=true Manual score=0.30"
    );
}

#[test]
fn busy_add_and_remove_plan() {
    let v = size_triggered();
    let o = opts(MIN);
    let mut busy = Busy::default();
    let first = pick(&v, &o, &ByLevel, &busy).expect("first");
    busy.add_plan(&first);
    assert_eq!(busy.files, [13].into());
    assert_eq!(busy.output_ranges, [OutputRange::rows(2, b"j", b"k")]);
    let second = pick(&v, &o, &ByLevel, &busy).expect("second");
    assert_eq!(nums(second.files_at(1)), "[11]");
    busy.add_plan(&second);
    busy.remove_plan(&first);
    assert_eq!(busy.files, [11, 6].into());
    assert_eq!(busy.output_ranges, [OutputRange::rows(2, b"d", b"f")]);
    assert_eq!(second.input_bytes(), 1200);
    assert_eq!(second.user_key_range(), Some((&b"d"[..], &b"f"[..])));
}

/// Jobs writing different runs of one level (`version::run`) do not conflict; the
/// same run across the same keys does; `output_conflict`, for policies that plan a
/// whole level, sees every run.
#[test]
fn busy_holds_output_ranges_per_run() {
    let v = size_triggered();
    let o = opts(MIN);
    let plan = pick(&v, &o, &ByLevel, &Busy::default()).expect("plan");
    let (lo, hi) = plan.user_key_range().expect("range");
    let (lo, hi) = (lo.to_vec(), hi.to_vec());
    let level = plan.outputs[0].level;
    let mut other_group = Busy::default();
    other_group.output_ranges.push(OutputRange {
        group: 7,
        ..OutputRange::rows(level, &lo, &hi)
    });
    assert!(!other_group.conflicts(&plan), "another run of the level");
    assert!(
        other_group.output_conflict(level, &lo, &hi),
        "a whole-level question"
    );
    let mut same = Busy::default();
    same.output_ranges.push(OutputRange::rows(level, &hi, &hi));
    assert!(same.conflicts(&plan), "the same run, meeting keys");
    let mut beside = Busy::default();
    beside.output_ranges.push(OutputRange::rows(
        level,
        &[hi.as_slice(), b"\0"].concat(),
        b"zzz",
    ));
    assert!(!beside.conflicts(&plan), "the same run, keys beside");
    // A plan's streams hold their own groups.
    let mut grouped = plan.clone();
    grouped.outputs[0].column_group = 7;
    assert_eq!(grouped.stream_ranges()[0].group, 7);
    assert!(other_group.conflicts(&grouped));
}

#[test]
fn pending_bytes_estimate() {
    let o = opts(MIN);
    // Nothing over target.
    let v = version(&[(1, 10, "a", "b", 1, 1, 1000), (2, 5, "a", "b", 1, 1, 10)]);
    assert_eq!(pending_compaction_bytes(&v, &o), 0);
    // L1 = 2400 (target 1000): excess 1400 moves down, L2 holds 6000 bytes:
    // 1400 * (6000 / 2400 + 1) = 4900; L2 then holds 7400 < 10000.
    assert_eq!(pending_compaction_bytes(&size_triggered(), &o), 4900);
    // L0 triggered (4 files, 40 bytes): 40 + L1 1000, and L1 becomes 1040 (excess 40),
    // L2 holds 9500 (< target 10000 even with 40 carried in): 40 * (9500/1040 + 1) = 405.
    let mut specs: Vec<Spec<'_>> = (0..4u64)
        .map(|i| (0, 30 + i, "a", "z", 10 + 2 * i, 11 + 2 * i, 10))
        .collect();
    specs.push((1, 10, "a", "z", 1, 2, 1000));
    specs.push((2, 5, "a", "z", 1, 1, 9500));
    let v = version(&specs);
    assert_eq!(pending_compaction_bytes(&v, &o), 40 + 1000 + 405);
}

/// A file that would land over more than ten target files of grandparents is
/// rewritten (cut along them), not moved (LevelDB's `MaxGrandParentOverlapBytes`).
#[test]
fn trivial_move_refused_over_too_many_grandparent_bytes() {
    let v = version(&[
        (1, 10, "a", "z", 1, 9, 2000),
        (3, 20, "a", "m", 0, 0, 3000),
        (3, 21, "n", "z", 0, 0, 3000),
    ]);
    let mut o = opts(MIN);
    o.target_file_size_base = 1000;
    // L2 is empty: the grandparents of an L1->L2 plan are in L3 (6000 bytes).
    let mut limit_ok = o.clone();
    limit_ok.target_file_size_base = 600;
    assert_eq!(
        describe(
            &v,
            &limit_ok,
            pick(&v, &limit_ok, &ByLevel, &Busy::default())
        ),
        "L1->L2 in=[10] out=[] gp=[20,21] bottom=false LevelSize score=2.00 move",
        "6000 bytes of grandparents = 10 x 600: still a move"
    );
    let mut too_many = o;
    too_many.target_file_size_base = 599;
    assert_eq!(
        describe(
            &v,
            &too_many,
            pick(&v, &too_many, &ByLevel, &Busy::default())
        ),
        "L1->L2 in=[10] out=[] gp=[20,21] bottom=false LevelSize score=2.00",
        "6000 bytes > 10 x 599: rewritten"
    );
}
