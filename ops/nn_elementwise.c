/* Elementwise graph ops: unary math (Relu ... Gelu, Clip, Elu/Selu/Celu, Sign, Floor/Ceil/Round
 * (ties to even), Sin/Cos), binary ops with numpy broadcasting
 * (Add ... Pow, variadic Max/Min/Sum/Mean, comparisons, logic, Mod with fmod 0 and 1), Where, Cast
 * and Expand. Asin/Acos/Atan are Cephes' single-precision polynomials; Tan, the hyperbolic
 * functions and their inverses are written with sin/cos, exp, log and sqrt.
 *
 * Every compute is a single stage named `name` over the output shape with the default axis
 * names; inputs are read through weft_nn_bcast_load (a broadcast dim of extent 1 reads index 0), so
 * the stage classifies as ELEMWISE. Add/Sub/Mul/Div/Max/Min/comparisons also take int64 and
 * int32 (constant folding evaluates shape arithmetic through these computes).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

/* ---- unary ------------------------------------------------------------------------------- */

typedef enum unary_kind {
    U_RELU, U_SIGMOID, U_TANH, U_ERF, U_SQRT, U_EXP, U_LOG, U_NEG, U_ABS, U_RECIPROCAL,
    U_LEAKY_RELU, U_GELU, U_CLIP, U_NOT, U_SOFTPLUS, U_ELU, U_SELU, U_CELU, U_SIGN, U_FLOOR, U_CEIL, U_ROUND,
    U_SIN, U_COS, U_TAN, U_ASIN, U_ACOS, U_ATAN, U_SINH, U_COSH, U_ASINH, U_ACOSH, U_ATANH, U_ISNAN, U_ISINF,
    U_SOFTSIGN, U_SHRINK, U_THRESHOLDED_RELU, U_MISH, U_COUNT
} unary_kind;

static const struct {
    const char *op;
    unsigned dtypes;
} unary_ops[U_COUNT] = {
    [U_RELU] = {"Relu", WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32},
    [U_SIGMOID] = {"Sigmoid", WEFT_NN_F32},
    [U_TANH] = {"Tanh", WEFT_NN_F32},
    [U_ERF] = {"Erf", WEFT_NN_F32},
    [U_SQRT] = {"Sqrt", WEFT_NN_F32},
    [U_EXP] = {"Exp", WEFT_NN_F32},
    [U_LOG] = {"Log", WEFT_NN_F32},
    [U_NEG] = {"Neg", WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32},
    [U_ABS] = {"Abs", WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32},
    [U_RECIPROCAL] = {"Reciprocal", WEFT_NN_F32},
    [U_LEAKY_RELU] = {"LeakyRelu", WEFT_NN_F32},
    [U_GELU] = {"Gelu", WEFT_NN_F32},
    [U_CLIP] = {"Clip", WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32},
    [U_NOT] = {"Not", WEFT_NN_BOOL},
    [U_SOFTPLUS] = {"Softplus", WEFT_NN_F32},
    [U_ELU] = {"Elu", WEFT_NN_F32},
    [U_SELU] = {"Selu", WEFT_NN_F32},
    [U_CELU] = {"Celu", WEFT_NN_F32},
    [U_SIGN] = {"Sign", WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32},
    [U_FLOOR] = {"Floor", WEFT_NN_F32},
    [U_CEIL] = {"Ceil", WEFT_NN_F32},
    [U_ROUND] = {"Round", WEFT_NN_F32},
    [U_SIN] = {"Sin", WEFT_NN_F32},
    [U_COS] = {"Cos", WEFT_NN_F32},
    [U_TAN] = {"Tan", WEFT_NN_F32},
    [U_ASIN] = {"Asin", WEFT_NN_F32},
    [U_ACOS] = {"Acos", WEFT_NN_F32},
    [U_ATAN] = {"Atan", WEFT_NN_F32},
    [U_SINH] = {"Sinh", WEFT_NN_F32},
    [U_COSH] = {"Cosh", WEFT_NN_F32},
    [U_ASINH] = {"Asinh", WEFT_NN_F32},
    [U_ACOSH] = {"Acosh", WEFT_NN_F32},
    [U_ATANH] = {"Atanh", WEFT_NN_F32},
    [U_ISNAN] = {"IsNaN", WEFT_NN_F32},
    [U_ISINF] = {"IsInf", WEFT_NN_F32},
    [U_SOFTSIGN] = {"Softsign", WEFT_NN_F32},
    [U_SHRINK] = {"Shrink", WEFT_NN_F32},
    [U_THRESHOLDED_RELU] = {"ThresholdedRelu", WEFT_NN_F32},
    [U_MISH] = {"Mish", WEFT_NN_F32},
};

