/* The LLVM target's padding-stage reads (targets/llvm/vector.c, weft_llvm_vector_select_load).
 * A padding stage as ops/nn_conv.c writes it, over an 8 x 18 padded plane of a 5 x 13 input
 * (w VECTORIZED with 18 lanes: not a power of two):
 *   P[h, w] = select(h >= 2 && h < 7 && w >= LO && w < 15, X[clamp(h - 2, 0, 4)*13 + clamp(w - 2, 0, 12)], 0)
 * With LO = 2 the condition proves every clamp idle, so the read is one masked contiguous load
 * (no gather; lanes outside the condition are masked off, so the border rows and columns, whose
 * unclamped addresses lie before or after X, are never read). With LO = 1 column 1 is inside but
 * its clamp max(w - 2, 0) is not idle: the gather stays. With the column's lower term written
 * through a clamp (max(w, -5) >= 2 instead of w >= 2: a term is taken as written, not
 * unclamped) the proof must not use it: gather.
 * Every case is checked element by element against plain C with the clamps, and the IR for
 * which kind of access it got. A stride-2 phase of a padded row is a masked load of twice the
 * lanes and a shuffle where gathers are slow (AMD Zen), a gather elsewhere. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/expr.h"
#include "ir/stmt.h"
#include "ir/tensor.h"
#include "runtime/runtime.h"
#include "targets/target.h"
#include "targets/llvm/llvm_test.h" /* slow_gather, set here both ways */

static const weft_target_ops *L = &weft_target_llvm_ops;

enum { H = 5, W = 13, HP = 8, WP = 18 };

static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* cond_lo: the first inside column; clamped_term: the column's lower term reads max(w, -5) (a
 * clamp that is the identity here, but not one the proof may strip). */
static void check_pad(weft_target *t, int64_t cond_lo, bool clamped_term, bool want_masked)
{
    weft_arena *a = weft_arena_create();
    assert_non_null(a);
    int64_t nx = H * W, np = HP * WP;
    const weft_buffer *X = weft_buffer_new(a, "X", WEFT_F32, 1, &nx, WEFT_SCOPE_GLOBAL, 0);
    const weft_buffer *P = weft_buffer_new(a, "P", WEFT_F32, 1, &np, WEFT_SCOPE_GLOBAL, 1);
    const weft_expr *h = weft_var(a, "h", WEFT_I64), *w = weft_var(a, "w", WEFT_I64);
#define I(v) weft_i64(a, v)
    const weft_expr *wl = clamped_term ? weft_max(a, w, I(-5)) : w;
    const weft_expr *in = weft_and(a, weft_and(a, weft_cmp(a, WEFT_EXPR_GE, h, I(2)), weft_cmp(a, WEFT_EXPR_LT, h, I(2 + H))),
                                   weft_and(a, weft_cmp(a, WEFT_EXPR_GE, wl, I(cond_lo)), weft_cmp(a, WEFT_EXPR_LT, w, I(2 + W))));
    const weft_expr *hc = weft_min(a, weft_max(a, weft_sub(a, h, I(2)), I(0)), I(H - 1));
    const weft_expr *wc = weft_min(a, weft_max(a, weft_sub(a, w, I(2)), I(0)), I(W - 1));
    const weft_expr *val = weft_select(a, in, weft_load(a, X, weft_add(a, weft_mul(a, hc, I(W)), wc)), weft_f32(a, 0));
    const weft_stmt *body = weft_for(a, h, I(0), I(HP), WEFT_FOR_SERIAL,
                                     weft_for(a, w, I(0), I(WP), WEFT_FOR_VECTORIZED, weft_store(a, P, weft_add(a, weft_mul(a, h, I(WP)), w), val)));
#undef I
    weft_loop_func lf = {.name = "pad", .n_params = 2, .params = (const weft_buffer *[]){X, P}, .body = body};
    char *ir = NULL;
    assert_int_equal(L->dump(t, &lf, WEFT_DUMP_IR, &ir), WEFT_OK);
    bool gathers = strstr(ir, "llvm.masked.gather") != NULL, masked = strstr(ir, "llvm.masked.load") != NULL;
    if (gathers == want_masked || masked != want_masked)
        fail_msg("lo %lld clamped term %d: gather %d masked load %d, want masked %d", (long long)cond_lo, clamped_term, gathers,
                 masked, want_masked);
    free(ir);
    weft_kernel *k = NULL;
    assert_int_equal(L->compile(t, &lf, &k), WEFT_OK);
    float *xv = malloc(sizeof(float) * H * W), *pv = malloc(sizeof(float) * HP * WP);
    assert_non_null(xv);
    assert_non_null(pv);
    for (int i = 0; i < H * W; i++) xv[i] = (float)i + 0.5f;
    for (int i = 0; i < HP * WP; i++) pv[i] = -1;
    void *args[2] = {xv, pv};
    weft_exec ex = {0};
    assert_int_equal(L->run(k, args, &ex), WEFT_OK);
    for (int r = 0; r < HP; r++)
        for (int c = 0; c < WP; c++) {
            bool inside = r >= 2 && r < 2 + H && c >= cond_lo && c < 2 + W;
            float want = inside ? xv[clampi(r - 2, 0, H - 1) * W + clampi(c - 2, 0, W - 1)] : 0.0f;
            if (pv[r * WP + c] != want)
                fail_msg("lo %lld: P[%d, %d] = %g, want %g", (long long)cond_lo, r, c, (double)pv[r * WP + c], (double)want);
        }
    L->kernel_destroy(k);
    free(xv), free(pv);
    weft_arena_destroy(a);
}

