#!/usr/bin/env bash
# weft tune --target cuda without a GPU: the plumbing of GPU tuning on the fake driver
# (tests/cuda/fake_cuda.c, which runs no kernels).
#  - refused clearly: no driver (exit 1, one line "no CUDA driver"), no device, a target that
#    is not llvm/cuda (exit 2), an architecture the device cannot run;
#  - a short tune of a small matmul: every candidate measured in a worker process of its own
#    (one fake cuInit per worker plus the probe's, none in the tuning process), events created
#    and destroyed in pairs, records under the device key "cuda;dev=...;cc=...;drv=...";
#  - the check against the CPU reference: the fake computes nothing, so every new best is
#    "rejected: output differs from the CPU reference" (no record with a time);
#    WEFT_TEST_GPU_CHECK=roundtrip (test builds) lets candidates pass;
#  - a launch that fails, a worker that crashes and one that hangs (FAKECUDA_FAIL/_CRASH/_HANG
#    counted across processes): that candidate is an error record, the tune goes on, and the
#    hang is cut at --timeout; resume and the curve;
#  - a model tuned for the device; weft run --target cuda --db takes this device's records
#    (and not on a device of another name).
# Usage: tune.sh PATH/TO/weft PATH/TO/libfakecuda.so [HOOKS]
#   libfakecuda.so empty: the CUDA target is not built -> skip; HOOKS: ON when weft was built
#   with WEFT_TEST_HOOKS (Debug builds): without them the parts that need candidates to pass
#   the check on the fake are skipped, saying so
set -u
weft=$1
fake=${2:-}
hooks=${3:-ON}
if [[ -z "$fake" ]]; then
    echo "skipped: the CUDA target is not built (NVRTC not found)"
    exit 77
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
key='cuda;dev=Fake CUDA Device;cc=9.0;drv=13000'

expect_line() { # exit status $1, one line on stderr containing $2; the rest is the command
    local want_rc=$1 want=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$? lines
    lines=$(wc -l <"$tmp/err")
    if [[ $rc -eq $want_rc && $lines -eq 1 ]] && grep -q -- "$want" "$tmp/err"; then ok "$(cat "$tmp/err")"
    else
        fail "$* (exit $rc, $lines lines on stderr, wanted exit $want_rc and one line with '$want'):"
        cat "$tmp/err" "$tmp/out"
    fi
}
tune() { "$weft" tune --op matmul --shape 64,64,64 --target cuda "$@"; }
# the database's measurements: target, median, error (tab-separated)
records() { "$weft" db export "$1" | awk -F'\t' '$1 == "M" { print $3 "\t" $6 "\t" $7 }'; }

WEFT_CUDA_DRIVER=/nonexistent/libcuda.so.1 expect_line 1 "weft tune: no CUDA driver (WEFT_CUDA_DRIVER=/nonexistent" \
    tune --db "$tmp/a.db" --trials 2
expect_line 2 "--target expects llvm, cuda or cuda:sm_XX, not 'bogus'" "$weft" tune --op matmul --shape 8,8,8 --db "$tmp/a.db" \
    --target bogus
expect_line 2 "--timeout applies to --target cuda only" "$weft" tune --op matmul --shape 8,8,8 --db "$tmp/a.db" --timeout 3
export WEFT_CUDA_DRIVER=$fake
FAKECUDA_DEVICES=0 expect_line 1 "weft tune: no CUDA device" tune --db "$tmp/a.db" --trials 2
expect_line 2 "cuda:sm_80 cannot run on device 0 (Fake CUDA Device, compute capability 9.0)" \
    "$weft" tune --op matmul --shape 8,8,8 --db "$tmp/a.db" --target cuda:sm_80
[[ ! -e "$tmp/a.db" ]] && ok "no database written by the refused runs" || fail "a refused run wrote $tmp/a.db"

# every new best is checked against the CPU reference: the fake's uncomputed output is caught
log=$tmp/fake.log
FAKECUDA_LOG=$log tune --db "$tmp/r.db" --trials 4 --batch 2 >"$tmp/out" 2>&1 &
pid=$!
wait $pid
rc=$?
n_rej=$(records "$tmp/r.db" | awk -F'\t' -v k="$key" '$1 == k && $2 == 0 && $3 ~ /^rejected: output differs from the CPU reference/' | wc -l)
[[ $rc -eq 0 && $n_rej -eq 4 ]] && ok "4 candidates, each rejected by the CPU reference check" ||
    { fail "check on the fake (exit $rc, $n_rej rejected of 4):"; cat "$tmp/out"; records "$tmp/r.db"; }
inits=$(grep -c '^init ' "$log")
pids=$(grep '^init ' "$log" | sed 's/.*pid=//' | sort -u | wc -l)
[[ $inits -eq 5 && $pids -eq 5 ]] && ! grep -q "^init .*pid=$pid\$" "$log" &&
    ok "the driver was initialised in 5 worker processes (the probe and one per candidate), never in the tuner" ||
    fail "driver initialisations: $inits in $pids processes (tuner pid $pid): $(grep '^init ' "$log")"
[[ $(grep -c '^event create' "$log") -eq 8 && $(grep -c '^event destroy' "$log") -eq 8 ]] &&
    ok "two events per candidate, all destroyed" || fail "events: $(grep -c '^event' "$log") lines"
rm -f "$log"

