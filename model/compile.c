/* weft_model_compile: the model pipeline (see model/model_internal.h), the static memory
 * plan and the model's buffers.
 *
 * Memory plan: every value a kernel writes (and that is not a graph output copied out at the
 * end) gets an offset in one arena. Values are placed in kernel order at the lowest 64-byte
 * aligned offset that does not overlap a value still alive (first fit); a value dies after
 * the last kernel that reads it or a view of it (alias ops share their input's storage).
 * The arena is allocated once per model and reused by every run.
 *
 * Serial kernels: a fork-join on the thread pool costs about 0.3-0.5 us when the workers are
 * awake (and tens of us when they sleep), so a kernel whose whole work takes a microsecond or
 * two gains nothing from it and loses the round trip. Each kernel's one-thread time is
 * estimated at compile time from its FLOPs and the bytes of its parameters,
 *     est = flops / EST_FLOPS + bytes / EST_BYTES_PER_S   (about one core of these machines,
 *                                                          data in L2 as in repeated runs)
 * and a kernel with est < SERIAL_BELOW_US runs with no pool (its parallel loops run inline,
 * as weft_rt_parallel_for does for a NULL pool). WEFT_SERIAL_BELOW_US (microseconds, read at
 * compile time) overrides the threshold; 0 turns serial kernels off.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/strbuf.h"
#include "lower/lower.h"
#include "model/model_internal.h"
#include "schedule/schedule.h"
#include "compile/build.h"
#include "runtime/mem.h"

weft_model_options weft_model_options_default(void)
{
    weft_model_options o = {0};
    o.threads = 0;
    o.target = "llvm";
    return o;
}

#define EST_FLOPS 50e9          /* float32 FLOP/s of one core on a default schedule */
#define EST_BYTES_PER_S 100e9   /* bytes/s of one core from L2 */
#define SERIAL_BELOW_US 2.0     /* kernels estimated faster than this run serially */
#define MAX_SCHEDULE_ATTEMPTS 16 /* provider choices tried per kernel before giving up */

static double serial_below_us(void)
{
    const char *s = getenv("WEFT_SERIAL_BELOW_US");
    if (!s || !*s) return SERIAL_BELOW_US;
    char *end = NULL;
    double v = strtod(s, &end);
    return end && !*end && v >= 0 && v < 1e9 ? v : SERIAL_BELOW_US;
}

/* Estimated one-thread microseconds of kernel mk (see the file comment). */
static double estimate_us(const weft_model *m, const weft_model_kernel *mk)
{
    double bytes = 0;
    for (int p = 0; p < mk->n_params; p++) bytes += (double)weft_gvalue_bytes(&m->g->values[mk->params[p]]);
    return (mk->flops / EST_FLOPS + bytes / EST_BYTES_PER_S) * 1e6;
}

typedef struct live {
    int value;
    size_t offset, size;
    int first, last; /* kernel indices */
} live;

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* Plans offsets for the values kernels write; returns the arena size. */
static weft_status plan_memory(weft_model *m, size_t *offsets, bool *planned)
{
    weft_graph *g = m->g;
    int nv = g->n_values;
    live *lv = weft_calloc((size_t)nv + 1, sizeof *lv);
    int n_lv = 0;
    if (!lv) return weft_fail(WEFT_ERR_NOMEM, "memory plan: out of memory");
    int *slot = weft_malloc(sizeof(int) * (size_t)(nv + 1));
    if (!slot) {
        free(lv);
        return weft_fail(WEFT_ERR_NOMEM, "memory plan: out of memory");
    }
    for (int v = 0; v < nv; v++) slot[v] = -1;
    for (int k = 0; k < m->n_kernels; k++) {
        const weft_model_kernel *mk = &m->kernels[k];
        /* a step kernel's initial states (step[p].value0) are read too */
        for (int q = 0; q < mk->n_params + (mk->n_steps > 0 ? mk->n_params : 0); q++) {
            int v = q < mk->n_params ? mk->params[q] : mk->step[q - mk->n_params].value0;
            if (v < 0) continue;
            int root = weft_model_storage_root(g, v);
            if (g->values[root].is_input || g->values[root].data) continue;
            if (slot[root] < 0) {
                slot[root] = n_lv;
                lv[n_lv].value = root;
                lv[n_lv].size = align64(weft_gvalue_bytes(&g->values[root]));
                lv[n_lv].first = k;
                n_lv++;
            }
            lv[slot[root]].last = k;
        }
    }
    /* Graph outputs live to the end (they are copied out after the last kernel). */
    for (int o = 0; o < g->n_outputs; o++) {
        int root = weft_model_storage_root(g, g->outputs[o]);
        if (slot[root] >= 0) lv[slot[root]].last = m->n_kernels;
    }
    size_t peak = 0;
    for (int i = 0; i < n_lv; i++) {
        size_t off = 0;
        bool moved = true;
        while (moved) {
            moved = false;
            for (int j = 0; j < i; j++) {
                if (lv[j].last < lv[i].first || lv[j].first > lv[i].last) continue; /* not alive together */
                if (off < lv[j].offset + lv[j].size && lv[j].offset < off + lv[i].size) {
                    off = lv[j].offset + lv[j].size;
                    moved = true;
                }
            }
        }
        lv[i].offset = off;
        if (off + lv[i].size > peak) peak = off + lv[i].size;
        offsets[lv[i].value] = off;
        planned[lv[i].value] = true;
    }
    m->arena_bytes = peak;
    free(lv);
    free(slot);
    return WEFT_OK;
}

