/* weft model API: what a compiled model takes and gives (names, types, shapes, bytes), size-
 * checked runs, per-thread execution contexts, symbolic (dynamic) dimensions and compiling
 * with tuned schedules from a schedule database.
 *
 *   weft_graph *g = NULL; weft_model *m = NULL;
 *   weft_onnx_load("mlp.onnx", &g);                              // weft/onnx.h
 *   weft_model_options o = weft_model_options_default();
 *   weft_model_compile_tuned(g, &o, "tuned.db", &m, NULL);       // or weft_model_compile
 *   weft_graph_destroy(g);
 *   weft_tensor_info in, out;
 *   weft_model_input_info(m, 0, &in);                            // "x", float32, [-1 "batch", 512]
 *   weft_model_output_info(m, 0, &out);
 *   size_t in_bytes = 32 * 512 * 4, out_bytes = 32 * 512 * 4;   // batch 32
 *   weft_model_run_sized(m, 1, (const void *[]){x}, &in_bytes, 1, (void *[]){y}, &out_bytes);
 *   weft_model_destroy(m);
 *
 * Errors. Every function returning weft_status returns WEFT_OK or one of the codes listed at
 * it, and then weft_last_error() names the argument, tensor or dimension and expected vs got.
 * Every function accepts NULL pointers and out-of-range indices by returning
 * WEFT_ERR_INVALID_ARG (never by crashing); out parameters are cleared on failure.
 *
 * Symbolic dimensions. A graph input may have dimensions of unknown size, named ("batch"),
 * as ONNX dim_param gives them. Such a model is compiled for concrete sizes at its first run
 * with them and the compiled kernels are cached per set of input shapes (tuned schedules
 * are looked up per concrete kernel, as for static models); every shape compiled stays
 * until the model is destroyed, and all of them share the model's thread pool. The sizes of a run come from
 * weft_context_set_dim and, for the rest, from the input byte sizes: an input with one
 * unknown dimension determines it (bytes / the other dimensions' product). The same name in
 * several inputs is one size; disagreeing sizes are WEFT_ERR_SHAPE naming both inputs.
 *
 * Thread safety. A compiled model is immutable after weft_model_compile* except for its
 * shape cache (behind a lock) and its own default context (behind another lock):
 *  - weft_model_run and weft_model_run_sized may be called from several threads at once on
 *    one model; they take the model's lock and run one at a time.
 *  - for runs at the same time, give each thread its own weft_context (weft_context_create:
 *    an activation arena and a few pointers, no compiling). Runs of different contexts of one
 *    model proceed together; the model's thread pool serves one run at a time and a run that
 *    finds it busy runs its kernels on its calling thread alone.
 *  - one context must not be used by two threads at once.
 *  - weft_model_profile_* count runs of the model's own context (weft_model_run*) only;
 *    weft_model_destroy must not overlap any other call on the model or its contexts.
 *  - weft_last_error() is per thread.
 */
#ifndef WEFT_MODEL_H
#define WEFT_MODEL_H
#include <stddef.h>
#include <stdint.h>

#include "weft/graph.h"
#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_MAX_DIMS 8

/* A model input or output. Borrowed strings stay valid while the model lives. */
typedef struct weft_tensor_info {
    const char *name;
    weft_type dtype;
    int ndim;                               /* -1: not known until the symbolic sizes are */
    int64_t shape[WEFT_MAX_DIMS];           /* -1: a symbolic dimension */
    const char *dim_names[WEFT_MAX_DIMS];   /* the symbol of a -1 dimension ("batch"), else NULL;
                                               NULL with -1: depends on the symbols otherwise */
    size_t bytes;                           /* 0 when a dimension is symbolic */
} weft_tensor_info;

typedef struct weft_context weft_context;

/* ---- compiling ---- */

/* weft_model_compile, with the best record of each kernel from the schedule database at
 * db_path (this machine's; else the nearest machine's, replayed and checked against the naive
 * schedule first; else the default schedule). *n_tuned (optional) counts kernels that got a
 * record; for a model with symbolic dimensions it is 0 (kernels are compiled per shape, at
 * the first run, from the same database).
 * Errors: INVALID_ARG (NULL g, db_path or out; a graph without outputs), IO (db_path cannot be
 * opened), DB (db_path is not a schedule database), UNSUPPORTED, COMPILE, NOMEM. */
WEFT_API weft_status weft_model_compile_tuned(const weft_graph *g, const weft_model_options *opt, const char *db_path,
                                              weft_model **out, int *n_tuned);

/* ---- queries ---- */

/* Counts; 0 for NULL. */
WEFT_API int weft_model_n_inputs(const weft_model *m);
WEFT_API int weft_model_n_outputs(const weft_model *m);
/* Input / output i. Errors: INVALID_ARG (NULL m or out, i out of range). For a model with
 * symbolic dimensions an output's dims are those that follow from the inputs' symbols. */
