/* Loop IR statements -> LLVM IR through the LLVM C API.
 *
 * Requires: a weft_loop_func whose variables are bound by exactly one FOR each, flat indices,
 * no TLOAD (tensor expressions never reach targets; one that does is WEFT_ERR_INTERNAL).
 * Ensures: one external function `void sym(ptr args, ptr pool)` plus one internal function per
 * outermost PARALLEL loop; the module verifies (LLVMVerifyModule) or codegen fails with
 * WEFT_ERR_COMPILE and LLVM's message.
 *
 * Loops: SERIAL is a phi loop; UNROLLED with a constant extent is emitted extent times with the
 * variable bound to the constant (what turns register tiles into registers after SROA);
 * VECTORIZED goes to vector.c; the outermost PARALLEL loop is outlined into
 * `void body(ptr closure, i64 begin, i64 end)` and run by weft_rt_parallel_for; PARALLEL loops
 * inside an outlined body are serial. Every alloca sits in the entry block of its function, so
 * small ALLOCATEs are per-thread inside parallel bodies and SROA can promote them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>

#include "targets/llvm/llvm_internal.h"
#include "runtime/mem.h"

enum {
    MAX_UNROLL = 1024,             /* UNROLLED loops longer than this are emitted as loops */
    MAX_STACK_BYTES = 64 * 1024,   /* bigger ALLOCATEs go to weft_rt_alloc_uninit */
};

weft_status weft_llvm_bind(weft_llvm_cg *cg, const weft_expr *var, LLVMValueRef v)
{
    if (cg->n_vars == cg->cap_vars) {
        int cap = cg->cap_vars ? cg->cap_vars * 2 : 32;
        weft_llvm_binding *nv = weft_realloc(cg->vars, sizeof *nv * (size_t)cap);
        if (!nv) return weft_fail(WEFT_ERR_NOMEM, "llvm codegen: variable bindings");
        cg->vars = nv;
        cg->cap_vars = cap;
    }
    cg->vars[cg->n_vars++] = (weft_llvm_binding){var, v, 1, 0, 1};
    return WEFT_OK;
}

void weft_llvm_bound_last(weft_llvm_cg *cg, int64_t lo, int64_t hi)
{
    if (cg->n_vars > 0 && lo <= hi) {
        cg->vars[cg->n_vars - 1].lo = lo;
        cg->vars[cg->n_vars - 1].hi = hi;
    }
}

/* [min, min + extent - 1] of a loop whose bounds are constants; lo > hi otherwise. */
static void loop_bounds(const weft_stmt *s, int64_t *lo, int64_t *hi)
{
    const weft_expr *m = s->u.loop.min, *e = s->u.loop.extent;
    *lo = 1;
    *hi = 0;
    if (m->kind == WEFT_EXPR_INT && e->kind == WEFT_EXPR_INT && e->u.imm_int > 0) {
        *lo = m->u.imm_int;
        *hi = m->u.imm_int + e->u.imm_int - 1;
    }
}

static weft_status push_local(weft_llvm_cg *cg, const weft_buffer *buf, LLVMValueRef ptr, int64_t slack, int vars_at)
{
    if (cg->n_locals == cg->cap_locals) {
        int cap = cg->cap_locals ? cg->cap_locals * 2 : 16;
        weft_llvm_local *nl = weft_realloc(cg->locals, sizeof *nl * (size_t)cap);
        if (!nl) return weft_fail(WEFT_ERR_NOMEM, "llvm codegen: local buffers");
        cg->locals = nl;
        cg->cap_locals = cap;
    }
    cg->locals[cg->n_locals++] = (weft_llvm_local){buf, ptr, slack, vars_at};
    return WEFT_OK;
}

LLVMValueRef weft_llvm_entry_alloca(weft_llvm_cg *cg, LLVMTypeRef ty, unsigned align)
{
    LLVMBasicBlockRef here = LLVMGetInsertBlock(cg->b);
    LLVMPositionBuilderAtEnd(cg->b, cg->entry);
    LLVMValueRef a = LLVMBuildAlloca(cg->b, ty, "");
    LLVMSetAlignment(a, align);
    LLVMPositionBuilderAtEnd(cg->b, here);
    return a;
}

