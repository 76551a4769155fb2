/* Operator library: each op builds the documented stages with the documented names and
 * shapes, bad arguments fail with a message naming the op, weft_op_build dispatches by name,
 * and the pattern classifier labels the stages the default schedules care about. Numerics
 * are checked elsewhere through the interpreter. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "ir/error.h"
#include "ops/ops.h"

static int setup(void **state)
{
    weft_arena *a = weft_arena_create();
    if (!a) return -1;
    weft_error_clear();
    *state = a;
    return 0;
}

static int teardown(void **state)
{
    weft_arena_destroy(*state);
    return 0;
}

static const weft_tensor *find(const weft_te_func *f, const char *name)
{
    for (int i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i]->name, name) == 0) return f->tensors[i];
    return NULL;
}

static void assert_shape(const weft_tensor *t, int ndim, const int64_t *shape)
{
    assert_non_null(t);
    assert_int_equal(t->ndim, ndim);
    for (int d = 0; d < ndim; d++) assert_int_equal(t->shape[d], shape[d]);
}

static void assert_axes(const weft_tensor *t, const char *const *names, int n_reduce, const char *const *reduce_names)
{
    for (int d = 0; d < t->ndim; d++) assert_string_equal(weft_expr_var_name(t->axis[d].var), names[d]);
    assert_int_equal(t->n_reduce, n_reduce);
    for (int r = 0; r < n_reduce; r++) assert_string_equal(weft_expr_var_name(t->reduce_axis[r].var), reduce_names[r]);
}

static void assert_error_mentions(const char *a, const char *b)
{
    const char *msg = weft_last_error();
    if (a && !strstr(msg, a)) fail_msg("error '%s' does not mention '%s'", msg, a);
    if (b && !strstr(msg, b)) fail_msg("error '%s' does not mention '%s'", msg, b);
}

static void test_matmul_builds_named_stages(void **state)
{
    weft_te_func *f = weft_op_matmul(*state, 64, 32, 16);
    assert_non_null(f);
    assert_string_equal(f->name, "matmul");
    assert_int_equal(f->n_tensors, 3);
    assert_int_equal(f->n_inputs, 2);
    assert_string_equal(f->inputs[0]->name, "A");
    assert_string_equal(f->inputs[1]->name, "B");
    assert_shape(f->inputs[0], 2, (int64_t[]){64, 16});
    assert_shape(f->inputs[1], 2, (int64_t[]){16, 32});
    assert_int_equal(f->n_outputs, 1);
    const weft_tensor *C = f->outputs[0];
    assert_string_equal(C->name, "C");
    assert_shape(C, 2, (int64_t[]){64, 32});
    assert_axes(C, (const char *const[]){"i", "j"}, 1, (const char *const[]){"k"});
    assert_int_equal(C->reduce_axis[0].extent, 16);
    assert_int_equal(C->reduce, WEFT_REDUCE_SUM);
    assert_true(weft_dtype_eq(C->dtype, WEFT_F32));
}

static void test_matmul_flops_are_2mnk(void **state)
{
    weft_te_func *f = weft_op_matmul(*state, 64, 32, 16);
    assert_non_null(f);
    assert_true(weft_te_func_flops(f) == 2.0 * 64 * 32 * 16);
}

static void test_matmul_rejects_zero_k(void **state)
{
    assert_null(weft_op_matmul(*state, 4, 4, 0));
    assert_error_mentions("matmul", "K=0");
    assert_null(weft_op_matmul(*state, -1, 4, 4));
    assert_error_mentions("matmul", "M=-1");
}

static void test_dense_bias_relu_has_product_and_epilogue(void **state)
{
    weft_te_func *f = weft_op_dense_bias_relu(*state, 8, 12, 20);
    assert_non_null(f);
    assert_string_equal(f->name, "dense_bias_relu");
    assert_int_equal(f->n_tensors, 5); /* A, W, D, bias, out */
    assert_int_equal(f->n_inputs, 3);
    assert_string_equal(f->inputs[0]->name, "A");
    assert_string_equal(f->inputs[1]->name, "W");
    assert_string_equal(f->inputs[2]->name, "bias");
    assert_shape(f->inputs[2], 1, (int64_t[]){12});
    const weft_tensor *out = f->outputs[0];
    assert_string_equal(out->name, "out");
    assert_shape(out, 2, (int64_t[]){8, 12});
    assert_axes(out, (const char *const[]){"i", "j"}, 0, NULL);
    const weft_tensor *D = find(f, "D");
    assert_shape(D, 2, (int64_t[]){8, 12});
    assert_axes(D, (const char *const[]){"i", "j"}, 1, (const char *const[]){"k"});
    assert_int_equal(weft_tensor_pattern(D), WEFT_PATTERN_OUT_REDUCTION_REUSE);
    assert_int_equal(weft_tensor_pattern(out), WEFT_PATTERN_ELEMWISE);
    /* 2MNK for D, then add and max per output element */
    assert_true(weft_te_func_flops(f) == 2.0 * 8 * 12 * 20 + 2.0 * 8 * 12);
}

