//! Snapshot visibility in every source of the read path, deterministically.
//!
//! A key `k` gets its older versions at sequence numbers up to `S` (the last two at
//! `S-1` and `S`), with snapshots (and transactions) taken at `S-1` and `S`; then its
//! newer version at `S+1`, one kind per test: an overwrite, a delete, a range deletion
//! covering it (and the neighbour `ka`), or a merge operand of the order-sensitive
//! append operator; then a snapshot and a transaction at `S+1`. Before the newer
//! version is written, the older ones are moved into one source of the read path,
//! and afterwards everything is moved into another: every pair of [`SOURCES`] in turn,
//! each checked to be where it claims ([`Tree::check`]). Then every read at each of
//! the three snapshots, and at the latest state, must return the state as of that
//! point: point gets of `k` and its neighbours, iterators forwards, backwards, within
//! bounds and changing direction, and transactions begun at the snapshot (a
//! transaction cannot read at another snapshot than the one it took at begin, so the
//! one begun at `S` is the transaction read at `S`).
//!
//! Each case runs with the snapshot filter on and off: on, a memtable or table
//! holding only the newer version is skipped at `S` before its own visibility check
//! runs, so only the run with the filter off shows that check's off-by-one for a
//! source holding nothing else.
//!
//! What it protects: an off-by-one in a visibility check (a read at `S` seeing
//! sequence `S+1`, or one at `S+1` missing it) on the path of one source only:
//! memtable lookups, table lookups, range tombstones of memtables or of tables, the
//! iterator's forward or reverse walk, the snapshot filter of memtables or of tables,
//! or compaction's snapshot stripes (a version still visible at a snapshot dropped
//! when it is compacted with the newer one).

mod common;

use common::{model_delete_range, model_merge, model_scan, ModelMap, Source as View};
use std::path::PathBuf;
use strata::env::{FaultFs, FaultKinds, FaultRule};
use strata::{Db, Options, ReadOptions, Snapshot, Transaction, TransactionOptions, WriteOptions};

/// The key whose versions the tests move around.
const KEY: &str = "k";
/// The key each transaction writes itself (its reads see it over the snapshot).
const TXN_KEY: &str = "kb";
/// Every key a get checks: `k`, its neighbours on both sides (`ka` inside the range
/// deletion `[k, l)`, `l` at its exclusive end), and the transactions' key.
const KEYS: [&str; 6] = ["a", "j", KEY, "ka", TXN_KEY, "l"];

/// A source of the read path that can hold a version of a key (`db/read.rs`), newest
/// first.
///
/// Sources still to come, as the techniques land (virtual tables, promotion
/// caches, column-group runs): each becomes a variant here, an entry of [`SOURCES`],
/// and an arm of [`move_to`] that puts the versions written so far into it and
/// checks that they got there. The match there is exhaustive, so a new variant does
/// not compile until it can be placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The memtable taking writes.
    ActiveMemtable,
    /// A memtable switched out and not flushed (its flush cannot create its table).
    ImmutableMemtable,
    /// A table in L0 (flushed; automatic compaction never triggers here).
    L0,
    /// A table below L0 (`compact_range`).
    Deeper,
}

/// Every source, newest first.
const SOURCES: [Source; 4] = [
    Source::ActiveMemtable,
    Source::ImmutableMemtable,
    Source::L0,
    Source::Deeper,
];

/// The newer version of `k`, written at `S+1`.
#[derive(Clone, Copy, Debug)]
enum Change {
    Overwrite,
    Delete,
    /// A range deletion `[k, l)`: covers `k` and `ka`, not `l`.
    RangeDelete,
    /// An operand of the append operator, over a put and two older operands.
    Merge,
}

/// One write, applied to the database and to the model.
#[derive(Clone, Copy, Debug)]
enum Write {
    Put(&'static str, &'static str),
    Delete(&'static str),
    DeleteRange(&'static str, &'static str),
    Merge(&'static str, &'static str),
}

impl Change {
    /// `k`'s versions at `S-1` and `S`.
    fn older(self) -> [Write; 2] {
        match self {
            Change::Merge => [Write::Merge(KEY, "m1"), Write::Merge(KEY, "m2")],
            _ => [Write::Put(KEY, "k1"), Write::Put(KEY, "k2")],
        }
    }

