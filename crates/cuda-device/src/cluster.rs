//! Thread-block clusters (sm_90): a cluster's blocks run at the same time on one GPU processing
//! cluster and can read and write each other's shared memory (distributed shared memory). A
//! launch without clusters is a cluster of one block, where these functions still work.
//! Names follow CUDA's (`clusterIdx_x`, like `thread::blockIdx_x`).
//!
//! A kernel gets its cluster shape from `#[cluster_dims(x, y, z)]` (CUDA's `__cluster_dims__`;
//! PTX `.explicitcluster` and `.reqnctapercluster`): every launch of it, an ordinary one, is a
//! cluster launch, and its grid must be a multiple of the shape. Blocks of a cluster share
//! work through [map_shared_rank] (distributed shared memory), TMA multicast
//! (`tma::load_2d_multicast`) and arrivals at each other's barriers
//! (`mbarrier::raw::arrive_cluster`); [sync] orders a barrier's initialisation before the other
//! blocks use it, and keeps a block from exiting while the others may still reach into it.

#![allow(non_snake_case)]

use crate::intrinsic::stubs;

stubs! { "cluster";
    /// The block's rank within its cluster, `0..num_blocks()` (`%cluster_ctarank`). Intrinsic.
    pub fn block_rank() -> u32;
    /// The number of blocks of the cluster (`%cluster_nctarank`). Intrinsic.
    pub fn num_blocks() -> u32;
    /// The cluster's x index within the grid (`%clusterid.x`). Intrinsic.
    pub fn clusterIdx_x() -> u32;
    /// The cluster's y index within the grid (`%clusterid.y`). Intrinsic.
    pub fn clusterIdx_y() -> u32;
    /// The cluster's z index within the grid (`%clusterid.z`). Intrinsic.
    pub fn clusterIdx_z() -> u32;
    /// Blocks per cluster along x (`%cluster_nctaid.x`). Intrinsic.
    pub fn clusterDim_x() -> u32;
    /// The block's x index within its cluster (`%cluster_ctaid.x`). Intrinsic.
    pub fn blockIdx_in_cluster_x() -> u32;
    /// Orders this thread's memory accesses for the threads of its cluster
    /// (`fence.acq_rel.cluster`). Intrinsic.
    pub fn fence();
}

/// The instructions.
pub mod raw {
    use super::*;

    stubs! { "cluster::raw";
        /// Arrives at the cluster barrier, release (`barrier.cluster.arrive.release.aligned`).
        /// Every thread of the cluster arrives once per phase. Intrinsic.
        pub fn arrive();
        /// Waits for the cluster barrier, acquire (`barrier.cluster.wait.acquire.aligned`).
        /// Intrinsic.
        pub fn wait();
        /// The generic address, in the shared memory of block `rank` of the cluster, of what
        /// `addr` (a generic address into this block's shared memory) is in this block
        /// (`mapa.u64`). Intrinsic.
        pub fn map_shared(addr: u64, rank: u32) -> u64;
    }
}

/// Waits until every thread of every block of the cluster has called it; their earlier writes
/// (shared memory of any block of the cluster included) are then visible (`barrier.cluster.
/// arrive.release` + `barrier.cluster.wait.acquire`, CUDA's `cluster.sync()`). Every thread of
/// the cluster calls it.
#[inline]
pub fn sync() {
    raw::arrive();
    raw::wait();
}

/// The pointer to what `ptr` (into this block's shared memory) points to, in the shared memory
/// of block `rank` of the cluster: distributed shared memory. Dereferencing it is valid while
/// that block runs (bracket the accesses with [sync]).
#[inline]
pub fn map_shared_rank<T>(ptr: *mut T, rank: u32) -> *mut T {
    raw::map_shared(ptr as u64, rank) as *mut T
}