static void test_conv2d_padded_shapes(void **state)
{
    weft_te_func *f = weft_op_conv2d(*state, 1, 3, 32, 32, 16, 7, 7, 4, 4, 3, 3);
    assert_non_null(f);
    assert_string_equal(f->name, "conv2d");
    assert_int_equal(f->n_tensors, 4); /* X, pad, Wt, Y */
    assert_int_equal(f->n_inputs, 2);
    assert_string_equal(f->inputs[0]->name, "X");
    assert_string_equal(f->inputs[1]->name, "Wt");
    assert_shape(f->inputs[1], 4, (int64_t[]){16, 3, 7, 7});
    const weft_tensor *Y = f->outputs[0];
    assert_string_equal(Y->name, "Y");
    assert_shape(Y, 4, (int64_t[]){1, 16, 8, 8});
    assert_axes(Y, (const char *const[]){"n", "f", "y", "x"}, 3, (const char *const[]){"rc", "ry", "rx"});
    assert_int_equal(Y->reduce_axis[0].extent, 3);
    assert_int_equal(Y->reduce_axis[1].extent, 7);
    assert_int_equal(Y->reduce_axis[2].extent, 7);
    const weft_tensor *pad = find(f, "pad");
    /* the last window starts at row 28 and ends at 34: the bottom/right padding is never read */
    assert_shape(pad, 4, (int64_t[]){1, 3, 35, 35});
    assert_axes(pad, (const char *const[]){"n", "c", "h", "w"}, 0, NULL);
    assert_int_equal(pad->body->kind, WEFT_EXPR_SELECT);
    /* SELECT evaluates both arms, so the load of X must be clamped: min(max(h - 3, 0), 31) */
    const weft_expr *load = weft_expr_sel_true(pad->body);
    assert_int_equal(load->kind, WEFT_EXPR_TLOAD);
    assert_ptr_equal(weft_expr_tload_tensor(load), f->inputs[0]);
    const weft_expr *h_idx = weft_expr_tload_idx(load, 2);
    assert_int_equal(h_idx->kind, WEFT_EXPR_MIN);
    assert_true(weft_expr_is_int_const(weft_expr_b(h_idx), 31));
    assert_int_equal(weft_expr_a(h_idx)->kind, WEFT_EXPR_MAX);
    assert_true(weft_expr_is_int_const(weft_expr_b(weft_expr_a(h_idx)), 0));
    assert_ptr_equal(weft_expr_tload_idx(load, 0), pad->axis[0].var);
    const weft_tensor *reads[4];
    assert_int_equal(weft_te_reads(Y, reads, 4), 2);
    assert_ptr_equal(reads[0], pad);
    assert_ptr_equal(reads[1], f->inputs[1]);
}

