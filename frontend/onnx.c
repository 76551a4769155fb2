/* ONNX import: a serialized ModelProto -> a weft graph through the public graph API.
 *
 * The walk, in the order ONNX defines names:
 *   1. read the file, unpack it (protobuf-c), check it is a model at all: a graph, an opset
 *      import for the default domain ("" or "ai.onnx") between 7 and 18;
 *   2. initializers -> weft_graph_add_constant (onnx_tensor.c decodes them);
 *   3. graph inputs that are not initializers -> weft_graph_add_input (float32, static shape);
 *   4. nodes in file order (ONNX requires topological order): Constant -> a constant,
 *      QuantizeLinear / DequantizeLinear -> float ops (onnx_qdq.c), any other op ->
 *      weft_graph_add_op with its op_type, name and attributes (after the rewrites of
 *      onnx_decompose.c); the op registry decides whether it knows the op and infers the output
 *      shapes;
 *   5. graph outputs -> weft_graph_set_output in order (a QuantizeLinear result is refused:
 *      it would be float, not int8).
 * Int8 and uint8 constants become INT32 ones; the loader's qtable remembers which they were.
 * A name table maps tensor names to weft values; a node reading a name that is not yet defined
 * is a parse error, which is also what a file truncated at a field boundary turns into.
 *
 * Errors name the file; errors from the graph API keep their message (it names the op and the
 * node) and only get the node name appended when it is missing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend/onnx.h"
#include "ir/error.h"
#include "ir/graph.h"
#include "weft/model.h"
#include "runtime/mem.h"

#define ONNX_OPSET_MIN 7
#define ONNX_OPSET_MAX 18

/* ---- tensor-name table: open addressing, keys borrowed from the message ---------------- */

typedef struct name_slot {
    const char *key; /* NULL: empty */
    weft_value v;
} name_slot;

typedef struct name_map {
    size_t n, cap; /* cap: a power of two */
    name_slot *slots;
} name_map;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static const name_slot *map_find(const name_map *m, const char *key)
{
    if (m->cap == 0) return NULL;
    for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].key == NULL) return NULL;
        if (strcmp(m->slots[i].key, key) == 0) return &m->slots[i];
    }
}

static bool map_get(const name_map *m, const char *key, weft_value *v)
{
    const name_slot *s = map_find(m, key);
    if (s != NULL) *v = s->v;
    return s != NULL;
}

/* Inserts a key that is not present. false: out of memory. */
static bool map_put(name_map *m, const char *key, weft_value v)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        name_slot *s = weft_calloc(cap, sizeof *s);
        if (s == NULL) return false;
        for (size_t i = 0; i < m->cap; i++) {
            if (m->slots[i].key == NULL) continue;
            size_t j = hash_str(m->slots[i].key) & (cap - 1);
            while (s[j].key != NULL) j = (j + 1) & (cap - 1);
            s[j] = m->slots[i];
        }
        free(m->slots);
        m->slots = s;
        m->cap = cap;
    }
    size_t i = hash_str(key) & (m->cap - 1);
    while (m->slots[i].key != NULL) i = (i + 1) & (m->cap - 1);
    m->slots[i].key = key;
    m->slots[i].v = v;
    m->n++;
    return true;
}

/* ---- the loader ------------------------------------------------------------------------ */

typedef struct loader {
    weft_onnx_ctx cx;
    weft_graph *g;
    name_map names;
    int depth; /* If branches being inlined (nested) */
    const Onnx__GraphProto *graph; /* the graph (or inlined branch) whose nodes are being added */
    int64_t opset;                 /* the default domain's opset version */
    weft_onnx_qtable qt;           /* int8 / uint8 constants and QuantizeLinear results */
} loader;

/* Nested If branches inlined at most this deep (a crafted file could nest without end). */
#define MAX_IF_DEPTH 16

static bool empty_str(const char *s) { return s == NULL || s[0] == '\0'; }

/* Defines `name` as v; a second definition of one name is a parse error. */
static weft_status define(loader *ld, const char *name, weft_value v, const char *by)
{
    weft_value old;
    if (map_get(&ld->names, name, &old))
        return weft_fail(WEFT_ERR_PARSE, "%s: tensor '%s' is defined twice (again by %s)", ld->cx.src, name, by);
    if (!map_put(&ld->names, name, v)) return weft_fail(WEFT_ERR_NOMEM, "%s: out of memory", ld->cx.src);
    return WEFT_OK;
}

