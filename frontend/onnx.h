/* ONNX import, internal view (the public entry points are in include/weft/onnx.h).
 *
 *   onnx.c         the model walk: read and unpack the file, check the opsets, then
 *                  initializers -> constants, inputs, nodes in file order, outputs; the
 *                  tensor-name table.
 *   onnx_tensor.c  TensorProto -> dense little-endian data of a weft_type: raw_data, the
 *                  typed repeated fields, or an external data file kept inside the model folder.
 *   onnx_decompose.c  import-time rewrites (ConvTranspose -> sub-pixel Conv + pixel shuffle,
 *                  MaxPool ceil_mode=1 -> Pad + MaxPool, 1-D conv / pools -> the 2-D op,
 *                  DepthToSpace / SpaceToDepth -> Reshape + Transpose, InstanceNormalization
 *                  -> reductions and elementwise ops).
 *   onnx_einsum.c  Einsum -> Transpose, Reshape, ReduceSum and one MatMul.
 *   onnx_conv3d.c  3-D Conv / MaxPool / AveragePool -> the 2-D ops; LRN -> AveragePool over
 *                  channels and elementwise ops.
 *   onnx_qdq.c     QuantizeLinear / DequantizeLinear -> float ops (fake quantization), and the
 *                  side table that remembers which INT32 constants were int8 or uint8.
 *
 * The protobuf-c message owns every string and array read here; the loader borrows them until
 * it frees the message at the end of the load. Every field is validated before use: a file
 * truncated at a field boundary unpacks "successfully" with pieces missing.
 */
#ifndef WEFT_FRONTEND_ONNX_H
#define WEFT_FRONTEND_ONNX_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnx.pb-c.h"
#include "weft/graph.h"
#include "weft/onnx.h"

#define WEFT_ONNX_MAX_DIMS 8                       /* the graph's limit (weft_graph_value_shape) */
#define WEFT_ONNX_MAX_ELEMS ((int64_t)1 << 40)     /* refused above: a corrupt or hostile dim */

/* Where messages say the model came from, and where external data lives. */
typedef struct weft_onnx_ctx {
    const char *src;       /* the file path, or "<buffer>" */
    const char *model_dir; /* the folder external data paths are relative to; NULL: none */
} weft_onnx_ctx;

/* A decoded tensor: prod(shape) elements of `type`, dense, host byte order. INT8 and UINT8
 * tensors decode to INT32 elements holding the same values (weft has no 8-bit integers);
 * onnx_type says which they were. */
typedef struct weft_onnx_tensor {
    weft_type type;
    int32_t onnx_type; /* the TensorProto data type (ONNX__TENSOR_PROTO__DATA_TYPE__*) */
    int ndim;
    int64_t shape[WEFT_ONNX_MAX_DIMS];
    int64_t numel;
    const void *data; /* points into the message or at `owned`; non-NULL */
    void *owned;      /* malloc'd buffer behind `data`, or NULL */
} weft_onnx_tensor;

/* Decodes t. `what` names it in messages ("initializer 'w'", "node 'c' (Constant)"). On
 * failure returns the status with the message set and leaves nothing to release. */
weft_status weft_onnx_tensor_decode(const weft_onnx_ctx *cx, const Onnx__TensorProto *t, const char *what,
                                    weft_onnx_tensor *out);
void weft_onnx_tensor_release(weft_onnx_tensor *t);

/* The ONNX TensorProto.DataType name ("FLOAT16"), or "?" when unknown; static storage. */
const char *weft_onnx_dtype_name(int32_t dt);
/* The weft type of an ONNX data type; false when weft has none. */
int weft_onnx_dtype_to_type(int32_t dt, weft_type *out);

/* Checks a shape (count, signs, element limit) and returns its element count in *numel.
 * Messages read "<src>: <what> ...". */
weft_status weft_onnx_check_shape(const weft_onnx_ctx *cx, const char *what, size_t ndim, const int64_t *dims,
                                  int64_t *numel);
/* onnx_decompose.c: rewrites a node into other ops when that compiles better or is supported
 * that way (ConvTranspose with constant weights -> sub-pixel Conv + pixel shuffle; MaxPool with
 * ceil_mode=1 -> Pad + MaxPool; 1-D Conv, ConvTranspose, MaxPool, AveragePool -> Unsqueeze +
 * the 2-D op + Squeeze; DepthToSpace, SpaceToDepth -> Reshape + Transpose + Reshape;
 * InstanceNormalization -> ReduceMean, Sub, Mul, Sqrt, Div, Add). *done says whether it did;
 * when not, the caller adds the node as it is. Errors name the node (op type and name) and the
 * attribute; *done is then false. outs receive the node's output values. */
weft_status weft_onnx_decompose(weft_graph *g, const char *op_type, const char *nname, int n_in, const weft_value *ins,
                                int n_attrs, const weft_attr *attrs, int n_out, weft_value *outs, bool *done);
/* The attribute `name` of kind `kind` among attrs[0..n), or NULL (onnx_decompose.c; shared with
 * onnx_conv3d.c). */
