/* Sketch rules: candidates sampled (and mutated) from every sketch are valid step lists that
 * replay to the same loop IR and compute what the naive schedule computes (LLVM JIT and the
 * interpreter vs the interpreter's naive result, max relative error 1e-4). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/print.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "compile/build.h"
#include "tuner/tuner.h"

typedef struct kcase {
    const char *op;
    int n;
    int64_t shape[9];
    bool tiled; /* the sketch must tile it */
} kcase;

static const kcase cases[] = {
    {"matmul", 3, {24, 64, 36}, true},
    {"dense_bias_relu", 3, {16, 48, 20}, true},
    {"conv2d", 9, {2, 4, 9, 9, 8, 3, 3, 1, 1}, true},
    {"conv2d", 9, {1, 3, 12, 12, 16, 3, 3, 2, 1}, true},
    {"softmax", 2, {6, 40}, false},
};

static void run(const weft_target_ops *ops, weft_target *t, const weft_schedule *s, const weft_te_func *f, void **args)
{
    weft_arena *a = weft_arena_create();
    weft_kernel *k = NULL;
    weft_status rc = weft_target_build(ops, t, s, a, NULL, &k);
    if (rc != WEFT_OK) print_error("%s\n", weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    assert_int_equal(ops->run(k, args, NULL), WEFT_OK);
    ops->kernel_destroy(k);
    weft_arena_destroy(a);
    (void)f;
}

static void test_sampled_candidates_replay_and_match_naive(void **state)
{
    (void)state;
    const weft_target_ops *llvm = weft_target_find("llvm"), *interp = weft_target_find("interp");
    weft_target *tl = NULL, *ti = NULL;
    assert_int_equal(llvm->create(&tl), WEFT_OK);
    assert_int_equal(interp->create(&ti), WEFT_OK);
    weft_target_caps caps;
    llvm->caps(tl, &caps);
    int checked = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        weft_arena *a = weft_arena_create();
        weft_te_func *f = NULL;
        assert_int_equal(weft_op_build(a, cases[c].op, cases[c].n, cases[c].shape, &f), WEFT_OK);
        weft_sketch sk;
        assert_int_equal(weft_sketch_make(f, &caps, &sk), WEFT_OK);
        assert_int_equal(sk.tiled, cases[c].tiled);
        int np = f->n_inputs + f->n_outputs, o = f->n_inputs;
        void *ref[8], *got[8];
        size_t bytes[8];
        uint64_t seed = 5;
        for (int i = 0; i < np; i++) {
            const weft_tensor *x = i < f->n_inputs ? f->inputs[i] : f->outputs[i - f->n_inputs];
            bytes[i] = (size_t)weft_te_numel(x) * 4;
            ref[i] = malloc(bytes[i]);
            got[i] = i < o ? ref[i] : malloc(bytes[i]);
            for (size_t e = 0; i < o && e < bytes[i] / 4; e++)
                ((float *)ref[i])[e] = (float)(weft_tuner_rand(&seed) % 2000) / 1000.0f - 1.0f;
        }
        weft_schedule *naive = NULL;
        assert_int_equal(weft_schedule_create(f, &naive), WEFT_OK);
        run(interp, ti, naive, f, ref);
        weft_schedule_destroy(naive);
        uint64_t rng = 42;
        weft_cand cand;
        for (int trial = 0; sk.tiled && trial < 25; trial++) {
            if (trial % 3 == 2) weft_sketch_mutate(&sk, &rng, &cand);
            else weft_sketch_sample(&sk, &rng, &cand);
            char *steps = weft_sketch_steps(&sk, &cand);
            weft_schedule *s = NULL, *r = NULL;
            assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
            weft_status rc = weft_schedule_apply_text(s, steps);
            if (rc != WEFT_OK) print_error("%s: %s\nsteps:\n%s", cases[c].op, weft_last_error(), steps);
            assert_int_equal(rc, WEFT_OK);
            /* replay of the printed text gives the same loop IR */
            char *text = weft_schedule_text(s);
            assert_int_equal(weft_schedule_create(f, &r), WEFT_OK);
            assert_int_equal(weft_schedule_apply_text(r, text), WEFT_OK);
            weft_arena *la = weft_arena_create(), *lb = weft_arena_create();
            weft_loop_func *l1 = NULL, *l2 = NULL;
            assert_int_equal(weft_lower(s, NULL, la, &l1), WEFT_OK);
            assert_int_equal(weft_lower(r, NULL, lb, &l2), WEFT_OK);
            char *i1 = weft_ir_func_str(l1), *i2 = weft_ir_func_str(l2);
            assert_string_equal(i1, i2);
            free(i1);
            free(i2);
            weft_arena_destroy(la);
            weft_arena_destroy(lb);
            for (int tgt = 0; tgt < 2; tgt++) {
                memset(got[o], 0xff, bytes[o]);
                run(tgt ? interp : llvm, tgt ? ti : tl, s, f, got);
                double md = 0, mr = 1;
                for (size_t e = 0; e < bytes[o] / 4; e++) {
                    double d = fabs((double)((float *)got[o])[e] - ((float *)ref[o])[e]);
                    if (!(d <= md)) md = d;
                    if (fabs(((float *)ref[o])[e]) > mr) mr = fabs(((float *)ref[o])[e]);
                }
                if (!(md <= 1e-4 * mr)) print_error("%s trial %d: error %g\n%s", cases[c].op, trial, md, steps);
                assert_true(md <= 1e-4 * mr);
            }
            checked++;
            free(text);
            free(steps);
            weft_schedule_destroy(s);
            weft_schedule_destroy(r);
        }
        for (int i = 0; i < np; i++) {
            free(ref[i]);
            if (i >= o) free(got[i]);
        }
        weft_arena_destroy(a);
    }
    assert_true(checked >= 100);
    llvm->destroy(tl);
    interp->destroy(ti);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_sampled_candidates_replay_and_match_naive)};
    return cmocka_run_group_tests_name("tuner_sketch", tests, NULL, NULL);
}
