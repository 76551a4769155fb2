/* The model API (include/weft/model.h): queries by index and name, size-checked runs, tuned
 * compile from the bundled database, symbolic dimensions (the dynamic-batch MLP at batch 1 and
 * 32 against PyTorch), contexts run from two threads at once, and bad input to every function.
 * Numerics: max |weft - torch| <= 1e-4 * max(1, max |torch|). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_internal.h"
#include "runtime/runtime.h"
#include "weft/model.h"
#include "api_test_util.h"
#include "weft/onnx.h"

#define DATA "tests/data/models/"
#define ROW (512 * sizeof(float))


static double max_err(const float *y, const float *ref, size_t n, double *tol)
{
    double err = 0, scale = 1;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)y[i] - ref[i]);
        if (!(d <= err)) err = d;
        if (fabs(ref[i]) > scale) scale = fabs(ref[i]);
    }
    *tol = 1e-4 * scale;
    return err;
}


static weft_model *load(const char *file, const char *db, int threads)
{
    weft_graph *g = NULL;
    weft_model *m = NULL;
    assert_int_equal(weft_onnx_load(file, &g), WEFT_OK);
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    weft_status rc = db ? weft_model_compile_tuned(g, &o, db, &m, NULL) : weft_model_compile(g, &o, &m);
    if (rc != WEFT_OK) fprintf(stderr, "%s\n", weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    weft_graph_destroy(g);
    return m;
}

/* Runs m on the batch-B reference files of `stem` and checks against PyTorch. */
static void check_run(weft_model *m, weft_context *c, const char *stem)
{
    char p[256];
    size_t nx, nr;
    snprintf(p, sizeof p, DATA "%s.input.bin", stem);
    float *x = read_floats(p, &nx);
    snprintf(p, sizeof p, DATA "%s.output.bin", stem);
    float *ref = read_floats(p, &nr);
    float *y = calloc(1, nr);
    weft_status rc = c ? weft_context_run(c, 1, (const void *[]){x}, &nx, 1, (void *[]){y}, &nr)
                       : weft_model_run_sized(m, 1, (const void *[]){x}, &nx, 1, (void *[]){y}, &nr);
    if (rc != WEFT_OK) fprintf(stderr, "%s\n", weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    double tol, err = max_err(y, ref, nr / 4, &tol);
    printf("%s: max |weft - torch| = %.3g (tolerance %.3g)\n", stem, err, tol);
    assert_true(err <= tol);
    free(x);
    free(ref);
    free(y);
}

static void test_query(void **state)
{
    (void)state;
    weft_model *m = load(DATA "mlp.onnx", NULL, 1);
    assert_int_equal(weft_model_n_inputs(m), 1);
    assert_int_equal(weft_model_n_outputs(m), 1);
    assert_false(weft_model_is_dynamic(m));
    weft_tensor_info t;
    assert_int_equal(weft_model_input_info(m, 0, &t), WEFT_OK);
    assert_string_equal(t.name, "input");
    assert_int_equal(t.dtype, WEFT_TYPE_FLOAT32);
    assert_int_equal(t.ndim, 2);
    assert_int_equal(t.shape[0], 32);
    assert_int_equal(t.shape[1], 512);
    assert_null(t.dim_names[0]);
    assert_int_equal(t.bytes, 32 * ROW);
    assert_int_equal(weft_model_output_info(m, 0, &t), WEFT_OK);
    assert_string_equal(t.name, "output");
    assert_int_equal(t.bytes, 32 * ROW);
    int i = -7;
    assert_int_equal(weft_model_find_input(m, "input", &i), WEFT_OK);
    assert_int_equal(i, 0);
    assert_int_equal(weft_model_find_output(m, "output", &i), WEFT_OK);
    assert_int_equal(i, 0);
    /* bad input */
    expect_error(weft_model_input_info(m, 1, &t), WEFT_ERR_INVALID_ARG, "index 1 out of range (the model has 1 inputs)");
    assert_null(t.name); /* cleared */
    expect_error(weft_model_output_info(m, -1, &t), WEFT_ERR_INVALID_ARG, "index -1 out of range");
    expect_error(weft_model_input_info(NULL, 0, &t), WEFT_ERR_INVALID_ARG, "NULL argument");
    expect_error(weft_model_input_info(m, 0, NULL), WEFT_ERR_INVALID_ARG, "NULL argument");
    expect_error(weft_model_find_input(m, "x", &i), WEFT_ERR_INVALID_ARG, "no input named 'x' (inputs: 'input')");
    assert_int_equal(i, -1);
    expect_error(weft_model_find_output(m, "input", &i), WEFT_ERR_INVALID_ARG, "no output named 'input' (outputs: 'output')");
    expect_error(weft_model_find_input(m, NULL, &i), WEFT_ERR_INVALID_ARG, "NULL argument");
    expect_error(weft_model_find_output(NULL, "output", &i), WEFT_ERR_INVALID_ARG, "NULL argument");
    assert_int_equal(weft_model_n_inputs(NULL), 0);
    assert_int_equal(weft_model_n_outputs(NULL), 0);
    assert_false(weft_model_is_dynamic(NULL));
    weft_model_destroy(m);
}

static void test_run_sized(void **state)
{
    (void)state;
    weft_model *m = load(DATA "mlp.onnx", NULL, 2);
    check_run(m, NULL, "mlp");
    size_t nx;
    float *x = read_floats(DATA "mlp.input.bin", &nx), *y = calloc(1, 32 * ROW);
    size_t small = nx - 4, out = 32 * ROW;
    const void *in[1] = {x};
    void *o[1] = {y};
    expect_error(weft_model_run_sized(m, 1, in, &small, 1, o, &out), WEFT_ERR_SHAPE,
                 "input 'input' (float32 [32, 512]) needs 65536 bytes, the buffer has 65532");
    size_t big = out + 1;
    expect_error(weft_model_run_sized(m, 1, in, &nx, 1, o, &big), WEFT_ERR_SHAPE,
                 "output 'output' (float32 [32, 512]) needs 65536 bytes, the buffer has 65537");
    expect_error(weft_model_run_sized(m, 2, in, &nx, 1, o, &out), WEFT_ERR_INVALID_ARG, "2 inputs given, the model has 1");
    expect_error(weft_model_run_sized(m, 1, in, &nx, 0, o, &out), WEFT_ERR_INVALID_ARG, "0 outputs given, the model has 1");
    expect_error(weft_model_run_sized(m, 1, (const void *[]){NULL}, &nx, 1, o, &out), WEFT_ERR_INVALID_ARG,
                 "input 0 ('input') is NULL");
    expect_error(weft_model_run_sized(m, 1, in, &nx, 1, (void *[]){NULL}, &out), WEFT_ERR_INVALID_ARG,
                 "output 0 ('output') is NULL");
    expect_error(weft_model_run_sized(m, 1, in, NULL, 1, o, &out), WEFT_ERR_INVALID_ARG, "NULL input array");
    expect_error(weft_model_run_sized(m, 1, in, &nx, 1, o, NULL), WEFT_ERR_INVALID_ARG, "NULL output array");
    expect_error(weft_model_run_sized(NULL, 1, in, &nx, 1, o, &out), WEFT_ERR_INVALID_ARG, "NULL model");
    /* a static model ignores nothing: set_dim has no symbol to bind */
    weft_context *c = NULL;
    assert_int_equal(weft_context_create(m, &c), WEFT_OK);
    expect_error(weft_context_set_dim(c, "batch", 4), WEFT_ERR_INVALID_ARG, "the model has no symbolic dimensions");
    weft_tensor_info t;
    assert_int_equal(weft_context_output_info(c, 0, &t), WEFT_OK);
    assert_int_equal(t.bytes, 32 * ROW);
    weft_context_destroy(c);
    expect_error(weft_context_create(NULL, &c), WEFT_ERR_INVALID_ARG, "NULL argument");
    assert_null(c);
    expect_error(weft_context_create(m, NULL), WEFT_ERR_INVALID_ARG, "NULL argument");
    expect_error(weft_context_run(NULL, 1, in, &nx, 1, o, &out), WEFT_ERR_INVALID_ARG, "NULL context");
    weft_context_destroy(NULL);
    free(x);
    free(y);
    weft_model_destroy(m);
}

static void test_tuned(void **state)
{
    (void)state;
    weft_graph *g = NULL;
    weft_model *m = NULL;
    /* the same records must serve both compiles: no timing against the defaults, whose
     * outcome depends on the load (tests/tuner/test_nearest.c covers the timing) */
    setenv("WEFT_OWN_TIMING", "0", 1);
    setenv("WEFT_NEAREST_TIMING", "0", 1);
    assert_int_equal(weft_onnx_load(DATA "mlp.onnx", &g), WEFT_OK);
    weft_model_options o = weft_model_options_default();
    int n_tuned = -1;
    assert_int_equal(weft_model_compile_tuned(g, &o, DATA "tuned.db", &m, &n_tuned), WEFT_OK);
    printf("mlp with tuned.db: %d of %d kernels from records\n", n_tuned, weft_model_n_kernels(m));
    assert_true(n_tuned >= 0 && n_tuned <= weft_model_n_kernels(m));
    check_run(m, NULL, "mlp");
    weft_model_destroy(m);
    m = NULL;
    /* the dynamic-batch MLP at batch 32 has the same kernels: each shape's kernels look up the
     * same records (keyed by the concrete kernel) */
    weft_graph *dg = NULL;
    assert_int_equal(weft_onnx_load(DATA "mlp_dyn.onnx", &dg), WEFT_OK);
    int n_dyn = -1;
    assert_int_equal(weft_model_compile_tuned(dg, &o, DATA "tuned.db", &m, &n_dyn), WEFT_OK);
    weft_graph_destroy(dg);
    assert_int_equal(n_dyn, 0); /* nothing compiled yet */
    check_run(m, NULL, "mlp_dyn.b32");
    assert_int_equal(m->n_inst, 1);
    int from_db = 0;
    for (int k = 0; k < m->inst[0]->n_kernels; k++) from_db += strcmp(m->inst[0]->kernels[k].schedule_src, "default") != 0;
    printf("mlp_dyn at batch 32 with tuned.db: %d of %d kernels from records\n", from_db, m->inst[0]->n_kernels);
    assert_int_equal(from_db, n_tuned);
    weft_model_destroy(m);
    unsetenv("WEFT_OWN_TIMING");
    unsetenv("WEFT_NEAREST_TIMING");
    m = NULL;
    expect_error(weft_model_compile_tuned(g, &o, "/nonexistent/dir/x.db", &m, &n_tuned), WEFT_ERR_IO,
                 "cannot open schedule database /nonexistent/dir/x.db");
    assert_null(m);
    expect_error(weft_model_compile_tuned(g, &o, DATA "mlp.input.bin", &m, &n_tuned), WEFT_ERR_DB, "mlp.input.bin");
    assert_null(m);
    expect_error(weft_model_compile_tuned(g, &o, NULL, &m, NULL), WEFT_ERR_INVALID_ARG, "NULL argument");
    expect_error(weft_model_compile_tuned(NULL, &o, DATA "tuned.db", &m, NULL), WEFT_ERR_INVALID_ARG, "NULL argument");
    weft_graph_destroy(g);
}

static void test_dynamic(void **state)
{
    (void)state;
    weft_model *m = load(DATA "mlp_dyn.onnx", NULL, 2);
    assert_true(weft_model_is_dynamic(m));
    weft_tensor_info t;
    assert_int_equal(weft_model_input_info(m, 0, &t), WEFT_OK);
    assert_int_equal(t.ndim, 2);
    assert_int_equal(t.shape[0], -1);
    assert_string_equal(t.dim_names[0], "batch");
    assert_int_equal(t.shape[1], 512);
    assert_int_equal(t.bytes, 0);
    assert_int_equal(weft_model_output_info(m, 0, &t), WEFT_OK);
    assert_int_equal(t.ndim, 2);
    assert_int_equal(t.shape[0], -1);
    assert_string_equal(t.dim_names[0], "batch");
    assert_int_equal(t.shape[1], 512);
    check_run(m, NULL, "mlp_dyn.b1");
    check_run(m, NULL, "mlp_dyn.b32");
    check_run(m, NULL, "mlp_dyn.b1"); /* from the cache */
    assert_int_equal(m->n_inst, 2);
    assert_ptr_equal(m->inst[0]->pool, m->pool); /* one thread pool for every shape */
    assert_ptr_equal(m->inst[1]->pool, m->pool);
    weft_model_print(m, stdout);

    /* contexts: bindings, prepare, output info */
    weft_context *c = NULL;
    assert_int_equal(weft_context_create(m, &c), WEFT_OK);
    expect_error(weft_context_output_info(c, 0, &t), WEFT_ERR_SHAPE, "has not been prepared");
    expect_error(weft_context_set_dim(c, "seq", 4), WEFT_ERR_INVALID_ARG, "no input has a dimension named 'seq' ('batch')");
    expect_error(weft_context_set_dim(c, "batch", 0), WEFT_ERR_INVALID_ARG, "'batch' = 0 (must be >= 1)");
    expect_error(weft_context_set_dim(c, NULL, 4), WEFT_ERR_INVALID_ARG, "NULL argument");
    expect_error(weft_context_prepare(c, 1, NULL), WEFT_ERR_SHAPE, "the size of dimension 'batch' is unknown");
    assert_int_equal(weft_context_set_dim(c, "batch", 4), WEFT_OK);
    assert_int_equal(weft_context_prepare(c, 1, NULL), WEFT_OK);
    assert_int_equal(weft_context_output_info(c, 0, &t), WEFT_OK);
    assert_int_equal(t.shape[0], 4);
    assert_int_equal(t.bytes, 4 * ROW);
    expect_error(weft_context_output_info(c, 1, &t), WEFT_ERR_INVALID_ARG, "index 1 out of range");
    expect_error(weft_context_output_info(NULL, 0, &t), WEFT_ERR_INVALID_ARG, "NULL argument");
    expect_error(weft_context_output_info(c, 0, NULL), WEFT_ERR_INVALID_ARG, "NULL argument");
    assert_int_equal(m->n_inst, 3);
    /* a buffer that disagrees with the binding names both */
    size_t nx;
    float *x = read_floats(DATA "mlp_dyn.b32.input.bin", &nx), *y = calloc(1, 32 * ROW);
    size_t out = 32 * ROW;
    expect_error(weft_context_run(c, 1, (const void *[]){x}, &nx, 1, (void *[]){y}, &out), WEFT_ERR_SHAPE,
                 "input 'input' needs 8192 bytes at these sizes, the buffer has 65536; batch = 4 as bound");
    expect_error(weft_context_prepare(c, 2, &nx), WEFT_ERR_INVALID_ARG, "2 inputs given, the model has 1");
    expect_error(weft_context_prepare(NULL, 1, &nx), WEFT_ERR_INVALID_ARG, "NULL context");
    weft_context_destroy(c);
    /* wrong shape for the dynamic dim: not a whole number of rows */
    size_t ragged = 3000;
    expect_error(weft_model_run_sized(m, 1, (const void *[]){x}, &ragged, 1, (void *[]){y}, &out), WEFT_ERR_SHAPE,
                 "input 'input': 3000 bytes is not a whole number of 2048-byte slices along dimension 'batch'");
    size_t zero = 0;
    expect_error(weft_model_run_sized(m, 1, (const void *[]){x}, &zero, 1, (void *[]){y}, &out), WEFT_ERR_SHAPE,
                 "dimension 'batch'");
    /* the output must match the resolved batch */
    size_t in16 = 16 * ROW;
    expect_error(weft_model_run_sized(m, 1, (const void *[]){x}, &in16, 1, (void *[]){y}, &out), WEFT_ERR_SHAPE,
                 "output 'output' (float32 [16, 512]) needs 32768 bytes, the buffer has 65536");
    expect_error(weft_model_run(m, (const void *[]){x}, (void *[]){y}), WEFT_ERR_SHAPE, "symbolic dimensions");
    free(x);
    free(y);
    weft_model_destroy(m);
}

/* Two symbols in one input (a small transformer, [batch, seq, 64]): batch bound by name, seq
 * from the byte size; Shape -> Gather -> Concat -> Reshape folds at each concrete size. */
static void test_dynamic_two_symbols(void **state)
{
    (void)state;
    weft_model *m = load(DATA "tfs_dyn.onnx", NULL, 2);
    weft_tensor_info t;
    assert_int_equal(weft_model_input_info(m, 0, &t), WEFT_OK);
    assert_int_equal(t.ndim, 3);
    assert_string_equal(t.dim_names[0], "batch");
    assert_string_equal(t.dim_names[1], "seq");
    assert_int_equal(t.shape[2], 64);
    assert_int_equal(weft_model_output_info(m, 0, &t), WEFT_OK);
    assert_int_equal(t.ndim, 3);
    assert_string_equal(t.dim_names[0], "batch");
    assert_string_equal(t.dim_names[1], "seq");
    assert_int_equal(t.shape[2], 64);
    /* bytes alone cannot split batch x seq */
    size_t nx;
    float *x = read_floats(DATA "tfs_dyn.b2s24.input.bin", &nx), *y = calloc(1, nx);
    expect_error(weft_model_run_sized(m, 1, (const void *[]){x}, &nx, 1, (void *[]){y}, &nx), WEFT_ERR_SHAPE,
                 "the size of dimension 'batch' is unknown");
    free(x);
    free(y);
    weft_context *c = NULL;
    assert_int_equal(weft_context_create(m, &c), WEFT_OK);
    assert_int_equal(weft_context_set_dim(c, "batch", 1), WEFT_OK);
    check_run(m, c, "tfs_dyn.b1s8");
    assert_int_equal(weft_context_set_dim(c, "batch", 2), WEFT_OK);
    check_run(m, c, "tfs_dyn.b2s24");
    assert_int_equal(weft_context_output_info(c, 0, &t), WEFT_OK);
    assert_int_equal(t.shape[0], 2);
    assert_int_equal(t.shape[1], 24);
    assert_int_equal(m->n_inst, 2);
    weft_context_destroy(c);
    weft_model_destroy(m);
}

static void test_symbolic_graph(void **state)
{
    (void)state;
    weft_graph *g = NULL, *h = NULL;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    weft_value x, y, r;
    const char *names[2] = {"n", NULL};
    expect_error(weft_graph_add_input_symbolic(g, "x", WEFT_TYPE_FLOAT32, 2, (int64_t[]){-1, 3}, (const char *[]){NULL, NULL}, &x),
                 WEFT_ERR_INVALID_ARG, "dimension 0 is -1 (symbolic) but has no name");
    expect_error(weft_graph_add_input_symbolic(g, "x", WEFT_TYPE_FLOAT32, 2, (int64_t[]){5, 3}, names, &x), WEFT_ERR_INVALID_ARG,
                 "dimension 0 has size 5 and a name 'n'");
    expect_error(weft_graph_add_input_symbolic(g, "x", WEFT_TYPE_FLOAT32, 2, (int64_t[]){-1, 0}, names, &x), WEFT_ERR_SHAPE,
                 "dimension 1 is 0");
    expect_error(weft_graph_add_input_symbolic(g, "x", WEFT_TYPE_FLOAT32, 2, NULL, names, &x), WEFT_ERR_INVALID_ARG, "NULL");
    expect_error(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 2, NULL, &x), WEFT_ERR_INVALID_ARG, "NULL argument");
    expect_error(weft_graph_add_constant(g, "c", WEFT_TYPE_FLOAT32, 1, NULL, names, &x), WEFT_ERR_INVALID_ARG, "NULL argument");
    expect_error(weft_graph_add_input_symbolic(g, "x", WEFT_TYPE_FLOAT32, 9, (int64_t[9]){0}, (const char *[9]){0}, &x),
                 WEFT_ERR_UNSUPPORTED, "9 dimensions");
    assert_int_equal(weft_graph_add_input_symbolic(g, "x", WEFT_TYPE_FLOAT32, 2, (int64_t[]){-1, 3}, names, &x), WEFT_OK);
    assert_int_equal(weft_graph_add_input_symbolic(g, "y", WEFT_TYPE_FLOAT32, 2, (int64_t[]){-1, 3}, names, &y), WEFT_OK);
    assert_int_equal(weft_graph_binary(g, "Add", x, y, &r), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, r, "r"), WEFT_OK);
    assert_true(weft_graph_is_symbolic(g));
    assert_false(weft_graph_is_symbolic(NULL));
    assert_string_equal(weft_graph_value_dim_name(g, x, 0), "n");
    assert_null(weft_graph_value_dim_name(g, x, 1));
    assert_null(weft_graph_value_dim_name(g, x, 8));
    assert_null(weft_graph_value_dim_name(g, 999, 0));
    assert_null(weft_graph_value_dim_name(NULL, x, 0));
    /* the sum's shape is unknown until specialized */
    int64_t unknown[8];
    assert_int_equal(weft_graph_value_shape(g, r, unknown), -1);
    /* the same symbol in two inputs is one size */
    expect_error(weft_graph_specialize(g, 0, NULL, NULL, (size_t[]){24, 36}, &h), WEFT_ERR_SHAPE,
                 "input 'y' needs 24 bytes at these sizes, the buffer has 36; n = 2 from input 'x'");
    assert_null(h);
    expect_error(weft_graph_specialize(g, 1, (const char *[]){"m"}, (int64_t[]){2}, NULL, &h), WEFT_ERR_INVALID_ARG,
                 "no input has a dimension named 'm'");
    expect_error(weft_graph_specialize(g, 1, (const char *[]){"n"}, (int64_t[]){-3}, NULL, &h), WEFT_ERR_INVALID_ARG,
                 "'n' = -3 (must be >= 1)");
    expect_error(weft_graph_specialize(NULL, 0, NULL, NULL, NULL, &h), WEFT_ERR_INVALID_ARG, "NULL argument");
    assert_int_equal(weft_graph_specialize(g, 1, (const char *[]){"n"}, (int64_t[]){5}, NULL, &h), WEFT_OK);
    int64_t shape[8];
    assert_false(weft_graph_is_symbolic(h));
    assert_int_equal(weft_graph_value_shape(h, weft_graph_output(h, 0), shape), 2);
    assert_int_equal(shape[0], 5);
    assert_int_equal(shape[1], 3);
    weft_graph_destroy(h);
    /* compiled per shape, run on x + y */
    weft_model *m = NULL;
    assert_int_equal(weft_model_compile(g, NULL, &m), WEFT_OK);
    float a[12], b[12], o[12];
    for (int i = 0; i < 12; i++) a[i] = (float)i, b[i] = 100.0f * (float)i;
    size_t inb[2] = {sizeof a, sizeof b}, outb = sizeof o;
    assert_int_equal(weft_model_run_sized(m, 2, (const void *[]){a, b}, inb, 1, (void *[]){o}, &outb), WEFT_OK);
    for (int i = 0; i < 12; i++) assert_true(o[i] == 101.0f * (float)i);
    weft_model_destroy(m);
    weft_graph_destroy(g);
}

