//! The rewrite fed from outside (chunks of an external merged stream) against the
//! plan's own inputs, and plans that read and write only a key range.

use super::*;
use crate::compaction::executor::tests::{
    build_table, cache_of, contents, coverage, install, keep_all_context, model, probes,
    rewrite_plan, row, version_set, Entries, Row,
};
use crate::compaction::executor::{execute, key_after};
use crate::compaction::plan::{Input, KeyRange, Partitioning, Parts, Routing, Splitter};
use crate::iter::test_util::FailingIter;
use crate::key::ParsedKey;
use crate::key::ValueKind::{Delete, Merge, Put};
use crate::merge::Append;
use crate::range_del::RangeTombstone;
use crate::version::{Version, VersionEdit};

fn tombstone(start: &str, end: &str, seq: u64) -> RangeTombstone {
    RangeTombstone {
        start: start.as_bytes().to_vec(),
        end: end.as_bytes().to_vec(),
        seq,
    }
}

/// A run's rows and tombstones.
type Run = (Vec<Row>, Vec<RangeTombstone>);

/// Two runs with overwrites, deletes, merge chains across them and tombstones in both:
/// (upper rows, upper tombstones), (lower rows, lower tombstones).
fn two_runs() -> (Run, Run) {
    let upper = vec![
        row("b", 20, Put, "b20"),
        row("c", 21, Merge, "c21"),
        row("c", 19, Merge, "c19"),
        row("e", 22, Delete, ""),
        row("g", 23, Put, "g23"),
        row("h", 24, Merge, "h24"),
        row("k", 25, Put, "k25"),
    ];
    let lower = vec![
        row("a", 3, Put, "a3"),
        row("b", 4, Put, "b4"),
        row("c", 5, Put, "c5"),
        row("d", 6, Put, "d6"),
        row("e", 7, Put, "e7"),
        row("f", 8, Put, "f8"),
        row("g", 9, Merge, "g9"),
        row("h", 10, Put, "h10"),
        row("i", 11, Put, "i11"),
        row("j", 12, Put, "j12"),
    ];
    (
        (upper, vec![tombstone("f", "g", 18)]),
        (lower, vec![tombstone("i", "j", 2), tombstone("a", "b", 13)]),
    )
}

/// The two runs of [`two_runs`] as tables in L1 and L2 of `vs`, installed: the version,
/// and each run's table with its rows and tombstones.
fn installed_runs(vs: &VersionSet) -> (Arc<Version>, [(FileMetaData, Run); 2]) {
    let (upper, lower) = two_runs();
    let (up, up_ref) = build_table(vs, &upper.0, &upper.1, 64);
    let (low, low_ref) = build_table(vs, &lower.0, &lower.1, 64);
    let mut edit = VersionEdit::default();
    edit.new_files.push((1, up.clone()));
    edit.new_files.push((2, low.clone()));
    let version = install(vs, edit, &[up_ref, low_ref]);
    (version, [(up, upper), (low, lower)])
}

/// The input runs of a plan over the L1 table `up` and the L2 table `low`.
fn inputs(up: FileMetaData, low: FileMetaData) -> Vec<Input> {
    vec![
        Input::Files {
            level: 1,
            files: vec![Arc::new(up)],
        },
        Input::Files {
            level: 2,
            files: vec![Arc::new(low)],
        },
    ]
}

/// The entries of `rows` as one merged stream: internal-key order.
fn merged(rows: &[Row]) -> Entries {
    model(rows, &[("", "\u{10ffff}")])
}

/// Splits `entries` into chunks of `keys_per_chunk` user keys each.
fn chunks(entries: &Entries, keys_per_chunk: usize) -> Vec<Entries> {
    let mut out: Vec<Entries> = Vec::new();
    let mut keys_in_last = 0;
    let mut last_key: Option<Vec<u8>> = None;
    for e in entries {
        let k = key::user_key(&e.0).to_vec();
        if last_key.as_ref() != Some(&k) {
            if out.is_empty() || keys_in_last == keys_per_chunk {
                out.push(Vec::new());
                keys_in_last = 0;
            }
            keys_in_last += 1;
            last_key = Some(k);
        }
        if let Some(c) = out.last_mut() {
            c.push(e.clone());
        }
    }
    out
}

