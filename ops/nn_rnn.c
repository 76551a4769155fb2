/* ONNX GRU, LSTM and RNN: shape rules and the per-step kernel of a recurrence.
 *
 * Recurrence as a graph-level loop, not a scan stage in the IR. A recurrent node becomes
 * (model/recur.c) one GEMM over all time steps (the input projection, an ordinary MatMul +
 * bias node) and one *step kernel*: an ordinary TE kernel computing one time step of every
 * direction, which the executor (model/run.c) runs seq_len times, passing each step's slices
 * of the node's buffers as pointer offsets (weft_op_step_param). Why this and not a scan:
 *   - the step kernel is a plain kernel: the default schedules, the tuner's sketches and its
 *     structural keys apply unchanged, and its key does not depend on the step (the step is
 *     an address, never an index constant in the IR);
 *   - lowering, the interpreter and the LLVM target need nothing new; a scan stage would need
 *     a new TE node kind, bound inference across the scan axis, and schedule rules for it;
 *   - the state is not copied: step t reads step t-1's slice of Y (or initial_h at step 0)
 *     and writes its own slice of Y in place.
 * The price: one kernel call (and one fork-join when parallel) per step. A bidirectional
 * node reaches here as two nodes, forward and reverse (model/recur.c), so each loop's
 * recurrent weights stay in cache across its steps; the step kernel still handles D = 2 (it
 * writes the directions interleaved in Y[t, d]).
 *
 * The step kernel, per direction d (reverse directions walk t from seq_len-1 down):
 *   rec_d[b, n] = sum_k h_d[b, k] * Rt[d, k, n]         (recurrent product, Rt = R transposed,
 *                                                        stored in column blocks, see recur.c)
 *   gates from xw_d[b, d*G*H + n] (the hoisted projection incl. W's bias), rec_d and rb[d, n]
 *   GRU (z, r, n; linear_before_reset=1):  h' = n + z * (h - n),
 *        n = tanh(xw_n + r * (rec_n + rb_n))
 *   GRU with linear_before_reset=0: n = tanh(xw_n + rec2 + rb_n), rec2 = (r * h) Rt_n: the
 *        gated state rh = r * h and its product rec2 are two more kernel outputs (scratch
 *        buffers [D, B, H], so the default schedule gives rec2 a matmul output's nest and r is
 *        computed once per element, not once per product term)
 *   LSTM (i, o, f, c): c' = f * c + i * g,  h' = o * tanh(c')  (peepholes: P_i * c in i's and
 *        P_f * c in f's input, P_o * c' in o's; input_forget=1: f = 1 - i)
 *   RNN: h' = tanh(xw + rec + rb)
 * (with the default activations: sigmoid is f, tanh is g and LSTM's h; the `activations`
 * attribute picks any of ONNX's eleven per direction, with activation_alpha / _beta, and
 * `clip` clamps every gate and candidate input)
 * With sequence_lens, a step mask input says which batch rows are still within their sequence;
 * the others keep their state (see rnn_step).
 * The recurrent product is a kernel output of its own (a per-node scratch buffer, so the default
 * schedule register-tiles, vectorizes and parallelizes it like a matmul output); the gate math
 * and state update are the stage after it in the same kernel (one loop nest per state);
 * Y_h / Y_c are written at every step (B x H floats) so the last step leaves them final.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

typedef enum cell { CELL_RNN, CELL_GRU, CELL_LSTM } cell;

/* Batch from which the step's product tiles batch rows (see rnn_step): from 2, each weight
 * panel is read once per step for all rows (the default schedule widens a tile of few rows). */
#define ROWS_FROM 2

static cell cell_of(const weft_gnode *n)
{
    if (!strcmp(n->op_type, "GRU")) return CELL_GRU;
    if (!strcmp(n->op_type, "LSTM")) return CELL_LSTM;
    return CELL_RNN;
}

static int gates_of(cell c) { return c == CELL_GRU ? 3 : c == CELL_LSTM ? 4 : 1; }

/* Directions of n (1 or 2); -1 after weft_nn_fail for an unknown direction. */
static int directions(const weft_gnode *n, bool *reverse_only)
{
    const char *dir = weft_gnode_attr_string(n, "direction", "forward");
    *reverse_only = !strcmp(dir, "reverse");
    if (!strcmp(dir, "forward") || *reverse_only) return 1;
    if (!strcmp(dir, "bidirectional")) return 2;
    weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "direction '%s', expected forward, reverse or bidirectional", dir);
    return -1;
}

/* ---- activations (attributes activations, activation_alpha, activation_beta, clip) ---------- */

typedef enum act_kind {
    ACT_RELU, ACT_TANH, ACT_SIGMOID, ACT_AFFINE, ACT_LEAKY_RELU, ACT_THRESHOLDED_RELU, ACT_SCALED_TANH,
    ACT_HARD_SIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS, ACT_COUNT
} act_kind;

