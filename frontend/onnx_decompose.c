/* Import-time rewrites of ONNX nodes into ops that compile better.
 *
 * ConvTranspose (2-D or 3-D) with constant weights and dilation 1 becomes a sub-pixel
 * convolution: one Conv over X with stride 1 and s_y * s_x (s_d * s_y * s_x) times the output
 * channels (one kernel phase each), then a pixel shuffle (Reshape, Transpose, Reshape) and a
 * Slice that crops the pads; a 3-D one's Conv goes through the 3-D Conv rewrite
 * (frontend/onnx_conv3d.c). Per axis, with o' = o + pad_begin = q * s + p:
 *
 *   y[o] = sum_{i,k : i*s + k = o'} x[i] w[k] = sum_{j < J} x[q - j] w[p + j*s],  J = ceil(K/s)
 *
 * which is a correlation of x (padded by J - 1 in front) with the flipped sub-kernel
 * w_p[J - 1 - j] = w[p + j*s] (0 where p + j*s >= K). Output channel (f, p_y, p_x) of the Conv
 * is f * s_y * s_x + p_y * s_x + p_x (with a depth phase first in 3-D), so the pixel shuffle is
 * DepthToSpace's column-row-depth order; groups carry over (each group's channels stay
 * contiguous). The Conv does K/s fewer
 * multiply-adds per axis than the zero-inserted formulation of ops/nn_conv_transpose.c and
 * gets the convolution's weight layout and schedules. The bias moves into the Conv.
 *
 * Anything else (non-constant weights, dilations, auto_pad, output_shape, other ranks, or
 * values the op would refuse) is left to the ConvTranspose op itself (2-D), which reports
 * errors.
 *
 * Dropout asked for its mask output, or in training mode with a constant ratio of 0 (exports of
 * the functional form, as Swin's attention gives them), becomes Identity (plus an all-true bool
 * constant of the input's shape for the mask); a Dropout that would drop is left to the op,
 * which refuses it.
 *
 * 1-D Conv, ConvTranspose, MaxPool and AveragePool (input [N, C, W]) run as the 2-D op on
 * [N, C, 1, W] (the ops and their schedules are 2-D only): Unsqueeze (axis 2), the 2-D op with
 * kernel_shape [1, k], strides [1, s], dilations [1, d], output_padding [0, o], pads [0, b, 0, e]
 * and every other attribute as given, Squeeze (axis 2). Constant 3-D weights become a new
 * constant [F, C/g, 1, k]. The 2-D node goes through these rewrites again, so a 1-D
 * ConvTranspose becomes a sub-pixel Conv. A per-axis
 * attribute of the wrong length is refused here, naming the node and the attribute; other bad
 * values reach the 2-D op, which names them. (Global pools and BatchNormalization take 3-D
 * inputs as they are.)
 *
 * DepthToSpace (mode DCR, the default, or CRD, which PyTorch's pixel_shuffle exports) and
 * SpaceToDepth become Reshape (6-D) -> Transpose -> Reshape (4-D) with constant shapes, the
 * ONNX spec's own definition; weft has no op of their own, so every error (blocksize missing,
 * < 1, not dividing C / bs^2 or H and W; an unknown mode; not 4-D) is reported here.
 *
 * InstanceNormalization (InstanceNorm1d/2d, and GroupNorm, which PyTorch exports as Reshape
 * [N, G, -1] -> InstanceNormalization -> Reshape -> Mul -> Add) becomes, over axes [2, rank):
 * mean = ReduceMean(x); d = x - mean; y = d / Sqrt(ReduceMean(d * d) + epsilon) * scale' + B',
 * with scale and B as [C, 1, ...] (new constants, or Reshapes when computed). The fusion pass
 * puts all of it (and GroupNorm's Reshape, Mul, Add) into one kernel, as it does LayerNorm.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx.h"
#include "ir/error.h"
#include "runtime/mem.h"

const weft_attr *weft_onnx_find_attr(int n, const weft_attr *attrs, const char *name, weft_attr_kind kind)
{
    for (int i = 0; i < n; i++)
        if (attrs[i].name && strcmp(attrs[i].name, name) == 0 && attrs[i].kind == kind) return &attrs[i];
    return NULL;
}

static bool any_attr(int n, const weft_attr *attrs, const char *name)
{
    for (int i = 0; i < n; i++)
        if (attrs[i].name && strcmp(attrs[i].name, name) == 0) return true;
    return false;
}

/* An nd-element ints attribute (default dflt) with elements >= lo; false when malformed. */
static bool ints_attr(int n, const weft_attr *attrs, const char *name, int nd, int64_t dflt, int64_t lo, int64_t *out)
{
    const weft_attr *a = weft_onnx_find_attr(n, attrs, name, WEFT_ATTR_INTS);
    if (!a) {
        if (any_attr(n, attrs, name)) return false;
        for (int i = 0; i < nd; i++) out[i] = dflt;
        return true;
    }
    if (a->n != nd) return false;
    for (int i = 0; i < nd; i++) {
        if (a->ints[i] < lo) return false;
        out[i] = a->ints[i];
    }
    return true;
}

typedef struct subpixel {
    int nd; /* spatial axes: 2 or 3 */
    int64_t N, C, H[3], F, Fg, K[3], s[3], pb[3], pe[3], op[3], group, J[3], out[3], extra[3];
} subpixel;

