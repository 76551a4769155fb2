/* ONNX import of QDQ (fake-quantized) models: int8 / uint8 initializers and Constants load (as
 * INT32 holding the same values, from raw_data and from int32_data), QuantizeLinear ->
 * DequantizeLinear runs in float and matches a naive C reference exactly on both targets (ties
 * to even, saturation on both sides, int8 and uint8, with and without a zero point), a
 * per-channel int8 weight dequantized along an axis feeds a Conv and a MatMul, and what weft
 * cannot run is refused with the node named: a zero point computed at run time, a quantized
 * graph output, an int16 zero point, opset 19+ attributes, QLinear ops. Also: a RoiAlign of
 * opset < 16 without coordinate_transformation_mode gets "output_half_pixel" (opset 10's
 * behaviour), and MaxUnpool's refusals. Models are packed with protobuf-c here and loaded from
 * memory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "onnx_test_util.h"
#include "weft/graph.h"
#include "weft/model.h"
#include "weft/onnx.h"

/* ---- a small model builder over protobuf-c structs (all storage inside tmodel) ----------- */

#define T_MAX 8

typedef struct tnode {
    Onnx__NodeProto p;
    char *in[4], *out[1];
    Onnx__AttributeProto a[2];
    Onnx__AttributeProto *ap[2];
} tnode;

typedef struct tmodel {
    tnode nodes[T_MAX];
    Onnx__NodeProto *np[T_MAX];
    int n_nodes;
    Onnx__TensorProto inits[T_MAX];
    Onnx__TensorProto *ip[T_MAX];
    int64_t dims[T_MAX][4];
    int n_inits;
    Onnx__TensorShapeProto__Dimension xd[4];
    Onnx__TensorShapeProto__Dimension *xdp[4];
    Onnx__TensorShapeProto xs;
    Onnx__TypeProto__Tensor tt;
    Onnx__TypeProto tp;
    Onnx__ValueInfoProto in, out;
    Onnx__ValueInfoProto *inp[1], *outp[1];
    int64_t opset; /* the default domain's (13 unless set) */
} tmodel;

/* Graph input "x": float of the given shape; graph output `out`. */
static void tm_init(tmodel *m, int rank, const int64_t *shape, const char *out)
{
    memset(m, 0, sizeof *m);
    for (int d = 0; d < rank; d++) {
        m->xd[d] = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
        m->xd[d].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        m->xd[d].dim_value = shape[d];
        m->xdp[d] = &m->xd[d];
    }
    m->xs = (Onnx__TensorShapeProto)ONNX__TENSOR_SHAPE_PROTO__INIT;
    m->xs.n_dim = (size_t)rank;
    m->xs.dim = m->xdp;
    m->tt = (Onnx__TypeProto__Tensor)ONNX__TYPE_PROTO__TENSOR__INIT;
    m->tt.has_elem_type = 1;
    m->tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    m->tt.shape = &m->xs;
    m->tp = (Onnx__TypeProto)ONNX__TYPE_PROTO__INIT;
    m->tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    m->tp.tensor_type = &m->tt;
    m->in = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
    m->in.name = "x";
    m->in.type = &m->tp;
    m->out = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
    m->out.name = (char *)out;
    m->inp[0] = &m->in;
    m->outp[0] = &m->out;
    m->opset = 13;
}

/* Node `name`: op(ins...) -> out. An input "" is an omitted optional one. */
static tnode *tm_node(tmodel *m, const char *op, const char *name, int n_in, const char *const *ins, const char *out)
{
    assert_true(m->n_nodes < T_MAX && n_in <= 4);
    tnode *t = &m->nodes[m->n_nodes];
    m->np[m->n_nodes++] = &t->p;
    t->p = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
    t->p.op_type = (char *)op;
    t->p.name = (char *)name;
    for (int i = 0; i < n_in; i++) t->in[i] = (char *)ins[i];
    t->out[0] = (char *)out;
    t->p.n_input = (size_t)n_in;
    t->p.input = t->in;
    t->p.n_output = 1;
    t->p.output = t->out;
    t->p.attribute = t->ap;
    return t;
}

