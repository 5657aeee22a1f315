//! Reductions: block sums through a static shared array with a warp-shuffle tail; a two-pass
//! grid-stride sum through the block's dynamic shared memory, at three block sizes; block
//! minimum, maximum and sum through the warp-level collectives; and a one-launch `u64` sum of
//! a whole array with one atomic per warp. The float results are checked bit for bit against
//! the CPU replaying the same order of additions.

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check};

use crate::check_f32_exact;
use crate::collectives::{WARP, cpu};

/// Threads per block of the static-shared-memory kernels.
pub const BLOCK: usize = 256;

#[cuda_module]
pub mod kernels {
    use cuda_device::atomic::{AtomicOrdering, DeviceAtomicU64};
    use cuda_device::{DynamicSharedArray, SharedArray, kernel, launch_bounds, sync, thread};

    use super::BLOCK;
    use crate::collectives::{WARP, block_reduce, warp_reduce, warp_sum_down};

    /// `sums[b]` = the sum of `x[2 * BLOCK * b..2 * BLOCK * (b + 1)]` (zeros past the end):
    /// each thread adds two elements as it loads them, a tree in shared memory halves them
    /// down to one warp's worth, and the first warp finishes with `shuffle_down`.
    #[kernel]
    #[launch_bounds(256)]
    pub fn block_sum_static(x: &[f32], sums: &mut [f32]) {
        static mut TILE: SharedArray<f32, BLOCK> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let block = thread::blockIdx_x() as usize;
        let i = block * 2 * BLOCK + t;
        let first = x.get(i).copied().unwrap_or(0.0);
        let second = x.get(i + BLOCK).copied().unwrap_or(0.0);
        unsafe { TILE[t] = first + second };
        sync::syncthreads();
        let mut stride = BLOCK / 2;
        while stride >= WARP {
            if t < stride {
                unsafe { TILE[t] += TILE[t + stride] };
            }
            sync::syncthreads();
            stride /= 2;
        }
        if t < WARP {
            let sum = warp_sum_down(unsafe { TILE[t] });
            if t == 0 {
                sums[block] = sum;
            }
        }
    }

    /// `sums[b]` = block `b`'s share of a grid-stride sum of `x`: thread `g` of the grid adds
    /// `x[g]`, `x[g + threads of the grid]`, ... in order; the block's partial sums meet in its
    /// dynamic shared memory (`blockDim` floats, a power of two), halve down to one warp's
    /// worth, and the first warp finishes with `shuffle_down`. Launched again on `sums` with
    /// one block, it gives the total.
    #[kernel]
    pub fn block_sum_dynamic(x: &[f32], sums: &mut [f32]) {
        let threads = thread::blockDim_x() as usize;
        let t = thread::threadIdx_x() as usize;
        // SAFETY: the launch gives the block `threads` floats of dynamic shared memory; each
        // thread writes only its own element before the barrier that publishes them.
        let tile =
            unsafe { core::slice::from_raw_parts_mut(DynamicSharedArray::<f32>::get(), threads) };
        let grid_threads = threads * thread::gridDim_x() as usize;
        let mut sum = 0.0;
        for i in (thread::index_1d().get()..x.len()).step_by(grid_threads) {
            sum += x[i];
        }
        tile[t] = sum;
        sync::syncthreads();
        let mut half = threads / 2;
        while half >= WARP {
            if t < half {
                tile[t] += tile[t + half];
            }
            sync::syncthreads();
            half /= 2;
        }
        if t < WARP {
            let sum = warp_sum_down(tile[t]);
            if t == 0 {
                sums[thread::blockIdx_x() as usize] = sum;
            }
        }
    }

    /// `stats[3 b..3 b + 3]` = the minimum, maximum and sum of block `b`'s elements of `x`
    /// (one per thread), through the block-wide [`block_reduce`].
    #[kernel]
    #[launch_bounds(1024)]
    pub fn block_min_max_sum(x: &[f32], stats: &mut [f32]) {
        let i = thread::index_1d().get();
        let v = x.get(i).copied();
        let min = block_reduce(v.unwrap_or(f32::INFINITY), f32::INFINITY, f32::min);
        let max = block_reduce(v.unwrap_or(f32::NEG_INFINITY), f32::NEG_INFINITY, f32::max);
        let sum = block_reduce(v.unwrap_or(0.0), 0.0, |a, b| a + b);
        if thread::threadIdx_x() == 0 {
            let block = thread::blockIdx_x() as usize;
            let out = &mut stats[3 * block..3 * block + 3];
            out[0] = min;
            out[1] = max;
            out[2] = sum;
        }
    }

    /// `total[0] += x[0] + x[1] + ...` in 64 bits, in one launch: each thread sums a
    /// grid-stride share, each warp adds its threads' sums with butterfly shuffles, and lane 0
    /// adds the warp's sum to the total with one atomic.
    #[kernel]
    pub fn sum_u64(x: &[u32], total: &[DeviceAtomicU64]) {
        let grid_threads = (thread::blockDim_x() * thread::gridDim_x()) as usize;
        let mut sum = 0u64;
        let mut i = thread::index_1d().get();
        while i < x.len() {
            sum += u64::from(x[i]);
            i += grid_threads;
        }
        let warp_sum = warp_reduce(sum, |a, b| a + b);
        let lane = thread::threadIdx_x() as usize % WARP;
        if lane == 0 {
            total[0].fetch_add(warp_sum, AtomicOrdering::Relaxed);
        }
    }
}

