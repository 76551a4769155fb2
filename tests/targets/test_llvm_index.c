/* The LLVM target's floor division of index arithmetic (targets/llvm/expr.c, nonneg_by_const,
 * over the ranges of targets/llvm/vector.c weft_llvm_int_range). A floordiv/floormod by a
 * positive constant whose dividend is provably >= 0 over the loop bounds (a fused or split
 * loop index: i, floormod(7*i, 11) + i, min(max(i - 3, 0), 40)) is an unsigned division; one
 * whose dividend may be negative (i - 24) keeps the signed form with its fix-up. Each case is
 * checked value by value against plain C floor division, for a serial and a vectorized loop. */
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

static const weft_target_ops *L = &weft_target_llvm_ops;

enum { N = 48, NCASE = 4 };

static int64_t floordiv_ref(int64_t x, int64_t d)
{
    int64_t q = x / d;
    return (x % d != 0 && (x < 0) != (d < 0)) ? q - 1 : q;
}

static int64_t dividend_ref(int c, int64_t i)
{
    switch (c) {
    case 0: return i;
    case 1: return (7 * i) % 11 + i;
    case 2: return i - 3 < 0 ? 0 : i - 3 > 40 ? 40 : i - 3;
    default: return i - 24;
    }
}

/* O[2*(NCASE*i + c)] = floordiv(dividend_c(i), 5), O[... + 1] = floormod(dividend_c(i), 5) */
static void check_index(weft_target *t, weft_for_kind kind)
{
    weft_arena *a = weft_arena_create();
    assert_non_null(a);
    int64_t no = 2 * NCASE * N;
    const weft_buffer *O = weft_buffer_new(a, "O", WEFT_I64, 1, &no, WEFT_SCOPE_GLOBAL, 0);
    const weft_expr *i = weft_var(a, "i", WEFT_I64);
#define I(v) weft_i64(a, v)
    const weft_expr *dividend[NCASE] = {
        i,
        weft_add(a, weft_floormod(a, weft_mul(a, i, I(7)), I(11)), i),
        weft_min(a, weft_max(a, weft_sub(a, i, I(3)), I(0)), I(40)),
        weft_sub(a, i, I(24)),
    };
    const weft_stmt *st[2 * NCASE];
    for (int c = 0; c < NCASE; c++)
        for (int m = 0; m < 2; m++) {
            const weft_expr *at = weft_add(a, weft_mul(a, i, I(2 * NCASE)), I(2 * c + m));
            st[2 * c + m] = weft_store(a, O, at, m ? weft_floormod(a, dividend[c], I(5)) : weft_floordiv(a, dividend[c], I(5)));
        }
    const weft_stmt *body = weft_for(a, i, I(0), I(N), kind, weft_seq(a, 2 * NCASE, st));
#undef I
    weft_loop_func lf = {.name = "index", .n_params = 1, .params = (const weft_buffer *[]){O}, .body = body};
    weft_kernel *k = NULL;
    assert_int_equal(L->compile(t, &lf, &k), WEFT_OK);
    int64_t *ov = malloc(sizeof(int64_t) * (size_t)no);
    assert_non_null(ov);
    for (int64_t j = 0; j < no; j++) ov[j] = -999;
    void *args[1] = {ov};
    weft_exec ex = {0};
    assert_int_equal(L->run(k, args, &ex), WEFT_OK);
    for (int64_t n = 0; n < N; n++)
        for (int c = 0; c < NCASE; c++) {
            int64_t x = dividend_ref(c, n), q = floordiv_ref(x, 5), r = x - 5 * q;
            int64_t gq = ov[2 * (NCASE * n + c)], gr = ov[2 * (NCASE * n + c) + 1];
            if (gq != q || gr != r)
                fail_msg("%s case %d i=%lld x=%lld: floordiv %lld floormod %lld, want %lld %lld",
                         kind == WEFT_FOR_SERIAL ? "serial" : "vectorized", c, (long long)n, (long long)x, (long long)gq,
                         (long long)gr, (long long)q, (long long)r);
        }
    L->kernel_destroy(k);
    free(ov);
    weft_arena_destroy(a);
}

static void test_floor_of_loop_indices(void **state)
{
    (void)state;
    weft_target *t = NULL;
    assert_int_equal(L->create(&t), WEFT_OK);
    check_index(t, WEFT_FOR_SERIAL);
    check_index(t, WEFT_FOR_VECTORIZED);
    L->destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_floor_of_loop_indices)};
    return cmocka_run_group_tests_name("targets_llvm_index", tests, NULL, NULL);
}