/// Feeding the merged stream of a plan's inputs in chunks of any size writes exactly
/// what the plan's own inputs write: the same files, bytes, entries and tombstones,
/// with version GC, merge folding (an operator, snapshots splitting chains) and
/// tombstone coverage running across chunk boundaries.
#[test]
fn chunks_of_a_merged_stream_write_what_the_plans_inputs_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = version_set(dir.path(), 4);
    let cache = cache_of(&vs);
    let (version, [(up, (up_rows, up_rd)), (low, (low_rows, low_rd))]) = installed_runs(&vs);
    let append = Append::new(b",");
    let ctx = JobContext {
        // Stripes split at 8 and 20: some versions and chains survive, some fold.
        snapshots: vec![8, 20],
        merge_operator: Some(&append),
        compaction_filter: None,
        ..keep_all_context(&vs, &cache, &version, 0)
    };
    let mut plan = rewrite_plan(inputs(up, low), 2);
    // Small output files, so chunk and file boundaries fall in many places.
    plan.outputs[0].partitioning = Partitioning::Fixed { target: 80 };
    let own = execute(&plan, &ctx).expect("the plan's own inputs");
    let own_files: Vec<&FileMetaData> = own.edit.new_files.iter().map(|(_, f)| f).collect();
    assert!(own_files.len() > 2, "{own_files:?}");
    let (own_entries, own_rd) = contents(&cache, own_files.iter().copied());

    let all_rows = [up_rows, low_rows].concat();
    let all_rd = [up_rd, low_rd].concat();
    let stream = merged(&all_rows);
    let probe = probes(&all_rows, &all_rd);
    for keys_per_chunk in 1..=4 {
        let mut rewrite = Rewrite::new(&plan, ctx.snapshots.clone(), Fragments::new(&all_rd))
            .expect("a rewrite plan");
        for chunk in chunks(&stream, keys_per_chunk) {
            let mut it = FailingIter::new(chunk, usize::MAX);
            it.seek_to_first();
            rewrite.feed(&mut it, &ctx).expect("feed");
        }
        let mut fed = Outcome::default();
        rewrite.finish(&plan, &ctx, &mut fed).expect("finish");
        let fed_files: Vec<&FileMetaData> = fed.edit.new_files.iter().map(|(_, f)| f).collect();
        let (fed_entries, fed_rd) = contents(&cache, fed_files.iter().copied());
        assert_eq!(fed_entries, own_entries, "{keys_per_chunk} keys per chunk");
        assert_eq!(coverage(&fed_rd, &probe), coverage(&own_rd, &probe));
        assert_eq!(fed.stream_bytes, own.stream_bytes, "{keys_per_chunk}");
        assert_eq!(fed_files.len(), own_files.len());
        assert_eq!(fed.edit.deleted_files, own.edit.deleted_files);
    }
}

/// A chunk that continues the last user key written, or goes back, is refused: its
/// merge chain or stream choice would be made from part of the key's entries.
#[test]
fn a_chunk_that_splits_or_reorders_user_keys_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = version_set(dir.path(), 4);
    let cache = cache_of(&vs);
    let version = vs.current();
    let ctx = keep_all_context(&vs, &cache, &version, 0);
    let plan = rewrite_plan(Vec::new(), 1);
    let stream = merged(&[
        row("b", 5, Put, "b5"),
        row("b", 3, Put, "b3"),
        row("c", 4, Put, "c4"),
    ]);
    // The last two cases drop the first chunk whole (a tombstone over `b` at 10), so
    // nothing was written when the split chunk comes.
    let over_b = Fragments::new(&[tombstone("b", "c", 10)]);
    for (first, second, rd) in [
        (1, 1, Fragments::default()),
        (2, 0, Fragments::default()),
        (1, 1, over_b.clone()),
        (2, 0, over_b),
    ] {
        let mut rewrite = Rewrite::new(&plan, Vec::new(), rd).expect("rewrite");
        let mut a = FailingIter::new(stream[..first].to_vec(), usize::MAX);
        a.seek_to_first();
        rewrite.feed(&mut a, &ctx).expect("first chunk");
        let mut b = FailingIter::new(stream[second..].to_vec(), usize::MAX);
        b.seek_to_first();
        let err = rewrite
            .feed(&mut b, &ctx)
            .expect_err("a split or repeated key");
        assert!(matches!(err, Error::Internal(_)), "{err}");
        assert!(err.to_string().contains("user-key boundaries"), "{err}");
    }
}

