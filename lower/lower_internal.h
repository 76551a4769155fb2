/* Internal interfaces of lower/: integer range environments, the index simplifier and bound
 * inference, the state the passes share, and the passes themselves (run by pipeline.c). */
#ifndef WEFT_LOWER_INTERNAL_H
#define WEFT_LOWER_INTERNAL_H
#include "lower/lower.h"
#include "schedule/state.h"

#define WEFT_RANGE_MAX 512

/* Numeric inclusive ranges of the loop variables in scope (a stack). */
typedef struct weft_range_env {
    int n;
    const weft_expr *vars[WEFT_RANGE_MAX];
    int64_t lo[WEFT_RANGE_MAX], hi[WEFT_RANGE_MAX];
} weft_range_env;

void weft_range_push(weft_range_env *env, const weft_expr *var, int64_t lo, int64_t hi);
/* Numeric inclusive bounds of an integer expression under env; false when unknown. */
bool weft_const_range(const weft_expr *e, const weft_range_env *env, int64_t *lo, int64_t *hi);

/* Index simplifier (lower/simplify.c): canonicalizes integer sums of products by constants
 * (like terms combined, constants folded) and, with env, folds floordiv/floormod/min/max and
 * comparisons that the variables' ranges decide. Non-integer expressions are simplified in
 * their integer sub-expressions only. env may be NULL. */
const weft_expr *weft_simplify(weft_arena *a, const weft_expr *e, const weft_range_env *env);

/* Bound inference (lower/bound.c): the values an integer expression takes when the variables
 * in `free` range over their env ranges and every other variable is held fixed: a symbolic
 * lower bound `lo` (in the fixed variables) and a constant `width` with values within
 * [lo, lo + width]. False when the expression cannot be bounded. */
typedef struct weft_interval {
    const weft_expr *lo;
    int64_t width;
} weft_interval;
bool weft_bound_interval(weft_arena *a, const weft_expr *e, const weft_range_env *env, int n_free,
                         const weft_expr *const *free_vars, weft_interval *out);

/* ---- the pass pipeline (lower/pipeline.c) ------------------------------------------------ */

/* What the passes know about one schedule stage, filled in pipeline order. */
typedef struct weft_lower_stage {
    const weft_expr *body;                  /* inline: op body with inlined stages expanded */
    const weft_buffer *buf;                 /* region: the buffer the stage computes into */
    const weft_expr *lo[WEFT_MAX_DIMS];     /* region: min per dim (in enclosing loop vars) */
    int64_t ext[WEFT_MAX_DIMS];             /* region: extent per dim */
    bool region_done;                       /* region: lo and ext are set */
    bool placed;                            /* region: the fields below are set */
    int64_t iter_ext[WEFT_SCHED_MAX_ITERS]; /* extent of every iterator */
    const weft_expr *leaf_var[WEFT_SCHED_MAX_ITERS]; /* by leaf position; NULL for extent 1 */
    const weft_expr *val[WEFT_SCHED_MAX_ITERS];      /* value of every iterator in leaf vars */
    const weft_expr *axis_val[2 * WEFT_MAX_DIMS];    /* op axis values (region min added), then reduce */
    int first_reduce;                       /* leaf position of the first reduction leaf, -1 */
} weft_lower_stage;

/* A store the nest builder made, to be guarded by its point's domain condition. */
typedef struct weft_lower_guard {
    const weft_stmt *store;
    int stage;
    bool spatial_only;        /* an init store: reduction splits are not its business */
    const weft_expr **val;    /* value of every iterator at the store */
} weft_lower_guard;

#define WEFT_LOWER_MAX_PREFETCH 16

typedef struct weft_lower_ctx {
    weft_arena *a;
    const weft_schedule *s;
    const weft_te_func *f;
    const weft_target_caps *caps; /* NULL: lowering for no particular target */
    weft_lower_stage *stage;      /* [s->n_stages] */
    const weft_buffer **params;   /* region: inputs then outputs */
    const weft_buffer *allocs[WEFT_SCHED_MAX_STAGES]; /* region: root stages that are not outputs */
    int n_allocs;
    weft_range_env env;           /* ranges of every loop variable made so far */
    weft_lower_guard *guards;     /* nest -> guards */
    int n_guards, cap_guards;
    weft_loop_func *lf;           /* nest onwards: the loop IR */
    /* nest -> prefetch: loops (by variable) that carry a pragma prefetch, and its tensor. */
    struct { const weft_expr *var; const char *tensor; } prefetch[WEFT_LOWER_MAX_PREFETCH];
    int n_prefetch;
    weft_status err;
} weft_lower_ctx;

/* Fails with "lowering F: out of memory" (sticky in c->err). */
weft_status weft_lower_nomem(weft_lower_ctx *c);

/* Extents of every iterator of stage i from its region and relations (lower/region.c). */
void weft_lower_iter_extents(weft_lower_ctx *c, int i);
/* Values of every iterator from the leaf values in val[] (relations walked backwards),
 * simplified under c->env. */
void weft_lower_iter_values(weft_lower_ctx *c, const weft_stage *st, const weft_expr **val, const int64_t *ext);

/* Passes, in pipeline order (contracts in lower/pipeline.c). */
weft_status weft_lower_inline(weft_lower_ctx *c);
weft_status weft_lower_region(weft_lower_ctx *c);
weft_status weft_lower_nest(weft_lower_ctx *c);
weft_status weft_lower_guards(weft_lower_ctx *c);
weft_status weft_lower_flatten(weft_lower_ctx *c);
weft_status weft_lower_simplify(weft_lower_ctx *c);
weft_status weft_lower_partition(weft_arena *a, weft_loop_func *f);
weft_status weft_lower_auto_unroll(weft_arena *a, weft_loop_func *f);
weft_status weft_lower_prefetch(weft_lower_ctx *c);
/* GPU targets only (caps->has_thread_binding; no-ops otherwise), lower/gpu.c. */
weft_status weft_lower_barriers(weft_arena *a, weft_loop_func *f, const weft_target_caps *caps);
weft_status weft_lower_launch_check(const weft_loop_func *f, const weft_target_caps *caps);

/* ---- statement rewriting (lower/walk.c) --------------------------------------------------- */

/* Rebuilds a statement tree bottom-up. expr (NULL: kept) maps every expression of a statement
 * (loop min and extent, store index and value, if condition) with env holding the ranges of
 * the loops around it; post (NULL: kept) maps each rebuilt statement, given the original.
 * A NULL from either is an error (out of memory or c->err set by the callback). */
typedef struct weft_rewriter {
    weft_arena *a;
    weft_range_env *env;
    const weft_expr *(*expr)(void *ud, const weft_expr *e, const weft_range_env *env);
    const weft_stmt *(*post)(void *ud, const weft_stmt *orig, const weft_stmt *rebuilt, const weft_range_env *env);
    void *ud;
    bool failed;
} weft_rewriter;
const weft_stmt *weft_rewrite_stmt(weft_rewriter *r, const weft_stmt *s);

#endif