/* A graph-API failure: keep its message, add where it happened when the message lacks it. */
static weft_status graph_error(loader *ld, weft_status st, const char *where, const char *must_name)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", weft_last_error());
    if (must_name != NULL && must_name[0] != '\0' && strstr(msg, must_name) != NULL) return st;
    return weft_fail(st, "%s (%s, in %s)", msg[0] ? msg : weft_status_name(st), where, ld->cx.src);
}

static weft_status check_opsets(loader *ld, const Onnx__ModelProto *m)
{
    if (m->n_opset_import == 0 || m->opset_import == NULL)
        return weft_fail(WEFT_ERR_PARSE, "%s: the model has no opset_import (truncated or not an ONNX model?)",
                         ld->cx.src);
    bool found = false;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        if (o == NULL) continue;
        const char *dom = o->domain ? o->domain : "";
        if (dom[0] != '\0' && strcmp(dom, "ai.onnx") != 0) continue; /* unused is harmless; nodes are checked */
        if (!o->has_version)
            return weft_fail(WEFT_ERR_PARSE, "%s: the opset import for the default domain has no version",
                             ld->cx.src);
        if (o->version < ONNX_OPSET_MIN || o->version > ONNX_OPSET_MAX)
            return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: opset version %lld is not supported (supported: %d to %d)",
                             ld->cx.src, (long long)o->version, ONNX_OPSET_MIN, ONNX_OPSET_MAX);
        if (!found || o->version > ld->opset) ld->opset = o->version;
        found = true;
    }
    if (!found)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: the model imports no opset of the default domain (ai.onnx)",
                         ld->cx.src);
    return WEFT_OK;
}

/* Adds a decoded tensor as a constant named `name` and defines it; an int8 / uint8 one is
 * recorded in the qtable. gp: the graph whose nodes read it (for a type error that names the
 * QuantizeLinear / DequantizeLinear node reading it). */
static weft_status add_tensor_constant(loader *ld, const Onnx__GraphProto *gp, const Onnx__TensorProto *t,
                                       const char *name, const char *what)
{
    weft_onnx_tensor dt;
    weft_status st = weft_onnx_tensor_decode(&ld->cx, t, what, &dt);
    if (st == WEFT_ERR_UNSUPPORTED && t->has_data_type) {
        weft_status qst = weft_onnx_qdq_type_error(&ld->cx, gp, name, t->data_type);
        if (qst != WEFT_OK) return qst;
    }
    if (st != WEFT_OK) return st;
    weft_value v;
    st = weft_graph_add_constant(ld->g, name, dt.type, dt.ndim, dt.shape, dt.data, &v);
    weft_onnx_tensor_release(&dt);
    if (st != WEFT_OK) return graph_error(ld, st, what, NULL);
    weft_onnx_qkind k = dt.onnx_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8    ? WEFT_ONNX_Q_INT8
                        : dt.onnx_type == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 ? WEFT_ONNX_Q_UINT8
                                                                               : WEFT_ONNX_Q_NONE;
    if (k != WEFT_ONNX_Q_NONE && !weft_onnx_qkind_set(&ld->qt, v, k))
        return weft_fail(WEFT_ERR_NOMEM, "%s: out of memory", ld->cx.src);
    return define(ld, name, v, what);
}

static weft_status add_initializers(loader *ld, const Onnx__GraphProto *gp)
{
    if (gp->n_sparse_initializer > 0)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: sparse initializers are not supported", ld->cx.src);
    char what[320];
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *t = gp->initializer[i];
        if (t == NULL || empty_str(t->name))
            return weft_fail(WEFT_ERR_PARSE, "%s: initializer %zu has no name", ld->cx.src, i);
        snprintf(what, sizeof what, "initializer '%s'", t->name);
        weft_status st = add_tensor_constant(ld, gp, t, t->name, what);
        if (st != WEFT_OK) return st;
    }
    return WEFT_OK;
}

