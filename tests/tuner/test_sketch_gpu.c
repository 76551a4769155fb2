/* The tuner's GPU sketch: for GPU caps, a kernel with a matmul-like stage gets the knobbed
 * sketch of rule "gpu_gemm" (threads tm x tn, register tile rm x rn, K tile kt, unroll;
 * schedule/gemm_gpu.h). 60 sampled and mutated candidates over five shapes are within the
 * caps (threads a whole number of warps, shared memory, register estimate), lowered by the
 * tuner's own weft_tuner_lower_steps pass the launch check, match the naive schedule in the
 * interpreter's GPU mode (threads forward and reversed; tolerance 1e-4 relative, gpu_io.h) and
 * read back from their step text; NVRTC compiles every
 * fourth (skipped with a message where the CUDA target is not built). Kernels without such a
 * stage keep the default as their only candidate. (20 candidates under the sanitizers: PER_SHAPE.) */
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
#include "tuner/tuner.h"
#ifdef WEFT_WITH_CUDA
#include "targets/cuda/cuda.h"
#endif

static int n_nvrtc;

/* Candidates per shape: each costs ~0.6 s in the interpreter in Debug, several times that under
 * AddressSanitizer on a loaded machine (where 12 per shape passed ctest's 600 s): there the same
 * shapes get fewer. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PER_SHAPE 4
#else
#define PER_SHAPE 12
#endif

static void compile_sample(const weft_loop_func *lf)
{
#ifdef WEFT_WITH_CUDA
    weft_gpu_source src;
    assert_int_equal(weft_gpu_emit(lf, &weft_gpu_dialect_cuda, &src), WEFT_OK);
    void *cubin = NULL;
    size_t size = 0;
    weft_status rc = weft_cuda_nvrtc(src.text, "sm_80", NULL, &cubin, &size);
    if (rc != WEFT_OK) print_error("nvrtc %s: %s\n%s\n", lf->name, weft_last_error(), src.text);
    assert_int_equal(rc, WEFT_OK);
    assert_true(size > 0);
    free(src.text);
    free(cubin);
    n_nvrtc++;
#else
    (void)lf;
#endif
}

/* Candidate c of sketch sk for f: valid tile, launchable, equal to the naive schedule. */
static void check_candidate(const weft_te_func *f, const weft_sketch *sk, const weft_cand *c, const weft_target_caps *caps,
                            bool compile)
{
    weft_gpu_gemm_tile t = {c->knob[0], c->knob[1], c->knob[2], c->knob[3], c->knob[4], c->knob[5]};
    weft_gpu_gemm_shape g;
    bool found = false;
    for (int i = 0; i < f->n_tensors && !found; i++) found = weft_gpu_gemm_form(f->tensors[i], &g);
    assert_true(found);
    if (weft_gpu_gemm_check(&g, &t, caps) != WEFT_OK) print_error("candidate outside the caps: %s\n", weft_last_error());
    assert_int_equal(weft_gpu_gemm_check(&g, &t, caps), WEFT_OK);
    assert_int_equal(t.tm * t.tn % caps->warp_size, 0);
    assert_true(weft_gpu_gemm_shared_bytes(&t) <= caps->shared_bytes);
    char *steps = weft_sketch_steps(sk, c);
    assert_non_null(steps);
    assert_non_null(strstr(steps, "# knobs gpu_gemm tm="));
    weft_cand back;
    assert_true(weft_sketch_knobs_from_steps(sk, steps, &back));
    assert_memory_equal(back.knob, c->knob, sizeof c->knob[0] * 6);
    weft_arena *a = weft_arena_create();
    /* lowered as the tuner's GPU measurer lowers it (the launch and barrier passes run in
     * lowering for GPU caps; lowered without them, multi-warp blocks raced on the device) */
    weft_status rc = WEFT_OK;
    weft_loop_func *lf = weft_tuner_lower_steps(f, steps, caps, a, &rc);
    if (rc != WEFT_OK) print_error("not launchable: %s\n%s\n", weft_last_error(), steps);
    assert_int_equal(rc, WEFT_OK);
    expect_gpu_matches_naive(f, lf, f->name, steps);
    if (compile) compile_sample(lf);
    free(steps);
    weft_arena_destroy(a);
}