/* Selu's defaults (ONNX: alpha 1.67326319217681884765625, gamma 1.05070102214813232421875). */
#define SELU_ALPHA 1.67326319217681884765625
#define SELU_GAMMA 1.05070102214813232421875

/* The alpha attribute of Elu/Selu/Celu (and Selu's gamma) is finite, Celu's nonzero. */
static weft_status check_exp_act_attrs(const weft_gnode *n, unary_kind k)
{
    double alpha = weft_gnode_attr_float(n, "alpha", k == U_SELU ? SELU_ALPHA : 1.0);
    if (!isfinite(alpha) || (k == U_CELU && alpha == 0))
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute alpha=%g must be finite%s", alpha,
                            k == U_CELU ? " and nonzero" : "");
    double gamma = weft_gnode_attr_float(n, "gamma", SELU_GAMMA);
    if (k == U_SELU && !isfinite(gamma))
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute gamma=%g must be finite", gamma);
    return WEFT_OK;
}

static int unary_find(const char *op)
{
    for (int k = 0; k < U_COUNT; k++)
        if (strcmp(unary_ops[k].op, op) == 0) return k;
    return -1;
}

/* Clip's constant bounds: constant inputs 1 and 2 (opset >= 11) or attributes min/max (opset 6).
 * has_lo/has_hi say whether each bound applies. A bound given as a run-time scalar (PyTorch's
 * clamp with tensor bounds) is not one of these: weft_nn_unary_compute loads it. */
static weft_status clip_bounds(const weft_graph *g, const weft_gnode *n, bool *has_lo, double *lo, bool *has_hi,
                               double *hi)
{
    *has_lo = *has_hi = false;
    for (int i = 1; i <= 2; i++) {
        if (!weft_nn_has_in(n, i)) continue;
        double v;
        if (!weft_nn_const_scalar(g, n, i, &v)) {
            const weft_gvalue *b = weft_nn_in(g, n, i), *x = weft_nn_in(g, n, 0);
            if (!b || weft_gvalue_numel(b) != 1 || !weft_dtype_eq(b->dtype, x->dtype))
                return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "%s input must be a scalar of the input's dtype %s",
                                    i == 1 ? "min" : "max", weft_dtype_name(x->dtype));
            continue;
        }
        if (i == 1) *has_lo = true, *lo = v;
        else *has_hi = true, *hi = v;
    }
    if (n->n_inputs <= 1) {
        double big = 3.4028234663852886e38;
        double mn = weft_gnode_attr_float(n, "min", -big), mx = weft_gnode_attr_float(n, "max", big);
        if (mn != -big) *has_lo = true, *lo = mn;
        if (mx != big) *has_hi = true, *hi = mx;
    }
    return WEFT_OK;
}

weft_status weft_nn_unary_infer(weft_graph *g, const weft_gnode *n)
{
    int k = unary_find(n->op_type);
    if (k < 0) return weft_nn_fail(WEFT_ERR_INTERNAL, n, "not a unary op");
    weft_status st = weft_nn_check_arity(n, 1, k == U_CLIP ? 3 : 1, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *x = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, x, "input X", unary_ops[k].dtypes)) != WEFT_OK) return st;
    if (k == U_CLIP) {
        bool hl, hh;
        double lo, hi;
        if ((st = clip_bounds(g, n, &hl, &lo, &hh, &hi)) != WEFT_OK) return st;
    }
    if ((k == U_ELU || k == U_SELU || k == U_CELU) && (st = check_exp_act_attrs(n, (unary_kind)k)) != WEFT_OK)
        return st;
    if (k == U_GELU) {
        const char *approx = weft_gnode_attr_string(n, "approximate", "none");
        if (strcmp(approx, "none") != 0 && strcmp(approx, "tanh") != 0)
            return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "approximate='%s', expected 'none' or 'tanh'", approx);
    }
    bool test = k == U_ISNAN || k == U_ISINF;
    return weft_nn_set_out(g, n, 0, test ? WEFT_BOOL : x->dtype, x->ndim, x->shape);
}

static const weft_expr *neg_expr(weft_arena *a, const weft_expr *x)
{
    return weft_sub(a, weft_f32(a, 0.0), x);
}

/* y with x's sign: -y where x < 0 (the odd functions below compute y from |x|). */
static const weft_expr *odd_expr(weft_arena *a, const weft_expr *x, const weft_expr *y)
{
    return weft_select(a, weft_cmp(a, WEFT_EXPR_LT, x, weft_f32(a, 0.0)), neg_expr(a, y), y);
}

