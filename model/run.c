/* The graph executor: kernels in order over the planned buffers, graph inputs bound per
 * run, outputs copied out at the end; optional per-kernel profile; printing. This is the host
 * path (a target without buffer operations: kernels read the caller's inputs in place); a
 * device target's runs go to model/device.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "model/model_internal.h"
#include "runtime/mem.h"

/* Storage of value v for this run. */
static void *storage(const weft_model *m, unsigned char *arena, const void *const *inputs, int v)
{
    int root = weft_model_storage_root(m->g, v);
    const weft_gvalue *gv = &m->g->values[root];
    if (gv->is_input)
        for (int i = 0; i < m->g->n_inputs; i++)
            if (m->g->inputs[i] == root) return (void *)inputs[i];
    if (gv->data) return gv->data;
    return m->offset[root] == SIZE_MAX ? NULL : arena + m->offset[root];
}

/* A recurrence's step kernel (ops/nn_rnn.c): run once per step, each parameter offset to that
 * step's slice of its value; at step 0 a parameter with value0 reads init[p] (the initial
 * state's storage, offset0 applied). args holds each parameter's base storage on entry. The
 * arithmetic is on addresses only, so host and device targets share it. */
weft_status weft_model_run_steps(const weft_model *m, const weft_model_kernel *mk, void **args, void *const *init,
                                 const weft_exec *ex)
{
    unsigned char *base[WEFT_MODEL_MAX_STEP_PARAMS];
    for (int p = 0; p < mk->n_params; p++) base[p] = args[p];
    for (int64_t s = 0; s < mk->n_steps; s++) {
        for (int p = 0; p < mk->n_params; p++) {
            const weft_op_step_param *sp = &mk->step[p];
            args[p] = s == 0 && sp->value0 >= 0 ? init[p] : base[p] + sp->offset + s * sp->stride;
        }
        weft_status rc = m->ops->run(mk->k, args, ex);
        if (rc != WEFT_OK) return rc;
    }
    return WEFT_OK;
}

weft_status weft_model_exec(weft_model *m, unsigned char *arena, void **args, const void *const *inputs,
                            void *const *outputs, bool use_pool, bool profile)
{
    if (!weft_target_is_host(m->ops)) return weft_model_exec_device(m, arena, args, inputs, outputs, profile);
    const weft_exec pool = {.pool = use_pool ? m->pool : NULL}, serial = {0};
    for (int k = 0; k < m->n_kernels; k++) {
        weft_model_kernel *mk = &m->kernels[k];
        for (int p = 0; p < mk->n_params; p++) args[p] = storage(m, arena, inputs, mk->params[p]);
        double t0 = profile ? weft_rt_now() : 0;
        const weft_exec *ex = mk->serial ? &serial : &pool;
        weft_status rc;
        if (mk->n_steps > 0) {
            void *init[WEFT_MODEL_MAX_STEP_PARAMS] = {0};
            for (int p = 0; p < mk->n_params; p++)
                if (mk->step[p].value0 >= 0)
                    init[p] = (unsigned char *)storage(m, arena, inputs, mk->step[p].value0) + mk->step[p].offset0;
            rc = weft_model_run_steps(m, mk, args, init, ex);
        } else {
            rc = m->ops->run(mk->k, args, ex);
        }
        if (rc != WEFT_OK) return rc;
        if (profile) {
            mk->time_sum += weft_rt_now() - t0;
            mk->calls++;
        }
    }
    for (int o = 0; o < m->g->n_outputs; o++) {
        int v = m->g->outputs[o];
        const void *src = storage(m, arena, inputs, v);
        if (src && src != outputs[o]) memcpy(outputs[o], src, weft_gvalue_bytes(&m->g->values[v]));
    }
    if (profile) m->runs++;
    return WEFT_OK;
}

int weft_model_n_kernels(const weft_model *m) { return m ? m->n_kernels : 0; }

const char *weft_model_kernel_name(const weft_model *m, int k)
{
    return m && k >= 0 && k < m->n_kernels ? m->kernels[k].name : NULL;
}

size_t weft_model_peak_bytes(const weft_model *m) { return m ? m->arena_bytes : 0; }

