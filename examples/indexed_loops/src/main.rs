//! Loops that index slices with their counter, the way a user writes them first: the bounds
//! checks of such loops are proven once before the loop when they can be, and the loop runs a
//! check-free, unrolled copy (`llvm_export::loop_versioning`); otherwise the checked loop runs.
//!
//! Each loop is a function in [`loops`] that one thread runs on the GPU and the host runs on
//! the CPU with the same random inputs, and the results must be equal: counting up and down,
//! `while` loops over `u32` and `i64` counters, `step_by`, 2-D indices `row * k + i` and
//! `i * n + col`, `u32` index arithmetic widened to `usize`, stores in the loop, a gather
//! whose index is data, an early `break`, nested loops. Sizes are random, so some threads'
//! loops run zero times.
//!
//! Then the checked loop itself: each case of [`OUT_OF_BOUNDS`] runs a loop whose last
//! iterations index past the end of a slice, in a process of its own (a failed check breaks
//! the CUDA context). The test before the loop fails, the checked loop runs, and the kernel
//! must stop: with the CPU's panic message, index and length in a build with panic messages
//! (the dev profile), with a fault in a release build. [`BREAK_BEFORE_END`] is the loop whose
//! test fails but which leaves before its first bad index: it must not stop.

use std::process::ExitCode;

use cuda_host::{Error, LaunchConfig, cuda_module, synchronize};
use example_support::{Gpu, Rng, case_in_own_process, check, gpu, run_example, stop_verdict};

/// The loops, shared by the kernels and the CPU reference. `t` is the thread's index.
pub mod loops {
    /// One element of a naive matrix product, `c = a × b` (`a` is `m × k`, `b` is `k × n`).
    pub fn matmul(a: &[f32], b: &[f32], n: usize, k: usize, row: usize, col: usize) -> f32 {
        let mut sum = 0.0f32;
        for i in 0..k {
            sum += a[row * k + i] * b[i * n + col];
        }
        sum
    }

    /// Row `t` of `a` dotted with `x`, counting down.
    pub fn rev_dot(a: &[f32], x: &[f32], n: usize, t: usize) -> f32 {
        let mut s = 0.0;
        for i in (0..n).rev() {
            s += a[t * n + i] * x[i];
        }
        s
    }

    /// A `while` loop over a `u32` counter, with `u32` index arithmetic widened at the end.
    pub fn row_sum_u32(a: &[u32], cols: u32, t: u32) -> u32 {
        let mut s = 0u32;
        let mut j = 0u32;
        while j < cols {
            s = s.wrapping_add(a[(t * cols + j) as usize]);
            j += 1;
        }
        s
    }

    /// Every other element of `a`, counted by `step_by(3)` from `t`.
    pub fn strided(a: &[u64], n: usize, t: usize) -> u64 {
        let mut s = 0u64;
        for i in (0..n).step_by(3) {
            s = s.wrapping_mul(31).wrapping_add(a[t + i]);
        }
        s
    }

    /// The first negative element of row `t`, or `n`.
    pub fn first_negative(a: &[f32], n: usize, t: usize) -> u32 {
        for i in 0..n {
            if a[t * n + i] < 0.0 {
                return i as u32;
            }
        }
        n as u32
    }

    /// A gather: the checks of `idx` are proven, those of `a` stay.
    pub fn gather(a: &[f32], idx: &[u32], n: usize, t: usize) -> f32 {
        let mut s = 0.0;
        for i in 0..n {
            s += a[idx[t * n + i] as usize];
        }
        s
    }

    /// A signed counter counting down to zero.
    pub fn signed_down(a: &[i32], n: i64, t: usize) -> i64 {
        let mut s = 0i64;
        let mut i = n - 1;
        while i >= 0 {
            s += a[t * n as usize + i as usize] as i64 * (i + 1);
            i -= 1;
        }
        s
    }

    /// Nested loops over a `rows × cols` window starting at row `t`.
    pub fn window(a: &[u32], rows: usize, cols: usize, t: usize) -> u64 {
        let mut s = 0u64;
        for r in 0..rows {
            for c in 0..cols {
                s += a[(t + r) * cols + c] as u64 ^ r as u64;
            }
        }
        s
    }

    /// Stores in the loop: row `t` of `out` from `a` read with stride 2.
    pub fn scale_row(a: &[f32], out: &mut [f32], n: usize, t: usize) {
        for i in 0..n {
            out[t * n + i] = a[i * 2] * (t as f32 + 1.0);
        }
    }
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    use super::loops;

