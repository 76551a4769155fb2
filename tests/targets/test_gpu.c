/* GPU path without a GPU: the bind step's validation, the launch check's refusals, the
 * interpreter's GPU mode (threads forward and reversed) against the naive schedule for a
 * shared-memory matmul, every op's default GPU schedule and >= 200 random GPU schedules, a
 * missing barrier caught, NVRTC compiling every one of those kernels (skipped with a message
 * where the CUDA target is not built), and golden CUDA source (tests/golden/cuda).
 *
 * Tolerance: max |x - ref| <= 1e-4 * max(1, max |ref|) (schedules reassociate float sums of at
 * most a few hundred terms of inputs in [-1, 1]). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/slurp.h"
#include "ir/print.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "runtime/runtime.h"
#include "targets/gpu/emit_c.h"
#include "targets/interp/interp.h"
#include "tests/targets/gpu_io.h"
#ifdef WEFT_WITH_CUDA
#include "targets/cuda/cuda.h"
#endif

#define TOL 1e-4 /* relative, as expect_gpu_matches_naive (gpu_io.h) */

static const char tiled_matmul[] = "cache_read A shared C\n"
                                   "cache_read B shared C\n"
                                   "split C i 8\n"
                                   "split C j 8\n"
                                   "split C k 8\n"
                                   "reorder C i.0 j.0 k.0 i.1 j.1 k.1\n"
                                   "bind C i.0 blockIdx.y\n"
                                   "bind C j.0 blockIdx.x\n"
                                   "bind C i.1 threadIdx.y\n"
                                   "bind C j.1 threadIdx.x\n"
                                   "compute_at A.shared C k.0\n"
                                   "compute_at B.shared C k.0\n"
                                   "bind A.shared ax0 threadIdx.y\n"
                                   "bind A.shared ax1 threadIdx.x\n"
                                   "bind B.shared ax0 threadIdx.y\n"
                                   "bind B.shared ax1 threadIdx.x\n";

/* Applies text to a fresh schedule of f; returns the status and the message in msg. */
static weft_status apply(const weft_te_func *f, const char *text, char *msg, size_t n)
{
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    weft_status rc = weft_schedule_apply_text(s, text);
    snprintf(msg, n, "%s", rc == WEFT_OK ? "" : weft_last_error());
    weft_schedule_destroy(s);
    return rc;
}

static void expect_refused(const weft_te_func *f, const char *text, const char *want)
{
    char msg[1024];
    weft_status rc = apply(f, text, msg, sizeof msg);
    if (rc == WEFT_OK || !strstr(msg, want)) print_error("'%s': got '%s', wanted '%s'\n", text, msg, want);
    assert_int_not_equal(rc, WEFT_OK);
    assert_non_null(strstr(msg, want));
}

static void test_bind_validation(void **state)
{
    (void)state;
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    int64_t shape[3] = {32, 32, 16};
    assert_int_equal(weft_op_build(a, "matmul", 3, shape, &f), WEFT_OK);
    expect_refused(f, "bind C k threadIdx.x", "step 'bind C k threadIdx.x': cannot bind reduction iterator k");
    expect_refused(f, "bind C i warp.x", "unknown GPU axis 'warp.x'");
    expect_refused(f, "bind C i blockIdx.x; bind C j blockIdx.x", "already binds i to blockIdx.x");
    expect_refused(f, "bind C i threadIdx.x; bind C j blockIdx.x", "block axis blockIdx.x of stage C must be outside");
    expect_refused(f, "bind C j blockIdx.x; bind C i threadIdx.x", "thread axis threadIdx.x of stage C must be inside");
    expect_refused(f, "bind C nope threadIdx.x", "nope");
    expect_refused(f, "bind C i", "needs at least 3 arguments");
    /* Valid binds print and replay to the same schedule. */
    weft_schedule *s = NULL, *r = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_apply_text(s, "split C i 8; bind C i.0 blockIdx.x; bind C i.1 threadIdx.x"), WEFT_OK);
    char *text = weft_schedule_text(s);
    assert_non_null(strstr(text, "bind C i.1 threadIdx.x"));
    assert_int_equal(weft_schedule_create(f, &r), WEFT_OK);
    assert_int_equal(weft_schedule_apply_text(r, text), WEFT_OK);
    char *again = weft_schedule_text(r);
    assert_string_equal(text, again);
    free(text);
    free(again);
    weft_schedule_destroy(s);
    weft_schedule_destroy(r);
    weft_arena_destroy(a);
}

