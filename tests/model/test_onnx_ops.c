/* ONNX op coverage end to end: the tiny models of tests/data/onnx_ops (written by
 * scripts/gen_onnx_ops.py with PyTorch 1.13; one per variant of Resize / Upsample, Pad,
 * ConvTranspose, HardSigmoid, HardSwish, bicubic Resize, MaxPool with ceil_mode, Range, a
 * Dropout asked for its mask, a small decoder that chains them, an attention
 * layer reading int64 token ids as its graph input; 1-D Conv / ConvTranspose / MaxPool /
 * AveragePool / global pools and Conv1d -> BatchNorm1d -> ReLU, which the frontend lifts to the
 * 2-D ops; DepthToSpace (DCR, and CRD from pixel_shuffle), SpaceToDepth, pixel_unshuffle;
 * InstanceNorm2d / 1d and GroupNorm, whose InstanceNormalization the frontend rewrites into
 * reductions and elementwise ops; Einsum with batch, contracted, free and summed labels, "...",
 * a constant weight and one operand, which the frontend rewrites into Transpose / Reshape /
 * ReduceSum / MatMul) are loaded,
 * compiled with default schedules and run at 1 and 2 threads (LLVM), and once through the
 * loop-IR interpreter, and must match PyTorch's output for the committed input:
 *
 *   max |weft - torch| <= 1e-4 * max(1, max |torch|)
 *
 * (measured: at most 1.1e-6 absolute; nearest and pad variants are exact). Then bad attribute
 * values and unsupported modes, built with the graph API, must fail with a message naming the
 * op, the node and the attribute (for the frontend's rewrites, through weft_onnx_decompose,
 * the path of an ONNX node). Python is not needed: the reference outputs are committed. */
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

#define CASES(X)                                                                                                       \
    X(resize_nearest_x2) X(resize_nearest_x3_opset10) X(resize_nearest_sizes) X(resize_nearest_down)                  \
    X(resize_nearest_exact) X(resize_nearest_half_pixel_ceil) X(resize_bilinear_x2) X(resize_bilinear_sizes)           \
    X(resize_bicubic_x2) X(resize_bicubic_align_corners) X(resize_bicubic_down) X(resize_trilinear_x2)                 \
    X(resize_trilinear_ac_sizes)                                                                                       \
    X(resize_bilinear_align_corners) X(resize_bilinear_ac_down) X(resize_linear_half_pixel) X(resize_linear_1d)        \
    X(pad_constant) X(pad_constant_opset10) X(pad_crop) X(pad_reflect) X(pad_edge)                                     \
    X(convt_s2_p1_op1) X(convt_group_dilation) X(convt_s1_rect) X(convt_s3_asym) X(convt_depthwise)                   \
    X(convt_single_pixel) X(convt_single_pixel_crop) X(convt3d_single_pixel)                                           \
    X(maxpool_ceil) X(maxpool_ceil_pad) X(maxpool_ceil_2x2) X(maxpool_ceil_drop)                                        \
    X(hardsigmoid) X(hardswish_opset14) X(decoder_tiny) X(token_attention_ids) X(range_add) X(dropout_mask)          \
    X(maxunpool) X(maxunpool_output_shape)                                                                             \
    X(conv1d_pad) X(conv1d_s2_d2) X(conv1d_depthwise) X(conv1d_bn_relu) X(convt1d_s2) X(maxpool1d) X(maxpool1d_ceil)   \
    X(avgpool1d_pad) X(avgpool1d_pad_incl) X(global_pool1d) X(pixel_shuffle) X(pixel_unshuffle)                        \
    X(depth_to_space_dcr) X(space_to_depth) X(instancenorm2d) X(instancenorm1d) X(groupnorm)                          \
    X(einsum_attention) X(einsum_weight) X(einsum_ellipsis) X(einsum_summed) X(einsum_single)
CASES(CASE)
/* 3-D convs and pools, LRN (frontend/onnx_conv3d.c) */

/* ---- ConvTranspose: the import-time rewrite and the op itself ---------------------------- */

/* tests/data/onnx_ops/NAME.onnx loaded into *g and compiled for one thread. */
static weft_model *load_compiled(const char *name, weft_graph **g)
{
    char path[256];
    snprintf(path, sizeof path, DATA "%s.onnx", name);
    assert_int_equal(weft_onnx_load(path, g), WEFT_OK);
    return compile_for(name, *g, NULL, 1);
}

/* The frontend rewrites a ConvTranspose with constant weights and dilation 1 into a sub-pixel
 * Conv + pixel shuffle: the compiled model has a conv kernel and no convtranspose kernel. With
 * dilation 2 it keeps the op. Over a single input pixel it is a MatMul: a matmul kernel, no
 * conv (2-D and 3-D). */
