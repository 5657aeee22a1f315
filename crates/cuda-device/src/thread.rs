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
/// Only [`index_1d`] (in a 1-D launch), [`index_2d`] and [`index_3d`] make one, so two threads
/// of a launch never hold the same `ThreadIndex`; that is what lets
/// [`DisjointSlice::get_mut`](crate::DisjointSlice::get_mut) hand each thread a `&mut` to its
/// own element without a data race.
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

/// This thread's global coordinates `(x, y)` in a 2-D launch: `blockIdx * blockDim + threadIdx`
/// along each axis (CUDA's `blockIdx.x * blockDim.x + threadIdx.x`, and the same for `y`).
#[inline]
pub fn global_2d() -> (usize, usize) {
    let x = blockIdx_x() as usize * blockDim_x() as usize + threadIdx_x() as usize;
    let y = blockIdx_y() as usize * blockDim_y() as usize + threadIdx_y() as usize;
    (x, y)
}

/// This thread's global coordinates `(x, y, z)` in a 3-D launch.
#[inline]
pub fn global_3d() -> (usize, usize, usize) {
    let (x, y) = global_2d();
    let z = blockIdx_z() as usize * blockDim_z() as usize + threadIdx_z() as usize;
    (x, y, z)
}

/// This thread's element of a row-major 2-D array with rows of `width` elements, in a 2-D
/// launch: `y * width + x` from [`global_2d`]. `None` for a thread whose `x` is past the end
/// of the row (the grid is usually rounded up to whole blocks), so that no two threads get the
/// same index: a [`DisjointSlice`](crate::DisjointSlice) of the array hands each thread its
/// own element. (Use one indexing scheme per kernel: `index_1d` ignores `y` and `z`.)
#[inline]
pub fn index_2d(width: usize) -> Option<ThreadIndex> {
    let (x, y) = global_2d();
    (x < width).then(|| ThreadIndex(y * width + x))
}

/// This thread's element of a 3-D array of `depth` planes of `height` rows of `width`
/// elements, in a 3-D launch: `(z * height + y) * width + x` from [`global_3d`]. `None` for a
/// thread whose `x` or `y` is past its row or plane, as for [`index_2d`].
#[inline]
pub fn index_3d(width: usize, height: usize) -> Option<ThreadIndex> {
    let (x, y, z) = global_3d();
    (x < width && y < height).then(|| ThreadIndex((z * height + y) * width + x))
}
