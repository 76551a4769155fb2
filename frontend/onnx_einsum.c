/* ONNX Einsum, rewritten on import into the ops weft schedules well: Transpose, Reshape,
 * ReduceSum and one MatMul.
 *
 * Two operands: every label is a batch label (in both operands and the output), a contracted
 * one (both operands, not the output), a free one of A or of B (one operand and the output), or
 * summed away in one operand (one operand only: a ReduceSum first). A is transposed to
 * [batch, free A, contracted] and reshaped to [Bt, M, K] (or [M, K] without batch labels, so a
 * constant B reads as a 2-D weight and gets the matmul's blocked layout), B to [Bt, K, N] (or
 * [K, N]); their MatMul is reshaped to [batch, free A, free B] and transposed to the output's
 * order. One operand: a ReduceSum over the labels the output drops, then a Transpose.
 * Transposes that keep the order are left out.
 *
 * "..." stands for the same unnamed dims in every term (equal extents; no broadcasting of
 * extent-1 dims). Without "->" the output is every label used once, in alphabetical order
 * (ellipsis dims first). Refused with the node and equation named: a label repeated within
 * one term (diagonals, traces), more than two operands, labels of different extents, an
 * output label no operand has.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "frontend/onnx.h"
#include "ir/error.h"

#define EIN_MAX 8 /* dims per term, as weft's tensors */

typedef struct term {
    char lab[EIN_MAX];
    int n;
} term;

/* The labels of one term (its text in [s, e)); ellipsis dims become '0' + i, filling the rank. */
static bool parse_term(const char *s, const char *e, int rank, term *t, int *n_ell)
{
    t->n = 0;
    int letters = 0, ell = -1;
    for (const char *p = s; p < e; p++) {
        if (*p == '.') {
            if (ell >= 0 || e - p < 3 || p[1] != '.' || p[2] != '.') return false;
            ell = letters;
            p += 2;
        } else if (isalpha((unsigned char)*p)) {
            letters++;
        } else if (*p != ' ') {
            return false;
        }
    }
    int ne = ell < 0 ? 0 : rank < 0 ? 1 : rank - letters; /* rank < 0 (the output): one marker, expanded later */
    if (ne < 0 || (rank >= 0 && ell < 0 && letters != rank) || letters + ne > EIN_MAX) return false;
    if (n_ell) *n_ell = ell >= 0 ? ne : -1;
    for (const char *p = s; p < e; p++) {
        if (*p == '.') {
            for (int i = 0; i < ne; i++) t->lab[t->n++] = (char)('0' + i);
            p += 2;
        } else if (isalpha((unsigned char)*p)) {
            t->lab[t->n++] = *p;
        }
    }
    return true;
}

static int find(const term *t, char c)
{
    for (int i = 0; i < t->n; i++)
        if (t->lab[i] == c) return i;
    return -1;
}

static bool repeats(const term *t)
{
    for (int i = 0; i < t->n; i++)
        if (find(t, t->lab[i]) != i) return true;
    return false;
}

typedef struct ein_ctx {
    weft_graph *g;
    const char *nname;
    int step;
} ein_ctx;

/* An op of one output named "<nname>.einK" (K counts the steps), or `final` (the node's name). */
static weft_status op1(ein_ctx *c, const char *op, int n_in, const weft_value *ins, int n_attrs, const weft_attr *attrs,
                       weft_value *out, const char *final)
{
    char suffix[24];
    snprintf(suffix, sizeof suffix, ".ein%d", c->step++);
    return weft_onnx_add_op1(c->g, op, final ? final : c->nname, final ? "" : suffix, n_in, ins, n_attrs, attrs, out);
}

static weft_status ints_const(ein_ctx *c, int n, const int64_t *v, weft_value *out)
{
    char suffix[24];
    snprintf(suffix, sizeof suffix, "ein%d", c->step++);
    return weft_onnx_add_i64(c->g, c->nname, suffix, n, v, out);
}

