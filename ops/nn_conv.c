/* Convolution-family graph ops on NCHW tensors: Conv (2-D, any group count that divides the
 * channels: 1, depthwise, or grouped), BatchNormalization (inference form), MaxPool and
 * AveragePool (2-D), GlobalAveragePool and GlobalMaxPool.
 *
 * Padding is a separate stage "<name>.pad" over the padded extent: the
 * interior reads X at clamped indices (SELECT evaluates both arms) and the border holds the
 * fill value (0 for Conv and AveragePool, the lowest float for MaxPool). Without padding the
 * window stage reads X directly. Conv's bias is a separate elementwise output stage `name`
 * after the reduction "<name>.red"; without a bias the reduction is `name`. With weights laid
 * out in filter blocks by the model's layout pass (model/passes.c, "FCHWf"), the reduction
 * "<name>.red" is [N, F/fb, OH, OW, fb] (filters innermost, the axis default_conv.c vectorizes)
 * and `name` reads it back as NCHW, adding the bias if any. With weights the layout pass
 * transformed for Winograd ("winograd"), a 3x3 conv is the stages of winograd_stages below.
 */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "ir/error.h"
#include "ops/internal.h"
#include "ops/nn_internal.h"

/* Sliding-window geometry of the two spatial dims (ops/internal.h). */
typedef weft_window2d window;

/* Reads kernel (given, or attribute kernel_shape), strides, dilations, pads and auto_pad. */
static weft_status window_params(const weft_gnode *n, const int64_t *in_hw, const int64_t *kernel, bool dilations_ok,
                                 window *w)
{
    int64_t v[8];
    int cnt;
    weft_status st;
    memset(w, 0, sizeof *w);
    w->in[0] = in_hw[0], w->in[1] = in_hw[1];
    if ((st = weft_nn_attr_ints(n, "kernel_shape", v, 8, &cnt)) != WEFT_OK) return st;
    if (kernel) {
        if (cnt >= 0 && (cnt != 2 || v[0] != kernel[0] || v[1] != kernel[1]))
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "kernel_shape %s does not match the weights' kernel %s",
                                weft_nn_shape_str(cnt, v).s, weft_nn_shape_str(2, kernel).s);
        w->k[0] = kernel[0], w->k[1] = kernel[1];
    } else {
        if (cnt != 2) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "kernel_shape must have 2 elements, got %d", cnt);
        w->k[0] = v[0], w->k[1] = v[1];
    }
    const char *names[2] = {"strides", "dilations"};
    int64_t *dst[2] = {w->s, w->d};
    for (int p = 0; p < 2; p++) {
        if ((st = weft_nn_attr_ints(n, names[p], v, 8, &cnt)) != WEFT_OK) return st;
        if (cnt < 0) v[0] = v[1] = 1, cnt = 2;
        if (cnt != 2) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "%s must have 2 elements, got %d", names[p], cnt);
        if (v[0] < 1 || v[1] < 1)
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "%s %s must be >= 1", names[p], weft_nn_shape_str(2, v).s);
        dst[p][0] = v[0], dst[p][1] = v[1];
    }
    if (!dilations_ok && (w->d[0] != 1 || w->d[1] != 1))
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "dilations %s are not supported, only [1,1]",
                            weft_nn_shape_str(2, w->d).s);
    if (w->k[0] < 1 || w->k[1] < 1)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "kernel_shape %s must be >= 1", weft_nn_shape_str(2, w->k).s);
    const char *auto_pad = weft_gnode_attr_string(n, "auto_pad", "NOTSET");
    int64_t keff[2] = {(w->k[0] - 1) * w->d[0] + 1, (w->k[1] - 1) * w->d[1] + 1};
    if (strcmp(auto_pad, "NOTSET") == 0) {
        if ((st = weft_nn_attr_ints(n, "pads", v, 8, &cnt)) != WEFT_OK) return st;
        if (cnt < 0) v[0] = v[1] = v[2] = v[3] = 0, cnt = 4;
        if (cnt != 4) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "pads must have 4 elements, got %d", cnt);
        for (int i = 0; i < 4; i++)
            if (v[i] < 0)
                return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "pads %s must be >= 0", weft_nn_shape_str(4, v).s);
        w->pb[0] = v[0], w->pb[1] = v[1], w->pe[0] = v[2], w->pe[1] = v[3];
    } else if (strcmp(auto_pad, "SAME_UPPER") == 0 || strcmp(auto_pad, "SAME_LOWER") == 0) {
        for (int i = 0; i < 2; i++) {
            int64_t o = (w->in[i] + w->s[i] - 1) / w->s[i];
            int64_t total = (o - 1) * w->s[i] + keff[i] - w->in[i];
            if (total < 0) total = 0;
            int64_t small = total / 2;
            w->pb[i] = auto_pad[5] == 'U' ? small : total - small;
            w->pe[i] = total - w->pb[i];
        }
    } else if (strcmp(auto_pad, "VALID") != 0) {
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "auto_pad='%s', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                            auto_pad);
    }
    bool ceil_mode = weft_gnode_attr_int(n, "ceil_mode", 0) != 0;
    for (int i = 0; i < 2; i++) {
        int64_t span = w->in[i] + w->pb[i] + w->pe[i] - keff[i];
        if (span < 0)
            return weft_nn_fail(
                WEFT_ERR_SHAPE, n, "kernel %s (dilated %s) is larger than the padded input: input %s, pads %s",
                weft_nn_shape_str(2, w->k).s, weft_nn_shape_str(2, keff).s, weft_nn_shape_str(2, w->in).s,
                weft_nn_shape_str(4, (int64_t[]){w->pb[0], w->pb[1], w->pe[0], w->pe[1]}).s);
        w->out[i] = span / w->s[i] + 1;
        if (ceil_mode && span % w->s[i] != 0) {
            /* one more window, unless it would start past the input and the begin padding
             * (PyTorch's and ONNX Runtime's rule); the end padding grows to hold it */
            int64_t o = span / w->s[i] + 2;
            if ((o - 1) * w->s[i] >= w->in[i] + w->pb[i]) o--;
            int64_t extra = (o - 1) * w->s[i] + keff[i] - (w->in[i] + w->pb[i] + w->pe[i]);
            w->out[i] = o;
            if (extra > 0) w->ceil_extra[i] = extra, w->pe[i] += extra;
        }
    }
    return WEFT_OK;
}

