/* Recurrent models (ONNX GRU, LSTM, RNN; ops/nn_rnn.c, model/recur.c):
 *   - the PyTorch models of tests/data/rnn (scripts/gen_rnn.py: GRU encoder with embedding at
 *     batch 1 and 3, a GRU decoder step with its Linear, a 2-layer bidirectional LSTM
 *     classifier, a bidirectional tanh RNN with an initial state, a 2-layer ReLU RNN, a
 *     bidirectional GRU over a packed batch whose lengths are an input) match PyTorch's outputs
 *     within 1e-4 * max(1, max |reference|) at 1 and 2 threads (2 threads also with every
 *     kernel forced onto the pool, WEFT_SERIAL_BELOW_US=0);
 *   - GRU / LSTM / RNN nodes built with the graph API in directions forward, reverse and
 *     bidirectional, with and without B, initial_h / initial_c and sequence_lens, in layout 0
 *     and 1 (batch-major: the graph API puts the node between Transposes), GRU with
 *     linear_before_reset 1 and 0, match a
 *     naive C implementation of the ONNX formulas (same tolerance);
 *   - a bidirectional node compiles to two step kernels of one direction each;
 *   - sequences shorter than seq_len (sequence_lens a constant or a graph input; forward,
 *     reverse, bidirectional, layout 0 and 1) and every ONNX activation function with
 *     activation_alpha / _beta and clip, LSTM peepholes and input_forget match the same naive
 *     implementation;
 *   - bad inputs give clear errors: an input of the wrong sequence length, missing weights,
 *     unsupported attributes (layout 2, linear_before_reset 2, an unknown activation, too few
 *     or too many, a negative clip, peepholes of the wrong shape, a bad direction), a sequence length outside
 *     [1, seq_len].
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ir/caps.h"
#include "model/model_internal.h"
#include "weft/graph.h"
#include "weft/model.h"
#include "weft/onnx.h"

#define DATA "tests/data/rnn/"

static void *read_all(const char *path, size_t *bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *x = malloc((size_t)len + 8);
    *bytes = fread(x, 1, (size_t)len, f);
    fclose(f);
    return x;
}

/* max |y - ref| / max(1, max |ref|) */
static double rel_err(const float *y, const float *ref, size_t n)
{
    double mx = 1, err = 0;
    for (size_t i = 0; i < n; i++) mx = fmax(mx, fabs(ref[i]));
    for (size_t i = 0; i < n; i++) err = fmax(err, fabs((double)y[i] - ref[i]));
    return err / mx;
}

/* Compiles tests/data/rnn/NAME.onnx at `threads`, runs it on NAME.in.*.bin and compares every
 * output with NAME.out.OUTPUT.bin. */
static void check_model(const char *name, int threads)
{
    char path[256];
    snprintf(path, sizeof path, DATA "%s.onnx", name);
    weft_graph *g = NULL;
    weft_status rc = weft_onnx_load(path, &g);
    if (rc != WEFT_OK) print_error("%s: %s\n", path, weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    weft_model *m = NULL;
    rc = weft_model_compile(g, &o, &m);
    if (rc != WEFT_OK) print_error("%s: %s\n", path, weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    int ni = weft_model_n_inputs(m), no = weft_model_n_outputs(m);
    void *in[8] = {0}, *out[8] = {0}, *ref[8] = {0};
    size_t in_bytes[8], out_bytes[8], ref_bytes[8];
    assert_true(ni <= 8 && no <= 8);
    for (int i = 0; i < ni; i++) {
        weft_tensor_info info;
        assert_int_equal(weft_model_input_info(m, i, &info), WEFT_OK);
        snprintf(path, sizeof path, DATA "%s.in.%s.bin", name, info.name);
        in[i] = read_all(path, &in_bytes[i]);
        assert_non_null(in[i]);
    }
    for (int i = 0; i < no; i++) {
        weft_tensor_info info;
        assert_int_equal(weft_model_output_info(m, i, &info), WEFT_OK);
        snprintf(path, sizeof path, DATA "%s.out.%s.bin", name, info.name);
        ref[i] = read_all(path, &ref_bytes[i]);
        assert_non_null(ref[i]);
        out_bytes[i] = info.bytes;
        assert_int_equal(out_bytes[i], ref_bytes[i]);
        out[i] = calloc(1, out_bytes[i]);
    }
    rc = weft_model_run_sized(m, ni, (const void *const *)in, in_bytes, no, out, out_bytes);
    if (rc != WEFT_OK) print_error("%s: %s\n", name, weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    for (int i = 0; i < no; i++) {
        double e = rel_err(out[i], ref[i], out_bytes[i] / 4);
        if (e > 1e-4) print_error("%s output %d at %d threads: relative error %g\n", name, i, threads, e);
        assert_true(e <= 1e-4);
    }
    /* an input one time step short (or long) is refused, naming the input */
    if (strncmp(name, "gru_dec", 7) != 0) {
        size_t step = in_bytes[0] / (size_t)(strstr(name, "lstm") ? 9 : strstr(name, "rnn") ? 5 : 6);
        size_t bad[8];
        memcpy(bad, in_bytes, sizeof bad);
        bad[0] -= step;
        rc = weft_model_run_sized(m, ni, (const void *const *)in, bad, no, out, out_bytes);
        assert_int_equal(rc, WEFT_ERR_SHAPE);
        weft_tensor_info info;
        weft_model_input_info(m, 0, &info);
        assert_non_null(strstr(weft_last_error(), info.name));
    }
    for (int i = 0; i < 8; i++) free(in[i]), free(out[i]), free(ref[i]);
    weft_model_destroy(m);
    weft_graph_destroy(g);
}

static const char *const models[] = {"gru_enc_b1", "gru_enc_b3", "gru_dec_b1", "gru_dec_b3", "lstm_cls", "rnn_tanh",
                                     "rnn_relu", "packed_gru"};

static void test_pytorch_1_thread(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) check_model(models[i], 1);
}

static void test_pytorch_2_threads(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) check_model(models[i], 2);
    setenv("WEFT_SERIAL_BELOW_US", "0", 1); /* every kernel on the pool */
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) check_model(models[i], 2);
    unsetenv("WEFT_SERIAL_BELOW_US");
}

