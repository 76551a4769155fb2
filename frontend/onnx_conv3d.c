/* ONNX 3-D Conv, MaxPool and AveragePool (input [N, C, D, H, W]) and LRN, rewritten on import
 * onto weft's 2-D ops (the ops and their schedules are 2-D only).
 *
 * Conv: the depth taps become input channels of one 2-D Conv over [N * Do, kD * C, H, W].
 * Per output depth o and tap t the input plane is d = o * sD + t * dD of x padded along D, so
 *
 *   Pad (D only, zeros) -> kD strided Slices along D (start t * dD, step sD, Do planes) ->
 *   Concat along D ([N, C, kD * Do, H, W]) -> view [N, g, C/g, kD, Do, H, W] ->
 *   Transpose [N, Do, g, kD, C/g, H, W] -> view [N * Do, g * kD * C/g, H, W]
 *
 * and the weights [F, C/g, kD, kH, kW] -> Transpose [F, kD, C/g, kH, kW] -> view
 * [F, kD * C/g, kH, kW] (a new constant when they are one), so input channel
 * (group, tap, channel) of the 2-D Conv meets weight (tap, channel) of its group. The 2-D Conv
 * takes the H and W strides, pads and dilations, the group and the bias; its output
 * [N * Do, F, Ho, Wo] is viewed as [N, Do, F, Ho, Wo] and transposed to [N, F, Do, Ho, Wo].
 * Slices and Concat keep every index affine (a Gather of [Do, kD] indices would not be a
 * progression and would select among them per element); the copy is one injective kernel
 * that fusion keeps apart from the Conv (it enlarges the data kD / sD times: inlined, it
 * would be recomputed per tap), and the output Transpose fuses with what follows it (BN,
 * ReLU, a residual Add, the next Conv's copy). kD = 1 needs no Concat (one Slice when sD > 1
 * or the input is cropped). Every Transpose runs on the view with unit dims dropped and
 * adjacent runs merged, and is left out when it keeps the order (Do = 1, C/g = 1, kD = 1).
 *
 * MaxPool / AveragePool: separable. A 2-D pool over (H, W) on [N, C * D, H, W], then a 2-D
 * pool with kernel (kD, 1), strides (sD, 1), pads (bD, 0, eD, 0), dilations (dD, 1) on
 * [N, C, D, Ho * Wo], then a view [N, C, Do, Ho, Wo]. Exact for max; for average the divisor
 * is kD * kH * kW (count_include_pad=1) or the product of the per-axis counts of taps inside
 * the input (count_include_pad=0), both products of per-axis factors, so the two passes
 * divide correctly. ceil_mode, count_include_pad and storage_order go to both 2-D nodes,
 * which go through weft_onnx_decompose again; what the 2-D op refuses (dilations on
 * AveragePool) it names. A pass whose kernel, stride and pads are all trivial is
 * left out. MaxPool's Indices output is refused.
 *
 * auto_pad: SAME_UPPER / SAME_LOWER / VALID become explicit pads (the input dims are known);
 * per-axis attributes must have 3 (pads: 6) elements.
 *
 * LRN (any rank >= 2, [N, C, ...]): y = x / (bias + alpha / size * square_sum)^beta, where
 * square_sum sums x^2 over channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]
 * clipped to [0, C). That sum over size is an AveragePool with kernel (size, 1) and
 * count_include_pad=1 over the channels of x * x viewed as [N, 1, C, rest], the window's
 * lopsidedness in its pads; then Mul alpha, Add bias, Pow beta, Div. The views need no dims
 * (Reshape [0, 0, -1], Unsqueeze, Reshape to Shape(x)), so an LRN after a Conv in a graph
 * with a symbolic batch (AlexNet, GoogLeNet) is rewritten too; Conv and the pools need C, D,
 * H and W of their input at import.
 *
 * Errors (attribute counts and values, a missing kernel_shape or size, unknown C / D / H / W,
 * weights of the wrong shape, MaxPool with Indices) name the op, the node and the attribute.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx.h"
#include "ir/error.h"
#include "runtime/mem.h"

typedef struct node {
    weft_graph *g;
    const char *op, *nname;
    int n_attrs;
    const weft_attr *attrs;
} node;

static const weft_attr *attr(const node *n, const char *name)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].name && strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

static int64_t attr_int(const node *n, const char *name, int64_t dflt)
{
    const weft_attr *a = weft_onnx_find_attr(n->n_attrs, n->attrs, name, WEFT_ATTR_INT);
    return a ? a->i : dflt;
}

static double attr_float(const node *n, const char *name, double dflt)
{
    const weft_attr *a = weft_onnx_find_attr(n->n_attrs, n->attrs, name, WEFT_ATTR_FLOAT);
    return a ? a->f : dflt;
}

/* The per-axis ints attribute `name`: `want` elements, each >= lo; absent: dflt each (or an
 * error when required). */
