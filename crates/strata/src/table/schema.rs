//! A table's schema: its primary key and typed columns, the values they hold, and the
//! schema's record in the family's catalog.
//!
//! The key is a `u64` (stored as 8 big-endian bytes, so the tree's byte order is the
//! numbers' order) or bytes (stored as they are). Columns are numbered from 0 in schema
//! order; the key is not a column.
//!
//! # The schema record (catalog record [`super::catalog::SCHEMA`])
//!
//! ```text
//! +---------+----------+-----------+----------+--------------------------------------+
//! | version | key type | key name  | columns  | per column: name, type, nullable     |
//! | u8 = 1  | u8       | len+bytes | varint32 | len+bytes, u8 type [varint32 width], u8 |
//! +---------+----------+-----------+----------+--------------------------------------+
//! ```
//! Key types: 0 `u64`, 1 bytes. Column types: 0 `i32`, 1 `i64`, 2 `f64`, 3 fixed-width
//! bytes (followed by the width), 4 variable bytes. Nullable: 0 or 1. Frozen fixture
//! in `tests.rs`; the format only grows (a new type takes a new number).

use crate::coding::{put_length_prefixed, put_varint32, Decoder};
use crate::error::{Error, Result};
use std::fmt;

const FORMAT_VERSION: u8 = 1;

/// How the primary key is typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyType {
    /// An unsigned 64-bit number, ordered numerically.
    U64,
    /// A byte string, ordered bytewise.
    Bytes,
}

/// How a column is typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// A signed 32-bit integer.
    I32,
    /// A signed 64-bit integer.
    I64,
    /// A 64-bit float.
    F64,
    /// A byte string of exactly this many bytes (1 to 65,535).
    Fixed(u16),
    /// A byte string of any length.
    Bytes,
}

/// One column of a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// Its name: unique in the schema, not the key's.
    pub name: String,
    /// Its type.
    pub ty: ColumnType,
    /// Whether it may hold `Value::Null`.
    pub nullable: bool,
}

/// A value of a key or a column.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// No value (a nullable column's).
    Null,
    /// A `u64` key's.
    U64(u64),
    /// An `i32` column's.
    I32(i32),
    /// An `i64` column's.
    I64(i64),
    /// An `f64` column's.
    F64(f64),
    /// A bytes key's, or a fixed or variable bytes column's.
    Bytes(Vec<u8>),
}

impl fmt::Display for Value {
    /// As the `strata table` commands print values: numbers in decimal, bytes as
    /// UTF-8 where they are, else `0x` and hex; `NULL`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::U64(v) => write!(f, "{v}"),
            Value::I32(v) => write!(f, "{v}"),
            Value::I64(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
            Value::Bytes(b) => match std::str::from_utf8(b) {
                Ok(s) => f.write_str(s),
                Err(_) => {
                    f.write_str("0x")?;
                    b.iter().try_for_each(|x| write!(f, "{x:02x}"))
                }
            },
        }
    }
}

/// A table's primary key and columns. See the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    key_name: String,
    key: KeyType,
    columns: Vec<Column>,
    /// The longest value a variable bytes column takes: the value limit shared among
    /// them after every other field's largest encoding, so that no union of a row's
    /// parts can exceed `MAX_VALUE_LEN` (every acknowledged write reads back).
    /// Derived from `columns` when the schema is built ([`Schema::check`]).
    bytes_limit: usize,
}

impl Schema {
    /// A schema of key `key_name` typed `key` and `columns`.
    ///
    /// # Errors
    /// `InvalidArgument` for no column, more than `u32::MAX` columns, an empty or
    /// repeated name, or a fixed width of 0.
    pub fn new(key_name: &str, key: KeyType, columns: Vec<Column>) -> Result<Schema> {
        let mut schema = Schema {
            key_name: key_name.to_owned(),
            key,
            columns,
            bytes_limit: 0,
        };
        schema.check().map_err(Error::InvalidArgument)?;
        Ok(schema)
    }

