/* The tuning loop: task scheduler, evolutionary search under the cost model, measurement,
 * database records, progress and the tuning curve.
 *
 * Per round of a task: a pool of candidates (random samples of its sketch, and mutations of
 * its best measured ones) is lowered and scored by the cost model; the best-scored unmeasured
 * ones, plus a few random picks (epsilon-greedy), are handed as one batch to the measure callback
 * (weft_tune_options.measure: by default the local measurer of tune_measure.c, which compiles
 * and measures them one by one in forked workers; tools/mpi_tune.c spreads them over machines).
 * Every measurement is written to the database as soon as its batch returns, one transaction
 * each; a candidate the callback lost is not recorded and may come up again. A candidate that would become the
 * task's best is first checked against the naive schedule on random inputs; a mismatch is
 * recorded as an error and never served. The cost model is retrained on everything measured
 * after each round and saved to the database. The scheduler gives each task a first round,
 * then rounds to the task with the largest weight x best latency, boosted by recent
 * improvement and damped by the trials it already had. Everything random comes from --seed.
 *
 * Starting from another machine: a task with no measurement under this machine's key is
 * seeded with the best records of the nearest machines that have one (target_key.c's order,
 * at most SEEDS per task): its first round measures them here, right after the default
 * schedule, and those whose step text is one of its sketch's candidates become parents for
 * mutation. Without a cost model saved for this machine, the nearest machine's model is the
 * warm start. Every measurement is stored under this machine's key.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "tuner/measure_gpu.h"
#include "tuner/tuner.h"
#include "runtime/mem.h"

#define POOL_RANDOM 192
#define POOL_MUTANTS 96
#define TOP_KEEP 8
#define SEEDS 4              /* records of other machines measured in a task's first round */

typedef struct task_state {
    weft_task *task;
    int index;           /* in the tasks array (weft_tune_cand.task) */
    weft_sketch sk;
    int trials;          /* measurements in the database for this task and target */
    int trials_run;      /* ... made by this run */
    double best;         /* seconds; 0 = none */
    char *best_steps;    /* the step text measured at `best` (NULL: none) */
    double first_best;   /* best after the first round (the default schedule) */
    uint64_t *seen;      /* hashes of measured step texts */
    int n_seen, cap_seen;
    weft_cand top[TOP_KEEP];
    double top_lat[TOP_KEEP];
    int n_top;
    double improvement;  /* relative improvement of the last round */
    bool done;           /* nothing left to try (untiled: default measured) */
    char *seeds[SEEDS];  /* step texts of the nearest machines' best records (first round) */
    int n_seeds;
    int errors_run;      /* measurements of this run that failed (compile, launch, check) */
    char last_error[300]; /* the latest of them */
} task_state;

typedef struct tuner {
    const weft_tune_options *o;
    weft_db *db;
    const weft_target_ops *ops;
    weft_target *target;
    weft_target_caps caps;
    weft_tuner_target tt;
    weft_cost_model *model;
    float *x, *y;        /* training rows */
    int n_rows, cap_rows;
    uint64_t rng;
    double t0;
    FILE *curve;
    int total_trials;
    int n_confirmed;     /* claims to a task's best timed again against it (confirm_claim) */
    weft_tune_measurer *local; /* when o->measure is NULL */
    weft_gpu_measurer *gpu;    /* ... and o->gpu is set (tuner/measure_gpu.h) */
    weft_status stop;    /* the first failure that ends the run (the measure callback, out of
                          * memory, a database write); sticky */
    char stop_msg[512];  /* ... and its message */
} tuner;

/* Records the first failure that ends the run (st, with weft_last_error() as its message): out
 * of memory, a database write. A candidate that does not compile, crashes or computes wrong
 * values is not one (it is recorded). */
static void halt(tuner *tu, weft_status st)
{
    if (tu->stop != WEFT_OK || st == WEFT_OK) return;
    tu->stop = st;
    snprintf(tu->stop_msg, sizeof tu->stop_msg, "%s", weft_last_error());
}

