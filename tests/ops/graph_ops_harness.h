/* Shared fixture for the graph-op tests (tests/ops/test_graph_ops*.c): builds a graph through
 * the public API, then runs the last node alone as a kernel (placeholders for its inputs, the
 * op's compute, the naive schedule, the "interp" target) and compares with a C reference.
 * The fixture owns every buffer, so a failing assertion (a longjmp) leaks nothing.
 * Include after <cmocka.h>. */
#ifndef WEFT_TESTS_GRAPH_OPS_HARNESS_H
#define WEFT_TESTS_GRAPH_OPS_HARNESS_H
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/graph.h"
#include "ops/graph_ops.h"
#include "runtime/runtime.h"
#include "schedule/schedule.h"
#include "compile/build.h"
#include "weft/graph.h"

#define H_UNUSED __attribute__((unused))
#define MAX_BUFS 64

typedef struct fx {
    weft_graph *g;
    weft_arena *a;
    const weft_target_ops *interp;
    weft_target *t;
    weft_kernel *k;
    weft_schedule *s;
    weft_te_func *f;          /* the last kernel built by run_last */
    weft_tensor *outs[WEFT_NODE_MAX_IO];
    void *bufs[MAX_BUFS];
    int n_bufs;
    uint32_t seed;
} fx;

static H_UNUSED int fx_setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    f->seed = 12345;
    f->interp = weft_target_find("interp");
    if (weft_graph_create(&f->g) != WEFT_OK || !(f->a = weft_arena_create()) || !f->interp ||
        f->interp->create(&f->t) != WEFT_OK)
        return -1;
    weft_error_clear();
    *state = f;
    return 0;
}

static H_UNUSED int fx_teardown(void **state)
{
    fx *f = *state;
    if (f->k) f->interp->kernel_destroy(f->k);
    if (f->t) f->interp->destroy(f->t);
    weft_schedule_destroy(f->s);
    weft_arena_destroy(f->a);
    weft_graph_destroy(f->g);
    for (int i = 0; i < f->n_bufs; i++) weft_rt_free(f->bufs[i]);
    free(f);
    return 0;
}

/* A 64-byte aligned buffer of n bytes owned by the fixture. */
static H_UNUSED void *fx_alloc(fx *f, size_t n)
{
    assert_true(f->n_bufs < MAX_BUFS);
    void *p = weft_rt_alloc(n ? n : 1);
    assert_non_null(p);
    memset(p, 0, n ? n : 1);
    f->bufs[f->n_bufs++] = p;
    return p;
}

