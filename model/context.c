/* What a model takes and gives, and running it: execution contexts, size-checked runs.
 *
 * Concurrency (see include/weft/model.h, "Thread safety"). A compiled static model is read-
 * only while it runs: kernels, the memory plan (offsets) and the constants are shared; what a
 * run writes is its context's (the activation arena and the argument array). The thread pool
 * serves one run at a time: a run takes pool_lock with trylock and, when another run holds
 * it, runs its kernels on its own thread (parallel loops run inline for a NULL pool). The
 * model's own context (weft_model_run*) is behind m->lock, so those calls are safe from any
 * thread and run one at a time; profile counters are updated only by them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "model/model_internal.h"
#include "runtime/mem.h"

static const char *const type_names[] = {"float32", "int64", "int32", "bool"};

size_t weft_model_tensor_bytes(weft_type t, int ndim, const int64_t *shape)
{
    size_t n = t == WEFT_TYPE_INT64 ? 8 : t == WEFT_TYPE_BOOL ? 1 : 4;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) return 0;
        n *= (size_t)shape[d];
    }
    return n;
}

/* "float32 [batch, 512]" */
static void describe(const weft_tensor_info *t, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "%s [", (unsigned)t->dtype < 4 ? type_names[t->dtype] : "?");
    for (int d = 0; d < t->ndim && len < n; d++) {
        if (t->shape[d] >= 0) len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
        else len += (size_t)snprintf(buf + len, n - len, "%s%s", d ? ", " : "", t->dim_names[d] ? t->dim_names[d] : "?");
    }
    if (len < n) snprintf(buf + len, n - len, "]");
}

static void fill_info(const weft_graph *g, int v, weft_tensor_info *t)
{
    memset(t, 0, sizeof *t);
    const weft_gvalue *gv = &g->values[v];
    weft_type ty = WEFT_TYPE_FLOAT32;
    weft_dtype_to_type(gv->dtype, &ty);
    t->dtype = ty;
    t->name = gv->name;
    t->ndim = gv->symbolic && !gv->is_input ? -1 : gv->ndim;
    for (int d = 0; d < t->ndim; d++) {
        t->shape[d] = gv->shape[d];
        t->dim_names[d] = gv->dim_names[d];
    }
    t->bytes = t->ndim < 0 ? 0 : weft_model_tensor_bytes(ty, t->ndim, t->shape);
}

weft_status weft_model_record_io(weft_model *m, const weft_graph *g)
{
    m->n_in = g->n_inputs;
    m->n_out = g->n_outputs;
    m->io = weft_calloc((size_t)(m->n_in + m->n_out + 1), sizeof *m->io);
    if (!m->io) return weft_fail(WEFT_ERR_NOMEM, "model: out of memory");
    for (int i = 0; i < m->n_in + m->n_out; i++) {
        weft_tensor_info *t = &m->io[i];
        fill_info(g, i < m->n_in ? g->inputs[i] : g->outputs[i - m->n_in], t);
        /* own copies: the graph may be destroyed after compiling */
        t->name = weft_strdup(t->name ? t->name : "");
        for (int d = 0; d < WEFT_MAX_DIMS; d++)
            if (t->dim_names[d]) t->dim_names[d] = weft_strdup(t->dim_names[d]);
        bool ok = t->name != NULL;
        for (int d = 0; d < t->ndim; d++) ok = ok && (t->shape[d] >= 0 || t->dim_names[d]);
        if (!ok) return weft_fail(WEFT_ERR_NOMEM, "model: out of memory");
    }
    return WEFT_OK;
}

void weft_model_free_io(weft_model *m)
{
    for (int i = 0; m->io && i < m->n_in + m->n_out; i++) {
        free((void *)m->io[i].name);
        for (int d = 0; d < WEFT_MAX_DIMS; d++) free((void *)m->io[i].dim_names[d]);
    }
    free(m->io);
    m->io = NULL;
}

/* ---- queries ---------------------------------------------------------------------------- */

