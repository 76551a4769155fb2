#!/usr/bin/env bash
# weft run on the dynamic-batch MLP (ONNX dim_param 'batch'): the batch comes from the input
# file; batch 1 and 32 match PyTorch (tolerance 1e-4 relative to max |output|); a file that
# is not a whole number of rows is refused naming the input and the dimension.
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
