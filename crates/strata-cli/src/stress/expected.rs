//! The expected-state file: for every key of the stress key space, the latest
//! acknowledged value and the write in flight, kept beside the database so a verifier
//! can check the database after the stress process is killed.
//!
//! Role: `strata stress` creates it (or reopens it with `--use_existing_db`), records
//! each write before issuing it ([`ExpectedState::begin`]) and after it is acknowledged
//! ([`ExpectedState::commit`]); `strata stress --verify_only` reads it, checks every key
//! and resolves the writes that were in flight ([`ExpectedState::resolve`]). The idea is
//! RocksDB `db_stress`'s expected state.
//!
//! # Format (little-endian, fixed size)
//!
//! ```text
//! offset 0     "STRSTRS2"                      magic and format version
//!        8     u64 max_key                     keys are 0..max_key
//!        16    u64 runs                        stress runs started on this file
//!        24    u64 verifies                    verification passes completed
//!        32    u64 value_size                  longest value, bytes (see keyspace)
//!        40    u64 acked[MAX_THREADS]          writes acknowledged, per thread slot
//!        HEADER_LEN (4096)
//!              slot[max_key], 8 bytes each:
//!                u32 current                   0 = absent, else the value id
//!                u32 pending                   0 = nothing in flight; PENDING|id = a
//!                                              put of value id `id` (id 0 = a delete)
//! ```
//!
//! A slot is written with one 8-byte `pwrite` at an 8-byte-aligned offset, so it never
//! straddles a page and is never half-written by a killed process.
//!
//! # Durability (why plain `pwrite`, no `fsync`)
//!
//! The crash this file must survive is `kill -9` of the stress process, not a power
//! loss: a `pwrite` that returned has put its bytes in the kernel's page cache, which
//! outlives the process. Because the pending marker is written before the database
//! write is issued and the commit after it is acknowledged, after any kill every key is
//! either settled (`pending == 0`, the database must hold `current`) or in flight (the
//! database may hold `current` or the pending value). Surviving power loss would need an
//! `fsync` of this file before each database write and `--sync=true`; the crash loop does
//! not model power loss (the engine's FaultFs crash loop does).
//!
//! # Invariants
//!
//! 1. Only the thread that owns a key (`keyspace::owner`: blocks of 16 keys dealt
//!    round-robin) writes its slot during a run, so
//!    `current` is exact for every key without a pending write.
//! 2. Value ids are never 0 and fit in 31 bits; `PENDING` is the top bit.
//!
//! # Concurrency
//!
//! `ExpectedState` is `Sync`: the in-memory mirror is atomics and `pwrite` needs no
//! lock; invariant 1 keeps writers apart.

use crate::error::{CliError, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Format 2: counter keys hold 8-byte counters (`keyspace`); a format-1 file's
/// values of those keys would not identify, so it is refused.
const MAGIC: &[u8; 8] = b"STRSTRS2";
/// Bytes before the first slot.
pub const HEADER_LEN: u64 = 4096;
/// Thread slots in the header (`--threads` at most this).
pub const MAX_THREADS: usize = 256;
const SLOT_LEN: u64 = 8;
/// Top bit of `pending`: a write is in flight.
pub const PENDING: u32 = 1 << 31;
/// Largest value id.
pub const MAX_VALUE_ID: u32 = PENDING - 1;
const OFF_MAX_KEY: u64 = 8;
const OFF_RUNS: u64 = 16;
const OFF_VERIFIES: u64 = 24;
const OFF_VALUE_SIZE: u64 = 32;
const OFF_ACKED: u64 = 40;

/// The state of one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Slot {
    /// The acknowledged value id; `None` iff the key is absent.
    pub current: Option<u32>,
    /// The write in flight: `Some(None)` a delete, `Some(Some(id))` a put.
    pub pending: Option<Option<u32>>,
}

impl Slot {
    fn encode(self) -> u64 {
        let cur = self.current.unwrap_or(0);
        let pend = match self.pending {
            None => 0,
            Some(v) => PENDING | v.unwrap_or(0),
        };
        u64::from(cur) | (u64::from(pend) << 32)
    }

    fn decode(x: u64) -> Slot {
        let cur = (x & 0xFFFF_FFFF) as u32;
        let pend = (x >> 32) as u32;
        Slot {
            current: (cur != 0).then_some(cur),
            pending: (pend & PENDING != 0)
                .then_some((pend & MAX_VALUE_ID != 0).then_some(pend & MAX_VALUE_ID)),
        }
    }

    /// True iff the database may hold value id `found` (`None` = absent) for this key.
    pub fn accepts(self, found: Option<u32>) -> bool {
        found == self.current || self.pending == Some(found)
    }
}

