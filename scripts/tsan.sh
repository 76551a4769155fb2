#!/usr/bin/env bash
# ThreadSanitizer job: builds build/tsan (Debug, -DWEFT_SANITIZE=thread) and runs the tests that
# use weft from several threads at once: the C API from several threads
# (tests/reliability/test_threads.c: a model per thread, one model shared through
# weft_model_run and through contexts, a shared dynamic model) and the thread pool's tests.
# Exits nonzero on a build failure, a failing test or any race report. JIT-compiled kernels are
# not instrumented (LLVM emits them at run time): TSan sees the runtime, the executor and the
# compiler around them. Called by scripts/test.sh as its third suite.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
JOBS=${JOBS:-2}
B=build/tsan
TESTS=(reliability_test_threads runtime_test_threadpool runtime_test_forkjoin)
mkdir -p build
echo "== tsan: configure + build ($B)"
if ! cmake -S . -B $B -DCMAKE_BUILD_TYPE=Debug -DWEFT_SANITIZE=thread >$B.configure.log 2>&1; then
    cat $B.configure.log >&2
    exit 1
fi
cmake --build $B -j"$JOBS" --target "${TESTS[@]}"
# halt_on_error: a race fails the test; second_deadlock_stack for readable lock reports.
# tests/tsan.supp: reports inside libLLVM (not instrumented; see the file).
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$REPO/tests/tsan.supp ${TSAN_OPTIONS:-}"
regex="^($(IFS='|'; echo "${TESTS[*]}"))\$"
echo "== tsan: ctest -R '$regex'"
# gcc 12's TSan refuses the high mmap randomization of newer kernels ("unexpected memory
# mapping"); running without address randomization (setarch -R) avoids it.
if [[ $(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0) -gt 28 ]] && command -v setarch >/dev/null; then
    (cd $B && setarch "$(uname -m)" -R ctest --output-on-failure -R "$regex")
else
    (cd $B && ctest --output-on-failure -R "$regex")
fi
