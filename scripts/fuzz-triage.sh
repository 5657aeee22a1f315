#!/usr/bin/env bash
# Makes a folder to tell which PTX assemblers get failing fuzz batches wrong (docs/fuzzing.md):
#   scripts/fuzz-triage.sh OUT BUNDLE/b200 BUNDLE/b700 ...   (batch paths without extension)
# copies each batch's .ptx and .expect and a runner, assembles each PTX here with the local
# ptxas at -O3 (`*.local-O3.cubin`), and writes OUT/triage.sh, which runs every batch on the GPU
# from the driver's JIT, from that machine's ptxas at -O0 and -O3, and from the local cubins.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
source scripts/ptxas.sh
out="$1"; shift
rm -rf "$out"; mkdir -p "$out"
for batch in "$@"; do
    name=$(basename "$batch")
    cp "$batch.ptx" "$batch.expect" "$out/"
    "$PTXAS" -arch=sm_90 -O3 "$batch.ptx" -o "$out/$name.local-O3.cubin"
    cp "$(dirname "$batch")/fuzz-runner" "$out/fuzz-runner"
done
"$PTXAS" --version | tail -1 > "$out/local-ptxas-version.txt"
cat > "$out/triage.sh" <<'SH'
#!/usr/bin/env bash
cd "$(dirname "${BASH_SOURCE[0]}")"
echo "local ptxas: $(cat local-ptxas-version.txt); this machine's: $(ptxas --version | tail -1)"
for f in *.expect; do
    s="${f%.expect}"
    ptxas -arch=sm_90 -O0 "$s.ptx" -o "$s.O0.cubin"
    ptxas -arch=sm_90 -O3 "$s.ptx" -o "$s.O3.cubin"
    for suffix in .ptx .O0.cubin .O3.cubin .local-O3.cubin; do
        echo "== $f from $suffix"
        FUZZ_IMAGE_SUFFIX=$suffix ./fuzz-runner gpu "$f" | grep -v '^failing'
    done
done
SH
chmod +x "$out/triage.sh"
echo "wrote $out; run $out/triage.sh on a machine with a GPU"
