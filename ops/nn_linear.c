/* Gemm and MatMul (ONNX semantics).
 *
 * Both reduce in one matmul-shaped stage: D[..., i, j] = sum_k A'[..., i, k] * B'[..., k, j],
 * where a transposed operand is read with swapped indices (B[j, k] under transB) instead of
 * being copied, so the stage classifies as OUT_REDUCTION_REUSE and the default schedules tile
 * it. Gemm's epilogue alpha * D + beta * C (when alpha != 1 or C is given) is a separate
 * elementwise stage named `name` (D is then "<name>.red"), so schedules can fuse it into the
 * tile; without an epilogue the reduction stage itself is `name`.
 */
#include <inttypes.h>
#include <string.h>

#include "ir/error.h"
#include "ops/internal.h"
#include "ops/nn_internal.h"

/* ---- Gemm -------------------------------------------------------------------------------- */

weft_status weft_nn_gemm_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 2, 3, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *A = weft_nn_in(g, n, 0), *B = weft_nn_in(g, n, 1), *C = weft_nn_in(g, n, 2);
    if ((st = weft_nn_check_dtype(n, A, "input A", WEFT_NN_F32)) != WEFT_OK ||
        (st = weft_nn_check_dtype(n, B, "input B", WEFT_NN_F32)) != WEFT_OK ||
        (C && (st = weft_nn_check_dtype(n, C, "input C", WEFT_NN_F32)) != WEFT_OK) ||
        (st = weft_nn_check_rank(n, A, "input A", 2, NULL)) != WEFT_OK ||
        (st = weft_nn_check_rank(n, B, "input B", 2, NULL)) != WEFT_OK)
        return st;
    bool ta = weft_gnode_attr_int(n, "transA", 0) != 0, tb = weft_gnode_attr_int(n, "transB", 0) != 0;
    int64_t M = ta ? A->shape[1] : A->shape[0], K = ta ? A->shape[0] : A->shape[1];
    int64_t KB = tb ? B->shape[1] : B->shape[0], N = tb ? B->shape[0] : B->shape[1];
    if (K != KB)
        return weft_nn_fail(WEFT_ERR_SHAPE, n,
                            "inner dimensions differ: A %s%s has K=%" PRId64 ", B %s%s has K=%" PRId64,
                            weft_nn_shape_str(2, A->shape).s, ta ? " (transA)" : "", K,
                            weft_nn_shape_str(2, B->shape).s, tb ? " (transB)" : "", KB);
    int64_t shape[2] = {M, N};
    if (C) {
        int r;
        int64_t bs[WEFT_NN_MAX_DIMS];
        if (C->ndim > 2 || weft_nn_broadcast(n, C->ndim, C->shape, 2, shape, &r, bs) != WEFT_OK || bs[0] != M ||
            bs[1] != N)
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "input C %s does not broadcast to [M,N] = %s",
                                weft_nn_shape_str(C->ndim, C->shape).s, weft_nn_shape_str(2, shape).s);
    }
    return weft_nn_set_out(g, n, 0, WEFT_F32, 2, shape);
}

/* A constant B may have been laid out [N/nb, K, nb] by the model's layout pass
 * ("weft_weight_layout" = "NKn", block "weft_weight_block"): each register tile's panel of B is
 * then contiguous. Reads B[k, j] from either layout. */
static int64_t weight_block(const weft_gnode *n)
{
    return strcmp(weft_gnode_attr_string(n, "weft_weight_layout", ""), "NKn") ? 0
                                                                              : weft_gnode_attr_int(n, "weft_weight_block", 0);
}

static const weft_expr *read_b(weft_arena *a, const weft_tensor *B, int64_t nb, const weft_expr *k, const weft_expr *j)
{
    if (!nb) return weft_te_at(a, B, k, j);
    const weft_expr *c = weft_i64(a, nb);
    return weft_te_at(a, B, weft_floordiv(a, j, c), k, weft_floormod(a, j, c));
}

