#!/usr/bin/env bash
# The weft command's argument rules, one case per rule and subcommand: unknown options, missing
# values, numbers that do not parse or lie out of range (exit 2, one line naming the option);
# --help on stdout with exit 0; weft help; db prune refusing to delete everything; a model with
# two inputs and two outputs (every input read, every output written and checked); honest
# reports of tuned schedules.
# Usage: args.sh PATH/TO/weft PATH/TO/make_two_io
set -u
weft=$1
make_two_io=$2
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
models=tests/data/models

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# expect STATUS SUBSTRING -- ARGS...: weft ARGS exits STATUS and stdout+stderr contains SUBSTRING.
expect() {
    local want=$1 needle=$2
    shift 3
    local out rc
    out=$("$weft" "$@" 2>&1)
    rc=$?
    if [[ $rc -ne $want || "$out" != *"$needle"* ]]; then
        fail "weft $* -> exit $rc (want $want), output:"
        echo "$out" | head -20
        echo "(wanted to see: $needle)"
    else
        echo "ok: weft $*"
    fi
}

# usage_error SUBSTRING -- ARGS...: exit 2, nothing on stdout, exactly one line on stderr that
# contains SUBSTRING.
usage_error() {
    local needle=$1
    shift 2
    local rc
    "$weft" "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    if [[ $rc -ne 2 || -s "$tmp/out" || $(wc -l < "$tmp/err") -ne 1 ]] || ! grep -qF -- "$needle" "$tmp/err"; then
        fail "weft $* -> exit $rc (want 2 and one line naming '$needle'); stdout/stderr:"
        head -5 "$tmp/out" "$tmp/err"
    else
        echo "ok: weft $* -> $(cat "$tmp/err")"
    fi
}

# help_ok NEEDLE -- ARGS...: exit 0, the help (containing NEEDLE) on stdout, nothing on stderr.
help_ok() {
    local needle=$1
    shift 2
    local rc
    "$weft" "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    if [[ $rc -ne 0 || -s "$tmp/err" ]] || ! grep -qF -- "$needle" "$tmp/out"; then
        fail "weft $* -> exit $rc, wanted help '$needle' on stdout and an empty stderr:"
        head -5 "$tmp/out" "$tmp/err"
    else
        echo "ok: weft $* (help)"
    fi
}

m=/nonexistent/model.onnx # parsing comes first: a bad option never reaches the model

# ---- --help on every subcommand, weft help ---------------------------------------------------
help_ok "usage: weft <command>" -- --help
help_ok "usage: weft <command>" -- help
help_ok "usage: weft run MODEL.onnx" -- help run
help_ok "--input [NAME=]FILE" -- help run
help_ok "usage: weft db prune" -- help db prune
help_ok "usage: weft bench op" -- help bench op
help_ok "usage: weft bench model" -- help bench
help_ok "usage: weft show MODEL.onnx" -- help show
help_ok "usage: weft run MODEL.onnx" -- run --help
help_ok "usage: weft run MODEL.onnx" -- run "$m" --input x.bin --help
help_ok "usage: weft show OP" -- show --help
help_ok "usage: weft show OP" -- show matmul --help
help_ok "usage: weft show MODEL.onnx" -- show "$m" --help
help_ok "usage: weft bench op" -- bench op --help
help_ok "usage: weft bench op" -- bench op matmul -h
help_ok "usage: weft bench model" -- bench model --help
help_ok "usage: weft bench op" -- bench --help
help_ok "usage: weft tune" -- tune --help
help_ok "usage: weft db ls" -- db --help
for sub in ls check export import prune best; do
    help_ok "usage: weft db $sub" -- db $sub --help
done
help_ok "usage: weft db ls" -- db ls "$tmp/never-created.db" --help
[[ -e "$tmp/never-created.db" ]] && fail "db ls --help created the database"
help_ok "e.g. --cpu haswell" -- help run
for cmd in "show OP" "show MODEL" run "bench op" "bench model" tune "db best"; do
    # shellcheck disable=SC2086
    help_ok "--cpu NAME" -- help $cmd
