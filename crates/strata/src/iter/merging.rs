//! The merging iterator: one sorted view over several sorted children (memtables, L0
//! tables, levels), in both directions.
//!
//! # Role
//! The read path and compactions build one `MergingIterator` over every source of a
//! version, newest source first, and put the user-facing or compaction iterator on top.
//!
//! # Contract additions (to [`crate::iter`])
//! 1. **Total order.** Entries are yielded in `(internal key, child index)` order by
//!    [`compare_internal`]: when several children hold an identical internal key, the child
//!    given first (the newest source) is yielded first going forward. `prev` is the exact
//!    reverse of `next`, so going backward the same tie yields the *last* child first; a
//!    reader that keeps "the last entry seen" while scanning backward therefore ends on the
//!    same entry a forward scan sees first.
//! 2. **Children.** Each child must itself yield strictly increasing internal keys (no
//!    duplicates within one child) and honour the [`InternalIterator`] contract, including
//!    `prev`/`seek_for_prev` when the merged iterator is moved backward.
//! 3. **Direction switching** (LevelDB semantics). `next` after `prev` (or after a backward
//!    seek) repositions every non-current child at its first entry after the current
//!    position; `prev` after a forward move repositions them at their last entry before it.
//!    A switch therefore costs one seek per child; steady movement costs O(log n) for `n`
//!    children.
//! 4. **Errors.** After any operation, a child that is invalid and reports an error in
//!    `status()` makes the merging iterator invalid; its `status()` returns that (first)
//!    error from then on, and later seeks leave it invalid.
//! 5. `key()`/`value()` are the current child's slices, valid until the next move.
//!
//! # Design
//! A binary heap of the indices of the valid children, ordered by the total order of
//! rule 1: a min-heap while moving forward, a max-heap while moving backward; the top is the
//! current entry. `next`/`prev` advance the top child and sift it down (or pop it when it
//! is exhausted). Seeks and direction switches reposition the children and rebuild the heap
//! in O(n).

use std::cmp::Ordering;
use std::fmt;

use super::InternalIterator;
use crate::error::{Error, Result};
use crate::key::compare_internal;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
}

/// Merges several sorted iterators into one; see the module docs for the contract.
pub struct MergingIterator {
    /// The sources, newest first.
    children: Vec<Box<dyn InternalIterator>>,
    /// Indices of the valid children; a heap whose top (`heap[0]`) is the current entry.
    heap: Vec<usize>,
    /// Which way `heap` is ordered.
    direction: Direction,
    /// First error reported by a child (sticky).
    err: Option<Error>,
    /// Copy of the current key during a direction switch (reused to avoid allocation).
    scratch: Vec<u8>,
}

impl fmt::Debug for MergingIterator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MergingIterator")
            .field("children", &self.children.len())
            .field("direction", &self.direction)
            .field("current", &self.heap.first())
            .field("err", &self.err)
            .finish()
    }
}

/// True iff child `a` must be above child `b` in a heap ordered for `dir`.
fn above(children: &[Box<dyn InternalIterator>], dir: Direction, a: usize, b: usize) -> bool {
    let (Some(ca), Some(cb)) = (children.get(a), children.get(b)) else {
        return false;
    };
    let ord = compare_internal(ca.key(), cb.key()).then(a.cmp(&b));
    match dir {
        Direction::Forward => ord == Ordering::Less,
        Direction::Backward => ord == Ordering::Greater,
    }
}

fn sift_down(
    children: &[Box<dyn InternalIterator>],
    dir: Direction,
    heap: &mut [usize],
    mut i: usize,
) {
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut top = i;
        for c in [l, r] {
            if let (Some(&hc), Some(&ht)) = (heap.get(c), heap.get(top)) {
                if above(children, dir, hc, ht) {
                    top = c;
                }
            }
        }
        if top == i {
            return;
        }
        heap.swap(i, top);
        i = top;
    }
}

impl MergingIterator {
    /// A merging iterator over `children`, given newest source first (ties go to the
    /// lower index going forward). Unpositioned until a seek.
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> MergingIterator {
        MergingIterator {
            heap: Vec::with_capacity(children.len()),
            children,
            direction: Direction::Forward,
            err: None,
            scratch: Vec::new(),
        }
    }

