//! The range-deletion block: a table's range tombstones, fragmented.
//!
//! # Format (table format version 2)
//! An ordinary block (`sst/block.rs`, restart interval 1, stored raw with its trailer)
//! with one entry per (fragment, sequence number):
//!
//! ```text
//! key   = internal key (fragment start, seq, RangeDelete = 3)
//! value = fragment end (user key, exclusive)
//! ```
//!
//! Entries are in internal-key order: fragment start ascending, then sequence number
//! descending. Entries with the same start belong to one fragment and carry the same
//! end. The properties block locates it (tag 15, a block handle) and counts its
//! entries (tag 16); the footer's `format_version` is 2 exactly when the block exists,
//! so a reader that does not know range deletions refuses the table instead of
//! ignoring its tombstones.
//!
//! # Invariants (checked by [`decode`])
//! 1. Every key is a valid internal key of kind `RangeDelete`.
//! 2. Fragments are non-empty (`start < end`), sorted and disjoint.
//! 3. Within a fragment, sequence numbers strictly descend and the end is the same.

use super::block::{Block, BlockBuilder};
use super::block_iter::BlockIter;
use crate::error::Result;
use crate::key::{self, ValueKind};
use crate::range_del::{Fragment, Fragments};
use std::sync::Arc;

/// The block contents of `frags` (raw, without trailer).
///
/// # Errors
/// As [`BlockBuilder::add`] (a block over the format's offsets).
pub(crate) fn encode(frags: &Fragments) -> Result<Vec<u8>> {
    let mut b = BlockBuilder::new(1);
    let mut ikey = Vec::new();
    for f in frags.fragments() {
        for &seq in &f.seqs {
            ikey.clear();
            key::append_internal_key(&mut ikey, &f.start, seq, ValueKind::RangeDelete);
            b.add(&ikey, &f.end)?;
        }
    }
    Ok(b.finish().to_vec())
}

/// Decodes block contents into fragments.
///
/// # Errors
/// A static reason when the block or an entry is malformed or an invariant fails.
pub(crate) fn decode(contents: Vec<u8>) -> Result<Fragments, &'static str> {
    let block = Block::decode(contents)?;
    let mut it = BlockIter::new(Arc::new(block));
    it.seek_to_first();
    let mut frags: Vec<Fragment> = Vec::new();
    while it.valid() {
        let p = key::parse_internal_key(it.key()).ok_or("malformed range tombstone key")?;
        if p.kind != ValueKind::RangeDelete {
            return Err("range tombstone of the wrong kind");
        }
        let end = it.value();
        if p.user_key >= end {
            return Err("empty range tombstone fragment");
        }
        match frags.last_mut() {
            Some(f) if f.start.as_slice() == p.user_key => {
                if f.end.as_slice() != end {
                    return Err("range tombstone fragment with two ends");
                }
                if f.seqs.last().is_some_and(|&s| s <= p.seq) {
                    return Err("range tombstone sequence numbers out of order");
                }
                f.seqs.push(p.seq);
            }
            last => {
                if last.is_some_and(|f| f.end.as_slice() > p.user_key) {
                    return Err("range tombstone fragments overlap or are out of order");
                }
                frags.push(Fragment {
                    start: p.user_key.to_vec(),
                    end: end.to_vec(),
                    seqs: vec![p.seq],
                });
            }
        }
        it.next();
    }
    if it.is_corrupt() {
        return Err("malformed range tombstone block entry");
    }
    Ok(Fragments::from_fragments(frags))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::range_del::RangeTombstone;

    #[test]
    fn fragments_round_trip() {
        let t = RangeTombstone::of;
        let f = Fragments::new(&[t("a", "m", 5), t("f", "z", 9), t("", "b", 1)]);
        let back = decode(encode(&f).unwrap()).unwrap();
        assert_eq!(back, f);
        assert_eq!(
            decode(encode(&Fragments::default()).unwrap()).unwrap(),
            Fragments::default()
        );
    }

    #[test]
    fn malformed_blocks_are_refused() {
        let block = |entries: &[(&str, u64, ValueKind, &str)]| {
            let mut b = BlockBuilder::new(1);
            for (k, s, kind, v) in entries {
                let mut ikey = Vec::new();
                key::append_internal_key(&mut ikey, k.as_bytes(), *s, *kind);
                b.add(&ikey, v.as_bytes()).unwrap();
            }
            b.finish().to_vec()
        };
        use ValueKind::*;
        assert!(decode(block(&[("a", 1, Put, "b")])).is_err());
        assert!(decode(block(&[("b", 1, RangeDelete, "a")])).is_err());
        assert!(decode(block(&[
            ("a", 2, RangeDelete, "c"),
            ("a", 1, RangeDelete, "d")
        ]))
        .is_err());
        assert!(decode(block(&[
            ("a", 1, RangeDelete, "c"),
            ("b", 2, RangeDelete, "d")
        ]))
        .is_err());
        assert!(decode(block(&[
            ("a", 2, RangeDelete, "c"),
            ("c", 1, RangeDelete, "d")
        ]))
        .is_ok());
        assert!(decode(vec![1, 2, 3]).is_err());
    }
}
