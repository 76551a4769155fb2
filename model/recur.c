/* Expansion of recurrent nodes (ONNX GRU, LSTM, RNN) into a graph-level loop.
 *
 * Why a graph-level loop and not a scan stage in the IR: see the top of ops/nn_rnn.c. In short,
 * the per-step work is one ordinary kernel (default schedules, tuner sketches and structural
 * keys apply as they are, and the key does not depend on the step) that the executor runs
 * once per time step with its buffers offset to that step's slices (model/run.c), so lowering,
 * the interpreter and the targets need nothing new.
 *
 * Each recurrent node n with input X [T, B, I] becomes:
 *   XW = MatMul(X, Wt) + bx        Wt [I, D*G*H] (W of every direction, transposed), bx = W's
 *                                  bias: the input projection of all steps in one GEMM, an
 *                                  ordinary node the matmul passes and schedules handle;
 *   n (rewired, def = weft_nn_rnn_step_def): inputs XW, Rt [D, G*H/blk, H, blk] (R transposed
 *                                  in column blocks: each block of the step's product reads one
 *                                  contiguous panel, packed once, cache-resident across steps;
 *                                  blk = the register tile's width nb when it divides G*H),
 *                                  rb [D, G*H]
 *                                  (R's bias), H0 [D, B, H] (initial_h or zeros) and for LSTM
 *                                  C0; outputs Y [T, D, B, H], Y_h, and for LSTM Y_c and the
 *                                  cell-state sequence [T, D, B, H] (the step's state storage),
 *                                  and last a scratch [D, G*H/blk, B, blk] for the product (a
 *                                  GRU with linear_before_reset=0: two more, [D, B, H]).
 * Outputs the model did not ask for are created (they are the recurrence's storage).
 * With sequence_lens (constant or computed at run time) the node also reads a step mask
 * M [T, 1, B, 1] (seq_mask): a row past its length keeps its state, and the model's Y becomes
 * a Mul of the loop's Y by M (zero past each length, as ONNX Runtime and PyTorch's
 * pad_packed_sequence give it).
 * A bidirectional node is first split into a forward and a reverse node (split_directions):
 * run one after the other, each loop's recurrent weights (1 MB for an LSTM of hidden 256)
 * stay in a core's L2 across its steps, where one loop over both directions streamed 2 MB per
 * step from L3 (2-layer biLSTM 128->256, seq 64, batch 2, one thread: 12.3 -> 7.1 ms, best of
 * 60); the price is a concatenation of the two [T, 1, B, H] outputs into Y.
 * Runs after constant folding, so W, R, B are constants (checked by the shape rule).
 */
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "model/model_internal.h"
#include "runtime/mem.h"

static weft_status add_const(weft_graph *g, const char *base, const char *suffix, int ndim, const int64_t *shape,
                             const float *data, int *out)
{
    char name[200];
    snprintf(name, sizeof name, "%.150s.%s", base, suffix);
    weft_value v;
    weft_status rc = weft_graph_add_constant(g, name, WEFT_TYPE_FLOAT32, ndim, shape, data, &v);
    *out = v;
    return rc;
}

/* A new output value of node ni (created when the model omitted it). */
static weft_status add_output(weft_graph *g, int ni, int k, int ndim, const int64_t *shape)
{
    char name[200];
    snprintf(name, sizeof name, "%.150s:state%d", g->nodes[ni].name, k);
    int v = weft_graph_new_value(g, name, WEFT_F32, ndim, shape);
    if (v < 0) return weft_fail(WEFT_ERR_NOMEM, "out of memory expanding node '%s'", g->nodes[ni].name);
    g->values[v].producer = ni;
    g->nodes[ni].outputs[k] = v;
    if (g->nodes[ni].n_outputs <= k) g->nodes[ni].n_outputs = k + 1;
    return WEFT_OK;
}

/* The step mask of recurrent node ni's sequence_lens (input 4) into *out: M [T, 1, B, 1] float,
 * 1 where t < sequence_lens[b]. A constant when the lengths are (-1 when every length is T: no
 * mask); for lengths computed at run time, Cast + Reshape + Less + Cast nodes. Made once per
 * node: both directions of a bidirectional one read it. */
