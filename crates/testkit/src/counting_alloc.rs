//! A global allocator that counts live heap bytes, for the bench and the
//! test that measure what the exporter keeps per target. A binary opts in
//! with `#[global_allocator] static A: CountingAlloc = CountingAlloc;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

/// Live heap bytes of the whole process (as requested: the system
/// allocator's own headers and rounding are not counted).
static LIVE: AtomicIsize = AtomicIsize::new(0);

/// Forwards to the system allocator and counts the sizes.
pub struct CountingAlloc;

// SAFETY: every call is forwarded to the system allocator unchanged; only
// the sizes are counted.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        System.realloc(ptr, layout, new_size)
    }
}

/// Live heap bytes now (meaningful only in a binary whose global
/// allocator is [`CountingAlloc`]).
pub fn live_bytes() -> isize {
    LIVE.load(Ordering::Relaxed)
}