/* ---- two threads, one model ------------------------------------------------------------- */

typedef struct worker {
    weft_model *m;
    bool own_context;      /* a context per thread, or the model's own (locked) runs */
    const float *x;
    const float *ref;
    size_t in_bytes, out_bytes;
    int runs;
    int bad;               /* runs whose output differed from ref */
    weft_status rc;
    double seconds;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    weft_context *c = NULL;
    float *y = malloc(w->out_bytes);
    if (w->own_context) w->rc = weft_context_create(w->m, &c);
    double t0 = weft_rt_now();
    for (int r = 0; r < w->runs && w->rc == WEFT_OK; r++) {
        memset(y, 0xff, w->out_bytes);
        const void *in[1] = {w->x};
        void *out[1] = {y};
        w->rc = c ? weft_context_run(c, 1, in, &w->in_bytes, 1, out, &w->out_bytes)
                  : weft_model_run_sized(w->m, 1, in, &w->in_bytes, 1, out, &w->out_bytes);
        double tol;
        if (w->rc == WEFT_OK && !(max_err(y, w->ref, w->out_bytes / 4, &tol) <= tol)) w->bad++;
    }
    w->seconds = weft_rt_now() - t0;
    weft_context_destroy(c);
    free(y);
    return NULL;
}

/* Two threads run model m at once on different inputs, each checking every output. */
static double run_two(weft_model *m, bool own_context, const char *stem_a, const char *stem_b, int runs)
{
    worker w[2] = {0};
    const char *stems[2] = {stem_a, stem_b};
    for (int k = 0; k < 2; k++) {
        char p[256];
        size_t n;
        snprintf(p, sizeof p, DATA "%s.input.bin", stems[k]);
        w[k].x = read_floats(p, &w[k].in_bytes);
        snprintf(p, sizeof p, DATA "%s.output.bin", stems[k]);
        w[k].ref = read_floats(p, &n);
        w[k].out_bytes = n;
        w[k].m = m;
        w[k].own_context = own_context;
        w[k].runs = runs;
    }
    pthread_t t[2];
    double t0 = weft_rt_now();
    for (int k = 0; k < 2; k++) assert_int_equal(pthread_create(&t[k], NULL, work, &w[k]), 0);
    for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
    double wall = weft_rt_now() - t0;
    for (int k = 0; k < 2; k++) {
        if (w[k].rc != WEFT_OK) fprintf(stderr, "%s\n", weft_last_error());
        assert_int_equal(w[k].rc, WEFT_OK);
        assert_int_equal(w[k].bad, 0);
        free((void *)w[k].x);
        free((void *)w[k].ref);
    }
    return wall;
}

