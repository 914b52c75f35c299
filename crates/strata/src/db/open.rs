//! Opening a database, step by step.
//!
//! 1. [`lock_dir`]: refuse a missing database before creating anything (unless
//!    `create_if_missing`), then create the directory and take the `LOCK` file. Wrap
//!    the file system in `env::CountingFs` (per-data-path statistics).
//! 2. [`recover_versions`]: `VersionSet::recover` replays the MANIFEST named by
//!    `CURRENT` and adopts the recovered version (one file reference per table), or
//!    `VersionSet::create` starts an empty database (creating its data paths).
//! 3. Still in [`recover_versions`]: check the options against the tree and the
//!    previous `OPTIONS` file ([`options_file::check_compatible`]) before anything is
//!    written, that every data path exists, and that every table the MANIFEST names
//!    (in its path, [`check_tables_exist`]) and the WAL it needs exist. Then, with a
//!    direct-I/O option on, [`probe_direct_io`] checks that the file system accepts it
//!    in every table directory, so a refusal is an error of the open, not of a later
//!    flush.
//! 4. `replay::replay_wals`: replay every WAL numbered `>= log_number` into L0 tables
//!    (recovery-flush plans through the one executor). The WAL recovery mode decides
//!    what a damaged record means (see [`WalRecoveryMode`]).
//! 5. [`start_logs`]: create the new WAL, then a new MANIFEST holding the whole version
//!    (the recovered tables plus the replayed ones, and the new WAL number), fsync it
//!    and swing `CURRENT` to it atomically. Only then are the replayed WALs obsolete.
//! 6. Record the options in `OPTIONS` ([`options_file::store`]); assemble the
//!    handle's state.
//! 7. `obsolete::remove_orphans`: delete what no durable state names. The caller
//!    starts the background threads.
//!
//! A crash at any point repeats the recovery from the same durable state: the old
//! WALs and MANIFEST stay until step 5 has made the new ones durable.
//!
//! A read-only open ([`Access::ReadOnly`], docs/ARCHITECTURE.md §7.6) runs steps 2 and
//! 3 (reading only), takes no `LOCK`, probes nothing, replays the WALs into memtables
//! it keeps (step 4 without tables), and skips steps 5–7: it writes no byte. A
//! secondary ([`Access::Secondary`], §7.6.1) is the same in the database's
//! directories, but leaves step 4 to `secondary::start`, which links the tables into
//! its own directory and tails the WALs as every catch-up does.
//!
//! [`WalRecoveryMode`]: crate::WalRecoveryMode

use super::builder::Components;
use super::events::Events;
use super::family::{Family, FamilyState};
use super::family_kind;
use super::read_only;
use super::replay::{replay_wals, ReplayFamily, ReplayInto, Replayed};
use super::secondary;
use super::state::DbState;
use super::write::WriteQueue;
use super::{obsolete, DbInner};
use crate::cache::{BlockCache, TableCache};
use crate::compaction::CompactionPolicy;
use crate::env::{CountingFs, FileLock, FileOptions, FileSystem, WritableFile};
use crate::error::{Error, Result};
use crate::filename::{self, Dirs};
use crate::memory_budget::MemoryBudget;
use crate::memtable::MemTable;
use crate::options::{CfOptions, Options};
use crate::options_file;
use crate::snapshot::SnapshotList;
use crate::stats::path::PathStats;
use crate::stats::Statistics;
use crate::version::manifest::CURRENT;
use crate::version::{Version, VersionSet, DEFAULT_FAMILY_ID, DEFAULT_FAMILY_NAME};
use crate::wal::LogWriter;
use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// How a database is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// The one writer: locks the directory, recovers into tables, writes.
    ReadWrite,
    /// A reader of the state as of open: no lock, nothing written (§7.6).
    ReadOnly,
    /// A reader that follows the writer (`Db::try_catch_up`): as `ReadOnly` in the
    /// database's directories, writing only in its own (§7.6.1).
    Secondary,
}