/* pad[n,c,h,w] over the padded extent: X inside, `fill` outside; X itself when unpadded.
 * With ph > 1 phases (a window reduction with column stride ph that reads columns in vectors:
 * pooling, depthwise convs) the columns are split by phase, pad[n,c,h,q,w'] holding padded
 * column w'*ph + q, so window tap rx of output column x reads pad[.., rx % ph, x + rx / ph]:
 * unit stride in x (no gather per tap; the stage is made even without padding). */
static const weft_tensor *pad_stage(weft_arena *a, const char *pad_name, const weft_tensor *X, const window *w,
                                    const weft_expr *fill, int64_t ph)
{
    if (!X || (ph <= 1 && w->pb[0] == 0 && w->pb[1] == 0 && w->pe[0] == 0 && w->pe[1] == 0)) return X;
    int64_t wp = X->shape[3] + w->pb[1] + w->pe[1];
    int64_t shape[5] = {X->shape[0], X->shape[1], X->shape[2] + w->pb[0] + w->pe[0], wp, 0};
    if (ph > 1) shape[3] = ph, shape[4] = (wp + ph - 1) / ph;
    weft_tensor *P = weft_nn_compute(a, pad_name, ph > 1 ? 5 : 4, shape);
    if (!P) return NULL;
    const weft_expr *idx[5], *x[4], *cond = NULL;
    weft_nn_axes(P, idx);
    x[0] = idx[0], x[1] = idx[1];
    for (int i = 0; i < 2; i++) {
        const weft_expr *v = idx[2 + i];
        if (i == 1 && ph > 1) v = weft_add(a, weft_mul(a, idx[4], weft_i64(a, ph)), idx[3]);
        int64_t ext = X->shape[2 + i], pb = w->pb[i];
        x[2 + i] = v;
        if (pb == 0 && w->pe[i] == 0 && !(i == 1 && ph > 1)) continue;
        const weft_expr *in = weft_cmp(a, WEFT_EXPR_LT, v, weft_i64(a, pb + ext));
        if (pb > 0) in = weft_and(a, weft_cmp(a, WEFT_EXPR_GE, v, weft_i64(a, pb)), in);
        cond = cond ? weft_and(a, cond, in) : in;
        x[2 + i] = weft_nn_clamp(a, pb > 0 ? weft_sub(a, v, weft_i64(a, pb)) : v, 0, ext - 1);
    }
    weft_te_set_body(P, WEFT_REDUCE_NONE, weft_select(a, cond, weft_tload(a, X, 4, x), fill));
    return P;
}

/* P at row ih and padded column x*s + r (dilation 1 when P is split into s phases). */
static const weft_expr *read_window(weft_arena *a, const weft_tensor *P, const weft_expr *n, const weft_expr *c,
                                    const weft_expr *ih, const weft_expr *x, int64_t s, const weft_expr *r, int64_t d)
{
    if (P->ndim == 5) {
        const weft_expr *ph = weft_i64(a, s);
        const weft_expr *col = weft_add(a, x, weft_floordiv(a, r, ph));
        return weft_tload(a, P, 5, (const weft_expr *[]){n, c, ih, weft_floormod(a, r, ph), col});
    }
    const weft_expr *base = s == 1 ? x : weft_mul(a, x, weft_i64(a, s));
    return weft_te_at(a, P, n, c, ih, weft_add(a, base, d == 1 ? r : weft_mul(a, r, weft_i64(a, d))));
}

/* v * s + r * d, without multiplications by 1. */
static const weft_expr *window_index(weft_arena *a, const weft_expr *v, int64_t s, const weft_expr *r, int64_t d)
{
    const weft_expr *base = s == 1 ? v : weft_mul(a, v, weft_i64(a, s));
    return weft_add(a, base, d == 1 ? r : weft_mul(a, r, weft_i64(a, d)));
}

/* ---- Conv -------------------------------------------------------------------------------- */

/* Conv and ConvTranspose inputs: X (4-D NCHW float32), W (float32), optional B (float32);
 * `what` names the op in the refusal of other ranks ("convolution", "ConvTranspose"). */
weft_status weft_nn_conv_inputs(weft_graph *g, const weft_gnode *n, const char *what, const weft_gvalue **X,
                                const weft_gvalue **W, const weft_gvalue **B)
{
    weft_status st = weft_nn_check_arity(n, 2, 3, 1, 1);
    if (st != WEFT_OK) return st;
    *X = weft_nn_in(g, n, 0), *W = weft_nn_in(g, n, 1), *B = weft_nn_in(g, n, 2);
    if ((st = weft_nn_check_dtype(n, *X, "input X", WEFT_NN_F32)) != WEFT_OK ||
        (st = weft_nn_check_dtype(n, *W, "input W", WEFT_NN_F32)) != WEFT_OK ||
        (*B && (st = weft_nn_check_dtype(n, *B, "input B", WEFT_NN_F32)) != WEFT_OK))
        return st;
    if ((*X)->ndim != 4)
        return weft_nn_fail((*X)->ndim == 3 || (*X)->ndim == 5 ? WEFT_ERR_UNSUPPORTED : WEFT_ERR_SHAPE, n,
                            "input X has %d dims %s, expected 4 (NCHW; only 2-D %s is supported)", (*X)->ndim,
                            weft_nn_shape_str((*X)->ndim, (*X)->shape).s, what);
    return WEFT_OK;
}

