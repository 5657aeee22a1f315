//! A bf16 GEMM on Hopper (sm_90a), `D = A · Bᵀ` with f32 accumulation and bf16 output, `A`
//! (M × K) and `B` (N × K) row-major: 128 × 128 tiles per block, three warpgroups: one producer
//! (one thread issuing TMA loads of 128 × 64 boxes into a 4-stage ring of 128-byte swizzled
//! shared memory, "full"/"empty" mbarriers per stage) and two consumers (each `wgmma`
//! m64n128k16 on 64 rows of the tile, accumulators in registers across the K loop).
//!
//! Checked against an f64 CPU dot product on sampled entries of random inputs, and timed
//! with CUDA events (median of 5 runs of 10 launches after warm-up) at 4096³ and 8192³. cuBLAS's
//! time for the same product is measured beside it (by PyTorch, on the GPU machine).

use std::process::ExitCode;

use std::sync::Arc;

use cuda_host::cudarc::cublas::{self, CudaBlas};
use cuda_host::cudarc::driver::sys::CUdevice_attribute;
use cuda_host::cudarc::driver::{DevicePtr, DevicePtrMut};
use cuda_host::timing::{EventTimer, median};
use cuda_host::tma::{self, Swizzle};
use cuda_host::{CudaSlice, CudaStream, LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, run_example};

/// Rows of `D` per block.
pub const BM: usize = 128;
/// Columns of `D` per block of `gemm_bf16` (`gemm_bf16_wide` has 256).
pub const BN: usize = 128;
/// Columns of `D` per block of `gemm_bf16_wide`.
pub const BN_WIDE: usize = 256;
/// K per stage: one 128-byte swizzled row of bf16.
pub const BK: usize = 64;
/// Stages of the shared-memory ring.
pub const STAGES: usize = 4;
/// Bytes of one stage for `BN` columns: the A box then the B box.
pub const fn stage_bytes(bn: usize) -> usize {
    (BM + bn) * BK * 2
}
/// Dynamic shared memory for `BN` columns: the ring, and room to align it to 1024 bytes.
pub const fn shared_bytes(bn: usize) -> usize {
    STAGES * stage_bytes(bn) + 1024
}

#[cuda_module]
mod kernels {
    use cuda_device::mbarrier::{Barrier, raw};
    use cuda_device::shared::shared_address;
    use cuda_device::tma::{self, TensorMap};
    use cuda_device::wgmma::{self, Fragment, Input, Swizzle};
    use cuda_device::{
        DynamicSharedArray, SharedArray, cluster, cluster_dims, kernel, launch_bounds, sync,
        thread, warpgroup,
    };

    use super::{BK, BM, BN, BN_WIDE, STAGES, stage_bytes};

    /// Spins until the phase of parity `parity` of the barrier at `addr` has completed.
    #[inline(always)]
    fn wait(addr: u64, parity: u32) {
        // SAFETY: `addr` is one of the kernel's initialised barriers.
        while !unsafe { raw::try_wait_parity(addr, parity) } {}
    }

    /// The descriptor of K step `kk` of a K-major tile of 128-byte swizzled rows at `base`.
    #[inline(always)]
    fn k_step(base: u32, kk: u32) -> u64 {
        wgmma::descriptor(base + kk * 32, 16, 1024, Swizzle::B128)
    }

    /// Round to nearest even: the bf16 bits of `v`.
    #[inline(always)]
    fn bf16(v: f32) -> u32 {
        let bits = v.to_bits();
        (bits + 0x7fff + ((bits >> 16) & 1)) >> 16
    }

    /// One 128 × 128 tile of `D = A · Bᵀ` per block (grid: N / 128 × M / 128; 384 threads;
    /// `shared_bytes(BN)` of dynamic shared memory). `d` holds bf16 pairs, `n` is N, `k_tiles`
    /// is K / 64.
    #[kernel]
    #[launch_bounds(384, 1)]
    pub fn gemm_bf16(a: &TensorMap, b: &TensorMap, d: &mut [u32], n: u32, k_tiles: u32) {
        gemm::<BN, { BN / 2 }, false>(a, b, d, n, k_tiles);
    }

    /// [gemm_bf16] with 128 × 256 tiles (m64n256k16, 128 accumulators per consumer thread;
    /// `shared_bytes(BN_WIDE)` of dynamic shared memory).
    #[kernel]
    #[launch_bounds(384, 1)]
    pub fn gemm_bf16_wide(a: &TensorMap, b: &TensorMap, d: &mut [u32], n: u32, k_tiles: u32) {
        gemm::<BN_WIDE, { BN_WIDE / 2 }, false>(a, b, d, n, k_tiles);
    }

