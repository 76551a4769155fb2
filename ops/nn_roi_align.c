/* RoiAlign (opsets 10 and 16): Mask R-CNN's region pooling, average mode, with ONNX Runtime's
 * and torchvision's roi_align as the reference (aligned=True is half_pixel; float32).
 *
 * X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2 in input-image units) and batch_indices [R]
 * give Y [R, C, output_height, output_width]. Two stages, as AveragePool:
 *   <name>.sum  [R, C, oh, ow] sums over ry, rx in [0, s) (s = sampling_ratio) the bilinear
 *               sample of X[b, c] at
 *                 y = start_h + ph * bin_h + (ry + 0.5) * bin_h / s     (x likewise)
 *               start_h = y1 * spatial_scale - offset, roi_h = (y2 - y1 mapped alike), bin_h =
 *               roi_h / oh; offset is 0.5 for half_pixel, 0 for output_half_pixel, which also
 *               widens roi_h and roi_w to at least 1.
 *   <name>      the sum divided by s * s.
 * A sample with y < -1, y > H, x < -1 or x > W adds 0; otherwise y is clamped to [0, H - 1]
 * (the references' y_low >= H - 1 case is the same clamp) and weighted between floor(y) and
 * the next row, x likewise. The rois and the batch index are tloads of run-time tensors, so X
 * is read through data-dependent indices (as GridSample's are). Every index stays in bounds
 * whatever the rois hold: the coordinates are clamped in float by compare-and-select (a NaN
 * becomes the low end; float min/max and the float-to-int conversion make no promise for
 * NaN), then as int64 with weft_nn_clamp; a batch index outside [0, N) is clamped too.
 * Refused: mode=max, sampling_ratio=0 (adaptive: the sample count ceil(roi_h / oh) depends on
 * the run-time rois, which a fixed reduction cannot express), other
 * coordinate_transformation_modes, ranks other than 4 / 2 / 1, rois without 4 columns, R
 * mismatch, non-float32 X or rois, batch indices not int64 or int32.
 */
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

/* Samples per bin along one axis above this are refused (s * s must stay a small count). */
enum { MAX_SAMPLING_RATIO = 4096 };

typedef struct ra_params {
    bool half_pixel;      /* coordinate_transformation_mode: half_pixel (else output_half_pixel) */
    int64_t out_h, out_w; /* output_height, output_width */
    int64_t ratio;        /* sampling_ratio: samples per bin along each axis (> 0) */
    float scale;          /* spatial_scale */
} ra_params;

static weft_status read_params(const weft_gnode *n, ra_params *p)
{
    const char *mode = weft_gnode_attr_string(n, "mode", "avg");
    if (strcmp(mode, "max") == 0)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "attribute mode='max' is not supported, only mode='avg'");
    if (strcmp(mode, "avg") != 0)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute mode='%s', expected avg or max", mode);
    const char *ctm = weft_gnode_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    if (strcmp(ctm, "half_pixel") == 0) p->half_pixel = true;
    else if (strcmp(ctm, "output_half_pixel") == 0) p->half_pixel = false;
    else
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n,
                            "attribute coordinate_transformation_mode='%s', expected half_pixel or output_half_pixel",
                            ctm);
    p->out_h = weft_gnode_attr_int(n, "output_height", 1);
    p->out_w = weft_gnode_attr_int(n, "output_width", 1);
    if (p->out_h < 1 || p->out_w < 1)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attributes output_height=%lld, output_width=%lld, expected >= 1",
                            (long long)p->out_h, (long long)p->out_w);
    p->ratio = weft_gnode_attr_int(n, "sampling_ratio", 0);
    if (p->ratio == 0)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n,
                            "attribute sampling_ratio=0 (adaptive: ceil(roi_height / output_height) samples per bin, "
                            "a count that depends on the run-time rois) is not supported; export the model with "
                            "sampling_ratio > 0 (torchvision: roi_align(..., sampling_ratio=2))");
    if (p->ratio < 0 || p->ratio > MAX_SAMPLING_RATIO)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute sampling_ratio=%lld, expected 1 to %d",
                            (long long)p->ratio, MAX_SAMPLING_RATIO);
    p->scale = (float)weft_gnode_attr_float(n, "spatial_scale", 1.0);
    return WEFT_OK;
}

