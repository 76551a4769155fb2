/* Graph passes before fusion.
 *
 * fold_constants: a node whose inputs are all constants (or whose outputs follow from input
 *   shapes alone: Shape, Size, ConstantOfShape) is evaluated now and its outputs become
 *   constants. Evaluation reuses the node's own tensor-expression compute, run by the loop-IR
 *   interpreter under the naive schedule: no second implementation of any op.
 * fold_batchnorm: Conv -> BatchNormalization with constant weights and statistics becomes one
 *   Conv with scaled weights and a new bias: w' = w * s, b' = (b - mean) * s + beta with
 *   s = scale / sqrt(var + eps) per output channel.
 * fold_prenorm: BatchNormalization -> Conv without padding (a pre-norm block's BN before its 1x1
 *   conv) folds into the conv's weights and bias: w' = w * s[c], b' = b + sum w * t[c] with
 *   BN(x) = x * s + t (exact: no tap reads padding); see fold_prenorm below.
 * pretranspose_weights: a Gemm that reads a constant B transposed (transB=1, how PyTorch
 *   exports Linear) gets B^T as a new constant and transB=0, so its kernel streams the weight
 *   along the output axis with unit stride (vector loads, not gathers).
 * conv_weight_layout: a Conv with constant weights [F, C/group, KH, KW] (group 1, or groups of
 *   whole filter blocks; not depthwise) reads them laid out in filter blocks
 *   [ceil(F/fb), C/group, KH, KW, fb] (fb = the vector width; filters past F are zero), so a
 *   block of output channels is one contiguous vector at every tap and the default schedule
 *   (schedule/default_conv.c) vectorizes over it whatever the image size: NCHW nets with small
 *   spatial extents (a ResNet's late layers are 7x7 to 1x1) have no other wide vector axis.
 *   Pointwise convs whose output planes are whole vectors (or hold several vectors, with few
 *   input channels) keep [F, C, 1, 1] and reduce over fused pixels (pointwise_rows); convs
 *   with a window over few input channels (stems) keep [F, C, KH, KW] and are vectorized along
 *   output columns (columns_form).
 *   3x3 convs with enough channels and tiles run as Winograd F(2x2, 3x3) or F(4x4, 3x3) instead
 *   (winograd_form; WEFT_WINOGRAD=0 off, 2 or 4 one size only), their weights transformed here.
 * matmul_weight_layout: a MatMul/Gemm with a constant 2-D B [K, N] reads it blocked as
 *   [ceil(N/nb), K, nb] (nb = the register tile's width; a last partial block is zero-padded),
 *   so the panel a register tile streams is contiguous: no 4 KiB-strided rows fighting over L1
 *   sets, no packing at run time. N need not divide: a 1280 -> 1000 classifier's GEMV read its
 *   [1280, 1000] weight as 1 KiB pieces 4000 bytes apart.
 * conv_dead_taps: a Conv with constant weights whose outer taps read only padding for every
 *   output (an ASPP's 3x3 convs dilated 12, 24, 36 on a 4x4 map: only the centre tap ever
 *   touches the image) loses those taps and the padding they reached; a single tap left along
 *   an axis drops its dilation, so such a conv becomes pointwise (and takes that form's
 *   layout and schedule). The output is unchanged: the dropped taps only ever added zeros.
 * sink_unit_views: a view that only drops or inserts extent-1 dims (the Squeeze after a 1-D
 *   conv lifted to 2-D) read by one elementwise op whose other operands are scalar constants
 *   moves below that op, so the op fuses into the conv's epilogue (fusion takes no epilogue
 *   through a view) and the view reads its output instead.
 * dead_code: nodes none of whose outputs is used are marked dead; unread constants are freed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "model/model_internal.h"
#include "schedule/schedule.h"
#include "compile/build.h"
#include "ops/graph_ops.h"
#include "runtime/mem.h"

int weft_model_storage_root(const weft_graph *g, int v)
{
    for (int depth = 0; depth < g->n_nodes && v >= 0; depth++) {
        int p = g->values[v].producer;
        if (p < 0 || !g->nodes[p].def || !g->nodes[p].def->alias || g->values[v].data) return v;
        v = g->nodes[p].inputs[0];
    }
    return v;
}

/* Evaluates node ni with the interpreter; its outputs become constants. */
static weft_status eval_node(weft_graph *g, int ni)
{
    weft_gnode *n = &g->nodes[ni];
    const weft_op_def *def = n->def;
    if (def->eval_static) {
        for (int k = 0; k < n->n_outputs; k++) {
            void *data = NULL;
            weft_status rc = def->eval_static(g, n, k, &data);
            if (rc != WEFT_OK) return rc;
            g->values[n->outputs[k]].data = data;
        }
        n->dead = true;
        return WEFT_OK;
    }
    if (def->alias) {
        const weft_gvalue *in = &g->values[n->inputs[0]];
        weft_gvalue *o = &g->values[n->outputs[0]];
        size_t b = weft_gvalue_bytes(o);
        if (b != weft_gvalue_bytes(in)) return weft_fail(WEFT_ERR_INTERNAL, "%s node '%s': alias size mismatch", n->op_type, n->name);
        o->data = weft_malloc(b ? b : 1);
        if (!o->data) return weft_fail(WEFT_ERR_NOMEM, "out of memory folding %s", n->name);
        memcpy(o->data, in->data, b);
        n->dead = true;
        return WEFT_OK;
    }
    /* Empty outputs (shape arithmetic of slice assignments) hold nothing to compute. */
    bool all_empty = true;
    for (int o = 0; o < n->n_outputs; o++)
        if (weft_gvalue_numel(&g->values[n->outputs[o]]) > 0) all_empty = false;
    if (all_empty) {
        for (int o = 0; o < n->n_outputs; o++) {
            g->values[n->outputs[o]].data = weft_calloc(1, 1);
            if (!g->values[n->outputs[o]].data) {
                for (int p = 0; p < o; p++) {
                    free(g->values[n->outputs[p]].data);
                    g->values[n->outputs[p]].data = NULL;
                }
                return weft_fail(WEFT_ERR_NOMEM, "out of memory folding %s", n->name);
            }
        }
        n->dead = true;
        return WEFT_OK;
    }
    weft_arena *a = weft_arena_create();
    const weft_target_ops *interp = weft_target_find("interp");
    weft_target *t = NULL;
    weft_schedule *s = NULL;
    weft_kernel *k = NULL;
    weft_status rc = WEFT_OK;
    const weft_tensor *ins[WEFT_NODE_MAX_IO] = {0};
    weft_tensor *outs[WEFT_NODE_MAX_IO] = {0};
    const weft_tensor *ph[WEFT_NODE_MAX_IO];
    void *args[2 * WEFT_NODE_MAX_IO];
    int n_ph = 0;
    if (!a || !interp) {
        rc = weft_fail(WEFT_ERR_NOMEM, "out of memory folding %s", n->name);
        goto done;
    }
    for (int i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i] < 0) continue;
        const weft_gvalue *v = &g->values[n->inputs[i]];
        char nm[16];
        snprintf(nm, sizeof nm, "in%d", i);
        weft_tensor *p = weft_te_placeholder(a, nm, v->dtype, v->ndim, v->shape);
        ins[i] = p;
        ph[n_ph] = p;
        args[n_ph++] = v->data;
    }
    rc = def->compute(a, g, n, "out", ins, outs);
    if (rc != WEFT_OK) goto done;
    weft_te_func *f = NULL;
    rc = weft_te_func_create(a, n->name, n_ph, ph, n->n_outputs, (const weft_tensor *const *)outs, &f);
    if (rc == WEFT_OK) rc = weft_schedule_create(f, &s);
    if (rc == WEFT_OK) rc = interp->create(&t);
    if (rc == WEFT_OK) rc = weft_target_build(interp, t, s, a, NULL, &k);
    for (int o = 0; rc == WEFT_OK && o < n->n_outputs; o++) {
        weft_gvalue *v = &g->values[n->outputs[o]];
        size_t b = weft_gvalue_bytes(v);
        v->data = weft_calloc(1, b ? b : 1);
        args[n_ph + o] = v->data;
        if (!v->data) rc = weft_fail(WEFT_ERR_NOMEM, "out of memory folding %s", n->name);
    }
    if (rc == WEFT_OK) rc = interp->run(k, args, NULL);
    if (rc == WEFT_OK) n->dead = true;
    else
        for (int o = 0; o < n->n_outputs; o++) {
            free(g->values[n->outputs[o]].data);
            g->values[n->outputs[o]].data = NULL;
        }
