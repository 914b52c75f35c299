//! `strata ldb`: inspect and edit a database by hand, like RocksDB's `ldb`.
//!
//! ```text
//! strata ldb --db=DIR [--hex] [--cf=NAME] put K V | get K | delete K | merge K OPERAND
//!            | delete_range FROM TO
//!            | scan [--from=K] [--to=K] [--max_keys=N] | dump | load | compact [--from=K] [--to=K]
//!            | verify | manifest_dump | checkpoint --to=DIR | property NAME | list_cfs
//!            | create_cf NAME | drop_cf NAME
//! ```
//! `--cf=NAME` selects the column family the reads and writes go to (default: the
//! default family); a family the database lacks is an error naming the ones it has.
//! `verify`, `manifest_dump`, `list_cfs`, `create_cf` and `drop_cf` concern the whole
//! database and ignore it.
//! `list_cfs` prints the family names, one a line, the default first, without opening
//! the database where the engine can (Strata, RocksDB). `create_cf` creates a family
//! with the per-tree options the flags describe, `drop_cf` drops one and its data (not
//! `default`). `verify` checks the tables of every family.
//! With `--hex`, keys and values on the command line and in `load` input are hex
//! (`0x` prefix optional) and output is `0x`-prefixed upper-case hex. `scan` prints
//! `key : value`, `dump` prints `key ==> value`, and `load` reads `key ==> value` lines
//! from stdin, writing them in batches. The database is never deleted or created anew
//! (`--create_if_missing` still applies for `put`, `merge` and `load`).
//!
//! `property NAME` (Strata only) prints a named property of the `--cf` family, RocksDB's
//! names (`rocksdb.estimate-num-keys`, `rocksdb.num-files-at-level<N>`,
//! `rocksdb.live-sst-files-size`, `rocksdb.stats`, ...), opening the database read-only.
//!
//! `checkpoint --to=DIR` (Strata only) makes a checkpoint: a consistent copy of the
//! database as of the command that opens like any database, its tables hard links
//! (`Db::checkpoint`). It prints `checkpoint: path=DIR tables_linked=N …`.
//!
//! `get`, `scan` and `dump` open a Strata database (`Db::open_read_only`) or a RocksDB
//! one (`OpenForReadOnly`) read-only, and `verify` a Strata one: they take no lock and
//! write nothing, so they work while another process has the database open for
//! writing (they see it as of their open) and on a read-only medium. fjall has no
//! read-only open: its databases are opened as for writes. With
//! `--secondary_path=DIR` (RocksDB's flag; Strata only) `get`, `scan` and `dump` open a
//! secondary instance instead (`Db::open_secondary`), which writes only in `DIR` (a
//! lock, and a link to each table it reads, so the writer's compactions delete none
//! under a long `dump`); any other command with it is refused.
//!
//! `verify` (Strata only) first replays the MANIFEST without opening the database and
//! checks that every table file it names (real level files and the parents of virtual
//! tables) exists in the directory of its data path (`--db_paths`), then opens the
//! database and reads every block of every table file, checking its checksum. It
//! prints `verify: ok blocks=N tables=M parents=P slices=S` (M table files, P parents
//! and S slices of virtual tables); on damage or a missing table it fails with one line
//! naming the file (and the offset, for damage).
//!
//! `manifest_dump` (Strata only; RocksDB's name) replays the MANIFEST without opening
//! the database and writes nothing. For each family it prints every level down to the
//! deepest one holding files, with its files in read order (`real` or `virtual`,
//! number, user-key range, sequence range, size, and the data path of a real one),
//! each virtual table's slices in read order (parent, range, referenced bytes), the
//! parents (size, referenced bytes, garbage = size − referenced, data path, range) and
//! the family's totals. Keys are shown as `sst-dump` shows them: `'escaped ASCII'`, or
//! `'0x…'` with `--hex`. E.g.
//!
//! ```text
//! MANIFEST-000003: next_file_number=22 last_sequence=12 max_column_family=0
//! data path 0: /db
//! column family default (id 0): log_number=21
//!   L0: files=0 virtual=0 bytes=0
//!   L1: files=2 virtual=1 bytes=550
//!     real    000005 ['a' .. 'c'] seq=1..5 size=200 path=0
//!     virtual 000011 ['d' .. 'h'] seq=1..9 size=350 slices=2
//!       slice 1 parent=000009 ['d' .. 'h'] bytes=150
//!       slice 2 parent=000008 ['d' .. 'h'] bytes=200
//!   parents:
//!     parent           size   referenced      garbage path  range
//!     000008           1000          200          800    0  ['d' .. 'z']
//!     000009            400          150          250    0  ['d' .. 'z']
//!     total            1400          350         1050
//!   total: files=2 virtual=1 slices=2 parents=2 tables_on_disk=3 bytes_on_disk=1600 parent_bytes=1400 referenced=350 garbage=1050
//! ```
//!
//! `put --ttl=SECONDS` (Strata only) writes a value that expires that many seconds
//! from now (`Db::put_with_ttl`): the database (or the `--cf` family) must have been
//! created with `--expiring_values=true`, which later commands keep without the flag.
//! Expired values are gone from `get`, `scan` and `dump` at once and from the files at
//! the compaction that reaches them. Such a database has no merges.
//!
//! `merge` applies the harness's merge operator, `strata.u64_add` (8-byte little-endian
//! counters): the operand is a decimal number, encoded as the operator reads it
//! (`merge k 5` adds 5 to key `k`, `merge k -1` subtracts 1), or with `--hex` the raw
//! operand bytes (`--hex merge 6b 0x0500000000000000`). An operand the operator cannot
//! apply is refused before the database is opened, and nothing is written.
//!
//! A key `dump` or `scan` cannot read (for example operands an older build wrote that
//! the operator refuses) does not stop the walk: the key and its error are printed on
//! standard error, the walk goes on from the next key, and the command exits non-zero
//! at the end, saying how many keys were unreadable.

