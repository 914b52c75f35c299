//! How each engine applies the shared [`EngineFlags`], flag by flag, engine-neutrally.
//!
//! Role: `bench` and `ycsb` put [`of`]'s list into every JSON result (`option_mapping`),
//! so a result says not only which flags were given but what each engine made of them:
//! set exactly, set approximately (the `engine` text says how), or not applicable
//! (the engine has no such option; the text says what it does instead). Entries with
//! `flag` `-` are settings the adapter makes that no flag controls.
//!
//! Kept outside the feature gates, so the descriptions are compiled and tested in every
//! build; the test `every_flag_is_described_for_every_engine` fails when a new flag is
//! added without saying what each engine does with it. The RocksDB entries describe
//! `rocksdb.rs`, the fjall entries are derived from the same [`FjallPlan`] `fjall.rs`
//! applies.

use super::fjall_options::{self as fj, FjallCodec, FjallPlan};
use super::options::{CompactionStyleFlag, EngineFlags, EngineKind, TieringFlag};
use serde::Serialize;

/// How faithfully an engine applies a flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fidelity {
    /// The engine has the same option and gets the flag's value.
    Exact,
    /// Applied through a different mechanism or a derived value; `engine` says how.
    Approximate,
    /// The engine has no such option; `engine` says what it does instead.
    Unmapped,
    /// Set by the adapter with no flag (`flag` is `-`).
    Adapter,
}

/// One flag (or adapter setting) of one engine.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OptionMapping {
    /// The flag (`write_buffer_size`), or `-` for an adapter setting.
    pub flag: String,
    /// The flag's value as given (JSON text), or empty for an adapter setting.
    pub value: String,
    /// How faithfully it is applied.
    pub fidelity: Fidelity,
    /// What the engine is given, or what it does instead.
    pub engine: String,
}

/// Flags that select and place the database rather than configure an engine.
const HARNESS_FLAGS: &[&str] = &["db", "engine", "use_existing_db"];

/// The mapping of every engine flag for the engine `flags.engine`, by flag name,
/// followed by the adapter's own settings. For fjall with flags it cannot honour (see
/// [`FjallPlan::from_flags`]), one `Unmapped` entry carries the error.
pub fn of(flags: &EngineFlags) -> Vec<OptionMapping> {
    let fjall_plan = match flags.engine {
        EngineKind::Fjall => match FjallPlan::from_flags(flags) {
            Ok(p) => Some(p),
            Err(e) => {
                return vec![OptionMapping {
                    flag: "-".into(),
                    value: String::new(),
                    fidelity: Fidelity::Unmapped,
                    engine: format!("fjall refuses these flags: {e}"),
                }]
            }
        },
        _ => None,
    };
    let values = match serde_json::to_value(flags) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    let mut out: Vec<OptionMapping> = values
        .iter()
        .filter(|(name, _)| !HARNESS_FLAGS.contains(&name.as_str()))
        .map(|(name, value)| {
            let (fidelity, engine) = match (&flags.engine, &fjall_plan) {
                (EngineKind::Strata, _) => strata(name, flags),
                (EngineKind::Rocksdb, _) => rocksdb(name, flags),
                (EngineKind::Fjall, Some(p)) => fjall(name, flags, p),
                (EngineKind::Fjall, None) => (Fidelity::Unmapped, String::new()),
            };
            OptionMapping {
                flag: name.clone(),
                value: value.to_string(),
                fidelity,
                engine,
            }
        })
        .collect();
    let keyspace = if flags.num_column_families > 1 {
        format!(
            "keyspaces `{}`, `cf1` .. `cf{}` (--num_column_families)",
            fj::KEYSPACE,
            flags.num_column_families - 1
        )
    } else {
        format!("one keyspace `{}` holds every key", fj::KEYSPACE)
    };
    let adapter: &[&str] = match flags.engine {
        EngineKind::Strata => &["merge operator strata::merge::U64Add (strata.u64_add)"],
        EngineKind::Rocksdb => &[
            "merge operator: set_merge_operator_associative(\"strata.u64_add\") with \
             U64Add's semantics (the crate's callback; RocksDB's built-in C++ \
             UInt64AddOperator is not exposed by the rocksdb crate)",
            "block-based table",
            "level_compaction_dynamic_level_bytes=false (static level sizes, as Strata)",
            "WAL on (WriteOptions::disable_wal(false))",
        ],
        EngineKind::Fjall => &[
            &keyspace,
            "journal_compression(None): the WAL is not compressed, as Strata's and RocksDB's",
            "fjall defaults kept: index blocks of L0-L1 and filter blocks of L0 pinned \
             outside the cache, no data-block hash index, no key-value separation, \
             max_journaling_size 512 MiB; filters on every level \
             (expect_point_read_hits=false)",
            "`metrics` feature on, for the block-load and filter counters",
            "no merge operator (fjall 3.x has none): merge and mergerandom are refused",
        ],
    };
    let universal = [
        "compaction_options_universal: the fields no flag names keep RocksDB's defaults \
         (stop_style total size, compression_size_percent -1, max_read_amp -1, \
         allow_trivial_move false, incremental false, reduce_file_locking true)",
    ];
    let extra: &[&str] = match (flags.engine, flags.compaction_style) {
        (EngineKind::Rocksdb, CompactionStyleFlag::Universal) => &universal,
        _ => &[],
    };
    out.extend(adapter.iter().chain(extra).map(|a| OptionMapping {
        flag: "-".into(),
        value: String::new(),
        fidelity: Fidelity::Adapter,
        engine: (*a).to_string(),
    }));
    out
}

/// The flags that tune one tiering mode (HotRAP's limit and ablations, time-aware
/// tiering's window).
const TIERING_FLAGS: [&str; 8] = [
    "time_aware_window",
    "hot_set_limit",
    "auto_tune",
    "no_retain",
    "no_hotness_check",
    "no_promote_by_compaction",
    "no_promote_by_flush",
    "no_hot_aware_pick",
];

fn exact(s: impl Into<String>) -> (Fidelity, String) {
    (Fidelity::Exact, s.into())
}

fn approx(s: impl Into<String>) -> (Fidelity, String) {
    (Fidelity::Approximate, s.into())
}

fn unmapped(s: impl Into<String>) -> (Fidelity, String) {
    (Fidelity::Unmapped, s.into())
}