static weft_status add_inputs(loader *ld, const Onnx__GraphProto *gp)
{
    const char *src = ld->cx.src;
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (vi == NULL || empty_str(vi->name))
            return weft_fail(WEFT_ERR_PARSE, "%s: graph input %zu has no name", src, i);
        const char *name = vi->name;
        weft_value v;
        if (map_get(&ld->names, name, &v)) continue; /* an initializer listed as an input (IR < 4) */
        const Onnx__TypeProto *tp = vi->type;
        if (tp == NULL || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || tp->tensor_type == NULL)
            return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: input '%s' is not a tensor (or has no type)", src, name);
        const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
        if (!tt->has_elem_type)
            return weft_fail(WEFT_ERR_PARSE, "%s: input '%s' has no element type", src, name);
        weft_type in_type; /* token ids and masks come in as INT64 */
        if (!weft_onnx_dtype_to_type(tt->elem_type, &in_type))
            return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: input '%s' has element type %s (%d); inputs must be FLOAT, "
                             "INT64, INT32 or BOOL", src, name, weft_onnx_dtype_name(tt->elem_type), (int)tt->elem_type);
        if (tt->shape == NULL)
            return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: input '%s' has no shape (unknown rank)", src, name);
        const Onnx__TensorShapeProto *sh = tt->shape;
        if (sh->n_dim > WEFT_ONNX_MAX_DIMS)
            return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: input '%s' has %zu dimensions; at most %d are supported", src,
                             name, sh->n_dim, WEFT_ONNX_MAX_DIMS);
        int64_t shape[WEFT_ONNX_MAX_DIMS], sized[WEFT_ONNX_MAX_DIMS];
        const char *dim_names[WEFT_ONNX_MAX_DIMS] = {0};
        bool symbolic = false;
        for (size_t d = 0; d < sh->n_dim; d++) {
            const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
            if (dim != NULL && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param &&
                *dim->dim_param) {
                /* a named dimension of unknown size: compiled per concrete size (model/dynamic.c) */
                dim_names[d] = dim->dim_param;
                shape[d] = -1;
                sized[d] = 1;
                symbolic = true;
                continue;
            }
            if (dim == NULL || dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
                return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: input '%s' has an unknown dimension at axis %zu (neither a size "
                                 "nor a name)", src, name, d);
            shape[d] = sized[d] = dim->dim_value;
        }
        char what[320];
        snprintf(what, sizeof what, "input '%s'", name);
        int64_t numel;
        weft_status st = weft_onnx_check_shape(&ld->cx, what, sh->n_dim, sized, &numel);
        if (st != WEFT_OK) return st;
        st = symbolic ? weft_graph_add_input_symbolic(ld->g, name, in_type, (int)sh->n_dim, shape, dim_names, &v)
                      : weft_graph_add_input(ld->g, name, in_type, (int)sh->n_dim, shape, &v);
        if (st != WEFT_OK) return graph_error(ld, st, what, NULL);
        st = define(ld, name, v, what);
        if (st != WEFT_OK) return st;
    }
    return WEFT_OK;
}

/* A Constant node: `value` (a tensor) or value_float(s) / value_int(s). */
static weft_status add_constant_node(loader *ld, const Onnx__NodeProto *n, const char *nname)
{
    const char *src = ld->cx.src;
    if (n->n_output != 1 || empty_str(n->output[0]))
        return weft_fail(WEFT_ERR_PARSE, "%s: node '%s' (Constant) must have exactly one named output", src, nname);
    if (n->n_attribute != 1 || n->attribute[0] == NULL || empty_str(n->attribute[0]->name))
        return weft_fail(WEFT_ERR_PARSE, "%s: node '%s' (Constant) must have exactly one value attribute", src, nname);
    const Onnx__AttributeProto *a = n->attribute[0];
    const char *out = n->output[0];
    char what[320];
    snprintf(what, sizeof what, "node '%s' (Constant)", nname);
    weft_value v;
    weft_status st;
    if (strcmp(a->name, "value") == 0) {
        if (a->t == NULL) return weft_fail(WEFT_ERR_PARSE, "%s: %s: attribute 'value' has no tensor", src, what);
        return add_tensor_constant(ld, ld->graph, a->t, out, what);
    } else if (strcmp(a->name, "value_float") == 0) {
        float f = a->f;
        st = weft_graph_add_constant(ld->g, out, WEFT_TYPE_FLOAT32, 0, (int64_t[]){1}, &f, &v);
    } else if (strcmp(a->name, "value_int") == 0) {
        int64_t i = a->i;
        st = weft_graph_add_constant(ld->g, out, WEFT_TYPE_INT64, 0, (int64_t[]){1}, &i, &v);
    } else if (strcmp(a->name, "value_floats") == 0) {
        float dummy = 0;
        st = weft_graph_add_constant(ld->g, out, WEFT_TYPE_FLOAT32, 1, (int64_t[]){(int64_t)a->n_floats},
                                     a->n_floats ? (const void *)a->floats : &dummy, &v);
    } else if (strcmp(a->name, "value_ints") == 0) {
        int64_t dummy = 0;
        st = weft_graph_add_constant(ld->g, out, WEFT_TYPE_INT64, 1, (int64_t[]){(int64_t)a->n_ints},
                                     a->n_ints ? (const void *)a->ints : &dummy, &v);
    } else {
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: %s: attribute '%s' is not supported (use value, value_float(s) "
                         "or value_int(s))", src, what, a->name);
    }
    if (st != WEFT_OK) return graph_error(ld, st, what, NULL);
    return define(ld, out, v, what);
}

