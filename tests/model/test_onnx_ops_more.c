/* ONNX op coverage end to end, second part: TopK (ops/nn_topk.c), the elementwise and index ops
 * of ops/nn_elementwise.c and ops/nn_index.c unseen models brought (inverse trig, Mish, Mod
 * fmod=1, Xor, Trilu, OneHot, GatherElements, Clip with run-time bounds, AveragePool with
 * ceil_mode; If with a condition known at load time, inlined by frontend/onnx.c), MaxPool's
 * Indices, ScatterElements / ScatterND (constant and run-time indices), and 3-D Conv / MaxPool / AveragePool and LRN, which the frontend rewrites onto the
 * 2-D ops (frontend/onnx_conv3d.c). Same check as test_onnx_ops.c: each committed model is
 * compiled with default schedules, run at 1 and 2 threads (LLVM) and once in the interpreter,
 *
 *   max |weft - torch| <= 1e-4 * max(1, max |torch|)
 *
 * then the 3-D rewrites' errors and kernel count. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx.h"
#include "model/model_internal.h"
#include "weft/graph.h"
#include "weft/onnx.h"

#include "onnx_ops_harness.h"

#define CASES_3D(X)                                                                                                    \
    X(conv3d_pad) X(conv3d_s_d_g) X(conv3d_temporal) X(conv3d_spatial) X(conv3d_bn_relu) X(maxpool3d)                  \
    X(maxpool3d_s2_p1) X(maxpool3d_ceil) X(avgpool3d_incl) X(avgpool3d_excl) X(local_response_norm) X(lrn)            \
    X(lrn_even_3d) X(conv3d_same) X(conv3d_runtime_w) X(convt3d_k2_s2) X(convt3d_s_p_op_g)
CASES_3D(CASE)
/* TopK (ops/nn_topk.c) */
#define CASES_TOPK(X) X(topk_dim1) X(topk_flatten_indices) X(sort_last) X(topk_smallest_sum)
CASES_TOPK(CASE)
#define CASES_ELEM(X)                                                                                                  \
    X(trig_inverse) X(mish_softsign_big) X(fmod_xor) X(triu_tril) X(one_hot) X(gather_elements) X(clamp_tensor_bounds)    \
    X(avgpool_ceil_incl) X(avgpool_ceil_excl) X(if_const_cond) X(local_response_norm_export)
CASES_ELEM(CASE)
/* GridSample (ops/nn_grid_sample.c), opset 16, each with its grid computed from the input */
#define CASES_GRID(X)                                                                                                  \
    X(grid_sample_bilinear_zeros) X(grid_sample_bilinear_border_ac) X(grid_sample_nearest_zeros)                       \
    X(grid_sample_nearest_reflection_ac) X(grid_sample_reflection) X(grid_sample_reflection_ac)                        \
    X(grid_sample_bicubic_zeros) X(grid_sample_bicubic_border_ac) X(grid_sample_bicubic_reflection)                    \
    X(grid_sample_bilinear_rows)
CASES_GRID(CASE)
/* MaxPool's Indices output (ops/nn_conv.c); scatters (ops/nn_scatter.c): constant repeated
 * indices with reduction add, a run-time permutation, index_put at points (a planned ScatterND) */
#define CASES_IDX(X)                                                                                                   \
    X(maxpool_indices) X(maxpool_indices_ceil) X(isinf_isnan_cast) X(scatter_add_repeats) X(scatter_runtime_perm) X(index_put_points)
CASES_IDX(CASE)

/* 3-D Conv / MaxPool / AveragePool and LRN (frontend/onnx_conv3d.c) refuse what they cannot
 * express, naming the node and the attribute; x is [1, 2, 3, 4, 4], w [2, 2, 3, 3, 3]. */