static uint64_t hash_text(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool seen(const task_state *ts, uint64_t h)
{
    for (int i = 0; i < ts->n_seen; i++)
        if (ts->seen[i] == h) return true;
    return false;
}

static void mark_seen(tuner *tu, task_state *ts, uint64_t h)
{
    if (ts->n_seen == ts->cap_seen) {
        int cap = ts->cap_seen ? ts->cap_seen * 2 : 64;
        uint64_t *v = weft_realloc(ts->seen, sizeof *v * (size_t)cap);
        if (!v) return halt(tu, weft_fail(WEFT_ERR_NOMEM, "tune: out of memory"));
        ts->seen = v;
        ts->cap_seen = cap;
    }
    ts->seen[ts->n_seen++] = h;
}

static void add_row(tuner *tu, const float *feat, float y)
{
    if (tu->n_rows == tu->cap_rows) {
        int cap = tu->cap_rows ? tu->cap_rows * 2 : 256;
        float *x = weft_realloc(tu->x, sizeof *x * (size_t)cap * WEFT_FEATURE_DIM);
        if (!x) return halt(tu, weft_fail(WEFT_ERR_NOMEM, "tune: out of memory"));
        tu->x = x;
        float *yy = weft_realloc(tu->y, sizeof *yy * (size_t)cap);
        if (!yy) return halt(tu, weft_fail(WEFT_ERR_NOMEM, "tune: out of memory"));
        tu->y = yy;
        tu->cap_rows = cap;
    }
    memcpy(tu->x + (size_t)tu->n_rows * WEFT_FEATURE_DIM, feat, sizeof(float) * WEFT_FEATURE_DIM);
    tu->y[tu->n_rows++] = y;
}

/* Lowers step text for task f into arena a (NULL: out of memory); NULL when the steps do not
 * apply, or when memory ran out (then the run stops: halt). */
static weft_loop_func *lower_steps(tuner *tu, const weft_te_func *f, const char *steps, weft_arena *a)
{
    weft_status st = WEFT_OK;
    weft_loop_func *lf = a ? weft_tuner_lower_steps(f, steps, &tu->caps, a, &st) : NULL;
    if (!a) st = weft_fail(WEFT_ERR_NOMEM, "tune: out of memory");
    if (st == WEFT_ERR_NOMEM) halt(tu, st);
    return lf;
}

/* Score for the cost model: GFLOP/s (errors score 0). */
static float score(const weft_task *t, double median) { return median > 0 ? (float)(t->flops / median * 1e-9) : 0.0f; }

static void keep_top(task_state *ts, const weft_cand *c, double lat);
static bool cand_from_steps(const weft_sketch *sk, const char *steps, weft_cand *c);

typedef struct resume_ctx {
    tuner *tu;
    task_state *ts;
} resume_ctx;

/* A measurement of steps at median (seconds, > 0): the task's best when faster than it. */
static void note_time(tuner *tu, task_state *ts, const char *steps, double median)
{
    if (median <= 0 || (ts->best > 0 && median >= ts->best)) return;
    ts->best = median;
    if (ts->best_steps && !strcmp(ts->best_steps, steps)) return;
    char *dup = weft_strdup(steps);
    if (!dup) return halt(tu, weft_fail(WEFT_ERR_NOMEM, "tune: out of memory"));
    free(ts->best_steps);
    ts->best_steps = dup;
}

static bool on_record(void *ud, const char *steps, double median, const char *error)
{
    resume_ctx *rc = ud;
    task_state *ts = rc->ts;
    mark_seen(rc->tu, ts, hash_text(steps));
    ts->trials++;
    bool ok = median > 0 && (!error || !*error);
    if (ok) note_time(rc->tu, ts, steps, median);
    weft_cand c;
    if (ok && cand_from_steps(&ts->sk, steps, &c)) keep_top(ts, &c, median); /* parents when resuming */
    weft_arena *a = weft_arena_create();
    weft_loop_func *lf = lower_steps(rc->tu, ts->task->f, steps, a);
    if (lf) {
        float feat[WEFT_FEATURE_DIM];
        weft_features_extract(lf, feat);
        add_row(rc->tu, feat, ok ? score(ts->task, median) : 0.0f);
    }
    weft_arena_destroy(a);
    return rc->tu->stop == WEFT_OK;
}

static weft_status record(tuner *tu, task_state *ts, const char *steps, const weft_measure_result *r, const char *error)
{
    weft_db_measurement m = {.workload = ts->task->key, .target = tu->tt.key, .steps = steps, .latencies = r->times,
                             .n_latencies = r->n_times, .median = error ? 0 : r->median, .error = error};
    return weft_db_put_measurement(tu->db, &m);
}

/* One candidate of a round: its step text and lowered loop function (for the features), and
 * its sketch decisions when it has them (parents for mutation). */
typedef struct cand_pick {
    const char *steps;
    weft_loop_func *lf;
    weft_cand c;
    bool has_c;
    double m;            /* out: median (0: an error; < 0: lost, not recorded) */
} cand_pick;

/* A candidate that measured faster than the task's best (a claim) is timed again with the
 * local CPU measurer, alternating with the best's kernel in one worker, before it is recorded:
 * the record keeps the paired times, and the best gets one more record, its paired median. On a
 * shared machine one measurement can be a quarter off (memory bandwidth taken by neighbours for
 * a minute); the fastest of hundreds of single measurements is then mostly the luckiest one,
 * and a decoder's streamed-weight product tuned that way ran 5-15% slower in its model than the
 * default schedule it had "beaten" by 28%. Database lookups stay "fastest record": the paired
 * times are what make the fastest record a fair one. The best's record counts as a measurement
 * (of --trials: a claim is timed again only while the budget has room for it). Remote measurers,
 * through the measure callback, and GPU measurers keep single measurements. */
static void confirm_claim(tuner *tu, task_state *ts, const char *steps, weft_measure_result *r, int pending)
{
    if (tu->o->measure || tu->gpu || !tu->local || ts->best <= 0 || !ts->best_steps || r->median >= ts->best ||
        !strcmp(ts->best_steps, steps))
        return;
    /* the best's paired record counts as a measurement: only within a trial budget */
    if (tu->o->trials > 0 && tu->total_trials + pending >= tu->o->trials) return;
    weft_measure_result pr;
    if (weft_tune_measurer_pair(tu->local, ts->index, steps, ts->best_steps, tu->rng, &pr) != WEFT_OK) return;
    double t = pr.median_other;
    weft_db_measurement m = {.workload = ts->task->key, .target = tu->tt.key, .steps = ts->best_steps, .latencies = &t,
                             .n_latencies = 1, .median = t};
    weft_status st = weft_db_put_measurement(tu->db, &m);
    if (st != WEFT_OK) return halt(tu, st);
    ts->trials++;
    ts->trials_run++;
    tu->total_trials++;
    tu->n_confirmed++;
    note_time(tu, ts, ts->best_steps, t); /* the same text: note_time keeps the string */
    *r = pr;
}

/* Measures a round's picks through the callback (or the local measurer), then records each
 * one, in order (a claim to the best confirmed first: confirm_claim), and updates the task's
 * best and parents. */
static void measure_picks(tuner *tu, task_state *ts, cand_pick *p, int n)
{
    if (n <= 0 || tu->stop != WEFT_OK) {
        for (int i = 0; i < n; i++) p[i].m = -1;
        return;
    }
    weft_tune_cand *c = weft_calloc((size_t)n, sizeof *c);
    if (!c) {
        halt(tu, weft_fail(WEFT_ERR_NOMEM, "tune: out of memory"));
        for (int i = 0; i < n; i++) p[i].m = -1;
        return;
    }
    for (int i = 0; i < n; i++)
        c[i] = (weft_tune_cand){.task = ts->index, .steps = p[i].steps, .seed = tu->rng, .check_below = ts->best};
    weft_status rc = WEFT_OK;
    if (tu->o->measure) rc = tu->o->measure(tu->o->measure_ud, c, n);
    else if (tu->gpu)
        for (int i = 0; i < n; i++) weft_gpu_measurer_run(tu->gpu, &c[i]);
    else
        for (int i = 0; i < n; i++) weft_tune_measurer_run(tu->local, &c[i]);
    if (rc != WEFT_OK) halt(tu, rc);
    for (int i = 0; i < n; i++) {
        p[i].m = -1;
        if (c[i].fatal != WEFT_OK && tu->stop == WEFT_OK) { /* this process ran out of memory */
            tu->stop = c[i].fatal;
            snprintf(tu->stop_msg, sizeof tu->stop_msg, "%s", c[i].error);
        }
        if (tu->stop != WEFT_OK || c[i].lost) continue;
        const char *error = c[i].error[0] ? c[i].error : NULL;
        /* a candidate better than the best kept so far must have passed the check */
        if (!error && ts->best > 0 && c[i].r.median < ts->best && c[i].check_below > 0 && c[i].r.median >= c[i].check_below)
            error = "internal: a new best was not checked against the naive schedule";
        if (!error) confirm_claim(tu, ts, p[i].steps, &c[i].r, n - i);
        if (tu->stop != WEFT_OK) continue;
        weft_status st = record(tu, ts, p[i].steps, &c[i].r, error);
        if (st != WEFT_OK) {
            halt(tu, st);
            continue;
        }
        ts->trials++;
        ts->trials_run++;
        tu->total_trials++;
        if (error) {
            ts->errors_run++;
            snprintf(ts->last_error, sizeof ts->last_error, "%s", error);
        }
        mark_seen(tu, ts, hash_text(p[i].steps));
        float feat[WEFT_FEATURE_DIM];
        weft_features_extract(p[i].lf, feat);
        add_row(tu, feat, error ? 0.0f : score(ts->task, c[i].r.median));
        p[i].m = error ? 0 : c[i].r.median;
        if (p[i].m > 0) {
            if (p[i].has_c) keep_top(ts, &p[i].c, p[i].m);
            note_time(tu, ts, p[i].steps, p[i].m);
        }
    }
    free(c);
}

typedef struct pool_item {
    weft_cand c;
    char *steps;
    weft_arena *arena;
    weft_loop_func *lf;
    float pred;
} pool_item;

static int cmp_pred(const void *a, const void *b)
{
    float x = ((const pool_item *)a)->pred, y = ((const pool_item *)b)->pred;
    return x > y ? -1 : x < y;
}

/* Keeps the TOP_KEEP fastest measured candidates (sorted) as parents for mutation. */
static void keep_top(task_state *ts, const weft_cand *c, double lat)
{
    if (lat <= 0) return;
    int i;
    if (ts->n_top < TOP_KEEP) i = ts->n_top++;
    else if (lat < ts->top_lat[TOP_KEEP - 1]) i = TOP_KEEP - 1;
    else return;
    ts->top[i] = *c;
    ts->top_lat[i] = lat;
    for (; i > 0 && ts->top_lat[i] < ts->top_lat[i - 1]; i--) {
        weft_cand tc = ts->top[i];
        ts->top[i] = ts->top[i - 1];
        ts->top[i - 1] = tc;
        double tl = ts->top_lat[i];
        ts->top_lat[i] = ts->top_lat[i - 1];
        ts->top_lat[i - 1] = tl;
    }
}

/* Splits a line into at most max space-separated words (in place); returns the count. */
static int words(char *line, char **w, int max)
{
    int n = 0;
    for (char *tok = strtok(line, " \t"); tok && n < max; tok = strtok(NULL, " \t")) w[n++] = tok;
    return n;
}

/* The sketch candidate whose step text is `steps`, when there is one: the decisions are read
 * back from the split factors, the pragma, the parallel fuse and the packing, and the text of
 * the candidate rebuilt from them must equal `steps`. */
static bool cand_from_steps(const weft_sketch *sk, const char *steps, weft_cand *c)
{
    if (sk->knobbed) return weft_sketch_knobs_from_steps(sk, steps, c);
    if (!sk->tiled || !steps) return false;
    memset(c, 0, sizeof *c);
    char *text = weft_strdup(steps);
    if (!text) return false;
    bool fused = false;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        char *w[WEFT_SKETCH_MAX_AXES + 4];
        int n = words(line, w, WEFT_SKETCH_MAX_AXES + 4);
        if (n == 5 && !strcmp(w[0], "split") && !strcmp(w[1], sk->t)) {
            for (int d = 0; d < sk->n_sp; d++)
                if (!strcmp(w[2], sk->spt[d])) c->t1[d] = atoll(w[3]), c->t2[d] = atoll(w[4]);
        } else if (n == 4 && !strcmp(w[0], "split") && !strcmp(w[1], sk->r)) {
            for (int d = 0; d < sk->n_sp; d++)
                if (!strcmp(w[2], sk->sp[d])) c->r_in[d] = atoll(w[3]);
            for (int k = 0; k < sk->n_red; k++)
                if (!strcmp(w[2], sk->red[k])) c->k_in[k] = atoll(w[3]);
        } else if (n == 5 && !strcmp(w[0], "pragma") && !strcmp(w[3], "auto_unroll")) {
            c->unroll = atoi(w[4]);
        } else if (n >= 2 && !strcmp(w[0], "fuse") && !strcmp(w[1], sk->t)) {
            c->n_par = n - 2;
            fused = true;
        } else if (n == 3 && !strcmp(w[0], "parallel") && !strcmp(w[1], sk->t) && !fused) {
            c->n_par = 1;
        } else if (n >= 3 && !strcmp(w[0], "cache_read") && sk->pack[0] && !strcmp(w[1], sk->pack)) {
            c->pack = true;
        }
    }
    free(text);
    char *again = weft_sketch_steps(sk, c);
    bool same = again && !strcmp(again, steps);
    free(again);
    return same;
}

