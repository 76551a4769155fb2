/* Safe measurement of compiled kernels in a forked worker (tuner/measure.h).
 *
 * The parent forks; the child (the "worker") allocates the parameter buffers itself (so a huge
 * or failing allocation only hurts the worker), fills them with deterministic random values,
 * creates its own thread pool (a pool made before fork() has no threads in the child), runs the
 * kernel and writes one fixed-size weft_measure_result through a pipe, then _exit()s.
 *
 * What the worker runs. By default (host targets) it calls the parent's kernel: JIT code lives
 * in the parent's memory, which fork() copies. With compile_in_worker, and always on a target
 * with buffer operations (a device target: its context does not survive fork()), the worker
 * uses nothing of the parent's target: it creates its own instance (ops->create) and compiles
 * the loop function (plain data, copied by fork()) itself; compile errors are the result's.
 * On a device target the worker allocates each param on the device (ops->alloc), uploads the
 * random inputs, runs and synchronizes inside each timed run (so the time is the kernel's, not
 * the launch's), and downloads the params for the check. On a host target the same path runs
 * on host buffers, which is what the tests use to exercise it without a device.
 *
 * The parent waits on the pipe with poll() slices and waitpid(pid, WNOHANG) until the child has
 * exited or the deadline passes (then SIGKILL). The child is always reaped, and only that pid
 * is waited for, so other children of the caller are left alone.
 *
 * Outcome -> status:
 *   result received, child exited 0        -> the child's status (WEFT_OK, or a run() error
 *                                             with its weft_last_error text)
 *   deadline passed                        -> WEFT_ERR_TIMEOUT "timed out after X s"
 *   child died by a signal                 -> WEFT_ERR_DEVICE "killed by signal N (name)"
 *   nonzero exit / no or short result      -> WEFT_ERR_INTERNAL
 *
 * memory_limit is RLIMIT_AS in the child (set before the param buffers are allocated, so a
 * too-large param is a WEFT_ERR_NOMEM result); in AddressSanitizer builds it is counted on top
 * of the address space already reserved at fork time. A large ALLOCATE inside the kernel that
 * fails the limit skips its body and the run is WEFT_ERR_NOMEM (the generated code checks
 * weft_rt_alloc's result; runtime/mem.h).
 *
 * In the child the crash signals are reset to SIG_DFL before the kernel runs, so a handler the
 * caller installed (cmocka's, a sanitizer's) cannot longjmp back into the caller's code in the
 * child; the crash then shows up in the parent as "killed by signal".
 *
 * Timing: one untimed warm-up run, then runs are timed one by one until both min_repeat runs
 * and min_time_s of measured time are reached, stopping at max_repeat. The median is over all
 * timed runs; times[] keeps the first WEFT_MEASURE_MAX_TIMES of them (n_times is how many are
 * stored there). With flush_cache a 64 MiB buffer is written between runs (not timed); with
 * evict_bytes, a buffer of that size (the tuner: twice L2, so the runs see the caches as a
 * model's kernel does, its weights and inputs not left in L1/L2 by the run before).
 */
#include "tuner/measure.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ir/error.h"
#include "runtime/runtime.h"
#include "runtime/mem.h"

enum {
    MAX_TIMED_RUNS = 100000, /* hard cap on max_repeat (the child keeps every time for the median) */
    POLL_SLICE_MS = 20,
};
#define FLUSH_BYTES ((size_t)64 << 20)

weft_measure_opts weft_measure_opts_default(void)
{
    weft_measure_opts o = {
        .timeout_s = 10.0,
        .min_time_s = 0.1,
        .min_repeat = 3,
        .max_repeat = 100,
        .flush_cache = false,
        .evict_bytes = 0,
        .threads = 0,
        .memory_limit = 0,
        .seed = 1,
        .compile_in_worker = false,
    };
    return o;
}

size_t weft_measure_evict_bytes(const weft_target_caps *caps)
{
    return 2 * (size_t)(caps && caps->l2_bytes > 0 ? caps->l2_bytes : 1024 * 1024);
}

