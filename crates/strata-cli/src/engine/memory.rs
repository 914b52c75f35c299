//! An in-memory [`KvEngine`] (a `BTreeMap` behind a lock) so workloads, YCSB phases and
//! `ldb` can be tested before the real engine exists. Test builds only.

use super::{scan_bounds, BatchOp, Commit, Direction, EngineStats, KvEngine, Scan, Visitor};
use crate::error::Result;
use std::collections::BTreeMap;
use std::sync::RwLock;

/// `key += operand` as `strata::merge::U64Add` does it.
fn add(m: &mut BTreeMap<Vec<u8>, Vec<u8>>, key: &[u8], operand: &[u8]) -> Result<()> {
    use strata::MergeOperator;
    let merged = strata::merge::U64Add
        .full_merge(key, m.get(key).map(Vec::as_slice), &[operand])
        .map_err(|e| crate::error::CliError::Usage(e.reason))?;
    m.insert(key.to_vec(), merged);
    Ok(())
}

fn apply(m: &mut BTreeMap<Vec<u8>, Vec<u8>>, ops: &[BatchOp<'_>]) -> Result<()> {
    for op in ops {
        match *op {
            BatchOp::Put(k, v) => {
                m.insert(k.to_vec(), v.to_vec());
            }
            BatchOp::Delete(k) => {
                m.remove(k);
            }
            BatchOp::Merge(k, v) => add(m, k, v)?,
        }
    }
    Ok(())
}

/// A sorted map behaving like a database.
#[derive(Default)]
pub struct MemoryEngine {
    map: RwLock<BTreeMap<Vec<u8>, Vec<u8>>>,
    /// What [`KvEngine::unavailable_stats`] answers (empty by default).
    unavailable: &'static [&'static str],
}

impl MemoryEngine {
    /// An engine that claims not to expose the figures `unavailable` names, to test
    /// how results report an engine like fjall.
    pub fn with_unavailable_stats(unavailable: &'static [&'static str]) -> MemoryEngine {
        MemoryEngine {
            unavailable,
            ..MemoryEngine::default()
        }
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.map.read().map_or(0, |m| m.len())
    }
}

impl KvEngine for MemoryEngine {
    fn name(&self) -> &'static str {
        "memory"
    }
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        if let Ok(mut m) = self.map.write() {
            m.insert(key.to_vec(), value.to_vec());
        }
        Ok(())
    }
    fn get_with(&self, key: &[u8], found: &mut dyn FnMut(&[u8])) -> Result<bool> {
        let map = self.map.read().ok();
        Ok(map.and_then(|m| m.get(key).map(|v| found(v))).is_some())
    }
    fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
        if let Ok(mut m) = self.map.write() {
            add(&mut m, key, operand)?;
        }
        Ok(())
    }

    fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
        if let Ok(mut m) = self.map.write() {
            m.retain(|k, _| !(start <= k.as_slice() && k.as_slice() < end));
        }
        Ok(())
    }

    fn delete(&self, key: &[u8]) -> Result<()> {
        if let Ok(mut m) = self.map.write() {
            m.remove(key);
        }
        Ok(())
    }
    fn transaction(&self, read_for_update: &[&[u8]], ops: &[BatchOp<'_>]) -> Result<Commit> {
        // Under the write lock nothing can interleave: every transaction commits.
        let found = match self.map.write() {
            Ok(mut m) => {
                let found = read_for_update
                    .iter()
                    .filter(|k| m.contains_key(**k))
                    .count();
                apply(&mut m, ops)?;
                found
            }
            Err(_) => 0,
        };
        Ok(Commit::Done { found })
    }
    fn write_batch(&self, ops: &[BatchOp<'_>]) -> Result<()> {
        if let Ok(mut m) = self.map.write() {
            apply(&mut m, ops)?;
        }
        Ok(())
    }
    fn scan(&self, scan: Scan<'_>, visit: &mut Visitor<'_>) -> Result<usize> {
        let Ok(m) = self.map.read() else {
            return Ok(0);
        };
        let mut n = 0;
        let mut step = |k: &Vec<u8>, v: &Vec<u8>| {
            if n >= scan.limit {
                return false;
            }
            n += 1;
            visit(k, v)
        };
        let bounds = scan_bounds(scan);
        match scan.direction {
            Direction::Forward => {
                for (k, v) in m.range::<[u8], _>(bounds) {
                    if !step(k, v) {
                        break;
                    }
                }
            }
            Direction::Reverse => {
                for (k, v) in m.range::<[u8], _>(bounds).rev() {
                    if !step(k, v) {
                        break;
                    }
                }
            }
        }
        Ok(n)
    }
    fn flush(&self) -> Result<()> {
        Ok(())
    }
    fn compact(&self, _: Option<&[u8]>, _: Option<&[u8]>) -> Result<()> {
        Ok(())
    }
    fn wait_for_compactions(&self) -> Result<()> {
        Ok(())
    }
    fn stats(&self) -> EngineStats {
        EngineStats {
            level_table: "memory engine: no levels\n".into(),
            ..EngineStats::default()
        }
    }
    fn unavailable_stats(&self) -> &'static [&'static str] {
        self.unavailable
    }
    fn close(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}
