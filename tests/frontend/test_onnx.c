/* ONNX import: the reference models load with the shapes their .json lists, and bad input of
 * every kind (missing, empty, garbage, truncated files; unsupported ops, types, opsets and
 * domains; wrong tensor sizes; external data that escapes the model folder; symbolic dims)
 * is a clear error, never a crash. Small models are built in the test with the protobuf-c API
 * and written to a mkdtemp folder under /tmp, which is removed at the end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx_test_util.h"
#include "weft/graph.h"
#include "weft/model.h"
#include "weft/onnx.h"

static char tmpdir[64];

/* ---- helpers ---------------------------------------------------------------------------- */

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (len) assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) fprintf(stderr, "cannot open %s (run from the repository root)\n", path);
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static const char *tmp_path(const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

/* Expects status st and a message containing every string of the NULL-terminated list. */
static void expect_error(weft_status got, weft_status want, const char *needle, ...)
{
    const char *msg = weft_last_error();
    if (got != want) fprintf(stderr, "status %s, want %s: %s\n", weft_status_name(got), weft_status_name(want), msg);
    assert_int_equal(got, want);
    va_list ap;
    va_start(ap, needle);
    for (const char *s = needle; s != NULL; s = va_arg(ap, const char *)) {
        if (strstr(msg, s) == NULL) fprintf(stderr, "message lacks '%s': %s\n", s, msg);
        assert_non_null(strstr(msg, s));
    }
    va_end(ap);
}

/* ---- a tiny model, built with protobuf-c ------------------------------------------------
 * Input x: float [2, 3] (axis 0 symbolic when in_dim_param is set); one node (unless no_node)
 * op_type(inputs...) -> y; graph output `output` (default "y"); one optional initializer. */
typedef struct tiny {
    const char *op_type, *node_name, *node_domain;
    const char *node_inputs[4];
    size_t n_node_inputs; /* 0: {"x"} */
    bool no_inputs;
    bool no_node;
    const char *in_dim_param;
    Onnx__TensorProto *init;
    Onnx__AttributeProto *attr;
    const char *output;
    int64_t opset; /* 0: 13 */
    const char *opset_domain;
} tiny;

static uint8_t *tiny_pack(const tiny *t, size_t *len)
{
    Onnx__TensorShapeProto__Dimension d0 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    Onnx__TensorShapeProto__Dimension d1 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    d0.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    d0.dim_value = 2;
    if (t->in_dim_param) {
        d0.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d0.dim_param = (char *)t->in_dim_param;
    }
    d1.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    d1.dim_value = 3;
    Onnx__TensorShapeProto__Dimension *dims[] = {&d0, &d1};
    Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
    shape.n_dim = 2;
    shape.dim = dims;
    Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
    tt.has_elem_type = 1;
    tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    tt.shape = &shape;
    Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
    tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp.tensor_type = &tt;
    Onnx__ValueInfoProto in = ONNX__VALUE_INFO_PROTO__INIT;
    in.name = "x";
    in.type = &tp;
    Onnx__ValueInfoProto out = ONNX__VALUE_INFO_PROTO__INIT;
    out.name = (char *)(t->output ? t->output : "y");
    Onnx__ValueInfoProto *ins[] = {&in}, *outs[] = {&out};

    char *node_in[4] = {"x"};
    size_t n_in = 1;
    if (t->no_inputs) n_in = 0;
    if (t->n_node_inputs) {
        n_in = t->n_node_inputs;
        for (size_t i = 0; i < n_in; i++) node_in[i] = (char *)t->node_inputs[i];
    }
    char *node_out[] = {"y"};
    Onnx__NodeProto node = ONNX__NODE_PROTO__INIT;
    node.op_type = (char *)(t->op_type ? t->op_type : "Relu");
    node.name = (char *)t->node_name;
    node.domain = (char *)t->node_domain;
    node.n_input = n_in;
    node.input = node_in;
    node.n_output = 1;
    node.output = node_out;
    Onnx__AttributeProto *attrs[] = {t->attr};
    if (t->attr) {
        node.n_attribute = 1;
        node.attribute = attrs;
    }
    Onnx__NodeProto *nodes[] = {&node};
    Onnx__TensorProto *inits[] = {t->init};

    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    g.name = "tiny";
    g.n_node = t->no_node ? 0 : 1;
    g.node = nodes;
    g.n_input = 1;
    g.input = ins;
    g.n_output = 1;
    g.output = outs;
    if (t->init) {
        g.n_initializer = 1;
        g.initializer = inits;
    }
    return onnx_pack(&g, t->opset_domain ? t->opset_domain : "", t->opset ? t->opset : 13, len);
}

/* Packs the model, writes it as tmpdir/name and loads it from there. */
static weft_status tiny_load(const tiny *t, const char *name, weft_graph **g)
{
    size_t len;
    uint8_t *buf = tiny_pack(t, &len);
    char path[256];
    snprintf(path, sizeof path, "%s", tmp_path(name));
    write_file(path, buf, len);
    free(buf);
    *g = (weft_graph *)(uintptr_t)1; /* must become NULL on failure */
    weft_status st = weft_onnx_load(path, g);
    if (st != WEFT_OK) assert_null(*g);
    return st;
}

/* A FLOAT initializer named `name` of dims [2, 3]. */
static Onnx__TensorProto float_init(const char *name, int64_t *dims)
{
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    t.name = (char *)name;
    t.has_data_type = 1;
    t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t.n_dims = 2;
    t.dims = dims;
    return t;
}

/* ---- the reference models ---------------------------------------------------------------- */

/* Shapes of the "inputs" or "outputs" entries of a model .json: a bracket-matching scan, enough
 * for these files (names and shapes only). Returns the entry count. */
static int json_shapes(const char *js, const char *section, char names[][64], int64_t shapes[][8], int *ndims)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\"", section);
    const char *p = strstr(js, key);
    assert_non_null(p);
    p = strchr(p, '[');
    assert_non_null(p);
    const char *end = p;
    int depth = 0;
    bool in_str = false;
    for (; *end; end++) {
        if (in_str) {
            if (*end == '\\') end++;
            else if (*end == '"') in_str = false;
            continue;
        }
        if (*end == '"') in_str = true;
        else if (*end == '[' || *end == '{') depth++;
        else if ((*end == ']' || *end == '}') && --depth == 0) break;
    }
    int n = 0;
    for (const char *q = p; (q = strstr(q, "\"name\"")) != NULL && q < end; n++) {
        q = strchr(q + 6, '"');
        const char *e = strchr(q + 1, '"');
        snprintf(names[n], 64, "%.*s", (int)(e - q - 1), q + 1);
        const char *s = strstr(e, "\"shape\"");
        assert_true(s != NULL && s < end);
        s = strchr(s, '[') + 1;
        ndims[n] = 0;
        while (*s != ']') {
            char *next;
            shapes[n][ndims[n]++] = strtoll(s, &next, 10);
            s = next;
            while (*s == ',' || *s == ' ' || *s == '\n') s++;
        }
        q = s;
    }
    return n;
}

