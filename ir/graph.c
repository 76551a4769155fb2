/* Graph containers: values and nodes in growable arrays, attribute copies and lookups,
 * use redirection and cloning. Building ops (shape inference through the operator registry)
 * is in ops/graph_api.c, which sits above ir/. */
#include "ir/graph.h"

#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "runtime/mem.h"

weft_dtype weft_type_dtype(weft_type t)
{
    switch (t) {
    case WEFT_TYPE_INT64: return WEFT_I64;
    case WEFT_TYPE_INT32: return WEFT_I32;
    case WEFT_TYPE_BOOL: return WEFT_BOOL;
    default: return WEFT_F32;
    }
}

bool weft_dtype_to_type(weft_dtype d, weft_type *out)
{
    if (weft_dtype_eq(d, WEFT_F32)) *out = WEFT_TYPE_FLOAT32;
    else if (weft_dtype_eq(d, WEFT_I64)) *out = WEFT_TYPE_INT64;
    else if (weft_dtype_eq(d, WEFT_I32)) *out = WEFT_TYPE_INT32;
    else if (weft_dtype_eq(d, WEFT_BOOL)) *out = WEFT_TYPE_BOOL;
    else return false;
    return true;
}

int64_t weft_gvalue_numel(const weft_gvalue *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->ndim; d++) n *= v->shape[d];
    return n;
}

size_t weft_gvalue_bytes(const weft_gvalue *v) { return (size_t)weft_gvalue_numel(v) * (size_t)weft_dtype_bytes(v->dtype); }

static const weft_attr *find_attr(const weft_gnode *n, const char *name, weft_attr_kind k)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].name, name) && n->attrs[i].kind == k) return &n->attrs[i];
    return NULL;
}

int64_t weft_gnode_attr_int(const weft_gnode *n, const char *name, int64_t dflt)
{
    const weft_attr *a = find_attr(n, name, WEFT_ATTR_INT);
    return a ? a->i : dflt;
}

double weft_gnode_attr_float(const weft_gnode *n, const char *name, double dflt)
{
    const weft_attr *a = find_attr(n, name, WEFT_ATTR_FLOAT);
    return a ? a->f : dflt;
}

int weft_gnode_attr_ints(const weft_gnode *n, const char *name, const int64_t **out)
{
    const weft_attr *a = find_attr(n, name, WEFT_ATTR_INTS);
    if (!a) return -1;
    *out = a->ints;
    return a->n;
}

int64_t weft_gvalue_int(const weft_gvalue *v, int64_t j)
{
    if (weft_dtype_eq(v->dtype, WEFT_I64)) return ((const int64_t *)v->data)[j];
    if (weft_dtype_eq(v->dtype, WEFT_I32)) return ((const int32_t *)v->data)[j];
    if (weft_dtype_eq(v->dtype, WEFT_BOOL)) return ((const uint8_t *)v->data)[j] != 0;
    return (int64_t)((const float *)v->data)[j];
}

int weft_gnode_attr_floats(const weft_gnode *n, const char *name, const float **out)
{
    const weft_attr *a = find_attr(n, name, WEFT_ATTR_FLOATS);
    if (!a) return -1;
    *out = a->floats;
    return a->n;
}

const char *weft_gnode_attr_string(const weft_gnode *n, const char *name, const char *dflt)
{
    const weft_attr *a = find_attr(n, name, WEFT_ATTR_STRING);
    return a ? a->s : dflt;
}

static char *dup_str(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = weft_malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

weft_status weft_graph_create(weft_graph **out)
{
    if (!out) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_graph_create: out is NULL");
    *out = weft_calloc(1, sizeof **out);
    return *out ? WEFT_OK : weft_fail(WEFT_ERR_NOMEM, "weft_graph_create: out of memory");
}

static void free_attrs(weft_attr *attrs, int n)
{
    for (int i = 0; i < n; i++) {
        free((void *)attrs[i].name);
        free((void *)attrs[i].ints);
        free((void *)attrs[i].floats);
        free((void *)attrs[i].s);
    }
    free(attrs);
}

void weft_graph_destroy(weft_graph *g)
{
    if (!g) return;
    for (int i = 0; i < g->n_values; i++) {
        free(g->values[i].name);
        free(g->values[i].data);
        for (int d = 0; d < WEFT_GRAPH_MAX_DIMS; d++) free(g->values[i].dim_names[d]);
    }
    for (int i = 0; i < g->n_nodes; i++) {
        free(g->nodes[i].op_type);
        free(g->nodes[i].name);
        free_attrs(g->nodes[i].attrs, g->nodes[i].n_attrs);
    }
    free(g->values);
    free(g->nodes);
    free(g);
}

int weft_graph_new_value(weft_graph *g, const char *name, weft_dtype t, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > WEFT_GRAPH_MAX_DIMS) return -1;
    if (g->n_values == g->cap_values) {
        int cap = g->cap_values ? g->cap_values * 2 : 64;
        weft_gvalue *v = weft_realloc(g->values, sizeof *v * (size_t)cap);
        if (!v) return -1;
        g->values = v;
        g->cap_values = cap;
    }
    weft_gvalue *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    char buf[32];
    if (!name || !*name) {
        snprintf(buf, sizeof buf, "v%d", g->n_values);
        name = buf;
    }
    v->name = dup_str(name);
    if (!v->name) return -1;
    v->dtype = t;
    v->ndim = ndim;
    for (int d = 0; d < ndim; d++) v->shape[d] = shape ? shape[d] : 0;
    v->producer = -1;
    return g->n_values++;
}

