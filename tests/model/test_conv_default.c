/* Default schedules of convolutions and pooling (schedule/default_conv.c) against an
 * independent reference: plain C loops in double precision written here, not weft's TE.
 *
 * Each case is a one- or two-node graph (Conv with constant weights and bias, so the layout
 * pass lays the weights out in filter blocks, plus an epilogue: ReLU, Clip, SiLU or a residual
 * Add; or a pooling op), compiled with default schedules and run:
 *   - with the LLVM target at 1 and 2 threads, for the host's CPU and for haswell (AVX2: other
 *     filter blocks and register tiles) when the host can run it;
 *   - with the loop-IR interpreter (bounds-checked) for the smaller cases.
 * Shapes cover odd sizes, stride 2, padding, batch > 1, filters that do not fill a vector,
 * 1x1 kernels, 7x7 and 1x1 images (where taps that only read padding are dropped), depthwise,
 * grouped (in whole filter blocks or not), 5x5 and 7x7 kernels.
 *
 *   max |weft - ref| <= 1e-4 * max |ref|
 *
 * Pointwise convs whose planes are whole vectors, or not but with few input channels (weights
 * left unblocked; a partial last pixel tile), convs with a window over few input channels
 * (vectorized along output columns), and squeeze-excite's channel gate (x * sigmoid(FC(s)))
 * are cases too, and 3x3 convs that run as Winograd F(2x2, 3x3) (model/passes.c).
 *
 * A second test checks the schedule's shape: for AVX-512 and AVX2 caps, the kernel of a
 * blocked conv vectorizes its reduction over the filter block, pooling and depthwise kernels
 * compute their padding per channel, a global pool reduces channel vectors (a plane smaller
 * than a vector) or partial sums along its plane, a pointwise conv
 * vectorizes along its fused pixels, a stem-like conv along output columns, and a channel gate
 * computes the gate once per channel, and a Winograd conv accumulates each point's products in
 * a local copy with its input transform per spatial tile (not with too few tiles, nor with
 * WEFT_WINOGRAD=0). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/caps.h"
#include "model/model_internal.h"
#include "schedule/schedule.h"
#include "weft/graph.h"

#define REL_TOL 1e-4

typedef enum epi { EPI_NONE, EPI_RELU, EPI_CLIP, EPI_SILU, EPI_ADD } epi;
/* K_GATE: squeeze-excite's channel gate y = x * sigmoid(conv1x1(s) + b) with s [n, f, 1, 1] */
typedef enum kind { K_CONV, K_MAXPOOL, K_AVGPOOL, K_GAP, K_GATE } kind;

typedef struct conv_case {
    kind k;
    int64_t n, c, h, w, f, kh, kw, stride, pad, group;
    epi e;
    bool bias;
    int64_t dil; /* 0: 1 */
} conv_case;

