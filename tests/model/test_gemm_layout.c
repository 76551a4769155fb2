/* The model's matmul weight layout (model/passes.c, weft_model_matmul_weight_layout) for
 * widths that are not a multiple of the block: a Gemm / MatMul with a constant B [K, N] reads
 * it blocked [ceil(N/nb), K, nb] with the last block zero-padded, and the product still stops
 * at column N (widths of at least two blocks; narrower ones stay unblocked). Each case (M rows from 1 to 33; N from 70 to 1001, some not multiples of 32 or
 * 16; Gemm with bias, and MatMul) is compiled with default schedules at 1 and 2 threads and
 * compared with plain C in double precision written here:
 *
 *   max |weft - ref| <= 1e-4 * max |ref|
 *
 * and the compiled kernel must read the blocked constant (a parameter named "<B>.blk" whose
 * block count is ceil(N / nb)). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_internal.h"
#include "weft/graph.h"

typedef struct gemm_case {
    int64_t m, n, k;
    bool matmul; /* MatMul (no bias) instead of Gemm with bias */
} gemm_case;

static const gemm_case cases[] = {
    {1, 1000, 1280, false}, {5, 1000, 96, false}, {1, 97, 200, false},   {33, 333, 64, false},
    {8, 1001, 48, true},    {1, 70, 512, true},   {17, 100, 100, false},
};

static uint64_t rng = 1;
static float urand(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static float *random_buf(size_t n)
{
    float *p = malloc(n * sizeof *p + 4);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) p[i] = urand();
    return p;
}

static void run_case(const gemm_case *t, int threads)
{
    rng = 77 + (uint64_t)(t - cases);
    float *a = random_buf((size_t)(t->m * t->k)), *b = random_buf((size_t)(t->k * t->n)), *c = random_buf((size_t)t->n);
    float *y = malloc(sizeof(float) * (size_t)(t->m * t->n) + 4);
    double *ref = malloc(sizeof(double) * (size_t)(t->m * t->n) + 8);
    assert_non_null(y);
    assert_non_null(ref);
    double mx = 0;
    for (int64_t i = 0; i < t->m; i++)
        for (int64_t j = 0; j < t->n; j++) {
            double acc = t->matmul ? 0.0 : c[j];
            for (int64_t k = 0; k < t->k; k++) acc += (double)a[i * t->k + k] * b[k * t->n + j];
            ref[i * t->n + j] = acc;
            mx = fmax(mx, fabs(acc));
        }

    weft_graph *g = NULL;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    weft_value x, w, bias, out;
    int64_t xs[2] = {t->m, t->k}, ws[2] = {t->k, t->n};
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 2, xs, &x), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "w", WEFT_TYPE_FLOAT32, 2, ws, b, &w), WEFT_OK);
    if (t->matmul) {
        assert_int_equal(weft_graph_add_op(g, "MatMul", "mm", 2, (weft_value[]){x, w}, 0, NULL, 1, &out), WEFT_OK);
    } else {
        assert_int_equal(weft_graph_add_constant(g, "c", WEFT_TYPE_FLOAT32, 1, &t->n, c, &bias), WEFT_OK);
        assert_int_equal(weft_graph_add_op(g, "Gemm", "gemm", 3, (weft_value[]){x, w, bias}, 0, NULL, 1, &out), WEFT_OK);
    }
    assert_int_equal(weft_graph_set_output(g, out, "y"), WEFT_OK);
    weft_model *m = NULL;
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    weft_status rc = weft_model_compile(g, &o, &m);
    if (rc != WEFT_OK) print_error("case %d: %s\n", (int)(t - cases), weft_last_error());
    assert_int_equal(rc, WEFT_OK);

    /* the kernel reads the blocked, padded constant */
    bool blocked = false;
    for (int kk = 0; kk < m->n_kernels; kk++)
        for (int p = 0; p < m->kernels[kk].n_params; p++) {
            const weft_gvalue *v = &m->g->values[m->kernels[kk].params[p]];
            if (v->name && strstr(v->name, ".blk") && v->ndim == 3 && v->shape[1] == t->k) {
                blocked = true;
                assert_int_equal(v->shape[0], (t->n + v->shape[2] - 1) / v->shape[2]);
            }
        }
    if (!blocked) print_error("case %d: the weight was not blocked\n", (int)(t - cases));
    assert_true(blocked);

    assert_int_equal(weft_model_run(m, (const void *[]){a}, (void *[]){y}), WEFT_OK);
    double err = 0;
    for (int64_t i = 0; i < t->m * t->n; i++) err = fmax(err, fabs(y[i] - ref[i]));
    if (err > 1e-4 * mx)
        print_error("case %d (%lldx%lldx%lld, %d threads): max err %g, max |ref| %g\n", (int)(t - cases), (long long)t->m,
                    (long long)t->n, (long long)t->k, threads, err, mx);
    assert_true(err <= 1e-4 * mx);
    weft_model_destroy(m);
    weft_graph_destroy(g);
    free(a), free(b), free(c), free(y), free(ref);
}