    /// [gemm_bf16_wide], keeping one group of `wgmma` in flight: after issuing K tile `k`, a
    /// consumer waits only for tile `k - 1` and releases its stage.
    #[kernel]
    #[launch_bounds(384, 1)]
    pub fn gemm_bf16_wide_overlap(
        a: &TensorMap,
        b: &TensorMap,
        d: &mut [u32],
        n: u32,
        k_tiles: u32,
    ) {
        gemm::<BN_WIDE, { BN_WIDE / 2 }, true>(a, b, d, n, k_tiles);
    }

    /// [gemm_bf16_wide_overlap], persistent: a grid of at most one block per SM, each block
    /// taking tiles `blockIdx.x`, `+ gridDim.x`, ... of the `m_tiles × N / 256` tiles, in the
    /// grouped order of [tile_position] (`group` tile rows at a time, for L2 reuse). The
    /// producer runs ahead into the next tile while the consumers write the last one out.
    #[kernel]
    #[launch_bounds(384, 1)]
    pub fn gemm_bf16_persistent(
        a: &TensorMap,
        b: &TensorMap,
        d: &mut [u32],
        n: u32,
        k_tiles: u32,
        m_tiles: u32,
        group: u32,
    ) {
        persistent::<false>(a, b, d, n, k_tiles, m_tiles, group);
    }

    /// [gemm_bf16_persistent] with register reallocation: the producer warpgroup gives
    /// registers up (`setmaxnreg.dec` to 40), the consumers take them (`setmaxnreg.inc` to 232).
    #[kernel]
    #[launch_bounds(384, 1)]
    pub fn gemm_bf16_persistent_regs(
        a: &TensorMap,
        b: &TensorMap,
        d: &mut [u32],
        n: u32,
        k_tiles: u32,
        m_tiles: u32,
        group: u32,
    ) {
        persistent::<true>(a, b, d, n, k_tiles, m_tiles, group);
    }

    /// Tile `tile` of an `m_tiles × n_tiles` grid of tiles in grouped order: bands of `group`
    /// tile rows, each band walked column by column, so that the tiles in flight at one time
    /// share few rows of A and few rows of B. `group = 1` is plain row-major order.
    #[inline(always)]
    pub fn tile_position(tile: u32, m_tiles: u32, n_tiles: u32, group: u32) -> (u32, u32) {
        let per_band = group * n_tiles;
        let first_row = tile / per_band * group;
        let rows = if m_tiles - first_row < group {
            m_tiles - first_row
        } else {
            group
        };
        let within = tile % per_band;
        (first_row + within % rows, within / rows)
    }

