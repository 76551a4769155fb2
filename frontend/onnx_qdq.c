/* QDQ (fake-quantized) models in float: QuantizeLinear and DequantizeLinear as float ops.
 *
 * weft has no 8-bit integer types, so a quantized value is carried as a FLOAT32 tensor holding
 * integers (exact: |q| <= 255), and int8 / uint8 constants decode to INT32 (onnx_tensor.c),
 * with the loader's side table (weft_onnx_qtable, one byte per weft_value) remembering which
 * were int8 and which uint8: only that fixes QuantizeLinear's saturation range.
 *
 *   QuantizeLinear(x, s, zp?)   -> Clip(Round(x / s) + zp, qmin, qmax)
 *                                  [qmin, qmax] = [-128, 127] (int8 zp), [0, 255] (uint8 or no zp)
 *   DequantizeLinear(x, s, zp?) -> (Cast(x, float) - zp) * s     (the Cast only for integer x)
 *
 * Round is ties-to-even (WEFT_INTRIN_ROUND: llvm.roundeven, nearbyintf in the interpreter), as
 * ONNX asks. The Add / Sub of a zero point that is all zeros is left out. A 1-D scale (and zero
 * point) of x.shape[axis] elements is made [C, 1, ..., 1] to broadcast along `axis`; a scalar or
 * a [1] one broadcasts as it is. Zero points become FLOAT32 constants.
 *
 * Refused, naming the node: a zero point that is not a constant of known int8 / uint8 type
 * (QuantizeLinear; DequantizeLinear also takes int32 ones), opset 19+ attributes (saturate,
 * output_dtype) and opset 21's block_size, scales of rank > 1, x of another type. A
 * QuantizeLinear result that is a graph output is refused by the loader (onnx.c), which knows
 * the outputs only at the end. float8 / int16 / int4 tensors do not decode at all; the loader
 * asks weft_onnx_qdq_type_error for a message naming the Q / DQ node that reads them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx.h"
#include "ir/error.h"
#include "runtime/mem.h"

/* ---- the side table --------------------------------------------------------------------- */

weft_onnx_qkind weft_onnx_qkind_of(const weft_onnx_qtable *qt, weft_value v)
{
    return v >= 0 && v < qt->n ? (weft_onnx_qkind)qt->kinds[v] : WEFT_ONNX_Q_NONE;
}

bool weft_onnx_qkind_set(weft_onnx_qtable *qt, weft_value v, weft_onnx_qkind k)
{
    if (v < 0) return true;
    if (v >= qt->n) {
        int n = qt->n ? qt->n : 64;
        while (n <= v) n *= 2;
        uint8_t *p = weft_realloc(qt->kinds, (size_t)n);
        if (p == NULL) return false;
        memset(p + qt->n, WEFT_ONNX_Q_NONE, (size_t)(n - qt->n));
        qt->kinds = p;
        qt->n = n;
    }
    qt->kinds[v] = (uint8_t)k;
    return true;
}

void weft_onnx_qtable_free(weft_onnx_qtable *qt)
{
    free(qt->kinds);
    qt->kinds = NULL;
    qt->n = 0;
}

/* ---- the rewrite ------------------------------------------------------------------------- */

/* The node being rewritten. names: its ONNX input names, for messages. */
typedef struct qnode {
    weft_graph *g;
    const char *op, *nname;
    int n_in;
    const weft_value *ins;
    const char *const *names;
    int n_attrs;
    const weft_attr *attrs;
} qnode;

static const char *in_name(const qnode *q, int i)
{
    return q->names && i < q->n_in && q->names[i] ? q->names[i] : "?";
}

static const char *type_name(weft_type t)
{
    switch (t) {
    case WEFT_TYPE_FLOAT32: return "FLOAT";
    case WEFT_TYPE_INT64: return "INT64";
    case WEFT_TYPE_INT32: return "INT32";
    default: return "BOOL";
    }
}

static int64_t numel_of(int nd, const int64_t *sh)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= sh[d];
    return n;
}

/* A node's scale / zero point layout: per tensor (c == 0) or along x's axis (c elements,
 * reshaped to [c, 1 x tail]). */
typedef struct qlayout {
    int64_t c; /* elements along the axis; 0: per tensor */
    int tail;  /* dims of x after the axis */
} qlayout;

