//! The tensor memory accelerator (TMA, sm_90): bulk copies of 2-D and 3-D boxes of a tensor
//! between global and shared memory, done by the copy engine while the threads go on.
//!
//! The host describes the tensor once, in a [TensorMap] (`cuda_host::tma` builds one with
//! `cuTensorMapEncodeTiled`: element type, sizes, strides, box size, swizzle), and passes it to
//! the kernel as a `&TensorMap` parameter: a grid constant, in the kernel's parameter space,
//! which is where the copy engine reads it best.
//!
//! A load completes on an asynchronous barrier ([crate::mbarrier]): one thread tells the
//! barrier how many bytes to expect ([BarrierHandle::arrive_expect_tx]) and starts the copy;
//! the threads that need the data [wait](BarrierHandle::wait) on the barrier. A store reads
//! shared memory asynchronously: [commit_group], then [wait_group_read_0] before the shared
//! memory is written again, [wait_group_0] before the kernel relies on the global writes.
//! Shared memory written by ordinary stores must be fenced ([crate::sync::fence_proxy_async_shared])
//! and the block synchronised before a store copies it.
//!
//! Within a thread-block cluster ([crate::cluster]), [load_2d_multicast] copies one box into
//! the shared memory of several blocks at once.
//!
//! Coordinates are in elements, innermost dimension first (`x` is the column of a row-major
//! matrix); boxes that reach past the tensor's edges are filled with zeros on loads and
//! clipped on stores. Shared-memory boxes must be aligned to 128 bytes (1024 with the 128-byte
//! swizzle): use `SharedArray<T, N, 128>` or `SharedArray<T, N, 1024>`.

use crate::intrinsic::{stubs, unsafe_stubs};
use crate::mbarrier::BarrierHandle;

/// How the copy engine lays a box out in shared memory, and so how the `wgmma` descriptors
/// that read it ([crate::wgmma::descriptor]) must address it: the same mode on both sides
/// (`CU_TENSOR_MAP_SWIZZLE_*` for the host's tensor map).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    /// Rows as they are in global memory: for `wgmma`, tiles of 8 x 16-byte core matrices.
    None,
    /// 16-byte chunks swizzled within 32-byte rows (the box's inner size at most 32 bytes).
    B32,
    /// Within 64-byte rows (inner size at most 64 bytes).
    B64,
    /// Within 128-byte rows (inner size at most 128 bytes; shared memory aligned to 1024: a
    /// pattern of 8 rows).
    B128,
}

/// A tensor map: the 128-byte, 64-byte aligned description of a tensor in global memory that
/// the copy engine reads (CUDA's `CUtensorMap`). Opaque: build it on the host.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMap {
    words: [u64; 16],
}

impl TensorMap {
    /// The tensor map of these 128 bytes (what `cuTensorMapEncodeTiled` wrote).
    pub const fn from_words(words: [u64; 16]) -> TensorMap {
        TensorMap { words }
    }

    /// The 128 bytes of the tensor map.
    pub const fn words(&self) -> &[u64; 16] {
        &self.words
    }

    /// The generic address of this tensor map.
    #[inline]
    fn address(&self) -> u64 {
        self as *const TensorMap as u64
    }
}

/// The instructions, on generic addresses.
pub mod raw {
    use super::*;

    unsafe_stubs! { "tma::raw";
        /// Copies the 2-D box at `(c0, c1)` of the tensor map at `tmap` into shared memory at
        /// `dst`, completing on the barrier at `bar`
        /// (`cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`;
        /// sm_90). Intrinsic.
        ///
        /// # Safety
        /// `tmap` is a tensor map in parameter, constant or global memory; `dst` shared memory
        /// of the box's size, aligned as the map requires; `bar` an initialised barrier.
        pub unsafe fn load_2d(dst: u64, tmap: u64, c0: i32, c1: i32, bar: u64);
        /// Copies the 3-D box at `(c0, c1, c2)` into shared memory at `dst`, completing on the
        /// barrier at `bar` (`cp.async.bulk.tensor.3d...`; sm_90). Intrinsic.
        ///
        /// # Safety
        /// As for [load_2d].
        pub unsafe fn load_3d(dst: u64, tmap: u64, c0: i32, c1: i32, c2: i32, bar: u64);
        /// Copies the 2-D box at `(c0, c1)` into shared memory at `dst` of every block of the
        /// cluster whose bit (block rank) is set in `mask`, completing on the barrier at `bar`'s
        /// offset in each (`cp.async.bulk.tensor.2d...multicast::cluster`; sm_90). Intrinsic.
        ///
        /// # Safety
        /// As for [load_2d], in every block of `mask`: each has the shared memory free and the
        /// barrier initialised, and has not exited.
        pub unsafe fn load_2d_multicast(dst: u64, tmap: u64, c0: i32, c1: i32, bar: u64, mask: u32);
        /// Copies shared memory at `src` to the 2-D box at `(c0, c1)` of the tensor map at
        /// `tmap`, in this thread's current bulk group
        /// (`cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group`; sm_90). Intrinsic.
        ///
        /// # Safety
        /// `tmap` is a tensor map; `src` shared memory of the box's size, aligned as the map
        /// requires, not written until [wait_group_read_0].
        pub unsafe fn store_2d(tmap: u64, c0: i32, c1: i32, src: u64);
        /// Copies shared memory at `src` to the 3-D box at `(c0, c1, c2)` (`cp.async.bulk.
        /// tensor.3d.global.shared::cta.tile.bulk_group`; sm_90). Intrinsic.
        ///
        /// # Safety
        /// As for [store_2d].
        pub unsafe fn store_3d(tmap: u64, c0: i32, c1: i32, c2: i32, src: u64);
        /// Brings the tensor map at `tmap` into the cache (`prefetch.tensormap`; sm_90).
        /// Intrinsic.
        ///
        /// # Safety
        /// `tmap` is the address of a tensor map.
        pub unsafe fn prefetch_tensormap(tmap: u64);
        /// Makes the tensor map at `tmap`, written by ordinary stores or copies, visible to the
        /// copy engine (`fence.proxy.tensormap::generic.acquire.gpu`; sm_90, PTX ISA 8.3).
        /// Intrinsic.
        ///
        /// # Safety
        /// `tmap` is the address of 128 bytes of global memory.
        pub unsafe fn fence_tensormap_acquire(tmap: u64);
    }

