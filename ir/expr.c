/* Expression constructors, kind tables, equality and substitution.
 * Constructors canonicalize cheaply: two immediates fold; x+0, x*1, x*0 (ints) simplify.
 * Everything else is left to lower/simplify.c. */
#include "ir/expr.h"

#include "ir/binop.h"

#include <math.h>
#include <string.h>

#include "ir/tensor.h"

const char *const weft_expr_kind_names[WEFT_EXPR_COUNT] = {
#define X(name, str, arity, flags) str,
#include "ir/expr_kinds.def"
#undef X
};
const int weft_expr_kind_arity[WEFT_EXPR_COUNT] = {
#define X(name, str, arity, flags) arity,
#include "ir/expr_kinds.def"
#undef X
};
const unsigned weft_expr_kind_flags[WEFT_EXPR_COUNT] = {
#define X(name, str, arity, flags) flags,
#include "ir/expr_kinds.def"
#undef X
};
const char *const weft_intrin_names[WEFT_INTRIN_COUNT] = {
    "exp", "log", "sqrt", "rsqrt", "tanh", "erf", "pow", "fabs", "sigmoid", "floor", "ceil", "round", "sin", "cos",
};

int weft_intrin_arity(weft_intrin fn) { return fn == WEFT_INTRIN_POW ? 2 : 1; }

const char *weft_dtype_name(weft_dtype t)
{
    switch (t.code) {
    case WEFT_DTYPE_BOOL: return "bool";
    case WEFT_DTYPE_INT: return t.bits == 64 ? "int64" : "int32";
    case WEFT_DTYPE_FLOAT: return t.bits == 64 ? "float64" : "float32";
    default: return "?";
    }
}

bool weft_dtype_parse(const char *s, weft_dtype *out)
{
    if (!strcmp(s, "float32")) *out = WEFT_F32;
    else if (!strcmp(s, "int32")) *out = WEFT_I32;
    else if (!strcmp(s, "int64")) *out = WEFT_I64;
    else if (!strcmp(s, "bool")) *out = WEFT_BOOL;
    else return false;
    return true;
}

static weft_expr *node(weft_arena *a, weft_expr_kind k, weft_dtype t)
{
    weft_expr *e = weft_arena_alloc(a, sizeof *e);
    if (!e) return NULL;
    e->kind = (uint16_t)k;
    e->dtype = t;
    return e;
}

const weft_expr *weft_int(weft_arena *a, weft_dtype t, int64_t v)
{
    weft_expr *e = node(a, WEFT_EXPR_INT, t);
    if (e) e->u.imm_int = weft_binop_wrap(t, v);
    return e;
}

const weft_expr *weft_i64(weft_arena *a, int64_t v) { return weft_int(a, WEFT_I64, v); }

const weft_expr *weft_float(weft_arena *a, weft_dtype t, double v)
{
    weft_expr *e = node(a, WEFT_EXPR_FLOAT, t);
    if (e) e->u.imm_float = t.bits == 32 ? (double)(float)v : v;
    return e;
}

const weft_expr *weft_f32(weft_arena *a, double v) { return weft_float(a, WEFT_F32, v); }

const weft_expr *weft_var(weft_arena *a, const char *name, weft_dtype t)
{
    weft_expr *e = node(a, WEFT_EXPR_VAR, t);
    if (!e) return NULL;
    e->u.var.name = weft_arena_strdup(a, name ? name : "v");
    e->u.var.id = weft_arena_next_id(a);
    return e->u.var.name ? e : NULL;
}

/* Folds two immediates by ir/binop.c's semantics; NULL when it cannot (an integer division by
 * zero is left to run time). */
