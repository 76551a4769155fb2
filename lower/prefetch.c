/* prefetch: `pragma STAGE L prefetch T` -> software prefetches of T's next-iteration lines.
 *
 * The case it is for: a loop L walks a tensor T that comes from memory (a weight larger than
 * the caches) in blocks, and loops inside L re-read each block from cache (the row tiles of a
 * product sharing one slice of the weight: `k.0, rows.0, k.1, rows.1, cols`). The first pass
 * over a block waits on memory and the others use no memory at all, so memory and arithmetic
 * take turns. With this pass the passes that reuse the block prefetch the next one, spread
 * evenly, and memory stays busy while the arithmetic runs.
 *
 * Shape required (otherwise the loads are left as they are: the pragma is a hint):
 *   L { ... R1 { ... Rm { ... P { inner } } } }
 * with loads of T inside a serial loop P whose body holds only unrolled and vectorized loops
 * around them (IFs allowed); R1..Rm (the reuse loops, possibly none) serial or unrolled loops
 * whose variables no load of T under P uses; L's and P's variables used; constant extents and
 * zero minimums. Loads under different P loops (a loop partitioned into full tiles and a
 * remainder) are placed per P. With r the linearized index of R1..Rm (nr values), EP P's
 * extent and p its variable, each iteration of P first prefetches the lines that T's loads
 * under P read at (L', P = p'):
 *   nr = 1:        L' = L + 1, p' = p (one L iteration ahead, as Halide's prefetch);
 *   nr > 1, r = 0: L' = L, p' = p (the lines the first pass is about to load anyway);
 *   nr > 1, r > 0: L' = L + 1, p' = ((r - 1) * EP + p) / (nr - 1): the passes that reuse the
 *                  block cover the next block's rows once, in order, each row nr - 1 times.
 * No branch: one inside the register tile's loop made LLVM shuffle the accumulators between
 * registers every iteration. The last iteration of L names lines past its block or past T,
 * harmless for a prefetch (never faults; the LLVM target computes the address without
 * `inbounds`). Inner unrolled loops the index uses become unrolled loops of the prefetch
 * (fresh variables); a vectorized loop gives one prefetch per 64-byte line of its extent; a P
 * whose loads would need more than MAX_LINES prefetches per iteration gets none.
 * Only CPU targets: on a GPU target the pragma is ignored.
 */
#include <string.h>

#include "ir/error.h"
#include "lower/lower_internal.h"

/* MAX_LINES: prefetches per iteration of P at most (a register tile reads a few lines per
 * iteration; a body that reads more is not what the pragma is for, and unrolling its prefetches
 * would bloat the code). */
enum { MAX_CHAIN = 32, MAX_LOADS = 64, LINE_BYTES = 64, MAX_LINES = 32 };

typedef struct {
    const weft_expr *load;
    const weft_stmt *chain[MAX_CHAIN]; /* loops from L's body down to the load, outermost first */
    int n;
} found_load;

typedef struct {
    const char *tensor;
    found_load loads[MAX_LOADS];
    int n_loads;
    bool overflow;
    const weft_stmt *stack[MAX_CHAIN];
    int depth;
} collector;

static void collect_expr(void *ud, const weft_expr *e)
{
    collector *c = ud;
    if (e->kind == WEFT_EXPR_LOAD && !strcmp(weft_expr_load_buf(e)->name, c->tensor)) {
        for (int i = 0; i < c->n_loads; i++)
            if (weft_expr_equal(c->loads[i].load, e) && c->loads[i].n == c->depth &&
                !memcmp(c->loads[i].chain, c->stack, sizeof *c->stack * (size_t)c->depth))
                return;
        if (c->n_loads == MAX_LOADS) {
            c->overflow = true;
            return;
        }
        found_load *f = &c->loads[c->n_loads++];
        f->load = e;
        f->n = c->depth;
        memcpy(f->chain, c->stack, sizeof *c->stack * (size_t)c->depth);
    }
    weft_expr_each_child(e, collect_expr, ud);
}

