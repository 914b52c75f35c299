//! Write batches: several updates applied atomically, and the WAL record format.
//!
//! # Format (also the payload of one WAL record)
//! ```text
//! +--------------+-------------+---------------------------------------------+
//! | seq: u64 LE  | count: u32 LE | records...                                |
//! +--------------+-------------+---------------------------------------------+
//! record := kind: u8 (1 = Put, 0 = Delete, 2 = Merge; see key::ValueKind)
//!           varint key_len, key, [varint value_len, value]   (no value for Delete)
//! ```
//! The i-th record gets sequence number `seq + i`.
//!
//! # Invariants
//! 1. `count` equals the number of records (checked by [`WriteBatch::iterate`]).
//! 2. A batch is applied entirely or not at all: it is one WAL record.

use crate::coding::{get_fixed32, get_fixed64, put_length_prefixed, Decoder};
use crate::key::{SequenceNumber, ValueKind, MAX_SEQUENCE};

const HEADER: usize = 12;

/// An atomic group of puts and deletes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteBatch {
    rep: Vec<u8>,
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch::new()
    }
}

/// Why a serialized batch was rejected.
#[derive(Debug, PartialEq, Eq)]
pub struct BadBatch(pub &'static str);

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        WriteBatch {
            rep: vec![0; HEADER],
        }
    }

    /// An empty batch with room for `bytes` of records (avoids regrowth).
    pub fn with_capacity(bytes: usize) -> Self {
        let mut rep = Vec::with_capacity(HEADER + bytes);
        rep.resize(HEADER, 0);
        WriteBatch { rep }
    }

    /// Adds `key = value`.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.record(ValueKind::Put, key, Some(value));
    }

    /// Adds a deletion of `key`.
    pub fn delete(&mut self, key: &[u8]) {
        self.record(ValueKind::Delete, key, None);
    }

    fn record(&mut self, kind: ValueKind, key: &[u8], value: Option<&[u8]>) {
        self.set_count(self.count() + 1);
        self.rep.push(kind as u8);
        put_length_prefixed(&mut self.rep, key);
        if let Some(v) = value {
            put_length_prefixed(&mut self.rep, v);
        }
    }

    /// Number of updates in the batch.
    pub fn count(&self) -> u32 {
        get_fixed32(&self.rep, 8).unwrap_or(0)
    }

    /// True iff the batch holds no updates.
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Removes every update.
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(HEADER, 0);
    }

    /// Size of the serialized batch in bytes.
    pub fn approximate_size(&self) -> usize {
        self.rep.len()
    }

    /// Appends every update of `other` to this batch.
    pub fn append(&mut self, other: &WriteBatch) {
        self.set_count(self.count() + other.count());
        self.rep
            .extend_from_slice(other.rep.get(HEADER..).unwrap_or_default());
    }

    fn set_count(&mut self, n: u32) {
        if let Some(c) = self.rep.get_mut(8..12) {
            c.copy_from_slice(&n.to_le_bytes());
        }
    }

    /// Sequence number of the first update (assigned at commit).
    pub fn sequence(&self) -> SequenceNumber {
        get_fixed64(&self.rep, 0).unwrap_or(0)
    }

    /// Assigns the sequence number of the first update.
    pub fn set_sequence(&mut self, seq: SequenceNumber) {
        if let Some(c) = self.rep.get_mut(0..8) {
            c.copy_from_slice(&seq.to_le_bytes());
        }
    }

    /// The serialized batch (the WAL record payload).
    pub fn data(&self) -> &[u8] {
        &self.rep
    }

    /// Rebuilds a batch from a WAL record, validating every record.
    ///
    /// # Errors
    /// [`BadBatch`] if the bytes are not a well-formed batch.
    pub fn from_data(data: Vec<u8>) -> Result<WriteBatch, BadBatch> {
        if data.len() < HEADER {
            return Err(BadBatch("batch shorter than header"));
        }
        let b = WriteBatch { rep: data };
        b.iterate(|_, _, _, _| {})?;
        Ok(b)
    }

    /// Calls `f(seq, kind, key, value)` for each update in order (`value` is empty for
    /// deletes).
    ///
    /// # Errors
    /// [`BadBatch`] if a record is malformed, the count is wrong, or a record's
    /// sequence number exceeds [`MAX_SEQUENCE`].
    pub fn iterate(
        &self,
        mut f: impl FnMut(SequenceNumber, ValueKind, &[u8], &[u8]),
    ) -> Result<(), BadBatch> {
        let mut d = Decoder::new(self.rep.get(HEADER..).unwrap_or_default());
        let mut seq = self.sequence();
        let mut n = 0u32;
        while !d.is_empty() {
            let kind = d
                .u8()
                .and_then(ValueKind::from_u8)
                .ok_or(BadBatch("bad record kind"))?;
            let key = d.length_prefixed().ok_or(BadBatch("truncated key"))?;
            let value = match kind {
                ValueKind::Delete => &[][..],
                ValueKind::Put | ValueKind::Merge => {
                    d.length_prefixed().ok_or(BadBatch("truncated value"))?
                }
            };
            if seq > MAX_SEQUENCE {
                // A corrupt header near u64::MAX would overflow `seq` and mint keys
                // whose trailer cannot hold the sequence number.
                return Err(BadBatch("sequence number out of range"));
            }
            f(seq, kind, key, value);
            seq += 1;
            n += 1;
        }
        if n != self.count() {
            return Err(BadBatch("record count mismatch"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Format version 1 bytes of a batch at sequence 0x0102030405 holding
    /// `put a=1`, `delete bc`, `put k=""`. Frozen: never edit; a format change adds a new
    /// fixture.
    const BATCH_FIXTURE_V1: &[u8] = &[
        0x05, 0x04, 0x03, 0x02, 0x01, 0x00, 0x00, 0x00, // sequence, LE u64
        0x03, 0x00, 0x00, 0x00, // count, LE u32
        0x01, 0x01, b'a', 0x01, b'1', // Put, key len, key, value len, value
        0x00, 0x02, b'b', b'c', // Delete, key len, key
        0x01, 0x01, b'k', 0x00, // Put, key len, key, empty value
    ];

    #[test]
    fn frozen_fixture_v1() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1");
        b.delete(b"bc");
        b.put(b"k", b"");
        b.set_sequence(0x01_0203_0405);
        assert_eq!(b.data(), BATCH_FIXTURE_V1, "batch encoding changed");
        assert_eq!(WriteBatch::from_data(BATCH_FIXTURE_V1.to_vec()), Ok(b));
    }

    #[test]
    fn round_trip_and_validation() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1");
        b.delete(b"b");
        b.put(b"c", b"");
        b.set_sequence(100);
        let again = WriteBatch::from_data(b.data().to_vec()).expect("valid");
        let mut seen = Vec::new();
        again
            .iterate(|s, k, key, v| seen.push((s, k, key.to_vec(), v.to_vec())))
            .expect("iterate");
        assert_eq!(
            seen,
            vec![
                (100, ValueKind::Put, b"a".to_vec(), b"1".to_vec()),
                (101, ValueKind::Delete, b"b".to_vec(), vec![]),
                (102, ValueKind::Put, b"c".to_vec(), vec![]),
            ]
        );
        let d = b.data();
        assert!(WriteBatch::from_data(d[..d.len() - 1].to_vec()).is_err());
        let mut wrong_count = d.to_vec();
        wrong_count[8] = 9;
        assert!(WriteBatch::from_data(wrong_count).is_err());
    }

    #[test]
    fn sequence_numbers_past_the_maximum_are_rejected() {
        // Found by the `batch` fuzz target: a header sequence near u64::MAX overflowed.
        for (seq, records) in [(u64::MAX, 2u32), (MAX_SEQUENCE, 2), (MAX_SEQUENCE + 1, 1)] {
            let mut b = WriteBatch::new();
            for _ in 0..records {
                b.delete(b"k");
            }
            b.set_sequence(seq);
            assert!(WriteBatch::from_data(b.data().to_vec()).is_err(), "{seq}");
        }
        let mut last = WriteBatch::new();
        last.put(b"k", b"v");
        last.set_sequence(MAX_SEQUENCE);
        assert!(WriteBatch::from_data(last.data().to_vec()).is_ok());
    }
}