static weft_status axis_ints(const node *n, const char *name, int want, int64_t dflt, int64_t lo, bool required,
                             int64_t *out)
{
    const weft_attr *a = attr(n, name);
    if (!a) {
        if (required)
            return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': attribute %s is missing", n->op, n->nname, name);
        for (int i = 0; i < want; i++) out[i] = dflt;
        return WEFT_OK;
    }
    if (a->kind != WEFT_ATTR_INTS || a->n != want)
        return weft_fail(WEFT_ERR_INVALID_ARG,
                         "%s node '%s': attribute %s has %d elements, expected %d (the input is 3-D: [N, C, D, H, W])",
                         n->op, n->nname, name, a->kind == WEFT_ATTR_INTS ? a->n : 0, want);
    for (int i = 0; i < want; i++) {
        if (a->ints[i] < lo) {
            char v[128];
            weft_onnx_dims_str(v, sizeof v, (size_t)want, a->ints);
            return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': attribute %s = %s, expected elements >= %lld", n->op,
                             n->nname, name, v, (long long)lo);
        }
        out[i] = a->ints[i];
    }
    return WEFT_OK;
}

/* ---- building blocks -------------------------------------------------------------------- */

static bool same_shape(weft_graph *g, weft_value v, int nd, const int64_t *shape)
{
    int64_t cur[8];
    if (weft_graph_value_shape(g, v, cur) != nd) return false;
    for (int d = 0; d < nd; d++)
        if (cur[d] != shape[d]) return false;
    return true;
}

/* v as `nd` dims `shape` ("<nname><tag>"); v itself when it has that shape already. */
static weft_status view(const node *n, const char *tag, weft_value v, int nd, const int64_t *shape, weft_value *out)
{
    if (same_shape(n->g, v, nd, shape)) {
        *out = v;
        return WEFT_OK;
    }
    char base[300];
    snprintf(base, sizeof base, "%s%s", n->nname, tag);
    weft_value s;
    weft_status rc = weft_onnx_add_i64(n->g, base, "shape", nd, shape, &s);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(n->g, "Reshape", n->nname, tag, 2, (weft_value[]){v, s}, 0, NULL, out);
    return rc;
}

/* v viewed as `nd` dims `shape`, transposed by perm and viewed as `nd_out` dims `out_shape`.
 * The Transpose works on the view with unit dims dropped and runs of input axes that stay
 * adjacent merged into one, and is left out when that keeps the order. shape may hold one -1
 * (an unknown N); a merged dim holding it is -1. */
static weft_status rearrange(const node *n, const char *tag, weft_value v, int nd, const int64_t *shape,
                             const int64_t *perm, int nd_out, const int64_t *out_shape, weft_value *out)
{
    int64_t p[8], first[8], ext[8];
    int np = 0, ng = 0;
    for (int i = 0; i < nd; i++)
        if (shape[perm[i]] != 1) p[np++] = perm[i];
    /* groups in output order: a new one unless p[i] is the next kept axis after p[i - 1] */
    for (int i = 0; i < np; i++) {
        int64_t next = -1;
        if (i > 0)
            for (int64_t a = p[i - 1] + 1; a < nd && next < 0; a++)
                if (shape[a] != 1) next = a;
        if (i > 0 && p[i] == next) {
            ext[ng - 1] = ext[ng - 1] < 0 || shape[p[i]] < 0 ? -1 : ext[ng - 1] * shape[p[i]];
        } else {
            first[ng] = p[i], ext[ng] = shape[p[i]];
            ng++;
        }
    }
    /* the groups' input order: rank of their first axis */
    int64_t in_shape[8], perm2[8];
    bool identity = true;
    for (int j = 0; j < ng; j++) {
        int rank = 0;
        for (int k = 0; k < ng; k++) rank += first[k] < first[j];
        perm2[j] = rank;
        in_shape[rank] = ext[j];
        identity = identity && rank == j;
    }
    if (identity) return view(n, tag, v, nd_out, out_shape, out);
    char t[200];
    weft_value a, b;
    snprintf(t, sizeof t, "%s/view", tag);
    weft_status rc = view(n, t, v, ng, in_shape, &a);
    weft_attr pa = {.name = "perm", .kind = WEFT_ATTR_INTS, .n = ng, .ints = perm2};
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(n->g, "Transpose", n->nname, tag, 1, &a, 1, &pa, &b);
    snprintf(t, sizeof t, "%s/merge", tag);
    if (rc == WEFT_OK) rc = view(n, t, b, nd_out, out_shape, out);
    return rc;
}

