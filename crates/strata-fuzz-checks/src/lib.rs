//! The checks behind Strata's fuzz targets, in one place.
//!
//! Each `check_*` function takes arbitrary bytes, feeds them to one of the engine's
//! decoders and exercises what comes out. The property every check enforces is that
//! the engine **never panics** (nor loops without progress) on any input; where a round
//! trip or a second opinion exists, the check asserts it too:
//!
//! | target     | decoders                                                          | extra assertions |
//! |------------|-------------------------------------------------------------------|------------------|
//! | `block`    | `Block::decode` + `BlockIter`, `unseal_block`, `BloomFilter::decode`, `properties::decode`, `Footer::decode`, `BlockHandle::decode` | iterator agrees with a reference parser; round trips |
//! | `sst`      | whole file → `Table::open`, iterate both ways, seek, get, `verify_checksums` | both directions agree on well-formed tables; `get` only returns its user key |
//! | `wal`      | `LogReader` over the bytes, `WriteBatch::from_data` per record     | re-written records read back exactly |
//! | `manifest` | `VersionEdit::decode`                                             | `decode(encode(e)) == e`, encoding deterministic |
//! | `batch`    | `WriteBatch::from_data`                                           | rebuilt batch iterates the same |
//! | `options`  | `options_file::decode` (OPTIONS text)                             | re-encoding is stable |
//! | `catalog`  | a table's schema and layout records, and its parts (`table::codecs`) | re-encoding is stable |
//! | `backup_meta` | `backup::meta::BackupMeta::decode` (a backup's metadata file)  | only plain file names; round trip |
//!
//! Checksums stop a mutation-based fuzzer at the first CRC, so the `block`, `sst`,
//! `wal` and `backup_meta` checks run twice: once on the bytes as given, once with every checksum they can
//! locate recomputed ([`fixup`]), which lets mutations reach the decoders behind them.
//!
//! Used by the cargo-fuzz targets in `fuzz/fuzz_targets/` and by this crate's
//! `tests/fuzz_corpus.rs`, which replays `fuzz/corpus/<target>/` and
//! `fuzz/regressions/<target>/` as ordinary tests. `examples/fuzz_seeds.rs` writes the
//! seed corpus with the engine itself ([`seeds`]).

pub mod fixup;
pub mod reference;
pub mod seeds;

mod backup_meta;
mod block;
mod catalog;
mod log;
mod manifest;
mod options;
mod table;

pub use backup_meta::check_backup_meta;
pub use block::check_block;
pub use catalog::check_catalog;
pub use log::{check_batch, check_wal};
pub use manifest::check_manifest;
pub use options::check_options;
pub use table::check_sst;

/// The fuzz targets, by name (the directory names under `fuzz/corpus/`).
pub const TARGETS: [&str; 8] = [
    "block",
    "sst",
    "wal",
    "manifest",
    "batch",
    "options",
    "catalog",
    "backup_meta",
];

/// Runs the check of `target` on `data`.
///
/// # Panics
/// If the engine misbehaves on `data` (that is the finding), or if `target` is not
/// one of [`TARGETS`].
pub fn check(target: &str, data: &[u8]) {
    match target {
        "block" => check_block(data),
        "sst" => check_sst(data),
        "wal" => check_wal(data),
        "manifest" => check_manifest(data),
        "batch" => check_batch(data),
        "options" => check_options(data),
        "catalog" => check_catalog(data),
        "backup_meta" => check_backup_meta(data),
        other => panic!("unknown fuzz target {other:?}"),
    }
}
