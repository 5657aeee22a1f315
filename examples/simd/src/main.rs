//! SIMD in kernels: `core::simd` (portable SIMD: arithmetic, comparisons and masks, swizzles,
//! casts, reductions, gathers, partial loads and masked stores) and `core::arch::x86_64`'s
//! SSE/SSE2 intrinsics (what a crate's x86-64 path calls: min/max with x86's NaN rules, the
//! eight comparison predicates, conversions with x86's out-of-range result, shuffles, integer
//! lanes, `f64` lanes). The GPU computes each vector lane by lane with the CPU's exact
//! semantics; results are compared bit for bit with the CPU's, on inputs that include NaNs,
//! infinities and values out of `i32`'s range. The example is for x86-64 hosts.

#![feature(portable_simd)]

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

mod ops;
use ops::*;

#[cuda_module]
mod kernels {
    use cuda_device::{kernel, thread};

    #[kernel]
    pub fn portable_f32(op: u32, a: &[f32], b: &[f32], out: &mut [f32]) {
        let i = thread::index_1d().get();
        if i < a.len() / 8 {
            let (x, y) = (&a[8 * i..8 * i + 8], &b[8 * i..8 * i + 8]);
            let r = super::ops::portable_f32(op, x.try_into().unwrap(), y.try_into().unwrap());
            out[8 * i..8 * i + 8].copy_from_slice(&r);
        }
    }

    #[kernel]
    pub fn portable_i32(op: u32, a: &[i32], b: &[i32], table: &[i32], out: &mut [i32]) {
        let i = thread::index_1d().get();
        if i < a.len() / 8 {
            let (x, y) = (&a[8 * i..8 * i + 8], &b[8 * i..8 * i + 8]);
            let r =
                super::ops::portable_i32(op, x.try_into().unwrap(), y.try_into().unwrap(), table);
            out[8 * i..8 * i + 8].copy_from_slice(&r);
        }
    }

    #[kernel]
    pub fn sse(op: u32, a: &[f32], b: &[f32], out: &mut [u32]) {
        let i = thread::index_1d().get();
        if i < a.len() / 4 {
            let (x, y) = (&a[4 * i..4 * i + 4], &b[4 * i..4 * i + 4]);
            let r = super::ops::sse(op, x.try_into().unwrap(), y.try_into().unwrap());
            out[4 * i..4 * i + 4].copy_from_slice(&r);
        }
    }
}

/// Floats in `[-range, range)`, with a NaN, infinities, zeros of both signs and huge values
/// sprinkled in.
fn floats(rng: &mut Rng, n: usize, range: f32) -> Vec<f32> {
    let special = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        3.0e9,
        -3.0e9,
    ];
    rng.vec(n, |r| {
        let pick = r.next_u64();
        if pick % 11 == 0 {
            special[(pick >> 8) as usize % special.len()]
        } else {
            r.f32_in(-range, range)
        }
    })
}

/// Bit patterns, every NaN as one pattern (the GPU's NaNs have another payload than x86's);
/// with `any_zero`, `-0.0` as `+0.0` (the sign of a zero that `simd_min`, `simd_max` and their
/// reductions return is unspecified).
fn bits(values: &[f32], any_zero: bool) -> Vec<u32> {
    values
        .iter()
        .map(|&v| match v {
            v if v.is_nan() => u32::MAX,
            0.0 if any_zero => 0,
            v => v.to_bits(),
        })
        .collect()
}

/// The portable `f32` operations whose results include the minimum or maximum of zeros.
const SIGNED_ZERO_UNSPECIFIED: [u32; 2] = [1, 5];

fn main() -> ExitCode {
    run_example("simd", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut rng = Rng::new(11);
    let mut ok = true;
    const THREADS: usize = 8192;
    let cfg = LaunchConfig::for_num_elems(THREADS as u32);

    let a = floats(&mut rng, 8 * THREADS, 8.0);
    let b = floats(&mut rng, 8 * THREADS, 8.0);
    let (a_dev, b_dev) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
    let mut out = stream.alloc_zeros::<f32>(8 * THREADS)?;
    for op in 0..PORTABLE_F32_OPS {
        module.portable_f32(stream, cfg, op, &a_dev, &b_dev, &mut out)?;
        let expected: Vec<f32> = (0..THREADS)
            .flat_map(|i| {
                let x = a[8 * i..8 * i + 8].try_into().unwrap();
                let y = b[8 * i..8 * i + 8].try_into().unwrap();
                portable_f32(op, x, y)
            })
            .collect();
        let got = stream.clone_dtoh(&out)?;
        let any_zero = SIGNED_ZERO_UNSPECIFIED.contains(&op);
        ok &= check(
            &format!("core::simd f32x8 op {op}"),
            &bits(&got, any_zero),
            &bits(&expected, any_zero),
        );
    }

    let ai: Vec<i32> = rng.vec(8 * THREADS, |r| r.next_u64() as i32 >> (r.next_u64() % 24));
    let bi: Vec<i32> = rng.vec(8 * THREADS, |r| r.next_u64() as i32 >> (r.next_u64() % 24));
    let table: Vec<i32> = rng.vec(32, |r| r.next_u64() as i32);
    let (ai_dev, bi_dev) = (stream.clone_htod(&ai)?, stream.clone_htod(&bi)?);
    let table_dev = stream.clone_htod(&table)?;
    let mut outi = stream.alloc_zeros::<i32>(8 * THREADS)?;
    for op in 0..PORTABLE_I32_OPS {
        module.portable_i32(stream, cfg, op, &ai_dev, &bi_dev, &table_dev, &mut outi)?;
        let expected: Vec<i32> = (0..THREADS)
            .flat_map(|i| {
                let x = ai[8 * i..8 * i + 8].try_into().unwrap();
                let y = bi[8 * i..8 * i + 8].try_into().unwrap();
                portable_i32(op, x, y, &table)
            })
            .collect();
        ok &= check(
            &format!("core::simd i32x8 op {op}"),
            &stream.clone_dtoh(&outi)?,
            &expected,
        );
    }

    // Four lanes per thread: twice the threads of the eight-lane kernels cover the same inputs.
    let sse_cfg = LaunchConfig::for_num_elems(2 * THREADS as u32);
    let mut outs = stream.alloc_zeros::<u32>(8 * THREADS)?;
    for op in 0..SSE_OPS {
        module.sse(stream, sse_cfg, op, &a_dev, &b_dev, &mut outs)?;
        let expected: Vec<u32> = (0..2 * THREADS)
            .flat_map(|i| {
                let x = a[4 * i..4 * i + 4].try_into().unwrap();
                let y = b[4 * i..4 * i + 4].try_into().unwrap();
                sse(op, x, y)
            })
            .map(|word| {
                // Lanes that hold floats compare as floats (NaN with NaN), integer lanes exactly.
                if op != 1 && op != 2 && op != 4 && f32::from_bits(word).is_nan() {
                    u32::MAX
                } else {
                    word
                }
            })
            .collect();
        let got: Vec<u32> = stream
            .clone_dtoh(&outs)?
            .into_iter()
            .map(|word| {
                if op != 1 && op != 2 && op != 4 && f32::from_bits(word).is_nan() {
                    u32::MAX
                } else {
                    word
                }
            })
            .collect();
        ok &= check(&format!("SSE/SSE2 op {op}"), &got, &expected);
    }
    Ok(ok)
}