/* ---- graph-API nodes against a naive implementation of the ONNX formulas ------------------ */

typedef struct cfg {
    const char *op;       /* GRU, LSTM, RNN */
    const char *dir;      /* forward, reverse, bidirectional */
    int T, B, I, H;
    bool bias, h0, c0, seq_lens;
    bool batch_major; /* layout=1: x [B, T, I], states [B, D, H], y [B, T, D, H] */
    bool lbr0;        /* GRU with linear_before_reset=0 */
    const char *acts; /* activations (all directions), NULL: the defaults */
    const float *alpha, *beta; /* activation_alpha / _beta (n_alpha, n_beta values) */
    int n_alpha, n_beta;
    float clip;              /* 0: none */
    const int64_t *lens;     /* with seq_lens: per batch row (NULL: all T) */
    bool lens_input;         /* sequence_lens a graph input (run-time) instead of a constant */
    bool peep, coupled;      /* LSTM: peepholes P; input_forget=1 */
} cfg;

/* Swaps the first two axes of a [n0, n1, inner] array (a fresh copy). */
static float *swap01(const float *x, int n0, int n1, int inner)
{
    float *y = malloc(sizeof(float) * (size_t)n0 * n1 * inner + 4);
    for (int a = 0; a < n0; a++)
        for (int b = 0; b < n1; b++) memcpy(y + ((size_t)b * n0 + a) * inner, x + ((size_t)a * n1 + b) * inner, sizeof(float) * (size_t)inner);
    return y;
}

/* An activation of the ONNX list with its alpha, beta. */
typedef struct act_fn {
    char name[24];
    float alpha, beta;
} act_fn;

/* The spec's formulas; x is clipped first when clip > 0. */
static float act(const act_fn *f, float clip, float x)
{
    if (clip > 0) x = fminf(fmaxf(x, -clip), clip);
    const char *n = f->name;
    if (!strcasecmp(n, "Relu")) return x > 0 ? x : 0;
    if (!strcasecmp(n, "Tanh")) return tanhf(x);
    if (!strcasecmp(n, "Sigmoid")) return 1.0f / (1.0f + expf(-x));
    if (!strcasecmp(n, "Affine")) return f->alpha * x + f->beta;
    if (!strcasecmp(n, "LeakyRelu")) return x >= 0 ? x : f->alpha * x;
    if (!strcasecmp(n, "ThresholdedRelu")) return x >= f->alpha ? x : 0;
    if (!strcasecmp(n, "ScaledTanh")) return f->alpha * tanhf(f->beta * x);
    if (!strcasecmp(n, "HardSigmoid")) return fminf(fmaxf(f->alpha * x + f->beta, 0), 1);
    if (!strcasecmp(n, "Elu")) return x >= 0 ? x : f->alpha * (expf(x) - 1);
    if (!strcasecmp(n, "Softsign")) return x / (1 + fabsf(x));
    if (!strcasecmp(n, "Softplus")) return logf(1 + expf(x));
    fail_msg("unknown activation %s", n);
    return 0;
}

/* c's activations per direction and slot (f, g, h); alpha / beta consumed in order by the
 * functions that take them, defaults past the lists' ends. */
