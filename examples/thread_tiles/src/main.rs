//! Shared-memory tiles indexed by the thread, in kernels that declare no block size: the
//! compiler tests the block's size once per block and runs a copy of the kernel without the
//! tile's bounds checks when none can fail (`llvm_to_ptx::block_versioning`), the checked
//! kernel otherwise.
//!
//! Each kernel runs with several block shapes on random data and must match the CPU: shapes
//! the tile fits (the copy runs), and a shape whose extra threads never touch the tile (the
//! test fails, the checked kernel runs and computes the same). Then the checked kernel itself,
//! in a process of its own (a failed check breaks the CUDA context): a block one row taller
//! than the tile indexes past its end and must stop, with the panic message in a build with
//! panic messages (the dev profile), with a fault in a release build.

use std::process::ExitCode;

use cuda_host::{Error, LaunchConfig, cuda_module, synchronize};
use example_support::{Gpu, Rng, case_in_own_process, check, gpu, run_example, stop_verdict};

/// Rows and padded columns of the tile: 16 rows of 17 (a block of at most 17 × 16 threads).
pub const ROWS: usize = 16;
pub const COLS: usize = 17;

/// What the kernels compute, on the CPU. A block of `w × h` threads owns `w * h` consecutive
/// elements, row `ty` of the block holding `w` of them.
pub mod cpu {
    /// Each block's rows in reverse order.
    pub fn flip_rows(x: &[u32], w: usize, h: usize) -> Vec<u32> {
        let mut out = vec![0; x.len()];
        for (b, block) in x.chunks(w * h).enumerate() {
            for ty in 0..h {
                for tx in 0..w {
                    out[b * w * h + ty * w + tx] = block[(h - 1 - ty) * w + tx];
                }
            }
        }
        out
    }

    /// The rows below `rows` of each block in reverse order among themselves, the others
    /// copied; with `shift`, each row also rotated left by `shift` within the first `cols`.
    pub fn flip_first_rows(x: &[u32], w: usize, h: usize, rows: usize, shift: usize) -> Vec<u32> {
        let mut out = x.to_vec();
        for (b, block) in x.chunks(w * h).enumerate() {
            for ty in 0..rows.min(h) {
                for tx in 0..w {
                    let from_row = rows.min(h) - 1 - ty;
                    let from_col = (tx + shift) % w;
                    out[b * w * h + ty * w + tx] = block[from_row * w + from_col];
                }
            }
        }
        out
    }
}

#[cuda_module]
mod kernels {
    use cuda_device::{SharedArray, kernel, sync, thread};

    use super::{COLS, ROWS};

    /// Each block's rows in reverse order, through a tile: `tile[ty * 17 + tx]` is written,
    /// `tile[(h - 1 - ty) * 17 + tx]` read (a coefficient of -17 on `ty`).
    #[kernel]
    pub fn flip_rows(x: &[u32], out: &mut [u32]) {
        static mut TILE: SharedArray<u32, { ROWS * COLS }> = SharedArray::UNINIT;
        let (tx, ty) = (thread::threadIdx_x(), thread::threadIdx_y());
        let (w, h) = (thread::blockDim_x(), thread::blockDim_y());
        let base = thread::blockIdx_x() as usize * (w * h) as usize;
        let g = base + (ty * w + tx) as usize;
        unsafe { TILE[ty as usize * COLS + tx as usize] = x[g] };
        sync::syncthreads();
        out[g] = unsafe { TILE[(h - 1 - ty) as usize * COLS + tx as usize] };
    }

