//! The device-side API of cuda-oxide.
//!
//! Code in a `#[kernel]` (and everything it calls) runs on the GPU. This crate gives it the
//! GPU's view of the world: which thread am I ([`thread`]), wait for my block ([`sync`]),
//! talk to my warp ([`warp`]), share memory with my block ([`shared`]), update memory shared
//! with other threads ([`atomic`]), read the clocks ([`time`]), allocate ([`heap`]), and write
//! my own element of an output ([`DisjointSlice`]). On Hopper (sm_90, sm_90a): asynchronous
//! barriers ([`mbarrier`]), the tensor memory accelerator ([`tma`]), warpgroup matrix multiplies
//! ([`wgmma`]), thread-block clusters ([`cluster`]) and register reallocation between
//! warpgroups ([`warpgroup`]).
//!
//! Functions documented as *intrinsics* have no Rust body that does anything: the cuda-oxide
//! compiler replaces every call to them by the GPU instruction they name. Called from ordinary
//! host code they panic with a message saying so, rather than returning a made-up value.
//!
//! The crate is `no_std`: device code may use `core` and `alloc` (on the device heap,
//! [`heap`]), not `std`.

#![no_std]
#![feature(core_float_math, ptr_alignment_type)]
#![feature(panic_internals)]
#![allow(internal_features)]

pub mod atomic;
pub mod cluster;
mod disjoint_slice;
pub mod heap;
mod intrinsic;
pub mod mbarrier;
pub mod panic;
pub mod printf;
pub mod shared;
#[doc(hidden)]
pub mod shims;
pub mod sync;
pub mod thread;
pub mod time;
pub mod tma;
pub mod warp;
pub mod warpgroup;
pub mod wgmma;

pub use cuda_macros::{block_dims, cluster_dims, device, gpu_printf, kernel, launch_bounds};
pub use disjoint_slice::DisjointSlice;
pub use shared::{DynamicSharedArray, SharedArray};
pub use thread::ThreadIndex;

/// What `#[launch_bounds(MAX_THREADS, MIN_BLOCKS)]` puts at the start of a kernel: the codegen
/// backend reads the bounds from this call's const arguments (`MIN_BLOCKS` 0: none asked for).
/// It does nothing; not for direct use.
#[doc(hidden)]
#[inline(never)]
pub fn launch_bounds_marker<const MAX_THREADS: u32, const MIN_BLOCKS: u32>() {}

/// What `#[cluster_dims(X, Y, Z)]` puts at the start of a kernel: the codegen backend reads
/// the cluster shape from this call's const arguments. It does nothing; not for direct use.
#[doc(hidden)]
#[inline(never)]
pub fn cluster_dims_marker<const X: u32, const Y: u32, const Z: u32>() {}

/// The check `#[cluster_dims]` evaluates at compile time, for sides that are named constants.
/// Not for direct use.
#[doc(hidden)]
pub const fn check_cluster_dims(x: u32, y: u32, z: u32) {
    assert!(
        x >= 1 && y >= 1 && z >= 1,
        "#[cluster_dims]: a cluster side is at least 1 block"
    );
    assert!(
        x as u64 * y as u64 * z as u64 <= 8,
        "#[cluster_dims]: a cluster has at most 8 blocks"
    );
}

/// What `#[block_dims(X, Y, Z)]` puts at the start of a kernel: the codegen backend reads the
/// block shape from this call's const arguments. It does nothing; not for direct use.
#[doc(hidden)]
#[inline(never)]
pub fn block_dims_marker<const X: u32, const Y: u32, const Z: u32>() {}

/// The check `#[block_dims]` evaluates at compile time, for sides that are named constants.
/// Not for direct use.
#[doc(hidden)]
pub const fn check_block_dims(x: u32, y: u32, z: u32) {
    assert!(
        x >= 1 && y >= 1 && z >= 1,
        "#[block_dims]: a block side is at least 1 thread"
    );
    assert!(
        x as u64 * y as u64 * z as u64 <= 1024,
        "#[block_dims]: a block has at most 1024 threads"
    );
    assert!(
        z <= 64,
        "#[block_dims]: a block has at most 64 threads along z"
    );
}

/// What `#[kernel(fmad)]` puts at the start of a kernel: the codegen backend then contracts
/// float multiplications and additions of the kernel's body into fused multiply-adds (nvcc's
/// `--fmad=true`). It does nothing; not for direct use.
#[doc(hidden)]
#[inline(never)]
pub fn fmad_marker() {}

/// The check `#[launch_bounds]` evaluates at compile time, for bounds that are named
/// constants (literals are checked by the macro itself). Not for direct use.
#[doc(hidden)]
pub const fn check_launch_bounds(max_threads: u32, min_blocks: Option<u32>) {
    assert!(
        max_threads >= 1 && max_threads <= 1024,
        "#[launch_bounds]: a block has 1 to 1024 threads"
    );
    if let Some(min) = min_blocks {
        assert!(
            min >= 1,
            "#[launch_bounds]: the minimum blocks per multiprocessor is at least 1"
        );
    }
}

/// Stops the kernel: its launch fails with an error (`__trap()`, PTX `trap`). Intrinsic.
#[inline(never)]
pub fn trap() -> ! {
    intrinsic::host_call("cuda_device::trap")
}
