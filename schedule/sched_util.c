#include "schedule/sched_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

weft_status weft_sched_stepf(weft_schedule *s, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    return weft_schedule_apply(s, line);
}

int64_t weft_sched_tile_rows(const weft_target_caps *caps)
{
    int regs = caps && caps->vector_regs > 0 ? caps->vector_regs : 16;
    int64_t rows = (regs - WEFT_SCHED_TILE_VECS - 1) / WEFT_SCHED_TILE_VECS;
    return rows < 1 ? 1 : rows > 8 ? 8 : rows;
}

int64_t weft_sched_fit_tile(int64_t extent, int64_t cap, int64_t lanes)
{
    if (cap < 1) cap = 1;
    if (extent <= cap) return extent;
    int64_t step = lanes > 1 && cap % lanes == 0 ? lanes : 1;
    for (int64_t t = cap; t > cap / 2; t -= step)
        if (extent % t == 0) return t;
    return cap;
}

int64_t weft_sched_fit_rows(int64_t extent, int64_t cap)
{
    if (cap < 1) cap = 1;
    if (extent <= cap) return extent;
    for (int64_t t = cap; 4 * t > 3 * cap; t--)
        if (extent % t == 0) return t;
    if (extent >= 4 * cap) return cap;
    return weft_sched_fit_tile(extent, cap, 1);
}

weft_status weft_sched_tile(weft_schedule *s, int t, const int64_t *tiles, char *attach, char *par)
{
    return weft_sched_tile_first(s, t, tiles, -1, true, attach, par);
}

weft_status weft_sched_fuse_parallel(weft_schedule *s, int t, char (*loops)[WEFT_SCHED_NAME + 8], int n,
                                     bool parallel, char *par)
{
    char sname[WEFT_SCHED_NAME];
    snprintf(sname, sizeof sname, "%s", s->stages[t].name);
    par[0] = '\0';
    if (n >= 2) {
        char line[1024];
        int len = snprintf(line, sizeof line, "fuse %s", sname);
        char fused[WEFT_SCHED_NAME * 2] = "";
        for (int i = 0; i < n; i++) {
            len += snprintf(line + len, sizeof line - (size_t)len, " %s", loops[i]);
            strncat(fused, i ? "@" : "", sizeof fused - strlen(fused) - 1);
            strncat(fused, loops[i], sizeof fused - strlen(fused) - 1);
        }
        if (strlen(fused) < WEFT_SCHED_NAME) {
            weft_status rc = weft_schedule_apply(s, line);
            if (rc != WEFT_OK) return rc;
            memcpy(par, fused, strlen(fused) + 1);
        } else snprintf(par, WEFT_SCHED_NAME, "%.*s", WEFT_SCHED_NAME - 1, loops[0]);
    } else if (n == 1) snprintf(par, WEFT_SCHED_NAME, "%.*s", WEFT_SCHED_NAME - 1, loops[0]);
    return par[0] && parallel ? weft_sched_stepf(s, "parallel %s %s", sname, par) : WEFT_OK;
}