    /// The same for the rows below `rows` only (the others copied, not staged), each row also
    /// rotated left by `shift`: blocks taller than the tile run it correctly when `rows` fits.
    #[kernel]
    pub fn flip_first_rows(x: &[u32], rows: u32, shift: u32, out: &mut [u32]) {
        static mut TILE: SharedArray<u32, { ROWS * COLS }> = SharedArray::UNINIT;
        let (tx, ty) = (thread::threadIdx_x(), thread::threadIdx_y());
        let (w, h) = (thread::blockDim_x(), thread::blockDim_y());
        let rows = rows.min(h);
        let base = thread::blockIdx_x() as usize * (w * h) as usize;
        let g = base + (ty * w + tx) as usize;
        if ty < rows {
            unsafe { TILE[ty as usize * COLS + tx as usize] = x[g] };
        }
        sync::syncthreads();
        out[g] = if ty < rows {
            let col = (tx + shift) % w;
            unsafe { TILE[(rows - 1 - ty) as usize * COLS + col as usize] }
        } else {
            x[g]
        };
    }
}

const CASE: &str = "--case";

/// The case whose blocks are one row taller than the tile.
const TALLER: &str = "taller_than_the_tile";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, name] = args.as_slice()
        && flag == CASE
    {
        return run_case(name);
    }
    run_example("thread_tiles", |gpu| {
        let mut ok = in_bounds(gpu)?;
        ok &= case_in_own_process(&[CASE, TALLER], TALLER)?;
        Ok(ok)
    })
}

fn launch(blocks: usize, w: usize, h: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (w as u32, h as u32, 1),
        shared_mem_bytes: 0,
    }
}

/// Both kernels with block shapes the tile fits, and blocks taller than it whose extra rows
/// leave it alone.
fn in_bounds(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let s = &gpu.stream;
    let mut rng = Rng::new(1729);
    let mut ok = true;
    for (w, h) in [(16, 16), (17, 16), (8, 4), (1, 1), (17, 1), (3, 16)] {
        let blocks = 37;
        let x = rng.vec(blocks * w * h, |r| r.next_u64() as u32);
        let mut out = s.alloc_zeros::<u32>(x.len())?;
        module.flip_rows(s, launch(blocks, w, h), &s.clone_htod(&x)?, &mut out)?;
        ok &= check(
            &format!("flip_rows, blocks of {w}x{h}"),
            &s.clone_dtoh(&out)?,
            &cpu::flip_rows(&x, w, h),
        );
    }
    // (16, 40) and (17, 20): taller than the tile, so the test before the kernel fails.
    for (w, h, rows) in [
        (16, 16, 16),
        (5, 9, 7),
        (16, 40, 16),
        (17, 20, 11),
        (12, 64, 3),
    ] {
        let blocks = 23;
        let shift = (rng.next_u64() % 40) as usize;
        let x = rng.vec(blocks * w * h, |r| r.next_u64() as u32);
        let mut out = s.alloc_zeros::<u32>(x.len())?;
        module.flip_first_rows(
            s,
            launch(blocks, w, h),
            &s.clone_htod(&x)?,
            rows as u32,
            shift as u32,
            &mut out,
        )?;
        ok &= check(
            &format!("flip_first_rows {rows} of {w}x{h}, shift {shift}"),
            &s.clone_dtoh(&out)?,
            &cpu::flip_first_rows(&x, w, h, rows, shift),
        );
    }
    Ok(ok)
}

/// `flip_rows` with blocks of 16 × 17 threads: row 16 indexes the tile at 272, its length.
fn run_case(name: &str) -> ExitCode {
    let gpu = match gpu("thread_tiles") {
        Ok(gpu) => gpu,
        Err(code) => return code,
    };
    let run = || -> Result<(), Error> {
        let module = kernels::load(&gpu.ctx)?;
        let s = &gpu.stream;
        let (w, h) = (16, ROWS + 1);
        let x = vec![7u32; 2 * w * h];
        let mut out = s.alloc_zeros::<u32>(x.len())?;
        module.flip_rows(s, launch(2, w, h), &s.clone_htod(&x)?, &mut out)?;
        synchronize(s)
    };
    let expected = format!("the len is {} but the index is", ROWS * COLS);
    let outcome = run().map(|()| Some("the kernel ran to its end past its tile".to_owned()));
    stop_verdict(name, outcome, |message| {
        message.starts_with("index out of bounds") && message.contains(&expected)
    })
}
