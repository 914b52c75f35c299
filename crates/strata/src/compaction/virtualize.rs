//! [`Action::Virtualize`](super::plan::Action::Virtualize): a plan whose inputs are
//! replaced by virtual tables over them (`version::virtual_table`), with no data I/O.
//!
//! # What it does
//! 1. *Pieces.* Every input is read as the parts of parent tables it consists of, in
//!    read order (the plan's input order: L0 newest first, the upper level before the
//!    output level): a real input is one piece, its whole range of itself; a virtual
//!    input contributes its slices, in its own order, with the parents the job's
//!    version names for them.
//! 2. *Tiles.* The union of the pieces' user-key ranges is cut into tiles where the
//!    output stream's partitioning would cut ([`partitioner::for_stream`]: for
//!    `Fixed`, once a tile holds the target size; for `Aligned`, at grandparent
//!    boundaries within the variance). Sizes are measured on the parents' index blocks
//!    (`Table::approximate_range_bytes`), and the candidate cut points are the user
//!    keys where the pieces' data blocks end (`Table::block_boundaries`) and, for
//!    `Aligned`, the grandparents' largest keys. A cut after user key `u` ends a tile
//!    at `u` and starts the next at `u ++ 0x00`, the least key after `u`: so tiles are
//!    contiguous, cover the whole range, and never split a user key.
//! 3. *Tables.* Each tile becomes a virtual table whose slices are, piece by piece in
//!    read order, the tile's intersection with the piece (empty ones skipped), each
//!    with its share of the parent's file: the slice's data span
//!    (`Table::approximate_span`) with both ends scaled from the parent's whole span
//!    onto the file's size. Scaling the ends, not the difference, keeps adjacent ranges adding
//!    up exactly, so a piece's bytes are split over the tiles without loss or double
//!    counting, and the slices covering a whole parent add up to its size: a parent
//!    just virtualized has no garbage (its index, filter and footer are shared out
//!    with its data), and garbage appears only as slices leave the version.
//! 4. *The edit* deletes the inputs, adds the tables to the stream's level and names
//!    every real input as a new parent (a virtual input's parents are already known to
//!    the version). It is the only durable step: the caller logs it in one
//!    `log_and_apply`. No file is created, so the outcome holds no file reference.
//!
//! # Table metadata
//! - Bounds: an interior tile `[lo, hi]` has the smallest key `(lo, MAX_SEQUENCE,
//!   Merge)` and the largest `(hi, 0, Delete)` (the last internal key of `hi`); since
//!   the next tile starts at `hi ++ 0x00`, adjacent tables never overlap (`Version`
//!   invariant 2). The smallest key sorts before every entry of `lo` (their sequence
//!   numbers are below `MAX_SEQUENCE`) but after the range-tombstone bound
//!   `(lo, MAX_SEQUENCE, RangeDelete)`, which a real file to the left may end with
//!   when its tombstones end at `lo` (a model-based run found that collision). The first tile starts at the inputs'
//!   smallest internal key and the last ends at their largest, so the tables lie within
//!   the inputs' internal-key range and do not reach a file the plan left in the level
//!   (e.g. one whose range tombstones end at the inputs' first user key).
//! - `size` is the sum of the slices' bytes; sequence numbers span the slices'
//!   parents'; `num_entries` and `num_deletions` are the parents' counts prorated by
//!   the slice's share of the parent's data bytes, an approximation (a virtual table
//!   knows no exact counts without reading its entries); `num_range_deletions` adds a
//!   parent's count for each slice that some tombstone of the parent intersects, so a
//!   reader that skips tables without tombstones still opens these.
//! - `path_id` and `column_group` are the stream's: a parent on another path is
//!   refused (a virtual table's entries live where its parents are).
//! - File numbers come from the version set's allocator; nothing is written under them.

use super::executor::{key_after, virtual_slices, JobContext, Outcome};
use super::partitioner;
use super::plan::{Input, OutputStream, Partitioning, Plan};
use crate::error::{Error, Result};
use crate::key::{self, ValueKind, MAX_SEQUENCE};
use crate::sst::Table;
use crate::version::virtual_table::Slice;
use crate::version::{FileKind, FileMetaData};
use std::collections::HashMap;
use std::sync::Arc;

