/* Graph operator registry (ops/graph_ops.c, ops/nn_*.c), part 1: elementwise ops with
 * broadcasting, Gemm, MatMul, Conv, BatchNormalization, pools, reductions, Softmax and
 * LayerNormalization, and the errors shape inference reports. Each op is added through the
 * public graph API, run alone in the interpreter and compared with a C reference. Shape and
 * index ops are in test_graph_ops_shape.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "graph_ops_harness.h"

#define F32 WEFT_TYPE_FLOAT32
#define I64 WEFT_TYPE_INT64

/* ---- registry ---------------------------------------------------------------------------- */

static void test_find_unknown_op_names_it(void **state)
{
    (void)state;
    assert_null(weft_op_find("Foo"));
    assert_non_null(strstr(weft_last_error(), "unsupported op 'Foo'"));
    const weft_op_def *d = weft_op_find("Conv");
    assert_non_null(d);
    assert_int_equal(d->pattern, WEFT_PATTERN_OUT_REDUCTION_REUSE);
    assert_true(weft_op_find("Reshape")->alias);
    assert_false(weft_op_find("Transpose")->alias);
    assert_int_equal(weft_op_find("Softmax")->pattern, WEFT_PATTERN_REDUCTION);
    assert_int_equal(weft_op_find("Add")->pattern, WEFT_PATTERN_ELEMWISE);
    assert_non_null(weft_op_find("Shape")->eval_static);
    const char *list = weft_op_supported();
    assert_non_null(strstr(list, "Gemm"));
    assert_non_null(strstr(list, "LayerNormalization"));
}

static void test_add_op_unknown_type_fails(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 1, SHAPE(4)), y;
    fx_assert_error(weft_graph_add_op(f->g, "Foo", "foo1", 1, &x, 0, NULL, 1, &y), WEFT_ERR_UNSUPPORTED, "Foo", NULL);
}

/* ---- elementwise ------------------------------------------------------------------------- */

static void test_add_broadcasts_3d_with_2d(void **state)
{
    fx *f = *state;
    weft_value a = fx_input(f, "a", F32, 3, SHAPE(2, 3, 4)), b = fx_input(f, "b", F32, 2, SHAPE(3, 1));
    weft_value y = fx_op(f, "Add", "add1", 2, VALS(a, b), 0, NULL);
    fx_assert_shape(f, y, 3, SHAPE(2, 3, 4));
    float *A = fx_rand(f, 24), *B = fx_rand(f, 3);
    float *Y = fx_run1(f, (const void *[]){A, B});
    double ref[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++) ref[(i * 3 + j) * 4 + k] = (double)A[(i * 3 + j) * 4 + k] + B[j];
    fx_check_f32(Y, ref, 24, 1e-6);
    assert_int_equal(weft_tensor_pattern(f->outs[0]), WEFT_PATTERN_ELEMWISE);
    assert_string_equal(f->outs[0]->name, "y");
}

static void test_binary_ops_broadcast_both_ways(void **state)
{
    fx *f = *state;
    static const char *const ops[] = {"Sub", "Mul", "Div", "Max", "Min", "Pow"};
    weft_value a = fx_input(f, "a", F32, 2, SHAPE(3, 1)), b = fx_input(f, "b", F32, 1, SHAPE(4));
    float *A = fx_rand(f, 3), *B = fx_rand(f, 4);
    for (int i = 0; i < 3; i++) A[i] = fabsf(A[i]) + 0.5f; /* Pow of a positive base */
    for (int o = 0; o < 6; o++) {
        weft_value y = fx_op(f, ops[o], NULL, 2, VALS(a, b), 0, NULL);
        fx_assert_shape(f, y, 2, SHAPE(3, 4));
        float *Y = fx_run1(f, (const void *[]){A, B});
        double ref[12];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++) {
                double x = A[i], z = B[j];
                ref[i * 4 + j] = o == 0   ? x - z
                                 : o == 1 ? x * z
                                 : o == 2 ? x / z
                                 : o == 3 ? fmax(x, z)
                                 : o == 4 ? fmin(x, z)
                                          : pow(x, z);
            }
        fx_check_f32(Y, ref, 12, 1e-5);
    }
}

static void test_binary_int64_shape_arithmetic(void **state)
{
    fx *f = *state;
    weft_value a = fx_input(f, "a", I64, 1, SHAPE(4));
    weft_value c = fx_const_i64(f, "c", 1, (const int64_t[]){3});
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div"};
    int64_t A[4] = {7, -7, 12, 0};
    for (int o = 0; o < 4; o++) {
        weft_value y = fx_op(f, ops[o], NULL, 2, VALS(a, c), 0, NULL);
        assert_int_equal(weft_graph_value_type(f->g, y), WEFT_TYPE_INT64);
        int64_t *Y = fx_run1(f, (const void *[]){A, NULL});
        int64_t ref[4];
        for (int i = 0; i < 4; i++) ref[i] = o == 0 ? A[i] + 3 : o == 1 ? A[i] - 3 : o == 2 ? A[i] * 3 : A[i] / 3;
        fx_check_i64(Y, ref, 4);
    }
}

