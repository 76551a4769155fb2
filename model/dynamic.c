/* Symbolic dimensions: graphs whose inputs have named dimensions of unknown size (ONNX
 * dim_param), specialized to concrete sizes, and models compiled per concrete shape.
 *
 * A symbolic graph keeps every op on a value of unknown shape as it was given (graph_api.c:
 * no shape inference, no folding). Specializing replays the graph into a new one: inputs at
 * the concrete shapes, constants copied, live nodes re-added in order through
 * weft_graph_add_op, so shapes are inferred and shape arithmetic (Shape -> Gather -> Concat
 * -> Reshape) folds exactly as for a graph built at those sizes. A node first goes through the
 * importer's rewrite when the graph has one (g->rewrite: the ONNX frontend's 1-D and 3-D conv
 * lifts and other rewrites need the concrete shapes a symbolic input hid at load).
 *
 * Resolving sizes: names bound by the caller first; then, repeatedly, an input with exactly
 * one unresolved symbol (appearing once) gets it from its byte size, which must be a whole
 * multiple of the rest; finally every input's byte size must be its shape's.
 *
 * A symbolic model (src != NULL) has no kernels: weft_model_instance finds the static model
 * of a set of input shapes in its cache or compiles it (make, under m->cache_lock, so two threads
 * asking for a new shape compile it once). Instances live until the model is destroyed and
 * share the model's thread pool (and its pool_lock: one run at a time uses it).
 * Output info of a symbolic model comes from two probe specializations with every symbol at
 * distinct primes: a dimension that equals a symbol's value in both is that symbol, one that
 * changes otherwise is -1 with no name, one that stays is static.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "model/model_internal.h"
#include "runtime/mem.h"

#define MAX_SYMBOLS 16

typedef struct symtab {
    int n;
    const char *name[MAX_SYMBOLS];
    int64_t value[MAX_SYMBOLS]; /* 0: unresolved */
    int source[MAX_SYMBOLS];    /* input that resolved it, -1 when bound by name */
} symtab;

static int sym_find(const symtab *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->name[i], name)) return i;
    return -1;
}

