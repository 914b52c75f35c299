//! Virtual tables: tables whose entries are slices of other tables.
//!
//! A virtual table is a level file with no bytes of its own ([`FileKind::Virtual`](super::FileKind::Virtual)). Its
//! entries are, for each of its [`Slice`]s, the entries of the slice's *parent* (an
//! ordinary table that left every level when the virtual table was made) whose user
//! key lies in the slice's range, and nothing outside it. A compaction that defers its
//! rewrite can so replace its inputs by metadata; a later compaction reads each parent
//! once.
//!
//! # Why slices carry ranges
//! A parent may be shared by several virtual tables, each naming a different part of
//! it. If one of them is compacted for real, the parent stays alive for the others; a
//! table that later inherits the parent from one of them must see only that one's
//! part, or entries that were deleted or rewritten elsewhere come back. So a slice is
//! `(parent, [smallest, largest] user keys, referenced bytes)`, never a bare parent.
//!
//! # Invariants (checked by `Version::check_invariants`)
//! 1. No virtual table is in L0.
//! 2. Every slice lies inside its table's user-key range and inside its parent's.
//! 3. The slices of one parent are pairwise disjoint across the whole version, so each
//!    parent byte is counted once (a table's `size` is the sum of its slices' bytes).
//! 4. A parent is never also a level file, and every parent a slice names is known to
//!    the version (`Version::parents`); a parent no slice names is dropped by
//!    `Version::apply`, which is when its file becomes obsolete.
//! 5. Slice order is read order: for any user key, an earlier slice holds only newer
//!    versions than a later one.
//!
//! # Liveness
//! A version holds, for each virtual table, one shared `VirtualRef` with every
//! parent's metadata and counted reference (`file_ref`), built once when the table is
//! first installed and cloned by every later version that keeps the table. So a parent
//! stays on disk while any version, iterator or job holds a table that names it, and
//! is queued for deletion exactly when the last of them drops. A virtual table has no
//! `FileRef` of its own: no file exists to delete.

use super::file_meta::FileMetaData;
use super::file_ref::FileRef;
use super::version::Version;
use crate::stats::TableSpace;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The part of a parent table that a virtual table reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slice {
    /// File number of the parent, an ordinary table.
    pub parent: u64,
    /// Smallest user key of the slice (inclusive).
    pub smallest: Vec<u8>,
    /// Largest user key of the slice (inclusive).
    pub largest: Vec<u8>,
    /// Bytes of the parent the slice covers (approximate, measured on the parent's
    /// index when the slice was made).
    pub bytes: u64,
}

impl Slice {
    /// True iff user key `k` lies in the slice.
    #[inline]
    pub fn contains(&self, k: &[u8]) -> bool {
        self.smallest.as_slice() <= k && k <= self.largest.as_slice()
    }

    /// The smallest user key after the slice: its exclusive end, for APIs that take
    /// half-open ranges.
    pub fn end_bound(&self) -> Vec<u8> {
        [self.largest.as_slice(), &[0]].concat()
    }
}

/// The slices a virtual table over `parents` has when only their numbers are known
/// (a MANIFEST without slice ranges): each covers the table's own range
/// `[smallest, largest]`, and the table's `size` is split evenly over them, the
/// remainder to the first, so that the slices' bytes add up to `size`.
pub(crate) fn whole_range_slices(
    parents: &[u64],
    smallest: &[u8],
    largest: &[u8],
    size: u64,
) -> Vec<Slice> {
    let n = parents.len() as u64;
    let each = size.checked_div(n).unwrap_or(0);
    parents
        .iter()
        .enumerate()
        .map(|(i, &parent)| Slice {
            parent,
            smallest: smallest.to_vec(),
            largest: largest.to_vec(),
            bytes: match i {
                0 => size - each * n.saturating_sub(1),
                _ => each,
            },
        })
        .collect()
}

/// One slice of an installed virtual table: its parent's metadata and counted
/// reference (which also carries the parent's pinned table).
#[derive(Debug)]
pub(crate) struct SliceRef {
    /// The parent's metadata, shared with the version's parent list.
    pub parent: Arc<FileMetaData>,
    /// The parent's one counted reference: the slice keeps the parent's file alive.
    pub file: Arc<FileRef>,
}

/// One slice of a virtual table as a read sees it: the slice, its parent's metadata,
/// and the parent's counted reference (`None` in a version the version set has not
/// installed). Borrows the version.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SliceView<'a> {
    pub slice: &'a Slice,
    pub parent: &'a FileMetaData,
    pub file: Option<&'a FileRef>,
}