/* c[0] z^(n-1) + ... + c[n-1] by Horner's rule. */
static const weft_expr *poly_expr(weft_arena *a, const weft_expr *z, int n, const double *c)
{
    const weft_expr *p = weft_f32(a, c[0]);
    for (int i = 1; i < n; i++) p = weft_add(a, weft_mul(a, p, z), weft_f32(a, c[i]));
    return p;
}

/* atan(x) (Cephes' atanf: |x| reduced to [0, tan(pi/8)] around 0, pi/4 or pi/2, then a degree-9
 * odd polynomial; about 2 ulp). +-inf give +-pi/2, NaN stays NaN. */
static const weft_expr *atan_expr(weft_arena *a, const weft_expr *x)
{
    static const double c[4] = {8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1};
    const weft_expr *t = weft_call1(a, WEFT_INTRIN_FABS, x), *one = weft_f32(a, 1.0);
    const weft_expr *big = weft_cmp(a, WEFT_EXPR_GT, t, weft_f32(a, 2.414213562373095));
    const weft_expr *mid = weft_cmp(a, WEFT_EXPR_GT, t, weft_f32(a, 0.4142135623730950));
    const weft_expr *r = weft_select(a, big, weft_div(a, weft_f32(a, -1.0), t),
                                     weft_select(a, mid, weft_div(a, weft_sub(a, t, one), weft_add(a, t, one)), t));
    const weft_expr *y0 = weft_select(a, big, weft_f32(a, 1.5707963267948966),
                                      weft_select(a, mid, weft_f32(a, 0.7853981633974483), weft_f32(a, 0.0)));
    const weft_expr *z = weft_mul(a, r, r);
    const weft_expr *y = weft_add(a, weft_mul(a, weft_mul(a, poly_expr(a, z, 4, c), z), r), r);
    return odd_expr(a, x, weft_add(a, y0, y));
}

/* asin(x) (Cephes' asinf): |x| > 0.5 goes through asin(|x|) = pi/2 - 2 asin(sqrt((1 - |x|) / 2)),
 * then a degree-11 odd polynomial on [0, 0.5]; |x| > 1 gives NaN (the square root of a negative). */
static const weft_expr *asin_expr(weft_arena *a, const weft_expr *x)
{
    static const double c[5] = {4.2163199048e-2, 2.4181311049e-2, 4.5470025998e-2, 7.4953002686e-2,
                                1.6666752422e-1};
    const weft_expr *t = weft_call1(a, WEFT_INTRIN_FABS, x);
    const weft_expr *hi = weft_cmp(a, WEFT_EXPR_GT, t, weft_f32(a, 0.5));
    const weft_expr *zh = weft_mul(a, weft_f32(a, 0.5), weft_sub(a, weft_f32(a, 1.0), t));
    const weft_expr *z = weft_select(a, hi, zh, weft_mul(a, t, t));
    const weft_expr *r = weft_select(a, hi, weft_call1(a, WEFT_INTRIN_SQRT, zh), t);
    const weft_expr *y = weft_add(a, weft_mul(a, weft_mul(a, poly_expr(a, z, 5, c), z), r), r);
    y = weft_select(a, hi, weft_sub(a, weft_f32(a, 1.5707963267948966), weft_mul(a, weft_f32(a, 2.0), y)), y);
    return odd_expr(a, x, y);
}

/* log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|)). */
const weft_expr *weft_nn_softplus(weft_arena *a, const weft_expr *x)
{
    const weft_expr *e = weft_call1(a, WEFT_INTRIN_EXP, neg_expr(a, weft_call1(a, WEFT_INTRIN_FABS, x)));
    return weft_add(a, weft_max(a, x, weft_f32(a, 0.0)),
                    weft_call1(a, WEFT_INTRIN_LOG, weft_add(a, e, weft_f32(a, 1.0))));
}

