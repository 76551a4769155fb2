#!/usr/bin/env bash
# weft run on the dynamic-batch MLP (ONNX dim_param 'batch'): the batch comes from the input
# file; batch 1 and 32 match PyTorch (tolerance 1e-4 relative to max |output|); a file that
# is not a whole number of rows is refused naming the input and the dimension. The small
# transformer with [batch, seq, 64] needs --dim batch=B; seq then comes from the file.
# Usage: dynamic.sh PATH/TO/weft PATH/TO/compare_f32
set -u
weft=$1 compare=$2
m=tests/data/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
for b in 1 32; do
    if out=$("$weft" run $m/mlp_dyn.onnx --input $m/mlp_dyn.b$b.input.bin --output "$tmp/y$b.bin" --repeat 2 --threads 2 2>&1) &&
        [[ "$out" == *"input (float32 [$b, 512])"* ]] && "$compare" "$tmp/y$b.bin" $m/mlp_dyn.b$b.output.bin 1e-4; then
        echo "ok: batch $b"
    else
        echo "FAIL: batch $b: $out"
        fails=$((fails + 1))
    fi
done
if out=$("$weft" run $m/tfs_dyn.onnx --input $m/tfs_dyn.b2s24.input.bin --dim batch=2 --output "$tmp/t.bin" --repeat 2 2>&1) &&
    [[ "$out" == *"input (float32 [2, 24, 64])"* ]] && "$compare" "$tmp/t.bin" $m/tfs_dyn.b2s24.output.bin 1e-4; then
    echo "ok: two symbols, --dim batch=2"
else
    echo "FAIL: two symbols: $out"
    fails=$((fails + 1))
fi
# expect STATUS SUBSTRING ARGS...
expect() {
    local want=$1 needle=$2
    shift 2
    local out rc
    out=$("$weft" "$@" 2>&1)
    rc=$?
    if [[ $rc -ne $want || "$out" != *"$needle"* ]]; then
        echo "FAIL: weft $* -> exit $rc (want $want): $out (wanted: $needle)"
        fails=$((fails + 1))
    else
        echo "ok: weft $*"
    fi
}
expect 1 "the size of dimension 'batch' is unknown: bind it by name" run $m/tfs_dyn.onnx --input $m/tfs_dyn.b2s24.input.bin
expect 1 "no input has a dimension named 'bat'" run $m/tfs_dyn.onnx --input $m/tfs_dyn.b2s24.input.bin --dim bat=2
expect 2 "--dim expects NAME=SIZE" run $m/tfs_dyn.onnx --input $m/tfs_dyn.b2s24.input.bin --dim batch=0
expect 1 "input 'input' needs 24576 bytes at these sizes, the buffer has 12288; batch = 4 as bound" \
    run $m/tfs_dyn.onnx --input $m/tfs_dyn.b2s24.input.bin --dim batch=4 --dim seq=24
# tuned at one batch, then run at that batch with the records (keyed by the concrete kernels)
expect 1 "the size of dimension 'batch' is unknown" tune $m/mlp_dyn.onnx --db "$tmp/t.db" --trials 2 --threads 1
expect 0 "measurements in" tune $m/mlp_dyn.onnx --db "$tmp/t.db" --trials 3 --threads 1 --dim batch=1
expect 0 "2 of 2 kernels tuned" run $m/mlp_dyn.onnx --input $m/mlp_dyn.b1.input.bin --db "$tmp/t.db" --threads 1 --repeat 2
expect 2 "--dim: $m/mlp.onnx has no symbolic dimensions" run $m/mlp.onnx --input $m/mlp.input.bin --dim batch=8
head -c 3000 $m/mlp_dyn.b32.input.bin > "$tmp/ragged.bin"
out=$("$weft" run $m/mlp_dyn.onnx --input "$tmp/ragged.bin" 2>&1)
rc=$?
if [[ $rc -ne 1 || "$out" != *"input 'input': 3000 bytes is not a whole number of 2048-byte slices along dimension 'batch'"* ]]; then
    echo "FAIL: ragged input -> exit $rc: $out"
    fails=$((fails + 1))
else
    echo "ok: ragged input refused"
fi
out=$("$weft" show $m/mlp_dyn.onnx 2>&1)
rc=$?
if [[ $rc -ne 2 || "$out" != *"symbolic dimensions (inputs: input (float32 [batch, 512]))"* ]]; then
    echo "FAIL: show of a dynamic model -> exit $rc: $out"
    fails=$((fails + 1))
else
    echo "ok: show names the symbolic dimension"
fi
exit $((fails > 0))
