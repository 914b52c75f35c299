//! Replays records from a log file. See the module docs of `wal` for the format.

use super::{fragment_crc, FragmentType, BLOCK_SIZE, HEADER_SIZE};
use crate::coding::get_fixed32;
use crate::env::SequentialFile;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Why a log could not be read further at some offset.
#[derive(Debug)]
pub enum LogError {
    /// The file ends inside a fragment or record: an interrupted write (torn tail).
    Truncated {
        /// Offset of the incomplete record.
        offset: u64,
    },
    /// A fragment failed its checksum or has an invalid header.
    Corrupt {
        /// Offset of the bad fragment.
        offset: u64,
        /// What was wrong.
        reason: &'static str,
    },
    /// The file could not be read.
    Io(Error),
}

impl LogError {
    /// The offset of the problem (0 for I/O errors).
    pub fn offset(&self) -> u64 {
        match self {
            LogError::Truncated { offset } | LogError::Corrupt { offset, .. } => *offset,
            LogError::Io(_) => 0,
        }
    }

    /// Converts to an engine error naming `file`.
    pub fn into_error(self, file: PathBuf) -> Error {
        match self {
            LogError::Truncated { offset } => {
                Error::corruption(file, offset, "log record truncated")
            }
            LogError::Corrupt { offset, reason } => Error::corruption(file, offset, reason),
            LogError::Io(e) => e,
        }
    }
}

/// Reads records front to back.
///
/// After a [`LogError::Corrupt`], reading may continue: the reader skips to the next
/// block and resumes, which lets recovery tell a damaged tail (nothing valid follows)
/// from damage in the middle (valid records follow).
pub struct LogReader {
    file: Box<dyn SequentialFile>,
    block: Vec<u8>,
    /// Valid bytes in `block`.
    block_len: usize,
    /// Read position in `block`.
    pos: usize,
    /// File offset of `block[0]`.
    block_start: u64,
    eof: bool,
}

impl LogReader {
    /// Starts reading at the beginning of `file`.
    pub fn new(file: Box<dyn SequentialFile>) -> Self {
        LogReader {
            file,
            block: vec![0; BLOCK_SIZE],
            block_len: 0,
            pos: 0,
            block_start: 0,
            eof: false,
        }
    }

    /// Starts reading at `offset` of `file`, the end of a whole record read before (a
    /// follower of a log another process appends to, `db::secondary`): the bytes before
    /// it are skipped, and the block holding it is read from its start so that block
    /// offsets stay where the writer put them.
    ///
    /// # Errors
    /// I/O errors skipping or reading.
    pub fn resume(mut file: Box<dyn SequentialFile>, offset: u64) -> Result<Self> {
        let in_block = offset % BLOCK_SIZE as u64;
        let aligned = offset - in_block;
        file.skip(aligned)?;
        let mut reader = LogReader::new(file);
        reader.block_start = aligned;
        match reader.fill() {
            Ok(_) => {}
            Err(LogError::Io(e)) => return Err(e),
            Err(e) => return Err(e.into_error(PathBuf::new())),
        }
        // Cannot exceed the block: `in_block < BLOCK_SIZE`; a file cut back below
        // `offset` (a writer undoing a record on a full disk) reads as ending there.
        reader.pos = usize::try_from(in_block)
            .unwrap_or(usize::MAX)
            .min(reader.block_len);
        Ok(reader)
    }

    /// The file offset just after the last fragment read: after [`Self::read_record`]
    /// returned a record, where the next one starts (where [`Self::resume`] picks up).
    pub fn position(&self) -> u64 {
        self.block_start + self.pos as u64
    }

    /// Loads the next block; false at end of file.
    fn fill(&mut self) -> Result<bool, LogError> {
        if self.eof {
            return Ok(false);
        }
        self.block_start += self.block_len as u64;
        self.block_len = 0;
        self.pos = 0;
        while self.block_len < BLOCK_SIZE {
            let buf = self.block.get_mut(self.block_len..).unwrap_or_default();
            let n = self.file.read(buf).map_err(LogError::Io)?;
            if n == 0 {
                self.eof = true;
                break;
            }
            self.block_len += n;
        }
        Ok(self.block_len > 0)
    }