static void expect_unlaunchable(const char *op, int n, const int64_t *shape, const char *text,
                                const weft_target_caps *caps, const char *want)
{
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    weft_loop_func *lf = NULL;
    assert_int_equal(weft_op_build(a, op, n, shape, &f), WEFT_OK);
    weft_status rc = gpu_lower(a, f, text, caps, &lf);
    const char *msg = rc == WEFT_OK ? "(lowered)" : weft_last_error();
    if (rc == WEFT_OK || !strstr(msg, want)) print_error("%s '%s': got '%s', wanted '%s'\n", op, text, msg, want);
    assert_int_not_equal(rc, WEFT_OK);
    assert_non_null(strstr(msg, want));
    weft_arena_destroy(a);
}

static void test_launch_check_refusals(void **state)
{
    (void)state;
    weft_target_caps caps = weft_caps_gpu("gpu");
    int64_t mm[3] = {64, 32, 16}, wide[3] = {4, 2048, 8};
    expect_unlaunchable("matmul", 3, mm, "", &caps, "the store to C is outside every bound loop");
    expect_unlaunchable("matmul", 3, mm, "parallel C i; bind C j threadIdx.x", &caps, "loop i is parallel");
    expect_unlaunchable("matmul", 3, mm, "bind C i threadIdx.y; bind C j threadIdx.x", &caps, "2048 threads per block");
    expect_unlaunchable("matmul", 3, wide, "bind C i blockIdx.x; bind C j threadIdx.x", &caps, "block extent 2048 on threadIdx.x");
    expect_unlaunchable("matmul", 3, mm,
                        "cache_read A shared C; split C j 8; bind C i blockIdx.x; bind C j.1 threadIdx.x; "
                        "compute_at A.shared C i",
                        &caps, "the store to A.shared is outside every thread-bound loop");
    expect_unlaunchable("matmul", 3, mm,
                        "cache_write C local; split C j 8; bind C i blockIdx.x; bind C j.1 threadIdx.x; "
                        "compute_at C.local C j.0",
                        &caps, "local buffer C.local is allocated outside the thread loops");
    int64_t sq[3] = {32, 32, 32};
    weft_target_caps small = caps;
    small.shared_bytes = 256;
    expect_unlaunchable("matmul", 3, sq, tiled_matmul, &small, "512 bytes of shared memory, the target allows 256");
    expect_unlaunchable("matmul", 3, sq,
                        "cache_read A shared C; split C i 8; bind C i.0 blockIdx.x; bind C i.1 threadIdx.x; "
                        "compute_at A.shared C i.1",
                        &caps, "shared buffer A.shared is allocated inside a thread loop");
    /* CPU targets refuse bound loops. */
    weft_target_caps cpu = weft_caps_cpu(256, 2);
    cpu.name = "cpu";
    expect_unlaunchable("matmul", 3, mm, "bind C i blockIdx.x; bind C j threadIdx.x", &cpu, "has no thread binding");
}

/* ---- running ---------------------------------------------------------------------------- */

static int n_compiled;

/* NVRTC compiles lf for sm_90 to a cubin (when the CUDA target is built). */
static bool nvrtc_ok(const weft_loop_func *lf)
{
#ifdef WEFT_WITH_CUDA
    weft_gpu_source src;
    if (weft_gpu_emit(lf, &weft_gpu_dialect_cuda, &src) != WEFT_OK) {
        print_error("emit %s: %s\n", lf->name, weft_last_error());
        return false;
    }
    void *cubin = NULL;
    size_t size = 0;
    weft_status rc = weft_cuda_nvrtc(src.text, "sm_90", NULL, &cubin, &size);
    if (rc != WEFT_OK) print_error("nvrtc %s: %s\nsource:\n%s\n", lf->name, weft_last_error(), src.text);
    free(src.text);
    free(cubin);
    n_compiled += rc == WEFT_OK;
    return rc == WEFT_OK && size > 0;
#else
    (void)lf;
    return true;
#endif
}

/* Lowers text (NULL: the default GPU schedule) for op/shape, runs it forward and reversed in
 * GPU mode against the naive schedule, compiles it with NVRTC. Returns false when it does not
 * lower (not launchable); fails the test on a wrong result. */
static bool check_gpu(const char *op, int n, const int64_t *shape, const char *text)
{
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    weft_loop_func *lf = NULL;
    assert_int_equal(weft_op_build(a, op, n, shape, &f), WEFT_OK);
    weft_target_caps caps = weft_caps_gpu("gpu");
    if (gpu_lower(a, f, text, &caps, &lf) != WEFT_OK) {
        if (!text) print_error("%s default: %s\n", op, weft_last_error());
        assert_non_null(text); /* default schedules must lower */
        weft_arena_destroy(a);
        return false;
    }
    expect_gpu_matches_naive(f, lf, op, text);
    assert_true(nvrtc_ok(lf));
    weft_arena_destroy(a);
    return true;
}