static void check_shape(const weft_graph *g, weft_value v, const char *name, const int64_t *want, int ndim)
{
    int64_t got[8];
    assert_string_equal(weft_graph_value_name(g, v), name);
    assert_int_equal(weft_graph_value_type(g, v), WEFT_TYPE_FLOAT32);
    assert_int_equal(weft_graph_value_shape(g, v, got), ndim);
    for (int d = 0; d < ndim; d++) assert_int_equal(got[d], want[d]);
}

static void load_reference(const char *model)
{
    char path[256];
    size_t len;
    snprintf(path, sizeof path, "tests/data/models/%s.json", model);
    char *js = read_file(path, &len);
    char names[4][64];
    int64_t shapes[4][8];
    int ndims[4];

    snprintf(path, sizeof path, "tests/data/models/%s.onnx", model);
    weft_graph *g = NULL;
    weft_status st = weft_onnx_load(path, &g);
    if (st != WEFT_OK) fprintf(stderr, "%s: %s\n", weft_status_name(st), weft_last_error());
    assert_int_equal(st, WEFT_OK);
    assert_non_null(g);

    int n = json_shapes(js, "inputs", names, shapes, ndims);
    assert_int_equal(weft_graph_n_inputs(g), n);
    for (int i = 0; i < n; i++) check_shape(g, weft_graph_input(g, i), names[i], shapes[i], ndims[i]);
    n = json_shapes(js, "outputs", names, shapes, ndims);
    assert_int_equal(weft_graph_n_outputs(g), n);
    for (int i = 0; i < n; i++) {
        int64_t got[8];
        weft_value v = weft_graph_output(g, i);
        assert_int_equal(weft_graph_value_type(g, v), WEFT_TYPE_FLOAT32);
        assert_int_equal(weft_graph_value_shape(g, v, got), ndims[i]);
        for (int d = 0; d < ndims[i]; d++) assert_int_equal(got[d], shapes[i][d]);
    }
    weft_graph_destroy(g);
    free(js);
}

