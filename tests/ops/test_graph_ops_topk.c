/* Graph operator TopK (ops/nn_topk.c): the k largest or smallest elements along an axis, as
 * Values and int64 Indices, sorted, ties broken by the lower index.
 *
 * Every case of the table runs against a hand-written reference (a stable insertion sort of
 * each row, NaN ordered as +inf as the op documents): the node alone in the interpreter (the
 * harness), then as a one-node model through the public API (the LLVM target at 1 and 2
 * threads), with both outputs, Values only or Indices only as graph outputs. The table covers
 * both formulations (k <= 24: selection rounds; k > 24: ranks) and, in the models, the loop
 * kernel of k > 24 that is at most a quarter of the row (the interpreter runs the model too), ties, largest 0/1, an axis that
 * is not the last, k = n (a sort), k = 1, int64 input, K as an attribute (opset 1) and NaN and
 * infinities. Outputs are copies of input elements and indices, so they must match exactly.
 * Bad K, axes and arities must fail naming the op, the node and what is wrong. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "graph_ops_harness.h"
#include "model/model_internal.h"

#define F32  WEFT_TYPE_FLOAT32
#define I64  WEFT_TYPE_INT64
#define MAXN 4096

/* Input data modes. */
enum { D_RAND, D_TIES, D_NAN };
/* Which outputs the model exposes. */
enum { O_BOTH, O_VALUES, O_INDICES };

typedef struct tcase {
    const char *label;
    weft_type xt;
    int ndim;
    int64_t shape[4];
    int64_t axis; /* as given (may be negative) */
    int64_t k;
    bool smallest;     /* largest=0 */
    bool k_attr;       /* opset 1: k as an attribute, no K input */
    bool default_axis; /* axis attribute omitted (-1) */
    int data;
    int outs;
} tcase;

static int64_t numel(int ndim, const int64_t *s)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= s[d];
    return n;
}

/* Values of mode at element i (floats; int64 inputs take them rounded). */
static double fill(int mode, int64_t i, uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    double r = (double)((*seed >> 8) & 0xffff) / 32768.0 - 1.0;
    switch (mode) {
    case D_TIES: return (double)((i * 7 + i / 5) % 4) - 1.0; /* four distinct values, many ties */
    case D_NAN: {
        static const double v[] = {NAN, 1.0, INFINITY, -INFINITY, 0.5, NAN, -2.0, INFINITY, 0.0};
        return v[(i * 5) % 9];
    }
    default: return 4.0 * r;
    }
}

/* ---- reference ----------------------------------------------------------------------------- */

/* x at a precedes x at b (a != b, both indices along the row): NaN as +inf, ties by index. */
static bool precedes(double xa, int64_t a, double xb, int64_t b, bool smallest)
{
    if (isnan(xa)) xa = INFINITY;
    if (isnan(xb)) xb = INFINITY;
    if (xa != xb) return smallest ? xa < xb : xa > xb;
    return a < b;
}

/* Per row along the axis: a stable insertion sort of the row's indices, then the first k. */
static void reference(const tcase *c, const double *x, double *vals, int64_t *idx)
{
    int ax = (int)(c->axis < 0 ? c->axis + c->ndim : c->axis);
    int64_t n = c->shape[ax], inner = 1, outer = 1;
    for (int d = ax + 1; d < c->ndim; d++) inner *= c->shape[d];
    for (int d = 0; d < ax; d++) outer *= c->shape[d];
    static int64_t order[MAXN];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            const double *row = x + o * n * inner + in;
            for (int64_t i = 0; i < n; i++) {
                int64_t j = i;
                while (j > 0 && precedes(row[i * inner], i, row[order[j - 1] * inner], order[j - 1], c->smallest)) {
                    order[j] = order[j - 1];
                    j--;
                }
                order[j] = i;
            }
            for (int64_t r = 0; r < c->k; r++) {
                int64_t at = (o * c->k + r) * inner + in;
                idx[at] = order[r];
                vals[at] = row[order[r] * inner];
            }
        }
}