static void resolve_acts(const cfg *c, int D, int per, act_fn fn[2][3])
{
    static const char *const dflt[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const char *p = c->acts;
    int ia = 0, ib = 0;
    for (int d = 0; d < D; d++)
        for (int j = 0; j < per; j++) {
            act_fn *f = &fn[d][j];
            if (p) {
                size_t len = strcspn(p, ",");
                snprintf(f->name, sizeof f->name, "%.*s", (int)len, p);
                p = p[len] ? p + len + 1 : NULL;
            } else snprintf(f->name, sizeof f->name, "%s", dflt[per - 1][j]);
            int takes = 0;
            float da = 0, db = 0;
            if (!strcasecmp(f->name, "LeakyRelu")) takes = 1, da = 0.01f;
            if (!strcasecmp(f->name, "ThresholdedRelu") || !strcasecmp(f->name, "Elu")) takes = 1, da = 1;
            if (!strcasecmp(f->name, "HardSigmoid")) takes = 2, da = 0.2f, db = 0.5f;
            if (!strcasecmp(f->name, "Affine")) takes = 2, da = 1, db = 0;
            if (!strcasecmp(f->name, "ScaledTanh")) takes = 2, da = 1, db = 1;
            f->alpha = takes >= 1 && ia < c->n_alpha ? c->alpha[ia++] : da;
            f->beta = takes >= 2 && ib < c->n_beta ? c->beta[ib++] : db;
        }
}

/* ONNX semantics, one direction and batch row at a time; y [T, D, B, H] (zero past a row's
 * sequence length), yh / yc [D, B, H]. A row of length L runs steps 0 .. L-1, the reverse
 * direction from L-1 down to 0. */
static void naive(const cfg *c, int G, int D, const float *x, const float *w, const float *r, const float *b,
                  const float *h0, const float *c0, const float *peep, float *y, float *yh, float *yc)
{
    int T = c->T, B = c->B, I = c->I, H = c->H, per = G == 1 ? 1 : G == 3 ? 2 : 3;
    act_fn fn[2][3];
    resolve_acts(c, D, per, fn);
    float *h = malloc(sizeof(float) * (size_t)H), *cs = malloc(sizeof(float) * (size_t)H);
    float *hn = malloc(sizeof(float) * (size_t)H);
    float *g = malloc(sizeof(float) * (size_t)(G * H)), *gr = malloc(sizeof(float) * (size_t)(G * H));
    float clip = c->clip;
    for (int d = 0; d < D; d++) {
        bool rev = !strcmp(c->dir, "reverse") || d == 1;
        const act_fn *F = &fn[d][0], *Gf = &fn[d][per > 1], *Hf = &fn[d][per - 1];
        const float *W = w + (size_t)d * G * H * I, *R = r + (size_t)d * G * H * H;
        const float *Wb = b ? b + (size_t)d * 2 * G * H : NULL, *Rb = Wb ? Wb + G * H : NULL;
        for (int bb = 0; bb < B; bb++) {
            int L = c->lens ? (int)c->lens[bb] : T;
            for (int i = 0; i < H; i++) h[i] = h0 ? h0[(d * B + bb) * H + i] : 0, cs[i] = c0 ? c0[(d * B + bb) * H + i] : 0;
            for (int s = 0; s < L; s++) {
                int t = rev ? L - 1 - s : s;
                for (int n = 0; n < G * H; n++) {
                    float acc = Wb ? Wb[n] : 0, rec = Rb ? Rb[n] : 0;
                    for (int i = 0; i < I; i++) acc += x[((size_t)t * B + bb) * I + i] * W[(size_t)n * I + i];
                    for (int k = 0; k < H; k++) rec += h[k] * R[(size_t)n * H + k];
                    g[n] = acc, gr[n] = rec;
                }
                for (int j = 0; j < H; j++) {
                    if (G == 1) hn[j] = act(F, clip, g[j] + gr[j]);
                    else if (G == 3 && c->lbr0) { /* n = g(Wx + (r * h) R_n + Rb_n) */
                        float z = act(F, clip, g[j] + gr[j]), lin = Rb ? Rb[2 * H + j] : 0;
                        for (int k = 0; k < H; k++)
                            lin += act(F, clip, g[H + k] + gr[H + k]) * h[k] * R[(size_t)(2 * H + j) * H + k];
                        hn[j] = (1 - z) * act(Gf, clip, g[2 * H + j] + lin) + z * h[j];
                    } else if (G == 3) {
                        float z = act(F, clip, g[j] + gr[j]), rr = act(F, clip, g[H + j] + gr[H + j]);
                        float nn = act(Gf, clip, g[2 * H + j] + rr * gr[2 * H + j]);
                        hn[j] = (1 - z) * nn + z * h[j];
                    } else { /* peepholes: P_i, P_o, P_f per direction */
                        const float *P = peep ? peep + (size_t)d * 3 * H : NULL;
                        float ig = act(F, clip, g[j] + gr[j] + (P ? P[j] * cs[j] : 0));
                        float fg = c->coupled ? 1 - ig : act(F, clip, g[2 * H + j] + gr[2 * H + j] + (P ? P[2 * H + j] * cs[j] : 0));
                        float cc = act(Gf, clip, g[3 * H + j] + gr[3 * H + j]);
                        cs[j] = fg * cs[j] + ig * cc;
                        float og = act(F, clip, g[H + j] + gr[H + j] + (P ? P[H + j] * cs[j] : 0));
                        hn[j] = og * act(Hf, 0, cs[j]);
                    }
                }
                memcpy(h, hn, sizeof(float) * (size_t)H);
                memcpy(y + (((size_t)t * D + d) * B + bb) * H, h, sizeof(float) * (size_t)H);
            }
            if (L == 0) /* a row of no steps ends with zeros, as ONNX Runtime gives it */
                for (int i = 0; i < H; i++) h[i] = 0, cs[i] = 0;
            memcpy(yh + ((size_t)d * B + bb) * H, h, sizeof(float) * (size_t)H);
            if (yc) memcpy(yc + ((size_t)d * B + bb) * H, cs, sizeof(float) * (size_t)H);
        }
    }
    free(h), free(cs), free(hn), free(g), free(gr);
}

static float *random_floats(size_t n, unsigned *seed, float scale)
{
    float *p = malloc(sizeof(float) * n + 4);
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1103515245u + 12345u;
        p[i] = scale * ((float)((*seed >> 8) & 0xffff) / 32768.0f - 1.0f);
    }
    return p;
}