    /// The body of the persistent kernels (128 × 256 tiles).
    #[inline(always)]
    fn persistent<const REGS: bool>(
        a: &TensorMap,
        b: &TensorMap,
        d: &mut [u32],
        n: u32,
        k_tiles: u32,
        m_tiles: u32,
        group: u32,
    ) {
        const TN: usize = BN_WIDE;
        let stage_size = stage_bytes(TN);
        static mut FULL: SharedArray<Barrier, STAGES> = SharedArray::UNINIT;
        static mut EMPTY: SharedArray<Barrier, STAGES> = SharedArray::UNINIT;
        let t = thread::threadIdx_x();
        let wg = t / 128;
        let full0 = (&raw mut FULL) as u64;
        let empty0 = (&raw mut EMPTY) as u64;
        let dynamic = DynamicSharedArray::<u8>::get();
        let pad = (1024 - shared_address(dynamic) % 1024) % 1024;
        // SAFETY: the dynamic shared memory has 1024 bytes of room for the alignment.
        let ring = unsafe { dynamic.add(pad as usize) };
        let ring_shared = shared_address(ring);
        if t == 0 {
            for s in 0..STAGES as u64 {
                // SAFETY: the barriers' shared memory is used by nothing else.
                unsafe {
                    raw::init(full0 + 8 * s, 1);
                    raw::init(empty0 + 8 * s, 256);
                }
            }
            raw::fence_init();
        }
        sync::syncthreads();
        let n_tiles = n / TN as u32;
        let tiles = m_tiles * n_tiles;
        let step = thread::gridDim_x();
        if wg == 0 {
            if REGS {
                warpgroup::decrease_registers::<40>();
            }
            if t == 0 {
                tma::prefetch(a);
                tma::prefetch(b);
                // K tiles loaded so far, over all of this block's tiles: it picks the stage
                // and the phase.
                let mut it = 0u32;
                let mut tile = thread::blockIdx_x();
                while tile < tiles {
                    let (tm, tn) = tile_position(tile, m_tiles, n_tiles, group);
                    let m0 = (tm as usize * BM) as i32;
                    let n0 = (tn as usize * TN) as i32;
                    for kt in 0..k_tiles {
                        let s = it % STAGES as u32;
                        let round = it / STAGES as u32;
                        let (full, empty) = (full0 + 8 * s as u64, empty0 + 8 * s as u64);
                        wait(empty, (round & 1) ^ 1);
                        let stage = (s as usize * stage_size) as u64;
                        let k = (kt as usize * BK) as i32;
                        // SAFETY: the slot is free and holds both boxes, aligned to 1024.
                        unsafe {
                            let _ = raw::arrive_expect_tx(full, stage_size as u32);
                            tma::raw::load_2d(
                                ring as u64 + stage,
                                a as *const TensorMap as u64,
                                k,
                                m0,
                                full,
                            );
                            tma::raw::load_2d(
                                ring as u64 + stage + (BM * BK * 2) as u64,
                                b as *const TensorMap as u64,
                                k,
                                n0,
                                full,
                            );
                        }
                        it += 1;
                    }
                    tile += step;
                }
            }
        } else {
            if REGS {
                warpgroup::increase_registers::<232>();
            }
            let c = wg - 1;
            let tw = (t % 128) as usize;
            let out = d.as_mut_ptr();
            let mut it = 0u32;
            let mut tile = thread::blockIdx_x();
            while tile < tiles {
                let (tm, tn) = tile_position(tile, m_tiles, n_tiles, group);
                let mut acc = <[f32; BN_WIDE / 2]>::zeroed();
                for kt in 0..k_tiles {
                    let s = it % STAGES as u32;
                    wait(full0 + 8 * s as u64, (it / STAGES as u32) & 1);
                    let stage = ring_shared + s * stage_size as u32;
                    let a_base = stage + c * 64 * (BK as u32 * 2);
                    let b_base = stage + (BM * BK * 2) as u32;
                    wgmma::fence();
                    for kk in 0..(BK / 16) as u32 {
                        // SAFETY: as in `gemm`.
                        acc = unsafe {
                            wgmma::mma_async(
                                acc,
                                k_step(a_base, kk),
                                k_step(b_base, kk),
                                Input::Bf16,
                                kt > 0 || kk > 0,
                            )
                        };
                    }
                    wgmma::commit_group();
                    wgmma::wait_group::<1>();
                    if kt > 0 {
                        let previous = (it - 1) % STAGES as u32;
                        // SAFETY: an initialised barrier; the reads of that stage are done.
                        let _ = unsafe { raw::arrive(empty0 + 8 * previous as u64) };
                    }
                    it += 1;
                }
                wgmma::wait_group::<0>();
                let last = (it - 1) % STAGES as u32;
                // SAFETY: an initialised barrier; all reads of the tile's stages are done, so
                // the producer may fill them with the next tile while this one is written.
                let _ = unsafe { raw::arrive(empty0 + 8 * last as u64) };
                let row0 = tm as usize * BM + c as usize * 64;
                let col0 = tn as usize * TN;
                let mut low = 0u32;
                acc.for_each(|i, v| {
                    if i % 2 == 0 {
                        low = bf16(v);
                    } else {
                        let (row, col) = wgmma::fragment_position(tw, i - 1);
                        let index = ((row0 + row) * n as usize + col0 + col) / 2;
                        // SAFETY: the host launches with `d` of M × N / 2 words and tiles
                        // that divide M and N, so `index` is in bounds.
                        unsafe { *out.add(index) = low | (bf16(v) << 16) };
                    }
                });
                tile += step;
            }
        }
    }

