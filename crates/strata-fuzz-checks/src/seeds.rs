//! The seed corpus, made by the engine itself: real blocks, tables, logs, MANIFEST edits,
//! batches, OPTIONS files and backup metadata, small enough to commit (each under
//! [`MAX_SEED_LEN`]).
//!
//! [`all`] is deterministic except for the files taken from a live database (their
//! names and contents depend on when background work runs); `examples/fuzz_seeds.rs`
//! writes it to `fuzz/corpus/<target>/seed-<name>`.

use std::path::Path;
use std::sync::Arc;
use strata::backup::meta::{BackupMeta, FileEntry};
use strata::backup::BackupEngine;
use strata::batch::WriteBatchInternal;
use strata::coding::{get_length_prefixed, put_length_prefixed};
use strata::env::{FaultFs, FileSystem};
use strata::key::{make_internal_key, ValueKind};
use strata::options_file::encode;
use strata::range_del::{Fragments, RangeTombstone};
use strata::sst::compression::seal_block;
use strata::sst::filter::FilterBuilder;
use strata::sst::{properties, BlockBuilder, BlockHandle, Footer, TableBuilder, TableOptions};
use strata::sst::{TableProperties, FORMAT_VERSION};
use strata::version::virtual_table::Slice;
use strata::version::{FileKind, FileMetaData, VersionEdit};
use strata::wal::{LogReader, LogWriter};
use strata::{
    CompactionPriority, Compression, Db, LevelOptions, Options, OutputPartitioning, ReadOptions,
    WalRecoveryMode, WriteBatch, WriteOptions,
};

/// Largest seed file kept.
pub const MAX_SEED_LEN: usize = 16 << 10;

/// A named seed for one target.
pub type Seed = (String, Vec<u8>);

/// Every seed, as `(target, name, bytes)`.
pub fn all() -> Vec<(&'static str, String, Vec<u8>)> {
    let db = from_database();
    let mut out = Vec::new();
    let groups: [(&'static str, Vec<Seed>); 8] = [
        ("block", blocks()),
        ("sst", [tables(), db.tables].concat()),
        ("wal", [logs(), db.logs].concat()),
        ("manifest", [edits(), db.edits].concat()),
        ("batch", [batches(), db.batches].concat()),
        ("options", [options_files(), db.options].concat()),
        ("catalog", catalog_records()),
        ("backup_meta", [backup_metas(), db.backup_metas].concat()),
    ];
    for (target, seeds) in groups {
        for (name, bytes) in seeds {
            if bytes.len() < MAX_SEED_LEN {
                out.push((target, name, bytes));
            }
        }
    }
    out
}

fn ikey(user_key: &[u8], seq: u64, kind: ValueKind) -> Vec<u8> {
    make_internal_key(user_key, seq, kind)
}

/// Sorted entries: `n` keys with a shared prefix, some deletes, varied values.
fn entries(n: u32, value_len: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|i| {
            let kind = if i % 7 == 3 {
                ValueKind::Delete
            } else {
                ValueKind::Put
            };
            let value = if kind == ValueKind::Delete {
                Vec::new()
            } else {
                format!("value-{i}-").repeat(value_len / 8 + 1).into_bytes()
            };
            (
                ikey(
                    format!("user-key-{i:05}").as_bytes(),
                    1000 - u64::from(i),
                    kind,
                ),
                value,
            )
        })
        .collect()
}

