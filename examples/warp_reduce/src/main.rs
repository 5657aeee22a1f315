//! Warp-level operations: butterfly sums with `shuffle_xor`, a broadcast with `shuffle`,
//! neighbour exchange with `shuffle_down`/`shuffle_up`, `lane_id`, and a block barrier.

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, sync, thread, warp};

    /// Every lane gets the sum of its warp's 32 values (wrapping `u32`).
    #[kernel]
    pub fn warp_sum_u32(values: &[u32], mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        let mut sum = values[i.get()];
        let mut mask = 16;
        while mask > 0 {
            sum = sum.wrapping_add(warp::shuffle_xor(sum, mask));
            mask /= 2;
        }
        sync::syncthreads();
        if let Some(slot) = out.get_mut(i) {
            *slot = sum;
        }
    }

    /// Every lane gets the sum of its warp's 32 `i64` values (two 32-bit shuffles each).
    #[kernel]
    pub fn warp_sum_i64(values: &[i64], mut out: DisjointSlice<i64>) {
        let i = thread::index_1d();
        let mut sum = values[i.get()];
        for shift in 0..5 {
            sum = sum.wrapping_add(warp::shuffle_xor(sum, 1 << shift));
        }
        if let Some(slot) = out.get_mut(i) {
            *slot = sum;
        }
    }

    /// Lane 0's value times the lane's own, plus the next lane's value (`shuffle_down`) and
    /// the previous lane's (`shuffle_up`), as `f32`.
    #[kernel]
    pub fn neighbours(values: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread::index_1d();
        let mine = values[i.get()];
        let first = warp::shuffle(mine, 0);
        let next = warp::shuffle_down(mine, 1);
        let previous = warp::shuffle_up(mine, 1);
        let lane = warp::lane_id();
        if let Some(slot) = out.get_mut(i) {
            *slot = first * mine + next + previous * 0.5 + lane as f32;
        }
    }
}

const N: usize = 1 << 20;

fn main() -> ExitCode {
    run_example("warp_reduce", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(9);
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let mut ok = true;

    let values: Vec<u32> = rng.vec(N, |r| r.next_u64() as u32);
    let values_dev = gpu.stream.clone_htod(&values)?;
    let mut out = gpu.stream.alloc_zeros::<u32>(N)?;
    module.warp_sum_u32(&gpu.stream, cfg, &values_dev, &mut out)?;
    let expected: Vec<u32> = values
        .chunks(32)
        .flat_map(|warp| {
            let sum = warp.iter().fold(0u32, |a, v| a.wrapping_add(*v));
            std::iter::repeat_n(sum, warp.len())
        })
        .collect();
    ok &= check("warp sum u32", &gpu.stream.clone_dtoh(&out)?, &expected);

    let values: Vec<i64> = rng.vec(N, |r| r.next_u64() as i64);
    let values_dev = gpu.stream.clone_htod(&values)?;
    let mut out = gpu.stream.alloc_zeros::<i64>(N)?;
    module.warp_sum_i64(&gpu.stream, cfg, &values_dev, &mut out)?;
    let expected: Vec<i64> = values
        .chunks(32)
        .flat_map(|warp| {
            let sum = warp.iter().fold(0i64, |a, v| a.wrapping_add(*v));
            std::iter::repeat_n(sum, warp.len())
        })
        .collect();
    ok &= check("warp sum i64", &gpu.stream.clone_dtoh(&out)?, &expected);

    let values: Vec<f32> = rng.vec(N, |r| r.f32_in(-4.0, 4.0));
    let values_dev = gpu.stream.clone_htod(&values)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(N)?;
    module.neighbours(&gpu.stream, cfg, &values_dev, &mut out)?;
    let expected: Vec<f32> = (0..N)
        .map(|i| {
            let lane = i % 32;
            let base = i - lane;
            let next = if lane < 31 { values[i + 1] } else { values[i] };
            let previous = if lane > 0 { values[i - 1] } else { values[i] };
            values[base] * values[i] + next + previous * 0.5 + lane as f32
        })
        .collect();
    ok &= check(
        "warp neighbours f32",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );

    Ok(ok)
}
