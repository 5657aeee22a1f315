//! The tensor memory accelerator (`cuda_device::tma`, sm_90): tensor maps built on the host
//! (`cuda_host::tma::tiled`) and passed to kernels as grid constants (`&TensorMap`
//! parameters); 2-D loads into shared memory completing on an mbarrier, 2-D stores back to
//! global memory; 3-D loads with zero fill past the tensor's edges; a 128-byte swizzled box
//! read back in order. Each is checked against the CPU on random data, on sizes that are not
//! multiples of the box.

use std::process::ExitCode;

use cuda_host::tma::{self, Swizzle};
use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// Side of the square boxes of `tile_copy`.
pub const TILE: usize = 32;
/// The 3-D box of `box_sums`: x, y, z.
pub const BOX3: [usize; 3] = [16, 8, 2];
/// Columns (u16) of the swizzled matrix: one 128-byte row.
pub const SW_COLS: usize = 64;
/// Rows of one swizzled box.
pub const SW_ROWS: usize = 8;

#[cuda_module]
mod kernels {
    use cuda_device::mbarrier::Barrier;
    use cuda_device::tma::{self, TensorMap};
    use cuda_device::{SharedArray, kernel, sync, thread};

    use super::{BOX3, SW_COLS, SW_ROWS, TILE};

    /// Block (bx, by) loads the `TILE × TILE` box at (bx·TILE, by·TILE) of `src` into shared
    /// memory, each thread doubles its row and adds one, and the box goes to `dst` with a TMA
    /// store. Blocks of `TILE` threads.
    #[kernel]
    pub fn tile_copy(src: &TensorMap, dst: &TensorMap) {
        static mut BAR: SharedArray<Barrier, 1> = SharedArray::UNINIT;
        static mut BOX: SharedArray<f32, { TILE * TILE }, 128> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let x = (thread::blockIdx_x() as usize * TILE) as i32;
        let y = (thread::blockIdx_y() as usize * TILE) as i32;
        let tile: *mut f32 = (&raw mut BOX).cast();
        // SAFETY: shared memory used by nothing else; every thread calls `init`.
        let mut bar = unsafe { Barrier::init((&raw mut BAR).cast(), 1) };
        if t == 0 {
            tma::prefetch(src);
            let _ = bar.arrive_expect_tx((TILE * TILE * 4) as u32);
            // SAFETY: `BOX` holds the box, aligned to 128 bytes; read after the wait only.
            unsafe { tma::load_2d(src, tile, x, y, &bar) };
        }
        bar.wait();
        for c in 0..TILE {
            // SAFETY: thread `t` alone writes row `t`, after the load completed.
            unsafe {
                let v = tile.add(t * TILE + c);
                *v = *v * 2.0 + 1.0;
            }
        }
        // The copy engine reads what the threads wrote: fence, then meet.
        sync::fence_proxy_async_shared();
        sync::syncthreads();
        if t == 0 {
            // SAFETY: the box is complete and nothing writes it until the store has read it.
            unsafe { tma::store_2d(dst, tile, x, y) };
            tma::commit_group();
            tma::wait_group_0();
        }
    }

    /// Block (bx, by, bz) loads the 3-D box at (bx, by, bz) × `BOX3` of `src` and writes the
    /// sum of its elements (zeros past the tensor's edges) to `out[block]`. Blocks of 32
    /// threads.
    #[kernel]
    pub fn box_sums(src: &TensorMap, out: &mut [f32]) {
        static mut BAR: SharedArray<Barrier, 1> = SharedArray::UNINIT;
        static mut BOX: SharedArray<f32, { BOX3[0] * BOX3[1] * BOX3[2] }, 128> =
            SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let (bx, by, bz) = (
            thread::blockIdx_x() as usize,
            thread::blockIdx_y() as usize,
            thread::blockIdx_z() as usize,
        );
        let cells: *mut f32 = (&raw mut BOX).cast();
        // SAFETY: as above.
        let mut bar = unsafe { Barrier::init((&raw mut BAR).cast(), 1) };
        if t == 0 {
            let _ = bar.arrive_expect_tx((BOX3[0] * BOX3[1] * BOX3[2] * 4) as u32);
            // SAFETY: `BOX` holds the box, aligned to 128 bytes.
            unsafe {
                tma::load_3d(
                    src,
                    cells,
                    (bx * BOX3[0]) as i32,
                    (by * BOX3[1]) as i32,
                    (bz * BOX3[2]) as i32,
                    &bar,
                )
            };
        }
        bar.wait();
        if t == 0 {
            let mut sum = 0.0f32;
            for k in 0..BOX3[0] * BOX3[1] * BOX3[2] {
                // SAFETY: the load completed.
                sum += unsafe { *cells.add(k) };
            }
            let grid = (thread::gridDim_x() as usize, thread::gridDim_y() as usize);
            out[(bz * grid.1 + by) * grid.0 + bx] = sum;
        }
    }

