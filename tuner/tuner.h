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
#include "tuner/measure.h"
#include "weft/graph.h"
#include "weft/model.h"

/* ---- target_key.c ---- */
typedef struct weft_tuner_target {
    char key[160];     /* "llvm;cpu=znver5;feat=<16 hex>;cores=2;threads=2" */
    char name[16];
    char model[128];   /* /proc/cpuinfo model name */
    char features[1024];
    int cores;
    int threads;       /* threads the kernels run with (<= 0 given: the cores) */
} weft_tuner_target;
/* For a CUDA target's caps (name "cuda") the key is the device's (below), asked of the driver
 * in this process: never call it so in a process that forks measurement workers. */
void weft_tuner_target_init(weft_tuner_target *t, const weft_target_caps *caps, int threads);
/* The key of a CUDA device: "cuda;dev=NAME;cc=9.0;drv=13000" (';' and '=' in the name become
 * '_'); name "cuda", model the device name, features its "sm_XX", cores its multiprocessors. */
struct weft_gpu_device;
void weft_tuner_target_init_gpu(weft_tuner_target *t, const struct weft_gpu_device *d);
/* ISA level (vector width) of a comma-separated LLVM feature list. */
enum { WEFT_ISA_UNKNOWN, WEFT_ISA_OTHER, WEFT_ISA_AVX2, WEFT_ISA_AVX512 };
int weft_tuner_isa_level(const char *features);
/* How near the machine of target key `key` (ISA `features`) is to t: smaller is nearer; < 0
 * for t's own key and for another backend (see target_key.c for the order). */
double weft_tuner_target_distance(const weft_tuner_target *t, const char *key, const char *features);
/* "cpu=znver4 threads=2" for a target key. */
void weft_tuner_key_describe(const char *key, char *buf, size_t n);

/* ---- db_nearest.c ---- */
typedef struct weft_tuner_nearest {
    char target[160];  /* the record's target key */
    double distance;   /* weft_tuner_target_distance */
    char *steps;       /* the best record's step text (records only; malloc'd) */
    double median;     /* its median, seconds, measured on that machine */
} weft_tuner_nearest;
/* The best error-free record of workload under every other target key of t's backend,
 * nearest machine first (ties: faster first). Free with weft_tuner_nearest_free. */
weft_status weft_tuner_nearest_records(weft_db *db, const weft_tuner_target *t, const char *workload,
                                       weft_tuner_nearest **out, int *n);
/* Other targets of t's backend with a stored cost model, nearest first (steps NULL). */
weft_status weft_tuner_nearest_models(weft_db *db, const weft_tuner_target *t, weft_tuner_nearest **out, int *n);
void weft_tuner_nearest_free(weft_tuner_nearest *v, int n);

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
    long l2_bytes;         /* L2 cache of the target (packed-panel budget) */
    char stream[64];       /* an input of R larger than L2, streamed from memory: unpacked
                            * candidates may prefetch its next reduction block ("" when none) */
    /* Untiled kernels whose default rule has knobs (weft_schedule_knob_space: the blocked
     * convolution): candidates are knob values, scheduled by that rule. */
    bool knobbed;
    weft_knob_space ks;
    const weft_te_func *f; /* the kernel (knobbed sketches schedule it per candidate) */
    weft_target_caps caps;
} weft_sketch;

typedef struct weft_cand {
    int64_t t1[WEFT_SKETCH_MAX_AXES], t2[WEFT_SKETCH_MAX_AXES]; /* output tile levels (.1, .2) */
    int64_t r_in[WEFT_SKETCH_MAX_AXES];  /* accumulator inner tile, divides t2 */
    int64_t k_in[WEFT_SKETCH_MAX_AXES];  /* reduction inner split */
    int unroll;                          /* auto_unroll depth on the outer reduction loop */
    int n_par;                           /* outer loops fused into the parallel loop */
    bool pack;                           /* pack sk->pack per panel of the vector axis */
    bool prefetch;                       /* pragma prefetch of sk->stream on R's outer reduction
                                          * loop (never with pack) */
    int64_t knob[WEFT_KNOBS_MAX];        /* knobbed sketches: one value per knob */
} weft_cand;
/* Whether a sketch has candidates beyond the default schedule. */
static inline bool weft_sketch_searchable(const weft_sketch *sk) { return sk->tiled || sk->knobbed; }
/* A knobbed sketch's step text starts with this comment line, then the knob values: the
 * decisions travel with the record (step text ignores comments). */
