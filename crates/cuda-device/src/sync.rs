//! Synchronisation within a block, and memory fences.
//!
//! Every thread of the block must reach the same barrier call (`syncthreads*`, `bar_red_*`):
//! calling one under a condition that differs between the threads of a block is undefined
//! behaviour on the GPU. Fences have no such rule.

use crate::intrinsic::stubs;

stubs! { "sync";
    /// Waits until every thread of the block has reached this call, and makes their earlier
    /// writes to shared and global memory visible to the block (`__syncthreads()`, PTX
    /// `bar.sync 0`). Intrinsic.
    pub fn syncthreads();
    /// `bar.sync 0`, then returns how many threads of the block passed a non-zero `pred`
    /// (PTX `bar.red.popc.u32`; [`syncthreads_count`] takes a `bool`). Intrinsic.
    pub fn bar_red_popc(pred: u32) -> u32;
    /// `bar.sync 0`, then returns 1 if every thread of the block passed a non-zero `pred`,
    /// else 0 (PTX `bar.red.and.pred`; see [`syncthreads_and`]). Intrinsic.
    pub fn bar_red_and(pred: u32) -> u32;
    /// `bar.sync 0`, then returns 1 if some thread of the block passed a non-zero `pred`,
    /// else 0 (PTX `bar.red.or.pred`; see [`syncthreads_or`]). Intrinsic.
    pub fn bar_red_or(pred: u32) -> u32;
    /// Orders this thread's memory accesses as every thread of the GPU sees them: the ones
    /// before the fence before the ones after it (`__threadfence()`, PTX `fence.sc.gpu`).
    /// Intrinsic.
    pub fn threadfence();
    /// Orders this thread's memory accesses as the threads of its block see them
    /// (`__threadfence_block()`, PTX `fence.sc.cta`). Intrinsic.
    pub fn threadfence_block();
    /// Orders this thread's memory accesses as every thread of the system sees them, the host
    /// and other GPUs included (`__threadfence_system()`, PTX `fence.sc.sys`). Intrinsic.
    pub fn threadfence_system();
    /// Orders this thread's shared-memory accesses of the generic proxy (ordinary loads and
    /// stores) with those of the asynchronous proxy (TMA copies, `wgmma` operands): write shared
    /// memory, call this, then a barrier, before the copy engine or the tensor cores read it
    /// (`fence.proxy.async.shared::cta`; sm_90). Intrinsic.
    pub fn fence_proxy_async_shared();
    /// Like [`fence_proxy_async_shared`], in every state space (`fence.proxy.async`; sm_90).
    /// Intrinsic.
    pub fn fence_proxy_async();
}

/// Waits like [`syncthreads`], then returns the number of threads of the block whose `pred`
/// is `true` (`__syncthreads_count(pred)`).
#[inline]
pub fn syncthreads_count(pred: bool) -> u32 {
    bar_red_popc(pred as u32)
}

/// Waits like [`syncthreads`], then returns whether `pred` is `true` in every thread of the
/// block (`__syncthreads_and(pred)`).
#[inline]
pub fn syncthreads_and(pred: bool) -> bool {
    bar_red_and(pred as u32) != 0
}

/// Waits like [`syncthreads`], then returns whether `pred` is `true` in some thread of the
/// block (`__syncthreads_or(pred)`).
#[inline]
pub fn syncthreads_or(pred: bool) -> bool {
    bar_red_or(pred as u32) != 0
}
