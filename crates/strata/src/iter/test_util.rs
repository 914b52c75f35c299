//! Test helpers shared by the iterator modules' tests.

use super::InternalIterator;
use crate::error::{Error, Result};
use crate::key::compare_internal;

/// A sorted in-memory iterator that fails (invalid + error) after `budget` moves; with
/// `budget: usize::MAX` it never fails, so it also serves as a plain iterator over a
/// `Vec`. `entries` must be sorted by [`compare_internal`] without duplicates.
pub(crate) struct FailingIter {
    pub(crate) entries: Vec<(Vec<u8>, Vec<u8>)>,
    pub(crate) pos: Option<usize>,
    pub(crate) budget: usize,
    pub(crate) failed: bool,
}

impl FailingIter {
    /// An unpositioned iterator over `entries` that fails on its move number
    /// `budget + 1`.
    pub(crate) fn new(entries: Vec<(Vec<u8>, Vec<u8>)>, budget: usize) -> FailingIter {
        FailingIter {
            entries,
            pos: None,
            budget,
            failed: false,
        }
    }

    fn spend(&mut self) {
        if self.budget == 0 {
            self.failed = true;
            self.pos = None;
        } else {
            self.budget -= 1;
        }
    }

    fn set(&mut self, p: Option<usize>) {
        self.pos = p.filter(|&p| p < self.entries.len());
        self.spend();
    }
}

impl InternalIterator for FailingIter {
    fn valid(&self) -> bool {
        self.pos.is_some()
    }
    fn seek_to_first(&mut self) {
        self.set(Some(0));
    }
    fn seek_to_last(&mut self) {
        self.set(self.entries.len().checked_sub(1));
    }
    fn seek(&mut self, t: &[u8]) {
        let p = self
            .entries
            .partition_point(|e| compare_internal(&e.0, t).is_lt());
        self.set(Some(p));
    }
    fn seek_for_prev(&mut self, t: &[u8]) {
        let p = self
            .entries
            .partition_point(|e| compare_internal(&e.0, t).is_le());
        self.set(p.checked_sub(1));
    }
    fn next(&mut self) {
        self.set(self.pos.map(|p| p + 1));
    }
    fn prev(&mut self) {
        self.set(self.pos.and_then(|p| p.checked_sub(1)));
    }
    fn key(&self) -> &[u8] {
        self.pos
            .and_then(|p| self.entries.get(p))
            .map_or(&[], |e| &e.0)
    }
    fn value(&self) -> &[u8] {
        self.pos
            .and_then(|p| self.entries.get(p))
            .map_or(&[], |e| &e.1)
    }
    fn status(&self) -> Result<()> {
        if self.failed {
            Err(Error::corruption("000007.sst", 4096, "injected"))
        } else {
            Ok(())
        }
    }
}