static void test_load_mlp(void **state) { load_reference("mlp"); }
static void test_load_resnet9(void **state) { load_reference("resnet9"); }
static void test_load_resnet9_b32(void **state) { load_reference("resnet9_b32"); }
static void test_load_transformer(void **state) { load_reference("transformer"); }

/* ---- bad files --------------------------------------------------------------------------- */

static void test_nonexistent(void **state)
{
    weft_graph *g = (weft_graph *)(uintptr_t)1;
    expect_error(weft_onnx_load("/nonexistent/weft/model.onnx", &g), WEFT_ERR_IO, "/nonexistent/weft/model.onnx",
                 NULL);
    assert_null(g);
    expect_error(weft_onnx_load(tmpdir, &g), WEFT_ERR_IO, tmpdir, NULL); /* a folder */
    expect_error(weft_onnx_load(NULL, &g), WEFT_ERR_INVALID_ARG, NULL);
    expect_error(weft_onnx_load("x.onnx", NULL), WEFT_ERR_INVALID_ARG, NULL);
    expect_error(weft_onnx_load_buffer(NULL, 10, NULL, &g), WEFT_ERR_INVALID_ARG, NULL);
}

static void test_empty_file(void **state)
{
    const char *path = tmp_path("empty.onnx");
    write_file(path, "", 0);
    weft_graph *g = NULL;
    expect_error(weft_onnx_load(path, &g), WEFT_ERR_PARSE, path, "empty", NULL);
    assert_null(g);
    expect_error(weft_onnx_load_buffer("", 0, NULL, &g), WEFT_ERR_PARSE, "empty", NULL);
}

static void test_garbage(void **state)
{
    const char *path = tmp_path("garbage.onnx");
    const char *text = "this is not an onnx model\n";
    write_file(path, text, strlen(text));
    weft_graph *g = NULL;
    weft_status st = weft_onnx_load(path, &g);
    assert_int_not_equal(st, WEFT_OK);
    assert_non_null(strstr(weft_last_error(), path));
    assert_null(g);

    uint8_t buf[4096];
    uint32_t seed = 12345;
    for (int trial = 0; trial < 500; trial++) {
        size_t len = 1 + (size_t)(trial * 37 % (int)sizeof buf);
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1664525u + 1013904223u;
            buf[i] = (uint8_t)(seed >> 24);
        }
        st = weft_onnx_load_buffer(buf, len, NULL, &g);
        assert_int_not_equal(st, WEFT_OK);
        assert_true(weft_last_error()[0] != '\0');
        assert_null(g);
    }
}

/* mlp.onnx cut short at many lengths: every prefix is an error (a cut inside a field fails to
 * unpack; a cut at a top-level field boundary leaves the graph or the opset import missing). */
static void test_truncated(void **state)
{
    size_t len;
    uint8_t *full = read_file("tests/data/models/mlp.onnx", &len);
    size_t cuts[400];
    size_t n = 0;
    for (size_t k = 1; k <= 96; k++) cuts[n++] = k;
    for (size_t k = 1; k < 200; k++) cuts[n++] = len * k / 200;
    for (size_t k = 1; k <= 64; k++) cuts[n++] = len - k;
    weft_graph *g = NULL;
    for (size_t i = 0; i < n; i++) {
        weft_status st = weft_onnx_load_buffer(full, cuts[i], tmpdir, &g);
        if (st == WEFT_OK) fprintf(stderr, "mlp.onnx cut at %zu of %zu bytes loaded\n", cuts[i], len);
        assert_int_not_equal(st, WEFT_OK);
        assert_true(weft_last_error()[0] != '\0');
        assert_null(g);
    }
    /* once through a file: the message names it */
    const char *path = tmp_path("mlp_cut.onnx");
    write_file(path, full, len / 2);
    expect_error(weft_onnx_load(path, &g), WEFT_ERR_PARSE, path, NULL);
    free(full);
}

/* A tiny model with an initializer and an attribute, with 1..3 random bytes changed, 3000
 * times: each load either succeeds or fails with a message; none may crash (run under ASan). */