static void check_node(const cfg *c)
{
    int G = !strcmp(c->op, "GRU") ? 3 : !strcmp(c->op, "LSTM") ? 4 : 1, D = !strcmp(c->dir, "bidirectional") ? 2 : 1;
    bool lstm = G == 4;
    int T = c->T, B = c->B, I = c->I, H = c->H;
    unsigned seed = (unsigned)(T * 131 + B * 17 + H + G + D * 7);
    size_t nx = (size_t)T * B * I, nw = (size_t)D * G * H * I, nr = (size_t)D * G * H * H, nb = (size_t)D * 2 * G * H,
           ns = (size_t)D * B * H, ny = (size_t)T * D * B * H;
    float *x = random_floats(nx, &seed, 1), *w = random_floats(nw, &seed, 0.5f), *r = random_floats(nr, &seed, 0.5f);
    float *b = random_floats(nb, &seed, 0.3f), *h0 = random_floats(ns, &seed, 1), *c0 = random_floats(ns, &seed, 1);
    float *pw = random_floats((size_t)D * 3 * H, &seed, 0.5f);
    weft_graph *g = NULL;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    weft_value vx, vw, vr, vb = -1, vl = -1, vh = -1, vc = -1, vp = -1, outs[3];
    int64_t xs[3] = {T, B, I}, ss[3] = {D, B, H};
    if (c->batch_major) xs[0] = B, xs[1] = T, ss[0] = B, ss[1] = D;
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 3, xs, &vx), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "W", WEFT_TYPE_FLOAT32, 3, (int64_t[]){D, G * H, I}, w, &vw), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "R", WEFT_TYPE_FLOAT32, 3, (int64_t[]){D, G * H, H}, r, &vr), WEFT_OK);
    if (c->bias) assert_int_equal(weft_graph_add_constant(g, "B", WEFT_TYPE_FLOAT32, 2, (int64_t[]){D, 2 * G * H}, b, &vb), WEFT_OK);
    int64_t lens[64];
    for (int i = 0; i < B; i++) lens[i] = c->lens ? c->lens[i] : T;
    if (c->seq_lens && c->lens_input)
        assert_int_equal(weft_graph_add_input(g, "lens", WEFT_TYPE_INT64, 1, (int64_t[]){B}, &vl), WEFT_OK);
    else if (c->seq_lens)
        assert_int_equal(weft_graph_add_constant(g, "lens", WEFT_TYPE_INT64, 1, (int64_t[]){B}, lens, &vl), WEFT_OK);
    if (c->h0) assert_int_equal(weft_graph_add_input(g, "h0", WEFT_TYPE_FLOAT32, 3, ss, &vh), WEFT_OK);
    if (c->c0) assert_int_equal(weft_graph_add_input(g, "c0", WEFT_TYPE_FLOAT32, 3, ss, &vc), WEFT_OK);
    if (c->peep) assert_int_equal(weft_graph_add_constant(g, "P", WEFT_TYPE_FLOAT32, 2, (int64_t[]){D, 3 * H}, pw, &vp), WEFT_OK);
    weft_value ins[8] = {vx, vw, vr, vb, vl, vh, vc, vp};
    weft_attr attrs[8] = {{.name = "hidden_size", .kind = WEFT_ATTR_INT, .i = H},
                          {.name = "direction", .kind = WEFT_ATTR_STRING, .s = c->dir},
                          {.name = "layout", .kind = WEFT_ATTR_INT, .i = c->batch_major},
                          {.name = "linear_before_reset", .kind = WEFT_ATTR_INT, .i = !c->lbr0}};
    int n_attrs = G == 3 ? 4 : 3;
    if (c->acts) attrs[n_attrs++] = (weft_attr){.name = "activations", .kind = WEFT_ATTR_STRING, .s = c->acts};
    if (c->n_alpha)
        attrs[n_attrs++] = (weft_attr){.name = "activation_alpha", .kind = WEFT_ATTR_FLOATS, .n = c->n_alpha, .floats = c->alpha};
    if (c->n_beta)
        attrs[n_attrs++] = (weft_attr){.name = "activation_beta", .kind = WEFT_ATTR_FLOATS, .n = c->n_beta, .floats = c->beta};
    if (c->clip > 0) attrs[n_attrs++] = (weft_attr){.name = "clip", .kind = WEFT_ATTR_FLOAT, .f = c->clip};
    if (c->coupled) attrs[n_attrs++] = (weft_attr){.name = "input_forget", .kind = WEFT_ATTR_INT, .i = 1};
    int n_out = lstm ? 3 : 2;
    weft_status rc = weft_graph_add_op(g, c->op, "cell", lstm ? (c->peep ? 8 : 7) : 6, ins, n_attrs, attrs, n_out, outs);
    if (rc != WEFT_OK) print_error("%s\n", weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    for (int k = 0; k < n_out; k++) assert_int_equal(weft_graph_set_output(g, outs[k], k ? "state" : "y"), WEFT_OK);
    float *yr = calloc(ny, sizeof(float)), *yhr = calloc(ns, sizeof(float)), *ycr = calloc(ns, sizeof(float));
    naive(c, G, D, x, w, r, c->bias ? b : NULL, c->h0 ? h0 : NULL, c->c0 ? c0 : NULL, c->peep ? pw : NULL, yr, yhr,
          lstm ? ycr : NULL);
    if (c->batch_major) { /* the model's inputs and expected outputs in layout 1 */
        float *t;
        t = swap01(x, T, B, I), free(x), x = t;
        t = swap01(h0, D, B, H), free(h0), h0 = t;
        t = swap01(c0, D, B, H), free(c0), c0 = t;
        t = swap01(yr, T, D * B, H); /* [T, D, B, H] -> [D*B, T, H]: regroup to [B, T, D, H] */
        for (int d = 0; d < D; d++)
            for (int bb = 0; bb < B; bb++)
                for (int s = 0; s < T; s++)
                    memcpy(yr + (((size_t)bb * T + s) * D + d) * H, t + (((size_t)(d * B + bb)) * T + s) * H, sizeof(float) * (size_t)H);
        free(t);
        t = swap01(yhr, D, B, H), free(yhr), yhr = t;
        t = swap01(ycr, D, B, H), free(ycr), ycr = t;
    }
    for (int threads = 1; threads <= 2; threads++) {
        weft_model_options o = weft_model_options_default();
        o.threads = threads;
        weft_model *m = NULL;
        rc = weft_model_compile(g, &o, &m);
        if (rc != WEFT_OK) print_error("%s\n", weft_last_error());
        assert_int_equal(rc, WEFT_OK);
        float *y = calloc(ny, sizeof(float)), *yh = calloc(ns, sizeof(float)), *yc = calloc(ns, sizeof(float));
        const void *in[4] = {x};
        size_t in_bytes[4] = {nx * 4}, out_bytes[3] = {ny * 4, ns * 4, ns * 4};
        int n_in = 1;
        if (c->seq_lens && c->lens_input) in[n_in] = lens, in_bytes[n_in++] = (size_t)B * 8;
        if (c->h0) in[n_in] = h0, in_bytes[n_in++] = ns * 4;
        if (c->c0) in[n_in] = c0, in_bytes[n_in++] = ns * 4;
        void *out[3] = {y, yh, yc};
        rc = weft_model_run_sized(m, n_in, in, in_bytes, n_out, out, out_bytes);
        if (rc != WEFT_OK) print_error("%s\n", weft_last_error());
        assert_int_equal(rc, WEFT_OK);
        double e = fmax(rel_err(y, yr, ny), rel_err(yh, yhr, ns));
        if (lstm) e = fmax(e, rel_err(yc, ycr, ns));
        if (e > 1e-4) print_error("%s %s T%d B%d: relative error %g at %d threads\n", c->op, c->dir, T, B, e, threads);
        assert_true(e <= 1e-4);
        free(y), free(yh), free(yc);
        weft_model_destroy(m);
    }
    free(yr), free(yhr), free(ycr);
    free(x), free(w), free(r), free(b), free(h0), free(c0), free(pw);
    weft_graph_destroy(g);
}