    /// [gemm_bf16_persistent_regs] on clusters of two blocks (`#[cluster_dims(2)]`): the two
    /// blocks of a cluster compute vertically adjacent tiles, which share their 256 rows of B.
    /// Each block loads its own A box and one 128-row half of the B tile, multicast into the
    /// shared memory of both blocks, so each reads 32 KiB per K step from L2 instead of 48.
    /// A stage is free once the consumers of both blocks have released it: each consumer warp
    /// arrives at the "empty" barrier of both blocks. `group` (even) is in tile rows.
    #[kernel]
    #[launch_bounds(384, 1)]
    #[cluster_dims(2, 1, 1)]
    pub fn gemm_bf16_cluster(
        a: &TensorMap,
        b: &TensorMap,
        d: &mut [u32],
        n: u32,
        k_tiles: u32,
        m_tiles: u32,
        group: u32,
    ) {
        const TN: usize = BN_WIDE;
        /// Bytes of one block's half of the B tile.
        const B_HALF: usize = TN / 2 * BK * 2;
        let stage_size = stage_bytes(TN);
        static mut FULL: SharedArray<Barrier, STAGES> = SharedArray::UNINIT;
        static mut EMPTY: SharedArray<Barrier, STAGES> = SharedArray::UNINIT;
        let t = thread::threadIdx_x();
        let wg = t / 128;
        let rank = cluster::block_rank();
        let full0 = (&raw mut FULL) as u64;
        let empty0 = (&raw mut EMPTY) as u64;
        let dynamic = DynamicSharedArray::<u8>::get();
        let pad = (1024 - shared_address(dynamic) % 1024) % 1024;
        // SAFETY: the dynamic shared memory has 1024 bytes of room for the alignment.
        let ring = unsafe { dynamic.add(pad as usize) };
        let ring_shared = shared_address(ring);
        if t == 0 {
            for s in 0..STAGES as u64 {
                // SAFETY: the barriers' shared memory is used by nothing else.
                unsafe {
                    raw::init(full0 + 8 * s, 1);
                    // One arrival per consumer warp (8 per block) of each of the two blocks.
                    raw::init(empty0 + 8 * s, 16);
                }
            }
            raw::fence_init();
        }
        // Both blocks' barriers are initialised before either block multicasts or arrives
        // into the other.
        cluster::sync();
        let n_tiles = n / TN as u32;
        // Tiles in pairs of tile rows: the cluster takes pair `p`, its blocks its two rows.
        let pairs = m_tiles / 2 * n_tiles;
        let clusters = thread::gridDim_x() / 2;
        let first = thread::blockIdx_x() / 2;
        if wg == 0 {
            warpgroup::decrease_registers::<40>();
            if t == 0 {
                tma::prefetch(a);
                tma::prefetch(b);
                let mut it = 0u32;
                let mut pair = first;
                while pair < pairs {
                    let (pm, tn) = tile_position(pair, m_tiles / 2, n_tiles, group / 2);
                    let m0 = ((2 * pm + rank) as usize * BM) as i32;
                    let n_half = (tn as usize * TN + rank as usize * TN / 2) as i32;
                    for kt in 0..k_tiles {
                        let s = it % STAGES as u32;
                        let round = it / STAGES as u32;
                        let (full, empty) = (full0 + 8 * s as u64, empty0 + 8 * s as u64);
                        // Free in both blocks: this block's barrier counts both blocks'
                        // consumers.
                        wait(empty, (round & 1) ^ 1);
                        let stage = ring as u64 + (s as usize * stage_size) as u64;
                        let k = (kt as usize * BK) as i32;
                        let b_half = stage + (BM * BK * 2 + rank as usize * B_HALF) as u64;
                        // SAFETY: the slot is free in both blocks; the boxes fit it, aligned
                        // to 1024; both blocks' barriers are initialised and neither block
                        // exits before the other is done (the cluster barrier at the end).
                        unsafe {
                            let _ = raw::arrive_expect_tx(full, stage_size as u32);
                            tma::raw::load_2d(stage, a as *const TensorMap as u64, k, m0, full);
                            tma::raw::load_2d_multicast(
                                b_half,
                                b as *const TensorMap as u64,
                                k,
                                n_half,
                                full,
                                0b11,
                            );
                        }
                        it += 1;
                    }
                    pair += clusters;
                }
            }
        } else {
            warpgroup::increase_registers::<232>();
            let c = wg - 1;
            let tw = (t % 128) as usize;
            let lane = t % 32;
            let out = d.as_mut_ptr();
            // Lane 0 of each consumer warp releases a stage in block 0, lane 1 in block 1.
            let release = |s: u32| {
                if lane < 2 {
                    // SAFETY: initialised barriers (cluster barrier above) of blocks that
                    // are still running (cluster barrier below); this warp's reads of the
                    // stage are done.
                    unsafe { raw::arrive_cluster(empty0 + 8 * s as u64, lane) };
                }
            };
            let mut it = 0u32;
            let mut pair = first;
            while pair < pairs {
                let (pm, tn) = tile_position(pair, m_tiles / 2, n_tiles, group / 2);
                let tm = 2 * pm + rank;
                let mut acc = <[f32; BN_WIDE / 2]>::zeroed();
                for kt in 0..k_tiles {
                    let s = it % STAGES as u32;
                    wait(full0 + 8 * s as u64, (it / STAGES as u32) & 1);
                    let stage = ring_shared + s * stage_size as u32;
                    let a_base = stage + c * 64 * (BK as u32 * 2);
                    let b_base = stage + (BM * BK * 2) as u32;
                    wgmma::fence();
                    for kk in 0..(BK / 16) as u32 {
                        // SAFETY: as in `gemm`.
                        acc = unsafe {
                            wgmma::mma_async(
                                acc,
                                k_step(a_base, kk),
                                k_step(b_base, kk),
                                Input::Bf16,
                                kt > 0 || kk > 0,
                            )
                        };
                    }
                    wgmma::commit_group();
                    wgmma::wait_group::<1>();
                    if kt > 0 {
                        release((it - 1) % STAGES as u32);
                    }
                    it += 1;
                }
                wgmma::wait_group::<0>();
                release((it - 1) % STAGES as u32);
                let row0 = tm as usize * BM + c as usize * 64;
                let col0 = tn as usize * TN;
                let mut low = 0u32;
                acc.for_each(|i, v| {
                    if i % 2 == 0 {
                        low = bf16(v);
                    } else {
                        let (row, col) = wgmma::fragment_position(tw, i - 1);
                        let index = ((row0 + row) * n as usize + col0 + col) / 2;
                        // SAFETY: the host launches with `d` of M × N / 2 words and tiles
                        // that divide M and N, so `index` is in bounds.
                        unsafe { *out.add(index) = low | (bf16(v) << 16) };
                    }
                });
                pair += clusters;
            }
        }
        // Neither block exits while the other may still arrive at its barriers.
        cluster::sync();
    }

