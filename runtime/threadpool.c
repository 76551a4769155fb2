/* Persistent thread pool and the cheap fork-join parallel-for called by generated code.
 *
 * A pool of n threads is n-1 workers plus the submitting thread. A job over [0, extent) has
 * one chunk per thread (fewer when the extent is smaller), chunk 0 the submitter's and chunk i
 * worker i's, and each chunk is cut into up to PIECES pieces. A thread runs the pieces of its
 * own chunk in order, then takes the pieces nobody has taken yet of the other chunks: a
 * thread whose core another process takes mid-chunk (these VMs share their cores) holds up
 * the job by at most the piece it runs, not by the rest of its chunk, and a thread that
 * finishes early helps the others. Without such load every thread runs its own chunk, one
 * contiguous range as before.
 *
 * Publishing a job: the submitter writes the job fields (body, closure, extent) and, for each
 * chunk, its taken word (generation << 16 | pieces << 8 | 0) and done word (generation << 16),
 * each on a cache line of its own, then one seq_cst store of `state`, which packs the job
 * generation and the number of chunks. A thread takes piece k of a chunk by compare-and-swap
 * of its taken word from ... | k to ... | k + 1 (a word of another generation: the job has
 * ended), runs it, and adds one to the chunk's done word. The submitter returns when every chunk's done word
 * counts all its pieces. In the common case each chunk's words stay in its owner's cache until
 * the submitter reads them at the end: the hot path is the job line to the worker and its done
 * line back. No mutex on this path.
 *
 * Waiting is bounded spinning, then sleeping on a futex (Linux; a mutex + condition variable
 * elsewhere):
 *  - a worker waiting for the next job spins on `state` with a pause instruction for
 *    SPIN_NS (80 us), yielding the core now and then after the first SPIN_PURE_NS, so a
 *    model's kernels, which follow each other within microseconds, find it awake: on these
 *    VMs a sleeping thread takes 15-30 us to wake, more than most kernels of a small model.
 *    After the window it sleeps on `wake_seq`, so an idle pool costs a concurrent process at
 *    most 80 us of one core per job;
 *  - the submitter waiting for a piece another thread runs spins the same way, then sleeps on
 *    `done_seq`;
 *  - a waiting thread yields at once when the thread it waits for may be queued behind it
 *    on the same CPU (the scheduler often wakes a thread on its waker's CPU).
 *    A worker woken from its sleep onto the submitter's CPU pins itself to another CPU until
 *    it next sleeps (pin_away_from_submitter).
 * Sleepers are found with a Dekker-style handshake on seq_cst atomics: a sleeper increments
 * `n_sleeping` (or sets `submitter_waiting`) before re-checking its condition and sleeping;
 * the waker changes the condition before reading the sleeper count. One of the two sees the
 * other, and the futex wait itself re-checks the word, so no wake-up is lost.
 *
 * Invariants:
 *  - The job fields and chunk words are written only while no other thread can use them: a
 *    thread reads the job fields only after taking a piece of the current generation, the
 *    submitter does not return (so cannot publish the next job) until every piece is done
 *    (release; the submitter reads the done words with acquire), and a taken word names its
 *    generation, so a late thread can never take a piece of a job that has ended.
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

#include "runtime/error.h"
#include "runtime/mem.h"

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
    PIECES = WEFT_RT_PIECES,          /* pieces per chunk, the unit other threads may take */
};

/* A chunk's words, each on a line of its own: pieces taken and pieces done, generation << 16 |
 * count. The owner's taking stays in its cache; the submitter reads `done` at the end. */
typedef struct chunk_words {
    _Alignas(64) _Atomic uint64_t taken;
    _Alignas(64) _Atomic uint64_t done;
} chunk_words;

typedef struct worker_arg {
    _Alignas(64) weft_threadpool *pool; /* a line per worker: `cpu` is written per job */
    int index;                        /* 1 .. n_threads-1: the chunk it owns */
    atomic_int cpu;                   /* the CPU it last ran a piece on (a hint) */
    int pin_cpu;                      /* the CPU it starts pinned to, -1: none (see choose_worker_cpus) */
    bool pinned;                      /* still pinned: until it first sleeps (worker's own) */
} worker_arg;

struct weft_threadpool {
    int n_threads;                    /* workers + the submitting thread */
    pthread_t *threads;               /* n_threads-1 entries */
    worker_arg *args;                 /* n_threads-1 entries */
    chunk_words *chunks;              /* n_threads entries: chunk 0 is the submitter's */
    int n_started;                    /* workers successfully created */
    cpu_set_t cpus;                   /* this process's CPUs when the pool was made */