static void collect(collector *c, const weft_stmt *s)
{
    if (!s || c->overflow) return;
    switch (s->kind) {
    case WEFT_STMT_FOR:
        if (c->depth == MAX_CHAIN) {
            c->overflow = true;
            return;
        }
        c->stack[c->depth++] = s;
        collect(c, s->u.loop.body);
        c->depth--;
        return;
    case WEFT_STMT_STORE:
        collect_expr(c, s->u.store.index);
        collect_expr(c, s->u.store.value);
        return;
    case WEFT_STMT_ALLOCATE: collect(c, s->u.alloc.body); return;
    case WEFT_STMT_IF:
        collect_expr(c, s->u.cond.cond);
        collect(c, s->u.cond.then_s);
        collect(c, s->u.cond.else_s);
        return;
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) collect(c, s->u.seq.items[i]);
        return;
    default: return;
    }
}

static bool const_range(const weft_stmt *loop, int64_t *extent)
{
    if (!weft_expr_is_int_const(loop->u.loop.min, 0) || loop->u.loop.extent->kind != WEFT_EXPR_INT) return false;
    *extent = weft_expr_int(loop->u.loop.extent);
    return *extent > 0;
}

/* The prefetches of one load at L + 1, P = p_next: its inner loops that the index uses become
 * unrolled loops over fresh variables (vectorized ones step by a cache line). NULL when a loop
 * is not of the expected form (*ok cleared). */
static const weft_stmt *load_prefetch(weft_arena *a, const found_load *f, int p, const weft_expr *l_var,
                                      const weft_expr *l_next, const weft_expr *p_var, const weft_expr *p_next, bool *ok,
                                      int64_t *lines_total)
{
    const weft_expr *from[MAX_CHAIN + 2], *to[MAX_CHAIN + 2];
    const weft_expr *fresh[MAX_CHAIN];
    int64_t count[MAX_CHAIN];
    int n = 0, n_fresh = 0;
    const weft_expr *index = weft_expr_load_index(f->load);
    from[n] = l_var;
    to[n++] = l_next;
    from[n] = p_var;
    to[n++] = p_next;
    int64_t bytes = (int64_t)weft_dtype_bytes(weft_expr_load_buf(f->load)->dtype);
    int64_t per_line = bytes > 0 && bytes < LINE_BYTES ? LINE_BYTES / bytes : 1;
    for (int i = p + 1; i < f->n; i++) {
        const weft_stmt *loop = f->chain[i];
        if (!weft_expr_uses_var(index, loop->u.loop.var)) continue;
        int64_t ext;
        if (!const_range(loop, &ext)) {
            *ok = false;
            return NULL;
        }
        if (loop->u.loop.kind == WEFT_FOR_VECTORIZED) {
            int64_t lines = (ext + per_line - 1) / per_line;
            from[n] = loop->u.loop.var;
            if (lines == 1) {
                to[n++] = weft_i64(a, 0);
                continue;
            }
            fresh[n_fresh] = weft_var(a, weft_expr_var_name(loop->u.loop.var), WEFT_I64);
            count[n_fresh] = lines;
            to[n++] = weft_mul(a, fresh[n_fresh++], weft_i64(a, per_line));
        } else {
            fresh[n_fresh] = weft_var(a, weft_expr_var_name(loop->u.loop.var), WEFT_I64);
            count[n_fresh] = ext;
            from[n] = loop->u.loop.var;
            to[n++] = fresh[n_fresh++];
        }
    }
    int64_t lines = 1;
    for (int i = 0; i < n_fresh; i++) lines = lines > MAX_LINES ? lines : lines * count[i];
    *lines_total += lines;
    if (*lines_total > MAX_LINES) {
        *ok = false;
        return NULL;
    }
    const weft_stmt *s = weft_prefetch(a, weft_expr_load_buf(f->load), weft_expr_substitute(a, index, n, from, to));
    for (int i = n_fresh - 1; i >= 0; i--)
        s = weft_for(a, fresh[i], weft_i64(a, 0), weft_i64(a, count[i]), WEFT_FOR_UNROLLED, s);
    return s;
}

