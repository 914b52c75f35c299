//! Secondary instances ([`crate::Db::open_secondary`], [`crate::Db::try_catch_up`],
//! docs/ARCHITECTURE.md §7.6.1): a read-only follower of a database another handle
//! writes, RocksDB's secondary instance.
//!
//! A secondary opens like a read-only handle (`read_only`), then at every catch-up
//! reads what the writer appended since: the MANIFEST's new whole records (or the
//! whole of a new MANIFEST after a roll-over, found through `CURRENT`), and the WALs'
//! new whole records. It writes only in its own directory, `secondary_dir`: a `LOCK`
//! (one secondary per directory) and one hard link per table its versions name.
//!
//! # Invariants
//! 1. **A table it may read stays readable.** Before a version naming a table is
//!    installed, the table is linked into `secondary_dir` under its number, and the
//!    table cache reads it there; the link goes when the table's last `FileRef` drops
//!    (`version::file_ref`: no version, iterator or read names it), at the next
//!    catch-up or close ([`release`]). A link made after the writer deleted the table
//!    fails, and the catch-up starts again from the newer MANIFEST (which no longer
//!    names it) or fails with that error: never a version with a table missing. Where
//!    linking is impossible (another file system: `EXDEV`; no links), the secondary
//!    pins tables by open descriptors as a read-only handle does ([`Pin::Descriptors`],
//!    `read_only::pin_tables`) and says so (`strata.secondary-pinning`).
//! 2. **Only whole records.** The writer may be mid-append on the MANIFEST or a WAL:
//!    an incomplete last record is not written yet and is read whole next time; a
//!    whole record that fails its checksum is `Corruption` (`LogReader::read_written`).
//! 3. **A prefix of the writer's writes, never a hole.** WAL records are applied in
//!    WAL order, and no record of a WAL is applied before every older WAL is read to
//!    its end as it is once a newer one holds a record (the writer finishes a WAL
//!    before it writes the next). A record of a family the MANIFEST read does not know
//!    yet (created since) ends the pass before it.
//! 4. **The sequence and the view change together.** A catch-up installs the new
//!    versions, the memtables and the read sequence under the write side of `gate`,
//!    and a read takes its sequence and view under the read side: a version holding
//!    a compaction's output may have lost entries older than its newest ones, so it
//!    is never read at a sequence below the newest entry of its tables (`floor`;
//!    snapshots below it are refused).

use super::family::{Family, FamilyState};
use super::open::family_options;
use super::replay::{self, Route};
use super::state::MemWithLog;
use super::{read_only, DbInner};
use crate::batch::WriteBatchInternal;
use crate::compaction::CompactionPolicy;
use crate::env::{FileLock, FileSystem};
use crate::error::{Error, Result};
use crate::filename::{self, Dirs, FileType};
use crate::key::SequenceNumber;
use crate::memtable::MemTable;
use crate::options::{CfOptions, Options};
use crate::options_file;
use crate::version::file_ref::{FileRef, Obsolete};
use crate::version::manifest::{self, RecoveredManifest, CURRENT};
use crate::version::{FileMetaData, Version};
use crate::wal::LogReader;
use crate::WriteBatch;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What one [`crate::Db::try_catch_up`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CatchUp {
    /// The sequence number the secondary reads at afterwards (as
    /// [`crate::Db::latest_sequence`]): its answers are the writer's at this sequence.
    pub sequence: SequenceNumber,
    /// True iff a new version was installed (MANIFEST edits, or a new MANIFEST).
    pub version_changed: bool,
    /// Tables linked (or pinned) for the new version.
    pub tables_added: u64,
    /// WAL records read.
    pub records: u64,
}

/// How a secondary keeps the tables it reads from being deleted under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pin {
    /// A hard link per table in `secondary_dir`, read through.
    Links,
    /// Open descriptors, as a read-only handle (linking failed: the reason).
    Descriptors(String),
}

/// A secondary's directory, locked, with the way it pins tables: made once per
/// `open_secondary`, shared by its tries.
#[derive(Clone)]
pub(crate) struct Prepared {
    dir: PathBuf,
    pin: Pin,
    _lock: Arc<dyn FileLock>,
}