/// Block contents, sealed blocks, filters, properties, footers and handles.
pub fn blocks() -> Vec<Seed> {
    let mut out = Vec::new();
    for (n, interval, value_len) in [(0, 16, 0), (1, 16, 1), (20, 4, 8), (40, 1, 3), (64, 16, 24)] {
        let mut b = BlockBuilder::new(interval);
        for (k, v) in entries(n, value_len) {
            b.add(&k, &v).expect("small seed entry");
        }
        let raw = b.finish().to_vec();
        out.push((format!("data-{n}-r{interval}"), raw.clone()));
        for c in [Compression::None, Compression::Lz4, Compression::Zstd] {
            let mut sealed = Vec::new();
            let kind = seal_block(&raw, c, &mut sealed);
            out.push((format!("sealed-{n}-r{interval}-{kind:?}"), sealed));
        }
    }
    // An index block: separators to block handles, a restart at every entry.
    let mut index = BlockBuilder::new(1);
    for i in 0..8u64 {
        let mut h = Vec::new();
        BlockHandle {
            offset: i * 4096,
            size: 4000 + i,
        }
        .encode_to(&mut h);
        index
            .add(&ikey(format!("k{i}").as_bytes(), 0, ValueKind::Merge), &h)
            .expect("small seed entry");
    }
    out.push(("index-8".into(), index.finish().to_vec()));
    for (n, bits) in [(1u32, 10u32), (50, 10), (200, 4)] {
        let mut f = FilterBuilder::new(bits);
        for i in 0..n {
            f.add(format!("user-key-{i:05}").as_bytes());
        }
        out.push((format!("filter-{n}-b{bits}"), f.finish()));
    }
    let props = TableProperties {
        num_entries: 20,
        num_deletions: 3,
        num_data_blocks: 2,
        raw_key_size: 340,
        raw_value_size: 160,
        data_size: 900,
        index_size: 40,
        filter_size: 69,
        smallest_key: ikey(b"a", 9, ValueKind::Put),
        largest_key: ikey(b"z", 1, ValueKind::Delete),
        smallest_seqno: 1,
        largest_seqno: 9,
        column_group: 0,
        file_size: 0,
        format_version: 0,
        num_range_deletions: 2,
        range_del_block: Some(BlockHandle {
            offset: 1000,
            size: 40,
        }),
    };
    out.push((
        "properties".into(),
        properties::encode(&props, Compression::Lz4),
    ));
    let footer = Footer {
        filter: Some(BlockHandle {
            offset: 900,
            size: 64,
        }),
        index: BlockHandle {
            offset: 969,
            size: 40,
        },
        properties: BlockHandle {
            offset: 1014,
            size: 120,
        },
        format_version: FORMAT_VERSION,
    };
    out.push(("footer".into(), footer.encode().to_vec()));
    let mut h = Vec::new();
    BlockHandle {
        offset: 1 << 33,
        size: 4096,
    }
    .encode_to(&mut h);
    out.push(("handle".into(), h));
    out
}

/// Builds a table with `opts` from `entries` and `range_dels` into memory.
fn build_table(
    opts: TableOptions,
    entries: &[(Vec<u8>, Vec<u8>)],
    range_dels: &[RangeTombstone],
) -> Vec<u8> {
    let fs = FaultFs::new();
    let path = Path::new("/seed/000001.sst");
    fs.create_dir_all(Path::new("/seed"))
        .expect("in-memory mkdir");
    let file = fs.create(path).expect("in-memory create");
    let mut b = TableBuilder::new(file, opts);
    for (k, v) in entries {
        b.add(k, v).expect("sorted entries");
    }
    b.set_range_dels(Fragments::new(range_dels));
    b.finish().expect("in-memory finish");
    fs.file_bytes(path).expect("table written")
}

/// Small tables: with and without compression and bloom filter, empty to a few blocks.
pub fn tables() -> Vec<Seed> {
    let mut out = Vec::new();
    for c in [Compression::None, Compression::Lz4, Compression::Zstd] {
        for bits in [0, 10] {
            for (n, block_size, interval) in
                [(0u32, 256, 4), (1, 256, 4), (30, 256, 4), (60, 512, 16)]
            {
                if c != Compression::None && n == 0 {
                    continue;
                }
                let opts = TableOptions {
                    block_size,
                    block_restart_interval: interval,
                    bloom_bits_per_key: bits,
                    compression: c,
                    column_group: 0,
                };
                let name = format!("table-{c:?}-bloom{bits}-{n}");
                out.push((name, build_table(opts.clone(), &entries(n, 12), &[])));
                // Format version 2: the same entries with overlapping range tombstones.
                let tombstone = |a: &str, b: &str, seq| RangeTombstone {
                    start: a.as_bytes().to_vec(),
                    end: b.as_bytes().to_vec(),
                    seq,
                };
                let rd = [
                    tombstone("k0003", "k0009", 40),
                    tombstone("k0005", "zz", 50),
                ];
                let name = format!("table-{c:?}-bloom{bits}-{n}-range-dels");
                out.push((name, build_table(opts, &entries(n, 12), &rd)));
            }
        }
    }
    out
}