done
expect 2 "no command 'bogus'" -- help bogus
expect 2 "unknown command 'bogus'" -- bogus
expect 2 "expected 'op' or 'model'" -- bench
expect 2 "expected ls, check, export, import, prune or best" -- db frob x.db

# ---- unknown options, missing values, extra arguments ----------------------------------------
usage_error "unknown option '--bogus'" -- run "$m" --input x.bin --bogus
usage_error "unknown option '--bogus'" -- show matmul --shape 4,4,4 --bogus
usage_error "unknown option '--bogus'" -- show "$m" --bogus
usage_error "unknown option '--bogus'" -- bench op matmul --shape 4,4,4 --bogus
usage_error "unknown option '--bogus'" -- bench model "$m" --bogus
usage_error "unknown option '--bogus'" -- tune "$m" --db x.db --bogus
usage_error "unknown option '--keep'" -- db ls x.db --keep 3
usage_error "unknown option '--bogus'" -- db prune x.db --bogus
usage_error "unknown option '--bogus'" -- db best x.db matmul --shape 4,4,4 --bogus
usage_error "unknown option '-x'" -- run "$m" --input x.bin -x
usage_error "--output needs a value" -- run "$m" --input x.bin --output
usage_error "--input needs a value" -- run "$m" --input
usage_error "--input needs a value" -- run "$m" --input --threads 2
usage_error "--db needs a value" -- run "$m" --input x.bin --db
usage_error "--target needs a value" -- run "$m" --input x.bin --target
usage_error "--cpu needs a value" -- run "$m" --input x.bin --cpu
usage_error "--cpu needs a non-empty value" -- run "$m" --input x.bin --cpu=
usage_error "--output needs a non-empty value" -- run "$m" --input x.bin --output ""
usage_error "--input needs a non-empty value" -- run "$m" --input=
usage_error "--db needs a non-empty value" -- bench model "$m" --db ""
usage_error "--shape needs a value" -- show matmul --shape
usage_error "--steps needs a value" -- show matmul --shape 4,4,4 --steps
usage_error "--print needs a value" -- show matmul --shape 4,4,4 --print
usage_error "--schedule needs a value" -- show matmul --shape 4,4,4 --schedule
usage_error "--db needs a value" -- bench op matmul --shape 4,4,4 --db
usage_error "--db needs a value" -- bench model "$m" --db
usage_error "--curve needs a value" -- tune "$m" --db x.db --curve
usage_error "--db needs a value" -- tune "$m" --db
usage_error "--keep needs a value" -- db prune x.db --keep
usage_error "--shape needs a value" -- db best x.db matmul --shape
usage_error "--csv takes no value" -- bench op matmul --shape 4,4,4 --csv=yes
usage_error "--threads given more than once" -- run "$m" --input x.bin --threads 1 --threads 2
usage_error "unexpected argument 'extra'" -- run "$m" extra --input x.bin
usage_error "unexpected argument 'extra'" -- db ls x.db extra
usage_error "missing arguments" -- run
usage_error "missing arguments" -- db import x.db
usage_error "missing arguments" -- db best x.db
usage_error "--input [NAME=]FILE is required" -- run "$m"
usage_error "--shape S is required" -- show matmul
usage_error "--shape S is required" -- bench op matmul
usage_error "--shape S is required" -- db best x.db matmul
usage_error "--shape expects a comma-separated list" -- show matmul --shape 4,,4
usage_error "--shape expects a comma-separated list" -- show matmul --shape 4,4,
usage_error "--shape expects a comma-separated list" -- bench op matmul --shape 4x4x4
usage_error "--db DB is required" -- tune "$m"
usage_error "give a model (MODEL.onnx) or --op OP --shape S" -- tune --db x.db
usage_error "give a model or --op, not both" -- tune "$m" --op matmul --shape 4,4,4 --db x.db
usage_error "--shape applies to --op only" -- tune "$m" --shape 4,4,4 --db x.db
usage_error "--print: unknown part 'bogus'" -- show matmul --shape 4,4,4 --print te,bogus
usage_error "--target expects llvm, interp, cuda, cuda:sm_XX, hip or hip:gfxNNN, got 'tpu'" -- show matmul --shape 4,4,4 --target tpu
usage_error "--target expects llvm, interp, cuda, cuda:sm_XX, hip or hip:gfxNNN, got 'tpu'" -- run "$m" --input x.bin --target tpu
usage_error "--target expects llvm, interp, cuda, cuda:sm_XX, hip or hip:gfxNNN, got 'tpu'" -- show "$m" --target tpu
# --target cuda without a driver: one clear line, nonzero exit, before the model is even read
# (or, where the CUDA target is not built, one line saying so).
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
    "$weft" run "$m" --input x.bin --target cuda > "$tmp/out" 2> "$tmp/err"
    rc=$?
    if [[ $rc -eq 0 || -s "$tmp/out" || $(wc -l < "$tmp/err") -ne 1 ]] ||
        ! grep -qE "no CUDA driver|target 'cuda' is not available" "$tmp/err"; then
        fail "weft run ... --target cuda without a driver -> exit $rc:"
        head -5 "$tmp/out" "$tmp/err"
    else
        echo "ok: weft run ... --target cuda -> $(cat "$tmp/err")"
    fi
