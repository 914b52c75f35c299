//! The `OPTIONS` file: the options of the last open, in a text form the next open
//! parses and checks.
//!
//! # Role
//! At open, right after MANIFEST replay and before anything is written, `db::open`
//! calls [`load`] (read and [`decode`] the previous file, if any) and
//! [`check_compatible`] (may the database be opened with the new options?). After the
//! new MANIFEST is durable it calls [`store`], which writes [`encode`]'s text with
//! [`write_file_atomic`] (temp file, fsync, rename, directory fsync), so the file is
//! always whole. Tools may read it to see how a database was configured. Components
//! (file system, block cache) are not options and are not recorded.
//!
//! # Format (options file version 1)
//! UTF-8 text, INI-like, one item per line (`\n`; a trailing `\r` is tolerated).
//! Blanks around a line are ignored, as are empty lines and lines starting with `#`.
//! ```text
//! # Strata OPTIONS file: the options of the last open, checked at the next one.
//! [Version]
//! strata_options_version=1
//!
//! [DBOptions]
//! create_if_missing=true
//! write_buffer_size=67108864
//! max_bytes_for_level_multiplier=10
//! num_levels=7
//! compaction_priority=min_overlapping_ratio
//! output_partitioning=aligned:2
//! ...                                  (one line per field of `Options` but `levels`)
//!
//! [LevelOptions "0"]
//! block_size=4096
//! block_restart_interval=16
//! compression=none
//! bloom_bits_per_key=10
//!
//! [DbPath "0"]                         (one per entry of `db_paths`; none if empty)
//! path=/fast/db
//! target_size=1073741824
//!
//! [CFOptions "users"]                  (one per column family but the default one)
//! write_buffer_size=4194304
//! ...                                  (the per-tree fields, as in [DBOptions])
//! merge_operator=strata.u64_add
//!
//! [CFLevelOptions "users" "0"]         (its level entries, as [LevelOptions])
//! block_size=4096
//! ...
//! ```
//! - A section header is `[Name]` or `[Name "argument"]`; an entry is `key=value`,
//!   split at the first `=`, blanks around key and value trimmed.
//! - `[Version]` comes first and holds `strata_options_version`.
//! - `[DBOptions]` holds one entry per field of [`Options`] except `levels`,
//!   `db_paths` and `merge_operator`, named as the field; then, only if a merge
//!   operator is set, `merge_operator=<its name>` (added after the first v1 writer). A
//!   built-in operator's name decodes to the operator; any other name is kept in
//!   [`StoredOptions::merge_operator`] for the compatibility check. Last, only where
//!   they differ from their defaults, the options that change no file format
//!   (`memory_budget`, `max_bytes_for_level_multiplier_additional`, `tiering`,
//!   `periodic_compaction_seconds`, `expiring_values`), so a
//!   database that does not use them keeps the file an older writer wrote.
//! - `[LevelOptions "i"]` for `i = 0, 1, 2, ...` in order and without gaps holds entry
//!   `i` of [`Options::levels`]; the number of these sections is `levels.len()`.
//! - `[DbPath "i"]` for `i = 0, 1, ...` in order and without gaps, after the level
//!   sections, holds entry `i` of [`Options::db_paths`]: `path` (the directory, as
//!   written; `Options::validate` keeps it to one trimmed line) and `target_size`.
//!   Added after the first v1 writer; a file without them has empty `db_paths`.
//! - `[CFOptions "name"]`, after the data paths, one per column family other than the
//!   default one, in name order (added after `OPTIONS-v1-tiering-hotrap-ablations`; a
//!   file without them records no family): the family's per-tree fields
//!   ([`CfOptions`]) as `[DBOptions]` spells them (the optional ones only where they
//!   differ from their defaults), then `merge_operator` if it has one. Then
//!   `[CFLevelOptions "name" "i"]` for its level entries, in order and without gaps,
//!   after its `[CFOptions]`. The name is quoted: `"` and `\` escaped with `\`, a
//!   newline as `\n`, a carriage return as `\r` (`options_file/family.rs`). The
//!   compaction filter factory, being code, is not recorded.
//! - Values: integers in decimal; floats in Rust's shortest round-trip form (`10`,
//!   `1.5`); `true`/`false`; enums by snake_case name: `compression` =
//!   `none|lz4|zstd`, `compaction_priority` =
//!   `min_overlapping_ratio|oldest_smallest_seq_first`, `wal_recovery_mode` =
//!   `tolerate_corrupted_tail_records|absolute_consistency|point_in_time`,
//!   `output_partitioning` = `fixed|aligned:<variance>`, `delayed_compaction` =
//!   `off|vct:<n>,vsmt:<n>,garbage:<ratio>`, `query_compaction` =
//!   `off|selectivity:<f>,start_level:<n>,min_levels:<n>,min_bytes:<n>,profit:<f>,buffer:<n>,background:<bool>,min_obsolete:<f>`
//!   `max_bytes_for_level_multiplier_additional` = factors joined by `:` (RocksDB's
//!   spelling, `1:1:4.5`), `tiering` =
//!   `off|mode:fat|hotrap|time,fast_path:<n>,slow_path:<n>,fd_size:<n>` then, each
//!   only when it departs from its default, `window_ms:<n>` (or `window_ns:<n>` for a
//!   window of no whole milliseconds; `mode:time` only), `hot_set_limit:<n>`,
//!   `retain:false`, `promote_by_compaction:false`, `promote_by_flush:false`,
//!   `hotness_check:false`, `hot_aware_pick:false`
//!   (`background` added after `OPTIONS-v1-query-compaction`, `min_obsolete` after
//!   `OPTIONS-v1-query-compaction-background`)
//!   (keys left out take their defaults).
//!
//! The frozen fixture `src/options_file/fixtures/OPTIONS-v1` is a complete example of
//! the first version-1 writer; `OPTIONS-v1-direct-io` is the same with the keys added
//! since (`enable_pipelined_write`, `use_direct_reads`,
//! `use_direct_io_for_flush_and_compaction`), `OPTIONS-v1-db-paths` adds the
//! `[DbPath]` sections, `OPTIONS-v1-merge-operator` the `merge_operator` key and
//! `OPTIONS-v1-cache-index-and-filter-blocks` the `cache_index_and_filter_blocks` key,
//! `OPTIONS-v1-delayed-compaction(-vsmt)` the `delayed_compaction` key and
//! `OPTIONS-v1-query-compaction` the `query_compaction` key,
//! `OPTIONS-v1-memory-budget` the `memory_budget` key,
//! `OPTIONS-v1-level-multiplier-additional` the
//! `max_bytes_for_level_multiplier_additional` key, `OPTIONS-v1-tiering` the `tiering`
//! key (with two `[DbPath]` sections), `OPTIONS-v1-tiering-hotrap`,
//! `OPTIONS-v1-tiering-time` and `OPTIONS-v1-tiering-hotrap-ablations` its later
//! modes and items, `OPTIONS-v1-cf-options` the column-family sections,
//! `OPTIONS-v1-periodic-compaction` the `periodic_compaction_seconds` key,
//! `OPTIONS-v1-expiring-values` the `expiring_values` key.
//! All must keep decoding: keys and sections are only ever appended.
//!
//! # Invariants
//! 1. The format grows by keys and sections only; names are append-only and never
//!    change meaning. So a reader keeps entries it does not know (from a newer writer)
//!    in [`StoredOptions::unknown`] instead of failing, and an option the file does
//!    not mention (an older writer's) takes its default.
//! 2. `strata_options_version` changes only if the syntax changes so that an older
//!    reader would misread the file. A reader refuses a version newer than
//!    [`OPTIONS_VERSION`] (`InvalidArgument`) rather than guess; 0 is never valid.
//! 3. [`encode`] is deterministic, and `decode(&encode(o))` gives back `o` for every
//!    `o` (a property test); the frozen fixture pins version 1 byte for byte.
//! 4. Malformed text is [`Error::Corruption`] naming the file, the byte offset and
//!    the line number; decoding never panics.
//! 5. The file is a record, not the truth about data: the MANIFEST is. A database
//!    without an `OPTIONS` file (or with the `Debug` text that Strata wrote before
//!    this format existed, which [`load`] skips) opens on the MANIFEST alone.
//!
//! # See also
//! `options_file/tests.rs` (fixture, round trip, hostile text, compatibility);
//! `tests/reopen_with_fewer_levels_is_invalid_argument.rs`; docs/ARCHITECTURE.md §15.