static void test_conv2d_without_padding_reads_x(void **state)
{
    weft_te_func *f = weft_op_conv2d(*state, 2, 4, 10, 12, 8, 3, 3, 1, 2, 0, 0);
    assert_non_null(f);
    assert_int_equal(f->n_tensors, 3);
    assert_null(find(f, "pad"));
    const weft_tensor *Y = f->outputs[0];
    assert_shape(Y, 4, (int64_t[]){2, 8, 8, 5});
    const weft_tensor *reads[4];
    assert_int_equal(weft_te_reads(Y, reads, 4), 2);
    assert_ptr_equal(reads[0], f->inputs[0]);
}

static void test_conv2d_pads_one_direction(void **state)
{
    weft_te_func *f = weft_op_conv2d(*state, 1, 1, 5, 5, 1, 3, 3, 1, 1, 1, 0);
    assert_non_null(f);
    assert_shape(find(f, "pad"), 4, (int64_t[]){1, 1, 7, 5});
    assert_shape(f->outputs[0], 4, (int64_t[]){1, 1, 5, 3});
}

/* conv2d is the graph's Conv (weft_conv2d_stages): a 3x3 kernel over a 1x1 image with pad 1
 * only ever reads its centre tap, so the taps are dropped and no padding is materialized, and
 * a single input channel has no channel reduction. */
static void test_conv2d_drops_taps_that_read_only_padding(void **state)
{
    weft_te_func *f = weft_op_conv2d(*state, 2, 4, 1, 1, 8, 3, 3, 1, 1, 1, 1);
    assert_non_null(f);
    assert_null(find(f, "pad"));
    const weft_tensor *Y = f->outputs[0];
    assert_shape(Y, 4, (int64_t[]){2, 8, 1, 1});
    assert_axes(Y, (const char *const[]){"n", "f", "y", "x"}, 3, (const char *const[]){"rc", "ry", "rx"});
    assert_int_equal(Y->reduce_axis[0].extent, 4);
    assert_int_equal(Y->reduce_axis[1].extent, 1);
    assert_int_equal(Y->reduce_axis[2].extent, 1);
    /* 2 flops per (output, channel, remaining tap) */
    assert_true(weft_te_func_flops(f) == 2.0 * 2 * 8 * 4);
    weft_te_func *g = weft_op_conv2d(*state, 1, 1, 6, 6, 2, 3, 3, 1, 1, 1, 1);
    assert_non_null(g);
    assert_int_equal(g->outputs[0]->n_reduce, 2); /* ry, rx */
    assert_shape(find(g, "pad"), 4, (int64_t[]){1, 1, 8, 8});
}

static void test_conv2d_rejects_bad_arguments(void **state)
{
    assert_null(weft_op_conv2d(*state, 1, 3, 32, 32, 16, 7, 7, 0, 4, 3, 3));
    assert_error_mentions("conv2d", "stride_h=0");
    assert_null(weft_op_conv2d(*state, 1, 3, 4, 4, 16, 7, 7, 1, 1, 1, 1));
    assert_error_mentions("conv2d", "larger than");
    assert_null(weft_op_conv2d(*state, 1, 3, 8, 8, 16, 3, 3, 1, 1, -1, 0));
    assert_error_mentions("conv2d", "pad_h=-1");
    assert_null(weft_op_conv2d(*state, 1, 0, 8, 8, 16, 3, 3, 1, 1, 0, 0));
    assert_error_mentions("conv2d", "C=0");
}

static void test_softmax_stages(void **state)
{
    weft_te_func *f = weft_op_softmax(*state, 6, 10);
    assert_non_null(f);
    assert_string_equal(f->name, "softmax");
    assert_int_equal(f->n_tensors, 5); /* X, mx, e, s, Y */
    const char *const order[] = {"X", "mx", "e", "s", "Y"};
    for (int i = 0; i < 5; i++) assert_string_equal(f->tensors[i]->name, order[i]);
    assert_shape(find(f, "mx"), 1, (int64_t[]){6});
    assert_shape(f->outputs[0], 2, (int64_t[]){6, 10});
    assert_int_equal(find(f, "mx")->reduce, WEFT_REDUCE_MAX);
    assert_axes(find(f, "mx"), (const char *const[]){"i"}, 1, (const char *const[]){"k"});
    assert_axes(find(f, "s"), (const char *const[]){"i"}, 1, (const char *const[]){"k"});
    assert_axes(f->outputs[0], (const char *const[]){"i", "j"}, 0, NULL);
}

