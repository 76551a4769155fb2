/* Expression constructors: constant folding, cheap identities, substitution and equality. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/expr.h"

static int setup(void **state)
{
    weft_arena *a = weft_arena_create();
    *state = a;
    return a ? 0 : -1;
}

static int teardown(void **state)
{
    weft_arena_destroy(*state);
    return 0;
}

static void test_expr_int_add_folds(void **state)
{
    weft_arena *a = *state;
    const weft_expr *e = weft_add(a, weft_i64(a, 40), weft_i64(a, 2));
    assert_int_equal(e->kind, WEFT_EXPR_INT);
    assert_int_equal(weft_expr_int(e), 42);
    assert_true(weft_dtype_eq(e->dtype, WEFT_I64));
}

static void test_expr_int32_fold_wraps(void **state)
{
    weft_arena *a = *state;
    const weft_expr *e = weft_add(a, weft_int(a, WEFT_I32, INT32_MAX), weft_int(a, WEFT_I32, 1));
    assert_int_equal(e->kind, WEFT_EXPR_INT);
    assert_int_equal(weft_expr_int(e), INT32_MIN);
    const weft_expr *m = weft_mul(a, weft_int(a, WEFT_I32, 65536), weft_int(a, WEFT_I32, 65536));
    assert_int_equal(weft_expr_int(m), 0);
}

static void test_expr_floordiv_floormod_fold_toward_minus_inf(void **state)
{
    weft_arena *a = *state;
    assert_int_equal(weft_expr_int(weft_floordiv(a, weft_i64(a, -7), weft_i64(a, 2))), -4);
    assert_int_equal(weft_expr_int(weft_floormod(a, weft_i64(a, -7), weft_i64(a, 2))), 1);
    assert_int_equal(weft_expr_int(weft_div(a, weft_i64(a, -7), weft_i64(a, 2))), -3);
    assert_int_equal(weft_expr_int(weft_floormod(a, weft_i64(a, 7), weft_i64(a, -2))), -1);
}

static void test_expr_division_by_zero_is_not_folded(void **state)
{
    weft_arena *a = *state;
    const weft_expr *e = weft_div(a, weft_i64(a, 1), weft_i64(a, 0));
    assert_int_equal(e->kind, WEFT_EXPR_DIV);
}

static void test_expr_float_fold_rounds_to_float32(void **state)
{
    weft_arena *a = *state;
    const weft_expr *e = weft_add(a, weft_f32(a, 0.1), weft_f32(a, 0.2));
    assert_int_equal(e->kind, WEFT_EXPR_FLOAT);
    assert_true(weft_expr_float(e) == (double)(float)((double)0.1f + (double)0.2f));
    assert_true(weft_expr_float(weft_f32(a, 0.1)) == (double)0.1f);
}

static void test_expr_compare_folds_to_bool(void **state)
{
    weft_arena *a = *state;
    const weft_expr *e = weft_cmp(a, WEFT_EXPR_LT, weft_i64(a, 3), weft_i64(a, 5));
    assert_int_equal(e->kind, WEFT_EXPR_INT);
    assert_true(weft_dtype_is_bool(e->dtype));
    assert_int_equal(weft_expr_int(e), 1);
    const weft_expr *x = weft_var(a, "x", WEFT_I64);
    const weft_expr *c = weft_cmp(a, WEFT_EXPR_GE, x, weft_i64(a, 0));
    assert_int_equal(c->kind, WEFT_EXPR_GE);
    assert_true(weft_dtype_is_bool(c->dtype));
}

static void test_expr_int_identities_simplify(void **state)
{
    weft_arena *a = *state;
    const weft_expr *x = weft_var(a, "x", WEFT_I64);
    assert_ptr_equal(weft_add(a, x, weft_i64(a, 0)), x);
    assert_ptr_equal(weft_add(a, weft_i64(a, 0), x), x);
    assert_ptr_equal(weft_mul(a, weft_i64(a, 1), x), x);
    assert_true(weft_expr_is_int_const(weft_mul(a, x, weft_i64(a, 0)), 0));
    assert_true(weft_expr_is_int_const(weft_floormod(a, x, weft_i64(a, 1)), 0));
}

static void test_expr_float_add_zero_is_kept(void **state)
{
    weft_arena *a = *state;
    const weft_expr *x = weft_var(a, "x", WEFT_F32);
    const weft_expr *e = weft_add(a, x, weft_f32(a, 0.0));
    assert_int_equal(e->kind, WEFT_EXPR_ADD); /* -0.0 + 0.0 is not -0.0 */
}

