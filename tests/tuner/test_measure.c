/* Safe measurement (tuner/measure.c): a real matmul is timed in a forked worker; candidates
 * that segfault, loop forever or allocate without bound are recorded errors and this process
 * carries on; the correctness check accepts a good schedule and rejects a wrong kernel; a run()
 * error inside the worker comes back with its message; no child is left unreaped.
 *
 * Every test runs twice: with the worker calling the parent's kernel (host targets' default),
 * and with the worker compiling the loop function itself (compile_in_worker, what a device
 * target always gets). A fake device target (tests/targets/fake_device.h: poisoned device
 * addresses, kernels that refuse to run in another process) is measured and checked through
 * its buffer operations. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "ir/arena.h"
#include "ir/expr.h"
#include "ir/stmt.h"
#include "ops/ops.h"
#include "runtime/runtime.h"
#include "schedule/schedule.h"
#include "compile/build.h"
#include "targets/target.h"
#include "tuner/measure.h"
#include "../targets/fake_device.h"

#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif
#ifndef ASAN_BUILD
#define ASAN_BUILD 0
#endif

static const weft_target_ops *L;
static weft_target *T;
/* second pass: the worker compiles what it measures */
static bool compile_mode;
static weft_measure_opts compile_opts;
#define DEF (compile_mode ? &compile_opts : NULL)

static weft_measure_opts opts(void)
{
    weft_measure_opts o = weft_measure_opts_default();
    o.compile_in_worker = compile_mode;
    return o;
}

enum { MAX_KERNELS = 8 };

typedef struct fx {
    weft_arena *a;
    weft_kernel *k[MAX_KERNELS];
    int n_k;
    weft_schedule *s[4];
    int n_s;
} fx;

static int group_setup(void **state)
{
    (void)state;
    L = weft_target_find("llvm");
    if (!L) return -1;
    return L->create(&T) == WEFT_OK ? 0 : -1;
}

static int group_setup_compile(void **state)
{
    compile_mode = true;
    compile_opts = opts();
    return group_setup(state);
}

static int group_teardown(void **state)
{
    (void)state;
    L->destroy(T);
    T = NULL;
    return 0;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    f->a = weft_arena_create();
    *state = f;
    return f->a ? 0 : -1;
}

static int teardown(void **state)
{
    fx *f = *state;
    for (int i = 0; i < f->n_k; i++) L->kernel_destroy(f->k[i]);
    for (int i = 0; i < f->n_s; i++) weft_schedule_destroy(f->s[i]);
    weft_arena_destroy(f->a);
    free(f);
    return 0;
}

#define V(name) weft_var(f->a, name, WEFT_I64)
#define I(v) weft_i64(f->a, v)
#define LD(b, i) weft_load(f->a, b, i)

static const weft_buffer *buf(fx *f, const char *name, weft_dtype t, int64_t n, int param)
{
    const weft_buffer *b = weft_buffer_new(f->a, name, t, 1, &n, param >= 0 ? WEFT_SCOPE_GLOBAL : WEFT_SCOPE_LOCAL, param);
    assert_non_null(b);
    return b;
}

static weft_loop_func *func(fx *f, const char *name, int n, const weft_buffer *const *params, const weft_stmt *body)
{
    assert_non_null(body);
    weft_loop_func *lf = weft_arena_alloc(f->a, sizeof *lf);
    const weft_buffer **ps = weft_arena_alloc(f->a, sizeof *ps * (size_t)(n ? n : 1));
    assert_non_null(lf);
    assert_non_null(ps);
    memcpy(ps, params, sizeof *ps * (size_t)n);
    lf->name = name;
    lf->n_params = n;
    lf->params = ps;
    lf->body = body;
    return lf;
}

static weft_kernel *keep(fx *f, weft_kernel *k)
{
    assert_non_null(k);
    assert_true(f->n_k < MAX_KERNELS);
    f->k[f->n_k++] = k;
    return k;
}