static const conv_case cases[] = {
    {K_CONV, 1, 3, 17, 19, 10, 3, 3, 1, 1, 1, EPI_RELU, true, 0},   /* odd sizes, F < one vector */
    {K_CONV, 2, 8, 15, 15, 20, 3, 3, 2, 1, 1, EPI_NONE, false, 0},  /* stride 2, batch, no bias */
    {K_CONV, 1, 16, 7, 7, 48, 3, 3, 1, 1, 1, EPI_ADD, true, 0},     /* 7x7 image, residual add */
    {K_CONV, 1, 24, 9, 9, 33, 1, 1, 1, 0, 1, EPI_CLIP, true, 0},    /* 1x1 kernel, odd F */
    {K_CONV, 1, 32, 1, 1, 32, 3, 3, 1, 1, 1, EPI_RELU, true, 0},    /* 1x1 image: one tap */
    {K_CONV, 1, 16, 2, 2, 16, 3, 3, 2, 1, 1, EPI_NONE, true, 0},    /* 2x2 -> 1x1, two taps */
    {K_CONV, 4, 16, 4, 4, 32, 3, 3, 1, 1, 1, EPI_RELU, true, 0},    /* batch tile */
    {K_CONV, 1, 3, 30, 30, 16, 7, 7, 2, 3, 1, EPI_RELU, true, 0},   /* stem-like 7x7 stride 2 */
    {K_CONV, 1, 3, 9, 9, 8, 2, 2, 2, 0, 1, EPI_NONE, true, 0},      /* stride = kernel */
    {K_CONV, 1, 12, 13, 11, 12, 3, 3, 1, 1, 12, EPI_RELU, true, 0}, /* depthwise */
    {K_CONV, 1, 12, 14, 14, 12, 5, 5, 2, 2, 12, EPI_SILU, true, 0}, /* depthwise 5x5 stride 2 */
    {K_CONV, 1, 40, 20, 20, 40, 3, 3, 1, 1, 40, EPI_CLIP, true, 0}, /* depthwise, 20 columns */
    {K_CONV, 1, 32, 10, 10, 64, 3, 3, 1, 1, 2, EPI_RELU, true, 0},  /* grouped, whole blocks */
    {K_CONV, 1, 12, 9, 9, 18, 3, 3, 1, 1, 3, EPI_NONE, true, 0},    /* grouped, partial blocks */
    {K_MAXPOOL, 1, 8, 17, 17, 0, 3, 3, 2, 1, 0, EPI_NONE, false, 0},
    {K_MAXPOOL, 2, 3, 12, 12, 0, 2, 2, 2, 0, 0, EPI_RELU, false, 0},
    {K_AVGPOOL, 1, 5, 9, 12, 0, 3, 3, 1, 1, 0, EPI_NONE, false, 0}, /* count_include_pad = 0 */
    {K_AVGPOOL, 2, 4, 8, 8, 0, 2, 2, 2, 0, 0, EPI_NONE, false, 0},
    {K_GAP, 1, 20, 7, 7, 0, 0, 0, 0, 0, 0, EPI_NONE, false, 0},
    /* pointwise convs whose planes are whole vectors (16 and 8 lanes): weights left [F, C, 1, 1],
     * the reduction over fused pixels */
    {K_CONV, 1, 16, 6, 32, 24, 1, 1, 1, 0, 1, EPI_CLIP, true, 0},   /* 19: 192 pixels */
    {K_CONV, 2, 8, 3, 16, 20, 1, 1, 1, 0, 1, EPI_ADD, true, 0},     /* batch, residual, F = 20 */
    {K_CONV, 1, 12, 2, 64, 7, 1, 1, 1, 0, 1, EPI_SILU, false, 0},   /* SiLU, no bias */
    {K_CONV, 1, 6, 4, 12, 5, 1, 1, 1, 0, 1, EPI_NONE, false, 0},    /* rows of 12, planes of 48 */
    {K_GATE, 1, 40, 7, 7, 10, 1, 1, 1, 0, 1, EPI_NONE, true, 0},    /* 23: gate, 49 pixels */
    {K_GATE, 2, 24, 5, 6, 6, 1, 1, 1, 0, 1, EPI_NONE, true, 0},     /* batch 2 */
    {K_GATE, 1, 16, 1, 3, 4, 1, 1, 1, 0, 1, EPI_NONE, true, 0},     /* 3 pixels */
    {K_GAP, 1, 20, 5, 40, 0, 0, 0, 0, 0, 0, EPI_NONE, false, 0},    /* 26: rows of 40: partial sums */
    {K_GAP, 2, 8, 3, 16, 0, 0, 0, 0, 0, 0, EPI_NONE, false, 0},     /* batch, one vector per row */
    /* batch 3 with 13x13 and 7x7 images, odd channel counts, padding (a padding row of 15 or 17
     * columns: the masked-load read of targets/llvm/vector.c), stride 1 and 2 */
    {K_CONV, 3, 5, 13, 13, 7, 3, 3, 1, 1, 1, EPI_RELU, true, 0},    /* 28 */
    {K_CONV, 3, 7, 13, 13, 17, 3, 3, 2, 1, 1, EPI_CLIP, true, 0},
    {K_CONV, 3, 9, 13, 13, 9, 5, 5, 1, 2, 9, EPI_RELU, true, 0},    /* depthwise 5x5, pad 2 */
    {K_CONV, 3, 11, 7, 7, 11, 3, 3, 2, 1, 11, EPI_NONE, true, 0},   /* depthwise stride 2 */
    {K_MAXPOOL, 3, 5, 7, 7, 0, 3, 3, 1, 1, 0, EPI_NONE, false, 0},  /* fill: the lowest float */
    {K_AVGPOOL, 3, 3, 13, 13, 0, 3, 3, 2, 1, 0, EPI_NONE, false, 0},
    /* pointwise convs over planes that are not whole vectors, with few input channels: over
     * pixels too, the last pixel tile partial (AVX-512: 1089 = 68 x 16 + 1; 81 = 5 x 16 + 1) */
    {K_CONV, 1, 16, 33, 33, 8, 1, 1, 1, 0, 1, EPI_SILU, true, 0},   /* 34: 1089 pixels */
    {K_CONV, 2, 24, 9, 9, 20, 1, 1, 1, 0, 1, EPI_ADD, true, 0},     /* batch, residual, 81 pixels */
    {K_CONV, 1, 96, 9, 9, 24, 1, 1, 1, 0, 1, EPI_NONE, true, 0},    /* 36: 96 channels: blocked */
    {K_GAP, 2, 20, 2, 3, 0, 0, 0, 0, 0, 0, EPI_NONE, false, 0},     /* 37: plane of 6 < a vector */
    /* convs with a window over 2-4 input channels (stems): weights left [F, C, KH, KW], the
     * reduction over output columns in vectors (a partial last vector: 23, 36 and 17 columns) */
    {K_CONV, 1, 3, 45, 45, 12, 3, 3, 2, 1, 1, EPI_SILU, true, 0},   /* 38: stride 2, SiLU */
    {K_CONV, 2, 4, 20, 36, 8, 5, 5, 1, 2, 1, EPI_ADD, true, 0},     /* batch, 5x5, residual */
    {K_CONV, 1, 2, 34, 34, 16, 7, 7, 2, 3, 1, EPI_RELU, false, 0},  /* 7x7 stride 2, no bias */
    {K_CONV, 1, 3, 32, 32, 6, 3, 3, 1, 1, 1, EPI_CLIP, true, 0},    /* 41: whole vectors of columns */
    /* depthwise over planes narrower than a vector: the whole plane one tile (rows of 7 and
     * 14 columns), the epilogue over the flat plane; with a column stride rows in 8-lane
     * vectors (the last lanes masked), rows in balanced tiles */
    {K_CONV, 1, 24, 7, 7, 24, 5, 5, 1, 2, 24, EPI_SILU, true, 0},   /* 42 */
    {K_CONV, 2, 10, 14, 14, 10, 3, 3, 1, 1, 10, EPI_RELU, true, 0},
    {K_CONV, 1, 12, 14, 14, 12, 5, 5, 2, 2, 12, EPI_SILU, true, 0}, /* 44: 7x7 out, stride 2 */
    {K_CONV, 1, 8, 5, 5, 8, 3, 3, 1, 1, 8, EPI_NONE, false, 0},      /* 5x5 plane, no epilogue */
    /* 3x3 stride-1 convs with 16+ channels and 16+ 2x2 tiles: Winograd F(2x2, 3x3) (too few 4x4
     * tiles for F(4x4, 3x3); odd
     * planes: a last half tile; channels and filters that do not fill vectors; a batch of
     * 4x4 images; no padding) */
    {K_CONV, 2, 16, 13, 11, 32, 3, 3, 1, 1, 1, EPI_RELU, true, 0},  /* 46 */
    {K_CONV, 1, 20, 16, 16, 40, 3, 3, 1, 1, 1, EPI_ADD, true, 0},
    {K_CONV, 8, 32, 4, 4, 32, 3, 3, 1, 1, 1, EPI_NONE, false, 0},
    {K_CONV, 1, 16, 18, 18, 48, 3, 3, 1, 0, 1, EPI_CLIP, true, 0},
    {K_CONV, 1, 64, 6, 6, 64, 3, 3, 1, 1, 1, EPI_SILU, true, 0},    /* 50: 9 tiles: direct */
    /* F(4x4, 3x3): enough 4x4 tiles (partial ones: 27 = 6 x 4 + 3 rows, 29 = 7 x 4 + 1 columns) */
    {K_CONV, 2, 16, 16, 16, 32, 3, 3, 1, 1, 1, EPI_RELU, true, 0},  /* 51 */
    {K_CONV, 1, 24, 27, 29, 48, 3, 3, 1, 1, 1, EPI_ADD, true, 0},
    {K_CONV, 32, 16, 4, 4, 32, 3, 3, 1, 1, 1, EPI_NONE, false, 0},  /* one tile per image */
    /* dilated convs (an ASPP's): outer taps that read only padding for every output are cut
     * (model/passes.c, conv_dead_taps); images large enough that the taps left mostly reach
     * the image (else the conv is split in bands: cases 61-63) */
    {K_CONV, 1, 32, 4, 4, 48, 3, 3, 1, 12, 1, EPI_RELU, true, 12}, /* 54: the centre tap only */
    {K_CONV, 1, 8, 5, 30, 16, 3, 3, 1, 6, 1, EPI_CLIP, true, 6},   /* one row of taps, dilated columns */
    {K_CONV, 1, 8, 3, 3, 8, 3, 3, 2, 3, 1, EPI_NONE, true, 3},     /* stride 2: one tap */
    {K_CONV, 2, 16, 24, 24, 24, 3, 3, 1, 4, 1, EPI_NONE, true, 4}, /* every tap reads the image */
    /* groups of 8 filters (RegNet's group width): blocks of 8 even on 16-lane vectors */
    {K_CONV, 1, 48, 15, 15, 48, 3, 3, 2, 1, 6, EPI_RELU, true, 0}, /* 58 */
    /* pointwise over whole pixel vectors: 1024 input channels blocked, 64 over pixels */
    {K_CONV, 1, 1024, 4, 4, 32, 1, 1, 1, 0, 1, EPI_RELU, true, 0}, /* 59 */
    {K_CONV, 1, 64, 4, 4, 32, 1, 1, 1, 0, 1, EPI_RELU, true, 0},   /* 60 */
    /* dilated convs whose taps read mostly padding: one conv per band of rows and columns */
    {K_CONV, 1, 16, 13, 13, 16, 3, 3, 1, 6, 1, EPI_RELU, true, 6}, /* 61: 3 x 3 bands */
    {K_CONV, 2, 12, 9, 11, 20, 3, 3, 1, 4, 1, EPI_ADD, true, 4},   /* 62: batch, residual */
    {K_CONV, 1, 16, 10, 10, 16, 3, 3, 1, 5, 4, EPI_NONE, true, 5}, /* 63: grouped, 2 x 2 bands */
    /* pointwise over 1024 pixels, 40 filters (no whole number of 6- or 8-filter tiles): the
     * packed-panel form, residual epilogue */
    {K_CONV, 1, 32, 32, 32, 40, 1, 1, 1, 0, 1, EPI_ADD, true, 0}, /* 64 */
    /* a 2x2 kernel (a sub-pixel ConvTranspose's conv): blocked, taps along x */
    {K_CONV, 1, 16, 12, 12, 32, 2, 2, 1, 1, 1, EPI_RELU, true, 0}, /* 65 */
    /* pointwise over 7x7 planes with many input channels: blocked, register tiles along the
     * fused pixels (49 = 8 x 6 + 1 with AVX2), batch, residual */
    {K_CONV, 2, 96, 7, 7, 40, 1, 1, 1, 0, 1, EPI_ADD, true, 0}, /* 66 */
    /* pointwise over pixel panels of an 18-column plane (a panel's rows are not whole vectors) */
    {K_CONV, 1, 32, 24, 18, 40, 1, 1, 1, 0, 1, EPI_RELU, true, 0}, /* 67 */
};

static bool has_knob_value(const weft_knob_space *ks, int i, int64_t v)
{
    for (int j = 0; j < ks->n_values[i]; j++)
        if (ks->values[i][j] == v) return true;
    return false;
}

static uint64_t rng_state;
static float frand(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(rng_state >> 40) / (double)(1ULL << 24) * 2.0 - 1.0);
}

static float *random_buf(size_t n)
{
    float *p = malloc(n * sizeof(float) + 4);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) p[i] = frand();
    return p;
}

static int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d)
{
    return (in + 2 * p - ((k - 1) * (d ? d : 1) + 1)) / s + 1;
}

static double apply_epi(epi e, double v, double res)
{
    switch (e) {
    case EPI_RELU: return v > 0 ? v : 0;
    case EPI_CLIP: return v < 0 ? 0 : v > 6 ? 6 : v;
    case EPI_SILU: return v / (1 + exp(-v));
    case EPI_ADD: return v + res;
    default: return v;
    }
}

