/* A nearest upsampling's source index, as ops/nn_resize.c writes it: Y[c, h, w] =
 * X[c, floordiv(h*num, den), floordiv(w*num, den)] with den a multiple of num. The simplifier
 * takes the shared factor out (lower/simplify.c div_mod: floordiv(w*16, 32) is floordiv(w, 2))
 * and the vector loop over w reads each source element once and repeats it R times in
 * registers (targets/llvm/vector.c repeated_load) instead of a gather per vector. Cases: R = 2
 * over 16 lanes, whole vectors; R = 3 over 12 lanes with a last partial vector (a lane mask),
 * X placed at the end of a page so that a read past it faults. The loop IR must show the
 * reduced division, the LLVM IR no gather; values exactly those of plain C. A linear
 * upsampling's taps are clamped at the row's ends: repeated loads of the elements inside the
 * clamp, the clamped lanes taking the end element. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/print.h"
#include "lower/lower.h"
#include "schedule/schedule.h"
#include "targets/target.h"

enum { C = 3 };

/* A vectorized kernel of f (X in, Y out) and its buffers. */
typedef struct vec_kernel {
    weft_schedule *s;
    weft_loop_func *lf;
    char *blk; /* X at its end */
    float *x, *y;
} vec_kernel;

/* Y's w split by `lanes` and vectorized, lowered for the LLVM target; the loop IR's and the
 * LLVM IR's text into *ir and *llvm_ir (freed by the caller). */
static void lower_vectorized(const weft_target_ops *L, weft_target *t, weft_arena *a, weft_tensor *X, weft_tensor *Y, int lanes,
                             vec_kernel *k, char **ir, char **llvm_ir)
{
    weft_target_caps caps;
    L->caps(t, &caps);
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "up", 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){Y}, &f), WEFT_OK);
    assert_int_equal(weft_schedule_create(f, &k->s), WEFT_OK);
    char steps[128];
    snprintf(steps, sizeof steps, "split Y w %d\nvectorize Y w.1\n", lanes);
    assert_int_equal(weft_schedule_apply_text(k->s, steps), WEFT_OK);
    assert_int_equal(weft_lower(k->s, &caps, a, &k->lf), WEFT_OK);
    *ir = weft_ir_func_str(k->lf);
    assert_non_null(*ir);
    assert_int_equal(L->dump(t, k->lf, WEFT_DUMP_IR, llvm_ir), WEFT_OK);
}

/* Compiles and runs k with X's nx elements (x[i] = fill(i)) at the very end of a page-aligned
 * block, so that a read past X faults; Y has ny elements. */
static void run_at_page_end(const weft_target_ops *L, weft_target *t, vec_kernel *k, int nx, int ny, float (*fill)(int))
{
    weft_kernel *kern = NULL;
    assert_int_equal(L->compile(t, k->lf, &kern), WEFT_OK);
    size_t page = 4096, bytes = sizeof(float) * (size_t)nx, blk_bytes = (bytes + page - 1) / page * page + page;
    k->blk = aligned_alloc(page, blk_bytes);
    assert_non_null(k->blk);
    k->x = (float *)(k->blk + blk_bytes - bytes);
    k->y = malloc(sizeof(float) * (size_t)ny);
    assert_non_null(k->y);
    for (int i = 0; i < nx; i++) k->x[i] = fill(i);
    for (int i = 0; i < ny; i++) k->y[i] = -1;
    weft_exec ex = {0};
    assert_int_equal(L->run(kern, (void *[]){k->x, k->y}, &ex), WEFT_OK);
    L->kernel_destroy(kern);
}

static void vec_kernel_free(vec_kernel *k)
{
    free(k->blk), free(k->y);
    weft_schedule_destroy(k->s);
}

static float fill_ramp(int i) { return (float)i + 0.25f; }
static float fill_mod37(int i) { return (float)(i % 37) - 11.0f; }

static void check_upsample(const weft_target_ops *L, weft_target *t, int H, int W, int num, int den, int lanes)
{
    int R = den / num, HO = H * R, WO = W * R;
    weft_arena *a = weft_arena_create();
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 3, (int64_t[]){C, H, W});
    weft_tensor *Y = weft_te_compute(a, "Y", 3, (int64_t[]){C, HO, WO}, (const char *const[]){"c", "h", "w"});
    const weft_expr *c = weft_te_axis(Y, 0), *h = weft_te_axis(Y, 1), *w = weft_te_axis(Y, 2);
#define I(v) weft_i64(a, v)
    const weft_expr *sh = weft_floordiv(a, weft_mul(a, h, I(num)), I(den));
    const weft_expr *sw = weft_floordiv(a, weft_mul(a, w, I(num)), I(den));