static bad_graph bad_new_5d(weft_value *w)
{
    static const float wd[2 * 2 * 3 * 3 * 3] = {0};
    bad_graph b = {0};
    assert_int_equal(weft_graph_create(&b.g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(b.g, "x", WEFT_TYPE_FLOAT32, 5, (int64_t[]){1, 2, 3, 4, 4}, &b.x), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(b.g, "w", WEFT_TYPE_FLOAT32, 5, (int64_t[]){2, 2, 3, 3, 3}, wd, w), WEFT_OK);
    return b;
}

static void test_conv3d_bad(void **state)
{
    (void)state;
    static const int64_t pads4[4] = {1, 1, 1, 1}, k3[3] = {2, 2, 2}, s0[3] = {1, 0, 1}, k2[2] = {2, 2};
    const struct {
        const char *op;
        weft_attr at;
        weft_status want;
        const char *needle;
    } cases[] = {
        {"Conv", ints_attr("pads", 4, pads4), WEFT_ERR_INVALID_ARG, "pads has 4 elements, expected 6"},
        {"Conv", str_attr("auto_pad", "SAME_MIDDLE"), WEFT_ERR_INVALID_ARG, "auto_pad='SAME_MIDDLE'"},
        {"Conv", int_attr("group", 3), WEFT_ERR_INVALID_ARG, "group=3"},
        {"Conv", ints_attr("kernel_shape", 3, k3), WEFT_ERR_SHAPE, "kernel_shape [2, 2, 2] does not match"},
        {"MaxPool", ints_attr("strides", 3, s0), WEFT_ERR_INVALID_ARG, "kernel_shape is missing"},
        {"AveragePool", ints_attr("kernel_shape", 2, k2), WEFT_ERR_INVALID_ARG, "kernel_shape has 2 elements"},
        {"LRN", int_attr("bias", 1), WEFT_ERR_INVALID_ARG, "size is missing"},
        {"LRN", int_attr("size", 0), WEFT_ERR_INVALID_ARG, "size=0"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        weft_value w;
        bad_graph b = bad_new_5d(&w);
        bool conv = strcmp(cases[c].op, "Conv") == 0;
        decompose_fail(&b, cases[c].op, conv ? 2 : 1, (weft_value[]){b.x, w}, 1, &cases[c].at, cases[c].want,
                       (const char *const[]){cases[c].op, "node 'bad'", cases[c].needle, NULL});
    }
    /* MaxPool with strides 0, and with its Indices output asked for */
    weft_value w, outs[2];
    bad_graph b = bad_new_5d(&w);
    weft_attr at[2] = {ints_attr("kernel_shape", 3, k3), ints_attr("strides", 3, s0)};
    decompose_fail(&b, "MaxPool", 1, &b.x, 2, at, WEFT_ERR_INVALID_ARG,
                   (const char *const[]){"MaxPool node 'bad'", "strides = [1, 0, 1]", NULL});
    b = bad_new_5d(&w);
    bool done = true;
    assert_int_equal(weft_onnx_decompose(b.g, "MaxPool", "bad", 1, &b.x, 1, at, 2, outs, &done), WEFT_ERR_UNSUPPORTED);
    print_message("MaxPool: %s\n", weft_last_error());
    assert_false(done);
    assert_non_null(strstr(weft_last_error(), "Indices output"));
    weft_graph_destroy(b.g);
}

/* A 3-D Conv with constant weights compiles to the depth-tap copy, the 2-D Conv and the output
 * transpose (which takes the ReLU): the weights are laid out for the 2-D Conv at import (a new
 * constant), with no kernel of their own. */
static void test_conv3d_kernels(void **state)
{
    (void)state;
    weft_graph *g = NULL;
    assert_int_equal(weft_onnx_load(DATA "conv3d_bn_relu.onnx", &g), WEFT_OK);
    weft_model *m = compile_for("conv3d_bn_relu", g, NULL, 1);
    print_message("conv3d_bn_relu: %d kernel(s)\n", weft_model_n_kernels(m));
    assert_int_equal(weft_model_n_kernels(m), 3);
    weft_model_destroy(m);
    weft_graph_destroy(g);
}

/* An If whose condition depends on the input is refused at load, naming the node and saying
 * why; nothing is left half-built (the loader returns no graph). */
static void test_if_runtime_refused(void **state)
{
    (void)state;
    weft_graph *g = NULL;
    weft_status rc = weft_onnx_load(DATA "if_runtime_cond.onnx", &g);
    print_message("%s\n", weft_last_error());
    assert_int_equal(rc, WEFT_ERR_UNSUPPORTED);
    assert_null(g);
    assert_non_null(strstr(weft_last_error(), "If node 'runtime_if'"));
    assert_non_null(strstr(weft_last_error(), "computed at run time"));
}

/* GridSample refuses bad ranks, shapes, dtypes and attributes, naming the node and the problem;
 * x is [1, 2, 4, 4], the grid [1, 3, 5, 2] unless a case says otherwise. */
static void test_grid_sample_bad(void **state)
{
    (void)state;
    const struct {
        int64_t grid[4];
        int grid_nd;
        weft_type grid_type;
        weft_attr at;
        weft_status want;
        const char *needle;
    } cases[] = {
        {{1, 3, 5, 3}, 4, WEFT_TYPE_FLOAT32, int_attr("align_corners", 0), WEFT_ERR_SHAPE, "last dim 3, expected 2"},
        {{2, 3, 5, 2}, 4, WEFT_TYPE_FLOAT32, int_attr("align_corners", 0), WEFT_ERR_SHAPE, "has batch 2"},
        {{1, 15, 2}, 3, WEFT_TYPE_FLOAT32, int_attr("align_corners", 0), WEFT_ERR_SHAPE, "input grid has 3 dims"},
        {{1, 3, 5, 2}, 4, WEFT_TYPE_INT64, int_attr("align_corners", 0), WEFT_ERR_INVALID_ARG,
         "input grid has dtype int64, expected float32"},
        {{1, 3, 5, 2}, 4, WEFT_TYPE_FLOAT32, int_attr("align_corners", 2), WEFT_ERR_INVALID_ARG, "align_corners=2"},
        {{1, 3, 5, 2}, 4, WEFT_TYPE_FLOAT32, str_attr("mode", "area"), WEFT_ERR_INVALID_ARG, "mode='area'"},
        {{1, 3, 5, 2}, 4, WEFT_TYPE_FLOAT32, str_attr("padding_mode", "wrap"), WEFT_ERR_INVALID_ARG,
         "padding_mode='wrap'"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bad_graph b = bad_new();
        weft_value grid;
        assert_int_equal(weft_graph_add_input(b.g, "grid", cases[c].grid_type, cases[c].grid_nd, cases[c].grid, &grid),
                         WEFT_OK);
        expect_fail(&b, "GridSample", 2, (weft_value[]){b.x, grid}, 1, &cases[c].at, cases[c].want,
                    (const char *const[]){"GridSample node 'bad'", cases[c].needle, NULL});
    }
    /* X of rank 3; a 5-D X with a 5-D grid (volumetric sampling); one input only */
    bad_graph b = bad_new();
    weft_value xr, grid;
    assert_int_equal(weft_graph_add_input(b.g, "x3", WEFT_TYPE_FLOAT32, 3, (int64_t[]){1, 2, 4}, &xr), WEFT_OK);
    assert_int_equal(weft_graph_add_input(b.g, "grid", WEFT_TYPE_FLOAT32, 4, (int64_t[]){1, 3, 5, 2}, &grid), WEFT_OK);
    expect_fail(&b, "GridSample", 2, (weft_value[]){xr, grid}, 0, NULL, WEFT_ERR_SHAPE,
                (const char *const[]){"GridSample node 'bad'", "input X has 3 dims", "[N, C, H, W]", NULL});
    b = bad_new();
    assert_int_equal(weft_graph_add_input(b.g, "x5", WEFT_TYPE_FLOAT32, 5, (int64_t[]){1, 2, 3, 4, 4}, &xr), WEFT_OK);
    assert_int_equal(weft_graph_add_input(b.g, "grid", WEFT_TYPE_FLOAT32, 5, (int64_t[]){1, 2, 3, 5, 3}, &grid),
                     WEFT_OK);
    expect_fail(&b, "GridSample", 2, (weft_value[]){xr, grid}, 0, NULL, WEFT_ERR_UNSUPPORTED,
                (const char *const[]){"GridSample node 'bad'", "volumetric", NULL});
    b = bad_new();
    expect_fail(&b, "GridSample", 1, &b.x, 0, NULL, WEFT_ERR_INVALID_ARG,
                (const char *const[]){"GridSample node 'bad'", "has 1 inputs, expected 2", NULL});
    /* opset 20's names for bilinear and bicubic are accepted */
    for (int k = 0; k < 2; k++) {
        b = bad_new();
        weft_value out;
        weft_attr at = str_attr("mode", k ? "cubic" : "linear");
        assert_int_equal(weft_graph_add_input(b.g, "grid", WEFT_TYPE_FLOAT32, 4, (int64_t[]){1, 3, 5, 2}, &grid),
                         WEFT_OK);
        assert_int_equal(weft_graph_add_op(b.g, "GridSample", "ok", 2, (weft_value[]){b.x, grid}, 1, &at, 1, &out),
                         WEFT_OK);
        int64_t shape[4];
        assert_int_equal(weft_graph_value_shape(b.g, out, shape), 4);
        assert_true(shape[0] == 1 && shape[1] == 2 && shape[2] == 3 && shape[3] == 5);
        weft_graph_destroy(b.g);
    }
}

/* A batch of symbolic size N in front of a 1-D conv, a 3-D conv, 3-D and 1-D pools and TopK:
 * at load their input shapes are unknown, so the frontend keeps the nodes as given and they
 * are rewritten when the graph is specialized (model/dynamic.c, g->rewrite). Run at N = 3 (the
 * reference) and N = 2 (its first two rows: every op is per sample), LLVM at 1 and 2 threads. */
static void test_symbolic_batch_rewrites(void **state)
{
    (void)state;
    weft_graph *g = NULL;
    assert_int_equal(weft_onnx_load(DATA "dyn_batch_conv.onnx", &g), WEFT_OK);
    assert_true(weft_graph_is_symbolic(g));
    size_t nx = 0, nref = 0;
    float *x = read_all(DATA "dyn_batch_conv.input.bin", &nx);
    float *ref = read_all(DATA "dyn_batch_conv.output.bin", &nref);
    assert_non_null(x);
    assert_non_null(ref);
    assert_int_equal(nx, 3 * 2 * 16);
    assert_int_equal(nref, 3 * 67);
    float y[3 * 67];
    for (int threads = 1; threads <= 2; threads++) {
        weft_model *m = compile_for("dyn_batch_conv", g, NULL, threads);
        for (int n = 3; n >= 2; n--) {
            size_t in_bytes = (size_t)n * 32 * sizeof(float), out_bytes = (size_t)n * 67 * sizeof(float);
            memset(y, 0xff, sizeof y);
            weft_status rc = weft_model_run_sized(m, 1, (const void *[]){x}, &in_bytes, 1, (void *[]){y}, &out_bytes);
            if (rc != WEFT_OK) print_error("N=%d: %s\n", n, weft_last_error());
            assert_int_equal(rc, WEFT_OK);
            double err = 0;
            for (int i = 0; i < n * 67; i++) {
                double d = fabs((double)y[i] - ref[i]);
                if (!(d <= err)) err = d;
            }
            print_message("dyn_batch_conv N=%d, %d thread(s): max |weft - torch| = %.3g\n", n, threads, err);
            assert_true(err <= REL_TOL * 1.32 + 1e-6);
        }
        weft_model_destroy(m);
    }
    free(x);
    free(ref);
    weft_graph_destroy(g);
}

int main(void)
{
#define ENTRY(n) cmocka_unit_test(test_##n),
    const struct CMUnitTest tests[] = {
        CASES_TOPK(ENTRY) CASES_ELEM(ENTRY) CASES_GRID(ENTRY) CASES_3D(ENTRY) CASES_IDX(ENTRY) cmocka_unit_test(test_conv3d_bad),
        cmocka_unit_test(test_conv3d_kernels), cmocka_unit_test(test_if_runtime_refused),
        cmocka_unit_test(test_symbolic_batch_rewrites),
        cmocka_unit_test(test_grid_sample_bad),
    };
    return cmocka_run_group_tests_name("model_onnx_ops_more", tests, NULL, NULL);
}