done:
    if (k) interp->kernel_destroy(k);
    if (t) interp->destroy(t);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
    return rc;
}

static bool foldable(const weft_graph *g, const weft_gnode *n)
{
    bool all_const = true;
    for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0 && !g->values[n->inputs[k]].data) all_const = false;
    return all_const || n->def->eval_static;
}

/* The largest constant a shape-only op (ConstantOfShape, Range, ...) may produce. */
#define WEFT_FOLD_STATIC_MAX_BYTES ((int64_t)256 << 20)

/* Folds node ni when its inputs are constants and its outputs hold at most max_elems elements
 * (shape-only ops always fold). */
static weft_status fold_node(weft_graph *g, int ni, int64_t max_elems)
{
    const weft_gnode *n = &g->nodes[ni];
    if (n->dead || !foldable(g, n)) return WEFT_OK;
    int64_t work = 0;
    for (int k = 0; k < n->n_outputs; k++) work += weft_gvalue_numel(&g->values[n->outputs[k]]);
    if (work > max_elems && !n->def->eval_static) return WEFT_OK;
    /* Shape-only ops fold at any size, and their result is held in memory: refuse a huge one
     * (a ConstantOfShape of a hostile shape) with an error instead of allocating it. */
    for (int k = 0; n->def->eval_static && k < n->n_outputs; k++) {
        const weft_gvalue *o = &g->values[n->outputs[k]];
        int64_t numel = weft_gvalue_numel(o), eb = weft_dtype_bytes(o->dtype);
        if (numel > WEFT_FOLD_STATIC_MAX_BYTES / (eb > 0 ? eb : 1))
            return weft_fail(WEFT_ERR_UNSUPPORTED,
                             "%s node '%s': output %d has %lld elements, over the %lld MiB limit on constants "
                             "computed at load time",
                             n->op_type, n->name, k, (long long)numel, (long long)(WEFT_FOLD_STATIC_MAX_BYTES >> 20));
    }
    weft_status rc = eval_node(g, ni);
    if (rc != WEFT_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", weft_last_error());
        return weft_fail(rc, "evaluating %s node '%s' on constants: %s", n->op_type, n->name, msg);
    }
    return WEFT_OK;
}

/* While building a graph only shape arithmetic is folded; weights wait for compile time. */
weft_status weft_model_fold_small(weft_graph *g, int ni) { return fold_node(g, ni, 4096); }

weft_status weft_model_fold_constants(weft_graph *g)
{
    /* Elementwise work on weights is cheap to fold once; refuse only the absurd. */
    for (int i = 0; i < g->n_nodes; i++) {
        weft_status rc = fold_node(g, i, (int64_t)1 << 26);
        if (rc != WEFT_OK) return rc;
    }
    return WEFT_OK;
}

weft_status weft_model_fold_batchnorm(weft_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        weft_gnode *bn = &g->nodes[i];
        if (bn->dead || strcmp(bn->op_type, "BatchNormalization") || bn->n_inputs < 5 || bn->n_outputs != 1) continue;
        int x = bn->inputs[0];
        int ci = g->values[x].producer;
        if (ci < 0 || g->nodes[ci].dead || strcmp(g->nodes[ci].op_type, "Conv") || weft_graph_n_uses(g, x) != 1 ||
            g->values[x].is_output)
            continue;
        bool consts = true;
        for (int k = 1; k < 5; k++) consts = consts && bn->inputs[k] >= 0 && g->values[bn->inputs[k]].data;
        weft_gnode *conv = &g->nodes[ci];
        int w = conv->inputs[1], b = conv->n_inputs > 2 ? conv->inputs[2] : -1;
        if (!consts || !g->values[w].data || (b >= 0 && !g->values[b].data)) continue;
        if (!weft_dtype_eq(g->values[w].dtype, WEFT_F32)) continue;
        const weft_gvalue *wv = &g->values[w];
        int64_t F = wv->shape[0], per = weft_gvalue_numel(wv) / (F ? F : 1);
        const float *scale = g->values[bn->inputs[1]].data, *beta = g->values[bn->inputs[2]].data;
        const float *mean = g->values[bn->inputs[3]].data, *var = g->values[bn->inputs[4]].data;
        if (weft_gvalue_numel(&g->values[bn->inputs[1]]) != F) continue;
        double eps = weft_gnode_attr_float(bn, "epsilon", 1e-5);
        char name[200];
        snprintf(name, sizeof name, "%.180s.bnw", wv->name);
        int nw = weft_graph_new_value(g, name, WEFT_F32, wv->ndim, wv->shape);
        snprintf(name, sizeof name, "%.180s.bnb", wv->name);
        int64_t fshape[1] = {F};
        int nb = weft_graph_new_value(g, name, WEFT_F32, 1, fshape);
        if (nw < 0 || nb < 0) return weft_fail(WEFT_ERR_NOMEM, "out of memory folding BN %s", bn->name);
        bn = &g->nodes[i];
        conv = &g->nodes[ci];
        float *w2 = weft_malloc(sizeof(float) * (size_t)((F * per) > 0 ? F * per : 1)), *b2 = weft_malloc(sizeof(float) * (size_t)(F ? F : 1));
        if (!w2 || !b2) {
            free(w2);
            free(b2);
            return weft_fail(WEFT_ERR_NOMEM, "out of memory folding BN %s", bn->name);
        }
        const float *w1 = g->values[w].data, *b1 = b >= 0 ? g->values[b].data : NULL;
        for (int64_t f = 0; f < F; f++) {
            double s = scale[f] / sqrt((double)var[f] + eps);
            for (int64_t e = 0; e < per; e++) w2[f * per + e] = (float)(w1[f * per + e] * s);
            b2[f] = (float)(((b1 ? b1[f] : 0.0) - mean[f]) * s + beta[f]);
        }
        g->values[nw].data = w2;
        g->values[nb].data = b2;
        conv->inputs[1] = nw;
        if (conv->n_inputs < 3) conv->n_inputs = 3;
        conv->inputs[2] = nb;
        weft_graph_replace_uses(g, bn->outputs[0], x);
        if (g->values[bn->outputs[0]].is_output) g->values[x].is_output = true;
        bn->dead = true;
    }
    return WEFT_OK;
}

/* BatchNormalization -> Conv (MaxViT's and other pre-norm blocks: BN, then a 1x1 conv): when
 * the BN's constant statistics make it x * s + t per channel and every reader is a Conv with
 * constant weights and no padding (every tap reads the image, never a zero that would not have
 * gone through the BN), the BN folds into each reader: w'[f, c, ..] = w[f, c, ..] * s[c] and
 * b'[f] = b[f] + sum over c and taps of w[f, c, ..] * t[c] (c the input channel the filter's
 * group reads). The BN disappears; its input feeds the convs. */