static const char *attr_type_name(int t)
{
    switch (t) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "TENSOR";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "GRAPH";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: return "SPARSE_TENSOR";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return "TYPE_PROTO";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return "STRINGS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return "TENSORS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "GRAPHS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: return "SPARSE_TENSORS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: return "TYPE_PROTOS";
    default: return "UNDEFINED";
    }
}

/* The attribute type; for old files without `type`, the field that is set. */
static int attr_type(const Onnx__AttributeProto *a)
{
    if (a->has_type) return (int)a->type;
    if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (a->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

/* A TENSOR attribute holding one float32 or int64 element (ConstantOfShape's value) becomes a
 * one-element FLOATS or INTS attribute; its storage goes to *owned. Other tensors are refused. */
static weft_status tensor_attr(loader *ld, const Onnx__NodeProto *n, const char *nname, const Onnx__AttributeProto *a,
                               weft_attr *w, char **owned)
{
    const char *src = ld->cx.src;
    if (a->t == NULL)
        return weft_fail(WEFT_ERR_PARSE, "%s: node '%s' (%s): attribute '%s' has no tensor", src, nname, n->op_type,
                         a->name);
    char what[320];
    snprintf(what, sizeof what, "node '%s' (%s): attribute '%s'", nname, n->op_type, a->name);
    weft_onnx_tensor dt;
    weft_status st = weft_onnx_tensor_decode(&ld->cx, a->t, what, &dt);
    if (st != WEFT_OK) return st;
    if (dt.numel != 1 || (dt.type != WEFT_TYPE_FLOAT32 && dt.type != WEFT_TYPE_INT64)) {
        st = weft_fail(WEFT_ERR_UNSUPPORTED, "%s: %s: a tensor attribute must hold one float32 or int64 element "
                       "(got %lld elements of %s)", src, what, (long long)dt.numel,
                       weft_onnx_dtype_name(a->t->has_data_type ? a->t->data_type : 0));
        weft_onnx_tensor_release(&dt);
        return st;
    }
    *owned = weft_malloc(sizeof(int64_t));
    if (*owned == NULL) {
        weft_onnx_tensor_release(&dt);
        return weft_fail(WEFT_ERR_NOMEM, "%s: out of memory", src);
    }
    memcpy(*owned, dt.data, dt.type == WEFT_TYPE_INT64 ? sizeof(int64_t) : sizeof(float));
    w->n = 1;
    if (dt.type == WEFT_TYPE_INT64) w->kind = WEFT_ATTR_INTS, w->ints = (const int64_t *)(void *)*owned;
    else w->kind = WEFT_ATTR_FLOATS, w->floats = (const float *)(void *)*owned;
    weft_onnx_tensor_release(&dt);
    return WEFT_OK;
}

/* Converts a node's attributes; strings are copied (NUL-terminated) into *strs. */
static weft_status convert_attrs(loader *ld, const Onnx__NodeProto *n, const char *nname, weft_attr *attrs,
                                 char **strs)
{
    const char *src = ld->cx.src;
    for (size_t i = 0; i < n->n_attribute; i++) {
        const Onnx__AttributeProto *a = n->attribute[i];
        if (a == NULL || empty_str(a->name))
            return weft_fail(WEFT_ERR_PARSE, "%s: node '%s' (%s): attribute %zu has no name", src, nname, n->op_type,
                             i);
        if (!empty_str(a->ref_attr_name))
            return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: node '%s' (%s): attribute '%s' refers to a function "
                             "attribute", src, nname, n->op_type, a->name);
        weft_attr *w = &attrs[i];
        memset(w, 0, sizeof *w);
        w->name = a->name;
        int t = attr_type(a);
        switch (t) {
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: w->kind = WEFT_ATTR_INT, w->i = a->i; break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: w->kind = WEFT_ATTR_FLOAT, w->f = a->f; break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
            bool ints = t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
            size_t cnt = ints ? a->n_ints : a->n_floats;
            if (cnt > 1u << 20)
                return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: node '%s' (%s): attribute '%s' has %zu elements", src,
                                 nname, n->op_type, a->name, cnt);
            w->kind = ints ? WEFT_ATTR_INTS : WEFT_ATTR_FLOATS;
            w->n = (int)cnt;
            w->ints = ints ? a->ints : NULL;
            w->floats = ints ? NULL : a->floats;
            break;
        }
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
            size_t len = a->s.len;
            char *s = weft_malloc(len + 1);
            if (s == NULL) return weft_fail(WEFT_ERR_NOMEM, "%s: out of memory", src);
            if (len) memcpy(s, a->s.data, len);
            s[len] = '\0';
            strs[i] = s;
            w->kind = WEFT_ATTR_STRING;
            w->s = s;
            break;
        }
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
            weft_status st = tensor_attr(ld, n, nname, a, w, &strs[i]);
            if (st != WEFT_OK) return st;
            break;
        }
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
            /* a list of strings becomes one string, comma-separated (GRU/LSTM/RNN activations) */
            size_t len = 1;
            for (size_t k = 0; k < a->n_strings; k++) len += a->strings[k].len + 1;
            char *s = weft_malloc(len);
            if (s == NULL) return weft_fail(WEFT_ERR_NOMEM, "%s: out of memory", src);
            size_t at = 0;
            for (size_t k = 0; k < a->n_strings; k++) {
                if (k) s[at++] = ',';
                if (a->strings[k].len) memcpy(s + at, a->strings[k].data, a->strings[k].len);
                at += a->strings[k].len;
            }
            s[at] = '\0';
            strs[i] = s;
            w->kind = WEFT_ATTR_STRING;
            w->s = s;
            break;
        }
        default:
            return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: node '%s' (%s): attribute '%s' of type %s is not supported",
                             src, nname, n->op_type, a->name, attr_type_name(t));
        }
    }
    return WEFT_OK;
}

