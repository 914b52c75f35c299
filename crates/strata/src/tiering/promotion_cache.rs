//! The promotion cache (HotRAP §3.1, §3.3): copies of records that gets found in the
//! slow tier, kept in memory at the tier boundary until a compaction from the last
//! fast level takes them (promotion by compaction).
//!
//! What it holds (invariant P1, ARCHITECTURE §18): every entry is a copy (key,
//! sequence number, value) of a `Put` in the slow tier that was the key's newest
//! version when the get that inserted it loaded its sequence number. Gets probe it
//! right after the last fast level (`TreeHooks::get_after`); iterators, `multi_get` and
//! transactions' conflict checks never need it.
//!
//! Why a copy stays true (invariant P2, epochs): a newer version of a cached key
//! reaches the slow tier only through a plan that moves records out of the fast tier,
//! and every such plan is *registered* here ([`PromotionCache::register`], under the
//! database's `state` lock, before the plan's install): one critical section of the
//! cache's lock bumps the epoch, logs the plan's key range and takes every entry in
//! it. A get samples the epoch ([`PromotionCache::epoch`]) before its sequence
//! number; its insert is refused if a registration after that sample overlaps its key,
//! or if the bounded log no longer reaches back to the sample. Either the plan
//! registered before the sample (the newer version was already in a table when the
//! read loaded its sequence number, so the read answered with it, never with an older
//! record), or after it (the insert is refused, or came first and the take removed
//! it). Unlike the authors' code, which checks flags on the slow files a lookup
//! visited and inserts after dropping its lock, this needs no per-file state and has
//! no window between check and insert.
//!
//! Locking: the cache has its own lock (`parking_lot::RwLock`); probes take it shared,
//! inserts and registrations exclusive. The read path takes no database lock; with
//! HotRAP on, a get answered from the slow tier takes this one.
//!
//! Size: at most `capacity` bytes of keys and values. A full cache is *sealed*: its
//! copies leave it as one batch for promotion by flush (§3.4), queued behind the
//! batches sealed before it ([`PromotionCache::take_sealed`] hands over the oldest),
//! and an empty cache takes the insert: the paper's list of immutable caches, here
//! bounded at [`MAX_SEALED`] batches. Sealed copies are never read (P1: between sealing
//! and their check a newer version may reach the slow tier, and nothing would take it
//! out); their check asks [`PromotionCache::checked`] which of them a registration
//! since the seal may have made stale. With the queue full, a full cache sheds the
//! copies its owner calls cold ([`PromotionCache::shed`]) and refuses the insert if
//! that frees nothing.

use crate::key::SequenceNumber;
use parking_lot::RwLock;
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Registrations the log keeps. A get whose sample is older than the oldest kept
/// registration cannot insert; at the engine's compaction rates a get lasts far less
/// than 256 registrations.
const LOG_CAPACITY: usize = 256;

/// Sealed batches that may wait for the flush thread (the paper's list of immutable
/// caches, bounded). With one, a full cache refused inserts while the flush thread
/// wrote memtables: 2,317 refusals in a 500,000-record read-write hotspot run, 653
/// with four (docs/experiments/hotrap.md).
pub(crate) const MAX_SEALED: usize = 4;

/// Bytes charged per entry besides its key and value.
pub(crate) const ENTRY_OVERHEAD: u64 = 48;

/// The largest value the cache takes (the authors' code: 16 KiB).
pub(crate) const MAX_VALUE: usize = 16 * 1024;

/// One cached copy.
#[derive(Debug)]
struct Entry {
    seq: SequenceNumber,
    value: Vec<u8>,
    /// Gets the cache answered since the insert.
    hits: AtomicU32,
}

/// A copy taken out by a registration.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Taken {
    pub key: Vec<u8>,
    pub seq: SequenceNumber,
    pub value: Vec<u8>,
    /// Gets the cache answered with it.
    pub hits: u32,
}

/// Why an insert was not made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A plan registered after the get's sample overlaps the key, or the log no longer
    /// reaches back to the sample.
    Epoch,
    /// The cache is full.
    Full,
}

/// One registered plan's user-key range, both ends inclusive.
#[derive(Debug)]
struct Registration {
    epoch: u64,
    lo: Vec<u8>,
    hi: Vec<u8>,
}

