//! A bf16 GEMM on Hopper (sm_90a), `D = A · Bᵀ` with f32 accumulation and bf16 output, `A`
//! (M × K) and `B` (N × K) row-major, against cuBLAS.
//!
//! Every kernel is warp-specialised: a block is three warpgroups, one producer (one thread
//! issuing TMA loads of 64-wide K slices of A and B into a 4-stage ring of 128-byte swizzled
//! shared memory, with a "full" and an "empty" mbarrier per stage) and two consumers (each
//! `wgmma` on 64 rows of the block's tile, accumulators in registers across the K loop). The
//! kernels, from the first to the fastest:
//!
//! - `gemm_bf16`: a 128 × 128 tile per block; `gemm_bf16_wide`: 128 × 256 (m64n256k16);
//!   `gemm_bf16_wide_overlap`: one `wgmma` group kept in flight.
//! - `gemm_bf16_persistent`: one block per SM looping over tiles in a grouped order (bands of
//!   `group` tile rows, for L2 reuse); the producer loads the next tile while the consumers
//!   write the last one out. `gemm_bf16_persistent_regs`: the same with `setmaxnreg` (producer
//!   down to 40 registers, consumers up to 232).
//! - `gemm_bf16_cluster`: clusters of two blocks (`#[cluster_dims(2)]`) that share the B tile,
//!   each loading half of it with a TMA multicast into both blocks.
//!
//! cuBLAS (`cublasGemmEx` through cudarc, bf16 in and out, f32 compute) runs in the same process
//! on the same inputs: its result is checked on sampled entries against an f64 dot product, and
//! every entry of every kernel's result against cuBLAS's. Times: CUDA events, the median of
//! interleaved rounds of launches of every contender. `gemm_bf16 --bench DIR` runs the two
//! fastest kernels for the benchmark suite (`bench.sh` calls it) and writes the table to
//! `DIR/gemm_bf16.md` and `DIR/gemm_bf16.json`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use cuda_host::cudarc::cublas::{self, CudaBlas};
use cuda_host::cudarc::driver::sys::CUdevice_attribute;
use cuda_host::cudarc::driver::{DevicePtr, DevicePtrMut};
use cuda_host::timing::{EventTimer, median};
use cuda_host::tma::{self, Swizzle, TensorMap};
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

    /// A kernel's ring of `STAGES` stages: the shared-memory addresses of its full and empty
    /// barriers (8 bytes each), and its first stage in dynamic shared memory, aligned to the 1024
    /// bytes that 128-byte swizzling needs (`shared_bytes` leaves room for that), as a generic
    /// pointer and as a shared-window address.
    struct Ring {
        full0: u64,
        empty0: u64,
        ring: *mut u8,
        ring_shared: u32,
    }

    /// Sets up the ring: thread 0 initialises each full barrier for one arrival (the
    /// producer's, with the stage's bytes) and each empty one for `empty_arrivals`, and fences
    /// the initialisation; the caller makes the block (or the cluster) wait for it before any
    /// use. Every kernel of the module has its own copy of the barriers, as of all shared memory.
    #[inline(always)]
    fn ring(empty_arrivals: u32) -> Ring {
        static mut FULL: SharedArray<Barrier, STAGES> = SharedArray::UNINIT;
        static mut EMPTY: SharedArray<Barrier, STAGES> = SharedArray::UNINIT;
        let full0 = (&raw mut FULL) as u64;
        let empty0 = (&raw mut EMPTY) as u64;
        let dynamic = DynamicSharedArray::<u8>::get();
        let pad = (1024 - shared_address(dynamic) % 1024) % 1024;
        // SAFETY: the dynamic shared memory has 1024 bytes of room for the alignment.
        let ring = unsafe { dynamic.add(pad as usize) };
        let ring_shared = shared_address(ring);
        if thread::threadIdx_x() == 0 {
            for s in 0..STAGES as u64 {
                // SAFETY: the barriers' shared memory is used by nothing else.
                unsafe {
                    raw::init(full0 + 8 * s, 1);
                    raw::init(empty0 + 8 * s, empty_arrivals);
                }
            }
            raw::fence_init();
        }
        Ring {
            full0,
            empty0,
            ring,
            ring_shared,
        }
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
        let t = thread::threadIdx_x();
        let wg = t / 128;
        let Ring {
            full0,
            empty0,
            ring,
            ring_shared,
        } = ring(256);
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
        let t = thread::threadIdx_x();
        let wg = t / 128;
        let rank = cluster::block_rank();
        // One arrival per consumer warp (8 per block) of each of the two blocks.
        let Ring {
            full0,
            empty0,
            ring,
            ring_shared,
        } = ring(16);
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
        let t = thread::threadIdx_x();
        let wg = t / 128;
        let Ring {
            full0,
            empty0,
            ring,
            ring_shared,
        } = ring(256);
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bench = match args.as_slice() {
        [] => None,
        [flag, dir] if flag == "--bench" => Some(PathBuf::from(dir)),
        _ => {
            eprintln!(
                "usage: gemm_bf16 [--bench DIR]\n  without arguments: every kernel variant \
                 against cuBLAS at 4096^3 and 8192^3\n  --bench DIR: the benchmark-suite rows \
                 (the two persistent kernels), also written to DIR/gemm_bf16.json and \
                 DIR/gemm_bf16.md"
            );
            return ExitCode::from(2);
        }
    };
    run_example("gemm_bf16", |gpu| run(gpu, bench.as_deref()))
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
    let half = if index.is_multiple_of(2) {
        word & 0xffff
    } else {
        word >> 16
    };
    f32::from_bits(half << 16)
}

