//! The one executor that writes tables: it drains a merged input through version GC
//! and an output partitioner into new SSTables. Flushes and compactions both use it.
//!
//! Durability: every output is fsynced by `TableBuilder::finish`; the caller fsyncs the
//! directory once before naming the outputs in a version edit.

use super::gc::VersionGc;
use super::partitioner::OutputPartitioner;
use crate::env::WritableFile;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key;
use crate::sst::{TableBuilder, TableOptions};
use crate::version::{FileKind, FileMetaData};

/// Makes a new output file: returns its number and an open writer. The callee records
/// the number as a pending output so it is not collected as obsolete.
pub type NewFile<'a> = dyn FnMut() -> Result<(u64, Box<dyn WritableFile>)> + 'a;

/// Writes every entry of `input` that `gc` keeps into tables cut by `partitioner`.
/// Returns the metadata of the outputs, in key order.
///
/// # Errors
/// Corruption or I/O errors from the input, I/O errors writing outputs. Outputs
/// written before the error are left for obsolete-file collection.
pub fn write_tables(
    input: &mut dyn InternalIterator,
    gc: &mut VersionGc,
    partitioner: &mut dyn OutputPartitioner,
    new_file: &mut NewFile<'_>,
    table_opts: &TableOptions,
) -> Result<Vec<FileMetaData>> {
    let mut outputs = Vec::new();
    let mut current: Option<(u64, TableBuilder)> = None;
    let mut last_user_key: Vec<u8> = Vec::new();
    input.seek_to_first();
    while input.valid() {
        let ikey = input.key();
        let Some(parsed) = key::parse_internal_key(ikey) else {
            return Err(Error::corruption(
                "<compaction input>",
                0,
                "malformed internal key",
            ));
        };
        if gc.keep(&parsed) {
            let new_key = parsed.user_key != last_user_key.as_slice();
            // Every new user key is shown to the partitioner (size 0 when no file is
            // open) so stateful policies can track their position.
            if new_key {
                let size = current.as_ref().map_or(0, |(_, b)| b.estimated_size());
                if partitioner.should_cut(parsed.user_key, size) {
                    if let Some((n, b)) = current.take() {
                        outputs.push(finish(n, b, table_opts)?);
                    }
                }
            }
            if current.is_none() {
                let (n, file) = new_file()?;
                current = Some((n, TableBuilder::new(file, table_opts.clone())));
            }
            if let Some((_, b)) = current.as_mut() {
                b.add(ikey, input.value())?;
            }
            if new_key {
                last_user_key.clear();
                last_user_key.extend_from_slice(parsed.user_key);
            }
        }
        input.next();
    }
    input.status()?;
    if let Some((n, b)) = current.take() {
        outputs.push(finish(n, b, table_opts)?);
    }
    Ok(outputs)
}

fn finish(number: u64, builder: TableBuilder, opts: &TableOptions) -> Result<FileMetaData> {
    let p = builder.finish()?;
    Ok(FileMetaData {
        number,
        path_id: 0,
        size: p.file_size,
        smallest: p.smallest_key,
        largest: p.largest_key,
        smallest_seqno: p.smallest_seqno,
        largest_seqno: p.largest_seqno,
        num_entries: p.num_entries,
        num_deletions: p.num_deletions,
        column_group: opts.column_group,
        kind: FileKind::Real,
    })
}