/// The expected state of a stress database: a file plus an in-memory mirror.
#[derive(Debug)]
pub struct ExpectedState {
    path: PathBuf,
    file: File,
    slots: Vec<AtomicU64>,
    acked: Vec<AtomicU64>,
    value_size: u64,
    runs: u64,
    verifies: u64,
}

fn io<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> CliError + 'a {
    move |e| CliError::io(op, path, e)
}

fn u64_at(buf: &[u8], off: u64) -> u64 {
    let off = off as usize;
    buf.get(off..off + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .unwrap_or(0)
}

impl ExpectedState {
    /// The default path for database `db`: `<db>/../<db-name>.expected`.
    pub fn default_path(db: &Path) -> PathBuf {
        let name = db
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "db".to_string());
        db.with_file_name(format!("{name}.expected"))
    }

    /// Creates (or truncates) the file at `path` for `max_key` keys, all absent, whose
    /// values are at most `value_size` bytes.
    ///
    /// # Errors
    /// [`CliError::Io`] if the file cannot be written.
    pub fn create(path: &Path, max_key: u64, value_size: u64) -> Result<ExpectedState> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(io("create", path))?;
        let mut header = vec![0u8; HEADER_LEN as usize];
        header[..8].copy_from_slice(MAGIC);
        header[8..16].copy_from_slice(&max_key.to_le_bytes());
        header[32..40].copy_from_slice(&value_size.to_le_bytes());
        file.write_all_at(&header, 0).map_err(io("write", path))?;
        file.set_len(HEADER_LEN + max_key * SLOT_LEN)
            .map_err(io("set_len", path))?;
        file.sync_all().map_err(io("fsync", path))?;
        Ok(ExpectedState {
            path: path.to_path_buf(),
            file,
            slots: (0..max_key).map(|_| AtomicU64::new(0)).collect(),
            acked: (0..MAX_THREADS).map(|_| AtomicU64::new(0)).collect(),
            value_size,
            runs: 0,
            verifies: 0,
        })
    }

    /// Opens an existing file and loads it.
    ///
    /// # Errors
    /// [`CliError::Io`] if it cannot be read; [`CliError::BadInput`] if it is not an
    /// expected-state file or its size does not match its key count.
    pub fn open(path: &Path) -> Result<ExpectedState> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io("open", path))?;
        let mut header = vec![0u8; HEADER_LEN as usize];
        file.read_exact_at(&mut header, 0).map_err(|_| {
            CliError::BadInput(format!("not an expected-state file: `{}`", path.display()))
        })?;
        if header.get(..8) != Some(&MAGIC[..]) {
            return Err(CliError::BadInput(format!(
                "not an expected-state file: `{}`",
                path.display()
            )));
        }
        let max_key = u64_at(&header, OFF_MAX_KEY);
        let len = file.metadata().map_err(io("stat", path))?.len();
        if len != HEADER_LEN + max_key * SLOT_LEN {
            return Err(CliError::BadInput(format!(
                "expected-state file `{}` has {len} bytes, expected {} for max_key={max_key}",
                path.display(),
                HEADER_LEN + max_key * SLOT_LEN
            )));
        }
        let mut body = vec![0u8; (max_key * SLOT_LEN) as usize];
        file.read_exact_at(&mut body, HEADER_LEN)
            .map_err(io("read", path))?;
        let slots = body
            .chunks_exact(SLOT_LEN as usize)
            .map(|c| AtomicU64::new(u64_at(c, 0)))
            .collect();
        let acked = (0..MAX_THREADS as u64)
            .map(|t| AtomicU64::new(u64_at(&header, OFF_ACKED + 8 * t)))
            .collect();
        Ok(ExpectedState {
            path: path.to_path_buf(),
            file,
            slots,
            acked,
            value_size: u64_at(&header, OFF_VALUE_SIZE),
            runs: u64_at(&header, OFF_RUNS),
            verifies: u64_at(&header, OFF_VERIFIES),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of keys (keys are `0..max_key`).
    pub fn max_key(&self) -> u64 {
        self.slots.len() as u64
    }

    /// Longest value, bytes (fixed when the file is created).
    pub fn value_size(&self) -> u64 {
        self.value_size
    }

    /// The state of `key`. Requires: `key < max_key` (else an absent, settled slot).
    pub fn get(&self, key: u64) -> Slot {
        self.slots
            .get(key as usize)
            .map(|s| Slot::decode(s.load(Ordering::Acquire)))
            .unwrap_or_default()
    }

    fn store(&self, key: u64, slot: Slot) -> Result<()> {
        let x = slot.encode();
        if let Some(s) = self.slots.get(key as usize) {
            s.store(x, Ordering::Release);
        }
        self.file
            .write_all_at(&x.to_le_bytes(), HEADER_LEN + key * SLOT_LEN)
            .map_err(io("pwrite", &self.path))
    }

    /// Records that a write of `value` (`None` = delete) to `key` is about to be issued.
    /// Call before the database write. Requires: the caller owns `key`.
    ///
    /// # Errors
    /// [`CliError::Io`] if the slot cannot be written.
    pub fn begin(&self, key: u64, value: Option<u32>) -> Result<()> {
        let cur = self.get(key);
        self.store(
            key,
            Slot {
                current: cur.current,
                pending: Some(value),
            },
        )
    }

    /// Records that the pending write of `key` was acknowledged.
    ///
    /// # Errors
    /// [`CliError::Io`] if the slot cannot be written.
    pub fn commit(&self, key: u64) -> Result<()> {
        let cur = self.get(key);
        let current = match cur.pending {
            Some(v) => v,
            None => cur.current,
        };
        self.store(
            key,
            Slot {
                current,
                pending: None,
            },
        )
    }

    /// Settles `key` on what the database was found to hold (`found` must be accepted
    /// by the slot).
    ///
    /// # Errors
    /// [`CliError::Io`] if the slot cannot be written.
    pub fn resolve(&self, key: u64, found: Option<u32>) -> Result<()> {
        self.store(
            key,
            Slot {
                current: found,
                pending: None,
            },
        )
    }

    /// Counts one acknowledged write of thread slot `thread` (persisted at once).
    ///
    /// # Errors
    /// [`CliError::Io`] if the counter cannot be written.
    pub fn count_acked(&self, thread: usize) -> Result<()> {
        let Some(c) = self.acked.get(thread) else {
            return Ok(());
        };
        let n = c.fetch_add(1, Ordering::Relaxed) + 1;
        self.file
            .write_all_at(&n.to_le_bytes(), OFF_ACKED + 8 * thread as u64)
            .map_err(io("pwrite", &self.path))
    }

    /// Writes acknowledged over the file's life (all runs, all threads).
    pub fn total_acked(&self) -> u64 {
        self.acked.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// Stress runs started on this file, and verification passes completed.
    pub fn runs_and_verifies(&self) -> (u64, u64) {
        (self.runs, self.verifies)
    }

    /// Counts one stress run started.
    ///
    /// # Errors
    /// [`CliError::Io`].
    pub fn count_run(&mut self) -> Result<()> {
        self.runs += 1;
        self.file
            .write_all_at(&self.runs.to_le_bytes(), OFF_RUNS)
            .map_err(io("pwrite", &self.path))
    }

    /// Counts one verification pass completed and makes the file durable.
    ///
    /// # Errors
    /// [`CliError::Io`].
    pub fn count_verify(&mut self) -> Result<()> {
        self.verifies += 1;
        self.file
            .write_all_at(&self.verifies.to_le_bytes(), OFF_VERIFIES)
            .map_err(io("pwrite", &self.path))?;
        self.file.sync_all().map_err(io("fsync", &self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_round_trip_and_survive_reopen() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let p = tmp.path().join("x.expected");
        let st = ExpectedState::create(&p, 10, 64).expect("create");
        assert_eq!(st.get(3), Slot::default());
        st.begin(3, Some(7)).expect("begin");
        st.begin(4, Some(9)).expect("begin");
        st.commit(4).expect("commit");
        st.begin(4, None).expect("begin delete");
        st.count_acked(1).expect("count");
        drop(st);
        let st = ExpectedState::open(&p).expect("open");
        assert_eq!(st.max_key(), 10);
        assert_eq!(st.value_size(), 64);
        let s3 = st.get(3);
        assert_eq!(s3.current, None);
        assert_eq!(s3.pending, Some(Some(7)));
        assert!(s3.accepts(None) && s3.accepts(Some(7)) && !s3.accepts(Some(8)));
        let s4 = st.get(4);
        assert_eq!(s4.current, Some(9));
        assert_eq!(s4.pending, Some(None));
        assert!(s4.accepts(None) && s4.accepts(Some(9)));
        st.resolve(4, None).expect("resolve");
        assert_eq!(st.get(4), Slot::default());
        assert_eq!(st.total_acked(), 1);
    }

    #[test]
    fn rejects_other_files() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let p = tmp.path().join("x");
        std::fs::write(&p, b"hello").expect("write");
        assert!(matches!(
            ExpectedState::open(&p),
            Err(CliError::BadInput(_))
        ));
        assert_eq!(
            ExpectedState::default_path(Path::new("/a/b/db")),
            PathBuf::from("/a/b/db.expected")
        );
    }
}
