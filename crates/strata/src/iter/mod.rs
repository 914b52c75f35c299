//! The one iterator contract of the engine, and its adapters.
//!
//! Every source of entries (memtable, data block, table, level, merged view, the user's
//! [`crate::DbIterator`]) implements [`InternalIterator`] over *internal keys*
//! (see [`crate::key`]), ordered by [`crate::key::compare_internal`].
//!
//! # Contract
//! - A fresh iterator is not positioned: `valid()` is false until a seek.
//! - `seek(target)` positions at the first entry `>= target`; `seek_for_prev(target)` at
//!   the last entry `<= target`; `seek_to_first` / `seek_to_last` at the ends.
//! - `next` / `prev` require `valid()`.
//! - `key()` / `value()` require `valid()`; the returned slices stay valid until the next
//!   call that moves the iterator (or its drop). Copy them to keep them.
//! - Errors are sticky: when an underlying read fails, the iterator becomes invalid and
//!   `status()` returns the error from then on. A caller that sees `valid() == false`
//!   must check `status()` before concluding the range is exhausted.
//! - Bounds are not checked here: the user-facing iterator applies
//!   [`crate::ReadOptions`] bounds; level iterators may use them to skip files.
//!   [`ClippedIterator`] restricts any iterator to a user-key range; [`TeeIterator`]
//!   shows every entry a forward iterator arrives at to a [`Tee`].

mod clipped;
mod level;
mod merging;
mod tee;
#[cfg(test)]
pub(crate) mod test_util;

pub use clipped::{ClippedIterator, Upper};
pub use level::{AnyTable, LevelIterator, OpenHook};
pub use merging::MergingIterator;
pub use tee::{Tee, TeeIterator};

use crate::error::Result;

/// A positioned cursor over internal-key entries. See the module docs for the contract.
pub trait InternalIterator: Send {
    /// True iff positioned at an entry.
    fn valid(&self) -> bool;
    /// Positions at the first entry.
    fn seek_to_first(&mut self);
    /// Positions at the last entry.
    fn seek_to_last(&mut self);
    /// Positions at the first entry whose internal key is `>= target`.
    fn seek(&mut self, target: &[u8]);
    /// Positions at the last entry whose internal key is `<= target`.
    fn seek_for_prev(&mut self, target: &[u8]);
    /// Moves to the next entry. Requires `valid()`.
    fn next(&mut self);
    /// Moves to the previous entry. Requires `valid()`.
    fn prev(&mut self);
    /// The current internal key. Requires `valid()`.
    fn key(&self) -> &[u8];
    /// The current value. Requires `valid()`.
    fn value(&self) -> &[u8];
    /// The first error met, if any (sticky).
    fn status(&self) -> Result<()>;
}

/// Boxed iterators are iterators too.
impl<I: InternalIterator + ?Sized> InternalIterator for Box<I> {
    fn valid(&self) -> bool {
        (**self).valid()
    }
    fn seek_to_first(&mut self) {
        (**self).seek_to_first()
    }
    fn seek_to_last(&mut self) {
        (**self).seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) {
        (**self).seek(target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        (**self).seek_for_prev(target)
    }
    fn next(&mut self) {
        (**self).next()
    }
    fn prev(&mut self) {
        (**self).prev()
    }
    fn key(&self) -> &[u8] {
        (**self).key()
    }
    fn value(&self) -> &[u8] {
        (**self).value()
    }
    fn status(&self) -> Result<()> {
        (**self).status()
    }
}