/// Writes `records` as a log into memory.
fn build_log(records: &[Vec<u8>]) -> Vec<u8> {
    let fs = FaultFs::new();
    let path = Path::new("/seed/000001.log");
    fs.create_dir_all(Path::new("/seed"))
        .expect("in-memory mkdir");
    let mut w = LogWriter::new(fs.create(path).expect("in-memory create"));
    for r in records {
        w.add_record(r).expect("in-memory append");
    }
    drop(w);
    fs.file_bytes(path).expect("log written")
}

/// Logs of write batches (WAL) and of version edits (MANIFEST).
pub fn logs() -> Vec<Seed> {
    let batches: Vec<Vec<u8>> = batches().into_iter().map(|(_, b)| b).collect();
    let edits: Vec<Vec<u8>> = edits().into_iter().map(|(_, e)| e).collect();
    let mut torn = build_log(&batches);
    torn.truncate(torn.len() - 3);
    vec![
        ("log-empty".into(), Vec::new()),
        ("log-one".into(), build_log(&batches[1..2])),
        ("log-batches".into(), build_log(&batches)),
        ("log-edits".into(), build_log(&edits)),
        ("log-torn-tail".into(), torn),
        ("log-empty-record".into(), build_log(&[Vec::new(), vec![7]])),
    ]
}

fn file(number: u64, level_keys: (&[u8], &[u8]), kind: FileKind) -> FileMetaData {
    FileMetaData {
        number,
        path_id: (number % 2) as u32,
        size: 4096 + number,
        smallest: ikey(level_keys.0, 100, ValueKind::Put),
        largest: ikey(level_keys.1, 7, ValueKind::Delete),
        smallest_seqno: 7,
        largest_seqno: 100,
        num_entries: 50,
        num_deletions: 2,
        column_group: 0,
        kind,
        num_range_deletions: number % 2,
        creation_time: 0,
    }
}

