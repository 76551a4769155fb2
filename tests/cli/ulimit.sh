#!/usr/bin/env bash
# weft run under a 400 MB address-space limit (ulimit -v 400000, as in a small container):
# it must either run ResNet-9 correctly or fail within seconds with an out-of-memory message,
# never hang. (With OpenBLAS linked into weft it hung: OpenBLAS's server thread looped on a
# failed allocation and exit() waited for it; tests/cli/bench_split.sh checks weft links none.)
# Usage: ulimit.sh PATH/TO/weft [SANITIZE]
# A sanitizer build is skipped (exit 77): ASan reserves terabytes of shadow address space at
# start-up, so no ASan binary can start under any small ulimit -v. (Far below 400 MB the
# failure is outside weft: a Debug build under 200 MB aborts in a C++ static initializer of a
# shared library it links, std::bad_alloc before main, so no smaller limit is tested.)
set -u
weft=$1
sanitize=${2:-}
if [[ -n "$sanitize" ]]; then
    echo "skip: sanitizer build ($sanitize) cannot start under ulimit -v"
    exit 77
fi
models=tests/data/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

start=$(date +%s)
(ulimit -v 400000 && exec timeout 60 "$weft" run $models/resnet9.onnx --input $models/resnet9.input.bin --threads 2 \
    --output "$tmp/out.bin") > "$tmp/log" 2>&1
rc=$?
secs=$(($(date +%s) - start))
if [[ $rc -eq 124 ]]; then
    echo "FAIL: weft run under ulimit -v 400000 did not return within 60 s"
    fails=$((fails + 1))
elif [[ $rc -ne 0 ]]; then
    if grep -q "out of memory" "$tmp/log" && [[ $secs -le 10 ]]; then
        echo "ok: weft run under ulimit -v 400000 failed in ${secs}s with: $(grep 'out of memory' "$tmp/log" | head -1)"
    else
        echo "FAIL: weft run under ulimit -v 400000 exited $rc after ${secs}s without an out-of-memory message:"
        cat "$tmp/log"
        fails=$((fails + 1))
    fi
else
    # float32 outputs against PyTorch's: |x - ref| <= 1e-3 + 1e-3 * |ref| everywhere
    bad=$(paste <(od -An -v -f -w4 "$tmp/out.bin") <(od -An -v -f -w4 $models/resnet9.output.bin) |
        awk '{ d = $1 - $2; if (d < 0) d = -d; r = $2 < 0 ? -$2 : $2; if (d > 1e-3 + 1e-3 * r) n++ } END { print n + 0 }')
    n=$(od -An -v -f -w4 "$tmp/out.bin" | wc -l)
    if [[ $n -eq 10 && $bad -eq 0 ]]; then
        echo "ok: weft run under ulimit -v 400000 ran ResNet-9 in ${secs}s, output matches PyTorch's"
    else
        echo "FAIL: weft run under ulimit -v 400000: $n outputs, $bad beyond tolerance of PyTorch's"
        fails=$((fails + 1))
    fi
fi
[[ $fails -eq 0 ]]