static void test_pow_constant_exponents(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 2, SHAPE(2, 3));
    float *X = fx_rand(f, 6);
    for (int i = 0; i < 6; i++) X[i] = fabsf(X[i]) + 0.1f;
    const float exps[] = {2.0f, 0.5f, 1.5f};
    for (int e = 0; e < 3; e++) {
        weft_value c = fx_const_f32(f, "e", 0, NULL, &exps[e]);
        weft_value y = fx_op(f, "Pow", NULL, 2, VALS(x, c), 0, NULL);
        fx_assert_shape(f, y, 2, SHAPE(2, 3));
        float *Y = fx_run1(f, (const void *[]){X, NULL});
        double ref[6];
        for (int i = 0; i < 6; i++) ref[i] = pow(X[i], exps[e]);
        fx_check_f32(Y, ref, 6, 1e-5);
    }
}

static double unary_ref(int o, double x)
{
    switch (o) {
    case 0: return x > 0 ? x : 0;
    case 1: return 1 / (1 + exp(-x));
    case 2: return tanh(x);
    case 3: return erf(x);
    case 4: return sqrt(fabs(x));
    case 5: return exp(x);
    case 6: return log(fabs(x) + 0.5);
    case 7: return -x;
    case 8: return fabs(x);
    case 9: return 1 / x;
    case 10: return x < 0 ? 0.2 * x : x;
    case 11: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case 12: return x < -0.25 ? -0.25 : x > 0.5 ? 0.5 : x;
    default: return 0;
    }
}

static void test_unary_ops_match_reference(void **state)
{
    fx *f = *state;
    static const char *const ops[] = {"Relu", "Sigmoid", "Tanh", "Erf", "Sqrt", "Exp", "Log",
                                      "Neg",  "Abs",     "Reciprocal", "LeakyRelu", "Gelu", "Clip"};
    weft_value x = fx_input(f, "x", F32, 3, SHAPE(2, 3, 5));
    const float lo = -0.25f, hi = 0.5f;
    weft_value cmin = fx_const_f32(f, "min", 0, NULL, &lo), cmax = fx_const_f32(f, "max", 0, NULL, &hi);
    float *X = fx_rand(f, 30);
    float *Xpos = fx_alloc(f, sizeof(float) * 30), *Xlog = fx_alloc(f, sizeof(float) * 30);
    for (int i = 0; i < 30; i++) Xpos[i] = fabsf(X[i]), Xlog[i] = fabsf(X[i]) + 0.5f;
    for (int o = 0; o < 13; o++) {
        weft_attr alpha = attr_f("alpha", 0.2);
        weft_value y = o == 12   ? fx_op(f, "Clip", "clip", 3, VALS(x, cmin, cmax), 0, NULL)
                       : o == 10 ? fx_op(f, ops[o], NULL, 1, &x, 1, &alpha)
                                 : fx_op(f, ops[o], NULL, 1, &x, 0, NULL);
        fx_assert_shape(f, y, 3, SHAPE(2, 3, 5));
        const float *in = o == 4 ? Xpos : o == 6 ? Xlog : X;
        float *Y = fx_run1(f, (const void *[]){in, NULL, NULL});
        double ref[30];
        for (int i = 0; i < 30; i++) ref[i] = o == 6 ? log((double)Xlog[i]) : unary_ref(o, in[i]);
        fx_check_f32(Y, ref, 30, 2e-5);
    }
}

static void test_compare_gives_bool(void **state)
{
    fx *f = *state;
    weft_value a = fx_input(f, "a", F32, 2, SHAPE(2, 3)), b = fx_input(f, "b", F32, 1, SHAPE(3));
    weft_value y = fx_op(f, "Less", "lt", 2, VALS(a, b), 0, NULL);
    assert_int_equal(weft_graph_value_type(f->g, y), WEFT_TYPE_BOOL);
    float A[6] = {1, 2, 3, 4, 5, 6}, B[3] = {2, 2, 5};
    uint8_t *Y = fx_run1(f, (const void *[]){A, B});
    const uint8_t ref[6] = {1, 0, 1, 0, 0, 0};
    for (int i = 0; i < 6; i++) assert_int_equal(Y[i], ref[i]);
}

/* ---- Gemm, MatMul ------------------------------------------------------------------------ */

static void test_gemm_transb_with_c_alpha_beta(void **state)
{
    fx *f = *state;
    weft_value a = fx_input(f, "a", F32, 2, SHAPE(3, 4)), b = fx_input(f, "b", F32, 2, SHAPE(5, 4));
    weft_value c = fx_input(f, "c", F32, 1, SHAPE(5));
    weft_value y = fx_op(f, "Gemm", "fc", 3, VALS(a, b, c), 3,
                         ATTRS(attr_i("transB", 1), attr_f("alpha", 0.5), attr_f("beta", 2.0)));
    fx_assert_shape(f, y, 2, SHAPE(3, 5));
    float *A = fx_rand(f, 12), *B = fx_rand(f, 20), *C = fx_rand(f, 5);
    float *Y = fx_run1(f, (const void *[]){A, B, C});
    double ref[15];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += (double)A[i * 4 + k] * B[j * 4 + k];
            ref[i * 5 + j] = 0.5 * s + 2.0 * C[j];
        }
    fx_check_f32(Y, ref, 15, 1e-5);
    const weft_tensor *red = fx_tensor(f, "y.red");
    assert_non_null(red);
    assert_int_equal(weft_tensor_pattern(red), WEFT_PATTERN_OUT_REDUCTION_REUSE);
    assert_int_equal(red->n_reduce, 1);
    assert_int_equal(weft_tensor_pattern(f->outs[0]), WEFT_PATTERN_ELEMWISE);
}

