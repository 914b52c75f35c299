//! Reads through virtual tables (ARCHITECTURE §7.1.1) on an open database: gets,
//! iterators both ways, range tombstones, snapshots and transaction conflict checks
//! see exactly the entries of each table's slices, before and after a reopen.
//!
//! The virtual tables here are made by hand, by an edit that splits every file of the
//! deepest level into two virtual tables over its halves (siblings sharing one
//! parent), or keeps only one half (the other half's entries must then stay hidden).

use super::*;
use crate::compaction::Requests;
use crate::db::Db;
use crate::key::{make_internal_key, MAX_SEQUENCE};
use crate::merge::Append;
use crate::options::{Options, WriteOptions};
use crate::version::virtual_table::Slice;
use crate::version::VersionEdit;
use std::collections::BTreeMap;

pub(super) fn opts() -> Options {
    Options::default()
        .with_merge_operator(Some(Arc::new(Append::new(b","))))
        .with_write_buffer_size(16 << 10)
        .with_target_file_size_base(8 << 10)
        .with_level0_file_num_compaction_trigger(100)
        .with_level0_slowdown_writes_trigger(200)
        .with_level0_stop_writes_trigger(300)
        .with_every_level(|l| l.with_block_size(512))
}

pub(super) fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

pub(super) fn merged(model: &BTreeMap<Vec<u8>, Vec<u8>>, k: &[u8], operand: &[u8]) -> Vec<u8> {
    match model.get(k) {
        Some(old) => [old.as_slice(), b",", operand].concat(),
        None => operand.to_vec(),
    }
}

/// Older data at the bottom, newer data with deletes, merges and range deletions
/// above it, so that the level split into virtual tables holds range tombstones that
/// hide entries below it: puts and overwrites of 3,000 keys, compacted and moved to
/// L2; then deletes, merges and range deletions, compacted from L0 into L1 (not the
/// bottom, so the tombstones stay). `at_bottom` runs on the database and the model
/// once the older data is in L2. Returns the open database and the model.
pub(super) fn fill(
    dir: &std::path::Path,
    at_bottom: impl FnOnce(&Db, &mut BTreeMap<Vec<u8>, Vec<u8>>),
) -> (Db, BTreeMap<Vec<u8>, Vec<u8>>) {
    let wo = WriteOptions::default();
    let mut model = BTreeMap::new();
    let db = Db::open(dir, opts()).unwrap();
    for round in 0..3u32 {
        for i in (0..3000).step_by(1 + round as usize) {
            let v = format!("v{round}-{i}").into_bytes();
            db.put(&wo, &key(i), &v).unwrap();
            model.insert(key(i), v);
        }
    }
    db.compact_range(None, None).unwrap();
    move_down(&db, 1);
    at_bottom(&db, &mut model);
    for i in (0..3000).step_by(7) {
        db.delete(&wo, &key(i)).unwrap();
        model.remove(&key(i));
    }
    for i in (0..3000).step_by(5) {
        db.merge(&wo, &key(i), b"m").unwrap();
        model.insert(key(i), merged(&model, &key(i), b"m"));
    }
    for start in [100, 1000, 2500] {
        db.delete_range(&wo, &key(start), &key(start + 40)).unwrap();
        model.retain(|k, _| !(k.as_slice() >= key(start).as_slice() && k < &key(start + 40)));
    }
    db.close().unwrap();
    // Reopened with an L0 trigger of 1: the recovered memtable's flush is compacted
    // into L1 at once, above the data in L2.
    let db = Db::open(dir, opts().with_level0_file_num_compaction_trigger(1)).unwrap();
    db.wait_for_compactions().unwrap();
    let v = db.inner.default.versions.current();
    assert!(v.files(0).is_empty() && v.files(1).len() >= 2 && !v.files(2).is_empty());
    assert!(v.files(1).iter().any(|f| f.num_range_deletions > 0));
    drop(v);
    (db, model)
}

/// Merges into every third key and deletes a range, then flushes: newer data in L0
/// over what the tables hold. Returns what reads should then see.
pub(super) fn write_newer(db: &Db, model: &Model) -> Model {
    let wo = WriteOptions::default();
    let mut newer = model.clone();
    for i in (0..3000).step_by(3) {
        db.merge(&wo, &key(i), b"n").unwrap();
        newer.insert(key(i), merged(&newer, &key(i), b"n"));
    }
    db.delete_range(&wo, &key(2000), &key(2010)).unwrap();
    newer.retain(|k, _| !(k.as_slice() >= key(2000).as_slice() && k < &key(2010)));
    db.flush().unwrap();
    newer
}

