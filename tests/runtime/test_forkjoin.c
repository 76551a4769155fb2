/* Fork-join round trip of the thread pool: a parallel-for of one chunk per thread, timed.
 *
 * The numbers are printed, never asserted (timings on shared cores are noise to a test); what
 * is asserted is that every round trip ran every chunk. Two bodies:
 *   empty  returns at once: the caller may run every chunk itself before a worker claims one,
 *          so this is what a tiny parallel loop costs the caller
 *   joined each chunk waits until every chunk of the job has started, so every thread must
 *          take part: the full publish -> worker -> completion round trip
 * and three spacings: hot (back-to-back calls: the workers are spinning), warm (a ~20 us gap,
 * inside the workers' spin window), cold (a 2 ms gap: the workers sleep, a futex wake-up).
 * Run it alone for a reading: build/.../runtime_test_forkjoin. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/runtime.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void count_body(void *closure, int64_t begin, int64_t end)
{
    atomic_llong *n = closure;
    atomic_fetch_add_explicit(n, end - begin, memory_order_relaxed);
}

typedef struct joined {
    atomic_llong count;
    atomic_int started; /* chunks of the current job that have started */
    int n;              /* chunks per job */
} joined;

/* Waits (bounded, 10 ms) until every chunk of the job has started; yields the core after
 * 2 us, as a body that does work would let a worker woken onto its CPU run. */
static void joined_body(void *closure, int64_t begin, int64_t end)
{
    joined *j = closure;
    atomic_fetch_add_explicit(&j->count, end - begin, memory_order_relaxed);
    atomic_fetch_add(&j->started, 1);
    int64_t t0 = now_ns();
    for (int64_t t = t0; atomic_load(&j->started) < j->n && t < t0 + 10000000; t = now_ns())
        if (t > t0 + 2000) sched_yield();
}

static void busy_wait_ns(int64_t ns)
{
    int64_t until = now_ns() + ns;
    while (now_ns() < until) {
    }
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    nanosleep(&ts, NULL);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Median ns of one round trip; gap_ns > 0 waits between calls (busy below 1 ms, else sleeps).
 * With j, the joined body (count unused), else the empty one. */
static int64_t round_trip_ns(weft_threadpool *pool, int samples, int64_t gap_ns, atomic_llong *count, joined *j)
{
    int64_t *t = malloc(sizeof *t * (size_t)samples);
    assert_non_null(t);
    int64_t extent = weft_threadpool_size(pool);
    for (int i = 0; i < samples; i++) {
        if (gap_ns >= 1000000) sleep_ns(gap_ns);
        else if (gap_ns > 0) busy_wait_ns(gap_ns);
        if (j) atomic_store(&j->started, 0);
        int64_t t0 = now_ns();
        if (j) weft_rt_parallel_for(pool, joined_body, j, extent);
        else weft_rt_parallel_for(pool, count_body, count, extent);
        t[i] = now_ns() - t0;
    }
    qsort(t, (size_t)samples, sizeof *t, cmp_i64);
    int64_t med = t[samples / 2];
    free(t);
    return med;
}

static void test_empty_fork_join_round_trip(void **state)
{
    (void)state;
    int threads = weft_rt_cores() < 2 ? 2 : weft_rt_cores();
    if (threads > 4) threads = 4;
    weft_threadpool *pool = NULL;
    assert_int_equal(weft_threadpool_create(threads, &pool), WEFT_OK);
    atomic_llong count;
    atomic_init(&count, 0);
    joined *j = calloc(1, sizeof *j);
    assert_non_null(j);
    atomic_init(&j->count, 0);
    j->n = threads;
    /* warm-up */
    (void)round_trip_ns(pool, 1000, 0, &count, NULL);
    int64_t hot = round_trip_ns(pool, 20001, 0, &count, NULL);
    int64_t warm = round_trip_ns(pool, 2001, 20000, &count, NULL);
    int64_t cold = round_trip_ns(pool, 201, 2000000, &count, NULL);
    int64_t j_hot = round_trip_ns(pool, 20001, 0, NULL, j);
    int64_t j_warm = round_trip_ns(pool, 2001, 20000, NULL, j);
    int64_t j_cold = round_trip_ns(pool, 201, 2000000, NULL, j);
    assert_int_equal(atomic_load(&count), (long long)threads * (1000 + 20001 + 2001 + 201));
    assert_int_equal(atomic_load(&j->count), (long long)threads * (20001 + 2001 + 201));
    printf("fork-join round trip, %d threads (medians): empty body: hot %lld ns, warm (20 us gap) %lld ns, cold (2 ms "
           "gap) %lld ns; joined body: hot %lld ns, warm %lld ns, cold %lld ns\n",
           threads, (long long)hot, (long long)warm, (long long)cold, (long long)j_hot, (long long)j_warm,
           (long long)j_cold);
    free(j);
    weft_threadpool_destroy(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_fork_join_round_trip),
    };
    return cmocka_run_group_tests_name("runtime_forkjoin", tests, NULL, NULL);
}
