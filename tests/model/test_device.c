/* The device-ready target interface (targets/target.h) as the model executor uses it.
 *
 * Host targets (llvm, interp) have no buffer operations, and the executor hands their
 * kernels the caller's input buffer itself (a spy target sees the pointer). A fake device
 * (tests/targets/fake_device.h: the LLVM target behind poisoned device addresses that crash
 * any host dereference) runs the MLP, ResNet-9 and the dynamic-batch MLP: outputs match
 * PyTorch (max |weft - torch| <= 1e-4 * max(1, max |torch|)), each run uploads exactly the
 * inputs and downloads exactly the outputs (counts and bytes), every kernel argument is
 * device memory, and every device allocation is freed. Tables with a missing slot, a taken
 * name and an out-of-device-memory allocation are errors with a message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "targets/target.h"
#include "weft/model.h"
#include "api_test_util.h"
#include "weft/onnx.h"
#include "../targets/fake_device.h"

#define DATA "tests/data/models/"



static weft_model *load(const char *file, const char *target, int threads)
{
    weft_graph *g = NULL;
    weft_model *m = NULL;
    assert_int_equal(weft_onnx_load(file, &g), WEFT_OK);
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    o.target = target;
    weft_status rc = weft_model_compile(g, &o, &m);
    if (rc != WEFT_OK) fprintf(stderr, "%s\n", weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    weft_graph_destroy(g);
    return m;
}

/* Runs m (or c) on `stem`'s reference files, checks against PyTorch; the input buffer in *x_out. */
static void check_run(weft_model *m, weft_context *c, const char *stem, size_t *in_bytes, size_t *out_bytes)
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
    double err = 0, scale = 1;
    for (size_t i = 0; i < nr / 4; i++) {
        double d = fabs((double)y[i] - ref[i]);
        if (!(d <= err)) err = d;
        if (fabs(ref[i]) > scale) scale = fabs(ref[i]);
    }
    printf("%s: max |weft - torch| = %.3g (tolerance %.3g)\n", stem, err, 1e-4 * scale);
    assert_true(err <= 1e-4 * scale);
    if (in_bytes) *in_bytes = nx;
    if (out_bytes) *out_bytes = nr;
    free(x);
    free(ref);
    free(y);
}

/* ---- the table ---- */

static void test_host_targets_have_no_buffer_ops(void **state)
{
    (void)state;
    const char *names[] = {"llvm", "interp"};
    for (int i = 0; i < 2; i++) {
        const weft_target_ops *ops = weft_target_find(names[i]);
        assert_non_null(ops);
        assert_true(weft_target_is_host(ops));
        assert_null(ops->alloc);
        assert_null(ops->free_buf);
        assert_null(ops->upload);
        assert_null(ops->download);
        assert_null(ops->synchronize);
        assert_int_equal(weft_target_check(ops), WEFT_OK);
    }
    assert_false(weft_target_is_host(&fake_device_ops));
    assert_int_equal(weft_target_check(&fake_device_ops), WEFT_OK);

    weft_target_ops half = fake_device_ops;
    half.synchronize = NULL;
    expect_error(weft_target_check(&half), WEFT_ERR_INVALID_ARG, "buffer operations are all or none, and synchronize is NULL");
    half = fake_device_ops;
    half.run = NULL;
    expect_error(weft_target_check(&half), WEFT_ERR_INVALID_ARG, "target 'fakedev': the required slot run is NULL");
    expect_error(weft_target_check(NULL), WEFT_ERR_INVALID_ARG, "ops is NULL");
    /* registration: checked, unique names, idempotent for the same table */
    half = fake_device_ops;
    half.name = "halfdev";
    half.upload = NULL;
    expect_error(weft_target_register(&half), WEFT_ERR_INVALID_ARG, "upload is NULL");
    weft_target_ops clash = fake_device_ops;
    clash.name = "llvm";
    expect_error(weft_target_register(&clash), WEFT_ERR_INVALID_ARG, "a target named 'llvm' exists");
    assert_int_equal(fake_device_register(), WEFT_OK);
    assert_int_equal(fake_device_register(), WEFT_OK);
    clash.name = "fakedev";
    expect_error(weft_target_register(&clash), WEFT_ERR_INVALID_ARG, "a target named 'fakedev' exists");
    assert_ptr_equal(weft_target_find("fakedev"), &fake_device_ops);
    assert_null(weft_target_find("halfdev"));
}

