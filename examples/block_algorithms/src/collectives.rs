//! Block-wide collectives built the way CUDA programmers build them: shuffles within each warp,
//! one value per warp through shared memory, then one more warp-level step. Every thread of the
//! block must call them (they hold barriers), and the block must be whole warps.
//!
//! [`cpu`] replays their order of operations lane by lane, so that the host can check the GPU's
//! float results bit for bit rather than within a tolerance.

use cuda_device::warp::WarpValue;
use cuda_device::{SharedArray, sync, thread, warp};

/// Threads per warp.
pub const WARP: usize = 32;

/// This thread's lane in its warp, its warp in the block, and the block's number of warps.
#[inline]
fn warp_coordinates() -> (usize, usize, usize) {
    let t = thread::threadIdx_x() as usize;
    (t % WARP, t / WARP, thread::blockDim_x() as usize / WARP)
}

/// `op` over the warp's values by butterfly exchanges (lane `i` combines its value with lane
/// `i ^ 16`'s, then `i ^ 8`'s, ...): every lane ends with the result.
#[inline]
pub fn warp_reduce<T: WarpValue>(mut value: T, op: impl Fn(T, T) -> T) -> T {
    let mut mask = WARP as u32 / 2;
    while mask > 0 {
        value = op(value, warp::shuffle_xor(value, mask));
        mask /= 2;
    }
    value
}

/// The sum of the warp's values by `shuffle_down` (lane `i` adds lane `i + 16`'s, then
/// `i + 8`'s, ...): lane 0 ends with the sum, the other lanes with partial sums.
#[inline]
pub fn warp_sum_down(mut value: f32) -> f32 {
    let mut offset = WARP as u32 / 2;
    while offset > 0 {
        value += warp::shuffle_down(value, offset);
        offset /= 2;
    }
    value
}

/// `op` over one `f32` per thread of the block, `identity` being its neutral element; every
/// thread gets the result. Each warp reduces its values, lane 0 stores the warp's result in
/// shared memory, and every warp then reduces those (padded with `identity` to 32).
pub fn block_reduce(value: f32, identity: f32, op: impl Fn(f32, f32) -> f32 + Copy) -> f32 {
    static mut WARP_RESULTS: SharedArray<f32, WARP> = SharedArray::UNINIT;
    let (lane, warp_index, warps) = warp_coordinates();
    let mine = warp_reduce(value, op);
    if lane == 0 {
        unsafe { WARP_RESULTS[warp_index] = mine };
    }
    sync::syncthreads();
    let partial = if lane < warps {
        unsafe { WARP_RESULTS[lane] }
    } else {
        identity
    };
    let total = warp_reduce(partial, op);
    // The next call writes WARP_RESULTS again: every warp must have read it first.
    sync::syncthreads();
    total
}

/// Inclusive prefix sum (wrapping) of the warp's values in lane order, by `shuffle_up` steps
/// of 1, 2, 4, 8 and 16 lanes (Hillis and Steele).
#[inline]
pub fn warp_inclusive_scan(mut value: u32) -> u32 {
    let lane = thread::threadIdx_x() % WARP as u32;
    let mut delta = 1;
    while delta < WARP as u32 {
        let below = warp::shuffle_up(value, delta);
        if lane >= delta {
            value = value.wrapping_add(below);
        }
        delta *= 2;
    }
    value
}

/// Inclusive prefix sum (wrapping) of one value per thread, in thread order: returns this
/// thread's sum and the block's total. Warps scan their values, the first warp scans the warp
/// totals, and each warp adds the totals of the warps before it.
pub fn block_inclusive_scan(value: u32) -> (u32, u32) {
    static mut WARP_TOTALS: SharedArray<u32, WARP> = SharedArray::UNINIT;
    let (lane, warp_index, warps) = warp_coordinates();
    let mine = warp_inclusive_scan(value);
    if lane == WARP - 1 {
        unsafe { WARP_TOTALS[warp_index] = mine };
    }
    sync::syncthreads();
    if warp_index == 0 {
        let total = if lane < warps {
            unsafe { WARP_TOTALS[lane] }
        } else {
            0
        };
        let scanned = warp_inclusive_scan(total);
        unsafe { WARP_TOTALS[lane] = scanned };
    }
    sync::syncthreads();
    let before = if warp_index > 0 {
        unsafe { WARP_TOTALS[warp_index - 1] }
    } else {
        0
    };
    let block_total = unsafe { WARP_TOTALS[warps - 1] };
    sync::syncthreads();
    (mine.wrapping_add(before), block_total)
}

/// The collectives' order of operations replayed on the CPU, lane by lane.
pub mod cpu {
    use super::WARP;

    /// [`super::warp_reduce`]: lane 0's result.
    pub fn warp_reduce(lanes: &[f32], op: impl Fn(f32, f32) -> f32) -> f32 {
        let mut lanes: Vec<f32> = lanes.to_vec();
        assert_eq!(lanes.len(), WARP);
        let mut mask = WARP / 2;
        while mask > 0 {
            lanes = (0..WARP).map(|i| op(lanes[i], lanes[i ^ mask])).collect();
            mask /= 2;
        }
        lanes[0]
    }

    /// [`super::warp_sum_down`]: lane 0's result (a lane whose source is past the warp adds
    /// its own value, as `shfl.down` returns it).
    pub fn warp_sum_down(lanes: &[f32]) -> f32 {
        let mut lanes: Vec<f32> = lanes.to_vec();
        assert_eq!(lanes.len(), WARP);
        let mut offset = WARP / 2;
        while offset > 0 {
            lanes = (0..WARP)
                .map(|i| lanes[i] + lanes.get(i + offset).copied().unwrap_or(lanes[i]))
                .collect();
            offset /= 2;
        }
        lanes[0]
    }

    /// [`super::block_reduce`] over one value per thread of a block.
    pub fn block_reduce(values: &[f32], identity: f32, op: impl Fn(f32, f32) -> f32 + Copy) -> f32 {
        let mut partials: Vec<f32> = values.chunks(WARP).map(|w| warp_reduce(w, op)).collect();
        partials.resize(WARP, identity);
        warp_reduce(&partials, op)
    }
}
