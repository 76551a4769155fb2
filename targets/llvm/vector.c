/* Explicit vector code for VECTORIZED loops.
 *
 * Requires (weft_llvm_vector_ok): a constant extent L in [1, MAX_LANES] and a body that is a
 * straight line of STOREs (SEQs of STOREs), each store's index depending on the loop variable.
 * Anything else is emitted as a serial loop by codegen.c (correct, just not widened).
 *
 * The body is evaluated once with the variable bound to <L x i64> (min + <0..L-1>); values that
 * do not depend on it stay scalar (expr.c broadcasts them where they meet vectors). Memory
 * accesses use a small stride analysis of the flat index with respect to the variable:
 *   stride 0 (index does not use it)  -> scalar load, broadcast by its users
 *   stride 1                          -> one contiguous <L x T> load/store at &buf[index(min)]
 *   other constant stride / unknown   -> llvm.masked.gather / llvm.masked.scatter
 *   rest + floordiv(x, R), x stride 1 -> the contiguous elements its lanes cover, each repeated
 *                                        by a shuffle (under a clamp of that term: the
 *                                        elements inside it, the clamped lanes an edge's)
 * A blocked layout's index (a weight laid out [N/c, K, c] read at [floordiv(j, c), k,
 * floormod(j, c)]) is contiguous too: when x has stride 1 and its lane-0 value is a known
 * multiple of g with gcd(g, c) >= L, every lane of x lies in one block of c, so
 * floordiv(x, c) has stride 0 (evaluated at lane 0) and floormod(x, c) stride 1. The
 * multiple comes from the index's form (j.0*160 + j.0_10*16 + j.1: a multiple of 16 at
 * j.1 = 0), not from values.
 * An IF in the body (the guard of a partial tile) splits its condition: terms without the
 * variable branch as usual, the others make a lane mask, and loads and stores under it become
 * llvm.masked.load / masked.store (or carry the mask into gather/scatter), so the last partial
 * vector of an extent runs as one masked vector operation. A contiguous access to a local
 * buffer (ALLOCATE) whose whole lane range is provably inside the buffer (index interval from
 * constant loop bounds; for a load, inside the buffer and its zeroed slack) is not masked: the
 * load is plain and the store becomes load-blend-store, so the tile accumulator of a partial
 * tile stays promotable to registers and its window reads are plain loads.
 * Stores run statement by statement over all lanes; this equals serial execution when a lane
 * never reads what another lane of the same loop writes, which is what VECTORIZED promises
 * (and why a store whose index ignores the variable is not widened). The one exception is a
 * loop whose whole body is a reduction into one cell, S[i] = S[i] + e (or max, min) with i not
 * using the variable and e using it: e is evaluated as a vector, summed across its lanes
 * (llvm.vector.reduce.*, a shuffle tree: the order of the float additions changes, as it
 * does wherever a schedule splits a reduction) and combined with S[i] once. The horizontal sum
 * of a per-channel vector of partial sums (rfactor) is then a few shuffles in registers
 * instead of a chain of dependent scalar adds through memory.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/binop.h"
#include "targets/llvm/llvm_internal.h"
#include "runtime/mem.h"

enum { MAX_LANES = 256 };

/* The vectorized loop an index is analysed for: its variable, lanes and a known divisor of its
 * lane-0 value (0 when that value is 0, 1 when nothing is known). */
typedef struct vloop {
    const weft_expr *v;
    int64_t lanes, min_mult;
    bool no_clamp; /* analyse an integer MIN/MAX against a constant as its other operand */
} vloop;


/* A known divisor of e's value with vl->v at its lane-0 value: 0 when e is 0, 1 when nothing
 * is known. Other variables count as arbitrary integers. */
static int64_t mult_of(const weft_expr *e, const vloop *vl)
{
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT: return e->u.imm_int < 0 ? -e->u.imm_int : e->u.imm_int;
    case WEFT_EXPR_VAR: return e == vl->v ? vl->min_mult : 1;
    case WEFT_EXPR_ADD:
    case WEFT_EXPR_SUB: return weft_gcd64(mult_of(e->u.bin.a, vl), mult_of(e->u.bin.b, vl));
    case WEFT_EXPR_MUL: {
        int64_t a = mult_of(e->u.bin.a, vl), b = mult_of(e->u.bin.b, vl);
        if (a == 0 || b == 0) return 0;
        return a > ((int64_t)1 << 31) || b > ((int64_t)1 << 31) ? 1 : a * b;
    }
    default: return 1;
    }
}

/* Derivative of the integer expression e with respect to vl->v when it is a known constant
 * over the loop's lanes. */
static bool stride_of(const weft_expr *e, const vloop *vl, int64_t *out)
{
    const weft_expr *v = vl->v;
    if (!weft_expr_uses_var(e, v)) {
        *out = 0;
        return true;
    }
    int64_t a, b;
    const weft_expr *unclamped = vl->no_clamp ? weft_llvm_clamp_arg(e) : NULL;
    if (unclamped) return stride_of(unclamped, vl, out);
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_VAR: *out = 1; return true; /* uses_var: e == v */
    case WEFT_EXPR_ADD:
    case WEFT_EXPR_SUB:
        if (!stride_of(e->u.bin.a, vl, &a) || !stride_of(e->u.bin.b, vl, &b)) return false;
        *out = (int64_t)(e->kind == WEFT_EXPR_ADD ? (uint64_t)a + (uint64_t)b : (uint64_t)a - (uint64_t)b);
        return true;
    case WEFT_EXPR_MUL: {
        const weft_expr *x = e->u.bin.a, *y = e->u.bin.b;
        if (x->kind == WEFT_EXPR_INT) {
            const weft_expr *t = x;
            x = y;
            y = t;
        }
        if (y->kind != WEFT_EXPR_INT || !stride_of(x, vl, &a)) return false;
        *out = (int64_t)((uint64_t)a * (uint64_t)y->u.imm_int);
        return true;
    }
    case WEFT_EXPR_FLOORDIV:
    case WEFT_EXPR_FLOORMOD: { /* one block of c holds every lane (see the top of this file) */
        const weft_expr *x = e->u.bin.a, *c = e->u.bin.b;
        if (c->kind != WEFT_EXPR_INT || c->u.imm_int < 2 || !stride_of(x, vl, &a) || a != 1) return false;
        /* floormod(lane 0, c) is a multiple of gcd(g, c) (c itself when lane 0 is 0), so the
         * last lane stays in the block when that is at least L */
        if (weft_gcd64(mult_of(x, vl), c->u.imm_int) < vl->lanes) return false;
        *out = e->kind == WEFT_EXPR_FLOORDIV ? 0 : 1;
        return true;
    }
    case WEFT_EXPR_CAST: {
        const weft_expr *x = weft_expr_operand(e);
        if (!weft_dtype_is_int(x->dtype) || !weft_dtype_is_int(e->dtype) || e->dtype.bits < x->dtype.bits) return false;
        return stride_of(x, vl, out);
    }
    default: return false;
    }
}

static bool body_ok(const weft_stmt *s, const vloop *v)
{
    switch (s->kind) {
    case WEFT_STMT_STORE: {
        int64_t st;
        if (!weft_expr_uses_var(s->u.store.index, v->v)) return false;
        return !stride_of(s->u.store.index, v, &st) || st != 0;
    }
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (!body_ok(s->u.seq.items[i], v)) return false;
        return true;
    case WEFT_STMT_IF: /* a guard: its lanes become a mask */
        return !s->u.cond.else_s && body_ok(s->u.cond.then_s, v);
    default: return false;
    }
}

/* A known divisor of the loop's first value (0 when it is 0). */
static int64_t loop_min_mult(const weft_stmt *s)
{
    const weft_expr *m = s->u.loop.min;
    if (m->kind != WEFT_EXPR_INT) return 1;
    return m->u.imm_int < 0 ? -m->u.imm_int : m->u.imm_int;
}

/* The operand e of a reduction into one cell, S[i] = S[i] OP e (OP +, max or min on floats, +
 * on integers; S[i] on either side), where i does not use v and e does; NULL otherwise. */
static const weft_expr *cell_reduction(const weft_stmt *s, const weft_expr *v, weft_expr_kind *op)
{
    if (s->kind != WEFT_STMT_STORE || weft_expr_uses_var(s->u.store.index, v)) return NULL;
    const weft_expr *val = s->u.store.value;
    bool f = weft_dtype_is_float(val->dtype);
    if (val->dtype.bits < 8) return NULL; /* bools: no sum */
    if (val->kind != WEFT_EXPR_ADD && !(f && (val->kind == WEFT_EXPR_MAX || val->kind == WEFT_EXPR_MIN))) return NULL;
    for (int side = 0; side < 2; side++) {
        const weft_expr *cell = side ? val->u.bin.b : val->u.bin.a, *e = side ? val->u.bin.a : val->u.bin.b;
        if (cell->kind == WEFT_EXPR_LOAD && weft_expr_load_buf(cell) == s->u.store.buf &&
            weft_expr_equal(weft_expr_load_index(cell), s->u.store.index) && weft_expr_uses_var(e, v) &&
            !weft_expr_reads_buf(e, s->u.store.buf)) {
            *op = (weft_expr_kind)val->kind;
            return e;
        }
    }
    return NULL;
}

bool weft_llvm_vector_ok(const weft_stmt *s)
{
    const weft_expr *ext = s->u.loop.extent;
    if (ext->kind != WEFT_EXPR_INT || ext->u.imm_int < 1 || ext->u.imm_int > MAX_LANES) return false;
    if (!weft_dtype_is_int(s->u.loop.var->dtype)) return false;
    vloop vl = {s->u.loop.var, ext->u.imm_int, loop_min_mult(s), false};
    weft_expr_kind op = WEFT_EXPR_ADD;
    return body_ok(s->u.loop.body, &vl) || (ext->u.imm_int > 1 && cell_reduction(s->u.loop.body, s->u.loop.var, &op));
}

/* The loop's body is a reduction into one cell (cell_reduction): e as a vector, reduced across
 * its lanes, then S[i] = S[i] OP r once. */