static void test_conv_transpose_rewritten_on_import(void **state)
{
    (void)state;
    const char *names[4] = {"convt_s2_p1_op1", "convt_group_dilation", "convt_single_pixel_crop", "convt3d_single_pixel"};
    for (int c = 0; c < 4; c++) {
        weft_graph *g = NULL;
        weft_model *m = load_compiled(names[c], &g);
        bool has_conv = false, has_convt = false, has_matmul = false;
        for (int k = 0; k < weft_model_n_kernels(m); k++) {
            const char *kn = weft_model_kernel_name(m, k);
            has_convt = has_convt || strstr(kn, "convtranspose") != NULL;
            has_conv = has_conv || strncmp(kn, "conv_", 5) == 0;
            has_matmul = has_matmul || strstr(kn, "matmul") != NULL;
        }
        if (c == 0) assert_true(has_conv && !has_convt);
        else if (c == 1) assert_true(has_convt);
        else assert_true(has_matmul && !has_conv && !has_convt);
        weft_model_destroy(m);
        weft_graph_destroy(g);
    }
}

/* MaxPool with ceil_mode=1 is the op itself (its extra end windows are padding with -inf), not
 * a Pad of the lowest float + MaxPool: the two padding clamps nested in one index made the
 * stride-2 pad stage read by gathers (GoogLeNet's 3x3/2 pool over 64 x 112 x 112: 0.52 ms
 * -> 0.15). One kernel, no pad in its name; values are the CASES above. */
static void test_ceil_maxpool_one_op(void **state)
{
    (void)state;
    const char *names[4] = {"maxpool_ceil", "maxpool_ceil_pad", "maxpool_ceil_2x2", "maxpool_ceil_drop"};
    for (int c = 0; c < 4; c++) {
        weft_graph *g = NULL;
        weft_model *m = load_compiled(names[c], &g);
        assert_int_equal(weft_model_n_kernels(m), 1);
        const char *kn = weft_model_kernel_name(m, 0);
        print_message("%s: %s\n", names[c], kn);
        assert_true(!strncmp(kn, "maxpool_", 8) && !strstr(kn, "pad"));
        weft_model_destroy(m);
        weft_graph_destroy(g);
    }
}

/* The op itself (built with the graph API, so no rewrite), stride 2, pads, output_padding,
 * 2 groups and a bias, against a direct scatter loop in double precision. */
static void test_conv_transpose_op_vs_scatter_loop(void **state)
{
    (void)state;
    enum { N = 1, C = 4, H = 5, W = 4, FG = 3, G = 2, K = 3, S = 2, P = 1, OP = 1 };
    const int F = FG * G, OH = (H - 1) * S - 2 * P + K + OP, OW = (W - 1) * S - 2 * P + K + OP;
    static float x[N * C * H * W], w[C * FG * K * K], b[FG * G];
    uint32_t seed = 12345;
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) b[i] = (float)i * 0.1f;
    double *ref = calloc((size_t)(N * F * OH * OW), sizeof *ref);
    assert_non_null(ref);
    for (int c = 0; c < C; c++)
        for (int fl = 0; fl < FG; fl++)
            for (int iy = 0; iy < H; iy++)
                for (int ix = 0; ix < W; ix++)
                    for (int ky = 0; ky < K; ky++)
                        for (int kx = 0; kx < K; kx++) {
                            int oy = iy * S - P + ky, ox = ix * S - P + kx, f = (c / (C / G)) * FG + fl;
                            if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                            ref[(f * OH + oy) * OW + ox] +=
                                (double)x[(c * H + iy) * W + ix] * w[((c * FG + fl) * K + ky) * K + kx];
                        }
    for (int f = 0; f < F; f++)
        for (int i = 0; i < OH * OW; i++) ref[f * OH * OW + i] += b[f];

    weft_graph *g = NULL;
    weft_value xv, wv, bv, y;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, (int64_t[]){N, C, H, W}, &xv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "w", WEFT_TYPE_FLOAT32, 4, (int64_t[]){C, FG, K, K}, w, &wv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "b", WEFT_TYPE_FLOAT32, 1, (int64_t[]){F}, b, &bv), WEFT_OK);
    static const int64_t strides[2] = {S, S}, pads[4] = {P, P, P, P}, op[2] = {OP, OP};
    weft_attr at[4] = {ints_attr("strides", 2, strides), ints_attr("pads", 4, pads), ints_attr("output_padding", 2, op),
                       {.name = "group", .kind = WEFT_ATTR_INT, .i = G}};
    assert_int_equal(weft_graph_add_op(g, "ConvTranspose", "ct", 3, (weft_value[]){xv, wv, bv}, 4, at, 1, &y), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
    int64_t shape[8];
    assert_int_equal(weft_graph_value_shape(g, y, shape), 4);
    assert_true(shape[1] == F && shape[2] == OH && shape[3] == OW);
    float *out = malloc(sizeof(float) * (size_t)(F * OH * OW));
    assert_non_null(out);
    for (int threads = 1; threads <= 2; threads++) {
        weft_model *m = compile_for("ConvTranspose op", g, NULL, threads);
        assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){out}), WEFT_OK);
        double mx, err = max_error(out, ref, F * OH * OW, &mx);
        print_message("ConvTranspose op, %d thread(s): max |weft - loop| = %.3g (tolerance %.3g)\n", threads, err,
                      REL_TOL * (mx > 1 ? mx : 1));
        assert_true(err <= REL_TOL * (mx > 1 ? mx : 1));
        weft_model_destroy(m);
    }
    free(out);
    free(ref);
    weft_graph_destroy(g);
}

