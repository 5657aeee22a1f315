//! Warpgroup matrix multiplies (`cuda_device::wgmma`, sm_90a: build with `--arch sm_90a`):
//! one warpgroup computes `D = A · Bᵀ` for a 64 × 64 tile with K = 64 (bf16 and f16 inputs, f32
//! accumulators), and a 64 × 128 tile over a K loop of runtime length (the accumulators stay in
//! registers across the loop). `A` (M × K) and `B` (N × K) are row-major, so both are K-major;
//! TMA loads them into 128-byte swizzled shared memory, which the matrix descriptors describe.
//! Inputs are multiples of 1/4 in [-2, 2], so every product and sum is exact in f32: the
//! results must equal the CPU's exactly.

use std::process::ExitCode;

use cuda_host::tma::{self, Swizzle};
use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// Rows of a tile (one warpgroup's `M`).
pub const M: usize = 64;
/// K of one TMA box: 64 bf16 = one 128-byte swizzled row.
pub const KB: usize = 64;
/// Columns of the loop kernel's tile.
pub const N_LOOP: usize = 128;

#[cuda_module]
mod kernels {
    use cuda_device::mbarrier::Barrier;
    use cuda_device::shared::shared_address;
    use cuda_device::tma::{self, TensorMap};
    use cuda_device::wgmma::{self, Fragment, Input, Swizzle};
    use cuda_device::{SharedArray, kernel, sync, thread};

    use super::{KB, M, N_LOOP};

    /// The descriptor of K step `kk` (16 elements, 32 bytes) of a K-major tile of 128-byte
    /// swizzled rows at shared address `base`: 8-row groups 1024 bytes apart.
    fn k_step(base: u32, kk: u32) -> u64 {
        wgmma::descriptor(base + kk * 32, 16, 1024, Swizzle::B128)
    }

    /// `d` (64 × 64, row-major) = `A[0..64, 0..64] · B[0..64, 0..64]ᵀ`, for one block of 128
    /// threads.
    fn single_tile(a: &TensorMap, b: &TensorMap, d: &mut [f32], input: Input) {
        static mut BAR: SharedArray<Barrier, 1> = SharedArray::UNINIT;
        static mut SA: SharedArray<u16, { M * KB }, 1024> = SharedArray::UNINIT;
        static mut SB: SharedArray<u16, { 64 * KB }, 1024> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let sa: *mut u16 = (&raw mut SA).cast();
        let sb: *mut u16 = (&raw mut SB).cast();
        // SAFETY: shared memory used by nothing else; every thread calls `init`.
        let mut bar = unsafe { Barrier::init((&raw mut BAR).cast(), 1) };
        if t == 0 {
            let _ = bar.arrive_expect_tx(((M + 64) * KB * 2) as u32);
            // SAFETY: the tiles hold the boxes, aligned to 1024 bytes for the swizzle.
            unsafe {
                tma::load_2d(a, sa, 0, 0, &bar);
                tma::load_2d(b, sb, 0, 0, &bar);
            }
        }
        bar.wait();
        let (a0, b0) = (shared_address(sa), shared_address(sb));
        let mut acc = <[f32; 32]>::zeroed();
        wgmma::fence();
        for kk in 0..(KB / 16) as u32 {
            // SAFETY: the whole warpgroup runs this; the tiles were loaded (barrier phase
            // complete); `acc` is read only after the wait below.
            acc = unsafe { wgmma::mma_async(acc, k_step(a0, kk), k_step(b0, kk), input, kk > 0) };
        }
        wgmma::commit_group();
        wgmma::wait_group::<0>();
        acc.for_each(|i, value| {
            let (row, col) = wgmma::fragment_position(t, i);
            d[row * 64 + col] = value;
        });
    }

    /// [single_tile] on bf16 inputs.
    #[kernel]
    pub fn tile_bf16(a: &TensorMap, b: &TensorMap, d: &mut [f32]) {
        single_tile(a, b, d, Input::Bf16);
    }

    /// [single_tile] on f16 inputs.
    #[kernel]
    pub fn tile_f16(a: &TensorMap, b: &TensorMap, d: &mut [f32]) {
        single_tile(a, b, d, Input::F16);
    }