static void set_msg(weft_measure_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_msg(weft_measure_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
}

/* ---- child side ------------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t param_bytes(const weft_buffer *b)
{
    int64_t n = b->size > 0 ? b->size : 0;
    return (size_t)n * (size_t)weft_dtype_bytes(b->dtype);
}

/* Floats in [-1, 1), ints in [0, 8), bools 0/1; param i has its own stream from the seed. */
static void fill_random(void *p, const weft_buffer *b, uint64_t seed, int i)
{
    uint64_t s = seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(i + 1));
    int64_t n = b->size;
    weft_dtype t = b->dtype;
    if (weft_dtype_is_float(t) && t.bits == 32) {
        float *f = p;
        for (int64_t e = 0; e < n; e++) f[e] = (float)((double)(splitmix64(&s) >> 40) * 0x1p-23 - 1.0);
    } else if (weft_dtype_is_float(t) && t.bits == 64) {
        double *f = p;
        for (int64_t e = 0; e < n; e++) f[e] = (double)(splitmix64(&s) >> 11) * 0x1p-52 - 1.0;
    } else if (weft_dtype_is_int(t) && t.bits == 32) {
        int32_t *v = p;
        for (int64_t e = 0; e < n; e++) v[e] = (int32_t)(splitmix64(&s) >> 61);
    } else if (weft_dtype_is_int(t) && t.bits == 64) {
        int64_t *v = p;
        for (int64_t e = 0; e < n; e++) v[e] = (int64_t)(splitmix64(&s) >> 61);
    } else if (weft_dtype_is_bool(t)) {
        uint8_t *v = p;
        for (int64_t e = 0; e < n; e++) v[e] = (uint8_t)(splitmix64(&s) >> 63);
    } /* anything else stays zeroed */
}

/* Allocates (zeroed) and fills every param of lf; NULL entries on failure (message in r). */
static void **alloc_params(const weft_loop_func *lf, uint64_t seed, weft_measure_result *r)
{
    int n = lf->n_params;
    void **args = weft_calloc((size_t)(n > 0 ? n : 1), sizeof *args);
    if (!args) {
        r->status = WEFT_ERR_NOMEM;
        set_msg(r, "measure: cannot allocate the argument list");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        const weft_buffer *b = lf->params[i];
        size_t bytes = param_bytes(b);
        args[i] = weft_rt_alloc(bytes ? bytes : 64);
        if (!args[i]) {
            r->status = WEFT_ERR_NOMEM;
            set_msg(r, "measure: cannot allocate param %d (%s, %zu bytes)", i, b->name ? b->name : "?", bytes);
            for (int j = 0; j < i; j++) weft_rt_free(args[j]);
            free(args);
            return NULL;
        }
        fill_random(args[i], b, seed, i);
    }
    return args;
}

static void free_params(void **args, int n)
{
    if (!args) return;
    for (int i = 0; i < n; i++) weft_rt_free(args[i]);
    free(args);
}

void weft_measure_child_reset_signals(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP, SIGPIPE, SIGXCPU, SIGXFSZ,
                               SIGALRM, SIGTERM, SIGINT};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) (void)sigaction(sigs[i], &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
}

#if defined(__SANITIZE_ADDRESS__)
#define WEFT_MEASURE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_MEASURE_ASAN 1
#endif
#endif

/* Under AddressSanitizer the process has already reserved terabytes of address space (shadow
 * memory, allocator regions), so an absolute RLIMIT_AS would make every allocation fail; the
 * limit is then counted on top of what is mapped now (VmSize). 0 in normal builds. */
