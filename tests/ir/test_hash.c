/* Structural kernel hash: independent of arenas, addresses and names; sensitive to shapes,
 * ops, constants and graph structure; weft_te_func_equal agrees with it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/hash.h"

typedef struct fixture {
    weft_arena *a, *b;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx) return -1;
    fx->a = weft_arena_create();
    fx->b = weft_arena_create();
    *state = fx;
    return fx->a && fx->b ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    weft_arena_destroy(fx->a);
    weft_arena_destroy(fx->b);
    free(fx);
    return 0;
}

/* Knobs for building variants of one matmul (+ optional bias) kernel. */
typedef struct mm_opts {
    const char *names[5]; /* A, B, C, i/j axis prefix, k */
    int64_t m, n, k;
    weft_reduce_kind reduce;
    bool use_add;      /* A*B vs A+B inside the reduction */
    double bias_scale; /* epilogue D = C * bias_scale */
    bool swap_inputs;  /* declare inputs as (B, A) */
} mm_opts;

static mm_opts mm_default(void)
{
    return (mm_opts){{"A", "B", "C", "i", "k"}, 64, 48, 32, WEFT_REDUCE_SUM, false, 2.0, false};
}

static weft_te_func *build(weft_arena *a, mm_opts o)
{
    weft_tensor *A = weft_te_placeholder(a, o.names[0], WEFT_F32, 2, (int64_t[]){o.m, o.k});
    weft_tensor *B = weft_te_placeholder(a, o.names[1], WEFT_F32, 2, (int64_t[]){o.k, o.n});
    char ax0[16], ax1[16];
    strcpy(ax0, o.names[3]);
    strcpy(ax1, o.names[3]);
    strcat(ax0, "0");
    strcat(ax1, "1");
    weft_tensor *C = weft_te_compute(a, o.names[2], 2, (int64_t[]){o.m, o.n}, (const char *[]){ax0, ax1});
    const weft_expr *i = weft_te_axis(C, 0), *j = weft_te_axis(C, 1);
    const weft_expr *k = weft_te_reduce_axis(a, C, o.names[4], o.k);
    const weft_expr *x = weft_te_at(a, A, i, k), *y = weft_te_at(a, B, k, j);
    weft_te_set_body(C, o.reduce, o.use_add ? weft_add(a, x, y) : weft_mul(a, x, y));
    weft_tensor *D = weft_te_compute(a, "D", 2, (int64_t[]){o.m, o.n}, NULL);
    weft_te_set_body(D, WEFT_REDUCE_NONE,
                     weft_mul(a, weft_te_at(a, C, weft_te_axis(D, 0), weft_te_axis(D, 1)), weft_f32(a, o.bias_scale)));
    const weft_tensor *ins[2] = {A, B}, *outs[] = {D};
    if (o.swap_inputs) {
        ins[0] = B;
        ins[1] = A;
    }
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "mm", 2, ins, 1, outs, &f), WEFT_OK);
    return f;
}

static void expect_same(fixture *fx, mm_opts x, mm_opts y)
{
    weft_te_func *f = build(fx->a, x), *g = build(fx->b, y);
    assert_true(weft_te_func_hash(f) == weft_te_func_hash(g));
    assert_true(weft_te_func_equal(f, g));
    assert_true(weft_te_func_equal(g, f));
}

static void expect_different(fixture *fx, mm_opts x, mm_opts y)
{
    weft_te_func *f = build(fx->a, x), *g = build(fx->b, y);
    assert_true(weft_te_func_hash(f) != weft_te_func_hash(g));
    assert_false(weft_te_func_equal(f, g));
    assert_false(weft_te_func_equal(g, f));
}

static void test_hash_same_kernel_in_two_arenas_is_equal(void **state)
{
    fixture *fx = *state;
    weft_arena_alloc(fx->b, 1000); /* different addresses and ids in the second arena */
    weft_var(fx->b, "unused", WEFT_I64);
    expect_same(fx, mm_default(), mm_default());
}

static void test_hash_ignores_tensor_and_var_names(void **state)
{
    mm_opts r = mm_default();
    r.names[0] = "lhs";
    r.names[1] = "rhs";
    r.names[2] = "acc";
    r.names[3] = "row";
    r.names[4] = "red";
    expect_same(*state, mm_default(), r);
}

static void test_hash_differs_on_shape(void **state)
{
    mm_opts r = mm_default();
    r.n = 64;
    expect_different(*state, mm_default(), r);
    r = mm_default();
    r.k = 16;
    expect_different(*state, mm_default(), r);
}

static void test_hash_differs_on_op(void **state)
{
    mm_opts r = mm_default();
    r.use_add = true;
    expect_different(*state, mm_default(), r);
}

static void test_hash_differs_on_reduce_kind(void **state)
{
    mm_opts r = mm_default();
    r.reduce = WEFT_REDUCE_MAX;
    expect_different(*state, mm_default(), r);
}

static void test_hash_differs_on_float_constant_bits(void **state)
{
    mm_opts r = mm_default();
    r.bias_scale = 2.5;
    expect_different(*state, mm_default(), r);
    mm_opts p = mm_default(), q = mm_default();
    p.bias_scale = 0.0;
    q.bias_scale = -0.0;
    expect_different(*state, p, q);
}

static void test_hash_differs_on_input_order(void **state)
{
    mm_opts r = mm_default();
    r.swap_inputs = true;
    expect_different(*state, mm_default(), r);
}

/* C[i, j] = A[i, j] vs C[i, j] = A[j, i]: same names and kinds, only the axis binding differs. */
static void test_hash_distinguishes_axis_binding(void **state)
{
    fixture *fx = *state;
    weft_te_func *fs[2];
    for (int v = 0; v < 2; v++) {
        weft_arena *a = v ? fx->b : fx->a;
        weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 2, (int64_t[]){8, 8});
        weft_tensor *C = weft_te_compute(a, "C", 2, (int64_t[]){8, 8}, (const char *[]){"i", "j"});
        const weft_expr *i = weft_te_axis(C, 0), *j = weft_te_axis(C, 1);
        const weft_expr *x = weft_te_at(a, A, i, j), *y = weft_te_at(a, A, j, i);
        weft_te_set_body(C, WEFT_REDUCE_NONE, v ? y : x);
        const weft_tensor *ins[] = {A}, *outs[] = {C};
        assert_int_equal(weft_te_func_create(a, "t", 1, ins, 1, outs, &fs[v]), WEFT_OK);
    }
    assert_true(weft_te_func_hash(fs[0]) != weft_te_func_hash(fs[1]));
    assert_false(weft_te_func_equal(fs[0], fs[1]));
}

static void test_hash_hex_is_16_lowercase_digits(void **state)
{
    fixture *fx = *state;
    weft_te_func *f = build(fx->a, mm_default());
    char hex[17];
    weft_te_func_hash_hex(f, hex);
    assert_int_equal(strlen(hex), 16);
    assert_int_equal(strspn(hex, "0123456789abcdef"), 16);
    assert_true(strtoull(hex, NULL, 16) == weft_te_func_hash(f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hash_same_kernel_in_two_arenas_is_equal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hash_ignores_tensor_and_var_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hash_differs_on_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hash_differs_on_op, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hash_differs_on_reduce_kind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hash_differs_on_float_constant_bits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hash_differs_on_input_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hash_distinguishes_axis_binding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hash_hex_is_16_lowercase_digits, setup, teardown),
    };
    return cmocka_run_group_tests_name("ir_hash", tests, NULL, NULL);
}
