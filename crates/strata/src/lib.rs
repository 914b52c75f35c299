//! Strata: an embedded LSM-tree key-value storage engine.
//!
//! ```no_run
//! use strata::{Db, Options, ReadOptions, WriteOptions};
//! let db = Db::open("/tmp/strata-example", Options::default())?;
//! db.put(&WriteOptions::default(), b"key", b"value")?;
//! assert_eq!(db.get(&ReadOptions::default(), b"key")?, Some(b"value".to_vec()));
//! db.close()?;
//! # Ok::<(), strata::Error>(())
//! ```
//!
//! # The public surface
//! What a user calls is exported at the crate root: [`Db`], [`DbBuilder`] and
//! [`DbIterator`]; [`WriteBatch`]; optimistic transactions ([`Transaction`],
//! [`TransactionOptions`]) and the indexed batch they read their own writes from
//! ([`WriteBatchWithIndex`], [`BatchValue`], [`BaseDeltaIterator`]); [`Options`],
//! [`LevelOptions`], [`ReadOptions`], [`WriteOptions`] and their enums; [`MergeOperator`]
//! and [`AssociativeMergeOperator`]; [`Snapshot`] and [`SequenceNumber`]; [`DbStats`],
//! [`LevelStats`] and [`StatisticsSnapshot`]; [`BlockCache`] (shared through
//! [`DbBuilder::block_cache`]); [`EventListener`] (registered with
//! [`DbBuilder::listener`]) and the infos its callbacks get ([`FlushJobInfo`],
//! [`CompactionJobInfo`] and the rest of `listener`'s types); [`Error`], [`ErrorKind`]
//! and [`Result`]; the size limits ([`MAX_KEY_LEN`], [`MAX_VALUE_LEN`],
//! [`MAX_BATCH_LEN`], [`MAX_LEVELS`]). One module is public: [`env`](mod@env), the file-system seam ([`env::FileSystem`], [`env::PosixFs`], the
//! simulated device [`env::DeviceFs`] with its [`env::DeviceModel`];
//! with the `test-util` feature also the fault-injecting `FaultFs` and its rules), because
//! a user may inject a file system with [`DbBuilder::file_system`]. So is
//! [`merge`](mod@merge): the operator traits and the built-in operators ([`merge::U64Add`],
//! [`merge::Append`], [`merge::Max`]). So is [`backup`](mod@backup): incremental backups
//! of a database ([`backup::BackupEngine`], [`backup::BackupInfo`]).
//!
//! # Features
//! - `test-util`: `env::FaultFs`, the crash-simulating, fault-injecting in-memory file
//!   system, for tests of this crate and of tools built on it. Never in a production
//!   build.
//! - `internals`: tool and fuzz internals (the SSTable, WAL and MANIFEST readers and
//!   writers that `strata sst-dump` and the fuzz targets drive): every module named
//!   under *Where things live* becomes public. Not a stable API.
//! - `metrics`: the engine emits counters, gauges and latency histograms, per column
//!   family and per data path, through the `metrics` facade, to whatever recorder the
//!   application installed before opening the database (docs/ARCHITECTURE.md §10.2
//!   lists the names). Adds no API.
//!
//! # Where things live
//! The module tree is the architecture (docs/ARCHITECTURE.md §1): `db` (the handle:
//! open/recovery, group commit, read path, background flush and compaction), `memtable`,
//! `wal`, `sst` and `version` (the in-memory and on-disk structures), `compaction`
//! (picker policies, the compaction job, output partitioners), `listener` (the event
//! listener trait and its infos; `db::events` queues and dispatches them), `iter` (the
//! iterator contract and adapters), `cache` (block cache and table cache), `env` (the file-system
//! seam), `limits` (the size limits and why), `options` and `options_file` (database-wide
//! and per-level options; the persisted `OPTIONS` file and its compatibility check),
//! `txn` (optimistic transactions and the indexed write batch).
//! Components (file system, shared block cache) are injected through [`DbBuilder`].

#![deny(missing_docs)]
// STYLE rule 10: no unwrap, expect, indexing or panic on the library's paths; each
// deliberate exception is an `#[expect(.., reason = ..)]` at its site. Tests may use them.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

/// Declares modules that are private, or public with the `internals` feature (tools and
/// fuzz targets; not a stable API).
macro_rules! internal_modules {
    ($($name:ident),* $(,)?) => {$(
        #[cfg(feature = "internals")]
        pub mod $name;
        #[cfg(not(feature = "internals"))]
        mod $name;
    )*};
}

internal_modules!(
    batch,
    cache,
    coding,
    compaction,
    db,
    error,
    filename,
    iter,
    key,
    limits,
    listener,
    memory_budget,
    memtable,
    options,
    options_file,
    range_del,
    snapshot,
    snapshot_filter,
    sst,
    stats,
    tiering,
    txn,
    version,
    wal,
);

pub mod backup;
pub mod compaction_filter;
pub mod env;
mod expiry;
pub mod merge;
pub mod table;

pub use batch::WriteBatch;
pub use cache::BlockCache;
pub use db::{CatchUp, CfHandle, CheckpointInfo, Db, DbBuilder, DbIterator};
pub use error::{Error, ErrorKind, IoOp, Result};
pub use key::SequenceNumber;
pub use limits::{MAX_BATCH_LEN, MAX_KEY_LEN, MAX_VALUE_LEN};
pub use listener::{
    BackgroundErrorInfo, BackgroundErrorState, ColumnFamilyInfo, CompactionJobInfo,
    CompactionReason, ErrorRecoveryInfo, EventListener, FlushJobInfo, FlushReason, JobStatus,
    MemTableInfo, StallCause, TableFileCreationInfo, TableFileCreationReason,
    TableFileDeletionInfo, TableFileInfo, WriteStallCondition, WriteStallInfo,
};
pub use memory_budget::{MemoryBudget, MIN_MEMORY_BUDGET};
pub use merge::{AssociativeMergeOperator, MergeOperator};
pub use options::{
    CfOptions, CompactionPriority, Compression, DbPath, DelayedCompaction, LevelOptions, Options,
    OutputPartitioning, QueryCompaction, ReadOptions, WalRecoveryMode, WriteOptions, MAX_DB_PATHS,
    MAX_LEVELS,
};
pub use snapshot::Snapshot;
pub use stats::{
    DbStats, IoBytes, LatencyHistogram, LevelStats, PathStatsSnapshot, StatisticsSnapshot,
    TableSpace,
};
pub use tiering::{HotSetLimit, TierLayout, Tiering, TieringMode};
pub use txn::{
    BaseDeltaIterator, BatchValue, Transaction, TransactionOptions, WriteBatchWithIndex,
};

/// The README's examples, compiled as doc-tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