static rlim_t asan_reserved_bytes(void)
{
#ifdef WEFT_MEASURE_ASAN
    char text[128];
    int fd = open("/proc/self/statm", O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return 0;
    text[n] = '\0';
    unsigned long long pages = strtoull(text, NULL, 10);
    long page = sysconf(_SC_PAGESIZE);
    return (rlim_t)pages * (rlim_t)(page > 0 ? page : 4096);
#else
    return 0;
#endif
}

/* Sets up the child; false (with r filled) on failure. */
static bool child_setup(const weft_measure_opts *o, weft_threadpool **pool, weft_measure_result *r)
{
    weft_measure_child_reset_signals();
    if (o->memory_limit > 0) {
        rlim_t lim = (rlim_t)o->memory_limit + asan_reserved_bytes();
        struct rlimit cur;
        if (getrlimit(RLIMIT_AS, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && lim > cur.rlim_max) lim = cur.rlim_max;
        struct rlimit rl = {.rlim_cur = lim, .rlim_max = lim};
        if (setrlimit(RLIMIT_AS, &rl) != 0) {
            r->status = WEFT_ERR_INTERNAL;
            set_msg(r, "measure: setrlimit(RLIMIT_AS, %zu): %s", o->memory_limit, strerror(errno));
            return false;
        }
    }
    weft_status st = weft_threadpool_create(o->threads, pool);
    if (st != WEFT_OK) {
        r->status = st;
        set_msg(r, "measure: thread pool: %s", weft_last_error());
        return false;
    }
    return true;
}

/* What a worker runs: the parent's kernels, or its own compiled from the loop functions. */
typedef struct worker {
    const weft_target_ops *ops;
    weft_target *t;         /* the worker's own instance (compile mode); NULL: the parent's kernels */
    weft_kernel *k, *ref;   /* what runs (ref: check only) */
    bool own;               /* k and ref were compiled here */
    bool device;            /* params live in device memory (ops' buffer operations) */
    weft_threadpool *pool;
    weft_exec ex;
    int fault;              /* test builds: weft_measure_opts.fault */
    const weft_loop_func *lf;
} worker;

static bool fail_st(weft_measure_result *r, weft_status st, const char *what)
{
    r->status = st;
    set_msg(r, "%s%s", what, weft_last_error());
    return false;
}

/* The worker's kernels: the parent's, or compiled by an instance of its own. */
static bool worker_start(worker *w, const weft_target_ops *ops, weft_kernel *k, weft_kernel *ref,
                         const weft_loop_func *lf, const weft_loop_func *ref_lf, bool compile, weft_measure_result *r)
{
    w->ops = ops;
    w->device = !weft_target_is_host(ops);
    weft_measure_child_reset_signals(); /* a crash while compiling is a crash of the worker */
    if (!compile) {
        w->k = k;
        w->ref = ref;
        return true;
    }
    w->own = true;
    weft_error_clear();
    if (ops->create(&w->t) != WEFT_OK) return fail_st(r, WEFT_ERR_DEVICE, "measure: target: ");
    if (ops->compile(w->t, lf, &w->k) != WEFT_OK) return fail_st(r, WEFT_ERR_COMPILE, "compile: ");
    if (ref_lf && ops->compile(w->t, ref_lf, &w->ref) != WEFT_OK) return fail_st(r, WEFT_ERR_COMPILE, "reference: compile: ");
    return true;
}

static void worker_stop(worker *w)
{
    if (w->own) {
        w->ops->kernel_destroy(w->k);
        w->ops->kernel_destroy(w->ref);
        w->ops->destroy(w->t);
    }
}

/* Device copies of the host params (device workers); NULL on failure (message in r). */
static void **dev_params(worker *w, const weft_loop_func *lf, void **host, weft_measure_result *r)
{
    int n = lf->n_params;
    void **dev = weft_calloc((size_t)(n > 0 ? n : 1), sizeof *dev);
    if (!dev) {
        r->status = WEFT_ERR_NOMEM;
        set_msg(r, "measure: cannot allocate the argument list");
        return NULL;
    }
    bool ok = true;
    for (int i = 0; ok && i < n; i++) {
        size_t bytes = param_bytes(lf->params[i]);
        ok = w->ops->alloc(w->t, bytes ? bytes : 64, &dev[i]) == WEFT_OK || fail_st(r, WEFT_ERR_NOMEM, "measure: device: ");
        if (ok && bytes) ok = w->ops->upload(w->t, dev[i], host[i], bytes, &w->ex) == WEFT_OK || fail_st(r, WEFT_ERR_DEVICE, "measure: upload: ");
    }
    if (ok) ok = w->ops->synchronize(w->t, &w->ex) == WEFT_OK || fail_st(r, WEFT_ERR_DEVICE, "measure: upload: ");
    if (ok) return dev;
    for (int i = 0; i < n; i++) w->ops->free_buf(w->t, dev[i]);
    free(dev);
    return NULL;
}

static void free_dev_params(worker *w, void **dev, int n)
{
    for (int i = 0; dev && i < n; i++) w->ops->free_buf(w->t, dev[i]);
    free(dev);
}

/* Copies the device params back into the host ones (device workers). */
static bool download_params(worker *w, const weft_loop_func *lf, void **dev, void **host, weft_measure_result *r)
{
    for (int i = 0; i < lf->n_params; i++) {
        size_t bytes = param_bytes(lf->params[i]);
        if (bytes && w->ops->download(w->t, host[i], dev[i], bytes, &w->ex) != WEFT_OK)
            return fail_st(r, WEFT_ERR_DEVICE, "measure: download: ");
    }
    return w->ops->synchronize(w->t, &w->ex) == WEFT_OK || fail_st(r, WEFT_ERR_DEVICE, "measure: download: ");
}

#ifdef WEFT_TEST_HOOKS
/* The test fault of the candidate's runs (weft_measure_opts.fault), after the kernel ran. */
static void inject_fault(int fault, const weft_loop_func *lf, void **args, bool device)
{
    switch (fault) {
    case WEFT_FAULT_SEGV: raise(SIGSEGV); break;
    case WEFT_FAULT_SPIN:
        for (volatile unsigned long i = 0;; i++) {}
    case WEFT_FAULT_OOB: /* a store 64 GiB past the first buffer: nothing is mapped there */
        if (!device && lf->n_params > 0) {
            volatile char *p = (char *)args[0] + ((size_t)64 << 30);
            *p = 1;
        }
        break;
    case WEFT_FAULT_WRONG:
        for (int i = 0; !device && i < lf->n_params; i++)
            if (weft_dtype_is_float(lf->params[i]->dtype) && lf->params[i]->dtype.bits == 32) ((float *)args[i])[0] += 1.0f;
        break;
    default: break;
    }
}
#endif

/* Runs k once and waits for it (device workers synchronize). */
static bool run_once(worker *w, weft_kernel *k, void **args, const char *what, weft_measure_result *r)
{
    weft_error_clear();
    weft_status st = w->ops->run(k, (void *const *)args, &w->ex);
    if (st == WEFT_OK && w->device) st = w->ops->synchronize(w->t, &w->ex);
#ifdef WEFT_TEST_HOOKS
    if (st == WEFT_OK && k == w->k && w->fault) inject_fault(w->fault, w->lf, args, w->device);
#endif
    if (st == WEFT_OK) return true;
    return fail_st(r, st, what);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static void child_measure(const weft_target_ops *ops, weft_kernel *k, const weft_loop_func *lf, bool compile,
                          const weft_measure_opts *o, weft_measure_result *r)
{
    worker w = {.fault = o->fault, .lf = lf};
    void **host = NULL, **args = NULL;
    /* compile before the memory limit: it is meant for the kernel, not the compiler */
    if (worker_start(&w, ops, k, NULL, lf, NULL, compile, r) && child_setup(o, &w.pool, r)) {
        w.ex.pool = w.pool;
        host = alloc_params(lf, o->seed, r);
    }
    args = host && w.device ? dev_params(&w, lf, host, r) : host;
    int max_rep = o->max_repeat < 1 ? 1 : o->max_repeat;
    if (max_rep > MAX_TIMED_RUNS) max_rep = MAX_TIMED_RUNS;
    int min_rep = o->min_repeat < 1 ? 1 : o->min_repeat;
    if (min_rep > max_rep) max_rep = min_rep > MAX_TIMED_RUNS ? MAX_TIMED_RUNS : min_rep;
    double *times = weft_malloc(sizeof *times * (size_t)max_rep);
    unsigned char *flush = NULL;
    size_t flush_bytes = o->flush_cache ? FLUSH_BYTES : o->evict_bytes;
    if (args && flush_bytes) flush = weft_malloc(flush_bytes);
    if (!args) goto done;
    if (!times || (flush_bytes && !flush)) {
        r->status = WEFT_ERR_NOMEM;
        set_msg(r, "measure: cannot allocate the timing buffers");
        goto done;
    }
    if (!run_once(&w, w.k, args, "", r)) goto done; /* warm-up */
    int n = 0;
    double total = 0;
    while (n < max_rep && (n < min_rep || total < o->min_time_s)) {
        if (flush) memset(flush, n & 0xff, flush_bytes);
        double t0 = weft_rt_now();
        if (!run_once(&w, w.k, args, "", r)) goto done;
        double dt = weft_rt_now() - t0;
        times[n++] = dt;
        total += dt;
    }
    r->n_times = n < WEFT_MEASURE_MAX_TIMES ? n : WEFT_MEASURE_MAX_TIMES;
    memcpy(r->times, times, sizeof *times * (size_t)r->n_times);
    r->median = median_of(times, n);
    r->status = WEFT_OK;
done:
    free(flush);
    free(times);
    if (args != host) free_dev_params(&w, args, lf->n_params);
    free_params(host, lf->n_params);
    worker_stop(&w);
    weft_threadpool_destroy(w.pool);
}

/* weft_measure_pair in the worker: w.k and w.ref run by turns on the same (host) inputs. */
static void child_pair(const weft_target_ops *ops, weft_kernel *k, weft_kernel *other, const weft_loop_func *lf,
                       const weft_measure_opts *o, weft_measure_result *r)
{
    worker w = {.lf = lf};
    void **args = NULL;
    if (worker_start(&w, ops, k, other, lf, NULL, false, r) && child_setup(o, &w.pool, r)) {
        w.ex.pool = w.pool;
        args = alloc_params(lf, o->seed, r);
    }
    int max_rep = o->max_repeat < 1 ? 1 : o->max_repeat > MAX_TIMED_RUNS ? MAX_TIMED_RUNS : o->max_repeat;
    int min_rep = o->min_repeat < 1 ? 1 : o->min_repeat > max_rep ? max_rep : o->min_repeat;
    double *times = weft_malloc(sizeof *times * 2 * (size_t)max_rep);
    size_t flush_bytes = o->flush_cache ? FLUSH_BYTES : o->evict_bytes;
    unsigned char *flush = args && flush_bytes ? weft_malloc(flush_bytes) : NULL;
    if (!args) goto done;
    if (!times || (flush_bytes && !flush)) {
        r->status = WEFT_ERR_NOMEM;
        set_msg(r, "measure: cannot allocate the timing buffers");
        goto done;
    }
    if (!run_once(&w, w.k, args, "", r) || !run_once(&w, w.ref, args, "second kernel: ", r)) goto done; /* warm-up */
    double *tk = times, *to = times + max_rep, total_k = 0, total_o = 0;
    int n = 0;
    while (n < max_rep && (n < min_rep || total_k < o->min_time_s || total_o < o->min_time_s)) {
        for (int side = 0; side < 2; side++) {
            if (flush) memset(flush, (2 * n + side) & 0xff, flush_bytes);
            double t0 = weft_rt_now();
            if (!run_once(&w, side ? w.ref : w.k, args, side ? "second kernel: " : "", r)) goto done;
            double dt = weft_rt_now() - t0;
            (side ? to : tk)[n] = dt;
            *(side ? &total_o : &total_k) += dt;
        }
        n++;
    }
    r->n_times = n < WEFT_MEASURE_MAX_TIMES ? n : WEFT_MEASURE_MAX_TIMES;
    memcpy(r->times, tk, sizeof *tk * (size_t)r->n_times);
    r->median = median_of(tk, n);
    r->median_other = median_of(to, n);
    r->status = WEFT_OK;
done:
    free(flush);
    free(times);
    free_params(args, lf->n_params);
    worker_stop(&w);
    weft_threadpool_destroy(w.pool);
}

/* Element e of a param as double (for comparison); NaN-preserving for floats. */
static double elem(const void *p, weft_dtype t, int64_t e)
{
    if (weft_dtype_is_float(t)) return t.bits == 64 ? ((const double *)p)[e] : (double)((const float *)p)[e];
    if (weft_dtype_is_int(t)) return t.bits == 64 ? (double)((const int64_t *)p)[e] : (double)((const int32_t *)p)[e];
    return (double)((const uint8_t *)p)[e];
}

static void child_check(const weft_target_ops *ops, weft_kernel *k, weft_kernel *ref, const weft_loop_func *lf,
                        const weft_loop_func *ref_lf, bool compile, double tol, const weft_measure_opts *o,
                        weft_measure_result *r)
{
    worker w = {.fault = o->fault, .lf = lf};
    int np = lf->n_params;
    void **cand = NULL, **refa = NULL, **dcand = NULL, **drefa = NULL;
    if (worker_start(&w, ops, k, ref, lf, ref_lf, compile, r) && child_setup(o, &w.pool, r)) {
        w.ex.pool = w.pool;
        cand = alloc_params(lf, o->seed, r);
    }
    refa = cand ? alloc_params(lf, o->seed, r) : NULL;
    if (!cand || !refa) goto done;
    if (w.device) {
        dcand = dev_params(&w, lf, cand, r);
        drefa = dcand ? dev_params(&w, lf, refa, r) : NULL;
        if (!drefa) goto done;
    }
    if (!run_once(&w, w.ref, w.device ? drefa : refa, "reference: ", r)) goto done;
    if (!run_once(&w, w.k, w.device ? dcand : cand, "", r)) goto done;
    if (w.device && (!download_params(&w, lf, drefa, refa, r) || !download_params(&w, lf, dcand, cand, r))) goto done;
    double worst = 0;
    for (int i = 0; i < np; i++) {
        const weft_buffer *b = lf->params[i];
        const void *c = cand[i], *rv = refa[i];
        double scale = 1;
        for (int64_t e = 0; e < b->size; e++) {
            double v = fabs(elem(rv, b->dtype, e));
            if (isfinite(v) && v > scale) scale = v;
        }
        double pmax = 0;
        int64_t at = -1;
        for (int64_t e = 0; e < b->size; e++) {
            double x = elem(c, b->dtype, e), y = elem(rv, b->dtype, e);
            double d;
            if (isnan(x) || isnan(y)) d = (isnan(x) && isnan(y)) ? 0 : INFINITY;
            else if (x == y) d = 0; /* also equal infinities */
            else d = fabs(x - y) / scale;
            if (d > pmax || (at < 0 && d > 0)) {
                pmax = d;
                at = e;
            }
        }
        if (pmax > worst) worst = pmax;
        if (!(pmax <= tol)) {
            r->max_error = pmax;
            r->status = WEFT_ERR_INTERNAL;
            set_msg(r, "output differs from the naive schedule by %g (tol %g): param %d (%s) element %lld: %g vs %g",
                    pmax, tol, i, b->name ? b->name : "?", (long long)at, elem(c, b->dtype, at),
                    elem(rv, b->dtype, at));
            goto done;
        }
    }
    r->max_error = worst;
    r->status = WEFT_OK;
done:
    free_dev_params(&w, dcand, np);
    free_dev_params(&w, drefa, np);
    free_params(cand, np);
    free_params(refa, np);
    worker_stop(&w);
    weft_threadpool_destroy(w.pool);
}

/* ---- parent side ------------------------------------------------------------------------ */

typedef struct job {
    int kind; /* 0 measure, 1 check, 2 pair */
    const weft_target_ops *ops;
    weft_kernel *k, *ref;
    const weft_loop_func *lf, *ref_lf;
    bool compile; /* in the worker, with its own target instance */
    double tol;
    const weft_measure_opts *o;
} job;

void weft_measure_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        c += w;
        n -= (size_t)w;
    }
}

static weft_status finish(weft_measure_result *out, weft_status st)
{
    out->status = st;
    if (st == WEFT_OK) return WEFT_OK;
    return weft_fail(st, "%s", out->error);
}

static weft_status run_job(const job *j, weft_measure_result *out)
{
    double timeout = j->o->timeout_s;
    int fds[2];
    if (pipe(fds) != 0) {
        set_msg(out, "measure: pipe: %s", strerror(errno));
        return finish(out, WEFT_ERR_INTERNAL);
    }
    double t0 = weft_rt_now();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        set_msg(out, "measure: fork: %s", strerror(e));
        return finish(out, e == ENOMEM || e == EAGAIN ? WEFT_ERR_NOMEM : WEFT_ERR_INTERNAL);
    }
    if (pid == 0) {
        close(fds[0]);
        weft_measure_result r;
        memset(&r, 0, sizeof r);
        r.status = WEFT_ERR_INTERNAL;
        if (j->kind == 0) child_measure(j->ops, j->k, j->lf, j->compile, j->o, &r);
        else if (j->kind == 2) child_pair(j->ops, j->k, j->ref, j->lf, j->o, &r);
        else child_check(j->ops, j->k, j->ref, j->lf, j->ref_lf, j->compile, j->tol, j->o, &r);
        weft_measure_write_all(fds[1], &r, sizeof r);
        _exit(0); /* closes the pipe: the parent sees EOF as the child goes away */
    }
    close(fds[1]);
    int rfd = fds[0];

    weft_measure_result r;
    memset(&r, 0, sizeof r);
    size_t got = 0;
    bool eof = false, exited = false, timed_out = false;
    int wstatus = 0;
    for (;;) {
        if (!exited) {
            pid_t w = waitpid(pid, &wstatus, WNOHANG);
            if (w == pid) exited = true;
            else if (w < 0 && errno != EINTR) { /* cannot happen for our own child; stop waiting */
                exited = true;
                wstatus = 0;
            }
        }
        if (eof && exited) break;
        if (exited) {
            /* Drain what is left without blocking (a leaked write end elsewhere keeps the pipe open). */
            struct pollfd pf = {.fd = rfd, .events = POLLIN};
            if (poll(&pf, 1, 0) <= 0) break;
        }
        double left = timeout - (weft_rt_now() - t0);
        if (!exited && left <= 0) {
            timed_out = true;
            kill(pid, SIGKILL);
            while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {}
            exited = true;
            break;
        }
        int ms = left * 1000 < POLL_SLICE_MS ? (int)(left * 1000) + 1 : POLL_SLICE_MS;
        if (eof) { /* nothing more to read: the child is exiting, wait for it in short naps */
            struct timespec ts = {0, 200000L};
            nanosleep(&ts, NULL);
            continue;
        }
        struct pollfd pf = {.fd = rfd, .events = POLLIN};
        int pr = poll(&pf, 1, exited ? 0 : ms);
        if (pr < 0 && errno == EINTR) continue;
        if (pr > 0) {
            if (got < sizeof r) {
                ssize_t n = read(rfd, (char *)&r + got, sizeof r - got);
                if (n > 0) got += (size_t)n;
                else if (n == 0) eof = true;
                else if (errno != EINTR && errno != EAGAIN) eof = true;
            } else {
                char sink[256];
                ssize_t n = read(rfd, sink, sizeof sink);
                if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) eof = true;
            }
        }
    }
    close(rfd);

    double elapsed = weft_rt_now() - t0;
    if (timed_out) {
        memset(out, 0, sizeof *out);
        set_msg(out, "timed out after %g s", timeout);
        return finish(out, WEFT_ERR_TIMEOUT);
    }
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        memset(out, 0, sizeof *out);
        const char *name = strsignal(sig);
        set_msg(out, "killed by signal %d (%s) after %.3g s", sig, name ? name : "?", elapsed);
        return finish(out, WEFT_ERR_DEVICE);
    }
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0) {
        memset(out, 0, sizeof *out);
        set_msg(out, "measure worker exited with status %d", WEXITSTATUS(wstatus));
        return finish(out, WEFT_ERR_INTERNAL);
    }
    if (got != sizeof r) {
        memset(out, 0, sizeof *out);
        set_msg(out, "measure worker sent a short result (%zu of %zu bytes)", got, sizeof r);
        return finish(out, WEFT_ERR_INTERNAL);
    }
    r.error[sizeof r.error - 1] = '\0';
    if (r.n_times < 0 || r.n_times > WEFT_MEASURE_MAX_TIMES) r.n_times = 0;
    if (r.status < WEFT_OK || r.status >= WEFT_STATUS_COUNT) {
        r.status = WEFT_ERR_INTERNAL;
        set_msg(&r, "measure worker sent a bad status");
    }
    *out = r;
    return finish(out, r.status);
}