fi
# --target hip without an AMD GPU (or without ROCm): one clear line, nonzero exit; an architecture
# ROCm 5.2's hiprtc does not know is a usage error naming it (hiprtc would abort the process).
if ! ls /dev/kfd >/dev/null 2>&1; then
    "$weft" run "$m" --input x.bin --target hip > "$tmp/out" 2> "$tmp/err"
    rc=$?
    if [[ $rc -eq 0 || -s "$tmp/out" || $(wc -l < "$tmp/err") -ne 1 ]] ||
        ! grep -qE "weft run: (no HIP device|no HIP runtime)|target 'hip' is not available" "$tmp/err"; then
        fail "weft run ... --target hip without a device -> exit $rc:"
        head -5 "$tmp/out" "$tmp/err"
    else
        echo "ok: weft run ... --target hip -> $(cat "$tmp/err")"
    fi
fi
if "$weft" show relu --shape 8 --target hip:gfx90a --print hip > /dev/null 2>&1; then
    usage_error "--target hip:gfx1234: hip: unknown GPU architecture 'gfx1234'" -- show relu --shape 8 --target hip:gfx1234
    expect 0 "code object for gfx1030: " -- show relu --shape 8 --target hip:gfx1030 --print hsaco
    # without ROCm (the library made unloadable): one line saying so, exit 1
    WEFT_HIP_LIB=/nonexistent/libamdhip64.so.5 "$weft" run "$m" --input x.bin --target hip:gfx90a > "$tmp/out" 2> "$tmp/err"
    rc=$?
    if [[ $rc -ne 1 || -s "$tmp/out" || $(wc -l < "$tmp/err") -ne 1 ]] || ! grep -q "weft run: no HIP runtime" "$tmp/err"; then
        fail "weft run ... --target hip without libamdhip64 -> exit $rc:"
        head -5 "$tmp/out" "$tmp/err"
    else
        echo "ok: weft run ... --target hip (no ROCm) -> $(cat "$tmp/err")"
    fi
    expect 0 'extern "C" __global__ void __launch_bounds__(8) relu_k0(' -- show relu --shape 8 --target hip:gfx90a --print hip
fi
usage_error "--schedule expects naive, default, manual or random:SEED, got 'random:x'" -- show matmul --shape 4,4,4 --schedule random:x

