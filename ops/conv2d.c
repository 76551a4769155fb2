/* 2-D convolution, NCHW input and FCKHKW (OIHW) weights, float32.
 *
 * Zero padding is a separate injective stage "pad" so that the reduction stage "Y" reads a
 * tensor with plain strided indices (the shape the schedules tile and cache). Since SELECT
 * evaluates both arms, the load in pad's true arm clamps its indices into X; the select then
 * discards the clamped value outside the interior. A direction without padding gets no
 * condition and no clamp. Without any padding there is no pad stage at all.
 */
#include <inttypes.h>

#include "ir/error.h"
#include "ops/internal.h"

/* Index of X along a padded dimension: clamp(v - pad, 0, extent - 1). */
static const weft_expr *clamped(weft_arena *a, const weft_expr *v, int64_t pad, int64_t extent)
{
    const weft_expr *shifted = weft_sub(a, v, weft_i64(a, pad));
    return weft_min(a, weft_max(a, shifted, weft_i64(a, 0)), weft_i64(a, extent - 1));
}

/* pad <= v < pad + extent. */
static const weft_expr *inside(weft_arena *a, const weft_expr *v, int64_t pad, int64_t extent)
{
    return weft_and(a, weft_cmp(a, WEFT_EXPR_GE, v, weft_i64(a, pad)),
                    weft_cmp(a, WEFT_EXPR_LT, v, weft_i64(a, pad + extent)));
}

/* pad[n,c,h,w] over [N, C, H + 2*ph, W + 2*pw]: X inside the border, 0 outside. */
static weft_tensor *pad_stage(weft_arena *a, const weft_tensor *X, int64_t ph, int64_t pw)
{
    int64_t N = X->shape[0], C = X->shape[1], H = X->shape[2], W = X->shape[3];
    weft_tensor *P = weft_te_compute(a, "pad", 4, (int64_t[]){N, C, H + 2 * ph, W + 2 * pw},
                                     (const char *const[]){"n", "c", "h", "w"});
    if (!P) return NULL;
    const weft_expr *n = weft_te_axis(P, 0), *c = weft_te_axis(P, 1);
    const weft_expr *h = weft_te_axis(P, 2), *w = weft_te_axis(P, 3);
    const weft_expr *cond = NULL, *xh = h, *xw = w;
    if (ph > 0) {
        cond = inside(a, h, ph, H);
        xh = clamped(a, h, ph, H);
    }
    if (pw > 0) {
        const weft_expr *in_w = inside(a, w, pw, W);
        cond = cond ? weft_and(a, cond, in_w) : in_w;
        xw = clamped(a, w, pw, W);
    }
    weft_te_set_body(P, WEFT_REDUCE_NONE, weft_select(a, cond, weft_te_at(a, X, n, c, xh, xw), weft_f32(a, 0.0)));
    return P;
}

weft_te_func *weft_op_conv2d(weft_arena *a, int64_t N, int64_t C, int64_t H, int64_t W, int64_t F,
                             int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,
                             int64_t pad_h, int64_t pad_w)
{
    const char *op = "conv2d";
    if (!weft_ops_check_sizes(a, op, 9,
                              (const char *const[]){"N", "C", "H", "W", "F", "KH", "KW", "stride_h", "stride_w"},
                              (int64_t[]){N, C, H, W, F, KH, KW, stride_h, stride_w}))
        return NULL;
    if (pad_h < 0 || pad_w < 0 || pad_h > WEFT_OPS_MAX_SIZE || pad_w > WEFT_OPS_MAX_SIZE) {
        weft_fail(WEFT_ERR_INVALID_ARG, "%s: pad_h=%" PRId64 " pad_w=%" PRId64 " must be in [0, %" PRId64 "]", op,
                  pad_h, pad_w, WEFT_OPS_MAX_SIZE);
        return NULL;
    }
    int64_t HP = H + 2 * pad_h, WP = W + 2 * pad_w;
    if (KH > HP || KW > WP) {
        weft_fail(WEFT_ERR_INVALID_ARG,
                  "%s: kernel %" PRId64 "x%" PRId64 " is larger than the padded input %" PRId64 "x%" PRId64
                  " (H=%" PRId64 " W=%" PRId64 " pad %" PRId64 ",%" PRId64 ")",
                  op, KH, KW, HP, WP, H, W, pad_h, pad_w);
        return NULL;
    }
    int64_t OH = (HP - KH) / stride_h + 1, OW = (WP - KW) / stride_w + 1;

    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 4, (int64_t[]){N, C, H, W});
    weft_tensor *Wt = weft_te_placeholder(a, "Wt", WEFT_F32, 4, (int64_t[]){F, C, KH, KW});
    const weft_tensor *in = X;
    if (X && (pad_h > 0 || pad_w > 0)) in = pad_stage(a, X, pad_h, pad_w);

    weft_tensor *Y = weft_te_compute(a, "Y", 4, (int64_t[]){N, F, OH, OW}, (const char *const[]){"n", "f", "y", "x"});
    if (Y) {
        const weft_expr *n = weft_te_axis(Y, 0), *f = weft_te_axis(Y, 1);
        const weft_expr *y = weft_te_axis(Y, 2), *x = weft_te_axis(Y, 3);
        const weft_expr *rc = weft_te_reduce_axis(a, Y, "rc", C);
        const weft_expr *ry = weft_te_reduce_axis(a, Y, "ry", KH);
        const weft_expr *rx = weft_te_reduce_axis(a, Y, "rx", KW);
        const weft_expr *ih = weft_add(a, weft_mul(a, y, weft_i64(a, stride_h)), ry);
        const weft_expr *iw = weft_add(a, weft_mul(a, x, weft_i64(a, stride_w)), rx);
        weft_te_set_body(Y, WEFT_REDUCE_SUM,
                         weft_mul(a, weft_te_at(a, in, n, rc, ih, iw), weft_te_at(a, Wt, f, rc, ry, rx)));
    }
    return weft_ops_finish(a, op, 2, (const weft_tensor *const[]){X, Wt}, 1, (const weft_tensor *const[]){Y});
}