    /// `d` (64 × 128) = `A[0..64, 0..K] · B[0..128, 0..K]ᵀ` with `K = 64 · k_tiles`: per K
    /// tile, a TMA load of both boxes, four `mma_async` steps of 16 into the same
    /// accumulators, and a block barrier before the next load overwrites the tiles.
    #[kernel]
    pub fn k_loop_bf16(a: &TensorMap, b: &TensorMap, d: &mut [f32], k_tiles: u32) {
        static mut BAR: SharedArray<Barrier, 1> = SharedArray::UNINIT;
        static mut SA: SharedArray<u16, { M * KB }, 1024> = SharedArray::UNINIT;
        static mut SB: SharedArray<u16, { N_LOOP * KB }, 1024> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let sa: *mut u16 = (&raw mut SA).cast();
        let sb: *mut u16 = (&raw mut SB).cast();
        // SAFETY: as above.
        let mut bar = unsafe { Barrier::init((&raw mut BAR).cast(), 1) };
        let (a0, b0) = (shared_address(sa), shared_address(sb));
        let mut acc = <[f32; 64]>::zeroed();
        for kt in 0..k_tiles {
            if t == 0 {
                let _ = bar.arrive_expect_tx(((M + N_LOOP) * KB * 2) as u32);
                let k = (kt as usize * KB) as i32;
                // SAFETY: the tiles are free (block barrier at the end of the last step).
                unsafe {
                    tma::load_2d(a, sa, k, 0, &bar);
                    tma::load_2d(b, sb, k, 0, &bar);
                }
            }
            bar.wait();
            wgmma::fence();
            for kk in 0..(KB / 16) as u32 {
                // SAFETY: as above.
                acc = unsafe {
                    wgmma::mma_async(
                        acc,
                        k_step(a0, kk),
                        k_step(b0, kk),
                        Input::Bf16,
                        kt > 0 || kk > 0,
                    )
                };
            }
            wgmma::commit_group();
            wgmma::wait_group::<0>();
            sync::syncthreads();
        }
        acc.for_each(|i, value| {
            let (row, col) = wgmma::fragment_position(t, i);
            d[row * N_LOOP + col] = value;
        });
    }
}

fn main() -> ExitCode {
    run_example("wgmma_tile", run)
}

/// The bf16 bits of `v` (exact for the inputs used here).
fn bf16_bits(v: f32) -> u16 {
    (v.to_bits() >> 16) as u16
}

/// The f16 bits of `v`, a normal number or zero with at most 11 significant bits.
fn f16_bits(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let bits = v.to_bits();
    let sign = ((bits >> 31) as u16) << 15;
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let mantissa = ((bits >> 13) & 0x3ff) as u16;
    sign | ((exp as u16) << 10) | mantissa
}

/// `D = A · Bᵀ` on the CPU (`A` is `m × k`, `B` is `n × k`).
fn matmul_nt(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut d = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            d[i * n + j] = (0..k).map(|x| a[i * k + x] * b[j * k + x]).sum();
        }
    }
    d
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut rng = Rng::new(2023);
    let quarter = |r: &mut Rng| (r.next_u64() % 17) as f32 / 4.0 - 2.0;
    let mut ok = true;
    let one_block = |threads| LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };

    // 64 × 64 × 64, bf16 and f16.
    let a: Vec<f32> = rng.vec(M * KB, quarter);
    let b: Vec<f32> = rng.vec(64 * KB, quarter);
    let expected = matmul_nt(&a, &b, M, 64, KB);
    let convert: [(&str, fn(f32) -> u16); 2] = [("bf16", bf16_bits), ("f16", f16_bits)];
    for (name, bits) in convert {
        let a_dev = stream.clone_htod(&a.iter().map(|&v| bits(v)).collect::<Vec<u16>>())?;
        let b_dev = stream.clone_htod(&b.iter().map(|&v| bits(v)).collect::<Vec<u16>>())?;
        let box_dims = [KB as u32, 64];
        let a_map = tma::tiled(
            stream,
            &a_dev,
            &[KB as u64, M as u64],
            &box_dims,
            Swizzle::B128,
        )?;
        let b_map = tma::tiled(stream, &b_dev, &[KB as u64, 64], &box_dims, Swizzle::B128)?;
        let mut d_dev = stream.alloc_zeros::<f32>(M * 64)?;
        if name == "bf16" {
            module.tile_bf16(stream, one_block(128), &a_map, &b_map, &mut d_dev)?;
        } else {
            module.tile_f16(stream, one_block(128), &a_map, &b_map, &mut d_dev)?;
        }
        ok &= check(
            &format!("wgmma m64n64k16 {name}: 64 x 64 x 64 tile"),
            &stream.clone_dtoh(&d_dev)?,
            &expected,
        );
    }

    // 64 × 128 × (64 · 5), bf16, K loop.
    let k_tiles = 5usize;
    let k = KB * k_tiles;
    let a: Vec<f32> = rng.vec(M * k, quarter);
    let b: Vec<f32> = rng.vec(N_LOOP * k, quarter);
    let a_dev = stream.clone_htod(&a.iter().map(|&v| bf16_bits(v)).collect::<Vec<u16>>())?;
    let b_dev = stream.clone_htod(&b.iter().map(|&v| bf16_bits(v)).collect::<Vec<u16>>())?;
    let a_map = tma::tiled(
        stream,
        &a_dev,
        &[k as u64, M as u64],
        &[KB as u32, M as u32],
        Swizzle::B128,
    )?;
    let b_map = tma::tiled(
        stream,
        &b_dev,
        &[k as u64, N_LOOP as u64],
        &[KB as u32, N_LOOP as u32],
        Swizzle::B128,
    )?;
    let mut d_dev = stream.alloc_zeros::<f32>(M * N_LOOP)?;
    module.k_loop_bf16(
        stream,
        one_block(128),
        &a_map,
        &b_map,
        &mut d_dev,
        k_tiles as u32,
    )?;
    ok &= check(
        "wgmma m64n128k16 bf16: 64 x 128 tile over a K loop of 320",
        &stream.clone_dtoh(&d_dev)?,
        &matmul_nt(&a, &b, M, N_LOOP, k),
    );
    Ok(ok)
}