static weft_status add_node(loader *ld, const Onnx__NodeProto *n, size_t index);

/* If whose condition is known at load time (PyTorch writes one around shape tests, e.g. the
 * squeeze in F.local_response_norm): the chosen branch's initializers and nodes are added to the
 * graph in place of the node, reading outer-scope names as ONNX allows, and the If's outputs
 * name the branch's outputs. A condition computed at run time is refused. */
static weft_status inline_if(loader *ld, const Onnx__NodeProto *n, const char *nname, size_t n_out)
{
    const char *src = ld->cx.src;
    weft_value c = -1;
    if (n->n_input != 1 || empty_str(n->input[0]) || !map_get(&ld->names, n->input[0], &c))
        return weft_fail(WEFT_ERR_PARSE, "%s: If node '%s' has %zu inputs, expected 1 (cond)", src, nname, n->n_input);
    int64_t shape[8];
    int nd = weft_graph_value_shape(ld->g, c, shape);
    const void *data = weft_graph_value_data(ld->g, c);
    int64_t numel = 1;
    for (int d = 0; d < nd; d++) numel *= shape[d];
    if (data == NULL)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: If node '%s': cond '%s' is computed at run time (or from a "
                         "symbolic input dimension); only a condition known at load time (shape arithmetic on "
                         "fixed shapes) is supported", src, nname, n->input[0]);
    if (weft_graph_value_type(ld->g, c) != WEFT_TYPE_BOOL || nd < 0 || numel != 1)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s: If node '%s': cond '%s' is not one bool", src, nname, n->input[0]);
    const char *want = *(const uint8_t *)data ? "then_branch" : "else_branch";
    const Onnx__GraphProto *b = NULL;
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i] != NULL && n->attribute[i]->name != NULL && strcmp(n->attribute[i]->name, want) == 0)
            b = n->attribute[i]->g;
    if (b == NULL) return weft_fail(WEFT_ERR_PARSE, "%s: If node '%s' has no %s graph", src, nname, want);
    if ((b->n_initializer && b->initializer == NULL) || (b->n_output && b->output == NULL) ||
        (b->n_node && b->node == NULL))
        return weft_fail(WEFT_ERR_PARSE, "%s: If node '%s': malformed %s", src, nname, want);
    if (b->n_output != n_out)
        return weft_fail(WEFT_ERR_PARSE, "%s: If node '%s': %s has %zu outputs, the node %zu", src, nname, want,
                         b->n_output, n_out);
    if (ld->depth >= MAX_IF_DEPTH)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: If node '%s': If branches nested more than %d deep", src, nname,
                         MAX_IF_DEPTH);
    ld->depth++;
    weft_status st = add_initializers(ld, b);
    const Onnx__GraphProto *outer = ld->graph;
    ld->graph = b;
    for (size_t i = 0; st == WEFT_OK && i < b->n_node; i++) st = add_node(ld, b->node[i], i);
    ld->graph = outer;
    ld->depth--;
    char what[320];
    snprintf(what, sizeof what, "node '%s' (If)", nname);
    for (size_t i = 0; st == WEFT_OK && i < n_out; i++) {
        weft_value v;
        const char *bo = b->output[i] ? b->output[i]->name : NULL;
        if (empty_str(bo) || !map_get(&ld->names, bo, &v))
            return weft_fail(WEFT_ERR_PARSE, "%s: If node '%s': %s output %zu '%s' is not produced", src, nname, want,
                             i, bo ? bo : "");
        if (!empty_str(n->output[i])) st = define(ld, n->output[i], v, what);
    }
    return st;
}