weft_status weft_nn_roi_align_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 3, 3, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0), *rois = weft_nn_in(g, n, 1), *B = weft_nn_in(g, n, 2);
    if ((st = weft_nn_check_dtype(n, X, "input X", WEFT_NN_F32)) != WEFT_OK) return st;
    if ((st = weft_nn_check_dtype(n, rois, "input rois", WEFT_NN_F32)) != WEFT_OK) return st;
    if ((st = weft_nn_check_dtype(n, B, "input batch_indices", WEFT_NN_I64 | WEFT_NN_I32)) != WEFT_OK) return st;
    if ((st = weft_nn_check_rank(n, X, "input X", 4, "[N, C, H, W]")) != WEFT_OK) return st;
    if ((st = weft_nn_check_rank(n, rois, "input rois", 2, "[num_rois, 4]")) != WEFT_OK) return st;
    if ((st = weft_nn_check_rank(n, B, "input batch_indices", 1, "[num_rois]")) != WEFT_OK) return st;
    if (rois->shape[1] != 4)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input rois %s has last dim %lld, expected 4 (x1, y1, x2, y2)",
                            weft_nn_shape_str(rois->ndim, rois->shape).s, (long long)rois->shape[1]);
    if (B->shape[0] != rois->shape[0])
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input batch_indices %s has %lld entries, input rois %s has %lld rois",
                            weft_nn_shape_str(B->ndim, B->shape).s, (long long)B->shape[0],
                            weft_nn_shape_str(rois->ndim, rois->shape).s, (long long)rois->shape[0]);
    ra_params p;
    if ((st = read_params(n, &p)) != WEFT_OK) return st;
    int64_t shape[4] = {rois->shape[0], X->shape[1], p.out_h, p.out_w};
    return weft_nn_set_out(g, n, 0, WEFT_F32, 4, shape);
}

/* ---- sampling ---------------------------------------------------------------------------- */

/* One axis of a sample: the low and high taps and their weights. */
typedef struct ra_axis {
    const weft_expr *lo, *hi;     /* int64 indices in [0, size) */
    const weft_expr *w_lo, *w_hi; /* their weights, 1 - t and t */
} ra_axis;

/* The sample at coordinate v (float32) along an axis of extent size, already known to lie in
 * [-1, size] when it counts: clamped to [0, size - 1], taps floor and floor + 1 (the last row
 * repeated at the end, with weight 0 on it). */
static ra_axis sample_axis(weft_arena *a, const weft_expr *v, int64_t size)
{
    ra_axis r;
    const weft_expr *c = weft_nn_clamp_float(a, v, 0.0, (double)(size - 1));
    r.lo = weft_nn_clamp(a, weft_cast(a, WEFT_I64, c), 0, size - 1);
    r.hi = weft_nn_clamp(a, weft_add(a, r.lo, weft_i64(a, 1)), 0, size - 1);
    r.w_hi = weft_sub(a, c, weft_cast(a, WEFT_F32, r.lo));
    r.w_lo = weft_sub(a, weft_f32(a, 1.0), r.w_hi);
    return r;
}

/* lo <= v <= hi on a float32 coordinate. */
static const weft_expr *within(weft_arena *a, const weft_expr *v, double lo, double hi)
{
    return weft_and(a, weft_cmp(a, WEFT_EXPR_GE, v, weft_f32(a, lo)), weft_cmp(a, WEFT_EXPR_LE, v, weft_f32(a, hi)));
}

/* The start and bin size of roi r along one axis from its columns c0 (start) and c1 (end):
 * start = rois[r, c0] * scale - offset, bin = roi length / out. */
static void roi_axis(weft_arena *a, const ra_params *p, const weft_tensor *rois, const weft_expr *r, int c0, int c1,
                     int64_t out, const weft_expr **start, const weft_expr **bin)
{
    const weft_expr *scale = weft_f32(a, (double)p->scale), *off = weft_f32(a, p->half_pixel ? 0.5 : 0.0);
    const weft_expr *s = weft_sub(a, weft_mul(a, weft_te_at(a, rois, r, weft_i64(a, c0)), scale), off);
    const weft_expr *e = weft_sub(a, weft_mul(a, weft_te_at(a, rois, r, weft_i64(a, c1)), scale), off);
    const weft_expr *len = weft_sub(a, e, s), *one = weft_f32(a, 1.0);
    if (!p->half_pixel) len = weft_select(a, weft_cmp(a, WEFT_EXPR_LT, len, one), one, len); /* max(len, 1) */
    *start = s;
    *bin = weft_div(a, len, weft_f32(a, (double)out));
}

