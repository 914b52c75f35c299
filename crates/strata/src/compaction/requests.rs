//! Compactions that reads ask for: the seam from the read path to the compaction
//! policy.
//!
//! Role: a policy may want a table compacted because of how reads meet it, not because
//! of its level's size (a virtual table read through many parents, say). It says
//! which tables through [`CompactionPolicy::compact_on_read`]; the read path asks
//! that question of each such table it meets and, on `true`, records the request in
//! the table's shared reference in the version (one compare-and-swap, the first time
//! only) and wakes the scheduler. The scheduler samples the recorded requests of the
//! version it picks on into a [`Requests`], an explicit input of
//! [`CompactionPolicy::pick`], beside `Coverage`: the policy stays a pure function of
//! its arguments, and golden tests build the input by hand.
//!
//! # The protocol
//! 1. **Ask.** Only tables made of other tables are asked about (a level file whose
//!    entries are slices of parents), so a tree without them pays nothing on its read
//!    path. A get asks about the first such table that holds its key; an iterator
//!    about each it opens.
//! 2. **Record.** `Version::request_compaction` sets the table's flag; it is shared
//!    by every version holding the table, never cleared, and leaves with the table
//!    when a compaction replaces it. Only the read that sets it wakes the scheduler,
//!    so a hot table costs one wake-up, not one per read.
//! 3. **Wake.** The waking read takes the database's `state` lock for an instant
//!    before it notifies `bg_cv`: the scheduler samples requests and decides to wait
//!    under that lock, so a notification sent without it could fall between the two
//!    and be lost. Every other read stays lock-free.
//! 4. **Pick.** [`Requests::sample`] lists the flagged tables of the version the
//!    scheduler picks on; the policy plans them or not. `Db::wait_for_compactions`
//!    asks the same question, so it also waits for requested compactions.
//!
//! A request is a hint, not a promise: a policy that declines it (the option was
//! turned off, the table is busy) leaves the flag set and the table as it is.
//!
//! [`CompactionPolicy::compact_on_read`]: super::CompactionPolicy::compact_on_read
//! [`CompactionPolicy::pick`]: super::CompactionPolicy::pick

//!
//! # Asked by the clock
//! The same input carries the tables due for periodic compaction
//! (`Options::periodic_compaction_seconds`): [`Requests::sample`] reads the clock once
//! and lists every table of L1 and below whose `creation_time` is that many seconds
//! old (or unknown), so the policy, which never reads a clock, stays a pure function;
//! [`next_due`] tells an idle scheduler when to look again.

use crate::options::Options;
use crate::version::Version;

/// The tables reads asked to have compacted, as `(level, file number)` in level order,
/// and those due by age: plain data sampled from a version. See the module docs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Requests {
    tables: Vec<(usize, u64)>,
    aged: Vec<(usize, u64)>,
}

impl Requests {
    /// Requests for the given `(level, file number)` pairs: a policy's input built by
    /// hand.
    #[cfg(test)]
    pub fn new(mut tables: Vec<(usize, u64)>) -> Requests {
        tables.sort_unstable();
        tables.dedup();
        Requests {
            tables,
            aged: Vec::new(),
        }
    }

    /// Tables due by age, `(level, file number)`: a policy's input built by hand.
    #[cfg(test)]
    pub fn aged_for_test(aged: Vec<(usize, u64)>) -> Requests {
        Requests {
            tables: Vec::new(),
            aged,
        }
    }

    /// The requests recorded in `version`'s tables now, and its tables of L1 and
    /// below that `opts.periodic_compaction_seconds` makes due at `now` (seconds since
    /// the Unix epoch).
    pub fn sample(version: &Version, opts: &Options, now: u64) -> Requests {
        let period = opts.periodic_compaction_seconds;
        let aged = match period {
            0 => Vec::new(),
            _ => (1..version.num_levels())
                .flat_map(|level| version.files(level).iter().map(move |f| (level, f)))
                .filter(|(_, f)| f.creation_time.saturating_add(period) <= now)
                .map(|(level, f)| (level, f.number))
                .collect(),
        };
        Requests {
            tables: version
                .requested_tables()
                .map(|(level, f)| (level, f.number))
                .collect(),
            aged,
        }
    }

    /// The requested tables, `(level, file number)`, in level order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.tables.iter().copied()
    }

    /// The tables due by age, `(level, file number)`, in level order.
    pub fn aged(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.aged.iter().copied()
    }
}