/* A Cast to float64 (weft has no float64) whose every reader is IsInf, IsNaN or a Cast to
 * another type, and which is no graph output: PyTorch's torch.isinf / isnan export
 * Cast(x, DOUBLE) -> IsInf. The float32 value gives those readers the same results, so the
 * Cast becomes an Identity. Other float64 Casts are refused by the Cast op. */
static bool cast_to_double(const Onnx__NodeProto *n)
{
    bool to_double = false;
    for (size_t i = 0; n->attribute && i < n->n_attribute; i++)
        if (n->attribute[i] && n->attribute[i]->name && !strcmp(n->attribute[i]->name, "to"))
            to_double = n->attribute[i]->i == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
    return to_double;
}

static bool exact_double_cast(const loader *ld, const Onnx__NodeProto *n)
{
    if (strcmp(n->op_type, "Cast") || n->n_output != 1 || empty_str(n->output[0]) || !ld->graph || !cast_to_double(n))
        return false;
    const Onnx__GraphProto *gp = ld->graph;
    const char *v = n->output[0];
    if ((gp->n_output && !gp->output) || (gp->n_node && !gp->node)) return false;
    for (size_t i = 0; i < gp->n_output; i++)
        if (gp->output[i] && gp->output[i]->name && !strcmp(gp->output[i]->name, v)) return false;
    bool read = false;
    for (size_t k = 0; k < gp->n_node; k++) {
        const Onnx__NodeProto *u = gp->node[k];
        for (size_t i = 0; u && u->input && i < u->n_input; i++) {
            if (!u->input[i] || strcmp(u->input[i], v)) continue;
            if (!u->op_type || (strcmp(u->op_type, "IsInf") && strcmp(u->op_type, "IsNaN") && strcmp(u->op_type, "Cast")))
                return false;
            if (!strcmp(u->op_type, "Cast") && cast_to_double(u)) return false; /* double again: no */
            read = true;
        }
    }
    return read;
}

