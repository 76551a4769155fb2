/* Expressions -> LLVM values. One emitter serves scalar code and widened VECTORIZED bodies:
 * a value is a vector exactly when its LLVM type is, and operands of mixed shape are unified
 * by broadcasting the scalar one. LOADs inside a widened body go to vector.c.
 *
 * Semantics kept here (ir/expr.h): integer DIV truncates (sdiv), FLOORDIV/FLOORMOD round toward
 * -inf (exact for negative operands and divisors), MIN/MAX on floats are llvm.minnum/maxnum
 * (fminf/fmaxf), comparisons give i1, SELECT evaluates both arms. Float arithmetic carries
 * reassoc+contract fast-math flags (never ninf: -inf is the max-reduction identity). Float
 * DIV also carries arcp (a division by a loop-invariant value becomes a multiplication by its
 * hoisted reciprocal: attention's scaled Q in the matmul's inner loop). Float
 * MIN/MAX also carry nnan+nsz, which lets LLVM 19 vectorize max/min reductions (softmax's row
 * max ran as a scalar maxss+NaN-fixup chain): a NaN operand gives an unspecified value.
 */
#include <string.h>

#include "ir/tensor.h"
#include "targets/llvm/llvm_internal.h"

LLVMTypeRef weft_llvm_type(weft_llvm_cg *cg, weft_dtype t)
{
    if (t.lanes != 1) return NULL;
    switch (t.code) {
    case WEFT_DTYPE_BOOL: return cg->t_i1;
    case WEFT_DTYPE_INT:
        return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64 ? LLVMIntTypeInContext(cg->ctx, t.bits) : NULL;
    case WEFT_DTYPE_FLOAT: return t.bits == 32 ? cg->t_f32 : t.bits == 64 ? cg->t_f64 : NULL;
    default: return NULL;
    }
}

LLVMTypeRef weft_llvm_mem_type(weft_llvm_cg *cg, weft_dtype t)
{
    return weft_dtype_is_bool(t) ? cg->t_i8 : weft_llvm_type(cg, t);
}

int weft_llvm_lanes_of(LLVMValueRef v)
{
    LLVMTypeRef ty = LLVMTypeOf(v);
    return LLVMGetTypeKind(ty) == LLVMVectorTypeKind ? (int)LLVMGetVectorSize(ty) : 0;
}

LLVMValueRef weft_llvm_splat(weft_llvm_cg *cg, LLVMValueRef v, int lanes)
{
    LLVMTypeRef vty = LLVMVectorType(LLVMTypeOf(v), (unsigned)lanes);
    LLVMValueRef ins = LLVMBuildInsertElement(cg->b, LLVMGetPoison(vty), v, LLVMConstInt(cg->t_i32, 0, 0), "");
    LLVMValueRef mask = LLVMConstNull(LLVMVectorType(cg->t_i32, (unsigned)lanes));
    return LLVMBuildShuffleVector(cg->b, ins, LLVMGetPoison(vty), mask, "");
}

/* Scalar constant c shaped like `like` (broadcast when like is a vector). */
static LLVMValueRef shaped(weft_llvm_cg *cg, LLVMValueRef like, LLVMValueRef c)
{
    int n = weft_llvm_lanes_of(like);
    return n ? weft_llvm_splat(cg, c, n) : c;
}

/* Type ty shaped like `like`. */
static LLVMTypeRef shaped_type(LLVMValueRef like, LLVMTypeRef ty)
{
    int n = weft_llvm_lanes_of(like);
    return n ? LLVMVectorType(ty, (unsigned)n) : ty;
}

static LLVMTypeRef elem_type(LLVMValueRef v)
{
    LLVMTypeRef ty = LLVMTypeOf(v);
    return LLVMGetTypeKind(ty) == LLVMVectorTypeKind ? LLVMGetElementType(ty) : ty;
}

static bool is_fp(LLVMValueRef v)
{
    LLVMTypeKind k = LLVMGetTypeKind(elem_type(v));
    return k == LLVMFloatTypeKind || k == LLVMDoubleTypeKind;
}

/* Broadcasts whichever of *a, *b is scalar when the other is a vector. */
static void unify(weft_llvm_cg *cg, LLVMValueRef *a, LLVMValueRef *b)
{
    int la = weft_llvm_lanes_of(*a), lb = weft_llvm_lanes_of(*b);
    if (la && !lb) *b = weft_llvm_splat(cg, *b, la);
    if (lb && !la) *a = weft_llvm_splat(cg, *a, lb);
}

static LLVMValueRef fm(LLVMValueRef v)
{
    if (LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v))
        LLVMSetFastMathFlags(v, LLVMFastMathAllowReassoc | LLVMFastMathAllowContract);
    return v;
}

/* A select whose condition reads no memory (an index test: a concatenation's source, a
 * padding's border) and whose sides read memory: the sides are evaluated in branches instead
 * of both always (each side of a concatenation of four upsampled maps computed inline was
 * evaluated for every element; a NeRF encoding's sin and cos for every feature copied beside
 * them). A condition the same for every lane branches two ways; a per-lane one three: every
 * lane true, every lane false (a vector inside one source of a concatenation along the vector
 * axis), or mixed, where both sides are evaluated and selected, without further per-lane
 * branching (which would double the code at every level of a select chain). A scalar side
 * beside a vector one is broadcast in its branch. In the one-sided branches the condition
 * (or its negation) is a fact the loads use: a concatenation's clamped source index is
 * contiguous where the branch proves the clamp idle. */
enum { MAX_LANE_BRANCH_DEPTH = 6 };

/* Pushes what a branch on condition c knows onto cg's facts: c's AND terms where c holds, c
 * negated where it fails (a single comparison only: a failed conjunction says nothing of
 * each term). Returns how many were pushed. */
static int push_facts(weft_llvm_cg *cg, const weft_expr *c, bool neg)
{
    if (!neg && c->kind == WEFT_EXPR_AND) {
        int n = push_facts(cg, weft_expr_a(c), false);
        return n + push_facts(cg, weft_expr_b(c), false);
    }
    bool cmp = c->kind == WEFT_EXPR_LT || c->kind == WEFT_EXPR_LE || c->kind == WEFT_EXPR_GT || c->kind == WEFT_EXPR_GE;
    if (!cmp || cg->n_facts == WEFT_LLVM_MAX_FACTS) return 0;
    cg->facts[cg->n_facts] = c;
    cg->fact_neg[cg->n_facts++] = neg;
    return 1;
}

