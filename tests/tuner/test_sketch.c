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
#include "weft/graph.h"

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

typedef struct targets {
    const weft_target_ops *llvm, *interp;
    weft_target *tl, *ti;
    weft_target_caps caps;
} targets;

static void targets_open(targets *t)
{
    t->llvm = weft_target_find("llvm");
    t->interp = weft_target_find("interp");
    assert_int_equal(t->llvm->create(&t->tl), WEFT_OK);
    assert_int_equal(t->interp->create(&t->ti), WEFT_OK);
    t->llvm->caps(t->tl, &t->caps);
}

static void targets_close(targets *t)
{
    t->llvm->destroy(t->tl);
    t->interp->destroy(t->ti);
}

/* Samples (and mutates) `trials` candidates of sk for f; each must replay to the same loop IR
 * and compute what the naive schedule computes (LLVM and the interpreter). Returns the count. */
static int check_candidates(targets *tg, const weft_te_func *f, const weft_sketch *sk, const char *what, int trials)
{
    int checked = 0;
    int np = f->n_inputs + f->n_outputs, o = f->n_inputs;
    void *ref[8], *got[8];
    size_t bytes[8];
    uint64_t seed = 5;
    assert_true(np <= 8 && f->n_outputs == 1);
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
    run(tg->interp, tg->ti, naive, f, ref);
    weft_schedule_destroy(naive);
    uint64_t rng = 42;
    weft_cand cand;
    for (int trial = 0; trial < trials; trial++) {
        if (trial % 3 == 2) weft_sketch_mutate(sk, &rng, &cand);
        else weft_sketch_sample(sk, &rng, &cand);
        char *steps = weft_sketch_steps(sk, &cand);
        if (!steps) print_error("%s trial %d: no steps: %s\n", what, trial, weft_last_error());
        assert_non_null(steps);
        weft_schedule *s = NULL, *r = NULL;
        assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
        weft_status rc = weft_schedule_apply_text(s, steps);
        if (rc != WEFT_OK) print_error("%s: %s\nsteps:\n%s", what, weft_last_error(), steps);
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
            run(tgt ? tg->interp : tg->llvm, tgt ? tg->ti : tg->tl, s, f, got);
            double md = 0, mr = 1;
            for (size_t e = 0; e < bytes[o] / 4; e++) {
                double d = fabs((double)((float *)got[o])[e] - ((float *)ref[o])[e]);
                if (!(d <= md)) md = d;
                if (fabs(((float *)ref[o])[e]) > mr) mr = fabs(((float *)ref[o])[e]);
            }
            if (!(md <= 1e-4 * mr)) print_error("%s trial %d: error %g\n%s", what, trial, md, steps);
            assert_true(md <= 1e-4 * mr);
        }
        /* a knobbed candidate's decisions are read back from its text */
        if (sk->knobbed) {
            weft_cand back;
            assert_true(weft_sketch_knobs_from_steps(sk, steps, &back));
            assert_memory_equal(back.knob, cand.knob, sizeof back.knob);
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
    return checked;
}

static void test_sampled_candidates_replay_and_match_naive(void **state)
{
    (void)state;
    targets tg;
    targets_open(&tg);
    int checked = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        weft_arena *a = weft_arena_create();
        weft_te_func *f = NULL;
        assert_int_equal(weft_op_build(a, cases[c].op, cases[c].n, cases[c].shape, &f), WEFT_OK);
        weft_sketch sk;
        assert_int_equal(weft_sketch_make(f, &tg.caps, &sk), WEFT_OK);
        assert_int_equal(sk.tiled, cases[c].tiled);
        if (sk.tiled) checked += check_candidates(&tg, f, &sk, cases[c].op, 25);
        weft_arena_destroy(a);
    }
    assert_true(checked >= 100);
    targets_close(&tg);
}

/* Candidates respect the caps' budgets: the register tile within the vector registers, a
 * packed panel of B (K x its columns) within half of L2. With a 256 KiB L2 and K = 2048 only
 * panels of at most 16 columns may be packed; sampled and mutated candidates that pack exist
 * and none is wider. */