impl Prepared {
    /// The directory the table cache reads each data path's tables from.
    pub fn table_dirs(&self, dirs: &Dirs) -> Vec<PathBuf> {
        match self.pin {
            Pin::Links => vec![self.dir.clone(); dirs.tables.len()],
            Pin::Descriptors(_) => dirs.tables.clone(),
        }
    }
}

/// The file a secondary links and removes at open to learn whether it can link.
const LINK_PROBE: &str = "LINK_PROBE.dbtmp";

/// Makes `dir` a secondary's directory for the database in `db`: creates it, takes its
/// `LOCK`, removes the links a previous secondary left, and learns whether tables can
/// be linked into it (a link of `db`'s `CURRENT`).
///
/// # Errors
/// `InvalidArgument` if `dir` is `db` or holds a database, or another secondary holds
/// it; I/O errors.
pub(super) fn prepare(fs: &dyn FileSystem, db: &Path, dir: &Path) -> Result<Prepared> {
    if dir == db || fs.exists(&dir.join(CURRENT)) {
        return Err(Error::InvalidArgument(format!(
            "secondary_dir must be a directory of the secondary's own, not a database: \
             secondary_dir=`{}`, database=`{}`",
            dir.display(),
            db.display()
        )));
    }
    if !fs.exists(&db.join(CURRENT)) {
        return Err(Error::InvalidArgument(format!(
            "database does not exist: path=`{}` (a secondary never creates one)",
            db.display()
        )));
    }
    fs.create_dir_all(dir)?;
    let lock = fs.lock(&dir.join("LOCK")).map_err(|e| match e {
        Error::Locked(_) => Error::InvalidArgument(format!(
            "secondary_dir is in use by another secondary instance (its LOCK is held); \
             give each secondary a directory of its own: secondary_dir=`{}`",
            dir.display()
        )),
        e => e,
    })?;
    // Links of an earlier secondary that did not close: nothing of this one reads them.
    for name in fs.list(dir)? {
        if matches!(
            filename::parse(&name),
            Some(FileType::Table(_) | FileType::Temp)
        ) {
            fs.remove(&dir.join(name))?;
        }
    }
    let probe = dir.join(LINK_PROBE);
    let pin = match fs.link(&db.join(CURRENT), &probe) {
        Ok(()) => {
            fs.remove(&probe)?;
            Pin::Links
        }
        Err(e) => Pin::Descriptors(e.to_string()),
    };
    Ok(Prepared {
        dir: dir.to_path_buf(),
        pin,
        _lock: Arc::from(lock),
    })
}

/// The error every write, flush, compaction and family change of a secondary returns.
pub(super) fn refused(dir: &Path) -> Error {
    Error::InvalidArgument(format!(
        "the database was opened as a secondary instance (Db::open_secondary): writes, \
         flushes, compactions and column family changes are refused: path=`{}`",
        dir.display()
    ))
}

/// What a secondary follows the writer with (`DbInner::secondary`).
pub(crate) struct Secondary {
    prepared: Prepared,
    /// The families' options the open listed (others: the `OPTIONS` file's).
    listed: Vec<(String, CfOptions)>,
    /// Read side: a read taking its sequence and view; write side: a catch-up
    /// installing both (invariant 4).
    gate: RwLock<()>,
    /// The newest entry of any table of an installed version: reads below it are
    /// refused (invariant 4).
    floor: AtomicU64,
    /// Where the reading stands; held for a whole catch-up (one at a time).
    tail: Mutex<Tail>,
}

/// How far a secondary has read.
struct Tail {
    /// The MANIFEST read, and where its whole records end.
    manifest: (u64, u64),
    /// The largest family id the MANIFEST ever gave (records of a smaller id that is
    /// not live are of a dropped family).
    max_column_family: u32,
    /// Each WAL still needed: where its whole records end, and per family the
    /// memtable of its records.
    wals: BTreeMap<u64, WalTail>,
    /// The largest sequence number read from a WAL.
    max_sequence: SequenceNumber,
    /// References of tables linked (or pinned) by tries that failed, by number: the
    /// next try reuses them (one reference per table, `version::file_ref` invariant
    /// 1; a dropped one would queue its table and so remove the link a newer one
    /// needs). Emptied when a try installs: what it did not install drops then.
    pending: BTreeMap<u64, Arc<FileRef>>,
}

#[derive(Default)]
struct WalTail {
    offset: u64,
    mems: BTreeMap<u32, Arc<MemTable>>,
}