weft_status weft_model_resolve_shapes(const weft_graph *g, int n_dims, const char *const *dim_names,
                                      const int64_t *dim_values, const size_t *input_bytes,
                                      int64_t (*shapes)[WEFT_GRAPH_MAX_DIMS])
{
    symtab t = {0};
    for (int i = 0; i < g->n_inputs; i++) {
        const weft_gvalue *v = &g->values[g->inputs[i]];
        for (int d = 0; d < v->ndim; d++)
            if (v->dim_names[d] && sym_find(&t, v->dim_names[d]) < 0) {
                if (t.n == MAX_SYMBOLS) return weft_fail(WEFT_ERR_UNSUPPORTED, "more than %d symbolic dimensions", MAX_SYMBOLS);
                t.source[t.n] = -1;
                t.name[t.n++] = v->dim_names[d];
            }
    }
    if (n_dims && (!dim_names || !dim_values)) return weft_fail(WEFT_ERR_INVALID_ARG, "NULL dimension bindings");
    for (int k = 0; k < n_dims; k++) {
        int s = dim_names[k] ? sym_find(&t, dim_names[k]) : -1;
        if (s < 0)
            return weft_fail(WEFT_ERR_INVALID_ARG, "no input has a dimension named '%s'", dim_names[k] ? dim_names[k] : "(null)");
        if (dim_values[k] < 1)
            return weft_fail(WEFT_ERR_INVALID_ARG, "dimension '%s' = %lld (must be >= 1)", dim_names[k], (long long)dim_values[k]);
        t.value[s] = dim_values[k];
    }
    for (bool progress = true; progress && input_bytes;) {
        progress = false;
        for (int i = 0; i < g->n_inputs; i++) {
            const weft_gvalue *v = &g->values[g->inputs[i]];
            int open = -1, n_open = 0;
            size_t known = weft_gvalue_bytes(&(weft_gvalue){.dtype = v->dtype, .ndim = 0});
            for (int d = 0; d < v->ndim; d++) {
                int s = v->dim_names[d] ? sym_find(&t, v->dim_names[d]) : -1;
                if (s >= 0 && !t.value[s]) {
                    n_open++;
                    open = s;
                } else known *= (size_t)(s >= 0 ? t.value[s] : v->shape[d]);
            }
            if (n_open != 1) continue;
            if (known == 0 || input_bytes[i] == 0 || input_bytes[i] % known)
                return weft_fail(WEFT_ERR_SHAPE, "input '%s': %zu bytes is not a whole number of %zu-byte slices along "
                                 "dimension '%s'", v->name, input_bytes[i], known, t.name[open]);
            t.value[open] = (int64_t)(input_bytes[i] / known);
            t.source[open] = i;
            progress = true;
        }
    }
    for (int s = 0; s < t.n; s++)
        if (!t.value[s])
            return weft_fail(WEFT_ERR_SHAPE, "the size of dimension '%s' is unknown: bind it by name "
                             "(weft_context_set_dim, or --dim NAME=SIZE on the command line) or give an input "
                             "where it is the only symbolic dimension", t.name[s]);
    for (int i = 0; i < g->n_inputs; i++) {
        const weft_gvalue *v = &g->values[g->inputs[i]];
        weft_type ty = WEFT_TYPE_FLOAT32;
        weft_dtype_to_type(v->dtype, &ty);
        for (int d = 0; d < v->ndim; d++) shapes[i][d] = v->dim_names[d] ? t.value[sym_find(&t, v->dim_names[d])] : v->shape[d];
        size_t want = weft_model_tensor_bytes(ty, v->ndim, shapes[i]);
        if (input_bytes && input_bytes[i] != want) {
            char bound[256] = "";
            for (int d = 0; d < v->ndim; d++) {
                if (!v->dim_names[d]) continue;
                int s = sym_find(&t, v->dim_names[d]);
                size_t len = strlen(bound);
                if (t.source[s] >= 0 && t.source[s] != i)
                    snprintf(bound + len, sizeof bound - len, "; %s = %lld from input '%s'", t.name[s], (long long)t.value[s],
                             g->values[g->inputs[t.source[s]]].name);
                else if (t.source[s] < 0)
                    snprintf(bound + len, sizeof bound - len, "; %s = %lld as bound", t.name[s], (long long)t.value[s]);
            }
            return weft_fail(WEFT_ERR_SHAPE, "input '%s' needs %zu bytes at these sizes, the buffer has %zu%s", v->name, want,
                             input_bytes[i], bound);
        }
    }
    return WEFT_OK;
}