static weft_status branch_select(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef c, LLVMValueRef *out)
{
    LLVMBuilderRef b = cg->b;
    int lc = weft_llvm_lanes_of(c), arms = lc ? 3 : 2;
    LLVMBasicBlockRef blocks[3], ends[3], merge = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "sel.end");
    LLVMValueRef v[3], br[3];
    for (int k = 0; k < arms; k++) blocks[k] = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, k == 0 ? "sel.t" : k == 1 ? "sel.f" : "sel.mixed");
    if (!lc) LLVMBuildCondBr(b, c, blocks[0], blocks[1]);
    else {
        LLVMTypeRef cty = LLVMTypeOf(c);
        LLVMValueRef all = weft_llvm_intrinsic(cg, "llvm.vector.reduce.and", &cty, 1, &c, 1);
        LLVMValueRef any = weft_llvm_intrinsic(cg, "llvm.vector.reduce.or", &cty, 1, &c, 1);
        LLVMBasicBlockRef some = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "sel.some");
        LLVMBuildCondBr(b, all, blocks[0], some);
        LLVMPositionBuilderAtEnd(b, some);
        LLVMBuildCondBr(b, any, blocks[2], blocks[1]);
    }
    int lanes = lc;
    for (int k = 0; k < arms; k++) {
        LLVMPositionBuilderAtEnd(b, blocks[k]);
        weft_status st;
        if (k < 2) {
            int pushed = push_facts(cg, weft_expr_sel_cond(e), k == 1);
            if (lc) cg->lane_branch_depth++;
            st = weft_llvm_expr(cg, k ? weft_expr_sel_false(e) : weft_expr_sel_true(e), &v[k]);
            if (lc) cg->lane_branch_depth--;
            cg->n_facts -= pushed;
        } else {
            LLVMValueRef t, f;
            int depth = cg->lane_branch_depth;
            cg->lane_branch_depth = MAX_LANE_BRANCH_DEPTH;
            st = weft_llvm_expr(cg, weft_expr_sel_true(e), &t);
            if (st == WEFT_OK) st = weft_llvm_expr(cg, weft_expr_sel_false(e), &f);
            cg->lane_branch_depth = depth;
            if (st == WEFT_OK) {
                unify(cg, &t, &f);
                if (!weft_llvm_lanes_of(t)) t = weft_llvm_splat(cg, t, lc), f = weft_llvm_splat(cg, f, lc);
                v[k] = fm(LLVMBuildSelect(b, c, t, f, ""));
            }
        }
        if (st != WEFT_OK) return st;
        if (weft_llvm_lanes_of(v[k]) > lanes) lanes = weft_llvm_lanes_of(v[k]);
        ends[k] = LLVMGetInsertBlock(b);
        br[k] = LLVMBuildBr(b, merge);
    }
    for (int k = 0; k < arms; k++) {
        if (!lanes || weft_llvm_lanes_of(v[k])) continue;
        LLVMPositionBuilderBefore(b, br[k]);
        v[k] = weft_llvm_splat(cg, v[k], lanes);
    }
    LLVMPositionBuilderAtEnd(b, merge);
    for (int k = 1; k < arms; k++)
        if (LLVMTypeOf(v[k]) != LLVMTypeOf(v[0]))
            return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: the sides of a select have different types");
    *out = LLVMBuildPhi(b, LLVMTypeOf(v[0]), "");
    LLVMAddIncoming(*out, v, ends, (unsigned)arms);
    return WEFT_OK;
}

LLVMValueRef weft_llvm_to_mem(weft_llvm_cg *cg, weft_dtype t, LLVMValueRef v)
{
    if (!weft_dtype_is_bool(t)) return v;
    return LLVMBuildZExt(cg->b, v, shaped_type(v, cg->t_i8), "");
}

LLVMValueRef weft_llvm_from_mem(weft_llvm_cg *cg, weft_dtype t, LLVMValueRef v)
{
    if (!weft_dtype_is_bool(t)) return v;
    return LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
}

/* v != 0 as i1 (of v's shape); v unchanged when it already is i1. */
static LLVMValueRef to_bool(weft_llvm_cg *cg, LLVMValueRef v)
{
    LLVMTypeRef et = elem_type(v);
    if (et == cg->t_i1) return v;
    if (is_fp(v)) return LLVMBuildFCmp(cg->b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    return LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
}

LLVMValueRef weft_llvm_intrinsic(weft_llvm_cg *cg, const char *name, LLVMTypeRef *ovl, unsigned n_ovl,
                                 LLVMValueRef *args, unsigned n)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cg->mod, id, ovl, n_ovl);
    LLVMTypeRef fty = LLVMIntrinsicGetType(cg->ctx, id, ovl, n_ovl);
    return LLVMBuildCall2(cg->b, fty, fn, args, n, "");
}

/* An intrinsic overloaded on one type, with the fast-math flags of fm. */
static LLVMValueRef call_intrinsic(weft_llvm_cg *cg, const char *name, LLVMTypeRef ovl, LLVMValueRef *args,
                                   unsigned n)
{
    return fm(weft_llvm_intrinsic(cg, name, &ovl, 1, args, n));
}

