//! Shared memory: a block sum with a static `SharedArray` (tree reduction), the same with the
//! block's dynamic shared memory (one launch above 48 KiB, which the launcher allows itself), a
//! 32×33 tiled transpose on a 2-D launch, and a 1-D stencil whose tiles carry a halo.

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// Threads per block of the reductions and the stencil.
pub const BLOCK: usize = 256;
/// The side of a transpose tile; its rows are padded to 33 so that a column of the tile is in
/// 32 different shared memory banks.
pub const TILE: usize = 32;
/// Rows of a transpose tile each thread row handles in turn (blocks are 32 × 8 threads).
pub const TILE_ROWS: usize = 8;
/// The stencil reaches this far on each side.
pub const RADIUS: usize = 3;
/// The stencil's weights, from `-RADIUS` to `+RADIUS`.
pub const WEIGHTS: [f32; 2 * RADIUS + 1] = [0.5, -1.0, 2.0, 0.25, 2.0, -1.0, 0.5];

/// The stencil at `i`, on the CPU: the same sum in the same order as the GPU's, with zeros
/// outside `x`.
pub fn stencil_at(x: &[f32], i: usize) -> f32 {
    let mut sum = 0.0;
    for (k, w) in WEIGHTS.iter().enumerate() {
        let j = (i + k).checked_sub(RADIUS);
        let v = j.and_then(|j| x.get(j)).copied().unwrap_or(0.0);
        sum += w * v;
    }
    sum
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, DynamicSharedArray, SharedArray, kernel, sync, thread};

    use super::{BLOCK, RADIUS, TILE, TILE_ROWS, WEIGHTS};

    /// `out[b]` = the sum of block `b`'s elements of `x`, by a tree reduction in a static
    /// shared array. Blocks have `BLOCK` threads.
    #[kernel]
    pub fn block_sum(x: &[f32], out: &mut [f32]) {
        static mut PARTIAL: SharedArray<f32, BLOCK> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let i = thread::index_1d().get();
        unsafe { PARTIAL[t] = if i < x.len() { x[i] } else { 0.0 } };
        sync::syncthreads();
        let mut stride = BLOCK / 2;
        while stride > 0 {
            if t < stride {
                unsafe { PARTIAL[t] += PARTIAL[t + stride] };
            }
            sync::syncthreads();
            stride /= 2;
        }
        if t == 0 {
            out[thread::blockIdx_x() as usize] = unsafe { PARTIAL[0] };
        }
    }

    /// The same sum over `per_thread` elements per thread, staged in the block's dynamic
    /// shared memory: `blockDim * per_thread` values, then `blockDim` partial sums after them.
    #[kernel]
    pub fn block_sum_dynamic(x: &[f32], per_thread: u32, out: &mut [f32]) {
        let n = thread::blockDim_x() as usize;
        let m = per_thread as usize;
        let t = thread::threadIdx_x() as usize;
        let base = thread::blockIdx_x() as usize * n * m;
        let values = DynamicSharedArray::<f32>::get();
        let partial = DynamicSharedArray::<f32>::offset(n * m * 4);
        // Coalesced loads: element k*n + t of the block goes to values[k*n + t].
        for k in 0..m {
            let g = base + k * n + t;
            unsafe { *values.add(k * n + t) = if g < x.len() { x[g] } else { 0.0 } };
        }
        sync::syncthreads();
        // Each thread sums a run of m values other threads loaded.
        let mut sum = 0.0;
        for k in 0..m {
            sum += unsafe { *values.add(t * m + k) };
        }
        unsafe { *partial.add(t) = sum };
        sync::syncthreads();
        let mut stride = n / 2;
        while stride > 0 {
            if t < stride {
                unsafe { *partial.add(t) += *partial.add(t + stride) };
            }
            sync::syncthreads();
            stride /= 2;
        }
        if t == 0 {
            out[thread::blockIdx_x() as usize] = unsafe { *partial };
        }
    }

    /// `out` (height × width... transposed: width rows of height) = `input` (height rows of
    /// width) transposed, through a 32 × 33 tile; blocks are 32 × 8 threads.
    #[kernel]
    pub fn transpose(input: &[f32], width: u32, height: u32, out: &mut [f32]) {
        static mut TILE_DATA: SharedArray<f32, { TILE * (TILE + 1) }, 16> = SharedArray::UNINIT;
        let (w, h) = (width as usize, height as usize);
        let (tx, ty) = (
            thread::threadIdx_x() as usize,
            thread::threadIdx_y() as usize,
        );
        let (bx, by) = (
            thread::blockIdx_x() as usize * TILE,
            thread::blockIdx_y() as usize * TILE,
        );
        let mut j = 0;
        while j < TILE {
            let (x, y) = (bx + tx, by + ty + j);
            if x < w && y < h {
                unsafe { TILE_DATA[(ty + j) * (TILE + 1) + tx] = input[y * w + x] };
            }
            j += TILE_ROWS;
        }
        sync::syncthreads();
        let mut j = 0;
        while j < TILE {
            let (x, y) = (by + tx, bx + ty + j);
            if x < h && y < w {
                out[y * h + x] = unsafe { TILE_DATA[tx * (TILE + 1) + ty + j] };
            }
            j += TILE_ROWS;
        }
    }

    /// `out[i]` = the weighted sum of `x[i - RADIUS ..= i + RADIUS]` (zeros outside `x`), from a
    /// shared tile of the block's elements and a halo of `RADIUS` on each side.
    #[kernel]
    pub fn stencil(x: &[f32], mut out: DisjointSlice<f32>) {
        static mut WINDOW: SharedArray<f32, { BLOCK + 2 * RADIUS }> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let index = thread::index_1d();
        let i = index.get();
        let at = |j: usize| if j < x.len() { x[j] } else { 0.0 };
        unsafe {
            WINDOW[t + RADIUS] = at(i);
            if t < RADIUS {
                WINDOW[t] = if i >= RADIUS { at(i - RADIUS) } else { 0.0 };
                WINDOW[t + BLOCK + RADIUS] = at(i + BLOCK);
            }
        }
        sync::syncthreads();
        if let Some(slot) = out.get_mut(index) {
            let mut sum = 0.0;
            for (k, w) in WEIGHTS.iter().enumerate() {
                sum += w * unsafe { WINDOW[t + k] };
            }
            *slot = sum;
        }
    }
}

