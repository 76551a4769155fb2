/* Resize (opset 10-18) and Upsample (opset 7-9): modes nearest, linear and cubic.
 *
 * Inputs: opset 10 and Upsample-9 take (X, scales); opset 11+ take (X, roi, scales, sizes)
 * with exactly one of scales and sizes given (an empty tensor counts as absent); Upsample-7
 * has the `scales` attribute. scales and sizes must be constants (folded shape arithmetic
 * counts). Opset 18's `axes` picks the dims they apply to. The output extent per dim is
 * floor(in * scale), or the size; with sizes, the scale is out / in.
 *
 * coordinate_transformation_mode maps an output index x to a source coordinate:
 *   half_pixel               (x + 0.5) / scale - 0.5
 *   pytorch_half_pixel       the same, 0 when the output extent is 1
 *   align_corners            x * (in - 1) / (out - 1), 0 when out is 1
 *   asymmetric               x / scale
 *   tf_half_pixel_for_nearest (x + 0.5) / scale
 * (tf_crop_and_resize, exclude_outside=1, antialias and keep_aspect_ratio_policy other than
 * stretch are refused, naming the attribute.)
 *
 * nearest: the source index per output index is computed here, at compile time, with the
 * spec's float arithmetic and nearest_mode (round_prefer_floor, round_prefer_ceil, floor,
 * ceil), clamped into the input. Resize-10 and Upsample have no nearest_mode: they take
 * floor when enlarging and ceil when shrinking (ONNX Runtime's rule for them; PyTorch's
 * opset-10 export relies on the floor). When that table is an exact integer progression
 * floordiv(x * A + B, C) (A/C = in/out or 2in/2out: every common case) the stage reads
 * X at that index; otherwise it reads X at a select chain over the table's runs.
 *
 * linear: the dims whose extent changes are interpolated (at most 3: bilinear on NCHW,
 * trilinear on NCDHW); per dim the kernel computes the source coordinate in float,
 * clamps it to >= 0, takes i0 = min(trunc(src), in - 1), i1 = min(i0 + 1, in - 1) and
 * lambda = src - i0 (PyTorch's and ONNX Runtime's formulation), and the output is the
 * weighted sum of the 2, 4 or 8 taps. One stage, ELEMWISE-like (no reduction).
 *
 * cubic: the same source coordinate without the clamp at 0, f = floor(src), t = src - f, taps
 * f-1 .. f+2 clamped into the input, with Keys' weights for cubic_coeff_a (PyTorch's bicubic:
 * -0.75); 4 or 16 taps.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"
#include "runtime/mem.h"

typedef enum coord_mode { C_HALF_PIXEL, C_PYTORCH_HALF_PIXEL, C_ALIGN_CORNERS, C_ASYMMETRIC, C_TF_HALF_NEAREST } coord_mode;
typedef enum near_mode { N_ROUND_PREFER_FLOOR, N_ROUND_PREFER_CEIL, N_FLOOR, N_CEIL, N_SIMPLE } near_mode;

typedef struct resize_params {
    bool linear, cubic;
    double cubic_a;
    coord_mode coord;
    near_mode nearest;
    int rank;
    int64_t in[WEFT_NN_MAX_DIMS], out[WEFT_NN_MAX_DIMS];
    double scale[WEFT_NN_MAX_DIMS]; /* out/in as the spec uses it: the given scale, or out/in for sizes */
} resize_params;

static bool pick(const char *s, const char *const *names, int count, int *out)
{
    for (int k = 0; k < count; k++)
        if (strcmp(s, names[k]) == 0) return *out = k, true;
    return false;
}

static weft_status check_rest(const weft_gnode *n);