/* The position in f's chain of its P: the deepest serial loop with only unrolled and vectorized
 * loops below it, or -1. */
static int p_of(const found_load *f)
{
    for (int k = f->n - 1; k >= 0; k--) {
        weft_for_kind kind = f->chain[k]->u.loop.kind;
        if (kind == WEFT_FOR_SERIAL) return k;
        if (kind != WEFT_FOR_UNROLLED && kind != WEFT_FOR_VECTORIZED) return -1;
    }
    return -1;
}

static bool group_uses(const collector *c, const int *group, int n, const weft_expr *var)
{
    for (int i = 0; i < n; i++)
        if (weft_expr_uses_var(weft_expr_load_index(c->loads[group[i]].load), var)) return true;
    return false;
}

/* P (the loop at position p of the group's chains) with the prefetches for the loads in group
 * at the top of its body; NULL when the shape does not fit. */
static const weft_stmt *plan_group(weft_lower_ctx *ctx, const collector *c, const int *group, int n, int p,
                                   const weft_stmt *L)
{
    weft_arena *a = ctx->a;
    const weft_stmt *P = c->loads[group[0]].chain[p];
    int64_t ep;
    if (!const_range(P, &ep) || !group_uses(c, group, n, P->u.loop.var) || !group_uses(c, group, n, L->u.loop.var))
        return NULL;
    /* Reuse loops between L and P: linearized index r over nr iterations. */
    const weft_expr *r = weft_i64(a, 0);
    int64_t nr = 1;
    for (int k = 0; k < p; k++) {
        const weft_stmt *R = c->loads[group[0]].chain[k];
        int64_t er;
        if ((R->u.loop.kind != WEFT_FOR_SERIAL && R->u.loop.kind != WEFT_FOR_UNROLLED) || !const_range(R, &er) ||
            group_uses(c, group, n, R->u.loop.var))
            return NULL;
        r = weft_add(a, weft_mul(a, r, weft_i64(a, er)), R->u.loop.var);
        nr *= er;
    }
    /* Branch-free (a branch in the register tile's loop made LLVM shuffle the accumulators
     * between registers every iteration): the first pass (r = 0) prefetches the lines it is
     * about to load anyway, the others the next block's; a row is named nr - 1 times in a row.
     * The last iteration of L names lines past T's block (or past T): harmless for a prefetch. */
    const weft_expr *pv = P->u.loop.var, *lv = L->u.loop.var;
    const weft_expr *l_next = weft_add(a, lv, weft_i64(a, 1)), *p_next = pv;
    if (nr > 1) {
        const weft_expr *ahead = weft_min(a, r, weft_i64(a, 1));
        const weft_expr *q = weft_add(a, weft_mul(a, weft_sub(a, r, ahead), weft_i64(a, ep)), pv);
        l_next = weft_add(a, lv, ahead);
        p_next = weft_select(a, weft_cmp(a, WEFT_EXPR_GE, r, weft_i64(a, 1)),
                             nr > 2 ? weft_floordiv(a, q, weft_i64(a, nr - 1)) : q, pv);
    }
    const weft_stmt **items = weft_arena_alloc(a, sizeof *items * (size_t)n);
    if (!items) return NULL;
    int m = 0;
    int64_t lines = 0;
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        const weft_stmt *s = load_prefetch(a, &c->loads[group[i]], p, lv, l_next, pv, p_next, &ok, &lines);
        bool dup = false;
        for (int j = 0; ok && s && j < m && !dup; j++)
            dup = s->kind == WEFT_STMT_PREFETCH && items[j]->kind == WEFT_STMT_PREFETCH &&
                  items[j]->u.store.buf == s->u.store.buf && weft_expr_equal(items[j]->u.store.index, s->u.store.index);
        if (ok && s && !dup) items[m++] = s;
    }
    if (!ok || m == 0) return NULL;
    const weft_stmt *two[2] = {weft_seq(a, m, items), P->u.loop.body};
    return weft_for_full(a, pv, P->u.loop.min, P->u.loop.extent, P->u.loop.kind, P->u.loop.thread_axis,
                         P->u.loop.auto_unroll, weft_seq(a, 2, two));
}