impl Access {
    /// True iff this handle writes the database (the one writer).
    pub(crate) fn writes(self) -> bool {
        self == Access::ReadWrite
    }
}

/// Opens the database in `dir` with `components`, its column families other than the
/// default one with `families`' options where listed (the per-tree fields of `opts`
/// otherwise). Requires: `opts` validated.
///
/// # Errors
/// See [`crate::Db::open`], [`crate::Db::open_cf`] and [`crate::Db::open_read_only`].
pub(crate) fn open(
    dir: &Path,
    opts: Options,
    components: Components,
    families: &[(&str, CfOptions)],
    access: Access,
    secondary: Option<&secondary::Prepared>,
) -> Result<DbInner> {
    let Components {
        fs,
        block_cache,
        policy,
        placement,
        scan_tees,
        memory_budget,
        hooks,
        kinds,
        listeners,
        metrics_label,
    } = components;
    // A reader of another process's (or this one's) database is labelled apart from
    // its writer, whose published totals it would otherwise overwrite.
    let metrics_label: Arc<str> = metrics_label
        .unwrap_or_else(|| match access {
            Access::ReadWrite => dir.display().to_string(),
            Access::ReadOnly => format!("{} (read-only)", dir.display()),
            Access::Secondary => format!("{} (secondary)", dir.display()),
        })
        .into();
    // A read-only open writes nothing, so it gives no family hooks (they may keep
    // state of their own).
    let hooks = hooks.filter(|_| access.writes());
    let memory_budget = match (memory_budget, opts.memory_budget) {
        (Some(shared), _) => Some(shared),
        (None, 0) => None,
        (None, limit) => Some(MemoryBudget::new(limit)?),
    };
    if memory_budget.is_some() && block_cache.is_some() {
        return Err(Error::InvalidArgument(
            "a memory budget brings its own block cache: give a block cache or a memory \
             budget, not both"
                .into(),
        ));
    }
    let lock = match access {
        Access::ReadWrite => Some(lock_dir(fs.as_ref(), dir, &opts)?),
        Access::ReadOnly | Access::Secondary if fs.exists(&dir.join(CURRENT)) => None,
        Access::ReadOnly | Access::Secondary => return Err(missing_database(dir)),
    };
    let dirs = Dirs::new(dir, opts.db_paths.iter().map(|p| p.path.clone()));
    let path_stats: Vec<Arc<PathStats>> = dirs
        .tables
        .iter()
        .map(|d| Arc::new(PathStats::new(&metrics_label, d.clone())))
        .collect();
    let fs: Arc<dyn FileSystem> = Arc::new(CountingFs::new(fs, path_stats.clone()));
    // The previous open's options, read before the MANIFEST: they give the families
    // not listed here their options, the number of levels included.
    let stored = options_file::load(fs.as_ref(), dir)?;
    let mut opts = opts;
    options_file::adopt_recorded_operator(
        &mut opts.merge_operator,
        stored.as_ref().and_then(|s| s.merge_operator.as_deref()),
    );
    let opts = opts;
    let family_opts = |name: &str| family_options(&opts, stored.as_ref(), families, name);
    for (name, _) in families {
        family_opts(name)
            .validate()
            .map_err(|e| Error::InvalidArgument(format!("column family `{name}`: {e}")))?;
    }
    let (versions, max_column_family, manifest_end) =
        recover_versions(&fs, &dirs, &opts, stored.as_ref(), &family_opts)?;
    for (name, _) in families {
        if !versions.families().iter().any(|f| f.name() == *name) {
            return Err(Error::InvalidArgument(format!(
                "column family does not exist: name=`{name}` (create it with create_cf)"
            )));
        }
    }
    // The probe writes a file: a read-only open meets a refusal at its first read.
    if access.writes() {
        for table_dir in &dirs.tables {
            probe_direct_io(fs.as_ref(), table_dir, &opts)?;
        }
    }
    // Each family's options and policy, as its records call for: before replay, which
    // flushes with them.
    let configured: BTreeMap<u32, (Options, Arc<dyn CompactionPolicy>)> = versions
        .families()
        .iter()
        .map(|f| {
            let opts = family_opts(f.name());
            let c = configure_family(kinds.as_ref(), f.name(), &f.current(), opts, &policy)?;
            Ok((f.id(), c))
        })
        .collect::<Result<_>>()?;
    let configured_opts = |id: u32| -> Result<&Options> {
        configured
            .get(&id)
            .map(|(o, _)| o)
            .ok_or_else(|| Error::Internal(format!("column family {id} not configured")))
    };
    // The database's options as its default family runs with them (its recorded value
    // layout), for `DbInner::opts` and the `OPTIONS` file.
    let opts = opts
        .clone()
        .with_expiring_values(configured_opts(DEFAULT_FAMILY_ID)?.expiring_values);
    let versions = versions.with_table_file_options(
        FileOptions::default().with_direct(opts.use_direct_io_for_flush_and_compaction),
    );
    let log_number = versions.log_number();
    let stats = Arc::new(Statistics::default());
    let block_cache = match (block_cache, &memory_budget) {
        (Some(shared), _) => Some(Arc::new(shared.share())),
        (None, Some(budget)) => Some(Arc::new(budget.cache_handle())),
        (None, None) => (opts.block_cache_capacity > 0)
            .then(|| Arc::new(BlockCache::new(opts.block_cache_capacity))),
    };
    let table_cache = Arc::new(
        TableCache::new(
            Arc::clone(&fs),
            // A secondary that links tables reads them through its links.
            secondary.map_or_else(|| dirs.tables.clone(), |p| p.table_dirs(&dirs)),
            opts.max_open_files,
            block_cache.clone(),
            Arc::clone(&stats),
            opts.paranoid_checks,
        )
        .with_file_options(FileOptions::default().with_direct(opts.use_direct_reads))
        .with_cache_index_and_filter_blocks(opts.cache_index_and_filter_blocks),
    );
    let replay_families = versions
        .families()
        .iter()
        .map(|f| {
            let opts = configured_opts(f.id())?.clone();
            Ok(ReplayFamily {
                id: f.id(),
                l0_path: placement.path_for_level(&f.current(), &opts, 0),
                log_number: f.log_number(),
                opts,
            })
        })
        .collect::<Result<_>>()?;
    let replayed = match access {
        // A secondary reads the WALs itself once it is built, and again at each
        // catch-up (`secondary::start`).
        Access::Secondary => Replayed {
            edits: Vec::new(),
            refs: Vec::new(),
            memtables: Vec::new(),
        },
        Access::ReadWrite | Access::ReadOnly => replay_wals(
            fs.as_ref(),
            dir,
            &opts,
            &versions,
            &table_cache,
            log_number,
            replay_families,
            max_column_family,
            match access {
                Access::ReadWrite => ReplayInto::Tables,
                Access::ReadOnly | Access::Secondary => ReplayInto::Memory,
            },
        )?,
    };
    let mut replayed_memtables = Vec::new();
    // What each family was given or had recorded, before its kind configured it: the
    // next open configures it again from the same starting point.
    // An operator the family's kind installs over the given one is the kind's: not
    // recorded, so no later open is held to it.
    let family_options: BTreeMap<String, CfOptions> = versions
        .families()
        .iter()
        .filter(|f| f.id() != DEFAULT_FAMILY_ID)
        .map(|f| {
            let mut cf = family_opts(f.name()).cf_options();
            cf.expiring_values = configured_opts(f.id())?.expiring_values;
            let installed = configured_opts(f.id())?
                .merge_operator
                .as_ref()
                .map(|m| m.name());
            if installed != cf.merge_operator.as_ref().map(|m| m.name()) {
                cf.merge_operator = None;
            }
            Ok((f.name().to_string(), cf))
        })
        .collect::<Result<_>>()?;
    let (wal, log_number) = match access {
        Access::ReadWrite => {
            let started = start_logs(fs.as_ref(), &versions, replayed)?;
            options_file::store(fs.as_ref(), dir, &opts, &family_options)?;
            started
        }
        Access::ReadOnly | Access::Secondary => {
            replayed_memtables = replayed.memtables;
            (read_only::no_wal(dir), log_number)
        }
    };

    let last_sequence = versions.last_sequence();
    let mut family_states = BTreeMap::new();
    let mut default = None;
    for fv in versions.families() {
        let (fopts, fpolicy) = configured
            .get(&fv.id())
            .cloned()
            .ok_or_else(|| Error::Internal(format!("column family {} not configured", fv.id())))?;
        let pending = fpolicy.pending_compaction_bytes(&fv.current(), &fopts);
        let mem = MemTable::charged(memory_budget.as_ref());
        let family_hooks = match &hooks {
            Some(factory) => {
                factory.hooks_for(&fopts, &fs, versions.dirs(), (fv.id(), last_sequence))?
            }
            None => None,
        };
        let family = Arc::new(Family::new(
            fv,
            (fopts, fpolicy),
            Arc::new(mem),
            family_hooks,
            &metrics_label,
        ));
        if family.id() == DEFAULT_FAMILY_ID {
            default = Some(Arc::clone(&family));
        }
        let mut state = FamilyState::new(family, log_number, pending);
        read_only::adopt_memtables(&mut state, &replayed_memtables, log_number);
        family_states.insert(state.family.id(), state);
    }
    let default = default.ok_or_else(|| Error::Internal("no default column family".into()))?;
    let mut state = DbState {
        families: family_states,
        mems: Arc::default(),
        wals: vec![(log_number, 0)],
        flush_running: false,
        compactions_running: 0,
        bg_error: None,
        no_space: None,
        retryable_failures: Default::default(),
        shutting_down: false,
        manual_waiting: 0,
    };
    state.refresh_mems();
    let family_view = ArcSwap::from_pointee(state.family_view());
    // A read-only handle runs no job and writes nothing: it has nothing to tell.
    let events = match access {
        Access::ReadWrite => Events::start(listeners, Arc::clone(&stats))?,
        Access::ReadOnly | Access::Secondary => Events::none(),
    };
    #[cfg(feature = "metrics")]
    let metrics = super::export::DbMetrics::new(&metrics_label, &path_stats);
    let secondary = secondary.map(|prepared| {
        let manifest = (versions.manifest_number(), manifest_end);
        secondary::Secondary::new(prepared, families, manifest, max_column_family)
    });
    let inner = DbInner {
        dir: dir.to_path_buf(),
        read_pool: Default::default(),
        metrics_label,
        fs,
        state: Mutex::new(state),
        bg_cv: Condvar::new(),
        done_cv: Condvar::new(),
        versions,
        default,
        family_view,
        reservations: Default::default(),
        snapshots: Arc::new(SnapshotList::default()),
        table_cache,
        block_cache,
        stats,
        policy,
        placement,
        scan_tees,
        hooks,
        kinds,
        path_stats,
        writes: WriteQueue::new(LogWriter::new(wal), last_sequence),
        opts,
        family_options: Mutex::new(family_options),
        access,
        memory_budget,
        resuming: Mutex::new(()),
        events,
        #[cfg(feature = "metrics")]
        metrics,
        secondary,
        _lock: lock,
    };
    match access {
        Access::ReadWrite => obsolete::remove_orphans(&inner),
        Access::ReadOnly => read_only::pin_tables(&inner)?,
        Access::Secondary => secondary::start(&inner)?,
    }
    Ok(inner)
}