/// Version edits: counters only, deletions, new real and virtual files, and fields
/// marked safe to ignore.
pub fn edits() -> Vec<Seed> {
    let enc = |e: &VersionEdit| {
        let mut v = Vec::new();
        e.encode(&mut v);
        v
    };
    let counters = VersionEdit {
        log_number: Some(5),
        next_file_number: Some(9),
        last_sequence: Some(1234),
        ..VersionEdit::default()
    };
    let flush = VersionEdit {
        log_number: Some(12),
        new_files: vec![(0, file(11, (b"apple", b"pear"), FileKind::Real))],
        ..VersionEdit::default()
    };
    let compaction = VersionEdit {
        deleted_files: vec![(0, 11), (0, 13), (1, 4)],
        new_files: vec![
            (1, file(20, (b"a", b"m"), FileKind::Real)),
            (1, file(21, (b"n", b"z"), FileKind::Real)),
        ],
        ..VersionEdit::default()
    };
    // Virtual tables (format v3): slices over the whole table (sub-tag 11 alone), and
    // slices with ranges of their own (sub-tag 13), with the parents sent (tag 10).
    let slice = |parent, lo: &[u8], hi: &[u8], bytes| Slice {
        parent,
        smallest: lo.to_vec(),
        largest: hi.to_vec(),
        bytes,
    };
    let virtual_file = VersionEdit {
        deleted_files: vec![(1, 20), (1, 21)],
        new_files: vec![
            (
                2,
                file(
                    30,
                    (b"c", b"k"),
                    FileKind::Virtual {
                        slices: vec![slice(20, b"c", b"h", 4000), slice(21, b"e", b"k", 126)],
                    },
                ),
            ),
            (
                2,
                file(
                    31,
                    (b"l", b"m"),
                    FileKind::Virtual {
                        slices: vec![slice(20, b"l", b"m", 4127)],
                    },
                ),
            ),
        ],
        new_parents: vec![
            file(20, (b"a", b"m"), FileKind::Real),
            file(21, (b"c", b"z"), FileKind::Real),
        ],
        ..VersionEdit::default()
    };
    // Column families (format v2): add, a family's flush, drop.
    let cf_add = VersionEdit {
        column_family: 3,
        add_column_family: Some("logs".into()),
        max_column_family: Some(3),
        log_number: Some(14),
        ..VersionEdit::default()
    };
    let cf_flush = VersionEdit {
        column_family: 3,
        ..flush.clone()
    };
    let cf_drop = VersionEdit {
        column_family: 3,
        drop_column_family: true,
        ..VersionEdit::default()
    };
    let cf_records = VersionEdit {
        column_family: 3,
        records: vec![(1, b"schema".to_vec()), (2, vec![0, 1, 2])],
        ..flush.clone()
    };
    // A top-level field and a new-file sub-field from a newer writer, both skippable.
    let mut future = enc(&counters);
    future.extend_from_slice(&[0x81, 0x40, 3, b'n', b'e', b'w']); // tag 0x2001
    let mut with_sub = vec![5, 1]; // new_file at level 1
    let only_file = VersionEdit {
        new_files: vec![(1, file(12, (b"b", b"c"), FileKind::Real))],
        ..VersionEdit::default()
    };
    let bytes = enc(&only_file);
    if let Some((body, _)) = bytes.get(2..).and_then(get_length_prefixed) {
        let mut body = body.to_vec();
        body.extend_from_slice(&[0x41, 1, 0]); // sub-tag 0x41: safe to ignore
        put_length_prefixed(&mut with_sub, &body);
    }
    vec![
        ("edit-empty".into(), Vec::new()),
        ("edit-counters".into(), enc(&counters)),
        ("edit-flush".into(), enc(&flush)),
        ("edit-compaction".into(), enc(&compaction)),
        ("edit-virtual".into(), enc(&virtual_file)),
        ("edit-future-tag".into(), future),
        ("edit-future-subtag".into(), with_sub),
        ("edit-cf-add".into(), enc(&cf_add)),
        ("edit-cf-flush".into(), enc(&cf_flush)),
        ("edit-cf-records".into(), enc(&cf_records)),
        ("edit-cf-drop".into(), enc(&cf_drop)),
    ]
}

/// A table's catalog records and parts, each behind the byte that picks its decoder
/// (see `check_catalog`): the fixed schema, two layouts, an insert and an update.
pub fn catalog_records() -> Vec<Seed> {
    use strata::table::{codecs, Layout, Schema};
    let schema = Schema::parse(crate::catalog::SCHEMA).expect("the fixed schema parses");
    let record = codecs::schema_record(&schema);
    let tagged = |tag: u8, bytes: &[u8]| [&[tag][..], bytes].concat();
    let mut out = vec![("catalog-schema".into(), tagged(0, &record))];
    for (name, text) in [("row", "row"), ("groups", "row;2,3;1,1,1,2")] {
        let layout = Layout::parse(text, 5).expect("a valid layout");
        out.push((
            format!("catalog-layout-{name}"),
            tagged(1, &codecs::layout_record(&layout)),
        ));
    }
    // An insert of every column and an update of two (the part format's fixtures).
    let insert = "010105".to_owned()
        + "0000feffffff"
        + "0101"
        + "0200000000000000f83f"
        + "030078797a"
        + "0400026869";
    let update = "010002010007000000000000000401";
    for (name, hex) in [("insert", insert.as_str()), ("update", update)] {
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
            .collect();
        codecs::part(&schema, &bytes).expect("a valid part");
        out.push((format!("catalog-part-{name}"), tagged(2, &bytes)));
    }
    out
}

