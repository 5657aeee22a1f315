#!/usr/bin/env bash
# Runs every test of cuda-oxide that needs no GPU. This is the README's test command, and what
# CI runs on a fresh clone.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The pinned toolchain (rust-toolchain.toml), with rustc-dev, llvm-tools and rust-src.
source scripts/setup.sh

echo "== formatting"
cargo fmt --all --check

echo "== clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings

echo "== tests"
cargo test --workspace
