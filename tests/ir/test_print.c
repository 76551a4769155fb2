/* Printer output for expressions, a small loop nest and a tensor-expression kernel, compared
 * literally (the format is described in ir/print.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ir/arena.h"
#include "ir/print.h"

typedef struct fixture {
    weft_arena *a;
    char *s; /* last printed string, freed by the next print or the teardown */
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx || !(fx->a = weft_arena_create())) {
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    free(fx->s);
    weft_arena_destroy(fx->a);
    free(fx);
    return 0;
}

static const char *keep(fixture *fx, char *s)
{
    free(fx->s);
    fx->s = s;
    assert_non_null(s);
    return s;
}

static const char *pe(fixture *fx, const weft_expr *e) { return keep(fx, weft_ir_expr_str(e)); }

static void test_print_index_arithmetic_without_extra_parens(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *j = weft_var(a, "j", WEFT_I64);
    assert_string_equal(pe(fx, weft_add(a, weft_mul(a, i, weft_i64(a, 1024)), j)), "i*1024 + j");
    assert_string_equal(pe(fx, weft_mul(a, weft_add(a, i, j), weft_i64(a, 4))), "(i + j)*4");
    assert_string_equal(pe(fx, weft_sub(a, weft_sub(a, i, j), weft_i64(a, 1))), "i - j - 1");
    assert_string_equal(pe(fx, weft_sub(a, i, weft_sub(a, j, weft_i64(a, 1)))), "i - (j - 1)");
    assert_string_equal(pe(fx, weft_div(a, i, weft_mul(a, j, weft_i64(a, 2)))), "i/(j*2)");
    assert_string_equal(pe(fx, weft_add(a, i, weft_i64(a, -3))), "i + -3");
}

static void test_print_function_style_ops(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *x = weft_var(a, "x", WEFT_F32);
    assert_string_equal(pe(fx, weft_floordiv(a, i, weft_i64(a, 4))), "floordiv(i, 4)");
    assert_string_equal(pe(fx, weft_floormod(a, weft_add(a, i, weft_i64(a, 1)), weft_i64(a, 4))), "floormod(i + 1, 4)");
    assert_string_equal(pe(fx, weft_cast(a, WEFT_F32, i)), "cast<float32>(i)");
    const weft_expr *sel = weft_select(a, weft_cmp(a, WEFT_EXPR_LT, x, weft_f32(a, 0.5)), weft_call1(a, WEFT_INTRIN_EXP, x),
                                       weft_max(a, x, weft_f32(a, 0.0)));
    assert_string_equal(pe(fx, sel), "select(x < 0.5, exp(x), max(x, 0.0))");
    const weft_expr *args[] = {x, weft_f32(a, 2.0)};
    assert_string_equal(pe(fx, weft_call(a, WEFT_INTRIN_POW, 2, args)), "pow(x, 2.0)");
}

static void test_print_float_immediates_round_trip(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    assert_string_equal(pe(fx, weft_f32(a, 0.1)), "0.1");
    assert_string_equal(pe(fx, weft_f32(a, 1.0)), "1.0");
    assert_string_equal(pe(fx, weft_f32(a, 1e20)), "1e+20");
    assert_string_equal(pe(fx, weft_f32(a, -INFINITY)), "-inf");
    assert_string_equal(pe(fx, weft_f32(a, INFINITY)), "inf");
    assert_string_equal(pe(fx, weft_f32(a, 16777217.0)), "16777216.0");
    assert_string_equal(pe(fx, weft_float(a, (weft_dtype){WEFT_DTYPE_FLOAT, 64, 1}, 0.1)), "0.1"); /* float64: 17 digits max */
    assert_string_equal(pe(fx, weft_f32(a, 3.14159265358979)), "3.1415927");
    float back = strtof(fx->s, NULL);
    assert_true(back == (float)3.14159265358979);
}

static void test_print_compare_and_logic(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *j = weft_var(a, "j", WEFT_I64);
    const weft_expr *c1 = weft_cmp(a, WEFT_EXPR_LT, i, weft_i64(a, 4));
    const weft_expr *c2 = weft_cmp(a, WEFT_EXPR_GE, weft_add(a, j, weft_i64(a, 1)), weft_i64(a, 2));
    const weft_expr *c3 = weft_not(a, weft_cmp(a, WEFT_EXPR_EQ, i, j));
    assert_string_equal(pe(fx, weft_or(a, weft_and(a, c1, c2), c3)), "i < 4 && j + 1 >= 2 || !(i == j)");
    assert_string_equal(pe(fx, weft_and(a, c1, weft_or(a, c2, c3))), "i < 4 && (j + 1 >= 2 || !(i == j))");
    assert_string_equal(pe(fx, weft_int(a, WEFT_BOOL, 1)), "true");
}