weft_status weft_sched_tile_first(weft_schedule *s, int t, const int64_t *tiles, int first, bool parallel, char *attach,
                                  char *par)
{
    weft_stage *st = &s->stages[t];
    const weft_tensor *op = st->op;
    int n = op->ndim;
    char outer[WEFT_MAX_DIMS][WEFT_SCHED_NAME + 8], inner[WEFT_MAX_DIMS][WEFT_SCHED_NAME + 8];
    int n_outer = 0, n_inner = 0, vec_inner = -1;
    weft_status rc = WEFT_OK;
    attach[0] = par[0] = '\0';
    char sname[WEFT_SCHED_NAME];
    snprintf(sname, sizeof sname, "%s", st->name);
    for (int d = 0; d < n && rc == WEFT_OK; d++) {
        char name[WEFT_SCHED_NAME];
        snprintf(name, sizeof name, "%s", s->stages[t].iters[d].name);
        int64_t tile = tiles[d];
        if (tile <= 1) snprintf(outer[n_outer++], WEFT_SCHED_NAME + 8, "%s", name);
        else if (tile >= op->shape[d]) snprintf(inner[n_inner++], WEFT_SCHED_NAME + 8, "%s", name);
        else {
            rc = weft_sched_stepf(s, "split %s %s %lld", sname, name, (long long)tile);
            snprintf(outer[n_outer++], WEFT_SCHED_NAME + 8, "%s.0", name);
            snprintf(inner[n_inner++], WEFT_SCHED_NAME + 8, "%s.1", name);
        }
        if (tile > 1 && d == n - 1) vec_inner = n_inner - 1;
    }
    if (rc != WEFT_OK) return rc;
    if (first >= 0 && first < n && tiles[first] < op->shape[first]) { /* its outer loop moves to the front */
        char name[WEFT_SCHED_NAME + 8];
        snprintf(name, sizeof name, tiles[first] <= 1 ? "%s" : "%s.0", s->stages[t].iters[first].name);
        for (int i = 0; i < n_outer; i++)
            if (!strcmp(outer[i], name)) {
                for (int k = i; k > 0; k--) memcpy(outer[k], outer[k - 1], sizeof outer[k]);
                memcpy(outer[0], name, sizeof name);
                break;
            }
    }
    if (n_inner > 0 && n_outer > 0) {
        char line[1024];
        int len = snprintf(line, sizeof line, "reorder %s", sname);
        for (int i = 0; i < n_outer; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", outer[i]);
        for (int i = 0; i < n_inner; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", inner[i]);
        rc = weft_schedule_apply(s, line);
        if (rc != WEFT_OK) return rc;
    }
    /* The outer loops but the innermost are fused into one parallel loop; the innermost outer
     * loop is where a producer's tile is computed. */
    int n_fuse = n_inner > 0 && n_outer > 1 ? n_outer - 1 : n_outer;
    rc = weft_sched_fuse_parallel(s, t, outer, n_fuse, parallel, par);
    if (rc != WEFT_OK) return rc;
    if (n_outer > n_fuse) snprintf(attach, WEFT_SCHED_NAME, "%.*s", WEFT_SCHED_NAME - 1, outer[n_outer - 1]);
    else snprintf(attach, WEFT_SCHED_NAME, "%s", par);
    if (vec_inner >= 0 && tiles[n - 1] <= 64) rc = weft_sched_stepf(s, "vectorize %s %s", sname, inner[vec_inner]);
    return rc;
}

weft_status weft_sched_register_tile(weft_schedule *s, int r, int unroll_axis, int vec_axis, int64_t max_vec,
                                     const int64_t *tiles)
{
    weft_stage *st = &s->stages[r];
    const weft_tensor *op = st->op;
    char line[1024], sname[WEFT_SCHED_NAME];
    snprintf(sname, sizeof sname, "%s", st->name);
    int len = snprintf(line, sizeof line, "reorder %s", sname);
    for (int k = 0; k < op->n_reduce; k++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", st->iters[op->ndim + k].name);
    for (int d = 0; d < op->ndim; d++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", st->iters[d].name);
    weft_status rc = weft_schedule_apply(s, line);
    if (rc == WEFT_OK && unroll_axis >= 0 && tiles[unroll_axis] > 1)
        rc = weft_sched_stepf(s, "unroll %s %s", sname, s->stages[r].iters[unroll_axis].name);
    if (rc == WEFT_OK && vec_axis >= 0 && tiles[vec_axis] > 1 && tiles[vec_axis] <= max_vec)
        rc = weft_sched_stepf(s, "vectorize %s %s", sname, s->stages[r].iters[vec_axis].name);
    return rc;
}

/* Coefficient of v in an affine index expression (0 when absent, -1 when not affine in v). */
static int64_t coeff_of(const weft_expr *e, const weft_expr *v)
{
    if (!weft_expr_uses_var(e, v)) return 0;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_VAR: return 1;
    case WEFT_EXPR_ADD: {
        int64_t a = coeff_of(weft_expr_a(e), v), b = coeff_of(weft_expr_b(e), v);
        return a < 0 || b < 0 ? -1 : a + b;
    }
    case WEFT_EXPR_SUB: {
        int64_t a = coeff_of(weft_expr_a(e), v), b = coeff_of(weft_expr_b(e), v);
        return a < 0 || b != 0 ? -1 : a;
    }
    case WEFT_EXPR_MUL:
        if (weft_expr_b(e)->kind == WEFT_EXPR_INT) {
            int64_t a = coeff_of(weft_expr_a(e), v);
            return a < 0 ? -1 : a * weft_expr_int(weft_expr_b(e));
        }
        return -1;
    case WEFT_EXPR_FLOORDIV:
    case WEFT_EXPR_FLOORMOD:
        /* axes merged by a reshape and split again (floormod(b*64 + e, 768)): within a block
         * of the divisor, e walks at stride 1 and floordiv stays put, which the LLVM target's
         * vector accesses check per loop (targets/llvm/vector.c, stride_of). Only for divisors
         * that are whole vectors of the widest kind (16 floats): floormod(c, 2) (a pixel
         * unshuffle's channel split) walks no vector at stride 1, and read as unit it made the
         * unshuffle vectorize along channels, by gathers (0.063 -> 0.16 ms). */
        if (weft_expr_b(e)->kind == WEFT_EXPR_INT && weft_expr_int(weft_expr_b(e)) % 16 == 0 && coeff_of(weft_expr_a(e), v) == 1)
            return e->kind == WEFT_EXPR_FLOORDIV ? 0 : 1;
        return -1;
    default: return -1;
    }
}

typedef struct axis_scan {
    const weft_tensor *op;
    int unit[WEFT_MAX_DIMS];   /* reads whose last index moves with this axis at stride 1 */
    int strided[WEFT_MAX_DIMS];/* ... at another stride */
    int in_read_without[WEFT_MAX_DIMS]; /* reads using this axis but not the vector candidate */
} axis_scan;

static void scan_reads(void *ud, const weft_expr *e)
{
    axis_scan *sc = ud;
    weft_expr_each_child(e, scan_reads, ud);
    if (e->kind != WEFT_EXPR_TLOAD || weft_expr_tload_n(e) == 0) return;
    const weft_expr *last = weft_expr_tload_idx(e, weft_expr_tload_n(e) - 1);
    for (int d = 0; d < sc->op->ndim; d++) {
        int64_t c = coeff_of(last, sc->op->axis[d].var);
        if (c == 1) sc->unit[d]++;
        else if (c != 0) sc->strided[d]++;
    }
}

typedef struct expand_ctx {
    const weft_schedule *s;
    weft_arena *a;
    int depth;
} expand_ctx;

/* e with the reads of stages computed inline replaced by their bodies (as lowering does). */
static const weft_expr *expand_inlined(void *ud, const weft_expr *e)
{
    expand_ctx *x = ud;
    if (!e || x->depth > WEFT_SCHED_MAX_STAGES) return e;
    e = weft_expr_map_children(x->a, e, expand_inlined, x);
    if (!e || e->kind != WEFT_EXPR_TLOAD) return e;
    int q = weft_sched_stage_of(x->s, weft_expr_tload_tensor(e));
    if (q < 0 || x->s->stages[q].attach != WEFT_ATTACH_INLINE || !x->s->stages[q].op->body) return e;
    const weft_tensor *op = x->s->stages[q].op;
    const weft_expr *from[WEFT_MAX_DIMS], *to[WEFT_MAX_DIMS];
    for (int d = 0; d < op->ndim; d++) {
        from[d] = op->axis[d].var;
        to[d] = weft_expr_tload_idx(e, d);
    }
    const weft_expr *body = weft_expr_substitute(x->a, op->body, op->ndim, from, to);
    x->depth++;
    body = body ? expand_inlined(x, body) : NULL;
    x->depth--;
    return body;
}

int weft_sched_transposed_axis(const weft_schedule *s, int t, int64_t lanes, int64_t *width)
{
    const weft_tensor *op = s->stages[t].op;
    int n = op->ndim;
    *width = lanes;
    if (n < 2 || op->n_reduce || !op->body || lanes < 2 || lanes > 16 || op->shape[n - 1] < lanes) return -1;
    weft_arena *a = weft_arena_create();
    if (!a) return -1;
    expand_ctx x = {s, a, 0};
    const weft_expr *body = expand_inlined(&x, op->body);
    axis_scan sc = {.op = op};
    if (body) scan_reads(&sc, body);
    bool moves = body && weft_expr_uses_var(body, op->axis[n - 1].var);
    weft_arena_destroy(a);
    if (!body || !moves || sc.unit[n - 1]) return -1;
    for (int d = n - 2; d >= 0; d--)
        if (sc.unit[d] && op->shape[d] % lanes == 0) return d;
    /* else tiles of half or a quarter of a vector that divide the axis (NCHW -> NHWC of a
     * 56-wide plane: tiles of 8 with 16 lanes), down to 4 lanes */
    for (int64_t w = lanes / 2; w >= 4 && w >= lanes / 4; w /= 2)
        for (int d = n - 2; d >= 0; d--)
            if (sc.unit[d] && op->shape[d] % w == 0) return *width = w, d;
    return -1;
}

typedef struct row_scan {
    const weft_schedule *s;
    const weft_tensor *y; /* the reader */
    int x;                /* the stage read */
    bool aligned;
} row_scan;

static void scan_row_reads(void *ud, const weft_expr *e)
{
    row_scan *sc = ud;
    weft_expr_each_child(e, scan_row_reads, ud);
    if (e->kind != WEFT_EXPR_TLOAD || weft_sched_stage_of(sc->s, weft_expr_tload_tensor(e)) != sc->x) return;
    int n = sc->y->ndim;
    if (weft_expr_tload_n(e) < n - 1) {
        sc->aligned = false;
        return;
    }
    for (int d = 0; d < n - 1; d++) {
        const weft_expr *i = weft_expr_tload_idx(e, d);
        sc->aligned = sc->aligned && i->kind == WEFT_EXPR_VAR && i == sc->y->axis[d].var;
    }
}

bool weft_sched_reads_rows_aligned(const weft_schedule *s, int y, int x)
{
    const weft_tensor *op = s->stages[y].op;
    if (!op->body) return false;
    weft_arena *a = weft_arena_create();
    if (!a) return false;
    expand_ctx ex = {s, a, 0};
    const weft_expr *body = expand_inlined(&ex, op->body);
    row_scan sc = {s, op, x, body != NULL};
    if (body) scan_row_reads(&sc, body);
    weft_arena_destroy(a);
    return sc.aligned;
}

/* The register tile of a reduction with reuse: the vector axis v is an output axis along which
 * some operand is contiguous (matmul's j in B[k, j], a conv's x), preferring unit stride; the
 * unrolled axis u is the largest other axis before v (so v stays innermost in the
 * accumulator), or -1. */
void weft_sched_choose_tile_axes(const weft_tensor *op, int *u, int *v)
{
    axis_scan sc = {.op = op};
    if (op->body) scan_reads(&sc, op->body);
    int n = op->ndim;
    *v = n - 1;
    int best = -1;
    for (int d = 0; d < n; d++) {
        if (op->shape[d] < 2) continue;
        int score = sc.unit[d] ? 2 : sc.strided[d] ? 1 : 0;
        if (score > best || (score == best && score > 0 && op->shape[d] >= op->shape[*v])) {
            best = score;
            *v = d;
        }
    }
    *u = -1;
    for (int d = 0; d < *v; d++)
        if (op->shape[d] >= 2 && (*u < 0 || op->shape[d] > op->shape[*u])) *u = d;
}

typedef struct reuse_scan {
    const weft_te_func *f;
    const weft_tensor *op;
    int vec;
    const weft_tensor *found;
} reuse_scan;

static void find_reused(void *ud, const weft_expr *e)
{
    reuse_scan *rs = ud;
    if (rs->found) return;
    if (e->kind == WEFT_EXPR_TLOAD) {
        const weft_tensor *t = weft_expr_tload_tensor(e);
        const weft_tensor *op = rs->op;
        bool input = false, misses = false;
        for (int i = 0; i < rs->f->n_inputs; i++) input = input || rs->f->inputs[i] == t;
        for (int d = 0; d < op->ndim; d++)
            if (d != rs->vec && op->shape[d] > 1 && !weft_expr_uses_var(e, op->axis[d].var)) misses = true;
        if (input && misses && weft_expr_uses_var(e, op->axis[rs->vec].var)) {
            rs->found = t;
            return;
        }
    }
    weft_expr_each_child(e, find_reused, ud);
}

const weft_tensor *weft_sched_reused_input(const weft_te_func *f, const weft_tensor *op, int vec)
{
    reuse_scan rs = {f, op, vec, NULL};
    if (op->body && vec >= 0 && vec < op->ndim) find_reused(&rs, op->body);
    return rs.found;
}

bool weft_sched_reads_through(const weft_schedule *s, int c, int p)
{
    if (weft_sched_reads(s, c, p)) return true;
    for (int q = p + 1; q < c; q++)
        if (weft_sched_reads(s, q, p) && weft_sched_reads_through(s, c, q)) return true;
    return false;
}