static const weft_expr *unary_body(weft_arena *a, const weft_graph *g, const weft_gnode *n, unary_kind k,
                                   const weft_expr *x)
{
    weft_dtype t = x ? x->dtype : WEFT_F32;
    switch (k) {
    case U_RELU: return weft_max(a, x, weft_nn_const(a, t, 0));
    case U_SIGMOID: return weft_call1(a, WEFT_INTRIN_SIGMOID, x);
    case U_TANH: return weft_call1(a, WEFT_INTRIN_TANH, x);
    case U_ERF: return weft_call1(a, WEFT_INTRIN_ERF, x);
    case U_SQRT: return weft_call1(a, WEFT_INTRIN_SQRT, x);
    case U_EXP: return weft_call1(a, WEFT_INTRIN_EXP, x);
    case U_LOG: return weft_call1(a, WEFT_INTRIN_LOG, x);
    case U_NEG: return weft_sub(a, weft_nn_const(a, t, 0), x);
    case U_ABS:
        if (weft_dtype_is_float(t)) return weft_call1(a, WEFT_INTRIN_FABS, x);
        return weft_max(a, x, weft_sub(a, weft_nn_const(a, t, 0), x));
    case U_RECIPROCAL: return weft_div(a, weft_nn_const(a, t, 1), x);
    case U_LEAKY_RELU: {
        double alpha = weft_gnode_attr_float(n, "alpha", 0.01);
        return weft_select(a, weft_cmp(a, WEFT_EXPR_LT, x, weft_nn_const(a, t, 0)),
                           weft_mul(a, x, weft_nn_const(a, t, alpha)), x);
    }
    case U_GELU: {
        const weft_expr *half_x = weft_mul(a, weft_f32(a, 0.5), x);
        if (strcmp(weft_gnode_attr_string(n, "approximate", "none"), "tanh") == 0) {
            const weft_expr *x3 = weft_mul(a, weft_mul(a, x, x), x);
            const weft_expr *inner = weft_mul(a, weft_f32(a, 0.7978845608028654),
                                              weft_add(a, x, weft_mul(a, weft_f32(a, 0.044715), x3)));
            return weft_mul(a, half_x, weft_add(a, weft_f32(a, 1.0), weft_call1(a, WEFT_INTRIN_TANH, inner)));
        }
        const weft_expr *erf = weft_call1(a, WEFT_INTRIN_ERF, weft_mul(a, x, weft_f32(a, 0.70710678118654752440)));
        return weft_mul(a, half_x, weft_add(a, weft_f32(a, 1.0), erf));
    }
    case U_CLIP: {
        bool hl, hh;
        double lo = 0, hi = 0;
        if (clip_bounds(g, n, &hl, &lo, &hh, &hi) != WEFT_OK) return NULL;
        const weft_expr *y = x;
        if (hl) y = weft_max(a, y, weft_nn_const(a, t, lo));
        if (hh) y = weft_min(a, y, weft_nn_const(a, t, hi));
        return y;
    }
    case U_NOT: return weft_not(a, x);
    case U_SOFTPLUS: return weft_nn_softplus(a, x);
    case U_ELU:
    case U_SELU:
    case U_CELU: {
        /* x < 0: alpha * (exp(x) - 1) (Celu: alpha * (exp(x / alpha) - 1)); Selu scales both arms by gamma */
        double alpha = weft_gnode_attr_float(n, "alpha", k == U_SELU ? SELU_ALPHA : 1.0);
        const weft_expr *arg = k == U_CELU ? weft_mul(a, x, weft_f32(a, 1.0 / alpha)) : x;
        const weft_expr *neg =
            weft_mul(a, weft_f32(a, alpha), weft_sub(a, weft_call1(a, WEFT_INTRIN_EXP, arg), weft_f32(a, 1.0)));
        const weft_expr *y = weft_select(a, weft_cmp(a, WEFT_EXPR_LT, x, weft_f32(a, 0.0)), neg, x);
        return k == U_SELU ? weft_mul(a, weft_f32(a, weft_gnode_attr_float(n, "gamma", SELU_GAMMA)), y) : y;
    }
    case U_SIGN: {
        const weft_expr *zero = weft_nn_const(a, t, 0);
        return weft_select(a, weft_cmp(a, WEFT_EXPR_GT, x, zero), weft_nn_const(a, t, 1),
                           weft_select(a, weft_cmp(a, WEFT_EXPR_LT, x, zero), weft_nn_const(a, t, -1), zero));
    }
    case U_FLOOR: return weft_call1(a, WEFT_INTRIN_FLOOR, x);
    case U_CEIL: return weft_call1(a, WEFT_INTRIN_CEIL, x);
    case U_ROUND: return weft_call1(a, WEFT_INTRIN_ROUND, x);
    case U_SIN: return weft_call1(a, WEFT_INTRIN_SIN, x);
    case U_COS: return weft_call1(a, WEFT_INTRIN_COS, x);
    case U_TAN: {
        /* sin(2x) / (1 + cos(2x)): LLVM 19 folds a literal sin(x) / cos(x) on vectors into a call of
         * tanl (its libcall choice looks at the vector type as if it were long double) */
        const weft_expr *x2 = weft_add(a, x, x);
        return weft_div(a, weft_call1(a, WEFT_INTRIN_SIN, x2),
                        weft_add(a, weft_f32(a, 1.0), weft_call1(a, WEFT_INTRIN_COS, x2)));
    }
    case U_ATAN: return atan_expr(a, x);
    case U_ASIN: return asin_expr(a, x);
    case U_ACOS: return weft_sub(a, weft_f32(a, 1.5707963267948966), asin_expr(a, x));
    case U_SINH:
    case U_COSH: {
        const weft_expr *ep = weft_call1(a, WEFT_INTRIN_EXP, x), *em = weft_call1(a, WEFT_INTRIN_EXP, neg_expr(a, x));
        return weft_mul(a, weft_f32(a, 0.5), k == U_SINH ? weft_sub(a, ep, em) : weft_add(a, ep, em));
    }
    case U_ASINH: {
        /* sign(x) log(|x| + sqrt(x^2 + 1)): the odd form keeps negative x accurate */
        const weft_expr *ax = weft_call1(a, WEFT_INTRIN_FABS, x);
        const weft_expr *r = weft_call1(a, WEFT_INTRIN_SQRT, weft_add(a, weft_mul(a, x, x), weft_f32(a, 1.0)));
        return odd_expr(a, x, weft_call1(a, WEFT_INTRIN_LOG, weft_add(a, ax, r)));
    }
    case U_ACOSH: {
        const weft_expr *r = weft_call1(a, WEFT_INTRIN_SQRT, weft_sub(a, weft_mul(a, x, x), weft_f32(a, 1.0)));
        return weft_call1(a, WEFT_INTRIN_LOG, weft_add(a, x, r));
    }
    case U_ATANH: {
        const weft_expr *q = weft_div(a, weft_add(a, weft_f32(a, 1.0), x), weft_sub(a, weft_f32(a, 1.0), x));
        return weft_mul(a, weft_f32(a, 0.5), weft_call1(a, WEFT_INTRIN_LOG, q));
    }
    case U_ISNAN: return weft_cmp(a, WEFT_EXPR_NE, x, x);
    case U_ISINF: {
        bool neg = weft_gnode_attr_int(n, "detect_negative", 1) != 0;
        bool pos = weft_gnode_attr_int(n, "detect_positive", 1) != 0;
        const weft_expr *p = weft_cmp(a, WEFT_EXPR_EQ, x, weft_f32(a, INFINITY));
        const weft_expr *m = weft_cmp(a, WEFT_EXPR_EQ, x, weft_f32(a, -INFINITY));
        if (pos && neg) return weft_or(a, p, m);
        return pos ? p : neg ? m : weft_cmp(a, WEFT_EXPR_NE, weft_f32(a, 0.0), weft_f32(a, 0.0));
    }
    case U_SOFTSIGN: return weft_div(a, x, weft_add(a, weft_f32(a, 1.0), weft_call1(a, WEFT_INTRIN_FABS, x)));
    case U_SHRINK: {
        double bias = weft_gnode_attr_float(n, "bias", 0.0), lambd = weft_gnode_attr_float(n, "lambd", 0.5);
        const weft_expr *above = weft_select(a, weft_cmp(a, WEFT_EXPR_GT, x, weft_f32(a, lambd)),
                                             weft_sub(a, x, weft_f32(a, bias)), weft_f32(a, 0.0));
        return weft_select(a, weft_cmp(a, WEFT_EXPR_LT, x, weft_f32(a, -lambd)), weft_add(a, x, weft_f32(a, bias)),
                           above);
    }
    case U_THRESHOLDED_RELU: {
        double alpha = weft_gnode_attr_float(n, "alpha", 1.0);
        return weft_select(a, weft_cmp(a, WEFT_EXPR_GT, x, weft_f32(a, alpha)), x, weft_f32(a, 0.0));
    }
    case U_MISH: return weft_mul(a, x, weft_call1(a, WEFT_INTRIN_TANH, weft_nn_softplus(a, x)));
    case U_COUNT: break;
    }
    return NULL;
}

