#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan, in build/fuzz) and runs each for a time:
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s; targets: onnx steps db_import cost_model)
# One target at a time, at nice 19, one process each. The seed corpus tests/fuzz/corpus/NAME is
# copied into build/fuzz/corpus/NAME (which grows across runs; the tree's corpus is not touched),
# and a crashing input is written to build/fuzz/artifacts/NAME/. Exits 0 when no target found
# anything, 1 on a finding or a build failure, 77 when clang or libFuzzer is missing.
# Hours: scripts/fuzz.sh 3600. Extra libFuzzer flags: FUZZ_FLAGS="-max_len=4096". FUZZ_SEED=N fixes
# libFuzzer's seed (scripts/test.sh uses 1, so a finding in CI replays with the same seed here).
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
SECS=${1:-60}
shift || true
TARGETS=("$@")
[[ ${#TARGETS[@]} -eq 0 ]] && TARGETS=(onnx steps db_import cost_model)
JOBS=${JOBS:-2}
CC_FUZZ=${CC_FUZZ:-clang-14}
CXX_FUZZ=${CXX_FUZZ:-clang++-14}
B=build/fuzz

if ! command -v "$CC_FUZZ" >/dev/null 2>&1 || ! command -v "$CXX_FUZZ" >/dev/null 2>&1; then
    echo "fuzz: $CC_FUZZ not found (apt-get install clang-14 libclang-rt-14-dev): fuzzing left out" >&2
    exit 77
fi
mkdir -p build
if ! CC=$CC_FUZZ CXX=$CXX_FUZZ cmake -S . -B $B -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_FUZZ=ON \
        -DWEFT_SANITIZE=address,undefined -DWEFT_CHECK_LAYERS=OFF >$B.configure.log 2>&1; then
    cat $B.configure.log >&2
    echo "fuzz: configure FAILED" >&2
    exit 1
fi
if ! grep -q "WEFT_HAVE_LIBFUZZER" $B/CMakeCache.txt || ! grep -q "^WEFT_HAVE_LIBFUZZER:INTERNAL=1" $B/CMakeCache.txt; then
    echo "fuzz: $CC_FUZZ cannot link -fsanitize=fuzzer (apt-get install libclang-rt-14-dev): fuzzing left out" >&2
    exit 77
fi
if ! nice -n 19 cmake --build $B -j"$JOBS" --target weft_fuzz_all >$B.build.log 2>&1; then
    tail -40 $B.build.log >&2
    echo "fuzz: build FAILED" >&2
    exit 1
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
[[ -f tests/lsan.supp ]] && export LSAN_OPTIONS=suppressions=$REPO/tests/lsan.supp
failed=0
for t in "${TARGETS[@]}"; do
    corpus=$B/corpus/$t
    art=$B/artifacts/$t
    mkdir -p "$corpus" "$art"
    cp -n tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
    [[ -d tests/fuzz/regress/$t ]] && cp -n tests/fuzz/regress/"$t"/* "$corpus"/ 2>/dev/null
    log=$B/fuzz_$t.log
    echo "== fuzz $t: ${SECS}s"
    # -timeout: one input over 10 s is a finding (a hang); -rss_limit_mb: one over 2 GB too.
    nice -n 19 $B/fuzz_"$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
        -print_final_stats=1 -artifact_prefix="$art/" ${FUZZ_SEED:+-seed=$FUZZ_SEED} ${FUZZ_FLAGS:-} "$corpus" >"$log" 2>&1
    rc=$?
    runs=$(grep -o "stat::number_of_executed_units: *[0-9]*" "$log" | grep -o "[0-9]*$" | tail -1)
    cov=$(grep -o "cov: [0-9]*" "$log" | tail -1)
    if [[ $rc -eq 0 ]]; then
        echo "fuzz $t: ok, ${runs:-?} executions in ${SECS}s, ${cov:-cov: ?}, corpus $(ls "$corpus" | wc -l) inputs"
    else
        tail -60 "$log" >&2
        echo "fuzz $t: FINDING (exit $rc); input(s) in $art, log $log" >&2
        failed=1
    fi
done
exit $failed
