/* The local measurer of tuning candidates (tuner.h, "tune_measure.c"): what one process does
 * with a candidate, whether the search runs in it or sends it candidates from elsewhere.
 *
 *   steps --lower--> loop function --compile (llvm, this process)--> kernel
 *         --weft_measure_kernel (forked worker, timeout; twice L2 written between runs, so a
 *           kernel runs with cold L1/L2 as in a model)--> median
 *         --when median < check_below (or check_below <= 0): weft_measure_check against the
 *           task's naive schedule, tolerance 1e-4 relative--> kept, or "rejected: ..."
 *
 * A candidate that measured faster than its task's best so far is timed again against that best
 * by the search (weft_tune_measurer_pair: both kernels in one worker, runs alternating).
 *
 * Every failure is the candidate's error text, never the caller's: a measurer goes on with the
 * next candidate. The naive kernel of a task is built the first time one of its candidates
 * needs the check, and kept until the measurer is destroyed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/build.h"
#include "ir/error.h"
#include "lower/lower.h"
#include "runtime/mem.h"
#include "tuner/tuner.h"

typedef struct naive_ref {
    weft_kernel *k;
    weft_arena *a;
    weft_loop_func *lf;
    bool tried;
    weft_status st; /* of building it */
} naive_ref;

struct weft_tune_measurer {
    const weft_target_ops *ops;
    weft_target *target;
    weft_task *tasks;
    int n;
    int threads;
    naive_ref *naive;   /* one per task */
    weft_target_caps caps;
};

weft_loop_func *weft_tuner_lower_steps(const weft_te_func *f, const char *steps, const weft_target_caps *caps,
                                       weft_arena *a, weft_status *st)
{
    weft_schedule *s = NULL;
    weft_loop_func *lf = NULL;
    weft_status rc = weft_schedule_create(f, &s);
    if (rc == WEFT_OK) rc = weft_schedule_apply_text(s, steps);
    if (rc == WEFT_OK) rc = weft_lower(s, caps, a, &lf);
    if (rc != WEFT_OK) lf = NULL;
    weft_schedule_destroy(s);
    if (st) *st = rc;
    return lf;
}

/* Test builds: WEFT_TEST_FAULTS="RATE:SEED[:TIMEOUT_S]" injects a fault (tuner/measure.h) into
 * about RATE of the candidates, chosen and kinded by a hash of the step text and SEED, so a
 * candidate has the same fault when measured and when checked; TIMEOUT_S (default 10) is the
 * measurement timeout. Each injection is logged on stderr ("test fault: KIND") for the test to
 * count. The model compiler's check of records measured elsewhere (apply.c) injects the same. */