static weft_status seq_mask(weft_graph *g, int ni, int *out)
{
    const weft_gnode *n = &g->nodes[ni];
    *out = -1;
    if (n->n_inputs <= 4 || n->inputs[4] < 0) return WEFT_OK;
    int lv = n->inputs[4];
    const weft_gvalue *X = &g->values[n->inputs[0]];
    int64_t T = X->shape[0], B = X->shape[1];
    char base[160], nm[200];
    snprintf(base, sizeof base, "%.150s", n->name);
    const weft_gvalue *L = &g->values[lv];
    if (L->data) {
        bool full = true;
        for (int64_t b = 0; b < B; b++) full = full && weft_gvalue_int(L, b) >= T;
        if (full) return WEFT_OK;
        float *m = weft_malloc(sizeof(float) * (size_t)(T * B));
        if (!m) return weft_fail(WEFT_ERR_NOMEM, "out of memory expanding node '%s'", base);
        for (int64_t t = 0; t < T; t++)
            for (int64_t b = 0; b < B; b++) m[t * B + b] = t < weft_gvalue_int(L, b) ? 1.0f : 0.0f;
        weft_status rc = add_const(g, base, "mask", 4, (int64_t[]){T, 1, B, 1}, m, out);
        free(m);
        return rc;
    }
    float *steps = weft_malloc(sizeof(float) * (size_t)T);
    if (!steps) return weft_fail(WEFT_ERR_NOMEM, "out of memory expanding node '%s'", base);
    for (int64_t t = 0; t < T; t++) steps[t] = (float)t;
    int v_t = -1, v_shape = -1, v_lf = -1, v_l4 = -1, v_lt = -1;
    weft_status rc = add_const(g, base, "steps", 4, (int64_t[]){T, 1, 1, 1}, steps, &v_t);
    free(steps);
    snprintf(nm, sizeof nm, "%s.lens_shape", base);
    if (rc == WEFT_OK)
        rc = weft_graph_add_constant(g, nm, WEFT_TYPE_INT64, 1, (int64_t[]){4}, (int64_t[]){1, 1, B, 1}, &v_shape);
    weft_attr to_f = {.name = "to", .kind = WEFT_ATTR_INT, .i = 1}; /* ONNX float */
    snprintf(nm, sizeof nm, "%s.lens_float", base);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Cast", nm, 1, (weft_value[]){lv}, 1, &to_f, 1, &v_lf);
    snprintf(nm, sizeof nm, "%s.lens4", base);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Reshape", nm, 2, (weft_value[]){v_lf, v_shape}, 0, NULL, 1, &v_l4);
    snprintf(nm, sizeof nm, "%s.in_sequence", base);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Less", nm, 2, (weft_value[]){v_t, v_l4}, 0, NULL, 1, &v_lt);
    snprintf(nm, sizeof nm, "%s.mask", base);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Cast", nm, 1, (weft_value[]){v_lt}, 1, &to_f, 1, out);
    return rc;
}

/* Output k of node ni, when something reads it, becomes a new value (the loop's storage) and
 * the value the model reads is that times mask (a Mul node named after ni and suffix). */
static weft_status masked_output(weft_graph *g, int ni, int k, int ndim, const int64_t *shape, int mask,
                                 const char *suffix)
{
    int user = g->nodes[ni].outputs[k];
    if (user < 0 || weft_graph_n_uses(g, user) == 0) return WEFT_OK;
    weft_status rc = add_output(g, ni, k, ndim, shape);
    char nm[200];
    snprintf(nm, sizeof nm, "%.150s.%s", g->nodes[ni].name, suffix);
    int tmp = -1;
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Mul", nm, 2, (weft_value[]){g->nodes[ni].outputs[k], mask}, 0, NULL, 1, &tmp);
    if (rc != WEFT_OK) return rc;
    int mul = g->n_nodes - 1;
    g->nodes[mul].outputs[0] = user;
    g->values[user].producer = mul;
    g->values[tmp].producer = -1;
    return WEFT_OK;
}