    /// Parses the `strata table create --schema` form: `name:type` items separated by
    /// commas, the first the key (`u64` or `bytes`), then the columns (`i32`, `i64`,
    /// `f64`, `bytes`, `fixedN`), each nullable with a `?` after its type.
    ///
    /// # Errors
    /// `InvalidArgument` naming the item that does not parse, or as [`Schema::new`].
    pub fn parse(text: &str) -> Result<Schema> {
        let bad =
            |item: &str, why: &str| Error::InvalidArgument(format!("schema item `{item}`: {why}"));
        let mut items = text.split(',').map(str::trim);
        let key = items.next().unwrap_or_default();
        let (key_name, key_type) = key.split_once(':').ok_or_else(|| bad(key, "no `:type`"))?;
        let key_type = match key_type {
            "u64" => KeyType::U64,
            "bytes" => KeyType::Bytes,
            _ => return Err(bad(key, "a key is `u64` or `bytes`")),
        };
        let mut columns = Vec::new();
        for item in items {
            let (name, ty) = item
                .split_once(':')
                .ok_or_else(|| bad(item, "no `:type`"))?;
            let (ty, nullable) = match ty.strip_suffix('?') {
                Some(ty) => (ty, true),
                None => (ty, false),
            };
            let ty = match ty {
                "i32" => ColumnType::I32,
                "i64" => ColumnType::I64,
                "f64" => ColumnType::F64,
                "bytes" => ColumnType::Bytes,
                _ => match ty.strip_prefix("fixed").map(str::parse::<u16>) {
                    Some(Ok(n)) => ColumnType::Fixed(n),
                    _ => {
                        return Err(bad(
                            item,
                            "a column is `i32`, `i64`, `f64`, `bytes` or `fixedN`",
                        ))
                    }
                },
            };
            columns.push(Column {
                name: name.to_owned(),
                ty,
                nullable,
            });
        }
        Schema::new(key_name, key_type, columns)
    }

    /// Checks the schema and sets `bytes_limit`.
    fn check(&mut self) -> std::result::Result<(), String> {
        if self.columns.is_empty() {
            return Err("a table needs at least one column besides its key".into());
        }
        if u32::try_from(self.columns.len()).is_err() {
            return Err(format!("{} columns, over u32::MAX", self.columns.len()));
        }
        let mut names = std::collections::HashSet::new();
        for name in std::iter::once(&self.key_name).chain(self.columns.iter().map(|c| &c.name)) {
            if name.is_empty() {
                return Err("a column or key name is empty".into());
            }
            if !names.insert(name.as_str()) {
                return Err(format!("name `{name}` used twice"));
            }
        }
        if let Some(c) = self.columns.iter().find(|c| c.ty == ColumnType::Fixed(0)) {
            return Err(format!("column `{}`: a fixed width of 0", c.name));
        }
        // The largest encoding of a whole row (`part.rs`): version, flags and the
        // cell count, then per column its number, null flag and value; a bytes
        // column's length prefix counted here, its bytes shared below.
        let mut fixed: usize = 7;
        let mut variable = 0usize;
        for c in &self.columns {
            fixed = fixed.saturating_add(match c.ty {
                ColumnType::I32 => 6 + 4,
                ColumnType::I64 | ColumnType::F64 => 6 + 8,
                ColumnType::Fixed(n) => 6 + usize::from(n),
                ColumnType::Bytes => {
                    variable += 1;
                    6 + 5
                }
            });
        }
        let room = crate::limits::MAX_VALUE_LEN
            .checked_sub(fixed)
            .ok_or_else(|| {
                format!(
                    "a row of these columns takes up to {fixed} bytes, over the value limit of {}",
                    crate::limits::MAX_VALUE_LEN
                )
            })?;
        self.bytes_limit = room.checked_div(variable).unwrap_or(room);
        Ok(())
    }

    /// The longest value a variable bytes column of this table takes: the value
    /// limit left after every other field's largest encoding, shared by the bytes
    /// columns, so that a whole row, however its parts were written, always fits in
    /// one value and reads back.
    pub fn bytes_limit(&self) -> usize {
        self.bytes_limit
    }

    /// The key's name.
    pub fn key_name(&self) -> &str {
        &self.key_name
    }

    /// The key's type.
    pub fn key_type(&self) -> KeyType {
        self.key
    }

