/* Measuring tuning candidates on a CUDA device (contract in tuner/measure_gpu.h).
 *
 * Workers are forked, not exec'd: the tuning process never calls the driver, nor NVRTC (CUDA
 * 13's NVRTC loads and initialises the driver, and cuInit in a child forked from a process
 * that did fails with CUDA_ERROR_NOT_INITIALIZED), so a fork() child starts with no CUDA state
 * and creates its own context; fork() hands the worker the loop function and the JIT-compiled
 * CPU reference without serialising them. The parent flushes stdio before forking and the
 * worker leaves with _exit(), so nothing of the parent's is written twice.
 *
 *   parent: steps --lower--> loop function   (and, once per task, the CPU reference: the
 *           default CPU schedule on llvm run on the inputs of CHECK_SEED)
 *   worker: loop function --NVRTC--> cubin; random inputs (the seed) -> device argument sets
 *           -> weft_cuda_time_kernel (device events; sets rotated so that their total is at
 *           least twice L2: a kernel whose working set fits in L2 does not find its inputs
 *           there) -> median
 *           -> when check (median < check_below, or check_below <= 0): the inputs of CHECK_SEED,
 *           one run on the device, every parameter compared with the reference
 *           (WEFT_GPU_CHECK_TOL)
 *   parent: the result through a pipe, or "timed out after X s" (SIGKILL at the deadline),
 *           "killed by signal N", "measure worker exited with status N"
 *
 * A CUDA error in the worker (a faulting launch, out of device memory) is the candidate's
 * error text; the worker exits and its context goes with it.
 *
 * Test builds (WEFT_TEST_HOOKS): WEFT_TEST_GPU_CHECK=roundtrip, honoured only with
 * WEFT_CUDA_DRIVER set (the fake driver, tests/cuda/fake_cuda.h, runs no kernels), compares the
 * downloaded parameters with the uploaded inputs instead of the CPU reference: the check's
 * transfers are exercised and a candidate can pass. Without it every check on the fake fails,
 * which is what a kernel that computes nothing should get.
 */
#include "tuner/measure_gpu.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compile/build.h"
#include "ir/error.h"
#include "runtime/mem.h"
#include "runtime/runtime.h"
#include "tuner/tuner.h"
#ifdef WEFT_WITH_CUDA
#include "targets/cuda/cuda.h"
#endif

bool weft_gpu_spec_is_gpu(const char *spec) { return spec && (!strcmp(spec, "cuda") || !strncmp(spec, "cuda:", 5)); }

/* ---- the worker process ------------------------------------------------------------------ */

typedef struct worker_result {
    weft_measure_result r;
    int checked;          /* the check ran (and r.max_error is its error) */
    int n_sets;           /* argument sets rotated */
    weft_gpu_device dev;  /* the probe's answer */
} worker_result;

typedef void (*worker_fn)(void *ud, worker_result *out);

/* Runs fn in a forked worker with a deadline; *out is the worker's result, or the outcome
 * (timeout, signal, exit status) with out->r.status set. Returns out->r.status. */
