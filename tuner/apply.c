/* Serving tuned schedules: compiling a model with the best database record of each kernel.
 *
 * Per kernel, in order:
 *   1. the best record under this machine's key (measured and checked here: trusted), when
 *      its steps still replay and it is still faster here than the default schedule: the
 *      default may have improved since the record was tuned, and a stale record would make the
 *      tuned model slower than the untuned one. When the database holds a measurement of
 *      today's default steps on this machine (the tuner measures the default first), the record
 *      beat it there and is served as is; otherwise it is timed against the default as below
 *      (not checked), and when it loses the default serves (other machines' records were this
 *      machine's tuning seeds). WEFT_OWN_TIMING=0 serves it untimed. One that came in through
 *      `weft db import` (its version says "imported:") was never checked here and is timed
 *      and checked as in 2 first;
 *   2. else the best record of each other machine of the same backend, nearest first
 *      (target_key.c: same CPU other thread count, then same ISA level and thread count, then
 *      any). A record measured elsewhere is only step text: it is replayed on this kernel,
 *      compiled, and run in a forked worker against the naive schedule on random inputs
 *      (weft_measure_check) before it is used; one that fails any of these is skipped
 *      (counted as rejected) and the next machine's is tried;
 *   3. else the default schedule.
 * A record of 1 or 2 that has to be checked (one measured elsewhere, or imported) is first timed
 * here against this kernel's default schedule, and checked only when it is faster (the check's
 * naive reference is what costs most): both run by turns in one forked worker
 * (weft_measure_pair: the same inputs, the model's thread count, twice L2 written between runs
 * as the tuner measures; until each has TIME_MIN_REPEAT runs and TIME_MIN_S of measured time,
 * at most TIME_MAX_REPEAT each), and the record is served only when its median is
 * <= SERVE_RATIO x the default's; else it counts as slower and the next machine's record is
 * tried. A record whose steps are the default's is not timed. The default is compiled once per
 * kernel. Cost at model-compile time, per kernel with a record measured elsewhere: one JIT
 * compile of the default plus one worker of 2 x max(TIME_MIN_S, TIME_MIN_REPEAT runs) per
 * timed record: tens of ms per kernel (README, "Schedules that travel"). WEFT_NEAREST_TIMING=0
 * skips the timing (a record that passes its check is served, as for tests that want
 * determinism); test builds (WEFT_TEST_HOOKS) multiply the record's median by
 * WEFT_TEST_RECORD_TIME_SCALE.
 * When a chosen schedule still fails to compile in the model, the model compiler asks again
 * (attempt > 0) and gets the next choice. Nothing is written to the database here: records
 * stay keyed by the machine that measured them.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/hash.h"
#include "lower/lower.h"
#include "model/model.h"
#include "compile/build.h"
#include "tuner/measure.h"
#include "tuner/tuner.h"
#include "runtime/mem.h"

enum { CHECK_TIMEOUT_S = 30 };
#define CHECK_TOL 1e-4 /* as the tuner checks a new best */
enum { TIME_MIN_REPEAT = 5, TIME_MAX_REPEAT = 50 };
#define TIME_MIN_S 0.01   /* measured time per side */
#define SERVE_RATIO 0.97  /* a record beats the default by at least 3% or is not served */

weft_status weft_tuner_lookup(weft_db *db, const weft_tuner_target *t, const weft_te_func *f, weft_schedule *s, bool *found)
{
    *found = false;
    char key[17];
    weft_te_func_hash_hex(f, key);
    char *steps = NULL;
    double median = 0;
    bool have = false;
    weft_status rc = weft_db_best(db, key, t->key, &have, &steps, &median);
    if (rc != WEFT_OK || !have) {
        free(steps);
        return rc;
    }
    /* Replay on a scratch schedule first: steps that no longer apply leave s untouched. */
    weft_schedule *probe = NULL;
    rc = weft_schedule_create(f, &probe);
    if (rc == WEFT_OK && weft_schedule_apply_text(probe, steps) == WEFT_OK) {
        rc = weft_schedule_apply_text(s, steps);
        *found = rc == WEFT_OK;
    }
    weft_schedule_destroy(probe);
    free(steps);
    return rc;
}

