//! Crates from crates.io in kernels, unmodified: `libm` (math functions), `rand_core` with
//! `rand_xoshiro` (random number generators), `glam` with its `libm` feature (vectors,
//! quaternions and matrices, whose x86-64 build uses SSE2 intrinsics) and `num-complex` with
//! its `libm` feature (complex numbers). Every kernel calls the same Rust function as the CPU,
//! on pseudo-random inputs, and the results are compared bit for bit (NaN with NaN, whatever
//! its payload): each of these crates computes with IEEE operations that both processors round
//! the same way (`+ - * /`, `sqrt`, `fma`, conversions), in the same order, so the GPU must
//! reproduce the CPU's bits. See docs/crates.md for why that holds.

use std::process::ExitCode;

use cuda_host::cuda_module;
use example_support::{Gpu, Rng, blocks_of, check, run_example};
use num_complex::{Complex32, Complex64};

mod ops;
use ops::*;

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};
    use num_complex::{Complex32, Complex64};

    #[kernel]
    pub fn libm_f64(op: u32, x: &[f64], y: &[f64], mut out: DisjointSlice<f64>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::ops::libm_f64(op, x[i.get()], y[i.get()]);
        }
    }

    #[kernel]
    pub fn libm_f32(op: u32, x: &[f32], y: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::ops::libm_f32(op, x[i.get()], y[i.get()]);
        }
    }

    #[kernel]
    pub fn random(op: u32, seeds: &[u64], out: &mut [u64]) {
        let i = thread::index_1d().get();
        if i < seeds.len() {
            out[4 * i..4 * i + 4].copy_from_slice(&super::ops::random_draws(op, seeds[i]));
        }
    }

    #[kernel]
    pub fn glam_ops(op: u32, inputs: &[f32], out: &mut [f32]) {
        const IN: usize = super::ops::GLAM_IN;
        const OUT: usize = super::ops::GLAM_OUT;
        let i = thread::index_1d().get();
        if i < inputs.len() / IN {
            let result = super::ops::glam_op(op, &inputs[IN * i..IN * i + IN]);
            out[OUT * i..OUT * i + OUT].copy_from_slice(&result);
        }
    }

    #[kernel]
    pub fn complex64(op: u32, parts: &[f64], out: &mut [f64]) {
        let i = thread::index_1d().get();
        if i < parts.len() / 4 {
            let p = &parts[4 * i..4 * i + 4];
            let z = super::ops::complex64_op(
                op,
                Complex64::new(p[0], p[1]),
                Complex64::new(p[2], p[3]),
            );
            out[2 * i..2 * i + 2].copy_from_slice(&z);
        }
    }

    #[kernel]
    pub fn complex32(op: u32, parts: &[f32], out: &mut [f32]) {
        let i = thread::index_1d().get();
        if i < parts.len() / 4 {
            let p = &parts[4 * i..4 * i + 4];
            let z = super::ops::complex32_op(
                op,
                Complex32::new(p[0], p[1]),
                Complex32::new(p[2], p[3]),
            );
            out[2 * i..2 * i + 2].copy_from_slice(&z);
        }
    }
}

/// Bit patterns to compare exactly, every NaN as one pattern (the GPU's NaNs have another
/// payload and sign than x86's, which Rust leaves unspecified).
fn bits64(values: &[f64]) -> Vec<u64> {
    values
        .iter()
        .map(|v| if v.is_nan() { u64::MAX } else { v.to_bits() })
        .collect()
}

/// As [bits64], for `f32`.
fn bits32(values: &[f32]) -> Vec<u32> {
    values
        .iter()
        .map(|v| if v.is_nan() { u32::MAX } else { v.to_bits() })
        .collect()
}

