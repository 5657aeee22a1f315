//! Byte histograms (256 bins) of an array of words, three ways: straight into the global bins
//! with device-scope atomics; into block-private shared bins (`SharedArray<BlockAtomicU32, 256>`,
//! block-scope atomics) merged into the global bins at the end of each block; and the same with
//! warp-aggregated increments (`match_any` finds the lanes that hit the same bin, and one of
//! them adds their count). The input is skewed so that many threads hit the same bins at once.

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check};

/// Bins: one per byte value.
pub const BINS: usize = 256;

#[cuda_module]
pub mod kernels {
    use cuda_device::atomic::{AtomicOrdering, BlockAtomicU32, DeviceAtomicU32};
    use cuda_device::{SharedArray, kernel, sync, thread, warp};

    use super::BINS;
    use crate::collectives::WARP;

    /// Counts every byte of `words` into `bins`, one thread per word, with device-scope
    /// atomics on global memory.
    #[kernel]
    pub fn histogram_global(words: &[u32], bins: &[DeviceAtomicU32]) {
        if let Some(&word) = words.get(thread::index_1d().get()) {
            for &byte in &word.to_le_bytes() {
                bins[usize::from(byte)].fetch_add(1, AtomicOrdering::Relaxed);
            }
        }
    }

    /// Counts every byte of `words` into `bins`: each block counts a grid-stride share into
    /// its own bins in shared memory (block-scope atomics, which stay in the multiprocessor),
    /// then adds its non-zero counts to the global bins.
    #[kernel]
    pub fn histogram_shared(words: &[u32], bins: &[DeviceAtomicU32]) {
        static mut LOCAL: SharedArray<BlockAtomicU32, BINS> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let threads = thread::blockDim_x() as usize;
        for bin in (t..BINS).step_by(threads) {
            unsafe { LOCAL[bin].store(0, AtomicOrdering::Relaxed) };
        }
        sync::syncthreads();
        let grid_threads = threads * thread::gridDim_x() as usize;
        for i in (thread::index_1d().get()..words.len()).step_by(grid_threads) {
            for &byte in &words[i].to_le_bytes() {
                unsafe { LOCAL[usize::from(byte)].fetch_add(1, AtomicOrdering::Relaxed) };
            }
        }
        sync::syncthreads();
        for bin in (t..BINS).step_by(threads) {
            let count = unsafe { LOCAL[bin].load(AtomicOrdering::Relaxed) };
            if count != 0 {
                bins[bin].fetch_add(count, AtomicOrdering::Relaxed);
            }
        }
    }

    /// [`histogram_shared`] with warp-aggregated increments: the lanes of a warp look at 32
    /// consecutive words together, `match_any` groups the lanes whose byte falls in the same
    /// bin, and the lowest lane of each group adds the group's size. The whole warp stays in
    /// the loop (lanes past the end carry no byte), as `match_any` over the full warp needs.
    #[kernel]
    pub fn histogram_match_any(words: &[u32], bins: &[DeviceAtomicU32]) {
        static mut LOCAL: SharedArray<BlockAtomicU32, BINS> = SharedArray::UNINIT;
        const NO_BYTE: u32 = BINS as u32;
        let t = thread::threadIdx_x() as usize;
        let threads = thread::blockDim_x() as usize;
        let lane = t % WARP;
        for bin in (t..BINS).step_by(threads) {
            unsafe { LOCAL[bin].store(0, AtomicOrdering::Relaxed) };
        }
        sync::syncthreads();
        let grid_threads = threads * thread::gridDim_x() as usize;
        let mut warp_start = thread::index_1d().get() - lane;
        while warp_start < words.len() {
            let word = words.get(warp_start + lane).copied();
            for k in 0..4 {
                let bin = word.map_or(NO_BYTE, |w| (w >> (8 * k)) & 0xff);
                let peers = warp::match_any(bin);
                if bin != NO_BYTE && lane as u32 == peers.trailing_zeros() {
                    unsafe {
                        LOCAL[bin as usize].fetch_add(peers.count_ones(), AtomicOrdering::Relaxed)
                    };
                }
            }
            warp_start += grid_threads;
        }
        sync::syncthreads();
        for bin in (t..BINS).step_by(threads) {
            let count = unsafe { LOCAL[bin].load(AtomicOrdering::Relaxed) };
            if count != 0 {
                bins[bin].fetch_add(count, AtomicOrdering::Relaxed);
            }
        }
    }
}

pub fn run(gpu: &Gpu, rng: &mut Rng) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut ok = true;

    // Half the bytes are 0x00, 0x07 or 0xff; the rest are uniform.
    let n = (1 << 22) + 333;
    let words: Vec<u32> = rng.vec(n, |r| {
        let mut word = 0u32;
        for k in 0..4 {
            let roll = r.next_u64();
            let byte = match roll % 6 {
                0 => 0x00,
                1 => 0x07,
                2 => 0xff,
                _ => (roll >> 8) as u32 & 0xff,
            };
            word |= byte << (8 * k);
        }
        word
    });
    let mut expected = vec![0u32; BINS];
    for word in &words {
        for byte in word.to_le_bytes() {
            expected[usize::from(byte)] += 1;
        }
    }
    let words_dev = stream.clone_htod(&words)?;

    let mut bins = stream.alloc_zeros::<u32>(BINS)?;
    module.histogram_global(
        stream,
        LaunchConfig::for_num_elems(n as u32),
        &words_dev,
        &mut bins,
    )?;
    ok &= check(
        "byte histogram, global atomics",
        &stream.clone_dtoh(&bins)?,
        &expected,
    );

    // Blocks smaller and larger than the number of bins.
    for threads in [128u32, 512] {
        let cfg = LaunchConfig {
            grid_dim: (264, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut bins = stream.alloc_zeros::<u32>(BINS)?;
        module.histogram_shared(stream, cfg, &words_dev, &mut bins)?;
        ok &= check(
            &format!("byte histogram, shared BlockAtomicU32 bins merged, {threads} threads"),
            &stream.clone_dtoh(&bins)?,
            &expected,
        );
        let mut bins = stream.alloc_zeros::<u32>(BINS)?;
        module.histogram_match_any(stream, cfg, &words_dev, &mut bins)?;
        ok &= check(
            &format!("byte histogram, warp-aggregated by match_any, {threads} threads"),
            &stream.clone_dtoh(&bins)?,
            &expected,
        );
    }
    Ok(ok)
}