/* The choice made for one kernel. */
typedef struct choice {
    int kind;            /* 0 default, 1 this machine, 2 another machine */
    bool slower;         /* kind 0: a record was timed here and was not faster */
    char target[160];    /* kind 2: the record's target key */
} choice;

typedef struct provider_ctx {
    weft_db *db;
    weft_tuner_target tt;
    bool target_ready;
    /* the current kernel's candidates: this machine's record, then the other machines' */
    char key[17];                 /* the current kernel's workload key */
    char *own;                    /* NULL: none */
    bool own_imported;            /* own came in through weft db import: checked like a foreign one */
    weft_tuner_nearest *near;
    int n_near;
    int next;                     /* next candidate: 0 = own, 1 + i = near[i], past the end = default */
    /* what each kernel got (the last choice of each, after retries) */
    choice *choices;
    int n_kernels, cap_kernels;
    int n_rejected;
    /* a JIT target for checking records of other machines (created on first use) */
    const weft_target_ops *ops;
    weft_target *target;
    bool check_ready;
    /* timing records measured elsewhere against the default schedule */
    bool timing;                  /* WEFT_NEAREST_TIMING is not 0 */
    bool own_timing;              /* WEFT_OWN_TIMING is not 0: this machine's records are timed too */
    char *default_steps;          /* the current kernel's default schedule as text (NULL: not yet) */
    bool default_built;           /* tried once per kernel: */
    weft_arena *default_arena;    /*   what default_lf lives in */
    weft_loop_func *default_lf;   /*   the default schedule's loop function and kernel (NULL: */
    weft_kernel *default_k;       /*   it did not build; records are served untimed) */
    int n_timed, n_slower;        /* records timed against the default; of those, not faster */
    bool kernel_slower;           /* a record of the current kernel was not faster than its default */
} provider_ctx;

static void free_candidates(provider_ctx *pc)
{
    free(pc->own);
    pc->own = NULL;
    weft_tuner_nearest_free(pc->near, pc->n_near);
    pc->near = NULL;
    pc->n_near = 0;
    pc->next = 0;
    free(pc->default_steps);
    pc->default_steps = NULL;
    if (pc->default_k) pc->ops->kernel_destroy(pc->default_k);
    pc->default_k = NULL;
    pc->default_lf = NULL;
    weft_arena_destroy(pc->default_arena);
    pc->default_arena = NULL;
    pc->default_built = false;
    pc->kernel_slower = false;
}

static weft_status load_candidates(provider_ctx *pc, const weft_te_func *f)
{
    free_candidates(pc);
    weft_te_func_hash_hex(f, pc->key);
    bool have = false;
    double median = 0;
    weft_status rc = weft_db_best_record(pc->db, pc->key, pc->tt.key, &have, &pc->own, &median, &pc->own_imported);
    if (rc == WEFT_OK) rc = weft_tuner_nearest_records(pc->db, &pc->tt, pc->key, &pc->near, &pc->n_near);
    return rc;
}

/* Does steps replay on f, compile, run and compute what the naive schedule computes? A check
 * that could not be made because memory ran out is WEFT_ERR_NOMEM (the compile fails), not a
 * rejected record. */
static bool check_foreign_ok(provider_ctx *pc, const weft_te_func *f, const char *steps, const weft_target_caps *caps,
                             weft_status *oom);

static weft_status check_foreign(provider_ctx *pc, const weft_te_func *f, const char *steps, const weft_target_caps *caps,
                                 bool *ok)
{
    weft_status oom = WEFT_OK;
    *ok = check_foreign_ok(pc, f, steps, caps, &oom);
    return oom;
}

/* Notes a status of out of memory in *oom and says whether st is WEFT_OK. */
static bool step_ok(weft_status st, weft_status *oom)
{
    if (st == WEFT_ERR_NOMEM && *oom == WEFT_OK) *oom = st;
    return st == WEFT_OK;
}