/// When (seconds since the Unix epoch) the first table of `version` of L1 and below
/// becomes due by age under `opts`, or `None` if periodic compaction is off or there
/// is no such table. A table already due gives its due time, in the past.
pub fn next_due(version: &Version, opts: &Options) -> Option<u64> {
    let period = opts.periodic_compaction_seconds;
    if period == 0 {
        return None;
    }
    // Levels of column-group runs are not rewritten in place (their policy owns
    // them), so they would only wake the scheduler for nothing.
    (1..version.num_levels())
        .filter(|&level| !version.has_group_runs(level))
        .flat_map(|level| version.files(level).iter())
        .map(|f| f.creation_time.saturating_add(period))
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::file_ref::{FileRef, ObsoleteFiles};
    use crate::version::{FileMetaData, VersionEdit};
    use std::sync::Arc;

    /// Tables of L1 and below are due once `periodic_compaction_seconds` old (or of
    /// unknown age); L0 never; nothing with the option off. `next_due` is the first
    /// due time.
    #[test]
    fn tables_come_due_by_age() {
        let at = |n: u64, lo: &str, hi: &str, t: u64| FileMetaData {
            creation_time: t,
            ..FileMetaData::for_test(n, lo, hi, 1, 5, 100)
        };
        let mut e = VersionEdit::default();
        e.new_files.push((0, at(1, "a", "z", 0)));
        e.new_files.push((1, at(2, "a", "c", 1000)));
        e.new_files.push((1, at(3, "d", "f", 0)));
        e.new_files.push((2, at(4, "a", "z", 1500)));
        let v = Version::new(3).apply(&e).expect("apply");
        let off = Options::default();
        assert_eq!(Requests::sample(&v, &off, u64::MAX), Requests::default());
        assert_eq!(next_due(&v, &off), None);
        let on = Options::default().with_periodic_compaction_seconds(100);
        let aged = |now| Requests::sample(&v, &on, now).aged().collect::<Vec<_>>();
        assert_eq!(aged(1099), [(1, 3)], "unknown age is due at once");
        assert_eq!(aged(1100), [(1, 2), (1, 3)]);
        assert_eq!(aged(1600), [(1, 2), (1, 3), (2, 4)]);
        assert_eq!(next_due(&v, &on), Some(100), "the unknown age's");
    }

    #[test]
    fn new_sorts_and_dedups() {
        let r = Requests::new(vec![(2, 9), (1, 4), (2, 9)]);
        assert_eq!(r.iter().collect::<Vec<_>>(), [(1, 4), (2, 9)]);
        assert_eq!(Requests::default().iter().count(), 0);
    }

    /// A request is recorded once, seen by every version holding the table, and only
    /// for virtual tables of installed versions.
    #[test]
    fn a_request_is_made_once_and_shared_by_versions_holding_the_table() {
        let mut e = VersionEdit::default();
        e.new_parents
            .push(FileMetaData::for_test(8, "a", "z", 1, 5, 1000));
        e.new_files
            .push((1, FileMetaData::for_test(5, "a", "c", 1, 5, 300)));
        let t = FileMetaData::virtual_for_test(11, "d", "h", &[(8, "d", "h", 200)]);
        e.new_files.push((1, t));
        let unattached = Version::new(3).apply(&e).expect("apply");
        assert!(!unattached.request_compaction(1, 1), "not installed");
        let queue = Arc::new(ObsoleteFiles::default());
        let refs: Vec<_> = [5, 8].map(|n| FileRef::new(n, 0, &queue)).to_vec();
        let mut v1 = unattached.clone();
        v1.attach_refs(&Version::new(3), &refs).expect("attach");
        assert_eq!(
            Requests::sample(&v1, &Options::default(), 0),
            Requests::default()
        );
        assert!(!v1.request_compaction(1, 0), "a real file");
        assert!(v1.request_compaction(1, 1));
        assert!(!v1.request_compaction(1, 1), "only the first call makes it");
        // A later version keeping the table shares its flag.
        let mut next = VersionEdit::default();
        next.new_files
            .push((2, FileMetaData::for_test(6, "x", "y", 6, 7, 10)));
        let mut v2 = v1.apply(&next).expect("apply");
        v2.attach_refs(&v1, &[FileRef::new(6, 0, &queue)])
            .expect("attach");
        assert_eq!(
            Requests::sample(&v2, &Options::default(), 0)
                .iter()
                .collect::<Vec<_>>(),
            [(1, 11)]
        );
        assert_eq!(
            Requests::sample(&v1, &Options::default(), 0),
            Requests::sample(&v2, &Options::default(), 0)
        );
    }
}