static void test_mutated(void **state)
{
    int64_t dims[] = {2, 3};
    float fl[6] = {1, 2, 3, 4, 5, 6};
    Onnx__TensorProto w = float_init("w", dims);
    w.has_raw_data = 1;
    w.raw_data.len = sizeof fl;
    w.raw_data.data = (uint8_t *)fl;
    int64_t perm[] = {1, 0};
    Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT;
    a.name = "perm";
    a.has_type = 1;
    a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a.n_ints = 2;
    a.ints = perm;
    tiny t = {.op_type = "Add", .node_name = "add0", .node_inputs = {"x", "w"}, .n_node_inputs = 2, .init = &w,
              .attr = &a};
    size_t len;
    uint8_t *good = tiny_pack(&t, &len);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    uint32_t seed = 99;
    int ok = 0;
    for (int trial = 0; trial < 3000; trial++) {
        memcpy(buf, good, len);
        seed = seed * 1664525u + 1013904223u;
        int flips = 1 + (int)(seed >> 30) % 3;
        for (int f = 0; f < flips; f++) {
            seed = seed * 1664525u + 1013904223u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1664525u + 1013904223u;
            buf[at] = (uint8_t)(seed >> 24);
        }
        weft_graph *g = NULL;
        weft_status st = weft_onnx_load_buffer(buf, len, tmpdir, &g);
        if (st == WEFT_OK) {
            assert_non_null(g);
            ok++;
        } else {
            assert_null(g);
            assert_true(weft_last_error()[0] != '\0');
        }
        weft_graph_destroy(g);
    }
    free(buf);
    free(good);
}

/* ---- tiny models: what is refused and how ------------------------------------------------ */

static void test_unsupported_op(void **state)
{
    tiny t = {.op_type = "FooBar", .node_name = "my_foo"};
    weft_graph *g;
    expect_error(tiny_load(&t, "foobar.onnx", &g), WEFT_ERR_UNSUPPORTED, "FooBar", "my_foo", NULL);
    /* no node name: one is made up from the op type and the index */
    tiny t2 = {.op_type = "FooBar"};
    expect_error(tiny_load(&t2, "foobar2.onnx", &g), WEFT_ERR_UNSUPPORTED, "FooBar", "FooBar_0", NULL);
}

static void test_unknown_tensor(void **state)
{
    tiny t = {.op_type = "Add", .node_name = "add0", .node_inputs = {"x", "foo"}, .n_node_inputs = 2};
    weft_graph *g;
    expect_error(tiny_load(&t, "unknown.onnx", &g), WEFT_ERR_PARSE, "node 'add0' (Add) reads unknown tensor 'foo'",
                 NULL);
    tiny t2 = {.no_node = true, .output = "nowhere"};
    expect_error(tiny_load(&t2, "noout.onnx", &g), WEFT_ERR_PARSE, "'nowhere'", NULL);
}

static void test_opset_and_domain(void **state)
{
    weft_graph *g;
    tiny t = {.no_node = true, .output = "x", .opset = 5};
    expect_error(tiny_load(&t, "opset5.onnx", &g), WEFT_ERR_UNSUPPORTED, "opset version 5", NULL);
    t.opset = 19;
    expect_error(tiny_load(&t, "opset19.onnx", &g), WEFT_ERR_UNSUPPORTED, "opset version 19", NULL);
    t.opset = 13;
    t.opset_domain = "com.example";
    expect_error(tiny_load(&t, "nodefault.onnx", &g), WEFT_ERR_UNSUPPORTED, "default domain", NULL);
    t.opset_domain = "ai.onnx";
    assert_int_equal(tiny_load(&t, "aionnx.onnx", &g), WEFT_OK);
    weft_graph_destroy(g);
    tiny t2 = {.op_type = "Relu", .node_name = "r", .node_domain = "com.microsoft"};
    expect_error(tiny_load(&t2, "domain.onnx", &g), WEFT_ERR_UNSUPPORTED, "com.microsoft", "'r'", NULL);
}