use crate::env::{read_to_vec, write_file_atomic, FileSystem};
use crate::error::{Error, Result};
use crate::merge;
use crate::options::{
    CfOptions, CompactionPriority, Compression, DbPath, DelayedCompaction, LevelOptions, Options,
    OutputPartitioning, QueryCompaction, WalRecoveryMode,
};
use crate::tiering::{HotSetLimit, Tiering, TieringMode};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// The `[DBOptions]` key of the merge operator's name.
const MERGE_OPERATOR: &str = "merge_operator";

/// The options file format version this build writes and the newest it reads.
pub const OPTIONS_VERSION: u32 = 1;

/// The file's name in the database directory.
pub const FILE_NAME: &str = "OPTIONS";

/// An `OPTIONS` file as [`decode`] read it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct StoredOptions {
    /// The file's `strata_options_version` (at most [`OPTIONS_VERSION`]).
    pub version: u32,
    /// The options it records; options it does not mention keep their defaults.
    pub options: Options,
    /// Entries this build does not know (from a newer writer), in file order.
    pub unknown: Vec<UnknownEntry>,
    /// The recorded merge operator's name, if any (also when it is not a built-in
    /// and so could not be decoded into [`StoredOptions::options`]).
    pub merge_operator: Option<String>,
    /// The options of each column family other than the default one, by name.
    pub families: BTreeMap<String, StoredFamily>,
}

/// One `[CFOptions "name"]` section (with its `[CFLevelOptions]`) as [`decode`] read
/// it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct StoredFamily {
    /// The family's options; fields the section does not mention keep their defaults.
    pub options: CfOptions,
    /// The recorded merge operator's name, as [`StoredOptions::merge_operator`].
    pub merge_operator: Option<String>,
}

/// One `key=value` entry [`decode`] did not recognise.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnknownEntry {
    /// The section header between the brackets, e.g. `DBOptions` or `TierOptions "1"`.
    pub section: String,
    /// The key.
    pub key: String,
    /// The value, as written.
    pub value: String,
}

/// One option's name and its text conversions, so [`encode`] and [`decode`] share one
/// list.
struct Field<T> {
    name: &'static str,
    get: fn(&T) -> String,
    /// Parses the value into the field; `Err` says what was expected.
    set: fn(&mut T, &str) -> std::result::Result<(), String>,
}

/// A field whose type converts with `Display` and `FromStr`.
macro_rules! field {
    ($t:ty, $name:ident) => {
        Field::<$t> {
            name: stringify!($name),
            get: |o| o.$name.to_string(),
            set: |o, v| {
                o.$name = v.parse().map_err(|e| format!("{e}"))?;
                Ok(())
            },
        }
    };
}

