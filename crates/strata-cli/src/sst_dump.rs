//! `strata sst-dump FILE [--scan] [--hex]`: the properties, checksums and (with
//! `--scan`) entries of one SSTable, like RocksDB's `sst_dump`.
//!
//! The file is opened on its own with [`strata::sst::Table::open`] (no database, no
//! cache); the file number comes from the name (`000012.sst` → 12, else 0). Output:
//!
//! ```text
//! file: db/000012.sst
//! file_number: 12
//! ...                                   every TableProperties field, one per line
//! compression: Lz4
//! blocks_verified: 7                    every block's checksum read and checked
//! 'k0000000001' seq=5 kind=Put => 'v...'   (--scan; bytes escaped, or 0x hex with --hex)
//! range_del ['k0000000003', 'k0000000009') seq=40   (--scan: the range tombstones,
//!                                        one per fragment and sequence number)
//! ```
//!
//! A damaged file exits non-zero with one line naming the file and offset (after the
//! lines printed so far).

use crate::error::{CliError, Result};
use crate::ldb::encode;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use strata::env::{FileSystem, PosixFs};
use strata::filename::FileType;
use strata::iter::InternalIterator;
use strata::key::{parse_internal_key, ValueKind};
use strata::sst::Table;
use strata::stats::Statistics;

/// `strata sst-dump`.
#[derive(Args, Clone, Debug)]
pub struct SstDumpArgs {
    /// The table file.
    pub file: PathBuf,
    /// Print every entry.
    #[arg(long = "scan", default_value_t = false)]
    pub scan: bool,
    /// Print keys and values as 0x hex.
    #[arg(long = "hex", default_value_t = false)]
    pub hex: bool,
}

/// `'bytes'`: escaped ASCII, or `0x` hex (also the keys of `ldb manifest_dump`).
pub(crate) fn show(b: &[u8], hex: bool) -> String {
    if hex {
        format!("'{}'", String::from_utf8_lossy(&encode(b, true)))
    } else {
        format!("'{}'", b.escape_ascii())
    }
}

fn kind_name(k: ValueKind) -> &'static str {
    match k {
        ValueKind::Put => "Put",
        ValueKind::Delete => "Delete",
        ValueKind::Merge => "Merge",
        ValueKind::RangeDelete => "RangeDelete",
    }
}

/// An internal key as `'user' seq=N kind=K` (or `(empty)`, or `(malformed ...)`).
fn show_internal(ikey: &[u8], hex: bool) -> String {
    if ikey.is_empty() {
        return "(empty)".to_string();
    }
    match parse_internal_key(ikey) {
        Some(p) => format!(
            "{} seq={} kind={}",
            show(p.user_key, hex),
            p.seq,
            kind_name(p.kind)
        ),
        None => format!("(malformed internal key {})", show(ikey, true)),
    }
}

/// Runs `strata sst-dump`.
///
/// # Errors
/// Engine errors opening or reading the table (corruption names file and offset); a
/// failed write to stdout.
pub fn run(args: &SstDumpArgs) -> Result<()> {
    let number = args
        .file
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(strata::filename::parse)
        .and_then(|t| match t {
            FileType::Table(n) => Some(n),
            _ => None,
        })
        .unwrap_or(0);
    let file = PosixFs.open_random(&args.file)?;
    let table = Arc::new(Table::open(
        file,
        number,
        None,
        Arc::new(Statistics::default()),
        false,
        false,
    )?);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let r = dump(&table, args, &mut out);
    let flushed = out.flush().map_err(|e| CliError::Stdio("stdout", e));
    r.and(flushed)
}

fn dump(table: &Arc<Table>, args: &SstDumpArgs, out: &mut impl Write) -> Result<()> {
    let hex = args.hex;
    let p = table.properties();
    let w = |out: &mut dyn Write, line: String| {
        writeln!(out, "{line}").map_err(|e| CliError::Stdio("stdout", e))
    };
    w(out, format!("file: {}", args.file.display()))?;
    w(out, format!("file_number: {}", table.file_number()))?;
    w(out, format!("file_size: {}", p.file_size))?;
    w(out, format!("format_version: {}", p.format_version))?;
    w(out, format!("compression: {:?}", table.compression()))?;
    w(out, format!("num_entries: {}", p.num_entries))?;
    w(out, format!("num_deletions: {}", p.num_deletions))?;
    w(out, format!("num_data_blocks: {}", p.num_data_blocks))?;
    w(out, format!("raw_key_size: {}", p.raw_key_size))?;
    w(out, format!("raw_value_size: {}", p.raw_value_size))?;
    w(out, format!("data_size: {}", p.data_size))?;
    w(out, format!("index_size: {}", p.index_size))?;
    w(out, format!("filter_size: {}", p.filter_size))?;
    w(
        out,
        format!("smallest_key: {}", show_internal(&p.smallest_key, hex)),
    )?;
    w(
        out,
        format!("largest_key: {}", show_internal(&p.largest_key, hex)),
    )?;
    w(out, format!("smallest_seqno: {}", p.smallest_seqno))?;
    w(out, format!("largest_seqno: {}", p.largest_seqno))?;
    w(out, format!("column_group: {}", p.column_group))?;
    w(
        out,
        format!("num_range_deletions: {}", p.num_range_deletions),
    )?;
    out.flush().map_err(|e| CliError::Stdio("stdout", e))?;
    let blocks = table.verify_checksums()?;
    w(out, format!("blocks_verified: {blocks}"))?;
    if args.scan {
        let mut it = table.iter();
        it.seek_to_first();
        while it.valid() {
            let line = match parse_internal_key(it.key()) {
                Some(k) => format!(
                    "{} seq={} kind={} => {}",
                    show(k.user_key, hex),
                    k.seq,
                    kind_name(k.kind),
                    show(it.value(), hex)
                ),
                None => {
                    return Err(CliError::Strata(strata::Error::corruption(
                        table.path(),
                        0,
                        format!("malformed internal key {}", show(it.key(), true)),
                    )))
                }
            };
            w(out, line)?;
            it.next();
        }
        it.status()?;
        for t in table.range_dels().into_iter().flat_map(|f| f.tombstones()) {
            w(
                out,
                format!(
                    "range_del [{}, {}) seq={}",
                    show(&t.start, hex),
                    show(&t.end, hex),
                    t.seq
                ),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_shown_escaped_or_hex() {
        assert_eq!(show(b"a\x00b", false), "'a\\x00b'");
        assert_eq!(show(b"ab", true), "'0x6162'");
        let ik = strata::key::make_internal_key(b"k1", 9, ValueKind::Delete);
        assert_eq!(show_internal(&ik, false), "'k1' seq=9 kind=Delete");
        assert_eq!(show_internal(&[], false), "(empty)");
    }
}