    /// The columns, in schema order (a column's number is its index).
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The number of the column named `name`.
    ///
    /// # Errors
    /// `InvalidArgument` naming the column if there is none (or it is the key).
    pub fn column(&self, name: &str) -> Result<usize> {
        self.columns
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| Error::InvalidArgument(format!("no column `{name}` in the table")))
    }

    /// The column numbers `spec` names: `first..last` (both inclusive, in schema
    /// order) or `a,b,...` (in the order given).
    ///
    /// # Errors
    /// `InvalidArgument` naming a column the table lacks, or a range that runs
    /// backwards.
    pub fn projection(&self, spec: &str) -> Result<Vec<usize>> {
        if let Some((a, b)) = spec.split_once("..") {
            let (a, b) = (self.column(a.trim())?, self.column(b.trim())?);
            if a > b {
                return Err(Error::InvalidArgument(format!(
                    "columns `{spec}`: the range runs backwards"
                )));
            }
            return Ok((a..=b).collect());
        }
        spec.split(',').map(|c| self.column(c.trim())).collect()
    }

    /// The key written as `text`: a decimal `u64`, or bytes as they are.
    ///
    /// # Errors
    /// `InvalidArgument` naming the key if `text` is not a number for a `u64` key.
    pub fn parse_key(&self, text: &str) -> Result<Value> {
        match self.key {
            KeyType::U64 => text.trim().parse().map(Value::U64).map_err(|_| {
                Error::InvalidArgument(format!(
                    "key `{}` is a u64: `{text}` is not one",
                    self.key_name
                ))
            }),
            KeyType::Bytes => Ok(Value::Bytes(text.as_bytes().to_vec())),
        }
    }

    /// The value of column `column` written as `text`: a decimal number for `i32`,
    /// `i64` and `f64`, bytes as they are, `NULL` for null; checked against the
    /// column ([`Schema::check_value`]).
    ///
    /// # Errors
    /// `InvalidArgument` naming the column if `text` does not parse or fit.
    pub fn parse_value(&self, column: usize, text: &str) -> Result<Value> {
        let c = self
            .columns
            .get(column)
            .ok_or_else(|| Error::InvalidArgument(format!("no column number {column}")))?;
        let bad = || {
            Error::InvalidArgument(format!(
                "column `{}` ({:?}): `{text}` does not parse",
                c.name, c.ty
            ))
        };
        let value = match (text.trim(), c.ty) {
            ("NULL", _) => Value::Null,
            (t, ColumnType::I32) => Value::I32(t.parse().map_err(|_| bad())?),
            (t, ColumnType::I64) => Value::I64(t.parse().map_err(|_| bad())?),
            (t, ColumnType::F64) => Value::F64(t.parse().map_err(|_| bad())?),
            (_, ColumnType::Fixed(_) | ColumnType::Bytes) => Value::Bytes(text.as_bytes().to_vec()),
        };
        self.check_value(column, &value)?;
        Ok(value)
    }

    /// The bytes that store `key` in the tree.
    ///
    /// # Errors
    /// `InvalidArgument` if `key` is not of the key's type.
    pub(crate) fn encode_key(&self, key: &Value) -> Result<Vec<u8>> {
        match (self.key, key) {
            (KeyType::U64, Value::U64(k)) => Ok(k.to_be_bytes().to_vec()),
            (KeyType::Bytes, Value::Bytes(k)) => Ok(k.clone()),
            _ => Err(Error::InvalidArgument(format!(
                "key `{}` is {:?}, not {key:?}",
                self.key_name, self.key
            ))),
        }
    }

    /// The key stored as `bytes`.
    ///
    /// # Errors
    /// `Corruption`-worthy text if a `u64` key is not 8 bytes.
    pub(crate) fn decode_key(&self, bytes: &[u8]) -> std::result::Result<Value, String> {
        match self.key {
            KeyType::U64 => <[u8; 8]>::try_from(bytes)
                .map(|b| Value::U64(u64::from_be_bytes(b)))
                .map_err(|_| format!("a u64 key of {} bytes", bytes.len())),
            KeyType::Bytes => Ok(Value::Bytes(bytes.to_vec())),
        }
    }

    /// `Ok` iff `value` may be stored in column `column` (its type; null only if
    /// nullable; a fixed width's length; a bytes value within [`Schema::bytes_limit`]).
    ///
    /// # Errors
    /// `InvalidArgument` naming the column.
    pub fn check_value(&self, column: usize, value: &Value) -> Result<()> {
        let c = self
            .columns
            .get(column)
            .ok_or_else(|| Error::InvalidArgument(format!("no column number {column}")))?;
        let ok = match (c.ty, value) {
            (_, Value::Null) => c.nullable,
            (ColumnType::I32, Value::I32(_))
            | (ColumnType::I64, Value::I64(_))
            | (ColumnType::F64, Value::F64(_)) => true,
            (ColumnType::Bytes, Value::Bytes(b)) => {
                if b.len() > self.bytes_limit {
                    return Err(Error::InvalidArgument(format!(
                        "column `{}`: {} bytes, over this table's limit of {} per bytes \
                         column (the value limit shared by its columns, so a whole row \
                         always fits)",
                        c.name,
                        b.len(),
                        self.bytes_limit
                    )));
                }
                true
            }
            (ColumnType::Fixed(n), Value::Bytes(b)) => b.len() == usize::from(n),
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "column `{}` ({:?}{}) cannot hold {value:?}",
                c.name,
                c.ty,
                if c.nullable { ", nullable" } else { "" }
            )))
        }
    }

    /// The schema record (see the module docs).
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = vec![FORMAT_VERSION];
        out.push(match self.key {
            KeyType::U64 => 0,
            KeyType::Bytes => 1,
        });
        put_length_prefixed(&mut out, self.key_name.as_bytes());
        put_varint32(
            &mut out,
            u32::try_from(self.columns.len()).unwrap_or(u32::MAX),
        );
        for c in &self.columns {
            put_length_prefixed(&mut out, c.name.as_bytes());
            match c.ty {
                ColumnType::I32 => out.push(0),
                ColumnType::I64 => out.push(1),
                ColumnType::F64 => out.push(2),
                ColumnType::Fixed(n) => {
                    out.push(3);
                    put_varint32(&mut out, u32::from(n));
                }
                ColumnType::Bytes => out.push(4),
            }
            out.push(u8::from(c.nullable));
        }
        out
    }

    /// Decodes a schema record.
    ///
    /// # Errors
    /// What is wrong with it, for a `Corruption` naming the family.
    pub(crate) fn decode(src: &[u8]) -> std::result::Result<Schema, String> {
        let mut d = Decoder::new(src);
        let version = d.u8().ok_or("empty schema record")?;
        if version != FORMAT_VERSION {
            return Err(format!(
                "schema record version {version}, this build reads 1"
            ));
        }
        let key = match d.u8().ok_or("truncated key type")? {
            0 => KeyType::U64,
            1 => KeyType::Bytes,
            t => return Err(format!("unknown key type {t}")),
        };
        let name = |d: &mut Decoder<'_>| -> std::result::Result<String, String> {
            let b = d.length_prefixed().ok_or("truncated name")?;
            String::from_utf8(b.to_vec()).map_err(|_| "a name is not UTF-8".to_owned())
        };
        let key_name = name(&mut d)?;
        let n = d.varint32().ok_or("truncated column count")?;
        let mut columns = Vec::new();
        for _ in 0..n {
            let name = name(&mut d)?;
            let ty = match d.u8().ok_or("truncated column type")? {
                0 => ColumnType::I32,
                1 => ColumnType::I64,
                2 => ColumnType::F64,
                3 => {
                    let w = d.varint32().ok_or("truncated fixed width")?;
                    ColumnType::Fixed(u16::try_from(w).map_err(|_| format!("fixed width {w}"))?)
                }
                4 => ColumnType::Bytes,
                t => return Err(format!("unknown column type {t}")),
            };
            let nullable = match d.u8().ok_or("truncated nullable flag")? {
                0 => false,
                1 => true,
                f => return Err(format!("nullable flag {f}")),
            };
            columns.push(Column { name, ty, nullable });
        }
        if !d.is_empty() {
            return Err("bytes after the schema record".into());
        }
        let mut schema = Schema {
            key_name,
            key,
            columns,
            bytes_limit: 0,
        };
        schema.check()?;
        Ok(schema)
    }
}

#[cfg(test)]
mod tests;
