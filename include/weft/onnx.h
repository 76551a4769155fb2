/* ONNX import: an ONNX model file (opsets 7..18, default domain only) becomes a weft graph.
 *
 *   weft_graph *g = NULL;
 *   if (weft_onnx_load("resnet9.onnx", &g) != WEFT_OK) fprintf(stderr, "%s\n", weft_last_error());
 *   ... weft_model_compile(g, &opt, &m); weft_graph_destroy(g);
 *
 * What is read: initializers and Constant nodes (float32, int64, int32, bool; inline, typed
 * fields or external data files next to the model) become constants; graph inputs that are not
 * initializers become inputs (float32; a named symbolic dimension, ONNX dim_param, becomes a
 * symbolic dimension: see weft/model.h; a dimension with neither size nor name is refused); every
 * other node becomes weft_graph_add_op with its ONNX op_type, node name and attributes (int,
 * float, ints, floats, string); graph outputs become outputs in file order. Nodes must be in
 * topological order, as ONNX requires. Errors name the file, the node or tensor, and expected
 * vs got; a malformed or truncated file is an error, never a crash.
 */
#ifndef WEFT_ONNX_H
#define WEFT_ONNX_H
#include <stddef.h>

#include "weft/graph.h"
#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads the ONNX model at `path`. External data files are looked up in the model's folder and
 * must stay inside it. On success *out is a new graph the caller owns (weft_graph_destroy);
 * on failure *out is NULL and weft_last_error() says why. Errors: INVALID_ARG (NULL path or
 * out), IO (the file or an external data file cannot be read), PARSE (not a ModelProto,
 * truncated, inconsistent sizes), UNSUPPORTED (an op, type, opset or domain weft lacks),
 * SHAPE (an op's shapes do not fit), NOMEM. */
WEFT_API weft_status weft_onnx_load(const char *path, weft_graph **out);

/* Same, from `len` bytes of a serialized ModelProto (borrowed; not kept after the call).
 * model_dir is the folder external data paths are relative to; it may be NULL, and then a
 * model that uses external data is refused. Ownership of *out and errors as for
 * weft_onnx_load (INVALID_ARG also for NULL data). */
WEFT_API weft_status weft_onnx_load_buffer(const void *data, size_t len, const char *model_dir, weft_graph **out);

#ifdef __cplusplus
}
#endif
#endif
