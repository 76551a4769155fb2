/* GridSample (opset 16; opset 20's mode names "linear" and "cubic" are accepted too): the 2-D
 * spatial sampler of spatial transformers and flow warping, with PyTorch's F.grid_sample as the
 * reference (CPU kernel, float32).
 *
 * X [N, C, H, W] and grid [N, Ho, Wo, 2] (x then y, normalized to [-1, 1]) give Y [N, C, Ho, Wo].
 * Per output (n, c, ho, wo) one stage reads the grid point and samples X there: the reads of X
 * are data-dependent gathers, X[n, c, iy, ix] with iy, ix computed from tloads of the grid (as
 * Gather's run-time indices are), so the interpreter, LLVM and GPU targets all run it. Every
 * gathered index is clamped into X; a tap that padding_mode=zeros puts outside reads 0 through a
 * select on its bounds test.
 *
 * Source coordinate along an axis of extent `size` (PyTorch's ComputeLocation):
 *   align_corners=1: (g + 1) * ((size - 1) / 2)     align_corners=0: (g + 1) * (size / 2) - 0.5
 * then padding_mode border clips it to [0, size - 1], and reflection reflects it about the
 * bounds (0, size - 1) or (-0.5, size - 0.5) with period twice the span, then clips.
 *   bilinear  taps floor(x), floor(x) + 1 with weights 1 - t, t (t = x - floor(x)); zeros masks
 *             each tap, border and reflection only the one past the end (weight 0 there).
 *   nearest   round half to even (PyTorch's nearbyint) of the padded coordinate.
 *   bicubic   taps floor(x) - 1 .. floor(x) + 2 of the unpadded coordinate, Keys' weights with
 *             A = -0.75; each tap's integer index is padded on its own (zeros: masked, border:
 *             clamped, reflection: reflected in integer arithmetic, exact for integer taps).
 * Before an index is formed the coordinate is clamped in float to a range where clamping changes
 * no result (padded coordinates: [0, size - 1]; zeros, and bicubic's border: [-4, size + 2], every
 * tap beyond it reads 0 or the edge; bicubic's reflection: +-2^24), so no float-to-int
 * conversion overflows on a far-off or infinite grid value (the clamps are ordered compares: a
 * NaN grid value becomes the range's low end).
 * Refused: other ranks (5-D volumetric sampling included), non-float32 inputs, N mismatch.
 */
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

typedef enum gs_mode { GS_BILINEAR, GS_NEAREST, GS_BICUBIC } gs_mode;
typedef enum gs_pad { GS_ZEROS, GS_BORDER, GS_REFLECTION } gs_pad;

typedef struct gs_params {
    gs_mode mode;
    gs_pad pad;
    bool align; /* align_corners */
} gs_params;

static weft_status read_params(const weft_gnode *n, gs_params *p)
{
    weft_status st = weft_nn_attr_flag(n, "align_corners", 0, &p->align);
    if (st != WEFT_OK) return st;
    const char *mode = weft_gnode_attr_string(n, "mode", "bilinear");
    if (strcmp(mode, "bilinear") == 0 || strcmp(mode, "linear") == 0) p->mode = GS_BILINEAR;
    else if (strcmp(mode, "nearest") == 0) p->mode = GS_NEAREST;
    else if (strcmp(mode, "bicubic") == 0 || strcmp(mode, "cubic") == 0) p->mode = GS_BICUBIC;
    else
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute mode='%s', expected bilinear, nearest or bicubic",
                            mode);
    const char *pad = weft_gnode_attr_string(n, "padding_mode", "zeros");
    if (strcmp(pad, "zeros") == 0) p->pad = GS_ZEROS;
    else if (strcmp(pad, "border") == 0) p->pad = GS_BORDER;
    else if (strcmp(pad, "reflection") == 0) p->pad = GS_REFLECTION;
    else
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n,
                            "attribute padding_mode='%s', expected zeros, border or reflection", pad);
    return WEFT_OK;
}