static LLVMValueRef get_function(weft_llvm_cg *cg, const char *name, LLVMTypeRef fnty)
{
    LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
    return fn ? fn : LLVMAddFunction(cg->mod, name, fnty);
}

static void add_fn_attr(weft_llvm_cg *cg, LLVMValueRef fn, const char *name)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->ctx, kind, 0));
}

/* Makes fn current: an "entry" block for allocas and loads of arguments, and a "body" block
 * where statements go. finish_function links the two and returns. */
static LLVMBasicBlockRef begin_function(weft_llvm_cg *cg, LLVMValueRef fn)
{
    cg->fn = fn;
    cg->entry = LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(cg->ctx, fn, "body");
    LLVMPositionBuilderAtEnd(cg->b, cg->entry);
    return body;
}

static void finish_function(weft_llvm_cg *cg, LLVMBasicBlockRef body)
{
    LLVMBuildRetVoid(cg->b);
    LLVMPositionBuilderAtEnd(cg->b, cg->entry);
    LLVMBuildBr(cg->b, body);
}

/* An i64 value of a scalar integer expression (loop bounds). */
static weft_status emit_i64(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out)
{
    return weft_llvm_index(cg, e, out);
}

/* Binds var to counter (i64), narrowed to var's type when it is not int64. */
static weft_status bind_counter(weft_llvm_cg *cg, const weft_expr *var, LLVMValueRef counter)
{
    LLVMTypeRef ty = weft_llvm_type(cg, var->dtype);
    if (!ty || LLVMGetTypeKind(ty) != LLVMIntegerTypeKind)
        return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: loop variable %s is not an integer", weft_expr_var_name(var));
    if (ty != cg->t_i64) counter = LLVMBuildTrunc(cg->b, counter, ty, "");
    return weft_llvm_bind(cg, var, counter);
}

/* for (var = start; var < stop; var++) body, as a phi loop. */
static weft_status emit_range(weft_llvm_cg *cg, const weft_stmt *loop, LLVMValueRef start, LLVMValueRef stop)
{
    const weft_expr *var = loop->u.loop.var;
    const weft_stmt *body = loop->u.loop.body;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef header = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "loop");
    LLVMBasicBlockRef inner = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "loop.body");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "loop.exit");
    LLVMBuildBr(cg->b, header);
    LLVMPositionBuilderAtEnd(cg->b, header);
    LLVMValueRef i = LLVMBuildPhi(cg->b, cg->t_i64, weft_expr_var_name(var));
    LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, i, stop, ""), inner, exit);
    LLVMPositionBuilderAtEnd(cg->b, inner);
    int depth = cg->n_vars;
    weft_status st = bind_counter(cg, var, i);
    int64_t lo, hi;
    loop_bounds(loop, &lo, &hi);
    if (st == WEFT_OK) weft_llvm_bound_last(cg, lo, hi);
    if (st == WEFT_OK) st = weft_llvm_stmt(cg, body);
    cg->n_vars = depth;
    if (st != WEFT_OK) return st;
    LLVMValueRef next = LLVMBuildNSWAdd(cg->b, i, LLVMConstInt(cg->t_i64, 1, 0), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(cg->b);
    LLVMBuildBr(cg->b, header);
    LLVMValueRef in_v[2] = {start, next};
    LLVMBasicBlockRef in_b[2] = {pre, latch};
    LLVMAddIncoming(i, in_v, in_b, 2);
    LLVMPositionBuilderAtEnd(cg->b, exit);
    return WEFT_OK;
}

static weft_status emit_serial(weft_llvm_cg *cg, const weft_stmt *s)
{
    LLVMValueRef min, ext;
    weft_status st = emit_i64(cg, s->u.loop.min, &min);
    if (st == WEFT_OK) st = emit_i64(cg, s->u.loop.extent, &ext);
    if (st != WEFT_OK) return st;
    return emit_range(cg, s, min, LLVMBuildAdd(cg->b, min, ext, ""));
}