/// A field of an enum type with a name function and a list of every variant.
macro_rules! enum_field {
    ($t:ty, $name:ident, $to_name:ident, $all:expr) => {
        Field::<$t> {
            name: stringify!($name),
            get: |o| $to_name(o.$name).to_string(),
            set: |o, v| {
                o.$name = $all
                    .into_iter()
                    .find(|&x| $to_name(x) == v)
                    .ok_or_else(|| format!("unknown value for {}", stringify!($name)))?;
                Ok(())
            },
        }
    };
}

/// `[DBOptions]`, in file order. Append new options at the end.
const DB_FIELDS: &[Field<Options>] = &[
    field!(Options, create_if_missing),
    field!(Options, error_if_exists),
    field!(Options, write_buffer_size),
    field!(Options, max_write_buffer_number),
    field!(Options, target_file_size_base),
    field!(Options, max_bytes_for_level_base),
    field!(Options, max_bytes_for_level_multiplier),
    field!(Options, num_levels),
    field!(Options, level0_file_num_compaction_trigger),
    field!(Options, level0_slowdown_writes_trigger),
    field!(Options, level0_stop_writes_trigger),
    field!(Options, soft_pending_compaction_bytes_limit),
    field!(Options, hard_pending_compaction_bytes_limit),
    field!(Options, block_cache_capacity),
    field!(Options, max_open_files),
    field!(Options, max_background_jobs),
    enum_field!(
        Options,
        compaction_priority,
        priority_name,
        [
            CompactionPriority::MinOverlappingRatio,
            CompactionPriority::OldestSmallestSeqFirst,
        ]
    ),
    Field {
        name: "output_partitioning",
        get: |o| match o.output_partitioning {
            OutputPartitioning::Fixed => "fixed".to_string(),
            OutputPartitioning::Aligned { variance } => format!("aligned:{variance}"),
        },
        set: |o, v| {
            o.output_partitioning = match v.strip_prefix("aligned:") {
                Some(variance) => OutputPartitioning::Aligned {
                    variance: variance.parse().map_err(|e| format!("{e}"))?,
                },
                None if v == "fixed" => OutputPartitioning::Fixed,
                None => return Err("expected fixed or aligned:<variance>".to_string()),
            };
            Ok(())
        },
    },
    field!(Options, snapshot_filter),
    field!(Options, paranoid_checks),
    enum_field!(
        Options,
        wal_recovery_mode,
        recovery_name,
        [
            WalRecoveryMode::TolerateCorruptedTailRecords,
            WalRecoveryMode::AbsoluteConsistency,
            WalRecoveryMode::PointInTime,
        ]
    ),
    field!(Options, max_manifest_file_size),
    field!(Options, enable_pipelined_write),
    // Added after the first v1 fixture (`OPTIONS-v1` lacks them; they default to false).
    field!(Options, use_direct_reads),
    field!(Options, use_direct_io_for_flush_and_compaction),
    // Added after `OPTIONS-v1-merge-operator` (absent there: the default applies).
    field!(Options, cache_index_and_filter_blocks),
    // Added after `OPTIONS-v1-cache-index-and-filter-blocks` (absent: off).
    Field {
        name: "delayed_compaction",
        get: |o| match o.delayed_compaction {
            None => "off".to_string(),
            Some(d) => format!(
                "vct:{},vsmt:{},garbage:{}",
                d.vct, d.vsmt, d.max_garbage_ratio
            ),
        },
        set: |o, v| {
            o.delayed_compaction = match v {
                "off" => None,
                v => Some(delayed_compaction(v)?),
            };
            Ok(())
        },
    },
    // Added after the delayed_compaction key (absent: off).
    Field {
        name: "query_compaction",
        get: |o| match o.query_compaction {
            None => "off".to_string(),
            Some(q) => format!(
                "selectivity:{},start_level:{},min_levels:{},min_bytes:{},profit:{},buffer:{},\
                 background:{},min_obsolete:{}",
                q.selectivity,
                q.start_level,
                q.min_levels,
                q.min_bytes,
                q.profit,
                q.max_buffer_bytes,
                q.background,
                q.min_obsolete
            ),
        },
        set: |o, v| {
            o.query_compaction = match v {
                "off" => None,
                v => Some(query_compaction(v)?),
            };
            Ok(())
        },
    },
];

/// `[DBOptions]` entries written after `merge_operator`, each only where it differs
/// from its default, so a database that does not use them keeps the very file an
/// older writer wrote. For options that change no file format. Append new ones at
/// the end.
const OPTIONAL_DB_FIELDS: &[Field<Options>] = &[
    // Added after `OPTIONS-v1-query-compaction-min-obsolete` (absent: 0, no budget).
    field!(Options, memory_budget),
    // Added after `OPTIONS-v1-memory-budget` (absent: empty, every factor 1).
    Field {
        name: "max_bytes_for_level_multiplier_additional",
        get: |o| {
            let items: Vec<String> = o
                .max_bytes_for_level_multiplier_additional
                .iter()
                .map(f64::to_string)
                .collect();
            items.join(":")
        },
        set: |o, v| {
            o.max_bytes_for_level_multiplier_additional = if v.is_empty() {
                Vec::new()
            } else {
                v.split(':')
                    .map(|m| m.parse().map_err(|e| format!("{e}")))
                    .collect::<Result<_, String>>()?
            };
            Ok(())
        },
    },
    // Added after `max_bytes_for_level_multiplier_additional` (absent: off).
    Field {
        name: "tiering",
        get: |o| match o.tiering {
            None => "off".to_string(),
            Some(t) => tiering_text(&t),
        },
        set: |o, v| {
            o.tiering = match v {
                "off" => None,
                v => Some(tiering(v)?),
            };
            Ok(())
        },
    },
    // Added after `tiering` (absent: 0, off).
    field!(Options, periodic_compaction_seconds),
    // Added after `periodic_compaction_seconds` (absent: false, values without
    // deadlines).
    field!(Options, expiring_values),
];