# ---- numbers: every numeric option of every subcommand ---------------------------------------
# bad_numbers RANGE_TEXT OPTION "VALUES" -- ARGS...: each value is refused, naming the option.
bad_numbers() {
    local range=$1 opt=$2 values=$3
    shift 4
    for v in $values; do
        usage_error "$opt expects $range, got" -- "$@" "$opt" "$v"
    done
    usage_error "$opt expects $range, got ''" -- "$@" "$opt="
}
threads_bad="abc 1x 0 -1 257 1000 99999999999999999999 1.5"
bad_numbers "an integer in 1..256" --threads "$threads_bad" -- run "$m" --input x.bin
bad_numbers "an integer in 1..1000000" --repeat "abc 1x 0 -5 1000001 2.0" -- run "$m" --input x.bin
bad_numbers "an integer in 1..256" --threads "$threads_bad" -- show "$m"
bad_numbers "an integer in 1..256" --threads "$threads_bad" -- bench op matmul --shape 4,4,4
bad_numbers "a number in 0..3600" --min-time "abc 1x -1 3601 nan inf" -- bench op matmul --shape 4,4,4
bad_numbers "an integer in 1..256" --threads "$threads_bad" -- bench model "$m"
bad_numbers "an integer in 1..1000000" --repeat "abc 1x 0 -1 1000001" -- bench model "$m"
bad_numbers "an integer in 1..100000000" --trials "abc 1x 0 -1 100000001" -- tune "$m" --db x.db
bad_numbers "a number > 0, <= 604800" --time "abc 1x 0 -3 604801 inf" -- tune "$m" --db x.db
bad_numbers "an integer in 1..256" --threads "$threads_bad" -- tune "$m" --db x.db
bad_numbers "an integer in 0..4294967295" --seed "abc 1x -1 4294967296 1.5" -- tune "$m" --db x.db
bad_numbers "an integer in 0..1000000000" --keep "abc 1x -1 1.5 1000000001" -- db prune x.db
bad_numbers "an integer in 1..256" --threads "$threads_bad" -- db best x.db matmul --shape 4,4,4
# accepted spellings: --name=value, and the range's ends
expect 0 "matmul,4x4x4,naive,1," -- bench op matmul --shape=4,4,4 --threads=1 --min-time=0 --csv
expect 0 "matmul,4x4x4,naive,256," -- bench op matmul --shape 4,4,4 --threads 256 --min-time 0 --csv

# ---- --cpu NAME sets WEFT_CPU before any target is created ------------------------------------
expect 0 "on llvm;cpu=haswell;" -- db best $models/tuned.db matmul --shape 4,4,4 --threads 1 --cpu haswell
expect 1 "unknown CPU 'bogus'" -- show matmul --shape 4,4,4 --print asm --cpu bogus
if "$weft" show matmul --shape 64,64,64 --schedule default --print asm 2>/dev/null | grep -q zmm; then
    "$weft" show matmul --shape 64,64,64 --schedule default --print asm --cpu haswell > "$tmp/hsw.s" 2>&1 &&
        ! grep -q zmm "$tmp/hsw.s" || fail "show --cpu haswell: AVX2 code without zmm registers"
fi
expect 0 "predicted class: 5" -- run $models/resnet9.onnx --input $models/resnet9.input.bin --repeat 1 --cpu haswell
expect 0 "matmul,8x8x8,default,1," -- bench op matmul --shape 8,8,8 --threads 1 --min-time 0 --csv --cpu haswell
expect 0 "tuning 1 task(s) on llvm;cpu=haswell;" -- tune --op matmul --shape 16,16,16 --db "$tmp/hsw.db" --trials 2 --threads 1 --cpu haswell