type AnyError = Box<dyn std::error::Error>;

/// cuBLAS through cudarc: `D = A · Bᵀ` (row-major A: M × K, B: N × K, D: M × N, bf16, f32
/// accumulation), i.e. column-major `Dᵀ = op(B) · A` with `op = T` ("TN", cuBLAS's own layout).
struct Cublas {
    blas: CudaBlas,
}

impl Cublas {
    fn new(stream: &Arc<CudaStream>) -> Result<Self, AnyError> {
        let stream = stream.clone();
        // cudarc panics when no library of the names it knows loads.
        let blas = std::panic::catch_unwind(move || CudaBlas::new(stream)).map_err(|_| {
            "cannot load cuBLAS: cudarc opens it as libcublas.so (or libcublas.so.12, .so.11, \
             ...); CUDA 13 has libcublas.so.13: put a folder with a libcublas.so link to it, and \
             its own folder, on LD_LIBRARY_PATH (bench.sh does)"
        })??;
        Ok(Self { blas })
    }

    fn gemm(
        &self,
        stream: &Arc<CudaStream>,
        a: &CudaSlice<u16>,
        b: &CudaSlice<u16>,
        d: &mut CudaSlice<u32>,
        (m, n, k): (usize, usize, usize),
    ) -> Result<(), AnyError> {
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

/// The kernels of this example.
#[derive(Clone, Copy, PartialEq)]
enum Kernel {
    Tile128,
    Wide,
    WideOverlap,
    Persistent,
    PersistentRegs,
    Cluster,
}

/// One kernel configuration to check and time.
#[derive(Clone, Copy)]
struct Variant {
    kernel: Kernel,
    /// Blocks of the persistent kernels (one per SM).
    blocks: u32,
    /// Tile rows per band of the grouped tile order (persistent kernels).
    group: u32,
}

impl Variant {
    fn label(&self) -> String {
        let name = match self.kernel {
            Kernel::Tile128 => return "gemm_bf16 (128x128 tiles)".into(),
            Kernel::Wide => return "gemm_bf16_wide (128x256)".into(),
            Kernel::WideOverlap => return "gemm_bf16_wide_overlap (128x256)".into(),
            Kernel::Persistent => "gemm_bf16_persistent",
            Kernel::PersistentRegs => "gemm_bf16_persistent_regs",
            Kernel::Cluster => "gemm_bf16_cluster",
        };
        format!("{name} ({} blocks, group {})", self.blocks, self.group)
    }

    /// Columns of D per tile.
    fn bn(&self) -> usize {
        if self.kernel == Kernel::Tile128 {
            BN
        } else {
            BN_WIDE
        }
    }

    /// Rows of the B box one TMA load brings (the cluster kernel's blocks load half a tile).
    fn b_box(&self) -> usize {
        if self.kernel == Kernel::Cluster {
            self.bn() / 2
        } else {
            self.bn()
        }
    }

    fn config(&self, m: usize, n: usize) -> LaunchConfig {
        let bn = self.bn();
        let tiles = ((m / BM) * (n / bn)) as u32;
        let grid_dim = match self.kernel {
            Kernel::Tile128 | Kernel::Wide | Kernel::WideOverlap => {
                ((n / bn) as u32, (m / BM) as u32, 1)
            }
            // Whole clusters of two.
            Kernel::Cluster => (self.blocks.min(tiles) & !1, 1, 1),
            Kernel::Persistent | Kernel::PersistentRegs => (self.blocks.min(tiles), 1, 1),
        };
        LaunchConfig {
            grid_dim,
            block_dim: (384, 1, 1),
            shared_mem_bytes: shared_bytes(bn) as u32,
        }
    }
}

/// The variants to run: all of them, or the benchmark-suite rows.
fn variants(sms: u32, bench: bool) -> Vec<Variant> {
    let plain = |kernel| Variant {
        kernel,
        blocks: 0,
        group: 1,
    };
    let persistent = |kernel, group| Variant {
        kernel,
        blocks: sms,
        group,
    };
    if bench {
        return vec![
            persistent(Kernel::PersistentRegs, 16),
            persistent(Kernel::Cluster, 16),
        ];
    }
    vec![
        plain(Kernel::Tile128),
        plain(Kernel::Wide),
        plain(Kernel::WideOverlap),
        persistent(Kernel::Persistent, 16),
        persistent(Kernel::PersistentRegs, 8),
        persistent(Kernel::PersistentRegs, 16),
        persistent(Kernel::Cluster, 8),
        persistent(Kernel::Cluster, 16),
    ]
}

/// One kernel variant set up for one size: its B tensor map and its output.
struct Prepared {
    variant: Variant,
    cfg: LaunchConfig,
    b_map: TensorMap,
    d: CudaSlice<u32>,
}

/// What the inputs of one size are, for the launches.
struct Problem<'a> {
    module: &'a kernels::Module,
    stream: &'a Arc<CudaStream>,
    a_map: &'a TensorMap,
    m: usize,
    n: usize,
    k: usize,
}

impl Problem<'_> {
    fn launch(&self, p: &mut Prepared) -> Result<(), cuda_host::Error> {
        let (module, stream, a_map, cfg) = (self.module, self.stream, self.a_map, p.cfg);
        let (n, k_tiles, m_tiles) = (self.n as u32, (self.k / BK) as u32, (self.m / BM) as u32);
        let (b_map, d, group) = (&p.b_map, &mut p.d, p.variant.group);
        match p.variant.kernel {
            Kernel::Tile128 => module.gemm_bf16(stream, cfg, a_map, b_map, d, n, k_tiles),
            Kernel::Wide => module.gemm_bf16_wide(stream, cfg, a_map, b_map, d, n, k_tiles),
            Kernel::WideOverlap => {
                module.gemm_bf16_wide_overlap(stream, cfg, a_map, b_map, d, n, k_tiles)
            }
            Kernel::Persistent => module
                .gemm_bf16_persistent(stream, cfg, a_map, b_map, d, n, k_tiles, m_tiles, group),
            Kernel::PersistentRegs => module.gemm_bf16_persistent_regs(
                stream, cfg, a_map, b_map, d, n, k_tiles, m_tiles, group,
            ),
            Kernel::Cluster => {
                module.gemm_bf16_cluster(stream, cfg, a_map, b_map, d, n, k_tiles, m_tiles, group)
            }
        }
    }
}

