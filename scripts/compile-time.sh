#!/usr/bin/env bash
# Compile time against the size of a function (docs/fuzzing.md, "Compile time"): Rustlantis
# programs of one function each (its `max_fn_count = 1`, up to 1000 blocks of up to 32
# statements), of sizes from 30 to about 15,600 MIR statements, each built alone by
# `cargo oxide fuzz --timings` in the dev profile (or the profile the arguments ask for), then
# one line per program: MIR statements, wall time of the build, and the backend's stages.
#
#   scripts/compile-time.sh                 # the dev profile
#   scripts/compile-time.sh --release       # any other `cargo oxide fuzz` options
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Seeds of this configuration whose one function spans the range (Rustlantis 2be7c5a):
# 25: 30 statements, 1: 1,035, 9: 2,403, 8: 3,791, 4: 8,442, 35: 9,930, 20: 15,182, 30: 15,655.
seeds=(25 1 9 8 4 35 20 30)
work=target/compile-time
mkdir -p "$work"
sed -e 's/^max_bb_count = .*/max_bb_count = 1000/' \
    -e 's/^max_bb_count_hard = .*/max_bb_count_hard = 2000/' \
    -e 's/^max_fn_count = .*/max_fn_count = 1/' \
    <<<"$(sed -n '/^pub const CONFIG: &str = "\\$/,/^";$/p' crates/oxide-fuzz/src/rustlantis.rs | sed '1d;$d')" \
    > "$work/config.toml"
rm -f "$work/timings.tsv"
for seed in "${seeds[@]}"; do
    scripts/rustlantis.sh --seeds "$seed" --batch 1 --timings --rustlantis-config "$work/config.toml" \
        --work "$work" --bundle "$work/bundle" "$@" >/dev/null
done
echo "MIR statements | build (s) | stages (ms)"
tail -n +2 "$work/timings.tsv" | awk -F'\t' '{ printf "%s | %s | %s\n", $4, $5, $6 }'
