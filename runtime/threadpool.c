/* Persistent thread pool and the cheap fork-join parallel-for called by generated code.
 *
 * A pool of n threads is n-1 workers plus the submitting thread, which takes part.
 *
 * The job word `state` packs the job generation (high 32 bits), its number of chunks (16 bits)
 * and the next unclaimed chunk (low 16 bits). Publishing a job: the submitter writes the job
 * fields (body, closure, extent) and `pending` = chunks, then one seq_cst store of `state`
 * (new generation, next chunk 0). Every thread, the submitter included, then claims chunks by
 * compare-and-swap on `state` (same generation, next + 1), runs each chunk it claimed and
 * decrements `pending`; the submitter, when no chunk is left to claim, waits for `pending` ==
 * 0. So a worker that is slow to wake (asleep, or its core taken by another process) costs
 * nothing: the submitter runs the chunks it did not claim. No mutex is taken on this path.
 *
 * Waiting is bounded spinning, then sleeping on a futex (Linux; a mutex + condition variable
 * elsewhere):
 *  - a worker waiting for the next job spins on `state` with a pause instruction for
 *    SPIN_NS (80 us), yielding the core now and then after the first SPIN_PURE_NS, so a
 *    model's kernels, which follow each other within microseconds, find it awake: on these
 *    VMs a sleeping thread takes 15-30 us to wake, more than most kernels of a small model.
 *    After the window it sleeps, so an idle pool costs a concurrent process at most 80 us
 *    of one core per job;
 *  - the submitter waiting for completion spins the same way, then sleeps on `pending`;
 *  - a waiting thread yields at once when the thread it waits for may be queued behind it
 *    on the same CPU (the scheduler often wakes a thread on its waker's CPU).
 * Sleepers are found with a Dekker-style handshake on seq_cst atomics: a sleeper increments
 * `n_sleeping` (or sets `submitter_waiting`) before re-checking the condition and sleeping;
 * the waker changes the condition before reading the sleeper count. One of the two sees the
 * other, and the futex wait itself re-checks the word, so no wake-up is lost.
 *
 * Invariants:
 *  - The job fields are written only while no other thread can read them: a thread reads them
 *    only after claiming a chunk of the job, and the submitter does not return (so cannot
 *    publish the next job) until every claimed chunk has decremented `pending` (release; the
 *    submitter reads it with acquire). A claim names its generation, so a late worker can never
 *    claim a chunk of a job that has ended.
 *  - One submission at a time: a second thread that calls parallel_for on a pool already
 *    running a job (or any call from inside a running body) runs the whole range inline.
 *  - A job of one chunk (extent 1, a pool of one thread) is never published: it runs inline.
 */
#define _GNU_SOURCE
#include "runtime/runtime.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#include "ir/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

enum {
    MAX_THREADS = 1024,               /* chunks per job fit the 16-bit fields of `state` */
    SPIN_NS = 80000,                  /* spin this long for work (or completion), then sleep */
    SPIN_PURE_NS = 5000,              /* ... the first part without yielding the core */
    SPIN_CHECK = 32,                  /* pause instructions between clock reads */
};

typedef struct worker_arg {
    weft_threadpool *pool;
    int index;                        /* 1 .. n_threads-1; the submitter is chunk 0 */
    _Alignas(64) atomic_int cpu;      /* the CPU it last ran a chunk on (a hint) */
} worker_arg;

struct weft_threadpool {
    int n_threads;                    /* workers + the submitting thread */
    pthread_t *threads;               /* n_threads-1 entries */
    worker_arg *args;                 /* n_threads-1 entries */
    int n_started;                    /* workers successfully created */

    /* Written by the submitter, read by workers: the job, its state word and the sleep
     * bookkeeping share one cache line, so a worker fetches one line per job. The job fields
     * are stable while any worker has a chunk of it (see the file comment). */
    _Alignas(64) weft_rt_body body;
    void *closure;
    int64_t extent;                   /* iterations, > 0 */
    _Atomic uint64_t state;           /* generation << 32 | n_chunks << 16 | next unclaimed chunk */
    atomic_uint wake_seq;             /* futex word workers sleep on; bumped to wake them */
    atomic_int n_sleeping;            /* workers asleep (or about to sleep) on wake_seq */
    atomic_bool shutdown;
    atomic_flag busy;                 /* set while a submission is in progress */
    atomic_int submit_cpu;            /* the CPU the submitter published the job from (a hint) */

