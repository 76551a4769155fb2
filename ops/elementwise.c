/* Elementwise ops over same-shape inputs: X (and Y for binary kinds) -> Z, axes "ax0", ...
 * The kinds come from ops/elementwise_kinds.def; element_body below has one case per line
 * there. gelu is the exact erf form, 0.5*x*(1 + erf(x/sqrt(2))), not the tanh approximation. */
#include <string.h>

#include "ir/error.h"
#include "ops/internal.h"

const char *const weft_elementwise_names[WEFT_ELEMENTWISE_COUNT] = {
#define X(name, str, arity) str,
#include "ops/elementwise_kinds.def"
#undef X
};

static const int elementwise_arity[WEFT_ELEMENTWISE_COUNT] = {
#define X(name, str, arity) arity,
#include "ops/elementwise_kinds.def"
#undef X
};

int weft_elementwise_arity(weft_elementwise_kind kind)
{
    assert((unsigned)kind < WEFT_ELEMENTWISE_COUNT);
    return elementwise_arity[kind];
}

bool weft_elementwise_parse(const char *s, weft_elementwise_kind *out)
{
    for (int k = 0; k < WEFT_ELEMENTWISE_COUNT; k++) {
        if (strcmp(weft_elementwise_names[k], s) == 0) {
            *out = (weft_elementwise_kind)k;
            return true;
        }
    }
    return false;
}

/* The value of one element from x (and y for binary kinds). */
static const weft_expr *element_body(weft_arena *a, weft_elementwise_kind kind, const weft_expr *x, const weft_expr *y)
{
    switch (kind) {
    case WEFT_ELEMENTWISE_ADD: return weft_add(a, x, y);
    case WEFT_ELEMENTWISE_SUB: return weft_sub(a, x, y);
    case WEFT_ELEMENTWISE_MUL: return weft_mul(a, x, y);
    case WEFT_ELEMENTWISE_DIV: return weft_div(a, x, y);
    case WEFT_ELEMENTWISE_RELU: return weft_max(a, x, weft_f32(a, 0.0));
    case WEFT_ELEMENTWISE_EXP: return weft_call1(a, WEFT_INTRIN_EXP, x);
    case WEFT_ELEMENTWISE_GELU: {
        const weft_expr *erf = weft_call1(a, WEFT_INTRIN_ERF, weft_mul(a, x, weft_f32(a, 0.70710678118654752440)));
        return weft_mul(a, weft_mul(a, weft_f32(a, 0.5), x), weft_add(a, weft_f32(a, 1.0), erf));
    }
    case WEFT_ELEMENTWISE_TANH: return weft_call1(a, WEFT_INTRIN_TANH, x);
    case WEFT_ELEMENTWISE_SIGMOID: return weft_call1(a, WEFT_INTRIN_SIGMOID, x);
    case WEFT_ELEMENTWISE_COUNT: break;
    }
    return NULL;
}

weft_te_func *weft_op_elementwise(weft_arena *a, weft_elementwise_kind kind, int ndim, const int64_t *shape)
{
    if ((unsigned)kind >= WEFT_ELEMENTWISE_COUNT) {
        weft_fail(WEFT_ERR_INVALID_ARG, "elementwise: unknown kind %d", (int)kind);
        return NULL;
    }
    const char *op = weft_elementwise_names[kind];
    if (ndim < 1 || ndim > WEFT_MAX_DIMS || !shape) {
        weft_fail(WEFT_ERR_INVALID_ARG, "%s: ndim=%d must be in [1, %d] with a shape", op, ndim, WEFT_MAX_DIMS);
        return NULL;
    }
    static const char *const dim_names[WEFT_MAX_DIMS] = {"D0", "D1", "D2", "D3", "D4", "D5", "D6", "D7"};
    static const char *const axis_names[WEFT_MAX_DIMS] = {"ax0", "ax1", "ax2", "ax3", "ax4", "ax5", "ax6", "ax7"};
    if (!weft_ops_check_sizes(a, op, ndim, dim_names, shape)) return NULL;

    bool binary = weft_elementwise_arity(kind) == 2;
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, ndim, shape);
    weft_tensor *Y = binary ? weft_te_placeholder(a, "Y", WEFT_F32, ndim, shape) : NULL;
    weft_tensor *Z = weft_te_compute(a, "Z", ndim, shape, axis_names);
    if (Z) {
        const weft_expr *idx[WEFT_MAX_DIMS];
        for (int d = 0; d < ndim; d++) idx[d] = weft_te_axis(Z, d);
        const weft_expr *x = X ? weft_tload(a, X, ndim, idx) : NULL;
        const weft_expr *y = Y ? weft_tload(a, Y, ndim, idx) : NULL;
        weft_te_set_body(Z, WEFT_REDUCE_NONE, element_body(a, kind, x, y));
    }
    return weft_ops_finish(a, op, binary ? 2 : 1, (const weft_tensor *const[]){X, Y}, 1,
                           (const weft_tensor *const[]){Z});
}
