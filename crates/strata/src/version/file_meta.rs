//! File metadata: what a version knows about one SSTable without opening it.
//!
//! Persisted in the MANIFEST by `version::edit`. Carries, from the first format
//! version, the fields later techniques need: the storage tier (`path_id`, HotRAP), the
//! column group (`column_group`, LASER) and real/virtual kind with parents
//! (`version::virtual_table`), and the smallest sequence number (snapshot filters).

use super::virtual_table::Slice;
use crate::key::{self, SequenceNumber};

/// Whether a file's bytes are its own.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum FileKind {
    /// An ordinary SSTable. Default.
    #[default]
    Real,
    /// A metadata-only table whose entries are slices of other tables, its *parents*
    /// (`version::virtual_table`). No file of its own exists; reads go to the parents.
    Virtual {
        /// The slices, in read order: for any user key, an earlier slice holds only
        /// newer versions than a later one.
        slices: Vec<Slice>,
    },
}

/// Column group id meaning "all columns" (a row-layout level).
pub const ALL_COLUMNS: u32 = 0;

/// Metadata of one table in a version. Immutable once built; shared by `Arc`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMetaData {
    /// File number (names the file `<number>.sst`).
    pub number: u64,
    /// Index of the storage path (tier) holding the file; 0 = the database directory.
    pub path_id: u32,
    /// File size in bytes.
    pub size: u64,
    /// Smallest internal key in the file.
    pub smallest: Vec<u8>,
    /// Largest internal key in the file.
    pub largest: Vec<u8>,
    /// Smallest sequence number of any entry.
    pub smallest_seqno: SequenceNumber,
    /// Largest sequence number of any entry.
    pub largest_seqno: SequenceNumber,
    /// Entries in the file.
    pub num_entries: u64,
    /// Tombstones among them.
    pub num_deletions: u64,
    /// Column group stored by the file ([`ALL_COLUMNS`] for rows).
    pub column_group: u32,
    /// Real or virtual.
    pub kind: FileKind,
    /// Range tombstones in the file's range-deletion block (0: none; readers need
    /// not open the file to collect them).
    pub num_range_deletions: u64,
    /// When the table was written (a virtual table: its metadata), in seconds since
    /// the Unix epoch; 0 = unknown (a table recorded before the field existed). Kept
    /// by a trivial move; what periodic compaction measures a table's age by.
    pub creation_time: u64,
}

/// Seconds since the Unix epoch now (0 if the clock is before it).
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl FileMetaData {
    /// The slices of a virtual table, in read order; empty for a real file.
    pub fn slices(&self) -> &[Slice] {
        match &self.kind {
            FileKind::Virtual { slices } => slices,
            FileKind::Real => &[],
        }
    }

    /// Smallest user key.
    pub fn smallest_user_key(&self) -> &[u8] {
        key::user_key(&self.smallest)
    }

    /// Largest user key.
    pub fn largest_user_key(&self) -> &[u8] {
        key::user_key(&self.largest)
    }

    /// True iff the file's user-key range intersects `[begin, end]` (`None` = unbounded).
    pub fn overlaps_user_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> bool {
        let before = end.is_some_and(|e| self.smallest_user_key() > e);
        let after = begin.is_some_and(|b| self.largest_user_key() < b);
        !(before || after)
    }
}

// Also for tools' tests (with `internals`), e.g. the golden test of `ldb manifest_dump`.
#[cfg(any(test, feature = "internals"))]
impl FileMetaData {
    /// Test helper: a real file `number` covering user keys `[lo, hi]` with sequence
    /// numbers `[s0, s1]` and `size` bytes (10 entries, no tombstones).
    pub fn for_test(number: u64, lo: &str, hi: &str, s0: u64, s1: u64, size: u64) -> Self {
        FileMetaData {
            number,
            path_id: 0,
            size,
            smallest: key::make_internal_key(lo.as_bytes(), s1, key::ValueKind::Put),
            largest: key::make_internal_key(hi.as_bytes(), s0, key::ValueKind::Put),
            smallest_seqno: s0,
            largest_seqno: s1,
            num_entries: 10,
            num_deletions: 0,
            column_group: ALL_COLUMNS,
            kind: FileKind::Real,
            num_range_deletions: 0,
            creation_time: 0,
        }
    }

    /// Test helper: a virtual table `number` covering user keys `[lo, hi]` (sequence
    /// numbers 1 to 5) over `slices` of `(parent, lo, hi, bytes)`, its size their sum.
    pub fn virtual_for_test(
        number: u64,
        lo: &str,
        hi: &str,
        slices: &[(u64, &str, &str, u64)],
    ) -> Self {
        let slices: Vec<Slice> = slices
            .iter()
            .map(|&(parent, a, b, bytes)| Slice {
                parent,
                smallest: a.as_bytes().to_vec(),
                largest: b.as_bytes().to_vec(),
                bytes,
            })
            .collect();
        FileMetaData {
            size: slices.iter().map(|s| s.bytes).sum(),
            kind: FileKind::Virtual { slices },
            ..FileMetaData::for_test(number, lo, hi, 1, 5, 0)
        }
    }
}
