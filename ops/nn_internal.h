/* Helpers shared by the graph-op files (ops/weft_nn_*.c) and the op functions the registry table in
 * ops/graph_ops.c points at; not part of any public API.
 *
 * Conventions: infer functions validate and fill the node's outputs; every error goes through
 * weft_nn_fail, which prefixes "<op_type> node '<name>': ". Compute functions check their tensor
 * inputs with weft_nn_check_in (a missing or mis-shaped tensor is WEFT_ERR_INTERNAL: the kernel
 * builder broke the contract), chain constructors unchecked (the arena failure is sticky) and
 * end with weft_nn_done, which turns an arena failure into WEFT_ERR_NOMEM.
 */
#ifndef WEFT_OPS_NN_INTERNAL_H
#define WEFT_OPS_NN_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>

#include "ops/graph_ops.h"

#define WEFT_NN_MAX_DIMS WEFT_GRAPH_MAX_DIMS

/* dtype masks for weft_nn_check_dtype. */
enum { WEFT_NN_F32 = 1 << 0, WEFT_NN_I64 = 1 << 1, WEFT_NN_I32 = 1 << 2, WEFT_NN_BOOL = 1 << 3 };

/* ---- errors and printing ----------------------------------------------------------------- */

/* weft_fail with the prefix "<op_type> node '<name>': ". Returns st. */
weft_status weft_nn_fail(weft_status st, const weft_gnode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "[2,3,4]" ("[]" for a scalar); use the .s member within one full expression. */
typedef struct weft_nn_shape_text {
    char s[200];
} weft_nn_shape_text;
weft_nn_shape_text weft_nn_shape_str(int ndim, const int64_t *shape);

/* ---- graph access ------------------------------------------------------------------------ */

/* Input i of n, or NULL when omitted (-1) or beyond n_inputs. */
const weft_gvalue *weft_nn_in(const weft_graph *g, const weft_gnode *n, int i);
/* Input i is present. */
bool weft_nn_has_in(const weft_gnode *n, int i);
/* The value of output k (k < n_outputs and outputs[k] >= 0 are checked by weft_nn_check_arity). */
weft_gvalue *weft_nn_out(weft_graph *g, const weft_gnode *n, int k);
const weft_gvalue *weft_nn_out_c(const weft_graph *g, const weft_gnode *n, int k);

/* Inputs count in [min_in, max_in] with the first min_in present; outputs in
 * [min_out, max_out], all present. WEFT_ERR_INVALID_ARG otherwise. */
weft_status weft_nn_check_arity(const weft_gnode *n, int min_in, int max_in, int min_out, int max_out);
/* v's dtype is one of `mask`; WEFT_ERR_INVALID_ARG naming `what` otherwise. */
weft_status weft_nn_check_dtype(const weft_gnode *n, const weft_gvalue *v, const char *what, unsigned mask);
/* v has exactly `ndim` dims (WEFT_ERR_SHAPE, naming what and `expect` text). */
weft_status weft_nn_check_rank(const weft_gnode *n, const weft_gvalue *v, const char *what, int ndim,
                               const char *expect);
/* Sets output k's dtype and shape. Zero-sized dims are rejected (WEFT_ERR_UNSUPPORTED). */
weft_status weft_nn_set_out(weft_graph *g, const weft_gnode *n, int k, weft_dtype t, int ndim, const int64_t *shape);

/* Normalizes axis in [-rank, rank) (or [-rank-1, rank] when `inclusive`) to [0, rank). */
weft_status weft_nn_axis(const weft_gnode *n, const char *what, int64_t axis, int rank, bool inclusive, int *out);

/* numpy broadcast of two shapes; WEFT_ERR_SHAPE naming both shapes. */
weft_status weft_nn_broadcast(const weft_gnode *n, int na, const int64_t *sa, int nb, const int64_t *sb, int *nout,
                              int64_t *sout);

/* Input i is a constant (its data is set). */
bool weft_nn_is_const(const weft_graph *g, const weft_gnode *n, int i);
/* Elements of a constant int64/int32 input of rank 0 or 1, up to `max`. Not constant:
 * WEFT_ERR_UNSUPPORTED "<what> input must be a constant". */
weft_status weft_nn_const_ints(const weft_graph *g, const weft_gnode *n, int i, const char *what, int64_t *out, int max,
                               int *count);
/* Value of a constant input holding a single element (any dtype); false otherwise. */
bool weft_nn_const_scalar(const weft_graph *g, const weft_gnode *n, int i, double *out);
/* Element j of a constant value as double (any dtype); as int64: weft_gvalue_int (ir/graph.h). */
double weft_nn_data_float(const weft_gvalue *v, int64_t j);

/* ints attribute `name` into out (count), or *count = -1 when absent; more than max elements:
 * WEFT_ERR_INVALID_ARG. */
weft_status weft_nn_attr_ints(const weft_gnode *n, const char *name, int64_t *out, int max, int *count);
/* A 0/1 attribute (default dflt) as a bool; INVALID_ARG naming it otherwise. */
weft_status weft_nn_attr_flag(const weft_gnode *n, const char *name, int64_t dflt, bool *out);
/* ONNX TensorProto data type code to a dtype; false when unsupported. */
bool weft_nn_onnx_dtype(int64_t code, weft_dtype *out);

/* ---- tensor building --------------------------------------------------------------------- */

/* Default axis names for a tensor of ndim dims: i | i j | b i j | n c h w | d0 d1 ... */
const char *const *weft_nn_axis_names(int ndim);
/* A compute tensor with the default axis names. */
weft_tensor *weft_nn_compute(weft_arena *a, const char *name, int ndim, const int64_t *shape);
/* A reduction stage over the dims of X with reduced[d] false (named like X's default axes
 * there), with one reduction axis per run of adjacent reduced dims: a run's axis is its dims'
 * product, named `axis` when there is one run ("k0", "k1", ... otherwise), and its parts are
 * read by floordiv/floormod. xi receives the index list that reads X (ops/nn_reduce.c). */
weft_tensor *weft_nn_reduce_stage(weft_arena *a, const char *name, const weft_tensor *X, const bool *reduced,
                                  const char *axis, const weft_expr **xi);
/* "<name><suffix>" in the arena. */
const char *weft_nn_stage(weft_arena *a, const char *name, const char *suffix);
/* ins[i] is present and has the graph value's dtype and shape (WEFT_ERR_INTERNAL otherwise). */
weft_status weft_nn_check_in(const weft_graph *g, const weft_gnode *n, const weft_tensor *const *ins, int i);
/* WEFT_ERR_NOMEM when the arena failed, else WEFT_OK. */
weft_status weft_nn_done(weft_arena *a, const weft_gnode *n);

/* A constant of dtype t (int or float). */
const weft_expr *weft_nn_const(weft_arena *a, weft_dtype t, double v);
/* A run-time index read as int64, a negative one counted from the end of an axis of dim
 * (Gather, GatherElements, OneHot, the scatters). */
const weft_expr *weft_nn_wrap_index(weft_arena *a, const weft_expr *v, int64_t dim);
/* log(1 + exp(x)) without overflow (Softplus; ops/nn_elementwise.c). */
const weft_expr *weft_nn_softplus(weft_arena *a, const weft_expr *x);
/* min(max(e, lo), hi) on int64 indices. */
const weft_expr *weft_nn_clamp(weft_arena *a, const weft_expr *e, int64_t lo, int64_t hi);
/* A float32 x clamped to [lo, hi] by ordered compares, a NaN giving lo: safe to convert to an
 * index (float MIN / MAX make no promise for a NaN: the LLVM target gives them nnan; x86 takes
 * select(x > lo, x, lo) as one maxps all the same). GridSample's and RoiAlign's coordinates. */
const weft_expr *weft_nn_clamp_float(weft_arena *a, const weft_expr *x, double lo, double hi);
/* Reads `in` broadcast against output axes idx[0..out_ndim) (numpy: right-aligned; dims of
 * extent 1 read index 0). */
const weft_expr *weft_nn_bcast_load(weft_arena *a, const weft_tensor *in, int out_ndim, const weft_expr *const *idx);
/* Row-major flat index of x[0..nd) in a tensor of the given shape (0 for nd = 0). */
const weft_expr *weft_nn_flat_index(weft_arena *a, int nd, const int64_t *shape, const weft_expr *const *x);
/* The axis variables of t in idx[0..t->ndim). */
void weft_nn_axes(const weft_tensor *t, const weft_expr **idx);
/* out[idx] = in[...] with the same elements in row-major order but another shape (Reshape,
 * Flatten, Squeeze, Unsqueeze, Identity). Named name, default axis names. */
weft_tensor *weft_nn_reshape_copy(weft_arena *a, const char *name, const weft_tensor *in, int ndim,
                                  const int64_t *shape);

/* ---- loop kernels (weft_op_loop) ----------------------------------------------------------- */
/* Global buffers p0, p1, ... for a loop kernel's parameters, the graph values params[0..n)
 * (inputs, then outputs); NULL when the arena fails. */
const weft_buffer **weft_nn_loop_buffers(weft_arena *a, const weft_graph *g, const int *params, int n);
/* The buffer of graph value v among them, or NULL (v is not a parameter: an unused output, an
 * input read as a constant). */
const weft_buffer *weft_nn_loop_find(const weft_buffer *const *bufs, const int *params, int n, int v);
/* A loop kernel named `name` over those buffers whose body is `body`; NULL when the arena fails. */
weft_loop_func *weft_nn_loop_func(weft_arena *a, const char *name, const weft_buffer **bufs, int n,
                                  const weft_stmt *body);
/* The loop kernels of ScatterElements / ScatterND (nn_scatter.c) and TopK (nn_topk.c) when node
 * n takes one (see weft_op_loop), else NULL. */
weft_op_loop_fn weft_nn_scatter_loop(const weft_graph *g, const weft_gnode *n);
weft_op_loop_fn weft_nn_topk_loop(const weft_graph *g, const weft_gnode *n);

/* ---- op functions (one per file group) --------------------------------------------------- */

#define WEFT_NN_INFER(fn) weft_status fn(weft_graph *g, const weft_gnode *n)
#define WEFT_NN_COMPUTE(fn)                                                                                            \
    weft_status fn(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,                          \
                   const weft_tensor *const *ins, weft_tensor **outs)
#define WEFT_NN_EVAL(fn) weft_status fn(const weft_graph *g, const weft_gnode *n, int k, void **data)

/* nn_elementwise.c */
WEFT_NN_INFER(weft_nn_unary_infer);
WEFT_NN_COMPUTE(weft_nn_unary_compute);
WEFT_NN_INFER(weft_nn_binary_infer);
WEFT_NN_COMPUTE(weft_nn_binary_compute);
WEFT_NN_INFER(weft_nn_where_infer);
WEFT_NN_COMPUTE(weft_nn_where_compute);
WEFT_NN_INFER(weft_nn_cast_infer);
WEFT_NN_COMPUTE(weft_nn_cast_compute);
WEFT_NN_INFER(weft_nn_expand_infer);
WEFT_NN_COMPUTE(weft_nn_expand_compute);

/* nn_linear.c */
WEFT_NN_INFER(weft_nn_gemm_infer);
WEFT_NN_COMPUTE(weft_nn_gemm_compute);
WEFT_NN_INFER(weft_nn_matmul_infer);
WEFT_NN_COMPUTE(weft_nn_matmul_compute);

/* nn_conv.c */
WEFT_NN_INFER(weft_nn_conv_infer);
WEFT_NN_COMPUTE(weft_nn_conv_compute);
WEFT_NN_INFER(weft_nn_batchnorm_infer);
WEFT_NN_COMPUTE(weft_nn_batchnorm_compute);
WEFT_NN_INFER(weft_nn_pool_infer);
WEFT_NN_COMPUTE(weft_nn_pool_compute);
WEFT_NN_INFER(weft_nn_global_pool_infer);
WEFT_NN_COMPUTE(weft_nn_global_pool_compute);

/* nn_reduce.c */
WEFT_NN_INFER(weft_nn_reduce_infer);
WEFT_NN_COMPUTE(weft_nn_reduce_compute);
WEFT_NN_INFER(weft_nn_arg_infer);
WEFT_NN_COMPUTE(weft_nn_arg_compute);
WEFT_NN_INFER(weft_nn_cumsum_infer);
WEFT_NN_COMPUTE(weft_nn_cumsum_compute);
WEFT_NN_INFER(weft_nn_softmax_infer);
WEFT_NN_COMPUTE(weft_nn_softmax_compute);
WEFT_NN_INFER(weft_nn_layernorm_infer);
WEFT_NN_COMPUTE(weft_nn_layernorm_compute);

/* nn_shape.c */
WEFT_NN_INFER(weft_nn_reshape_infer);
WEFT_NN_INFER(weft_nn_flatten_infer);
WEFT_NN_INFER(weft_nn_squeeze_infer);
WEFT_NN_INFER(weft_nn_unsqueeze_infer);
WEFT_NN_INFER(weft_nn_identity_infer);
WEFT_NN_COMPUTE(weft_nn_alias_compute);
WEFT_NN_INFER(weft_nn_shape_infer);
WEFT_NN_EVAL(weft_nn_shape_eval);
WEFT_NN_COMPUTE(weft_nn_shape_compute);
WEFT_NN_INFER(weft_nn_size_infer);
WEFT_NN_EVAL(weft_nn_size_eval);
WEFT_NN_COMPUTE(weft_nn_size_compute);
WEFT_NN_INFER(weft_nn_const_of_shape_infer);
WEFT_NN_EVAL(weft_nn_const_of_shape_eval);
WEFT_NN_COMPUTE(weft_nn_const_of_shape_compute);

/* nn_index.c */
WEFT_NN_INFER(weft_nn_transpose_infer);
WEFT_NN_COMPUTE(weft_nn_transpose_compute);
WEFT_NN_INFER(weft_nn_concat_infer);
WEFT_NN_COMPUTE(weft_nn_concat_compute);
WEFT_NN_INFER(weft_nn_split_infer);
WEFT_NN_COMPUTE(weft_nn_split_compute);
WEFT_NN_INFER(weft_nn_slice_infer);
WEFT_NN_COMPUTE(weft_nn_slice_compute);
WEFT_NN_INFER(weft_nn_gather_infer);
WEFT_NN_COMPUTE(weft_nn_gather_compute);
WEFT_NN_INFER(weft_nn_tile_infer);
WEFT_NN_COMPUTE(weft_nn_tile_compute);
WEFT_NN_INFER(weft_nn_trilu_infer);
WEFT_NN_COMPUTE(weft_nn_trilu_compute);
WEFT_NN_INFER(weft_nn_onehot_infer);
WEFT_NN_COMPUTE(weft_nn_onehot_compute);
WEFT_NN_INFER(weft_nn_gather_elements_infer);
WEFT_NN_COMPUTE(weft_nn_gather_elements_compute);

/* nn_activation.c */
WEFT_NN_INFER(weft_nn_hard_act_infer);
WEFT_NN_COMPUTE(weft_nn_hard_act_compute);
WEFT_NN_INFER(weft_nn_prelu_infer);
WEFT_NN_COMPUTE(weft_nn_prelu_compute);

/* nn_resize.c (Resize, Upsample), nn_pad.c, nn_conv_transpose.c */
WEFT_NN_INFER(weft_nn_resize_infer);
WEFT_NN_COMPUTE(weft_nn_resize_compute);
/* nn_grid_sample.c */
WEFT_NN_INFER(weft_nn_grid_sample_infer);
WEFT_NN_COMPUTE(weft_nn_grid_sample_compute);
/* nn_roi_align.c */
WEFT_NN_INFER(weft_nn_roi_align_infer);
WEFT_NN_COMPUTE(weft_nn_roi_align_compute);
WEFT_NN_INFER(weft_nn_pad_infer);
WEFT_NN_COMPUTE(weft_nn_pad_compute);
WEFT_NN_INFER(weft_nn_conv_transpose_infer);
WEFT_NN_COMPUTE(weft_nn_conv_transpose_compute);

/* nn_range.c, nn_scatter.c */
WEFT_NN_INFER(weft_nn_range_infer);
WEFT_NN_EVAL(weft_nn_range_eval);
WEFT_NN_COMPUTE(weft_nn_range_compute);
WEFT_NN_INFER(weft_nn_scatter_nd_infer);
WEFT_NN_COMPUTE(weft_nn_scatter_nd_compute);
WEFT_NN_INFER(weft_nn_scatter_elements_infer);
WEFT_NN_COMPUTE(weft_nn_scatter_elements_compute);
/* nn_topk.c */
WEFT_NN_INFER(weft_nn_topk_infer);
WEFT_NN_COMPUTE(weft_nn_topk_compute);
/* nn_conv.c: the input checks Conv and ConvTranspose share (arity, dtypes, 4-D X) */
weft_status weft_nn_conv_inputs(weft_graph *g, const weft_gnode *n, const char *what, const weft_gvalue **X,
                                const weft_gvalue **W, const weft_gvalue **B);

/* nn_rnn.c: ONNX GRU, LSTM, RNN (expanded by model/recur.c into a projection GEMM and a step
 * kernel; weft_nn_rnn_step_def in graph_ops.h is the definition an expanded node takes) */
WEFT_NN_INFER(weft_nn_rnn_infer);
WEFT_NN_COMPUTE(weft_nn_rnn_compute);

#endif