weft_status weft_nn_conv_infer(weft_graph *g, const weft_gnode *n)
{
    const weft_gvalue *X, *W, *B;
    weft_status st = weft_nn_conv_inputs(g, n, "convolution", &X, &W, &B);
    if (st != WEFT_OK) return st;
    if ((st = weft_nn_check_rank(n, W, "input W", 4, "FCKHKW")) != WEFT_OK) return st;
    int64_t group = weft_gnode_attr_int(n, "group", 1), C = X->shape[1], F = W->shape[0];
    if (group < 1 || C % group != 0 || F % group != 0)
        return weft_nn_fail(WEFT_ERR_SHAPE, n,
                            "group=%" PRId64 " must divide the input channels C=%" PRId64
                            " and the output channels F=%" PRId64,
                            group, C, F);
    if (W->shape[1] * group != C)
        return weft_nn_fail(WEFT_ERR_SHAPE, n,
                            "input W %s has %" PRId64 " input channels per group, expected C/group = %" PRId64
                            "/%" PRId64 " = %" PRId64 " (X %s)",
                            weft_nn_shape_str(4, W->shape).s, W->shape[1], C, group, C / group,
                            weft_nn_shape_str(4, X->shape).s);
    if (B && (B->ndim != 1 || B->shape[0] != F))
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input B has shape %s, expected [%" PRId64 "]",
                            weft_nn_shape_str(B->ndim, B->shape).s, F);
    window w;
    if ((st = window_params(n, X->shape + 2, W->shape + 2, true, &w)) != WEFT_OK) return st;
    return weft_nn_set_out(g, n, 0, WEFT_F32, 4, (int64_t[]){X->shape[0], F, w.out[0], w.out[1]});
}

/* The filter block of a Conv whose constant weights the model's layout pass laid out
 * [ceil(F/fb), C/group, KH, KW, fb] ("weft_weight_layout" = "FCHWf", block fb in
 * "weft_weight_block", the true filter count in "weft_conv_filters"; filters past F are zero),
 * else 0 (weights [F, C/group, KH, KW]). */
static int64_t filter_block(const weft_gnode *n)
{
    return strcmp(weft_gnode_attr_string(n, "weft_weight_layout", ""), "FCHWf")
               ? 0
               : weft_gnode_attr_int(n, "weft_weight_block", 0);
}

/* ---- Winograd F(m x m, 3x3), m = 2 or 4 ----------------------------------------------------
 *
 * A 3x3 conv (stride 1, dilation 1, one group) whose constant weights the model's layout pass
 * transformed ("weft_weight_layout" = "winograd": U [a, a, F/fb, C, fb] with a = m + 2, U =
 * G w G^T per filter and channel (weft_winograd_weights), filters past F zero) computes each
 * m x m output tile from an a x a input tile with a^2 products per (filter, channel) instead of
 * 9 m^2: 16 for 4 outputs (m = 2), 36 for 16 (m = 4). The transforms B^T (a x a) and A^T
 * (m x a) are written as a fixed number of taps (position, coefficient) per row, a coefficient
 * split in two where a row has fewer nonzeros (-5 x = -4 x - x, 4 x = 2 x + 2 x: exact), so no
 * term multiplies by zero; the row index selects the taps, and once the schedule unrolls it
 * the selects fold to constants.
 *   m = 2: B^T = [1 0 -1 0; 0 1 1 0; 0 1 -1 0; 0 1 0 -1], A^T = [1 1 -1 0; 0 1 1 -1],
 *          G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1] (the usual ones, B^T's row 2 and A^T's
 *          column 2 negated: two taps per row of B^T, signs +, +, - in every row of A^T);
 *   m = 4: the usual F(4x4, 3x3) matrices (points 0, +-1, +-2, infinity).
 * Stages:
 *   "<name>.pad"  P [N, TH*m+2, TW*m+2, C]: the zero-padded input, channels innermost (the
 *                 transform reads a channel vector per tap);
 *   "<name>.wino" V [a, a, N, TH, TW, C] = B^T d B of each input tile d;
 *   "<name>.red"  M [a, a, N, F/fb, TH, TW, fb] = sum_c V[e1,e2,n,th,tw,c] * U[e1,e2,fo,c,fi]: a^2
 *                 products shaped like the blocked conv's reduction (schedule/default_conv.c);
 *   "<name>"      Y [N, F, OH, OW] = A^T M A at (y % m, x % m) of tile (y / m, x / m), plus the
 *                 bias. */
typedef struct wino_taps {
    int rows, taps;
    int8_t pos[6][5];
    float coef[6][5];
} wino_taps;

typedef struct wino_spec {
    int m;
    wino_taps bt, at;
    double g[6][3];
} wino_spec;

static const wino_spec wino_specs[2] = {
    {2,
     {4, 2, {{0, 2}, {1, 2}, {1, 2}, {1, 3}}, {{1, -1}, {1, 1}, {1, -1}, {1, -1}}},
     {2, 3, {{0, 1, 2}, {1, 2, 3}}, {{1, 1, -1}, {1, 1, -1}}},
     {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}}},
    {4,
     {6, 4,
      {{0, 2, 2, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 3, 3, 5}},
      {{4, -4, -1, 1}, {-4, -4, 1, 1}, {4, -4, -1, 1}, {-2, -1, 2, 1}, {2, -1, -2, 1}, {4, -4, -1, 1}}},
     {4, 5,
      {{0, 1, 2, 3, 4}, {1, 2, 3, 3, 4}, {1, 2, 3, 4, 4}, {1, 2, 3, 4, 5}},
      {{1, 1, 1, 1, 1}, {1, -1, 1, 1, -2}, {1, 1, 4, 2, 2}, {1, -1, 8, -8, 1}}},
     {{0.25, 0, 0}, {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6},
      {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}}},
};

static const wino_spec *wino_spec_for(int64_t m) { return m == 2 ? &wino_specs[0] : m == 4 ? &wino_specs[1] : NULL; }

void weft_winograd_weights(const float *src, int64_t F, int64_t C, int64_t fb, int64_t m, float *dst)
{
    const wino_spec *ws = wino_spec_for(m);
    if (!ws) return;
    int al = ws->m + 2;
    int64_t FO = (F + fb - 1) / fb;
    for (int64_t f = 0; f < F; f++)
        for (int64_t c = 0; c < C; c++) {
            const float *k = src + (f * C + c) * 9;
            double gw[6][3]; /* G w */
            for (int e = 0; e < al; e++)
                for (int b = 0; b < 3; b++)
                    gw[e][b] = ws->g[e][0] * k[b] + ws->g[e][1] * k[3 + b] + ws->g[e][2] * k[6 + b];
            for (int e1 = 0; e1 < al; e1++)
                for (int e2 = 0; e2 < al; e2++) {
                    double u = gw[e1][0] * ws->g[e2][0] + gw[e1][1] * ws->g[e2][1] + gw[e1][2] * ws->g[e2][2];
                    dst[((((int64_t)e1 * al + e2) * FO + f / fb) * C + c) * fb + f % fb] = (float)u;
                }
        }
}