WEFT_API weft_status weft_model_input_info(const weft_model *m, int i, weft_tensor_info *out);
WEFT_API weft_status weft_model_output_info(const weft_model *m, int i, weft_tensor_info *out);
/* The index of the input / output called name. Errors: INVALID_ARG (NULL argument; no such
 * name: the message lists the names there are). */
WEFT_API weft_status weft_model_find_input(const weft_model *m, const char *name, int *index);
WEFT_API weft_status weft_model_find_output(const weft_model *m, const char *name, int *index);
/* Whether any input has a symbolic dimension. */
WEFT_API bool weft_model_is_dynamic(const weft_model *m);

/* ---- running ---- */

/* Runs the model on inputs[i] (input_bytes[i] bytes) into outputs[i] (output_bytes[i]
 * bytes), in model order; n_inputs and n_outputs must be the model's counts. Each size must
 * be exactly the tensor's bytes (for symbolic dimensions: after resolving them, see above).
 * Buffers need no alignment beyond their type's. Runs on the model's own context, one call
 * at a time (see Thread safety).
 * Errors: INVALID_ARG (NULL m, buffer or size array; wrong count), SHAPE (a size that is not
 * the tensor's, naming the tensor, its shape and both byte counts; symbolic sizes that
 * cannot be resolved or disagree), COMPILE / UNSUPPORTED / NOMEM (compiling a new shape),
 * INTERNAL (a kernel failed). */
WEFT_API weft_status weft_model_run_sized(weft_model *m, int n_inputs, const void *const *inputs, const size_t *input_bytes,
                                          int n_outputs, void *const *outputs, const size_t *output_bytes);

/* A per-thread execution context: its own activation arena and symbol bindings. Cheap: no
 * compiling. Caller owns it (weft_context_destroy, accepts NULL) and destroys it before the
 * model. Errors: INVALID_ARG (NULL m or out), NOMEM. */
WEFT_API weft_status weft_context_create(weft_model *m, weft_context **out);
WEFT_API void weft_context_destroy(weft_context *c);
/* Binds the symbolic dimension `name` to `value` for the following runs of c (until set
 * again). Errors: INVALID_ARG (NULL argument; no input has a dimension called name: the
 * message lists those there are; value < 1). */
WEFT_API weft_status weft_context_set_dim(weft_context *c, const char *name, int64_t value);
/* Resolves the concrete shapes from the bindings and input_bytes (one per input; may be
 * NULL when every symbol is bound) and compiles the model for them unless already cached;
 * then weft_context_output_info reports the concrete outputs. weft_context_run does this
 * itself. Errors: as weft_model_run_sized without the output checks. */
WEFT_API weft_status weft_context_prepare(weft_context *c, int n_inputs, const size_t *input_bytes);
/* Output i at the shapes of the last prepare or run of c (for a static model: always).
 * Errors: INVALID_ARG (NULL argument, i out of range), SHAPE (a dynamic model not prepared). */
WEFT_API weft_status weft_context_output_info(const weft_context *c, int i, weft_tensor_info *out);
/* weft_model_run_sized on context c: runs of different contexts proceed at the same time.
 * Errors: as weft_model_run_sized. */
WEFT_API weft_status weft_context_run(weft_context *c, int n_inputs, const void *const *inputs, const size_t *input_bytes,
                                      int n_outputs, void *const *outputs, const size_t *output_bytes);

/* ---- symbolic graphs ---- */

/* A graph input with symbolic dimensions: shape[d] is -1 where dim_names[d] names the
 * dimension ("batch"), positive elsewhere (dim_names[d] NULL). Values computed from it have
 * shapes unknown until the graph is specialized (weft_graph_value_shape returns -1 for them).
 * Errors: INVALID_ARG (NULL g, shape, dim_names or out; a -1 without a name or a name on a
 * sized dimension), SHAPE (a dimension < -1 or 0), UNSUPPORTED (more than 8 dimensions). */
WEFT_API weft_status weft_graph_add_input_symbolic(weft_graph *g, const char *name, weft_type t, int ndim,
                                                   const int64_t *shape, const char *const *dim_names, weft_value *out);
/* The symbol of dimension d of value v, or NULL (a sized dimension, or bad arguments). */
WEFT_API const char *weft_graph_value_dim_name(const weft_graph *g, weft_value v, int d);
/* Whether any input of g has a symbolic dimension. */
WEFT_API bool weft_graph_is_symbolic(const weft_graph *g);
/* A new static graph: g with its symbols bound, by name (n_dims pairs; may be 0) and, for the
 * rest, from input_bytes (one byte size per input, or NULL), and every op's shapes inferred.
 * A static g is copied. Caller owns *out. Errors: INVALID_ARG (NULL g or out; an unknown
 * name; a value < 1), SHAPE (unresolved or disagreeing sizes; an op's shapes at these sizes),
 * UNSUPPORTED, NOMEM. */
WEFT_API weft_status weft_graph_specialize(const weft_graph *g, int n_dims, const char *const *dim_names,
                                           const int64_t *dim_values, const size_t *input_bytes, weft_graph **out);

#ifdef __cplusplus
}
#endif
#endif
