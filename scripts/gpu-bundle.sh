#!/usr/bin/env bash
# Builds what scripts/gpu-run.sh needs on a GPU machine that has the NVIDIA driver, the CUDA
# toolkit's NVRTC (libnvrtc.so.13) and PyTorch but neither LLVM nor weft's other libraries,
# and packs it into one file small enough to send there:
#   weft, weft-bench (LLVM linked statically: -DWEFT_LLVM_STATIC=ON, no BLAS peers),
#   cli_compare_f32, targets_test_cuda_device, and the libraries they need that such a machine
#   may lack (SQLite, XGBoost, protobuf-c, cmocka, libgomp, zstd).
# The binaries share most of their bytes (LLVM); xz with a dictionary larger than one binary
# stores them about once (~19 MB in all).
#
# Usage, on a Debian 12 machine with the build dependencies (scripts/install-deps.sh):
#   scripts/gpu-bundle.sh OUT.tar.xz [BUILD_DIR]   (BUILD_DIR default build/gpu-static)
# then, on the GPU machine, from the repository root:
#   scripts/gpu-run.sh --bundle OUT.tar.xz [--no-tune | --tune-time SEC ...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-bundle.sh OUT.tar.xz [BUILD_DIR]}
build=${2:-build/gpu-static}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_CHECK_LAYERS=OFF -DWEFT_LLVM_STATIC=ON -DWEFT_BENCH_PEERS=OFF \
      -DWEFT_MPI=OFF -DWEFT_HIP=OFF >"$build.configure.log" 2>&1 ||
    { tail -20 "$build.configure.log"; echo "gpu-bundle: configure failed" >&2; exit 1; }
grep -q 'weft: CUDA target on' "$build.configure.log" || { echo "gpu-bundle: the CUDA target is not built (NVRTC not found)" >&2; exit 1; }
cmake --build "$build" -j"${JOBS:-$(nproc)}" --target weft_cli weft_bench cli_compare_f32 targets_test_cuda_device \
      >"$build.build.log" 2>&1 || { tail -20 "$build.build.log"; echo "gpu-bundle: build failed" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
for b in weft weft-bench cli_compare_f32 targets_test_cuda_device; do strip -o "$stage/bin/$b" "$build/$b"; done
# the libraries outside glibc, libstdc++ and CUDA that the binaries load
ldd "$stage"/bin/* | awk '$3 ~ /^\// { print $1, $3 }' | sort -u | while read -r name path; do
    case $name in
    libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | libstdc++* | libgcc_s* | ld-linux* | libnvrtc*) ;;
    *) cp -L "$path" "$stage/lib/$name" ;;
    esac
done
tar -C "$stage" -cf - bin lib | xz -T1 --lzma2=preset=3,dict=128MiB >"$out"
echo "gpu-bundle: $out ($(du -h "$out" | cut -f1)): $(ls "$stage/bin" | tr '\n' ' ')+ $(ls "$stage/lib" | wc -l) libraries"