static weft_status emit_unrolled(weft_llvm_cg *cg, const weft_stmt *s)
{
    int64_t n = weft_expr_int(s->u.loop.extent);
    LLVMValueRef min;
    weft_status st = emit_i64(cg, s->u.loop.min, &min);
    for (int64_t i = 0; st == WEFT_OK && i < n; i++) {
        int depth = cg->n_vars;
        LLVMValueRef v = LLVMBuildAdd(cg->b, min, LLVMConstInt(cg->t_i64, (unsigned long long)i, 1), "");
        st = bind_counter(cg, s->u.loop.var, v);
        if (st == WEFT_OK && s->u.loop.min->kind == WEFT_EXPR_INT) weft_llvm_bound_last(cg, s->u.loop.min->u.imm_int + i, s->u.loop.min->u.imm_int + i);
        if (st == WEFT_OK) cg->vars[cg->n_vars - 1].copies = n;
        if (st == WEFT_OK) st = weft_llvm_stmt(cg, s->u.loop.body);
        cg->n_vars = depth;
    }
    return st;
}

/* Outlines the outermost PARALLEL loop s. The closure (a stack struct in the caller) carries
 * the pool, every parameter pointer, every local buffer and variable in scope, and `min`. */
static weft_status emit_parallel(weft_llvm_cg *cg, const weft_stmt *s)
{
    LLVMValueRef min, ext;
    weft_status st = emit_i64(cg, s->u.loop.min, &min);
    if (st == WEFT_OK) st = emit_i64(cg, s->u.loop.extent, &ext);
    if (st != WEFT_OK) return st;

    int n_params = cg->f->n_params, n_locals = cg->n_locals, n_vars = cg->n_vars;
    int n = 2 + n_params + n_locals + n_vars;
    LLVMTypeRef *tys = weft_malloc(sizeof *tys * (size_t)n);
    LLVMValueRef *vals = weft_malloc(sizeof *vals * (size_t)n);
    LLVMValueRef *inner_params = weft_malloc(sizeof *inner_params * (size_t)(n_params ? n_params : 1));
    if (!tys || !vals || !inner_params) {
        st = weft_fail(WEFT_ERR_NOMEM, "llvm codegen: parallel closure of %d values", n);
        goto done;
    }
    int k = 0;
    vals[k++] = cg->pool;
    vals[k++] = min;
    for (int i = 0; i < n_params; i++) vals[k++] = cg->params[i];
    for (int i = 0; i < n_locals; i++) vals[k++] = cg->locals[i].ptr;
    for (int i = 0; i < n_vars; i++) vals[k++] = cg->vars[i].v;
    for (int i = 0; i < n; i++) tys[i] = LLVMTypeOf(vals[i]);
    LLVMTypeRef cty = LLVMStructTypeInContext(cg->ctx, tys, (unsigned)n, 0);
    LLVMValueRef closure = weft_llvm_entry_alloca(cg, cty, 16);
    for (int i = 0; i < n; i++)
        LLVMBuildStore(cg->b, vals[i], LLVMBuildStructGEP2(cg->b, cty, closure, (unsigned)i, ""));

    char name[160];
    snprintf(name, sizeof name, "%s.par%d", cg->sym, cg->n_outlined++);
    LLVMTypeRef pty[3] = {cg->t_ptr, cg->t_i64, cg->t_i64};
    LLVMValueRef body_fn = LLVMAddFunction(cg->mod, name, LLVMFunctionType(cg->t_void, pty, 3, 0));
    LLVMSetLinkage(body_fn, LLVMInternalLinkage);
    add_fn_attr(cg, body_fn, "nounwind");

    /* Switch to the outlined function; rebind everything from the closure. */
    LLVMBasicBlockRef caller_block = LLVMGetInsertBlock(cg->b);
    LLVMValueRef saved_fn = cg->fn, saved_pool = cg->pool, *saved_params = cg->params;
    LLVMBasicBlockRef saved_entry = cg->entry;
    LLVMBasicBlockRef body_bb = begin_function(cg, body_fn);
    LLVMValueRef cl = LLVMGetParam(body_fn, 0);
    LLVMValueRef *loaded = vals; /* the caller's values are stored; reuse the array */
    for (int i = 0; i < n; i++)
        loaded[i] = LLVMBuildLoad2(cg->b, tys[i], LLVMBuildStructGEP2(cg->b, cty, cl, (unsigned)i, ""), "");
    k = 0;
    cg->pool = loaded[k++];
    LLVMValueRef inner_min = loaded[k++];
    for (int i = 0; i < n_params; i++) inner_params[i] = loaded[k++];
    cg->params = inner_params;
    /* the outer variables are bound again below, after the n_vars bindings in scope: variable
     * j's new binding is n_vars + j */
    for (int i = 0; i < n_locals && st == WEFT_OK; i++)
        st = push_local(cg, cg->locals[i].buf, loaded[k++], cg->locals[i].slack, cg->locals[i].vars_at + n_vars);
    for (int i = 0; i < n_vars && st == WEFT_OK; i++) {
        st = weft_llvm_bind(cg, cg->vars[i].var, loaded[k++]);
        if (st == WEFT_OK) weft_llvm_bound_last(cg, cg->vars[i].lo, cg->vars[i].hi);
        if (st == WEFT_OK) cg->vars[cg->n_vars - 1].copies = cg->vars[i].copies;
    }
    LLVMPositionBuilderAtEnd(cg->b, body_bb);
    cg->in_parallel = true;
    if (st == WEFT_OK) {
        LLVMValueRef start = LLVMBuildAdd(cg->b, inner_min, LLVMGetParam(body_fn, 1), "");
        LLVMValueRef stop = LLVMBuildAdd(cg->b, inner_min, LLVMGetParam(body_fn, 2), "");
        st = emit_range(cg, s, start, stop);
    }
    if (st == WEFT_OK) finish_function(cg, body_bb);
    cg->in_parallel = false;
    cg->n_vars = n_vars;
    cg->n_locals = n_locals;
    cg->fn = saved_fn;
    cg->pool = saved_pool;
    cg->params = saved_params;
    cg->entry = saved_entry;
    LLVMPositionBuilderAtEnd(cg->b, caller_block);
    if (st != WEFT_OK) goto done;

    /* if (extent > 0) weft_rt_parallel_for(pool, body, &closure, extent) */
    LLVMTypeRef rt_ty[4] = {cg->t_ptr, cg->t_ptr, cg->t_ptr, cg->t_i64};
    LLVMTypeRef pf_ty = LLVMFunctionType(cg->t_void, rt_ty, 4, 0);
    LLVMValueRef pf = get_function(cg, "weft_rt_parallel_for", pf_ty);
    LLVMBasicBlockRef call_bb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "par.call");
    LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "par.done");
    LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSGT, ext, LLVMConstInt(cg->t_i64, 0, 0), ""), call_bb, after);
    LLVMPositionBuilderAtEnd(cg->b, call_bb);
    LLVMValueRef args[4] = {cg->pool, body_fn, closure, ext};
    LLVMBuildCall2(cg->b, pf_ty, pf, args, 4, "");
    LLVMBuildBr(cg->b, after);
    LLVMPositionBuilderAtEnd(cg->b, after);