/* A libm function of one argument (tanh, erf for float64), called once per lane for vectors. */
static LLVMValueRef call_libm(weft_llvm_cg *cg, const char *name, LLVMValueRef v)
{
    LLVMTypeRef et = elem_type(v);
    LLVMTypeRef fty = LLVMFunctionType(et, &et, 1, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
    if (!fn) fn = LLVMAddFunction(cg->mod, name, fty);
    int n = weft_llvm_lanes_of(v);
    if (!n) return fm(LLVMBuildCall2(cg->b, fty, fn, &v, 1, ""));
    LLVMValueRef r = LLVMGetPoison(LLVMTypeOf(v));
    for (int i = 0; i < n; i++) {
        LLVMValueRef lane = LLVMConstInt(cg->t_i32, (unsigned long long)i, 0);
        LLVMValueRef x = LLVMBuildExtractElement(cg->b, v, lane, "");
        LLVMValueRef y = fm(LLVMBuildCall2(cg->b, fty, fn, &x, 1, ""));
        r = LLVMBuildInsertElement(cg->b, r, y, lane, "");
    }
    return r;
}

/* Integer floordiv (mod=false) or floormod (mod=true) rounding toward -inf. A positive constant
 * divisor (bexpr) gets a shift/mask for powers of two, a single sign test otherwise. */
static LLVMValueRef int_floor(weft_llvm_cg *cg, LLVMValueRef a, LLVMValueRef b, const weft_expr *bexpr, bool mod)
{
    LLVMTypeRef ty = LLVMTypeOf(a);
    LLVMValueRef zero = LLVMConstNull(ty);
    if (bexpr->kind == WEFT_EXPR_INT && bexpr->u.imm_int > 0) {
        int64_t c = bexpr->u.imm_int;
        if ((c & (c - 1)) == 0) {
            int k = 0;
            while (((int64_t)1 << k) != c) k++;
            if (mod) return LLVMBuildAnd(cg->b, a, shaped(cg, a, LLVMConstInt(elem_type(a), (unsigned long long)(c - 1), 0)), "");
            return LLVMBuildAShr(cg->b, a, shaped(cg, a, LLVMConstInt(elem_type(a), (unsigned long long)k, 0)), "");
        }
        LLVMValueRef q = LLVMBuildSDiv(cg->b, a, b, "");
        LLVMValueRef r = LLVMBuildSRem(cg->b, a, b, "");
        LLVMValueRef neg = LLVMBuildICmp(cg->b, LLVMIntSLT, r, zero, "");
        if (mod) return LLVMBuildSelect(cg->b, neg, LLVMBuildAdd(cg->b, r, b, ""), r, "");
        return LLVMBuildAdd(cg->b, q, LLVMBuildSExt(cg->b, neg, ty, ""), "");
    }
    LLVMValueRef q = LLVMBuildSDiv(cg->b, a, b, "");
    LLVMValueRef r = LLVMBuildSRem(cg->b, a, b, "");
    LLVMValueRef nz = LLVMBuildICmp(cg->b, LLVMIntNE, r, zero, "");
    LLVMValueRef sign = LLVMBuildICmp(cg->b, LLVMIntSLT, LLVMBuildXor(cg->b, r, b, ""), zero, "");
    LLVMValueRef fix = LLVMBuildAnd(cg->b, nz, sign, "");
    if (mod) return LLVMBuildSelect(cg->b, fix, LLVMBuildAdd(cg->b, r, b, ""), r, "");
    return LLVMBuildAdd(cg->b, q, LLVMBuildSExt(cg->b, fix, ty, ""), "");
}

/* Is e = floordiv/floormod(a, c) with a constant c > 0 and a >= 0 over the bindings' known
 * ranges (fused and split loop indices)? Then it is an unsigned division: LLVM turns a
 * constant udiv/urem into a multiply-high, without the sign tests of int_floor (measured: a
 * padding stage's row loop over a fused n@c@h index ran about 45 instructions per row). */
static bool nonneg_by_const(const weft_llvm_cg *cg, const weft_expr *e)
{
    const weft_expr *c = e->u.bin.b;
    int64_t lo, hi;
    return c->kind == WEFT_EXPR_INT && c->u.imm_int > 0 && weft_llvm_int_range(cg, e->u.bin.a, &lo, &hi) && lo >= 0;
}

static LLVMValueRef float_floor(weft_llvm_cg *cg, LLVMValueRef a, LLVMValueRef b, bool mod)
{
    LLVMValueRef q = fm(LLVMBuildFDiv(cg->b, a, b, ""));
    LLVMValueRef fl = call_intrinsic(cg, "llvm.floor", LLVMTypeOf(q), &q, 1);
    if (!mod) return fl;
    return fm(LLVMBuildFSub(cg->b, a, fm(LLVMBuildFMul(cg->b, fl, b, "")), ""));
}

static weft_status emit_binary(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out)
{
    const weft_expr *unclamped =
        cg->no_clamp && (!cg->no_clamp_var || weft_expr_uses_var(e, cg->no_clamp_var)) ? weft_llvm_clamp_arg(e) : NULL;
    if (unclamped) return weft_llvm_expr(cg, unclamped, out);
    LLVMValueRef a, b;
    weft_status st = weft_llvm_expr(cg, e->u.bin.a, &a);
    if (st == WEFT_OK) st = weft_llvm_expr(cg, e->u.bin.b, &b);
    if (st != WEFT_OK) return st;
    if (elem_type(a) != elem_type(b))
        return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: operands of '%s' have different types (%s vs %s)",
                         weft_expr_kind_names[e->kind], weft_dtype_name(e->u.bin.a->dtype),
                         weft_dtype_name(e->u.bin.b->dtype));
    unify(cg, &a, &b);
    bool f = is_fp(a);
    bool u = elem_type(a) == cg->t_i1; /* bools compare and order as unsigned */
    LLVMBuilderRef bd = cg->b;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_ADD: *out = f ? fm(LLVMBuildFAdd(bd, a, b, "")) : LLVMBuildAdd(bd, a, b, ""); break;
    case WEFT_EXPR_SUB: *out = f ? fm(LLVMBuildFSub(bd, a, b, "")) : LLVMBuildSub(bd, a, b, ""); break;
    case WEFT_EXPR_MUL: *out = f ? fm(LLVMBuildFMul(bd, a, b, "")) : LLVMBuildMul(bd, a, b, ""); break;
    case WEFT_EXPR_DIV:
        *out = f ? fm(LLVMBuildFDiv(bd, a, b, "")) : u ? LLVMBuildUDiv(bd, a, b, "") : LLVMBuildSDiv(bd, a, b, "");
        if (f && LLVMIsAInstruction(*out)) /* arcp: x / c becomes x * (1/c) with 1/c hoisted out of loops */
            LLVMSetFastMathFlags(*out, LLVMFastMathAllowReassoc | LLVMFastMathAllowContract | LLVMFastMathAllowReciprocal);
        break;
    case WEFT_EXPR_FLOORDIV:
    case WEFT_EXPR_FLOORMOD: {
        bool mod = e->kind == WEFT_EXPR_FLOORMOD;
        if (f) *out = float_floor(cg, a, b, mod);
        else if (u) *out = mod ? LLVMBuildURem(bd, a, b, "") : LLVMBuildUDiv(bd, a, b, "");
        else if (nonneg_by_const(cg, e)) /* rounding toward -inf is truncation: no sign fix-up */
            *out = mod ? LLVMBuildURem(bd, a, b, "") : LLVMBuildUDiv(bd, a, b, "");
        else *out = int_floor(cg, a, b, e->u.bin.b, mod);
        break;
    }
    case WEFT_EXPR_MIN:
    case WEFT_EXPR_MAX: {
        bool mx = e->kind == WEFT_EXPR_MAX;
        if (f) {
            LLVMValueRef args[2] = {a, b};
            *out = call_intrinsic(cg, mx ? "llvm.maxnum" : "llvm.minnum", LLVMTypeOf(a), args, 2);
            LLVMSetFastMathFlags(*out, LLVMFastMathAllowReassoc | LLVMFastMathAllowContract | LLVMFastMathNoNaNs |
                                           LLVMFastMathNoSignedZeros);
        } else {
            LLVMIntPredicate p = mx ? (u ? LLVMIntUGT : LLVMIntSGT) : (u ? LLVMIntULT : LLVMIntSLT);
            *out = LLVMBuildSelect(bd, LLVMBuildICmp(bd, p, a, b, ""), a, b, "");
        }
        break;
    }
    case WEFT_EXPR_EQ:
    case WEFT_EXPR_NE:
    case WEFT_EXPR_LT:
    case WEFT_EXPR_LE:
    case WEFT_EXPR_GT:
    case WEFT_EXPR_GE: {
        static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
        static const LLVMIntPredicate sp[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
        static const LLVMIntPredicate up[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
        int i = e->kind - WEFT_EXPR_EQ;
        *out = f ? fm(LLVMBuildFCmp(bd, fp[i], a, b, "")) : LLVMBuildICmp(bd, u ? up[i] : sp[i], a, b, "");
        break;
    }
    case WEFT_EXPR_AND: *out = LLVMBuildAnd(bd, to_bool(cg, a), to_bool(cg, b), ""); break;
    case WEFT_EXPR_OR: *out = LLVMBuildOr(bd, to_bool(cg, a), to_bool(cg, b), ""); break;
    default:
        return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: '%s' is not a binary op", weft_expr_kind_names[e->kind]);
    }
    return WEFT_OK;
}

static weft_status emit_cast(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out)
{
    LLVMValueRef v;
    weft_status st = weft_llvm_expr(cg, weft_expr_operand(e), &v);
    if (st != WEFT_OK) return st;
    weft_dtype src = weft_expr_operand(e)->dtype, dst = e->dtype;
    LLVMTypeRef dt = weft_llvm_type(cg, dst);
    if (!dt) return weft_fail(WEFT_ERR_UNSUPPORTED, "llvm: cast to %s", weft_dtype_name(dst));
    LLVMTypeRef dty = shaped_type(v, dt);
    LLVMBuilderRef b = cg->b;
    if (weft_dtype_is_bool(dst)) *out = to_bool(cg, v);
    else if (weft_dtype_is_bool(src)) *out = weft_dtype_is_float(dst) ? LLVMBuildUIToFP(b, v, dty, "") : LLVMBuildZExt(b, v, dty, "");
    else if (weft_dtype_is_int(src) && weft_dtype_is_float(dst)) *out = LLVMBuildSIToFP(b, v, dty, "");
    else if (weft_dtype_is_float(src) && weft_dtype_is_int(dst)) *out = LLVMBuildFPToSI(b, v, dty, "");
    else if (weft_dtype_is_int(src)) *out = LLVMBuildIntCast2(b, v, dty, 1, "");
    else *out = LLVMBuildFPCast(b, v, dty, "");
    return WEFT_OK;
}

/* Constant c shaped like v (scalar or vector float). */
static LLVMValueRef fconst(weft_llvm_cg *cg, LLVMValueRef v, double c)
{
    return shaped(cg, v, LLVMConstReal(elem_type(v), c));
}

/* Only contraction (a*b+c as one FMA, rounded once): what the polynomial kernels below allow.
 * Reassociation would change their error analysis; contraction only removes roundings. */
static LLVMValueRef fc(LLVMValueRef v)
{
    if (LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v)) LLVMSetFastMathFlags(v, LLVMFastMathAllowContract);
    return v;
}

