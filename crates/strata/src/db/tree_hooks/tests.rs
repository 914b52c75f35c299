//! The seam on a real database: which reads the hooks see, that a plan they
//! adjust is the plan that runs, that every plan is shown to them before it
//! registers, how gets read their source between two levels, and when the flush
//! thread takes copies.

use super::*;
use crate::compaction::plan::Partitioning;
use crate::env::FaultFs;
use crate::key::SequenceNumber;
use crate::{DbBuilder, ReadOptions, WriteOptions};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// (key, value length, level, plain, token) of one table read.
type Read = (Vec<u8>, usize, usize, bool, u64);

/// Records what it is shown, and cuts the outputs of every compaction it sees after
/// each key (an adjustment the test can observe in the file count).
#[derive(Debug, Default)]
struct Recorder {
    reads: Mutex<Vec<Read>>,
    plans: Mutex<usize>,
    registered: Mutex<usize>,
    closed: Mutex<usize>,
    tokens: AtomicU64,
}

impl TreeHooks for Recorder {
    fn read_token(&self) -> u64 {
        self.tokens.fetch_add(1, Ordering::Relaxed)
    }

    fn table_read(&self, read: &TableRead<'_>) -> bool {
        self.reads.lock().push((
            read.user_key.to_vec(),
            read.value.len(),
            read.level,
            read.plain,
            read.token,
        ));
        false
    }

    fn registering(&self, _plan: &mut Plan) {
        *self.registered.lock() += 1;
    }

    fn adjust_plan(&self, plan: &mut Plan, _version: &Version, _busy: &Busy) {
        *self.plans.lock() += 1;
        for s in &mut plan.outputs {
            s.partitioning = Partitioning::Fixed { target: 1 };
        }
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        vec![("plans", *self.plans.lock() as u64)]
    }

    fn close(&self) -> Result<()> {
        *self.closed.lock() += 1;
        Ok(())
    }
}

/// Gives every family the same hooks `H`, which the test keeps to look at.
#[derive(Debug)]
struct Factory<H>(Arc<H>);

impl<H: TreeHooks + 'static> TreeHooksFactory for Factory<H> {
    fn hooks_for(
        &self,
        _opts: &Options,
        _fs: &Arc<dyn FileSystem>,
        _dirs: &Dirs,
        _family: (u32, SequenceNumber),
    ) -> Result<Option<Arc<dyn TreeHooks>>> {
        Ok(Some(Arc::clone(&self.0) as Arc<dyn TreeHooks>))
    }
}

#[test]
fn hooks_see_table_reads_and_adjust_compactions() {
    let fs = Arc::new(FaultFs::new());
    let recorder = Arc::new(Recorder::default());
    let db = DbBuilder::new()
        .file_system(Arc::clone(&fs) as Arc<dyn FileSystem>)
        .tree_hooks(Arc::new(Factory(Arc::clone(&recorder))))
        .open(
            "/db",
            Options::default()
                .with_write_buffer_size(4096)
                .with_level0_file_num_compaction_trigger(2),
        )
        .expect("open");
    let w = WriteOptions::default();
    for round in 0..3 {
        for i in 0..10 {
            db.put(
                &w,
                format!("k{i}").as_bytes(),
                format!("v{round}-{i}").as_bytes(),
            )
            .expect("put");
        }
        db.flush().expect("flush");
    }
    db.wait_for_compactions().expect("idle");
    assert!(*recorder.plans.lock() >= 1, "a compaction was planned");
    // The adjusted plans ran: one table per key below L0.
    let deeper: usize = db.stats().levels.iter().skip(1).map(|l| l.files).sum();
    assert_eq!(deeper, 10, "{:?}", db.stats().levels);
    let plans = *recorder.plans.lock() as u64;
    assert_eq!(db.stats().tree_hooks, vec![("plans", plans)]);
    // Every plan picked was shown again just before it registered.
    assert_eq!(*recorder.registered.lock() as u64, plans);
    db.put(&w, b"mem", b"memtable value").expect("put");
    let ro = ReadOptions::default();
    assert_eq!(db.get(&ro, b"k3").expect("get"), Some(b"v2-3".to_vec()));
    assert_eq!(
        db.get(&ro, b"mem").expect("get"),
        Some(b"memtable value".to_vec())
    );
    assert_eq!(db.get(&ro, b"absent").expect("get"), None);
    let snap = db.snapshot();
    let at = ReadOptions {
        snapshot: Some(snap),
        ..ReadOptions::default()
    };
    assert_eq!(db.get(&at, b"k4").expect("get"), Some(b"v2-4".to_vec()));
    // Only the table answer without a snapshot; its token is the one its get sampled
    // (the first get's).
    let reads = recorder.reads.lock().clone();
    assert_eq!(reads.len(), 1);
    let (key, len, level, plain, token) = &reads[0];
    assert_eq!(
        (key.as_slice(), *len, *plain, *token),
        (&b"k3"[..], 4, true, 0)
    );
    // Every round wrote every key: the newest k3 is in L0 iff L0 has a file.
    let in_l0 = db.stats().levels.first().is_some_and(|l| l.files > 0);
    assert_eq!(*level == 0, in_l0, "{:?}", db.stats().levels);
    // Every key still reads its newest value after the adjusted compactions.
    for i in 0..10 {
        let k = format!("k{i}");
        assert_eq!(
            db.get(&ro, k.as_bytes()).expect("get"),
            Some(format!("v2-{i}").into_bytes())
        );
    }
    db.close().expect("close");
    assert_eq!(*recorder.closed.lock(), 1);
}