static void test_shared_matmul_matches_naive(void **state)
{
    (void)state;
    int64_t even[3] = {32, 24, 16}, ragged[3] = {21, 19, 13};
    assert_true(check_gpu("matmul", 3, even, tiled_matmul));
    assert_true(check_gpu("matmul", 3, ragged, tiled_matmul));
}

static void test_default_gpu_schedules_match_naive(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        int n;
        int64_t shape[9];
    } cases[] = {
        {"matmul", 3, {33, 17, 20}},          {"dense_bias_relu", 3, {9, 40, 12}}, {"conv2d", 9, {2, 3, 9, 9, 4, 3, 3, 2, 1}},
        {"softmax", 2, {5, 300}},             {"layer_norm", 2, {6, 50}},          {"reduce_sum", 2, {7, 29}},
        {"relu", 3, {3, 5, 40}},              {"add", 2, {17, 31}},                {"gelu", 1, {1000}},
        /* block per row (schedule/default_gpu.c): rows longer than a block, a split that does
         * not divide the row (1000 = 3 x 256 + 232), a row shorter than a block */
        {"reduce_sum", 2, {3, 1000}},         {"softmax", 2, {2, 1000}},           {"layer_norm", 2, {4, 700}},
        {"softmax", 2, {1, 64}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_true(check_gpu(cases[i].op, cases[i].n, cases[i].shape, NULL));
}

static void test_random_gpu_schedules_match_naive(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        int n;
        int64_t shape[9];
    } cases[] = {
        {"matmul", 3, {19, 24, 11}},
        {"conv2d", 9, {1, 3, 7, 7, 4, 3, 3, 1, 1}},
        {"softmax", 2, {6, 21}},
        {"dense_bias_relu", 3, {8, 20, 9}},
        {"layer_norm", 2, {5, 18}},
    };
    int valid = 0, tried = 0;
    for (uint64_t seed = 1; valid < 200 && tried < 3000; seed++) {
        size_t c = seed % (sizeof cases / sizeof cases[0]);
        weft_arena *a = weft_arena_create();
        weft_te_func *f = NULL;
        weft_schedule *s = NULL;
        assert_int_equal(weft_op_build(a, cases[c].op, cases[c].n, cases[c].shape, &f), WEFT_OK);
        assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
        assert_int_equal(weft_schedule_random_gpu(s, seed, 6), WEFT_OK);
        char *text = weft_schedule_text(s);
        tried++;
        if (strstr(text, "bind")) valid += check_gpu(cases[c].op, cases[c].n, cases[c].shape, text);
        free(text);
        weft_schedule_destroy(s);
        weft_arena_destroy(a);
    }
    printf("random GPU schedules: %d launchable of %d drawn, all match the naive schedule\n", valid, tried);
    assert_true(valid >= 200);
}

/* The tiled matmul without its barriers gives a wrong result in the GPU mode. */
static const weft_stmt *strip(weft_arena *a, const weft_stmt *s)
{
    switch (s->kind) {
    case WEFT_STMT_FOR:
        return weft_for_full(a, s->u.loop.var, s->u.loop.min, s->u.loop.extent, s->u.loop.kind, s->u.loop.thread_axis,
                             s->u.loop.auto_unroll, strip(a, s->u.loop.body));
    case WEFT_STMT_ALLOCATE: return weft_allocate(a, s->u.alloc.buf, strip(a, s->u.alloc.body));
    case WEFT_STMT_IF:
        return weft_if(a, s->u.cond.cond, strip(a, s->u.cond.then_s), s->u.cond.else_s ? strip(a, s->u.cond.else_s) : NULL);
    case WEFT_STMT_SEQ: {
        const weft_stmt **items = weft_arena_alloc(a, sizeof *items * (size_t)(s->u.seq.n + 1));
        int m = 0;
        for (int i = 0; i < s->u.seq.n; i++)
            if (s->u.seq.items[i]->kind != WEFT_STMT_BARRIER) items[m++] = strip(a, s->u.seq.items[i]);
        return weft_seq(a, m, items);
    }
    default: return s;
    }
}