/* Tap t of row r of the table: its position (an index) and coefficient (float32). */
static const weft_expr *tap_pos(weft_arena *a, const wino_taps *tb, const weft_expr *r, int t)
{
    const weft_expr *e = weft_i64(a, tb->pos[tb->rows - 1][t]);
    for (int k = tb->rows - 2; k >= 0; k--)
        e = weft_select(a, weft_cmp(a, WEFT_EXPR_EQ, r, weft_i64(a, k)), weft_i64(a, tb->pos[k][t]), e);
    return e;
}
static const weft_expr *tap_coef(weft_arena *a, const wino_taps *tb, const weft_expr *r, int t)
{
    const weft_expr *e = weft_f32(a, tb->coef[tb->rows - 1][t]);
    for (int k = tb->rows - 2; k >= 0; k--)
        e = weft_select(a, weft_cmp(a, WEFT_EXPR_EQ, r, weft_i64(a, k)), weft_f32(a, tb->coef[k][t]), e);
    return e;
}

static weft_tensor *winograd_stages(weft_arena *a, const char *name, const weft_tensor *X, const weft_tensor *U,
                                    const weft_tensor *B, const window *w, int64_t F)
{
    const wino_spec *ws = wino_spec_for(U->shape[0] - 2);
    if (!ws) return NULL;
    int64_t m = ws->m, al = m + 2;
    int64_t N = X->shape[0], C = X->shape[1], H = X->shape[2], W = X->shape[3];
    int64_t FO = U->shape[2], fb = U->shape[4];
    int64_t TH = (w->out[0] + m - 1) / m, TW = (w->out[1] + m - 1) / m;
    int64_t pshape[4] = {N, m * TH + 2, m * TW + 2, C};
    weft_tensor *P = weft_te_compute(a, weft_nn_stage(a, name, ".pad"), 4, pshape, (const char *const[]){"n", "h", "w", "c"});
    if (P) {
        const weft_expr *h = weft_te_axis(P, 1), *wv = weft_te_axis(P, 2), *cond = NULL, *x[2];
        const weft_expr *v[2] = {h, wv};
        int64_t ext[2] = {H, W};
        for (int i = 0; i < 2; i++) {
            const weft_expr *in = weft_cmp(a, WEFT_EXPR_LT, v[i], weft_i64(a, w->pb[i] + ext[i]));
            if (w->pb[i] > 0) in = weft_and(a, weft_cmp(a, WEFT_EXPR_GE, v[i], weft_i64(a, w->pb[i])), in);
            cond = cond ? weft_and(a, cond, in) : in;
            x[i] = weft_nn_clamp(a, w->pb[i] > 0 ? weft_sub(a, v[i], weft_i64(a, w->pb[i])) : v[i], 0, ext[i] - 1);
        }
        const weft_expr *ld = weft_te_at(a, X, weft_te_axis(P, 0), weft_te_axis(P, 3), x[0], x[1]);
        weft_te_set_body(P, WEFT_REDUCE_NONE, weft_select(a, cond, ld, weft_f32(a, 0.0)));
    }
    int64_t vshape[6] = {al, al, N, TH, TW, C};
    weft_tensor *V = weft_te_compute(a, weft_nn_stage(a, name, ".wino"), 6, vshape,
                                     (const char *const[]){"e1", "e2", "n", "th", "tw", "c"});
    if (V && P) {
        /* V[e1, e2] = sum_p cb(e1, p) sum_q cb(e2, q) d[pb(e1, p)][pb(e2, q)] */
        const weft_expr *e1 = weft_te_axis(V, 0), *e2 = weft_te_axis(V, 1), *nv = weft_te_axis(V, 2);
        const weft_expr *r0 = weft_mul(a, weft_te_axis(V, 3), weft_i64(a, m));
        const weft_expr *c0 = weft_mul(a, weft_te_axis(V, 4), weft_i64(a, m)), *c = weft_te_axis(V, 5);
        const weft_expr *sum = NULL;
        for (int p = 0; p < ws->bt.taps; p++) {
            const weft_expr *row = weft_add(a, r0, tap_pos(a, &ws->bt, e1, p)), *inner = NULL;
            for (int q = 0; q < ws->bt.taps; q++) {
                const weft_expr *col = weft_add(a, c0, tap_pos(a, &ws->bt, e2, q));
                const weft_expr *t = weft_mul(a, tap_coef(a, &ws->bt, e2, q), weft_te_at(a, P, nv, row, col, c));
                inner = inner ? weft_add(a, inner, t) : t;
            }
            const weft_expr *t = weft_mul(a, tap_coef(a, &ws->bt, e1, p), inner);
            sum = sum ? weft_add(a, sum, t) : t;
        }
        weft_te_set_body(V, WEFT_REDUCE_NONE, sum);
    }
    int64_t mshape[7] = {al, al, N, FO, TH, TW, fb};
    weft_tensor *M = weft_te_compute(a, weft_nn_stage(a, name, ".red"), 7, mshape,
                                     (const char *const[]){"e1", "e2", "n", "fo", "th", "tw", "fi"});
    if (M && V) {
        const weft_expr *idx[7];
        for (int d = 0; d < 7; d++) idx[d] = weft_te_axis(M, d);
        const weft_expr *rc = weft_te_reduce_axis(a, M, "rc", C);
        const weft_expr *vv = weft_tload(a, V, 6, (const weft_expr *[]){idx[0], idx[1], idx[2], idx[4], idx[5], rc});
        const weft_expr *uv = weft_tload(a, U, 5, (const weft_expr *[]){idx[0], idx[1], idx[3], rc, idx[6]});
        weft_te_set_body(M, WEFT_REDUCE_SUM, weft_mul(a, vv, uv));
    }
    weft_tensor *Y = weft_te_compute(a, name, 4, (int64_t[]){N, F, w->out[0], w->out[1]},
                                     (const char *const[]){"n", "f", "y", "x"});
    if (Y && M) {
        /* Y = sum_u ca(i, u) sum_v ca(j, v) M[pa(i, u), pa(j, v)] with i = y % m, j = x % m */
        const weft_expr *idx[4];
        weft_nn_axes(Y, idx);
        const weft_expr *mm = weft_i64(a, m), *blk = weft_i64(a, fb);
        const weft_expr *i = weft_floormod(a, idx[2], mm), *j = weft_floormod(a, idx[3], mm);
        const weft_expr *th = weft_floordiv(a, idx[2], mm), *tw = weft_floordiv(a, idx[3], mm);
        const weft_expr *fo = weft_floordiv(a, idx[1], blk), *fi = weft_floormod(a, idx[1], blk);
        const weft_expr *sum = NULL;
        for (int u = 0; u < ws->at.taps; u++) {
            const weft_expr *pu = tap_pos(a, &ws->at, i, u), *inner = NULL;
            for (int v = 0; v < ws->at.taps; v++) {
                const weft_expr *ld = weft_tload(
                    a, M, 7, (const weft_expr *[]){pu, tap_pos(a, &ws->at, j, v), idx[0], fo, th, tw, fi});
                const weft_expr *t = weft_mul(a, tap_coef(a, &ws->at, j, v), ld);
                inner = inner ? weft_add(a, inner, t) : t;
            }
            const weft_expr *t = weft_mul(a, tap_coef(a, &ws->at, i, u), inner);
            sum = sum ? weft_add(a, sum, t) : t;
        }
        weft_te_set_body(Y, WEFT_REDUCE_NONE, B ? weft_add(a, sum, weft_te_at(a, B, idx[1])) : sum);
    }
    return Y;
}

