/* Bound inference on index expressions.
 *
 * weft_const_range: numeric interval arithmetic over the variables' ranges.
 * weft_bound_interval: a symbolic lower bound and a constant width. Requiring only the width to
 * be constant (not hi - lo to simplify to one) keeps clamped and min/max indices boundable:
 * width(min(a, b)) <= max(width(a), width(b)), and a floordiv by c shrinks the width to
 * ceil(width / c). Whatever is not affine falls back to the numeric range.
 */
#include <stdlib.h>

#include "lower/lower_internal.h"

void weft_range_push(weft_range_env *env, const weft_expr *var, int64_t lo, int64_t hi)
{
    if (env->n >= WEFT_RANGE_MAX) return; /* later lookups then report "unknown", which is safe */
    env->vars[env->n] = var;
    env->lo[env->n] = lo;
    env->hi[env->n] = hi;
    env->n++;
}

static int64_t fdiv(int64_t x, int64_t y)
{
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
    return q;
}

#define LIM ((int64_t)1 << 52)
static bool ok(int64_t v) { return v > -LIM && v < LIM; }

bool weft_const_range(const weft_expr *e, const weft_range_env *env, int64_t *lo, int64_t *hi)
{
    if (!e || !weft_dtype_is_int(e->dtype)) {
        if (e && weft_dtype_is_bool(e->dtype) && e->kind == WEFT_EXPR_INT) {
            *lo = *hi = e->u.imm_int;
            return true;
        }
        return false;
    }
    int64_t al, ah, bl, bh;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT: *lo = *hi = weft_expr_int(e); return true;
    case WEFT_EXPR_VAR:
        for (int i = env ? env->n - 1 : -1; i >= 0; i--)
            if (env->vars[i] == e) {
                *lo = env->lo[i];
                *hi = env->hi[i];
                return true;
            }
        return false;
    case WEFT_EXPR_CAST: return weft_const_range(weft_expr_operand(e), env, lo, hi);
    case WEFT_EXPR_SELECT:
        if (!weft_const_range(weft_expr_sel_true(e), env, &al, &ah) ||
            !weft_const_range(weft_expr_sel_false(e), env, &bl, &bh))
            return false;
        *lo = al < bl ? al : bl;
        *hi = ah > bh ? ah : bh;
        return true;
    default: break;
    }
    if (!weft_expr_is_binary(e)) return false;
    if (!weft_const_range(weft_expr_a(e), env, &al, &ah) || !weft_const_range(weft_expr_b(e), env, &bl, &bh))
        return false;
    int64_t l, h;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_ADD: l = al + bl, h = ah + bh; break;
    case WEFT_EXPR_SUB: l = al - bh, h = ah - bl; break;
    case WEFT_EXPR_MUL: {
        int64_t c[4] = {al * bl, al * bh, ah * bl, ah * bh};
        if (!ok(al) || !ok(ah) || !ok(bl) || !ok(bh)) return false;
        if ((al && (llabs(bl) > LIM / llabs(al) || llabs(bh) > LIM / llabs(al))) ||
            (ah && (llabs(bl) > LIM / llabs(ah) || llabs(bh) > LIM / llabs(ah))))
            return false;
        l = h = c[0];
        for (int i = 1; i < 4; i++) {
            if (c[i] < l) l = c[i];
            if (c[i] > h) h = c[i];
        }
        break;
    }
    case WEFT_EXPR_FLOORDIV:
        if (bl != bh || bl <= 0) return false;
        l = fdiv(al, bl), h = fdiv(ah, bl);
        break;
    case WEFT_EXPR_DIV:
        if (bl != bh || bl <= 0 || al < 0) return false;
        l = al / bl, h = ah / bl;
        break;
    case WEFT_EXPR_FLOORMOD:
        if (bl != bh || bl <= 0) return false;
        if (fdiv(al, bl) == fdiv(ah, bl)) l = al - fdiv(al, bl) * bl, h = ah - fdiv(ah, bl) * bl;
        else l = 0, h = bl - 1;
        break;
    case WEFT_EXPR_MIN: l = al < bl ? al : bl, h = ah < bh ? ah : bh; break;
    case WEFT_EXPR_MAX: l = al > bl ? al : bl, h = ah > bh ? ah : bh; break;
    default: return false;
    }
    if (!ok(l) || !ok(h)) return false;
    *lo = l;
    *hi = h;
    return true;
}

/* Whether e is a multiple of k > 0 for every value of its variables (constants, products by
 * a multiple of k, sums and differences of multiples). */