    /// Block `b` loads rows `b·SW_ROWS ..` of a `SW_COLS`-column `u16` matrix with the 128-byte
    /// swizzle, and writes them back in order into `out`, undoing the swizzle: the 16-byte
    /// chunk `j` of row `r` lies at chunk `j ^ (r % 8)`. Blocks of `SW_ROWS` threads.
    #[kernel]
    pub fn unswizzle(src: &TensorMap, out: &mut [u16]) {
        static mut BAR: SharedArray<Barrier, 1> = SharedArray::UNINIT;
        static mut BOX: SharedArray<u16, { SW_COLS * SW_ROWS }, 1024> = SharedArray::UNINIT;
        let r = thread::threadIdx_x() as usize;
        let b = thread::blockIdx_x() as usize;
        let cells: *mut u16 = (&raw mut BOX).cast();
        // SAFETY: as above.
        let mut bar = unsafe { Barrier::init((&raw mut BAR).cast(), 1) };
        if r == 0 {
            let _ = bar.arrive_expect_tx((SW_COLS * SW_ROWS * 2) as u32);
            // SAFETY: `BOX` holds the box, aligned to 1024 bytes as the swizzle needs.
            unsafe { tma::load_2d(src, cells, 0, (b * SW_ROWS) as i32, &bar) };
        }
        bar.wait();
        for c in 0..SW_COLS {
            let chunk = (c / 8) ^ (r % 8);
            // SAFETY: the load completed; the index stays inside the box.
            let v = unsafe { *cells.add(r * SW_COLS + chunk * 8 + c % 8) };
            out[(b * SW_ROWS + r) * SW_COLS + c] = v;
        }
    }
}

fn main() -> ExitCode {
    run_example("tma_copy", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut rng = Rng::new(1990);
    let mut ok = true;

    // 2-D: a 200 × 300 matrix (rows × columns), boxes of 32 × 32.
    let (rows, cols) = (200usize, 300usize);
    let a: Vec<f32> = rng.vec(rows * cols, |r| r.f32_in(-4.0, 4.0));
    let a_dev = stream.clone_htod(&a)?;
    let b_dev = stream.alloc_zeros::<f32>(rows * cols)?;
    let dims = [cols as u64, rows as u64];
    let boxes = [TILE as u32, TILE as u32];
    let src = tma::tiled(stream, &a_dev, &dims, &boxes, Swizzle::None)?;
    let dst = tma::tiled(stream, &b_dev, &dims, &boxes, Swizzle::None)?;
    let cfg = LaunchConfig {
        grid_dim: (cols.div_ceil(TILE) as u32, rows.div_ceil(TILE) as u32, 1),
        block_dim: (TILE as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    module.tile_copy(stream, cfg, &src, &dst)?;
    let expected: Vec<f32> = a.iter().map(|v| v * 2.0 + 1.0).collect();
    ok &= check(
        "2-D TMA load, transform, TMA store (200 x 300, 32 x 32 boxes)",
        &stream.clone_dtoh(&b_dev)?,
        &expected,
    );
    drop(b_dev);

    // 3-D: 40 × 20 × 5 (x fastest), boxes of 16 × 8 × 2: every edge box reaches past the end.
    let (nx, ny, nz) = (40usize, 20usize, 5usize);
    let t: Vec<f32> = rng.vec(nx * ny * nz, |r| r.f32_in(0.0, 1.0));
    let t_dev = stream.clone_htod(&t)?;
    let map3 = tma::tiled(
        stream,
        &t_dev,
        &[nx as u64, ny as u64, nz as u64],
        &[BOX3[0] as u32, BOX3[1] as u32, BOX3[2] as u32],
        Swizzle::None,
    )?;
    let grid = (
        nx.div_ceil(BOX3[0]),
        ny.div_ceil(BOX3[1]),
        nz.div_ceil(BOX3[2]),
    );
    let mut sums_dev = stream.alloc_zeros::<f32>(grid.0 * grid.1 * grid.2)?;
    let cfg = LaunchConfig {
        grid_dim: (grid.0 as u32, grid.1 as u32, grid.2 as u32),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    module.box_sums(stream, cfg, &map3, &mut sums_dev)?;
    let mut expected = Vec::new();
    for bz in 0..grid.2 {
        for by in 0..grid.1 {
            for bx in 0..grid.0 {
                let mut sum = 0.0f32;
                for z in 0..BOX3[2] {
                    for y in 0..BOX3[1] {
                        for x in 0..BOX3[0] {
                            let (gx, gy, gz) =
                                (bx * BOX3[0] + x, by * BOX3[1] + y, bz * BOX3[2] + z);
                            if gx < nx && gy < ny && gz < nz {
                                sum += t[(gz * ny + gy) * nx + gx];
                            }
                        }
                    }
                }
                expected.push(sum);
            }
        }
    }
    ok &= check(
        "3-D TMA loads with zero fill (40 x 20 x 5, 16 x 8 x 2 boxes)",
        &stream.clone_dtoh(&sums_dev)?,
        &expected,
    );

    // 128-byte swizzle: 64 rows of 64 u16.
    let sw_rows = 64usize;
    let m: Vec<u16> = rng.vec(sw_rows * SW_COLS, |r| r.next_u64() as u16);
    let m_dev = stream.clone_htod(&m)?;
    let map = tma::tiled(
        stream,
        &m_dev,
        &[SW_COLS as u64, sw_rows as u64],
        &[SW_COLS as u32, SW_ROWS as u32],
        Swizzle::B128,
    )?;
    let mut out_dev = stream.alloc_zeros::<u16>(sw_rows * SW_COLS)?;
    let cfg = LaunchConfig {
        grid_dim: ((sw_rows / SW_ROWS) as u32, 1, 1),
        block_dim: (SW_ROWS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    module.unswizzle(stream, cfg, &map, &mut out_dev)?;
    ok &= check(
        "128-byte swizzled TMA load, read back in order",
        &stream.clone_dtoh(&out_dev)?,
        &m,
    );

    // A tensor map the copy engine cannot describe is an error, not a crash.
    let refused = tma::tiled(stream, &m_dev, &[SW_COLS as u64], &[300], Swizzle::None);
    let refused_ok = matches!(refused, Err(cuda_host::Error::TensorMap(_)));
    println!(
        "{} an invalid box is refused: {}",
        if refused_ok { "ok  " } else { "FAIL" },
        refused.err().map(|e| e.to_string()).unwrap_or_default()
    );
    ok &= refused_ok;
    Ok(ok)
}