static weft_status default_provider(void *ud, const weft_te_func *f, weft_schedule *s, const weft_target_caps *caps,
                                    int attempt, char *src)
{
    (void)ud;
    (void)f;
    (void)attempt;
    snprintf(src, 16, "default");
    return weft_schedule_default(s, caps);
}

/* The loop kernel of group grp (a lone node that is written as loops: weft_op_loop) on a target
 * without thread binding, or NULL: it is compiled as such, with no schedule to choose or tune. */
static weft_op_loop_fn loop_kernel(const weft_graph *g, const weft_group *grp, const weft_target_caps *caps)
{
    return grp->n_nodes == 1 && !caps->has_thread_binding ? weft_op_loop(g, &g->nodes[grp->nodes[0]]) : NULL;
}

static weft_status compile_kernels(weft_model *m, const weft_group *groups, int n_groups, const weft_target_caps *caps,
                                   weft_model_schedule_fn provider, void *ud)
{
    m->kernels = weft_calloc((size_t)n_groups + 1, sizeof *m->kernels);
    if (!m->kernels) return weft_fail(WEFT_ERR_NOMEM, "model: out of memory");
    double serial_us = serial_below_us();
    for (int gi = 0; gi < n_groups; gi++) {
        weft_model_kernel *mk = &m->kernels[gi];
        weft_arena *a = weft_arena_create();
        weft_schedule *s = NULL;
        weft_te_func *f = NULL;
        mk->params = weft_malloc(sizeof(int) * (size_t)(groups[gi].n_inputs + groups[gi].n_outputs + WEFT_MODEL_MAX_STEP_PARAMS));
        mk->step = weft_malloc(sizeof *mk->step * WEFT_MODEL_MAX_STEP_PARAMS);
        m->n_kernels = gi + 1; /* the model's destroy frees what this kernel holds, from here on */
        if (!a || !mk->params || !mk->step) {
            weft_arena_destroy(a);
            return weft_fail(WEFT_ERR_NOMEM, "model: out of memory");
        }
        /* a loop kernel's tensor expressions give its parameters only (their FLOP count is
         * another algorithm's: none is counted) */
        weft_op_loop_fn loop = loop_kernel(m->g, &groups[gi], caps);
        char base[64];
        weft_status rc = weft_model_group_kernel(a, m->g, &groups[gi], &f, mk->params, &mk->n_params, base, sizeof base,
                                                 mk->step, &mk->n_steps);
        if (rc == WEFT_OK) {
            weft_strbuf sb = {0};
            for (int i = 0; i < groups[gi].n_nodes; i++) {
                const weft_gnode *nd = &m->g->nodes[groups[gi].nodes[i]];
                weft_strbuf_printf(&sb, "%s%s(%s)", i ? " " : "", nd->op_type, nd->name);
            }
            mk->ops = weft_strbuf_take(&sb);
            if (!mk->ops) rc = weft_fail(WEFT_ERR_NOMEM, "model: out of memory");
            mk->flops = loop ? 0 : weft_te_func_flops(f);
            mk->est_us = estimate_us(m, mk);
            if (mk->n_steps > 0) { /* a step kernel: one step's estimate, all steps' flops */
                double bytes = 0;
                for (int i = 0; i < f->n_inputs; i++) bytes += (double)weft_te_numel(f->inputs[i]) * 4;
                for (int i = 0; i < f->n_outputs; i++) bytes += (double)weft_te_numel(f->outputs[i]) * 4;
                mk->est_us = (mk->flops / EST_FLOPS + bytes / EST_BYTES_PER_S) * 1e6;
                mk->flops *= (double)mk->n_steps;
            }
            mk->serial = mk->est_us < serial_us;
            snprintf(mk->name, sizeof mk->name, "%s_%d", base, gi);
        }
        if (rc == WEFT_OK && loop) {
            weft_loop_func *lf = NULL;
            snprintf(mk->schedule_src, sizeof mk->schedule_src, "loops");
            mk->steps = strdup("# a loop kernel (no schedule)\n");
            rc = mk->steps ? loop(a, m->g, &m->g->nodes[groups[gi].nodes[0]], mk->params, mk->n_params, mk->name, &lf)
                           : weft_fail(WEFT_ERR_NOMEM, "out of memory");
            if (rc == WEFT_OK) rc = m->ops->compile(m->target, lf, &mk->k);
        }
        /* A provided schedule that does not build is replaced by the provider's next choice;
         * the default schedule ends the retries. */
        for (int attempt = 0; rc == WEFT_OK && !loop; attempt++) {
            weft_schedule_destroy(s);
            s = NULL;
            rc = weft_schedule_create(f, &s);
            if (rc == WEFT_OK) rc = provider(ud, f, s, caps, attempt, mk->schedule_src);
            if (rc != WEFT_OK) break; /* the provider's own errors (a database error) are final */
            free(mk->steps);
            mk->steps = weft_schedule_text(s);
            if (!mk->steps) rc = weft_fail(WEFT_ERR_NOMEM, "out of memory");
            if (rc == WEFT_OK) rc = weft_target_build(m->ops, m->target, s, a, NULL, &mk->k);
            /* out of memory is this process's failure, not the schedule's: no retry */
            if (rc == WEFT_OK || rc == WEFT_ERR_NOMEM || weft_arena_failed(a) || !strcmp(mk->schedule_src, "default") ||
                attempt >= MAX_SCHEDULE_ATTEMPTS)
                break;
            rc = WEFT_OK;
        }
        if (rc != WEFT_OK) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", weft_last_error());
            weft_fail(rc, "kernel %d (%s, first node '%s'): %s", gi, base[0] ? base : "?",
                      m->g->nodes[groups[gi].nodes[0]].name, msg);
        }
        weft_schedule_destroy(s);
        weft_arena_destroy(a);
        m->n_kernels = gi + 1;
        if (rc != WEFT_OK) return rc;
        if (mk->n_params > m->max_params) m->max_params = mk->n_params;
    }
    return WEFT_OK;
}