/* ---- building ------------------------------------------------------------------------------ */

/* Adds K (unless opset 1) and the TopK node on x; out[0] Values, out[1] Indices. */
static void build(weft_graph *g, const tcase *c, weft_value x, weft_value *out)
{
    weft_attr attrs[3];
    int na = 0;
    if (!c->default_axis) attrs[na++] = attr_i("axis", c->axis);
    if (c->smallest) attrs[na++] = attr_i("largest", 0);
    weft_value in[2] = {x, -1};
    int n_in = 1;
    if (c->k_attr)
        attrs[na++] = attr_i("k", c->k);
    else {
        assert_int_equal(weft_graph_add_constant(g, "K", I64, 1, SHAPE(1), &c->k, &in[1]), WEFT_OK);
        n_in = 2;
    }
    weft_status st = weft_graph_add_op(g, "TopK", "topk", n_in, in, na, attrs, 2, out);
    if (st != WEFT_OK) fail_msg("%s: %s", c->label, weft_last_error());
}

/* X's values as doubles (xd) and in X's type (buf). */
static void make_x(const tcase *c, double *xd, void *buf)
{
    uint32_t seed = 4242;
    for (int64_t i = 0; i < numel(c->ndim, c->shape); i++) {
        double v = fill(c->data, i, &seed);
        if (c->xt == I64) {
            ((int64_t *)buf)[i] = (int64_t)floor(v * 3.0);
            xd[i] = (double)((int64_t *)buf)[i];
        } else {
            ((float *)buf)[i] = (float)v;
            xd[i] = (double)((float *)buf)[i];
        }
    }
}

static void check_values(const tcase *c, const void *got, const double *ref, int64_t n, const char *where)
{
    for (int64_t i = 0; i < n; i++) {
        double g = c->xt == I64 ? (double)((const int64_t *)got)[i] : (double)((const float *)got)[i];
        bool ok = isnan(ref[i]) ? isnan(g) : g == ref[i];
        if (!ok) fail_msg("%s (%s): Values[%lld] = %.9g, expected %.9g", c->label, where, (long long)i, g, ref[i]);
    }
}

static void check_indices(const tcase *c, const int64_t *got, const int64_t *ref, int64_t n, const char *where)
{
    for (int64_t i = 0; i < n; i++)
        if (got[i] != ref[i])
            fail_msg("%s (%s): Indices[%lld] = %lld, expected %lld", c->label, where, (long long)i, (long long)got[i],
                     (long long)ref[i]);
}

/* ---- the table ----------------------------------------------------------------------------- */