static weft_status run_worker(worker_fn fn, void *ud, double timeout_s, worker_result *out)
{
    memset(out, 0, sizeof *out);
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(out->r.error, sizeof out->r.error, "measure: pipe: %s", strerror(errno));
        return out->r.status = WEFT_ERR_INTERNAL;
    }
    fflush(NULL);
    double t0 = weft_rt_now(), deadline = t0 + timeout_s;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        snprintf(out->r.error, sizeof out->r.error, "measure: fork: %s", strerror(e));
        return out->r.status = e == ENOMEM || e == EAGAIN ? WEFT_ERR_NOMEM : WEFT_ERR_INTERNAL;
    }
    if (pid == 0) {
        close(fds[0]);
        weft_measure_child_reset_signals();
        worker_result r;
        memset(&r, 0, sizeof r);
        r.r.status = WEFT_ERR_INTERNAL;
        fn(ud, &r);
        weft_measure_write_all(fds[1], &r, sizeof r);
        _exit(0);
    }
    close(fds[1]);
    worker_result r;
    memset(&r, 0, sizeof r);
    size_t got = 0;
    bool timed_out = false, exited = false;
    int ws = 0;
    for (;;) { /* read until EOF (the worker closed the pipe: it is exiting) or the deadline */
        double left = deadline - weft_rt_now();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pf = {.fd = fds[0], .events = POLLIN};
        int pr = poll(&pf, 1, left > 0.1 ? 100 : (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        char sink[256];
        ssize_t n = got < sizeof r ? read(fds[0], (char *)&r + got, sizeof r - got) : read(fds[0], sink, sizeof sink);
        if (n > 0 && got < sizeof r) got += (size_t)n;
        else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
    }
    close(fds[0]);
    while (!timed_out && !exited) { /* the worker is exiting; a teardown that hangs meets the deadline too */
        pid_t w = waitpid(pid, &ws, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR)) exited = true;
        else if (weft_rt_now() >= deadline) timed_out = true;
        else nanosleep(&(struct timespec){0, 1000000L}, NULL);
    }
    if (timed_out) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
        memset(out, 0, sizeof *out);
        snprintf(out->r.error, sizeof out->r.error, "timed out after %g s", timeout_s);
        return out->r.status = WEFT_ERR_TIMEOUT;
    }
    if (WIFSIGNALED(ws)) {
        const char *name = strsignal(WTERMSIG(ws));
        snprintf(out->r.error, sizeof out->r.error, "killed by signal %d (%s) after %.3g s", WTERMSIG(ws), name ? name : "?",
                 weft_rt_now() - t0);
        return out->r.status = WEFT_ERR_DEVICE;
    }
    if (WIFEXITED(ws) && WEXITSTATUS(ws) != 0) {
        snprintf(out->r.error, sizeof out->r.error, "measure worker exited with status %d", WEXITSTATUS(ws));
        return out->r.status = WEFT_ERR_INTERNAL;
    }
    if (got != sizeof r || r.r.status < WEFT_OK || r.r.status >= WEFT_STATUS_COUNT) {
        snprintf(out->r.error, sizeof out->r.error, "measure worker sent %s", got != sizeof r ? "a short result" : "a bad status");
        return out->r.status = WEFT_ERR_INTERNAL;
    }
    r.r.error[sizeof r.r.error - 1] = '\0';
    if (r.r.n_times < 0 || r.r.n_times > WEFT_MEASURE_MAX_TIMES) r.r.n_times = 0;
    *out = r;
    return out->r.status;
}

#ifdef WEFT_WITH_CUDA
/* ---- probe --------------------------------------------------------------------------------- */

static void probe_child(void *ud, worker_result *out)
{
    (void)ud;
    weft_cuda_device d;
    weft_error_clear();
    out->r.status = weft_cuda_device_query(&d);
    if (out->r.status != WEFT_OK) {
        snprintf(out->r.error, sizeof out->r.error, "%s", weft_last_error());
        return;
    }
    snprintf(out->dev.name, sizeof out->dev.name, "%s", d.name);
    out->dev.cc_major = d.cc_major;
    out->dev.cc_minor = d.cc_minor;
    out->dev.driver_version = d.driver_version;
    out->dev.l2_bytes = d.l2_bytes;
    out->dev.sms = d.sms;
}