#ifndef WEFT_TEST_HOOKS
bool weft_tune_test_hooks(void) { return false; }
int weft_tune_test_fault(const char *steps, weft_measure_opts *mo)
{
    (void)steps;
    (void)mo;
    return WEFT_FAULT_NONE;
}
#else
bool weft_tune_test_hooks(void) { return true; }
int weft_tune_test_fault(const char *steps, weft_measure_opts *mo)
{
    const char *env = getenv("WEFT_TEST_FAULTS");
    double rate = 0, timeout = 0;
    unsigned long long seed = 0;
    if (!env || sscanf(env, "%lf:%llu:%lf", &rate, &seed, &timeout) < 2) return WEFT_FAULT_NONE;
    if (timeout > 0) mo->timeout_s = timeout;
    uint64_t h = 1469598103934665603ull;
    for (const char *p = steps; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h ^= seed * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    if ((double)(h % 10000) >= rate * 10000) return WEFT_FAULT_NONE;
    int kind = 1 + (int)((h >> 20) % (WEFT_FAULT_COUNT - 1));
    static const char *const names[] = {"none", "segv", "spin", "oob", "wrong"};
    fprintf(stderr, "test fault: %s\n", names[kind]);
    return kind;
}
#endif

weft_status weft_tune_measurer_create(weft_task *tasks, int n, int threads, weft_tune_measurer **out)
{
    if (!out || (n > 0 && !tasks) || n < 0) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_tune_measurer_create: bad arguments");
    *out = NULL;
    weft_tune_measurer *m = weft_calloc(1, sizeof *m);
    if (!m) return weft_fail(WEFT_ERR_NOMEM, "out of memory");
    m->tasks = tasks;
    m->n = n;
    m->threads = threads;
    m->naive = weft_calloc((size_t)(n ? n : 1), sizeof *m->naive);
    m->ops = weft_target_find("llvm");
    weft_status rc = !m->naive ? weft_fail(WEFT_ERR_NOMEM, "out of memory")
                     : m->ops  ? m->ops->create(&m->target)
                               : weft_fail(WEFT_ERR_UNAVAILABLE, "tune: this build has no llvm target");
    if (rc != WEFT_OK) {
        weft_tune_measurer_destroy(m);
        return rc;
    }
    if (m->ops->caps) m->ops->caps(m->target, &m->caps);
    *out = m;
    return WEFT_OK;
}

void weft_tune_measurer_destroy(weft_tune_measurer *m)
{
    if (!m) return;
    for (int i = 0; m->naive && i < m->n; i++) {
        if (m->naive[i].k) m->ops->kernel_destroy(m->naive[i].k);
        weft_arena_destroy(m->naive[i].a);
    }
    free(m->naive);
    if (m->target) m->ops->destroy(m->target);
    free(m);
}

static naive_ref *naive_of(weft_tune_measurer *m, int task)
{
    naive_ref *r = &m->naive[task];
    if (!r->tried) {
        r->tried = true;
        r->a = weft_arena_create();
        weft_schedule *ns = NULL;
        r->st = r->a ? weft_schedule_create(m->tasks[task].f, &ns) : weft_fail(WEFT_ERR_NOMEM, "out of memory");
        if (r->st == WEFT_OK) r->st = weft_target_build(m->ops, m->target, ns, r->a, &r->lf, &r->k);
        weft_schedule_destroy(ns);
        if (r->st == WEFT_ERR_NOMEM) r->tried = false; /* not this task's fault: tried again */
    }
    return r;
}

bool weft_tune_cand_begin(weft_tune_cand *c, int n_tasks)
{
    memset(&c->r, 0, sizeof c->r);
    c->error[0] = '\0';
    c->lost = false;
    c->fatal = WEFT_OK;
    if (c->task < 0 || c->task >= n_tasks || !c->steps) {
        snprintf(c->error, sizeof c->error, "measure: no task %d (there are %d) or no steps", c->task, n_tasks);
        return false;
    }
    return true;
}

void weft_tune_measurer_run(weft_tune_measurer *m, weft_tune_cand *c)
{
    if (!weft_tune_cand_begin(c, m->n)) return;
    weft_measure_opts mo = weft_measure_opts_default();
    mo.threads = m->threads;
    mo.min_time_s = 0.05;
    mo.evict_bytes = weft_measure_evict_bytes(&m->caps); /* twice L2 (measure.h) */
    mo.seed = c->seed;
    mo.fault = weft_tune_test_fault(c->steps, &mo);
    weft_arena *a = weft_arena_create();
    weft_status st = a ? WEFT_OK : weft_fail(WEFT_ERR_NOMEM, "out of memory");
    weft_loop_func *lf = a ? weft_tuner_lower_steps(m->tasks[c->task].f, c->steps, &m->caps, a, &st) : NULL;
    weft_kernel *k = NULL;
    if (!lf) snprintf(c->error, sizeof c->error, "steps do not apply: %.270s", weft_last_error());
    else if ((st = m->ops->compile(m->target, lf, &k)) != WEFT_OK)
        snprintf(c->error, sizeof c->error, "compile: %.280s", weft_last_error());
    else if (weft_measure_kernel(m->ops, k, lf, &mo, &c->r) != WEFT_OK)
        snprintf(c->error, sizeof c->error, "%.290s", c->r.error[0] ? c->r.error : weft_last_error());
    else if (c->check_below <= 0 || c->r.median < c->check_below) {
        /* A candidate that may become the best is served only when it computes what the naive
         * schedule computes. */
        naive_ref *nr = naive_of(m, c->task);
        weft_measure_result cr;
        memset(&cr, 0, sizeof cr);
        if (!nr->k) {
            st = nr->st;
            snprintf(c->error, sizeof c->error, "no naive reference: %.260s", weft_last_error());
        }
        else if (weft_measure_check(m->ops, k, lf, nr->k, nr->lf, 1e-4, &mo, &cr) != WEFT_OK)
            snprintf(c->error, sizeof c->error, "rejected: %.280s", cr.error[0] ? cr.error : weft_last_error());
    }
    if (k) m->ops->kernel_destroy(k);
    weft_arena_destroy(a);
    if (st == WEFT_ERR_NOMEM) c->fatal = st; /* this process ran out of memory */
}

weft_status weft_tune_measurer_pair(weft_tune_measurer *m, int task, const char *steps, const char *other, uint64_t seed,
                                    weft_measure_result *r)
{
    memset(r, 0, sizeof *r);
    if (!m || task < 0 || task >= m->n || !steps || !other) {
        snprintf(r->error, sizeof r->error, "measure: no task %d or no steps", task);
        return r->status = WEFT_ERR_INVALID_ARG;
    }
    weft_measure_opts mo = weft_measure_opts_default();
    mo.threads = m->threads;
    mo.min_time_s = 0.1;
    mo.evict_bytes = weft_measure_evict_bytes(&m->caps);
    mo.seed = seed;
    weft_arena *a = weft_arena_create();
    weft_status st = a ? WEFT_OK : weft_fail(WEFT_ERR_NOMEM, "out of memory");
    weft_loop_func *lf[2] = {NULL, NULL};
    weft_kernel *k[2] = {NULL, NULL};
    const char *text[2] = {steps, other};
    for (int i = 0; i < 2 && st == WEFT_OK; i++) {
        lf[i] = weft_tuner_lower_steps(m->tasks[task].f, text[i], &m->caps, a, &st);
        if (!lf[i]) snprintf(r->error, sizeof r->error, "steps do not apply: %.200s", weft_last_error());
        else if ((st = m->ops->compile(m->target, lf[i], &k[i])) != WEFT_OK)
            snprintf(r->error, sizeof r->error, "compile: %.200s", weft_last_error());
    }
    if (st == WEFT_OK) st = weft_measure_pair(m->ops, k[0], lf[0], k[1], lf[1], &mo, r);
    for (int i = 0; i < 2; i++)
        if (k[i]) m->ops->kernel_destroy(k[i]);
    weft_arena_destroy(a);
    if (st != WEFT_OK && !r->error[0]) snprintf(r->error, sizeof r->error, "%.200s", weft_last_error());
    return st;
}