/* The geometry, or false when the node is not a case for the rewrite. */
static bool subpixel_plan(weft_graph *g, int n_in, const weft_value *ins, int n_attrs, const weft_attr *attrs,
                          subpixel *p)
{
    if (n_in < 2 || n_in > 3 || ins[0] < 0 || ins[1] < 0) return false;
    if (weft_graph_value_type(g, ins[0]) != WEFT_TYPE_FLOAT32 || weft_graph_value_type(g, ins[1]) != WEFT_TYPE_FLOAT32 ||
        !weft_graph_value_data(g, ins[1]))
        return false;
    int64_t xs[8], ws[8], bs[8];
    int rank = weft_graph_value_shape(g, ins[0], xs);
    if ((rank != 4 && rank != 5) || weft_graph_value_shape(g, ins[1], ws) != rank) return false;
    if (n_in == 3 && ins[2] >= 0 &&
        (!weft_graph_value_data(g, ins[2]) || weft_graph_value_type(g, ins[2]) != WEFT_TYPE_FLOAT32 ||
         weft_graph_value_shape(g, ins[2], bs) != 1))
        return false;
    memset(p, 0, sizeof *p);
    int nd = p->nd = rank - 2;
    const weft_attr *grp = weft_onnx_find_attr(n_attrs, attrs, "group", WEFT_ATTR_INT);
    p->group = grp ? grp->i : 1;
    p->N = xs[0], p->C = xs[1];
    if (p->group < 1 || p->C % p->group != 0 || ws[0] != p->C) return false;
    p->Fg = ws[1], p->F = ws[1] * p->group;
    for (int a = 0; a < nd; a++) p->H[a] = xs[2 + a], p->K[a] = ws[2 + a];
    if (n_in == 3 && ins[2] >= 0 && bs[0] != p->F) return false;
    int64_t dil[3], pads[6];
    if (!ints_attr(n_attrs, attrs, "strides", nd, 1, 1, p->s) || !ints_attr(n_attrs, attrs, "dilations", nd, 1, 1, dil) ||
        !ints_attr(n_attrs, attrs, "output_padding", nd, 0, 0, p->op))
        return false;
    for (int a = 0; a < nd; a++)
        if (dil[a] != 1) return false;
    if (any_attr(n_attrs, attrs, "output_shape")) return false;
    const weft_attr *ap = weft_onnx_find_attr(n_attrs, attrs, "auto_pad", WEFT_ATTR_STRING);
    if ((ap && strcmp(ap->s, "NOTSET") != 0) || (!ap && any_attr(n_attrs, attrs, "auto_pad"))) return false;
    const weft_attr *ks = weft_onnx_find_attr(n_attrs, attrs, "kernel_shape", WEFT_ATTR_INTS);
    if (ks && ks->n != nd) return false;
    for (int a = 0; ks && a < nd; a++)
        if (ks->ints[a] != p->K[a]) return false;
    const weft_attr *pa = weft_onnx_find_attr(n_attrs, attrs, "pads", WEFT_ATTR_INTS);
    if (!pa && any_attr(n_attrs, attrs, "pads")) return false;
    for (int i = 0; i < 2 * nd; i++) pads[i] = pa ? (pa->n == 2 * nd ? pa->ints[i] : -1) : 0;
    for (int a = 0; a < nd; a++) {
        p->pb[a] = pads[a], p->pe[a] = pads[nd + a];
        if (p->pb[a] < 0 || p->pe[a] < 0 || p->op[a] >= p->s[a] || p->K[a] < 1) return false;
        p->out[a] = (p->H[a] - 1) * p->s[a] - p->pb[a] - p->pe[a] + p->K[a] + p->op[a];
        if (p->out[a] < 1) return false;
        p->J[a] = (p->K[a] + p->s[a] - 1) / p->s[a];
        /* the shuffled extent (H + J - 1 + extra) * s must cover pad_begin + out */
        int64_t need = (p->pb[a] + p->out[a] + p->s[a] - 1) / p->s[a], have = p->H[a] + p->J[a] - 1;
        p->extra[a] = need > have ? need - have : 0;
    }
    return true;
}

weft_status weft_onnx_add_i64(weft_graph *g, const char *base, const char *suffix, int n, const int64_t *v,
                              weft_value *out)
{
    char name[300];
    snprintf(name, sizeof name, "%.200s.%.90s", base, suffix);
    return weft_graph_add_constant(g, name, WEFT_TYPE_INT64, 1, (int64_t[]){n}, v, out);
}

/* The constant scalar value of v as a double; false when v is not a one-element constant. */
static bool const_scalar(weft_graph *g, weft_value v, double *out)
{
    int64_t sh[8];
    int nd = weft_graph_value_shape(g, v, sh);
    const void *p = weft_graph_value_data(g, v);
    if (!p || (nd == 1 && sh[0] != 1) || nd > 1) return false;
    switch (weft_graph_value_type(g, v)) {
    case WEFT_TYPE_FLOAT32: *out = *(const float *)p; return true;
    case WEFT_TYPE_INT64: *out = (double)*(const int64_t *)p; return true;
    case WEFT_TYPE_INT32: *out = *(const int32_t *)p; return true;
    case WEFT_TYPE_BOOL: *out = *(const uint8_t *)p; return true;
    default: return false;
    }
}