static weft_status add_node(loader *ld, const Onnx__NodeProto *n, size_t index)
{
    const char *src = ld->cx.src;
    if (n == NULL || empty_str(n->op_type))
        return weft_fail(WEFT_ERR_PARSE, "%s: node %zu has no op_type", src, index);
    char made[128];
    const char *nname = n->name;
    if (empty_str(nname)) {
        snprintf(made, sizeof made, "%.100s_%zu", n->op_type, index);
        nname = made;
    }
    if (!empty_str(n->domain) && strcmp(n->domain, "ai.onnx") != 0)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: node '%s' (%s) is in domain '%s'; only the default ONNX domain "
                         "is supported", src, nname, n->op_type, n->domain);
    if (n->n_input > 0 && n->input == NULL)
        return weft_fail(WEFT_ERR_PARSE, "%s: node '%s': inputs missing", src, nname);
    if (n->n_output > 0 && n->output == NULL)
        return weft_fail(WEFT_ERR_PARSE, "%s: node '%s': outputs missing", src, nname);
    if (n->n_input > 1024 || n->n_output > 1024 || n->n_attribute > 1024)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: node '%s' (%s) has too many inputs, outputs or attributes", src,
                         nname, n->op_type);
    /* every input must be defined before the node reads it */
    for (size_t i = 0; i < n->n_input; i++) {
        weft_value v;
        if (n->input[i] != NULL && n->input[i][0] != '\0' && !map_get(&ld->names, n->input[i], &v))
            return weft_fail(WEFT_ERR_PARSE, "%s: node '%s' (%s) reads unknown tensor '%s'", src, nname, n->op_type,
                             n->input[i]);
    }
    if (strcmp(n->op_type, "Constant") == 0) return add_constant_node(ld, n, nname);

    /* trailing omitted outputs ("") are dropped; the op must produce at least one */
    size_t n_out = n->n_output;
    while (n_out > 0 && empty_str(n->output[n_out - 1])) n_out--;
    if (n_out == 0) return weft_fail(WEFT_ERR_PARSE, "%s: node '%s' (%s) has no outputs", src, nname, n->op_type);
    if (strcmp(n->op_type, "If") == 0) return inline_if(ld, n, nname, n_out);

    weft_status st = WEFT_OK;
    weft_value *ins = weft_malloc((n->n_input + 1) * sizeof *ins);
    weft_value *outs = weft_malloc(n_out * sizeof *outs);
    weft_attr *attrs = weft_calloc(n->n_attribute + 1, sizeof *attrs);
    char **strs = weft_calloc(n->n_attribute + 1, sizeof *strs);
    if (ins == NULL || outs == NULL || attrs == NULL || strs == NULL) {
        st = weft_fail(WEFT_ERR_NOMEM, "%s: out of memory", src);
        goto done;
    }
    for (size_t i = 0; i < n->n_input; i++) {
        ins[i] = -1;
        if (!empty_str(n->input[i])) map_get(&ld->names, n->input[i], &ins[i]);
    }
    for (size_t i = 0; i < n_out; i++) outs[i] = -1;
    st = convert_attrs(ld, n, nname, attrs, strs);
    if (st != WEFT_OK) goto done;
    int n_attrs = (int)n->n_attribute;
    /* RoiAlign before opset 16 had no coordinate_transformation_mode: it behaved as
     * "output_half_pixel", which is no longer the default (half_pixel). attrs has a spare slot. */
    if (strcmp(n->op_type, "RoiAlign") == 0 && ld->opset < 16 &&
        !weft_onnx_find_attr(n_attrs, attrs, "coordinate_transformation_mode", WEFT_ATTR_STRING))
        attrs[n_attrs++] = (weft_attr){.name = "coordinate_transformation_mode", .kind = WEFT_ATTR_STRING,
                                       .s = "output_half_pixel"};
    bool rewritten = false;
    if (exact_double_cast(ld, n)) {
        st = weft_graph_add_op(ld->g, "Identity", nname, 1, ins, 0, NULL, 1, outs);
        rewritten = true;
    }
    if (st == WEFT_OK && !rewritten)
        st = weft_onnx_qdq(ld->g, &ld->qt, n->op_type, nname, (int)n->n_input, ins, (const char *const *)n->input,
                           n_attrs, attrs, (int)n_out, outs, &rewritten);
    if (st == WEFT_OK && !rewritten)
        st = weft_onnx_decompose(ld->g, n->op_type, nname, (int)n->n_input, ins, n_attrs, attrs, (int)n_out, outs,
                                 &rewritten);
    if (st == WEFT_OK && !rewritten)
        st = weft_graph_add_op(ld->g, n->op_type, nname, (int)n->n_input, ins, n_attrs, attrs, (int)n_out, outs);
    if (st != WEFT_OK) {
        char where[320];
        snprintf(where, sizeof where, "ONNX node '%s' (%s)", nname, n->op_type);
        st = graph_error(ld, st, where, nname);
        goto done;
    }
    char what[320];
    snprintf(what, sizeof what, "node '%s' (%s)", nname, n->op_type);
    for (size_t i = 0; i < n_out; i++) {
        if (empty_str(n->output[i])) continue; /* an omitted optional output */
        st = define(ld, n->output[i], outs[i], what);
        if (st != WEFT_OK) goto done;
    }
done:
    if (strs != NULL)
        for (size_t i = 0; i < n->n_attribute; i++) free(strs[i]);
    free(strs);
    free(attrs);
    free(outs);
    free(ins);
    return st;
}

static weft_status set_outputs(loader *ld, const Onnx__GraphProto *gp)
{
    if (gp->n_output == 0)
        return weft_fail(WEFT_ERR_PARSE, "%s: the graph has no outputs (truncated file?)", ld->cx.src);
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        if (vi == NULL || empty_str(vi->name))
            return weft_fail(WEFT_ERR_PARSE, "%s: graph output %zu has no name", ld->cx.src, i);
        weft_value v;
        if (!map_get(&ld->names, vi->name, &v))
            return weft_fail(WEFT_ERR_PARSE, "%s: graph output '%s' is not produced by any node, input or initializer",
                             ld->cx.src, vi->name);
        if (weft_onnx_qkind_of(&ld->qt, v) == WEFT_ONNX_Q_RESULT)
            return weft_onnx_qdq_output_error(&ld->cx, gp, vi->name);
        weft_status st = weft_graph_set_output(ld->g, v, vi->name);
        if (st != WEFT_OK) {
            char what[320];
            snprintf(what, sizeof what, "graph output '%s'", vi->name);
            return graph_error(ld, st, what, NULL);
        }
    }
    return WEFT_OK;
}

