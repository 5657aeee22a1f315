//! Prefix sums of `u32` (wrapping, so any input is valid): an inclusive scan within blocks of
//! 1024 threads built from warp scans (`shuffle_up`), an exclusive scan within blocks of 512
//! elements by Blelloch's up-sweep and down-sweep in shared memory, and scans of whole arrays
//! across blocks: scan each block, scan the block totals (recursively), add each block's offset.

use std::sync::Arc;

use cuda_host::{CudaSlice, CudaStream, LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check};

/// Threads (and elements) per block of the warp-scan kernel.
pub const WARP_SCAN_THREADS: usize = 1024;
/// Threads per block of the Blelloch kernel; each handles two elements.
pub const BLELLOCH_THREADS: usize = 256;
/// Elements per block of the Blelloch kernel.
pub const BLELLOCH_ITEMS: usize = 2 * BLELLOCH_THREADS;

#[cuda_module]
pub mod kernels {
    use cuda_device::{DisjointSlice, SharedArray, kernel, launch_bounds, sync, thread};

    use super::{BLELLOCH_ITEMS, BLELLOCH_THREADS};
    use crate::collectives::block_inclusive_scan;

    /// Within each block: `out[i]` = the wrapping sum of the block's elements of `x` up to and
    /// including `i`, and `totals[b]` = block `b`'s sum (one element per thread).
    #[kernel]
    pub fn scan_inclusive_blocks(x: &[u32], mut out: DisjointSlice<u32>, totals: &mut [u32]) {
        let i = thread::index_1d();
        let value = x.get(i.get()).copied().unwrap_or(0);
        let (inclusive, total) = block_inclusive_scan(value);
        if let Some(slot) = out.get_mut(i) {
            *slot = inclusive;
        }
        if thread::threadIdx_x() == 0 {
            totals[thread::blockIdx_x() as usize] = total;
        }
    }

    /// Within each block of `BLELLOCH_ITEMS` elements: `out[i]` = the wrapping sum of the
    /// block's elements before `i`, and `totals[b]` = block `b`'s sum. Blelloch's
    /// work-efficient scan: an up-sweep builds a tree of partial sums in place, the root is
    /// cleared, and a down-sweep pushes the prefixes back down.
    #[kernel]
    #[launch_bounds(256)]
    pub fn scan_exclusive_blelloch(x: &[u32], out: &mut [u32], totals: &mut [u32]) {
        static mut TREE: SharedArray<u32, BLELLOCH_ITEMS> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let block = thread::blockIdx_x() as usize;
        let base = block * BLELLOCH_ITEMS;
        for j in (t..BLELLOCH_ITEMS).step_by(BLELLOCH_THREADS) {
            unsafe { TREE[j] = x.get(base + j).copied().unwrap_or(0) };
        }
        let mut offset = 1;
        let mut active = BLELLOCH_ITEMS / 2;
        while active > 0 {
            sync::syncthreads();
            if t < active {
                let left = offset * (2 * t + 1) - 1;
                let right = offset * (2 * t + 2) - 1;
                unsafe { TREE[right] = TREE[right].wrapping_add(TREE[left]) };
            }
            offset *= 2;
            active /= 2;
        }
        if t == 0 {
            unsafe {
                totals[block] = TREE[BLELLOCH_ITEMS - 1];
                TREE[BLELLOCH_ITEMS - 1] = 0;
            }
        }
        let mut active = 1;
        while active < BLELLOCH_ITEMS {
            offset /= 2;
            sync::syncthreads();
            if t < active {
                let left = offset * (2 * t + 1) - 1;
                let right = offset * (2 * t + 2) - 1;
                unsafe {
                    let below = TREE[left];
                    TREE[left] = TREE[right];
                    TREE[right] = TREE[right].wrapping_add(below);
                }
            }
            active *= 2;
        }
        sync::syncthreads();
        for j in (t..BLELLOCH_ITEMS).step_by(BLELLOCH_THREADS) {
            if let Some(slot) = out.get_mut(base + j) {
                *slot = unsafe { TREE[j] };
            }
        }
    }

