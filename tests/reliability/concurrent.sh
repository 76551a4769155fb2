#!/usr/bin/env bash
# Concurrent use of one schedule database from several processes:
#   1. three `weft run --db` readers loop while a tuner writes the same database: every read
#      succeeds and computes PyTorch's output (max abs error 1e-4);
#   2. two tuners of the same model on one database at once (the same kernels, so both write
#      the same groups): both finish, no record is lost, the file passes weft db check.
# (tests/cli/tune.sh covers two tuners of different ops.)
# Usage: concurrent.sh PATH/TO/weft PATH/TO/compare_f32
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

reader() { # id db stop-file: runs until the stop file appears; prints runs and failures
    local id=$1 db=$2 stop=$3 runs=0 bad=0
    while [[ ! -f $stop ]]; do
        if "$weft" run $M/mlp.onnx --input $M/mlp.input.bin --db "$db" --threads 1 --repeat 1 \
            --output "$tmp/r$id.bin" > /dev/null 2> "$tmp/r$id.err" &&
            "$compare" "$tmp/r$id.bin" $M/mlp.output.bin 1e-4 > /dev/null; then
            runs=$((runs + 1))
        else
            bad=$((bad + 1))
            sed 's/^/  reader: /' "$tmp/r$id.err" >&2
        fi
    done
    echo "$runs $bad"
}

# ---- 1. readers while a tuner writes ----
"$weft" tune $M/mlp.onnx --db "$tmp/c.db" --trials 2 --threads 1 --seed 1 > /dev/null 2>&1 # the file exists
for id in 1 2 3; do reader $id "$tmp/c.db" "$tmp/stop" > "$tmp/reader$id" & done
"$weft" tune $M/mlp.onnx --db "$tmp/c.db" --trials 40 --threads 1 --seed 2 > "$tmp/w.log" 2>&1
wrc=$?
touch "$tmp/stop"
wait
check "the tuner finishes while read" test $wrc -eq 0
for id in 1 2 3; do
    read -r runs bad < "$tmp/reader$id"
    check "reader $id: $runs runs during the tune, $bad failed" test "$runs" -ge 1 -a "$bad" -eq 0
done
check "40 records after the tune" test "$(total "$tmp/c.db")" -eq 40
check "integrity after readers and a writer" sh -c "'$weft' db check '$tmp/c.db' | grep -qx ok"

# ---- 2. two tuners of the same model on one database ----
"$weft" tune $M/mlp.onnx --db "$tmp/t.db" --trials 16 --threads 1 --seed 3 > "$tmp/t1.log" 2>&1 &
p1=$!
"$weft" tune $M/mlp.onnx --db "$tmp/t.db" --trials 16 --threads 1 --seed 4 > "$tmp/t2.log" 2>&1 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
check "both tuners of one model succeed" test $r1 -eq 0 -a $r2 -eq 0
n=$(total "$tmp/t.db")
# each counts the records present when it starts toward its budget of 16: 16..32 in all
check "16..32 records from two tuners ($n)" test "$n" -ge 16 -a "$n" -le 32
check "integrity after two tuners" sh -c "'$weft' db check '$tmp/t.db' | grep -qx ok"
"$weft" run $M/mlp.onnx --input $M/mlp.input.bin --db "$tmp/t.db" --threads 1 --repeat 1 --output "$tmp/t.bin" > /dev/null 2>&1
check "their best records compute the reference" "$compare" "$tmp/t.bin" $M/mlp.output.bin 1e-4

if [[ $fails -gt 0 ]]; then
    echo "concurrent.sh: $fails check(s) failed"
    exit 1
fi
echo "concurrent.sh: all checks passed"
