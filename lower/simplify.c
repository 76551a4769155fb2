/* Index simplification.
 *
 * Integer sums are flattened into (coefficient, atom) terms plus a constant, like terms are
 * combined (atoms compared structurally) and the sum is rebuilt in first-seen order. Atoms are
 * simplified recursively. With a range environment, floordiv/floormod by a positive constant
 * peel off the terms divisible by it when the remainder is provably in [0, c) (the inverse of
 * split and fuse), and min/max/comparisons decided by the ranges fold to one side / a constant,
 * which removes the guards of perfect splits; floordiv(x, c)*c + floormod(x, c) folds back to x
 * (fused axes indexed as the original ones). Floats are left alone except inside their
 * integer sub-expressions (indices of loads).
 */
#include "ir/binop.h"
#include "lower/lower_internal.h"

#define MAX_TERMS 64

typedef struct lin {
    int n;
    const weft_expr *atom[MAX_TERMS];
    int64_t coeff[MAX_TERMS];
    int64_t c;
    bool overflow;
} lin;

static const weft_expr *simplify_atom(weft_arena *a, const weft_expr *e, const weft_range_env *env);

static void add_term(lin *L, const weft_expr *atom, int64_t k)
{
    for (int i = 0; i < L->n; i++)
        if (weft_expr_equal(L->atom[i], atom)) {
            L->coeff[i] += k;
            return;
        }
    if (L->n == MAX_TERMS) {
        L->overflow = true;
        return;
    }
    L->atom[L->n] = atom;
    L->coeff[L->n++] = k;
}

static void collect(weft_arena *a, const weft_expr *e, int64_t k, lin *L, const weft_range_env *env)
{
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT: L->c += k * weft_expr_int(e); return;
    case WEFT_EXPR_ADD:
        collect(a, weft_expr_a(e), k, L, env);
        collect(a, weft_expr_b(e), k, L, env);
        return;
    case WEFT_EXPR_SUB:
        collect(a, weft_expr_a(e), k, L, env);
        collect(a, weft_expr_b(e), -k, L, env);
        return;
    case WEFT_EXPR_MUL:
        if (weft_expr_b(e)->kind == WEFT_EXPR_INT) {
            collect(a, weft_expr_a(e), k * weft_expr_int(weft_expr_b(e)), L, env);
            return;
        }
        if (weft_expr_a(e)->kind == WEFT_EXPR_INT) {
            collect(a, weft_expr_b(e), k * weft_expr_int(weft_expr_a(e)), L, env);
            return;
        }
        break;
    default: break;
    }
    const weft_expr *s = simplify_atom(a, e, env);
    if (!s) s = e; /* out of memory: the arena says so; e is still right */
    bool linear = s->kind == WEFT_EXPR_ADD || s->kind == WEFT_EXPR_SUB ||
                  (s->kind == WEFT_EXPR_MUL && (weft_expr_a(s)->kind == WEFT_EXPR_INT || weft_expr_b(s)->kind == WEFT_EXPR_INT));
    if (s->kind == WEFT_EXPR_INT) L->c += k * weft_expr_int(s);
    else if (s != e && linear) collect(a, s, k, L, env); /* a div/mod that simplified to a sum */
    else add_term(L, s, k);
}

static const weft_expr *rebuild(weft_arena *a, const lin *L, weft_dtype t)
{
    const weft_expr *r = NULL;
    for (int i = 0; i < L->n; i++) {
        int64_t k = L->coeff[i];
        if (k == 0) continue;
        if (!r) r = k == 1 ? L->atom[i] : weft_mul(a, L->atom[i], weft_int(a, t, k));
        else if (k > 0) r = weft_add(a, r, k == 1 ? L->atom[i] : weft_mul(a, L->atom[i], weft_int(a, t, k)));
        else r = weft_sub(a, r, k == -1 ? L->atom[i] : weft_mul(a, L->atom[i], weft_int(a, t, -k)));
    }
    if (!r) return weft_int(a, t, L->c);
    if (L->c > 0) return weft_add(a, r, weft_int(a, t, L->c));
    if (L->c < 0) return weft_sub(a, r, weft_int(a, t, -L->c));
    return r;
}

