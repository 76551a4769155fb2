/* Tensor expressions: placeholders and compute tensors, and a kernel's function (a DAG of
 * tensors with declared inputs and outputs).
 *
 * A compute tensor has one iteration variable per output dimension (axis[d], extent shape[d])
 * and optionally reduction axes. Its value at a point is `body` when reduce == NONE, otherwise
 * the reduction (sum/max/min, identities 0, -inf, +inf) of `body` over the reduction axes.
 * Bodies read other tensors only through TLOAD. Tensors live in the arena of their function.
 *
 * Building one (C has no lambdas, so axes come first, then the body):
 *   weft_tensor *C = weft_te_compute(a, "C", 2, (int64_t[]){M, N}, (const char *[]){"i", "j"});
 *   const weft_expr *i = weft_te_axis(C, 0), *j = weft_te_axis(C, 1);
 *   const weft_expr *k = weft_te_reduce_axis(C, "k", K);
 *   weft_te_set_body(C, WEFT_REDUCE_SUM, weft_mul(a, A[i,k], B[k,j]));   // via weft_tload
 */
#ifndef WEFT_IR_TENSOR_H
#define WEFT_IR_TENSOR_H
#include "ir/expr.h"
#include "weft/weft.h"

#define WEFT_MAX_DIMS 8

typedef enum weft_reduce_kind {
    WEFT_REDUCE_NONE, WEFT_REDUCE_SUM, WEFT_REDUCE_MAX, WEFT_REDUCE_MIN, WEFT_REDUCE_PROD, WEFT_REDUCE_COUNT
} weft_reduce_kind;
extern const char *const weft_reduce_names[WEFT_REDUCE_COUNT];

typedef struct weft_axis {
    const weft_expr *var; /* int64 VAR */
    int64_t extent;       /* iterates over [0, extent) */
} weft_axis;

struct weft_tensor {
    const char *name;
    weft_dtype dtype;
    int ndim;
    int64_t shape[WEFT_MAX_DIMS]; /* elements per dimension, row-major */
    bool is_placeholder;
    /* compute tensors only: */
    weft_axis axis[WEFT_MAX_DIMS];
    int n_reduce;
    weft_axis reduce_axis[WEFT_MAX_DIMS];
    weft_reduce_kind reduce;
    const weft_expr *body;
};

/* An input tensor. */
weft_tensor *weft_te_placeholder(weft_arena *a, const char *name, weft_dtype t, int ndim, const int64_t *shape);
/* A compute tensor with named axes; set its body (and dtype) with weft_te_set_body. */
weft_tensor *weft_te_compute(weft_arena *a, const char *name, int ndim, const int64_t *shape,
                             const char *const *axis_names);
const weft_expr *weft_te_axis(const weft_tensor *t, int d);
/* Adds a reduction axis to t and returns its variable. */
const weft_expr *weft_te_reduce_axis(weft_arena *a, weft_tensor *t, const char *name, int64_t extent);
void weft_te_set_body(weft_tensor *t, weft_reduce_kind r, const weft_expr *body);
/* tload with an index list given inline: weft_te_at(a, A, i, k) for a 2-d A. */
const weft_expr *weft_te_at(weft_arena *a, const weft_tensor *t, ...);
/* Identity of a reduction for a dtype (0, lowest, highest). */
const weft_expr *weft_te_reduce_identity(weft_arena *a, weft_reduce_kind r, weft_dtype t);
/* Combines acc and x: acc + x, max(acc, x), min(acc, x). */
const weft_expr *weft_te_reduce_combine(weft_arena *a, weft_reduce_kind r, const weft_expr *acc, const weft_expr *x);
int64_t weft_te_numel(const weft_tensor *t);

/* A kernel: the tensors between the inputs and the outputs, in topological order (producers
 * first, placeholders included). Parameters of the compiled kernel are inputs then outputs. */
typedef struct weft_te_func {
    const char *name;
    int n_inputs, n_outputs;
    const weft_tensor **inputs;
    const weft_tensor **outputs;
    int n_tensors;
    const weft_tensor **tensors; /* topological order */
    weft_arena *arena;           /* owns every node; borrowed */
} weft_te_func;

/* Collects the DAG reachable from the outputs. Fails (WEFT_ERR_INVALID_ARG) when it reads a
 * placeholder that is not among the inputs or when a body is missing. */
weft_status weft_te_func_create(weft_arena *a, const char *name, int n_inputs, const weft_tensor *const *inputs,
                                int n_outputs, const weft_tensor *const *outputs, weft_te_func **out);
/* Tensors read directly by t's body, each once, in first-read order; returns the count. */
int weft_te_reads(const weft_tensor *t, const weft_tensor **out, int max);
/* Number of floating/integer arithmetic operations of one full evaluation (for GFLOP/s). */
double weft_te_func_flops(const weft_te_func *f);

#endif
