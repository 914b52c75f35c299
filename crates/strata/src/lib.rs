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
//! Where things live (the module tree is the architecture; see docs/ARCHITECTURE.md):
//! - [`db`]: the handle: open/recovery, write path (group commit), read path,
//!   background flush and compaction scheduling.
//! - [`memtable`], [`wal`], [`sst`], [`version`]: the in-memory and on-disk structures.
//! - [`compaction`]: picker policies, the compaction job, output partitioners.
//! - [`iter`]: the iterator contract and its adapters.
//! - [`cache`]: block cache and table cache.
//! - [`env`](mod@env): the file-system seam.
//! - [`limits`]: the largest key ([`MAX_KEY_LEN`]), value ([`MAX_VALUE_LEN`]) and write
//!   batch ([`MAX_BATCH_LEN`]) a write accepts, and why.
//! - [`options`], [`options_file`]: database-wide and per-level options; the persisted
//!   `OPTIONS` file and the compatibility check at open. Components (file system,
//!   shared block cache) are injected through [`DbBuilder`].

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

pub mod batch;
pub mod cache;
pub mod coding;
pub mod compaction;
pub mod db;
pub mod env;
pub mod error;
pub mod filename;
pub mod iter;
pub mod key;
pub mod limits;
pub mod memtable;
pub mod options;
pub mod options_file;
pub mod snapshot;
pub mod snapshot_filter;
pub mod sst;
pub mod stats;
pub mod version;
pub mod wal;

pub use batch::WriteBatch;
pub use db::{Db, DbBuilder, DbIterator};
pub use error::{Error, ErrorKind, Result};
pub use limits::{MAX_BATCH_LEN, MAX_KEY_LEN, MAX_VALUE_LEN};
pub use options::{
    CompactionPriority, Compression, LevelOptions, Options, OutputPartitioning, ReadOptions,
    WalRecoveryMode, WriteOptions,
};
pub use snapshot::Snapshot;

/// The README's examples, compiled as doc-tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
pub use stats::{DbStats, LevelStats};