    #[kernel]
    pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], m: usize, n: usize, k: usize) {
        let row = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        let col = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        if row < m && col < n {
            c[row * n + col] = loops::matmul(a, b, n, k, row, col);
        }
    }

    #[kernel]
    pub fn rev_dot(a: &[f32], x: &[f32], n: usize, mut out: DisjointSlice<f32>) {
        let t = thread::index_1d();
        if let Some(o) = out.get_mut(t) {
            *o = loops::rev_dot(a, x, n, t.get());
        }
    }

    #[kernel]
    pub fn row_sum_u32(a: &[u32], cols: u32, mut out: DisjointSlice<u32>) {
        let t = thread::index_1d();
        if let Some(o) = out.get_mut(t) {
            *o = loops::row_sum_u32(a, cols, t.get() as u32);
        }
    }

    #[kernel]
    pub fn strided(a: &[u64], n: usize, mut out: DisjointSlice<u64>) {
        let t = thread::index_1d();
        if let Some(o) = out.get_mut(t) {
            *o = loops::strided(a, n, t.get());
        }
    }

    #[kernel]
    pub fn first_negative(a: &[f32], n: usize, mut out: DisjointSlice<u32>) {
        let t = thread::index_1d();
        if let Some(o) = out.get_mut(t) {
            *o = loops::first_negative(a, n, t.get());
        }
    }

    #[kernel]
    pub fn gather(a: &[f32], idx: &[u32], n: usize, mut out: DisjointSlice<f32>) {
        let t = thread::index_1d();
        if let Some(o) = out.get_mut(t) {
            *o = loops::gather(a, idx, n, t.get());
        }
    }

    #[kernel]
    pub fn signed_down(a: &[i32], n: i64, mut out: DisjointSlice<i64>) {
        let t = thread::index_1d();
        if let Some(o) = out.get_mut(t) {
            *o = loops::signed_down(a, n, t.get());
        }
    }

    #[kernel]
    pub fn window(a: &[u32], rows: usize, cols: usize, mut out: DisjointSlice<u64>) {
        let t = thread::index_1d();
        if let Some(o) = out.get_mut(t) {
            *o = loops::window(a, rows, cols, t.get());
        }
    }

    #[kernel]
    pub fn scale_row(a: &[f32], out: &mut [f32], n: usize, threads: usize) {
        let t = thread::index_1d().get();
        if t < threads {
            loops::scale_row(a, out, n, t);
        }
    }
}

/// Loops whose last iterations index past the end: (case, what is short).
const OUT_OF_BOUNDS: &[&str] = &["matmul_short_b", "rev_dot_short_a", "row_sum_short"];

/// A loop whose test before it fails, but which breaks before its first bad index.
const BREAK_BEFORE_END: &str = "first_negative_breaks";

const CASE: &str = "--case";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, name] = args.as_slice()
        && flag == CASE
    {
        return run_case(name);
    }
    run_example("indexed_loops", |gpu| {
        let mut ok = in_bounds(gpu)?;
        for name in OUT_OF_BOUNDS.iter().chain([&BREAK_BEFORE_END]) {
            ok &= case_in_own_process(&[CASE, name], name)?;
        }
        Ok(ok)
    })
}

