//! Checksum fixups: recompute every checksum that can be located in mutated bytes, so
//! that fuzzing reaches the decoders behind the CRC checks.
//!
//! Each function returns `None` when it changed nothing (the checks then skip the
//! second run). They never panic and allocate at most a copy of their input.

use std::sync::Arc;
use strata::coding::{get_fixed32, get_fixed64, mask_crc};
use strata::sst::footer::FOOTER_LEN;
use strata::sst::{Block, BlockHandle, BlockIter, FORMAT_VERSION, TABLE_MAGIC};
use strata::wal::{BLOCK_SIZE, HEADER_SIZE};

/// Most data block handles of one index the table fixup follows.
const MAX_FIXED_BLOCKS: usize = 4096;

/// Rewrites the 4-byte trailer CRC of one sealed block (`contents ++ type ++ crc`).
pub fn sealed_block(data: &[u8]) -> Option<Vec<u8>> {
    let mut out = data.to_vec();
    let covered = data.len().checked_sub(4)?;
    seal_at(&mut out, 0, covered).then_some(out)
}

/// Sets the CRC after `out[start..start + covered]`; true iff that changed a byte.
fn seal_at(out: &mut [u8], start: usize, covered: usize) -> bool {
    let Some(end) = start.checked_add(covered) else {
        return false;
    };
    let Some(body) = out.get(start..end) else {
        return false;
    };
    let crc = mask_crc(crc32c::crc32c(body)).to_le_bytes();
    match out.get_mut(end..end + 4) {
        Some(slot) if slot != crc => {
            slot.copy_from_slice(&crc);
            true
        }
        _ => false,
    }
}

/// Fixes the trailer of the block at `h` if it lies before `limit`.
fn seal_handle(out: &mut [u8], h: BlockHandle, limit: u64) -> bool {
    match (usize::try_from(h.offset), usize::try_from(h.size), h.end()) {
        (Ok(off), Ok(size), Some(end)) if end <= limit => seal_at(out, off, size + 1),
        _ => false,
    }
}

/// A table with its footer magic, version and CRC, its meta block trailers and the
/// trailers of every data block its index points at recomputed.
pub fn table(data: &[u8]) -> Option<Vec<u8>> {
    let foot = data.len().checked_sub(FOOTER_LEN)?;
    let mut out = data.to_vec();
    let mut changed = false;
    let mut put = |out: &mut Vec<u8>, at: usize, bytes: &[u8]| {
        if let Some(slot) = out.get_mut(at..at + bytes.len()) {
            if slot != bytes {
                slot.copy_from_slice(bytes);
                changed = true;
            }
        }
    };
    put(&mut out, foot + 56, &TABLE_MAGIC.to_le_bytes());
    put(&mut out, foot + 48, &FORMAT_VERSION.to_le_bytes());
    let handle = |out: &[u8], i: usize| -> Option<BlockHandle> {
        Some(BlockHandle {
            offset: get_fixed64(out, foot + 16 * i)?,
            size: get_fixed64(out, foot + 16 * i + 8)?,
        })
    };
    let limit = foot as u64;
    let meta: Vec<BlockHandle> = (0..3)
        .filter_map(|i| handle(&out, i))
        .filter(|h| h.size != 0)
        .collect();
    for &h in &meta {
        changed |= seal_handle(&mut out, h, limit);
    }
    if let Some(index) = handle(&out, 1).and_then(|h| raw_contents(&out, h, limit)) {
        if let Ok(block) = Block::decode(index) {
            let iter = BlockIter::new(Arc::new(block));
            for h in crate::reference::index_handles(iter, MAX_FIXED_BLOCKS) {
                changed |= seal_handle(&mut out, h, limit);
            }
            // A data block overlapping a meta block may have broken its trailer.
            for &h in &meta {
                changed |= seal_handle(&mut out, h, limit);
            }
        }
    }
    let mut footer_changed = false;
    if let Some(covered) = out.get(foot..foot + 52) {
        let crc = mask_crc(crc32c::crc32c(covered));
        footer_changed = get_fixed32(&out, foot + 52) != Some(crc);
        if let Some(slot) = out.get_mut(foot + 52..foot + 56) {
            slot.copy_from_slice(&crc.to_le_bytes());
        }
    }
    (changed || footer_changed).then_some(out)
}

/// The contents of a raw (type 1) block at `h`, without checking its CRC.
fn raw_contents(data: &[u8], h: BlockHandle, limit: u64) -> Option<Vec<u8>> {
    let end = h.end().filter(|&e| e <= limit)?;
    let start = usize::try_from(h.offset).ok()?;
    let size = usize::try_from(h.size).ok()?;
    let end = usize::try_from(end).ok()?;
    let sealed = data.get(start..end)?;
    // Only raw blocks: the builder never compresses index blocks.
    if sealed.get(size) != Some(&1) {
        return None;
    }
    Some(sealed.get(..size)?.to_vec())
}

/// A log with the CRC of every fragment header it can walk recomputed.
pub fn log(data: &[u8]) -> Option<Vec<u8>> {
    let mut out = data.to_vec();
    let mut changed = false;
    for block_start in (0..data.len()).step_by(BLOCK_SIZE) {
        let block_end = (block_start + BLOCK_SIZE).min(data.len());
        let mut pos = block_start;
        while pos + HEADER_SIZE <= block_end {
            let len = usize::from(u16::from_le_bytes([out[pos + 4], out[pos + 5]]));
            let kind = out[pos + 6];
            let start = pos + HEADER_SIZE;
            if start + len > block_end || (kind == 0 && len == 0) {
                break;
            }
            let crc = crc32c::crc32c_append(crc32c::crc32c(&[kind]), &out[start..start + len]);
            let crc = mask_crc(crc).to_le_bytes();
            if out[pos..pos + 4] != crc {
                out[pos..pos + 4].copy_from_slice(&crc);
                changed = true;
            }
            pos = start + len;
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seeds;

    /// A byte flipped anywhere before the footer breaks a checksum; the fixup repairs
    /// it so the table reads end to end again (that is what lets fuzzing get past the
    /// CRCs).
    #[test]
    fn table_fixup_repairs_every_checksum() {
        let (_, table) = seeds::tables()
            .into_iter()
            .find(|(n, _)| n == "table-None-bloom10-30")
            .expect("seed exists");
        assert!(crate::reference::parse_table(&table).is_some());
        assert_eq!(super::table(&table), None, "a valid table needs no fixup");
        let mut repaired = 0;
        for pos in (0..table.len() - FOOTER_LEN).step_by(7) {
            let mut bad = table.clone();
            bad[pos] ^= 0x20;
            let fixed = super::table(&bad).expect("something to fix");
            repaired += usize::from(crate::reference::parse_table(&fixed).is_some());
        }
        assert!(repaired > (table.len() - FOOTER_LEN) / 7 / 2, "{repaired}");
    }

    #[test]
    fn log_fixup_repairs_fragment_checksums() {
        let (_, log) = seeds::logs()
            .into_iter()
            .find(|(n, _)| n == "log-batches")
            .expect("seed exists");
        assert_eq!(super::log(&log), None);
        let mut bad = log.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(super::log(&bad).is_some());
    }
}