weft_status weft_model_compile(const weft_graph *graph, const weft_model_options *opt, weft_model **out)
{
    return weft_model_compile_ex(graph, opt, NULL, NULL, NULL, out);
}

/* The graph passes, in order (shared by compiling and by task extraction). */
static weft_status optimize_graph(weft_graph *g, const weft_target_caps *caps)
{
    weft_status rc = weft_model_fold_constants(g);
    /* scatters with constant indices read a plan of where each update lands */
    for (int i = 0; rc == WEFT_OK && i < g->n_nodes; i++) rc = weft_nn_scatter_plan(g, i);
    /* recurrences: their weights in column blocks as wide as the default register tile */
    if (rc == WEFT_OK) rc = weft_model_expand_recurrent(g, caps->vector_lanes_f32 > 1 ? 2 * caps->vector_lanes_f32 : 16);
    if (rc == WEFT_OK) rc = weft_model_fold_batchnorm(g);
    if (rc == WEFT_OK) rc = weft_model_fold_prenorm(g);
    if (rc == WEFT_OK) rc = weft_model_fold_constants(g);
    if (rc == WEFT_OK) rc = weft_model_conv_dead_taps(g);
    if (rc == WEFT_OK) rc = weft_model_conv_border_bands(g);
    if (rc == WEFT_OK) rc = weft_model_sink_unit_views(g);
    if (rc == WEFT_OK) rc = weft_model_pretranspose_weights(g);
    if (rc == WEFT_OK) {
        /* Winograd 3x3 convs on CPUs (their default schedule is schedule/default_conv.c's);
         * WEFT_WINOGRAD=0 keeps every conv direct (comparisons, bit-for-bit checks), 2 or 4
         * allows only that tile size. */
        const char *wino = getenv("WEFT_WINOGRAD");
        if (wino && strcmp(wino, "0") && strcmp(wino, "1") && strcmp(wino, "2") && strcmp(wino, "4"))
            return weft_fail(WEFT_ERR_INVALID_ARG,
                             "WEFT_WINOGRAD='%.40s': expected 0 (direct convs), 1 (Winograd where it pays), 2 or 4 (tiles "
                             "of that size only)", wino);
        int64_t winograd = 0; /* the rule chooses */
        if (caps->has_thread_binding || (wino && wino[0] == '0')) winograd = -1;
        else if (wino && wino[0] != '1') winograd = wino[0] - '0';
        rc = weft_model_conv_weight_layout(g, caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8, winograd);
    }
    if (rc == WEFT_OK) {
        /* Weight blocks as wide as the default register tile (two vectors). */
        int64_t nb = caps->vector_lanes_f32 > 1 ? 2 * caps->vector_lanes_f32 : 16;
        rc = weft_model_matmul_weight_layout(g, nb);
    }
    if (rc == WEFT_OK) weft_model_dead_code(g);
    return rc;
}

