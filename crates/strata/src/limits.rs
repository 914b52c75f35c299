//! Size limits: the largest key, value and write batch the engine accepts, and the
//! largest block an SSTable reader decompresses. The one home of every bound that a
//! writer and its reader must agree on.
//!
//! # Role
//! [`crate::WriteBatch`] checks [`MAX_KEY_LEN`], [`MAX_VALUE_LEN`] and
//! [`MAX_BATCH_LEN`] as records are added (and
//! [`crate::batch::WriteBatchInternal::from_data`] as it decodes), and
//! [`crate::Db::write`] refuses a batch that broke one with
//! [`crate::Error::InvalidArgument`] *before* the batch enters the group-commit queue,
//! so nothing over a limit is ever appended to the WAL or acknowledged. The SSTable
//! writer (`sst::builder`, `sst::compression`) and reader (`sst::compression`) share
//! [`MAX_BLOCK_LEN`].
//!
//! # Limits
//! | constant | value | checked by | why this value |
//! |---|---|---|---|
//! | [`MAX_KEY_LEN`] | 8 MiB | `WriteBatch`, `Db::write` | RocksDB's recommended key maximum (its hard limit is `u32::MAX`); a key is copied whole into index blocks, table properties and every MANIFEST snapshot |
//! | [`MAX_VALUE_LEN`] | 128 MiB | `WriteBatch`, `Db::write` | keeps a single-entry block (invariant 1: 136 MiB + 35 bytes) well inside [`MAX_BLOCK_LEN`], so every compression type applies to it |
//! | [`MAX_BATCH_LEN`] | 512 MiB | `WriteBatch`, `Db::write` | one WAL record is replayed whole into memory; holds a maximal put with room to spare (invariant 3) |
//! | [`MAX_BLOCK_LEN`] | 256 MiB | SSTable reader and writer | the reader's bound on the raw length a compressed block claims, so a crafted block cannot make it allocate without limit; unchanged since format version 1 |
//!
//! The limits are on *new* writes only. Readers never check key or value sizes, so a
//! database written before the limits existed stays readable, and compactions rewrite
//! its entries (invariant 2 keeps such tables readable too).
//!
//! # Invariants (each is checked at compile time or by the code named)
//! 1. **A single-entry data block fits [`MAX_BLOCK_LEN`].** Its contents are at most
//!    `EMPTY_BLOCK_LEN` (8: one restart slot and the count) plus
//!    `block::max_add_growth(MAX_KEY_LEN + 8, MAX_VALUE_LEN)` (three varint32 headers of
//!    at most 5 bytes, the internal key with its 8-byte trailer, the value, and a
//!    possible restart slot): 136 MiB + 35 bytes <= 256 MiB (`const` assertion below).
//! 2. **Every block the writer compresses is one the reader decompresses.**
//!    `TableBuilder::add` finishes the current data block before an entry that could
//!    push it past [`MAX_BLOCK_LEN`], so a data block is either within the bound or
//!    holds a single entry; by 1 the latter is within the bound for any entry that
//!    passed the write-path checks. `seal_block` stores raw (type 1, which the reader
//!    bounds only by the file) any block longer than [`MAX_BLOCK_LEN`] (reachable only
//!    by entries written before these limits) and any LZ4 block over the reader's ratio
//!    bound. A block's offsets are u32: `BlockBuilder::add` refuses, with an error, an
//!    entry it cannot encode, and [`MAX_BLOCK_LEN`] < 4 GiB.
//! 3. **A batch that passed the checks can be framed and replayed.** It holds at least
//!    one maximal put (`const` assertion below). Its `count` (u32) cannot overflow: a
//!    record is at least 2 bytes, and `(MAX_BATCH_LEN - 12) / 2 < u32::MAX`. The WAL
//!    splits a record of any length into fragments of at most 32 KiB - 7 bytes, and its
//!    reader reassembles any length. The group-commit leader merges followers only up
//!    to 1 MiB (`db::write`, asserted there), so a WAL record is never longer than the
//!    largest batch that passed [`crate::Db::write`].
//!
//! # See also
//! `crates/strata/tests/regression_large_value_unreadable_after_flush.rs` (boundary
//! tests for every compression type); `docs/ARCHITECTURE.md` §3.0.1.

use crate::batch;
use crate::key::TRAILER_LEN;
use crate::sst::block;

/// Largest user key accepted by a write, bytes (8 MiB).
pub const MAX_KEY_LEN: usize = 8 << 20;

/// Largest value accepted by a write, bytes (128 MiB).
pub const MAX_VALUE_LEN: usize = 128 << 20;

/// Largest serialized [`crate::WriteBatch`] accepted by a write, header included, bytes
/// (512 MiB). See [`crate::WriteBatch::approximate_size`].
pub const MAX_BATCH_LEN: usize = 512 << 20;

/// Largest raw (uncompressed) length of a compressed SSTable block, bytes (256 MiB): the
/// reader refuses a compressed block claiming more, and the writer stores longer blocks
/// raw (invariant 2).
pub const MAX_BLOCK_LEN: usize = 256 << 20;

/// Largest possible contents of a data block holding one entry with a maximal key and
/// value (invariant 1).
pub const MAX_SINGLE_ENTRY_BLOCK_LEN: usize =
    block::EMPTY_BLOCK_LEN + block::max_add_growth(MAX_KEY_LEN + TRAILER_LEN, MAX_VALUE_LEN);

// Invariant 1, and block offsets (u32) cover every block the writer compresses.
const _: () = assert!(MAX_SINGLE_ENTRY_BLOCK_LEN <= MAX_BLOCK_LEN);
const _: () = assert!(MAX_BLOCK_LEN < u32::MAX as usize);
// Invariant 3: a maximal put fits in a batch, and a batch's count cannot overflow.
const _: () =
    assert!(batch::HEADER_LEN + batch::max_record_len(MAX_KEY_LEN, MAX_VALUE_LEN) <= MAX_BATCH_LEN);
const _: () =
    assert!((MAX_BATCH_LEN - batch::HEADER_LEN) / batch::MIN_RECORD_LEN < u32::MAX as usize);
// On 32-bit targets a batch of MAX_BATCH_LEN is still a valid allocation.
const _: () = assert!(MAX_BATCH_LEN <= i32::MAX as usize);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_entry_block_bound_is_tight_enough_to_hold_a_maximal_entry() {
        // The bound counts every header byte: a real maximal entry is no larger.
        let mut b = block::BlockBuilder::new(16);
        let key = vec![b'k'; 1000];
        b.add(&key, b"v").expect("small entry");
        assert!(b.finish().len() <= block::EMPTY_BLOCK_LEN + block::max_add_growth(1000, 1));
        assert_eq!(MAX_SINGLE_ENTRY_BLOCK_LEN, (136 << 20) + 8 + 8 + 15 + 4);
    }
}