/* A 2-D op node "<nname><tag>", itself rewritten when a 2-D rewrite applies (ceil_mode). */
static weft_status add_2d(const node *n, const char *op, const char *tag, int n_in, const weft_value *ins, int n_attrs,
                          const weft_attr *attrs, weft_value *out)
{
    char name[300];
    snprintf(name, sizeof name, "%s%s", n->nname, tag);
    bool done = false;
    weft_status rc = weft_onnx_decompose(n->g, op, name, n_in, ins, n_attrs, attrs, 1, out, &done);
    if (rc == WEFT_OK && !done) rc = weft_graph_add_op(n->g, op, name, n_in, ins, n_attrs, attrs, 1, out);
    return rc;
}

/* ---- the window: kernel, strides, dilations, pads ----------------------------------------- */

typedef struct win3 {
    int64_t in[3], k[3], s[3], d[3], pb[3], pe[3];
} win3;

/* x's shape: 5 dims with C, D, H, W known. */
static weft_status input_5d(const node *n, weft_value x, int64_t *xs)
{
    int nd = weft_graph_value_shape(n->g, x, xs);
    char dims[128];
    weft_onnx_dims_str(dims, sizeof dims, (size_t)(nd > 0 ? nd : 0), xs);
    if (nd != 5 || xs[1] < 0 || xs[2] < 0 || xs[3] < 0 || xs[4] < 0)
        return weft_fail(WEFT_ERR_UNSUPPORTED,
                         "%s node '%s': input X has shape %s, expected 5 dims [N, C, D, H, W] "
                         "with known C, D, H, W",
                         n->op, n->nname, dims);
    return WEFT_OK;
}

/* Strides, dilations and pads (auto_pad resolved) for kernel w->k over w->in. */
static weft_status window3(const node *n, win3 *w)
{
    weft_status rc = axis_ints(n, "strides", 3, 1, 1, false, w->s);
    if (rc == WEFT_OK) rc = axis_ints(n, "dilations", 3, 1, 1, false, w->d);
    if (rc != WEFT_OK) return rc;
    const weft_attr *ap = attr(n, "auto_pad");
    const char *mode = ap && ap->kind == WEFT_ATTR_STRING && ap->s ? ap->s : ap ? "?" : "NOTSET";
    if (strcmp(mode, "NOTSET") == 0) {
        int64_t pads[6];
        if ((rc = axis_ints(n, "pads", 6, 0, 0, false, pads)) != WEFT_OK) return rc;
        for (int i = 0; i < 3; i++) w->pb[i] = pads[i], w->pe[i] = pads[3 + i];
    } else if (strcmp(mode, "SAME_UPPER") == 0 || strcmp(mode, "SAME_LOWER") == 0 || strcmp(mode, "VALID") == 0) {
        for (int i = 0; i < 3; i++) {
            int64_t o = (w->in[i] + w->s[i] - 1) / w->s[i], keff = (w->k[i] - 1) * w->d[i] + 1;
            int64_t total = mode[0] == 'V' ? 0 : (o - 1) * w->s[i] + keff - w->in[i];
            if (total < 0) total = 0;
            w->pb[i] = mode[5] == 'U' ? total / 2 : total - total / 2;
            w->pe[i] = total - w->pb[i];
        }
    } else {
        return weft_fail(WEFT_ERR_INVALID_ARG,
                         "%s node '%s': attribute auto_pad='%s', expected NOTSET, SAME_UPPER, "
                         "SAME_LOWER or VALID",
                         n->op, n->nname, mode);
    }
    for (int i = 0; i < 3; i++) {
        int64_t keff = (w->k[i] - 1) * w->d[i] + 1;
        if (w->in[i] + w->pb[i] + w->pe[i] < keff)
            return weft_fail(WEFT_ERR_SHAPE,
                             "%s node '%s': kernel_shape [%lld, %lld, %lld] (dilated: %lld along axis "
                             "%d) is larger than the padded input [%lld, %lld, %lld] + pads",
                             n->op, n->nname, (long long)w->k[0], (long long)w->k[1], (long long)w->k[2],
                             (long long)keff, 2 + i, (long long)w->in[0], (long long)w->in[1], (long long)w->in[2]);
    }
    return WEFT_OK;
}