weft_status weft_nn_conv_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                 const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    if ((st = weft_nn_check_in(g, n, ins, 0)) != WEFT_OK || (st = weft_nn_check_in(g, n, ins, 1)) != WEFT_OK) return st;
    bool has_b = weft_nn_has_in(n, 2);
    if (has_b && (st = weft_nn_check_in(g, n, ins, 2)) != WEFT_OK) return st;
    const weft_tensor *X = ins[0], *Wt = ins[1];
    if (!strcmp(weft_gnode_attr_string(n, "weft_weight_layout", ""), "winograd")) {
        window w;
        int64_t F = weft_gnode_attr_int(n, "weft_conv_filters", 0);
        if ((st = window_params(n, X->shape + 2, (int64_t[]){3, 3}, true, &w)) != WEFT_OK) return st;
        if (Wt->ndim != 5 || !wino_spec_for(Wt->shape[0] - 2) || Wt->shape[1] != Wt->shape[0] || Wt->shape[3] != X->shape[1] || F < 1 ||
            F > Wt->shape[2] * Wt->shape[4] || w.s[0] != 1 || w.s[1] != 1 || w.d[0] != 1 || w.d[1] != 1)
            return weft_nn_fail(WEFT_ERR_INTERNAL, n, "Winograd weights %s do not fit %" PRId64 " filters over input %s",
                                weft_nn_shape_str(Wt->ndim, Wt->shape).s, F, weft_nn_shape_str(4, X->shape).s);
        outs[0] = winograd_stages(a, name, X, Wt, has_b ? ins[2] : NULL, &w, F);
        return weft_nn_done(a, n);
    }
    int64_t fb = filter_block(n), group = weft_gnode_attr_int(n, "group", 1);
    if (fb && (Wt->ndim != 5 || Wt->shape[4] != fb))
        return weft_nn_fail(WEFT_ERR_INTERNAL, n, "blocked weights %s do not match the block %" PRId64,
                            weft_nn_shape_str(Wt->ndim, Wt->shape).s, fb);
    int64_t kern[2] = {Wt->shape[2], Wt->shape[3]};
    window w;
    if ((st = window_params(n, X->shape + 2, kern, true, &w)) != WEFT_OK) return st;
    int64_t F = fb ? weft_gnode_attr_int(n, "weft_conv_filters", 0) : Wt->shape[0];
    if (fb && (F < 1 || F > Wt->shape[0] * fb || (group > 1 && (F / group) % fb)))
        return weft_nn_fail(WEFT_ERR_INTERNAL, n, "blocked weights %s do not hold %" PRId64 " filters in %" PRId64
                            " groups", weft_nn_shape_str(5, Wt->shape).s, F, group);
    bool flat = !fb && weft_gnode_attr_int(n, "weft_conv_pixels", 0) == 1;
    bool columns = !fb && !flat && weft_gnode_attr_int(n, "weft_conv_columns", 0) == 1;
    bool own_out = has_b || fb || flat || columns;
    weft_conv2d_spec spec = {.pad_name = weft_nn_stage(a, name, ".pad"),
                             .red_name = own_out ? weft_nn_stage(a, name, ".red") : name,
                             .out_name = name,
                             .w = w,
                             .group = group,
                             .fb = fb,
                             .F = F,
                             .flat = flat,
                             .columns = columns};
    outs[0] = weft_conv2d_stages(a, &spec, X, Wt, has_b ? ins[2] : NULL);
    return weft_nn_done(a, n);
}