/* ---- Attention's views: fusion through Reshape, K^T written once --------------------------- */

/* Multi-head attention as PyTorch exports it (opset 13): x [T, 3*H*D] sliced into Q, K, V,
 * each Reshape'd to [T, H, D] and transposed to heads first (K to [H, D, T]), Q / sqrt(D),
 * Softmax(Q K^T) V, back to [T, H*D]. The Reshapes join the kernels (no copy kernel per slice)
 * and K^T is written by a kernel of its own (the product reads its columns contiguously): five
 * kernels, named as asserted; values against a float64 loop at 1 and 2 threads, T = 128 and 37. */
static void test_attention_views_fuse(void **state)
{
    (void)state;
    enum { H = 4, D = 16 };
    static const int64_t Ts[2] = {128, 37};
    for (int c = 0; c < 2; c++) {
        const int64_t T = Ts[c], E = H * D;
        float *x = malloc(sizeof(float) * (size_t)(T * 3 * E)), *out = malloc(sizeof(float) * (size_t)(T * E));
        double *ref = calloc((size_t)(T * E), sizeof *ref), *p = malloc(sizeof(double) * (size_t)T);
        assert_true(x && out && ref && p);
        uint32_t seed = 777u + (uint32_t)c;
        for (int64_t i = 0; i < T * 3 * E; i++) x[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f * 2 - 1;
        for (int h = 0; h < H; h++)
            for (int64_t i = 0; i < T; i++) {
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < T; j++) {
                    double acc = 0;
                    for (int d = 0; d < D; d++)
                        acc += (double)(x[i * 3 * E + h * D + d] / 4.0f) * x[j * 3 * E + E + h * D + d];
                    p[j] = acc;
                    if (acc > mx) mx = acc;
                }
                for (int64_t j = 0; j < T; j++) sum += p[j] = exp(p[j] - mx);
                for (int64_t j = 0; j < T; j++)
                    for (int d = 0; d < D; d++) ref[i * E + h * D + d] += p[j] / sum * x[j * 3 * E + 2 * E + h * D + d];
            }
        weft_graph *g = NULL;
        weft_value xv, ax, st[3], en[3], shp, four, q, k, v, t;
        assert_int_equal(weft_graph_create(&g), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 2, (int64_t[]){T, 3 * E}, &xv), WEFT_OK);
        static const int64_t one = 1, heads[3] = {0, H, D};
        static const float sqrt_d = 4.0f;
        int64_t se[4] = {0, E, 2 * E, 3 * E};
        assert_int_equal(weft_graph_add_constant(g, "axes", WEFT_TYPE_INT64, 1, (int64_t[]){1}, &one, &ax), WEFT_OK);
        for (int i = 0; i < 3; i++) {
            char nm[16];
            snprintf(nm, sizeof nm, "start%d", i);
            assert_int_equal(weft_graph_add_constant(g, nm, WEFT_TYPE_INT64, 1, (int64_t[]){1}, &se[i], &st[i]), WEFT_OK);
            snprintf(nm, sizeof nm, "end%d", i);
            assert_int_equal(weft_graph_add_constant(g, nm, WEFT_TYPE_INT64, 1, (int64_t[]){1}, &se[i + 1], &en[i]), WEFT_OK);
        }
        assert_int_equal(weft_graph_add_constant(g, "heads", WEFT_TYPE_INT64, 1, (int64_t[]){3}, heads, &shp), WEFT_OK);
        assert_int_equal(weft_graph_add_constant(g, "sqrt_d", WEFT_TYPE_FLOAT32, 0, NULL, &sqrt_d, &four), WEFT_OK);
        static const int64_t p102[3] = {1, 0, 2}, p120[3] = {1, 2, 0};
        weft_value parts[3];
        for (int i = 0; i < 3; i++) {
            char nm[16];
            weft_value sl, rs;
            snprintf(nm, sizeof nm, "slice%d", i);
            assert_int_equal(weft_graph_add_op(g, "Slice", nm, 4, (weft_value[]){xv, st[i], en[i], ax}, 0, NULL, 1, &sl), WEFT_OK);
            snprintf(nm, sizeof nm, "reshape%d", i);
            assert_int_equal(weft_graph_add_op(g, "Reshape", nm, 2, (weft_value[]){sl, shp}, 0, NULL, 1, &rs), WEFT_OK);
            snprintf(nm, sizeof nm, "transpose%d", i);
            weft_attr perm = ints_attr("perm", 3, i == 1 ? p120 : p102);
            assert_int_equal(weft_graph_add_op(g, "Transpose", nm, 1, &rs, 1, &perm, 1, &parts[i]), WEFT_OK);
        }
        assert_int_equal(weft_graph_add_op(g, "Div", "scale", 2, (weft_value[]){parts[0], four}, 0, NULL, 1, &q), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "MatMul", "qk", 2, (weft_value[]){q, parts[1]}, 0, NULL, 1, &k), WEFT_OK);
        weft_attr axis = {.name = "axis", .kind = WEFT_ATTR_INT, .i = -1};
        assert_int_equal(weft_graph_add_op(g, "Softmax", "softmax", 1, &k, 1, &axis, 1, &v), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "MatMul", "pv", 2, (weft_value[]){v, parts[2]}, 0, NULL, 1, &t), WEFT_OK);
        weft_attr perm = ints_attr("perm", 3, p102);
        weft_value back, y, flat;
        assert_int_equal(weft_graph_add_op(g, "Transpose", "back", 1, &t, 1, &perm, 1, &back), WEFT_OK);
        static const int64_t rows[2] = {0, -1};
        assert_int_equal(weft_graph_add_constant(g, "rows", WEFT_TYPE_INT64, 1, (int64_t[]){2}, rows, &flat), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Reshape", "merge", 2, (weft_value[]){back, flat}, 0, NULL, 1, &y), WEFT_OK);
        assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
        for (int threads = 1; threads <= 2; threads++) {
            weft_model *m = compile_for("attention", g, NULL, threads);
            static const char *const want[5] = {"slice_transpose_div_matmul_", "slice_transpose_", "softmax_",
                                                "slice_transpose_matmul_", "transpose_"};
            bool found[5] = {false};
            for (int kk = 0; kk < weft_model_n_kernels(m); kk++) {
                const char *kn = weft_model_kernel_name(m, kk);
                for (int w = 0; w < 5; w++) {
                    size_t l = strlen(want[w]);
                    if (!strncmp(kn, want[w], l) && kn[l] >= '0' && kn[l] <= '9') found[w] = true;
                }
                if (!strncmp(kn, "slice_", 6)) assert_non_null(strstr(kn, "transpose")); /* no copy kernel per slice */
                if (!strncmp(kn, "slice_transpose_", 16) && kn[16] >= '0' && kn[16] <= '9') {
                    /* K^T [H, D, T] (axes b, i, j): vectorized along D, which the QKV rows hold
                     * contiguously (the Reshape's split read as an affine index), not along T */
                    const char *steps = m->kernels[kk].steps, *vec = strstr(steps, "vectorize ");
                    print_message("%s steps:\n%s\n", kn, steps);
                    assert_non_null(vec);
                    const char *vaxis = strchr(vec + strlen("vectorize "), ' ');
                    assert_true(vaxis && vaxis[1] == 'i');
                }
            }
            print_message("attention T=%lld: %d kernels\n", (long long)T, weft_model_n_kernels(m));
            assert_int_equal(weft_model_n_kernels(m), 5);
            for (int w = 0; w < 5; w++) assert_true(found[w]);
            assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){out}), WEFT_OK);
            double mx, err = max_error(out, ref, T * E, &mx);
            print_message("attention T=%lld, %d thread(s): max |weft - loop| = %.3g\n", (long long)T, threads, err);
            assert_true(err <= REL_TOL * (mx > 1 ? mx : 1));
            weft_model_destroy(m);
        }
        weft_graph_destroy(g);
        free(x);
        free(out);
        free(ref);
        free(p);
    }
}

