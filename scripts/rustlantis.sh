#!/usr/bin/env bash
# Differential testing with Rustlantis (cbeuw/rustlantis, the MIR fuzzer; see docs/fuzzing.md):
# fetches the generator at the commit the harness was written against, builds it, and runs a
# `cargo oxide fuzz` campaign on its programs. Every argument goes to `cargo oxide fuzz`:
#
#   scripts/rustlantis.sh --seeds 0..200 --release --compact
#   scripts/rustlantis.sh --seeds 0..20 --release --device-debug full --batch 4
#
# RUSTLANTIS_SRC names where to clone it from (a URL or a local clone; default GitHub). Nothing
# of Rustlantis goes into this repository: it is cloned and built under target/rustlantis/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh

commit="$(sed -n 's/^pub const COMMIT: &str = "\([0-9a-f]*\)";/\1/p' crates/oxide-fuzz/src/rustlantis.rs)"
if [ -z "$commit" ]; then
    echo "no COMMIT in crates/oxide-fuzz/src/rustlantis.rs" >&2
    exit 1
fi
src="${RUSTLANTIS_SRC:-https://github.com/cbeuw/rustlantis}"
dir=target/rustlantis
if [ ! -d "$dir/src/.git" ]; then
    git clone --quiet "$src" "$dir/src"
fi
if ! git -C "$dir/src" cat-file -e "$commit^{commit}" 2>/dev/null; then
    git -C "$dir/src" fetch --quiet "$src"
fi
git -C "$dir/src" -c advice.detachedHead=false checkout --quiet --detach "$commit"
cargo "+$OXIDE_TOOLCHAIN" build --quiet --release --locked -p generate \
    --manifest-path "$dir/src/Cargo.toml" --target-dir "$dir/target"
exec cargo "+$OXIDE_TOOLCHAIN" oxide fuzz --rustlantis "$dir/target/release/generate" "$@"