static void test_padded_blocked_weights_match_reference(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&cases[i], 1);
        run_case(&cases[i], 2);
    }
}

/* Heads transposed back and merged ([B, H, N, D] -> [B, N, H, D] -> [B*N, H*D]) before a
 * product: the Transpose is a kernel of its own (read through the merging Reshape, the
 * product's reduction index would be divided back into (h, d) at every step), and the
 * result matches. A Transpose read through a Reshape that splits the last axis instead
 * (attention's [N, H*D] -> [N, H, D] -> [H, N, D]) still fuses into the product. */
static void test_merged_heads_apart_from_product(void **state)
{
    (void)state;
    enum { B = 2, H = 4, N = 8, D = 16, F = 24 };
    float *x = malloc(sizeof(float) * B * H * N * D), *w = malloc(sizeof(float) * H * D * F), *y = malloc(sizeof(float) * H * B * N * F);
    for (int i = 0; i < B * H * N * D; i++) x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    for (int i = 0; i < H * D * F; i++) w[i] = (float)((i * 53) % 97) / 48.0f - 1.0f;
    for (int split = 0; split < 2; split++) {
        weft_graph *g = NULL;
        weft_value xv, tv, sv, rv, wv, yv;
        assert_int_equal(weft_graph_create(&g), WEFT_OK);
        int64_t xs[4] = {B, H, N, D}, ws[2] = {H * D, F}, wd[2] = {D, F}, two = 2;
        int64_t x3[3] = {B * N, H, D}; /* split: x [B*N, H*D] read as [B*N, H, D] */
        if (split) assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 2, (int64_t[]){B * N, H * D}, &xv), WEFT_OK);
        else assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, xs, &xv), WEFT_OK);
        weft_attr perm = {.name = "perm", .kind = WEFT_ATTR_INTS, .n = split ? 3 : 4,
                          .ints = split ? (const int64_t[]){1, 0, 2} : (const int64_t[]){0, 2, 1, 3}};
        if (split) {
            assert_int_equal(weft_graph_add_constant(g, "shape", WEFT_TYPE_INT64, 1, (int64_t[]){3}, x3, &sv), WEFT_OK);
            assert_int_equal(weft_graph_add_op(g, "Reshape", "r", 2, (weft_value[]){xv, sv}, 0, NULL, 1, &rv), WEFT_OK);
            assert_int_equal(weft_graph_add_op(g, "Transpose", "t", 1, &rv, 1, &perm, 1, &tv), WEFT_OK);
            assert_int_equal(weft_graph_add_constant(g, "w", WEFT_TYPE_FLOAT32, 2, wd, w, &wv), WEFT_OK);
            assert_int_equal(weft_graph_add_op(g, "MatMul", "mm", 2, (weft_value[]){tv, wv}, 0, NULL, 1, &yv), WEFT_OK);
        } else {
            assert_int_equal(weft_graph_add_op(g, "Transpose", "t", 1, &xv, 1, &perm, 1, &tv), WEFT_OK);
            assert_int_equal(weft_graph_add_constant(g, "shape", WEFT_TYPE_INT64, 1, &two, (int64_t[]){B * N, H * D}, &sv), WEFT_OK);
            assert_int_equal(weft_graph_add_op(g, "Reshape", "r", 2, (weft_value[]){tv, sv}, 0, NULL, 1, &rv), WEFT_OK);
            assert_int_equal(weft_graph_add_constant(g, "w", WEFT_TYPE_FLOAT32, 2, ws, w, &wv), WEFT_OK);
            assert_int_equal(weft_graph_add_op(g, "MatMul", "mm", 2, (weft_value[]){rv, wv}, 0, NULL, 1, &yv), WEFT_OK);
        }
        assert_int_equal(weft_graph_set_output(g, yv, "y"), WEFT_OK);
        weft_model *m = NULL;
        weft_model_options o = weft_model_options_default();
        assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
        assert_int_equal(weft_model_n_kernels(m), split ? 1 : 2);
        assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){y}), WEFT_OK);
        double err = 0, mx = 0;
        if (split) /* y [H, B*N, F] = x[r, h*D + d] * w[d, f] */
            for (int h = 0; h < H; h++)
                for (int r = 0; r < B * N; r++)
                    for (int f = 0; f < F; f++) {
                        double sum = 0;
                        for (int d = 0; d < D; d++) sum += (double)x[r * H * D + h * D + d] * w[d * F + f];
                        err = fmax(err, fabs(y[(h * B * N + r) * F + f] - sum)), mx = fmax(mx, fabs(sum));
                    }
        else /* y [B*N, F] = x[b, h, n, d] * w[h*D + d, f] */
            for (int b = 0; b < B; b++)
                for (int n = 0; n < N; n++)
                    for (int f = 0; f < F; f++) {
                        double sum = 0;
                        for (int h = 0; h < H; h++)
                            for (int d = 0; d < D; d++) sum += (double)x[((b * H + h) * N + n) * D + d] * w[(h * D + d) * F + f];
                        err = fmax(err, fabs(y[(b * N + n) * F + f] - sum)), mx = fmax(mx, fabs(sum));
                    }
        assert_true(err <= 1e-4 * mx);
        weft_model_destroy(m);
        weft_graph_destroy(g);
    }
    free(x), free(w), free(y);
}