/* The output extent along spatial axis i; ceil_mode as PyTorch and the 2-D ops count it (a last
 * window that would start past the input and its begin padding is dropped). Computed, not read
 * from the 2-D op's output: in a graph with symbolic dims that output's shape is not known
 * until the graph is specialized. */
static int64_t extent(const win3 *w, int i, bool ceil_mode)
{
    int64_t span = w->in[i] + w->pb[i] + w->pe[i] - (w->k[i] - 1) * w->d[i] - 1;
    int64_t out = (ceil_mode ? span + w->s[i] - 1 : span) / w->s[i] + 1;
    if (ceil_mode && (out - 1) * w->s[i] >= w->in[i] + w->pb[i]) out--;
    return out;
}

/* ---- Conv ------------------------------------------------------------------------------- */

#define MAX_TAPS 64 /* kD: the Concat's inputs */

/* x [N, C, D, H, W] -> [N * Do, g * kD * C/g, H, W]: pad D, the kD strided slices, regroup. */
static weft_status depth_taps(const node *n, weft_value x, const int64_t *xs, const win3 *w, int64_t group, int64_t Do,
                              weft_value *out)
{
    weft_graph *g = n->g;
    weft_value xp = x, pieces[MAX_TAPS], cat;
    weft_status rc = WEFT_OK;
    int64_t N = xs[0], C = xs[1], H = xs[3], W = xs[4], Dp = xs[2] + w->pb[0] + w->pe[0], kd = w->k[0];
    if (w->pb[0] || w->pe[0]) {
        int64_t pads[10] = {0, 0, w->pb[0], 0, 0, 0, 0, w->pe[0], 0, 0};
        char base[300];
        weft_value pv;
        snprintf(base, sizeof base, "%s/pad_d", n->nname);
        rc = weft_onnx_add_i64(g, base, "pads", 10, pads, &pv);
        if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Pad", n->nname, "/pad_d", 2, (weft_value[]){x, pv}, 0, NULL, &xp);
    }
    for (int64_t t = 0; t < kd && rc == WEFT_OK; t++) {
        int64_t start = t * w->d[0], end = start + (Do - 1) * w->s[0] + 1;
        if (start == 0 && end == Dp && w->s[0] == 1) {
            pieces[t] = xp;
            continue;
        }
        char tag[64], base[300];
        snprintf(tag, sizeof tag, "/tap%lld", (long long)t);
        snprintf(base, sizeof base, "%s%s", n->nname, tag);
        weft_value st, en, ax, sp;
        rc = weft_onnx_add_i64(g, base, "starts", 1, &start, &st);
        if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, base, "ends", 1, &end, &en);
        if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, base, "axes", 1, (int64_t[]){2}, &ax);
        if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, base, "steps", 1, &w->s[0], &sp);
        if (rc == WEFT_OK)
            rc = weft_onnx_add_op1(g, "Slice", n->nname, tag, 5, (weft_value[]){xp, st, en, ax, sp}, 0, NULL,
                                   &pieces[t]);
    }
    if (rc != WEFT_OK) return rc;
    cat = pieces[0];
    if (kd > 1) {
        weft_attr ax = {.name = "axis", .kind = WEFT_ATTR_INT, .i = 2};
        rc = weft_onnx_add_op1(g, "Concat", n->nname, "/taps", (int)kd, pieces, 1, &ax, &cat);
    }
    int64_t split[7] = {N, group, C / group, kd, Do, H, W}, perm[7] = {0, 4, 1, 3, 2, 5, 6};
    int64_t merged[4] = {N < 0 ? -1 : N * Do, C * kd, H, W};
    if (rc == WEFT_OK) rc = rearrange(n, "/taps_to_channels", cat, 7, split, perm, 4, merged, out);
    return rc;
}