#[derive(Debug, Default)]
struct State {
    entries: BTreeMap<Vec<u8>, Entry>,
    bytes: u64,
    /// The last registrations, oldest first; epochs consecutive.
    log: VecDeque<Registration>,
    /// Set when a shed left the cache over three quarters full (shedding again would
    /// cost a scan per insert for nothing); cleared when a registration takes a copy.
    shed_is_futile: bool,
    /// Batches sealed and not yet taken, oldest first: the epoch at sealing, and the
    /// copies. At most [`MAX_SEALED`].
    sealed: VecDeque<(u64, Vec<Taken>)>,
}

/// What an insert did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inserted {
    /// The copy is in the cache.
    Added,
    /// The cache was full: it was sealed, and the copy is in the new one.
    Sealed,
}

/// One family's promotion cache. See the module docs.
#[derive(Debug)]
pub(crate) struct PromotionCache {
    /// The number of registrations so far. Written under `state`'s exclusive lock.
    epoch: AtomicU64,
    state: RwLock<State>,
    capacity: u64,
}

fn charge(key: &[u8], value: &[u8]) -> u64 {
    (key.len() + value.len()) as u64 + ENTRY_OVERHEAD
}

impl PromotionCache {
    /// An empty cache of at most `capacity` bytes.
    pub fn new(capacity: u64) -> PromotionCache {
        PromotionCache {
            epoch: AtomicU64::new(0),
            state: RwLock::new(State::default()),
            capacity,
        }
    }

    /// The epoch a get samples before loading its sequence number.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// The value of `key`'s copy if its sequence number is at most `seq`, counting a
    /// hit.
    pub fn get(&self, key: &[u8], seq: SequenceNumber) -> Option<(SequenceNumber, Vec<u8>)> {
        let st = self.state.read();
        let e = st.entries.get(key).filter(|e| e.seq <= seq)?;
        e.hits.fetch_add(1, Ordering::Relaxed);
        Some((e.seq, e.value.clone()))
    }

    /// Inserts a copy of `key`'s `Put` at `seq` found by a get that sampled epoch
    /// `sampled`. A copy already held at the same or a newer sequence number is kept.
    ///
    /// Requires: the get had no snapshot and its answer was that `Put`'s own value
    /// (no merge operand, no covering range tombstone), read from the slow tier.
    pub fn insert(
        &self,
        key: &[u8],
        seq: SequenceNumber,
        value: &[u8],
        sampled: u64,
    ) -> std::result::Result<Inserted, Refused> {
        self.insert_or_seal(key, seq, value, sampled, true)
    }

    fn insert_or_seal(
        &self,
        key: &[u8],
        seq: SequenceNumber,
        value: &[u8],
        sampled: u64,
        may_seal: bool,
    ) -> std::result::Result<Inserted, Refused> {
        let mut st = self.state.write();
        if !Self::unchanged_since(&st, self.epoch.load(Ordering::SeqCst), sampled, key) {
            return Err(Refused::Epoch);
        }
        if st.entries.get(key).is_some_and(|e| e.seq >= seq) {
            return Ok(Inserted::Added);
        }
        let size = charge(key, value);
        if size > self.capacity {
            return Err(Refused::Full);
        }
        let freed = st.entries.get(key).map_or(0, |e| charge(key, &e.value));
        let mut inserted = Inserted::Added;
        if st.bytes - freed + size > self.capacity {
            if !may_seal || st.sealed.len() >= MAX_SEALED || st.entries.is_empty() {
                return Err(Refused::Full);
            }
            let batch = std::mem::take(&mut st.entries)
                .into_iter()
                .map(|(key, e)| Taken {
                    key,
                    seq: e.seq,
                    hits: e.hits.into_inner(),
                    value: e.value,
                })
                .collect();
            let epoch = self.epoch.load(Ordering::SeqCst);
            st.sealed.push_back((epoch, batch));
            st.bytes = 0;
            st.shed_is_futile = false;
            inserted = Inserted::Sealed;
        }
        let freed = st.entries.get(key).map_or(0, |e| charge(key, &e.value));
        self.put(&mut st, key, seq, value, freed, size);
        Ok(inserted)
    }