static void test_gemm_transa_without_c_is_one_stage(void **state)
{
    fx *f = *state;
    weft_value a = fx_input(f, "a", F32, 2, SHAPE(4, 3)), b = fx_input(f, "b", F32, 2, SHAPE(4, 2));
    weft_value y = fx_op(f, "Gemm", "fc", 2, VALS(a, b), 1, ATTRS(attr_i("transA", 1)));
    fx_assert_shape(f, y, 2, SHAPE(3, 2));
    float *A = fx_rand(f, 12), *B = fx_rand(f, 8);
    float *Y = fx_run1(f, (const void *[]){A, B});
    double ref[6];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += (double)A[k * 3 + i] * B[k * 2 + j];
            ref[i * 2 + j] = s;
        }
    fx_check_f32(Y, ref, 6, 1e-5);
    assert_null(fx_tensor(f, "y.red"));
    assert_int_equal(weft_tensor_pattern(f->outs[0]), WEFT_PATTERN_OUT_REDUCTION_REUSE);
}

/* C[b..., i, j] for A [ab..., M, K] and B [bb..., K, N] with numpy batch broadcasting: the
 * test shapes are spelled out, so the reference takes the strides. */
static void matmul_ref(const float *A, const float *B, double *C, int nb, const int64_t *bshape, const int64_t *astr,
                       const int64_t *bstr, int64_t M, int64_t N, int64_t K)
{
    int64_t total = 1;
    for (int d = 0; d < nb; d++) total *= bshape[d];
    for (int64_t t = 0; t < total; t++) {
        int64_t rem = t, ao = 0, bo = 0;
        for (int d = nb - 1; d >= 0; d--) {
            int64_t i = rem % bshape[d];
            rem /= bshape[d];
            ao += i * astr[d], bo += i * bstr[d];
        }
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++) s += (double)A[ao + i * K + k] * B[bo + k * N + j];
                C[(t * M + i) * N + j] = s;
            }
    }
}

static void test_matmul_batched_with_2d_rhs(void **state)
{
    fx *f = *state;
    weft_value a = fx_input(f, "a", F32, 4, SHAPE(2, 3, 4, 5)), b = fx_input(f, "b", F32, 2, SHAPE(5, 6));
    weft_value y = fx_op(f, "MatMul", "mm", 2, VALS(a, b), 0, NULL);
    fx_assert_shape(f, y, 4, SHAPE(2, 3, 4, 6));
    float *A = fx_rand(f, 120), *B = fx_rand(f, 30);
    float *Y = fx_run1(f, (const void *[]){A, B});
    double ref[144];
    matmul_ref(A, B, ref, 2, SHAPE(2, 3), SHAPE(60, 20), SHAPE(0, 0), 4, 6, 5);
    fx_check_f32(Y, ref, 144, 1e-5);
    assert_int_equal(weft_tensor_pattern(f->outs[0]), WEFT_PATTERN_OUT_REDUCTION_REUSE);
}

static void test_matmul_broadcasts_batch_dims(void **state)
{
    fx *f = *state;
    weft_value a = fx_input(f, "a", F32, 4, SHAPE(2, 1, 4, 5)), b = fx_input(f, "b", F32, 3, SHAPE(3, 5, 6));
    weft_value y = fx_op(f, "MatMul", "mm", 2, VALS(a, b), 0, NULL);
    fx_assert_shape(f, y, 4, SHAPE(2, 3, 4, 6));
    float *A = fx_rand(f, 40), *B = fx_rand(f, 90);
    float *Y = fx_run1(f, (const void *[]){A, B});
    double ref[144];
    matmul_ref(A, B, ref, 2, SHAPE(2, 3), SHAPE(20, 0), SHAPE(0, 30), 4, 6, 5);
    fx_check_f32(Y, ref, 144, 1e-5);
}

static void test_matmul_1d_operands(void **state)
{
    fx *f = *state;
    weft_value v = fx_input(f, "v", F32, 1, SHAPE(5)), m = fx_input(f, "m", F32, 2, SHAPE(5, 3));
    weft_value m2 = fx_input(f, "m2", F32, 2, SHAPE(3, 5));
    float *V = fx_rand(f, 5), *M = fx_rand(f, 15);
    weft_value y = fx_op(f, "MatMul", "vm", 2, VALS(v, m), 0, NULL);
    fx_assert_shape(f, y, 1, SHAPE(3));
    float *Y = fx_run1(f, (const void *[]){V, M});
    double ref[3];
    matmul_ref(V, M, ref, 0, NULL, NULL, NULL, 1, 3, 5);
    fx_check_f32(Y, ref, 3, 1e-5);
    y = fx_op(f, "MatMul", "mv", 2, VALS(m2, v), 0, NULL);
    fx_assert_shape(f, y, 1, SHAPE(3));
    Y = fx_run1(f, (const void *[]){M, V});
    matmul_ref(M, V, ref, 0, NULL, NULL, NULL, 3, 1, 5);
    fx_check_f32(Y, ref, 3, 1e-5);
}

/* ---- Conv, BatchNormalization, pools ----------------------------------------------------- */