# ---- db prune refuses what would delete every measurement ------------------------------------
# a hand-written export: one matmul workload, one target, two good measurements and an error
T=$'\t'
key="llvm;cpu=test;feat=0000000000000000;cores=2;threads=1"
{
    echo "W${T}00000000000000aa${T}func matmul(A, B) -> (C)\\nplaceholder A: float32[4, 4]${T}A[4,4] B[4,4] -> C[4,4]${T}128"
    echo "T${T}$key${T}llvm${T}test cpu${T}avx2${T}2"
    echo "M${T}00000000000000aa${T}$key${T}split C i 2${T}0.001 0.001${T}0.001${T}${T}1700000000${T}0.1"
    echo "M${T}00000000000000aa${T}$key${T}split C i 4${T}0.002 0.002${T}0.002${T}${T}1700000001${T}0.1"
    echo "M${T}00000000000000aa${T}$key${T}split C j 4${T}${T}0${T}crashed${T}1700000002${T}0.1"
} > "$tmp/records.txt"
"$weft" db import "$tmp/p.db" "$tmp/records.txt" > /dev/null || fail "importing hand-written records"
rows() { "$weft" db export "$1" | grep -c '^M'; }
[[ $(rows "$tmp/p.db") == 3 ]] || fail "3 records imported (got $(rows "$tmp/p.db"))"
expect 0 "matmul" -- db ls "$tmp/p.db"
expect 0 "A[4,4] B[4,4] -> C[4,4]" -- db ls "$tmp/p.db"
"$weft" db ls "$tmp/p.db" | awk 'NR == 2 && $1 == "matmul" && $3 == 3 && $4 == 2 { ok = 1 } END { exit !ok }' ||
    fail "db ls: op, target, total, ok columns"
usage_error "--keep 0 would delete all 3 measurement(s)" -- db prune "$tmp/p.db" --keep 0
[[ $(rows "$tmp/p.db") == 3 ]] || fail "refused prune --keep 0 kept the records"
usage_error "--keep expects an integer in 0..1000000000, got 'abc'" -- db prune "$tmp/p.db" --keep abc
[[ $(rows "$tmp/p.db") == 3 ]] || fail "prune --keep abc kept the records"
expect 0 "deleted 2 measurement(s), kept 1" -- db prune "$tmp/p.db"
[[ $(rows "$tmp/p.db") == 1 ]] || fail "prune keeps the best record"
expect 0 "split C i 2" -- db export "$tmp/p.db"
expect 0 "deleted 1 measurement(s), kept 0" -- db prune "$tmp/p.db" --keep 0 --force
[[ $(rows "$tmp/p.db") == 0 ]] || fail "prune --keep 0 --force deletes everything"
# errors only: even --keep 1 would delete everything
grep -v 'split C i' "$tmp/records.txt" > "$tmp/errors.txt"
"$weft" db import "$tmp/e.db" "$tmp/errors.txt" > /dev/null || fail "importing error records"
usage_error "all 1 measurement(s) of $tmp/e.db are errors" -- db prune "$tmp/e.db" --keep 1
[[ $(rows "$tmp/e.db") == 1 ]] || fail "refused prune of an errors-only database kept the record"

