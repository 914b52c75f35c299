//! What a projected read asks of a table's runs (the paper's §4.3): only the runs of
//! groups sharing a column with the projection are read, and a point read ends once
//! every projected column has its newest value and the row's existence is known. The
//! core's side of the seam is `db::PartialRead` (ARCHITECTURE §7.1.3).
//!
//! Why it is exact. A group run holds every delete and range tombstone of its keys
//! (the splitter sends a delete to every group; the executor gives every stream the
//! job's tombstones), and every insert's share (an insert is split into a part with
//! the insert flag per group). So the runs of the groups holding the projected
//! columns, with the row runs above them, hold every entry that decides those
//! columns and the row's existence. An insert-flagged part ends the history of the
//! cells it holds: the parts of one insert hold every column between them, so no
//! older cell of those columns matters; and by containment a column's entries keep
//! their level order, so nothing deeper can change them. Once such parts cover every
//! projected column, the answer is known. Only the cells present count: a part with
//! the flag need not hold all of its group's columns (the L0→L1 fold can unite an
//! update of `c` with a sibling's flag into a flagged part of group `{c, d}` without
//! `d`, whose cell is in another part of the same write).

use super::part::Part;
use super::schema::Schema;
use crate::db::PartialRead;
use std::collections::BTreeMap;

/// One projected read of a table. See the module docs.
pub(crate) struct Projection<'a> {
    schema: &'a Schema,
    /// Every group the table's layouts ever used, by id (ids are never reused).
    groups: &'a BTreeMap<u32, Vec<u32>>,
    /// Per column: wanted by the read.
    wanted: Vec<bool>,
    /// Per column: wanted and not yet settled by an insert part.
    open: Vec<bool>,
    /// How many columns `open` holds.
    left: usize,
    /// The level that served the read (`PartialRead::served_at`).
    served: usize,
}

impl<'a> Projection<'a> {
    /// The read of `columns` of rows of `schema` whose groups are `groups`. An empty
    /// projection (a row's existence only) reads the groups of the first column.
    pub fn new(
        schema: &'a Schema,
        groups: &'a BTreeMap<u32, Vec<u32>>,
        columns: &[usize],
    ) -> Projection<'a> {
        let mut wanted = vec![false; schema.columns().len()];
        for &c in if columns.is_empty() { &[0] } else { columns } {
            if let Some(w) = wanted.get_mut(c) {
                *w = true;
            }
        }
        let left = wanted.iter().filter(|&&w| w).count();
        Projection {
            schema,
            groups,
            open: wanted.clone(),
            wanted,
            left,
            served: 0,
        }
    }

    /// The level that served the read, once it has ended (0 before).
    pub fn served(&self) -> usize {
        self.served
    }
}

impl PartialRead for Projection<'_> {
    /// A group the table's record does not know (written by a layout this handle has
    /// not seen) is read: reading more is never wrong.
    fn reads_group(&self, group: u32) -> bool {
        self.groups.get(&group).is_none_or(|columns| {
            columns
                .iter()
                .any(|&c| self.wanted.get(c as usize).copied().unwrap_or(false))
        })
    }

    /// An operand that does not decode settles nothing: resolving the chain reports
    /// it.
    fn settles(&mut self, operand: &[u8]) -> bool {
        let Ok(part) = Part::decode(self.schema, operand) else {
            return false;
        };
        if part.insert {
            for (c, _) in &part.cells {
                if let Some(o) = self.open.get_mut(*c as usize).filter(|o| **o) {
                    *o = false;
                    self.left = self.left.saturating_sub(1);
                }
            }
        }
        self.left == 0
    }

    fn served_at(&mut self, level: usize) {
        self.served = level;
    }
}