/* The ONNX list; takes: how many of alpha, beta the function reads; defaults as the ONNX ops
 * of the same name (Affine and ScaledTanh have none: identity scales). */
static const struct act_info {
    const char *name;
    int takes;
    double alpha, beta;
} act_info[ACT_COUNT] = {
    [ACT_RELU] = {"Relu", 0, 0, 0},
    [ACT_TANH] = {"Tanh", 0, 0, 0},
    [ACT_SIGMOID] = {"Sigmoid", 0, 0, 0},
    [ACT_AFFINE] = {"Affine", 2, 1.0, 0.0},
    [ACT_LEAKY_RELU] = {"LeakyRelu", 1, 0.01, 0},
    [ACT_THRESHOLDED_RELU] = {"ThresholdedRelu", 1, 1.0, 0},
    [ACT_SCALED_TANH] = {"ScaledTanh", 2, 1.0, 1.0},
    [ACT_HARD_SIGMOID] = {"HardSigmoid", 2, 0.2, 0.5},
    [ACT_ELU] = {"Elu", 1, 1.0, 0},
    [ACT_SOFTSIGN] = {"Softsign", 0, 0, 0},
    [ACT_SOFTPLUS] = {"Softplus", 0, 0, 0},
};

typedef struct act {
    act_kind kind;
    double alpha, beta;
} act;

/* Per direction: f (gates), g (candidate), h (LSTM's output of the cell state). */
typedef struct cell_acts {
    act f[2][3];
    int per_dir;
    double clip; /* > 0: activation inputs clamped to [-clip, clip] */
} cell_acts;

/* Activation functions per direction: RNN f; GRU f, g; LSTM f, g, h. */
static int acts_per_direction(cell c) { return c == CELL_GRU ? 2 : c == CELL_LSTM ? 3 : 1; }

/* n's activations, ONNX defaults where the attribute is absent. activation_alpha / _beta are
 * consumed in order by the functions that take them (as ONNX Runtime reads them); a function
 * past the end of the list takes its default. Names compare without case. */
static weft_status parse_acts(const weft_gnode *n, cell c, int D, cell_acts *out)
{
    static const act_kind dflt[3][3] = {{ACT_TANH}, {ACT_SIGMOID, ACT_TANH}, {ACT_SIGMOID, ACT_TANH, ACT_TANH}};
    int per = acts_per_direction(c);
    memset(out, 0, sizeof *out);
    out->per_dir = per;
    const char *list = weft_gnode_attr_string(n, "activations", NULL);
    const float *alphas = NULL, *betas = NULL;
    int n_alpha = weft_gnode_attr_floats(n, "activation_alpha", &alphas);
    int n_beta = weft_gnode_attr_floats(n, "activation_beta", &betas);
    int ia = 0, ib = 0, k = 0;
    const char *p = list;
    for (int d = 0; d < D; d++)
        for (int j = 0; j < per; j++, k++) {
            act_kind kind = dflt[per - 1][j];
            if (list) {
                const char *e = p ? strchr(p, ',') : NULL;
                size_t len = p ? (e ? (size_t)(e - p) : strlen(p)) : 0;
                if (!p || !len)
                    return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "activations '%s' names %d function(s), expected %d "
                                        "(%d per direction)", list, k, per * D, per);
                for (kind = 0; kind < ACT_COUNT; kind++)
                    if (strlen(act_info[kind].name) == len && !strncasecmp(p, act_info[kind].name, len)) break;
                if (kind == ACT_COUNT)
                    return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "activation '%.*s' is not supported (Relu, Tanh, Sigmoid, "
                                        "Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, "
                                        "Softplus)", (int)(len > 40 ? 40 : len), p);
                p = e ? e + 1 : NULL;
            }
            act *a = &out->f[d][j];
            a->kind = kind, a->alpha = act_info[kind].alpha, a->beta = act_info[kind].beta;
            if (act_info[kind].takes >= 1 && ia < n_alpha) a->alpha = alphas[ia++];
            if (act_info[kind].takes >= 2 && ib < n_beta) a->beta = betas[ib++];
        }
    if (list && p)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "activations '%s' names more than %d function(s) (%d per direction)",
                            list, per * D, per);
    for (int i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].name, "clip")) {
            out->clip = n->attrs[i].kind == WEFT_ATTR_FLOAT ? n->attrs[i].f : -1;
            if (!(out->clip > 0))
                return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "clip must be a positive float");
        }
    return WEFT_OK;
}

/* f(x), x first clamped to [-clip, clip] when clip > 0 (every gate and candidate input; not
 * LSTM's h(C), whose input ONNX Runtime does not clip). */
