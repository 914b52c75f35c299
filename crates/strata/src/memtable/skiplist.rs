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
//! There is one writer at a time (inserts take the `writer` mutex; the engine's group-commit
//! leader is the only caller anyway, so the lock is uncontended) and any number of readers
//! that take no lock at all.
//!
//! The naive design, building a node with ordinary writes and linking it with an ordinary
//! pointer store, fails on weakly ordered hardware and under the Rust memory model: a
//! reader that loads the new pointer may still observe the node's key bytes as they were
//! before the writer copied them in. The publication protocol is:
//!
//! 1. The writer allocates the node in fresh arena memory that no reader can reach, and
//!    writes the header, key, value, and every tower slot (each slot first pointing to its
//!    successor at that level) with plain writes.
//! 2. For each level `i` from 0 upward it then links the node with a **Release** store into
//!    `prev[i].next[i]`.
//! 3. Readers load every `next` pointer (the head's included) with **Acquire**.
//!
//! A reader reaches a node only through some `next` pointer whose value it loaded. That
//! value was written by a Release store in step 2 (or, for a pointer copied into a new
//! node's tower in step 1, was itself published earlier). An Acquire load that reads a
//! Release store synchronizes with it, so everything the writer did before that store,
//! including all of step 1, *happens before* everything the reader does after the load. The
//! node's contents are therefore fully visible and, by invariant 3, never change again.
//! Writes by *earlier* writers are covered transitively: successive inserts are ordered by
//! the writer mutex (unlock is Release, lock is Acquire), so a node published by an earlier
//! insert happens-before the current insert and therefore before anything it publishes.
//!
//! Because nodes are linked bottom-up, a reader may see a node at level 0 and not yet at
//! level 3; that only makes its search slower, never wrong, since every higher level is a
//! sublist of level 0 at all times (invariant 2). `max_height` is a Relaxed hint: a reader
//! that sees a new height before the head's new pointer at that level finds null there and
//! simply descends.
//!
//! # See also
//! `memtable/tests.rs` (model-checked random operations and the concurrent reader test).

use std::cmp::Ordering;
use std::mem::{align_of, size_of};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering as MemOrder};

use parking_lot::Mutex;

use super::arena::{Arena, ALIGN as NODE_ALIGN};

use crate::key::{compare_internal, TRAILER_LEN};

/// Tallest tower a node may have.
pub(crate) const MAX_HEIGHT: usize = 12;
/// A node of height `h` also gets level `h` with probability `1 / BRANCHING`
/// (a power of two, so the draw is a mask).
const BRANCHING: u64 = 4;
const _: () = assert!(BRANCHING.is_power_of_two());
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

/// State only the (single) writer touches.
struct Writer {
    arena: Arena,
    /// xorshift64 state for tower heights.
    rng: u64,
}

impl Writer {
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

static NEXT_LIST_ID: AtomicU64 = AtomicU64::new(1);

/// A sorted set of `(internal key, value)` entries with lock-free readers.
/// See the module docs for the design and the publication argument.
pub(crate) struct SkipList {
    /// Unique for the life of the process; ties [`Cursor`]s to their list.
    id: u64,
    /// Sentinel node of height `MAX_HEIGHT` with an empty key. Never compared.
    head: NonNull<NodeHeader>,
    /// Height of the tallest node inserted so far (a hint, see the module docs).
    /// Written only by the writer, under `writer`.
    max_height: AtomicUsize,
    /// Serializes inserts; owns the arena.
    writer: Mutex<Writer>,
}

// SAFETY: every field shared between threads is either immutable after construction (`id`,
// `head`), atomic (`max_height`, tower slots), behind the mutex (`writer`), or node memory
// that is immutable once published, with publication ordered as argued in the module docs.
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
    pub(crate) fn new() -> SkipList {
        let mut arena = Arena::new();
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
            writer: Mutex::new(Writer {
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
    /// Requires: no entry with the same internal key is present (debug-asserted).
    /// Concurrent inserts are serialized by an internal mutex; readers are never blocked.
    pub(crate) fn insert(&self, user_key: &[u8], trailer: u64, value: &[u8]) -> usize {
        let mut writer = self.writer.lock();
        let height = writer.random_height();
        let key_len = user_key.len() + TRAILER_LEN;
        let size = node_size(height, key_len, value.len());
        let node = writer.arena.alloc(size).cast::<NodeHeader>().as_ptr();
        // SAFETY: `node` is a fresh, aligned allocation of `size` bytes, which is exactly
        // header + `height` slots + key + value. It is unreachable by readers until the
        // Release stores below (step 1 of the publication protocol).
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

        let mut prev = [self.head.as_ptr().cast_const(); MAX_HEIGHT];
        let (_, found) = self.find(ikey, Some(&mut prev));
        debug_assert!(
            found.is_null()
                // SAFETY: `found` is a published node of this live list.
                || compare_internal(unsafe { node_key(found) }, ikey) != Ordering::Equal,
            "duplicate internal key inserted into a skiplist"
        );
        if height > self.max_height.load(MemOrder::Relaxed) {
            // `prev` already holds the head for the new levels.
            self.max_height.store(height, MemOrder::Relaxed);
        }
        for (level, &p) in prev.iter().enumerate().take(height) {
            // SAFETY: `p` is the head or a published node of height > `level` (it was found
            // at `level`), and `node` has `height > level` initialized slots. Only this
            // writer stores to these slots, so the Relaxed load reads the current successor.
            // The Release store publishes `node` (step 2 of the protocol).
            unsafe {
                let succ = link(p, level).load(MemOrder::Relaxed);
                link(node, level).store(succ, MemOrder::Relaxed);
                link(p, level).store(node, MemOrder::Release);
            }
        }
        size
    }

    /// Searches for `target`: returns `(last node < target or the head, first node >=
    /// target or null)`. If `prev` is given, `prev[l]` receives the last node `< target` at
    /// each level `l` below the current height.
    fn find(
        &self,
        target: &[u8],
        mut prev: Option<&mut [*const NodeHeader; MAX_HEIGHT]>,
    ) -> (*const NodeHeader, *const NodeHeader) {
        let mut x = self.head.as_ptr().cast_const();
        let mut level = self.max_height.load(MemOrder::Relaxed).max(1) - 1;
        loop {
            // SAFETY: `x` is the head or a node reached through Acquire loads (published,
            // hence fully visible), found at `level`, so its height exceeds `level`.
            let next = unsafe { link(x, level).load(MemOrder::Acquire) }.cast_const();
            // SAFETY: `next` is null or a published node of this live list.
            if !next.is_null() && compare_internal(unsafe { node_key(next) }, target).is_lt() {
                x = next;
            } else {
                if let Some(slot) = prev.as_deref_mut().and_then(|p| p.get_mut(level)) {
                    *slot = x;
                }
                if level == 0 {
                    return (x, next);
                }
                level -= 1;
            }
        }
    }

    /// Key and value of the first entry `>= target`, if any. Allocates nothing. The slices
    /// borrow the arena and stay valid for as long as `self` is borrowed.
    pub(crate) fn seek_entry(&self, target: &[u8]) -> Option<(&[u8], &[u8])> {
        let (_, node) = self.find(target, None);
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
        let (_, node) = self.find(target, None);
        self.cursor(node)
    }

    /// A cursor at the last entry `<= target`.
    pub(crate) fn seek_for_prev(&self, target: &[u8]) -> Cursor {
        let (before, at_or_after) = self.find(target, None);
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
            Some((key, _)) => self.cursor(self.find(key, None).0),
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
        let mut w = Writer {
            arena: Arena::new(),
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