    /// Reads one fragment: `(type, payload range in block, offset)`; `Ok(None)` at a
    /// clean end of file.
    fn fragment(&mut self) -> Result<Option<(FragmentType, usize, usize, u64)>, LogError> {
        loop {
            if self.block_len - self.pos < HEADER_SIZE {
                let trailing = self.block_len - self.pos;
                let offset = self.block_start + self.pos as u64;
                // A short tail in a full block is zero padding; in the last, partial
                // block it is a header cut off by a crash (unless it is all zeros).
                let padding_only = self
                    .block
                    .get(self.pos..self.block_len)
                    .is_some_and(|b| b.iter().all(|&x| x == 0));
                if self.block_len < BLOCK_SIZE && trailing > 0 && !padding_only {
                    self.pos = self.block_len;
                    return Err(LogError::Truncated { offset });
                }
                if !self.fill()? {
                    return Ok(None);
                }
                continue;
            }
            let offset = self.block_start + self.pos as u64;
            let hdr = self.pos;
            let crc = get_fixed32(&self.block, hdr).unwrap_or(0);
            let len = usize::from(u16::from_le_bytes([
                self.block.get(hdr + 4).copied().unwrap_or(0),
                self.block.get(hdr + 5).copied().unwrap_or(0),
            ]));
            let kind_byte = self.block.get(hdr + 6).copied().unwrap_or(0);
            let start = hdr + HEADER_SIZE;
            if start + len > self.block_len {
                self.pos = self.block_len;
                if self.block_len < BLOCK_SIZE {
                    return Err(LogError::Truncated { offset });
                }
                return Err(LogError::Corrupt {
                    offset,
                    reason: "log fragment length crosses block boundary",
                });
            }
            if kind_byte == 0 && len == 0 && crc == 0 {
                // Zeroed space (preallocation or a hole): skip the rest of the block.
                self.pos = self.block_len;
                if self.block_len < BLOCK_SIZE {
                    return Err(LogError::Truncated { offset });
                }
                return Err(LogError::Corrupt {
                    offset,
                    reason: "zeroed log fragment",
                });
            }
            let payload = self.block.get(start..start + len).unwrap_or_default();
            if fragment_crc(kind_byte, payload) != crc {
                self.pos = self.block_len;
                return Err(LogError::Corrupt {
                    offset,
                    reason: "log fragment checksum mismatch",
                });
            }
            let Some(kind) = FragmentType::from_u8(kind_byte) else {
                self.pos = self.block_len;
                return Err(LogError::Corrupt {
                    offset,
                    reason: "unknown log fragment type",
                });
            };
            self.pos = start + len;
            return Ok(Some((kind, start, start + len, offset)));
        }
    }

    /// [`Self::read_record`] for a follower of a log another process is appending to
    /// (`db::secondary`): `Ok(None)` at the end of what is written so far, which is the
    /// end of the file or an incomplete last record (the writer is mid-append: it is
    /// read whole next time, by resuming at [`Self::position`] as it was after the last
    /// record returned). A writer appends front to back, so a reader sees a prefix of
    /// its bytes, and an incomplete record can only be the last one.
    ///
    /// # Errors
    /// `Corruption` naming `path` and the offset for a fragment that is all there but
    /// fails its checksum or its place in the record: written bytes that are wrong, not
    /// bytes not written yet. I/O errors.
    pub fn read_written(&mut self, out: &mut Vec<u8>, path: &Path) -> Result<Option<u64>> {
        match self.read_record(out) {
            Ok(found) => Ok(found),
            Err(LogError::Truncated { .. }) => Ok(None),
            Err(e) => Err(e.into_error(path.to_path_buf())),
        }
    }

    /// Reads the next whole record into `out` and returns its file offset; `Ok(None)` at
    /// a clean end of file.
    ///
    /// # Errors
    /// [`LogError::Truncated`] if the file ends inside a record, [`LogError::Corrupt`]
    /// for a bad fragment or fragment sequence, [`LogError::Io`] for read failures.
    pub fn read_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, LogError> {
        out.clear();
        let mut record_offset: Option<u64> = None;
        loop {
            let Some((kind, s, e, off)) = (match self.fragment() {
                Ok(f) => f,
                Err(LogError::Truncated { .. }) if record_offset.is_some() => {
                    return Err(LogError::Truncated {
                        offset: record_offset.unwrap_or(0),
                    })
                }
                Err(err) => return Err(err),
            }) else {
                return match record_offset {
                    Some(offset) => Err(LogError::Truncated { offset }),
                    None => Ok(None),
                };
            };
            let payload = self.block.get(s..e).unwrap_or_default();
            match (kind, record_offset) {
                (FragmentType::Full, None) => {
                    out.extend_from_slice(payload);
                    return Ok(Some(off));
                }
                (FragmentType::First, None) => {
                    out.extend_from_slice(payload);
                    record_offset = Some(off);
                }
                (FragmentType::Middle, Some(_)) => out.extend_from_slice(payload),
                (FragmentType::Last, Some(r)) => {
                    out.extend_from_slice(payload);
                    return Ok(Some(r));
                }
                _ => {
                    return Err(LogError::Corrupt {
                        offset: off,
                        reason: "log fragments out of order",
                    })
                }
            }
        }
    }
}
