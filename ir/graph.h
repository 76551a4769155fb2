/* Graph IR (internal view of include/weft/graph.h): values and nodes in growable arrays, by
 * index. A value is a graph input, a constant (owned bytes), or the output of one node. Nodes
 * keep the ONNX op_type, a deep copy of their attributes, and their op definition from the
 * operator registry (ops/graph_ops.h). Passes mark nodes dead and redirect uses instead of
 * deleting, so indices stay stable.
 */
#ifndef WEFT_IR_GRAPH_H
#define WEFT_IR_GRAPH_H
#include "ir/dtype.h"
#include "weft/graph.h"

#define WEFT_GRAPH_MAX_DIMS 8
#define WEFT_NODE_MAX_IO 64

typedef struct weft_op_def weft_op_def; /* ops/graph_ops.h */

typedef struct weft_gvalue {
    char *name;
    weft_dtype dtype;
    int ndim;
    int64_t shape[WEFT_GRAPH_MAX_DIMS];
    int producer;     /* node index, -1 for inputs and constants */
    bool is_input;
    bool is_output;
    void *data;       /* constants: prod(shape) elements, owned (malloc) */
    /* Symbolic shapes (model/dynamic.c): an input's dimension of unknown size is -1 and named
     * by dim_names[d] (owned); `symbolic` marks such inputs and every value computed from one
     * (their shape is unknown, ndim 0, until the graph is specialized to concrete sizes). */
    bool symbolic;
    char *dim_names[WEFT_GRAPH_MAX_DIMS];
} weft_gvalue;

typedef struct weft_gnode {
    char *op_type;
    char *name;
    int n_inputs, n_outputs;
    int inputs[WEFT_NODE_MAX_IO];  /* value indices; -1 = omitted optional input */
    int outputs[WEFT_NODE_MAX_IO];
    int n_attrs;
    weft_attr *attrs;              /* deep copies (names, arrays, strings owned) */
    const weft_op_def *def;
    bool dead;
} weft_gnode;

/* An import-time rewrite (the ONNX frontend's weft_onnx_decompose): adds node op_type on ins to
 * g as other ops when it applies (*done true, outs filled), else leaves g alone (*done false). */
typedef weft_status (*weft_graph_rewrite_fn)(weft_graph *g, const char *op_type, const char *nname, int n_in,
                                             const weft_value *ins, int n_attrs, const weft_attr *attrs, int n_out,
                                             weft_value *outs, bool *done);

struct weft_graph {
    /* Set by the importer that built the graph: a node it kept as given because its input's
     * shape was symbolic (a 1-D or 3-D Conv on a batch of unknown size) is offered to it again
     * when model/dynamic.c specializes the graph to concrete sizes. NULL: none. */
    weft_graph_rewrite_fn rewrite;
    int n_values, cap_values;
    weft_gvalue *values;
    int n_nodes, cap_nodes;
    weft_gnode *nodes;
    int n_inputs, n_outputs;
    int inputs[64];
    int outputs[64];
};

/* dtype <-> public type. */
weft_dtype weft_type_dtype(weft_type t);
bool weft_dtype_to_type(weft_dtype d, weft_type *out);
int64_t weft_gvalue_numel(const weft_gvalue *v);
size_t weft_gvalue_bytes(const weft_gvalue *v);
/* Element j of a constant value (v->data set) as int64, any dtype (floats truncated). */
int64_t weft_gvalue_int(const weft_gvalue *v, int64_t j);

/* Attribute lookup on a node; the default when absent (or of another kind). */
int64_t weft_gnode_attr_int(const weft_gnode *n, const char *name, int64_t dflt);
double weft_gnode_attr_float(const weft_gnode *n, const char *name, double dflt);
/* INTS attribute: its count and elements, or -1 when absent. */
int weft_gnode_attr_ints(const weft_gnode *n, const char *name, const int64_t **out);
/* FLOATS attribute: its count and elements, or -1 when absent. */
int weft_gnode_attr_floats(const weft_gnode *n, const char *name, const float **out);
const char *weft_gnode_attr_string(const weft_gnode *n, const char *name, const char *dflt);

/* A new value (internal; name copied, may be NULL). Returns its index or -1 (out of memory). */
int weft_graph_new_value(weft_graph *g, const char *name, weft_dtype t, int ndim, const int64_t *shape);
/* Makes every use of value `from` (node inputs, graph outputs) use `to` instead. */
void weft_graph_replace_uses(weft_graph *g, int from, int to);
/* Number of live nodes reading value v (plus 1 if it is a graph output). */
int weft_graph_n_uses(const weft_graph *g, int v);
/* A deep copy of g (for passes that must not modify the user's graph). */
weft_status weft_graph_clone(const weft_graph *g, weft_graph **out);

#endif
