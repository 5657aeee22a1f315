//! Warpgroup matrix multiply-accumulate (`wgmma`, sm_90a only: build with `--arch sm_90a`).
//!
//! A *warpgroup* is 4 consecutive warps whose first warp index is a multiple of 4 (threads
//! `128 * k .. 128 * k + 128` of a 1-D block). Its 128 threads issue `wgmma.mma_async`
//! together: `D (64 × N, f32) += A (64 × K) · B (K × N)`, A and B read from shared memory
//! through *matrix descriptors* ([descriptor]), D held in registers spread over the warpgroup.
//! `A` and `B` are bf16 or f16 (K = 16), tf32 (K = 8) or fp8 e4m3/e5m2 (K = 32): [Input].
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
        /// `D = A·B (+ D when scale_d != 0)`, 64 × 64 f32 `D`, bf16 `A` (64 × 16) and `B`
        /// (16 × 64) from shared memory, both K-major
        /// (`wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16`; sm_90a). Intrinsic.
        ///
        /// # Safety
        /// The whole warpgroup executes it; the descriptors describe shared memory written
        /// before a [fence](super::fence); the result may be read only after
        /// [wait_group](super::wait_group) has seen its group complete.
        pub unsafe fn mma_m64n64k16_f32_bf16(acc: [f32; 32], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 32];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 128 `D`, bf16 `A` and `B`, K = 16
        /// (`...m64n128k16.f32.bf16.bf16`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n128k16_f32_bf16(acc: [f32; 64], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 64];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 256 `D`, bf16 `A` and `B`, K = 16
        /// (`...m64n256k16.f32.bf16.bf16`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n256k16_f32_bf16(acc: [f32; 128], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 128];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 64 `D`, f16 `A` and `B`, K = 16
        /// (`...m64n64k16.f32.f16.f16`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n64k16_f32_f16(acc: [f32; 32], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 32];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 128 `D`, f16 `A` and `B`, K = 16
        /// (`...m64n128k16.f32.f16.f16`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n128k16_f32_f16(acc: [f32; 64], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 64];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 256 `D`, f16 `A` and `B`, K = 16
        /// (`...m64n256k16.f32.f16.f16`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n256k16_f32_f16(acc: [f32; 128], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 128];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 64 `D`, tf32 `A` and `B`, K = 8
        /// (`...m64n64k8.f32.tf32.tf32`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n64k8_f32_tf32(acc: [f32; 32], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 32];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 128 `D`, tf32 `A` and `B`, K = 8
        /// (`...m64n128k8.f32.tf32.tf32`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n128k8_f32_tf32(acc: [f32; 64], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 64];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 256 `D`, tf32 `A` and `B`, K = 8
        /// (`...m64n256k8.f32.tf32.tf32`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n256k8_f32_tf32(acc: [f32; 128], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 128];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 64 `D`, e4m3 `A` and `B`, K = 32
        /// (`...m64n64k32.f32.e4m3.e4m3`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n64k32_f32_e4m3(acc: [f32; 32], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 32];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 128 `D`, e4m3 `A` and `B`, K = 32
        /// (`...m64n128k32.f32.e4m3.e4m3`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n128k32_f32_e4m3(acc: [f32; 64], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 64];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 256 `D`, e4m3 `A` and `B`, K = 32
        /// (`...m64n256k32.f32.e4m3.e4m3`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n256k32_f32_e4m3(acc: [f32; 128], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 128];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 64 `D`, e5m2 `A` and `B`, K = 32
        /// (`...m64n64k32.f32.e5m2.e5m2`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n64k32_f32_e5m2(acc: [f32; 32], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 32];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 128 `D`, e5m2 `A` and `B`, K = 32
        /// (`...m64n128k32.f32.e5m2.e5m2`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n128k32_f32_e5m2(acc: [f32; 64], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 64];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 256 `D`, e5m2 `A` and `B`, K = 32
        /// (`...m64n256k32.f32.e5m2.e5m2`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n256k32_f32_e5m2(acc: [f32; 128], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 128];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 64 `D`, e4m3 `A`, e5m2 `B`, K = 32
        /// (`...m64n64k32.f32.e4m3.e5m2`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n64k32_f32_e4m3_e5m2(acc: [f32; 32], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 32];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 128 `D`, e4m3 `A`, e5m2 `B`, K = 32
        /// (`...m64n128k32.f32.e4m3.e5m2`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n128k32_f32_e4m3_e5m2(acc: [f32; 64], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 64];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 256 `D`, e4m3 `A`, e5m2 `B`, K = 32
        /// (`...m64n256k32.f32.e4m3.e5m2`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n256k32_f32_e4m3_e5m2(acc: [f32; 128], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 128];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 64 `D`, e5m2 `A`, e4m3 `B`, K = 32
        /// (`...m64n64k32.f32.e5m2.e4m3`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n64k32_f32_e5m2_e4m3(acc: [f32; 32], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 32];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 128 `D`, e5m2 `A`, e4m3 `B`, K = 32
        /// (`...m64n128k32.f32.e5m2.e4m3`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n128k32_f32_e5m2_e4m3(acc: [f32; 64], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 64];
        /// As [mma_m64n64k16_f32_bf16] for 64 × 256 `D`, e5m2 `A`, e4m3 `B`, K = 32
        /// (`...m64n256k32.f32.e5m2.e4m3`). Intrinsic.
        ///
        /// # Safety
        /// As for [mma_m64n64k16_f32_bf16].
        pub unsafe fn mma_m64n256k32_f32_e5m2_e4m3(acc: [f32; 128], desc_a: u64, desc_b: u64, scale_d: u32) -> [f32; 128];
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