impl Secondary {
    /// The follower state of a secondary opened from `prepared` with the `listed`
    /// families' options, having read `manifest` (number, end of whole records).
    pub fn new(
        prepared: &Prepared,
        listed: &[(&str, CfOptions)],
        manifest: (u64, u64),
        max_column_family: u32,
    ) -> Secondary {
        Secondary {
            prepared: prepared.clone(),
            listed: listed
                .iter()
                .map(|(n, o)| ((*n).to_owned(), o.clone()))
                .collect(),
            gate: RwLock::new(()),
            floor: AtomicU64::new(0),
            tail: Mutex::new(Tail {
                manifest,
                max_column_family,
                wals: BTreeMap::new(),
                max_sequence: 0,
                pending: BTreeMap::new(),
            }),
        }
    }

    /// Runs `view` (which loads the read sequence, then the read view) so that no
    /// catch-up installs between the two (invariant 4).
    ///
    /// # Errors
    /// `InvalidArgument` for a snapshot older than the newest entry of the installed
    /// tables: the writer's compactions may have dropped what it would read.
    pub fn read_view<T>(
        &self,
        snapshot: Option<SequenceNumber>,
        view: impl FnOnce() -> T,
    ) -> Result<T> {
        let _gate = self.gate.read();
        let floor = self.floor.load(Ordering::Acquire);
        match snapshot {
            Some(s) if s < floor => Err(Error::InvalidArgument(format!(
                "snapshot at sequence {s} is older than this secondary's tables (newest \
                 entry {floor}): the writer's compactions may have dropped what it reads; \
                 take snapshots after the last try_catch_up"
            ))),
            _ => Ok(view()),
        }
    }

    /// How tables are pinned: `links`, or `descriptors: <why linking failed>`.
    pub fn pinning(&self) -> String {
        match &self.prepared.pin {
            Pin::Links => "links".to_owned(),
            Pin::Descriptors(why) => format!("descriptors: {why}"),
        }
    }
}

fn secondary(inner: &DbInner) -> Result<&Secondary> {
    inner.secondary.as_ref().ok_or_else(|| {
        Error::InvalidArgument(format!(
            "try_catch_up needs a secondary instance (Db::open_secondary): path=`{}`",
            inner.dir.display()
        ))
    })
}

/// The end of a secondary's open: pins the recovered versions' tables, then reads
/// the WALs as a catch-up does and publishes the result.
///
/// # Errors
/// A table gone (the writer moved on: the open is tried again), a WAL gone, damaged
/// records (naming file and offset); I/O errors.
pub(super) fn start(inner: &DbInner) -> Result<()> {
    let sec = secondary(inner)?;
    let mut tail = sec.tail.lock();
    match sec.prepared.pin {
        Pin::Links => {
            for f in inner.versions.families() {
                for meta in f.current().physical_tables() {
                    link(inner, sec, meta)?;
                }
            }
        }
        Pin::Descriptors(_) => read_only::pin_tables(inner)?,
    }
    let families = inner.versions.families();
    let floor = families
        .iter()
        .map(|f| newest_entry(&f.current()))
        .max()
        .unwrap_or(0);
    let targets = families.iter().map(|f| (f.id(), f.log_number())).collect();
    let max_cf = tail.max_column_family;
    read_wals(inner, &mut tail, &targets, max_cf)?;
    commit(inner, sec, &mut tail, None, floor)?;
    Ok(())
}

/// [`crate::Db::try_catch_up`]: reads what the writer appended since the last catch-up
/// (tried again while the writer moves under it, as read-only opens are), then
/// removes the links no version names any more.
///
/// # Errors
/// `InvalidArgument` for a handle that is not a secondary; otherwise as `start`.
pub(super) fn catch_up(inner: &DbInner) -> Result<CatchUp> {
    let sec = secondary(inner)?;
    let mut tail = sec.tail.lock();
    let result = read_only::until_stable(inner.fs.as_ref(), &inner.dir, || {
        attempt(inner, sec, &mut tail)
    });
    drop(tail);
    release(inner);
    result
}

/// A family new to the secondary, configured before anything is installed.
type Configured = BTreeMap<u32, (Options, Arc<dyn CompactionPolicy>)>;

