/* GPU features of the cost model (tuner/features.c, slots 62 and 63): threads per block and
 * loads per FMA at the thread level, on matmul kernels lowered for GPU caps with the GEMM rule
 * at known tiles (schedule/gemm_gpu.h), against the values worked out by hand from the tile:
 * 62 = lg(tm x tn), 63 = 1/rm + 1/rn + 1/kt. The CPU's default schedule leaves both 0, and a
 * bigger register tile gives fewer loads per FMA. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "tests/targets/gpu_io.h"
#include "tuner/tuner.h"

enum { F_THREAD_EXTENT = 58, F_GPU_TPB = 62, F_GPU_LOADS_PER_FMA = 63 };

static double lg(double x) { return log2(1.0 + x); }

/* Features of matmul M x N x K under the GEMM rule with tile (tm, tn, rm, rn, kt). */
static void gemm_features(int64_t M, int64_t N, int64_t K, const int64_t knobs[6], float *feat)
{
    weft_arena *a = weft_arena_create();
    weft_te_func *f = weft_op_matmul(a, M, N, K);
    weft_target_caps caps = weft_caps_gpu("cuda");
    weft_sketch sk;
    assert_int_equal(weft_sketch_make(f, &caps, &sk), WEFT_OK);
    assert_true(sk.knobbed);
    assert_string_equal(sk.ks.rule, "gpu_gemm"); /* knobs tm, tn, rm, rn, kt, unroll */
    weft_cand c;
    memset(&c, 0, sizeof c);
    memcpy(c.knob, knobs, sizeof c.knob[0] * 6);
    char *steps = weft_sketch_steps(&sk, &c);
    assert_non_null(steps);
    weft_loop_func *lf = NULL;
    weft_status rc = gpu_lower(a, f, steps, &caps, &lf);
    if (rc != WEFT_OK) print_error("%s\n%s\n", weft_last_error(), steps);
    assert_int_equal(rc, WEFT_OK);
    weft_features_extract(lf, feat);
    free(steps);
    weft_arena_destroy(a);
}

static void test_gemm_tiles(void **state)
{
    (void)state;
    float f[WEFT_FEATURE_DIM];
    /* 16 x 16 threads, register tile 4 x 8, K tile 16 */
    gemm_features(1024, 1024, 1024, (const int64_t[6]){16, 16, 4, 8, 16, 64}, f);
    assert_true(fabs(f[F_GPU_TPB] - lg(256)) < 1e-5);
    assert_true(fabs(f[F_GPU_LOADS_PER_FMA] - (1.0 / 4 + 1.0 / 8 + 1.0 / 16)) < 1e-5);
    /* blocks: 1024 / 64 x 1024 / 128 = 128; slot 58 covers threads and blocks */
    assert_true(f[F_THREAD_EXTENT] > f[F_GPU_TPB]);
    /* 8 x 32 threads, register tile 1 x 1, K tile 8: a load of A and B and C per FMA, less K reuse */
    float g[WEFT_FEATURE_DIM];
    gemm_features(256, 256, 256, (const int64_t[6]){8, 32, 1, 1, 8, 0}, g);
    assert_true(fabs(g[F_GPU_TPB] - lg(256)) < 1e-5);
    assert_true(fabs(g[F_GPU_LOADS_PER_FMA] - (1.0 + 1.0 + 1.0 / 8)) < 1e-5);
    /* 32 x 4 threads, 8 x 4 */
    gemm_features(512, 256, 128, (const int64_t[6]){32, 4, 8, 4, 32, 16}, g);
    assert_true(fabs(g[F_GPU_TPB] - lg(128)) < 1e-5);
    assert_true(fabs(g[F_GPU_LOADS_PER_FMA] - (1.0 / 8 + 1.0 / 4 + 1.0 / 32)) < 1e-5);
}

static void test_cpu_kernels_leave_them_zero(void **state)
{
    (void)state;
    weft_arena *a = weft_arena_create();
    weft_te_func *f = weft_op_matmul(a, 128, 128, 128);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    weft_target_caps caps = weft_caps_cpu(512, 2);
    assert_int_equal(weft_schedule_default(s, &caps), WEFT_OK);
    weft_loop_func *lf = NULL;
    assert_int_equal(weft_lower(s, &caps, a, &lf), WEFT_OK);
    float feat[WEFT_FEATURE_DIM];
    weft_features_extract(lf, feat);
    assert_true(feat[F_GPU_TPB] == 0.0f);
    assert_true(feat[F_GPU_LOADS_PER_FMA] == 0.0f);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_tiles),
        cmocka_unit_test(test_cpu_kernels_leave_them_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