/* Replays g at the given input shapes into a new static graph. */
static weft_status replay(const weft_graph *g, int64_t (*shapes)[WEFT_GRAPH_MAX_DIMS], weft_graph **out)
{
    *out = NULL;
    weft_graph *h = NULL;
    int *map = weft_malloc(sizeof(int) * (size_t)(g->n_values + 1));
    weft_status rc = map ? weft_graph_create(&h) : weft_fail(WEFT_ERR_NOMEM, "specialize: out of memory");
    for (int v = 0; map && v < g->n_values; v++) map[v] = -1;
    for (int i = 0; rc == WEFT_OK && i < g->n_inputs; i++) {
        const weft_gvalue *v = &g->values[g->inputs[i]];
        weft_type ty = WEFT_TYPE_FLOAT32;
        weft_dtype_to_type(v->dtype, &ty);
        rc = weft_graph_add_input(h, v->name, ty, v->ndim, shapes[i], &map[g->inputs[i]]);
    }
    for (int ni = 0; rc == WEFT_OK && ni < g->n_nodes; ni++) {
        const weft_gnode *n = &g->nodes[ni];
        if (n->dead) continue;
        weft_value in[WEFT_NODE_MAX_IO], outs[WEFT_NODE_MAX_IO];
        for (int k = 0; rc == WEFT_OK && k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v >= 0 && map[v] < 0) {
                const weft_gvalue *gv = &g->values[v];
                weft_type ty = WEFT_TYPE_FLOAT32;
                weft_dtype_to_type(gv->dtype, &ty);
                if (!gv->data)
                    rc = weft_fail(WEFT_ERR_INTERNAL, "specialize: node '%s' reads '%s' before it is computed", n->name, gv->name);
                else rc = weft_graph_add_constant(h, gv->name, ty, gv->ndim, gv->shape, gv->data, &map[v]);
            }
            in[k] = v >= 0 ? map[v] : -1;
        }
        bool done = false;
        if (rc == WEFT_OK && g->rewrite)
            rc = g->rewrite(h, n->op_type, n->name, n->n_inputs, in, n->n_attrs, n->attrs, n->n_outputs, outs, &done);
        if (rc == WEFT_OK && !done)
            rc = weft_graph_add_op(h, n->op_type, n->name, n->n_inputs, in, n->n_attrs, n->attrs, n->n_outputs, outs);
        for (int k = 0; rc == WEFT_OK && k < n->n_outputs; k++) map[n->outputs[k]] = outs[k];
    }
    for (int o = 0; rc == WEFT_OK && o < g->n_outputs; o++) {
        int v = g->outputs[o];
        if (map[v] < 0) {
            const weft_gvalue *gv = &g->values[v];
            weft_type ty = WEFT_TYPE_FLOAT32;
            weft_dtype_to_type(gv->dtype, &ty);
            if (!gv->data) rc = weft_fail(WEFT_ERR_INTERNAL, "specialize: output '%s' is never computed", gv->name);
            else rc = weft_graph_add_constant(h, gv->name, ty, gv->ndim, gv->shape, gv->data, &map[v]);
        }
        if (rc == WEFT_OK) rc = weft_graph_set_output(h, map[v], g->values[v].name);
    }
    free(map);
    if (rc != WEFT_OK) {
        weft_graph_destroy(h);
        return rc;
    }
    *out = h;
    return WEFT_OK;
}

weft_status weft_graph_specialize(const weft_graph *g, int n_dims, const char *const *dim_names, const int64_t *dim_values,
                                  const size_t *input_bytes, weft_graph **out)
{
    if (out) *out = NULL;
    if (!g || !out) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_graph_specialize: NULL argument");
    int64_t shapes[64][WEFT_GRAPH_MAX_DIMS];
    weft_status rc = weft_model_resolve_shapes(g, n_dims, dim_names, dim_values, input_bytes, shapes);
    if (rc != WEFT_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", weft_last_error());
        return weft_fail(rc, "weft_graph_specialize: %s", msg);
    }
    return replay(g, shapes, out);
}

/* ---- models compiled per shape --------------------------------------------------------- */

static const int64_t probe_primes[2][MAX_SYMBOLS] = {
    {11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71},
    {73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151},
};

/* The outputs' dims in terms of the symbols (see the file comment). */
static void probe_outputs(weft_model *m)
{
    const weft_graph *g = m->src;
    const char *names[MAX_SYMBOLS];
    int n = 0;
    for (int i = 0; i < g->n_inputs; i++) {
        const weft_gvalue *v = &g->values[g->inputs[i]];
        for (int d = 0; d < v->ndim; d++) {
            bool seen = false;
            for (int k = 0; v->dim_names[d] && k < n; k++) seen = seen || !strcmp(names[k], v->dim_names[d]);
            if (v->dim_names[d] && !seen && n < MAX_SYMBOLS) names[n++] = v->dim_names[d];
        }
    }
    weft_graph *p[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        int64_t shapes[64][WEFT_GRAPH_MAX_DIMS];
        if (weft_model_resolve_shapes(g, n, names, probe_primes[k], NULL, shapes) != WEFT_OK || replay(g, shapes, &p[k]) != WEFT_OK)
            break;
    }
    for (int o = 0; p[1] && o < m->n_out; o++) {
        weft_tensor_info *t = &m->io[m->n_in + o];
        const weft_gvalue *a = &p[0]->values[p[0]->outputs[o]], *b = &p[1]->values[p[1]->outputs[o]];
        if (a->ndim != b->ndim) continue;
        t->ndim = a->ndim;
        for (int d = 0; d < a->ndim; d++) {
            t->shape[d] = a->shape[d] == b->shape[d] ? a->shape[d] : -1;
            for (int s = 0; s < n && t->shape[d] < 0; s++)
                if (a->shape[d] == probe_primes[0][s] && b->shape[d] == probe_primes[1][s]) {
                    /* borrow the input's copy of the name (m->io owns it) */
                    for (int i = 0; i < m->n_in && !t->dim_names[d]; i++)
                        for (int e = 0; e < m->io[i].ndim && !t->dim_names[d]; e++)
                            if (m->io[i].dim_names[e] && !strcmp(m->io[i].dim_names[e], names[s]))
                                t->dim_names[d] = weft_strdup(names[s]);
                }
        }
        t->bytes = weft_model_tensor_bytes(t->dtype, t->ndim, t->shape);
    }
    weft_graph_destroy(p[0]);
    weft_graph_destroy(p[1]);
}