static void tm_attr_int(tnode *t, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = &t->a[t->p.n_attribute];
    *a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
    a->name = (char *)name;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = v;
    t->ap[t->p.n_attribute++] = a;
}

static void tm_attr_str(tnode *t, const char *name, const char *v)
{
    Onnx__AttributeProto *a = &t->a[t->p.n_attribute];
    *a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
    a->name = (char *)name;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    a->has_s = 1;
    a->s.len = strlen(v);
    a->s.data = (uint8_t *)v;
    t->ap[t->p.n_attribute++] = a;
}

static void tm_attr_ints(tnode *t, const char *name, size_t n, int64_t *v)
{
    Onnx__AttributeProto *a = &t->a[t->p.n_attribute];
    *a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
    a->name = (char *)name;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->n_ints = n;
    a->ints = v;
    t->ap[t->p.n_attribute++] = a;
}

static Onnx__TensorProto *tm_tensor(tmodel *m, const char *name, int32_t type, int ndim, const int64_t *dims)
{
    assert_true(m->n_inits < T_MAX && ndim <= 4);
    Onnx__TensorProto *t = &m->inits[m->n_inits];
    memcpy(m->dims[m->n_inits], dims, (size_t)ndim * sizeof *dims);
    m->ip[m->n_inits++] = t;
    *t = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
    t->name = (char *)name;
    t->has_data_type = 1;
    t->data_type = type;
    t->n_dims = (size_t)ndim;
    t->dims = m->dims[m->n_inits - 1];
    return t;
}

static void tm_f32(tmodel *m, const char *name, int ndim, const int64_t *dims, size_t n, float *v)
{
    Onnx__TensorProto *t = tm_tensor(m, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, ndim, dims);
    t->n_float_data = n;
    t->float_data = v;
}

static void tm_i64(tmodel *m, const char *name, int ndim, const int64_t *dims, size_t n, int64_t *v)
{
    Onnx__TensorProto *t = tm_tensor(m, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, ndim, dims);
    t->n_int64_data = n;
    t->int64_data = v;
}

/* An integer initializer in raw_data (bytes as they are in the file). */
static void tm_raw(tmodel *m, const char *name, int32_t type, int ndim, const int64_t *dims, size_t len, void *bytes)
{
    Onnx__TensorProto *t = tm_tensor(m, name, type, ndim, dims);
    t->has_raw_data = 1;
    t->raw_data.len = len;
    t->raw_data.data = bytes;
}

/* An integer initializer in int32_data (the form ONNX uses for INT8 / UINT8 / INT16 too). */
static void tm_i32(tmodel *m, const char *name, int32_t type, int ndim, const int64_t *dims, size_t n, int32_t *v)
{
    Onnx__TensorProto *t = tm_tensor(m, name, type, ndim, dims);
    t->n_int32_data = n;
    t->int32_data = v;
}

static weft_status tm_load(tmodel *m, weft_graph **g)
{
    Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
    gp.name = "qdq";
    gp.n_node = (size_t)m->n_nodes;
    gp.node = m->np;
    gp.n_input = 1;
    gp.input = m->inp;
    gp.n_output = 1;
    gp.output = m->outp;
    gp.n_initializer = (size_t)m->n_inits;
    gp.initializer = m->ip;
    return onnx_pack_load(&gp, m->opset, g);
}

/* Loads m, compiles it for `target` and runs it on x into y; WEFT_OK or the first failure. */
static weft_status tm_run(tmodel *m, const char *target, const float *x, float *y)
{
    weft_graph *g = NULL;
    weft_model *mod = NULL;
    weft_status rc = tm_load(m, &g);
    weft_model_options o = weft_model_options_default();
    o.threads = 1;
    o.target = target;
    if (rc == WEFT_OK) rc = weft_model_compile(g, &o, &mod);
    if (rc == WEFT_OK) rc = weft_model_run(mod, (const void *[]){x}, (void *[]){y});
    if (rc != WEFT_OK) print_error("%s: %s\n", target, weft_last_error());
    weft_model_destroy(mod);
    weft_graph_destroy(g);
    return rc;
}

static const char *const targets[] = {"llvm", "interp"};

/* ---- per-tensor fake quantization vs a naive reference ----------------------------------- */