/* ---- ScatterND as slice assignment (PyTorch's exports of it also slice shapes to empty
 * tensors, which weft refuses, so it is built with the graph API here) ------------------------ */

/* y = x; y[1:3, 2:5, :] = u (u [2, 3, 4]) as ScatterND with the box's 6 index rows [2, 3, 2],
 * against the same assignment in C; then indices that are not a box (planned: other scatters
 * are tests/model/test_scatter_elements.c's). */
static void test_scatter_nd_box(void **state)
{
    (void)state;
    enum { A = 4, B = 6, C = 4 };
    static float x[A * B * C], u[2 * 3 * C], out[A * B * C], ref[A * B * C];
    for (int i = 0; i < A * B * C; i++) x[i] = (float)i * 0.5f - 3.0f;
    for (int i = 0; i < 2 * 3 * C; i++) u[i] = 100.0f + (float)i;
    memcpy(ref, x, sizeof ref);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < C; c++) ref[((1 + a) * B + 2 + b) * C + c] = u[(a * 3 + b) * C + c];
    int64_t idx[2 * 3 * 2];
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++) idx[(a * 3 + b) * 2] = 1 + a, idx[(a * 3 + b) * 2 + 1] = b - 4; /* 2..4 as -4..-2 */
    weft_graph *g = NULL;
    weft_value xv, uv, iv, y;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 3, (int64_t[]){A, B, C}, &xv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "u", WEFT_TYPE_FLOAT32, 3, (int64_t[]){2, 3, C}, u, &uv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "i", WEFT_TYPE_INT64, 3, (int64_t[]){2, 3, 2}, idx, &iv), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "ScatterND", "sc", 3, (weft_value[]){xv, iv, uv}, 0, NULL, 1, &y), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
    for (int threads = 1; threads <= 2; threads++) {
        weft_model *m = compile_for("ScatterND box", g, NULL, threads);
        memset(out, 0xff, sizeof out);
        assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){out}), WEFT_OK);
        assert_memory_equal(out, ref, sizeof ref);
        weft_model_destroy(m);
    }
    weft_graph_destroy(g);

    /* rows out of order: not a box in row-major order; a planned scatter (each position still
     * written once, so the same result) */
    int64_t bad[2 * 3 * 2];
    memcpy(bad, idx, sizeof bad);
    bad[0] = 2, bad[6] = 1; /* rows 0 and 3 swap their first index */
    memcpy(ref, x, sizeof ref);
    for (int q = 0; q < 6; q++)
        for (int c = 0; c < C; c++) ref[(bad[2 * q] * B + bad[2 * q + 1] + B) * C + c] = u[q * C + c];
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 3, (int64_t[]){A, B, C}, &xv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "u", WEFT_TYPE_FLOAT32, 3, (int64_t[]){2, 3, C}, u, &uv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "i", WEFT_TYPE_INT64, 3, (int64_t[]){2, 3, 2}, bad, &iv), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "ScatterND", "sc", 3, (weft_value[]){xv, iv, uv}, 0, NULL, 1, &y), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
    weft_model *m = compile_for("ScatterND rows out of order", g, NULL, 1);
    memset(out, 0xff, sizeof out);
    assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){out}), WEFT_OK);
    assert_memory_equal(out, ref, sizeof ref);
    weft_model_destroy(m);
    weft_graph_destroy(g);
}