use crate::engine::{self, options::EngineFlags, BatchOp, Direction, Families, KvEngine, Scan};
use crate::error::{CliError, Result};
use clap::{Args, Subcommand};
use std::io::{BufRead, Write};

mod manifest;

/// `strata ldb`.
///
/// `--use_existing_db` (shared with `bench`, where it keeps the database from being
/// deleted) is hidden here: `ldb` never deletes a database. So is
/// `--num_column_families`: `ldb` names one family with `--cf`.
#[derive(Args, Clone, Debug)]
#[command(mut_arg("use_existing_db", |a| a.hide(true)))]
#[command(mut_arg("num_column_families", |a| a.hide(true)))]
pub struct LdbArgs {
    /// Keys and values are hex (input may start with 0x; output does).
    #[arg(long = "hex", global = true, default_value_t = false)]
    pub hex: bool,
    /// The column family reads and writes go to (default: `default`).
    #[arg(long = "cf", global = true)]
    pub cf: Option<String>,
    /// Open the database as a secondary instance keeping its own files (a lock and
    /// links to the tables it reads) in this directory (RocksDB's `--secondary_path`;
    /// Strata only; for get, scan and dump).
    #[arg(long = "secondary_path", global = true)]
    pub secondary_path: Option<std::path::PathBuf>,
    /// Engine options (`--db` names the database).
    #[command(flatten)]
    pub engine: EngineFlags,
    /// What to do.
    #[command(subcommand)]
    pub command: LdbCommand,
}