/// A source after L0 holding copies of two keys at sequence number 3.
#[derive(Debug)]
struct Source;

impl TreeHooks for Source {
    fn table_read(&self, _read: &TableRead<'_>) -> bool {
        false
    }

    fn source_after(&self) -> Option<usize> {
        Some(0)
    }

    fn get_after(&self, user_key: &[u8], seq: SequenceNumber) -> Option<(SequenceNumber, Vec<u8>)> {
        (matches!(user_key, b"copied" | b"deleted") && seq >= 3).then(|| (3, b"copy".to_vec()))
    }

    fn adjust_plan(&self, _plan: &mut Plan, _version: &Version, _busy: &Busy) {}

    fn figures(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    fn close(&self) -> Result<()> {
        Ok(())
    }
}

#[derive(Debug)]
struct SourceFactory;

impl TreeHooksFactory for SourceFactory {
    fn hooks_for(
        &self,
        _opts: &Options,
        _fs: &Arc<dyn FileSystem>,
        _dirs: &Dirs,
        _family: (u32, SequenceNumber),
    ) -> Result<Option<Arc<dyn TreeHooks>>> {
        Ok(Some(Arc::new(Source)))
    }
}

#[test]
fn gets_read_the_hooks_source_after_its_level_with_their_sequence_and_floor() {
    let fs = Arc::new(FaultFs::new());
    let db = DbBuilder::new()
        .file_system(Arc::clone(&fs) as Arc<dyn FileSystem>)
        .tree_hooks(Arc::new(SourceFactory))
        .open("/db", Options::default())
        .expect("open");
    let w = WriteOptions::default();
    let ro = ReadOptions::default();
    db.put(&w, b"other", b"1").expect("put"); // seq 1
    let before = db.snapshot();
    db.put(&w, b"other", b"2").expect("put"); // seq 2
    db.put(&w, b"other", b"3").expect("put"); // seq 3
    db.flush().expect("flush");
    // No memtable or table holds the keys: the source answers, at or above its
    // sequence number only.
    assert_eq!(db.get(&ro, b"copied").expect("get"), Some(b"copy".to_vec()));
    let old = ReadOptions {
        snapshot: Some(before),
        ..ReadOptions::default()
    };
    assert_eq!(db.get(&old, b"copied").expect("get"), None);
    assert_eq!(db.get(&ro, b"absent").expect("get"), None);
    // A newer range tombstone above the source hides the copy; a newer put shadows it.
    db.delete_range(&w, b"d", b"e").expect("delete_range");
    db.put(&w, b"copied", b"newer").expect("put");
    assert_eq!(db.get(&ro, b"deleted").expect("get"), None);
    assert_eq!(
        db.get(&ro, b"copied").expect("get"),
        Some(b"newer".to_vec())
    );
    db.flush().expect("flush");
    assert_eq!(db.get(&ro, b"deleted").expect("get"), None);
    assert_eq!(
        db.get(&ro, b"copied").expect("get"),
        Some(b"newer".to_vec())
    );
    db.close().expect("close");
}

/// Records the (family id, last sequence number) each `hooks_for` call was given.
#[derive(Debug, Default)]
struct SequenceFactory(Mutex<Vec<(u32, SequenceNumber)>>);

impl TreeHooksFactory for SequenceFactory {
    fn hooks_for(
        &self,
        _opts: &Options,
        _fs: &Arc<dyn FileSystem>,
        _dirs: &Dirs,
        family: (u32, SequenceNumber),
    ) -> Result<Option<Arc<dyn TreeHooks>>> {
        self.0.lock().push(family);
        Ok(None)
    }
}

/// `hooks_for` is told the database's last sequence number: at a fresh open, at a
/// reopen (the WAL's records included: they are in the memtables), and when a family
/// is created.
#[test]
fn hooks_are_told_the_last_sequence_number() {
    let fs = Arc::new(FaultFs::new());
    let open = |factory: &Arc<SequenceFactory>| {
        DbBuilder::new()
            .file_system(Arc::clone(&fs) as Arc<dyn FileSystem>)
            .tree_hooks(Arc::clone(factory) as Arc<dyn TreeHooksFactory>)
            .open("/db", Options::default())
            .expect("open")
    };
    let first = Arc::new(SequenceFactory::default());
    let db = open(&first);
    let w = WriteOptions::default();
    for i in 0..5u8 {
        db.put(&w, &[b'k', i], b"v").expect("put");
    }
    assert_eq!(*first.0.lock(), vec![(0, 0)]);
    db.close().expect("close");

    let second = Arc::new(SequenceFactory::default());
    let db = open(&second);
    assert_eq!(*second.0.lock(), vec![(0, 5)]);
    for i in 5..8u8 {
        db.put(&w, &[b'k', i], b"v").expect("put");
    }
    db.create_cf("other", crate::CfOptions::default())
        .expect("create family");
    let calls = second.0.lock().clone();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls.get(1).map(|c| c.1), Some(8));
    assert_eq!(db.latest_sequence(), 8);
    db.close().expect("close");
}

