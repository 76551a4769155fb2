/* ConvTranspose (2-D, NCHW): strides, pads, output_padding, dilations, group, optional bias.
 * W is [C, F/group, KH, KW]; the output is [N, F, OH, OW] with
 *   OH = (H - 1) * stride - pad_top - pad_bottom + (KH - 1) * dilation + 1 + output_padding
 * (output_shape and auto_pad SAME_* are refused, naming the attribute; VALID means no pads).
 *
 * It is computed as a stride-1 convolution of a zero-inserted input with the flipped kernel:
 * "<name>.up" holds X spread out by the stride, shifted by (K - 1) * dilation - pad_begin and
 * zero elsewhere, over the extent the convolution reads (OH + (KH - 1) * dilation), as a
 * select on the index (the load index is clamped: SELECT evaluates both arms). The reduction
 * "<name>.red" (or `name` without a bias) then reads it like Conv reads its ".pad" stage,
 * so the default schedule treats both alike: the upsampled stage is inlined into the tiled
 * reduction. This does stride² times the multiply-adds of a scatter formulation (most are
 * products with zero); it is exact, and simple to schedule.
 */
#include <inttypes.h>
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

typedef struct tgeom {
    int64_t in[2], k[2], s[2], d[2], pb[2], pe[2], op[2], out[2];
    int64_t group, C, F;
} tgeom;

static weft_status two_ints(const weft_gnode *n, const char *name, int64_t dflt, int64_t lo, int64_t *dst)
{
    int64_t v[8];
    int cnt;
    weft_status st = weft_nn_attr_ints(n, name, v, 8, &cnt);
    if (st != WEFT_OK) return st;
    if (cnt < 0) v[0] = v[1] = dflt, cnt = 2;
    if (cnt != 2) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute %s must have 2 elements, got %d", name, cnt);
    if (v[0] < lo || v[1] < lo)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute %s %s must be >= %" PRId64, name,
                            weft_nn_shape_str(2, v).s, lo);
    dst[0] = v[0], dst[1] = v[1];
    return WEFT_OK;
}

/* Geometry from X [N, C, H, W], W [C, F/group, KH, KW] and the attributes. */
static weft_status tgeom_read(const weft_gnode *n, const int64_t *xs, const int64_t *ws, tgeom *t)
{
    weft_status st;
    memset(t, 0, sizeof *t);
    t->group = weft_gnode_attr_int(n, "group", 1);
    t->C = xs[1];
    if (t->group < 1 || t->C % t->group != 0)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute group=%" PRId64 " must divide the input channels C=%" PRId64,
                            t->group, t->C);
    if (ws[0] != t->C)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input W %s must have C=%" PRId64 " rows (input X has %" PRId64 " channels)",
                            weft_nn_shape_str(4, ws).s, t->C, t->C);
    t->F = ws[1] * t->group;
    int64_t v[8];
    int cnt;
    if ((st = weft_nn_attr_ints(n, "kernel_shape", v, 8, &cnt)) != WEFT_OK) return st;
    if (cnt >= 0 && (cnt != 2 || v[0] != ws[2] || v[1] != ws[3]))
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "attribute kernel_shape %s does not match the weights' kernel %s",
                            weft_nn_shape_str(cnt, v).s, weft_nn_shape_str(2, ws + 2).s);
    t->k[0] = ws[2], t->k[1] = ws[3];
    t->in[0] = xs[2], t->in[1] = xs[3];
    if ((st = two_ints(n, "strides", 1, 1, t->s)) != WEFT_OK || (st = two_ints(n, "dilations", 1, 1, t->d)) != WEFT_OK ||
        (st = two_ints(n, "output_padding", 0, 0, t->op)) != WEFT_OK)
        return st;
    if (weft_gnode_attr_ints(n, "output_shape", &(const int64_t *){NULL}) >= 0)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "attribute output_shape is not supported (give pads instead)");
    const char *auto_pad = weft_gnode_attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(auto_pad, "NOTSET") == 0) {
        if ((st = weft_nn_attr_ints(n, "pads", v, 8, &cnt)) != WEFT_OK) return st;
        if (cnt < 0) v[0] = v[1] = v[2] = v[3] = 0, cnt = 4;
        if (cnt != 4) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute pads must have 4 elements, got %d", cnt);
        for (int i = 0; i < 4; i++)
            if (v[i] < 0)
                return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute pads %s must be >= 0", weft_nn_shape_str(4, v).s);
        t->pb[0] = v[0], t->pb[1] = v[1], t->pe[0] = v[2], t->pe[1] = v[3];
    } else if (strcmp(auto_pad, "VALID") != 0) {
        return weft_nn_fail(strncmp(auto_pad, "SAME_", 5) == 0 ? WEFT_ERR_UNSUPPORTED : WEFT_ERR_INVALID_ARG, n,
                            "attribute auto_pad='%s' is not supported (NOTSET with pads, or VALID)", auto_pad);
    }
    for (int i = 0; i < 2; i++) {
        if (t->op[i] >= t->s[i] && t->op[i] >= t->d[i])
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n,
                                "attribute output_padding %s must be smaller than the stride or the dilation",
                                weft_nn_shape_str(2, t->op).s);
        t->out[i] = (t->in[i] - 1) * t->s[i] - t->pb[i] - t->pe[i] + (t->k[i] - 1) * t->d[i] + 1 + t->op[i];
        if (t->out[i] < 1)
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "pads %s leave no output (input %s, kernel %s, strides %s)",
                                weft_nn_shape_str(4, (int64_t[]){t->pb[0], t->pb[1], t->pe[0], t->pe[1]}).s,
                                weft_nn_shape_str(2, t->in).s, weft_nn_shape_str(2, t->k).s,
                                weft_nn_shape_str(2, t->s).s);
    }
    return WEFT_OK;
}

