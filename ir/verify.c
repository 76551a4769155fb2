/* The loop-IR verifier (ir/verify.h): one set of rules for lowering's last pass and for every
 * target that takes loop IR (the interpreter checks its input with it). */
#include "ir/verify.h"

#include "ir/error.h"
#include "ir/tensor.h"

#define VERIFY_MAX 512 /* nested loops, and allocations in scope */

typedef struct vctx {
    const weft_loop_func *f;
    const weft_target_caps *caps;
    const weft_expr *vars[VERIFY_MAX];
    int n_vars;
    const weft_buffer *bufs[VERIFY_MAX];
    int n_bufs;
} vctx;

/* b is a parameter (or a view of one: same dtype, no larger), or ALLOCATEd around here. */
static bool buf_ok(const vctx *v, const weft_buffer *b)
{
    if (b->param_index >= 0) {
        if (b->param_index >= v->f->n_params) return false;
        const weft_buffer *p = v->f->params[b->param_index];
        return p == b || (weft_dtype_eq(p->dtype, b->dtype) && b->size <= p->size);
    }
    for (int i = 0; i < v->n_bufs; i++)
        if (v->bufs[i] == b) return true;
    return false;
}

static weft_status check_expr(const vctx *v, const weft_expr *e)
{
    if (!e) return weft_fail(WEFT_ERR_INTERNAL, "verify %s: NULL expression", v->f->name);
    if (e->kind >= WEFT_EXPR_COUNT)
        return weft_fail(WEFT_ERR_INTERNAL, "verify %s: unknown expression kind %d", v->f->name, (int)e->kind);
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT:
    case WEFT_EXPR_FLOAT: return WEFT_OK;
    case WEFT_EXPR_VAR:
        for (int i = 0; i < v->n_vars; i++)
            if (v->vars[i] == e) return WEFT_OK;
        return weft_fail(WEFT_ERR_INTERNAL, "verify %s: variable %s used outside its loop", v->f->name, weft_expr_var_name(e));
    case WEFT_EXPR_TLOAD:
        return weft_fail(WEFT_ERR_INTERNAL, "verify %s: TLOAD of tensor %s left in loop IR (lowering must flatten it)",
                         v->f->name, weft_expr_tload_tensor(e)->name);
    case WEFT_EXPR_LOAD:
        if (!buf_ok(v, weft_expr_load_buf(e)))
            return weft_fail(WEFT_ERR_INTERNAL, "verify %s: load from buffer %s used outside its allocate", v->f->name,
                             weft_expr_load_buf(e)->name);
        if (!weft_dtype_is_int(weft_expr_load_index(e)->dtype))
            return weft_fail(WEFT_ERR_INTERNAL, "verify %s: non-integer index into %s", v->f->name, weft_expr_load_buf(e)->name);
        return check_expr(v, weft_expr_load_index(e));
    case WEFT_EXPR_NOT:
    case WEFT_EXPR_CAST: return check_expr(v, weft_expr_operand(e));
    case WEFT_EXPR_SELECT: {
        weft_status rc = check_expr(v, weft_expr_sel_cond(e));
        if (rc == WEFT_OK) rc = check_expr(v, weft_expr_sel_true(e));
        if (rc == WEFT_OK) rc = check_expr(v, weft_expr_sel_false(e));
        return rc;
    }
    case WEFT_EXPR_CALL:
        for (int i = 0; i < weft_expr_call_n(e); i++) {
            weft_status rc = check_expr(v, weft_expr_call_arg(e, i));
            if (rc != WEFT_OK) return rc;
        }
        return WEFT_OK;
    default: {
        weft_status rc = check_expr(v, weft_expr_a(e));
        return rc == WEFT_OK ? check_expr(v, weft_expr_b(e)) : rc;
    }
    }
}