/* v_mask: the node's step mask (seq_mask), or -1; *v_started: its first step [1, B, 1] (1
 * where a row's run-time length is above 0), made here when first needed, shared by both
 * directions of a node. */
static weft_status expand(weft_graph *g, int ni, int64_t nb, int v_mask, int *v_started)
{
    weft_gnode *n = &g->nodes[ni];
    bool lstm = !strcmp(n->op_type, "LSTM"), gru = !strcmp(n->op_type, "GRU");
    int64_t G = lstm ? 4 : gru ? 3 : 1;
    const weft_gvalue *X = &g->values[n->inputs[0]], *W = &g->values[n->inputs[1]], *R = &g->values[n->inputs[2]];
    const weft_gvalue *Bv = n->n_inputs > 3 && n->inputs[3] >= 0 ? &g->values[n->inputs[3]] : NULL;
    int64_t T = X->shape[0], B = X->shape[1], I = X->shape[2], D = W->shape[0], GH = W->shape[1], H = GH / G;
    if (!W->data || !R->data || (Bv && !Bv->data) || !weft_dtype_eq(W->dtype, WEFT_F32) || !weft_dtype_eq(R->dtype, WEFT_F32))
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s node '%s': W, R and B must be float constants", n->op_type, n->name);
    const float *w = W->data, *r = R->data, *bias = Bv ? Bv->data : NULL;
    /* Rt in column blocks of blk (nb when it divides G*H, else one vector, nb / 2): one block's
     * [H, blk] panel is contiguous, the register tile of the step's product reads it as one
     * stream. Otherwise one block (R transposed, rows of G*H): blocks narrower than a vector
     * made every vector of the product a gather across two blocks (a GRU of hidden 24, G*H = 72
     * in blocks of 8 with 16 lanes). */
    int64_t blk = GH % nb == 0 ? nb : nb % 2 == 0 && GH % (nb / 2) == 0 ? nb / 2 : GH, NB = GH / blk;
    size_t n_wt = (size_t)(I * D * GH), n_rt = (size_t)(D * H * GH), n_state = (size_t)(D * B * H);
    float *wt = weft_malloc(sizeof(float) * n_wt), *rt = weft_malloc(sizeof(float) * n_rt);
    float *bx = weft_calloc((size_t)(D * GH), sizeof(float)), *rb = weft_calloc((size_t)(D * GH), sizeof(float));
    float *zeros = weft_calloc(n_state, sizeof(float));
    weft_status rc = WEFT_OK;
    if (!wt || !rt || !bx || !rb || !zeros) rc = weft_fail(WEFT_ERR_NOMEM, "out of memory expanding node '%s'", n->name);
    for (int64_t d = 0; rc == WEFT_OK && d < D; d++)
        for (int64_t j = 0; j < GH; j++) {
            for (int64_t i = 0; i < I; i++) wt[i * D * GH + d * GH + j] = w[(d * GH + j) * I + i];
            for (int64_t k = 0; k < H; k++) rt[((d * NB + j / blk) * H + k) * blk + j % blk] = r[(d * GH + j) * H + k];
            if (bias) bx[d * GH + j] = bias[d * 2 * GH + j], rb[d * GH + j] = bias[d * 2 * GH + GH + j];
        }
    char base[160];
    snprintf(base, sizeof base, "%.150s", n->name);
    int x = n->inputs[0], h0 = n->n_inputs > 5 ? n->inputs[5] : -1, c0 = lstm && n->n_inputs > 6 ? n->inputs[6] : -1;
    int peep = lstm && n->n_inputs > 7 ? n->inputs[7] : -1; /* LSTM's P, a constant [D, 3H] */
    int v_wt = -1, v_bx = -1, v_rt = -1, v_rb = -1, v_mm = -1, v_xw = -1;
    if (rc == WEFT_OK) rc = add_const(g, base, "Wt", 2, (int64_t[]){I, D * GH}, wt, &v_wt);
    if (rc == WEFT_OK) rc = add_const(g, base, "bx", 1, (int64_t[]){D * GH}, bx, &v_bx);
    if (rc == WEFT_OK) rc = add_const(g, base, "Rt", 4, (int64_t[]){D, NB, H, blk}, rt, &v_rt);
    if (rc == WEFT_OK) rc = add_const(g, base, "rb", 2, (int64_t[]){D, GH}, rb, &v_rb);
    if (rc == WEFT_OK && h0 < 0) rc = add_const(g, base, "h0", 3, (int64_t[]){D, B, H}, zeros, &h0);
    if (rc == WEFT_OK && lstm && c0 < 0) rc = add_const(g, base, "c0", 3, (int64_t[]){D, B, H}, zeros, &c0);
    char nm[200];
    snprintf(nm, sizeof nm, "%s.proj", base);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "MatMul", nm, 2, (weft_value[]){x, v_wt}, 0, NULL, 1, &v_mm);
    snprintf(nm, sizeof nm, "%s.proj_bias", base);
    if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Add", nm, 2, (weft_value[]){v_mm, v_bx}, 0, NULL, 1, &v_xw);
    free(wt), free(rt), free(bx), free(rb), free(zeros);
    if (rc != WEFT_OK) return rc;
    int64_t seq[4] = {T, D, B, H}, state[3] = {D, B, H};
    n = &g->nodes[ni]; /* adding nodes may have moved the array */
    int ins[7] = {v_xw, v_rt, v_rb, h0, c0, -1, -1};
    n->n_inputs = lstm ? 5 : 4;
    if (v_mask >= 0 || peep >= 0) ins[n->n_inputs++] = v_mask; /* after C0 (LSTM) or H0: ops/nn_rnn.c */
    if (peep >= 0) ins[n->n_inputs++] = peep;
    for (int k = 0; k < n->n_inputs; k++) n->inputs[k] = ins[k];
    for (int k = n->n_outputs; rc == WEFT_OK && k < (lstm ? 3 : 2); k++) rc = add_output(g, ni, k, 3, state);
    if (rc == WEFT_OK && lstm) rc = add_output(g, ni, 3, 4, seq);
    if (rc == WEFT_OK) rc = add_output(g, ni, lstm ? 4 : 2, 4, (int64_t[]){D, NB, B, blk}); /* the product's scratch */
    /* GRU with linear_before_reset=0: the gated state r * h and its product (ops/nn_rnn.c) */
    bool lbr0 = gru && weft_gnode_attr_int(&g->nodes[ni], "linear_before_reset", 0) == 0;
    if (rc == WEFT_OK && lbr0) rc = add_output(g, ni, 3, 3, state);
    if (rc == WEFT_OK && lbr0) rc = add_output(g, ni, 4, 3, state);
    /* with a mask, the loop's Y (its state storage) holds the kept state on masked steps: the
     * model's Y is that times the mask */
    if (rc == WEFT_OK && v_mask >= 0) rc = masked_output(g, ni, 0, 4, seq, v_mask, "y_masked");
    /* lengths computed at run time may be 0: such a row's Y_h (and Y_c) is zeros, as ONNX
     * Runtime gives it, not the initial state it kept; times the mask's first step [1, B, 1]
     * (constant lengths of 0 are refused by the shape rule) */
    bool run_time = v_mask >= 0 && !g->values[v_mask].data;
    for (int k = 1; rc == WEFT_OK && run_time && k < (lstm ? 3 : 2); k++) {
        if (weft_graph_n_uses(g, g->nodes[ni].outputs[k]) == 0) continue;
        if (*v_started < 0) {
            snprintf(nm, sizeof nm, "%s.step0", base);
            int zero = -1;
            rc = weft_graph_add_constant(g, nm, WEFT_TYPE_INT64, 0, NULL, (int64_t[]){0}, &zero);
            snprintf(nm, sizeof nm, "%s.started", base);
            if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Gather", nm, 2, (weft_value[]){v_mask, zero}, 0, NULL, 1, v_started);
        }
        if (rc == WEFT_OK) rc = masked_output(g, ni, k, 3, state, *v_started, k == 1 ? "h_masked" : "c_masked");
    }
    if (rc == WEFT_OK) g->nodes[ni].def = weft_nn_rnn_step_def(&g->nodes[ni]);
    return rc;
}