# input rotation: a 64x64x64 matmul has 48 KiB of params (A, B, C); with a 64 KiB L2 a worker
# allocates ceil(2 x 64 / 48) = 3 argument sets, with a 16 KiB L2 (working set above 2 x L2) one
for l2 in 65536:9 16384:3; do
    FAKECUDA_L2=${l2%:*} FAKECUDA_LOG=$log tune --db "$tmp/l2.db" --trials 1 >"$tmp/out" 2>&1
    n=$(grep -c '^alloc ' "$log")
    [[ $n -eq ${l2#*:} ]] && ok "L2 ${l2%:*} bytes: $n device allocations (3 params x sets)" ||
        fail "L2 ${l2%:*}: $n allocations, wanted ${l2#*:}"
    rm -f "$log" "$tmp/l2.db"
done

if [[ $hooks != ON ]]; then
    echo "skipped: measured records, resume, curve, serving and the fault cases need WEFT_TEST_HOOKS (a Debug build)"
    [[ $fails -eq 0 ]]
    exit
fi

# candidates pass with the round-trip check (test builds): times recorded under the device key
export WEFT_TEST_GPU_CHECK=roundtrip
db=$tmp/t.db
tune --db "$db" --trials 6 --batch 3 --curve "$tmp/curve.csv" >"$tmp/out" 2>&1
rc=$?
n_ok=$(records "$db" | awk -F'\t' -v k="$key" '$1 == k && $2 > 0 && $3 == ""' | wc -l)
if [[ $rc -eq 0 && $n_ok -eq 6 ]] && grep -q "^tuning 1 task(s) on $key; 0 measurement(s)" "$tmp/out"; then
    ok "6 candidates measured, records with times under $key"
else
    fail "round-trip tune (exit $rc, $n_ok good records):"
    cat "$tmp/out"
    records "$db"
fi
[[ $(grep -c '^[0-9]*,[0-9.]*,[0-9.]*$' "$tmp/curve.csv") -ge 1 ]] && ok "the curve has rows" || fail "curve: $(cat "$tmp/curve.csv")"
tune --db "$db" --trials 9 --batch 3 >"$tmp/out" 2>&1
n=$(records "$db" | wc -l)
grep -q "6 measurement(s) already in" "$tmp/out" && [[ $n -eq 9 ]] && ok "resumed: 6 measurements found, 9 in all" ||
    { fail "resume ($n records):"; cat "$tmp/out"; }

# a model: its kernels as compiled for the GPU, tuned; weft run --target cuda then finds the
# records under this device's key
m=tests/data/models/mlp.onnx
"$weft" tune $m --target cuda --db "$tmp/m.db" --trials 4 >"$tmp/out" 2>&1 || { fail "tune $m:"; cat "$tmp/out"; }
"$weft" run $m --input tests/data/models/mlp.input.bin --target cuda --db "$tmp/m.db" >"$tmp/out" 2>&1
grep -q "kernels: [1-9][0-9]* from records for this machine, 0 from the nearest machine, 0 default" "$tmp/out" &&
    ok "weft run --target cuda --db: every kernel from this device's records" || { fail "run with the tuned db:"; cat "$tmp/out"; }
FAKECUDA_NAME="Another Fake" "$weft" run $m --input tests/data/models/mlp.input.bin --target cuda --db "$tmp/m.db" >"$tmp/out" 2>&1
grep -q "0 from records for this machine" "$tmp/out" && ok "another device name: not this machine's records" ||
    { fail "run on another device:"; cat "$tmp/out"; }
unset WEFT_TEST_GPU_CHECK

# a failing launch, a crashing worker, a hanging one: one error record each, the tune goes on.
# Calls are counted across the workers (FAKECUDA_COUNT_FILE): the first launch is the first
# candidate's; each worker loads its module once, so module load 2 is the second candidate's.
faulty() { # $1: env assignment, $2: the error wanted, $3: label
    rm -f "$tmp/count" "$tmp/f.db"
    local t0=$SECONDS
    env WEFT_TEST_GPU_CHECK=roundtrip "$1" FAKECUDA_COUNT_FILE="$tmp/count" "$weft" tune --op matmul --shape 64,64,64 --target cuda --db "$tmp/f.db" \
        --trials 4 --batch 4 --timeout 3 >"$tmp/out" 2>&1
    local rc=$? dt=$((SECONDS - t0))
    local n_err n_ok
    n_err=$(records "$tmp/f.db" | awk -F'\t' -v w="$2" 'index($3, w) == 1' | wc -l)
    n_ok=$(records "$tmp/f.db" | awk -F'\t' '$2 > 0 && $3 == ""' | wc -l)
    if [[ $rc -eq 0 && $n_err -eq 1 && $n_ok -eq 3 ]]; then ok "$3: one error record ('$2'), 3 measured, ${dt}s"
    else
        fail "$3 (exit $rc, $n_err errors, $n_ok measured):"
        cat "$tmp/out"
        records "$tmp/f.db"
    fi
}
faulty FAKECUDA_FAIL=cuLaunchKernel:1 "cuda: cuLaunchKernel (matmul_k0" "failing launch"
faulty FAKECUDA_CRASH=cuModuleLoadData:2 "killed by signal 11" "crashing worker"
faulty FAKECUDA_HANG=cuModuleLoadData:2 "timed out after 3 s" "hanging worker"
[[ $fails -eq 0 ]]