static weft_kernel *compile(fx *f, const weft_loop_func *lf)
{
    weft_kernel *k = NULL;
    weft_status st = L->compile(T, lf, &k);
    if (st != WEFT_OK) fprintf(stderr, "compile %s: %s: %s\n", lf->name, weft_status_name(st), weft_last_error());
    assert_int_equal(st, WEFT_OK);
    return keep(f, k);
}

/* 64x64x64 matmul, default schedule when `tuned`, else naive. */
static weft_kernel *matmul(fx *f, bool tuned, weft_loop_func **lf)
{
    weft_te_func *te = weft_op_matmul(f->a, 64, 64, 64);
    assert_non_null(te);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(te, &s), WEFT_OK);
    assert_true(f->n_s < 4);
    f->s[f->n_s++] = s;
    if (tuned) {
        weft_target_caps caps;
        L->caps(T, &caps);
        assert_int_equal(weft_schedule_default(s, &caps), WEFT_OK);
    }
    weft_kernel *k = NULL;
    weft_status st = weft_target_build(L, T, s, f->a, lf, &k);
    if (st != WEFT_OK) fprintf(stderr, "build: %s\n", weft_last_error());
    assert_int_equal(st, WEFT_OK);
    return keep(f, k);
}

static void print_result(const char *what, weft_status st, const weft_measure_result *r)
{
    fprintf(stderr, "# %s: %s \"%s\" median %.3g s, %d times, max_error %g\n", what, weft_status_name(st), r->error,
            r->median, r->n_times, r->max_error);
}

/* ---- options ---- */

static void test_default_opts(void **state)
{
    (void)state;
    weft_measure_opts o = weft_measure_opts_default();
    assert_true(o.timeout_s == 10.0);
    assert_true(o.min_time_s == 0.1);
    assert_int_equal(o.min_repeat, 3);
    assert_int_equal(o.max_repeat, 100);
    assert_false(o.flush_cache);
    assert_int_equal(o.evict_bytes, 0);
    assert_int_equal(o.threads, 0);
    assert_int_equal(o.memory_limit, 0);
    assert_int_equal(o.seed, 1);
}

static void test_bad_args(void **state)
{
    fx *f = *state;
    weft_loop_func *lf = NULL;
    weft_kernel *k = matmul(f, true, &lf);
    weft_measure_result r;
    assert_int_equal(weft_measure_kernel(L, NULL, lf, DEF, &r), WEFT_ERR_INVALID_ARG);
    assert_int_equal(r.status, WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_measure_kernel(L, k, lf, NULL, NULL), WEFT_ERR_INVALID_ARG);
    weft_measure_opts o = opts();
    o.timeout_s = 0;
    assert_int_equal(weft_measure_kernel(L, k, lf, &o, &r), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(r.error, "timeout"));
    assert_int_equal(weft_measure_check(L, k, lf, NULL, lf, 1e-5, DEF, &r), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_measure_check(L, k, lf, k, NULL, 1e-5, DEF, &r), WEFT_ERR_INVALID_ARG);
}

/* ---- a real kernel ---- */