/// `tiering`'s value: the four first items always, the others (added later) only
/// when they differ from their defaults, so older files read the same.
fn tiering_text(t: &Tiering) -> String {
    let mode = match t.mode {
        TieringMode::Fat => "fat",
        TieringMode::HotRap => "hotrap",
        TieringMode::TimeAware { .. } => "time",
    };
    let mut text = format!(
        "mode:{mode},fast_path:{},slow_path:{},fd_size:{}",
        t.fast_path, t.slow_path, t.fd_size
    );
    if let TieringMode::TimeAware { window } = t.mode {
        // Whole milliseconds as such (what `validate` allows); any other duration in
        // nanoseconds, so that every value reads back.
        match u64::try_from(window.as_millis()) {
            Ok(ms) if window.subsec_nanos() % 1_000_000 == 0 => {
                text.push_str(&format!(",window_ms:{ms}"))
            }
            _ => text.push_str(&format!(",window_ns:{}", window.as_nanos())),
        }
    }
    if let HotSetLimit::Fixed(n) = t.hot_set_limit {
        text.push_str(&format!(",hot_set_limit:{n}"));
    }
    for (name, on) in [
        ("retain", t.retain),
        ("promote_by_compaction", t.promote_by_compaction),
        ("promote_by_flush", t.promote_by_flush),
        ("hotness_check", t.hotness_check),
        ("hot_aware_pick", t.hot_aware_pick),
    ] {
        if !on {
            text.push_str(&format!(",{name}:false"));
        }
    }
    text
}

/// Parses `tiering`'s `key:value` list, as [`delayed_compaction`]'s.
fn tiering(v: &str) -> Result<Tiering, String> {
    let num = |key: &str, n: &str| -> Result<u64, String> {
        n.parse().map_err(|e| format!("{key}: {e}"))
    };
    let path = |key: &str, n: &str| -> Result<u32, String> {
        n.parse().map_err(|e| format!("{key}: {e}"))
    };
    let flag = |key: &str, b: &str| -> Result<bool, String> {
        b.parse().map_err(|e| format!("{key}: {e}"))
    };
    let mut t = Tiering::fat();
    let mut window = None;
    for item in v.split(',') {
        match item.split_once(':') {
            Some(("mode", "fat")) => t.mode = TieringMode::Fat,
            Some(("mode", "hotrap")) => t.mode = TieringMode::HotRap,
            Some(("mode", "time")) => {
                t.mode = TieringMode::TimeAware {
                    window: Duration::ZERO,
                }
            }
            Some(("fast_path", n)) => t.fast_path = path("fast_path", n)?,
            Some(("slow_path", n)) => t.slow_path = path("slow_path", n)?,
            Some(("fd_size", n)) => t.fd_size = num("fd_size", n)?,
            Some(("window_ms", n)) => window = Some(Duration::from_millis(num("window_ms", n)?)),
            Some(("window_ns", n)) => {
                let ns: u128 = n.parse().map_err(|e| format!("window_ns: {e}"))?;
                let secs = u64::try_from(ns / 1_000_000_000)
                    .map_err(|_| format!("window_ns: {ns} is too large"))?;
                // The remainder is below 10^9.
                let nanos = (ns % 1_000_000_000) as u32;
                window = Some(Duration::new(secs, nanos));
            }
            Some(("hot_set_limit", n)) => {
                t.hot_set_limit = HotSetLimit::Fixed(num("hot_set_limit", n)?)
            }
            Some(("retain", b)) => t.retain = flag("retain", b)?,
            Some(("promote_by_compaction", b)) => {
                t.promote_by_compaction = flag("promote_by_compaction", b)?
            }
            Some(("promote_by_flush", b)) => t.promote_by_flush = flag("promote_by_flush", b)?,
            Some(("hotness_check", b)) => t.hotness_check = flag("hotness_check", b)?,
            Some(("hot_aware_pick", b)) => t.hot_aware_pick = flag("hot_aware_pick", b)?,
            _ => {
                return Err(format!(
                    "expected off or mode:fat|hotrap|time,fast_path:<n>,slow_path:<n>,\
                     fd_size:<n>[,window_ms:<n>][,hot_set_limit:<n>][,retain:false]\
                     [,promote_by_compaction:false][,promote_by_flush:false]\
                     [,hotness_check:false][,hot_aware_pick:false], found `{item}`"
                ))
            }
        }
    }
    match (t.mode, window) {
        (TieringMode::TimeAware { .. }, Some(window)) => t.mode = TieringMode::TimeAware { window },
        (TieringMode::TimeAware { .. }, None) => return Err("mode:time needs window_ms".into()),
        (_, Some(_)) => return Err("window_ms needs mode:time".into()),
        (_, None) => {}
    }
    Ok(t)
}

/// Parses `query_compaction`'s `key:value` list, as [`delayed_compaction`]'s.
fn query_compaction(v: &str) -> Result<QueryCompaction, String> {
    fn num<T: std::str::FromStr>(key: &str, n: &str) -> Result<T, String>
    where
        T::Err: std::fmt::Display,
    {
        n.parse().map_err(|e| format!("{key}: {e}"))
    }
    let mut q = QueryCompaction::new();
    for item in v.split(',') {
        match item.split_once(':') {
            Some(("selectivity", f)) => q.selectivity = num("selectivity", f)?,
            Some(("start_level", n)) => q.start_level = num("start_level", n)?,
            Some(("min_levels", n)) => q.min_levels = num("min_levels", n)?,
            Some(("min_bytes", n)) => q.min_bytes = num("min_bytes", n)?,
            Some(("profit", f)) => q.profit = num("profit", f)?,
            Some(("buffer", n)) => q.max_buffer_bytes = num("buffer", n)?,
            Some(("background", b)) => q.background = num("background", b)?,
            Some(("min_obsolete", f)) => q.min_obsolete = num("min_obsolete", f)?,
            _ => {
                return Err(format!(
                    "expected off or selectivity:<f>,start_level:<n>,min_levels:<n>,\
                     min_bytes:<n>,profit:<f>,buffer:<n>,background:<bool>,\
                     min_obsolete:<f>, found `{item}`"
                ))
            }
        }
    }
    Ok(q)
}

