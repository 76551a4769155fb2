/* Bound inference of floor divisions (lower/bound.c): floordiv(b + i, c) with i free in
 * [0, w] and b a fixed expression spans w / c + 1 values when c divides b for every value of
 * its variables, and at most one more otherwise. Each case is checked two ways: the width the
 * inference reports (exact where the divisor divides the lower bound: the tile of 2 t rows
 * of a Winograd output needs t tile rows of its producer, not t + 1), and by brute force over
 * the fixed variable's values, that every value floordiv takes lies in [lo, lo + width]. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ir/arena.h"
#include "ir/expr.h"
#include "lower/lower_internal.h"

static int64_t fdiv(int64_t x, int64_t y)
{
    int64_t q = x / y;
    if (x % y != 0 && (x < 0) != (y < 0)) q--;
    return q;
}

typedef struct bound_case {
    int64_t k, off, w, c; /* floordiv(k h + off + i, c), i in [0, w] */
    int64_t want_width;
} bound_case;

static void check(const bound_case *t)
{
    weft_arena *a = weft_arena_create();
    assert_non_null(a);
    const weft_expr *h = weft_var(a, "h", WEFT_I64), *i = weft_var(a, "i", WEFT_I64);
    const weft_expr *base = weft_mul(a, h, weft_i64(a, t->k));
    if (t->off) base = weft_add(a, base, weft_i64(a, t->off));
    const weft_expr *e = weft_floordiv(a, weft_add(a, base, i), weft_i64(a, t->c));
    weft_range_env env = {0};
    weft_range_push(&env, h, 0, 9);
    weft_range_push(&env, i, 0, t->w);
    weft_interval iv;
    assert_true(weft_bound_interval(a, e, &env, 1, (const weft_expr *[]){i}, &iv));
    assert_int_equal(iv.width, t->want_width);
    for (int64_t hv = 0; hv <= 9; hv++) {
        weft_range_env at = {0};
        weft_range_push(&at, h, hv, hv);
        int64_t lo, hi;
        assert_true(weft_const_range(iv.lo, &at, &lo, &hi));
        assert_int_equal(lo, hi);
        for (int64_t iv_ = 0; iv_ <= t->w; iv_++) {
            int64_t v = fdiv(t->k * hv + t->off + iv_, t->c);
            assert_true(v >= lo && v <= lo + iv.width);
        }
    }
    weft_arena_destroy(a);
}

static void test_floordiv_width(void **state)
{
    (void)state;
    static const bound_case cases[] = {
        {4, 0, 3, 2, 1},  /* 4h + [0, 3] -> 2h + [0, 1] */
        {8, 0, 7, 4, 1},  /* 8h + [0, 7] -> 2h + [0, 1] */
        {14, 0, 13, 2, 6}, /* a row of 14 columns in 2x2 tiles: 7 tiles */
        {6, 2, 1, 2, 0},  /* 6h + 2 + [0, 1]: one value */
        {4, 1, 3, 2, 2},  /* 4h + 1 + [0, 3]: the lower bound is odd, 3 values */
        {3, 0, 3, 2, 2},  /* 3h: not a multiple of 2 for every h */
        {4, 0, 2, 4, 0},  /* 4h + [0, 2] -> h */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) check(&cases[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floordiv_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
