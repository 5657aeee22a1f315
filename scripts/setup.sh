#!/usr/bin/env bash
# Installs what cuda-oxide needs on a fresh machine, from this repository's own files:
# the toolchain pinned by rust-toolchain.toml (rustup installs it with its components).
# Sourced by the other scripts; safe to run again.
set -euo pipefail
_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if ! command -v rustup >/dev/null 2>&1; then
    echo "cuda-oxide needs rustup (https://rustup.rs) to install its pinned toolchain" >&2
    exit 1
fi
(cd "$_repo" && rustup toolchain install --no-self-update >/dev/null 2>&1) || (cd "$_repo" && rustup toolchain install)
