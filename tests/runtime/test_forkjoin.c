/* Fork-join round trip of the thread pool: an empty parallel-for over two chunks, timed.
 *
 * The numbers are printed, never asserted (timings on shared cores are noise to a test); what
 * is asserted is that every round trip ran every chunk. Three cases:
 *   hot   back-to-back calls: the workers are spinning when the next job is published
 *   warm  a ~20 us gap between calls (inside the workers' spin window)
 *   cold  a 2 ms gap (workers asleep): includes a futex wake-up
 * Run it alone for a reading: build/.../runtime_test_forkjoin. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

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

/* Median ns of one round trip; gap_ns > 0 waits between calls (busy below 1 ms, else sleeps). */
static int64_t round_trip_ns(weft_threadpool *pool, int samples, int64_t gap_ns, atomic_llong *count)
{
    int64_t *t = malloc(sizeof *t * (size_t)samples);
    assert_non_null(t);
    int64_t extent = weft_threadpool_size(pool);
    for (int i = 0; i < samples; i++) {
        if (gap_ns >= 1000000) sleep_ns(gap_ns);
        else if (gap_ns > 0) busy_wait_ns(gap_ns);
        int64_t t0 = now_ns();
        weft_rt_parallel_for(pool, count_body, count, extent);
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
    /* warm-up */
    (void)round_trip_ns(pool, 1000, 0, &count);
    int64_t hot = round_trip_ns(pool, 20001, 0, &count);
    int64_t warm = round_trip_ns(pool, 2001, 20000, &count);
    int64_t cold = round_trip_ns(pool, 201, 2000000, &count);
    assert_int_equal(atomic_load(&count), (long long)threads * (1000 + 20001 + 2001 + 201));
    printf("fork-join round trip, %d threads, empty body: hot %lld ns, warm (20 us gap) %lld ns, "
           "cold (2 ms gap) %lld ns (medians)\n",
           threads, (long long)hot, (long long)warm, (long long)cold);
    weft_threadpool_destroy(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_fork_join_round_trip),
    };
    return cmocka_run_group_tests_name("runtime_forkjoin", tests, NULL, NULL);
}