# ---- a model with two inputs and two outputs -------------------------------------------------
"$make_two_io" "$tmp" || fail "make_two_io"
two="$tmp/two_io.onnx"
expect 0 "output 'diff' (float32 [2, 3], 24 bytes)" -- run "$two" --input a="$tmp/a.bin" --input b="$tmp/b.bin" --output "$tmp/outdir/" --repeat 2
cmp -s "$tmp/outdir/sum.bin" "$tmp/sum.expected.bin" || fail "two_io: output sum (DIR/) differs from a + b"
cmp -s "$tmp/outdir/diff.bin" "$tmp/diff.expected.bin" || fail "two_io: output diff (DIR/) differs from a - b"
expect 0 "-> $tmp/d.bin" -- run "$two" --input b="$tmp/b.bin" --input a="$tmp/a.bin" --output diff="$tmp/d.bin" --output sum="$tmp/s.bin" --repeat 1
cmp -s "$tmp/s.bin" "$tmp/sum.expected.bin" || fail "two_io: output sum (NAME=FILE) differs from a + b"
cmp -s "$tmp/d.bin" "$tmp/diff.expected.bin" || fail "two_io: output diff (NAME=FILE) differs from a - b"
"$weft" run "$two" --input a="$tmp/a.bin" --input b="$tmp/b.bin" --repeat 1 > "$tmp/out.txt" 2>&1
grep -q "predicted class" "$tmp/out.txt" && fail "two_io: 'predicted class' printed for a model with two outputs"
usage_error "missing --input for input 'b' (float32 [1, 3], 12 bytes)" -- run "$two" --input a="$tmp/a.bin"
usage_error "the model has 2 inputs, give each as --input NAME=FILE" -- run "$two" --input "$tmp/a.bin"
usage_error "the model has no input named 'c'" -- run "$two" --input a="$tmp/a.bin" --input c="$tmp/b.bin"
usage_error "input 'a' given more than once" -- run "$two" --input a="$tmp/a.bin" --input a="$tmp/a.bin" --input b="$tmp/b.bin"
usage_error "the model has 2 outputs" -- run "$two" --input a="$tmp/a.bin" --input b="$tmp/b.bin" --output "$tmp/y.bin"
usage_error "the model has no output named 'nope'" -- run "$two" --input a="$tmp/a.bin" --input b="$tmp/b.bin" --output nope="$tmp/y.bin"
expect 1 "input 'a' (float32 [2, 3]) needs 24 bytes, but $tmp/b.bin has 12 bytes" -- run "$two" --input a="$tmp/b.bin" --input b="$tmp/b.bin"
expect 1 "cannot open input file $tmp/none.bin for input 'b'" -- run "$two" --input a="$tmp/a.bin" --input b="$tmp/none.bin"
# one input and one output: NAME= may be left out, or given
expect 0 "predicted class: 5" -- run $models/resnet9.onnx --input input="$models/resnet9.input.bin" --output "$tmp/y.bin" --repeat 1
cmp -s "$tmp/y.bin" <(head -c 40 "$tmp/y.bin") && [[ $(stat -c %s "$tmp/y.bin") == 40 ]] || fail "resnet9 output is 10 floats"
expect 0 "predicted class: 5" -- run $models/resnet9.onnx --input "$models/resnet9.input.bin" --repeat 1
"$weft" run $models/mlp.onnx --input $models/mlp.input.bin --output "$tmp/mlp.bin" --repeat 1 > /dev/null 2>&1 ||
    fail "mlp run"
[[ $(stat -c %s "$tmp/mlp.bin") == $(stat -c %s $models/mlp.output.bin) ]] || fail "mlp output size"

# ---- honest reports of tuned schedules -------------------------------------------------------
# records for this machine at 1 thread: the bundled database's records, re-keyed to this host
# (imported, so checked and timed against the defaults before use: the timing is switched off
# here, where what is tested is the report, not which schedule is faster on this machine)
export WEFT_NEAREST_TIMING=0
here1=$("$weft" db best $models/tuned.db matmul --shape 4,4,4 --threads 1 | sed -n 's/^no record for [0-9a-f]* on //p')
[[ "$here1" == *"threads=1" ]] || fail "db best names this machine's target key (got '$here1')"
"$weft" db export $models/tuned.db | grep -v 'threads=[02-9]' |
    sed "s/llvm;cpu=[^;]*;feat=[0-9a-f]*;cores=[0-9]*;threads=1/$here1/g" > "$tmp/here.txt"
"$weft" db import "$tmp/here.db" "$tmp/here.txt" > /dev/null || fail "importing re-keyed records"
"$weft" run $models/resnet9.onnx --input $models/resnet9.input.bin --repeat 1 --threads 1 --db "$tmp/here.db" > /dev/null 2> "$tmp/err1"
grep -Eq "[1-9][0-9]* of 10 kernels tuned .*kernels: [1-9][0-9]* from records for this machine" "$tmp/err1" ||
    { fail "run --threads 1 uses this machine's records"; cat "$tmp/err1"; }
