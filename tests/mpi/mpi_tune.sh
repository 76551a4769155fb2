#!/usr/bin/env bash
# mpirun -n N weft tune end to end (Open MPI on one machine, every rank measuring with 1 thread):
#   - 3 ranks fill one database that `weft db check` accepts and `weft run --db` uses (its
#     output matches PyTorch's within 1e-4 relative to max |output|);
#   - a rerun with 2 ranks resumes from the same database;
#   - a rank on "another machine" (WEFT_CPU=haswell gives it another machine key) is refused,
#     named, and the others tune;
#   - a rank killed with kill -9 mid-run: under mpirun --enable-recovery the run goes on with the
#     other rank and says which one was lost; under plain mpirun the job ends, rank 0 says so,
#     and in both cases the database is valid and keeps what was measured;
#   - a hung rank (SIGSTOP) is given up after --rank-timeout and rank 0 ends the job saying why.
# Usage: mpi_tune.sh PATH/TO/weft WITH_MPI(ON|OFF) [SANITIZE] [PATH/TO/compare_f32]
# Exit 77 (skipped, with the reason) when weft was built without MPI or mpirun is missing.
set -u
weft=$1 with_mpi=${2:-OFF} sanitize=${3:-} compare=${4:-}
if [[ "$with_mpi" != ON ]]; then
    echo "skipped: this build has no weft-mpi (CMake found no MPI; install libopenmpi-dev openmpi-bin)"
    exit 77
fi
if ! command -v mpirun > /dev/null; then
    echo "skipped: mpirun not found (install openmpi-bin)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # description, command...
    local what=$1
    shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
total() { "$weft" db ls "$1" | awk 'NR > 1 { t += $3 } END { print t + 0 }'; }
# containers often forbid the cross-memory attach Open MPI's shared-memory transport tries
export OMPI_MCA_btl_vader_single_copy_mechanism=none
if [[ -n "$sanitize" ]]; then
    # Open MPI's own allocations live until exit; leaks in weft's code still fail the tests
    # that run without MPI
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fi
mpirun=(mpirun --oversubscribe --allow-run-as-root)
m=tests/data/models

