//! The memtable's index: a LevelDB-style concurrent skiplist whose nodes live in an arena.
//!
//! This is the only module of the memtable that contains `unsafe`.
//!
//! # Role
//! [`super::MemTable`] inserts every write here and reads through [`SkipList::seek_entry`]
//! (point lookups) and [`Cursor`]s (iterators). Lifecycle: created empty, grows while it is
//! the active memtable, becomes read-only once switched out, and is freed as a whole when the
//! last `Arc<MemTable>` (including iterators) drops. Nodes are never removed.
//!
//! # Layout
//! Every node, the head included, is one contiguous run of arena bytes:
//! ```text
//! +------------------------------+-------------------------------+-------------+-----------+
//! | NodeHeader                   | tower: height x AtomicPtr     | internal key| value     |
//! | key_len, value_len, height   | next pointer per level        | key_len B   | value_len |
//! +------------------------------+-------------------------------+-------------+-----------+
//! ```
//! Nodes start at arena-aligned offsets (see `memtable/arena.rs`: blocks that are allocated
//! once and never move or shrink).
//!
//! # Invariants
//! 1. At every level, following `next` pointers from the head visits nodes in strictly
//!    increasing [`compare_internal`] order (callers never insert a duplicate key).
//! 2. The level-`i` list is a sublist of the level-`i-1` list.
//! 3. Once a node is reachable (published), its header, key and value never change; only its
//!    tower pointers do, and only through atomic stores.
//! 4. Arena blocks are freed only when the `SkipList` drops, so any node pointer obtained
//!    from a live `&SkipList` stays valid for as long as that borrow.
//!
//! # Concurrency: why a reader never sees a half-initialized node
//! Any number of inserters and readers run at once. Inserters hold the `alloc` mutex only
//! to draw a tower height and carve the node out of the arena; readers take no lock at
//! all.
//!
//! The naive design, building a node with ordinary writes and linking it with an ordinary
//! pointer store, fails on weakly ordered hardware and under the Rust memory model: a
//! reader that loads the new pointer may still observe the node's key bytes as they were
//! before the inserter copied them in. The publication protocol is:
//!
//! 1. The inserter allocates the node in fresh arena memory that no other thread can
//!    reach, and writes the header, key, value, and every tower slot with plain writes.
//! 2. For each level `i` from 0 upward it then links the node with a **Release**
//!    compare-and-swap on `prev[i].next[i]`, having first stored the expected successor
//!    in its own slot `i` (not yet reachable at that level, so nobody else reads it).
//! 3. Readers and inserters load every `next` pointer (the head's included) with
//!    **Acquire**.
//!
//! A thread reaches a node only through some `next` pointer whose value it loaded. That
//! value was written by a Release CAS in step 2, or, for a pointer an inserter copied into
//! its own tower, was itself published earlier and loaded with Acquire before the copy.
//! An Acquire load that reads a Release write synchronizes with it, so everything the
//! inserter did before its CAS, including all of step 1, *happens before* everything the
//! reader does after the load (transitively for copied pointers). The node's contents are
//! therefore fully visible and, by invariant 3, never change again.
//!
//! # Concurrent inserts
//! Problem: two inserters whose keys fall between the same pair of nodes would, with plain
//! stores, each link their node after the same predecessor and one node would vanish.
//! Each level is linked with a CAS that expects the successor the splice search saw: if a
//! racing insert linked a node there in between, the CAS fails, and the inserter searches
//! on *from the same predecessor* at that level (nodes are never removed, so the node that
//! won sorts after it) and retries. The splice is recomputed one level at a time, never
//! from the head. Levels above the `max_height` an inserter read start as (head, null);
//! the CAS catches a racer that got there first. Because keys are unique (invariant 1),
//! two inserters never compete for the same position, only for the same predecessor.
//!
//! Because nodes are linked bottom-up, a reader may see a node at level 0 and not yet at
//! level 3; that only makes its search slower, never wrong, since every higher level is a
//! sublist of level 0 at all times (invariant 2). `max_height` is a Relaxed hint raised
//! with `fetch_max`: a reader that sees a new height before the head's new pointer at that
//! level finds null there and simply descends.
//!
//! # Inserts in key order
//! Problem: a search from the head costs a comparison or two per level of the list, and
//! a load in key order (a sequential fill, a batch of ascending keys) pays it for every
//! key although each one goes right after the one before. The list remembers, per level,
//! the node linked there last (`last`, stored with Release once the node is linked at
//! that level, so it is published there). An insert first tries those nodes and their
//! current successors as its splice: at every level of its tower it checks that they
//! bracket its key (one comparison when the successor is null, as at the end of the
//! list), and searches from the head only if some level does not. The check is made per
//! level because another inserter may have stored any level meanwhile, from anywhere in
//! the list; a successor that changes after the check is caught by the linking CAS, as
//! with a searched splice. For keys in random order the check fails at level 0 after
//! one or two comparisons; after a failure the next 15 inserts do not try, so such a
//! load pays a tenth of a comparison per insert for it.
//!
//! Checked by: `memtable/tests.rs` (four inserters racing three readers on ascending keys,
//! all fighting for the tail), the loom tests below (every interleaving of three inserts
//! with tall towers, including CAS failures above level 0, and of inserts starting from
//! the node linked last racing one that cannot), the unit test of ascending runs from
//! anywhere, and Miri over the memtable tests (data races on the plain node bytes,
//! which loom does not see).
//!
//! # See also
//! `memtable/tests.rs` (model-checked random operations and the concurrent tests),
//! `loom_tests` at the end of this file.