/// One try of [`catch_up`].
fn attempt(inner: &DbInner, sec: &Secondary, tail: &mut Tail) -> Result<CatchUp> {
    let (fs, dir) = (inner.fs.as_ref(), inner.dir.as_path());
    let number = manifest::current_number(fs, dir)?.ok_or_else(|| {
        Error::InvalidArgument(format!("database is gone: path=`{}`", dir.display()))
    })?;
    let stored = options_file::load(fs, dir)?;
    let options_of = |name: &str| family_options(&inner.opts, stored.as_ref(), &sec.listed, name);
    let levels = |name: &str| {
        let live = inner.versions.families();
        match live.iter().find(|f| f.name() == name) {
            Some(f) => f.current().num_levels(),
            None => options_of(name).num_levels,
        }
    };
    let followed = if number == tail.manifest.0 {
        let seed = || {
            inner
                .versions
                .families()
                .iter()
                .map(|f| {
                    let version = Version::clone(&f.current());
                    (f.id(), f.name().to_owned(), version, f.log_number())
                })
                .collect()
        };
        manifest::follow(
            fs,
            dir,
            tail.manifest,
            seed,
            tail.max_column_family,
            &levels,
        )?
    } else {
        Some(manifest::replay_file(fs, dir, number, &levels)?)
    };
    let mut out = CatchUp::default();
    let (targets, max_cf, new, floor) = match &followed {
        Some(m) => {
            let live = inner.versions.families();
            let mut configured = Configured::new();
            for f in (m.families.iter()).filter(|f| !live.iter().any(|l| l.id() == f.id)) {
                let opts = options_of(&f.name);
                let c = super::open::configure_family(
                    inner.kinds.as_ref(),
                    &f.name,
                    &f.version,
                    opts,
                    &inner.policy,
                )?;
                configured.insert(f.id, c);
            }
            let refs = pin_new(inner, sec, &mut tail.pending, m)?;
            out.tables_added = refs.len() as u64;
            let floor = m.families.iter().map(|f| newest_entry(&f.version)).max();
            let targets = m.families.iter().map(|f| (f.id, f.log_number)).collect();
            (
                targets,
                m.max_column_family,
                Some((refs, configured)),
                floor.unwrap_or(0),
            )
        }
        None => {
            let targets = (inner.versions.families().iter())
                .map(|f| (f.id(), f.log_number()))
                .collect();
            (targets, tail.max_column_family, None, 0)
        }
    };
    out.records = read_wals(inner, tail, &targets, max_cf)?;
    let installed = match (followed, new) {
        (Some(m), Some((refs, configured))) => Some(Followed {
            manifest: m,
            refs,
            configured,
        }),
        _ => None,
    };
    out.version_changed = installed.is_some();
    out.sequence = commit(inner, sec, tail, installed, floor)?;
    Ok(out)
}

/// A MANIFEST state read by a catch-up, ready to install.
struct Followed {
    manifest: RecoveredManifest,
    /// References of its tables new to the secondary (linked or pinned).
    refs: Vec<Arc<FileRef>>,
    /// Its families new to the secondary, configured.
    configured: Configured,
}

/// The newest entry of `version`'s tables (0 for none).
fn newest_entry(version: &Version) -> SequenceNumber {
    (version.physical_tables())
        .map(|f| f.largest_seqno)
        .max()
        .unwrap_or(0)
}

/// Links (or pins) every table `m` names that no live version of the secondary
/// names, and returns their references (new ones, or those of an earlier try, kept in
/// `pending`).
///
/// # Errors
/// A table the writer deleted since (`Io` naming it: the catch-up starts again from
/// the newer MANIFEST); I/O errors.
fn pin_new(
    inner: &DbInner,
    sec: &Secondary,
    pending: &mut BTreeMap<u64, Arc<FileRef>>,
    m: &RecoveredManifest,
) -> Result<Vec<Arc<FileRef>>> {
    let known: HashSet<u64> = (inner.versions.families().iter())
        .flat_map(|f| {
            let v = f.current();
            v.physical_tables().map(|t| t.number).collect::<Vec<_>>()
        })
        .collect();
    let mut seen = HashSet::new();
    let mut refs = Vec::new();
    for f in &m.families {
        for meta in f.version.physical_tables() {
            if known.contains(&meta.number) || !seen.insert(meta.number) {
                continue;
            }
            if let Some(file) = pending.get(&meta.number) {
                refs.push(Arc::clone(file));
                continue;
            }
            // The reference only once the table is pinned: a reference dropped queues
            // its table, whose link would then be removed.
            let file = match sec.prepared.pin {
                Pin::Links => {
                    link(inner, sec, meta)?;
                    FileRef::new(meta.number, meta.path_id, inner.versions.obsolete())
                }
                Pin::Descriptors(_) => {
                    let file = FileRef::new(meta.number, meta.path_id, inner.versions.obsolete());
                    inner.table_cache.get_pinned(meta, Some(&file))?;
                    file
                }
            };
            pending.insert(meta.number, Arc::clone(&file));
            refs.push(file);
        }
    }
    Ok(refs)
}