/// Strata reads every flag into `strata::Options` (`EngineFlags::strata_options`), but
/// `--device`, which becomes the file system it opens with.
fn strata(flag: &str, flags: &EngineFlags) -> (Fidelity, String) {
    if flag == "device" {
        return exact("DbBuilder::file_system(DeviceFs over PosixFs, one model per path)");
    }
    if flag == "num_column_families" {
        return exact(families_text(
            flags.num_column_families,
            "Db::create_cf(name, Options::cf_options()) where missing (Db::open reopens \
             every family with the same per-tree options); put_cf/get_cf/delete_cf/merge_cf; \
             a batch is one WriteBatch of _cf records, atomic across families; delete_range \
             is one tombstone per family in one batch; flush is Db::flush (every family), \
             compact is compact_range_cf per family",
            "counters database-wide (Db::stats); per-level figures summed over the \
             families (Db::cf_stats), the text table lists each family's own",
        ));
    }
    if flag == "transaction_db" {
        return exact(
            "when true, each write of the fills and readrandomwriterandom is a \
             Db::transaction (snapshot at begin; get_for_update_cf where the benchmark \
             reads; put_cf/delete_cf in each key's family; commit retried on \
             ErrorKind::Conflict); no special open",
        );
    }
    if flag == "delayed_compaction" {
        return exact(match flags.delayed_compaction {
            true => format!(
                "Options::delayed_compaction = Some(DelayedCompaction::new().with_vct({})\
                 .with_vsmt({}).with_max_garbage_ratio({})) (experimental)",
                flags.vct, flags.vsmt, flags.virtual_garbage_ratio
            ),
            false => "Options::delayed_compaction = None (every compaction rewrites)".into(),
        });
    }
    if flag == "query_compaction" {
        return exact(match flags.query_compaction {
            true => format!(
                "Options::query_compaction = Some(QueryCompaction::new()\
                 .with_selectivity({}).with_start_level({}).with_min_levels({})\
                 .with_min_bytes({}).with_profit({}).with_max_buffer_bytes({})\
                 .with_background({}).with_min_obsolete({})) (experimental)",
                flags.query_compaction_selectivity,
                flags.query_compaction_start_level,
                flags.query_compaction_min_levels,
                flags.query_compaction_min_bytes,
                flags.query_compaction_profit,
                flags.query_compaction_buffer,
                flags.query_compaction_background,
                flags.query_compaction_min_obsolete
            ),
            false => "Options::query_compaction = None (scans write nothing)".into(),
        });
    }
    if flag == "tiering" || flag == "fd_size" {
        return exact(match flags.tiering {
            TieringFlag::Fat => format!(
                "Options::tiering = Some(Tiering::fat().with_fd_size({})): db_paths[0] fast, \
                 db_paths[1] slow (experimental)",
                flags.fd_size
            ),
            TieringFlag::Hotrap => format!(
                "Options::tiering = Some(Tiering::hotrap().with_fd_size({})): db_paths[0] \
                 fast, db_paths[1] slow; RALT, retention, promotion cache, promotion by compaction \
                 and by flush (experimental)",
                flags.fd_size
            ),
            TieringFlag::Time => format!(
                "Options::tiering = Some(Tiering::time_aware({} s).with_fd_size({})): \
                 db_paths[0] fast, db_paths[1] slow; records written within the window stay \
                 fast, no promotion (experimental)",
                flags.time_aware_window, flags.fd_size
            ),
            TieringFlag::Off => "Options::tiering = None (levels placed by db_paths)".into(),
        });
    }
    if TIERING_FLAGS.contains(&flag) {
        let mode = match flag {
            "time_aware_window" => TieringFlag::Time,
            _ => TieringFlag::Hotrap,
        };
        if flags.tiering != mode {
            return exact(format!(
                "Options::tiering: unused, applies to --tiering={} (a value off its default \
                 is refused)",
                if mode == TieringFlag::Time {
                    "time"
                } else {
                    "hotrap"
                }
            ));
        }
        let t = flags.strata_tiering().ok().flatten().unwrap_or_default();
        return exact(match flag {
            "time_aware_window" => format!("Options::tiering's Tiering::mode = {:?}", t.mode),
            "hot_set_limit" | "auto_tune" => format!(
                "Options::tiering's Tiering::hot_set_limit = {:?}",
                t.hot_set_limit
            ),
            "no_retain" => format!("Options::tiering's Tiering::retain = {}", t.retain),
            "no_hot_aware_pick" => format!(
                "Options::tiering's Tiering::hot_aware_pick = {}",
                t.hot_aware_pick
            ),
            "no_hotness_check" => format!(
                "Options::tiering's Tiering::hotness_check = {}",
                t.hotness_check
            ),
            "no_promote_by_compaction" => {
                format!(
                    "Options::tiering's Tiering::promote_by_compaction = {}",
                    t.promote_by_compaction
                )
            }
            _ => format!(
                "Options::tiering's Tiering::promote_by_flush = {}",
                t.promote_by_flush
            ),
        });
    }
    if flag == "cache_size" && flags.memory_budget > 0 {
        return unmapped("Options::block_cache_capacity is ignored: the memory budget's cache");
    }
    if let Some(field) = flag.strip_prefix("query_compaction_") {
        let field = match field {
            "buffer" => "max_buffer_bytes",
            f => f,
        };
        return exact(match flags.query_compaction {
            true => format!("Options::query_compaction's QueryCompaction::{field}"),
            false => "Options::query_compaction is None: unused (--query_compaction=false)".into(),
        });
    }
    let field = match flag {
        "vct" => Some(("vct", flags.vct.to_string())),
        "vsmt" => Some(("vsmt", flags.vsmt.to_string())),
        "virtual_garbage_ratio" => {
            Some(("max_garbage_ratio", flags.virtual_garbage_ratio.to_string()))
        }
        _ => None,
    };
    if let Some((field, value)) = field {
        return exact(match flags.delayed_compaction {
            true => format!("Options::delayed_compaction's DelayedCompaction::{field} = {value}"),
            false => {
                "Options::delayed_compaction is None: unused (--delayed_compaction=false)".into()
            }
        });
    }
    if let Some(m) = style_text("strata", flag, flags) {
        return m;
    }
    if flag == "rocksdb_statistics" {
        return exact(
            "not set (RocksDB's switch): Strata's counters are always kept, sharded per thread",
        );
    }
    let field = match flag {
        "bloom_bits" => "levels[*].bloom_bits_per_key",
        "cache_size" => "block_cache_capacity",
        "block_size" => "levels[*].block_size",
        "block_restart_interval" => "levels[*].block_restart_interval",
        "open_files" => "max_open_files",
        "compression_type" => "levels[*].compression",
        "compression_per_level" => "levels[i].compression",
        "compaction_pri" => "compaction_priority",
        "compaction_output_partitioning" | "aligned_variance" => "output_partitioning",
        "sync" => "WriteOptions::sync",
        f => f,
    };
    exact(format!("Options::{field}"))
}