static const weft_expr *fold_binary(weft_arena *a, weft_expr_kind k, const weft_expr *x, const weft_expr *y)
{
    weft_dtype t = x->dtype;
    bool cmp = weft_expr_kind_flags[k] & WEFT_KF_COMPARE;
    int64_t r;
    if (x->kind == WEFT_EXPR_INT && y->kind == WEFT_EXPR_INT) {
        if (!weft_binop_int(k, x->u.imm_int, y->u.imm_int, &r)) return NULL;
        return weft_int(a, cmp ? WEFT_BOOL : t, r);
    }
    if (x->kind == WEFT_EXPR_FLOAT && y->kind == WEFT_EXPR_FLOAT) {
        double p = x->u.imm_float, q = y->u.imm_float;
        if (cmp) return weft_binop_fcmp(k, p, q, &r) ? weft_int(a, WEFT_BOOL, r) : NULL;
        if (t.bits == 32) {
            float f;
            return weft_binop_f32(k, (float)p, (float)q, &f) ? weft_float(a, t, f) : NULL;
        }
        double d;
        return weft_binop_f64(k, p, q, &d) ? weft_float(a, t, d) : NULL;
    }
    return NULL;
}

const weft_expr *weft_binary(weft_arena *a, weft_expr_kind k, const weft_expr *x, const weft_expr *y)
{
    if (!x || !y) return NULL;
    assert(weft_expr_kind_flags[k] & WEFT_KF_BINARY);
    assert(weft_dtype_eq(x->dtype, y->dtype));
    const weft_expr *c = fold_binary(a, k, x, y);
    if (c) return c;
    bool is_int = weft_dtype_is_int(x->dtype);
    /* Cheap identities on integers (index arithmetic); floats keep IEEE semantics. */
    if (is_int) {
        if (k == WEFT_EXPR_ADD && weft_expr_is_int_const(y, 0)) return x;
        if (k == WEFT_EXPR_ADD && weft_expr_is_int_const(x, 0)) return y;
        if (k == WEFT_EXPR_SUB && weft_expr_is_int_const(y, 0)) return x;
        if (k == WEFT_EXPR_MUL && (weft_expr_is_int_const(y, 1))) return x;
        if (k == WEFT_EXPR_MUL && (weft_expr_is_int_const(x, 1))) return y;
        if (k == WEFT_EXPR_MUL && weft_expr_is_int_const(y, 0)) return y;
        if (k == WEFT_EXPR_MUL && weft_expr_is_int_const(x, 0)) return x;
        if ((k == WEFT_EXPR_FLOORDIV || k == WEFT_EXPR_DIV) && weft_expr_is_int_const(y, 1)) return x;
        if (k == WEFT_EXPR_FLOORMOD && weft_expr_is_int_const(y, 1)) return weft_int(a, x->dtype, 0);
    }
    /* Constants on the right of commutative ops. */
    if ((weft_expr_kind_flags[k] & WEFT_KF_COMMUTATIVE) && weft_expr_is_const(x) && !weft_expr_is_const(y)) {
        const weft_expr *t = x;
        x = y;
        y = t;
    }
    weft_dtype rt = (weft_expr_kind_flags[k] & WEFT_KF_COMPARE) ? WEFT_BOOL : x->dtype;
    weft_expr *e = node(a, k, rt);
    if (!e) return NULL;
    e->u.bin.a = x;
    e->u.bin.b = y;
    return e;
}

