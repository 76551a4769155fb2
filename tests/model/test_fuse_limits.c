/* Fusion's size limit (model/fuse.c, WEFT_FUSE_MAX_OPS): a long chain of elementwise ops (an
 * unrolled scan written as a Python loop exports as one) is split into several kernels instead
 * of one whose tensor expression outgrows a kernel's 256 tensors and fails to compile. Values
 * against the chain computed in double (tolerance 1e-5 relative). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "weft/graph.h"
#include "weft/model.h"

enum { N = 64, OPS = 150 };

static void test_long_chain_splits(void **state)
{
    (void)state;
    weft_graph *g = NULL;
    weft_value v;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 1, (int64_t[]){N}, &v), WEFT_OK);
    for (int i = 0; i < OPS; i++) { /* x * 0.99 + 0.01 * (i % 7), each constant of its own */
        char name[32];
        float k = i % 2 ? 0.01f * (float)(i % 7) : 0.99f;
        weft_value c;
        snprintf(name, sizeof name, "k%d", i);
        assert_int_equal(weft_graph_add_constant(g, name, WEFT_TYPE_FLOAT32, 1, (int64_t[]){1}, &k, &c), WEFT_OK);
        snprintf(name, sizeof name, "op%d", i);
        assert_int_equal(weft_graph_add_op(g, i % 2 ? "Add" : "Mul", name, 2, (weft_value[]){v, c}, 0, NULL, 1, &v),
                         WEFT_OK);
    }
    assert_int_equal(weft_graph_set_output(g, v, "y"), WEFT_OK);
    weft_model *m = NULL;
    weft_model_options o = weft_model_options_default();
    weft_status rc = weft_model_compile(g, &o, &m);
    if (rc != WEFT_OK) print_error("%s\n", weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    int nk = weft_model_n_kernels(m);
    print_message("%d elementwise ops in a chain: %d kernels\n", OPS, nk);
    assert_true(nk >= 3 && nk <= 8);
    float x[N], y[N];
    for (int e = 0; e < N; e++) x[e] = (float)e / 8 - 4;
    assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){y}), WEFT_OK);
    for (int e = 0; e < N; e++) {
        double r = x[e];
        for (int i = 0; i < OPS; i++) r = i % 2 ? r + 0.01 * (i % 7) : r * 0.99;
        assert_true(fabs(y[e] - r) <= 1e-5 * fmax(1, fabs(r)));
    }
    weft_model_destroy(m);
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_long_chain_splits)};
    return cmocka_run_group_tests_name("model_fuse_limits", tests, NULL, NULL);
}