    /// The body of the kernels: a `BM × TN` tile (`R = TN / 2` accumulators per thread).
    #[inline(always)]
    fn gemm<const TN: usize, const R: usize, const OVERLAP: bool>(
        a: &TensorMap,
        b: &TensorMap,
        d: &mut [u32],
        n: u32,
        k_tiles: u32,
    ) where
        [f32; R]: Fragment,
    {
        let stage_size = stage_bytes(TN);
        static mut FULL: SharedArray<Barrier, STAGES> = SharedArray::UNINIT;
        static mut EMPTY: SharedArray<Barrier, STAGES> = SharedArray::UNINIT;
        let t = thread::threadIdx_x();
        let wg = t / 128;
        let full0 = (&raw mut FULL) as u64;
        let empty0 = (&raw mut EMPTY) as u64;
        let dynamic = DynamicSharedArray::<u8>::get();
        let pad = (1024 - shared_address(dynamic) % 1024) % 1024;
        // SAFETY: the dynamic shared memory has 1024 bytes of room for the alignment.
        let ring = unsafe { dynamic.add(pad as usize) };
        let ring_shared = shared_address(ring);
        if t == 0 {
            for s in 0..STAGES as u64 {
                // SAFETY: the barriers' shared memory is used by nothing else.
                unsafe {
                    raw::init(full0 + 8 * s, 1);
                    raw::init(empty0 + 8 * s, 256);
                }
            }
            raw::fence_init();
        }
        sync::syncthreads();
        let m0 = (thread::blockIdx_y() as usize * BM) as i32;
        let n0 = (thread::blockIdx_x() as usize * TN) as i32;
        if wg == 0 {
            if t == 0 {
                tma::prefetch(a);
                tma::prefetch(b);
                for kt in 0..k_tiles {
                    let s = kt % STAGES as u32;
                    let round = kt / STAGES as u32;
                    let (full, empty) = (full0 + 8 * s as u64, empty0 + 8 * s as u64);
                    // The slot is free once the consumers released its previous use (the
                    // first round passes at once: the phase before phase 0 counts as done).
                    wait(empty, (round & 1) ^ 1);
                    let stage = (s as usize * stage_size) as u64;
                    let k = (kt as usize * BK) as i32;
                    // SAFETY: the slot is free and holds both boxes, aligned to 1024.
                    unsafe {
                        let _ = raw::arrive_expect_tx(full, stage_size as u32);
                        tma::raw::load_2d(
                            ring as u64 + stage,
                            a as *const TensorMap as u64,
                            k,
                            m0,
                            full,
                        );
                        tma::raw::load_2d(
                            ring as u64 + stage + (BM * BK * 2) as u64,
                            b as *const TensorMap as u64,
                            k,
                            n0,
                            full,
                        );
                    }
                }
            }
        } else {
            let c = wg - 1;
            let mut acc = <[f32; R]>::zeroed();
            for kt in 0..k_tiles {
                let s = kt % STAGES as u32;
                let round = kt / STAGES as u32;
                wait(full0 + 8 * s as u64, round & 1);
                let stage = ring_shared + s * stage_size as u32;
                let a_base = stage + c * 64 * (BK as u32 * 2);
                let b_base = stage + (BM * BK * 2) as u32;
                wgmma::fence();
                for kk in 0..(BK / 16) as u32 {
                    // SAFETY: the warpgroup runs this together; the stage's boxes have landed
                    // (its full barrier's phase completed); `acc` is read after the wait.
                    acc = unsafe {
                        wgmma::mma_async(
                            acc,
                            k_step(a_base, kk),
                            k_step(b_base, kk),
                            Input::Bf16,
                            kt > 0 || kk > 0,
                        )
                    };
                }
                wgmma::commit_group();
                if OVERLAP {
                    // Tile `kt - 1` is done: release its stage.
                    wgmma::wait_group::<1>();
                    if kt > 0 {
                        let previous = (kt - 1) % STAGES as u32;
                        // SAFETY: an initialised barrier; the reads of that stage are done.
                        let _ = unsafe { raw::arrive(empty0 + 8 * previous as u64) };
                    }
                } else {
                    wgmma::wait_group::<0>();
                    // SAFETY: an initialised barrier; this thread's reads of the slot are done.
                    let _ = unsafe { raw::arrive(empty0 + 8 * s as u64) };
                }
            }
            if OVERLAP {
                wgmma::wait_group::<0>();
            }
            let row0 = m0 as usize + c as usize * 64;
            let tw = (t % 128) as usize;
            let mut low = 0u32;
            acc.for_each(|i, v| {
                if i % 2 == 0 {
                    low = bf16(v);
                } else {
                    let (row, col) = wgmma::fragment_position(tw, i - 1);
                    let index = ((row0 + row) * n as usize + n0 as usize + col) / 2;
                    d[index] = low | (bf16(v) << 16);
                }
            });
        }
    }
}

