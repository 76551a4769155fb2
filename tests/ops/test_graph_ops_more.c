/* Graph operator registry, part 3: ops that exported models use beyond the core set — PRelu,
 * Elu, Selu, Celu, Sign, Floor, Ceil, Round, Sin, Cos; ReduceProd, ReduceL1, ReduceL2,
 * ReduceSumSquare, ReduceLogSumExp; Tile; ArgMax, ArgMin; CumSum (short axes and, from 32, in blocks); Tan, Asin, Acos, Atan, Sinh,
 * Cosh, Asinh, Acosh, Atanh, Softsign, Softplus, Mish, Shrink, ThresholdedRelu; Mod (fmod 0/1), Xor,
 * IsNaN, IsInf, Sum, Mean, Clip with run-time bounds, Trilu, OneHot, GatherElements — and their
 * errors.
 *
 * Every case of the table runs twice against the same hand-computed double reference: the
 * node alone in the interpreter (the harness), then as a one-node model through the public API
 * (weft_model_compile with default options, i.e. the LLVM target, at 1 and 2 threads).
 * Tolerance: |got - ref| <= 1e-5 * max(1, |ref|) for floats (1e-5 relative, absolute near
 * zero); int64 outputs (ArgMax/ArgMin, integer ReduceProd) must match exactly. Bad inputs and
 * attributes must fail with a status and a message naming the op, the node and the attribute. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "graph_ops_harness.h"

#define F32 WEFT_TYPE_FLOAT32
#define I64 WEFT_TYPE_INT64
#define TOL 1e-5
#define MAXN 512

/* Input data modes: values a case's X is filled with. */
enum { D_RAND, D_ROUND, D_TIES, D_WIDE, D_GE1, D_HUGE };

typedef struct tcase tcase;
struct tcase {
    const char *label;
    const char *op;
    int n_attrs;
    weft_attr attrs[3];
    weft_type xt;
    int ndim;
    int64_t shape[4];
    int data;
    /* Adds constants (slope, axes, repeats) and the op on x; returns its output. */
    weft_value (*build)(weft_graph *g, const tcase *c, weft_value x);
    /* The expected output from X's values (as doubles) into ref (row-major). */
    void (*ref)(const tcase *c, const double *x, double *ref);
    int64_t axes[3]; /* reductions: the reduced dims (n_axes of them), ArgMax/ArgMin: axes[0] */
    int n_axes;
    bool keep;
    bool last; /* ArgMax/ArgMin select_last_index */
};

static int64_t numel(int ndim, const int64_t *s)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= s[d];
    return n;
}

static double fill(int mode, int64_t i, uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    double r = (double)((*seed >> 8) & 0xffff) / 32768.0 - 1.0;
    switch (mode) {
    case D_ROUND: { /* halves (ties go to even), near-halves, negatives, zeros */
        static const double v[] = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.0, -0.0, 0.49, -0.51, 1.2, -3.7};
        return v[i % 12];
    }
    case D_TIES: return (double)((i * 7 + i / 5) % 4); /* many equal values: first/last index matter */
    case D_WIDE: return 4.0 * r;
    case D_GE1: return 1.0 + 4.0 * fabs(r); /* Acosh's domain */
    case D_HUGE: return 120.0 * r;           /* exp(x) overflows float: Softplus, Mish */
    default: return r;
    }
}

/* ---- builders ------------------------------------------------------------------------------ */

static weft_value add(weft_graph *g, const tcase *c, int n_in, const weft_value *in)
{
    weft_value out = -1;
    weft_status st = weft_graph_add_op(g, c->op, "node", n_in, in, c->n_attrs, c->attrs, 1, &out);
    if (st != WEFT_OK) fail_msg("%s: %s", c->label, weft_last_error());
    return out;
}

static weft_value build_plain(weft_graph *g, const tcase *c, weft_value x) { return add(g, c, 1, &x); }

static const float slope_c[3] = {0.1f, -0.5f, 2.0f};

static weft_value build_prelu_c11(weft_graph *g, const tcase *c, weft_value x)
{
    weft_value s;
    assert_int_equal(weft_graph_add_constant(g, "slope", F32, 3, SHAPE(3, 1, 1), slope_c, &s), WEFT_OK);
    return add(g, c, 2, VALS(x, s));
}

static weft_value build_prelu_1(weft_graph *g, const tcase *c, weft_value x)
{
    weft_value s;
    assert_int_equal(weft_graph_add_constant(g, "slope", F32, 1, SHAPE(1), (const float[]){0.25f}, &s), WEFT_OK);
    return add(g, c, 2, VALS(x, s));
}

/* ReduceX with axes as an input (opset 18). */
static weft_value build_axes_input(weft_graph *g, const tcase *c, weft_value x)
{
    weft_value ax;
    assert_int_equal(weft_graph_add_constant(g, "axes", I64, 1, (int64_t[]){c->n_axes}, c->axes, &ax), WEFT_OK);
    return add(g, c, 2, VALS(x, ax));
}

static const int64_t tile_rep[3] = {2, 1, 3};

static weft_value build_tile(weft_graph *g, const tcase *c, weft_value x)
{
    weft_value r;
    assert_int_equal(weft_graph_add_constant(g, "repeats", I64, 1, SHAPE(3), tile_rep, &r), WEFT_OK);
    return add(g, c, 2, VALS(x, r));
}

/* CumSum: the axis (axes[0]) as a constant scalar input */
static weft_value build_cumsum(weft_graph *g, const tcase *c, weft_value x)
{
    weft_value ax;
    assert_int_equal(weft_graph_add_constant(g, "axis", I64, 0, NULL, c->axes, &ax), WEFT_OK);
    return add(g, c, 2, VALS(x, ax));
}

/* ---- references ---------------------------------------------------------------------------- */