static void test_missing_barrier_is_caught(void **state)
{
    (void)state;
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    weft_loop_func *lf = NULL;
    int64_t shape[3] = {16, 16, 16};
    assert_int_equal(weft_op_build(a, "matmul", 3, shape, &f), WEFT_OK);
    weft_target_caps caps = weft_caps_gpu("gpu");
    assert_int_equal(gpu_lower(a, f, tiled_matmul, &caps, &lf), WEFT_OK);
    io b;
    io_init(&b, f);
    float *ref = naive_ref(f, &b);
    assert_true(gpu_error(lf, &b, ref, false) <= TOL);
    weft_loop_func bare = *lf;
    bare.body = strip(a, lf->body);
    char *ir = weft_ir_func_str(&bare);
    assert_null(strstr(ir, "barrier"));
    free(ir);
    double fwd = gpu_error(&bare, &b, ref, false), rev = gpu_error(&bare, &b, ref, true);
    assert_true(!(fwd <= TOL) || !(rev <= TOL)); /* NaN (poisoned shared memory) counts as wrong */
    /* The plain CPU interpreter runs threads loop by loop and does not notice. */
    assert_int_equal(weft_interp_run(&bare, b.p), WEFT_OK);
    free(ref);
    io_free(&b);
    weft_arena_destroy(a);
}

/* tests/golden/cuda/NAME.steps ("# OP SHAPE", then steps or "default") against NAME.cu. */
static void test_golden_cuda_source(void **state)
{
    (void)state;
    static const char *const names[] = {"matmul_shared", "softmax_default", "conv2d_default", "matmul_gemm_default"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/golden/cuda/%s.steps", names[i]);
        char *steps = slurp(path);
        snprintf(path, sizeof path, "tests/golden/cuda/%s.cu", names[i]);
        char *expected = slurp(path);
        assert_non_null(steps);
        assert_non_null(expected);
        char op[64], shape_s[128];
        assert_int_equal(sscanf(steps, "# %63s %127s", op, shape_s), 2);
        int64_t shape[16];
        int n = 0;
        for (char *p = strtok(shape_s, ","); p && n < 16; p = strtok(NULL, ",")) shape[n++] = atoll(p);
        const char *body = strchr(steps, '\n') + 1;
        weft_arena *a = weft_arena_create();
        weft_te_func *f = NULL;
        weft_loop_func *lf = NULL;
        weft_target_caps caps = weft_caps_gpu("cuda");
        assert_int_equal(weft_op_build(a, op, n, shape, &f), WEFT_OK);
        assert_int_equal(gpu_lower(a, f, strcmp(body, "default\n") ? body : NULL, &caps, &lf), WEFT_OK);
        weft_gpu_source src;
        assert_int_equal(weft_gpu_emit(lf, &weft_gpu_dialect_cuda, &src), WEFT_OK);
        size_t len = strlen(expected);
        while (len && expected[len - 1] == '\n') expected[--len] = '\0';
        len = strlen(src.text);
        while (len && src.text[len - 1] == '\n') src.text[--len] = '\0';
        if (strcmp(src.text, expected)) print_error("%s: CUDA source differs\n--- got\n%s\n", names[i], src.text);
        assert_string_equal(src.text, expected);
        assert_true(nvrtc_ok(lf));
        free(src.text);
        free(steps);
        free(expected);
        weft_arena_destroy(a);
    }
}

static void test_nvrtc_targets(void **state)
{
    (void)state;
#ifdef WEFT_WITH_CUDA
    /* A bad kernel's message carries NVRTC's log; an unknown architecture is refused cleanly. */
    void *cubin = NULL;
    size_t size = 0;
    assert_int_not_equal(weft_cuda_nvrtc("extern \"C\" __global__ void k() { undefined_thing(); }", "sm_90", NULL, &cubin, &size),
                         WEFT_OK);
    assert_non_null(strstr(weft_last_error(), "undefined_thing"));
    assert_null(cubin);
    assert_null(weft_target_find("cuda:sm_52"));
    const weft_target_ops *ops = weft_target_find("cuda:sm_80");
    assert_non_null(ops);
    weft_target *t = NULL;
    assert_int_equal(ops->create(&t), WEFT_OK);
    weft_target_caps caps;
    ops->caps(t, &caps);
    assert_string_equal(caps.cpu, "sm_80");
    assert_true(caps.has_thread_binding);
    ops->destroy(t);
    char why[256];
    if (!weft_cuda_driver_available(why, sizeof why)) assert_non_null(strstr(why, "no CUDA"));
    printf("NVRTC compiled %d kernels in this run\n", n_compiled);
#else
    printf("skipped: the CUDA target is not built (NVRTC not found); nothing was compiled\n");
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_validation),
        cmocka_unit_test(test_launch_check_refusals),
        cmocka_unit_test(test_shared_matmul_matches_naive),
        cmocka_unit_test(test_default_gpu_schedules_match_naive),
        cmocka_unit_test(test_missing_barrier_is_caught),
        cmocka_unit_test(test_golden_cuda_source),
        cmocka_unit_test(test_random_gpu_schedules_match_naive),
        cmocka_unit_test(test_nvrtc_targets),
    };
    return cmocka_run_group_tests_name("gpu", tests, NULL, NULL);
}
