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
//! offset 0     "STRSTRS3"                      magic and format version
//!        8     u64 max_key                     keys are 0..max_key
//!        16    u64 runs                        stress runs started on this file
//!        24    u64 verifies                    verification passes completed
//!        32    u64 value_size                  longest value, bytes (see keyspace)
//!        40    u64 families                    column families (1..=MAX_FAMILIES)
//!        48    u64 acked[MAX_THREADS]          writes acknowledged, per thread slot
//!        HEADER_LEN (4096)
//!              slot[families][max_key], 8 bytes each (family f's key k at index
//!              f * max_key + k):
//!                u32 current                   0 = absent, else the value id
//!                u32 pending                   0 = nothing in flight; PENDING|id = a
//!                                              put of value id `id` (id 0 = a delete)
//! ```
//!
//! Format 2 (`STRSTRS2`, before column families) is still read and written in its own
//! layout: it is format 3 without the `families` field (one family; `acked` at offset
//! 40), so a crash loop started by an older binary can be verified and continued.
//! Format 1 is refused (see [`MAGIC`]).
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
//!    round-robin) writes its slots (one per family) during a run, so
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

/// Format 3: a slot per key of every column family (`families` in the header).
const MAGIC: &[u8; 8] = b"STRSTRS3";
/// Format 2: one family (the default), `acked` at offset 40. Read and written in its
/// own layout. Format 1 (before counter keys held 8-byte counters, `keyspace`) is
/// refused: its values of those keys would not identify.
const MAGIC_V2: &[u8; 8] = b"STRSTRS2";
/// Most column families a stress run keeps state for.
pub const MAX_FAMILIES: usize = 64;
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
const OFF_FAMILIES: u64 = 40;
/// Where `acked` starts in format 3, and in format 2 (which has no `families`).
const OFF_ACKED: u64 = 48;
const OFF_ACKED_V2: u64 = 40;
// The header holds every field.
const _: () = assert!(OFF_ACKED + 8 * MAX_THREADS as u64 <= HEADER_LEN);

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
    /// Keys per family (`max_key`).
    max_key: u64,
    /// Column families; `slots` holds `families * max_key` entries.
    families: usize,
    /// Where the `acked` counters start: [`OFF_ACKED`], or [`OFF_ACKED_V2`] in a
    /// format-2 file.
    acked_offset: u64,
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

    /// Creates (or truncates) the file at `path` for `max_key` keys in each of
    /// `families` column families, all absent, whose values are at most `value_size`
    /// bytes.
    ///
    /// # Errors
    /// [`CliError::Usage`] for `families` outside `1..=MAX_FAMILIES`; [`CliError::Io`]
    /// if the file cannot be written.
    pub fn create(
        path: &Path,
        max_key: u64,
        value_size: u64,
        families: usize,
    ) -> Result<ExpectedState> {
        if !(1..=MAX_FAMILIES).contains(&families) {
            return Err(CliError::Usage(format!(
                "invalid value for '--column_families': must be in 1..={MAX_FAMILIES}"
            )));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(io("create", path))?;
        let mut header = vec![0u8; HEADER_LEN as usize];
        let mut put = |off: u64, bytes: &[u8]| {
            let off = off as usize;
            if let Some(dst) = header.get_mut(off..off + bytes.len()) {
                dst.copy_from_slice(bytes);
            }
        };
        put(0, MAGIC);
        put(OFF_MAX_KEY, &max_key.to_le_bytes());
        put(OFF_VALUE_SIZE, &value_size.to_le_bytes());
        put(OFF_FAMILIES, &(families as u64).to_le_bytes());
        file.write_all_at(&header, 0).map_err(io("write", path))?;
        let slots = max_key * families as u64;
        file.set_len(HEADER_LEN + slots * SLOT_LEN)
            .map_err(io("set_len", path))?;
        file.sync_all().map_err(io("fsync", path))?;
        Ok(ExpectedState {
            path: path.to_path_buf(),
            file,
            max_key,
            families,
            acked_offset: OFF_ACKED,
            slots: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            acked: (0..MAX_THREADS).map(|_| AtomicU64::new(0)).collect(),
            value_size,
            runs: 0,
            verifies: 0,
        })
    }

    /// Opens an existing file (format 3, or format 2 as one family) and loads it.
    ///
    /// # Errors
    /// [`CliError::Io`] if it cannot be read; [`CliError::BadInput`] if it is not an
    /// expected-state file of format 2 or 3, or its size does not match its key and
    /// family counts.
    pub fn open(path: &Path) -> Result<ExpectedState> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io("open", path))?;
        let mut header = vec![0u8; HEADER_LEN as usize];
        let not_ours =
            || CliError::BadInput(format!("not an expected-state file: `{}`", path.display()));
        file.read_exact_at(&mut header, 0).map_err(|_| not_ours())?;
        let (families, acked_offset) = match header.get(..8) {
            Some(m) if m == &MAGIC[..] => (u64_at(&header, OFF_FAMILIES), OFF_ACKED),
            Some(m) if m == &MAGIC_V2[..] => (1, OFF_ACKED_V2),
            Some(m) if m.starts_with(b"STRSTRS") => {
                return Err(CliError::BadInput(format!(
                    "expected-state file `{}` has format `{}`, which this strata cannot \
                     read (it reads STRSTRS2 and STRSTRS3); start a fresh run",
                    path.display(),
                    String::from_utf8_lossy(m)
                )))
            }
            _ => return Err(not_ours()),
        };
        if !(1..=MAX_FAMILIES as u64).contains(&families) {
            return Err(CliError::BadInput(format!(
                "expected-state file `{}` has families={families}, not in 1..={MAX_FAMILIES}",
                path.display()
            )));
        }
        let max_key = u64_at(&header, OFF_MAX_KEY);
        let slots = max_key.checked_mul(families).ok_or_else(not_ours)?;
        let want = slots
            .checked_mul(SLOT_LEN)
            .and_then(|b| b.checked_add(HEADER_LEN))
            .ok_or_else(not_ours)?;
        let len = file.metadata().map_err(io("stat", path))?.len();
        if len != want {
            return Err(CliError::BadInput(format!(
                "expected-state file `{}` has {len} bytes, expected {want} for \
                 max_key={max_key} families={families}",
                path.display()
            )));
        }
        let mut body = vec![0u8; (slots * SLOT_LEN) as usize];
        file.read_exact_at(&mut body, HEADER_LEN)
            .map_err(io("read", path))?;
        let slots = body
            .chunks_exact(SLOT_LEN as usize)
            .map(|c| AtomicU64::new(u64_at(c, 0)))
            .collect();
        let acked = (0..MAX_THREADS as u64)
            .map(|t| AtomicU64::new(u64_at(&header, acked_offset + 8 * t)))
            .collect();
        Ok(ExpectedState {
            path: path.to_path_buf(),
            file,
            max_key,
            families: families as usize,
            acked_offset,
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

    /// Number of keys per family (keys are `0..max_key`).
    pub fn max_key(&self) -> u64 {
        self.max_key
    }

    /// Number of column families (families are `0..families`).
    pub fn families(&self) -> usize {
        self.families
    }

    /// Longest value, bytes (fixed when the file is created).
    pub fn value_size(&self) -> u64 {
        self.value_size
    }

    /// The index of family `f`'s key `key` in `slots`, if both are in range.
    fn index(&self, f: usize, key: u64) -> Option<u64> {
        (f < self.families && key < self.max_key).then(|| f as u64 * self.max_key + key)
    }

    /// The state of family `f`'s `key`. Requires: `f < families`, `key < max_key`
    /// (else an absent, settled slot).
    pub fn get(&self, f: usize, key: u64) -> Slot {
        self.index(f, key)
            .and_then(|i| self.slots.get(i as usize))
            .map(|s| Slot::decode(s.load(Ordering::Acquire)))
            .unwrap_or_default()
    }

    fn store(&self, f: usize, key: u64, slot: Slot) -> Result<()> {
        let Some(i) = self.index(f, key) else {
            return Err(CliError::Usage(format!(
                "expected state: family {f} key {key} is outside families={} max_key={}",
                self.families, self.max_key
            )));
        };
        let x = slot.encode();
        if let Some(s) = self.slots.get(i as usize) {
            s.store(x, Ordering::Release);
        }
        self.file
            .write_all_at(&x.to_le_bytes(), HEADER_LEN + i * SLOT_LEN)
            .map_err(io("pwrite", &self.path))
    }

    /// Records that a write of `value` (`None` = delete) to family `f`'s `key` is
    /// about to be issued. Call before the database write. Requires: the caller owns
    /// `key`.
    ///
    /// # Errors
    /// [`CliError::Io`] if the slot cannot be written.
    pub fn begin(&self, f: usize, key: u64, value: Option<u32>) -> Result<()> {
        let cur = self.get(f, key);
        self.store(
            f,
            key,
            Slot {
                current: cur.current,
                pending: Some(value),
            },
        )
    }

    /// Records that the pending write of family `f`'s `key` was acknowledged.
    ///
    /// # Errors
    /// [`CliError::Io`] if the slot cannot be written.
    pub fn commit(&self, f: usize, key: u64) -> Result<()> {
        let cur = self.get(f, key);
        let current = match cur.pending {
            Some(v) => v,
            None => cur.current,
        };
        self.store(
            f,
            key,
            Slot {
                current,
                pending: None,
            },
        )
    }

    /// Settles family `f`'s `key` on what the database was found to hold (`found`
    /// must be accepted by the slot).
    ///
    /// # Errors
    /// [`CliError::Io`] if the slot cannot be written.
    pub fn resolve(&self, f: usize, key: u64, found: Option<u32>) -> Result<()> {
        self.store(
            f,
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
            .write_all_at(&n.to_le_bytes(), self.acked_offset + 8 * thread as u64)
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
        let st = ExpectedState::create(&p, 10, 64, 3).expect("create");
        assert_eq!(st.get(0, 3), Slot::default());
        st.begin(0, 3, Some(7)).expect("begin");
        st.begin(0, 4, Some(9)).expect("begin");
        st.commit(0, 4).expect("commit");
        st.begin(0, 4, None).expect("begin delete");
        // The same key in another family is another slot.
        st.begin(2, 4, Some(5)).expect("begin");
        st.commit(2, 4).expect("commit");
        st.count_acked(1).expect("count");
        assert!(st.begin(3, 0, Some(1)).is_err(), "family out of range");
        drop(st);
        let st = ExpectedState::open(&p).expect("open");
        assert_eq!(st.max_key(), 10);
        assert_eq!(st.families(), 3);
        assert_eq!(st.value_size(), 64);
        let s3 = st.get(0, 3);
        assert_eq!(s3.current, None);
        assert_eq!(s3.pending, Some(Some(7)));
        assert!(s3.accepts(None) && s3.accepts(Some(7)) && !s3.accepts(Some(8)));
        let s4 = st.get(0, 4);
        assert_eq!(s4.current, Some(9));
        assert_eq!(s4.pending, Some(None));
        assert!(s4.accepts(None) && s4.accepts(Some(9)));
        assert_eq!(st.get(2, 4).current, Some(5));
        assert_eq!(st.get(1, 4), Slot::default());
        st.resolve(0, 4, None).expect("resolve");
        assert_eq!(st.get(0, 4), Slot::default());
        assert_eq!(st.total_acked(), 1);
    }

    /// A format-2 file (one family, `acked` at offset 40), as the stress tool wrote
    /// before column families: read as one family and updated in its own layout.
    #[test]
    fn format_2_files_are_read_and_written_as_one_family() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let p = tmp.path().join("v2.expected");
        let mut file = vec![0u8; HEADER_LEN as usize + 5 * 8];
        file[..8].copy_from_slice(b"STRSTRS2");
        file[8..16].copy_from_slice(&5u64.to_le_bytes());
        file[16..24].copy_from_slice(&2u64.to_le_bytes());
        file[32..40].copy_from_slice(&100u64.to_le_bytes());
        file[40 + 8 * 3..48 + 8 * 3].copy_from_slice(&11u64.to_le_bytes());
        let slot = HEADER_LEN as usize + 2 * 8;
        file[slot..slot + 8].copy_from_slice(
            &Slot {
                current: Some(42),
                pending: None,
            }
            .encode()
            .to_le_bytes(),
        );
        std::fs::write(&p, &file).expect("write");
        let mut st = ExpectedState::open(&p).expect("open v2");
        assert_eq!((st.max_key(), st.families(), st.value_size()), (5, 1, 100));
        assert_eq!(st.get(0, 2).current, Some(42));
        assert_eq!(st.total_acked(), 11);
        assert_eq!(st.runs_and_verifies(), (2, 0));
        st.count_acked(3).expect("count");
        st.count_run().expect("run");
        st.begin(0, 1, Some(6)).expect("begin");
        st.commit(0, 1).expect("commit");
        drop(st);
        let bytes = std::fs::read(&p).expect("read");
        assert_eq!(&bytes[..8], b"STRSTRS2", "the format is kept");
        assert_eq!(bytes.len(), file.len());
        assert_eq!(u64_at(&bytes, 40 + 8 * 3), 12, "acked at the v2 offset");
        let st = ExpectedState::open(&p).expect("reopen");
        assert_eq!(st.get(0, 1).current, Some(6));
        assert_eq!(st.get(0, 2).current, Some(42));
        assert_eq!(st.runs_and_verifies(), (3, 0));
    }

    #[test]
    fn unknown_formats_are_refused_by_name() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let p = tmp.path().join("v1.expected");
        let mut file = vec![0u8; HEADER_LEN as usize];
        file[..8].copy_from_slice(b"STRSTRS1");
        std::fs::write(&p, &file).expect("write");
        let err = ExpectedState::open(&p).expect_err("format 1");
        assert!(err.to_string().contains("STRSTRS1"), "{err}");
        assert!(ExpectedState::create(&p, 10, 64, 0).is_err());
        assert!(ExpectedState::create(&p, 10, 64, MAX_FAMILIES + 1).is_err());
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