static double unary_ref(const char *op, double x)
{
    if (!strcmp(op, "Elu")) return x < 0 ? 0.5 * (exp(x) - 1) : x; /* alpha 0.5 */
    if (!strcmp(op, "Selu")) {
        double al = 1.67326319217681884765625, ga = 1.05070102214813232421875;
        return ga * (x < 0 ? al * (exp(x) - 1) : x);
    }
    if (!strcmp(op, "Celu")) return fmax(0, x) + fmin(0, 2.0 * (exp(x / 2.0) - 1)); /* alpha 2 */
    if (!strcmp(op, "Sign")) return x > 0 ? 1 : x < 0 ? -1 : 0;
    if (!strcmp(op, "Floor")) return floor(x);
    if (!strcmp(op, "Ceil")) return ceil(x);
    if (!strcmp(op, "Round")) { /* half to even, written out */
        double f = floor(x), d = x - f;
        if (d != 0.5) return d < 0.5 ? f : f + 1;
        return fmod(f, 2.0) == 0 ? f : f + 1;
    }
    if (!strcmp(op, "Sin")) return sin(x);
    if (!strcmp(op, "Cos")) return cos(x);
    if (!strcmp(op, "Tan")) return tan(x);
    if (!strcmp(op, "Atan")) return atan(x);
    if (!strcmp(op, "Asin")) return asin(x);
    if (!strcmp(op, "Acos")) return acos(x);
    if (!strcmp(op, "Sinh")) return sinh(x);
    if (!strcmp(op, "Cosh")) return cosh(x);
    if (!strcmp(op, "Asinh")) return asinh(x);
    if (!strcmp(op, "Acosh")) return acosh(x);
    if (!strcmp(op, "Atanh")) return atanh(x);
    if (!strcmp(op, "Softsign")) return x / (1 + fabs(x));
    if (!strcmp(op, "Softplus")) return x > 30 ? x : log1p(exp(x));
    if (!strcmp(op, "Mish")) return x * tanh(x > 30 ? x : log1p(exp(x)));
    if (!strcmp(op, "Shrink")) return x < -0.25 ? x + 0.5 : x > 0.25 ? x - 0.5 : 0; /* lambd 0.25, bias 0.5 */
    if (!strcmp(op, "ThresholdedRelu")) return x > 0.3 ? x : 0;                    /* alpha 0.3 */
    fail_msg("no reference for %s", op);
    return 0;
}

static void ref_unary(const tcase *c, const double *x, double *ref)
{
    for (int64_t i = 0; i < numel(c->ndim, c->shape); i++) ref[i] = unary_ref(c->op, x[i]);
}

/* X [2,3,2,2], slope [3,1,1] */
static void ref_prelu_c11(const tcase *c, const double *x, double *ref)
{
    (void)c;
    for (int i = 0; i < 24; i++) ref[i] = x[i] < 0 ? x[i] * (double)slope_c[(i / 4) % 3] : x[i];
}

static void ref_prelu_1(const tcase *c, const double *x, double *ref)
{
    (void)c;
    for (int i = 0; i < 24; i++) ref[i] = x[i] < 0 ? 0.25 * x[i] : x[i];
}

/* The row-major offset in the output of X's element at coordinates co (reduced dims dropped;
 * keepdims does not change the layout). */
static int64_t out_offset(const tcase *c, const bool *red, const int64_t *co)
{
    int64_t o = 0;
    for (int d = 0; d < c->ndim; d++)
        if (!red[d]) o = o * c->shape[d] + co[d];
    return o;
}

static void coords(const tcase *c, int64_t i, int64_t *co)
{
    for (int d = c->ndim - 1; d >= 0; d--) co[d] = i % c->shape[d], i /= c->shape[d];
}

static void ref_reduce(const tcase *c, const double *x, double *ref)
{
    bool red[4] = {false};
    for (int j = 0; j < c->n_axes; j++) red[(c->axes[j] + c->ndim) % c->ndim] = true;
    if (c->n_axes == 0)
        for (int d = 0; d < c->ndim; d++) red[d] = true;
    bool prod = !strcmp(c->op, "ReduceProd");
    for (int i = 0; i < MAXN; i++) ref[i] = prod ? 1 : 0;
    int64_t co[4];
    for (int64_t i = 0; i < numel(c->ndim, c->shape); i++) {
        coords(c, i, co);
        double *r = &ref[out_offset(c, red, co)];
        if (prod) *r *= x[i];
        else if (!strcmp(c->op, "ReduceL1")) *r += fabs(x[i]);
        else if (!strcmp(c->op, "ReduceLogSumExp")) *r += exp(x[i]);
        else *r += x[i] * x[i]; /* L2, SumSquare */
    }
    for (int i = 0; i < MAXN; i++) {
        if (!strcmp(c->op, "ReduceL2")) ref[i] = sqrt(ref[i]);
        if (!strcmp(c->op, "ReduceLogSumExp")) ref[i] = log(ref[i]);
    }
}

static void ref_sumsq_noop(const tcase *c, const double *x, double *ref)
{
    for (int64_t i = 0; i < numel(c->ndim, c->shape); i++) ref[i] = x[i] * x[i];
}

static void ref_arg(const tcase *c, const double *x, double *ref)
{
    int ax = (int)((c->axes[0] + c->ndim) % c->ndim);
    bool red[4] = {false}, is_max = !strcmp(c->op, "ArgMax");
    red[ax] = true;
    double best[MAXN];
    for (int i = 0; i < MAXN; i++) ref[i] = -1;
    int64_t co[4];
    for (int64_t i = 0; i < numel(c->ndim, c->shape); i++) { /* walks k upwards within each row */
        coords(c, i, co);
        int64_t o = out_offset(c, red, co);
        bool better = ref[o] < 0 || (is_max ? x[i] > best[o] : x[i] < best[o]) || (c->last && x[i] == best[o]);
        if (better) best[o] = x[i], ref[o] = (double)co[ax];
    }
}

/* running sums along axes[0]; attrs: exclusive, reverse (in that order when given) */
static void ref_cumsum(const tcase *c, const double *x, double *ref)
{
    int ax = (int)((c->axes[0] + c->ndim) % c->ndim);
    bool excl = false, rev = false;
    for (int a = 0; a < c->n_attrs; a++) {
        if (!strcmp(c->attrs[a].name, "exclusive")) excl = c->attrs[a].i != 0;
        if (!strcmp(c->attrs[a].name, "reverse")) rev = c->attrs[a].i != 0;
    }
    int64_t stride = 1, n = c->shape[ax], co[4];
    for (int d = ax + 1; d < c->ndim; d++) stride *= c->shape[d];
    for (int64_t i = 0; i < numel(c->ndim, c->shape); i++) {
        coords(c, i, co);
        double sum = 0;
        for (int64_t k = 0; k < n; k++) {
            bool in = rev ? (excl ? k > co[ax] : k >= co[ax]) : (excl ? k < co[ax] : k <= co[ax]);
            if (in) sum += x[i + (k - co[ax]) * stride];
        }
        ref[i] = sum;
    }
}