weft_status weft_model_each_kernel(const weft_graph *graph, const weft_target_caps *caps, weft_model_kernel_fn fn,
                                   void *ud)
{
    if (weft_graph_is_symbolic(graph))
        return weft_fail(WEFT_ERR_UNSUPPORTED, "the graph has symbolic dimensions: its kernels are known only at concrete "
                         "sizes (weft_graph_specialize)");
    weft_graph *g = NULL;
    weft_group *groups = NULL;
    int n_groups = 0;
    weft_status rc = weft_graph_clone(graph, &g);
    if (rc == WEFT_OK) rc = optimize_graph(g, caps);
    if (rc == WEFT_OK) rc = weft_model_fuse(g, &groups, &n_groups);
    /* a recurrence's step kernel is given once per step (n_steps), so tasks weigh it by the
     * times it runs */
    for (int gi = 0, rep = 0; rc == WEFT_OK && gi < n_groups; rep = 0, gi++) {
        if (loop_kernel(g, &groups[gi], caps)) continue; /* no schedule to tune */
        for (int64_t n_steps = 1; rc == WEFT_OK && rep < n_steps; rep++) {
            weft_arena *a = weft_arena_create();
            int *params = weft_malloc(sizeof(int) * (size_t)(groups[gi].n_inputs + groups[gi].n_outputs + WEFT_MODEL_MAX_STEP_PARAMS));
            weft_op_step_param *step = weft_malloc(sizeof *step * WEFT_MODEL_MAX_STEP_PARAMS);
            weft_te_func *f = NULL;
            int n_params = 0;
            int64_t steps = 0;
            char name[64];
            if (!a || !params || !step) rc = weft_fail(WEFT_ERR_NOMEM, "out of memory");
            if (rc == WEFT_OK)
                rc = weft_model_group_kernel(a, g, &groups[gi], &f, params, &n_params, name, sizeof name, step, &steps);
            free(params);
            free(step);
            if (steps > 1) n_steps = steps;
            if (rc == WEFT_OK) rc = fn(ud, a, f, name);
            else weft_arena_destroy(a);
        }
    }
    weft_model_groups_free(groups, n_groups);
    weft_graph_destroy(g);
    return rc;
}

/* The locks every model has (context.c, dynamic.c). */
weft_status weft_model_init_locks(weft_model *m)
{
    if (pthread_mutex_init(&m->lock, NULL) != 0) return weft_fail(WEFT_ERR_NOMEM, "model: cannot create a lock");
    if (pthread_mutex_init(&m->pool_lock, NULL) != 0) {
        pthread_mutex_destroy(&m->lock);
        return weft_fail(WEFT_ERR_NOMEM, "model: cannot create a lock");
    }
    if (pthread_mutex_init(&m->cache_lock, NULL) != 0) {
        pthread_mutex_destroy(&m->lock);
        pthread_mutex_destroy(&m->pool_lock);
        return weft_fail(WEFT_ERR_NOMEM, "model: cannot create a lock");
    }
    m->locks_ready = true;
    return WEFT_OK;
}

static weft_status compile_static(void *ud, const weft_graph *g, const weft_model_options *opt, weft_model **out)
{
    (void)ud;
    return weft_model_compile_ex(g, opt, NULL, NULL, NULL, out);
}