static void test_print_same_name_vars_get_ids(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    const weft_expr *i1 = weft_var(a, "i", WEFT_I64), *i2 = weft_var(a, "i", WEFT_I64), *j = weft_var(a, "j", WEFT_I64);
    char want[64];
    snprintf(want, sizeof want, "i_%u + i_%u + j", weft_expr_var_id(i1), weft_expr_var_id(i2));
    assert_string_equal(pe(fx, weft_add(a, weft_add(a, i1, i2), j)), want);
}

static void test_print_tload_and_load(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 2, (int64_t[]){4, 8});
    weft_tensor *B = weft_te_placeholder(a, "B", WEFT_F32, 2, (int64_t[]){8, 4});
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *j = weft_var(a, "j", WEFT_I64), *k = weft_var(a, "k", WEFT_I64);
    const weft_expr *e = weft_mul(a, weft_te_at(a, A, i, k), weft_te_at(a, B, k, j));
    assert_string_equal(pe(fx, e), "A[i, k]*B[k, j]");
    weft_buffer *buf = weft_buffer_new(a, "C", WEFT_F32, 2, (int64_t[]){4, 4}, WEFT_SCOPE_GLOBAL, 0);
    assert_string_equal(pe(fx, weft_load(a, buf, weft_add(a, weft_mul(a, i, weft_i64(a, 4)), j))), "C[i*4 + j]");
}

/* for i (parallel): allocate acc; acc[0] = 0; for k: acc[0] += A[i*8 + k]; B[i] = acc[0] */
static void test_print_loop_nest(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *A = weft_buffer_new(a, "A", WEFT_F32, 2, (int64_t[]){4, 8}, WEFT_SCOPE_GLOBAL, 0);
    weft_buffer *B = weft_buffer_new(a, "B", WEFT_F32, 1, (int64_t[]){4}, WEFT_SCOPE_GLOBAL, 1);
    weft_buffer *acc = weft_buffer_new(a, "acc", WEFT_F32, 1, (int64_t[]){1}, WEFT_SCOPE_LOCAL, -1);
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *k = weft_var(a, "k", WEFT_I64), *zero = weft_i64(a, 0);
    const weft_expr *acc0 = weft_load(a, acc, zero);
    const weft_stmt *inner = weft_for(a, k, zero, weft_i64(a, 8), WEFT_FOR_SERIAL,
                                      weft_store(a, acc, zero, weft_add(a, acc0, weft_load(a, A, weft_add(a, weft_mul(a, i, weft_i64(a, 8)), k)))));
    const weft_stmt *items[] = {weft_store(a, acc, zero, weft_f32(a, 0.0)), inner, weft_store(a, B, i, acc0)};
    const weft_stmt *body = weft_allocate(a, acc, weft_seq(a, 3, items));
    const weft_buffer *params[] = {A, B};
    weft_loop_func f = {"rowsum", 2, params, weft_for(a, i, zero, weft_i64(a, 4), WEFT_FOR_PARALLEL, body)};
    assert_string_equal(keep(fx, weft_ir_func_str(&f)),
                        "func rowsum(A: float32[4, 8], B: float32[4]) {\n"
                        "  parallel for (i = 0; i < 4; i++) {\n"
                        "    allocate acc: float32[1] local\n"
                        "    acc[0] = 0.0\n"
                        "    for (k = 0; k < 8; k++) {\n"
                        "      acc[0] = acc[0] + A[i*8 + k]\n"
                        "    }\n"
                        "    B[i] = acc[0]\n"
                        "  }\n"
                        "}\n");
}