/// One result row.
struct Row {
    size: usize,
    label: String,
    ms: f64,
    tflops: f64,
    cublas_ms: f64,
    cublas_tflops: f64,
    outside: usize,
    worst: f64,
}

/// Timing: warm-up launches, then rounds of launches per contender, interleaved (so that clock
/// and temperature drift touch every contender alike); each contender's time is its median.
const WARMUP: usize = 3;
const ROUNDS: usize = 7;
const LAUNCHES: u32 = 10;

fn run(gpu: &Gpu, bench: Option<&Path>) -> Result<bool, AnyError> {
    let capability = (
        gpu.ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        gpu.ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
    );
    if bench.is_some() && capability != (9, 0) {
        // The benchmark suite runs on any GPU; these kernels only on sm_90a.
        println!(
            "gemm_bf16: skipped: its kernels are built for sm_90a, this GPU is sm_{}{}",
            capability.0, capability.1
        );
        return Ok(true);
    }
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
    let mut rows = vec![];
    for size in [4096usize, 8192] {
        let (m, n, k) = (size, size, size);
        assert!(m % (2 * BM) == 0 && n % BN_WIDE == 0 && k % BK == 0);
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
        let (mut worst, mut bad) = (0.0f64, 0);
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

        let a_map = tma::tiled(
            stream,
            &a_dev,
            &[k as u64, m as u64],
            &[BK as u32, BM as u32],
            Swizzle::B128,
        )?;
        let problem = Problem {
            module: &module,
            stream,
            a_map: &a_map,
            m,
            n,
            k,
        };
        let mut prepared = vec![];
        let mut checks = vec![];
        for variant in variants(sms, bench.is_some()) {
            let b_map = tma::tiled(
                stream,
                &b_dev,
                &[k as u64, n as u64],
                &[BK as u32, variant.b_box() as u32],
                Swizzle::B128,
            )?;
            let mut p = Prepared {
                variant,
                cfg: variant.config(m, n),
                b_map,
                d: stream.alloc_zeros::<u32>(m * n / 2)?,
            };
            problem.launch(&mut p)?;
            let d = stream.clone_dtoh(&p.d)?;
            // Every entry against cuBLAS's: both are the bf16 rounding of an f32 sum of the
            // same products in different orders, so they differ by at most one bf16 step
            // (2^-7 relative) plus the f32 accumulation difference (K * 2^-20 absolute for
            // inputs in [-1, 1]).
            let abs = k as f64 * 2f64.powi(-20);
            let (mut outside, mut worst) = (0usize, 0.0f64);
            for index in 0..m * n {
                let (got, want) = (
                    f64::from(entry(&d, index)),
                    f64::from(entry(&reference, index)),
                );
                let err = (got - want).abs() / (want.abs() * 2f64.powi(-7) + abs);
                if err.is_nan() || err > 1.0 {
                    outside += 1;
                }
                worst = if err.is_nan() {
                    f64::INFINITY
                } else {
                    worst.max(err)
                };
            }
            println!(
                "{} {} {size}^3: all {} entries within bf16 tolerance of cuBLAS's ({outside} \
                 outside; worst {worst:.2} of the allowed)",
                if outside == 0 { "ok  " } else { "FAIL" },
                variant.label(),
                m * n
            );
            ok &= outside == 0;
            checks.push((outside, worst));
            prepared.push(p);
        }

        // cuBLAS's errors are kept aside: the timer takes work that fails with a driver error.
        let mut cublas_failure = None;
        let mut cublas_launch = || {
            if let Err(error) = cublas.gemm(stream, &a_dev, &b_dev, &mut reference_dev, (m, n, k)) {
                cublas_failure.get_or_insert(error);
            }
            Ok(())
        };
        for _ in 0..WARMUP {
            cublas_launch()?;
            for p in prepared.iter_mut() {
                problem.launch(p)?;
            }
        }
        let mut cublas_times = vec![];
        let mut times = vec![vec![]; prepared.len()];
        for _ in 0..ROUNDS {
            cublas_times.push(timer.time(stream, LAUNCHES, &mut cublas_launch)?);
            for (p, t) in prepared.iter_mut().zip(times.iter_mut()) {
                t.push(timer.time(stream, LAUNCHES, || problem.launch(p))?);
            }
        }
        if let Some(error) = cublas_failure {
            return Err(error);
        }
        let flops = 2.0 * (m * n * k) as f64;
        let tflops_of = |ms: f64| flops / (ms * 1e-3) / 1e12;
        let cublas_ms = median(&cublas_times).unwrap_or(f64::NAN);
        println!(
            "time {size}^3: {cublas_ms:.3} ms, {:.1} TFLOP/s (cuBLAS)",
            tflops_of(cublas_ms)
        );
        for ((p, t), (outside, worst)) in prepared.iter().zip(&times).zip(checks) {
            let ms = median(t).unwrap_or(f64::NAN);
            let row = Row {
                size,
                label: p.variant.label(),
                ms,
                tflops: tflops_of(ms),
                cublas_ms,
                cublas_tflops: tflops_of(cublas_ms),
                outside,
                worst,
            };
            println!(
                "time {size}^3: {ms:.3} ms, {:.1} TFLOP/s, {:.1} % of cuBLAS ({})",
                row.tflops,
                100.0 * row.tflops / row.cublas_tflops,
                row.label
            );
            rows.push(row);
        }
    }
    let table = table(&rows);
    println!("\n{table}");
    if let Some(dir) = bench {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("gemm_bf16.md"), &table)?;
        std::fs::write(dir.join("gemm_bf16.json"), json(&gpu.ctx.name()?, &rows))?;
        println!("gemm_bf16: results in {}", dir.display());
    }
    Ok(ok)
}