/* Dropout that keeps everything: Identity (+ an all-true mask when asked for). */
static weft_status dropout_identity(weft_graph *g, const char *nname, int n_in, const weft_value *ins, int n_out,
                                    weft_value *outs, bool *done)
{
    if (n_in < 1 || ins[0] < 0) return WEFT_OK;
    double training = 0, ratio = 0.5;
    if (n_in >= 3 && ins[2] >= 0 && !const_scalar(g, ins[2], &training)) return WEFT_OK;
    if (n_in >= 2 && ins[1] >= 0 && !const_scalar(g, ins[1], &ratio)) return WEFT_OK;
    if (training != 0 && ratio != 0) return WEFT_OK; /* it would drop: the op refuses it */
    if (n_out == 1 && training == 0) return WEFT_OK; /* the plain alias op */
    int64_t shape[8];
    int nd = weft_graph_value_shape(g, ins[0], shape);
    int64_t numel = 1;
    for (int d = 0; d < nd; d++) numel *= shape[d];
    uint8_t *ones = weft_malloc((size_t)(numel > 0 ? numel : 1));
    if (!ones) return weft_fail(WEFT_ERR_NOMEM, "Dropout node '%s': out of memory", nname);
    memset(ones, 1, (size_t)(numel > 0 ? numel : 1));
    char name[300];
    snprintf(name, sizeof name, "%s.mask", nname);
    weft_status rc = n_out == 2 ? weft_graph_add_constant(g, name, WEFT_TYPE_BOOL, nd, shape, ones, &outs[1]) : WEFT_OK;
    free(ones);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Identity", nname, 1, ins, 0, NULL, 1, &outs[0]);
    *done = rc == WEFT_OK;
    return rc;
}

/* "<base><suffix>" into buf. */
static const char *sub_name(char *buf, size_t cap, const char *base, const char *suffix)
{
    snprintf(buf, cap, "%s%s", base, suffix);
    return buf;
}

/* An op whose node name is "<nname><suffix>" and that has one output. */
weft_status weft_onnx_add_op1(weft_graph *g, const char *op, const char *nname, const char *suffix, int n_in,
                              const weft_value *ins, int n_attrs, const weft_attr *attrs, weft_value *out)
{
    char name[300];
    return weft_graph_add_op(g, op, sub_name(name, sizeof name, nname, suffix), n_in, ins, n_attrs, attrs, 1, out);
}

/* ---- 1-D Conv / ConvTranspose / MaxPool / AveragePool -> the 2-D op on [N, C, 1, W] ---------- */

static bool is_lift_op(const char *op)
{
    return strcmp(op, "Conv") == 0 || strcmp(op, "ConvTranspose") == 0 || strcmp(op, "MaxPool") == 0 ||
           strcmp(op, "AveragePool") == 0;
}

/* v with a new axis 2 of extent 1: a new constant when v is a constant, else an Unsqueeze. */
static weft_status lift_value(weft_graph *g, const char *nname, const char *suffix, weft_value v, weft_value *out)
{
    int64_t sh[8];
    int nd = weft_graph_value_shape(g, v, sh);
    const void *data = weft_graph_value_data(g, v);
    char name[300];
    sub_name(name, sizeof name, nname, suffix);
    if (data && nd == 3)
        return weft_graph_add_constant(g, name, weft_graph_value_type(g, v), 4, (int64_t[]){sh[0], sh[1], 1, sh[2]},
                                       data, out);
    weft_value ax;
    weft_status rc = weft_onnx_add_i64(g, name, "axes", 1, (int64_t[]){2}, &ax);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Unsqueeze", name, 2, (weft_value[]){v, ax}, 0, NULL, 1, out);
    return rc;
}

/* The node on a 3-D input as the 2-D op (itself rewritten when a 2-D rewrite applies) between
 * Unsqueeze and Squeeze of axis 2: per-axis attributes gain a leading 1 (output_padding 0),
 * pads [b, e] become [0, b, 0, e]; 3-D weights gain the same unit axis. */
static weft_status lift_1d(weft_graph *g, const char *op, const char *nname, int n_in, const weft_value *ins,
                           int n_attrs, const weft_attr *attrs, weft_value *outs, bool *done)
{
    enum { MAX_ATTRS = 64 };
    weft_attr at[MAX_ATTRS];
    int64_t vals[MAX_ATTRS][4];
    if (n_attrs > MAX_ATTRS)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': %d attributes (at most %d)", op, nname, n_attrs,
                         MAX_ATTRS);
    for (int i = 0; i < n_attrs; i++) {
        at[i] = attrs[i];
        const char *nm = attrs[i].name ? attrs[i].name : "";
        bool pads = strcmp(nm, "pads") == 0, opad = strcmp(nm, "output_padding") == 0;
        if (!pads && !opad && strcmp(nm, "kernel_shape") != 0 && strcmp(nm, "strides") != 0 &&
            strcmp(nm, "dilations") != 0 && strcmp(nm, "output_shape") != 0)
            continue;
        int want = pads ? 2 : 1;
        if (attrs[i].kind != WEFT_ATTR_INTS || attrs[i].n != want)
            return weft_fail(WEFT_ERR_INVALID_ARG,
                             "%s node '%s': attribute %s has %d elements, expected %d (the input is 1-D: [N, C, W])",
                             op, nname, nm, attrs[i].kind == WEFT_ATTR_INTS ? attrs[i].n : 0, want);
        int64_t *v = vals[i];
        if (pads) {
            v[0] = 0, v[1] = attrs[i].ints[0], v[2] = 0, v[3] = attrs[i].ints[1];
        } else {
            v[0] = opad ? 0 : 1, v[1] = attrs[i].ints[0];
        }
        at[i].n = 2 * want;
        at[i].ints = v;
    }
    weft_value in2[3] = {-1, -1, -1}, y;
    if (n_in > 3) return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': has %d inputs, expected at most 3", op, nname, n_in);
    for (int i = 0; i < n_in; i++) in2[i] = ins[i];
    weft_status rc = lift_value(g, nname, "/lift_x", ins[0], &in2[0]);
    int64_t ws[8];
    bool conv = strcmp(op, "Conv") == 0 || strcmp(op, "ConvTranspose") == 0;
    if (rc == WEFT_OK && conv && n_in >= 2 && ins[1] >= 0 && weft_graph_value_shape(g, ins[1], ws) == 3)
        rc = lift_value(g, nname, "/lift_w", ins[1], &in2[1]);
    bool inner = false;
    if (rc == WEFT_OK) rc = weft_onnx_decompose(g, op, nname, n_in, in2, n_attrs, at, 1, &y, &inner);
    if (rc == WEFT_OK && !inner) rc = weft_graph_add_op(g, op, nname, n_in, in2, n_attrs, at, 1, &y);
    weft_value ax;
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "lift_axes", 1, (int64_t[]){2}, &ax);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Squeeze", nname, "/lift_squeeze", 2, (weft_value[]){y, ax}, 0, NULL, outs);
    *done = rc == WEFT_OK;
    return rc;
}