# 3 ranks: rank 0 searches, ranks 1 and 2 measure, one database
"${mpirun[@]}" -n 3 "$weft" tune $m/mlp.onnx --db "$tmp/a.db" --trials 24 --threads 1 --curve "$tmp/curve.csv" > "$tmp/out1" 2>&1
rc=$?
check "3-rank tune exits 0" test $rc -eq 0
check "ranks 1 and 2 measure" grep -q "2 rank(s) measure: 1 (host .*) 2 (host" "$tmp/out1"
check "both ranks measured candidates" test "$(grep -c "^mpi: rank [12] (host .*candidate(s)" "$tmp/out1")" -eq 2
check "24 measurements in one database" test "$(total "$tmp/a.db")" = 24
check "db check accepts it" sh -c "'$weft' db check '$tmp/a.db' | grep -qx ok"
check "progress and curve as on one machine" sh -c "grep -q 'total 24 trials' '$tmp/out1' && test \$(wc -l < '$tmp/curve.csv') -ge 2"
out=$("$weft" run $m/mlp.onnx --input $m/mlp.input.bin --db "$tmp/a.db" --threads 1 --output "$tmp/y.bin" 2>&1)
check "weft run --db uses the records" grep -q "kernels: [1-9][0-9]* from records for this machine" <<< "$out"
if [[ -n "$compare" ]]; then
    check "tuned output matches PyTorch" "$compare" "$tmp/y.bin" $m/mlp.output.bin 1e-4
fi
[[ $rc -eq 0 ]] || sed 's/^/  | /' "$tmp/out1"

# resume with another number of ranks
"${mpirun[@]}" -n 2 "$weft" tune $m/mlp.onnx --db "$tmp/a.db" --trials 32 --threads 1 > "$tmp/out2" 2>&1
check "2-rank rerun resumes (24 already there)" grep -q "24 measurement(s) already" "$tmp/out2"
check "2-rank rerun reaches 32" test "$(total "$tmp/a.db")" = 32

# a rank with another machine key is refused, by number, and the others tune
"${mpirun[@]}" -n 2 "$weft" tune --op matmul --shape 64,64,32 --db "$tmp/b.db" --trials 8 --threads 1 : \
    -n 1 -x WEFT_CPU=haswell "$weft" tune --op matmul --shape 64,64,32 --db "$tmp/b.db" --trials 8 --threads 1 \
    > "$tmp/out3" 2>&1
check "the haswell rank is refused by number" grep -q "rank 2 (host .*) refused: is another machine: key llvm;cpu=haswell" "$tmp/out3"
check "the other rank tunes" test "$(total "$tmp/b.db")" = 8
check "no record under the refused key" sh -c "! '$weft' db ls '$tmp/b.db' | grep -q haswell"

# pid of a measuring rank, from rank 0's first line; waits for the first progress line
rank_pid() { # outfile rank
    local i
    for i in $(seq 1 300); do
        grep -q "^\[ *1/1\]" "$1" 2> /dev/null && break
        sleep 0.1
    done
    grep -o "$2 (host [^,]*, pid [0-9]*)" "$1" | head -1 | grep -o "pid [0-9]*" | awk '{print $2}'
}

# kill -9 of a measuring rank under mpirun --enable-recovery: the run goes on with the other
"${mpirun[@]}" --enable-recovery -n 3 "$weft" tune --op matmul --shape 96,96,64 --db "$tmp/k.db" --time 18 --threads 1 \
    --rank-timeout 6 > "$tmp/out4" 2>&1 &
job=$!
pid=$(rank_pid "$tmp/out4" 2)
at_kill=$(total "$tmp/k.db")
[[ -n "$pid" ]] && kill -9 "$pid"
wait $job
check "killed rank found (pid ${pid:-none})" test -n "$pid"
check "the lost rank is named" grep -q "rank 2 (host .*, pid $pid) sent no result for 6 s" "$tmp/out4"
check "the run ends its job saying so" grep -q "ending the MPI job: rank(s) 2 (host .*) were lost" "$tmp/out4"
check "database valid after the kill" sh -c "'$weft' db check '$tmp/k.db' | grep -qx ok"
after=$(total "$tmp/k.db")
check "tuning went on after the kill ($at_kill -> $after)" test "$after" -gt "$((at_kill + 8))"
check "rank 1 kept measuring" grep -q "^mpi: rank 1 (host" "$tmp/out4"

# kill -9 under plain mpirun: the job ends; rank 0 says the database holds what was committed
"${mpirun[@]}" -n 3 "$weft" tune --op matmul --shape 96,96,64 --db "$tmp/p.db" --time 60 --threads 1 > "$tmp/out5" 2>&1 &
job=$!
pid=$(rank_pid "$tmp/out5" 1)
[[ -n "$pid" ]] && kill -9 "$pid"
wait $job
rc=$?
check "plain mpirun ends the job (exit $rc)" test $rc -ne 0
check "mpirun names the killed rank" grep -q "rank 1 .*exited on signal 9" "$tmp/out5"
check "rank 0 says it was stopped and the database holds the measurements" grep -q "stopped by a signal.*holds every measurement" "$tmp/out5"
check "database valid after the job ended" sh -c "'$weft' db check '$tmp/p.db' | grep -qx ok"
check "the measurements before the kill are kept" test "$(total "$tmp/p.db")" -gt 0

# a hung rank (SIGSTOP) under plain mpirun: rank 0 gives it up after --rank-timeout, goes on with
# the other, and ends the job (exit 3), which kills the hung rank
"${mpirun[@]}" -n 3 "$weft" tune --op matmul --shape 96,96,64 --db "$tmp/h.db" --time 12 --threads 1 --rank-timeout 6 \
    > "$tmp/out6" 2>&1 &
job=$!
pid=$(rank_pid "$tmp/out6" 2)
[[ -n "$pid" ]] && kill -STOP "$pid"
wait $job
rc=$?
# (rank 0 aborts with 3; mpirun usually exits with that, but Open MPI 4.1's mpirun has been seen
# to crash while it kills a stopped process)
check "hung rank: the job ends with a nonzero status (got $rc)" test $rc -ne 0
check "the hung rank is named" grep -q "rank 2 (host .*, pid $pid) sent no result for 6 s (dead or hung)" "$tmp/out6"
check "rank 0 ends the job saying why" grep -q "ending the MPI job: rank(s) 2 (host .*) were lost" "$tmp/out6"
check "database valid after the hang" sh -c "'$weft' db check '$tmp/h.db' | grep -qx ok"
[[ -n "$pid" ]] && kill -9 "$pid" 2> /dev/null

# weft itself does not link MPI (weft-mpi does)
check "weft links no libmpi" sh -c "! ldd '$weft' | grep -q libmpi"
check "weft-mpi links libmpi" sh -c "ldd '$(dirname "$weft")/weft-mpi' | grep -q libmpi"

# --rank-timeout without mpirun is refused
check "--rank-timeout outside mpirun is an error" sh -c "! '$weft' tune --op matmul --shape 8,8,8 --db '$tmp/x.db' --rank-timeout 5 2> '$tmp/err' && grep -q 'applies under mpirun only' '$tmp/err'"

echo "mpi_tune: $fails failure(s)"
exit $((fails > 0))