/// Column family `name`'s options: the default family's are `opts`; another's are
/// those `listed` gives it, else those the `OPTIONS` file recorded (`stored`), else
/// `opts`' per-tree fields; where the file records a merge operator, the one given
/// must be it (the recorded one is adopted where none is given).
pub(super) fn family_options<S: AsRef<str>>(
    opts: &Options,
    stored: Option<&options_file::StoredOptions>,
    listed: &[(S, CfOptions)],
    name: &str,
) -> Options {
    if name == DEFAULT_FAMILY_NAME {
        return opts.clone();
    }
    let recorded = stored.and_then(|s| s.families.get(name));
    let mut cf = match (listed.iter().find(|(n, _)| n.as_ref() == name), recorded) {
        (Some((_, listed)), _) => listed.clone(),
        (None, Some(r)) => r.options.clone(),
        // Nothing recorded for it: the database's per-tree options, but not their
        // value layout, which the family's own MANIFEST records decide
        // (`configure_family`), not the default family's choice.
        (None, None) => return opts.clone().with_expiring_values(false),
    };
    let recorded_op = recorded.and_then(|r| r.merge_operator.as_deref());
    options_file::adopt_recorded_operator(&mut cf.merge_operator, recorded_op);
    opts.clone().with_cf_options(&cf)
}