/// Moves every file of `level` one level down, by metadata (as a trivial move).
pub(crate) fn move_down(db: &Db, level: usize) {
    let version = db.inner.default.versions.current();
    let mut edit = VersionEdit::default();
    for f in version.files(level) {
        edit.deleted_files.push((level, f.number));
        edit.new_files.push((level + 1, FileMetaData::clone(f)));
    }
    install(db, edit);
}

/// Logs and installs `edit` on the default family, as a job does.
pub(super) fn install(db: &Db, edit: VersionEdit) {
    let (inner, family) = (&db.inner, &db.inner.default);
    inner
        .versions
        .log_and_apply(&family.versions, edit, &[], |v| {
            let st = inner.state.lock();
            if let Some(f) = st.families.get(&family.id()) {
                f.install_super_version(v);
            }
        })
        .unwrap();
}

/// The user key in the middle of table `f`, read from its entries (a test may read).
fn middle_key(db: &Db, f: &FileMetaData) -> Vec<u8> {
    let table = db.inner.table_cache.get(f).unwrap();
    let mut it = table.iter();
    it.seek_to_first();
    let mut keys = Vec::new();
    while it.valid() {
        keys.push(key::user_key(it.key()).to_vec());
        it.next();
    }
    keys.dedup();
    keys[keys.len() / 2].clone()
}

/// A virtual table over one slice `[lo, hi]` of `parent`, with table bounds that sort
/// before every entry of `lo` and after every entry of `hi`.
fn half(db: &Db, number: u64, parent: &FileMetaData, lo: &[u8], hi: &[u8]) -> FileMetaData {
    let table = db.inner.table_cache.get(parent).unwrap();
    let bytes = table.approximate_range_bytes(lo, hi).unwrap();
    FileMetaData {
        number,
        size: bytes,
        smallest: make_internal_key(lo, MAX_SEQUENCE, ValueKind::RangeDelete),
        largest: make_internal_key(hi, 0, ValueKind::Delete),
        kind: FileKind::Virtual {
            slices: vec![Slice {
                parent: parent.number,
                smallest: lo.to_vec(),
                largest: hi.to_vec(),
                bytes,
            }],
        },
        ..parent.clone()
    }
}

/// Splits every file of `level` into two virtual tables over its halves (keeping
/// only the lower half of file `drop_upper_of`, if given); installs the edit as a job
/// would. Returns the user-key ranges whose entries are no longer in the version.
pub(super) fn split(
    db: &Db,
    level: usize,
    drop_upper_of: Option<usize>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let inner = &db.inner;
    let version = inner.default.versions.current();
    let mut edit = VersionEdit::default();
    let mut hidden = Vec::new();
    for (i, f) in version.files(level).iter().enumerate() {
        let mid = middle_key(db, f);
        let (lo, hi) = (
            f.smallest_user_key().to_vec(),
            f.largest_user_key().to_vec(),
        );
        let upper = [mid.as_slice(), &[0]].concat();
        edit.deleted_files.push((level, f.number));
        edit.new_parents.push(FileMetaData::clone(f));
        let n = inner.versions.new_file_number();
        edit.new_files.push((level, half(db, n, f, &lo, &mid)));
        if drop_upper_of == Some(i) {
            hidden.push((upper, hi));
        } else {
            let n = inner.versions.new_file_number();
            edit.new_files.push((level, half(db, n, f, &upper, &hi)));
        }
    }
    install(db, edit);
    hidden
}

/// What a read should see: user key to value.
pub(super) type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// [`check_reads`] on a database that holds virtual tables.
fn check(db: &Db, now: &Model, at: &[(crate::Snapshot, Model)]) {
    assert!(virtual_tables(db) > 0);
    check_reads(db, now, at);
}

