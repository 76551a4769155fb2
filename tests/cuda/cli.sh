#!/usr/bin/env bash
# weft run / bench model / bench op with --target cuda, without a GPU.
#  - no driver (WEFT_CUDA_DRIVER naming a library that is not there, as on a machine without
#    the NVIDIA driver): exit 1 and exactly one line on stderr, "no CUDA driver";
#  - the fake driver (tests/cuda/fake_cuda.c) with no devices: one line, "no CUDA device";
#  - the fake driver: past compile and launch (FAKECUDA_LOG shows the launches), every
#    allocation freed and every module unloaded at exit; the fake computes nothing, so
#    bench op's check against the CPU reference must catch the uncomputed output;
#  - a driver failure (FAKECUDA_FAIL): one line naming the driver call and its error.
# Usage: cli.sh PATH/TO/weft PATH/TO/libfakecuda.so (empty: the CUDA target is not built -> skip)
set -u
weft=$1
fake=${2:-}
if [[ -z "$fake" ]]; then
    echo "skipped: the CUDA target is not built (NVRTC not found)"
    exit 77
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
m=tests/data/models/mlp.onnx
x=tests/data/models/mlp.input.bin

# one line on stderr containing $2, exit status $1; the rest is the command
expect_line() {
    local want_rc=$1 want=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$? lines
    lines=$(wc -l <"$tmp/err")
    if [[ $rc -eq $want_rc && $lines -eq 1 ]] && grep -q -- "$want" "$tmp/err"; then
        echo "ok: ${*:2:3} ... -> $(cat "$tmp/err")"
    else
        fail "$* (exit $rc, $lines lines on stderr, wanted exit $want_rc and one line with '$want'):"
        cat "$tmp/err"
    fi
}

export WEFT_CUDA_DRIVER=/nonexistent/libcuda.so.1
expect_line 1 "weft run: no CUDA driver" "$weft" run $m --input $x --target cuda
expect_line 1 "weft bench model: no CUDA driver" "$weft" bench model $m --target cuda --repeat 1
expect_line 1 "weft bench op: no CUDA driver" "$weft" bench op matmul --shape 8,8,8 --target cuda
expect_line 2 "--target expects llvm, interp, cuda, cuda:sm_XX, hip or hip:gfxNNN" "$weft" run $m --input $x --target vulkan
out=$("$weft" show matmul --shape 64,64,64 --target cuda --print cuda 2>&1)
[[ $? -eq 0 && "$out" == *"__global__"* ]] && echo "ok: show --print cuda without a driver" || fail "show --print cuda: $out"

export WEFT_CUDA_DRIVER=$fake
FAKECUDA_DEVICES=0 expect_line 1 "weft run: no CUDA device" "$weft" run $m --input $x --target cuda

# through the fake: compile, upload, launch, download; nothing left behind
log=$tmp/fake.log
check_log() { # $1: what ran
    local n
    n=$(grep -c '^launch ' "$log")
    if [[ $n -gt 0 ]] && grep -q '^exit live=0 modules=0 bad=0$' "$log"; then echo "ok: $1: $n launches, all freed"
    else fail "$1: $n launches; log ends: $(tail -1 "$log")"; fi
    rm -f "$log"
}
FAKECUDA_LOG=$log "$weft" run $m --input $x --target cuda --repeat 2 --profile --output "$tmp/y.bin" >"$tmp/out" 2>&1
rc=$?
[[ $rc -eq 0 && -s "$tmp/y.bin" ]] && echo "ok: weft run --target cuda on the fake driver" || { fail "weft run (exit $rc):"; cat "$tmp/out"; }
grep -q '^launch gemm_relu_k0 grid=32,2,1 block=16,16,1 args=5$' "$log" && echo "ok: the first Gemm launch (the GEMM rule): 32 x 2 blocks of 16 x 16 threads, 5 arguments" ||
    fail "no launch 'gemm_relu_k0 grid=32,2,1 block=16,16,1 args=5' in: $(grep '^launch' "$log" | head -3)"
check_log "weft run"
FAKECUDA_LOG=$log "$weft" bench model $m --target cuda --repeat 2 --csv >"$tmp/out" 2>&1
rc=$?
[[ $rc -eq 0 ]] && grep -q '^mlp,[0-9]*,default,' "$tmp/out" && echo "ok: weft bench model --target cuda" ||
    { fail "weft bench model (exit $rc):"; cat "$tmp/out"; }
check_log "weft bench model"
FAKECUDA_LOG=$log "$weft" bench op softmax --shape 16,100 --target cuda --min-time 0 >"$tmp/out" 2>&1
rc=$?
[[ $rc -eq 1 ]] && grep -q 'default schedule disagrees with the CPU reference' "$tmp/out" &&
    echo "ok: weft bench op --target cuda: launched, and the check catches the fake's uncomputed output" ||
    { fail "weft bench op (exit $rc):"; cat "$tmp/out"; }
check_log "weft bench op"

# driver failures come back as one line naming the call
FAKECUDA_FAIL=cuLaunchKernel:2 expect_line 1 "cuLaunchKernel (gemm_relu_k1, grid (64, 1, 1), block (256, 1, 1)) failed: CUDA_ERROR_LAUNCH_FAILED" \
    "$weft" run $m --input $x --target cuda
FAKECUDA_FAIL=cuMemAlloc_v2 expect_line 1 "cuMemAlloc_v2 (.* bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory" \
    "$weft" run $m --input $x --target cuda
FAKECUDA_FAIL=cuCtxSynchronize:2 expect_line 1 "cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_FAILED" \
    "$weft" run $m --input $x --target cuda
[[ $fails -eq 0 ]]
