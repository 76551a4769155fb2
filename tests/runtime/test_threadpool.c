/* Thread pool and parallel-for: every iteration runs exactly once, in the balanced pieces of
 * balanced chunks, nested calls run inline, and many small back-to-back jobs never lose a wakeup.
 * Also the aligned allocator and the clock. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime.h"

enum { MAX_EXTENT = 1000, MAX_CHUNKS = 64 };

/* Per-index visit counts plus a record of the chunks that were run. */
typedef struct visit_log {
    atomic_int counts[MAX_EXTENT];
    atomic_int n_chunks;
    int64_t chunk_sizes[MAX_CHUNKS];
} visit_log;

static void visit_body(void *closure, int64_t begin, int64_t end)
{
    visit_log *log = closure;
    int c = atomic_fetch_add(&log->n_chunks, 1);
    if (c < MAX_CHUNKS) log->chunk_sizes[c] = end - begin;
    for (int64_t i = begin; i < end; i++) atomic_fetch_add(&log->counts[i], 1);
}

static void check_visits(weft_threadpool *pool, int64_t extent)
{
    visit_log *log = calloc(1, sizeof *log);
    assert_non_null(log);
    weft_rt_parallel_for(pool, visit_body, log, extent);
    for (int64_t i = 0; i < extent; i++) assert_int_equal(atomic_load(&log->counts[i]), 1);
    /* min(threads, extent) balanced chunks, each in min(WEFT_RT_PIECES, its size) balanced
     * pieces: as many calls, and their sizes are those of the pieces (in any order) */
    int n = atomic_load(&log->n_chunks);
    int threads = weft_threadpool_size(pool);
    int64_t chunks = extent <= 0 ? 0 : (extent < threads ? extent : threads), want = 0;
    if (chunks == 1) chunks = 0, want = 1; /* inline: one call over the whole range */
    int64_t sizes[MAX_CHUNKS] = {0}; /* how many pieces of each size */
    for (int64_t c = 0; c < chunks; c++) {
        int64_t len = extent / chunks + (c < extent % chunks ? 1 : 0);
        int64_t np = len < WEFT_RT_PIECES ? len : WEFT_RT_PIECES;
        for (int64_t k = 0; k < np; k++) {
            int64_t sz = len / np + (k < len % np ? 1 : 0);
            if (sz < MAX_CHUNKS) sizes[sz]++;
            want++;
        }
    }
    assert_int_equal(n, want);
    if (want == 1 && chunks == 0) assert_int_equal(log->chunk_sizes[0], extent);
    else
        for (int c = 0; c < n && c < MAX_CHUNKS; c++)
            if (log->chunk_sizes[c] < MAX_CHUNKS) sizes[log->chunk_sizes[c]]--;
    for (int sz = 0; sz < MAX_CHUNKS; sz++) assert_int_equal(sizes[sz], 0);
    free(log);
}

static void test_parallel_for_visits_each_index_once(void **state)
{
    static const int64_t extents[] = {0, 1, 2, 3, 7, 1000};
    for (int threads = 1; threads <= 4; threads++) {
        weft_threadpool *pool = NULL;
        assert_int_equal(weft_threadpool_create(threads, &pool), WEFT_OK);
        assert_non_null(pool);
        assert_int_equal(weft_threadpool_size(pool), threads);
        for (size_t e = 0; e < sizeof extents / sizeof extents[0]; e++) check_visits(pool, extents[e]);
        weft_threadpool_destroy(pool);
    }
}

static void test_parallel_for_null_pool_runs_inline(void **state)
{
    check_visits(NULL, 0);
    check_visits(NULL, 7);
    check_visits(NULL, 1000);
    assert_int_equal(weft_threadpool_size(NULL), 1);
}

static void test_parallel_for_negative_extent_does_nothing(void **state)
{
    weft_threadpool *pool = NULL;
    assert_int_equal(weft_threadpool_create(2, &pool), WEFT_OK);
    visit_log *log = calloc(1, sizeof *log);
    assert_non_null(log);
    weft_rt_parallel_for(pool, visit_body, log, -5);
    assert_int_equal(atomic_load(&log->n_chunks), 0);
    free(log);
    weft_threadpool_destroy(pool);
}