static const weft_expr *act_expr(weft_arena *a, double clip, const act *f, const weft_expr *x)
{
    if (clip > 0) x = weft_min(a, weft_max(a, x, weft_f32(a, -clip)), weft_f32(a, clip));
    const weft_expr *zero = weft_f32(a, 0.0), *al = weft_f32(a, f->alpha), *be = weft_f32(a, f->beta);
    switch (f->kind) {
    case ACT_RELU: return weft_max(a, x, zero);
    case ACT_TANH: return weft_call1(a, WEFT_INTRIN_TANH, x);
    case ACT_SIGMOID: return weft_call1(a, WEFT_INTRIN_SIGMOID, x);
    case ACT_AFFINE: return weft_add(a, weft_mul(a, al, x), be);
    case ACT_LEAKY_RELU: return weft_select(a, weft_cmp(a, WEFT_EXPR_GE, x, zero), x, weft_mul(a, al, x));
    case ACT_THRESHOLDED_RELU: return weft_select(a, weft_cmp(a, WEFT_EXPR_GE, x, al), x, zero);
    case ACT_SCALED_TANH: return weft_mul(a, al, weft_call1(a, WEFT_INTRIN_TANH, weft_mul(a, be, x)));
    case ACT_HARD_SIGMOID:
        return weft_min(a, weft_max(a, weft_add(a, weft_mul(a, al, x), be), zero), weft_f32(a, 1.0));
    case ACT_ELU:
        return weft_select(a, weft_cmp(a, WEFT_EXPR_GE, x, zero), x,
                           weft_mul(a, al, weft_sub(a, weft_call1(a, WEFT_INTRIN_EXP, x), weft_f32(a, 1.0))));
    case ACT_SOFTSIGN: return weft_div(a, x, weft_add(a, weft_f32(a, 1.0), weft_call1(a, WEFT_INTRIN_FABS, x)));
    case ACT_SOFTPLUS: return weft_nn_softplus(a, x);
    case ACT_COUNT: break;
    }
    return NULL;
}

int weft_nn_rnn_direction_acts(const weft_gnode *n, int d, char *names, size_t names_size, float alpha[3], int *n_alpha,
                               float beta[3], int *n_beta)
{
    cell c = cell_of(n);
    bool rev;
    int D = directions(n, &rev);
    cell_acts ca;
    *n_alpha = *n_beta = 0;
    if (D < 0 || d >= D || parse_acts(n, c, D, &ca) != WEFT_OK) return -1;
    size_t used = 0;
    names[0] = 0;
    for (int j = 0; j < ca.per_dir; j++) {
        const act *f = &ca.f[d][j];
        int w = snprintf(names + used, names_size - used, "%s%s", j ? "," : "", act_info[f->kind].name);
        if (w < 0 || (size_t)w >= names_size - used) return -1;
        used += (size_t)w;
        if (act_info[f->kind].takes >= 1) alpha[(*n_alpha)++] = (float)f->alpha;
        if (act_info[f->kind].takes >= 2) beta[(*n_beta)++] = (float)f->beta;
    }
    return 0;
}

static weft_status check_shape(const weft_gnode *n, const weft_gvalue *v, const char *what, int ndim,
                               const int64_t *want)
{
    bool ok = v->ndim == ndim;
    for (int d = 0; ok && d < ndim; d++) ok = v->shape[d] == want[d];
    if (!ok)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "%s has shape %s, expected %s", what, weft_nn_shape_str(v->ndim, v->shape).s,
                            weft_nn_shape_str(ndim, want).s);
    return weft_nn_check_dtype(n, v, what, WEFT_NN_F32);
}