    /// True iff no registration after epoch `sampled` (the current epoch being `now`)
    /// overlaps `key`, and the log reaches back far enough to say so.
    fn unchanged_since(st: &State, now: u64, sampled: u64, key: &[u8]) -> bool {
        if now <= sampled {
            return true;
        }
        // Registrations `sampled + 1 ..= now` must all be in the log.
        let reaches = st.log.front().is_some_and(|r| r.epoch <= sampled + 1);
        reaches
            && !st
                .log
                .iter()
                .any(|r| r.epoch > sampled && r.lo.as_slice() <= key && key <= r.hi.as_slice())
    }

    /// True iff a sealed batch waits.
    pub fn has_sealed(&self) -> bool {
        !self.state.read().sealed.is_empty()
    }

    /// The oldest sealed batch, if any: the epoch at sealing and its copies in key
    /// order.
    pub fn take_sealed(&self) -> Option<(u64, Vec<Taken>)> {
        self.state.write().sealed.pop_front()
    }

    /// Of `copies` from the batch sealed at epoch `sealed`, those no registration since
    /// the seal overlaps (none if the log no longer reaches back to the seal).
    pub fn checked<T>(&self, sealed: u64, copies: Vec<T>, key: impl Fn(&T) -> &[u8]) -> Vec<T> {
        let st = self.state.read();
        let now = self.epoch.load(Ordering::SeqCst);
        copies
            .into_iter()
            .filter(|c| Self::unchanged_since(&st, now, sealed, key(c)))
            .collect()
    }

    /// Puts copies of the batch sealed at epoch `sealed` back, as inserts sampled at
    /// the seal (never sealing again); returns how many went back.
    pub fn put_back(
        &self,
        sealed: u64,
        copies: impl IntoIterator<Item = (Vec<u8>, SequenceNumber, Vec<u8>)>,
    ) -> u64 {
        copies
            .into_iter()
            .filter(|(k, seq, v)| self.insert_or_seal(k, *seq, v, sealed, false).is_ok())
            .count() as u64
    }

    fn put(
        &self,
        st: &mut State,
        key: &[u8],
        seq: SequenceNumber,
        value: &[u8],
        freed: u64,
        size: u64,
    ) {
        st.bytes = st.bytes - freed + size;
        st.entries.insert(
            key.to_vec(),
            Entry {
                seq,
                value: value.to_vec(),
                hits: AtomicU32::new(0),
            },
        );
    }

    /// Drops every copy for which `keep(key, hits)` is false, unless the last shed
    /// was futile and no registration has taken a copy since; returns the copies
    /// dropped. Dropping copies is always safe (P1: the tree holds the originals).
    pub fn shed(&self, keep: impl Fn(&[u8], u32) -> bool) -> u64 {
        let mut st = self.state.write();
        if st.shed_is_futile {
            return 0;
        }
        let before = st.entries.len();
        let mut freed = 0;
        st.entries.retain(|k, e| {
            let kept = keep(k, e.hits.load(Ordering::Relaxed));
            if !kept {
                freed += charge(k, &e.value);
            }
            kept
        });
        st.bytes -= freed;
        st.shed_is_futile = st.bytes > self.capacity / 4 * 3;
        (before - st.entries.len()) as u64
    }

    /// Registers a plan that may move records of `[lo, hi]` (user keys, inclusive)
    /// out of the fast tier: bumps the epoch, logs the range and takes every copy in
    /// it, in key order, in one critical section.
    ///
    /// Requires: called before the plan's install (the `state` lock held, from
    /// `TreeHooks::registering`).
    pub fn register(&self, lo: &[u8], hi: &[u8]) -> Vec<Taken> {
        let mut st = self.state.write();
        let epoch = self.epoch.load(Ordering::SeqCst) + 1;
        self.epoch.store(epoch, Ordering::SeqCst);
        st.log.push_back(Registration {
            epoch,
            lo: lo.to_vec(),
            hi: hi.to_vec(),
        });
        if st.log.len() > LOG_CAPACITY {
            st.log.pop_front();
        }
        if lo > hi {
            return Vec::new();
        }
        let keys: Vec<Vec<u8>> = st
            .entries
            .range::<[u8], _>((Bound::Included(lo), Bound::Included(hi)))
            .map(|(k, _)| k.clone())
            .collect();
        if !keys.is_empty() {
            st.shed_is_futile = false;
        }
        let mut taken = Vec::with_capacity(keys.len());
        for key in keys {
            if let Some(e) = st.entries.remove(&key) {
                st.bytes -= charge(&key, &e.value);
                taken.push(Taken {
                    key,
                    seq: e.seq,
                    hits: e.hits.into_inner(),
                    value: e.value,
                });
            }
        }
        taken
    }

