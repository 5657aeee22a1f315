#!/usr/bin/env bash
# Finds `ptxas` (NVIDIA's PTX assembler) where the backend finds it (`cargo oxide doctor
# --which ptxas`: $PTXAS, PATH, /usr/local/cuda/bin, PyPI's NVIDIA packages), installing it
# from PyPI's nvidia-cuda-nvcc when it is missing, and exports its path as PTXAS. No GPU is
# needed. Sourced after scripts/setup.sh (OXIDE_TOOLCHAIN) by scripts/test.sh.
set -euo pipefail

if [ -z "${PTXAS:-}" ]; then
    if ! PTXAS="$(cargo "+$OXIDE_TOOLCHAIN" oxide doctor --which ptxas 2>/dev/null)"; then
        echo "installing ptxas (pip: nvidia-cuda-nvcc)" >&2
        python3 -m pip install --quiet --disable-pip-version-check "nvidia-cuda-nvcc==13.5.37" >&2
        PTXAS="$(cargo "+$OXIDE_TOOLCHAIN" oxide doctor --which ptxas)"
    fi
fi
export PTXAS
