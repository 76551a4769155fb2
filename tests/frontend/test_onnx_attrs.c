/* ONNX import of the attribute and input forms exported models use: a TENSOR attribute with one
 * element (ConstantOfShape's `value`: float32 or int64) is read as that number, a larger or
 * differently typed one is refused naming the node and the attribute; graph inputs may be
 * INT64 (token ids), and an input of another type is refused naming it. Models are packed
 * with protobuf-c here and loaded from memory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_test_util.h"
#include "weft/graph.h"
#include "weft/onnx.h"

/* input "x" of elem_type [2]; initializer "shape" int64 {2, 3}; node "cos":
 * ConstantOfShape(shape) -> y with attribute value = `value` (or none); output y. */
static weft_status load(int32_t in_type, Onnx__TensorProto *value, weft_graph **g)
{
    Onnx__TensorShapeProto__Dimension d0 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    d0.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    d0.dim_value = 2;
    Onnx__TensorShapeProto__Dimension *dims[] = {&d0};
    Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
    shape.n_dim = 1;
    shape.dim = dims;
    Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
    tt.has_elem_type = 1;
    tt.elem_type = in_type;
    tt.shape = &shape;
    Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
    tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp.tensor_type = &tt;
    Onnx__ValueInfoProto in = ONNX__VALUE_INFO_PROTO__INIT, out = ONNX__VALUE_INFO_PROTO__INIT;
    in.name = "x";
    in.type = &tp;
    out.name = "y";
    Onnx__ValueInfoProto *ins[] = {&in}, *outs[] = {&out};

    int64_t sdims[1] = {2}, sval[2] = {2, 3};
    Onnx__TensorProto init = ONNX__TENSOR_PROTO__INIT;
    init.name = "shape";
    init.has_data_type = 1;
    init.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    init.n_dims = 1;
    init.dims = sdims;
    init.n_int64_data = 2;
    init.int64_data = sval;
    Onnx__TensorProto *inits[] = {&init};

    Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT;
    a.name = "value";
    a.has_type = 1;
    a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    a.t = value;
    Onnx__AttributeProto *attrs[] = {&a};
    char *node_in[] = {"shape"}, *node_out[] = {"y"};
    Onnx__NodeProto node = ONNX__NODE_PROTO__INIT;
    node.op_type = "ConstantOfShape";
    node.name = "cos";
    node.n_input = 1;
    node.input = node_in;
    node.n_output = 1;
    node.output = node_out;
    node.n_attribute = value ? 1 : 0;
    node.attribute = attrs;
    Onnx__NodeProto *nodes[] = {&node};

    Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
    gp.name = "attrs";
    gp.n_node = 1;
    gp.node = nodes;
    gp.n_input = 1;
    gp.input = ins;
    gp.n_output = 1;
    gp.output = outs;
    gp.n_initializer = 1;
    gp.initializer = inits;
    return onnx_pack_load(&gp, 13, g);
}

static Onnx__TensorProto scalar_tensor(int32_t type, size_t n, int64_t *dims)
{
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    t.has_data_type = 1;
    t.data_type = type;
    t.n_dims = 1;
    t.dims = dims;
    dims[0] = (int64_t)n;
    return t;
}

static void test_tensor_attribute_one_element(void **state)
{
    (void)state;
    int64_t dims[1];
    float f = 2.5f;
    Onnx__TensorProto tf = scalar_tensor(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, dims);
    tf.n_float_data = 1;
    tf.float_data = &f;
    weft_graph *g = NULL;
    assert_int_equal(load(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &tf, &g), WEFT_OK);
    weft_value y = weft_graph_output(g, 0);
    int64_t shape[8];
    assert_int_equal(weft_graph_value_shape(g, y, shape), 2);
    assert_true(shape[0] == 2 && shape[1] == 3);
    assert_int_equal(weft_graph_value_type(g, y), WEFT_TYPE_FLOAT32);
    const float *data = weft_graph_value_data(g, y);
    if (data)
        for (int i = 0; i < 6; i++) assert_true(data[i] == 2.5f);
    weft_graph_destroy(g);

    int64_t v = -7;
    Onnx__TensorProto ti = scalar_tensor(ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, dims);
    ti.n_int64_data = 1;
    ti.int64_data = &v;
    assert_int_equal(load(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &ti, &g), WEFT_OK);
    y = weft_graph_output(g, 0);
    assert_int_equal(weft_graph_value_type(g, y), WEFT_TYPE_INT64);
    const int64_t *idata = weft_graph_value_data(g, y);
    if (idata)
        for (int i = 0; i < 6; i++) assert_true(idata[i] == -7);
    weft_graph_destroy(g);
}

static void test_tensor_attribute_refused(void **state)
{
    (void)state;
    int64_t dims[1];
    float two[2] = {1, 2};
    Onnx__TensorProto t2 = scalar_tensor(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dims);
    t2.n_float_data = 2;
    t2.float_data = two;
    weft_graph *g = NULL;
    expect_refusal(load(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &t2, &g), WEFT_ERR_UNSUPPORTED,
           (const char *const[]){"node 'cos' (ConstantOfShape)", "attribute 'value'", "2 elements", NULL});
    int32_t i32 = 1;
    Onnx__TensorProto t3 = scalar_tensor(ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 1, dims);
    t3.n_int32_data = 1;
    t3.int32_data = &i32;
    expect_refusal(load(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &t3, &g), WEFT_ERR_UNSUPPORTED,
           (const char *const[]){"node 'cos' (ConstantOfShape)", "attribute 'value'", "INT32", NULL});
}

static void test_input_types(void **state)
{
    (void)state;
    weft_graph *g = NULL;
    assert_int_equal(load(ONNX__TENSOR_PROTO__DATA_TYPE__INT64, NULL, &g), WEFT_OK);
    assert_int_equal(weft_graph_value_type(g, weft_graph_input(g, 0)), WEFT_TYPE_INT64);
    weft_graph_destroy(g);
    expect_refusal(load(ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, NULL, &g), WEFT_ERR_UNSUPPORTED,
           (const char *const[]){"input 'x'", "DOUBLE", "FLOAT, INT64, INT32 or BOOL", NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_attribute_one_element),
        cmocka_unit_test(test_tensor_attribute_refused),
        cmocka_unit_test(test_input_types),
    };
    return cmocka_run_group_tests_name("frontend_onnx_attrs", tests, NULL, NULL);
}