weft_tensor *weft_conv2d_stages(weft_arena *a, const weft_conv2d_spec *spec, const weft_tensor *X,
                                const weft_tensor *Wt, const weft_tensor *B)
{
    if (!X || !Wt) return NULL;
    window w = spec->w;
    int64_t fb = spec->fb, group = spec->group, F = spec->F;
    bool has_b = B != NULL;
    int64_t cpg = Wt->shape[1], fpg = F / group; /* input channels and filters per group */
    /* Taps that only ever read the zero padding (small images: a 3x3 kernel over a 1x1 image
     * reads one tap) are dropped, and padding no remaining tap reads is not materialized:
     * along each dim (dilation 1) taps [t0, t0 + nt) remain and P is padded by pw.pb/pw.pe. */
    window pw = w;
    int64_t t0[2] = {0, 0}, nt[2] = {w.k[0], w.k[1]};
    for (int i = 0; i < 2; i++) {
        if (w.d[i] != 1) continue;
        int64_t last = (w.out[i] - 1) * w.s[i]; /* the last window's start, in padded coordinates */
        int64_t lo = w.pb[i] - last > 0 ? w.pb[i] - last : 0;
        int64_t hi = w.in[i] - 1 + w.pb[i] < w.k[i] - 1 ? w.in[i] - 1 + w.pb[i] : w.k[i] - 1;
        int64_t end = last + hi - w.pb[i] - (w.in[i] - 1); /* past the input's end */
        t0[i] = lo, nt[i] = hi - lo + 1;
        pw.pb[i] = w.pb[i] - lo;
        pw.pe[i] = end > 0 ? end : 0;
    }
    /* depthwise, or a conv over output columns: columns in vectors, so a column stride splits
     * the padded input by phase */
    bool dw = !fb && ((cpg == 1 && group > 1) || spec->columns) && w.d[1] == 1;
    const weft_tensor *P = pad_stage(a, spec->pad_name, X, &pw, weft_f32(a, 0.0), dw ? w.s[1] : 1);

    /* Blocked: the reduction runs over [N, F/fb, OH, OW, fb] (filters innermost, as the weights)
     * and an injective stage reads it back as NCHW (plus the bias). Flat (a pointwise conv
     * whose weights stay [F, C, 1, 1]): over [N, F, OH*OW], read back the same way. */
    int64_t shape[4] = {X->shape[0], F, w.out[0], w.out[1]};
    bool pointwise = group == 1 && w.k[0] == 1 && w.k[1] == 1 && w.s[0] == 1 && w.s[1] == 1 && P == X &&
                     w.out[0] == X->shape[2] && w.out[1] == X->shape[3];
    bool flat = spec->flat && !fb && pointwise;
    /* Blocked and pointwise over rows of more than one column: the pixels fused as well, R [N,
     * F/fb, OH*OW, 1, fb], so register tiles run along the whole plane instead of within a row
     * (a 7-column row in tiles of 6 computed 12 columns for 7). */
    bool bflat = fb && pointwise && w.out[1] > 1 && w.out[0] > 1;
    int64_t rshape[5] = {X->shape[0], fb ? Wt->shape[0] : F, w.out[0], w.out[1], fb};
    if (flat || bflat) rshape[2] = w.out[0] * w.out[1];
    if (bflat) rshape[3] = 1;
    bool own_out = has_b || fb || flat || spec->columns;
    weft_tensor *R = weft_te_compute(a, own_out ? spec->red_name : spec->out_name, fb ? 5 : flat ? 3 : 4, rshape,
                                     (const char *const[]){"n", fb ? "fo" : "f", flat || bflat ? "p" : "y", "x", "fi"});
    if (R) {
        const weft_expr *nv = weft_te_axis(R, 0), *f = weft_te_axis(R, 1);
        const weft_expr *ow = weft_i64(a, w.out[1]);
        const weft_expr *y = flat || bflat ? weft_floordiv(a, weft_te_axis(R, 2), ow) : weft_te_axis(R, 2);
        const weft_expr *x = flat || bflat ? weft_floormod(a, weft_te_axis(R, 2), ow) : weft_te_axis(R, 3);
        const weft_expr *rc = cpg > 1 ? weft_te_reduce_axis(a, R, "rc", cpg) : weft_i64(a, 0);
        const weft_expr *ry = weft_te_reduce_axis(a, R, "ry", nt[0]);
        const weft_expr *rx = weft_te_reduce_axis(a, R, "rx", nt[1]);
        /* input channel: rc, or (f / fpg) * cpg + rc with groups (blocked: fo / (fpg / fb)) */
        const weft_expr *cin = rc;
        if (group > 1) {
            int64_t per = fb ? fpg / fb : fpg;
            const weft_expr *grp = per == 1 ? f : weft_floordiv(a, f, weft_i64(a, per));
            cin = cpg == 1 ? grp : weft_add(a, weft_mul(a, grp, weft_i64(a, cpg)), rc);
        }
        const weft_expr *ih = window_index(a, y, w.s[0], ry, w.d[0]);
        const weft_expr *ky = t0[0] ? weft_add(a, ry, weft_i64(a, t0[0])) : ry;
        const weft_expr *kx = t0[1] ? weft_add(a, rx, weft_i64(a, t0[1])) : rx;
        const weft_expr *wv = fb ? weft_tload(a, Wt, 5, (const weft_expr *[]){f, rc, ky, kx, weft_te_axis(R, 4)})
                                 : weft_te_at(a, Wt, f, rc, ky, kx);
        weft_te_set_body(R, WEFT_REDUCE_SUM, weft_mul(a, read_window(a, P, nv, cin, ih, x, w.s[1], rx, w.d[1]), wv));
    }
    weft_tensor *Y = R;
    if (own_out) {
        Y = weft_te_compute(a, spec->out_name, 4, shape, (const char *const[]){"n", "f", "y", "x"});
        if (Y && R) {
            const weft_expr *idx[4];
            weft_nn_axes(Y, idx);
            const weft_expr *v;
            /* fused pixels (flat, bflat): y * OW + x */
            const weft_expr *pix = flat || bflat ? weft_add(a, weft_mul(a, idx[2], weft_i64(a, w.out[1])), idx[3]) : NULL;
            if (fb) {
                const weft_expr *blk = weft_i64(a, fb);
                v = weft_tload(a, R, 5,
                               (const weft_expr *[]){idx[0], weft_floordiv(a, idx[1], blk), bflat ? pix : idx[2],
                                                     bflat ? weft_i64(a, 0) : idx[3], weft_floormod(a, idx[1], blk)});
            } else if (flat) {
                v = weft_tload(a, R, 3, (const weft_expr *[]){idx[0], idx[1], pix});
            } else v = weft_tload(a, R, 4, idx);
            weft_te_set_body(Y, WEFT_REDUCE_NONE, has_b ? weft_add(a, v, weft_te_at(a, B, idx[1])) : v);
        }
    }
    return Y;
}