/// Step 1. Refuses a missing database without creating anything when
/// `create_if_missing` is false (a read-only tool pointed at a wrong path must leave
/// no directory or `LOCK` behind), then creates the directory and locks it.
///
/// # Errors
/// `InvalidArgument` for a missing database without `create_if_missing`; `Locked`;
/// I/O errors.
fn lock_dir(fs: &dyn FileSystem, dir: &Path, opts: &Options) -> Result<Box<dyn FileLock>> {
    if !opts.create_if_missing && !fs.exists(&dir.join(CURRENT)) {
        return Err(missing_database(dir));
    }
    fs.create_dir_all(dir)?;
    fs.lock(&dir.join("LOCK"))
}

/// Step 1, continued. If `use_direct_reads` or `use_direct_io_for_flush_and_compaction`
/// is on, creates [`filename::DIRECT_IO_PROBE`] in `dir` the way table files will be
/// created (direct iff the write option is on), writes and syncs one byte, reads it
/// back the way tables will be read (direct iff the read option is on), and removes
/// the file (best effort: a leftover `.dbtmp` is removed at the next open). Nothing
/// when both options are off.
///
/// # Errors
/// `InvalidArgument` naming the option(s) and the probe's path if the file system
/// refuses direct I/O there (tmpfs before Linux 6.6, or a file system without
/// `O_DIRECT`); I/O errors of the probe otherwise.
fn probe_direct_io(fs: &dyn FileSystem, dir: &Path, opts: &Options) -> Result<()> {
    let (reads, writes) = (
        opts.use_direct_reads,
        opts.use_direct_io_for_flush_and_compaction,
    );
    let option = match (reads, writes) {
        (false, false) => return Ok(()),
        (true, false) => "use_direct_reads=`true`",
        (false, true) => "use_direct_io_for_flush_and_compaction=`true`",
        (true, true) => "use_direct_reads=`true` and use_direct_io_for_flush_and_compaction=`true`",
    };
    let path = dir.join(filename::DIRECT_IO_PROBE);
    let probe = || -> Result<()> {
        let mut f = fs.create_with(&path, FileOptions::default().with_direct(writes))?;
        f.append(&[0x5a])?;
        f.sync()?;
        drop(f);
        let r = fs.open_random_with(&path, FileOptions::default().with_direct(reads))?;
        if r.read_vec(0, 1)? != [0x5a] {
            return Err(Error::Internal(format!(
                "direct I/O probe read back other bytes than written: path=`{}`",
                path.display()
            )));
        }
        Ok(())
    };
    let result = probe();
    if fs.exists(&path) {
        let _ = fs.remove(&path);
    }
    result.map_err(|e| match e {
        Error::InvalidArgument(m) => Error::InvalidArgument(format!(
            "{option}, but the file system of the database directory refuses direct I/O: {m}"
        )),
        e => e,
    })
}