static LLVMValueRef fmuladd(weft_llvm_cg *cg, LLVMValueRef a, LLVMValueRef m, LLVMValueRef c)
{
    return fc(LLVMBuildFAdd(cg->b, fc(LLVMBuildFMul(cg->b, a, m, "")), c, ""));
}

/* A division whose divisor is finite and nonzero by construction (a clamped exp plus one, a
 * polynomial without roots on its clamped range): marked arcp+ninf+contract, which lets the x86
 * backend use a reciprocal estimate refined by one Newton step (two FMAs, about 1 ulp) for
 * vectors instead of a divide (vdivps: 5-10 cycles a vector on Zen and Intel cores). */
static LLVMValueRef safe_div(weft_llvm_cg *cg, LLVMValueRef a, LLVMValueRef d)
{
    LLVMValueRef q = LLVMBuildFDiv(cg->b, a, d, "");
    if (LLVMIsAInstruction(q) && LLVMCanValueUseFastMathFlags(q))
        LLVMSetFastMathFlags(q, LLVMFastMathAllowReciprocal | LLVMFastMathNoInfs | LLVMFastMathAllowContract);
    return q;
}

/* min(max(x, lo), hi) that keeps a NaN x (llvm.maxnum would return lo for it): as compares and
 * selects, which x86 lowers to one vmaxps/vminps each with the operand order that passes x's
 * NaN through. */
static LLVMValueRef clamp_keep_nan(weft_llvm_cg *cg, LLVMValueRef x, double lo, double hi)
{
    LLVMBuilderRef b = cg->b;
    LLVMValueRef l = fconst(cg, x, lo), h = fconst(cg, x, hi);
    LLVMValueRef c = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, x, l, ""), l, x, "");
    return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, c, h, ""), h, c, "");
}