/// Every loop on random inputs, checked against the CPU.
fn in_bounds(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let s = &gpu.stream;
    let mut rng = Rng::new(2111);
    let mut ok = true;
    for round in 0..3 {
        let mut size = |lo: usize, hi: usize| lo + (rng.next_u64() as usize) % (hi - lo + 1);
        let (m, n, k) = (size(1, 300), size(1, 300), size(0, 257));
        let threads = size(1, 5000);
        let len = size(0, 70);
        let cols = size(0, 40);
        let rows = size(0, 6);
        let mut rng = Rng::new(round);

        let a = rng.vec(m * k, |r| r.f32_in(-1.0, 1.0));
        let b = rng.vec(k * n, |r| r.f32_in(-1.0, 1.0));
        let mut c = s.alloc_zeros::<f32>(m * n)?;
        let cfg = LaunchConfig {
            grid_dim: ((n as u32).div_ceil(16), (m as u32).div_ceil(16), 1),
            block_dim: (16, 16, 1),
            shared_mem_bytes: 0,
        };
        let (a_d, b_d) = (s.clone_htod(&a)?, s.clone_htod(&b)?);
        module.matmul(s, cfg, &a_d, &b_d, &mut c, m, n, k)?;
        let expected: Vec<f32> = (0..m * n)
            .map(|e| loops::matmul(&a, &b, n, k, e / n, e % n))
            .collect();
        ok &= check(
            &format!("matmul {m}x{k}x{n}"),
            &s.clone_dtoh(&c)?,
            &expected,
        );

        let cfg = LaunchConfig::for_num_elems(threads as u32);
        let a = rng.vec(threads * len, |r| r.f32_in(-1.0, 1.0));
        let x = rng.vec(len, |r| r.f32_in(-1.0, 1.0));
        let mut out = s.alloc_zeros::<f32>(threads)?;
        let a_d = s.clone_htod(&a)?;
        module.rev_dot(s, cfg, &a_d, &s.clone_htod(&x)?, len, &mut out)?;
        let expected: Vec<f32> = (0..threads)
            .map(|t| loops::rev_dot(&a, &x, len, t))
            .collect();
        ok &= check(
            &format!("rev_dot {threads}x{len}"),
            &s.clone_dtoh(&out)?,
            &expected,
        );

        let gathered = rng.vec(threads * len, |r| {
            (r.next_u64() % a.len().max(1) as u64) as u32
        });
        let a_g = if a.is_empty() { vec![0.0] } else { a.clone() };
        module.gather(
            s,
            cfg,
            &s.clone_htod(&a_g)?,
            &s.clone_htod(&gathered)?,
            len,
            &mut out,
        )?;
        let expected: Vec<f32> = (0..threads)
            .map(|t| loops::gather(&a_g, &gathered, len, t))
            .collect();
        ok &= check(
            &format!("gather {threads}x{len}"),
            &s.clone_dtoh(&out)?,
            &expected,
        );

        let u = rng.vec(threads * cols, |r| r.next_u64() as u32);
        let mut out_u = s.alloc_zeros::<u32>(threads)?;
        module.row_sum_u32(s, cfg, &s.clone_htod(&u)?, cols as u32, &mut out_u)?;
        let expected: Vec<u32> = (0..threads)
            .map(|t| loops::row_sum_u32(&u, cols as u32, t as u32))
            .collect();
        ok &= check(
            &format!("row_sum_u32 {threads}x{cols}"),
            &s.clone_dtoh(&out_u)?,
            &expected,
        );

        let w = rng.vec(threads + len, |r| r.next_u64());
        let mut out_w = s.alloc_zeros::<u64>(threads)?;
        module.strided(s, cfg, &s.clone_htod(&w)?, len, &mut out_w)?;
        let expected: Vec<u64> = (0..threads).map(|t| loops::strided(&w, len, t)).collect();
        ok &= check(
            &format!("strided {threads}+{len}"),
            &s.clone_dtoh(&out_w)?,
            &expected,
        );

        let f = rng.vec(threads * len, |r| r.f32_in(-0.05, 1.0));
        module.first_negative(s, cfg, &s.clone_htod(&f)?, len, &mut out_u)?;
        let expected: Vec<u32> = (0..threads)
            .map(|t| loops::first_negative(&f, len, t))
            .collect();
        ok &= check(
            &format!("first_negative {threads}x{len}"),
            &s.clone_dtoh(&out_u)?,
            &expected,
        );

        let i = rng.vec(threads * len, |r| r.next_u64() as i32 >> 8);
        let mut out_i = s.alloc_zeros::<i64>(threads)?;
        module.signed_down(s, cfg, &s.clone_htod(&i)?, len as i64, &mut out_i)?;
        let expected: Vec<i64> = (0..threads)
            .map(|t| loops::signed_down(&i, len as i64, t))
            .collect();
        ok &= check(
            &format!("signed_down {threads}x{len}"),
            &s.clone_dtoh(&out_i)?,
            &expected,
        );

        let win = rng.vec((threads + rows) * cols, |r| r.next_u64() as u32);
        module.window(s, cfg, &s.clone_htod(&win)?, rows, cols, &mut out_w)?;
        let expected: Vec<u64> = (0..threads)
            .map(|t| loops::window(&win, rows, cols, t))
            .collect();
        ok &= check(
            &format!("window {threads} {rows}x{cols}"),
            &s.clone_dtoh(&out_w)?,
            &expected,
        );

        let src = rng.vec(2 * len, |r| r.f32_in(-1.0, 1.0));
        let mut rows_out = s.alloc_zeros::<f32>(threads * len)?;
        module.scale_row(s, cfg, &s.clone_htod(&src)?, &mut rows_out, len, threads)?;
        let mut expected = vec![0.0f32; threads * len];
        (0..threads).for_each(|t| loops::scale_row(&src, &mut expected, len, t));
        ok &= check(
            &format!("scale_row {threads}x{len}"),
            &s.clone_dtoh(&rows_out)?,
            &expected,
        );
    }
    Ok(ok)
}

