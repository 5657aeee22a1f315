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

    /// Thread `t` runs use `case` on input block `t`.
    #[kernel]
    pub fn run(case: u32, inputs: &[u8], out: &mut [u8]) {
        let t = thread::index_1d().get();
        let start = t * super::INPUT_BYTES;
        if start + super::INPUT_BYTES <= inputs.len() {
            let input = &inputs[start..start + super::INPUT_BYTES];
            let at = t * super::OUTPUT_BYTES;
            super::uses::run(case as usize, input, &mut out[at..at + super::OUTPUT_BYTES]);
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

/// Runs each use (or those named on the command line) in a launch of its own, so that a fault
/// names its crate.
fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let chosen: Vec<String> = std::env::args().skip(1).collect();
    if let Some(unknown) = chosen.iter().find(|name| !CASES.contains(&name.as_str())) {
        return Err(format!(
            "no use named `{unknown}`; the uses are {}",
            CASES.join(", ")
        )
        .into());
    }
    // Formatting (`core::fmt`) calls through `dyn Write`: `ptxas` cannot bound the stack.
    gpu.ctx.set_stack_size(16 * 1024)?;
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut rng = Rng::new(25);
    let inputs: Vec<u8> = rng.vec(INPUTS * INPUT_BYTES, |r| r.next_u64() as u8);
    let inputs_dev = stream.clone_htod(&inputs)?;
    let mut out_dev = stream.alloc_zeros::<u8>(INPUTS * OUTPUT_BYTES)?;
    let mut ok = true;
    for (case, name) in CASES.iter().enumerate() {
        if !chosen.is_empty() && !chosen.iter().any(|c| c == name) {
            continue;
        }
        // What a use leaves unwritten must read as zero, as on the CPU.
        stream.memset_zeros(&mut out_dev)?;
        module
            .run(
                stream,
                blocks_of(INPUTS),
                case as u32,
                &inputs_dev,
                &mut out_dev,
            )
            .and_then(|()| cuda_host::synchronize(stream))
            .map_err(|e| format!("{name}: {e}"))?;
        let got = stream.clone_dtoh(&out_dev)?;
        let mut expected = vec![0u8; INPUTS * OUTPUT_BYTES];
        for (input, out) in inputs
            .chunks(INPUT_BYTES)
            .zip(expected.chunks_mut(OUTPUT_BYTES))
        {
            uses::run(case, input, out);
        }
        let close = LIBM_RESULTS.contains(name);
        let differs = |(g, e): &(&[u8], &[u8])| {
            if close {
                g.chunks(8).zip(e.chunks(8)).any(|(g, e)| {
                    let g = f64::from_le_bytes(g.try_into().unwrap());
                    let e = f64::from_le_bytes(e.try_into().unwrap());
                    (g - e).abs() > 1e-12 * e.abs().max(1e-300)
                })
            } else {
                g != e
            }
        };
        let pairs = got.chunks(OUTPUT_BYTES).zip(expected.chunks(OUTPUT_BYTES));
        match pairs.enumerate().find(|(_, pair)| differs(pair)) {
            None => println!("ok   {name} ({INPUTS} inputs, the CPU's bits)"),
            Some((input, (g, e))) => {
                println!(
                    "FAIL {name}: differs on input {input}:\n  gpu {:02x?}\n  cpu {:02x?}",
                    &g[..32],
                    &e[..32]
                );
                ok = false;
            }
        }
    }
    Ok(ok)
}

/// Blocks of 64 threads for `threads` threads: the kernel holds every use, so it needs more
/// registers per thread than 1,024-thread blocks (`LaunchConfig::for_num_elems`) leave it.
fn blocks_of(threads: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((threads as u32).div_ceil(64), 1, 1),
        block_dim: (64, 1, 1),
        shared_mem_bytes: 0,
    }
}
