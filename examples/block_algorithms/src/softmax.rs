//! Row softmax, `out[r][j] = exp(x[r][j] - max_r) / Σ_k exp(x[r][k] - max_r)`, a block per row:
//! a block-wide maximum, a block-wide sum of the exponentials (both through the warp-shuffle
//! collectives), then the quotients. A second kernel first copies the row into the block's
//! dynamic shared memory, so that global memory is read once. Checked against the CPU in `f64`
//! within a bound derived from the GPU's rounding (libdevice's `expf` is within 2 ulp).

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng};

use crate::check_f32_within;

#[cuda_module]
pub mod kernels {
    use cuda_device::{DynamicSharedArray, kernel, launch_bounds, sync, thread};

    use crate::collectives::block_reduce;

    /// The softmax of `row` into `out`, shared out among the block's threads by a stride of
    /// `blockDim` (thread `t` takes elements `t`, `t + blockDim`, ...).
    fn softmax_row(row: &[f32], out: &mut [f32]) {
        let t = thread::threadIdx_x() as usize;
        let threads = thread::blockDim_x() as usize;
        let mut max = f32::NEG_INFINITY;
        for j in (t..row.len()).step_by(threads) {
            max = max.max(row[j]);
        }
        let max = block_reduce(max, f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for j in (t..row.len()).step_by(threads) {
            sum += (row[j] - max).exp();
        }
        let sum = block_reduce(sum, 0.0, |a, b| a + b);
        for j in (t..row.len()).step_by(threads) {
            out[j] = (row[j] - max).exp() / sum;
        }
    }

    /// Row softmax of the `cols`-wide rows of `x`, block `r` computing row `r`.
    #[kernel]
    #[launch_bounds(1024)]
    pub fn softmax_rows(x: &[f32], cols: u32, out: &mut [f32]) {
        let cols = cols as usize;
        let start = thread::blockIdx_x() as usize * cols;
        softmax_row(&x[start..start + cols], &mut out[start..start + cols]);
    }

    /// [`softmax_rows`] reading the row from global memory once, into the block's dynamic
    /// shared memory (`cols` floats).
    #[kernel]
    #[launch_bounds(1024)]
    pub fn softmax_rows_cached(x: &[f32], cols: u32, out: &mut [f32]) {
        let cols = cols as usize;
        let start = thread::blockIdx_x() as usize * cols;
        let t = thread::threadIdx_x() as usize;
        let threads = thread::blockDim_x() as usize;
        // SAFETY: the launch gives the block `cols` floats of dynamic shared memory; each
        // thread writes its own elements, and the barrier publishes them before any read.
        let row =
            unsafe { core::slice::from_raw_parts_mut(DynamicSharedArray::<f32>::get(), cols) };
        for j in (t..cols).step_by(threads) {
            row[j] = x[start + j];
        }
        sync::syncthreads();
        softmax_row(row, &mut out[start..start + cols]);
    }
}

/// The exact softmax of `row` (in `f64`), and for each element the bound that the GPU's
/// result keeps to: the rounding of `x - max` (relative `u·|x - max|` after `exp`), `expf`'s
/// 2 ulp, the sum (`terms - 1` sequential additions per thread, then 10 butterfly levels),
/// and the division, for the element and for the terms of the sum.
fn softmax_cpu(row: &[f32], threads: usize) -> (Vec<f64>, Vec<f64>) {
    let u = f64::from(f32::EPSILON) / 2.0;
    let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    let exps: Vec<f64> = row
        .iter()
        .map(|&v| (f64::from(v) - f64::from(max)).exp())
        .collect();
    let sum: f64 = exps.iter().sum();
    let exp_error = |v: f32| u * (f64::from(max) - f64::from(v)) + 4.0 * u;
    let worst_term = row.iter().map(|&v| exp_error(v)).fold(0.0, f64::max);
    let additions = row.len().div_ceil(threads) - 1 + 10;
    let sum_error = worst_term + additions as f64 * u;
    let exact: Vec<f64> = exps.iter().map(|e| e / sum).collect();
    let bound = exact
        .iter()
        .zip(row)
        .map(|(p, &v)| 1.01 * p * (exp_error(v) + sum_error + u) + f64::from(f32::MIN_POSITIVE))
        .collect();
    (exact, bound)
}

pub fn run(gpu: &Gpu, rng: &mut Rng) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut ok = true;
    // A row narrower than a warp, one that is no multiple of the block, and a wide one.
    for (rows, cols, threads) in [(300, 20, 64), (700, 1000, 256), (200, 4096, 1024)] {
        let x: Vec<f32> = rng.vec(rows * cols, |r| r.f32_in(-20.0, 20.0));
        let (mut exact, mut bound) = (Vec::new(), Vec::new());
        for row in x.chunks(cols) {
            let (e, b) = softmax_cpu(row, threads);
            exact.extend(e);
            bound.extend(b);
        }
        let x_dev = stream.clone_htod(&x)?;
        let mut cfg = LaunchConfig {
            grid_dim: (rows as u32, 1, 1),
            block_dim: (threads as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut out = stream.alloc_zeros::<f32>(rows * cols)?;
        module.softmax_rows(stream, cfg, &x_dev, cols as u32, &mut out)?;
        ok &= check_f32_within(
            &format!("row softmax, {rows} x {cols}, {threads} threads per row"),
            &stream.clone_dtoh(&out)?,
            &exact,
            &bound,
        );
        cfg.shared_mem_bytes = (cols * 4) as u32;
        let mut out = stream.alloc_zeros::<f32>(rows * cols)?;
        module.softmax_rows_cached(stream, cfg, &x_dev, cols as u32, &mut out)?;
        ok &= check_f32_within(
            &format!("row softmax from shared memory, {rows} x {cols}, {threads} threads per row"),
            &stream.clone_dtoh(&out)?,
            &exact,
            &bound,
        );
    }
    Ok(ok)
}