/* X [2,3,4] repeated [2,1,3] -> [4,3,12] */
static void ref_tile(const tcase *c, const double *x, double *ref)
{
    (void)c;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 12; k++) ref[(i * 3 + j) * 12 + k] = x[((i % 2) * 3 + j) * 4 + k % 4];
}

/* ---- the table ----------------------------------------------------------------------------- */

#define X234 .ndim = 3, .shape = {2, 3, 4}
#define UN(opn, dmode, ...)                                                                                           \
    {.label = opn, .op = opn, X234, .xt = F32, .data = dmode, .build = build_plain, .ref = ref_unary, __VA_ARGS__}
#define RED(lbl, opn, build_fn, kd_, nax, ...)                                                                   \
    {.label = lbl, .op = opn, X234, .xt = F32, .data = D_RAND, .build = build_fn, .ref = ref_reduce,               \
     .n_axes = nax, .axes = {__VA_ARGS__}, .keep = kd_}
#define ARG(lbl, opn, ax_, kd_, sel)                                                                            \
    {.label = lbl, .op = opn, X234, .xt = F32, .data = D_TIES, .build = build_plain, .ref = ref_arg,               \
     .axes = {ax_}, .keep = kd_, .last = sel, .n_attrs = 3,                                                        \
     .attrs = {{.name = "axis", .kind = WEFT_ATTR_INT, .i = ax_},                                                  \
               {.name = "keepdims", .kind = WEFT_ATTR_INT, .i = kd_},                                              \
               {.name = "select_last_index", .kind = WEFT_ATTR_INT, .i = sel}}}
#define AI(nm, v_) {.name = nm, .kind = WEFT_ATTR_INT, .i = v_}
#define AF(nm, v_) {.name = nm, .kind = WEFT_ATTR_FLOAT, .f = v_}
#define AIS(nm, cnt, ...) {.name = nm, .kind = WEFT_ATTR_INTS, .n = cnt, .ints = (const int64_t[]){__VA_ARGS__}}

static const tcase cases[] = {
    {.label = "PRelu[3,1,1]", .op = "PRelu", .ndim = 4, .shape = {2, 3, 2, 2}, .xt = F32,
     .build = build_prelu_c11, .ref = ref_prelu_c11},
    {.label = "PRelu[1]", .op = "PRelu", X234, .xt = F32, .build = build_prelu_1, .ref = ref_prelu_1},
    UN("Elu", D_WIDE, .n_attrs = 1, .attrs = {AF("alpha", 0.5)}),
    UN("Selu", D_WIDE, .n_attrs = 0),
    UN("Celu", D_WIDE, .n_attrs = 1, .attrs = {AF("alpha", 2.0)}),
    UN("Sign", D_ROUND, .n_attrs = 0),
    UN("Floor", D_ROUND, .n_attrs = 0),
    UN("Ceil", D_ROUND, .n_attrs = 0),
    UN("Round", D_ROUND, .n_attrs = 0),
    UN("Sin", D_WIDE, .n_attrs = 0),
    UN("Cos", D_WIDE, .n_attrs = 0),
    UN("Tan", D_RAND, .n_attrs = 0),
    UN("Atan", D_WIDE, .n_attrs = 0),
    UN("Asin", D_RAND, .n_attrs = 0),
    UN("Acos", D_RAND, .n_attrs = 0),
    UN("Sinh", D_WIDE, .n_attrs = 0),
    UN("Cosh", D_WIDE, .n_attrs = 0),
    UN("Asinh", D_WIDE, .n_attrs = 0),
    UN("Acosh", D_GE1, .n_attrs = 0),
    UN("Atanh", D_RAND, .n_attrs = 0),
    UN("Softsign", D_WIDE, .n_attrs = 0),
    UN("Softplus", D_HUGE, .n_attrs = 0),
    UN("Mish", D_HUGE, .n_attrs = 0),
    UN("Shrink", D_RAND, .n_attrs = 2, .attrs = {AF("lambd", 0.25), AF("bias", 0.5)}),
    UN("ThresholdedRelu", D_RAND, .n_attrs = 1, .attrs = {AF("alpha", 0.3)}),
    /* axes as an attribute (opset < 18) and as an input (opset 18); no axes: all dims */
    {.label = "ReduceProd axes=[1] keep", .op = "ReduceProd", X234, .xt = F32, .build = build_plain,
     .ref = ref_reduce, .n_axes = 1, .axes = {1}, .keep = true, .n_attrs = 1, .attrs = {AIS("axes", 1, 1)}},
    RED("ReduceL1 axes input [0,2]", "ReduceL1", build_axes_input, true, 2, 0, 2),
    {.label = "ReduceL2 all dims", .op = "ReduceL2", X234, .xt = F32, .build = build_plain, .ref = ref_reduce,
     .n_axes = 0, .keep = false, .n_attrs = 1, .attrs = {AI("keepdims", 0)}},
    {.label = "ReduceSumSquare axes=[-1]", .op = "ReduceSumSquare", X234, .xt = F32, .build = build_plain,
     .ref = ref_reduce, .n_axes = 1, .axes = {-1}, .keep = true, .n_attrs = 1, .attrs = {AIS("axes", 1, -1)}},
    {.label = "ReduceLogSumExp axes=[0,2] no keep", .op = "ReduceLogSumExp", X234, .xt = F32, .data = D_WIDE,
     .build = build_plain, .ref = ref_reduce, .n_axes = 2, .axes = {0, 2}, .keep = false, .n_attrs = 2,
     .attrs = {AIS("axes", 2, 0, 2), AI("keepdims", 0)}},
    {.label = "ReduceSumSquare noop", .op = "ReduceSumSquare", X234, .xt = F32, .build = build_plain,
     .ref = ref_sumsq_noop, .n_attrs = 1, .attrs = {AI("noop_with_empty_axes", 1)}},
    {.label = "ReduceProd int64 axes=[2] no keep", .op = "ReduceProd", X234, .xt = I64, .data = D_TIES,
     .build = build_plain, .ref = ref_reduce, .n_axes = 1, .axes = {2}, .n_attrs = 2,
     .attrs = {AIS("axes", 1, 2), AI("keepdims", 0)}},
    {.label = "Tile [2,1,3]", .op = "Tile", X234, .xt = F32, .build = build_tile, .ref = ref_tile},
    ARG("ArgMax axis=1 first", "ArgMax", 1, 1, 0),
    ARG("ArgMax axis=-1 last no keep", "ArgMax", -1, 0, 1),
    ARG("ArgMin axis=0 first no keep", "ArgMin", 0, 0, 0),
    ARG("ArgMin axis=2 last", "ArgMin", 2, 1, 1),
    {.label = "CumSum axis=1", .op = "CumSum", X234, .xt = F32, .build = build_cumsum, .ref = ref_cumsum,
     .axes = {1}},
    {.label = "CumSum axis=-1 exclusive reverse", .op = "CumSum", X234, .xt = F32, .build = build_cumsum,
     .ref = ref_cumsum, .axes = {-1}, .n_attrs = 2, .attrs = {AI("exclusive", 1), AI("reverse", 1)}},
    {.label = "CumSum int64 axis=0 exclusive", .op = "CumSum", X234, .xt = I64, .data = D_TIES,
     .build = build_cumsum, .ref = ref_cumsum, .axes = {0}, .n_attrs = 1, .attrs = {AI("exclusive", 1)}},
    {.label = "CumSum axis=2 reverse", .op = "CumSum", X234, .xt = F32, .build = build_cumsum, .ref = ref_cumsum,
     .axes = {2}, .n_attrs = 1, .attrs = {AI("reverse", 1)}},
    /* 32 or more along the axis: in blocks of 8 (block totals, the blocks before, the block's
     * own elements); 45 and 70 leave a partial last block */
    {.label = "CumSum [2,45,5] axis=1", .op = "CumSum", .ndim = 3, .shape = {2, 45, 5}, .xt = F32, .build = build_cumsum,
     .ref = ref_cumsum, .axes = {1}},
    {.label = "CumSum [2,45,5] axis=1 exclusive", .op = "CumSum", .ndim = 3, .shape = {2, 45, 5}, .xt = F32,
     .build = build_cumsum, .ref = ref_cumsum, .axes = {1}, .n_attrs = 1, .attrs = {AI("exclusive", 1)}},
    {.label = "CumSum [2,45,5] axis=1 reverse", .op = "CumSum", .ndim = 3, .shape = {2, 45, 5}, .xt = F32,
     .build = build_cumsum, .ref = ref_cumsum, .axes = {1}, .n_attrs = 1, .attrs = {AI("reverse", 1)}},
    {.label = "CumSum [3,70] axis=-1 exclusive reverse", .op = "CumSum", .ndim = 2, .shape = {3, 70}, .xt = F32,
     .build = build_cumsum, .ref = ref_cumsum, .axes = {-1}, .n_attrs = 2, .attrs = {AI("exclusive", 1), AI("reverse", 1)}},
    {.label = "CumSum int64 [64,3] axis=0", .op = "CumSum", .ndim = 2, .shape = {64, 3}, .xt = I64, .data = D_TIES,
     .build = build_cumsum, .ref = ref_cumsum, .axes = {0}},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* X's values (as doubles, and in X's type into buf). */
