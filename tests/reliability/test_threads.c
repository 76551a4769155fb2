/* The C API from several threads at once (run under ThreadSanitizer by scripts/tsan.sh):
 *   - one model per thread: each thread loads, compiles, runs and destroys its own mlp;
 *   - one model shared through weft_model_run (documented as one run at a time, behind a lock);
 *   - one model shared through one weft_context per thread (runs at the same time);
 *   - a dynamic-batch model shared through contexts, each thread at its own batch size (the
 *     per-shape compile cache is filled concurrently).
 * Every output is compared with PyTorch's (max abs error 1e-4). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/api_test_util.h" /* read_floats */
#include "weft/model.h"
#include "weft/onnx.h"

#define DATA "tests/data/models/"
enum { THREADS = 4, RUNS = 20 };

typedef struct ref {
    float *x, *want;
    size_t nx, ny;
} ref;

typedef struct job {
    const ref *r;
    weft_model *m; /* shared model, or NULL: the thread compiles its own */
    int mode;      /* 0 own model, 1 weft_model_run on the shared one, 2 a context on the shared one */
    atomic_int *bad;
    char err[256];
} job;

static bool close_to(const float *y, const ref *r)
{
    for (size_t i = 0; i < r->ny / sizeof(float); i++)
        if (!(fabsf(y[i] - r->want[i]) <= 1e-4f)) return false;
    return true;
}

static weft_model *compile_mlp(const char *file)
{
    weft_graph *g = NULL;
    weft_model *m = NULL;
    weft_model_options o = weft_model_options_default();
    o.threads = 2;
    if (weft_onnx_load(file, &g) == WEFT_OK) (void)weft_model_compile(g, &o, &m);
    weft_graph_destroy(g);
    return m;
}

static void *worker(void *arg)
{
    job *j = arg;
    weft_model *m = j->mode == 0 ? compile_mlp(DATA "mlp.onnx") : j->m;
    weft_context *c = NULL;
    float *y = malloc(j->r->ny);
    weft_status st = m && y ? WEFT_OK : WEFT_ERR_NOMEM;
    if (st == WEFT_OK && j->mode == 2) st = weft_context_create(m, &c);
    for (int i = 0; st == WEFT_OK && i < RUNS; i++) {
        memset(y, 0, j->r->ny);
        const void *in[1] = {j->r->x};
        void *out[1] = {y};
        size_t ib[1] = {j->r->nx}, ob[1] = {j->r->ny};
        st = j->mode == 2 ? weft_context_run(c, 1, in, ib, 1, out, ob) : weft_model_run_sized(m, 1, in, ib, 1, out, ob);
        if (st == WEFT_OK && !close_to(y, j->r)) {
            snprintf(j->err, sizeof j->err, "run %d: wrong output", i);
            atomic_fetch_add(j->bad, 1);
            break;
        }
    }
    if (st != WEFT_OK) {
        snprintf(j->err, sizeof j->err, "%s: %s", weft_status_name(st), weft_last_error());
        atomic_fetch_add(j->bad, 1);
    }
    weft_context_destroy(c);
    if (j->mode == 0) weft_model_destroy(m);
    free(y);
    return NULL;
}

static void run_threads(const ref *r, weft_model *shared, int mode)
{
    atomic_int bad = 0;
    job jobs[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (job){.r = r, .m = shared, .mode = mode, .bad = &bad};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &jobs[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < THREADS; i++)
        if (jobs[i].err[0]) fprintf(stderr, "thread %d (mode %d): %s\n", i, mode, jobs[i].err);
    assert_int_equal(atomic_load(&bad), 0);
}

static ref load_ref(const char *in, const char *out)
{
    ref r;
    r.x = read_floats(in, &r.nx);
    r.want = read_floats(out, &r.ny);
    return r;
}

static void test_model_per_thread(void **state)
{
    (void)state;
    ref r = load_ref(DATA "mlp.input.bin", DATA "mlp.output.bin");
    run_threads(&r, NULL, 0);
    free(r.x);
    free(r.want);
}

static void test_shared_model(void **state)
{
    (void)state;
    ref r = load_ref(DATA "mlp.input.bin", DATA "mlp.output.bin");
    weft_model *m = compile_mlp(DATA "mlp.onnx");
    assert_non_null(m);
    run_threads(&r, m, 1); /* weft_model_run: serialized by the model's lock */
    run_threads(&r, m, 2); /* a context per thread: concurrent */
    weft_model_destroy(m);
    free(r.x);
    free(r.want);
}

/* Threads at two batch sizes share one dynamic model: the first run at a new shape compiles
 * it into the model's cache while other threads run. */
typedef struct dyn_job {
    weft_model *m;
    const ref *r;
    atomic_int *bad;
} dyn_job;

static void *dyn_worker(void *arg)
{
    dyn_job *j = arg;
    weft_context *c = NULL;
    float *y = malloc(j->r->ny);
    weft_status st = y ? weft_context_create(j->m, &c) : WEFT_ERR_NOMEM;
    for (int i = 0; st == WEFT_OK && i < RUNS / 2; i++) {
        const void *in[1] = {j->r->x};
        void *out[1] = {y};
        size_t ib[1] = {j->r->nx}, ob[1] = {j->r->ny};
        st = weft_context_run(c, 1, in, ib, 1, out, ob);
        if (st == WEFT_OK && !close_to(y, j->r)) st = WEFT_ERR_INTERNAL;
    }
    if (st != WEFT_OK) {
        fprintf(stderr, "dynamic: %s: %s\n", weft_status_name(st), weft_last_error());
        atomic_fetch_add(j->bad, 1);
    }
    weft_context_destroy(c);
    free(y);
    return NULL;
}

static void test_shared_dynamic_model(void **state)
{
    (void)state;
    ref r1 = load_ref(DATA "mlp_dyn.b1.input.bin", DATA "mlp_dyn.b1.output.bin");
    ref r32 = load_ref(DATA "mlp_dyn.b32.input.bin", DATA "mlp_dyn.b32.output.bin");
    weft_model *m = compile_mlp(DATA "mlp_dyn.onnx");
    assert_non_null(m);
    atomic_int bad = 0;
    dyn_job jobs[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (dyn_job){.m = m, .r = i % 2 ? &r32 : &r1, .bad = &bad};
        assert_int_equal(pthread_create(&th[i], NULL, dyn_worker, &jobs[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&bad), 0);
    weft_model_destroy(m);
    free(r1.x);
    free(r1.want);
    free(r32.x);
    free(r32.want);
}

int main(void)
{
    (void)expect_error;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_per_thread),
        cmocka_unit_test(test_shared_model),
        cmocka_unit_test(test_shared_dynamic_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