weft_status weft_nn_unary_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                  const weft_tensor *const *ins, weft_tensor **outs)
{
    int k = unary_find(n->op_type);
    if (k < 0) return weft_nn_fail(WEFT_ERR_INTERNAL, n, "not a unary op");
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    weft_tensor *Y = weft_nn_compute(a, name, X->ndim, X->shape);
    const weft_expr *idx[WEFT_NN_MAX_DIMS];
    weft_nn_axes(Y, idx);
    const weft_expr *body = unary_body(a, g, n, (unary_kind)k, weft_tload(a, X, X->ndim, idx));
    for (int i = 1; k == U_CLIP && i <= 2 && body; i++) {
        double v;
        if (!weft_nn_has_in(n, i) || weft_nn_const_scalar(g, n, i, &v)) continue;
        if ((st = weft_nn_check_in(g, n, ins, i)) != WEFT_OK) return st;
        const weft_expr *b = weft_nn_bcast_load(a, ins[i], X->ndim, idx);
        body = i == 1 ? weft_max(a, body, b) : weft_min(a, body, b);
    }
    if (!body) return weft_nn_fail(WEFT_ERR_INTERNAL, n, "no body");
    weft_te_set_body(Y, WEFT_REDUCE_NONE, body);
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- binary (and variadic Max/Min/Sum/Mean) ------------------------------------------------------- */

typedef enum binary_kind {
    B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MAX, B_MIN, B_EQUAL, B_LESS, B_GREATER, B_LESS_EQ, B_GREATER_EQ,
    B_AND, B_OR, B_MOD, B_XOR, B_SUM, B_MEAN, B_COUNT
} binary_kind;

#define WEFT_NN_NUM (WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32)
static const struct {
    const char *op;
    unsigned dtypes;
    bool compare; /* bool output */
} binary_ops[B_COUNT] = {
    [B_ADD] = {"Add", WEFT_NN_NUM, false},
    [B_SUB] = {"Sub", WEFT_NN_NUM, false},
    [B_MUL] = {"Mul", WEFT_NN_NUM, false},
    [B_DIV] = {"Div", WEFT_NN_NUM, false},
    [B_POW] = {"Pow", WEFT_NN_F32, false},
    [B_MAX] = {"Max", WEFT_NN_NUM, false},
    [B_MIN] = {"Min", WEFT_NN_NUM, false},
    [B_EQUAL] = {"Equal", WEFT_NN_NUM | WEFT_NN_BOOL, true},
    [B_LESS] = {"Less", WEFT_NN_NUM, true},
    [B_GREATER] = {"Greater", WEFT_NN_NUM, true},
    [B_LESS_EQ] = {"LessOrEqual", WEFT_NN_NUM, true},
    [B_GREATER_EQ] = {"GreaterOrEqual", WEFT_NN_NUM, true},
    [B_AND] = {"And", WEFT_NN_BOOL, true},
    [B_OR] = {"Or", WEFT_NN_BOOL, true},
    [B_MOD] = {"Mod", WEFT_NN_NUM, false},
    [B_XOR] = {"Xor", WEFT_NN_BOOL, true},
    [B_SUM] = {"Sum", WEFT_NN_F32, false},
    [B_MEAN] = {"Mean", WEFT_NN_F32, false},
};

static int binary_find(const char *op)
{
    for (int k = 0; k < B_COUNT; k++)
        if (strcmp(binary_ops[k].op, op) == 0) return k;
    return -1;
}

weft_status weft_nn_binary_infer(weft_graph *g, const weft_gnode *n)
{
    int k = binary_find(n->op_type);
    if (k < 0) return weft_nn_fail(WEFT_ERR_INTERNAL, n, "not a binary op");
    bool variadic = k == B_MAX || k == B_MIN || k == B_SUM || k == B_MEAN;
    weft_status st = weft_nn_check_arity(n, variadic ? 1 : 2, variadic ? WEFT_NODE_MAX_IO : 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *x = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, x, "input A", binary_ops[k].dtypes)) != WEFT_OK) return st;
    int r = x->ndim;
    int64_t shape[WEFT_NN_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    for (int i = 1; i < n->n_inputs; i++) {
        const weft_gvalue *y = weft_nn_in(g, n, i);
        if (!y) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "input %d is missing", i);
        if (k == B_POW) {
            /* the exponent may have another numeric type */
            if ((st = weft_nn_check_dtype(n, y, "exponent input B", WEFT_NN_NUM)) != WEFT_OK) return st;
            double e;
            if (!weft_dtype_eq(y->dtype, x->dtype) && !weft_nn_const_scalar(g, n, 1, &e))
                return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "exponent of dtype %s must be a constant scalar",
                                    weft_dtype_name(y->dtype));
        } else if (k == B_MOD && weft_gnode_attr_int(n, "fmod", 0) == 0 && weft_dtype_is_float(x->dtype)) {
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "fmod=0 on float inputs (ONNX requires fmod=1 for floats)");
        } else if (!weft_dtype_eq(y->dtype, x->dtype)) {
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "inputs have dtypes %s and %s, expected the same",
                                weft_dtype_name(x->dtype), weft_dtype_name(y->dtype));
        }
        if ((st = weft_nn_broadcast(n, r, shape, y->ndim, y->shape, &r, shape)) != WEFT_OK) return st;
    }
    return weft_nn_set_out(g, n, 0, binary_ops[k].compare ? WEFT_BOOL : x->dtype, r, shape);
}

