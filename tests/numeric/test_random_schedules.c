/* Randomized schedule equivalence (DESIGN #3): for matmul, conv2d (padding and stride),
 * softmax and a fused dense+bias+relu, random valid step lists are lowered, JIT-compiled by the
 * LLVM target, run on a 2-thread pool, and compared with the interpreter running the naive
 * schedule. The same scheduled loop IR is also run by the interpreter, whose bounds checks
 * catch any out-of-range access the schedule's lowering might make.
 *
 * Tolerance: max |x - ref| <= 1e-4 * max(1, max |ref|) (schedules may reassociate float sums;
 * the inputs are in [-1, 1] and reductions are at most ~100 terms, so exact-order differences
 * are ~1e-6). Failures print the kernel, the seed and the step text. */
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
#include "compile/build.h"

#define SEEDS_PER_KERNEL 55

typedef struct kcase {
    const char *op;
    int n;
    int64_t shape[9];
} kcase;

static const kcase cases[] = {
    {"matmul", 3, {19, 40, 23}},
    {"conv2d", 9, {2, 3, 11, 11, 6, 3, 3, 2, 1}},
    {"softmax", 2, {7, 37}},
    {"dense_bias_relu", 3, {10, 48, 13}},
};
#define N_CASES (int)(sizeof cases / sizeof cases[0])

typedef struct fixture {
    weft_arena *a;
    const weft_target_ops *llvm, *interp;
    weft_target *tl, *ti;
    weft_threadpool *pool;
    int total_checked;
    int with_prefetch; /* random step lists with a pragma prefetch */
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    fx->a = weft_arena_create();
    fx->llvm = weft_target_find("llvm");
    fx->interp = weft_target_find("interp");
    if (!fx->llvm || !fx->interp || fx->llvm->create(&fx->tl) != WEFT_OK || fx->interp->create(&fx->ti) != WEFT_OK ||
        weft_threadpool_create(2, &fx->pool) != WEFT_OK)
        return -1;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    fx->llvm->destroy(fx->tl);
    fx->interp->destroy(fx->ti);
    weft_threadpool_destroy(fx->pool);
    weft_arena_destroy(fx->a);
    free(fx);
    return 0;
}

typedef struct buffers {
    int n;
    void *p[8];
    size_t bytes[8];
} buffers;

static void buffers_init(buffers *b, const weft_te_func *f, uint64_t seed)
{
    b->n = f->n_inputs + f->n_outputs;
    for (int i = 0; i < b->n; i++) {
        const weft_tensor *t = i < f->n_inputs ? f->inputs[i] : f->outputs[i - f->n_inputs];
        b->bytes[i] = (size_t)weft_te_numel(t) * 4;
        b->p[i] = weft_rt_alloc(b->bytes[i]);
        float *x = b->p[i];
        for (size_t e = 0; e < b->bytes[i] / 4; e++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            x[e] = i < f->n_inputs ? (float)((seed >> 41) & 0xffff) / 32768.0f - 1.0f : NAN;
        }
    }
}

static void buffers_free(buffers *b)
{
    for (int i = 0; i < b->n; i++) weft_rt_free(b->p[i]);
}

static double max_rel_error(const float *x, const float *ref, size_t n)
{
    double md = 0, mr = 1;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)x[i] - (double)ref[i]);
        if (!(d <= md)) md = d;
        if (fabs(ref[i]) > mr) mr = fabs(ref[i]);
    }
    return md / mr;
}

/* Runs schedule s on target (ops, t) into a copy of the inputs in `in`; returns the relative
 * error of output 0 against ref, or a negative value with the message printed. */
static double check(fixture *fx, const weft_te_func *f, const weft_schedule *s, const weft_target_ops *ops, weft_target *t,
                    const buffers *in, const float *ref)
{
    weft_arena *a = weft_arena_create();
    weft_kernel *k = NULL;
    buffers out = *in;
    int o = f->n_inputs;
    out.p[o] = weft_rt_alloc(in->bytes[o]);
    memset(out.p[o], 0xff, in->bytes[o]); /* NaN: every element must be written */
    double err = -1;
    if (weft_target_build(ops, t, s, a, NULL, &k) != WEFT_OK) print_error("build: %s\n", weft_last_error());
    else if (ops->run(k, out.p, &(weft_exec){.pool = fx->pool}) != WEFT_OK) print_error("run: %s\n", weft_last_error());
    else err = max_rel_error(out.p[o], ref, in->bytes[o] / 4);
    if (k) ops->kernel_destroy(k);
    weft_rt_free(out.p[o]);
    weft_arena_destroy(a);
    return err;
}

