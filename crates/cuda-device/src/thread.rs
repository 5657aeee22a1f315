//! Thread, block and grid coordinates, and where the thread runs.
//!
//! The `threadIdx_*`, `blockIdx_*`, `blockDim_*` and `gridDim_*` functions are intrinsics that
//! read the PTX special registers `%tid`, `%ctaid`, `%ntid` and `%nctaid`; their names follow
//! CUDA C++ so that kernels port over line by line. [`smid`], [`warpid`] and friends read the
//! registers CUDA C++ reaches through inline assembly.

#![allow(non_snake_case)]

use crate::intrinsic::stubs;

stubs! { "thread";
    /// The thread's x coordinate within its block (`threadIdx.x`). Intrinsic.
    pub fn threadIdx_x() -> u32;
    /// The thread's y coordinate within its block (`threadIdx.y`). Intrinsic.
    pub fn threadIdx_y() -> u32;
    /// The thread's z coordinate within its block (`threadIdx.z`). Intrinsic.
    pub fn threadIdx_z() -> u32;
    /// The block's x coordinate within the grid (`blockIdx.x`). Intrinsic.
    pub fn blockIdx_x() -> u32;
    /// The block's y coordinate within the grid (`blockIdx.y`). Intrinsic.
    pub fn blockIdx_y() -> u32;
    /// The block's z coordinate within the grid (`blockIdx.z`). Intrinsic.
    pub fn blockIdx_z() -> u32;
    /// Threads per block along x (`blockDim.x`). Intrinsic.
    pub fn blockDim_x() -> u32;
    /// Threads per block along y (`blockDim.y`). Intrinsic.
    pub fn blockDim_y() -> u32;
    /// Threads per block along z (`blockDim.z`). Intrinsic.
    pub fn blockDim_z() -> u32;
    /// Blocks per grid along x (`gridDim.x`). Intrinsic.
    pub fn gridDim_x() -> u32;
    /// Blocks per grid along y (`gridDim.y`). Intrinsic.
    pub fn gridDim_y() -> u32;
    /// Blocks per grid along z (`gridDim.z`). Intrinsic.
    pub fn gridDim_z() -> u32;
    /// The streaming multiprocessor the thread runs on, below [`nsmid`] (PTX `%smid`; SM
    /// numbers need not be contiguous). Intrinsic.
    pub fn smid() -> u32;
    /// One more than the largest SM number of the GPU (PTX `%nsmid`). Intrinsic.
    pub fn nsmid() -> u32;
    /// The warp's slot on its SM, below [`nwarpid`] (PTX `%warpid`; it may change when the
    /// warp is preempted, so use it for statistics, not for indexing). Intrinsic.
    pub fn warpid() -> u32;
    /// One more than the largest warp slot of an SM (PTX `%nwarpid`). Intrinsic.
    pub fn nwarpid() -> u32;
    /// The identifier of the running grid, unique among the launches of a context (PTX
    /// `%gridid`). Intrinsic.
    pub fn gridid() -> u64;
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