static void test_print_allocate_braces_if_else_and_loop_kinds(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *B = weft_buffer_new(a, "B", WEFT_I32, 1, (int64_t[]){8}, WEFT_SCOPE_GLOBAL, 0);
    weft_buffer *t = weft_buffer_new(a, "t", WEFT_I32, 1, (int64_t[]){4}, WEFT_SCOPE_LOCAL, -1);
    const weft_expr *v = weft_var(a, "v", WEFT_I64), *n = weft_var(a, "n", WEFT_I64);
    const weft_expr *one = weft_int(a, WEFT_I32, 1);
    const weft_stmt *ifs = weft_if(a, weft_cmp(a, WEFT_EXPR_LT, v, weft_i64(a, 4)), weft_store(a, t, weft_sub(a, v, weft_i64(a, 2)), one),
                                   weft_store(a, B, v, one));
    const weft_stmt *loop = weft_for(a, v, weft_i64(a, 2), weft_i64(a, 4), WEFT_FOR_VECTORIZED, ifs);
    const weft_stmt *items[] = {weft_allocate(a, t, loop), weft_store(a, B, weft_i64(a, 0), weft_int(a, WEFT_I32, 7))};
    const weft_stmt *outer = weft_for_full(a, n, weft_i64(a, 1), weft_i64(a, 2), WEFT_FOR_UNROLLED,
                                           WEFT_THREAD_NONE, 16, weft_seq(a, 2, items));
    assert_string_equal(keep(fx, weft_ir_stmt_str(outer)),
                        "unrolled for (n = 1; n < 3; n++) {  // auto_unroll=16\n"
                        "  allocate t: int32[4] local {\n"
                        "    vectorized for (v = 2; v < 6; v++) {\n"
                        "      if (v < 4) {\n"
                        "        t[v - 2] = 1\n"
                        "      } else {\n"
                        "        B[v] = 1\n"
                        "      }\n"
                        "    }\n"
                        "  }\n"
                        "  B[0] = 7\n"
                        "}\n");
    const weft_stmt *tb = weft_for_full(a, v, weft_i64(a, 0), weft_i64(a, 32), WEFT_FOR_THREAD_BOUND, WEFT_THREAD_X, 0,
                                        weft_store(a, B, v, one));
    assert_string_equal(keep(fx, weft_ir_stmt_str(tb)),
                        "thread_bound(threadIdx.x) for (v = 0; v < 32; v++) {\n"
                        "  B[v] = 1\n"
                        "}\n");
}

static void test_print_nested_loops_with_same_name_get_ids(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *B = weft_buffer_new(a, "B", WEFT_I64, 1, (int64_t[]){4}, WEFT_SCOPE_GLOBAL, 0);
    const weft_expr *i1 = weft_var(a, "i", WEFT_I64), *i2 = weft_var(a, "i", WEFT_I64), *zero = weft_i64(a, 0);
    const weft_stmt *s = weft_for(a, i1, zero, weft_i64(a, 2), WEFT_FOR_SERIAL,
                                  weft_for(a, i2, zero, weft_i64(a, 2), WEFT_FOR_SERIAL, weft_store(a, B, weft_add(a, i1, i2), i2)));
    char want[256];
    unsigned id = weft_expr_var_id(i2);
    snprintf(want, sizeof want,
             "for (i = 0; i < 2; i++) {\n"
             "  for (i_%u = 0; i_%u < 2; i_%u++) {\n"
             "    B[i + i_%u] = i_%u\n"
             "  }\n"
             "}\n",
             id, id, id, id, id);
    assert_string_equal(keep(fx, weft_ir_stmt_str(s)), want);
}

static void test_print_te_matmul(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 2, (int64_t[]){64, 32});
    weft_tensor *B = weft_te_placeholder(a, "B", WEFT_F32, 2, (int64_t[]){32, 64});
    weft_tensor *C = weft_te_compute(a, "C", 2, (int64_t[]){64, 64}, (const char *[]){"i", "j"});
    const weft_expr *i = weft_te_axis(C, 0), *j = weft_te_axis(C, 1);
    const weft_expr *k = weft_te_reduce_axis(a, C, "k", 32);
    weft_te_set_body(C, WEFT_REDUCE_SUM, weft_mul(a, weft_te_at(a, A, i, k), weft_te_at(a, B, k, j)));
    weft_tensor *D = weft_te_compute(a, "D", 2, (int64_t[]){64, 64}, (const char *[]){"i", "j"});
    weft_te_set_body(D, WEFT_REDUCE_NONE,
                     weft_max(a, weft_te_at(a, C, weft_te_axis(D, 0), weft_te_axis(D, 1)), weft_f32(a, 0.0)));
    weft_te_func *f = NULL;
    const weft_tensor *ins[] = {A, B}, *outs[] = {D};
    assert_int_equal(weft_te_func_create(a, "matmul_relu", 2, ins, 1, outs, &f), WEFT_OK);
    assert_string_equal(keep(fx, weft_te_func_str(f)),
                        "func matmul_relu(A, B) -> (D)\n"
                        "placeholder A: float32[64, 32]\n"
                        "placeholder B: float32[32, 64]\n"
                        "compute C[i, j] = sum(A[i, k]*B[k, j], axis=[k:32])  # float32[64, 64]\n"
                        "compute D[i, j] = max(C[i, j], 0.0)  # float32[64, 64]\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_print_index_arithmetic_without_extra_parens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print_function_style_ops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print_float_immediates_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print_compare_and_logic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print_same_name_vars_get_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print_tload_and_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print_loop_nest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print_allocate_braces_if_else_and_loop_kinds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print_nested_loops_with_same_name_get_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print_te_matmul, setup, teardown),
    };
    return cmocka_run_group_tests_name("ir_print", tests, NULL, NULL);
}