weft_status weft_nn_conv_transpose_infer(weft_graph *g, const weft_gnode *n)
{
    const weft_gvalue *X, *W, *B;
    weft_status st = weft_nn_conv_inputs(g, n, "ConvTranspose", &X, &W, &B);
    if (st != WEFT_OK) return st;
    if ((st = weft_nn_check_rank(n, W, "input W", 4, "C, F/group, KH, KW")) != WEFT_OK) return st;
    tgeom t;
    if ((st = tgeom_read(n, X->shape, W->shape, &t)) != WEFT_OK) return st;
    if (B && (B->ndim != 1 || B->shape[0] != t.F))
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input B has shape %s, expected [%" PRId64 "]",
                            weft_nn_shape_str(B->ndim, B->shape).s, t.F);
    return weft_nn_set_out(g, n, 0, WEFT_F32, 4, (int64_t[]){X->shape[0], t.F, t.out[0], t.out[1]});
}

/* up[n, c, zy, zx] = X[n, c, (zy - off_y) / s_y, (zx - off_x) / s_x] where that divides and
 * lands inside X, else 0; off = (K - 1) * d - pad_begin. */
static const weft_tensor *upsampled(weft_arena *a, const char *name, const weft_tensor *X, const tgeom *t)
{
    int64_t shape[4] = {X->shape[0], X->shape[1], t->out[0] + (t->k[0] - 1) * t->d[0],
                        t->out[1] + (t->k[1] - 1) * t->d[1]};
    int64_t off[2] = {(t->k[0] - 1) * t->d[0] - t->pb[0], (t->k[1] - 1) * t->d[1] - t->pb[1]};
    bool trivial = t->s[0] == 1 && t->s[1] == 1 && off[0] == 0 && off[1] == 0 && shape[2] == X->shape[2] &&
                   shape[3] == X->shape[3];
    if (trivial) return X;
    weft_tensor *U = weft_nn_compute(a, weft_nn_stage(a, name, ".up"), 4, shape);
    if (!U) return NULL;
    const weft_expr *idx[4], *x[4], *cond = NULL;
    weft_nn_axes(U, idx);
    x[0] = idx[0], x[1] = idx[1];
    for (int i = 0; i < 2; i++) {
        const weft_expr *v = off[i] == 0 ? idx[2 + i] : weft_sub(a, idx[2 + i], weft_i64(a, off[i]));
        int64_t s = t->s[i], ext = X->shape[2 + i];
        const weft_expr *c = weft_and(a, weft_cmp(a, WEFT_EXPR_GE, v, weft_i64(a, 0)),
                                      weft_cmp(a, WEFT_EXPR_LT, v, weft_i64(a, (ext - 1) * s + 1)));
        if (s > 1)
            c = weft_and(a, c, weft_cmp(a, WEFT_EXPR_EQ, weft_floormod(a, v, weft_i64(a, s)), weft_i64(a, 0)));
        cond = cond ? weft_and(a, cond, c) : c;
        x[2 + i] = weft_nn_clamp(a, s > 1 ? weft_floordiv(a, v, weft_i64(a, s)) : v, 0, ext - 1);
    }
    weft_te_set_body(U, WEFT_REDUCE_NONE, weft_select(a, cond, weft_tload(a, X, 4, x), weft_f32(a, 0.0)));
    return U;
}

