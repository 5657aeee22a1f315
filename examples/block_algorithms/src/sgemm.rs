//! Tiled SGEMM, `c = a × b` for row-major `m × k` and `k × n` matrices of any shape, on a 2-D
//! grid: 16 × 16 tiles of `a` and `b` staged in shared memory with one output per thread; and
//! 64 × 64 tiles with each thread accumulating a 4 × 4 block of outputs in registers. Checked
//! against the CPU in `f64`, each element within the classic bound of a dot product of length
//! `k` computed in `f32` (`γ_k Σ|a_ip||b_pj|`, `γ_k = k u / (1 - k u)`).

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng};

use crate::check_f32_within;

/// The side of the tiles of the one-output-per-thread kernel (and of its blocks).
pub const TILE: usize = 16;
/// The side of the block tiles of the register-blocked kernel.
pub const BIG_TILE: usize = 64;
/// The depth of the slices of `a` and `b` that the register-blocked kernel stages at a time.
pub const DEPTH: usize = 8;
/// Outputs per thread along each axis in the register-blocked kernel (blocks of 16 × 16).
pub const PER_THREAD: usize = BIG_TILE / 16;

#[cuda_module]
pub mod kernels {
    use cuda_device::{DisjointSlice, SharedArray, kernel, launch_bounds, sync, thread};

    use super::{BIG_TILE, DEPTH, PER_THREAD, TILE};

    /// `c = a × b`, one output per thread of a 2-D grid of 16 × 16 blocks: each step stages
    /// a 16 × 16 tile of `a` and one of `b` in shared memory (zeros past the edges) and adds
    /// their products.
    #[kernel]
    #[launch_bounds(256)]
    pub fn sgemm_tiled(a: &[f32], b: &[f32], m: u32, n: u32, k: u32, mut c: DisjointSlice<f32>) {
        static mut A_TILE: SharedArray<[f32; TILE], TILE> = SharedArray::UNINIT;
        static mut B_TILE: SharedArray<[f32; TILE], TILE> = SharedArray::UNINIT;
        let (m, n, k) = (m as usize, n as usize, k as usize);
        let (tx, ty) = (
            thread::threadIdx_x() as usize,
            thread::threadIdx_y() as usize,
        );
        let (col, row) = thread::global_2d();
        let mut acc = 0.0f32;
        for step in (0..k).step_by(TILE) {
            let (a_col, b_row) = (step + tx, step + ty);
            unsafe {
                A_TILE[ty][tx] = if row < m && a_col < k {
                    a[row * k + a_col]
                } else {
                    0.0
                };
                B_TILE[ty][tx] = if b_row < k && col < n {
                    b[b_row * n + col]
                } else {
                    0.0
                };
            }
            sync::syncthreads();
            for p in 0..TILE {
                acc += unsafe { A_TILE[ty][p] * B_TILE[p][tx] };
            }
            sync::syncthreads();
        }
        if row < m
            && let Some(i) = thread::index_2d(n)
            && let Some(out) = c.get_mut(i)
        {
            *out = acc;
        }
    }