weft_status weft_nn_grid_sample_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 2, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0), *G = weft_nn_in(g, n, 1);
    if ((st = weft_nn_check_dtype(n, X, "input X", WEFT_NN_F32)) != WEFT_OK) return st;
    if ((st = weft_nn_check_dtype(n, G, "input grid", WEFT_NN_F32)) != WEFT_OK) return st;
    if (X->ndim == 5 && G->ndim == 5)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "5-D (volumetric) sampling of X %s is not supported, only 4-D",
                            weft_nn_shape_str(X->ndim, X->shape).s);
    if ((st = weft_nn_check_rank(n, X, "input X", 4, "[N, C, H, W]")) != WEFT_OK) return st;
    if ((st = weft_nn_check_rank(n, G, "input grid", 4, "[N, H_out, W_out, 2]")) != WEFT_OK) return st;
    if (G->shape[3] != 2)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input grid %s has last dim %lld, expected 2 (x, y)",
                            weft_nn_shape_str(G->ndim, G->shape).s, (long long)G->shape[3]);
    if (G->shape[0] != X->shape[0])
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input grid %s has batch %lld, input X %s has %lld",
                            weft_nn_shape_str(G->ndim, G->shape).s, (long long)G->shape[0],
                            weft_nn_shape_str(X->ndim, X->shape).s, (long long)X->shape[0]);
    gs_params p;
    if ((st = read_params(n, &p)) != WEFT_OK) return st;
    int64_t shape[4] = {X->shape[0], X->shape[1], G->shape[1], G->shape[2]};
    return weft_nn_set_out(g, n, 0, WEFT_F32, 4, shape);
}

/* ---- coordinates --------------------------------------------------------------------------- */

/* The grid value g (in [-1, 1] for the inside) as a source coordinate along an axis of extent size. */
static const weft_expr *unnormalize(weft_arena *a, const gs_params *p, const weft_expr *g, int64_t size)
{
    const weft_expr *g1 = weft_add(a, g, weft_f32(a, 1.0));
    if (p->align) return weft_mul(a, g1, weft_f32(a, (double)(float)(size - 1) / 2.0));
    return weft_sub(a, weft_mul(a, g1, weft_f32(a, (double)(float)size / 2.0)), weft_f32(a, 0.5));
}

/* x reflected into the span [low, low + span] (period 2 * span), as PyTorch's
 * reflect_coordinates: |x - low| folded by its whole double flips, then mirrored. */
static const weft_expr *reflect(weft_arena *a, const gs_params *p, const weft_expr *x, int64_t size)
{
    double low = p->align ? 0.0 : -0.5, twice = p->align ? 2.0 * (double)(size - 1) : 2.0 * (double)size;
    if (twice <= 0) return weft_f32(a, 0.0);
    const weft_expr *t = weft_f32(a, twice);
    const weft_expr *d = weft_call1(a, WEFT_INTRIN_FABS, weft_sub(a, x, weft_f32(a, low)));
    const weft_expr *flips = weft_call1(a, WEFT_INTRIN_FLOOR, weft_div(a, d, t));
    const weft_expr *extra = weft_sub(a, d, weft_mul(a, flips, t));
    return weft_add(a, weft_min(a, extra, weft_sub(a, t, extra)), weft_f32(a, low));
}

/* The padded coordinate: border and reflection end clipped to [0, size - 1]; zeros is left as
 * is up to the conversion-safe clamp (every tap past it reads 0 either way). */
static const weft_expr *pad_coord(weft_arena *a, const gs_params *p, const weft_expr *x, int64_t size)
{
    switch (p->pad) {
    case GS_BORDER: return weft_nn_clamp_float(a, x, 0.0, (double)(size - 1));
    case GS_REFLECTION: return weft_nn_clamp_float(a, reflect(a, p, x, size), 0.0, (double)(size - 1));
    default: return weft_nn_clamp_float(a, x, -4.0, (double)size + 2.0);
    }
}

/* 0 <= i < size, on int64 indices. */
static const weft_expr *inside(weft_arena *a, const weft_expr *i, int64_t size)
{
    return weft_and(a, weft_cmp(a, WEFT_EXPR_GE, i, weft_i64(a, 0)), weft_cmp(a, WEFT_EXPR_LT, i, weft_i64(a, size)));
}

static const weft_expr *and_opt(weft_arena *a, const weft_expr *x, const weft_expr *y)
{
    return !x ? y : !y ? x : weft_and(a, x, y);
}

/* X[n, c, iy, ix] with both indices clamped into X; 0 where `ok` (NULL: always) is false. */
static const weft_expr *tap(weft_arena *a, const weft_tensor *X, const weft_expr *const *o, const weft_expr *iy,
                            const weft_expr *ix, const weft_expr *ok)
{
    const weft_expr *x[4] = {o[0], o[1], weft_nn_clamp(a, iy, 0, X->shape[2] - 1),
                             weft_nn_clamp(a, ix, 0, X->shape[3] - 1)};
    const weft_expr *v = weft_tload(a, X, 4, x);
    return ok ? weft_select(a, ok, v, weft_f32(a, 0.0)) : v;
}

/* ---- modes ------------------------------------------------------------------------------- */