weft_status weft_model_compile_symbolic(const weft_graph *g, const weft_model_options *opt, weft_model_instance_fn make,
                                        void *make_ud, void (*make_free)(void *), weft_model **out)
{
    *out = NULL;
    weft_model *m = weft_calloc(1, sizeof *m);
    if (!m) {
        if (make_free) make_free(make_ud);
        return weft_fail(WEFT_ERR_NOMEM, "model: out of memory");
    }
    m->make = make;
    m->make_ud = make_ud;
    m->make_free = make_free;
    m->opt = opt ? *opt : weft_model_options_default();
    weft_status rc = weft_model_init_locks(m);
    if (rc == WEFT_OK) rc = weft_threadpool_create(m->opt.threads, &m->pool);
    if (rc == WEFT_OK) rc = weft_model_record_io(m, g);
    if (rc == WEFT_OK) rc = weft_graph_clone(g, &m->src);
    if (rc != WEFT_OK) {
        weft_model_destroy(m);
        return rc;
    }
    probe_outputs(m);
    *out = m;
    return WEFT_OK;
}

static bool same_shapes(const weft_model *inst, int64_t (*shapes)[WEFT_GRAPH_MAX_DIMS])
{
    for (int i = 0; i < inst->n_in; i++)
        for (int d = 0; d < inst->io[i].ndim; d++)
            if (inst->io[i].shape[d] != shapes[i][d]) return false;
    return true;
}

weft_status weft_model_instance(weft_model *m, int64_t (*shapes)[WEFT_GRAPH_MAX_DIMS], weft_model **out)
{
    *out = NULL;
    pthread_mutex_lock(&m->cache_lock);
    for (int k = 0; k < m->n_inst; k++)
        if (same_shapes(m->inst[k], shapes)) {
            *out = m->inst[k];
            pthread_mutex_unlock(&m->cache_lock);
            return WEFT_OK;
        }
    weft_graph *h = NULL;
    weft_model *inst = NULL;
    weft_status rc = WEFT_OK;
    if (m->n_inst == m->cap_inst) {
        int cap = m->cap_inst ? 2 * m->cap_inst : 4;
        weft_model **v = weft_realloc(m->inst, sizeof *v * (size_t)cap);
        if (!v) rc = weft_fail(WEFT_ERR_NOMEM, "model: out of memory");
        else m->inst = v, m->cap_inst = cap;
    }
    if (rc == WEFT_OK) rc = replay(m->src, shapes, &h);
    if (rc == WEFT_OK) rc = m->make(m->make_ud, h, &m->opt, &inst);
    weft_graph_destroy(h);
    if (rc == WEFT_OK) {
        /* every shape runs on the model's one thread pool (compiled for the same thread count) */
        weft_threadpool_destroy(inst->pool);
        inst->pool = m->pool;
        inst->pool_owner = m;
        m->inst[m->n_inst++] = inst;
        *out = inst;
    }
    pthread_mutex_unlock(&m->cache_lock);
    return rc;
}