use std::mem::{align_of, size_of};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU64, Ordering as MemOrder};

#[cfg(all(test, loom))]
use loom::sync::{
    atomic::{AtomicPtr, AtomicUsize},
    Mutex, MutexGuard,
};
#[cfg(not(all(test, loom)))]
use parking_lot::{Mutex, MutexGuard};
#[cfg(not(all(test, loom)))]
use std::sync::atomic::{AtomicPtr, AtomicUsize};

use super::arena::{Arena, ALIGN as NODE_ALIGN};
use crate::memory_budget::Budget;
use std::sync::Arc;

use crate::key::{compare_internal, TRAILER_LEN};

/// Tallest tower a node may have.
pub(crate) const MAX_HEIGHT: usize = 12;
/// A node of height `h` also gets level `h` with probability `1 / BRANCHING`
/// (a power of two, so the draw is a mask).
const BRANCHING: u64 = 4;
const _: () = assert!(BRANCHING.is_power_of_two());
/// Inserts that search from the head without trying `SkipList::last` after it failed
/// to bracket a key: keys in random order then pay for the try once in 16 inserts.
const LAST_MISS_SKIPS: usize = 15;
/// Seed of the level generator; fixed so that runs are reproducible.
const RNG_SEED: u64 = 0x2545_f491_4f6c_dd1d;

/// The fixed-size front of a node; the tower, key and value follow it in memory.
#[repr(C)]
struct NodeHeader {
    /// Length of the internal key (user key plus trailer).
    key_len: usize,
    /// Length of the value.
    value_len: usize,
    /// Number of tower slots, `1..=MAX_HEIGHT`.
    height: usize,
}

type Link = AtomicPtr<NodeHeader>;

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

const fn round_up(n: usize, align: usize) -> usize {
    (n + align - 1) & !(align - 1)
}

/// Node starts are arena-aligned, which suffices for the header and the tower.
const _: () = assert!(
    NODE_ALIGN >= max(align_of::<NodeHeader>(), align_of::<Link>()),
    "arena alignment too small for nodes"
);
/// Offset of tower slot 0 from the node start.
const TOWER_OFFSET: usize = round_up(size_of::<NodeHeader>(), align_of::<Link>());

/// Bytes a node occupies in the arena, rounded up to keep the next node aligned.
#[expect(
    clippy::panic,
    reason = "keys and values are bounded by limits.rs (MAX_KEY_LEN + MAX_VALUE_LEN), so \
              the sum cannot overflow usize; an overflow means that invariant broke"
)]
fn node_size(height: usize, key_len: usize, value_len: usize) -> usize {
    let payload = key_len
        .checked_add(value_len)
        .and_then(|p| p.checked_add(TOWER_OFFSET + height * size_of::<Link>()))
        .and_then(|p| p.checked_add(NODE_ALIGN - 1));
    match payload {
        Some(p) => p & !(NODE_ALIGN - 1),
        None => {
            panic!("skiplist node size overflows usize: key_len={key_len} value_len={value_len}")
        }
    }
}

