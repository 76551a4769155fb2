/* Softmax over the last axis, in the numerically stable form: subtract the row max before
 * exp. Four stages (mx, e, s, Y) so a schedule can fuse the elementwise ones (e, Y) into
 * their consumers or producers; the reductions mx and s both run over "k". */
#include "ops/internal.h"

weft_te_func *weft_op_softmax(weft_arena *a, int64_t M, int64_t N)
{
    const char *op = "softmax";
    if (!weft_ops_check_sizes(a, op, 2, (const char *const[]){"M", "N"}, (int64_t[]){M, N})) return NULL;
    const char *const ij[] = {"i", "j"}, *const i_only[] = {"i"};
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 2, (int64_t[]){M, N});

    weft_tensor *mx = weft_te_compute(a, "mx", 1, (int64_t[]){M}, i_only);
    if (mx) {
        const weft_expr *i = weft_te_axis(mx, 0), *k = weft_te_reduce_axis(a, mx, "k", N);
        weft_te_set_body(mx, WEFT_REDUCE_MAX, weft_te_at(a, X, i, k));
    }
    weft_tensor *e = weft_te_compute(a, "e", 2, (int64_t[]){M, N}, ij);
    if (e) {
        const weft_expr *i = weft_te_axis(e, 0), *j = weft_te_axis(e, 1);
        weft_te_set_body(e, WEFT_REDUCE_NONE,
                         weft_call1(a, WEFT_INTRIN_EXP, weft_sub(a, weft_te_at(a, X, i, j), weft_te_at(a, mx, i))));
    }
    weft_tensor *s = weft_te_compute(a, "s", 1, (int64_t[]){M}, i_only);
    if (s) {
        const weft_expr *i = weft_te_axis(s, 0), *k = weft_te_reduce_axis(a, s, "k", N);
        weft_te_set_body(s, WEFT_REDUCE_SUM, weft_te_at(a, e, i, k));
    }
    weft_tensor *Y = weft_te_compute(a, "Y", 2, (int64_t[]){M, N}, ij);
    if (Y) {
        const weft_expr *i = weft_te_axis(Y, 0), *j = weft_te_axis(Y, 1);
        /* times the row's reciprocal: one division per row, not per element */
        const weft_expr *inv = weft_div(a, weft_f32(a, 1.0), weft_te_at(a, s, i));
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_mul(a, weft_te_at(a, e, i, j), inv));
    }
    return weft_ops_finish(a, op, 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){Y});
}
