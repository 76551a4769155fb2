/* Pure reductions. reduce_sum is the plain row sum, the smallest kernel of the REDUCTION
 * pattern (no reuse across output axes), used to exercise reduction schedules. */
#include "ops/internal.h"

weft_te_func *weft_op_reduce_sum(weft_arena *a, int64_t M, int64_t N)
{
    const char *op = "reduce_sum";
    if (!weft_ops_check_sizes(a, op, 2, (const char *const[]){"M", "N"}, (int64_t[]){M, N})) return NULL;
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 2, (int64_t[]){M, N});
    weft_tensor *R = weft_te_compute(a, "R", 1, (int64_t[]){M}, (const char *const[]){"i"});
    if (R) {
        const weft_expr *i = weft_te_axis(R, 0), *k = weft_te_reduce_axis(a, R, "k", N);
        weft_te_set_body(R, WEFT_REDUCE_SUM, weft_te_at(a, X, i, k));
    }
    return weft_ops_finish(a, op, 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){R});
}