static const tcase cases[] = {
    {.label = "ties [3,12] k=4", .xt = F32, .ndim = 2, .shape = {3, 12}, .axis = -1, .k = 4, .data = D_TIES},
    {.label = "ties [3,12] k=4 smallest",
     .xt = F32,
     .ndim = 2,
     .shape = {3, 12},
     .axis = 1,
     .k = 4,
     .smallest = true,
     .data = D_TIES},
    {.label = "ties [3,12] sort (k=n)", .xt = F32, .ndim = 2, .shape = {3, 12}, .axis = -1, .k = 12, .data = D_TIES},
    {.label = "ties [3,12] sort smallest",
     .xt = F32,
     .ndim = 2,
     .shape = {3, 12},
     .axis = -1,
     .k = 12,
     .smallest = true,
     .data = D_TIES},
    {.label = "[4,16] k=1", .xt = F32, .ndim = 2, .shape = {4, 16}, .axis = -1, .k = 1, .default_axis = true},
    {.label = "[4,16] k=1 smallest", .xt = F32, .ndim = 2, .shape = {4, 16}, .axis = -1, .k = 1, .smallest = true},
    {.label = "[2,10,3] axis=1 k=10", .xt = F32, .ndim = 3, .shape = {2, 10, 3}, .axis = 1, .k = 10},
    {.label = "ties [5,3,4] axis=0 k=2", .xt = F32, .ndim = 3, .shape = {5, 3, 4}, .axis = 0, .k = 2, .data = D_TIES},
    {.label = "ties [2,20,3] axis=-2 k=9",
     .xt = F32,
     .ndim = 3,
     .shape = {2, 20, 3},
     .axis = -2,
     .k = 9,
     .smallest = true,
     .data = D_TIES},
    {.label = "[2,40] k=8", .xt = F32, .ndim = 2, .shape = {2, 40}, .axis = 1, .k = 8},
    {.label = "[2,300] k=24 (last selection)", .xt = F32, .ndim = 2, .shape = {2, 300}, .axis = 1, .k = 24},
    {.label = "ties [3,40] k=25 (ranks)", .xt = F32, .ndim = 2, .shape = {3, 40}, .axis = -1, .k = 25, .data = D_TIES},
    {.label = "[4,256] k=10 (nearest points)", .xt = F32, .ndim = 2, .shape = {4, 256}, .axis = -1, .k = 10, .smallest = true},
    {.label = "int64 ties [3,12] k=3", .xt = I64, .ndim = 2, .shape = {3, 12}, .axis = -1, .k = 3, .data = D_TIES},
    {.label = "int64 [3,12] sort smallest",
     .xt = I64,
     .ndim = 2,
     .shape = {3, 12},
     .axis = -1,
     .k = 12,
     .smallest = true},
    {.label = "opset 1 k attribute [2,6,2] axis=1 k=3",
     .xt = F32,
     .ndim = 3,
     .shape = {2, 6, 2},
     .axis = 1,
     .k = 3,
     .k_attr = true},
    {.label = "NaN/inf [2,9] k=5", .xt = F32, .ndim = 2, .shape = {2, 9}, .axis = -1, .k = 5, .data = D_NAN},
    {.label = "NaN/inf [2,9] sort smallest",
     .xt = F32,
     .ndim = 2,
     .shape = {2, 9},
     .axis = -1,
     .k = 9,
     .smallest = true,
     .data = D_NAN},
    {.label = "Indices only [3,12] k=4",
     .xt = F32,
     .ndim = 2,
     .shape = {3, 12},
     .axis = -1,
     .k = 4,
     .data = D_TIES,
     .outs = O_INDICES},
    {.label = "Indices only [3,12] sort",
     .xt = F32,
     .ndim = 2,
     .shape = {3, 12},
     .axis = -1,
     .k = 12,
     .data = D_TIES,
     .outs = O_INDICES},
    {.label = "Values only [1,100] k=5", .xt = F32, .ndim = 2, .shape = {1, 100}, .axis = -1, .k = 5, .outs = O_VALUES},
    {.label = "Values only [2,30] k=20", .xt = F32, .ndim = 2, .shape = {2, 30}, .axis = -1, .k = 20, .outs = O_VALUES},
    /* k > 24 and at most a quarter of a row of 32 or more: a loop kernel in a model on CPUs */
    {.label = "ties [3,120] k=30 (loop)", .xt = F32, .ndim = 2, .shape = {3, 120}, .axis = -1, .k = 30, .data = D_TIES},
    {.label = "[2,130,3] axis=1 k=32 smallest (loop)",
     .xt = F32,
     .ndim = 3,
     .shape = {2, 130, 3},
     .axis = 1,
     .k = 32,
     .smallest = true},
    {.label = "NaN/inf [2,200] k=25 (loop)", .xt = F32, .ndim = 2, .shape = {2, 200}, .axis = -1, .k = 25, .data = D_NAN},
    {.label = "NaN/inf [2,200] k=40 smallest (loop)",
     .xt = F32,
     .ndim = 2,
     .shape = {2, 200},
     .axis = -1,
     .k = 40,
     .smallest = true,
     .data = D_NAN},
    {.label = "int64 [4,100] k=25 (loop)", .xt = I64, .ndim = 2, .shape = {4, 100}, .axis = -1, .k = 25},
    {.label = "Indices only [2,128] k=30 (loop)",
     .xt = F32,
     .ndim = 2,
     .shape = {2, 128},
     .axis = -1,
     .k = 30,
     .data = D_TIES,
     .outs = O_INDICES},
    {.label = "Values only [2,400] k=100 (loop)",
     .xt = F32,
     .ndim = 2,
     .shape = {2, 400},
     .axis = -1,
     .k = 100,
     .outs = O_VALUES},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* The case's output shape (X's with the axis extent k). */