/* Outer body: each outer index i issues an inner parallel-for over row i. */
typedef struct nested_ctx {
    weft_threadpool *pool;
    atomic_int cells[16][50];
    atomic_int inner_chunks;
} nested_ctx;

typedef struct inner_ctx {
    nested_ctx *outer;
    int64_t row;
} inner_ctx;

static void inner_body(void *closure, int64_t begin, int64_t end)
{
    inner_ctx *ic = closure;
    atomic_fetch_add(&ic->outer->inner_chunks, 1);
    for (int64_t j = begin; j < end; j++) atomic_fetch_add(&ic->outer->cells[ic->row][j], 1);
}

static void outer_body(void *closure, int64_t begin, int64_t end)
{
    nested_ctx *ctx = closure;
    for (int64_t i = begin; i < end; i++) {
        inner_ctx ic = {.outer = ctx, .row = i};
        weft_rt_parallel_for(ctx->pool, inner_body, &ic, 50);
    }
}

static void test_nested_parallel_for_runs_inline(void **state)
{
    for (int threads = 1; threads <= 4; threads++) {
        weft_threadpool *pool = NULL;
        assert_int_equal(weft_threadpool_create(threads, &pool), WEFT_OK);
        nested_ctx *ctx = calloc(1, sizeof *ctx);
        assert_non_null(ctx);
        ctx->pool = pool;
        weft_rt_parallel_for(pool, outer_body, ctx, 16);
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 50; j++) assert_int_equal(atomic_load(&ctx->cells[i][j]), 1);
        /* inline: one inner chunk per outer row */
        assert_int_equal(atomic_load(&ctx->inner_chunks), 16);
        free(ctx);
        weft_threadpool_destroy(pool);
    }
}

static void sum_body(void *closure, int64_t begin, int64_t end)
{
    atomic_llong *sum = closure;
    long long s = 0;
    for (int64_t i = begin; i < end; i++) s += i;
    atomic_fetch_add(sum, s);
}

static void test_many_small_jobs_complete(void **state)
{
    for (int threads = 2; threads <= 3; threads++) {
        weft_threadpool *pool = NULL;
        assert_int_equal(weft_threadpool_create(threads, &pool), WEFT_OK);
        atomic_llong sum;
        atomic_init(&sum, 0);
        long long want = 0;
        for (int k = 0; k < 10000; k++) {
            int64_t extent = 1 + k % 9;
            weft_rt_parallel_for(pool, sum_body, &sum, extent);
            want += extent * (extent - 1) / 2;
        }
        assert_int_equal(atomic_load(&sum), want);
        weft_threadpool_destroy(pool);
    }
}

/* Jobs published after the workers went to sleep (past their spin window) wake them: every
 * job completes, and destroying a pool of sleeping workers returns. */
static void test_jobs_after_idle_wake_sleeping_workers(void **state)
{
    for (int threads = 2; threads <= 3; threads++) {
        weft_threadpool *pool = NULL;
        assert_int_equal(weft_threadpool_create(threads, &pool), WEFT_OK);
        atomic_llong sum;
        atomic_init(&sum, 0);
        long long want = 0;
        for (int k = 0; k < 20; k++) {
            struct timespec ts = {0, 300000}; /* 300 us: longer than the spin window */
            nanosleep(&ts, NULL);
            int64_t extent = 2 + k % 7;
            weft_rt_parallel_for(pool, sum_body, &sum, extent);
            want += extent * (extent - 1) / 2;
        }
        assert_int_equal(atomic_load(&sum), want);
        struct timespec ts = {0, 300000};
        nanosleep(&ts, NULL);
        weft_threadpool_destroy(pool);
    }
}

typedef struct submitter {
    weft_threadpool *pool;
    atomic_llong sum;
    long long want;
} submitter;