fn missing_database(dir: &Path) -> Error {
    Error::InvalidArgument(format!(
        "database does not exist and create_if_missing is false: path=`{}`",
        dir.display()
    ))
}

/// Family `name`'s options and policy from `opts` (what it opens or is created with)
/// and its records in `version`: its value layout as recorded (`expiry`), then what
/// its kind makes of it (`family_kind`). Every open, catch-up and creation of a family
/// goes through here.
///
/// # Errors
/// `expiry::adopt_recorded`'s and `family_kind::configure`'s.
pub(super) fn configure_family(
    kinds: Option<&Arc<dyn family_kind::FamilyKinds>>,
    name: &str,
    version: &crate::version::Version,
    mut opts: Options,
    policy: &Arc<dyn CompactionPolicy>,
) -> Result<(Options, Arc<dyn CompactionPolicy>)> {
    crate::expiry::adopt_recorded(name, version, &mut opts)?;
    family_kind::configure(kinds, name, version, opts, policy)
}

/// Steps 2 and 3. The version set of the durable state the MANIFEST describes (or of
/// an empty database), with every data path's directory present: created for a new
/// database, required of an existing one.
///
/// # Errors
/// `InvalidArgument` against `create_if_missing` / `error_if_exists`, for options
/// the database cannot be opened with (naming the option, and the family if not the
/// default one), or for a missing data path of an existing database (naming it);
/// `Corruption` naming the MANIFEST if it names a table or WAL that does not exist
/// (it lost edits, or files were removed behind its back); MANIFEST replay errors.
/// Also returns the largest family id ever given and where the MANIFEST's whole
/// records end.
fn recover_versions(
    fs: &Arc<dyn FileSystem>,
    dirs: &Dirs,
    opts: &Options,
    stored: Option<&options_file::StoredOptions>,
    family_opts: &dyn Fn(&str) -> Options,
) -> Result<(VersionSet, u32, u64)> {
    let dir = dirs.db.as_path();
    let max = opts.max_manifest_file_size;
    let num_levels = |name: &str| family_opts(name).num_levels;
    let recovered = VersionSet::recover(Arc::clone(fs), dirs.clone(), max, &num_levels)?;
    let Some((versions, info)) = recovered else {
        if !opts.create_if_missing {
            return Err(missing_database(dir));
        }
        for table_dir in &dirs.tables {
            fs.create_dir_all(table_dir)?;
        }
        let records = crate::expiry::layout_records(opts);
        let versions =
            VersionSet::create(Arc::clone(fs), dirs.clone(), max, opts.num_levels, records)?;
        return Ok((versions, 0, 0));
    };
    if opts.error_if_exists {
        return Err(Error::InvalidArgument(format!(
            "database already exists: path=`{}`",
            dir.display()
        )));
    }
    // Refuse options the existing database cannot be opened with before writing.
    for (name, deepest) in &info.deepest_levels {
        if name == DEFAULT_FAMILY_NAME {
            options_file::check_compatible(stored, opts, *deepest)?;
            continue;
        }
        let recorded = stored.and_then(|s| s.families.get(name));
        options_file::check_family_compatible(name, recorded, &family_opts(name), *deepest)?;
    }
    // A data path that vanished (an unmounted disk, a typo) must not be recreated
    // empty: its tables would read as lost. Refuse it by name instead.
    for (i, table_dir) in dirs.tables.iter().enumerate() {
        if !fs.exists(table_dir) {
            return Err(Error::InvalidArgument(format!(
                "data path missing: db_paths[{i}]=`{}` does not exist (database `{}`)",
                table_dir.display(),
                dir.display()
            )));
        }
    }
    let manifest = dir.join(filename::manifest_name(info.manifest_number));
    // A MANIFEST that lost its tail describes an older version whose tables may since
    // have been deleted: refuse it now rather than fail reads later.
    for f in versions.families() {
        check_tables_exist(fs.as_ref(), dirs, opts, &manifest, &f.current())
            .map_err(|e| moved_data_path(e, stored, opts, dir))?;
    }
    // The WAL the MANIFEST names is created durably before any MANIFEST names it and
    // deleted only after a newer one is named: if it is gone, the MANIFEST lost edits
    // (a flushed memtable would silently vanish).
    let wal = filename::wal_file(dir, versions.max_log_number());
    if !fs.exists(&wal) {
        return Err(Error::corruption(
            &manifest,
            0,
            format!("MANIFEST names a missing WAL: file=`{}`", wal.display()),
        ));
    }
    Ok((versions, info.max_column_family, info.resume_at))
}

