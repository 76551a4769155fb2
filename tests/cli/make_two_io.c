/* Writes a tiny ONNX model with two inputs and two outputs for the weft command's tests, with
 * input files and the exact expected outputs:
 *
 *   a: float32 [2, 3], b: float32 [1, 3] (broadcast over a's rows)
 *   sum = Add(a, b), diff = Sub(a, b): float32 [2, 3] each
 *
 * Usage: make_two_io DIR  ->  DIR/two_io.onnx DIR/a.bin DIR/b.bin DIR/sum.expected.bin
 *                             DIR/diff.expected.bin
 * The values are small multiples of 1/4, so every sum and difference is exact in float32 and
 * weft's outputs must equal the expected files byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

static int write_file(const char *dir, const char *name, const void *data, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "make_two_io: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

typedef struct value_info {
    Onnx__TensorShapeProto__Dimension d[2], *dims[2];
    Onnx__TensorShapeProto shape;
    Onnx__TypeProto__Tensor tensor;
    Onnx__TypeProto type;
    Onnx__ValueInfoProto info;
} value_info;

/* A float32 [d0, d1] value named name (vi must stay in place while the model is packed). */
static Onnx__ValueInfoProto *value(value_info *vi, const char *name, int64_t d0, int64_t d1)
{
    int64_t ext[2] = {d0, d1};
    for (int i = 0; i < 2; i++) {
        onnx__tensor_shape_proto__dimension__init(&vi->d[i]);
        vi->d[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        vi->d[i].dim_value = ext[i];
        vi->dims[i] = &vi->d[i];
    }
    onnx__tensor_shape_proto__init(&vi->shape);
    vi->shape.n_dim = 2;
    vi->shape.dim = vi->dims;
    onnx__type_proto__tensor__init(&vi->tensor);
    vi->tensor.has_elem_type = 1;
    vi->tensor.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    vi->tensor.shape = &vi->shape;
    onnx__type_proto__init(&vi->type);
    vi->type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    vi->type.tensor_type = &vi->tensor;
    onnx__value_info_proto__init(&vi->info);
    vi->info.name = (char *)name;
    vi->info.type = &vi->type;
    return &vi->info;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_two_io DIR\n");
        return 2;
    }
    value_info vi[4];
    Onnx__ValueInfoProto *ins[] = {value(&vi[0], "a", 2, 3), value(&vi[1], "b", 1, 3)};
    Onnx__ValueInfoProto *outs[] = {value(&vi[2], "sum", 2, 3), value(&vi[3], "diff", 2, 3)};
    char *ab[] = {"a", "b"}, *sum_out[] = {"sum"}, *diff_out[] = {"diff"};
    Onnx__NodeProto add, sub;
    onnx__node_proto__init(&add);
    add.op_type = "Add";
    add.name = "add0";
    add.n_input = 2;
    add.input = ab;
    add.n_output = 1;
    add.output = sum_out;
    onnx__node_proto__init(&sub);
    sub.op_type = "Sub";
    sub.name = "sub0";
    sub.n_input = 2;
    sub.input = ab;
    sub.n_output = 1;
    sub.output = diff_out;
    Onnx__NodeProto *nodes[] = {&add, &sub};

    Onnx__GraphProto g;
    onnx__graph_proto__init(&g);
    g.name = "two_io";
    g.n_node = 2;
    g.node = nodes;
    g.n_input = 2;
    g.input = ins;
    g.n_output = 2;
    g.output = outs;
    Onnx__OperatorSetIdProto opset;
    onnx__operator_set_id_proto__init(&opset);
    opset.domain = "";
    opset.has_version = 1;
    opset.version = 13;
    Onnx__OperatorSetIdProto *opsets[] = {&opset};
    Onnx__ModelProto m;
    onnx__model_proto__init(&m);
    m.has_ir_version = 1;
    m.ir_version = 7;
    m.producer_name = "weft-test";
    m.graph = &g;
    m.n_opset_import = 1;
    m.opset_import = opsets;

    size_t len = onnx__model_proto__get_packed_size(&m);
    uint8_t *buf = malloc(len);
    if (!buf || onnx__model_proto__pack(&m, buf) != len) {
        fprintf(stderr, "make_two_io: cannot pack the model\n");
        free(buf);
        return 1;
    }
    float a[6], b[3], sum[6], diff[6];
    for (int j = 0; j < 3; j++) b[j] = 0.25f * (float)j - 1.25f;
    for (int i = 0; i < 6; i++) {
        a[i] = 0.5f * (float)i + 1.0f;
        sum[i] = a[i] + b[i % 3];
        diff[i] = a[i] - b[i % 3];
    }
    int rc = write_file(argv[1], "two_io.onnx", buf, len);
    rc |= write_file(argv[1], "a.bin", a, sizeof a);
    rc |= write_file(argv[1], "b.bin", b, sizeof b);
    rc |= write_file(argv[1], "sum.expected.bin", sum, sizeof sum);
    rc |= write_file(argv[1], "diff.expected.bin", diff, sizeof diff);
    free(buf);
    return rc;
}
