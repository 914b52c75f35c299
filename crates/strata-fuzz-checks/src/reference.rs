//! A second, deliberately simple reading of the block and table formats, written from
//! the format documentation (`strata::sst` and `strata::sst::block`), used as an oracle
//! for the engine's iterators.
//!
//! It walks a block's entry chain front to back exactly once, with no restart-point
//! tricks, so it is easy to believe. The checks compare the engine's cursors against it:
//! forward iteration must always match the chain; backward iteration and seeks must
//! match it whenever the block is *aligned* (every restart point is an entry boundary
//! whose key shares nothing) and, for seeks, *sorted*.

use std::cmp::Ordering;
use strata::coding::{get_fixed32, get_varint32};
use strata::key::compare_internal;
use strata::sst::compression::unseal_block;
use strata::sst::footer::FOOTER_LEN;
use strata::sst::{BlockHandle, BlockIter, Footer};

/// One entry of a block, as the reference reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefEntry {
    /// Offset of the entry header in the block.
    pub offset: usize,
    /// Bytes shared with the previous key.
    pub shared: usize,
    /// The full key.
    pub key: Vec<u8>,
    /// The value.
    pub value: Vec<u8>,
}

/// A block as the reference reads it.
#[derive(Clone, Debug, Default)]
pub struct RefBlock {
    /// Entries of the chain from offset 0, up to the first malformed one.
    pub entries: Vec<RefEntry>,
    /// True iff the chain stopped at a malformed entry before the restart array.
    pub corrupt: bool,
    /// The restart offsets.
    pub restarts: Vec<usize>,
}

impl RefBlock {
    /// Every restart point is the offset of an entry of the chain, with `shared == 0`
    /// (or the block has no entries), and the chain is not corrupt.
    pub fn aligned(&self) -> bool {
        !self.corrupt
            && self.restarts.iter().all(|&r| {
                (r == 0 && self.entries.is_empty())
                    || self
                        .entries
                        .binary_search_by_key(&r, |e| e.offset)
                        .is_ok_and(|i| self.entries.get(i).is_some_and(|e| e.shared == 0))
            })
    }

    /// Keys strictly ascending under `compare_internal`.
    pub fn sorted(&self) -> bool {
        sorted(self.entries.iter().map(|e| e.key.as_slice()))
    }

    /// `(key, value)` pairs.
    pub fn pairs(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.entries
            .iter()
            .map(|e| (e.key.clone(), e.value.clone()))
            .collect()
    }
}

/// True iff `keys` are strictly ascending under `compare_internal`.
pub fn sorted<'a>(keys: impl IntoIterator<Item = &'a [u8]>) -> bool {
    let mut prev: Option<&[u8]> = None;
    for k in keys {
        if prev.is_some_and(|p| compare_internal(p, k) != Ordering::Less) {
            return false;
        }
        prev = Some(k);
    }
    true
}

/// Reads block contents the way the format documentation describes them. `None` if the
/// restart array itself does not fit (the engine's `Block::decode` rejects those).
pub fn parse_block(data: &[u8]) -> Option<RefBlock> {
    let n_pos = data.len().checked_sub(4)?;
    let n = get_fixed32(data, n_pos)? as usize;
    let restarts_offset = n_pos.checked_sub(n.checked_mul(4)?)?;
    let restarts = (0..n)
        .map(|i| get_fixed32(data, restarts_offset + 4 * i).map(|r| r as usize))
        .collect::<Option<Vec<_>>>()?;
    let area = data.get(..restarts_offset)?;
    let mut out = RefBlock {
        restarts,
        ..RefBlock::default()
    };
    let mut key: Vec<u8> = Vec::new();
    let mut pos = 0usize;
    while pos < area.len() {
        let Some((shared, non_shared, value_len, header)) = entry_header(&area[pos..]) else {
            out.corrupt = true;
            break;
        };
        let key_start = pos + header;
        let key_end = key_start.checked_add(non_shared);
        let value_end = key_end.and_then(|k| k.checked_add(value_len));
        let (Some(key_end), Some(value_end)) = (key_end, value_end) else {
            out.corrupt = true;
            break;
        };
        if value_end > area.len() || shared > key.len() {
            out.corrupt = true;
            break;
        }
        key.truncate(shared);
        key.extend_from_slice(&area[key_start..key_end]);
        out.entries.push(RefEntry {
            offset: pos,
            shared,
            key: key.clone(),
            value: area[key_end..value_end].to_vec(),
        });
        pos = value_end;
    }
    Some(out)
}

fn entry_header(src: &[u8]) -> Option<(usize, usize, usize, usize)> {
    let (shared, a) = get_varint32(src)?;
    let (non_shared, b) = get_varint32(src.get(a..)?)?;
    let (value_len, c) = get_varint32(src.get(a + b..)?)?;
    Some((
        shared as usize,
        non_shared as usize,
        value_len as usize,
        a + b + c,
    ))
}

/// A table as the reference reads it: its index block and its data blocks in index
/// order (with their handles).
#[derive(Debug)]
pub struct RefTable {
    /// The index block.
    pub index: RefBlock,
    /// Data blocks in index order.
    pub data: Vec<(BlockHandle, RefBlock)>,
}

impl RefTable {
    /// Data block handles ascending without overlap, as the builder writes them (the
    /// engine caches blocks by offset, so two handles at one offset read one block).
    pub fn handles_ascending(&self) -> bool {
        let mut end = 0u64;
        for (h, _) in &self.data {
            if h.offset < end {
                return false;
            }
            end = h.end().unwrap_or(u64::MAX);
        }
        true
    }

    /// Handles ascending and every block aligned.
    pub fn aligned(&self) -> bool {
        self.handles_ascending()
            && self.index.aligned()
            && self.data.iter().all(|(_, b)| b.aligned())
    }

    /// Every entry of every data block, in order.
    pub fn pairs(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.data.iter().flat_map(|(_, b)| b.pairs()).collect()
    }
}

/// Reads a whole table file with the reference block reader. `None` if any block fails
/// its checksum or does not parse (the engine then reports an error somewhere).
pub fn parse_table(file: &[u8]) -> Option<RefTable> {
    let size = file.len() as u64;
    let footer = Footer::decode(file.get(file.len().checked_sub(FOOTER_LEN)?..)?, size).ok()?;
    let read = |h: BlockHandle| -> Option<Vec<u8>> {
        let start = usize::try_from(h.offset).ok()?;
        let end = usize::try_from(h.end()?).ok()?;
        unseal_block(file.get(start..end)?.to_vec()).ok()
    };
    let index_bytes = read(footer.index)?;
    let index = parse_block(&index_bytes)?;
    if index.corrupt {
        return None;
    }
    let mut data = Vec::new();
    for e in &index.entries {
        let h = BlockHandle::decode(&e.value)?;
        let b = parse_block(&read(h)?)?;
        if b.corrupt {
            return None;
        }
        data.push((h, b));
    }
    Some(RefTable { index, data })
}

/// Data block handles of a table's index block contents, as the engine's own cursor
/// reads them (used by the checksum fixup, which must not trust the reference).
pub fn index_handles(index: BlockIter, limit: usize) -> Vec<BlockHandle> {
    let mut it = index;
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() && out.len() < limit {
        if let Some(h) = BlockHandle::decode(it.value()) {
            out.push(h);
        }
        it.next();
    }
    out
}