#ifdef WEFT_TEST_HOOKS
/* Test builds: WEFT_TEST_RECORD_TIME_SCALE=F multiplies a record's measured median by F, so a
 * test can make a record slower or faster than the default without depending on the load. */
static double test_time_scale(void)
{
    const char *e = getenv("WEFT_TEST_RECORD_TIME_SCALE");
    double v = 0;
    return e && sscanf(e, "%lf", &v) == 1 && v > 0 ? v : 1.0;
}
#else
static double test_time_scale(void) { return 1.0; }
#endif

/* The default schedule of f on caps as text, kept for the current kernel (NULL: out of memory,
 * noted in *oom, or no default; then every record is timed). */
static const char *default_text(provider_ctx *pc, const weft_te_func *f, const weft_target_caps *caps, weft_status *oom)
{
    if (pc->default_steps) return pc->default_steps;
    weft_schedule *ds = NULL;
    if (step_ok(weft_schedule_create(f, &ds), oom) && step_ok(weft_schedule_default(ds, caps), oom)) {
        pc->default_steps = weft_schedule_text(ds);
        if (!pc->default_steps) step_ok(weft_fail(WEFT_ERR_NOMEM, "tuned compile: out of memory"), oom);
    }
    weft_schedule_destroy(ds);
    return pc->default_steps;
}

/* Is the record k (of lf) faster here than f's default schedule by SERVE_RATIO? Both
 * run by turns in one forked worker (weft_measure_pair) as the tuner measures: the model's
 * threads, twice L2 written between runs. The default is built once per kernel; one that does
 * not build or run serves the record. */
static bool faster_than_default(provider_ctx *pc, const weft_te_func *f, weft_kernel *k, const weft_loop_func *lf,
                                const weft_target_caps *caps, weft_status *oom)
{
    if (!pc->default_built) {
        pc->default_built = true;
        weft_schedule *ds = NULL;
        pc->default_arena = weft_arena_create();
        if (!pc->default_arena) step_ok(weft_fail(WEFT_ERR_NOMEM, "tuned compile: out of memory"), oom);
        else if (step_ok(weft_schedule_create(f, &ds), oom) && step_ok(weft_schedule_default(ds, caps), oom) &&
                 !step_ok(weft_target_build(pc->ops, pc->target, ds, pc->default_arena, &pc->default_lf, &pc->default_k), oom))
            pc->default_k = NULL;
        weft_schedule_destroy(ds);
    }
    if (*oom != WEFT_OK) return false;
    if (!pc->default_k) return true;
    weft_measure_opts mo = weft_measure_opts_default();
    mo.threads = caps->max_threads;
    mo.timeout_s = CHECK_TIMEOUT_S;
    mo.min_time_s = TIME_MIN_S;
    mo.min_repeat = TIME_MIN_REPEAT;
    mo.max_repeat = TIME_MAX_REPEAT;
    mo.evict_bytes = weft_measure_evict_bytes(caps);
    weft_measure_result r;
    memset(&r, 0, sizeof r);
    weft_status st = weft_measure_pair(pc->ops, k, lf, pc->default_k, pc->default_lf, &mo, &r);
    if (!step_ok(st, oom)) return false; /* the runs failed (a crash, a timeout): rejected */
    pc->n_timed++;
    bool faster = r.median * test_time_scale() <= SERVE_RATIO * r.median_other;
    if (!faster) pc->n_slower++;
    return faster;
}

/* The JIT target that checks and times records, created on first use (pc->ops stays NULL
 * where there is none). */
static void ensure_jit(provider_ctx *pc, weft_status *oom)
{
    if (pc->check_ready) return;
    pc->check_ready = true;
    pc->ops = weft_target_find("llvm");
    if (pc->ops && !step_ok(pc->ops->create(&pc->target), oom)) pc->ops = NULL;
}