/* Lanes 0..to-1 of v (a vector of `from` lanes); lanes past `from` are poison. */
static LLVMValueRef resize_lanes(weft_llvm_cg *cg, LLVMValueRef v, int from, int to)
{
    LLVMValueRef idx[16];
    for (int i = 0; i < to; i++)
        idx[i] = i < from ? LLVMConstInt(cg->t_i32, (unsigned long long)i, 0) : LLVMGetPoison(cg->t_i32);
    return LLVMBuildShuffleVector(cg->b, v, LLVMGetPoison(LLVMTypeOf(v)), LLVMConstVector(idx, (unsigned)to), "");
}

/* y * 2^n for float32 vectors of at most 16 lanes under AVX-512 (n integral, |n| <= 127): one
 * vscalefps instead of building 2^n in the exponent bits (a shift, an add and a multiply).
 * NULL where the target or the shape does not allow it. Up to 8 lanes use the 256-bit form
 * (AVX512VL), so a target that keeps to ymm registers gets no zmm instruction from here. */
static LLVMValueRef scale_by_pow2(weft_llvm_cg *cg, LLVMValueRef y, LLVMValueRef n)
{
    int lanes = weft_llvm_lanes_of(y);
    if (!cg->avx512f || lanes < 2 || lanes > 16) return NULL;
    bool narrow = lanes <= 8 && cg->avx512vl;
    int w = narrow ? 8 : 16;
    LLVMValueRef yw = lanes == w ? y : resize_lanes(cg, y, lanes, w);
    LLVMValueRef nw = lanes == w ? n : resize_lanes(cg, n, lanes, w);
    LLVMValueRef args[5] = {yw, nw, LLVMGetPoison(LLVMTypeOf(yw)), LLVMConstInt(narrow ? cg->t_i8 : LLVMInt16TypeInContext(cg->ctx), ~0ull, 0),
                            LLVMConstInt(cg->t_i32, 4, 0) /* the current rounding mode */};
    LLVMValueRef r = narrow ? weft_llvm_intrinsic(cg, "llvm.x86.avx512.mask.scalef.ps.256", NULL, 0, args, 4)
                            : weft_llvm_intrinsic(cg, "llvm.x86.avx512.mask.scalef.ps.512", NULL, 0, args, 5);
    return lanes == w ? r : resize_lanes(cg, r, w, lanes);
}

/* exp for float32 that vectorizes (LLVM's llvm.exp becomes one libm call per lane): Cody-Waite
 * range reduction x = n ln2 + r, a degree-6 polynomial for e^r, and 2^n built in the
 * exponent bits (vscalefps under AVX-512). Relative error about 2 ulp on [-87.3, 88]; inputs
 * are clamped to that range (exp(-inf) gives ~1e-38, not 0) and NaN stays NaN (the clamp
 * passes it through and every step after keeps it). n is rounded to nearest by adding and
 * subtracting 1.5 * 2^23 (the sum's low mantissa bits are n itself, so 2^n is that sum's bits
 * shifted into the exponent: no floor, no float->int conversion). Only contraction is allowed
 * on these operations (FMAs); reassociating would lose the reduction's precision. */
static LLVMValueRef fast_exp_f32(weft_llvm_cg *cg, LLVMValueRef x, bool negate)
{
    LLVMBuilderRef b = cg->b;
    /* negate: e^-x, the sign folded into the constants and the reduction's FMA (an FMSUB)
     * rather than a negation of x first */
    double sg = negate ? -1.0 : 1.0;
    LLVMValueRef c = negate ? clamp_keep_nan(cg, x, -88.0, 87.3) : clamp_keep_nan(cg, x, -87.3, 88.0);
    LLVMValueRef magic = fconst(cg, x, 12582912.0); /* 1.5 * 2^23 */
    LLVMValueRef t = fmuladd(cg, c, fconst(cg, x, sg * 1.44269504088896341), magic);
    LLVMValueRef n = LLVMBuildFSub(b, t, magic, "");
    LLVMValueRef r = fmuladd(cg, n, fconst(cg, x, -0.693359375), negate ? fm(LLVMBuildFNeg(b, c, "")) : c);
    r = fmuladd(cg, n, fconst(cg, x, 2.12194440e-4), r);
    /* e^r = 1 + r + r^2 p(r), p of degree 4 fitted for relative error on [-ln2/2, ln2/2]
     * (Lawson-weighted least squares): 6.7e-8 at most evaluated in float32, as Cephes'
     * degree-5 p (6.5e-8; float rounding dominates both), one FMA fewer. */
    static const double coef[] = {1.381461298000504e-3, 8.368709842580757e-3, 4.1668387367064935e-2,
                                  1.6666520689634523e-1, 4.9999993451679686e-1};
    LLVMValueRef p = fconst(cg, x, coef[0]);
    for (int i = 1; i < 5; i++) p = fmuladd(cg, p, r, fconst(cg, x, coef[i]));
    LLVMValueRef r2 = LLVMBuildFMul(b, r, r, "");
    LLVMValueRef y = LLVMBuildFAdd(b, fmuladd(cg, p, r2, r), fconst(cg, x, 1.0), "");
    LLVMValueRef scaled = scale_by_pow2(cg, y, n);
    if (scaled) return scaled;
    int lanes = weft_llvm_lanes_of(x);
    LLVMTypeRef ity = lanes ? LLVMVectorType(cg->t_i32, (unsigned)lanes) : cg->t_i32;
    LLVMValueRef bits = LLVMBuildShl(b, LLVMBuildBitCast(b, t, ity, ""), shaped(cg, x, LLVMConstInt(cg->t_i32, 23, 0)), "");
    bits = LLVMBuildAdd(b, bits, shaped(cg, x, LLVMConstInt(cg->t_i32, 127u << 23, 0)), "");
    return LLVMBuildFMul(b, y, LLVMBuildBitCast(b, bits, LLVMTypeOf(x), ""), "");
}