/* ---- DepthToSpace / SpaceToDepth -> Reshape, Transpose, Reshape ------------------------------ */

/* DCR: [N, bs, bs, C', H, W] perm [0,3,4,1,5,2]; CRD: [N, C', bs, bs, H, W] perm [0,1,4,2,5,3];
 * both then [N, C', H*bs, W*bs] (C' = C / bs^2). SpaceToDepth: [N, C, H/bs, bs, W/bs, bs] perm
 * [0,3,5,1,2,4], then [N, C*bs*bs, H/bs, W/bs]. */
static weft_status depth_space(weft_graph *g, const char *op, const char *nname, int n_in, const weft_value *ins,
                               int n_attrs, const weft_attr *attrs, int n_out, weft_value *outs, bool *done)
{
    bool d2s = strcmp(op, "DepthToSpace") == 0;
    if (n_in != 1 || ins[0] < 0 || n_out != 1)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': has %d inputs and %d outputs, expected 1 and 1", op,
                         nname, n_in, n_out);
    const weft_attr *ba = weft_onnx_find_attr(n_attrs, attrs, "blocksize", WEFT_ATTR_INT);
    if (!ba) return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': attribute blocksize is missing", op, nname);
    int64_t bs = ba->i, xs[8];
    if (bs < 1)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': attribute blocksize=%lld, expected >= 1", op, nname,
                         (long long)bs);
    const weft_attr *ma = weft_onnx_find_attr(n_attrs, attrs, "mode", WEFT_ATTR_STRING);
    bool crd = ma && strcmp(ma->s, "CRD") == 0;
    if (d2s && ((ma && !crd && strcmp(ma->s, "DCR") != 0) || (!ma && any_attr(n_attrs, attrs, "mode"))))
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': attribute mode='%s', expected 'DCR' or 'CRD'", op,
                         nname, ma ? ma->s : "?");
    int nd = weft_graph_value_shape(g, ins[0], xs);
    char dims[128];
    weft_onnx_dims_str(dims, sizeof dims, (size_t)(nd > 0 ? nd : 0), xs);
    if (nd != 4 || xs[1] < 0 || xs[2] < 0 || xs[3] < 0)
        return weft_fail(WEFT_ERR_SHAPE, "%s node '%s': input has shape %s, expected 4 dims [N, C, H, W] with known "
                         "C, H, W", op, nname, dims);
    int64_t N = xs[0] < 0 ? 0 : xs[0], C = xs[1], H = xs[2], W = xs[3]; /* 0: Reshape copies N */
    if (d2s && (bs > C / bs || C % (bs * bs) != 0))
        return weft_fail(WEFT_ERR_SHAPE, "%s node '%s': blocksize=%lld does not divide the %lld channels of input %s "
                         "into blocksize^2 groups", op, nname, (long long)bs, (long long)C, dims);
    if (!d2s && (H % bs != 0 || W % bs != 0))
        return weft_fail(WEFT_ERR_SHAPE, "%s node '%s': blocksize=%lld does not divide H and W of input %s", op,
                         nname, (long long)bs, dims);
    int64_t r6[6], perm[6], r4[4];
    if (!d2s) {
        memcpy(r6, (int64_t[]){N, C, H / bs, bs, W / bs, bs}, sizeof r6);
        memcpy(perm, (int64_t[]){0, 3, 5, 1, 2, 4}, sizeof perm);
        memcpy(r4, (int64_t[]){N, C * bs * bs, H / bs, W / bs}, sizeof r4);
    } else if (crd) {
        memcpy(r6, (int64_t[]){N, C / (bs * bs), bs, bs, H, W}, sizeof r6);
        memcpy(perm, (int64_t[]){0, 1, 4, 2, 5, 3}, sizeof perm);
    } else {
        memcpy(r6, (int64_t[]){N, bs, bs, C / (bs * bs), H, W}, sizeof r6);
        memcpy(perm, (int64_t[]){0, 3, 4, 1, 5, 2}, sizeof perm);
    }
    if (d2s) memcpy(r4, (int64_t[]){N, C / (bs * bs), H * bs, W * bs}, sizeof r4);
    weft_attr pa = {.name = "perm", .kind = WEFT_ATTR_INTS, .n = 6, .ints = perm};
    weft_value s6, s4, a, b;
    weft_status rc = weft_onnx_add_i64(g, nname, "shape6", 6, r6, &s6);
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "shape4", 4, r4, &s4);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Reshape", nname, "/split", 2, (weft_value[]){ins[0], s6}, 0, NULL, &a);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Transpose", nname, "/shuffle", 1, &a, 1, &pa, &b);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Reshape", nname, "", 2, (weft_value[]){b, s4}, 0, NULL, outs);
    *done = rc == WEFT_OK;
    return rc;
}

