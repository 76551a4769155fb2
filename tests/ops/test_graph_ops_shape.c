/* Graph operator registry, part 2: shape and index ops (Transpose, Slice, Gather, Concat,
 * Split, Reshape, Flatten, Squeeze, Unsqueeze, Identity, Shape, Size, ConstantOfShape, Where,
 * Cast, Expand) and their errors. Each op is added through the public graph API, run alone in
 * the interpreter and compared with hand-computed values. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "graph_ops_harness.h"

#define F32 WEFT_TYPE_FLOAT32
#define I64 WEFT_TYPE_INT64

/* 0, 1, 2, ... as floats, so a remapped element names its source index. */
static float *iota(fx *f, int64_t n)
{
    float *p = fx_alloc(f, sizeof *p * (size_t)n);
    for (int64_t i = 0; i < n; i++) p[i] = (float)i;
    return p;
}

static void check_exact(const float *got, const double *ref, int64_t n) { fx_check_f32(got, ref, n, 0); }

static void test_transpose_perm_and_default(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 3, SHAPE(2, 3, 4));
    float *X = iota(f, 24);
    weft_value y = fx_op(f, "Transpose", "tr", 1, &x, 1, ATTRS(attr_is("perm", 3, SHAPE(1, 2, 0))));
    fx_assert_shape(f, y, 3, SHAPE(3, 4, 2));
    float *Y = fx_run1(f, (const void *[]){X});
    double ref[24];
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 2; i++) ref[(j * 4 + k) * 2 + i] = (i * 3 + j) * 4 + k;
    check_exact(Y, ref, 24);
    assert_int_equal(weft_tensor_pattern(f->outs[0]), WEFT_PATTERN_INJECTIVE);

    y = fx_op(f, "Transpose", "tr2", 1, &x, 0, NULL);
    fx_assert_shape(f, y, 3, SHAPE(4, 3, 2));
    Y = fx_run1(f, (const void *[]){X});
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 2; i++) ref[(k * 3 + j) * 2 + i] = (i * 3 + j) * 4 + k;
    check_exact(Y, ref, 24);
}

static void test_slice_negative_clamped_and_steps(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 2, SHAPE(5, 6));
    float *X = iota(f, 30);
    /* axis 1: start -4 (=2), end 1000 (clamped to 6), step 2 -> 2, 4; axis 0: start -1 (=4), end -1000
     * (clamped to -1), step -2 -> 4, 2, 0 */
    weft_value st = fx_const_i64(f, "st", 2, SHAPE(-4, -1)), en = fx_const_i64(f, "en", 2, SHAPE(1000, -1000));
    weft_value ax = fx_const_i64(f, "ax", 2, SHAPE(1, 0)), sp = fx_const_i64(f, "sp", 2, SHAPE(2, -2));
    weft_value y = fx_op(f, "Slice", "sl", 5, VALS(x, st, en, ax, sp), 0, NULL);
    fx_assert_shape(f, y, 2, SHAPE(3, 2));
    float *Y = fx_run1(f, (const void *[]){X, NULL, NULL, NULL, NULL});
    const double ref[6] = {4 * 6 + 2, 4 * 6 + 4, 2 * 6 + 2, 2 * 6 + 4, 0 * 6 + 2, 0 * 6 + 4};
    check_exact(Y, ref, 6);

    /* no axes/steps: starts/ends per leading dim */
    weft_value st2 = fx_const_i64(f, "st2", 1, SHAPE(1)), en2 = fx_const_i64(f, "en2", 1, SHAPE(3));
    y = fx_op(f, "Slice", "sl2", 3, VALS(x, st2, en2), 0, NULL);
    fx_assert_shape(f, y, 2, SHAPE(2, 6));
    Y = fx_run1(f, (const void *[]){X, NULL, NULL});
    double ref2[12];
    for (int i = 0; i < 12; i++) ref2[i] = 6 + i;
    check_exact(Y, ref2, 12);
}