done:
    free(tys);
    free(vals);
    free(inner_params);
    return st;
}

static weft_status emit_for(weft_llvm_cg *cg, const weft_stmt *s)
{
    const weft_expr *ext = s->u.loop.extent;
    int64_t stride; /* serial or unrolled around a write-back across rows */
    if (weft_llvm_transposed_store_ok(cg, s, &stride)) return weft_llvm_transposed_store(cg, s, stride);
    switch (s->u.loop.kind) {
    case WEFT_FOR_THREAD_BOUND:
        return weft_fail(WEFT_ERR_UNSUPPORTED, "llvm: loop %s is bound to %s; thread binding needs a GPU target",
                         weft_expr_var_name(s->u.loop.var), weft_thread_axis_names[s->u.loop.thread_axis]);
    case WEFT_FOR_PARALLEL:
        if (!cg->in_parallel) return emit_parallel(cg, s);
        return emit_serial(cg, s);
    case WEFT_FOR_VECTORIZED:
        if (weft_llvm_vector_ok(s)) return weft_llvm_vector_loop(cg, s);
        return emit_serial(cg, s);
    case WEFT_FOR_UNROLLED:
        if (ext->kind == WEFT_EXPR_INT && ext->u.imm_int <= MAX_UNROLL) return emit_unrolled(cg, s);
        return emit_serial(cg, s);
    case WEFT_FOR_SERIAL: return emit_serial(cg, s);
    default: return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: unknown loop kind %d", (int)s->u.loop.kind);
    }
}