weft_status weft_model_compile_ex(const weft_graph *graph, const weft_model_options *opt, weft_model_schedule_fn provider,
                                  void *ud, int *n_provided, weft_model **out)
{
    if (!out) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_model_compile: out is NULL");
    *out = NULL;
    if (!graph) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_model_compile: graph is NULL");
    weft_model_options o = opt ? *opt : weft_model_options_default();
    if (graph->n_outputs == 0) return weft_fail(WEFT_ERR_INVALID_ARG, "model has no outputs");
    if (n_provided) *n_provided = 0;
    if (weft_graph_is_symbolic(graph)) {
        if (provider) return weft_fail(WEFT_ERR_UNSUPPORTED, "a schedule provider for a graph with symbolic dimensions");
        return weft_model_compile_symbolic(graph, &o, compile_static, NULL, NULL, out);
    }
    weft_model *m = weft_calloc(1, sizeof *m);
    if (!m) return weft_fail(WEFT_ERR_NOMEM, "model: out of memory");
    weft_status rc = weft_model_init_locks(m);
    if (rc != WEFT_OK) {
        free(m);
        return rc;
    }
    weft_group *groups = NULL;
    int n_groups = 0;
    size_t *offsets = NULL;
    bool *planned = NULL;
    m->opt = o;
    rc = weft_model_record_io(m, graph);
    if (rc == WEFT_OK) rc = weft_graph_clone(graph, &m->g);
    if (rc == WEFT_OK) {
        m->ops = weft_target_find(o.target && *o.target ? o.target : "llvm");
        if (!m->ops) rc = WEFT_ERR_UNAVAILABLE;
    }
    if (rc == WEFT_OK) rc = m->ops->create(&m->target);
    if (rc == WEFT_OK) rc = weft_threadpool_create(o.threads, &m->pool);
    weft_target_caps caps;
    if (rc == WEFT_OK) {
        m->ops->caps(m->target, &caps);
        /* on a CPU the cores this model may use; a device keeps its threads per block */
        if (weft_target_is_host(m->ops)) caps.max_threads = weft_threadpool_size(m->pool);
        rc = optimize_graph(m->g, &caps);
    }
    if (rc == WEFT_OK) rc = weft_model_fuse(m->g, &groups, &n_groups);
    if (rc == WEFT_OK) rc = compile_kernels(m, groups, n_groups, &caps, provider ? provider : default_provider, ud);
    if (rc == WEFT_OK && n_provided) {
        *n_provided = 0;
        for (int k = 0; k < m->n_kernels; k++)
            *n_provided += strcmp(m->kernels[k].schedule_src, "default") && strcmp(m->kernels[k].schedule_src, "loops");
    }
    int nv = m->g ? m->g->n_values : 0;
    if (rc == WEFT_OK) {
        offsets = weft_calloc((size_t)nv + 1, sizeof *offsets);
        planned = weft_calloc((size_t)nv + 1, sizeof *planned);
        m->offset = weft_calloc((size_t)nv + 1, sizeof *m->offset);
        if (!offsets || !planned || !m->offset) rc = weft_fail(WEFT_ERR_NOMEM, "model: out of memory");
    }
    if (rc == WEFT_OK) rc = plan_memory(m, offsets, planned);
    /* constants stay in the clone (malloc: 16-byte aligned); activations live in each
     * context's arena (run.c) */
    for (int v = 0; rc == WEFT_OK && v < nv; v++) m->offset[v] = planned[v] ? offsets[v] : SIZE_MAX;
    if (rc == WEFT_OK && !weft_target_is_host(m->ops)) rc = weft_model_device_setup(m); /* device.c */
    free(offsets);
    free(planned);
    weft_model_groups_free(groups, n_groups);
    if (rc != WEFT_OK) {
        weft_model_destroy(m);
        return rc;
    }
    *out = m;
    return WEFT_OK;
}

void weft_model_destroy(weft_model *m)
{
    if (!m) return;
    weft_context_destroy(m->ctx);
    for (int i = 0; i < m->n_inst; i++) weft_model_destroy(m->inst[i]);
    free(m->inst);
    if (m->make_free) m->make_free(m->make_ud);
    weft_graph_destroy(m->src);
    weft_model_free_io(m);
    if (m->locks_ready) {
        pthread_mutex_destroy(&m->lock);
        pthread_mutex_destroy(&m->pool_lock);
        pthread_mutex_destroy(&m->cache_lock);
    }
    for (int k = 0; k < m->n_kernels; k++) {
        if (m->kernels[k].k) m->ops->kernel_destroy(m->kernels[k].k);
        free(m->kernels[k].params);
        free(m->kernels[k].step);
        free(m->kernels[k].steps);
        free(m->kernels[k].ops);
    }
    free(m->kernels);
    if (m->ops && !weft_target_is_host(m->ops)) weft_model_device_release(m);
    if (m->target) m->ops->destroy(m->target);
    if (!m->pool_owner) weft_threadpool_destroy(m->pool);
    free(m->offset);
    weft_graph_destroy(m->g);
    free(m);
}