static void test_nodes_vs_naive(void **state)
{
    (void)state;
/* op, direction, T, B, I, H, B given, initial_h, initial_c, sequence_lens, layout 1, GRU's
 * linear_before_reset=0; then any other fields of cfg (designated) */
#define C(op_, dir_, T_, B_, I_, H_, bias_, h0_, c0_, lens_, bm_, ...)                                          \
    {.op = op_, .dir = dir_, .T = T_, .B = B_, .I = I_, .H = H_, .bias = bias_, .h0 = h0_, .c0 = c0_, .seq_lens = lens_, \
     .batch_major = bm_, .lbr0 = __VA_ARGS__}
    static const int64_t lens3[] = {5, 2, 4}, lens4[] = {1, 6, 3, 6}, lens2[] = {3, 1};
    static const float alpha[] = {0.3f, 0.15f, 0.8f}, beta[] = {0.4f, 1.5f};
#define AB .alpha = alpha, .n_alpha = 3, .beta = beta, .n_beta = 2
    static const cfg cases[] = {
        C("GRU", "forward", 5, 2, 7, 9, true, false, false, false, false, false),
        C("GRU", "reverse", 4, 3, 5, 8, true, true, false, true, false, false),
        C("GRU", "bidirectional", 6, 1, 6, 33, false, true, false, false, false, false),
        C("LSTM", "forward", 5, 2, 4, 10, true, true, true, false, false, false),
        C("LSTM", "reverse", 3, 2, 6, 7, false, false, false, true, false, false),
        C("LSTM", "bidirectional", 4, 3, 5, 6, true, true, true, false, false, false),
        C("RNN", "forward", 6, 2, 5, 16, true, false, false, false, false, false),
        C("RNN", "reverse", 5, 1, 3, 4, false, true, false, false, false, false),
        C("RNN", "bidirectional", 3, 2, 4, 5, true, true, false, true, false, false),
        /* batches from 4: the product tiles batch rows (ops/nn_rnn.c) */
        C("GRU", "bidirectional", 5, 9, 6, 40, true, true, false, false, false, false),
        C("LSTM", "reverse", 4, 4, 5, 16, true, true, true, false, false, false),
        C("RNN", "forward", 3, 17, 8, 33, false, false, false, false, false, false),
        /* layout=1 (batch-major) */
        C("GRU", "bidirectional", 4, 3, 5, 7, true, true, false, false, true, false),
        C("LSTM", "bidirectional", 3, 2, 4, 6, true, true, true, true, true, false),
        C("RNN", "reverse", 5, 4, 3, 5, false, true, false, false, true, false),
        /* GRU with linear_before_reset=0 (Keras / TensorFlow exports) */
        C("GRU", "forward", 5, 2, 7, 9, true, true, false, false, false, true),
        C("GRU", "bidirectional", 4, 5, 6, 40, true, true, false, false, false, true),
        C("GRU", "reverse", 3, 1, 4, 6, false, false, false, false, true, true),
        /* sequences shorter than seq_len (each also with sequence_lens a graph input, below):
         * masked steps keep the state, Y is zero there, a reverse row starts at its own last step */
        C("GRU", "bidirectional", 5, 3, 4, 7, true, true, false, true, false, false, .lens = lens3),
        C("LSTM", "forward", 5, 3, 3, 6, true, true, true, true, false, false, .lens = lens3),
        C("LSTM", "bidirectional", 6, 4, 5, 20, true, true, true, true, false, false, .lens = lens4),
        C("RNN", "reverse", 5, 3, 2, 5, true, true, false, true, false, false, .lens = lens3),
        C("GRU", "reverse", 5, 3, 4, 9, true, false, false, true, true, true, .lens = lens3),
        C("LSTM", "bidirectional", 3, 2, 4, 6, false, true, true, true, true, false, .lens = lens2),
        /* other activations, their alpha / beta (consumed in order by the functions that take
         * them), clip */
        C("RNN", "bidirectional", 4, 2, 3, 6, true, true, false, false, false, false, .acts = "Relu,LeakyRelu", AB),
        C("GRU", "bidirectional", 4, 2, 3, 6, true, true, false, false, false, false,
          .acts = "HardSigmoid,Softsign,Sigmoid,Elu", AB),
        C("LSTM", "bidirectional", 4, 2, 3, 6, true, true, true, false, false, false,
          .acts = "Sigmoid,Affine,ScaledTanh,HardSigmoid,ThresholdedRelu,Softplus", AB),
        C("LSTM", "forward", 5, 3, 4, 8, true, true, true, true, false, false, .acts = "sigmoid,relu,tanh", .clip = 0.9f,
          .lens = lens3),
        C("GRU", "forward", 4, 2, 3, 6, true, true, false, false, false, true, .acts = "HardSigmoid,Tanh", .clip = 0.7f),
        C("RNN", "forward", 4, 2, 3, 6, true, true, false, false, false, false, .acts = "Tanh", .clip = 0.5f),
        /* LSTM peepholes (P: i, o, f) and input_forget (f = 1 - i) */
        C("LSTM", "forward", 5, 2, 4, 10, true, true, true, false, false, false, .peep = true),
        C("LSTM", "bidirectional", 4, 3, 5, 6, true, true, true, true, false, false, .peep = true),
        C("LSTM", "reverse", 4, 5, 3, 16, false, false, false, false, true, false, .coupled = true),
        C("LSTM", "bidirectional", 5, 3, 4, 7, true, true, true, true, false, false, .peep = true, .coupled = true,
          .lens = lens3),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfg c = cases[i];
        check_node(&c);
        if (c.lens) c.lens_input = true, check_node(&c); /* the lengths given at run time */
    }
    /* a length of 0 computed at run time (a constant one is refused): that row's Y_h and Y_c
     * are zeros, not the initial state */
    static const int64_t lens0[] = {3, 0, 2};
    static const cfg empty_rows[] = {
        C("GRU", "bidirectional", 3, 3, 4, 7, true, true, false, true, false, false, .lens = lens0, .lens_input = true),
        C("LSTM", "forward", 3, 3, 3, 6, true, true, true, true, false, false, .lens = lens0, .lens_input = true),
        C("RNN", "reverse", 3, 3, 2, 5, true, true, false, true, true, false, .lens = lens0, .lens_input = true),
    };
    for (size_t i = 0; i < sizeof empty_rows / sizeof empty_rows[0]; i++) check_node(&empty_rows[i]);
#undef AB
#undef C
}