static weft_status plan_layout(const qnode *q, qlayout *lay)
{
    int64_t ss[8], xs[8];
    int snd = weft_graph_value_shape(q->g, q->ins[1], ss);
    char sd[128];
    weft_onnx_dims_str(sd, sizeof sd, (size_t)(snd > 0 ? snd : 0), ss);
    lay->c = 0, lay->tail = 0;
    if (snd < 0)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': scale '%s' has a shape known only at run time", q->op,
                         q->nname, in_name(q, 1));
    if (snd > 1)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': scale '%s' has shape %s; only a scalar or a 1-D "
                         "(per-axis) scale is supported (blocked quantization is not)", q->op, q->nname, in_name(q, 1),
                         sd);
    if (snd == 0 || ss[0] == 1) return WEFT_OK;
    const weft_attr *ax = weft_onnx_find_attr(q->n_attrs, q->attrs, "axis", WEFT_ATTR_INT);
    int64_t axis = ax ? ax->i : 1;
    int xnd = weft_graph_value_shape(q->g, q->ins[0], xs);
    if (xnd < 0)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': per-axis scale %s on '%s', whose rank is known only "
                         "at run time", q->op, q->nname, sd, in_name(q, 0));
    if (axis < -xnd || axis >= xnd)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': axis %lld is out of range for input '%s' of rank %d",
                         q->op, q->nname, (long long)axis, in_name(q, 0), xnd);
    if (axis < 0) axis += xnd;
    if (xs[axis] >= 0 && xs[axis] != ss[0]) {
        char xd[128];
        weft_onnx_dims_str(xd, sizeof xd, (size_t)xnd, xs);
        return weft_fail(WEFT_ERR_SHAPE, "%s node '%s': scale '%s' has %lld elements, input '%s' %s has %lld along "
                         "axis %lld", q->op, q->nname, in_name(q, 1), (long long)ss[0], in_name(q, 0), xd,
                         (long long)xs[axis], (long long)axis);
    }
    lay->c = ss[0];
    lay->tail = xnd - 1 - (int)axis;
    return WEFT_OK;
}

/* The zero point (input 2) as floats (*n of them into *out, malloc'd), whether any is nonzero,
 * and what it was in the file (*kind). It must be a constant decoded from int8 or uint8 (for
 * DequantizeLinear also int32) of the scale's shape. */
static weft_status zero_point(const qnode *q, const weft_onnx_qtable *qt, bool quantize, weft_onnx_qkind *kind,
                              float **out, int64_t *n, bool *nonzero)
{
    weft_graph *g = q->g;
    weft_value zp = q->ins[2];
    *out = NULL;
    *kind = weft_onnx_qkind_of(qt, zp);
    const int32_t *d = weft_graph_value_data(g, zp);
    if (d == NULL)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': zero point '%s' is computed at run time; it must be a "
                         "constant (initializer or Constant) of type int8 or uint8", q->op, q->nname, in_name(q, 2));
    weft_type t = weft_graph_value_type(g, zp);
    bool ok = *kind == WEFT_ONNX_Q_INT8 || *kind == WEFT_ONNX_Q_UINT8 || (!quantize && t == WEFT_TYPE_INT32);
    if (!ok || t != WEFT_TYPE_INT32)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': zero point '%s' is a constant of type %s (or computed "
                         "from one); only int8 and uint8 zero points are supported", q->op, q->nname, in_name(q, 2),
                         type_name(t));
    int64_t zs[8], ss[8];
    int znd = weft_graph_value_shape(g, zp, zs), snd = weft_graph_value_shape(g, q->ins[1], ss);
    *n = numel_of(znd, zs);
    if (*n != numel_of(snd, ss) || znd > 1) {
        char zd[128], sd[128];
        weft_onnx_dims_str(zd, sizeof zd, (size_t)(znd > 0 ? znd : 0), zs);
        weft_onnx_dims_str(sd, sizeof sd, (size_t)(snd > 0 ? snd : 0), ss);
        return weft_fail(WEFT_ERR_SHAPE, "%s node '%s': zero point '%s' has shape %s, scale '%s' %s; they must "
                         "match", q->op, q->nname, in_name(q, 2), zd, in_name(q, 1), sd);
    }
    float *f = weft_malloc((size_t)(*n > 0 ? *n : 1) * sizeof *f);
    if (f == NULL) return weft_fail(WEFT_ERR_NOMEM, "%s node '%s': out of memory", q->op, q->nname);
    *nonzero = false;
    for (int64_t i = 0; i < *n; i++) {
        f[i] = (float)d[i];
        *nonzero = *nonzero || d[i] != 0;
    }
    *out = f;
    return WEFT_OK;
}

/* The scale laid out to broadcast against x: [c, 1 x tail] per axis (a new constant, or a
 * Reshape of a computed scale), as it is per tensor or along the last axis. */
static weft_status layout_scale(const qnode *q, const qlayout *lay, weft_value *out)
{
    if (lay->c == 0 || lay->tail == 0) {
        *out = q->ins[1];
        return WEFT_OK;
    }
    return weft_onnx_axis_param(q->g, q->nname, ".scale", q->ins[1], 1 + lay->tail, lay->c, out);
}

