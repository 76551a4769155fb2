/* The operator registry for graph ops: per ONNX op_type, a shape rule and a tensor-expression
 * compute (ops/nn_*.c). Graph construction calls `infer` when a node is added; fusion reads
 * `pattern`; kernel building calls `compute` with the node's input tensors, which are
 * placeholders or tensors computed by earlier nodes of the same fused kernel.
 *
 * Rules for computes: output tensors are named by the caller-given `name` (unique within the
 * kernel; add suffixes for internal stages: "<name>.max"); axis names are short ("i", "j", "n",
 * "c", "h", "w", reductions "k", "rc", "ry", "rx"). Inputs that are shape-like (Reshape's shape,
 * Slice's starts, Gather indices that are constants) are read from the graph's constant data,
 * never from tensors. Broadcasting follows ONNX (numpy) rules.
 */
#ifndef WEFT_OPS_GRAPH_OPS_H
#define WEFT_OPS_GRAPH_OPS_H
#include "ir/graph.h"
#include "ir/pattern.h"
#include "ir/stmt.h"
#include "ir/tensor.h"

/* One parameter of a per-step kernel (see weft_op_def.step): the kernel's parameter points into
 * the storage of graph value `value`, `offset + s * stride` bytes from its start at step s; when
 * value0 >= 0, step 0 reads value0 at offset0 instead (a recurrence's initial state). */
typedef struct weft_op_step_param {
    int value;
    int64_t offset, stride;
    int value0;
    int64_t offset0;
} weft_op_step_param;

struct weft_op_def {
    const char *op_type;
    /* How fusion treats it: ELEMWISE (incl. broadcast), INJECTIVE (index remap: Transpose,
     * Slice, Gather, Concat, Pad), REDUCTION (Reduce*, Softmax's parts), OUT_REDUCTION_REUSE
     * (Conv, Gemm, MatMul: elementwise consumers fuse into their output). */
    weft_op_pattern pattern;
    /* Output needs no kernel: it is the input's buffer with another shape (Reshape, Flatten,
     * Squeeze, Unsqueeze, Identity, Dropout in inference). */
    bool alias;
    /* Fills dtype, ndim and shape of each output (g->values[n->outputs[k]]) from the inputs
     * and attributes. Errors: WEFT_ERR_SHAPE / WEFT_ERR_UNSUPPORTED / WEFT_ERR_INVALID_ARG via
     * weft_fail, naming op_type, node name and the shapes involved. */
    weft_status (*infer)(weft_graph *g, const weft_gnode *n);
    /* Builds the TE of the outputs. ins[i] is NULL for omitted optional inputs and for inputs
     * the op reads as constants. outs[k] receives the tensor for output k. */
    weft_status (*compute)(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                           const weft_tensor *const *ins, weft_tensor **outs);
    /* (optional; NULL means use compute + the interpreter) Output values computed from input
     * shapes alone (Shape, Size, ConstantOfShape): writes malloc'd data of output k. */
    weft_status (*eval_static)(const weft_graph *g, const weft_gnode *n, int k, void **data);
};

/* A recurrence's step kernel (ops/nn_rnn.c): the node is one ordinary kernel *f run *n_steps
 * times by the executor, each run seeing its step's slices of the node's values through
 * params[0..*n_params) (f's inputs, then outputs). Such a node is never fused. */
typedef weft_status (*weft_op_step_fn)(weft_arena *a, const weft_graph *g, const weft_gnode *n, weft_te_func **f,
                                       weft_op_step_param *params, int *n_params, int64_t *n_steps);
/* The step function of def, or NULL for an ordinary op. */
weft_op_step_fn weft_op_step(const weft_op_def *def);
/* Recurrences before expansion (ops/nn_rnn.c): whether def is GRU, LSTM or RNN, and the
 * step-kernel definition node n takes once model/recur.c has rewired it. */
bool weft_op_is_recurrence(const weft_op_def *def);
const weft_op_def *weft_nn_rnn_step_def(const weft_gnode *n);
/* Direction d's activations of recurrent node n (parsed and checked by its shape rule), as a
 * one-direction node's attributes take them: names comma-joined into `names`, and the alpha /
 * beta values its functions read, in order. Returns 0, or -1 when n's attributes do not parse
 * or names_size is too small. */
int weft_nn_rnn_direction_acts(const weft_gnode *n, int d, char *names, size_t names_size, float alpha[3], int *n_alpha,
                               float beta[3], int *n_beta);

/* A kernel written directly as loops (ir/stmt.h) for a node that is a kernel of its own: its
 * parameters are the graph values params[0..n_params) (inputs, then outputs), as
 * weft_model_group_kernel gives them for the node's tensor expressions. */
typedef weft_status (*weft_op_loop_fn)(weft_arena *a, const weft_graph *g, const weft_gnode *n, const int *params,
                                       int n_params, const char *name, weft_loop_func **out);
/* The loop kernel node n takes on targets without thread binding (CPUs, the interpreter), or
 * NULL when it takes its tensor expressions: ScatterElements and ScatterND with run-time
 * indices over enough rows (ops/nn_scatter.c), TopK of many of a long row (ops/nn_topk.c).
 * Such a node is never fused. */
weft_op_loop_fn weft_op_loop(const weft_graph *g, const weft_gnode *n);

/* The definition for op_type, or NULL (with weft_last_error naming the op). */
const weft_op_def *weft_op_find(const char *op_type);
/* Comma-separated list of supported op types (static storage). */
const char *weft_op_supported(void);

/* ScatterElements / ScatterND node ni with constant indices gets its plan (ops/nn_scatter.c): a
 * new int64 constant as its 4th input. Nothing changes for other nodes, when the indices are not
 * constant, the node has a plan already, the plan would be too large, or (ScatterND) the indices
 * are a box assigned whole. WEFT_ERR_NOMEM only. */
weft_status weft_nn_scatter_plan(weft_graph *g, int ni);

/* Winograd F(m x m, 3x3) weights (m = 2 or 4; ops/nn_conv.c): src [F, C, 3, 3] to dst
 * [m+2, m+2, ceil(F/fb), C, fb] (U = G w G^T; dst zeroed by the caller for filters past F). */
void weft_winograd_weights(const float *src, int64_t F, int64_t C, int64_t fb, int64_t m, float *dst);

#endif