#undef I
    weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_te_at(a, X, c, sh, sw));
    vec_kernel k = {0};
    char *ir = NULL, *llvm_ir = NULL, want[64];
    lower_vectorized(L, t, a, X, Y, lanes, &k, &ir, &llvm_ir);
    snprintf(want, sizeof want, "w.1, %d)", R);
    if (!strstr(ir, want)) fail_msg("R = %d: want floordiv(.. + w.1, %d) in\n%s", R, R, ir);
    bool gathers = strstr(llvm_ir, "llvm.masked.gather") != NULL;
    bool masked = strstr(llvm_ir, "llvm.masked.load") != NULL;
    free(ir), free(llvm_ir);
    if (gathers || masked != (WO % lanes != 0))
        fail_msg("R = %d, %d lanes over %d: gather %d masked load %d", R, lanes, WO, gathers, masked);
    run_at_page_end(L, t, &k, C * H * W, C * HO * WO, fill_ramp);
    for (int ci = 0; ci < C; ci++)
        for (int hi = 0; hi < HO; hi++)
            for (int wi = 0; wi < WO; wi++) {
                float got = k.y[(ci * HO + hi) * WO + wi], exp = k.x[(ci * H + hi * num / den) * W + wi * num / den];
                if (got != exp) fail_msg("R = %d: Y[%d, %d, %d] = %g, want %g", R, ci, hi, wi, (double)got, (double)exp);
            }
    vec_kernel_free(&k);
    weft_arena_destroy(a);
}

/* A 2x linear upsampling's taps along w: Y[c, h, w] = X[c, h, max(floordiv(w - 1, 2), 0)] +
 * 3 * X[c, h, min(floordiv(w + 1, 2), W - 1)]. Each term's clamp is active only in a row's
 * first or last vector; every vector reads repeated elements, the clamped lanes the row's end
 * element (no gather in the LLVM IR); values exactly those of plain C, X at the end of a page
 * (the masked load at the unclamped index must not read past it). */
static void check_clamped_taps(const weft_target_ops *L, weft_target *t, int H, int W, int lanes)
{
    int WO = 2 * W;
    weft_arena *a = weft_arena_create();
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 3, (int64_t[]){C, H, W});
    weft_tensor *Y = weft_te_compute(a, "Y", 3, (int64_t[]){C, H, WO}, (const char *const[]){"c", "h", "w"});
    const weft_expr *c = weft_te_axis(Y, 0), *h = weft_te_axis(Y, 1), *w = weft_te_axis(Y, 2);
#define I(v) weft_i64(a, v)
    const weft_expr *w0 = weft_max(a, weft_floordiv(a, weft_sub(a, w, I(1)), I(2)), I(0));
    const weft_expr *w1 = weft_min(a, weft_floordiv(a, weft_add(a, w, I(1)), I(2)), I(W - 1));
#undef I
    weft_te_set_body(Y, WEFT_REDUCE_NONE,
                     weft_add(a, weft_te_at(a, X, c, h, w0), weft_mul(a, weft_f32(a, 3.0), weft_te_at(a, X, c, h, w1))));
    vec_kernel k = {0};
    char *ir = NULL, *llvm_ir = NULL;
    lower_vectorized(L, t, a, X, Y, lanes, &k, &ir, &llvm_ir);
    /* floordiv(w - 1, 2) over L lanes from a multiple of L covers L / 2 + 1 elements, loaded
     * (masked) at the next power of two lanes when that is not one (9 -> 16) and shuffled */
    int span = lanes / 2 + 1, pow2 = 1;
    while (pow2 < span) pow2 *= 2;
    char rep[64];
    snprintf(rep, sizeof rep, "shufflevector <%d x float>", pow2);
    bool repeated = strstr(llvm_ir, rep) != NULL, gathers = strstr(llvm_ir, "llvm.masked.gather") != NULL;
    free(ir), free(llvm_ir);
    if (!repeated || gathers) fail_msg("clamped taps, %d lanes: want repeated loads (%s) and no gather", lanes, rep);
    run_at_page_end(L, t, &k, C * H * W, C * H * WO, fill_mod37);
    for (int ci = 0; ci < C; ci++)
        for (int hi = 0; hi < H; hi++)
            for (int wi = 0; wi < WO; wi++) {
                int a0 = wi >= 1 ? (wi - 1) / 2 : 0, a1 = (wi + 1) / 2 < W - 1 ? (wi + 1) / 2 : W - 1;
                const float *row = k.x + (ci * H + hi) * W;
                float got = k.y[(ci * H + hi) * WO + wi], exp = row[a0] + 3.0f * row[a1];
                if (got != exp) fail_msg("clamped taps: Y[%d, %d, %d] = %g, want %g", ci, hi, wi, (double)got, (double)exp);
            }
    vec_kernel_free(&k);
    weft_arena_destroy(a);
}

static void test_nearest_upsample_reads_repeated(void **state)
{
    (void)state;
    const weft_target_ops *L = weft_target_find("llvm");
    if (!L) skip();
    weft_target *t = NULL;
    assert_int_equal(L->create(&t), WEFT_OK);
    check_upsample(L, t, 4, 8, 16, 32, 16); /* 2x: 16 -> 32 columns, whole vectors */
    check_upsample(L, t, 3, 11, 5, 15, 12); /* 3x: 33 columns, 12 lanes, a partial last vector */
    check_clamped_taps(L, t, 3, 32, 16);    /* 64 columns: 4 vectors, the first and last clamped */
    check_clamped_taps(L, t, 2, 13, 8);     /* 26 columns: a partial last vector */
    L->destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nearest_upsample_reads_repeated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