static weft_status cell_reduction_loop(weft_llvm_cg *cg, const weft_stmt *body, const weft_expr *e, weft_expr_kind op)
{
    const weft_buffer *buf = body->u.store.buf;
    LLVMTypeRef mty = weft_llvm_mem_type(cg, buf->dtype);
    if (!mty) return weft_fail(WEFT_ERR_UNSUPPORTED, "llvm: buffer %s has unsupported dtype", buf->name);
    LLVMValueRef vec, base, i, r;
    weft_status st = weft_llvm_expr(cg, e, &vec);
    if (st != WEFT_OK) return st;
    if (!weft_llvm_lanes_of(vec)) vec = weft_llvm_splat(cg, vec, cg->lanes);
    vec = weft_llvm_to_mem(cg, buf->dtype, vec);
    LLVMTypeRef vty = LLVMTypeOf(vec), et = LLVMGetElementType(vty);
    bool f = LLVMGetTypeKind(et) == LLVMFloatTypeKind || LLVMGetTypeKind(et) == LLVMDoubleTypeKind;
    const char *name = !f ? "llvm.vector.reduce.add"
                       : op == WEFT_EXPR_ADD ? "llvm.vector.reduce.fadd"
                       : op == WEFT_EXPR_MAX ? "llvm.vector.reduce.fmax" : "llvm.vector.reduce.fmin";
    if (f && op == WEFT_EXPR_ADD) { /* start value -0.0 (the identity); reassociation: a tree */
        LLVMValueRef args[2] = {LLVMConstReal(et, -0.0), vec};
        r = weft_llvm_intrinsic(cg, name, &vty, 1, args, 2);
        LLVMSetFastMathFlags(r, LLVMFastMathAllowReassoc | LLVMFastMathAllowContract);
    } else {
        r = weft_llvm_intrinsic(cg, name, &vty, 1, &vec, 1);
        if (f) LLVMSetFastMathFlags(r, LLVMFastMathNoNaNs); /* maxnum/minnum, as scalar MAX/MIN (expr.c) */
    }
    if ((st = weft_llvm_buffer_ptr(cg, buf, &base)) != WEFT_OK) return st;
    const weft_expr *vvar = cg->vvar;
    cg->vvar = NULL; /* the index does not use it: a scalar address */
    st = weft_llvm_index(cg, body->u.store.index, &i);
    cg->vvar = vvar;
    if (st != WEFT_OK) return st;
    unsigned align = (unsigned)weft_dtype_bytes(buf->dtype);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, mty, base, &i, 1, "");
    LLVMValueRef old = LLVMBuildLoad2(cg->b, et, p, "");
    LLVMSetAlignment(old, align);
    LLVMValueRef res;
    if (!f) res = LLVMBuildAdd(cg->b, old, r, "");
    else if (op == WEFT_EXPR_ADD) res = LLVMBuildFAdd(cg->b, old, r, "");
    else {
        LLVMValueRef args[2] = {old, r};
        res = weft_llvm_intrinsic(cg, op == WEFT_EXPR_MAX ? "llvm.maxnum" : "llvm.minnum", &et, 1, args, 2);
    }
    LLVMValueRef store = LLVMBuildStore(cg->b, res, p);
    LLVMSetAlignment(store, align);
    return WEFT_OK;
}

/* Binds vectorized loop s's variable to <L x i64> (min + <0..L-1>) and sets cg's vector
 * context for its body; end_vector undoes it (depth: cg->n_vars before). */
static weft_status begin_vector(weft_llvm_cg *cg, const weft_stmt *s)
{
    if (cg->vvar) return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: nested vectorized loop");
    const weft_expr *var = s->u.loop.var;
    int n = (int)s->u.loop.extent->u.imm_int;
    LLVMValueRef min;
    weft_status st = weft_llvm_index(cg, s->u.loop.min, &min);
    if (st != WEFT_OK) return st;
    LLVMValueRef *steps = weft_malloc(sizeof *steps * (size_t)n);
    if (!steps) return weft_fail(WEFT_ERR_NOMEM, "llvm codegen: %d lanes", n);
    for (int i = 0; i < n; i++) steps[i] = LLVMConstInt(cg->t_i64, (unsigned long long)i, 0);
    LLVMValueRef lanes = LLVMBuildAdd(cg->b, weft_llvm_splat(cg, min, n), LLVMConstVector(steps, (unsigned)n), "");
    free(steps);
    LLVMTypeRef vt = weft_llvm_type(cg, var->dtype);
    if (vt != cg->t_i64) lanes = LLVMBuildTrunc(cg->b, lanes, LLVMVectorType(vt, (unsigned)n), "");
    st = weft_llvm_bind(cg, var, lanes);
    if (st != WEFT_OK) return st;
    if (s->u.loop.min->kind == WEFT_EXPR_INT) weft_llvm_bound_last(cg, s->u.loop.min->u.imm_int, s->u.loop.min->u.imm_int + n - 1);
    cg->vvar = var;
    cg->lanes = n;
    cg->vmin = min;
    cg->vmin_mult = loop_min_mult(s);
    cg->vmask = NULL;
    cg->vbody = s->u.loop.body;
    return WEFT_OK;
}

static void end_vector(weft_llvm_cg *cg, int depth)
{
    cg->vbody = NULL;
    cg->vvar = NULL;
    cg->lanes = 0;
    cg->vmin = NULL;
    cg->n_vars = depth;
}

weft_status weft_llvm_vector_loop(weft_llvm_cg *cg, const weft_stmt *s)
{
    int depth = cg->n_vars;
    weft_expr_kind op = WEFT_EXPR_ADD;
    const weft_expr *cell = cell_reduction(s->u.loop.body, s->u.loop.var, &op);
    weft_status st = begin_vector(cg, s);
    if (st == WEFT_OK) st = cell ? cell_reduction_loop(cg, s->u.loop.body, cell, op) : weft_llvm_stmt(cg, s->u.loop.body);
    end_vector(cg, depth);
    return st;
}

/* Scalar i64 value of idx with the vectorized variable bound to its value in lane `lane`;
 * unclamped: the integer clamps that use the variable emitted as their argument. */
static weft_status index_at_lane(weft_llvm_cg *cg, const weft_expr *idx, int lane, bool unclamped, LLVMValueRef *out)
{
    LLVMValueRef v0 = cg->vmin;
    if (lane) v0 = LLVMBuildAdd(cg->b, v0, LLVMConstInt(cg->t_i64, (unsigned long long)lane, 0), "");
    LLVMTypeRef vt = weft_llvm_type(cg, cg->vvar->dtype);
    if (vt != cg->t_i64) v0 = LLVMBuildTrunc(cg->b, v0, vt, "");
    int depth = cg->n_vars;
    const weft_expr *vvar = cg->vvar;
    weft_status st = weft_llvm_bind(cg, vvar, v0);
    if (unclamped) cg->no_clamp = true, cg->no_clamp_var = vvar;
    if (st == WEFT_OK) st = weft_llvm_index(cg, idx, out);
    if (unclamped) cg->no_clamp = false, cg->no_clamp_var = NULL;
    cg->n_vars = depth;
    return st;
}

/* Scalar i64 value of idx with the vectorized variable bound to its lane-0 value. */
static weft_status index_at_min(weft_llvm_cg *cg, const weft_expr *idx, LLVMValueRef *out)
{
    return index_at_lane(cg, idx, 0, false, out);
}

/* <lanes x i64> value of idx (broadcast when it happens to be scalar). */
static weft_status index_vector(weft_llvm_cg *cg, const weft_expr *idx, LLVMValueRef *out)
{
    LLVMValueRef v;
    weft_status st = weft_llvm_expr(cg, idx, &v);
    if (st != WEFT_OK) return st;
    if (!weft_llvm_lanes_of(v)) v = weft_llvm_splat(cg, v, cg->lanes);
    LLVMTypeRef et = LLVMGetElementType(LLVMTypeOf(v));
    if (LLVMGetTypeKind(et) != LLVMIntegerTypeKind)
        return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: non-integer index of type %s", weft_dtype_name(idx->dtype));
    LLVMTypeRef i64v = LLVMVectorType(cg->t_i64, (unsigned)cg->lanes);
    if (et == cg->t_i1) v = LLVMBuildZExt(cg->b, v, i64v, "");
    else if (et != cg->t_i64) v = LLVMBuildSExt(cg->b, v, i64v, "");
    *out = v;
    return WEFT_OK;
}

/* Interval [*lo, *hi] of the integer expression e over the bindings' known ranges; false when
 * some variable's range is unknown or e is not affine with constant factors (floordiv/floormod
 * by a positive constant and min/max of such are followed too). */
static bool range_of(const weft_llvm_cg *cg, const weft_expr *e, int64_t *lo, int64_t *hi)
{
    const int64_t big = (int64_t)1 << 31; /* operands below 2^31: no product overflows */
    int64_t al, ah, bl, bh;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT: *lo = *hi = e->u.imm_int; return *lo > -big && *lo < big;
    case WEFT_EXPR_VAR:
        for (int i = cg->n_vars - 1; i >= 0; i--)
            if (cg->vars[i].var == e) {
                *lo = cg->vars[i].lo;
                *hi = cg->vars[i].hi;
                return *lo <= *hi && *lo > -big && *hi < big;
            }
        return false;
    case WEFT_EXPR_ADD:
    case WEFT_EXPR_SUB:
        if (!range_of(cg, e->u.bin.a, &al, &ah) || !range_of(cg, e->u.bin.b, &bl, &bh)) return false;
        *lo = e->kind == WEFT_EXPR_ADD ? al + bl : al - bh;
        *hi = e->kind == WEFT_EXPR_ADD ? ah + bh : ah - bl;
        return *lo > -big && *hi < big;
    case WEFT_EXPR_MUL: {
        const weft_expr *x = e->u.bin.a, *y = e->u.bin.b;
        if (x->kind == WEFT_EXPR_INT) {
            const weft_expr *t = x;
            x = y;
            y = t;
        }
        int64_t c = y->kind == WEFT_EXPR_INT ? y->u.imm_int : 0;
        if (y->kind != WEFT_EXPR_INT || c <= -big || c >= big || !range_of(cg, x, &al, &ah)) return false;
        *lo = c >= 0 ? al * c : ah * c;
        *hi = c >= 0 ? ah * c : al * c;
        return *lo > -big && *hi < big;
    }
    case WEFT_EXPR_CAST: {
        const weft_expr *x = weft_expr_operand(e);
        if (!weft_dtype_is_int(x->dtype) || !weft_dtype_is_int(e->dtype) || e->dtype.bits < x->dtype.bits) return false;
        return range_of(cg, x, lo, hi);
    }
    case WEFT_EXPR_FLOORDIV:
    case WEFT_EXPR_FLOORMOD: { /* by a positive constant: monotone / in [0, c-1] */
        const weft_expr *c = e->u.bin.b;
        if (c->kind != WEFT_EXPR_INT || c->u.imm_int <= 0 || c->u.imm_int >= big || !range_of(cg, e->u.bin.a, &al, &ah))
            return false;
        int64_t d = c->u.imm_int, ql, qh;
        weft_binop_int(WEFT_EXPR_FLOORDIV, al, d, &ql);
        weft_binop_int(WEFT_EXPR_FLOORDIV, ah, d, &qh);
        if (e->kind == WEFT_EXPR_FLOORDIV) *lo = ql, *hi = qh;
        else if (ql == qh) *lo = al - ql * d, *hi = ah - qh * d; /* one block: no wrap */
        else *lo = 0, *hi = d - 1;
        return true;
    }
    case WEFT_EXPR_MIN:
    case WEFT_EXPR_MAX:
        if (!weft_dtype_is_int(e->dtype) || !range_of(cg, e->u.bin.a, &al, &ah) || !range_of(cg, e->u.bin.b, &bl, &bh))
            return false;
        *lo = e->kind == WEFT_EXPR_MIN ? (al < bl ? al : bl) : (al > bl ? al : bl);
        *hi = e->kind == WEFT_EXPR_MIN ? (ah < bh ? ah : bh) : (ah > bh ? ah : bh);
        return true;
    default: return false;
    }
}