    stubs! { "tma::raw";
        /// Closes this thread's current group of bulk stores (`cp.async.bulk.commit_group`;
        /// sm_90). Intrinsic.
        pub fn commit_group();
        /// Waits until this thread's committed bulk stores have read their shared memory
        /// (`cp.async.bulk.wait_group.read 0`; sm_90). Intrinsic.
        pub fn wait_group_read_0();
        /// Waits until this thread's committed bulk stores have completed
        /// (`cp.async.bulk.wait_group 0`; sm_90). Intrinsic.
        pub fn wait_group_0();
    }
}

/// Starts copying the 2-D box at `(x, y)` of `map` into shared memory at `dst`; the bytes
/// complete on `bar` (which must expect them: [BarrierHandle::arrive_expect_tx]). Call it from
/// one thread.
///
/// # Safety
/// `dst` points to shared memory that holds the box (the map's box size times its element
/// size), aligned to 128 bytes (1024 with the 128-byte swizzle), that nothing reads or writes
/// until the barrier's phase completes.
#[inline]
pub unsafe fn load_2d<T>(map: &TensorMap, dst: *mut T, x: i32, y: i32, bar: &BarrierHandle) {
    // SAFETY: forwarded to the caller; `map` is a tensor map and `bar` initialised.
    unsafe { raw::load_2d(dst as u64, map.address(), x, y, bar.address()) }
}

/// Starts copying the 2-D box at `(x, y)` of `map` into shared memory at `dst` of every block
/// of this block's cluster whose rank's bit is set in `blocks` (`0b11`: ranks 0 and 1), at the
/// same offset in each; in each block the bytes complete on the barrier at `bar`'s offset
/// (which must expect them there). One load feeds several blocks: blocks of a cluster that
/// need the same tile each load a part of it for all (`examples/gemm_bf16`). Call it from one
/// thread.
///
/// # Safety
/// As for [load_2d], in every block of `blocks`: each has the shared memory free and the
/// barrier initialised (a cluster barrier after the initialisation orders that, see
/// [crate::cluster::sync]), and none exits before the copy has landed.
#[inline]
pub unsafe fn load_2d_multicast<T>(
    map: &TensorMap,
    dst: *mut T,
    x: i32,
    y: i32,
    bar: &BarrierHandle,
    blocks: u16,
) {
    // SAFETY: forwarded to the caller.
    unsafe {
        raw::load_2d_multicast(
            dst as u64,
            map.address(),
            x,
            y,
            bar.address(),
            u32::from(blocks),
        )
    }
}

/// Starts copying the 3-D box at `(x, y, z)` of `map` into shared memory at `dst`, completing
/// on `bar`. Call it from one thread.
///
/// # Safety
/// As for [load_2d].
#[inline]
pub unsafe fn load_3d<T>(
    map: &TensorMap,
    dst: *mut T,
    x: i32,
    y: i32,
    z: i32,
    bar: &BarrierHandle,
) {
    // SAFETY: forwarded to the caller.
    unsafe { raw::load_3d(dst as u64, map.address(), x, y, z, bar.address()) }
}

/// Starts copying shared memory at `src` to the 2-D box at `(x, y)` of `map`, in this thread's
/// current group of bulk stores ([commit_group] closes it).
///
/// # Safety
/// `src` points to shared memory holding the box, aligned like a load's destination, written
/// through the generic proxy only before a [crate::sync::fence_proxy_async_shared] and a block
/// barrier, and not written again before [wait_group_read_0].
#[inline]
pub unsafe fn store_2d<T>(map: &TensorMap, src: *const T, x: i32, y: i32) {
    // SAFETY: forwarded to the caller.
    unsafe { raw::store_2d(map.address(), x, y, src as u64) }
}

/// Starts copying shared memory at `src` to the 3-D box at `(x, y, z)` of `map`.
///
/// # Safety
/// As for [store_2d].
#[inline]
pub unsafe fn store_3d<T>(map: &TensorMap, src: *const T, x: i32, y: i32, z: i32) {
    // SAFETY: forwarded to the caller.
    unsafe { raw::store_3d(map.address(), x, y, z, src as u64) }
}

/// Brings `map` into the cache ahead of the first copy.
#[inline]
pub fn prefetch(map: &TensorMap) {
    // SAFETY: `map` is a tensor map.
    unsafe { raw::prefetch_tensormap(map.address()) }
}

/// Makes a tensor map that lives in global memory (copied there, not passed as a parameter)
/// visible to the copy engine before its first use in this kernel.
#[inline]
pub fn fence_acquire(map: &TensorMap) {
    // SAFETY: `map` is a 128-byte tensor map.
    unsafe { raw::fence_tensormap_acquire(map.address()) }
}

/// Closes this thread's current group of bulk stores.
#[inline]
pub fn commit_group() {
    raw::commit_group()
}

/// Waits until this thread's committed bulk stores have read their shared memory (which may
/// then be written again).
#[inline]
pub fn wait_group_read_0() {
    raw::wait_group_read_0()
}

/// Waits until this thread's committed bulk stores have completed.
#[inline]
pub fn wait_group_0() {
    raw::wait_group_0()
}
