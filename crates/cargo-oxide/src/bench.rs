//! `cargo oxide bench`: the benchmark suite (`examples/bench`) built into the GPU bundle with
//! `bench.sh`, which runs it on the GPU machine.
//!
//! The suite is always built with the release profile: it is timed against CUDA C++, which has
//! no overflow checks either.

use std::path::Path;
use std::process::{Command, ExitCode};

use crate::bundle_files::{place, set_executable};
use crate::cli::{BenchOptions, BuildTarget, DeviceDebug};
use crate::error::OxideError;
use crate::example_metadata::example_arch;
use crate::source_tree;
use crate::user_build;

/// The example that holds the suite; `bundle` builds it here rather than among the examples.
pub const BENCH_CRATE: &str = "bench";

/// Builds the suite with the default benchmarks and `features`, and puts `bench`, its PTX and
/// `bench.sh` into `dir` (which must exist).
pub fn build_into(
    dir: &Path,
    features: &[String],
    arch: Option<String>,
    device_debug: Option<DeviceDebug>,
) -> Result<(), OxideError> {
    let target = BuildTarget {
        features: features.to_vec(),
        ..release_target(BENCH_CRATE, arch, device_debug)
    };
    let built = user_build::build(&target)?;
    place(&built.artifact_dir, BENCH_CRATE, dir)?;
    build_gemm_into(dir, device_debug)?;
    let script = dir.join("bench.sh");
    std::fs::write(&script, bench_script()).map_err(|source| OxideError::Io {
        path: script.clone(),
        source,
    })?;
    set_executable(&script).map_err(|source| OxideError::Io {
        path: script.clone(),
        source,
    })
}

/// The example timed against cuBLAS after the suite (its own table), built like the suite with
/// the release profile, for the architecture its manifest names, into `dir/`[GEMM_DIR] (the
/// bundle's examples keep their dev-profile build of it).
pub const GEMM_CRATE: &str = "gemm_bf16";

/// Where [GEMM_CRATE]'s release build goes inside the bundle.
pub const GEMM_DIR: &str = "bench-release";

fn build_gemm_into(dir: &Path, device_debug: Option<DeviceDebug>) -> Result<(), OxideError> {
    let manifest = source_tree::repo_root()?
        .join("examples")
        .join(GEMM_CRATE)
        .join("Cargo.toml");
    if !manifest.is_file() {
        return Ok(());
    }
    let target = release_target(GEMM_CRATE, example_arch(&manifest), device_debug);
    let built = user_build::build(&target)?;
    let gemm_dir = dir.join(GEMM_DIR);
    std::fs::create_dir_all(&gemm_dir).map_err(|source| OxideError::Io {
        path: gemm_dir.clone(),
        source,
    })?;
    place(&built.artifact_dir, GEMM_CRATE, &gemm_dir)
}

/// The release build of `example` that the suite times (no features, the default options).
fn release_target(
    example: &str,
    arch: Option<String>,
    device_debug: Option<DeviceDebug>,
) -> BuildTarget {
    BuildTarget {
        example: Some(example.to_owned()),
        manifest_path: None,
        release: true,
        arch,
        default_arch: false,
        features: Vec::new(),
        verbose: false,
        device_debug,
        fmad: false,
        panic_messages: None,
        race: false,
    }
}

