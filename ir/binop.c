/* Binary-op semantics on values (ir/binop.h): the one definition folding and the interpreter
 * share. */
#include "ir/binop.h"

#include <math.h>

static int64_t floordiv64(int64_t x, int64_t y)
{
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
    return q;
}

bool weft_binop_int(weft_expr_kind k, int64_t p, int64_t q, int64_t *r)
{
    uint64_t up = (uint64_t)p, uq = (uint64_t)q;
    switch (k) {
    case WEFT_EXPR_ADD: *r = (int64_t)(up + uq); return true;
    case WEFT_EXPR_SUB: *r = (int64_t)(up - uq); return true;
    case WEFT_EXPR_MUL: *r = (int64_t)(up * uq); return true;
    case WEFT_EXPR_DIV:
    case WEFT_EXPR_FLOORDIV:
    case WEFT_EXPR_FLOORMOD:
        if (q == 0) return false;
        if (q == -1) *r = k == WEFT_EXPR_FLOORMOD ? 0 : (int64_t)(0 - up); /* INT64_MIN / -1 wraps */
        else if (k == WEFT_EXPR_DIV) *r = p / q;
        else {
            int64_t d = floordiv64(p, q);
            /* the true remainder is smaller than |q|, so wrapping arithmetic computes it exactly
             * (d * q alone can overflow: 1 floormod INT64_MIN) */
            *r = k == WEFT_EXPR_FLOORDIV ? d : (int64_t)(up - (uint64_t)d * uq);
        }
        return true;
    case WEFT_EXPR_MIN: *r = p < q ? p : q; return true;
    case WEFT_EXPR_MAX: *r = p > q ? p : q; return true;
    case WEFT_EXPR_EQ: *r = p == q; return true;
    case WEFT_EXPR_NE: *r = p != q; return true;
    case WEFT_EXPR_LT: *r = p < q; return true;
    case WEFT_EXPR_LE: *r = p <= q; return true;
    case WEFT_EXPR_GT: *r = p > q; return true;
    case WEFT_EXPR_GE: *r = p >= q; return true;
    case WEFT_EXPR_AND: *r = p && q; return true;
    case WEFT_EXPR_OR: *r = p || q; return true;
    default: return false;
    }
}

int64_t weft_binop_wrap(weft_dtype t, int64_t v)
{
    if (t.code == WEFT_DTYPE_INT && t.bits == 32) return (int64_t)(int32_t)(uint32_t)(uint64_t)v;
    if (t.code == WEFT_DTYPE_BOOL) return v != 0;
    return v;
}

/* One body for both float widths: T the type, FLOOR, FMIN, FMAX its functions. */
#define FLOAT_BINOP(NAME, T, FLOOR, FMIN, FMAX)                                                                        \
    bool NAME(weft_expr_kind k, T p, T q, T *r)                                                                        \
    {                                                                                                                  \
        switch (k) {                                                                                                   \
        case WEFT_EXPR_ADD: *r = p + q; return true;                                                                   \
        case WEFT_EXPR_SUB: *r = p - q; return true;                                                                   \
        case WEFT_EXPR_MUL: *r = p * q; return true;                                                                   \
        case WEFT_EXPR_DIV: *r = p / q; return true;                                                                   \
        case WEFT_EXPR_FLOORDIV: *r = FLOOR(p / q); return true;                                                       \
        case WEFT_EXPR_FLOORMOD: *r = p - FLOOR(p / q) * q; return true;                                               \
        case WEFT_EXPR_MIN: *r = FMIN(p, q); return true;                                                              \
        case WEFT_EXPR_MAX: *r = FMAX(p, q); return true;                                                              \
        default: return false;                                                                                         \
        }                                                                                                              \
    }
FLOAT_BINOP(weft_binop_f32, float, floorf, fminf, fmaxf)
FLOAT_BINOP(weft_binop_f64, double, floor, fmin, fmax)
#undef FLOAT_BINOP

bool weft_binop_fcmp(weft_expr_kind k, double p, double q, int64_t *r)
{
    switch (k) {
    case WEFT_EXPR_EQ: *r = p == q; return true;
    case WEFT_EXPR_NE: *r = p != q; return true;
    case WEFT_EXPR_LT: *r = p < q; return true;
    case WEFT_EXPR_LE: *r = p <= q; return true;
    case WEFT_EXPR_GT: *r = p > q; return true;
    case WEFT_EXPR_GE: *r = p >= q; return true;
    default: return false;
    }
}

int64_t weft_gcd64(int64_t a, int64_t b)
{
    a = a < 0 ? -a : a, b = b < 0 ? -b : b;
    while (b) {
        int64_t t = a % b;
        a = b, b = t;
    }
    return a;
}