/* ---- errors ----------------------------------------------------------------------------- */

/* Adds a GRU (or `op`) on x [4, 2, 3] with hidden 5 and the given extra attribute; returns the
 * status and leaves the message in weft_last_error(). */
static weft_status add_bad(const char *op, const weft_attr *extra, bool omit_r, bool lens_short, bool peephole)
{
    int G = !strcmp(op, "LSTM") ? 4 : 3, H = 5;
    weft_graph *g = NULL;
    weft_graph_create(&g);
    float w[4 * 5 * 5] = {0};
    weft_value vx, vw, vr, vl = -1, vp = -1, outs[2];
    weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 3, (int64_t[]){4, 2, 3}, &vx);
    weft_graph_add_constant(g, "W", WEFT_TYPE_FLOAT32, 3, (int64_t[]){1, G * H, 3}, w, &vw);
    weft_graph_add_constant(g, "R", WEFT_TYPE_FLOAT32, 3, (int64_t[]){1, G * H, H}, w, &vr);
    if (lens_short) weft_graph_add_constant(g, "lens", WEFT_TYPE_INT64, 1, (int64_t[]){2}, (int64_t[]){4, 5}, &vl);
    if (peephole) weft_graph_add_constant(g, "P", WEFT_TYPE_FLOAT32, 2, (int64_t[]){1, 2 * H}, w, &vp);
    weft_value ins[8] = {vx, vw, omit_r ? -1 : vr, -1, vl, -1, -1, vp};
    weft_attr attrs[3] = {{.name = "hidden_size", .kind = WEFT_ATTR_INT, .i = H}};
    int n_attrs = 1;
    if (!extra || strcmp(extra->name, "linear_before_reset") != 0)
        attrs[n_attrs++] = (weft_attr){.name = "linear_before_reset", .kind = WEFT_ATTR_INT, .i = 1};
    if (extra) attrs[n_attrs++] = *extra;
    weft_status rc = weft_graph_add_op(g, op, "cell", peephole ? 8 : 5, ins, n_attrs, attrs, 2, outs);
    weft_graph_destroy(g);
    return rc;
}