static void test_gather_axis0_and_axis1(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 2, SHAPE(4, 3));
    float *X = iota(f, 12);
    double ref[12];
    /* axis 0, scattered constant indices with a negative one */
    weft_value i0 = fx_const_i64(f, "i0", 3, SHAPE(2, -4, 3));
    weft_value y = fx_op(f, "Gather", "g0", 2, VALS(x, i0), 0, NULL);
    fx_assert_shape(f, y, 2, SHAPE(3, 3));
    float *Y = fx_run1(f, (const void *[]){X, NULL});
    const int rows[3] = {2, 0, 3};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) ref[r * 3 + c] = rows[r] * 3 + c;
    check_exact(Y, ref, 9);

    /* axis 1, a scalar index: drops the dim */
    weft_value s;
    assert_int_equal(weft_graph_add_constant(f->g, "s", I64, 0, NULL, (const int64_t[]){-1}, &s), WEFT_OK);
    y = fx_op(f, "Gather", "g1", 2, VALS(x, s), 1, ATTRS(attr_i("axis", 1)));
    fx_assert_shape(f, y, 1, SHAPE(4));
    Y = fx_run1(f, (const void *[]){X, NULL});
    for (int r = 0; r < 4; r++) ref[r] = r * 3 + 2;
    check_exact(Y, ref, 4);

    /* axis 1, 2-D indices 0,1,2,2 (not a progression: a select chain) -> [4, 2, 2] */
    weft_value i2;
    assert_int_equal(weft_graph_add_constant(f->g, "i2", I64, 2, SHAPE(2, 2), (const int64_t[]){0, 1, 2, 2}, &i2),
                     WEFT_OK);
    y = fx_op(f, "Gather", "g2", 2, VALS(x, i2), 1, ATTRS(attr_i("axis", 1)));
    fx_assert_shape(f, y, 3, SHAPE(4, 2, 2));
    Y = fx_run1(f, (const void *[]){X, NULL});
    const int cols[4] = {0, 1, 2, 2};
    double ref3[16];
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 4; j++) ref3[r * 4 + j] = r * 3 + cols[j];
    check_exact(Y, ref3, 16);

    /* axis 0, a progression 1, 2, 3: an affine index */
    weft_value i3 = fx_const_i64(f, "i3", 3, SHAPE(1, 2, 3));
    y = fx_op(f, "Gather", "g3", 2, VALS(x, i3), 0, NULL);
    Y = fx_run1(f, (const void *[]){X, NULL});
    for (int i = 0; i < 9; i++) ref[i] = 3 + i;
    check_exact(Y, ref, 9);
}

static void test_gather_runtime_indices(void **state)
{
    fx *f = *state;
    weft_value emb = fx_input(f, "emb", F32, 2, SHAPE(5, 2)), ids = fx_input(f, "ids", I64, 2, SHAPE(2, 3));
    weft_value y = fx_op(f, "Gather", "embed", 2, VALS(emb, ids), 0, NULL);
    fx_assert_shape(f, y, 3, SHAPE(2, 3, 2));
    float *E = iota(f, 10);
    int64_t I[6] = {4, 0, -1, 2, 2, 1};
    float *Y = fx_run1(f, (const void *[]){E, I});
    double ref[12];
    for (int t = 0; t < 6; t++) {
        int64_t r = I[t] < 0 ? I[t] + 5 : I[t];
        ref[t * 2] = (double)(r * 2), ref[t * 2 + 1] = (double)(r * 2 + 1);
    }
    check_exact(Y, ref, 12);
}

static void test_concat_three_inputs_and_int64(void **state)
{
    fx *f = *state;
    weft_value a = fx_input(f, "a", F32, 2, SHAPE(2, 1)), b = fx_input(f, "b", F32, 2, SHAPE(2, 3));
    weft_value c = fx_input(f, "c", F32, 2, SHAPE(2, 2));
    weft_value y = fx_op(f, "Concat", "cat", 3, VALS(a, b, c), 1, ATTRS(attr_i("axis", -1)));
    fx_assert_shape(f, y, 2, SHAPE(2, 6));
    float A[2] = {-1, -2}, B[6] = {10, 11, 12, 13, 14, 15}, C[4] = {100, 101, 102, 103};
    float *Y = fx_run1(f, (const void *[]){A, B, C});
    const double ref[12] = {-1, 10, 11, 12, 100, 101, -2, 13, 14, 15, 102, 103};
    check_exact(Y, ref, 12);

    /* shape arithmetic: concat of int64 vectors */
    weft_value p = fx_const_i64(f, "p", 1, SHAPE(7)), q = fx_const_i64(f, "q", 2, SHAPE(-1, 5));
    y = fx_op(f, "Concat", "cat2", 2, VALS(p, q), 1, ATTRS(attr_i("axis", 0)));
    int64_t *Yi = fx_run1(f, (const void *[]){NULL, NULL});
    fx_check_i64(Yi, (const int64_t[]){7, -1, 5}, 3);
}

