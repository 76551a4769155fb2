/* weft graph API: build an inference graph by calls (inputs, constants, ops), compile it into
 * a model, run the model. The graph owns its values and nodes; the model owns its compiled
 * kernels, its copies of the weights and its memory arena.
 *
 *   weft_graph *g; weft_graph_create(&g);
 *   weft_value x, w, b, y, h;
 *   weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 2, (int64_t[]){32, 512}, &x);
 *   weft_graph_add_constant(g, "w", WEFT_TYPE_FLOAT32, 2, (int64_t[]){512, 512}, w_data, &w);  // copied
 *   weft_graph_add_constant(g, "b", WEFT_TYPE_FLOAT32, 1, (int64_t[]){512}, b_data, &b);
 *   weft_graph_gemm(g, x, w, b, false, true, &y);        // y = x * w^T + b  (ONNX Gemm)
 *   weft_graph_unary(g, "Relu", y, &h);
 *   weft_graph_set_output(g, h, "out");
 *   weft_model *m; weft_model_options o = weft_model_options_default();
 *   weft_model_compile(g, &o, &m);
 *   weft_model_run(m, (const void *[]){x_data}, (void *[]){out_data});
 *   weft_model_destroy(m); weft_graph_destroy(g);
 *
 * Ops are named by their ONNX op_type ("Conv", "Gemm", "Relu", ...) with ONNX attributes and
 * semantics (opset 13); shapes are inferred when an op is added, so a shape error is reported
 * at that call, naming the op, the node and the shapes (for ops on inputs with symbolic
 * dimensions, weft/model.h, when the graph is specialized to concrete sizes).
 *
 * weft/model.h adds queries of a model's inputs and outputs, size-checked runs, execution
 * contexts for running one model from several threads, and compiling with tuned schedules;
 * its "Thread safety" and "Errors" paragraphs hold for the functions here too.
 */
#ifndef WEFT_GRAPH_H
#define WEFT_GRAPH_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_graph weft_graph;
typedef struct weft_model weft_model;
typedef int32_t weft_value; /* a tensor of a graph, by index; valid while the graph lives */

typedef enum weft_type { WEFT_TYPE_FLOAT32, WEFT_TYPE_INT64, WEFT_TYPE_INT32, WEFT_TYPE_BOOL, WEFT_TYPE_COUNT } weft_type;

typedef enum weft_attr_kind { WEFT_ATTR_INT, WEFT_ATTR_FLOAT, WEFT_ATTR_INTS, WEFT_ATTR_FLOATS, WEFT_ATTR_STRING } weft_attr_kind;

/* An op attribute. Only the member for `kind` is read; arrays are copied by add_op. */
typedef struct weft_attr {
    const char *name;
    weft_attr_kind kind;
    int64_t i;            /* INT */
    double f;             /* FLOAT */
    int n;                /* INTS, FLOATS: element count */
    const int64_t *ints;  /* INTS */
    const float *floats;  /* FLOATS */
    const char *s;        /* STRING */
} weft_attr;

/* Caller owns the graph: weft_graph_destroy (accepts NULL). Errors: INVALID_ARG (NULL out),
 * NOMEM. */
WEFT_API weft_status weft_graph_create(weft_graph **out);
WEFT_API void weft_graph_destroy(weft_graph *g);

/* A graph input of fixed shape. name is copied. Errors: INVALID_ARG (NULL g, out),
 * SHAPE (a negative dimension), UNSUPPORTED (more than 8 dimensions, 64 inputs, or too
 * large), NOMEM. (Symbolic dimensions: weft_graph_add_input_symbolic in weft/model.h.) */
WEFT_API weft_status weft_graph_add_input(weft_graph *g, const char *name, weft_type t, int ndim, const int64_t *shape,
                                          weft_value *out);
/* A constant (weights); data (prod(shape) elements of t) is copied. Errors: as for
 * weft_graph_add_input, and INVALID_ARG for NULL data. */
WEFT_API weft_status weft_graph_add_constant(weft_graph *g, const char *name, weft_type t, int ndim,
                                             const int64_t *shape, const void *data, weft_value *out);
/* An op with ONNX semantics. inputs[i] may be -1 for an omitted optional input. Output
 * shapes are inferred now; outputs receive the new values. name may be NULL (one is made).
 * Errors (the graph is then unchanged): INVALID_ARG (NULL arrays, an input that is not a
 * value of g, a bad attribute), UNSUPPORTED (an unknown op_type: the message lists the
 * supported ones; too many inputs or outputs), SHAPE (the inputs' shapes or attributes do
 * not fit the op, naming the op, node and shapes), NOMEM. */
