/* One binary-op semantics: for every binary kind and dtype, the constant the expression
 * constructors fold two immediates to (ir/expr.c) equals what the interpreter computes from
 * the same values loaded from buffers (targets/interp), bit for bit, over values that probe
 * the edges (negative operands of floordiv/floormod, INT64_MIN / -1, int32 wrap-around, NaN,
 * signed zeros). Where folding declines (integer division by zero) the interpreter reports
 * the division by zero. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/binop.h"
#include "ir/stmt.h"
#include "targets/interp/interp.h"

#define WEFT_F64_T ((weft_dtype){WEFT_DTYPE_FLOAT, 64, 1})

static const weft_expr_kind kinds[] = {WEFT_EXPR_ADD, WEFT_EXPR_SUB, WEFT_EXPR_MUL, WEFT_EXPR_DIV, WEFT_EXPR_FLOORDIV,
                                       WEFT_EXPR_FLOORMOD, WEFT_EXPR_MIN, WEFT_EXPR_MAX, WEFT_EXPR_EQ, WEFT_EXPR_NE,
                                       WEFT_EXPR_LT, WEFT_EXPR_LE, WEFT_EXPR_GT, WEFT_EXPR_GE};
enum { N_KINDS = sizeof kinds / sizeof kinds[0] };

static bool is_cmp(weft_expr_kind k) { return weft_expr_kind_flags[k] & WEFT_KF_COMPARE; }

/* Runs out[0] = A[0] k B[0] (comparisons cast to int64) in the interpreter. */
static weft_status interp_binary(weft_arena *a, weft_dtype t, weft_expr_kind k, void *x, void *y, void *out)
{
    int64_t one = 1;
    weft_buffer *A = weft_buffer_new(a, "A", t, 1, &one, WEFT_SCOPE_GLOBAL, 0);
    weft_buffer *B = weft_buffer_new(a, "B", t, 1, &one, WEFT_SCOPE_GLOBAL, 1);
    weft_buffer *C = weft_buffer_new(a, "C", is_cmp(k) ? WEFT_I64 : t, 1, &one, WEFT_SCOPE_GLOBAL, 2);
    const weft_expr *zero = weft_i64(a, 0);
    const weft_expr *v = weft_binary(a, k, weft_load(a, A, zero), weft_load(a, B, zero));
    if (is_cmp(k)) v = weft_cast(a, WEFT_I64, v);
    const weft_buffer *params[] = {A, B, C};
    weft_loop_func f = {"binop", 3, params, weft_store(a, C, zero, v)};
    void *args[] = {x, y, out};
    return weft_interp_run(&f, args);
}

static void test_integer_ops_fold_as_interpreted(void **state)
{
    (void)state;
    static const int64_t vals[] = {0, 1, -1, 2, -2, 7, -7, 3, -3, INT64_MIN, INT64_MAX, INT32_MAX, INT32_MIN, 1000003};
    enum { NV = sizeof vals / sizeof vals[0] };
    int checked = 0, div_zero = 0;
    for (int bits = 32; bits <= 64; bits += 32) {
        weft_dtype t = bits == 32 ? WEFT_I32 : WEFT_I64;
        for (int ki = 0; ki < N_KINDS; ki++)
            for (int i = 0; i < NV; i++)
                for (int j = 0; j < NV; j++) {
                    weft_arena *a = weft_arena_create();
                    int64_t p = weft_binop_wrap(t, vals[i]), q = weft_binop_wrap(t, vals[j]);
                    const weft_expr *folded = weft_binary(a, kinds[ki], weft_int(a, t, p), weft_int(a, t, q));
                    int32_t x32 = (int32_t)p, y32 = (int32_t)q;
                    int64_t x64 = p, y64 = q, out[2] = {0, 0};
                    weft_status st = bits == 32 ? interp_binary(a, t, kinds[ki], &x32, &y32, out)
                                                : interp_binary(a, t, kinds[ki], &x64, &y64, out);
                    int32_t out32;
                    memcpy(&out32, out, sizeof out32);
                    int64_t got = bits == 32 && !is_cmp(kinds[ki]) ? (int64_t)out32 : out[0];
                    if (folded->kind != WEFT_EXPR_INT) {
                        /* folding declines only on division by zero, which the interpreter reports */
                        assert_int_equal(q, 0);
                        assert_int_not_equal(st, WEFT_OK);
                        div_zero++;
                    } else {
                        assert_int_equal(st, WEFT_OK);
                        if (weft_expr_int(folded) != got)
                            fail_msg("int%d %lld %s %lld: folded %lld, interpreted %lld", bits, (long long)p,
                                     weft_expr_kind_names[kinds[ki]], (long long)q, (long long)weft_expr_int(folded),
                                     (long long)got);
                        checked++;
                    }
                    weft_arena_destroy(a);
                }
    }
    assert_true(checked > 2 * N_KINDS * 150);
    assert_true(div_zero > 0);
}