/* One round of a task: at most `batch` new measurements, measured as one batch (two in a
 * task's first round: the default schedule and the nearest machines' records first). */
static void task_round(tuner *tu, task_state *ts, int batch)
{
    double before = ts->best;
    if (!weft_sketch_searchable(&ts->sk) || ts->trials == 0) {
        /* The default schedule first (and, without a sketch, only), then the best records of
         * the nearest machines (tuned elsewhere, measured here). */
        cand_pick p[1 + SEEDS];
        weft_arena *ar[1 + SEEDS];
        int np = 0;
        weft_schedule *s = NULL;
        char *steps = NULL;
        weft_status st = weft_schedule_create(ts->task->f, &s);
        if (st == WEFT_OK) st = weft_schedule_default(s, &tu->caps);
        if (st == WEFT_OK && !(steps = weft_schedule_text(s))) st = weft_fail(WEFT_ERR_NOMEM, "tune: out of memory");
        weft_schedule_destroy(s);
        if (st != WEFT_OK) {
            halt(tu, weft_fail(st, "tune: %s: default schedule: %.300s", ts->task->name, weft_last_error()));
            return;
        }
        for (int i = -1; i < ts->n_seeds && np < batch; i++) {
            const char *text = i < 0 ? steps : ts->seeds[i];
            if (!text || seen(ts, hash_text(text))) continue;
            bool dup = false;
            for (int j = 0; j < np && !dup; j++) dup = !strcmp(p[j].steps, text);
            if (dup) continue;
            weft_arena *a = weft_arena_create();
            weft_loop_func *lf = lower_steps(tu, ts->task->f, text, a);
            if (!lf) {
                weft_arena_destroy(a);
                continue;
            }
            ar[np] = a;
            p[np] = (cand_pick){.steps = text, .lf = lf};
            p[np].has_c = i >= 0 && cand_from_steps(&ts->sk, text, &p[np].c);
            np++;
        }
        measure_picks(tu, ts, p, np);
        int lost = 0;
        for (int i = 0; i < np; i++) {
            if (p[i].m >= 0) batch--;
            else lost++;
            weft_arena_destroy(ar[i]);
        }
        free(steps);
        if (ts->first_best <= 0) ts->first_best = ts->best;
        if (!weft_sketch_searchable(&ts->sk)) {
            ts->done = lost == 0; /* nothing else to try (unless it was lost: then again) */
            return;
        }
        if (batch <= 0 || tu->stop != WEFT_OK) return;
    }
    int n_pool = POOL_RANDOM + (ts->n_top ? POOL_MUTANTS : 0);
    pool_item *pool = weft_calloc((size_t)n_pool, sizeof *pool);
    float *feat = weft_malloc(sizeof(float) * WEFT_FEATURE_DIM * (size_t)n_pool);
    cand_pick *picks = weft_calloc((size_t)(batch > 0 ? batch : 1), sizeof *picks);
    if (!pool || !feat || !picks) halt(tu, weft_fail(WEFT_ERR_NOMEM, "tune: out of memory"));
    int n = 0;
    for (int i = 0; pool && feat && picks && tu->stop == WEFT_OK && i < n_pool; i++) {
        weft_cand c;
        if (i < POOL_RANDOM) weft_sketch_sample(&ts->sk, &tu->rng, &c);
        else {
            c = ts->top[weft_tuner_rand(&tu->rng) % (uint64_t)ts->n_top];
            weft_sketch_mutate(&ts->sk, &tu->rng, &c);
        }
        char *steps = weft_sketch_steps(&ts->sk, &c);
        uint64_t h = steps ? hash_text(steps) : 0;
        bool dup = !steps || seen(ts, h);
        for (int j = 0; j < n && !dup; j++) dup = !strcmp(pool[j].steps, steps);
        if (dup) {
            free(steps);
            continue;
        }
        weft_arena *a = weft_arena_create();
        weft_loop_func *lf = lower_steps(tu, ts->task->f, steps, a);
        if (!lf) {
            free(steps);
            weft_arena_destroy(a);
            continue;
        }
        pool[n] = (pool_item){.c = c, .steps = steps, .arena = a, .lf = lf};
        weft_features_extract(lf, feat + (size_t)n * WEFT_FEATURE_DIM);
        n++;
    }
    if (tu->stop == WEFT_OK && n > 0 && weft_cost_model_trained(tu->model)) {
        float *pred = weft_malloc(sizeof(float) * (size_t)n);
        weft_status st = pred ? weft_cost_model_predict(tu->model, feat, n, pred) : weft_fail(WEFT_ERR_NOMEM, "tune: out of memory");
        if (st == WEFT_OK)
            for (int i = 0; i < n; i++) pool[i].pred = pred[i];
        else halt(tu, st);
        free(pred);
        qsort(pool, (size_t)n, sizeof *pool, cmp_pred);
    }
    /* epsilon-greedy: a quarter of the batch (at least one) from the rest of the pool */
    int n_eps = weft_cost_model_trained(tu->model) ? (batch + 3) / 4 : batch;
    int n_top = batch - n_eps, np = 0;
    for (int i = 0; i < n && np < batch; i++) {
        bool take = i < n_top;
        if (!take && n_eps > 0 && weft_tuner_rand(&tu->rng) % (uint64_t)(n - i > 0 ? n - i : 1) < (uint64_t)n_eps) take = true;
        if (!take) continue;
        if (i >= n_top) n_eps--;
        picks[np++] = (cand_pick){.steps = pool[i].steps, .lf = pool[i].lf, .c = pool[i].c, .has_c = true};
    }
    measure_picks(tu, ts, picks, np);
    for (int i = 0; i < n; i++) {
        free(pool[i].steps);
        weft_arena_destroy(pool[i].arena);
    }
    free(pool);
    free(feat);
    free(picks);
    ts->improvement = before > 0 && ts->best > 0 ? (before - ts->best) / before : 1.0;
    if (n == 0 && tu->stop == WEFT_OK) ts->done = true; /* the sketch's space is exhausted */
}

