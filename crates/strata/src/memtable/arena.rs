//! The memtable's arena: a bump allocator over large blocks that never move.
//!
//! # Role
//! Skiplist inserters carve every node out of the current block; a request larger than a
//! quarter block gets a block of its own, so at most a quarter block is wasted per block.
//! Nothing is freed before the arena drops, which is what lets lock-free readers hold plain
//! pointers into node memory (see `skiplist`).
//!
//! # Where blocks come from
//! From the global allocator, except in an arena charged to a memory budget on Unix:
//! there each block is its own anonymous mapping (`mmap`), unmapped when the arena
//! drops. A budget promises that memory follows the memtables down as well as up, and
//! the allocator does not: glibc keeps freed 64 KiB blocks on its heap, where a later
//! memtable or a cache block may not reuse them. Measured: a 64 MiB budget's
//! fillrandom over 8 families peaked 5 MiB higher with heap blocks
//! (docs/performance.md). The price is a system call per 64 KiB block and its page
//! faults, on the write path of budgeted databases only.
//!
//! # Invariants
//! 1. Every returned pointer is aligned to [`ALIGN`] and valid for the requested size until
//!    the arena drops.
//! 2. Blocks are allocated (or mapped) once and freed (or unmapped) exactly once, in
//!    `Drop`, the way they were made.
//!
//! # Concurrency
//! `alloc` needs `&mut Arena`: the skiplist keeps the arena behind its allocator mutex,
//! held only for the bump, never while a node is copied or linked.

use crate::memory_budget::Budget;
use std::alloc::{self, Layout};
use std::ptr::NonNull;
use std::sync::Arc;

/// Alignment of every allocation (enough for `usize` and atomic pointers).
pub(super) const ALIGN: usize = 8;
/// Size of a regular block.
pub(super) const BLOCK_SIZE: usize = 64 * 1024;

/// Bump allocator over blocks that never move. Used under the skiplist's allocator lock.
///
/// Allocations are never freed individually; everything is released when the arena drops.
pub(super) struct Arena {
    /// Every allocation made, freed in `Drop`, and whether it is a mapping.
    blocks: Vec<(NonNull<u8>, Layout, bool)>,
    /// The block regular allocations are carved from, if any.
    current: Option<NonNull<u8>>,
    /// Offset of the first free byte in `current`.
    used: usize,
    /// The memory budget every block is charged to, if any (`memory_budget`).
    charge: Option<Arc<Budget>>,
    /// Bytes of every block, released from `charge` in `Drop`.
    charged: usize,
}

// SAFETY: the arena exclusively owns the blocks its pointers refer to; moving it to another
// thread moves that ownership. Shared access to the memory it hands out is the
// allocating code's business (see the `skiplist` module docs).
unsafe impl Send for Arena {}

impl Arena {
    /// An arena that owns no memory yet, charging every block to `charge`.
    pub(super) fn new(charge: Option<Arc<Budget>>) -> Arena {
        Arena {
            blocks: Vec::new(),
            current: None,
            used: 0,
            charge,
            charged: 0,
        }
    }

