#!/usr/bin/env bash
# The weft command on good and bad input: exit status and the message it prints.
# Usage: cli.sh PATH/TO/weft
set -u
weft=$1
fails=0

# expect STATUS SUBSTRING -- ARGS...: runs weft ARGS, checks the exit status and that
# stdout+stderr contains SUBSTRING.
expect() {
    local want=$1 needle=$2
    shift 3
    local out rc
    out=$("$weft" "$@" 2>&1)
    rc=$?
    if [[ $rc -ne $want || "$out" != *"$needle"* ]]; then
        echo "FAIL: weft $* -> exit $rc (want $want), output:"
        echo "$out" | head -20
        echo "(wanted to see: $needle)"
        fails=$((fails + 1))
    else
        echo "ok: weft $*"
    fi
}

expect 2 "usage" -- bogus
expect 0 "weft 0." -- --version
expect 1 "no iterator 'q'" -- show matmul --shape 4,4,4 --steps "split C q 2"
expect 1 "split factor must be a positive integer, got '0'" -- show matmul --shape 4,4,4 --steps "split C i 0"
expect 1 "cannot vectorize reduction iterator k of stage C: only as the stage's innermost loop" -- show matmul --shape 4,4,4 --steps $'reorder C k i j\nvectorize C k'
expect 0 "vectorized for (k" -- show matmul --shape 4,4,4 --steps "vectorize C k"
expect 1 "line 2" -- show matmul --shape 4,4,4 --steps $'split C i 2\nfuse C i.0 k'
expect 2 "--shape" -- show matmul --shape 4,x,4
expect 1 "nosuchop" -- show nosuchop --shape 4
expect 1 "matmul" -- show matmul --shape 4,4
expect 1 "matmul" -- show matmul --shape 0,4,4
expect 1 "cannot read steps file" -- show matmul --shape 4,4,4 --steps @/nonexistent/steps.txt
expect 2 "--schedule expects naive, default, manual or random:SEED, got 'fast'" -- show matmul --shape 4,4,4 --schedule fast
expect 0 "placeholder A: float32[8, 4]" -- show matmul --shape 8,8,4 --print te
expect 0 "vectorized for" -- show softmax --shape 4,64 --schedule default --print loop
expect 0 "kernel,shape,schedule,threads,median_us,gflops" -- bench op matmul --shape 16,32,8 --threads 2 --csv --min-time 0
expect 0 "kernel,shape,schedule,threads,fastest_us,gflops" -- bench op matmul --shape 16,32,8 --threads 1 --csv --fastest --min-time 0
expect 0 "matmul,16x32x8,manual,2," -- bench op matmul --shape 16,32,8 --threads 2 --csv --min-time 0
# with the oneDNN peer built, --cpu haswell holds it to AVX2 too (bench_peers_settle restarts the
# process with ONEDNN_MAX_CPU_ISA=AVX2) and the restart keeps the arguments
if "$weft" bench op matmul --shape 8,8,8 --threads 1 --csv --min-time 0 2>&1 | grep -q "^# onednn: oneDNN"; then
    ( fails=0; unset ONEDNN_MAX_CPU_ISA
      expect 0 "isa cpu_isa_avx2," -- bench op matmul --shape 16,32,8 --threads 1 --csv --min-time 0 --cpu haswell
      expect 0 "matmul,16x32x8,onednn,1," -- bench op matmul --shape 16,32,8 --threads 1 --csv --min-time 0 --cpu haswell
      exit $fails ) || fails=$((fails + $?))
fi
expect 0 "conv2d,1x3x8x8x4x3x3x1x1,default,1," -- bench op conv2d --shape 1,3,8,8,4,3,3,1,1 --threads 1 --csv --min-time 0
expect 1 "x.onnx" -- bench model /nonexistent/x.onnx
expect 2 "--threads expects an integer in 1..256, got 0" -- bench op matmul --shape 4,4,4 --threads 0
if "$weft" show matmul --shape 8,8,8 --print asm --target llvm >/dev/null 2>&1; then
    expect 0 "vfmadd" -- show matmul --shape 64,64,64 --schedule manual --print asm
fi
# models: bad input gives a clear error and a nonzero exit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=tests/data/bad
head -c 5000 tests/data/models/mlp.onnx > "$tmp/truncated.onnx"
head -c 3000 /dev/urandom > "$tmp/garbage.onnx"
: > "$tmp/empty.onnx"
head -c 20 tests/data/models/mlp.input.bin > "$tmp/short.bin"
expect 1 "truncated.onnx" -- run "$tmp/truncated.onnx" --input tests/data/models/mlp.input.bin
expect 1 "garbage.onnx" -- run "$tmp/garbage.onnx" --input tests/data/models/mlp.input.bin
expect 1 "empty.onnx" -- run "$tmp/empty.onnx" --input tests/data/models/mlp.input.bin
# WEFT_WINOGRAD takes 0, 1, 2 or 4, nothing else
out=$(WEFT_WINOGRAD=yes "$weft" run tests/data/models/mlp.onnx --input tests/data/models/mlp.input.bin --repeat 1 2>&1)
if [[ $? -ne 1 || "$out" != *"WEFT_WINOGRAD='yes': expected 0 (direct convs), 1 (Winograd where it pays), 2 or 4"* ]]; then
    echo "FAIL: WEFT_WINOGRAD=yes weft run -> $out"
    fails=$((fails + 1))
else
    echo "ok: WEFT_WINOGRAD=yes weft run"
fi
expect 1 "cannot" -- run /nonexistent/model.onnx --input tests/data/models/mlp.input.bin
expect 1 "unsupported op 'FooBar' (node 'mystery')" -- run $bad/unsupported_op.onnx --input tests/data/models/mlp.input.bin
expect 1 "initializer 'W': raw_data has 48 bytes, expected 64" -- run $bad/bad_initializer.onnx --input tests/data/models/mlp.input.bin
expect 1 "escapes the model folder" -- run $bad/external_escape.onnx --input tests/data/models/mlp.input.bin
expect 1 "needs 24 bytes, but $tmp/short.bin has 20 bytes" -- run $bad/tiny_relu.onnx --input "$tmp/short.bin"
expect 1 "input 'input' (float32 [32, 512]) needs 65536 bytes, but tests/data/models/resnet9.input.bin has 12288 bytes" -- run tests/data/models/mlp.onnx --input tests/data/models/resnet9.input.bin
expect 2 "--input" -- run tests/data/models/mlp.onnx
expect 0 "predicted class: 5" -- run tests/data/models/resnet9.onnx --input tests/data/models/resnet9.input.bin --repeat 2
expect 0 "conv" -- run tests/data/models/resnet9.onnx --input tests/data/models/resnet9.input.bin --repeat 2 --profile
expect 0 "Conv" -- show tests/data/models/resnet9.onnx
expect 0 "model,threads,schedule,median_ms" -- bench model tests/data/models/mlp.onnx --threads 1 --csv --repeat 3
# the peers answer turns (--serve) where they are installed: their rows come after weft's
if /usr/bin/python3 -c "import torch, numpy" >/dev/null 2>&1; then
    expect 0 "mlp,1,pytorch," -- bench model tests/data/models/mlp.onnx --threads 1 --csv --repeat 12
    expect 0 "pytorch: failed (exit 2): pytorch_peer: no PyTorch model for 'tiny_relu.onnx'" -- bench model $bad/tiny_relu.onnx --threads 1 --repeat 2
else
    echo "skip: bench model's PyTorch row (no /usr/bin/python3 with torch)"
fi
echo "cli: $fails failure(s)"
exit $((fails > 0))
