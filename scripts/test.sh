#!/usr/bin/env bash
# Sets up, builds and runs every test twice: a Debug build (-Werror) in build/debug and an
# ASan+UBSan build in build/asan; then the multi-threaded tests under ThreadSanitizer in
# build/tsan (scripts/tsan.sh); then each libFuzzer target for FUZZ_SECONDS (default 40; see
# scripts/fuzz.sh) in build/fuzz. Exits nonzero on any failure.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
JOBS=${JOBS:-2}

bash scripts/install-deps.sh

results=()
failed=0

run_suite() { # name build-dir cmake-args...
    local name=$1 dir=$2
    shift 2
    echo "== $name: configure + build ($dir)"
    if ! cmake -S . -B "$dir" "$@" >"$dir.configure.log" 2>&1; then
        cat "$dir.configure.log" >&2
        results+=("$name: configure FAILED"); failed=1; return
    fi
    if ! cmake --build "$dir" -j"$JOBS"; then
        results+=("$name: build FAILED"); failed=1; return
    fi
    echo "== $name: ctest"
    if (cd "$dir" && ctest --output-on-failure -j"$JOBS"); then
        results+=("$name: passed")
    else
        results+=("$name: tests FAILED"); failed=1
    fi
}

mkdir -p build
run_suite debug build/debug -DCMAKE_BUILD_TYPE=Debug -DWEFT_WERROR=ON

export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [[ -f "$REPO/tests/lsan.supp" ]]; then
    export LSAN_OPTIONS=suppressions=$REPO/tests/lsan.supp
fi
run_suite asan build/asan -DCMAKE_BUILD_TYPE=Debug -DWEFT_SANITIZE=address,undefined

# ThreadSanitizer: the tests that use weft from several threads at once (scripts/tsan.sh).
echo "== tsan: scripts/tsan.sh"
if bash scripts/tsan.sh; then
    results+=("tsan: passed")
else
    results+=("tsan: FAILED"); failed=1
fi

# libFuzzer targets (clang-14, ASan + UBSan) for a bounded time each; FUZZ_SECONDS=0 skips them.
FUZZ_SECONDS=${FUZZ_SECONDS:-40}
if [[ $FUZZ_SECONDS -gt 0 ]]; then
    fuzz_rc=0
    FUZZ_SEED=${FUZZ_SEED:-1} bash scripts/fuzz.sh "$FUZZ_SECONDS" || fuzz_rc=$?
    case $fuzz_rc in
        0) results+=("fuzz: passed (${FUZZ_SECONDS}s per target)") ;;
        77) results+=("fuzz: left out (no clang-14 with libFuzzer)") ;;
        *) results+=("fuzz: FAILED"); failed=1 ;;
    esac
fi

summary=$(IFS=';'; echo "${results[*]}")
if [[ $failed -eq 0 ]]; then
    echo "test.sh: OK ($summary)"
else
    echo "test.sh: FAILED ($summary)"
fi
exit $failed