/* Float constant holding block d of the first axis of constant v (shape [D, rest...]) as
 * [1, rest...]. */
static weft_status const_block(weft_graph *g, int v, int64_t d, const char *suffix, int *out)
{
    const weft_gvalue *c = &g->values[v];
    int64_t shape[WEFT_MAX_DIMS], per = 1;
    for (int k = 0; k < c->ndim; k++) shape[k] = k ? c->shape[k] : 1, per *= k ? c->shape[k] : 1;
    if (!c->data || !weft_dtype_eq(c->dtype, WEFT_F32) || c->ndim < 1 || d >= c->shape[0])
        return weft_fail(WEFT_ERR_UNSUPPORTED, "recurrent weights '%s' must be float constants", c->name);
    char base[160];
    snprintf(base, sizeof base, "%.150s", c->name);
    return add_const(g, base, suffix, c->ndim, shape, (const float *)c->data + d * per, out);
}

/* Node ni, bidirectional, becomes one forward and one reverse node (each a graph-level loop of
 * its own, so each direction's recurrent weights stay in cache across its steps instead of the
 * two directions' sharing it every step), their Y [T, 1, B, H] concatenated along the
 * direction axis into the node's Y, and Y_h / Y_c along axis 0 (the outputs keep their
 * values and names). initial_h / initial_c are split with Gather. The new nodes' indexes go to
 * made[0..1]. */