/* ---- InstanceNormalization -> ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, Mul, Add -------- */

weft_status weft_onnx_axis_param(weft_graph *g, const char *nname, const char *what, weft_value p, int nd, int64_t C,
                                 weft_value *out)
{
    int64_t sh[8] = {C, 1, 1, 1, 1, 1, 1, 1};
    char name[300];
    sub_name(name, sizeof name, nname, what);
    const void *data = weft_graph_value_data(g, p);
    if (data) return weft_graph_add_constant(g, name, weft_graph_value_type(g, p), nd, sh, data, out);
    weft_value s;
    weft_status rc = weft_onnx_add_i64(g, name, "shape", nd, sh, &s);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Reshape", name, 2, (weft_value[]){p, s}, 0, NULL, 1, out);
    return rc;
}

static weft_status instance_norm(weft_graph *g, const char *nname, int n_in, const weft_value *ins, int n_attrs,
                                 const weft_attr *attrs, int n_out, weft_value *outs, bool *done)
{
    const char *op = "InstanceNormalization";
    if (n_in != 3 || ins[0] < 0 || ins[1] < 0 || ins[2] < 0 || n_out != 1)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': has %d inputs and %d outputs, expected 3 (input, "
                         "scale, B) and 1", op, nname, n_in, n_out);
    int64_t xs[8], ps[8];
    int r = weft_graph_value_shape(g, ins[0], xs);
    char dims[128];
    weft_onnx_dims_str(dims, sizeof dims, (size_t)(r > 0 ? r : 0), xs);
    if (r < 3)
        return weft_fail(WEFT_ERR_SHAPE, "%s node '%s': input has shape %s, expected at least 3 dims [N, C, D1, ...]",
                         op, nname, dims);
    for (int i = 1; i < 3; i++) {
        int pn = weft_graph_value_shape(g, ins[i], ps);
        if (pn != 1 || ps[0] != xs[1]) {
            char pd[128];
            weft_onnx_dims_str(pd, sizeof pd, (size_t)(pn > 0 ? pn : 0), ps);
            return weft_fail(WEFT_ERR_SHAPE, "%s node '%s': input %s has shape %s, expected [%lld] (the channels of "
                             "input %s)", op, nname, i == 1 ? "scale" : "B", pd, (long long)xs[1], dims);
        }
    }
    const weft_attr *ea = weft_onnx_find_attr(n_attrs, attrs, "epsilon", WEFT_ATTR_FLOAT);
    float eps = ea ? (float)ea->f : 1e-5f;
    int64_t axes[8];
    for (int d = 2; d < r; d++) axes[d - 2] = d;
    weft_attr ra = {.name = "axes", .kind = WEFT_ATTR_INTS, .n = r - 2, .ints = axes};
    weft_value scale, bias, ev, mean, d, sq, var, ve, sd, nrm, sc;
    char name[300];
    weft_status rc = weft_onnx_axis_param(g, nname, ".scale", ins[1], r - 1, xs[1], &scale);
    if (rc == WEFT_OK) rc = weft_onnx_axis_param(g, nname, ".bias", ins[2], r - 1, xs[1], &bias);
    if (rc == WEFT_OK)
        rc = weft_graph_add_constant(g, sub_name(name, sizeof name, nname, ".epsilon"), WEFT_TYPE_FLOAT32, 0,
                                     (int64_t[]){1}, &eps, &ev);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "ReduceMean", nname, "/mean", 1, ins, 1, &ra, &mean);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Sub", nname, "/center", 2, (weft_value[]){ins[0], mean}, 0, NULL, &d);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Mul", nname, "/square", 2, (weft_value[]){d, d}, 0, NULL, &sq);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "ReduceMean", nname, "/var", 1, &sq, 1, &ra, &var);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Add", nname, "/var_eps", 2, (weft_value[]){var, ev}, 0, NULL, &ve);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Sqrt", nname, "/std", 1, &ve, 0, NULL, &sd);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Div", nname, "/normalize", 2, (weft_value[]){d, sd}, 0, NULL, &nrm);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Mul", nname, "/scale", 2, (weft_value[]){nrm, scale}, 0, NULL, &sc);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Add", nname, "", 2, (weft_value[]){sc, bias}, 0, NULL, outs);
    *done = rc == WEFT_OK;
    return rc;
}

