//! The component's heap: talc, with lists of freed small blocks in front.
//!
//! A provider call allocates and frees dozens of small blocks (keys, strings,
//! map nodes, the value buffers), and through wasm every trip into talc costs
//! several guarded calls. Here a block of up to 1 KiB is rounded up to a power
//! of two, and once freed it waits on its size's list for the next request of
//! that size: an allocation is then a pop and a free a push. In-process,
//! through the host, this made every small-map call 10-15% faster
//! (BENCHMARKS.md, tenth session). Written here because the crates that do
//! this for wasm are either unmaintained or not under a permissive licence;
//! talc does everything else.
//!
//! The cost: memory on a list serves only its own size and is not returned to
//! talc. A component's memory never shrinks anyway, so that memory is lost
//! only to requests of other sizes.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;

/// Blocks of 8, 16, ..., 1024 bytes.
const MIN_SHIFT: u32 = 3;
const MAX_SHIFT: u32 = 10;
const CLASSES: usize = (MAX_SHIFT - MIN_SHIFT + 1) as usize;
/// Every listed block is aligned to this; requests aligned more go to the inner allocator.
const ALIGN: usize = 8;

/// `inner` with per-size free lists for small blocks. Not thread-safe: it is
/// `Sync` only where a component has a single thread.
pub struct Heap<A> {
    inner: A,
    free: UnsafeCell<[*mut u8; CLASSES]>,
}

// SAFETY: a component built without the atomics feature runs one thread, so
// the lists are never touched concurrently.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
unsafe impl<A: Sync> Sync for Heap<A> {}

impl<A> Heap<A> {
    pub const fn new(inner: A) -> Self {
        Heap { inner, free: UnsafeCell::new([std::ptr::null_mut(); CLASSES]) }
    }
}

/// The list a request is served from, if any.
fn class(l: Layout) -> Option<usize> {
    if l.align() > ALIGN || l.size() > 1 << MAX_SHIFT {
        return None;
    }
    // The exponent of the smallest power of two holding the size.
    let bits = usize::BITS - (l.size().max(1) - 1).leading_zeros();
    Some(bits.saturating_sub(MIN_SHIFT) as usize)
}

/// The layout of class `c`'s blocks.
fn block(c: usize) -> Layout {
    Layout::from_size_align(1 << (c as u32 + MIN_SHIFT), ALIGN).expect("a small power of two")
}

