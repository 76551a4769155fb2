/* The autotuner, internal view (DESIGN #5).
 *
 *   model graph --tasks--> unique fused kernels (structural hash), weight, FLOPs
 *   task --sketch--> rules: inline elementwise, multi-level tiling SSRSRS of the reuse stage
 *                    fused into its consumer's tile, cache_write accumulator, vectorize/unroll/
 *                    parallel annotations, auto_unroll pragma
 *   sketch + decisions (tile factorizations, unroll depth, parallel granularity) --> steps
 *   search: random sampling + evolution (mutation) under the XGBoost cost model, epsilon-greedy,
 *           batches measured in forked workers, every result written to the database; a new
 *           best must match the naive schedule before it is kept
 *   scheduler: spends the trial budget on tasks by weight x latency and recent improvement
 */
#ifndef WEFT_TUNER_TUNER_H
#define WEFT_TUNER_TUNER_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/caps.h"
#include "ir/tensor.h"
#include "schedule/schedule.h"
#include "tuner/cost_model.h"
#include "tuner/db.h"
#include "weft/graph.h"

/* ---- target_key.c ---- */
typedef struct weft_tuner_target {
    char key[160];     /* "llvm;cpu=znver5;feat=<16 hex>;cores=2;threads=2" */
    char name[16];
    char model[128];   /* /proc/cpuinfo model name */
    char features[1024];
    int cores;
    int threads;       /* threads the kernels run with (<= 0 given: the cores) */
} weft_tuner_target;
void weft_tuner_target_init(weft_tuner_target *t, const weft_target_caps *caps, int threads);

/* ---- task.c ---- */
typedef struct weft_task {
    char key[17];          /* workload key: weft_te_func_hash, 16 hex digits */
    char name[96];
    weft_arena *arena;     /* owns f */
    weft_te_func *f;
    double flops;
    int weight;            /* occurrences in the model */
    char *te_text;         /* printable TE (malloc) */
    char shapes[512];
} weft_task;

/* Unique kernels of a graph (as compiling would build them), weighted by occurrences. */
weft_status weft_tasks_from_graph(const weft_graph *g, const weft_target_caps *caps, weft_task **out, int *n);
/* One task for a single op (weft tune --op). */
weft_status weft_task_from_op(const char *op, int n_shape, const int64_t *shape, weft_task **out, int *n);
void weft_tasks_free(weft_task *tasks, int n);

/* ---- sketch.c ---- */
#define WEFT_SKETCH_MAX_AXES 8
typedef struct weft_sketch {
    bool tiled;            /* false: the task has no reuse stage; its only candidate is the default */
    char prefix[2048];     /* structural steps: inlining, cache_write */
    char r[64], t[64];     /* the reduction stage and the tiled output stage */
    int n_sp, n_red;
    char sp[WEFT_SKETCH_MAX_AXES][64];  /* R's spatial iterators */
    char spt[WEFT_SKETCH_MAX_AXES][64]; /* T's iterators (same axes, maybe other names) */
    char red[WEFT_SKETCH_MAX_AXES][64];
    int64_t sp_ext[WEFT_SKETCH_MAX_AXES], red_ext[WEFT_SKETCH_MAX_AXES];
    int vec;               /* spatial axis vectorized in the accumulator */
    char pack[64];         /* an input R reads along the vector axis and reuses across another
                            * axis (B of a matmul): may be packed per panel ("" when none) */
    char pack_last[64];    /* the packed copy's innermost iterator */
    int64_t pack_last_ext;
    int lanes;             /* f32 vector lanes of the target */
    int regs;              /* vector registers of the target (register-tile budget) */
} weft_sketch;

typedef struct weft_cand {
    int64_t t1[WEFT_SKETCH_MAX_AXES], t2[WEFT_SKETCH_MAX_AXES]; /* output tile levels (.1, .2) */
    int64_t r_in[WEFT_SKETCH_MAX_AXES];  /* accumulator inner tile, divides t2 */
    int64_t k_in[WEFT_SKETCH_MAX_AXES];  /* reduction inner split */
    int unroll;                          /* auto_unroll depth on the outer reduction loop */
    int n_par;                           /* outer loops fused into the parallel loop */
    bool pack;                           /* pack sk->pack per panel of the vector axis */
} weft_cand;

weft_status weft_sketch_make(const weft_te_func *f, const weft_target_caps *caps, weft_sketch *out);
void weft_sketch_sample(const weft_sketch *sk, uint64_t *rng, weft_cand *c);
/* Vector registers c's register tile keeps live; whether they fit the target's. */
int weft_sketch_live_vectors(const weft_sketch *sk, const weft_cand *c);
bool weft_sketch_fits_registers(const weft_sketch *sk, const weft_cand *c);
void weft_sketch_mutate(const weft_sketch *sk, uint64_t *rng, weft_cand *c);
/* The step text of a candidate (malloc'd). */
char *weft_sketch_steps(const weft_sketch *sk, const weft_cand *c);
uint64_t weft_tuner_rand(uint64_t *state);

/* ---- tune.c ---- */
typedef struct weft_tune_options {
    const char *db;
    int trials;           /* total measurements across tasks (previous runs included); 0: from time */
    double time_s;        /* wall-clock budget; 0: none */
    int threads;          /* measurement threads (<= 0: cores) */
    uint64_t seed;
    const char *curve;    /* CSV path for best-so-far vs trials and seconds, or NULL */
    int batch;            /* candidates measured per round (default 8) */
    FILE *log;            /* progress lines (NULL: quiet) */
} weft_tune_options;

weft_status weft_tune_tasks(weft_task *tasks, int n, const weft_tune_options *o);

/* ---- apply.c ---- */
/* Compiles a graph with the best database records for this machine (default schedules where
 * none). *n_tuned counts kernels that got a database schedule. */
weft_status weft_model_compile_tuned(const weft_graph *g, const weft_model_options *opt, const char *db_path,
                                     weft_model **out, int *n_tuned);
/* The best record's steps for f on this target, applied to s; *found false when none. */
weft_status weft_tuner_lookup(weft_db *db, const weft_tuner_target *t, const weft_te_func *f, weft_schedule *s, bool *found);

#endif