static weft_status load_model(loader *ld, const Onnx__ModelProto *m)
{
    const char *src = ld->cx.src;
    if (m->graph == NULL)
        return weft_fail(WEFT_ERR_PARSE, "%s: not an ONNX model: no graph (empty, truncated or another kind of file)",
                         src);
    weft_status st = check_opsets(ld, m);
    if (st != WEFT_OK) return st;
    const Onnx__GraphProto *gp = m->graph;
    if ((gp->n_initializer && gp->initializer == NULL) || (gp->n_input && gp->input == NULL) ||
        (gp->n_output && gp->output == NULL) || (gp->n_node && gp->node == NULL))
        return weft_fail(WEFT_ERR_PARSE, "%s: malformed graph", src);
    st = weft_graph_create(&ld->g);
    if (st != WEFT_OK) return st;
    ld->g->rewrite = weft_onnx_decompose; /* replayed on nodes kept as given (symbolic shapes) */
    st = add_initializers(ld, gp);
    if (st != WEFT_OK) return st;
    st = add_inputs(ld, gp);
    if (st != WEFT_OK) return st;
    ld->graph = gp;
    for (size_t i = 0; i < gp->n_node; i++) {
        st = add_node(ld, gp->node[i], i);
        if (st != WEFT_OK) return st;
    }
    return set_outputs(ld, gp);
}

/* protobuf-c allocates the decoded message through weft_malloc, so allocation failure there is
 * tested like any other, and reported as such rather than as a corrupt file. */
static void *pb_alloc(void *ud, size_t n)
{
    void *p = weft_malloc(n);
    if (!p) *(bool *)ud = true;
    return p;
}

static void pb_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

static weft_status load(const void *data, size_t len, const char *src, const char *model_dir, weft_graph **out)
{
    if (len == 0) return weft_fail(WEFT_ERR_PARSE, "%s: empty file: not an ONNX model", src);
    bool oom = false;
    ProtobufCAllocator pa = {.alloc = pb_alloc, .free = pb_free, .allocator_data = &oom};
    Onnx__ModelProto *m = onnx__model_proto__unpack(&pa, len, data);
    if (m == NULL && oom) return weft_fail(WEFT_ERR_NOMEM, "%s: out of memory decoding the model (%zu bytes)", src, len);
    if (m == NULL)
        return weft_fail(WEFT_ERR_PARSE, "%s: not a valid ONNX model (protobuf decoding failed: %zu bytes, corrupt, "
                         "truncated or another kind of file)", src, len);
    loader ld = {.cx = {.src = src, .model_dir = model_dir}};
    weft_status st = load_model(&ld, m);
    onnx__model_proto__free_unpacked(m, &pa);
    free(ld.names.slots);
    weft_onnx_qtable_free(&ld.qt);
    if (st != WEFT_OK) {
        weft_graph_destroy(ld.g);
        return st;
    }
    *out = ld.g;
    return WEFT_OK;
}

weft_status weft_onnx_load_buffer(const void *data, size_t len, const char *model_dir, weft_graph **out)
{
    if (out == NULL) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_onnx_load_buffer: out is NULL");
    *out = NULL;
    if (data == NULL && len > 0) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_onnx_load_buffer: data is NULL");
    return load(data, len, "<buffer>", model_dir, out);
}

weft_status weft_onnx_load(const char *path, weft_graph **out)
{
    if (out == NULL) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_onnx_load: out is NULL");
    *out = NULL;
    if (path == NULL || path[0] == '\0') return weft_fail(WEFT_ERR_INVALID_ARG, "weft_onnx_load: no path");
    FILE *f = fopen(path, "rb");
    if (f == NULL) return weft_fail(WEFT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return weft_fail(WEFT_ERR_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)sb.st_size > (uint64_t)INT32_MAX) { /* protobuf's own limit; big models use external data */
        fclose(f);
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: %lld bytes: ONNX files over 2 GiB must keep weights in external "
                         "data", path, (long long)sb.st_size);
    }
    size_t size = (size_t)sb.st_size;
    void *buf = weft_malloc(size ? size : 1);
    if (buf == NULL) {
        fclose(f);
        return weft_fail(WEFT_ERR_NOMEM, "%s: out of memory reading %zu bytes", path, size);
    }
    size_t got = fread(buf, 1, size, f);
    bool err = ferror(f) != 0;
    fclose(f);
    if (err || got != size) {
        free(buf);
        return weft_fail(WEFT_ERR_IO, "%s: read %zu of %zu bytes", path, got, size);
    }
    /* the model folder: external data paths are relative to it */
    const char *slash = strrchr(path, '/');
    char *dir = NULL;
    if (slash == NULL) {
        dir = weft_strdup(".");
    } else {
        size_t dl = slash == path ? 1 : (size_t)(slash - path);
        dir = weft_malloc(dl + 1);
        if (dir != NULL) {
            memcpy(dir, path, dl);
            dir[dl] = '\0';
        }
    }
    weft_status st = dir == NULL ? weft_fail(WEFT_ERR_NOMEM, "%s: out of memory", path)
                                 : load(buf, size, path, dir, out);
    free(dir);
    free(buf);
    return st;
}