bool weft_llvm_int_range(const weft_llvm_cg *cg, const weft_expr *e, int64_t *lo, int64_t *hi)
{
    return weft_dtype_is_int(e->dtype) && range_of(cg, e, lo, hi);
}

static int64_t pow2_ceil(int64_t n)
{
    int64_t p = 1;
    while (p < n) p *= 2;
    return p;
}

/* True when buf is a local buffer and every lane of the contiguous access at idx lies inside it
 * (the vectorized variable's binding covers all lanes); a load may also reach into the
 * buffer's slack (zeroed with the buffer when guarded loops read it, codegen.c), so a partial
 * tile's shifted window rows past the buffer's end read plainly instead of masked. */
static bool local_in_range(const weft_llvm_cg *cg, const weft_buffer *buf, const weft_expr *idx, bool load)
{
    if (buf->param_index >= 0) return false;
    const weft_llvm_local *l = load ? weft_llvm_local_of(cg, buf) : NULL;
    int64_t lo, hi, end = buf->size + (l ? l->slack : 0);
    return range_of(cg, idx, &lo, &hi) && lo >= 0 && hi < end;
}

/* True when a statement of the vectorized body s stores to buf. */
static bool stores_to(const weft_stmt *s, const weft_buffer *buf)
{
    if (!s) return false;
    switch (s->kind) {
    case WEFT_STMT_STORE: return s->u.store.buf == buf;
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (stores_to(s->u.seq.items[i], buf)) return true;
        return false;
    case WEFT_STMT_IF: return stores_to(s->u.cond.then_s, buf) || stores_to(s->u.cond.else_s, buf);
    default: return true; /* not expected in a vectorized body: assume it may */
    }
}

/* Lanes to read for a plain contiguous load of cg->lanes lanes at idx from buf: the next power
 * of two when the lanes are not one (LLVM splits <7 x float> into 4 + 2 + 1-lane accesses),
 * buf is a local buffer whose slack covers the extra lanes, the loop does not store to buf
 * (a wider load of an accumulator the loop also stores would keep LLVM from promoting it to
 * registers), and the loops inside buf's allocation run more than WIDEN_MIN_TRIPS times (the
 * load's vector excluded): LLVM unrolls fewer completely, every index becomes a constant, and
 * it then splits the whole buffer into values and rebuilds each widened row from scalars
 * (depthwise 3x3 on 7x7 planes ran 1.4x slower widened; 5x5, 175 trips, 1.3x faster); else
 * cg->lanes. */
enum { WIDEN_MIN_TRIPS = 100 };
static int widened_lanes(const weft_llvm_cg *cg, const weft_buffer *buf, const weft_expr *idx)
{
    int n = cg->lanes, w = (int)pow2_ceil(n);
    if (w == n || w > 16 || buf->param_index >= 0 || stores_to(cg->vbody, buf)) return n;
    const weft_llvm_local *l = weft_llvm_local_of(cg, buf);
    if (!l || l->slack < w - n) return n;
    int64_t lo, hi, trips = 1;
    for (int i = l->vars_at; i < cg->n_vars && trips <= WIDEN_MIN_TRIPS; i++)
        if (cg->vars[i].var != cg->vvar)
            trips = cg->vars[i].lo <= cg->vars[i].hi ? trips * (cg->vars[i].hi - cg->vars[i].lo + 1) * cg->vars[i].copies
                                                     : WIDEN_MIN_TRIPS + 1;
    if (trips <= WIDEN_MIN_TRIPS || !range_of(cg, idx, &lo, &hi) || lo < 0 || hi + (w - n) >= buf->size + l->slack)
        return n;
    return w;
}

/* +1 when the comparison term holds for every value the bindings allow, -1 when it never does,
 * 0 when unknown (not an ordered integer comparison, or a range is unknown). */
int weft_llvm_term_truth(const weft_llvm_cg *cg, const weft_expr *t)
{
    int64_t al, ah, bl, bh;
    if (t->kind != WEFT_EXPR_LT && t->kind != WEFT_EXPR_LE && t->kind != WEFT_EXPR_GT && t->kind != WEFT_EXPR_GE)
        return 0;
    if (!weft_dtype_is_int(weft_expr_a(t)->dtype) || !range_of(cg, weft_expr_a(t), &al, &ah) ||
        !range_of(cg, weft_expr_b(t), &bl, &bh))
        return 0;
    switch ((weft_expr_kind)t->kind) {
    case WEFT_EXPR_LT: return ah < bl ? 1 : al >= bh ? -1 : 0;
    case WEFT_EXPR_LE: return ah <= bl ? 1 : al > bh ? -1 : 0;
    case WEFT_EXPR_GT: return al > bh ? 1 : ah <= bl ? -1 : 0;
    default: return al >= bh ? 1 : ah < bl ? -1 : 0;
    }
}

/* Truth of a conjunction: -1 when some term never holds, +1 when all always do. */
static int cond_truth(const weft_llvm_cg *cg, const weft_expr *c)
{
    if (c->kind == WEFT_EXPR_AND) {
        int a = cond_truth(cg, weft_expr_a(c)), b = cond_truth(cg, weft_expr_b(c));
        return a < 0 || b < 0 ? -1 : a > 0 && b > 0 ? 1 : 0;
    }
    return weft_llvm_term_truth(cg, c);
}

static void collect_vars(const weft_llvm_cg *cg, const weft_expr *e, const weft_expr **vars, int *n, int cap)
{
    if (e->kind == WEFT_EXPR_VAR) {
        for (int i = 0; i < *n; i++)
            if (vars[i] == e) return;
        if (*n < cap) vars[(*n)++] = e;
        return;
    }
    if (e->kind == WEFT_EXPR_ADD || e->kind == WEFT_EXPR_SUB || e->kind == WEFT_EXPR_MUL || e->kind == WEFT_EXPR_AND ||
        e->kind == WEFT_EXPR_LT || e->kind == WEFT_EXPR_LE || e->kind == WEFT_EXPR_GT || e->kind == WEFT_EXPR_GE) {
        collect_vars(cg, weft_expr_a(e), vars, n, cap);
        collect_vars(cg, weft_expr_b(e), vars, n, cap);
    }
}

static int binding_of(const weft_llvm_cg *cg, const weft_expr *v)
{
    for (int i = cg->n_vars - 1; i >= 0; i--)
        if (cg->vars[i].var == v) return i;
    return -1;
}

/* Truth of cond (or of its negation) with v's binding narrowed to the one value x. */
static int truth_at(weft_llvm_cg *cg, const weft_expr *cond, int b, int64_t x, bool negated)
{
    int64_t lo = cg->vars[b].lo, hi = cg->vars[b].hi;
    cg->vars[b].lo = cg->vars[b].hi = x;
    int t = cond_truth(cg, cond);
    cg->vars[b].lo = lo;
    cg->vars[b].hi = hi;
    return negated ? -t : t;
}

weft_status weft_llvm_narrow_for_branch(weft_llvm_cg *cg, const weft_expr *cond, bool negated)
{
    const weft_expr *vars[8];
    int n = 0;
    collect_vars(cg, cond, vars, &n, 8);
    for (int i = 0; i < n; i++) {
        int b = binding_of(cg, vars[i]);
        if (b < 0 || cg->vars[b].lo > cg->vars[b].hi || cg->vars[b].hi - cg->vars[b].lo > 4096) continue;
        int64_t lo = cg->vars[b].lo, hi = cg->vars[b].hi;
        while (lo <= hi && truth_at(cg, cond, b, lo, negated) < 0) lo++;
        while (hi >= lo && truth_at(cg, cond, b, hi, negated) < 0) hi--;
        if (lo > hi || (lo == cg->vars[b].lo && hi == cg->vars[b].hi)) continue; /* dead branch: left as is */
        weft_status st = weft_llvm_bind(cg, vars[i], cg->vars[b].v);
        if (st != WEFT_OK) return st;
        weft_llvm_bound_last(cg, lo, hi);
    }
    return WEFT_OK;
}

/* Lanes 0..w-1 of v's lanes followed by fill's (a vector of v's type): lane i < n is v's lane
 * i, the others fill's lane 0 (w > n widens v; w == n keeps the first n lanes of a wider v). */
static LLVMValueRef lanes_resized(weft_llvm_cg *cg, LLVMValueRef v, LLVMValueRef fill, unsigned n, unsigned w)
{
    LLVMValueRef idx[64];
    for (unsigned i = 0; i < w; i++) idx[i] = LLVMConstInt(cg->t_i32, i < n ? i : n, false);
    return LLVMBuildShuffleVector(cg->b, v, fill, LLVMConstVector(idx, w), "");
}

/* A masked load or store of a lane count that is not a power of two is made at the next power
 * of two, the added lanes masked off. LLVM 19's x86 backend left to widen a masked load of 9
 * lanes with a mask computed at run time (AVX2: two vmaskmovps) loaded the ninth lane where its
 * mask was false: a 3x3 conv over 9-wide rows, rows unrolled, returned the next row's values
 * at the image's border. */