/* ONNX QuantizeLinear then DequantizeLinear, element by element: round half to even (rintf in
 * the default rounding mode), saturate, subtract the zero point, scale. */
static float ref_fake_quant(float x, float s, int zp, int qmin, int qmax)
{
    float q = rintf(x / s) + (float)zp;
    q = q < (float)qmin ? (float)qmin : q > (float)qmax ? (float)qmax : q;
    return (q - (float)zp) * s;
}

#define N_X 24

/* x / s hits k + 0.5 exactly for even and odd k of both signs, runs past both ends of the
 * range, and has ordinary values in between. */
static void fill_inputs(float s, float *x)
{
    const float halves[] = {0.5f, 1.5f, 2.5f, 3.5f, -0.5f, -1.5f, -2.5f, -3.5f, 126.5f, -127.5f, 100.5f, -99.5f};
    int n = 0;
    for (size_t i = 0; i < sizeof halves / sizeof *halves; i++) x[n++] = halves[i] * s;
    const float far[] = {1000.0f, -1000.0f, 300.0f, -300.0f, 128.0f, -129.0f};
    for (size_t i = 0; i < sizeof far / sizeof *far; i++) x[n++] = far[i] * s;
    const float plain[] = {0.0f, 0.3f, -0.7f, 17.2f, -42.9f, 254.6f};
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) x[n++] = plain[i] * s;
    assert_int_equal(n, N_X);
}

/* x -> QuantizeLinear(s, zp) -> DequantizeLinear(s, zp) -> y, zp as `zp_type` in raw_data
 * (raw) or int32_data, or no zero point (zp_type 0). Scales that are not powers of two are
 * tried away from ties only: the LLVM target divides by a constant as x * (1/s) (arcp), which
 * may land one ulp on the other side of k + 0.5 (the interpreter divides). */
static void fake_quant_case(float s, int32_t zp_type, int zp, bool raw)
{
    int64_t shape[1] = {N_X}, none[1] = {0};
    float x[N_X], y[N_X], sv = s;
    fill_inputs(s, x);
    int mant;
    if (frexpf(s, &mant) != 0.5f) /* not a power of two: the ties become ordinary values */
        for (int i = 0; i < 12; i++) x[i] = x[i] + 0.2f * s;
    uint8_t zb = (uint8_t)(zp & 0xff);
    int32_t zi = zp;
    tmodel m;
    tm_init(&m, 1, shape, "y");
    tm_f32(&m, "s", 0, none, 1, &sv);
    if (zp_type && raw) tm_raw(&m, "zp", zp_type, 0, none, 1, &zb);
    if (zp_type && !raw) tm_i32(&m, "zp", zp_type, 0, none, 1, &zi);
    const char *zname = zp_type ? "zp" : "";
    tm_node(&m, "QuantizeLinear", "q", 3, (const char *const[]){"x", "s", zname}, "xq");
    tm_node(&m, "DequantizeLinear", "dq", 3, (const char *const[]){"xq", "s", zname}, "y");
    bool i8 = zp_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
    int qmin = i8 ? -128 : 0, qmax = i8 ? 127 : 255;
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
        memset(y, 0, sizeof y);
        assert_int_equal(tm_run(&m, targets[t], x, y), WEFT_OK);
        int bad = 0;
        for (int i = 0; i < N_X; i++) {
            float want = ref_fake_quant(x[i], s, zp, qmin, qmax);
            if (y[i] != want) {
                print_error("%s s=%g zp=%d: x=%.9g (x/s=%.9g): got %.9g, want %.9g\n", targets[t], (double)s, zp,
                            (double)x[i], (double)(x[i] / s), (double)y[i], (double)want);
                bad++;
            }
        }
        assert_int_equal(bad, 0);
    }
}

static void test_int8_fake_quant_matches_reference(void **state)
{
    (void)state;
    const int32_t I8 = ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
    fake_quant_case(0.5f, I8, 0, true);
    fake_quant_case(0.25f, I8, -3, true); /* a negative zero point in raw_data: byte 0xfd */
    fake_quant_case(2.0f, I8, 5, false);
    fake_quant_case(0.0375f, I8, 10, true);
}