WEFT_NN_INFER(weft_nn_rnn_infer)
{
    cell c = cell_of(n);
    int max_in = c == CELL_LSTM ? 8 : 6, max_out = c == CELL_LSTM ? 3 : 2;
    weft_status st = weft_nn_check_arity(n, 3, max_in, 1, max_out);
    if (st != WEFT_OK) return st;
    bool rev;
    int D = directions(n, &rev);
    if (D < 0) return WEFT_ERR_UNSUPPORTED; /* directions() set the message */
    if (weft_gnode_attr_int(n, "layout", 0) != 0)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "layout=%" PRId64 " is not supported, only 0 ([seq_len, batch, "
                            "input]) and 1 (batch-major; weft_graph_add_op puts the node between Transposes)",
                            weft_gnode_attr_int(n, "layout", 0));
    /* activations (a STRINGS attribute, comma-joined by the importer), their alpha / beta, clip */
    cell_acts ca;
    if ((st = parse_acts(n, c, D, &ca)) != WEFT_OK) return st;
    bool lbr;
    if (c == CELL_GRU && (st = weft_nn_attr_flag(n, "linear_before_reset", 0, &lbr)) != WEFT_OK) return st;
    bool coupled;
    if (c == CELL_LSTM && (st = weft_nn_attr_flag(n, "input_forget", 0, &coupled)) != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0), *W = weft_nn_in(g, n, 1), *R = weft_nn_in(g, n, 2);
    if ((st = weft_nn_check_dtype(n, X, "input X", WEFT_NN_F32)) != WEFT_OK ||
        (st = weft_nn_check_rank(n, X, "input X", 3, "[seq_len, batch, input_size]")) != WEFT_OK)
        return st;
    int64_t T = X->shape[0], B = X->shape[1], I = X->shape[2], G = gates_of(c);
    int64_t H = weft_gnode_attr_int(n, "hidden_size", R->ndim == 3 ? R->shape[2] : 0);
    if (H <= 0) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "hidden_size must be positive");
    if ((st = check_shape(n, W, "input W", 3, (int64_t[]){D, G * H, I})) != WEFT_OK ||
        (st = check_shape(n, R, "input R", 3, (int64_t[]){D, G * H, H})) != WEFT_OK)
        return st;
    if (!weft_nn_is_const(g, n, 1) || !weft_nn_is_const(g, n, 2))
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "weights W and R must be constants (initializers)");
    if (weft_nn_has_in(n, 3)) {
        if ((st = check_shape(n, weft_nn_in(g, n, 3), "input B", 2, (int64_t[]){D, 2 * G * H})) != WEFT_OK) return st;
        if (!weft_nn_is_const(g, n, 3)) return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "bias B must be a constant");
    }
    if (weft_nn_has_in(n, 4)) {
        /* per batch row, its sequence's length: steps from there on keep the state, and their Y
         * rows are zero (ONNX Runtime's semantics); constants are checked here, run-time values
         * outside [1, seq_len] act as clamped into [0, seq_len] */
        const weft_gvalue *L = weft_nn_in(g, n, 4);
        if ((st = weft_nn_check_dtype(n, L, "sequence_lens", WEFT_NN_I64 | WEFT_NN_I32)) != WEFT_OK) return st;
        if (L->ndim != 1 || L->shape[0] != B)
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "sequence_lens has shape %s, expected [%" PRId64 "]",
                                weft_nn_shape_str(L->ndim, L->shape).s, B);
        for (int64_t b = 0; L->data && b < B; b++)
            if (weft_gvalue_int(L, b) < 1 || weft_gvalue_int(L, b) > T)
                return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "sequence_lens[%" PRId64 "] = %" PRId64 " is outside [1, %" PRId64
                                    "] (seq_len)", b, weft_gvalue_int(L, b), T);
    }
    if (c == CELL_LSTM && weft_nn_has_in(n, 7)) { /* peepholes [D, 3H]: i, o, f */
        if ((st = check_shape(n, weft_nn_in(g, n, 7), "peepholes P", 2, (int64_t[]){D, 3 * H})) != WEFT_OK) return st;
        if (!weft_nn_is_const(g, n, 7)) return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "peepholes P must be a constant");
    }
    int64_t state[3] = {D, B, H};
    if (weft_nn_has_in(n, 5) && (st = check_shape(n, weft_nn_in(g, n, 5), "initial_h", 3, state)) != WEFT_OK) return st;
    if (c == CELL_LSTM && weft_nn_has_in(n, 6) &&
        (st = check_shape(n, weft_nn_in(g, n, 6), "initial_c", 3, state)) != WEFT_OK)
        return st;
    if ((st = weft_nn_set_out(g, n, 0, WEFT_F32, 4, (int64_t[]){T, D, B, H})) != WEFT_OK) return st;
    for (int k = 1; k < n->n_outputs; k++)
        if ((st = weft_nn_set_out(g, n, k, WEFT_F32, 3, state)) != WEFT_OK) return st;
    return WEFT_OK;
}

WEFT_NN_COMPUTE(weft_nn_rnn_compute)
{
    (void)a, (void)g, (void)name, (void)ins, (void)outs;
    return weft_nn_fail(WEFT_ERR_INTERNAL, n, "a recurrent node reached kernel building without being expanded "
                        "(model/recur.c)");
}

/* ---- the step kernel of an expanded node -------------------------------------------------- */

typedef struct dir_io {
    const weft_tensor *xw, *h, *c;  /* placeholders */
    const weft_tensor *m;           /* [B]: 1 where step t is within batch row b's sequence, or NULL */
    weft_tensor *rec;               /* [G*H / blk, B, blk], or [B, G*H] when rows */
    int64_t blk;
    bool rows;
} dir_io;

/* rec[b, col] of the blocked product. */
static const weft_expr *rec_at(weft_arena *a, const dir_io *io, const weft_expr *b, const weft_expr *col)
{
    const weft_expr *c = weft_i64(a, io->blk);
    if (io->rows) return weft_te_at(a, io->rec, b, col);
    return weft_te_at(a, io->rec, weft_floordiv(a, col, c), b, weft_floormod(a, col, c));
}