/// `cargo oxide bench`: build into the bundle folder, then run it when asked.
pub fn bench(options: &BenchOptions) -> Result<ExitCode, OxideError> {
    let dir = source_tree::resolve_dir(&options.out)?;
    std::fs::create_dir_all(&dir).map_err(|source| OxideError::Io {
        path: dir.clone(),
        source,
    })?;
    build_into(&dir, &options.features, options.arch.clone(), None)?;
    eprintln!(
        "cargo oxide: benchmark suite in {}; run {}/bench.sh on a machine with a GPU \
         (`bench --list` works without one)",
        dir.display(),
        dir.display()
    );
    if !options.run {
        return Ok(ExitCode::SUCCESS);
    }
    let status = Command::new(dir.join(BENCH_CRATE))
        .args(&options.args)
        .status()
        .map_err(|source| OxideError::Spawn {
            command: format!("{}/{BENCH_CRATE}", dir.display()),
            source,
        })?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

/// The script that runs the suite on the GPU machine.
fn bench_script() -> String {
    r#"#!/usr/bin/env bash
# Runs cuda-oxide's benchmark suite on the local GPU: each kernel compiled by cuda-oxide against
# the same algorithm in CUDA C++, compiled here at run time by NVRTC (libnvrtc of the CUDA
# toolkit; CUDA_OXIDE_NVRTC=/path/to/libnvrtc.so.N names it if it is not found).
# Made by `cargo oxide bench` and `cargo oxide bundle`. Results (bench.json, bench.csv,
# bench.txt and the CUDA C++ PTX) go to $OUT when set, else to bench-results/. Arguments go
# to the binary: ./bench.sh --quick, ./bench.sh --only vecadd,saxpy, ./bench.sh --help.
# Then the example `gemm_bf16` (its release build in bench-release/): the bf16 GEMM (sm_90a)
# against cuBLAS at 4096^3 and 8192^3 (gemm_bf16.md and gemm_bf16.json; skipped on other GPUs,
# and with --only, --list or --help).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")"
# Module load times are then full JIT compilations, not hits in the driver's cache.
export CUDA_CACHE_DISABLE=1
out="${OUT:-bench-results}"
./bench --out "$out" "$@"
status=$?
gemm=yes
for arg in "$@"; do
    case "$arg" in
        --only|--only=*|--list|--help|-h) gemm=no ;;
    esac
done
if [ "$gemm" = yes ] && [ -x ./bench-release/gemm_bf16 ]; then
@CUBLAS@    ./bench-release/gemm_bf16 --bench "$out" || status=1
fi
exit "$status"
"#
    .replace("@CUBLAS@", CUBLAS_ON_LIBRARY_PATH)
}

/// Shell lines (for `bench.sh` and the bundle's `run.sh`) that let `gemm_bf16` load cuBLAS:
/// cudarc opens it by the names `libcublas.so`, `libcublas.so.12`, ..., and CUDA 13 installs
/// `libcublas.so.13`. `CUDA_OXIDE_CUBLAS=/path/to/libcublas.so.N` names it, else the loader's
/// cache or `/usr/local/cuda/lib64` has it; a folder with a `libcublas.so` link to it, and its
/// own folder (for `libcublasLt`), go on the library path. Nothing happens when none is found.
pub const CUBLAS_ON_LIBRARY_PATH: &str = r#"    # cuBLAS for gemm_bf16 (cudarc opens libcublas.so, .so.12, ...; CUDA 13 has .so.13).
    cublas="${CUDA_OXIDE_CUBLAS:-}"
    if [ -z "$cublas" ]; then
        cublas=$(ldconfig -p 2>/dev/null | sed -n 's/^[[:space:]]*libcublas\.so\.[0-9]* .*=> //p' | head -n 1)
    fi
    if [ -z "$cublas" ]; then
        cublas=$(ls /usr/local/cuda/lib64/libcublas.so.[0-9]* 2>/dev/null | head -n 1)
    fi
    if [ -n "$cublas" ]; then
        link=$(mktemp -d)
        ln -s "$cublas" "$link/libcublas.so"
        export LD_LIBRARY_PATH="$link:$(dirname "$cublas")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
"#;

#[cfg(test)]
mod tests {
    use super::bench_script;

    #[test]
    fn script_runs_the_suite_into_out() {
        let script = bench_script();
        assert!(script.contains(r#"out="${OUT:-bench-results}""#));
        assert!(script.contains(r#"./bench --out "$out" "$@""#));
        // The bf16 GEMM's rows against cuBLAS, when the bundle has the example.
        assert!(script.contains(r#"./bench-release/gemm_bf16 --bench "$out" || status=1"#));
        assert!(script.contains(r#"exit "$status""#));
        assert!(script.contains(r#"ln -s "$cublas" "$link/libcublas.so""#));
        assert!(!script.contains("@CUBLAS@"));
        assert!(script.contains("CUDA_CACHE_DISABLE=1"));
    }
}
