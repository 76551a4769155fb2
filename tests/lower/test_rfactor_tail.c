/* The moved-back last block of an rfactor'd reduction (lower/partition.c): a sum over K = 100
 * split by a vector of 8 reads its last block at min(k.0 * 8, 92) and adds the identity where
 * that block overlaps the one before, as a select in the update. Partitioning unswitches the
 * select on k.0: the twelve full blocks sum plain vector loads and only the last one keeps the
 * select (it was on every block: a vector compare and blend per load). Checked on the lowered
 * IR (one select left, under the else of an `if` on k.0) and on values from the LLVM target and
 * the interpreter against plain C; a max reduction the same way (its identity is -inf). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/print.h"
#include "lower/lower.h"
#include "schedule/schedule.h"
#include "targets/target.h"

enum { ROWS = 5, K = 100, F = 8 };

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

static void check_tail(weft_reduce_kind kind, const char *target_name)
{
    const weft_target_ops *T = weft_target_find(target_name);
    if (!T) skip();
    weft_target *t = NULL;
    assert_int_equal(T->create(&t), WEFT_OK);
    weft_target_caps caps;
    T->caps(t, &caps);
    weft_arena *a = weft_arena_create();
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 2, (int64_t[]){ROWS, K});
    weft_tensor *Y = weft_te_compute(a, "Y", 1, (int64_t[]){ROWS}, (const char *const[]){"i"});
    const weft_expr *k = weft_te_reduce_axis(a, Y, "k", K);
    weft_te_set_body(Y, kind, weft_te_at(a, X, weft_te_axis(Y, 0), k));
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "tail", 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){Y}, &f),
                     WEFT_OK);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    char steps[256];
    snprintf(steps, sizeof steps, "split Y k %d\nrfactor Y k.1\ncompute_at Y.rf Y i\nreorder Y.rf k.0 k.1\nvectorize Y.rf k.1\n", F);
    assert_int_equal(weft_schedule_apply_text(s, steps), WEFT_OK);
    weft_loop_func *lf = NULL;
    assert_int_equal(weft_lower(s, &caps, a, &lf), WEFT_OK);
    char *ir = weft_ir_func_str(lf);
    assert_non_null(ir);
    char moved[32];
    snprintf(moved, sizeof moved, "min(k.0*%d, %d)", F, K - F);
    const char *els = strstr(ir, "} else {");
    if (count(ir, "select(") != 1 || !strstr(ir, "if (") || !els || !strstr(els, "select(") || !strstr(ir, moved))
        fail_msg("want the moved-back block read through %s and one select, under the else of an if on k.0:\n%s", moved, ir);
    free(ir);
    weft_kernel *kn = NULL;
    assert_int_equal(T->compile(t, lf, &kn), WEFT_OK);
    float xv[ROWS * K], yv[ROWS];
    for (int i = 0; i < ROWS * K; i++) xv[i] = (float)((i * 37) % 101) - 50.0f;
    for (int r = 0; r < ROWS; r++) yv[r] = NAN;
    weft_exec ex = {0};
    assert_int_equal(T->run(kn, (void *[]){xv, yv}, &ex), WEFT_OK);
    for (int r = 0; r < ROWS; r++) {
        /* the sums are of integers below 2^24: exact in any order */
        float want = kind == WEFT_REDUCE_MAX ? -INFINITY : 0.0f;
        for (int j = 0; j < K; j++) {
            float v = xv[r * K + j];
            want = kind == WEFT_REDUCE_MAX ? fmaxf(want, v) : want + v;
        }
        if (yv[r] != want) fail_msg("%s: Y[%d] = %g, want %g", target_name, r, (double)yv[r], (double)want);
    }
    T->kernel_destroy(kn);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
    T->destroy(t);
}

static void test_sum_tail_llvm(void **state)
{
    (void)state;
    check_tail(WEFT_REDUCE_SUM, "llvm");
}

static void test_max_tail_llvm(void **state)
{
    (void)state;
    check_tail(WEFT_REDUCE_MAX, "llvm");
}

static void test_sum_tail_interp(void **state)
{
    (void)state;
    check_tail(WEFT_REDUCE_SUM, "interp");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sum_tail_llvm),
        cmocka_unit_test(test_max_tail_llvm),
        cmocka_unit_test(test_sum_tail_interp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
