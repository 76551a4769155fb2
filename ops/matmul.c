/* matmul and dense (matmul + bias + relu). The reduction stage is the one the matmul
 * schedules tile: axes "i", "j", reduction "k". dense keeps the product in its own stage "D"
 * so the bias/relu epilogue "out" can be inlined or computed at a tile of D. */
#include "ops/internal.h"

/* C[i,j] = sum_k A[i,k] * B[k,j] as a compute tensor named name reading A and B: the
 * product ONNX Gemm/MatMul lowering builds (ops/nn_linear.c), so both share one TE. */
static weft_tensor *product(weft_arena *a, const char *name, const weft_tensor *A, const weft_tensor *B,
                            int64_t M, int64_t N, int64_t K)
{
    return weft_ops_matmul_product(a, name, A, B, false, false, 0, M, N, K);
}

weft_te_func *weft_op_matmul(weft_arena *a, int64_t M, int64_t N, int64_t K)
{
    if (!weft_ops_check_sizes(a, "matmul", 3, (const char *const[]){"M", "N", "K"}, (int64_t[]){M, N, K}))
        return NULL;
    weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 2, (int64_t[]){M, K});
    weft_tensor *B = weft_te_placeholder(a, "B", WEFT_F32, 2, (int64_t[]){K, N});
    weft_tensor *C = product(a, "C", A, B, M, N, K);
    return weft_ops_finish(a, "matmul", 2, (const weft_tensor *const[]){A, B}, 1, (const weft_tensor *const[]){C});
}

weft_te_func *weft_op_dense_bias_relu(weft_arena *a, int64_t M, int64_t N, int64_t K)
{
    const char *op = "dense_bias_relu";
    if (!weft_ops_check_sizes(a, op, 3, (const char *const[]){"M", "N", "K"}, (int64_t[]){M, N, K})) return NULL;
    weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 2, (int64_t[]){M, K});
    weft_tensor *W = weft_te_placeholder(a, "W", WEFT_F32, 2, (int64_t[]){K, N});
    weft_tensor *bias = weft_te_placeholder(a, "bias", WEFT_F32, 1, (int64_t[]){N});
    weft_tensor *D = product(a, "D", A, W, M, N, K);
    weft_tensor *out = weft_te_compute(a, "out", 2, (int64_t[]){M, N}, (const char *const[]){"i", "j"});
    if (out) {
        const weft_expr *i = weft_te_axis(out, 0), *j = weft_te_axis(out, 1);
        const weft_expr *biased = weft_add(a, weft_te_at(a, D, i, j), weft_te_at(a, bias, j));
        weft_te_set_body(out, WEFT_REDUCE_NONE, weft_max(a, biased, weft_f32(a, 0.0)));
    }
    return weft_ops_finish(a, op, 3, (const weft_tensor *const[]){A, W, bias}, 1, (const weft_tensor *const[]){out});
}
