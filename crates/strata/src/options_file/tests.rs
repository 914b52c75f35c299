//! Tests of the OPTIONS format: the frozen v1 fixture, the round trip, tolerance of
//! newer writers, exact errors for malformed text, and the compatibility check.
//!
//! The fixture `fixtures/OPTIONS-v1` must decode to [`fixture_options`] and be
//! re-encoded byte for byte. If encoding changes, the format changed: extend it by
//! keys only (invariant 1), or bump `OPTIONS_VERSION` and add a new fixture; do not
//! regenerate this one. Create a brand-new fixture with
//! `STRATA_REGEN_FIXTURES=1 cargo test -p strata --lib options_file`.

use super::*;
use crate::env::FaultFs;
use crate::options::DelayedCompaction;
use proptest::prelude::*;
use std::path::PathBuf;

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/options_file/fixtures/OPTIONS-v1")
}

/// The fixture of the v1 writer that added the direct-I/O keys.
fn direct_io_fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/options_file/fixtures/OPTIONS-v1-direct-io")
}

/// `[DBOptions]` keys appended after `OPTIONS-v1` was frozen, oldest first.
const KEYS_AFTER_FIRST_V1: &[&str] = &[
    "enable_pipelined_write",
    "use_direct_reads",
    "use_direct_io_for_flush_and_compaction",
    "cache_index_and_filter_blocks",
    "delayed_compaction",
    "query_compaction",
];

/// `[DBOptions]` keys appended after `OPTIONS-v1-merge-operator` was frozen (the
/// direct-I/O, `[DbPath]` and merge-operator fixtures lack them).
const KEYS_AFTER_MERGE_OPERATOR: &[&str] = &[
    "cache_index_and_filter_blocks",
    "delayed_compaction",
    "query_compaction",
];

/// `text` without the lines of `keys`.
fn without_keys(text: &str, keys: &[&str]) -> String {
    text.split_inclusive('\n')
        .filter(|l| {
            !keys
                .iter()
                .any(|k| l.strip_prefix(k).is_some_and(|r| r.starts_with('=')))
        })
        .collect()
}

/// `text` without the lines of keys appended after `OPTIONS-v1` was frozen.
fn without_later_keys(text: &str) -> String {
    without_keys(text, KEYS_AFTER_FIRST_V1)
}

/// Today's encoding as a writer before `KEYS_AFTER_MERGE_OPERATOR` wrote it.
fn encode_before_cache_index_and_filter_blocks(opts: &Options) -> String {
    without_keys(&encode(opts), KEYS_AFTER_MERGE_OPERATOR)
}

/// Every option away from its default, three level entries.
fn fixture_options() -> Options {
    Options::default()
        .with_create_if_missing(false)
        .with_error_if_exists(true)
        .with_write_buffer_size(8 << 20)
        .with_max_write_buffer_number(3)
        .with_target_file_size_base(4 << 20)
        .with_max_bytes_for_level_base(32 << 20)
        .with_max_bytes_for_level_multiplier(8.5)
        .with_num_levels(6)
        .with_level0_file_num_compaction_trigger(2)
        .with_level0_slowdown_writes_trigger(10)
        .with_level0_stop_writes_trigger(14)
        .with_soft_pending_compaction_bytes_limit(1 << 30)
        .with_hard_pending_compaction_bytes_limit(0)
        .with_block_cache_capacity(0)
        .with_max_open_files(500)
        .with_max_background_jobs(4)
        .with_compaction_priority(CompactionPriority::OldestSmallestSeqFirst)
        .with_output_partitioning(OutputPartitioning::Aligned { variance: 1.5 })
        .with_snapshot_filter(false)
        .with_paranoid_checks(true)
        .with_wal_recovery_mode(WalRecoveryMode::PointInTime)
        .with_max_manifest_file_size(1 << 20)
        .with_levels(vec![
            LevelOptions::default()
                .with_block_size(1024)
                .with_bloom_bits_per_key(0),
            LevelOptions::default().with_block_restart_interval(8),
            LevelOptions::default()
                .with_compression(Compression::Zstd)
                .with_block_size(16 << 10),
        ])
}

/// The first v1 file (written before the keys of `KEYS_AFTER_FIRST_V1`) still decodes
/// exactly, its missing keys taking their defaults, and today's encoding of the same
/// options is that file plus the appended keys, nothing else changed.
#[test]
fn frozen_fixture_v1_decodes_exactly_and_encodes_identically() {
    let encoded = encode(&fixture_options());
    let frozen = std::fs::read_to_string(fixture_path()).expect("fixture present");
    let stored = decode(&frozen).expect("fixture decodes");
    assert_eq!(stored.version, 1);
    assert_eq!(stored.options, fixture_options());
    assert!(!stored.options.use_direct_reads);
    assert!(!stored.options.use_direct_io_for_flush_and_compaction);
    assert!(stored.options.enable_pipelined_write);
    assert!(stored.unknown.is_empty(), "{:?}", stored.unknown);
    assert_ne!(encoded, frozen, "the appended keys are written");
    assert_eq!(
        without_later_keys(&encoded),
        frozen,
        "the v1 encoding changed"
    );
}

/// The v1 file with the direct-I/O keys (and every key before them): decodes
/// exactly, re-encodes byte for byte.
#[test]
fn frozen_fixture_v1_direct_io_decodes_exactly_and_encodes_identically() {
    let opts = fixture_options()
        .with_use_direct_reads(true)
        .with_use_direct_io_for_flush_and_compaction(true);
    let encoded = encode_before_cache_index_and_filter_blocks(&opts);
    let frozen = std::fs::read_to_string(direct_io_fixture_path()).expect("fixture present");
    let stored = decode(&frozen).expect("fixture decodes");
    assert_eq!(stored.version, 1);
    assert_eq!(stored.options, opts);
    assert!(stored.unknown.is_empty(), "{:?}", stored.unknown);
    assert_eq!(encoded, frozen, "the v1 encoding changed");
}

/// The fixture of the v1 writer that added the `[DbPath]` sections.
fn db_paths_fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/options_file/fixtures/OPTIONS-v1-db-paths")
}

/// The v1 file with `[DbPath]` sections: decodes exactly, re-encodes byte for byte,
/// and without those sections is the direct-I/O fixture (nothing else changed).
#[test]
fn frozen_fixture_v1_db_paths_decodes_exactly_and_encodes_identically() {
    let opts = fixture_options()
        .with_use_direct_reads(true)
        .with_use_direct_io_for_flush_and_compaction(true)
        .with_db_paths(vec![
            DbPath::new("/fast/db", 1 << 30),
            DbPath::new("relative/slow db", 0),
        ]);
    let encoded = encode_before_cache_index_and_filter_blocks(&opts);
    let frozen = std::fs::read_to_string(db_paths_fixture_path()).expect("fixture present");
    let stored = decode(&frozen).expect("fixture decodes");
    assert_eq!(stored.options, opts);
    assert!(stored.unknown.is_empty(), "{:?}", stored.unknown);
    assert_eq!(encoded, frozen, "the v1 encoding changed");
    let older = std::fs::read_to_string(direct_io_fixture_path()).expect("fixture present");
    let cut = frozen.find("\n[DbPath").expect("a DbPath section");
    assert_eq!(&frozen[..cut], older.as_str());
}