/* The reference output of case t (y has the output's shape; res is s for K_GATE). */
static void reference(const conv_case *t, const float *x, const float *wt, const float *b, const float *res,
                      int64_t oh, int64_t ow, double *y)
{
    if (t->k == K_GATE) {
        for (int64_t n = 0; n < t->n; n++)
            for (int64_t c = 0; c < t->c; c++) {
                double z = b[c];
                for (int64_t k = 0; k < t->f; k++) z += (double)wt[c * t->f + k] * res[n * t->f + k];
                double gate = 1 / (1 + exp(-z));
                for (int64_t p = 0; p < t->h * t->w; p++)
                    y[(n * t->c + c) * t->h * t->w + p] = x[(n * t->c + c) * t->h * t->w + p] * gate;
            }
        return;
    }
    int64_t oc = t->k == K_CONV ? t->f : t->c;
    for (int64_t n = 0; n < t->n; n++)
        for (int64_t f = 0; f < oc; f++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    double acc = t->k == K_MAXPOOL ? -INFINITY : 0;
                    int64_t cnt = 0, cpg = t->k == K_CONV ? t->c / t->group : 1, fpg = t->k == K_CONV ? t->f / t->group : 1;
                    int64_t kh = t->k == K_GAP ? t->h : t->kh, kw = t->k == K_GAP ? t->w : t->kw;
                    for (int64_t rc = 0; rc < cpg; rc++)
                        for (int64_t ry = 0; ry < kh; ry++)
                            for (int64_t rx = 0; rx < kw; rx++) {
                                int64_t d = t->dil ? t->dil : 1;
                                int64_t iy = oy * t->stride + ry * d - t->pad, ix = ox * t->stride + rx * d - t->pad;
                                if (t->k == K_GAP) iy = ry, ix = rx;
                                if (iy < 0 || iy >= t->h || ix < 0 || ix >= t->w) continue;
                                int64_t c = t->k == K_CONV ? (f / fpg) * cpg + rc : f;
                                double v = x[((n * t->c + c) * t->h + iy) * t->w + ix];
                                if (t->k == K_CONV) acc += v * wt[((f * cpg + rc) * kh + ry) * kw + rx];
                                else if (t->k == K_MAXPOOL) acc = v > acc ? v : acc;
                                else acc += v, cnt++;
                            }
                    if (t->k == K_CONV && t->bias) acc += b[f];
                    if (t->k == K_AVGPOOL || t->k == K_GAP) acc /= (double)cnt;
                    size_t o = (size_t)(((n * oc + f) * oh + oy) * ow + ox);
                    y[o] = apply_epi(t->e, acc, res ? res[o] : 0);
                }
}

/* Builds the graph of case t; *out_shape receives the output's shape. */
static weft_graph *build(const conv_case *t, const float *wt, const float *b, int64_t *out_shape)
{
    weft_graph *g = NULL;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    weft_value x, y, w = -1, bias = -1, res = -1;
    int64_t xs[4] = {t->n, t->c, t->h, t->w};
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, xs, &x), WEFT_OK);
    int64_t strides[2] = {t->stride, t->stride}, pads[4] = {t->pad, t->pad, t->pad, t->pad}, ks[2] = {t->kh, t->kw};
    int64_t dil[2] = {t->dil ? t->dil : 1, t->dil ? t->dil : 1};
    weft_attr attrs[5] = {
        {.name = "strides", .kind = WEFT_ATTR_INTS, .n = 2, .ints = strides},
        {.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = pads},
        {.name = "kernel_shape", .kind = WEFT_ATTR_INTS, .n = 2, .ints = ks},
        {.name = "group", .kind = WEFT_ATTR_INT, .i = t->group},
        {.name = "dilations", .kind = WEFT_ATTR_INTS, .n = 2, .ints = dil},
    };
    weft_status rc;
    if (t->k == K_CONV) {
        int64_t ws[4] = {t->f, t->c / t->group, t->kh, t->kw};
        assert_int_equal(weft_graph_add_constant(g, "w", WEFT_TYPE_FLOAT32, 4, ws, wt, &w), WEFT_OK);
        if (t->bias) assert_int_equal(weft_graph_add_constant(g, "b", WEFT_TYPE_FLOAT32, 1, &t->f, b, &bias), WEFT_OK);
        rc = weft_graph_add_op(g, "Conv", "conv", 3, (weft_value[]){x, w, bias}, 5, attrs, 1, &y);
    } else if (t->k == K_GAP) {
        rc = weft_graph_add_op(g, "GlobalAveragePool", "gap", 1, &x, 0, NULL, 1, &y);
    } else if (t->k == K_GATE) {
        int64_t ss[4] = {t->n, t->f, 1, 1}, ws[4] = {t->c, t->f, 1, 1};
        weft_value sq, z, gate;
        assert_int_equal(weft_graph_add_input(g, "s", WEFT_TYPE_FLOAT32, 4, ss, &sq), WEFT_OK);
        assert_int_equal(weft_graph_add_constant(g, "w", WEFT_TYPE_FLOAT32, 4, ws, wt, &w), WEFT_OK);
        assert_int_equal(weft_graph_add_constant(g, "b", WEFT_TYPE_FLOAT32, 1, &t->c, b, &bias), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Conv", "fc", 3, (weft_value[]){sq, w, bias}, 0, NULL, 1, &z), WEFT_OK);
        assert_int_equal(weft_graph_unary(g, "Sigmoid", z, &gate), WEFT_OK);
        rc = weft_graph_binary(g, "Mul", x, gate, &y);
    } else {
        rc = weft_graph_add_op(g, t->k == K_MAXPOOL ? "MaxPool" : "AveragePool", "pool", 1, &x, 3, attrs, 1, &y);
    }
    assert_int_equal(rc, WEFT_OK);
    assert_int_equal(weft_graph_value_shape(g, y, out_shape), 4);
    if (t->e == EPI_ADD) {
        assert_int_equal(weft_graph_add_input(g, "res", WEFT_TYPE_FLOAT32, 4, out_shape, &res), WEFT_OK);
        assert_int_equal(weft_graph_binary(g, "Add", y, res, &y), WEFT_OK);
    } else if (t->e == EPI_RELU) {
        assert_int_equal(weft_graph_unary(g, "Relu", y, &y), WEFT_OK);
    } else if (t->e == EPI_SILU) {
        weft_value s;
        assert_int_equal(weft_graph_unary(g, "Sigmoid", y, &s), WEFT_OK);
        assert_int_equal(weft_graph_binary(g, "Mul", y, s, &y), WEFT_OK);
    } else if (t->e == EPI_CLIP) {
        float lo = 0, hi = 6;
        weft_value vlo, vhi;
        assert_int_equal(weft_graph_add_constant(g, "lo", WEFT_TYPE_FLOAT32, 0, NULL, &lo, &vlo), WEFT_OK);
        assert_int_equal(weft_graph_add_constant(g, "hi", WEFT_TYPE_FLOAT32, 0, NULL, &hi, &vhi), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Clip", "clip", 3, (weft_value[]){y, vlo, vhi}, 0, NULL, 1, &y), WEFT_OK);
    }
    assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
    return g;
}

static void run_case(const conv_case *t, const char *target, int threads)
{
    rng_state = 12345 + (uint64_t)(t - cases);
    size_t nx = (size_t)(t->n * t->c * t->h * t->w);
    size_t nw = t->k == K_CONV ? (size_t)(t->f * (t->c / t->group) * t->kh * t->kw) : t->k == K_GATE ? (size_t)(t->c * t->f) : 1;
    float *x = random_buf(nx), *wt = random_buf(nw), *b = random_buf(t->k == K_CONV ? (size_t)t->f : (size_t)t->c);
    int64_t os[8];
    weft_graph *g = build(t, wt, b, os);
    int64_t oh = t->k == K_GAP ? 1 : out_extent(t->h, t->kh, t->stride, t->pad, t->dil);
    int64_t ow = t->k == K_GAP ? 1 : out_extent(t->w, t->kw, t->stride, t->pad, t->dil);
    assert_int_equal(os[2], oh);
    assert_int_equal(os[3], ow);
    size_t ny = (size_t)(os[0] * os[1] * os[2] * os[3]);
    float *res = t->e == EPI_ADD ? random_buf(ny) : t->k == K_GATE ? random_buf((size_t)(t->n * t->f)) : NULL;
    float *y = malloc(ny * sizeof(float) + 4);
    double *ref = malloc(ny * sizeof(double) + 8);
    assert_non_null(y);
    assert_non_null(ref);
    reference(t, x, wt, b, res, oh, ow, ref);
    double mx = 0;
    for (size_t i = 0; i < ny; i++) mx = fmax(mx, fabs(ref[i]));
    assert_true(mx > 0);

    weft_model *m = NULL;
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    o.target = target;
    weft_status rc = weft_model_compile(g, &o, &m);
    if (rc != WEFT_OK) print_error("case %d (%s): %s\n", (int)(t - cases), target, weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    const void *ins[2] = {x, res};
    assert_int_equal(weft_model_run(m, ins, (void *[]){y}), WEFT_OK);
    double err = 0;
    for (size_t i = 0; i < ny; i++) err = fmax(err, fabs(y[i] - ref[i]));
    if (err > REL_TOL * mx)
        print_error("case %d (%s, %d threads, WEFT_CPU=%s): max err %g, max |ref| %g\n", (int)(t - cases), target,
                    threads, getenv("WEFT_CPU") ? getenv("WEFT_CPU") : "host", err, mx);
    assert_true(err <= REL_TOL * mx);
    weft_model_destroy(m);
    weft_graph_destroy(g);
    free(x), free(wt), free(b), free(res), free(y), free(ref);
}

static bool host_has(const char *feat)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) found = strstr(line, feat) != NULL;
    fclose(f);
    return found;
}

static void test_conv_and_pool_default_schedules_match_reference(void **state)
{
    (void)state;
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++)
        for (int threads = 1; threads <= 2; threads++) run_case(&cases[i], "llvm", threads);
    if (host_has(" avx2") && host_has(" fma")) {
        const char *prev = getenv("WEFT_CPU");
        char *saved = prev ? strdup(prev) : NULL;
        setenv("WEFT_CPU", "haswell", 1);
        for (size_t i = 0; i < n; i++) run_case(&cases[i], "llvm", 2);
        if (saved) setenv("WEFT_CPU", saved, 1);
        else unsetenv("WEFT_CPU");
        free(saved);
    }
}

