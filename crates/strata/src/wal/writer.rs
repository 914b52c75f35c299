//! Appends records to a log file. See the module docs of `wal` for the format.

use super::{fragment_crc, FragmentType, BLOCK_SIZE, HEADER_SIZE};
use crate::env::WritableFile;
use crate::error::Result;

/// A fragment's payload never exceeds a block minus its header, so its length always
/// fits the header's u16 field.
const MAX_FRAGMENT_LEN: usize = BLOCK_SIZE - HEADER_SIZE;
const _: () = assert!(MAX_FRAGMENT_LEN <= u16::MAX as usize);

/// Scratch capacity kept between records; a larger buffer (left by one huge record) is
/// released rather than pinned for the life of the log.
const KEEP_SCRATCH: usize = 2 << 20;

/// Appends records to one log file.
///
/// Concurrency: single owner; the database serializes log writes through group commit.
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    /// Offset within the current block.
    block_offset: usize,
    /// Scratch buffer reused for one record's fragments.
    buf: Vec<u8>,
}

impl LogWriter {
    /// Starts writing at the beginning of an empty file.
    pub fn new(file: Box<dyn WritableFile>) -> Self {
        LogWriter {
            file,
            block_offset: 0,
            buf: Vec::new(),
        }
    }

    /// Appends one record and hands it to the OS (not durable until [`LogWriter::sync`]):
    /// [`LogWriter::add_records`] with one record.
    ///
    /// # Errors
    /// As [`LogWriter::add_records`].
    pub fn add_record(&mut self, data: &[u8]) -> Result<()> {
        self.add_records(std::iter::once(data))
    }

    /// Appends `records`, in order, and hands them to the OS (not durable until
    /// [`LogWriter::sync`]): all of them, or none. An append that fails part-way (a
    /// full disk takes the bytes that fit, then `ENOSPC`) is cut back off, so the log
    /// ends where it ended before the call and may be appended to again.
    ///
    /// # Errors
    /// The append's error, with the log unchanged; or, if the cut itself failed, the
    /// cut's error (`IoOp::Truncate`, never retryable): the log may then end in a
    /// partial record, and the caller must stop using it (the database poisons itself).
    pub fn add_records<'a>(&mut self, records: impl IntoIterator<Item = &'a [u8]>) -> Result<()> {
        let start = (self.file.len(), self.block_offset);
        self.buf.clear();
        for data in records {
            self.encode(data);
        }
        let appended = self.file.append(&self.buf).and_then(|()| self.file.flush());
        if self.buf.capacity() > KEEP_SCRATCH {
            self.buf = Vec::new();
        }
        if let Err(e) = appended {
            self.file.truncate(start.0)?;
            self.block_offset = start.1;
            return Err(e);
        }
        Ok(())
    }

    /// Encodes one record's fragments into `buf`, advancing `block_offset`.
    fn encode(&mut self, mut data: &[u8]) {
        let mut first = true;
        loop {
            let left = BLOCK_SIZE - self.block_offset;
            if left < HEADER_SIZE {
                self.buf.extend(std::iter::repeat_n(0u8, left));
                self.block_offset = 0;
            }
            let avail = BLOCK_SIZE - self.block_offset - HEADER_SIZE;
            let n = data.len().min(avail);
            debug_assert!(n <= MAX_FRAGMENT_LEN);
            // `n <= MAX_FRAGMENT_LEN <= u16::MAX` (asserted at compile time above).
            let len = u16::try_from(n).unwrap_or(u16::MAX);
            let last = n == data.len();
            let kind = match (first, last) {
                (true, true) => FragmentType::Full,
                (true, false) => FragmentType::First,
                (false, true) => FragmentType::Last,
                (false, false) => FragmentType::Middle,
            };
            let (frag, rest) = data.split_at(n);
            self.buf
                .extend_from_slice(&fragment_crc(kind as u8, frag).to_le_bytes());
            self.buf.extend_from_slice(&len.to_le_bytes());
            self.buf.push(kind as u8);
            self.buf.extend_from_slice(frag);
            self.block_offset += HEADER_SIZE + n;
            data = rest;
            first = false;
            if last {
                return;
            }
        }
    }

    /// Makes every record added so far durable.
    pub fn sync(&mut self) -> Result<()> {
        self.file.sync()
    }

    /// Bytes written to the file so far.
    pub fn size(&self) -> u64 {
        self.file.len()
    }
}