    /// Records child `i`'s error if it is invalid with one.
    fn note_error(&mut self, i: usize) {
        if self.err.is_some() {
            return;
        }
        if let Some(c) = self.children.get(i) {
            if !c.valid() {
                if let Err(e) = c.status() {
                    self.err = Some(e);
                }
            }
        }
    }

    /// Rebuilds the heap from the children's current positions, ordered for `dir`.
    fn rebuild(&mut self, dir: Direction) {
        self.direction = dir;
        self.heap.clear();
        for i in 0..self.children.len() {
            self.note_error(i);
            if self.children.get(i).is_some_and(|c| c.valid()) {
                self.heap.push(i);
            }
        }
        if self.err.is_some() {
            self.heap.clear();
            return;
        }
        for i in (0..self.heap.len() / 2).rev() {
            sift_down(&self.children, dir, &mut self.heap, i);
        }
    }

    /// Applies `f` to every child, then rebuilds the heap for `dir`.
    fn reposition_all(&mut self, dir: Direction, f: impl Fn(&mut dyn InternalIterator)) {
        if self.err.is_some() {
            self.heap.clear();
            return;
        }
        for c in &mut self.children {
            f(c.as_mut());
        }
        self.rebuild(dir);
    }

    /// Moves every child except the current one to the side `dir` of the current
    /// position (rule 3 of the module docs), then rebuilds the heap for `dir`.
    fn switch_direction(&mut self, dir: Direction) {
        let Some(&cur) = self.heap.first() else {
            return;
        };
        let Some(c) = self.children.get(cur) else {
            return;
        };
        self.scratch.clear();
        self.scratch.extend_from_slice(c.key());
        let target = &self.scratch;
        for (i, child) in self.children.iter_mut().enumerate() {
            if i == cur {
                continue;
            }
            match dir {
                Direction::Forward => {
                    child.seek(target);
                    // An equal key in an earlier child sorts before the current entry.
                    if i < cur && child.valid() && child.key() == target.as_slice() {
                        child.next();
                    }
                }
                Direction::Backward => {
                    child.seek_for_prev(target);
                    // An equal key in a later child sorts after the current entry.
                    if i > cur && child.valid() && child.key() == target.as_slice() {
                        child.prev();
                    }
                }
            }
        }
        // `cur` is still at the current entry, which is now the heap's top.
        self.rebuild(dir);
    }

    /// Advances the top child in `dir` (`next` or `prev`) and restores the heap.
    fn step(&mut self, dir: Direction) {
        debug_assert!(self.valid(), "next()/prev() require valid()");
        if !self.valid() {
            return;
        }
        if self.direction != dir {
            self.switch_direction(dir);
        }
        let Some(&cur) = self.heap.first() else {
            return;
        };
        let Some(child) = self.children.get_mut(cur) else {
            return;
        };
        match dir {
            Direction::Forward => child.next(),
            Direction::Backward => child.prev(),
        }
        if !child.valid() {
            self.note_error(cur);
            if self.err.is_some() {
                self.heap.clear();
                return;
            }
            self.heap.swap_remove(0);
        }
        sift_down(&self.children, dir, &mut self.heap, 0);
    }

    fn current(&self) -> Option<&dyn InternalIterator> {
        let &i = self.heap.first()?;
        self.children.get(i).map(|c| c.as_ref())
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        self.err.is_none() && !self.heap.is_empty()
    }

    fn seek_to_first(&mut self) {
        self.reposition_all(Direction::Forward, |c| c.seek_to_first());
    }

    fn seek_to_last(&mut self) {
        self.reposition_all(Direction::Backward, |c| c.seek_to_last());
    }

    fn seek(&mut self, target: &[u8]) {
        self.reposition_all(Direction::Forward, |c| c.seek(target));
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.reposition_all(Direction::Backward, |c| c.seek_for_prev(target));
    }

    fn next(&mut self) {
        self.step(Direction::Forward);
    }

    fn prev(&mut self) {
        self.step(Direction::Backward);
    }