static LLVMValueRef masked_intrinsic(weft_llvm_cg *cg, const char *name, LLVMTypeRef data_ty, LLVMTypeRef ptrs_ty,
                                     LLVMValueRef *args, unsigned n)
{
    bool load = !strcmp(name, "llvm.masked.load"), store = !strcmp(name, "llvm.masked.store");
    unsigned lanes = LLVMGetTypeKind(data_ty) == LLVMVectorTypeKind ? LLVMGetVectorSize(data_ty) : 0, w = 1;
    while (w < lanes) w *= 2;
    if ((load || store) && lanes > 1 && w != lanes && w <= 64 && n == 4) {
        LLVMTypeRef wty = LLVMVectorType(LLVMGetElementType(data_ty), w);
        LLVMValueRef a[4] = {args[0], args[1], args[2], args[3]};
        a[load ? 2 : 3] = lanes_resized(cg, args[load ? 2 : 3], LLVMConstNull(LLVMTypeOf(args[load ? 2 : 3])), lanes, w);
        a[load ? 3 : 0] = lanes_resized(cg, args[load ? 3 : 0], LLVMGetPoison(data_ty), lanes, w);
        LLVMTypeRef ovl[2] = {wty, ptrs_ty};
        LLVMValueRef r = weft_llvm_intrinsic(cg, name, ovl, 2, a, 4);
        return load ? lanes_resized(cg, r, LLVMGetPoison(wty), lanes, lanes) : r;
    }
    LLVMTypeRef ovl[2] = {data_ty, ptrs_ty};
    return weft_llvm_intrinsic(cg, name, ovl, 2, args, n);
}

static LLVMValueRef all_true(weft_llvm_cg *cg)
{
    return cg->vmask ? cg->vmask : LLVMConstAllOnes(LLVMVectorType(cg->t_i1, (unsigned)cg->lanes));
}

/* v as i1 (or <lanes x i1>). */
static LLVMValueRef to_i1(weft_llvm_cg *cg, LLVMValueRef v)
{
    LLVMTypeRef ty = LLVMTypeOf(v);
    int n = weft_llvm_lanes_of(v);
    LLVMTypeRef et = n ? LLVMGetElementType(ty) : ty;
    if (et == cg->t_i1) return v;
    LLVMValueRef zero = LLVMConstNull(ty);
    return LLVMGetTypeKind(et) == LLVMIntegerTypeKind ? LLVMBuildICmp(cg->b, LLVMIntNE, v, zero, "")
                                                      : LLVMBuildFCmp(cg->b, LLVMRealUNE, v, zero, "");
}

static void flatten_and(const weft_expr *e, const weft_expr **terms, int *n, int cap)
{
    if (e->kind == WEFT_EXPR_AND && *n + 2 <= cap) {
        flatten_and(weft_expr_a(e), terms, n, cap);
        flatten_and(weft_expr_b(e), terms, n, cap);
    } else if (*n < cap) terms[(*n)++] = e;
}

weft_status weft_llvm_vector_if(weft_llvm_cg *cg, const weft_stmt *s)
{
    if (s->u.cond.else_s) return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: IF with else in a vectorized loop");
    const weft_expr *terms[64];
    int n = 0;
    flatten_and(s->u.cond.cond, terms, &n, 64);
    LLVMValueRef scalar = NULL, mask = NULL;
    for (int i = 0; i < n; i++) {
        int truth = weft_llvm_term_truth(cg, terms[i]);
        if (truth < 0) return WEFT_OK; /* no lane ever runs it */
        if (truth > 0) continue;       /* every lane does: no mask */
        LLVMValueRef v;
        weft_status st = weft_llvm_expr(cg, terms[i], &v);
        if (st != WEFT_OK) return st;
        v = to_i1(cg, v);
        if (weft_llvm_lanes_of(v)) mask = mask ? LLVMBuildAnd(cg->b, mask, v, "") : v;
        else scalar = scalar ? LLVMBuildAnd(cg->b, scalar, v, "") : v;
    }
    LLVMBasicBlockRef merge = NULL;
    if (scalar) {
        LLVMBasicBlockRef then_b = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "vthen");
        merge = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "vendif");
        LLVMBuildCondBr(cg->b, scalar, then_b, merge);
        LLVMPositionBuilderAtEnd(cg->b, then_b);
    }
    LLVMValueRef saved = cg->vmask;
    if (mask) cg->vmask = saved ? LLVMBuildAnd(cg->b, saved, mask, "") : mask;
    weft_status st = weft_llvm_stmt(cg, s->u.cond.then_s);
    cg->vmask = saved;
    if (st != WEFT_OK) return st;
    if (merge) {
        LLVMBuildBr(cg->b, merge);
        LLVMPositionBuilderAtEnd(cg->b, merge);
    }
    return WEFT_OK;
}

/* x's lane-0 value modulo R, when its form says (constants plus terms that are multiples of R,
 * the variable's lane 0 counting as a multiple of vl->min_mult). */
static bool residue_of(const weft_expr *e, const vloop *vl, int64_t R, int64_t *r)
{
    int64_t a, b;
    const weft_expr *unclamped = vl->no_clamp ? weft_llvm_clamp_arg(e) : NULL;
    if (unclamped) return residue_of(unclamped, vl, R, r);
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT: *r = ((e->u.imm_int % R) + R) % R; return true;
    case WEFT_EXPR_ADD:
    case WEFT_EXPR_SUB:
        if (!residue_of(e->u.bin.a, vl, R, &a) || !residue_of(e->u.bin.b, vl, R, &b)) return false;
        *r = ((e->kind == WEFT_EXPR_ADD ? a + b : a - b) % R + R) % R;
        return true;
    default: *r = 0; return mult_of(e, vl) % R == 0;
    }
}

/* idx = (terms without the variable) + floordiv(x, R), x of stride 1 with a lane-0 value of
 * known residue r0 modulo R, 2 <= R <= L: lane l reads the element floordiv(r0 + l, R) after
 * lane 0's (a nearest or linear upsampling's source column). Returns R and sets *r0; 0 for
 * any other index. */
static int64_t repeat_of(const weft_expr *e, const vloop *vl, int64_t *r0)
{
    int64_t s;
    if (e->kind == WEFT_EXPR_ADD) {
        if (stride_of(e->u.bin.a, vl, &s) && s == 0) return repeat_of(e->u.bin.b, vl, r0);
        if (stride_of(e->u.bin.b, vl, &s) && s == 0) return repeat_of(e->u.bin.a, vl, r0);
        return 0;
    }
    if (e->kind != WEFT_EXPR_FLOORDIV) return 0;
    const weft_expr *x = e->u.bin.a, *c = e->u.bin.b;
    if (c->kind != WEFT_EXPR_INT || c->u.imm_int < 2 || c->u.imm_int > vl->lanes) return 0;
    if (!stride_of(x, vl, &s) || s != 1 || !residue_of(x, vl, c->u.imm_int, r0)) return 0;
    return c->u.imm_int;
}

/* The same form with its variable term clamped into the input: idx = rest + clamp(u), u of
 * repeat_of's form, the clamp one integer MIN/MAX against a constant or two (lo / hi; the
 * missing side INT64_MIN / INT64_MAX). u is nondecreasing over the lanes, so the lanes the
 * clamp moves are a prefix (below lo) and a suffix (above hi). */
typedef struct clamped_rep {
    int64_t R, r0, lo, hi;
    const weft_expr *u;
} clamped_rep;

static bool repeat_of_clamped(const weft_expr *e, const vloop *vl, clamped_rep *cr)
{
    int64_t s;
    if (e->kind == WEFT_EXPR_ADD) {
        if (stride_of(e->u.bin.a, vl, &s) && s == 0) return repeat_of_clamped(e->u.bin.b, vl, cr);
        if (stride_of(e->u.bin.b, vl, &s) && s == 0) return repeat_of_clamped(e->u.bin.a, vl, cr);
        return false;
    }
    cr->lo = INT64_MIN, cr->hi = INT64_MAX;
    const weft_expr *u = e, *arg;
    for (int k = 0; k < 2 && (arg = weft_llvm_clamp_arg(u)); k++) {
        int64_t c = (u->u.bin.b->kind == WEFT_EXPR_INT ? u->u.bin.b : u->u.bin.a)->u.imm_int;
        if (u->kind == WEFT_EXPR_MIN) cr->hi = c < cr->hi ? c : cr->hi;
        else cr->lo = c > cr->lo ? c : cr->lo;
        u = arg;
    }
    if (u == e || cr->lo > cr->hi) return false;
    cr->u = u;
    return (cr->R = repeat_of(u, vl, &cr->r0)) > 0;
}

/* <n x i64> constant vector of k (k = 0 .. n-1), or of floordiv(r0 + k, R) when R > 0. */
static LLVMValueRef lane_consts(weft_llvm_cg *cg, unsigned n, int64_t r0, int64_t R)
{
    LLVMValueRef c[MAX_LANES];
    for (unsigned k = 0; k < n; k++)
        c[k] = LLVMConstInt(cg->t_i64, (unsigned long long)(R > 0 ? (r0 + (int64_t)k) / R : (int64_t)k), 0);
    return LLVMConstVector(c, n);
}

/* A clamped repeated load (repeat_of_clamped): the elements the lanes cover that lie inside
 * [lo, hi] as one masked load at the unclamped index (those outside are never read), repeated
 * by a shuffle; lanes below lo take the element at lo (the clamped index of lane 0), lanes
 * above hi the element at hi (of the last lane). A row's first and last vectors of a linear
 * upsampling: every vector of a 64-wide row, with 32 lanes, touches an end. */