static void test_two_threads(void **state)
{
    (void)state;
    /* a static model: two inputs of the same shape (batch 32) */
    weft_model *m = load(DATA "mlp.onnx", NULL, 2);
    for (int rep = 0; rep < 3; rep++) {
        double ctx = run_two(m, true, "mlp", "mlp_dyn.b32", 200);
        double lock = run_two(m, false, "mlp", "mlp_dyn.b32", 200);
        printf("mlp, 2 threads x 200 runs: contexts %.1f ms, the model's own (locked) runs %.1f ms\n", ctx * 1e3, lock * 1e3);
    }
    weft_model_destroy(m);
    /* a dynamic model: batch 1 and batch 32 at once (both shapes compiled on first use) */
    m = load(DATA "mlp_dyn.onnx", NULL, 2);
    run_two(m, true, "mlp_dyn.b1", "mlp_dyn.b32", 50);
    run_two(m, false, "mlp_dyn.b32", "mlp_dyn.b1", 50);
    assert_int_equal(m->n_inst, 2);
    weft_model_destroy(m);
}

/* A model with two inputs and two outputs, built by calls: every input is read (each output
 * depends on both), every output is written and checked exactly (a + b and a * b + b are
 * exact in float32 for these small integers), queried by index and by name. */
static void test_two_inputs_two_outputs(void **state)
{
    (void)state;
    weft_graph *g = NULL;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    int64_t shape[2] = {3, 37};
    weft_value a, b, sum, prod, y2;
    assert_int_equal(weft_graph_add_input(g, "a", WEFT_TYPE_FLOAT32, 2, shape, &a), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "b", WEFT_TYPE_FLOAT32, 2, shape, &b), WEFT_OK);
    assert_int_equal(weft_graph_binary(g, "Add", a, b, &sum), WEFT_OK);
    assert_int_equal(weft_graph_binary(g, "Mul", a, b, &prod), WEFT_OK);
    assert_int_equal(weft_graph_binary(g, "Add", prod, b, &y2), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, sum, "sum"), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, y2, "fma"), WEFT_OK);
    weft_model_options o = weft_model_options_default();
    o.threads = 2;
    weft_model *m = NULL;
    assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
    weft_graph_destroy(g);
    assert_int_equal(weft_model_n_inputs(m), 2);
    assert_int_equal(weft_model_n_outputs(m), 2);
    int ia = -1, ib = -1, isum = -1, ifma = -1;
    assert_int_equal(weft_model_find_input(m, "a", &ia), WEFT_OK);
    assert_int_equal(weft_model_find_input(m, "b", &ib), WEFT_OK);
    assert_int_equal(weft_model_find_output(m, "sum", &isum), WEFT_OK);
    assert_int_equal(weft_model_find_output(m, "fma", &ifma), WEFT_OK);
    assert_true(ia != ib && isum != ifma);
    weft_tensor_info info;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(weft_model_output_info(m, i, &info), WEFT_OK);
        assert_int_equal(info.ndim, 2);
        assert_int_equal(info.shape[0], 3);
        assert_int_equal(info.shape[1], 37);
        assert_int_equal(info.bytes, 3 * 37 * sizeof(float));
    }
    enum { N = 3 * 37 };
    float in[2][N], out[2][N];
    for (int i = 0; i < N; i++) {
        in[ia][i] = (float)(i % 11) - 5.0f;
        in[ib][i] = (float)(i % 7) + 1.0f;
    }
    size_t bytes[2] = {sizeof in[0], sizeof in[1]}, obytes[2] = {sizeof out[0], sizeof out[1]};
    memset(out, 0xff, sizeof out);
    assert_int_equal(weft_model_run_sized(m, 2, (const void *[]){in[0], in[1]}, bytes, 2, (void *[]){out[0], out[1]}, obytes),
                     WEFT_OK);
    for (int i = 0; i < N; i++) {
        assert_true(out[isum][i] == in[ia][i] + in[ib][i]);
        assert_true(out[ifma][i] == in[ia][i] * in[ib][i] + in[ib][i]);
    }
    /* one input short, or the second output's size wrong: refused, naming the tensor */
    expect_error(weft_model_run_sized(m, 1, (const void *[]){in[0]}, bytes, 2, (void *[]){out[0], out[1]}, obytes),
                 WEFT_ERR_INVALID_ARG, "");
    size_t bad[2] = {obytes[0], obytes[1] - 4};
    expect_error(weft_model_run_sized(m, 2, (const void *[]){in[0], in[1]}, bytes, 2, (void *[]){out[0], out[1]}, bad),
                 WEFT_ERR_SHAPE, ifma == 1 ? "fma" : "sum");
    weft_model_destroy(m);
}