/* ConvTranspose -> sub-pixel Conv + pixel shuffle + crop (the plan p is valid). */
static weft_status subpixel_conv(weft_graph *g, const char *nname, int n_in, const weft_value *ins,
                                 const subpixel *pp, weft_value *outs, bool *done)
{
    const subpixel p = *pp;
    int nd = p.nd;
    int64_t phases = 1, taps = 1, ktaps = 1;
    for (int a = 0; a < nd; a++) phases *= p.s[a], taps *= p.J[a], ktaps *= p.K[a];
    int64_t cpg = p.C / p.group, F2 = p.F * phases;
    const float *w = weft_graph_value_data(g, ins[1]);
    const float *b = n_in == 3 && ins[2] >= 0 ? weft_graph_value_data(g, ins[2]) : NULL;
    size_t wn = (size_t)(F2 * cpg * taps);
    float *w2 = weft_calloc(wn ? wn : 1, sizeof *w2), *b2 = b ? weft_malloc((size_t)F2 * sizeof *b2) : NULL;
    if (!w2 || (b && !b2)) {
        free(w2);
        free(b2);
        return weft_fail(WEFT_ERR_NOMEM, "ConvTranspose node '%s': out of memory", nname);
    }
    /* W2[oc, cl, j'..] = W[grp * cpg + cl, fl, p_a + (J_a-1-j'_a) * s_a ..], oc = f * phases + phase
     * (phase and j' in row-major order over the axes) */
    for (int64_t f = 0; f < p.F; f++)
        for (int64_t ph = 0; ph < phases; ph++) {
            int64_t oc = f * phases + ph, grp = f / p.Fg, fl = f % p.Fg, pa[3] = {0, 0, 0};
            for (int64_t r = ph, a = nd - 1; a >= 0; a--) pa[a] = r % p.s[a], r /= p.s[a];
            if (b2) b2[oc] = b[f];
            for (int64_t cl = 0; cl < cpg; cl++)
                for (int64_t t = 0; t < taps; t++) {
                    int64_t kk = 0; /* the tap's flat index in W's kernel, or -1 past its end */
                    for (int64_t r = t, a = nd - 1, mul = 1; a >= 0 && kk >= 0; a--) {
                        int64_t j = r % p.J[a], k = pa[a] + (p.J[a] - 1 - j) * p.s[a];
                        r /= p.J[a];
                        if (k >= p.K[a]) kk = -1;
                        else kk += k * mul, mul *= p.K[a];
                    }
                    if (kk < 0) continue;
                    int64_t c = grp * cpg + cl;
                    w2[(oc * cpg + cl) * taps + t] = w[(c * p.Fg + fl) * ktaps + kk];
                }
        }
    char name[300];
    int64_t wshape[5] = {F2, cpg, p.J[0], p.J[1], p.J[2]};
    weft_value wv, bv = -1, z, r6, tr, r4, st, en, ax, y;
    snprintf(name, sizeof name, "%s.subpixel_w", nname);
    weft_status rc = weft_graph_add_constant(g, name, WEFT_TYPE_FLOAT32, 2 + nd, wshape, w2, &wv);
    if (rc == WEFT_OK && b2) {
        snprintf(name, sizeof name, "%s.subpixel_b", nname);
        rc = weft_graph_add_constant(g, name, WEFT_TYPE_FLOAT32, 1, (int64_t[]){F2}, b2, &bv);
    }
    free(w2);
    free(b2);
    if (rc != WEFT_OK) return rc;
    int64_t pads[6], zs[3], split[8], merged[5], perm[8], starts[3], ends[3], axes[3];
    bool crop = false;
    split[0] = merged[0] = p.N, split[1] = merged[1] = p.F, perm[0] = 0, perm[1] = 1;
    for (int a = 0; a < nd; a++) {
        zs[a] = p.H[a] + p.J[a] - 1 + p.extra[a];
        pads[a] = p.J[a] - 1, pads[nd + a] = p.J[a] - 1 + p.extra[a];
        split[2 + a] = p.s[a], split[2 + nd + a] = zs[a], merged[2 + a] = zs[a] * p.s[a];
        perm[2 + 2 * a] = 2 + nd + a, perm[3 + 2 * a] = 2 + a;
        starts[a] = p.pb[a], ends[a] = p.pb[a] + p.out[a], axes[a] = 2 + a;
        crop = crop || p.pb[a] || ends[a] != merged[2 + a];
    }
    weft_attr conv_attrs[3] = {
        {.name = "pads", .kind = WEFT_ATTR_INTS, .n = 2 * nd, .ints = pads},
        {.name = "group", .kind = WEFT_ATTR_INT, .i = p.group},
        {.name = "kernel_shape", .kind = WEFT_ATTR_INTS, .n = nd, .ints = p.J},
    };
    weft_attr perm_attr = {.name = "perm", .kind = WEFT_ATTR_INTS, .n = 2 + 2 * nd, .ints = perm};
    char node[300];
    snprintf(node, sizeof node, "%s/subpixel_conv", nname);
    weft_value conv_in[3] = {ins[0], wv, bv};
    if (nd == 3) { /* onto 2-D Convs by the 3-D rewrite */
        bool conv_done = false;
        rc = weft_onnx_conv3d(g, "Conv", node, 3, conv_in, 3, conv_attrs, 1, &z, &conv_done);
        if (rc == WEFT_OK && !conv_done)
            rc = weft_fail(WEFT_ERR_INTERNAL, "ConvTranspose node '%s': its sub-pixel 3-D Conv was not rewritten", nname);
    } else rc = weft_graph_add_op(g, "Conv", node, 3, conv_in, 3, conv_attrs, 1, &z);
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "subpixel_split_shape", 2 + 2 * nd, split, &r6);
    snprintf(node, sizeof node, "%s/subpixel_split", nname);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Reshape", node, 2, (weft_value[]){z, r6}, 0, NULL, 1, &tr);
    snprintf(node, sizeof node, "%s/subpixel_shuffle", nname);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Transpose", node, 1, &tr, 1, &perm_attr, 1, &z);
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "subpixel_merged_shape", 2 + nd, merged, &r4);
    snprintf(node, sizeof node, "%s/subpixel_merge", nname);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Reshape", node, 2, (weft_value[]){z, r4}, 0, NULL, 1, &tr);
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "subpixel_starts", nd, starts, &st);
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "subpixel_ends", nd, ends, &en);
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "subpixel_axes", nd, axes, &ax);
    if (rc == WEFT_OK) {
        if (crop) rc = weft_graph_add_op(g, "Slice", nname, 4, (weft_value[]){tr, st, en, ax}, 0, NULL, 1, &y);
        else y = tr;
    }
    if (rc != WEFT_OK) return rc;
    outs[0] = y;
    *done = true;
    return WEFT_OK;
}