static void test_conv_and_pool_default_schedules_match_reference_interp(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (cases[i].n * cases[i].c * cases[i].h * cases[i].w * (cases[i].k == K_CONV ? cases[i].f / cases[i].group : 1) <=
            40000)
            run_case(&cases[i], "interp", 1);
}

/* ---- the schedule's shape ---------------------------------------------------------------- */

typedef struct sched_probe {
    const weft_target_caps *caps;
    char text[8192];
    int kernels;
    weft_knob_space ks;     /* the kernel's knob space */
    char knob_text[8192];   /* the schedule for knobs (tf, tx) = (2, one vector) (conv_pixels) or
                             * (tf, ty) = (2, 1) (conv_columns) */
    weft_status knob_rc;    /* of applying those knobs */
    weft_status bad_rc;     /* of knobs (tf, tx) = (2, 3): tx not a multiple of the vector width;
                             * (tf, ty) = (5, 1): 5 does not divide F */
    int64_t wshape[5];      /* the kernel's weight input (after the layout passes; a blocked
                             * layout [F/fb, C, KH, KW, fb] has 5 dims) */
} sched_probe;

static weft_status probe_kernel(void *ud, weft_arena *a, weft_te_func *f, const char *name)
{
    (void)name;
    sched_probe *p = ud;
    weft_schedule *s = NULL;
    for (int i = 1; i < f->n_inputs; i++) /* the conv's weight: the last input of 4 or 5 dims */
        if (f->inputs[i]->ndim == 4 || f->inputs[i]->ndim == 5) {
            memset(p->wshape, 0, sizeof p->wshape);
            memcpy(p->wshape, f->inputs[i]->shape, sizeof(int64_t) * (size_t)f->inputs[i]->ndim);
        }
    weft_status rc = weft_schedule_create(f, &s);
    if (rc == WEFT_OK) rc = weft_schedule_default(s, p->caps);
    char *text = rc == WEFT_OK ? weft_schedule_text(s) : NULL;
    if (text) snprintf(p->text, sizeof p->text, "%s", text);
    free(text);
    p->kernels++;
    weft_schedule_destroy(s);
    s = NULL;
    if (rc == WEFT_OK) rc = weft_schedule_knob_space(f, p->caps, &p->ks);
    bool pixels = rc == WEFT_OK && !strcmp(p->ks.rule, "conv_pixels");
    if (pixels || (rc == WEFT_OK && !strcmp(p->ks.rule, "conv_columns"))) {
        /* conv_pixels (tf, tx), conv_columns (tf, ty): 5 filters divide none of the cases' */
        int64_t good[2] = {2, pixels ? p->caps->vector_lanes_f32 : 1}, bad[2] = {pixels ? 2 : 5, pixels ? 3 : 1};
        assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
        p->knob_rc = weft_schedule_default_knobs(s, p->caps, 2, good);
        text = p->knob_rc == WEFT_OK ? weft_schedule_text(s) : NULL;
        if (text) snprintf(p->knob_text, sizeof p->knob_text, "%s", text);
        free(text);
        weft_schedule_destroy(s);
        assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
        p->bad_rc = weft_schedule_default_knobs(s, p->caps, 2, bad);
        weft_schedule_destroy(s);
    }
    weft_arena_destroy(a);
    return rc;
}

static void schedule_of(const conv_case *t, const weft_target_caps *caps, sched_probe *p)
{
    rng_state = 7;
    size_t nw = t->k == K_CONV ? (size_t)(t->f * (t->c / t->group) * t->kh * t->kw) : t->k == K_GATE ? (size_t)(t->c * t->f) : 1;
    float *wt = random_buf(nw), *b = random_buf(t->k == K_CONV ? (size_t)t->f : (size_t)t->c);
    int64_t os[8];
    weft_graph *g = build(t, wt, b, os);
    memset(p, 0, sizeof *p);
    p->caps = caps;
    assert_int_equal(weft_model_each_kernel(g, caps, probe_kernel, p), WEFT_OK);
    assert_int_equal(p->kernels, 1);
    weft_graph_destroy(g);
    free(wt), free(b);
}

