/* Tuning tasks: the unique fused kernels of a model, keyed by the structural hash of their
 * tensor expressions (independent of names, pointers and machine), each with the number of
 * times it runs per inference and its FLOPs. */
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/hash.h"
#include "ir/print.h"
#include "model/model.h"
#include "ops/ops.h"
#include "tuner/tuner.h"
#include "runtime/mem.h"

typedef struct collect {
    weft_task *tasks;
    int n, cap;
} collect;

/* Adds f (owning arena a) as a task, or counts it again when its key is known. */
static weft_status add_task(collect *c, weft_arena *a, weft_te_func *f, const char *name)
{
    char key[17];
    weft_te_func_hash_hex(f, key);
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->tasks[i].key, key)) {
            c->tasks[i].weight++;
            weft_arena_destroy(a);
            return WEFT_OK;
        }
    if (c->n == c->cap) {
        int cap = c->cap ? c->cap * 2 : 16;
        weft_task *t = weft_realloc(c->tasks, sizeof *t * (size_t)cap);
        if (!t) {
            weft_arena_destroy(a);
            return weft_fail(WEFT_ERR_NOMEM, "out of memory");
        }
        c->tasks = t;
        c->cap = cap;
    }
    weft_task *t = &c->tasks[c->n++];
    memset(t, 0, sizeof *t);
    memcpy(t->key, key, sizeof key);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->arena = a;
    t->f = f;
    t->flops = weft_te_func_flops(f);
    t->weight = 1;
    t->te_text = weft_te_func_str(f);
    size_t len = 0;
    for (int i = 0; i < f->n_inputs + f->n_outputs && len < sizeof t->shapes - 40; i++) {
        const weft_tensor *x = i < f->n_inputs ? f->inputs[i] : f->outputs[i - f->n_inputs];
        len += (size_t)snprintf(t->shapes + len, sizeof t->shapes - len, "%s%s[", i == f->n_inputs ? " -> " : i ? " " : "",
                                x->name);
        for (int d = 0; d < x->ndim && len < sizeof t->shapes - 20; d++)
            len += (size_t)snprintf(t->shapes + len, sizeof t->shapes - len, "%s%lld", d ? "," : "", (long long)x->shape[d]);
        len += (size_t)snprintf(t->shapes + len, sizeof t->shapes - len, "]");
    }
    return WEFT_OK;
}

typedef struct graph_ctx {
    collect c;
    int index;
} graph_ctx;

static weft_status on_kernel(void *ud, weft_arena *a, weft_te_func *f, const char *name)
{
    graph_ctx *gc = ud;
    char nm[128];
    snprintf(nm, sizeof nm, "%s_%d", name, gc->index++);
    return add_task(&gc->c, a, f, nm);
}

weft_status weft_tasks_from_graph(const weft_graph *g, const weft_target_caps *caps, weft_task **out, int *n)
{
    *out = NULL;
    *n = 0;
    graph_ctx gc = {0};
    weft_status rc = weft_model_each_kernel(g, caps, on_kernel, &gc);
    if (rc != WEFT_OK) {
        weft_tasks_free(gc.c.tasks, gc.c.n);
        return rc;
    }
    *out = gc.c.tasks;
    *n = gc.c.n;
    return WEFT_OK;
}

weft_status weft_task_from_op(const char *op, int n_shape, const int64_t *shape, weft_task **out, int *n)
{
    *out = NULL;
    *n = 0;
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    weft_status rc = a ? weft_op_build(a, op, n_shape, shape, &f) : weft_fail(WEFT_ERR_NOMEM, "out of memory");
    if (rc != WEFT_OK) {
        weft_arena_destroy(a);
        return rc;
    }
    collect c = {0};
    rc = add_task(&c, a, f, op);
    if (rc != WEFT_OK) return rc;
    *out = c.tasks;
    *n = c.n;
    return WEFT_OK;
}

void weft_tasks_free(weft_task *tasks, int n)
{
    for (int i = 0; tasks && i < n; i++) {
        weft_arena_destroy(tasks[i].arena);
        free(tasks[i].te_text);
    }
    free(tasks);
}