/* Empty tensors exist as constants: PyTorch exports a slice assignment (Swin's window masks)
 * with shape arithmetic that slices a shape vector to nothing and concatenates it. Such values
 * fold at load time and the model runs; an empty tensor computed at run time is refused. */
static void test_empty_constants(void **state)
{
    (void)state;
    weft_graph *g = NULL;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    weft_value x, s, st, en, e, e2, tail, c, r, k, ks, y, one, out, bad;
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 3, (int64_t[]){2, 3, 4}, &x), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Shape", "shape", 1, &x, 0, NULL, 1, &s), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "st", WEFT_TYPE_INT64, 1, (int64_t[]){1}, (int64_t[]){3}, &st), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "en", WEFT_TYPE_INT64, 1, (int64_t[]){1}, (int64_t[]){INT64_MAX}, &en),
                     WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Slice", "rest", 3, (weft_value[]){s, st, en}, 0, NULL, 1, &e), WEFT_OK);
    int64_t shape[8];
    assert_int_equal(weft_graph_value_shape(g, e, shape), 1);
    assert_int_equal(shape[0], 0);
    weft_attr axis0 = {.name = "axis", .kind = WEFT_ATTR_INT, .i = 0}, axis1 = {.name = "axis", .kind = WEFT_ATTR_INT, .i = 1};
    assert_int_equal(weft_graph_add_op(g, "Concat", "both_empty", 2, (weft_value[]){e, e}, 1, &axis0, 1, &e2), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "tail", WEFT_TYPE_INT64, 1, (int64_t[]){2}, (int64_t[]){4, 6}, &tail),
                     WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Concat", "new_shape", 3, (weft_value[]){e2, tail, e}, 1, &axis0, 1, &c), WEFT_OK);
    const int64_t *cv = weft_graph_value_data(g, c);
    assert_non_null(cv);
    assert_int_equal(cv[0], 4);
    assert_int_equal(cv[1], 6);
    assert_int_equal(weft_graph_add_op(g, "Reshape", "r", 2, (weft_value[]){x, c}, 0, NULL, 1, &r), WEFT_OK);
    /* an empty float constant [4, 0] concatenated with a run-time value adds nothing */
    float kv[24];
    for (int i = 0; i < 24; i++) kv[i] = 100.0f + (float)i;
    assert_int_equal(weft_graph_add_constant(g, "k", WEFT_TYPE_FLOAT32, 2, (int64_t[]){4, 6}, kv, &k), WEFT_OK);
    weft_value z, ax1;
    assert_int_equal(weft_graph_add_constant(g, "z", WEFT_TYPE_INT64, 1, (int64_t[]){1}, (int64_t[]){0}, &z), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "ax1", WEFT_TYPE_INT64, 1, (int64_t[]){1}, (int64_t[]){1}, &ax1), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Slice", "none", 4, (weft_value[]){k, z, z, ax1}, 0, NULL, 1, &ks), WEFT_OK);
    assert_int_equal(weft_graph_value_shape(g, ks, shape), 2);
    assert_int_equal(shape[0], 4);
    assert_int_equal(shape[1], 0);
    assert_int_equal(weft_graph_add_op(g, "Concat", "cat", 3, (weft_value[]){ks, r, ks}, 1, &axis1, 1, &y), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "one", WEFT_TYPE_FLOAT32, 1, (int64_t[]){1}, (float[]){1.0f}, &one),
                     WEFT_OK);
    assert_int_equal(weft_graph_binary(g, "Add", y, one, &out), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, out, "y"), WEFT_OK);
    /* run time: a slice of the input to nothing is refused, naming the node */
    expect_error(weft_graph_add_op(g, "Slice", "empty_x", 4, (weft_value[]){x, z, z, ax1}, 0, NULL, 1, &bad),
                 WEFT_ERR_UNSUPPORTED, "empty_x");
    assert_non_null(strstr(weft_last_error(), "empty tensors are supported only as constants"));
    for (int threads = 1; threads <= 2; threads++) {
        weft_model_options o = weft_model_options_default();
        o.threads = threads;
        weft_model *m = NULL;
        assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
        weft_tensor_info info;
        assert_int_equal(weft_model_output_info(m, 0, &info), WEFT_OK);
        assert_int_equal(info.ndim, 2);
        assert_int_equal(info.shape[0], 4);
        assert_int_equal(info.shape[1], 6);
        float in[24], res[24];
        for (int i = 0; i < 24; i++) in[i] = (float)i * 0.5f - 3.0f;
        memset(res, 0xff, sizeof res);
        assert_int_equal(weft_model_run(m, (const void *[]){in}, (void *[]){res}), WEFT_OK);
        for (int i = 0; i < 24; i++) assert_true(res[i] == in[i] + 1.0f);
        weft_model_destroy(m);
    }
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query),
        cmocka_unit_test(test_run_sized),
        cmocka_unit_test(test_tuned),
        cmocka_unit_test(test_dynamic),
        cmocka_unit_test(test_dynamic_two_symbols),
        cmocka_unit_test(test_symbolic_graph),
        cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_two_inputs_two_outputs),
        cmocka_unit_test(test_empty_constants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