static void run_case(fixture *fx, const kcase *kc, int n_seeds, bool builtin)
{
    weft_te_func *f = NULL;
    assert_int_equal(weft_op_build(fx->a, kc->op, kc->n, kc->shape, &f), WEFT_OK);
    buffers in;
    buffers_init(&in, f, 7);
    /* Reference: the naive schedule in the interpreter. */
    weft_schedule *naive = NULL;
    assert_int_equal(weft_schedule_create(f, &naive), WEFT_OK);
    int o = f->n_inputs;
    float *ref = malloc(in.bytes[o]);
    {
        weft_arena *a = weft_arena_create();
        weft_kernel *k = NULL;
        assert_int_equal(weft_target_build(fx->interp, fx->ti, naive, a, NULL, &k), WEFT_OK);
        assert_int_equal(fx->interp->run(k, in.p, NULL), WEFT_OK);
        memcpy(ref, in.p[o], in.bytes[o]);
        fx->interp->kernel_destroy(k);
        weft_arena_destroy(a);
    }
    weft_schedule_destroy(naive);
    weft_target_caps caps;
    fx->llvm->caps(fx->tl, &caps);
    int failures = 0;
    for (int i = 0; i < n_seeds; i++) {
        weft_schedule *s = NULL;
        assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
        const char *what = "random";
        if (builtin) {
            what = i == 0 ? "default" : "manual";
            if (i == 0) assert_int_equal(weft_schedule_default(s, &caps), WEFT_OK);
            else assert_int_equal(weft_schedule_manual_matmul(s, &caps), WEFT_OK);
        } else assert_int_equal(weft_schedule_random(s, 1000 + (uint64_t)i, 14), WEFT_OK);
        double e_llvm = check(fx, f, s, fx->llvm, fx->tl, &in, ref);
        double e_interp = check(fx, f, s, fx->interp, fx->ti, &in, ref);
        fx->total_checked++;
        char *steps = weft_schedule_text(s);
        fx->with_prefetch += steps && strstr(steps, " prefetch ") != NULL;
        free(steps);
        if (!(e_llvm >= 0 && e_llvm <= 1e-4 && e_interp >= 0 && e_interp <= 1e-4)) {
            char *text = weft_schedule_text(s);
            print_error("%s %s seed %d: llvm error %g, interp error %g\nsteps:\n%s\n", kc->op, what, 1000 + i, e_llvm,
                        e_interp, text);
            free(text);
            failures++;
        }
        weft_schedule_destroy(s);
    }
    free(ref);
    buffers_free(&in);
    assert_int_equal(failures, 0);
}

/* Fixed rfactor schedules (divisible and not, either part factored, nested, parallel and
 * vectorized partial stages, attached to the final reduction) against the naive one. */