static void test_layer_norm_stages(void **state)
{
    weft_te_func *f = weft_op_layer_norm(*state, 4, 32, 1e-5f);
    assert_non_null(f);
    assert_string_equal(f->name, "layer_norm");
    assert_int_equal(f->n_tensors, 8); /* X, sum, mean, sqsum, rstd, gamma, beta, Y */
    assert_int_equal(f->n_inputs, 3);
    assert_string_equal(f->inputs[1]->name, "gamma");
    assert_string_equal(f->inputs[2]->name, "beta");
    assert_shape(f->outputs[0], 2, (int64_t[]){4, 32});
    assert_shape(find(f, "mean"), 1, (int64_t[]){4});
    assert_int_equal(weft_tensor_pattern(find(f, "sum")), WEFT_PATTERN_REDUCTION);
    assert_int_equal(weft_tensor_pattern(find(f, "sqsum")), WEFT_PATTERN_REDUCTION);
    assert_int_equal(weft_tensor_pattern(f->outputs[0]), WEFT_PATTERN_ELEMWISE);
}

static void test_layer_norm_rejects_negative_eps(void **state)
{
    assert_null(weft_op_layer_norm(*state, 4, 32, -1.0f));
    assert_error_mentions("layer_norm", "eps");
}

static void test_reduce_sum_is_pure_reduction(void **state)
{
    weft_te_func *f = weft_op_reduce_sum(*state, 7, 9);
    assert_non_null(f);
    assert_string_equal(f->name, "reduce_sum");
    assert_int_equal(f->n_tensors, 2);
    const weft_tensor *R = f->outputs[0];
    assert_string_equal(R->name, "R");
    assert_shape(R, 1, (int64_t[]){7});
    assert_axes(R, (const char *const[]){"i"}, 1, (const char *const[]){"k"});
    assert_int_equal(weft_tensor_pattern(R), WEFT_PATTERN_REDUCTION);
    assert_true(weft_te_func_flops(f) == 7.0 * 9);
}

static void test_elementwise_every_kind_builds(void **state)
{
    const int64_t shape[] = {2, 3, 4};
    for (int k = 0; k < WEFT_ELEMENTWISE_COUNT; k++) {
        weft_te_func *f = weft_op_elementwise(*state, (weft_elementwise_kind)k, 3, shape);
        assert_non_null(f);
        assert_string_equal(f->name, weft_elementwise_names[k]);
        assert_int_equal(f->n_inputs, weft_elementwise_arity((weft_elementwise_kind)k));
        assert_string_equal(f->inputs[0]->name, "X");
        if (f->n_inputs == 2) assert_string_equal(f->inputs[1]->name, "Y");
        const weft_tensor *Z = f->outputs[0];
        assert_string_equal(Z->name, "Z");
        assert_shape(Z, 3, shape);
        assert_axes(Z, (const char *const[]){"ax0", "ax1", "ax2"}, 0, NULL);
        assert_int_equal(weft_tensor_pattern(Z), WEFT_PATTERN_ELEMWISE);
    }
}

static void test_elementwise_gelu_uses_erf(void **state)
{
    weft_te_func *f = weft_op_elementwise(*state, WEFT_ELEMENTWISE_GELU, 1, (int64_t[]){5});
    assert_non_null(f);
    /* 0.5*x*(1 + erf(x*c)): mul, mul, add, erf, mul = 5 ops per element */
    assert_true(weft_te_func_flops(f) == 5.0 * 5);
    const weft_expr *b = f->outputs[0]->body;
    assert_int_equal(b->kind, WEFT_EXPR_MUL);
    const weft_expr *sum = weft_expr_b(b);
    assert_int_equal(sum->kind, WEFT_EXPR_ADD);
    const weft_expr *erf = weft_expr_a(sum)->kind == WEFT_EXPR_CALL ? weft_expr_a(sum) : weft_expr_b(sum);
    assert_int_equal(weft_expr_call_fn(erf), WEFT_INTRIN_ERF);
}

