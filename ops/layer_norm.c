/* Layer normalization over the last axis (two-pass: mean first, then the centred sum of
 * squares, which is more accurate in float32 than E[x^2] - E[x]^2). Stages:
 *   sum[i] = sum_k X[i,k]                  mean[i] = sum[i] / N
 *   sqsum[i] = sum_k (X[i,k] - mean[i])^2  rstd[i] = rsqrt(sqsum[i] / N + eps)   (var = sqsum / N)
 *   Y[i,j] = (X[i,j] - mean[i]) * rstd[i] * gamma[j] + beta[j]
 */
#include <math.h>

#include "ir/error.h"
#include "ops/internal.h"

weft_te_func *weft_op_layer_norm(weft_arena *a, int64_t M, int64_t N, float eps)
{
    const char *op = "layer_norm";
    if (!weft_ops_check_sizes(a, op, 2, (const char *const[]){"M", "N"}, (int64_t[]){M, N})) return NULL;
    if (!isfinite(eps) || eps < 0) {
        weft_fail(WEFT_ERR_INVALID_ARG, "%s: eps=%g must be finite and >= 0", op, (double)eps);
        return NULL;
    }
    const char *const ij[] = {"i", "j"}, *const i_only[] = {"i"};
    const weft_expr *n_f = weft_f32(a, (double)N);
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 2, (int64_t[]){M, N});
    weft_tensor *gamma = weft_te_placeholder(a, "gamma", WEFT_F32, 1, (int64_t[]){N});
    weft_tensor *beta = weft_te_placeholder(a, "beta", WEFT_F32, 1, (int64_t[]){N});

    weft_tensor *sum = weft_te_compute(a, "sum", 1, (int64_t[]){M}, i_only);
    if (sum) {
        const weft_expr *i = weft_te_axis(sum, 0), *k = weft_te_reduce_axis(a, sum, "k", N);
        weft_te_set_body(sum, WEFT_REDUCE_SUM, weft_te_at(a, X, i, k));
    }
    weft_tensor *mean = weft_te_compute(a, "mean", 1, (int64_t[]){M}, i_only);
    if (mean) {
        const weft_expr *i = weft_te_axis(mean, 0);
        weft_te_set_body(mean, WEFT_REDUCE_NONE, weft_div(a, weft_te_at(a, sum, i), n_f));
    }
    weft_tensor *sqsum = weft_te_compute(a, "sqsum", 1, (int64_t[]){M}, i_only);
    if (sqsum) {
        const weft_expr *i = weft_te_axis(sqsum, 0), *k = weft_te_reduce_axis(a, sqsum, "k", N);
        const weft_expr *d = weft_sub(a, weft_te_at(a, X, i, k), weft_te_at(a, mean, i));
        weft_te_set_body(sqsum, WEFT_REDUCE_SUM, weft_mul(a, d, d));
    }
    weft_tensor *rstd = weft_te_compute(a, "rstd", 1, (int64_t[]){M}, i_only);
    if (rstd) {
        const weft_expr *i = weft_te_axis(rstd, 0);
        const weft_expr *var = weft_div(a, weft_te_at(a, sqsum, i), n_f);
        weft_te_set_body(rstd, WEFT_REDUCE_NONE, weft_call1(a, WEFT_INTRIN_RSQRT, weft_add(a, var, weft_f32(a, eps))));
    }
    weft_tensor *Y = weft_te_compute(a, "Y", 2, (int64_t[]){M, N}, ij);
    if (Y) {
        const weft_expr *i = weft_te_axis(Y, 0), *j = weft_te_axis(Y, 1);
        const weft_expr *centred = weft_sub(a, weft_te_at(a, X, i, j), weft_te_at(a, mean, i));
        const weft_expr *scaled = weft_mul(a, weft_mul(a, centred, weft_te_at(a, rstd, i)), weft_te_at(a, gamma, j));
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_add(a, scaled, weft_te_at(a, beta, j)));
    }
    return weft_ops_finish(a, op, 3, (const weft_tensor *const[]){X, gamma, beta}, 1,
                           (const weft_tensor *const[]){Y});
}