/* Is this machine's record (steps, trusted: measured and checked here) still faster here than
 * f's default schedule? The default may have improved since the record was tuned, so it is
 * timed as a record of another machine is (faster_than_default), but not checked. A record
 * whose steps are the default's, or one that cannot be timed (no JIT), is served. */
static bool own_record_faster(provider_ctx *pc, const weft_te_func *f, const char *steps, const weft_target_caps *caps,
                              weft_status *oom)
{
    ensure_jit(pc, oom);
    if (*oom != WEFT_OK) return false;
    if (!pc->ops) return true;
    const char *dt = default_text(pc, f, caps, oom);
    if (*oom != WEFT_OK) return false;
    if (dt && !strcmp(dt, steps)) return true;
    if (dt) { /* the tuner measured today's default beside the record (its first candidate) and
               * the record won: no need to time it again */
        bool measured = false;
        weft_status st = weft_db_has_steps(pc->db, pc->key, pc->tt.key, dt, &measured);
        if (st != WEFT_OK) {
            *oom = st; /* a database error is final, as the provider's other lookups */
            return false;
        }
        if (measured) return true;
    }
    weft_arena *a = weft_arena_create();
    if (!a) {
        *oom = weft_fail(WEFT_ERR_NOMEM, "tuned compile: out of memory");
        return false;
    }
    weft_schedule *s = NULL;
    weft_loop_func *lf = NULL;
    weft_kernel *k = NULL;
    /* a record that does not build here is left to the model compiler's retry (served) */
    bool built = step_ok(weft_schedule_create(f, &s), oom) && step_ok(weft_schedule_apply_text(s, steps), oom) &&
                 step_ok(weft_target_build(pc->ops, pc->target, s, a, &lf, &k), oom);
    bool faster = *oom == WEFT_OK && (!built || faster_than_default(pc, f, k, lf, caps, oom));
    if (k) pc->ops->kernel_destroy(k);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
    return faster && *oom == WEFT_OK;
}

static bool check_foreign_ok(provider_ctx *pc, const weft_te_func *f, const char *steps, const weft_target_caps *caps,
                             weft_status *oom)
{
    ensure_jit(pc, oom);
    weft_arena *a = weft_arena_create();
    if (!a) *oom = weft_fail(WEFT_ERR_NOMEM, "tuned compile: out of memory");
    weft_schedule *s = NULL, *ns = NULL;
    weft_loop_func *lf = NULL, *nlf = NULL;
    weft_kernel *k = NULL, *ref = NULL;
    bool ok = a && step_ok(weft_schedule_create(f, &s), oom) && step_ok(weft_schedule_apply_text(s, steps), oom);
    if (ok && !pc->ops) ok = step_ok(weft_lower(s, NULL, a, &lf), oom); /* no JIT here: lowering is all we can check */
    else if (ok) {
        ok = step_ok(weft_target_build(pc->ops, pc->target, s, a, &lf, &k), oom);
        /* timed first: a record that is not faster is never served, so it needs no check (the
         * naive reference of the check is the slow part); the timing runs in a forked worker,
         * where a wrong or crashing record does no harm */
        if (ok && pc->timing) {
            const char *dt = default_text(pc, f, caps, oom);
            ok = *oom == WEFT_OK && ((dt && !strcmp(dt, steps)) || faster_than_default(pc, f, k, lf, caps, oom));
        }
        ok = ok && step_ok(weft_schedule_create(f, &ns), oom) &&
             step_ok(weft_target_build(pc->ops, pc->target, ns, a, &nlf, &ref), oom);
        if (ok) {
            weft_measure_opts mo = weft_measure_opts_default();
            mo.threads = caps->max_threads;
            mo.timeout_s = CHECK_TIMEOUT_S;
            mo.fault = weft_tune_test_fault(steps, &mo); /* test builds: WEFT_TEST_FAULTS */
            weft_measure_result r;
            memset(&r, 0, sizeof r);
            ok = step_ok(weft_measure_check(pc->ops, k, lf, ref, nlf, CHECK_TOL, &mo, &r), oom);
        }
    }
    if (k) pc->ops->kernel_destroy(k);
    if (ref) pc->ops->kernel_destroy(ref);
    weft_schedule_destroy(ns);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
    return ok;
}