/* x (labels *t, extents ext) transposed to the label order `want`; *t becomes want. */
static weft_status transpose_to(ein_ctx *c, weft_value *x, term *t, int64_t *ext, const term *want, const char *final)
{
    int64_t perm[EIN_MAX], e2[EIN_MAX];
    bool same = true;
    for (int i = 0; i < want->n; i++) {
        perm[i] = find(t, want->lab[i]);
        e2[i] = ext[perm[i]];
        same = same && perm[i] == i;
    }
    if (same && !final) return WEFT_OK;
    weft_status rc;
    if (same) {
        rc = op1(c, "Identity", 1, x, 0, NULL, x, final);
    } else {
        weft_attr a = {.name = "perm", .kind = WEFT_ATTR_INTS, .n = want->n, .ints = perm};
        rc = op1(c, "Transpose", 1, x, 1, &a, x, final);
    }
    *t = *want;
    memcpy(ext, e2, sizeof e2);
    return rc;
}

static weft_status reshape(ein_ctx *c, weft_value *x, int n, const int64_t *shape, const char *final)
{
    weft_value s;
    weft_status rc = ints_const(c, n, shape, &s);
    return rc == WEFT_OK ? op1(c, "Reshape", 2, (weft_value[]){*x, s}, 0, NULL, x, final) : rc;
}

/* Sums x over the labels of *t that `keep` lacks (none: x unchanged). */
static weft_status sum_out(ein_ctx *c, weft_value *x, term *t, int64_t *ext, const term *keep1, const term *keep2)
{
    int64_t axes[EIN_MAX];
    int na = 0;
    term left = {.n = 0};
    int64_t e2[EIN_MAX];
    for (int i = 0; i < t->n; i++) {
        if (find(keep1, t->lab[i]) < 0 && (!keep2 || find(keep2, t->lab[i]) < 0)) {
            axes[na++] = i;
        } else {
            e2[left.n] = ext[i];
            left.lab[left.n++] = t->lab[i];
        }
    }
    if (!na) return WEFT_OK;
    weft_value av;
    weft_status rc = ints_const(c, na, axes, &av);
    weft_attr kd = {.name = "keepdims", .kind = WEFT_ATTR_INT, .i = 0};
    if (rc == WEFT_OK) rc = op1(c, "ReduceSum", 2, (weft_value[]){*x, av}, 1, &kd, x, NULL);
    *t = left;
    memcpy(ext, e2, sizeof e2);
    return rc;
}