static void test_default_schedule_shapes(void **state)
{
    (void)state;
    const int bits[2] = {512, 256};
    for (int k = 0; k < 2; k++) {
        weft_target_caps caps = weft_caps_cpu(bits[k], 2);
        sched_probe p;
        /* dilated convs: the taps that read only padding are gone from the weights; a single
         * tap left is a pointwise conv and takes that form */
        schedule_of(&cases[54], &caps, &p);
        assert_string_equal(p.ks.rule, "conv_pixels");
        assert_true(p.wshape[0] == 48 && p.wshape[1] == 32 && p.wshape[2] == 1 && p.wshape[3] == 1);
        const int64_t taps[3][3] = {{55, 1, 3}, {56, 1, 1}, {57, 3, 3}}; /* case, KH, KW left */
        for (int i = 0; i < 3; i++) {
            schedule_of(&cases[taps[i][0]], &caps, &p);
            if (p.wshape[2] != taps[i][1] || p.wshape[3] != taps[i][2])
                fail_msg("case %d: weight [%lld, %lld, %lld, %lld, %lld], expected %lldx%lld taps", (int)taps[i][0],
                         (long long)p.wshape[0], (long long)p.wshape[1], (long long)p.wshape[2],
                         (long long)p.wshape[3], (long long)p.wshape[4], (long long)taps[i][1], (long long)taps[i][2]);
        }
        /* groups of 8 filters: laid out in blocks of 8 (one group each) at both widths */
        schedule_of(&cases[58], &caps, &p);
        assert_true(p.wshape[0] == 6 && p.wshape[4] == 8);
        /* a pointwise conv reducing over 1024 channels is blocked (the pixel rule does not block
         * its reduction), over 64 it runs over pixels */
        schedule_of(&cases[59], &caps, &p);
        assert_non_null(strstr(p.text, "vectorize conv0.red fi"));
        schedule_of(&cases[60], &caps, &p);
        assert_non_null(strstr(p.text, "vectorize conv0.red p.1"));
        /* blocked conv: the reduction vectorized over the filter block, the padding at root */
        schedule_of(&cases[1], &caps, &p);
        assert_non_null(strstr(p.text, "vectorize conv0.red fi"));
        assert_non_null(strstr(p.text, "parallel conv0.pad"));
        assert_null(strstr(p.text, "compute_inline conv0.pad"));
        /* depthwise and pooling: the padding computed per tile, columns vectorized */
        schedule_of(&cases[9], &caps, &p);
        assert_non_null(strstr(p.text, "compute_at conv0.pad"));
        assert_non_null(strstr(p.text, "compute_at conv0.red"));
        schedule_of(&cases[14], &caps, &p);
        assert_non_null(strstr(p.text, "cache_write"));
        assert_non_null(strstr(p.text, "compute_at maxpool0.pad"));
        /* global pool over a plane smaller than a vector: channels in vectors, the plane's
         * reduction outside them */
        schedule_of(&cases[37], &caps, &p);
        assert_non_null(strstr(p.text, "vectorize globalaveragepool0.red c.1"));
        /* over a plane of a vector or more, its rows shorter (7x7) or not (5x40): the plane is
         * one reduction axis p, summed in vector partial sums along it */
        for (int ci = 18; ci <= 26; ci += 8) {
            schedule_of(&cases[ci], &caps, &p);
            assert_non_null(strstr(p.text, "rfactor globalaveragepool0.red p.1"));
            assert_non_null(strstr(p.text, "vectorize globalaveragepool0.red.rf p.1"));
            /* per channel inside one parallel loop: partial sums, then summed across lanes */
            assert_non_null(strstr(p.text, "compute_at globalaveragepool0.red.rf globalaveragepool0.red n@c"));
            assert_non_null(strstr(p.text, "vectorize globalaveragepool0.red p.1"));
            assert_non_null(strstr(p.text, "compute_at globalaveragepool0.red globalaveragepool0 n@c@h@w"));
            /* partial sums in one vector over 49, in 4 (AVX2) or 2 (AVX-512) over 200: the
             * independent add chains of a long plane */
            char split[64];
            snprintf(split, sizeof split, "split globalaveragepool0.red p %d\n", ci == 18 ? bits[k] / 32 : 32);
            if (!strstr(p.text, split)) fail_msg("case %d, %d bits: no '%s' in\n%s", ci, bits[k], split, p.text);
        }
        /* pointwise conv over pixels: unblocked weights, the reduction over the fused pixels
         * p and the write-back in vectors of them, filters unrolled */
        char want[64];
        schedule_of(&cases[19], &caps, &p);
        snprintf(want, sizeof want, "split conv0.red p %d", bits[k] / 32);
        assert_non_null(strstr(p.text, want));
        assert_non_null(strstr(p.text, "vectorize conv0.red p.1"));
        assert_non_null(strstr(p.text, "unroll conv0.red f"));
        assert_non_null(strstr(p.text, "fuse clip1 h w"));
        assert_null(strstr(p.text, " fi"));
        /* its knobs: tf filters x tx pixels, the tuner's candidates; tx must be whole vectors */
        assert_string_equal(p.ks.rule, "conv_pixels");
        assert_int_equal(p.ks.n, 2);
        assert_int_equal(p.knob_rc, WEFT_OK);
        assert_non_null(strstr(p.knob_text, "split clip1 c 2"));
        assert_null(strstr(p.knob_text, "unroll conv0.red p.0"));
        assert_int_equal(p.bad_rc, WEFT_ERR_INVALID_ARG);
        /* over a plane of several panels per thread: the packed matmul's form, filters as its
         * rows, each panel's input channels packed once and read by every filter tile */
        schedule_of(&cases[64], &caps, &p);
        assert_non_null(strstr(p.text, "cache_read in0 local conv0.red"));
        assert_non_null(strstr(p.text, "compute_at in0.local add1 n@h@w.0"));
        assert_non_null(strstr(p.text, "split add1 c ")); /* filter tiles of the register tile's rows */
        assert_non_null(strstr(p.text, "compute_at conv0.red add1 h@w.1"));
        /* taps along x: the tile leaves a register per column for the broadcasts LLVM shares
         * between neighbouring taps (AVX2: 2 filter vectors x 5 columns, not x 6) */
        schedule_of(&cases[65], &caps, &p);
        assert_non_null(strstr(p.text, "vectorize conv0.red fi"));
        if (!strstr(p.text, bits[k] == 256 ? "split relu1 w 5\n" : "split relu1 w 8\n"))
            fail_msg("%d bits: the 2x2 conv's tile:\n%s", bits[k], p.text);
        /* planes of odd size: over pixels with few input channels (a partial last tile),
         * blocked with many */
        schedule_of(&cases[34], &caps, &p);
        assert_non_null(strstr(p.text, "vectorize conv0.red p.1"));
        assert_null(strstr(p.text, " fi"));
        assert_string_equal(p.ks.rule, "conv_pixels");
        assert_int_equal(p.knob_rc, WEFT_OK);
        schedule_of(&cases[36], &caps, &p);
        assert_non_null(strstr(p.text, "vectorize conv0.red fi"));
        /* blocked pointwise convs tile the fused pixels, not the 7- or 9-column rows (a tile
         * of 6 columns computed 12 for 7) */
        assert_non_null(strstr(p.text, "fuse conv0 y x"));
        schedule_of(&cases[66], &caps, &p); /* 49 pixels in 4 tiles of 13 (AVX-512), 5 of 10 (AVX2) */
        assert_non_null(strstr(p.text, "vectorize conv0.red fi"));
        assert_non_null(strstr(p.text, "fuse add1 h w"));
        if (!strstr(p.text, bits[k] == 512 ? "split add1 h@w 13\n" : "split add1 h@w 10\n"))
            fail_msg("%d bits: the pointwise conv's tile:\n%s", bits[k], p.text);
        schedule_of(&cases[67], &caps, &p); /* AVX2: pixel panels of 72 over 18-column rows */
        if (bits[k] == 256) assert_non_null(strstr(p.text, "cache_read in0 local conv0.red"));
        /* depthwise over 20 columns: with AVX2's 16 registers two vectors of columns (a
         * masked tail) by 4 rows, 8 accumulators; with AVX-512 the divisor rule (20 columns) */
        schedule_of(&cases[11], &caps, &p);
        assert_true((strstr(p.text, "split clip1 w 16") != NULL) == (bits[k] == 256));
        /* with AVX-512 two tiles of 10 columns (a tie with one of 20 goes to the narrower: a
         * <20 x float> accumulator is split and shuffled unless the window loops unroll) */
        assert_true((strstr(p.text, "split clip1 w 10") != NULL) == (bits[k] == 512));
        /* depthwise over a 7x7 plane: one tile, the epilogue over the flat plane in whole
         * vectors; with stride 2, 8-lane rows, not <7 x float> */
        schedule_of(&cases[42], &caps, &p);
        assert_non_null(strstr(p.text, "fuse mul2 h w"));
        snprintf(want, sizeof want, "split mul2 h@w %d", bits[k] / 32);
        assert_non_null(strstr(p.text, want));
        assert_string_equal(p.ks.rule, "window"); /* both defaults are knob values */
        assert_true(has_knob_value(&p.ks, 0, 7) && has_knob_value(&p.ks, 0, 8) && has_knob_value(&p.ks, 1, 7));
        schedule_of(&cases[44], &caps, &p);
        assert_non_null(strstr(p.text, "split mul2 w 8"));
        assert_null(strstr(p.text, "fuse mul2 h w"));
        schedule_of(&cases[43], &caps, &p); /* 14x14: the whole plane with AVX-512's 32 registers */
        assert_true(has_knob_value(&p.ks, 1, 14) == (bits[k] == 512));
        assert_true((strstr(p.text, "fuse relu1 h w") != NULL) == (bits[k] == 512));
        /* a window over 3 input channels: over output columns (filters and rows unrolled, the
         * padding at root, split by phase for stride 2); its knobs tf x ty, within the registers */
        for (int ci = 38; ci <= 41; ci += 3) {
            schedule_of(&cases[ci], &caps, &p);
            assert_non_null(strstr(p.text, "vectorize conv0.red x"));
            assert_non_null(strstr(p.text, "parallel conv0.pad"));
            assert_non_null(strstr(p.text, "unroll conv0.red f"));
            assert_null(strstr(p.text, " fi"));
            assert_string_equal(p.ks.rule, "conv_columns");
            assert_int_equal(p.ks.n, 2);
            assert_int_equal(p.knob_rc, WEFT_OK);
            assert_non_null(strstr(p.knob_text, " c 2")); /* the filters split by tf */
            assert_int_equal(p.bad_rc, WEFT_ERR_INVALID_ARG);
        }
        /* channel gate: the FC and the sigmoid once per channel in vectors, the scale over the
         * fused pixels of each channel */
        /* Winograd: the products per point into a local copy, the input transform per spatial
         * tile; too few tiles (case 50) or WEFT_WINOGRAD=0: direct */
        schedule_of(&cases[46], &caps, &p);
        assert_non_null(strstr(p.text, "cache_write conv0.red local"));
        assert_non_null(strstr(p.text, "compute_at conv0.wino conv0.red n.0"));
        assert_non_null(strstr(p.text, "vectorize conv0.red.local fi"));
        assert_non_null(strstr(p.text, "unroll conv0.wino e1"));
        /* F(2x2, 3x3): rows and columns split into 2x2 tiles (of a tile loop or of the axis),
         * the rows and columns within a tile unrolled */
        assert_true(strstr(p.text, "split relu1 w 2") || strstr(p.text, "split relu1 w.1 2"));
        assert_non_null(strstr(p.text, "unroll relu1 w.1"));
        assert_null(strstr(p.text, "relu1 h 4\n") || strstr(p.text, "relu1 h.1 4\n"));
        schedule_of(&cases[51], &caps, &p); /* F(4x4, 3x3): 4x4 tiles */
        assert_true(strstr(p.text, "split relu1 h 4\n") || strstr(p.text, "split relu1 h.1 4\n"));
        assert_non_null(strstr(p.text, "unroll relu1 h.1"));
        assert_non_null(strstr(p.text, "compute_at conv0.wino conv0.red n.0"));
        /* more filters than tiles (48 for 16 tiles of 2x2): the input transform once, in
         * parallel, the filter blocks outermost in the output's parallel loop */
        schedule_of(&cases[2], &caps, &p);
        assert_non_null(strstr(p.text, "parallel conv0.wino n@th"));
        assert_null(strstr(p.text, "compute_at conv0.wino"));
        assert_non_null(strstr(p.text, "parallel add1 c.0"));
        schedule_of(&cases[50], &caps, &p);
        assert_null(strstr(p.text, "conv0.wino"));
        assert_non_null(strstr(p.text, "vectorize conv0.red fi"));
        setenv("WEFT_WINOGRAD", "0", 1);
        schedule_of(&cases[46], &caps, &p);
        assert_null(strstr(p.text, "conv0.wino"));
        assert_non_null(strstr(p.text, "vectorize conv0.red fi"));
        setenv("WEFT_WINOGRAD", "2", 1); /* 2x2 tiles only */
        schedule_of(&cases[51], &caps, &p);
        unsetenv("WEFT_WINOGRAD");
        assert_true(strstr(p.text, "split relu1 h 2\n") || strstr(p.text, "split relu1 h.1 2\n"));
        schedule_of(&cases[23], &caps, &p);
        assert_non_null(strstr(p.text, "vectorize conv0.red n@fo@y@x@fi.1"));
        assert_non_null(strstr(p.text, "vectorize sigmoid1 n@c@h@w.1"));
        assert_null(strstr(p.text, "compute_inline sigmoid1"));
        snprintf(want, sizeof want, "split mul2 h@w %d", bits[k] / 32);
        assert_non_null(strstr(p.text, want));
    }
}