static void test_uint8_fake_quant_matches_reference(void **state)
{
    (void)state;
    const int32_t U8 = ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
    fake_quant_case(0.5f, U8, 128, true); /* byte 0x80: 128, not -128 */
    fake_quant_case(0.125f, U8, 3, false);
    fake_quant_case(1.0f, 0, 0, false); /* no zero point: uint8, 0 */
    fake_quant_case(0.1f, U8, 7, false);
}

/* ---- per-channel weights ----------------------------------------------------------------- */

/* y = Conv(x, DequantizeLinear(w_int8, s[F], zp[F], axis 0)), x [1, 2, 4, 4], w [3, 2, 3, 3]
 * with pads 1, vs a direct convolution of the dequantized weights in double. */
static void test_per_channel_conv_weight(void **state)
{
    (void)state;
    enum { C = 2, F = 3, H = 4, W = 4, K = 3 };
    int64_t xshape[4] = {1, C, H, W}, wdims[4] = {F, C, K, K}, fdims[1] = {F};
    int8_t w8[F * C * K * K];
    float x[C * H * W], y[F * H * W], s[F] = {0.002f, 0.00375f, 0.01f};
    int8_t zp8[F] = {0, -5, 7};
    for (int i = 0; i < F * C * K * K; i++) w8[i] = (int8_t)((i * 37) % 256 - 128);
    w8[0] = -128, w8[1] = 127;
    for (int i = 0; i < C * H * W; i++) x[i] = (float)((i * 13) % 17) / 8.0f - 1.0f;
    tmodel m;
    tm_init(&m, 4, xshape, "y");
    tm_raw(&m, "w", ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 4, wdims, sizeof w8, w8);
    tm_f32(&m, "ws", 1, fdims, F, s);
    tm_raw(&m, "wzp", ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 1, fdims, sizeof zp8, zp8);
    tnode *dq = tm_node(&m, "DequantizeLinear", "wdq", 3, (const char *const[]){"w", "ws", "wzp"}, "wf");
    tm_attr_int(dq, "axis", 0);
    tnode *conv = tm_node(&m, "Conv", "conv", 2, (const char *const[]){"x", "wf"}, "y");
    int64_t pads[4] = {1, 1, 1, 1};
    Onnx__AttributeProto *pa = &conv->a[conv->p.n_attribute];
    *pa = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
    pa->name = "pads";
    pa->has_type = 1;
    pa->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    pa->n_ints = 4;
    pa->ints = pads;
    conv->ap[conv->p.n_attribute++] = pa;
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
        assert_int_equal(tm_run(&m, targets[t], x, y), WEFT_OK);
        double worst = 0, big = 1;
        for (int f = 0; f < F; f++)
            for (int oy = 0; oy < H; oy++)
                for (int ox = 0; ox < W; ox++) {
                    double acc = 0;
                    for (int c = 0; c < C; c++)
                        for (int ky = 0; ky < K; ky++)
                            for (int kx = 0; kx < K; kx++) {
                                int iy = oy + ky - 1, ix = ox + kx - 1;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                float wv = (float)(w8[((f * C + c) * K + ky) * K + kx] - zp8[f]) * s[f];
                                acc += (double)wv * x[(c * H + iy) * W + ix];
                            }
                    double d = fabs(acc - y[(f * H + oy) * W + ox]);
                    worst = d > worst ? d : worst;
                    big = fabs(acc) > big ? fabs(acc) : big;
                }
        print_message("%s: conv max |err| %.3g (max |y| %.3g)\n", targets[t], worst, big);
        assert_true(worst <= 1e-6 * big);
    }
}