static const weft_expr *sample_nearest(weft_arena *a, const gs_params *p, const weft_tensor *X,
                                       const weft_expr *const *o, const weft_expr *x, const weft_expr *y)
{
    const weft_expr *ix = weft_cast(a, WEFT_I64, weft_call1(a, WEFT_INTRIN_ROUND, x));
    const weft_expr *iy = weft_cast(a, WEFT_I64, weft_call1(a, WEFT_INTRIN_ROUND, y));
    const weft_expr *ok = p->pad == GS_ZEROS ? weft_and(a, inside(a, ix, X->shape[3]), inside(a, iy, X->shape[2]))
                                             : NULL;
    return tap(a, X, o, iy, ix, ok);
}

/* PyTorch's order: nw * v_nw + ne * v_ne + sw * v_sw + se * v_se, with nw = (1 - ty)(1 - tx) ... */
static const weft_expr *sample_bilinear(weft_arena *a, const gs_params *p, const weft_tensor *X,
                                        const weft_expr *const *o, const weft_expr *x, const weft_expr *y)
{
    int64_t H = X->shape[2], W = X->shape[3];
    const weft_expr *fx = weft_call1(a, WEFT_INTRIN_FLOOR, x), *fy = weft_call1(a, WEFT_INTRIN_FLOOR, y);
    const weft_expr *one = weft_f32(a, 1.0);
    const weft_expr *tw = weft_sub(a, x, fx), *te = weft_sub(a, one, tw);
    const weft_expr *tn = weft_sub(a, y, fy), *ts = weft_sub(a, one, tn);
    const weft_expr *ix[2], *iy[2], *okx[2], *oky[2];
    ix[0] = weft_cast(a, WEFT_I64, fx);
    iy[0] = weft_cast(a, WEFT_I64, fy);
    ix[1] = weft_add(a, ix[0], weft_i64(a, 1));
    iy[1] = weft_add(a, iy[0], weft_i64(a, 1));
    bool zeros = p->pad == GS_ZEROS;
    /* border and reflection keep floor(x) inside; only the tap after it may fall past the end */
    okx[0] = zeros ? inside(a, ix[0], W) : NULL;
    oky[0] = zeros ? inside(a, iy[0], H) : NULL;
    okx[1] = zeros ? inside(a, ix[1], W) : weft_cmp(a, WEFT_EXPR_LT, ix[1], weft_i64(a, W));
    oky[1] = zeros ? inside(a, iy[1], H) : weft_cmp(a, WEFT_EXPR_LT, iy[1], weft_i64(a, H));
    const weft_expr *wy[2] = {ts, tn}, *wx[2] = {te, tw}, *acc = NULL;
    for (int r = 0; r < 2; r++)
        for (int s = 0; s < 2; s++) {
            const weft_expr *v = tap(a, X, o, iy[r], ix[s], and_opt(a, oky[r], okx[s]));
            const weft_expr *term = weft_mul(a, v, weft_mul(a, wy[r], wx[s]));
            acc = acc ? weft_add(a, acc, term) : term;
        }
    return acc;
}

/* Keys' cubic convolution weights of the taps at -1, 0, 1, 2 for the fraction t (A = -0.75),
 * written as PyTorch's get_cubic_coefficients. */
static void cubic_weights(weft_arena *a, const weft_expr *t, const weft_expr **w)
{
    const double A = -0.75;
    const weft_expr *one = weft_f32(a, 1.0);
    const weft_expr *near[2] = {t, weft_sub(a, one, t)};
    const weft_expr *far[2] = {weft_add(a, t, one), weft_sub(a, weft_f32(a, 2.0), t)};
    for (int k = 0; k < 2; k++) {
        const weft_expr *x = near[k]; /* |x| <= 1: ((A + 2) x - (A + 3)) x x + 1 */
        w[1 + k] = weft_add(a, weft_mul(a, weft_mul(a, weft_sub(a, weft_mul(a, weft_f32(a, A + 2), x),
                                                                 weft_f32(a, A + 3)), x), x), one);
        x = far[k]; /* 1 < |x| < 2: ((A x - 5A) x + 8A) x - 4A */
        const weft_expr *q = weft_add(a, weft_mul(a, weft_sub(a, weft_mul(a, weft_f32(a, A), x), weft_f32(a, 5 * A)),
                                                  x), weft_f32(a, 8 * A));
        w[k ? 3 : 0] = weft_sub(a, weft_mul(a, q, x), weft_f32(a, 4 * A));
    }
}

/* The integer tap c padded along an axis of extent size; *ok is its bounds test under zeros
 * (NULL otherwise). Reflection folds c with the period of PyTorch's float reflection, which it
 * equals for integer c: about -0.5 and size - 0.5 (align_corners=0) or 0 and size - 1. */