static weft_status clamped_repeated_load(weft_llvm_cg *cg, LLVMTypeRef mty, LLVMValueRef base, const weft_expr *idx,
                                         unsigned align, const clamped_rep *cr, LLVMValueRef *out)
{
    unsigned L = (unsigned)cg->lanes, R = (unsigned)cr->R, r0 = (unsigned)cr->r0, n = (r0 + L - 1) / R + 1;
    LLVMValueRef flat0, u0, lo_i, hi_i;
    weft_status st;
    if ((st = index_at_lane(cg, idx, 0, true, &flat0)) != WEFT_OK || (st = index_at_lane(cg, cr->u, 0, false, &u0)) != WEFT_OK ||
        (st = index_at_lane(cg, idx, 0, false, &lo_i)) != WEFT_OK || (st = index_at_lane(cg, idx, (int)L - 1, false, &hi_i)) != WEFT_OK)
        return st;
    LLVMTypeRef nty = LLVMVectorType(mty, n);
    LLVMValueRef uj = LLVMBuildAdd(cg->b, weft_llvm_splat(cg, u0, (int)n), lane_consts(cg, n, 0, 0), "");
    LLVMValueRef m = NULL;
    if (cr->lo != INT64_MIN)
        m = LLVMBuildICmp(cg->b, LLVMIntSGE, uj, weft_llvm_splat(cg, LLVMConstInt(cg->t_i64, (unsigned long long)cr->lo, 1), (int)n), "");
    if (cr->hi != INT64_MAX) {
        LLVMValueRef mh =
            LLVMBuildICmp(cg->b, LLVMIntSLE, uj, weft_llvm_splat(cg, LLVMConstInt(cg->t_i64, (unsigned long long)cr->hi, 1), (int)n), "");
        m = m ? LLVMBuildAnd(cg->b, m, mh, "") : mh;
    }
    LLVMValueRef p = LLVMBuildGEP2(cg->b, mty, base, &flat0, 1, ""); /* may point outside the row: only read where m holds */
    LLVMValueRef args[4] = {p, LLVMConstInt(cg->t_i32, align, 0), m, LLVMConstNull(nty)};
    LLVMValueRef ld = masked_intrinsic(cg, "llvm.masked.load", nty, LLVMTypeOf(p), args, 4), sel[MAX_LANES];
    for (unsigned l = 0; l < L; l++) sel[l] = LLVMConstInt(cg->t_i32, (r0 + l) / R, 0);
    LLVMValueRef v = LLVMBuildShuffleVector(cg->b, ld, LLVMGetPoison(nty), LLVMConstVector(sel, L), "");
    LLVMValueRef ul = LLVMBuildAdd(cg->b, weft_llvm_splat(cg, u0, (int)L), lane_consts(cg, L, cr->r0, cr->R), "");
    for (int side = 0; side < 2; side++) {
        int64_t bound = side ? cr->hi : cr->lo;
        if (bound == (side ? INT64_MAX : INT64_MIN)) continue;
        LLVMValueRef at = side ? hi_i : lo_i;
        LLVMValueRef edge = LLVMBuildLoad2(cg->b, mty, LLVMBuildInBoundsGEP2(cg->b, mty, base, &at, 1, ""), "");
        LLVMSetAlignment(edge, align);
        LLVMValueRef out_side = LLVMBuildICmp(cg->b, side ? LLVMIntSGT : LLVMIntSLT, ul,
                                              weft_llvm_splat(cg, LLVMConstInt(cg->t_i64, (unsigned long long)bound, 1), (int)L), "");
        v = LLVMBuildSelect(cg->b, out_side, weft_llvm_splat(cg, edge, (int)L), v, "");
    }
    *out = v;
    return WEFT_OK;
}

/* Lanes l reading p[floordiv(r0 + l, R)] (repeat_of): one load of the elements they cover, each
 * repeated by a shuffle; under a lane mask an element is read when a lane of its group is on. */
static LLVMValueRef repeated_load(weft_llvm_cg *cg, LLVMTypeRef mty, LLVMValueRef p, unsigned align, unsigned R, unsigned r0)
{
    unsigned L = (unsigned)cg->lanes, n = (r0 + L - 1) / R + 1;
    LLVMTypeRef nty = LLVMVectorType(mty, n);
    LLVMValueRef sel[MAX_LANES], ld;
    if (cg->vmask) {
        /* element j: lanes max(0, j*R - r0) .. j*R - r0 + R - 1 (the last clipped to L - 1) */
        LLVMValueRef m = NULL;
        for (unsigned r = 0; r < R; r++) {
            for (unsigned j = 0; j < n; j++) {
                long lane = (long)(j * R + r) - (long)r0;
                sel[j] = LLVMConstInt(cg->t_i32, (unsigned long long)(lane < 0 ? 0 : lane > (long)L - 1 ? (long)L - 1 : lane), 0);
            }
            LLVMValueRef part = LLVMBuildShuffleVector(cg->b, cg->vmask, cg->vmask, LLVMConstVector(sel, n), "");
            m = m ? LLVMBuildOr(cg->b, m, part, "") : part;
        }
        LLVMValueRef args[4] = {p, LLVMConstInt(cg->t_i32, align, 0), m, LLVMConstNull(nty)};
        ld = masked_intrinsic(cg, "llvm.masked.load", nty, LLVMTypeOf(p), args, 4);
    } else {
        ld = LLVMBuildLoad2(cg->b, nty, p, "");
        LLVMSetAlignment(ld, align);
    }
    for (unsigned l = 0; l < L; l++) sel[l] = LLVMConstInt(cg->t_i32, (r0 + l) / R, 0);
    return LLVMBuildShuffleVector(cg->b, ld, LLVMGetPoison(nty), LLVMConstVector(sel, L), "");
}

enum { MAX_DEINTERLEAVE = 4 }; /* the widest stride a load reads whole and deinterleaves */

/* Lanes l of stride S from p (lane l at p + S*l) as one masked load of S x L elements and a
 * shuffle of every S-th: element j is read when the lane at or after it (ceil(j / S)) is on in
 * `lanes` (an i1 vector of L), so it lies between two addresses the vector reads; the other
 * lanes are zero. S * L <= 128. */
static LLVMValueRef deinterleaved_load(weft_llvm_cg *cg, LLVMTypeRef mty, LLVMValueRef p, unsigned align, unsigned S,
                                       LLVMValueRef lanes)
{
    unsigned L = (unsigned)cg->lanes, W = S * L;
    LLVMTypeRef wty = LLVMVectorType(mty, W);
    LLVMValueRef spread[128], sel[128], off = LLVMConstNull(LLVMTypeOf(lanes)); /* index L: off */
    for (unsigned j = 0; j < W; j++) spread[j] = LLVMConstInt(cg->t_i32, (j + S - 1) / S < L ? (j + S - 1) / S : L, 0);
    for (unsigned k = 0; k < L; k++) sel[k] = LLVMConstInt(cg->t_i32, (unsigned long long)k * S, 0);
    LLVMValueRef wmask = LLVMBuildShuffleVector(cg->b, lanes, off, LLVMConstVector(spread, W), "");
    LLVMValueRef args[4] = {p, LLVMConstInt(cg->t_i32, align, 0), wmask, LLVMConstNull(wty)};
    LLVMValueRef wide = masked_intrinsic(cg, "llvm.masked.load", wty, LLVMTypeOf(p), args, 4);
    return LLVMBuildShuffleVector(cg->b, wide, LLVMGetPoison(wty), LLVMConstVector(sel, L), "");
}

/* Interleaved loads (a pixel shuffle's read): defined with the linear forms below. */
typedef struct interleave {
    int64_t A, R, r0;
} interleave;
static bool interleave_of(const weft_expr *idx, const vloop *vl, interleave *il);
static LLVMValueRef interleaved_load(weft_llvm_cg *cg, LLVMTypeRef mty, LLVMValueRef p0, unsigned align, const interleave *il,
                                     LLVMValueRef lanes);

/* Lane l of the vector reads base[idx at lane l]: a gather (disabled lanes of a mask read
 * nothing and are zero). */
static weft_status gather_load(weft_llvm_cg *cg, LLVMTypeRef mty, LLVMValueRef base, const weft_expr *idx, unsigned align,
                               LLVMValueRef *out)
{
    LLVMValueRef i;
    weft_status st = index_vector(cg, idx, &i);
    if (st != WEFT_OK) return st;
    LLVMValueRef ptrs = LLVMBuildInBoundsGEP2(cg->b, mty, base, &i, 1, "");
    LLVMTypeRef vty = LLVMVectorType(mty, (unsigned)cg->lanes);
    LLVMValueRef args[4] = {ptrs, LLVMConstInt(cg->t_i32, align, 0), all_true(cg),
                            cg->vmask ? LLVMConstNull(vty) : LLVMGetPoison(vty)};
    *out = masked_intrinsic(cg, "llvm.masked.gather", vty, LLVMTypeOf(ptrs), args, 4);
    return WEFT_OK;
}

static bool clamps_idle(const weft_expr *idx, const weft_expr *const *terms, const bool *neg, int n_terms);