/* y = MatMul(x [2, 4], DequantizeLinear(w_uint8 [4, 3] in int32_data, s[3], zp[3], axis -1)). */
static void test_per_channel_matmul_weight(void **state)
{
    (void)state;
    enum { M = 2, K = 4, N = 3 };
    int64_t xshape[2] = {M, K}, wdims[2] = {K, N}, ndims[1] = {N};
    int32_t w[K * N] = {0, 255, 17, 128, 3, 200, 99, 64, 1, 250, 127, 129}, zp[N] = {128, 0, 255};
    float s[N] = {0.01f, 0.2f, 0.003f}, x[M * K] = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f, -2.0f, 1.0f}, y[M * N];
    tmodel m;
    tm_init(&m, 2, xshape, "y");
    tm_i32(&m, "w", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 2, wdims, K * N, w);
    tm_f32(&m, "ws", 1, ndims, N, s);
    tm_i32(&m, "wzp", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 1, ndims, N, zp);
    tm_attr_int(tm_node(&m, "DequantizeLinear", "wdq", 3, (const char *const[]){"w", "ws", "wzp"}, "wf"), "axis", -1);
    tm_node(&m, "MatMul", "mm", 2, (const char *const[]){"x", "wf"}, "y");
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
        assert_int_equal(tm_run(&m, targets[t], x, y), WEFT_OK);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double acc = 0;
                for (int k = 0; k < K; k++) acc += (double)((float)(w[k * N + j] - zp[j]) * s[j]) * x[i * K + k];
                if (fabs(acc - y[i * N + j]) > 1e-6 * fmax(1, fabs(acc)))
                    print_error("%s: y[%d, %d] = %.9g, want %.9g\n", targets[t], i, j, (double)y[i * N + j], acc);
                assert_true(fabs(acc - y[i * N + j]) <= 1e-6 * fmax(1, fabs(acc)));
            }
    }
}

/* ---- refusals ------------------------------------------------------------------------------ */

static void test_zero_point_computed_at_run_time_refused(void **state)
{
    (void)state;
    int64_t shape[1] = {1}, none[1] = {0};
    float s = 0.5f;
    uint8_t zb = 0xfe;
    tmodel m;
    tm_init(&m, 1, shape, "y");
    tm_f32(&m, "s", 0, none, 1, &s);
    tm_raw(&m, "zp0", ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 0, none, 1, &zb);
    tm_attr_int(tm_node(&m, "Cast", "from_x", 1, (const char *const[]){"x"}, "zp"), "to",
                ONNX__TENSOR_PROTO__DATA_TYPE__INT32);
    tm_node(&m, "QuantizeLinear", "quant_x", 3, (const char *const[]){"x", "s", "zp"}, "xq");
    tm_node(&m, "DequantizeLinear", "dq", 3, (const char *const[]){"xq", "s", "zp0"}, "y");
    weft_graph *g = NULL;
    expect_refusal(tm_load(&m, &g), WEFT_ERR_UNSUPPORTED,
                 (const char *const[]){"QuantizeLinear node 'quant_x'", "zero point 'zp'", "computed at run time",
                                       NULL});
    assert_null(g);
}

static void test_quantized_graph_output_refused(void **state)
{
    (void)state;
    int64_t shape[1] = {4}, none[1] = {0};
    float s = 0.5f;
    uint8_t zb = 3;
    tmodel m;
    tm_init(&m, 1, shape, "xq");
    tm_f32(&m, "s", 0, none, 1, &s);
    tm_raw(&m, "zp", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 0, none, 1, &zb);
    tm_node(&m, "QuantizeLinear", "quant_out", 3, (const char *const[]){"x", "s", "zp"}, "xq");
    weft_graph *g = NULL;
    expect_refusal(tm_load(&m, &g), WEFT_ERR_UNSUPPORTED,
                 (const char *const[]){"graph output 'xq'", "node 'quant_out'", "int8 graph outputs are not supported",
                                       NULL});
    assert_null(g);
}

static void test_int16_zero_point_refused(void **state)
{
    (void)state;
    int64_t shape[1] = {4}, none[1] = {0};
    float s = 0.5f;
    int32_t z16 = 1000;
    tmodel m;
    tm_init(&m, 1, shape, "y");
    tm_f32(&m, "s", 0, none, 1, &s);
    tm_i32(&m, "zp16", ONNX__TENSOR_PROTO__DATA_TYPE__INT16, 0, none, 1, &z16);
    tm_node(&m, "QuantizeLinear", "quant16", 3, (const char *const[]){"x", "s", "zp16"}, "xq");
    tm_node(&m, "DequantizeLinear", "dq", 3, (const char *const[]){"xq", "s", "zp16"}, "y");
    weft_graph *g = NULL;
    expect_refusal(tm_load(&m, &g), WEFT_ERR_UNSUPPORTED,
                 (const char *const[]){"QuantizeLinear node 'quant16'", "zero point 'zp16'", "INT16", NULL});
    assert_null(g);
}