static void test_split_input_attr_and_equal(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 2, SHAPE(2, 6));
    float *X = iota(f, 12);
    weft_value outs[3];
    weft_value sp = fx_const_i64(f, "sp", 3, SHAPE(1, 3, 2));
    assert_int_equal(weft_graph_add_op(f->g, "Split", "split1", 2, VALS(x, sp), 1, ATTRS(attr_i("axis", 1)), 3, outs),
                     WEFT_OK);
    fx_assert_shape(f, outs[0], 2, SHAPE(2, 1));
    fx_assert_shape(f, outs[1], 2, SHAPE(2, 3));
    fx_assert_shape(f, outs[2], 2, SHAPE(2, 2));
    void *Y[3];
    fx_run_last(f, (const void *[]){X, NULL}, Y);
    check_exact(Y[0], (const double[]){0, 6}, 2);
    check_exact(Y[1], (const double[]){1, 2, 3, 7, 8, 9}, 6);
    check_exact(Y[2], (const double[]){4, 5, 10, 11}, 4);
    assert_string_equal(f->outs[0]->name, "y");
    assert_string_equal(f->outs[2]->name, "y.2");

    /* equal parts over axis 0 */
    assert_int_equal(weft_graph_add_op(f->g, "Split", "split2", 1, &x, 0, NULL, 2, outs), WEFT_OK);
    fx_assert_shape(f, outs[1], 2, SHAPE(1, 6));
    fx_run_last(f, (const void *[]){X}, Y);
    check_exact(Y[1], (const double[]){6, 7, 8, 9, 10, 11}, 6);

    /* attribute split (older opsets) */
    assert_int_equal(weft_graph_add_op(f->g, "Split", "split3", 1, &x, 2,
                                       ATTRS(attr_i("axis", 1), attr_is("split", 2, SHAPE(4, 2))), 2, outs),
                     WEFT_OK);
    fx_assert_shape(f, outs[0], 2, SHAPE(2, 4));
}

static void test_reshape_zero_and_minus_one(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 3, SHAPE(2, 3, 4));
    weft_value s = fx_const_i64(f, "s", 3, SHAPE(0, -1, 2));
    weft_value y = fx_op(f, "Reshape", "rs", 2, VALS(x, s), 0, NULL);
    fx_assert_shape(f, y, 3, SHAPE(2, 6, 2));
    float *X = iota(f, 24);
    float *Y = fx_run1(f, (const void *[]){X, NULL});
    double ref[24];
    for (int i = 0; i < 24; i++) ref[i] = i;
    check_exact(Y, ref, 24);

    y = fx_op(f, "Flatten", "fl", 1, &x, 1, ATTRS(attr_i("axis", 2)));
    fx_assert_shape(f, y, 2, SHAPE(6, 4));
    Y = fx_run1(f, (const void *[]){X});
    check_exact(Y, ref, 24);
    y = fx_op(f, "Flatten", "fl0", 1, &x, 1, ATTRS(attr_i("axis", 0)));
    fx_assert_shape(f, y, 2, SHAPE(1, 24));
}

static void test_squeeze_unsqueeze_identity(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 4, SHAPE(1, 3, 1, 2));
    float *X = iota(f, 6);
    double ref[6] = {0, 1, 2, 3, 4, 5};
    weft_value ax = fx_const_i64(f, "ax", 1, SHAPE(-2));
    weft_value y = fx_op(f, "Squeeze", "sq", 2, VALS(x, ax), 0, NULL);
    fx_assert_shape(f, y, 3, SHAPE(1, 3, 2));
    check_exact(fx_run1(f, (const void *[]){X, NULL}), ref, 6);
    y = fx_op(f, "Squeeze", "sq_all", 1, &x, 0, NULL);
    fx_assert_shape(f, y, 2, SHAPE(3, 2));
    check_exact(fx_run1(f, (const void *[]){X}), ref, 6);
    assert_int_equal(weft_tensor_pattern(f->outs[0]), WEFT_PATTERN_ELEMWISE); /* direct read, no div/mod */

    weft_value ua = fx_const_i64(f, "ua", 2, SHAPE(0, -1));
    y = fx_op(f, "Unsqueeze", "unsq", 2, VALS(x, ua), 0, NULL);
    fx_assert_shape(f, y, 6, SHAPE(1, 1, 3, 1, 2, 1));
    check_exact(fx_run1(f, (const void *[]){X, NULL}), ref, 6);
    y = fx_op(f, "Unsqueeze", "unsq_attr", 1, &x, 1, ATTRS(attr_is("axes", 1, SHAPE(1))));
    fx_assert_shape(f, y, 5, SHAPE(1, 1, 3, 1, 2));

    y = fx_op(f, "Identity", "id", 1, &x, 0, NULL);
    fx_assert_shape(f, y, 4, SHAPE(1, 3, 1, 2));
    check_exact(fx_run1(f, (const void *[]){X}), ref, 6);
    y = fx_op(f, "Dropout", "drop", 1, &x, 1, ATTRS(attr_f("ratio", 0.1)));
    fx_assert_shape(f, y, 4, SHAPE(1, 3, 1, 2));
    assert_true(weft_op_find("Dropout")->alias);
}