const weft_expr *weft_add(weft_arena *a, const weft_expr *x, const weft_expr *y) { return weft_binary(a, WEFT_EXPR_ADD, x, y); }
const weft_expr *weft_sub(weft_arena *a, const weft_expr *x, const weft_expr *y) { return weft_binary(a, WEFT_EXPR_SUB, x, y); }
const weft_expr *weft_mul(weft_arena *a, const weft_expr *x, const weft_expr *y) { return weft_binary(a, WEFT_EXPR_MUL, x, y); }
const weft_expr *weft_div(weft_arena *a, const weft_expr *x, const weft_expr *y) { return weft_binary(a, WEFT_EXPR_DIV, x, y); }
const weft_expr *weft_floordiv(weft_arena *a, const weft_expr *x, const weft_expr *y) { return weft_binary(a, WEFT_EXPR_FLOORDIV, x, y); }
const weft_expr *weft_floormod(weft_arena *a, const weft_expr *x, const weft_expr *y) { return weft_binary(a, WEFT_EXPR_FLOORMOD, x, y); }
const weft_expr *weft_min(weft_arena *a, const weft_expr *x, const weft_expr *y) { return weft_binary(a, WEFT_EXPR_MIN, x, y); }
const weft_expr *weft_max(weft_arena *a, const weft_expr *x, const weft_expr *y) { return weft_binary(a, WEFT_EXPR_MAX, x, y); }
const weft_expr *weft_cmp(weft_arena *a, weft_expr_kind k, const weft_expr *x, const weft_expr *y)
{
    assert(weft_expr_kind_flags[k] & WEFT_KF_COMPARE);
    return weft_binary(a, k, x, y);
}
const weft_expr *weft_and(weft_arena *a, const weft_expr *x, const weft_expr *y)
{
    if (x && x->kind == WEFT_EXPR_INT) return x->u.imm_int ? y : x;
    if (y && y->kind == WEFT_EXPR_INT) return y->u.imm_int ? x : y;
    return weft_binary(a, WEFT_EXPR_AND, x, y);
}
const weft_expr *weft_or(weft_arena *a, const weft_expr *x, const weft_expr *y)
{
    if (x && x->kind == WEFT_EXPR_INT) return x->u.imm_int ? x : y;
    if (y && y->kind == WEFT_EXPR_INT) return y->u.imm_int ? y : x;
    return weft_binary(a, WEFT_EXPR_OR, x, y);
}

const weft_expr *weft_not(weft_arena *a, const weft_expr *x)
{
    if (!x) return NULL;
    if (x->kind == WEFT_EXPR_INT) return weft_int(a, WEFT_BOOL, !x->u.imm_int);
    weft_expr *e = node(a, WEFT_EXPR_NOT, WEFT_BOOL);
    if (e) e->u.un.a = x;
    return e;
}

const weft_expr *weft_select(weft_arena *a, const weft_expr *c, const weft_expr *t, const weft_expr *f)
{
    if (!c || !t || !f) return NULL;
    assert(weft_dtype_eq(t->dtype, f->dtype));
    if (c->kind == WEFT_EXPR_INT) return c->u.imm_int ? t : f;
    weft_expr *e = node(a, WEFT_EXPR_SELECT, t->dtype);
    if (!e) return NULL;
    e->u.sel.c = c;
    e->u.sel.t = t;
    e->u.sel.f = f;
    return e;
}

const weft_expr *weft_cast(weft_arena *a, weft_dtype t, const weft_expr *x)
{
    if (!x) return NULL;
    if (weft_dtype_eq(t, x->dtype)) return x;
    if (x->kind == WEFT_EXPR_INT) {
        if (weft_dtype_is_float(t)) return weft_float(a, t, (double)x->u.imm_int);
        return weft_int(a, t, x->u.imm_int);
    }
    if (x->kind == WEFT_EXPR_FLOAT && weft_dtype_is_float(t)) return weft_float(a, t, x->u.imm_float);
    weft_expr *e = node(a, WEFT_EXPR_CAST, t);
    if (e) e->u.un.a = x;
    return e;
}

const weft_expr *weft_call(weft_arena *a, weft_intrin fn, int n, const weft_expr *const *args)
{
    assert(n == weft_intrin_arity(fn));
    for (int i = 0; i < n; i++)
        if (!args[i]) return NULL;
    weft_expr *e = node(a, WEFT_EXPR_CALL, args[0]->dtype);
    const weft_expr **v = weft_arena_alloc(a, sizeof *v * (size_t)n);
    if (!e || !v) return NULL;
    memcpy(v, args, sizeof *v * (size_t)n);
    e->u.call.fn = fn;
    e->u.call.n = n;
    e->u.call.args = v;
    return e;
}

const weft_expr *weft_call1(weft_arena *a, weft_intrin fn, const weft_expr *x) { return weft_call(a, fn, 1, &x); }