static weft_status emit_store(weft_llvm_cg *cg, const weft_stmt *s)
{
    if (cg->vvar) return weft_llvm_vector_store(cg, s);
    const weft_buffer *buf = s->u.store.buf;
    LLVMTypeRef mty = weft_llvm_mem_type(cg, buf->dtype);
    if (!mty) return weft_fail(WEFT_ERR_UNSUPPORTED, "llvm: buffer %s has unsupported dtype", buf->name);
    LLVMValueRef base, idx, val;
    weft_status st = weft_llvm_buffer_ptr(cg, buf, &base);
    if (st == WEFT_OK) st = weft_llvm_index(cg, s->u.store.index, &idx);
    if (st == WEFT_OK) st = weft_llvm_expr(cg, s->u.store.value, &val);
    if (st != WEFT_OK) return st;
    LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, mty, base, &idx, 1, "");
    LLVMValueRef store = LLVMBuildStore(cg->b, weft_llvm_to_mem(cg, buf->dtype, val), p);
    LLVMSetAlignment(store, (unsigned)weft_dtype_bytes(buf->dtype));
    return WEFT_OK;
}

/* llvm.prefetch (read, high locality, data cache) of buf[index]. The address is computed
 * without `inbounds`: a prefetch may name a line past the buffer (the next iteration of the
 * last one), which is defined and never faults. Inside a vectorized loop it is dropped (the
 * prefetch pass never puts one there). */
static weft_status emit_prefetch(weft_llvm_cg *cg, const weft_stmt *s)
{
    if (cg->vvar) return WEFT_OK;
    const weft_buffer *buf = s->u.store.buf;
    LLVMTypeRef mty = weft_llvm_mem_type(cg, buf->dtype);
    if (!mty) return weft_fail(WEFT_ERR_UNSUPPORTED, "llvm: buffer %s has unsupported dtype", buf->name);
    LLVMValueRef base, idx;
    weft_status st = weft_llvm_buffer_ptr(cg, buf, &base);
    if (st == WEFT_OK) st = weft_llvm_index(cg, s->u.store.index, &idx);
    if (st != WEFT_OK) return st;
    LLVMValueRef p = LLVMBuildGEP2(cg->b, mty, base, &idx, 1, "");
    LLVMTypeRef ovl = cg->t_ptr;
    LLVMValueRef args[4] = {p, LLVMConstInt(cg->t_i32, 0, 0), LLVMConstInt(cg->t_i32, 3, 0), LLVMConstInt(cg->t_i32, 1, 0)};
    LLVMValueRef call = weft_llvm_intrinsic(cg, "llvm.prefetch", &ovl, 1, args, 4);
    /* memory(inaccessiblemem: readwrite) at the call: the declaration says it may read its
     * argument's memory, which keeps LLVM from holding a register tile's accumulators in
     * registers across the loop (they went to the stack every iteration). Not `none`: the
     * call would then be dead and removed. */
    unsigned kind = LLVMGetEnumAttributeKindForName("memory", 6);
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->ctx, kind, 3u << 2));
    return WEFT_OK;
}