/* Deterministic floats in [-1, 1). */
static H_UNUSED float *fx_rand(fx *f, int64_t n)
{
    float *p = fx_alloc(f, sizeof *p * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        f->seed = f->seed * 1664525u + 1013904223u;
        p[i] = (float)((f->seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    return p;
}

static H_UNUSED weft_value fx_input(fx *f, const char *name, weft_type t, int ndim, const int64_t *shape)
{
    weft_value v = -1;
    assert_int_equal(weft_graph_add_input(f->g, name, t, ndim, shape, &v), WEFT_OK);
    return v;
}

static H_UNUSED weft_value fx_const_i64(fx *f, const char *name, int n, const int64_t *vals)
{
    weft_value v = -1;
    assert_int_equal(weft_graph_add_constant(f->g, name, WEFT_TYPE_INT64, 1, (int64_t[]){n}, vals, &v), WEFT_OK);
    return v;
}

static H_UNUSED weft_value fx_const_f32(fx *f, const char *name, int ndim, const int64_t *shape, const float *vals)
{
    weft_value v = -1;
    assert_int_equal(weft_graph_add_constant(f->g, name, WEFT_TYPE_FLOAT32, ndim, shape, vals, &v), WEFT_OK);
    return v;
}

/* Adds an op that must succeed; returns output 0. */
static H_UNUSED weft_value fx_op(fx *f, const char *op, const char *name, int n_in, const weft_value *in, int n_attrs,
                                 const weft_attr *attrs)
{
    weft_value out = -1;
    weft_status st = weft_graph_add_op(f->g, op, name, n_in, in, n_attrs, attrs, 1, &out);
    if (st != WEFT_OK) fail_msg("%s: %s", op, weft_last_error());
    return out;
}

static H_UNUSED void fx_assert_shape_g(const weft_graph *g, weft_value v, int ndim, const int64_t *shape)
{
    int64_t s[8];
    int nd = weft_graph_value_shape(g, v, s);
    assert_int_equal(nd, ndim);
    for (int d = 0; d < ndim; d++)
        if (s[d] != shape[d]) fail_msg("dim %d: %lld, expected %lld", d, (long long)s[d], (long long)shape[d]);
}

static H_UNUSED void fx_assert_shape(fx *f, weft_value v, int ndim, const int64_t *shape)
{
    fx_assert_shape_g(f->g, v, ndim, shape);
}

static H_UNUSED void fx_assert_error(weft_status got, weft_status want, const char *s1, const char *s2)
{
    const char *msg = weft_last_error();
    if (got != want) fail_msg("status %s, expected %s (%s)", weft_status_name(got), weft_status_name(want), msg);
    if (s1 && !strstr(msg, s1)) fail_msg("error '%s' does not mention '%s'", msg, s1);
    if (s2 && !strstr(msg, s2)) fail_msg("error '%s' does not mention '%s'", msg, s2);
}

/* The tensor of the last kernel named name, or NULL. */
static H_UNUSED const weft_tensor *fx_tensor(fx *f, const char *name)
{
    for (int i = 0; f->f && i < f->f->n_tensors; i++)
        if (strcmp(f->f->tensors[i]->name, name) == 0) return f->f->tensors[i];
    return NULL;
}

/* Runs the last node of the graph alone: data[i] is input i's data (NULL: a constant's own
 * data). Returns the output buffers in out[k] (fixture-owned). The kernel's output is named
 * "y" (stages "y.pad", ...). */
static H_UNUSED void fx_run_last(fx *f, const void *const *data, void **out)
{
    weft_graph *g = f->g;
    assert_true(g->n_nodes > 0);
    const weft_gnode *n = &g->nodes[g->n_nodes - 1];
    const weft_tensor *ins[WEFT_NODE_MAX_IO] = {0}, *ph[WEFT_NODE_MAX_IO];
    void *args[2 * WEFT_NODE_MAX_IO];
    int n_ph = 0;
    for (int i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i] < 0) continue;
        const weft_gvalue *v = &g->values[n->inputs[i]];
        char nm[16];
        snprintf(nm, sizeof nm, "in%d", i);
        weft_tensor *p = weft_te_placeholder(f->a, nm, v->dtype, v->ndim, v->shape);
        assert_non_null(p);
        ins[i] = p;
        const void *src = data && data[i] ? data[i] : v->data;
        assert_non_null(src);
        void *buf = fx_alloc(f, weft_gvalue_bytes(v));
        memcpy(buf, src, weft_gvalue_bytes(v));
        ph[n_ph] = p;
        args[n_ph++] = buf;
    }
    memset(f->outs, 0, sizeof f->outs);
    weft_status st = n->def->compute(f->a, g, n, "y", ins, f->outs);
    if (st != WEFT_OK) fail_msg("compute: %s", weft_last_error());
    /* declare only the placeholders the kernel reads (Pow with a constant exponent skips it) */
    weft_te_func *all = NULL;
    st = weft_te_func_create(f->a, "probe", n_ph, ph, n->n_outputs, (const weft_tensor *const *)f->outs, &all);
    if (st != WEFT_OK) fail_msg("te_func: %s", weft_last_error());
    const weft_tensor *used[WEFT_NODE_MAX_IO];
    void *uargs[2 * WEFT_NODE_MAX_IO];
    int n_used = 0;
    for (int i = 0; i < n_ph; i++)
        for (int j = 0; j < all->n_tensors; j++)
            if (all->tensors[j] == ph[i]) {
                used[n_used] = ph[i];
                uargs[n_used++] = args[i];
                break;
            }
    st = weft_te_func_create(f->a, n->op_type, n_used, used, n->n_outputs, (const weft_tensor *const *)f->outs, &f->f);
    if (st != WEFT_OK) fail_msg("te_func: %s", weft_last_error());
    for (int k = 0; k < n->n_outputs; k++) {
        const weft_gvalue *v = &g->values[n->outputs[k]];
        assert_int_equal(f->outs[k]->ndim, v->ndim);
        for (int d = 0; d < v->ndim; d++) assert_int_equal(f->outs[k]->shape[d], v->shape[d]);
        assert_true(weft_dtype_eq(f->outs[k]->dtype, v->dtype));
        out[k] = fx_alloc(f, weft_gvalue_bytes(v));
        memset(out[k], 0xff, weft_gvalue_bytes(v)); /* NaN / -1: every element must be written */
        uargs[n_used + k] = out[k];
    }
    if (f->k) f->interp->kernel_destroy(f->k);
    f->k = NULL;
    weft_schedule_destroy(f->s);
    f->s = NULL;
    if ((st = weft_schedule_create(f->f, &f->s)) != WEFT_OK) fail_msg("schedule: %s", weft_last_error());
    if ((st = weft_target_build(f->interp, f->t, f->s, f->a, NULL, &f->k)) != WEFT_OK)
        fail_msg("build: %s", weft_last_error());
    if ((st = f->interp->run(f->k, uargs, NULL)) != WEFT_OK) fail_msg("run: %s", weft_last_error());
}

/* Runs the last node with one output and returns it. */
static H_UNUSED void *fx_run1(fx *f, const void *const *data)
{
    void *out[WEFT_NODE_MAX_IO] = {0};
    fx_run_last(f, data, out);
    return out[0];
}

static H_UNUSED void fx_check_f32(const float *got, const double *ref, int64_t n, double tol)
{
    for (int64_t i = 0; i < n; i++) {
        double scale = fabs(ref[i]) > 1 ? fabs(ref[i]) : 1;
        if (!(fabs((double)got[i] - ref[i]) <= tol * scale))
            fail_msg("element %lld: got %.9g, expected %.9g", (long long)i, (double)got[i], ref[i]);
    }
}

static H_UNUSED void fx_check_i64(const int64_t *got, const int64_t *ref, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (got[i] != ref[i])
            fail_msg("element %lld: got %lld, expected %lld", (long long)i, (long long)got[i], (long long)ref[i]);
}

/* Attribute constructors. */
static H_UNUSED weft_attr attr_i(const char *name, int64_t v)
{
    return (weft_attr){.name = name, .kind = WEFT_ATTR_INT, .i = v};
}
static H_UNUSED weft_attr attr_f(const char *name, double v)
{
    return (weft_attr){.name = name, .kind = WEFT_ATTR_FLOAT, .f = v};
}
static H_UNUSED weft_attr attr_is(const char *name, int n, const int64_t *v)
{
    return (weft_attr){.name = name, .kind = WEFT_ATTR_INTS, .n = n, .ints = v};
}
static H_UNUSED weft_attr attr_s(const char *name, const char *s)
{
    return (weft_attr){.name = name, .kind = WEFT_ATTR_STRING, .s = s};
}

#define VALS(...) ((const weft_value[]){__VA_ARGS__})
#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define ATTRS(...) ((const weft_attr[]){__VA_ARGS__})
#define NARGS(T, ...) ((int)(sizeof((T[]){__VA_ARGS__}) / sizeof(T)))

#endif
