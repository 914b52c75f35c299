//! The row operator: the merge operator of every table family. It lays a row's newer
//! parts over older ones (`Part::overlay`), so version GC and the compaction fold
//! (`compaction::merge_chain`) keep a table's rows without knowing what a row is.

use super::part::Part;
use super::schema::Schema;
use crate::limits::MAX_VALUE_LEN;
use crate::merge::{MergeError, MergeOperator};
use std::sync::Arc;

/// The operator's name (recorded nowhere on disk today: table families are never the
/// default family, whose operator `OPTIONS` records; a new meaning takes a new name).
const NAME: &str = "strata.table_row.v1";

/// Merges the parts of a table of one schema. See the module docs.
#[derive(Debug)]
pub(crate) struct RowOperator {
    schema: Arc<Schema>,
}

impl RowOperator {
    /// The operator of tables of `schema`.
    pub fn new(schema: Arc<Schema>) -> RowOperator {
        RowOperator { schema }
    }

    fn decode(&self, key: &[u8], bytes: &[u8]) -> Result<Part, MergeError> {
        Part::decode(&self.schema, bytes)
            .map_err(|e| MergeError::new(format!("table part of key {key:02x?}: {e}")))
    }
}

impl MergeOperator for RowOperator {
    fn name(&self) -> &str {
        NAME
    }

    /// The row after `operands`: from `existing` (a `Put`: a whole row, or the ghost a
    /// resolved update without a row left) or from no row, each part laid over it.
    /// The key's whole history is here, so a result without a row is a ghost.
    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        let mut row = match existing {
            Some(b) => self.decode(key, b)?,
            None => Part::ghost(),
        };
        for op in operands {
            row = row.overlay(self.decode(key, op)?, false);
        }
        let bytes = row.encode(&self.schema);
        if bytes.len() > MAX_VALUE_LEN {
            return Err(MergeError::new(format!(
                "table row of key {key:02x?}: {} bytes, over the value limit of {MAX_VALUE_LEN}",
                bytes.len()
            )));
        }
        Ok(bytes)
    }

    /// One part for consecutive `operands`: an update's cells stay, as an older row
    /// they will be laid over may exist.
    fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let mut parts = operands.iter().map(|op| self.decode(key, op));
        let mut acc = parts.next()?.ok()?;
        for p in parts {
            acc = acc.overlay(p.ok()?, true);
        }
        // Parts each within the limit may unite into one over it: keep them apart.
        Some(acc.encode(&self.schema)).filter(|b| b.len() <= MAX_VALUE_LEN)
    }

    fn check_operand(&self, key: &[u8], operand: &[u8]) -> Result<(), MergeError> {
        self.decode(key, operand).map(drop)
    }
}
