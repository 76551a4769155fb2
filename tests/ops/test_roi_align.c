/* Graph operator RoiAlign (ops/nn_roi_align.c): average-pooled bilinear samples of X over each
 * region of interest.
 *
 * Every case of the table runs against a naive C reference written here from the semantics of
 * ONNX Runtime's RoiAlign (torchvision's roi_align; aligned=True is half_pixel), with its
 * coordinates in float32 as those compute them: the node alone in the interpreter (the
 * harness), then as a model through the public API (the LLVM target at 1 and 2 threads, X
 * produced by a Relu the fusion may inline into the gather). The table covers both coordinate
 * transformation modes, sampling ratios 1, 2 and 3, rois partly and wholly outside the map,
 * degenerate rois, two images picked by batch_indices (int64 and int32), odd sizes, default
 * attributes and batch indices outside [0, N), which the op clamps (the reference clamps too).
 * Tolerance: 1e-5 relative to max(1, |ref|). Rois holding NaN, infinities or huge values must
 * run without reading out of bounds (ASan and the interpreter's checks catch a stray index).
 * mode=max, sampling_ratio=0 and bad shapes, dtypes and attributes must fail naming what is
 * wrong. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "graph_ops_harness.h"

#define F32 WEFT_TYPE_FLOAT32
#define I64 WEFT_TYPE_INT64
#define I32 WEFT_TYPE_INT32
#define MAX_R 8
#define MAXN 8192
#define TOL 1e-5

typedef struct rcase {
    const char *label;
    int64_t N, C, H, W;
    int R;
    int64_t out_h, out_w, ratio;
    bool out_half;      /* coordinate_transformation_mode=output_half_pixel (else half_pixel) */
    float scale;        /* spatial_scale */
    bool defaults;      /* only sampling_ratio given: out 1x1, scale 1, avg, half_pixel */
    bool b_i32;         /* batch_indices as int32 */
    bool rand_rois;     /* rois drawn at random around the map (rois[] unused) */
    float rois[MAX_R][4];
    int64_t batch[MAX_R];
} rcase;

