//! Whole files that no reader can see: found from range tombstones and live
//! snapshots, and deleted by a metadata-only edit ([`Action::Drop`]) instead of being
//! read and rewritten (RocksDB's `DeleteFilesInRange`, applied by the policy).
//!
//! Role: a compaction policy calls [`pick`] before its own picks (the default
//! `Leveled` does, in `pick` and `pick_manual`); the executor runs the
//! plan as an edit deleting the files. The policy sees only plain data: the version, the
//! [`Busy`] set, and a [`Coverage`]: the live snapshots and the range tombstones of the
//! version's files. The scheduler reads those tombstones through the table cache
//! (`Tombstones::gather`, which may open tables, so outside the state lock) and
//! samples the snapshots under the state lock after loading the version it picks on.
//!
//! # The rules: version GC (§6.6 of docs/ARCHITECTURE.md) applied to a whole file
//! 1. **Covered.** A real file `F` is dropped iff every user key of its range lies in
//!    a fragment of the tombstones of other files (no job holding them) that holds a
//!    sequence number `t` with `F.largest_seqno < t <= stripe_upper(F.smallest_seqno)`:
//!    `t` is newer than every entry of `F` and no live snapshot lies in
//!    `[F.smallest_seqno, t)`. For each entry `e` of `F` this is exactly the rule by
//!    which a rewrite drops `e` (`t` in `(e, stripe_upper(e)]`; `stripe_upper` only
//!    grows with `e`), so every reader that could see `e` sees `t`. A snapshot taken
//!    after the sample reads at or above every tombstone of the version, so it sees `t`
//!    too. `F`'s own tombstones hide only older entries under `F`'s range, which `t`
//!    hides from the same readers.
//! 2. **Hiding nothing.** A file of range tombstones only (no point entry), at L1 or
//!    deeper, is dropped iff no file of a deeper level intersects its range and no
//!    live snapshot is older than its newest tombstone: what a bottommost rewrite of
//!    it would write is nothing (tombstones of stripe 0 go at the bottom). Newer
//!    levels hold no entry older than a tombstone below them in its range (a tombstone
//!    moves down with the files it covers, §6.9), so there is nothing for it to hide.
//!
//! Without rule 2 the tombstones that rule 1 leaves alone would move down by trivial
//! moves (the files they covered are gone) and stay at the bottom for good.
//!
//! # Invariants of a drop plan
//! 1. No input file is busy, and no tombstone of a busy file counts as cover: a running
//!    job may rewrite that file. (Such a job keeps the tombstone unless it is
//!    bottommost, and then nothing below it overlaps it; either way the cover would
//!    hold, but not relying on it keeps the argument local.)
//! 2. Only files whose tombstones were gathered are considered (rule 2) or count as
//!    cover (rule 1): a [`Coverage`] without tombstones drops nothing.
//! 3. Virtual files are never dropped here: their entries are their parents'.
//!
//! A file dropped by rule 1 may also cover another file of the same plan: its cover
//! `t'` then covers its whole range, so by the same inequalities `t'` covers the other
//! file's entries for every reader.
//!
//! Concurrency: [`pick`] is a pure function of its arguments; `Tombstones::gather`
//! reads through the table cache and takes no database lock.
//!
//! See also: `covered/tests.rs` (the rules on hand-built versions), and
//! `tests/range_delete.rs` (a covered file dropped with nothing written, a snapshot
//! keeping it).

use super::gc;
use super::picker::Busy;
use super::plan::{Action, Input, Plan, Reason, Routing};
use crate::cache::TableCache;
use crate::key::{self, SequenceNumber, ValueKind, MAX_SEQUENCE};
use crate::range_del::{Fragments, RangeTombstone};
use crate::version::{FileKind, FileMetaData, Version};
use std::collections::HashMap;
use std::sync::Arc;

/// The range tombstones of a version's files, by file number: plain data the policy
/// can read without I/O. Files without tombstones are absent.
#[derive(Clone, Debug, Default)]
pub struct Tombstones {
    by_file: HashMap<u64, Arc<Fragments>>,
}

impl Tombstones {
    /// Reads the tombstones of every file of `versions` that has any
    /// (`num_range_deletions > 0`) through `table_cache`, opening tables not yet open.
    /// (File numbers are unique across column families, so one set serves them all.)
    /// A table that fails to open is left out: it then neither covers nor is dropped,
    /// and the compaction that next reads it reports the error.
    ///
    /// Requires: the database's `state` lock not held (this may read files).
    pub(crate) fn gather<'a>(
        versions: impl IntoIterator<Item = &'a Version>,
        table_cache: &TableCache,
    ) -> Tombstones {
        let mut by_file = HashMap::new();
        for f in versions.into_iter().flat_map(Version::live_files) {
            if f.num_range_deletions == 0 || f.kind != FileKind::Real {
                continue;
            }
            if let Some(rd) = table_cache.get(f).ok().and_then(|t| t.shared_range_dels()) {
                by_file.insert(f.number, rd);
            }
        }
        Tombstones { by_file }
    }

    /// Records the tombstones of file `number` (tests build views by hand).
    #[cfg(test)]
    pub(crate) fn insert(&mut self, number: u64, tombstones: &[RangeTombstone]) {
        self.by_file
            .insert(number, Arc::new(Fragments::new(tombstones)));
    }

    fn get(&self, number: u64) -> Option<&Fragments> {
        self.by_file.get(&number).map(|f| f.as_ref())
    }
}