WEFT_API weft_status weft_graph_add_op(weft_graph *g, const char *op_type, const char *name, int n_inputs,
                                       const weft_value *inputs, int n_attrs, const weft_attr *attrs, int n_outputs,
                                       weft_value *outputs);
/* Marks v as a graph output named `name` (copied). Outputs are ordered by these calls.
 * Errors: INVALID_ARG (NULL g, v not a value of g), UNSUPPORTED (more than 64), NOMEM. */
WEFT_API weft_status weft_graph_set_output(weft_graph *g, weft_value v, const char *name);

/* Convenience wrappers over add_op (same errors). */
WEFT_API weft_status weft_graph_gemm(weft_graph *g, weft_value a, weft_value b, weft_value c, bool trans_a, bool trans_b,
                                     weft_value *out);
WEFT_API weft_status weft_graph_matmul(weft_graph *g, weft_value a, weft_value b, weft_value *out);
WEFT_API weft_status weft_graph_binary(weft_graph *g, const char *op_type, weft_value a, weft_value b, weft_value *out);
WEFT_API weft_status weft_graph_unary(weft_graph *g, const char *op_type, weft_value x, weft_value *out);
WEFT_API weft_status weft_graph_conv2d(weft_graph *g, weft_value x, weft_value w, weft_value bias, int stride, int pad,
                                       weft_value *out);

/* Queries. Borrowed results are valid until the graph changes or is destroyed. */
WEFT_API int weft_graph_n_inputs(const weft_graph *g);
WEFT_API int weft_graph_n_outputs(const weft_graph *g);
WEFT_API weft_value weft_graph_input(const weft_graph *g, int i);
WEFT_API weft_value weft_graph_output(const weft_graph *g, int i);
WEFT_API const char *weft_graph_value_name(const weft_graph *g, weft_value v);
WEFT_API weft_type weft_graph_value_type(const weft_graph *g, weft_value v);
WEFT_API int weft_graph_value_shape(const weft_graph *g, weft_value v, int64_t *shape /* [8] */);
/* The value named `name`, or -1. */
WEFT_API weft_value weft_graph_find_value(const weft_graph *g, const char *name);
/* A constant's data (row-major elements of its type), or NULL when v is not a constant. */
WEFT_API const void *weft_graph_value_data(const weft_graph *g, weft_value v);

typedef struct weft_model_options {
    int threads;        /* <= 0: the cores available */
    const char *target; /* "llvm" (default) or "interp" */
} weft_model_options;

WEFT_API weft_model_options weft_model_options_default(void);
/* Runs the graph passes (constant folding, BN folding, fusion), builds one kernel per fused
 * group with its schedule, JIT-compiles it and plans memory. The graph is not modified and
 * may be destroyed afterwards. Caller owns the model: weft_model_destroy (accepts NULL). A
 * graph with symbolic dimensions compiles per concrete shape at first run (weft/model.h).
 * opt may be NULL (the defaults). Errors: INVALID_ARG (NULL graph or out, no outputs),
 * UNAVAILABLE (an unknown target), UNSUPPORTED, SHAPE, COMPILE, NOMEM. */
WEFT_API weft_status weft_model_compile(const weft_graph *g, const weft_model_options *opt, weft_model **out);
WEFT_API void weft_model_destroy(weft_model *m);
/* inputs[i]: the i-th graph input's data; outputs[i]: room for the i-th output (sizes
 * unchecked: weft_model_run_sized checks them). Safe from several threads (one run at a time).
 * Errors: INVALID_ARG (NULL model or buffer), SHAPE (a model with symbolic dimensions),
 * INTERNAL (a kernel failed). */
WEFT_API weft_status weft_model_run(weft_model *m, const void *const *inputs, void *const *outputs);
/* Kernels of the model (0 for a model with symbolic dimensions: its kernels belong to the
 * shapes compiled so far, which weft_model_print lists). */
WEFT_API int weft_model_n_kernels(const weft_model *m);
/* A kernel's name ("conv2d_add_relu_3"): borrowed, valid until the model is destroyed. */
WEFT_API const char *weft_model_kernel_name(const weft_model *m, int k);
/* Bytes of the activation arena (peak of the static memory plan). */
WEFT_API size_t weft_model_peak_bytes(const weft_model *m);
/* Per-kernel time summed over runs since the last reset, and printing it as a profile. */
WEFT_API void weft_model_profile_enable(weft_model *m, bool on);
WEFT_API void weft_model_profile_print(const weft_model *m, FILE *out);
/* The fused kernels as text (op types, shapes, schedule source), for `weft show MODEL`. */
WEFT_API void weft_model_print(const weft_model *m, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
