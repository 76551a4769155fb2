/* The operator library: each op builds its tensor expressions in a caller-provided arena and
 * returns a complete kernel (weft_te_func) whose nodes all live in that arena.
 *
 * Every op returns NULL with weft_last_error() set on bad arguments (a size below 1, a kernel
 * window larger than the padded input, stride 0, ...; WEFT_ERR_INVALID_ARG) or when the arena
 * ran out of memory (WEFT_ERR_NOMEM). Messages start with the op name: "conv2d: stride_h=0 ...".
 * All tensors are float32. Tensor and axis names are part of the contract: schedules and step
 * text refer to stages ("C", "pad") and iterators ("i", "k", "rc") by these names.
 *
 *   weft_arena *a = weft_arena_create();
 *   weft_te_func *f = weft_op_matmul(a, 64, 64, 64);   // C[i,j] = sum_k A[i,k] * B[k,j]
 *   if (!f) fprintf(stderr, "%s\n", weft_last_error());
 *   ...
 *   weft_arena_destroy(a);                             // frees the kernel too
 */
#ifndef WEFT_OPS_OPS_H
#define WEFT_OPS_OPS_H
#include <stdint.h>

#include "ir/pattern.h"
#include "ir/tensor.h"

/* matmul: A[M,K], B[K,N] -> C[i,j] = sum_k A[i,k] * B[k,j]. Inputs {A, B}, output {C}. */
weft_te_func *weft_op_matmul(weft_arena *a, int64_t M, int64_t N, int64_t K);

/* dense_bias_relu: A[M,K], W[K,N], bias[N];
 *   D[i,j] = sum_k A[i,k] * W[k,j];  out[i,j] = max(D[i,j] + bias[j], 0).
 * Inputs {A, W, bias}, output {out}. */
weft_te_func *weft_op_dense_bias_relu(weft_arena *a, int64_t M, int64_t N, int64_t K);

/* conv2d, NCHW: X[N,C,H,W], Wt[F,C,KH,KW] -> Y[N,F,OH,OW] with
 * OH = (H + 2*pad_h - KH) / stride_h + 1 (OW likewise).
 *   pad[n,c,h,w] = inside ? X[n, c, clamp(h-pad_h), clamp(w-pad_w)] : 0   (only when padding;
 *                  the load index is clamped because SELECT evaluates both arms)
 *   Y[n,f,y,x]   = sum_{rc,ry,rx} pad[n, rc, y*stride_h + ry, x*stride_w + rx] * Wt[f, rc, ry, rx]
 * With pad_h == pad_w == 0 there is no pad stage and Y reads X. Inputs {X, Wt}, output {Y}. */
weft_te_func *weft_op_conv2d(weft_arena *a, int64_t N, int64_t C, int64_t H, int64_t W, int64_t F,
                             int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,
                             int64_t pad_h, int64_t pad_w);

/* softmax over the last axis of X[M,N]:
 *   mx[i] = max_k X[i,k];  e[i,j] = exp(X[i,j] - mx[i]);  s[i] = sum_k e[i,k];  Y[i,j] = e[i,j] / s[i].
 * Inputs {X}, output {Y}. */
weft_te_func *weft_op_softmax(weft_arena *a, int64_t M, int64_t N);

/* layer_norm over the last axis of X[M,N], with gamma[N], beta[N]:
 *   sum[i]   = sum_k X[i,k]                 mean[i] = sum[i] / N
 *   sqsum[i] = sum_k (X[i,k] - mean[i])^2   rstd[i] = rsqrt(sqsum[i] / N + eps)
 *   Y[i,j]   = (X[i,j] - mean[i]) * rstd[i] * gamma[j] + beta[j]
 * (the variance sqsum/N is folded into rstd). Inputs {X, gamma, beta}, output {Y}.
 * eps must be finite and >= 0. */
weft_te_func *weft_op_layer_norm(weft_arena *a, int64_t M, int64_t N, float eps);

/* Row sums, a pure reduction: X[M,N] -> R[i] = sum_k X[i,k]. Inputs {X}, output {R}. */
weft_te_func *weft_op_reduce_sum(weft_arena *a, int64_t M, int64_t N);

typedef enum weft_elementwise_kind {
#define X(name, str, arity) WEFT_ELEMENTWISE_##name,
#include "ops/elementwise_kinds.def"
#undef X
    WEFT_ELEMENTWISE_COUNT
} weft_elementwise_kind;

/* "add", "relu", ... (the kernel's name and weft_op_build's op string). */
extern const char *const weft_elementwise_names[WEFT_ELEMENTWISE_COUNT];
/* 1 for unary kinds, 2 for binary ones. */
int weft_elementwise_arity(weft_elementwise_kind kind);
/* Kind named s; false when s names no elementwise op. */
bool weft_elementwise_parse(const char *s, weft_elementwise_kind *out);

/* Elementwise op over same-shape inputs (1 to WEFT_MAX_DIMS dims, axes "ax0", "ax1", ...):
 *   unary:  Z = f(X)        (relu = max(x, 0); gelu = 0.5*x*(1 + erf(x/sqrt(2))))
 *   binary: Z = X op Y
 * Inputs {X} or {X, Y}, output {Z}. Kernel named after the kind ("add"). */
weft_te_func *weft_op_elementwise(weft_arena *a, weft_elementwise_kind kind, int ndim, const int64_t *shape);

/* Builds op by name for tools (ops/build.c). Shape forms (see weft_op_usage):
 *   matmul, dense_bias_relu: M,N,K     conv2d: N,C,H,W,F,KH,KW,stride,pad (both directions)
 *   softmax, layer_norm (eps 1e-5), reduce_sum: M,N     elementwise ops: any 1 to 8 dims
 * Unknown op or wrong shape count: WEFT_ERR_INVALID_ARG naming the op and the expected form.
 * Bad sizes: the op's own error. On failure *out is NULL. */
weft_status weft_op_build(weft_arena *a, const char *op, int n_shape, const int64_t *shape, weft_te_func **out);
/* Multi-line list of ops and their shape forms; static storage. */
const char *weft_op_usage(void);

/* Compute patterns (weft_tensor_pattern) are in ir/pattern.h. */

#endif
