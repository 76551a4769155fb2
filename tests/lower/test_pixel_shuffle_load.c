/* A depth-to-space read (PixelShuffle; a sub-pixel ConvTranspose's phases put back together,
 * frontend/onnx_decompose.c): Y[c, h, w] = X[c, h % R, w % R, h / R, w / R]. Along w, lane l
 * reads plane (w0 + l) % R at element (w0 + l) / R: the vector loop over w reads R runs of
 * contiguous elements and interleaves them (targets/llvm/vector.c interleaved_load) instead of
 * a gather per vector. Cases: R = 2 over 8 lanes, whole vectors; R = 3 over 8 lanes, a partial
 * last vector (a lane mask), X at the end of a page so that a read past it faults; and the
 * padded form the next conv reads (its zero border a select on the index, the index clamped,
 * the arm under the select a load or a ReLU of one): the lanes inside the image read the
 * interleaved runs. The LLVM IR must have no gather where every lane is inside (the plain and
 * the load-only padded form); values exactly those of plain C. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/lower.h"
#include "schedule/schedule.h"
#include "targets/target.h"

enum { C = 3 };

/* Y's w split by `lanes` and vectorized, lowered for the LLVM target, compiled and run on X
 * (nx elements, x[i] = i % 41 - 13, at the very end of a page-aligned block); Y (ny elements)
 * into *y, the LLVM IR's text into *llvm_ir (both freed by the caller). */
static void run_vectorized(const weft_target_ops *L, weft_target *t, weft_arena *a, weft_tensor *X, weft_tensor *Y, int lanes,
                           int nx, int ny, float **x, char **blk, float **y, char **llvm_ir)
{
    weft_target_caps caps;
    L->caps(t, &caps);
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "d2s", 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){Y}, &f), WEFT_OK);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    char steps[128];
    snprintf(steps, sizeof steps, "split Y w %d\nvectorize Y w.1\n", lanes);
    assert_int_equal(weft_schedule_apply_text(s, steps), WEFT_OK);
    weft_loop_func *lf = NULL;
    assert_int_equal(weft_lower(s, &caps, a, &lf), WEFT_OK);
    assert_int_equal(L->dump(t, lf, WEFT_DUMP_IR, llvm_ir), WEFT_OK);
    weft_kernel *kern = NULL;
    assert_int_equal(L->compile(t, lf, &kern), WEFT_OK);
    size_t page = 4096, bytes = sizeof(float) * (size_t)nx, blk_bytes = (bytes + page - 1) / page * page + page;
    *blk = aligned_alloc(page, blk_bytes);
    assert_non_null(*blk);
    *x = (float *)(*blk + blk_bytes - bytes);
    *y = malloc(sizeof(float) * (size_t)ny);
    assert_non_null(*y);
    for (int i = 0; i < nx; i++) (*x)[i] = (float)(i % 41) - 13.0f;
    for (int i = 0; i < ny; i++) (*y)[i] = -100.0f;
    weft_exec ex = {0};
    assert_int_equal(L->run(kern, (void *[]){*x, *y}, &ex), WEFT_OK);
    L->kernel_destroy(kern);
    weft_schedule_destroy(s);
}

/* pad: 0 for the plain depth-to-space over [C, H*R, W*R]; 1 for its zero-padded form over
 * [C, H*R + 2, W*R + 2] (the index clamped into the image), with relu: max(x, 0) under the
 * select. */
static void check_shuffle(const weft_target_ops *L, weft_target *t, int R, int H, int W, int lanes, int pad, bool relu)
{
    int HO = H * R, WO = W * R, PH = HO + 2 * pad, PW = WO + 2 * pad;
    weft_arena *a = weft_arena_create();
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 5, (int64_t[]){C, R, R, H, W});
    weft_tensor *Y = weft_te_compute(a, "Y", 3, (int64_t[]){C, PH, PW}, (const char *const[]){"c", "h", "w"});
    const weft_expr *c = weft_te_axis(Y, 0), *h = weft_te_axis(Y, 1), *w = weft_te_axis(Y, 2);
