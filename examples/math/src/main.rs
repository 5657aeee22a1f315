//! Float math (`sqrt`, `abs`, `floor`, `ceil`, `round`, `trunc`, `mul_add`, `min`, `max`,
//! `clamp`, `copysign`) in `f32` and `f64`, and integer bit counting and saturating arithmetic.

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// Float operation `op` on `x` and `y`.
pub fn float_op(op: u32, x: f64, y: f64) -> f64 {
    let (xf, yf) = (x as f32, y as f32);
    match op {
        0 => x.abs().sqrt(),
        1 => xf.abs().sqrt() as f64,
        2 => x.floor() + y.ceil(),
        3 => (xf.round() + yf.trunc()) as f64,
        4 => x.mul_add(y, 0.5),
        5 => x.min(y) - x.max(y),
        6 => xf.clamp(-1.5, 2.5) as f64,
        7 => x.copysign(y),
        8 => (xf * yf - xf / (yf.abs() + 1.0)) as f64,
        _ => (x - y) * (x + y) / (y * y + 1.0),
    }
}

/// Integer operation `op` on `a` and `b`.
pub fn int_op(op: u32, a: u32, b: i32) -> u32 {
    match op {
        0 => a.count_ones() + b.count_zeros(),
        1 => a.leading_zeros() * 64 + (b as u64).trailing_zeros(),
        2 => a.swap_bytes() ^ (b as u16).swap_bytes() as u32,
        3 => a.reverse_bits(),
        4 => a.saturating_add(b as u32),
        5 => a.saturating_sub(b as u32 / 2),
        6 => b.saturating_add(a as i32) as u32,
        _ => (b as i8).saturating_sub(a as i8) as u32,
    }
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    #[kernel]
    pub fn floats(op: u32, x: &[f64], y: &[f64], mut out: DisjointSlice<f64>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::float_op(op, x[i.get()], y[i.get()]);
        }
    }

    #[kernel]
    pub fn ints(op: u32, a: &[u32], b: &[i32], mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::int_op(op, a[i.get()], b[i.get()]);
        }
    }
}

fn main() -> ExitCode {
    run_example("math", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    const N: usize = 1 << 20;
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(21);
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let mut ok = true;

    let x: Vec<f64> = rng.vec(N, |r| r.f64_in(-1000.0, 1000.0));
    let y: Vec<f64> = rng.vec(N, |r| r.f64_in(-10.0, 10.0));
    let (x_dev, y_dev) = (gpu.stream.clone_htod(&x)?, gpu.stream.clone_htod(&y)?);
    let mut out = gpu.stream.alloc_zeros::<f64>(N)?;
    for op in 0..10 {
        module.floats(&gpu.stream, cfg, op, &x_dev, &y_dev, &mut out)?;
        let expected: Vec<f64> = (0..N).map(|i| float_op(op, x[i], y[i])).collect();
        ok &= check(
            &format!("float op {op}"),
            &gpu.stream.clone_dtoh(&out)?,
            &expected,
        );
    }

    let a: Vec<u32> = rng.vec(N, |r| (r.next_u64() >> (r.next_u64() % 32)) as u32);
    let b: Vec<i32> = rng.vec(N, |r| r.next_u64() as i32 >> (r.next_u64() % 31));
    let (a_dev, b_dev) = (gpu.stream.clone_htod(&a)?, gpu.stream.clone_htod(&b)?);
    let mut out = gpu.stream.alloc_zeros::<u32>(N)?;
    for op in 0..8 {
        module.ints(&gpu.stream, cfg, op, &a_dev, &b_dev, &mut out)?;
        let expected: Vec<u32> = (0..N).map(|i| int_op(op, a[i], b[i])).collect();
        ok &= check(
            &format!("int op {op}"),
            &gpu.stream.clone_dtoh(&out)?,
            &expected,
        );
    }
    Ok(ok)
}