static weft_status read_modes(const weft_gnode *n, resize_params *p)
{
    const char *mode = weft_gnode_attr_string(n, "mode", "nearest");
    if (strcmp(mode, "nearest") == 0) p->linear = false;
    else if (strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0) p->linear = true;
    else if (strcmp(mode, "cubic") == 0 || strcmp(mode, "bicubic") == 0) p->linear = p->cubic = true;
    else return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute mode='%s', expected nearest, linear or cubic", mode);
    p->cubic_a = weft_gnode_attr_float(n, "cubic_coeff_a", -0.75);
    if (p->cubic && weft_gnode_attr_int(n, "exclude_outside", 0) != 0)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "attribute exclude_outside=1 is not supported");
    if (p->cubic && !isfinite(p->cubic_a))
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute cubic_coeff_a=%g must be finite", p->cubic_a);

    static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                         "tf_half_pixel_for_nearest"};
    /* Upsample and Resize-10 have no such attribute and behave as asymmetric. */
    const char *cm = weft_gnode_attr_string(n, "coordinate_transformation_mode",
                                            strcmp(n->op_type, "Upsample") == 0 || n->n_inputs == 2 ? "asymmetric"
                                                                                                 : "half_pixel");
    int k;
    if (!pick(cm, coords, 5, &k)) {
        if (strcmp(cm, "tf_crop_and_resize") == 0)
            return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n,
                                "attribute coordinate_transformation_mode='tf_crop_and_resize' is not supported");
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n,
                            "attribute coordinate_transformation_mode='%s', expected half_pixel, pytorch_half_pixel, "
                            "align_corners, asymmetric or tf_half_pixel_for_nearest",
                            cm);
    }
    p->coord = (coord_mode)k;
    static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    bool old_form = strcmp(n->op_type, "Upsample") == 0 || n->n_inputs == 2;
    const char *nm = weft_gnode_attr_string(n, "nearest_mode", old_form ? "simple" : "round_prefer_floor");
    if (old_form && strcmp(nm, "simple") == 0) {
        p->nearest = N_SIMPLE;
        return check_rest(n);
    }
    if (!pick(nm, nearest, 4, &k))
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n,
                            "attribute nearest_mode='%s', expected round_prefer_floor, round_prefer_ceil, floor or ceil",
                            nm);
    p->nearest = (near_mode)k;
    return check_rest(n);
}

static weft_status check_rest(const weft_gnode *n)
{
    if (weft_gnode_attr_int(n, "antialias", 0) != 0)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "attribute antialias=1 is not supported");
    const char *ka = weft_gnode_attr_string(n, "keep_aspect_ratio_policy", "stretch");
    if (strcmp(ka, "stretch") != 0)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "attribute keep_aspect_ratio_policy='%s' is not supported (stretch)",
                            ka);
    return WEFT_OK;
}

/* Input i is given and not an empty tensor. */
static bool given(const weft_graph *g, const weft_gnode *n, int i)
{
    const weft_gvalue *v = weft_nn_in(g, n, i);
    return v && weft_gvalue_numel(v) > 0 && !(v->ndim == 1 && v->shape[0] == 0);
}