weft_status weft_nn_conv_transpose_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                           const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    if ((st = weft_nn_check_in(g, n, ins, 0)) != WEFT_OK || (st = weft_nn_check_in(g, n, ins, 1)) != WEFT_OK) return st;
    bool has_b = weft_nn_has_in(n, 2);
    if (has_b && (st = weft_nn_check_in(g, n, ins, 2)) != WEFT_OK) return st;
    const weft_tensor *X = ins[0], *Wt = ins[1];
    tgeom t;
    if ((st = tgeom_read(n, X->shape, Wt->shape, &t)) != WEFT_OK) return st;
    int64_t cpg = t.C / t.group, fpg = t.F / t.group; /* input and output channels per group */
    const weft_tensor *U = upsampled(a, name, X, &t);
    int64_t shape[4] = {X->shape[0], t.F, t.out[0], t.out[1]};
    const char *const axes[4] = {"n", "f", "y", "x"};
    weft_tensor *R = weft_te_compute(a, has_b ? weft_nn_stage(a, name, ".red") : name, 4, shape, axes);
    if (R && U) {
        const weft_expr *nv = weft_te_axis(R, 0), *f = weft_te_axis(R, 1);
        const weft_expr *y = weft_te_axis(R, 2), *x = weft_te_axis(R, 3);
        const weft_expr *rc = cpg > 1 ? weft_te_reduce_axis(a, R, "rc", cpg) : weft_i64(a, 0);
        const weft_expr *ry = weft_te_reduce_axis(a, R, "ry", t.k[0]);
        const weft_expr *rx = weft_te_reduce_axis(a, R, "rx", t.k[1]);
        /* input channel (group g = f / fpg): g * cpg + rc; weight column: f mod fpg */
        const weft_expr *cin = rc, *fw = f;
        if (t.group > 1) {
            const weft_expr *grp = fpg == 1 ? f : weft_floordiv(a, f, weft_i64(a, fpg));
            cin = cpg == 1 ? grp : weft_add(a, weft_mul(a, grp, weft_i64(a, cpg)), rc);
            fw = fpg == 1 ? weft_i64(a, 0) : weft_floormod(a, f, weft_i64(a, fpg));
        }
        const weft_expr *uy = weft_add(a, y, t.d[0] == 1 ? ry : weft_mul(a, ry, weft_i64(a, t.d[0])));
        const weft_expr *ux = weft_add(a, x, t.d[1] == 1 ? rx : weft_mul(a, rx, weft_i64(a, t.d[1])));
        /* flipped kernel: W[c, f, KH - 1 - ry, KW - 1 - rx] */
        const weft_expr *ky = weft_sub(a, weft_i64(a, t.k[0] - 1), ry), *kx = weft_sub(a, weft_i64(a, t.k[1] - 1), rx);
        weft_te_set_body(R, WEFT_REDUCE_SUM,
                         weft_mul(a, weft_te_at(a, U, nv, cin, uy, ux), weft_te_at(a, Wt, cin, fw, ky, kx)));
    }
    weft_tensor *Y = R;
    if (has_b) {
        Y = weft_te_compute(a, name, 4, shape, axes);
        if (Y) {
            const weft_expr *idx[4];
            weft_nn_axes(Y, idx);
            weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_add(a, weft_tload(a, R, 4, idx), weft_te_at(a, ins[2], idx[1])));
        }
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}