/* A timing switch read from the environment: unset or "1" times the records named by what
 * against the default, "0" serves them untimed; anything else is refused. */
static weft_status timing_switch(const char *name, const char *what, bool *on)
{
    const char *e = getenv(name);
    if (e && strcmp(e, "0") && strcmp(e, "1"))
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s=%.40s: expected 0 (serve %s untimed) or 1 (time them against the default)",
                         name, e, what);
    *on = !e || !strcmp(e, "1");
    return WEFT_OK;
}

static weft_status provide(void *ud, const weft_te_func *f, weft_schedule *s, const weft_target_caps *caps, int attempt,
                           char *src)
{
    provider_ctx *pc = ud;
    if (!pc->target_ready) {
        weft_status rc = timing_switch("WEFT_NEAREST_TIMING", "records of other machines that pass their check", &pc->timing);
        if (rc == WEFT_OK) rc = timing_switch("WEFT_OWN_TIMING", "this machine's records", &pc->own_timing);
        if (rc != WEFT_OK) return rc;
        weft_tuner_target_init(&pc->tt, caps, caps->max_threads);
        pc->target_ready = true;
    }
    if (attempt == 0) {
        if (pc->n_kernels == pc->cap_kernels) {
            int cap = pc->cap_kernels ? 2 * pc->cap_kernels : 16;
            choice *v = weft_realloc(pc->choices, sizeof *v * (size_t)cap);
            if (!v) return weft_fail(WEFT_ERR_NOMEM, "tuned compile: out of memory");
            pc->choices = v;
            pc->cap_kernels = cap;
        }
        pc->n_kernels++;
        weft_status rc = load_candidates(pc, f);
        if (rc != WEFT_OK) return rc;
    }
    choice *ch = &pc->choices[pc->n_kernels - 1];
    memset(ch, 0, sizeof *ch);
    for (; pc->next <= pc->n_near; pc->next++) {
        const char *steps = pc->next == 0 ? pc->own : pc->near[pc->next - 1].steps;
        if (!steps) continue;
        bool foreign = pc->next > 0;
        int slower_before = pc->n_slower;
        bool unchecked = foreign || pc->own_imported; /* measured elsewhere, or brought in as text */
        /* replay on a scratch schedule first: steps that do not apply leave s untouched */
        weft_schedule *probe = NULL;
        weft_status rc = weft_schedule_create(f, &probe);
        if (rc == WEFT_OK) rc = weft_schedule_apply_text(probe, steps);
        bool applies = rc == WEFT_OK;
        weft_schedule_destroy(probe);
        if (rc == WEFT_ERR_NOMEM) return rc;
        if (applies && unchecked && (rc = check_foreign(pc, f, steps, caps, &applies)) != WEFT_OK) return rc;
        if (applies && !unchecked && pc->own_timing) {
            weft_status oom = WEFT_OK;
            applies = own_record_faster(pc, f, steps, caps, &oom);
            if (oom != WEFT_OK) return oom;
            if (!applies) { /* this machine's record lost to the default here; the records of
                             * other machines were its tuning's seeds, measured here then: the
                             * default is served */
                pc->kernel_slower = true;
                pc->next = pc->n_near + 1;
                break;
            }
        }
        if (!applies) {
            if (unchecked && pc->n_slower == slower_before) pc->n_rejected++;
            else if (unchecked) pc->kernel_slower = true; /* not faster here */
            continue;
        }
        rc = weft_schedule_apply_text(s, steps);
        if (rc != WEFT_OK) return rc;
        ch->kind = foreign ? 2 : 1;
        if (foreign) snprintf(ch->target, sizeof ch->target, "%s", pc->near[pc->next - 1].target);
        snprintf(src, 16, foreign ? "nearest" : "tuned");
        pc->next++; /* a retry continues after this candidate */
        return WEFT_OK;
    }
    ch->slower = pc->kernel_slower;
    snprintf(src, 16, "default");
    return weft_schedule_default(s, caps);
}