static weft_status split_directions(weft_graph *g, int ni, int made[2], int *first_cat)
{
    weft_gnode *n = &g->nodes[ni];
    bool lstm = !strcmp(n->op_type, "LSTM");
    int n_in = n->n_inputs, ins[8], outs[3] = {-1, -1, -1}, n_out = n->n_outputs < 3 ? n->n_outputs : 3;
    for (int k = 0; k < n_in && k < 8; k++) ins[k] = n->inputs[k];
    for (int k = 0; k < n_out; k++) outs[k] = n->outputs[k];
    char base[160], nm[200], op[16];
    snprintf(base, sizeof base, "%.150s", n->name);
    snprintf(op, sizeof op, "%s", n->op_type);
    weft_attr attrs[20];
    int n_attrs = 0;
    for (int k = 0; k < n->n_attrs && n_attrs < 16; k++)
        if (strcmp(n->attrs[k].name, "direction") && strncmp(n->attrs[k].name, "activation", 10)) attrs[n_attrs++] = n->attrs[k];
    weft_status rc = WEFT_OK;
    int dir_out[2][3];
    for (int d = 0; d < 2 && rc == WEFT_OK; d++) {
        /* this direction's activations and the alpha / beta values they read */
        char acts[128];
        float alpha[3], beta[3];
        int n_alpha, n_beta, na = n_attrs;
        if (weft_nn_rnn_direction_acts(&g->nodes[ni], d, acts, sizeof acts, alpha, &n_alpha, beta, &n_beta) != 0)
            return weft_fail(WEFT_ERR_INTERNAL, "%s node '%s': activations of direction %d", op, base, d);
        attrs[na++] = (weft_attr){.name = "activations", .kind = WEFT_ATTR_STRING, .s = acts};
        if (n_alpha) attrs[na++] = (weft_attr){.name = "activation_alpha", .kind = WEFT_ATTR_FLOATS, .n = n_alpha, .floats = alpha};
        if (n_beta) attrs[na++] = (weft_attr){.name = "activation_beta", .kind = WEFT_ATTR_FLOATS, .n = n_beta, .floats = beta};
        int v[8] = {ins[0], -1, -1, -1, n_in > 4 ? ins[4] : -1, -1, -1, -1};
        const char *sfx[4] = {NULL, d ? "W1" : "W0", d ? "R1" : "R0", d ? "B1" : "B0"};
        for (int k = 1; k <= 3 && rc == WEFT_OK; k++)
            if (k < n_in && ins[k] >= 0) rc = const_block(g, ins[k], d, sfx[k], &v[k]);
        if (rc == WEFT_OK && lstm && n_in > 7 && ins[7] >= 0) rc = const_block(g, ins[7], d, d ? "P1" : "P0", &v[7]);
        for (int k = 5; k <= (lstm ? 6 : 5) && rc == WEFT_OK; k++) { /* initial_h, initial_c: Gather(axis 0, [d]) */
            if (k >= n_in || ins[k] < 0) continue;
            int idx = -1;
            snprintf(nm, sizeof nm, "%s.%s%d", base, k == 5 ? "h0_" : "c0_", d);
            rc = weft_graph_add_constant(g, nm, WEFT_TYPE_INT64, 1, (int64_t[]){1}, (int64_t[]){d}, &idx);
            weft_attr ax = {.name = "axis", .kind = WEFT_ATTR_INT, .i = 0};
            snprintf(nm, sizeof nm, "%s.%s%d.gather", base, k == 5 ? "h0_" : "c0_", d);
            if (rc == WEFT_OK) rc = weft_graph_add_op(g, "Gather", nm, 2, (weft_value[]){ins[k], idx}, 1, &ax, 1, &v[k]);
        }
        attrs[na++] = (weft_attr){.name = "direction", .kind = WEFT_ATTR_STRING, .s = d ? "reverse" : "forward"};
        snprintf(nm, sizeof nm, "%s.%s", base, d ? "reverse" : "forward");
        int last = lstm ? 8 : 6;
        while (last > 3 && v[last - 1] < 0) last--;
        if (rc == WEFT_OK) rc = weft_graph_add_op(g, op, nm, last, v, na, attrs, lstm ? 3 : 2, dir_out[d]);
        made[d] = g->n_nodes - 1;
    }
    /* the concatenations produce the node's own output values */
    *first_cat = g->n_nodes;
    for (int k = 0; k < n_out && rc == WEFT_OK; k++) {
        if (outs[k] < 0) continue;
        int cat = -1;
        weft_attr ax = {.name = "axis", .kind = WEFT_ATTR_INT, .i = k ? 0 : 1};
        snprintf(nm, sizeof nm, "%s.cat%d", base, k);
        rc = weft_graph_add_op(g, "Concat", nm, 2, (weft_value[]){dir_out[0][k], dir_out[1][k]}, 1, &ax, 1, &cat);
        if (rc != WEFT_OK) break;
        int c = g->n_nodes - 1;
        g->nodes[c].outputs[0] = outs[k];
        g->values[outs[k]].producer = c;
        g->values[cat].producer = -1;
    }
    if (rc == WEFT_OK) g->nodes[ni].dead = true;
    return rc;
}