    fn key(&self) -> &[u8] {
        debug_assert!(self.valid(), "key() requires valid()");
        self.current().map_or(&[], |c| c.key())
    }

    fn value(&self) -> &[u8] {
        debug_assert!(self.valid(), "value() requires valid()");
        self.current().map_or(&[], |c| c.value())
    }

    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.duplicate()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;
    use crate::iter::test_util::FailingIter;
    use crate::key::{make_internal_key, ValueKind};
    use crate::memtable::MemTable;

    /// `(internal key, child, value)` sorted by the merged total order.
    type Model = Vec<(Vec<u8>, usize, Vec<u8>)>;

    fn sort_model(model: &mut Model) {
        model.sort_by(|a, b| compare_internal(&a.0, &b.0).then(a.1.cmp(&b.1)));
    }

    fn entry(it: &dyn InternalIterator) -> Option<(Vec<u8>, Vec<u8>)> {
        it.valid().then(|| (it.key().to_vec(), it.value().to_vec()))
    }

    fn at(model: &Model, pos: Option<usize>) -> Option<(Vec<u8>, Vec<u8>)> {
        pos.and_then(|p| model.get(p))
            .map(|e| (e.0.clone(), e.2.clone()))
    }

    /// `(user key, seq, kind, child)`: entries spread over children; the same internal key
    /// may appear in several children (the tie rule).
    type Spec = Vec<(u8, u8, u8, usize)>;

    fn build(n_children: usize, spec: &Spec) -> (MergingIterator, Model) {
        let mems: Vec<_> = (0..n_children).map(|_| Arc::new(MemTable::new())).collect();
        let mut model = Model::new();
        for &(k, seq, kind, child) in spec {
            let child = child % n_children;
            let uk = [b'k', k];
            let kind = ValueKind::from_u8(kind % 3).unwrap_or(ValueKind::Put);
            let ikey = make_internal_key(&uk, u64::from(seq), kind);
            if model.iter().any(|e| e.0 == ikey && e.1 == child) {
                continue;
            }
            let value = format!("c{child}-{k}-{seq}").into_bytes();
            if let Some(m) = mems.get(child) {
                m.add(u64::from(seq), kind, &uk, &value);
            }
            model.push((ikey, child, value));
        }
        sort_model(&mut model);
        let children = mems
            .iter()
            .map(|m| Box::new(m.iter()) as Box<dyn InternalIterator>)
            .collect();
        (MergingIterator::new(children), model)
    }