/// A part of one parent that the inputs read: a whole real input, or one slice of a
/// virtual input.
struct Piece<'a> {
    parent: &'a FileMetaData,
    table: Arc<Table>,
    /// Smallest and largest user key of the piece (inclusive).
    lo: Vec<u8>,
    hi: Vec<u8>,
    /// Where the parent's data begins (`approximate_span` of its smallest key) and
    /// ends (`Table::data_end`): its data bytes are the difference (the denominator of
    /// the prorated entry counts and of a slice's share of the file).
    parent_span: (u64, u64),
}

impl Piece<'_> {
    /// The parent's data bytes.
    fn parent_bytes(&self) -> u64 {
        self.parent_span.1.saturating_sub(self.parent_span.0)
    }

    /// The share of the parent's file of its user keys `[a, b]`, whose data span is
    /// `(start, end)`: both ends scaled from the parent's whole span onto its size
    /// (module docs, step 3). A range reaching the parent's last key ends where its
    /// data does (`approximate_span` gives the last block's start for a key past the
    /// last entry, which would leave that block to nobody).
    fn file_bytes(&self, b: &[u8], (start, end): (u64, u64)) -> u64 {
        let end = match b >= self.parent.largest_user_key() {
            true => self.parent_span.1,
            false => end,
        };
        let (whole, size) = (self.parent_bytes(), self.parent.size);
        let at = |x: u64| prorate(size, x.saturating_sub(self.parent_span.0), whole);
        at(end).saturating_sub(at(start))
    }

    /// The intersection of the piece with `[lo, hi]`, if not empty.
    fn clip<'k>(&'k self, lo: &'k [u8], hi: &'k [u8]) -> Option<(&'k [u8], &'k [u8])> {
        let a = lo.max(self.lo.as_slice());
        let b = hi.min(self.hi.as_slice());
        (a <= b).then_some((a, b))
    }
}

/// Runs a virtualize plan. See the module docs.
///
/// # Errors
/// `Internal` for a malformed plan (not exactly one output stream, an output in L0, a
/// memtable input, no input file, a parent on another path than the stream's, a
/// virtual input the job's version does not hold); I/O errors and corruption from
/// opening the parents and reading their index blocks.
pub(crate) fn virtualize(plan: &Plan, ctx: &JobContext<'_>) -> Result<Outcome> {
    let [stream] = plan.outputs.as_slice() else {
        return Err(Error::Internal(
            "a virtualize plan has exactly one output stream".into(),
        ));
    };
    if stream.level == 0 {
        return Err(Error::Internal(
            "a virtualize plan cannot output to L0 (virtual tables live in L1+)".into(),
        ));
    }
    let pieces = pieces(plan, ctx, stream)?;
    let (Some(first), Some(last)) = (
        plan.input_files()
            .map(|(_, f)| &f.smallest)
            .min_by(|a, b| key::compare_internal(a, b)),
        plan.input_files()
            .map(|(_, f)| &f.largest)
            .max_by(|a, b| key::compare_internal(a, b)),
    ) else {
        return Err(Error::Internal(
            "a virtualize plan has no input file".into(),
        ));
    };
    let (lo, hi) = (key::user_key(first), key::user_key(last));
    // The inputs may end at a range tombstone's end sentinel `(hi, MAX_SEQUENCE,
    // RangeDelete)`: then they hold no entry of `hi`, and a tile starting at `hi` would
    // be empty, its bounds crossed (its first key `(hi, MAX_SEQUENCE, Merge)` sorts
    // after that sentinel).
    let hi_has_entries = key::compare_internal(
        last,
        &key::make_internal_key(hi, MAX_SEQUENCE, ValueKind::Merge),
    )
    .is_ge();
    let tiles = tiles(&pieces, stream, lo, hi, hi_has_entries)?;
    let mut out = Outcome::default();
    let n = tiles.len();
    for (i, (tile_lo, tile_hi)) in tiles.iter().enumerate() {
        let mut meta = table(&pieces, tile_lo, tile_hi, stream)?;
        meta.number = ctx.versions.new_file_number();
        // The outer tiles take the inputs' own outer bounds (module docs).
        if i == 0 {
            meta.smallest = first.clone();
        }
        if i + 1 == n {
            meta.largest = last.clone();
        }
        out.edit.new_files.push((stream.level, meta));
    }
    for (level, f) in plan.input_files() {
        out.edit.deleted_files.push((level, f.number));
        if f.kind == FileKind::Real {
            out.edit.new_parents.push(FileMetaData::clone(f));
        }
    }
    out.edit.log_number = plan.log_number;
    out.stream_bytes = vec![0];
    Ok(out)
}