fn main() -> ExitCode {
    run_example("gemm_bf16", run)
}

/// The bf16 bits of `v`, rounded to nearest even, and their value.
fn to_bf16(v: f32) -> (u16, f32) {
    let bits = v.to_bits();
    let rounded = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16;
    (rounded as u16, f32::from_bits(rounded << 16))
}

/// The value of bf16 entry `index` of a matrix stored as bf16 pairs.
fn entry(words: &[u32], index: usize) -> f32 {
    let word = words[index / 2];
    let half = if index % 2 == 0 {
        word & 0xffff
    } else {
        word >> 16
    };
    f32::from_bits(half << 16)
}

/// cuBLAS through cudarc: `D = A · Bᵀ` (row-major A: M × K, B: N × K, D: M × N, bf16, f32
/// accumulation), i.e. column-major `Dᵀ = op(B) · A` with `op = T` ("TN", cuBLAS's own layout).
struct Cublas {
    blas: CudaBlas,
}

impl Cublas {
    fn new(stream: &Arc<CudaStream>) -> Result<Self, Box<dyn std::error::Error>> {
        Ok(Self {
            blas: CudaBlas::new(stream.clone())?,
        })
    }

    fn gemm(
        &self,
        stream: &Arc<CudaStream>,
        a: &CudaSlice<u16>,
        b: &CudaSlice<u16>,
        d: &mut CudaSlice<u32>,
        (m, n, k): (usize, usize, usize),
    ) -> Result<(), Box<dyn std::error::Error>> {
        assert!(a.len() >= m * k && b.len() >= n * k && d.len() * 2 >= m * n);
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (a_ptr, _a_record) = a.device_ptr(stream);
        let (b_ptr, _b_record) = b.device_ptr(stream);
        let (d_ptr, _d_record) = d.device_ptr_mut(stream);
        // SAFETY: the buffers hold the sizes asserted above; the scalars are host f32, as
        // CUBLAS_COMPUTE_32F with the default pointer mode wants.
        unsafe {
            cublas::result::gemm_ex(
                *self.blas.handle(),
                cublas::sys::cublasOperation_t::CUBLAS_OP_T,
                cublas::sys::cublasOperation_t::CUBLAS_OP_N,
                n as i32,
                m as i32,
                k as i32,
                (&raw const alpha).cast(),
                b_ptr as *const std::ffi::c_void,
                cublas::sys::cudaDataType::CUDA_R_16BF,
                k as i32,
                a_ptr as *const std::ffi::c_void,
                cublas::sys::cudaDataType::CUDA_R_16BF,
                k as i32,
                (&raw const beta).cast(),
                d_ptr as *mut std::ffi::c_void,
                cublas::sys::cudaDataType::CUDA_R_16BF,
                n as i32,
                cublas::sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublas::sys::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
            )?;
        }
        Ok(())
    }
}

/// One kernel configuration to run and time.
struct Variant {
    /// The name printed in the results.
    label: String,
    /// The kernel.
    kernel: Kernel,
    /// Columns of D per tile.
    bn: usize,
    /// Blocks for the persistent kernels (0: one per tile).
    blocks: u32,
    /// Tile rows per band of the grouped tile order (persistent kernels).
    group: u32,
}

#[derive(Clone, Copy, PartialEq)]
enum Kernel {
    Tile128,
    Wide,
    WideOverlap,
    Persistent,
    PersistentRegs,
    Cluster,
}

fn variants(sms: u32) -> Vec<Variant> {
    let plain = |label: &str, kernel, bn| Variant {
        label: label.into(),
        kernel,
        bn,
        blocks: 0,
        group: 1,
    };
    let mut list = vec![
        plain("gemm_bf16 (128x128)", Kernel::Tile128, BN),
        plain("gemm_bf16_wide (128x256)", Kernel::Wide, BN_WIDE),
        plain(
            "gemm_bf16_wide_overlap (128x256)",
            Kernel::WideOverlap,
            BN_WIDE,
        ),
    ];
    for group in [1, 8, 16] {
        list.push(Variant {
            label: format!("gemm_bf16_persistent, block per tile, group {group}"),
            kernel: Kernel::Persistent,
            bn: BN_WIDE,
            blocks: 0,
            group,
        });
    }
    for group in [1, 4, 8, 16, 32] {
        list.push(Variant {
            label: format!("gemm_bf16_persistent, {sms} blocks, group {group}"),
            kernel: Kernel::Persistent,
            bn: BN_WIDE,
            blocks: sms,
            group,
        });
    }
    for group in [8, 16] {
        list.push(Variant {
            label: format!("gemm_bf16_persistent_regs, {sms} blocks, group {group}"),
            kernel: Kernel::PersistentRegs,
            bn: BN_WIDE,
            blocks: sms,
            group,
        });
    }
    for group in [8, 16] {
        list.push(Variant {
            label: format!("gemm_bf16_cluster, {sms} blocks, group {group}"),
            kernel: Kernel::Cluster,
            bn: BN_WIDE,
            blocks: sms,
            group,
        });
    }
    list
}