    #[derive(Clone, Debug)]
    enum Op {
        First,
        Last,
        Seek(u8, u8),
        SeekForPrev(u8, u8),
        Next,
        Prev,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            1 => Just(Op::First),
            1 => Just(Op::Last),
            1 => (0u8..20, 0u8..20).prop_map(|(k, s)| Op::Seek(k, s)),
            1 => (0u8..20, 0u8..20).prop_map(|(k, s)| Op::SeekForPrev(k, s)),
            4 => Just(Op::Next),
            4 => Just(Op::Prev),
        ]
    }

    fn run(n_children: usize, spec: &Spec, ops: &[Op]) {
        let (mut it, model) = build(n_children, spec);
        assert!(!it.valid());
        let mut pos: Option<usize> = None;
        for op in ops {
            match op {
                Op::First => {
                    it.seek_to_first();
                    pos = (!model.is_empty()).then_some(0);
                }
                Op::Last => {
                    it.seek_to_last();
                    pos = model.len().checked_sub(1);
                }
                Op::Seek(k, s) => {
                    let t = make_internal_key(&[b'k', *k], u64::from(*s), ValueKind::Put);
                    it.seek(&t);
                    let p = model.partition_point(|e| compare_internal(&e.0, &t).is_lt());
                    pos = (p < model.len()).then_some(p);
                }
                Op::SeekForPrev(k, s) => {
                    let t = make_internal_key(&[b'k', *k], u64::from(*s), ValueKind::Put);
                    it.seek_for_prev(&t);
                    let p = model.partition_point(|e| compare_internal(&e.0, &t).is_le());
                    pos = p.checked_sub(1);
                }
                Op::Next => {
                    let Some(p) = pos else { continue };
                    it.next();
                    pos = (p + 1 < model.len()).then_some(p + 1);
                }
                Op::Prev => {
                    let Some(p) = pos else { continue };
                    it.prev();
                    pos = p.checked_sub(1);
                }
            }
            assert_eq!(entry(&it), at(&model, pos), "after {op:?}");
            assert!(it.status().is_ok());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: if cfg!(miri) { 2 } else { 256 },
            ..ProptestConfig::default()
        })]

        #[test]
        fn merging_matches_model(
            n_children in 1usize..5,
            spec in prop::collection::vec((0u8..20, 0u8..20, 0u8..3, 0usize..5), 0..80),
            ops in prop::collection::vec(op(), 0..200),
        ) {
            run(n_children, &spec, &ops);
        }
    }

    #[test]
    fn identical_keys_go_newest_child_first_and_mirror_backward() {
        let spec: Spec = vec![
            (1, 5, 1, 0),
            (1, 5, 1, 1),
            (1, 5, 1, 2),
            (0, 1, 1, 1),
            (2, 1, 1, 0),
        ];
        let (mut it, _) = build(3, &spec);
        let mut fwd = Vec::new();
        it.seek_to_first();
        while it.valid() {
            fwd.push(it.value().to_vec());
            it.next();
        }
        let names = |v: &[Vec<u8>]| {
            v.iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(&fwd),
            ["c1-0-1", "c0-1-5", "c1-1-5", "c2-1-5", "c0-2-1"]
        );
        let mut back = Vec::new();
        it.seek_to_last();
        while it.valid() {
            back.push(it.value().to_vec());
            it.prev();
        }
        back.reverse();
        assert_eq!(back, fwd);
        // Switch direction in the middle of the tie group: c1-1-5 -> prev -> c0-1-5.
        it.seek(&make_internal_key(b"k\x01", 5, ValueKind::Put));
        it.next();
        assert_eq!(it.value(), b"c1-1-5");
        it.prev();
        assert_eq!(it.value(), b"c0-1-5");
        it.next();
        it.next();
        assert_eq!(it.value(), b"c2-1-5");
        it.prev();
        assert_eq!(it.value(), b"c1-1-5");
    }

    #[test]
    fn child_error_is_sticky_and_invalidates() {
        let entries: Vec<_> = (0..10u8)
            .map(|i| (make_internal_key(&[b'a', i], 1, ValueKind::Put), vec![i]))
            .collect();
        let healthy = FailingIter {
            entries: entries.clone(),
            pos: None,
            budget: usize::MAX,
            failed: false,
        };
        let mut other = entries;
        for e in &mut other {
            e.0 = make_internal_key(&[b'b', e.1[0]], 1, ValueKind::Put);
        }
        let failing = FailingIter {
            entries: other,
            pos: None,
            budget: 3,
            failed: false,
        };
        let mut it = MergingIterator::new(vec![Box::new(healthy), Box::new(failing)]);
        it.seek_to_first();
        let mut seen = 0;
        while it.valid() {
            seen += 1;
            it.next();
        }
        // The failing child dies after 3 moves, long before the healthy one is exhausted.
        assert!(seen < 20, "{seen}");
        let err = it.status().expect_err("error must surface");
        assert!(err.is_corruption());
        it.seek_to_first();
        assert!(!it.valid());
        assert!(it.status().is_err(), "error is sticky");
    }

    #[test]
    fn error_on_seek_surfaces_immediately() {
        let failing = FailingIter {
            entries: Vec::new(),
            pos: None,
            budget: 0,
            failed: false,
        };
        let mut it = MergingIterator::new(vec![Box::new(failing)]);
        it.seek(b"anything");
        assert!(!it.valid());
        assert!(it.status().is_err());
    }

    #[test]
    fn no_children_is_empty() {
        let mut it = MergingIterator::new(Vec::new());
        it.seek_to_first();
        assert!(!it.valid());
        it.seek_for_prev(b"zzzzzzzzz");
        assert!(!it.valid());
        assert!(it.status().is_ok());
    }
}
