#!/usr/bin/env bash
# Installs the toolchain cuda-oxide is built with, as crates/rustc-codegen-cuda/rust-toolchain.toml
# pins it (rustup installs it there with its components; offline when it is installed already),
# and exports its name as OXIDE_TOOLCHAIN for `cargo +$OXIDE_TOOLCHAIN ...`. Sourced by the
# other scripts; safe to run again.
set -euo pipefail
_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_toolchain_dir="$_repo/crates/rustc-codegen-cuda"

if ! command -v rustup >/dev/null 2>&1; then
    echo "cuda-oxide needs rustup (https://rustup.rs) to install its pinned toolchain" >&2
    exit 1
fi
OXIDE_TOOLCHAIN="$(sed -n 's/^channel *= *"\([^"]*\)".*/\1/p' "$_toolchain_dir/rust-toolchain.toml")"
if [ -z "$OXIDE_TOOLCHAIN" ]; then
    echo "no channel in $_toolchain_dir/rust-toolchain.toml" >&2
    exit 1
fi
(cd "$_toolchain_dir" && rustup toolchain install --no-self-update --no-update >&2)
export OXIDE_TOOLCHAIN