static bool multiple_of(const weft_expr *e, int64_t k)
{
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT: return weft_expr_int(e) % k == 0;
    case WEFT_EXPR_MUL: {
        const weft_expr *x = weft_expr_a(e), *y = weft_expr_b(e);
        return (x->kind == WEFT_EXPR_INT && weft_expr_int(x) % k == 0) ||
               (y->kind == WEFT_EXPR_INT && weft_expr_int(y) % k == 0) || multiple_of(x, k) || multiple_of(y, k);
    }
    case WEFT_EXPR_ADD:
    case WEFT_EXPR_SUB: return multiple_of(weft_expr_a(e), k) && multiple_of(weft_expr_b(e), k);
    default: return false;
    }
}

static bool is_free(const weft_expr *v, int n_free, const weft_expr *const *free_vars)
{
    for (int i = 0; i < n_free; i++)
        if (free_vars[i] == v) return true;
    return false;
}

static bool uses_free(const weft_expr *e, int n_free, const weft_expr *const *free_vars)
{
    for (int i = 0; i < n_free; i++)
        if (weft_expr_uses_var(e, free_vars[i])) return true;
    return false;
}

bool weft_bound_interval(weft_arena *a, const weft_expr *e, const weft_range_env *env, int n_free,
                         const weft_expr *const *free_vars, weft_interval *out)
{
    if (!e || !weft_dtype_is_int(e->dtype)) return false;
    /* Anything that does not involve a free variable is a point. */
    if (!uses_free(e, n_free, free_vars)) {
        out->lo = e;
        out->width = 0;
        return true;
    }
    weft_interval x, y;
    int64_t nl, nh;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_VAR:
        if (is_free(e, n_free, free_vars) && weft_const_range(e, env, &nl, &nh)) {
            out->lo = weft_i64(a, nl);
            out->width = nh - nl;
            return true;
        }
        break;
    case WEFT_EXPR_ADD:
        if (weft_bound_interval(a, weft_expr_a(e), env, n_free, free_vars, &x) &&
            weft_bound_interval(a, weft_expr_b(e), env, n_free, free_vars, &y)) {
            out->lo = weft_add(a, x.lo, y.lo);
            out->width = x.width + y.width;
            return true;
        }
        break;
    case WEFT_EXPR_SUB:
        if (weft_bound_interval(a, weft_expr_a(e), env, n_free, free_vars, &x) &&
            weft_bound_interval(a, weft_expr_b(e), env, n_free, free_vars, &y)) {
            out->lo = weft_sub(a, x.lo, weft_add(a, y.lo, weft_i64(a, y.width)));
            out->width = x.width + y.width;
            return true;
        }
        break;
    case WEFT_EXPR_MUL: {
        const weft_expr *p = weft_expr_a(e), *c = weft_expr_b(e);
        if (p->kind == WEFT_EXPR_INT) {
            const weft_expr *t = p;
            p = c;
            c = t;
        }
        if (c->kind == WEFT_EXPR_INT && weft_bound_interval(a, p, env, n_free, free_vars, &x)) {
            int64_t k = weft_expr_int(c);
            if (k >= 0) out->lo = weft_mul(a, x.lo, c);
            else out->lo = weft_mul(a, weft_add(a, x.lo, weft_i64(a, x.width)), c);
            out->width = x.width * (k < 0 ? -k : k);
            return true;
        }
        break;
    }
    case WEFT_EXPR_FLOORDIV: {
        const weft_expr *c = weft_expr_b(e);
        if (c->kind == WEFT_EXPR_INT && weft_expr_int(c) > 0 &&
            weft_bound_interval(a, weft_expr_a(e), env, n_free, free_vars, &x)) {
            int64_t k = weft_expr_int(c);
            out->lo = weft_floordiv(a, x.lo, c);
            /* [lo, lo + w] / k spans w / k + 1 values when k divides lo (a tile's start:
             * 4 h.0 + [0, 3] halves to 2 h.0 + [0, 1]), at most one more otherwise */
            out->width = multiple_of(x.lo, k) ? x.width / k : (x.width + k - 1) / k;
            return true;
        }
        break;
    }
    case WEFT_EXPR_FLOORMOD: {
        const weft_expr *c = weft_expr_b(e);
        if (c->kind == WEFT_EXPR_INT && weft_expr_int(c) > 0) {
            out->lo = weft_i64(a, 0);
            out->width = weft_expr_int(c) - 1;
            return true;
        }
        break;
    }
    case WEFT_EXPR_MIN:
    case WEFT_EXPR_MAX:
        if (weft_bound_interval(a, weft_expr_a(e), env, n_free, free_vars, &x) &&
            weft_bound_interval(a, weft_expr_b(e), env, n_free, free_vars, &y)) {
            out->lo = e->kind == WEFT_EXPR_MIN ? weft_min(a, x.lo, y.lo) : weft_max(a, x.lo, y.lo);
            out->width = x.width > y.width ? x.width : y.width;
            return true;
        }
        break;
    default: break;
    }
    if (weft_const_range(e, env, &nl, &nh)) {
        out->lo = weft_i64(a, nl);
        out->width = nh - nl;
        return true;
    }
    return false;
}