static void test_symbolic_dim(void **state)
{
    /* a named dimension loads as symbolic: -1 and its name */
    tiny t = {.op_type = "Relu", .in_dim_param = "batch"};
    weft_graph *g = NULL;
    assert_int_equal(tiny_load(&t, "symbolic.onnx", &g), WEFT_OK);
    assert_true(weft_graph_is_symbolic(g));
    int64_t shape[8];
    assert_int_equal(weft_graph_value_shape(g, weft_graph_input(g, 0), shape), 2);
    assert_int_equal(shape[0], -1);
    assert_int_equal(shape[1], 3);
    assert_string_equal(weft_graph_value_dim_name(g, weft_graph_input(g, 0), 0), "batch");
    assert_null(weft_graph_value_dim_name(g, weft_graph_input(g, 0), 1));
    /* the output's shape is known only at concrete sizes */
    assert_int_equal(weft_graph_value_shape(g, weft_graph_output(g, 0), shape), -1);
    weft_graph_destroy(g);
    /* an empty name is an unknown dimension: refused */
    tiny e = {.op_type = "Relu", .in_dim_param = ""};
    expect_error(tiny_load(&e, "unnamed.onnx", &g), WEFT_ERR_UNSUPPORTED, "input 'x' has an unknown dimension at axis 0", NULL);
}

static void test_attr_unsupported(void **state)
{
    Onnx__GraphProto body = ONNX__GRAPH_PROTO__INIT;
    Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT;
    a.name = "then_branch";
    a.has_type = 1;
    a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    a.g = &body;
    tiny t = {.op_type = "Relu", .node_name = "r0", .attr = &a};
    weft_graph *g;
    expect_error(tiny_load(&t, "attr_graph.onnx", &g), WEFT_ERR_UNSUPPORTED, "then_branch", "GRAPH", "'r0'", NULL);
}

static void test_raw_data_mismatch(void **state)
{
    int64_t dims[] = {2, 3};
    uint8_t bytes[20] = {0};
    Onnx__TensorProto w = float_init("weight_w", dims);
    w.has_raw_data = 1;
    w.raw_data.len = sizeof bytes;
    w.raw_data.data = bytes;
    tiny t = {.no_node = true, .output = "weight_w", .init = &w};
    weft_graph *g;
    expect_error(tiny_load(&t, "rawsize.onnx", &g), WEFT_ERR_PARSE, "'weight_w'", "[2, 3]", "20 bytes", "expected 24",
                 NULL);

    /* typed field with the wrong count */
    float fl[5] = {0};
    Onnx__TensorProto w2 = float_init("weight_f", dims);
    w2.n_float_data = 5;
    w2.float_data = fl;
    tiny t2 = {.no_node = true, .output = "weight_f", .init = &w2};
    expect_error(tiny_load(&t2, "floatcount.onnx", &g), WEFT_ERR_PARSE, "'weight_f'", "expected 6", NULL);

    /* no data at all */
    Onnx__TensorProto w3 = float_init("weight_n", dims);
    tiny t3 = {.no_node = true, .output = "weight_n", .init = &w3};
    expect_error(tiny_load(&t3, "nodata.onnx", &g), WEFT_ERR_PARSE, "'weight_n'", "no data", NULL);
}

/* A Cast to float64 that is a graph output (or read by anything but IsInf / IsNaN / Cast) stays
 * a Cast, which refuses float64 naming the node (the exact drop of torch.isinf's Cast is
 * tests/model's isinf_isnan_cast). */
static void test_cast_double_refused(void **state)
{
    (void)state;
    Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT;
    a.name = "to";
    a.has_type = 1;
    a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a.has_i = 1;
    a.i = ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
    tiny t = {.op_type = "Cast", .node_name = "c0", .attr = &a};
    weft_graph *g;
    expect_error(tiny_load(&t, "cast_double.onnx", &g), WEFT_ERR_UNSUPPORTED, "'c0'", "to=11", NULL);
}

static void test_bad_dims_and_types(void **state)
{
    weft_graph *g;
    int64_t neg[] = {2, -3};
    Onnx__TensorProto w = float_init("neg", neg);
    tiny t = {.no_node = true, .output = "neg", .init = &w};
    expect_error(tiny_load(&t, "negdim.onnx", &g), WEFT_ERR_PARSE, "'neg'", "negative", NULL);

    int64_t huge[] = {INT64_C(1) << 30, INT64_C(1) << 30};
    Onnx__TensorProto w2 = float_init("huge", huge);
    tiny t2 = {.no_node = true, .output = "huge", .init = &w2};
    expect_error(tiny_load(&t2, "huge.onnx", &g), WEFT_ERR_UNSUPPORTED, "'huge'", "2^40", NULL);

    int64_t over[] = {INT64_MAX, INT64_MAX};
    w2.dims = over;
    expect_error(tiny_load(&t2, "overflow.onnx", &g), WEFT_ERR_UNSUPPORTED, "'huge'", NULL);

    int64_t dims[] = {2, 3};
    double dd[6] = {0};
    Onnx__TensorProto w3 = float_init("dbl", dims);
    w3.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
    w3.n_double_data = 6;
    w3.double_data = dd;
    tiny t3 = {.no_node = true, .output = "dbl", .init = &w3};
    expect_error(tiny_load(&t3, "double.onnx", &g), WEFT_ERR_UNSUPPORTED, "'dbl'", "DOUBLE", NULL);
}