/// Parses `delayed_compaction`'s `key:value` list (`vct:12,vsmt:5,garbage:0.1`): keys
/// in any order, a key left out takes its default (files written before `vsmt` and
/// `garbage` existed name `vct` only), an unknown key is an error (a newer writer's
/// setting this build would ignore changes what the database does).
fn delayed_compaction(v: &str) -> Result<DelayedCompaction, String> {
    let mut d = DelayedCompaction::new();
    for item in v.split(',') {
        match item.split_once(':') {
            Some(("vct", n)) => d = d.with_vct(n.parse().map_err(|e| format!("vct: {e}"))?),
            Some(("vsmt", n)) => d = d.with_vsmt(n.parse().map_err(|e| format!("vsmt: {e}"))?),
            Some(("garbage", r)) => {
                let r = r.parse().map_err(|e| format!("garbage: {e}"))?;
                d = d.with_max_garbage_ratio(r)
            }
            _ => {
                return Err(format!(
                    "expected off or vct:<n>,vsmt:<n>,garbage:<ratio>, found `{item}`"
                ))
            }
        }
    }
    Ok(d)
}

/// `[LevelOptions "i"]`, in file order. Append new options at the end.
const LEVEL_FIELDS: &[Field<LevelOptions>] = &[
    field!(LevelOptions, block_size),
    field!(LevelOptions, block_restart_interval),
    enum_field!(
        LevelOptions,
        compression,
        compression_name,
        [Compression::None, Compression::Lz4, Compression::Zstd]
    ),
    field!(LevelOptions, bloom_bits_per_key),
];

/// `[DbPath "i"]`, in file order. Append new keys at the end.
const PATH_FIELDS: &[Field<DbPath>] = &[
    Field {
        name: "path",
        get: |p| p.path.display().to_string(),
        set: |p, v| {
            p.path = v.into();
            Ok(())
        },
    },
    field!(DbPath, target_size),
];

fn compression_name(c: Compression) -> &'static str {
    match c {
        Compression::None => "none",
        Compression::Lz4 => "lz4",
        Compression::Zstd => "zstd",
    }
}

fn priority_name(p: CompactionPriority) -> &'static str {
    match p {
        CompactionPriority::MinOverlappingRatio => "min_overlapping_ratio",
        CompactionPriority::OldestSmallestSeqFirst => "oldest_smallest_seq_first",
    }
}

fn recovery_name(m: WalRecoveryMode) -> &'static str {
    match m {
        WalRecoveryMode::TolerateCorruptedTailRecords => "tolerate_corrupted_tail_records",
        WalRecoveryMode::AbsoluteConsistency => "absolute_consistency",
        WalRecoveryMode::PointInTime => "point_in_time",
    }
}

/// The `OPTIONS` text of `opts` (see the module's format). Deterministic.
#[cfg_attr(
    not(feature = "internals"),
    allow(
        dead_code,
        reason = "for tests and the `options` fuzz check; the engine stores families too"
    )
)]
pub fn encode(opts: &Options) -> String {
    encode_with_families(opts, &BTreeMap::new())
}

/// [`encode`], then a `[CFOptions]` section (and its `[CFLevelOptions]`) for each of
/// `families`, in name order.
pub fn encode_with_families(opts: &Options, families: &BTreeMap<String, CfOptions>) -> String {
    let mut out = String::from(
        "# Strata OPTIONS file: the options of the last open, checked at the next one.\n",
    );
    // Writing to a String cannot fail.
    let _ = write!(
        out,
        "[Version]\nstrata_options_version={OPTIONS_VERSION}\n\n[DBOptions]\n"
    );
    for f in DB_FIELDS {
        let _ = writeln!(out, "{}={}", f.name, (f.get)(opts));
    }
    if let Some(op) = &opts.merge_operator {
        let _ = writeln!(out, "{MERGE_OPERATOR}={}", op.name());
    }
    let defaults = Options::default();
    for f in OPTIONAL_DB_FIELDS {
        let value = (f.get)(opts);
        if value != (f.get)(&defaults) {
            let _ = writeln!(out, "{}={value}", f.name);
        }
    }
    for (i, level) in opts.levels.iter().enumerate() {
        let _ = write!(out, "\n[LevelOptions \"{i}\"]\n");
        for f in LEVEL_FIELDS {
            let _ = writeln!(out, "{}={}", f.name, (f.get)(level));
        }
    }
    for (i, path) in opts.db_paths.iter().enumerate() {
        let _ = write!(out, "\n[DbPath \"{i}\"]\n");
        for f in PATH_FIELDS {
            let _ = writeln!(out, "{}={}", f.name, (f.get)(path));
        }
    }
    for (name, cf) in families {
        encode_family(&mut out, name, cf);
    }
    out
}

