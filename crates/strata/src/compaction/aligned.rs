//! Aligned compaction (Kim et al., "HTAP amplifies I/O in LSM-trees", §IV,
//! Algorithm 1): cut a compaction's output files at the key boundaries of the files
//! one level further down, so the next compaction of each output file finds exactly
//! the files it overlaps, with no *false overlap* (overhang).
//!
//! # Why
//! A compaction from `L_N` into `L_{N+1}` must read and rewrite every `L_{N+1}` file
//! the input overlaps. With fixed-size output files, the boundaries of `L_{N+1}` fall
//! anywhere relative to `L_{N+2}`, so when an `L_{N+1}` file later moves down it drags
//! in `L_{N+2}` files that only partly overlap it; the parts outside (the overhang) are
//! read and rewritten for nothing. If every `L_{N+1}` file instead ends where an
//! `L_{N+2}` file ends, the overhang disappears.
//!
//! # The rule (Algorithm 1), per new user key `k` and current output size `s`
//! 1. `s >= target * variance`: cut (hard upper bound).
//! 2. `k` passed the end of the current grandparent file: cut if
//!    `s >= target / variance` (an aligned point, taken once the file is not tiny);
//!    advance to the grandparent that may contain `k`.
//! 3. `k` lies in a gap between grandparents, or past the last one: fixed-size rule,
//!    cut if `s >= target`.
//! 4. `k` lies inside a grandparent's range: never cut (that would create an overhang).
//!
//! With no grandparents at all every key takes rule 3: plain fixed-size cutting.
//!
//! Seam: this is an [`OutputPartitioner`]; `compaction::partitioner::for_stream`
//! builds it for a stream whose plan says `Partitioning::Aligned`. The false-overlap
//! statistic is measured by [`OverlapCounter`] around the compaction inputs.

use super::partitioner::OutputPartitioner;
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key;
use crate::version::FileMetaData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The aligned output partitioner of one compaction.
#[derive(Debug)]
pub struct Aligned {
    /// User-key ranges of the grandparent files, in key order.
    grandparents: Vec<(Vec<u8>, Vec<u8>)>,
    /// The grandparent files' sizes, in the same order.
    grandparent_sizes: Vec<u64>,
    /// Index of the first grandparent whose largest key is >= the last key seen.
    next: usize,
    target: u64,
    min: u64,
    max: u64,
}

impl Aligned {
    /// Requires: `grandparents` sorted and non-overlapping (a level below L0);
    /// `variance > 1`.
    pub fn new(grandparents: &[Arc<FileMetaData>], target: u64, variance: f64) -> Self {
        Aligned {
            grandparents: grandparents
                .iter()
                .map(|f| {
                    (
                        f.smallest_user_key().to_vec(),
                        f.largest_user_key().to_vec(),
                    )
                })
                .collect(),
            grandparent_sizes: grandparents.iter().map(|f| f.size).collect(),
            next: 0,
            target,
            min: (target as f64 / variance) as u64,
            max: (target as f64 * variance) as u64,
        }
    }
}

impl OutputPartitioner for Aligned {
    fn cuts_at_tombstone_ends(&self) -> bool {
        !self.grandparents.is_empty()
    }

    /// RocksDB cuts on grandparent overlap too: a file holding tombstones over one end
    /// of a gap and entries at the other would overlap every grandparent in between,
    /// and the compaction that moves it down would rewrite all of them. Cut when the
    /// grandparents lying entirely in `[tombstones_end, next_user_key)` hold more than
    /// a target file size.
    fn cut_at_tombstones_end(&self, tombstones_end: &[u8], next_user_key: &[u8]) -> bool {
        let between: u64 = self
            .grandparents
            .iter()
            .zip(&self.grandparent_sizes)
            .filter(|((smallest, largest), _)| {
                smallest.as_slice() >= tombstones_end && largest.as_slice() < next_user_key
            })
            .map(|(_, size)| size)
            .sum();
        between > self.target
    }