/* w [F, C/g, kD, kH, kW] as [F, kD * C/g, kH, kW] (tap-major channels): a new constant when w
 * is a float constant (folding a Transpose of every weight at compile time ran it through the
 * interpreter: 5 s of r3d_18's 13 s load), else Transpose + Reshape. */
static weft_status taps_weight(const node *n, weft_value w, const int64_t *ws, weft_value *out)
{
    int64_t F = ws[0], cg = ws[1], kd = ws[2], khw = ws[3] * ws[4];
    const float *src = weft_graph_value_data(n->g, w);
    if (!src || weft_graph_value_type(n->g, w) != WEFT_TYPE_FLOAT32 || kd == 1 || cg == 1)
        return rearrange(n, "/weight", w, 5, ws, (int64_t[]){0, 2, 1, 3, 4}, 4, (int64_t[]){F, kd * cg, ws[3], ws[4]},
                         out);
    size_t numel = (size_t)(F * cg * kd * khw);
    float *dst = weft_malloc(numel * sizeof *dst);
    if (!dst) return weft_fail(WEFT_ERR_NOMEM, "%s node '%s': out of memory", n->op, n->nname);
    for (int64_t f = 0; f < F; f++)
        for (int64_t c = 0; c < cg; c++)
            for (int64_t t = 0; t < kd; t++)
                memcpy(dst + ((f * kd + t) * cg + c) * khw, src + ((f * cg + c) * kd + t) * khw,
                       (size_t)khw * sizeof *dst);
    char name[300];
    snprintf(name, sizeof name, "%s.taps_weight", n->nname);
    weft_status rc =
        weft_graph_add_constant(n->g, name, WEFT_TYPE_FLOAT32, 4, (int64_t[]){F, kd * cg, ws[3], ws[4]}, dst, out);
    free(dst);
    return rc;
}

static weft_status conv3d(const node *n, int n_in, const weft_value *ins, weft_value *out)
{
    weft_graph *g = n->g;
    if (n_in < 2 || n_in > 3 || ins[0] < 0 || ins[1] < 0)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': has %d inputs, expected 2 or 3 (X, W, optional B)", n->op,
                         n->nname, n_in);
    int64_t xs[8], ws[8];
    weft_status rc = input_5d(n, ins[0], xs);
    if (rc != WEFT_OK) return rc;
    int64_t group = attr_int(n, "group", 1), C = xs[1];
    if (group < 1 || C % group != 0)
        return weft_fail(WEFT_ERR_INVALID_ARG,
                         "%s node '%s': attribute group=%lld does not divide the %lld input "
                         "channels",
                         n->op, n->nname, (long long)group, (long long)C);
    int wn = weft_graph_value_shape(g, ins[1], ws);
    if (wn != 5 || ws[1] != C / group || ws[0] < 1 || ws[0] % group != 0 || ws[2] < 1 || ws[3] < 1 || ws[4] < 1) {
        char wd[128], xd[128];
        weft_onnx_dims_str(wd, sizeof wd, (size_t)(wn > 0 ? wn : 0), ws);
        weft_onnx_dims_str(xd, sizeof xd, 5, xs);
        return weft_fail(WEFT_ERR_SHAPE,
                         "%s node '%s': input W has shape %s, expected [F, %lld, kD, kH, kW] (F a "
                         "multiple of group=%lld) for input X %s",
                         n->op, n->nname, wd, (long long)(C / group), (long long)group, xd);
    }
    win3 w;
    int64_t ks[3];
    for (int i = 0; i < 3; i++) w.in[i] = xs[2 + i], w.k[i] = ws[2 + i];
    if ((rc = axis_ints(n, "kernel_shape", 3, 0, 1, false, ks)) != WEFT_OK) return rc;
    if (attr(n, "kernel_shape") && (ks[0] != w.k[0] || ks[1] != w.k[1] || ks[2] != w.k[2]))
        return weft_fail(WEFT_ERR_SHAPE,
                         "%s node '%s': attribute kernel_shape [%lld, %lld, %lld] does not match the "
                         "weights' kernel [%lld, %lld, %lld]",
                         n->op, n->nname, (long long)ks[0], (long long)ks[1], (long long)ks[2], (long long)w.k[0],
                         (long long)w.k[1], (long long)w.k[2]);
    if ((rc = window3(n, &w)) != WEFT_OK) return rc;
    if (w.k[0] > MAX_TAPS)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': a kernel of %lld taps along D (at most %d)", n->op,
                         n->nname, (long long)w.k[0], MAX_TAPS);
    int64_t F = ws[0];
    int64_t Do = extent(&w, 0, false), Ho = extent(&w, 1, false), Wo = extent(&w, 2, false);
    weft_value x2, w2, y2, in2[3];
    rc = depth_taps(n, ins[0], xs, &w, group, Do, &x2);
    if (rc == WEFT_OK) rc = taps_weight(n, ins[1], ws, &w2);
    if (rc != WEFT_OK) return rc;
    in2[0] = x2, in2[1] = w2, in2[2] = n_in == 3 ? ins[2] : -1;
    weft_attr at[5] = {
        {.name = "kernel_shape", .kind = WEFT_ATTR_INTS, .n = 2, .ints = w.k + 1},
        {.name = "strides", .kind = WEFT_ATTR_INTS, .n = 2, .ints = w.s + 1},
        {.name = "dilations", .kind = WEFT_ATTR_INTS, .n = 2, .ints = w.d + 1},
        {.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = (int64_t[]){w.pb[1], w.pb[2], w.pe[1], w.pe[2]}},
        {.name = "group", .kind = WEFT_ATTR_INT, .i = group},
    };
    rc = add_2d(n, "Conv", "", n_in, in2, 5, at, &y2);
    if (rc != WEFT_OK) return rc;
    return rearrange(n, "/to_ncdhw", y2, 5, (int64_t[]){xs[0], Do, F, Ho, Wo}, (int64_t[]){0, 2, 1, 3, 4}, 5,
                     (int64_t[]){xs[0], F, Do, Ho, Wo}, out);
}