static int64_t out_numel(const tcase *c)
{
    int ax = (int)(c->axis < 0 ? c->axis + c->ndim : c->axis);
    return numel(c->ndim, c->shape) / c->shape[ax] * c->k;
}

static void test_cases_interp(void **state)
{
    fx *f = *state;
    static double xd[MAXN], rv[MAXN];
    static int64_t ri[MAXN];
    for (int k = 0; k < N_CASES; k++) {
        const tcase *c = &cases[k];
        for (int i = 0; i < f->n_bufs; i++) weft_rt_free(f->bufs[i]);
        f->n_bufs = 0;
        weft_graph_destroy(f->g);
        f->g = NULL;
        assert_int_equal(weft_graph_create(&f->g), WEFT_OK);
        weft_value x = fx_input(f, "x", c->xt, c->ndim, c->shape), y[2];
        void *buf = fx_alloc(f, 8 * MAXN);
        make_x(c, xd, buf);
        build(f->g, c, x, y);
        int64_t s[8];
        int nd = weft_graph_value_shape(f->g, y[1], s);
        assert_int_equal(out_numel(c), numel(nd, s));
        assert_int_equal(weft_graph_value_type(f->g, y[0]), c->xt);
        assert_int_equal(weft_graph_value_type(f->g, y[1]), I64);
        reference(c, xd, rv, ri);
        void *out[WEFT_NODE_MAX_IO] = {0};
        fx_run_last(f, (const void *[]){buf, NULL}, out);
        check_values(c, out[0], rv, out_numel(c), "interp");
        check_indices(c, out[1], ri, out_numel(c), "interp");
    }
    assert_int_equal(weft_op_find("TopK")->pattern, WEFT_PATTERN_REDUCTION);
}

/* Output shapes and dtypes: the axis extent becomes k. */
static void test_shapes(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 3, SHAPE(2, 7, 4)), y[2];
    assert_int_equal(weft_graph_add_op(f->g, "TopK", "t", 2, VALS(x, fx_const_i64(f, "K", 1, SHAPE(3))), 1,
                                       ATTRS(attr_i("axis", 1)), 2, y),
                     WEFT_OK);
    fx_assert_shape(f, y[0], 3, SHAPE(2, 3, 4));
    fx_assert_shape(f, y[1], 3, SHAPE(2, 3, 4));
    assert_int_equal(weft_graph_value_type(f->g, y[0]), F32);
    assert_int_equal(weft_graph_value_type(f->g, y[1]), I64);
    /* the default axis is the last */
    assert_int_equal(
        weft_graph_add_op(f->g, "TopK", "t2", 2, VALS(x, fx_const_i64(f, "K2", 1, SHAPE(4))), 0, NULL, 2, y), WEFT_OK);
    fx_assert_shape(f, y[1], 3, SHAPE(2, 7, 4));
}

/* ---- the same cases through the public API (LLVM) ------------------------------------------ */

/* The case takes the loop kernel in a model (ops/nn_topk.c, weft_nn_topk_loop). */
static bool loop_case(const tcase *c)
{
    int ax = (int)(c->axis < 0 ? c->axis + c->ndim : c->axis);
    int64_t n = c->shape[ax];
    return n >= 32 && c->k > 24 && 4 * c->k <= n;
}