    /// `c = a × b`, a 64 × 64 tile of `c` per block of 16 × 16 threads, each thread adding up
    /// a 4 × 4 block of outputs in registers (rows `ty + 16 i`, columns `tx + 16 j`). Each
    /// step stages 64 × 8 of `a` (transposed, so that a thread's four values of a column are
    /// one row of the tile) and 8 × 64 of `b` in shared memory.
    #[kernel]
    #[launch_bounds(256)]
    pub fn sgemm_register_blocked(a: &[f32], b: &[f32], m: u32, n: u32, k: u32, c: &mut [f32]) {
        static mut A_T: SharedArray<[f32; BIG_TILE], DEPTH> = SharedArray::UNINIT;
        static mut B_S: SharedArray<[f32; BIG_TILE], DEPTH> = SharedArray::UNINIT;
        let (m, n, k) = (m as usize, n as usize, k as usize);
        let (tx, ty) = (
            thread::threadIdx_x() as usize,
            thread::threadIdx_y() as usize,
        );
        let t = ty * 16 + tx;
        let row0 = thread::blockIdx_y() as usize * BIG_TILE;
        let col0 = thread::blockIdx_x() as usize * BIG_TILE;
        let mut acc = [[0.0f32; PER_THREAD]; PER_THREAD];
        for step in (0..k).step_by(DEPTH) {
            // The block's 256 threads stage the 512 values of each operand's slice: two each,
            // consecutive threads reading consecutive values of a row.
            const THREADS: usize = 256;
            for e in (t..BIG_TILE * DEPTH).step_by(THREADS) {
                let (r, p) = (e / DEPTH, e % DEPTH);
                let (row, col) = (row0 + r, step + p);
                let value = if row < m && col < k {
                    a[row * k + col]
                } else {
                    0.0
                };
                unsafe { A_T[p][r] = value };
                let (p, cc) = (e / BIG_TILE, e % BIG_TILE);
                let (row, col) = (step + p, col0 + cc);
                let value = if row < k && col < n {
                    b[row * n + col]
                } else {
                    0.0
                };
                unsafe { B_S[p][cc] = value };
            }
            sync::syncthreads();
            for p in 0..DEPTH {
                let mut a_frag = [0.0f32; PER_THREAD];
                let mut b_frag = [0.0f32; PER_THREAD];
                for i in 0..PER_THREAD {
                    a_frag[i] = unsafe { A_T[p][ty + 16 * i] };
                    b_frag[i] = unsafe { B_S[p][tx + 16 * i] };
                }
                for i in 0..PER_THREAD {
                    for j in 0..PER_THREAD {
                        acc[i][j] += a_frag[i] * b_frag[j];
                    }
                }
            }
            sync::syncthreads();
        }
        for i in 0..PER_THREAD {
            for j in 0..PER_THREAD {
                let (row, col) = (row0 + ty + 16 * i, col0 + tx + 16 * j);
                if row < m && col < n {
                    c[row * n + col] = acc[i][j];
                }
            }
        }
    }
}

/// `a × b` in `f64`, and for each element its bound: `γ_k Σ_p |a_ip b_pj|`.
fn sgemm_cpu(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> (Vec<f64>, Vec<f64>) {
    let u = f64::from(f32::EPSILON) / 2.0;
    let gamma = k as f64 * u / (1.0 - k as f64 * u);
    let mut exact = vec![0.0f64; m * n];
    let mut magnitude = vec![0.0f64; m * n];
    for i in 0..m {
        for p in 0..k {
            let a_ip = f64::from(a[i * k + p]);
            let row = i * n..(i + 1) * n;
            let b_row = &b[p * n..(p + 1) * n];
            for ((e, mag), &b_pj) in exact[row.clone()]
                .iter_mut()
                .zip(&mut magnitude[row])
                .zip(b_row)
            {
                *e += a_ip * f64::from(b_pj);
                *mag += (a_ip * f64::from(b_pj)).abs();
            }
        }
    }
    let bound = magnitude
        .iter()
        .map(|mag| gamma * mag + f64::from(f32::MIN_POSITIVE))
        .collect();
    (exact, bound)
}

pub fn run(gpu: &Gpu, rng: &mut Rng) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut ok = true;
    // No side is a multiple of a tile; k is not a multiple of the staging depth.
    let (m, n, k) = (300, 413, 257);
    let a: Vec<f32> = rng.vec(m * k, |r| r.f32_in(-1.0, 1.0));
    let b: Vec<f32> = rng.vec(k * n, |r| r.f32_in(-1.0, 1.0));
    let (exact, bound) = sgemm_cpu(&a, &b, m, n, k);
    let (a_dev, b_dev) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
    let dims = (m as u32, n as u32, k as u32);

    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(TILE) as u32, m.div_ceil(TILE) as u32, 1),
        block_dim: (TILE as u32, TILE as u32, 1),
        shared_mem_bytes: 0,
    };
    let mut c = stream.alloc_zeros::<f32>(m * n)?;
    module.sgemm_tiled(stream, cfg, &a_dev, &b_dev, dims.0, dims.1, dims.2, &mut c)?;
    ok &= check_f32_within(
        &format!("SGEMM {m}x{k} by {k}x{n}, 16x16 shared tiles, 2-D grid"),
        &stream.clone_dtoh(&c)?,
        &exact,
        &bound,
    );

    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(BIG_TILE) as u32, m.div_ceil(BIG_TILE) as u32, 1),
        block_dim: (16, 16, 1),
        shared_mem_bytes: 0,
    };
    let mut c = stream.alloc_zeros::<f32>(m * n)?;
    module.sgemm_register_blocked(stream, cfg, &a_dev, &b_dev, dims.0, dims.1, dims.2, &mut c)?;
    ok &= check_f32_within(
        &format!("SGEMM {m}x{k} by {k}x{n}, 64x64 shared tiles, 4x4 outputs per thread"),
        &stream.clone_dtoh(&c)?,
        &exact,
        &bound,
    );
    Ok(ok)
}
