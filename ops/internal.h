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

#endif