/// The options `OPTIONS-v1-merge-operator` holds: direct I/O, two data paths and the
/// built-in append operator on top of [`fixture_options`].
fn merge_operator_fixture_options() -> Options {
    fixture_options()
        .with_use_direct_reads(true)
        .with_use_direct_io_for_flush_and_compaction(true)
        .with_db_paths(vec![
            DbPath::new("/fast/db", 1 << 30),
            DbPath::new("relative/slow db", 0),
        ])
        .with_merge_operator(Some(std::sync::Arc::new(crate::merge::Append::new(b", "))))
}

/// The fixture of the v1 writer that added `merge_operator`.
fn merge_operator_fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/options_file/fixtures/OPTIONS-v1-merge-operator")
}

/// The v1 file with a `merge_operator` line: decodes to the built-in operator,
/// re-encodes byte for byte, and without the line is the `[DbPath]` fixture.
#[test]
fn frozen_fixture_v1_merge_operator_decodes_exactly_and_encodes_identically() {
    let opts = merge_operator_fixture_options();
    let encoded = encode_before_cache_index_and_filter_blocks(&opts);
    let frozen = std::fs::read_to_string(merge_operator_fixture_path()).expect("fixture present");
    let stored = decode(&frozen).expect("fixture decodes");
    assert_eq!(stored.options, opts);
    assert_eq!(stored.merge_operator.as_deref(), Some("strata.append:2c20"));
    assert!(stored.unknown.is_empty(), "{:?}", stored.unknown);
    assert_eq!(encoded, frozen, "the v1 encoding changed");
    let older = std::fs::read_to_string(db_paths_fixture_path()).expect("fixture present");
    assert_eq!(
        frozen.replace("merge_operator=strata.append:2c20\n", ""),
        older
    );
}

/// The fixture of the v1 writer that added `cache_index_and_filter_blocks`.
fn cache_index_and_filter_blocks_fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/options_file/fixtures/OPTIONS-v1-cache-index-and-filter-blocks")
}

/// The v1 file with a `cache_index_and_filter_blocks` line: decodes exactly,
/// re-encodes byte for byte, and without the line is the merge-operator fixture, which
/// (without the key) takes the default.
#[test]
fn frozen_fixture_v1_cache_index_and_filter_blocks_decodes_exactly_and_encodes_identically() {
    let opts = merge_operator_fixture_options().with_cache_index_and_filter_blocks(true);
    // As the writer of that fixture wrote it: without the keys added since.
    let encoded = without_keys(&encode(&opts), KEYS_AFTER_CACHE_INDEX_AND_FILTER_BLOCKS);
    let frozen = std::fs::read_to_string(cache_index_and_filter_blocks_fixture_path())
        .expect("fixture present");
    let stored = decode(&frozen).expect("fixture decodes");
    assert_eq!(stored.options, opts);
    assert!(stored.options.cache_index_and_filter_blocks);
    assert!(stored.unknown.is_empty(), "{:?}", stored.unknown);
    assert_eq!(encoded, frozen, "the v1 encoding changed");
    let older = std::fs::read_to_string(merge_operator_fixture_path()).expect("fixture present");
    assert_eq!(
        frozen.replace("cache_index_and_filter_blocks=true\n", ""),
        older
    );
    let stored = decode(&older).expect("older fixture decodes");
    assert!(!stored.options.cache_index_and_filter_blocks);
}

/// `[DBOptions]` keys appended after `OPTIONS-v1-cache-index-and-filter-blocks`.
const KEYS_AFTER_CACHE_INDEX_AND_FILTER_BLOCKS: &[&str] =
    &["delayed_compaction", "query_compaction"];

/// `[DBOptions]` keys appended after `OPTIONS-v1-delayed-compaction-vsmt`.
const KEYS_AFTER_DELAYED_COMPACTION: &[&str] = &["query_compaction"];

/// The fixture of the v1 writer that added `delayed_compaction`.
fn delayed_compaction_fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/options_file/fixtures/OPTIONS-v1-delayed-compaction")
}

/// The fixture of the v1 writer that gave `delayed_compaction` its `vsmt` and
/// `garbage` keys.
fn delayed_compaction_vsmt_fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/options_file/fixtures/OPTIONS-v1-delayed-compaction-vsmt")
}

/// The first v1 file with a `delayed_compaction` line (`vct:3` alone): decodes
/// exactly, the keys it lacks taking their defaults; without the line it is the
/// previous fixture, which (without the key) is off. It re-encodes as today's writer
/// writes it: with every key.
#[test]
fn frozen_fixture_v1_delayed_compaction_decodes_exactly() {
    let opts = merge_operator_fixture_options()
        .with_cache_index_and_filter_blocks(true)
        .with_delayed_compaction(Some(DelayedCompaction::new().with_vct(3)));
    let frozen =
        std::fs::read_to_string(delayed_compaction_fixture_path()).expect("fixture present");
    let stored = decode(&frozen).expect("fixture decodes");
    assert_eq!(stored.options, opts);
    assert!(stored.unknown.is_empty(), "{:?}", stored.unknown);
    assert_eq!(
        without_keys(&encode(&opts), KEYS_AFTER_DELAYED_COMPACTION),
        frozen.replace(
            "delayed_compaction=vct:3\n",
            "delayed_compaction=vct:3,vsmt:5,garbage:0.1\n"
        )
    );
    let older = std::fs::read_to_string(cache_index_and_filter_blocks_fixture_path())
        .expect("fixture present");
    assert_eq!(frozen.replace("delayed_compaction=vct:3\n", ""), older);
    assert_eq!(
        decode(&older)
            .expect("older fixture decodes")
            .options
            .delayed_compaction,
        None
    );
}