/* One-node model of case c: LLVM at 1 or 2 threads, or (threads 3) the interpreter. */
static void run_model(const tcase *c, int threads)
{
    weft_graph *g = NULL;
    weft_model *m = NULL;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    weft_value x, y[2];
    assert_int_equal(weft_graph_add_input(g, "x", c->xt, c->ndim, c->shape, &x), WEFT_OK);
    build(g, c, x, y);
    if (c->outs != O_INDICES) assert_int_equal(weft_graph_set_output(g, y[0], "values"), WEFT_OK);
    if (c->outs != O_VALUES) assert_int_equal(weft_graph_set_output(g, y[1], "indices"), WEFT_OK);
    weft_model_options o = weft_model_options_default();
    o.threads = threads == 3 ? 1 : threads;
    if (threads == 3) o.target = "interp";
    weft_status st = weft_model_compile(g, &o, &m);
    weft_graph_destroy(g);
    if (st != WEFT_OK) fail_msg("%s: compile: %s", c->label, weft_last_error());
    int loops = 0;
    for (int q = 0; q < m->n_kernels; q++) loops += !strcmp(m->kernels[q].schedule_src, "loops");
    if (loops != loop_case(c)) fail_msg("%s: %d loop kernel(s), expected %d", c->label, loops, loop_case(c));
    static double xd[MAXN], rv[MAXN];
    static int64_t xbuf[MAXN], vbuf[MAXN], ibuf[MAXN], ri[MAXN];
    make_x(c, xd, xbuf);
    reference(c, xd, rv, ri);
    memset(vbuf, 0xff, sizeof vbuf);
    memset(ibuf, 0xff, sizeof ibuf);
    void *outs[2] = {vbuf, ibuf};
    if (c->outs == O_INDICES) outs[0] = ibuf;
    st = weft_model_run(m, (const void *[]){xbuf}, outs);
    weft_model_destroy(m);
    if (st != WEFT_OK) fail_msg("%s: run: %s", c->label, weft_last_error());
    const char *where = threads == 1 ? "llvm, 1 thread" : threads == 2 ? "llvm, 2 threads" : "interp model";
    if (c->outs != O_INDICES) check_values(c, vbuf, rv, out_numel(c), where);
    if (c->outs != O_VALUES) check_indices(c, ibuf, ri, out_numel(c), where);
}

static void test_cases_llvm(void **state)
{
    (void)state;
    for (int k = 0; k < N_CASES; k++) {
        run_model(&cases[k], 1);
        run_model(&cases[k], 2);
        run_model(&cases[k], 3);
    }
}

/* A row far longer than the rank formulation accepts still works for small k (selection). */
static void test_long_row_small_k(void **state)
{
    (void)state;
    enum { N = 70000 };
    weft_graph *g = NULL;
    weft_model *m = NULL;
    weft_value x, K, y[2];
    const int64_t k = 3;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", F32, 1, SHAPE(N), &x), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "K", I64, 1, SHAPE(1), &k, &K), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "TopK", "topk", 2, VALS(x, K), 0, NULL, 2, y), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, y[0], "values"), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, y[1], "indices"), WEFT_OK);
    weft_status st = weft_model_compile(g, NULL, &m);
    weft_graph_destroy(g);
    if (st != WEFT_OK) fail_msg("compile: %s", weft_last_error());
    static float xb[N];
    for (int i = 0; i < N; i++) xb[i] = (float)((i * 7919) % N); /* a permutation of 0..N-1 */
    float v[3];
    int64_t ix[3];
    st = weft_model_run(m, (const void *[]){xb}, (void *[]){v, ix});
    weft_model_destroy(m);
    if (st != WEFT_OK) fail_msg("run: %s", weft_last_error());
    for (int r = 0; r < 3; r++) {
        assert_true(v[r] == (float)(N - 1 - r));
        assert_true(xb[ix[r]] == v[r]);
    }
}

/* ---- errors -------------------------------------------------------------------------------- */

