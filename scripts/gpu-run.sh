#!/usr/bin/env bash
# Checks weft's CUDA target on a machine with an NVIDIA GPU: builds weft, runs the ctest label
# "gpu" (every op's default GPU schedule against the interpreter, the reference models against
# PyTorch, on the device) and the CUDA tests that use the fake driver, then runs each reference
# model with `weft run --target cuda` against PyTorch's outputs in tests/data/models and times
# it next to PyTorch CUDA eager (bench/pytorch_peer.py --device cuda), and prints a table.
#
# Usage, on the GPU machine, from the repository root:
#   scripts/gpu-run.sh [--debs DIR | --bundle FILE] [--build DIR] [--repeat N]
#     --bundle FILE  no build here: unpack FILE (made by scripts/gpu-bundle.sh on a Debian 12
#                  machine: weft with LLVM linked in, the device test, their libraries) into
#                  BUILD and use it; needs only the driver, NVRTC (libnvrtc.so.13) and PyTorch.
#                  This is the quick way on a lent GPU machine: nothing is built there.
#     --debs DIR   unpack the .deb files in DIR (dpkg -x) into BUILD/deps and build against
#                  them: for a machine that has the CUDA toolkit, CMake, a C compiler and PyTorch
#                  but no package registry. LLVM is not needed: without llvm-19 the build
#                  leaves the CPU backend out (the CUDA path does not use it).
#     --build DIR  build folder (default build/gpu)
#     --repeat N   timed runs per model (default 100; the figure is the median)
#     --tune-time SEC     weft tune --target cuda budget per model (default 600: the issue's
#                         "tuning each model takes <= 10 minutes")
#     --op-tune-time SEC  ... per sgemm shape (default 300)
#     --no-tune    skip the tuning (and the tuned columns)
#   (JOBS=N limits the build to N parallel jobs; default: every core)
# and, beforehand, on a Debian 12 machine with apt (no GPU needed):
#   scripts/gpu-run.sh --fetch-debs DIR   downloads those .deb files into DIR (apt-get download)
#
# After the models: sgemm fp32 (1024^3, 4096^3, 128x3072x768) with weft's default GPU schedule
# and tuned (weft tune --op matmul --target cuda, records in BUILD/gpu-tune.db) against cuBLAS
# through PyTorch (TF32 off, CUDA events), and the models tuned (weft tune MODEL --target cuda)
# against PyTorch CUDA eager: the ratio columns are what the issue's "done" asks for
# (sgemm tuned >= 0.8x cuBLAS, default >= 0.3x; models tuned <= PyTorch eager).
#
# Exit status: 0 when every check passed, 1 when one failed, 77 when there is no CUDA device
# (after the build, with the reason).
set -uo pipefail
cd "$(dirname "$0")/.."

DEBS=(libsqlite3-dev libsqlite3-0 libxgboost-dev libxgboost0 libdmlc0 libprotobuf-c-dev libprotobuf-c1
      protobuf-c-compiler libprotoc32 libprotobuf32 libonnx-dev libcmocka-dev libcmocka0
      pkg-config pkgconf pkgconf-bin libpkgconf3)
MODELS=(mlp resnet9 resnet9_b32 transformer transformer_s64)

SGEMMS=(1024,1024,1024 4096,4096,4096 128,3072,768)