static void test_candidates_respect_register_and_cache_budgets(void **state)
{
    (void)state;
    weft_arena *a = weft_arena_create();
    weft_te_func *f = weft_op_matmul(a, 64, 256, 2048);
    assert_non_null(f);
    weft_target_caps caps = weft_caps_cpu(256, 1);
    caps.vector_regs = 16;
    caps.l2_bytes = 256 * 1024;
    weft_sketch sk;
    assert_int_equal(weft_sketch_make(f, &caps, &sk), WEFT_OK);
    assert_true(sk.tiled);
    assert_true(sk.pack[0] != '\0');
    assert_int_equal(sk.l2_bytes, 256 * 1024);
    uint64_t rng = 5;
    int packed = 0, wide_unpacked = 0;
    weft_cand c;
    for (int i = 0; i < 400; i++) {
        if (i % 2 == 0) weft_sketch_sample(&sk, &rng, &c);
        else weft_sketch_mutate(&sk, &rng, &c);
        int64_t cols = c.t1[sk.vec] * c.t2[sk.vec];
        assert_true(weft_sketch_fits_registers(&sk, &c));
        assert_true(weft_sketch_live_vectors(&sk, &c) <= 16);
        if (c.pack) {
            packed++;
            if (cols * 2048 * 4 > 128 * 1024) fail_msg("packed panel of %lld columns exceeds half of L2", (long long)cols);
            assert_true(weft_sketch_fits_cache(&sk, &c));
        } else if (cols > 16) wide_unpacked++;
    }
    assert_true(packed >= 10);
    assert_true(wide_unpacked >= 10);
    weft_arena_destroy(a);
}

/* A product whose weight exceeds L2 (B of 16x256x512: 512 KiB against a 64 KiB L2) streams it:
 * unpacked candidates may prefetch B from the outer reduction loop, packed ones never do; the
 * prefetching candidates lower to PREFETCH statements and compute what the naive schedule does.
 * With the L2 above B's size no candidate prefetches. */
static void test_streamed_weight_candidates_prefetch(void **state)
{
    (void)state;
    targets tg;
    targets_open(&tg);
    weft_arena *a = weft_arena_create();
    weft_te_func *f = weft_op_matmul(a, 16, 256, 512);
    assert_non_null(f);
    weft_target_caps caps = tg.caps;
    caps.l2_bytes = 64 * 1024;
    weft_sketch sk;
    assert_int_equal(weft_sketch_make(f, &caps, &sk), WEFT_OK);
    assert_true(sk.tiled);
    assert_string_equal(sk.stream, f->inputs[1]->name);
    uint64_t rng = 11;
    int with = 0, lowered = 0;
    weft_cand c;
    for (int i = 0; i < 200; i++) {
        if (i % 2 == 0) weft_sketch_sample(&sk, &rng, &c);
        else weft_sketch_mutate(&sk, &rng, &c);
        assert_false(c.prefetch && c.pack);
        char *steps = weft_sketch_steps(&sk, &c);
        assert_non_null(steps);
        assert_int_equal(strstr(steps, " prefetch ") != NULL, c.prefetch);
        if (c.prefetch && lowered < 20) {
            weft_schedule *s = NULL;
            assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
            assert_int_equal(weft_schedule_apply_text(s, steps), WEFT_OK);
            weft_arena *la = weft_arena_create();
            weft_loop_func *lf = NULL;
            assert_int_equal(weft_lower(s, NULL, la, &lf), WEFT_OK);
            char *ir = weft_ir_func_str(lf);
            if (strstr(ir, "prefetch ")) lowered++;
            free(ir);
            weft_arena_destroy(la);
            weft_schedule_destroy(s);
        }
        with += c.prefetch;
        free(steps);
    }
    assert_true(with >= 20);
    assert_true(lowered >= 5);
    assert_true(check_candidates(&tg, f, &sk, "streamed matmul", 30) == 30);
    caps.l2_bytes = 1024 * 1024;
    assert_int_equal(weft_sketch_make(f, &caps, &sk), WEFT_OK);
    assert_string_equal(sk.stream, "");
    for (int i = 0; i < 100; i++) {
        weft_sketch_sample(&sk, &rng, &c);
        assert_false(c.prefetch);
    }
    weft_arena_destroy(a);
    targets_close(&tg);
}

/* g's one task: its sketch must be knobbed by `rule`, and `trials` of its candidates valid and
 * correct (check_candidates). */
static void knobbed_task(targets *tg, const weft_graph *g, const char *rule, int trials, weft_task **tasks, int *n,
                         weft_sketch *sk)
{
    assert_int_equal(weft_tasks_from_graph(g, &tg->caps, tasks, n), WEFT_OK);
    assert_int_equal(*n, 1);
    assert_int_equal(weft_sketch_make((*tasks)[0].f, &tg->caps, sk), WEFT_OK);
    assert_false(sk->tiled);
    assert_true(sk->knobbed);
    assert_string_equal(sk->ks.rule, rule);
    assert_int_equal(check_candidates(tg, (*tasks)[0].f, sk, rule, trials), trials);
}