/* The poison works: host code that reads a fake device address dies (in a child). */
static void test_poison_crashes(void **state)
{
    (void)state;
    void *dev = NULL;
    assert_int_equal(fake_device_ops.alloc(NULL, 64, &dev), WEFT_OK);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL); /* not cmocka's handler */
        signal(SIGBUS, SIG_DFL);
        _exit(*(volatile unsigned char *)dev == 0xCD ? 0 : 1); /* must not get here */
    }
    int ws = 0;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    printf("reading a device address on the host: %s %d\n", WIFSIGNALED(ws) ? "signal" : "exit", WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
    assert_true(WIFSIGNALED(ws) || (WIFEXITED(ws) && WEXITSTATUS(ws) != 0));
    fake_device_ops.free_buf(NULL, dev);
    assert_int_equal(fake.bad, 0);
}

/* ---- host path: kernels read the caller's buffer in place ---- */

static const void *spy_want; /* the caller's input buffer */
static int spy_hits, spy_runs;

static struct { weft_kernel *k; int n_params; } spy_kernels[64];
static int spy_n;

static weft_status spy_compile(weft_target *t, const weft_loop_func *f, weft_kernel **out)
{
    weft_status rc = weft_target_find("llvm")->compile(t, f, out);
    if (rc == WEFT_OK && spy_n < 64) spy_kernels[spy_n].k = *out, spy_kernels[spy_n++].n_params = f->n_params;
    return rc;
}

static weft_status spy_run(weft_kernel *k, void *const *args, const weft_exec *ex)
{
    spy_runs++;
    for (int j = 0; j < spy_n; j++)
        if (spy_kernels[j].k == k)
            for (int i = 0; i < spy_kernels[j].n_params; i++) spy_hits += args[i] == spy_want;
    return weft_target_find("llvm")->run(k, args, ex);
}

static void test_host_path(void **state)
{
    (void)state;
    static weft_target_ops spy;
    spy = *weft_target_find("llvm");
    spy.name = "hostspy";
    spy.compile = spy_compile;
    spy.run = spy_run;
    assert_int_equal(weft_target_register(&spy), WEFT_OK);
    weft_model *m = load(DATA "mlp.onnx", "hostspy", 1);
    size_t nx;
    float *x = read_floats(DATA "mlp.input.bin", &nx), *y = calloc(1, nx);
    spy_want = x;
    assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){y}), WEFT_OK);
    printf("host path: %d kernel runs, %d arguments were the caller's input buffer\n", spy_runs, spy_hits);
    assert_int_equal(spy_runs, weft_model_n_kernels(m));
    assert_true(spy_hits >= 1);
    check_run(m, NULL, "mlp", NULL, NULL);
    free(x);
    free(y);
    weft_model_destroy(m);
}

/* ---- device path ---- */