/// The pieces of the plan's inputs, in read order (module docs, step 1).
fn pieces<'a>(
    plan: &'a Plan,
    ctx: &JobContext<'a>,
    stream: &OutputStream,
) -> Result<Vec<Piece<'a>>> {
    let mut pieces = Vec::new();
    let mut parent_spans: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut add = |parent: &'a FileMetaData, table: Arc<Table>, lo: &[u8], hi: &[u8]| {
        if parent.path_id != stream.path_id {
            return Err(Error::Internal(format!(
                "virtualize: parent `{}` lies on path_id=`{}` but the stream writes \
                 path_id=`{}`; a virtual table's parents must lie on its path",
                parent.number, parent.path_id, stream.path_id
            )));
        }
        let span = match parent_spans.get(&parent.number) {
            Some(&s) => s,
            None => {
                let (start, _) = table
                    .approximate_span(parent.smallest_user_key(), parent.largest_user_key())?;
                let s = (start, table.data_end());
                parent_spans.insert(parent.number, s);
                s
            }
        };
        pieces.push(Piece {
            parent,
            table,
            lo: lo.to_vec(),
            hi: hi.to_vec(),
            parent_span: span,
        });
        Ok(())
    };
    for input in &plan.inputs {
        let Input::Files { level, files } = input else {
            return Err(Error::Internal(
                "a virtualize plan has a memtable input".into(),
            ));
        };
        for f in files {
            match &f.kind {
                FileKind::Real => {
                    let table = ctx.table_cache.get(f)?;
                    add(f, table, f.smallest_user_key(), f.largest_user_key())?;
                }
                FileKind::Virtual { .. } => {
                    for view in virtual_slices(ctx.version, *level, f)? {
                        let view = view?;
                        let table = ctx
                            .table_cache
                            .get_pinned(view.parent, view.file)?
                            .into_owned();
                        add(
                            view.parent,
                            table,
                            &view.slice.smallest,
                            &view.slice.largest,
                        )?;
                    }
                }
            }
        }
    }
    Ok(pieces)
}