static void make_x(const tcase *c, double *xd, void *buf)
{
    uint32_t seed = 777;
    for (int64_t i = 0; i < numel(c->ndim, c->shape); i++) {
        xd[i] = fill(c->data, i, &seed);
        if (c->xt == I64) {
            xd[i] = xd[i] + 1; /* 1..4: products stay exact */
            ((int64_t *)buf)[i] = (int64_t)xd[i];
        } else {
            ((float *)buf)[i] = (float)xd[i];
            xd[i] = (double)((float *)buf)[i];
        }
    }
}

static void check_out(const tcase *c, weft_type t, const void *got, const double *ref, int64_t n, const char *where)
{
    for (int64_t i = 0; i < n; i++) {
        double g = t == I64 ? (double)((const int64_t *)got)[i] : (double)((const float *)got)[i];
        double scale = fabs(ref[i]) > 1 ? fabs(ref[i]) : 1;
        bool ok = t == I64 ? g == ref[i] : fabs(g - ref[i]) <= TOL * scale;
        if (!ok) fail_msg("%s (%s): element %lld: got %.9g, expected %.9g", c->label, where, (long long)i, g, ref[i]);
    }
}

static void test_cases_interp(void **state)
{
    fx *f = *state;
    for (int k = 0; k < N_CASES; k++) {
        const tcase *c = &cases[k];
        /* a fresh graph and buffers per case (the fixture holds at most MAX_BUFS buffers) */
        for (int i = 0; i < f->n_bufs; i++) weft_rt_free(f->bufs[i]);
        f->n_bufs = 0;
        weft_graph_destroy(f->g);
        f->g = NULL;
        assert_int_equal(weft_graph_create(&f->g), WEFT_OK);
        weft_value x = fx_input(f, "x", c->xt, c->ndim, c->shape);
        double xd[MAXN], ref[MAXN];
        void *buf = fx_alloc(f, 8 * MAXN);
        make_x(c, xd, buf);
        weft_value y = c->build(f->g, c, x);
        int64_t ys[8];
        int nd = weft_graph_value_shape(f->g, y, ys);
        c->ref(c, xd, ref);
        const void *out = fx_run1(f, (const void *[]){buf, NULL, NULL});
        check_out(c, weft_graph_value_type(f->g, y), out, ref, numel(nd, ys), "interp");
        /* elementwise ops must classify as ELEMWISE to fuse into conv/matmul epilogues */
        const weft_op_def *def = weft_op_find(c->op);
        assert_non_null(def);
        if (c->ref == ref_unary || c->build == build_prelu_c11) {
            assert_int_equal(def->pattern, WEFT_PATTERN_ELEMWISE);
            assert_int_equal(weft_tensor_pattern(f->outs[0]), WEFT_PATTERN_ELEMWISE);
        }
        if (c->build == build_tile) assert_int_equal(def->pattern, WEFT_PATTERN_INJECTIVE);
        if (c->ref == ref_reduce || c->ref == ref_arg || c->ref == ref_cumsum)
            assert_int_equal(def->pattern, WEFT_PATTERN_REDUCTION);
    }
}