static bool unpadded_conv_reader(const weft_graph *g, const weft_gnode *n, int v)
{
    if (n->dead || strcmp(n->op_type, "Conv") || n->n_inputs < 2 || n->inputs[0] != v || n->n_outputs != 1)
        return false;
    int w = n->inputs[1], b = n->n_inputs > 2 ? n->inputs[2] : -1;
    if (!g->values[w].data || !weft_dtype_eq(g->values[w].dtype, WEFT_F32) || g->values[w].ndim < 3 ||
        (b >= 0 && (!g->values[b].data || !weft_dtype_eq(g->values[b].dtype, WEFT_F32))))
        return false;
    const char *ap = weft_gnode_attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) return false;
    const int64_t *pads = NULL;
    int np = weft_gnode_attr_ints(n, "pads", &pads);
    for (int i = 0; i < np; i++)
        if (pads[i] != 0) return false;
    int64_t group = weft_gnode_attr_int(n, "group", 1);
    const weft_gvalue *x = &g->values[v];
    return group >= 1 && x->ndim >= 3 && x->shape[1] == g->values[w].shape[1] * group;
}

static weft_status fold_prenorm(weft_graph *g, int i)
{
    weft_gnode *bn = &g->nodes[i];
    if (bn->dead || strcmp(bn->op_type, "BatchNormalization") || bn->n_inputs < 5 || bn->n_outputs != 1) return WEFT_OK;
    int y = bn->outputs[0], x = bn->inputs[0];
    if (g->values[y].is_output || g->values[x].ndim < 3 || !weft_dtype_eq(g->values[x].dtype, WEFT_F32)) return WEFT_OK;
    for (int k = 1; k < 5; k++)
        if (bn->inputs[k] < 0 || !g->values[bn->inputs[k]].data ||
            !weft_dtype_eq(g->values[bn->inputs[k]].dtype, WEFT_F32))
            return WEFT_OK;
    int64_t C = g->values[x].shape[1];
    for (int k = 1; k < 5; k++)
        if (weft_gvalue_numel(&g->values[bn->inputs[k]]) != C) return WEFT_OK;
    int readers = 0;
    for (int j = 0; j < g->n_nodes; j++) {
        const weft_gnode *u = &g->nodes[j];
        bool reads = false;
        for (int m = 0; m < u->n_inputs && !u->dead; m++) reads = reads || u->inputs[m] == y;
        if (!reads) continue;
        if (!unpadded_conv_reader(g, u, y)) return WEFT_OK;
        readers++;
    }
    if (!readers) return WEFT_OK;
    double eps = weft_gnode_attr_float(bn, "epsilon", 1e-5);
    double *s = weft_malloc(sizeof(double) * (size_t)C * 2);
    if (!s) return weft_fail(WEFT_ERR_NOMEM, "out of memory folding BN %s", bn->name);
    double *t = s + C;
    {
        const float *scale = g->values[bn->inputs[1]].data, *beta = g->values[bn->inputs[2]].data;
        const float *mean = g->values[bn->inputs[3]].data, *var = g->values[bn->inputs[4]].data;
        for (int64_t c = 0; c < C; c++) {
            s[c] = scale[c] / sqrt((double)var[c] + eps);
            t[c] = beta[c] - mean[c] * s[c];
        }
    }
    for (int j = 0; j < g->n_nodes; j++) {
        weft_gnode *u = &g->nodes[j];
        bool reads = false;
        for (int m = 0; m < u->n_inputs && !u->dead; m++) reads = reads || u->inputs[m] == y;
        if (!reads) continue;
        int w = u->inputs[1], b = u->n_inputs > 2 ? u->inputs[2] : -1;
        const weft_gvalue *wv = &g->values[w];
        int64_t F = wv->shape[0], Cg = wv->shape[1], taps = weft_gvalue_numel(wv) / (F * Cg);
        int64_t fpg = F / (C / Cg); /* filters per group */
        char name[200];
        snprintf(name, sizeof name, "%.180s.prebn", wv->name);
        int nw = weft_graph_new_value(g, name, WEFT_F32, wv->ndim, wv->shape);
        snprintf(name, sizeof name, "%.180s.prebnb", wv->name);
        int nb = weft_graph_new_value(g, name, WEFT_F32, 1, (int64_t[]){F});
        float *w2 = weft_malloc(sizeof(float) * (size_t)(F * Cg * taps)), *b2 = weft_malloc(sizeof(float) * (size_t)F);
        if (nw < 0 || nb < 0 || !w2 || !b2) {
            free(w2), free(b2), free(s);
            return weft_fail(WEFT_ERR_NOMEM, "out of memory folding BN %s", g->nodes[i].name);
        }
        u = &g->nodes[j];
        const float *w1 = g->values[w].data, *b1 = b >= 0 ? g->values[b].data : NULL;
        for (int64_t f = 0; f < F; f++) {
            double acc = b1 ? b1[f] : 0.0;
            for (int64_t cl = 0; cl < Cg; cl++) {
                int64_t c = (f / fpg) * Cg + cl;
                for (int64_t k = 0; k < taps; k++) {
                    int64_t e = (f * Cg + cl) * taps + k;
                    w2[e] = (float)(w1[e] * s[c]);
                    acc += w1[e] * t[c];
                }
            }
            b2[f] = (float)acc;
        }
        g->values[nw].data = w2;
        g->values[nb].data = b2;
        u->inputs[0] = x;
        u->inputs[1] = nw;
        if (u->n_inputs < 3) u->n_inputs = 3;
        u->inputs[2] = nb;
    }
    free(s);
    g->nodes[i].dead = true;
    return WEFT_OK;
}

weft_status weft_model_fold_prenorm(weft_graph *g)
{
    weft_status rc = WEFT_OK;
    for (int i = 0; i < g->n_nodes && rc == WEFT_OK; i++) rc = fold_prenorm(g, i);
    return rc;
}

/* True when view node a (an alias) only drops or inserts extent-1 dims of its input. */
static bool unit_dims_only(const weft_graph *g, const weft_gnode *a)
{
    const weft_gvalue *x = &g->values[a->inputs[0]], *v = &g->values[a->outputs[0]];
    int i = 0, j = 0;
    for (;;) {
        while (i < x->ndim && x->shape[i] == 1) i++;
        while (j < v->ndim && v->shape[j] == 1) j++;
        if (i == x->ndim || j == v->ndim) return i == x->ndim && j == v->ndim;
        if (x->shape[i++] != v->shape[j++]) return false;
    }
}

weft_status weft_model_sink_unit_views(weft_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        weft_gnode *a = &g->nodes[i];
        if (a->dead || !a->def || !a->def->alias || a->n_outputs != 1 || a->n_inputs < 1 || a->inputs[0] < 0) continue;
        int x = a->inputs[0], v = a->outputs[0];
        if (g->values[x].data || g->values[v].data || g->values[v].is_output || weft_graph_n_uses(g, v) != 1) continue;
        bool consts = true; /* Squeeze's axes, Reshape's shape */
        for (int k = 1; k < a->n_inputs; k++) consts = consts && (a->inputs[k] < 0 || g->values[a->inputs[k]].data);
        if (!consts || !unit_dims_only(g, a)) continue;
        int j = -1, slot = -1;
        for (int m = i + 1; m < g->n_nodes && j < 0; m++)
            for (int k = 0; k < g->nodes[m].n_inputs; k++)
                if (!g->nodes[m].dead && g->nodes[m].inputs[k] == v) j = m, slot = k;
        if (j < 0) continue;
        const weft_gnode *e = &g->nodes[j];
        if (!e->def || e->def->pattern != WEFT_PATTERN_ELEMWISE || e->def->alias || e->n_outputs != 1) continue;
        /* the other operands are scalar constants (they broadcast the same against either shape),
         * and the op's output has the view's shape */
        int w = e->outputs[0];
        bool ok = g->values[w].ndim == g->values[v].ndim &&
                  !memcmp(g->values[w].shape, g->values[v].shape, sizeof(int64_t) * (size_t)g->values[v].ndim);
        for (int k = 0; k < e->n_inputs; k++)
            if (k != slot && e->inputs[k] >= 0)
                ok = ok && g->values[e->inputs[k]].data && weft_gvalue_numel(&g->values[e->inputs[k]]) == 1 &&
                     g->values[e->inputs[k]].ndim <= g->values[x].ndim;
        if (!ok) continue;
        /* E now reads x into v (x's shape, E's dtype) at position i; the view reads v into w at j */
        weft_gnode tmp = g->nodes[i];
        g->nodes[i] = g->nodes[j];
        g->nodes[j] = tmp;
        g->nodes[i].inputs[slot] = x;
        g->nodes[i].outputs[0] = v;
        g->nodes[j].inputs[0] = v;
        g->nodes[j].outputs[0] = w;
        weft_gvalue *vv = &g->values[v];
        vv->dtype = g->values[w].dtype;
        vv->ndim = g->values[x].ndim;
        memcpy(vv->shape, g->values[x].shape, sizeof vv->shape);
        vv->producer = i;
        g->values[w].producer = j;
        i--; /* the elementwise op now at i may be followed by another view to sink */
    }
    return WEFT_OK;
}