static void resize_with(const char *attr, const char *value, weft_status want, const char *needle)
{
    bad_graph b = bad_new();
    static const float sc[4] = {1, 1, 2, 2};
    weft_value ins[3] = {b.x, -1, f32_const(&b, "scales", 4, sc)};
    weft_attr at[1] = {str_attr(attr, value)};
    expect_fail(&b, "Resize", 3, ins, 1, at, want, (const char *const[]){"Resize node 'bad'", attr, needle, NULL});
}

static void test_resize_bad_modes(void **state)
{
    (void)state;
    {
        bad_graph b = bad_new();
        static const float sc[4] = {1, 1, 2, 2};
        weft_value ins[3] = {b.x, -1, f32_const(&b, "scales", 4, sc)};
        weft_attr at[2] = {str_attr("mode", "cubic"), {.name = "exclude_outside", .kind = WEFT_ATTR_INT, .i = 1}};
        expect_fail(&b, "Resize", 3, ins, 2, at, WEFT_ERR_UNSUPPORTED,
                    (const char *const[]){"Resize node 'bad'", "exclude_outside=1", NULL});
    }
    resize_with("mode", "area", WEFT_ERR_INVALID_ARG, "'area'");
    resize_with("coordinate_transformation_mode", "tf_crop_and_resize", WEFT_ERR_UNSUPPORTED, "tf_crop_and_resize");
    resize_with("coordinate_transformation_mode", "corners", WEFT_ERR_INVALID_ARG, "'corners'");
    resize_with("nearest_mode", "round", WEFT_ERR_INVALID_ARG, "'round'");
    resize_with("keep_aspect_ratio_policy", "not_larger", WEFT_ERR_UNSUPPORTED, "not_larger");
}

static void test_resize_bad_scales_sizes(void **state)
{
    (void)state;
    static const float sc[4] = {1, 1, 2, 2}, sc3[3] = {1, 2, 2}, neg[4] = {1, 1, -2, 2};
    static const int64_t sz[4] = {1, 2, 8, 8};
    bad_graph b = bad_new();
    weft_value both[4] = {b.x, -1, f32_const(&b, "scales", 4, sc), i64_const(&b, "sizes", 4, sz)};
    expect_fail(&b, "Resize", 4, both, 0, NULL, WEFT_ERR_INVALID_ARG,
                (const char *const[]){"Resize node 'bad'", "scales and sizes", "both", NULL});
    b = bad_new();
    expect_fail(&b, "Resize", 1, &b.x, 0, NULL, WEFT_ERR_INVALID_ARG,
                (const char *const[]){"Resize node 'bad'", "neither", NULL});
    b = bad_new();
    weft_value wrong[3] = {b.x, -1, f32_const(&b, "scales", 3, sc3)};
    expect_fail(&b, "Resize", 3, wrong, 0, NULL, WEFT_ERR_SHAPE,
                (const char *const[]){"Resize node 'bad'", "scales has 3 elements, expected 4", NULL});
    b = bad_new();
    weft_value negative[3] = {b.x, -1, f32_const(&b, "scales", 4, neg)};
    expect_fail(&b, "Resize", 3, negative, 0, NULL, WEFT_ERR_INVALID_ARG,
                (const char *const[]){"Resize node 'bad'", "scales element 2", NULL});
    /* scales computed at run time (a graph input) */
    b = bad_new();
    weft_value s;
    assert_int_equal(weft_graph_add_input(b.g, "s", WEFT_TYPE_FLOAT32, 1, (int64_t[]){4}, &s), WEFT_OK);
    weft_value dyn[3] = {b.x, -1, s};
    expect_fail(&b, "Resize", 3, dyn, 0, NULL, WEFT_ERR_UNSUPPORTED,
                (const char *const[]){"Resize node 'bad'", "scales input must be a constant", NULL});
    /* linear over 4 axes, cubic over 3 */
    static const float sc4d[4] = {2, 2, 2, 2}, sc3d[4] = {1, 2, 2, 2};
    b = bad_new();
    weft_value lin[3] = {b.x, -1, f32_const(&b, "scales", 4, sc4d)};
    weft_attr at[1] = {str_attr("mode", "linear")};
    expect_fail(&b, "Resize", 3, lin, 1, at, WEFT_ERR_UNSUPPORTED,
                (const char *const[]){"Resize node 'bad'", "mode=linear resizes 4 axes", "at most 3", NULL});
    b = bad_new();
    weft_value cub[3] = {b.x, -1, f32_const(&b, "scales", 4, sc3d)};
    weft_attr atc[1] = {str_attr("mode", "cubic")};
    expect_fail(&b, "Resize", 3, cub, 1, atc, WEFT_ERR_UNSUPPORTED,
                (const char *const[]){"Resize node 'bad'", "mode=cubic resizes 3 axes", "at most 2", NULL});
}