/* k*floordiv(x, c)*c + k*floormod(x, c) -> k*x (c > 0; floor semantics make it exact for any
 * x): fusing axes a, b into p and indexing a*B + b as floordiv(p, B)*B + floormod(p, B) gets p
 * back, so a load over fused axes is a unit-stride one the vectorizer sees. */
static void recombine_div_mod(weft_arena *a, lin *L, const weft_range_env *env)
{
    for (bool changed = true; changed && !L->overflow;) {
        changed = false;
        for (int i = 0; i < L->n && !changed; i++) {
            const weft_expr *m = L->atom[i];
            if (L->coeff[i] == 0 || m->kind != WEFT_EXPR_FLOORMOD || weft_expr_b(m)->kind != WEFT_EXPR_INT) continue;
            int64_t c = weft_expr_int(weft_expr_b(m));
            if (c <= 0) continue;
            for (int j = 0; j < L->n; j++) {
                const weft_expr *d = L->atom[j];
                if (d->kind != WEFT_EXPR_FLOORDIV || L->coeff[j] != L->coeff[i] * c ||
                    !weft_expr_equal(weft_expr_a(d), weft_expr_a(m)) || !weft_expr_equal(weft_expr_b(d), weft_expr_b(m)))
                    continue;
                int64_t k = L->coeff[i];
                L->coeff[i] = L->coeff[j] = 0;
                collect(a, weft_expr_a(m), k, L, env);
                changed = true;
                break;
            }
        }
    }
}

static const weft_expr *simplify_int_sum(weft_arena *a, const weft_expr *e, const weft_range_env *env)
{
    lin L = {0};
    collect(a, e, 1, &L, env);
    if (L.overflow) return e;
    recombine_div_mod(a, &L, env);
    if (L.overflow) return e;
    return rebuild(a, &L, e->dtype);
}

/* floordiv/floormod(x, c): x = c*q + r with r provably in [0, c) -> q / r. A factor g that c
 * and every term of x share comes out first: floordiv(g*y, g*d) = floordiv(y, d) and
 * floormod(g*y, g*d) = g*floormod(y, d) (a nearest 2x upsampling's source column
 * floordiv(w*16, 32) is floordiv(w, 2), which a vector load reads as pairs). */
static const weft_expr *div_mod(weft_arena *a, weft_expr_kind k, const weft_expr *x, int64_t c, const weft_range_env *env)
{
    lin L = {0};
    collect(a, x, 1, &L, env);
    if (L.overflow) return NULL;
    int64_t g = weft_gcd64(c, L.c);
    for (int i = 0; i < L.n && g > 1; i++) g = weft_gcd64(g, L.coeff[i]);
    if (g > 1) {
        for (int i = 0; i < L.n; i++) L.coeff[i] /= g;
        L.c /= g;
        const weft_expr *y = rebuild(a, &L, x->dtype), *r;
        if (!y) return NULL;
        int64_t d = c / g;
        if (d == 1) r = k == WEFT_EXPR_FLOORDIV ? y : weft_int(a, x->dtype, 0);
        else if (!(r = div_mod(a, k, y, d, env))) r = weft_binary(a, k, y, weft_int(a, x->dtype, d));
        return k == WEFT_EXPR_FLOORDIV ? r : weft_simplify(a, weft_binary(a, WEFT_EXPR_MUL, r, weft_int(a, x->dtype, g)), env);
    }
    lin q = {0}, r = {0};
    for (int i = 0; i < L.n; i++) {
        if (L.coeff[i] % c == 0) add_term(&q, L.atom[i], L.coeff[i] / c);
        else add_term(&r, L.atom[i], L.coeff[i]);
    }
    int64_t cq = L.c / c, cr = L.c % c;
    if (cr < 0) cr += c, cq -= 1;
    q.c = cq;
    r.c = cr;
    const weft_expr *rest = rebuild(a, &r, x->dtype);
    int64_t lo, hi;
    if (!rest || !weft_const_range(rest, env, &lo, &hi) || lo < 0 || hi >= c) return NULL;
    return k == WEFT_EXPR_FLOORDIV ? rebuild(a, &q, x->dtype) : rest;
}

