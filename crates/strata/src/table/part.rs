//! Parts: what a table stores under a row's key. A whole row (an insert, stored as a
//! `Put`) and a partial-row update (a merge operand) are both parts; the row operator
//! ([`super::operator::RowOperator`]) lays newer parts over older ones.
//!
//! # Format (version 1)
//!
//! ```text
//! +---------+-------+----------+--------------------------------------------+
//! | version | flags | cells    | per cell, columns strictly ascending:      |
//! | u8 = 1  | u8    | varint32 | column varint32, null u8 (1: null), value  |
//! +---------+-------+----------+--------------------------------------------+
//! ```
//! Flags: bit 0 `INSERT`: the row exists from this part on; other bits are zero. The
//! parts of one insert at one sequence number hold every column between them (the
//! whole row in one part, or one part per column group after a split), so an insert
//! replaces every column of an older row. A value is typed by
//! its column in the schema: `i32` 4 bytes and `i64` 8 bytes little-endian, `f64` its
//! 8 bytes of IEEE bits little-endian, `fixedN` N bytes, `bytes` a varint32 length and
//! the bytes; a null cell has no value bytes. Frozen fixture in `tests.rs`.
//!
//! A part without `INSERT` and without cells is a *ghost*: what an update of a key
//! with no live row resolves to. Readers of the table see no row for it, as SQL's
//! UPDATE of a missing row changes nothing.

use super::schema::{ColumnType, Schema, Value};
use crate::coding::{put_length_prefixed, put_varint32, Decoder};
use std::cmp::Ordering;

const FORMAT_VERSION: u8 = 1;
const INSERT: u8 = 1;

/// A decoded part. See the module docs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Part {
    /// The row exists from this part on (and `cells` holds every column).
    pub insert: bool,
    /// (column number, value), columns strictly ascending.
    pub cells: Vec<(u32, Value)>,
}

impl Part {
    /// No row: an update of a key with no live row resolves to it.
    pub fn ghost() -> Part {
        Part {
            insert: false,
            cells: Vec::new(),
        }
    }

    /// Whether a reader sees a row.
    pub fn exists(&self) -> bool {
        self.insert
    }