weft_status weft_llvm_vector_load(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out)
{
    const weft_buffer *buf = weft_expr_load_buf(e);
    const weft_expr *idx = weft_expr_load_index(e);
    LLVMTypeRef mty = weft_llvm_mem_type(cg, buf->dtype);
    if (!mty) return weft_fail(WEFT_ERR_UNSUPPORTED, "llvm: buffer %s has unsupported dtype", buf->name);
    unsigned align = (unsigned)weft_dtype_bytes(buf->dtype);
    LLVMValueRef base, i, ld;
    weft_status st = weft_llvm_buffer_ptr(cg, buf, &base);
    if (st != WEFT_OK) return st;
    int64_t stride, R, r0;
    clamped_rep cr;
    interleave il;
    vloop vl = {cg->vvar, cg->lanes, cg->vmin_mult, false};
    bool known = stride_of(idx, &vl, &stride), unclamped = false, interleaved = false;
    if (!known && cg->n_facts) { /* under a select's branch: clamps its condition proves idle */
        vloop vn = vl;
        vn.no_clamp = true;
        if (stride_of(idx, &vn, &stride) && (stride == 0 || stride == 1) && clamps_idle(idx, cg->facts, cg->fact_neg, cg->n_facts))
            known = unclamped = true;
        else if (interleave_of(idx, &vn, &il) && clamps_idle(idx, cg->facts, cg->fact_neg, cg->n_facts))
            interleaved = unclamped = true; /* a padded pixel shuffle's read, inside the image */
    }
    if (!known && !interleaved) interleaved = interleave_of(idx, &vl, &il);
    if (interleaved) {
        st = index_at_lane(cg, idx, 0, unclamped, &i);
        if (st != WEFT_OK) return st;
        ld = interleaved_load(cg, mty, LLVMBuildGEP2(cg->b, mty, base, &i, 1, ""), align, &il, all_true(cg));
    } else if (known && stride == 0) { /* at lane 0: the index may use the variable (floordiv of a block) */
        st = weft_expr_uses_var(idx, cg->vvar) ? index_at_lane(cg, idx, 0, unclamped, &i) : weft_llvm_index(cg, idx, &i);
        if (st != WEFT_OK) return st;
        ld = LLVMBuildLoad2(cg->b, mty, LLVMBuildInBoundsGEP2(cg->b, mty, base, &i, 1, ""), "");
        LLVMSetAlignment(ld, align);
    } else if (known && stride == 1) {
        st = index_at_lane(cg, idx, 0, unclamped, &i);
        if (st != WEFT_OK) return st;
        LLVMTypeRef vty = LLVMVectorType(mty, (unsigned)cg->lanes);
        LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, mty, base, &i, 1, "");
        if (cg->vmask && !local_in_range(cg, buf, idx, true)) {
            LLVMValueRef args[4] = {p, LLVMConstInt(cg->t_i32, align, 0), cg->vmask, LLVMConstNull(vty)};
            ld = masked_intrinsic(cg, "llvm.masked.load", vty, LLVMTypeOf(p), args, 4);
        } else {
            int w = cg->vmask ? cg->lanes : widened_lanes(cg, buf, idx);
            ld = LLVMBuildLoad2(cg->b, LLVMVectorType(mty, (unsigned)w), p, "");
            LLVMSetAlignment(ld, align);
            if (w != cg->lanes) {
                LLVMValueRef sel[16];
                for (int k = 0; k < cg->lanes; k++) sel[k] = LLVMConstInt(cg->t_i32, (unsigned long long)k, 0);
                ld = LLVMBuildShuffleVector(cg->b, ld, LLVMGetPoison(LLVMTypeOf(ld)), LLVMConstVector(sel, (unsigned)cg->lanes), "");
            }
        }
    } else if (known && stride >= 2 && stride <= MAX_DEINTERLEAVE && cg->slow_gather && cg->lanes * stride <= 64) {
        /* a small constant stride where gathers are slow (AMD Zen: about a load per lane) */
        st = index_at_min(cg, idx, &i);
        if (st != WEFT_OK) return st;
        LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, mty, base, &i, 1, "");
        ld = deinterleaved_load(cg, mty, p, align, (unsigned)stride, all_true(cg)); /* vmask when set */
    } else if (!known && (R = repeat_of(idx, &vl, &r0)) > 0) {
        st = index_at_min(cg, idx, &i);
        if (st != WEFT_OK) return st;
        ld = repeated_load(cg, mty, LLVMBuildInBoundsGEP2(cg->b, mty, base, &i, 1, ""), align, (unsigned)R, (unsigned)r0);
    } else if (!known && repeat_of_clamped(idx, &vl, &cr)) {
        if ((st = clamped_repeated_load(cg, mty, base, idx, align, &cr, &ld)) != WEFT_OK) return st;
    } else {
        st = gather_load(cg, mty, base, idx, align, &ld);
        if (st != WEFT_OK) return st;
    }
    *out = weft_llvm_from_mem(cg, buf->dtype, ld);
    return WEFT_OK;
}

weft_status weft_llvm_vector_store(weft_llvm_cg *cg, const weft_stmt *s)
{
    const weft_buffer *buf = s->u.store.buf;
    const weft_expr *idx = s->u.store.index;
    LLVMTypeRef mty = weft_llvm_mem_type(cg, buf->dtype);
    if (!mty) return weft_fail(WEFT_ERR_UNSUPPORTED, "llvm: buffer %s has unsupported dtype", buf->name);
    unsigned align = (unsigned)weft_dtype_bytes(buf->dtype);
    LLVMValueRef base, val, i;
    weft_status st = weft_llvm_buffer_ptr(cg, buf, &base);
    if (st == WEFT_OK) st = weft_llvm_expr(cg, s->u.store.value, &val);
    if (st != WEFT_OK) return st;
    if (!weft_llvm_lanes_of(val)) val = weft_llvm_splat(cg, val, cg->lanes);
    val = weft_llvm_to_mem(cg, buf->dtype, val);
    int64_t stride;
    vloop vl = {cg->vvar, cg->lanes, cg->vmin_mult, false};
    bool known = stride_of(idx, &vl, &stride);
    if (known && stride == 1) {
        bool blend = cg->vmask && local_in_range(cg, buf, idx, false);
        st = index_at_min(cg, idx, &i);
        if (st != WEFT_OK) return st;
        LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, mty, base, &i, 1, "");
        if (blend) { /* the disabled lanes keep what the buffer held */
            LLVMValueRef old = LLVMBuildLoad2(cg->b, LLVMTypeOf(val), p, "");
            LLVMSetAlignment(old, align);
            val = LLVMBuildSelect(cg->b, cg->vmask, val, old, "");
        } else if (cg->vmask) {
            LLVMValueRef args[4] = {val, p, LLVMConstInt(cg->t_i32, align, 0), cg->vmask};
            masked_intrinsic(cg, "llvm.masked.store", LLVMTypeOf(val), LLVMTypeOf(p), args, 4);
            return WEFT_OK;
        }
        LLVMValueRef store = LLVMBuildStore(cg->b, val, p);
        LLVMSetAlignment(store, align);
        return WEFT_OK;
    }
    if (cg->scalar_scatter && !cg->vmask && known) {
        /* a constant stride: one scalar store per lane at base + k * stride (blocked convs
         * write each vector of filters back across as many planes) */
        st = index_at_min(cg, idx, &i);
        if (st != WEFT_OK) return st;
        for (int k = 0; k < cg->lanes; k++) {
            LLVMValueRef off = LLVMBuildAdd(cg->b, i, LLVMConstInt(cg->t_i64, (unsigned long long)(stride * k), 1), "");
            LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, mty, base, &off, 1, "");
            LLVMValueRef e = LLVMBuildExtractElement(cg->b, val, LLVMConstInt(cg->t_i32, (unsigned long long)k, 0), "");
            LLVMValueRef store = LLVMBuildStore(cg->b, e, p);
            LLVMSetAlignment(store, align);
        }
        return WEFT_OK;
    }
    st = index_vector(cg, idx, &i);
    if (st != WEFT_OK) return st;
    LLVMValueRef ptrs = LLVMBuildInBoundsGEP2(cg->b, mty, base, &i, 1, "");
    LLVMValueRef args[4] = {val, ptrs, LLVMConstInt(cg->t_i32, align, 0), all_true(cg)};
    masked_intrinsic(cg, "llvm.masked.scatter", LLVMTypeOf(val), LLVMTypeOf(ptrs), args, 4);
    return WEFT_OK;
}

/* ---- padding stages: SELECT(c, LOAD(x[clamped index]), fill) ------------------------------ */

enum { LIN_TERMS = 16 };

/* An integer expression as sum(coef * atom) + c: atoms are variables and any subexpression that
 * is not +, -, * by a constant (compared structurally); with strip, integer clamps count as their
 * operand. Overflow (or more than LIN_TERMS atoms) clears ok. */
typedef struct lin {
    const weft_expr *atom[LIN_TERMS];
    int64_t coef[LIN_TERMS], c;
    int n;
    bool ok;
} lin;

static void lin_add(lin *l, const weft_expr *e, int64_t m, bool strip)
{
    const weft_expr *arg = strip ? weft_llvm_clamp_arg(e) : NULL;
    int64_t t;
    if (!l->ok) return;
    if (arg) return lin_add(l, arg, m, strip);
    if (e->kind == WEFT_EXPR_INT) {
        if (__builtin_mul_overflow(m, e->u.imm_int, &t) || __builtin_add_overflow(l->c, t, &l->c)) l->ok = false;
    } else if (e->kind == WEFT_EXPR_ADD || e->kind == WEFT_EXPR_SUB) {
        lin_add(l, e->u.bin.a, m, strip);
        if (m == INT64_MIN) l->ok = false;
        else lin_add(l, e->u.bin.b, e->kind == WEFT_EXPR_ADD ? m : -m, strip);
    } else if (e->kind == WEFT_EXPR_MUL && (e->u.bin.a->kind == WEFT_EXPR_INT || e->u.bin.b->kind == WEFT_EXPR_INT)) {
        bool ka = e->u.bin.a->kind == WEFT_EXPR_INT;
        if (__builtin_mul_overflow(m, (ka ? e->u.bin.a : e->u.bin.b)->u.imm_int, &t)) l->ok = false;
        else lin_add(l, ka ? e->u.bin.b : e->u.bin.a, t, strip);
    } else {
        for (int i = 0; i < l->n; i++)
            if (weft_expr_equal(l->atom[i], e)) {
                if (__builtin_add_overflow(l->coef[i], m, &l->coef[i])) l->ok = false;
                return;
            }
        if (l->n == LIN_TERMS || !weft_dtype_is_int(e->dtype)) {
            l->ok = false;
            return;
        }
        l->atom[l->n] = e;
        l->coef[l->n++] = m;
    }
}

/* ---- interleaved loads: a pixel shuffle's read ------------------------------------------ */

/* idx = rest + A * floormod(x, R) + floordiv(x, R), rest without the variable, x of stride 1
 * with a known residue r0 of its lane-0 value modulo R, 2 <= R <= MAX_INTERLEAVE, A != 0: lane
 * l reads plane (r0 + l) % R (A elements apart) at element (r0 + l) / R, i.e. R runs of
 * contiguous elements interleaved. A depth-to-space (PixelShuffle, a sub-pixel ConvTranspose's
 * phases put back together) reads its input so along a row: X[c, h % 2, w % 2, h / 2, w / 2]. */
enum { MAX_INTERLEAVE = 4 };

static bool interleave_of(const weft_expr *idx, const vloop *vl, interleave *il)
{
    lin l = {.ok = true};
    lin_add(&l, idx, 1, false);
    if (!l.ok) return false;
    const weft_expr *mod = NULL, *div = NULL;
    int64_t A = 0, s;
    for (int i = 0; i < l.n; i++) {
        const weft_expr *e = l.atom[i];
        if (!l.coef[i] || !weft_expr_uses_var(e, vl->v)) continue;
        if ((e->kind != WEFT_EXPR_FLOORMOD && e->kind != WEFT_EXPR_FLOORDIV) || e->u.bin.b->kind != WEFT_EXPR_INT) return false;
        if (e->kind == WEFT_EXPR_FLOORMOD && !mod) mod = e, A = l.coef[i];
        else if (e->kind == WEFT_EXPR_FLOORDIV && !div && l.coef[i] == 1) div = e;
        else return false;
    }
    if (!mod || !div) return false;
    int64_t R = mod->u.bin.b->u.imm_int;
    /* at most 64 lanes: the planes' vectors (L / R + 1 elements each) concatenate to at most
     * 4 x 33 lanes in interleaved_load's shuffles */
    if (R < 2 || R > MAX_INTERLEAVE || R > vl->lanes || vl->lanes > 64 || div->u.bin.b->u.imm_int != R ||
        !weft_expr_equal(mod->u.bin.a, div->u.bin.a))
        return false;
    if (!stride_of(mod->u.bin.a, vl, &s) || s != 1 || !residue_of(mod->u.bin.a, vl, R, &il->r0)) return false;
    il->A = A, il->R = R;
    return true;
}