/// Every get and the batch of every key (now and at each snapshot), both full scans,
/// and seeks agree with the models.
pub(super) fn check_reads(db: &Db, now: &Model, at: &[(crate::Snapshot, Model)]) {
    let views = std::iter::once((None, now)).chain(at.iter().map(|(s, m)| (Some(s.clone()), m)));
    for (snap, model) in views {
        let ro = ReadOptions::default().with_snapshot(snap.clone());
        for i in 0..3100 {
            assert_eq!(
                db.get(&ro, &key(i)).unwrap().as_ref(),
                model.get(&key(i)),
                "get {i} at {snap:?}"
            );
        }
        let keys: Vec<Vec<u8>> = (0..3100).rev().map(key).collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        for (k, got) in keys.iter().zip(db.multi_get(&ro, &refs)) {
            assert_eq!(got.unwrap().as_ref(), model.get(k), "multi_get at {snap:?}");
        }
        let mut it = db.iter(&ro).unwrap();
        it.seek_to_first();
        let mut fwd = Vec::new();
        while it.valid() {
            fwd.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.status().unwrap();
        let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(fwd.len(), want.len(), "forward scan at {snap:?}");
        assert!(fwd == want, "forward scan at {snap:?}");
        it.seek_to_last();
        let mut rev = Vec::new();
        while it.valid() {
            rev.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        rev.reverse();
        assert!(rev == want, "reverse scan at {snap:?}");
        // A seek into the middle of each range, and back.
        for i in (0..3000).step_by(250) {
            it.seek(&key(i));
            let want = model.range(key(i)..).next();
            assert_eq!(
                it.valid().then(|| (it.key(), it.value())),
                want.map(|(k, v)| (k.as_slice(), v.as_slice()))
            );
        }
    }
}

fn virtual_tables(db: &Db) -> usize {
    let v = db.inner.default.versions.current();
    v.live_files().filter(|f| f.kind != FileKind::Real).count()
}

#[test]
fn reads_through_split_tables_see_exactly_their_slices() {
    let dir = tempfile::tempdir().unwrap();
    let (db, model) = fill(dir.path(), |_, _| {});
    let files = db.inner.default.versions.current().files(1).len();
    let snap = db.snapshot();
    split(&db, 1, None);
    assert_eq!(virtual_tables(&db), 2 * files);
    check(&db, &model, &[(snap.clone(), model.clone())]);
    // Reopened with no automatic compaction: compactions do not read virtual tables
    // yet, and this test is about reads.
    drop(snap);
    db.close().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let snap = db.snapshot();

    // Newer data in L0 over the virtual tables.
    let newer = write_newer(&db, &model);
    check(&db, &newer, &[(snap.clone(), model.clone())]);
    assert!(db.verify_checksums().unwrap() > 0);
    drop(snap);
    db.close().unwrap();

    // Recovery: the virtual tables and their parents come back.
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(virtual_tables(&db), 2 * files);
    check(&db, &newer, &[]);
    db.close().unwrap();
}

#[test]
fn entries_outside_every_slice_stay_hidden() {
    let dir = tempfile::tempdir().unwrap();
    // The last L2 file's upper half leaves the version before the newer data is
    // written (nothing lies below it); its parent stays (the lower half names it), and
    // must not show those entries.
    let mut hidden = Vec::new();
    let (db, model) = fill(dir.path(), |db, model| {
        let last = db.inner.default.versions.current().files(2).len() - 1;
        hidden = split(db, 2, Some(last));
        for (lo, hi) in &hidden {
            model.retain(|k, _| !(k >= lo && k <= hi));
        }
    });
    check(&db, &model, &[]);
    // Transactions' conflict check sees no version of a hidden key that nothing newer
    // wrote either.
    // (Neither deleted, merged nor range-deleted later: keys `i` with `i % 5` and
    // `i % 7` not 0.)
    let lo = (0..3000)
        .filter(|i| i % 5 != 0 && i % 7 != 0)
        .map(key)
        .find(|k| *k >= hidden[0].0 && *k <= hidden[0].1 && !model.contains_key(k))
        .expect("a hidden key");
    let lo = &lo;
    let sv = db.inner.default.super_version.load_full();
    let lookup = LookupKey::new(lo, db.inner.versions.last_sequence());
    assert_eq!(newer_sequence(&db.inner, &sv, &lookup, 0).unwrap(), None);
    db.close().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    check(&db, &model, &[]);
}

/// Delayed compaction with VCT 12 and VSMT 2, small files and an L0 trigger of 2: L0
/// compactions of puts are deferred into virtual tables with several slices.
fn requesting_opts() -> Options {
    opts()
        .with_level0_file_num_compaction_trigger(2)
        .with_max_bytes_for_level_base(64 << 10)
        .with_delayed_compaction(Some(
            crate::options::DelayedCompaction::new()
                .with_vct(12)
                .with_vsmt(2),
        ))
}

/// Rounds of puts of 4,000 keys in a scattered order, each flushed and settled (so a
/// reopen has nothing to replay), until the settled tree holds a virtual table of two
/// slices or more; returns the model.
fn fill_scattered(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut model = BTreeMap::new();
    for round in 0..12u32 {
        for j in 0..4000u32 {
            let i = (j * 1597 + round * 7) % 4000;
            let v = format!("v{round}-{i}-{}", "x".repeat(40)).into_bytes();
            db.put(&WriteOptions::default(), &key(i), &v).unwrap();
            model.insert(key(i), v);
        }
        db.flush().unwrap();
        db.wait_for_compactions().unwrap();
        if tables_with_slices(db, 2) > 0 {
            return model;
        }
    }
    panic!(
        "no virtual table of two slices after 12 rounds: {}",
        db.stats()
    );
}

/// Virtual tables of the current version with at least `n` slices.
fn tables_with_slices(db: &Db, n: usize) -> usize {
    let v = db.inner.default.versions.current();
    v.live_files()
        .filter(|f| matches!(&f.kind, FileKind::Virtual { slices } if slices.len() >= n))
        .count()
}

/// Gets that meet a virtual table of at least VSMT slices ask for its merge, once per
/// table; `wait_for_compactions` waits for the merges, which rewrite the tables into
/// real ones without changing an answer; no request is left behind.
#[test]
fn gets_ask_for_merges_that_wait_for_compactions_waits_for() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), requesting_opts()).unwrap();
    let model = fill_scattered(&db);
    let before = tables_with_slices(&db, 2);
    assert!(before > 0);
    let s0 = db.stats().counters;
    assert_eq!(
        (s0.virtual_merge_requests, s0.virtual_merges),
        (0, 0),
        "nothing read yet"
    );
    let ro = ReadOptions::default();
    for (k, v) in &model {
        assert_eq!(db.get(&ro, k).unwrap().as_ref(), Some(v));
    }
    let s1 = db.stats().counters;
    assert!(s1.gets_through_virtual > 0 && s1.virtual_parents_probed > 0);
    assert!(s1.virtual_parents_probed <= s1.tables_probed);
    assert!(s1.virtual_merge_requests > 0);
    // Each table is asked for once: no more requests than tables were made.
    assert!(s1.virtual_merge_requests <= s1.virtual_tables_created);
    db.wait_for_compactions().unwrap();
    let s2 = db.stats().counters;
    assert!(s2.virtual_merges > 0, "{s2:?}");
    assert!(s2.virtual_merge_bytes_read > 0 && s2.virtual_merge_bytes_written > 0);
    assert!(s2.virtual_merge_bytes_read <= s2.compaction_bytes_read);
    assert!(s2.virtual_slice_bytes_read <= s2.compaction_bytes_read);
    let v = db.inner.default.versions.current();
    assert_eq!(
        Requests::sample(&v, &crate::Options::default(), 0),
        Requests::default(),
        "every request was planned"
    );
    for (k, want) in &model {
        assert_eq!(db.get(&ro, k).unwrap().as_ref(), Some(want));
    }
    db.close().unwrap();
}