/* x - trunc(x / y) * y: C's fmod, ONNX Mod with fmod=1 (the sign of the dividend). Integer
 * division truncates already; a float quotient is truncated as floor or ceil by its sign. As in
 * PyTorch's own float remainder, a quotient within an ulp of an integer can round to it. */
static const weft_expr *trunc_mod(weft_arena *a, const weft_expr *x, const weft_expr *y)
{
    const weft_expr *q = weft_div(a, x, y);
    if (weft_dtype_is_float(x->dtype))
        q = weft_select(a, weft_cmp(a, WEFT_EXPR_LT, q, weft_f32(a, 0.0)), weft_call1(a, WEFT_INTRIN_CEIL, q),
                        weft_call1(a, WEFT_INTRIN_FLOOR, q));
    return weft_sub(a, x, weft_mul(a, q, y));
}

static const weft_expr *binary_body(weft_arena *a, const weft_gnode *n, binary_kind k, const weft_expr *x,
                                    const weft_expr *y)
{
    switch (k) {
    case B_ADD: return weft_add(a, x, y);
    case B_SUB: return weft_sub(a, x, y);
    case B_MUL: return weft_mul(a, x, y);
    case B_DIV: return weft_div(a, x, y);
    case B_POW: return weft_call(a, WEFT_INTRIN_POW, 2, (const weft_expr *const[]){x, y});
    case B_MAX: return weft_max(a, x, y);
    case B_MIN: return weft_min(a, x, y);
    case B_EQUAL: return weft_cmp(a, WEFT_EXPR_EQ, x, y);
    case B_LESS: return weft_cmp(a, WEFT_EXPR_LT, x, y);
    case B_GREATER: return weft_cmp(a, WEFT_EXPR_GT, x, y);
    case B_LESS_EQ: return weft_cmp(a, WEFT_EXPR_LE, x, y);
    case B_GREATER_EQ: return weft_cmp(a, WEFT_EXPR_GE, x, y);
    case B_AND: return weft_and(a, x, y);
    case B_OR: return weft_or(a, x, y);
    case B_MOD:
        /* fmod=0 (integers only): the sign of the divisor, Python's %; fmod=1: C's fmod */
        return weft_gnode_attr_int(n, "fmod", 0) ? trunc_mod(a, x, y) : weft_floormod(a, x, y);
    case B_XOR: return weft_cmp(a, WEFT_EXPR_NE, x, y);
    case B_SUM:
    case B_MEAN: return weft_add(a, x, y);
    case B_COUNT: break;
    }
    return NULL;
}