static const weft_expr *simplify_atom(weft_arena *a, const weft_expr *e, const weft_range_env *env)
{
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT:
    case WEFT_EXPR_FLOAT:
    case WEFT_EXPR_VAR: return e;
    case WEFT_EXPR_NOT: return weft_not(a, weft_simplify(a, weft_expr_operand(e), env));
    case WEFT_EXPR_CAST: return weft_cast(a, e->dtype, weft_simplify(a, weft_expr_operand(e), env));
    case WEFT_EXPR_SELECT:
        return weft_select(a, weft_simplify(a, weft_expr_sel_cond(e), env), weft_simplify(a, weft_expr_sel_true(e), env),
                           weft_simplify(a, weft_expr_sel_false(e), env));
    case WEFT_EXPR_CALL: {
        const weft_expr *args[4];
        for (int i = 0; i < weft_expr_call_n(e); i++) args[i] = weft_simplify(a, weft_expr_call_arg(e, i), env);
        return weft_call(a, weft_expr_call_fn(e), weft_expr_call_n(e), args);
    }
    case WEFT_EXPR_TLOAD: {
        const weft_expr *idx[WEFT_MAX_DIMS];
        for (int i = 0; i < weft_expr_tload_n(e); i++) idx[i] = weft_simplify(a, weft_expr_tload_idx(e, i), env);
        return weft_tload(a, weft_expr_tload_tensor(e), weft_expr_tload_n(e), idx);
    }
    case WEFT_EXPR_LOAD: return weft_load(a, weft_expr_load_buf(e), weft_simplify(a, weft_expr_load_index(e), env));
    default: break;
    }
    weft_expr_kind k = (weft_expr_kind)e->kind;
    const weft_expr *x = weft_simplify(a, weft_expr_a(e), env), *y = weft_simplify(a, weft_expr_b(e), env);
    if (!x || !y) return NULL;
    int64_t xl, xh, yl, yh;
    bool int_ops = weft_dtype_is_int(x->dtype);
    if (int_ops && env && (k == WEFT_EXPR_FLOORDIV || k == WEFT_EXPR_FLOORMOD) && y->kind == WEFT_EXPR_INT &&
        weft_expr_int(y) > 0) {
        const weft_expr *r = div_mod(a, k, x, weft_expr_int(y), env);
        if (r) return r;
    }
    if (int_ops && env && weft_const_range(x, env, &xl, &xh) && weft_const_range(y, env, &yl, &yh)) {
        switch (k) {
        case WEFT_EXPR_MIN:
            if (xh <= yl) return x;
            if (yh <= xl) return y;
            break;
        case WEFT_EXPR_MAX:
            if (xh <= yl) return y;
            if (yh <= xl) return x;
            break;
        case WEFT_EXPR_LT:
            if (xh < yl) return weft_int(a, WEFT_BOOL, 1);
            if (xl >= yh) return weft_int(a, WEFT_BOOL, 0);
            break;
        case WEFT_EXPR_LE:
            if (xh <= yl) return weft_int(a, WEFT_BOOL, 1);
            if (xl > yh) return weft_int(a, WEFT_BOOL, 0);
            break;
        case WEFT_EXPR_GT:
            if (xl > yh) return weft_int(a, WEFT_BOOL, 1);
            if (xh <= yl) return weft_int(a, WEFT_BOOL, 0);
            break;
        case WEFT_EXPR_GE:
            if (xl >= yh) return weft_int(a, WEFT_BOOL, 1);
            if (xh < yl) return weft_int(a, WEFT_BOOL, 0);
            break;
        default: break;
        }
    }
    if (k == WEFT_EXPR_AND) return weft_and(a, x, y);
    if (k == WEFT_EXPR_OR) return weft_or(a, x, y);
    return weft_binary(a, k, x, y);
}

/* Never NULL for a non-NULL e: when the arena runs out of memory the unsimplified (equivalent)
 * expression is returned, and the pass reports the arena's failure. */
const weft_expr *weft_simplify(weft_arena *a, const weft_expr *e, const weft_range_env *env)
{
    if (!e) return NULL;
    if (weft_arena_failed(a)) return e;
    const weft_expr *r;
    if (weft_dtype_is_int(e->dtype) &&
        (e->kind == WEFT_EXPR_ADD || e->kind == WEFT_EXPR_SUB || e->kind == WEFT_EXPR_MUL))
        r = simplify_int_sum(a, e, env);
    else r = simplify_atom(a, e, env);
    return r ? r : e;
}

/* ---- the simplify pass -------------------------------------------------------------------- */