    /// True iff some copy lies in `[lo, hi]`.
    pub fn holds_any(&self, lo: &[u8], hi: &[u8]) -> bool {
        lo <= hi
            && self
                .state
                .read()
                .entries
                .range::<[u8], _>((Bound::Included(lo), Bound::Included(hi)))
                .next()
                .is_some()
    }

    /// Entries and their bytes.
    pub fn size(&self) -> (u64, u64) {
        let st = self.state.read();
        (st.entries.len() as u64, st.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_get_sees_copies_at_or_below_its_sequence_and_counts_hits() {
        let c = PromotionCache::new(1 << 20);
        c.insert(b"k", 7, b"v", c.epoch()).expect("insert");
        assert_eq!(c.get(b"k", 6), None);
        assert_eq!(c.get(b"k", 7), Some((7, b"v".to_vec())));
        assert_eq!(c.get(b"k", 9), Some((7, b"v".to_vec())));
        let taken = c.register(b"a", b"z");
        assert_eq!(taken.len(), 1);
        assert_eq!((taken[0].seq, taken[0].hits), (7, 2));
        assert_eq!(c.get(b"k", 9), None);
        assert_eq!(c.size(), (0, 0));
    }

    #[test]
    fn an_insert_sampled_before_an_overlapping_registration_is_refused() {
        let c = PromotionCache::new(1 << 20);
        let sampled = c.epoch();
        assert!(c.register(b"c", b"f").is_empty());
        assert_eq!(c.insert(b"d", 1, b"v", sampled), Err(Refused::Epoch));
        assert_eq!(c.insert(b"c", 1, b"v", sampled), Err(Refused::Epoch));
        assert_eq!(c.insert(b"f", 1, b"v", sampled), Err(Refused::Epoch));
        // Outside the range, or sampled after it: allowed.
        assert_eq!(c.insert(b"g", 1, b"v", sampled), Ok(Inserted::Added));
        assert_eq!(c.insert(b"d", 1, b"v", c.epoch()), Ok(Inserted::Added));
    }

    #[test]
    fn an_insert_older_than_the_log_is_refused() {
        let c = PromotionCache::new(1 << 20);
        let sampled = c.epoch();
        for _ in 0..LOG_CAPACITY {
            c.register(b"x", b"y");
        }
        assert_eq!(c.insert(b"a", 1, b"v", sampled), Ok(Inserted::Added));
        c.register(b"x", b"y");
        assert_eq!(c.insert(b"b", 1, b"v", sampled), Err(Refused::Epoch));
        assert_eq!(c.insert(b"b", 1, b"v", sampled + 1), Ok(Inserted::Added));
    }

    #[test]
    fn registration_takes_exactly_its_range_in_key_order() {
        let c = PromotionCache::new(1 << 20);
        for k in [&b"a"[..], b"b", b"c", b"d", b"e"] {
            c.insert(k, 1, k, c.epoch()).expect("insert");
        }
        assert!(c.holds_any(b"b", b"b"));
        assert!(!c.holds_any(b"bb", b"bz"));
        let keys: Vec<Vec<u8>> = c.register(b"b", b"d").into_iter().map(|t| t.key).collect();
        assert_eq!(keys, vec![b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]);
        assert_eq!(c.size().0, 2);
        assert!(c.register(b"z", b"a").is_empty());
        assert_eq!(c.size().0, 2);
    }

    #[test]
    fn a_newer_copy_replaces_an_older_one_and_the_capacity_holds() {
        let c = PromotionCache::new(2 * (ENTRY_OVERHEAD + 2));
        c.insert(b"k", 1, b"a", 0).expect("insert");
        c.insert(b"k", 3, b"b", 0).expect("newer");
        c.insert(b"k", 2, b"c", 0).expect("older is a no-op");
        assert_eq!(c.get(b"k", 9), Some((3, b"b".to_vec())));
        c.insert(b"j", 1, b"a", 0).expect("fits");
        assert_eq!(c.size(), (2, 2 * (ENTRY_OVERHEAD + 2)));
        // Full: sealed, and the copy goes into the new cache.
        assert_eq!(c.insert(b"l", 1, b"a", 0), Ok(Inserted::Sealed));
        assert_eq!(c.size(), (1, ENTRY_OVERHEAD + 2));
        assert!(c.has_sealed());
        // Full again: sealed again behind the first, until MAX_SEALED batches wait;
        // then refused.
        c.insert(b"m", 1, b"a", 0).expect("fits");
        let mut next = b'n';
        for _ in 1..MAX_SEALED {
            assert_eq!(c.insert(&[next], 1, b"a", 0), Ok(Inserted::Sealed));
            c.insert(&[next + 1], 1, b"a", 0).expect("fits");
            next += 2;
        }
        assert_eq!(c.insert(&[next], 1, b"a", 0), Err(Refused::Full));
        // Oldest first.
        let (epoch, batch) = c.take_sealed().expect("sealed");
        assert_eq!(epoch, 0);
        let keys: Vec<&[u8]> = batch.iter().map(|t| t.key.as_slice()).collect();
        assert_eq!(keys, vec![&b"j"[..], b"k"]);
        assert_eq!(c.get(b"k", 9), None, "a sealed copy is never read");
        let (_, batch) = c.take_sealed().expect("the second");
        let keys: Vec<&[u8]> = batch.iter().map(|t| t.key.as_slice()).collect();
        assert_eq!(keys, vec![&b"l"[..], b"m"]);
        for _ in 2..MAX_SEALED {
            c.take_sealed().expect("queued");
        }
        assert!(!c.has_sealed());
        assert_eq!(c.insert(&[next], 1, b"a", 0), Ok(Inserted::Sealed));
    }

    #[test]
    fn a_sealed_batch_loses_what_registrations_since_the_seal_overlap() {
        let c = PromotionCache::new(3 * (ENTRY_OVERHEAD + 2));
        for k in [&b"a"[..], b"c", b"e"] {
            c.insert(k, 1, b"v", 0).expect("insert");
        }
        assert_eq!(c.insert(b"x", 1, b"v", 0), Ok(Inserted::Sealed));
        let (sealed, batch) = c.take_sealed().expect("sealed");
        let batch: Vec<Vec<u8>> = batch.into_iter().map(|t| t.key).collect();
        assert!(c.register(b"b", b"c").is_empty());
        let kept = c.checked(sealed, batch.clone(), |k| k.as_slice());
        assert_eq!(kept, vec![b"a".to_vec(), b"e".to_vec()]);
        // Put back under the seal's epoch: "c" is refused again, and nothing seals.
        let back = c.put_back(sealed, batch.into_iter().map(|k| (k, 1, b"v".to_vec())));
        assert_eq!(back, 2, "a and e; x is there, c overlaps a registration");
        assert_eq!(c.size().0, 3);
        assert!(!c.has_sealed());
        // A log that no longer reaches the seal keeps nothing.
        for _ in 0..LOG_CAPACITY {
            c.register(b"y", b"z");
        }
        assert!(c
            .checked(sealed, vec![b"a".to_vec()], |k| k.as_slice())
            .is_empty());
    }

    #[test]
    fn a_shed_drops_what_its_owner_calls_cold_until_it_is_futile() {
        let c = PromotionCache::new(4 * (ENTRY_OVERHEAD + 2));
        for k in [&b"a"[..], b"b", b"c", b"d"] {
            c.insert(k, 1, b"v", 0).expect("insert");
        }
        assert_eq!(c.get(b"b", 5).map(|(s, _)| s), Some(1));
        // Keep what a get hit, and "c".
        assert_eq!(c.shed(|k, hits| hits > 0 || k == b"c"), 2);
        assert_eq!(c.size().0, 2);
        assert_eq!(c.get(b"a", 5), None);
        // Half full: the next shed may still help.
        c.insert(b"e", 1, b"v", 0).expect("insert");
        c.insert(b"f", 1, b"v", 0).expect("insert");
        assert_eq!(c.shed(|_, _| true), 0);
        // Full of kept copies: futile, so skipped until a registration takes one.
        assert_eq!(c.shed(|_, _| false), 0);
        assert_eq!(c.size().0, 4);
        assert_eq!(c.register(b"f", b"f").len(), 1);
        assert_eq!(c.shed(|_, _| false), 3);
        assert_eq!(c.size(), (0, 0));
    }
}