/* The interleaved read (interleave_of) whose lane 0 reads p0 (plane r0): one masked load per
 * plane of the elements its lanes read (element j of plane q is lane j * R + q - r0; it is
 * read when that lane is on in `lanes`, an i1 vector of L), then one shuffle of the planes'
 * vectors into the lanes. */
static LLVMValueRef interleaved_load(weft_llvm_cg *cg, LLVMTypeRef mty, LLVMValueRef p0, unsigned align, const interleave *il,
                                     LLVMValueRef lanes)
{
    unsigned L = (unsigned)cg->lanes, R = (unsigned)il->R, r0 = (unsigned)il->r0, n = (r0 + L - 1) / R + 1;
    LLVMValueRef back = LLVMConstInt(cg->t_i64, (unsigned long long)(-il->A * il->r0), 1);
    LLVMValueRef p = LLVMBuildGEP2(cg->b, mty, p0, &back, 1, ""); /* plane 0's element */
    LLVMTypeRef nty = LLVMVectorType(mty, n);
    LLVMValueRef parts[MAX_INTERLEAVE], sel[MAX_LANES], off = LLVMConstNull(LLVMTypeOf(lanes)); /* index L: off */
    for (unsigned q = 0; q < R; q++) {
        for (unsigned j = 0; j < n; j++) {
            long lane = (long)(j * R + q) - (long)r0;
            sel[j] = LLVMConstInt(cg->t_i32, lane >= 0 && lane < (long)L ? (unsigned long long)lane : L, 0);
        }
        LLVMValueRef m = LLVMBuildShuffleVector(cg->b, lanes, off, LLVMConstVector(sel, n), "");
        LLVMValueRef o = LLVMConstInt(cg->t_i64, (unsigned long long)(il->A * (int64_t)q), 1);
        LLVMValueRef pq = LLVMBuildGEP2(cg->b, mty, p, &o, 1, "");
        LLVMValueRef args[4] = {pq, LLVMConstInt(cg->t_i32, align, 0), m, LLVMConstNull(nty)};
        parts[q] = masked_intrinsic(cg, "llvm.masked.load", nty, LLVMTypeOf(pq), args, 4);
    }
    /* concatenate the planes' vectors pairwise (a missing one as zeros): plane q at q * n */
    unsigned cnt = R, w = n;
    while (cnt > 1) {
        LLVMValueRef cat[MAX_LANES];
        for (unsigned k = 0; k < 2 * w; k++) cat[k] = LLVMConstInt(cg->t_i32, k, 0);
        for (unsigned k = 0; k < cnt; k += 2) {
            LLVMValueRef b = k + 1 < cnt ? parts[k + 1] : LLVMConstNull(LLVMTypeOf(parts[k]));
            parts[k / 2] = LLVMBuildShuffleVector(cg->b, parts[k], b, LLVMConstVector(cat, 2 * w), "");
        }
        cnt = (cnt + 1) / 2, w *= 2;
    }
    for (unsigned l = 0; l < L; l++) sel[l] = LLVMConstInt(cg->t_i32, ((r0 + l) % R) * n + (r0 + l) / R, 0);
    return LLVMBuildShuffleVector(cg->b, parts[0], LLVMGetPoison(LLVMTypeOf(parts[0])), LLVMConstVector(sel, L), "");
}

/* True when the comparison term (an integer >=, >, <=, <) implies d >= 0, where d is
 * sum(sign_i * e_i) + k: d minus the term's slack (lhs - rhs >= 0 for >=, ...) is a constant >= 0. */
static bool term_implies(const weft_expr *term, bool neg, const weft_expr *const *e, const int64_t *sign, int n, int64_t k)
{
    weft_expr_kind kd = (weft_expr_kind)term->kind;
    if (neg) /* not (a < b) is a >= b, and so on */
        kd = kd == WEFT_EXPR_LT ? WEFT_EXPR_GE : kd == WEFT_EXPR_LE ? WEFT_EXPR_GT : kd == WEFT_EXPR_GE ? WEFT_EXPR_LT
           : kd == WEFT_EXPR_GT ? WEFT_EXPR_LE : WEFT_EXPR_AND /* not a comparison: implies nothing */;
    if ((kd != WEFT_EXPR_GE && kd != WEFT_EXPR_GT && kd != WEFT_EXPR_LE && kd != WEFT_EXPR_LT) ||
        !weft_dtype_is_int(term->u.bin.a->dtype))
        return false;
    bool ge = kd == WEFT_EXPR_GE || kd == WEFT_EXPR_GT;
    lin l = {.ok = true, .c = k};
    /* e's clamps are stripped (clamps_idle proves them idle); the term is taken as written */
    for (int i = 0; i < n; i++) lin_add(&l, e[i], sign[i], true);
    lin_add(&l, term->u.bin.a, ge ? -1 : 1, false); /* minus the slack: -(a - b) or -(b - a) */
    lin_add(&l, term->u.bin.b, ge ? 1 : -1, false);
    if ((kd == WEFT_EXPR_GT || kd == WEFT_EXPR_LT) && __builtin_add_overflow(l.c, 1, &l.c)) return false;
    if (!l.ok || l.c < 0) return false;
    for (int i = 0; i < l.n; i++)
        if (l.coef[i]) return false;
    return true;
}

/* True when every integer clamp in idx (MIN/MAX against a constant) is the identity wherever
 * every term of `terms` holds (a clamp inside a clamp with its own clamps removed). */
static bool clamps_idle(const weft_expr *idx, const weft_expr *const *terms, const bool *neg, int n_terms)
{
    const weft_expr *arg = weft_llvm_clamp_arg(idx);
    if (arg) {
        const weft_expr *k = arg == idx->u.bin.a ? idx->u.bin.b : idx->u.bin.a;
        bool mx = idx->kind == WEFT_EXPR_MAX; /* max(x, k): x - k >= 0; min(x, k): k - x >= 0 */
        const weft_expr *e[1] = {arg};
        int64_t sign[1] = {mx ? 1 : -1};
        bool ok = false;
        if (k->u.imm_int == INT64_MIN) return false;
        for (int i = 0; i < n_terms && !ok; i++)
            ok = term_implies(terms[i], neg && neg[i], e, sign, 1, mx ? -k->u.imm_int : k->u.imm_int);
        return ok && clamps_idle(arg, terms, neg, n_terms);
    }
    if (weft_expr_is_binary(idx))
        return clamps_idle(idx->u.bin.a, terms, neg, n_terms) && clamps_idle(idx->u.bin.b, terms, neg, n_terms);
    if (idx->kind == WEFT_EXPR_CAST) return clamps_idle(weft_expr_operand(idx), terms, neg, n_terms);
    return idx->kind == WEFT_EXPR_INT || idx->kind == WEFT_EXPR_VAR;
}

/* A padding stage reads its input at clamped indices (ops/nn_conv.c: X[n, c, min(max(h - p, 0),
 * H - 1), ...] under c = "inside"), because SELECT evaluates both arms; the clamp makes the
 * index non-affine, so every vector was a gather. When the conjunction c implies that every
 * clamp of the index is the identity (clamps_idle: max(x, k) needs a term of c that implies
 * x >= k by linear arithmetic, e.g. "x + p >= p + k") and the index without clamps is
 * contiguous along the vectorized variable, the lanes where c holds read memory with one
 * masked load at the unclamped address, and the lanes where c fails are masked off (no memory
 * access) and take the fill. Otherwise the SELECT is emitted as before. Measured with AVX-512:
 * stride-1 padding 4-10% faster per conv kernel (3x3 convs of batch 32 at 8x8, a depthwise
 * conv at 112x112). For stride-2 phase-split pads the same read is a masked load of 2 x lanes
 * and a shuffle of the even elements: 1.4x slower on 14x14 planes than LLVM's fully unrolled
 * gathers on an Intel Xeon (rocketlake), but 2-2.9x faster per stride-2 depthwise kernel on
 * AMD Zen 4, whose gathers cost about a load per lane: done where t->slow_gather. */