static void test_gpu_sketch_candidates(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        int64_t shape[3];
    } cases[] = {
        {"matmul", {37, 19, 23}}, {"matmul", {64, 48, 32}}, {"matmul", {1, 100, 37}},
        {"matmul", {50, 7, 9}},   {"dense_bias_relu", {24, 40, 12}},
    };
    weft_target_caps caps = weft_caps_gpu("cuda");
    int checked = 0;
    uint64_t rng = 7;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        weft_arena *a = weft_arena_create();
        weft_te_func *f = NULL;
        assert_int_equal(weft_op_build(a, cases[i].op, 3, cases[i].shape, &f), WEFT_OK);
        weft_sketch sk;
        assert_int_equal(weft_sketch_make(f, &caps, &sk), WEFT_OK);
        assert_true(sk.knobbed && weft_sketch_searchable(&sk));
        assert_string_equal(sk.ks.rule, "gpu_gemm");
        weft_cand c;
        for (int n = 0; n < PER_SHAPE; n++) {
            if (n % 2 == 0) weft_sketch_sample(&sk, &rng, &c);
            else weft_sketch_mutate(&sk, &rng, &c);
            check_candidate(f, &sk, &c, &caps, n % 4 == 0);
            checked++;
        }
        weft_arena_destroy(a);
    }
    printf("GPU sketch: %d candidates valid, launchable and equal to the naive schedule; NVRTC compiled %d\n", checked,
           n_nvrtc);
#ifndef WEFT_WITH_CUDA
    printf("skipped NVRTC: the CUDA target is not built (NVRTC not found)\n");
#endif
    assert_true(checked >= 5 * PER_SHAPE);
}

static void test_gpu_sketch_refusals(void **state)
{
    (void)state;
    weft_target_caps caps = weft_caps_gpu("cuda");
    weft_arena *a = weft_arena_create();
    weft_te_func *mm = NULL, *sm = NULL;
    assert_int_equal(weft_op_build(a, "matmul", 3, (int64_t[]){64, 48, 32}, &mm), WEFT_OK);
    assert_int_equal(weft_op_build(a, "softmax", 2, (int64_t[]){4, 100}, &sm), WEFT_OK);
    /* no matmul-like stage: no knobs, the default is the only candidate */
    weft_knob_space sp;
    assert_int_equal(weft_schedule_knob_space(sm, &caps, &sp), WEFT_OK);
    assert_int_equal(sp.n, 0);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(sm, &s), WEFT_OK);
    int64_t v[6] = {16, 16, 1, 1, 16, 0};
    assert_int_not_equal(weft_schedule_default_knobs(s, &caps, 6, v), WEFT_OK);
    assert_non_null(strstr(weft_last_error(), "no matmul-like stage"));
    weft_schedule_destroy(s);
    /* a tile past the caps is refused with the limit named, the schedule unchanged */
    assert_int_equal(weft_schedule_create(mm, &s), WEFT_OK);
    int64_t big[6] = {64, 32, 1, 1, 16, 0};
    assert_int_not_equal(weft_schedule_default_knobs(s, &caps, 6, big), WEFT_OK);
    assert_non_null(strstr(weft_last_error(), "within 1024"));
    assert_int_equal(weft_schedule_n_steps(s), 0);
    assert_int_not_equal(weft_schedule_default_knobs(s, &caps, 5, big), WEFT_OK);
    assert_non_null(strstr(weft_last_error(), "gpu_gemm takes 6 knobs"));
    /* the default GPU schedule is a point of the space: its knobs give the same steps */
    assert_int_equal(weft_schedule_knob_space(mm, &caps, &sp), WEFT_OK);
    assert_int_equal(sp.n, 6);
    weft_gpu_gemm_shape g;
    assert_true(weft_gpu_gemm_form(mm->outputs[0], &g));
    weft_gpu_gemm_tile t;
    weft_gpu_gemm_default_tile(&g, &caps, &t);
    int64_t d[6] = {t.tm, t.tn, t.rm, t.rn, t.kt, t.unroll};
    for (int i = 0; i < 6; i++) {
        bool in = false;
        for (int j = 0; j < sp.n_values[i]; j++) in |= sp.values[i][j] == d[i];
        assert_true(in);
    }
    assert_int_equal(weft_schedule_default_knobs(s, &caps, 6, d), WEFT_OK);
    weft_schedule *ref = NULL;
    assert_int_equal(weft_schedule_create(mm, &ref), WEFT_OK);
    assert_int_equal(weft_schedule_default(ref, &caps), WEFT_OK);
    char *x = weft_schedule_text(s), *y = weft_schedule_text(ref);
    assert_string_equal(x, y);
    free(x);
    free(y);
    weft_schedule_destroy(ref);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_sketch_refusals),
        cmocka_unit_test(test_gpu_sketch_candidates),
    };
    return cmocka_run_group_tests_name("sketch_gpu", tests, NULL, NULL);
}
