#!/usr/bin/env bash
# Runs every test of cuda-oxide that needs no GPU. This is the README's test command, and what
# CI runs on a fresh clone.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The pinned toolchain (crates/rustc-codegen-cuda/rust-toolchain.toml, with rustc-dev,
# llvm-tools and rust-src) as OXIDE_TOOLCHAIN, and ptxas (from PyPI) for checking the PTX the
# compiler produces. Every command names the toolchain: the default one may be any.
source scripts/setup.sh
source scripts/ptxas.sh
cargo=(cargo "+$OXIDE_TOOLCHAIN")

# Each section's heading says when it started, in seconds since the script did: where CI's
# time goes.
section() {
    echo "== $1 (at ${SECONDS} s)"
}

section "formatting"
"${cargo[@]}" fmt --all --check
"${cargo[@]}" fmt --manifest-path examples/Cargo.toml --all --check

section "clippy"
"${cargo[@]}" clippy --workspace --all-targets --quiet -- -D warnings

section "tests"
"${cargo[@]}" test --workspace
"${cargo[@]}" test --manifest-path examples/Cargo.toml -p bench-harness

section "examples: build the GPU bundle, check its PTX with ptxas"
# The examples use crates from crates.io (examples/crates), at the versions of Cargo.lock.
"${cargo[@]}" fetch --manifest-path examples/Cargo.toml --locked
"${cargo[@]}" oxide bundle
for ptx in target/gpu-bundle/*.ptx; do
    # Each for the architecture it was built for (sm_90, or sm_90a for the wgmma example).
    arch=$(sed -n 's/^\.target \(sm_[0-9a-z]*\).*/\1/p' "$ptx" | head -n 1)
    "$PTXAS" -arch="${arch:-sm_90}" "$ptx" -o /dev/null
    echo "ptxas ok: $ptx"
done

section "examples on the CPU device: the same bundle, run by CUDA_OXIDE_DEVICE=cpu (docs/cpu.md)"
# Each example checks its results against a CPU computation, as on a GPU; those that need what
# the CPU device does not run yet say so (their `cpu` metadata) and are skipped.
CUDA_OXIDE_DEVICE=cpu OUT=target/gpu-bundle/cpu-logs bash target/gpu-bundle/run.sh

section "differential testing: 20 generated programs, the reproducers of tests/fuzz-regressions"
echo "   and the Rustlantis programs of tests/rustlantis, through the backend, ptxas and their CPU side;"
echo "   their kernels run on the CPU device against the CPU's outputs"
# docs/fuzzing.md; fails on an internal error, an llc or ptxas failure, a generator defect, or
# a kernel whose outputs on the CPU device differ from the CPU's.
"${cargo[@]}" oxide fuzz --cpu --seeds 0..20 --batch 20 --programs tests/fuzz-regressions \
    --programs tests/rustlantis

section "benchmark suite: dry run (lists it; compiles the CUDA C++ with NVRTC where installed)"
# NVRTC from PyPI (`pip install nvidia-cuda-nvrtc`), when there, compiles the .cu files here too.
if [ -z "${CUDA_OXIDE_NVRTC:-}" ]; then
    nvrtc=$(python3 -c "import glob,site;print(next(iter(sorted(glob.glob(site.getsitepackages()[0]+'/nvidia/*/lib/libnvrtc.so.*'))),''))")
    if [ -n "$nvrtc" ]; then
        export CUDA_OXIDE_NVRTC="$nvrtc"
    fi
fi
target/gpu-bundle/bench --list
section "done"