/// OPTIONS files: the defaults, every option changed with a per-level vector, and a
/// newer writer's file with unknown keys and sections.
pub fn options_files() -> Vec<Seed> {
    let custom = Options::default()
        .with_num_levels(5)
        .with_output_partitioning(OutputPartitioning::Fixed)
        .with_compaction_priority(CompactionPriority::OldestSmallestSeqFirst)
        .with_wal_recovery_mode(WalRecoveryMode::PointInTime)
        .with_max_bytes_for_level_multiplier(7.5)
        .with_levels(vec![
            LevelOptions::default().with_bloom_bits_per_key(0),
            LevelOptions::default().with_compression(Compression::Lz4),
            LevelOptions::default()
                .with_compression(Compression::Zstd)
                .with_block_size(16 << 10),
        ]);
    let newer = format!(
        "{}future_key=1\n\n[TierOptions \"1\"]\ndevice=slow\n",
        encode(&Options::default())
    );
    vec![
        (
            "options-default".into(),
            encode(&Options::default()).into_bytes(),
        ),
        ("options-custom".into(), encode(&custom).into_bytes()),
        ("options-newer-writer".into(), newer.into_bytes()),
    ]
}

/// Serialized write batches.
pub fn batches() -> Vec<Seed> {
    let mut empty = WriteBatch::new();
    empty.set_sequence(1);
    let mut one = WriteBatch::new();
    one.put(b"key", b"value");
    one.set_sequence(42);
    let mut mixed = WriteBatch::new();
    for i in 0..20u32 {
        let k = format!("k{i:03}");
        if i % 3 == 0 {
            mixed.delete(k.as_bytes());
        } else {
            mixed.put(k.as_bytes(), &vec![b'v'; i as usize]);
        }
    }
    mixed.set_sequence(1 << 40);
    let mut big = WriteBatch::new();
    big.put(b"big", &[0xab; 3000]);
    big.set_sequence(7);
    let mut merge = one.data().to_vec();
    merge.extend_from_slice(&[2, 1, b'm', 1, b'+']); // a Merge record
    merge[8] = 2;
    let mut ranges = WriteBatch::new();
    ranges.delete_range(b"a", b"m");
    ranges.merge(b"n", b"+1");
    ranges.delete_range(b"x", b"x");
    ranges.set_sequence(99);
    // Format v2: records of other families (flag 0x80 and the family id).
    let mut families = one.data().to_vec();
    families.extend_from_slice(&[0x81, 5, 1, b'k', 1, b'v']); // Put in family 5
    families.extend_from_slice(&[0x80, 0xac, 0x02, 1, b'g']); // Delete in family 300
    families[8] = 3;
    vec![
        ("batch-families".into(), families),
        ("batch-empty".into(), empty.data().to_vec()),
        ("batch-one".into(), one.data().to_vec()),
        ("batch-mixed".into(), mixed.data().to_vec()),
        ("batch-big".into(), big.data().to_vec()),
        ("batch-merge".into(), merge),
        ("batch-range-delete".into(), ranges.data().to_vec()),
    ]
}

/// Files of a real database on an in-memory file system.
#[derive(Default)]
pub struct DbSeeds {
    /// Table files.
    pub tables: Vec<Seed>,
    /// WAL files.
    pub logs: Vec<Seed>,
    /// MANIFEST records.
    pub edits: Vec<Seed>,
    /// WAL records.
    pub batches: Vec<Seed>,
    /// The `OPTIONS` file.
    pub options: Vec<Seed>,
    /// The metadata file of a backup of the database.
    pub backup_metas: Vec<Seed>,
}