static void test_pad_bad(void **state)
{
    (void)state;
    static const int64_t pads[8] = {0, 0, 1, 1, 0, 0, 1, 1}, big[8] = {0, 0, 4, 0, 0, 0, 0, 0};
    static const int64_t six[6] = {0, 0, 1, 0, 0, 1}, neg[8] = {0, 0, -1, 0, 0, 0, 0, 0};
    bad_graph b = bad_new();
    weft_value ins[2] = {b.x, i64_const(&b, "pads", 8, pads)};
    weft_attr mode[1] = {str_attr("mode", "mirror")};
    expect_fail(&b, "Pad", 2, ins, 1, mode, WEFT_ERR_INVALID_ARG,
                (const char *const[]){"Pad node 'bad'", "attribute mode='mirror'", NULL});
    b = bad_new();
    weft_value ins2[2] = {b.x, i64_const(&b, "pads", 8, big)};
    weft_attr refl[1] = {str_attr("mode", "reflect")};
    expect_fail(&b, "Pad", 2, ins2, 1, refl, WEFT_ERR_INVALID_ARG,
                (const char *const[]){"Pad node 'bad'", "mode=reflect needs pads smaller than the axis", NULL});
    b = bad_new();
    weft_value ins3[2] = {b.x, i64_const(&b, "pads", 6, six)};
    expect_fail(&b, "Pad", 2, ins3, 0, NULL, WEFT_ERR_INVALID_ARG,
                (const char *const[]){"Pad node 'bad'", "has 6 elements, expected 2 * 4", NULL});
    b = bad_new();
    weft_value ins4[2] = {b.x, i64_const(&b, "pads", 8, neg)};
    weft_attr edge[1] = {str_attr("mode", "edge")};
    expect_fail(&b, "Pad", 2, ins4, 1, edge, WEFT_ERR_UNSUPPORTED,
                (const char *const[]){"Pad node 'bad'", "negative pads", NULL});
    /* the attribute form without pads */
    b = bad_new();
    expect_fail(&b, "Pad", 1, &b.x, 0, NULL, WEFT_ERR_INVALID_ARG,
                (const char *const[]){"Pad node 'bad'", "has no pads", NULL});
}

static void convt_with(int n_attrs, const weft_attr *attrs, weft_status want, const char *needle)
{
    bad_graph b = bad_new();
    static float w[2 * 3 * 3 * 3];
    weft_value wv;
    assert_int_equal(weft_graph_add_constant(b.g, "w", WEFT_TYPE_FLOAT32, 4, (int64_t[]){2, 3, 3, 3}, w, &wv), WEFT_OK);
    weft_value ins[2] = {b.x, wv};
    expect_fail(&b, "ConvTranspose", 2, ins, n_attrs, attrs, want,
                (const char *const[]){"ConvTranspose node 'bad'", needle, NULL});
}