/* Reference NCHW convolution with groups; pads {top, left, bottom, right}. */
static void conv_ref(const float *X, const float *W, const float *B, double *Y, int64_t N, int64_t C, int64_t H,
                     int64_t Wd, int64_t F, int64_t KH, int64_t KW, const int64_t *s, const int64_t *p,
                     const int64_t *d, int64_t group, int64_t OH, int64_t OW)
{
    int64_t cpg = C / group, fpg = F / group;
    for (int64_t n = 0; n < N; n++)
        for (int64_t fo = 0; fo < F; fo++)
            for (int64_t y = 0; y < OH; y++)
                for (int64_t x = 0; x < OW; x++) {
                    double acc = B ? B[fo] : 0;
                    for (int64_t rc = 0; rc < cpg; rc++)
                        for (int64_t ry = 0; ry < KH; ry++)
                            for (int64_t rx = 0; rx < KW; rx++) {
                                int64_t c = (fo / fpg) * cpg + rc, h = y * s[0] + ry * d[0] - p[0],
                                        w = x * s[1] + rx * d[1] - p[1];
                                if (h < 0 || h >= H || w < 0 || w >= Wd) continue;
                                acc += (double)X[((n * C + c) * H + h) * Wd + w] *
                                       W[((fo * cpg + rc) * KH + ry) * KW + rx];
                            }
                    Y[((n * F + fo) * OH + y) * OW + x] = acc;
                }
}

static void test_conv_pads_strides_dilation_bias(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 4, SHAPE(2, 2, 7, 6)), w = fx_input(f, "w", F32, 4, SHAPE(3, 2, 3, 2));
    weft_value b = fx_input(f, "b", F32, 1, SHAPE(3));
    const int64_t pads[4] = {1, 0, 2, 1}, strides[2] = {2, 1}, dil[2] = {1, 2};
    weft_value y = fx_op(f, "Conv", "conv1", 3, VALS(x, w, b), 3,
                         ATTRS(attr_is("pads", 4, pads), attr_is("strides", 2, strides), attr_is("dilations", 2, dil)));
    /* OH = (7 + 3 - 3) / 2 + 1 = 4; OW = (6 + 1 - 3) / 1 + 1 = 5 */
    fx_assert_shape(f, y, 4, SHAPE(2, 3, 4, 5));
    float *X = fx_rand(f, 168), *W = fx_rand(f, 36), *B = fx_rand(f, 3);
    float *Y = fx_run1(f, (const void *[]){X, W, B});
    double ref[120];
    conv_ref(X, W, B, ref, 2, 2, 7, 6, 3, 3, 2, strides, pads, dil, 1, 4, 5);
    fx_check_f32(Y, ref, 120, 1e-5);
    assert_non_null(fx_tensor(f, "y.pad"));
    const weft_tensor *red = fx_tensor(f, "y.red");
    assert_non_null(red);
    assert_int_equal(weft_tensor_pattern(red), WEFT_PATTERN_OUT_REDUCTION_REUSE);
    assert_int_equal(weft_tensor_pattern(f->outs[0]), WEFT_PATTERN_ELEMWISE);
}

static void test_conv_depthwise_and_grouped(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 4, SHAPE(1, 4, 5, 5));
    weft_value wd = fx_input(f, "wd", F32, 4, SHAPE(4, 1, 3, 3)), wg = fx_input(f, "wg", F32, 4, SHAPE(6, 2, 3, 3));
    const int64_t pads[4] = {1, 1, 1, 1}, ones[2] = {1, 1}, zeros[4] = {0, 0, 0, 0};
    float *X = fx_rand(f, 100), *WD = fx_rand(f, 36), *WG = fx_rand(f, 108);
    weft_value y = fx_op(f, "Conv", "dw", 2, VALS(x, wd), 2, ATTRS(attr_i("group", 4), attr_is("pads", 4, pads)));
    fx_assert_shape(f, y, 4, SHAPE(1, 4, 5, 5));
    float *Y = fx_run1(f, (const void *[]){X, WD});
    double ref[150];
    conv_ref(X, WD, NULL, ref, 1, 4, 5, 5, 4, 3, 3, ones, pads, ones, 4, 5, 5);
    fx_check_f32(Y, ref, 100, 1e-5);
    assert_int_equal(weft_tensor_pattern(f->outs[0]), WEFT_PATTERN_OUT_REDUCTION_REUSE);

    y = fx_op(f, "Conv", "grouped", 2, VALS(x, wg), 1, ATTRS(attr_i("group", 2)));
    fx_assert_shape(f, y, 4, SHAPE(1, 6, 3, 3));
    Y = fx_run1(f, (const void *[]){X, WG});
    conv_ref(X, WG, NULL, ref, 1, 4, 5, 5, 6, 3, 3, ones, zeros, ones, 2, 3, 3);
    fx_check_f32(Y, ref, 54, 1e-5);
    assert_null(fx_tensor(f, "y.pad"));
}

static void test_conv_same_upper_auto_pad(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 4, SHAPE(1, 1, 5, 4)), w = fx_input(f, "w", F32, 4, SHAPE(1, 1, 2, 3));
    const int64_t strides[2] = {2, 2}, ones[2] = {1, 1};
    weft_value y = fx_op(f, "Conv", "c", 2, VALS(x, w), 2,
                         ATTRS(attr_s("auto_pad", "SAME_UPPER"), attr_is("strides", 2, strides)));
    /* out = ceil(in / s) = [3, 2]; total pads h: (3-1)*2+2-5 = 1 -> 0 top, 1 bottom; w: (2-1)*2+3-4 = 1 */
    fx_assert_shape(f, y, 4, SHAPE(1, 1, 3, 2));
    float *X = fx_rand(f, 20), *W = fx_rand(f, 6);
    float *Y = fx_run1(f, (const void *[]){X, W});
    double ref[6];
    conv_ref(X, W, NULL, ref, 1, 1, 5, 4, 1, 2, 3, strides, SHAPE(0, 0, 1, 1), ones, 1, 3, 2);
    fx_check_f32(Y, ref, 6, 1e-5);
}

