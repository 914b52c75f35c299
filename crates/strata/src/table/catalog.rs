//! A table's catalog: the family records (`version::edit`, format version 4) that make
//! a column family a table, and the family kind that reads them at every open.
//!
//! | record key | holds | format |
//! |---|---|---|
//! | [`SCHEMA`] (1) | the schema | `schema.rs` |
//! | [`LAYOUT`] (2) | the layout, its column groups by id and its epoch | `layout.rs` |
//!
//! Both are written in the edit that creates the family (`DbInner::create_family`), so
//! no open ever sees a table family without them. A family without a schema record is
//! not a table and is left as it is.

use super::layout::LayoutRecord;
use super::operator::RowOperator;
use super::policy::{needs_policy, TablePolicy};
use super::schema::Schema;
use crate::compaction::CompactionPolicy;
use crate::db::family_kind::FamilyKinds;
use crate::error::{Error, Result};
use crate::options::Options;
use crate::version::Version;
use std::sync::Arc;

/// The schema record's key.
pub(crate) const SCHEMA: u32 = 1;
/// The layout record's key.
pub(crate) const LAYOUT: u32 = 2;

/// A table family's catalog, decoded.
#[derive(Debug)]
pub(crate) struct Catalog {
    pub schema: Arc<Schema>,
    pub layout: LayoutRecord,
}

impl Catalog {
    /// The catalog in `version`'s records, `None` if the family is not a table.
    ///
    /// # Errors
    /// `Corruption` naming the family and the record that does not decode (or is
    /// missing beside the other).
    pub fn read(name: &str, version: &Version) -> Result<Option<Catalog>> {
        let Some(schema) = version.record(SCHEMA) else {
            return Ok(None);
        };
        let bad = |what: &str, e: String| {
            Error::corruption(
                "MANIFEST",
                0,
                format!("column family `{name}`: table {what} record: {e}"),
            )
        };
        let schema = Schema::decode(schema).map_err(|e| bad("schema", e))?;
        let layout = version
            .record(LAYOUT)
            .ok_or_else(|| "missing".to_owned())
            .and_then(LayoutRecord::decode)
            .map_err(|e| bad("layout", e))?;
        layout
            .layout()
            .and_then(|l| l.check(schema.columns().len()).map_err(|e| e.to_string()))
            .map_err(|e| bad("layout", e))?;
        Ok(Some(Catalog {
            schema: Arc::new(schema),
            layout,
        }))
    }
}

/// Makes a table family's options from its catalog: the row operator of its schema;
/// and its policy: CG-local compaction (`policy.rs`) when a level holds column
/// groups, else the database's.
#[derive(Debug, Default)]
pub(crate) struct TableKinds;

impl FamilyKinds for TableKinds {
    fn configure(
        &self,
        name: &str,
        version: &Version,
        opts: &mut Options,
    ) -> Result<Option<Arc<dyn CompactionPolicy>>> {
        let Some(catalog) = Catalog::read(name, version)? else {
            return Ok(None);
        };
        opts.merge_operator = Some(Arc::new(RowOperator::new(Arc::clone(&catalog.schema))));
        if !needs_policy(&catalog.layout) {
            return Ok(None);
        }
        // Column-group levels belong to CG-local compaction alone: the techniques that
        // adjust other policies' plans (tiering's retention re-routes keys whole,
        // query-driven compaction writes rows back) would undo the split.
        opts.tiering = None;
        opts.query_compaction = None;
        // Its policy rewrites no table by age: off, so the scheduler is not woken for
        // tables it will not plan.
        opts.periodic_compaction_seconds = 0;
        Ok(Some(
            Arc::new(TablePolicy::new(catalog.schema)) as Arc<dyn CompactionPolicy>
        ))
    }
}