void weft_graph_replace_uses(weft_graph *g, int from, int to)
{
    for (int i = 0; i < g->n_nodes; i++) {
        weft_gnode *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] == from) n->inputs[k] = to;
    }
    for (int k = 0; k < g->n_outputs; k++)
        if (g->outputs[k] == from) {
            g->outputs[k] = to;
            g->values[to].is_output = true;
        }
}

int weft_graph_n_uses(const weft_graph *g, int v)
{
    int uses = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const weft_gnode *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->n_inputs; k++) uses += n->inputs[k] == v;
    }
    for (int k = 0; k < g->n_outputs; k++) uses += g->outputs[k] == v;
    return uses;
}

weft_status weft_graph_clone(const weft_graph *g, weft_graph **out)
{
    *out = NULL;
    weft_graph *c = weft_calloc(1, sizeof *c);
    if (!c) return weft_fail(WEFT_ERR_NOMEM, "graph clone: out of memory");
    *c = *g;
    c->values = weft_calloc((size_t)(g->cap_values ? g->cap_values : 1), sizeof *c->values);
    c->nodes = weft_calloc((size_t)(g->cap_nodes ? g->cap_nodes : 1), sizeof *c->nodes);
    c->n_values = c->n_nodes = 0;
    bool ok = c->values && c->nodes;
    for (int i = 0; ok && i < g->n_values; i++) {
        weft_gvalue *v = &c->values[i];
        *v = g->values[i];
        v->name = dup_str(g->values[i].name);
        v->data = NULL;
        c->n_values++;
        ok = v->name != NULL;
        for (int d = 0; d < WEFT_GRAPH_MAX_DIMS; d++) {
            v->dim_names[d] = g->values[i].dim_names[d] ? dup_str(g->values[i].dim_names[d]) : NULL;
            if (g->values[i].dim_names[d] && !v->dim_names[d]) ok = false;
        }
        if (ok && g->values[i].data) {
            size_t b = weft_gvalue_bytes(&g->values[i]);
            v->data = weft_malloc(b ? b : 1);
            ok = v->data != NULL;
            if (ok) memcpy(v->data, g->values[i].data, b);
        }
    }
    for (int i = 0; ok && i < g->n_nodes; i++) {
        weft_gnode *n = &c->nodes[i];
        const weft_gnode *s = &g->nodes[i];
        *n = *s;
        n->op_type = dup_str(s->op_type);
        n->name = dup_str(s->name);
        n->attrs = weft_calloc((size_t)(s->n_attrs ? s->n_attrs : 1), sizeof *n->attrs);
        n->n_attrs = 0;
        c->n_nodes++;
        ok = n->op_type && n->name && n->attrs;
        for (int k = 0; ok && k < s->n_attrs; k++) {
            weft_attr *a = &n->attrs[k];
            *a = s->attrs[k];
            a->name = dup_str(s->attrs[k].name);
            a->s = dup_str(s->attrs[k].s);
            a->ints = NULL;
            a->floats = NULL;
            n->n_attrs++;
            if (s->attrs[k].ints) {
                int64_t *v = weft_malloc(sizeof *v * (size_t)(a->n ? a->n : 1));
                if (v) memcpy(v, s->attrs[k].ints, sizeof *v * (size_t)a->n);
                a->ints = v;
                ok = v != NULL;
            }
            if (ok && s->attrs[k].floats) {
                float *v = weft_malloc(sizeof *v * (size_t)(a->n ? a->n : 1));
                if (v) memcpy(v, s->attrs[k].floats, sizeof *v * (size_t)a->n);
                a->floats = v;
                ok = v != NULL;
            }
            ok = ok && a->name;
        }
    }
    if (!ok) {
        weft_graph_destroy(c);
        return weft_fail(WEFT_ERR_NOMEM, "graph clone: out of memory");
    }
    *out = c;
    return WEFT_OK;
}

/* Public queries. */
int weft_graph_n_inputs(const weft_graph *g) { return g->n_inputs; }
int weft_graph_n_outputs(const weft_graph *g) { return g->n_outputs; }
weft_value weft_graph_input(const weft_graph *g, int i) { return i >= 0 && i < g->n_inputs ? g->inputs[i] : -1; }
weft_value weft_graph_output(const weft_graph *g, int i) { return i >= 0 && i < g->n_outputs ? g->outputs[i] : -1; }

const char *weft_graph_value_name(const weft_graph *g, weft_value v)
{
    return v >= 0 && v < g->n_values ? g->values[v].name : NULL;
}

weft_type weft_graph_value_type(const weft_graph *g, weft_value v)
{
    weft_type t = WEFT_TYPE_FLOAT32;
    if (v >= 0 && v < g->n_values) weft_dtype_to_type(g->values[v].dtype, &t);
    return t;
}

int weft_graph_value_shape(const weft_graph *g, weft_value v, int64_t *shape)
{
    if (v < 0 || v >= g->n_values) return -1;
    if (g->values[v].symbolic && !g->values[v].is_input) return -1; /* unknown until specialized */
    for (int d = 0; d < g->values[v].ndim; d++) shape[d] = g->values[v].shape[d];
    return g->values[v].ndim;
}

weft_value weft_graph_find_value(const weft_graph *g, const char *name)
{
    for (int v = 0; g && name && v < g->n_values; v++)
        if (!strcmp(g->values[v].name, name)) return v;
    return -1;
}

const void *weft_graph_value_data(const weft_graph *g, weft_value v)
{
    return g && v >= 0 && v < g->n_values ? g->values[v].data : NULL;
}