static void test_batchnorm_inference(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 4, SHAPE(2, 3, 2, 2));
    weft_value p[4];
    for (int i = 0; i < 4; i++) p[i] = fx_input(f, i == 0 ? "s" : i == 1 ? "b" : i == 2 ? "m" : "v", F32, 1, SHAPE(3));
    weft_value y = fx_op(f, "BatchNormalization", "bn", 5, VALS(x, p[0], p[1], p[2], p[3]), 1,
                         ATTRS(attr_f("epsilon", 1e-3)));
    fx_assert_shape(f, y, 4, SHAPE(2, 3, 2, 2));
    float *X = fx_rand(f, 24), *S = fx_rand(f, 3), *B = fx_rand(f, 3), *M = fx_rand(f, 3), *V = fx_rand(f, 3);
    for (int c = 0; c < 3; c++) V[c] = fabsf(V[c]) + 0.1f;
    float *Y = fx_run1(f, (const void *[]){X, S, B, M, V});
    double ref[24];
    for (int i = 0; i < 24; i++) {
        int c = (i / 4) % 3;
        ref[i] = ((double)X[i] - M[c]) * S[c] / sqrt((double)V[c] + 1e-3) + B[c];
    }
    fx_check_f32(Y, ref, 24, 1e-5);
    assert_int_equal(weft_tensor_pattern(f->outs[0]), WEFT_PATTERN_ELEMWISE);
}

/* Reference 2-D pooling; kind 0 max, 1 avg excluding pads, 2 avg including pads. */
static void pool_ref(const float *X, double *Y, int64_t NC, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t s,
                     const int64_t *p, int64_t OH, int64_t OW, int kind)
{
    for (int64_t nc = 0; nc < NC; nc++)
        for (int64_t y = 0; y < OH; y++)
            for (int64_t x = 0; x < OW; x++) {
                double acc = kind == 0 ? -INFINITY : 0;
                int cnt = 0;
                for (int64_t ry = 0; ry < KH; ry++)
                    for (int64_t rx = 0; rx < KW; rx++) {
                        int64_t h = y * s + ry - p[0], w = x * s + rx - p[1];
                        if (h < 0 || h >= H || w < 0 || w >= W) continue;
                        double v = X[(nc * H + h) * W + w];
                        acc = kind == 0 ? fmax(acc, v) : acc + v;
                        cnt++;
                    }
                Y[(nc * OH + y) * OW + x] = kind == 0 ? acc : kind == 1 ? acc / cnt : acc / (double)(KH * KW);
            }
}

static void test_pools_with_padding(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 4, SHAPE(1, 2, 5, 5));
    const int64_t k[2] = {3, 3}, s[2] = {2, 2}, pads[4] = {1, 1, 1, 1};
    float *X = fx_rand(f, 50);
    double ref[18];
    for (int kind = 0; kind < 3; kind++) {
        weft_value y = fx_op(f, kind == 0 ? "MaxPool" : "AveragePool", NULL, 1, &x, 4,
                             ATTRS(attr_is("kernel_shape", 2, k), attr_is("strides", 2, s), attr_is("pads", 4, pads),
                                   attr_i("count_include_pad", kind == 2)));
        fx_assert_shape(f, y, 4, SHAPE(1, 2, 3, 3));
        float *Y = fx_run1(f, (const void *[]){X});
        pool_ref(X, ref, 2, 5, 5, 3, 3, 2, pads, 3, 3, kind);
        fx_check_f32(Y, ref, 18, 1e-5);
        assert_non_null(fx_tensor(f, "y.pad"));
    }
}

static void test_global_average_pool(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 4, SHAPE(2, 3, 4, 5));
    weft_value y = fx_op(f, "GlobalAveragePool", "gap", 1, &x, 0, NULL);
    fx_assert_shape(f, y, 4, SHAPE(2, 3, 1, 1));
    float *X = fx_rand(f, 120);
    float *Y = fx_run1(f, (const void *[]){X});
    double ref[6];
    for (int nc = 0; nc < 6; nc++) {
        double s = 0;
        for (int i = 0; i < 20; i++) s += X[nc * 20 + i];
        ref[nc] = s / 20;
    }
    fx_check_f32(Y, ref, 6, 1e-5);
    assert_int_equal(weft_tensor_pattern(fx_tensor(f, "y.red")), WEFT_PATTERN_REDUCTION);
    assert_int_equal(fx_tensor(f, "y.red")->n_reduce, 1);
    assert_int_equal(fx_tensor(f, "y.red")->reduce_axis[0].extent, 20);

    /* 3-D (GlobalMaxPool over a volume): the spatial dims are one axis too */
    weft_value v = fx_input(f, "v", F32, 5, SHAPE(2, 3, 3, 5, 7));
    y = fx_op(f, "GlobalMaxPool", "gmp", 1, &v, 0, NULL);
    fx_assert_shape(f, y, 5, SHAPE(2, 3, 1, 1, 1));
    float *V = fx_rand(f, 630);
    Y = fx_run1(f, (const void *[]){V});
    for (int nc = 0; nc < 6; nc++) {
        double m = -INFINITY;
        for (int i = 0; i < 105; i++) m = fmax(m, V[nc * 105 + i]);
        ref[nc] = m;
    }
    fx_check_f32(Y, ref, 6, 0);
    const weft_tensor *R = fx_tensor(f, "y.red");
    assert_int_equal(R->n_reduce, 1);
    assert_int_equal(R->reduce_axis[0].extent, 105);
}