    /// `k`'s version at `S+1`.
    fn newer(self) -> Write {
        match self {
            Change::Overwrite => Write::Put(KEY, "k3"),
            Change::Delete => Write::Delete(KEY),
            Change::RangeDelete => Write::DeleteRange(KEY, "l"),
            Change::Merge => Write::Merge(KEY, "m3"),
        }
    }
}

/// Written before `S-1`: the neighbours and `k`'s first version (the merges' base).
const PREFIX: [Write; 5] = [
    Write::Put("a", "a0"),
    Write::Put("j", "j0"),
    Write::Put(KEY, "k0"),
    Write::Put("ka", "ka0"),
    Write::Put("l", "l0"),
];

fn open(fs: &FaultFs, snapshot_filter: bool) -> Db {
    // Memtables switch only when a test flushes (the 64 MiB buffer is far larger than
    // the data), two switched memtables may wait for a flush (with the default of two
    // memtables in all, the second switch would stall behind the failing flush), and
    // flushed tables stay in L0 unless a test compacts them.
    let opts = Options::default()
        .with_merge_operator(Some(common::append_operator()))
        .with_max_write_buffer_number(4)
        .with_level0_file_num_compaction_trigger(100)
        .with_level0_slowdown_writes_trigger(100)
        .with_level0_stop_writes_trigger(100)
        .with_snapshot_filter(snapshot_filter);
    common::on(fs).open("/db", opts).expect("open")
}

/// Where the writes so far are, as the placement steps put them: what
/// [`Tree::check`] holds the database to.
#[derive(Debug)]
struct Tree {
    /// Whether the active memtable holds a write.
    active_has_data: bool,
    /// Memtables switched out and not flushed.
    immutables: usize,
    l0_files: usize,
    /// Table files in L1 (`compact_range` compacts down to L1 here: no level below
    /// holds data).
    l1_files: usize,
    /// The newest WAL: a memtable switch creates the next one, so while it stays the
    /// same, every write since went into the same active memtable.
    wal: PathBuf,
}

/// The newest WAL of the database in `/db` on `fs`.
fn newest_wal(fs: &FaultFs) -> PathBuf {
    fs.files()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .max()
        .expect("a WAL")
}

fn level_files(db: &Db) -> Vec<usize> {
    db.stats().levels.iter().map(|l| l.files).collect()
}

impl Tree {
    fn new(fs: &FaultFs) -> Tree {
        Tree {
            active_has_data: false,
            immutables: 0,
            l0_files: 0,
            l1_files: 0,
            wal: newest_wal(fs),
        }
    }