/* ---- BatchNormalization ------------------------------------------------------------------ */

weft_status weft_nn_batchnorm_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 5, 5, 1, 1);
    if (st != WEFT_OK) return st;
    if (weft_gnode_attr_int(n, "training_mode", 0) != 0)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "training_mode=1 is not supported (inference only)");
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, X, "input X", WEFT_NN_F32)) != WEFT_OK) return st;
    if (X->ndim < 2)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input X has %d dims %s, expected at least 2 (N, C, ...)", X->ndim,
                            weft_nn_shape_str(X->ndim, X->shape).s);
    static const char *const what[5] = {"X", "scale", "B", "mean", "var"};
    for (int i = 1; i < 5; i++) {
        const weft_gvalue *p = weft_nn_in(g, n, i);
        if ((st = weft_nn_check_dtype(n, p, what[i], WEFT_NN_F32)) != WEFT_OK) return st;
        if (p->ndim != 1 || p->shape[0] != X->shape[1])
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "input %s has shape %s, expected [C] = [%" PRId64 "]", what[i],
                                weft_nn_shape_str(p->ndim, p->shape).s, X->shape[1]);
    }
    return weft_nn_set_out(g, n, 0, WEFT_F32, X->ndim, X->shape);
}

weft_status weft_nn_batchnorm_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                      const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    for (int i = 0; i < 5; i++)
        if ((st = weft_nn_check_in(g, n, ins, i)) != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    double eps = weft_gnode_attr_float(n, "epsilon", 1e-5);
    weft_tensor *Y = weft_nn_compute(a, name, X->ndim, X->shape);
    if (Y) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, idx);
        const weft_expr *c = idx[1];
        /* (x - mean) * scale * rsqrt(var + eps) + B */
        const weft_expr *var_eps = weft_add(a, weft_te_at(a, ins[4], c), weft_f32(a, eps));
        const weft_expr *rstd = weft_call1(a, WEFT_INTRIN_RSQRT, var_eps);
        const weft_expr *centred = weft_sub(a, weft_tload(a, X, X->ndim, idx), weft_te_at(a, ins[3], c));
        const weft_expr *scaled = weft_mul(a, centred, weft_mul(a, weft_te_at(a, ins[1], c), rstd));
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_add(a, scaled, weft_te_at(a, ins[2], c)));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- MaxPool, AveragePool ---------------------------------------------------------------- */

static bool is_max_pool(const weft_gnode *n) { return strstr(n->op_type, "Max") != NULL; }

weft_status weft_nn_pool_infer(weft_graph *g, const weft_gnode *n)
{
    /* MaxPool's optional second output: Indices (int64, the position of each window's maximum
     * in the flattened input, ((n*C + c)*H + h)*W + w; the first in row-major window order on
     * ties, as ONNX Runtime and PyTorch pick it) */
    weft_status st = weft_nn_check_arity(n, 1, 1, 1, is_max_pool(n) ? 2 : 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, X, "input X", WEFT_NN_F32)) != WEFT_OK) return st;
    if (X->ndim != 4)
        return weft_nn_fail(X->ndim == 3 || X->ndim == 5 ? WEFT_ERR_UNSUPPORTED : WEFT_ERR_SHAPE, n,
                            "input X has %d dims %s, expected 4 (NCHW; only 2-D pooling is supported)", X->ndim,
                            weft_nn_shape_str(X->ndim, X->shape).s);
    if (weft_gnode_attr_int(n, "storage_order", 0) != 0)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "storage_order=1 is not supported");
    window w;
    if ((st = window_params(n, X->shape + 2, NULL, is_max_pool(n), &w)) != WEFT_OK) return st;
    const int64_t shape[4] = {X->shape[0], X->shape[1], w.out[0], w.out[1]};
    if (n->n_outputs == 2 && (st = weft_nn_set_out(g, n, 1, WEFT_I64, 4, shape)) != WEFT_OK) return st;
    return weft_nn_set_out(g, n, 0, WEFT_F32, 4, shape);
}

/* Taps of an average window along one dim that count in its divisor: those inside the input
 * (count_include_pad=0), min(v*s - pb + k, in) - max(v*s - pb, 0); or (count_include_pad=1)
 * those inside the padded input but not in ceil_mode's extra end padding, min(v*s - pb + k,
 * in + pe) - (v*s - pb). */
static const weft_expr *valid_taps(weft_arena *a, const weft_expr *v, const window *w, int i, bool incl)
{
    const weft_expr *base = w->s[i] == 1 ? v : weft_mul(a, v, weft_i64(a, w->s[i]));
    const weft_expr *start = weft_sub(a, base, weft_i64(a, w->pb[i]));
    int64_t limit = incl ? w->in[i] + w->pe[i] - w->ceil_extra[i] : w->in[i];
    const weft_expr *end = weft_min(a, weft_add(a, start, weft_i64(a, w->k[i])), weft_i64(a, limit));
    return weft_sub(a, end, incl ? start : weft_max(a, start, weft_i64(a, 0)));
}

