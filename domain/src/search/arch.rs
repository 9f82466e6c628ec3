//! The one place the solvers ask the processor for what safe Rust cannot say: a prefetch hint
//! for a table slot about to be read, and a second copy of the Reversi solver compiled for the
//! x86-64-v3 instructions (AVX2, BMI1/2, LZCNT, POPCNT), run where the processor has them.
//!
//! This is the workspace's only `unsafe` (`unsafe_code` is denied everywhere else, and the
//! copies' dispatch is written here, in [`two_copies!`]): the call of an intrinsic that is a hint
//! to the cache and has no effect on memory, and calls of the copies once the processor's
//! features were checked.

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