/* Each P of L's body and what replaces it (weft_rewrite_stmt's post hook). */
typedef struct {
    const weft_stmt *from[MAX_LOADS], *to[MAX_LOADS];
    int n;
} replacements;

static const weft_stmt *replace_post(void *ud, const weft_stmt *orig, const weft_stmt *rebuilt, const weft_range_env *env)
{
    (void)env;
    const replacements *r = ud;
    for (int i = 0; i < r->n; i++)
        if (orig == r->from[i]) return r->to[i];
    return rebuilt;
}

/* L's body with the prefetches of T placed: the loads of T are grouped by their P (a loop
 * partitioned into full tiles and a remainder has one P per copy). */
static const weft_stmt *plan(weft_lower_ctx *ctx, const weft_stmt *L, const char *tensor)
{
    weft_arena *a = ctx->a;
    const weft_stmt *body = L->u.loop.body;
    collector *c = weft_arena_alloc(a, sizeof *c);
    replacements *rep = weft_arena_alloc(a, sizeof *rep);
    if (!c || !rep) return NULL;
    memset(c, 0, sizeof *c);
    memset(rep, 0, sizeof *rep);
    c->tensor = tensor;
    collect(c, body);
    int64_t el;
    if (c->overflow || c->n_loads == 0 || !const_range(L, &el) || el < 2) return body;
    bool done[MAX_LOADS] = {false};
    int group[MAX_LOADS];
    for (int i = 0; i < c->n_loads; i++) {
        int p = done[i] ? -1 : p_of(&c->loads[i]);
        if (p < 0) continue;
        int n = 0;
        for (int j = i; j < c->n_loads; j++)
            if (!done[j] && p_of(&c->loads[j]) == p && c->loads[j].chain[p] == c->loads[i].chain[p]) {
                done[j] = true;
                group[n++] = j;
            }
        const weft_stmt *to = plan_group(ctx, c, group, n, p, L);
        if (to) {
            rep->from[rep->n] = c->loads[i].chain[p];
            rep->to[rep->n++] = to;
        }
    }
    if (rep->n == 0) return body;
    weft_rewriter r = {.a = a, .post = replace_post, .ud = rep};
    return weft_rewrite_stmt(&r, body);
}

/* The loops that carry the pragma, planned (weft_rewrite_stmt's post hook). */
static const weft_stmt *loop_post(void *ud, const weft_stmt *orig, const weft_stmt *rebuilt, const weft_range_env *env)
{
    (void)env;
    weft_lower_ctx *c = ud;
    if (orig->kind != WEFT_STMT_FOR) return rebuilt;
    for (int i = 0; i < c->n_prefetch; i++) {
        if (c->prefetch[i].var != orig->u.loop.var) continue;
        const weft_stmt *b = plan(c, rebuilt, c->prefetch[i].tensor);
        if (!b) return NULL;
        if (b == rebuilt->u.loop.body) return rebuilt;
        return weft_for_full(c->a, rebuilt->u.loop.var, rebuilt->u.loop.min, rebuilt->u.loop.extent, rebuilt->u.loop.kind,
                             rebuilt->u.loop.thread_axis, rebuilt->u.loop.auto_unroll, b);
    }
    return rebuilt;
}

weft_status weft_lower_prefetch(weft_lower_ctx *c)
{
    if (c->n_prefetch == 0 || !c->lf || (c->caps && c->caps->has_thread_binding)) return WEFT_OK;
    weft_rewriter r = {.a = c->a, .post = loop_post, .ud = c};
    const weft_stmt *body = weft_rewrite_stmt(&r, c->lf->body);
    if (!body || weft_arena_failed(c->a)) return weft_lower_nomem(c);
    c->lf->body = body;
    return WEFT_OK;
}