static const weft_expr *simplify_expr(void *ud, const weft_expr *e, const weft_range_env *env)
{
    weft_lower_ctx *c = ud;
    return weft_simplify(c->a, e, env);
}

/* What an IF's condition tells its then-branch: x < c for an x the ranges prove >= 0 (the
 * guard of a partial tile, q < 999), so there floormod(x, d) = x and floordiv(x, d) = 0 for
 * every d >= c. A fused axis of extent 1 times 999 split by 64 reads floormod(q, 999); folded
 * to q the vector load is contiguous instead of a gather (Conv-TasNet's mask conv, a 1-D conv
 * over 999 steps: 1.76 ms at 4.8 GFLOP/s). */
enum { MAX_FACTS = 8 };
typedef struct guard_facts {
    weft_arena *a;
    int n;
    const weft_expr *x[MAX_FACTS];
    int64_t c[MAX_FACTS];
} guard_facts;

static void collect_facts(const weft_expr *cond, const weft_range_env *env, guard_facts *g)
{
    if (cond->kind == WEFT_EXPR_AND) {
        collect_facts(weft_expr_a(cond), env, g);
        collect_facts(weft_expr_b(cond), env, g);
        return;
    }
    if ((cond->kind != WEFT_EXPR_LT && cond->kind != WEFT_EXPR_LE) || weft_expr_b(cond)->kind != WEFT_EXPR_INT ||
        !weft_dtype_is_int(weft_expr_a(cond)->dtype) || g->n == MAX_FACTS)
        return;
    int64_t lo, hi;
    if (!weft_const_range(weft_expr_a(cond), env, &lo, &hi) || lo < 0) return;
    g->x[g->n] = weft_expr_a(cond);
    g->c[g->n++] = weft_expr_int(weft_expr_b(cond)) + (cond->kind == WEFT_EXPR_LE);
}

static const weft_expr *apply_facts(void *ud, const weft_expr *e)
{
    guard_facts *g = ud;
    e = weft_expr_map_children(g->a, e, apply_facts, ud);
    if (!e || (e->kind != WEFT_EXPR_FLOORDIV && e->kind != WEFT_EXPR_FLOORMOD) || weft_expr_b(e)->kind != WEFT_EXPR_INT)
        return e;
    for (int i = 0; i < g->n; i++)
        if (g->c[i] <= weft_expr_int(weft_expr_b(e)) && weft_expr_equal(weft_expr_a(e), g->x[i]))
            return e->kind == WEFT_EXPR_FLOORMOD ? weft_expr_a(e) : weft_int(g->a, e->dtype, 0);
    return e;
}

static const weft_expr *guarded_expr(void *ud, const weft_expr *e, const weft_range_env *env)
{
    guard_facts *g = ud;
    const weft_expr *r = apply_facts(g, e);
    return r && r != e ? weft_simplify(g->a, r, env) : r;
}

/* An IF whose condition the ranges prove true is its then-branch; else its then-branch is
 * rewritten with the condition's facts (guard_facts). */
static const weft_stmt *simplify_ifs(void *ud, const weft_stmt *orig, const weft_stmt *s, const weft_range_env *env)
{
    weft_lower_ctx *c = ud;
    if (s->kind != WEFT_STMT_IF) return s;
    if (weft_expr_is_int_const(s->u.cond.cond, 1)) return s->u.cond.then_s;
    guard_facts g = {.a = c->a};
    collect_facts(s->u.cond.cond, env, &g);
    if (!g.n) return s;
    weft_rewriter r = {.a = c->a, .env = &c->env, .expr = guarded_expr, .ud = &g}; /* env is c->env */
    const weft_stmt *t = weft_rewrite_stmt(&r, s->u.cond.then_s);
    return t ? weft_if(c->a, s->u.cond.cond, t, s->u.cond.else_s) : NULL;
}

weft_status weft_lower_simplify(weft_lower_ctx *c)
{
    int mark = c->env.n;
    c->env.n = 0; /* the loops around each statement, from the IR itself */
    weft_rewriter r = {.a = c->a, .env = &c->env, .expr = simplify_expr, .post = simplify_ifs, .ud = c};
    const weft_stmt *body = weft_rewrite_stmt(&r, c->lf->body);
    c->env.n = mark;
    if (!body || weft_arena_failed(c->a)) return weft_lower_nomem(c);
    c->lf->body = body;
    return WEFT_OK;
}