fn main() -> ExitCode {
    run_example("shared_memory", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(3);
    let mut ok = true;

    // Small integers: every sum is exact, whatever the order.
    const N: usize = 1 << 20;
    let x: Vec<f32> = rng.vec(N, |r| (r.next_u64() % 64) as f32 - 32.0);
    let x_dev = gpu.stream.clone_htod(&x)?;
    let blocks = N.div_ceil(BLOCK);
    let mut sums = gpu.stream.alloc_zeros::<f32>(blocks)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    module.block_sum(&gpu.stream, cfg, &x_dev, &mut sums)?;
    let expected: Vec<f32> = x.chunks(BLOCK).map(|c| c.iter().sum()).collect();
    ok &= check(
        "block sum (SharedArray)",
        &gpu.stream.clone_dtoh(&sums)?,
        &expected,
    );

    // 4 and 64 values per thread: 4 KiB + 1 KiB, then 64 KiB + 1 KiB of dynamic shared memory.
    for per_thread in [4usize, 64] {
        let chunk = BLOCK * per_thread;
        let blocks = N.div_ceil(chunk);
        let mut sums = gpu.stream.alloc_zeros::<f32>(blocks)?;
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (BLOCK as u32, 1, 1),
            shared_mem_bytes: ((chunk + BLOCK) * 4) as u32,
        };
        module.block_sum_dynamic(&gpu.stream, cfg, &x_dev, per_thread as u32, &mut sums)?;
        let expected: Vec<f32> = x.chunks(chunk).map(|c| c.iter().sum()).collect();
        ok &= check(
            &format!(
                "block sum (dynamic shared memory, {} bytes)",
                cfg.shared_mem_bytes
            ),
            &gpu.stream.clone_dtoh(&sums)?,
            &expected,
        );
    }

    // A matrix whose sides are not multiples of the tile.
    let (w, h) = (1000usize, 777usize);
    let m: Vec<f32> = rng.vec(w * h, |r| r.f32_in(-1.0, 1.0));
    let m_dev = gpu.stream.clone_htod(&m)?;
    let mut t_dev = gpu.stream.alloc_zeros::<f32>(w * h)?;
    let cfg = LaunchConfig {
        grid_dim: (w.div_ceil(TILE) as u32, h.div_ceil(TILE) as u32, 1),
        block_dim: (TILE as u32, TILE_ROWS as u32, 1),
        shared_mem_bytes: 0,
    };
    module.transpose(&gpu.stream, cfg, &m_dev, w as u32, h as u32, &mut t_dev)?;
    let mut expected = vec![0.0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            expected[x * h + y] = m[y * w + x];
        }
    }
    ok &= check(
        "tiled transpose 32x33",
        &gpu.stream.clone_dtoh(&t_dev)?,
        &expected,
    );

    let s: Vec<f32> = rng.vec(N + 77, |r| r.f32_in(-4.0, 4.0));
    let s_dev = gpu.stream.clone_htod(&s)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(s.len())?;
    let cfg = LaunchConfig {
        grid_dim: (s.len().div_ceil(BLOCK) as u32, 1, 1),
        block_dim: (BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    module.stencil(&gpu.stream, cfg, &s_dev, &mut out)?;
    let expected: Vec<f32> = (0..s.len()).map(|i| stencil_at(&s, i)).collect();
    ok &= check(
        "1-D stencil with halo",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );
    Ok(ok)
}