static void test_device_mlp(void **state)
{
    (void)state;
    assert_int_equal(fake_device_register(), WEFT_OK);
    int live0 = fake.n_live;
    fake_reset_counts();
    weft_model *m = load(DATA "mlp.onnx", "fakedev", 2);
    /* the constants went up once, at compile time, into one allocation */
    assert_true(fake.uploads >= 2);
    assert_int_equal(fake.n_live, live0 + 1);
    assert_int_equal(fake.runs, 0);
    for (int rep = 0; rep < 2; rep++) {
        fake_reset_counts();
        int allocs = fake.allocs;
        size_t nx = 0, ny = 0;
        check_run(m, NULL, "mlp", &nx, &ny);
        printf("run %d: %d uploads (%zu bytes), %d downloads (%zu bytes), %d kernels, %d syncs\n", rep, fake.uploads,
               fake.up_bytes, fake.downloads, fake.down_bytes, fake.runs, fake.syncs);
        assert_int_equal(fake.bad, 0);
        assert_int_equal(fake.uploads, 1);
        assert_int_equal(fake.up_bytes, nx);
        assert_int_equal(fake.downloads, 1);
        assert_int_equal(fake.down_bytes, ny);
        assert_int_equal(fake.runs, weft_model_n_kernels(m));
        assert_true(fake.syncs >= 1);
        assert_int_equal(fake.allocs, allocs + (rep == 0)); /* the arena, once */
    }
    /* a context has its own device arena, freed with it */
    weft_context *c = NULL;
    assert_int_equal(weft_context_create(m, &c), WEFT_OK);
    int live = fake.n_live;
    check_run(m, c, "mlp", NULL, NULL);
    assert_int_equal(fake.n_live, live + 1);
    weft_context_destroy(c);
    assert_int_equal(fake.n_live, live);
    /* profiling synchronizes per kernel and counts every call */
    weft_model_profile_enable(m, true);
    fake_reset_counts();
    check_run(m, NULL, "mlp", NULL, NULL);
    assert_true(fake.syncs >= weft_model_n_kernels(m));
    weft_model_destroy(m);
    assert_int_equal(fake.n_live, live0);
    assert_int_equal(fake.bad, 0);
}

static void test_device_resnet9(void **state)
{
    (void)state;
    assert_int_equal(fake_device_register(), WEFT_OK);
    int live0 = fake.n_live;
    weft_model *m = load(DATA "resnet9.onnx", "fakedev", 2);
    fake_reset_counts();
    size_t nx = 0, ny = 0;
    check_run(m, NULL, "resnet9", &nx, &ny);
    assert_int_equal(fake.bad, 0);
    assert_int_equal(fake.uploads, 1);
    assert_int_equal(fake.up_bytes, nx);
    assert_int_equal(fake.downloads, 1);
    assert_int_equal(fake.down_bytes, ny);
    assert_int_equal(fake.runs, weft_model_n_kernels(m));
    weft_model_destroy(m);
    assert_int_equal(fake.n_live, live0);
}

/* a recurrence (bidirectional tanh RNN with an initial state): the step kernel runs once per
 * step on device addresses offset per step, step 0 reading the uploaded initial state */
