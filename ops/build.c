/* Op lookup by name for the tools (weft_op_build, weft_op_usage) and the helpers every op file
 * shares (argument checks, kernel assembly). The table below is the single list of named ops
 * with fixed shape forms; elementwise ops come from ops/elementwise_kinds.def. */
#include <inttypes.h>
#include <string.h>

#include "ir/error.h"
#include "ops/internal.h"

bool weft_ops_check_sizes(weft_arena *a, const char *op, int n, const char *const *names, const int64_t *values)
{
    if (!a) {
        weft_fail(WEFT_ERR_INVALID_ARG, "%s: arena is NULL", op);
        return false;
    }
    for (int i = 0; i < n; i++) {
        if (values[i] < 1) {
            weft_fail(WEFT_ERR_INVALID_ARG, "%s: %s=%" PRId64 " must be positive", op, names[i], values[i]);
            return false;
        }
        if (values[i] > WEFT_OPS_MAX_SIZE) {
            weft_fail(WEFT_ERR_INVALID_ARG, "%s: %s=%" PRId64 " is larger than %" PRId64, op, names[i], values[i],
                      WEFT_OPS_MAX_SIZE);
            return false;
        }
    }
    return true;
}

/* True when the points of t's iteration space (axes times reduction axes) fit in int64. */
static bool iteration_space_fits(const weft_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        if (__builtin_mul_overflow(n, t->shape[d], &n)) return false;
    for (int r = 0; r < t->n_reduce; r++)
        if (__builtin_mul_overflow(n, t->reduce_axis[r].extent, &n)) return false;
    return true;
}

weft_te_func *weft_ops_finish(weft_arena *a, const char *op, int n_inputs, const weft_tensor *const *inputs,
                              int n_outputs, const weft_tensor *const *outputs)
{
    if (weft_arena_failed(a)) {
        weft_fail(WEFT_ERR_NOMEM, "%s: out of memory building the kernel", op);
        return NULL;
    }
    weft_te_func *f = NULL;
    if (weft_te_func_create(a, op, n_inputs, inputs, n_outputs, outputs, &f) != WEFT_OK) return NULL;
    if (weft_arena_failed(a)) {
        weft_fail(WEFT_ERR_NOMEM, "%s: out of memory building the kernel", op);
        return NULL;
    }
    for (int i = 0; i < f->n_tensors; i++) {
        if (!iteration_space_fits(f->tensors[i])) {
            weft_fail(WEFT_ERR_INVALID_ARG, "%s: tensor %s has more than 2^63 points", op, f->tensors[i]->name);
            return NULL;
        }
    }
    return f;
}

/* Adapters from a flat shape list to each op's arguments (n_shape already checked). */
static weft_te_func *build_matmul(weft_arena *a, const int64_t *s) { return weft_op_matmul(a, s[0], s[1], s[2]); }
static weft_te_func *build_dense_bias_relu(weft_arena *a, const int64_t *s)
{ return weft_op_dense_bias_relu(a, s[0], s[1], s[2]); }
static weft_te_func *build_conv2d(weft_arena *a, const int64_t *s)
{ return weft_op_conv2d(a, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[7], s[8], s[8]); }
static weft_te_func *build_softmax(weft_arena *a, const int64_t *s) { return weft_op_softmax(a, s[0], s[1]); }
static weft_te_func *build_layer_norm(weft_arena *a, const int64_t *s) { return weft_op_layer_norm(a, s[0], s[1], 1e-5f); }
static weft_te_func *build_reduce_sum(weft_arena *a, const int64_t *s) { return weft_op_reduce_sum(a, s[0], s[1]); }

typedef struct op_entry {
    const char *name;
    const char *shape_form; /* comma-separated names of the shape values, in order */
    int n_shape;
    weft_te_func *(*build)(weft_arena *a, const int64_t *shape);
} op_entry;

static const op_entry ops[] = {
    {"matmul", "M,N,K", 3, build_matmul},
    {"dense_bias_relu", "M,N,K", 3, build_dense_bias_relu},
    {"conv2d", "N,C,H,W,F,KH,KW,stride,pad", 9, build_conv2d},
    {"softmax", "M,N", 2, build_softmax},
    {"layer_norm", "M,N", 2, build_layer_norm},
    {"reduce_sum", "M,N", 2, build_reduce_sum},
};

const char *weft_op_usage(void)
{
    /* Keep in step with ops[] and ops/elementwise_kinds.def (tests/ops/test_ops.c checks). */
    return "ops and their shapes:\n"
           "  matmul           M,N,K\n"
           "  dense_bias_relu  M,N,K\n"
           "  conv2d           N,C,H,W,F,KH,KW,stride,pad\n"
           "  softmax          M,N\n"
           "  layer_norm       M,N        (eps 1e-5)\n"
           "  reduce_sum       M,N\n"
           "  add sub mul div relu exp gelu tanh sigmoid   D0[,D1,...] (1 to 8 dims)\n";
}

weft_status weft_op_build(weft_arena *a, const char *op, int n_shape, const int64_t *shape, weft_te_func **out)
{
    *out = NULL;
    if (!op) return weft_fail(WEFT_ERR_INVALID_ARG, "op name is NULL");
    if (n_shape < 0 || (n_shape > 0 && !shape))
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s: shape list is missing", op);
    weft_te_func *f = NULL;
    bool found = false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (strcmp(ops[i].name, op) != 0) continue;
        if (n_shape != ops[i].n_shape)
            return weft_fail(WEFT_ERR_INVALID_ARG, "%s: expected %d shape values (%s), got %d", op, ops[i].n_shape,
                             ops[i].shape_form, n_shape);
        f = ops[i].build(a, shape);
        found = true;
        break;
    }
    weft_elementwise_kind kind;
    if (!found && weft_elementwise_parse(op, &kind)) {
        if (n_shape < 1 || n_shape > WEFT_MAX_DIMS)
            return weft_fail(WEFT_ERR_INVALID_ARG, "%s: expected 1 to %d shape values (D0[,D1,...]), got %d", op,
                             WEFT_MAX_DIMS, n_shape);
        f = weft_op_elementwise(a, kind, n_shape, shape);
        found = true;
    }
    if (!found) return weft_fail(WEFT_ERR_INVALID_ARG, "unknown op '%s'; %s", op, weft_op_usage());
    if (!f) /* the op set the message; only an exhausted arena is not an argument error */
        return a && weft_arena_failed(a) ? WEFT_ERR_NOMEM : WEFT_ERR_INVALID_ARG;
    *out = f;
    return WEFT_OK;
}