static void test_matmul_measures(void **state)
{
    fx *f = *state;
    weft_loop_func *lf = NULL;
    weft_kernel *k = matmul(f, true, &lf);
    weft_measure_opts o = opts();
    o.min_time_s = 0.02;
    weft_measure_result r;
    weft_status st = weft_measure_kernel(L, k, lf, &o, &r);
    print_result("matmul", st, &r);
    assert_int_equal(st, WEFT_OK);
    assert_int_equal(r.status, WEFT_OK);
    assert_true(r.n_times >= 3 && r.n_times <= WEFT_MEASURE_MAX_TIMES);
    assert_true(r.median > 0 && r.median < 1.0);
    for (int i = 0; i < r.n_times; i++) assert_true(r.times[i] > 0 && r.times[i] < 1.0);

    /* repeat bounds, one thread, cache flush */
    o.min_time_s = 0;
    o.min_repeat = 5;
    o.max_repeat = 5;
    o.threads = 1;
    o.flush_cache = true;
    st = weft_measure_kernel(L, k, lf, &o, &r);
    print_result("matmul flush", st, &r);
    assert_int_equal(st, WEFT_OK);
    assert_int_equal(r.n_times, 5);
    assert_true(r.median > 0 && r.median < 1.0);

    /* evicting L2 between runs (the tuner's condition): every run timed, none lost */
    o.flush_cache = false;
    o.evict_bytes = (size_t)4 << 20;
    st = weft_measure_kernel(L, k, lf, &o, &r);
    print_result("matmul evict", st, &r);
    assert_int_equal(st, WEFT_OK);
    assert_int_equal(r.n_times, 5);
    assert_true(r.median > 0 && r.median < 1.0);
    o.evict_bytes = 0;

    /* the fork/wait overhead of one call stays small (no fixed sleeps) */
    o.flush_cache = false;
    o.min_repeat = o.max_repeat = 1;
    double t0 = weft_rt_now();
    for (int i = 0; i < 10; i++) assert_int_equal(weft_measure_kernel(L, k, lf, &o, &r), WEFT_OK);
    double per_call = (weft_rt_now() - t0) / 10;
    fprintf(stderr, "# one measurement call: %.3g ms\n", per_call * 1e3);
    assert_true(per_call < (compile_mode ? 3.0 : 0.5)); /* compiling: an LLVM session and O3 per call */

    /* max_repeat beyond the stored times: median over all runs, times[] holds the first 64 */
    o.flush_cache = false;
    o.min_repeat = 80;
    o.max_repeat = 80;
    st = weft_measure_kernel(L, k, lf, &o, &r);
    assert_int_equal(st, WEFT_OK);
    assert_int_equal(r.n_times, WEFT_MEASURE_MAX_TIMES);
    assert_true(r.median > 0 && r.median < 1.0);
}

static weft_loop_func *segv_func(fx *f);

/* Two kernels timed by turns in one worker: the naive 64^3 matmul (scalar, untiled) against
 * its default schedule (~10-30x faster here); the order of the arguments decides which median
 * is which. Another parameter list is refused by name. */
static void test_pair_times_both(void **state)
{
    fx *f = *state;
    weft_loop_func *lf_fast = NULL, *lf_slow = NULL;
    weft_kernel *fast = matmul(f, true, &lf_fast), *slow = matmul(f, false, &lf_slow);
    weft_measure_opts o = opts();
    o.min_time_s = 0.005;
    o.min_repeat = 5;
    o.max_repeat = 20;
    o.evict_bytes = (size_t)1 << 20;
    weft_measure_result r;
    weft_status st = weft_measure_pair(L, slow, lf_slow, fast, lf_fast, &o, &r);
    print_result("pair slow/fast", st, &r);
    assert_int_equal(st, WEFT_OK);
    assert_true(r.n_times >= 5 && r.n_times <= 20);
    assert_true(r.median > 0 && r.median_other > 0 && r.median < 1.0);
    fprintf(stderr, "# naive / default: %.1fx\n", r.median / r.median_other);
    assert_true(r.median > 2 * r.median_other);
    st = weft_measure_pair(L, fast, lf_fast, slow, lf_slow, &o, &r);
    assert_int_equal(st, WEFT_OK);
    assert_true(r.median_other > 2 * r.median);
    weft_loop_func *lf_segv = segv_func(f);
    weft_kernel *k_segv = compile(f, lf_segv);
    assert_int_equal(weft_measure_pair(L, fast, lf_fast, k_segv, lf_segv, &o, &r), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(r.error, "parameter lists differ"));
    assert_int_equal(weft_measure_pair(L, fast, lf_fast, NULL, lf_slow, &o, &r), WEFT_ERR_INVALID_ARG);
}

/* ---- crashes ---- */

/* O[1<<40] = 1: far outside any mapping. */
static weft_loop_func *segv_func(fx *f)
{
    const weft_buffer *O = buf(f, "O", WEFT_F32, 16, 0);
    const weft_buffer *ps[] = {O};
    return func(f, "segv", 1, ps, weft_store(f->a, O, I((int64_t)1 << 40), weft_f32(f->a, 1)));
}