/// The v1 file with every `delayed_compaction` key: decodes exactly and re-encodes
/// byte for byte; keys in another order decode the same; a malformed, unknown or
/// out-of-range setting is refused, naming the line or the option.
#[test]
fn frozen_fixture_v1_delayed_compaction_vsmt_decodes_exactly_and_encodes_identically() {
    let d = DelayedCompaction::new()
        .with_vct(3)
        .with_vsmt(2)
        .with_max_garbage_ratio(0.25);
    let opts = merge_operator_fixture_options()
        .with_cache_index_and_filter_blocks(true)
        .with_delayed_compaction(Some(d));
    let encoded = without_keys(&encode(&opts), KEYS_AFTER_DELAYED_COMPACTION);
    let frozen =
        std::fs::read_to_string(delayed_compaction_vsmt_fixture_path()).expect("fixture present");
    let stored = decode(&frozen).expect("fixture decodes");
    assert_eq!(stored.options, opts);
    assert!(stored.unknown.is_empty(), "{:?}", stored.unknown);
    assert_eq!(encoded, frozen, "the v1 encoding changed");
    let line = "delayed_compaction=vct:3,vsmt:2,garbage:0.25";
    assert!(frozen.contains(line));
    let reordered = frozen.replace(line, "delayed_compaction=garbage:0.25,vct:3,vsmt:2");
    assert_eq!(decode(&reordered).expect("decodes").options, opts);
    for bad in [
        "vct:x",
        "vct:3,vsmt",
        "on",
        "vct:3,zzz:1",
        "vsmt:-1",
        "garbage:x",
    ] {
        let text = frozen.replace(line, &format!("delayed_compaction={bad}"));
        let err = decode(&text).expect_err(bad);
        assert!(
            err.to_string().contains("delayed_compaction"),
            "{bad}: {err}"
        );
    }
}

/// The fixture of the v1 writer that added `query_compaction`.
fn query_compaction_fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/options_file/fixtures/OPTIONS-v1-query-compaction")
}

/// The v1 file with a `query_compaction` line: decodes exactly and re-encodes byte for
/// byte; without the line it is the previous fixture (off); keys in another order
/// decode the same; a malformed, unknown or out-of-range setting is refused.
#[test]
fn frozen_fixture_v1_query_compaction_decodes_exactly_and_encodes_identically() {
    let q = crate::QueryCompaction::new()
        .with_selectivity(0.5)
        .with_start_level(1)
        .with_min_levels(2)
        .with_min_bytes(4096)
        .with_profit(0.25)
        .with_max_buffer_bytes(1 << 20);
    let d = DelayedCompaction::new()
        .with_vct(3)
        .with_vsmt(2)
        .with_max_garbage_ratio(0.25);
    let opts = merge_operator_fixture_options()
        .with_cache_index_and_filter_blocks(true)
        .with_delayed_compaction(Some(d))
        .with_query_compaction(Some(q));
    let frozen = std::fs::read_to_string(query_compaction_fixture_path()).expect("fixture present");
    let stored = decode(&frozen).expect("fixture decodes");
    assert_eq!(stored.options, opts);
    assert!(stored.unknown.is_empty(), "{:?}", stored.unknown);
    let line = "query_compaction=selectivity:0.5,start_level:1,min_levels:2,min_bytes:4096,\
                profit:0.25,buffer:1048576";
    assert!(frozen.contains(line));
    // Today's writer adds the keys appended since (`background`, off here).
    assert_eq!(
        encode(&opts),
        frozen.replace(line, &format!("{line},background:false,min_obsolete:0.05")),
        "the v1 encoding changed"
    );
    let older =
        std::fs::read_to_string(delayed_compaction_vsmt_fixture_path()).expect("fixture present");
    assert_eq!(frozen.replace(&format!("{line}\n"), ""), older);
    let reordered = frozen.replace(
        line,
        "query_compaction=buffer:1048576,profit:0.25,min_bytes:4096,min_levels:2,\
         start_level:1,selectivity:0.5",
    );
    assert_eq!(decode(&reordered).expect("decodes").options, opts);
    let partial = frozen.replace(line, "query_compaction=start_level:3");
    assert_eq!(
        decode(&partial).expect("decodes").options.query_compaction,
        Some(crate::QueryCompaction::new().with_start_level(3))
    );
    for bad in [
        "selectivity:x",
        "on",
        "profit:0.1,zzz:1",
        "start_level",
        "min_bytes:-1",
    ] {
        let text = frozen.replace(line, &format!("query_compaction={bad}"));
        let err = decode(&text).expect_err(bad);
        assert!(err.to_string().contains("query_compaction"), "{bad}: {err}");
    }
    for bad in [
        crate::QueryCompaction::new().with_selectivity(0.0),
        crate::QueryCompaction::new().with_start_level(0),
        crate::QueryCompaction::new().with_start_level(7),
        crate::QueryCompaction::new().with_min_levels(0),
        crate::QueryCompaction::new().with_profit(1.5),
        crate::QueryCompaction::new().with_max_buffer_bytes(0),
    ] {
        let err = Options::default()
            .with_query_compaction(Some(bad))
            .validate()
            .expect_err("out of range");
        assert!(err.to_string().contains("query_compaction."), "{err}");
    }
}

/// The v1 file whose `query_compaction` line has `background`: decodes exactly and
/// re-encodes byte for byte; a malformed value is refused.
#[test]
fn frozen_fixture_v1_query_compaction_background_decodes_exactly_and_encodes_identically() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/options_file/fixtures/OPTIONS-v1-query-compaction-background");
    let opts = merge_operator_fixture_options()
        .with_cache_index_and_filter_blocks(true)
        .with_query_compaction(Some(
            crate::QueryCompaction::new()
                .with_start_level(3)
                .with_background(true),
        ));
    let frozen = std::fs::read_to_string(&path).expect("fixture present");
    let stored = decode(&frozen).expect("fixture decodes");
    assert_eq!(stored.options, opts);
    // Today's writer appends `min_obsolete` (its default here).
    assert_eq!(
        encode(&opts),
        frozen.replace(",background:true\n", ",background:true,min_obsolete:0.05\n"),
        "the v1 encoding changed"
    );
    assert!(frozen.contains(",background:true\n"));
    let text = frozen.replace(",background:true\n", ",background:maybe\n");
    let err = decode(&text).expect_err("not a bool");
    assert!(err.to_string().contains("query_compaction"), "{err}");
}

/// The v1 file whose `query_compaction` line has `min_obsolete`: decodes exactly and
/// re-encodes byte for byte; out of range is refused.
/// Checks that the frozen fixture `name` decodes to `opts` and that `opts` encodes to
/// it byte for byte (writing it first under `STRATA_REGEN_FIXTURES`, for a new
/// fixture only); returns its text.
fn check_frozen(name: &str, opts: &Options) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/options_file/fixtures")
        .join(name);
    let encoded = encode(opts);
    if std::env::var_os("STRATA_REGEN_FIXTURES").is_some() {
        std::fs::write(&path, &encoded).expect("write fixture");
    }
    let frozen = std::fs::read_to_string(&path).expect("fixture present");
    assert_eq!(&decode(&frozen).expect("fixture decodes").options, opts);
    assert_eq!(encoded, frozen, "the v1 encoding changed");
    frozen
}

#[test]
fn frozen_fixture_v1_query_compaction_min_obsolete_decodes_exactly_and_encodes_identically() {
    let opts = merge_operator_fixture_options()
        .with_cache_index_and_filter_blocks(true)
        .with_query_compaction(Some(crate::QueryCompaction::new().with_min_obsolete(0.2)));
    let frozen = check_frozen("OPTIONS-v1-query-compaction-min-obsolete", &opts);
    assert!(frozen.contains(",min_obsolete:0.2\n"));
    let err = Options::default()
        .with_query_compaction(Some(crate::QueryCompaction::new().with_min_obsolete(1.5)))
        .validate()
        .expect_err("out of range");
    assert!(
        err.to_string().contains("query_compaction.min_obsolete"),
        "{err}"
    );
}