/// The CPU's panic message for `f`, if it panics.
fn cpu_panic(f: impl FnOnce() + std::panic::UnwindSafe) -> Option<String> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(f);
    std::panic::set_hook(previous);
    result.err().map(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// Runs one out-of-bounds case (in this process, which it may leave with a broken context).
fn run_case(name: &str) -> ExitCode {
    let gpu = match gpu("indexed_loops") {
        Ok(gpu) => gpu,
        Err(code) => return code,
    };
    let (m, n, k, threads) = (40, 33, 50, 64usize);
    let mut rng = Rng::new(7);
    let a = rng.vec(m * k, |r| r.f32_in(-1.0, 1.0));
    let b = rng.vec(k * n - 5, |r| r.f32_in(-1.0, 1.0));
    let x = rng.vec(k, |r| r.f32_in(-1.0, 1.0));
    let u = rng.vec(threads * k - 1, |r| r.next_u64() as u32);
    let mut f = rng.vec(threads * k - 3, |r| r.f32_in(0.0, 1.0));
    f[(threads - 1) * k + 2] = -1.0;
    let run = || -> Result<Option<String>, Error> {
        let module = kernels::load(&gpu.ctx)?;
        let s = &gpu.stream;
        let cfg = LaunchConfig::for_num_elems(threads as u32);
        // The CPU panic of the thread whose loop goes out of bounds first.
        let expected = match name {
            "matmul_short_b" => {
                let mut c = s.alloc_zeros::<f32>(m * n)?;
                let grid = LaunchConfig {
                    grid_dim: ((n as u32).div_ceil(16), (m as u32).div_ceil(16), 1),
                    block_dim: (16, 16, 1),
                    shared_mem_bytes: 0,
                };
                module.matmul(
                    s,
                    grid,
                    &s.clone_htod(&a)?,
                    &s.clone_htod(&b)?,
                    &mut c,
                    m,
                    n,
                    k,
                )?;
                cpu_panic(|| {
                    (0..m * n).for_each(|e| {
                        loops::matmul(&a, &b, n, k, e / n, e % n);
                    })
                })
            }
            "rev_dot_short_a" => {
                let mut out = s.alloc_zeros::<f32>(threads)?;
                let rows = Rng::new(8).vec(threads * k - 2, |r| r.f32_in(-1.0, 1.0));
                let short = &rows[..];
                module.rev_dot(
                    s,
                    cfg,
                    &s.clone_htod(short)?,
                    &s.clone_htod(&x)?,
                    k,
                    &mut out,
                )?;
                cpu_panic(|| {
                    (0..threads).rev().for_each(|t| {
                        loops::rev_dot(short, &x, k, t);
                    })
                })
            }
            "row_sum_short" => {
                let mut out = s.alloc_zeros::<u32>(threads)?;
                module.row_sum_u32(s, cfg, &s.clone_htod(&u)?, k as u32, &mut out)?;
                cpu_panic(|| {
                    (0..threads).for_each(|t| {
                        loops::row_sum_u32(&u, k as u32, t as u32);
                    })
                })
            }
            _ => {
                let mut out = s.alloc_zeros::<u32>(threads)?;
                module.first_negative(s, cfg, &s.clone_htod(&f)?, k, &mut out)?;
                synchronize(s)?;
                let expected: Vec<u32> = (0..threads)
                    .map(|t| loops::first_negative(&f, k, t))
                    .collect();
                let ok = check(name, &s.clone_dtoh(&out)?, &expected);
                return Ok((!ok).then(|| "wrong results".to_owned()));
            }
        };
        synchronize(s)?;
        Ok(Some(format!(
            "the kernel ran to its end; the CPU panicked with {expected:?}"
        )))
    };
    stop_verdict(name, run(), |message| {
        message.starts_with("index out of bounds")
    })
}