static void test_segfault_is_recorded(void **state)
{
    fx *f = *state;
    weft_loop_func *lf = segv_func(f);
    weft_kernel *k = compile(f, lf);
    weft_measure_result r;
    weft_status st = weft_measure_kernel(L, k, lf, DEF, &r);
    print_result("segv", st, &r);
    assert_int_equal(r.status, st);
    if (ASAN_BUILD && st == WEFT_ERR_INTERNAL) {
        /* a sanitizer's SEGV handler may turn the crash into a nonzero exit */
        assert_non_null(strstr(r.error, "exited with status"));
    } else {
        assert_int_equal(st, WEFT_ERR_DEVICE);
        assert_true(strstr(r.error, "signal 11") || strstr(r.error, "Segmentation"));
    }
    assert_string_equal(weft_last_error(), r.error);

    /* the check path too: the candidate crashes, the reference is fine */
    st = weft_measure_check(L, k, lf, k, lf, 1e-5, DEF, &r);
    assert_int_not_equal(st, WEFT_OK);
    assert_int_not_equal(st, WEFT_ERR_TIMEOUT);
}

/* The interpreter bounds-checks: the same kernel is a run() error, passed back with its text. */
static void test_run_error_is_passed_back(void **state)
{
    fx *f = *state;
    const weft_target_ops *in = weft_target_find("interp");
    assert_non_null(in);
    weft_target *it = NULL;
    assert_int_equal(in->create(&it), WEFT_OK);
    weft_loop_func *lf = segv_func(f);
    weft_kernel *k = NULL;
    assert_int_equal(in->compile(it, lf, &k), WEFT_OK);
    weft_measure_result r;
    weft_status st = weft_measure_kernel(in, k, lf, DEF, &r);
    print_result("interp oob", st, &r);
    assert_int_equal(st, WEFT_ERR_INTERNAL);
    assert_non_null(strstr(r.error, "out-of-bounds"));
    st = weft_measure_check(in, k, lf, k, lf, 1e-5, DEF, &r);
    assert_int_equal(st, WEFT_ERR_INTERNAL);
    assert_non_null(strstr(r.error, "out-of-bounds"));
    in->kernel_destroy(k);
    in->destroy(it);
}

/* for i in [0, 2^62): O[i mod 16] = O[i mod 16] + 1 — never finishes. */
static void test_infinite_loop_times_out(void **state)
{
    fx *f = *state;
    const weft_buffer *O = buf(f, "O", WEFT_F32, 16, 0);
    const weft_expr *i = V("i");
    const weft_expr *idx = weft_floormod(f->a, i, I(16));
    const weft_stmt *body = weft_for(f->a, i, I(0), I((int64_t)1 << 62), WEFT_FOR_SERIAL,
                                     weft_store(f->a, O, idx, weft_add(f->a, LD(O, idx), weft_f32(f->a, 1))));
    const weft_buffer *ps[] = {O};
    weft_loop_func *lf = func(f, "forever", 1, ps, body);
    weft_kernel *k = compile(f, lf);
    weft_measure_opts o = opts();
    o.timeout_s = 1;
    weft_measure_result r;
    double t0 = weft_rt_now();
    weft_status st = weft_measure_kernel(L, k, lf, &o, &r);
    double dt = weft_rt_now() - t0;
    print_result("forever", st, &r);
    assert_int_equal(st, WEFT_ERR_TIMEOUT);
    assert_int_equal(r.status, WEFT_ERR_TIMEOUT);
    assert_non_null(strstr(r.error, "timed out after 1 s"));
    assert_true(dt >= 0.9 && dt < 2.5);

    t0 = weft_rt_now();
    st = weft_measure_check(L, k, lf, k, lf, 1e-5, &o, &r);
    dt = weft_rt_now() - t0;
    assert_int_equal(st, WEFT_ERR_TIMEOUT);
    assert_true(dt < 2.5);
}