weft_status weft_model_expand_recurrent(weft_graph *g, int64_t nb)
{
    if (nb <= 0) nb = 16;
    int n_nodes = g->n_nodes; /* nodes added here are expanded where they are made */
    for (int i = 0; i < n_nodes; i++) {
        const weft_gnode *n = &g->nodes[i];
        if (n->dead || !n->def || !weft_op_is_recurrence(n->def)) continue;
        bool both = !strcmp(weft_gnode_attr_string(n, "direction", "forward"), "bidirectional");
        int first = g->n_nodes, mask = -1, started = -1;
        weft_status rc = seq_mask(g, i, &mask);
        if (rc == WEFT_OK && both) {
            int made[2], first_cat = -1;
            rc = split_directions(g, i, made, &first_cat);
            int cat_end = g->n_nodes;
            for (int d = 0; d < 2 && rc == WEFT_OK; d++) rc = expand(g, made[d], nb, mask, &started);
            /* the concatenations after what the expansions made (a masked Y's Mul feeds them) */
            if (rc == WEFT_OK) rc = weft_model_move_before(g, first_cat, cat_end);
        } else if (rc == WEFT_OK) rc = expand(g, i, nb, mask, &started);
        /* what was made goes right after the node, before its consumers */
        if (rc == WEFT_OK) rc = weft_model_move_before(g, i + 1, first);
        if (rc != WEFT_OK) return rc;
        i += g->n_nodes - first; /* past the moved nodes: they are expanded */
        n_nodes += g->n_nodes - first;
    }
    return WEFT_OK;
}
