/* The allocation-failure sweep of tests/reliability: runs a path once for every N, failing its
 * Nth allocation (through the hook of runtime/mem.h), until a run completes with no failure
 * injected. The counter lives in a MAP_SHARED page, so allocations in forked measurement workers
 * count (and can fail) too. Include after <cmocka.h>. */
#ifndef WEFT_TESTS_RELIABILITY_SWEEP_H
#define WEFT_TESTS_RELIABILITY_SWEEP_H
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "runtime/error.h"
#include "runtime/mem.h"
#include "weft/weft.h"

typedef struct sweep_counter {
    atomic_long count;   /* allocations seen in this run */
    atomic_long fail_at; /* the one to fail (0: none) */
    atomic_int injected; /* it was reached */
    atomic_int injected_foreign; /* ... inside a library that may absorb it (sweep_foreign says) */
    long n;              /* the N of the current run (for messages) */
} sweep_counter;

static sweep_counter *sweep_shared(void)
{
    static sweep_counter *c;
    if (!c) {
        c = mmap(NULL, sizeof *c, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        assert_true(c != MAP_FAILED);
    }
    return c;
}

/* A place for a debugger's breakpoint: called when the failure is injected. */
__attribute__((noinline)) static void sweep_injected(long n) { __asm__ volatile("" ::"r"(n)); }

/* Optional: says whether the allocation being made comes from inside a library that handles
 * failures itself and may absorb one by design (SQLite's routed allocations). A strict path
 * may succeed when its failed allocation was such a one. */
static bool (*sweep_foreign)(void);

static bool sweep_fail(void *ud, size_t n)
{
    (void)n;
    sweep_counter *c = ud;
    long i = atomic_fetch_add(&c->count, 1) + 1;
    if (i != atomic_load(&c->fail_at)) return false;
    atomic_store(&c->injected, 1);
    if (sweep_foreign && sweep_foreign()) atomic_store(&c->injected_foreign, 1);
    sweep_injected(i);
    return true;
}

/* A path under test: runs, frees everything it made, returns its status. `check` (may be
 * NULL) runs after it with the hook off: it asserts the path left a consistent state (outputs
 * right when it succeeded, the database intact). */
typedef weft_status (*sweep_path)(void *ud);
typedef void (*sweep_check)(void *ud, weft_status st);

typedef struct sweep_result {
    long runs, allocs;               /* runs made; allocations of the run with no failure */
    long absorbed_foreign;           /* runs that succeeded because SQLite absorbed the failure */
    long by_status[WEFT_STATUS_COUNT];
} sweep_result;

/* Fails N = 1, 1 + stride, ... until a run completes with no failure injected (that run must
 * succeed). Every failing run must return an error with a message; with `strict` false it may
 * also succeed (a failure the path absorbs by design: a measurement worker's failure recorded as
 * the candidate's error) and then must pass `check`. */
static sweep_result sweep_run(const char *name, sweep_path path, sweep_check check, void *ud, long stride, bool strict)
{
    sweep_counter *c = sweep_shared();
    sweep_result r;
    memset(&r, 0, sizeof r);
    double t0 = (double)clock() / CLOCKS_PER_SEC;
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    for (long n = 1;; n += stride) {
        atomic_store(&c->count, 0);
        atomic_store(&c->injected, 0);
        atomic_store(&c->injected_foreign, 0);
        atomic_store(&c->fail_at, n);
        c->n = n;
        weft_error_clear();
        weft_alloc_set_fail_hook(sweep_fail, c);
        weft_status st = path(ud);
        weft_alloc_set_fail_hook(NULL, NULL);
        r.runs++;
        bool injected = atomic_load(&c->injected);
        if (st != WEFT_OK && !weft_last_error()[0]) {
            fprintf(stderr, "%s: N=%ld: %s with no message\n", name, n, weft_status_name(st));
            fail();
        }
        if ((unsigned)st < WEFT_STATUS_COUNT) r.by_status[st]++;
        if (st != WEFT_OK && st != WEFT_ERR_NOMEM)
            fprintf(stderr, "%s: N=%ld: %s: %s\n", name, n, weft_status_name(st), weft_last_error());
        bool foreign = atomic_load(&c->injected_foreign);
        if (injected && st == WEFT_OK && ((strict && !foreign) || getenv("WEFT_SWEEP_VERBOSE")))
            fprintf(stderr, "%s: N=%ld: failure absorbed%s\n", name, n, foreign ? " (inside SQLite)" : "");
        if (injected && st == WEFT_OK && foreign) r.absorbed_foreign++;
        if (strict && !foreign) assert_false(injected && st == WEFT_OK);
        if (check) check(ud, st);
        if (!injected) {
            if (st != WEFT_OK) fprintf(stderr, "%s: N=%ld, nothing injected: %s\n", name, n, weft_last_error());
            assert_int_equal(st, WEFT_OK);
            r.allocs = atomic_load(&c->count);
            break;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &w1);
    printf("%s: %ld allocations, %ld runs (stride %ld), %.1f s: ok %ld (%ld absorbed inside SQLite), nomem %ld, "
           "other errors %ld\n",
           name, r.allocs, r.runs, stride, (double)(w1.tv_sec - w0.tv_sec) + 1e-9 * (double)(w1.tv_nsec - w0.tv_nsec),
           r.by_status[WEFT_OK], r.absorbed_foreign, r.by_status[WEFT_ERR_NOMEM],
           r.runs - r.by_status[WEFT_OK] - r.by_status[WEFT_ERR_NOMEM]);
    (void)t0;
    fflush(stdout);
    return r;
}

/* Allocations one clean run of `path` makes (no failure injected). */
static long sweep_count(sweep_path path, void *ud)
{
    sweep_counter *c = sweep_shared();
    atomic_store(&c->count, 0);
    atomic_store(&c->fail_at, 0);
    weft_alloc_set_fail_hook(sweep_fail, c);
    weft_status st = path(ud);
    weft_alloc_set_fail_hook(NULL, NULL);
    assert_int_equal(st, WEFT_OK);
    return atomic_load(&c->count);
}

#endif