static void test_elementwise_rejects_bad_shapes(void **state)
{
    assert_null(weft_op_elementwise(*state, WEFT_ELEMENTWISE_ADD, 0, (int64_t[]){1}));
    assert_error_mentions("add", "ndim=0");
    assert_null(weft_op_elementwise(*state, WEFT_ELEMENTWISE_RELU, 2, (int64_t[]){3, 0}));
    assert_error_mentions("relu", "D1=0");
    assert_null(weft_op_elementwise(*state, WEFT_ELEMENTWISE_COUNT, 1, (int64_t[]){3}));
    assert_error_mentions("elementwise", NULL);
}

static void test_build_dispatches_by_name(void **state)
{
    weft_te_func *f = NULL;
    assert_int_equal(weft_op_build(*state, "conv2d", 9, (int64_t[]){1, 3, 32, 32, 16, 7, 7, 4, 3}, &f), WEFT_OK);
    assert_non_null(f);
    assert_string_equal(f->name, "conv2d");
    assert_shape(f->outputs[0], 4, (int64_t[]){1, 16, 8, 8});
    assert_int_equal(weft_op_build(*state, "matmul", 3, (int64_t[]){4, 5, 6}, &f), WEFT_OK);
    assert_shape(f->outputs[0], 2, (int64_t[]){4, 5});
    assert_int_equal(weft_op_build(*state, "layer_norm", 2, (int64_t[]){4, 5}, &f), WEFT_OK);
    assert_string_equal(f->name, "layer_norm");
    assert_int_equal(weft_op_build(*state, "gelu", 4, (int64_t[]){2, 3, 4, 5}, &f), WEFT_OK);
    assert_string_equal(f->name, "gelu");
    assert_shape(f->outputs[0], 4, (int64_t[]){2, 3, 4, 5});
    const char *names[] = {"dense_bias_relu", "softmax", "reduce_sum", "add", "relu"};
    const int counts[] = {3, 2, 2, 2, 2};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(weft_op_build(*state, names[i], counts[i], (int64_t[]){3, 4, 5}, &f), WEFT_OK);
        assert_string_equal(f->name, names[i]);
    }
}

static void test_build_rejects_unknown_op(void **state)
{
    weft_te_func *f = (weft_te_func *)1;
    assert_int_equal(weft_op_build(*state, "frobnicate", 2, (int64_t[]){4, 4}, &f), WEFT_ERR_INVALID_ARG);
    assert_null(f);
    assert_error_mentions("frobnicate", "matmul"); /* the message lists the known ops */
}

static void test_build_rejects_wrong_shape_count(void **state)
{
    weft_te_func *f = NULL;
    assert_int_equal(weft_op_build(*state, "matmul", 2, (int64_t[]){4, 4}, &f), WEFT_ERR_INVALID_ARG);
    assert_null(f);
    assert_error_mentions("matmul", "M,N,K");
    assert_int_equal(weft_op_build(*state, "conv2d", 4, (int64_t[]){1, 3, 8, 8}, &f), WEFT_ERR_INVALID_ARG);
    assert_error_mentions("conv2d", "KH,KW,stride,pad");
    assert_int_equal(weft_op_build(*state, "relu", 0, NULL, &f), WEFT_ERR_INVALID_ARG);
    assert_error_mentions("relu", "shape values");
}

static void test_build_rejects_zero_size(void **state)
{
    weft_te_func *f = NULL;
    assert_int_equal(weft_op_build(*state, "softmax", 2, (int64_t[]){0, 4}, &f), WEFT_ERR_INVALID_ARG);
    assert_null(f);
    assert_error_mentions("softmax", "M=0");
    assert_int_equal(weft_op_build(*state, "conv2d", 9, (int64_t[]){1, 3, 8, 8, 4, 3, 3, 0, 1}, &f),
                     WEFT_ERR_INVALID_ARG);
    assert_error_mentions("conv2d", "stride");
}