/* A conv whose raw output is read by an epilogue and by another kernel (a graph output here;
 * a pooled shortcut in MaxViT's stem): the epilogue is not fused into it, so the conv's kernel
 * has one output and gets its conv rule (as two outputs it fell to the generic schedule, with
 * a Winograd input transform inlined into the products: 250x slower). Two kernels, both outputs
 * against the C reference at 1 and 2 threads. */
static void test_conv_read_twice_keeps_epilogue_apart(void **state)
{
    (void)state;
    enum { C = 16, H = 12, W = 12 };
    static float x[C * H * W], w[C * C * 9], y0[C * H * W], y1[C * H * W];
    static double ref[C * H * W];
    for (int i = 0; i < C * H * W; i++) x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    for (int i = 0; i < C * C * 9; i++) w[i] = (float)((i * 53) % 97) / 97.0f - 0.5f;
    for (int f = 0; f < C; f++)
        for (int h = 0; h < H; h++)
            for (int q = 0; q < W; q++) {
                double acc = 0;
                for (int c = 0; c < C; c++)
                    for (int kh = 0; kh < 3; kh++)
                        for (int kw = 0; kw < 3; kw++) {
                            int ih = h + kh - 1, iw = q + kw - 1;
                            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                acc += (double)x[(c * H + ih) * W + iw] * w[((f * C + c) * 3 + kh) * 3 + kw];
                        }
                ref[(f * H + h) * W + q] = acc;
            }
    weft_graph *g = NULL;
    weft_value xv, wv, cv, rv;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, (int64_t[]){1, C, H, W}, &xv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "w", WEFT_TYPE_FLOAT32, 4, (int64_t[]){C, C, 3, 3}, w, &wv), WEFT_OK);
    weft_attr pads = {.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = (const int64_t[]){1, 1, 1, 1}};
    assert_int_equal(weft_graph_add_op(g, "Conv", "conv", 2, (weft_value[]){xv, wv}, 1, &pads, 1, &cv), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Relu", "relu", 1, &cv, 0, NULL, 1, &rv), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, cv, "raw"), WEFT_OK);
    /* second graph: the epilogue adds x * 0.5, a product the conv does not read (a BiFPN
     * fusion's weighted input); it leaves with the epilogue (kept with the conv it was a
     * second output of the conv's kernel: the generic schedule, 50x slower) */
    weft_graph *g2 = NULL;
    weft_value xv2, wv2, cv2, rv2, hv, sv, av;
    float half = 0.5f;
    assert_int_equal(weft_graph_create(&g2), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g2, "x", WEFT_TYPE_FLOAT32, 4, (int64_t[]){1, C, H, W}, &xv2), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g2, "w", WEFT_TYPE_FLOAT32, 4, (int64_t[]){C, C, 3, 3}, w, &wv2), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g2, "half", WEFT_TYPE_FLOAT32, 0, NULL, &half, &hv), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g2, "Conv", "conv", 2, (weft_value[]){xv2, wv2}, 1, &pads, 1, &cv2), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g2, "Mul", "scaled", 2, (weft_value[]){xv2, hv}, 0, NULL, 1, &sv), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g2, "Relu", "relu", 1, &cv2, 0, NULL, 1, &rv2), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g2, "Add", "add", 2, (weft_value[]){rv2, sv}, 0, NULL, 1, &av), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g2, cv2, "raw"), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g2, av, "relu"), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, rv, "relu"), WEFT_OK);
    for (int threads = 1; threads <= 4; threads++) {
        bool resid = threads > 2;
        weft_model *m = NULL;
        weft_model_options o = weft_model_options_default();
        o.threads = 2 - threads % 2;
        assert_int_equal(weft_model_compile(resid ? g2 : g, &o, &m), WEFT_OK);
        assert_int_equal(weft_model_n_kernels(m), 2);
        if (resid) { /* the conv's kernel is the conv alone; the product is in the epilogue's */
            bool conv_alone = false;
            for (int k = 0; k < 2; k++) conv_alone |= !strncmp(weft_model_kernel_name(m, k), "conv_", 5) &&
                                                      !strstr(weft_model_kernel_name(m, k), "mul");
            assert_true(conv_alone);
        }
        assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){y0, y1}), WEFT_OK);
        double mx = 0, e0 = 0, e1 = 0;
        for (int i = 0; i < C * H * W; i++) {
            mx = fmax(mx, fabs(ref[i]));
            e0 = fmax(e0, fabs(y0[i] - ref[i]));
            e1 = fmax(e1, fabs(y1[i] - fmax(ref[i], 0) - (resid ? 0.5 * x[i] : 0)));
        }
        print_message("conv read twice%s, %d thread(s): max err %.3g / %.3g of max %.3g\n", resid ? " (residual product)" : "",
                      o.threads, e0, e1, mx);
        assert_true(e0 <= REL_TOL * mx && e1 <= REL_TOL * mx);
        weft_model_destroy(m);
    }
    weft_graph_destroy(g);
    weft_graph_destroy(g2);
}

/* A window pool over a concatenation that another kernel reads too (Inception's branch pool
 * over the block's output): the pool is a kernel of its own (with the concatenation in one
 * kernel it had two outputs and no rule: scalar loops), and both outputs match C loops. */
static void test_pool_apart_from_shared_producer(void **state)
{
    (void)state;
    enum { C = 8, H = 12, W = 12 };
    static float x0[C * H * W], x1[C * H * W], r[2 * C * H * W], pl[2 * C * H * W];
    for (int i = 0; i < C * H * W; i++) x0[i] = (float)((i * 37) % 101) / 50.0f - 1.0f, x1[i] = (float)((i * 53) % 97) / 48.0f - 1.0f;
    weft_graph *g = NULL;
    weft_value v0, v1, cv, rv, pv;
    int64_t shape[4] = {1, C, H, W};
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x0", WEFT_TYPE_FLOAT32, 4, shape, &v0), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x1", WEFT_TYPE_FLOAT32, 4, shape, &v1), WEFT_OK);
    weft_attr axis = {.name = "axis", .kind = WEFT_ATTR_INT, .i = 1};
    assert_int_equal(weft_graph_add_op(g, "Concat", "cat", 2, (weft_value[]){v0, v1}, 1, &axis, 1, &cv), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Relu", "relu", 1, &cv, 0, NULL, 1, &rv), WEFT_OK);
    weft_attr pa[3] = {{.name = "kernel_shape", .kind = WEFT_ATTR_INTS, .n = 2, .ints = (const int64_t[]){3, 3}},
                       {.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = (const int64_t[]){1, 1, 1, 1}},
                       {.name = "strides", .kind = WEFT_ATTR_INTS, .n = 2, .ints = (const int64_t[]){1, 1}}};
    assert_int_equal(weft_graph_add_op(g, "AveragePool", "pool", 1, &cv, 3, pa, 1, &pv), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, rv, "relu"), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, pv, "pool"), WEFT_OK);
    weft_model *m = NULL;
    weft_model_options o = weft_model_options_default();
    assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
    assert_int_equal(weft_model_n_kernels(m), 2);
    assert_int_equal(weft_model_run(m, (const void *[]){x0, x1}, (void *[]){r, pl}), WEFT_OK);
    double err = 0;
    for (int c = 0; c < 2 * C; c++)
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                const float *src = c < C ? x0 + c * H * W : x1 + (c - C) * H * W;
                double sum = 0;
                int cnt = 0; /* count_include_pad = 0 */
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++)
                        if (h + dy >= 0 && h + dy < H && w + dx >= 0 && w + dx < W) sum += src[(h + dy) * W + w + dx], cnt++;
                int i = (c * H + h) * W + w;
                err = fmax(err, fabs(pl[i] - sum / cnt));
                err = fmax(err, fabs(r[i] - fmax(src[h * W + w], 0)));
            }
    assert_true(err <= 1e-6);
    weft_model_destroy(m);
    weft_graph_destroy(g);
}

/* g compiled for the host at `threads` threads. */
static weft_model *compile_threads(const weft_graph *g, int threads)
{
    weft_model *m = NULL;
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
    return m;
}

/* A window pool whose epilogue has two outputs (Xception's maxpool(body) + shortcut, read by
 * the next shortcut conv and, through a ReLU, by the next body): the pool is a kernel of its
 * own, for the pool rule (in one kernel with the Add and the ReLU it had two outputs and no
 * rule: a scalar loop at 2.5 GFLOP/s); the Add and the ReLU are the second kernel. Both
 * outputs against C loops at 1 and 2 threads. */
