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

use crate::version::Version;

/// The tables reads asked to have compacted, as `(level, file number)` in level order:
/// plain data sampled from a version. See the module docs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Requests {
    tables: Vec<(usize, u64)>,
}

impl Requests {
    /// Requests for the given `(level, file number)` pairs: a policy's input built by
    /// hand.
    #[cfg(test)]
    pub fn new(mut tables: Vec<(usize, u64)>) -> Requests {
        tables.sort_unstable();
        tables.dedup();
        Requests { tables }
    }

    /// The requests recorded in `version`'s tables now.
    pub fn sample(version: &Version) -> Requests {
        Requests {
            tables: version
                .requested_tables()
                .map(|(level, f)| (level, f.number))
                .collect(),
        }
    }

    /// The requested tables, `(level, file number)`, in level order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.tables.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::file_ref::{FileRef, ObsoleteFiles};
    use crate::version::{FileMetaData, VersionEdit};
    use std::sync::Arc;

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
        assert_eq!(Requests::sample(&v1), Requests::default());
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
        assert_eq!(Requests::sample(&v2).iter().collect::<Vec<_>>(), [(1, 11)]);
        assert_eq!(Requests::sample(&v1), Requests::sample(&v2));
    }
}
