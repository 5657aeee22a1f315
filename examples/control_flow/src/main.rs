//! Control flow: `if`, `match` on integers and ranges, `while`, `loop`, `for` over ranges,
//! early `return`, `break` (with labels) and `continue`.

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// Steps of the Collatz sequence from `n` down to 1, giving up (early return) after `limit`.
pub fn collatz_steps(mut n: u64, limit: u32) -> u32 {
    if n == 0 {
        return u32::MAX;
    }
    let mut steps = 0;
    while n != 1 {
        if steps == limit {
            return limit + 1;
        }
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    steps
}

/// Buckets by range patterns.
pub fn classify(x: i32) -> u32 {
    match x {
        i32::MIN..=-1000 => 0,
        -999..=-1 => 1,
        0 => 2,
        1..=9 => 3,
        10 | 20 | 30 => 4,
        11..=99 => 5,
        100..1000 => 6,
        _ => 7,
    }
}

/// Sum of the digits of `x`, with `loop` and `break`.
pub fn digit_sum(x: u32) -> u32 {
    let mut rest = x;
    let mut sum = 0;
    loop {
        sum += rest % 10;
        rest /= 10;
        if rest == 0 {
            break sum;
        }
    }
}

/// Sum over `0..n` of the numbers not divisible by 3, stopping at the first multiple of 97
/// beyond 100 (`for`, `continue`, `break`).
pub fn skip_sum(n: u32) -> u32 {
    let mut sum = 0u32;
    for i in 0..n {
        if i % 3 == 0 {
            continue;
        }
        if i > 100 && i % 97 == 0 {
            break;
        }
        sum = sum.wrapping_add(i);
    }
    sum
}

/// The first pair `(i, j)` with `i * j == target` in a small grid, by a labelled break out
/// of two loops; 0 if there is none.
pub fn find_pair(target: u32) -> u32 {
    let mut found = 0;
    'outer: for i in 1..20u32 {
        for j in (1..=i).rev() {
            if i * j == target {
                found = i * 100 + j;
                break 'outer;
            }
            if i * j < target / 4 {
                continue 'outer;
            }
        }
    }
    found
}

/// Operation `op` on the inputs.
pub fn control(op: u32, x: i32, n: u64) -> u32 {
    match op {
        0 => collatz_steps(n % 100_000, 300),
        1 => classify(x),
        2 => digit_sum(x as u32),
        3 => skip_sum((n % 400) as u32),
        _ => find_pair((x as u32) % 400),
    }
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    #[kernel]
    pub fn control(op: u32, x: &[i32], n: &[u64], mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::control(op, x[i.get()], n[i.get()]);
        }
    }
}

fn main() -> ExitCode {
    run_example("control_flow", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    const N: usize = 1 << 20;
    let mut rng = Rng::new(5);
    let x: Vec<i32> = rng.vec(N, |r| match r.next_u64() % 3 {
        0 => (r.next_u64() % 2200) as i32 - 1100,
        1 => (r.next_u64() % 40) as i32 - 5,
        _ => r.next_u64() as i32,
    });
    let n: Vec<u64> = rng.vec(N, |r| r.next_u64());
    let module = kernels::load(&gpu.ctx)?;
    let x_dev = gpu.stream.clone_htod(&x)?;
    let n_dev = gpu.stream.clone_htod(&n)?;
    let mut out = gpu.stream.alloc_zeros::<u32>(N)?;
    let mut ok = true;
    for op in 0..5 {
        module.control(
            &gpu.stream,
            LaunchConfig::for_num_elems(N as u32),
            op,
            &x_dev,
            &n_dev,
            &mut out,
        )?;
        let got = gpu.stream.clone_dtoh(&out)?;
        let expected: Vec<u32> = (0..N).map(|i| control(op, x[i], n[i])).collect();
        ok &= check(&format!("control op {op}"), &got, &expected);
    }
    Ok(ok)
}