/* tanh for float32 that vectorizes: the rational approximation of Eigen and XLA, x p(x^2) /
 * q(x^2) with p of degree 6 and q of degree 3 in x^2, on x clamped to +-7.90531110763549805
 * (where it reaches 1 in float32); below |x| = 0.0004 tanh(x) is x (which also keeps
 * denormal inputs, whose square underflows). Relative error about 3.1e-7 (5 ulp) with the
 * reciprocal estimate of safe_div, against the 47 instructions a vector of the previous form
 * took (an odd polynomial below 0.625, else 1 - 2 / (e^{2|x|} + 1): both arms and a whole
 * exp evaluated): about 20. NaN stays NaN (the clamp passes it through). */
static LLVMValueRef fast_tanh_f32(weft_llvm_cg *cg, LLVMValueRef x)
{
    LLVMBuilderRef b = cg->b;
    LLVMTypeRef ty = LLVMTypeOf(x);
    LLVMValueRef c = clamp_keep_nan(cg, x, -7.90531110763549805, 7.90531110763549805);
    LLVMValueRef z = LLVMBuildFMul(b, c, c, "");
    static const double alpha[] = {-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                                   5.12229709037114e-08,  1.48572235717979e-05, 6.37261928875436e-04,
                                   4.89352455891786e-03};
    static const double beta[] = {1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
                                  4.89352518554385e-03};
    LLVMValueRef p = fconst(cg, x, alpha[0]);
    for (int i = 1; i < 7; i++) p = fmuladd(cg, p, z, fconst(cg, x, alpha[i]));
    p = LLVMBuildFMul(b, p, c, "");
    LLVMValueRef q = fconst(cg, x, beta[0]);
    for (int i = 1; i < 4; i++) q = fmuladd(cg, q, z, fconst(cg, x, beta[i]));
    LLVMValueRef res = safe_div(cg, p, q);
    LLVMValueRef ax = call_intrinsic(cg, "llvm.fabs", ty, &x, 1);
    LLVMValueRef keep = LLVMBuildFCmp(b, LLVMRealOLT, ax, fconst(cg, x, 0.0004), "");
    return LLVMBuildSelect(b, keep, x, res, "");
}

/* erf for float32 that vectorizes (erff was one libm call per lane, which made a GELU epilogue
 * slower than the matmul it is fused with): x clamped to [-4, 4] (erf is +-1 in float32
 * beyond), then the odd/even rational approximation p(x) / q(x^2) of Eigen and XLA
 * (degree 13 over degree 8), absolute error about 1e-7; NaN stays NaN. */
static LLVMValueRef fast_erf_f32(weft_llvm_cg *cg, LLVMValueRef x)
{
    LLVMBuilderRef b = cg->b;
    LLVMValueRef c = clamp_keep_nan(cg, x, -4.0, 4.0);
    LLVMValueRef z = LLVMBuildFMul(b, c, c, "");
    static const double alpha[] = {-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                                   -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                                   -1.60960333262415e-02};
    static const double beta[] = {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                                  -7.37332916720468e-03, -1.42647390514189e-02};
    LLVMValueRef p = fconst(cg, x, alpha[0]);
    for (int i = 1; i < 7; i++) p = fmuladd(cg, p, z, fconst(cg, x, alpha[i]));
    p = LLVMBuildFMul(b, p, c, "");
    LLVMValueRef q = fconst(cg, x, beta[0]);
    for (int i = 1; i < 5; i++) q = fmuladd(cg, q, z, fconst(cg, x, beta[i]));
    return safe_div(cg, p, q); /* NaN: the clamp passed it through, and every step keeps it */
}

/* sin or cos for float32 that vectorizes (llvm.sin and llvm.cos became one libm call per lane:
 * a NeRF positional encoding of 2048 x 60 values took 1.2 ms). x = n pi/2 + r, n rounded to
 * nearest by the 1.5 * 2^23 trick as in fast_exp_f32 (the sum's low bits give n mod 4, the
 * quadrant), r by a three-part Cody-Waite reduction (the first part has 8 significant bits, so
 * n * C1 is exact for |n| < 2^16), then Cephes' minimax polynomials for sin and cos on
 * [-pi/4, pi/4] (about 1 ulp); the quadrant picks the polynomial and the sign. Lanes with
 * |x| > 8192, where the reduction's error would grow, and infinities take libm's value, in a
 * branch taken only when some lane needs it; NaN stays NaN. */