pub use crate::tma::Swizzle;

/// The descriptor's 2-bit layout field (bits 62..63) for `swizzle`.
const fn layout_bits(swizzle: Swizzle) -> u64 {
    match swizzle {
        Swizzle::None => 0,
        Swizzle::B128 => 1,
        Swizzle::B64 => 2,
        Swizzle::B32 => 3,
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
        | (layout_bits(swizzle) << 62)
}

/// The element types of `A` and `B`, which fix the instruction's K (see [Input::k]).
///
/// Every type reads K-major operands (rows of K elements, as a row-major `A` (M × K) and a
/// row-major `B` stored N × K leave them), and one instruction reads 32 bytes of each row: 16
/// bf16/f16, 8 tf32 or 32 fp8 elements. So the descriptors of K step `kk` are the same for
/// every type (`base + 32 · kk` in a 128-byte swizzled tile). The PTX transpose operands
/// (M- or N-major tiles) exist for bf16 and f16 only; this API offers none, so a transposed
/// tf32 or fp8 operand cannot be asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// bfloat16 (K = 16).
    Bf16,
    /// IEEE half precision (K = 16).
    F16,
    /// TensorFloat-32 (K = 8): each element is an `f32` in shared memory (4 bytes) of which
    /// the tensor core uses the sign, the exponent and the upper 10 mantissa bits
    /// (`examples/wgmma_tile` checks how the low 13 bits are dropped).
    Tf32,
    /// fp8 E4M3 `A` and `B` (K = 32): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no
    /// infinities, largest finite 448.
    E4m3,
    /// fp8 E5M2 `A` and `B` (K = 32): 1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-like,
    /// largest finite 57344.
    E5m2,
    /// fp8 E4M3 `A` and E5M2 `B` (K = 32).
    E4m3E5m2,
    /// fp8 E5M2 `A` and E4M3 `B` (K = 32).
    E5m2E4m3,
}

impl Input {
    /// The K of one `mma_async` with these inputs: 16 (bf16, f16), 8 (tf32), 32 (fp8).
    pub const fn k(self) -> usize {
        32 / self.element_bytes()
    }

    /// The size in bytes of one element of `A` and `B`: 2, 4 (tf32) or 1 (fp8).
    pub const fn element_bytes(self) -> usize {
        match self {
            Input::Bf16 | Input::F16 => 2,
            Input::Tf32 => 4,
            Input::E4m3 | Input::E5m2 | Input::E4m3E5m2 | Input::E5m2E4m3 => 1,
        }
    }
}

/// A thread's f32 accumulator fragment of a warpgroup's 64 × `N` tile: `[f32; N / 2]` for `N`
/// = 64, 128, 256. Its [Fragment::mma] is the `wgmma.mma_async` of that shape (see
/// [mma_async]).
pub trait Fragment: Copy {
    /// The tile's `N`.
    const N: usize;

    /// `wgmma.mma_async` of this shape with `A` and `B` of type `input`.
    ///
    /// # Safety
    /// As for [mma_async].
    unsafe fn mma(self, input: Input, desc_a: u64, desc_b: u64, scale_d: u32) -> Self;