build=build/gpu debs="" bundle="" repeat=100 tune_time=600 op_tune_time=300 tune=1
while [[ $# -gt 0 ]]; do
    case $1 in
    --fetch-debs)
        [[ $# -ge 2 ]] || { echo "gpu-run: --fetch-debs needs a folder" >&2; exit 2; }
        mkdir -p "$2" && cd "$2" && apt-get download "${DEBS[@]}" && ls -1 ./*.deb && exit 0
        echo "gpu-run: apt-get download failed" >&2
        exit 1 ;;
    --debs) debs=${2:?--debs needs a folder}; shift 2 ;;
    --bundle) bundle=${2:?--bundle needs a file}; shift 2 ;;
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --repeat) repeat=${2:?--repeat needs a number}; shift 2 ;;
    --tune-time) tune_time=${2:?--tune-time needs seconds}; shift 2 ;;
    --op-tune-time) op_tune_time=${2:?--op-tune-time needs seconds}; shift 2 ;;
    --no-tune) tune=0; shift ;;
    *) echo "gpu-run: unknown argument '$1' (see the top of $0)" >&2; exit 2 ;;
    esac
done

[[ -n "$bundle" && -n "$debs" ]] && { echo "gpu-run: --bundle and --debs exclude each other (a bundle builds nothing)" >&2; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi -L
if [[ -n "$bundle" ]]; then
    echo "== unpack $bundle into $build"
    mkdir -p "$build" && xz -dc "$bundle" | tar -C "$build" -xf - || { echo "gpu-run: cannot unpack $bundle" >&2; exit 1; }
    nvrtc=$( (ldconfig -p | awk '/libnvrtc\.so\.13/ { print $NF }'; find /usr/local /opt -name 'libnvrtc.so.13*' 2>/dev/null) | head -1)
    [[ -n "$nvrtc" ]] || { echo "gpu-run: libnvrtc.so.13 (CUDA 13's NVRTC) not found" >&2; exit 1; }
    export LD_LIBRARY_PATH=$PWD/$build/lib:$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    weft=$build/bin/weft compare=$build/bin/cli_compare_f32
else
    cmake_args=(-DCMAKE_BUILD_TYPE=Release -DWEFT_CHECK_LAYERS=OFF)
    if [[ -n "$debs" ]]; then
        deps=$PWD/$build/deps
        mkdir -p "$deps"
        for d in "$debs"/*.deb; do dpkg -x "$d" "$deps" || { echo "gpu-run: cannot unpack $d" >&2; exit 1; }; done
        arch=$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
        lib=$deps/usr/lib/$arch
        export PATH=$deps/usr/bin:$PATH
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
        # the unpacked .pc files say prefix=/usr: make them point into deps
        for pc in "$lib"/pkgconfig/*.pc; do sed -i "s|=/usr\b|=$deps/usr|g" "$pc"; done
        export PKG_CONFIG_PATH=$lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
        cmake_args+=(-DCMAKE_PREFIX_PATH="$deps/usr" -DONNX_PROTO="$deps/usr/include/onnx/onnx.proto"
                     -DPROTOC_C="$deps/usr/bin/protoc-c" -DXGBOOST_INC="$deps/usr/include" -DXGBOOST_LIB="$lib/libxgboost.so"
                     -DCMAKE_BUILD_RPATH="$lib")
        # a machine without pkg-config uses the unpacked pkgconf
        command -v pkg-config >/dev/null || cmake_args+=(-DPKG_CONFIG_EXECUTABLE="$deps/usr/bin/pkgconf")
    fi
    [[ -d /usr/lib/llvm-19/lib/cmake/llvm ]] || cmake_args+=(-DWEFT_WITH_LLVM=OFF)

    echo "== build ($build)"
    cmake -S . -B "$build" "${cmake_args[@]}" >"$build.configure.log" 2>&1 ||
        { tail -30 "$build.configure.log"; echo "gpu-run: configure failed (log: $build.configure.log)" >&2; exit 1; }
    grep -q 'weft: CUDA target on' "$build.configure.log" ||
        { grep 'weft: CUDA' "$build.configure.log"; echo "gpu-run: the CUDA target is not built (NVRTC not found)" >&2; exit 1; }
    cmake --build "$build" -j"${JOBS:-$(nproc)}" >"$build.build.log" 2>&1 ||
        { tail -30 "$build.build.log"; echo "gpu-run: build failed (log: $build.build.log)" >&2; exit 1; }
    weft=$build/weft
    compare=$build/cli_compare_f32
fi

# one line when there is no driver or device (the device checks then cannot run)
nodev=$("$weft" run tests/data/models/mlp.onnx --input tests/data/models/mlp.input.bin --target cuda --repeat 1 2>&1 |
        grep -E 'no CUDA (driver|device)')
if [[ -n "$bundle" ]]; then
    echo "== the device test (targets_test_cuda_device: every op's default GPU schedule, the models)"
    "$build/bin/targets_test_cuda_device"
    ctest_rc=$?
    [[ $ctest_rc -eq 77 ]] && ctest_rc=0
else
    echo "== ctest: the GPU and CUDA tests (interpreter GPU mode, NVRTC, fake driver; label gpu: the device)"
    (cd "$build" && ctest -R 'cuda|gpu' --output-on-failure)
    ctest_rc=$?
fi
if [[ -n "$nodev" ]]; then
    echo "$nodev"
    echo "gpu-run: no CUDA device here; the device checks (label gpu, the models below) did not run"
    exit 77
fi

echo "== reference models with --target cuda against PyTorch (tolerance 1e-4 x max(1, max |ref|))"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=$ctest_rc
rows=()
declare -A torch_ms
for m in "${MODELS[@]}"; do
    d=tests/data/models
    out=$("$weft" run $d/$m.onnx --input $d/$m.input.bin --output "$tmp/$m.bin" --target cuda --repeat "$repeat" 2>&1)
    rc=$?
    ms=$(sed -n 's/.*latency \([0-9.]*\) ms.*/\1/p' <<<"$out")
    if [[ $rc -ne 0 ]]; then
        echo "$m: weft run failed: $out"
        rows+=("$m|run failed||")
        fails=1
        continue
    fi
    cmp=$("$compare" "$tmp/$m.bin" $d/$m.output.bin 1e-4 2>&1)
    ok=$([[ $? -eq 0 ]] && echo match || echo MISMATCH)
    [[ $ok == match ]] || fails=1
    torch=$(python3 bench/pytorch_peer.py $d/$m.onnx --device cuda --repeat "$repeat" 2>/dev/null | sed -n 's/^median_ms=//p')
    rows+=("$m|$ok ($cmp)|$ms|${torch:-n/a}")
    torch_ms[$m]=${torch:-}
done

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/device: /'
printf '%-16s | %-60s | %12s | %16s\n' model "outputs vs PyTorch" "weft cuda ms" "PyTorch cuda ms"
for r in "${rows[@]}"; do
    IFS='|' read -r a b c e <<<"$r"
    printf '%-16s | %-60s | %12s | %16s\n' "$a" "$b" "$c" "$e"
done
echo "(medians of $repeat runs; weft: upload input, kernels, download output, synchronize; PyTorch: eager, TF32 off)"

# cuBLAS sgemm through PyTorch: median of CUDA-event times of one a @ b (TF32 off)
cublas_us() {
    python3 - "$1" "$repeat" <<'PY' 2>/dev/null
import sys, torch
torch.backends.cuda.matmul.allow_tf32 = False
torch.set_float32_matmul_precision("highest")
m, n, k = map(int, sys.argv[1].split(","))
reps = int(sys.argv[2])
a = torch.rand(m, k, device="cuda") * 2 - 1
b = torch.rand(k, n, device="cuda") * 2 - 1
for _ in range(10):
    c = a @ b
torch.cuda.synchronize()
ts = []
for _ in range(reps):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    c = a @ b
    e.record()
    e.synchronize()
    ts.append(s.elapsed_time(e) * 1e3)
ts.sort()
print("%.2f" % ts[len(ts) // 2])
PY
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "n/a" }'; }

db=$build/gpu-tune.db
echo "== sgemm fp32: weft default / tuned against cuBLAS (PyTorch, TF32 off)"
printf '%-16s | %12s | %12s | %12s | %12s | %10s | %10s\n' shape "default us" "tuned us" "tuned ev us" "cuBLAS us" \
    "default/cB" "tuned/cB"
for s in "${SGEMMS[@]}"; do
    ev=""
    if [[ $tune -eq 1 ]]; then
        "$weft" tune --op matmul --shape "$s" --target cuda --db "$db" --time "$op_tune_time" >"$tmp/tune.log" 2>&1 ||
            { echo "sgemm $s: weft tune failed: $(tail -3 "$tmp/tune.log")"; fails=1; }
        ev=$(awk '$2 == "matmul" && NF >= 8 { print $6 }' "$tmp/tune.log" | tail -1) # best_us (device events)
    fi
    dbarg=()
    [[ $tune -eq 1 ]] && dbarg=(--db "$db")
    "$weft" bench op matmul --shape "$s" --target cuda --csv --min-time 1 "${dbarg[@]}" >"$tmp/bench.csv" 2>"$tmp/bench.err" ||
        { echo "sgemm $s: weft bench op failed: $(cat "$tmp/bench.err")"; fails=1; }
    def=$(awk -F, '$3 == "default" { print $5 }' "$tmp/bench.csv")
    tun=$(awk -F, '$3 == "tuned" { print $5 }' "$tmp/bench.csv")
    cb=$(cublas_us "$s")
    # a ratio is weft's speed over cuBLAS's: cuBLAS time / weft time (tuned: the event time)
    printf '%-16s | %12s | %12s | %12s | %12s | %10s | %10s\n' "$s" "${def:-n/a}" "${tun:-n/a}" "${ev:-n/a}" "${cb:-n/a}" \
        "$(ratio "$cb" "$def")" "$(ratio "$cb" "${ev:-$tun}")"
done
echo "(default/tuned us: weft bench op --target cuda, launches + synchronize by the host clock; tuned ev us: the"
echo " tuner's median by device events; cuBLAS: median of $repeat CUDA-event times)"

if [[ $tune -eq 1 ]]; then
    echo "== models tuned with weft tune --target cuda (--time $tune_time each) against PyTorch CUDA eager"
    printf '%-16s | %10s | %14s | %16s | %10s\n' model "tune s" "tuned cuda ms" "PyTorch cuda ms" "torch/tuned"
    for m in "${MODELS[@]}"; do
        d=tests/data/models
        t0=$SECONDS
        "$weft" tune $d/$m.onnx --target cuda --db "$db" --time "$tune_time" >"$tmp/tune.log" 2>&1 ||
            { echo "$m: weft tune failed: $(tail -3 "$tmp/tune.log")"; fails=1; continue; }
        dt=$((SECONDS - t0))
        out=$("$weft" run $d/$m.onnx --input $d/$m.input.bin --output "$tmp/$m.tuned.bin" --target cuda --db "$db" \
              --repeat "$repeat" 2>&1)
        ms=$(sed -n 's/.*latency \([0-9.]*\) ms.*/\1/p' <<<"$out")
        "$compare" "$tmp/$m.tuned.bin" $d/$m.output.bin 1e-4 >/dev/null 2>&1 ||
            { echo "$m: the tuned model's outputs differ from PyTorch's"; fails=1; }
        tm=${torch_ms[$m]:-}
        printf '%-16s | %10s | %14s | %16s | %10s\n' "$m" "$dt" "${ms:-n/a}" "${tm:-n/a}" "$(ratio "$tm" "$ms")"
    done
fi

[[ $fails -eq 0 ]] && echo "gpu-run: all checks passed" || echo "gpu-run: some checks FAILED"
[[ $fails -eq 0 ]]