weft_status weft_model_pretranspose_weights(weft_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        weft_gnode *n = &g->nodes[i];
        if (n->dead || strcmp(n->op_type, "Gemm") || n->n_inputs < 2 || weft_gnode_attr_int(n, "transB", 0) != 1) continue;
        int b = n->inputs[1];
        const weft_gvalue *bv = &g->values[b];
        if (!bv->data || bv->ndim != 2 || !weft_dtype_eq(bv->dtype, WEFT_F32)) continue;
        int64_t rows = bv->shape[0], cols = bv->shape[1], tshape[2] = {cols, rows};
        char name[200];
        snprintf(name, sizeof name, "%.180s.T", bv->name);
        int t = weft_graph_new_value(g, name, WEFT_F32, 2, tshape);
        float *dst = weft_malloc(sizeof(float) * (size_t)(rows * cols > 0 ? rows * cols : 1));
        if (t < 0 || !dst) {
            free(dst);
            return weft_fail(WEFT_ERR_NOMEM, "out of memory transposing %s", name);
        }
        n = &g->nodes[i];
        const float *src = g->values[b].data;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++) dst[c * rows + r] = src[r * cols + c];
        g->values[t].data = dst;
        n->inputs[1] = t;
        for (int a = 0; a < n->n_attrs; a++)
            if (!strcmp(n->attrs[a].name, "transB")) n->attrs[a].i = 0;
    }
    return WEFT_OK;
}

/* Appends an attribute of kind k named `name` to node n (the caller sets its value). */
static weft_status append_attr(weft_gnode *n, const char *name, weft_attr_kind k, weft_attr **out)
{
    weft_attr *attrs = weft_realloc(n->attrs, sizeof *attrs * (size_t)(n->n_attrs + 1));
    if (!attrs) return WEFT_ERR_NOMEM;
    n->attrs = attrs;
    weft_attr *at = &attrs[n->n_attrs];
    memset(at, 0, sizeof *at);
    at->kind = k;
    at->name = weft_strdup(name);
    if (!at->name) return WEFT_ERR_NOMEM;
    n->n_attrs++;
    *out = at;
    return WEFT_OK;
}

/* Adds (or replaces) a string attribute on node n. */
static weft_status set_string_attr(weft_gnode *n, const char *name, const char *value)
{
    for (int a = 0; a < n->n_attrs; a++)
        if (!strcmp(n->attrs[a].name, name) && n->attrs[a].kind == WEFT_ATTR_STRING) {
            char *v = weft_strdup(value);
            if (!v) return WEFT_ERR_NOMEM;
            free((void *)n->attrs[a].s);
            n->attrs[a].s = v;
            return WEFT_OK;
        }
    weft_attr *at = NULL;
    weft_status rc = append_attr(n, name, WEFT_ATTR_STRING, &at);
    if (rc == WEFT_OK) at->s = weft_strdup(value);
    return rc == WEFT_OK && !at->s ? WEFT_ERR_NOMEM : rc;
}

static weft_status set_int_attr(weft_gnode *n, const char *name, int64_t value);

/* Sets the integer-list attribute `name` of node n to v[0..cnt) (replacing one of that name). */
static weft_status set_ints_attr(weft_gnode *n, const char *name, const int64_t *v, int cnt)
{
    int64_t *copy = weft_malloc(sizeof *copy * (size_t)cnt);
    if (!copy) return WEFT_ERR_NOMEM;
    memcpy(copy, v, sizeof *copy * (size_t)cnt);
    for (int a = 0; a < n->n_attrs; a++)
        if (!strcmp(n->attrs[a].name, name)) {
            free((void *)n->attrs[a].ints);
            n->attrs[a].kind = WEFT_ATTR_INTS;
            n->attrs[a].ints = copy;
            n->attrs[a].n = cnt;
            return WEFT_OK;
        }
    weft_attr *at = NULL;
    weft_status rc = append_attr(n, name, WEFT_ATTR_INTS, &at);
    if (rc != WEFT_OK) {
        free(copy);
        return rc;
    }
    at->ints = copy;
    at->n = cnt;
    return WEFT_OK;
}

/* The attribute `name` of n as cnt integers, or def when n has none; false when it has another count. */
static bool attr_ints_or(const weft_gnode *n, const char *name, int cnt, int64_t def, int64_t *v)
{
    const int64_t *p = NULL;
    int have = weft_gnode_attr_ints(n, name, &p);
    for (int i = 0; i < cnt; i++) v[i] = have == cnt ? p[i] : def;
    return have < 0 || have == cnt;
}

/* The taps [y0, y0 + kh) x [x0, x0 + kw) of conv weights src [fc, KH, KW] into dst [fc, kh, kw]. */
static void copy_taps(const float *src, int64_t fc, int64_t KH, int64_t KW, int64_t y0, int64_t x0, int64_t kh,
                      int64_t kw, float *dst)
{
    for (int64_t i = 0; i < fc; i++)
        for (int64_t y = 0; y < kh; y++)
            for (int64_t x = 0; x < kw; x++) dst[(i * kh + y) * kw + x] = src[(i * KH + y + y0) * KW + x + x0];
}