static const weft_expr *pad_index(weft_arena *a, const gs_params *p, const weft_expr *c, int64_t size,
                                  const weft_expr **ok)
{
    *ok = NULL;
    if (p->pad == GS_ZEROS) {
        *ok = inside(a, c, size);
        return c;
    }
    if (p->pad == GS_BORDER || (p->align && size == 1)) return c; /* tap() clamps */
    int64_t period = p->align ? 2 * (size - 1) : 2 * size;
    const weft_expr *m = weft_floormod(a, c, weft_i64(a, period));
    return weft_select(a, weft_cmp(a, WEFT_EXPR_LT, m, weft_i64(a, size)), m,
                       weft_sub(a, weft_i64(a, p->align ? period : period - 1), m));
}

/* sum over rows i of wy[i] * (sum over columns j of wx[j] * X[tap]), PyTorch's order. */
static const weft_expr *sample_bicubic(weft_arena *a, const gs_params *p, const weft_tensor *X,
                                       const weft_expr *const *o, const weft_expr *x, const weft_expr *y)
{
    int64_t H = X->shape[2], W = X->shape[3];
    /* far-off coordinates: every tap reads 0 (zeros) or the edge (border); reflection keeps the
     * int64 arithmetic exact */
    double big = 16777216.0;
    x = p->pad == GS_REFLECTION ? weft_nn_clamp_float(a, x, -big, big) : weft_nn_clamp_float(a, x, -4.0, (double)W + 2.0);
    y = p->pad == GS_REFLECTION ? weft_nn_clamp_float(a, y, -big, big) : weft_nn_clamp_float(a, y, -4.0, (double)H + 2.0);
    const weft_expr *fx = weft_call1(a, WEFT_INTRIN_FLOOR, x), *fy = weft_call1(a, WEFT_INTRIN_FLOOR, y);
    const weft_expr *wx[4], *wy[4], *ix[4], *iy[4], *okx[4], *oky[4];
    cubic_weights(a, weft_sub(a, x, fx), wx);
    cubic_weights(a, weft_sub(a, y, fy), wy);
    const weft_expr *bx = weft_cast(a, WEFT_I64, fx), *by = weft_cast(a, WEFT_I64, fy);
    for (int k = 0; k < 4; k++) {
        ix[k] = pad_index(a, p, weft_add(a, bx, weft_i64(a, k - 1)), W, &okx[k]);
        iy[k] = pad_index(a, p, weft_add(a, by, weft_i64(a, k - 1)), H, &oky[k]);
    }
    const weft_expr *acc = NULL;
    for (int i = 0; i < 4; i++) {
        const weft_expr *row = NULL;
        for (int j = 0; j < 4; j++) {
            const weft_expr *term = weft_mul(a, wx[j], tap(a, X, o, iy[i], ix[j], and_opt(a, oky[i], okx[j])));
            row = row ? weft_add(a, row, term) : term;
        }
        const weft_expr *term = weft_mul(a, wy[i], row);
        acc = acc ? weft_add(a, acc, term) : term;
    }
    return acc;
}

weft_status weft_nn_grid_sample_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                        const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    for (int i = 0; i < 2; i++)
        if ((st = weft_nn_check_in(g, n, ins, i)) != WEFT_OK) return st;
    const weft_tensor *X = ins[0], *G = ins[1];
    gs_params p;
    if ((st = read_params(n, &p)) != WEFT_OK) return st;
    int64_t H = X->shape[2], W = X->shape[3];
    int64_t shape[4] = {X->shape[0], X->shape[1], G->shape[1], G->shape[2]};
    weft_tensor *Y = weft_nn_compute(a, name, 4, shape);
    if (!Y) return weft_nn_done(a, n);
    const weft_expr *o[4];
    weft_nn_axes(Y, o);
    const weft_expr *gi[4] = {o[0], o[2], o[3], weft_i64(a, 0)};
    const weft_expr *gx = weft_tload(a, G, 4, gi);
    gi[3] = weft_i64(a, 1);
    const weft_expr *gy = weft_tload(a, G, 4, gi);
    const weft_expr *x = unnormalize(a, &p, gx, W), *y = unnormalize(a, &p, gy, H), *body;
    if (p.mode == GS_BICUBIC) body = sample_bicubic(a, &p, X, o, x, y);
    else {
        x = pad_coord(a, &p, x, W);
        y = pad_coord(a, &p, y, H);
        body = p.mode == GS_NEAREST ? sample_nearest(a, &p, X, o, x, y) : sample_bilinear(a, &p, X, o, x, y);
    }
    weft_te_set_body(Y, WEFT_REDUCE_NONE, body);
    outs[0] = Y;
    return weft_nn_done(a, n);
}