/// Appends family `name`'s sections: its per-tree fields as `[DBOptions]` spells
/// them (the optional ones only where they differ from their defaults), its merge
/// operator's name, then one `[CFLevelOptions]` per level entry.
fn encode_family(out: &mut String, name: &str, cf: &CfOptions) {
    let quoted = family::quote(name);
    let opts = Options::default().with_cf_options(cf);
    let defaults = Options::default();
    let _ = write!(out, "\n[{} {quoted}]\n", family::SECTION);
    let per_tree = |f: &&Field<Options>| CfOptions::FIELD_NAMES.contains(&f.name);
    for f in DB_FIELDS.iter().filter(per_tree) {
        let _ = writeln!(out, "{}={}", f.name, (f.get)(&opts));
    }
    if let Some(op) = &cf.merge_operator {
        let _ = writeln!(out, "{MERGE_OPERATOR}={}", op.name());
    }
    for f in OPTIONAL_DB_FIELDS.iter().filter(per_tree) {
        let value = (f.get)(&opts);
        if value != (f.get)(&defaults) {
            let _ = writeln!(out, "{}={value}", f.name);
        }
    }
    for (i, level) in cf.levels.iter().enumerate() {
        let _ = write!(out, "\n[{} {quoted} \"{i}\"]\n", family::LEVEL_SECTION);
        for f in LEVEL_FIELDS {
            let _ = writeln!(out, "{}={}", f.name, (f.get)(level));
        }
    }
}

/// Parses `OPTIONS` text. Errors name the file as `OPTIONS`; see [`load`] for the
/// full path.
///
/// # Errors
/// [`Error::Corruption`] naming the byte offset and line of a malformed line (not a
/// header, comment or `key=value`; a bad value for a known key; a duplicate key or
/// section; level sections out of order; a missing or late `[Version]`);
/// [`Error::InvalidArgument`] for a `strata_options_version` newer than this build
/// reads.
#[cfg_attr(
    not(feature = "internals"),
    allow(
        dead_code,
        reason = "for tests and the `options` fuzz check; `load` names the file"
    )
)]
pub fn decode(text: &str) -> Result<StoredOptions> {
    decode_file(text, Path::new(FILE_NAME))
}

/// Where entries go while decoding.
enum Section {
    Version,
    Db,
    Level(usize),
    Path(usize),
    /// `[CFOptions "name"]`.
    Family(String),
    /// `[CFLevelOptions "name" "i"]`.
    FamilyLevel(String, usize),
    Unknown(String),
}

/// A family's section while decoding.
struct FamilyDraft {
    /// Per-tree fields set on the defaults of [`Options`].
    options: Options,
    levels: Vec<LevelOptions>,
    merge_operator: Option<String>,
}

fn decode_file(text: &str, path: &Path) -> Result<StoredOptions> {
    let mut options = Options::default();
    let mut levels: Vec<LevelOptions> = Vec::new();
    let mut paths: Vec<DbPath> = Vec::new();
    let mut unknown = Vec::new();
    let mut version: Option<u32> = None;
    let mut merge_operator: Option<String> = None;
    let mut families: BTreeMap<String, FamilyDraft> = BTreeMap::new();
    let mut section: Option<Section> = None;
    // Known sections and (section, key) pairs seen so far, to refuse duplicates.
    let mut seen: HashSet<String> = HashSet::new();
    let mut offset = 0usize;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let at = offset as u64;
        offset += raw.len();
        let bad =
            |reason: String| Error::corruption(path, at, format!("line=`{}`: {reason}", i + 1));
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let header = header
                .strip_suffix(']')
                .ok_or_else(|| bad(format!("unterminated section header `{line}`")))?
                .trim();
            if matches!(section, Some(Section::Version)) && version.is_none() {
                return Err(bad("[Version] lacks strata_options_version".to_string()));
            }
            let next = parse_header(header, levels.len(), paths.len()).map_err(bad)?;
            if version.is_none() && !matches!(next, Section::Version) {
                return Err(bad(format!(
                    "the first section must be [Version], not `[{header}]`"
                )));
            }
            if !matches!(next, Section::Unknown(_)) && !seen.insert(header.to_string()) {
                return Err(bad(format!("duplicate section `[{header}]`")));
            }
            match &next {
                Section::Level(_) => levels.push(LevelOptions::default()),
                Section::Path(_) => paths.push(DbPath::new("", 0)),
                Section::Family(name) => {
                    let draft = FamilyDraft {
                        options: Options::default(),
                        levels: Vec::new(),
                        merge_operator: None,
                    };
                    if families.insert(name.clone(), draft).is_some() {
                        return Err(bad(format!("duplicate section `[{header}]`")));
                    }
                }
                Section::FamilyLevel(name, n) => {
                    let draft = families.get_mut(name).ok_or_else(|| {
                        bad(format!("`[{header}]` before the family's [CFOptions]"))
                    })?;
                    if *n != draft.levels.len() {
                        return Err(bad(format!(
                            "expected level \"{}\" of the family, got `[{header}]`",
                            draft.levels.len()
                        )));
                    }
                    draft.levels.push(LevelOptions::default());
                }
                _ => {}
            }
            section = Some(next);
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .filter(|(k, _)| !k.is_empty())
            .ok_or_else(|| bad(format!("expected `[section]` or `key=value`, got `{line}`")))?;
        let Some(sec) = &section else {
            return Err(bad("entry before the first section".to_string()));
        };
        let known = match sec {
            Section::Version if key == "strata_options_version" => {
                let v: u32 = value
                    .parse()
                    .ok()
                    .filter(|&v| v > 0)
                    .ok_or_else(|| bad(format!("bad strata_options_version=`{value}`")))?;
                if v > OPTIONS_VERSION {
                    return Err(Error::InvalidArgument(format!(
                        "options file `{}` has strata_options_version=`{v}`, newer than this \
                         build reads ({OPTIONS_VERSION}): open it with a newer Strata",
                        path.display()
                    )));
                }
                version = Some(v);
                true
            }
            Section::Version | Section::Unknown(_) => false,
            Section::Db if key == MERGE_OPERATOR => {
                options.merge_operator = merge::builtin_by_name(value);
                merge_operator = Some(value.to_string());
                true
            }
            Section::Db => {
                set(DB_FIELDS, &mut options, key, value).map_err(bad)?
                    || set(OPTIONAL_DB_FIELDS, &mut options, key, value).map_err(bad)?
            }
            Section::Level(n) => match levels.get_mut(*n) {
                Some(level) => set(LEVEL_FIELDS, level, key, value).map_err(bad)?,
                None => false,
            },
            Section::Path(n) => match paths.get_mut(*n) {
                Some(path) => set(PATH_FIELDS, path, key, value).map_err(bad)?,
                None => false,
            },
            Section::Family(name) => match families.get_mut(name) {
                Some(draft) if key == MERGE_OPERATOR => {
                    draft.options.merge_operator = merge::builtin_by_name(value);
                    draft.merge_operator = Some(value.to_string());
                    true
                }
                Some(draft) if CfOptions::FIELD_NAMES.contains(&key) => {
                    set(DB_FIELDS, &mut draft.options, key, value).map_err(bad)?
                        || set(OPTIONAL_DB_FIELDS, &mut draft.options, key, value).map_err(bad)?
                }
                _ => false,
            },
            Section::FamilyLevel(name, n) => {
                match families.get_mut(name).and_then(|d| d.levels.get_mut(*n)) {
                    Some(level) => set(LEVEL_FIELDS, level, key, value).map_err(bad)?,
                    None => false,
                }
            }
        };
        let section_name = match sec {
            Section::Version => "Version".to_string(),
            Section::Db => "DBOptions".to_string(),
            Section::Level(n) => format!("LevelOptions \"{n}\""),
            Section::Path(n) => format!("DbPath \"{n}\""),
            Section::Family(name) => format!("{} {}", family::SECTION, family::quote(name)),
            Section::FamilyLevel(name, n) => {
                format!("{} {} \"{n}\"", family::LEVEL_SECTION, family::quote(name))
            }
            Section::Unknown(s) => s.clone(),
        };
        if known {
            if !seen.insert(format!("{section_name}\n{key}")) {
                return Err(bad(format!("duplicate key `{key}`")));
            }
        } else {
            unknown.push(UnknownEntry {
                section: section_name,
                key: key.to_string(),
                value: value.to_string(),
            });
        }
    }
    let version = version.ok_or_else(|| {
        Error::corruption(
            path,
            offset as u64,
            "missing [Version] section with strata_options_version",
        )
    })?;
    if !levels.is_empty() {
        options.levels = levels;
    }
    options.db_paths = paths;
    let families = families
        .into_iter()
        .map(|(name, draft)| {
            let mut options = draft.options;
            if !draft.levels.is_empty() {
                options.levels = draft.levels;
            }
            let family = StoredFamily {
                options: options.cf_options(),
                merge_operator: draft.merge_operator,
            };
            (name, family)
        })
        .collect();
    Ok(StoredOptions {
        version,
        options,
        unknown,
        merge_operator,
        families,
    })
}

