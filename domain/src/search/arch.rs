//! The one place the solvers ask the processor and the kernel for what safe Rust cannot say: a
//! prefetch hint for a table slot about to be read, huge pages for the tables, and a second copy
//! of the Reversi solver compiled for the x86-64-v3 instructions (AVX2, BMI1/2, LZCNT, POPCNT),
//! run where the processor has them.
//!
//! This is the workspace's only `unsafe` (`unsafe_code` is denied everywhere else, and the
//! copies' dispatch is written here, in [`two_copies!`]): the call of an intrinsic that is a hint
//! to the cache, an `madvise` that only says how to back memory the program owns, and calls of
//! the copies once the processor's features were checked.

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

/// A table of `len` items made by `empty`, whose memory the kernel is asked to back with huge
/// pages (2 MiB on x86-64) before it is first written: a table of tens of MiB probed at random
/// would otherwise miss the processor's address cache (TLB) on most probes as well as its data
/// caches. Where the kernel does not (not Linux, transparent huge pages off), an ordinary table.
pub(crate) fn table<T>(len: usize, empty: impl FnMut() -> T) -> Vec<T> {
    let mut items = Vec::with_capacity(len);
    advise_huge_pages(items.spare_capacity_mut());
    items.extend(std::iter::repeat_with(empty).take(len));
    items
}

#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(memory: &mut [std::mem::MaybeUninit<T>]) {
    const HUGE_PAGE: usize = 2 << 20;
    let start = memory.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(memory);
    let (first, last) = (
        start.next_multiple_of(HUGE_PAGE),
        end / HUGE_PAGE * HUGE_PAGE,
    );
    if first < last {
        // SAFETY: the range lies inside `memory`, which the caller owns and has not written
        // yet; MADV_HUGEPAGE only tells the kernel how to back it and changes no byte of it. A
        // refusal (transparent huge pages off) leaves it as it was, so the result is ignored.
        unsafe {
            libc::madvise(
                first as *mut libc::c_void,
                last - first,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_: &mut [std::mem::MaybeUninit<T>]) {}

/// Whether this processor has every instruction the x86-64-v3 copies of [`two_copies!`] are
/// compiled for (the standard library asks the processor once and remembers).
pub(crate) fn has_v3() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("lzcnt")
            && std::arch::is_x86_feature_detected!("popcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Inside an `impl` block: a method `$name::<V3>` and the two copies it calls of the method body
/// `$body::<V3>` (an `#[inline(always)]` function generic over `const V3: bool`, which calls its
/// recursive steps as `$name::<V3>` in turn): `$base`, compiled for the build's target, and
/// `$v3`, compiled for the x86-64-v3 instructions. `V3` must be true only in a search that
/// checked [`has_v3`]: a copy for instructions the processor lacks would crash it.
macro_rules! two_copies {
    (
        $(#[$attr:meta])*
        fn $name:ident, $base:ident, $v3:ident => $body:ident(
            &mut self $(, $arg:ident: $ty:ty)* $(,)?
        ) -> $ret:ty;
    ) => {
        $(#[$attr])*
        #[inline(always)]
        #[allow(unsafe_code, clippy::too_many_arguments)]
        fn $name<const V3: bool>(&mut self $(, $arg: $ty)*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            if V3 {
                // SAFETY: `V3` is true only in a search that found every feature of the copy
                // on this processor (`has_v3`).
                return unsafe { self.$v3($($arg),*) };
            }
            self.$base($($arg),*)
        }

        #[allow(clippy::too_many_arguments)]
        fn $base(&mut self $(, $arg: $ty)*) -> $ret {
            self.$body::<false>($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
        #[allow(clippy::too_many_arguments)]
        fn $v3(&mut self $(, $arg: $ty)*) -> $ret {
            self.$body::<true>($($arg),*)
        }
    };
}
pub(crate) use two_copies;