/* A task new to this machine: the best records of the nearest machines, nearest first, one
 * per distinct step text, at most SEEDS. */
static weft_status load_seeds(tuner *tu, task_state *ts)
{
    weft_tuner_nearest *near = NULL;
    int n = 0;
    weft_status rc = weft_tuner_nearest_records(tu->db, &tu->tt, ts->task->key, &near, &n);
    for (int i = 0; rc == WEFT_OK && i < n && ts->n_seeds < SEEDS; i++) {
        bool dup = false;
        for (int j = 0; j < ts->n_seeds && !dup; j++) dup = !strcmp(ts->seeds[j], near[i].steps);
        if (dup) continue;
        ts->seeds[ts->n_seeds++] = near[i].steps;
        near[i].steps = NULL; /* now the task's */
    }
    if (rc == WEFT_OK && ts->n_seeds > 0 && tu->o->log) {
        char from[96];
        weft_tuner_key_describe(near[0].target, from, sizeof from);
        fprintf(tu->o->log, "%s: no records for this machine; starting from %d record(s) of other machines (nearest: %s)\n",
                ts->task->name, ts->n_seeds, from);
    }
    weft_tuner_nearest_free(near, n);
    return rc;
}

/* No cost model saved for this machine: load the nearest machine's (a corrupt one is skipped). */
static weft_status load_nearest_model(tuner *tu)
{
    weft_tuner_nearest *near = NULL;
    int n = 0;
    weft_status rc = weft_tuner_nearest_models(tu->db, &tu->tt, &near, &n);
    for (int i = 0; rc == WEFT_OK && i < n; i++) {
        bool found = false;
        void *buf = NULL;
        size_t len = 0;
        rc = weft_db_load_model(tu->db, near[i].target, &found, &buf, &len);
        bool loaded = rc == WEFT_OK && found && weft_cost_model_load_stored(tu->model, buf, len) == WEFT_OK;
        free(buf);
        if (loaded) {
            if (tu->o->log) {
                char from[96];
                weft_tuner_key_describe(near[i].target, from, sizeof from);
                fprintf(tu->o->log, "no cost model for this machine yet: starting from the model of %s\n", from);
            }
            break;
        }
    }
    weft_tuner_nearest_free(near, n);
    return rc;
}

