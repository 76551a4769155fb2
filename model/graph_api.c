/* The public graph-building API (include/weft/graph.h). Adding an op looks it up in the
 * operator registry and infers its output shapes at once; a failed add leaves the graph as it
 * was. A small op whose inputs are all constants (shape arithmetic: Shape -> Gather -> Concat
 * -> Reshape) is evaluated at once, so the ops after it see constants and static shapes.
 * Lives in model/ because folding runs kernels; the containers are in ir/graph.c. */
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "model/model_internal.h"
#include "weft/model.h"
#include "runtime/mem.h"

static char *dup_str(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = weft_malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static weft_status check_shape(const char *what, const char *name, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > WEFT_GRAPH_MAX_DIMS)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s '%s': %d dimensions (at most %d supported)", what, name ? name : "",
                         ndim, WEFT_GRAPH_MAX_DIMS);
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return weft_fail(WEFT_ERR_SHAPE, "%s '%s': dimension %d is %lld", what, name ? name : "", d, (long long)shape[d]);
        if (shape[d] > 0 && total > ((int64_t)1 << 40) / shape[d])
            return weft_fail(WEFT_ERR_UNSUPPORTED, "%s '%s' is too large", what, name ? name : "");
        total *= shape[d];
    }
    return WEFT_OK;
}

weft_status weft_graph_add_input(weft_graph *g, const char *name, weft_type t, int ndim, const int64_t *shape,
                                 weft_value *out)
{
    if (!g || !out || (ndim > 0 && !shape)) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_graph_add_input: NULL argument");
    weft_status rc = check_shape("input", name, ndim, shape);
    if (rc != WEFT_OK) return rc;
    if (g->n_inputs >= 64) return weft_fail(WEFT_ERR_UNSUPPORTED, "more than 64 graph inputs");
    int v = weft_graph_new_value(g, name, weft_type_dtype(t), ndim, shape);
    if (v < 0) return weft_fail(WEFT_ERR_NOMEM, "out of memory adding input %s", name ? name : "");
    g->values[v].is_input = true;
    g->inputs[g->n_inputs++] = v;
    *out = v;
    return WEFT_OK;
}

weft_status weft_graph_add_input_symbolic(weft_graph *g, const char *name, weft_type t, int ndim, const int64_t *shape,
                                          const char *const *dim_names, weft_value *out)
{
    if (!g || !out || (ndim > 0 && (!shape || !dim_names)))
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_graph_add_input_symbolic: NULL argument");
    if (ndim < 0 || ndim > WEFT_GRAPH_MAX_DIMS)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "input '%s': %d dimensions (at most %d supported)", name ? name : "", ndim,
                         WEFT_GRAPH_MAX_DIMS);
    int64_t sized[WEFT_GRAPH_MAX_DIMS] = {0};
    bool any = false;
    for (int d = 0; d < ndim; d++) {
        bool named = dim_names[d] && *dim_names[d];
        if (shape[d] == -1 && !named)
            return weft_fail(WEFT_ERR_INVALID_ARG, "input '%s': dimension %d is -1 (symbolic) but has no name", name ? name : "", d);
        if (shape[d] != -1 && named)
            return weft_fail(WEFT_ERR_INVALID_ARG, "input '%s': dimension %d has size %lld and a name '%s' (a named dimension "
                             "must be -1)", name ? name : "", d, (long long)shape[d], dim_names[d]);
        if (shape[d] != -1 && shape[d] < 1)
            return weft_fail(WEFT_ERR_SHAPE, "input '%s': dimension %d is %lld", name ? name : "", d, (long long)shape[d]);
        any = any || named;
        sized[d] = shape[d] == -1 ? 1 : shape[d];
    }
    weft_status rc = weft_graph_add_input(g, name, t, ndim, sized, out);
    if (rc != WEFT_OK || !any) return rc;
    weft_gvalue *v = &g->values[*out];
    v->symbolic = true;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] != -1) continue;
        v->shape[d] = -1;
        v->dim_names[d] = dup_str(dim_names[d]);
        if (!v->dim_names[d]) return weft_fail(WEFT_ERR_NOMEM, "out of memory adding input %s", name ? name : "");
    }
    return WEFT_OK;
}

const char *weft_graph_value_dim_name(const weft_graph *g, weft_value v, int d)
{
    if (!g || v < 0 || v >= g->n_values || d < 0 || d >= WEFT_GRAPH_MAX_DIMS) return NULL;
    return g->values[v].dim_names[d];
}

bool weft_graph_is_symbolic(const weft_graph *g)
{
    for (int i = 0; g && i < g->n_inputs; i++)
        if (g->values[g->inputs[i]].symbolic) return true;
    return false;
}