static void test_expr_commutative_constant_goes_right(void **state)
{
    weft_arena *a = *state;
    const weft_expr *x = weft_var(a, "x", WEFT_I64);
    const weft_expr *e = weft_mul(a, weft_i64(a, 4), x);
    assert_int_equal(e->kind, WEFT_EXPR_MUL);
    assert_ptr_equal(weft_expr_a(e), x);
    assert_true(weft_expr_is_int_const(weft_expr_b(e), 4));
}

static void test_expr_select_and_cast_fold(void **state)
{
    weft_arena *a = *state;
    const weft_expr *t = weft_var(a, "t", WEFT_F32), *f = weft_var(a, "f", WEFT_F32);
    assert_ptr_equal(weft_select(a, weft_int(a, WEFT_BOOL, 1), t, f), t);
    assert_ptr_equal(weft_select(a, weft_int(a, WEFT_BOOL, 0), t, f), f);
    const weft_expr *c = weft_cast(a, WEFT_F32, weft_i64(a, 3));
    assert_int_equal(c->kind, WEFT_EXPR_FLOAT);
    assert_true(weft_expr_float(c) == 3.0);
    assert_ptr_equal(weft_cast(a, WEFT_F32, t), t);
}

static void test_expr_substitute_replaces_and_refolds(void **state)
{
    weft_arena *a = *state;
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *j = weft_var(a, "j", WEFT_I64);
    const weft_expr *e = weft_add(a, weft_mul(a, i, weft_i64(a, 8)), j);
    const weft_expr *from[] = {i, j};
    const weft_expr *to[] = {weft_i64(a, 2), weft_i64(a, 3)};
    const weft_expr *r = weft_expr_substitute(a, e, 2, from, to);
    assert_true(weft_expr_is_int_const(r, 19));
}

static void test_expr_substitute_shares_unchanged_subtrees(void **state)
{
    weft_arena *a = *state;
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *j = weft_var(a, "j", WEFT_I64), *k = weft_var(a, "k", WEFT_I64);
    const weft_expr *left = weft_mul(a, i, weft_i64(a, 8));
    const weft_expr *e = weft_add(a, left, j);
    const weft_expr *from[] = {j};
    const weft_expr *to[] = {k};
    const weft_expr *r = weft_expr_substitute(a, e, 1, from, to);
    assert_ptr_not_equal(r, e);
    assert_ptr_equal(weft_expr_a(r), left);
    assert_ptr_equal(weft_expr_b(r), k);
    const weft_expr *none[] = {weft_var(a, "z", WEFT_I64)};
    assert_ptr_equal(weft_expr_substitute(a, e, 1, none, to), e);
}

static void test_expr_equal_is_structural_and_vars_by_identity(void **state)
{
    weft_arena *a = *state;
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *i2 = weft_var(a, "i", WEFT_I64);
    const weft_expr *x = weft_add(a, weft_mul(a, i, weft_i64(a, 4)), weft_i64(a, 1));
    const weft_expr *y = weft_add(a, weft_mul(a, i, weft_i64(a, 4)), weft_i64(a, 1));
    const weft_expr *z = weft_add(a, weft_mul(a, i2, weft_i64(a, 4)), weft_i64(a, 1));
    assert_ptr_not_equal(x, y);
    assert_true(weft_expr_equal(x, y));
    assert_false(weft_expr_equal(x, z));
    assert_false(weft_expr_equal(weft_f32(a, 0.0), weft_f32(a, -0.0)));
    assert_true(weft_expr_equal(weft_f32(a, NAN), weft_f32(a, NAN)));
    assert_false(weft_expr_equal(weft_int(a, WEFT_I32, 1), weft_i64(a, 1)));
}

static void test_expr_uses_var(void **state)
{
    weft_arena *a = *state;
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *j = weft_var(a, "j", WEFT_I64);
    const weft_expr *e = weft_min(a, weft_add(a, i, weft_i64(a, 1)), weft_i64(a, 9));
    assert_true(weft_expr_uses_var(e, i));
    assert_false(weft_expr_uses_var(e, j));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_expr_int_add_folds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_int32_fold_wraps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_floordiv_floormod_fold_toward_minus_inf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_division_by_zero_is_not_folded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_float_fold_rounds_to_float32, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_compare_folds_to_bool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_int_identities_simplify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_float_add_zero_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_commutative_constant_goes_right, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_select_and_cast_fold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_substitute_replaces_and_refolds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_substitute_shares_unchanged_subtrees, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_equal_is_structural_and_vars_by_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_uses_var, setup, teardown),
    };
    return cmocka_run_group_tests_name("ir_expr", tests, NULL, NULL);
}