/// Tower slot `level` of `node`.
///
/// # Safety
/// `node` points to a node of a live arena whose header is initialized and visible to this
/// thread, and `level < height`. The slot itself must be initialized before it is loaded.
#[inline]
unsafe fn link<'a>(node: *const NodeHeader, level: usize) -> &'a Link {
    debug_assert!(level < (*node).height);
    &*node
        .cast::<u8>()
        .add(TOWER_OFFSET)
        .cast::<Link>()
        .add(level)
}

/// Pointer to the first key byte of `node`.
///
/// # Safety
/// As for [`link`] (header initialized and visible).
#[inline]
unsafe fn key_ptr(node: *const NodeHeader) -> *const u8 {
    node.cast::<u8>()
        .add(TOWER_OFFSET + (*node).height * size_of::<Link>())
}

/// The internal key of `node`.
///
/// # Safety
/// `node` is a fully initialized node of a live arena, visible to this thread, and the
/// arena outlives `'a`.
#[inline]
unsafe fn node_key<'a>(node: *const NodeHeader) -> &'a [u8] {
    std::slice::from_raw_parts(key_ptr(node), (*node).key_len)
}

/// The value of `node`. Same safety contract as [`node_key`].
#[inline]
unsafe fn node_value<'a>(node: *const NodeHeader) -> &'a [u8] {
    std::slice::from_raw_parts(key_ptr(node).add((*node).key_len), (*node).value_len)
}

/// State every inserter needs exclusively, briefly: the node allocator and the height
/// generator.
struct Allocator {
    arena: Arena,
    /// xorshift64 state for tower heights.
    rng: u64,
}

impl Allocator {
    fn random_height(&mut self) -> usize {
        let mut height = 1;
        loop {
            let mut x = self.rng;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.rng = x;
            if height < MAX_HEIGHT && (x >> 32) & (BRANCHING - 1) == 0 {
                height += 1;
            } else {
                return height;
            }
        }
    }
}

/// Takes `m` (the allocator lock); under loom, its model-checked mutex.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(all(test, loom))]
    return m.lock().unwrap_or_else(|p| p.into_inner());
    #[cfg(not(all(test, loom)))]
    m.lock()
}

static NEXT_LIST_ID: AtomicU64 = AtomicU64::new(1);

/// A sorted set of `(internal key, value)` entries with lock-free readers.
/// See the module docs for the design and the publication argument.
pub(crate) struct SkipList {
    /// Unique for the life of the process; ties [`Cursor`]s to their list.
    id: u64,
    /// Sentinel node of height `MAX_HEIGHT` with an empty key. Never compared.
    head: NonNull<NodeHeader>,
    /// Height of the tallest node inserted so far (a hint, see the module docs).
    /// Raised with `fetch_max` by inserters.
    max_height: AtomicUsize,
    /// At each level, the head or the node linked there last: where the next insert
    /// may start its search (see "Inserts in key order" in the module docs).
    last: [Link; MAX_HEIGHT],
    /// Inserts left that skip `last` because it missed recently (keys in random order).
    skip_last: AtomicUsize,
    /// Node memory and tower heights; held only while a node is allocated.
    alloc: Mutex<Allocator>,
}

// SAFETY: every field shared between threads is either immutable after construction (`id`,
// `head`), atomic (`max_height`, `last`, `skip_last`, tower slots), behind the mutex
// (`alloc`), or node memory that is immutable once published, with publication ordered
// as argued in the module docs.
unsafe impl Send for SkipList {}
// SAFETY: as for `Send`; `&SkipList` only allows inserts under the mutex and atomic reads.
unsafe impl Sync for SkipList {}

/// A position in one [`SkipList`]: a node, or "not positioned". Meaningful only to the list
/// that produced it (checked on every use).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor {
    list: u64,
    node: *const NodeHeader,
}

// SAFETY: a cursor is an address plus a list id; it is dereferenced only by methods of the
// list with that id, which hold `&SkipList` and so keep the node alive (invariant 4).
unsafe impl Send for Cursor {}
// SAFETY: as for `Send`; a cursor has no interior mutability.
unsafe impl Sync for Cursor {}

impl Cursor {
    /// True iff the cursor is at an entry.
    pub(crate) fn is_valid(&self) -> bool {
        !self.node.is_null()
    }
}

impl SkipList {
    /// An empty list.
    #[cfg(test)]
    pub(crate) fn new() -> SkipList {
        SkipList::charged(None)
    }

