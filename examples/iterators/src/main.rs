//! `core`'s iterators in device code: `zip`, `map`, `sum`, `fold`, `any`, `all`, `position`,
//! `enumerate`, `rev`, `step_by`, `windows`, `chunks_exact`, `max_by` with `total_cmp`,
//! `count`, `min`/`max`, `enumerate().skip()`, `filter_map`, `take_while`, `scan`, iterating
//! arrays by value, and closures capturing their environment.
//!
//! Each thread runs [`window_op`] on its own window of the input (the same function the host
//! runs to check the results, exactly: every operation is sequential, so even the float sums
//! round the same way).

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// The number of elements each thread looks at.
pub const WINDOW: usize = 16;

/// The number of operations [`window_op`] knows.
pub const OPS: u32 = 22;

/// Operation `op` on the window `w` (integers) and `f` (floats) of one thread.
pub fn window_op(op: u32, w: &[u32], f: &[f32], k: u32) -> u64 {
    match op {
        // zip, map, sum
        0 => w
            .iter()
            .zip(f.iter())
            .map(|(&a, &b)| (a % 100) as f32 * b)
            .sum::<f32>()
            .to_bits() as u64,
        // fold with a closure capturing `k`
        1 => w.iter().fold(k as u64, |acc, &v| {
            acc.wrapping_mul(31).wrapping_add((v ^ k) as u64)
        }),
        // position, and any/all over plain comparisons
        2 => {
            let at = w
                .iter()
                .position(|&v| v % 7 == k % 7)
                .map_or(99, |p| p as u64);
            let any = w.iter().any(|&v| v > k) as u64;
            let all = w.iter().all(|&v| v % 2 == 0) as u64;
            at * 4 + any * 2 + all
        }
        // enumerate
        3 => w
            .iter()
            .enumerate()
            .map(|(j, &v)| (j as u64 + 1) * (v as u64 % 1000))
            .sum(),
        // rev
        4 => w.iter().rev().fold(0u64, |acc, &v| {
            acc.wrapping_mul(1_000_003).wrapping_add(v as u64)
        }),
        // step_by over a range and over a slice
        5 => {
            let stride = (k % 4 + 1) as usize;
            let by_index: u64 = (0..w.len()).step_by(stride).map(|j| w[j] as u64).sum();
            let by_iter: u64 = w.iter().step_by(stride + 1).map(|&v| v as u64 * 3).sum();
            by_index ^ (by_iter << 1)
        }
        // windows
        6 => w
            .windows(3)
            .map(|t| (t[0] as u64 + t[2] as u64) % 10_007 * (t[1] as u64 % 10_007))
            .max()
            .unwrap_or(0),
        // chunks_exact, with its remainder
        7 => {
            let chunks = w.chunks_exact(5);
            let rest: u64 = chunks.remainder().iter().map(|&v| v as u64).sum();
            let chunk_sum = chunks.fold(0u64, |a, c| a.wrapping_add(c[0] as u64 * c[4] as u64));
            chunk_sum.wrapping_add(rest << 20)
        }
        // max_by with total_cmp, min_by likewise
        8 => {
            let max = f
                .iter()
                .copied()
                .max_by(|a, b| a.total_cmp(b))
                .unwrap_or(0.0);
            let min = f
                .iter()
                .copied()
                .min_by(|a, b| a.total_cmp(b))
                .unwrap_or(0.0);
            ((max.to_bits() as u64) << 32) | min.to_bits() as u64
        }
        // count after filter
        9 => w.iter().filter(|&&v| v & k != 0).count() as u64,
        // min and max
        10 => {
            let lo = w.iter().min().copied().unwrap_or(0) as u64;
            let hi = w.iter().max().copied().unwrap_or(0) as u64;
            (hi << 32) | lo
        }
        // enumerate().skip()
        11 => w
            .iter()
            .enumerate()
            .skip((k % 5) as usize)
            .map(|(j, &v)| j as u64 ^ v as u64)
            .fold(0, |a, b| a.wrapping_mul(7).wrapping_add(b)),
        // an array iterated by value
        12 => {
            let first = [w[0], w[1], w[2], k];
            let mut acc = 0u64;
            for v in first {
                acc = acc * 17 + (v % 1000) as u64;
            }
            acc + first.into_iter().map(|v| v as u64 & 0xff).sum::<u64>()
        }
        // filter_map and take_while
        13 => {
            let odd_halves: u64 = w
                .iter()
                .filter_map(|&v| (v % 2 == 1).then_some(v as u64 / 2))
                .sum();
            let prefix = w.iter().take_while(|&&v| v % 11 != 0).count() as u64;
            odd_halves * 32 + prefix
        }
        // scan: running maxima
        14 => w
            .iter()
            .scan(0u32, |best, &v| {
                *best = (*best).max(v % 5000);
                Some(*best as u64)
            })
            .sum(),
        // last, nth, find
        15 => {
            let last = w.last().copied().unwrap_or(0) as u64;
            let third = w.iter().nth(2).copied().unwrap_or(0) as u64;
            let found = w.iter().find(|&&v| v % 3 == 0).copied().unwrap_or(1) as u64;
            last ^ (third << 16) ^ (found << 32)
        }
        // a closure stored in a variable and called several times
        16 => {
            let scale = k as u64 | 1;
            let weigh = |v: u32| (v as u64 % 997) * scale;
            weigh(w[0]) + weigh(w[w.len() - 1]) + w.iter().map(|&v| weigh(v)).max().unwrap_or(0)
        }
        // zip of two iterators of different lengths, and chain
        17 => w
            .iter()
            .zip(w.iter().skip(3))
            .map(|(&a, &b)| a.wrapping_sub(b) as u64)
            .chain(f.iter().take(2).map(|&x| x.to_bits() as u64))
            .fold(0u64, |a, b| a.rotate_left(5) ^ b),
        // sum and product of floats mapped from integers
        18 => {
            let s: f32 = f.iter().map(|&x| x * 0.5).sum();
            let p: f32 = f.iter().take(4).map(|&x| x.abs() + 1.0).product();
            ((s.to_bits() as u64) << 32) | p.to_bits() as u64
        }
        // Arrays: map, from_fn, each_ref; flatten over options and nested arrays
        20 => {
            let doubled = [w[0], w[1], k].map(|v| v as u64 * 2);
            let built: [u64; 4] = core::array::from_fn(|j| w[j] as u64 + j as u64);
            let options = [Some(w[2]), None, Some(k)];
            let flat: u64 = options.iter().flatten().map(|&v| v as u64).sum();
            let nested: u64 = [[w[3], 1], [2, w[4]]]
                .iter()
                .flatten()
                .map(|&v| v as u64)
                .sum();
            doubled.iter().sum::<u64>()
                ^ built.each_ref().iter().map(|&&v| v).sum::<u64>() << 1
                ^ flat << 2
                ^ nested << 3
        }
        // cycle, peekable, rev().enumerate(), reduce, i128 sums and products
        21 => {
            let cycled: u64 = w.iter().cycle().take(40).map(|&v| v as u64).sum();
            let mut peek = w.iter().peekable();
            let first = peek.peek().map_or(0, |&&v| v as u64);
            let last_pair = w
                .iter()
                .rev()
                .enumerate()
                .map(|(j, &v)| j as u64 ^ v as u64)
                .last()
                .unwrap_or(0);
            let max = w.iter().copied().reduce(u32::max).unwrap_or(0) as u64;
            let wide: i128 = w.iter().map(|&v| v as i128 * -1_000_000_000_007).sum();
            let product: u64 = w.iter().take(5).map(|&v| (v % 7 + 1) as u64).product();
            let lowest = f.iter().copied().fold(f32::INFINITY, f32::min);
            cycled
                ^ first << 1
                ^ last_pair << 2
                ^ max << 3
                ^ (wide as u64)
                ^ (wide >> 64) as u64
                ^ product << 5
                ^ (lowest.to_bits() as u64) << 9
        }
        // max_by_key and min_by_key with an index
        _ => {
            let at = w
                .iter()
                .enumerate()
                .max_by_key(|&(_, &v)| v % 1000)
                .map_or(0, |(j, _)| j);
            let lo = w
                .iter()
                .enumerate()
                .min_by_key(|&(_, &v)| v % 1000)
                .map_or(0, |(j, _)| j);
            (at as u64) << 8 | lo as u64
        }
    }
}