/// The v1 file with a memory budget: the key comes after `merge_operator` and only
/// when set, so every older fixture (no budget) still encodes byte for byte.
#[test]
fn frozen_fixture_v1_memory_budget_decodes_exactly_and_encodes_identically() {
    let opts = merge_operator_fixture_options()
        .with_cache_index_and_filter_blocks(true)
        .with_memory_budget(256 << 20);
    let frozen = check_frozen("OPTIONS-v1-memory-budget", &opts);
    assert!(frozen.contains("merge_operator=strata.append:2c20\nmemory_budget=268435456\n"));
    assert!(!encode(&Options::default()).contains("memory_budget"));
    let err = Options::default()
        .with_memory_budget(64 << 10)
        .validate()
        .expect_err("below 128 KiB");
    assert!(err.to_string().contains("memory_budget"), "{err}");
}

/// The v1 file with per-level fanout factors: written after `memory_budget`, only
/// when set, colon-separated as RocksDB writes them.
#[test]
fn frozen_fixture_v1_level_multiplier_additional_decodes_exactly_and_encodes_identically() {
    let opts = merge_operator_fixture_options()
        .with_cache_index_and_filter_blocks(true)
        .with_max_bytes_for_level_multiplier_additional(vec![1.0, 1.0, 4.5]);
    let frozen = check_frozen("OPTIONS-v1-level-multiplier-additional", &opts);
    assert!(frozen.contains(
        "merge_operator=strata.append:2c20\nmax_bytes_for_level_multiplier_additional=1:1:4.5\n"
    ));
    assert!(!encode(&Options::default()).contains("additional"));
    for (bad, field) in [
        (
            vec![1.0, 0.0],
            "max_bytes_for_level_multiplier_additional[1]",
        ),
        (
            vec![f64::NAN],
            "max_bytes_for_level_multiplier_additional[0]",
        ),
        (
            vec![1.0; 8],
            "max_bytes_for_level_multiplier_additional.len()",
        ),
    ] {
        let err = Options::default()
            .with_max_bytes_for_level_multiplier_additional(bad)
            .validate()
            .expect_err("invalid");
        assert!(err.to_string().contains(field), "{err}");
    }
}

/// The v1 file with two tiers: the `tiering` key after the other optional keys, only
/// when set; the `[DbPath]` sections name the two paths.
#[test]
fn frozen_fixture_v1_tiering_decodes_exactly_and_encodes_identically() {
    let opts = merge_operator_fixture_options()
        .with_cache_index_and_filter_blocks(true)
        .with_db_paths(vec![
            DbPath::new("/fast/db", 1 << 30),
            DbPath::new("/slow/db", 0),
        ])
        .with_tiering(Some(crate::Tiering::fat().with_fd_size(512 << 20)));
    let frozen = check_frozen("OPTIONS-v1-tiering", &opts);
    assert!(frozen.contains(
        "merge_operator=strata.append:2c20\ntiering=mode:fat,fast_path:0,slow_path:1,\
         fd_size:536870912\n"
    ));
    assert!(!encode(&Options::default()).contains("tiering"));
    let err = decode(&frozen.replace("mode:fat", "mode:hot"))
        .expect_err("unknown mode")
        .to_string();
    assert!(err.contains("tiering"), "{err}");
}

/// `TieringMode::HotRap` is the same key with `mode:hotrap`, frozen beside `fat`.
#[test]
fn frozen_fixture_v1_tiering_hotrap_decodes_exactly_and_encodes_identically() {
    let opts = merge_operator_fixture_options()
        .with_cache_index_and_filter_blocks(true)
        .with_db_paths(vec![
            DbPath::new("/fast/db", 1 << 30),
            DbPath::new("/slow/db", 0),
        ])
        .with_tiering(Some(crate::Tiering::hotrap().with_fd_size(512 << 20)));
    let frozen = check_frozen("OPTIONS-v1-tiering-hotrap", &opts);
    assert!(frozen.contains("tiering=mode:hotrap,fast_path:0,slow_path:1,fd_size:536870912\n"));
}

/// `TieringMode::TimeAware` is `mode:time` with its window in milliseconds, frozen.
#[test]
fn frozen_fixture_v1_tiering_time_decodes_exactly_and_encodes_identically() {
    let opts = merge_operator_fixture_options()
        .with_cache_index_and_filter_blocks(true)
        .with_db_paths(vec![
            DbPath::new("/fast/db", 1 << 30),
            DbPath::new("/slow/db", 0),
        ])
        .with_tiering(Some(crate::Tiering::time_aware(
            std::time::Duration::from_secs(300),
        )));
    let frozen = check_frozen("OPTIONS-v1-tiering-time", &opts);
    assert!(
        frozen.contains("tiering=mode:time,fast_path:0,slow_path:1,fd_size:0,window_ms:300000\n")
    );
    for (bad, says) in [
        (",window_ms:300000", "needs window_ms"),
        ("mode:time", "needs mode:time"),
    ] {
        let text = match bad {
            "mode:time" => frozen.replace("mode:time", "mode:fat"),
            _ => frozen.replace(bad, ""),
        };
        let err = decode(&text).expect_err(says).to_string();
        assert!(err.contains(says), "{err}");
    }
    let err = Options::default()
        .with_db_paths(vec![DbPath::new("/f", 1 << 30), DbPath::new("/s", 0)])
        .with_tiering(Some(crate::Tiering::time_aware(std::time::Duration::ZERO)))
        .validate()
        .expect_err("empty window");
    assert!(err.to_string().contains("tiering.window"), "{err}");
}

/// HotRAP's hot-set limit and ablation switches: each written only when it departs
/// from its default, after the four first items; frozen.
#[test]
fn frozen_fixture_v1_tiering_hotrap_ablations_decodes_exactly_and_encodes_identically() {
    let tiering = crate::Tiering::hotrap()
        .with_fd_size(512 << 20)
        .with_hot_set_limit(crate::HotSetLimit::Fixed(64 << 20))
        .with_retain(false)
        .with_promote_by_compaction(false)
        .with_promote_by_flush(false)
        .with_hotness_check(false);
    let opts = merge_operator_fixture_options()
        .with_cache_index_and_filter_blocks(true)
        .with_db_paths(vec![
            DbPath::new("/fast/db", 1 << 30),
            DbPath::new("/slow/db", 0),
        ])
        .with_tiering(Some(tiering));
    let frozen = check_frozen("OPTIONS-v1-tiering-hotrap-ablations", &opts);
    assert!(frozen.contains(
        "tiering=mode:hotrap,fast_path:0,slow_path:1,fd_size:536870912,\
         hot_set_limit:67108864,retain:false,promote_by_compaction:false,\
         promote_by_flush:false,hotness_check:false\n"
    ));
    // Outside HotRAP the switches are refused, by name; so is a limit over the budget.
    let with = |t: crate::Tiering| {
        opts.clone()
            .with_tiering(Some(t))
            .validate()
            .expect_err("refused")
            .to_string()
    };
    let e = with(
        crate::Tiering::fat()
            .with_fd_size(512 << 20)
            .with_retain(false),
    );
    assert!(e.contains("tiering.retain"), "{e}");
    let e = with(tiering.with_hot_set_limit(crate::HotSetLimit::Fixed(1 << 40)));
    assert!(e.contains("tiering.hot_set_limit"), "{e}");
    let e = with(tiering.with_hot_set_limit(crate::HotSetLimit::Fixed(0)));
    assert!(e.contains("tiering.hot_set_limit"), "{e}");
}