/* A Transpose that moves the last axis ([1, C, H, W] -> [1, C, W, H]) read by a Concat with
 * another input (a copy that enlarges the data) is a kernel of its own: 2 kernels, where a
 * Transpose keeping the last axis fuses into the Concat (1 kernel). Values exact (copies). */
static void test_transpose_apart_from_concat(void **state)
{
    (void)state;
    enum { C = 4, H = 8, W = 16 };
    float *x = malloc(sizeof(float) * C * H * W), *z = malloc(sizeof(float) * C * H * W), *y = malloc(sizeof(float) * 2 * C * H * W);
    for (int i = 0; i < C * H * W; i++) x[i] = (float)i, z[i] = -(float)i - 1;
    for (int moves = 0; moves < 2; moves++) {
        weft_graph *g = NULL;
        weft_value xv, zv, tv, yv;
        /* moves: x [1, C, W, H] -> perm [0, 1, 3, 2]; else x [1, H, C, W] -> perm [0, 2, 1, 3] */
        int64_t xs[4] = {1, moves ? C : H, moves ? W : C, moves ? H : W}, zs[4] = {1, C, H, W};
        assert_int_equal(weft_graph_create(&g), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, xs, &xv), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "z", WEFT_TYPE_FLOAT32, 4, zs, &zv), WEFT_OK);
        weft_attr perm = {.name = "perm", .kind = WEFT_ATTR_INTS, .n = 4,
                          .ints = moves ? (const int64_t[]){0, 1, 3, 2} : (const int64_t[]){0, 2, 1, 3}};
        assert_int_equal(weft_graph_add_op(g, "Transpose", "t", 1, &xv, 1, &perm, 1, &tv), WEFT_OK);
        weft_attr axis = {.name = "axis", .kind = WEFT_ATTR_INT, .i = 1};
        assert_int_equal(weft_graph_add_op(g, "Concat", "cat", 2, (weft_value[]){tv, zv}, 1, &axis, 1, &yv), WEFT_OK);
        assert_int_equal(weft_graph_set_output(g, yv, "y"), WEFT_OK);
        weft_model *m = NULL;
        weft_model_options o = weft_model_options_default();
        assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
        assert_int_equal(weft_model_n_kernels(m), moves ? 2 : 1);
        assert_int_equal(weft_model_run(m, (const void *[]){x, z}, (void *[]){y}), WEFT_OK);
        for (int c = 0; c < 2 * C; c++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++) {
                    float want = c >= C ? z[((c - C) * H + h) * W + w] : moves ? x[(c * W + w) * H + h] : x[(h * C + c) * W + w];
                    if (y[(c * H + h) * W + w] != want)
                        fail_msg("moves %d: y[%d, %d, %d] = %g, want %g", moves, c, h, w, (double)y[(c * H + h) * W + w], (double)want);
                }
        weft_model_destroy(m);
        weft_graph_destroy(g);
    }
    free(x), free(z), free(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_padded_blocked_weights_match_reference),
                                       cmocka_unit_test(test_merged_heads_apart_from_product),
                                       cmocka_unit_test(test_transpose_apart_from_concat)};
    return cmocka_run_group_tests_name("model_gemm_layout", tests, NULL, NULL);
}