weft_status weft_model_conv_dead_taps(weft_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        weft_gnode *n = &g->nodes[i];
        if (n->dead || strcmp(n->op_type, "Conv") || n->n_inputs < 2 || n->n_outputs != 1) continue;
        if (strcmp(weft_gnode_attr_string(n, "auto_pad", "NOTSET"), "NOTSET")) continue;
        const weft_gvalue *X = &g->values[n->inputs[0]], *W = &g->values[n->inputs[1]], *Y = &g->values[n->outputs[0]];
        if (!W->data || W->ndim != 4 || X->ndim != 4 || Y->ndim != 4 || !weft_dtype_eq(W->dtype, WEFT_F32)) continue;
        int64_t st[2], dl[2], pads[4], lo[2], hi[2];
        if (!attr_ints_or(n, "strides", 2, 1, st) || !attr_ints_or(n, "dilations", 2, 1, dl) ||
            !attr_ints_or(n, "pads", 4, 0, pads))
            continue;
        bool dead = false, none = false;
        for (int ax = 0; ax < 2; ax++) {
            int64_t K = W->shape[2 + ax], in = X->shape[2 + ax], out = Y->shape[2 + ax];
            lo[ax] = -1, hi[ax] = -1;
            /* tap k is read by some output o when 0 <= o*s - pad + k*d < in for an o in [0, out) */
            for (int64_t k = 0; k < K; k++) {
                /* the smallest o with o*s + first >= 0 is the one that can land in [0, in) */
                int64_t first = k * dl[ax] - pads[ax], o = first >= 0 ? 0 : (-first + st[ax] - 1) / st[ax];
                if (o < out && o * st[ax] + first < in) {
                    if (lo[ax] < 0) lo[ax] = k;
                    hi[ax] = k;
                }
            }
            if (lo[ax] < 0) none = true;
            else if (lo[ax] > 0 || hi[ax] < K - 1) dead = true;
        }
        if (none || !dead) continue;
        /* new pads: the dropped taps' reach comes off the padding (never below 0) */
        int64_t np[4], K2[2];
        bool ok = true;
        for (int ax = 0; ax < 2; ax++) {
            np[ax] = pads[ax] - lo[ax] * dl[ax];
            np[ax + 2] = pads[ax + 2] - (W->shape[2 + ax] - 1 - hi[ax]) * dl[ax];
            K2[ax] = hi[ax] - lo[ax] + 1;
            ok = ok && np[ax] >= 0 && np[ax + 2] >= 0;
        }
        if (!ok) continue;
        int64_t F = W->shape[0], C = W->shape[1], KH = W->shape[2], KW = W->shape[3];
        int64_t shape[4] = {F, C, K2[0], K2[1]};
        char name[200];
        snprintf(name, sizeof name, "%.180s.taps", W->name);
        int nw = weft_graph_new_value(g, name, WEFT_F32, 4, shape);
        float *dst = weft_malloc(sizeof(float) * (size_t)(F * C * K2[0] * K2[1]));
        if (nw < 0 || !dst) {
            free(dst);
            return weft_fail(WEFT_ERR_NOMEM, "out of memory cutting the taps of %s", name);
        }
        n = &g->nodes[i];
        const float *src = g->values[n->inputs[1]].data;
        copy_taps(src, F * C, KH, KW, lo[0], lo[1], K2[0], K2[1], dst);
        g->values[nw].data = dst;
        n->inputs[1] = nw;
        /* a single tap along an axis has no dilation */
        int64_t nd[2] = {K2[0] > 1 ? dl[0] : 1, K2[1] > 1 ? dl[1] : 1};
        weft_status rc = set_ints_attr(n, "pads", np, 4);
        if (rc == WEFT_OK) rc = set_ints_attr(n, "dilations", nd, 2);
        if (rc == WEFT_OK) rc = set_ints_attr(n, "kernel_shape", K2, 2);
        if (rc != WEFT_OK) return weft_fail(rc, "out of memory cutting the taps of %s", name);
    }
    return WEFT_OK;
}

weft_status weft_model_move_before(weft_graph *g, int at, int first)
{
    int n = g->n_nodes, moved = n - first;
    if (moved <= 0 || first <= at) return WEFT_OK;
    weft_gnode *tmp = weft_malloc(sizeof *tmp * (size_t)n);
    int *to = weft_malloc(sizeof *to * (size_t)n);
    if (!tmp || !to) {
        free(tmp), free(to);
        return weft_fail(WEFT_ERR_NOMEM, "out of memory ordering new nodes");
    }
    for (int i = 0; i < n; i++) to[i] = i < at ? i : i >= first ? at + (i - first) : i + moved;
    for (int i = 0; i < n; i++) tmp[to[i]] = g->nodes[i];
    memcpy(g->nodes, tmp, sizeof *tmp * (size_t)n);
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].producer >= 0) g->values[v].producer = to[g->values[v].producer];
    free(tmp), free(to);
    return WEFT_OK;
}

/* ---- dilated convs in bands of output rows and columns ------------------------------------ */

/* Bands of one axis of a stride-1 conv: output positions [start[b], start[b + 1]) read taps
 * [lo[b], hi[b]] (tap k reaches the image at output o when 0 <= o - pad + k*d < in). Returns
 * the band count (0 when some output reaches no tap, or more than BAND_MAX bands), and the
 * fraction of the K taps per output that reach the image in *useful. */
enum { BAND_MAX = 3 };
static int axis_bands(int64_t in, int64_t out, int64_t K, int64_t pad, int64_t d, int64_t *start, int64_t *lo,
                      int64_t *hi, double *useful)
{
    int nb = 0;
    int64_t sum = 0;
    for (int64_t o = 0; o < out; o++) {
        int64_t a = -1, b = -1;
        for (int64_t k = 0; k < K; k++)
            if (o - pad + k * d >= 0 && o - pad + k * d < in) {
                if (a < 0) a = k;
                b = k;
            }
        if (a < 0) return 0;
        sum += b - a + 1;
        if (nb == 0 || lo[nb - 1] != a || hi[nb - 1] != b) {
            if (nb == BAND_MAX) return 0;
            start[nb] = o, lo[nb] = a, hi[nb] = b, nb++;
        }
    }
    start[nb] = out;
    *useful = (double)sum / (double)(out * K);
    return nb;
}

static weft_status band_const(weft_graph *g, const char *base, const char *what, weft_type t, int ndim,
                              const int64_t *shape, const void *data, int *out)
{
    char name[220];
    snprintf(name, sizeof name, "%.180s.%s", base, what);
    return weft_graph_add_constant(g, name, t, ndim, shape, data, out);
}

/* A dilated conv (DeepLab's atrous convs: rate 12 or 24 on a 28x28 map) computes every tap for
 * every output, those reading padding included: at rate 24 on 28x28, 82% of its multiply-adds
 * are by zeros. (Taps that read padding for every output are already gone: conv_dead_taps.)
 * When under BAND_USEFUL of the work reaches the image and each axis has at most BAND_MAX bands
 * of outputs reading the same taps, the conv becomes one conv per (row band, column band): a
 * Slice of the input, the weights of the band's taps, no padding; the bands are concatenated
 * along W, then H, into the conv's output value. Stride 1 only. */
