//! Synchronisation within a block.

use crate::intrinsic::host_call;

/// Waits until every thread of the block has reached this call, and makes their earlier writes
/// to shared and global memory visible to the block (`__syncthreads()`, PTX `bar.sync 0`).
/// Intrinsic.
///
/// Every thread of the block must reach the same call: calling it under a condition that
/// differs between threads of a block is undefined behaviour on the GPU.
#[inline(never)]
pub fn syncthreads() {
    host_call("cuda_device::sync::syncthreads")
}
