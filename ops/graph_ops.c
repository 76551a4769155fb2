/* The graph operator registry: one static table from ONNX op_type to its definition (pattern,
 * alias flag, shape rule, compute, static evaluation). The op functions live in ops/weft_nn_*.c. */
#include <stdio.h>
#include <string.h>
#include <threads.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

#define ELEMWISE WEFT_PATTERN_ELEMWISE
#define INJECTIVE WEFT_PATTERN_INJECTIVE
#define REDUCTION WEFT_PATTERN_REDUCTION
#define REUSE WEFT_PATTERN_OUT_REDUCTION_REUSE

#define UNARY(op) {op, ELEMWISE, false, weft_nn_unary_infer, weft_nn_unary_compute, NULL}
#define BINARY(op) {op, ELEMWISE, false, weft_nn_binary_infer, weft_nn_binary_compute, NULL}
#define ALIAS(op, infer) {op, INJECTIVE, true, infer, weft_nn_alias_compute, NULL}

static const weft_op_def op_table[] = {
    /* elementwise (nn_elementwise.c) */
    UNARY("Relu"), UNARY("Sigmoid"), UNARY("Tanh"), UNARY("Erf"), UNARY("Sqrt"), UNARY("Exp"), UNARY("Log"),
    UNARY("Neg"), UNARY("Abs"), UNARY("Reciprocal"), UNARY("LeakyRelu"), UNARY("Gelu"), UNARY("Clip"),
    UNARY("Not"), UNARY("Softplus"), UNARY("Elu"), UNARY("Selu"), UNARY("Celu"), UNARY("Sign"), UNARY("Floor"),
    UNARY("Ceil"), UNARY("Round"), UNARY("Sin"), UNARY("Cos"), UNARY("Tan"), UNARY("Asin"), UNARY("Acos"),
    UNARY("Atan"), UNARY("Sinh"), UNARY("Cosh"), UNARY("Asinh"), UNARY("Acosh"), UNARY("Atanh"), UNARY("IsNaN"),
    UNARY("IsInf"), UNARY("Softsign"), UNARY("Shrink"), UNARY("ThresholdedRelu"), UNARY("Mish"),
    BINARY("Add"), BINARY("Sub"), BINARY("Mul"), BINARY("Div"), BINARY("Pow"), BINARY("Max"), BINARY("Min"),
    BINARY("Equal"), BINARY("Less"), BINARY("Greater"), BINARY("LessOrEqual"), BINARY("GreaterOrEqual"),
    BINARY("And"), BINARY("Or"), BINARY("Mod"), BINARY("Xor"), BINARY("Sum"), BINARY("Mean"),
    {"Where", ELEMWISE, false, weft_nn_where_infer, weft_nn_where_compute, NULL},
    {"Cast", ELEMWISE, false, weft_nn_cast_infer, weft_nn_cast_compute, NULL},
    {"Expand", ELEMWISE, false, weft_nn_expand_infer, weft_nn_expand_compute, NULL},
    /* matmul-shaped reductions (nn_linear.c) */
    {"Gemm", REUSE, false, weft_nn_gemm_infer, weft_nn_gemm_compute, NULL},
    {"MatMul", REUSE, false, weft_nn_matmul_infer, weft_nn_matmul_compute, NULL},
    /* convolution family (nn_conv.c) */
    {"Conv", REUSE, false, weft_nn_conv_infer, weft_nn_conv_compute, NULL},
    {"BatchNormalization", ELEMWISE, false, weft_nn_batchnorm_infer, weft_nn_batchnorm_compute, NULL},
    {"MaxPool", REDUCTION, false, weft_nn_pool_infer, weft_nn_pool_compute, NULL},
    {"AveragePool", REDUCTION, false, weft_nn_pool_infer, weft_nn_pool_compute, NULL},
    {"GlobalAveragePool", REDUCTION, false, weft_nn_global_pool_infer, weft_nn_global_pool_compute, NULL},
    {"GlobalMaxPool", REDUCTION, false, weft_nn_global_pool_infer, weft_nn_global_pool_compute, NULL},
    /* reductions (nn_reduce.c) */
    {"ReduceMean", REDUCTION, false, weft_nn_reduce_infer, weft_nn_reduce_compute, NULL},
    {"ReduceSum", REDUCTION, false, weft_nn_reduce_infer, weft_nn_reduce_compute, NULL},
    {"ReduceMax", REDUCTION, false, weft_nn_reduce_infer, weft_nn_reduce_compute, NULL},
    {"ReduceMin", REDUCTION, false, weft_nn_reduce_infer, weft_nn_reduce_compute, NULL},
    {"ReduceProd", REDUCTION, false, weft_nn_reduce_infer, weft_nn_reduce_compute, NULL},
    {"ReduceL1", REDUCTION, false, weft_nn_reduce_infer, weft_nn_reduce_compute, NULL},
    {"ReduceL2", REDUCTION, false, weft_nn_reduce_infer, weft_nn_reduce_compute, NULL},
    {"ReduceSumSquare", REDUCTION, false, weft_nn_reduce_infer, weft_nn_reduce_compute, NULL},
    {"ReduceLogSumExp", REDUCTION, false, weft_nn_reduce_infer, weft_nn_reduce_compute, NULL},
    {"ArgMax", REDUCTION, false, weft_nn_arg_infer, weft_nn_arg_compute, NULL},
    {"ArgMin", REDUCTION, false, weft_nn_arg_infer, weft_nn_arg_compute, NULL},
    {"CumSum", REDUCTION, false, weft_nn_cumsum_infer, weft_nn_cumsum_compute, NULL},
    {"TopK", REDUCTION, false, weft_nn_topk_infer, weft_nn_topk_compute, NULL},
    {"Softmax", REDUCTION, false, weft_nn_softmax_infer, weft_nn_softmax_compute, NULL},
    {"LogSoftmax", REDUCTION, false, weft_nn_softmax_infer, weft_nn_softmax_compute, NULL},
    {"LayerNormalization", REDUCTION, false, weft_nn_layernorm_infer, weft_nn_layernorm_compute, NULL},
    /* aliases and shape ops (nn_shape.c) */
    ALIAS("Reshape", weft_nn_reshape_infer), ALIAS("Flatten", weft_nn_flatten_infer),
    ALIAS("Squeeze", weft_nn_squeeze_infer), ALIAS("Unsqueeze", weft_nn_unsqueeze_infer),
    ALIAS("Identity", weft_nn_identity_infer), ALIAS("Dropout", weft_nn_identity_infer),
    {"Shape", INJECTIVE, false, weft_nn_shape_infer, weft_nn_shape_compute, weft_nn_shape_eval},
    {"Size", INJECTIVE, false, weft_nn_size_infer, weft_nn_size_compute, weft_nn_size_eval},
    {"ConstantOfShape", INJECTIVE, false, weft_nn_const_of_shape_infer, weft_nn_const_of_shape_compute,
     weft_nn_const_of_shape_eval},
    /* index remapping (nn_index.c) */
    {"Transpose", INJECTIVE, false, weft_nn_transpose_infer, weft_nn_transpose_compute, NULL},
    {"Concat", INJECTIVE, false, weft_nn_concat_infer, weft_nn_concat_compute, NULL},
    {"Split", INJECTIVE, false, weft_nn_split_infer, weft_nn_split_compute, NULL},
    {"Slice", INJECTIVE, false, weft_nn_slice_infer, weft_nn_slice_compute, NULL},
    {"Gather", INJECTIVE, false, weft_nn_gather_infer, weft_nn_gather_compute, NULL},
    {"Tile", INJECTIVE, false, weft_nn_tile_infer, weft_nn_tile_compute, NULL},
    {"Trilu", ELEMWISE, false, weft_nn_trilu_infer, weft_nn_trilu_compute, NULL},
    {"OneHot", INJECTIVE, false, weft_nn_onehot_infer, weft_nn_onehot_compute, NULL},
    {"GatherElements", INJECTIVE, false, weft_nn_gather_elements_infer, weft_nn_gather_elements_compute, NULL},
    /* exported-model coverage (nn_activation.c, nn_resize.c, nn_pad.c, nn_conv_transpose.c, nn_range.c,
     * nn_scatter.c) */
    {"HardSigmoid", ELEMWISE, false, weft_nn_hard_act_infer, weft_nn_hard_act_compute, NULL},
    {"HardSwish", ELEMWISE, false, weft_nn_hard_act_infer, weft_nn_hard_act_compute, NULL},
    {"PRelu", ELEMWISE, false, weft_nn_prelu_infer, weft_nn_prelu_compute, NULL},
    {"Resize", INJECTIVE, false, weft_nn_resize_infer, weft_nn_resize_compute, NULL},
    {"Upsample", INJECTIVE, false, weft_nn_resize_infer, weft_nn_resize_compute, NULL},
    {"GridSample", INJECTIVE, false, weft_nn_grid_sample_infer, weft_nn_grid_sample_compute, NULL},
    {"RoiAlign", REDUCTION, false, weft_nn_roi_align_infer, weft_nn_roi_align_compute, NULL},
    {"Pad", INJECTIVE, false, weft_nn_pad_infer, weft_nn_pad_compute, NULL},
    {"ConvTranspose", REUSE, false, weft_nn_conv_transpose_infer, weft_nn_conv_transpose_compute, NULL},
    {"Range", INJECTIVE, false, weft_nn_range_infer, weft_nn_range_compute, weft_nn_range_eval},
    {"ScatterND", REDUCTION, false, weft_nn_scatter_nd_infer, weft_nn_scatter_nd_compute, NULL},
    {"ScatterElements", REDUCTION, false, weft_nn_scatter_elements_infer, weft_nn_scatter_elements_compute, NULL},
    {"Scatter", REDUCTION, false, weft_nn_scatter_elements_infer, weft_nn_scatter_elements_compute, NULL}, /* opset 9-10 */
    /* recurrences (nn_rnn.c; expanded by model/recur.c) */
    {"GRU", REUSE, false, weft_nn_rnn_infer, weft_nn_rnn_compute, NULL},
    {"LSTM", REUSE, false, weft_nn_rnn_infer, weft_nn_rnn_compute, NULL},
    {"RNN", REUSE, false, weft_nn_rnn_infer, weft_nn_rnn_compute, NULL},
};