static weft_status check_args(const weft_target_ops *ops, const void *k, const weft_loop_func *lf,
                              const weft_measure_opts *o, weft_measure_result *out, const char *fn)
{
    if (!out) return weft_fail(WEFT_ERR_INVALID_ARG, "%s: out is NULL", fn);
    memset(out, 0, sizeof *out);
    if (!ops || !ops->run || !k || !lf || (lf->n_params > 0 && !lf->params)) {
        set_msg(out, "%s: %s is NULL", fn, !ops || !ops->run ? "ops" : !k ? "kernel" : "loop function");
        return finish(out, WEFT_ERR_INVALID_ARG);
    }
    if (weft_target_check(ops) != WEFT_OK) {
        set_msg(out, "%s: %s", fn, weft_last_error());
        return finish(out, WEFT_ERR_INVALID_ARG);
    }
    if (lf->n_params < 0) {
        set_msg(out, "%s: n_params=%d", fn, lf->n_params);
        return finish(out, WEFT_ERR_INVALID_ARG);
    }
    for (int i = 0; i < lf->n_params; i++)
        if (!lf->params[i]) {
            set_msg(out, "%s: param %d is NULL", fn, i);
            return finish(out, WEFT_ERR_INVALID_ARG);
        }
    if (!(o->timeout_s > 0) || !isfinite(o->timeout_s) || o->timeout_s > 1e6) {
        set_msg(out, "%s: timeout_s=%g, expected (0, 1e6]", fn, o->timeout_s);
        return finish(out, WEFT_ERR_INVALID_ARG);
    }
    return WEFT_OK;
}