static bool same_float(double x, double y) { return (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y)); }

static void test_float_ops_fold_as_interpreted(void **state)
{
    (void)state;
    static const double vals[] = {0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 3.0, -7.0, 1e-30, 1e30, 0.1, INFINITY, -INFINITY, NAN};
    enum { NV = sizeof vals / sizeof vals[0] };
    int checked = 0;
    for (int bits = 32; bits <= 64; bits += 32) {
        weft_dtype t = bits == 32 ? WEFT_F32 : WEFT_F64_T;
        for (int ki = 0; ki < N_KINDS; ki++)
            for (int i = 0; i < NV; i++)
                for (int j = 0; j < NV; j++) {
                    weft_arena *a = weft_arena_create();
                    double p = bits == 32 ? (double)(float)vals[i] : vals[i], q = bits == 32 ? (double)(float)vals[j] : vals[j];
                    const weft_expr *folded = weft_binary(a, kinds[ki], weft_float(a, t, p), weft_float(a, t, q));
                    float x32 = (float)p, y32 = (float)q;
                    double x64 = p, y64 = q;
                    union {
                        float f;
                        double d;
                        int64_t i;
                    } out = {.i = 0};
                    weft_status st = bits == 32 ? interp_binary(a, t, kinds[ki], &x32, &y32, &out)
                                                : interp_binary(a, t, kinds[ki], &x64, &y64, &out);
                    assert_int_equal(st, WEFT_OK);
                    if (is_cmp(kinds[ki])) {
                        assert_int_equal(folded->kind, WEFT_EXPR_INT);
                        if (weft_expr_int(folded) != out.i)
                            fail_msg("f%d %g %s %g: folded %lld, interpreted %lld", bits, p, weft_expr_kind_names[kinds[ki]], q,
                                     (long long)weft_expr_int(folded), (long long)out.i);
                    } else {
                        assert_int_equal(folded->kind, WEFT_EXPR_FLOAT);
                        double got = bits == 32 ? (double)out.f : out.d;
                        if (!same_float(weft_expr_float(folded), got))
                            fail_msg("f%d %g %s %g: folded %.17g, interpreted %.17g", bits, p, weft_expr_kind_names[kinds[ki]], q,
                                     weft_expr_float(folded), got);
                    }
                    checked++;
                    weft_arena_destroy(a);
                }
    }
    assert_int_equal(checked, 2 * N_KINDS * NV * NV);
}

/* The semantics themselves, on the cases that differ between languages. */
static void test_binop_edge_values(void **state)
{
    (void)state;
    int64_t r;
    assert_true(weft_binop_int(WEFT_EXPR_FLOORDIV, -7, 2, &r) && r == -4);
    assert_true(weft_binop_int(WEFT_EXPR_FLOORMOD, -7, 2, &r) && r == 1);
    assert_true(weft_binop_int(WEFT_EXPR_FLOORMOD, 7, -2, &r) && r == -1);
    assert_true(weft_binop_int(WEFT_EXPR_DIV, -7, 2, &r) && r == -3);
    assert_true(weft_binop_int(WEFT_EXPR_DIV, INT64_MIN, -1, &r) && r == INT64_MIN);
    assert_false(weft_binop_int(WEFT_EXPR_FLOORMOD, 5, 0, &r));
    assert_int_equal(weft_binop_wrap(WEFT_I32, (int64_t)INT32_MAX + 1), INT32_MIN);
    float f;
    assert_true(weft_binop_f32(WEFT_EXPR_FLOORMOD, -7.0f, 2.0f, &f) && f == 1.0f);
    assert_false(weft_binop_f32(WEFT_EXPR_EQ, 1.0f, 1.0f, &f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integer_ops_fold_as_interpreted),
        cmocka_unit_test(test_float_ops_fold_as_interpreted),
        cmocka_unit_test(test_binop_edge_values),
    };
    return cmocka_run_group_tests_name("binop", tests, NULL, NULL);
}