int weft_model_n_inputs(const weft_model *m) { return m ? m->n_in : 0; }
int weft_model_n_outputs(const weft_model *m) { return m ? m->n_out : 0; }
bool weft_model_is_dynamic(const weft_model *m) { return m && m->src; }

static weft_status io_info(const weft_model *m, bool output, int i, weft_tensor_info *out, const char *fn)
{
    if (out) memset(out, 0, sizeof *out);
    if (!m || !out) return weft_fail(WEFT_ERR_INVALID_ARG, "%s: NULL argument", fn);
    int n = output ? m->n_out : m->n_in;
    if (i < 0 || i >= n)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s: index %d out of range (the model has %d %s)", fn, i, n,
                         output ? "outputs" : "inputs");
    *out = m->io[output ? m->n_in + i : i];
    return WEFT_OK;
}

weft_status weft_model_input_info(const weft_model *m, int i, weft_tensor_info *out)
{
    return io_info(m, false, i, out, "weft_model_input_info");
}

weft_status weft_model_output_info(const weft_model *m, int i, weft_tensor_info *out)
{
    return io_info(m, true, i, out, "weft_model_output_info");
}

static weft_status find_io(const weft_model *m, bool output, const char *name, int *index, const char *fn)
{
    if (index) *index = -1;
    if (!m || !name || !index) return weft_fail(WEFT_ERR_INVALID_ARG, "%s: NULL argument", fn);
    int n = output ? m->n_out : m->n_in, base = output ? m->n_in : 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(m->io[base + i].name, name)) {
            *index = i;
            return WEFT_OK;
        }
    char list[512] = "";
    for (int i = 0; i < n; i++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s'%s'", i ? ", " : "", m->io[base + i].name);
    }
    return weft_fail(WEFT_ERR_INVALID_ARG, "%s: the model has no %s named '%s' (%s: %s)", fn, output ? "output" : "input",
                     name, output ? "outputs" : "inputs", list);
}

weft_status weft_model_find_input(const weft_model *m, const char *name, int *index)
{
    return find_io(m, false, name, index, "weft_model_find_input");
}

weft_status weft_model_find_output(const weft_model *m, const char *name, int *index)
{
    return find_io(m, true, name, index, "weft_model_find_output");
}

/* ---- contexts ----------------------------------------------------------------------------- */

weft_status weft_context_create(weft_model *m, weft_context **out)
{
    if (out) *out = NULL;
    if (!m || !out) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_context_create: NULL argument");
    weft_context *c = weft_calloc(1, sizeof *c);
    if (!c) return weft_fail(WEFT_ERR_NOMEM, "weft_context_create: out of memory");
    c->m = m;
    c->cur = m->src ? NULL : m;
    *out = c;
    return WEFT_OK;
}

void weft_context_destroy(weft_context *c)
{
    if (!c) return;
    weft_model_context_free_arena(c);
    free(c->args);
    for (int i = 0; i < c->n_dims; i++) free(c->dim_names[i]);
    free(c);
}

weft_status weft_context_set_dim(weft_context *c, const char *name, int64_t value)
{
    if (!c || !name) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_context_set_dim: NULL argument");
    bool known = false;
    char list[256] = "";
    for (int i = 0; i < c->m->n_in; i++)
        for (int d = 0; d < c->m->io[i].ndim; d++) {
            const char *s = c->m->io[i].dim_names[d];
            if (!s) continue;
            known = known || !strcmp(s, name);
            size_t len = strlen(list);
            if (!strstr(list, s)) snprintf(list + len, sizeof list - len, "%s'%s'", len ? ", " : "", s);
        }
    if (!known)
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_context_set_dim: no input has a dimension named '%s' (%s)", name,
                         list[0] ? list : "the model has no symbolic dimensions");
    if (value < 1) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_context_set_dim: '%s' = %lld (must be >= 1)", name, (long long)value);
    for (int i = 0; i < c->n_dims; i++)
        if (!strcmp(c->dim_names[i], name)) {
            c->dim_values[i] = value;
            return WEFT_OK;
        }
    if (c->n_dims == 16) return weft_fail(WEFT_ERR_UNSUPPORTED, "weft_context_set_dim: more than 16 symbols");
    c->dim_names[c->n_dims] = weft_strdup(name);
    if (!c->dim_names[c->n_dims]) return weft_fail(WEFT_ERR_NOMEM, "weft_context_set_dim: out of memory");
    c->dim_values[c->n_dims++] = value;
    return WEFT_OK;
}