/// Step 3's check of the tables: every table file `version` needs on disk
/// ([`Version::physical_tables`]: its real level files and the parents of its virtual
/// tables) exists in the directory of its data path, `dirs.tables[path_id]`. Looks at
/// directory entries only and writes nothing, so a tool may run it on a database that
/// is not open (`strata ldb verify`).
///
/// Requires: `dirs` are the directories of `opts` (`Dirs::new(db, opts.db_paths)`);
/// `manifest` is the MANIFEST `version` was replayed from (errors name it).
///
/// # Errors
/// `InvalidArgument` for a table whose `path_id` has no data path in `opts` (naming
/// the table and how many `db_paths` there are); `Corruption` naming `manifest` and the
/// missing file.
pub fn check_tables_exist(
    fs: &dyn FileSystem,
    dirs: &Dirs,
    opts: &Options,
    manifest: &Path,
    version: &Version,
) -> Result<()> {
    for f in version.physical_tables() {
        let Some(table_dir) = dirs.tables.get(f.path_id as usize) else {
            return Err(Error::InvalidArgument(format!(
                "the MANIFEST places table {:06}.sst in data path {}, but db_paths has {} \
                 entries (database `{}`)",
                f.number,
                f.path_id,
                opts.db_paths.len(),
                dirs.db.display()
            )));
        };
        let table = filename::table_file(table_dir, f.number);
        if !fs.exists(&table) {
            return Err(Error::corruption(
                manifest,
                0,
                format!("MANIFEST names a missing table: file=`{}`", table.display()),
            ));
        }
    }
    Ok(())
}