weft_status weft_gpu_probe(const char *spec, double timeout_s, weft_gpu_device *out)
{
    memset(out, 0, sizeof *out);
    if (!weft_gpu_spec_is_gpu(spec))
        return weft_fail(WEFT_ERR_INVALID_ARG, "target '%s' is not a GPU target (cuda or cuda:sm_XX)", spec ? spec : "(null)");
    int want = 0;
    if (spec[4] == ':') { /* checked before the device: a name NVRTC does not know is the user's error */
        const weft_target_ops *ops = weft_target_find(spec);
        weft_target *t = NULL;
        if (!ops || strncmp(spec + 5, "sm_", 3))
            return weft_fail(WEFT_ERR_INVALID_ARG, "target '%s' is not one of this build's CUDA targets (cuda:sm_XX)", spec);
        weft_status st = ops->create(&t);
        if (st != WEFT_OK) return st;
        ops->destroy(t);
        want = atoi(spec + 8);
    }
    worker_result r;
    if (run_worker(probe_child, NULL, timeout_s, &r) != WEFT_OK) {
        if (r.r.status == WEFT_ERR_TIMEOUT || r.r.error[0] == '\0' || !strncmp(r.r.error, "killed", 6) ||
            !strncmp(r.r.error, "measure", 7))
            return weft_fail(r.r.status, "cuda: the device probe (a worker process) failed: %s", r.r.error);
        return weft_fail(r.r.status, "%s", r.r.error); /* "no CUDA driver (...)", "no CUDA device (...)" */
    }
    *out = r.dev;
    int cc = out->cc_major * 10 + out->cc_minor;
    if (want && (want / 10 != out->cc_major || want > cc))
        return weft_fail(WEFT_ERR_INVALID_ARG, "cuda:sm_%d cannot run on device 0 (%s, compute capability %d.%d)", want,
                         out->name, out->cc_major, out->cc_minor);
    snprintf(out->target, sizeof out->target, "cuda:sm_%d", want ? want : cc);
    if (!weft_target_find(out->target))
        return weft_fail(WEFT_ERR_UNAVAILABLE, "cuda: device 0 (%s) has compute capability %d.%d, which this build's NVRTC "
                                               "targets do not cover", out->name, out->cc_major, out->cc_minor);
    return WEFT_OK;
}
#else
weft_status weft_gpu_probe(const char *spec, double timeout_s, weft_gpu_device *out)
{
    (void)timeout_s;
    memset(out, 0, sizeof *out);
    if (!weft_gpu_spec_is_gpu(spec))
        return weft_fail(WEFT_ERR_INVALID_ARG, "target '%s' is not a GPU target (cuda or cuda:sm_XX)", spec ? spec : "(null)");
    (void)run_worker;
    return weft_fail(WEFT_ERR_UNAVAILABLE, "this build has no CUDA target (NVRTC was not found when it was configured)");
}
#endif

/* ---- measuring candidates ------------------------------------------------------------------ */

#ifdef WEFT_WITH_CUDA
enum { MAX_SETS = 32 };

/* A task's CPU reference: every param after the default CPU schedule ran on the inputs of
 * CHECK_SEED (host memory, inherited by the workers through fork()). */
typedef struct cpu_ref {
    void **out;
    int n_params;
    bool tried;
    weft_status st;
    char error[200];
} cpu_ref;

/* The seed of the check's inputs: one per run, so a task's reference is computed once. */
#define CHECK_SEED 0x5eedc0deull

struct weft_gpu_measurer {
    weft_task *tasks;
    int n;
    weft_gpu_device dev;
    int threads;
    double timeout_s;
    const weft_target_ops *ops; /* cuda:sm_XX: compiles and runs in workers */
    weft_target *target;
    weft_target_caps caps;      /* its caps: candidates are lowered for them */
    const weft_target_ops *cpu_ops; /* llvm: the references */
    weft_target *cpu;
    weft_threadpool *pool;      /* runs the references (in this process) */
    cpu_ref *refs;              /* one per task, built on first need */
};

/* What a candidate's worker does (everything in it is inherited through fork()). */
typedef struct cand_job {
    const weft_gpu_measurer *m;
    weft_kernel *k;             /* compiled by the worker */
    const weft_loop_func *lf;
    void *const *ref;           /* the task's CPU reference params (cpu_ref.out); NULL: no check */
    double check_below;
    uint64_t seed;              /* of the timed runs' inputs */
    bool roundtrip;             /* test hook: compare with the uploaded inputs */
} cand_job;

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t param_bytes(const weft_buffer *b)
{
    return (size_t)(b->size > 0 ? b->size : 0) * (size_t)weft_dtype_bytes(b->dtype);
}

/* Floats in [-1, 1), ints in [0, 8), bools 0/1 (as tuner/measure.c fills them); param i has its
 * own stream from the seed. */