/* Opset 19+ / 21 attributes and a genuine INT32 zero point on QuantizeLinear. */
static void test_other_quantization_forms_refused(void **state)
{
    (void)state;
    int64_t shape[1] = {4}, none[1] = {0};
    float s = 0.5f;
    int32_t z = 0;
    const char *attr[] = {"saturate", "block_size"};
    for (int k = 0; k < 2; k++) {
        tmodel m;
        tm_init(&m, 1, shape, "y");
        tm_f32(&m, "s", 0, none, 1, &s);
        tm_i32(&m, "zp", ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 0, none, 1, &z);
        tm_attr_int(tm_node(&m, "QuantizeLinear", "qa", 3, (const char *const[]){"x", "s", "zp"}, "xq"), attr[k], 1);
        tm_node(&m, "DequantizeLinear", "dq", 3, (const char *const[]){"xq", "s", "zp"}, "y");
        weft_graph *g = NULL;
        expect_refusal(tm_load(&m, &g), WEFT_ERR_UNSUPPORTED,
                     (const char *const[]){"QuantizeLinear node 'qa'", attr[k], "not supported", NULL});
    }
    tmodel m;
    tm_init(&m, 1, shape, "y");
    tm_f32(&m, "s", 0, none, 1, &s);
    tm_i32(&m, "zp", ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 0, none, 1, &z);
    tm_node(&m, "QuantizeLinear", "q32", 3, (const char *const[]){"x", "s", "zp"}, "xq");
    tm_node(&m, "DequantizeLinear", "dq", 3, (const char *const[]){"xq", "s", "zp"}, "y");
    weft_graph *g = NULL;
    expect_refusal(tm_load(&m, &g), WEFT_ERR_UNSUPPORTED,
                 (const char *const[]){"QuantizeLinear node 'q32'", "zero point 'zp'", "INT32", NULL});
}

/* Integer-arithmetic quantized ops stay unsupported, with the registry's usual message (their
 * int8 initializers now load, so the load gets as far as the node). */
static void test_qlinear_ops_unsupported(void **state)
{
    (void)state;
    int64_t shape[2] = {2, 2}, none[1] = {0}, wd[2] = {2, 2};
    float s = 0.5f;
    uint8_t z = 0, w[4] = {1, 2, 3, 4};
    tmodel m;
    tm_init(&m, 2, shape, "y");
    tm_f32(&m, "s", 0, none, 1, &s);
    tm_raw(&m, "z", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 0, none, 1, &z);
    tm_raw(&m, "w", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 2, wd, 4, w);
    tm_node(&m, "QuantizeLinear", "q", 3, (const char *const[]){"x", "s", "z"}, "xq");
    tm_node(&m, "MatMulInteger", "mmi", 4, (const char *const[]){"xq", "w", "z", "z"}, "y");
    weft_graph *g = NULL;
    expect_refusal(tm_load(&m, &g), WEFT_ERR_UNSUPPORTED,
                 (const char *const[]){"unsupported op 'MatMulInteger'", "node 'mmi'", NULL});
}

/* ---- RoiAlign's coordinate_transformation_mode by opset ------------------------------------ */

/* The RoiAlign node's coordinate_transformation_mode as loaded (NULL: none) for a model of
 * `opset`, with the attribute set to `given` (NULL: absent). */
static const char *roi_mode(int64_t opset, const char *given, char *buf, size_t cap)
{
    int64_t xshape[4] = {1, 1, 4, 4}, rd[2] = {1, 4}, bd[1] = {1};
    float rois[4] = {0, 0, 3, 3};
    int64_t batch[1] = {0};
    tmodel m;
    tm_init(&m, 4, xshape, "y");
    m.opset = opset;
    tm_f32(&m, "rois", 2, rd, 4, rois);
    tm_i64(&m, "bi", 1, bd, 1, batch);
    tnode *r = tm_node(&m, "RoiAlign", "roi", 3, (const char *const[]){"x", "rois", "bi"}, "y");
    tm_attr_int(r, "sampling_ratio", 2);
    if (given) tm_attr_str(r, "coordinate_transformation_mode", given);
    weft_graph *g = NULL;
    weft_status rc = tm_load(&m, &g);
    if (rc != WEFT_OK) print_error("%s\n", weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    const char *mode = NULL;
    for (int i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i].op_type, "RoiAlign") == 0)
            mode = weft_gnode_attr_string(&g->nodes[i], "coordinate_transformation_mode", NULL);
    if (mode) snprintf(buf, cap, "%s", mode);
    weft_graph_destroy(g);
    return mode ? buf : NULL;
}

