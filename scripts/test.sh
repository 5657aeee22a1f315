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

echo "== formatting"
"${cargo[@]}" fmt --all --check
"${cargo[@]}" fmt --manifest-path examples/Cargo.toml --all --check

echo "== clippy"
"${cargo[@]}" clippy --workspace --all-targets --quiet -- -D warnings

echo "== tests"
"${cargo[@]}" test --workspace

echo "== examples: build the GPU bundle, check its PTX with ptxas"
"${cargo[@]}" oxide bundle
for ptx in target/gpu-bundle/*.ptx; do
    "$PTXAS" -arch=sm_90 "$ptx" -o /dev/null
    echo "ptxas ok: $ptx"
done