static LLVMValueRef fast_sincos_f32(weft_llvm_cg *cg, LLVMValueRef x, bool cosine)
{
    LLVMBuilderRef b = cg->b;
    int lanes = weft_llvm_lanes_of(x);
    LLVMTypeRef ity = lanes ? LLVMVectorType(cg->t_i32, (unsigned)lanes) : cg->t_i32;
    LLVMValueRef magic = fconst(cg, x, 12582912.0); /* 1.5 * 2^23 */
    LLVMValueRef t = fmuladd(cg, x, fconst(cg, x, 0.63661977236758134), magic);
    LLVMValueRef n = LLVMBuildFSub(b, t, magic, "");
    LLVMValueRef r = fmuladd(cg, n, fconst(cg, x, -1.5703125), x);
    r = fmuladd(cg, n, fconst(cg, x, -4.837512969970703125e-4), r);
    r = fmuladd(cg, n, fconst(cg, x, -7.54978995489188216e-8), r);
    LLVMValueRef z = LLVMBuildFMul(b, r, r, "");
    LLVMValueRef ps = fmuladd(cg, fconst(cg, x, -1.9515295891e-4), z, fconst(cg, x, 8.3321608736e-3));
    ps = fmuladd(cg, ps, z, fconst(cg, x, -1.6666654611e-1));
    LLVMValueRef sv = fmuladd(cg, LLVMBuildFMul(b, ps, z, ""), r, r); /* r + r^3 p(r^2) */
    LLVMValueRef pc = fmuladd(cg, fconst(cg, x, 2.443315711809948e-5), z, fconst(cg, x, -1.388731625493765e-3));
    pc = fmuladd(cg, pc, z, fconst(cg, x, 4.166664568298827e-2));
    LLVMValueRef cv = fmuladd(cg, pc, LLVMBuildFMul(b, z, z, ""), fmuladd(cg, z, fconst(cg, x, -0.5), fconst(cg, x, 1.0)));
    LLVMValueRef q = LLVMBuildBitCast(b, t, ity, "");
    if (cosine) q = LLVMBuildAdd(b, q, shaped(cg, x, LLVMConstInt(cg->t_i32, 1, 0)), ""); /* cos x = sin(x + pi/2) */
    LLVMValueRef odd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, q, shaped(cg, x, LLVMConstInt(cg->t_i32, 1, 0)), ""),
                                     LLVMConstNull(ity), "");
    LLVMValueRef v = LLVMBuildSelect(b, odd, cv, sv, "");
    LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildAnd(b, q, shaped(cg, x, LLVMConstInt(cg->t_i32, 2, 0)), ""),
                                     shaped(cg, x, LLVMConstInt(cg->t_i32, 30, 0)), "");
    v = LLVMBuildBitCast(b, LLVMBuildXor(b, LLVMBuildBitCast(b, v, ity, ""), sign, ""), LLVMTypeOf(x), "");
    /* large arguments and infinities: libm, where some lane needs it */
    LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGT, call_intrinsic(cg, "llvm.fabs", LLVMTypeOf(x), &x, 1), fconst(cg, x, 8192.0), "");
    LLVMValueRef any = lanes ? weft_llvm_intrinsic(cg, "llvm.vector.reduce.or", (LLVMTypeRef[]){LLVMTypeOf(big)}, 1, &big, 1) : big;
    LLVMBasicBlockRef here = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "sincos.libm");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "sincos.done");
    LLVMBuildCondBr(b, any, slow, done);
    LLVMPositionBuilderAtEnd(b, slow);
    LLVMValueRef lib = call_intrinsic(cg, cosine ? "llvm.cos" : "llvm.sin", LLVMTypeOf(x), &x, 1);
    LLVMValueRef fixed = LLVMBuildSelect(b, big, lib, v, "");
    LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(b);
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, done);
    LLVMValueRef out = LLVMBuildPhi(b, LLVMTypeOf(x), "");
    LLVMAddIncoming(out, (LLVMValueRef[]){v, fixed}, (LLVMBasicBlockRef[]){here, slow_end}, 2);
    return out;
}

static weft_status emit_call(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out)
{
    weft_intrin fn = weft_expr_call_fn(e);
    int n = weft_expr_call_n(e);
    if ((unsigned)fn >= WEFT_INTRIN_COUNT || n != weft_intrin_arity(fn))
        return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: bad intrinsic call (fn=%d, %d args)", (int)fn, n);
    LLVMValueRef x[2];
    for (int i = 0; i < n; i++) {
        weft_status st = weft_llvm_expr(cg, weft_expr_call_arg(e, i), &x[i]);
        if (st != WEFT_OK) return st;
    }
    if (n == 2) unify(cg, &x[0], &x[1]);
    if (!is_fp(x[0]))
        return weft_fail(WEFT_ERR_UNSUPPORTED, "llvm: %s of %s (float operands only)", weft_intrin_names[fn],
                         weft_dtype_name(weft_expr_call_arg(e, 0)->dtype));
    LLVMTypeRef ty = LLVMTypeOf(x[0]);
    bool f32 = elem_type(x[0]) == cg->t_f32;
    LLVMValueRef one = shaped(cg, x[0], LLVMConstReal(elem_type(x[0]), 1.0));
    switch (fn) {
    case WEFT_INTRIN_EXP: *out = f32 ? fast_exp_f32(cg, x[0], false) : call_intrinsic(cg, "llvm.exp", ty, x, 1); break;
    case WEFT_INTRIN_LOG: *out = call_intrinsic(cg, "llvm.log", ty, x, 1); break;
    case WEFT_INTRIN_SQRT: *out = call_intrinsic(cg, "llvm.sqrt", ty, x, 1); break;
    case WEFT_INTRIN_FABS: *out = call_intrinsic(cg, "llvm.fabs", ty, x, 1); break;
    case WEFT_INTRIN_FLOOR: *out = call_intrinsic(cg, "llvm.floor", ty, x, 1); break;
    case WEFT_INTRIN_CEIL: *out = call_intrinsic(cg, "llvm.ceil", ty, x, 1); break;
    case WEFT_INTRIN_ROUND: *out = call_intrinsic(cg, "llvm.roundeven", ty, x, 1); break;
    case WEFT_INTRIN_SIN: *out = f32 ? fast_sincos_f32(cg, x[0], false) : call_intrinsic(cg, "llvm.sin", ty, x, 1); break;
    case WEFT_INTRIN_COS: *out = f32 ? fast_sincos_f32(cg, x[0], true) : call_intrinsic(cg, "llvm.cos", ty, x, 1); break;
    case WEFT_INTRIN_POW: *out = call_intrinsic(cg, "llvm.pow", ty, x, 2); break;
    case WEFT_INTRIN_RSQRT:
        *out = fm(LLVMBuildFDiv(cg->b, one, call_intrinsic(cg, "llvm.sqrt", ty, x, 1), ""));
        break;
    case WEFT_INTRIN_SIGMOID: {
        if (f32) {
            *out = safe_div(cg, one, LLVMBuildFAdd(cg->b, one, fast_exp_f32(cg, x[0], true), ""));
            break;
        }
        LLVMValueRef nx = fm(LLVMBuildFNeg(cg->b, x[0], ""));
        LLVMValueRef ex = call_intrinsic(cg, "llvm.exp", ty, &nx, 1);
        *out = fm(LLVMBuildFDiv(cg->b, one, fm(LLVMBuildFAdd(cg->b, one, ex, "")), ""));
        break;
    }
    case WEFT_INTRIN_TANH: *out = f32 ? fast_tanh_f32(cg, x[0]) : call_libm(cg, "tanh", x[0]); break;
    case WEFT_INTRIN_ERF: *out = f32 ? fast_erf_f32(cg, x[0]) : call_libm(cg, "erf", x[0]); break;
    default: return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: unknown intrinsic %d", (int)fn);
    }
    return WEFT_OK;
}

static weft_status lookup_var(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out)
{
    for (int i = cg->n_vars - 1; i >= 0; i--)
        if (cg->vars[i].var == e) {
            *out = cg->vars[i].v;
            return WEFT_OK;
        }
    return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: variable %s is used outside the loop that binds it",
                     weft_expr_var_name(e));
}