/// An iterator asks for the merge of each virtual table of at least VSMT slices it
/// opens; a database with the option off never asks, though it reads the same tables.
#[test]
fn iterators_ask_for_merges_and_the_off_switch_asks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), requesting_opts()).unwrap();
    let model = fill_scattered(&db);
    db.close().unwrap();
    // Reopened with the option off: the tables are read, nothing is asked.
    let off = Db::open(dir.path(), requesting_opts().with_delayed_compaction(None)).unwrap();
    let tables = tables_with_slices(&off, 2);
    assert!(tables > 0);
    let scan = |db: &Db| {
        let mut it = db.iter(&ReadOptions::default()).unwrap();
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            assert_eq!(model.get(it.key()).map(Vec::as_slice), Some(it.value()));
            n += 1;
            it.next();
        }
        it.status().unwrap();
        assert_eq!(n, model.len());
    };
    scan(&off);
    assert_eq!(off.stats().counters.virtual_merge_requests, 0);
    off.close().unwrap();
    let on = Db::open(dir.path(), requesting_opts()).unwrap();
    assert_eq!(tables_with_slices(&on, 2), tables);
    scan(&on);
    assert_eq!(on.stats().counters.virtual_merge_requests, tables as u64);
    on.wait_for_compactions().unwrap();
    assert!(on.stats().counters.virtual_merges > 0);
    scan(&on);
    on.close().unwrap();
}