/* x ** e for a constant exponent: x*x for 2, sqrt for 0.5, x for 1, 1/x for -1, else pow. */
static const weft_expr *pow_const(weft_arena *a, const weft_expr *x, double e)
{
    if (e == 2.0) return weft_mul(a, x, x);
    if (e == 3.0) return weft_mul(a, weft_mul(a, x, x), x);
    if (e == 1.0) return x;
    if (e == 0.5) return weft_call1(a, WEFT_INTRIN_SQRT, x);
    if (e == -1.0) return weft_div(a, weft_f32(a, 1.0), x);
    if (e == -0.5) return weft_call1(a, WEFT_INTRIN_RSQRT, x);
    return weft_call(a, WEFT_INTRIN_POW, 2, (const weft_expr *const[]){x, weft_f32(a, e)});
}

weft_status weft_nn_binary_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                   const weft_tensor *const *ins, weft_tensor **outs)
{
    int k = binary_find(n->op_type);
    if (k < 0) return weft_nn_fail(WEFT_ERR_INTERNAL, n, "not a binary op");
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    weft_tensor *Y = weft_nn_compute(a, name, out->ndim, out->shape);
    const weft_expr *idx[WEFT_NN_MAX_DIMS];
    weft_nn_axes(Y, idx);
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_expr *body = weft_nn_bcast_load(a, ins[0], out->ndim, idx);
    double e;
    if (k == B_POW && weft_nn_const_scalar(g, n, 1, &e)) {
        body = pow_const(a, body, e);
    } else {
        for (int i = 1; i < n->n_inputs; i++) {
            if ((st = weft_nn_check_in(g, n, ins, i)) != WEFT_OK) return st;
            body = binary_body(a, n, (binary_kind)k, body, weft_nn_bcast_load(a, ins[i], out->ndim, idx));
        }
        if (k == B_MEAN && n->n_inputs > 1) body = weft_mul(a, body, weft_f32(a, 1.0 / n->n_inputs));
    }
    weft_te_set_body(Y, WEFT_REDUCE_NONE, body);
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- Where ------------------------------------------------------------------------------- */

weft_status weft_nn_where_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 3, 3, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *c = weft_nn_in(g, n, 0), *x = weft_nn_in(g, n, 1), *y = weft_nn_in(g, n, 2);
    if ((st = weft_nn_check_dtype(n, c, "condition input", WEFT_NN_BOOL)) != WEFT_OK) return st;
    if (!weft_dtype_eq(x->dtype, y->dtype))
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "inputs X and Y have dtypes %s and %s, expected the same",
                            weft_dtype_name(x->dtype), weft_dtype_name(y->dtype));
    int r;
    int64_t shape[WEFT_NN_MAX_DIMS];
    if ((st = weft_nn_broadcast(n, c->ndim, c->shape, x->ndim, x->shape, &r, shape)) != WEFT_OK ||
        (st = weft_nn_broadcast(n, r, shape, y->ndim, y->shape, &r, shape)) != WEFT_OK)
        return st;
    return weft_nn_set_out(g, n, 0, x->dtype, r, shape);
}