weft_status weft_graph_add_constant(weft_graph *g, const char *name, weft_type t, int ndim, const int64_t *shape,
                                    const void *data, weft_value *out)
{
    if (!g || !out || !data || (ndim > 0 && !shape))
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_graph_add_constant: NULL argument");
    weft_status rc = check_shape("constant", name, ndim, shape);
    if (rc != WEFT_OK) return rc;
    int v = weft_graph_new_value(g, name, weft_type_dtype(t), ndim, shape);
    if (v < 0) return weft_fail(WEFT_ERR_NOMEM, "out of memory adding constant %s", name ? name : "");
    size_t bytes = weft_gvalue_bytes(&g->values[v]);
    g->values[v].data = weft_malloc(bytes ? bytes : 1);
    if (!g->values[v].data) {
        free(g->values[v].name);
        g->n_values--;
        return weft_fail(WEFT_ERR_NOMEM, "out of memory copying constant %s (%zu bytes)", name ? name : "", bytes);
    }
    memcpy(g->values[v].data, data, bytes);
    *out = v;
    return WEFT_OK;
}

static weft_status copy_attrs(weft_gnode *n, int n_attrs, const weft_attr *attrs)
{
    n->attrs = weft_calloc((size_t)(n_attrs ? n_attrs : 1), sizeof *n->attrs);
    if (!n->attrs) return WEFT_ERR_NOMEM;
    for (int i = 0; i < n_attrs; i++) {
        weft_attr *a = &n->attrs[i];
        *a = attrs[i];
        a->name = dup_str(attrs[i].name ? attrs[i].name : "");
        a->s = attrs[i].kind == WEFT_ATTR_STRING ? dup_str(attrs[i].s ? attrs[i].s : "") : NULL;
        a->ints = NULL;
        a->floats = NULL;
        n->n_attrs++;
        if (!a->name || (attrs[i].kind == WEFT_ATTR_STRING && !a->s)) return WEFT_ERR_NOMEM;
        if (attrs[i].kind == WEFT_ATTR_INTS || attrs[i].kind == WEFT_ATTR_FLOATS) {
            if (attrs[i].n < 0) return WEFT_ERR_INVALID_ARG;
            size_t sz = attrs[i].kind == WEFT_ATTR_INTS ? sizeof(int64_t) : sizeof(float);
            void *p = weft_malloc(sz * (size_t)(attrs[i].n ? attrs[i].n : 1));
            if (!p) return WEFT_ERR_NOMEM;
            if (attrs[i].n) memcpy(p, attrs[i].kind == WEFT_ATTR_INTS ? (const void *)attrs[i].ints : (const void *)attrs[i].floats,
                                   sz * (size_t)attrs[i].n);
            if (attrs[i].kind == WEFT_ATTR_INTS) a->ints = p;
            else a->floats = p;
        }
    }
    return WEFT_OK;
}

static void drop_last_node(weft_graph *g, int first_value)
{
    weft_gnode *n = &g->nodes[g->n_nodes - 1];
    free(n->op_type);
    free(n->name);
    for (int i = 0; i < n->n_attrs; i++) {
        free((void *)n->attrs[i].name);
        free((void *)n->attrs[i].ints);
        free((void *)n->attrs[i].floats);
        free((void *)n->attrs[i].s);
    }
    free(n->attrs);
    g->n_nodes--;
    while (g->n_values > first_value) {
        g->n_values--;
        free(g->values[g->n_values].name);
        free(g->values[g->n_values].data);
    }
}

static weft_status rnn_batch_major(weft_graph *g, const char *op_type, const char *name, int n_inputs,
                                   const weft_value *inputs, int n_attrs, const weft_attr *attrs, int n_outputs,
                                   weft_value *outputs);

/* A GRU/LSTM/RNN node with layout=1 (batch-major: X [batch, seq, input], initial states
 * [batch, dirs, hidden], Y [batch, seq, dirs, hidden]). */
static bool rnn_layout_1(const char *op_type, int n_attrs, const weft_attr *attrs)
{
    if (strcmp(op_type, "GRU") && strcmp(op_type, "LSTM") && strcmp(op_type, "RNN")) return false;
    for (int i = 0; i < n_attrs; i++)
        if (attrs[i].name && !strcmp(attrs[i].name, "layout") && attrs[i].kind == WEFT_ATTR_INT && attrs[i].i == 1)
            return true;
    return false;
}

