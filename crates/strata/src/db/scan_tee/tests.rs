//! A user iterator with a tee on its deeper levels: its answers are the model's, at the
//! latest state and at an older snapshot, and the tee sees every internal entry of the
//! teed levels, every version (newer than the read too), from the seek target to its
//! last arrival, with no gap; a backward move breaks the run.

use super::*;
use crate::db::read::tests::move_down;
use crate::db::Db;
use crate::iter::{InternalIterator, Tee};
use crate::key::{self, compare_internal, make_internal_key, KIND_SEEK};
use crate::options::{Options, ReadOptions, WriteOptions};
use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    Start(Option<Vec<u8>>),
    Entry(Vec<u8>),
    Exhausted,
    Broken,
}

type Log = Arc<Mutex<Vec<Event>>>;

struct Recorder(Log);

impl Recorder {
    fn push(&self, e: Event) {
        if let Ok(mut v) = self.0.lock() {
            v.push(e);
        }
    }
}

impl Tee for Recorder {
    fn start(&mut self, target: Option<&[u8]>) {
        self.push(Event::Start(target.map(<[u8]>::to_vec)));
    }
    fn entry(&mut self, key: &[u8], _value: &[u8]) {
        self.push(Event::Entry(key.to_vec()));
    }
    fn exhausted(&mut self) {
        self.push(Event::Exhausted);
    }
    fn broken(&mut self) {
        self.push(Event::Broken);
    }
}

/// Tees every iterator from `level`, each into a fresh log kept in `logs`.
#[derive(Debug, Default)]
struct TeeAll {
    level: usize,
    logs: Mutex<Vec<Log>>,
}

impl TeeAll {
    fn last_log(&self) -> Vec<Event> {
        let logs = self.logs.lock().expect("logs");
        let log = logs.last().expect("a teed iterator");
        let events = log.lock().expect("log").clone();
        events
    }
}