static void *submit_many(void *arg)
{
    submitter *s = arg;
    for (int k = 0; k < 2000; k++) {
        int64_t extent = 1 + k % 13;
        weft_rt_parallel_for(s->pool, sum_body, &s->sum, extent);
        s->want += extent * (extent - 1) / 2;
    }
    return NULL;
}

/* Two threads sharing one pool: whichever finds it busy runs inline; both get every index. */
static void test_concurrent_submitters_both_complete(void **state)
{
    weft_threadpool *pool = NULL;
    assert_int_equal(weft_threadpool_create(3, &pool), WEFT_OK);
    submitter subs[2];
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) {
        subs[i].pool = pool;
        atomic_init(&subs[i].sum, 0);
        subs[i].want = 0;
        assert_int_equal(pthread_create(&threads[i], NULL, submit_many, &subs[i]), 0);
    }
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < 2; i++) assert_int_equal(atomic_load(&subs[i].sum), subs[i].want);
    weft_threadpool_destroy(pool);
}

static void test_default_pool_uses_available_cores(void **state)
{
    int cores = weft_rt_cores();
    assert_true(cores >= 1);
    weft_threadpool *pool = NULL;
    assert_int_equal(weft_threadpool_create(0, &pool), WEFT_OK);
    assert_int_equal(weft_threadpool_size(pool), cores);
    check_visits(pool, 1000);
    weft_threadpool_destroy(pool);
}

static void test_destroy_null_is_noop(void **state)
{
    weft_threadpool_destroy(NULL);
    weft_rt_free(NULL);
}

static void test_create_rejects_null_out(void **state)
{
    assert_int_equal(weft_threadpool_create(2, NULL), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(), "out"));
}

static void test_alloc_is_aligned_and_zeroed(void **state)
{
    static const size_t sizes[] = {0, 1, 63, 64, 1000, 4096, (size_t)3 << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        unsigned char *p = weft_rt_alloc(sizes[s]);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 64, 0);
        for (size_t i = 0; i < sizes[s]; i++) assert_int_equal(p[i], 0);
        if (sizes[s] > 0) p[sizes[s] - 1] = 1; /* writable */
        weft_rt_free(p);
    }
}

/* The unzeroed variant (generated code's large local buffers): aligned like weft_rt_alloc (2 MiB
 * from 2 MiB up), writable end to end. */
static void test_alloc_uninit_is_aligned(void **state)
{
    static const size_t sizes[] = {0, 1, 64, 100000, (size_t)2 << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        unsigned char *p = weft_rt_alloc_uninit(sizes[s]);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % (sizes[s] >= ((size_t)2 << 20) ? ((size_t)2 << 20) : 64), 0);
        if (sizes[s] > 0) memset(p, 7, sizes[s]);
        weft_rt_free(p);
    }
}

static void test_now_is_monotonic(void **state)
{
    double a = weft_rt_now();
    double b = weft_rt_now();
    assert_true(a > 0.0);
    assert_true(b >= a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_for_visits_each_index_once),
        cmocka_unit_test(test_parallel_for_null_pool_runs_inline),
        cmocka_unit_test(test_parallel_for_negative_extent_does_nothing),
        cmocka_unit_test(test_nested_parallel_for_runs_inline),
        cmocka_unit_test(test_many_small_jobs_complete),
        cmocka_unit_test(test_jobs_after_idle_wake_sleeping_workers),
        cmocka_unit_test(test_concurrent_submitters_both_complete),
        cmocka_unit_test(test_default_pool_uses_available_cores),
        cmocka_unit_test(test_destroy_null_is_noop),
        cmocka_unit_test(test_create_rejects_null_out),
        cmocka_unit_test(test_alloc_is_aligned_and_zeroed),
        cmocka_unit_test(test_alloc_uninit_is_aligned),
        cmocka_unit_test(test_now_is_monotonic),
    };
    return cmocka_run_group_tests_name("runtime_threadpool", tests, NULL, NULL);
}