static void fill_random(void *p, const weft_buffer *b, uint64_t seed, int i)
{
    uint64_t s = seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(i + 1));
    weft_dtype t = b->dtype;
    for (int64_t e = 0; e < b->size; e++) {
        uint64_t v = splitmix64(&s);
        if (weft_dtype_is_float(t) && t.bits == 32) ((float *)p)[e] = (float)((double)(v >> 40) * 0x1p-23 - 1.0);
        else if (weft_dtype_is_float(t) && t.bits == 64) ((double *)p)[e] = (double)(v >> 11) * 0x1p-52 - 1.0;
        else if (weft_dtype_is_int(t) && t.bits == 32) ((int32_t *)p)[e] = (int32_t)(v >> 61);
        else if (weft_dtype_is_int(t) && t.bits == 64) ((int64_t *)p)[e] = (int64_t)(v >> 61);
        else if (weft_dtype_is_bool(t)) ((uint8_t *)p)[e] = (uint8_t)(v >> 63);
    }
}

static double elem(const void *p, weft_dtype t, int64_t e)
{
    if (weft_dtype_is_float(t)) return t.bits == 64 ? ((const double *)p)[e] : (double)((const float *)p)[e];
    if (weft_dtype_is_int(t)) return t.bits == 64 ? (double)((const int64_t *)p)[e] : (double)((const int32_t *)p)[e];
    return (double)((const uint8_t *)p)[e];
}

/* Host copies of every param, filled from the seed; NULL when memory runs out. */
static void **host_params(const weft_loop_func *lf, uint64_t seed)
{
    void **h = weft_calloc((size_t)lf->n_params + 1, sizeof *h);
    for (int i = 0; h && i < lf->n_params; i++) {
        size_t bytes = param_bytes(lf->params[i]);
        if (!(h[i] = weft_calloc(bytes ? bytes : 1, 1))) {
            for (int j = 0; j < i; j++) free(h[j]);
            free(h);
            return NULL;
        }
        fill_random(h[i], lf->params[i], seed, i);
    }
    return h;
}

static void free_host(void **h, int n)
{
    for (int i = 0; h && i < n; i++) free(h[i]);
    free(h);
}

static bool fail_r(worker_result *out, weft_status st, const char *what)
{
    out->r.status = st;
    snprintf(out->r.error, sizeof out->r.error, "%s%s", what, weft_last_error());
    return false;
}

static bool upload_all(const weft_gpu_measurer *m, const weft_loop_func *lf, void **dev, void **host, worker_result *out)
{
    for (int i = 0; i < lf->n_params; i++) {
        size_t bytes = param_bytes(lf->params[i]);
        if (bytes && m->ops->upload(m->target, dev[i], host[i], bytes, NULL) != WEFT_OK) return fail_r(out, WEFT_ERR_DEVICE, "upload: ");
    }
    return m->ops->synchronize(m->target, NULL) == WEFT_OK || fail_r(out, WEFT_ERR_DEVICE, "upload: ");
}

/* The check: the inputs of CHECK_SEED on set 0, one run, every param downloaded and compared
 * with the CPU reference (round-trip test hook: with the inputs themselves). */
