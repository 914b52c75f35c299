//! The log format shared by the write-ahead log and the MANIFEST.
//!
//! Role: [`LogWriter`] appends records (a serialized `WriteBatch`, or a version edit);
//! [`LogReader`] replays them at recovery. Lifecycle of a WAL: created when a memtable
//! is created, synced per `sync` write, deleted once that memtable is flushed and the
//! MANIFEST records a newer log number.
//!
//! # Format (format version 1, LevelDB's log format with CRC32C)
//! The file is a sequence of 32 KiB blocks. A record is split into fragments that never
//! cross a block boundary; each fragment has a 7-byte header:
//! ```text
//! +-----------+-----------+--------+----------------------+
//! | crc: u32  | len: u16  | type:u8| payload (len bytes)  |
//! +-----------+-----------+--------+----------------------+
//!   little-endian; crc = mask(crc32c(type byte ++ payload))
//! type: 1 = FULL, 2 = FIRST, 3 = MIDDLE, 4 = LAST (0 is never written: zeroed,
//! preallocated space reads as invalid)
//! ```
//! If fewer than 7 bytes remain in a block, they are zero-filled and the next fragment
//! starts at the next block.
//!
//! # Invariants
//! 1. Every fragment is checksummed; a torn write shows up as a truncated or
//!    checksum-failing fragment at the end of the file.
//! 2. Records are delivered whole or not at all.

mod reader;
mod writer;

pub use reader::{LogError, LogReader};
pub use writer::LogWriter;

/// Size of a log block.
pub const BLOCK_SIZE: usize = 32 * 1024;
/// Size of a fragment header.
pub const HEADER_SIZE: usize = 7;

/// Fragment types. On disk: append only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum FragmentType {
    Full = 1,
    First = 2,
    Middle = 3,
    Last = 4,
}

impl FragmentType {
    fn from_u8(b: u8) -> Option<Self> {
        match b {
            1 => Some(FragmentType::Full),
            2 => Some(FragmentType::First),
            3 => Some(FragmentType::Middle),
            4 => Some(FragmentType::Last),
            _ => None,
        }
    }
}

/// The masked checksum of a fragment.
fn fragment_crc(kind: u8, payload: &[u8]) -> u32 {
    let crc = crc32c::crc32c_append(crc32c::crc32c(&[kind]), payload);
    crate::coding::mask_crc(crc)
}

#[cfg(test)]
mod tests;
