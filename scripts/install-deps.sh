#!/usr/bin/env bash
# Installs the Debian packages weft needs to build, test and benchmark, only those missing.
# Idempotent: a second run installs nothing and runs no apt-get update.
set -euo pipefail

PACKAGES=(
    build-essential cmake pkg-config   # toolchain
    llvm-19-dev                        # the LLVM CPU backend
    libsqlite3-dev libxgboost-dev      # the tuning database, the cost model
    libcmocka-dev                      # unit tests
    libprotobuf-c-dev protobuf-c-compiler libonnx-dev  # ONNX import (frontend/)
    libopenblas-dev libdnnl-dev        # benchmark peers (optional for the library itself)
    clang-14 libclang-rt-14-dev        # libFuzzer targets (scripts/fuzz.sh)
    libopenmpi-dev openmpi-bin         # weft-mpi: mpirun -n N weft tune (optional; left out without)
    libamdhip64-dev libhiprtc-builtins5  # HIP target: ROCm 5.2 headers, hiprtc (optional; built when present)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
else
    echo "install-deps: missing packages (${missing[*]}) and not root, no sudo" >&2
    exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
