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
//! One source is a virtual table of delayed compaction: the versions moved there are
//! read through slices of the flushed tables (its parents), each parent cut over two
//! virtual tables; a case that has this source runs on a database set up for it (see
//! [`open`]).
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
use strata::{
    Db, DelayedCompaction, Options, ReadOptions, Snapshot, Transaction, TransactionOptions,
    WriteOptions,
};

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
/// Sources still to come, as the techniques land (promotion caches, column-group
/// runs): each becomes a variant here, an entry of [`SOURCES`],
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
    /// A virtual table in L1 (delayed compaction, ARCHITECTURE §6.10, §7.1.1): the
    /// flushed tables become its parents, read through slices (`probe_tables`,
    /// `ClippedIterator`). See [`open`] for how the automatic compaction that makes
    /// it is set up.
    VirtualTable,
}

/// Every source, newest first (a virtual table lies in L1, above the tables
/// `compact_range` leaves in a case that has one, see [`open`]).
const SOURCES: [Source; 5] = [
    Source::ActiveMemtable,
    Source::ImmutableMemtable,
    Source::L0,
    Source::VirtualTable,
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

/// The length of the version of `k` a case with a virtual table keeps in L2 (see
/// [`open`]): more than ten target files (10 KiB).
const FLOOR_VALUE_LEN: usize = 12 << 10;

/// Opens the database of the case moving the older versions to `older` and the newer
/// one to `newer`; returns it with the floor snapshot (see below), if any.
///
/// Memtables switch only when a test flushes (the 64 MiB buffer is far larger than
/// the data), two switched memtables may wait for a flush (with the default of two
/// memtables in all, the second switch would stall behind the failing flush), and
/// flushed tables stay in L0 unless a test compacts them.
///
/// A case with a [`Source::VirtualTable`] has delayed compaction on (VCT 12: every
/// plan here reads fewer tables), and the automatic L0→L1 compaction that makes the
/// virtual table needs three things:
/// - a trigger the move to the virtual table reaches and no move to L0 does: one
///   table, or two where the case also has an L0 source (then the older versions
///   moved to the virtual table must make two tables: the prefix is flushed alone
///   first, see [`prefix_table`]);
/// - no trivial move (one L0 table over an empty L1 would move down as it is): L2
///   holds a version of `k` larger than ten target files (1 KiB each), written before
///   everything else and kept by a snapshot held for the case (so `compact_range`
///   keeps it too); a table over more grandparent bytes is rewritten, not moved;
/// - not bottommost, so that a delete or range deletion among the inputs does not
///   keep the plan real (a real bottommost compaction drops tombstones, a virtual one
///   would keep them for ever): the same table in L2 lies below.
///
/// It is put in L2 by a first open with other options (one level holds 1 KiB), then
/// the database is reopened for the case. With three levels, `compact_range` leaves
/// everything in L2, below the virtual tables' level.
fn open(
    fs: &FaultFs,
    snapshot_filter: bool,
    older: Source,
    newer: Source,
) -> (Db, Option<Snapshot>) {
    let opts = Options::default()
        .with_merge_operator(Some(common::append_operator()))
        .with_max_write_buffer_number(4)
        .with_level0_file_num_compaction_trigger(100)
        .with_level0_slowdown_writes_trigger(100)
        .with_level0_stop_writes_trigger(100)
        .with_snapshot_filter(snapshot_filter);
    if older != Source::VirtualTable && newer != Source::VirtualTable {
        return (common::on(fs).open("/db", opts).expect("open"), None);
    }
    let opts = opts
        .with_num_levels(3)
        .with_target_file_size_base(1024)
        .with_every_level(|l| l.with_block_size(256));
    let setup = opts
        .clone()
        .with_level0_file_num_compaction_trigger(1)
        .with_max_bytes_for_level_base(1024);
    let db = common::on(fs).open("/db", setup).expect("setup open");
    let floor: Vec<u8> = (0..FLOOR_VALUE_LEN)
        .map(|i| (i.wrapping_mul(0x9E37_79B9) >> 13) as u8)
        .collect();
    db.put(&WriteOptions::default(), KEY.as_bytes(), &floor)
        .expect("floor put");
    db.flush().expect("floor flush");
    db.wait_for_compactions().expect("floor compactions");
    assert_eq!(level_files(&db), [0, 0, 1], "the floor is in L2");
    db.close().expect("setup close");
    let trigger = if older == Source::L0 || newer == Source::L0 {
        2
    } else {
        1
    };
    let opts = opts
        .with_level0_file_num_compaction_trigger(trigger)
        .with_delayed_compaction(Some(DelayedCompaction::new()));
    let db = common::on(fs).open("/db", opts).expect("open");
    let snapshot = db.snapshot();
    (db, Some(snapshot))
}

/// The keys a case with a virtual table writes after the prefix, with values of
/// 1.5 KiB, on both sides of the other keys: so a table of the prefix spans more than
/// one virtual table (they are cut at 1 KiB, at data-block ends), and the slices of
/// its parent are narrower than it (`ClippedIterator` and the slice check of
/// `probe_tables` matter).
const PADS: [&str; 2] = ["b", "m"];

/// Whether the case flushes the prefix into a table of its own before `S-1`: when
/// the older versions move to a virtual table and the newer ones to L0, the trigger
/// is two tables, and the move to the virtual table must reach it.
fn prefix_table(older: Source, newer: Source) -> bool {
    older == Source::VirtualTable && newer == Source::L0
}

/// Where the writes so far are, as the placement steps put them: what
/// [`Tree::check`] holds the database to.
#[derive(Debug)]
struct Tree {
    /// Whether the active memtable holds a write.
    active_has_data: bool,
    /// Memtables switched out and not flushed.
    immutables: usize,
    /// Table files per level: L0's counted, the deeper levels' as the last move
    /// below L0 left them (`compact_range` compacts down to L1 where no level below
    /// holds data, and into one table; with a virtual-table source down to L2, into
    /// tables of 1 KiB).
    files: Vec<usize>,
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
    fn new(db: &Db, fs: &FaultFs) -> Tree {
        Tree {
            active_has_data: false,
            immutables: 0,
            files: level_files(db),
            wal: newest_wal(fs),
        }
    }

    /// Checks that the database's tables are exactly where this says, and that no
    /// memtable was switched since the last placement step.
    fn check(&self, db: &Db, fs: &FaultFs, ctx: &str) {
        assert_eq!(
            level_files(db),
            self.files,
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
            // No compaction starts (the trigger is above the tables in L0).
            retry(ctx, || db.wait_for_compactions());
            // One table per memtable holding data.
            tree.files[0] += tree.immutables + usize::from(tree.active_has_data);
            tree.immutables = 0;
            tree.active_has_data = false;
            tree.wal = newest_wal(fs);
        }
        Source::Deeper => {
            fs.clear_faults();
            retry(ctx, || db.compact_range(None, None));
            let got = level_files(db);
            let deepest = got.iter().rposition(|&n| n > 0).unwrap_or(0);
            tree.files = vec![0; got.len()];
            if got.len() == 3 {
                // A case with a virtual table: everything down to L2, beside the
                // floor, in tables of 1 KiB.
                assert_eq!(deepest, 2, "{ctx}: compact_range leaves all in L2: {got:?}");
                tree.files[2] = got[2];
            } else {
                // Every version of the few keys fits one table.
                tree.files[1] = 1;
            }
            tree.immutables = 0;
            tree.active_has_data = false;
            tree.wal = newest_wal(fs);
        }
        Source::VirtualTable => {
            fs.clear_faults();
            let before = db.stats();
            retry(ctx, || db.flush());
            // The flushed tables reach the trigger; the compaction of L0 (and of L1's
            // virtual table, if any) into L1 is virtualized: it writes nothing.
            retry(ctx, || db.wait_for_compactions());
            let after = db.stats();
            let got = level_files(db);
            assert!(
                after.counters.virtual_compactions > before.counters.virtual_compactions,
                "{ctx}: no virtual compaction ran: {got:?}"
            );
            assert_eq!(
                after.levels[1].write_bytes, before.levels[1].write_bytes,
                "{ctx}: a compaction wrote into L1"
            );
            assert_eq!(got[0], 0, "{ctx}: L0 compacted into L1: {got:?}");
            assert!(got[1] > 0, "{ctx}: L1 holds the virtual tables: {got:?}");
            tree.files[0] = 0;
            tree.files[1] = got[1];
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
    let (db, floor) = open(&fs, snapshot_filter, older, newer);
    let mut tree = Tree::new(&db, &fs);
    let mut model = ModelMap::new();
    for w in PREFIX {
        write(&db, &mut model, &mut tree, w);
    }
    if floor.is_some() {
        for pad in PADS {
            let v = pad.repeat(1536);
            db.put(&WriteOptions::default(), pad.as_bytes(), v.as_bytes())
                .expect("pad put");
            model.insert(pad.into(), v.into());
        }
    }
    if prefix_table(older, newer) {
        db.flush().expect("prefix flush");
        db.wait_for_compactions().expect("no compaction");
        tree.files[0] += 1;
        tree.active_has_data = false;
        tree.wal = newest_wal(&fs);
        tree.check(&db, &fs, &format!("{ctx}: the prefix in L0"));
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
    drop(floor);
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