/* A ConvTranspose over a single input pixel (every spatial extent 1: a generator's latent
 * vector projected to its first feature map) with group 1 and no output padding is a matrix
 * product: y[n, f, k..] = sum_c x[n, c] w[c, f, k..] + b[f], i.e. Reshape x to [N, C], MatMul
 * by w viewed as [C, F * K..] (its own data), Reshape to [N, F, K..], the bias added, the pads
 * cropped. The sub-pixel Conv would pad the pixel by K - 1 on every side and multiply
 * (K^2 - 1) / K^2 zeros: DCGAN's 100 -> 256x4x4 took 250 us at 52 GFLOP/s of which 15/16
 * were zeros. */
static bool single_pixel(const subpixel *p)
{
    if (p->group != 1) return false;
    for (int a = 0; a < p->nd; a++)
        if (p->H[a] != 1 || p->op[a] != 0) return false;
    return true;
}

static weft_status single_pixel_product(weft_graph *g, const char *nname, int n_in, const weft_value *ins,
                                        const subpixel *p, weft_value *outs, bool *done)
{
    int nd = p->nd;
    int64_t kk = 1, kshape[5] = {p->N, p->F, 1, 1, 1}, starts[3], ends[3], axes[3], bshape[4] = {p->F, 1, 1, 1};
    bool crop = false;
    for (int a = 0; a < nd; a++) {
        kk *= p->K[a], kshape[2 + a] = p->K[a];
        starts[a] = p->pb[a], ends[a] = p->K[a] - p->pe[a], axes[a] = 2 + a;
        crop = crop || p->pb[a] || p->pe[a];
    }
    char name[300];
    snprintf(name, sizeof name, "%s.matmul_w", nname);
    weft_value wv, x2, shp, y, r, bv, st, en, ax;
    weft_status rc = weft_graph_add_constant(g, name, WEFT_TYPE_FLOAT32, 2, (int64_t[]){p->C, p->F * kk},
                                             weft_graph_value_data(g, ins[1]), &wv);
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "pixel_shape", 2, (int64_t[]){p->N, p->C}, &shp);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Reshape", nname, "/pixel", 2, (weft_value[]){ins[0], shp}, 0, NULL, &x2);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "MatMul", nname, "/product", 2, (weft_value[]){x2, wv}, 0, NULL, &y);
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "map_shape", 2 + nd, kshape, &shp);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Reshape", nname, "/map", 2, (weft_value[]){y, shp}, 0, NULL, &r);
    if (rc == WEFT_OK && n_in == 3 && ins[2] >= 0) {
        snprintf(name, sizeof name, "%s.map_b", nname);
        rc = weft_graph_add_constant(g, name, WEFT_TYPE_FLOAT32, 1 + nd, bshape, weft_graph_value_data(g, ins[2]), &bv);
        if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Add", nname, crop ? "/bias" : "", 2, (weft_value[]){r, bv}, 0, NULL, &r);
    }
    if (rc == WEFT_OK && crop) {
        rc = weft_onnx_add_i64(g, nname, "crop_starts", nd, starts, &st);
        if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "crop_ends", nd, ends, &en);
        if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "crop_axes", nd, axes, &ax);
        if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Slice", nname, 4, (weft_value[]){r, st, en, ax}, 0, NULL, 1, &r);
    }
    if (rc != WEFT_OK) return rc;
    outs[0] = r;
    *done = true;
    return WEFT_OK;
}

/* ---- MaxUnpool -> a ScatterElements into zeros ----------------------------------------------- */

/* MaxUnpool(X, I, output_shape?) puts each element of X at its position I in a zero output:
 * MaxPool's Indices, flat over the whole NC... tensor. The output's spatial extents are
 * output_shape's (a constant) or (in - 1) * stride - pads + kernel. One ScatterElements along the
 * flattened output (on CPUs a loop kernel: ops/nn_scatter.c) between Reshapes; an index past the
 * output lands nowhere. Shapes not known at load time leave the node as it is (refused). */