/// `err`, a missing table, as `InvalidArgument` naming `db_paths` if the data paths
/// differ from those of the previous open (`stored`): tables are placed by their
/// path's index, so an entry reordered or removed sends every lookup to the wrong
/// directory. Data paths may be appended; an entry's directory may move only with its
/// tables.
fn moved_data_path(
    err: Error,
    stored: Option<&options_file::StoredOptions>,
    opts: &Options,
    dir: &Path,
) -> Error {
    let Some(stored) = stored else {
        return err;
    };
    let names = |paths: &[crate::options::DbPath]| -> Vec<String> {
        match paths {
            [] => vec![dir.display().to_string()],
            paths => paths.iter().map(|p| p.path.display().to_string()).collect(),
        }
    };
    let (before, now) = (names(&stored.options.db_paths), names(&opts.db_paths));
    if now.starts_with(&before) {
        return err;
    }
    Error::InvalidArgument(format!(
        "db_paths differ from the last open's and the MANIFEST's tables are not where they \
         now point: db_paths was {before:?}, now {now:?} (entries may be appended, never \
         reordered or removed; {err})"
    ))
}

/// Step 5. Creates this open's WAL (durably named), then the first MANIFEST of this
/// open holding the recovered and replayed tables and naming that WAL. Returns the
/// WAL and its number.
///
/// # Errors
/// I/O errors; nothing is lost on error (the previous MANIFEST and the replayed WALs
/// stay in charge).
fn start_logs(
    fs: &dyn FileSystem,
    versions: &VersionSet,
    replayed: Replayed,
) -> Result<(Box<dyn WritableFile>, u64)> {
    let dir = versions.db_dir();
    let log_number = versions.new_file_number();
    let wal = fs.create(&filename::wal_file(dir, log_number))?;
    fs.sync_dir(dir)?;
    versions.start_manifest(&replayed.edits, &replayed.refs, log_number)?;
    Ok((wal, log_number))
}
