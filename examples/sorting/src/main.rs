//! `core` code that relies on constants in device memory and calls through function pointers:
//! `sort_unstable` (its quicksort picks a partition function through a pointer),
//! `Result::expect` (a string literal), promoted references (`unwrap_or(&0)`), string
//! literals, `const` tables used by reference, and `Ordering::then_with` on promoted operands.
//! Each thread runs [`window_op`]; the host runs it too and compares exactly.

use std::process::ExitCode;

use cuda_host::cuda_module;
use example_support::{Gpu, Rng, blocks_of, check, run_example};

/// The number of elements in each thread's window.
pub const WINDOW: usize = 12;

/// The number of operations [`window_op`] knows.
pub const OPS: u32 = 6;

/// A lookup table used by reference.
pub const SQUARES: [u32; 8] = [0, 1, 4, 9, 16, 25, 36, 49];

/// Operation `op` on the thread's window `w`.
pub fn window_op(op: u32, w: &[u32]) -> u64 {
    match op {
        // sort_unstable on a small per-thread array, and sort_unstable_by_key.
        0 => {
            let mut a = [0u32; WINDOW];
            a.copy_from_slice(w);
            a.sort_unstable();
            let mut b = a;
            b.sort_unstable_by_key(|&v| core::cmp::Reverse(v % 1000));
            a.iter().zip(b.iter()).fold(0u64, |h, (&x, &y)| {
                h.rotate_left(7) ^ x as u64 ^ (y as u64) << 32
            })
        }
        // Result::expect on the success path.
        1 => {
            let r: Result<u32, u8> = if w[0] != u32::MAX {
                Ok(w[0] / 2)
            } else {
                Err(1)
            };
            r.expect("the first element is never u32::MAX") as u64
        }
        // Promoted references: unwrap_or(&0), min_by_key over references.
        2 => {
            let max = *w.iter().max().unwrap_or(&0) as u64;
            let first_even = *w.iter().find(|&&v| v % 2 == 0).unwrap_or(&1) as u64;
            max ^ first_even << 32
        }
        // A `const` table by reference, and a string literal's length.
        3 => {
            let table: &[u32] = &SQUARES;
            let label = "cuda-oxide";
            w.iter()
                .map(|&v| table[(v % 8) as usize] as u64)
                .sum::<u64>()
                + label.len() as u64
        }
        // Ordering::then_with, and `any`/`all` whose `try_fold` returns a promoted `ControlFlow`.
        4 => {
            let ord = w[0].cmp(&w[1]).then_with(|| w[2].cmp(&w[3]));
            let any = w.iter().any(|&v| v % 5 == 0) as u64;
            let all = w.iter().all(|&v| v > 10) as u64;
            (ord as i8 as u64 & 3) | any << 2 | all << 3
        }
        // binary_search on the sorted window.
        _ => {
            let mut a = [0u32; WINDOW];
            a.copy_from_slice(w);
            a.sort_unstable();
            match a.binary_search(&w[5]) {
                Ok(at) => at as u64,
                Err(at) => 100 + at as u64,
            }
        }
    }
}

/// The window of thread `i`.
pub fn window(x: &[u32], i: usize) -> &[u32] {
    &x[i..i + WINDOW]
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    #[kernel]
    pub fn sorted_ops(op: u32, w: &[u32], mut out: DisjointSlice<u64>) {
        let i = thread::index_1d();
        let n = i.get();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::window_op(op, super::window(w, n));
        }
    }
}

fn main() -> ExitCode {
    run_example("sorting", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    const N: usize = 1 << 16;
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(5);
    let w: Vec<u32> = rng.vec(N + WINDOW, |r| (r.next_u64() >> (r.next_u64() % 40)) as u32);
    let w_dev = gpu.stream.clone_htod(&w)?;
    let mut out = gpu.stream.alloc_zeros::<u64>(N)?;
    // Blocks of 256: with panic messages (the dev profile), `sorted_ops` keeps the calls of
    // its panic paths and needs more registers than blocks of 1,024 threads leave a thread.
    let cfg = blocks_of(256, N);
    let mut ok = true;
    for op in 0..OPS {
        module.sorted_ops(&gpu.stream, cfg, op, &w_dev, &mut out)?;
        let expected: Vec<u64> = (0..N).map(|i| window_op(op, window(&w, i))).collect();
        ok &= check(
            &format!("window op {op}"),
            &gpu.stream.clone_dtoh(&out)?,
            &expected,
        );
    }
    Ok(ok)
}