/* start + bin_index * bin + (sample + 0.5) * bin / s, in the references' order. */
static const weft_expr *sample_coord(weft_arena *a, const ra_params *p, const weft_expr *start, const weft_expr *bin,
                                     const weft_expr *bin_index, const weft_expr *sample)
{
    const weft_expr *base = weft_add(a, start, weft_mul(a, weft_cast(a, WEFT_F32, bin_index), bin));
    const weft_expr *frac = weft_add(a, weft_cast(a, WEFT_F32, sample), weft_f32(a, 0.5));
    return weft_add(a, base, weft_div(a, weft_mul(a, frac, bin), weft_f32(a, (double)p->ratio)));
}

/* The body of <name>.sum at output point o = (r, c, ph, pw), sample (ry, rx). */
static const weft_expr *sample_body(weft_arena *a, const ra_params *p, const weft_tensor *X, const weft_tensor *rois,
                                    const weft_tensor *B, const weft_expr *const *o, const weft_expr *ry,
                                    const weft_expr *rx)
{
    int64_t H = X->shape[2], W = X->shape[3];
    const weft_expr *b = weft_cast(a, WEFT_I64, weft_te_at(a, B, o[0]));
    b = weft_nn_clamp(a, b, 0, X->shape[0] - 1);
    const weft_expr *start_h, *bin_h, *start_w, *bin_w;
    roi_axis(a, p, rois, o[0], 1, 3, p->out_h, &start_h, &bin_h);
    roi_axis(a, p, rois, o[0], 0, 2, p->out_w, &start_w, &bin_w);
    const weft_expr *y = sample_coord(a, p, start_h, bin_h, o[2], ry);
    const weft_expr *x = sample_coord(a, p, start_w, bin_w, o[3], rx);
    const weft_expr *ok = weft_and(a, within(a, y, -1.0, (double)H), within(a, x, -1.0, (double)W));
    ra_axis ay = sample_axis(a, y, H), ax = sample_axis(a, x, W);
    const weft_expr *rows[2] = {ay.lo, ay.hi}, *cols[2] = {ax.lo, ax.hi};
    const weft_expr *wy[2] = {ay.w_lo, ay.w_hi}, *wx[2] = {ax.w_lo, ax.w_hi}, *acc = NULL;
    /* w1 * X[yl, xl] + w2 * X[yl, xh] + w3 * X[yh, xl] + w4 * X[yh, xh], w1 = hy * hx ... */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            const weft_expr *v = weft_te_at(a, X, b, o[1], rows[i], cols[j]);
            const weft_expr *term = weft_mul(a, weft_mul(a, wy[i], wx[j]), v);
            acc = acc ? weft_add(a, acc, term) : term;
        }
    return weft_select(a, ok, acc, weft_f32(a, 0.0));
}

weft_status weft_nn_roi_align_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                      const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    for (int i = 0; i < 3; i++)
        if ((st = weft_nn_check_in(g, n, ins, i)) != WEFT_OK) return st;
    const weft_tensor *X = ins[0], *rois = ins[1], *B = ins[2];
    ra_params p;
    if ((st = read_params(n, &p)) != WEFT_OK) return st;
    int64_t shape[4] = {rois->shape[0], X->shape[1], p.out_h, p.out_w};
    const char *const axes[4] = {"r", "c", "y", "x"};
    weft_tensor *S = weft_te_compute(a, weft_nn_stage(a, name, ".sum"), 4, shape, axes);
    if (S) {
        const weft_expr *o[4];
        weft_nn_axes(S, o);
        const weft_expr *ry = weft_te_reduce_axis(a, S, "ry", p.ratio);
        const weft_expr *rx = weft_te_reduce_axis(a, S, "rx", p.ratio);
        weft_te_set_body(S, WEFT_REDUCE_SUM, sample_body(a, &p, X, rois, B, o, ry, rx));
    }
    weft_tensor *Y = weft_te_compute(a, name, 4, shape, axes);
    if (Y) {
        const weft_expr *o[4];
        weft_nn_axes(Y, o);
        weft_te_set_body(Y, WEFT_REDUCE_NONE,
                         weft_div(a, weft_tload(a, S, 4, o), weft_f32(a, (double)(p.ratio * p.ratio))));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}