    /// An empty list whose arena charges its memory to `charge` (`memory_budget`).
    pub(crate) fn charged(charge: Option<Arc<Budget>>) -> SkipList {
        let mut arena = Arena::new(charge);
        let size = node_size(MAX_HEIGHT, 0, 0);
        let head = arena.alloc(size).cast::<NodeHeader>();
        // SAFETY: `head` is a fresh, aligned allocation of `size` bytes, large enough for a
        // header and `MAX_HEIGHT` tower slots; nobody else can see it yet.
        unsafe {
            ptr::write(
                head.as_ptr(),
                NodeHeader {
                    key_len: 0,
                    value_len: 0,
                    height: MAX_HEIGHT,
                },
            );
            let tower = head.as_ptr().cast::<u8>().add(TOWER_OFFSET).cast::<Link>();
            for level in 0..MAX_HEIGHT {
                ptr::write(tower.add(level), Link::new(ptr::null_mut()));
            }
        }
        SkipList {
            id: NEXT_LIST_ID.fetch_add(1, MemOrder::Relaxed),
            head,
            max_height: AtomicUsize::new(1),
            last: std::array::from_fn(|_| Link::new(head.as_ptr())),
            skip_last: AtomicUsize::new(0),
            alloc: Mutex::new(Allocator {
                arena,
                rng: RNG_SEED,
            }),
        }
    }

    /// Arena bytes of the head node (fixed overhead of an empty list).
    pub(crate) fn head_size() -> usize {
        node_size(MAX_HEIGHT, 0, 0)
    }

    /// Inserts the entry whose internal key is `user_key` followed by `trailer` (little
    /// endian), and returns the arena bytes the node occupies.
    ///
    /// Requires: no entry with the same internal key is present or being inserted
    /// concurrently (debug-asserted). Any number of threads may insert at once (see
    /// "Concurrent inserts" in the module docs); readers are never blocked.
    pub(crate) fn insert(&self, user_key: &[u8], trailer: u64, value: &[u8]) -> usize {
        let key_len = user_key.len() + TRAILER_LEN;
        // The allocator lock covers only the height draw and the bump allocation; the
        // copy and the linking run in parallel with other inserters.
        let (node, height, size) = {
            let mut alloc = lock(&self.alloc);
            let height = alloc.random_height();
            let size = node_size(height, key_len, value.len());
            (
                alloc.arena.alloc(size).cast::<NodeHeader>().as_ptr(),
                height,
                size,
            )
        };
        // SAFETY: `node` is a fresh, aligned allocation of `size` bytes, which is exactly
        // header + `height` slots + key + value, owned by this call alone. It is
        // unreachable by readers and other inserters until the Release CAS below (step 1
        // of the publication protocol).
        unsafe {
            ptr::write(
                node,
                NodeHeader {
                    key_len,
                    value_len: value.len(),
                    height,
                },
            );
            let tower = node.cast::<u8>().add(TOWER_OFFSET).cast::<Link>();
            for level in 0..height {
                ptr::write(tower.add(level), Link::new(ptr::null_mut()));
            }
            let k = key_ptr(node).cast_mut();
            ptr::copy_nonoverlapping(user_key.as_ptr(), k, user_key.len());
            let t = trailer.to_le_bytes();
            ptr::copy_nonoverlapping(t.as_ptr(), k.add(user_key.len()), TRAILER_LEN);
            ptr::copy_nonoverlapping(value.as_ptr(), k.add(key_len), value.len());
        }
        // SAFETY: the node was fully initialized just above by this thread.
        let ikey = unsafe { node_key(node) };

        // Levels at or above the height read here keep the head and null, which is
        // the right splice unless a racing insert links there first; the CAS below then
        // fails and the splice is recomputed.
        self.max_height.fetch_max(height, MemOrder::Relaxed);
        let head = self.head.as_ptr().cast_const();
        let mut prev = [head; MAX_HEIGHT];
        let mut next = [ptr::null::<NodeHeader>(); MAX_HEIGHT];
        if !self.splice_after_last(ikey, height, &mut prev, &mut next) {
            self.find_splice(ikey, &mut prev, &mut next);
        }
        debug_assert!(
            next[0].is_null()
                // SAFETY: `next[0]` is a published node of this live list.
                || compare_internal(unsafe { node_key(next[0]) }, ikey).is_ne(),
            "duplicate internal key inserted into a skiplist"
        );
        let levels = prev.iter_mut().zip(next.iter_mut()).zip(&self.last);
        for (level, ((prev, next), last)) in levels.enumerate() {
            if level == height {
                break;
            }
            loop {
                // SAFETY: `node` has `height > level` initialized slots. At `level` it
                // is not linked yet, so no other thread reads or writes this slot.
                unsafe { link(node, level).store(next.cast_mut(), MemOrder::Relaxed) };
                // SAFETY: `*prev` is the head or a published node of height >
                // `level` (it was found at `level`). The Release CAS publishes `node` at
                // this level (step 2 of the protocol); it fails iff another inserter
                // linked a node after `*prev` since the splice was computed.
                let linked = unsafe {
                    link(*prev, level).compare_exchange(
                        next.cast_mut(),
                        node,
                        MemOrder::Release,
                        MemOrder::Relaxed,
                    )
                };
                if linked.is_ok() {
                    // Linked at this level: a start for the next insert here.
                    last.store(node, MemOrder::Release);
                    break;
                }
                // Nodes are never removed, so the node that won the race sorts after
                // `*prev`: searching on from there finds the new splice.
                (*prev, *next) = self.splice_at(ikey, *prev, level);
            }
        }
        size
    }

