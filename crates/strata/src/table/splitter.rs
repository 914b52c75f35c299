//! Cuts a table's records into the parts of a level's column groups (the record
//! fan-out, `compaction::plan::Splitter`), so a compaction into a column-group level
//! writes each group's share of every row to that group's run.

use super::part::{encode_into, Part};
use super::schema::Schema;
use crate::compaction::plan::{Parts, Splitter};
use crate::key::{ParsedKey, ValueKind};
use std::sync::Arc;

/// Splits records among streams, each holding one column group. See the module docs.
#[derive(Debug)]
pub(crate) struct GroupSplitter {
    schema: Arc<Schema>,
    /// Per output stream, its group's columns (ascending).
    groups: Vec<Vec<u32>>,
}

impl GroupSplitter {
    /// A splitter into `groups` (per stream, its columns, ascending) of a table of
    /// `schema`.
    pub fn new(schema: Arc<Schema>, groups: Vec<Vec<u32>>) -> GroupSplitter {
        GroupSplitter { schema, groups }
    }

    fn everywhere(&self, parts: &mut Parts, kind: ValueKind, value: &[u8]) {
        for stream in 0..self.groups.len() {
            parts.add(stream, kind, |v| v.extend_from_slice(value));
        }
    }
}

impl Splitter for GroupSplitter {
    /// - A delete, and a `Put` that says there is no row (a ghost), reach every
    ///   stream as a delete: each group's older parts are hidden.
    /// - A part gives each stream the cells of the stream's columns, as a merge
    ///   operand, keeping its `INSERT` flag; a stream receives nothing when the part
    ///   holds none of its columns and is not an insert. A row's insert holds every
    ///   column at its sequence number, across the parts the groups hold of it, so
    ///   every stream gets its whole share of an insert, which replaces that group's
    ///   share of anything older (`Part::overlay`): the rule `Splitter` states for a
    ///   `Put`. A part read back from a sibling run may be an insert holding none of
    ///   a stream's columns (that run's share of the row); the stream then gets the
    ///   flag alone, at the same sequence number as its own share, which changes
    ///   nothing a reader sees.
    /// - A value that does not decode (damage the row operator would report on every
    ///   read) goes to every stream unchanged, as a merge operand, so nothing is lost
    ///   and reads keep failing with the same error.
    fn split(&self, entry: &ParsedKey<'_>, value: &[u8], parts: &mut Parts) {
        let part = match entry.kind {
            ValueKind::Put | ValueKind::Merge => Part::decode(&self.schema, value),
            ValueKind::Delete | ValueKind::RangeDelete => {
                return self.everywhere(parts, ValueKind::Delete, &[]);
            }
        };
        let Ok(part) = part else {
            return self.everywhere(parts, ValueKind::Merge, value);
        };
        // A `Put` replaces everything older: one that says there is no row (a ghost,
        // or any part without the flag, which reads as no row) is a delete in every
        // group; an operand without cells or flag changes nothing.
        if entry.kind == ValueKind::Put && !part.exists() {
            return self.everywhere(parts, ValueKind::Delete, &[]);
        }
        if !part.exists() && part.cells.is_empty() {
            return;
        }
        for (stream, columns) in self.groups.iter().enumerate() {
            let share = part
                .cells
                .iter()
                .filter(|(c, _)| columns.binary_search(c).is_ok());
            if !part.insert && share.clone().next().is_none() {
                continue;
            }
            // Written straight into the stream's reused buffer: no cells collected
            // and no part encoded apart, per record and stream.
            parts.add(stream, ValueKind::Merge, |v| {
                encode_into(&self.schema, part.insert, share, v)
            });
        }
    }
}