static double model_latency(const task_state *ts, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += ts[i].task->weight * ts[i].best;
    return s;
}

static void fmt_time(double s, char *buf, size_t n)
{
    if (s < 0) s = 0;
    if (s < 120) snprintf(buf, n, "%.0fs", s);
    else snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
}

weft_status weft_tune_tasks(weft_task *tasks, int n, const weft_tune_options *o)
{
    if (!o || !o->db) return weft_fail(WEFT_ERR_INVALID_ARG, "tune: a database path is required");
    if (o->trials <= 0 && o->time_s <= 0) return weft_fail(WEFT_ERR_INVALID_ARG, "tune: give --trials N or --time S");
    tuner tu = {.o = o, .rng = o->seed ? o->seed : 1, .t0 = weft_rt_now()};
    task_state *ts = weft_calloc((size_t)(n ? n : 1), sizeof *ts);
    weft_status rc = ts ? weft_db_open(o->db, true, &tu.db) : weft_fail(WEFT_ERR_NOMEM, "out of memory");
    if (rc == WEFT_OK) {
        const char *name = o->gpu ? o->gpu->target : "llvm"; /* a CUDA target compiles without the driver */
        tu.ops = weft_target_find(name);
        rc = tu.ops ? tu.ops->create(&tu.target) : weft_fail(WEFT_ERR_UNAVAILABLE, "tune: no target %s in this build", name);
    }
    if (rc == WEFT_OK) {
        tu.ops->caps(tu.target, &tu.caps);
        if (o->gpu) weft_tuner_target_init_gpu(&tu.tt, o->gpu);
        else weft_tuner_target_init(&tu.tt, &tu.caps, o->threads);
        weft_db_target dt = {tu.tt.key, tu.tt.name, tu.tt.model, tu.tt.features, tu.tt.cores};
        rc = weft_db_put_target(tu.db, &dt);
    }
    if (rc == WEFT_OK) rc = weft_cost_model_create(&tu.model);
    if (rc == WEFT_OK) {
        /* warm start: the saved model of this target */
        bool found = false;
        void *buf = NULL;
        size_t len = 0;
        rc = weft_db_load_model(tu.db, tu.tt.key, &found, &buf, &len);
        if (rc == WEFT_OK && found && weft_cost_model_load_stored(tu.model, buf, len) != WEFT_OK) {
            /* A saved model that does not load (corrupted) is a cache: say so, start without it. */
            if (o->log) fprintf(o->log, "the saved cost model of %s does not load (%s): starting without it\n", tu.tt.key,
                                weft_last_error());
            found = false;
        }
        free(buf);
        if (rc == WEFT_OK && !found) rc = load_nearest_model(&tu);
    }
    if (rc == WEFT_OK && !o->measure && o->gpu)
        rc = weft_gpu_measurer_create(tasks, n, o->gpu, o->threads, o->timeout_s > 0 ? o->timeout_s : 10, &tu.gpu);
    else if (rc == WEFT_OK && !o->measure) rc = weft_tune_measurer_create(tasks, n, o->threads, &tu.local);
    for (int i = 0; rc == WEFT_OK && i < n; i++) {
        ts[i].task = &tasks[i];
        ts[i].index = i;
        weft_db_workload w = {tasks[i].key, tasks[i].te_text ? tasks[i].te_text : "", tasks[i].shapes, tasks[i].flops};
        rc = weft_db_put_workload(tu.db, &w);
        if (rc == WEFT_OK) rc = weft_sketch_make(tasks[i].f, &tu.caps, &ts[i].sk);
        resume_ctx rctx = {&tu, &ts[i]};
        if (rc == WEFT_OK) rc = weft_db_each(tu.db, tasks[i].key, tu.tt.key, on_record, &rctx);
        if (rc == WEFT_OK && tu.stop != WEFT_OK) rc = weft_fail(tu.stop, "%s", tu.stop_msg);
        if (rc == WEFT_OK && ts[i].trials == 0) rc = load_seeds(&tu, &ts[i]);
        ts[i].first_best = ts[i].best;
        tu.total_trials += ts[i].trials;
    }
    if (rc == WEFT_OK && tu.stop != WEFT_OK) rc = weft_fail(tu.stop, "%s", tu.stop_msg);
    if (rc == WEFT_OK && tu.n_rows >= 8) rc = weft_cost_model_train(tu.model, tu.x, tu.y, tu.n_rows);
    if (rc == WEFT_OK && o->curve) {
        tu.curve = fopen(o->curve, "w");
        if (!tu.curve) rc = weft_fail(WEFT_ERR_IO, "cannot write curve file %s", o->curve);
        else fprintf(tu.curve, "trials,seconds,latency_ms\n");
    }
    int batch = o->batch > 0 ? o->batch : 8;
    if (rc == WEFT_OK && o->log)
        fprintf(o->log, "tuning %d task(s) on %s; %d measurement(s) already in %s\n", n, tu.tt.key, tu.total_trials, o->db);
    while (rc == WEFT_OK) {
        double elapsed = weft_rt_now() - tu.t0;
        if (o->trials > 0 && tu.total_trials >= o->trials) break;
        if (o->time_s > 0 && elapsed >= o->time_s) break;
        /* pick a task: first rounds in order, then by weight x latency x (1 + improvement) */
        int pick = -1;
        double best_prio = -1;
        for (int i = 0; i < n; i++) {
            if (ts[i].done) continue;
            if (ts[i].trials == 0) {
                pick = i;
                break;
            }
            /* time the task costs the model, boosted by recent gains, damped by effort spent */
            double prio = ts[i].task->weight * (ts[i].best > 0 ? ts[i].best : 1.0) * (1.0 + 4.0 * ts[i].improvement) /
                          sqrt(1.0 + ts[i].trials / 64.0);
            if (prio > best_prio) {
                best_prio = prio;
                pick = i;
            }
        }
        if (pick < 0) break;
        int this_batch = batch;
        if (o->trials > 0 && o->trials - tu.total_trials < this_batch) this_batch = o->trials - tu.total_trials;
        task_round(&tu, &ts[pick], this_batch);
        if (tu.stop != WEFT_OK) {
            /* the measure callback gave up: end as a finished run would (model saved, summary
             * printed), then return its error */
            if (o->log) fprintf(o->log, "tuning stops: %s\n", tu.stop_msg);
            break;
        }
        if (tu.n_rows >= 8 && (rc = weft_cost_model_train(tu.model, tu.x, tu.y, tu.n_rows)) != WEFT_OK) break;
        elapsed = weft_rt_now() - tu.t0;
        double lat = model_latency(ts, n);
        bool all_measured = true;
        for (int i = 0; i < n; i++) all_measured = all_measured && ts[i].best > 0;
        if (tu.curve && all_measured) { /* the estimate means something once every task has a time */
            fprintf(tu.curve, "%d,%.2f,%.6f\n", tu.total_trials, elapsed, lat * 1e3);
            fflush(tu.curve);
        }
        if (o->log) {
            const task_state *t = &ts[pick];
            char el[32], eta[32] = "?";
            fmt_time(elapsed, el, sizeof el);
            if (o->trials > 0 && tu.total_trials > 0) {
                int done_now = 0;
                for (int i = 0; i < n; i++) done_now += ts[i].trials_run;
                if (done_now > 0) fmt_time(elapsed / done_now * (o->trials - tu.total_trials), eta, sizeof eta);
            } else if (o->time_s > 0) fmt_time(o->time_s - elapsed, eta, sizeof eta);
            fprintf(o->log, "[%3d/%d] %-28.28s trials %4d  best %8.2f GFLOP/s %10.1f us | total %d trials, %.3f ms, %s, ETA %s\n",
                    pick + 1, n, t->task->name, t->trials, t->best > 0 ? t->task->flops / t->best * 1e-9 : 0.0,
                    t->best * 1e6, tu.total_trials, lat * 1e3, el, eta);
            fflush(o->log);
        }
    }
    if (rc == WEFT_OK && weft_cost_model_trained(tu.model)) {
        void *buf = NULL;
        size_t len = 0;
        rc = weft_cost_model_save(tu.model, &buf, &len);
        if (rc == WEFT_OK) rc = weft_db_save_model(tu.db, tu.tt.key, buf, len);
        free(buf);
    }
    if (rc == WEFT_OK && o->log) {
        fprintf(o->log, "\n%-4s %-28s %6s %7s %12s %12s %8s %10s\n", "#", "task", "weight", "trials", "first_us", "best_us",
                "speedup", "GFLOP/s");
        for (int i = 0; i < n; i++)
            fprintf(o->log, "%-4d %-28.28s %6d %7d %12.1f %12.1f %7.2fx %10.2f\n", i + 1, ts[i].task->name, ts[i].task->weight,
                    ts[i].trials, ts[i].first_best * 1e6, ts[i].best * 1e6, ts[i].best > 0 ? ts[i].first_best / ts[i].best : 0.0,
                    ts[i].best > 0 ? ts[i].task->flops / ts[i].best * 1e-9 : 0.0);
        fprintf(o->log, "estimated model latency %.3f ms (sum of weight x best); %d measurements in %s\n",
                model_latency(ts, n) * 1e3, tu.total_trials, o->db);
        if (tu.n_confirmed > 0)
            fprintf(o->log, "%d candidate(s) faster than their task's best were timed again, alternating with it\n",
                    tu.n_confirmed);
        /* failed measurements are kept in the database as errors; say how many, and the latest */
        for (int i = 0; i < n; i++)
            if (ts[i].errors_run > 0)
                fprintf(o->log, "%s: %d of %d measurement(s) of this run failed; the latest: %s\n", ts[i].task->name,
                        ts[i].errors_run, ts[i].trials_run, ts[i].last_error);
    }
    if (rc == WEFT_OK && tu.stop != WEFT_OK) rc = weft_fail(tu.stop, "%s", tu.stop_msg);
    weft_tune_measurer_destroy(tu.local);
    weft_gpu_measurer_destroy(tu.gpu);
    for (int i = 0; ts && i < n; i++) {
        free(ts[i].seen);
        free(ts[i].best_steps);
        for (int j = 0; j < ts[i].n_seeds; j++) free(ts[i].seeds[j]);
    }
    if (tu.curve) fclose(tu.curve);
    if (tu.target) tu.ops->destroy(tu.target);
    weft_cost_model_destroy(tu.model);
    weft_db_close(tu.db);
    free(tu.x);
    free(tu.y);
    free(ts);
    return rc;
}