const weft_expr *weft_tload(weft_arena *a, const weft_tensor *t, int n, const weft_expr *const *idx)
{
    if (!t) return NULL;
    assert(n == t->ndim);
    for (int i = 0; i < n; i++)
        if (!idx[i]) return NULL;
    weft_expr *e = node(a, WEFT_EXPR_TLOAD, t->dtype);
    const weft_expr **v = weft_arena_alloc(a, sizeof *v * (size_t)(n ? n : 1));
    if (!e || !v) return NULL;
    if (n) memcpy(v, idx, sizeof *v * (size_t)n);
    e->u.tload.tensor = t;
    e->u.tload.n = n;
    e->u.tload.idx = v;
    return e;
}

bool weft_expr_equal(const weft_expr *x, const weft_expr *y)
{
    if (x == y) return true;
    if (!x || !y || x->kind != y->kind || !weft_dtype_eq(x->dtype, y->dtype)) return false;
    switch ((weft_expr_kind)x->kind) {
    case WEFT_EXPR_INT: return x->u.imm_int == y->u.imm_int;
    case WEFT_EXPR_FLOAT: return memcmp(&x->u.imm_float, &y->u.imm_float, sizeof(double)) == 0;
    case WEFT_EXPR_VAR: return false; /* identity only */
    case WEFT_EXPR_NOT:
    case WEFT_EXPR_CAST: return weft_expr_equal(x->u.un.a, y->u.un.a);
    case WEFT_EXPR_SELECT:
        return weft_expr_equal(x->u.sel.c, y->u.sel.c) && weft_expr_equal(x->u.sel.t, y->u.sel.t) &&
               weft_expr_equal(x->u.sel.f, y->u.sel.f);
    case WEFT_EXPR_CALL:
        if (x->u.call.fn != y->u.call.fn || x->u.call.n != y->u.call.n) return false;
        for (int i = 0; i < x->u.call.n; i++)
            if (!weft_expr_equal(x->u.call.args[i], y->u.call.args[i])) return false;
        return true;
    case WEFT_EXPR_TLOAD:
        if (x->u.tload.tensor != y->u.tload.tensor || x->u.tload.n != y->u.tload.n) return false;
        for (int i = 0; i < x->u.tload.n; i++)
            if (!weft_expr_equal(x->u.tload.idx[i], y->u.tload.idx[i])) return false;
        return true;
    case WEFT_EXPR_LOAD:
        return x->u.load.buf == y->u.load.buf && weft_expr_equal(x->u.load.index, y->u.load.index);
    default:
        return weft_expr_equal(x->u.bin.a, y->u.bin.a) && weft_expr_equal(x->u.bin.b, y->u.bin.b);
    }
}

void weft_expr_each_child(const weft_expr *e, weft_expr_child_fn fn, void *ud)
{
    if (!e) return;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT:
    case WEFT_EXPR_FLOAT:
    case WEFT_EXPR_VAR: return;
    case WEFT_EXPR_NOT:
    case WEFT_EXPR_CAST: fn(ud, e->u.un.a); return;
    case WEFT_EXPR_SELECT:
        fn(ud, e->u.sel.c);
        fn(ud, e->u.sel.t);
        fn(ud, e->u.sel.f);
        return;
    case WEFT_EXPR_CALL:
        for (int i = 0; i < e->u.call.n; i++) fn(ud, e->u.call.args[i]);
        return;
    case WEFT_EXPR_TLOAD:
        for (int i = 0; i < e->u.tload.n; i++) fn(ud, e->u.tload.idx[i]);
        return;
    case WEFT_EXPR_LOAD: fn(ud, e->u.load.index); return;
    default:
        fn(ud, e->u.bin.a);
        fn(ud, e->u.bin.b);
        return;
    }
}