static weft_status emit_if(weft_llvm_cg *cg, const weft_stmt *s)
{
    if (cg->vvar) return weft_llvm_vector_if(cg, s);
    int depth = cg->n_vars;
    weft_status st = WEFT_OK;
    switch (weft_llvm_term_truth(cg, s->u.cond.cond)) { /* decided by the loop bounds: one side */
    case 1: return weft_llvm_stmt(cg, s->u.cond.then_s);
    case -1: return s->u.cond.else_s ? weft_llvm_stmt(cg, s->u.cond.else_s) : WEFT_OK;
    default: break;
    }
    LLVMValueRef c;
    st = weft_llvm_expr(cg, s->u.cond.cond, &c);
    if (st != WEFT_OK) return st;
    if (weft_llvm_lanes_of(c)) return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: vector condition in IF");
    if (LLVMTypeOf(c) != cg->t_i1) {
        LLVMTypeRef ty = LLVMTypeOf(c);
        c = LLVMGetTypeKind(ty) == LLVMIntegerTypeKind ? LLVMBuildICmp(cg->b, LLVMIntNE, c, LLVMConstNull(ty), "")
                                                       : LLVMBuildFCmp(cg->b, LLVMRealUNE, c, LLVMConstNull(ty), "");
    }
    LLVMBasicBlockRef then_b = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "then");
    LLVMBasicBlockRef else_b = s->u.cond.else_s ? LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "else") : NULL;
    LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "endif");
    LLVMBuildCondBr(cg->b, c, then_b, else_b ? else_b : merge);
    LLVMPositionBuilderAtEnd(cg->b, then_b);
    st = weft_llvm_narrow_for_branch(cg, s->u.cond.cond, false);
    if (st == WEFT_OK) st = weft_llvm_stmt(cg, s->u.cond.then_s);
    cg->n_vars = depth;
    if (st != WEFT_OK) return st;
    LLVMBuildBr(cg->b, merge);
    if (else_b) {
        LLVMPositionBuilderAtEnd(cg->b, else_b);
        st = weft_llvm_narrow_for_branch(cg, s->u.cond.cond, true);
        if (st == WEFT_OK) st = weft_llvm_stmt(cg, s->u.cond.else_s);
        cg->n_vars = depth;
        if (st != WEFT_OK) return st;
        LLVMBuildBr(cg->b, merge);
    }
    LLVMPositionBuilderAtEnd(cg->b, merge);
    return WEFT_OK;
}

/* A guard (IF) inside a vectorized loop of s: vector.c may then access a local buffer's
 * disabled lanes without a mask (in range, blended), so the buffer starts zeroed: lanes that
 * are never written hold 0, not stale bits that may be denormals or NaNs, whose arithmetic in
 * disabled lanes costs microcode assists where no AVX-512 masking suppresses it. A stack
 * buffer is zeroed once in the function's entry block (later iterations of the loops around
 * the ALLOCATE find what the previous ones wrote: values of the computation, not stack
 * garbage); zeroing it at the ALLOCATE, per channel of a depthwise conv, cost a memset call
 * per plane: Zen 4, 1 thread, 672 channels of 14x14, 5x5 + SiLU 0.20-0.23 -> 0.19 ms. */
static bool guarded_vector_loop(const weft_stmt *s, bool in_vector)
{
    if (!s) return false;
    switch (s->kind) {
    case WEFT_STMT_FOR: return guarded_vector_loop(s->u.loop.body, in_vector || s->u.loop.kind == WEFT_FOR_VECTORIZED);
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (guarded_vector_loop(s->u.seq.items[i], in_vector)) return true;
        return false;
    case WEFT_STMT_IF:
        return in_vector || guarded_vector_loop(s->u.cond.then_s, in_vector) || guarded_vector_loop(s->u.cond.else_s, in_vector);
    case WEFT_STMT_ALLOCATE: return guarded_vector_loop(s->u.alloc.body, in_vector);
    default: return false;
    }
}