/* ---- reductions -------------------------------------------------------------------------- */

static void test_reduce_mean_keepdims_negative_axes(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 3, SHAPE(2, 3, 4));
    float *X = fx_rand(f, 24);
    const int64_t axes[2] = {-1, 0};
    for (int keep = 0; keep < 2; keep++) {
        weft_value y =
            fx_op(f, "ReduceMean", NULL, 1, &x, 2, ATTRS(attr_is("axes", 2, axes), attr_i("keepdims", keep)));
        if (keep) fx_assert_shape(f, y, 3, SHAPE(1, 3, 1));
        else fx_assert_shape(f, y, 1, SHAPE(3));
        float *Y = fx_run1(f, (const void *[]){X});
        double ref[3] = {0};
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 4; k++) ref[j] += X[(i * 3 + j) * 4 + k] / 8.0;
        fx_check_f32(Y, ref, 3, 1e-5);
        assert_int_equal(weft_tensor_pattern(fx_tensor(f, "y.sum")), WEFT_PATTERN_REDUCTION);
    }
}

/* Adjacent reduced dims are one reduction axis of their product's extent (a mean over 5x7
 * planes is one sum of 35, which the default schedule can take in vectors); dims apart are
 * one axis per run. */
static void test_reduce_adjacent_axes_one_axis(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 4, SHAPE(2, 3, 5, 7));
    float *X = fx_rand(f, 210);
    weft_value y = fx_op(f, "ReduceMean", NULL, 1, &x, 2, ATTRS(attr_is("axes", 2, (const int64_t[]){2, 3}), attr_i("keepdims", 0)));
    fx_assert_shape(f, y, 2, SHAPE(2, 3));
    float *Y = fx_run1(f, (const void *[]){X});
    double ref[6] = {0};
    for (int i = 0; i < 6; i++)
        for (int p = 0; p < 35; p++) ref[i] += X[i * 35 + p] / 35.0;
    fx_check_f32(Y, ref, 6, 1e-5);
    const weft_tensor *R = fx_tensor(f, "y.sum");
    assert_int_equal(R->n_reduce, 1);
    assert_int_equal(R->reduce_axis[0].extent, 35);

    y = fx_op(f, "ReduceSum", NULL, 1, &x, 2, ATTRS(attr_is("axes", 3, (const int64_t[]){0, 2, 3}), attr_i("keepdims", 1)));
    fx_assert_shape(f, y, 4, SHAPE(1, 3, 1, 1));
    Y = fx_run1(f, (const void *[]){X});
    for (int c = 0; c < 3; c++) {
        ref[c] = 0;
        for (int n = 0; n < 2; n++)
            for (int p = 0; p < 35; p++) ref[c] += X[(n * 3 + c) * 35 + p];
    }
    fx_check_f32(Y, ref, 3, 1e-5);
    R = fx_tensor(f, "y.red");
    assert_int_equal(R->n_reduce, 2);
    assert_int_equal(R->reduce_axis[0].extent, 2);
    assert_int_equal(R->reduce_axis[1].extent, 35);
}

static void test_reduce_sum_axes_input_and_max_all(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 3, SHAPE(2, 3, 4));
    weft_value axes = fx_const_i64(f, "axes", 1, (const int64_t[]){1});
    float *X = fx_rand(f, 24);
    weft_value y = fx_op(f, "ReduceSum", "rs", 2, VALS(x, axes), 1, ATTRS(attr_i("keepdims", 0)));
    fx_assert_shape(f, y, 2, SHAPE(2, 4));
    float *Y = fx_run1(f, (const void *[]){X, NULL});
    double ref[8] = {0};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++) ref[i * 4 + k] += X[(i * 3 + j) * 4 + k];
    fx_check_f32(Y, ref, 8, 1e-5);
    assert_string_equal(f->outs[0]->name, "y");
    assert_int_equal(f->outs[0]->n_reduce, 1);

    y = fx_op(f, "ReduceMax", "rmax", 1, &x, 0, NULL); /* no axes: all, keepdims=1 */
    fx_assert_shape(f, y, 3, SHAPE(1, 1, 1));
    Y = fx_run1(f, (const void *[]){X});
    double m = -INFINITY;
    for (int i = 0; i < 24; i++) m = fmax(m, X[i]);
    fx_check_f32(Y, &m, 1, 0);

    y = fx_op(f, "ReduceMin", "rmin", 1, &x, 2,
              ATTRS(attr_is("axes", 1, (const int64_t[]){-2}), attr_i("keepdims", 1)));
    fx_assert_shape(f, y, 3, SHAPE(2, 1, 4));
    Y = fx_run1(f, (const void *[]){X});
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) {
            double v = INFINITY;
            for (int j = 0; j < 3; j++) v = fmin(v, X[(i * 3 + j) * 4 + k]);
            ref[i * 4 + k] = v;
        }
    fx_check_f32(Y, ref, 8, 0);
}