/// The `ldb` commands.
#[derive(Subcommand, Clone, Debug)]
pub enum LdbCommand {
    /// Write KEY = VALUE.
    Put {
        /// Key.
        key: String,
        /// Value.
        value: String,
        /// Expire the value this many seconds from now (Strata, in a database or
        /// family created with --expiring_values).
        #[arg(long = "ttl")]
        ttl: Option<u64>,
    },
    /// Print the value of KEY (exit status 1 if absent).
    Get {
        /// Key.
        key: String,
    },
    /// Delete KEY.
    Delete {
        /// Key.
        key: String,
    },
    /// Delete every key in [FROM, TO) with one range tombstone.
    #[command(name = "delete_range")]
    DeleteRange {
        /// First key deleted.
        from: String,
        /// First key kept after the range (exclusive).
        to: String,
    },
    /// Merge OPERAND into KEY with `strata.u64_add` (8-byte little-endian counters).
    Merge {
        /// Key.
        key: String,
        /// A decimal increment (may be negative); with `--hex`, the raw operand bytes.
        #[arg(allow_hyphen_values = true)]
        operand: String,
    },
    /// Print `key : value` for keys in [from, to).
    Scan {
        /// First key (inclusive).
        #[arg(long = "from")]
        from: Option<String>,
        /// End key (exclusive).
        #[arg(long = "to")]
        to: Option<String>,
        /// Stop after this many keys.
        #[arg(long = "max_keys")]
        max_keys: Option<usize>,
    },
    /// Print every `key ==> value`.
    Dump,
    /// Read `key ==> value` lines from stdin and write them.
    Load,
    /// Check that every table the MANIFEST names exists in its data path, then every
    /// block checksum of every live table.
    Verify,
    /// Print the current version of every column family from the MANIFEST (read-only):
    /// levels, files, virtual tables' slices, parents and their garbage.
    #[command(name = "manifest_dump")]
    ManifestDump,
    /// Compact keys in [from, to] to the bottom level.
    Compact {
        /// First key.
        #[arg(long = "from")]
        from: Option<String>,
        /// Last key.
        #[arg(long = "to")]
        to: Option<String>,
    },
    /// Make a checkpoint of the database in DIR (Strata only): an openable copy as of
    /// now, its tables hard links.
    Checkpoint {
        /// The checkpoint's directory (must not exist, or be empty).
        #[arg(long = "to")]
        to: std::path::PathBuf,
    },
    /// Print the value of property NAME (RocksDB's names: `rocksdb.estimate-num-keys`,
    /// `rocksdb.num-files-at-level0`, `rocksdb.stats`, ...) of the `--cf` family
    /// (Strata only; opened read-only).
    Property {
        /// The property's name.
        name: String,
    },
    /// Print the names of the column families, one a line, the default first.
    #[command(name = "list_cfs")]
    ListCfs,
    /// Create column family NAME with the options the flags describe.
    #[command(name = "create_cf")]
    CreateCf {
        /// The family's name.
        name: String,
    },
    /// Drop column family NAME and its data (not `default`).
    #[command(name = "drop_cf")]
    DropCf {
        /// The family's name.
        name: String,
    },
}

/// Most updates per batch of `load`.
const LOAD_BATCH: usize = 1000;

/// Most key and value bytes per batch of `load`, unless one line alone is larger (it
/// then forms a batch of its own). Without this bound, 1000 lines of large values made
/// a batch over `strata::MAX_BATCH_LEN` that the engine refused although every line was
/// within the key and value limits.
const LOAD_BATCH_BYTES: usize = 1 << 20;

// A batch is at most LOAD_BATCH_BYTES of earlier lines or one line alone; either way it
// is within MAX_BATCH_LEN (a batch adds at most 21 bytes of framing per line).
const _: () = assert!(LOAD_BATCH_BYTES + 21 * LOAD_BATCH + 12 <= strata::MAX_BATCH_LEN);

