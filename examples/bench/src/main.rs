//! cuda-oxide's benchmark suite: every kernel in Rust (compiled by cuda-oxide) against the same
//! algorithm in CUDA C++ (`cuda/*.cu`, compiled at run time by NVRTC), cross-checked and timed
//! in one process. `bench --help` says how to run it; `bench --list` needs no GPU.
//!
//! Adding a benchmark `foo`: its Rust kernel in `kernels.rs` under `#[cfg(feature = "foo")]`,
//! `cuda/foo.cu` defining `extern "C" __global__ void foo(...)`, `suite/foo.rs` with its inputs,
//! launches and checks, a line in `suite/mod.rs`, and the feature `foo` in `Cargo.toml`.

mod kernels;
mod suite;

use std::process::ExitCode;

fn main() -> ExitCode {
    bench_harness::driver::main(suite::all(), kernels::ours::load)
}