/* Reads scales (float) or sizes (int) into p->scale / p->out for the dims in axes. */
static weft_status read_sizes(const weft_graph *g, const weft_gnode *n, resize_params *p)
{
    weft_status st;
    int rank = p->rank, axes[WEFT_NN_MAX_DIMS], n_axes = rank;
    for (int d = 0; d < rank; d++) axes[d] = d, p->scale[d] = 1.0, p->out[d] = p->in[d];
    int64_t ax[WEFT_NN_MAX_DIMS];
    int cnt;
    if ((st = weft_nn_attr_ints(n, "axes", ax, WEFT_NN_MAX_DIMS, &cnt)) != WEFT_OK) return st;
    if (cnt >= 0) {
        bool seen[WEFT_NN_MAX_DIMS] = {false};
        n_axes = cnt;
        for (int j = 0; j < cnt; j++) {
            if ((st = weft_nn_axis(n, "axes element", ax[j], rank, false, &axes[j])) != WEFT_OK) return st;
            if (seen[axes[j]])
                return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute axes %s names axis %d twice",
                                    weft_nn_shape_str(cnt, ax).s, axes[j]);
            seen[axes[j]] = true;
        }
    }
    bool upsample7 = strcmp(n->op_type, "Upsample") == 0 && n->n_inputs == 1;
    int si = n->n_inputs == 2 ? 1 : 2; /* scales: input 1 in opset 10 / Upsample-9, else 2 */
    bool has_scales = upsample7 || given(g, n, si), has_sizes = n->n_inputs >= 4 && given(g, n, 3);
    if (has_scales == has_sizes)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "exactly one of scales and sizes must be given (got %s)",
                            has_scales ? "both" : "neither");
    if (has_sizes) {
        int64_t sz[WEFT_NN_MAX_DIMS];
        if ((st = weft_nn_const_ints(g, n, 3, "sizes", sz, WEFT_NN_MAX_DIMS, &cnt)) != WEFT_OK) return st;
        if (cnt != n_axes)
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "sizes %s has %d elements, expected %d", weft_nn_shape_str(cnt, sz).s,
                                cnt, n_axes);
        for (int j = 0; j < cnt; j++) {
            if (sz[j] < 1)
                return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "sizes %s must be >= 1", weft_nn_shape_str(cnt, sz).s);
            int d = axes[j];
            p->out[d] = sz[j];
            p->scale[d] = (double)sz[j] / (double)p->in[d];
        }
        return WEFT_OK;
    }
    double sc[WEFT_NN_MAX_DIMS];
    if (upsample7) {
        const weft_attr *at = NULL;
        for (int i = 0; i < n->n_attrs; i++)
            if (strcmp(n->attrs[i].name, "scales") == 0 && n->attrs[i].kind == WEFT_ATTR_FLOATS) at = &n->attrs[i];
        if (!at) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "has no scales (input or attribute)");
        cnt = at->n;
        for (int j = 0; j < cnt && j < WEFT_NN_MAX_DIMS; j++) sc[j] = at->floats[j];
    } else {
        const weft_gvalue *v = weft_nn_in(g, n, si);
        if (!v->data) return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "scales input must be a constant");
        if (!weft_dtype_eq(v->dtype, WEFT_F32) || v->ndim != 1)
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "scales input is %s %s, expected a 1-D float32 tensor",
                                weft_dtype_name(v->dtype), weft_nn_shape_str(v->ndim, v->shape).s);
        cnt = (int)(v->shape[0] > WEFT_NN_MAX_DIMS ? WEFT_NN_MAX_DIMS + 1 : v->shape[0]);
        for (int j = 0; j < cnt && j < WEFT_NN_MAX_DIMS; j++) sc[j] = weft_nn_data_float(v, j);
    }
    if (cnt != n_axes)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "scales has %d elements, expected %d (input %s)", cnt, n_axes,
                            weft_nn_shape_str(rank, p->in).s);
    for (int j = 0; j < cnt; j++) {
        int d = axes[j];
        if (!(sc[j] > 0) || !isfinite(sc[j]))
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "scales element %d is %g, expected > 0", j, sc[j]);
        p->scale[d] = sc[j];
        double o = floor((double)p->in[d] * sc[j] + 1e-9);
        if (o > 1099511627776.0) /* 2^40: the largest extent any op output may have */
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "scales element %d (%g) makes axis %d of extent %" PRId64 " too large", j,
                                sc[j], d, p->in[d]);
        p->out[d] = (int64_t)o;
        if (p->out[d] < 1)
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "scales element %d (%g) makes axis %d of extent %" PRId64 " empty", j,
                                sc[j], d, p->in[d]);
    }
    return WEFT_OK;
}

static weft_status resize_params_read(const weft_graph *g, const weft_gnode *n, int rank, const int64_t *in,
                                      resize_params *p)
{
    memset(p, 0, sizeof *p);
    p->rank = rank;
    for (int d = 0; d < rank; d++) p->in[d] = in[d];
    weft_status st = read_modes(n, p);
    if (st != WEFT_OK || (st = read_sizes(g, n, p)) != WEFT_OK) return st;
    if (p->linear) {
        int changed = 0;
        for (int d = 0; d < rank; d++) changed += p->out[d] != p->in[d] || p->scale[d] != 1.0;
        int most = p->cubic ? 2 : 3;
        if (changed > most)
            return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n,
                                "mode=%s resizes %d axes (input %s, output %s); at most %d are supported",
                                p->cubic ? "cubic" : "linear", changed, weft_nn_shape_str(rank, p->in).s,
                                weft_nn_shape_str(rank, p->out).s, most);
    }
    return WEFT_OK;
}

/* The source coordinate of output index x along dim d, in float32 like the spec's reference. */
static float source_coord(const resize_params *p, int d, int64_t x)
{
    float s = (float)p->scale[d], xf = (float)x;
    switch (p->coord) {
    case C_HALF_PIXEL: return (xf + 0.5f) / s - 0.5f;
    case C_PYTORCH_HALF_PIXEL: return p->out[d] > 1 ? (xf + 0.5f) / s - 0.5f : 0.0f;
    case C_ALIGN_CORNERS: return p->out[d] == 1 ? 0.0f : xf * (float)(p->in[d] - 1) / (float)(p->out[d] - 1);
    case C_ASYMMETRIC: return xf / s;
    case C_TF_HALF_NEAREST: return (xf + 0.5f) / s;
    }
    return 0.0f;
}

