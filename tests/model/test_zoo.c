/* End-to-end: the small models of the zoo (tests/data/zoo, written by scripts/gen_zoo.py with
 * PyTorch 1.13: an attention block with 197 tokens, a GELU FFN, odd-sized MLPs, a MobileNetV2
 * and an EfficientNet with tiny stages) compiled with default schedules must match PyTorch's
 * output for the committed input, at 1 and 2 threads:
 *
 *   max |weft - torch| <= 1e-4 * max |torch|        (relative to the largest output magnitude)
 *
 * (measured: at most 1.5e-6 relative on x86-64 with AVX-512). BatchNormalization must be folded
 * away in the CNNs. Python is not needed: the reference outputs are committed files. */
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

#define DATA "tests/data/zoo/"
#define REL_TOL 1e-4

static float *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    float *x = len >= 0 ? malloc((size_t)len + 4) : NULL;
    *n = x ? fread(x, 1, (size_t)len, f) / sizeof(float) : 0;
    fclose(f);
    return x;
}

static size_t value_elems(const weft_graph *g, weft_value v)
{
    int64_t shape[8];
    int nd = weft_graph_value_shape(g, v, shape);
    size_t n = 1;
    for (int d = 0; d < nd; d++) n *= (size_t)shape[d];
    return n;
}

/* Loads NAME, checks the sizes of its files against the graph, then compiles and runs it at 1
 * and 2 threads (twice each: the second run reuses the arena) and compares with PyTorch. */
static void check_zoo_model(const char *name, bool cnn)
{
    char path[256];
    weft_graph *g = NULL;
    snprintf(path, sizeof path, DATA "%s.onnx", name);
    weft_status rc = weft_onnx_load(path, &g);
    if (rc != WEFT_OK) print_error("%s: %s\n", path, weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    assert_int_equal(weft_graph_n_inputs(g), 1);
    assert_int_equal(weft_graph_n_outputs(g), 1);

    size_t nx = 0, nref = 0;
    snprintf(path, sizeof path, DATA "%s.input.bin", name);
    float *x = read_all(path, &nx);
    snprintf(path, sizeof path, DATA "%s.output.bin", name);
    float *ref = read_all(path, &nref);
    assert_non_null(x);
    assert_non_null(ref);
    assert_int_equal(nx, value_elems(g, weft_graph_input(g, 0)));
    assert_int_equal(nref, value_elems(g, weft_graph_output(g, 0)));
    double mx = 0;
    for (size_t i = 0; i < nref; i++)
        if (fabs(ref[i]) > mx) mx = fabs(ref[i]);
    assert_true(mx > 0);
    float *y = malloc(nref * sizeof(float) + 4);
    assert_non_null(y);

    for (int threads = 1; threads <= 2; threads++) {
        weft_model *m = NULL;
        weft_model_options o = weft_model_options_default();
        o.threads = threads;
        rc = weft_model_compile(g, &o, &m);
        if (rc != WEFT_OK) print_error("%s: %s\n", name, weft_last_error());
        assert_int_equal(rc, WEFT_OK);
        memset(y, 0xff, nref * sizeof(float)); /* NaNs: an unwritten output fails */
        const void *in[1] = {x};
        void *out[1] = {y};
        for (int rep = 0; rep < 2; rep++) {
            rc = weft_model_run(m, in, out);
            if (rc != WEFT_OK) print_error("%s: %s\n", name, weft_last_error());
            assert_int_equal(rc, WEFT_OK);
        }
        double err = 0;
        for (size_t i = 0; i < nref; i++) {
            double d = fabs((double)y[i] - ref[i]);
            if (!(d <= err)) err = d; /* a NaN sticks */
        }
        int n = weft_model_n_kernels(m);
        print_message("%s, %d thread(s): %d kernels, max |weft - torch| = %.3g (tolerance %.3g = %g * max |torch| %.3g)\n", name,
                      threads, n, err, REL_TOL * mx, REL_TOL, mx);
        if (cnn)
            for (int k = 0; k < n; k++) assert_null(strstr(weft_model_kernel_name(m, k), "batchnormalization"));
        weft_model_destroy(m);
        assert_true(err <= REL_TOL * mx);
    }
    free(y);
    free(ref);
    free(x);
    weft_graph_destroy(g);
}

static void test_vit_block_197_tokens(void **state)
{
    (void)state;
    check_zoo_model("vit_block", false);
}

static void test_gelu_ffn(void **state)
{
    (void)state;
    check_zoo_model("gelu_ffn", false);
}

static void test_mlp_odd_sizes(void **state)
{
    (void)state;
    check_zoo_model("mlp_odd", false);
}

static void test_mlp_1_197_1001(void **state)
{
    (void)state;
    check_zoo_model("mlp_1_197_1001", false);
}

static void test_mlp_197_1001_1(void **state)
{
    (void)state;
    check_zoo_model("mlp_197_1001_1", false);
}

static void test_mobilenet_v2_tiny(void **state)
{
    (void)state;
    check_zoo_model("mbv2_tiny", true);
}

static void test_efficientnet_tiny(void **state)
{
    (void)state;
    check_zoo_model("effnet_tiny", true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vit_block_197_tokens), cmocka_unit_test(test_gelu_ffn),
        cmocka_unit_test(test_mlp_odd_sizes),        cmocka_unit_test(test_mlp_1_197_1001),
        cmocka_unit_test(test_mlp_197_1001_1),       cmocka_unit_test(test_mobilenet_v2_tiny),
        cmocka_unit_test(test_efficientnet_tiny),
    };
    return cmocka_run_group_tests_name("model_zoo", tests, NULL, NULL);
}