weft_status weft_graph_add_op(weft_graph *g, const char *op_type, const char *name, int n_inputs,
                              const weft_value *inputs, int n_attrs, const weft_attr *attrs, int n_outputs,
                              weft_value *outputs)
{
    if (!g || !op_type || (n_inputs && !inputs) || (n_attrs && !attrs) || (n_outputs && !outputs))
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_graph_add_op: NULL argument");
    char made[64];
    if (!name || !*name) {
        snprintf(made, sizeof made, "%.40s_%d", op_type, g->n_nodes);
        name = made;
    }
    const weft_op_def *def = weft_op_find(op_type);
    if (!def) return weft_fail(WEFT_ERR_UNSUPPORTED, "unsupported op '%s' (node '%s'); supported: %s", op_type, name,
                               weft_op_supported());
    if (n_inputs > WEFT_NODE_MAX_IO || n_outputs > WEFT_NODE_MAX_IO || n_outputs < 1 || n_inputs < 0)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': %d inputs and %d outputs (1..%d outputs supported)", op_type,
                         name, n_inputs, n_outputs, WEFT_NODE_MAX_IO);
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i] < -1 || inputs[i] >= g->n_values)
            return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': input %d is not a value of this graph", op_type, name, i);
    if (rnn_layout_1(op_type, n_attrs, attrs))
        return rnn_batch_major(g, op_type, name, n_inputs, inputs, n_attrs, attrs, n_outputs, outputs);
    if (g->n_nodes == g->cap_nodes) {
        int cap = g->cap_nodes ? g->cap_nodes * 2 : 64;
        weft_gnode *v = weft_realloc(g->nodes, sizeof *v * (size_t)cap);
        if (!v) return weft_fail(WEFT_ERR_NOMEM, "out of memory adding node %s", name);
        g->nodes = v;
        g->cap_nodes = cap;
    }
    int first_value = g->n_values;
    weft_gnode *n = &g->nodes[g->n_nodes++];
    memset(n, 0, sizeof *n);
    n->op_type = dup_str(op_type);
    n->name = dup_str(name);
    n->def = def;
    n->n_inputs = n_inputs;
    for (int i = 0; i < n_inputs; i++) n->inputs[i] = inputs[i];
    weft_status rc = copy_attrs(n, n_attrs, attrs);
    if (rc == WEFT_OK && (!n->op_type || !n->name)) rc = WEFT_ERR_NOMEM;
    if (rc != WEFT_OK) {
        drop_last_node(g, first_value);
        return weft_fail(rc, "%s node '%s': %s", op_type, name, rc == WEFT_ERR_NOMEM ? "out of memory" : "bad attribute");
    }
    for (int k = 0; k < n_outputs; k++) {
        char vname[160];
        if (n_outputs == 1) snprintf(vname, sizeof vname, "%.150s", name);
        else snprintf(vname, sizeof vname, "%.140s:%d", name, k);
        int v = weft_graph_new_value(g, vname, WEFT_F32, 0, NULL);
        n = &g->nodes[g->n_nodes - 1];
        if (v < 0) {
            drop_last_node(g, first_value);
            return weft_fail(WEFT_ERR_NOMEM, "out of memory adding node %s", name);
        }
        g->values[v].producer = g->n_nodes - 1;
        n->outputs[k] = v;
        n->n_outputs++;
    }
    /* An op on a value of symbolic shape is kept as given; its shapes are inferred when the
     * graph is specialized to concrete sizes (model/dynamic.c). */
    bool symbolic = false;
    for (int i = 0; i < n_inputs; i++) symbolic = symbolic || (inputs[i] >= 0 && g->values[inputs[i]].symbolic);
    if (symbolic) {
        for (int k = 0; k < n_outputs; k++) g->values[first_value + k].symbolic = true;
        for (int k = 0; k < n_outputs; k++) outputs[k] = first_value + k;
        return WEFT_OK;
    }
    rc = def->infer(g, &g->nodes[g->n_nodes - 1]);
    if (rc != WEFT_OK) {
        drop_last_node(g, first_value);
        return rc;
    }
    for (int k = 0; k < n_outputs; k++) outputs[k] = first_value + k;
    return weft_model_fold_small(g, g->n_nodes - 1);
}

/* layout=1 as layout=0 between Transposes: X and the initial states in, Y and the final
 * states out (the recurrence itself is unchanged, and Transposes of constants fold). On an
 * error every node added here is removed again. */