/* A symbolic model's kernels are its instances': profile and print go to each of them. */
static void instance_header(const weft_model *inst, FILE *out)
{
    fprintf(out, "-- compiled for");
    for (int i = 0; i < inst->n_in; i++) {
        fprintf(out, "%s %s [", i ? "," : "", inst->io[i].name);
        for (int d = 0; d < inst->io[i].ndim; d++) fprintf(out, "%s%lld", d ? ", " : "", (long long)inst->io[i].shape[d]);
        fprintf(out, "]");
    }
    fprintf(out, "\n");
}

void weft_model_profile_enable(weft_model *m, bool on)
{
    if (!m) return;
    for (int i = 0; i < m->n_inst; i++) weft_model_profile_enable(m->inst[i], on);
    m->profile = on;
    m->runs = 0;
    for (int k = 0; k < m->n_kernels; k++) m->kernels[k].time_sum = 0, m->kernels[k].calls = 0;
}

void weft_model_profile_print(const weft_model *m, FILE *out)
{
    if (!m) return;
    if (m->src) {
        for (int i = 0; i < m->n_inst; i++) {
            instance_header(m->inst[i], out);
            weft_model_profile_print(m->inst[i], out);
        }
        return;
    }
    double total = 0;
    for (int k = 0; k < m->n_kernels; k++) total += m->kernels[k].time_sum;
    int64_t runs = m->runs ? m->runs : 1;
    fprintf(out, "%-4s %-36s %12s %7s %9s %s\n", "#", "kernel", "us/run", "share", "GFLOP/s", "schedule");
    int *order = weft_malloc(sizeof(int) * (size_t)(m->n_kernels + 1));
    for (int k = 0; order && k < m->n_kernels; k++) order[k] = k;
    for (int a = 0; order && a < m->n_kernels; a++)
        for (int b = a + 1; b < m->n_kernels; b++)
            if (m->kernels[order[b]].time_sum > m->kernels[order[a]].time_sum) {
                int t = order[a];
                order[a] = order[b];
                order[b] = t;
            }
    for (int i = 0; i < m->n_kernels; i++) {
        const weft_model_kernel *mk = &m->kernels[order ? order[i] : i];
        double us = mk->time_sum / (double)runs * 1e6;
        fprintf(out, "%-4d %-36s %12.1f %6.1f%% %9.2f %s%s\n", order ? order[i] : i, mk->name, us,
                total > 0 ? 100.0 * mk->time_sum / total : 0.0, mk->time_sum > 0 ? mk->flops * (double)runs / mk->time_sum * 1e-9 : 0.0,
                mk->schedule_src, mk->serial && weft_threadpool_size(m->pool) > 1 ? " (serial)" : "");
    }
    fprintf(out, "total %.1f us/run over %lld runs, %d kernels, activation arena %zu bytes\n", total / (double)runs * 1e6,
            (long long)m->runs, m->n_kernels, m->arena_bytes);
    free(order);
}

void weft_model_print(const weft_model *m, FILE *out)
{
    if (!m) return;
    if (m->src) {
        fprintf(out, "symbolic dimensions: compiled per input shape at first use; %d shape(s) compiled\n", m->n_inst);
        for (int i = 0; i < m->n_inst; i++) {
            instance_header(m->inst[i], out);
            weft_model_print(m->inst[i], out);
        }
        return;
    }
    const weft_graph *g = m->g;
    fprintf(out, "%d kernels, activation arena %zu bytes\n", m->n_kernels, m->arena_bytes);
    for (int k = 0; k < m->n_kernels; k++) {
        const weft_model_kernel *mk = &m->kernels[k];
        fprintf(out, "kernel %d %s (%s schedule, %.3g MFLOP, ~%.2g us%s): %s\n", k, mk->name, mk->schedule_src,
                mk->flops * 1e-6, mk->est_us, mk->serial && weft_threadpool_size(m->pool) > 1 ? ", serial" : "",
                mk->ops ? mk->ops : "");
        for (int p = 0; p < mk->n_params; p++) {
            const weft_gvalue *v = &g->values[mk->params[p]];
            fprintf(out, "  %s %s [", v->data ? "const " : "      ", v->name);
            for (int d = 0; d < v->ndim; d++) fprintf(out, "%s%lld", d ? ", " : "", (long long)v->shape[d]);
            fprintf(out, "]\n");
        }
    }
}