weft_status weft_llvm_vector_select_load(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out, bool *done)
{
    *done = false;
    const weft_expr *t = weft_expr_sel_true(e);
    if (t->kind != WEFT_EXPR_LOAD || !weft_dtype_is_float(t->dtype)) return WEFT_OK;
    const weft_buffer *buf = weft_expr_load_buf(t);
    const weft_expr *idx = weft_expr_load_index(t);
    vloop vl = {cg->vvar, cg->lanes, cg->vmin_mult, false};
    int64_t s;
    if (stride_of(idx, &vl, &s)) return WEFT_OK; /* no clamp in the way: the plain load path */
    vl.no_clamp = true;
    interleave il = {0, 0, 0};
    if (!stride_of(idx, &vl, &s)) {
        if (!interleave_of(idx, &vl, &il)) return WEFT_OK;
        s = 0; /* an interleaved read (a pixel shuffle's, padded) */
    } else if (s != 1 && !(s == 2 && cg->slow_gather && cg->lanes <= 64)) {
        return WEFT_OK;
    }
    const weft_expr *terms[64];
    int n_terms = 0;
    flatten_and(weft_expr_sel_cond(e), terms, &n_terms, 64);
    if (!clamps_idle(idx, terms, NULL, n_terms)) return WEFT_OK;
    LLVMTypeRef mty = weft_llvm_mem_type(cg, buf->dtype);
    if (!mty || weft_llvm_type(cg, t->dtype) != mty) return WEFT_OK;
    unsigned L = (unsigned)cg->lanes, align = (unsigned)weft_dtype_bytes(buf->dtype);
    LLVMTypeRef vty = LLVMVectorType(mty, L);

    LLVMValueRef c, f, base, bp;
    weft_status st = weft_llvm_expr(cg, weft_expr_sel_false(e), &f);
    if (st != WEFT_OK) return st;
    if (LLVMTypeOf(f) != vty && (weft_llvm_lanes_of(f) || LLVMTypeOf(f) != mty)) return WEFT_OK; /* unusual fill */
    if (LLVMTypeOf(f) != vty) f = weft_llvm_splat(cg, f, (int)L);
    if ((st = weft_llvm_expr(cg, weft_expr_sel_cond(e), &c)) != WEFT_OK) return st;
    cg->no_clamp = true;
    st = index_at_min(cg, idx, &base);
    cg->no_clamp = false;
    if (st == WEFT_OK) st = weft_llvm_buffer_ptr(cg, buf, &bp);
    if (st != WEFT_OK) return st;
    c = to_i1(cg, c);
    if (!weft_llvm_lanes_of(c)) c = weft_llvm_splat(cg, c, (int)L);
    LLVMValueRef mask = cg->vmask ? LLVMBuildAnd(cg->b, c, cg->vmask, "") : c;
    LLVMValueRef p = LLVMBuildGEP2(cg->b, mty, bp, &base, 1, ""); /* lane 0's address: may lie outside when masked */
    LLVMValueRef ld;
    if (il.R) {
        ld = interleaved_load(cg, mty, p, align, &il, mask);
    } else if (s == 2) {
        ld = deinterleaved_load(cg, mty, p, align, 2, mask); /* 2L contiguous elements, the even ones */
    } else {
        LLVMValueRef args[4] = {p, LLVMConstInt(cg->t_i32, align, 0), mask, LLVMConstNull(vty)};
        ld = masked_intrinsic(cg, "llvm.masked.load", vty, LLVMTypeOf(p), args, 4);
    }
    *out = LLVMBuildSelect(cg->b, c, ld, f, "");
    *done = true;
    return WEFT_OK;
}

/* ---- transposed stores ------------------------------------------------------------------- */

/* Loop u (serial or unrolled, constant extent U in [2, 16]) around one vectorized loop v of L
 * lanes (a power of two, L >= P = U rounded up to a power of two) whose body is one unguarded
 * store to a parameter buffer at an index of stride 1 in u and of constant stride S >= U in v,
 * whose value does not read that buffer: the blocked conv's write-back, where each vector of
 * L filters is one pixel and lane l goes to filter l's plane, S elements away. Emitted as it
 * is, each vector becomes L scalar stores. Instead the U value vectors are computed first and
 * transposed in registers (log2 P stages of P two-source shuffles interleaving chunks of 1, 2,
 * 4, ... lanes, with the sources taken in bit-reversed order, which leaves row l = [v_0[l], ...,
 * v_{P-1}[l]] as a contiguous segment), then each lane's U values are one store <U x T> at
 * index(u = min, lane l): one masked store of P lanes where the target has cheap masked stores
 * (AVX-512), else only when U = P (a plain store). Equal to the serial loops: the rows do not
 * overlap (S >= U) and nothing in between reads the buffer. Zen 4, 1 thread, 1x1 conv + SiLU
 * (kernel time, four alternating calls): 112 -> 672 at 14x14 360-391 -> 310-341 us, 192 ->
 * 1152 at 7x7 232-256 -> 212-218 (the 16 x 7 tile's 112 vextractps stores became 16 masked
 * stores and 30 shuffles). */
enum { TRANSPOSE_MAX = 16 };

bool weft_llvm_transposed_store_ok(const weft_llvm_cg *cg, const weft_stmt *s, int64_t *stride)
{
    if (cg->vvar || (s->u.loop.kind != WEFT_FOR_SERIAL && s->u.loop.kind != WEFT_FOR_UNROLLED)) return false;
    const weft_expr *ue = s->u.loop.extent;
    const weft_stmt *v = s->u.loop.body;
    if (ue->kind != WEFT_EXPR_INT || ue->u.imm_int < 2 || ue->u.imm_int > TRANSPOSE_MAX) return false;
    if (!v || v->kind != WEFT_STMT_FOR || v->u.loop.kind != WEFT_FOR_VECTORIZED || !weft_llvm_vector_ok(v)) return false;
    int64_t U = ue->u.imm_int, L = v->u.loop.extent->u.imm_int, P = pow2_ceil(U);
    if (L > TRANSPOSE_MAX || L != pow2_ceil(L) || L < P || (U < P && !cg->avx512f)) return false;
    const weft_stmt *st = v->u.loop.body;
    if (st->kind != WEFT_STMT_STORE || st->u.store.buf->param_index < 0) return false;
    if (!weft_dtype_is_float(st->u.store.buf->dtype) || weft_expr_reads_buf(st->u.store.value, st->u.store.buf)) return false;
    if (!weft_dtype_is_int(s->u.loop.var->dtype) || !weft_dtype_is_int(v->u.loop.var->dtype)) return false;
    int64_t sv, su;
    vloop lv = {v->u.loop.var, L, loop_min_mult(v), false}, lu = {s->u.loop.var, U, loop_min_mult(s), false};
    if (!stride_of(st->u.store.index, &lv, &sv) || sv < U || !stride_of(st->u.store.index, &lu, &su) || su != 1) return false;
    *stride = sv;
    return true;
}

static int bit_reverse(int i, int bits)
{
    int r = 0;
    for (int b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
    return r;
}

weft_status weft_llvm_transposed_store(weft_llvm_cg *cg, const weft_stmt *s, int64_t stride)
{
    const weft_stmt *v = s->u.loop.body, *st = v->u.loop.body;
    const weft_buffer *buf = st->u.store.buf;
    int U = (int)s->u.loop.extent->u.imm_int, L = (int)v->u.loop.extent->u.imm_int, P = (int)pow2_ceil(U);
    LLVMTypeRef mty = weft_llvm_mem_type(cg, buf->dtype);
    if (!mty) return weft_fail(WEFT_ERR_UNSUPPORTED, "llvm: buffer %s has unsupported dtype", buf->name);
    LLVMValueRef base, umin, vals[TRANSPOSE_MAX], i0 = NULL;
    weft_status rc = weft_llvm_buffer_ptr(cg, buf, &base);
    if (rc == WEFT_OK) rc = weft_llvm_index(cg, s->u.loop.min, &umin);
    LLVMTypeRef vty = LLVMVectorType(mty, (unsigned)L), ut = weft_llvm_type(cg, s->u.loop.var->dtype);
    for (int k = 0; k < U && rc == WEFT_OK; k++) {
        int depth = cg->n_vars;
        LLVMValueRef uk = LLVMBuildAdd(cg->b, umin, LLVMConstInt(cg->t_i64, (unsigned long long)k, 0), "");
        rc = weft_llvm_bind(cg, s->u.loop.var, ut != cg->t_i64 ? LLVMBuildTrunc(cg->b, uk, ut, "") : uk);
        if (rc == WEFT_OK && s->u.loop.min->kind == WEFT_EXPR_INT)
            weft_llvm_bound_last(cg, s->u.loop.min->u.imm_int + k, s->u.loop.min->u.imm_int + k);
        if (rc == WEFT_OK) rc = begin_vector(cg, v);
        if (rc == WEFT_OK) {
            LLVMValueRef val;
            rc = weft_llvm_expr(cg, st->u.store.value, &val);
            if (rc == WEFT_OK) {
                if (!weft_llvm_lanes_of(val)) val = weft_llvm_splat(cg, val, L);
                vals[k] = weft_llvm_to_mem(cg, buf->dtype, val);
            }
            if (rc == WEFT_OK && k == 0) rc = index_at_min(cg, st->u.store.index, &i0);
        }
        end_vector(cg, depth);
    }
    if (rc != WEFT_OK) return rc;
    for (int k = U; k < P; k++) vals[k] = LLVMGetPoison(vty);
    int bits = 0;
    while ((1 << bits) < P) bits++;
    LLVMValueRef x[TRANSPOSE_MAX], y[TRANSPOSE_MAX], mask[TRANSPOSE_MAX];
    for (int i = 0; i < P; i++) x[i] = vals[bit_reverse(i, bits)];
    for (int g = 1; g < P; g *= 2) { /* interleave chunks of g lanes of x[i] and x[i + P/2] */
        for (int half = 0; half < 2; half++) {
            int n = 0;
            for (int c = 0; c < L / 2; c += g)
                for (int from = 0; from < 2; from++)
                    for (int t = 0; t < g; t++)
                        mask[n++] = LLVMConstInt(cg->t_i32, (unsigned long long)(from * L + half * L / 2 + c + t), 0);
            LLVMValueRef m = LLVMConstVector(mask, (unsigned)L);
            for (int i = 0; i < P / 2; i++) y[2 * i + half] = LLVMBuildShuffleVector(cg->b, x[i], x[i + P / 2], m, "");
        }
        memcpy(x, y, sizeof x[0] * (size_t)P);
    }
    unsigned align = (unsigned)weft_dtype_bytes(buf->dtype);
    LLVMValueRef live[TRANSPOSE_MAX]; /* a row's first U of P lanes */
    for (int t = 0; t < P; t++) live[t] = LLVMConstInt(cg->t_i1, t < U, 0);
    LLVMValueRef live_mask = LLVMConstVector(live, (unsigned)P);
    for (int j = 0; j < P; j++)
        for (int r = 0; r < L / P; r++) {
            int l = j * (L / P) + r;
            for (int t = 0; t < P; t++) mask[t] = LLVMConstInt(cg->t_i32, (unsigned long long)(r * P + t), 0);
            LLVMValueRef row = L == P ? x[j] : LLVMBuildShuffleVector(cg->b, x[j], LLVMGetPoison(vty), LLVMConstVector(mask, (unsigned)P), "");
            LLVMValueRef off = LLVMBuildAdd(cg->b, i0, LLVMConstInt(cg->t_i64, (unsigned long long)(stride * l), 1), "");
            LLVMValueRef ptr = LLVMBuildInBoundsGEP2(cg->b, mty, base, &off, 1, "");
            if (U < P) { /* AVX-512F: one store of the row's U lanes */
                LLVMValueRef args[4] = {row, ptr, LLVMConstInt(cg->t_i32, align, 0), live_mask};
                masked_intrinsic(cg, "llvm.masked.store", LLVMTypeOf(row), LLVMTypeOf(ptr), args, 4);
            } else LLVMSetAlignment(LLVMBuildStore(cg->b, row, ptr), align);
        }
    return WEFT_OK;
}