/* for i in [0, 4): alloc T[2^34 floats] (64 GiB) {T[i] = 1; O[i] = T[i]}, under a 1 GiB limit. */
static void test_memory_limit_is_recorded(void **state)
{
    fx *f = *state;
    const weft_buffer *O = buf(f, "O", WEFT_F32, 4, 0);
    const weft_buffer *Tb = buf(f, "T", WEFT_F32, (int64_t)1 << 34, -1);
    const weft_expr *i = V("i");
    const weft_stmt *st2[] = {weft_store(f->a, Tb, i, weft_f32(f->a, 1)), weft_store(f->a, O, i, LD(Tb, i))};
    const weft_stmt *body =
        weft_for(f->a, i, I(0), I(4), WEFT_FOR_SERIAL, weft_allocate(f->a, Tb, weft_seq(f->a, 2, st2)));
    const weft_buffer *ps[] = {O};
    weft_loop_func *lf = func(f, "hog", 1, ps, body);
    weft_kernel *k = compile(f, lf);
    weft_measure_opts o = opts();
    o.memory_limit = (size_t)1 << 30;
    o.timeout_s = 20;
    weft_measure_result r;
    weft_status st = weft_measure_kernel(L, k, lf, &o, &r);
    print_result("hog", st, &r);
    assert_int_not_equal(st, WEFT_OK);
    assert_int_equal(r.status, st);
    assert_true(strlen(r.error) > 0);

    /* a kernel that fits runs normally under the same limit */
    weft_loop_func *lf_mm = NULL;
    weft_kernel *mm = matmul(f, true, &lf_mm);
    o.min_time_s = 0;
    st = weft_measure_kernel(L, mm, lf_mm, &o, &r);
    print_result("matmul 1 GiB", st, &r);
    assert_int_equal(st, WEFT_OK);
    assert_true(r.n_times >= 3);

    /* a param buffer beyond the limit fails in the worker, not here */
    const weft_buffer *Big = buf(f, "Big", WEFT_F32, (int64_t)1 << 30, 0); /* 4 GiB */
    const weft_expr *j = V("j");
    const weft_buffer *ps2[] = {Big};
    weft_loop_func *lf2 = func(f, "bigparam", 1, ps2,
                               weft_for(f->a, j, I(0), I(4), WEFT_FOR_SERIAL, weft_store(f->a, Big, j, weft_f32(f->a, 2))));
    weft_kernel *k2 = compile(f, lf2);
    st = weft_measure_kernel(L, k2, lf2, &o, &r);
    print_result("bigparam", st, &r);
    assert_int_not_equal(st, WEFT_OK);
    if (!ASAN_BUILD) {
        assert_int_equal(st, WEFT_ERR_NOMEM);
        assert_non_null(strstr(r.error, "Big"));
    }
}

/* ---- correctness check ---- */

static void test_check_accepts_good_and_rejects_wrong(void **state)
{
    fx *f = *state;
    weft_loop_func *lf = NULL, *lf_naive = NULL;
    weft_kernel *good = matmul(f, true, &lf);
    weft_kernel *naive = matmul(f, false, &lf_naive);
    assert_int_equal(lf->n_params, 3);
    assert_int_equal(lf_naive->n_params, 3);

    weft_measure_result r;
    weft_status st = weft_measure_check(L, good, lf, naive, lf_naive, 1e-5, DEF, &r);
    print_result("check good", st, &r);
    assert_int_equal(st, WEFT_OK);
    assert_true(r.max_error >= 0 && r.max_error <= 1e-5);

    /* same params, writes zeros to the output */
    const weft_buffer *C = lf->params[2];
    const weft_expr *i = V("i");
    weft_loop_func *lf_zero =
        func(f, "zeros", 3, lf->params, weft_for(f->a, i, I(0), I(C->size), WEFT_FOR_SERIAL, weft_store(f->a, C, i, weft_f32(f->a, 0))));
    weft_kernel *zero = compile(f, lf_zero);
    st = weft_measure_check(L, zero, lf_zero, naive, lf_naive, 1e-5, DEF, &r);
    print_result("check zeros", st, &r);
    assert_int_equal(st, WEFT_ERR_INTERNAL);
    assert_int_equal(r.status, WEFT_ERR_INTERNAL);
    assert_non_null(strstr(r.error, "differs"));
    assert_true(r.max_error > 1e-5);

    /* a NaN output where the reference has none is a mismatch */
    weft_loop_func *lf_nan = func(f, "nan", 3, lf->params,
                                  weft_for(f->a, i, I(0), I(C->size), WEFT_FOR_SERIAL, weft_store(f->a, C, i, weft_f32(f->a, NAN))));
    weft_kernel *nan = compile(f, lf_nan);
    st = weft_measure_check(L, nan, lf_nan, naive, lf_naive, 1e6, DEF, &r);
    print_result("check nan", st, &r);
    assert_int_equal(st, WEFT_ERR_INTERNAL);
    assert_non_null(strstr(r.error, "differs"));
}