static weft_status emit_allocate(weft_llvm_cg *cg, const weft_stmt *s)
{
    const weft_buffer *buf = s->u.alloc.buf;
    LLVMTypeRef mty = weft_llvm_mem_type(cg, buf->dtype);
    if (!mty) return weft_fail(WEFT_ERR_UNSUPPORTED, "llvm: local buffer %s has unsupported dtype", buf->name);
    if (buf->param_index >= 0)
        return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: ALLOCATE of parameter buffer %s", buf->name);
    if (buf->size <= 0 || buf->size > (INT64_MAX / 16))
        return weft_fail(WEFT_ERR_INVALID_ARG, "llvm codegen: local buffer %s has size %lld", buf->name,
                         (long long)buf->size);
    int64_t bytes = buf->size * weft_dtype_bytes(buf->dtype);
    int depth = cg->n_locals;
    weft_status st;
    if (bytes <= MAX_STACK_BYTES) {
        /* one 64-byte line of slack past the end: vector.c may read a row of an odd width
         * (<7 x float>) as the next power of two and drop the extra lanes */
        int64_t slack = 64 / weft_dtype_bytes(buf->dtype);
        LLVMValueRef p = weft_llvm_entry_alloca(cg, LLVMArrayType2(mty, (uint64_t)(buf->size + slack)), 64);
        if (guarded_vector_loop(s->u.alloc.body, false)) {
            LLVMBasicBlockRef here = LLVMGetInsertBlock(cg->b);
            LLVMPositionBuilderAtEnd(cg->b, cg->entry); /* once per call, not per iteration */
            LLVMBuildMemSet(cg->b, p, LLVMConstInt(cg->t_i8, 0, 0),
                            LLVMConstInt(cg->t_i64, (unsigned long long)(bytes + slack * weft_dtype_bytes(buf->dtype)), 0), 64);
            LLVMPositionBuilderAtEnd(cg->b, here);
        }
        st = push_local(cg, buf, p, slack, cg->n_vars);
        if (st == WEFT_OK) st = weft_llvm_stmt(cg, s->u.alloc.body);
    } else {
        LLVMTypeRef a_ty = LLVMFunctionType(cg->t_ptr, &cg->t_i64, 1, 0);
        LLVMTypeRef f_ty = LLVMFunctionType(cg->t_void, &cg->t_ptr, 1, 0);
        LLVMValueRef n = LLVMConstInt(cg->t_i64, (unsigned long long)bytes, 0);
        LLVMValueRef p = LLVMBuildCall2(cg->b, a_ty, get_function(cg, "weft_rt_alloc_uninit", a_ty), &n, 1, buf->name);
        /* not zeroed, like a stack buffer (guarded vector loops zero it below); NULL when memory
         * runs out: the body is skipped and the target's run reports WEFT_ERR_NOMEM from the
         * runtime's failure count (runtime/mem.h). */
        LLVMBasicBlockRef use_b = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "alloc.ok");
        LLVMBasicBlockRef done_b = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "alloc.done");
        LLVMBuildCondBr(cg->b, LLVMBuildIsNotNull(cg->b, p, ""), use_b, done_b);
        LLVMPositionBuilderAtEnd(cg->b, use_b);
        if (guarded_vector_loop(s->u.alloc.body, false)) LLVMBuildMemSet(cg->b, p, LLVMConstInt(cg->t_i8, 0, 0), n, 64);
        st = push_local(cg, buf, p, 0, cg->n_vars);
        if (st == WEFT_OK) st = weft_llvm_stmt(cg, s->u.alloc.body);
        if (st == WEFT_OK) {
            LLVMBuildCall2(cg->b, f_ty, get_function(cg, "weft_rt_free", f_ty), &p, 1, "");
            LLVMBuildBr(cg->b, done_b);
            LLVMPositionBuilderAtEnd(cg->b, done_b);
        }
    }
    cg->n_locals = depth;
    return st;
}

weft_status weft_llvm_stmt(weft_llvm_cg *cg, const weft_stmt *s)
{
    if (!s) return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: NULL statement");
    switch (s->kind) {
    case WEFT_STMT_FOR: return emit_for(cg, s);
    case WEFT_STMT_STORE: return emit_store(cg, s);
    case WEFT_STMT_IF: return emit_if(cg, s);
    case WEFT_STMT_ALLOCATE: return emit_allocate(cg, s);
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) {
            weft_status st = weft_llvm_stmt(cg, s->u.seq.items[i]);
            if (st != WEFT_OK) return st;
        }
        return WEFT_OK;
    case WEFT_STMT_BARRIER: return WEFT_OK; /* one thread: nothing to wait for */
    case WEFT_STMT_PREFETCH: return emit_prefetch(cg, s);
    default: return weft_fail(WEFT_ERR_INTERNAL, "llvm codegen: unknown statement kind %d", (int)s->kind);
    }
}