/// Dropping a column family releases its virtual tables' parents: their files are
/// deleted once the last handle and read view holding them goes, and the default
/// family's data is untouched.
#[test]
fn dropping_a_family_deletes_its_parents() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let cf_opts = requesting_opts().cf_options();
    let cf = db.create_cf("delayed", cf_opts).unwrap();
    db.put(&WriteOptions::default(), b"default-key", b"v")
        .unwrap();
    let family = Arc::clone(&cf.family);
    let mut parents = Vec::new();
    for round in 0..12u32 {
        for j in 0..4000u32 {
            let i = (j * 1597 + round * 7) % 4000;
            db.put_cf(
                &WriteOptions::default(),
                &cf,
                &key(i),
                b"value-of-forty-bytes-or-so-xxxxxxxxxxxx",
            )
            .unwrap();
        }
        db.flush_cf(&cf).unwrap();
        db.wait_for_compactions().unwrap();
        parents = family
            .versions
            .current()
            .parents()
            .map(|p| p.number)
            .collect();
        if !parents.is_empty() {
            break;
        }
    }
    assert!(!parents.is_empty(), "the family holds parents");
    let on_disk = |n: &u64| crate::filename::table_file(dir.path(), *n).exists();
    assert!(parents.iter().all(on_disk));
    let tables: Vec<u64> = family
        .versions
        .current()
        .physical_tables()
        .map(|f| f.number)
        .collect();
    db.drop_cf(&cf).unwrap();
    drop(cf);
    drop(family);
    // The flush thread sweeps obsolete files right after each flush, which may be
    // just after `flush` returns: give it a moment.
    let mut left = tables.clone();
    for i in 0..200u32 {
        db.put(&WriteOptions::default(), b"sweep", &i.to_le_bytes())
            .unwrap();
        db.flush().unwrap();
        left = tables.iter().copied().filter(on_disk).collect();
        if left.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(
        left.is_empty(),
        "tables and parents {parents:?} still on disk: {left:?}"
    );
    assert_eq!(
        db.get(&ReadOptions::default(), b"default-key")
            .unwrap()
            .as_deref(),
        Some(&b"v"[..])
    );
    db.close().unwrap();
}

/// A virtual table whose slices name different parents over different parts of its
/// range reads each parent only inside its slice: the newer parent holds every key,
/// but its slice covers the lower half, so the upper half answers from the older
/// parent (a get that probed every slice holding the table's range would answer from
/// the newer one).
#[test]
fn a_parent_is_read_only_inside_its_slice() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let wo = WriteOptions::default();
    for value in [&b"old"[..], b"new"] {
        for i in 0..100 {
            db.put(&wo, &key(i), value).unwrap();
        }
        db.flush().unwrap();
    }
    let version = db.inner.default.versions.current();
    let [newer, older] = version.files(0) else {
        panic!("two L0 files: {}", db.stats());
    };
    let (newer, older) = (FileMetaData::clone(newer), FileMetaData::clone(older));
    let (mid, upper) = (key(49), key(50));
    let mut lower_half = half(
        &db,
        db.inner.versions.new_file_number(),
        &newer,
        &key(0),
        &mid,
    );
    let upper_half = half(&db, 0, &older, &upper, &key(99));
    let FileKind::Virtual { slices } = &mut lower_half.kind else {
        unreachable!("half makes a virtual table")
    };
    slices.extend(match upper_half.kind {
        FileKind::Virtual { slices } => slices,
        FileKind::Real => unreachable!("half makes a virtual table"),
    });
    lower_half.size += upper_half.size;
    lower_half.largest = upper_half.largest;
    let edit = VersionEdit {
        deleted_files: vec![(0, newer.number), (0, older.number)],
        new_files: vec![(1, lower_half)],
        new_parents: vec![newer, older],
        ..Default::default()
    };
    install(&db, edit);
    let want = |i: u32| {
        if i < 50 {
            b"new".to_vec()
        } else {
            b"old".to_vec()
        }
    };
    for i in 0..100 {
        assert_eq!(
            db.get(&ReadOptions::default(), &key(i)).unwrap(),
            Some(want(i)),
            "get {i}"
        );
    }
    let mut it = db.iter(&ReadOptions::default()).unwrap();
    it.seek_to_first();
    for i in 0..100 {
        assert!(it.valid(), "scan ends early at {i}");
        assert_eq!(
            (it.key(), it.value()),
            (key(i).as_slice(), want(i).as_slice())
        );
        it.next();
    }
    assert!(!it.valid());
    db.close().unwrap();
}