/// Plans over the same two files with the ranges `(.., d)`, `[d, h)` and `[h, ..)` read
/// and write only their range: their outputs hold the files' entries of the range and
/// the tombstones cut at its ends, the three together hold exactly what the whole
/// plan holds, their outcomes install as one edit over disjoint files, and the bytes
/// they count as read add up to the files' sizes.
#[test]
fn ranged_plans_read_and_write_only_their_range() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = version_set(dir.path(), 4);
    let cache = cache_of(&vs);
    let (version, [(up, (up_rows, up_rd)), (low, (low_rows, low_rd))]) = installed_runs(&vs);
    let max_seq = 25;
    let ctx = keep_all_context(&vs, &cache, &version, max_seq);
    let input_bytes = up.size + low.size;
    let inputs = inputs(up, low);
    let whole = execute(&rewrite_plan(inputs.clone(), 2), &ctx).expect("whole");
    let (whole_entries, whole_rd) = contents(&cache, whole.edit.new_files.iter().map(|(_, f)| f));
    let all_rows = [up_rows, low_rows].concat();
    let all_rd = [up_rd, low_rd].concat();
    let probe = probes(&all_rows, &all_rd);

    let k = |s: &str| Some(s.as_bytes().to_vec());
    let ranges = [(None, k("d")), (k("d"), k("h")), (k("h"), None)];
    let (mut entries, mut rd, mut bytes_read) = (Entries::new(), Vec::new(), 0);
    let mut combined = VersionEdit::default();
    let mut refs = Vec::new();
    for (start, end) in ranges {
        let range = KeyRange { start, end };
        let mut plan = rewrite_plan(inputs.clone(), 2);
        plan.range = Some(range.clone());
        let out = execute(&plan, &ctx).expect("ranged");
        let files: Vec<&FileMetaData> = out.edit.new_files.iter().map(|(_, f)| f).collect();
        let (e, t) = contents(&cache, files.iter().copied());
        let inside = |k: &[u8]| {
            range.start.as_deref().is_none_or(|s| s <= k)
                && range.end.as_deref().is_none_or(|x| k < x)
        };
        assert!(
            e.iter().all(|(ik, _)| inside(key::user_key(ik))),
            "{range:?}: {e:?}"
        );
        for t in &t {
            assert!(inside(&t.start), "{range:?}: {t:?}");
            assert!(
                range.end.as_deref().is_none_or(|x| t.end.as_slice() <= x),
                "{range:?}: {t:?}"
            );
        }
        assert!(
            out.bytes_read < input_bytes,
            "{range:?}: {}",
            out.bytes_read
        );
        bytes_read += out.bytes_read;
        entries.extend(e);
        rd.extend(t);
        for (level, f) in out.edit.new_files {
            combined.new_files.push((level, f));
        }
        for d in out.edit.deleted_files {
            if !combined.deleted_files.contains(&d) {
                combined.deleted_files.push(d);
            }
        }
        refs.extend(out.refs);
    }
    entries.sort_by(|a, b| key::compare_internal(&a.0, &b.0));
    assert_eq!(entries, whole_entries);
    assert_eq!(coverage(&rd, &probe), coverage(&whole_rd, &probe));
    // Each range's span is scaled and rounded down on its own.
    assert!(
        (input_bytes - 6..=input_bytes).contains(&bytes_read),
        "{bytes_read} of {input_bytes}"
    );
    let v = install(&vs, combined, &refs);
    assert!(v.files(1).is_empty());
    assert!(v.files(2).len() >= 3, "{:?}", v.files(2));
}

/// Only a rewrite reads a key range: a ranged move, drop or virtualize is refused.
#[test]
fn a_range_on_a_plan_that_does_not_rewrite_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = version_set(dir.path(), 4);
    let cache = cache_of(&vs);
    let version = vs.current();
    let ctx = keep_all_context(&vs, &cache, &version, 0);
    for action in [Action::TrivialMove, Action::Drop, Action::Virtualize] {
        let mut plan = rewrite_plan(Vec::new(), 1);
        plan.action = action;
        plan.range = Some(KeyRange {
            start: Some(b"a".to_vec()),
            end: Some(key_after(b"b")),
        });
        let err = execute(&plan, &ctx).expect_err("ranged non-rewrite");
        assert!(err.to_string().contains("only a rewrite"), "{err}");
    }
}

/// The record fan-out: each put or merge operand split into its two halves, each half
/// a merge operand of its own stream; a delete to both.
#[derive(Debug)]
struct Halves;