/// Decodes a command-line or input token: hex when `hex`, bytes otherwise.
///
/// # Errors
/// [`CliError::BadInput`] for malformed hex.
pub fn decode(s: &str, hex: bool) -> Result<Vec<u8>> {
    if !hex {
        return Ok(s.as_bytes().to_vec());
    }
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if !digits.len().is_multiple_of(2) {
        return Err(CliError::BadInput(format!(
            "odd number of hex digits: `{s}`"
        )));
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    digits
        .as_bytes()
        .chunks(2)
        .map(|p| match p {
            [h, l] => Some((nibble(*h)? << 4) | nibble(*l)?),
            _ => None,
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| CliError::BadInput(format!("not hex: `{s}`")))
}

/// Encodes bytes for output: `0x`-prefixed upper-case hex when `hex`, raw otherwise.
pub fn encode(b: &[u8], hex: bool) -> Vec<u8> {
    if !hex {
        return b.to_vec();
    }
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(2 + 2 * b.len());
    out.extend_from_slice(b"0x");
    for &x in b {
        out.push(DIGITS[usize::from(x >> 4)]);
        out.push(DIGITS[usize::from(x & 15)]);
    }
    out
}

/// Splits one `key ==> value` line of `load` input.
///
/// # Errors
/// [`CliError::BadInput`] naming the line if the separator is missing or hex is bad.
pub fn parse_load_line(line: &str, lineno: usize, hex: bool) -> Result<(Vec<u8>, Vec<u8>)> {
    let (k, v) = line
        .split_once(" ==> ")
        .ok_or_else(|| CliError::BadInput(format!("line {lineno}: expected `key ==> value`")))?;
    let with_line = |e: CliError| match e {
        CliError::BadInput(m) => CliError::BadInput(format!("line {lineno}: {m}")),
        other => other,
    };
    Ok((
        decode(k, hex).map_err(with_line)?,
        decode(v, hex).map_err(with_line)?,
    ))
}

/// Runs `strata ldb`.
///
/// # Errors
/// Bad input, engine errors, a missing key for `get`, or a failed write to stdout.
pub fn run(args: &LdbArgs) -> Result<()> {
    let hex = args.hex;
    let dec = |s: &Option<String>| s.as_deref().map(|s| decode(s, hex)).transpose();
    if args.engine.num_column_families != 1 {
        return Err(CliError::Usage(
            "ldb: name one column family with --cf=NAME (--num_column_families is for \
             bench and ycsb)"
                .into(),
        ));
    }
    // Only `put` and `load` may create the database.
    let mut existing = args.engine.clone();
    existing.create_if_missing = false;
    let existing = &existing;
    // Reads and writes go to `--cf` alone; a missing family fails the open.
    let family = Families::One(
        args.cf
            .clone()
            .unwrap_or_else(|| engine::DEFAULT_FAMILY.to_string()),
    );
    let open = |flags: &EngineFlags| engine::open_families(flags, true, &family);
    // The commands that only read open read-only where the engine can (Strata): no
    // lock, so they work beside a running writer and on a read-only medium.
    let open_read = || match &args.secondary_path {
        Some(dir) => engine::open_secondary(existing, &family, dir),
        None => engine::open_read_only(existing, &family),
    };
    let reads = matches!(
        args.command,
        LdbCommand::Get { .. } | LdbCommand::Scan { .. } | LdbCommand::Dump
    );
    if args.secondary_path.is_some() && !reads {
        return Err(CliError::Usage(
            "'--secondary_path' opens a secondary instance, which only reads: it goes with              get, scan and dump"
                .into(),
        ));
    }
    // Validate command-line input before opening the database.
    let engine = match &args.command {
        LdbCommand::Verify => return verify(existing),
        LdbCommand::ManifestDump => return manifest::manifest_dump(existing, hex),
        LdbCommand::Checkpoint { to } => return checkpoint(existing, to),
        LdbCommand::Property { name } => return property(existing, args.cf.as_deref(), name),
        LdbCommand::ListCfs => {
            let names = engine::list_cfs(existing)?;
            let text: String = names.iter().map(|n| format!("{n}\n")).collect();
            return write_stdout(text.as_bytes());
        }
        LdbCommand::CreateCf { name } => {
            let mut e = engine::open(existing, true)?;
            e.create_cf(name)?;
            e
        }
        LdbCommand::DropCf { name } => {
            let mut e = engine::open(existing, true)?;
            e.drop_cf(name)?;
            e
        }
        LdbCommand::Put { key, value, ttl } => {
            let (k, v) = (decode(key, hex)?, decode(value, hex)?);
            let e = open(&args.engine)?;
            match ttl {
                None => e.put(&k, &v)?,
                Some(s) => e.put_with_ttl(&k, &v, std::time::Duration::from_secs(*s))?,
            }
            e
        }
        LdbCommand::Get { key } => {
            let k = decode(key, hex)?;
            let e = open_read()?;
            match e.get(&k)? {
                Some(v) => {
                    let mut line = encode(&v, hex);
                    line.push(b'\n');
                    write_stdout(&line)?;
                }
                None => {
                    let _ = e.close();
                    return Err(CliError::NotFound(key.clone()));
                }
            }
            e
        }
        LdbCommand::Delete { key } => {
            let k = decode(key, hex)?;
            let e = open(existing)?;
            e.delete(&k)?;
            e
        }
        LdbCommand::DeleteRange { from, to } => {
            let (a, b) = (decode(from, hex)?, decode(to, hex)?);
            let e = open(existing)?;
            e.delete_range(&a, &b)?;
            e
        }
        LdbCommand::Merge { key, operand } => {
            let (k, v) = (decode(key, hex)?, counter_operand(operand, hex)?);
            let e = open(&args.engine)?;
            e.merge(&k, &v)?;
            e
        }
        LdbCommand::Scan { from, to, max_keys } => {
            let (from, to) = (dec(from)?, dec(to)?);
            let e = open_read()?;
            print_range(
                e.as_ref(),
                from.as_deref(),
                to.as_deref(),
                *max_keys,
                b" : ",
                hex,
            )?;
            e
        }
        LdbCommand::Dump => {
            let e = open_read()?;
            print_range(e.as_ref(), None, None, None, b" ==> ", hex)?;
            e
        }
        LdbCommand::Load => {
            let e = open(&args.engine)?;
            let n = load(e.as_ref(), std::io::stdin().lock(), hex)?;
            eprintln!("loaded {n} keys");
            e
        }
        LdbCommand::Compact { from, to } => {
            let (from, to) = (dec(from)?, dec(to)?);
            let e = open(existing)?;
            e.compact(from.as_deref(), to.as_deref())?;
            e
        }
    };
    engine.close()
}

/// `ldb verify` (Strata only): checks, without opening the database, that every table
/// the MANIFEST names (parents of virtual tables included) exists in its data path
/// ([`manifest::check`]), then opens it and checks every block of every table file.
fn verify(flags: &EngineFlags) -> Result<()> {
    let checked = manifest::check(flags)?;
    let db = engine::strata::db_builder(flags, &flags.db)?
        .open_read_only(&flags.db, flags.strata_options()?)?;
    // `verify_checksums` checks the table files of every family (the real level files
    // and the parents, each once), so each of those is counted; a virtual table has no
    // file of its own.
    let tables: usize = db
        .cf_names()
        .iter()
        .filter_map(|name| db.cf(name))
        .map(|cf| {
            let s = db.cf_stats(&cf);
            let real: usize = s
                .levels
                .iter()
                .map(|l| l.files.saturating_sub(l.virtual_files))
                .sum();
            real.saturating_add(usize::try_from(s.space.parents).unwrap_or(usize::MAX))
        })
        .sum();
    let blocks = db.verify_checksums()?;
    db.close()?;
    let (parents, slices) = (checked.parents, checked.slices);
    write_stdout(
        format!("verify: ok blocks={blocks} tables={tables} parents={parents} slices={slices}\n")
            .as_bytes(),
    )
}

/// The operand of `ldb merge`: a decimal increment encoded for `strata.u64_add` (a
/// negative one wraps, so it subtracts), or with `hex` the raw bytes; either way one
/// the operator accepts.
///
/// # Errors
/// [`CliError::BadInput`] for a malformed number or hex, or an operand the operator
/// refuses.
fn counter_operand(s: &str, hex: bool) -> Result<Vec<u8>> {
    use strata::MergeOperator;
    let operand = if hex {
        decode(s, true)?
    } else {
        let n = s
            .parse::<u64>()
            .or_else(|_| s.parse::<i64>().map(|n| n as u64))
            .map_err(|_| {
                CliError::BadInput(format!(
                    "merge operand `{s}`: strata.u64_add takes a decimal number \
                     (or raw operand bytes with --hex)"
                ))
            })?;
        strata::merge::U64Add::operand(n).to_vec()
    };
    strata::merge::U64Add
        .check_operand(&[], &operand)
        .map_err(|e| CliError::BadInput(format!("merge operand `{s}`: {e}")))?;
    Ok(operand)
}

/// `ldb property NAME` (Strata only): opens the database read-only and prints the
/// property of family `cf` (the default one if `None`).
fn property(flags: &EngineFlags, cf: Option<&str>, name: &str) -> Result<()> {
    if flags.engine != engine::options::EngineKind::Strata {
        return Err(CliError::Usage(
            "'ldb property' works on strata databases only".into(),
        ));
    }
    let db = engine::strata::db_builder(flags, &flags.db)?
        .open_read_only(&flags.db, flags.strata_options()?)?;
    let family = cf.unwrap_or(engine::DEFAULT_FAMILY);
    let handle = db
        .cf(family)
        .ok_or_else(|| engine::missing_family(family, &flags.db, &db.cf_names()))?;
    let mut value = db.property_cf(&handle, name)?;
    if !value.ends_with('\n') {
        value.push('\n');
    }
    write_stdout(value.as_bytes())
}

/// Opens the existing Strata database `flags.db` for writing, as `command` (named in
/// the error for another engine) needs: a checkpoint or a backup cuts the WAL of the
/// one writer, so it takes the lock.
///
/// # Errors
/// [`CliError::Usage`] for another engine; the engine's open errors.
pub(crate) fn open_strata(flags: &EngineFlags, command: &str) -> Result<strata::Db> {
    if flags.engine != engine::options::EngineKind::Strata {
        return Err(CliError::Usage(format!(
            "'{command}' works on strata databases only"
        )));
    }
    let db =
        engine::strata::db_builder(flags, &flags.db)?.open(&flags.db, flags.strata_options()?)?;
    Ok(db)
}

/// `ldb checkpoint --to=DIR` (Strata only): opens the database and makes the
/// checkpoint.
fn checkpoint(flags: &EngineFlags, to: &std::path::Path) -> Result<()> {
    let db = open_strata(flags, "ldb checkpoint")?;
    let made = db.checkpoint(to);
    db.close()?;
    let info = made?;
    write_stdout(
        format!(
            "checkpoint: path={} tables_linked={} tables_copied={} table_bytes_copied={} \
             wals_copied={} wal_bytes_copied={}\n",
            to.display(),
            info.tables_linked,
            info.tables_copied,
            info.table_bytes_copied,
            info.wals_copied,
            info.wal_bytes_copied
        )
        .as_bytes(),
    )
}

pub(crate) fn write_stdout(b: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(b)
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Stdio("stdout", e))
}

/// Prints `key SEP value` lines for keys in `[from, to)`, at most `max` of them. A
/// key the engine cannot read ([`unreadable_key`]) is named with its error on standard
/// error and the walk resumes after it.
///
/// # Errors
/// [`CliError::Unreadable`] after the walk if keys were skipped; any other engine
/// error at once.
fn print_range(
    e: &dyn KvEngine,
    from: Option<&[u8]>,
    to: Option<&[u8]>,
    max: Option<usize>,
    sep: &[u8],
    hex: bool,
) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut io_err = None;
    let max = max.unwrap_or(usize::MAX);
    let mut start = from.map(<[u8]>::to_vec);
    // Keys printed and keys skipped, both counted against `max`.
    let (mut printed, mut skipped) = (0usize, 0u64);
    loop {
        let left = max
            .saturating_sub(printed)
            .saturating_sub(usize::try_from(skipped).unwrap_or(usize::MAX));
        if left == 0 {
            break;
        }
        let scanned = e.scan(
            Scan::new(start.as_deref(), Direction::Forward, left).until(to),
            &mut |k, v| {
                printed += 1;
                let r = out
                    .write_all(&encode(k, hex))
                    .and_then(|()| out.write_all(sep))
                    .and_then(|()| out.write_all(&encode(v, hex)))
                    .and_then(|()| out.write_all(b"\n"));
                match r {
                    Ok(()) => true,
                    Err(err) => {
                        io_err = Some(err);
                        false
                    }
                }
            },
        );
        if let Some(err) = io_err {
            return Err(CliError::Stdio("stdout", err));
        }
        match scanned {
            Ok(_) => break,
            Err(err) => {
                let Some(key) = unreadable_key(&err) else {
                    return Err(err);
                };
                // Lines printed so far go out before the error that follows them.
                out.flush().map_err(|e| CliError::Stdio("stdout", e))?;
                eprintln!(
                    "ldb: key {} unreadable: {}",
                    String::from_utf8_lossy(&encode(&key, hex)),
                    crate::error::one_line(&err)
                );
                skipped += 1;
                // The smallest key after `key`.
                let mut next = key;
                next.push(0);
                start = Some(next);
            }
        }
    }
    out.flush().map_err(|e| CliError::Stdio("stdout", e))?;
    match skipped {
        0 => Ok(()),
        n => Err(CliError::Unreadable(n)),
    }
}