/* Adding TopK on inputs in must fail with want, naming the op, the node and `what`. */
static void expect_error(fx *f, const char *node, int n_in, const weft_value *in, int n_attrs, const weft_attr *attrs,
                         weft_status want, const char *what, const char *what2)
{
    weft_value out[2] = {-1, -1};
    weft_status st = weft_graph_add_op(f->g, "TopK", node, n_in, in, n_attrs, attrs, 2, out);
    fx_assert_error(st, want, "TopK", what);
    if (what2 && !strstr(weft_last_error(), what2))
        fail_msg("error '%s' does not mention '%s'", weft_last_error(), what2);
    if (!strstr(weft_last_error(), node)) fail_msg("error '%s' does not name node '%s'", weft_last_error(), node);
}

static void test_errors(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 2, SHAPE(3, 5));
    weft_value k2 = fx_const_i64(f, "k2", 1, SHAPE(2));
    /* k out of range */
    expect_error(f, "big", 2, VALS(x, fx_const_i64(f, "k6", 1, SHAPE(6))), 0, NULL, WEFT_ERR_INVALID_ARG, "k=6",
                 "[0, 5]");
    expect_error(f, "neg", 2, VALS(x, fx_const_i64(f, "km", 1, SHAPE(-1))), 0, NULL, WEFT_ERR_INVALID_ARG, "k=-1",
                 NULL);
    expect_error(f, "attr", 1, &x, 1, ATTRS(attr_i("k", 9)), WEFT_ERR_INVALID_ARG, "k=9", NULL);
    /* K computed at run time, K of two elements, K missing (opset 1 without the attribute) */
    expect_error(f, "runtime", 2, VALS(x, fx_input(f, "kin", I64, 1, SHAPE(1))), 0, NULL, WEFT_ERR_UNSUPPORTED,
                 "K input must be a constant", NULL);
    expect_error(f, "two", 2, VALS(x, fx_const_i64(f, "k22", 2, SHAPE(1, 2))), 0, NULL, WEFT_ERR_INVALID_ARG, "K",
                 "2 elements");
    expect_error(f, "nok", 1, &x, 0, NULL, WEFT_ERR_INVALID_ARG, "attribute k", NULL);
    /* axis out of range, bad flags */
    expect_error(f, "ax", 2, VALS(x, k2), 1, ATTRS(attr_i("axis", 2)), WEFT_ERR_INVALID_ARG, "axis=2", NULL);
    expect_error(f, "axneg", 2, VALS(x, k2), 1, ATTRS(attr_i("axis", -3)), WEFT_ERR_INVALID_ARG, "axis=-3", NULL);
    expect_error(f, "lg", 2, VALS(x, k2), 1, ATTRS(attr_i("largest", 2)), WEFT_ERR_INVALID_ARG, "largest", NULL);
    /* arity and dtypes */
    expect_error(f, "three", 3, VALS(x, k2, k2), 0, NULL, WEFT_ERR_INVALID_ARG, "3 inputs", NULL);
    weft_value xi32 = fx_input(f, "xi32", WEFT_TYPE_INT32, 2, SHAPE(3, 5));
    expect_error(f, "dt", 2, VALS(xi32, k2), 0, NULL, WEFT_ERR_INVALID_ARG, "input X", "int32");
    weft_value xs = fx_input(f, "xs", F32, 0, NULL);
    expect_error(f, "scalar", 2, VALS(xs, k2), 0, NULL, WEFT_ERR_SHAPE, "scalar", NULL);
    /* ranks (k > 24) on a row longer than 65536: refused with the extent and the limit */
    weft_value xl = fx_input(f, "xl", F32, 2, SHAPE(2, 70000));
    expect_error(f, "long", 2, VALS(xl, fx_const_i64(f, "k25", 1, SHAPE(25))), 0, NULL, WEFT_ERR_UNSUPPORTED, "70000",
                 "65536");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cases_interp, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_shapes, fx_setup, fx_teardown),
        cmocka_unit_test(test_cases_llvm),
        cmocka_unit_test(test_long_row_small_k),
        cmocka_unit_test_setup_teardown(test_errors, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
