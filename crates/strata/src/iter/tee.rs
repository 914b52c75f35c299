//! The tee adapter: an iterator that shows a [`Tee`] every entry it arrives at while
//! moving forward, so that a reader can keep the merged stream it has already paid
//! for (a scan's merge of several levels is the input a compaction of them would
//! compute again).
//!
//! # Contract additions (to [`crate::iter`])
//! 1. **Transparent.** Every call is forwarded to the inner iterator unchanged; the
//!    adapter's position, keys, values and status are the inner ones.
//! 2. **What the tee sees.** A forward seek (`seek`, `seek_to_first`) calls
//!    [`Tee::start`] with its target; then the entry the iterator arrived at, and the
//!    entry after each `next`, are shown by [`Tee::entry`], in order, each once. So
//!    between a `start` and the next event, the tee has seen every entry of the inner
//!    iterator from the seek position up to the current one, with no gap.
//! 3. **Exhaustion.** A forward move that leaves the iterator invalid with an `Ok`
//!    status calls [`Tee::exhausted`]: no entry follows the last one shown.
//! 4. **Breaks.** A backward move (`prev`, `seek_for_prev`, `seek_to_last`) and any
//!    move that leaves the iterator failed call [`Tee::broken`]: the run seen since the
//!    last `start` ends there and is not known to be followed by anything. A later
//!    forward seek calls `start` again; what the tee does with several runs is its own
//!    business.
//!
//! The tee is owned by the adapter and dropped with it, so a tee that acts on what it
//! saw does so in its `Drop` (when the reader is done).

use super::InternalIterator;
use crate::error::Result;

/// What a [`TeeIterator`] shows; see the module docs for when each call comes.
pub trait Tee: Send {
    /// A forward seek to `target` (an internal key; `None`: the first entry).
    fn start(&mut self, target: Option<&[u8]>);
    /// The entry arrived at, moving forward.
    fn entry(&mut self, key: &[u8], value: &[u8]);
    /// A forward move found no further entry.
    fn exhausted(&mut self);
    /// The forward run broke: a backward move, or a failure.
    fn broken(&mut self);
}

/// An iterator showing its forward arrivals to a [`Tee`]; see the module docs.
pub struct TeeIterator<I> {
    inner: I,
    tee: Box<dyn Tee>,
}

impl<I: InternalIterator> TeeIterator<I> {
    /// `inner`, teed into `tee`. Does not move `inner`.
    pub fn new(inner: I, tee: Box<dyn Tee>) -> TeeIterator<I> {
        TeeIterator { inner, tee }
    }

    /// Shows the tee where a forward move arrived.
    fn arrive(&mut self) {
        if self.inner.valid() {
            self.tee.entry(self.inner.key(), self.inner.value());
        } else if self.inner.status().is_ok() {
            self.tee.exhausted();
        } else {
            self.tee.broken();
        }
    }
}

impl<I: InternalIterator> InternalIterator for TeeIterator<I> {
    fn valid(&self) -> bool {
        self.inner.valid()
    }

    fn seek_to_first(&mut self) {
        self.inner.seek_to_first();
        self.tee.start(None);
        self.arrive();
    }