static void test_softmax_axis1_of_3d(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 3, SHAPE(2, 3, 4));
    weft_value y = fx_op(f, "Softmax", "sm", 1, &x, 1, ATTRS(attr_i("axis", 1)));
    fx_assert_shape(f, y, 3, SHAPE(2, 3, 4));
    float *X = fx_rand(f, 24);
    float *Y = fx_run1(f, (const void *[]){X});
    double ref[24];
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) {
            double s = 0;
            for (int j = 0; j < 3; j++) s += exp(X[(i * 3 + j) * 4 + k]);
            for (int j = 0; j < 3; j++) ref[(i * 3 + j) * 4 + k] = exp(X[(i * 3 + j) * 4 + k]) / s;
        }
    fx_check_f32(Y, ref, 24, 1e-5);
    assert_non_null(fx_tensor(f, "y.max"));
    assert_non_null(fx_tensor(f, "y.exp"));
    assert_int_equal(weft_tensor_pattern(fx_tensor(f, "y.sum")), WEFT_PATTERN_REDUCTION);
    assert_int_equal(weft_tensor_pattern(f->outs[0]), WEFT_PATTERN_ELEMWISE);
}

static void test_layer_normalization_last_axis(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 3, SHAPE(2, 3, 8));
    weft_value s = fx_input(f, "s", F32, 1, SHAPE(8)), b = fx_input(f, "b", F32, 1, SHAPE(8));
    weft_value y = fx_op(f, "LayerNormalization", "ln", 3, VALS(x, s, b), 1, ATTRS(attr_f("epsilon", 1e-5)));
    fx_assert_shape(f, y, 3, SHAPE(2, 3, 8));
    float *X = fx_rand(f, 48), *S = fx_rand(f, 8), *B = fx_rand(f, 8);
    float *Y = fx_run1(f, (const void *[]){X, S, B});
    double ref[48];
    for (int r = 0; r < 6; r++) {
        double m = 0, v = 0;
        for (int j = 0; j < 8; j++) m += X[r * 8 + j] / 8.0;
        for (int j = 0; j < 8; j++) v += (X[r * 8 + j] - m) * (X[r * 8 + j] - m) / 8.0;
        for (int j = 0; j < 8; j++) ref[r * 8 + j] = (X[r * 8 + j] - m) / sqrt(v + 1e-5) * S[j] + B[j];
    }
    fx_check_f32(Y, ref, 48, 1e-4);
}

static void test_log_softmax_mod_and_logic(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 2, SHAPE(2, 5));
    weft_value y = fx_op(f, "LogSoftmax", "lsm", 1, &x, 0, NULL);
    float *X = fx_rand(f, 10);
    float *Y = fx_run1(f, (const void *[]){X});
    double ref[10];
    for (int i = 0; i < 2; i++) {
        double s = 0;
        for (int j = 0; j < 5; j++) s += exp(X[i * 5 + j]);
        for (int j = 0; j < 5; j++) ref[i * 5 + j] = X[i * 5 + j] - log(s);
    }
    fx_check_f32(Y, ref, 10, 1e-5);

    weft_value a = fx_input(f, "a", I64, 1, SHAPE(4)), m = fx_const_i64(f, "m", 1, SHAPE(3));
    y = fx_op(f, "Mod", "mod", 2, VALS(a, m), 0, NULL);
    int64_t A[4] = {7, -7, 3, -1};
    fx_check_i64(fx_run1(f, (const void *[]){A, NULL}), (const int64_t[]){1, 2, 0, 2}, 4);

    weft_value p = fx_input(f, "p", WEFT_TYPE_BOOL, 1, SHAPE(4)), q = fx_input(f, "q", WEFT_TYPE_BOOL, 1, SHAPE(4));
    uint8_t P[4] = {0, 0, 1, 1}, Q[4] = {0, 1, 0, 1};
    const char *ops[3] = {"And", "Or", "Not"};
    const uint8_t want[3][4] = {{0, 0, 0, 1}, {0, 1, 1, 1}, {1, 1, 0, 0}};
    for (int o = 0; o < 3; o++) {
        y = fx_op(f, ops[o], NULL, o == 2 ? 1 : 2, VALS(p, q), 0, NULL);
        assert_int_equal(weft_graph_value_type(f->g, y), WEFT_TYPE_BOOL);
        uint8_t *Yb = fx_run1(f, (const void *[]){P, Q});
        for (int i = 0; i < 4; i++) assert_int_equal(Yb[i], want[o][i]);
    }
}

/* ---- errors ------------------------------------------------------------------------------ */

static void test_error_wrong_input_count(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 1, SHAPE(4)), y;
    fx_assert_error(weft_graph_add_op(f->g, "Relu", "relu1", 2, VALS(x, x), 0, NULL, 1, &y), WEFT_ERR_INVALID_ARG,
                    "Relu node 'relu1'", "expected 1");
    fx_assert_error(weft_graph_add_op(f->g, "Gemm", "g1", 1, &x, 0, NULL, 1, &y), WEFT_ERR_INVALID_ARG,
                    "Gemm node 'g1'", "expected 2 to 3");
    assert_int_equal(f->g->n_nodes, 0); /* failed adds leave no node */
}

static void test_error_broadcast_mismatch(void **state)
{
    fx *f = *state;
    weft_value a = fx_input(f, "a", F32, 2, SHAPE(2, 3)), b = fx_input(f, "b", F32, 1, SHAPE(4)), y;
    fx_assert_error(weft_graph_add_op(f->g, "Add", "add7", 2, VALS(a, b), 0, NULL, 1, &y), WEFT_ERR_SHAPE,
                    "Add node 'add7'", "[2,3] and [4]");
}