/// What `--num_column_families` makes of the database: `ops` says how families are
/// created and written, `stats` how the statistics treat them. One family: nothing.
fn families_text(n: usize, ops: &str, stats: &str) -> String {
    if n <= 1 {
        return "1: every key in the default family (no hashing)".into();
    }
    format!(
        "{n} families `default`, `cf1` .. `cf{}`, each configured by these flags; each key \
         in family FNV-1a-64(key) mod {n}; {ops}; stats: {stats}; scans are refused",
        n - 1
    )
}

/// The universal compaction flags, RocksDB's alone.
const UNIVERSAL_FLAGS: &[&str] = &[
    "universal_size_ratio",
    "universal_min_merge_width",
    "universal_max_merge_width",
    "universal_max_size_amplification_percent",
];

/// `--compaction_style` and the `--universal_*` flags on `engine` (strata or fjall),
/// which compacts by level only and refuses `universal` at open; `None` for other
/// flags. With `level` the universal flags are unused, as RocksDB's are then.
fn style_text(engine: &str, flag: &str, flags: &EngineFlags) -> Option<(Fidelity, String)> {
    let universal = flags.compaction_style == CompactionStyleFlag::Universal;
    let what = match engine {
        "fjall" => "fjall's leveled strategy (compaction::Leveled), the adapter's only one",
        _ => "leveled compaction, Strata's only style",
    };
    match flag {
        "compaction_style" if universal => Some(unmapped(format!(
            "refused at open (usage error): {engine} has no universal compaction; {what}"
        ))),
        "compaction_style" => Some(exact(what)),
        f if UNIVERSAL_FLAGS.contains(&f) && universal => Some(unmapped(format!(
            "refused with --compaction_style=universal: {engine} has no universal compaction"
        ))),
        f if UNIVERSAL_FLAGS.contains(&f) => Some(exact(format!(
            "not set: used only with --compaction_style=universal, which {engine} refuses"
        ))),
        _ => None,
    }
}

/// The flags of Strata's query-driven compaction, which no other engine has.
const QUERY_FLAGS: &[&str] = &[
    "query_compaction",
    "query_compaction_selectivity",
    "query_compaction_start_level",
    "query_compaction_min_levels",
    "query_compaction_min_bytes",
    "query_compaction_profit",
    "query_compaction_buffer",
    "query_compaction_background",
    "query_compaction_min_obsolete",
];

/// Why `--query_compaction` and its settings mean nothing to `engine`: its scans never
/// write, which is what Strata's do with the flag off.
fn query_text(engine: &str) -> String {
    format!(
        "Strata-only, query-driven compaction (scans writing back what they merged); \
         {engine} has no equivalent: its scans write nothing, as Strata's with the flag off"
    )
}

/// The flags of Strata's delayed compaction, which no other engine has.
const DELAYED_FLAGS: &[&str] = &["delayed_compaction", "vct", "vsmt", "virtual_garbage_ratio"];

/// Why `--delayed_compaction` and its settings ([`DELAYED_FLAGS`]) mean nothing to
/// `engine`, which has neither virtual tables nor a deferral threshold: it rewrites the
/// inputs of every compaction it picks, which is what Strata does with the flag off.
fn delayed_text(engine: &str, flag: &str, flags: &EngineFlags) -> String {
    let what = match flag {
        "vct" => "the threshold of Strata's delayed compaction",
        "vsmt" => "the virtual-table merge threshold of Strata's delayed compaction",
        "virtual_garbage_ratio" => "the garbage bound of Strata's delayed compaction",
        _ => "delayed compaction (dCompaction's virtual tables)",
    };
    let effect = if flags.delayed_compaction {
        "ignored: every compaction it picks rewrites its inputs, unlike Strata's here"
    } else {
        "every compaction it picks rewrites its inputs, as Strata's with the flag off"
    };
    format!("Strata-only, {what}; {engine} has no equivalent: {effect}")
}