    /// Fills `prev[l]` / `next[l]` for every level `l` below `height` from the node
    /// linked last at `l` and its successor, if at each of those levels they bracket
    /// `target` (`prev < target < next`, the head and null standing for the ends); returns
    /// false, with the arrays partly written, otherwise.
    fn splice_after_last(
        &self,
        target: &[u8],
        height: usize,
        prev: &mut [*const NodeHeader; MAX_HEIGHT],
        next: &mut [*const NodeHeader; MAX_HEIGHT],
    ) -> bool {
        // A heuristic, so Relaxed and racy: concurrent inserters may skip a few more or
        // fewer times than `LAST_MISS_SKIPS`.
        let skips = self.skip_last.load(MemOrder::Relaxed);
        if skips > 0 {
            self.skip_last.store(skips - 1, MemOrder::Relaxed);
            return false;
        }
        let head = self.head.as_ptr().cast_const();
        let levels = prev.iter_mut().zip(next.iter_mut()).zip(&self.last);
        for (level, ((prev, next), last)) in levels.enumerate() {
            if level == height {
                break;
            }
            let p = last.load(MemOrder::Acquire).cast_const();
            // SAFETY: `last[level]` holds the head or a node stored there (Release) after
            // it was linked at `level`: published, fully visible through this Acquire
            // load, height > `level`.
            let after_p = p == head || compare_internal(unsafe { node_key(p) }, target).is_lt();
            // SAFETY: as above.
            let n = unsafe { link(p, level).load(MemOrder::Acquire) }.cast_const();
            // SAFETY: `n` is null or a published node of this live list.
            if !after_p
                || (!n.is_null() && compare_internal(unsafe { node_key(n) }, target).is_le())
            {
                self.skip_last.store(LAST_MISS_SKIPS, MemOrder::Relaxed);
                return false;
            }
            (*prev, *next) = (p, n);
        }
        true
    }

    /// Fills `prev[l]` / `next[l]` with the last node `< target` (or the head) and its
    /// successor at each level `l` below the current height.
    fn find_splice(
        &self,
        target: &[u8],
        prev: &mut [*const NodeHeader; MAX_HEIGHT],
        next: &mut [*const NodeHeader; MAX_HEIGHT],
    ) {
        let mut x = self.head.as_ptr().cast_const();
        let height = self.max_height.load(MemOrder::Relaxed).max(1);
        for (level, (prev, next)) in prev
            .iter_mut()
            .zip(next.iter_mut())
            .enumerate()
            .take(height)
            .rev()
        {
            (x, *next) = self.splice_at(target, x, level);
            *prev = x;
        }
    }