unsafe impl<A: GlobalAlloc> GlobalAlloc for Heap<A> {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let Some(c) = class(l) else {
            // SAFETY: the caller's contract.
            return unsafe { self.inner.alloc(l) };
        };
        // SAFETY: one thread (see `Sync`), and no reference to the lists outlives this call.
        let free = unsafe { &mut *self.free.get() };
        let head = free[c];
        if head.is_null() {
            // SAFETY: `block` has a non-zero size.
            return unsafe { self.inner.alloc(block(c)) };
        }
        // SAFETY: a listed block is free, at least 8 bytes and aligned to 8,
        // and its first word holds the next one.
        free[c] = unsafe { (head as *mut *mut u8).read() };
        head
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        let Some(c) = class(l) else {
            // SAFETY: `p` came from `inner` with this layout.
            return unsafe { self.inner.dealloc(p, l) };
        };
        // SAFETY: one thread; `p` is a block of class `c`, now free, so its
        // first word (it has at least 8 bytes, aligned to 8) can hold the link.
        unsafe {
            let free = &mut *self.free.get();
            (p as *mut *mut u8).write(free[c]);
            free[c] = p;
        }
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller promises `new_size`, rounded up to `l.align()`, does not overflow.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, l.align()) };
        match (class(l), class(new)) {
            // The block already has room.
            (Some(a), Some(b)) if a == b => p,
            // SAFETY: `p` came from `inner` with layout `l`.
            (None, None) => unsafe { self.inner.realloc(p, l, new_size) },
            _ => {
                // SAFETY: `new` has a non-zero size (the caller's contract).
                let q = unsafe { self.alloc(new) };
                if !q.is_null() {
                    // SAFETY: both blocks hold the smaller size and are distinct.
                    unsafe {
                        std::ptr::copy_nonoverlapping(p, q, l.size().min(new_size));
                        self.dealloc(p, l);
                    }
                }
                q
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::alloc::System;

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn sizes_map_to_the_smallest_block_that_holds_them() {
        let c = |size, align| class(Layout::from_size_align(size, align).unwrap());
        assert_eq!(
            [c(1, 1), c(8, 8), c(9, 1), c(16, 4), c(17, 1), c(1024, 8)],
            [Some(0), Some(0), Some(1), Some(1), Some(2), Some(7)]
        );
        assert_eq!(c(1025, 1), None, "large blocks go to the inner allocator");
        assert_eq!(c(8, 16), None, "so do over-aligned ones");
        assert_eq!(block(7).size(), 1024);
    }

    #[test]
    fn a_freed_block_serves_the_next_request_of_its_size() {
        let heap = Heap::new(System);
        let l = Layout::from_size_align(24, 8).unwrap();
        unsafe {
            let a = heap.alloc(l);
            heap.dealloc(a, l);
            let b = heap.alloc(Layout::from_size_align(20, 4).unwrap());
            assert_eq!(a, b, "same class, same block");
            let c = heap.alloc(l);
            assert_ne!(b, c, "the list is empty again");
            heap.dealloc(b, l);
            heap.dealloc(c, l);
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Alloc(usize, u32),
        Free(usize),
        Grow(usize, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (1usize..3000, 0u32..5).prop_map(|(s, a)| Op::Alloc(s, a)),
            any::<usize>().prop_map(Op::Free),
            (any::<usize>(), 1usize..3000).prop_map(|(i, s)| Op::Grow(i, s)),
        ]
    }

    proptest! {
        /// Live blocks never overlap, are aligned as asked, and keep their
        /// contents through reallocation, across and within size classes.
        #[test]
        fn blocks_are_disjoint_aligned_and_keep_their_contents(ops in proptest::collection::vec(op(), 1..200)) {
            let heap = Heap::new(System);
            // (pointer, layout, fill byte)
            let mut live: Vec<(*mut u8, Layout, u8)> = Vec::new();
            let check = |live: &[(*mut u8, Layout, u8)]| {
                for (i, &(p, l, fill)) in live.iter().enumerate() {
                    prop_assert_eq!(p as usize % l.align(), 0);
                    // SAFETY: `p` holds `l.size()` initialised bytes.
                    let bytes = unsafe { std::slice::from_raw_parts(p, l.size()) };
                    prop_assert!(bytes.iter().all(|b| *b == fill), "block {} lost its contents", i);
                    for &(q, m, _) in &live[i + 1..] {
                        let (a, b) = (p as usize, q as usize);
                        prop_assert!(a + l.size() <= b || b + m.size() <= a, "blocks overlap");
                    }
                }
                Ok(())
            };
            for (n, op) in ops.into_iter().enumerate() {
                let fill = n as u8;
                match op {
                    Op::Alloc(size, align) => {
                        let l = Layout::from_size_align(size, 1 << align).unwrap();
                        // SAFETY: a non-zero size.
                        let p = unsafe { heap.alloc(l) };
                        prop_assert!(!p.is_null());
                        // SAFETY: `p` holds `size` bytes.
                        unsafe { p.write_bytes(fill, size) };
                        live.push((p, l, fill));
                    }
                    Op::Free(i) if !live.is_empty() => {
                        let (p, l, _) = live.swap_remove(i % live.len());
                        // SAFETY: allocated above with `l`, freed once.
                        unsafe { heap.dealloc(p, l) };
                    }
                    Op::Grow(i, size) if !live.is_empty() => {
                        let i = i % live.len();
                        let (p, l, old) = live[i];
                        // SAFETY: allocated above with `l`; a non-zero size.
                        let q = unsafe { heap.realloc(p, l, size) };
                        prop_assert!(!q.is_null());
                        let kept = l.size().min(size);
                        // SAFETY: `q` holds `size` bytes, the first `kept` carried over.
                        let bytes = unsafe { std::slice::from_raw_parts(q, kept) };
                        prop_assert!(bytes.iter().all(|b| *b == old), "realloc lost the contents");
                        // SAFETY: as above.
                        unsafe { q.write_bytes(fill, size) };
                        live[i] = (q, Layout::from_size_align(size, l.align()).unwrap(), fill);
                    }
                    _ => {}
                }
                check(&live)?;
            }
            for (p, l, _) in live {
                // SAFETY: each live block is freed once.
                unsafe { heap.dealloc(p, l) };
            }
        }
    }
}