/* A stride-2 phase of the padded row, as a stride-2 conv's phase-split pad reads it:
 *   Q[h, v] = select(h >= 2 && h < 7 && 2v + 1 >= 2 && 2v + 1 < 15, X[clamp(h - 2, 0, 4)*13 + clamp(2v + 1 - 2, 0, 12)], 0)
 * over v in [0, 9) (VECTORIZED, 9 lanes). With slow_gather (AMD Zen) it is a masked load of
 * 18 elements and a shuffle; without, a gather. Checked against plain C either way; with the
 * row read as X's last row, the wide load must not touch the element after X. */
static void check_pad_stride2(weft_target *t, bool slow_gather)
{
    enum { VP = 9 };
    weft_llvm_test_set_slow_gather(t, slow_gather);
    weft_arena *a = weft_arena_create();
    assert_non_null(a);
    int64_t nx = H * W, nq = HP * VP;
    const weft_buffer *X = weft_buffer_new(a, "X", WEFT_F32, 1, &nx, WEFT_SCOPE_GLOBAL, 0);
    const weft_buffer *Q = weft_buffer_new(a, "Q", WEFT_F32, 1, &nq, WEFT_SCOPE_GLOBAL, 1);
    const weft_expr *h = weft_var(a, "h", WEFT_I64), *v = weft_var(a, "v", WEFT_I64);
#define I(v) weft_i64(a, v)
    const weft_expr *col = weft_add(a, weft_mul(a, v, I(2)), I(1));
    const weft_expr *in = weft_and(a, weft_and(a, weft_cmp(a, WEFT_EXPR_GE, h, I(2)), weft_cmp(a, WEFT_EXPR_LT, h, I(2 + H))),
                                   weft_and(a, weft_cmp(a, WEFT_EXPR_GE, col, I(2)), weft_cmp(a, WEFT_EXPR_LT, col, I(2 + W))));
    const weft_expr *hc = weft_min(a, weft_max(a, weft_sub(a, h, I(2)), I(0)), I(H - 1));
    const weft_expr *wc = weft_min(a, weft_max(a, weft_sub(a, col, I(2)), I(0)), I(W - 1));
    const weft_expr *val = weft_select(a, in, weft_load(a, X, weft_add(a, weft_mul(a, hc, I(W)), wc)), weft_f32(a, 0));
    const weft_stmt *body = weft_for(a, h, I(0), I(HP), WEFT_FOR_SERIAL,
                                     weft_for(a, v, I(0), I(VP), WEFT_FOR_VECTORIZED, weft_store(a, Q, weft_add(a, weft_mul(a, h, I(VP)), v), val)));
#undef I
    weft_loop_func lf = {.name = "pad2", .n_params = 2, .params = (const weft_buffer *[]){X, Q}, .body = body};
    char *ir = NULL;
    assert_int_equal(L->dump(t, &lf, WEFT_DUMP_IR, &ir), WEFT_OK);
    bool gathers = strstr(ir, "llvm.masked.gather") != NULL, masked = strstr(ir, "llvm.masked.load") != NULL;
    if (gathers == slow_gather || masked != slow_gather)
        fail_msg("stride 2, slow_gather %d: gather %d masked load %d", slow_gather, gathers, masked);
    free(ir);
    weft_kernel *k = NULL;
    assert_int_equal(L->compile(t, &lf, &k), WEFT_OK);
    /* X at the very end of a page-aligned block, so a read past it would fault */
    size_t page = 4096, bytes = sizeof(float) * H * W;
    char *blk = aligned_alloc(page, 2 * page);
    assert_non_null(blk);
    float *xv = (float *)(blk + 2 * page - bytes), *qv = malloc(sizeof(float) * HP * VP);
    assert_non_null(qv);
    for (int i = 0; i < H * W; i++) xv[i] = (float)i + 0.5f;
    for (int i = 0; i < HP * VP; i++) qv[i] = -1;
    void *args[2] = {xv, qv};
    weft_exec ex = {0};
    assert_int_equal(L->run(k, args, &ex), WEFT_OK);
    for (int r = 0; r < HP; r++)
        for (int c = 0; c < VP; c++) {
            int cx = 2 * c + 1;
            bool inside = r >= 2 && r < 2 + H && cx >= 2 && cx < 2 + W;
            float want = inside ? xv[clampi(r - 2, 0, H - 1) * W + clampi(cx - 2, 0, W - 1)] : 0.0f;
            if (qv[r * VP + c] != want)
                fail_msg("stride 2, slow_gather %d: Q[%d, %d] = %g, want %g", slow_gather, r, c, (double)qv[r * VP + c],
                         (double)want);
        }
    L->kernel_destroy(k);
    free(blk), free(qv);
    weft_arena_destroy(a);
}