static weft_status check_stmt(vctx *v, const weft_stmt *s)
{
    if (!s) return weft_fail(WEFT_ERR_INTERNAL, "verify %s: NULL statement", v->f->name);
    weft_status rc = WEFT_OK;
    switch (s->kind) {
    case WEFT_STMT_FOR: {
        const weft_expr *ext = s->u.loop.extent;
        if ((rc = check_expr(v, s->u.loop.min)) != WEFT_OK || (rc = check_expr(v, ext)) != WEFT_OK) return rc;
        if (ext->kind == WEFT_EXPR_INT && weft_expr_int(ext) <= 0)
            return weft_fail(WEFT_ERR_INTERNAL, "verify %s: loop %s has extent %lld", v->f->name,
                             weft_expr_var_name(s->u.loop.var), (long long)weft_expr_int(ext));
        if ((s->u.loop.kind == WEFT_FOR_VECTORIZED || s->u.loop.kind == WEFT_FOR_UNROLLED) && ext->kind != WEFT_EXPR_INT)
            return weft_fail(WEFT_ERR_INTERNAL, "verify %s: %s loop %s needs a constant extent", v->f->name,
                             weft_for_kind_names[s->u.loop.kind], weft_expr_var_name(s->u.loop.var));
        if (s->u.loop.kind >= WEFT_FOR_KIND_COUNT || !s->u.loop.var || s->u.loop.var->kind != WEFT_EXPR_VAR ||
            !weft_dtype_is_int(s->u.loop.var->dtype))
            return weft_fail(WEFT_ERR_INTERNAL, "verify %s: a loop does not bind an integer variable", v->f->name);
        if (s->u.loop.kind == WEFT_FOR_THREAD_BOUND && v->caps && !v->caps->has_thread_binding)
            return weft_fail(WEFT_ERR_INVALID_ARG, "verify %s: loop %s is bound to %s, but target %s has no thread binding",
                             v->f->name, weft_expr_var_name(s->u.loop.var),
                             weft_thread_axis_names[s->u.loop.thread_axis], v->caps->name ? v->caps->name : "?");
        for (int i = 0; i < v->n_vars; i++)
            if (v->vars[i] == s->u.loop.var)
                return weft_fail(WEFT_ERR_INTERNAL, "verify %s: loop variable %s bound twice", v->f->name,
                                 weft_expr_var_name(s->u.loop.var));
        if (v->n_vars >= VERIFY_MAX) return weft_fail(WEFT_ERR_UNSUPPORTED, "verify %s: loops nested too deep", v->f->name);
        v->vars[v->n_vars++] = s->u.loop.var;
        rc = check_stmt(v, s->u.loop.body);
        v->n_vars--;
        return rc;
    }
    case WEFT_STMT_STORE:
        if (!buf_ok(v, s->u.store.buf))
            return weft_fail(WEFT_ERR_INTERNAL, "verify %s: store to buffer %s used outside its allocate", v->f->name,
                             s->u.store.buf->name);
        if (!weft_dtype_eq(s->u.store.buf->dtype, s->u.store.value->dtype))
            return weft_fail(WEFT_ERR_INTERNAL, "verify %s: store of %s into %s buffer %s", v->f->name,
                             weft_dtype_name(s->u.store.value->dtype), weft_dtype_name(s->u.store.buf->dtype),
                             s->u.store.buf->name);
        if ((rc = check_expr(v, s->u.store.index)) != WEFT_OK) return rc;
        return check_expr(v, s->u.store.value);
    case WEFT_STMT_ALLOCATE:
        if (s->u.alloc.buf->param_index >= 0)
            return weft_fail(WEFT_ERR_INTERNAL, "verify %s: buffer %s is parameter %d and cannot be allocated", v->f->name,
                             s->u.alloc.buf->name, s->u.alloc.buf->param_index);
        for (int i = 0; i < v->n_bufs; i++)
            if (v->bufs[i] == s->u.alloc.buf)
                return weft_fail(WEFT_ERR_INTERNAL, "verify %s: buffer %s is allocated inside its own allocate", v->f->name,
                                 s->u.alloc.buf->name);
        if (s->u.alloc.buf->size <= 0)
            return weft_fail(WEFT_ERR_INTERNAL, "verify %s: empty allocation %s", v->f->name, s->u.alloc.buf->name);
        if (v->n_bufs >= VERIFY_MAX) return weft_fail(WEFT_ERR_UNSUPPORTED, "verify %s: too many allocations", v->f->name);
        v->bufs[v->n_bufs++] = s->u.alloc.buf;
        rc = check_stmt(v, s->u.alloc.body);
        v->n_bufs--;
        return rc;
    case WEFT_STMT_IF:
        if ((rc = check_expr(v, s->u.cond.cond)) != WEFT_OK) return rc;
        if ((rc = check_stmt(v, s->u.cond.then_s)) != WEFT_OK) return rc;
        return s->u.cond.else_s ? check_stmt(v, s->u.cond.else_s) : WEFT_OK;
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n && rc == WEFT_OK; i++) rc = check_stmt(v, s->u.seq.items[i]);
        return rc;
    case WEFT_STMT_PREFETCH:
        if (!buf_ok(v, s->u.store.buf))
            return weft_fail(WEFT_ERR_INTERNAL, "verify %s: prefetch of buffer %s outside its allocate", v->f->name,
                             s->u.store.buf->name);
        return check_expr(v, s->u.store.index);
    case WEFT_STMT_BARRIER:
        if (v->caps && !v->caps->has_thread_binding)
            return weft_fail(WEFT_ERR_INVALID_ARG, "verify %s: barrier on target %s, which has no thread binding", v->f->name,
                             v->caps->name ? v->caps->name : "?");
        return WEFT_OK;
    default: return weft_fail(WEFT_ERR_INTERNAL, "verify %s: unknown statement kind %d", v->f->name, (int)s->kind);
    }
}

weft_status weft_ir_verify(const weft_loop_func *f, const weft_target_caps *caps)
{
    if (!f || !f->body || (f->n_params > 0 && !f->params))
        return weft_fail(WEFT_ERR_INTERNAL, "verify: incomplete loop function %s", f && f->name ? f->name : "(null)");
    for (int i = 0; i < f->n_params; i++)
        if (!f->params[i] || f->params[i]->param_index != i || f->params[i]->size < 0)
            return weft_fail(WEFT_ERR_INTERNAL, "verify %s: parameter %d is missing, misnumbered or of negative size", f->name,
                             i);
    vctx v = {.f = f, .caps = caps};
    return check_stmt(&v, f->body);
}