# at 2 threads the records of 1 thread serve as the nearest machine's, and the report says so
"$weft" run $models/resnet9.onnx --input $models/resnet9.input.bin --repeat 1 --threads 2 --db "$tmp/here.db" > /dev/null 2> "$tmp/err2"
grep -q "kernels: 0 from records for this machine" "$tmp/err2" || { fail "no record of this machine at 2 threads"; cat "$tmp/err2"; }
grep -q "this machine's records are for --threads 1 only and this run uses 2 threads" "$tmp/err2" ||
    { fail "a thread-count mismatch is named as such"; cat "$tmp/err2"; }
# records of another CPU for other kernels only: every kernel default, and why
"$weft" db import "$tmp/q.db" "$tmp/records.txt" > /dev/null || fail "importing hand-written records"
"$weft" run $models/resnet9.onnx --input $models/resnet9.input.bin --repeat 1 --db "$tmp/q.db" > /dev/null 2> "$tmp/err3"
grep -q "0 of 10 kernels tuned" "$tmp/err3" || { fail "no kernel tuned from unrelated records"; cat "$tmp/err3"; }
grep -q "10 kernel(s) have no record in the database for any machine; records exist only for other CPUs (cpu=test)" \
    "$tmp/err3" || { fail "why no kernel was tuned from unrelated records"; cat "$tmp/err3"; }
"$weft" bench model $models/resnet9.onnx --threads 1 --repeat 2 --csv --db "$tmp/here.db" > "$tmp/b1" 2> "$tmp/b1.err"
grep -q "^resnet9,1,tuned," "$tmp/b1" || { fail "bench model: tuned row when records match"; cat "$tmp/b1" "$tmp/b1.err"; }
grep -Eq "[1-9][0-9]* of 10 kernels tuned \(schedules from" "$tmp/b1.err" || fail "bench model says how many kernels were tuned"
unset WEFT_NEAREST_TIMING
# timed (the default): imported records are served only when faster than the defaults here. In
# test builds WEFT_TEST_RECORD_TIME_SCALE makes every timed record 1000x slower; the report then
# names the kernels that kept their default and why
WEFT_TEST_RECORD_TIME_SCALE=1000 "$weft" run $models/resnet9.onnx --input $models/resnet9.input.bin --repeat 1 --threads 1 \
    --db "$tmp/here.db" > /dev/null 2> "$tmp/err4" || { fail "run with timed records"; cat "$tmp/err4"; }
grep -Eq "[0-9]+ record\(s\) timed against the default here, [0-9]+ not faster" "$tmp/err4" ||
    { fail "the report counts the timed records"; cat "$tmp/err4"; }
if grep -Eq "timed against the default here, [1-9][0-9]* not faster" "$tmp/err4"; then
    grep -Eq "[1-9][0-9]* kernel\(s\) keep the default schedule: their records were not faster here than the default" "$tmp/err4" ||
        { fail "the report says why kernels kept their default"; cat "$tmp/err4"; }
fi
# no records at all: no tuned row, and the reason
"$weft" db import "$tmp/empty.db" /dev/null > /dev/null || fail "creating an empty database"
"$weft" bench model $models/resnet9.onnx --threads 1 --repeat 2 --csv --db "$tmp/empty.db" > "$tmp/b2" 2> "$tmp/b2.err"
grep -q ",tuned," "$tmp/b2" && fail "bench model: a tuned row although no kernel was tuned"
grep -q "0 of 10 kernels tuned" "$tmp/b2.err" && grep -q "the database has no successful measurements" "$tmp/b2.err" ||
    { fail "bench model: why no kernel was tuned"; cat "$tmp/b2.err"; }
grep -q "# tuned: no row" "$tmp/b2.err" || fail "bench model: says there is no tuned row"
if [[ ! -x bench/.venv/bin/python3 ]]; then
    grep -q "onnxruntime: not installed, run bench/setup_peers.sh" "$tmp/b2.err" || fail "bench model: onnxruntime note"
fi

echo "args: $fails failure(s)"
exit $((fails > 0))