    /// Calls `f(i, value)` for every element, in order, with constant indices: unlike a loop
    /// over the array, this never makes the fragment live in local memory.
    fn for_each(self, f: impl FnMut(usize, f32));

    /// A fragment of zeros, written as one `memset` (`[0.0; N]` becomes a fill loop, which can
    /// keep a large fragment in local memory).
    fn zeroed() -> Self;
}

macro_rules! fragment {
    (
        $len:literal, $n:literal,
        [$bf16:ident, $f16:ident, $tf32:ident, $e4m3:ident, $e5m2:ident, $e4m3_e5m2:ident,
         $e5m2_e4m3:ident];
        $($i:literal)*
    ) => {
        impl Fragment for [f32; $len] {
            const N: usize = $n;

            #[inline(always)]
            unsafe fn mma(self, input: Input, desc_a: u64, desc_b: u64, scale_d: u32) -> Self {
                // SAFETY: forwarded to the caller.
                unsafe {
                    match input {
                        Input::Bf16 => raw::$bf16(self, desc_a, desc_b, scale_d),
                        Input::F16 => raw::$f16(self, desc_a, desc_b, scale_d),
                        Input::Tf32 => raw::$tf32(self, desc_a, desc_b, scale_d),
                        Input::E4m3 => raw::$e4m3(self, desc_a, desc_b, scale_d),
                        Input::E5m2 => raw::$e5m2(self, desc_a, desc_b, scale_d),
                        Input::E4m3E5m2 => raw::$e4m3_e5m2(self, desc_a, desc_b, scale_d),
                        Input::E5m2E4m3 => raw::$e5m2_e4m3(self, desc_a, desc_b, scale_d),
                    }
                }
            }

            #[inline(always)]
            fn for_each(self, mut f: impl FnMut(usize, f32)) {
                $( f($i, self[$i]); )*
            }

            #[inline(always)]
            fn zeroed() -> Self {
                // SAFETY: all-zero bytes are `0.0` in every element.
                unsafe { core::mem::zeroed() }
            }
        }
    };
}

fragment!(32, 64, [mma_m64n64k16_f32_bf16, mma_m64n64k16_f32_f16, mma_m64n64k8_f32_tf32, mma_m64n64k32_f32_e4m3, mma_m64n64k32_f32_e5m2, mma_m64n64k32_f32_e4m3_e5m2, mma_m64n64k32_f32_e5m2_e4m3]; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
fragment!(64, 128, [mma_m64n128k16_f32_bf16, mma_m64n128k16_f32_f16, mma_m64n128k8_f32_tf32, mma_m64n128k32_f32_e4m3, mma_m64n128k32_f32_e5m2, mma_m64n128k32_f32_e4m3_e5m2, mma_m64n128k32_f32_e5m2_e4m3]; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63);
fragment!(128, 256, [mma_m64n256k16_f32_bf16, mma_m64n256k16_f32_f16, mma_m64n256k8_f32_tf32, mma_m64n256k32_f32_e4m3, mma_m64n256k32_f32_e5m2, mma_m64n256k32_f32_e4m3_e5m2, mma_m64n256k32_f32_e5m2_e4m3]; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127);

/// Issues `D = A·B` (or `D += A·B` when `accumulate`) for one K step ([Input::k]: 16 for
/// bf16/f16, 8 for tf32, 32 for fp8; 32 bytes of each row) on the warpgroup's 64 × `N` f32 tile
/// `acc` ([Fragment]: `[f32; N / 2]` per thread), with `A` (64 × K) and `B` (K × `N`) of type
/// `input` described by `desc_a` and `desc_b` ([descriptor]), both K-major; returns the new
/// fragment. Asynchronous: [commit_group], then [wait_group] before the returned fragment is
/// read (passing it to the next `mma_async` of the same group is fine).
///
/// # Safety
/// Every thread of the warpgroup calls it together; the descriptors describe shared memory of
/// the right size and layout, made visible to the tensor cores
/// ([crate::sync::fence_proxy_async_shared] and a barrier after ordinary stores, a completed
/// barrier phase after TMA loads); the result is not read before the group that holds this
/// multiply has completed.
#[inline(always)]
pub unsafe fn mma_async<F: Fragment>(
    acc: F,
    desc_a: u64,
    desc_b: u64,
    input: Input,
    accumulate: bool,
) -> F {
    // SAFETY: forwarded to the caller.
    unsafe { acc.mma(input, desc_a, desc_b, accumulate as u32) }
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