/* Output shapes: keepdims, reduced dims and Tile's product. */
static void test_shapes(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 3, SHAPE(2, 3, 4));
    fx_assert_shape(f, fx_op(f, "ArgMax", "a", 1, &x, 1, ATTRS(attr_i("axis", 1))), 3, SHAPE(2, 1, 4));
    weft_value b = fx_op(f, "ArgMin", "b", 1, &x, 1, ATTRS(attr_i("keepdims", 0)));
    fx_assert_shape(f, b, 2, SHAPE(3, 4));
    assert_int_equal(weft_graph_value_type(f->g, b), I64);
    fx_assert_shape(f, fx_op(f, "ReduceL2", "c", 1, &x, 1, ATTRS(attr_is("axes", 2, SHAPE(0, -1)))), 3,
                    SHAPE(1, 3, 1));
    fx_assert_shape(f, fx_op(f, "Tile", "d", 2, VALS(x, fx_const_i64(f, "r", 3, SHAPE(1, 2, 2))), 0, NULL), 3,
                    SHAPE(2, 6, 8));
}

/* ---- the same cases through the public API (LLVM) ------------------------------------------ */

static void run_model(const tcase *c, int threads)
{
    weft_graph *g = NULL;
    weft_model *m = NULL;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    weft_value x;
    assert_int_equal(weft_graph_add_input(g, "x", c->xt, c->ndim, c->shape, &x), WEFT_OK);
    weft_value y = c->build(g, c, x);
    assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
    int64_t ys[8];
    int nd = weft_graph_value_shape(g, y, ys);
    weft_type yt = weft_graph_value_type(g, y);
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    weft_status st = weft_model_compile(g, &o, &m);
    if (st != WEFT_OK) fail_msg("%s: compile: %s", c->label, weft_last_error());
    static double xd[MAXN], ref[MAXN];
    static int64_t xbuf[MAXN], ybuf[MAXN];
    make_x(c, xd, xbuf);
    c->ref(c, xd, ref);
    memset(ybuf, 0xff, sizeof ybuf);
    st = weft_model_run(m, (const void *[]){xbuf}, (void *[]){ybuf});
    weft_model_destroy(m);
    weft_graph_destroy(g);
    if (st != WEFT_OK) fail_msg("%s: run: %s", c->label, weft_last_error());
    check_out(c, yt, ybuf, ref, numel(nd, ys), threads == 1 ? "llvm, 1 thread" : "llvm, 2 threads");
}

static void test_cases_llvm(void **state)
{
    (void)state;
    for (int k = 0; k < N_CASES; k++) {
        run_model(&cases[k], 1);
        run_model(&cases[k], 2);
    }
}

/* x.var() as PyTorch exports it: ReduceProd over Shape (int64) must fold to a constant. */
static void test_reduce_prod_of_shape_folds(void **state)
{
    (void)state;
    weft_graph *g = NULL;
    weft_model *m = NULL;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    weft_value x, sh, n, nf, s, y;
    assert_int_equal(weft_graph_add_input(g, "x", F32, 3, SHAPE(2, 3, 4), &x), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Shape", "shape", 1, &x, 0, NULL, 1, &sh), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "ReduceProd", "numel", 1, &sh, 1, ATTRS(attr_i("keepdims", 0)), 1, &n),
                     WEFT_OK);
    const int64_t *nv = weft_graph_value_data(g, n);
    assert_non_null(nv); /* folded when added */
    assert_int_equal(*nv, 24);
    assert_int_equal(weft_graph_add_op(g, "Cast", "cast", 1, &n, 1, ATTRS(attr_i("to", 1)), 1, &nf), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "ReduceSum", "sum", 1, &x, 1, ATTRS(attr_i("keepdims", 0)), 1, &s),
                     WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Div", "mean", 2, VALS(s, nf), 0, NULL, 1, &y), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
    assert_int_equal(weft_model_compile(g, NULL, &m), WEFT_OK);
    float xb[24], yb = 0;
    double want = 0;
    for (int i = 0; i < 24; i++) xb[i] = (float)(i % 7) - 2.5f, want += xb[i];
    assert_int_equal(weft_model_run(m, (const void *[]){xb}, (void *[]){&yb}), WEFT_OK);
    assert_true(fabs(yb - want / 24) <= TOL);
    weft_model_destroy(m);
    weft_graph_destroy(g);
}

/* Each new elementwise op after a MatMul fuses into its epilogue: one kernel. */
static void test_elementwise_fuse_into_matmul(void **state)
{
    (void)state;
    static const char *const ops[] = {"PRelu", "Elu", "Selu", "Celu", "Sign", "Floor", "Ceil", "Round", "Sin", "Cos"};
    float w[8 * 6], sl[6];
    for (int i = 0; i < 48; i++) w[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    for (int i = 0; i < 6; i++) sl[i] = 0.1f * (float)i;
    for (int k = 0; k < (int)(sizeof ops / sizeof ops[0]); k++) {
        weft_graph *g = NULL;
        weft_model *m = NULL;
        weft_value x, wv, sv, mm, y;
        assert_int_equal(weft_graph_create(&g), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "x", F32, 2, SHAPE(4, 8), &x), WEFT_OK);
        assert_int_equal(weft_graph_add_constant(g, "w", F32, 2, SHAPE(8, 6), w, &wv), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "MatMul", "mm", 2, VALS(x, wv), 0, NULL, 1, &mm), WEFT_OK);
        if (k == 0) {
            assert_int_equal(weft_graph_add_constant(g, "slope", F32, 1, SHAPE(6), sl, &sv), WEFT_OK);
            assert_int_equal(weft_graph_add_op(g, ops[k], "act", 2, VALS(mm, sv), 0, NULL, 1, &y), WEFT_OK);
        } else {
            assert_int_equal(weft_graph_add_op(g, ops[k], "act", 1, &mm, 0, NULL, 1, &y), WEFT_OK);
        }
        assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
        assert_int_equal(weft_model_compile(g, NULL, &m), WEFT_OK);
        if (weft_model_n_kernels(m) != 1)
            fail_msg("MatMul -> %s: %d kernels, expected 1 (fused)", ops[k], weft_model_n_kernels(m));
        weft_model_destroy(m);
        weft_graph_destroy(g);
    }
}