/// Runs a small workload (puts, deletes, batches, flushes, a compaction) on a database
/// over [`FaultFs`] and collects its files and records.
pub fn from_database() -> DbSeeds {
    let fs = FaultFs::new();
    let dir = Path::new("/db");
    let opts = Options::default()
        .with_write_buffer_size(4096)
        .with_target_file_size_base(4096)
        .with_every_level(|l| {
            l.with_block_size(512)
                .with_block_restart_interval(4)
                .with_compression(Compression::Lz4)
        })
        .with_max_manifest_file_size(64 << 10);
    let db = Db::builder()
        .file_system(Arc::new(fs.clone()))
        .open(dir, opts)
        .expect("open database on FaultFs");
    let wo = WriteOptions::default();
    for round in 0..3u32 {
        for i in 0..60u32 {
            let k = format!("key{:04}", (i * 7 + round) % 100);
            db.put(&wo, k.as_bytes(), format!("v{round}-{i}").as_bytes())
                .expect("put");
            if i % 9 == 0 {
                db.delete(&wo, format!("key{:04}", i).as_bytes())
                    .expect("delete");
            }
        }
        let mut b = WriteBatch::new();
        b.put(b"batch-a", b"1");
        b.delete(b"batch-b");
        db.write(&wo, b).expect("write batch");
        db.flush().expect("flush");
    }
    db.compact_range(None, None).expect("compact");
    // A column family: its MANIFEST records, a batch spanning it and the default one.
    let cf = db
        .create_cf("logs", Options::default().cf_options())
        .expect("create_cf");
    let mut b = WriteBatch::new();
    b.put_cf(&cf, b"in-family", b"1");
    b.put(b"beside", b"2");
    db.write(&wo, b).expect("write batch");
    db.flush().expect("flush");
    db.put(&wo, b"tail", b"in the wal").expect("put");
    db.put_cf(&wo, &cf, b"tail", b"in the wal too")
        .expect("put_cf");
    let _ = db.get(&ReadOptions::default(), b"tail");
    let mut out = DbSeeds::default();
    for path in fs.files() {
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(String::from) else {
            continue;
        };
        let Some(bytes) = fs.file_bytes(&path) else {
            continue;
        };
        if name.ends_with(".sst") {
            out.tables.push((format!("db-{name}"), bytes));
        } else if name.ends_with(".log") {
            for (i, r) in records(&fs, &path).into_iter().enumerate().take(4) {
                out.batches.push((format!("db-{name}-{i}"), r));
            }
            out.logs.push((format!("db-{name}"), bytes));
        } else if name == "OPTIONS" {
            out.options.push(("db-OPTIONS".into(), bytes));
        } else if name.starts_with("MANIFEST-") {
            for (i, r) in records(&fs, &path).into_iter().enumerate().take(8) {
                out.edits.push((format!("db-{name}-{i}"), r));
            }
        }
    }
    // A backup of it, after the listing above so its stored files are not taken as
    // the database's.
    let mut engine = BackupEngine::open(Arc::new(fs.clone()), "/bk").expect("open backups");
    engine.create(&db).expect("create backup");
    if let Some(bytes) = fs.file_bytes("/bk/meta/1") {
        out.backup_metas.push(("db-backup-meta-1".into(), bytes));
    }
    db.close().expect("close");
    out
}

/// Backup metadata by hand: the least a backup holds (`CURRENT`), and one of each
/// kind of file.
pub fn backup_metas() -> Vec<Seed> {
    let entry = |name: &str, shared, size, crc32c| FileEntry {
        name: name.into(),
        shared,
        size,
        crc32c,
    };
    let meta = |files| BackupMeta {
        id: 2,
        created: 1_700_000_000,
        sequence: 99,
        copied: 1000,
        files,
    };
    let current = entry("CURRENT", false, 16, 0x1234_5678);
    vec![
        (
            "backup-meta-current-only".into(),
            meta(vec![current.clone()]).encode(),
        ),
        (
            "backup-meta-every-kind".into(),
            meta(vec![
                entry("000004.log", false, 100, 1),
                entry("000005.sst", true, 4096, 2),
                entry("000006.sst", true, 8192, 3),
                current,
                entry("MANIFEST-000007", false, 300, 4),
                entry("OPTIONS", false, 2000, 5),
            ])
            .encode(),
        ),
    ]
}

fn records(fs: &FaultFs, path: &Path) -> Vec<Vec<u8>> {
    let Ok(file) = fs.open_sequential(path) else {
        return Vec::new();
    };
    let mut r = LogReader::new(file);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Ok(Some(_)) = r.read_record(&mut buf) {
        out.push(buf.clone());
    }
    out
}