    /* Written by the submitter, read by workers: the job, its state word and the sleep
     * bookkeeping share one cache line, so a worker fetches one line per job. The job fields
     * are stable while any worker has a claimed chunk of it (see the file comment). */
    _Alignas(64) weft_rt_body body;
    void *closure;
    int64_t extent;                   /* iterations, > 0 */
    _Atomic uint64_t state;           /* generation (48 bits, never wraps) << 16 | n_chunks */
    atomic_uint wake_seq;             /* futex word workers sleep on; bumped to wake them */
    atomic_int n_sleeping;            /* workers asleep (or about to sleep) on wake_seq */
    atomic_bool shutdown;
    atomic_uint done_seq;             /* futex word the submitter sleeps on; bumped by done */
    atomic_int submitter_waiting;     /* the submitter sleeps (or is about to) on done_seq */

    /* Written by submitters only, off the line the workers poll. */
    _Alignas(64) atomic_flag busy;    /* set while a submission is in progress */
    atomic_int submit_cpu;            /* the CPU the submitter published the job from (a hint) */

#ifndef __linux__
    _Alignas(64) pthread_mutex_t mu;  /* the sleep fallback: a condition variable per pool */
    pthread_cond_t cv;
#endif
};
_Static_assert(offsetof(struct weft_threadpool, submitter_waiting) + sizeof(atomic_int) -
                   offsetof(struct weft_threadpool, body) <= 64,
               "the job fields fit one cache line");

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

static uint64_t state_gen(uint64_t s) { return s >> 16; }
static int state_chunks(uint64_t s) { return (int)(s & 0xffff); }

/* Pieces of chunk c of n (its length split in at most PIECES). */
static int chunk_pieces(int64_t extent, int n, int c)
{
    int64_t begin, end;
    chunk_range(extent, n, c, &begin, &end);
    return end - begin < PIECES ? (int)(end - begin) : PIECES;
}

/* A taken word: generation << 16 | pieces << 8 | pieces taken; a done word: generation << 16
 * | pieces done (so a thread decides from the word alone, before it may read the job). */
static uint64_t taken_word(uint64_t gen, int pieces) { return gen << 16 | (uint64_t)pieces << 8; }

/* Takes and runs pieces of chunk c of job generation gen until none is left untaken. A taken
 * word of another generation means the job has ended. */
static void run_pieces(weft_threadpool *p, int c, uint64_t gen, int n_chunks, bool wake_submitter)
{
    chunk_words *cw = &p->chunks[c];
    for (;;) {
        uint64_t t = atomic_load_explicit(&cw->taken, memory_order_acquire);
        int k = (int)(t & 0xff), np = (int)(t >> 8 & 0xff);
        if (t >> 16 != gen || k >= np) return;
        if (!atomic_compare_exchange_weak_explicit(&cw->taken, &t, t + 1, memory_order_acquire, memory_order_relaxed))
            continue;
        /* the job's fields are stable now: it cannot end before this piece is done */
        int64_t begin, end, pb, pe;
        chunk_range(p->extent, n_chunks, c, &begin, &end);
        chunk_range(end - begin, np, k, &pb, &pe);
        p->body(p->closure, begin + pb, begin + pe);
        /* seq_cst: the piece's writes (release) before reading the flag */
        atomic_fetch_add(&cw->done, 1);
        if (wake_submitter && atomic_load(&p->submitter_waiting)) {
            atomic_fetch_add(&p->done_seq, 1);
            word_wake(p, &p->done_seq);
        }
    }
}