/* ---- ops of several inputs or non-float outputs, through the public API ------------------------ */

/* Compiles g (outputs set) for target at threads, runs it on the inputs, fills the outputs. */
static void run_graph(weft_graph *g, const char *target, int threads, const void *const *in, void *const *out)
{
    weft_model *m = NULL;
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    o.target = target;
    weft_status st = weft_model_compile(g, &o, &m);
    if (st != WEFT_OK) fail_msg("compile (%s): %s", target, weft_last_error());
    st = weft_model_run(m, in, out);
    weft_model_destroy(m);
    if (st != WEFT_OK) fail_msg("run (%s): %s", target, weft_last_error());
}

#define NX 24 /* x, y: [2, 3, 4] */

/* Mod (fmod 0 on int64, fmod 1 on float and int64), Xor, IsNaN, IsInf (each direction), Sum,
 * Mean, Clip with run-time bounds, Trilu (upper, lower, k), OneHot (negative and out-of-range
 * indices, axis 1), GatherElements (axis 1, negative indices): interpreter and LLVM at 1 and 2
 * threads against C loops; floats within TOL, integers and booleans exactly. */
static void test_multi_input_ops(void **state)
{
    (void)state;
    static const char *const targets[3] = {"interp", "llvm", "llvm"};
    float x[NX], y[NX], lo = -0.3f, hi = 0.45f;
    int64_t xi[NX], yi[NX], ids[6] = {0, 3, -1, 5, -4, 2}, gidx[2 * 2 * 4];
    for (int i = 0; i < NX; i++) {
        x[i] = (float)((i * 37) % 23) / 4.0f - 2.9f;
        y[i] = (float)((i * 11) % 7) / 3.0f + 0.4f;
        if (i % 5 == 0) y[i] = -y[i];
        xi[i] = (i * 29) % 17 - 8;
        yi[i] = i % 3 == 0 ? -3 : (i % 4) + 2;
    }
    x[3] = NAN, x[7] = INFINITY, x[8] = -INFINITY;
    for (int i = 0; i < 16; i++) gidx[i] = (i * 5) % 6 - 3; /* -3..2 over an axis of 3 */
    for (int t = 0; t < 3; t++) {
        weft_graph *g = NULL;
        assert_int_equal(weft_graph_create(&g), WEFT_OK);
        weft_value vx, vy, vxi, vyi, vlo, vhi, vid, vdepth, vvals, vk, vgi, r[16];
        assert_int_equal(weft_graph_add_input(g, "x", F32, 3, SHAPE(2, 3, 4), &vx), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "y", F32, 3, SHAPE(2, 3, 4), &vy), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "xi", I64, 3, SHAPE(2, 3, 4), &vxi), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "yi", I64, 3, SHAPE(2, 3, 4), &vyi), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "lo", F32, 0, NULL, &vlo), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "hi", F32, 1, SHAPE(1), &vhi), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "ids", I64, 2, SHAPE(2, 3), &vid), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "gidx", I64, 3, SHAPE(2, 2, 4), &vgi), WEFT_OK);
        assert_int_equal(weft_graph_add_constant(g, "depth", I64, 0, NULL, (const int64_t[]){4}, &vdepth), WEFT_OK);
        assert_int_equal(weft_graph_add_constant(g, "vals", F32, 1, SHAPE(2), (const float[]){-1.0f, 2.5f}, &vvals),
                         WEFT_OK);
        assert_int_equal(weft_graph_add_constant(g, "k", I64, 1, SHAPE(1), (const int64_t[]){-1}, &vk), WEFT_OK);
        weft_value bx, by;
        assert_int_equal(weft_graph_add_op(g, "IsNaN", "bx", 1, &vx, 0, NULL, 1, &bx), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Greater", "by", 2, VALS(vy, vx), 0, NULL, 1, &by), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Mod", "modi", 2, VALS(vxi, vyi), 0, NULL, 1, &r[0]), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Mod", "fmodi", 2, VALS(vxi, vyi), 1, ATTRS(attr_i("fmod", 1)), 1, &r[1]),
                         WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Mod", "fmodf", 2, VALS(vx, vy), 1, ATTRS(attr_i("fmod", 1)), 1, &r[2]),
                         WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Xor", "xor", 2, VALS(bx, by), 0, NULL, 1, &r[3]), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "IsInf", "inf", 1, &vx, 0, NULL, 1, &r[4]), WEFT_OK);
        assert_int_equal(
            weft_graph_add_op(g, "IsInf", "ninf", 1, &vx, 1, ATTRS(attr_i("detect_positive", 0)), 1, &r[5]), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Sum", "sum", 3, VALS(vx, vy, vy), 0, NULL, 1, &r[6]), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Mean", "mean", 3, VALS(vy, vy, vx), 0, NULL, 1, &r[7]), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Clip", "clip", 3, VALS(vy, vlo, vhi), 0, NULL, 1, &r[8]), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Trilu", "triu", 1, &vy, 0, NULL, 1, &r[9]), WEFT_OK);
        assert_int_equal(
            weft_graph_add_op(g, "Trilu", "tril", 2, VALS(vy, vk), 1, ATTRS(attr_i("upper", 0)), 1, &r[10]), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "OneHot", "oh", 3, VALS(vid, vdepth, vvals), 1,
                                           ATTRS(attr_i("axis", 1)), 1, &r[11]),
                         WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "GatherElements", "ge", 2, VALS(vy, vgi), 1, ATTRS(attr_i("axis", 1)), 1,
                                           &r[12]),
                         WEFT_OK);
        static const char *const names[13] = {"modi", "fmodi", "fmodf", "xor", "inf", "ninf", "sum",
                                              "mean", "clip",  "triu",  "tril", "oh",  "ge"};
        for (int k = 0; k < 13; k++) assert_int_equal(weft_graph_set_output(g, r[k], names[k]), WEFT_OK);
        fx_assert_shape_g(g, r[11], 3, SHAPE(2, 4, 3));
        fx_assert_shape_g(g, r[12], 3, SHAPE(2, 2, 4));
        static int64_t omodi[NX], ofmodi[NX];
        static float ofmodf[NX], osum[NX], omean[NX], oclip[NX], otriu[NX], otril[NX], ooh[24], oge[16];
        static bool oxor[NX], oinf[NX], oninf[NX];
        run_graph(g, targets[t], t == 2 ? 2 : 1, (const void *[]){x, y, xi, yi, &lo, &hi, ids, gidx},
                  (void *[]){omodi, ofmodi, ofmodf, oxor, oinf, oninf, osum, omean, oclip, otriu, otril, ooh, oge});
        weft_graph_destroy(g);
        const char *where = targets[t];
        for (int i = 0; i < NX; i++) {
            int64_t m = xi[i] % yi[i];
            if (m != 0 && (m < 0) != (yi[i] < 0)) m += yi[i];
            if (omodi[i] != m) fail_msg("%s: Mod[%d] = %lld, expected %lld", where, i, (long long)omodi[i], (long long)m);
            if (ofmodi[i] != xi[i] % yi[i]) fail_msg("%s: Mod fmod=1 [%d]", where, i);
            if (isfinite(x[i]) && fabs(ofmodf[i] - fmod(x[i], y[i])) > TOL)
                fail_msg("%s: Mod float [%d] = %g, expected %g", where, i, ofmodf[i], fmod(x[i], y[i]));
            if (oxor[i] != (isnan(x[i]) != (y[i] > x[i]))) fail_msg("%s: Xor[%d]", where, i);
            if (oinf[i] != (isinf(x[i]) != 0)) fail_msg("%s: IsInf[%d]", where, i);
            if (oninf[i] != (isinf(x[i]) && x[i] < 0)) fail_msg("%s: IsInf negative only [%d]", where, i);
            if (isfinite(x[i]) && fabs(osum[i] - ((double)x[i] + 2.0 * y[i])) > TOL * 8) fail_msg("%s: Sum[%d]", where, i);
            if (isfinite(x[i]) && fabs(omean[i] - ((double)x[i] + 2.0 * y[i]) / 3) > TOL * 4)
                fail_msg("%s: Mean[%d]", where, i);
            if (oclip[i] != fminf(fmaxf(y[i], lo), hi)) fail_msg("%s: Clip[%d] = %g", where, i, oclip[i]);
            int row = (i / 4) % 3, col = i % 4;
            if (otriu[i] != (col >= row ? y[i] : 0.0f)) fail_msg("%s: Trilu upper [%d]", where, i);
            if (otril[i] != (col - row <= -1 ? y[i] : 0.0f)) fail_msg("%s: Trilu lower k=-1 [%d]", where, i);
        }
        for (int b = 0; b < 2; b++) /* OneHot [2,3] -> [2,4,3]: ids 5 and -4... -4 + 4 = 0, 5 out of range */
            for (int c = 0; c < 4; c++)
                for (int j = 0; j < 3; j++) {
                    int64_t id = ids[b * 3 + j], n = id < 0 ? id + 4 : id;
                    float want = n == c ? 2.5f : -1.0f;
                    if (ooh[(b * 4 + c) * 3 + j] != want) fail_msg("%s: OneHot[%d,%d,%d]", where, b, c, j);
                }
        for (int b = 0; b < 2; b++)
            for (int j = 0; j < 2; j++)
                for (int c = 0; c < 4; c++) {
                    int64_t id = gidx[(b * 2 + j) * 4 + c];
                    if (id < 0) id += 3;
                    if (oge[(b * 2 + j) * 4 + c] != y[(b * 3 + id) * 4 + c]) fail_msg("%s: GatherElements", where);
                }
    }
}