static void test_shape_size_constant_of_shape(void **state)
{
    fx *f = *state;
    weft_graph *g = f->g;
    weft_value x = fx_input(f, "x", F32, 3, SHAPE(2, 3, 4));
    weft_value y = fx_op(f, "Shape", "shp", 1, &x, 0, NULL);
    fx_assert_shape(f, y, 1, SHAPE(3));
    assert_int_equal(weft_graph_value_type(g, y), WEFT_TYPE_INT64);
    const weft_gnode *n = &g->nodes[g->n_nodes - 1];
    void *data = NULL;
    assert_int_equal(n->def->eval_static(g, n, 0, &data), WEFT_OK);
    fx_check_i64(data, (const int64_t[]){2, 3, 4}, 3);
    free(data);
    int64_t *Yi = fx_run1(f, (const void *[]){fx_rand(f, 24)}); /* compute agrees */
    fx_check_i64(Yi, (const int64_t[]){2, 3, 4}, 3);

    y = fx_op(f, "Shape", "shp2", 1, &x, 1, ATTRS(attr_i("start", -2)));
    fx_assert_shape(f, y, 1, SHAPE(2));

    y = fx_op(f, "Size", "sz", 1, &x, 0, NULL);
    fx_assert_shape(f, y, 0, NULL);
    n = &g->nodes[g->n_nodes - 1];
    assert_int_equal(n->def->eval_static(g, n, 0, &data), WEFT_OK);
    assert_int_equal(*(int64_t *)data, 24);
    free(data);

    weft_value s = fx_const_i64(f, "s", 2, SHAPE(2, 3));
    y = fx_op(f, "ConstantOfShape", "cos", 1, &s, 1, ATTRS(attr_f("value", 1.5)));
    fx_assert_shape(f, y, 2, SHAPE(2, 3));
    n = &g->nodes[g->n_nodes - 1];
    assert_int_equal(n->def->eval_static(g, n, 0, &data), WEFT_OK);
    assert_true(((float *)data)[5] == 1.5f);
    free(data);
    float *Y = fx_run1(f, (const void *[]){NULL});
    check_exact(Y, (const double[]){1.5, 1.5, 1.5, 1.5, 1.5, 1.5}, 6);
}