    /// Walks level `level` from `start` to the last node `< target`; returns it and its
    /// successor (null at the end).
    ///
    /// Requires: `start` is the head or a published node of height > `level` whose key
    /// is `< target`.
    fn splice_at(
        &self,
        target: &[u8],
        start: *const NodeHeader,
        level: usize,
    ) -> (*const NodeHeader, *const NodeHeader) {
        let mut x = start;
        loop {
            // SAFETY: `x` is `start` or was reached at `level` through Acquire loads
            // (published, fully visible, height > `level`).
            let next = unsafe { link(x, level).load(MemOrder::Acquire) }.cast_const();
            // SAFETY: `next` is null or a published node of this live list.
            if next.is_null() {
                return (x, next);
            }
            // SAFETY: as above.
            if compare_internal(unsafe { node_key(next) }, target).is_lt() {
                x = next;
            } else {
                return (x, next);
            }
        }
    }

    /// Searches for `target`: returns `(last node < target or the head, first node >=
    /// target or null)`.
    fn find(&self, target: &[u8]) -> (*const NodeHeader, *const NodeHeader) {
        let mut x = self.head.as_ptr().cast_const();
        let mut next = ptr::null();
        for level in (0..self.max_height.load(MemOrder::Relaxed).max(1)).rev() {
            (x, next) = self.splice_at(target, x, level);
        }
        (x, next)
    }

    /// Key and value of the first entry `>= target`, if any. Allocates nothing. The slices
    /// borrow the arena and stay valid for as long as `self` is borrowed.
    pub(crate) fn seek_entry(&self, target: &[u8]) -> Option<(&[u8], &[u8])> {
        let (_, node) = self.find(target);
        // SAFETY: `node` is null or a published node of this list, alive while `self` is.
        (!node.is_null()).then(|| unsafe { (node_key(node), node_value(node)) })
    }

    fn cursor(&self, node: *const NodeHeader) -> Cursor {
        let node = if node == self.head.as_ptr().cast_const() {
            ptr::null()
        } else {
            node
        };
        Cursor {
            list: self.id,
            node,
        }
    }

    /// A cursor at no entry.
    pub(crate) fn unpositioned(&self) -> Cursor {
        self.cursor(ptr::null())
    }

    /// A cursor at the first entry (unpositioned if empty).
    pub(crate) fn first(&self) -> Cursor {
        // SAFETY: the head is initialized and lives as long as `self`.
        let node = unsafe { link(self.head.as_ptr(), 0).load(MemOrder::Acquire) };
        self.cursor(node)
    }

    /// A cursor at the last entry (unpositioned if empty).
    pub(crate) fn last(&self) -> Cursor {
        let mut x = self.head.as_ptr().cast_const();
        let mut level = self.max_height.load(MemOrder::Relaxed).max(1) - 1;
        loop {
            // SAFETY: as in `find`.
            let next = unsafe { link(x, level).load(MemOrder::Acquire) };
            if !next.is_null() {
                x = next;
            } else if level == 0 {
                return self.cursor(x);
            } else {
                level -= 1;
            }
        }
    }

    /// A cursor at the first entry `>= target`.
    pub(crate) fn seek(&self, target: &[u8]) -> Cursor {
        let (_, node) = self.find(target);
        self.cursor(node)
    }

    /// A cursor at the last entry `<= target`.
    pub(crate) fn seek_for_prev(&self, target: &[u8]) -> Cursor {
        let (before, at_or_after) = self.find(target);
        // SAFETY: `at_or_after` is null or a published node of this live list.
        if !at_or_after.is_null() && unsafe { node_key(at_or_after) } == target {
            self.cursor(at_or_after)
        } else {
            self.cursor(before)
        }
    }

    fn check(&self, c: &Cursor) {
        assert_eq!(
            c.list, self.id,
            "skiplist cursor used with another skiplist"
        );
    }

    /// The entry after `c`, or unpositioned. Requires: `c` is valid (else stays invalid).
    pub(crate) fn next(&self, c: Cursor) -> Cursor {
        self.check(&c);
        debug_assert!(c.is_valid(), "next() on an unpositioned cursor");
        if !c.is_valid() {
            return c;
        }
        // SAFETY: `check` proved `c` belongs to this list, which is alive; `c.node` is a
        // published node (cursors never hold the head).
        let node = unsafe { link(c.node, 0).load(MemOrder::Acquire) };
        self.cursor(node)
    }

    /// The entry before `c`, or unpositioned; O(log n) search as in LevelDB.
    /// Requires: `c` is valid (else stays invalid).
    pub(crate) fn prev(&self, c: Cursor) -> Cursor {
        match self.entry(&c) {
            Some((key, _)) => self.cursor(self.find(key).0),
            None => {
                debug_assert!(false, "prev() on an unpositioned cursor");
                c
            }
        }
    }