/* xw[b, d*G*H + col] + rec[b, col] + rb[d, col] (rec part optional). */
static const weft_expr *pre(weft_arena *a, const dir_io *io, const weft_tensor *rb, int64_t d, int64_t GH,
                            const weft_expr *b, const weft_expr *j, int64_t col0, bool with_rec)
{
    const weft_expr *col = weft_add(a, j, weft_i64(a, col0));
    const weft_expr *x = weft_te_at(a, io->xw, b, weft_add(a, col, weft_i64(a, d * GH)));
    if (!with_rec) return x;
    return weft_add(a, x, weft_add(a, rec_at(a, io, b, col), weft_te_at(a, rb, weft_i64(a, d), col)));
}

/* Rt[d, col / blk, k, col % blk]: the recurrent weight of column col (in NB blocks of blk; one
 * block is plain rows, read without the division: no gathers). */
static const weft_expr *rt_at(weft_arena *a, const weft_tensor *Rt, int64_t d, const weft_expr *k, const weft_expr *col,
                              int64_t NB, int64_t blk)
{
    const weft_expr *bw = weft_i64(a, blk);
    if (NB == 1) return weft_te_at(a, Rt, weft_i64(a, d), weft_i64(a, 0), k, col);
    return weft_te_at(a, Rt, weft_i64(a, d), weft_floordiv(a, col, bw), k, weft_floormod(a, col, bw));
}

/* P[d, off + j]: a peephole weight (offsets 0 i, H o, 2H f). */
static const weft_expr *peephole(weft_arena *a, const weft_tensor *P, int64_t d, const weft_expr *j, int64_t off)
{
    return weft_te_at(a, P, weft_i64(a, d), weft_add(a, j, weft_i64(a, off)));
}

/* The new state where row b's step is within its sequence, else the old one. */
static const weft_expr *keep(weft_arena *a, const dir_io *io, const weft_expr *b, const weft_expr *nw, const weft_expr *old)
{
    if (!io->m) return nw;
    return weft_select(a, weft_cmp(a, WEFT_EXPR_GT, weft_te_at(a, io->m, b), weft_f32(a, 0.5)), nw, old);
}

static weft_tensor *stage(weft_arena *a, const char *name, const char *suffix, int64_t d, int64_t B, int64_t H)
{
    char s[32];
    snprintf(s, sizeof s, ".%s%" PRId64, suffix, d);
    return weft_te_compute(a, weft_nn_stage(a, name, s), 2, (int64_t[]){B, H}, (const char *[]){"b", "j"});
}

/* Node inputs after expansion: 0 XW [T, B, D*G*H], 1 Rt [D, H, G*H], 2 rb [D, G*H], 3 H0 [D, B, H],
 * 4 C0 [D, B, H] (LSTM); then, with sequence_lens, the step mask M [T, 1, B, 1] (1 where t is
 * within row b's sequence): a masked step keeps the state (h' = h, c' = c), so the state a
 * sequence ends with reaches Y_h, and a reverse direction starts its row at the row's last
 * step; Y's masked steps are zeroed after the loop (model/recur.c). LSTM with peepholes: input 6
 * P [D, 3H] (i, o, f; input 5 is -1 without a mask). Outputs: 0 Y [T, D, B, H], 1 Y_h [D, B, H];
 * LSTM also 2 Y_c, 3 C sequence [T, D, B, H]; then the recurrent product's scratch [D, B, G*H]; a GRU with
 * linear_before_reset=0 also 3 rh and 4 rec2, [D, B, H] each. */