const weft_expr *weft_expr_map_children(weft_arena *a, const weft_expr *e, weft_expr_map_fn fn, void *ud)
{
    if (!e) return NULL;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT:
    case WEFT_EXPR_FLOAT:
    case WEFT_EXPR_VAR: return e;
    case WEFT_EXPR_NOT: {
        const weft_expr *x = fn(ud, e->u.un.a);
        return x == e->u.un.a ? e : weft_not(a, x);
    }
    case WEFT_EXPR_CAST: {
        const weft_expr *x = fn(ud, e->u.un.a);
        return x == e->u.un.a ? e : weft_cast(a, e->dtype, x);
    }
    case WEFT_EXPR_SELECT: {
        const weft_expr *c = fn(ud, e->u.sel.c), *t = fn(ud, e->u.sel.t), *f = fn(ud, e->u.sel.f);
        if (c == e->u.sel.c && t == e->u.sel.t && f == e->u.sel.f) return e;
        return weft_select(a, c, t, f);
    }
    case WEFT_EXPR_CALL: {
        const weft_expr *args[4];
        bool same = true;
        for (int i = 0; i < e->u.call.n; i++) {
            args[i] = fn(ud, e->u.call.args[i]);
            same = same && args[i] == e->u.call.args[i];
        }
        return same ? e : weft_call(a, (weft_intrin)e->u.call.fn, e->u.call.n, args);
    }
    case WEFT_EXPR_TLOAD: {
        const weft_expr *idx[WEFT_MAX_DIMS];
        bool same = true;
        for (int i = 0; i < e->u.tload.n; i++) {
            idx[i] = fn(ud, e->u.tload.idx[i]);
            same = same && idx[i] == e->u.tload.idx[i];
        }
        return same ? e : weft_tload(a, e->u.tload.tensor, e->u.tload.n, idx);
    }
    case WEFT_EXPR_LOAD: {
        const weft_expr *i = fn(ud, e->u.load.index);
        return i == e->u.load.index ? e : weft_load(a, e->u.load.buf, i);
    }
    default: {
        const weft_expr *x = fn(ud, e->u.bin.a), *y = fn(ud, e->u.bin.b);
        if (x == e->u.bin.a && y == e->u.bin.b) return e;
        return weft_binary(a, (weft_expr_kind)e->kind, x, y);
    }
    }
}

typedef struct subst_ctx {
    weft_arena *a;
    int n;
    const weft_expr *const *from, *const *to;
} subst_ctx;

static const weft_expr *subst_one(void *ud, const weft_expr *e)
{
    const subst_ctx *c = ud;
    if (e && e->kind == WEFT_EXPR_VAR) {
        for (int i = 0; i < c->n; i++)
            if (c->from[i] == e) return c->to[i];
        return e;
    }
    return weft_expr_map_children(c->a, e, subst_one, ud);
}

const weft_expr *weft_expr_substitute(weft_arena *a, const weft_expr *e, int n,
                                      const weft_expr *const *from, const weft_expr *const *to)
{
    subst_ctx c = {a, n, from, to};
    return subst_one(&c, e);
}

/* Whether e or any expression under it matches (pred(node, arg)), stopping at the first. */
typedef struct any_ctx {
    bool (*pred)(const weft_expr *e, const void *arg);
    const void *arg;
    bool found;
} any_ctx;

static void any_one(void *ud, const weft_expr *e)
{
    any_ctx *c = ud;
    if (c->found || !e) return;
    if (c->pred(e, c->arg)) c->found = true;
    else weft_expr_each_child(e, any_one, ud);
}

static bool expr_any(const weft_expr *e, bool (*pred)(const weft_expr *, const void *), const void *arg)
{
    any_ctx c = {pred, arg, false};
    any_one(&c, e);
    return c.found;
}

static bool is_node(const weft_expr *e, const void *v) { return e == v; }

static bool loads_buf(const weft_expr *e, const void *buf)
{
    return e->kind == WEFT_EXPR_LOAD && e->u.load.buf == buf;
}

bool weft_expr_uses_var(const weft_expr *e, const weft_expr *v) { return expr_any(e, is_node, v); }

bool weft_expr_reads_buf(const weft_expr *e, const weft_buffer *buf) { return expr_any(e, loads_buf, buf); }

static bool is_load(const weft_expr *e, const void *unused)
{
    (void)unused;
    return e->kind == WEFT_EXPR_LOAD || e->kind == WEFT_EXPR_TLOAD;
}

bool weft_expr_has_load(const weft_expr *e) { return expr_any(e, is_load, NULL); }
