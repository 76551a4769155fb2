/* Test buffers for GPU-schedule checks in the interpreter's GPU mode (test_gpu.c, test_hip.c):
 * a function's parameters filled with deterministic values in [-1, 1) (outputs NaN), and the
 * relative error of a run against a reference output. Include after cmocka.h. */
#ifndef WEFT_TESTS_TARGETS_GPU_IO_H
#define WEFT_TESTS_TARGETS_GPU_IO_H
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/print.h"
#include "ir/tensor.h"
#include "lower/lower.h"
#include "schedule/schedule.h"
#include "targets/interp/interp.h"

typedef struct io {
    int n, out;
    void *p[8];
    size_t bytes[8];
} io;

static inline void io_init(io *b, const weft_te_func *f)
{
    uint64_t seed = 11;
    b->n = f->n_inputs + f->n_outputs;
    b->out = f->n_inputs;
    for (int i = 0; i < b->n; i++) {
        const weft_tensor *t = i < f->n_inputs ? f->inputs[i] : f->outputs[i - f->n_inputs];
        b->bytes[i] = (size_t)weft_te_numel(t) * 4;
        b->p[i] = malloc(b->bytes[i]);
        float *x = b->p[i];
        for (size_t e = 0; e < b->bytes[i] / 4; e++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            x[e] = i < f->n_inputs ? (float)((seed >> 41) & 0xffff) / 32768.0f - 1.0f : NAN;
        }
    }
}

static inline void io_free(io *b)
{
    for (int i = 0; i < b->n; i++) free(b->p[i]);
}

/* Relative error of lf's output in GPU mode against ref; negative on a run error. */
static inline double gpu_error(const weft_loop_func *lf, io *b, const float *ref, bool reverse)
{
    memset(b->p[b->out], 0xff, b->bytes[b->out]);
    if (weft_interp_run_gpu(lf, b->p, reverse) != WEFT_OK) {
        print_error("gpu run %s: %s\n", lf->name, weft_last_error());
        return -1;
    }
    const float *x = b->p[b->out];
    double md = 0, mr = 1;
    for (size_t i = 0; i < b->bytes[b->out] / 4; i++) {
        double d = fabs((double)x[i] - (double)ref[i]);
        if (!(d <= md)) md = d;
        if (fabs(ref[i]) > mr) mr = fabs(ref[i]);
    }
    return md / mr;
}

/* f scheduled by step text (NULL: the default schedule for caps) and lowered into a. */
static inline weft_status gpu_lower(weft_arena *a, const weft_te_func *f, const char *text, const weft_target_caps *caps,
                                    weft_loop_func **lf)
{
    weft_schedule *s = NULL;
    weft_status rc = weft_schedule_create(f, &s);
    if (rc == WEFT_OK) rc = text ? weft_schedule_apply_text(s, text) : weft_schedule_default(s, caps);
    if (rc == WEFT_OK) rc = weft_lower(s, caps, a, lf);
    weft_schedule_destroy(s);
    return rc;
}

/* The naive schedule's output for b's inputs (the interpreter on the host; malloc'd). */
static inline float *naive_ref(const weft_te_func *f, io *b)
{
    weft_arena *a = weft_arena_create();
    weft_loop_func *lf = NULL;
    assert_int_equal(gpu_lower(a, f, "", NULL, &lf), WEFT_OK);
    assert_int_equal(weft_interp_run(lf, b->p), WEFT_OK);
    float *ref = malloc(b->bytes[b->out]);
    memcpy(ref, b->p[b->out], b->bytes[b->out]);
    weft_arena_destroy(a);
    return ref;
}

/* lf (f under a GPU schedule: step text, or NULL for the default) run in the interpreter's GPU
 * mode with threads forward and reversed matches the naive schedule within 1e-4 relative. */
static inline void expect_gpu_matches_naive(const weft_te_func *f, const weft_loop_func *lf, const char *what, const char *text)
{
    io b;
    io_init(&b, f);
    float *ref = naive_ref(f, &b);
    for (int rev = 0; rev < 2; rev++) {
        double err = gpu_error(lf, &b, ref, rev);
        if (!(err >= 0 && err <= 1e-4)) {
            char *ir = weft_ir_func_str(lf);
            print_error("%s %s (%s threads): error %g\nsteps:\n%s\n%s\n", what, text ? "" : "default", rev ? "reversed" : "forward",
                        err, text ? text : "(default)", ir);
            free(ir);
        }
        assert_true(err >= 0 && err <= 1e-4);
    }
    free(ref);
    io_free(&b);
}

#endif
