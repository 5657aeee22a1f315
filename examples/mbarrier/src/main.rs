//! Asynchronous barriers (`cuda_device::mbarrier`, sm_90): a block that exchanges values
//! through shared memory for many phases of one barrier (parity 0, 1, 0, ...), and a
//! producer/consumer pipeline (one producer warp, four consumer warps, a ring of two slots with
//! a "full" and an "empty" barrier each). Both are checked against the CPU on random data.

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// Threads of an `exchange` block.
pub const BLOCK: usize = 128;
/// Rounds of `exchange`: two barrier phases each.
pub const ROUNDS: usize = 9;
/// Values per pipeline chunk: one per consumer thread.
pub const CHUNK: usize = 128;
/// Slots of the pipeline's ring.
pub const STAGES: usize = 2;
/// Chunks each pipeline block moves through the ring.
pub const CHUNKS: usize = 7;

#[cuda_module]
mod kernels {
    use cuda_device::mbarrier::{Barrier, BarrierHandle};
    use cuda_device::{SharedArray, kernel, thread};

    use super::{BLOCK, CHUNK, CHUNKS, ROUNDS, STAGES};

    /// Each round, every thread writes its value to shared memory, the block meets at the
    /// barrier, every thread reads another thread's value and mixes it into its own, and the
    /// block meets again before the next write. `out` gets each thread's final value and the
    /// parity its barrier handle waits for at the end.
    #[kernel]
    pub fn exchange(x: &[u32], out: &mut [u32], parity: &mut [u32]) {
        static mut BAR: SharedArray<Barrier, 1> = SharedArray::UNINIT;
        static mut BUF: SharedArray<u32, BLOCK> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let i = thread::blockIdx_x() as usize * BLOCK + t;
        // SAFETY: `BAR` is shared memory used by nothing else; every thread calls `init`.
        let mut bar = unsafe { Barrier::init((&raw mut BAR).cast(), BLOCK as u32) };
        let mut acc = x[i];
        for round in 0..ROUNDS {
            // SAFETY: each thread writes its own element; reads come after the barrier.
            unsafe { BUF[t] = acc };
            bar.arrive_and_wait();
            let other = unsafe { BUF[(t + 1 + 5 * round) % BLOCK] };
            bar.arrive_and_wait();
            acc = acc.wrapping_mul(31).wrapping_add(other ^ round as u32);
        }
        out[i] = acc;
        parity[i] = bar.parity();
    }

    /// Warp 0 produces `CHUNKS` chunks of `CHUNK` values (`3 x + 1` of the block's part of
    /// `x`) into a ring of `STAGES` slots; warps 1 to 4 consume them, thread `c` summing element
    /// `c` of every chunk into `out`. A slot's "full" barrier (32 producer arrivals) says that
    /// its chunk is written, its "empty" barrier (128 consumer arrivals) that it was read.
    #[kernel]
    pub fn pipeline(x: &[u32], out: &mut [u32]) {
        static mut FULL: SharedArray<Barrier, STAGES> = SharedArray::UNINIT;
        static mut EMPTY: SharedArray<Barrier, STAGES> = SharedArray::UNINIT;
        static mut RING: SharedArray<u32, { STAGES * CHUNK }> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let block = thread::blockIdx_x() as usize;
        let full_slots: *mut Barrier = (&raw mut FULL).cast();
        let empty_slots: *mut Barrier = (&raw mut EMPTY).cast();
        let ring: *mut u32 = (&raw mut RING).cast();
        // SAFETY: shared memory used by nothing else; every thread calls `init`.
        let mut full: [BarrierHandle; STAGES] =
            core::array::from_fn(|s| unsafe { Barrier::init(full_slots.add(s), 32) });
        let mut empty: [BarrierHandle; STAGES] = core::array::from_fn(|s| unsafe {
            Barrier::init(empty_slots.add(s), CHUNK as u32).start_released()
        });
        if t < 32 {
            for c in 0..CHUNKS {
                let s = c % STAGES;
                empty[s].wait();
                for k in 0..CHUNK / 32 {
                    let j = k * 32 + t;
                    let v = x[(block * CHUNKS + c) * CHUNK + j];
                    // SAFETY: the slot is free (its empty barrier's phase completed).
                    unsafe { *ring.add(s * CHUNK + j) = v.wrapping_mul(3).wrapping_add(1) };
                }
                let _ = full[s].arrive();
            }
        } else {
            let me = t - 32;
            let mut sum = 0u32;
            for c in 0..CHUNKS {
                let s = c % STAGES;
                full[s].wait();
                // SAFETY: the chunk is written (its full barrier's phase completed).
                sum = sum.wrapping_add(unsafe { *ring.add(s * CHUNK + me) } ^ c as u32);
                let _ = empty[s].arrive();
            }
            out[block * CHUNK + me] = sum;
        }
    }
}

fn main() -> ExitCode {
    run_example("mbarrier", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(90);
    let mut ok = true;

    let blocks = 40;
    let n = blocks * BLOCK;
    let x: Vec<u32> = rng.vec(n, |r| r.next_u64() as u32);
    let x_dev = gpu.stream.clone_htod(&x)?;
    let mut out = gpu.stream.alloc_zeros::<u32>(n)?;
    let mut parity = gpu.stream.alloc_zeros::<u32>(n)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    module.exchange(&gpu.stream, cfg, &x_dev, &mut out, &mut parity)?;
    let mut expected = vec![0u32; n];
    for b in 0..blocks {
        let mut acc: Vec<u32> = x[b * BLOCK..(b + 1) * BLOCK].to_vec();
        for round in 0..ROUNDS {
            let before = acc.clone();
            for t in 0..BLOCK {
                let other = before[(t + 1 + 5 * round) % BLOCK];
                acc[t] = acc[t].wrapping_mul(31).wrapping_add(other ^ round as u32);
            }
        }
        expected[b * BLOCK..(b + 1) * BLOCK].copy_from_slice(&acc);
    }
    ok &= check(
        "exchange (18 phases)",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );
    // 2 * ROUNDS phases waited for: the handle is back at parity 0.
    ok &= check(
        "final parity",
        &gpu.stream.clone_dtoh(&parity)?,
        &vec![0; n],
    );

    let blocks = 24;
    let x: Vec<u32> = rng.vec(blocks * CHUNKS * CHUNK, |r| r.next_u64() as u32);
    let x_dev = gpu.stream.clone_htod(&x)?;
    let mut out = gpu.stream.alloc_zeros::<u32>(blocks * CHUNK)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (32 + CHUNK as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    module.pipeline(&gpu.stream, cfg, &x_dev, &mut out)?;
    let mut expected = vec![0u32; blocks * CHUNK];
    for b in 0..blocks {
        for c in 0..CHUNKS {
            for j in 0..CHUNK {
                let v = x[(b * CHUNKS + c) * CHUNK + j]
                    .wrapping_mul(3)
                    .wrapping_add(1);
                let e = &mut expected[b * CHUNK + j];
                *e = e.wrapping_add(v ^ c as u32);
            }
        }
    }
    ok &= check(
        "producer/consumer pipeline (2 slots, 7 chunks)",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );
    Ok(ok)
}
