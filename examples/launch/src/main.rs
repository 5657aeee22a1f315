//! Launch shapes: a 2-D and a 3-D grid (`thread::index_2d`, `index_3d`, the `y`/`z` special
//! registers), `#[block_dims]` (a kernel written for 32 x 8 blocks runs with them and refuses
//! others), and `#[launch_bounds]`: a bounded kernel runs with blocks within its bound, and
//! the launcher refuses larger blocks with an error instead of the driver's
//! `CUDA_ERROR_INVALID_VALUE`.

use std::process::ExitCode;

use cuda_host::{Error, LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// What the 2-D kernel computes for the element in column `x` of row `y`.
pub fn cell(value: f32, x: usize, y: usize) -> f32 {
    value * 2.0 + (x + 1000 * y) as f32
}

/// What the 3-D kernel writes for `(x, y, z)`, and the block and grid shape it saw.
pub fn point(x: usize, y: usize, z: usize, shape: [u32; 6]) -> u32 {
    let [bx, by, bz, gx, gy, gz] = shape;
    (x as u32) | (y as u32) << 8 | (z as u32) << 16 | (bx * by * bz + gx * gy * gz) << 24
}

#[cuda_module]
mod kernels {
    use cuda_device::shared::SharedArray;
    use cuda_device::{DisjointSlice, block_dims, kernel, launch_bounds, sync, thread};

    /// One thread per element of a `width`-wide row-major matrix, on a 2-D grid.
    #[kernel]
    pub fn grid_2d(a: &[f32], width: usize, mut out: DisjointSlice<f32>) {
        if let Some(i) = thread::index_2d(width)
            && let Some(slot) = out.get_mut(i)
        {
            let (x, y) = thread::global_2d();
            *slot = super::cell(a[i.get()], x, y);
        }
    }

    /// One thread per point of a `width × height × depth` box, on a 3-D grid.
    #[kernel]
    pub fn grid_3d(width: usize, height: usize, mut out: DisjointSlice<u32>) {
        if let Some(i) = thread::index_3d(width, height)
            && let Some(slot) = out.get_mut(i)
        {
            let (x, y, z) = thread::global_3d();
            let shape = [
                thread::blockDim_x(),
                thread::blockDim_y(),
                thread::blockDim_z(),
                thread::gridDim_x(),
                thread::gridDim_y(),
                thread::gridDim_z(),
            ];
            *slot = super::point(x, y, z, shape);
        }
    }

    /// `out = inᵀ` for a `height × width` matrix through a 32 × 33 shared tile, written for
    /// blocks of exactly 32 × 8 threads: with `#[block_dims]` the compiler knows the thread
    /// indices' ranges (the tile's bounds checks fold away) and the launcher refuses others.
    #[kernel]
    #[block_dims(32, 8)]
    pub fn transpose(input: &[f32], width: usize, height: usize, out: &mut [f32]) {
        static mut TILE: SharedArray<f32, { 32 * 33 }> = SharedArray::UNINIT;
        let (bx, by) = (
            thread::blockIdx_x() as usize * 32,
            thread::blockIdx_y() as usize * 32,
        );
        let (tx, ty) = (
            thread::threadIdx_x() as usize,
            thread::threadIdx_y() as usize,
        );
        for j in (0..32).step_by(8) {
            let (x, y) = (bx + tx, by + ty + j);
            if x < width && y < height {
                unsafe { TILE[(ty + j) * 33 + tx] = input[y * width + x] };
            }
        }
        sync::syncthreads();
        for j in (0..32).step_by(8) {
            let (x, y) = (by + tx, bx + ty + j);
            if x < height && y < width {
                out[y * height + x] = unsafe { TILE[tx * 33 + ty + j] };
            }
        }
    }

    /// `out[i] = a[i] + 1`, for blocks of at most 128 threads, 4 blocks per multiprocessor.
    #[kernel]
    #[launch_bounds(128, 4)]
    pub fn bounded(a: &[u32], mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = a[i.get()] + 1;
        }
    }
}