#define I(v) weft_i64(a, v)
    const weft_expr *hi = h, *wi = w, *inside = NULL;
    if (pad) {
        /* as ops/nn_conv.c pads: clamp(h - pad) into the image, the select on the index */
        hi = weft_min(a, weft_max(a, weft_sub(a, h, I(pad)), I(0)), I(HO - 1));
        wi = weft_min(a, weft_max(a, weft_sub(a, w, I(pad)), I(0)), I(WO - 1));
        inside = weft_and(a, weft_and(a, weft_cmp(a, WEFT_EXPR_GE, h, I(pad)), weft_cmp(a, WEFT_EXPR_LT, h, I(HO + pad))),
                          weft_and(a, weft_cmp(a, WEFT_EXPR_GE, w, I(pad)), weft_cmp(a, WEFT_EXPR_LT, w, I(WO + pad))));
    }
    const weft_expr *v = weft_te_at(a, X, c, weft_floormod(a, hi, I(R)), weft_floormod(a, wi, I(R)), weft_floordiv(a, hi, I(R)),
                                    weft_floordiv(a, wi, I(R)));
    if (relu) v = weft_max(a, v, weft_f32(a, 0.0));
    if (inside) v = weft_select(a, inside, v, weft_f32(a, 0.0));
#undef I
    weft_te_set_body(Y, WEFT_REDUCE_NONE, v);
    float *x = NULL, *y = NULL;
    char *blk = NULL, *llvm_ir = NULL;
    run_vectorized(L, t, a, X, Y, lanes, C * R * R * H * W, C * PH * PW, &x, &blk, &y, &llvm_ir);
    /* R masked loads of the runs (LLVM makes those whose mask is all true plain loads,
     * "unmaskedload"), no gather unless some vectors are mixed (the padded form's border
     * vectors of a select evaluated per lane) */
    bool gathers = strstr(llvm_ir, "llvm.masked.gather") != NULL,
         runs = strstr(llvm_ir, "llvm.masked.load") != NULL || strstr(llvm_ir, "unmaskedload") != NULL;
    if (!runs || (gathers && !(pad && relu)))
        fail_msg("R = %d, pad %d, relu %d: masked loads %d, gathers %d in\n%s", R, pad, (int)relu, (int)runs, (int)gathers, llvm_ir);
    free(llvm_ir);
    for (int ci = 0; ci < C; ci++)
        for (int yh = 0; yh < PH; yh++)
            for (int yw = 0; yw < PW; yw++) {
                int sh = yh - pad, sw = yw - pad;
                float want = 0;
                if (sh >= 0 && sh < HO && sw >= 0 && sw < WO) {
                    want = x[(((ci * R + sh % R) * R + sw % R) * H + sh / R) * W + sw / R];
                    if (relu && want < 0) want = 0;
                }
                float got = y[(ci * PH + yh) * PW + yw];
                if (got != want)
                    fail_msg("R = %d, pad %d, relu %d: Y[%d, %d, %d] = %g, want %g", R, pad, (int)relu, ci, yh, yw, (double)got,
                             (double)want);
            }
    free(blk), free(y);
    weft_arena_destroy(a);
}

static void test_pixel_shuffle_reads_interleaved_runs(void **state)
{
    (void)state;
    const weft_target_ops *L = weft_target_find("llvm");
    if (!L) skip();
    weft_target *t = NULL;
    assert_int_equal(L->create(&t), WEFT_OK);
    check_shuffle(L, t, 2, 3, 8, 8, 0, false);  /* 16 columns: whole vectors */
    check_shuffle(L, t, 3, 2, 5, 12, 0, false); /* 15 columns, 12 lanes: a partial last vector */
    check_shuffle(L, t, 2, 3, 16, 8, 1, false); /* padded: 34 columns, a load under the select */
    check_shuffle(L, t, 2, 3, 16, 8, 1, true);  /* padded, ReLU under the select */
    check_shuffle(L, t, 4, 2, 8, 16, 1, true);  /* R = 4, 16 lanes: 34 columns, lane 0 at residue 3 */
    L->destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pixel_shuffle_reads_interleaved_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