static void test_pad_reads_stride2(void **state)
{
    (void)state;
    weft_target *t = NULL;
    assert_int_equal(L->create(&t), WEFT_OK);
    check_pad_stride2(t, true);
    check_pad_stride2(t, false);
    L->destroy(t);
}

/* Q[v] = X[S*v + 1] over v in [0, 16) (VECTORIZED), S = 2, 3, 4, all of it or under a guard v <
 * n (the last partial vector: a lane mask). With slow_gather (AMD Zen) one masked load of S x
 * lanes elements and a shuffle of every S-th, no gather; X ends where the last lane reads, at
 * the end of its block, so the wide load must not touch what lies after it. */
static void check_strided_load(weft_target *t, int S, int n)
{
    weft_llvm_test_set_slow_gather(t, true);
    weft_arena *a = weft_arena_create();
    assert_non_null(a);
    int64_t nx = (int64_t)S * (n - 1) + 2, nq = 16;
    const weft_buffer *X = weft_buffer_new(a, "X", WEFT_F32, 1, &nx, WEFT_SCOPE_GLOBAL, 0);
    const weft_buffer *Q = weft_buffer_new(a, "Q", WEFT_F32, 1, &nq, WEFT_SCOPE_GLOBAL, 1);
    const weft_expr *v = weft_var(a, "v", WEFT_I64);
#define I(v) weft_i64(a, v)
    const weft_stmt *st = weft_store(a, Q, v, weft_load(a, X, weft_add(a, weft_mul(a, v, I(S)), I(1))));
    if (n < 16) st = weft_if(a, weft_cmp(a, WEFT_EXPR_LT, v, I(n)), st, NULL);
    const weft_stmt *body = weft_for(a, v, I(0), I(16), WEFT_FOR_VECTORIZED, st);
#undef I
    weft_loop_func lf = {.name = "strided", .n_params = 2, .params = (const weft_buffer *[]){X, Q}, .body = body};
    char *ir = NULL;
    assert_int_equal(L->dump(t, &lf, WEFT_DUMP_IR, &ir), WEFT_OK);
    if (strstr(ir, "llvm.masked.gather") || !strstr(ir, "llvm.masked.load"))
        fail_msg("stride %d over %d: a gather, or no masked load:\n%s", S, n, ir);
    free(ir);
    weft_kernel *k = NULL;
    assert_int_equal(L->compile(t, &lf, &k), WEFT_OK);
    size_t page = 4096, bytes = sizeof(float) * (size_t)nx;
    char *blk = aligned_alloc(page, 2 * page);
    assert_non_null(blk);
    float *xv = (float *)(blk + 2 * page - bytes), qv[16];
    for (int64_t i = 0; i < nx; i++) xv[i] = (float)i + 0.25f;
    for (int i = 0; i < 16; i++) qv[i] = -1;
    void *args[2] = {xv, qv};
    weft_exec ex = {0};
    assert_int_equal(L->run(k, args, &ex), WEFT_OK);
    for (int i = 0; i < 16; i++) {
        float want = i < n ? xv[S * i + 1] : -1.0f;
        if (qv[i] != want) fail_msg("stride %d over %d: Q[%d] = %g, want %g", S, n, i, (double)qv[i], (double)want);
    }
    L->kernel_destroy(k);
    free(blk);
    weft_arena_destroy(a);
}

static void test_strided_loads_deinterleaved(void **state)
{
    (void)state;
    weft_target *t = NULL;
    assert_int_equal(L->create(&t), WEFT_OK);
    for (int S = 2; S <= 4; S++) {
        check_strided_load(t, S, 16);
        check_strided_load(t, S, 11);
    }
    L->destroy(t);
}

static void test_pad_reads(void **state)
{
    (void)state;
    weft_target *t = NULL;
    assert_int_equal(L->create(&t), WEFT_OK);
    check_pad(t, 2, false, true);  /* clamps proven idle: masked load */
    check_pad(t, 1, false, false); /* column 1 inside, its clamp not idle: gather */
    check_pad(t, 2, true, false);  /* the column term goes through a clamp: not used, gather */
    L->destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_pad_reads), cmocka_unit_test(test_pad_reads_stride2),
                                       cmocka_unit_test(test_strided_loads_deinterleaved)};
    return cmocka_run_group_tests_name("targets_llvm_pad", tests, NULL, NULL);
}
