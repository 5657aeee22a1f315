//! Block-level algorithms as CUDA programmers write them, in Rust: reductions with a
//! warp-shuffle tail (static and dynamic shared memory), histograms with block-private shared
//! bins, prefix sums (warp-scan and Blelloch, within a block and across blocks), row softmax
//! (a block per row) and tiled SGEMM (shared tiles, 2-D launch). Each part checks its results
//! against the CPU on pseudo-random inputs and prints what it checked.

use std::process::ExitCode;

use example_support::{Gpu, Rng, run_example};

mod collectives;
mod histogram;
mod reduce;
mod scan;
mod sgemm;
mod softmax;

fn main() -> ExitCode {
    run_example("block_algorithms", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let mut rng = Rng::new(8);
    let mut ok = true;
    ok &= reduce::run(gpu, &mut rng)?;
    ok &= histogram::run(gpu, &mut rng)?;
    ok &= scan::run(gpu, &mut rng)?;
    ok &= softmax::run(gpu, &mut rng)?;
    ok &= sgemm::run(gpu, &mut rng)?;
    Ok(ok)
}

/// Compares floats bit for bit (for results whose order of operations the CPU replays), prints
/// one verdict line and returns whether they match.
pub fn check_f32_exact(what: &str, got: &[f32], expected: &[f32]) -> bool {
    let differ: Vec<usize> = (0..got.len().max(expected.len()))
        .filter(|&i| got.get(i).map(|v| v.to_bits()) != expected.get(i).map(|v| v.to_bits()))
        .collect();
    match differ.first() {
        None => {
            println!("ok   {what} ({} values, bit-exact)", got.len());
            true
        }
        Some(&i) => {
            println!(
                "FAIL {what}: {} of {} values differ; first at [{i}]: got {:?}, expected {:?}",
                differ.len(),
                expected.len(),
                got.get(i),
                expected.get(i)
            );
            false
        }
    }
}

/// Compares floats with a bound per element (`|got - expected| <= bound`), prints one verdict
/// line with the largest error relative to its bound, and returns whether all are within.
pub fn check_f32_within(what: &str, got: &[f32], expected: &[f64], bound: &[f64]) -> bool {
    if got.len() != expected.len() {
        println!(
            "FAIL {what}: {} results, expected {}",
            got.len(),
            expected.len()
        );
        return false;
    }
    let ratio = |i: usize| (f64::from(got[i]) - expected[i]).abs() / bound[i];
    // A NaN is outside any bound.
    let outside: Vec<usize> = (0..got.len())
        .filter(|&i| ratio(i).is_nan() || ratio(i) > 1.0)
        .collect();
    let worst = (0..got.len()).map(ratio).fold(0.0, f64::max);
    match outside.first() {
        None => {
            println!(
                "ok   {what} ({} values, largest error {:.3} of its bound)",
                got.len(),
                worst
            );
            true
        }
        Some(&i) => {
            println!(
                "FAIL {what}: {} of {} values outside their bound; first at [{i}]: got {}, \
                 expected {} within {:e}",
                outside.len(),
                got.len(),
                got[i],
                expected[i],
                bound[i]
            );
            false
        }
    }
}