/// The window of thread `i`: `WINDOW` elements starting at `i`, shorter near the end.
pub fn window<T>(x: &[T], i: usize) -> &[T] {
    &x[i..(i + WINDOW).min(x.len())]
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    #[kernel]
    pub fn windows(op: u32, k: u32, w: &[u32], f: &[f32], mut out: DisjointSlice<u64>) {
        let i = thread::index_1d();
        let n = i.get();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::window_op(op, super::window(w, n), super::window(f, n), k);
        }
    }
}

fn main() -> ExitCode {
    run_example("iterators", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    const N: usize = 1 << 16;
    // The last `WINDOW - 3` threads have windows shorter than 3: too short for `window_op`'s
    // indexing, so they are not launched.
    const THREADS: usize = N - WINDOW;
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(41);
    let w: Vec<u32> = rng.vec(N, |r| (r.next_u64() >> (r.next_u64() % 40)) as u32);
    let f: Vec<f32> = rng.vec(N, |r| r.f32_in(-100.0, 100.0));
    let (w_dev, f_dev) = (gpu.stream.clone_htod(&w)?, gpu.stream.clone_htod(&f)?);
    let mut out = gpu.stream.alloc_zeros::<u64>(THREADS)?;
    // 256-thread blocks: `for_num_elems` asks for 1,024, more than a release build of this
    // kernel (its registers) allows.
    let block = 256;
    let cfg = LaunchConfig {
        grid_dim: ((THREADS as u32).div_ceil(block), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut ok = true;
    for op in 0..OPS {
        let k = 3 + op * 7;
        module.windows(&gpu.stream, cfg, op, k, &w_dev, &f_dev, &mut out)?;
        let expected: Vec<u64> = (0..THREADS)
            .map(|i| window_op(op, window(&w, i), window(&f, i), k))
            .collect();
        ok &= check(
            &format!("iterator op {op}"),
            &gpu.stream.clone_dtoh(&out)?,
            &expected,
        );
    }
    Ok(ok)
}