static void test_error_conv_bad_group_and_rank(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 4, SHAPE(1, 4, 5, 5)), w = fx_input(f, "w", F32, 4, SHAPE(4, 2, 3, 3));
    weft_value x3 = fx_input(f, "x3", F32, 3, SHAPE(1, 4, 5)), y;
    fx_assert_error(weft_graph_add_op(f->g, "Conv", "conv3", 2, VALS(x, w), 1, ATTRS(attr_i("group", 3)), 1, &y),
                    WEFT_ERR_SHAPE, "Conv node 'conv3'", "group=3");
    /* W has 2 input channels per group; group=1 needs 4 */
    fx_assert_error(weft_graph_add_op(f->g, "Conv", "conv4", 2, VALS(x, w), 0, NULL, 1, &y), WEFT_ERR_SHAPE,
                    "Conv node 'conv4'", "expected C/group");
    fx_assert_error(weft_graph_add_op(f->g, "Conv", "conv1", 2, VALS(x3, w), 0, NULL, 1, &y), WEFT_ERR_UNSUPPORTED,
                    "Conv node 'conv1': input X has 3 dims", "expected 4 (NCHW");
}

static void test_error_gemm_inner_mismatch(void **state)
{
    fx *f = *state;
    weft_value a = fx_input(f, "a", F32, 2, SHAPE(3, 4)), b = fx_input(f, "b", F32, 2, SHAPE(5, 6)), y;
    fx_assert_error(weft_graph_add_op(f->g, "Gemm", "fc2", 2, VALS(a, b), 0, NULL, 1, &y), WEFT_ERR_SHAPE,
                    "Gemm node 'fc2'", "K=4");
    fx_assert_error(weft_graph_add_op(f->g, "MatMul", "mm2", 2, VALS(a, b), 0, NULL, 1, &y), WEFT_ERR_SHAPE,
                    "MatMul node 'mm2'", "K=5");
}

static void test_error_dtype_and_attrs(void **state)
{
    fx *f = *state;
    weft_value a = fx_input(f, "a", F32, 2, SHAPE(3, 4)), i = fx_input(f, "i", I64, 2, SHAPE(3, 4)), y;
    fx_assert_error(weft_graph_add_op(f->g, "Add", "mixed", 2, VALS(a, i), 0, NULL, 1, &y), WEFT_ERR_INVALID_ARG,
                    "Add node 'mixed'", "float32 and int64");
    fx_assert_error(weft_graph_add_op(f->g, "Sigmoid", "sg", 1, &i, 0, NULL, 1, &y), WEFT_ERR_INVALID_ARG,
                    "Sigmoid node 'sg'", "expected float32");
    fx_assert_error(weft_graph_add_op(f->g, "Softmax", "sm", 1, &a, 1, ATTRS(attr_i("axis", 2)), 1, &y),
                    WEFT_ERR_INVALID_ARG, "Softmax node 'sm'", "axis=2");
    weft_value x4 = fx_input(f, "x4", F32, 4, SHAPE(1, 1, 4, 4));
    /* ceil_mode=1 takes the window past the end: 4x4, kernel 3, stride 2 -> 2x2 (floor: 1x1) */
    fx_assert_shape(f,
                    fx_op(f, "MaxPool", "mp", 1, &x4, 3,
                          ATTRS(attr_is("kernel_shape", 2, SHAPE(3, 3)), attr_is("strides", 2, SHAPE(2, 2)),
                                attr_i("ceil_mode", 1))),
                    4, SHAPE(1, 1, 2, 2));
    weft_value outs[2];
    /* a second output is MaxPool's Indices; AveragePool has none */
    fx_assert_error(weft_graph_add_op(f->g, "AveragePool", "ap2", 1, &x4, 1,
                                      ATTRS(attr_is("kernel_shape", 2, SHAPE(2, 2))), 2, outs),
                    WEFT_ERR_UNSUPPORTED, "AveragePool node 'ap2'", "2 outputs");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_unknown_op_names_it),
        cmocka_unit_test_setup_teardown(test_add_op_unknown_type_fails, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_add_broadcasts_3d_with_2d, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_binary_ops_broadcast_both_ways, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_binary_int64_shape_arithmetic, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_pow_constant_exponents, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_unary_ops_match_reference, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_compare_gives_bool, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_gemm_transb_with_c_alpha_beta, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_gemm_transa_without_c_is_one_stage, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_matmul_batched_with_2d_rhs, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_matmul_broadcasts_batch_dims, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_matmul_1d_operands, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_conv_pads_strides_dilation_bias, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_conv_depthwise_and_grouped, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_conv_same_upper_auto_pad, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_batchnorm_inference, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_pools_with_padding, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_global_average_pool, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_reduce_mean_keepdims_negative_axes, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_reduce_adjacent_axes_one_axis, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_reduce_sum_axes_input_and_max_all, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_softmax_axis1_of_3d, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_layer_normalization_last_axis, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_log_softmax_mod_and_logic, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_error_wrong_input_count, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_error_broadcast_mismatch, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_error_conv_bad_group_and_rank, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_error_gemm_inner_mismatch, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_error_dtype_and_attrs, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests_name("ops_graph_ops", tests, NULL, NULL);
}
