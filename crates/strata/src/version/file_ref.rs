//! Counted references to physical files, and the queue of files nobody references.
//!
//! # Why a file is safe to delete (DESIGN invariant 4)
//! A table file may be deleted only when nothing can read it any more: no version a
//! reader, iterator or compaction still holds names it, no job is still writing it, and
//! (later) no virtual table is built on it. Rather than recompute that set by scanning
//! every reachable version, each physical table file has exactly one [`FileRef`]
//! allocation, and everything that needs the file holds an `Arc<FileRef>`:
//!
//! - a job holds the refs of the outputs it is writing (a *pending output*) until the
//!   version naming them is installed, or it fails;
//! - every [`Version`](super::Version) holds the ref of each file it names, so a reader
//!   holding the version (through its super-version) holds the files;
//! - a virtual table will hold its parents' refs.
//!
//! The `Arc`'s strong count *is* the reference count. When the last reference drops,
//! [`FileRef::drop`] pushes the file onto the [`ObsoleteFiles`] queue; the database's
//! obsolete-file collection drains the queue and deletes those files. Dropping never
//! does I/O (a reader may drop the last reference on its own thread).
//!
//! # Invariants
//! 1. At most one `FileRef` exists per file number: refs are created only for a new
//!    file number ([`crate::version::VersionSet::new_table`]) or, at open, once per file
//!    of the recovered version; every later holder clones an existing `Arc`.
//! 2. A version's refs cover exactly the files it names (checked when it is built, see
//!    `Version::attach_refs`), so a file can never be queued while a version names it.
//! 3. A file number is queued at most once (only the last drop queues it).
//!
//! WALs and MANIFESTs are queued through the same [`ObsoleteFiles`] by their owners
//! (the flush, and the MANIFEST roll-over) once a durable edit makes them unneeded.
//!
//! # The pinned table
//! A `FileRef` also carries the file's open table once a read has opened it
//! ([`FileRef::pinned_table`], filled by `TableCache::get_pinned`), so that every
//! version naming the file reads it without a table-cache lookup. The pin lives and
//! dies with the reference: dropping the last `FileRef` releases the table before the
//! file is queued, so a pin never keeps an obsolete file's table open (ARCHITECTURE
//! §5.5).
//!
//! Concurrency: `FileRef` is `Send + Sync`; the queue is a short mutex, never held
//! across I/O; the pin is a `OnceLock` (readers take no lock).

use crate::cache::PinnedTable;
use crate::sst::Table;
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock};

/// A file that became unneeded, waiting to be deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Obsolete {
    /// A table file: number and storage path index.
    Table {
        /// File number.
        number: u64,
        /// Index of the data path holding it.
        path_id: u32,
    },
    /// A write-ahead log (always in the database directory).
    Wal(u64),
    /// A MANIFEST that a newer one replaced (always in the database directory).
    Manifest(u64),
}

/// Files no longer referenced, in the order they became obsolete.
#[derive(Debug, Default)]
pub(crate) struct ObsoleteFiles {
    queue: Mutex<Vec<Obsolete>>,
    /// Held by whoever deletes a batch taken from `queue`, for the whole batch, so
    /// batches are deleted one after another in the order they were taken.
    deleting: Mutex<()>,
}

impl ObsoleteFiles {
    /// The turn to delete: take the batch ([`Self::take`]) and delete it while holding
    /// the guard. WALs become obsolete in ascending order (a family's log number only
    /// grows), so deleting batches in turn deletes WALs in ascending order too, which a
    /// read-only open beside the writer relies on (docs/ARCHITECTURE.md §7.6).
    pub fn deleting(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.deleting.lock()
    }

    /// Queues `file` for deletion.
    pub fn push(&self, file: Obsolete) {
        self.queue.lock().push(file);
    }

    /// Takes every queued file (the caller deletes them).
    pub fn take(&self) -> Vec<Obsolete> {
        std::mem::take(&mut *self.queue.lock())
    }

    /// Puts back files whose deletion must wait (for example while the database is
    /// poisoned and nothing may be deleted).
    pub fn restore(&self, files: Vec<Obsolete>) {
        let mut q = self.queue.lock();
        let newer = std::mem::replace(&mut *q, files);
        q.extend(newer);
    }
}

/// The one counted reference to a physical table file. See the module docs.
#[derive(Debug)]
pub(crate) struct FileRef {
    number: u64,
    path_id: u32,
    obsolete: Arc<ObsoleteFiles>,
    /// The file's open table, set at most once by `TableCache::get_pinned` (on the
    /// first read that opens it within the cache's pin budget); released by `drop`.
    table: OnceLock<PinnedTable>,
}

impl FileRef {
    /// A reference to table file `number` in path `path_id`. Requires invariant 1: no
    /// other `FileRef` for `number` exists.
    pub fn new(number: u64, path_id: u32, obsolete: &Arc<ObsoleteFiles>) -> Arc<FileRef> {
        Arc::new(FileRef {
            number,
            path_id,
            obsolete: Arc::clone(obsolete),
            table: OnceLock::new(),
        })
    }

    /// The table pinned by this file, if a read has pinned one. Valid while `self` is.
    #[inline]
    pub fn pinned_table(&self) -> Option<&Arc<Table>> {
        self.table.get().map(PinnedTable::table)
    }

    /// Pins `table` unless a racing read pinned one first (then `table` is dropped,
    /// releasing its budget), and returns the pinned table.
    pub fn pin(&self, table: PinnedTable) -> &Arc<Table> {
        self.table.get_or_init(|| table).table()
    }

    /// The file number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The data path index.
    pub fn path_id(&self) -> u32 {
        self.path_id
    }
}

impl Drop for FileRef {
    fn drop(&mut self) {
        // Release the pin first: once queued, the file may be evicted and deleted at
        // any moment, and the pin must not keep its table open past that.
        drop(self.table.take());
        self.obsolete.push(Obsolete::Table {
            number: self.number,
            path_id: self.path_id,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_drop_queues_the_file_once() {
        let q = Arc::new(ObsoleteFiles::default());
        let a = FileRef::new(7, 0, &q);
        let b = Arc::clone(&a);
        drop(a);
        assert!(q.take().is_empty(), "a live reference keeps the file");
        drop(b);
        assert_eq!(
            q.take(),
            vec![Obsolete::Table {
                number: 7,
                path_id: 0
            }]
        );
        assert!(q.take().is_empty());
    }

    #[test]
    fn restore_keeps_order() {
        let q = ObsoleteFiles::default();
        q.push(Obsolete::Wal(1));
        let held = q.take();
        q.push(Obsolete::Wal(2));
        q.restore(held);
        assert_eq!(q.take(), vec![Obsolete::Wal(1), Obsolete::Wal(2)]);
    }
}
