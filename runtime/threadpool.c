/* Persistent thread pool and the parallel-for called by generated code.
 *
 * A pool of n threads is n-1 workers plus the submitting thread. A job is published by writing
 * its fields and then one release store of `state`, which packs the job generation (high bits)
 * and the number of chunks (low bits). Worker i runs chunk i of a job when i < n_chunks; the
 * submitter runs chunk 0 and then waits until `pending` (chunks run by workers) drops to zero.
 *
 * Invariants:
 *  - The job fields are written only while no worker can read them: a worker reads them only
 *    when it has a chunk, and the submitter does not return (so cannot publish the next job)
 *    until every worker with a chunk has decremented `pending`. Workers without a chunk read
 *    only `state`, which is atomic.
 *  - Waiting is a short spin followed by a condition variable, both for workers waiting for
 *    work and for the submitter waiting for completion: these machines have few, shared cores.
 *  - One submission at a time: a second thread that calls parallel_for on a pool already
 *    running a job (or any call from inside a running body) runs the whole range inline.
 */
#define _GNU_SOURCE
#include "runtime/runtime.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

enum {
    CHUNK_BITS = 16,                  /* low bits of state: number of chunks of the job */
    MAX_THREADS = 1024,               /* well below 1 << CHUNK_BITS */
    WORKER_SPIN_NS = 10000,           /* a worker spins this long for new work, then sleeps */
    SUBMIT_SPIN_NS = 20000,           /* the submitter spins this long for completion */
};

typedef struct worker_arg {
    weft_threadpool *pool;
    int index;                        /* 1 .. n_threads-1; the submitter is chunk 0 */
} worker_arg;

struct weft_threadpool {
    int n_threads;                    /* workers + the submitting thread */
    pthread_t *threads;               /* n_threads-1 entries */
    worker_arg *args;                 /* n_threads-1 entries */
    int n_started;                    /* workers successfully created */

    /* the current job: stable while any worker has a chunk of it (see the file comment) */
    weft_rt_body body;
    void *closure;
    int64_t extent;                   /* iterations, > 0 */

    _Atomic uint64_t state;           /* (generation << CHUNK_BITS) | n_chunks */
    atomic_int pending;               /* worker chunks of the current job not yet finished */
    atomic_flag busy;                 /* set while a submission is in progress */

    pthread_mutex_t mu;               /* guards the sleeping counters and shutdown */
    pthread_cond_t work_cv;           /* workers sleep here for a new state */
    pthread_cond_t done_cv;           /* the submitter sleeps here for pending == 0 */
    int n_sleeping;                   /* workers blocked on work_cv */
    bool submitter_sleeping;          /* submitter blocked on done_cv */
    atomic_bool shutdown;
};

/* Set while this thread runs a chunk (workers: always), so nested calls run inline. */
static _Thread_local bool in_parallel;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int weft_rt_cores(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Chunk i of n over [0, extent): sizes differ by at most one, larger chunks first. */
static void chunk_range(int64_t extent, int n, int i, int64_t *begin, int64_t *end)
{
    int64_t base = extent / n, rem = extent % n;
    *begin = (int64_t)i * base + (i < rem ? i : rem);
    *end = *begin + base + (i < rem ? 1 : 0);
}

static uint64_t state_gen(uint64_t s) { return s >> CHUNK_BITS; }
static int state_chunks(uint64_t s) { return (int)(s & ((1u << CHUNK_BITS) - 1)); }

/* Waits until the generation differs from `seen` or the pool shuts down; returns the state. */
static uint64_t wait_for_work(weft_threadpool *p, uint64_t seen)
{
    uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);
    if (state_gen(s) != seen) return s;
    int64_t deadline = now_ns() + WORKER_SPIN_NS;
    for (unsigned k = 1;; k++) {
        cpu_relax();
        s = atomic_load_explicit(&p->state, memory_order_acquire);
        if (state_gen(s) != seen || atomic_load_explicit(&p->shutdown, memory_order_relaxed))
            return s;
        if ((k & 63) == 0 && now_ns() > deadline) break;
    }
    pthread_mutex_lock(&p->mu);
    p->n_sleeping++;
    for (;;) {
        s = atomic_load_explicit(&p->state, memory_order_acquire);
        if (state_gen(s) != seen || atomic_load_explicit(&p->shutdown, memory_order_relaxed))
            break;
        pthread_cond_wait(&p->work_cv, &p->mu);
    }
    p->n_sleeping--;
    pthread_mutex_unlock(&p->mu);
    return s;
}