static void test_range_and_scatter_bad(void **state)
{
    (void)state;
    bad_graph b = bad_new();
    static const float zero[1] = {0}, five[1] = {5};
    weft_value r[3] = {f32_const(&b, "s", 1, zero), f32_const(&b, "l", 1, five), f32_const(&b, "d", 1, zero)};
    expect_fail(&b, "Range", 3, r, 0, NULL, WEFT_ERR_INVALID_ARG,
                (const char *const[]){"Range node 'bad'", "delta must be nonzero", NULL});
    b = bad_new();
    weft_value s;
    assert_int_equal(weft_graph_add_input(b.g, "s", WEFT_TYPE_FLOAT32, 1, (int64_t[]){1}, &s), WEFT_OK);
    weft_value r2[3] = {s, f32_const(&b, "l", 1, five), f32_const(&b, "d", 1, five)};
    expect_fail(&b, "Range", 3, r2, 0, NULL, WEFT_ERR_UNSUPPORTED,
                (const char *const[]){"Range node 'bad'", "start input must be a constant", NULL});
    b = bad_new();
    static const int64_t idx[2] = {0, 1};
    weft_value sc[3] = {b.x, i64_const(&b, "i", 2, idx), b.x};
    weft_attr red[1] = {str_attr("reduction", "sum")};
    expect_fail(&b, "ScatterND", 3, sc, 1, red, WEFT_ERR_UNSUPPORTED,
                (const char *const[]){"ScatterND node 'bad'", "reduction='sum'", NULL});
    /* empty constant indices [0, 4] (and updates [0]): refused when the kernel is built, not read */
    b = bad_new();
    static const int64_t none[1] = {0};
    static const float nothing[1] = {0};
    weft_value ei, eu, y;
    assert_int_equal(weft_graph_add_constant(b.g, "ei", WEFT_TYPE_INT64, 2, (int64_t[]){0, 4}, none, &ei), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(b.g, "eu", WEFT_TYPE_FLOAT32, 1, (int64_t[]){0}, nothing, &eu), WEFT_OK);
    assert_int_equal(weft_graph_add_op(b.g, "ScatterND", "bad", 3, (weft_value[]){b.x, ei, eu}, 0, NULL, 1, &y), WEFT_OK);
    assert_int_equal(weft_graph_set_output(b.g, y, "y"), WEFT_OK);
    weft_model *m = NULL;
    weft_status rc = weft_model_compile(b.g, NULL, &m);
    print_message("ScatterND: %s\n", weft_last_error());
    assert_int_equal(rc, WEFT_ERR_UNSUPPORTED);
    assert_non_null(strstr(weft_last_error(), "are empty"));
    assert_null(m);
    weft_graph_destroy(b.g);
}

static void test_conv_transpose_bad(void **state)
{
    (void)state;
    static const int64_t s2[2] = {2, 2}, op2[2] = {2, 0}, zero[2] = {0, 1}, os[2] = {8, 8};
    weft_attr same[1] = {str_attr("auto_pad", "SAME_UPPER")};
    convt_with(1, same, WEFT_ERR_UNSUPPORTED, "auto_pad='SAME_UPPER'");
    weft_attr outshape[1] = {ints_attr("output_shape", 2, os)};
    convt_with(1, outshape, WEFT_ERR_UNSUPPORTED, "output_shape");
    weft_attr oppad[2] = {ints_attr("strides", 2, s2), ints_attr("output_padding", 2, op2)};
    convt_with(2, oppad, WEFT_ERR_INVALID_ARG, "output_padding [2,0]");
    weft_attr strides0[1] = {ints_attr("strides", 2, zero)};
    convt_with(1, strides0, WEFT_ERR_INVALID_ARG, "strides [0,1]");
    weft_attr grp[1] = {{.name = "group", .kind = WEFT_ATTR_INT, .i = 3}};
    convt_with(1, grp, WEFT_ERR_INVALID_ARG, "group=3");
}

static void test_depth_space_bad(void **state)
{
    (void)state;
    bad_graph b = bad_new(); /* x [1, 2, 4, 4] */
    weft_attr bs2[1] = {int_attr("blocksize", 2)};
    decompose_fail(&b, "DepthToSpace", 1, &b.x, 1, bs2, WEFT_ERR_SHAPE,
                   (const char *const[]){"DepthToSpace node 'bad'", "blocksize=2", "2 channels", NULL});
    b = bad_new();
    decompose_fail(&b, "DepthToSpace", 1, &b.x, 0, NULL, WEFT_ERR_INVALID_ARG,
                   (const char *const[]){"DepthToSpace node 'bad'", "blocksize is missing", NULL});
    b = bad_new();
    weft_attr bs0[1] = {int_attr("blocksize", 0)};
    decompose_fail(&b, "SpaceToDepth", 1, &b.x, 1, bs0, WEFT_ERR_INVALID_ARG,
                   (const char *const[]){"SpaceToDepth node 'bad'", "blocksize=0", NULL});
    b = bad_new();
    weft_attr bs3[1] = {int_attr("blocksize", 3)};
    decompose_fail(&b, "SpaceToDepth", 1, &b.x, 1, bs3, WEFT_ERR_SHAPE,
                   (const char *const[]){"SpaceToDepth node 'bad'", "blocksize=3", "[1, 2, 4, 4]", NULL});
    b = bad_new();
    weft_attr mode[2] = {int_attr("blocksize", 1), str_attr("mode", "RDC")};
    decompose_fail(&b, "DepthToSpace", 1, &b.x, 2, mode, WEFT_ERR_INVALID_ARG,
                   (const char *const[]){"DepthToSpace node 'bad'", "mode='RDC'", NULL});
    /* InstanceNormalization with a scale of the wrong size */
    static const float one[3] = {1, 1, 1};
    b = bad_new();
    weft_value in[3] = {b.x, f32_const(&b, "s", 3, one), f32_const(&b, "b", 2, one)};
    decompose_fail(&b, "InstanceNormalization", 3, in, 0, NULL, WEFT_ERR_SHAPE,
                   (const char *const[]){"InstanceNormalization node 'bad'", "scale has shape [3]", NULL});
}

/* A 1-D Conv (x [1, 2, 8], w [3, 2, 3]) with 2-D pads is refused by the lift; with strides 0
 * it reaches the 2-D Conv, which names the node and the attribute. */