static void test_usage_lists_every_op(void **state)
{
    const char *u = weft_op_usage();
    const char *fixed[] = {"matmul", "dense_bias_relu", "conv2d", "softmax", "layer_norm", "reduce_sum"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) assert_non_null(strstr(u, fixed[i]));
    for (int k = 0; k < WEFT_ELEMENTWISE_COUNT; k++) assert_non_null(strstr(u, weft_elementwise_names[k]));
    assert_non_null(strstr(u, "N,C,H,W,F,KH,KW,stride,pad"));
}

static void test_pattern_of_standard_stages(void **state)
{
    weft_te_func *mm = weft_op_matmul(*state, 8, 8, 8);
    assert_int_equal(weft_tensor_pattern(mm->outputs[0]), WEFT_PATTERN_OUT_REDUCTION_REUSE);
    weft_te_func *sm = weft_op_softmax(*state, 8, 8);
    assert_int_equal(weft_tensor_pattern(find(sm, "e")), WEFT_PATTERN_ELEMWISE);
    assert_int_equal(weft_tensor_pattern(find(sm, "mx")), WEFT_PATTERN_REDUCTION);
    assert_int_equal(weft_tensor_pattern(find(sm, "s")), WEFT_PATTERN_REDUCTION);
    assert_int_equal(weft_tensor_pattern(find(sm, "Y")), WEFT_PATTERN_ELEMWISE);
    weft_te_func *cv = weft_op_conv2d(*state, 1, 3, 16, 16, 4, 3, 3, 1, 1, 1, 1);
    assert_int_equal(weft_tensor_pattern(find(cv, "pad")), WEFT_PATTERN_INJECTIVE);
    assert_int_equal(weft_tensor_pattern(find(cv, "Y")), WEFT_PATTERN_OUT_REDUCTION_REUSE);
    assert_int_equal(weft_tensor_pattern(find(cv, "X")), WEFT_PATTERN_ELEMWISE);
    assert_string_equal(weft_op_pattern_names[WEFT_PATTERN_OUT_REDUCTION_REUSE], "out_reduction_reuse");
}

static void test_pattern_transpose_is_injective(void **state)
{
    weft_arena *a = *state;
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 2, (int64_t[]){3, 4});
    weft_tensor *T = weft_te_compute(a, "T", 2, (int64_t[]){4, 3}, (const char *const[]){"i", "j"});
    const weft_expr *i = weft_te_axis(T, 0), *j = weft_te_axis(T, 1);
    weft_te_set_body(T, WEFT_REDUCE_NONE, weft_te_at(a, X, j, i));
    assert_int_equal(weft_tensor_pattern(T), WEFT_PATTERN_INJECTIVE);
    /* a fixed row is a broadcast, still elementwise */
    weft_tensor *R = weft_te_compute(a, "R", 1, (int64_t[]){4}, (const char *const[]){"j"});
    weft_te_set_body(R, WEFT_REDUCE_NONE, weft_te_at(a, X, weft_i64(a, 0), weft_te_axis(R, 0)));
    assert_int_equal(weft_tensor_pattern(R), WEFT_PATTERN_ELEMWISE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_matmul_builds_named_stages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_flops_are_2mnk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_rejects_zero_k, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dense_bias_relu_has_product_and_epilogue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conv2d_padded_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conv2d_without_padding_reads_x, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conv2d_pads_one_direction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conv2d_drops_taps_that_read_only_padding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conv2d_rejects_bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_softmax_stages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_layer_norm_stages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_layer_norm_rejects_negative_eps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_sum_is_pure_reduction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elementwise_every_kind_builds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elementwise_gelu_uses_erf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elementwise_rejects_bad_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_build_dispatches_by_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_build_rejects_unknown_op, setup, teardown),
        cmocka_unit_test_setup_teardown(test_build_rejects_wrong_shape_count, setup, teardown),
        cmocka_unit_test_setup_teardown(test_build_rejects_zero_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_lists_every_op, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pattern_of_standard_stages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pattern_transpose_is_injective, setup, teardown),
    };
    return cmocka_run_group_tests_name("ops", tests, NULL, NULL);
}