/// An operator that is not a built-in: its name is kept, the options have none.
#[test]
fn a_custom_operator_name_is_kept_for_the_check() {
    let mut text = encode(&Options::default());
    let at = text.find("\n[LevelOptions").expect("a level section");
    text.insert_str(at, "\nmerge_operator=my.counter");
    let stored = decode(&text).expect("decodes");
    assert_eq!(stored.options.merge_operator, None);
    assert_eq!(stored.merge_operator.as_deref(), Some("my.counter"));
    let counter: std::sync::Arc<dyn crate::MergeOperator> =
        std::sync::Arc::new(crate::merge::U64Add);
    let e = check_compatible(
        Some(&stored),
        &Options::default().with_merge_operator(Some(counter)),
        None,
    )
    .expect_err("another operator");
    assert!(e.to_string().contains("my.counter"), "{e}");
    check_compatible(Some(&stored), &Options::default(), None).expect("no operator is fine");
}

#[test]
fn default_options_name_every_field_once() {
    let text = encode(&Options::default());
    let keys: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    // The version key, every DB field, every level field (one level by default).
    assert_eq!(
        keys.len(),
        1 + DB_FIELDS.len() + LEVEL_FIELDS.len(),
        "{text}"
    );
    let names: HashSet<&str> = DB_FIELDS.iter().map(|f| f.name).collect();
    assert_eq!(names.len(), DB_FIELDS.len(), "duplicate DB field name");
    assert_eq!(decode(&text).expect("decode").options, Options::default());
}

fn compression() -> impl Strategy<Value = Compression> {
    prop_oneof![
        Just(Compression::None),
        Just(Compression::Lz4),
        Just(Compression::Zstd)
    ]
}

fn finite() -> impl Strategy<Value = f64> {
    any::<f64>().prop_filter("finite", |f| f.is_finite())
}

fn level() -> impl Strategy<Value = LevelOptions> {
    (any::<usize>(), any::<usize>(), compression(), any::<u32>()).prop_map(|(b, r, c, f)| {
        LevelOptions::default()
            .with_block_size(b)
            .with_block_restart_interval(r)
            .with_compression(c)
            .with_bloom_bits_per_key(f)
    })
}

/// Any options, valid or not: encoding does not validate.
fn options() -> impl Strategy<Value = Options> {
    let sizes = (
        any::<bool>(),
        any::<bool>(),
        any::<usize>(),
        any::<usize>(),
        any::<u64>(),
        any::<u64>(),
        finite(),
        any::<usize>(),
    );
    let triggers = (
        any::<usize>(),
        any::<usize>(),
        any::<usize>(),
        any::<u64>(),
        any::<u64>(),
        any::<usize>(),
        any::<usize>(),
        any::<usize>(),
    );
    let policies = (
        prop_oneof![
            Just(CompactionPriority::MinOverlappingRatio),
            Just(CompactionPriority::OldestSmallestSeqFirst)
        ],
        prop_oneof![
            Just(OutputPartitioning::Fixed),
            finite().prop_map(|variance| OutputPartitioning::Aligned { variance })
        ],
        any::<bool>(),
        any::<bool>(),
        prop_oneof![
            Just(WalRecoveryMode::TolerateCorruptedTailRecords),
            Just(WalRecoveryMode::AbsoluteConsistency),
            Just(WalRecoveryMode::PointInTime)
        ],
        any::<u64>(),
        proptest::collection::vec(level(), 1..6),
        any::<bool>(),
        any::<bool>(),
    );
    // Paths as `Options::validate` allows them: one trimmed line of UTF-8.
    let paths = proptest::collection::vec(
        ("[a-zA-Z0-9/_.:= -]{0,20}[a-zA-Z0-9/_.:=-]", any::<u64>())
            .prop_map(|(p, t)| DbPath::new(p.trim_start(), t)),
        0..4,
    );
    let merge = prop_oneof![
        Just(None),
        Just(Some(
            std::sync::Arc::new(crate::merge::U64Add) as std::sync::Arc<dyn crate::MergeOperator>
        )),
        Just(Some(
            std::sync::Arc::new(crate::merge::Max) as std::sync::Arc<dyn crate::MergeOperator>
        )),
        proptest::collection::vec(any::<u8>(), 0..4).prop_map(|sep| Some(std::sync::Arc::new(
            crate::merge::Append::new(&sep)
        )
            as std::sync::Arc<dyn crate::MergeOperator>)),
    ];
    let delayed =
        proptest::option::of((2usize..1000).prop_map(|vct| DelayedCompaction::new().with_vct(vct)));
    let additional = proptest::collection::vec(0.01f64..1e6, 0..4);
    // Every mode and item, valid or not: the round trip holds for every value.
    let mode = prop_oneof![
        Just(crate::Tiering::fat()),
        Just(crate::Tiering::hotrap()),
        (any::<u64>(), 0u32..1_000_000_000).prop_map(|(secs, nanos)| {
            crate::Tiering::time_aware(std::time::Duration::new(secs, nanos))
        }),
        (any::<u64>(), 0u32..1000).prop_map(|(ms, _)| {
            crate::Tiering::time_aware(std::time::Duration::from_millis(ms))
        }),
    ];
    let switches = (any::<[bool; 5]>(), proptest::option::of(any::<u64>()));
    let tiering = proptest::option::of((0u32..4, 0u32..4, any::<u64>(), mode, switches).prop_map(
        |(fast, slow, fd, mode, ([r, c, f, h, p], limit))| {
            mode.with_fast_path(fast)
                .with_slow_path(slow)
                .with_fd_size(fd)
                .with_retain(r)
                .with_promote_by_compaction(c)
                .with_promote_by_flush(f)
                .with_hotness_check(h)
                .with_hot_aware_pick(p)
                .with_hot_set_limit(
                    limit.map_or(crate::HotSetLimit::Auto, crate::HotSetLimit::Fixed),
                )
        },
    ));
    (
        sizes,
        triggers,
        policies,
        (
            any::<bool>(),
            paths,
            merge,
            any::<bool>(),
            delayed,
            (additional, tiering),
        ),
    )
        .prop_map(
            |(s, t, p, (pipelined, paths, merge, cache_meta, delayed, (additional, tiering)))| {
                Options::default()
                    .with_merge_operator(merge)
                    .with_create_if_missing(s.0)
                    .with_error_if_exists(s.1)
                    .with_write_buffer_size(s.2)
                    .with_max_write_buffer_number(s.3)
                    .with_target_file_size_base(s.4)
                    .with_max_bytes_for_level_base(s.5)
                    .with_max_bytes_for_level_multiplier(s.6)
                    .with_num_levels(s.7)
                    .with_level0_file_num_compaction_trigger(t.0)
                    .with_level0_slowdown_writes_trigger(t.1)
                    .with_level0_stop_writes_trigger(t.2)
                    .with_soft_pending_compaction_bytes_limit(t.3)
                    .with_hard_pending_compaction_bytes_limit(t.4)
                    .with_block_cache_capacity(t.5)
                    .with_max_open_files(t.6)
                    .with_max_background_jobs(t.7)
                    .with_compaction_priority(p.0)
                    .with_output_partitioning(p.1)
                    .with_snapshot_filter(p.2)
                    .with_paranoid_checks(p.3)
                    .with_wal_recovery_mode(p.4)
                    .with_max_manifest_file_size(p.5)
                    .with_levels(p.6)
                    .with_enable_pipelined_write(pipelined)
                    .with_use_direct_reads(p.7)
                    .with_use_direct_io_for_flush_and_compaction(p.8)
                    .with_db_paths(paths)
                    .with_cache_index_and_filter_blocks(cache_meta)
                    .with_delayed_compaction(delayed)
                    .with_max_bytes_for_level_multiplier_additional(additional)
                    .with_tiering(tiering)
            },
        )
}