static void summarize(const provider_ctx *pc, weft_tuned_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    sum->n_kernels = pc->n_kernels;
    sum->n_rejected = pc->n_rejected;
    sum->n_timed = pc->n_timed;
    sum->n_slower = pc->n_slower;
    int best_count = 0;
    for (int k = 0; k < pc->n_kernels; k++) {
        const choice *c = &pc->choices[k];
        if (c->kind == 1) sum->n_this_machine++;
        else if (c->kind == 0) {
            sum->n_default++;
            if (c->slower) sum->n_default_slower++;
        }
        else {
            sum->n_nearest++;
            int count = 0;
            bool first = true;
            for (int j = 0; j < pc->n_kernels; j++)
                if (pc->choices[j].kind == 2 && !strcmp(pc->choices[j].target, c->target)) {
                    count++;
                    if (j < k) first = false;
                }
            if (first) sum->n_nearest_machines++;
            if (count > best_count) {
                best_count = count;
                weft_tuner_key_describe(c->target, sum->nearest, sizeof sum->nearest);
            }
        }
    }
}

/* One shape of a symbolic model, compiled with the database at ud (a path). */
static weft_status compile_instance(void *ud, const weft_graph *g, const weft_model_options *opt, weft_model **out)
{
    return weft_model_compile_tuned_ex(g, opt, ud, out, NULL);
}

weft_status weft_model_compile_tuned_ex(const weft_graph *g, const weft_model_options *opt, const char *db_path,
                                        weft_model **out, weft_tuned_summary *summary)
{
    if (summary) memset(summary, 0, sizeof *summary);
    if (out) *out = NULL;
    if (!g || !db_path || !out) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_model_compile_tuned: NULL argument");
    provider_ctx pc = {0};
    weft_status rc = weft_db_open(db_path, false, &pc.db);
    if (rc != WEFT_OK) return rc;
    if (weft_graph_is_symbolic(g)) {
        weft_db_close(pc.db); /* checked that it opens; each shape opens it again */
        char *path = weft_strdup(db_path);
        if (!path) return weft_fail(WEFT_ERR_NOMEM, "out of memory");
        return weft_model_compile_symbolic(g, opt, compile_instance, path, free, out);
    }
    rc = weft_model_compile_ex(g, opt, provide, &pc, NULL, out);
    if (rc == WEFT_OK && summary) summarize(&pc, summary);
    free_candidates(&pc);
    free(pc.choices);
    if (pc.target) pc.ops->destroy(pc.target);
    weft_db_close(pc.db);
    return rc;
}

weft_status weft_model_compile_tuned(const weft_graph *g, const weft_model_options *opt, const char *db_path,
                                     weft_model **out, int *n_tuned)
{
    weft_tuned_summary sum;
    weft_status rc = weft_model_compile_tuned_ex(g, opt, db_path, out, &sum);
    if (n_tuned) *n_tuned = rc == WEFT_OK ? sum.n_this_machine + sum.n_nearest : 0;
    return rc;
}

void weft_tuned_summary_format(const weft_tuned_summary *s, char *buf, size_t n)
{
    char from[160] = "";
    if (s->n_nearest_machines == 1) snprintf(from, sizeof from, " (%s)", s->nearest);
    else if (s->n_nearest_machines > 1)
        snprintf(from, sizeof from, " (%d machines, mostly %s)", s->n_nearest_machines, s->nearest);
    char rejected[64] = "", timed[96] = "";
    if (s->n_rejected) snprintf(rejected, sizeof rejected, "; %d record(s) of other machines rejected", s->n_rejected);
    if (s->n_timed)
        snprintf(timed, sizeof timed, "; %d record(s) timed against the default here, %d not faster", s->n_timed,
                 s->n_slower);
    snprintf(buf, n, "kernels: %d from records for this machine, %d from the nearest machine%s, %d default%s%s",
             s->n_this_machine, s->n_nearest, from, s->n_default, rejected, timed);
}