static weft_status emit_kernel(weft_llvm_cg *cg)
{
    LLVMTypeRef pty[2] = {cg->t_ptr, cg->t_ptr};
    LLVMValueRef fn = LLVMAddFunction(cg->mod, cg->sym, LLVMFunctionType(cg->t_void, pty, 2, 0));
    add_fn_attr(cg, fn, "nounwind");
    LLVMBasicBlockRef body = begin_function(cg, fn);
    LLVMValueRef args = LLVMGetParam(fn, 0);
    cg->pool = LLVMGetParam(fn, 1);
    int n = cg->f->n_params;
    cg->params = weft_calloc((size_t)(n ? n : 1), sizeof *cg->params);
    if (!cg->params) return weft_fail(WEFT_ERR_NOMEM, "llvm codegen: %d params", n);
    for (int i = 0; i < n; i++) {
        LLVMValueRef idx = LLVMConstInt(cg->t_i64, (unsigned long long)i, 0);
        LLVMValueRef slot = LLVMBuildInBoundsGEP2(cg->b, cg->t_ptr, args, &idx, 1, "");
        cg->params[i] = LLVMBuildLoad2(cg->b, cg->t_ptr, slot, cg->f->params[i]->name);
    }
    LLVMPositionBuilderAtEnd(cg->b, body);
    weft_status st = weft_llvm_stmt(cg, cg->f->body);
    if (st != WEFT_OK) return st;
    finish_function(cg, body);
    return WEFT_OK;
}

weft_status weft_llvm_codegen(const weft_target *t, LLVMContextRef ctx, const weft_loop_func *f, const char *sym,
                              LLVMModuleRef *out)
{
    *out = NULL;
    weft_llvm_cg cg = {0};
    cg.ctx = ctx;
    cg.f = f;
    cg.sym = sym;
    cg.slow_gather = t->slow_gather;
    cg.scalar_scatter = t->slow_gather || !t->features || !strstr(t->features, "+avx512f");
    cg.avx512f = t->features && strstr(t->features, "+avx512f");
    cg.avx512vl = t->features && strstr(t->features, "+avx512vl");
    cg.mod = LLVMModuleCreateWithNameInContext(sym, ctx);
    cg.b = LLVMCreateBuilderInContext(ctx);
    LLVMSetTarget(cg.mod, t->triple);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(t->tm);
    LLVMSetModuleDataLayout(cg.mod, td);
    LLVMDisposeTargetData(td);
    cg.t_i1 = LLVMInt1TypeInContext(ctx);
    cg.t_i8 = LLVMInt8TypeInContext(ctx);
    cg.t_i32 = LLVMInt32TypeInContext(ctx);
    cg.t_i64 = LLVMInt64TypeInContext(ctx);
    cg.t_f32 = LLVMFloatTypeInContext(ctx);
    cg.t_f64 = LLVMDoubleTypeInContext(ctx);
    cg.t_ptr = LLVMPointerTypeInContext(ctx, 0);
    cg.t_void = LLVMVoidTypeInContext(ctx);

    weft_status st = emit_kernel(&cg);
    if (st == WEFT_OK) {
        char *msg = NULL;
        if (LLVMVerifyModule(cg.mod, LLVMReturnStatusAction, &msg))
            st = weft_fail(WEFT_ERR_COMPILE, "llvm: module for %s does not verify: %.700s", f->name ? f->name : sym,
                           msg ? msg : "");
        if (msg) LLVMDisposeMessage(msg);
    }
    LLVMDisposeBuilder(cg.b);
    free(cg.vars);
    free(cg.locals);
    free(cg.params);
    if (st != WEFT_OK) {
        LLVMDisposeModule(cg.mod);
        return st;
    }
    *out = cg.mod;
    return WEFT_OK;
}
