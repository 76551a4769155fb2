/* Helpers shared by the op files (ops/build.c); not part of the ops API. Every op follows the
 * same shape: weft_ops_check_sizes on its arguments, build the tensors (arena failure is sticky,
 * so constructors are chained unchecked), then weft_ops_finish. */
#ifndef WEFT_OPS_INTERNAL_H
#define WEFT_OPS_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>

#include "ops/ops.h"

/* Largest accepted size value; keeps index arithmetic (x*stride + rx, padded extents) far from
 * int64 overflow. */
#define WEFT_OPS_MAX_SIZE ((int64_t)1 << 31)

/* Checks the arena is non-NULL and names[i] = values[i] lies in [1, WEFT_OPS_MAX_SIZE] for each
 * i; on failure sets "<op>: <name>=<value> ..." and returns false. */
bool weft_ops_check_sizes(weft_arena *a, const char *op, int n, const char *const *names, const int64_t *values);

/* Turns the built tensors into a kernel named op. NULL with the error set when the arena has
 * failed (WEFT_ERR_NOMEM), when a tensor's iteration space overflows int64 or when
 * weft_te_func_create fails. */
weft_te_func *weft_ops_finish(weft_arena *a, const char *op, int n_inputs, const weft_tensor *const *inputs,
                              int n_outputs, const weft_tensor *const *outputs);

/* The one definition of a 2-D matrix product (ops/nn_linear.c): name[i, j] = sum_k A'[i, k] *
 * B'[k, j], where A' is A or (ta) A read as A[k, i], and B' is B, (tb) B read as B[j, k], or
 * (nb > 0) B laid out [N/nb, K, nb]. ONNX Gemm and the `matmul`/`dense_bias_relu` ops build
 * it, so they share one TE (and one tuning record key) for the same shapes. */
weft_tensor *weft_ops_matmul_product(weft_arena *a, const char *name, const weft_tensor *A, const weft_tensor *B,
                                     bool ta, bool tb, int64_t nb, int64_t M, int64_t N, int64_t K);
/* Geometry of a 2-D sliding window (Conv, pooling): input extent, kernel, stride and dilation
 * per spatial dim, padding at the begin (top, left) and the end (bottom, right), output extent. */
typedef struct weft_window2d {
    int64_t in[2], k[2], s[2], d[2];
    int64_t pb[2], pe[2];
    int64_t out[2];
    /* pooling with ceil_mode=1: the padding added past pe[i] (already in pe[i]) so the last
     * window fits; it is never counted in an average's divisor */
    int64_t ceil_extra[2];
} weft_window2d;

/* A 2-D convolution as ops/nn_conv.c builds it: the one definition behind the graph's Conv and
 * weft_op_conv2d. X is [N, C, H, W]; Wt is [F, C/group, KH, KW], or with fb > 0 the blocked
 * [ceil(F/fb), C/group, KH, KW, fb] (filters past F zero); B is [F] or NULL. Stage names: the
 * zero padding is pad_name (absent when no tap reads padding), the reduction red_name when an
 * output stage follows (a bias or blocked weights; that stage is out_name), else out_name. */
typedef struct weft_conv2d_spec {
    const char *pad_name, *red_name, *out_name;
    weft_window2d w; /* w.out must be the output extent implied by in, k, s, d, pb and pe */
    int64_t group, fb, F;
    bool flat; /* unblocked pointwise conv (1x1, stride 1, no padding, one group): the reduction
                * runs over [N, F, OH*OW] (pixels fused, one contiguous run per plane) */
    bool columns; /* unblocked conv over output columns (model/passes.c columns_form): the
                   * reduction is its own stage [N, F, OH, OW] and a column stride splits the
                   * padding by phase */
} weft_conv2d_spec;

/* The output tensor [N, F, OH, OW]; NULL when the arena failed (the error is set). */
weft_tensor *weft_conv2d_stages(weft_arena *a, const weft_conv2d_spec *spec, const weft_tensor *X,
                                const weft_tensor *Wt, const weft_tensor *B);

#endif