    #[expect(
        clippy::panic,
        reason = "a block holds one node at most ~MAX_KEY_LEN + MAX_VALUE_LEN bytes (limits.rs), \
                  far below isize::MAX; a layout error means that invariant broke"
    )]
    fn new_block(&mut self, size: usize) -> NonNull<u8> {
        let layout = match Layout::from_size_align(size, ALIGN) {
            Ok(l) => l,
            Err(_) => panic!("skiplist arena block too large: size={size}"),
        };
        // A refused mapping (too many mappings, say) falls back to the allocator.
        let mapped = if self.charge.is_some() {
            map(layout)
        } else {
            None
        };
        let block = match mapped {
            Some(block) => block,
            None => {
                // SAFETY: `layout` has non-zero size (`alloc` rejects zero and
                // `BLOCK_SIZE > 0`).
                let raw = unsafe { alloc::alloc(layout) };
                match NonNull::new(raw) {
                    Some(block) => block,
                    None => alloc::handle_alloc_error(layout),
                }
            }
        };
        self.blocks.push((block, layout, mapped.is_some()));
        if let Some(budget) = &self.charge {
            budget.grow(size);
            self.charged += size;
        }
        block
    }

    /// Returns `size` bytes (a multiple of `ALIGN`) aligned to `ALIGN`,
    /// uninitialized, valid until the arena drops.
    pub(super) fn alloc(&mut self, size: usize) -> NonNull<u8> {
        debug_assert!(size > 0 && size & (ALIGN - 1) == 0);
        if size > BLOCK_SIZE / 4 {
            return self.new_block(size);
        }
        let block = match self.current {
            Some(b) if BLOCK_SIZE - self.used >= size => b,
            _ => {
                let b = self.new_block(BLOCK_SIZE);
                self.current = Some(b);
                self.used = 0;
                b
            }
        };
        // SAFETY: `used + size <= BLOCK_SIZE`, so the result stays inside the block.
        let p = unsafe { block.add(self.used) };
        self.used += size;
        p
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for &(block, layout, mapped) in &self.blocks {
            if mapped {
                // SAFETY: mapped by `map` with this layout's size, unmapped once.
                unsafe { unmap(block, layout) };
            } else {
                // SAFETY: allocated by `new_block` with exactly this layout, freed once.
                unsafe { alloc::dealloc(block.as_ptr(), layout) };
            }
        }
        if let Some(budget) = &self.charge {
            budget.shrink(self.charged);
        }
    }
}

/// A new anonymous mapping of `layout.size()` bytes (zeroed, page-aligned, so aligned
/// to `ALIGN`), or `None` if the system refuses one.
#[cfg(unix)]
fn map(layout: Layout) -> Option<NonNull<u8>> {
    // SAFETY: an anonymous private mapping of a non-zero length at an address of the
    // kernel's choosing touches no existing memory.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            layout.size(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return None;
    }
    NonNull::new(raw.cast::<u8>())
}

/// Unmaps a block of [`map`].
///
/// # Safety
/// `block` was returned by `map(layout)` and is unmapped once, after its last use.
#[cfg(unix)]
unsafe fn unmap(block: NonNull<u8>, layout: Layout) {
    // SAFETY: the caller's contract; a failure (impossible for a whole mapping of
    // ours) would only leak the block.
    unsafe { libc::munmap(block.as_ptr().cast(), layout.size()) };
}

/// Without `mmap`, budgeted arenas allocate like the others.
#[cfg(not(unix))]
fn map(_layout: Layout) -> Option<NonNull<u8>> {
    None
}

/// # Safety
/// As the Unix `unmap`.
#[cfg(not(unix))]
unsafe fn unmap(block: NonNull<u8>, layout: Layout) {
    // SAFETY: the caller's contract.
    unsafe { alloc::dealloc(block.as_ptr(), layout) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_disjoint_and_large_ones_get_own_blocks() {
        let mut arena = Arena::new(None);
        let a = arena.alloc(ALIGN);
        let b = arena.alloc(3 * ALIGN);
        assert_eq!(a.as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.as_ptr() as usize - a.as_ptr() as usize, ALIGN);
        let big = arena.alloc(BLOCK_SIZE);
        assert_eq!(arena.blocks.len(), 2);
        let c = arena.alloc(ALIGN);
        assert_ne!(c, big);
        assert_eq!(c.as_ptr() as usize - b.as_ptr() as usize, 3 * ALIGN);
        // Filling the current block starts a new one.
        for _ in 0..BLOCK_SIZE / (BLOCK_SIZE / 4) {
            arena.alloc(BLOCK_SIZE / 4);
        }
        assert_eq!(arena.blocks.len(), 3);
    }

    #[test]
    fn a_charged_arena_maps_its_blocks_and_gives_the_charge_back() {
        let budget = crate::MemoryBudget::new(1 << 20).expect("budget");
        let mut arena = Arena::new(Some(budget.charge()));
        let a = arena.alloc(ALIGN);
        let big = arena.alloc(BLOCK_SIZE);
        assert_eq!(a.as_ptr() as usize % ALIGN, 0);
        // SAFETY: both are fresh allocations of at least these sizes.
        unsafe {
            a.as_ptr().write(7);
            big.as_ptr().add(BLOCK_SIZE - 1).write(9);
        }
        assert_eq!(budget.memtable_usage(), 2 * BLOCK_SIZE);
        drop(arena);
        assert_eq!(budget.memtable_usage(), 0);
    }
}