#define BAND_USEFUL 0.75
weft_status weft_model_conv_border_bands(weft_graph *g)
{
    int n_nodes = g->n_nodes;
    for (int i = 0; i < n_nodes; i++) {
        weft_gnode *n = &g->nodes[i];
        if (n->dead || strcmp(n->op_type, "Conv") || n->n_inputs < 2 || n->n_outputs != 1) continue;
        if (strcmp(weft_gnode_attr_string(n, "auto_pad", "NOTSET"), "NOTSET")) continue;
        const weft_gvalue *X = &g->values[n->inputs[0]], *W = &g->values[n->inputs[1]], *Y = &g->values[n->outputs[0]];
        if (!W->data || W->ndim != 4 || X->ndim != 4 || Y->ndim != 4 || !weft_dtype_eq(W->dtype, WEFT_F32)) continue;
        int64_t st[2], dl[2], pads[4];
        if (!attr_ints_or(n, "strides", 2, 1, st) || !attr_ints_or(n, "dilations", 2, 1, dl) ||
            !attr_ints_or(n, "pads", 4, 0, pads) || st[0] != 1 || st[1] != 1 || (dl[0] == 1 && dl[1] == 1))
            continue;
        int64_t start[2][BAND_MAX + 1], lo[2][BAND_MAX], hi[2][BAND_MAX];
        int nb[2];
        double useful[2];
        for (int ax = 0; ax < 2; ax++)
            nb[ax] = axis_bands(X->shape[2 + ax], Y->shape[2 + ax], W->shape[2 + ax], pads[ax], dl[ax], start[ax], lo[ax],
                                hi[ax], &useful[ax]);
        if (!nb[0] || !nb[1] || useful[0] * useful[1] >= BAND_USEFUL) continue;
        char base[160], nm[220];
        snprintf(base, sizeof base, "%.150s", n->name);
        int64_t F = W->shape[0], C = W->shape[1], KH = W->shape[2], KW = W->shape[3];
        int x = n->inputs[0], bias = n->n_inputs > 2 ? n->inputs[2] : -1, y = n->outputs[0], first = g->n_nodes;
        int64_t group = weft_gnode_attr_int(n, "group", 1);
        int rows[BAND_MAX], va = -1; /* the Slices' axes (H, W): one constant for every band */
        weft_status rc = band_const(g, base, "band_axes", WEFT_TYPE_INT64, 1, (int64_t[]){2}, (int64_t[]){2, 3}, &va);
        for (int r = 0; r < nb[0] && rc == WEFT_OK; r++) {
            int cols[BAND_MAX];
            for (int c = 0; c < nb[1] && rc == WEFT_OK; c++) {
                int64_t kh = hi[0][r] - lo[0][r] + 1, kw = hi[1][c] - lo[1][c] + 1;
                /* the input rows the band's outputs read with its taps */
                int64_t s0 = start[0][r] - pads[0] + lo[0][r] * dl[0], s1 = start[1][c] - pads[1] + lo[1][c] * dl[1];
                int64_t e0 = start[0][r + 1] - 1 - pads[0] + hi[0][r] * dl[0] + 1;
                int64_t e1 = start[1][c + 1] - 1 - pads[1] + hi[1][c] * dl[1] + 1;
                float *wd = weft_malloc(sizeof(float) * (size_t)(F * C * kh * kw));
                if (!wd) {
                    rc = weft_fail(WEFT_ERR_NOMEM, "out of memory banding conv '%s'", base);
                    break;
                }
                copy_taps(g->values[g->nodes[i].inputs[1]].data, F * C, KH, KW, lo[0][r], lo[1][c], kh, kw, wd);
                int vw = -1, vs = -1, ve = -1, vx = -1, vy = -1;
                char what[48];
                snprintf(what, sizeof what, "band%d_%d.w", r, c);
                rc = band_const(g, base, what, WEFT_TYPE_FLOAT32, 4, (int64_t[]){F, C, kh, kw}, wd, &vw);
                free(wd);
                snprintf(what, sizeof what, "band%d_%d.starts", r, c);
                if (rc == WEFT_OK) rc = band_const(g, base, what, WEFT_TYPE_INT64, 1, (int64_t[]){2}, (int64_t[]){s0, s1}, &vs);
                snprintf(what, sizeof what, "band%d_%d.ends", r, c);
                if (rc == WEFT_OK) rc = band_const(g, base, what, WEFT_TYPE_INT64, 1, (int64_t[]){2}, (int64_t[]){e0, e1}, &ve);
                snprintf(nm, sizeof nm, "%s.band%d_%d.slice", base, r, c);
                if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Slice", nm, 4, (weft_value[]){x, vs, ve, va}, 0, NULL, 1, &vx);
                /* a single tap along an axis has no dilation */
                int64_t dil[2] = {kh > 1 ? dl[0] : 1, kw > 1 ? dl[1] : 1}, zero[4] = {0, 0, 0, 0}, one[2] = {1, 1};
                weft_attr at[5] = {{.name = "group", .kind = WEFT_ATTR_INT, .i = group},
                                   {.name = "dilations", .kind = WEFT_ATTR_INTS, .n = 2, .ints = dil},
                                   {.name = "strides", .kind = WEFT_ATTR_INTS, .n = 2, .ints = one},
                                   {.name = "pads", .kind = WEFT_ATTR_INTS, .n = 4, .ints = zero},
                                   {.name = "kernel_shape", .kind = WEFT_ATTR_INTS, .n = 2, .ints = (int64_t[]){kh, kw}}};
                snprintf(nm, sizeof nm, "%s.band%d_%d", base, r, c);
                if (rc == WEFT_OK)
                    rc = weft_graph_add_op(g, "Conv", nm, bias >= 0 ? 3 : 2, (weft_value[]){vx, vw, bias}, 5, at, 1, &vy);
                cols[c] = vy;
            }
            if (rc != WEFT_OK) break;
            rows[r] = cols[0];
            weft_attr ax = {.name = "axis", .kind = WEFT_ATTR_INT, .i = 3};
            snprintf(nm, sizeof nm, "%s.band%d", base, r);
            if (rc == WEFT_OK && nb[1] > 1) rc = weft_graph_add_op(g, "Concat", nm, nb[1], cols, 1, &ax, 1, &rows[r]);
        }
        if (rc != WEFT_OK) return rc;
        int out = rows[0];
        weft_attr ax = {.name = "axis", .kind = WEFT_ATTR_INT, .i = 2};
        snprintf(nm, sizeof nm, "%s.bands", base);
        if (nb[0] > 1 && (rc = weft_graph_add_op(g, "Concat", nm, nb[0], rows, 1, &ax, 1, &out)) != WEFT_OK) return rc;
        /* the last node made produces the conv's own output value */
        int last = g->n_nodes - 1;
        g->nodes[last].outputs[0] = y;
        g->values[y].producer = last;
        g->values[out].producer = -1;
        g->nodes[i].dead = true;
        rc = weft_model_move_before(g, i + 1, first);
        if (rc != WEFT_OK) return rc;
        i += g->n_nodes - first;
        n_nodes += g->n_nodes - first;
    }
    return WEFT_OK;
}

/* model_internal.h; fusion (model/fuse.c) and the pointwise rule below read it. */
bool weft_model_transpose_moves_last(const weft_graph *g, const weft_gnode *nd)
{
    if (strcmp(nd->op_type, "Transpose") || nd->n_inputs < 1) return false;
    int rank = g->values[nd->inputs[0]].ndim;
    const int64_t *perm = NULL;
    int np = weft_gnode_attr_ints(nd, "perm", &perm);
    int64_t last = np == rank && perm ? perm[rank - 1] : 0; /* no perm: the axes reversed */
    return rank >= 2 && last != rank - 1;
}

/* A pointwise conv (1x1 kernel, stride 1, no padding, one group) whose output planes fill
 * whole vectors (OH*OW a multiple of fb) keeps its weights [F, C, 1, 1] and is marked
 * "weft_conv_pixels": its reduction runs over fused pixels [N, F, OH*OW] (ops/nn_conv.c) and
 * its default schedule vectorizes along them (schedule/default_conv.c, "pointwise convolution
 * over pixels"), storing whole pixel vectors where the blocked one writes each filter vector
 * back across F planes (measured with AVX-512, 16->96 channels at 112x112: 1.5x faster;
 * 64->64 at 32x32: 3.7x). Planes that are not whole vectors (odd sizes: 33x33, 17x17, 9x9)
 * take that form too when they hold at least PIXELS_MIN_VECTORS vectors (the last pixel tile
 * is then partial) and the conv has at most PIXELS_MAX_CHANNELS input channels: the blocked
 * form's write-back costs a scattered store per output, its reduction C FMAs, so few channels
 * is where the scatter dominates. Measured on Zen 4 (AVX-512), 1 thread: EfficientNet-style
 * 8->48 at 33x33 78 -> 43 us, 16->96 at 17x17 48 -> 29 us; but 384->64 at 14x14 110 -> 150 us
 * and 576->96 245 -> 316 us, hence the channel bound. With 1024 or more input channels no
 * plane takes it: the pixel rule reduces over all of them per tile (no blocking of the
 * reduction), and its tiles then stream the weights from L2 or memory; the blocked form's
 * schedule does better (Zen 4, 1 thread, pixels -> blocked, ms: 1024->2048 at 28x28 63 -> 29
 * (ONNX Runtime 30), 2048->512 at 28x28 36 -> 17, 1024->256 at 28x28 9.1 -> 3.7, 1024->1024 at
 * 16x16 5.7 -> 4.9; below 1024 the pixels held or won: 768->768 at 32x32 11.3 against 13.0,
 * 512->1024 at 28x28 7.5 against 7.9, 512->512 at 16x16 equal). DeepLabV3-ResNet50 at 224x224,
 * whose dilated layer3/4 keep 28x28 planes: 742 -> 645-669 ms (ONNX Runtime 417). */