fn main() -> ExitCode {
    run_example("launch", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(7);
    let mut ok = true;

    // 2-D: 1000 x 300, blocks of 32 x 8, the grid rounded up on both axes.
    let (width, height) = (1000usize, 300usize);
    let a = rng.vec(width * height, |r| r.f32_in(-10.0, 10.0));
    let a_dev = gpu.stream.clone_htod(&a)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(width * height)?;
    let cfg = LaunchConfig {
        grid_dim: (width.div_ceil(32) as u32, height.div_ceil(8) as u32, 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    module.grid_2d(&gpu.stream, cfg, &a_dev, width, &mut out)?;
    let expected: Vec<f32> = (0..width * height)
        .map(|i| cell(a[i], i % width, i / width))
        .collect();
    ok &= check(
        "2-D grid, index_2d",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );

    // 3-D: 20 x 12 x 5, blocks of 8 x 4 x 2.
    let (w, h, d) = (20usize, 12usize, 5usize);
    let block = (8u32, 4u32, 2u32);
    let grid = (
        w.div_ceil(8) as u32,
        h.div_ceil(4) as u32,
        d.div_ceil(2) as u32,
    );
    let mut out = gpu.stream.alloc_zeros::<u32>(w * h * d)?;
    let cfg = LaunchConfig {
        grid_dim: grid,
        block_dim: block,
        shared_mem_bytes: 0,
    };
    module.grid_3d(&gpu.stream, cfg, w, h, &mut out)?;
    let shape = [block.0, block.1, block.2, grid.0, grid.1, grid.2];
    let expected: Vec<u32> = (0..w * h * d)
        .map(|i| point(i % w, (i / w) % h, i / (w * h), shape))
        .collect();
    ok &= check(
        "3-D grid, index_3d",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );

    // A declared block shape: 32 x 8 blocks transpose a 700 x 333 matrix; 16 x 16 are refused.
    let (width, height) = (700usize, 333usize);
    let m = rng.vec(width * height, |r| r.f32_in(-10.0, 10.0));
    let m_dev = gpu.stream.clone_htod(&m)?;
    let mut t_dev = gpu.stream.alloc_zeros::<f32>(width * height)?;
    let tiles = (width.div_ceil(32) as u32, height.div_ceil(32) as u32, 1);
    let shaped = LaunchConfig {
        grid_dim: tiles,
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    module.transpose(&gpu.stream, shaped, &m_dev, width, height, &mut t_dev)?;
    let expected: Vec<f32> = (0..width * height)
        .map(|i| m[(i % height) * width + i / height])
        .collect();
    ok &= check(
        "#[block_dims(32, 8)] transpose through a shared tile",
        &gpu.stream.clone_dtoh(&t_dev)?,
        &expected,
    );
    let square = LaunchConfig {
        block_dim: (16, 16, 1),
        ..shaped
    };
    match module.transpose(&gpu.stream, square, &m_dev, width, height, &mut t_dev) {
        Err(Error::BadLaunchConfig { problem, .. })
            if problem.contains("#[block_dims(32, 8, 1)]") =>
        {
            println!("ok   16 x 16 blocks refused: {problem}");
        }
        other => {
            println!("FAIL 16 x 16 blocks on a kernel declared 32 x 8: {other:?}");
            ok = false;
        }
    }

    // Launch bounds: 128 threads per block run; 256 are refused before the driver sees them.
    let n = 10_000usize;
    let a: Vec<u32> = rng.vec(n, |r| (r.next_u64() % 1_000_000) as u32);
    let a_dev = gpu.stream.clone_htod(&a)?;
    let mut out = gpu.stream.alloc_zeros::<u32>(n)?;
    let within = LaunchConfig {
        grid_dim: (n.div_ceil(128) as u32, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    module.bounded(&gpu.stream, within, &a_dev, &mut out)?;
    let expected: Vec<u32> = a.iter().map(|v| v + 1).collect();
    ok &= check(
        "#[launch_bounds(128, 4)] with 128 threads",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );
    let beyond = LaunchConfig {
        grid_dim: (n.div_ceil(256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    match module.bounded(&gpu.stream, beyond, &a_dev, &mut out) {
        Err(Error::BadLaunchConfig { problem, .. }) if problem.contains("the 128 this kernel") => {
            println!("ok   256 threads refused: {problem}");
        }
        other => {
            println!("FAIL 256 threads on a kernel bounded to 128: {other:?}");
            ok = false;
        }
    }
    Ok(ok)
}