/* The zero point's float values zf (zn of them) as a constant laid out like the scale. */
static weft_status layout_zero_point(const qnode *q, const qlayout *lay, const float *zf, int64_t zn, weft_value *out)
{
    int64_t sh[8] = {lay->c, 1, 1, 1, 1, 1, 1, 1}, one = zn;
    char name[300];
    snprintf(name, sizeof name, "%s.zero_point", q->nname);
    if (lay->c == 0) return weft_graph_add_constant(q->g, name, WEFT_TYPE_FLOAT32, zn == 1 ? 0 : 1, &one, zf, out);
    return weft_graph_add_constant(q->g, name, WEFT_TYPE_FLOAT32, 1 + lay->tail, sh, zf, out);
}

/* Attributes of later opsets that change the result: refused rather than ignored. */
static weft_status check_node(const qnode *q, int n_out)
{
    if (q->n_in < 2 || q->n_in > 3 || q->ins[0] < 0 || q->ins[1] < 0 || n_out != 1)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s node '%s': has %d inputs and %d outputs, expected 2 or 3 (x, "
                         "scale, zero point) and 1", q->op, q->nname, q->n_in, n_out);
    if (weft_graph_value_type(q->g, q->ins[1]) != WEFT_TYPE_FLOAT32)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': scale '%s' is not float32", q->op, q->nname,
                         in_name(q, 1));
    for (int i = 0; i < q->n_attrs; i++) {
        const char *a = q->attrs[i].name ? q->attrs[i].name : "";
        if (strcmp(a, "axis") == 0 && q->attrs[i].kind == WEFT_ATTR_INT) continue;
        if (strcmp(a, "saturate") == 0 || strcmp(a, "output_dtype") == 0 || strcmp(a, "block_size") == 0)
            return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': attribute '%s' (opset 19+: float8 or blocked "
                             "quantization) is not supported", q->op, q->nname, a);
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': attribute '%s' is not supported", q->op, q->nname,
                         a);
    }
    return WEFT_OK;
}

/* QuantizeLinear: Clip(Round(x / s) + zp, qmin, qmax). */
static weft_status quantize(const qnode *q, weft_onnx_qtable *qt, weft_value *outs)
{
    weft_graph *g = q->g;
    if (weft_graph_value_type(g, q->ins[0]) != WEFT_TYPE_FLOAT32)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': input '%s' is not float32", q->op, q->nname,
                         in_name(q, 0));
    qlayout lay;
    weft_status rc = plan_layout(q, &lay);
    if (rc != WEFT_OK) return rc;
    weft_onnx_qkind kind = WEFT_ONNX_Q_UINT8; /* no zero point: uint8, zero point 0 */
    float *zf = NULL;
    int64_t zn = 0;
    bool nonzero = false;
    if (q->n_in == 3 && q->ins[2] >= 0 && (rc = zero_point(q, qt, true, &kind, &zf, &zn, &nonzero)) != WEFT_OK)
        return rc;
    float lo = kind == WEFT_ONNX_Q_INT8 ? -128.0f : 0.0f, hi = kind == WEFT_ONNX_Q_INT8 ? 127.0f : 255.0f;
    weft_value s, z = -1, lov, hiv, d, r;
    char name[300];
    rc = layout_scale(q, &lay, &s);
    if (rc == WEFT_OK && nonzero) rc = layout_zero_point(q, &lay, zf, zn, &z);
    free(zf);
    snprintf(name, sizeof name, "%s.qmin", q->nname);
    if (rc == WEFT_OK) rc = weft_graph_add_constant(g, name, WEFT_TYPE_FLOAT32, 0, (int64_t[]){1}, &lo, &lov);
    snprintf(name, sizeof name, "%s.qmax", q->nname);
    if (rc == WEFT_OK) rc = weft_graph_add_constant(g, name, WEFT_TYPE_FLOAT32, 0, (int64_t[]){1}, &hi, &hiv);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Div", q->nname, "/div", 2, (weft_value[]){q->ins[0], s}, 0, NULL, &d);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Round", q->nname, "/round", 1, &d, 0, NULL, &r);
    if (rc == WEFT_OK && z >= 0)
        rc = weft_onnx_add_op1(g, "Add", q->nname, "/zero_point", 2, (weft_value[]){r, z}, 0, NULL, &r);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Clip", q->nname, "", 3, (weft_value[]){r, lov, hiv}, 0, NULL, outs);
    if (rc == WEFT_OK && !weft_onnx_qkind_set(qt, outs[0], WEFT_ONNX_Q_RESULT))
        rc = weft_fail(WEFT_ERR_NOMEM, "%s node '%s': out of memory", q->op, q->nname);
    return rc;
}