static void test_pool_two_output_epilogue_apart(void **state)
{
    (void)state;
    enum { C = 8, H = 16, W = 16, OH = 8, OW = 8 };
    static float x[C * H * W], sc[C * OH * OW], sum[C * OH * OW], rl[C * OH * OW];
    for (int i = 0; i < C * H * W; i++) x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    for (int i = 0; i < C * OH * OW; i++) sc[i] = (float)((i * 53) % 97) / 48.0f - 1.0f;
    weft_graph *g = NULL;
    weft_value xv, sv, pv, av, rv;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, (int64_t[]){1, C, H, W}, &xv), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "s", WEFT_TYPE_FLOAT32, 4, (int64_t[]){1, C, OH, OW}, &sv), WEFT_OK);
    weft_attr pa[3] = {{.name = "kernel_shape", .kind = WEFT_ATTR_INTS, .n = 2, .ints = (const int64_t[]){3, 3}},
                       {.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = (const int64_t[]){1, 1, 1, 1}},
                       {.name = "strides", .kind = WEFT_ATTR_INTS, .n = 2, .ints = (const int64_t[]){2, 2}}};
    assert_int_equal(weft_graph_add_op(g, "MaxPool", "pool", 1, &xv, 3, pa, 1, &pv), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Add", "add", 2, (weft_value[]){pv, sv}, 0, NULL, 1, &av), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Relu", "relu", 1, &av, 0, NULL, 1, &rv), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, av, "sum"), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, rv, "relu"), WEFT_OK);
    for (int threads = 1; threads <= 2; threads++) {
        weft_model *m = compile_threads(g, threads);
        assert_int_equal(weft_model_n_kernels(m), 2);
        bool pool_alone = false;
        for (int k = 0; k < 2; k++)
            pool_alone |= !strncmp(weft_model_kernel_name(m, k), "maxpool_", 8) && !strstr(weft_model_kernel_name(m, k), "add");
        assert_true(pool_alone);
        memset(sum, 0, sizeof sum), memset(rl, 0, sizeof rl);
        assert_int_equal(weft_model_run(m, (const void *[]){x, sc}, (void *[]){sum, rl}), WEFT_OK);
        double err = 0;
        for (int c = 0; c < C; c++)
            for (int h = 0; h < OH; h++)
                for (int w = 0; w < OW; w++) {
                    float mx = -INFINITY;
                    for (int dy = 0; dy < 3; dy++)
                        for (int dx = 0; dx < 3; dx++) {
                            int ih = 2 * h + dy - 1, iw = 2 * w + dx - 1;
                            if (ih >= 0 && ih < H && iw >= 0 && iw < W) mx = fmaxf(mx, x[(c * H + ih) * W + iw]);
                        }
                    int i = (c * OH + h) * OW + w;
                    float a = mx + sc[i];
                    err = fmax(err, fabs(sum[i] - a));
                    err = fmax(err, fabs(rl[i] - fmaxf(a, 0)));
                }
        assert_true(err == 0);
        weft_model_destroy(m);
    }
    weft_graph_destroy(g);
}

/* A window pool over a per-channel normalisation (PoolFormer's token mixer over GroupNorm):
 * y = (x - mean_hw(x)) * 0.5, out = AveragePool3x3(y) - y. The pool is a kernel apart from the
 * row reduction (in one kernel the pool recomputed the normalisation per tap in a scalar loop:
 * 50x slower); values against C loops at 1 and 2 threads. */
static void test_pool_apart_from_row_reduction(void **state)
{
    (void)state;
    enum { C = 8, H = 12, W = 12 };
    static float x[C * H * W], out[C * H * W], y[C * H * W];
    for (int i = 0; i < C * H * W; i++) x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    for (int c = 0; c < C; c++) {
        double mean = 0;
        for (int i = 0; i < H * W; i++) mean += x[c * H * W + i];
        mean /= H * W;
        for (int i = 0; i < H * W; i++) y[c * H * W + i] = (float)((x[c * H * W + i] - mean) * 0.5);
    }
    weft_graph *g = NULL;
    weft_value xv, mv, dv, hv, yv, pv, ov;
    float half = 0.5f;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, (int64_t[]){1, C, H, W}, &xv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "half", WEFT_TYPE_FLOAT32, 0, NULL, &half, &hv), WEFT_OK);
    weft_attr ra[2] = {{.name = "axes", .kind = WEFT_ATTR_INTS, .n = 2, .ints = (const int64_t[]){2, 3}},
                       {.name = "keepdims", .kind = WEFT_ATTR_INT, .i = 1}};
    assert_int_equal(weft_graph_add_op(g, "ReduceMean", "mean", 1, &xv, 2, ra, 1, &mv), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Sub", "center", 2, (weft_value[]){xv, mv}, 0, NULL, 1, &dv), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Mul", "scale", 2, (weft_value[]){dv, hv}, 0, NULL, 1, &yv), WEFT_OK);
    weft_attr pa[4] = {{.name = "kernel_shape", .kind = WEFT_ATTR_INTS, .n = 2, .ints = (const int64_t[]){3, 3}},
                       {.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = (const int64_t[]){1, 1, 1, 1}},
                       {.name = "strides", .kind = WEFT_ATTR_INTS, .n = 2, .ints = (const int64_t[]){1, 1}},
                       {.name = "count_include_pad", .kind = WEFT_ATTR_INT, .i = 0}};
    assert_int_equal(weft_graph_add_op(g, "AveragePool", "pool", 1, &yv, 4, pa, 1, &pv), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Sub", "mix", 2, (weft_value[]){pv, yv}, 0, NULL, 1, &ov), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, ov, "out"), WEFT_OK);
    for (int threads = 1; threads <= 2; threads++) {
        weft_model *m = compile_threads(g, threads);
        assert_int_equal(weft_model_n_kernels(m), 2);
        assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){out}), WEFT_OK);
        double err = 0;
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++) {
                    double sum = 0;
                    int cnt = 0;
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++)
                            if (h + dy >= 0 && h + dy < H && w + dx >= 0 && w + dx < W)
                                sum += y[(c * H + h + dy) * W + w + dx], cnt++;
                    int i = (c * H + h) * W + w;
                    err = fmax(err, fabs(out[i] - (sum / cnt - y[i])));
                }
        print_message("pool over a normalisation, %d thread(s): max err %.3g\n", threads, err);
        assert_true(err <= 1e-6);
        weft_model_destroy(m);
    }
    weft_graph_destroy(g);
}

/* A producer evaluating a transcendental function (here Exp) is not inlined into the conv
 * reading it (it would be recomputed per filter block and tap): two kernels, with the same
 * numbers; a ReLU is (one kernel). */
static void test_costly_producer_apart(void **state)
{
    (void)state;
    enum { C = 8, F = 16, H = 10, W = 10 };
    rng_state = 11;
    float *x = random_buf(C * H * W), *wt = random_buf(F * C * 9), *y = calloc(F * H * W, sizeof(float));
    for (int k = 0; k < 2; k++) {
        weft_graph *g = NULL;
        weft_value xv, pv, wv, yv;
        int64_t xs[4] = {1, C, H, W}, ws[4] = {F, C, 3, 3};
        assert_int_equal(weft_graph_create(&g), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, xs, &xv), WEFT_OK);
        assert_int_equal(weft_graph_unary(g, k == 0 ? "Exp" : "Relu", xv, &pv), WEFT_OK);
        assert_int_equal(weft_graph_add_constant(g, "w", WEFT_TYPE_FLOAT32, 4, ws, wt, &wv), WEFT_OK);
        weft_attr pads = {.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = (const int64_t[]){1, 1, 1, 1}};
        assert_int_equal(weft_graph_add_op(g, "Conv", "conv", 2, (weft_value[]){pv, wv}, 1, &pads, 1, &yv), WEFT_OK);
        assert_int_equal(weft_graph_set_output(g, yv, "y"), WEFT_OK);
        weft_model *m = NULL;
        weft_model_options o = weft_model_options_default();
        assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
        assert_int_equal(weft_model_n_kernels(m), k == 0 ? 2 : 1);
        assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){y}), WEFT_OK);
        /* the reference conv of the producer's values */
        static const conv_case t = {K_CONV, 1, C, H, W, F, 3, 3, 1, 1, 1, EPI_NONE, false, 0};
        float px[C * H * W];
        double ref[F * H * W], err = 0, mx = 0;
        for (int i = 0; i < C * H * W; i++) px[i] = k == 0 ? expf(x[i]) : fmaxf(x[i], 0);
        reference(&t, px, wt, NULL, NULL, H, W, ref);
        for (int i = 0; i < F * H * W; i++) err = fmax(err, fabs(y[i] - ref[i])), mx = fmax(mx, fabs(ref[i]));
        assert_true(err <= REL_TOL * mx);
        weft_model_destroy(m);
        weft_graph_destroy(g);
    }
    free(x), free(wt), free(y);
}

/* A pointwise conv over tokens transposed back into channels ([1, P, C] -> [1, C, P] -> [1, C,
 * 8, 8], a transformer block's output projection as a 1x1 conv) is not put in the pixel form,
 * whose pixel vectors would be gathers strided by C; it is blocked, and matches. */