/// Hard-links table `meta` from the writer's data path into the secondary's
/// directory. A link already there was made by an earlier try (numbers are never
/// reused) and is kept.
///
/// # Errors
/// The link's error (the table is gone: `Io` naming it).
fn link(inner: &DbInner, sec: &Secondary, meta: &FileMetaData) -> Result<()> {
    let to = filename::table_file(&sec.prepared.dir, meta.number);
    let from = filename::table_file(inner.versions.dir(meta.path_id)?, meta.number);
    match inner.fs.link(&from, &to) {
        Ok(()) => Ok(()),
        Err(_) if inner.fs.exists(&to) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Reads the WALs `targets` (family id → log number) need, from where the last read
/// stopped, into the per-WAL memtables (invariant 3). Returns the records read.
///
/// # Errors
/// The oldest needed WAL gone (the writer flushed and released it since the MANIFEST
/// was read: tried again); damaged records (naming WAL and offset); I/O errors.
fn read_wals(
    inner: &DbInner,
    tail: &mut Tail,
    targets: &BTreeMap<u32, u64>,
    max_cf: u32,
) -> Result<u64> {
    let (fs, dir) = (inner.fs.as_ref(), inner.dir.as_path());
    let Some(&oldest) = targets.values().min() else {
        return Ok(0);
    };
    let mut logs: Vec<u64> = (fs.list(dir)?.iter())
        .filter_map(|n| match filename::parse(n) {
            Some(FileType::Wal(n)) if n >= oldest => Some(n),
            _ => None,
        })
        .collect();
    logs.sort_unstable();
    if logs.first() != Some(&oldest) {
        return Err(replay::wal_gone(dir, oldest));
    }
    tail.wals.retain(|&n, _| n >= oldest);
    let mut records = 0;
    // WALs read in this pass: final once a newer one holds a record.
    let mut earlier: Vec<u64> = Vec::new();
    for &wal in &logs {
        let offset = tail.wals.get(&wal).map_or(0, |t| t.offset);
        let batches = read_wal(fs, dir, wal, offset)?;
        if !batches.is_empty() {
            for e in std::mem::take(&mut earlier) {
                let offset = tail.wals.get(&e).map_or(0, |t| t.offset);
                let rest = read_wal(fs, dir, e, offset)?;
                match apply(inner, tail, e, rest, targets, max_cf) {
                    Some(n) => records += n,
                    None => return Ok(records),
                }
            }
            match apply(inner, tail, wal, batches, targets, max_cf) {
                Some(n) => records += n,
                None => return Ok(records),
            }
        }
        earlier.push(wal);
    }
    Ok(records)
}

/// The whole records of WAL `wal` from `offset` on, each with where it ends.
///
/// # Errors
/// `Corruption` naming the WAL and offset for a damaged record or batch; I/O errors
/// (the WAL is gone).
fn read_wal(
    fs: &dyn FileSystem,
    dir: &Path,
    wal: u64,
    offset: u64,
) -> Result<Vec<(WriteBatch, u64)>> {
    let path = filename::wal_file(dir, wal);
    let mut reader = LogReader::resume(fs.open_sequential(&path)?, offset)?;
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(at) = reader.read_written(&mut buf, &path)? {
        let batch = WriteBatch::from_data(std::mem::take(&mut buf))
            .map_err(|e| Error::corruption(&path, at, e.0))?;
        out.push((batch, reader.position()));
    }
    Ok(out)
}

/// Adds `batches` (read from WAL `wal`, each with where it ends) to the memtables of
/// the families that need them. Returns how many were added, or `None` if a batch
/// names a family the MANIFEST read does not know (created since): it and those
/// after it are left for the next catch-up.
fn apply(
    inner: &DbInner,
    tail: &mut Tail,
    wal: u64,
    batches: Vec<(WriteBatch, u64)>,
    targets: &BTreeMap<u32, u64>,
    max_cf: u32,
) -> Option<u64> {
    let mut n = 0;
    for (batch, end) in batches {
        let t = tail.wals.entry(wal).or_default();
        let inserted = replay::insert_batch(&batch, |family| match targets.get(&family) {
            Some(&log) if wal >= log => {
                let mem = t.mems.entry(family).or_insert_with(|| inner.new_memtable());
                Route::Into(Arc::clone(mem))
            }
            Some(_) => Route::Skip,
            None if family <= max_cf => Route::Skip,
            None => Route::Unknown,
        });
        let Ok(seq) = inserted else {
            return None;
        };
        t.offset = end;
        tail.max_sequence = tail.max_sequence.max(seq);
        n += 1;
    }
    Some(n)
}

/// Installs what a try read, under the gate (invariant 4): the followed MANIFEST state
/// if any (versions, families created and dropped), every family's memtables of the
/// WALs it still needs, and the read sequence. Returns the sequence.
///
/// # Errors
/// `Internal` if the followed versions name a table without a reference (nothing is
/// installed then).
fn commit(
    inner: &DbInner,
    sec: &Secondary,
    tail: &mut Tail,
    followed: Option<Followed>,
    floor: SequenceNumber,
) -> Result<SequenceNumber> {
    let _gate = sec.gate.write();
    if let Some(f) = followed {
        let manifest = (f.manifest.manifest_number, f.manifest.resume_at);
        let max_cf = f.manifest.max_column_family;
        let (created, dropped) = inner.versions.follow(f.manifest, &f.refs)?;
        tail.pending.clear();
        tail.manifest = manifest;
        tail.max_column_family = max_cf;
        let mut configured = f.configured;
        let mut st = inner.state.lock();
        for d in &dropped {
            st.families.remove(&d.id());
        }
        for c in created {
            let Some(opts) = configured.remove(&c.id()) else {
                return Err(Error::Internal(format!(
                    "column family `{}` not configured",
                    c.name()
                )));
            };
            let family = Arc::new(Family::new(
                c,
                opts,
                inner.new_memtable(),
                None,
                &inner.metrics_label,
            ));
            let state = FamilyState::new(Arc::clone(&family), 0, 0);
            st.families.insert(family.id(), state);
        }
        super::families_changed(inner, &mut st);
    }
    let mut st = inner.state.lock();
    // A family's memtable of a WAL below its log number is in its tables now, and a
    // dropped family's are nobody's: no view keeps them after this.
    for (&wal, t) in tail.wals.iter_mut() {
        t.mems.retain(|id, _| {
            st.families
                .get(id)
                .is_some_and(|f| wal >= f.family.versions.log_number())
        });
    }
    for state in st.families.values_mut() {
        let (id, log) = (state.family.id(), state.family.versions.log_number());
        state.imm = (tail.wals.range(log..))
            .filter_map(|(&wal, t)| {
                t.mems.get(&id).map(|mem| MemWithLog {
                    mem: Arc::clone(mem),
                    log_number: wal,
                })
            })
            .collect();
        state.install_super_version(&state.family.versions.current());
    }
    let floor = sec.floor.load(Ordering::Acquire).max(floor);
    sec.floor.store(floor, Ordering::Release);
    let sequence = (inner.versions.last_sequence())
        .max(tail.max_sequence)
        .max(floor);
    inner.versions.set_last_sequence(sequence);
    Ok(sequence)
}

/// Removes the links of tables nothing of the secondary names any more (their last
/// `FileRef` dropped) and forgets their open tables. Nothing else is ever deleted:
/// WALs and MANIFESTs are never queued by a secondary.
pub(super) fn release(inner: &DbInner) {
    let Some(sec) = &inner.secondary else {
        return;
    };
    let queue = inner.versions.obsolete();
    let _turn = queue.deleting();
    for file in queue.take() {
        if let Obsolete::Table { number, .. } = file {
            inner.table_cache.evict(number);
            if sec.prepared.pin == Pin::Links {
                let _ = inner
                    .fs
                    .remove(&filename::table_file(&sec.prepared.dir, number));
            }
        }
    }
}