#define N_OPS ((int)(sizeof op_table / sizeof op_table[0]))

weft_op_loop_fn weft_op_loop(const weft_graph *g, const weft_gnode *n)
{
    weft_op_loop_fn fn = weft_nn_scatter_loop(g, n);
    return fn ? fn : weft_nn_topk_loop(g, n);
}

const weft_op_def *weft_op_find(const char *op_type)
{
    if (!op_type) {
        weft_fail(WEFT_ERR_INVALID_ARG, "weft_op_find: op_type is NULL");
        return NULL;
    }
    for (int i = 0; i < N_OPS; i++)
        if (strcmp(op_table[i].op_type, op_type) == 0) return &op_table[i];
    weft_fail(WEFT_ERR_UNSUPPORTED, "unsupported op '%s'", op_type);
    return NULL;
}

static char supported_list[4096];
static once_flag supported_once = ONCE_FLAG_INIT;

static void build_supported_list(void)
{
    size_t used = 0;
    for (int i = 0; i < N_OPS && used < sizeof supported_list; i++)
        used += (size_t)snprintf(supported_list + used, sizeof supported_list - used, "%s%s", i ? ", " : "",
                                 op_table[i].op_type);
}

const char *weft_op_supported(void)
{
    call_once(&supported_once, build_supported_list);
    return supported_list;
}