static void test_pointwise_over_transposed_tokens(void **state)
{
    (void)state;
    enum { P = 64, C = 16, F = 24 };
    rng_state = 5;
    float *x = random_buf(P * C), *wt = random_buf(F * C), *b = random_buf(F), *y = calloc(F * P, sizeof(float));
    weft_graph *g = NULL;
    weft_value xv, tv, sv, rv, wv, bv, yv;
    int64_t xs[3] = {1, P, C}, ws[4] = {F, C, 1, 1}, two = 4, shape[4] = {1, C, 8, 8}, fdim = F;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 3, xs, &xv), WEFT_OK);
    weft_attr perm = {.name = "perm", .kind = WEFT_ATTR_INTS, .n = 3, .ints = (const int64_t[]){0, 2, 1}};
    assert_int_equal(weft_graph_add_op(g, "Transpose", "t", 1, &xv, 1, &perm, 1, &tv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "shape", WEFT_TYPE_INT64, 1, &two, shape, &sv), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Reshape", "r", 2, (weft_value[]){tv, sv}, 0, NULL, 1, &rv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "w", WEFT_TYPE_FLOAT32, 4, ws, wt, &wv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "b", WEFT_TYPE_FLOAT32, 1, &fdim, b, &bv), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Conv", "conv", 3, (weft_value[]){rv, wv, bv}, 0, NULL, 1, &yv), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, yv, "y"), WEFT_OK);
    const int bits[2] = {512, 256};
    for (int k = 0; k < 2; k++) {
        weft_target_caps caps = weft_caps_cpu(bits[k], 2);
        sched_probe p;
        memset(&p, 0, sizeof p);
        p.caps = &caps;
        assert_int_equal(weft_model_each_kernel(g, &caps, probe_kernel, &p), WEFT_OK);
        assert_int_equal(p.kernels, 1);
        assert_string_not_equal(p.ks.rule, "conv_pixels");
        if (!strstr(p.text, ".red fi\n")) fail_msg("not vectorized over filters:\n%s", p.text);
    }
    weft_model *m = NULL;
    weft_model_options o = weft_model_options_default();
    assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
    assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){y}), WEFT_OK);
    /* the reference 1x1 conv of the tokens laid out as NCHW */
    static const conv_case t = {K_CONV, 1, C, 8, 8, F, 1, 1, 1, 0, 1, EPI_NONE, true, 0};
    float xt[C * P];
    double ref[F * P], err = 0, mx = 0;
    for (int q = 0; q < P; q++)
        for (int c = 0; c < C; c++) xt[c * P + q] = x[q * C + c];
    reference(&t, xt, wt, b, NULL, 8, 8, ref);
    for (int i = 0; i < F * P; i++) err = fmax(err, fabs(y[i] - ref[i])), mx = fmax(mx, fabs(ref[i]));
    assert_true(err <= REL_TOL * mx);
    weft_model_destroy(m);
    weft_graph_destroy(g);
    free(x), free(wt), free(b), free(y);
}

/* A dilated conv reading mostly padding (case 61: rate 6 on 13x13, 48% of its taps reach the
 * image) becomes 9 band convs (matched against the reference with every other case above);
 * one reading the image with most taps (case 13's kind: no dilation) stays one kernel. */
static void test_dilated_conv_in_bands(void **state)
{
    (void)state;
    const int which[2] = {61, 0};
    for (int k = 0; k < 2; k++) {
        const conv_case *t = &cases[which[k]];
        size_t nw = (size_t)(t->f * (t->c / t->group) * t->kh * t->kw);
        float *wt = calloc(nw, sizeof(float)), *b = calloc((size_t)t->f, sizeof(float));
        int64_t os[8];
        weft_graph *g = build(t, wt, b, os);
        weft_model *m = NULL;
        weft_model_options o = weft_model_options_default();
        assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
        int nk = weft_model_n_kernels(m);
        print_message("case %d: %d kernels\n", which[k], nk);
        if (k == 0) assert_true(nk >= 9);
        else assert_int_equal(nk, 1);
        weft_model_destroy(m);
        weft_graph_destroy(g);
        free(wt), free(b);
    }
}

/* BatchNormalization -> Conv (pre-norm blocks): with no padding the BN folds into the conv's
 * weights (weft_model_fold_prenorm marks it dead); with padding it must not (a padded tap reads
 * 0, not BN(0)). The compiled models against C loops applying the BN and then the conv, grouped (2 groups, 3x3) and
 * pointwise, at 1 thread. */
static void test_prenorm_batchnorm_folds_into_unpadded_conv(void **state)
{
    (void)state;
    enum { C = 8, H = 7, W = 9, F = 6 };
    static float x[C * H * W], w[F * C * 9], sc[C], be[C], mu[C], va[C], y[F * H * W];
    static double bx[C * H * W], ref[F * H * W];
    for (int i = 0; i < C * H * W; i++) x[i] = (float)((i * 29) % 83) / 40.0f - 1.0f;
    for (int i = 0; i < F * C * 9; i++) w[i] = (float)((i * 31) % 67) / 67.0f - 0.5f;
    for (int c = 0; c < C; c++) sc[c] = 0.5f + 0.1f * c, be[c] = 0.2f * c - 0.7f, mu[c] = 0.05f * c, va[c] = 0.3f + 0.2f * c;
    for (int c = 0; c < C; c++)
        for (int e = 0; e < H * W; e++)
            bx[c * H * W + e] = (x[c * H * W + e] - mu[c]) / sqrt(va[c] + 1e-5) * sc[c] + be[c];
    const struct { int64_t k, group, pad, folds; } v[3] = {{1, 1, 0, 1}, {3, 2, 0, 1}, {3, 1, 1, 0}};
    for (int t = 0; t < 3; t++) {
        int64_t k = v[t].k, grp = v[t].group, pad = v[t].pad, cg = C / grp, oh = H + 2 * pad - k + 1, ow = W + 2 * pad - k + 1;
        for (int64_t f = 0; f < F; f++)
            for (int64_t h = 0; h < oh; h++)
                for (int64_t q = 0; q < ow; q++) {
                    double acc = 0;
                    for (int64_t cl = 0; cl < cg; cl++)
                        for (int64_t kh = 0; kh < k; kh++)
                            for (int64_t kw = 0; kw < k; kw++) {
                                int64_t c = f / (F / grp) * cg + cl, ih = h + kh - pad, iw = q + kw - pad;
                                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                    acc += bx[(c * H + ih) * W + iw] * w[((f * cg + cl) * k + kh) * k + kw];
                            }
                    ref[(f * oh + h) * ow + q] = acc;
                }
        weft_graph *g = NULL;
        weft_value xv, p[4], wv, bv, cv;
        assert_int_equal(weft_graph_create(&g), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, (int64_t[]){1, C, H, W}, &xv), WEFT_OK);
        const float *pd[4] = {sc, be, mu, va};
        for (int i = 0; i < 4; i++) {
            char nm[8];
            snprintf(nm, sizeof nm, "p%d", i);
            assert_int_equal(weft_graph_add_constant(g, nm, WEFT_TYPE_FLOAT32, 1, (int64_t[]){C}, pd[i], &p[i]), WEFT_OK);
        }
        assert_int_equal(weft_graph_add_constant(g, "w", WEFT_TYPE_FLOAT32, 4, (int64_t[]){F, cg, k, k}, w, &wv), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "BatchNormalization", "bn", 5, (weft_value[]){xv, p[0], p[1], p[2], p[3]}, 0,
                                           NULL, 1, &bv),
                         WEFT_OK);
        weft_attr at[2] = {{.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = (const int64_t[]){pad, pad, pad, pad}},
                           {.name = "group", .kind = WEFT_ATTR_INT, .i = grp}};
        assert_int_equal(weft_graph_add_op(g, "Conv", "conv", 2, (weft_value[]){bv, wv}, 2, at, 1, &cv), WEFT_OK);
        assert_int_equal(weft_graph_set_output(g, cv, "y"), WEFT_OK);
        weft_model *m = NULL;
        weft_model_options o = weft_model_options_default();
        o.threads = 1;
        assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
        assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){y}), WEFT_OK);
        double mx = 0, err = 0;
        for (int64_t i = 0; i < F * oh * ow; i++) mx = fmax(mx, fabs(ref[i])), err = fmax(err, fabs(y[i] - ref[i]));
        print_message("BN -> conv %lldx%lld group %lld pad %lld: max err %.3g of %.3g\n", (long long)k, (long long)k,
                      (long long)grp, (long long)pad, err, mx);
        assert_true(err <= REL_TOL * mx);
        weft_model_destroy(m);
        assert_int_equal(weft_model_fold_prenorm(g), WEFT_OK);
        bool bn_dead = true;
        for (int i = 0; i < g->n_nodes; i++)
            if (!strcmp(g->nodes[i].op_type, "BatchNormalization")) bn_dead = g->nodes[i].dead;
        assert_int_equal(bn_dead, v[t].folds);
        weft_graph_destroy(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_and_pool_default_schedules_match_reference),
        cmocka_unit_test(test_conv_and_pool_default_schedules_match_reference_interp),
        cmocka_unit_test(test_default_schedule_shapes),
        cmocka_unit_test(test_conv_read_twice_keeps_epilogue_apart),
        cmocka_unit_test(test_dilated_conv_in_bands),
        cmocka_unit_test(test_pool_apart_from_shared_producer),
        cmocka_unit_test(test_pool_two_output_epilogue_apart),
        cmocka_unit_test(test_pool_apart_from_row_reduction),
        cmocka_unit_test(test_costly_producer_apart),
        cmocka_unit_test(test_pointwise_over_transposed_tokens),
        cmocka_unit_test(test_prenorm_batchnorm_folds_into_unpadded_conv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