/// Bytes of the pieces' data in `[lo, hi]`.
fn bytes_in(pieces: &[Piece<'_>], lo: &[u8], hi: &[u8]) -> Result<u64> {
    let mut sum = 0u64;
    for p in pieces {
        if let Some((a, b)) = p.clip(lo, hi) {
            sum = sum.saturating_add(p.table.approximate_range_bytes(a, b)?);
        }
    }
    Ok(sum)
}

/// The tiles `[lo, hi]` (user keys, inclusive) that `[lo, hi]` is cut into, in order
/// (module docs, step 2). Each intersects at least one piece.
fn tiles(
    pieces: &[Piece<'_>],
    stream: &OutputStream,
    lo: &[u8],
    hi: &[u8],
    hi_has_entries: bool,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    // Candidate cuts: after `u`, for `u` in `[lo, hi)`.
    let mut cuts: Vec<Vec<u8>> = Vec::new();
    for p in pieces {
        cuts.extend(p.table.block_boundaries(&p.lo, &p.hi)?);
    }
    if let Partitioning::Aligned { grandparents, .. } = &stream.partitioning {
        cuts.extend(grandparents.iter().map(|g| g.largest_user_key().to_vec()));
    }
    cuts.retain(|u| lo <= u.as_slice() && u.as_slice() < hi);
    cuts.sort_unstable();
    cuts.dedup();
    let mut partitioner = partitioner::for_stream(stream);
    let mut tiles = Vec::new();
    let mut tile_lo = lo.to_vec();
    // Bytes of the current tile so far: the pieces' data in `[tile_lo, u]`, measured
    // cut by cut from `from` on.
    let mut size = 0u64;
    let mut from = lo.to_vec();
    for u in cuts {
        size = size.saturating_add(bytes_in(pieces, &from, &u)?);
        from = key_after(&u);
        // The partitioner sees the key the next tile would start with (and is told
        // of every candidate, so stateful policies track their position).
        let cut = partitioner.should_cut(&from, size);
        if cut && pieces.iter().any(|p| p.clip(&tile_lo, &u).is_some()) {
            tiles.push((std::mem::replace(&mut tile_lo, from.clone()), u));
            size = 0;
        }
    }
    // A virtual input may reach past its last slice: a rest holding no piece joins
    // the tile before it.
    // So does a rest of `[hi, hi]` when the inputs hold no entry of `hi`.
    let rest_is_empty = (!hi_has_entries && tile_lo.as_slice() == hi)
        || !pieces.iter().any(|p| p.clip(&tile_lo, hi).is_some());
    match tiles.last_mut() {
        Some((_, last_hi)) if rest_is_empty => *last_hi = hi.to_vec(),
        _ => tiles.push((tile_lo, hi.to_vec())),
    }
    Ok(tiles)
}

/// `n` scaled by `part / whole` (`part` capped at `whole`; 0 if `whole` is 0).
fn prorate(n: u64, part: u64, whole: u64) -> u64 {
    if whole == 0 {
        return 0;
    }
    let scaled = u128::from(n) * u128::from(part.min(whole)) / u128::from(whole);
    u64::try_from(scaled).unwrap_or(n)
}

/// The virtual table of the tile `[lo, hi]` (module docs, step 3 and "Table
/// metadata"), with number 0 and the bounds of an interior tile.
fn table(
    pieces: &[Piece<'_>],
    lo: &[u8],
    hi: &[u8],
    stream: &OutputStream,
) -> Result<FileMetaData> {
    let mut slices = Vec::new();
    let mut meta = FileMetaData {
        number: 0,
        path_id: stream.path_id,
        size: 0,
        smallest: key::make_internal_key(lo, MAX_SEQUENCE, ValueKind::Merge),
        largest: key::make_internal_key(hi, 0, ValueKind::Delete),
        smallest_seqno: MAX_SEQUENCE,
        largest_seqno: 0,
        num_entries: 0,
        num_deletions: 0,
        column_group: stream.column_group,
        kind: FileKind::Real,
        num_range_deletions: 0,
        // Its own age as a table, as a real output's (periodic compaction).
        creation_time: crate::version::file_meta::unix_now(),
    };
    for p in pieces {
        let Some((a, b)) = p.clip(lo, hi) else {
            continue;
        };
        let parent = p.parent;
        let span = p.table.approximate_span(a, b)?;
        let data = span.1.saturating_sub(span.0);
        let bytes = p.file_bytes(b, span);
        meta.size = meta.size.saturating_add(bytes);
        meta.smallest_seqno = meta.smallest_seqno.min(parent.smallest_seqno);
        meta.largest_seqno = meta.largest_seqno.max(parent.largest_seqno);
        meta.num_entries += prorate(parent.num_entries, data, p.parent_bytes());
        meta.num_deletions += prorate(parent.num_deletions, data, p.parent_bytes());
        let tombstones = p
            .table
            .range_dels()
            .is_some_and(|rd| !rd.clip(Some(a), Some(&key_after(b))).is_empty());
        if tombstones {
            meta.num_range_deletions += parent.num_range_deletions;
        }
        slices.push(Slice {
            parent: parent.number,
            smallest: a.to_vec(),
            largest: b.to_vec(),
            bytes,
        });
    }
    if slices.is_empty() {
        return Err(Error::Internal(
            "virtualize: a tile intersects no input".into(),
        ));
    }
    meta.kind = FileKind::Virtual { slices };
    Ok(meta)
}

#[cfg(test)]
mod tests;
