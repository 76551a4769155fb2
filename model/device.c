/* The model executor on a device target (targets/target.h: buffer operations set).
 *
 * Where each value lives:
 *   constants   one device allocation per model (m->dev_const), uploaded once at compile
 *               time, each constant at a 64-byte aligned offset (m->dev_const_off)
 *   activations the context's device arena at the memory plan's offsets (m->offset), as on
 *               the host
 *   inputs      the same device arena after the activations (m->dev_input_off): a run
 *               uploads each graph input there, since kernels cannot read host memory
 *   outputs     downloaded from their device storage into the caller's buffers
 * A run is: upload every input, run every kernel on device addresses, download every
 * output, synchronize. Host code never dereferences a device address: it only adds offsets
 * to one (targets/target.h, "Addresses"). Profiling synchronizes after each kernel.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "model/model_internal.h"
#include "runtime/mem.h"

#define ALIGN(x) (((x) + 63) & ~(size_t)63)

/* Does a kernel read value v's storage root (which has host data)? */
static bool kernel_reads(const weft_model *m, int root)
{
    for (int k = 0; k < m->n_kernels; k++)
        for (int p = 0; p < m->kernels[k].n_params; p++)
            if (weft_model_storage_root(m->g, m->kernels[k].params[p]) == root) return true;
    return false;
}

static bool is_output_root(const weft_model *m, int root)
{
    for (int o = 0; o < m->g->n_outputs; o++)
        if (weft_model_storage_root(m->g, m->g->outputs[o]) == root) return true;
    return false;
}

weft_status weft_model_device_setup(weft_model *m)
{
    const weft_graph *g = m->g;
    int nv = g->n_values;
    m->dev_const_off = weft_malloc(sizeof *m->dev_const_off * (size_t)(nv + 1));
    m->dev_input_off = weft_malloc(sizeof *m->dev_input_off * (size_t)(g->n_inputs + 1));
    if (!m->dev_const_off || !m->dev_input_off) return weft_fail(WEFT_ERR_NOMEM, "model: out of memory");
    size_t total = 0;
    for (int v = 0; v < nv; v++) {
        m->dev_const_off[v] = SIZE_MAX;
        const weft_gvalue *gv = &g->values[v];
        if (!gv->data || weft_model_storage_root(g, v) != v || !(kernel_reads(m, v) || is_output_root(m, v))) continue;
        m->dev_const_off[v] = total;
        total += ALIGN(weft_gvalue_bytes(gv));
    }
    size_t end = ALIGN(m->arena_bytes);
    for (int i = 0; i < g->n_inputs; i++) {
        m->dev_input_off[i] = end;
        end += ALIGN(weft_gvalue_bytes(&g->values[g->inputs[i]]));
    }
    m->dev_arena_bytes = end ? end : 64;
    if (!total) return WEFT_OK;
    weft_status rc = m->ops->alloc(m->target, total, &m->dev_const);
    if (rc != WEFT_OK) return rc;
    weft_exec ex = {0};
    for (int v = 0; rc == WEFT_OK && v < nv; v++)
        if (m->dev_const_off[v] != SIZE_MAX && weft_gvalue_bytes(&g->values[v]))
            rc = m->ops->upload(m->target, (char *)m->dev_const + m->dev_const_off[v], g->values[v].data,
                                weft_gvalue_bytes(&g->values[v]), &ex);
    if (rc == WEFT_OK) rc = m->ops->synchronize(m->target, &ex);
    return rc;
}

void weft_model_device_release(weft_model *m)
{
    if (m->dev_const) m->ops->free_buf(m->target, m->dev_const);
    m->dev_const = NULL;
    free(m->dev_const_off);
    free(m->dev_input_off);
    m->dev_const_off = m->dev_input_off = NULL;
}

weft_status weft_model_device_arena(weft_context *c, weft_model *s, const char *fn)
{
    if (c->arena && c->arena_owner == s && c->arena_bytes >= s->dev_arena_bytes) return WEFT_OK;
    weft_model_context_free_arena(c);
    void *dev = NULL;
    weft_status rc = s->ops->alloc(s->target, s->dev_arena_bytes, &dev);
    if (rc != WEFT_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", weft_last_error());
        return weft_fail(rc, "%s: cannot allocate the %zu-byte device arena: %s", fn, s->dev_arena_bytes, msg);
    }
    c->arena = dev;
    c->arena_bytes = s->dev_arena_bytes;
    c->arena_owner = s;
    return WEFT_OK;
}

void weft_model_context_free_arena(weft_context *c)
{
    if (c->arena_owner) c->arena_owner->ops->free_buf(c->arena_owner->target, c->arena);
    else weft_rt_free(c->arena);
    c->arena = NULL;
    c->arena_bytes = 0;
    c->arena_owner = NULL;
}

/* Device address of value v for this run. */
static void *dev_storage(const weft_model *m, unsigned char *arena, int v)
{
    int root = weft_model_storage_root(m->g, v);
    const weft_gvalue *gv = &m->g->values[root];
    if (gv->is_input)
        for (int i = 0; i < m->g->n_inputs; i++)
            if (m->g->inputs[i] == root) return arena + m->dev_input_off[i];
    if (gv->data) return m->dev_const_off[root] == SIZE_MAX ? NULL : (char *)m->dev_const + m->dev_const_off[root];
    return m->offset[root] == SIZE_MAX ? NULL : arena + m->offset[root];
}

weft_status weft_model_exec_device(weft_model *m, unsigned char *arena, void **args, const void *const *inputs,
                                   void *const *outputs, bool profile)
{
    const weft_target_ops *ops = m->ops;
    weft_exec ex = {0};
    weft_status rc = WEFT_OK;
    for (int i = 0; rc == WEFT_OK && i < m->g->n_inputs; i++) {
        size_t bytes = weft_gvalue_bytes(&m->g->values[m->g->inputs[i]]);
        if (bytes) rc = ops->upload(m->target, arena + m->dev_input_off[i], inputs[i], bytes, &ex);
    }
    for (int k = 0; rc == WEFT_OK && k < m->n_kernels; k++) {
        weft_model_kernel *mk = &m->kernels[k];
        for (int p = 0; p < mk->n_params; p++) args[p] = dev_storage(m, arena, mk->params[p]);
        double t0 = profile ? weft_rt_now() : 0;
        if (mk->n_steps > 0) {
            void *init[WEFT_MODEL_MAX_STEP_PARAMS] = {0};
            for (int p = 0; p < mk->n_params; p++)
                if (mk->step[p].value0 >= 0)
                    init[p] = (unsigned char *)dev_storage(m, arena, mk->step[p].value0) + mk->step[p].offset0;
            rc = weft_model_run_steps(m, mk, args, init, &ex);
        } else {
            rc = ops->run(mk->k, args, &ex);
        }
        if (rc == WEFT_OK && profile) {
            rc = ops->synchronize(m->target, &ex);
            mk->time_sum += weft_rt_now() - t0;
            mk->calls++;
        }
    }
    for (int o = 0; rc == WEFT_OK && o < m->g->n_outputs; o++) {
        int v = m->g->outputs[o];
        size_t bytes = weft_gvalue_bytes(&m->g->values[v]);
        const void *src = dev_storage(m, arena, v);
        if (src && bytes) rc = ops->download(m->target, outputs[o], src, bytes, &ex);
    }
    /* always wait: the caller may reuse its buffers (and a failed run's work) once we return */
    weft_status sync = ops->synchronize(m->target, &ex);
    if (rc == WEFT_OK) rc = sync;
    if (rc == WEFT_OK && profile) m->runs++;
    return rc;
}