/// Parses the text between `[` and `]`; `next_level` and `next_path` are the indexes
/// the next `LevelOptions` and `DbPath` sections must have.
fn parse_header(
    header: &str,
    next_level: usize,
    next_path: usize,
) -> std::result::Result<Section, String> {
    let (name, arg) = match header.split_once(char::is_whitespace) {
        Some((name, arg)) => (name, Some(arg.trim())),
        None => (header, None),
    };
    match (name, arg) {
        ("Version", None) => Ok(Section::Version),
        ("DBOptions", None) => Ok(Section::Db),
        ("LevelOptions", Some(arg)) => {
            indexed(header, "LevelOptions", arg, next_level).map(Section::Level)
        }
        ("DbPath", Some(arg)) => indexed(header, "DbPath", arg, next_path).map(Section::Path),
        (family::SECTION, Some(arg)) => match family::unquote_all(arg).as_deref() {
            Some([name]) if !name.is_empty() => Ok(Section::Family(name.clone())),
            _ => Err(format!("malformed section header `[{header}]`")),
        },
        (family::LEVEL_SECTION, Some(arg)) => match family::unquote_all(arg).as_deref() {
            Some([name, n]) if !name.is_empty() => n
                .parse::<usize>()
                .map(|n| Section::FamilyLevel(name.clone(), n))
                .map_err(|_| format!("bad index in `[{header}]`")),
            _ => Err(format!("malformed section header `[{header}]`")),
        },
        ("Version" | "DBOptions" | "LevelOptions" | "DbPath", _)
        | (family::SECTION | family::LEVEL_SECTION, None) => {
            Err(format!("malformed section header `[{header}]`"))
        }
        _ => Ok(Section::Unknown(header.to_string())),
    }
}

/// The index of section `[name "arg"]`, which must be `expected` (sections of one
/// name come in order, without gaps).
fn indexed(
    header: &str,
    name: &str,
    arg: &str,
    expected: usize,
) -> std::result::Result<usize, String> {
    let n = arg
        .strip_prefix('"')
        .and_then(|a| a.strip_suffix('"'))
        .and_then(|a| a.parse::<usize>().ok())
        .ok_or_else(|| format!("bad index in `[{header}]`"))?;
    if n != expected {
        return Err(format!(
            "expected [{name} \"{expected}\"], got `[{header}]`"
        ));
    }
    Ok(n)
}

/// Sets `key` of `target` from `fields`; `Ok(false)` iff the key is unknown.
fn set<T>(
    fields: &[Field<T>],
    target: &mut T,
    key: &str,
    value: &str,
) -> std::result::Result<bool, String> {
    match fields.iter().find(|f| f.name == key) {
        Some(f) => (f.set)(target, value)
            .map(|()| true)
            .map_err(|e| format!("bad value for {key}=`{value}`: {e}")),
        None => Ok(false),
    }
}