impl Splitter for Halves {
    fn split(&self, entry: &ParsedKey<'_>, value: &[u8], parts: &mut Parts) {
        let (lo, hi) = value.split_at(value.len() / 2);
        match entry.kind {
            Delete => {
                parts.add(0, Delete, |_| {});
                parts.add(1, Delete, |_| {});
            }
            _ => {
                parts.add(0, Merge, |v| v.extend_from_slice(lo));
                parts.add(1, Merge, |v| v.extend_from_slice(hi));
            }
        }
    }
}

/// What [`Halves`] gives stream `stream` of `rows`: internal-key order.
fn halves(rows: &[Row], stream: usize) -> Entries {
    let parts: Vec<Row> = rows
        .iter()
        .map(|(k, seq, kind, v)| {
            let (lo, hi) = v.split_at(v.len() / 2);
            let (kind, v) = match kind {
                Delete => (Delete, Vec::new()),
                _ => (Merge, [lo, hi][stream].to_vec()),
            };
            (k.clone(), *seq, kind, v)
        })
        .collect();
    merged(&parts)
}

/// A splitter writes every surviving record to each stream it names, with the
/// record's user key and sequence number and the part's kind and value: with every
/// version kept (a snapshot at each sequence number), each stream holds exactly the
/// inputs' records split, every stream the inputs' tombstones, and each stream's files
/// its column group.
#[test]
fn a_splitter_writes_parts_of_every_record_to_its_streams() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = version_set(dir.path(), 4);
    let cache = cache_of(&vs);
    let (version, [(up, (up_rows, up_rd)), (low, (low_rows, low_rd))]) = installed_runs(&vs);
    let ctx = keep_all_context(&vs, &cache, &version, 30);
    let mut plan = rewrite_plan(inputs(up, low), 2);
    plan.outputs[0].column_group = 3;
    plan.outputs[0].partitioning = Partitioning::Fixed { target: 80 };
    let mut second = plan.outputs[0].clone();
    second.column_group = 4;
    plan.outputs.push(second);
    plan.routing = Routing::Records(Arc::new(Halves));
    let out = execute(&plan, &ctx).expect("execute");
    let all_rows = [up_rows, low_rows].concat();
    let all_rd = [up_rd, low_rd].concat();
    let probe = probes(&all_rows, &all_rd);
    for (stream, group) in [(0, 3), (1, 4)] {
        let files: Vec<&FileMetaData> = out
            .edit
            .new_files
            .iter()
            .map(|(_, f)| f)
            .filter(|f| f.column_group == group)
            .collect();
        assert!(files.len() > 1, "stream {stream} cut files: {files:?}");
        let (entries, rd) = contents(&cache, files.iter().copied());
        assert_eq!(entries, halves(&all_rows, stream), "stream {stream}");
        assert_eq!(coverage(&rd, &probe), coverage(&all_rd, &probe));
    }
    assert_eq!(out.stream_bytes.len(), 2);
    // One part per stream, of the point kinds, a put only alone, within the value
    // limit; a splitter's streams in one level.
    #[derive(Debug)]
    struct Bad(ValueKind, usize, usize);
    impl Splitter for Bad {
        fn split(&self, _: &ParsedKey<'_>, _: &[u8], parts: &mut Parts) {
            parts.add(0, Merge, |_| {});
            parts.add(self.1, self.0, |v| v.resize(self.2, 0));
        }
    }
    let over = crate::limits::MAX_VALUE_LEN + 1;
    for (bad, says) in [
        (Bad(Merge, 0, 0), "two parts for one stream"),
        (
            Bad(crate::key::ValueKind::RangeDelete, 1, 0),
            "a range-delete part",
        ),
        (Bad(Put, 1, 0), "a put among several parts"),
        (Bad(Merge, 1, over), "a part over the value limit"),
        (Bad(Merge, 5, 0), "stream 5 of 2"),
    ] {
        plan.routing = Routing::Records(Arc::new(bad));
        let err = execute(&plan, &ctx).expect_err("refused");
        assert!(matches!(err, crate::Error::Internal(_)), "{err}");
        assert!(err.to_string().contains(says), "{err}");
    }
    plan.routing = Routing::Records(Arc::new(Halves));
    plan.outputs[1].level = 3;
    let err = execute(&plan, &ctx).expect_err("streams in two levels");
    assert!(err.to_string().contains("all be in one level"), "{err}");
}