static weft_status rnn_batch_major(weft_graph *g, const char *op_type, const char *name, int n_inputs,
                                   const weft_value *inputs, int n_attrs, const weft_attr *attrs, int n_outputs,
                                   weft_value *outputs)
{
    if (n_inputs < 1 || inputs[0] < 0 || n_attrs > 64 || n_inputs > 8 || n_outputs > 3)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': layout=1 needs X and at most 8 inputs, 3 outputs, 64 "
                         "attributes", op_type, name);
    if (!g->values[inputs[0]].symbolic && g->values[inputs[0]].ndim != 3)
        return weft_fail(WEFT_ERR_SHAPE, "%s node '%s': with layout=1, X must be 3-D [batch, seq_len, input], got %d dims",
                         op_type, name, g->values[inputs[0]].ndim);
    int nodes0 = g->n_nodes, values0 = g->n_values;
    weft_attr a2[64];
    int n2 = 0;
    for (int i = 0; i < n_attrs; i++)
        if (!attrs[i].name || strcmp(attrs[i].name, "layout")) a2[n2++] = attrs[i];
    static const int64_t p021[3] = {1, 0, 2}, p2013[4] = {2, 0, 1, 3};
    weft_attr t3 = {.name = "perm", .kind = WEFT_ATTR_INTS, .n = 3, .ints = p021};
    weft_attr t4 = {.name = "perm", .kind = WEFT_ATTR_INTS, .n = 4, .ints = p2013};
    weft_value in[8], mid[3];
    char nm[200];
    weft_status rc = WEFT_OK;
    for (int i = 0; i < n_inputs; i++) {
        in[i] = inputs[i];
        /* X (0), initial_h (5), initial_c (6): batch-major -> sequence-major */
        if (rc == WEFT_OK && inputs[i] >= 0 && (i == 0 || i == 5 || i == 6)) {
            snprintf(nm, sizeof nm, "%.150s/layout_in%d", name, i);
            rc = weft_graph_add_op(g, "Transpose", nm, 1, &inputs[i], 1, &t3, 1, &in[i]);
        }
    }
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, op_type, name, n_inputs, in, n2, a2, n_outputs, mid);
    for (int k = 0; rc == WEFT_OK && k < n_outputs; k++) {
        snprintf(nm, sizeof nm, "%.150s/layout_out%d", name, k);
        rc = weft_graph_add_op(g, "Transpose", nm, 1, &mid[k], 1, k ? &t3 : &t4, 1, &outputs[k]);
    }
    if (rc != WEFT_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", weft_last_error());
        while (g->n_nodes > nodes0) drop_last_node(g, values0); /* the first call drops the values */
        return weft_fail(rc, "%s", msg);
    }
    return WEFT_OK;
}

weft_status weft_graph_set_output(weft_graph *g, weft_value v, const char *name)
{
    if (!g || v < 0 || v >= g->n_values) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_graph_set_output: bad value");
    if (g->n_outputs >= 64) return weft_fail(WEFT_ERR_UNSUPPORTED, "more than 64 graph outputs");
    if (name && *name) {
        char *s = dup_str(name);
        if (!s) return weft_fail(WEFT_ERR_NOMEM, "out of memory");
        free(g->values[v].name);
        g->values[v].name = s;
    }
    g->values[v].is_output = true;
    g->outputs[g->n_outputs++] = v;
    return WEFT_OK;
}

weft_status weft_graph_gemm(weft_graph *g, weft_value a, weft_value b, weft_value c, bool trans_a, bool trans_b,
                            weft_value *out)
{
    weft_attr attrs[2] = {{.name = "transA", .kind = WEFT_ATTR_INT, .i = trans_a},
                          {.name = "transB", .kind = WEFT_ATTR_INT, .i = trans_b}};
    weft_value in[3] = {a, b, c};
    return weft_graph_add_op(g, "Gemm", NULL, c >= 0 ? 3 : 2, in, 2, attrs, 1, out);
}

weft_status weft_graph_matmul(weft_graph *g, weft_value a, weft_value b, weft_value *out)
{
    weft_value in[2] = {a, b};
    return weft_graph_add_op(g, "MatMul", NULL, 2, in, 0, NULL, 1, out);
}

weft_status weft_graph_binary(weft_graph *g, const char *op_type, weft_value a, weft_value b, weft_value *out)
{
    weft_value in[2] = {a, b};
    return weft_graph_add_op(g, op_type, NULL, 2, in, 0, NULL, 1, out);
}

weft_status weft_graph_unary(weft_graph *g, const char *op_type, weft_value x, weft_value *out)
{
    return weft_graph_add_op(g, op_type, NULL, 1, &x, 0, NULL, 1, out);
}

weft_status weft_graph_conv2d(weft_graph *g, weft_value x, weft_value w, weft_value bias, int stride, int pad,
                              weft_value *out)
{
    int64_t strides[2] = {stride, stride}, pads[4] = {pad, pad, pad, pad};
    weft_attr attrs[2] = {{.name = "strides", .kind = WEFT_ATTR_INTS, .n = 2, .ints = strides},
                          {.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = pads}};
    weft_value in[3] = {x, w, bias};
    return weft_graph_add_op(g, "Conv", NULL, bias >= 0 ? 3 : 2, in, 2, attrs, 1, out);
}