/// The key an engine error is about, when the error concerns that key alone and a walk
/// may go on past it: the merge operator refused the key's operands.
fn unreadable_key(err: &CliError) -> Option<Vec<u8>> {
    match err {
        CliError::Strata(strata::Error::MergeFailed { key, .. }) => Some(key.clone()),
        _ => None,
    }
}

/// Writes every `key ==> value` line of `input` in batches of at most [`LOAD_BATCH`]
/// lines and [`LOAD_BATCH_BYTES`] (or one larger line); returns the count.
///
/// # Errors
/// [`CliError::BadInput`] naming the first bad line; the engine's error for a line it
/// refuses (e.g. a value over `strata::MAX_VALUE_LEN`). Earlier batches stay written.
pub fn load(e: &dyn KvEngine, input: impl BufRead, hex: bool) -> Result<u64> {
    let mut pending: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(LOAD_BATCH);
    let mut pending_bytes = 0usize;
    let mut n = 0u64;
    let flush = |pending: &mut Vec<(Vec<u8>, Vec<u8>)>, bytes: &mut usize| -> Result<()> {
        let ops: Vec<BatchOp<'_>> = pending.iter().map(|(k, v)| BatchOp::Put(k, v)).collect();
        if !ops.is_empty() {
            e.write_batch(&ops)?;
        }
        pending.clear();
        *bytes = 0;
        Ok(())
    };
    for (i, line) in input.lines().enumerate() {
        let line = line.map_err(|err| CliError::Stdio("stdin", err))?;
        if line.is_empty() {
            continue;
        }
        let (k, v) = parse_load_line(&line, i + 1, hex)?;
        let bytes = k.len().saturating_add(v.len());
        if pending_bytes.saturating_add(bytes) > LOAD_BATCH_BYTES {
            flush(&mut pending, &mut pending_bytes)?;
        }
        pending.push((k, v));
        pending_bytes += bytes;
        n += 1;
        if pending.len() >= LOAD_BATCH {
            flush(&mut pending, &mut pending_bytes)?;
        }
    }
    flush(&mut pending, &mut pending_bytes)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        assert_eq!(decode("0x00ff10", true).expect("hex"), vec![0, 255, 16]);
        assert_eq!(decode("00FF10", true).expect("hex"), vec![0, 255, 16]);
        assert_eq!(decode("0x", true).expect("hex"), Vec::<u8>::new());
        assert!(matches!(decode("0x0", true), Err(CliError::BadInput(_))));
        assert!(matches!(decode("0xzz", true), Err(CliError::BadInput(_))));
        assert_eq!(decode("0xzz", false).expect("raw"), b"0xzz".to_vec());
        assert_eq!(encode(&[0, 255, 16], true), b"0x00FF10".to_vec());
        assert_eq!(encode(b"ab", false), b"ab".to_vec());
        let bytes: Vec<u8> = (0..=255).collect();
        let s = String::from_utf8(encode(&bytes, true)).expect("ascii");
        assert_eq!(decode(&s, true).expect("hex"), bytes);
    }

    #[test]
    fn load_lines() {
        assert_eq!(
            parse_load_line("a ==> b ==> c", 1, false).expect("ok"),
            (b"a".to_vec(), b"b ==> c".to_vec())
        );
        assert_eq!(
            parse_load_line("0x61 ==> 0x", 1, true).expect("ok"),
            (b"a".to_vec(), vec![])
        );
        let err = parse_load_line("no separator", 7, false).expect_err("bad");
        assert!(err.to_string().contains("line 7"), "{err}");
        let err = parse_load_line("0x6 ==> 0x00", 3, true).expect_err("bad");
        assert!(err.to_string().contains("line 3"), "{err}");
    }

    #[test]
    fn commands_parse() {
        use clap::Parser;
        #[derive(Parser)]
        struct T {
            #[command(flatten)]
            l: LdbArgs,
        }
        let t =
            T::try_parse_from(["t", "--db=/tmp/x", "--hex", "put", "0x61", "0x62"]).expect("parse");
        assert!(t.l.hex);
        assert!(matches!(t.l.command, LdbCommand::Put { .. }));
        let t = T::try_parse_from(["t", "--db=/tmp/x", "scan", "--from=a", "--to=b", "--hex"])
            .expect("parse");
        assert!(t.l.hex);
        assert!(matches!(
            t.l.command,
            LdbCommand::Scan {
                from: Some(_),
                to: Some(_),
                ..
            }
        ));
        assert!(T::try_parse_from(["t", "frobnicate"]).is_err());
        assert!(T::try_parse_from(["t", "get"]).is_err());
    }

    #[test]
    fn load_writes_in_batches() {
        use crate::engine::memory::MemoryEngine;
        let e = MemoryEngine::default();
        let input: String = (0..2500)
            .map(|i| format!("0x{i:04X} ==> 0x{:02X}\n", i % 256))
            .collect();
        let n = load(&e, input.as_bytes(), true).expect("load");
        assert_eq!(n, 2500);
        assert_eq!(e.len(), 2500);
        assert_eq!(e.get(&[0x09, 0xC3]).expect("get"), Some(vec![0xC3]));
        let bad = "a ==> b\nbroken\n";
        let err = load(&e, bad.as_bytes(), false).expect_err("bad line");
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    /// Counts `write_batch` calls and the largest batch's key and value bytes.
    #[derive(Default)]
    struct Counting {
        inner: crate::engine::memory::MemoryEngine,
        batches: std::sync::Mutex<Vec<usize>>,
    }

    impl KvEngine for Counting {
        fn name(&self) -> &'static str {
            "counting"
        }
        fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
            self.inner.put(key, value)
        }
        fn get_with(&self, key: &[u8], found: &mut dyn FnMut(&[u8])) -> Result<bool> {
            self.inner.get_with(key, found)
        }
        fn delete(&self, key: &[u8]) -> Result<()> {
            self.inner.delete(key)
        }
        fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
            self.inner.merge(key, operand)
        }
        fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
            self.inner.delete_range(start, end)
        }
        fn write_batch(&self, ops: &[BatchOp<'_>]) -> Result<()> {
            let bytes = ops
                .iter()
                .map(|op| match *op {
                    BatchOp::Put(k, v) | BatchOp::Merge(k, v) => k.len() + v.len(),
                    BatchOp::Delete(k) => k.len(),
                })
                .sum();
            if let Ok(mut b) = self.batches.lock() {
                b.push(bytes);
            }
            self.inner.write_batch(ops)
        }
        fn transaction(
            &self,
            read_for_update: &[&[u8]],
            ops: &[BatchOp<'_>],
        ) -> Result<crate::engine::Commit> {
            self.inner.transaction(read_for_update, ops)
        }
        fn scan(
            &self,
            scan: crate::engine::Scan<'_>,
            visit: &mut crate::engine::Visitor<'_>,
        ) -> Result<usize> {
            self.inner.scan(scan, visit)
        }
        fn flush(&self) -> Result<()> {
            self.inner.flush()
        }
        fn compact(&self, from: Option<&[u8]>, to: Option<&[u8]>) -> Result<()> {
            self.inner.compact(from, to)
        }
        fn wait_for_compactions(&self) -> Result<()> {
            self.inner.wait_for_compactions()
        }
        fn stats(&self) -> crate::engine::EngineStats {
            self.inner.stats()
        }
        fn close(self: Box<Self>) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn load_cuts_batches_by_bytes_as_well_as_by_lines() {
        // 600 KiB values: two of them exceed LOAD_BATCH_BYTES, so each is its own batch;
        // a 2 MiB line alone forms one batch; small lines share one.
        let big = "v".repeat(600 << 10);
        let huge = "h".repeat(2 << 20);
        let input = format!("a ==> {big}\nb ==> {big}\nc ==> {huge}\nd ==> 1\ne ==> 2\n");
        let e = Counting::default();
        assert_eq!(load(&e, input.as_bytes(), false).expect("load"), 5);
        let batches = e.batches.lock().map(|b| b.clone()).unwrap_or_default();
        assert_eq!(
            batches,
            vec![1 + (600 << 10), 1 + (600 << 10), 1 + (2 << 20), 4],
            "batch sizes"
        );
        assert!(batches
            .iter()
            .all(|&b| b <= LOAD_BATCH_BYTES || b == 1 + (2 << 20)));
        assert_eq!(e.get(b"c").expect("get").map(|v| v.len()), Some(2 << 20));
    }
}
