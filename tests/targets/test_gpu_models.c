/* The reference models with the default GPU schedules, run as a GPU would run them but on the
 * CPU: a host target "interp-gpu" with the caps of a GPU (weft_caps_gpu: thread binding,
 * shared memory, 1024 threads per block) compiles each kernel's bound loop IR for the
 * interpreter and runs it in its GPU mode (blocks and threads iterated, shared memory per
 * block, barriers honoured), once with threads in order and once reversed (a missing barrier
 * shows up as a wrong result). The model compiler picks the GPU schedules and lowering from
 * the caps, exactly as for --target cuda, so this checks every kernel the CUDA target would
 * launch for these models (block-per-row softmax and layer norm, thread-per-output Gemm and
 * conv, ...) against PyTorch's outputs.
 *
 * Tolerance: max |weft - torch| <= 1e-4 * max(1, max |torch|), as the CPU model tests. Also a
 * 4-D softmax (block-per-row with several block axes) against the llvm target. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/model/api_test_util.h"
#include "ir/caps.h"
#include "targets/interp/interp.h"
#include "targets/target.h"
#include "weft/graph.h"
#include "weft/model.h"
#include "weft/onnx.h"

#define DATA "tests/data/models/"

static bool reverse;
static int launches;

static weft_status ig_create(weft_target **out)
{
    return weft_target_interp_ops.create(out);
}

static void ig_caps(const weft_target *t, weft_target_caps *out)
{
    (void)t;
    *out = weft_caps_gpu("interp-gpu");
    snprintf(out->cpu, sizeof out->cpu, "interp-gpu");
}

static weft_status ig_run(weft_kernel *k, void *const *args, const weft_exec *ex)
{
    (void)ex;
    launches++;
    return weft_interp_kernel_run_gpu(k, args, reverse);
}

static const weft_target_ops interp_gpu_ops = {
    .name = "interp-gpu",
    .create = ig_create,
    .destroy = NULL, /* set in main: the interp target's */
    .caps = ig_caps,
    .compile = NULL,
    .run = ig_run,
    .kernel_destroy = NULL,
};
static weft_target_ops ops;

/* Model stem.onnx on the reference files io.input.bin / io.output.bin; batch > 0 binds the
 * symbolic dimension "batch" (the file sizes the other). */