static weft_status rnn_step(weft_arena *a, const weft_graph *g, const weft_gnode *n, weft_te_func **f,
                            weft_op_step_param *params, int *n_params, int64_t *n_steps)
{
    cell c = cell_of(n);
    const char *name = c == CELL_GRU ? "gru" : c == CELL_LSTM ? "lstm" : "rnn";
    bool rev_only;
    int D = directions(n, &rev_only);
    bool lbr0 = c == CELL_GRU && weft_gnode_attr_int(n, "linear_before_reset", 0) == 0;
    int need_out = c == CELL_LSTM ? 5 : lbr0 ? 5 : 3, rec_out = c == CELL_LSTM ? 4 : 2;
    if (D < 0 || n->n_inputs < (c == CELL_LSTM ? 5 : 4) || n->n_outputs < need_out)
        return weft_nn_fail(WEFT_ERR_INTERNAL, n, "step kernel of a node that was not expanded");
    cell_acts ca;
    weft_status pst = parse_acts(n, c, D, &ca);
    if (pst != WEFT_OK) return pst;
    int mask_in = c == CELL_LSTM ? 5 : 4, peep_in = 6;
    bool masked = n->n_inputs > mask_in && n->inputs[mask_in] >= 0;
    bool peep = c == CELL_LSTM && n->n_inputs > peep_in && n->inputs[peep_in] >= 0;
    bool coupled = c == CELL_LSTM && weft_gnode_attr_int(n, "input_forget", 0) != 0; /* f = 1 - i */
    const weft_gvalue *Y = &g->values[n->outputs[0]];
    int64_t T = Y->shape[0], B = Y->shape[2], H = Y->shape[3], G = gates_of(c), GH = G * H;
    int64_t fb = 4; /* bytes per float */
    const weft_gvalue *Rv = &g->values[n->inputs[1]];
    int64_t NB = Rv->shape[1], blk = Rv->shape[3];
    if (Rv->ndim != 4 || NB * blk != GH) return weft_nn_fail(WEFT_ERR_INTERNAL, n, "recurrent weights not in blocks");
    const weft_tensor *Rt = weft_te_placeholder(a, "Rt", WEFT_F32, 4, (int64_t[]){D, NB, H, blk});
    const weft_tensor *rb = weft_te_placeholder(a, "rb", WEFT_F32, 2, (int64_t[]){D, GH});
    const weft_tensor *P = peep ? weft_te_placeholder(a, "P", WEFT_F32, 2, (int64_t[]){D, 3 * H}) : NULL;
    const weft_tensor *ins[3 + 4 * 2];
    const weft_tensor *outs[5 * 2];
    int n_in = 0, n_out = 0;
    weft_op_step_param pin[3 + 4 * 2], pout[5 * 2]; /* at most 4 inputs and 5 outputs per direction */
    weft_tensor *lbr0_rh = NULL, *lbr0_rec2 = NULL;
    ins[n_in] = Rt, pin[n_in++] = (weft_op_step_param){n->inputs[1], 0, 0, -1, 0};
    ins[n_in] = rb, pin[n_in++] = (weft_op_step_param){n->inputs[2], 0, 0, -1, 0};
    if (peep) ins[n_in] = P, pin[n_in++] = (weft_op_step_param){n->inputs[peep_in], 0, 0, -1, 0};
    for (int64_t d = 0; d < D; d++) {
        bool rev = rev_only || d == 1;
        int64_t t0 = rev ? T - 1 : 0, dir = rev ? -1 : 1;
        int64_t slot = B * H * fb;                               /* one [B, H] state */
        int64_t y_stride = dir * D * slot, y_off = (t0 * D + d) * slot;
        int64_t prev_off = ((rev ? T : -1) * D + d) * slot;     /* slot of step s-1 at step s: + s*stride */
        dir_io io = {0};
        char nm[16];
        snprintf(nm, sizeof nm, "xw%" PRId64, d);
        io.xw = weft_te_placeholder(a, weft_nn_stage(a, nm, ""), WEFT_F32, 2, (int64_t[]){B, D * GH});
        ins[n_in] = io.xw, pin[n_in++] = (weft_op_step_param){n->inputs[0], t0 * B * D * GH * fb, dir * B * D * GH * fb, -1, 0};
        snprintf(nm, sizeof nm, "h%" PRId64, d);
        io.h = weft_te_placeholder(a, weft_nn_stage(a, nm, ""), WEFT_F32, 2, (int64_t[]){B, H});
        ins[n_in] = io.h, pin[n_in++] = (weft_op_step_param){n->outputs[0], prev_off, y_stride, n->inputs[3], d * slot};
        if (c == CELL_LSTM) {
            snprintf(nm, sizeof nm, "c%" PRId64, d);
            io.c = weft_te_placeholder(a, weft_nn_stage(a, nm, ""), WEFT_F32, 2, (int64_t[]){B, H});
            ins[n_in] = io.c, pin[n_in++] = (weft_op_step_param){n->outputs[3], prev_off, y_stride, n->inputs[4], d * slot};
        }
        if (masked) {
            snprintf(nm, sizeof nm, "m%" PRId64, d);
            io.m = weft_te_placeholder(a, weft_nn_stage(a, nm, ""), WEFT_F32, 1, (int64_t[]){B});
            ins[n_in] = io.m, pin[n_in++] = (weft_op_step_param){n->inputs[mask_in], t0 * B * fb, dir * B * fb, -1, 0};
        }
        /* the recurrent product */
        char rs[16];
        snprintf(rs, sizeof rs, ".rec%" PRId64, d);
        /* Batch 1 (a GEMV): [blocks, B, blk], blocks outermost, so the default schedule
         * tiles several column blocks and its parallel loop runs over them (the hidden
         * dimension), not over the batch. A batch of ROWS_FROM or more: [B, G*H], so the
         * register tile spans batch rows and reuses each weight panel across them. */
        io.blk = blk;
        io.rows = B >= ROWS_FROM;
        const weft_expr *b, *k, *wr;
        if (io.rows) {
            io.rec = weft_te_compute(a, weft_nn_stage(a, name, rs), 2, (int64_t[]){B, GH}, (const char *[]){"b", "n"});
            if (!io.rec) return weft_nn_done(a, n);
            b = weft_te_axis(io.rec, 0);
            k = weft_te_reduce_axis(a, io.rec, "k", H);
            wr = rt_at(a, Rt, d, k, weft_te_axis(io.rec, 1), NB, blk);
        } else {
            io.rec = weft_te_compute(a, weft_nn_stage(a, name, rs), 3, (int64_t[]){NB, B, blk},
                                     (const char *[]){"n0", "b", "n1"});
            if (!io.rec) return weft_nn_done(a, n);
            b = weft_te_axis(io.rec, 1);
            k = weft_te_reduce_axis(a, io.rec, "k", H);
            wr = weft_te_at(a, Rt, weft_i64(a, d), weft_te_axis(io.rec, 0), k, weft_te_axis(io.rec, 2));
        }
        weft_te_set_body(io.rec, WEFT_REDUCE_SUM, weft_mul(a, weft_te_at(a, io.h, b, k), wr));
        /* the gates and the state update */
        weft_tensor *y = stage(a, name, "y", d, B, H);
        if (!y) return weft_nn_done(a, n);
        b = weft_te_axis(y, 0);
        const weft_expr *j = weft_te_axis(y, 1);
        const weft_expr *hp = weft_te_at(a, io.h, b, j);
        const act *F = &ca.f[d][0], *Gf = &ca.f[d][ca.per_dir > 1], *Hf = &ca.f[d][ca.per_dir - 1];
        weft_tensor *cs = NULL;
        if (c == CELL_RNN) {
            weft_te_set_body(y, WEFT_REDUCE_NONE, keep(a, &io, b, act_expr(a, ca.clip, F, pre(a, &io, rb, d, GH, b, j, 0, true)), hp));
        } else if (c == CELL_GRU && lbr0) {
            /* rh = r * h; rec2[b, j] = sum_k rh[b, k] Rt[d, n-gate column 2H + j] */
            weft_tensor *rh = stage(a, name, "rh", d, B, H);
            char r2[32];
            snprintf(r2, sizeof r2, ".rec2_%" PRId64, d);
            weft_tensor *rec2 = weft_te_compute(a, weft_nn_stage(a, name, r2), 2, (int64_t[]){B, H}, (const char *[]){"b", "j"});
            if (!rh || !rec2) return weft_nn_done(a, n);
            const weft_expr *rb_ = weft_te_axis(rh, 0), *rj = weft_te_axis(rh, 1);
            weft_te_set_body(rh, WEFT_REDUCE_NONE,
                             weft_mul(a, act_expr(a, ca.clip, F, pre(a, &io, rb, d, GH, rb_, rj, H, true)), weft_te_at(a, io.h, rb_, rj)));
            const weft_expr *kk = weft_te_reduce_axis(a, rec2, "k", H);
            const weft_expr *w2 = rt_at(a, Rt, d, kk, weft_add(a, weft_te_axis(rec2, 1), weft_i64(a, 2 * H)), NB, blk);
            weft_te_set_body(rec2, WEFT_REDUCE_SUM, weft_mul(a, weft_te_at(a, rh, weft_te_axis(rec2, 0), kk), w2));
            const weft_expr *z = act_expr(a, ca.clip, F, pre(a, &io, rb, d, GH, b, j, 0, true));
            const weft_expr *col = weft_add(a, j, weft_i64(a, 2 * H));
            const weft_expr *lin = weft_add(a, weft_te_at(a, rec2, b, j), weft_te_at(a, rb, weft_i64(a, d), col));
            const weft_expr *cand = act_expr(a, ca.clip, Gf, weft_add(a, pre(a, &io, rb, d, GH, b, j, 2 * H, false), lin));
            weft_te_set_body(y, WEFT_REDUCE_NONE, keep(a, &io, b, weft_add(a, cand, weft_mul(a, z, weft_sub(a, hp, cand))), hp));
            lbr0_rh = rh, lbr0_rec2 = rec2;
        } else if (c == CELL_GRU) {
            const weft_expr *z = act_expr(a, ca.clip, F, pre(a, &io, rb, d, GH, b, j, 0, true));
            const weft_expr *r = act_expr(a, ca.clip, F, pre(a, &io, rb, d, GH, b, j, H, true));
            const weft_expr *col = weft_add(a, j, weft_i64(a, 2 * H));
            const weft_expr *rn = weft_add(a, rec_at(a, &io, b, col), weft_te_at(a, rb, weft_i64(a, d), col));
            const weft_expr *cand =
                act_expr(a, ca.clip, Gf, weft_add(a, pre(a, &io, rb, d, GH, b, j, 2 * H, false), weft_mul(a, r, rn)));
            weft_te_set_body(y, WEFT_REDUCE_NONE, keep(a, &io, b, weft_add(a, cand, weft_mul(a, z, weft_sub(a, hp, cand))), hp));
        } else {
            cs = stage(a, name, "c", d, B, H);
            if (!cs) return weft_nn_done(a, n);
            const weft_expr *cb = weft_te_axis(cs, 0), *cj = weft_te_axis(cs, 1);
            const weft_expr *cp = weft_te_at(a, io.c, cb, cj);
            const weft_expr *pi = pre(a, &io, rb, d, GH, cb, cj, 0, true), *pf = pre(a, &io, rb, d, GH, cb, cj, 2 * H, true);
            if (peep) {
                pi = weft_add(a, pi, weft_mul(a, peephole(a, P, d, cj, 0), cp));
                pf = weft_add(a, pf, weft_mul(a, peephole(a, P, d, cj, 2 * H), cp));
            }
            const weft_expr *ig = act_expr(a, ca.clip, F, pi);
            const weft_expr *fg = coupled ? weft_sub(a, weft_f32(a, 1.0), ig) : act_expr(a, ca.clip, F, pf);
            const weft_expr *gg = act_expr(a, ca.clip, Gf, pre(a, &io, rb, d, GH, cb, cj, 3 * H, true));
            weft_te_set_body(cs, WEFT_REDUCE_NONE, keep(a, &io, cb, weft_add(a, weft_mul(a, fg, cp), weft_mul(a, ig, gg)), cp));
            const weft_expr *po = pre(a, &io, rb, d, GH, b, j, H, true);
            if (peep) po = weft_add(a, po, weft_mul(a, peephole(a, P, d, j, H), weft_te_at(a, cs, b, j)));
            const weft_expr *og = act_expr(a, ca.clip, F, po);
            weft_te_set_body(y, WEFT_REDUCE_NONE,
                             keep(a, &io, b, weft_mul(a, og, act_expr(a, 0, Hf, weft_te_at(a, cs, b, j))), hp));
        }
        /* the product is a kernel output (a scratch buffer of the node): the default schedules
         * then give it the register-tiled, vectorized and parallel nest of a matmul output */
        outs[n_out] = io.rec, pout[n_out++] = (weft_op_step_param){n->outputs[rec_out], d * B * GH * fb, 0, -1, 0};
        if (lbr0) {
            outs[n_out] = lbr0_rh, pout[n_out++] = (weft_op_step_param){n->outputs[3], d * B * H * fb, 0, -1, 0};
            outs[n_out] = lbr0_rec2, pout[n_out++] = (weft_op_step_param){n->outputs[4], d * B * H * fb, 0, -1, 0};
        }
        weft_tensor *yh = stage(a, name, "yh", d, B, H);
        if (!yh) return weft_nn_done(a, n);
        weft_te_set_body(yh, WEFT_REDUCE_NONE, weft_te_at(a, y, weft_te_axis(yh, 0), weft_te_axis(yh, 1)));
        outs[n_out] = y, pout[n_out++] = (weft_op_step_param){n->outputs[0], y_off, y_stride, -1, 0};
        outs[n_out] = yh, pout[n_out++] = (weft_op_step_param){n->outputs[1], d * slot, 0, -1, 0};
        if (c == CELL_LSTM) {
            weft_tensor *yc = stage(a, name, "yc", d, B, H);
            if (!yc) return weft_nn_done(a, n);
            weft_te_set_body(yc, WEFT_REDUCE_NONE, weft_te_at(a, cs, weft_te_axis(yc, 0), weft_te_axis(yc, 1)));
            outs[n_out] = yc, pout[n_out++] = (weft_op_step_param){n->outputs[2], d * slot, 0, -1, 0};
            outs[n_out] = cs, pout[n_out++] = (weft_op_step_param){n->outputs[3], y_off, y_stride, -1, 0};
        }
    }
    weft_status st = weft_nn_done(a, n);
    if (st != WEFT_OK) return st;
    st = weft_te_func_create(a, name, n_in, ins, n_out, outs, f);
    if (st != WEFT_OK) return st;
    *n_params = 0;
    for (int i = 0; i < n_in; i++) params[(*n_params)++] = pin[i];
    for (int i = 0; i < n_out; i++) params[(*n_params)++] = pout[i];
    *n_steps = T;
    return WEFT_OK;
}

/* Definitions of expanded nodes: no shape rule (their shapes are set), kernels by rnn_step. */
static const weft_op_def step_defs[] = {
    {"RNN", WEFT_PATTERN_OUT_REDUCTION_REUSE, false, NULL, weft_nn_rnn_compute, NULL},
    {"GRU", WEFT_PATTERN_OUT_REDUCTION_REUSE, false, NULL, weft_nn_rnn_compute, NULL},
    {"LSTM", WEFT_PATTERN_OUT_REDUCTION_REUSE, false, NULL, weft_nn_rnn_compute, NULL},
};

const weft_op_def *weft_nn_rnn_step_def(const weft_gnode *n) { return &step_defs[cell_of(n)]; }

bool weft_op_is_recurrence(const weft_op_def *def) { return def && def->infer == weft_nn_rnn_infer; }

weft_op_step_fn weft_op_step(const weft_op_def *def)
{
    for (int i = 0; i < 3; i++)
        if (def == &step_defs[i]) return rnn_step;
    return NULL;
}