/// What shows a file invisible beyond the version: the live snapshots and the range
/// tombstones of the version's files.
#[derive(Clone, Copy, Debug)]
pub struct Coverage<'a> {
    snapshots: &'a [SequenceNumber],
    tombstones: &'a Tombstones,
}

impl<'a> Coverage<'a> {
    /// `snapshots`: the live snapshot sequence numbers, ascending, sampled after the
    /// version the policy picks on was loaded (module docs); `tombstones`: gathered from
    /// that version or an older one (files missing from it are simply not considered).
    pub fn new(snapshots: &'a [SequenceNumber], tombstones: &'a Tombstones) -> Self {
        Coverage {
            snapshots,
            tombstones,
        }
    }
}

/// Which files a drop plan may take: those of `from_level` and deeper intersecting the
/// user-key range `[begin, end]` (`None` = unbounded).
#[derive(Clone, Copy, Debug, Default)]
pub struct Scope<'a> {
    /// The shallowest level considered.
    pub from_level: usize,
    /// Inclusive lower bound of the user keys (`None`: unbounded).
    pub begin: Option<&'a [u8]>,
    /// Inclusive upper bound of the user keys (`None`: unbounded).
    pub end: Option<&'a [u8]>,
}

/// A plan dropping every file in `scope` that no job holds and no reader can see (the
/// module's rules), or `None` if there is none.
pub fn pick(
    version: &Version,
    busy: &Busy,
    coverage: &Coverage<'_>,
    scope: Scope<'_>,
) -> Option<Plan> {
    if coverage.tombstones.by_file.is_empty() {
        return None;
    }
    let free = |f: &Arc<FileMetaData>| !busy.files.contains(&f.number) && f.kind == FileKind::Real;
    let mut cover: Vec<RangeTombstone> = Vec::new();
    for f in version.live_files().filter(|f| free(f)) {
        if let Some(rd) = coverage.tombstones.get(f.number) {
            cover.extend(rd.tombstones());
        }
    }
    let cover = Fragments::new(&cover);
    let mut inputs = Vec::new();
    for level in scope.from_level..version.num_levels() {
        let files: Vec<Arc<FileMetaData>> = version
            .overlapping_files(level, scope.begin, scope.end)
            .into_iter()
            .filter(|f| {
                free(f)
                    && (covered(f, &cover, coverage.snapshots)
                        || hides_nothing(version, level, f, coverage))
            })
            .collect();
        if !files.is_empty() {
            inputs.push(Input::Files { level, files });
        }
    }
    (!inputs.is_empty()).then(|| Plan {
        action: Action::Drop,
        inputs,
        outputs: Vec::new(),
        routing: Routing::single(),
        bottommost: false,
        log_number: None,
        reason: Reason::RangeDeletion,
        range: None,
    })
}

/// Rule 1: every key of `f` lies under a tombstone newer than all of `f` with no live
/// snapshot in `[f.smallest_seqno, tombstone)`.
fn covered(f: &FileMetaData, cover: &Fragments, snapshots: &[SequenceNumber]) -> bool {
    let upper = gc::stripe_upper(snapshots, f.smallest_seqno);
    let (hi, hi_inclusive) = user_key_end(f);
    cover.covers_range(f.smallest_user_key(), hi, hi_inclusive, |t| {
        t > f.largest_seqno && upper.is_none_or(|u| t <= u)
    })
}

/// Rule 2: `f` holds tombstones only, all in stripe 0, and nothing below overlaps it
/// (nor beside it: a level of column-group runs may hold older entries its tombstones
/// hide, `version::run`).
fn hides_nothing(
    version: &Version,
    level: usize,
    f: &FileMetaData,
    coverage: &Coverage<'_>,
) -> bool {
    let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
    level >= 1
        && !version.has_group_runs(level)
        && f.num_entries == 0
        && coverage.tombstones.get(f.number).is_some()
        && coverage
            .snapshots
            .first()
            .is_none_or(|&s| s >= f.largest_seqno)
        && !version.overlaps_below(level, lo, hi)
}

/// The file's last user key and whether the file may hold it: a largest key
/// `(k, MAX_SEQUENCE, RangeDelete)` is where the file's tombstones end (exclusive),
/// and it sorts before every entry of `k`, so the file holds nothing of `k`
/// (`sst::builder`).
fn user_key_end(f: &FileMetaData) -> (&[u8], bool) {
    match key::parse_internal_key(&f.largest) {
        Some(p) if p.kind == ValueKind::RangeDelete && p.seq == MAX_SEQUENCE => (p.user_key, false),
        _ => (f.largest_user_key(), true),
    }
}

#[cfg(test)]
mod tests;