enum { PIXELS_MIN_VECTORS = 4, PIXELS_MAX_CHANNELS = 64, PIXELS_MAX_REDUCTION = 768 };
/* Whether value v is (through reshapes and other aliases) a Transpose that moves its input's
 * last axis: its last axis is then strided in the data it is read from. */
static bool transposed_last_axis(const weft_graph *g, int v)
{
    for (int hops = 0; v >= 0 && hops < 16; hops++) {
        int p = g->values[v].producer;
        if (p < 0) return false;
        const weft_gnode *nd = &g->nodes[p];
        if (!strcmp(nd->op_type, "Transpose")) return weft_model_transpose_moves_last(g, nd);
        if (!nd->def || !nd->def->alias || nd->n_inputs < 1) return false;
        v = nd->inputs[0];
    }
    return false;
}

static bool pointwise_rows(const weft_graph *g, const weft_gnode *n, int64_t C, int64_t fb)
{
    const weft_gvalue *w = &g->values[n->inputs[1]];
    if (n->n_outputs < 1 || w->shape[2] != 1 || w->shape[3] != 1 || C < 2 || weft_gnode_attr_int(n, "group", 1) != 1)
        return false;
    const int64_t *v;
    int cnt = weft_gnode_attr_ints(n, "strides", &v);
    if (cnt > 0 && (cnt != 2 || v[0] != 1 || v[1] != 1)) return false;
    cnt = weft_gnode_attr_ints(n, "pads", &v);
    for (int i = 0; i < cnt; i++)
        if (v[i] != 0) return false;
    if (strcmp(weft_gnode_attr_string(n, "auto_pad", "NOTSET"), "NOTSET") && strcmp(weft_gnode_attr_string(n, "auto_pad", ""), "VALID"))
        return false;
    const weft_gvalue *y = &g->values[n->outputs[0]];
    int64_t p = y->ndim == 4 ? y->shape[2] * y->shape[3] : 0;
    if (C > PIXELS_MAX_REDUCTION) return false;
    /* tokens transposed back into channels (a transformer block's output projection as a 1x1
     * conv, Stable Diffusion's proj_out): fused into the conv, the pixel vectors would be
     * gathers strided by C (17 GFLOP/s); the blocked form reads each pixel's channels in
     * order */
    if (transposed_last_axis(g, n->inputs[0])) return false;
    return p > 0 && (p % fb == 0 || (p >= PIXELS_MIN_VECTORS * fb && C <= PIXELS_MAX_CHANNELS));
}

/* A conv over few input channels with a window (a network's stem: 3 -> 32 channels, 3x3 or
 * 7x7, stride 2 at 224x224) keeps its weights [F, C, KH, KW] and is marked "weft_conv_columns":
 * its reduction runs over [N, F, OH, OW] (ops/nn_conv.c; a column stride splits the padding by
 * phase) and its default schedule vectorizes along output columns with broadcast weights
 * (schedule/default_conv.c, "convolution over output columns"), storing whole vectors of
 * columns. The blocked form writes each filter vector back across F planes (a scatter per
 * output) after only C*KH*KW/fb FMAs per output vector: with 3 input channels the write-back
 * and its epilogue cost as much as the reduction. Output rows must hold a vector. One input
 * channel is left blocked (its reduction would have two axes, the depthwise pattern's). */
enum { COLUMNS_MAX_CHANNELS = 4 };
static bool columns_form(const weft_graph *g, const weft_gnode *n, int64_t C, int64_t fb)
{
    const weft_gvalue *w = &g->values[n->inputs[1]];
    if (n->n_outputs < 1 || C < 2 || C > COLUMNS_MAX_CHANNELS || w->shape[2] * w->shape[3] < 2 ||
        weft_gnode_attr_int(n, "group", 1) != 1)
        return false;
    const int64_t *v;
    int cnt = weft_gnode_attr_ints(n, "dilations", &v);
    for (int i = 0; i < cnt; i++)
        if (v[i] != 1) return false;
    const weft_gvalue *y = &g->values[n->outputs[0]];
    return y->ndim == 4 && y->shape[3] >= fb;
}

/* A 3x3 conv (stride 1, dilation 1, one group) with at least WINO_MIN_CHANNELS input channels,
 * two filter vectors and output planes of at least WINO_MIN_SIDE x WINO_MIN_SIDE runs as
 * Winograd F(m x m, 3x3) (ops/nn_conv.c): its weights become U = G w G^T laid out
 * [m+2, m+2, ceil(F/fb), C, fb], and the products per output fall from 9 C to (m+2)^2/m^2 C:
 * 4 C for m = 2, 2.25 C for m = 4. m is the one with fewer products per output counting the
 * outputs of partial tiles (a 14x14 plane in 4x4 tiles computes 16x16: 2.94 C, still fewer
 * than 4 C), taking m = 4 only when that saves a fifth (its transforms cost more), and the
 * plane needs at least WINO_MIN_TILES tiles over the batch (a 7x7 plane at batch 1 is 16 2x2
 * tiles: resnet18's 512-channel convs there 2.2-2.3 -> 1.7-1.8 ms with AVX-512, 3.8-6.0 ->
 * 2.4-2.8 ms with AVX2, once the schedule reads each block of the transformed weights once;
 * before that, streaming all of them per spatial tile, they were slower than direct), twice
 * that for 4x4 tiles, whose weights are 36/16 the bytes: each is used once per tile, and with
 * few tiles the weights' reads decide (resnet18's 256-channel 14x14 convs, 16 4x4 tiles: 1.25-
 * 1.51 ms in 4x4 tiles, 1.18-1.25 in 2x2, though 0.81-0.88 against 0.96-0.99 alone). Returns
 * m, or 0 for a direct conv.
 * `only`: 2 or 4 restricts m to that (WEFT_WINOGRAD=2|4), 0 lets the rule choose. */
enum { WINO_MIN_CHANNELS = 16, WINO_MIN_SIDE = 4, WINO_MIN_TILES = 16 };
static int64_t winograd_form(const weft_graph *g, const weft_gnode *n, int64_t fb, int64_t only)
{
    const weft_gvalue *w = &g->values[n->inputs[1]];
    if (n->n_outputs < 1 || w->shape[2] != 3 || w->shape[3] != 3 || w->shape[1] < WINO_MIN_CHANNELS ||
        w->shape[0] < 2 * fb || weft_gnode_attr_int(n, "group", 1) != 1)
        return 0;
    const char *names[2] = {"strides", "dilations"};
    for (int k = 0; k < 2; k++) {
        const int64_t *v;
        int cnt = weft_gnode_attr_ints(n, names[k], &v);
        for (int i = 0; i < cnt; i++)
            if (v[i] != 1) return 0;
    }
    const weft_gvalue *y = &g->values[n->outputs[0]];
    if (y->ndim != 4 || y->shape[2] < WINO_MIN_SIDE || y->shape[3] < WINO_MIN_SIDE) return 0;
    int64_t best = 0;
    double best_cost = 0;
    for (int64_t m = 2; m <= 4; m += 2) {
        if (only && m != only) continue;
        int64_t th = (y->shape[2] + m - 1) / m, tw = (y->shape[3] + m - 1) / m;
        if (y->shape[0] * th * tw < (m == 4 ? 2 : 1) * WINO_MIN_TILES) continue;
        /* products per output, partial tiles counted whole; m = 4 must save a fifth */
        double cost = (double)((m + 2) * (m + 2) * th * tw) / (double)(y->shape[2] * y->shape[3]);
        if (m == 4) cost *= 1.25;
        if (!best || cost < best_cost) best = m, best_cost = cost;
    }
    return best;
}

