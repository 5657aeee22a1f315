//! cuda-oxide's benchmark suite: every kernel in Rust (compiled by cuda-oxide) against the same
//! algorithm in CUDA C++ (`cuda/*.cu`, compiled at run time by NVRTC), cross-checked and timed
//! in one process. `bench --help` says how to run it; `bench --list` needs no GPU.
//!
//! Adding a benchmark `foo`: its Rust kernel in `kernels.rs` under `#[cfg(feature = "foo")]`,
//! `cuda/foo.cu` defining `extern "C" __global__ void foo(...)`, `suite/foo.rs` with its inputs,
//! launches and checks, a line in `suite/mod.rs`, and the feature `foo` in `Cargo.toml`.

mod kernels;
mod suite;

use std::ffi::CString;
use std::process::ExitCode;

use bench_harness::driver::Loaders;
use cuda_host::ModuleImage;

use crate::kernels::ours;

/// Names a PTX file of this crate's kernels to time instead of the embedded module (the same
/// Rust kernels compiled with other options, to measure what an option buys).
const PTX_ENV: &str = "CUDA_OXIDE_BENCH_PTX";

fn main() -> ExitCode {
    let replacement = std::env::var_os(PTX_ENV).map(|path| {
        let text = std::fs::read(&path).unwrap_or_else(|e| {
            eprintln!("bench: reading {PTX_ENV}={}: {e}", path.display());
            std::process::exit(2)
        });
        println!("ours: the kernels of {}", path.display());
        CString::new(text).unwrap_or_else(|_| {
            eprintln!("bench: {} holds a NUL byte", path.display());
            std::process::exit(2)
        })
    });
    let load_ptx = |ctx: &cuda_host::CudaContext| {
        let ptx = match &replacement {
            Some(ptx) => ptx.as_c_str(),
            None => ours::embedded()?.0,
        };
        ours::load_ptx(ctx, ptx).map(drop)
    };
    let load = |ctx: &cuda_host::CudaContext| {
        let module = match &replacement {
            Some(ptx) => ours::load_ptx(ctx, ptx)?,
            None => ours::load(ctx)?,
        };
        let image = match module.loaded_from() {
            ModuleImage::Cubin => "cubin",
            ModuleImage::Ptx => "PTX",
            ModuleImage::Cpu => "the CPU device's image",
        };
        Ok((module, image))
    };
    bench_harness::driver::main(suite::all(), Loaders { load, load_ptx })
}