static void check_model(const char *stem, const char *io, int64_t batch)
{
    char path[256];
    snprintf(path, sizeof path, DATA "%s.onnx", stem);
    weft_graph *g = NULL;
    weft_model *m = NULL;
    assert_int_equal(weft_onnx_load(path, &g), WEFT_OK);
    weft_model_options o = weft_model_options_default();
    o.threads = 1;
    o.target = "interp-gpu";
    weft_status rc = weft_model_compile(g, &o, &m);
    if (rc != WEFT_OK) print_error("%s: %s\n", stem, weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    weft_graph_destroy(g);
    size_t nx, nr;
    snprintf(path, sizeof path, DATA "%s.input.bin", io);
    float *x = read_floats(path, &nx);
    snprintf(path, sizeof path, DATA "%s.output.bin", io);
    float *ref = read_floats(path, &nr);
    float *y = malloc(nr);
    weft_context *c = NULL;
    if (batch > 0) {
        assert_int_equal(weft_context_create(m, &c), WEFT_OK);
        assert_int_equal(weft_context_set_dim(c, "batch", batch), WEFT_OK);
    }
    for (int rev = 0; rev < 2; rev++) {
        reverse = rev;
        launches = 0;
        memset(y, 0xff, nr);
        rc = c ? weft_context_run(c, 1, (const void *[]){x}, &nx, 1, (void *[]){y}, &nr)
               : weft_model_run_sized(m, 1, (const void *[]){x}, &nx, 1, (void *[]){y}, &nr);
        if (rc != WEFT_OK) print_error("%s: %s\n", stem, weft_last_error());
        assert_int_equal(rc, WEFT_OK);
        double err = 0, scale = 1;
        for (size_t i = 0; i < nr / 4; i++) {
            double d = fabs((double)y[i] - ref[i]);
            if (!(d <= err)) err = d;
            if (fabs(ref[i]) > scale) scale = fabs(ref[i]);
        }
        printf("%s (GPU schedules, %s threads): %d kernel runs, max |weft - torch| = %.3g (tolerance %.3g)\n", stem,
               rev ? "reversed" : "forward", launches, err, 1e-4 * scale);
        assert_true(launches > 0);
        assert_true(err <= 1e-4 * scale);
    }
    free(x);
    free(ref);
    free(y);
    weft_context_destroy(c);
    weft_model_destroy(m);
}

static void test_mlp(void **state)
{
    (void)state;
    check_model("mlp", "mlp", 0);
}

/* the transformer blocks of tfs_dyn ([batch, seq, 64]: attention with softmax rows, layer
 * norms, GELU MLP) at batch 1, seq 8: the same kernels as transformer.onnx at a size the
 * interpreter runs in seconds (transformer.onnx itself takes minutes there) */
static void test_transformer(void **state)
{
    (void)state;
    check_model("tfs_dyn", "tfs_dyn.b1s8", 1);
}

static void test_resnet9(void **state)
{
    (void)state;
    check_model("resnet9", "resnet9", 0);
}

/* Softmax over the last axis of a 4-D tensor: its max and sum get a block per row with two or
 * three block axes (blockIdx.x for the last output axis, .y, .z for the outer ones of extent
 * > 1); against the same graph on llvm with the CPU default schedule (tolerance 1e-5). */
static void test_softmax_rows_nd(void **state)
{
    (void)state;
    static const int64_t shapes[][4] = {{1, 3, 5, 40}, {2, 3, 4, 300}};
    for (int c = 0; c < 2; c++) {
        float *y[2] = {NULL, NULL};
        size_t n = 1;
        for (int d = 0; d < 4; d++) n *= (size_t)shapes[c][d];
        float *x = malloc(n * 4);
        uint64_t seed = 3;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            x[i] = (float)((seed >> 41) & 0xffff) / 4096.0f - 8.0f;
        }
        for (int t = 0; t < 2; t++) {
            weft_graph *g = NULL;
            weft_value in, out;
            assert_int_equal(weft_graph_create(&g), WEFT_OK);
            assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, shapes[c], &in), WEFT_OK);
            assert_int_equal(weft_graph_add_op(g, "Softmax", "sm", 1, &in, 0, NULL, 1, &out), WEFT_OK);
            assert_int_equal(weft_graph_set_output(g, out, "y"), WEFT_OK);
            weft_model_options o = weft_model_options_default();
            o.threads = 1;
            o.target = t ? "interp-gpu" : "llvm";
            weft_model *m = NULL;
            weft_status rc = weft_model_compile(g, &o, &m);
            if (rc != WEFT_OK) print_error("%s: %s\n", o.target, weft_last_error());
            assert_int_equal(rc, WEFT_OK);
            y[t] = malloc(n * 4);
            for (int rev = 0; rev < (t ? 2 : 1); rev++) {
                reverse = rev;
                memset(y[t], 0xff, n * 4);
                assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){y[t]}), WEFT_OK);
                double err = 0;
                for (size_t i = 0; t && i < n; i++) {
                    double d = fabs((double)y[1][i] - y[0][i]);
                    if (!(d <= err)) err = d;
                }
                if (t) printf("softmax %lldx%lldx%lldx%lld (%s threads): max |gpu - cpu| = %.3g\n", (long long)shapes[c][0],
                              (long long)shapes[c][1], (long long)shapes[c][2], (long long)shapes[c][3],
                              rev ? "reversed" : "forward", err);
                assert_true(err <= 1e-5);
            }
            weft_model_destroy(m);
            weft_graph_destroy(g);
        }
        free(x);
        free(y[0]);
        free(y[1]);
    }
}

int main(void)
{
    ops = interp_gpu_ops;
    ops.destroy = weft_target_interp_ops.destroy;
    ops.compile = weft_target_interp_ops.compile;
    ops.kernel_destroy = weft_target_interp_ops.kernel_destroy;
    if (weft_target_register(&ops) != WEFT_OK) {
        fprintf(stderr, "register: %s\n", weft_last_error());
        return 1;
    }
    if (getenv("TEST_FILTER")) cmocka_set_test_filter(getenv("TEST_FILTER")); /* e.g. test_mlp */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_rows_nd),
        cmocka_unit_test(test_mlp),
        cmocka_unit_test(test_transformer),
        cmocka_unit_test(test_resnet9),
    };
    return cmocka_run_group_tests_name("gpu_models", tests, NULL, NULL);
}
