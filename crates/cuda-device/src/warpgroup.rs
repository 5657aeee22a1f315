//! Warpgroups (4 consecutive warps whose first warp index is a multiple of 4) and register
//! reallocation between them (`setmaxnreg`, sm_90a): in a warp-specialised kernel the producer
//! warpgroup gives registers up, the consumers take them. The kernel needs a register cap at
//! entry (`#[launch_bounds(THREADS, 1)]`), and each role is one branch of an `if`/`else` on the
//! warpgroup index, every thread of the warpgroup calling the same function.

use crate::intrinsic::stubs;

/// The instructions, one per register count.
pub mod raw {
    use super::*;

    stubs! { "warpgroup::raw";
        /// `setmaxnreg.inc.sync.aligned.u32 232` (sm_90a). Intrinsic.
        pub fn increase_registers_232();
        /// `setmaxnreg.inc.sync.aligned.u32 240` (sm_90a). Intrinsic.
        pub fn increase_registers_240();
        /// `setmaxnreg.dec.sync.aligned.u32 40` (sm_90a). Intrinsic.
        pub fn decrease_registers_40();
        /// `setmaxnreg.dec.sync.aligned.u32 24` (sm_90a). Intrinsic.
        pub fn decrease_registers_24();
    }
}

/// The warpgroup of the calling thread in a 1-D block: `threadIdx.x / 128`.
#[inline]
pub fn index() -> u32 {
    crate::thread::threadIdx_x() / 128
}

/// Raises the registers per thread of this warpgroup to `N` (232 or 240).
#[inline]
pub fn increase_registers<const N: u32>() {
    const { assert!(N == 232 || N == 240, "increase_registers: 232 or 240") };
    if N == 232 {
        raw::increase_registers_232()
    } else {
        raw::increase_registers_240()
    }
}

/// Lowers the registers per thread of this warpgroup to `N` (24 or 40).
#[inline]
pub fn decrease_registers<const N: u32>() {
    const { assert!(N == 24 || N == 40, "decrease_registers: 24 or 40") };
    if N == 40 {
        raw::decrease_registers_40()
    } else {
        raw::decrease_registers_24()
    }
}
