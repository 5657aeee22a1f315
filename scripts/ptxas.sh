#!/usr/bin/env bash
# Finds `ptxas` (NVIDIA's PTX assembler), installing it from PyPI's nvidia-cuda-nvcc when it is
# missing, and exports its path as PTXAS. No GPU is needed. Sourced by scripts/test.sh.
set -euo pipefail

_find_ptxas() {
    python3 - <<'PY'
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()]
for root in roots:
    for path in sorted(glob.glob(os.path.join(root, "nvidia", "*", "bin", "ptxas"))):
        if os.access(path, os.X_OK):
            print(path)
            sys.exit(0)
sys.exit(1)
PY
}

if [ -z "${PTXAS:-}" ]; then
    if command -v ptxas >/dev/null 2>&1; then
        PTXAS="$(command -v ptxas)"
    elif ! PTXAS="$(_find_ptxas)"; then
        echo "installing ptxas (pip: nvidia-cuda-nvcc)" >&2
        python3 -m pip install --quiet --disable-pip-version-check "nvidia-cuda-nvcc==13.5.37" >&2
        PTXAS="$(_find_ptxas)"
    fi
fi
export PTXAS