/// Median milliseconds of one call of `launch`: 3 warm-up calls, then 5 runs of 10.
fn time_ms(
    timer: &EventTimer,
    stream: &Arc<CudaStream>,
    mut launch: impl FnMut() -> Result<(), Box<dyn std::error::Error>>,
) -> Result<f64, Box<dyn std::error::Error>> {
    for _ in 0..3 {
        launch()?;
    }
    let mut times = vec![];
    // The timer takes work that fails with a driver error; a cuBLAS error is kept aside.
    let mut failure = None;
    for _ in 0..5 {
        times.push(timer.time(stream, 10, || {
            if let Err(error) = launch() {
                failure.get_or_insert(error);
            }
            Ok(())
        })?);
    }
    match failure {
        Some(error) => Err(error),
        None => Ok(median(&times).unwrap_or(f64::NAN)),
    }
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let timer = EventTimer::new(&gpu.ctx)?;
    let cublas = Cublas::new(stream)?;
    let sms = gpu
        .ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?
        as u32;
    let mut rng = Rng::new(8192);
    let mut ok = true;
    let mut table = vec![];
    // For profiling runs: GEMM_SIZES=8192 (sizes to run), GEMM_ONLY=text (only the kernels
    // whose label contains it), GEMM_NO_TIMING=1 (check, but do not time).
    let sizes: Vec<usize> = match std::env::var("GEMM_SIZES") {
        Ok(list) => list
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect(),
        Err(_) => vec![4096, 8192],
    };
    let only = std::env::var("GEMM_ONLY").unwrap_or_default();
    let timing = std::env::var_os("GEMM_NO_TIMING").is_none();
    for size in sizes {
        let (m, n, k) = (size, size, size);
        assert!(m % BM == 0 && n % BN_WIDE == 0 && k % BK == 0);
        let (a_bits, a): (Vec<u16>, Vec<f32>) =
            (0..m * k).map(|_| to_bf16(rng.f32_in(-1.0, 1.0))).unzip();
        let (b_bits, b): (Vec<u16>, Vec<f32>) =
            (0..n * k).map(|_| to_bf16(rng.f32_in(-1.0, 1.0))).unzip();
        let a_dev = stream.clone_htod(&a_bits)?;
        let b_dev = stream.clone_htod(&b_bits)?;

        // cuBLAS: its result is the reference for every kernel below; it is itself checked on
        // sampled entries against an f64 dot product of the same bf16 inputs.
        let mut reference_dev = stream.alloc_zeros::<u32>(m * n / 2)?;
        cublas.gemm(stream, &a_dev, &b_dev, &mut reference_dev, (m, n, k))?;
        let reference = stream.clone_dtoh(&reference_dev)?;
        let mut worst = 0.0f64;
        let mut bad = 0;
        for _ in 0..512 {
            let (i, j) = (rng.next_u64() as usize % m, rng.next_u64() as usize % n);
            let (mut exact, mut scale) = (0.0f64, 0.0f64);
            for x in 0..k {
                let p = f64::from(a[i * k + x]) * f64::from(b[j * k + x]);
                exact += p;
                scale += p.abs();
            }
            let got = f64::from(entry(&reference, i * n + j));
            // Within bf16 rounding of the result (2^-8 relative) plus f32 accumulation
            // error, scaled by the sum of |products|.
            let err = (got - exact).abs() / (exact.abs() * 2f64.powi(-8) + scale * 1e-5 + 1e-6);
            worst = worst.max(err);
            if err > 1.0 {
                bad += 1;
            }
        }
        println!(
            "{} cuBLAS {size}^3: 512 sampled entries within bf16 tolerance of an f64 dot \
             product ({bad} outside; worst error {worst:.2} of the allowed)",
            if bad == 0 { "ok  " } else { "FAIL" }
        );
        ok &= bad == 0;
        let cublas_ms = if timing {
            time_ms(&timer, stream, || {
                cublas.gemm(stream, &a_dev, &b_dev, &mut reference_dev, (m, n, k))
            })?
        } else {
            f64::NAN
        };
        let flops = 2.0 * (m * n * k) as f64;
        let cublas_tflops = flops / (cublas_ms * 1e-3) / 1e12;
        println!("time {size}^3: {cublas_ms:.3} ms, {cublas_tflops:.1} TFLOP/s (cuBLAS)");

        let a_map = tma::tiled(
            stream,
            &a_dev,
            &[k as u64, m as u64],
            &[BK as u32, BM as u32],
            Swizzle::B128,
        )?;
        let mut best: Option<(String, f64)> = None;
        for variant in variants(sms)
            .into_iter()
            .filter(|v| v.label.contains(&only))
        {
            let bn = variant.bn;
            let mut d_dev = stream.alloc_zeros::<u32>(m * n / 2)?;
            // The cluster kernel's blocks load half of the B tile each.
            let b_box = if variant.kernel == Kernel::Cluster {
                bn / 2
            } else {
                bn
            };
            let b_map = tma::tiled(
                stream,
                &b_dev,
                &[k as u64, n as u64],
                &[BK as u32, b_box as u32],
                Swizzle::B128,
            )?;
            let tiles = ((m / BM) * (n / bn)) as u32;
            let grid_dim = match variant.kernel {
                Kernel::Cluster => ((variant.blocks.min(tiles) & !1), 1, 1),
                Kernel::Persistent | Kernel::PersistentRegs => {
                    let blocks = if variant.blocks == 0 {
                        tiles
                    } else {
                        variant.blocks.min(tiles)
                    };
                    (blocks, 1, 1)
                }
                _ => ((n / bn) as u32, (m / BM) as u32, 1),
            };
            let cfg = LaunchConfig {
                grid_dim,
                block_dim: (384, 1, 1),
                shared_mem_bytes: shared_bytes(bn) as u32,
            };
            let (n32, k_tiles, m_tiles) = (n as u32, (k / BK) as u32, (m / BM) as u32);
            let group = variant.group;
            let launch = |d: &mut CudaSlice<u32>| -> Result<(), Box<dyn std::error::Error>> {
                match variant.kernel {
                    Kernel::Tile128 => {
                        module.gemm_bf16(stream, cfg, &a_map, &b_map, d, n32, k_tiles)?
                    }
                    Kernel::Wide => {
                        module.gemm_bf16_wide(stream, cfg, &a_map, &b_map, d, n32, k_tiles)?
                    }
                    Kernel::WideOverlap => module
                        .gemm_bf16_wide_overlap(stream, cfg, &a_map, &b_map, d, n32, k_tiles)?,
                    Kernel::Persistent => module.gemm_bf16_persistent(
                        stream, cfg, &a_map, &b_map, d, n32, k_tiles, m_tiles, group,
                    )?,
                    Kernel::PersistentRegs => module.gemm_bf16_persistent_regs(
                        stream, cfg, &a_map, &b_map, d, n32, k_tiles, m_tiles, group,
                    )?,
                    Kernel::Cluster => module.gemm_bf16_cluster(
                        stream, cfg, &a_map, &b_map, d, n32, k_tiles, m_tiles, group,
                    )?,
                }
                Ok(())
            };
            launch(&mut d_dev)?;
            let d = stream.clone_dtoh(&d_dev)?;
            // Every entry against cuBLAS's: both are the bf16 rounding of an f32 sum of the
            // same products in different orders, so they differ by at most one bf16 step
            // (2^-7 relative) plus the f32 accumulation difference (K * 2^-20 absolute for
            // inputs in [-1, 1]).
            let abs = k as f64 * 2f64.powi(-20);
            let (mut bad, mut worst) = (0usize, 0.0f64);
            for index in 0..m * n {
                let (got, want) = (
                    f64::from(entry(&d, index)),
                    f64::from(entry(&reference, index)),
                );
                let err = (got - want).abs() / (want.abs() * 2f64.powi(-7) + abs);
                if err.is_nan() || err > 1.0 {
                    bad += 1;
                }
                if err.is_nan() {
                    worst = f64::INFINITY;
                } else {
                    worst = worst.max(err);
                }
            }
            println!(
                "{} {} {size}^3: all {} entries within bf16 tolerance of cuBLAS's ({bad} \
                 outside; worst {worst:.2} of the allowed)",
                if bad == 0 { "ok  " } else { "FAIL" },
                variant.label,
                m * n
            );
            ok &= bad == 0;
            if !timing {
                continue;
            }
            let ms = time_ms(&timer, stream, || launch(&mut d_dev))?;
            let tflops = flops / (ms * 1e-3) / 1e12;
            println!(
                "time {size}^3: {ms:.3} ms, {tflops:.1} TFLOP/s, {:.1} % of cuBLAS ({})",
                100.0 * tflops / cublas_tflops,
                variant.label
            );
            if bad == 0 && best.as_ref().is_none_or(|(_, t)| tflops > *t) {
                best = Some((variant.label.clone(), tflops));
            }
        }
        if let Some((label, tflops)) = best {
            table.push((size, label, tflops, cublas_tflops));
        }
    }
    println!("\n| size | cuda-oxide (best kernel) | TFLOP/s | cuBLAS TFLOP/s | % of cuBLAS |");
    println!("|---|---|---|---|---|");
    for (size, label, tflops, cublas_tflops) in table {
        println!(
            "| {size}³ | {label} | {tflops:.1} | {cublas_tflops:.1} | {:.1} % |",
            100.0 * tflops / cublas_tflops
        );
    }
    Ok(ok)
}