/* The Conv of a graph (weights laid out in filter blocks, bias and ReLU fused) is not tiled by
 * the sketch rules but has a knobbed sketch (schedule/default_conv.c's register tile, loop
 * order, unrolling): its candidates are valid and correct, their knobs read back from the step
 * text; out-of-range knob values and tiles past the register file are refused by name. */
static void test_blocked_conv_gets_knobbed_sketch(void **state)
{
    (void)state;
    targets tg;
    targets_open(&tg);
    weft_graph *g = NULL;
    weft_value x, w, b, y, h;
    enum { C = 8, F = 40, H = 7 };
    static float wd[F * C * 9], bd[F];
    for (int i = 0; i < F * C * 9; i++) wd[i] = (float)((i * 37) % 19) / 19.0f - 0.5f;
    for (int i = 0; i < F; i++) bd[i] = (float)i / F - 0.5f;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, (int64_t[]){2, C, H, H}, &x), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "w", WEFT_TYPE_FLOAT32, 4, (int64_t[]){F, C, 3, 3}, wd, &w), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "b", WEFT_TYPE_FLOAT32, 1, (int64_t[]){F}, bd, &b), WEFT_OK);
    assert_int_equal(weft_graph_conv2d(g, x, w, b, 1, 1, &y), WEFT_OK);
    assert_int_equal(weft_graph_unary(g, "Relu", y, &h), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, h, "out"), WEFT_OK);
    weft_task *tasks = NULL;
    int n = 0;
    weft_sketch sk;
    knobbed_task(&tg, g, "conv_blocked", 24, &tasks, &n, &sk);
    /* refusals: values out of range, a tile past the register file */
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(tasks[0].f, &s), WEFT_OK);
    int64_t bad_tx[6] = {1, 1, 1, 0, 0, 0};
    assert_int_equal(weft_schedule_default_knobs(s, &tg.caps, sk.ks.n, bad_tx), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(), "tx"));
    int64_t big[6] = {1, 2, 7, 7, 0, 0};
    assert_int_equal(weft_schedule_default_knobs(s, &tg.caps, sk.ks.n, big), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(), "registers"));
    assert_int_equal(weft_schedule_n_steps(s), 0);
    /* a text that is not one of the sketch's candidates is not read back */
    weft_cand c;
    assert_false(weft_sketch_knobs_from_steps(&sk, "# knobs conv_blocked tf=1 tn=1 ty=1 tx=1 spatial_outer=0 unroll=0\nsplit x 2\n", &c));
    assert_false(weft_sketch_knobs_from_steps(&sk, "# knobs other tf=1\n", &c));
    weft_schedule_destroy(s);
    weft_tasks_free(tasks, n);
    weft_graph_destroy(g);
    targets_close(&tg);
}

/* A max-pool (the window rule: pooling and depthwise convs) has a knobbed sketch too: its
 * column and row tile. */
static void test_window_reduction_gets_knobbed_sketch(void **state)
{
    (void)state;
    targets tg;
    targets_open(&tg);
    weft_graph *g = NULL;
    weft_value x, y;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, (int64_t[]){1, 6, 21, 24}, &x), WEFT_OK);
    int64_t strides[2] = {1, 1}, pads[4] = {1, 1, 1, 1}, ks[2] = {3, 3};
    weft_attr attrs[3] = {
        {.name = "strides", .kind = WEFT_ATTR_INTS, .n = 2, .ints = strides},
        {.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = pads},
        {.name = "kernel_shape", .kind = WEFT_ATTR_INTS, .n = 2, .ints = ks},
    };
    assert_int_equal(weft_graph_add_op(g, "MaxPool", "pool", 1, &x, 3, attrs, 1, &y), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, y, "out"), WEFT_OK);
    weft_task *tasks = NULL;
    int n = 0;
    weft_sketch sk;
    knobbed_task(&tg, g, "window", 12, &tasks, &n, &sk);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(tasks[0].f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_default_knobs(s, &tg.caps, 2, (int64_t[]){25, 1}), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(), "outside"));
    assert_int_equal(weft_schedule_n_steps(s), 0);
    weft_schedule_destroy(s);
    weft_tasks_free(tasks, n);
    weft_graph_destroy(g);
    targets_close(&tg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_sampled_candidates_replay_and_match_naive),
                                       cmocka_unit_test(test_candidates_respect_register_and_cache_budgets),
                                       cmocka_unit_test(test_streamed_weight_candidates_prefetch),
                                       cmocka_unit_test(test_blocked_conv_gets_knobbed_sketch),
                                       cmocka_unit_test(test_window_reduction_gets_knobbed_sketch)};
    return cmocka_run_group_tests_name("tuner_sketch", tests, NULL, NULL);
}
