/* Helpers shared by the graph-op files (ops/nn_*.c) and the op functions the registry table in
 * ops/graph_ops.c points at; not part of any public API.
 *
 * Conventions: infer functions validate and fill the node's outputs; every error goes through
 * nn_fail, which prefixes "<op_type> node '<name>': ". Compute functions check their tensor
 * inputs with nn_check_in (a missing or mis-shaped tensor is WEFT_ERR_INTERNAL: the kernel
 * builder broke the contract), chain constructors unchecked (the arena failure is sticky) and
 * end with nn_done, which turns an arena failure into WEFT_ERR_NOMEM.
 */
#ifndef WEFT_OPS_NN_INTERNAL_H
#define WEFT_OPS_NN_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>

#include "ops/graph_ops.h"

#define NN_MAX_DIMS WEFT_GRAPH_MAX_DIMS

/* dtype masks for nn_check_dtype. */
enum { NN_F32 = 1 << 0, NN_I64 = 1 << 1, NN_I32 = 1 << 2, NN_BOOL = 1 << 3 };

/* ---- errors and printing ----------------------------------------------------------------- */

/* weft_fail with the prefix "<op_type> node '<name>': ". Returns st. */
weft_status nn_fail(weft_status st, const weft_gnode *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "[2,3,4]" ("[]" for a scalar); use the .s member within one full expression. */
typedef struct nn_shape_text {
    char s[200];
} nn_shape_text;
nn_shape_text nn_shape_str(int ndim, const int64_t *shape);

/* ---- graph access ------------------------------------------------------------------------ */

/* Input i of n, or NULL when omitted (-1) or beyond n_inputs. */
const weft_gvalue *nn_in(const weft_graph *g, const weft_gnode *n, int i);
/* Input i is present. */
bool nn_has_in(const weft_gnode *n, int i);
/* The value of output k (k < n_outputs and outputs[k] >= 0 are checked by nn_check_arity). */
weft_gvalue *nn_out(weft_graph *g, const weft_gnode *n, int k);
const weft_gvalue *nn_out_c(const weft_graph *g, const weft_gnode *n, int k);

/* Inputs count in [min_in, max_in] with the first min_in present; outputs in
 * [min_out, max_out], all present. WEFT_ERR_INVALID_ARG otherwise. */
weft_status nn_check_arity(const weft_gnode *n, int min_in, int max_in, int min_out, int max_out);
/* v's dtype is one of `mask`; WEFT_ERR_INVALID_ARG naming `what` otherwise. */
weft_status nn_check_dtype(const weft_gnode *n, const weft_gvalue *v, const char *what, unsigned mask);
/* v has exactly `ndim` dims (WEFT_ERR_SHAPE, naming what and `expect` text). */
weft_status nn_check_rank(const weft_gnode *n, const weft_gvalue *v, const char *what, int ndim, const char *expect);
/* Sets output k's dtype and shape. Zero-sized dims are rejected (WEFT_ERR_UNSUPPORTED). */
weft_status nn_set_out(weft_graph *g, const weft_gnode *n, int k, weft_dtype t, int ndim, const int64_t *shape);

/* Normalizes axis in [-rank, rank) (or [-rank-1, rank] when `inclusive`) to [0, rank). */
weft_status nn_axis(const weft_gnode *n, const char *what, int64_t axis, int rank, bool inclusive, int *out);

/* numpy broadcast of two shapes; WEFT_ERR_SHAPE naming both shapes. */
weft_status nn_broadcast(const weft_gnode *n, int na, const int64_t *sa, int nb, const int64_t *sb, int *nout,
                         int64_t *sout);

/* Input i is a constant (its data is set). */
bool nn_is_const(const weft_graph *g, const weft_gnode *n, int i);
/* Elements of a constant int64/int32 input of rank 0 or 1, up to `max`. Not constant:
 * WEFT_ERR_UNSUPPORTED "<what> input must be a constant". */
weft_status nn_const_ints(const weft_graph *g, const weft_gnode *n, int i, const char *what, int64_t *out, int max,
                          int *count);
/* Value of a constant input holding a single element (any dtype); false otherwise. */
bool nn_const_scalar(const weft_graph *g, const weft_gnode *n, int i, double *out);
/* Element j of a constant value as int64 / double (any dtype). */
int64_t nn_data_int(const weft_gvalue *v, int64_t j);
double nn_data_float(const weft_gvalue *v, int64_t j);

/* ints attribute `name` into out (count), or *count = -1 when absent; more than max elements:
 * WEFT_ERR_INVALID_ARG. */
weft_status nn_attr_ints(const weft_gnode *n, const char *name, int64_t *out, int max, int *count);
/* ONNX TensorProto data type code to a dtype; false when unsupported. */
bool nn_onnx_dtype(int64_t code, weft_dtype *out);

/* ---- tensor building --------------------------------------------------------------------- */

/* Default axis names for a tensor of ndim dims: i | i j | b i j | n c h w | d0 d1 ... */
const char *const *nn_axis_names(int ndim);
/* A compute tensor with the default axis names. */
weft_tensor *nn_compute(weft_arena *a, const char *name, int ndim, const int64_t *shape);
/* "<name><suffix>" in the arena. */
const char *nn_stage(weft_arena *a, const char *name, const char *suffix);
/* ins[i] is present and has the graph value's dtype and shape (WEFT_ERR_INTERNAL otherwise). */
weft_status nn_check_in(const weft_graph *g, const weft_gnode *n, const weft_tensor *const *ins, int i);
/* WEFT_ERR_NOMEM when the arena failed, else WEFT_OK. */
weft_status nn_done(weft_arena *a, const weft_gnode *n);

/* A constant of dtype t (int or float). */
const weft_expr *nn_const(weft_arena *a, weft_dtype t, double v);
/* min(max(e, lo), hi) on int64 indices. */
const weft_expr *nn_clamp(weft_arena *a, const weft_expr *e, int64_t lo, int64_t hi);
/* Reads `in` broadcast against output axes idx[0..out_ndim) (numpy: right-aligned; dims of
 * extent 1 read index 0). */
const weft_expr *nn_bcast_load(weft_arena *a, const weft_tensor *in, int out_ndim, const weft_expr *const *idx);
/* The axis variables of t in idx[0..t->ndim). */
void nn_axes(const weft_tensor *t, const weft_expr **idx);
/* out[idx] = in[...] with the same elements in row-major order but another shape (Reshape,
 * Flatten, Squeeze, Unsqueeze, Identity). Named name, default axis names. */
weft_tensor *nn_reshape_copy(weft_arena *a, const char *name, const weft_tensor *in, int ndim, const int64_t *shape);

/* ---- op functions (one per file group) --------------------------------------------------- */

#define NN_INFER(fn) weft_status fn(weft_graph *g, const weft_gnode *n)
#define NN_COMPUTE(fn)                                                                                             \
    weft_status fn(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,                        \
                   const weft_tensor *const *ins, weft_tensor **outs)
#define NN_EVAL(fn) weft_status fn(const weft_graph *g, const weft_gnode *n, int k, void **data)

/* nn_elementwise.c */
NN_INFER(nn_unary_infer);
NN_COMPUTE(nn_unary_compute);
NN_INFER(nn_binary_infer);
NN_COMPUTE(nn_binary_compute);
NN_INFER(nn_where_infer);
NN_COMPUTE(nn_where_compute);
NN_INFER(nn_cast_infer);
NN_COMPUTE(nn_cast_compute);
NN_INFER(nn_expand_infer);
NN_COMPUTE(nn_expand_compute);

/* nn_linear.c */
NN_INFER(nn_gemm_infer);
NN_COMPUTE(nn_gemm_compute);
NN_INFER(nn_matmul_infer);
NN_COMPUTE(nn_matmul_compute);

/* nn_conv.c */
NN_INFER(nn_conv_infer);
NN_COMPUTE(nn_conv_compute);
NN_INFER(nn_batchnorm_infer);
NN_COMPUTE(nn_batchnorm_compute);
NN_INFER(nn_pool_infer);
NN_COMPUTE(nn_pool_compute);
NN_INFER(nn_global_pool_infer);
NN_COMPUTE(nn_global_pool_compute);

/* nn_reduce.c */
NN_INFER(nn_reduce_infer);
NN_COMPUTE(nn_reduce_compute);
NN_INFER(nn_softmax_infer);
NN_COMPUTE(nn_softmax_compute);
NN_INFER(nn_layernorm_infer);
NN_COMPUTE(nn_layernorm_compute);

/* nn_shape.c */
NN_INFER(nn_reshape_infer);
NN_INFER(nn_flatten_infer);
NN_INFER(nn_squeeze_infer);
NN_INFER(nn_unsqueeze_infer);
NN_INFER(nn_identity_infer);
NN_COMPUTE(nn_alias_compute);
NN_INFER(nn_shape_infer);
NN_EVAL(nn_shape_eval);
NN_COMPUTE(nn_shape_compute);
NN_INFER(nn_size_infer);
NN_EVAL(nn_size_eval);
NN_COMPUTE(nn_size_compute);
NN_INFER(nn_const_of_shape_infer);
NN_EVAL(nn_const_of_shape_eval);
NN_COMPUTE(nn_const_of_shape_compute);

/* nn_index.c */
NN_INFER(nn_transpose_infer);
NN_COMPUTE(nn_transpose_compute);
NN_INFER(nn_concat_infer);
NN_COMPUTE(nn_concat_compute);
NN_INFER(nn_split_infer);
NN_COMPUTE(nn_split_compute);
NN_INFER(nn_slice_infer);
NN_COMPUTE(nn_slice_compute);
NN_INFER(nn_gather_infer);
NN_COMPUTE(nn_gather_compute);

#endif