    fn should_cut(&mut self, k: &[u8], size: u64) -> bool {
        let mut crossed = false;
        while self
            .grandparents
            .get(self.next)
            .is_some_and(|(_, largest)| k > largest.as_slice())
        {
            self.next += 1;
            crossed = true;
        }
        if size == 0 {
            return false;
        }
        if size >= self.max {
            return true;
        }
        if crossed {
            return size >= self.min;
        }
        match self.grandparents.get(self.next) {
            None => size >= self.target,
            Some((smallest, _)) if k <= smallest.as_slice() => size >= self.target,
            Some(_) => false,
        }
    }
}

/// Counts the bytes of a compaction's input that are false overlaps: entries of the
/// output-level input files whose keys lie outside the key range of the upper-level
/// inputs (they are merged with nothing, only read and rewritten).
#[derive(Debug, Default)]
pub struct OverlapCounter {
    /// Key + value bytes of every input entry.
    pub input_bytes: AtomicU64,
    /// Key + value bytes of false-overlap entries.
    pub false_overlap_bytes: AtomicU64,
}

/// Wraps one input iterator of a compaction and counts what it yields forward.
pub struct CountingIter<I> {
    inner: I,
    counter: Arc<OverlapCounter>,
    /// `Some((lo, hi))` for an output-level input: entries outside are false overlaps.
    range: Option<(Vec<u8>, Vec<u8>)>,
}

impl<I: InternalIterator> CountingIter<I> {
    /// Counts `inner`'s entries into `counter`; `range` is the upper inputs' user-key
    /// range for an output-level file, `None` for an upper-level file.
    pub fn new(inner: I, counter: Arc<OverlapCounter>, range: Option<(Vec<u8>, Vec<u8>)>) -> Self {
        CountingIter {
            inner,
            counter,
            range,
        }
    }

    fn count(&self) {
        if !self.inner.valid() {
            return;
        }
        let bytes = (self.inner.key().len() + self.inner.value().len()) as u64;
        self.counter.input_bytes.fetch_add(bytes, Ordering::Relaxed);
        if let Some((lo, hi)) = &self.range {
            let k = key::user_key(self.inner.key());
            if k < lo.as_slice() || k > hi.as_slice() {
                self.counter
                    .false_overlap_bytes
                    .fetch_add(bytes, Ordering::Relaxed);
            }
        }
    }
}

/// Counts each entry when the iterator lands on it moving forward (compaction only
/// moves forward, from `seek_to_first`).
impl<I: InternalIterator> InternalIterator for CountingIter<I> {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.inner.seek_to_first();
        self.count();
    }
    fn seek_to_last(&mut self) {
        self.inner.seek_to_last();
    }
    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target);
        self.count();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.inner.seek_for_prev(target);
    }
    fn next(&mut self) {
        self.inner.next();
        self.count();
    }
    fn prev(&mut self) {
        self.inner.prev();
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gp(lo: &str, hi: &str) -> Arc<FileMetaData> {
        Arc::new(FileMetaData::for_test(1, lo, hi, 1, 1, 0))
    }

    #[test]
    fn cuts_at_grandparent_ends_within_bounds() {
        let g = [gp("b", "d"), gp("f", "h")];
        let mut p = Aligned::new(&g, 100, 2.0);
        assert!(
            !p.should_cut(b"c", 150),
            "inside a grandparent: no cut below max"
        );
        assert!(p.should_cut(b"e", 60), "passed d with size >= min: cut");
        let mut p = Aligned::new(&g, 100, 2.0);
        assert!(
            !p.should_cut(b"e", 40),
            "passed d but below min: keep going"
        );
        assert!(!p.should_cut(b"g", 199), "inside f..h below max");
        assert!(p.should_cut(b"g", 200), "max bound");
        assert!(
            p.should_cut(b"z", 100),
            "past the last grandparent: fixed size"
        );
        let mut p = Aligned::new(&[], 100, 2.0);
        assert!(!p.should_cut(b"a", 99));
        assert!(p.should_cut(b"a", 100));
    }
}
