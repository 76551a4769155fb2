/* The GPU GEMM rule (schedule/gemm_gpu.c) without a GPU: the default GPU schedule of
 * matmul-like stages (matmul, dense + bias + relu, a batched matmul) picks it, runs in the
 * interpreter's GPU mode (threads forward and reversed) equal to the naive CPU schedule on
 * square, odd and tall/skinny shapes; tiles outside the caps are refused with a message naming
 * the limit; NVRTC compiles the kernels for sm_80 and sm_90 and, for a shape the tiles divide,
 * keeps the accumulators in registers (no load of C in the PTX); golden CUDA source for one
 * shape (tests/golden/cuda/matmul_gemm_default.cu, checked by test_gpu.c).
 *
 * Tolerance: max |x - ref| <= 1e-4 * max(1, max |ref|) (gpu_io.h; sums of at most 1000 products
 * of inputs in [-1, 1), reassociated by the K tiles). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "schedule/gemm_gpu.h"
#include "targets/gpu/emit_c.h"
#include "tests/targets/gpu_io.h"
#ifdef WEFT_WITH_CUDA
#include "targets/cuda/cuda.h"
#endif

/* The default GPU schedule's steps for f (malloc'd). */
static char *default_steps(const weft_te_func *f, const weft_target_caps *caps)
{
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_default(s, caps), WEFT_OK);
    char *text = weft_schedule_text(s);
    weft_schedule_destroy(s);
    return text;
}

static int n_nvrtc;

/* NVRTC compiles lf for arch; returns the PTX (malloc'd) or NULL where the CUDA target is not
 * built. Fails the test on a compile error. */
static char *nvrtc_ptx(const weft_loop_func *lf, const char *arch)
{
#ifdef WEFT_WITH_CUDA
    weft_gpu_source src;
    assert_int_equal(weft_gpu_emit(lf, &weft_gpu_dialect_cuda, &src), WEFT_OK);
    char *ptx = NULL;
    void *cubin = NULL;
    size_t size = 0;
    weft_status rc = weft_cuda_nvrtc(src.text, arch, &ptx, &cubin, &size);
    if (rc != WEFT_OK) print_error("nvrtc %s %s: %s\n%s\n", lf->name, arch, weft_last_error(), src.text);
    assert_int_equal(rc, WEFT_OK);
    assert_true(size > 0);
    free(src.text);
    free(cubin);
    n_nvrtc++;
    return ptx;
#else
    (void)lf;
    (void)arch;
    return NULL;
#endif
}

/* f's default GPU schedule uses the GEMM rule (shared slices of both operands), matches the
 * naive schedule in GPU mode and compiles for sm_80 and sm_90. */
static void check_default_gemm(const weft_te_func *f, const char *what, const char *a_name, const char *b_name)
{
    weft_target_caps caps = weft_caps_gpu("cuda");
    char *steps = default_steps(f, &caps);
    char want[64];
    snprintf(want, sizeof want, "cache_read %s shared", a_name);
    if (!strstr(steps, want)) print_error("%s: default steps without '%s':\n%s\n", what, want, steps);
    assert_non_null(strstr(steps, want));
    snprintf(want, sizeof want, "cache_read %s shared", b_name);
    assert_non_null(strstr(steps, want));
    weft_arena *a = weft_arena_create();
    weft_loop_func *lf = NULL;
    assert_int_equal(gpu_lower(a, f, steps, &caps, &lf), WEFT_OK);
    expect_gpu_matches_naive(f, lf, what, steps);
    free(nvrtc_ptx(lf, "sm_80"));
    free(nvrtc_ptx(lf, "sm_90"));
    free(steps);
    weft_arena_destroy(a);
}

