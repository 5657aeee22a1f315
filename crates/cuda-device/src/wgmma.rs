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

use crate::intrinsic::{stubs, unsafe_stubs};

/// The instructions.
pub mod raw {
    use super::*;

    unsafe_stubs! { "wgmma::raw";
        /// `D = A·B (+ D when scale_d != 0)`, 64 × 64 f32 `D`, bf16 `A` and `B` from shared
        /// memory (`wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16`; sm_90a). Intrinsic.
        ///
        /// # Safety
        /// The whole warpgroup executes it; the descriptors describe shared memory written
        /// before a [fence](super::fence); the result may be read only after
        /// [wait_group](super::wait_group) has seen its group complete.
        pub unsafe fn mma_m64n64k16_f32_bf16(acc: [f32; 32], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 32];
        /// As [mma_m64n64k16_f32_bf16], with f16 `A` and `B`. Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n64k16_f32_f16(acc: [f32; 32], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 32];
        /// 64 × 128 `D`, bf16 (`...m64n128k16.f32.bf16.bf16`; sm_90a). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n128k16_f32_bf16(acc: [f32; 64], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 64];
        /// 64 × 128 `D`, f16. Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n128k16_f32_f16(acc: [f32; 64], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 64];
        /// 64 × 256 `D`, bf16 (`...m64n256k16.f32.bf16.bf16`; sm_90a). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n256k16_f32_bf16(acc: [f32; 128], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 128];
        /// 64 × 256 `D`, f16. Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n256k16_f32_f16(acc: [f32; 128], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 128];
    }

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

/// The element type of `A` and `B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// bfloat16.
    Bf16,
    /// IEEE half precision.
    F16,
}

/// Issues `D = A·B` (or `D += A·B` when `accumulate`) for one K step of 16 on the warpgroup's
/// 64 × `N` f32 tile `acc` (`N / 2` values per thread, `N` = 64, 128 or 256), with `A` (64 ×
/// 16) and `B` (16 × `N`) of type `input` described by `desc_a` and `desc_b` ([descriptor]),
/// both K-major. Asynchronous: [commit_group] and [wait_group] before reading `acc`.
///
/// # Safety
/// Every thread of the warpgroup calls it together; the descriptors describe shared memory of
/// the right size and layout, made visible to the tensor cores ([fence] after ordinary stores,
/// a completed barrier phase after TMA loads); `acc` is not read or written before the group
/// that holds this multiply has completed.
#[inline(always)]
pub unsafe fn mma_async<const R: usize>(
    acc: &mut [f32; R],
    desc_a: u64,
    desc_b: u64,
    input: Input,
    accumulate: bool,
) {
    let scale_d = accumulate as u32;
    let acc_ptr = acc as *mut [f32; R];
    // SAFETY: forwarded to the caller; each arm runs only when `R` is that arm's array size,
    // so the casts are between identical types.
    unsafe {
        match (R, input) {
            (32, Input::Bf16) => {
                let acc = &mut *acc_ptr.cast::<[f32; 32]>();
                *acc = raw::mma_m64n64k16_f32_bf16(*acc, desc_a, desc_b, scale_d);
            }
            (32, Input::F16) => {
                let acc = &mut *acc_ptr.cast::<[f32; 32]>();
                *acc = raw::mma_m64n64k16_f32_f16(*acc, desc_a, desc_b, scale_d);
            }
            (64, Input::Bf16) => {
                let acc = &mut *acc_ptr.cast::<[f32; 64]>();
                *acc = raw::mma_m64n128k16_f32_bf16(*acc, desc_a, desc_b, scale_d);
            }
            (64, Input::F16) => {
                let acc = &mut *acc_ptr.cast::<[f32; 64]>();
                *acc = raw::mma_m64n128k16_f32_f16(*acc, desc_a, desc_b, scale_d);
            }
            (128, Input::Bf16) => {
                let acc = &mut *acc_ptr.cast::<[f32; 128]>();
                *acc = raw::mma_m64n256k16_f32_bf16(*acc, desc_a, desc_b, scale_d);
            }
            (128, Input::F16) => {
                let acc = &mut *acc_ptr.cast::<[f32; 128]>();
                *acc = raw::mma_m64n256k16_f32_f16(*acc, desc_a, desc_b, scale_d);
            }
            _ => {
                const {
                    assert!(
                        R == 32 || R == 64 || R == 128,
                        "mma_async: N is 64, 128 or 256"
                    )
                };
            }
        }
    }
}

/// Where element `i` of a thread's accumulator fragment lies in the 64 × `N` tile: `(row,
/// column)`, for the thread's index `t` within its warpgroup (0..128). Each warp holds 16 rows;
/// element `i` is in column block `i / 4` (8 columns wide), row `lane / 4` (+ 8 for `i % 4` of
/// 2 or 3), column `2 · (lane % 4) + i % 2` of the block.
#[inline]
pub const fn fragment_position(t: usize, i: usize) -> (usize, usize) {
    let (warp, lane) = (t / 32, t % 32);
    let row = warp * 16 + lane / 4 + 8 * ((i % 4) / 2);
    let col = (i / 4) * 8 + 2 * (lane % 4) + i % 2;
    (row, col)
}