    fn seek_to_last(&mut self) {
        self.inner.seek_to_last();
        self.tee.broken();
    }

    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target);
        self.tee.start(Some(target));
        self.arrive();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.inner.seek_for_prev(target);
        self.tee.broken();
    }

    fn next(&mut self) {
        self.inner.next();
        self.arrive();
    }

    fn prev(&mut self) {
        self.inner.prev();
        self.tee.broken();
    }

    fn key(&self) -> &[u8] {
        self.inner.key()
    }

    fn value(&self) -> &[u8] {
        self.inner.value()
    }

    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iter::test_util::FailingIter;
    use crate::key::{make_internal_key, ValueKind};
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Debug, PartialEq, Eq)]
    enum Event {
        Start(Option<Vec<u8>>),
        Entry(Vec<u8>),
        Exhausted,
        Broken,
    }

    /// Records every call.
    struct Recorder(Arc<Mutex<Vec<Event>>>);

    impl Recorder {
        fn push(&self, e: Event) {
            if let Ok(mut v) = self.0.lock() {
                v.push(e);
            }
        }
    }

    impl Tee for Recorder {
        fn start(&mut self, target: Option<&[u8]>) {
            self.push(Event::Start(target.map(<[u8]>::to_vec)));
        }
        fn entry(&mut self, key: &[u8], value: &[u8]) {
            assert_eq!(value, [b"v", key].concat(), "the entry's own value");
            self.push(Event::Entry(key.to_vec()));
        }
        fn exhausted(&mut self) {
            self.push(Event::Exhausted);
        }
        fn broken(&mut self) {
            self.push(Event::Broken);
        }
    }

    fn ik(k: &str) -> Vec<u8> {
        make_internal_key(k.as_bytes(), 1, ValueKind::Put)
    }

    /// Five entries `a`..`e` (value `v` ++ key), teed; fails after `budget` moves.
    fn teed(budget: usize) -> (TeeIterator<FailingIter>, Arc<Mutex<Vec<Event>>>) {
        let entries = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|k| (ik(k), [b"v".as_slice(), &ik(k)].concat()))
            .collect();
        let events = Arc::new(Mutex::new(Vec::new()));
        let it = TeeIterator::new(
            FailingIter::new(entries, budget),
            Box::new(Recorder(Arc::clone(&events))),
        );
        (it, events)
    }

    fn taken(events: &Arc<Mutex<Vec<Event>>>) -> Vec<Event> {
        std::mem::take(&mut *events.lock().expect("events"))
    }

    #[test]
    fn forward_runs_are_shown_entry_by_entry_and_end_exhausted() {
        let (mut it, events) = teed(usize::MAX);
        it.seek(&ik("b"));
        while it.valid() {
            it.next();
        }
        assert!(it.status().is_ok());
        let want: Vec<Event> = std::iter::once(Event::Start(Some(ik("b"))))
            .chain(["b", "c", "d", "e"].iter().map(|k| Event::Entry(ik(k))))
            .chain([Event::Exhausted])
            .collect();
        assert_eq!(taken(&events), want);
        // A seek past the end is a start and an exhaustion; seek_to_first starts anew.
        it.seek(&ik("z"));
        it.seek_to_first();
        assert_eq!(it.key(), ik("a"));
        assert_eq!(
            taken(&events),
            [
                Event::Start(Some(ik("z"))),
                Event::Exhausted,
                Event::Start(None),
                Event::Entry(ik("a")),
            ]
        );
    }

    #[test]
    fn backward_moves_break_the_run_and_stay_transparent() {
        let (mut it, events) = teed(usize::MAX);
        it.seek_to_first();
        it.next();
        it.prev();
        assert_eq!(it.key(), ik("a"), "the inner position");
        it.seek_for_prev(&ik("c"));
        assert_eq!(it.key(), ik("c"));
        it.seek_to_last();
        assert_eq!(it.key(), ik("e"));
        assert_eq!(
            taken(&events),
            [
                Event::Start(None),
                Event::Entry(ik("a")),
                Event::Entry(ik("b")),
                Event::Broken,
                Event::Broken,
                Event::Broken,
            ]
        );
    }

    #[test]
    fn a_failed_move_breaks_the_run() {
        // Two good moves, then the inner iterator fails.
        let (mut it, events) = teed(2);
        it.seek_to_first();
        it.next();
        it.next();
        assert!(!it.valid());
        assert!(it.status().is_err());
        assert_eq!(
            taken(&events),
            [
                Event::Start(None),
                Event::Entry(ik("a")),
                Event::Entry(ik("b")),
                Event::Broken,
            ]
        );
    }
}