weft_tensor *weft_ops_matmul_product(weft_arena *a, const char *name, const weft_tensor *A, const weft_tensor *B,
                                     bool ta, bool tb, int64_t nb, int64_t M, int64_t N, int64_t K)
{
    if (!name) return NULL;
    weft_tensor *D = weft_te_compute(a, name, 2, (int64_t[]){M, N}, (const char *const[]){"i", "j"});
    if (!D) return NULL;
    const weft_expr *i = weft_te_axis(D, 0), *j = weft_te_axis(D, 1);
    const weft_expr *k = weft_te_reduce_axis(a, D, "k", K);
    const weft_expr *x = ta ? weft_te_at(a, A, k, i) : weft_te_at(a, A, i, k);
    const weft_expr *y = tb ? weft_te_at(a, B, j, k) : read_b(a, B, nb, k, j);
    weft_te_set_body(D, WEFT_REDUCE_SUM, weft_mul(a, x, y));
    return D;
}

weft_status weft_nn_gemm_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                 const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    if ((st = weft_nn_check_in(g, n, ins, 0)) != WEFT_OK || (st = weft_nn_check_in(g, n, ins, 1)) != WEFT_OK) return st;
    bool has_c = weft_nn_has_in(n, 2);
    if (has_c && (st = weft_nn_check_in(g, n, ins, 2)) != WEFT_OK) return st;
    const weft_tensor *A = ins[0], *B = ins[1], *C = has_c ? ins[2] : NULL;
    bool ta = weft_gnode_attr_int(n, "transA", 0) != 0, tb = weft_gnode_attr_int(n, "transB", 0) != 0;
    double alpha = weft_gnode_attr_float(n, "alpha", 1.0), beta = weft_gnode_attr_float(n, "beta", 1.0);
    if (C && beta == 0.0) C = NULL;
    bool epilogue = C || alpha != 1.0;
    int64_t M = ta ? A->shape[1] : A->shape[0], K = ta ? A->shape[0] : A->shape[1];
    int64_t nb = weight_block(n);
    /* blocked: the last block may be zero-padded past N, so N is the output's */
    int64_t N = nb ? g->values[n->outputs[0]].shape[1] : tb ? B->shape[0] : B->shape[1];

    weft_tensor *D = weft_ops_matmul_product(a, epilogue ? weft_nn_stage(a, name, ".red") : name, A, B, ta, tb, nb, M, N, K);
    weft_tensor *Y = D;
    if (epilogue) {
        Y = weft_te_compute(a, name, 2, (int64_t[]){M, N}, (const char *const[]){"i", "j"});
        if (Y) {
            const weft_expr *idx[2] = {weft_te_axis(Y, 0), weft_te_axis(Y, 1)};
            const weft_expr *v = weft_tload(a, D, 2, idx);
            if (alpha != 1.0) v = weft_mul(a, v, weft_f32(a, alpha));
            if (C) {
                const weft_expr *c = weft_nn_bcast_load(a, C, 2, idx);
                if (beta != 1.0) c = weft_mul(a, c, weft_f32(a, beta));
                v = weft_add(a, v, c);
            }
            weft_te_set_body(Y, WEFT_REDUCE_NONE, v);
        }
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- MatMul ------------------------------------------------------------------------------ */

/* MatMul's output shape; *has_m / *has_n say whether the M and N dims are present (a 1-D A
 * or B drops them). */
static weft_status matmul_shape(const weft_gnode *n, const weft_gvalue *A, const weft_gvalue *B, int *ndim,
                                int64_t *shape, bool *has_m, bool *has_n)
{
    if (A->ndim < 1 || B->ndim < 1)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "inputs %s and %s must have at least 1 dim",
                            weft_nn_shape_str(A->ndim, A->shape).s, weft_nn_shape_str(B->ndim, B->shape).s);
    *has_m = A->ndim >= 2;
    *has_n = B->ndim >= 2;
    int64_t K = A->shape[A->ndim - 1], KB = B->shape[*has_n ? B->ndim - 2 : 0];
    if (K != KB)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "inner dimensions differ: A %s has K=%" PRId64 ", B %s has K=%" PRId64,
                            weft_nn_shape_str(A->ndim, A->shape).s, K, weft_nn_shape_str(B->ndim, B->shape).s, KB);
    int na = *has_m ? A->ndim - 2 : 0, nb = *has_n ? B->ndim - 2 : 0, r;
    weft_status st = weft_nn_broadcast(n, na, A->shape, nb, B->shape, &r, shape);
    if (st != WEFT_OK) return st;
    if (*has_m) shape[r++] = A->shape[A->ndim - 2];
    if (*has_n) shape[r++] = B->shape[B->ndim - 1];
    *ndim = r;
    return WEFT_OK;
}