/* ---- errors -------------------------------------------------------------------------------- */

/* Adding op on inputs in must fail with want, naming the op, the node and `what`. */
static void expect_error(fx *f, const char *op, const char *node, int n_in, const weft_value *in, int n_attrs,
                         const weft_attr *attrs, weft_status want, const char *what)
{
    weft_value out = -1;
    weft_status st = weft_graph_add_op(f->g, op, node, n_in, in, n_attrs, attrs, 1, &out);
    fx_assert_error(st, want, op, what);
    if (!strstr(weft_last_error(), node)) fail_msg("error '%s' does not name node '%s'", weft_last_error(), node);
}

static void test_errors(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 3, SHAPE(2, 3, 4));
    weft_value xi = fx_input(f, "xi", I64, 2, SHAPE(2, 3));
    /* PRelu: slope must broadcast to X unidirectionally */
    weft_value s5 = fx_const_f32(f, "s5", 1, SHAPE(5), (const float[]){1, 2, 3, 4, 5});
    weft_value s2111 = fx_const_f32(f, "s2111", 4, SHAPE(2, 1, 1, 1), (const float[]){1, 2});
    expect_error(f, "PRelu", "pr1", 2, VALS(x, s5), 0, NULL, WEFT_ERR_SHAPE, "slope");
    expect_error(f, "PRelu", "pr2", 2, VALS(x, s2111), 0, NULL, WEFT_ERR_SHAPE, "slope");
    expect_error(f, "PRelu", "pr3", 1, VALS(x), 0, NULL, WEFT_ERR_INVALID_ARG, NULL);
    /* exponential activations: alpha finite, Celu's nonzero */
    expect_error(f, "Celu", "ce", 1, &x, 1, ATTRS(attr_f("alpha", 0.0)), WEFT_ERR_INVALID_ARG, "alpha");
    expect_error(f, "Elu", "el", 1, &x, 1, ATTRS(attr_f("alpha", INFINITY)), WEFT_ERR_INVALID_ARG, "alpha");
    expect_error(f, "Selu", "se", 1, &x, 1, ATTRS(attr_f("gamma", NAN)), WEFT_ERR_INVALID_ARG, "gamma");
    expect_error(f, "Floor", "fl", 1, &xi, 0, NULL, WEFT_ERR_INVALID_ARG, "input X");
    /* reductions */
    expect_error(f, "ReduceL2", "l2", 1, &xi, 0, NULL, WEFT_ERR_INVALID_ARG, "input data");
    expect_error(f, "ReduceProd", "rp", 1, &x, 1, ATTRS(attr_is("axes", 2, SHAPE(1, -2))), WEFT_ERR_INVALID_ARG,
                 "axis");
    expect_error(f, "ReduceLogSumExp", "lse", 1, &x, 1, ATTRS(attr_is("axes", 1, SHAPE(3))), WEFT_ERR_INVALID_ARG,
                 "axis");
    expect_error(f, "ReduceSumSquare", "ss", 2, VALS(x, xi), 0, NULL, WEFT_ERR_UNSUPPORTED, "axes");
    /* Tile: constant, non-negative, one per dim */
    expect_error(f, "Tile", "t1", 2, VALS(x, fx_input(f, "rep", I64, 1, SHAPE(3))), 0, NULL, WEFT_ERR_UNSUPPORTED,
                 "repeats");
    expect_error(f, "Tile", "t2", 2, VALS(x, fx_const_i64(f, "neg", 3, SHAPE(1, -2, 1))), 0, NULL,
                 WEFT_ERR_INVALID_ARG, "repeats");
    expect_error(f, "Tile", "t3", 2, VALS(x, fx_const_i64(f, "two", 2, SHAPE(1, 2))), 0, NULL, WEFT_ERR_SHAPE,
                 "repeats");
    /* ArgMax / ArgMin */
    expect_error(f, "ArgMax", "am1", 1, &x, 1, ATTRS(attr_i("axis", 3)), WEFT_ERR_INVALID_ARG, "axis");
    expect_error(f, "ArgMin", "am2", 1, &x, 1, ATTRS(attr_i("select_last_index", 2)), WEFT_ERR_INVALID_ARG,
                 "select_last_index");
    expect_error(f, "ArgMax", "am3", 1, &x, 1, ATTRS(attr_i("keepdims", 5)), WEFT_ERR_INVALID_ARG, "keepdims");
    /* CumSum: a constant axis in range, flags 0 or 1 */
    weft_value one = fx_const_i64(f, "one", 1, SHAPE(1));
    expect_error(f, "CumSum", "cs1", 2, VALS(x, fx_input(f, "axin", I64, 1, SHAPE(1))), 0, NULL,
                 WEFT_ERR_UNSUPPORTED, "axis");
    expect_error(f, "CumSum", "cs2", 2, VALS(x, fx_const_i64(f, "three", 1, SHAPE(3))), 0, NULL,
                 WEFT_ERR_INVALID_ARG, "axis");
    expect_error(f, "CumSum", "cs3", 2, VALS(x, one), 1, ATTRS(attr_i("reverse", 2)), WEFT_ERR_INVALID_ARG,
                 "reverse");
    expect_error(f, "CumSum", "cs4", 1, &x, 0, NULL, WEFT_ERR_INVALID_ARG, NULL);
    /* Mod: floats need fmod=1; Xor takes booleans; IsNaN floats */
    expect_error(f, "Mod", "mod", 2, VALS(x, x), 0, NULL, WEFT_ERR_INVALID_ARG, "fmod");
    expect_error(f, "Xor", "xor", 2, VALS(x, x), 0, NULL, WEFT_ERR_INVALID_ARG, "input A");
    expect_error(f, "IsNaN", "isnan", 1, &xi, 0, NULL, WEFT_ERR_INVALID_ARG, "input X");
    /* Clip: a run-time bound must be one element of X's dtype */
    expect_error(f, "Clip", "clip", 2, VALS(x, fx_input(f, "lo3", F32, 1, SHAPE(3))), 0, NULL, WEFT_ERR_INVALID_ARG,
                 "min");
    /* Trilu: at least 2 dims, a constant k */
    expect_error(f, "Trilu", "tr1", 1, VALS(fx_input(f, "v1", F32, 1, SHAPE(4))), 0, NULL, WEFT_ERR_SHAPE, "2 dims");
    expect_error(f, "Trilu", "tr2", 2, VALS(x, fx_input(f, "kin", I64, 1, SHAPE(1))), 0, NULL, WEFT_ERR_UNSUPPORTED,
                 "k");
    /* OneHot: a constant depth >= 1, values [2] */
    weft_value ohv = fx_const_f32(f, "ohv", 1, SHAPE(2), (const float[]){0, 1});
    weft_value oh3 = fx_const_f32(f, "oh3", 1, SHAPE(3), (const float[]){0, 1, 2});
    expect_error(f, "OneHot", "oh1", 3, VALS(xi, fx_input(f, "din", I64, 0, NULL), ohv), 0, NULL,
                 WEFT_ERR_UNSUPPORTED, "depth");
    expect_error(f, "OneHot", "oh2", 3, VALS(xi, one, oh3), 0, NULL, WEFT_ERR_SHAPE, "values");
    expect_error(f, "OneHot", "oh3", 3, VALS(xi, fx_const_i64(f, "zero", 1, SHAPE(0)), ohv), 0, NULL,
                 WEFT_ERR_INVALID_ARG, "depth");
    /* GatherElements: indices of X's rank, integer */
    expect_error(f, "GatherElements", "ge1", 2, VALS(x, xi), 0, NULL, WEFT_ERR_SHAPE, "indices");
    expect_error(f, "GatherElements", "ge2", 2, VALS(x, x), 0, NULL, WEFT_ERR_INVALID_ARG, "indices");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cases_interp, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_shapes, fx_setup, fx_teardown),
        cmocka_unit_test(test_cases_llvm),
        cmocka_unit_test(test_reduce_prod_of_shape_folds),
        cmocka_unit_test(test_elementwise_fuse_into_matmul),
        cmocka_unit_test(test_multi_input_ops),
        cmocka_unit_test_setup_teardown(test_errors, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