static void test_device_recurrence(void **state)
{
    (void)state;
    assert_int_equal(fake_device_register(), WEFT_OK);
    int live0 = fake.n_live;
    weft_model *m = load("tests/data/rnn/rnn_tanh.onnx", "fakedev", 2);
    const char *in_names[2] = {"x", "h0"}, *out_names[2] = {"output", "h_n"};
    float *in[2], *ref[2], *y[2];
    size_t in_bytes[2], out_bytes[2];
    for (int i = 0; i < 2; i++) {
        int k = -1;
        char p[256];
        assert_int_equal(weft_model_find_input(m, in_names[i], &k), WEFT_OK);
        assert_int_equal(k, i);
        snprintf(p, sizeof p, "tests/data/rnn/rnn_tanh.in.%s.bin", in_names[i]);
        in[i] = read_floats(p, &in_bytes[i]);
        assert_int_equal(weft_model_find_output(m, out_names[i], &k), WEFT_OK);
        assert_int_equal(k, i);
        snprintf(p, sizeof p, "tests/data/rnn/rnn_tanh.out.%s.bin", out_names[i]);
        ref[i] = read_floats(p, &out_bytes[i]);
        y[i] = calloc(1, out_bytes[i]);
    }
    fake_reset_counts();
    weft_status rc = weft_model_run_sized(m, 2, (const void *[]){in[0], in[1]}, in_bytes, 2, (void *[]){y[0], y[1]}, out_bytes);
    if (rc != WEFT_OK) fprintf(stderr, "%s\n", weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    assert_int_equal(fake.bad, 0);
    assert_int_equal(fake.uploads, 2);
    assert_int_equal(fake.downloads, 2);
    assert_true(fake.runs > weft_model_n_kernels(m)); /* the step kernel ran once per step */
    for (int i = 0; i < 2; i++) {
        double err = 0, scale = 1;
        for (size_t j = 0; j < out_bytes[i] / 4; j++) {
            double d = fabs((double)y[i][j] - ref[i][j]);
            if (!(d <= err)) err = d;
            if (fabs(ref[i][j]) > scale) scale = fabs(ref[i][j]);
        }
        printf("rnn_tanh %s on the fake device: max |weft - torch| = %.3g\n", out_names[i], err);
        assert_true(err <= 1e-4 * scale);
        free(in[i]);
        free(ref[i]);
        free(y[i]);
    }
    weft_model_destroy(m);
    assert_int_equal(fake.n_live, live0);
}

/* symbolic batch: one compiled model per shape, the context's arena follows the shape */
static void test_device_dynamic(void **state)
{
    (void)state;
    assert_int_equal(fake_device_register(), WEFT_OK);
    int live0 = fake.n_live;
    weft_model *m = load(DATA "mlp_dyn.onnx", "fakedev", 1);
    assert_true(weft_model_is_dynamic(m));
    check_run(m, NULL, "mlp_dyn.b1", NULL, NULL);
    check_run(m, NULL, "mlp_dyn.b32", NULL, NULL);
    fake_reset_counts();
    size_t nx = 0;
    check_run(m, NULL, "mlp_dyn.b1", &nx, NULL);
    assert_int_equal(fake.uploads, 1);
    assert_int_equal(fake.up_bytes, nx);
    assert_int_equal(fake.bad, 0);
    weft_model_destroy(m);
    assert_int_equal(fake.n_live, live0);
}

static void test_device_out_of_memory(void **state)
{
    (void)state;
    assert_int_equal(fake_device_register(), WEFT_OK);
    int live0 = fake.n_live;
    /* the constants' allocation fails: the compile fails, nothing leaks */
    weft_graph *g = NULL;
    weft_model *m = NULL;
    assert_int_equal(weft_onnx_load(DATA "mlp.onnx", &g), WEFT_OK);
    weft_model_options o = weft_model_options_default();
    o.target = "fakedev";
    fake.fail_alloc = true;
    expect_error(weft_model_compile(g, &o, &m), WEFT_ERR_NOMEM, "out of device memory");
    assert_null(m);
    assert_int_equal(fake.n_live, live0);
    assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
    weft_graph_destroy(g);
    /* the arena's allocation fails: the run fails with a message, the next one works */
    size_t nx;
    float *x = read_floats(DATA "mlp.input.bin", &nx), *y = calloc(1, nx);
    fake.fail_alloc = true;
    expect_error(weft_model_run_sized(m, 1, (const void *[]){x}, &nx, 1, (void *[]){y}, &nx), WEFT_ERR_NOMEM,
                 "cannot allocate the");
    expect_error(WEFT_ERR_NOMEM, WEFT_ERR_NOMEM, "device arena");
    check_run(m, NULL, "mlp", NULL, NULL);
    free(x);
    free(y);
    weft_model_destroy(m);
    assert_int_equal(fake.n_live, live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_targets_have_no_buffer_ops),
        cmocka_unit_test(test_poison_crashes),
        cmocka_unit_test(test_host_path),
        cmocka_unit_test(test_device_mlp),
        cmocka_unit_test(test_device_resnet9),
        cmocka_unit_test(test_device_recurrence),
        cmocka_unit_test(test_device_dynamic),
        cmocka_unit_test(test_device_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
