//! Named properties ([`crate::Db::property`]): RocksDB's `GetProperty` names, where
//! the meaning is the same, computed from the family's current read view. The table
//! in docs/ARCHITECTURE.md §10 lists them.

use super::family::Family;
use super::DbInner;
use crate::error::{Error, Result};
use crate::version::virtual_table::table_space;

/// The names [`property`] knows, without their `rocksdb.` or `strata.` prefix.
const NAMES: &[&str] = &[
    "num-files-at-level<N>",
    "estimate-num-keys",
    "estimate-pending-compaction-bytes",
    "cur-size-all-mem-tables",
    "num-immutable-mem-table",
    "block-cache-usage",
    "live-sst-files-size",
    "stats",
    "secondary-pinning",
];

/// The value of property `name` of `family`: a decimal number, or text for `stats`.
/// `name` is RocksDB's (`rocksdb.estimate-num-keys`) or the same with `strata.`.
///
/// # Errors
/// `InvalidArgument` for a name it does not know, listing the ones it does.
pub(super) fn property(inner: &DbInner, family: &Family, name: &str) -> Result<String> {
    let bare = name
        .strip_prefix("rocksdb.")
        .or_else(|| name.strip_prefix("strata."))
        .ok_or_else(|| unknown(name))?;
    let sv = family.super_version.load_full();
    let version = &sv.version;
    let memtables = || std::iter::once(&sv.mem).chain(sv.imm.iter());
    let value: u64 = match bare {
        "estimate-num-keys" => {
            // RocksDB's estimate: entries minus deletions, each deletion taken to
            // hide one older entry too.
            let (mut entries, mut deletions) = (0u64, 0u64);
            for f in version.live_files() {
                entries += f.num_entries;
                deletions += f.num_deletions;
            }
            let in_memory: u64 = memtables().map(|m| m.len() as u64).sum();
            (entries + in_memory).saturating_sub(2 * deletions)
        }
        "estimate-pending-compaction-bytes" => inner
            .state
            .lock()
            .families
            .get(&family.id())
            .map_or(0, |f| f.pending_compaction_bytes),
        "cur-size-all-mem-tables" => sv.memtable_bytes(),
        "num-immutable-mem-table" => sv.imm.len() as u64,
        "block-cache-usage" => inner.block_cache.as_ref().map_or(0, |c| c.usage() as u64),
        "live-sst-files-size" => table_space(version).live_table_bytes,
        "stats" => return Ok(super::stats_of(inner, family).to_string()),
        // How a secondary keeps its tables (`db::secondary`): `links`, or
        // `descriptors: <why linking failed>`; `none` for any other handle.
        "secondary-pinning" => {
            return Ok(inner
                .secondary
                .as_ref()
                .map_or_else(|| "none".to_owned(), |s| s.pinning()))
        }
        other => {
            let level = other
                .strip_prefix("num-files-at-level")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&l| l < version.num_levels())
                .ok_or_else(|| unknown(name))?;
            version.level_files(level) as u64
        }
    };
    Ok(value.to_string())
}

fn unknown(name: &str) -> Error {
    Error::InvalidArgument(format!(
        "unknown property `{name}`: known are {} (each as rocksdb.NAME or strata.NAME; \
         <N> a level below num_levels)",
        NAMES.join(", ")
    ))
}
