//! The built-in merge operators. Names are on disk (the `OPTIONS` file): never change
//! one's meaning.

use super::{AssociativeMergeOperator, MergeError, MergeOperator};
use std::sync::Arc;

const U64_ADD: &str = "strata.u64_add";
const MAX: &str = "strata.max";
const APPEND_PREFIX: &str = "strata.append:";

/// Adds 64-bit counters: values and operands are 8-byte little-endian `u64`s (as
/// RocksDB's `UInt64AddOperator`), the sum wraps. A missing or deleted base counts as
/// 0. Name: `strata.u64_add`.
#[derive(Clone, Copy, Debug, Default)]
pub struct U64Add;

impl U64Add {
    /// The operand that adds `n`.
    pub fn operand(n: u64) -> [u8; 8] {
        n.to_le_bytes()
    }

    /// Decodes a value this operator wrote.
    ///
    /// # Errors
    /// A [`MergeError`] unless `bytes` is exactly 8 bytes long.
    pub fn decode(bytes: &[u8]) -> Result<u64, MergeError> {
        <[u8; 8]>::try_from(bytes)
            .map(u64::from_le_bytes)
            .map_err(|_| {
                MergeError::new(format!(
                    "strata.u64_add needs 8-byte little-endian values, got {} bytes",
                    bytes.len()
                ))
            })
    }
}

impl AssociativeMergeOperator for U64Add {
    fn name(&self) -> &str {
        U64_ADD
    }

    fn merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operand: &[u8],
    ) -> Result<Vec<u8>, MergeError> {
        let base = existing.map_or(Ok(0), U64Add::decode)?;
        Ok(base
            .wrapping_add(U64Add::decode(operand)?)
            .to_le_bytes()
            .to_vec())
    }

    fn check_operand(&self, _key: &[u8], operand: &[u8]) -> Result<(), MergeError> {
        U64Add::decode(operand).map(drop)
    }
}

/// Appends byte strings: the value is the base followed by each operand, joined by
/// the separator (RocksDB's `StringAppendOperator`). A missing or deleted base adds
/// no leading separator. Name: `strata.append:` and the separator in lowercase hex
/// (`strata.append:2c` for `,`), because the separator is part of the meaning.
#[derive(Clone, Debug)]
pub struct Append {
    separator: Vec<u8>,
    name: String,
}

impl Append {
    /// An operator joining with `separator` (may be empty).
    pub fn new(separator: &[u8]) -> Append {
        let mut name = String::from(APPEND_PREFIX);
        for b in separator {
            name.push_str(&format!("{b:02x}"));
        }
        Append {
            separator: separator.to_vec(),
            name,
        }
    }
}

impl AssociativeMergeOperator for Append {
    fn name(&self) -> &str {
        &self.name
    }

    fn merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operand: &[u8],
    ) -> Result<Vec<u8>, MergeError> {
        Ok(match existing {
            None => operand.to_vec(),
            Some(base) => [base, &self.separator, operand].concat(),
        })
    }
}

/// Keeps the bytewise largest of the base and the operands (RocksDB's `MaxOperator`).
/// Name: `strata.max`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Max;

impl AssociativeMergeOperator for Max {
    fn name(&self) -> &str {
        MAX
    }

    fn merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operand: &[u8],
    ) -> Result<Vec<u8>, MergeError> {
        Ok(match existing {
            Some(base) if base > operand => base.to_vec(),
            _ => operand.to_vec(),
        })
    }
}

/// Parses lowercase or uppercase hex pairs.
fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect()
}

pub(super) fn by_name(name: &str) -> Option<Arc<dyn MergeOperator>> {
    match name {
        U64_ADD => Some(Arc::new(U64Add)),
        MAX => Some(Arc::new(Max)),
        _ => {
            let sep = from_hex(name.strip_prefix(APPEND_PREFIX)?)?;
            Some(Arc::new(Append::new(&sep)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(op: &dyn MergeOperator, base: Option<&[u8]>, ops: &[&[u8]]) -> Vec<u8> {
        op.full_merge(b"k", base, ops).unwrap()
    }

    #[test]
    fn u64_add_sums_and_rejects_bad_widths() {
        let op = U64Add;
        let (one, two) = (U64Add::operand(1), U64Add::operand(2));
        assert_eq!(full(&op, None, &[&one, &two]), 3u64.to_le_bytes());
        let ten = U64Add::operand(10);
        assert_eq!(full(&op, Some(&ten), &[&two]), 12u64.to_le_bytes());
        let max = U64Add::operand(u64::MAX);
        assert_eq!(full(&op, Some(&max), &[&one]), 0u64.to_le_bytes());
        assert!(op.full_merge(b"k", Some(b"abc"), &[&one]).is_err());
        assert!(op.full_merge(b"k", None, &[b"123456789"]).is_err());
        assert_eq!(
            op.partial_merge(b"k", &[&one, &two]),
            Some(3u64.to_le_bytes().to_vec())
        );
        assert_eq!(op.partial_merge(b"k", &[&one, b"x"]), None);
        assert_eq!(MergeOperator::check_operand(&op, b"k", &one), Ok(()));
        for bad in [&b""[..], b"5", b"123456789"] {
            let e = MergeOperator::check_operand(&op, b"k", bad).unwrap_err();
            assert!(e.reason.contains("8-byte"), "{e}");
        }
    }

    #[test]
    fn append_and_max_accept_every_operand() {
        for op in [&Append::new(b",") as &dyn MergeOperator, &Max] {
            for operand in [&b""[..], b"5", b"any bytes at all"] {
                assert_eq!(op.check_operand(b"k", operand), Ok(()));
            }
        }
    }

    #[test]
    fn append_joins_with_the_separator() {
        let op = Append::new(b",");
        assert_eq!(full(&op, None, &[b"a", b"b"]), b"a,b");
        assert_eq!(full(&op, Some(b"x"), &[b"a"]), b"x,a");
        assert_eq!(full(&op, Some(b"x"), &[]), b"x");
        assert_eq!(
            op.partial_merge(b"k", &[b"a", b"b", b"c"]),
            Some(b"a,b,c".to_vec())
        );
        assert_eq!(MergeOperator::name(&op), "strata.append:2c");
        assert_eq!(MergeOperator::name(&Append::new(b"")), "strata.append:");
    }

    #[test]
    fn max_keeps_the_largest() {
        let op = Max;
        assert_eq!(full(&op, Some(b"m"), &[b"a", b"z", b"b"]), b"z");
        assert_eq!(full(&op, None, &[b"a"]), b"a");
        assert_eq!(full(&op, Some(b"q"), &[b"a"]), b"q");
    }

    #[test]
    fn names_decode_to_the_builtins() {
        for op in [
            Arc::new(U64Add) as Arc<dyn MergeOperator>,
            Arc::new(Max),
            Arc::new(Append::new(b", ")),
            Arc::new(Append::new(b"")),
        ] {
            let back = by_name(op.name()).unwrap();
            assert_eq!(back.name(), op.name());
        }
        assert!(by_name("strata.append:2").is_none());
        assert!(by_name("strata.append:zz").is_none());
        assert!(by_name("mine").is_none());
    }
}
