/* The CUDA target on a real device (ctest label "gpu"; scripts/gpu-run.sh runs it). Exits 77
 * (skipped, with the reason) where there is no CUDA target, no driver, no device, or where
 * WEFT_CUDA_DRIVER names another driver library (the fake driver computes nothing).
 *
 *   - every op class with its default GPU schedule (thread per output, block per row; shapes
 *     that divide the block and ragged ones) against the naive schedule in the interpreter:
 *     max |x - ref| <= 1e-4 * max(1, max |ref|) (inputs in [-1, 1]);
 *   - the reference models (MLP, ResNet-9, the transformer, the dynamic transformer blocks)
 *     compiled for "cuda" against PyTorch's outputs with the same tolerance, each run twice
 *     (the second run reuses the device arena).
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

#include "tests/model/api_test_util.h"
#include "compile/build.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "targets/interp/interp.h"
#include "weft/model.h"
#include "weft/onnx.h"
#ifdef WEFT_WITH_CUDA
#include "targets/cuda/cuda.h"
#endif

#define DATA "tests/data/models/"
#define TOL 1e-4

#ifdef WEFT_WITH_CUDA

static double rel_error(const float *x, const float *ref, size_t n)
{
    double md = 0, mr = 1;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)x[i] - (double)ref[i]);
        if (!(d <= md)) md = d;
        if (fabs(ref[i]) > mr) mr = fabs(ref[i]);
    }
    return md / mr;
}

static void check_op(const weft_target_ops *ops, weft_target *t, const char *op, int n, const int64_t *shape)
{
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    assert_int_equal(weft_op_build(a, op, n, shape, &f), WEFT_OK);
    int np = f->n_inputs + f->n_outputs, out = f->n_inputs;
    void *host[8], *dev[8];
    size_t bytes[8];
    uint64_t seed = 7;
    for (int i = 0; i < np; i++) {
        const weft_tensor *te = i < f->n_inputs ? f->inputs[i] : f->outputs[i - f->n_inputs];
        bytes[i] = (size_t)weft_te_numel(te) * 4;
        host[i] = malloc(bytes[i]);
        float *x = host[i];
        for (size_t e = 0; e < bytes[i] / 4; e++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            x[e] = (float)((seed >> 41) & 0xffff) / 32768.0f - 1.0f;
        }
    }
    /* reference: the naive schedule in the interpreter */
    weft_schedule *s = NULL;
    weft_loop_func *lf = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    assert_int_equal(weft_lower(s, NULL, a, &lf), WEFT_OK);
    assert_int_equal(weft_interp_run(lf, host), WEFT_OK);
    float *ref = malloc(bytes[out]);
    memcpy(ref, host[out], bytes[out]);
    memset(host[out], 0xff, bytes[out]);
    weft_schedule_destroy(s);
    /* the default GPU schedule on the device */
    weft_target_caps caps;
    ops->caps(t, &caps);
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_default(s, &caps), WEFT_OK);
    weft_kernel *k = NULL;
    weft_status rc = weft_target_build(ops, t, s, a, NULL, &k);
    for (int i = 0; rc == WEFT_OK && i < np; i++) {
        rc = ops->alloc(t, bytes[i], &dev[i]);
        if (rc == WEFT_OK && i < out) rc = ops->upload(t, dev[i], host[i], bytes[i], NULL);
    }
    if (rc == WEFT_OK) rc = ops->run(k, dev, NULL);
    if (rc == WEFT_OK) rc = ops->download(t, host[out], dev[out], bytes[out], NULL);
    if (rc == WEFT_OK) rc = ops->synchronize(t, NULL);
    if (rc != WEFT_OK) print_error("%s: %s\n", op, weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    double err = rel_error(host[out], ref, bytes[out] / 4);
    printf("%-16s %-22s relative error %.3g\n", op, "(default GPU schedule)", err);
    assert_true(err <= TOL);
    for (int i = 0; i < np; i++) {
        ops->free_buf(t, dev[i]);
        free(host[i]);
    }
    free(ref);
    ops->kernel_destroy(k);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
}

static void test_ops_on_device(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        int n;
        int64_t shape[9];
    } cases[] = {
        {"matmul", 3, {33, 17, 20}},          {"matmul", 3, {256, 256, 256}},      {"dense_bias_relu", 3, {9, 40, 12}},
        {"conv2d", 9, {2, 3, 9, 9, 4, 3, 3, 2, 1}}, {"softmax", 2, {5, 300}},      {"softmax", 2, {2, 1000}},
        {"layer_norm", 2, {6, 50}},           {"layer_norm", 2, {4, 700}},         {"reduce_sum", 2, {7, 29}},
        {"reduce_sum", 2, {3, 1000}},         {"relu", 3, {3, 5, 40}},             {"add", 2, {17, 31}},
        {"gelu", 1, {1000}},
    };
    const weft_target_ops *ops = weft_target_find("cuda");
    weft_target *t = NULL;
    assert_int_equal(ops->create(&t), WEFT_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_op(ops, t, cases[i].op, cases[i].n, cases[i].shape);
    ops->destroy(t);
}

static void check_model(const char *stem, const char *io, int64_t batch)
{
    char path[256];
    snprintf(path, sizeof path, DATA "%s.onnx", stem);
    weft_graph *g = NULL;
    weft_model *m = NULL;
    assert_int_equal(weft_onnx_load(path, &g), WEFT_OK);
    weft_model_options o = weft_model_options_default();
    o.target = "cuda";
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
    for (int rep = 0; rep < 2; rep++) {
        memset(y, 0xff, nr);
        rc = c ? weft_context_run(c, 1, (const void *[]){x}, &nx, 1, (void *[]){y}, &nr)
               : weft_model_run_sized(m, 1, (const void *[]){x}, &nx, 1, (void *[]){y}, &nr);
        if (rc != WEFT_OK) print_error("%s: %s\n", stem, weft_last_error());
        assert_int_equal(rc, WEFT_OK);
        double err = rel_error(y, ref, nr / 4);
        printf("%-16s %-22s relative error %.3g (run %d)\n", stem, "(cuda vs PyTorch)", err, rep);
        assert_true(err <= TOL);
    }
    weft_context_destroy(c);
    weft_model_destroy(m);
    free(x);
    free(ref);
    free(y);
}

static void test_models_on_device(void **state)
{
    (void)state;
    check_model("mlp", "mlp", 0);
    check_model("resnet9", "resnet9", 0);
    check_model("transformer", "transformer", 0);
    check_model("tfs_dyn", "tfs_dyn.b2s24", 2);
}

int main(void)
{
    char why[512];
    const char *drv = getenv("WEFT_CUDA_DRIVER");
    if (drv && *drv) {
        printf("skipped: WEFT_CUDA_DRIVER=%s names another driver library; device results need the NVIDIA driver\n", drv);
        return 77;
    }
    if (!weft_cuda_driver_available(why, sizeof why)) {
        printf("skipped: %s\n", why);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ops_on_device),
        cmocka_unit_test(test_models_on_device),
    };
    return cmocka_run_group_tests_name("cuda_device", tests, NULL, NULL);
}

#else

int main(void)
{
    printf("skipped: the CUDA target is not built (NVRTC not found)\n");
    return 77;
}

#endif
