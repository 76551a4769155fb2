/* What a partial tile's guard tells the statements under it (lower/simplify.c, guard_facts):
 * under if (q < T), with q >= 0 over the loop ranges, floormod(q, d) is q and floordiv(q, d) is
 * 0 for every d >= T. The case is a 1-D signal read through an axis of extent 1 (an Unsqueeze
 * inlined into a conv's pixel loop): Y[c, 0, w] = X[c, w] + X[c, floormod(w, 500)] over w of an
 * odd extent T, the fused h@w loop split by a vector. X[c, w] comes out as a plain index
 * (contiguous vectors; it was floormod(q, T), a gather), while floormod(w, 500), which the
 * guard does not decide, stays. Values from the LLVM target against plain C. */
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

enum { C = 3, T = 999, SPLIT = 16, MOD = 500 };

static void test_guard_decides_floormod(void **state)
{
    (void)state;
    const weft_target_ops *L = weft_target_find("llvm");
    if (!L) skip();
    weft_target *t = NULL;
    assert_int_equal(L->create(&t), WEFT_OK);
    weft_target_caps caps;
    L->caps(t, &caps);
    weft_arena *a = weft_arena_create();
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 2, (int64_t[]){C, T});
    weft_tensor *Y = weft_te_compute(a, "Y", 3, (int64_t[]){C, 1, T}, (const char *const[]){"c", "h", "w"});
    const weft_expr *c = weft_te_axis(Y, 0), *w = weft_te_axis(Y, 2);
    weft_te_set_body(Y, WEFT_REDUCE_NONE,
                     weft_add(a, weft_te_at(a, X, c, w), weft_te_at(a, X, c, weft_floormod(a, w, weft_i64(a, MOD)))));
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "sig", 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){Y}, &f),
                     WEFT_OK);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    char steps[256];
    snprintf(steps, sizeof steps, "fuse Y h w\nsplit Y h@w %d\nvectorize Y h@w.1\n", SPLIT);
    assert_int_equal(weft_schedule_apply_text(s, steps), WEFT_OK);
    weft_loop_func *lf = NULL;
    assert_int_equal(weft_lower(s, &caps, a, &lf), WEFT_OK);
    char *ir = weft_ir_func_str(lf);
    assert_non_null(ir);
    char undecided[32], decided[32];
    snprintf(undecided, sizeof undecided, ", %d)", MOD);
    snprintf(decided, sizeof decided, ", %d)", T);
    if (!strstr(ir, "if (") || !strstr(ir, undecided) || strstr(ir, decided))
        fail_msg("want the guard, floormod(.., %d) kept and no floormod/floordiv by %d:\n%s", MOD, T, ir);
    free(ir);
    weft_kernel *k = NULL;
    assert_int_equal(L->compile(t, lf, &k), WEFT_OK);
    float *xv = malloc(sizeof(float) * C * T), *yv = malloc(sizeof(float) * C * T);
    assert_non_null(xv);
    assert_non_null(yv);
    for (int i = 0; i < C * T; i++) xv[i] = (float)(i % 97) - 40.0f, yv[i] = -1;
    weft_exec ex = {0};
    assert_int_equal(L->run(k, (void *[]){xv, yv}, &ex), WEFT_OK);
    for (int ci = 0; ci < C; ci++)
        for (int wi = 0; wi < T; wi++) {
            float want = xv[ci * T + wi] + xv[ci * T + wi % MOD];
            if (yv[ci * T + wi] != want) fail_msg("Y[%d, 0, %d] = %g, want %g", ci, wi, (double)yv[ci * T + wi], (double)want);
        }
    L->kernel_destroy(k);
    free(xv), free(yv);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
    L->destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guard_decides_floormod),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
