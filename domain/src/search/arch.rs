//! The one place the solvers ask the processor for what safe Rust cannot say: a prefetch hint
//! for a table slot about to be read.
//!
//! This is the workspace's only `unsafe` (`unsafe_code` is denied everywhere else): the call of
//! an intrinsic that is a hint to the cache and has no effect on memory or on the program.

#![allow(unsafe_code)]

/// Asks the processor to bring `item`'s cache line closer (into every level of cache), so that
/// reading it later does not wait for main memory. A hint only: the program means the same
/// without it.
#[inline(always)]
pub(crate) fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 processor has; a prefetch never
    // faults, reads nothing into the program and writes nothing, whatever the address (and
    // this one is a live reference).
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(item).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}