/* Initializers from the typed fields and Constant values load with their data. */
static void test_typed_data(void **state)
{
    weft_graph *g;
    int64_t dims[] = {2, 3};
    float fl[6] = {1, 2, 3, 4, 5, 6};
    Onnx__TensorProto w = float_init("wf", dims);
    w.n_float_data = 6;
    w.float_data = fl;
    tiny t = {.no_node = true, .output = "wf", .init = &w};
    assert_int_equal(tiny_load(&t, "floatdata.onnx", &g), WEFT_OK);
    assert_int_equal(weft_graph_n_inputs(g), 1);
    assert_int_equal(weft_graph_n_outputs(g), 1);
    weft_value v = weft_graph_output(g, 0);
    int64_t shape[8];
    assert_int_equal(weft_graph_value_shape(g, v, shape), 2);
    assert_int_equal(shape[1], 3);
    assert_memory_equal(weft_graph_value_data(g, v), fl, sizeof fl);
    weft_graph_destroy(g);

    int32_t b32[6] = {0, 1, 7, 0, 0, -1};
    uint8_t bexp[6] = {0, 1, 1, 0, 0, 1};
    Onnx__TensorProto b = float_init("wb", dims);
    b.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    b.n_int32_data = 6;
    b.int32_data = b32;
    tiny t2 = {.no_node = true, .output = "wb", .init = &b};
    assert_int_equal(tiny_load(&t2, "booldata.onnx", &g), WEFT_OK);
    v = weft_graph_output(g, 0);
    assert_int_equal(weft_graph_value_type(g, v), WEFT_TYPE_BOOL);
    assert_memory_equal(weft_graph_value_data(g, v), bexp, sizeof bexp);
    weft_graph_destroy(g);

    /* a Constant node with value_ints */
    int64_t ints[] = {4, -1, 9};
    Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT;
    a.name = "value_ints";
    a.has_type = 1;
    a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a.n_ints = 3;
    a.ints = ints;
    tiny t3 = {.op_type = "Constant", .node_name = "c0", .no_inputs = true, .attr = &a};
    assert_int_equal(tiny_load(&t3, "constnode.onnx", &g), WEFT_OK);
    v = weft_graph_output(g, 0);
    assert_int_equal(weft_graph_value_type(g, v), WEFT_TYPE_INT64);
    assert_int_equal(weft_graph_value_shape(g, v, shape), 1);
    assert_int_equal(shape[0], 3);
    assert_memory_equal(weft_graph_value_data(g, v), ints, sizeof ints);
    weft_graph_destroy(g);
}

/* ---- external data ------------------------------------------------------------------------- */

static weft_status external_load(const char *location, const char *offset, const char *length, const char *file,
                                 weft_graph **g)
{
    int64_t dims[] = {2, 3};
    Onnx__TensorProto w = float_init("wext", dims);
    Onnx__StringStringEntryProto kv[3] = {ONNX__STRING_STRING_ENTRY_PROTO__INIT, ONNX__STRING_STRING_ENTRY_PROTO__INIT,
                                          ONNX__STRING_STRING_ENTRY_PROTO__INIT};
    Onnx__StringStringEntryProto *kvp[3];
    size_t n = 0;
    kv[n].key = "location", kv[n].value = (char *)location, kvp[n] = &kv[n], n++;
    if (offset) kv[n].key = "offset", kv[n].value = (char *)offset, kvp[n] = &kv[n], n++;
    if (length) kv[n].key = "length", kv[n].value = (char *)length, kvp[n] = &kv[n], n++;
    w.n_external_data = n;
    w.external_data = kvp;
    w.has_data_location = 1;
    w.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    tiny t = {.no_node = true, .output = "wext", .init = &w};
    return tiny_load(&t, file, g);
}