static int64_t nearest_index(const resize_params *p, int d, int64_t x)
{
    float c = source_coord(p, d, x);
    double r;
    switch (p->nearest) {
    case N_ROUND_PREFER_FLOOR: r = c == floorf(c) + 0.5f ? floorf(c) : roundf(c); break;
    case N_ROUND_PREFER_CEIL: r = c == floorf(c) + 0.5f ? ceilf(c) : roundf(c); break;
    case N_FLOOR: r = floorf(c); break;
    case N_SIMPLE: r = p->scale[d] < 1.0 ? ceilf(c) : floorf(c); break;
    default: r = ceilf(c); break;
    }
    if (r < 0) r = 0;
    if (r > (double)(p->in[d] - 1)) r = (double)(p->in[d] - 1);
    return (int64_t)r;
}

static int64_t floordiv_i(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* The index expression for table t[0..out) over axis variable v: an exact floordiv
 * progression when one fits, else a select chain over the runs of equal values. */
static const weft_expr *table_index(weft_arena *a, const weft_expr *v, const int64_t *t, int64_t out, int64_t in)
{
    bool identity = out == in;
    for (int64_t x = 0; identity && x < out; x++) identity = t[x] == x;
    if (identity) return v;
    if (in == 1) return weft_i64(a, 0);
    /* t[x] = clamp(floordiv(x*A + B, C), 0, in-1): each x bounds B to an interval (a clamped
     * value only from one side), so the offset B is found in one pass instead of by trying
     * every B in [-C, C] (O(out^2): minutes for a 10^4-wide axis) */
    for (int mul = 1; mul <= 2 && in <= (INT64_C(1) << 30) && out <= (INT64_C(1) << 30); mul++) {
        int64_t A = in * mul, C = out * mul;
        int64_t lo = -C, hi = C + 1; /* B in [lo, hi) */
        for (int64_t x = 0; x < out && lo < hi; x++) {
            if (t[x] > 0) lo = lo > t[x] * C - x * A ? lo : t[x] * C - x * A;
            if (t[x] < in - 1) hi = hi < (t[x] + 1) * C - x * A ? hi : (t[x] + 1) * C - x * A;
        }
        if (lo >= hi) continue;
        int64_t B = lo;
        bool ok = true;
        for (int64_t x = 0; ok && x < out; x++) {
            int64_t q = floordiv_i(x * A + B, C);
            ok = (q < 0 ? 0 : q > in - 1 ? in - 1 : q) == t[x];
        }
        if (!ok) continue;
        const weft_expr *num = weft_add(a, weft_mul(a, v, weft_i64(a, A)), weft_i64(a, B));
        return weft_nn_clamp(a, weft_floordiv(a, num, weft_i64(a, C)), 0, in - 1);
    }
    /* runs: value t[x] for x in [start, end) */
    const weft_expr *e = weft_i64(a, t[out - 1]);
    for (int64_t x = out - 1; x > 0;) {
        int64_t start = x;
        while (start > 0 && t[start - 1] == t[x]) start--;
        if (start == 0) break;
        e = weft_select(a, weft_cmp(a, WEFT_EXPR_LT, v, weft_i64(a, start)), weft_i64(a, t[start - 1]), e);
        x = start - 1;
    }
    return e;
}

weft_status weft_nn_resize_infer(weft_graph *g, const weft_gnode *n)
{
    bool upsample = strcmp(n->op_type, "Upsample") == 0;
    weft_status st = weft_nn_check_arity(n, 1, upsample ? 2 : 4, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, X, "input X", WEFT_NN_F32)) != WEFT_OK) return st;
    if (X->ndim < 1) return weft_nn_fail(WEFT_ERR_SHAPE, n, "input X is a scalar");
    resize_params p;
    if ((st = resize_params_read(g, n, X->ndim, X->shape, &p)) != WEFT_OK) return st;
    return weft_nn_set_out(g, n, 0, WEFT_F32, X->ndim, p.out);
}

/* The source coordinate of axis v along dim d, in float. */
static const weft_expr *source_expr(weft_arena *a, const resize_params *p, int d, const weft_expr *v)
{
    const weft_expr *xf = weft_cast(a, WEFT_F32, v), *src;
    float s = (float)p->scale[d];
    switch (p->coord) {
    case C_ALIGN_CORNERS:
        src = p->out[d] == 1 ? weft_f32(a, 0.0)
                             : weft_mul(a, xf, weft_f32(a, (double)((float)(p->in[d] - 1) / (float)(p->out[d] - 1))));
        break;
    case C_ASYMMETRIC: src = weft_div(a, xf, weft_f32(a, s)); break;
    case C_TF_HALF_NEAREST: src = weft_div(a, weft_add(a, xf, weft_f32(a, 0.5)), weft_f32(a, s)); break;
    case C_PYTORCH_HALF_PIXEL:
        if (p->out[d] == 1) {
            src = weft_f32(a, 0.0);
            break;
        }
        /* fall through */
    default: src = weft_sub(a, weft_div(a, weft_add(a, xf, weft_f32(a, 0.5)), weft_f32(a, s)), weft_f32(a, 0.5)); break;
    }
    return src;
}