/* Worker w's share of job generation gen: its own chunk, then untaken pieces of the others. */
static void run_job(weft_threadpool *p, worker_arg *w, uint64_t gen, int n_chunks)
{
    atomic_store_explicit(&w->cpu, this_cpu(), memory_order_relaxed);
    if (w->index < n_chunks) run_pieces(p, w->index, gen, n_chunks, true);
    for (int c = 0; c < n_chunks; c++)
        if (c != w->index) run_pieces(p, c, gen, n_chunks, true);
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

/* A worker just woken on its submitter's CPU (the scheduler often wakes a thread next to its
 * waker) pins itself to another CPU of the pool's set, its starting CPU where it can, until it
 * next sleeps. Left there it yields to the submitter (worker_crowded), which then runs the
 * pieces alone, and the scheduler let it stay for tens of milliseconds while the other core
 * idled: a 2-thread model whose pool had slept between requests ran at one thread's speed
 * (gelu_ffn timed by turns after ONNX Runtime's: 0.70 ms, 0.37 alone; the worker had run 320 of
 * 2490 pieces; pinned away, 0.35-0.37 and 950-1130). WEFT_PIN_THREADS=0 turns this off with the
 * starting pin. */
static void pin_away_from_submitter(weft_threadpool *p, worker_arg *w)
{
    if (w->pin_cpu < 0) return; /* pinning off, or one CPU */
    int here = this_cpu();
    if (here < 0 || here != atomic_load_explicit(&p->submit_cpu, memory_order_relaxed)) return;
    int to = w->pin_cpu;
    for (int c = 0; to == here && c < CPU_SETSIZE; c++)
        if (c != here && CPU_ISSET(c, &p->cpus)) to = c;
    if (to == here) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(to, &one);
    w->pinned = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

/* Waits until the generation differs from `seen` or the pool shuts down; returns the state. */
static uint64_t wait_for_work(weft_threadpool *p, worker_arg *w, uint64_t seen)
{
    if (!spin_until(p, has_work, seen, worker_crowded)) {
        if (w->pinned) { /* from now on the scheduler places this worker (see choose_worker_cpus) */
            (void)pthread_setaffinity_np(pthread_self(), sizeof p->cpus, &p->cpus);
            w->pinned = false;
        }
        atomic_fetch_add(&p->n_sleeping, 1); /* seq_cst: before the re-check below */
        for (;;) {
            unsigned seq = atomic_load(&p->wake_seq);
            if (has_work(p, seen)) break;
            word_wait(p, &p->wake_seq, seq);
        }
        atomic_fetch_sub(&p->n_sleeping, 1);
        pin_away_from_submitter(p, w);
    }
    return atomic_load_explicit(&p->state, memory_order_acquire);
}

static void *worker_main(void *argp)
{
    worker_arg *arg = argp;
    weft_threadpool *p = arg->pool;
    in_parallel = true;
    if (arg->pin_cpu >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(arg->pin_cpu, &one);
        arg->pinned = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0; /* a hint */
    }
    uint64_t seen = 0; /* generation 0 is the initial, empty job */
    for (;;) {
        uint64_t s = wait_for_work(p, arg, seen);
        if (atomic_load_explicit(&p->shutdown, memory_order_acquire)) break;
        seen = state_gen(s);
        run_job(p, arg, seen, state_chunks(s));
    }
    return NULL;
}

/* ---- create / destroy ------------------------------------------------------------------ */

/* Picks for each worker a CPU to start pinned to (the worker pins itself): distinct CPUs of
 * this process's set, starting after the creating thread's current CPU (the caller itself
 * stays free to move). Left to the scheduler, a new worker often starts on its creator's CPU
 * and stays there for tens of milliseconds, so short runs get one core's worth of time. A worker drops its pin the first time it goes to sleep:
 * waking a thread pinned to an idle CPU costs the waker an interrupt to that CPU (about 15 us
 * on these VMs), while an unpinned one is woken next to its waker in a few us; and a pinned
 * worker whose CPU another process takes only costs its chunks, which the submitter then
 * runs. WEFT_PIN_THREADS=0 turns the pinning off. Called before the workers start. */
static void choose_worker_cpus(weft_threadpool *p, int n_workers)
{
    for (int i = 0; i < n_workers; i++) p->args[i].pin_cpu = -1;
    const char *env = getenv("WEFT_PIN_THREADS");
    if (env && !strcmp(env, "0")) return;
    int n = CPU_COUNT(&p->cpus);
    if (n < 2) return;
    int cpus[CPU_SETSIZE], k = 0, here = 0, me = this_cpu();
    for (int c = 0; c < CPU_SETSIZE && k < n; c++)
        if (CPU_ISSET(c, &p->cpus)) {
            if (c == me) here = k;
            cpus[k++] = c;
        }
    for (int i = 0; i < n_workers; i++) p->args[i].pin_cpu = cpus[(here + 1 + i) % k];
}

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
    atomic_init(&p->done_seq, 0);
    atomic_init(&p->submitter_waiting, 0);
    atomic_init(&p->submit_cpu, -1);
#ifndef __linux__
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
#endif
    CPU_ZERO(&p->cpus);
    if (sched_getaffinity(0, sizeof p->cpus, &p->cpus) != 0) CPU_ZERO(&p->cpus);
    int n_workers = n_threads - 1;
    p->chunks = aligned_alloc(64, sizeof *p->chunks * (size_t)n_threads);
    if (!p->chunks) {
        weft_threadpool_destroy(p);
        return weft_fail(WEFT_ERR_NOMEM, "weft_threadpool_create: out of memory");
    }
    for (int i = 0; i < n_threads; i++) atomic_init(&p->chunks[i].taken, 0), atomic_init(&p->chunks[i].done, 0);
    if (n_workers > 0) {
        p->threads = weft_calloc((size_t)n_workers, sizeof *p->threads);
        p->args = aligned_alloc(64, sizeof *p->args * (size_t)n_workers);
        if (!p->threads || !p->args) {
            weft_threadpool_destroy(p);
            return weft_fail(WEFT_ERR_NOMEM, "weft_threadpool_create: out of memory for %d workers",
                             n_workers);
        }
    }
    if (n_workers > 0) choose_worker_cpus(p, n_workers);
    for (int i = 0; i < n_workers; i++) {
        p->args[i].pool = p;
        p->args[i].index = i + 1;
        atomic_init(&p->args[i].cpu, -1);
        p->args[i].pinned = false;
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
    free(p->chunks);
    free(p->threads);
    free(p);
}

int weft_threadpool_size(const weft_threadpool *p) { return p ? p->n_threads : 1; }

/* ---- parallel-for ----------------------------------------------------------------------- */

/* The argument of the submitter's spin: generation << 16 | woke << 15 | chunk. */
static uint64_t wait_arg(uint64_t gen, bool woke, int chunk) { return gen << 16 | (uint64_t)woke << 15 | (uint64_t)chunk; }
static int wait_chunk(uint64_t arg) { return (int)(arg & 0x7fff); }

/* Every piece of the chunk is done (arg: wait_arg). */
static bool chunk_done(weft_threadpool *p, uint64_t arg)
{
    chunk_words *cw = &p->chunks[wait_chunk(arg)];
    uint64_t t = atomic_load_explicit(&cw->taken, memory_order_relaxed);
    return atomic_load_explicit(&cw->done, memory_order_acquire) == (arg >> 16 << 16 | (t >> 8 & 0xff));
}

/* The submitter waiting for a piece may hold the CPU the thread running it needs: it woke
 * sleeping workers for this job, or the chunk's owner last ran on this CPU (arg: wait_arg). */
static bool submitter_crowded(weft_threadpool *p, uint64_t arg)
{
    if (arg & (1u << 15)) return true;
    int cpu = this_cpu(), c = wait_chunk(arg);
    return cpu >= 0 && c > 0 && atomic_load_explicit(&p->args[c - 1].cpu, memory_order_relaxed) == cpu;
}

/* After its own chunk: takes the untaken pieces of the others, then waits for the pieces
 * other threads run (spin, then sleep on done_seq). */
static void finish_job(weft_threadpool *p, uint64_t gen, int n_chunks, bool woke)
{
    for (int c = 1; c < n_chunks; c++) run_pieces(p, c, gen, n_chunks, false);
    for (int c = 0; c < n_chunks; c++) {
        uint64_t arg = wait_arg(gen, woke, c);
        if (chunk_done(p, arg)) continue;
        if (spin_until(p, chunk_done, arg, submitter_crowded)) continue;
        atomic_store(&p->submitter_waiting, 1); /* seq_cst: before the re-check below */
        for (;;) {
            unsigned d = atomic_load(&p->done_seq);
            if (chunk_done(p, arg)) break;
            word_wait(p, &p->done_seq, d);
        }
        atomic_store_explicit(&p->submitter_waiting, 0, memory_order_relaxed);
    }
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
    uint64_t gen = state_gen(atomic_load_explicit(&p->state, memory_order_relaxed)) + 1; /* from 1 */
    for (int c = 0; c < n_chunks; c++) { /* released by the store of state below */
        atomic_store_explicit(&p->chunks[c].taken, taken_word(gen, chunk_pieces(extent, n_chunks, c)), memory_order_relaxed);
        atomic_store_explicit(&p->chunks[c].done, gen << 16, memory_order_relaxed);
    }
    atomic_store_explicit(&p->submit_cpu, this_cpu(), memory_order_relaxed);
    /* seq_cst: publishes the job fields (release) and is ordered before reading n_sleeping */
    atomic_store(&p->state, gen << 16 | (uint64_t)n_chunks);
    bool woke = atomic_load(&p->n_sleeping) > 0;
    if (woke) {
        atomic_fetch_add(&p->wake_seq, 1);
        word_wake(p, &p->wake_seq);
    }
    in_parallel = true;
    run_pieces(p, 0, gen, n_chunks, false);
    finish_job(p, gen, n_chunks, woke);
    in_parallel = false;
    atomic_flag_clear_explicit(&p->busy, memory_order_release);
}