static void test_rfactor_schedules_match_naive(void **state)
{
    fixture *fx = *state;
    static const struct {
        kcase kc;
        const char *steps;
    } rf[] = {
        {{"matmul", 3, {19, 40, 23}}, "split C k 4\nrfactor C k.1\nvectorize C.rf k.1"},
        {{"matmul", 3, {19, 40, 23}}, "split C k nparts 3\nrfactor C k.0\nparallel C.rf i\nreorder C.rf k.0 i j"},
        {{"matmul", 3, {19, 40, 23}}, "rfactor C k\nsplit C.rf k 8\nvectorize C.rf k.1"},
        {{"matmul", 3, {19, 40, 23}}, "split C k 8\nrfactor C k.1\ncompute_at C.rf C j\nvectorize C.rf k.1\nparallel C i"},
        {{"matmul", 3, {37, 1, 100}}, "split C k 16\nrfactor C k.1\nrfactor C.rf k.0\ncompute_at C.rf C i\nparallel C i"},
        {{"matmul", 3, {3, 1, 1000}}, "split C k nparts 2\nrfactor C k.0\nparallel C.rf k.0\nsplit C.rf k.1 16\nrfactor C.rf k.1.1"},
        {{"softmax", 2, {7, 37}}, "split mx k 8\nrfactor mx k.1\nsplit s k 5\nrfactor s k.0\nvectorize mx.rf k.1"},
        /* vectorized reductions into one cell (summed across lanes by the CPU target) */
        {{"matmul", 3, {19, 40, 23}}, "split C k 8\nrfactor C k.1\ncompute_at C.rf C j\nvectorize C.rf k.1\nvectorize C k.1\nparallel C i"},
        {{"matmul", 3, {37, 1, 100}}, "split C k 16\nrfactor C k.1\ncompute_at C.rf C i\nvectorize C k.1"},
        {{"matmul", 3, {19, 40, 23}}, "vectorize C k"},
        {{"softmax", 2, {7, 37}}, "vectorize mx k\nvectorize s k"},
    };
    for (size_t c = 0; c < sizeof rf / sizeof rf[0]; c++) {
        weft_te_func *f = NULL;
        assert_int_equal(weft_op_build(fx->a, rf[c].kc.op, rf[c].kc.n, rf[c].kc.shape, &f), WEFT_OK);
        buffers in;
        buffers_init(&in, f, 11);
        weft_schedule *naive = NULL, *s = NULL;
        assert_int_equal(weft_schedule_create(f, &naive), WEFT_OK);
        int o = f->n_inputs;
        float *ref = malloc(in.bytes[o]);
        weft_arena *a = weft_arena_create();
        weft_kernel *k = NULL;
        assert_int_equal(weft_target_build(fx->interp, fx->ti, naive, a, NULL, &k), WEFT_OK);
        assert_int_equal(fx->interp->run(k, in.p, NULL), WEFT_OK);
        memcpy(ref, in.p[o], in.bytes[o]);
        fx->interp->kernel_destroy(k);
        weft_arena_destroy(a);
        assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
        weft_status rc = weft_schedule_apply_text(s, rf[c].steps);
        if (rc != WEFT_OK) print_error("%s\n", weft_last_error());
        assert_int_equal(rc, WEFT_OK);
        double e_llvm = check(fx, f, s, fx->llvm, fx->tl, &in, ref), e_interp = check(fx, f, s, fx->interp, fx->ti, &in, ref);
        if (!(e_llvm >= 0 && e_llvm <= 1e-4 && e_interp >= 0 && e_interp <= 1e-4))
            print_error("%s: llvm error %g, interp error %g\nsteps:\n%s\n", rf[c].kc.op, e_llvm, e_interp, rf[c].steps);
        assert_true(e_llvm >= 0 && e_llvm <= 1e-4);
        assert_true(e_interp >= 0 && e_interp <= 1e-4);
        weft_schedule_destroy(s);
        weft_schedule_destroy(naive);
        free(ref);
        buffers_free(&in);
    }
}

static void test_random_schedules_match_naive(void **state)
{
    fixture *fx = *state;
    for (int c = 0; c < N_CASES; c++) run_case(fx, &cases[c], SEEDS_PER_KERNEL, false);
    assert_true(fx->total_checked >= 200);
    assert_true(fx->with_prefetch >= 10); /* the prefetch pass meets random loop nests */
}

static void test_default_and_manual_schedules_match_naive(void **state)
{
    fixture *fx = *state;
    for (int c = 0; c < N_CASES; c++) {
        bool matmul_like = !strcmp(cases[c].op, "matmul") || !strcmp(cases[c].op, "dense_bias_relu");
        run_case(fx, &cases[c], matmul_like ? 2 : 1, true);
    }
    static const kcase more[] = {
        {"layer_norm", 2, {5, 48}}, {"reduce_sum", 2, {9, 33}}, {"gelu", 2, {4, 100}},
        {"conv2d", 9, {1, 4, 8, 8, 16, 1, 1, 1, 0}}, {"matmul", 3, {1, 1000, 16}}, {"matmul", 3, {64, 64, 64}},
        {"matmul", 3, {37, 1, 1000}}, {"matmul", 3, {5, 1, 256}}, {"reduce_sum", 2, {3, 1000}}, {"matmul", 3, {2, 1, 200}},
    };
    for (size_t c = 0; c < sizeof more / sizeof more[0]; c++)
        run_case(fx, &more[c], !strcmp(more[c].op, "matmul") ? 2 : 1, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rfactor_schedules_match_naive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_schedules_match_naive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_and_manual_schedules_match_naive, setup, teardown),
    };
    return cmocka_run_group_tests_name("numeric_random_schedules", tests, NULL, NULL);
}