    /* written by workers, polled by the submitter */
    _Alignas(64) atomic_int pending;  /* chunks of the current job not yet finished */
    atomic_int submitter_waiting;     /* the submitter sleeps (or is about to) on pending */

#ifndef __linux__
    pthread_mutex_t mu;               /* the sleep fallback: a condition variable per pool */
    pthread_cond_t cv;
#endif
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

/* ---- sleeping: wait while *word == expected; wake every waiter on word ----------------- */

#ifdef __linux__
static void word_wait(weft_threadpool *p, void *word, unsigned expected)
{
    (void)p;
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void word_wake(weft_threadpool *p, void *word)
{
    (void)p;
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#else
/* The waker changed the word before calling word_wake, and the waiter re-checks it under the
 * mutex, so a wake between the check and the wait cannot be missed. */
static void word_wait(weft_threadpool *p, void *word, unsigned expected)
{
    pthread_mutex_lock(&p->mu);
    if (atomic_load((atomic_uint *)word) == expected) pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

static void word_wake(weft_threadpool *p, void *word)
{
    (void)word;
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}
#endif

/* Spins (pause) until done(p, arg) or SPIN_NS have passed; returns whether done. The core
 * is yielded between clock reads once SPIN_PURE_NS have passed, and from the start when
 * `crowded` says the thread waited for may be queued behind this one on the same CPU (the
 * scheduler often wakes a thread on its waker's CPU): spinning there only delays it. */
static bool spin_until(weft_threadpool *p, bool (*done)(weft_threadpool *, uint64_t), uint64_t arg,
                       bool (*crowded)(weft_threadpool *, uint64_t))
{
    int64_t start = now_ns();
    for (;;) {
        for (int k = 0; k < SPIN_CHECK; k++) {
            if (done(p, arg)) return true;
            cpu_relax();
        }
        int64_t spent = now_ns() - start;
        if (spent > SPIN_NS) return done(p, arg);
        if (spent > SPIN_PURE_NS || crowded(p, arg)) sched_yield();
    }
}

static int this_cpu(void)
{
#ifdef __linux__
    return sched_getcpu();
#else
    return -1;
#endif
}

/* ---- workers -------------------------------------------------------------------------- */

/* Chunk i of n over [0, extent): sizes differ by at most one, larger chunks first. */
static void chunk_range(int64_t extent, int n, int i, int64_t *begin, int64_t *end)
{
    int64_t base = extent / n, rem = extent % n;
    *begin = (int64_t)i * base + (i < rem ? i : rem);
    *end = *begin + base + (i < rem ? 1 : 0);
}

static uint64_t state_gen(uint64_t s) { return s >> 32; }
static int state_chunks(uint64_t s) { return (int)((s >> 16) & 0xffff); }
static int state_next(uint64_t s) { return (int)(s & 0xffff); }

/* Claims and runs chunks of job generation `gen` until none is left (or a newer job is
 * published); returns how many this thread ran. */
static int run_chunks(weft_threadpool *p, uint64_t gen, atomic_int *cpu_hint)
{
    int ran = 0;
    uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);
    for (;;) {
        if (state_gen(s) != gen || state_next(s) >= state_chunks(s)) return ran;
        if (!atomic_compare_exchange_weak_explicit(&p->state, &s, s + 1, memory_order_acq_rel, memory_order_acquire))
            continue; /* s now holds the current word */
        /* chunk state_next(s) of this job is ours: its fields stay put until we finish it */
        if (cpu_hint) atomic_store_explicit(cpu_hint, this_cpu(), memory_order_relaxed);
        int64_t begin, end;
        chunk_range(p->extent, state_chunks(s), state_next(s), &begin, &end);
        p->body(p->closure, begin, end);
        ran++;
        /* seq_cst: the decrement is ordered before reading submitter_waiting */
        if (atomic_fetch_sub(&p->pending, 1) == 1 && cpu_hint && atomic_load(&p->submitter_waiting))
            word_wake(p, &p->pending);
        s = atomic_load_explicit(&p->state, memory_order_acquire);
    }
}

static bool has_work(weft_threadpool *p, uint64_t seen)
{
    return state_gen(atomic_load_explicit(&p->state, memory_order_acquire)) != seen ||
           atomic_load_explicit(&p->shutdown, memory_order_acquire);
}

/* A worker waiting for work shares its CPU with the submitter. */
static bool worker_crowded(weft_threadpool *p, uint64_t seen)
{
    (void)seen;
    int cpu = this_cpu();
    return cpu >= 0 && cpu == atomic_load_explicit(&p->submit_cpu, memory_order_relaxed);
}

/* Waits until the generation differs from `seen` or the pool shuts down; returns the state. */
static uint64_t wait_for_work(weft_threadpool *p, uint64_t seen)
{
    if (!spin_until(p, has_work, seen, worker_crowded)) {
        atomic_fetch_add(&p->n_sleeping, 1); /* seq_cst: before the re-check below */
        for (;;) {
            unsigned w = atomic_load(&p->wake_seq);
            if (has_work(p, seen)) break;
            word_wait(p, &p->wake_seq, w);
        }
        atomic_fetch_sub(&p->n_sleeping, 1);
    }
    return atomic_load_explicit(&p->state, memory_order_acquire);
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
        run_chunks(p, seen, &arg->cpu);
    }
    return NULL;
}

/* ---- create / destroy ------------------------------------------------------------------ */

static void stop_workers(weft_threadpool *p)
{
    atomic_store(&p->shutdown, true);
    atomic_fetch_add(&p->wake_seq, 1);
    word_wake(p, &p->wake_seq);
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
    weft_threadpool *p = aligned_alloc(64, (sizeof *p + 63) & ~(size_t)63);
    if (!p) return weft_fail(WEFT_ERR_NOMEM, "weft_threadpool_create: out of memory");
    memset(p, 0, sizeof *p);
    p->n_threads = n_threads;
    atomic_init(&p->state, 0);
    atomic_init(&p->wake_seq, 0);
    atomic_init(&p->n_sleeping, 0);
    atomic_init(&p->shutdown, false);
    atomic_flag_clear(&p->busy);
    atomic_init(&p->pending, 0);
    atomic_init(&p->submitter_waiting, 0);
    atomic_init(&p->submit_cpu, -1);
#ifndef __linux__
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
#endif
    int n_workers = n_threads - 1;
    if (n_workers > 0) {
        p->threads = calloc((size_t)n_workers, sizeof *p->threads);
        p->args = aligned_alloc(64, sizeof *p->args * (size_t)n_workers);
        if (!p->threads || !p->args) {
            weft_threadpool_destroy(p);
            return weft_fail(WEFT_ERR_NOMEM, "weft_threadpool_create: out of memory for %d workers",
                             n_workers);
        }
    }
    for (int i = 0; i < n_workers; i++) {
        p->args[i].pool = p;
        p->args[i].index = i + 1;
        atomic_init(&p->args[i].cpu, -1);
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
#ifndef __linux__
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
#endif
    free(p->args);
    free(p->threads);
    free(p);
}

int weft_threadpool_size(const weft_threadpool *p) { return p ? p->n_threads : 1; }

/* ---- parallel-for ----------------------------------------------------------------------- */

static bool all_done(weft_threadpool *p, uint64_t unused)
{
    (void)unused;
    return atomic_load_explicit(&p->pending, memory_order_acquire) == 0;
}

/* The submitter waiting for completion may hold the CPU a worker needs: it woke sleeping
 * workers for this job (arg != 0), or a worker last ran on this CPU. */
static bool submitter_crowded(weft_threadpool *p, uint64_t woke)
{
    if (woke) return true;
    int cpu = this_cpu();
    int n = state_chunks(atomic_load_explicit(&p->state, memory_order_relaxed));
    for (int i = 1; cpu >= 0 && i < n; i++)
        if (atomic_load_explicit(&p->args[i - 1].cpu, memory_order_relaxed) == cpu) return true;
    return false;
}

/* Waits until every worker chunk of the current job is done: spin, then sleep on pending. */
static void wait_for_done(weft_threadpool *p, bool woke)
{
    if (spin_until(p, all_done, woke, submitter_crowded)) return;
    atomic_store(&p->submitter_waiting, 1); /* seq_cst: before the re-check below */
    for (;;) {
        int left = atomic_load(&p->pending);
        if (left == 0) break;
        word_wait(p, &p->pending, (unsigned)left);
    }
    atomic_store_explicit(&p->submitter_waiting, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire); /* the workers' writes happen before return */
}

void weft_rt_parallel_for(weft_threadpool *p, weft_rt_body body, void *closure, int64_t extent)
{
    if (extent <= 0) return;
    int n_chunks = p ? p->n_threads : 1;
    if (extent < n_chunks) n_chunks = (int)extent;
    if (n_chunks <= 1 || in_parallel || atomic_flag_test_and_set_explicit(&p->busy, memory_order_acquire)) {
        body(closure, 0, extent);
        return;
    }
    p->body = body;
    p->closure = closure;
    p->extent = extent;
    atomic_store_explicit(&p->pending, n_chunks, memory_order_relaxed);
    uint64_t gen = (state_gen(atomic_load_explicit(&p->state, memory_order_relaxed)) + 1) & 0xffffffffu;
    if (gen == 0) gen = 1; /* generation 0 is the workers' initial "seen" */
    atomic_store_explicit(&p->submit_cpu, this_cpu(), memory_order_relaxed);
    /* seq_cst: publishes the job fields (release) and is ordered before reading n_sleeping */
    atomic_store(&p->state, gen << 32 | (uint64_t)n_chunks << 16);
    bool woke = atomic_load(&p->n_sleeping) > 0;
    if (woke) {
        atomic_fetch_add(&p->wake_seq, 1);
        word_wake(p, &p->wake_seq);
    }
    in_parallel = true;
    run_chunks(p, gen, NULL);
    in_parallel = false;
    wait_for_done(p, woke);
    atomic_flag_clear_explicit(&p->busy, memory_order_release);
}