static void *worker_main(void *argp)
{
    worker_arg *arg = argp;
    weft_threadpool *p = arg->pool;
    in_parallel = true;
    uint64_t seen = 0; /* generation 0 is the initial, empty job */
    for (;;) {
        uint64_t s = wait_for_work(p, seen);
        if (atomic_load_explicit(&p->shutdown, memory_order_acquire)) break;
        seen = state_gen(s);
        int n_chunks = state_chunks(s);
        if (arg->index >= n_chunks) continue;
        int64_t begin, end;
        chunk_range(p->extent, n_chunks, arg->index, &begin, &end);
        p->body(p->closure, begin, end);
        if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->mu);
            if (p->submitter_sleeping) pthread_cond_signal(&p->done_cv);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

static void stop_workers(weft_threadpool *p)
{
    pthread_mutex_lock(&p->mu);
    atomic_store_explicit(&p->shutdown, true, memory_order_release);
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_started; i++) pthread_join(p->threads[i], NULL);
    p->n_started = 0;
}

weft_status weft_threadpool_create(int n_threads, weft_threadpool **out)
{
    if (!out) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_threadpool_create: out is NULL");
    *out = NULL;
    if (n_threads <= 0) n_threads = weft_rt_cores();
    if (n_threads > MAX_THREADS)
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_threadpool_create: n_threads=%d, expected <= %d",
                         n_threads, MAX_THREADS);
    weft_threadpool *p = calloc(1, sizeof *p);
    if (!p) return weft_fail(WEFT_ERR_NOMEM, "weft_threadpool_create: out of memory");
    p->n_threads = n_threads;
    atomic_init(&p->state, 0);
    atomic_init(&p->pending, 0);
    atomic_init(&p->shutdown, false);
    atomic_flag_clear(&p->busy);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    int n_workers = n_threads - 1;
    if (n_workers > 0) {
        p->threads = calloc((size_t)n_workers, sizeof *p->threads);
        p->args = calloc((size_t)n_workers, sizeof *p->args);
        if (!p->threads || !p->args) {
            weft_threadpool_destroy(p);
            return weft_fail(WEFT_ERR_NOMEM, "weft_threadpool_create: out of memory for %d workers",
                             n_workers);
        }
    }
    for (int i = 0; i < n_workers; i++) {
        p->args[i] = (worker_arg){.pool = p, .index = i + 1};
        int rc = pthread_create(&p->threads[i], NULL, worker_main, &p->args[i]);
        if (rc != 0) {
            weft_threadpool_destroy(p);
            return weft_fail(WEFT_ERR_UNAVAILABLE, "weft_threadpool_create: thread %d of %d: %s",
                             i + 1, n_threads, strerror(rc));
        }
        p->n_started++;
    }
    *out = p;
    return WEFT_OK;
}

void weft_threadpool_destroy(weft_threadpool *p)
{
    if (!p) return;
    stop_workers(p);
    pthread_cond_destroy(&p->done_cv);
    pthread_cond_destroy(&p->work_cv);
    pthread_mutex_destroy(&p->mu);
    free(p->args);
    free(p->threads);
    free(p);
}

int weft_threadpool_size(const weft_threadpool *p) { return p ? p->n_threads : 1; }

/* Waits until every worker chunk of the current job is done: spin briefly, then sleep. */
static void wait_for_done(weft_threadpool *p)
{
    if (atomic_load_explicit(&p->pending, memory_order_acquire) == 0) return;
    int64_t deadline = now_ns() + SUBMIT_SPIN_NS;
    for (unsigned k = 1;; k++) {
        cpu_relax();
        if (atomic_load_explicit(&p->pending, memory_order_acquire) == 0) return;
        if ((k & 63) == 0 && now_ns() > deadline) break;
    }
    pthread_mutex_lock(&p->mu);
    p->submitter_sleeping = true;
    while (atomic_load_explicit(&p->pending, memory_order_acquire) != 0)
        pthread_cond_wait(&p->done_cv, &p->mu);
    p->submitter_sleeping = false;
    pthread_mutex_unlock(&p->mu);
}

void weft_rt_parallel_for(weft_threadpool *p, weft_rt_body body, void *closure, int64_t extent)
{
    if (extent <= 0) return;
    int n_chunks = p ? p->n_threads : 1;
    if (extent < n_chunks) n_chunks = (int)extent;
    if (n_chunks <= 1 || in_parallel || atomic_flag_test_and_set(&p->busy)) {
        body(closure, 0, extent);
        return;
    }
    p->body = body;
    p->closure = closure;
    p->extent = extent;
    atomic_store_explicit(&p->pending, n_chunks - 1, memory_order_relaxed);
    uint64_t gen = state_gen(atomic_load_explicit(&p->state, memory_order_relaxed)) + 1;
    atomic_store_explicit(&p->state, (gen << CHUNK_BITS) | (uint64_t)n_chunks, memory_order_release);
    /* Sleeping workers check `state` under the mutex, so taking it here cannot miss one. */
    pthread_mutex_lock(&p->mu);
    if (p->n_sleeping > 0) pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);

    int64_t begin, end;
    chunk_range(extent, n_chunks, 0, &begin, &end);
    in_parallel = true;
    body(closure, begin, end);
    in_parallel = false;
    wait_for_done(p);
    atomic_flag_clear_explicit(&p->busy, memory_order_release);
}