/// The results as a markdown table.
fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| size | kernel | ms | TFLOP/s | cuBLAS ms | cuBLAS TFLOP/s | % of cuBLAS | check |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        out += &format!(
            "| {}³ | {} | {:.3} | {:.1} | {:.3} | {:.1} | {:.1} % | {} |\n",
            r.size,
            r.label,
            r.ms,
            r.tflops,
            r.cublas_ms,
            r.cublas_tflops,
            100.0 * r.tflops / r.cublas_tflops,
            if r.outside == 0 {
                "all entries within bf16 tolerance of cuBLAS's"
            } else {
                "FAIL"
            }
        );
    }
    out
}

/// The results as JSON (the labels hold no characters that need escaping).
fn json(gpu: &str, rows: &[Row]) -> String {
    let rows: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "    {{\"name\": \"gemm_bf16\", \"size\": \"{}^3\", \"kernel\": \"{}\", \"ms\": \
                 {:.4}, \"tflops\": {:.1}, \"cublas_ms\": {:.4}, \"cublas_tflops\": {:.1}, \
                 \"ratio\": {:.4}, \"entries_outside_tolerance\": {}, \"worst_error\": {:.3}}}",
                r.size,
                r.label,
                r.ms,
                r.tflops,
                r.cublas_ms,
                r.cublas_tflops,
                r.tflops / r.cublas_tflops,
                r.outside,
                r.worst
            )
        })
        .collect();
    format!(
        "{{\n  \"gpu\": \"{}\",\n  \"reference\": \"cuBLAS cublasGemmEx (bf16 in and out, f32 \
         compute)\",\n  \"timing\": \"CUDA events, median of {ROUNDS} interleaved rounds of \
         {LAUNCHES} launches after {WARMUP} warm-ups\",\n  \"rows\": [\n{}\n  ]\n}}\n",
        gpu.replace('"', "'"),
        rows.join(",\n")
    )
}
