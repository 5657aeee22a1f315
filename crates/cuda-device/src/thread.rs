//! Thread, block and grid coordinates.
//!
//! The `threadIdx_*`, `blockIdx_*`, `blockDim_*` and `gridDim_*` functions are intrinsics that
//! read the PTX special registers `%tid`, `%ctaid`, `%ntid` and `%nctaid`; their names follow
//! CUDA C++ so that kernels port over line by line.

#![allow(non_snake_case)]

use crate::intrinsic::host_call;

macro_rules! special_registers {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[inline(never)]
        pub fn $name() -> u32 {
            host_call(concat!("cuda_device::thread::", stringify!($name)))
        }
    )*};
}

special_registers! {
    /// The thread's x coordinate within its block (`threadIdx.x`). Intrinsic.
    threadIdx_x;
    /// The thread's y coordinate within its block (`threadIdx.y`). Intrinsic.
    threadIdx_y;
    /// The thread's z coordinate within its block (`threadIdx.z`). Intrinsic.
    threadIdx_z;
    /// The block's x coordinate within the grid (`blockIdx.x`). Intrinsic.
    blockIdx_x;
    /// The block's y coordinate within the grid (`blockIdx.y`). Intrinsic.
    blockIdx_y;
    /// The block's z coordinate within the grid (`blockIdx.z`). Intrinsic.
    blockIdx_z;
    /// Threads per block along x (`blockDim.x`). Intrinsic.
    blockDim_x;
    /// Threads per block along y (`blockDim.y`). Intrinsic.
    blockDim_y;
    /// Threads per block along z (`blockDim.z`). Intrinsic.
    blockDim_z;
    /// Blocks per grid along x (`gridDim.x`). Intrinsic.
    gridDim_x;
    /// Blocks per grid along y (`gridDim.y`). Intrinsic.
    gridDim_y;
    /// Blocks per grid along z (`gridDim.z`). Intrinsic.
    gridDim_z;
}

/// A thread's global index along x: `blockIdx.x * blockDim.x + threadIdx.x`.
///
/// Only [`index_1d`] makes one, so two threads of a launch never hold the same `ThreadIndex`;
/// that is what lets [`DisjointSlice::get_mut`](crate::DisjointSlice::get_mut) hand each thread
/// a `&mut` to its own element without a data race.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadIndex(usize);

impl ThreadIndex {
    /// The index as a `usize`, for indexing ordinary slices.
    #[inline]
    pub fn get(self) -> usize {
        self.0
    }
}

/// This thread's global index along x.
#[inline]
pub fn index_1d() -> ThreadIndex {
    let block = blockIdx_x() as usize;
    let width = blockDim_x() as usize;
    let thread = threadIdx_x() as usize;
    ThreadIndex(block * width + thread)
}