    /// Checks that the database's tables are exactly where this says, and that no
    /// memtable was switched since the last placement step.
    fn check(&self, db: &Db, fs: &FaultFs, ctx: &str) {
        let mut want = vec![0; db.stats().levels.len()];
        want[0] = self.l0_files;
        want[1] = self.l1_files;
        assert_eq!(
            level_files(db),
            want,
            "{ctx}: table files per level, {self:?}"
        );
        assert_eq!(
            newest_wal(fs),
            self.wal,
            "{ctx}: no memtable switch, {self:?}"
        );
    }
}

/// Calls `f` until it succeeds, allowing retryable errors only (a flush retried in
/// the background may have failed just before a test cleared the faults).
fn retry(ctx: &str, mut f: impl FnMut() -> strata::Result<()>) {
    for _ in 0..50 {
        match f() {
            Ok(()) => return,
            Err(e) => assert!(e.is_retryable(), "{ctx}: {e}"),
        }
    }
    panic!("{ctx}: no success after 50 retries");
}

/// Moves every write so far to `source` (the writes in newer sources go along) and
/// checks that they got there.
fn move_to(db: &Db, fs: &FaultFs, tree: &mut Tree, source: Source, ctx: &str) {
    let ctx = &format!("{ctx}: moving to {source:?}");
    match source {
        Source::ActiveMemtable => {}
        Source::ImmutableMemtable => {
            assert!(tree.active_has_data, "{ctx}: nothing to switch out");
            // Table files cannot be created: the switched memtable stays immutable,
            // its flush retried in the background and failing, until a later step
            // clears the fault.
            fs.inject(FaultRule::sticky(FaultKinds::CREATE, 0).on_path(".sst"));
            let err = db.flush().expect_err("flushes fail");
            assert!(err.is_retryable(), "{ctx}: {err}");
            let wal = newest_wal(fs);
            assert!(wal > tree.wal, "{ctx}: the memtable was switched");
            tree.wal = wal;
            tree.immutables += 1;
            tree.active_has_data = false;
        }
        Source::L0 => {
            fs.clear_faults();
            retry(ctx, || db.flush());
            // One table per memtable holding data.
            tree.l0_files += tree.immutables + usize::from(tree.active_has_data);
            tree.immutables = 0;
            tree.active_has_data = false;
            tree.wal = newest_wal(fs);
        }
        Source::Deeper => {
            fs.clear_faults();
            retry(ctx, || db.compact_range(None, None));
            // Every version of the few keys fits one table.
            tree.l0_files = 0;
            tree.l1_files = 1;
            tree.immutables = 0;
            tree.active_has_data = false;
            tree.wal = newest_wal(fs);
        }
    }
    tree.check(db, fs, ctx);
}

/// Applies `w` to the database and to `model`; it takes exactly one sequence number.
fn write(db: &Db, model: &mut ModelMap, tree: &mut Tree, w: Write) {
    let wo = WriteOptions::default();
    let seq = db.latest_sequence();
    match w {
        Write::Put(k, v) => {
            db.put(&wo, k.as_bytes(), v.as_bytes()).expect("put");
            model.insert(k.into(), v.into());
        }
        Write::Delete(k) => {
            db.delete(&wo, k.as_bytes()).expect("delete");
            model.remove(k.as_bytes());
        }
        Write::DeleteRange(a, b) => {
            db.delete_range(&wo, a.as_bytes(), b.as_bytes())
                .expect("delete_range");
            model_delete_range(model, a.as_bytes(), b.as_bytes());
        }
        Write::Merge(k, v) => {
            db.merge(&wo, k.as_bytes(), v.as_bytes()).expect("merge");
            model_merge(model, k.as_bytes(), v.as_bytes());
        }
    }
    assert_eq!(db.latest_sequence(), seq + 1, "{w:?}");
    tree.active_has_data = true;
}

/// One point in time the reads check: a snapshot, a transaction begun there (with a
/// write of its own), and the model as of then.
struct Point<'db> {
    label: &'static str,
    snapshot: Snapshot,
    txn: Transaction<'db>,
    model: ModelMap,
}

fn point<'db>(db: &'db Db, label: &'static str, model: &ModelMap) -> Point<'db> {
    let snapshot = db.snapshot();
    let mut txn = db.transaction(&TransactionOptions::default());
    assert_eq!(txn.snapshot().sequence(), snapshot.sequence(), "{label}");
    txn.put(TXN_KEY.as_bytes(), b"txn").expect("txn put");
    Point {
        label,
        snapshot,
        txn,
        model: model.clone(),
    }
}