weft_status weft_nn_matmul_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 2, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *A = weft_nn_in(g, n, 0), *B = weft_nn_in(g, n, 1);
    if ((st = weft_nn_check_dtype(n, A, "input A", WEFT_NN_F32)) != WEFT_OK ||
        (st = weft_nn_check_dtype(n, B, "input B", WEFT_NN_F32)) != WEFT_OK)
        return st;
    int r = 0;
    int64_t shape[WEFT_NN_MAX_DIMS + 2];
    bool hm, hn;
    if ((st = matmul_shape(n, A, B, &r, shape, &hm, &hn)) != WEFT_OK) return st;
    return weft_nn_set_out(g, n, 0, WEFT_F32, r, shape);
}

/* Index list of a MatMul operand: its batch dims read the output's batch axes (right-aligned,
 * extent-1 dims read 0), then the two matrix indices (`first`, `second`, NULL when absent). */
static const weft_expr *matmul_read(weft_arena *a, const weft_tensor *t, int n_mat, int out_batch,
                                    const weft_expr *const *batch_idx, const weft_expr *first,
                                    const weft_expr *second)
{
    const weft_expr *idx[WEFT_NN_MAX_DIMS];
    int tb = t->ndim - n_mat, p = 0;
    for (int d = 0; d < tb; d++) idx[p++] = t->shape[d] == 1 ? weft_i64(a, 0) : batch_idx[d + out_batch - tb];
    if (first) idx[p++] = first;
    if (second) idx[p++] = second;
    return weft_tload(a, t, p, idx);
}

weft_status weft_nn_matmul_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                   const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    if ((st = weft_nn_check_in(g, n, ins, 0)) != WEFT_OK || (st = weft_nn_check_in(g, n, ins, 1)) != WEFT_OK) return st;
    const weft_tensor *A = ins[0], *B = ins[1];
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    int64_t nb = weight_block(n); /* B blocked [N/nb, K, nb]: a 2-D [K, N] operand */
    bool hm = A->ndim >= 2, hn = nb || B->ndim >= 2;
    int nbatch = out->ndim - (hm ? 1 : 0) - (hn ? 1 : 0);
    static const char *const batch1[] = {"b"};
    static const char *const batchn[] = {"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7"};
    const char *names[WEFT_NN_MAX_DIMS];
    int p = 0;
    for (int d = 0; d < nbatch; d++) names[p++] = nbatch == 1 ? batch1[0] : batchn[d];
    if (hm) names[p++] = "i";
    if (hn) names[p++] = "j";
    weft_tensor *Y = weft_te_compute(a, name, out->ndim, out->shape, names);
    if (Y) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, idx);
        const weft_expr *i = hm ? idx[nbatch] : NULL, *j = hn ? idx[out->ndim - 1] : NULL;
        const weft_expr *k = weft_te_reduce_axis(a, Y, "k", A->shape[A->ndim - 1]);
        const weft_expr *x = matmul_read(a, A, hm ? 2 : 1, nbatch, idx, i ? i : k, i ? k : NULL);
        const weft_expr *y = nb ? read_b(a, B, nb, k, j) : matmul_read(a, B, hn ? 2 : 1, nbatch, idx, k, j);
        weft_te_set_body(Y, WEFT_REDUCE_SUM, weft_mul(a, x, y));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}