/// [`kernels::block_sum_static`] on the CPU.
fn block_sum_static(x: &[f32]) -> Vec<f32> {
    x.chunks(2 * BLOCK)
        .map(|chunk| {
            let at = |i: usize| chunk.get(i).copied().unwrap_or(0.0);
            let mut tile: Vec<f32> = (0..BLOCK).map(|t| at(t) + at(t + BLOCK)).collect();
            let mut stride = BLOCK / 2;
            while stride >= WARP {
                for t in 0..stride {
                    tile[t] += tile[t + stride];
                }
                stride /= 2;
            }
            cpu::warp_sum_down(&tile[..WARP])
        })
        .collect()
}

/// [`kernels::block_sum_dynamic`] on the CPU, for `blocks` blocks of `threads` threads.
fn block_sum_dynamic(x: &[f32], blocks: usize, threads: usize) -> Vec<f32> {
    let grid_threads = blocks * threads;
    (0..blocks)
        .map(|block| {
            let mut tile: Vec<f32> = (0..threads)
                .map(|t| {
                    let mut sum = 0.0;
                    for i in (block * threads + t..x.len()).step_by(grid_threads) {
                        sum += x[i];
                    }
                    sum
                })
                .collect();
            let mut half = threads / 2;
            while half >= WARP {
                for t in 0..half {
                    tile[t] += tile[t + half];
                }
                half /= 2;
            }
            cpu::warp_sum_down(&tile[..WARP])
        })
        .collect()
}

pub fn run(gpu: &Gpu, rng: &mut Rng) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut ok = true;

    // Not a multiple of any block's share: the last blocks see the end of the input.
    let n = (1 << 22) + 12_345;
    let x: Vec<f32> = rng.vec(n, |r| r.f32_in(-1.0, 1.0));
    let x_dev = stream.clone_htod(&x)?;

    let blocks = n.div_ceil(2 * BLOCK);
    let mut sums = stream.alloc_zeros::<f32>(blocks)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    module.block_sum_static(stream, cfg, &x_dev, &mut sums)?;
    ok &= check_f32_exact(
        "block sums, static SharedArray tree + shuffle_down tail",
        &stream.clone_dtoh(&sums)?,
        &block_sum_static(&x),
    );

    // Two passes: 264 blocks of partial sums, then one block sums them.
    for threads in [128usize, 512, 1024] {
        let blocks = 264;
        let partial_cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (threads as u32, 1, 1),
            shared_mem_bytes: (threads * 4) as u32,
        };
        let mut partials = stream.alloc_zeros::<f32>(blocks)?;
        module.block_sum_dynamic(stream, partial_cfg, &x_dev, &mut partials)?;
        let total_cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            ..partial_cfg
        };
        let mut total = stream.alloc_zeros::<f32>(1)?;
        module.block_sum_dynamic(stream, total_cfg, &partials, &mut total)?;
        let expected_partials = block_sum_dynamic(&x, blocks, threads);
        let expected_total = block_sum_dynamic(&expected_partials, 1, threads);
        ok &= check_f32_exact(
            &format!("grid-stride sums, dynamic shared memory, {threads} threads: partials"),
            &stream.clone_dtoh(&partials)?,
            &expected_partials,
        );
        ok &= check_f32_exact(
            &format!("grid-stride sums, dynamic shared memory, {threads} threads: total"),
            &stream.clone_dtoh(&total)?,
            &expected_total,
        );
    }

    let threads = 1024;
    let blocks = n.div_ceil(threads);
    let mut stats = stream.alloc_zeros::<f32>(3 * blocks)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (threads as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    module.block_min_max_sum(stream, cfg, &x_dev, &mut stats)?;
    let expected: Vec<f32> = (0..blocks)
        .flat_map(|block| {
            let values = |identity: f32| -> Vec<f32> {
                (block * threads..(block + 1) * threads)
                    .map(|i| x.get(i).copied().unwrap_or(identity))
                    .collect()
            };
            let inf = f32::INFINITY;
            [
                cpu::block_reduce(&values(inf), inf, f32::min),
                cpu::block_reduce(&values(-inf), -inf, f32::max),
                cpu::block_reduce(&values(0.0), 0.0, |a, b| a + b),
            ]
        })
        .collect();
    ok &= check_f32_exact(
        "block min, max and sum, warp butterflies + shared warp results",
        &stream.clone_dtoh(&stats)?,
        &expected,
    );

    let words: Vec<u32> = rng.vec(n, |r| r.next_u64() as u32);
    let words_dev = stream.clone_htod(&words)?;
    let mut total = stream.alloc_zeros::<u64>(1)?;
    let cfg = LaunchConfig {
        grid_dim: (132, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    module.sum_u64(stream, cfg, &words_dev, &mut total)?;
    let expected: u64 = words.iter().map(|&w| u64::from(w)).sum();
    ok &= check(
        "u64 sum in one launch, one atomic per warp",
        &stream.clone_dtoh(&total)?,
        &[expected],
    );
    Ok(ok)
}
