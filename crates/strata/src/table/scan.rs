//! Row scans over the generic read path: a user iterator of the table's family, each
//! key's parts resolved by the row operator, ghosts skipped. The reference the
//! planned batch scans (issue 31) will be tested against.

use super::part::Part;
use super::profile::Profile;
use super::schema::{Schema, Value};
use crate::db::DbIterator;
use crate::error::{Error, Result};
use parking_lot::Mutex;
use std::sync::Arc;

/// Rows of a table in key order (or reverse), from [`super::Table::scan`].
pub struct Scan {
    iter: DbIterator,
    schema: Arc<Schema>,
    table: String,
    projection: Vec<usize>,
    /// The encoded bound the scan stops beyond (inclusive), if any.
    end: Option<Vec<u8>>,
    reverse: bool,
    started: bool,
    done: bool,
    /// Rows returned so far.
    rows: u64,
    /// Where the scan is recorded when dropped (`profile.rs`), if anywhere.
    profile: Option<Arc<Mutex<Profile>>>,
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scan")
            .field("table", &self.table)
            .field("projection", &self.projection)
            .field("reverse", &self.reverse)
            .finish()
    }
}

impl Scan {
    /// A scan over `iter` (positioned by the first `next`: at `start`, or the first or
    /// last key) up to `end`, both inclusive and encoded.
    pub(super) fn new(
        mut iter: DbIterator,
        schema: Arc<Schema>,
        table: &str,
        (start, end): (Option<Vec<u8>>, Option<Vec<u8>>),
        projection: Vec<usize>,
        reverse: bool,
    ) -> Scan {
        match (&start, reverse) {
            (Some(s), false) => iter.seek(s),
            (Some(s), true) => iter.seek_for_prev(s),
            (None, false) => iter.seek_to_first(),
            (None, true) => iter.seek_to_last(),
        }
        Scan {
            iter,
            schema,
            table: table.to_owned(),
            projection,
            end,
            reverse,
            started: false,
            done: false,
            rows: 0,
            profile: None,
        }
    }

    /// The scan, recorded in `profile` (its projection and rows returned) when dropped.
    pub(super) fn profiled(mut self, profile: Arc<Mutex<Profile>>) -> Scan {
        self.profile = Some(profile);
        self
    }

    fn corruption(&self, key: &[u8], e: String) -> Error {
        Error::Corruption {
            file: format!("table `{}`", self.table).into(),
            offset: 0,
            reason: format!("the row of key {key:02x?}: {e}"),
        }
    }
}

impl Iterator for Scan {
    type Item = Result<(Value, Vec<Value>)>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            if self.started {
                if self.reverse {
                    self.iter.prev();
                } else {
                    self.iter.next();
                }
            }
            self.started = true;
            if !self.iter.valid() {
                self.done = true;
                return self.iter.status().err().map(Err);
            }
            let key = self.iter.key();
            let beyond =
                self.end.as_deref().is_some_and(
                    |end| {
                        if self.reverse {
                            key < end
                        } else {
                            key > end
                        }
                    },
                );
            if beyond {
                self.done = true;
                return None;
            }
            let part = match Part::decode(&self.schema, self.iter.value()) {
                Ok(p) => p,
                Err(e) => {
                    self.done = true;
                    return Some(Err(self.corruption(key, e)));
                }
            };
            if !part.exists() {
                continue;
            }
            let row = match self.schema.decode_key(key) {
                Ok(k) => {
                    self.rows += 1;
                    (k, part.project(&self.projection))
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(self.corruption(key, e)));
                }
            };
            return Some(Ok(row));
        }
        None
    }
}

impl Drop for Scan {
    fn drop(&mut self) {
        if let Some(profile) = &self.profile {
            let mut p = profile.lock();
            let at = p
                .scans
                .entry(std::mem::take(&mut self.projection))
                .or_default();
            at.0 += 1;
            at.1 += self.rows;
        }
    }
}