static void test_default_gemm_matches_naive(void **state)
{
    (void)state;
    /* M, N, K from 1, 7, 37, 197, 1000: square, odd, tall and skinny, a vector (M = 1), K = 1 */
    static const int64_t shapes[][3] = {
        {37, 37, 37}, {197, 37, 7}, {7, 197, 37}, {1000, 7, 37}, {7, 1000, 37}, {1, 1000, 37},
        {1000, 1, 7}, {37, 7, 1000}, {1, 1, 197}, {197, 197, 1}, {64, 64, 32}, {1, 1, 1},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        weft_arena *a = weft_arena_create();
        weft_te_func *f = NULL;
        assert_int_equal(weft_op_build(a, "matmul", 3, shapes[i], &f), WEFT_OK);
        char what[64];
        snprintf(what, sizeof what, "matmul %lld,%lld,%lld", (long long)shapes[i][0], (long long)shapes[i][1],
                 (long long)shapes[i][2]);
        check_default_gemm(f, what, "A", "B");
        weft_arena_destroy(a);
    }
    /* dense + bias + relu: the product stage D gets the rule, the epilogue its own launch */
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    assert_int_equal(weft_op_build(a, "dense_bias_relu", 3, (int64_t[]){37, 197, 7}, &f), WEFT_OK);
    check_default_gemm(f, "dense_bias_relu 37,197,7", "A", "W");
    weft_arena_destroy(a);
}

/* C[b, i, j] = sum_k A[b, i, k] * B[b, k, j]: the batch axis on blockIdx.z. */
static void test_batched_gemm_matches_naive(void **state)
{
    (void)state;
    const int64_t nb = 3, m = 37, n = 19, k = 23;
    weft_arena *a = weft_arena_create();
    weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 3, (int64_t[]){nb, m, k});
    weft_tensor *B = weft_te_placeholder(a, "B", WEFT_F32, 3, (int64_t[]){nb, k, n});
    weft_tensor *C = weft_te_compute(a, "C", 3, (int64_t[]){nb, m, n}, (const char *const[]){"b", "i", "j"});
    const weft_expr *b = weft_te_axis(C, 0), *i = weft_te_axis(C, 1), *j = weft_te_axis(C, 2);
    const weft_expr *r = weft_te_reduce_axis(a, C, "k", k);
    weft_te_set_body(C, WEFT_REDUCE_SUM, weft_mul(a, weft_te_at(a, A, b, i, r), weft_te_at(a, B, b, r, j)));
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "bmm", 2, (const weft_tensor *const[]){A, B}, 1, (const weft_tensor *const[]){C}, &f),
                     WEFT_OK);
    weft_gpu_gemm_shape g;
    assert_true(weft_gpu_gemm_form(C, &g));
    assert_true(g.a == A && g.b == B && g.batch == nb && g.m == m && g.n == n && g.k == k);
    weft_target_caps caps = weft_caps_gpu("cuda");
    char *steps = default_steps(f, &caps);
    assert_non_null(strstr(steps, "bind C b blockIdx.z"));
    free(steps);
    check_default_gemm(f, "batched matmul 3x37x19x23", "A", "B");
    weft_arena_destroy(a);
}

static void test_gemm_form_and_limits(void **state)
{
    (void)state;
    weft_arena *a = weft_arena_create();
    weft_te_func *mm = NULL, *sm = NULL, *cv = NULL;
    assert_int_equal(weft_op_build(a, "matmul", 3, (int64_t[]){64, 48, 32}, &mm), WEFT_OK);
    assert_int_equal(weft_op_build(a, "reduce_sum", 2, (int64_t[]){8, 40}, &sm), WEFT_OK);
    assert_int_equal(weft_op_build(a, "conv2d", 9, (int64_t[]){1, 3, 9, 9, 4, 3, 3, 1, 1}, &cv), WEFT_OK);
    weft_gpu_gemm_shape g;
    assert_false(weft_gpu_gemm_form(sm->outputs[0], &g)); /* one operand */
    assert_false(weft_gpu_gemm_form(cv->outputs[0], &g)); /* three reduction axes */
    assert_true(weft_gpu_gemm_form(mm->outputs[0], &g));
    assert_true(g.m == 64 && g.n == 48 && g.k == 32 && g.batch == 1);
    weft_target_caps caps = weft_caps_gpu("cuda");
    weft_gpu_gemm_tile t;
    weft_gpu_gemm_default_tile(&g, &caps, &t);
    assert_int_equal(weft_gpu_gemm_check(&g, &t, &caps), WEFT_OK);
    assert_int_equal((t.tm * t.tn) % 32, 0);
    struct {
        weft_gpu_gemm_tile t;
        const char *want;
    } bad[] = {
        {{8, 10, 1, 1, 16, 0}, "not a whole number of 32-thread warps"},
        {{32, 64, 1, 1, 16, 0}, "within 1024"},
        {{16, 16, 16, 16, 32, 0}, "65536 bytes of shared memory, the target allows 49152"},
        {{16, 16, 16, 16, 8, 0}, "registers per thread"},
        {{16, 16, 1, 1, 64, 0}, "K tile 64 exceeds K = 32"},
        {{16, 16, 0, 1, 8, 0}, "must be positive"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        weft_status rc = weft_gpu_gemm_check(&g, &bad[i].t, &caps);
        if (rc == WEFT_OK || !strstr(weft_last_error(), bad[i].want))
            print_error("tile %zu: got '%s', wanted '%s'\n", i, rc == WEFT_OK ? "ok" : weft_last_error(), bad[i].want);
        assert_int_not_equal(rc, WEFT_OK);
        assert_non_null(strstr(weft_last_error(), bad[i].want));
    }
    /* the rule refuses a stage that is not matmul-like, naming it */
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(sm, &s), WEFT_OK);
    assert_int_not_equal(weft_gpu_gemm_apply(s, sm->outputs[0]->name, &t, &caps), WEFT_OK);
    assert_non_null(strstr(weft_last_error(), "is not matmul-like"));
    weft_schedule_destroy(s);
    /* wavefronts of 64 and a 256-thread limit: whole wavefronts, within the limit */
    weft_target_caps amd = caps;
    amd.warp_size = 64;
    amd.max_threads = 256;
    weft_gpu_gemm_shape small = {g.a, g.b, 1, 1, 7, 5};
    weft_gpu_gemm_default_tile(&small, &amd, &t);
    assert_int_equal(weft_gpu_gemm_check(&small, &t, &amd), WEFT_OK);
    assert_int_equal((t.tm * t.tn) % 64, 0);
    weft_arena_destroy(a);
}