static void test_conv1d_bad(void **state)
{
    (void)state;
    static const float w[3 * 2 * 3] = {0};
    static const int64_t pads4[4] = {1, 1, 1, 1}, s0[1] = {0};
    for (int c = 0; c < 2; c++) {
        bad_graph b = {0};
        weft_value wv;
        assert_int_equal(weft_graph_create(&b.g), WEFT_OK);
        assert_int_equal(weft_graph_add_input(b.g, "x", WEFT_TYPE_FLOAT32, 3, (int64_t[]){1, 2, 8}, &b.x), WEFT_OK);
        assert_int_equal(weft_graph_add_constant(b.g, "w", WEFT_TYPE_FLOAT32, 3, (int64_t[]){3, 2, 3}, w, &wv), WEFT_OK);
        weft_attr at[1] = {c == 0 ? ints_attr("pads", 4, pads4) : ints_attr("strides", 1, s0)};
        const char *why = c == 0 ? "pads has 4 elements, expected 2" : "strides";
        decompose_fail(&b, "Conv", 2, (weft_value[]){b.x, wv}, 1, at, WEFT_ERR_INVALID_ARG,
                       (const char *const[]){"Conv node 'bad'", why, NULL});
    }
}

/* Einsum (frontend/onnx_einsum.c) refuses what it cannot express, naming node and equation;
 * x is [1, 2, 4, 4]. */
static void test_einsum_bad(void **state)
{
    (void)state;
    static const struct {
        const char *eq;
        int n_in;
        weft_status want;
        const char *needle;
    } cases[] = {
        {"iijk->ijk", 1, WEFT_ERR_UNSUPPORTED, "repeats a label within operand 0"},
        {"abcd,abce->abde", 1, WEFT_ERR_INVALID_ARG, "does not match"},
        {"abc->abc", 1, WEFT_ERR_INVALID_ARG, "does not match"},
        {"abcd,abdc->abcz", 2, WEFT_ERR_INVALID_ARG, "output label 'z'"},
        {"abcd,abce->abdd", 2, WEFT_ERR_INVALID_ARG, "repeats a label in its output"},
        {"abcd,abcd,abcd->a", 3, WEFT_ERR_UNSUPPORTED, "3 operands"},
        {"abcd,bacd->ab", 2, WEFT_ERR_SHAPE, "label 'a'"},
        {"...,abcd->...abcda", 2, WEFT_ERR_UNSUPPORTED, "more than 8 dims"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bad_graph b = bad_new();
        weft_attr eq[1] = {str_attr("equation", cases[c].eq)};
        weft_value ins[3] = {b.x, b.x, b.x};
        decompose_fail(&b, "Einsum", cases[c].n_in, ins, 1, eq, cases[c].want,
                       (const char *const[]){"Einsum node 'bad'", cases[c].needle, NULL});
    }
    bad_graph b = bad_new();
    decompose_fail(&b, "Einsum", 1, &b.x, 0, NULL, WEFT_ERR_INVALID_ARG,
                   (const char *const[]){"Einsum node 'bad'", "equation is missing", NULL});
}

/* InstanceNormalization's rewrite (and GroupNorm's Reshapes, gamma and beta around it) fuses
 * into one kernel, as LayerNormalization does; the 1-D Conv's lift keeps the BatchNorm folded
 * into the Conv, and the ReLU after the lift's Squeeze fuses into it (the Squeeze moves below
 * the ReLU: model/passes.c, sink_unit_views). */
static void test_rewrites_kernel_counts(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int kernels;
    } want[] = {{"groupnorm", 1}, {"instancenorm2d", 1}, {"instancenorm1d", 1}, {"pixel_shuffle", 1}, {"conv1d_bn_relu", 1}};
    for (size_t c = 0; c < sizeof want / sizeof want[0]; c++) {
        weft_graph *g = NULL;
        weft_model *m = load_compiled(want[c].name, &g);
        print_message("%s: %d kernel(s)\n", want[c].name, weft_model_n_kernels(m));
        assert_true(weft_model_n_kernels(m) <= want[c].kernels);
        weft_model_destroy(m);
        weft_graph_destroy(g);
    }
}

int main(void)
{
#define ENTRY(n) cmocka_unit_test(test_##n),
    const struct CMUnitTest tests[] = {
        CASES(ENTRY) cmocka_unit_test(test_conv_transpose_rewritten_on_import), cmocka_unit_test(test_ceil_maxpool_one_op),
        cmocka_unit_test(test_conv_transpose_op_vs_scatter_loop), cmocka_unit_test(test_resize_bad_modes), cmocka_unit_test(test_resize_bad_scales_sizes),
        cmocka_unit_test(test_pad_bad), cmocka_unit_test(test_conv_transpose_bad), cmocka_unit_test(test_attention_views_fuse),
        cmocka_unit_test(test_scatter_nd_box), cmocka_unit_test(test_range_and_scatter_bad),
        cmocka_unit_test(test_depth_space_bad), cmocka_unit_test(test_conv1d_bad), cmocka_unit_test(test_einsum_bad), cmocka_unit_test(test_rewrites_kernel_counts),
    };
    return cmocka_run_group_tests_name("model_onnx_ops", tests, NULL, NULL);
}