static void expect_error(weft_status rc, weft_status want, const char *text)
{
    if (rc != want || !strstr(weft_last_error(), text)) print_error("got %d '%s', want '%s'\n", rc, weft_last_error(), text);
    assert_int_equal(rc, want);
    assert_non_null(strstr(weft_last_error(), text));
}

/* ---- bidirectional nodes as two loops ----------------------------------------------------- */

static weft_status count_steps(void *ud, weft_arena *a, weft_te_func *f, const char *name)
{
    int *n = ud;
    /* a step kernel of one direction has outputs for one direction only: y0, never y1 */
    if (strstr(name, "_step")) {
        n[0]++;
        for (int i = 0; i < f->n_outputs; i++)
            if (strstr(f->outputs[i]->name, ".y1")) n[1]++;
    }
    weft_arena_destroy(a); /* the callback owns the kernel's arena */
    return WEFT_OK;
}

/* The bidirectional layers of lstm_cls (2 layers) and rnn_tanh (1) become a forward and a
 * reverse loop each (model/recur.c): 4 and 2 step kernels, each of one direction; their outputs
 * matched PyTorch above. weft_model_each_kernel visits a step kernel once per time step (9 and
 * 5 steps). */
static void test_bidirectional_split(void **state)
{
    (void)state;
    static const struct { const char *name; int steps; } cases[] = {{"lstm_cls", 4 * 9}, {"rnn_tanh", 2 * 5}};
    for (int c = 0; c < 2; c++) {
        char path[256];
        snprintf(path, sizeof path, DATA "%s.onnx", cases[c].name);
        weft_graph *g = NULL;
        assert_int_equal(weft_onnx_load(path, &g), WEFT_OK);
        weft_target_caps caps = weft_caps_cpu(512, 2);
        int n[2] = {0, 0};
        assert_int_equal(weft_model_each_kernel(g, &caps, count_steps, n), WEFT_OK);
        if (n[0] != cases[c].steps || n[1] != 0)
            print_error("%s: %d step kernel visits, %d with a second direction; want %d and 0\n", cases[c].name, n[0], n[1],
                        cases[c].steps);
        assert_int_equal(n[0], cases[c].steps);
        assert_int_equal(n[1], 0);
        weft_graph_destroy(g);
    }
}