weft_status weft_measure_kernel(const weft_target_ops *ops, weft_kernel *k, const weft_loop_func *lf,
                                const weft_measure_opts *o, weft_measure_result *out)
{
    weft_measure_opts def = weft_measure_opts_default();
    if (!o) o = &def;
    weft_status st = check_args(ops, k, lf, o, out, "weft_measure_kernel");
    if (st != WEFT_OK) return st;
    job j = {.kind = 0, .ops = ops, .k = k, .lf = lf, .o = o, .compile = o->compile_in_worker || !weft_target_is_host(ops)};
    return run_job(&j, out);
}

weft_status weft_measure_check(const weft_target_ops *ops, weft_kernel *k, const weft_loop_func *lf, weft_kernel *ref,
                               const weft_loop_func *ref_lf, double tol, const weft_measure_opts *o,
                               weft_measure_result *out)
{
    weft_measure_opts def = weft_measure_opts_default();
    if (!o) o = &def;
    weft_status st = check_args(ops, k, lf, o, out, "weft_measure_check");
    if (st != WEFT_OK) return st;
    if (!ref || !ref_lf) {
        set_msg(out, "weft_measure_check: reference %s is NULL", !ref ? "kernel" : "loop function");
        return finish(out, WEFT_ERR_INVALID_ARG);
    }
    if (ref_lf->n_params != lf->n_params) {
        set_msg(out, "weft_measure_check: the reference has %d params, the kernel %d", ref_lf->n_params, lf->n_params);
        return finish(out, WEFT_ERR_INVALID_ARG);
    }
    if (!(tol >= 0)) {
        set_msg(out, "weft_measure_check: tol=%g, expected >= 0", tol);
        return finish(out, WEFT_ERR_INVALID_ARG);
    }
    job j = {.kind = 1, .ops = ops, .k = k, .ref = ref, .lf = lf, .ref_lf = ref_lf, .tol = tol, .o = o,
             .compile = o->compile_in_worker || !weft_target_is_host(ops)};
    return run_job(&j, out);
}

weft_status weft_measure_pair(const weft_target_ops *ops, weft_kernel *k, const weft_loop_func *lf, weft_kernel *other,
                              const weft_loop_func *other_lf, const weft_measure_opts *o, weft_measure_result *out)
{
    weft_measure_opts def = weft_measure_opts_default();
    if (!o) o = &def;
    weft_status st = check_args(ops, k, lf, o, out, "weft_measure_pair");
    if (st != WEFT_OK) return st;
    bool same = other_lf && other_lf->n_params == lf->n_params;
    for (int i = 0; same && i < lf->n_params; i++)
        same = other_lf->params[i] && param_bytes(other_lf->params[i]) == param_bytes(lf->params[i]);
    if (!other || !other_lf || !same || !weft_target_is_host(ops)) {
        set_msg(out, "weft_measure_pair: %s", !other || !other_lf ? "the second kernel or its loop function is NULL"
                                             : !same ? "the two kernels' parameter lists differ"
                                                     : "host targets only");
        return finish(out, WEFT_ERR_INVALID_ARG);
    }
    job j = {.kind = 2, .ops = ops, .k = k, .ref = other, .lf = lf, .ref_lf = other_lf, .o = o};
    return run_job(&j, out);
}
