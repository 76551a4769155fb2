#!/usr/bin/env bash
# The benchmark peers live in weft-bench, not in weft: weft links no BLAS or oneDNN, weft-bench
# sits next to it and `weft bench op` runs it (same arguments, same messages); a weft without
# its weft-bench says so instead of failing obscurely, and its help still lists `bench op`.
# Usage: bench_split.sh PATH/TO/weft
set -u
weft=$1
dir=$(dirname "$weft")
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ldd "$weft" | grep -Eiq 'blas|dnnl|mkl'; then fail "weft links $(ldd "$weft" | grep -Eio '[^ ]*(blas|dnnl|mkl)[^ ]*' | head -1)"
else echo "ok: weft links no BLAS or oneDNN"; fi
[[ -x "$dir/weft-bench" ]] && echo "ok: weft-bench next to weft" || fail "no weft-bench next to $weft"

out=$("$weft" bench op matmul --shape 8,8,8 --threads 1 --min-time 0 --csv 2>&1)
[[ $? -eq 0 && "$out" == *"matmul,8x8x8,default,1,"* ]] && echo "ok: weft bench op runs weft-bench" ||
    { fail "weft bench op:"; echo "$out"; }
out=$("$dir/weft-bench" op matmul --shape 8,8,8 --bogus 2>&1)
[[ $? -eq 2 && "$out" == *"weft bench op: unknown option '--bogus'"* ]] && echo "ok: weft-bench reports as weft bench op" ||
    { fail "weft-bench usage error:"; echo "$out"; }
out=$("$dir/weft-bench" 2>&1)
[[ $? -eq 2 && "$out" == *"usage: weft-bench op"* ]] && echo "ok: weft-bench without a subcommand prints its usage" ||
    { fail "weft-bench alone:"; echo "$out"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$weft" "$tmp/weft"
out=$("$tmp/weft" bench op matmul --shape 8,8,8 --min-time 0 2>&1)
[[ $? -eq 1 && "$out" == *"cannot run $tmp/weft-bench"* ]] && echo "ok: a weft without weft-bench says so" ||
    { fail "weft bench op without weft-bench:"; echo "$out"; }
out=$("$tmp/weft" help bench op 2>&1)
[[ $? -eq 0 && "$out" == *"usage: weft bench op"* ]] && echo "ok: help bench op without weft-bench" ||
    { fail "help bench op:"; echo "$out"; }
[[ $fails -eq 0 ]]