static void test_external_escape(void **state)
{
    weft_graph *g;
    expect_error(external_load("../../etc/passwd", NULL, NULL, "ext1.onnx", &g), WEFT_ERR_INVALID_ARG,
                 "external data path '../../etc/passwd' escapes the model folder", "'wext'", NULL);
    expect_error(external_load("/etc/passwd", NULL, NULL, "ext2.onnx", &g), WEFT_ERR_INVALID_ARG,
                 "external data path '/etc/passwd' escapes the model folder", NULL);
    expect_error(external_load("sub/../../x.bin", NULL, NULL, "ext3.onnx", &g), WEFT_ERR_INVALID_ARG,
                 "escapes the model folder", NULL);
    /* a symlink inside the folder that points out of it */
    assert_int_equal(symlink("/etc/passwd", tmp_path("passwd_link")), 0);
    expect_error(external_load("passwd_link", NULL, NULL, "ext4.onnx", &g), WEFT_ERR_INVALID_ARG,
                 "escapes the model folder", NULL);
    /* missing and short files */
    expect_error(external_load("missing.bin", NULL, NULL, "ext5.onnx", &g), WEFT_ERR_IO, "missing.bin", NULL);
    write_file(tmp_path("short.bin"), "0123456789", 10);
    expect_error(external_load("short.bin", "0", "24", "ext6.onnx", &g), WEFT_ERR_IO, "short.bin", NULL);
    expect_error(external_load("short.bin", NULL, NULL, "ext7.onnx", &g), WEFT_ERR_PARSE, "short.bin", "expected 24",
                 NULL);
    expect_error(external_load("short.bin", "x1", NULL, "ext8.onnx", &g), WEFT_ERR_PARSE, "offset", NULL);
    /* from a buffer without a model folder */
    size_t len;
    uint8_t *buf = read_file(tmp_path("ext5.onnx"), &len);
    expect_error(weft_onnx_load_buffer(buf, len, NULL, &g), WEFT_ERR_INVALID_ARG, "no model folder", NULL);
    free(buf);
}

static void test_external_valid(void **state)
{
    float data[8 + 6] = {0};
    float want[6] = {0.5f, -1, 2, 3.25f, 4, 1e-3f};
    memcpy(data + 8, want, sizeof want); /* at byte offset 32 */
    assert_int_equal(mkdir(tmp_path("weights"), 0755), 0);
    write_file(tmp_path("weights/w.bin"), data, sizeof data);
    weft_graph *g;
    weft_status st = external_load("weights/w.bin", "32", "24", "extok.onnx", &g);
    if (st != WEFT_OK) fprintf(stderr, "%s\n", weft_last_error());
    assert_int_equal(st, WEFT_OK);
    weft_value v = weft_graph_output(g, 0);
    int64_t shape[8];
    assert_int_equal(weft_graph_value_shape(g, v, shape), 2);
    assert_memory_equal(weft_graph_value_data(g, v), want, sizeof want);
    weft_graph_destroy(g);
    /* from a buffer with the folder given */
    size_t len;
    uint8_t *buf = read_file(tmp_path("extok.onnx"), &len);
    assert_int_equal(weft_onnx_load_buffer(buf, len, tmpdir, &g), WEFT_OK);
    weft_graph_destroy(g);
    free(buf);
}

/* ---- setup ----------------------------------------------------------------------------------- */

/* rm -r of the temp folder (no symlink is followed: lstat). */
static int rm_tree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0) return -1;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (d == NULL) return -1;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char sub[512];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rm_tree(sub);
        }
        closedir(d);
    }
    return remove(path);
}

static int group_setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/weft_onnx_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    return rm_tree(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nonexistent),       cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_garbage),           cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_mutated),
        cmocka_unit_test(test_unsupported_op),    cmocka_unit_test(test_unknown_tensor),
        cmocka_unit_test(test_opset_and_domain),  cmocka_unit_test(test_symbolic_dim),
        cmocka_unit_test(test_attr_unsupported),  cmocka_unit_test(test_raw_data_mismatch),
        cmocka_unit_test(test_bad_dims_and_types), cmocka_unit_test(test_cast_double_refused), cmocka_unit_test(test_typed_data),
        cmocka_unit_test(test_external_escape),   cmocka_unit_test(test_external_valid),
        cmocka_unit_test(test_load_mlp),          cmocka_unit_test(test_load_resnet9),
        cmocka_unit_test(test_load_resnet9_b32),  cmocka_unit_test(test_load_transformer),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