static void test_where_cast_expand(void **state)
{
    fx *f = *state;
    weft_value c = fx_input(f, "c", WEFT_TYPE_BOOL, 1, SHAPE(3));
    weft_value a = fx_input(f, "a", F32, 2, SHAPE(2, 3)), b = fx_input(f, "b", F32, 0, NULL);
    weft_value y = fx_op(f, "Where", "wh", 3, VALS(c, a, b), 0, NULL);
    fx_assert_shape(f, y, 2, SHAPE(2, 3));
    uint8_t C[3] = {1, 0, 1};
    float A[6] = {1, 2, 3, 4, 5, 6}, B[1] = {-9};
    float *Y = fx_run1(f, (const void *[]){C, A, B});
    check_exact(Y, (const double[]){1, -9, 3, 4, -9, 6}, 6);

    y = fx_op(f, "Cast", "to_i64", 1, &a, 1, ATTRS(attr_i("to", 7)));
    assert_int_equal(weft_graph_value_type(f->g, y), WEFT_TYPE_INT64);
    float Af[6] = {1.7f, -2.7f, 3, 0, 5, 6};
    int64_t *Yi = fx_run1(f, (const void *[]){Af});
    fx_check_i64(Yi, (const int64_t[]){1, -2, 3, 0, 5, 6}, 6);
    y = fx_op(f, "Cast", "to_bool", 1, &a, 1, ATTRS(attr_i("to", 9)));
    uint8_t *Yb = fx_run1(f, (const void *[]){Af});
    assert_int_equal(Yb[3], 0);
    assert_int_equal(Yb[1], 1);
    y = fx_op(f, "Cast", "from_bool", 1, &c, 1, ATTRS(attr_i("to", 1)));
    check_exact(fx_run1(f, (const void *[]){C}), (const double[]){1, 0, 1}, 3);

    weft_value shp = fx_const_i64(f, "shp", 3, SHAPE(2, 1, 3));
    y = fx_op(f, "Expand", "ex", 2, VALS(a, shp), 0, NULL);
    fx_assert_shape(f, y, 3, SHAPE(2, 2, 3));
    Y = fx_run1(f, (const void *[]){A, NULL});
    check_exact(Y, (const double[]){1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, 12);
}

/* ---- errors ------------------------------------------------------------------------------ */

static void test_error_reshape_shape_not_constant(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 2, SHAPE(2, 3)), s = fx_input(f, "s", I64, 1, SHAPE(2)), y;
    fx_assert_error(weft_graph_add_op(f->g, "Reshape", "x", 2, VALS(x, s), 0, NULL, 1, &y), WEFT_ERR_UNSUPPORTED,
                    "Reshape node 'x': shape input must be a constant", NULL);
    weft_value bad = fx_const_i64(f, "bad", 2, SHAPE(4, -1)), two = fx_const_i64(f, "two", 2, SHAPE(-1, -1));
    fx_assert_error(weft_graph_add_op(f->g, "Reshape", "r2", 2, VALS(x, bad), 0, NULL, 1, &y), WEFT_ERR_SHAPE,
                    "Reshape node 'r2'", "[2,3]");
    fx_assert_error(weft_graph_add_op(f->g, "Reshape", "r3", 2, VALS(x, two), 0, NULL, 1, &y), WEFT_ERR_SHAPE,
                    "Reshape node 'r3'", "more than one -1");
    fx_assert_error(weft_graph_add_op(f->g, "Slice", "sl", 3, VALS(x, s, s), 0, NULL, 1, &y), WEFT_ERR_UNSUPPORTED,
                    "Slice node 'sl'", "starts input must be a constant");
}

static void test_error_shape_ops(void **state)
{
    fx *f = *state;
    weft_value x = fx_input(f, "x", F32, 3, SHAPE(2, 3, 4)), z = fx_input(f, "z", F32, 3, SHAPE(2, 5, 5)), y;
    fx_assert_error(
        weft_graph_add_op(f->g, "Transpose", "tp", 1, &x, 1, ATTRS(attr_is("perm", 3, SHAPE(0, 0, 1))), 1, &y),
        WEFT_ERR_INVALID_ARG, "Transpose node 'tp'", "not a permutation");
    fx_assert_error(weft_graph_add_op(f->g, "Concat", "cc", 2, VALS(x, z), 1, ATTRS(attr_i("axis", 1)), 1, &y),
                    WEFT_ERR_SHAPE, "Concat node 'cc'", "[2,5,5]");
    weft_value ax = fx_const_i64(f, "ax", 1, SHAPE(1));
    fx_assert_error(weft_graph_add_op(f->g, "Squeeze", "sq", 2, VALS(x, ax), 0, NULL, 1, &y), WEFT_ERR_SHAPE,
                    "Squeeze node 'sq'", "not 1");
    weft_value outs[2];
    fx_assert_error(weft_graph_add_op(f->g, "Split", "spl", 1, &x, 2,
                                      ATTRS(attr_i("axis", 2), attr_is("split", 2, SHAPE(1, 2))), 2, outs),
                    WEFT_ERR_SHAPE, "Split node 'spl'", "extent 4");
    weft_value idx = fx_const_i64(f, "idx", 1, SHAPE(3));
    fx_assert_error(weft_graph_add_op(f->g, "Gather", "ga", 2, VALS(x, idx), 0, NULL, 1, &y), WEFT_ERR_INVALID_ARG,
                    "Gather node 'ga'", "index 3 is out of range");
    weft_value zero = fx_const_i64(f, "zero", 1, SHAPE(0));
    fx_assert_error(weft_graph_add_op(f->g, "Slice", "empty", 3, VALS(x, zero, zero), 0, NULL, 1, &y),
                    WEFT_ERR_UNSUPPORTED, "Slice node 'empty'", "empty");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_transpose_perm_and_default, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_slice_negative_clamped_and_steps, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_gather_axis0_and_axis1, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_gather_runtime_indices, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_concat_three_inputs_and_int64, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_split_input_attr_and_equal, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_reshape_zero_and_minus_one, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_squeeze_unsqueeze_identity, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_shape_size_constant_of_shape, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_where_cast_expand, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_error_reshape_shape_not_constant, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_error_shape_ops, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests_name("ops_graph_ops_shape", tests, NULL, NULL);
}