proptest! {
    #[test]
    fn every_options_value_round_trips(o in options()) {
        let text = encode(&o);
        let stored = decode(&text).expect("own encoding decodes");
        prop_assert_eq!(stored.version, OPTIONS_VERSION);
        prop_assert!(stored.unknown.is_empty());
        prop_assert_eq!(&stored.options, &o);
        prop_assert_eq!(encode(&stored.options), text);
    }

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC*") {
        let _ = decode(&s);
    }

    #[test]
    fn mutated_fixture_never_panics(pos in any::<prop::sample::Index>(), c in any::<char>()) {
        let mut text = encode(&fixture_options());
        let i = pos.index(text.len());
        if text.is_char_boundary(i) {
            text.insert(i, c);
        }
        let _ = decode(&text);
    }
}

#[test]
fn newer_writers_keys_and_sections_are_kept_not_errors() {
    let text = "[Version]\nstrata_options_version=1\nwritten_by=strata 9\n\
                [DBOptions]\nnum_levels=5\nfuture_knob=42\n\
                [TierOptions \"1\"]\ndevice=slow\n\
                [LevelOptions \"0\"]\ncompression=lz4\ncolumn_groups=a,b\n";
    let stored = decode(text).expect("decodes");
    assert_eq!(stored.options.num_levels, 5);
    assert_eq!(stored.options.levels.len(), 1);
    assert_eq!(stored.options.level(0).compression, Compression::Lz4);
    // Options the file does not mention (an older writer's) keep their defaults.
    assert_eq!(
        stored.options.write_buffer_size,
        Options::default().write_buffer_size
    );
    assert_eq!(stored.options.level(0).block_size, 4096);
    let unknown: Vec<(&str, &str, &str)> = stored
        .unknown
        .iter()
        .map(|u| (u.section.as_str(), u.key.as_str(), u.value.as_str()))
        .collect();
    assert_eq!(
        unknown,
        [
            ("Version", "written_by", "strata 9"),
            ("DBOptions", "future_knob", "42"),
            ("TierOptions \"1\"", "device", "slow"),
            ("LevelOptions \"0\"", "column_groups", "a,b"),
        ]
    );
}

#[test]
fn blanks_comments_and_crlf_are_tolerated() {
    let text = "# c\r\n\r\n  [Version]  \r\n strata_options_version = 1 \r\n[DBOptions]\r\n\
                # another\r\nnum_levels = 4\r\n";
    assert_eq!(decode(text).expect("decodes").options.num_levels, 4);
}

/// `(text, line, offset, reason fragment)`: each must be Corruption naming line and
/// offset.
#[test]
fn malformed_lines_are_corruption_naming_line_and_offset() {
    let v = "[Version]\nstrata_options_version=1\n"; // 2 lines, 35 bytes
    let cases: Vec<(String, usize, u64, &str)> = vec![
        (
            format!("{v}[DBOptions]\nnum_levels\n"),
            4,
            47,
            "expected `[section]`",
        ),
        (
            format!("{v}[DBOptions]\nnum_levels=seven\n"),
            4,
            47,
            "bad value for num_levels=`seven`",
        ),
        (
            format!("{v}[DBOptions]\nnum_levels=3\nnum_levels=4\n"),
            5,
            60,
            "duplicate key `num_levels`",
        ),
        (format!("{v}[DBOptions]\ncompression=lz4\n"), 0, 0, ""), // unknown in DBOptions: fine
        (
            format!("{v}[LevelOptions \"0\"]\ncompression=snappy\n"),
            4,
            54,
            "unknown value for compression",
        ),
        (
            format!("{v}[LevelOptions \"1\"]\n"),
            3,
            35,
            "expected [LevelOptions \"0\"]",
        ),
        (
            format!("{v}[LevelOptions \"0\"]\n[LevelOptions \"0\"]\n"),
            4,
            54,
            "expected [LevelOptions \"1\"]",
        ),
        (format!("{v}[LevelOptions 0]\n"), 3, 35, "bad index"),
        (
            format!("{v}[DBOptions]\n[DBOptions]\n"),
            4,
            47,
            "duplicate section",
        ),
        (
            format!("{v}[DBOptions\n"),
            3,
            35,
            "unterminated section header",
        ),
        (
            format!("{v}[DBOptions]\noutput_partitioning=aligned\n"),
            4,
            47,
            "expected fixed or aligned",
        ),
        (
            "num_levels=3\n".to_string(),
            1,
            0,
            "entry before the first section",
        ),
        (
            "[DBOptions]\nnum_levels=3\n".to_string(),
            1,
            0,
            "the first section must be [Version]",
        ),
        (
            "[Version]\n[DBOptions]\n".to_string(),
            2,
            10,
            "lacks strata_options_version",
        ),
        (
            "[Version]\nstrata_options_version=0\n".to_string(),
            2,
            10,
            "bad strata_options_version",
        ),
        ("".to_string(), 0, 0, "missing [Version]"),
        ("# only a comment\n".to_string(), 0, 17, "missing [Version]"),
    ];
    for (text, line, offset, fragment) in cases {
        let got = decode(&text);
        if fragment.is_empty() {
            assert!(got.is_ok(), "{text:?}: {got:?}");
            continue;
        }
        match got {
            Err(Error::Corruption {
                file,
                offset: o,
                reason,
            }) => {
                assert_eq!(file, Path::new("OPTIONS"), "{text:?}");
                assert_eq!(o, offset, "{text:?}: {reason}");
                if line > 0 {
                    assert!(
                        reason.starts_with(&format!("line=`{line}`: ")),
                        "{text:?}: {reason}"
                    );
                }
                assert!(reason.contains(fragment), "{text:?}: {reason}");
            }
            other => panic!("{text:?}: expected corruption, got {other:?}"),
        }
    }
}

