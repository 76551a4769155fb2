/* End-to-end: the bundled models (tests/data/models, PyTorch 1.13 exports with fixed inputs
 * and PyTorch's outputs) compiled with default schedules must match PyTorch:
 * max |weft - torch| <= 1e-4 * max(1, max |torch|), at 1 and 2 threads; and bad input gives
 * clear errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/graph.h"
#include "weft/onnx.h"

#define DATA "tests/data/models/"

static float *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    float *x = malloc((size_t)len + 4);
    *n = fread(x, 1, (size_t)len, f) / sizeof(float);
    fclose(f);
    return x;
}

typedef struct fixture {
    weft_graph *g;
    weft_model *m;
    float *x, *ref, *y;
} fixture;

static int setup(void **state)
{
    *state = calloc(1, sizeof(fixture));
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    weft_model_destroy(fx->m);
    weft_graph_destroy(fx->g);
    free(fx->x);
    free(fx->ref);
    free(fx->y);
    free(fx);
    return 0;
}

static void check_model(fixture *fx, const char *name, int threads)
{
    char path[256];
    size_t nx = 0, nref = 0;
    snprintf(path, sizeof path, DATA "%s.onnx", name);
    if (!fx->g) {
        weft_status rc = weft_onnx_load(path, &fx->g);
        if (rc != WEFT_OK) print_error("%s: %s\n", path, weft_last_error());
        assert_int_equal(rc, WEFT_OK);
        snprintf(path, sizeof path, DATA "%s.input.bin", name);
        fx->x = read_all(path, &nx);
        snprintf(path, sizeof path, DATA "%s.output.bin", name);
        fx->ref = read_all(path, &nref);
        assert_non_null(fx->x);
        assert_non_null(fx->ref);
        fx->y = malloc(nref * sizeof(float) + 4);
    } else {
        snprintf(path, sizeof path, DATA "%s.output.bin", name);
        free(read_all(path, &nref));
    }
    weft_model_destroy(fx->m);
    fx->m = NULL;
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    weft_status rc = weft_model_compile(fx->g, &o, &fx->m);
    if (rc != WEFT_OK) print_error("%s: %s\n", name, weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    memset(fx->y, 0xff, nref * sizeof(float));
    const void *in[1] = {fx->x};
    void *out[1] = {fx->y};
    for (int rep = 0; rep < 2; rep++) { /* the second run reuses the arena */
        rc = weft_model_run(fx->m, in, out);
        if (rc != WEFT_OK) print_error("%s: %s\n", name, weft_last_error());
        assert_int_equal(rc, WEFT_OK);
    }
    double err = 0, mx = 1;
    for (size_t i = 0; i < nref; i++) {
        double d = fabs((double)fx->y[i] - fx->ref[i]);
        if (!(d <= err)) err = d;
        if (fabs(fx->ref[i]) > mx) mx = fabs(fx->ref[i]);
    }
    print_message("%s, %d thread(s): %d kernels, max |weft - torch| = %.3g (tolerance %.3g)\n", name, threads,
                  weft_model_n_kernels(fx->m), err, 1e-4 * mx);
    assert_true(err <= 1e-4 * mx);
}

static void test_mlp_matches_pytorch(void **state)
{
    check_model(*state, "mlp", 1);
    check_model(*state, "mlp", 2);
}

static void test_resnet9_matches_pytorch(void **state)
{
    check_model(*state, "resnet9", 1);
    check_model(*state, "resnet9", 2);
}

static void test_resnet9_batch32_matches_pytorch(void **state)
{
    check_model(*state, "resnet9_b32", 1);
    check_model(*state, "resnet9_b32", 2);
}

static void test_transformer_matches_pytorch(void **state)
{
    check_model(*state, "transformer", 1);
    check_model(*state, "transformer", 2);
}

static void test_transformer_seq64_matches_pytorch(void **state)
{
    check_model(*state, "transformer_s64", 1);
    check_model(*state, "transformer_s64", 2);
}

static void test_resnet9_batchnorm_is_folded_and_conv_relu_fused(void **state)
{
    fixture *fx = *state;
    check_model(fx, "resnet9", 1);
    /* 8 Conv+BN+ReLU (+ residual Add) become one kernel each; no kernel computes a BN. */
    int n = weft_model_n_kernels(fx->m);
    assert_true(n <= 12);
    for (int k = 0; k < n; k++) {
        const char *kn = weft_model_kernel_name(fx->m, k);
        assert_null(strstr(kn, "batchnormalization"));
        if (!strncmp(kn, "conv", 4)) assert_non_null(strstr(kn, "relu"));
    }
}

static void test_run_with_null_input_is_an_error(void **state)
{
    fixture *fx = *state;
    check_model(fx, "mlp", 1);
    const void *in[1] = {NULL};
    void *out[1] = {fx->y};
    assert_int_equal(weft_model_run(fx->m, in, out), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(), "input 0"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mlp_matches_pytorch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resnet9_matches_pytorch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resnet9_batch32_matches_pytorch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transformer_matches_pytorch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transformer_seq64_matches_pytorch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resnet9_batchnorm_is_folded_and_conv_relu_fused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_with_null_input_is_an_error, setup, teardown),
    };
    return cmocka_run_group_tests_name("model_models", tests, NULL, NULL);
}