impl ScanTees for TeeAll {
    fn tee(&self, _scan: &ScanStart<'_>) -> Option<(usize, Box<dyn Tee>)> {
        let log = Log::default();
        self.logs.lock().ok()?.push(Arc::clone(&log));
        Some((self.level, Box::new(Recorder(log))))
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn opts() -> Options {
    Options::default()
        .with_write_buffer_size(1 << 20)
        .with_target_file_size_base(8 << 10)
        .with_max_bytes_for_level_base(1 << 20)
}

/// Every internal entry (key) of the tables of levels `from..` of `db`, sorted.
fn deep_entries(db: &Db, from: usize) -> Vec<Vec<u8>> {
    let v = db.inner.default.versions.current();
    let mut out = Vec::new();
    for level in from..v.num_levels() {
        for f in v.files(level) {
            let mut it = db.inner.table_cache.get(f).expect("open").iter();
            it.seek_to_first();
            while it.valid() {
                out.push(it.key().to_vec());
                it.next();
            }
        }
    }
    out.sort_by(|a, b| compare_internal(a, b));
    out
}

#[test]
fn a_teed_scan_answers_as_always_and_shows_every_deeper_entry() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tees = Arc::new(TeeAll {
        level: 1,
        ..TeeAll::default()
    });
    let db = Db::builder()
        .scan_tees(Arc::clone(&tees) as Arc<dyn ScanTees>)
        .open(dir.path(), opts())
        .expect("open");
    let wo = WriteOptions::default();
    let mut model = BTreeMap::new();
    for i in 0..2000u32 {
        let v = format!("old-{i}").into_bytes();
        db.put(&wo, &key(i), &v).expect("put");
        model.insert(key(i), v);
    }
    db.compact_range(None, None).expect("compact");
    move_down(&db, 1);
    let snap = db.snapshot();
    let at_snap = model.clone();
    // Newer versions of every third key, in one L1 table holding only entries newer
    // than the snapshot: the snapshot filter would skip it.
    for i in (0..2000u32).step_by(3) {
        let v = format!("new-{i}").into_bytes();
        db.put(&wo, &key(i), &v).expect("put");
        model.insert(key(i), v);
    }
    db.flush().expect("flush");
    move_down(&db, 0);
    let v = db.inner.default.versions.current();
    assert!(v.files(0).is_empty() && !v.files(1).is_empty() && !v.files(2).is_empty());
    assert!(v
        .files(1)
        .iter()
        .all(|f| f.smallest_seqno > snap.sequence()));
    drop(v);
    let deep = deep_entries(&db, 1);
    assert!(!deep.is_empty());

    for (ro, want) in [
        (ReadOptions::default(), &model),
        (
            ReadOptions::default().with_snapshot(Some(snap.clone())),
            &at_snap,
        ),
    ] {
        let mut it = db.iter(&ro).expect("iter");
        it.seek(&key(500));
        let mut got = Vec::new();
        while it.valid() && got.len() < 300 {
            got.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.status().expect("scan");
        let expected: Vec<(Vec<u8>, Vec<u8>)> = want
            .range(key(500)..)
            .take(300)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(got, expected, "the user's view is unchanged");

        let events = tees.last_log();
        let Some((Event::Start(Some(target)), rest)) = events.split_first() else {
            panic!("{events:?}");
        };
        assert_eq!(key::user_key(target), key(500));
        let seen: Vec<Vec<u8>> = rest
            .iter()
            .map(|e| match e {
                Event::Entry(k) => k.clone(),
                other => panic!("only entries follow the start: {other:?}"),
            })
            .collect();
        let last = seen.last().expect("entries");
        // Exactly the deeper levels' entries from the target to the last arrival.
        let expected: Vec<Vec<u8>> = deep
            .iter()
            .filter(|k| compare_internal(k, target).is_ge() && compare_internal(k, last).is_le())
            .cloned()
            .collect();
        assert_eq!(seen, expected);
        // Both versions of every third key, the newer one above the snapshot.
        let newer = make_internal_key(&key(501), snap.sequence(), KIND_SEEK);
        assert!(seen
            .iter()
            .any(|k| key::user_key(k) == key(501) && compare_internal(k, &newer).is_lt()));
        assert!(seen.iter().filter(|k| key::user_key(k) == key(501)).count() >= 2);
        drop(it);
    }

    // A backward move breaks the run; a fresh iterator is teed anew.
    let mut it = db.iter(&ReadOptions::default()).expect("iter");
    it.seek_to_first();
    it.next();
    it.prev();
    let events = tees.last_log();
    assert_eq!(events.first(), Some(&Event::Start(None)));
    assert_eq!(events.last(), Some(&Event::Broken));
    drop(it);
    // A full scan ends exhausted.
    let mut it = db.iter(&ReadOptions::default()).expect("iter");
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    assert_eq!(n, model.len());
    assert_eq!(tees.last_log().last(), Some(&Event::Exhausted));
    drop(it);
    db.close().expect("close");
}

/// A tee asking for level 0 or a level past the tree builds the iterator without one.
#[test]
fn an_out_of_range_level_builds_no_tee() {
    let dir = tempfile::tempdir().expect("tempdir");
    for level in [0, 99] {
        let tees = Arc::new(TeeAll {
            level,
            ..TeeAll::default()
        });
        let db = Db::builder()
            .scan_tees(Arc::clone(&tees) as Arc<dyn ScanTees>)
            .open(dir.path(), opts())
            .expect("open");
        db.put(&WriteOptions::default(), b"k", b"v").expect("put");
        db.compact_range(None, None).expect("compact");
        let mut it = db.iter(&ReadOptions::default()).expect("iter");
        it.seek_to_first();
        assert_eq!(it.key(), b"k");
        assert_eq!(tees.last_log(), Vec::<Event>::new(), "level {level}");
        drop(it);
        db.close().expect("close");
    }
}