/* ---- a device target ---- */

/* The fake device measures and checks through its buffer operations: the worker compiles
 * its own kernels (the parent's refuse to run in the worker), params are device memory,
 * outputs come back by download (else the zero kernel would pass the check). */
static void test_device_target(void **state)
{
    fx *f = *state;
    const weft_target_ops *D = &fake_device_ops;
    assert_false(weft_target_is_host(D));
    weft_target *dt = NULL;
    assert_int_equal(D->create(&dt), WEFT_OK);
    weft_loop_func *lf = NULL, *lf_naive = NULL;
    matmul(f, true, &lf);
    matmul(f, false, &lf_naive);
    weft_kernel *k = NULL, *naive = NULL, *zero = NULL;
    assert_int_equal(D->compile(dt, lf, &k), WEFT_OK);
    assert_int_equal(D->compile(dt, lf_naive, &naive), WEFT_OK);
    const weft_buffer *C = lf->params[2];
    const weft_expr *i = V("i");
    weft_loop_func *lf_zero =
        func(f, "zeros", 3, lf->params, weft_for(f->a, i, I(0), I(C->size), WEFT_FOR_SERIAL, weft_store(f->a, C, i, weft_f32(f->a, 0))));
    assert_int_equal(D->compile(dt, lf_zero, &zero), WEFT_OK);

    weft_measure_opts o = weft_measure_opts_default(); /* compile_in_worker off: a device target compiles anyway */
    o.min_time_s = 0.01;
    weft_measure_result r;
    weft_status st = weft_measure_kernel(D, k, lf, &o, &r);
    print_result("fakedev matmul", st, &r);
    assert_int_equal(st, WEFT_OK);
    assert_true(r.n_times >= 3 && r.median > 0 && r.median < 1.0);
    st = weft_measure_check(D, k, lf, naive, lf_naive, 1e-5, &o, &r);
    print_result("fakedev check good", st, &r);
    assert_int_equal(st, WEFT_OK);
    st = weft_measure_check(D, zero, lf_zero, naive, lf_naive, 1e-5, &o, &r);
    print_result("fakedev check zeros", st, &r);
    assert_int_equal(st, WEFT_ERR_INTERNAL);
    assert_non_null(strstr(r.error, "differs"));

    /* the same candidate crashes the worker, not this process */
    weft_loop_func *lf_segv = segv_func(f);
    st = weft_measure_kernel(D, k, lf_segv, &o, &r);
    print_result("fakedev segv", st, &r);
    assert_int_not_equal(st, WEFT_OK);
    /* a table with some buffer operations missing is refused */
    weft_target_ops half = fake_device_ops;
    half.download = NULL;
    st = weft_measure_kernel(&half, k, lf, &o, &r);
    assert_int_equal(st, WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(r.error, "download"));
    D->kernel_destroy(zero);
    D->kernel_destroy(naive);
    D->kernel_destroy(k);
    D->destroy(dt);
}

/* ---- last: nothing left to reap ---- */

static void test_no_zombies(void **state)
{
    (void)state;
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_opts),
        cmocka_unit_test_setup_teardown(test_bad_args, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_measures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pair_times_both, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segfault_is_recorded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_error_is_passed_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_infinite_loop_times_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_limit_is_recorded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_accepts_good_and_rejects_wrong, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_target, setup, teardown),
        cmocka_unit_test(test_no_zombies),
    };
    int failed = cmocka_run_group_tests_name("worker calls the parent's kernel", tests, group_setup, group_teardown);
    failed += cmocka_run_group_tests_name("worker compiles", tests, group_setup_compile, group_teardown);
    return failed;
}