/* ---- MaxPool, AveragePool ---------------------------------------------------------------- */

static weft_status pool3d(const node *n, int n_in, const weft_value *ins, int n_out, weft_value *out)
{
    if (n_out != 1)
        return weft_fail(WEFT_ERR_UNSUPPORTED,
                         "%s node '%s': has %d outputs; the Indices output is not supported for "
                         "a 3-D input [N, C, D, H, W]",
                         n->op, n->nname, n_out);
    if (n_in != 1 || ins[0] < 0)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': has %d inputs, expected 1", n->op, n->nname, n_in);
    int64_t xs[8];
    win3 w;
    weft_status rc = input_5d(n, ins[0], xs);
    if (rc == WEFT_OK) rc = axis_ints(n, "kernel_shape", 3, 0, 1, true, w.k);
    for (int i = 0; i < 3; i++) w.in[i] = xs[2 + i];
    if (rc == WEFT_OK) rc = window3(n, &w);
    if (rc != WEFT_OK) return rc;
    /* the attributes both passes keep: ceil_mode, count_include_pad, storage_order, ... */
    enum { MAX_ATTRS = 32 };
    weft_attr at[MAX_ATTRS + 4];
    int na = 0;
    for (int i = 0; i < n->n_attrs; i++) {
        const char *nm = n->attrs[i].name ? n->attrs[i].name : "";
        if (strcmp(nm, "kernel_shape") == 0 || strcmp(nm, "strides") == 0 || strcmp(nm, "dilations") == 0 ||
            strcmp(nm, "pads") == 0 || strcmp(nm, "auto_pad") == 0)
            continue;
        if (na == MAX_ATTRS)
            return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': more than %d attributes", n->op, n->nname, MAX_ATTRS);
        at[na++] = n->attrs[i];
    }
    int64_t k2[2], s2[2], d2[2], p4[4];
    at[na + 0] = (weft_attr){.name = "kernel_shape", .kind = WEFT_ATTR_INTS, .n = 2, .ints = k2};
    at[na + 1] = (weft_attr){.name = "strides", .kind = WEFT_ATTR_INTS, .n = 2, .ints = s2};
    at[na + 2] = (weft_attr){.name = "dilations", .kind = WEFT_ATTR_INTS, .n = 2, .ints = d2};
    at[na + 3] = (weft_attr){.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = p4};
    bool dil = attr(n, "dilations") != NULL; /* AveragePool refuses dilations other than 1 itself */
    int n2 = na + 3 + dil;
    if (!dil) at[na + 2] = at[na + 3];
    int64_t N = xs[0], C = xs[1], D = xs[2], H = xs[3], W = xs[4], Ho = H, Wo = W;
    bool hw = w.k[1] != 1 || w.k[2] != 1 || w.s[1] != 1 || w.s[2] != 1 || w.pb[1] || w.pb[2] || w.pe[1] || w.pe[2];
    bool dp = w.k[0] != 1 || w.s[0] != 1 || w.pb[0] || w.pe[0];
    weft_value v = ins[0], p;
    bool ceil_mode = attr_int(n, "ceil_mode", 0) != 0;
    if (hw) { /* [N, C * D, H, W] -> [N, C * D, Ho, Wo] */
        k2[0] = w.k[1], k2[1] = w.k[2], s2[0] = w.s[1], s2[1] = w.s[2], d2[0] = w.d[1], d2[1] = w.d[2];
        p4[0] = w.pb[1], p4[1] = w.pb[2], p4[2] = w.pe[1], p4[3] = w.pe[2];
        rc = view(n, "/hw_view", v, 4, (int64_t[]){N, C * D, H, W}, &v);
        if (rc == WEFT_OK) rc = add_2d(n, n->op, dp ? "/hw" : "", 1, &v, n2, at, &p);
        if (rc != WEFT_OK) return rc;
        Ho = extent(&w, 1, ceil_mode), Wo = extent(&w, 2, ceil_mode), v = p;
    }
    if (dp) { /* [N, C, D, Ho * Wo] -> [N, C, Do, Ho * Wo] */
        k2[0] = w.k[0], k2[1] = 1, s2[0] = w.s[0], s2[1] = 1, d2[0] = w.d[0], d2[1] = 1;
        p4[0] = w.pb[0], p4[1] = 0, p4[2] = w.pe[0], p4[3] = 0;
        rc = view(n, "/d_view", v, 4, (int64_t[]){N, C, D, Ho * Wo}, &v);
        if (rc == WEFT_OK) rc = add_2d(n, n->op, hw ? "/d" : "", 1, &v, n2, at, &p);
        if (rc != WEFT_OK) return rc;
        D = extent(&w, 0, ceil_mode), v = p;
    }
    if (!hw && !dp) return weft_onnx_add_op1(n->g, "Identity", n->nname, "", 1, &v, 0, NULL, out);
    return view(n, "/to_ncdhw", v, 5, (int64_t[]){N, C, D, Ho, Wo}, out);
}