#define WEFT_KNOBS_COMMENT "# knobs "
/* The candidate a knobbed sketch's step text was made from, read back from its comment line;
 * false when the text is not one of the sketch's candidates. */
bool weft_sketch_knobs_from_steps(const weft_sketch *sk, const char *steps, weft_cand *c);

weft_status weft_sketch_make(const weft_te_func *f, const weft_target_caps *caps, weft_sketch *out);
void weft_sketch_sample(const weft_sketch *sk, uint64_t *rng, weft_cand *c);
/* Vector registers c's register tile keeps live; whether they fit the target's. */
int weft_sketch_live_vectors(const weft_sketch *sk, const weft_cand *c);
bool weft_sketch_fits_registers(const weft_sketch *sk, const weft_cand *c);
/* A packed candidate's panel (every reduction step of one panel of the vector axis, t1 x t2
 * wide) fits half of the target's L2 (sk->l2_bytes), so it stays cached while every row tile
 * reads it (matmul 128x768x3072 AVX-512: a 2.4 MB panel ran at a third of the speed of a
 * 0.8 MB one); unpacked candidates always fit. */
bool weft_sketch_fits_cache(const weft_sketch *sk, const weft_cand *c);
void weft_sketch_mutate(const weft_sketch *sk, uint64_t *rng, weft_cand *c);
/* The step text of a candidate (malloc'd). */
char *weft_sketch_steps(const weft_sketch *sk, const weft_cand *c);
uint64_t weft_tuner_rand(uint64_t *state);

/* ---- tune_measure.c: measuring candidates, the tuner's callback interface ----
 * The search hands each round's candidates to a measure callback as step text plus the index
 * of their task, so the measuring side (this process, or another machine: tools/mpi_tune.c)
 * rebuilds each kernel itself from the same tasks. The callback fills every candidate's
 * result; a candidate it could not measure (its measuring process was lost) is marked lost and
 * is neither recorded nor counted as a trial. */

typedef struct weft_tune_cand {
    /* in */
    int task;               /* index into the tasks given to weft_tune_tasks */
    const char *steps;      /* the candidate's step text */
    uint64_t seed;          /* random inputs */
    double check_below;     /* a median below this (any median when <= 0) must match the naive
                             * schedule on random inputs before it is kept (else an error) */
    /* out */
    weft_measure_result r;  /* times and median when error is "" */
    char error[300];        /* what went wrong ("compile: ...", "timed out ...", "rejected: ...") */
    bool lost;              /* not measured at all: not recorded */
    weft_status fatal;      /* WEFT_ERR_NOMEM when the measuring process ran out of memory (not
                             * the candidate's fault: not recorded; the run stops) */
} weft_tune_cand;

/* Clears c's results before a measurer fills them; false (c->error says why) when c names no
 * task of the n given or has no steps. Shared by the CPU and GPU measurers. */
bool weft_tune_cand_begin(weft_tune_cand *c, int n_tasks);

/* Measures c[0..n-1]; WEFT_OK when every candidate has its result (or is lost); another status
 * (message set) ends the tuning run cleanly: nothing of c is recorded. */
typedef weft_status (*weft_tune_measure_fn)(void *ud, weft_tune_cand *c, int n);

/* The local measurer: compiles a candidate's steps for the host (llvm), measures it in a
 * forked worker with `threads` threads and checks it against the naive schedule of its task
 * when check_below says so. It keeps one naive kernel per task (built on first need). */
typedef struct weft_tune_measurer weft_tune_measurer;
weft_status weft_tune_measurer_create(weft_task *tasks, int n, int threads, weft_tune_measurer **out);
/* Test builds (WEFT_TEST_HOOKS) only: the fault WEFT_TEST_FAULTS assigns to a candidate's steps
 * (a weft_measure_fault; it may also set mo's timeout); WEFT_FAULT_NONE in other builds, where
 * weft_tune_test_hooks() says false. */