const weft_llvm_local *weft_llvm_local_of(const weft_llvm_cg *cg, const weft_buffer *buf)
{
    for (int i = cg->n_locals - 1; i >= 0; i--)
        if (cg->locals[i].buf == buf) return &cg->locals[i];
    return NULL;
}

weft_status weft_llvm_buffer_ptr(weft_llvm_cg *cg, const weft_buffer *buf, LLVMValueRef *out)
{
    if (buf->param_index >= 0) {
        if (buf->param_index >= cg->f->n_params)
            return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: buffer %s has param_index %d of %d params", buf->name,
                             buf->param_index, cg->f->n_params);
        *out = cg->params[buf->param_index];
        return WEFT_OK;
    }
    const weft_llvm_local *l = weft_llvm_local_of(cg, buf);
    if (l) {
        *out = l->ptr;
        return WEFT_OK;
    }
    return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: buffer %s is used outside its ALLOCATE", buf->name);
}

static weft_status emit_load(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out)
{
    if (cg->vvar) return weft_llvm_vector_load(cg, e, out);
    const weft_buffer *buf = weft_expr_load_buf(e);
    LLVMTypeRef mty = weft_llvm_mem_type(cg, buf->dtype);
    if (!mty) return weft_fail(WEFT_ERR_UNSUPPORTED, "llvm: buffer %s has unsupported dtype", buf->name);
    LLVMValueRef base, idx;
    weft_status st = weft_llvm_buffer_ptr(cg, buf, &base);
    if (st == WEFT_OK) st = weft_llvm_index(cg, weft_expr_load_index(e), &idx);
    if (st != WEFT_OK) return st;
    LLVMValueRef ld = LLVMBuildLoad2(cg->b, mty, LLVMBuildInBoundsGEP2(cg->b, mty, base, &idx, 1, ""), "");
    LLVMSetAlignment(ld, (unsigned)weft_dtype_bytes(buf->dtype));
    *out = weft_llvm_from_mem(cg, buf->dtype, ld);
    return WEFT_OK;
}

weft_status weft_llvm_index(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out)
{
    LLVMValueRef v;
    weft_status st = weft_llvm_expr(cg, e, &v);
    if (st != WEFT_OK) return st;
    if (weft_llvm_lanes_of(v) || LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind)
        return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: index or bound of type %s is not a scalar integer",
                         weft_dtype_name(e->dtype));
    if (LLVMTypeOf(v) == cg->t_i1) v = LLVMBuildZExt(cg->b, v, cg->t_i64, "");
    else if (LLVMTypeOf(v) != cg->t_i64) v = LLVMBuildSExt(cg->b, v, cg->t_i64, "");
    *out = v;
    return WEFT_OK;
}

weft_status weft_llvm_expr(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out)
{
    if (!e) return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: NULL expression");
    if (e->kind == WEFT_EXPR_TLOAD)
        return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: tensor read of '%s' reached the target (TLOAD must be lowered)",
                         weft_expr_tload_tensor(e)->name);
    LLVMTypeRef ty = weft_llvm_type(cg, e->dtype);
    if (!ty) return weft_fail(WEFT_ERR_UNSUPPORTED, "llvm: %s expression of dtype %s", weft_expr_kind_names[e->kind],
                              weft_dtype_name(e->dtype));
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT:
        *out = weft_dtype_is_float(e->dtype) ? LLVMConstReal(ty, (double)e->u.imm_int)
                                             : LLVMConstInt(ty, (unsigned long long)e->u.imm_int, 1);
        return WEFT_OK;
    case WEFT_EXPR_FLOAT:
        *out = weft_dtype_is_float(e->dtype) ? LLVMConstReal(ty, e->u.imm_float)
                                             : LLVMConstInt(ty, (unsigned long long)(int64_t)e->u.imm_float, 1);
        return WEFT_OK;
    case WEFT_EXPR_VAR: return lookup_var(cg, e, out);
    case WEFT_EXPR_NOT: {
        LLVMValueRef v;
        weft_status st = weft_llvm_expr(cg, weft_expr_operand(e), &v);
        if (st != WEFT_OK) return st;
        v = to_bool(cg, v);
        *out = LLVMBuildXor(cg->b, v, LLVMConstAllOnes(LLVMTypeOf(v)), "");
        return WEFT_OK;
    }
    case WEFT_EXPR_SELECT: {
        LLVMValueRef c, t, f;
        bool done = false;
        weft_status st = cg->vvar ? weft_llvm_vector_select_load(cg, e, out, &done) : WEFT_OK;
        if (st != WEFT_OK || done) return st;
        st = weft_llvm_expr(cg, weft_expr_sel_cond(e), &c);
        if (st == WEFT_OK && !weft_expr_has_load(weft_expr_sel_cond(e)) &&
            (!weft_llvm_lanes_of(c) || cg->lane_branch_depth < MAX_LANE_BRANCH_DEPTH) &&
            (weft_expr_has_load(weft_expr_sel_true(e)) || weft_expr_has_load(weft_expr_sel_false(e))))
            return branch_select(cg, e, to_bool(cg, c), out);
        if (st == WEFT_OK) st = weft_llvm_expr(cg, weft_expr_sel_true(e), &t);
        if (st == WEFT_OK) st = weft_llvm_expr(cg, weft_expr_sel_false(e), &f);
        if (st != WEFT_OK) return st;
        c = to_bool(cg, c);
        unify(cg, &t, &f);
        int lc = weft_llvm_lanes_of(c);
        if (lc && !weft_llvm_lanes_of(t)) {
            t = weft_llvm_splat(cg, t, lc);
            f = weft_llvm_splat(cg, f, lc);
        }
        *out = fm(LLVMBuildSelect(cg->b, c, t, f, ""));
        return WEFT_OK;
    }
    case WEFT_EXPR_CAST: return emit_cast(cg, e, out);
    case WEFT_EXPR_CALL: return emit_call(cg, e, out);
    case WEFT_EXPR_LOAD: return emit_load(cg, e, out);
    default:
        if (weft_expr_is_binary(e)) return emit_binary(cg, e, out);
        return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: unknown expression kind %d", (int)e->kind);
    }
}
