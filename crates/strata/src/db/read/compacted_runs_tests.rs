//! Runs written by the one executor, through a test compaction policy: all of L0,
//! with every file of L1 (any run) its range meets, widened until closed, into the
//! runs of L1 the policy names; once L1 is large, all of L1 and L2 into L2's row run.
//! Every job rewrites all of L1's entries in its range, so each level's merge stays
//! one sorted run of the right versions. Two routings:
//! - each key sent whole to a run chosen afresh by every job, so keys move from run
//!   to run;
//! - each record split by column into two runs (the record fan-out): rows of three
//!   columns, updated in part by merge operands, reunited by the operator on every
//!   read, and folded back into rows when L1 goes into L2's row run.
//!
//! Reads during and after must equal a model.

use super::tests::{check_reads, key, opts, Model};
use super::*;
use crate::compaction::picker::Busy;
use crate::compaction::plan::{
    Input, OutputStream, Partitioning, Parts, Router, Routing, Splitter,
};
use crate::compaction::{
    Action, CompactionPolicy, Coverage, PlacementPolicy, Plan, Reason, Requests,
};
use crate::db::Db;
use crate::key::ParsedKey;
use crate::key::ValueKind;
use crate::merge::{MergeError, MergeOperator};
use crate::options::Options;
use crate::options::WriteOptions;
use crate::version::Version;
use std::collections::BTreeMap;

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
        (h % 3) as usize
    }
}

/// The test policy (module docs): L0 into the L1 runs of `groups`, each job's
/// records sent by `routing(salt)`, a salt that changes from job to job.
#[derive(Debug)]
struct RunsPolicy {
    groups: &'static [u32],
    routing: fn(u64) -> Routing,
}

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

fn plan(
    opts: &Options,
    inputs: Vec<Input>,
    level: usize,
    streams: &[u32],
    routing: Routing,
) -> Plan {
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
        routing,
        bottommost: level == 2,
        log_number: None,
        reason: Reason::LevelSize,
        range: None,
    }
}

impl CompactionPolicy for RunsPolicy {
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
            return Some(plan(opts, inputs, 1, self.groups, (self.routing)(salt)));
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
        Some(plan(opts, inputs, 2, &[0], Routing::single()))
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

/// Keys sent whole to one of three runs, chosen afresh by each job.
const SCATTERED: RunsPolicy = RunsPolicy {
    groups: &[0, 5, 9],
    routing: |salt| Routing::Keys(Arc::new(Scatter(salt))),
};

fn open(dir: &std::path::Path, policy: RunsPolicy, opts: Options) -> Db {
    Db::builder()
        .compaction_policy(Arc::new(policy))
        .open(dir, opts)
        .unwrap()
}

/// What a workload writes: a put's value and a merge operand for key `i` in a round,
/// and how the model applies an operand to a value.
struct Workload {
    put: fn(u32, u32) -> Vec<u8>,
    operand: fn(u32, u32) -> Vec<u8>,
    merge: fn(Option<&[u8]>, &[u8]) -> Vec<u8>,
}

/// 24 rounds of puts, merges, deletes, range deletions and snapshots under `policy`,
/// each round flushed and settled, reads checked against the model every fourth
/// round, at the end, and after a reopen. Returns in how many rounds L1 held
/// column-group runs.
fn drive(policy: fn() -> RunsPolicy, opts: fn() -> Options, w: &Workload) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let wo = WriteOptions::default();
    let db = open(dir.path(), policy(), opts());
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
                    let op = (w.operand)(round, i);
                    db.merge(&wo, &key(i), &op).unwrap();
                    let v = (w.merge)(model.get(&key(i)).map(Vec::as_slice), &op);
                    model.insert(key(i), v);
                }
                _ => {
                    let v = (w.put)(round, i);
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
        if db.inner.default.versions.current().has_group_runs(1) {
            seen_runs += 1;
        }
        if round % 4 == 3 {
            check_reads(&db, &model, &snaps);
        }
    }
    let v = db.inner.default.versions.current();
    assert!(!v.files(2).is_empty(), "L1 was compacted into L2");
    drop(v);
    // The policy plans no manual step: `compact_range` flushes and ends (it waited
    // forever for a plan while no job ran, before).
    db.compact_range(None, None).unwrap();
    check_reads(&db, &model, &snaps);
    snaps.clear();
    db.close().unwrap();
    let db = open(dir.path(), policy(), opts());
    check_reads(&db, &model, &[]);
    assert!(db.verify_checksums().unwrap() > 0);
    seen_runs
}