static void test_roi_align_mode_by_opset(void **state)
{
    (void)state;
    char buf[64];
    const char *mode = roi_mode(10, NULL, buf, sizeof buf);
    assert_non_null(mode);
    assert_string_equal(mode, "output_half_pixel");
    assert_null(roi_mode(16, NULL, buf, sizeof buf)); /* the op's default: half_pixel */
    mode = roi_mode(16, "output_half_pixel", buf, sizeof buf);
    assert_non_null(mode);
    assert_string_equal(mode, "output_half_pixel");
    mode = roi_mode(10, "half_pixel", buf, sizeof buf); /* given: kept */
    assert_non_null(mode);
    assert_string_equal(mode, "half_pixel");
}

/* MaxUnpool (frontend/onnx_decompose.c) refuses, naming the node: no kernel_shape, an
 * output_shape computed at run time, an output_shape that changes N. (Its values are checked
 * by tests/model/test_onnx_ops.c's generated models.) */
static void test_max_unpool_refused(void **state)
{
    (void)state;
    static int64_t pshape[4] = {1, 2, 2, 3}, idx[12] = {0, 3, 5, 13, 14, 17, 19, 20, 23, 25, 26, 29}, k[2] = {2, 2};
    static int64_t xshape[1] = {4}, oshape[4] = {2, 2, 4, 6}, od[1] = {4};
    static float pooled[12];
    for (int c = 0; c < 3; c++) {
        tmodel m;
        tm_init(&m, 1, xshape, "y");
        tm_f32(&m, "p", 4, pshape, 12, pooled);
        tm_i64(&m, "i", 4, pshape, 12, idx);
        const char *os = "";
        if (c == 1) {
            tm_attr_int(tm_node(&m, "Cast", "shape_of_x", 1, (const char *const[]){"x"}, "os"), "to",
                        ONNX__TENSOR_PROTO__DATA_TYPE__INT64);
            os = "os";
        } else if (c == 2) {
            tm_i64(&m, "os", 1, od, 4, oshape);
            os = "os";
        }
        tnode *u = tm_node(&m, "MaxUnpool", "up", os[0] ? 3 : 2, (const char *const[]){"p", "i", os}, "y");
        if (c > 0) tm_attr_ints(u, "kernel_shape", 2, k);
        static const char *const want[3][3] = {{"MaxUnpool node 'up'", "kernel_shape", NULL},
                                               {"MaxUnpool node 'up'", "output_shape must be a constant", NULL},
                                               {"MaxUnpool node 'up'", "output dim 0 is 2", NULL}};
        static const weft_status codes[3] = {WEFT_ERR_INVALID_ARG, WEFT_ERR_UNSUPPORTED, WEFT_ERR_SHAPE};
        weft_graph *g = NULL;
        expect_refusal(tm_load(&m, &g), codes[c], want[c]);
        assert_null(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int8_fake_quant_matches_reference),
        cmocka_unit_test(test_uint8_fake_quant_matches_reference),
        cmocka_unit_test(test_per_channel_conv_weight),
        cmocka_unit_test(test_per_channel_matmul_weight),
        cmocka_unit_test(test_zero_point_computed_at_run_time_refused),
        cmocka_unit_test(test_quantized_graph_output_refused),
        cmocka_unit_test(test_int16_zero_point_refused),
        cmocka_unit_test(test_other_quantization_forms_refused),
        cmocka_unit_test(test_qlinear_ops_unsupported),
        cmocka_unit_test(test_roi_align_mode_by_opset),
        cmocka_unit_test(test_max_unpool_refused),
    };
    return cmocka_run_group_tests_name("frontend_onnx_qdq", tests, NULL, NULL);
}
