//! Popular crates from crates.io in kernels: hashes and checksums, ciphers, fixed-point and
//! rational numbers, stack collections, number formatting, random numbers and distributions,
//! SIMD wrappers, bit sets, half floats, approximate math, encodings, small linear algebra.
//! Each is used as its documentation shows, with its default features (`src/uses.rs`), on the
//! GPU and on the CPU, and the results must be the same bits. `docs/crates.md` lists the crates
//! and what each use covers.

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, run_example};

mod uses;
use uses::CASES;

/// The bytes each use reads.
const INPUT_BYTES: usize = 256;
/// The bytes each use may write.
const OUTPUT_BYTES: usize = 192;
/// Random inputs per use.
const INPUTS: usize = 64;

#[cuda_module]
mod kernels {
    use cuda_device::{kernel, thread};

    /// Thread `t` runs use `t % uses` on input block `t / uses`.
    #[kernel]
    pub fn run(inputs: &[u8], out: &mut [u8]) {
        let t = thread::index_1d().get();
        let uses = super::CASES.len();
        let start = (t / uses) * super::INPUT_BYTES;
        if start + super::INPUT_BYTES <= inputs.len() {
            let input = &inputs[start..start + super::INPUT_BYTES];
            let at = t * super::OUTPUT_BYTES;
            super::uses::run(t % uses, input, &mut out[at..at + super::OUTPUT_BYTES]);
        }
    }
}

/// The uses whose results go through `std`'s `f64::ln` and `exp`, which device code computes
/// with libdevice and the CPU with its C library: both within an ulp or so, not always the same
/// bits. Their `f64` results are compared with a relative tolerance.
const LIBM_RESULTS: [&str; 1] = ["rand-distr"];

fn main() -> ExitCode {
    run_example("crate_list", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    // Formatting (`core::fmt`) calls through `dyn Write`: `ptxas` cannot bound the stack.
    gpu.ctx.set_stack_size(16 * 1024)?;
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut rng = Rng::new(25);
    let inputs: Vec<u8> = rng.vec(INPUTS * INPUT_BYTES, |r| r.next_u64() as u8);
    let threads = INPUTS * CASES.len();
    let inputs_dev = stream.clone_htod(&inputs)?;
    let mut out_dev = stream.alloc_zeros::<u8>(threads * OUTPUT_BYTES)?;
    module.run(
        stream,
        LaunchConfig::for_num_elems(threads as u32),
        &inputs_dev,
        &mut out_dev,
    )?;
    let got = stream.clone_dtoh(&out_dev)?;

    let mut expected = vec![0u8; threads * OUTPUT_BYTES];
    for (t, out) in expected.chunks_mut(OUTPUT_BYTES).enumerate() {
        let input = &inputs[(t / CASES.len()) * INPUT_BYTES..][..INPUT_BYTES];
        uses::run(t % CASES.len(), input, out);
    }

    let mut ok = true;
    for (case, name) in CASES.iter().enumerate() {
        let close = LIBM_RESULTS.contains(name);
        let first_difference = (0..INPUTS).find(|input| {
            let at = (input * CASES.len() + case) * OUTPUT_BYTES;
            let (g, e) = (
                &got[at..at + OUTPUT_BYTES],
                &expected[at..at + OUTPUT_BYTES],
            );
            if close {
                g.chunks(8).zip(e.chunks(8)).any(|(g, e)| {
                    let g = f64::from_le_bytes(g.try_into().unwrap());
                    let e = f64::from_le_bytes(e.try_into().unwrap());
                    (g - e).abs() > 1e-12 * e.abs().max(1e-300)
                })
            } else {
                g != e
            }
        });
        match first_difference {
            None => println!("{name:<12} ok ({INPUTS} inputs, the CPU's bits)"),
            Some(input) => {
                let at = (input * CASES.len() + case) * OUTPUT_BYTES;
                println!(
                    "{name:<12} MISMATCH on input {input}:\n  gpu {:02x?}\n  cpu {:02x?}",
                    &got[at..at + 32],
                    &expected[at..at + 32]
                );
                ok = false;
            }
        }
    }
    Ok(ok)
}