static void test_errors(void **state)
{
    (void)state;
    weft_attr layout = {.name = "layout", .kind = WEFT_ATTR_INT, .i = 2};
    weft_attr lbr0 = {.name = "linear_before_reset", .kind = WEFT_ATTR_INT, .i = 2};
    weft_attr swish = {.name = "activations", .kind = WEFT_ATTR_STRING, .s = "Swish,Tanh"};
    weft_attr one = {.name = "activations", .kind = WEFT_ATTR_STRING, .s = "Relu"};
    weft_attr three = {.name = "activations", .kind = WEFT_ATTR_STRING, .s = "Relu,Tanh,Tanh"};
    weft_attr clip = {.name = "clip", .kind = WEFT_ATTR_FLOAT, .f = -3.0};
    weft_attr dir = {.name = "direction", .kind = WEFT_ATTR_STRING, .s = "sideways"};
    expect_error(add_bad("GRU", &layout, false, false, false), WEFT_ERR_UNSUPPORTED, "layout=2");
    expect_error(add_bad("GRU", NULL, true, false, false), WEFT_ERR_INVALID_ARG, "GRU node 'cell'");
    expect_error(add_bad("GRU", NULL, false, true, false), WEFT_ERR_INVALID_ARG, "sequence_lens[1] = 5 is outside [1, 4]");
    expect_error(add_bad("GRU", &swish, false, false, false), WEFT_ERR_UNSUPPORTED, "activation 'Swish' is not supported");
    expect_error(add_bad("GRU", &one, false, false, false), WEFT_ERR_INVALID_ARG, "names 1 function(s), expected 2");
    expect_error(add_bad("GRU", &three, false, false, false), WEFT_ERR_INVALID_ARG, "names more than 2 function(s)");
    expect_error(add_bad("GRU", &clip, false, false, false), WEFT_ERR_INVALID_ARG, "clip must be a positive float");
    expect_error(add_bad("GRU", &dir, false, false, false), WEFT_ERR_UNSUPPORTED, "direction 'sideways'");
    expect_error(add_bad("LSTM", NULL, false, false, true), WEFT_ERR_SHAPE, "peepholes P has shape [1,10], expected [1,15]");
    expect_error(add_bad("GRU", &lbr0, false, false, false), WEFT_ERR_INVALID_ARG, "linear_before_reset=2");
    assert_int_equal(add_bad("GRU", NULL, false, false, false), WEFT_OK); /* the same node, supported */
    /* a weight given as a graph input (not a constant) */
    weft_graph *g = NULL;
    weft_graph_create(&g);
    weft_value vx, vw, vr, outs[2];
    weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 3, (int64_t[]){4, 2, 3}, &vx);
    weft_graph_add_input(g, "W", WEFT_TYPE_FLOAT32, 3, (int64_t[]){1, 5, 3}, &vw);
    weft_graph_add_input(g, "R", WEFT_TYPE_FLOAT32, 3, (int64_t[]){1, 5, 5}, &vr);
    weft_attr hs = {.name = "hidden_size", .kind = WEFT_ATTR_INT, .i = 5};
    weft_status rc = weft_graph_add_op(g, "RNN", "cell", 3, (weft_value[]){vx, vw, vr}, 1, &hs, 2, outs);
    expect_error(rc, WEFT_ERR_UNSUPPORTED, "W and R must be constants");
    /* a weight of the wrong shape */
    weft_value vw2;
    weft_graph_add_input(g, "W2", WEFT_TYPE_FLOAT32, 3, (int64_t[]){1, 15, 3}, &vw2);
    rc = weft_graph_add_op(g, "RNN", "cell2", 3, (weft_value[]){vx, vw2, vr}, 1, &hs, 2, outs);
    expect_error(rc, WEFT_ERR_SHAPE, "input W has shape [1,15,3], expected [1,5,3]");
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pytorch_1_thread),
        cmocka_unit_test(test_pytorch_2_threads),
        cmocka_unit_test(test_nodes_vs_naive),
        cmocka_unit_test(test_bidirectional_split),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