#[test]
fn a_newer_format_version_is_refused_as_invalid_argument() {
    let err = decode("[Version]\nstrata_options_version=2\n[Whatever]\n???\n").expect_err("newer");
    assert!(
        matches!(&err, Error::InvalidArgument(m) if m.contains("strata_options_version=`2`")),
        "{err}"
    );
}

#[test]
fn fewer_levels_than_the_tree_needs_is_invalid_argument_naming_num_levels() {
    let new = Options::default().with_num_levels(3);
    let err = check_compatible(None, &new, Some(5)).expect_err("too few levels");
    assert_eq!(
        err.to_string(),
        "invalid argument: num_levels=`3` is less than the database's deepest level L5 \
         (needs >= 6)"
    );
    let stored = decode(&encode(&Options::default())).expect("decode");
    let err = check_compatible(Some(&stored), &new, Some(3)).expect_err("L3 needs 4");
    assert!(
        matches!(&err, Error::InvalidArgument(m)
            if m.starts_with("num_levels=`3` is less than the database's deepest level L3 (needs >= 4)")
            && m.ends_with("it was last opened with num_levels=`7`")),
        "{err}"
    );
}

#[test]
fn levels_that_hold_every_file_are_compatible() {
    let stored = decode(&encode(&Options::default())).expect("decode");
    for (num_levels, deepest) in [(3, Some(2)), (3, None), (7, Some(6)), (32, Some(6))] {
        let new = Options::default().with_num_levels(num_levels);
        check_compatible(Some(&stored), &new, deepest).expect("compatible");
        check_compatible(None, &new, deepest).expect("compatible without OPTIONS");
    }
    // Per-level options change freely: tables are self-describing.
    let new = Options::default().with_every_level(|l| {
        l.with_compression(Compression::Zstd)
            .with_block_size(64)
            .with_bloom_bits_per_key(0)
    });
    check_compatible(Some(&stored), &new, Some(6)).expect("compatible");
}

#[test]
fn load_and_store_on_a_file_system() {
    let fs = FaultFs::new();
    let dir = Path::new("/db");
    fs.create_dir_all(dir).expect("mkdir");
    assert_eq!(load(&fs, dir).expect("no file"), None);
    store(&fs, dir, &fixture_options(), &BTreeMap::new()).expect("store");
    let stored = load(&fs, dir).expect("load").expect("present");
    assert_eq!(stored.options, fixture_options());
    // The Debug text of older Strata builds is skipped, not an error.
    write_file_atomic(
        &fs,
        dir,
        FILE_NAME,
        b"Options {\n    create_if_missing: true,\n}\n",
    )
    .expect("write");
    assert_eq!(load(&fs, dir).expect("legacy"), None);
    // Errors name the full path.
    write_file_atomic(
        &fs,
        dir,
        FILE_NAME,
        b"[Version]\nstrata_options_version=1\nbad\n",
    )
    .expect("write");
    let err = load(&fs, dir).expect_err("malformed");
    assert!(
        matches!(&err, Error::Corruption { file, offset: 35, .. } if file == &dir.join("OPTIONS")),
        "{err}"
    );
    write_file_atomic(&fs, dir, FILE_NAME, b"[Version]\n\xff\n").expect("write");
    let err = load(&fs, dir).expect_err("not utf-8");
    assert!(
        matches!(&err, Error::Corruption { offset: 10, reason, .. } if reason.contains("UTF-8")),
        "{err}"
    );
}

/// The OPTIONS file records each open's options and is read back by the next open:
/// what open wrote, [`load`] reads back exactly (per-level vector included); a damaged
/// file stops the open with `Corruption` naming the file and line instead of being
/// silently ignored; the `Debug` text that older builds wrote is skipped and replaced
/// by the parseable form.
#[test]
fn options_file_is_read_back_at_open() {
    use crate::{Db, ErrorKind, ReadOptions, WriteOptions};
    use std::sync::Arc;

    let fs = FaultFs::new();
    let dir = Path::new("/db");
    let on = || Db::builder().file_system(Arc::new(fs.clone()));
    let custom = Options::default()
        .with_num_levels(5)
        .with_write_buffer_size(1 << 20)
        .with_levels(vec![
            LevelOptions::default(),
            LevelOptions::default().with_compression(Compression::Lz4),
        ]);
    let db = on().open(dir, custom.clone()).expect("open");
    db.put(&WriteOptions::default(), b"k", b"v").expect("put");
    db.close().expect("close");
    let stored = load(&fs, dir).expect("load").expect("present");
    assert_eq!(stored.options, custom);

    // Damage: the open refuses, naming the file and the line.
    write_file_atomic(
        &fs,
        dir,
        FILE_NAME,
        b"[Version]\nstrata_options_version=1\n???\n",
    )
    .expect("write");
    let err = on().open(dir, custom).expect_err("damaged OPTIONS");
    assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("/db/OPTIONS") && msg.contains("line=`3`"),
        "{msg}"
    );

    // An older build's Debug text is skipped; the open rewrites it in the v1 form.
    write_file_atomic(&fs, dir, FILE_NAME, b"Options {\n    num_levels: 7,\n}\n").expect("write");
    let db = on()
        .open(dir, Options::default())
        .expect("legacy OPTIONS is no obstacle");
    assert_eq!(
        db.get(&ReadOptions::default(), b"k").expect("get"),
        Some(b"v".to_vec())
    );
    db.close().expect("close");
    let stored = load(&fs, dir).expect("load").expect("present");
    assert_eq!(stored.options, Options::default());
}

/// Two families, one with every per-tree field away from its default, the other with
/// a name that needs quoting.
fn fixture_families() -> BTreeMap<String, CfOptions> {
    let users = fixture_options()
        .with_merge_operator(Some(std::sync::Arc::new(crate::merge::U64Add)))
        .with_delayed_compaction(Some(DelayedCompaction::new().with_vct(3)))
        .with_max_bytes_for_level_multiplier_additional(vec![1.0, 2.5])
        .cf_options();
    let odd = CfOptions::default().with_num_levels(4).with_levels(vec![
        LevelOptions::default().with_compression(Compression::Zstd)
    ]);
    BTreeMap::from([
        ("users".to_string(), users),
        ("we\"ird\\ name\n".to_string(), odd),
    ])
}

