/* Internal interfaces of lower/: integer range environments, the index simplifier and bound
 * inference, shared by the loop-nest builder and the passes. */
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

/* Loop nest materialization (lower/nest.c): TE + schedule -> loop IR function. */
weft_status weft_lower_nest(const weft_schedule *s, weft_arena *a, weft_loop_func **out);
/* Passes over loop IR (one file each). */
weft_status weft_lower_partition(weft_arena *a, weft_loop_func *f);
weft_status weft_lower_auto_unroll(weft_arena *a, weft_loop_func *f);
weft_status weft_lower_verify(const weft_loop_func *f);

#endif
