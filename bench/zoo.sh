#!/usr/bin/env bash
# weft against ONNX Runtime on every zoo model and the reference models, in one run:
#
#   bash bench/zoo.sh [THREADS...]          (default: 1 2)
#
# For each model (tests/data/models/*.onnx, tests/data/zoo/*.onnx, bench/zoo/*.onnx) and thread
# count T it runs
#   weft run MODEL --input MODEL.input.bin --output Y --threads T --repeat N [--db DB]
# (median of N runs after warm-up), checks Y against PyTorch's MODEL.output.bin, then
#   env -u OPENBLAS_CORETYPE bench/.venv/bin/python3 bench/ort_peer.py MODEL --threads T --repeat N
# and prints a markdown table with both medians and the ratio weft / ORT (> 1: weft is slower).
# "max err" is max |weft - torch| / max |torch| for weft's output.
#
# Before that it sets up bench/.venv (bench/setup_peers.sh: pip install onnxruntime) and writes
# the large zoo models into bench/zoo when they are missing (scripts/gen_zoo.py --big, which
# needs Debian's python3-torch, python3-torchvision and python3-onnx).
#
# Environment: WEFT (default build/release/weft), REPEAT (timed runs for the small models,
# default 50), REPEAT_BIG (for bench/zoo, default 10), DB (a tuned schedule database for weft),
# MODELS (space-separated .onnx paths instead of the default list). Run from anywhere; paths are
# relative to the repository root. Timings on a shared machine are noisy: compare within a row.
set -uo pipefail
cd "$(dirname "$0")/.."
threads=("$@")
[[ ${#threads[@]} -eq 0 ]] && threads=(1 2)
weft=${WEFT:-build/release/weft}
repeat=${REPEAT:-50}
repeat_big=${REPEAT_BIG:-10}
db=${DB:-}
venv_py=bench/.venv/bin/python3
if [[ ! -x $weft ]]; then
    echo "zoo.sh: no $weft; build it (cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release && cmake --build build/release) or set WEFT" >&2
    exit 2
fi

bash bench/setup_peers.sh >&2 || echo "zoo.sh: ONNX Runtime could not be set up; its column stays empty" >&2

big=$(/usr/bin/python3 scripts/gen_zoo.py --big --list 2>/dev/null)
missing=()
for n in $big; do [[ -f bench/zoo/$n.onnx && -f bench/zoo/$n.output.bin ]] || missing+=("$n"); done
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "zoo.sh: writing ${missing[*]} into bench/zoo" >&2
    /usr/bin/python3 scripts/gen_zoo.py --out bench/zoo "${missing[@]}" >&2 2>/dev/null ||
        echo "zoo.sh: could not write the large models (apt-get install python3-torch python3-torchvision python3-onnx)" >&2
fi

# python with numpy for the output check: the venv's, else Debian's
py=$venv_py
$py -c 'import numpy' 2>/dev/null || py=/usr/bin/python3

if [[ -n ${MODELS:-} ]]; then
    read -r -a models <<<"$MODELS"
else
    models=(tests/data/models/*.onnx tests/data/zoo/*.onnx)
    for f in bench/zoo/*.onnx; do [[ -f $f ]] && models+=("$f"); done
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dbarg=()
[[ -n $db ]] && dbarg=(--db "$db")

echo "| model | threads | weft (ms) | ONNX Runtime (ms) | weft / ORT | max err |"
echo "|---|---|---|---|---|---|"
for m in "${models[@]}"; do
    name=$(basename "$m" .onnx)
    stem=${m%.onnx}
    n=$repeat
    [[ $m == bench/zoo/* ]] && n=$repeat_big
    for t in "${threads[@]}"; do
        w="—" o="—" ratio="—" err="—"
        if [[ -f $stem.input.bin ]]; then
            line=$("$weft" run "$m" --input "$stem.input.bin" --output "$tmp/y.bin" --threads "$t" --repeat "$n" "${dbarg[@]}" 2>"$tmp/err" |
                sed -n 's/.*latency \([0-9.]*\) ms.*/\1/p')
            if [[ -n $line ]]; then
                w=$line
                if [[ -f $stem.output.bin ]]; then
                    err=$($py -c 'import sys, numpy as np
a = np.fromfile(sys.argv[1], "<f4"); b = np.fromfile(sys.argv[2], "<f4")
print("%.1e" % (abs(a - b).max() / max(abs(b).max(), 1e-30)) if a.size == b.size else "size %d != %d" % (a.size, b.size))' \
                        "$tmp/y.bin" "$stem.output.bin" 2>/dev/null || echo "?")
                fi
            else
                w="fails: $(head -c 200 "$tmp/err" | tr '\n|' '  ')"
            fi
        fi
        if [[ -x $venv_py ]]; then
            r=$(env -u OPENBLAS_CORETYPE "$venv_py" bench/ort_peer.py "$m" --threads "$t" --repeat "$n" 2>/dev/null |
                sed -n 's/^median_ms=//p')
            [[ -n $r ]] && o=$r
        fi
        if [[ $w =~ ^[0-9.]+$ && $o =~ ^[0-9.]+$ ]]; then
            ratio=$(awk -v a="$w" -v b="$o" 'BEGIN { printf "%.2f×", (b > 0 ? a / b : 0) }')
        fi
        echo "| $name | $t | $w | $o | $ratio | $err |"
    done
done