/* Size check of a static model's inputs or outputs. */
static weft_status check_sizes(const weft_model *m, bool output, int n, const size_t *bytes, const void *const *bufs,
                               const char *fn)
{
    int want = output ? m->n_out : m->n_in;
    if (n != want)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s: %d %s given, the model has %d", fn, n, output ? "outputs" : "inputs", want);
    if (n && (!bytes || !bufs)) return weft_fail(WEFT_ERR_INVALID_ARG, "%s: NULL %s array", fn, output ? "output" : "input");
    for (int i = 0; i < n; i++) {
        const weft_tensor_info *t = &m->io[(output ? m->n_in : 0) + i];
        if (!bufs[i]) return weft_fail(WEFT_ERR_INVALID_ARG, "%s: %s %d ('%s') is NULL", fn, output ? "output" : "input", i, t->name);
        if (bytes[i] != t->bytes) {
            char desc[160];
            describe(t, desc, sizeof desc);
            return weft_fail(WEFT_ERR_SHAPE, "%s: %s '%s' (%s) needs %zu bytes, the buffer has %zu", fn,
                             output ? "output" : "input", t->name, desc, t->bytes, bytes[i]);
        }
    }
    return WEFT_OK;
}

/* Binds c to the static model of its shapes and sizes its arena. */
static weft_status prepare(weft_context *c, int n_inputs, const size_t *input_bytes, const char *fn)
{
    weft_model *m = c->m;
    if (m->src) {
        if (n_inputs != m->n_in)
            return weft_fail(WEFT_ERR_INVALID_ARG, "%s: %d inputs given, the model has %d", fn, n_inputs, m->n_in);
        int64_t shapes[64][WEFT_GRAPH_MAX_DIMS];
        weft_status rc = weft_model_resolve_shapes(m->src, c->n_dims, (const char *const *)c->dim_names, c->dim_values,
                                                   input_bytes, shapes);
        if (rc != WEFT_OK) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", weft_last_error());
            return weft_fail(rc, "%s: %s", fn, msg);
        }
        rc = weft_model_instance(m, shapes, &c->cur);
        if (rc != WEFT_OK) return rc;
    }
    weft_model *s = c->cur;
    if (!weft_target_is_host(s->ops)) {
        weft_status rc = weft_model_device_arena(c, s, fn);
        if (rc != WEFT_OK) return rc;
    } else if (s->arena_bytes > c->arena_bytes || c->arena_owner) {
        weft_model_context_free_arena(c);
        c->arena = weft_rt_alloc(s->arena_bytes);
        if (!c->arena) return weft_fail(WEFT_ERR_NOMEM, "%s: cannot allocate the %zu-byte activation arena", fn, s->arena_bytes);
        c->arena_bytes = s->arena_bytes;
    }
    if (s->max_params > c->n_args) {
        free(c->args);
        c->n_args = 0;
        c->args = weft_calloc((size_t)s->max_params, sizeof *c->args);
        if (!c->args) return weft_fail(WEFT_ERR_NOMEM, "%s: out of memory", fn);
        c->n_args = s->max_params;
    }
    return WEFT_OK;
}

weft_status weft_context_prepare(weft_context *c, int n_inputs, const size_t *input_bytes)
{
    if (!c) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_context_prepare: NULL context");
    if (n_inputs != c->m->n_in)
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_context_prepare: %d inputs given, the model has %d", n_inputs, c->m->n_in);
    weft_status rc = prepare(c, n_inputs, input_bytes, "weft_context_prepare");
    if (rc == WEFT_OK && input_bytes) {
        /* the inputs' sizes must be the prepared shapes' */
        for (int i = 0; i < c->cur->n_in; i++)
            if (input_bytes[i] != c->cur->io[i].bytes)
                return weft_fail(WEFT_ERR_SHAPE, "weft_context_prepare: input '%s' needs %zu bytes, %zu given",
                                 c->cur->io[i].name, c->cur->io[i].bytes, input_bytes[i]);
    }
    return rc;
}