weft_status weft_nn_where_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                  const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    for (int i = 0; i < 3; i++)
        if ((st = weft_nn_check_in(g, n, ins, i)) != WEFT_OK) return st;
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    weft_tensor *Y = weft_nn_compute(a, name, out->ndim, out->shape);
    const weft_expr *idx[WEFT_NN_MAX_DIMS];
    weft_nn_axes(Y, idx);
    int r = out->ndim;
    weft_te_set_body(Y, WEFT_REDUCE_NONE,
                     weft_select(a, weft_nn_bcast_load(a, ins[0], r, idx), weft_nn_bcast_load(a, ins[1], r, idx),
                                 weft_nn_bcast_load(a, ins[2], r, idx)));
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- Cast -------------------------------------------------------------------------------- */

weft_status weft_nn_cast_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 1, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *x = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, x, "input", WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32 | WEFT_NN_BOOL)) != WEFT_OK)
        return st;
    int64_t to = weft_gnode_attr_int(n, "to", -1);
    weft_dtype t;
    if (!weft_nn_onnx_dtype(to, &t))
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n,
                            "to=%" PRId64 " is not supported (float=1, int32=6, int64=7, bool=9)", to);
    return weft_nn_set_out(g, n, 0, t, x->ndim, x->shape);
}

weft_status weft_nn_cast_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                 const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    weft_dtype to = weft_nn_out_c(g, n, 0)->dtype;
    weft_tensor *Y = weft_nn_compute(a, name, X->ndim, X->shape);
    const weft_expr *idx[WEFT_NN_MAX_DIMS];
    weft_nn_axes(Y, idx);
    const weft_expr *x = weft_tload(a, X, X->ndim, idx), *body;
    if (weft_dtype_eq(X->dtype, to)) body = x;
    else if (weft_dtype_is_bool(to))
        body = weft_cmp(a, WEFT_EXPR_NE, x, weft_nn_const(a, X->dtype, 0));
    else if (weft_dtype_is_bool(X->dtype))
        body = weft_select(a, x, weft_nn_const(a, to, 1), weft_nn_const(a, to, 0));
    else body = weft_cast(a, to, x);
    weft_te_set_body(Y, WEFT_REDUCE_NONE, body);
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- Expand ------------------------------------------------------------------------------ */

weft_status weft_nn_expand_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 2, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *x = weft_nn_in(g, n, 0);
    int64_t shape[WEFT_NN_MAX_DIMS];
    int cnt, r;
    if ((st = weft_nn_const_ints(g, n, 1, "shape", shape, WEFT_NN_MAX_DIMS, &cnt)) != WEFT_OK) return st;
    if ((st = weft_nn_broadcast(n, x->ndim, x->shape, cnt, shape, &r, shape)) != WEFT_OK) return st;
    return weft_nn_set_out(g, n, 0, x->dtype, r, shape);
}

weft_status weft_nn_expand_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                   const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    weft_tensor *Y = weft_nn_compute(a, name, out->ndim, out->shape);
    const weft_expr *idx[WEFT_NN_MAX_DIMS];
    weft_nn_axes(Y, idx);
    weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_nn_bcast_load(a, ins[0], out->ndim, idx));
    outs[0] = Y;
    return weft_nn_done(a, n);
}