struct weft_measure_opts;
int weft_tune_test_fault(const char *steps, struct weft_measure_opts *mo);
bool weft_tune_test_hooks(void);
void weft_tune_measurer_run(weft_tune_measurer *m, weft_tune_cand *c);
/* Times the kernels of two step texts of one task in one forked worker, their runs alternating
 * (weft_measure_pair), so both see the same minute of the machine: r->median is steps',
 * r->median_other other's. WEFT_OK, or another status with r->error set. Neither is checked
 * against the naive schedule here (both were when first measured). */
weft_status weft_tune_measurer_pair(weft_tune_measurer *m, int task, const char *steps, const char *other, uint64_t seed,
                                    weft_measure_result *r);
void weft_tune_measurer_destroy(weft_tune_measurer *m);
/* Lowers step text for f into arena a for the target whose caps are given, as weft_target_build
 * lowers for it (GPU caps: barriers around shared-memory stages); NULL (message set) when the
 * steps do not apply. */
weft_loop_func *weft_tuner_lower_steps(const weft_te_func *f, const char *steps, const weft_target_caps *caps,
                                       weft_arena *a, weft_status *st);

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
    weft_tune_measure_fn measure; /* measures a round's candidates (NULL: the local measurer) */
    void *measure_ud;
    /* GPU tuning (tuner/measure_gpu.h): the device weft_gpu_probe found; NULL: the CPU (llvm).
     * Candidates compile for gpu->target and are measured in workers that own their CUDA
     * context, records go under the device's key (weft_tuner_target_init_gpu). */
    const struct weft_gpu_device *gpu;
    double timeout_s;     /* GPU: per-candidate worker timeout (<= 0: 10 s) */
} weft_tune_options;

weft_status weft_tune_tasks(weft_task *tasks, int n, const weft_tune_options *o);

/* ---- apply.c ---- */
/* Where the schedules of a model compiled with a database came from. */
typedef struct weft_tuned_summary {
    int n_kernels;
    int n_this_machine;   /* best record under this machine's key */
    int n_nearest;        /* best record of the nearest machine that has one (another key) */
    int n_default;        /* no usable record: the default schedule */
    int n_rejected;       /* records of other machines that did not replay, compile, run or match */
    int n_timed;          /* records of other machines (or imported) timed against the default here */
    int n_slower;         /* of those, not faster than 0.97x the default (not served, not checked) */
    int n_default_slower; /* of n_default: kernels whose records all lost to the default here */
    char nearest[96];     /* "cpu=znver4 threads=2": the machine most nearest records came from */
    int n_nearest_machines; /* distinct machines the nearest records came from */
} weft_tuned_summary;
/* Compiles a graph with the best database record of each kernel: this machine's, else the
 * nearest machine's (replayed, compiled and checked against the naive schedule on random
 * inputs, and before that timed here against the default schedule: used only when at least 3%
 * faster; a record that fails goes to the next machine), else the default schedule. *summary (optional) says which kernels got which. */
weft_status weft_model_compile_tuned_ex(const weft_graph *g, const weft_model_options *opt, const char *db_path,
                                        weft_model **out, weft_tuned_summary *summary);
/* weft_model_compile_tuned (the public form, in weft/model.h) counts kernels with a database
 * schedule (this machine's or the nearest machine's). A graph with symbolic dimensions gets a
 * model compiled per shape at first use, each with this database (*summary stays zero). */
/* "kernels: 7 from records for this machine, 3 from the nearest machine (cpu=znver4
 * threads=2), 0 default" (no newline). */
void weft_tuned_summary_format(const weft_tuned_summary *s, char *buf, size_t n);
/* The best record's steps for f on this target, applied to s; *found false when none. */
weft_status weft_tuner_lookup(weft_db *db, const weft_tuner_target *t, const weft_te_func *f, weft_schedule *s, bool *found);

#endif
