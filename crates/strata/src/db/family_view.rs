//! The lock-free list of live column families that [`crate::Db::write`] checks a batch
//! against before the batch is queued, so a batch that could never be applied (a
//! dropped family, a merge without an operator, an operand the operator refuses) is
//! refused with nothing written, and through which a batch for families whose values
//! carry deadlines gets them (`expiry::stamp`).

use crate::batch::WriteBatchInternal;
use crate::error::{Error, Result};
use crate::expiry;
use crate::key::ValueKind;
use crate::merge::MergeOperator;
use crate::WriteBatch;
use std::sync::Arc;

/// One live family as writers see it.
pub(crate) struct FamilyEntry {
    pub id: u32,
    pub name: String,
    pub merge_operator: Option<Arc<dyn MergeOperator>>,
    /// Its values end in a deadline (`Options::expiring_values`).
    pub expiring: bool,
    /// The family's `metrics` handles, for the writers' per-family counters.
    #[cfg(feature = "metrics")]
    pub metrics: Arc<super::export::FamilyMetrics>,
}

/// Every live family, ascending by id. Rebuilt under the `state` lock whenever a family
/// is created or dropped (`families_changed`) and read without it.
pub(crate) struct FamilyView(pub Vec<FamilyEntry>);

impl FamilyView {
    pub(super) fn find(&self, id: u32) -> Option<&FamilyEntry> {
        self.0.iter().find(|f| f.id == id)
    }

    /// `Ok` iff every family `batch` names is live and every merge in it goes to a
    /// family with a merge operator that accepts its operand
    /// ([`MergeOperator::check_operand`]).
    ///
    /// Cost: nothing for a batch of plain updates to the default family (the batch
    /// lists its families as it is built); a batch holding merges is decoded once.
    ///
    /// # Errors
    /// `InvalidArgument` naming the family (and, for an operand, the record, key and
    /// operator's reason).
    pub fn check(&self, batch: &WriteBatch) -> Result<()> {
        if let Some(&id) = batch
            .named_families()
            .iter()
            .find(|&&id| self.find(id).is_none())
        {
            return Err(missing(id));
        }
        let mut operators = Vec::with_capacity(batch.merge_families().len());
        for &id in batch.merge_families() {
            match self.find(id) {
                Some(FamilyEntry {
                    merge_operator: Some(op),
                    name,
                    ..
                }) => operators.push((id, name.as_str(), op)),
                Some(f) => return Err(no_merge_operator(&f.name)),
                None => return Err(missing(id)),
            }
        }
        if operators.is_empty() {
            return Ok(());
        }
        let mut refused = None;
        let mut record = 0u32;
        batch
            .iterate_cf(|family, _, kind, key, operand| {
                if kind == ValueKind::Merge && refused.is_none() {
                    let Some((_, name, op)) = operators.iter().find(|(id, _, _)| *id == family)
                    else {
                        return;
                    };
                    if let Err(e) = op.check_operand(key, operand) {
                        refused = Some(Error::InvalidArgument(format!(
                            "merge operand refused: column family `{name}` operator=`{}` \
                             record={record} key=`{}`: {e}",
                            op.name(),
                            key.escape_ascii()
                        )));
                    }
                }
                record = record.saturating_add(1);
            })
            .map_err(|e| Error::Internal(format!("a batch built by the API decodes: {}", e.0)))?;
        refused.map_or(Ok(()), Err)
    }
}

impl FamilyView {
    /// `batch` as the families it writes store it: unchanged unless it writes to a
    /// family with expiring values or holds a deadline, else stamped
    /// ([`expiry::stamp`]). Requires: [`Self::check`] passed.
    ///
    /// # Errors
    /// As [`expiry::stamp`].
    pub fn stamp(&self, batch: WriteBatch) -> Result<WriteBatch> {
        let expiring = |id: u32| self.find(id).is_some_and(|f| f.expiring);
        let touched = expiring(0) || batch.named_families().iter().any(|&id| expiring(id));
        if !touched && batch.deadlines().is_empty() {
            return Ok(batch);
        }
        let name = |id: u32| {
            self.find(id)
                .map_or_else(|| id.to_string(), |f| f.name.clone())
        };
        expiry::stamp(batch, expiring, name)
    }
}

fn missing(id: u32) -> Error {
    Error::InvalidArgument(format!(
        "the batch names a column family this database does not have \
         (dropped, or of another database): id=`{id}`"
    ))
}

fn no_merge_operator(family: &str) -> Error {
    Error::InvalidArgument(format!(
        "the batch holds a merge but column family `{family}` has no merge_operator"
    ))
}