/* DequantizeLinear: (Cast(x, float) - zp) * s. */
static weft_status dequantize(const qnode *q, const weft_onnx_qtable *qt, weft_value *outs)
{
    weft_graph *g = q->g;
    weft_type xt = weft_graph_value_type(g, q->ins[0]);
    if (xt == WEFT_TYPE_BOOL)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': input '%s' is bool", q->op, q->nname, in_name(q, 0));
    qlayout lay;
    weft_status rc = plan_layout(q, &lay);
    if (rc != WEFT_OK) return rc;
    weft_onnx_qkind kind;
    float *zf = NULL;
    int64_t zn = 0;
    bool nonzero = false;
    if (q->n_in == 3 && q->ins[2] >= 0 && (rc = zero_point(q, qt, false, &kind, &zf, &zn, &nonzero)) != WEFT_OK)
        return rc;
    weft_value s, z = -1, x = q->ins[0];
    rc = layout_scale(q, &lay, &s);
    if (rc == WEFT_OK && nonzero) rc = layout_zero_point(q, &lay, zf, zn, &z);
    free(zf);
    weft_attr to = {.name = "to", .kind = WEFT_ATTR_INT, .i = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT};
    if (rc == WEFT_OK && xt != WEFT_TYPE_FLOAT32)
        rc = weft_onnx_add_op1(g, "Cast", q->nname, "/cast", 1, &x, 1, &to, &x);
    if (rc == WEFT_OK && z >= 0)
        rc = weft_onnx_add_op1(g, "Sub", q->nname, "/zero_point", 2, (weft_value[]){x, z}, 0, NULL, &x);
    if (rc == WEFT_OK) rc = weft_onnx_add_op1(g, "Mul", q->nname, "", 2, (weft_value[]){x, s}, 0, NULL, outs);
    return rc;
}

weft_status weft_onnx_qdq(weft_graph *g, weft_onnx_qtable *qt, const char *op_type, const char *nname, int n_in,
                          const weft_value *ins, const char *const *in_names, int n_attrs, const weft_attr *attrs,
                          int n_out, weft_value *outs, bool *done)
{
    *done = false;
    bool is_q = strcmp(op_type, "QuantizeLinear") == 0;
    if (!is_q && strcmp(op_type, "DequantizeLinear") != 0) return WEFT_OK;
    qnode q = {.g = g, .op = op_type, .nname = nname, .n_in = n_in, .ins = ins, .names = in_names,
               .n_attrs = n_attrs, .attrs = attrs};
    weft_status rc = check_node(&q, n_out);
    if (rc == WEFT_OK) rc = is_q ? quantize(&q, qt, outs) : dequantize(&q, qt, outs);
    *done = rc == WEFT_OK;
    return rc;
}

weft_status weft_onnx_qdq_type_error(const weft_onnx_ctx *cx, const Onnx__GraphProto *gp, const char *name, int32_t dt)
{
    if (gp == NULL || name == NULL || (gp->n_node && gp->node == NULL)) return WEFT_OK;
    for (size_t k = 0; k < gp->n_node; k++) {
        const Onnx__NodeProto *n = gp->node[k];
        if (n == NULL || n->op_type == NULL || (n->n_input && n->input == NULL)) continue;
        bool q = strcmp(n->op_type, "QuantizeLinear") == 0;
        if (!q && strcmp(n->op_type, "DequantizeLinear") != 0) continue;
        for (size_t i = 0; i < n->n_input; i++) {
            if (n->input[i] == NULL || strcmp(n->input[i], name) != 0) continue;
            const char *role = i == 0 ? "input" : i == 1 ? "scale" : "zero point";
            char made[128];
            const char *nname = n->name;
            if (nname == NULL || nname[0] == '\0') { /* as the loader names it */
                snprintf(made, sizeof made, "%.100s_%zu", n->op_type, k);
                nname = made;
            }
            return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: %s node '%s': %s '%s' has data type %s (%d); only int8 and "
                             "uint8 quantization is supported", cx->src, n->op_type, nname, role, name,
                             weft_onnx_dtype_name(dt), (int)dt);
        }
    }
    return WEFT_OK;
}

weft_status weft_onnx_qdq_output_error(const weft_onnx_ctx *cx, const Onnx__GraphProto *gp, const char *name)
{
    char made[128];
    const char *nname = "?", *op = "QuantizeLinear";
    for (size_t k = 0; gp->node && k < gp->n_node; k++) {
        const Onnx__NodeProto *n = gp->node[k];
        for (size_t i = 0; n && n->output && i < n->n_output; i++) {
            if (n->output[i] == NULL || strcmp(n->output[i], name) != 0) continue;
            op = n->op_type ? n->op_type : op;
            nname = n->name;
            if (nname == NULL || nname[0] == '\0') { /* as the loader names it */
                snprintf(made, sizeof made, "%.100s_%zu", op, k);
                nname = made;
            }
        }
    }
    return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: graph output '%s' is the result of node '%s' (%s): int8 graph outputs "
                     "are not supported (QDQ models run in float; dequantize the output)", cx->src, name, nname, op);
}
