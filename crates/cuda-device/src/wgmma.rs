//! Warpgroup matrix multiply-accumulate (`wgmma`, sm_90a only: build with `--arch sm_90a`).
//!
//! A *warpgroup* is 4 consecutive warps whose first warp index is a multiple of 4 (threads
//! `128 * k .. 128 * k + 128` of a 1-D block). Its 128 threads issue `wgmma.mma_async`
//! together: `D (64 × N, f32) += A (64 × 16) · B (16 × N)`, A and B read from shared memory
//! through *matrix descriptors* ([descriptor]), D held in registers spread over the warpgroup.
//! The multiply is asynchronous:
//!
//! 1. [fence] before the first `mma_async` (and whenever the accumulator registers or the
//!    shared memory were written since);
//! 2. the `mma_async`s of one step;
//! 3. [commit_group] closes them into a group;
//! 4. [wait_group] `::<N>()` waits until at most `N` groups are pending; the accumulators may
//!    be read only after the group that writes them has completed.
//!
//! Shared memory written by ordinary stores must be fenced
//! ([crate::sync::fence_proxy_async_shared]) and the block synchronised before a `wgmma` reads
//! it; memory written by TMA loads is ready once their barrier's phase completes.

use crate::intrinsic::stubs;

/// The instructions.
pub mod raw {
    use super::*;

    stubs! { "wgmma::raw";
        /// `wgmma.fence.sync.aligned` (sm_90a). Intrinsic.
        pub fn fence();
        /// `wgmma.commit_group.sync.aligned` (sm_90a). Intrinsic.
        pub fn commit_group();
        /// `wgmma.wait_group.sync.aligned 0` (sm_90a). Intrinsic.
        pub fn wait_group_0();
        /// `wgmma.wait_group.sync.aligned 1` (sm_90a). Intrinsic.
        pub fn wait_group_1();
        /// `wgmma.wait_group.sync.aligned 2` (sm_90a). Intrinsic.
        pub fn wait_group_2();
    }
}

/// Orders the warpgroup's earlier accesses of the accumulator registers and of shared memory
/// before its next `mma_async`. Every thread of the warpgroup calls it.
#[inline]
pub fn fence() {
    raw::fence()
}

/// Closes the warpgroup's `mma_async`s since the last commit into a group. Every thread of the
/// warpgroup calls it.
#[inline]
pub fn commit_group() {
    raw::commit_group()
}

/// Waits until at most `PENDING` (0, 1 or 2) groups of this warpgroup's `mma_async`s are still
/// running. Every thread of the warpgroup calls it.
#[inline]
pub fn wait_group<const PENDING: u32>() {
    const {
        assert!(
            PENDING <= 2,
            "wgmma::wait_group supports 0, 1 or 2 pending groups"
        )
    };
    match PENDING {
        0 => raw::wait_group_0(),
        1 => raw::wait_group_1(),
        _ => raw::wait_group_2(),
    }
}

/// How a matrix tile is swizzled in shared memory: the same mode as the TMA copy that wrote it
/// (`CU_TENSOR_MAP_SWIZZLE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    /// No swizzle: the tile is made of 8 × 16-byte "core matrices".
    None,
    /// 32-byte swizzle: rows of 32 bytes.
    B32,
    /// 64-byte swizzle: rows of 64 bytes.
    B64,
    /// 128-byte swizzle: rows of 128 bytes (a 1024-byte aligned pattern of 8 rows).
    B128,
}

impl Swizzle {
    /// The descriptor's 2-bit layout field (bits 62..63).
    const fn layout_bits(self) -> u64 {
        match self {
            Swizzle::None => 0,
            Swizzle::B128 => 1,
            Swizzle::B64 => 2,
            Swizzle::B32 => 3,
        }
    }
}

/// The 64-bit shared-memory matrix descriptor of a `wgmma` operand.
///
/// `shared_addr` is the operand's address in the shared-memory window
/// ([crate::shared::shared_address]), 16-byte aligned; `leading_byte_offset` and
/// `stride_byte_offset` are the distances in bytes between core matrices along the leading
/// (K for a K-major operand) and the strided dimension (for the 128-byte swizzle of a K-major
/// operand: leading unused (1), stride 1024 = 8 rows of 128 bytes). Fields are stored divided
/// by 16, on 14 bits.
#[inline]
pub const fn descriptor(
    shared_addr: u32,
    leading_byte_offset: u32,
    stride_byte_offset: u32,
    swizzle: Swizzle,
) -> u64 {
    const fn field(bytes: u32) -> u64 {
        ((bytes as u64 & 0x3_FFFF) >> 4) & 0x3FFF
    }
    field(shared_addr)
        | (field(leading_byte_offset) << 16)
        | (field(stride_byte_offset) << 32)
        | (swizzle.layout_bits() << 62)
}