weft_status weft_model_conv_weight_layout(weft_graph *g, int64_t fb, int64_t winograd)
{
    for (int i = 0; i < g->n_nodes && fb > 1; i++) {
        weft_gnode *n = &g->nodes[i];
        if (n->dead || strcmp(n->op_type, "Conv") || n->n_inputs < 2 ||
            weft_gnode_attr_string(n, "weft_weight_layout", NULL) || weft_gnode_attr_int(n, "weft_conv_pixels", 0) ||
            weft_gnode_attr_int(n, "weft_conv_columns", 0))
            continue;
        int w = n->inputs[1];
        const weft_gvalue *wv = &g->values[w];
        if (!wv->data || wv->ndim != 4 || !weft_dtype_eq(wv->dtype, WEFT_F32)) continue;
        int64_t F = wv->shape[0], C = wv->shape[1], KH = wv->shape[2], KW = wv->shape[3];
        int64_t group = weft_gnode_attr_int(n, "group", 1);
        /* Grouped: only when each group's filters fill whole blocks (a block then reads one
         * group's input channels); depthwise convs keep their layout. Groups of 8 filters on
         * 16-lane vectors (RegNet's group width 8) take blocks of 8 (half vectors): unblocked,
         * RegNetY-400MF's first grouped conv ran at 14 GFLOP/s, 12% of the model. */
        int64_t bfb = fb;
        while (group > 1 && F % group == 0 && bfb > 8 && (F / group) % bfb) bfb /= 2;
        if (group < 1 || F % group || (group > 1 && (C < 2 || (F / group) % bfb))) continue;
        int64_t wm = winograd >= 0 && group == 1 ? winograd_form(g, n, fb, winograd) : 0;
        if (wm) {
            int64_t al = wm + 2, FO = (F + fb - 1) / fb, ushape[5] = {al, al, FO, C, fb};
            char name[200];
            snprintf(name, sizeof name, "%.180s.wino", wv->name);
            int t = weft_graph_new_value(g, name, WEFT_F32, 5, ushape);
            float *dst = weft_calloc((size_t)(al * al * FO * C * fb), sizeof(float));
            if (t < 0 || !dst) {
                free(dst);
                return weft_fail(WEFT_ERR_NOMEM, "out of memory laying out %s", name);
            }
            n = &g->nodes[i];
            weft_winograd_weights(g->values[w].data, F, C, fb, wm, dst);
            g->values[t].data = dst;
            if (set_string_attr(n, "weft_weight_layout", "winograd") != WEFT_OK ||
                set_int_attr(n, "weft_conv_filters", F) != WEFT_OK)
                return weft_fail(WEFT_ERR_NOMEM, "out of memory");
            n->inputs[1] = t;
            continue;
        }
        if (pointwise_rows(g, n, C, fb)) {
            if (set_int_attr(n, "weft_conv_pixels", 1) != WEFT_OK) return weft_fail(WEFT_ERR_NOMEM, "out of memory");
            continue;
        }
        if (columns_form(g, n, C, fb)) {
            if (set_int_attr(n, "weft_conv_columns", 1) != WEFT_OK) return weft_fail(WEFT_ERR_NOMEM, "out of memory");
            continue;
        }
        int64_t b = group > 1 ? bfb : fb; /* (pointwise and column forms are group 1 only) */
        int64_t FO = (F + b - 1) / b, per = C * KH * KW;
        int64_t tshape[5] = {FO, C, KH, KW, b};
        char name[200];
        snprintf(name, sizeof name, "%.180s.blk", wv->name);
        int t = weft_graph_new_value(g, name, WEFT_F32, 5, tshape);
        float *dst = weft_calloc((size_t)(FO * per * b > 0 ? FO * per * b : 1), sizeof(float));
        if (t < 0 || !dst) {
            free(dst);
            return weft_fail(WEFT_ERR_NOMEM, "out of memory laying out %s", name);
        }
        n = &g->nodes[i];
        const float *src = g->values[w].data;
        for (int64_t f = 0; f < F; f++)
            for (int64_t e = 0; e < per; e++) dst[((f / b) * per + e) * b + f % b] = src[f * per + e];
        g->values[t].data = dst;
        if (set_string_attr(n, "weft_weight_layout", "FCHWf") != WEFT_OK || set_int_attr(n, "weft_weight_block", b) != WEFT_OK ||
            set_int_attr(n, "weft_conv_filters", F) != WEFT_OK)
            return weft_fail(WEFT_ERR_NOMEM, "out of memory");
        n->inputs[1] = t;
    }
    return WEFT_OK;
}

static weft_status set_int_attr(weft_gnode *n, const char *name, int64_t value)
{
    weft_attr *at = NULL;
    weft_status rc = append_attr(n, name, WEFT_ATTR_INT, &at);
    if (rc == WEFT_OK) at->i = value;
    return rc;
}

weft_status weft_model_matmul_weight_layout(weft_graph *g, int64_t nb)
{
    for (int i = 0; i < g->n_nodes; i++) {
        weft_gnode *n = &g->nodes[i];
        bool mm = !strcmp(n->op_type, "MatMul"), gemm = !strcmp(n->op_type, "Gemm");
        if (n->dead || (!mm && !gemm) || n->n_inputs < 2 || weft_gnode_attr_string(n, "weft_weight_layout", NULL)) continue;
        if (gemm && (weft_gnode_attr_int(n, "transB", 0) || weft_gnode_attr_int(n, "transA", 0))) continue;
        int b = n->inputs[1];
        const weft_gvalue *bv = &g->values[b];
        if (!bv->data || bv->ndim != 2 || !weft_dtype_eq(bv->dtype, WEFT_F32)) continue;
        if (mm && g->values[n->inputs[0]].ndim < 2) continue;
        int64_t K = bv->shape[0], N = bv->shape[1];
        if (N < 2 * nb || K < 8) continue;
        int64_t NB = (N + nb - 1) / nb; /* a last partial block is padded with zeros (never read:
                                           the product's columns stop at N) */
        int64_t tshape[3] = {NB, K, nb};
        char name[200];
        snprintf(name, sizeof name, "%.180s.blk", bv->name);
        int t = weft_graph_new_value(g, name, WEFT_F32, 3, tshape);
        float *dst = weft_calloc((size_t)(NB * K * nb), sizeof(float));
        if (t < 0 || !dst) {
            free(dst);
            return weft_fail(WEFT_ERR_NOMEM, "out of memory laying out %s", name);
        }
        n = &g->nodes[i];
        const float *src = g->values[b].data;
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++) dst[((j / nb) * K + k) * nb + j % nb] = src[k * N + j];
        g->values[t].data = dst;
        if (set_string_attr(n, "weft_weight_layout", "NKn") != WEFT_OK || set_int_attr(n, "weft_weight_block", nb) != WEFT_OK)
            return weft_fail(WEFT_ERR_NOMEM, "out of memory");
        n->inputs[1] = t;
    }
    return WEFT_OK;
}

void weft_model_dead_code(weft_graph *g)
{
    bool changed = true;
    while (changed) {
        changed = false;
        for (int i = g->n_nodes - 1; i >= 0; i--) {
            weft_gnode *n = &g->nodes[i];
            if (n->dead) continue;
            int uses = 0;
            for (int k = 0; k < n->n_outputs; k++) uses += weft_graph_n_uses(g, n->outputs[k]);
            if (uses == 0) {
                n->dead = true;
                changed = true;
            }
        }
    }
    /* Constants nothing reads any more (folded inputs, pre-transposed weights) free their bytes. */
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].data && !g->values[v].is_output && weft_graph_n_uses(g, v) == 0) {
            free(g->values[v].data);
            g->values[v].data = NULL;
        }
}