const weft_attr *weft_onnx_find_attr(int n, const weft_attr *attrs, const char *name, weft_attr_kind kind);
/* onnx_decompose.c's builders, shared with onnx_einsum.c: a 1-D int64 constant named
 * "<base>.<suffix>", and an op of one output named "<nname><suffix>". */
weft_status weft_onnx_add_i64(weft_graph *g, const char *base, const char *suffix, int n, const int64_t *v,
                              weft_value *out);
weft_status weft_onnx_add_op1(weft_graph *g, const char *op, const char *nname, const char *suffix, int n_in,
                              const weft_value *ins, int n_attrs, const weft_attr *attrs, weft_value *out);
/* p ([C]) as [C, 1, ...] (nd dims) to broadcast along an axis followed by nd - 1 others (an
 * InstanceNormalization channel param over [N, C, D1, ...], a per-axis quantization scale in
 * onnx_qdq.c): a new constant named "<nname><what>" when p is one, else a Reshape. */
weft_status weft_onnx_axis_param(weft_graph *g, const char *nname, const char *what, weft_value p, int nd, int64_t C,
                                 weft_value *out);
/* onnx_einsum.c: Einsum of one or two operands as Transpose / Reshape / ReduceSum / MatMul
 * (called by weft_onnx_decompose); refuses equations it cannot express with the node named. */
weft_status weft_onnx_einsum(weft_graph *g, const char *nname, int n_in, const weft_value *ins, int n_attrs,
                             const weft_attr *attrs, int n_out, weft_value *outs);
/* onnx_conv3d.c: Conv, MaxPool and AveragePool on a 5-D input [N, C, D, H, W] as the 2-D ops
 * (Conv: depth taps as input channels of one 2-D Conv; pools: a 2-D pool over (H, W), then one
 * over D), and LRN as an AveragePool over channels (called by weft_onnx_decompose). Other nodes:
 * *done = false and WEFT_OK. Refuses what it cannot express with the node and attribute named. */
weft_status weft_onnx_conv3d(weft_graph *g, const char *op_type, const char *nname, int n_in, const weft_value *ins,
                             int n_attrs, const weft_attr *attrs, int n_out, weft_value *outs, bool *done);

/* onnx_qdq.c. What the loader knows of a value beyond its weft type, by weft_value: an INT32
 * constant decoded from int8 or uint8 (QuantizeLinear's zero point fixes the integer range by
 * it), or the result of a QuantizeLinear (float holding integers: refused as a graph output). */
typedef enum weft_onnx_qkind {
    WEFT_ONNX_Q_NONE,
    WEFT_ONNX_Q_INT8,   /* a constant decoded from INT8 */
    WEFT_ONNX_Q_UINT8,  /* a constant decoded from UINT8 */
    WEFT_ONNX_Q_RESULT, /* a QuantizeLinear output */
} weft_onnx_qkind;

typedef struct weft_onnx_qtable {
    int n;          /* kinds[0..n) are set; values from n on are WEFT_ONNX_Q_NONE */
    uint8_t *kinds; /* weft_onnx_qkind per value, malloc'd */
} weft_onnx_qtable;

weft_onnx_qkind weft_onnx_qkind_of(const weft_onnx_qtable *qt, weft_value v);
/* false: out of memory. */
bool weft_onnx_qkind_set(weft_onnx_qtable *qt, weft_value v, weft_onnx_qkind k);
void weft_onnx_qtable_free(weft_onnx_qtable *qt);
/* QuantizeLinear and DequantizeLinear as float ops (other nodes: *done = false and WEFT_OK);
 * a QuantizeLinear's output is marked WEFT_ONNX_Q_RESULT in qt. Refuses what it cannot express
 * (a zero point that is not an int8 / uint8 constant, opset 19+ attributes, blocked scales)
 * with the node named. in_names: the node's ONNX input names, for messages. */
weft_status weft_onnx_qdq(weft_graph *g, weft_onnx_qtable *qt, const char *op_type, const char *nname, int n_in,
                          const weft_value *ins, const char *const *in_names, int n_attrs, const weft_attr *attrs,
                          int n_out, weft_value *outs, bool *done);
/* A tensor `name` of ONNX data type dt that weft cannot hold (INT16, FLOAT8, INT4, ...): when a
 * QuantizeLinear or DequantizeLinear node of gp reads it, fails naming that node and the
 * quantization type; otherwise returns WEFT_OK and leaves the message alone. */
weft_status weft_onnx_qdq_type_error(const weft_onnx_ctx *cx, const Onnx__GraphProto *gp, const char *name,
                                     int32_t dt);
/* Fails for graph output `name`, a QuantizeLinear result (float, not int8), naming the node of gp
 * that produces it. */
weft_status weft_onnx_qdq_output_error(const weft_onnx_ctx *cx, const Onnx__GraphProto *gp, const char *name);

/* "[2, 3, 4]" into buf (truncated to fit). */
void weft_onnx_dims_str(char *buf, size_t cap, size_t ndim, const int64_t *dims);

#endif
