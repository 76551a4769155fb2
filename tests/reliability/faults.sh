#!/usr/bin/env bash
# Faults injected into a full `weft tune` of the MLP, and kill -9 at random moments.
#   1. WEFT_TEST_FAULTS (test builds: WEFT_TEST_HOOKS) makes candidates segfault, spin forever,
#      store far out of bounds or compute wrong values. The tuner must finish (exit 0), record
#      every crash and hang as an error, serve no wrong schedule (weft run --db computes
#      PyTorch's output), and leave a database that passes weft db check.
#   2. The tuner is killed with SIGKILL at 10 random moments (startup, measuring, writing); after
#      each the database passes weft db check and holds at least the records it held before;
#      then a run resumes from all of them and reaches its budget.
# Usage: faults.sh PATH/TO/weft PATH/TO/compare_f32
set -u
weft=$1
compare=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
M=tests/data/models
fails=0
check() { # description, command...
    local what=$1
    shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
total() { "$weft" db ls "$1" | awk 'NR > 1 { t += $3 } END { print t + 0 }'; }
errors() { "$weft" db export "$1" | awk -F'\t' '$1 == "M" && $7 != "" { n++ } END { print n + 0 }'; }
served_right() { # db: weft run with this machine's best records computes the reference output
    "$weft" run $M/mlp.onnx --input $M/mlp.input.bin --db "$1" --threads 1 --repeat 1 --output "$tmp/y.bin" \
        > /dev/null 2> "$tmp/run.err" &&
        grep -qE '[1-9][0-9]* from records for this machine' "$tmp/run.err" &&
        "$compare" "$tmp/y.bin" $M/mlp.output.bin 1e-4 > /dev/null
}

# ---- 1. injected faults ----
WEFT_TEST_FAULTS=0.4:3:1 "$weft" tune $M/mlp.onnx --db "$tmp/f.db" --trials 30 --threads 1 --seed 2 > "$tmp/f.log" 2>&1
rc=$?
if ! grep -q 'test fault:' "$tmp/f.log"; then
    echo "SKIP: this weft has no test hooks (configure with -DWEFT_TEST_HOOKS=ON)"
    exit 77
fi
crashes=$(grep -cE 'test fault: (segv|spin|oob)' "$tmp/f.log")
echo "injected: $(grep 'test fault:' "$tmp/f.log" | sort | uniq -c | tr -s ' \n' ' ')"
check "tune with injected faults exits 0" test $rc -eq 0
check "every measurement recorded" test "$(total "$tmp/f.db")" -eq 30
check "each of the $crashes crashes and hangs is a recorded error" test "$(errors "$tmp/f.db")" -ge "$crashes"
check "integrity after faults" sh -c "'$weft' db check '$tmp/f.db' | grep -qx ok"
check "no wrong schedule is served" served_right "$tmp/f.db"

# ---- 2. kill -9 at random moments ----
RANDOM=${WEFT_TEST_SEED:-4242}
prev=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    "$weft" tune $M/mlp.onnx --db "$tmp/k.db" --trials 400 --threads 1 --seed $i > "$tmp/k$i.log" 2>&1 &
    pid=$!
    ms=$((150 + RANDOM % 2500))
    sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
    kill -9 $pid 2> /dev/null
    wait $pid 2> /dev/null
    [[ -f "$tmp/k.db" ]] || continue # killed before the database was created
    ok=$("$weft" db check "$tmp/k.db" 2>&1)
    now=$(total "$tmp/k.db")
    check "kill -9 #$i after ${ms} ms: database intact ($now records)" test "$ok" = ok -a "$now" -ge "$prev"
    prev=$now
done
"$weft" tune $M/mlp.onnx --db "$tmp/k.db" --trials $((prev + 6)) --threads 1 --seed 11 > "$tmp/resume.log" 2>&1
check "resume after the kills exits 0" test $? -eq 0
check "resume picks up the $prev records" grep -q "$prev measurement(s) already" "$tmp/resume.log"
check "resumed run reaches its budget" test "$(total "$tmp/k.db")" -ge $((prev + 6))
check "integrity after resume" sh -c "'$weft' db check '$tmp/k.db' | grep -qx ok"
check "the resumed database serves right schedules" served_right "$tmp/k.db"

if [[ $fails -gt 0 ]]; then
    echo "faults.sh: $fails check(s) failed"
    exit 1
fi
echo "faults.sh: all checks passed"