weft_status weft_context_output_info(const weft_context *c, int i, weft_tensor_info *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!c || !out) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_context_output_info: NULL argument");
    if (!c->cur)
        return weft_fail(WEFT_ERR_SHAPE, "weft_context_output_info: the model has symbolic dimensions and the context has not "
                         "been prepared (weft_context_prepare) or run");
    return io_info(c->cur, true, i, out, "weft_context_output_info");
}

static weft_status context_run(weft_context *c, int n_inputs, const void *const *inputs, const size_t *input_bytes,
                               int n_outputs, void *const *outputs, const size_t *output_bytes, bool profile,
                               const char *fn)
{
    if (n_inputs && (!inputs || !input_bytes)) return weft_fail(WEFT_ERR_INVALID_ARG, "%s: NULL input array", fn);
    weft_status rc = prepare(c, n_inputs, input_bytes, fn);
    if (rc == WEFT_OK) rc = check_sizes(c->cur, false, n_inputs, input_bytes, inputs, fn);
    if (rc == WEFT_OK) rc = check_sizes(c->cur, true, n_outputs, output_bytes, (const void *const *)outputs, fn);
    if (rc != WEFT_OK) return rc;
    weft_model *s = c->cur;
    pthread_mutex_t *pool_lock = s->pool_owner ? &s->pool_owner->pool_lock : &s->pool_lock;
    bool pool = pthread_mutex_trylock(pool_lock) == 0;
    rc = weft_model_exec(s, c->arena, c->args, inputs, outputs, pool, profile);
    if (pool) pthread_mutex_unlock(pool_lock);
    return rc;
}

weft_status weft_context_run(weft_context *c, int n_inputs, const void *const *inputs, const size_t *input_bytes,
                             int n_outputs, void *const *outputs, const size_t *output_bytes)
{
    if (!c) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_context_run: NULL context");
    return context_run(c, n_inputs, inputs, input_bytes, n_outputs, outputs, output_bytes, false, "weft_context_run");
}

/* ---- the model's own context ------------------------------------------------------------ */

weft_status weft_model_run_sized(weft_model *m, int n_inputs, const void *const *inputs, const size_t *input_bytes,
                                 int n_outputs, void *const *outputs, const size_t *output_bytes)
{
    if (!m) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_model_run_sized: NULL model");
    pthread_mutex_lock(&m->lock);
    weft_status rc = m->ctx ? WEFT_OK : weft_context_create(m, &m->ctx);
    if (rc == WEFT_OK)
        rc = context_run(m->ctx, n_inputs, inputs, input_bytes, n_outputs, outputs, output_bytes, m->profile,
                         "weft_model_run_sized");
    pthread_mutex_unlock(&m->lock);
    return rc;
}

weft_status weft_model_run(weft_model *m, const void *const *inputs, void *const *outputs)
{
    if (!m || (m->n_in && !inputs) || !outputs) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_model_run: NULL argument");
    if (m->src)
        return weft_fail(WEFT_ERR_SHAPE, "weft_model_run: the model has symbolic dimensions; give the buffers' sizes "
                         "(weft_model_run_sized) or bind them (weft_context_set_dim)");
    size_t sizes[128];
    for (int i = 0; i < m->n_in + m->n_out; i++) sizes[i] = m->io[i].bytes;
    for (int i = 0; i < m->n_in; i++)
        if (!inputs[i]) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_model_run: input %d (%s) is NULL", i, m->io[i].name);
    for (int o = 0; o < m->n_out; o++)
        if (!outputs[o]) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_model_run: output %d is NULL", o);
    return weft_model_run_sized(m, m->n_in, inputs, sizes, m->n_out, outputs, sizes + m->n_in);
}