/// What `rocksdb.rs` does with each flag.
fn rocksdb(flag: &str, flags: &EngineFlags) -> (Fidelity, String) {
    let universal = flags.compaction_style == CompactionStyleFlag::Universal;
    match flag {
        "compaction_style" if universal => exact(
            "Options::set_compaction_style(DBCompactionStyle::Universal) and \
             set_universal_compaction_options (the --universal_* flags)",
        ),
        "compaction_style" => exact("Options::set_compaction_style(DBCompactionStyle::Level)"),
        f if UNIVERSAL_FLAGS.contains(&f) && !universal => {
            exact("not set: used only with --compaction_style=universal")
        }
        "universal_size_ratio" => exact(format!(
            "UniversalCompactOptions::set_size_ratio({})",
            flags.universal_size_ratio
        )),
        "universal_min_merge_width" => exact(format!(
            "UniversalCompactOptions::set_min_merge_width({})",
            flags.universal_min_merge_width
        )),
        "universal_max_merge_width" => exact(format!(
            "UniversalCompactOptions::set_max_merge_width({}) (the C API's int carries the \
             unsigned value bit for bit: 4294967295 is UINT_MAX)",
            flags.universal_max_merge_width
        )),
        "universal_max_size_amplification_percent" => exact(format!(
            "UniversalCompactOptions::set_max_size_amplification_percent({})",
            flags.universal_max_size_amplification_percent
        )),
        "compaction_pri"
        | "max_bytes_for_level_base"
        | "max_bytes_for_level_multiplier"
        | "max_bytes_for_level_multiplier_additional"
        | "tiering"
        | "fd_size"
            if universal =>
        {
            unmapped(format!(
                "Options::{flag} is set, but universal compaction does not use it (no level \
                 targets, no file priority)"
            ))
        }
        "soft_pending_compaction_bytes_limit" | "hard_pending_compaction_bytes_limit"
            if universal =>
        {
            unmapped(format!(
                "Options::{flag} is set, but RocksDB estimates pending compaction bytes for \
                 leveled compaction only (0 under universal): it never stalls on them"
            ))
        }
        "level0_file_num_compaction_trigger"
        | "level0_slowdown_writes_trigger"
        | "level0_stop_writes_trigger"
            if universal =>
        {
            approx(format!(
                "Options::{flag}; universal compaction counts sorted runs (L0 files plus \
                 each non-empty level), not L0 files"
            ))
        }
        "num_column_families" => exact(families_text(
            flags.num_column_families,
            "ColumnFamilyDescriptor per family with the database's Options, \
             create_missing_column_families(true), every existing family opened too; \
             put_cf_opt/get_cf/delete_cf_opt/merge_cf_opt; a batch is one WriteBatch of \
             put_cf/delete_cf/merge_cf, atomic across families; transactions use \
             get_for_update_cf/put_cf/delete_cf/merge_cf; delete_range is one \
             delete_range_cf per family in one batch; flush and compact_range_cf per family",
            "tickers database-wide; per-level figures summed over the families' \
             rocksdb.cfstats-no-file-histogram, the text table lists each family's own",
        )),
        "bloom_bits" if flags.bloom_bits == 0 => exact("no filter"),
        "bloom_bits" => exact(format!(
            "BlockBasedOptions::set_bloom_filter({}, false) (full filter), whole-key filtering",
            flags.bloom_bits
        )),
        "cache_size" if flags.memory_budget > 0 => {
            unmapped("ignored: --memory_budget sizes the cache")
        }
        "cache_size" if flags.cache_size == 0 => exact("BlockBasedOptions::disable_cache()"),
        "cache_size" => exact(format!("LRU block cache of {} bytes", flags.cache_size)),
        "memory_budget" if flags.memory_budget == 0 => exact("no WriteBufferManager"),
        "memory_budget" => approx(format!(
            "LRU block cache of {} bytes and WriteBufferManager::\
             new_write_buffer_manager_with_cache({}, allow_stall=true, that cache): memtables \
             charged to the cache; a flush past 7/8 of {} mutable, a stall past all of it \
             (Strata flushes past half its budget and stops past 7/8)",
            flags.memory_budget,
            flags.memory_budget / 2,
            flags.memory_budget / 2
        )),
        "block_size" | "block_restart_interval" => exact(format!("BlockBasedOptions::{flag}")),
        "open_files" => exact("max_open_files"),
        "compression_type" => exact("compression"),
        "compression_per_level" if flags.compression_per_level.is_empty() => {
            exact("not set: compression applies to every level")
        }
        "compression_per_level" => exact("compression_per_level (last entry extends down)"),
        "compaction_output_partitioning" | "aligned_variance" | "snapshot_filter" => {
            unmapped("Strata-only; RocksDB has no equivalent (ignored)")
        }
        "expiring_values" => unmapped(
            "Strata-only: RocksDB's DBWithTTL gives one TTL to a whole open, not a \
             deadline per value (ignored; `ldb put --ttl` is refused)",
        ),
        "periodic_compaction_seconds" if flags.periodic_compaction_seconds == 0 => {
            exact("not set: RocksDB's default (off without a compaction filter)")
        }
        "periodic_compaction_seconds" => exact("Options::set_periodic_compaction_seconds"),
        f if DELAYED_FLAGS.contains(&f) => unmapped(delayed_text("RocksDB", flag, flags)),
        f if QUERY_FLAGS.contains(&f) => unmapped(query_text("RocksDB")),
        "max_manifest_file_size" => {
            unmapped("not passed by the adapter; RocksDB's default applies")
        }
        "sync" => exact("WriteOptions::set_sync"),
        "rocksdb_statistics" if flags.rocksdb_statistics => exact(
            "enable_statistics, set_statistics_level(ExceptHistogramOrTimers): tickers \
             only, for write amplification and the counters",
        ),
        "rocksdb_statistics" => exact(
            "not enabled (RocksDB's default): flush and compaction bytes (write \
             amplification) summed from the event log in LOG; WAL bytes and the \
             counters unavailable",
        ),
        "transaction_db" if !flags.transaction_db => exact("not set: DB::open, plain writes"),
        "transaction_db" => exact(
            "OptimisticTransactionDB::open; each write a transaction_opt with \
             OptimisticTransactionOptions::set_snapshot(true) (get_for_update(key, true) where \
             the benchmark reads; commit retried on Busy or TryAgain); other operations on \
             its base DB",
        ),
        "enable_pipelined_write" => approx(
            "allow_concurrent_memtable_write (RocksDB's default, true): a group's members \
             insert in parallel; RocksDB's enable_pipelined_write stays at its default, false",
        ),
        "use_direct_reads" => exact(format!(
            "Options::set_use_direct_reads({})",
            flags.use_direct_reads
        )),
        "cache_index_and_filter_blocks" if !flags.cache_index_and_filter_blocks => {
            exact("BlockBasedOptions::set_cache_index_and_filter_blocks(false)")
        }
        "cache_index_and_filter_blocks" => approx(
            "BlockBasedOptions::set_cache_index_and_filter_blocks(true); RocksDB inserts \
             them with high priority (its default), Strata with none",
        ),
        "use_direct_io_for_flush_and_compaction" => exact(format!(
            "Options::set_use_direct_io_for_flush_and_compaction({})",
            flags.use_direct_io_for_flush_and_compaction
        )),
        "device" if flags.device.is_empty() => exact("not set: the real disk"),
        "device" => unmapped(
            "the device model wraps Strata's file system; RocksDB runs on the real disk \
             (compare on the real disk, or with direct I/O)",
        ),
        "db_paths" if flags.db_paths.is_empty() => {
            exact("not set: tables in the database directory")
        }
        "tiering" | "fd_size" if flags.tiering == TieringFlag::Off => {
            exact("not set: levels placed by db_paths")
        }
        "tiering" | "fd_size" if flags.tiering == TieringFlag::Hotrap => unmapped(
            "RocksDB has no HotRAP: the adapter refuses --tiering=hotrap (run \
             --tiering=fat for the paper's RocksDB-fat baseline)",
        ),
        "tiering" | "fd_size" if flags.tiering == TieringFlag::Time => unmapped(
            "the adapter refuses --tiering=time: RocksDB's time-aware tiering \
             (preclude_last_level_data_seconds) is planned, not mapped",
        ),
        f if TIERING_FLAGS.contains(&f) => {
            exact("not set: RocksDB has no HotRAP, and --tiering=time is refused")
        }
        "tiering" | "fd_size" => {
            let (base, factors) = flags.rocksdb_level_sizing().unwrap_or_default();
            approx(format!(
                "RocksDB-fat: db_paths as given, and Strata's stretch of the last fast level \
                 rounded down to an integer, on its max_bytes_for_level_multiplier_additional \
                 factor or, for L1, on max_bytes_for_level_base (base {base}, factors \
                 {factors:?}); RocksDB places levels by the paths' targets, so the fast path's \
                 target should be the budget"
            ))
        }
        "max_bytes_for_level_base" if flags.tiering != TieringFlag::Off => {
            let (base, _) = flags.rocksdb_level_sizing().unwrap_or_default();
            approx(format!(
                "Options::set_max_bytes_for_level_base({base}) (the tiering stretch when the last \
                 fast level is L1)"
            ))
        }
        "max_bytes_for_level_multiplier_additional" => {
            match flags.rocksdb_level_sizing().map(|(_, v)| v) {
                Ok(v) if v.is_empty() => exact("not set: every factor 1"),
                Ok(v) => approx(format!(
                    "Options::set_max_bytes_for_level_multiplier_additional({v:?}) (RocksDB's \
                     factors are integers: each rounded, the tiering stretch rounded down)"
                )),
                Err(e) => unmapped(format!("not set: {e}")),
            }
        }
        "db_paths" => exact(
            "Options::set_db_paths (same directories and targets; RocksDB's by-level placement, \
             except that its flushes always write path 0)",
        ),
        "write_buffer_size" => exact(
            "Options::write_buffer_size; RocksDB flushes a memtable once its arena passes \
             it by 0.6 of an arena block (write_buffer_size / 8 by default), so its flushes \
             hold about 7.5% more than Strata's, which flush at write_buffer_size",
        ),
        "create_if_missing"
        | "error_if_exists"
        | "paranoid_checks"
        | "max_write_buffer_number"
        | "target_file_size_base"
        | "max_bytes_for_level_base"
        | "max_bytes_for_level_multiplier"
        | "level0_file_num_compaction_trigger"
        | "level0_slowdown_writes_trigger"
        | "level0_stop_writes_trigger"
        | "soft_pending_compaction_bytes_limit"
        | "hard_pending_compaction_bytes_limit"
        | "num_levels"
        | "max_background_jobs"
        | "compaction_pri"
        | "wal_recovery_mode" => exact(format!("Options::{flag}")),
        other => unmapped(format!("unknown flag `{other}`: not described")),
    }
}

