//! What a thread's table I/O is for right now ([`IoPurpose`]), so that the counting
//! file system (`env::counting`) can split each data path's table bytes by cause
//! without a counter in the table reader, the iterators or the executor.
//!
//! The code that causes table I/O says so for its duration: a get
//! ([`IoPurpose::Get`]), a user iterator's moves ([`IoPurpose::Scan`]), a flush or a
//! compaction job ([`IoPurpose::Flush`], [`IoPurpose::Compaction`]), a scan's
//! write-back ([`IoPurpose::WriteBack`]). Everything else
//! (opening the database, `verify_checksums`, a checkpoint) is [`IoPurpose::Other`].
//! The purpose is a thread-local, set by a guard that restores the previous one when it
//! drops, so purposes nest (a get inside a transaction commit) and a thread that
//! panics or returns early leaves no purpose behind.
//!
//! Cost: one thread-local read per table read or append, and two writes per get or
//! iterator move; the thread-local has a constant initializer, so no lazy check.

use std::cell::Cell;

/// What table I/O is for. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IoPurpose {
    /// Anything not listed below: opening the database, verification, tools.
    Other = 0,
    /// A point read (`get`, a transaction's conflict check).
    Get = 1,
    /// A user iterator: its creation and every move.
    Scan = 2,
    /// A flush job (and the flushes of recovery).
    Flush = 3,
    /// A compaction job.
    Compaction = 4,
    /// A scan writing back what it merged (`db::write_back`): the boundary remainders
    /// it reads and every table it writes.
    WriteBack = 5,
}

/// The number of purposes (the length of per-purpose counter arrays).
pub(crate) const PURPOSES: usize = 6;

thread_local! {
    static CURRENT: Cell<IoPurpose> = const { Cell::new(IoPurpose::Other) };
}

impl IoPurpose {
    /// The calling thread's purpose.
    #[inline]
    pub(crate) fn current() -> IoPurpose {
        CURRENT.with(Cell::get)
    }

    /// Makes `self` the calling thread's purpose until the guard drops.
    #[inline]
    #[must_use = "the purpose lasts only while the guard lives"]
    pub(crate) fn enter(self) -> PurposeGuard {
        PurposeGuard {
            previous: CURRENT.with(|c| c.replace(self)),
        }
    }
}

/// Restores the previous purpose when dropped ([`IoPurpose::enter`]).
pub(crate) struct PurposeGuard {
    previous: IoPurpose,
}

impl Drop for PurposeGuard {
    #[inline]
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
    }
}

/// Table bytes of one kind (read or written) by purpose. Part of
/// [`crate::PathStatsSnapshot`] and, summed over the data paths, of
/// [`crate::DbStats::io_bytes_read`] and [`crate::DbStats::io_bytes_written`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IoBytes {
    /// By point reads (gets and transactions' conflict checks).
    pub get: u64,
    /// By user iterators (their creation and moves).
    pub scan: u64,
    /// By flushes.
    pub flush: u64,
    /// By compactions.
    pub compaction: u64,
    /// By scans' write-backs (`Options::query_compaction`).
    pub write_back: u64,
    /// By anything else (opening the database, `verify_checksums`, tools).
    pub other: u64,
}

impl IoBytes {
    /// The bytes of every purpose.
    pub fn total(&self) -> u64 {
        self.get + self.scan + self.flush + self.compaction + self.write_back + self.other
    }

    /// From per-purpose counts indexed by `IoPurpose as usize`.
    pub(crate) fn from_counts(c: &[u64; PURPOSES]) -> IoBytes {
        let [other, get, scan, flush, compaction, write_back] = *c;
        IoBytes {
            get,
            scan,
            flush,
            compaction,
            write_back,
            other,
        }
    }

    /// The sum of `self` and `o`, purpose by purpose.
    pub(crate) fn plus(self, o: IoBytes) -> IoBytes {
        IoBytes {
            get: self.get + o.get,
            scan: self.scan + o.scan,
            flush: self.flush + o.flush,
            compaction: self.compaction + o.compaction,
            write_back: self.write_back + o.write_back,
            other: self.other + o.other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purposes_nest_and_restore() {
        assert_eq!(IoPurpose::current(), IoPurpose::Other);
        {
            let _scan = IoPurpose::Scan.enter();
            assert_eq!(IoPurpose::current(), IoPurpose::Scan);
            {
                let _get = IoPurpose::Get.enter();
                assert_eq!(IoPurpose::current(), IoPurpose::Get);
            }
            assert_eq!(IoPurpose::current(), IoPurpose::Scan);
            // Another thread starts with none.
            std::thread::spawn(|| assert_eq!(IoPurpose::current(), IoPurpose::Other))
                .join()
                .expect("thread");
        }
        assert_eq!(IoPurpose::current(), IoPurpose::Other);
    }

    #[test]
    fn counts_map_to_their_purposes() {
        let mut c = [0u64; PURPOSES];
        for (p, n) in [
            (IoPurpose::Other, 1),
            (IoPurpose::Get, 10),
            (IoPurpose::Scan, 100),
            (IoPurpose::Flush, 1000),
            (IoPurpose::Compaction, 10_000),
            (IoPurpose::WriteBack, 100_000),
        ] {
            c[p as usize] = n;
        }
        let b = IoBytes::from_counts(&c);
        assert_eq!(
            (b.other, b.get, b.scan, b.flush, b.compaction, b.write_back),
            (1, 10, 100, 1000, 10_000, 100_000)
        );
        assert_eq!(b.total(), 111_111);
        assert_eq!(b.plus(b).total(), 222_222);
    }
}