#[test]
fn keys_moving_between_runs_read_as_a_model_says() {
    let w = Workload {
        put: |round, i| format!("v{round}-{i}-{}", "x".repeat(20)).into_bytes(),
        operand: |_, _| b"m".to_vec(),
        merge: |old, op| match old {
            Some(old) => [old, b",", op].concat(),
            None => op.to_vec(),
        },
    };
    let seen_runs = drive(|| SCATTERED, scatter_opts, &w);
    assert!(
        seen_runs >= 10,
        "L1 held column-group runs after {seen_runs} rounds"
    );
}

/// A row or a part of one: column name to value, or to `None` for a column the part
/// clears; written `a=1;b;c=3` in name order (`b` cleared).
type Row = BTreeMap<u8, Option<Vec<u8>>>;

fn decode(v: &[u8]) -> Row {
    v.split(|&b| b == b';')
        .filter_map(|cell| match cell {
            [col] => Some((*col, None)),
            [col, b'=', value @ ..] => Some((*col, Some(value.to_vec()))),
            _ => None,
        })
        .collect()
}

fn encode(row: &Row) -> Vec<u8> {
    let cells: Vec<Vec<u8>> = row
        .iter()
        .map(|(col, value)| match value {
            Some(v) => [&[*col, b'='][..], v].concat(),
            None => vec![*col],
        })
        .collect();
    cells.join(&b';')
}

/// `row` with `part` applied: its values set, its cleared columns gone.
fn apply(mut row: Row, part: Row) -> Row {
    for (col, value) in part {
        match value {
            Some(v) => row.insert(col, Some(v)),
            None => row.remove(&col),
        };
    }
    row
}

/// The row operator: an operand's columns replace the row's, its cleared columns
/// go; partial merges keep the cleared columns, so a part still clears what lies
/// below it. A row's parts from several runs unite whatever their order, as they
/// name different columns.
#[derive(Debug)]
struct Columns;

impl MergeOperator for Columns {
    fn name(&self) -> &str {
        "test.columns"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> std::result::Result<Vec<u8>, MergeError> {
        let row = operands
            .iter()
            .fold(existing.map(decode).unwrap_or_default(), |row, op| {
                apply(row, decode(op))
            });
        Ok(encode(&row))
    }

    fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let mut part = Row::new();
        for op in operands {
            part.extend(decode(op));
        }
        Some(encode(&part))
    }
}

/// Columns `a` and `b` to stream 0, `c` to stream 1, each part a merge operand: a
/// put's part names every column of its stream (those the value lacks cleared: a put
/// replaces the whole row, including what deeper levels hold of it); an operand's
/// part only the columns the operand names; a delete goes to both streams.
#[derive(Debug)]
struct ByColumn;

impl Splitter for ByColumn {
    fn split(&self, entry: &ParsedKey<'_>, value: &[u8], parts: &mut Parts) {
        if entry.kind == ValueKind::Delete {
            parts.add(0, ValueKind::Delete, |_| {});
            parts.add(1, ValueKind::Delete, |_| {});
            return;
        }
        let row = decode(value);
        for (stream, columns) in [(0, &b"ab"[..]), (1, &b"c"[..])] {
            let part: Row = columns
                .iter()
                .filter_map(|c| match (row.get(c), entry.kind) {
                    (Some(v), _) => Some((*c, v.clone())),
                    (None, ValueKind::Put) => Some((*c, None)),
                    (None, _) => None,
                })
                .collect();
            if !part.is_empty() {
                parts.add(stream, ValueKind::Merge, |v| v.extend(encode(&part)));
            }
        }
    }
}

/// Rows of three columns split by column into two runs of L1 by every L0 job (the
/// record fan-out), updated in part by operands naming one or two columns: every read
/// reunites the parts through the operator, and the compaction of L1 into L2's row
/// run folds them back into rows.
#[test]
fn rows_split_by_column_into_runs_read_whole() {
    fn split() -> RunsPolicy {
        RunsPolicy {
            groups: &[1, 2],
            routing: |_| Routing::Records(Arc::new(ByColumn)),
        }
    }
    fn columns_opts() -> Options {
        scatter_opts().with_merge_operator(Some(Arc::new(Columns)))
    }
    let w = Workload {
        put: |round, i| format!("a=a{round};b=b{i};c=c{round}-{i}").into_bytes(),
        operand: |round, i| {
            match i % 3 {
                0 => format!("a=A{round}"),
                1 => format!("c=C{round}"),
                _ => format!("b=B{round};c=C{round}"),
            }
            .into_bytes()
        },
        merge: |old, op| encode(&apply(old.map(decode).unwrap_or_default(), decode(op))),
    };
    let seen_runs = drive(split, columns_opts, &w);
    assert!(
        seen_runs >= 10,
        "L1 held column-group runs after {seen_runs} rounds"
    );
}