weft_status weft_nn_pool_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                 const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    bool is_max = is_max_pool(n);
    window w;
    if ((st = window_params(n, X->shape + 2, NULL, is_max, &w)) != WEFT_OK) return st;
    weft_reduce_kind rk = is_max ? WEFT_REDUCE_MAX : WEFT_REDUCE_SUM;
    const weft_tensor *P = pad_stage(a, weft_nn_stage(a, name, ".pad"), X, &w,
                                     weft_te_reduce_identity(a, rk, WEFT_F32), w.d[1] == 1 ? w.s[1] : 1);
    int64_t shape[4] = {X->shape[0], X->shape[1], w.out[0], w.out[1]};
    const char *const axes[4] = {"n", "c", "y", "x"};
    weft_tensor *R = weft_te_compute(a, is_max ? name : weft_nn_stage(a, name, ".sum"), 4, shape, axes);
    if (R) {
        const weft_expr *idx[4];
        weft_nn_axes(R, idx);
        const weft_expr *ry = weft_te_reduce_axis(a, R, "ry", w.k[0]);
        const weft_expr *rx = weft_te_reduce_axis(a, R, "rx", w.k[1]);
        weft_te_set_body(R, rk,
                         read_window(a, P, idx[0], idx[1], window_index(a, idx[2], w.s[0], ry, w.d[0]), idx[3],
                                     w.s[1], rx, w.d[1]));
    }
    weft_tensor *Y = R;
    if (!is_max) {
        Y = weft_te_compute(a, name, 4, shape, axes);
        if (Y) {
            const weft_expr *idx[4];
            weft_nn_axes(Y, idx);
            const weft_expr *sum = weft_tload(a, R, 4, idx), *v;
            bool padded = w.pb[0] || w.pb[1] || w.pe[0] || w.pe[1];
            bool incl = weft_gnode_attr_int(n, "count_include_pad", 0) != 0;
            if (!padded || (incl && !w.ceil_extra[0] && !w.ceil_extra[1])) {
                v = weft_mul(a, sum, weft_f32(a, 1.0 / (double)(w.k[0] * w.k[1])));
            } else {
                const weft_expr *cnt =
                    weft_mul(a, valid_taps(a, idx[2], &w, 0, incl), valid_taps(a, idx[3], &w, 1, incl));
                v = weft_div(a, sum, weft_cast(a, WEFT_F32, cnt));
            }
            weft_te_set_body(Y, WEFT_REDUCE_NONE, v);
        }
    }
    outs[0] = Y;
    if (is_max && n->n_outputs == 2 && R) {
        /* Indices: the lowest flat position in the window whose element equals the maximum (an
         * element not below it: a window whose maximum is NaN points at its first tap) */
        weft_tensor *I = weft_te_compute(a, weft_arena_printf(a, "%s.1", name), 4, shape, axes);
        if (I) {
            const weft_expr *idx[4];
            weft_nn_axes(I, idx);
            const weft_expr *ry = weft_te_reduce_axis(a, I, "ry", w.k[0]);
            const weft_expr *rx = weft_te_reduce_axis(a, I, "rx", w.k[1]);
            const weft_expr *ih = weft_sub(a, window_index(a, idx[2], w.s[0], ry, w.d[0]), weft_i64(a, w.pb[0]));
            const weft_expr *iw = weft_sub(a, window_index(a, idx[3], w.s[1], rx, w.d[1]), weft_i64(a, w.pb[1]));
            const weft_expr *inside =
                weft_and(a,
                         weft_and(a, weft_cmp(a, WEFT_EXPR_GE, ih, weft_i64(a, 0)),
                                  weft_cmp(a, WEFT_EXPR_LT, ih, weft_i64(a, X->shape[2]))),
                         weft_and(a, weft_cmp(a, WEFT_EXPR_GE, iw, weft_i64(a, 0)),
                                  weft_cmp(a, WEFT_EXPR_LT, iw, weft_i64(a, X->shape[3]))));
            const weft_expr *hc = weft_nn_clamp(a, ih, 0, X->shape[2] - 1), *wc = weft_nn_clamp(a, iw, 0, X->shape[3] - 1);
            const weft_expr *x = weft_te_at(a, X, idx[0], idx[1], hc, wc);
            const weft_expr *hit = weft_and(a, inside, weft_not(a, weft_cmp(a, WEFT_EXPR_LT, x, weft_tload(a, R, 4, idx))));
            const weft_expr *flat = weft_add(
                a, weft_mul(a, weft_add(a, weft_mul(a, weft_add(a, weft_mul(a, idx[0], weft_i64(a, X->shape[1])), idx[1]),
                                                    weft_i64(a, X->shape[2])),
                                        hc),
                            weft_i64(a, X->shape[3])),
                wc);
            weft_te_set_body(I, WEFT_REDUCE_MIN, weft_select(a, hit, flat, weft_i64(a, INT64_MAX)));
        }
        outs[1] = I;
    }
    return weft_nn_done(a, n);
}

/* ---- GlobalAveragePool, GlobalMaxPool ---------------------------------------------------- */

weft_status weft_nn_global_pool_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 1, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, X, "input X", WEFT_NN_F32)) != WEFT_OK) return st;
    if (X->ndim < 3)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input X has %d dims %s, expected at least 3 (N, C, spatial...)",
                            X->ndim, weft_nn_shape_str(X->ndim, X->shape).s);
    int64_t shape[WEFT_NN_MAX_DIMS];
    for (int d = 0; d < X->ndim; d++) shape[d] = d < 2 ? X->shape[d] : 1;
    return weft_nn_set_out(g, n, 0, WEFT_F32, X->ndim, shape);
}

weft_status weft_nn_global_pool_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                        const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    bool is_max = is_max_pool(n);
    int ns = X->ndim - 2;
    int64_t count = 1;
    for (int d = 0; d < ns; d++) count *= X->shape[2 + d];
    /* the reduction over [N, C] (no extent-1 output axes, so it classifies as REDUCTION), the
     * spatial dims one axis "p" (lowering recombines its parts, so the plane is one contiguous
     * run the default schedule sums in vectors even when rows are shorter than a vector) */
    bool reduced[WEFT_NN_MAX_DIMS];
    for (int d = 0; d < X->ndim; d++) reduced[d] = d >= 2;
    const weft_expr *idx[WEFT_NN_MAX_DIMS];
    weft_tensor *R = weft_nn_reduce_stage(a, weft_nn_stage(a, name, ".red"), X, reduced, "p", idx);
    if (R) weft_te_set_body(R, is_max ? WEFT_REDUCE_MAX : WEFT_REDUCE_SUM, weft_tload(a, X, X->ndim, idx));
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    weft_tensor *Y = weft_nn_compute(a, name, out->ndim, out->shape);
    if (Y) {
        const weft_expr *v = weft_te_at(a, R, weft_te_axis(Y, 0), weft_te_axis(Y, 1));
        if (!is_max) v = weft_mul(a, v, weft_f32(a, 1.0 / (double)count));
        weft_te_set_body(Y, WEFT_REDUCE_NONE, v);
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}