/* 1024^3 and 128x3072x768 (tiles divide them): the default tile is 8 x 8 or 4 x 4 per thread
 * and NVRTC keeps C in registers (every load in the PTX is an operand's). */
static void test_gemm_accumulates_in_registers(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{1024, 1024, 1024}, {128, 3072, 768}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        weft_arena *a = weft_arena_create();
        weft_te_func *f = NULL;
        weft_loop_func *lf = NULL;
        assert_int_equal(weft_op_build(a, "matmul", 3, shapes[i], &f), WEFT_OK);
        weft_target_caps caps = weft_caps_gpu("cuda");
        weft_gpu_gemm_shape g;
        weft_gpu_gemm_tile t;
        assert_true(weft_gpu_gemm_form(f->outputs[0], &g));
        weft_gpu_gemm_default_tile(&g, &caps, &t);
        printf("matmul %lldx%lldx%lld: threads %lldx%lld, register tile %lldx%lld, K tile %lld\n", (long long)shapes[i][0],
               (long long)shapes[i][1], (long long)shapes[i][2], (long long)t.tm, (long long)t.tn, (long long)t.rm,
               (long long)t.rn, (long long)t.kt);
        assert_true(t.rm * t.rn >= 4 && t.tm * t.tn == 256);
        assert_int_equal(gpu_lower(a, f, NULL, &caps, &lf), WEFT_OK);
        char *ptx = nvrtc_ptx(lf, "sm_90");
        if (ptx) {
            int fma = 0, c_loads = 0;
            for (const char *p = ptx; (p = strstr(p, "fma.rn.f32")); p++) fma++;
            /* operand loads are read-only (ld.global.nc); a plain global load would be C's */
            for (const char *p = ptx; (p = strstr(p, "ld.global.")); p++) c_loads += strncmp(p, "ld.global.nc", 12) != 0;
            if (c_loads) print_error("%d loads of C in the PTX:\n%s\n", c_loads, ptx);
            assert_int_equal(c_loads, 0);
            assert_true(fma >= t.rm * t.rn);
            free(ptx);
        }
        weft_arena_destroy(a);
    }
#ifndef WEFT_WITH_CUDA
    printf("skipped the PTX checks: the CUDA target is not built (NVRTC not found)\n");
#else
    printf("NVRTC compiled %d kernels in this run\n", n_nvrtc);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_form_and_limits),
        cmocka_unit_test(test_default_gemm_matches_naive),
        cmocka_unit_test(test_batched_gemm_matches_naive),
        cmocka_unit_test(test_gemm_accumulates_in_registers),
    };
    return cmocka_run_group_tests_name("gpu_gemm", tests, NULL, NULL);
}