/* Linear taps along dim d: i0, i1 (int64) and the weight of i1 (float), from axis v. The
 * indices are tables over the output axis (table_index: a clamped floordiv progression for
 * every integer and most rational scales), not the truncated float coordinate: in a vector
 * loop that was a gather per tap, where floordiv(w - 1, 2) reads each source element once
 * and repeats it. lambda stays src - i0 in the kernel; where a table entry and the kernel's
 * float truncation could differ (src within an ulp of an integer) both give the same
 * interpolated value, lambda then being 0 or 1 to within an ulp. false: out of memory. */
static bool linear_taps(weft_arena *a, const resize_params *p, int d, const weft_expr *v, const weft_expr **i0,
                        const weft_expr **i1, const weft_expr **lambda)
{
    const weft_expr *src = weft_max(a, source_expr(a, p, d, v), weft_f32(a, 0.0));
    int64_t *t = weft_malloc((size_t)p->out[d] * 2 * sizeof *t), last = p->in[d] - 1;
    if (!t) return false;
    for (int64_t x = 0; x < p->out[d]; x++) {
        float c = source_coord(p, d, x);
        int64_t lo = c > 0 ? (int64_t)c : 0;
        t[x] = lo < last ? lo : last;
        /* i1 = floor(c) + 1 clamped: where c < 0 lambda is 0 and i1 is not weighed, so it
         * may follow the progression (floordiv(w + 1, 2) at w = 0) instead of i0 + 1 */
        int64_t hi = (int64_t)floorf(c) + 1;
        t[p->out[d] + x] = hi < 0 ? 0 : hi < last ? hi : last;
    }
    *i0 = table_index(a, v, t, p->out[d], p->in[d]);
    *i1 = table_index(a, v, t + p->out[d], p->out[d], p->in[d]);
    free(t);
    *lambda = weft_sub(a, src, weft_cast(a, WEFT_F32, *i0));
    return true;
}

/* Cubic taps along dim d: idx[0..4) = clamp(floor(src) - 1 + k) and Keys' weights w[0..4). */
static void cubic_taps(weft_arena *a, const resize_params *p, int d, const weft_expr *v, const weft_expr **idx,
                       const weft_expr **w)
{
    const weft_expr *src = source_expr(a, p, d, v);
    const weft_expr *tr = weft_cast(a, WEFT_I64, src);
    const weft_expr *fl = weft_sub(a, tr, weft_select(a, weft_cmp(a, WEFT_EXPR_LT, src, weft_cast(a, WEFT_F32, tr)),
                                                       weft_i64(a, 1), weft_i64(a, 0)));
    const weft_expr *t = weft_sub(a, src, weft_cast(a, WEFT_F32, fl));
    for (int k = 0; k < 4; k++) idx[k] = weft_nn_clamp(a, weft_add(a, fl, weft_i64(a, k - 1)), 0, p->in[d] - 1);
    double A = p->cubic_a;
    /* |x| <= 1: ((A + 2) x - (A + 3)) x^2 + 1;  1 < |x| < 2: ((A x - 5A) x + 8A) x - 4A */
    const weft_expr *one = weft_f32(a, 1.0);
    const weft_expr *near[2] = {t, weft_sub(a, one, t)};
    for (int k = 0; k < 2; k++) {
        const weft_expr *x = near[k];
        w[1 + k] = weft_add(a, weft_mul(a, weft_sub(a, weft_mul(a, weft_f32(a, A + 2), x), weft_f32(a, A + 3)),
                                        weft_mul(a, x, x)),
                            one);
    }
    const weft_expr *far[2] = {weft_add(a, t, one), weft_sub(a, weft_f32(a, 2.0), t)};
    for (int k = 0; k < 2; k++) {
        const weft_expr *x = far[k];
        const weft_expr *q = weft_add(a, weft_mul(a, weft_sub(a, weft_mul(a, weft_f32(a, A), x), weft_f32(a, 5 * A)), x),
                                      weft_f32(a, 8 * A));
        w[k ? 3 : 0] = weft_sub(a, weft_mul(a, q, x), weft_f32(a, 4 * A));
    }
}