/// The v1 file with `[CFOptions]` and `[CFLevelOptions]` sections: decodes to the
/// families exactly (the merge operator's name recorded beside the operator) and
/// re-encodes byte for byte; a file without the sections records no family.
#[test]
fn frozen_fixture_v1_cf_options_decodes_exactly_and_encodes_identically() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/options_file/fixtures/OPTIONS-v1-cf-options");
    let opts = merge_operator_fixture_options();
    let families = fixture_families();
    let encoded = encode_with_families(&opts, &families);
    if std::env::var_os("STRATA_REGEN_FIXTURES").is_some() {
        std::fs::write(&path, &encoded).expect("write fixture");
    }
    let frozen = std::fs::read_to_string(&path).expect("fixture present");
    assert_eq!(encoded, frozen, "the v1 encoding changed");
    let stored = decode(&frozen).expect("fixture decodes");
    assert_eq!(stored.options, opts);
    assert!(stored.unknown.is_empty(), "{:?}", stored.unknown);
    let decoded: BTreeMap<String, CfOptions> = stored
        .families
        .iter()
        .map(|(n, f)| (n.clone(), f.options.clone()))
        .collect();
    assert_eq!(decoded, families);
    let users = stored.families.get("users").expect("users");
    assert_eq!(users.merge_operator.as_deref(), Some("strata.u64_add"));
    assert!(frozen.contains("[CFOptions \"we\\\"ird\\\\ name\\n\"]\n"));
    assert!(frozen.contains("[CFLevelOptions \"users\" \"2\"]\n"));
    // Database-wide fields stay out of a family's section.
    let section = frozen
        .split("[CFOptions \"users\"]")
        .nth(1)
        .expect("section");
    let section = section.split("\n[").next().expect("up to the next section");
    for db_only in [
        "create_if_missing",
        "max_open_files",
        "use_direct_reads",
        "memory_budget",
    ] {
        assert!(
            !section.contains(&format!("\n{db_only}=")),
            "{db_only} in {section}"
        );
    }
    assert!(decode(&encode(&opts)).expect("decodes").families.is_empty());
}

/// Family sections out of order, repeated, or malformed are corruption naming the line.
#[test]
fn malformed_family_sections_are_corruption() {
    let base = encode(&Options::default());
    let level = "[CFLevelOptions \"a\" \"0\"]\nblock_size=4096\n";
    let cases = [
        (format!("{base}{level}"), "before the family's [CFOptions]"),
        (
            format!("{base}[CFOptions \"a\"]\n[CFOptions \"a\"]\n"),
            "duplicate section",
        ),
        (
            format!("{base}[CFOptions \"a\"]\n[CFLevelOptions \"a\" \"1\"]\n"),
            "expected level \"0\"",
        ),
        (format!("{base}[CFOptions a]\n"), "malformed section header"),
        (
            format!("{base}[CFOptions \"\"]\n"),
            "malformed section header",
        ),
        (
            format!("{base}[CFOptions \"a\" \"b\"]\n"),
            "malformed section header",
        ),
        (format!("{base}[CFLevelOptions \"a\" \"x\"]\n"), "bad index"),
        (format!("{base}[CFOptions]\n"), "malformed section header"),
        (
            format!("{base}[CFOptions \"a\"]\nnum_levels=many\n"),
            "num_levels",
        ),
    ];
    for (text, want) in cases {
        let err = decode(&text).expect_err(want);
        assert_eq!(err.kind(), crate::ErrorKind::Corruption, "{err}");
        assert!(err.to_string().contains(want), "{want}: {err}");
    }
    // Keys a family section does not know (a database-wide one, a newer writer's) are
    // kept, not errors.
    let text = format!("{base}[CFOptions \"a\"]\nmax_open_files=5\nfuture_key=1\n");
    let stored = decode(&text).expect("decodes");
    let keys: Vec<&str> = stored.unknown.iter().map(|u| u.key.as_str()).collect();
    assert_eq!(keys, ["max_open_files", "future_key"]);
    assert_eq!(stored.unknown[0].section, "CFOptions \"a\"");
}

proptest! {
    #[test]
    fn every_family_set_round_trips(
        o in options(),
        fams in proptest::collection::btree_map("\\PC{1,6}|[\"\\\\ \n]{1,3}", options(), 0..3),
    ) {
        let families: BTreeMap<String, CfOptions> =
            fams.into_iter().map(|(n, f)| (n, f.cf_options())).collect();
        let text = encode_with_families(&o, &families);
        let stored = decode(&text).expect("own encoding decodes");
        prop_assert!(stored.unknown.is_empty());
        prop_assert_eq!(&stored.options, &o);
        let back: BTreeMap<String, CfOptions> =
            stored.families.into_iter().map(|(n, f)| (n, f.options)).collect();
        prop_assert_eq!(&back, &families);
        prop_assert_eq!(encode_with_families(&stored.options, &back), text);
    }
}

/// The v1 file with `periodic_compaction_seconds`: written last among the optional
/// keys, only when set, and in a family's section too.
#[test]
fn frozen_fixture_v1_periodic_compaction_decodes_exactly_and_encodes_identically() {
    let opts = merge_operator_fixture_options().with_periodic_compaction_seconds(86_400);
    let frozen = check_frozen("OPTIONS-v1-periodic-compaction", &opts);
    assert!(
        frozen.contains("\nmerge_operator=strata.append:2c20\nperiodic_compaction_seconds=86400\n")
    );
    assert!(!encode(&Options::default()).contains("periodic_compaction_seconds"));
    let families = BTreeMap::from([(
        "aged".to_string(),
        CfOptions::default().with_periodic_compaction_seconds(60),
    )]);
    let text = encode_with_families(&Options::default(), &families);
    let stored = decode(&text).expect("decodes");
    let aged = stored.families.get("aged").expect("family");
    assert_eq!(aged.options.periodic_compaction_seconds, 60);
}

/// The v1 file with `expiring_values`: written after `periodic_compaction_seconds`,
/// only when set, and in a family's section too; a file without it reads `false`.
#[test]
fn frozen_fixture_v1_expiring_values_decodes_exactly_and_encodes_identically() {
    let opts = fixture_options()
        .with_periodic_compaction_seconds(86_400)
        .with_expiring_values(true);
    let frozen = check_frozen("OPTIONS-v1-expiring-values", &opts);
    assert!(frozen.contains("\nperiodic_compaction_seconds=86400\nexpiring_values=true\n"));
    assert!(!encode(&Options::default()).contains("expiring_values"));
    let families = BTreeMap::from([(
        "sessions".to_string(),
        CfOptions::default().with_expiring_values(true),
    )]);
    let text = encode_with_families(&Options::default(), &families);
    let stored = decode(&text).expect("decodes");
    assert!(
        stored
            .families
            .get("sessions")
            .expect("family")
            .options
            .expiring_values
    );
    assert!(!stored.options.expiring_values);
}
