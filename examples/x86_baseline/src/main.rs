//! Every function of the x86-64 baseline (`core::arch::x86_64`'s SSE and SSE2) in a kernel:
//! each case (`cases.rs`) calls one function on arguments made from random bytes, on the GPU and
//! on the CPU, and the results must be the same bits, NaN payloads aside. The reciprocal
//! approximations (`_mm_rcp_*`, `_mm_rsqrt_*`) are the exception: their bits differ between
//! x86 processor models, so they are checked against the CPU's within their documented error.
//! CPU identification (`cpuid`, `is_x86_feature_detected!`) must answer what a CPU with the
//! baseline only would.
//! The example is for x86-64 hosts, where these functions are what crates' SSE paths call.

#![feature(stdarch_x86_mm_shuffle)]

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

mod cases;
use cases::{CASES, INPUT_BYTES, OUTPUT_BYTES};

#[cuda_module]
mod kernels {
    use cuda_device::{kernel, thread};

    /// Thread `t` runs case `t % cases` on input block `t / cases`.
    #[kernel]
    pub fn baseline(inputs: &[u8], out: &mut [u8]) {
        let t = thread::index_1d().get();
        let cases = super::cases::CASES.len();
        let (input, case) = (t / cases, t % cases);
        let start = input * super::cases::INPUT_BYTES;
        if start + super::cases::INPUT_BYTES <= inputs.len() {
            let input = &inputs[start..start + super::cases::INPUT_BYTES];
            let at = t * super::cases::OUTPUT_BYTES;
            super::cases::run(case, input, &mut out[at..at + super::cases::OUTPUT_BYTES]);
        }
    }

    /// What CPU identification answers on the GPU: `cpuid` of a few leaves, the highest leaf,
    /// `std`'s feature detection (`std_detect`, whose cache and `cpuid` calls run in device
    /// code) and the `cpufeatures` crate's.
    #[kernel]
    pub fn identification(out: &mut [u32]) {
        use core::arch::x86_64::{__cpuid, __cpuid_count, __get_cpuid_max};
        if thread::index_1d().get() == 0 {
            for (i, leaf) in super::LEAVES.into_iter().enumerate() {
                let r = if leaf == 7 {
                    __cpuid_count(leaf, 0)
                } else {
                    __cpuid(leaf)
                };
                out[4 * i..4 * i + 4].copy_from_slice(&[r.eax, r.ebx, r.ecx, r.edx]);
            }
            let at = 4 * super::LEAVES.len();
            out[at] = __get_cpuid_max(0).0;
            out[at + 1] = __get_cpuid_max(0x8000_0000).0;
            out[at + 2] = std::is_x86_feature_detected!("sse2") as u32;
            out[at + 3] = std::is_x86_feature_detected!("sse4.1") as u32;
            out[at + 4] = std::is_x86_feature_detected!("avx2") as u32;
            cpufeatures::new!(has_sse2, "sse2");
            cpufeatures::new!(has_aes, "aes", "sse2");
            cpufeatures::new!(has_avx2, "avx2");
            out[at + 5] = has_sse2::get() as u32;
            out[at + 6] = has_aes::get() as u32;
            out[at + 7] = has_avx2::get() as u32;
        }
    }
}

/// The `cpuid` leaves the identification kernel asks for.
const LEAVES: [u32; 5] = [0, 1, 7, 0x8000_0000, 0x8000_0001];

/// What an x86-64 CPU with the baseline features only answers for [LEAVES] (no vendor string;
/// leaf 1: FPU, CX8, CMOV, MMX, FXSR, SSE, SSE2; leaf 0x8000_0001: SYSCALL, LM), then the
/// highest basic and extended leaves, then `is_x86_feature_detected!` of SSE2, SSE4.1 and
/// AVX2, then `cpufeatures` of SSE2, AES(+SSE2) and AVX2.
#[rustfmt::skip]
const BASELINE_IDENTIFICATION: [u32; 28] = [
    1, 0, 0, 0,
    0, 0, 0, 0x0780_8101,
    0, 0, 0, 0,
    0x8000_0001, 0, 0, 0,
    0, 0, 0, 0x2000_0800,
    1, 0x8000_0001,
    1, 0, 0,
    1, 0, 0,
];

