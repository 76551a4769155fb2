#!/usr/bin/env bash
# Measurements per second of `mpirun -n 2` (one measuring rank) against `mpirun -n 3` (two),
# the same op, seed, batch and trial budget, a fresh database each run, runs interleaved; prints
# every run and the medians. Not a ctest test (it wants an otherwise idle machine).
# Usage: tests/mpi/throughput.sh PATH/TO/weft [REPEATS=3] [OP=matmul] [SHAPE=256,256,256] [TRIALS=64]
set -u
weft=$1 reps=${2:-3} op=${3:-matmul} shape=${4:-256,256,256} trials=${5:-64}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_MCA_btl_vader_single_copy_mechanism=none
declare -A rates
for r in $(seq 1 "$reps"); do
    for n in 2 3; do
        rm -f "$tmp"/t.db*
        mpirun --oversubscribe --allow-run-as-root -n $n "$weft" tune --op "$op" --shape "$shape" --db "$tmp/t.db" \
            --trials "$trials" --batch 16 --threads 1 --seed 1 > "$tmp/out" 2>&1
        line=$(grep "^mpi: .* per second" "$tmp/out")
        rate=$(sed -n 's/.*(\([0-9.]*\) per second).*/\1/p' <<< "$line")
        echo "run $r, $((n - 1)) measuring rank(s): $line"
        grep "^mpi: rank\|^mpi: messages\|^mpi: the measuring" "$tmp/out" | sed 's/^/    /'
        rates[$n]="${rates[$n]:-} $rate"
    done
done
median() { tr ' ' '\n' <<< "$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m1=$(median "${rates[2]}") m2=$(median "${rates[3]}")
echo "median measurements/s: 1 measuring rank $m1, 2 measuring ranks $m2, ratio $(awk -v a="$m2" -v b="$m1" 'BEGIN { printf "%.2f", a / b }')"