/* The interpolation over the resized dims dims[level..nd) at the index x (the other dims
 * already set), nested as PyTorch writes it: (1 - l0) * (inner at lo) + l0 * (inner at hi),
 * the innermost dim last: x00 .. x11 in bilinear order, 8 corners in trilinear order. */
static const weft_expr *linear_corners(weft_arena *a, const weft_tensor *X, const weft_expr **x, const int *dims,
                                       const weft_expr *const *lo, const weft_expr *const *hi,
                                       const weft_expr *const *lam, int level, int nd)
{
    if (level == nd) return weft_tload(a, X, X->ndim, x);
    x[dims[level]] = lo[level];
    const weft_expr *v0 = linear_corners(a, X, x, dims, lo, hi, lam, level + 1, nd);
    x[dims[level]] = hi[level];
    const weft_expr *v1 = linear_corners(a, X, x, dims, lo, hi, lam, level + 1, nd);
    return weft_add(a, weft_mul(a, weft_sub(a, weft_f32(a, 1.0), lam[level]), v0), weft_mul(a, lam[level], v1));
}

weft_status weft_nn_resize_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                   const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    resize_params p;
    if ((st = resize_params_read(g, n, X->ndim, X->shape, &p)) != WEFT_OK) return st;
    weft_tensor *Y = weft_nn_compute(a, name, X->ndim, p.out);
    if (!Y) return weft_nn_done(a, n);
    const weft_expr *o[WEFT_NN_MAX_DIMS], *x[WEFT_NN_MAX_DIMS];
    weft_nn_axes(Y, o);
    if (!p.linear) {
        for (int d = 0; d < X->ndim; d++) {
            int64_t *t = weft_malloc((size_t)p.out[d] * sizeof *t);
            if (!t) return weft_nn_fail(WEFT_ERR_NOMEM, n, "out of memory");
            for (int64_t i = 0; i < p.out[d]; i++) t[i] = nearest_index(&p, d, i);
            x[d] = table_index(a, o[d], t, p.out[d], p.in[d]);
            free(t);
        }
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_tload(a, X, X->ndim, x));
        outs[0] = Y;
        return weft_nn_done(a, n);
    }
    if (p.cubic) {
        int dims[2], nd = 0;
        const weft_expr *idx[2][4], *w[2][4];
        for (int d = 0; d < X->ndim; d++) {
            x[d] = o[d];
            if (p.out[d] == p.in[d] && p.scale[d] == 1.0) continue;
            dims[nd] = d;
            cubic_taps(a, &p, d, o[d], idx[nd], w[nd]);
            nd++;
        }
        /* sum over the outer dim's taps of w * (sum over the inner dim's taps of w * X) */
        const weft_expr *acc = nd == 0 ? weft_tload(a, X, X->ndim, x) : NULL;
        for (int k0 = 0; nd > 0 && k0 < 4; k0++) {
            x[dims[0]] = idx[0][k0];
            const weft_expr *inner = NULL;
            for (int k1 = 0; k1 < (nd == 2 ? 4 : 1); k1++) {
                if (nd == 2) x[dims[1]] = idx[1][k1];
                const weft_expr *v = weft_tload(a, X, X->ndim, x);
                if (nd == 2) v = weft_mul(a, w[1][k1], v);
                inner = inner ? weft_add(a, inner, v) : v;
            }
            const weft_expr *term = weft_mul(a, w[0][k0], inner);
            acc = acc ? weft_add(a, acc, term) : term;
        }
        weft_te_set_body(Y, WEFT_REDUCE_NONE, acc);
        outs[0] = Y;
        return weft_nn_done(a, n);
    }
    int dims[3], nd = 0;
    const weft_expr *lo[3], *hi[3], *lam[3];
    for (int d = 0; d < X->ndim; d++) {
        x[d] = o[d];
        if (p.out[d] == p.in[d] && p.scale[d] == 1.0) continue;
        dims[nd] = d;
        if (!linear_taps(a, &p, d, o[d], &lo[nd], &hi[nd], &lam[nd])) return weft_nn_fail(WEFT_ERR_NOMEM, n, "out of memory");
        nd++;
    }
    const weft_expr *acc = linear_corners(a, X, x, dims, lo, hi, lam, 0, nd);
    weft_te_set_body(Y, WEFT_REDUCE_NONE, acc);
    outs[0] = Y;
    return weft_nn_done(a, n);
}