/// Random input blocks per case.
const INPUTS: usize = 256;

/// The functions whose results are approximations with processor-specific bits.
const APPROXIMATIONS: [&str; 4] = ["_mm_rcp_ps", "_mm_rcp_ss", "_mm_rsqrt_ps", "_mm_rsqrt_ss"];

fn main() -> ExitCode {
    run_example("x86_baseline", run)
}

/// Whether the `f32` lanes of two results agree within the approximations' error: relative
/// error at most 1.5 * 2^-12 each side of the exact value, the flush of tiny results to zero
/// that x86 does, and NaN with NaN.
fn approximately_equal(got: &[u8], expected: &[u8]) -> bool {
    got.chunks(4).zip(expected.chunks(4)).all(|(g, e)| {
        let g = f32::from_le_bytes(g.try_into().unwrap());
        let e = f32::from_le_bytes(e.try_into().unwrap());
        g.to_bits() == e.to_bits()
            || (g.is_nan() && e.is_nan())
            || (g - e).abs() <= 3.0 * 2f32.powi(-12) * e.abs().max(g.abs())
            || (g.abs() < f32::MIN_POSITIVE * 4.0 && e.abs() < f32::MIN_POSITIVE * 4.0)
    })
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    // The cases' code, one function with every case, has no stack bound `ptxas` can compute.
    gpu.ctx.set_stack_size(16 * 1024)?;
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut rng = Rng::new(86);
    let inputs: Vec<u8> = rng.vec(INPUTS * INPUT_BYTES, |r| r.next_u64() as u8);
    let threads = INPUTS * CASES.len();
    let inputs_dev = stream.clone_htod(&inputs)?;
    let mut out_dev = stream.alloc_zeros::<u8>(threads * OUTPUT_BYTES)?;
    let cfg = blocks_of_128(threads);
    module.baseline(stream, cfg, &inputs_dev, &mut out_dev)?;
    let got = stream.clone_dtoh(&out_dev)?;

    let mut expected = vec![0u8; threads * OUTPUT_BYTES];
    for (t, out) in expected.chunks_mut(OUTPUT_BYTES).enumerate() {
        let input = &inputs[(t / CASES.len()) * INPUT_BYTES..][..INPUT_BYTES];
        cases::run(t % CASES.len(), input, out);
    }

    let mut identification = stream.alloc_zeros::<u32>(BASELINE_IDENTIFICATION.len())?;
    module.identification(stream, LaunchConfig::for_num_elems(1), &mut identification)?;
    let ok = check(
        "cpuid and feature detection answer the x86-64 baseline",
        &stream.clone_dtoh(&identification)?,
        &BASELINE_IDENTIFICATION,
    );

    let mut failed = Vec::new();
    for (case, (name, call)) in CASES.iter().enumerate() {
        let approximate = APPROXIMATIONS.contains(name);
        let first_difference = (0..INPUTS).find(|input| {
            let at = (input * CASES.len() + case) * OUTPUT_BYTES;
            let (g, e) = (
                &got[at..at + OUTPUT_BYTES],
                &expected[at..at + OUTPUT_BYTES],
            );
            if approximate {
                !approximately_equal(g, e)
            } else {
                g != e
            }
        });
        if let Some(input) = first_difference {
            let at = (input * CASES.len() + case) * OUTPUT_BYTES;
            println!(
                "MISMATCH {call} on input {input}:\n  gpu {:02x?}\n  cpu {:02x?}",
                &got[at..at + 32],
                &expected[at..at + 32]
            );
            failed.push(*name);
        }
    }
    println!(
        "{} of {} cases ({} functions) equal on {INPUTS} random inputs each",
        CASES.len() - failed.len(),
        CASES.len(),
        {
            let mut names: Vec<&str> = CASES.iter().map(|(n, _)| *n).collect();
            names.dedup();
            names.len()
        }
    );
    Ok(ok && failed.is_empty())
}

/// Blocks of 128 threads for `threads` threads: the kernel holds every case, so it needs more
/// registers per thread than 1,024-thread blocks (`LaunchConfig::for_num_elems`) leave it.
fn blocks_of_128(threads: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((threads as u32).div_ceil(128), 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    }
}