    /// `newer` laid over `self`: per column, the newer cell wins; the row exists if
    /// either says so (an insert's parts hold every column between them, so an insert
    /// replaces the whole row). A result without a row keeps its cells only while it
    /// may still meet an older row (`keep_cells`); resolved against the key's whole
    /// history it is a ghost.
    pub fn overlay(self, newer: Part, keep_cells: bool) -> Part {
        let mut cells = Vec::with_capacity(self.cells.len() + newer.cells.len());
        let mut old = self.cells.into_iter().peekable();
        let mut new = newer.cells.into_iter().peekable();
        loop {
            let order = match (old.peek(), new.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some((a, _)), Some((b, _))) => a.cmp(b),
            };
            match order {
                Ordering::Less => cells.extend(old.next()),
                Ordering::Greater => cells.extend(new.next()),
                Ordering::Equal => {
                    old.next();
                    cells.extend(new.next());
                }
            }
        }
        let part = Part {
            insert: self.insert || newer.insert,
            cells,
        };
        if part.insert || keep_cells {
            part
        } else {
            Part::ghost()
        }
    }

    /// The stored bytes. Requires: the cells fit `schema` (as [`Part::decode`] checks;
    /// the table checks every value it is given first).
    pub fn encode(&self, schema: &Schema) -> Vec<u8> {
        let mut out = Vec::new();
        encode_into(schema, self.insert, self.cells.iter(), &mut out);
        out
    }

    /// Decodes `src` as a part of a table of `schema`, checking it whole: columns in
    /// the schema and strictly ascending, values of their columns' types, nulls only
    /// in nullable columns, nothing after the last cell.
    ///
    /// # Errors
    /// What is wrong, for a `MergeFailed` or `Corruption` naming the key.
    pub fn decode(schema: &Schema, src: &[u8]) -> Result<Part, String> {
        let mut d = Decoder::new(src);
        let version = d.u8().ok_or("empty part")?;
        if version != FORMAT_VERSION {
            return Err(format!("part version {version}, this build reads 1"));
        }
        let flags = d.u8().ok_or("truncated part flags")?;
        if flags & !INSERT != 0 {
            return Err(format!("unknown part flags {flags:#x}"));
        }
        let n = d.varint32().ok_or("truncated cell count")?;
        let columns = schema.columns();
        let mut cells = Vec::new();
        let mut last: Option<u32> = None;
        for _ in 0..n {
            let column = d.varint32().ok_or("truncated cell column")?;
            if last.is_some_and(|l| l >= column) {
                return Err(format!("cell column {column} out of order"));
            }
            last = Some(column);
            let c = usize::try_from(column)
                .ok()
                .and_then(|i| columns.get(i))
                .ok_or_else(|| format!("cell column {column}: the table has {}", columns.len()))?;
            let value = match d.u8().ok_or("truncated null flag")? {
                1 if c.nullable => Value::Null,
                1 => return Err(format!("a null in column `{}`", c.name)),
                0 => match c.ty {
                    ColumnType::I32 => Value::I32(d.fixed32().ok_or("truncated i32")? as i32),
                    ColumnType::I64 => Value::I64(d.fixed64().ok_or("truncated i64")? as i64),
                    ColumnType::F64 => {
                        Value::F64(f64::from_bits(d.fixed64().ok_or("truncated f64")?))
                    }
                    ColumnType::Fixed(w) => Value::Bytes(
                        d.bytes(usize::from(w))
                            .ok_or("truncated fixed bytes")?
                            .to_vec(),
                    ),
                    ColumnType::Bytes => {
                        let b = d.length_prefixed().ok_or("truncated bytes")?;
                        if b.len() > schema.bytes_limit() {
                            return Err(format!(
                                "column `{}`: {} bytes, over the table's limit of {}",
                                c.name,
                                b.len(),
                                schema.bytes_limit()
                            ));
                        }
                        Value::Bytes(b.to_vec())
                    }
                },
                f => return Err(format!("null flag {f}")),
            };
            cells.push((column, value));
        }
        if !d.is_empty() {
            return Err("bytes after the last cell".into());
        }
        Ok(Part {
            insert: flags & INSERT != 0,
            cells,
        })
    }

    /// The values of `projection` (column numbers), `Null` where the part holds none.
    pub fn project(&self, projection: &[usize]) -> Vec<Value> {
        projection
            .iter()
            .map(|&c| {
                u32::try_from(c)
                    .ok()
                    .and_then(|c| self.cells.binary_search_by_key(&c, |(k, _)| *k).ok())
                    .and_then(|i| self.cells.get(i))
                    .map_or(Value::Null, |(_, v)| v.clone())
            })
            .collect()
    }
}

/// Appends to `out` the part of flag `insert` holding `cells` (columns strictly
/// ascending): what [`Part::encode`] writes, for a writer that selects cells without
/// collecting them (`splitter.rs`, once per record and stream).
pub(crate) fn encode_into<'a>(
    schema: &Schema,
    insert: bool,
    cells: impl Iterator<Item = &'a (u32, Value)> + Clone,
    out: &mut Vec<u8>,
) {
    out.push(FORMAT_VERSION);
    out.push(if insert { INSERT } else { 0 });
    put_varint32(
        out,
        u32::try_from(cells.clone().count()).unwrap_or(u32::MAX),
    );
    for (column, value) in cells {
        put_varint32(out, *column);
        out.push(u8::from(*value == Value::Null));
        match value {
            Value::Null => {}
            Value::U64(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::I32(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::I64(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::F64(v) => out.extend_from_slice(&v.to_bits().to_le_bytes()),
            Value::Bytes(b) => {
                let fixed = usize::try_from(*column)
                    .ok()
                    .and_then(|c| schema.columns().get(c))
                    .is_some_and(|c| matches!(c.ty, ColumnType::Fixed(_)));
                if fixed {
                    out.extend_from_slice(b);
                } else {
                    put_length_prefixed(out, b);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