weft_status weft_onnx_einsum(weft_graph *g, const char *nname, int n_in, const weft_value *ins, int n_attrs,
                             const weft_attr *attrs, int n_out, weft_value *outs)
{
    const char *eq = NULL;
    for (int i = 0; i < n_attrs; i++)
        if (attrs[i].name && !strcmp(attrs[i].name, "equation") && attrs[i].kind == WEFT_ATTR_STRING) eq = attrs[i].s;
    if (!eq) return weft_fail(WEFT_ERR_INVALID_ARG, "Einsum node '%s': attribute equation is missing", nname);
    if (n_in < 1 || n_in > 2 || n_out != 1)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "Einsum node '%s': equation '%.100s' has %d operands and %d outputs; "
                                               "1 or 2 operands and one output are supported", nname, eq, n_in, n_out);
    for (int i = 0; i < n_in; i++)
        if (ins[i] < 0 || weft_graph_value_type(g, ins[i]) != WEFT_TYPE_FLOAT32)
            return weft_fail(WEFT_ERR_UNSUPPORTED, "Einsum node '%s': operand %d is not a float32 tensor", nname, i);
    term t[2], out;
    int64_t ext[2][EIN_MAX], sh[8];
    const char *arrow = strstr(eq, "->"), *end = arrow ? arrow : eq + strlen(eq), *s = eq;
    int n_ell = -1;
    for (int i = 0; i < n_in; i++) {
        const char *comma = i + 1 < n_in ? memchr(s, ',', (size_t)(end - s)) : end;
        int rank = weft_graph_value_shape(g, ins[i], sh), ne = -1;
        if (!comma || (i + 1 == n_in && memchr(s, ',', (size_t)(end - s))) || !parse_term(s, comma, rank, &t[i], &ne))
            return weft_fail(WEFT_ERR_INVALID_ARG,
                             "Einsum node '%s': equation '%.100s' does not match its %d operand(s) (operand %d has %d dims)",
                             nname, eq, n_in, i, rank);
        for (int d = 0; d < rank; d++) ext[i][d] = sh[d];
        if (ne >= 0) {
            if (n_ell >= 0 && ne != n_ell)
                return weft_fail(WEFT_ERR_UNSUPPORTED, "Einsum node '%s': equation '%.100s': '...' covers %d dims in one "
                                                       "operand and %d in another (broadcasting is not supported)",
                                 nname, eq, n_ell, ne);
            n_ell = ne;
        }
        s = comma + 1;
    }
    if (arrow) {
        const char *o = arrow + 2;
        if (!parse_term(o, o + strlen(o), -1, &out, NULL))
            return weft_fail(WEFT_ERR_INVALID_ARG, "Einsum node '%s': cannot read the output of equation '%.100s'", nname, eq);
        /* the output's "..." holds as many dims as the operands' */
        term fixed = {.n = 0};
        for (int i = 0; i < out.n; i++)
            for (int e = 0; e < (out.lab[i] == '0' ? (n_ell > 0 ? n_ell : 0) : 1); e++) {
                if (fixed.n == EIN_MAX)
                    return weft_fail(WEFT_ERR_UNSUPPORTED, "Einsum node '%s': the output of equation '%.100s' has "
                                                           "more than %d dims", nname, eq, EIN_MAX);
                fixed.lab[fixed.n++] = out.lab[i] == '0' ? (char)('0' + e) : out.lab[i];
            }
        if (strstr(o, "...") && n_ell < 0)
            return weft_fail(WEFT_ERR_INVALID_ARG, "Einsum node '%s': equation '%.100s' has '...' only in its output", nname, eq);
        out = fixed;
    } else { /* implicit: the ellipsis dims, then labels used once, alphabetically */
        out.n = 0;
        for (int e = 0; e < (n_ell > 0 ? n_ell : 0); e++) out.lab[out.n++] = (char)('0' + e);
        for (int ch = 'A'; ch <= 'z'; ch++) {
            if (!isalpha(ch)) continue;
            int uses = 0;
            for (int i = 0; i < n_in; i++) uses += find(&t[i], (char)ch) >= 0;
            if (uses == 1 && out.n < EIN_MAX) out.lab[out.n++] = (char)ch;
        }
    }
    for (int i = 0; i < n_in; i++)
        if (repeats(&t[i]))
            return weft_fail(WEFT_ERR_UNSUPPORTED, "Einsum node '%s': equation '%.100s' repeats a label within operand %d "
                                                   "(diagonals and traces are not supported)", nname, eq, i);
    if (repeats(&out))
        return weft_fail(WEFT_ERR_INVALID_ARG, "Einsum node '%s': equation '%.100s' repeats a label in its output", nname, eq);
    for (int i = 0; i < out.n; i++) {
        bool found = false;
        for (int k = 0; k < n_in; k++) found = found || find(&t[k], out.lab[i]) >= 0;
        if (!found)
            return weft_fail(WEFT_ERR_INVALID_ARG, "Einsum node '%s': output label '%c' of equation '%.100s' is in no operand",
                             nname, out.lab[i], eq);
    }
    if (n_in == 2)
        for (int i = 0; i < t[0].n; i++) {
            int j = find(&t[1], t[0].lab[i]);
            if (j >= 0 && ext[0][i] != ext[1][j])
                return weft_fail(WEFT_ERR_SHAPE, "Einsum node '%s': label '%c' of equation '%.100s' has extent %lld in "
                                                 "operand 0 and %lld in operand 1", nname, t[0].lab[i], eq,
                                 (long long)ext[0][i], (long long)ext[1][j]);
        }
    ein_ctx c = {g, nname, 0};
    weft_value x = ins[0];
    if (n_in == 1) {
        weft_status rc = sum_out(&c, &x, &t[0], ext[0], &out, NULL);
        if (rc == WEFT_OK) rc = transpose_to(&c, &x, &t[0], ext[0], &out, nname);
        outs[0] = x;
        return rc;
    }
    weft_value y = ins[1];
    /* labels only one operand has and the output drops: summed first */
    weft_status rc = sum_out(&c, &x, &t[0], ext[0], &out, &t[1]);
    if (rc == WEFT_OK) rc = sum_out(&c, &y, &t[1], ext[1], &out, &t[0]);
    if (rc != WEFT_OK) return rc;
    term batch = {.n = 0}, fa = {.n = 0}, fb = {.n = 0}, con = {.n = 0};
    int64_t Bt = 1, M = 1, N = 1, K = 1;
    for (int i = 0; i < t[0].n; i++) {
        char l = t[0].lab[i];
        bool in_b = find(&t[1], l) >= 0, in_o = find(&out, l) >= 0;
        if (in_b && in_o) batch.lab[batch.n++] = l, Bt *= ext[0][i];
        else if (in_b) con.lab[con.n++] = l, K *= ext[0][i];
        else fa.lab[fa.n++] = l, M *= ext[0][i];
    }
    for (int i = 0; i < t[1].n; i++)
        if (find(&t[0], t[1].lab[i]) < 0) fb.lab[fb.n++] = t[1].lab[i], N *= ext[1][i];
    /* A -> [batch, free A, contracted], B -> [batch, contracted, free B] */
    term ta = batch, tb = batch;
    for (int i = 0; i < fa.n; i++) ta.lab[ta.n++] = fa.lab[i];
    for (int i = 0; i < con.n; i++) ta.lab[ta.n++] = con.lab[i], tb.lab[tb.n++] = con.lab[i];
    for (int i = 0; i < fb.n; i++) tb.lab[tb.n++] = fb.lab[i];
    rc = transpose_to(&c, &x, &t[0], ext[0], &ta, NULL);
    if (rc == WEFT_OK) rc = transpose_to(&c, &y, &t[1], ext[1], &tb, NULL);
    bool nb = batch.n > 0;
    int64_t sa[3] = {Bt, M, K}, sb[3] = {Bt, K, N};
    if (rc == WEFT_OK) rc = reshape(&c, &x, nb ? 3 : 2, nb ? sa : sa + 1, NULL);
    if (rc == WEFT_OK) rc = reshape(&c, &y, nb ? 3 : 2, nb ? sb : sb + 1, NULL);
    weft_value z = -1;
    if (rc == WEFT_OK) rc = op1(&c, "MatMul", 2, (weft_value[]){x, y}, 0, NULL, &z, NULL);
    /* [batch, free A, free B], then the output's order */
    term tz = batch;
    int64_t ez[EIN_MAX];
    for (int i = 0; i < batch.n; i++) ez[i] = ext[0][find(&t[0], batch.lab[i])];
    for (int i = 0; i < fa.n; i++) ez[tz.n] = ext[0][find(&t[0], fa.lab[i])], tz.lab[tz.n++] = fa.lab[i];
    for (int i = 0; i < fb.n; i++) ez[tz.n] = ext[1][find(&t[1], fb.lab[i])], tz.lab[tz.n++] = fb.lab[i];
    bool direct = true;
    for (int i = 0; i < tz.n; i++) direct = direct && tz.lab[i] == out.lab[i];
    if (rc == WEFT_OK) rc = reshape(&c, &z, tz.n, ez, direct ? nname : NULL);
    if (rc == WEFT_OK && !direct) rc = transpose_to(&c, &z, &tz, ez, &out, nname);
    outs[0] = z;
    return rc;
}