/// What an installed virtual table holds: its slices' parents' references, in the
/// order of its `FileKind::Virtual::slices`, and whether a read has asked for its
/// compaction. One allocation per virtual table, shared by every version naming the
/// table. See the module docs.
#[derive(Debug)]
pub(crate) struct VirtualRef {
    slices: Vec<SliceRef>,
    /// Set once, by the first read that asks for the table's compaction
    /// (`CompactionPolicy::compact_on_read`); never cleared: the table leaves the
    /// version when it is compacted, and the flag with it.
    requested: AtomicBool,
}

impl VirtualRef {
    /// A reference over `slices`, one per slice of the table, in its order.
    pub fn new(slices: Vec<SliceRef>) -> Arc<VirtualRef> {
        Arc::new(VirtualRef {
            slices,
            requested: AtomicBool::new(false),
        })
    }

    /// The parents, one per slice, in read order. The borrow lasts as long as `self`.
    pub fn slices(&self) -> &[SliceRef] {
        &self.slices
    }

    /// Records a read's request for the table's compaction. True iff this call made
    /// it (one compare-and-swap; later calls only load the flag), so the caller wakes
    /// the scheduler once per table.
    pub fn request(&self) -> bool {
        !self.requested.load(Ordering::Relaxed)
            && self
                .requested
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
    }

    /// True iff a read has asked for the table's compaction.
    pub fn is_requested(&self) -> bool {
        self.requested.load(Ordering::Acquire)
    }
}

/// Bytes of each parent of `version` that its live slices reference, by parent
/// number: the sum of the recorded bytes of every slice naming it (invariant 3 makes
/// them disjoint, so no byte counts twice).
pub fn referenced_bytes(version: &Version) -> BTreeMap<u64, u64> {
    let mut by_parent = BTreeMap::new();
    for s in version.live_files().flat_map(|f| f.slices()) {
        let r: &mut u64 = by_parent.entry(s.parent).or_default();
        *r = r.saturating_add(s.bytes);
    }
    by_parent
}

/// The garbage of a parent: its bytes that no live slice references. Exact from the
/// slices' recorded bytes (which are measured on the index, so a sliver may exceed
/// the file's size; garbage never goes below zero).
pub fn garbage(parent: &FileMetaData, referenced: u64) -> u64 {
    parent.size.saturating_sub(referenced)
}

/// The table space of `version`: its parents, what their slices reference, their
/// garbage, and every physical table once.
pub fn table_space(version: &Version) -> TableSpace {
    let referenced = referenced_bytes(version);
    let mut space = TableSpace::default();
    for p in version.parents() {
        let r = referenced.get(&p.number).copied().unwrap_or(0);
        space.parents += 1;
        space.parent_bytes = space.parent_bytes.saturating_add(p.size);
        space.referenced_bytes = space.referenced_bytes.saturating_add(r);
        space.garbage_bytes = space.garbage_bytes.saturating_add(garbage(p, r));
    }
    space.live_table_bytes = version
        .physical_tables()
        .fold(0u64, |acc, t| acc.saturating_add(t.size));
    space
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_range_slices_add_up_to_the_size() {
        let s = whole_range_slices(&[4, 9, 2], b"a", b"m", 10);
        assert_eq!(s.iter().map(|s| s.bytes).collect::<Vec<_>>(), [4, 3, 3]);
        assert!(s.iter().all(|s| s.smallest == b"a" && s.largest == b"m"));
        assert_eq!(s.iter().map(|s| s.parent).collect::<Vec<_>>(), [4, 9, 2]);
        assert!(whole_range_slices(&[], b"a", b"m", 10).is_empty());
    }

    #[test]
    fn table_space_counts_each_parent_once_and_its_unreferenced_bytes_as_garbage() {
        use crate::version::VersionEdit;
        let mut e = VersionEdit::default();
        e.new_files
            .push((1, FileMetaData::for_test(5, "a", "c", 1, 5, 300)));
        // Parents 8 (1000 bytes) and 9 (400 bytes); 8 is named by two tables.
        e.new_parents
            .push(FileMetaData::for_test(8, "d", "z", 1, 5, 1000));
        e.new_parents
            .push(FileMetaData::for_test(9, "d", "z", 6, 9, 400));
        let t1 =
            FileMetaData::virtual_for_test(11, "d", "h", &[(9, "d", "h", 150), (8, "d", "h", 200)]);
        let t2 = FileMetaData::virtual_for_test(12, "i", "p", &[(8, "i", "p", 250)]);
        e.new_files.push((2, t1));
        e.new_files.push((2, t2));
        let v = Version::new(4).apply(&e).expect("apply");
        assert_eq!(
            referenced_bytes(&v).into_iter().collect::<Vec<_>>(),
            [(8, 450), (9, 150)]
        );
        assert_eq!(
            table_space(&v),
            TableSpace {
                parents: 2,
                parent_bytes: 1400,
                referenced_bytes: 600,
                garbage_bytes: 550 + 250,
                live_table_bytes: 300 + 1400,
            }
        );
        assert_eq!(table_space(&Version::new(4)), TableSpace::default());
    }
}