    /// Key and value at `c`, borrowing the arena for as long as `self`; `None` if `c` is
    /// unpositioned.
    pub(crate) fn entry(&self, c: &Cursor) -> Option<(&[u8], &[u8])> {
        self.check(c);
        // SAFETY: `check` proved `c` belongs to this live list; a valid cursor holds a
        // published node.
        c.is_valid()
            .then(|| unsafe { (node_key(c.node), node_value(c.node)) })
    }
}

/// The user keys linked at `level`, head to tail.
#[cfg(test)]
fn keys_at(list: &SkipList, level: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    // SAFETY: the head and every node reached from it are published nodes of `list`,
    // which is alive; a node reached at `level` has a slot there.
    let mut x = unsafe { link(list.head.as_ptr(), level).load(MemOrder::Acquire) };
    while !x.is_null() {
        // SAFETY: as above.
        unsafe {
            let k = node_key(x);
            out.push(k[..k.len() - TRAILER_LEN].to_vec());
            x = link(x, level).load(MemOrder::Acquire);
        }
    }
    out
}

/// Checks invariants 1 and 2 at every level above 0: keys in order, and each level a
/// sublist of the one below.
#[cfg(test)]
fn assert_upper_levels_in_order(list: &SkipList) {
    for level in 1..MAX_HEIGHT {
        let keys = keys_at(list, level);
        assert!(
            keys.windows(2).all(|w| w[0] < w[1]),
            "level {level}: {keys:?}"
        );
        let below = keys_at(list, level - 1);
        let mut rest = below.iter();
        assert!(
            keys.iter().all(|k| rest.any(|b| b == k)),
            "level {level} is not a sublist of level {}",
            level - 1
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{make_internal_key, pack_trailer, ValueKind};

    fn put(list: &SkipList, k: &[u8], seq: u64, v: &[u8]) {
        list.insert(k, pack_trailer(seq, ValueKind::Put), v);
    }

    #[test]
    fn layout_constants_are_consistent() {
        assert_eq!(TOWER_OFFSET % align_of::<Link>(), 0);
        assert_eq!(node_size(1, 8, 0) % NODE_ALIGN, 0);
        assert!(node_size(MAX_HEIGHT, 0, 0) >= TOWER_OFFSET + MAX_HEIGHT * size_of::<Link>());
    }

    #[test]
    fn heights_follow_branching_factor() {
        let mut w = Allocator {
            arena: Arena::new(None),
            rng: RNG_SEED,
        };
        let n = if cfg!(miri) { 4_000 } else { 100_000 };
        let mut at_least_2 = 0;
        for _ in 0..n {
            let h = w.random_height();
            assert!((1..=MAX_HEIGHT).contains(&h));
            if h >= 2 {
                at_least_2 += 1;
            }
        }
        // Expect n / 4 nodes of height >= 2.
        assert!((n / 5..n * 3 / 10).contains(&at_least_2), "{at_least_2}");
    }

    #[test]
    fn empty_keys_and_large_values_share_the_arena() {
        let list = SkipList::new();
        let big = vec![7u8; super::super::arena::BLOCK_SIZE * 2];
        put(&list, b"", 1, b"");
        put(&list, b"big", 2, &big);
        put(&list, b"small", 3, b"v");
        let c = list.first();
        assert_eq!(list.entry(&c).map(|e| e.1), Some(&b""[..]));
        let c = list.next(c);
        assert_eq!(list.entry(&c).map(|e| e.1.len()), Some(big.len()));
        let c = list.next(c);
        assert_eq!(
            list.entry(&c).map(|e| e.0.to_vec()),
            Some(make_internal_key(b"small", 3, ValueKind::Put))
        );
        assert!(!list.next(c).is_valid());
    }

    /// Ascending runs that start anywhere: some continue where the last insert ended
    /// (the `last` splice brackets them), some start before it or inside an earlier run
    /// (it does not, at some level), and random-order stretches make inserts skip it.
    /// Every level must stay in key order and be a sublist of the one below, and every
    /// key must be found by a search from the head.
    #[test]
    fn ascending_runs_from_anywhere_keep_every_level_in_order() {
        let list = SkipList::new();
        let mut inserted = std::collections::BTreeSet::new();
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut draw = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let runs = if cfg!(miri) { 20 } else { 400 };
        for _ in 0..runs {
            let (start, len, random) = (draw() % 20_000, 1 + draw() % 60, draw() % 4 == 0);
            for i in 0..len {
                let k = if random { draw() % 20_000 } else { start + i };
                if inserted.insert(k) {
                    put(&list, format!("{k:06}").as_bytes(), 1, b"v");
                }
            }
        }
        let all: Vec<Vec<u8>> = inserted
            .iter()
            .map(|k| format!("{k:06}").into_bytes())
            .collect();
        assert_eq!(keys_at(&list, 0), all);
        assert_upper_levels_in_order(&list);
        for k in &all {
            let ikey = make_internal_key(k, 1, ValueKind::Put);
            assert_eq!(list.seek_entry(&ikey).map(|e| e.0.to_vec()), Some(ikey));
        }
    }

    #[test]
    #[should_panic(expected = "another skiplist")]
    fn cursor_from_another_list_is_rejected() {
        let a = SkipList::new();
        let b = SkipList::new();
        put(&a, b"k", 1, b"v");
        let c = a.first();
        let _ = b.entry(&c);
    }
}

/// Model-checked concurrent inserts: run with
/// `RUSTFLAGS="--cfg loom" cargo test -p strata --lib --release loom`.
/// loom explores the interleavings (and the weak-memory outcomes it models) of three
/// threads inserting at once, including the CAS-failure path at upper levels; Miri
/// (`cargo +nightly miri test -p strata --lib memtable`) checks the non-atomic node
/// bytes for data races, which loom does not track.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::key::{pack_trailer, ValueKind};
    use loom::sync::Arc;

    /// A generator seed whose first `n` towers are all at least two levels tall, so the
    /// racing inserts also race above level 0.
    fn tall_seed(n: usize) -> u64 {
        (1..u64::MAX)
            .find(|&seed| {
                let mut a = Allocator {
                    arena: Arena::new(None),
                    rng: seed,
                };
                (0..n).all(|_| a.random_height() >= 2)
            })
            .expect("some seed draws tall towers")
    }

    /// Inserts `before` in order, then races two threads inserting `racers` against
    /// this one inserting `own`, with towers drawn from `seed`; every interleaving must
    /// link every key at level 0 and level 1 (every tower is at least two tall) and
    /// keep every level in order.
    fn race(
        seed: u64,
        before: &'static [(&'static [u8], u64)],
        racers: [(&'static [u8], u64); 2],
        own: (&'static [u8], u64),
        expected: &'static [&'static [u8]],
    ) {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(move || {
            let list = Arc::new(SkipList::new());
            lock(&list.alloc).rng = seed;
            for &(key, seq) in before {
                list.insert(key, pack_trailer(seq, ValueKind::Put), b"v");
            }
            let threads = racers.map(|(key, seq)| {
                let list = Arc::clone(&list);
                loom::thread::spawn(move || {
                    list.insert(key, pack_trailer(seq, ValueKind::Put), b"v");
                })
            });
            list.insert(own.0, pack_trailer(own.1, ValueKind::Put), b"v");
            for t in threads {
                t.join().expect("inserter");
            }
            assert_eq!(keys_at(&list, 0), expected);
            assert_upper_levels_in_order(&list);
            assert_eq!(
                keys_at(&list, 1).len(),
                expected.len(),
                "every tower is linked at level 1"
            );
        });
    }

    #[test]
    fn loom_three_concurrent_inserts_link_every_node_in_order() {
        race(
            tall_seed(3),
            &[],
            [(b"b", 2), (b"c", 3)],
            (b"a", 1),
            &[b"a", b"b", b"c"],
        );
    }

    /// Inserts that may start from the node linked last (`SkipList::last`) racing one
    /// that cannot: "a" and "c" are in place, then "d" and "e" (after the last node:
    /// each tries it unless "b"'s miss made inserts skip it first, and whichever links
    /// second may find it stale) race "b" (before it).
    #[test]
    fn loom_inserts_after_the_last_node_race_one_before_it() {
        race(
            tall_seed(5),
            &[(b"a", 1), (b"c", 2)],
            [(b"d", 3), (b"e", 4)],
            (b"b", 5),
            &[b"a", b"b", b"c", b"d", b"e"],
        );
    }
}