static bool check(const cand_job *j, void **dev, worker_result *out)
{
    const weft_gpu_measurer *m = j->m;
    const weft_loop_func *lf = j->lf;
    int np = lf->n_params;
    void **cand = host_params(lf, CHECK_SEED), **fresh = j->roundtrip ? host_params(lf, CHECK_SEED) : NULL;
    void *const *ref = j->roundtrip ? (void *const *)fresh : j->ref;
    bool ok = cand && ref;
    if (!ok) {
        out->r.status = WEFT_ERR_NOMEM;
        snprintf(out->r.error, sizeof out->r.error, "check: out of host memory");
    }
    if (ok) ok = upload_all(m, lf, dev, cand, out);
    if (ok) ok = m->ops->run(j->k, dev, NULL) == WEFT_OK || fail_r(out, WEFT_ERR_DEVICE, "");
    for (int i = 0; ok && i < np; i++) {
        size_t bytes = param_bytes(lf->params[i]);
        if (bytes && m->ops->download(m->target, cand[i], dev[i], bytes, NULL) != WEFT_OK) ok = fail_r(out, WEFT_ERR_DEVICE, "download: ");
    }
    if (ok) ok = m->ops->synchronize(m->target, NULL) == WEFT_OK || fail_r(out, WEFT_ERR_DEVICE, "");
    double worst = 0;
    for (int i = 0; ok && i < np; i++) {
        const weft_buffer *b = lf->params[i];
        double scale = 1, pmax = 0;
        int64_t at = 0;
        for (int64_t e = 0; e < b->size; e++) {
            double v = fabs(elem(ref[i], b->dtype, e));
            if (isfinite(v) && v > scale) scale = v;
        }
        for (int64_t e = 0; e < b->size; e++) {
            double x = elem(cand[i], b->dtype, e), y = elem(ref[i], b->dtype, e);
            double d = isnan(x) || isnan(y) ? (isnan(x) && isnan(y) ? 0 : INFINITY) : x == y ? 0 : fabs(x - y) / scale;
            if (d > pmax) pmax = d, at = e;
        }
        if (pmax > worst) worst = pmax;
        if (!(pmax <= WEFT_GPU_CHECK_TOL)) {
            out->r.status = WEFT_ERR_INTERNAL;
            snprintf(out->r.error, sizeof out->r.error,
                     "output differs from the CPU reference (default schedule, llvm) by %g (tol %g): param %d (%s) "
                     "element %lld: %g vs %g", pmax, WEFT_GPU_CHECK_TOL, i, b->name ? b->name : "?", (long long)at,
                     elem(cand[i], b->dtype, at), elem(ref[i], b->dtype, at));
            ok = false;
        }
    }
    out->r.max_error = worst;
    out->checked = 1;
    free_host(cand, np);
    free_host(fresh, np);
    return ok;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void cand_child(void *ud, worker_result *out)
{
    cand_job *j = ud;
    const weft_gpu_measurer *m = j->m;
    const weft_loop_func *lf = j->lf;
    /* NVRTC runs here, not in the tuning process: CUDA 13's NVRTC loads and initialises the
     * driver, and a process forked from one that did gets CUDA_ERROR_NOT_INITIALIZED from
     * cuInit (seen on an H200, driver 580) */
    weft_error_clear();
    weft_status cs = m->ops->compile(m->target, lf, &j->k);
    if (cs != WEFT_OK) {
        out->r.status = cs;
        snprintf(out->r.error, sizeof out->r.error, "compile: %.230s", weft_last_error());
        return;
    }
    int np = lf->n_params;
    size_t ws = 0;
    for (int i = 0; i < np; i++) ws += param_bytes(lf->params[i]);
    long long want = 2LL * m->dev.l2_bytes;
    int n_sets = ws > 0 && (long long)ws < want ? (int)((want + (long long)ws - 1) / (long long)ws) : 1;
    if (n_sets > MAX_SETS) n_sets = MAX_SETS;
    out->n_sets = n_sets;
    void **host = host_params(lf, j->seed);
    void ***sets = weft_calloc((size_t)n_sets, sizeof *sets);
    enum { MAX_RUNS = 1000 };
    double *times = weft_malloc(sizeof *times * MAX_RUNS);
    bool ok = host && sets && times;
    if (!ok) {
        out->r.status = WEFT_ERR_NOMEM;
        snprintf(out->r.error, sizeof out->r.error, "measure: out of host memory");
    }
    for (int s = 0; ok && s < n_sets; s++) {
        ok = (sets[s] = weft_calloc((size_t)np + 1, sizeof **sets)) != NULL;
        for (int i = 0; ok && i < np; i++) {
            size_t bytes = param_bytes(lf->params[i]);
            weft_status st = m->ops->alloc(m->target, bytes ? bytes : 1, &sets[s][i]);
            if (st != WEFT_OK) ok = fail_r(out, st, "measure: ");
        }
        if (ok) ok = upload_all(m, lf, sets[s], host, out);
    }
    int n = 0;
    if (ok) {
        weft_cuda_timing t = {.min_repeat = 5, .max_repeat = MAX_RUNS, .min_time_s = 0.05};
        weft_error_clear();
        weft_status st = weft_cuda_time_kernel(m->ops, j->k, (void *const *const *)sets, n_sets, &t, times, &n);
        if (st != WEFT_OK) ok = fail_r(out, st, "");
    }
    if (ok) {
        out->r.n_times = n < WEFT_MEASURE_MAX_TIMES ? n : WEFT_MEASURE_MAX_TIMES;
        memcpy(out->r.times, times, sizeof *times * (size_t)out->r.n_times);
        qsort(times, (size_t)n, sizeof *times, cmp_double);
        out->r.median = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
        out->r.status = WEFT_OK;
        if ((j->ref || j->roundtrip) && (j->check_below <= 0 || out->r.median < j->check_below)) check(j, sets[0], out);
    }
    /* the process exits next; freeing keeps the fake driver's books (and ASan) clean */
    for (int s = 0; sets && s < n_sets; s++) {
        for (int i = 0; sets[s] && i < np; i++) m->ops->free_buf(m->target, sets[s][i]);
        free(sets[s]);
    }
    free(sets);
    free(times);
    free_host(host, np);
    m->ops->kernel_destroy(j->k);
}

/* The task's reference, computed here on first need: the default CPU schedule (checked against
 * the naive schedule by the test suite, and a hundred times faster: 4096^3 takes the naive
 * schedule minutes) on the inputs of CHECK_SEED, with this process's thread pool. */
static cpu_ref *ref_of(weft_gpu_measurer *m, int task)
{
    cpu_ref *r = &m->refs[task];
    if (r->tried) return r;
    r->tried = true;
    weft_arena *a = weft_arena_create();
    weft_schedule *s = NULL;
    weft_loop_func *lf = NULL;
    weft_kernel *k = NULL;
    weft_target_caps caps;
    m->cpu_ops->caps(m->cpu, &caps);
    r->st = a ? weft_schedule_create(m->tasks[task].f, &s) : weft_fail(WEFT_ERR_NOMEM, "out of memory");
    if (r->st == WEFT_OK) r->st = weft_schedule_default(s, &caps);
    if (r->st == WEFT_OK) r->st = weft_target_build(m->cpu_ops, m->cpu, s, a, &lf, &k);
    if (r->st == WEFT_OK && !(r->out = host_params(lf, CHECK_SEED))) r->st = weft_fail(WEFT_ERR_NOMEM, "out of memory");
    if (r->st == WEFT_OK) {
        r->n_params = lf->n_params;
        weft_exec ex = {.pool = m->pool};
        r->st = m->cpu_ops->run(k, r->out, &ex);
    }
    if (r->st != WEFT_OK) snprintf(r->error, sizeof r->error, "%s", weft_last_error());
    if (k) m->cpu_ops->kernel_destroy(k);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
    return r;
}

static bool roundtrip_hook(void)
{
#ifdef WEFT_TEST_HOOKS
    const char *v = getenv("WEFT_TEST_GPU_CHECK"), *drv = getenv("WEFT_CUDA_DRIVER");
    return v && !strcmp(v, "roundtrip") && drv && *drv;
#else
    return false;
#endif
}

weft_status weft_gpu_measurer_create(weft_task *tasks, int n, const weft_gpu_device *dev, int threads, double timeout_s,
                                     weft_gpu_measurer **out)
{
    if (!out || n < 0 || (n > 0 && !tasks) || !dev || !(timeout_s > 0))
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_gpu_measurer_create: bad arguments");
    *out = NULL;
    weft_gpu_measurer *m = weft_calloc(1, sizeof *m);
    if (!m) return weft_fail(WEFT_ERR_NOMEM, "out of memory");
    m->tasks = tasks;
    m->n = n;
    m->dev = *dev;
    m->threads = threads;
    m->timeout_s = timeout_s;
    m->refs = weft_calloc((size_t)(n ? n : 1), sizeof *m->refs);
    m->ops = weft_target_find(dev->target);
    m->cpu_ops = weft_target_find("llvm");
    weft_status st = !m->refs     ? weft_fail(WEFT_ERR_NOMEM, "out of memory")
                     : !m->ops     ? weft_fail(WEFT_ERR_UNAVAILABLE, "tune: no target %s in this build", dev->target)
                     : !m->cpu_ops ? weft_fail(WEFT_ERR_UNAVAILABLE, "tune: this build has no llvm target (the CPU reference)")
                                   : m->ops->create(&m->target);
    if (st == WEFT_OK) m->ops->caps(m->target, &m->caps);
    if (st == WEFT_OK) st = m->cpu_ops->create(&m->cpu);
    if (st == WEFT_OK) st = weft_threadpool_create(threads, &m->pool);
    if (st != WEFT_OK) {
        weft_gpu_measurer_destroy(m);
        return st;
    }
    *out = m;
    return WEFT_OK;
}

void weft_gpu_measurer_destroy(weft_gpu_measurer *m)
{
    if (!m) return;
    for (int i = 0; m->refs && i < m->n; i++) free_host(m->refs[i].out, m->refs[i].n_params);
    free(m->refs);
    weft_threadpool_destroy(m->pool);
    if (m->cpu) m->cpu_ops->destroy(m->cpu);
    if (m->target) m->ops->destroy(m->target);
    free(m);
}

void weft_gpu_measurer_run(weft_gpu_measurer *m, weft_tune_cand *c)
{
    if (!weft_tune_cand_begin(c, m->n)) return;
    weft_arena *a = weft_arena_create();
    weft_status st = a ? WEFT_OK : weft_fail(WEFT_ERR_NOMEM, "out of memory");
    weft_loop_func *lf = a ? weft_tuner_lower_steps(m->tasks[c->task].f, c->steps, &m->caps, a, &st) : NULL;
    cand_job j = {.m = m, .check_below = c->check_below, .seed = c->seed, .roundtrip = roundtrip_hook()};
    cpu_ref *ref = NULL;
    if (!lf) snprintf(c->error, sizeof c->error, "steps do not apply: %.270s", weft_last_error());
    else if (!j.roundtrip && (ref = ref_of(m, c->task))->st != WEFT_OK) {
        st = ref->st;
        snprintf(c->error, sizeof c->error, "no CPU reference: %.260s", ref->error);
    } else if (ref && ref->n_params != lf->n_params)
        snprintf(c->error, sizeof c->error, "measure: the CPU reference has %d params, the candidate %d", ref->n_params,
                 lf->n_params);
    else {
        j.lf = lf;
        j.ref = ref ? ref->out : NULL;
        worker_result r;
        if (run_worker(cand_child, &j, m->timeout_s, &r) != WEFT_OK)
            snprintf(c->error, sizeof c->error, "%s%.280s", r.checked && r.r.status == WEFT_ERR_INTERNAL ? "rejected: " : "",
                     r.r.error);
        c->r = r.r; /* a worker that ran out of memory is the candidate's error, not this process's */
    }
    weft_arena_destroy(a);
    if (st == WEFT_ERR_NOMEM) c->fatal = st;
}
#else
struct weft_gpu_measurer {
    int unused;
};
weft_status weft_gpu_measurer_create(weft_task *tasks, int n, const weft_gpu_device *dev, int threads, double timeout_s,
                                     weft_gpu_measurer **out)
{
    (void)tasks, (void)n, (void)dev, (void)threads, (void)timeout_s;
    if (out) *out = NULL;
    return weft_fail(WEFT_ERR_UNAVAILABLE, "this build has no CUDA target (NVRTC was not found when it was configured)");
}
void weft_gpu_measurer_run(weft_gpu_measurer *m, weft_tune_cand *c)
{
    (void)m;
    snprintf(c->error, sizeof c->error, "this build has no CUDA target");
}
void weft_gpu_measurer_destroy(weft_gpu_measurer *m) { (void)m; }
#endif