fn main() -> ExitCode {
    run_example("crates", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut rng = Rng::new(10);
    let mut ok = true;

    // libm, f64 and f32: one launch per function.
    const N: usize = 1 << 16;
    // libm's f64 functions and complex arithmetic need too many registers for blocks of 1,024.
    let cfg = blocks_of(256, N);
    let x: Vec<f64> = rng.vec(N, |r| r.f64_in(-12.0, 12.0));
    let y: Vec<f64> = rng.vec(N, |r| r.f64_in(-10.0, 10.0));
    let (x_dev, y_dev) = (stream.clone_htod(&x)?, stream.clone_htod(&y)?);
    let mut out = stream.alloc_zeros::<f64>(N)?;
    for op in 0..LIBM_F64_OPS {
        module.libm_f64(stream, cfg, op, &x_dev, &y_dev, &mut out)?;
        let expected: Vec<f64> = (0..N).map(|i| libm_f64(op, x[i], y[i])).collect();
        let got = stream.clone_dtoh(&out)?;
        ok &= check(
            &format!("libm f64 op {op}"),
            &bits64(&got),
            &bits64(&expected),
        );
    }
    let xf: Vec<f32> = rng.vec(N, |r| r.f32_in(-12.0, 12.0));
    let yf: Vec<f32> = rng.vec(N, |r| r.f32_in(-10.0, 10.0));
    let (xf_dev, yf_dev) = (stream.clone_htod(&xf)?, stream.clone_htod(&yf)?);
    let mut outf = stream.alloc_zeros::<f32>(N)?;
    for op in 0..LIBM_F32_OPS {
        module.libm_f32(stream, cfg, op, &xf_dev, &yf_dev, &mut outf)?;
        let expected: Vec<f32> = (0..N).map(|i| libm_f32(op, xf[i], yf[i])).collect();
        let got = stream.clone_dtoh(&outf)?;
        ok &= check(
            &format!("libm f32 op {op}"),
            &bits32(&got),
            &bits32(&expected),
        );
    }

    // rand_xoshiro through rand_core: each thread seeds its own generator.
    const THREADS: usize = 4096;
    let small = blocks_of(256, THREADS);
    let seeds: Vec<u64> = rng.vec(THREADS, |r| r.next_u64());
    let seeds_dev = stream.clone_htod(&seeds)?;
    let mut draws = stream.alloc_zeros::<u64>(4 * THREADS)?;
    for op in 0..6 {
        module.random(stream, small, op, &seeds_dev, &mut draws)?;
        let expected: Vec<u64> = seeds.iter().flat_map(|&s| random_draws(op, s)).collect();
        ok &= check(
            &format!("rand_xoshiro op {op}"),
            &stream.clone_dtoh(&draws)?,
            &expected,
        );
    }

    // glam: SSE2 vectors, quaternions, matrices.
    let inputs: Vec<f32> = rng.vec(GLAM_IN * THREADS, |r| r.f32_in(-4.0, 4.0));
    let inputs_dev = stream.clone_htod(&inputs)?;
    let mut glam_out = stream.alloc_zeros::<f32>(GLAM_OUT * THREADS)?;
    for op in 0..GLAM_OPS {
        module.glam_ops(stream, small, op, &inputs_dev, &mut glam_out)?;
        let expected: Vec<f32> = inputs
            .chunks_exact(GLAM_IN)
            .flat_map(|v| glam_op(op, v))
            .collect();
        let got = stream.clone_dtoh(&glam_out)?;
        ok &= check(&format!("glam op {op}"), &bits32(&got), &bits32(&expected));
    }

    // num-complex, Complex64 and Complex32.
    let parts: Vec<f64> = rng.vec(4 * THREADS, |r| r.f64_in(-3.0, 3.0));
    let parts_dev = stream.clone_htod(&parts)?;
    let mut z_out = stream.alloc_zeros::<f64>(2 * THREADS)?;
    for op in 0..COMPLEX64_OPS {
        module.complex64(stream, small, op, &parts_dev, &mut z_out)?;
        let expected: Vec<f64> = parts
            .chunks_exact(4)
            .flat_map(|p| complex64_op(op, Complex64::new(p[0], p[1]), Complex64::new(p[2], p[3])))
            .collect();
        let got = stream.clone_dtoh(&z_out)?;
        ok &= check(
            &format!("num-complex Complex64 op {op}"),
            &bits64(&got),
            &bits64(&expected),
        );
    }
    let parts32: Vec<f32> = rng.vec(4 * THREADS, |r| r.f32_in(-3.0, 3.0));
    let parts32_dev = stream.clone_htod(&parts32)?;
    let mut z32_out = stream.alloc_zeros::<f32>(2 * THREADS)?;
    for op in 0..COMPLEX32_OPS {
        module.complex32(stream, small, op, &parts32_dev, &mut z32_out)?;
        let expected: Vec<f32> = parts32
            .chunks_exact(4)
            .flat_map(|p| complex32_op(op, Complex32::new(p[0], p[1]), Complex32::new(p[2], p[3])))
            .collect();
        let got = stream.clone_dtoh(&z32_out)?;
        ok &= check(
            &format!("num-complex Complex32 op {op}"),
            &bits32(&got),
            &bits32(&expected),
        );
    }
    Ok(ok)
}
