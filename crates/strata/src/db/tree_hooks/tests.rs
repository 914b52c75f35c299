//! The seam on a real database: which reads the hooks see, and that a plan they
//! adjust is the plan that runs.

use super::*;
use crate::compaction::plan::Partitioning;
use crate::env::FaultFs;
use crate::{DbBuilder, ReadOptions, WriteOptions};
use parking_lot::Mutex;

/// Records what it is shown, and cuts the outputs of every compaction it sees after
/// each key (an adjustment the test can observe in the file count).
#[derive(Debug, Default)]
struct Recorder {
    reads: Mutex<Vec<(Vec<u8>, usize, u32)>>,
    plans: Mutex<usize>,
    closed: Mutex<usize>,
}

impl TreeHooks for Recorder {
    fn table_read(&self, user_key: &[u8], value_len: usize, path_id: u32) {
        self.reads
            .lock()
            .push((user_key.to_vec(), value_len, path_id));
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

#[derive(Debug)]
struct Factory(Arc<Recorder>);

impl TreeHooksFactory for Factory {
    fn hooks_for(
        &self,
        _opts: &Options,
        _fs: &Arc<dyn FileSystem>,
        _dirs: &Dirs,
        _family_id: u32,
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
    // Only the table answer without a snapshot.
    assert_eq!(*recorder.reads.lock(), vec![(b"k3".to_vec(), 4, 0)]);
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
