//! What the CPU device costs (docs/cpu.md, "Speed"): two kernels as a user writes them, run
//! on the device, against the same Rust computation written as plain loops and compiled for the
//! host. On the CPU device (`CUDA_OXIDE_DEVICE=cpu`) the ratio is the price of the execution
//! model (fibers, barriers, the runtime's calls); on a GPU it is only informative.
//!
//! - vecadd over 2^24 floats (no barrier: a block's threads run one after another);
//! - SGEMM 256x256x256 with 16x16 shared-memory tiles (two barriers per tile: a fiber per
//!   thread).
//!
//! Each is run once to warm up, then `RUNS` times; the median wall time of a launch plus its
//! synchronisation is printed with the median of the loops, and the results are checked
//! against the loops' (exactly for vecadd; SGEMM within a relative 1e-4, the loops sum in the
//! same order so they agree exactly on the CPU device).

use std::process::ExitCode;
use std::time::Instant;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

const TILE: usize = 16;

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, SharedArray, kernel, sync, thread};

    const TILE: usize = 16;

    #[kernel]
    pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        if let Some(c_elem) = c.get_mut(idx) {
            *c_elem = a[idx.get()] + b[idx.get()];
        }
    }

    /// `c = a * b` for `n x n` matrices, `n` a multiple of 16, one output per thread.
    #[kernel]
    pub fn sgemm_tiled(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>, n: u32) {
        static mut TILE_A: SharedArray<f32, 256> = SharedArray::UNINIT;
        static mut TILE_B: SharedArray<f32, 256> = SharedArray::UNINIT;
        let n = n as usize;
        let tx = thread::threadIdx_x() as usize;
        let ty = thread::threadIdx_y() as usize;
        let row = thread::blockIdx_y() as usize * TILE + ty;
        let col = thread::blockIdx_x() as usize * TILE + tx;
        let mut sum = 0.0f32;
        for t in 0..n / TILE {
            unsafe {
                TILE_A[ty * TILE + tx] = a[row * n + t * TILE + tx];
                TILE_B[ty * TILE + tx] = b[(t * TILE + ty) * n + col];
            }
            sync::syncthreads();
            for k in 0..TILE {
                sum += unsafe { TILE_A[ty * TILE + k] * TILE_B[k * TILE + tx] };
            }
            sync::syncthreads();
        }
        if let Some(out) = thread::index_2d(n).and_then(|i| c.get_mut(i)) {
            *out = sum;
        }
    }
}

const RUNS: usize = 5;

/// The median of `RUNS` timings of `f` (seconds), after one run to warm up.
fn median(mut f: impl FnMut()) -> f64 {
    f();
    let mut times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[RUNS / 2]
}

/// The tiled SGEMM's arithmetic as plain loops: each output sums its products tile by tile, in
/// the kernel's order.
fn sgemm_loops(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    for row in 0..n {
        for col in 0..n {
            let mut sum = 0.0f32;
            for t in 0..n / TILE {
                for k in 0..TILE {
                    sum += a[row * n + t * TILE + k] * b[(t * TILE + k) * n + col];
                }
            }
            c[row * n + col] = sum;
        }
    }
}

fn main() -> ExitCode {
    run_example("cpu_speed", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let device = if cuda_host::cpu_device_requested() {
        "the CPU device"
    } else {
        "the GPU"
    };
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(3);
    let mut ok = true;

    const N: usize = 1 << 24;
    let a = rng.vec(N, |r| r.f32_in(-100.0, 100.0));
    let b = rng.vec(N, |r| r.f32_in(-100.0, 100.0));
    let (a_dev, b_dev) = (gpu.stream.clone_htod(&a)?, gpu.stream.clone_htod(&b)?);
    let mut c_dev = gpu.stream.alloc_zeros::<f32>(N)?;
    let kernel = median(|| {
        module
            .vecadd(
                &gpu.stream,
                LaunchConfig::for_num_elems(N as u32),
                &a_dev,
                &b_dev,
                &mut c_dev,
            )
            .and_then(|()| gpu.stream.synchronize().map_err(Into::into))
            .expect("vecadd launch");
    });
    let mut c = vec![0.0f32; N];
    let loops = median(|| {
        for i in 0..N {
            c[i] = std::hint::black_box(a[i]) + b[i];
        }
    });
    ok &= check("vecadd 2^24", &gpu.stream.clone_dtoh(&c_dev)?, &c);
    println!(
        "vecadd 2^24: {:.2} ms on {device}, {:.2} ms as plain loops: {:.1}x",
        kernel * 1e3,
        loops * 1e3,
        kernel / loops
    );

    const M: usize = 256;
    let a = rng.vec(M * M, |r| r.f32_in(-1.0, 1.0));
    let b = rng.vec(M * M, |r| r.f32_in(-1.0, 1.0));
    let (a_dev, b_dev) = (gpu.stream.clone_htod(&a)?, gpu.stream.clone_htod(&b)?);
    let mut c_dev = gpu.stream.alloc_zeros::<f32>(M * M)?;
    let cfg = LaunchConfig {
        grid_dim: ((M / TILE) as u32, (M / TILE) as u32, 1),
        block_dim: (TILE as u32, TILE as u32, 1),
        shared_mem_bytes: 0,
    };
    let kernel = median(|| {
        module
            .sgemm_tiled(&gpu.stream, cfg, &a_dev, &b_dev, &mut c_dev, M as u32)
            .and_then(|()| gpu.stream.synchronize().map_err(Into::into))
            .expect("sgemm launch");
    });
    let mut c = vec![0.0f32; M * M];
    let loops = median(|| sgemm_loops(std::hint::black_box(&a), &b, &mut c, M));
    ok &= check(
        "SGEMM 256^3, 16x16 tiles",
        &gpu.stream.clone_dtoh(&c_dev)?,
        &c,
    );
    println!(
        "SGEMM 256^3: {:.2} ms on {device}, {:.2} ms as plain loops: {:.1}x",
        kernel * 1e3,
        loops * 1e3,
        kernel / loops
    );
    Ok(ok)
}