/// How fjall's leveled strategy places levels, unlike Strata's static sizing.
const DYNAMIC: &str = "levels fill from the bottom: the first non-empty level below L0 \
                       is sized as L1 (like RocksDB's level_compaction_dynamic_level_bytes, \
                       which the RocksDB adapter turns off)";

/// What `fjall.rs` does with each flag, from the plan it applies.
fn fjall(flag: &str, flags: &EngineFlags, p: &FjallPlan) -> (Fidelity, String) {
    let codecs = |c: &[FjallCodec]| {
        c.iter()
            .map(|c| match c {
                FjallCodec::None => "None",
                FjallCodec::Lz4 => "Lz4",
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(m) = style_text("fjall", flag, flags) {
        return m;
    }
    match flag {
        "num_column_families" => exact(families_text(
            flags.num_column_families,
            "one keyspace per family (Database::keyspace with the same \
             KeyspaceCreateOptions); a batch is one Database::batch over the keyspaces, \
             atomic across them; transactions are one WriteTransaction over them; flush \
             and major_compact per keyspace",
            "database figures once; per-keyspace counters and per-level files and bytes \
             summed over the keyspaces, the text table lists each keyspace's own",
        )),
        "create_if_missing" => approx(
            "emulated: fjall always creates; with false the adapter refuses a directory \
             without fjall's version marker",
        ),
        "error_if_exists" => {
            approx("emulated: with true the adapter refuses a directory holding a database")
        }
        "write_buffer_size" => exact(format!(
            "KeyspaceCreateOptions::max_memtable_size({})",
            p.memtable_bytes
        )),
        "max_write_buffer_number" => unmapped(format!(
            "fixed: fjall halts writes at {} sealed memtables (1 active + {} sealed)",
            fj::SEALED_MEMTABLE_HALT,
            fj::SEALED_MEMTABLE_HALT
        )),
        "target_file_size_base" => exact(format!(
            "Leveled::with_table_target_size({})",
            p.table_target_size
        )),
        "max_bytes_for_level_base" if p.l1_target_bytes() == flags.max_bytes_for_level_base => {
            approx(format!(
                "derived: fjall sizes L1 as table target × L0 threshold = {} (as requested); \
                 {DYNAMIC}",
                p.l1_target_bytes()
            ))
        }
        "max_bytes_for_level_base" => unmapped(format!(
            "no option: fjall sizes L1 as table target × L0 threshold = {} (requested {}); \
             {DYNAMIC}",
            p.l1_target_bytes(),
            flags.max_bytes_for_level_base
        )),
        "max_bytes_for_level_multiplier" => exact(format!(
            "Leveled::with_level_ratio_policy(vec![{}])",
            p.level_ratio
        )),
        "level0_file_num_compaction_trigger" => {
            exact(format!("Leveled::with_l0_threshold({})", p.l0_threshold))
        }
        "level0_slowdown_writes_trigger" => unmapped(format!(
            "fixed: fjall stalls writes from {} L0 runs",
            fj::L0_STALL_RUNS
        )),
        "level0_stop_writes_trigger" => unmapped(format!(
            "fixed: fjall halts writes at {} L0 runs",
            fj::L0_HALT_RUNS
        )),
        "soft_pending_compaction_bytes_limit" | "hard_pending_compaction_bytes_limit" => {
            unmapped("no equivalent: fjall stalls on L0 runs and sealed memtables only")
        }
        "num_levels" if flags.num_levels == fj::LEVELS => {
            exact(format!("fixed at {} levels in fjall 3", fj::LEVELS))
        }
        "num_levels" => unmapped(format!(
            "no option: fjall 3 trees always have {} levels",
            fj::LEVELS
        )),
        "bloom_bits" => match p.bloom_bits_per_key {
            Some(b) => exact(format!(
                "FilterPolicy::all(Bloom(BitsPerKey({b}))), every level"
            )),
            None => exact("FilterPolicy::disabled()"),
        },
        "cache_size" => exact(format!("Database::builder().cache_size({})", p.cache_bytes)),
        "block_size" => exact(format!(
            "data_block_size_policy(BlockSizePolicy::all({}))",
            p.block_size
        )),
        "block_restart_interval" => exact(format!(
            "data_block_restart_interval_policy(RestartIntervalPolicy::all({}))",
            p.restart_interval
        )),
        "open_files" => exact(format!(
            "Database::builder().max_cached_files(Some({}))",
            p.max_cached_files
        )),
        "compression_type" if flags.compression_per_level.is_empty() => exact(format!(
            "data_block_compression_policy(CompressionPolicy::all({}))",
            codecs(&p.compression)
        )),
        "compression_type" => unmapped("overridden by --compression_per_level"),
        "compression_per_level" if flags.compression_per_level.is_empty() => {
            exact("not set: compression_type applies to every level")
        }
        "compression_per_level" => exact(format!(
            "data_block_compression_policy(CompressionPolicy::new([{}])) \
             (last entry extends down)",
            codecs(&p.compression)
        )),
        "max_background_jobs" => approx(format!(
            "Database::builder().worker_threads({}): one pool for flushes, compactions and \
             memtable rotations",
            p.worker_threads
        )),
        "compaction_pri" => unmapped("no option: fjall's leveled strategy picks its own files"),
        "compaction_output_partitioning" | "aligned_variance" | "snapshot_filter" => {
            unmapped("Strata-only; fjall has no equivalent (ignored)")
        }
        "expiring_values" => unmapped(
            "Strata-only: fjall has no per-value deadlines (ignored; `ldb put --ttl` is \
             refused)",
        ),
        "periodic_compaction_seconds" => unmapped("no periodic compaction in fjall 3 (ignored)"),
        f if DELAYED_FLAGS.contains(&f) => unmapped(delayed_text("fjall", flag, flags)),
        f if QUERY_FLAGS.contains(&f) => unmapped(query_text("fjall")),
        "paranoid_checks" | "max_manifest_file_size" | "enable_pipelined_write" => {
            unmapped("no equivalent option in fjall 3 (ignored)")
        }
        "cache_index_and_filter_blocks" => unmapped(
            "not passed: fjall's pinning defaults apply (L0-L1 index and L0 filter blocks \
             pinned outside the cache, the rest read through it)",
        ),
        "memory_budget" if flags.memory_budget == 0 => exact("not set"),
        "memory_budget" => unmapped(
            "no budget shared by memtables and the cache in fjall 3 (ignored): \
             --cache_size and --write_buffer_size bound them apart",
        ),
        "use_direct_reads" if !flags.use_direct_reads => {
            exact("buffered reads: fjall 3 has no direct I/O")
        }
        "use_direct_io_for_flush_and_compaction"
            if !flags.use_direct_io_for_flush_and_compaction =>
        {
            exact("buffered writes: fjall 3 has no direct I/O")
        }
        "use_direct_reads" | "use_direct_io_for_flush_and_compaction" => unmapped(
            "no direct I/O in fjall 3: its tables are read and written through the page \
             cache (ignored)",
        ),
        "device" if flags.device.is_empty() => exact("not set: the real disk"),
        "device" => {
            unmapped("the device model wraps Strata's file system; fjall runs on the real disk")
        }
        "db_paths" if flags.db_paths.is_empty() => exact("every table in the database folder"),
        // Any other value is refused by `FjallPlan::from_flags`.
        "tiering" => exact("off: every table in the database folder"),
        f if TIERING_FLAGS.contains(&f) => exact("unused: no tiers (--tiering=off)"),
        "fd_size" => exact("unused: no tiers (--tiering=off)"),
        "max_bytes_for_level_multiplier_additional" => {
            exact("not set: one level ratio (--max_bytes_for_level_multiplier)")
        }
        "db_paths" => {
            unmapped("fjall 3 keeps every table in the database folder; --db_paths is ignored")
        }
        "wal_recovery_mode" => match flags.wal_recovery_mode {
            super::options::WalRecoveryFlag::TolerateCorruptedTailRecords => {
                exact("fjall's only recovery mode: a torn journal tail is truncated")
            }
            _ => unmapped("no option: fjall always truncates a torn journal tail (ignored)"),
        },
        "sync" if p.sync => approx(
            "each put/delete is followed by Database::persist(PersistMode::SyncData); \
             batches commit with durability SyncData",
        ),
        "sync" => exact("PersistMode::Buffer: each write is handed to the OS, no fsync"),
        "rocksdb_statistics" => {
            unmapped("RocksDB's switch: fjall counts with its `metrics` cargo feature, compiled in")
        }
        "transaction_db" if !flags.transaction_db => exact("not set: Database, plain writes"),
        "transaction_db" => approx(
            "OptimisticTxDatabase; each write a WriteTransaction (a get where the benchmark \
             reads: fjall checks every read, serializable snapshot isolation, stricter than \
             get_for_update; commit retried on Conflict); other operations on the plain \
             Database inside, outside fjall's conflict tracking",
        ),
        other => unmapped(format!("unknown flag `{other}`: not described")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::conformance::default_flags;

    #[test]
    fn every_flag_is_described_for_every_engine() {
        for engine in [EngineKind::Strata, EngineKind::Rocksdb, EngineKind::Fjall] {
            let flags = EngineFlags {
                engine,
                ..default_flags()
            };
            let m = of(&flags);
            let flag_count = match serde_json::to_value(&flags) {
                Ok(serde_json::Value::Object(o)) => o.len() - HARNESS_FLAGS.len(),
                _ => 0,
            };
            let described: Vec<&OptionMapping> = m.iter().filter(|e| e.flag != "-").collect();
            assert_eq!(described.len(), flag_count, "{engine:?}");
            for e in &m {
                assert!(!e.engine.is_empty(), "{engine:?} {e:?}");
                assert!(!e.engine.contains("unknown flag"), "{engine:?} {e:?}");
            }
        }
    }

    #[test]
    fn fjall_reference_shape_mapping() {
        let flags = EngineFlags {
            engine: EngineKind::Fjall,
            write_buffer_size: 8 << 20,
            target_file_size_base: 8 << 20,
            max_bytes_for_level_base: 32 << 20,
            cache_size: 64 << 20,
            ..default_flags()
        };
        let m = of(&flags);
        let get = |f: &str| m.iter().find(|e| e.flag == f).cloned().expect(f);
        assert_eq!(get("write_buffer_size").fidelity, Fidelity::Exact);
        assert!(get("write_buffer_size").engine.contains("8388608"));
        assert_eq!(
            get("max_bytes_for_level_base").fidelity,
            Fidelity::Approximate
        );
        assert_eq!(get("compaction_pri").fidelity, Fidelity::Unmapped);
        assert_eq!(get("num_levels").fidelity, Fidelity::Exact);
        assert_eq!(get("write_buffer_size").value, "8388608");
        let json = serde_json::to_string(&m).expect("json");
        assert!(json.contains("\"fidelity\":\"unmapped\""), "{json}");
        // An L1 size fjall cannot derive is reported as such.
        let m = of(&EngineFlags {
            max_bytes_for_level_base: 100 << 20,
            ..flags.clone()
        });
        let e = m
            .iter()
            .find(|e| e.flag == "max_bytes_for_level_base")
            .expect("entry");
        assert_eq!(e.fidelity, Fidelity::Unmapped);
        // Flags fjall refuses: one entry saying so.
        let m = of(&EngineFlags {
            compression_type: super::super::options::CompressionFlag::Zstd,
            ..flags
        });
        assert_eq!(m.len(), 1);
        assert!(m[0].engine.contains("zstd"), "{m:?}");
    }

    #[test]
    fn direct_io_flags_map_to_rocksdb_setters_and_are_unmapped_for_fjall() {
        let on = EngineFlags {
            use_direct_reads: true,
            use_direct_io_for_flush_and_compaction: true,
            ..default_flags()
        };
        let get = |m: &[OptionMapping], f: &str| m.iter().find(|e| e.flag == f).cloned().expect(f);
        let rocks = of(&EngineFlags {
            engine: EngineKind::Rocksdb,
            ..on.clone()
        });
        let e = get(&rocks, "use_direct_reads");
        assert_eq!(e.fidelity, Fidelity::Exact);
        assert_eq!(e.engine, "Options::set_use_direct_reads(true)");
        assert_eq!(e.value, "true");
        let e = get(&rocks, "use_direct_io_for_flush_and_compaction");
        assert_eq!(e.fidelity, Fidelity::Exact);
        assert_eq!(
            e.engine,
            "Options::set_use_direct_io_for_flush_and_compaction(true)"
        );
        let fjall = of(&EngineFlags {
            engine: EngineKind::Fjall,
            ..on.clone()
        });
        for f in ["use_direct_reads", "use_direct_io_for_flush_and_compaction"] {
            assert_eq!(get(&fjall, f).fidelity, Fidelity::Unmapped, "{f}");
        }
        let strata = of(&on);
        assert_eq!(
            get(&strata, "use_direct_reads").engine,
            "Options::use_direct_reads"
        );
        let o = on.strata_options().expect("options");
        assert!(o.use_direct_reads && o.use_direct_io_for_flush_and_compaction);
    }

    /// `--tiering=fat`: Strata's option, RocksDB-fat as an integer factor from the same
    /// layout, and a refusal from fjall (one folder, no tiers).
    #[test]
    fn tiering_maps_to_rocksdb_fat_and_is_refused_by_fjall() {
        use super::super::options::DbPathFlag;
        // L0 and L1 32 MiB each, L2 320 MiB: 384 MiB fit in 1 GiB, L3 does not, and
        // L2 grows by (1024 − 64) / 320 = 3.
        let flags = EngineFlags {
            db_paths: vec![
                DbPathFlag {
                    path: "/f".into(),
                    target_size: 1 << 30,
                },
                DbPathFlag {
                    path: "/s".into(),
                    target_size: 0,
                },
            ],
            max_bytes_for_level_base: 32 << 20,
            tiering: TieringFlag::Fat,
            ..default_flags()
        };
        let layout =
            strata::TierLayout::of(&flags.strata_options().expect("options")).expect("layout");
        assert_eq!((layout.last_fast_level, layout.stretch), (2, 3.0));
        assert_eq!(
            flags.rocksdb_level_sizing().expect("sizing"),
            (32 << 20, vec![1, 3])
        );
        // The last fast level L1 (budget 256 MiB: L0 and L1 32 MiB each, L2 does not
        // fit): RocksDB never reads factor 0, so the stretch (256 − 32) / 32 = 7 goes on
        // its base.
        let l1 = EngineFlags {
            fd_size: 256 << 20,
            ..flags.clone()
        };
        let layout =
            strata::TierLayout::of(&l1.strata_options().expect("options")).expect("layout");
        assert_eq!((layout.last_fast_level, layout.stretch), (1, 7.0));
        assert_eq!(
            l1.rocksdb_level_sizing().expect("sizing"),
            (7 * (32 << 20), vec![])
        );
        let get = |m: &[OptionMapping], f: &str| m.iter().find(|e| e.flag == f).cloned().expect(f);
        let rocks = of(&EngineFlags {
            engine: EngineKind::Rocksdb,
            ..flags.clone()
        });
        let e = get(&rocks, "tiering");
        assert_eq!(e.fidelity, Fidelity::Approximate);
        assert!(e.engine.contains("[1, 3]"), "{e:?}");
        let e = get(&rocks, "max_bytes_for_level_multiplier_additional");
        assert!(e.engine.contains("([1, 3])"), "{e:?}");
        assert!(get(&of(&flags), "tiering")
            .engine
            .contains("Tiering::fat().with_fd_size(0)"));
        let fjall = of(&EngineFlags {
            engine: EngineKind::Fjall,
            ..flags
        });
        assert_eq!(fjall.len(), 1);
        assert!(fjall[0].engine.contains("--tiering"), "{fjall:?}");
    }

    #[test]
    fn strata_maps_everything_exactly() {
        let m = of(&default_flags());
        // Every flag exactly, plus the adapter's one setting (the merge operator).
        let (flags, adapter): (Vec<_>, Vec<_>) = m.iter().partition(|e| e.flag != "-");
        assert!(flags.iter().all(|e| e.fidelity == Fidelity::Exact
            && (e.engine.starts_with("Options::")
                || e.flag == "sync"
                || e.flag == "transaction_db"
                || e.flag == "num_column_families"
                || e.flag == "compaction_style"
                || e.flag == "rocksdb_statistics"
                || UNIVERSAL_FLAGS.contains(&e.flag.as_str())
                || (e.flag == "device" && e.engine.starts_with("DbBuilder::file_system")))));
        assert_eq!(adapter.len(), 1);
        assert!(adapter.iter().all(|e| e.engine.contains("U64Add")));
    }

    #[test]
    fn delayed_compaction_flags_are_described_for_every_engine() {
        let get = |flags: &EngineFlags, f: &str| {
            of(flags)
                .into_iter()
                .find(|e| e.flag == f)
                .unwrap_or_else(|| panic!("{:?}: no {f} entry", flags.engine))
        };
        for engine in [EngineKind::Strata, EngineKind::Rocksdb, EngineKind::Fjall] {
            let off = EngineFlags {
                engine,
                ..default_flags()
            };
            let on = EngineFlags {
                delayed_compaction: true,
                vct: 4,
                vsmt: 3,
                virtual_garbage_ratio: 0.5,
                ..off.clone()
            };
            for flags in [&off, &on] {
                let d = get(flags, "delayed_compaction");
                let v = get(flags, "vct");
                let m = get(flags, "vsmt");
                let g = get(flags, "virtual_garbage_ratio");
                assert_eq!(d.value, flags.delayed_compaction.to_string(), "{d:?}");
                assert_eq!(v.value, flags.vct.to_string(), "{v:?}");
                assert_eq!(m.value, flags.vsmt.to_string(), "{m:?}");
                assert_eq!(g.value, flags.virtual_garbage_ratio.to_string(), "{g:?}");
                let fidelity = match engine {
                    EngineKind::Strata => Fidelity::Exact,
                    _ => Fidelity::Unmapped,
                };
                for e in [&d, &v, &m, &g] {
                    assert_eq!(e.fidelity, fidelity, "{engine:?} {e:?}");
                    assert!(!e.engine.is_empty(), "{engine:?} {e:?}");
                    if engine != EngineKind::Strata {
                        assert!(e.engine.starts_with("Strata-only"), "{e:?}");
                    }
                }
            }
            assert_eq!(get(&off, "vct").value, "12", "{engine:?}: default vct");
            assert_eq!(get(&off, "vsmt").value, "5", "{engine:?}: default vsmt");
            assert_eq!(
                get(&off, "virtual_garbage_ratio").value,
                "0.1",
                "{engine:?}: default garbage ratio"
            );
        }
        let on = EngineFlags {
            delayed_compaction: true,
            vct: 4,
            vsmt: 3,
            virtual_garbage_ratio: 0.5,
            ..default_flags()
        };
        assert!(
            get(&on, "delayed_compaction").engine.contains(
                "DelayedCompaction::new().with_vct(4).with_vsmt(3).with_max_garbage_ratio(0.5)"
            ),
            "{:?}",
            get(&on, "delayed_compaction")
        );
        assert!(get(&on, "vsmt")
            .engine
            .ends_with("DelayedCompaction::vsmt = 3"));
        assert!(get(&on, "virtual_garbage_ratio")
            .engine
            .ends_with("DelayedCompaction::max_garbage_ratio = 0.5"));
        let rocks = get(
            &EngineFlags {
                engine: EngineKind::Rocksdb,
                ..on.clone()
            },
            "vsmt",
        );
        assert!(rocks.engine.contains("merge threshold"), "{rocks:?}");
        assert!(get(&default_flags(), "vsmt").engine.contains("unused"));
        assert!(get(&default_flags(), "delayed_compaction")
            .engine
            .contains("None"));
    }

    #[test]
    fn num_column_families_is_described_for_every_engine() {
        for engine in [EngineKind::Strata, EngineKind::Rocksdb, EngineKind::Fjall] {
            let get = |n: usize| {
                of(&EngineFlags {
                    engine,
                    num_column_families: n,
                    ..default_flags()
                })
                .into_iter()
                .find(|e| e.flag == "num_column_families")
                .expect("num_column_families entry")
            };
            let one = get(1);
            assert_eq!(one.value, "1", "{engine:?}");
            assert!(one.engine.contains("no hashing"), "{engine:?} {one:?}");
            let four = get(4);
            assert_eq!(four.value, "4", "{engine:?}");
            assert_eq!(four.fidelity, Fidelity::Exact, "{engine:?}");
            for part in [
                "4 families",
                "`cf3`",
                "FNV-1a-64(key) mod 4",
                "stats:",
                "atomic",
            ] {
                assert!(four.engine.contains(part), "{engine:?}: {part}: {four:?}");
            }
        }
        // Strata's transactions write each key in its family.
        let m = of(&EngineFlags {
            num_column_families: 2,
            transaction_db: true,
            ..default_flags()
        });
        let t = m
            .iter()
            .find(|e| e.flag == "transaction_db")
            .expect("entry");
        assert_eq!(t.fidelity, Fidelity::Exact, "{t:?}");
        assert!(t.engine.contains("put_cf"), "{t:?}");
    }

    #[test]
    fn compaction_style_is_described_for_every_engine() {
        let get = |flags: &EngineFlags, f: &str| {
            of(flags)
                .into_iter()
                .find(|e| e.flag == f)
                .unwrap_or_else(|| panic!("{:?}: no {f} entry", flags.engine))
        };
        let universal = |engine| EngineFlags {
            engine,
            compaction_style: CompactionStyleFlag::Universal,
            universal_size_ratio: 10,
            universal_min_merge_width: 3,
            universal_max_merge_width: 8,
            universal_max_size_amplification_percent: 150,
            ..default_flags()
        };
        // RocksDB: every universal flag reaches UniversalCompactOptions.
        let rocks = universal(EngineKind::Rocksdb);
        let e = get(&rocks, "compaction_style");
        assert_eq!(e.value, "\"universal\"");
        assert_eq!(e.fidelity, Fidelity::Exact);
        assert!(e.engine.contains("DBCompactionStyle::Universal"), "{e:?}");
        for (flag, call) in [
            ("universal_size_ratio", "set_size_ratio(10)"),
            ("universal_min_merge_width", "set_min_merge_width(3)"),
            ("universal_max_merge_width", "set_max_merge_width(8)"),
            (
                "universal_max_size_amplification_percent",
                "set_max_size_amplification_percent(150)",
            ),
        ] {
            let e = get(&rocks, flag);
            assert_eq!(e.fidelity, Fidelity::Exact, "{e:?}");
            assert!(e.engine.contains(call), "{e:?}");
        }
        // Leveled-only options are said to be unused under universal.
        for flag in ["compaction_pri", "max_bytes_for_level_base"] {
            assert_eq!(get(&rocks, flag).fidelity, Fidelity::Unmapped, "{flag}");
        }
        assert!(of(&rocks)
            .iter()
            .any(|e| e.flag == "-" && e.engine.contains("compaction_options_universal")));
        // With level, the universal flags are unused but described, and nothing is
        // reported as not exact for a default run.
        for engine in [EngineKind::Strata, EngineKind::Rocksdb, EngineKind::Fjall] {
            let level = EngineFlags {
                engine,
                ..default_flags()
            };
            assert_eq!(get(&level, "compaction_style").value, "\"level\"");
            for flag in std::iter::once("compaction_style").chain(UNIVERSAL_FLAGS.iter().copied()) {
                let e = get(&level, flag);
                assert_eq!(e.fidelity, Fidelity::Exact, "{engine:?} {e:?}");
            }
            assert_eq!(
                get(&level, "universal_max_merge_width").value,
                u32::MAX.to_string()
            );
        }
        // Strata refuses universal (at open); the mapping says so.
        let e = get(&universal(EngineKind::Strata), "compaction_style");
        assert_eq!(e.fidelity, Fidelity::Unmapped);
        assert!(e.engine.starts_with("refused"), "{e:?}");
        // fjall refuses it while planning: one entry naming the flag.
        let m = of(&universal(EngineKind::Fjall));
        assert_eq!(m.len(), 1);
        assert!(m[0].engine.contains("--compaction_style"), "{m:?}");
    }
}