    /// `out[i] += offsets[i / per_block]` (wrapping): block `b`'s results of a block-wise scan
    /// become the whole array's once `offsets[b]` is the sum of every element before block `b`.
    #[kernel]
    pub fn add_block_offsets(offsets: &[u32], per_block: u32, mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = slot.wrapping_add(offsets[i.get() / per_block as usize]);
        }
    }
}

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// One block-wise scan of `x`: each block's scan in `out`, and the blocks' totals.
fn scan_blocks(
    module: &kernels::Module,
    stream: &Arc<CudaStream>,
    x: &CudaSlice<u32>,
    inclusive: bool,
) -> Result<(CudaSlice<u32>, CudaSlice<u32>)> {
    let (threads, per_block) = if inclusive {
        (WARP_SCAN_THREADS, WARP_SCAN_THREADS)
    } else {
        (BLELLOCH_THREADS, BLELLOCH_ITEMS)
    };
    let blocks = x.len().div_ceil(per_block);
    let mut out = stream.alloc_zeros::<u32>(x.len())?;
    let mut totals = stream.alloc_zeros::<u32>(blocks)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (threads as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    if inclusive {
        module.scan_inclusive_blocks(stream, cfg, x, &mut out, &mut totals)?;
    } else {
        module.scan_exclusive_blelloch(stream, cfg, x, &mut out, &mut totals)?;
    }
    Ok((out, totals))
}

/// The inclusive or exclusive scan of the whole of `x`: block-wise scans, then the exclusive
/// scan of the block totals (by this same function) added to each block.
fn scan(
    module: &kernels::Module,
    stream: &Arc<CudaStream>,
    x: &CudaSlice<u32>,
    inclusive: bool,
) -> Result<CudaSlice<u32>> {
    let (mut out, totals) = scan_blocks(module, stream, x, inclusive)?;
    if totals.len() > 1 {
        let offsets = scan(module, stream, &totals, false)?;
        let per_block = if inclusive {
            WARP_SCAN_THREADS
        } else {
            BLELLOCH_ITEMS
        };
        let cfg = LaunchConfig::for_num_elems(out.len() as u32);
        module.add_block_offsets(stream, cfg, &offsets, per_block as u32, &mut out)?;
    }
    Ok(out)
}

/// The exclusive (`inclusive == false`) or inclusive scan of `x` on the CPU, restarting at
/// every multiple of `per_block`.
fn scan_cpu(x: &[u32], per_block: usize, inclusive: bool) -> Vec<u32> {
    x.chunks(per_block)
        .flat_map(|block| {
            block.iter().scan(0u32, move |sum, &v| {
                let before = *sum;
                *sum = sum.wrapping_add(v);
                Some(if inclusive { *sum } else { before })
            })
        })
        .collect()
}

/// The wrapping sum of each `per_block` elements of `x`.
fn totals_cpu(x: &[u32], per_block: usize) -> Vec<u32> {
    x.chunks(per_block)
        .map(|block| block.iter().fold(0u32, |s, &v| s.wrapping_add(v)))
        .collect()
}

pub fn run(gpu: &Gpu, rng: &mut Rng) -> Result<bool> {
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut ok = true;

    // Full-range values: the sums wrap around many times.
    let n = (1 << 22) + 1_001;
    let x: Vec<u32> = rng.vec(n, |r| r.next_u64() as u32);
    let x_dev = stream.clone_htod(&x)?;

    for (inclusive, per_block, how) in [
        (true, WARP_SCAN_THREADS, "inclusive, warp scans"),
        (false, BLELLOCH_ITEMS, "exclusive, Blelloch"),
    ] {
        let (out, totals) = scan_blocks(&module, stream, &x_dev, inclusive)?;
        ok &= check(
            &format!("block prefix sums, {how}, {per_block} per block"),
            &stream.clone_dtoh(&out)?,
            &scan_cpu(&x, per_block, inclusive),
        );
        ok &= check(
            &format!("block totals, {how}"),
            &stream.clone_dtoh(&totals)?,
            &totals_cpu(&x, per_block),
        );
        let whole = scan(&module, stream, &x_dev, inclusive)?;
        ok &= check(
            &format!("prefix sum of {n} values across blocks, {how}, block totals scanned"),
            &stream.clone_dtoh(&whole)?,
            &scan_cpu(&x, n, inclusive),
        );
    }
    Ok(ok)
}