/// Reads and decodes `dir/OPTIONS`. `Ok(None)` if there is none, or if it holds the
/// `Debug` text of a Strata that predates this format (it begins `Options {`).
///
/// # Errors
/// I/O errors; [`decode`]'s errors, naming the file's full path; `Corruption` for
/// text that is not UTF-8.
pub fn load(fs: &dyn FileSystem, dir: &Path) -> Result<Option<StoredOptions>> {
    let path = dir.join(FILE_NAME);
    if !fs.exists(&path) {
        return Ok(None);
    }
    let bytes = read_to_vec(fs, &path)?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        Error::corruption(&path, e.valid_up_to() as u64, "options file is not UTF-8")
    })?;
    if text.starts_with("Options {") {
        return Ok(None);
    }
    decode_file(text, &path).map(Some)
}

/// Writes `opts` and the options of `families` (every column family but the default
/// one) to `dir/OPTIONS` atomically (temp file, fsync, rename, directory fsync).
///
/// # Errors
/// I/O errors; the previous file is then intact.
pub fn store(
    fs: &dyn FileSystem,
    dir: &Path,
    opts: &Options,
    families: &BTreeMap<String, CfOptions>,
) -> Result<()> {
    let text = encode_with_families(opts, families);
    write_file_atomic(fs, dir, FILE_NAME, text.as_bytes())
}

/// `slot`, or, where it holds no operator, the one `recorded` names
/// ([`merge::recorded`]): a family reopened without its merge operator keeps the one
/// its operands were written for.
pub(crate) fn adopt_recorded_operator(
    slot: &mut Option<std::sync::Arc<dyn merge::MergeOperator>>,
    recorded: Option<&str>,
) {
    if slot.is_none() {
        *slot = recorded.map(merge::recorded);
    }
}

/// Checks that a database may be opened with `new`, given the options of its last
/// open (`stored`, if its `OPTIONS` file was read) and its deepest non-empty level
/// (`None` for a database without files).
///
/// The rules, one per option that can conflict with data already written:
/// - `num_levels` must exceed the deepest non-empty level: the MANIFEST places every
///   table at a level, and a level beyond `num_levels` would be unreachable. Growing
///   or shrinking it down to that bound is fine.
/// - `merge_operator`, if set, must have the name the file records, if it records
///   one: operands are only meaningful to the operator that wrote them. Opening
///   without an operator gives the family the recorded one
///   (`adopt_recorded_operator`; for an application's operator, a stand-in that
///   refuses merges, so reads of keys with operands fail naming it).
///
/// Every other option may change between opens: sizes, triggers, limits, threads,
/// priorities and partitioning steer only future work; recovery modes and checks act
/// only at open or on read; and each [`LevelOptions`] entry shapes only the tables
/// written from now on, every table being self-describing (block size, restart
/// interval, filter and per-block codec are in the file). An option added later whose
/// change would misread existing data (e.g. a column-group layout) adds its rule here,
/// comparing against `stored`.
///
/// # Errors
/// [`Error::InvalidArgument`] naming the option, its new value and what the database
/// needs, e.g. ``num_levels=`3` is less than the database's deepest level L5 (needs
/// >= 6)``.
pub fn check_compatible(
    stored: Option<&StoredOptions>,
    new: &Options,
    deepest_nonempty_level: Option<usize>,
) -> Result<()> {
    if let Some(deepest) = deepest_nonempty_level.filter(|&d| d >= new.num_levels) {
        let previous = stored
            .map(|s| {
                format!(
                    "; it was last opened with num_levels=`{}`",
                    s.options.num_levels
                )
            })
            .unwrap_or_default();
        return Err(Error::InvalidArgument(format!(
            "num_levels=`{}` is less than the database's deepest level L{deepest} \
             (needs >= {}){previous}",
            new.num_levels,
            deepest + 1
        )));
    }
    check_operator(
        "",
        "the database's",
        stored.and_then(|s| s.merge_operator.as_deref()),
        new,
    )
}

/// [`check_compatible`]'s rule for the merge operator of `new`, whose recorded name
/// is `recorded`; `prefix` and `whose` name the family in the error.
fn check_operator(prefix: &str, whose: &str, recorded: Option<&str>, new: &Options) -> Result<()> {
    if let (Some(old), Some(op)) = (recorded, &new.merge_operator) {
        if op.name() != old {
            return Err(Error::InvalidArgument(format!(
                "{prefix}merge_operator=`{}` differs from {whose} `{old}`: operands written \
                 for one operator would be merged by another",
                op.name()
            )));
        }
    }
    Ok(())
}

/// [`check_compatible`] for column family `name` (not the default one), opened with
/// `new` (its whole configuration), whose `OPTIONS` section is `stored` (if the file
/// has one) and whose deepest non-empty level is `deepest_nonempty_level`.
///
/// # Errors
/// [`Error::InvalidArgument`] naming the family and the option.
pub(crate) fn check_family_compatible(
    name: &str,
    stored: Option<&StoredFamily>,
    new: &Options,
    deepest_nonempty_level: Option<usize>,
) -> Result<()> {
    if let Some(d) = deepest_nonempty_level.filter(|&d| d >= new.num_levels) {
        return Err(Error::InvalidArgument(format!(
            "column family `{name}`: num_levels=`{}` but its level {d} holds files \
             (reopen it with num_levels >= {})",
            new.num_levels,
            d + 1
        )));
    }
    let recorded = stored.and_then(|s| s.merge_operator.as_deref());
    let prefix = format!("column family `{name}`: ");
    check_operator(&prefix, "the family's", recorded, new)
}

mod family;

#[cfg(test)]
mod tests;