/* ---- LRN --------------------------------------------------------------------------------- */

static weft_status lrn(const node *n, int n_in, const weft_value *ins, int n_out, weft_value *out)
{
    weft_graph *g = n->g;
    if (n_in != 1 || ins[0] < 0 || n_out != 1)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': has %d inputs and %d outputs, expected 1 and 1", n->op,
                         n->nname, n_in, n_out);
    const weft_attr *sa = attr(n, "size");
    if (!sa || sa->kind != WEFT_ATTR_INT)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': attribute size is %s", n->op, n->nname,
                         sa ? "not an int" : "missing");
    if (sa->i < 1)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': attribute size=%lld, expected >= 1", n->op, n->nname,
                         (long long)sa->i);
    int64_t xs[8], size = sa->i;
    int r = weft_graph_value_shape(g, ins[0], xs); /* -1: symbolic, known when specialized */
    if (r >= 0 && r < 2) {
        char dims[128];
        weft_onnx_dims_str(dims, sizeof dims, (size_t)r, xs);
        return weft_fail(WEFT_ERR_SHAPE, "%s node '%s': input X has shape %s, expected at least 2 dims [N, C, ...]",
                         n->op, n->nname, dims);
    }
    float alpha = (float)attr_float(n, "alpha", 1e-4), beta = (float)attr_float(n, "beta", 0.75);
    float bias = (float)attr_float(n, "bias", 1.0);
    int64_t k2[2] = {size, 1}, p4[4] = {(size - 1) / 2, 0, size / 2, 0};
    weft_attr at[3] = {
        {.name = "kernel_shape", .kind = WEFT_ATTR_INTS, .n = 2, .ints = k2},
        {.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = p4},
        {.name = "count_include_pad", .kind = WEFT_ATTR_INT, .i = 1},
    };
    /* x * x as [N, C, rest] (Reshape [0, 0, -1]: no dims needed now), unsqueezed to
     * [N, 1, C, rest]; the window's result back to x's shape through Shape(x) */
    weft_value sq, flat, v, avg, xshape, mean, av, bv, betav, scaled, based, den, s3, ax;
    char name[300], base[300];
    snprintf(base, sizeof base, "%s/channels", n->nname);
    weft_status rc = weft_onnx_add_op1(g, "Mul", n->nname, "/square", 2, (weft_value[]){ins[0], ins[0]}, 0, NULL, &sq);
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, base, "shape", 3, (int64_t[]){0, 0, -1}, &s3);
    if (rc == WEFT_OK) rc = weft_onnx_add_i64(g, base, "axes", 1, (int64_t[]){1}, &ax);
    if (rc == WEFT_OK)
        rc = weft_onnx_add_op1(g, "Reshape", n->nname, "/flatten", 2, (weft_value[]){sq, s3}, 0, NULL, &flat);
    if (rc == WEFT_OK)
        rc = weft_onnx_add_op1(g, "Unsqueeze", n->nname, "/channels", 2, (weft_value[]){flat, ax}, 0, NULL, &v);
    if (rc == WEFT_OK) rc = add_2d(n, "AveragePool", "/window", 1, &v, 3, at, &avg);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Shape", n->nname, "/shape", 1, ins, 0, NULL, &xshape);
    if (rc == WEFT_OK)
        rc = weft_onnx_add_op1(g, "Reshape", n->nname, "/unview", 2, (weft_value[]){avg, xshape}, 0, NULL, &mean);
    const struct {
        const char *suffix;
        const float *v;
        weft_value *out;
    } consts[3] = {{".alpha", &alpha, &av}, {".bias", &bias, &bv}, {".beta", &beta, &betav}};
    for (int i = 0; i < 3 && rc == WEFT_OK; i++) {
        snprintf(name, sizeof name, "%s%s", n->nname, consts[i].suffix);
        rc = weft_graph_add_constant(g, name, WEFT_TYPE_FLOAT32, 0, (int64_t[]){1}, consts[i].v, consts[i].out);
    }
    if (rc == WEFT_OK)
        rc = weft_onnx_add_op1(g, "Mul", n->nname, "/alpha", 2, (weft_value[]){mean, av}, 0, NULL, &scaled);
    if (rc == WEFT_OK)
        rc = weft_onnx_add_op1(g, "Add", n->nname, "/bias", 2, (weft_value[]){scaled, bv}, 0, NULL, &based);
    if (rc == WEFT_OK)
        rc = weft_onnx_add_op1(g, "Pow", n->nname, "/beta", 2, (weft_value[]){based, betav}, 0, NULL, &den);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Div", n->nname, "", 2, (weft_value[]){ins[0], den}, 0, NULL, out);
    return rc;
}

weft_status weft_onnx_conv3d(weft_graph *g, const char *op_type, const char *nname, int n_in, const weft_value *ins,
                             int n_attrs, const weft_attr *attrs, int n_out, weft_value *outs, bool *done)
{
    *done = false;
    node n = {.g = g, .op = op_type, .nname = nname, .n_attrs = n_attrs, .attrs = attrs};
    bool conv = strcmp(op_type, "Conv") == 0;
    bool pool = strcmp(op_type, "MaxPool") == 0 || strcmp(op_type, "AveragePool") == 0;
    weft_status rc;
    int64_t xs[8];
    if (strcmp(op_type, "LRN") == 0) {
        rc = lrn(&n, n_in, ins, n_out, outs);
    } else if ((conv || pool) && n_in >= 1 && ins[0] >= 0 && weft_graph_value_shape(g, ins[0], xs) == 5) {
        if (conv && n_out != 1)
            return weft_fail(WEFT_ERR_INVALID_ARG, "Conv node '%s': has %d outputs, expected 1", nname, n_out);
        rc = conv ? conv3d(&n, n_in, ins, outs) : pool3d(&n, n_in, ins, n_out, outs);
    } else {
        return WEFT_OK;
    }
    *done = rc == WEFT_OK;
    return rc;
}