static weft_status max_unpool(weft_graph *g, const char *nname, int n_in, const weft_value *ins, int n_attrs,
                              const weft_attr *attrs, weft_value *outs, bool *done)
{
    int64_t xs[8], is[8], k[6], st[6], pads[12], out[8], total = 1;
    int nd = n_in >= 2 && ins[0] >= 0 && ins[1] >= 0 ? weft_graph_value_shape(g, ins[0], xs) : 0;
    if (nd < 3 || nd > 5 || weft_graph_value_shape(g, ins[1], is) != nd) return WEFT_OK;
    for (int d = 0; d < nd; d++)
        if (xs[d] <= 0 || is[d] != xs[d]) return WEFT_OK;
    int sp = nd - 2;
    if (!ints_attr(n_attrs, attrs, "kernel_shape", sp, 0, 1, k) || k[0] == 0 ||
        !ints_attr(n_attrs, attrs, "strides", sp, 1, 1, st) || !ints_attr(n_attrs, attrs, "pads", 2 * sp, 0, 0, pads))
        return weft_fail(WEFT_ERR_INVALID_ARG, "MaxUnpool node '%s': attributes kernel_shape (required), strides and "
                         "pads must hold %d, %d and %d positive (pads: non-negative) integers", nname, sp, sp, 2 * sp);
    out[0] = xs[0], out[1] = xs[1];
    for (int d = 0; d < sp; d++) out[2 + d] = (xs[2 + d] - 1) * st[d] - pads[d] - pads[sp + d] + k[d];
    if (n_in >= 3 && ins[2] >= 0) {
        int64_t os[8];
        const int64_t *v = weft_graph_value_data(g, ins[2]);
        if (!v || weft_graph_value_type(g, ins[2]) != WEFT_TYPE_INT64 || weft_graph_value_shape(g, ins[2], os) != 1 ||
            os[0] != nd)
            return weft_fail(WEFT_ERR_UNSUPPORTED, "MaxUnpool node '%s': input output_shape must be a constant int64 "
                             "vector of %d elements", nname, nd);
        for (int d = 0; d < nd; d++) out[d] = v[d];
    }
    for (int d = 0; d < nd; d++) {
        if (out[d] < 1 || (d < 2 && out[d] != xs[d]))
            return weft_fail(WEFT_ERR_SHAPE, "MaxUnpool node '%s': output dim %d is %lld (input dims N, C must stay, "
                             "others be >= 1)", nname, d, (long long)out[d]);
        total *= out[d];
    }
    weft_value flat_shape, out_shape, zeros_shape, xf, ifl, zeros, sc;
    weft_attr axis0 = {.name = "axis", .kind = WEFT_ATTR_INT, .i = 0};
    weft_status rc = weft_onnx_add_i64(g, nname, "flat", 1, (int64_t[]){-1}, &flat_shape);
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "zeros_shape", 1, &total, &zeros_shape);
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, nname, "out_shape", nd, out, &out_shape);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Reshape", nname, "/x", 2, (weft_value[]){ins[0], flat_shape}, 0, NULL, &xf);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Reshape", nname, "/i", 2, (weft_value[]){ins[1], flat_shape}, 0, NULL, &ifl);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "ConstantOfShape", nname, "/zeros", 1, &zeros_shape, 0, NULL, &zeros);
    if (rc == WEFT_OK)
        rc = weft_onnx_add_op1(g, "ScatterElements", nname, "/scatter", 3, (weft_value[]){zeros, ifl, xf}, 1, &axis0, &sc);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Reshape", nname, 2, (weft_value[]){sc, out_shape}, 0, NULL, 1, outs);
    *done = rc == WEFT_OK;
    return rc;
}

weft_status weft_onnx_decompose(weft_graph *g, const char *op_type, const char *nname, int n_in, const weft_value *ins,
                                int n_attrs, const weft_attr *attrs, int n_out, weft_value *outs, bool *done)
{
    *done = false;
    int64_t xs[8];
    if (strcmp(op_type, "Dropout") == 0 && n_out <= 2) return dropout_identity(g, nname, n_in, ins, n_out, outs, done);
    weft_status rc3 = weft_onnx_conv3d(g, op_type, nname, n_in, ins, n_attrs, attrs, n_out, outs, done);
    if (rc3 != WEFT_OK || *done) return rc3;
    if (is_lift_op(op_type) && n_in >= 1 && ins[0] >= 0 && n_out == 1 && weft_graph_value_shape(g, ins[0], xs) == 3)
        return lift_1d(g, op_type, nname, n_in, ins, n_attrs, attrs, outs, done);
    if (strcmp(op_type, "DepthToSpace") == 0 || strcmp(op_type, "SpaceToDepth") == 0)
        return depth_space(g, op_type, nname, n_in, ins, n_attrs, attrs, n_out, outs, done);
    if (strcmp(op_type, "Einsum") == 0) {
        weft_status rc = weft_onnx_einsum(g, nname, n_in, ins, n_attrs, attrs, n_out, outs);
        *done = rc == WEFT_OK;
        return rc;
    }
    if (strcmp(op_type, "InstanceNormalization") == 0)
        return instance_norm(g, nname, n_in, ins, n_attrs, attrs, n_out, outs, done);
    if (strcmp(op_type, "MaxUnpool") == 0 && n_out == 1) return max_unpool(g, nname, n_in, ins, n_attrs, attrs, outs, done);
    subpixel p;
    if (strcmp(op_type, "ConvTranspose") == 0 && n_out == 1 && subpixel_plan(g, n_in, ins, n_attrs, attrs, &p))
        return single_pixel(&p) ? single_pixel_product(g, nname, n_in, ins, &p, outs, done)
                                : subpixel_conv(g, nname, n_in, ins, &p, outs, done);
    return WEFT_OK;
}