/// Holds one batch of copies that waits until the family's version has a table in
/// L1; records the L1 table count of every version `take_copies` was shown.
#[derive(Debug, Default)]
struct Waiter {
    pending: std::sync::atomic::AtomicBool,
    taken_at_l1: Mutex<Vec<usize>>,
    /// (batch, survivors, dropped) of each `copies_checked` call: asserted by the
    /// test thread (a panic on the flush thread would only show as a timeout).
    checked: Mutex<Vec<(u64, usize, usize)>>,
}

impl TreeHooks for Waiter {
    fn table_read(&self, _read: &TableRead<'_>) -> bool {
        self.pending.load(Ordering::SeqCst)
    }

    fn has_copies(&self, version: &Version) -> bool {
        self.pending.load(Ordering::SeqCst) && !version.files(1).is_empty()
    }

    fn take_copies(&self, version: &Version) -> Option<Copies> {
        self.taken_at_l1.lock().push(version.files(1).len());
        self.pending.store(false, Ordering::SeqCst);
        Some(Copies {
            records: vec![Copy {
                key: b"a".to_vec(),
                seq: 1,
                value: b"1".to_vec(),
            }],
            check_through: 1,
            path_id: 0,
            batch: 7,
        })
    }

    fn copies_checked(&self, batch: u64, survivors: Vec<Copy>, dropped: usize) -> Vec<Copy> {
        self.checked.lock().push((batch, survivors.len(), dropped));
        Vec::new()
    }

    fn adjust_plan(&self, _plan: &mut Plan, _version: &Version, _busy: &Busy) {}

    fn figures(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    fn close(&self) -> Result<()> {
        Ok(())
    }
}

/// Copies wait for a version the hooks can take them in: the flush thread, woken by
/// a read, leaves them while `has_copies` says no over the current version, and asks
/// again after the next install, handing `take_copies` the version that changed its
/// answer. (The copy is of a key with a version in L1, so the check drops it.)
#[test]
fn copies_wait_for_the_version_the_hooks_ask_for() {
    let fs = Arc::new(FaultFs::new());
    let hooks = Arc::new(Waiter::default());
    let db = DbBuilder::new()
        .file_system(Arc::clone(&fs) as Arc<dyn FileSystem>)
        .tree_hooks(Arc::new(Factory(Arc::clone(&hooks))))
        .open("/db", Options::default())
        .expect("open");
    db.put(&WriteOptions::default(), b"a", b"1").expect("put");
    db.flush().expect("flush");
    hooks.pending.store(true, Ordering::SeqCst);
    // The read wakes the flush thread, which finds no L1 table: nothing is taken.
    let ro = ReadOptions::default();
    assert_eq!(db.get(&ro, b"a").expect("get"), Some(b"1".to_vec()));
    std::thread::sleep(std::time::Duration::from_millis(100));
    db.wait_for_compactions().expect("idle");
    assert!(hooks.taken_at_l1.lock().is_empty());
    // A compaction installs a version with an L1 table, and wakes the thread.
    db.compact_range(None, None).expect("compact");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while hooks.checked.lock().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the copies were never taken"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert_eq!(*hooks.taken_at_l1.lock(), vec![1]);
    assert_eq!(*hooks.checked.lock(), vec![(7, 0, 1)]);
    assert_eq!(db.get(&ro, b"a").expect("get"), Some(b"1".to_vec()));
    db.close().expect("close");
}