static const rcase cases[] = {
    {.label = "half_pixel s=2 [1,2,8,8] out 3x3",
     .N = 1, .C = 2, .H = 8, .W = 8, .R = 3, .out_h = 3, .out_w = 3, .ratio = 2, .scale = 1.0f,
     .rois = {{1, 1, 6, 5}, {0, 0, 7, 7}, {2.5f, 3.25f, 4.75f, 7.9f}}},
    {.label = "output_half_pixel s=2 [1,2,8,8] out 3x3",
     .N = 1, .C = 2, .H = 8, .W = 8, .R = 3, .out_h = 3, .out_w = 3, .ratio = 2, .out_half = true, .scale = 1.0f,
     .rois = {{1, 1, 6, 5}, {0, 0, 7, 7}, {2.5f, 3.25f, 4.75f, 7.9f}}},
    {.label = "half_pixel s=1 [1,3,9,6] out 2x4",
     .N = 1, .C = 3, .H = 9, .W = 6, .R = 2, .out_h = 2, .out_w = 4, .ratio = 1, .scale = 1.0f,
     .rois = {{0.5f, 1.5f, 5.5f, 8.0f}, {1.2f, 0.3f, 3.9f, 4.4f}}},
    {.label = "output_half_pixel s=1 [1,3,9,6] out 2x4",
     .N = 1, .C = 3, .H = 9, .W = 6, .R = 2, .out_h = 2, .out_w = 4, .ratio = 1, .out_half = true, .scale = 1.0f,
     .rois = {{0.5f, 1.5f, 5.5f, 8.0f}, {1.2f, 0.3f, 3.9f, 4.4f}}},
    {.label = "odd sizes H=13 W=17 out 7x5 s=3 scale 0.5, two images",
     .N = 2, .C = 3, .H = 13, .W = 17, .R = 3, .out_h = 7, .out_w = 5, .ratio = 3, .scale = 0.5f,
     .rois = {{2, 4, 30, 22}, {0, 0, 33, 25}, {7.3f, 1.1f, 19.6f, 20.2f}}, .batch = {1, 0, 1}},
    {.label = "odd sizes output_half_pixel s=3 scale 0.5, two images",
     .N = 2, .C = 3, .H = 13, .W = 17, .R = 3, .out_h = 7, .out_w = 5, .ratio = 3, .out_half = true, .scale = 0.5f,
     .rois = {{2, 4, 30, 22}, {0, 0, 33, 25}, {7.3f, 1.1f, 19.6f, 20.2f}}, .batch = {1, 0, 1}},
    {.label = "rois partly and wholly outside, half_pixel s=3 [1,2,10,12] out 3x2",
     .N = 1, .C = 2, .H = 10, .W = 12, .R = 4, .out_h = 3, .out_w = 2, .ratio = 3, .scale = 1.0f,
     .rois = {{-4.2f, -3.1f, 5.3f, 6.2f}, {10.1f, 8.7f, 25.3f, 30.1f}, {-20, -20, -5, -5}, {3.3f, -2.6f, 12.4f, 4.1f}}},
    {.label = "rois partly and wholly outside, output_half_pixel s=2",
     .N = 1, .C = 2, .H = 10, .W = 12, .R = 4, .out_h = 3, .out_w = 2, .ratio = 2, .out_half = true, .scale = 1.0f,
     .rois = {{-4.2f, -3.1f, 5.3f, 6.2f}, {10.1f, 8.7f, 25.3f, 30.1f}, {-20, -20, -5, -5}, {3.3f, -2.6f, 12.4f, 4.1f}}},
    {.label = "degenerate rois half_pixel s=2 [1,2,7,9] out 2x3",
     .N = 1, .C = 2, .H = 7, .W = 9, .R = 3, .out_h = 2, .out_w = 3, .ratio = 2, .scale = 1.0f,
     .rois = {{3, 3, 3, 3}, {2.3f, 5.2f, 2.3f, 6.1f}, {6, 4, 2, 1}}},
    {.label = "degenerate rois output_half_pixel s=2",
     .N = 1, .C = 2, .H = 7, .W = 9, .R = 3, .out_h = 2, .out_w = 3, .ratio = 2, .out_half = true, .scale = 1.0f,
     .rois = {{3, 3, 3, 3}, {2.3f, 5.2f, 2.3f, 6.1f}, {6, 4, 2, 1}}},
    {.label = "random rois, two images, int32 batch_indices, s=2 out 4x6 scale 0.25",
     .N = 2, .C = 4, .H = 11, .W = 14, .R = 8, .out_h = 4, .out_w = 6, .ratio = 2, .scale = 0.25f, .b_i32 = true,
     .rand_rois = true},
    {.label = "random rois output_half_pixel s=3 out 7x7 scale 0.125",
     .N = 2, .C = 2, .H = 16, .W = 12, .R = 6, .out_h = 7, .out_w = 7, .ratio = 3, .out_half = true,
     .scale = 0.125f, .rand_rois = true},
    {.label = "batch indices outside [0, N) are clamped",
     .N = 2, .C = 2, .H = 6, .W = 5, .R = 3, .out_h = 2, .out_w = 2, .ratio = 2, .scale = 1.0f,
     .rois = {{0.5f, 0.5f, 4, 5}, {1, 1, 3, 3}, {0, 0, 5, 6}}, .batch = {5, -1, 1}},
    {.label = "defaults: out 1x1, scale 1, avg, half_pixel (s=2)",
     .N = 1, .C = 3, .H = 5, .W = 6, .R = 2, .out_h = 1, .out_w = 1, .ratio = 2, .scale = 1.0f, .defaults = true,
     .rois = {{0, 0, 6, 5}, {1.5f, 2.5f, 4, 3.5f}}},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* ---- reference ----------------------------------------------------------------------------- */

/* ONNX Runtime's bilinear sample of one [H, W] plane at (y, x), in float32. */
static float bilinear(const float *plane, int64_t H, int64_t W, float y, float x)
{
    if (y < -1.0f || y > (float)H || x < -1.0f || x > (float)W) return 0.0f;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
    if (yl >= H - 1) {
        yh = yl = H - 1;
        y = (float)yl;
    } else
        yh = yl + 1;
    if (xl >= W - 1) {
        xh = xl = W - 1;
        x = (float)xl;
    } else
        xh = xl + 1;
    float ly = y - (float)yl, lx = x - (float)xl, hy = 1.0f - ly, hx = 1.0f - lx;
    float w1 = hy * hx, w2 = hy * lx, w3 = ly * hx, w4 = ly * lx;
    return w1 * plane[yl * W + xl] + w2 * plane[yl * W + xh] + w3 * plane[yh * W + xl] + w4 * plane[yh * W + xh];
}

/* Y [R, C, oh, ow] from X, rois and batch (the batch index clamped into [0, N)). */
static void reference(const rcase *c, const float *x, const float *rois, const int64_t *batch, double *y)
{
    float offset = c->out_half ? 0.0f : 0.5f;
    int64_t s = c->ratio;
    for (int r = 0; r < c->R; r++) {
        const float *roi = rois + 4 * r;
        int64_t b = batch[r] < 0 ? 0 : batch[r] >= c->N ? c->N - 1 : batch[r];
        float start_w = roi[0] * c->scale - offset, start_h = roi[1] * c->scale - offset;
        float end_w = roi[2] * c->scale - offset, end_h = roi[3] * c->scale - offset;
        float roi_w = end_w - start_w, roi_h = end_h - start_h;
        if (c->out_half) {
            if (roi_w < 1.0f) roi_w = 1.0f;
            if (roi_h < 1.0f) roi_h = 1.0f;
        }
        float bin_h = roi_h / (float)c->out_h, bin_w = roi_w / (float)c->out_w;
        for (int64_t ch = 0; ch < c->C; ch++) {
            const float *plane = x + (b * c->C + ch) * c->H * c->W;
            for (int64_t ph = 0; ph < c->out_h; ph++)
                for (int64_t pw = 0; pw < c->out_w; pw++) {
                    float sum = 0.0f;
                    for (int64_t iy = 0; iy < s; iy++) {
                        float yy = start_h + (float)ph * bin_h + ((float)iy + 0.5f) * bin_h / (float)s;
                        for (int64_t ix = 0; ix < s; ix++) {
                            float xx = start_w + (float)pw * bin_w + ((float)ix + 0.5f) * bin_w / (float)s;
                            sum += bilinear(plane, c->H, c->W, yy, xx);
                        }
                    }
                    y[((r * c->C + ch) * c->out_h + ph) * c->out_w + pw] = (double)(sum / (float)(s * s));
                }
        }
    }
}

/* ---- building ------------------------------------------------------------------------------ */

static int64_t x_numel(const rcase *c) { return c->N * c->C * c->H * c->W; }
static int64_t y_numel(const rcase *c) { return c->R * c->C * c->out_h * c->out_w; }

/* The case's inputs: X in [-1, 1), rois (the table's or random ones around the map, in image
 * units: the map divided by scale, overhanging it by a third), batch indices as int64 and in
 * the input's type (bbuf). */
static void make_inputs(const rcase *c, float *x, float *rois, int64_t *batch, void *bbuf)
{
    uint32_t seed = 777;
    for (int64_t i = 0; i < x_numel(c); i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    for (int r = 0; r < c->R; r++) {
        for (int k = 0; k < 4; k++) {
            if (!c->rand_rois) {
                rois[4 * r + k] = c->rois[r][k];
                continue;
            }
            seed = seed * 1664525u + 1013904223u;
            float extent = (float)(k % 2 ? c->H : c->W) / c->scale;
            rois[4 * r + k] = ((float)((seed >> 8) & 0xffff) / 65536.0f * 1.66f - 0.33f) * extent;
        }
        if (c->rand_rois && rois[4 * r + 2] < rois[4 * r]) {
            float t = rois[4 * r];
            rois[4 * r] = rois[4 * r + 2], rois[4 * r + 2] = t;
        }
        if (c->rand_rois && rois[4 * r + 3] < rois[4 * r + 1]) {
            float t = rois[4 * r + 1];
            rois[4 * r + 1] = rois[4 * r + 3], rois[4 * r + 3] = t;
        }
        batch[r] = c->rand_rois ? r % c->N : c->batch[r];
        if (c->b_i32) ((int32_t *)bbuf)[r] = (int32_t)batch[r];
        else ((int64_t *)bbuf)[r] = batch[r];
    }
}

/* Adds the RoiAlign node on (x, rois, b) with the case's attributes; returns Y. */
static weft_value build(weft_graph *g, const rcase *c, weft_value x, weft_value rois, weft_value b)
{
    weft_attr attrs[6];
    int na = 0;
    attrs[na++] = attr_i("sampling_ratio", c->ratio);
    if (!c->defaults) {
        attrs[na++] = attr_s("mode", "avg");
        attrs[na++] = attr_i("output_height", c->out_h);
        attrs[na++] = attr_i("output_width", c->out_w);
        attrs[na++] = attr_f("spatial_scale", c->scale);
        attrs[na++] = attr_s("coordinate_transformation_mode", c->out_half ? "output_half_pixel" : "half_pixel");
    }
    weft_value y = -1;
    weft_status st = weft_graph_add_op(g, "RoiAlign", "roi_align", 3, VALS(x, rois, b), na, attrs, 1, &y);
    if (st != WEFT_OK) fail_msg("%s: %s", c->label, weft_last_error());
    return y;
}

static void check(const rcase *c, const float *got, const double *ref, const char *where)
{
    for (int64_t i = 0; i < y_numel(c); i++) {
        double scale = fabs(ref[i]) > 1 ? fabs(ref[i]) : 1;
        if (!(fabs((double)got[i] - ref[i]) <= TOL * scale))
            fail_msg("%s (%s): Y[%lld] = %.9g, expected %.9g", c->label, where, (long long)i, (double)got[i], ref[i]);
    }
}

/* ---- the table through the interpreter ------------------------------------------------------ */

static void reset_graph(fx *f)
{
    for (int i = 0; i < f->n_bufs; i++) weft_rt_free(f->bufs[i]);
    f->n_bufs = 0;
    weft_graph_destroy(f->g);
    f->g = NULL;
    assert_int_equal(weft_graph_create(&f->g), WEFT_OK);
}

static void test_cases_interp(void **state)
{
    fx *f = *state;
    static float xb[MAXN], rb[4 * MAX_R];
    static int64_t batch[MAX_R], bbuf[MAX_R];
    static double ref[MAXN];
    for (int k = 0; k < N_CASES; k++) {
        const rcase *c = &cases[k];
        assert_true(x_numel(c) <= MAXN && y_numel(c) <= MAXN && c->R <= MAX_R);
        reset_graph(f);
        make_inputs(c, xb, rb, batch, bbuf);
        weft_value x = fx_input(f, "x", F32, 4, SHAPE(c->N, c->C, c->H, c->W));
        weft_value rois = fx_input(f, "rois", F32, 2, SHAPE(c->R, 4));
        weft_value b = fx_input(f, "batch_indices", c->b_i32 ? I32 : I64, 1, SHAPE(c->R));
        weft_value y = build(f->g, c, x, rois, b);
        fx_assert_shape(f, y, 4, SHAPE(c->R, c->C, c->out_h, c->out_w));
        assert_int_equal(weft_graph_value_type(f->g, y), F32);
        reference(c, xb, rb, batch, ref);
        const float *got = fx_run1(f, (const void *[]){xb, rb, bbuf});
        check(c, got, ref, "interp");
        assert_int_equal(weft_tensor_pattern(fx_tensor(f, "y.sum")), WEFT_PATTERN_REDUCTION);
    }
    assert_int_equal(weft_op_find("RoiAlign")->pattern, WEFT_PATTERN_REDUCTION);
}

/* ---- the same cases through the public API (LLVM), X from a Relu ----------------------------- */

static void run_model(const rcase *c, int threads)
{
    weft_graph *g = NULL;
    weft_model *m = NULL;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    weft_value x, rois, b, xr = -1;
    assert_int_equal(weft_graph_add_input(g, "x", F32, 4, SHAPE(c->N, c->C, c->H, c->W), &x), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "rois", F32, 2, SHAPE(c->R, 4), &rois), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "batch_indices", c->b_i32 ? I32 : I64, 1, SHAPE(c->R), &b), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Relu", "relu", 1, &x, 0, NULL, 1, &xr), WEFT_OK);
    weft_value y = build(g, c, xr, rois, b);
    assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    weft_status st = weft_model_compile(g, &o, &m);
    weft_graph_destroy(g);
    if (st != WEFT_OK) fail_msg("%s: compile: %s", c->label, weft_last_error());
    static float xb[MAXN], xrelu[MAXN], rb[4 * MAX_R], yb[MAXN];
    static int64_t batch[MAX_R], bbuf[MAX_R];
    static double ref[MAXN];
    make_inputs(c, xb, rb, batch, bbuf);
    for (int64_t i = 0; i < x_numel(c); i++) xrelu[i] = xb[i] > 0 ? xb[i] : 0.0f;
    reference(c, xrelu, rb, batch, ref);
    memset(yb, 0xff, sizeof yb);
    st = weft_model_run(m, (const void *[]){xb, rb, bbuf}, (void *[]){yb});
    weft_model_destroy(m);
    if (st != WEFT_OK) fail_msg("%s: run: %s", c->label, weft_last_error());
    check(c, yb, ref, threads == 1 ? "llvm, 1 thread" : "llvm, 2 threads");
}

static void test_cases_llvm(void **state)
{
    (void)state;
    for (int k = 0; k < N_CASES; k++) {
        run_model(&cases[k], 1);
        run_model(&cases[k], 2);
    }
}

/* ---- hostile rois ---------------------------------------------------------------------------- */

/* NaN, infinite and huge roi coordinates (and a huge batch index) compute something without a
 * read out of bounds, in the interpreter and through LLVM. Rois that stay finite still match. */
static void test_hostile_rois_stay_in_bounds(void **state)
{
    fx *f = *state;
    const rcase c = {.label = "hostile", .N = 2, .C = 2, .H = 5, .W = 7, .R = 6, .out_h = 3, .out_w = 2, .ratio = 2,
                     .scale = 1.0f};
    static float xb[MAXN];
    const float rb[6 * 4] = {
        NAN,       1,         3,     4,     /* NaN start */
        1,         1,         INFINITY, INFINITY, /* infinite end */
        -INFINITY, -INFINITY, 2,     2,     /* infinite start */
        1e30f,     1e30f,     1e30f, 1e30f, /* far past the end */
        -1e30f,    -1e30f,    1e30f, 1e30f, /* around the map, with bins far larger than it */
        0,         0,         NAN,   NAN,   /* NaN end */
    };
    const int64_t bb[6] = {0, 1, INT64_MAX, INT64_MIN, 1, 0};
    for (int64_t i = 0; i < x_numel(&c); i++) xb[i] = (float)(i % 11) - 5.0f;
    weft_value x = fx_input(f, "x", F32, 4, SHAPE(c.N, c.C, c.H, c.W));
    weft_value rois = fx_input(f, "rois", F32, 2, SHAPE(c.R, 4));
    weft_value b = fx_input(f, "batch_indices", I64, 1, SHAPE(c.R));
    build(f->g, &c, x, rois, b);
    fx_run1(f, (const void *[]){xb, rb, bb});

    weft_graph *g = NULL;
    weft_model *m = NULL;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", F32, 4, SHAPE(c.N, c.C, c.H, c.W), &x), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "rois", F32, 2, SHAPE(c.R, 4), &rois), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "batch_indices", I64, 1, SHAPE(c.R), &b), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, build(g, &c, x, rois, b), "y"), WEFT_OK);
    weft_status st = weft_model_compile(g, NULL, &m);
    weft_graph_destroy(g);
    if (st != WEFT_OK) fail_msg("compile: %s", weft_last_error());
    static float yb[MAXN];
    st = weft_model_run(m, (const void *[]){xb, rb, bb}, (void *[]){yb});
    weft_model_destroy(m);
    if (st != WEFT_OK) fail_msg("run: %s", weft_last_error());
    /* rois 3 and 4 (huge but finite) sample only far outside the map: every sample adds 0 */
    int64_t per_roi = c.C * c.out_h * c.out_w;
    for (int64_t i = 3 * per_roi; i < 5 * per_roi; i++)
        if (yb[i] != 0.0f) fail_msg("huge roi: Y[%lld] = %g, expected 0", (long long)i, (double)yb[i]);
}

/* ---- errors -------------------------------------------------------------------------------- */

/* Adding RoiAlign on in with attrs must fail with want, naming the op, the node and `what`. */
static void expect_error(fx *f, const char *node, int n_in, const weft_value *in, int n_attrs, const weft_attr *attrs,
                         weft_status want, const char *what, const char *what2)
{
    weft_value out = -1;
    weft_status st = weft_graph_add_op(f->g, "RoiAlign", node, n_in, in, n_attrs, attrs, 1, &out);
    fx_assert_error(st, want, "RoiAlign", what);
    if (what2 && !strstr(weft_last_error(), what2))
        fail_msg("error '%s' does not mention '%s'", weft_last_error(), what2);
    if (!strstr(weft_last_error(), node)) fail_msg("error '%s' does not name node '%s'", weft_last_error(), node);
}

static void test_errors(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 4, SHAPE(1, 2, 8, 8));
    weft_value rois = fx_input(f, "rois", F32, 2, SHAPE(3, 4));
    weft_value b = fx_input(f, "b", I64, 1, SHAPE(3));
    const weft_value in[3] = {x, rois, b};
    const weft_attr s2 = attr_i("sampling_ratio", 2);
    /* modes and attributes */
    expect_error(f, "max", 3, in, 2, ATTRS(s2, attr_s("mode", "max")), WEFT_ERR_UNSUPPORTED, "mode='max'", "avg");
    expect_error(f, "mode", 3, in, 2, ATTRS(s2, attr_s("mode", "mean")), WEFT_ERR_INVALID_ARG, "mode='mean'", NULL);
    expect_error(f, "adaptive", 3, in, 1, ATTRS(attr_i("sampling_ratio", 0)), WEFT_ERR_UNSUPPORTED,
                 "sampling_ratio=0", "sampling_ratio > 0");
    expect_error(f, "nosr", 3, in, 0, NULL, WEFT_ERR_UNSUPPORTED, "sampling_ratio=0", "run-time rois");
    expect_error(f, "negsr", 3, in, 1, ATTRS(attr_i("sampling_ratio", -1)), WEFT_ERR_INVALID_ARG,
                 "sampling_ratio=-1", NULL);
    expect_error(f, "ctm", 3, in, 2, ATTRS(s2, attr_s("coordinate_transformation_mode", "align_corners")),
                 WEFT_ERR_INVALID_ARG, "coordinate_transformation_mode='align_corners'", "output_half_pixel");
    expect_error(f, "oh", 3, in, 2, ATTRS(s2, attr_i("output_height", 0)), WEFT_ERR_INVALID_ARG, "output_height=0",
                 NULL);
    /* shapes */
    weft_value r5 = fx_input(f, "r5", F32, 2, SHAPE(3, 5));
    expect_error(f, "rois5", 3, VALS(x, r5, b), 1, &s2, WEFT_ERR_SHAPE, "input rois", "last dim 5");
    weft_value r1 = fx_input(f, "r1", F32, 1, SHAPE(12));
    expect_error(f, "rois1", 3, VALS(x, r1, b), 1, &s2, WEFT_ERR_SHAPE, "input rois", "expected 2");
    weft_value b2 = fx_input(f, "b2", I64, 1, SHAPE(2));
    expect_error(f, "bcount", 3, VALS(x, rois, b2), 1, &s2, WEFT_ERR_SHAPE, "input batch_indices", "3 rois");
    weft_value b22 = fx_input(f, "b22", I64, 2, SHAPE(3, 1));
    expect_error(f, "brank", 3, VALS(x, rois, b22), 1, &s2, WEFT_ERR_SHAPE, "input batch_indices", NULL);
    weft_value x3 = fx_input(f, "x3", F32, 3, SHAPE(2, 8, 8));
    expect_error(f, "xrank", 3, VALS(x3, rois, b), 1, &s2, WEFT_ERR_SHAPE, "input X", "[N, C, H, W]");
    /* dtypes and arity */
    weft_value xi = fx_input(f, "xi", I64, 4, SHAPE(1, 2, 8, 8));
    expect_error(f, "xint", 3, VALS(xi, rois, b), 1, &s2, WEFT_ERR_INVALID_ARG, "input X", NULL);
    weft_value bf = fx_input(f, "bf", F32, 1, SHAPE(3));
    expect_error(f, "bfloat", 3, VALS(x, rois, bf), 1, &s2, WEFT_ERR_INVALID_ARG, "input batch_indices", NULL);
    expect_error(f, "two", 2, VALS(x, rois), 1, &s2, WEFT_ERR_INVALID_ARG, "2 inputs", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cases_interp, fx_setup, fx_teardown),
        cmocka_unit_test(test_cases_llvm),
        cmocka_unit_test_setup_teardown(test_hostile_rois_stay_in_bounds, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_errors, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests_name("ops_roi_align", tests, NULL, NULL);
}