/// One step of an iterator walk.
#[derive(Clone, Copy, Debug)]
enum Step {
    Seek(&'static str),
    SeekForPrev(&'static str),
    Next,
    Prev,
}

/// A walk around `k` that changes direction five times.
const WALK: [Step; 9] = [
    Step::Seek(KEY),
    Step::Prev,
    Step::Next,
    Step::Next,
    Step::Prev,
    Step::SeekForPrev(KEY),
    Step::Next,
    Step::Prev,
    Step::Prev,
];

type Entry = (String, String);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn entries(v: Vec<(Vec<u8>, Vec<u8>)>) -> Vec<Entry> {
    v.into_iter().map(|(k, v)| (text(&k), text(&v))).collect()
}

/// Runs [`WALK`] on a `DbIterator` or a `BaseDeltaIterator` (they share no trait):
/// where it is after each step. Next and prev on an invalid iterator are left out.
macro_rules! walk {
    ($it:ident) => {{
        let mut out: Vec<Option<Entry>> = Vec::new();
        for step in WALK {
            match step {
                Step::Seek(t) => $it.seek(t.as_bytes()),
                Step::SeekForPrev(t) => $it.seek_for_prev(t.as_bytes()),
                Step::Next | Step::Prev if !$it.valid() => {
                    out.push(None);
                    continue;
                }
                Step::Next => $it.next(),
                Step::Prev => $it.prev(),
            }
            out.push($it.valid().then(|| (text($it.key()), text($it.value()))));
        }
        $it.status().map(|()| out)
    }};
}

/// What [`WALK`] sees in `model`.
fn model_walk(model: &ModelMap) -> Vec<Option<Entry>> {
    let all: Vec<Entry> = model.iter().map(|(k, v)| (text(k), text(v))).collect();
    let mut at: Option<usize> = None;
    WALK.iter()
        .map(|step| {
            at = match *step {
                Step::Seek(t) => all.iter().position(|(k, _)| k.as_str() >= t),
                Step::SeekForPrev(t) => all.iter().rposition(|(k, _)| k.as_str() <= t),
                Step::Next => at.map(|i| i + 1).filter(|&i| i < all.len()),
                Step::Prev => at.and_then(|i| i.checked_sub(1)),
            };
            at.map(|i| all[i].clone())
        })
        .collect()
}

/// Checks every scan of `view` against `model`: forwards and backwards, whole and
/// within `[k, l)`.
fn check_scans<'a>(view: impl Fn() -> View<'a>, model: &ModelMap, ctx: &str) {
    let (lo, hi): (Option<Vec<u8>>, _) = (Some(KEY.into()), Some("l".into()));
    for (from, to) in [(&None, &None), (&lo, &hi)] {
        for forward in [true, false] {
            let got = common::scan(view(), forward, from, to, usize::MAX)
                .unwrap_or_else(|e| panic!("{ctx}: scan: {e}"));
            let want = model_scan(model, forward, from, to, usize::MAX);
            assert_eq!(
                entries(got),
                entries(want),
                "{ctx}: scan forward={forward} from={from:?} to={to:?}"
            );
        }
    }
}

/// Gets, scans and a walk of the database at `snapshot` (`None`: the latest state).
fn check_db(db: &Db, snapshot: Option<&Snapshot>, model: &ModelMap, ctx: &str) {
    let ro = ReadOptions::default().with_snapshot(snapshot.cloned());
    for key in KEYS {
        let got = db
            .get(&ro, key.as_bytes())
            .unwrap_or_else(|e| panic!("{ctx}: get {key}: {e}"));
        let want = model.get(key.as_bytes());
        assert_eq!(
            got.as_deref().map(text),
            want.map(|v| text(v)),
            "{ctx}: get {key}"
        );
    }
    check_scans(|| View::Db(db, snapshot.cloned()), model, ctx);
    let mut it = db.iter(&ro).unwrap_or_else(|e| panic!("{ctx}: iter: {e}"));
    let got = walk!(it).unwrap_or_else(|e| panic!("{ctx}: walk: {e}"));
    assert_eq!(got, model_walk(model), "{ctx}: walk {WALK:?}");
}

/// Gets (plain and for update), scans and a walk of a transaction, whose view is
/// `model` with its own write over it.
fn check_txn(txn: &mut Transaction<'_>, model: &ModelMap, ctx: &str) {
    let ctx = &format!("{ctx} (transaction)");
    let mut model = model.clone();
    model.insert(TXN_KEY.into(), "txn".into());
    let ro = ReadOptions::default();
    for key in KEYS {
        let got = txn
            .get(&ro, key.as_bytes())
            .unwrap_or_else(|e| panic!("{ctx}: get {key}: {e}"));
        let want = model.get(key.as_bytes());
        assert_eq!(
            got.as_deref().map(text),
            want.map(|v| text(v)),
            "{ctx}: get {key}"
        );
    }
    let got = txn
        .get_for_update(&ro, KEY.as_bytes())
        .unwrap_or_else(|e| panic!("{ctx}: get_for_update: {e}"));
    let want = model.get(KEY.as_bytes());
    assert_eq!(
        got.as_deref().map(text),
        want.map(|v| text(v)),
        "{ctx}: get_for_update"
    );
    let shared: &Transaction<'_> = txn;
    check_scans(|| View::Txn(shared), &model, ctx);
    let mut it = txn.iter(&ro).unwrap_or_else(|e| panic!("{ctx}: iter: {e}"));
    let got = walk!(it).unwrap_or_else(|e| panic!("{ctx}: walk: {e}"));
    assert_eq!(got, model_walk(&model), "{ctx}: walk {WALK:?}");
}

/// One case, on a fresh database: `change` at `S+1`, the older versions moved to
/// `older` before it is written, and everything moved to `newer` after.
fn case(change: Change, older: Source, newer: Source, snapshot_filter: bool) {
    let ctx =
        &format!("{change:?} older={older:?} newer={newer:?} snapshot_filter={snapshot_filter}");
    let fs = FaultFs::new();
    let db = open(&fs, snapshot_filter);
    let mut tree = Tree::new(&fs);
    let mut model = ModelMap::new();
    for w in PREFIX {
        write(&db, &mut model, &mut tree, w);
    }
    let [at_s_minus_1, at_s] = change.older();
    write(&db, &mut model, &mut tree, at_s_minus_1);
    let before = point(&db, "S-1", &model);
    write(&db, &mut model, &mut tree, at_s);
    let at = point(&db, "S", &model);
    move_to(&db, &fs, &mut tree, older, ctx);
    write(&db, &mut model, &mut tree, change.newer());
    let after = point(&db, "S+1", &model);
    move_to(&db, &fs, &mut tree, newer, ctx);

    let s = at.snapshot.sequence();
    assert_eq!(before.snapshot.sequence(), s - 1, "{ctx}");
    assert_eq!(after.snapshot.sequence(), s + 1, "{ctx}");
    assert_eq!(db.latest_sequence(), s + 1, "{ctx}");
    for mut p in [before, at, after] {
        let ctx = &format!("{ctx} at {}", p.label);
        check_db(&db, Some(&p.snapshot), &p.model, ctx);
        check_txn(&mut p.txn, &p.model, ctx);
    }
    check_db(&db, None, &model, &format!("{ctx} latest"));
    // Nothing moved while the reads ran.
    tree.check(&db, &fs, &format!("{ctx} after the reads"));
    fs.clear_faults();
}

/// Every pair of sources for the older and the newer versions, with the snapshot
/// filter on and off. A move takes what newer sources hold along, so the pairs give:
/// both versions in one memtable or table (`older` is the active memtable); the
/// older versions in a deeper source than the newer one; two immutable memtables, or
/// two L0 tables, one per version (`older == newer`); and both compacted together
/// into L1 from two sources (`newer` is `Deeper`).
fn in_every_source(change: Change) {
    for snapshot_filter in [true, false] {
        for older in SOURCES {
            for newer in SOURCES {
                case(change, older, newer, snapshot_filter);
            }
        }
    }
}

#[test]
fn an_overwrite_is_seen_from_its_sequence_on_in_every_source() {
    in_every_source(Change::Overwrite);
}

#[test]
fn a_delete_is_seen_from_its_sequence_on_in_every_source() {
    in_every_source(Change::Delete);
}

#[test]
fn a_range_deletion_is_seen_from_its_sequence_on_in_every_source() {
    in_every_source(Change::RangeDelete);
}

#[test]
fn a_merge_operand_is_seen_from_its_sequence_on_in_every_source() {
    in_every_source(Change::Merge);
}
