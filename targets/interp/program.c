/* Compiles loop IR into the interpreter's flat program (targets/interp/program.h).
 *
 * The loop-IR rules (variables used inside the loop that binds them and never rebound by an
 * inner loop; buffers that are parameters or used inside their ALLOCATE; no TLOAD; stored
 * values of the buffer's dtype) are checked first by ir/verify.c, the verifier lowering's last
 * pass runs too. What this file checks on the way is what the interpreter itself relies on:
 * operand dtypes agree and are ones it represents, conditions are bool, indices and loop
 * bounds are integers. A violation is WEFT_ERR_INTERNAL (a lowering bug), an unsupported dtype
 * WEFT_ERR_UNSUPPORTED.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/verify.h"
#include "ir/tensor.h"
#include "targets/interp/program.h"
#include "runtime/mem.h"

/* Compile state: the variable table (slot -> var) and what is in scope. */
typedef struct cctx {
    weft_kernel *k;
    const weft_loop_func *f;
    const weft_expr **vars; /* slot -> variable */
    int cap_vars;
    int32_t *scope; /* slots of the loops enclosing the current point */
    int n_scope, cap_scope;
    int32_t *live; /* buffer slots of the ALLOCATEs enclosing the current point */
    int n_live, cap_live;
    weft_status st;
} cctx;

static bool grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap) return true;
    int n = *cap ? *cap : 16;
    while (n < need) n *= 2;
    void *q = weft_realloc(*p, elem * (size_t)n);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

/* Records the first compile error; returns -1 for the caller to pass up. */
static int32_t cfail(cctx *c, weft_status st)
{
    if (c->st == WEFT_OK) c->st = st;
    return -1;
}

static int32_t cnomem(cctx *c)
{
    return cfail(c, weft_fail(WEFT_ERR_NOMEM, "interp: out of memory compiling %s", c->k->name));
}

static int value_class(weft_dtype t)
{
    if (t.lanes != 1) return -1;
    if (t.code == WEFT_DTYPE_BOOL) return V_BOOL;
    if (t.code == WEFT_DTYPE_INT) return t.bits == 32 ? V_I32 : t.bits == 64 ? V_I64 : -1;
    if (t.code == WEFT_DTYPE_FLOAT) return t.bits == 32 ? V_F32 : t.bits == 64 ? V_F64 : -1;
    return -1;
}

static bool class_is_int(int cls) { return cls == V_I32 || cls == V_I64; }
static bool class_is_float(int cls) { return cls == V_F32 || cls == V_F64; }

static int32_t new_node(cctx *c, weft_expr_kind op, int cls)
{
    weft_kernel *k = c->k;
    if (!grow((void **)&k->nodes, &k->cap_nodes, k->n_nodes + 1, sizeof *k->nodes)) return cnomem(c);
    k->nodes[k->n_nodes] = (inode){.op = (uint16_t)op, .cls = (uint8_t)cls, .rcls = (uint8_t)cls, .a = -1, .b = -1, .c = -1};
    return k->n_nodes++;
}

static int32_t new_stmt(cctx *c, weft_stmt_kind kind)
{
    weft_kernel *k = c->k;
    if (!grow((void **)&k->stmts, &k->cap_stmts, k->n_stmts + 1, sizeof *k->stmts)) return cnomem(c);
    k->stmts[k->n_stmts] = (istmt){.kind = kind, .a = -1, .b = -1, .c = -1, .d = -1};
    return k->n_stmts++;
}

static bool in_scope(const int32_t *stack, int n, int32_t slot)
{
    for (int i = 0; i < n; i++)
        if (stack[i] == slot) return true;
    return false;
}

/* Slot of variable v, creating one on first sight. */
static int32_t var_slot(cctx *c, const weft_expr *v)
{
    for (int i = 0; i < c->k->n_slots; i++)
        if (c->vars[i] == v) return i;
    if (!grow((void **)&c->vars, &c->cap_vars, c->k->n_slots + 1, sizeof *c->vars)) return cnomem(c);
    c->vars[c->k->n_slots] = v;
    return c->k->n_slots++;
}

static int32_t add_buf(cctx *c, const weft_buffer *b, int cls, int param)
{
    weft_kernel *k = c->k;
    if (b->size < 0 || (uint64_t)b->size > SIZE_MAX / 8)
        return cfail(c, weft_fail(WEFT_ERR_INTERNAL, "interp: buffer %s has invalid size %lld", b->name, (long long)b->size));
    if (!grow((void **)&k->bufs, &k->cap_bufs, k->n_bufs + 1, sizeof *k->bufs)) return cnomem(c);
    char *name = weft_strdup(b->name ? b->name : "?");
    if (!name) return cnomem(c);
    k->bufs[k->n_bufs] = (ibuf){b, name, cls, param, b->size, (size_t)b->size * (size_t)weft_dtype_bytes(b->dtype),
                             (int)b->scope};
    return k->n_bufs++;
}

/* Slot of a buffer read or written here: a parameter, or an ALLOCATE'd buffer in scope. */
static int32_t buf_slot(cctx *c, const weft_buffer *b)
{
    weft_kernel *k = c->k;
    for (int i = 0; i < k->n_bufs; i++) {
        if (k->bufs[i].buf != b) continue;
        if (k->bufs[i].param < 0 && !in_scope(c->live, c->n_live, i)) break;
        return i;
    }
    int cls = value_class(b->dtype);
    if (cls < 0)
        return cfail(c, weft_fail(WEFT_ERR_UNSUPPORTED, "interp: buffer %s has dtype %s", b->name, weft_dtype_name(b->dtype)));
    int pi = b->param_index; /* ir/verify.c: a parameter (or a view of one) when not ALLOCATEd here */
    if (pi < 0) return cfail(c, weft_fail(WEFT_ERR_INTERNAL, "interp: buffer %s has no slot", b->name));
    return add_buf(c, b, cls, pi);
}

static int fused_op(weft_expr_kind op, int cls)
{
    if (cls == V_I64 && op == WEFT_EXPR_ADD) return OP_I64_ADD;
    if (cls == V_I64 && op == WEFT_EXPR_SUB) return OP_I64_SUB;
    if (cls == V_I64 && op == WEFT_EXPR_MUL) return OP_I64_MUL;
    if (cls == V_F32 && op == WEFT_EXPR_ADD) return OP_F32_ADD;
    if (cls == V_F32 && op == WEFT_EXPR_SUB) return OP_F32_SUB;
    if (cls == V_F32 && op == WEFT_EXPR_MUL) return OP_F32_MUL;
    if (cls == V_F32 && op == WEFT_EXPR_DIV) return OP_F32_DIV;
    return op;
}

static int32_t compile_expr(cctx *c, const weft_expr *e);

/* Compiles e and checks its class is one of the two allowed (pass the same twice for one). */
static int32_t compile_typed(cctx *c, const weft_expr *e, int want1, int want2, const char *what)
{
    int32_t n = compile_expr(c, e);
    if (n < 0) return -1;
    int cls = value_class(e->dtype);
    if (cls != want1 && cls != want2)
        return cfail(c, weft_fail(WEFT_ERR_INTERNAL, "interp: %s has dtype %s in %s", what, weft_dtype_name(e->dtype),
                                  c->k->name));
    return n;
}

static int32_t compile_expr(cctx *c, const weft_expr *e)
{
    if (!e) return cfail(c, weft_fail(WEFT_ERR_INTERNAL, "interp: NULL expression in %s", c->k->name));
    weft_expr_kind op = (weft_expr_kind)e->kind;
    int cls = value_class(e->dtype);
    if (cls < 0)
        return cfail(c, weft_fail(WEFT_ERR_UNSUPPORTED, "interp: dtype %s in %s", weft_dtype_name(e->dtype), c->k->name));
    int32_t n, x, y, z;
    switch (op) {
    case WEFT_EXPR_INT:
    case WEFT_EXPR_FLOAT: {
        if ((n = new_node(c, op, cls)) < 0) return -1;
        ival v = {0};
        if (cls == V_F32) v.f = (float)(op == WEFT_EXPR_FLOAT ? e->u.imm_float : (double)e->u.imm_int);
        else if (cls == V_F64) v.d = op == WEFT_EXPR_FLOAT ? e->u.imm_float : (double)e->u.imm_int;
        else v.i = op == WEFT_EXPR_INT ? e->u.imm_int : (int64_t)e->u.imm_float;
        c->k->nodes[n].imm = v;
        return n;
    }
    case WEFT_EXPR_VAR: {
        int32_t slot = var_slot(c, e);
        if (slot < 0) return -1;
        if ((n = new_node(c, op, cls)) < 0) return -1;
        c->k->nodes[n].a = slot;
        return n;
    }
    case WEFT_EXPR_LOAD: {
        int32_t slot = buf_slot(c, e->u.load.buf);
        if (slot < 0 || (x = compile_typed(c, e->u.load.index, V_I64, V_I32, "a load index")) < 0) return -1;
        if ((n = new_node(c, op, c->k->bufs[slot].cls)) < 0) return -1;
        if (c->k->bufs[slot].cls == V_F32) c->k->nodes[n].op = OP_F32_LOAD;
        if (c->k->bufs[slot].cls == V_I64) c->k->nodes[n].op = OP_I64_LOAD;
        c->k->nodes[n].a = slot;
        c->k->nodes[n].b = x;
        return n;
    }
    case WEFT_EXPR_NOT:
        if ((x = compile_typed(c, e->u.un.a, V_BOOL, V_BOOL, "the operand of !")) < 0) return -1;
        if ((n = new_node(c, op, V_BOOL)) < 0) return -1;
        c->k->nodes[n].a = x;
        return n;
    case WEFT_EXPR_CAST: {
        if ((x = compile_expr(c, e->u.un.a)) < 0) return -1;
        if ((n = new_node(c, op, value_class(e->u.un.a->dtype))) < 0) return -1;
        c->k->nodes[n].rcls = (uint8_t)cls;
        c->k->nodes[n].a = x;
        return n;
    }
    case WEFT_EXPR_SELECT:
        if ((x = compile_typed(c, e->u.sel.c, V_BOOL, V_BOOL, "a select condition")) < 0 ||
            (y = compile_typed(c, e->u.sel.t, cls, cls, "a select arm")) < 0 ||
            (z = compile_typed(c, e->u.sel.f, cls, cls, "a select arm")) < 0)
            return -1;
        if ((n = new_node(c, op, cls)) < 0) return -1;
        c->k->nodes[n] = (inode){.op = (uint16_t)op, .cls = (uint8_t)cls, .rcls = (uint8_t)cls, .a = x, .b = y, .c = z};
        return n;
    case WEFT_EXPR_CALL: {
        int fn = e->u.call.fn, na = e->u.call.n;
        if (!class_is_float(cls) || fn < 0 || fn >= WEFT_INTRIN_COUNT || na != weft_intrin_arity((weft_intrin)fn))
            return cfail(c, weft_fail(WEFT_ERR_UNSUPPORTED, "interp: call %d with %d %s args in %s", fn, na,
                                      weft_dtype_name(e->dtype), c->k->name));
        if ((x = compile_typed(c, e->u.call.args[0], cls, cls, "an intrinsic argument")) < 0) return -1;
        y = -1;
        if (na == 2 && (y = compile_typed(c, e->u.call.args[1], cls, cls, "an intrinsic argument")) < 0) return -1;
        if ((n = new_node(c, op, cls)) < 0) return -1;
        c->k->nodes[n].a = x;
        c->k->nodes[n].b = y;
        c->k->nodes[n].c = fn;
        return n;
    }
    default: {
        if (!weft_expr_is_binary(e))
            return cfail(c, weft_fail(WEFT_ERR_INTERNAL, "interp: unknown expression kind %d in %s", (int)op, c->k->name));
        unsigned flags = weft_expr_kind_flags[op];
        int ocls = e->u.bin.a ? value_class(e->u.bin.a->dtype) : -1;
        if ((x = compile_expr(c, e->u.bin.a)) < 0) return -1;
        if ((y = compile_typed(c, e->u.bin.b, ocls, ocls, "a binary operand (dtypes differ)")) < 0) return -1;
        bool ok = (flags & WEFT_KF_LOGIC) ? ocls == V_BOOL
                : (flags & WEFT_KF_COMPARE) ? true
                : ocls != V_BOOL;
        if (!ok)
            return cfail(c, weft_fail(WEFT_ERR_UNSUPPORTED, "interp: '%s' on %s operands in %s", weft_expr_kind_names[op],
                                      weft_dtype_name(e->u.bin.a->dtype), c->k->name));
        if ((n = new_node(c, op, ocls)) < 0) return -1;
        c->k->nodes[n].op = (uint16_t)fused_op(op, ocls);
        c->k->nodes[n].rcls = (uint8_t)cls;
        c->k->nodes[n].a = x;
        c->k->nodes[n].b = y;
        return n;
    }
    }
}

static int32_t compile_stmt(cctx *c, const weft_stmt *s)
{
    if (!s) return cfail(c, weft_fail(WEFT_ERR_INTERNAL, "interp: NULL statement in %s", c->k->name));
    int32_t n, x, y, z;
    switch (s->kind) {
    case WEFT_STMT_FOR: {
        const weft_expr *v = s->u.loop.var;
        if (!class_is_int(value_class(v->dtype)))
            return cfail(c, weft_fail(WEFT_ERR_UNSUPPORTED, "interp: loop variable %s has dtype %s", v->u.var.name,
                                      weft_dtype_name(v->dtype)));
        if ((x = compile_typed(c, s->u.loop.min, V_I64, V_I32, "a loop min")) < 0 ||
            (y = compile_typed(c, s->u.loop.extent, V_I64, V_I32, "a loop extent")) < 0)
            return -1;
        int32_t slot = var_slot(c, v);
        if (slot < 0) return -1;
        if (!grow((void **)&c->scope, &c->cap_scope, c->n_scope + 1, sizeof *c->scope)) return cnomem(c);
        c->scope[c->n_scope++] = slot;
        z = compile_stmt(c, s->u.loop.body);
        c->n_scope--;
        if (z < 0 || (n = new_stmt(c, WEFT_STMT_FOR)) < 0) return -1;
        c->k->stmts[n] = (istmt){WEFT_STMT_FOR, slot, x, y, z,
                                 s->u.loop.kind == WEFT_FOR_THREAD_BOUND ? (int32_t)s->u.loop.thread_axis : 0};
        return n;
    }
    case WEFT_STMT_STORE: {
        int32_t slot = buf_slot(c, s->u.store.buf);
        if (slot < 0 || (x = compile_typed(c, s->u.store.index, V_I64, V_I32, "a store index")) < 0) return -1;
        int bcls = c->k->bufs[slot].cls;
        if ((y = compile_typed(c, s->u.store.value, bcls, bcls, "a stored value (buffer dtype differs)")) < 0) return -1;
        if ((n = new_stmt(c, WEFT_STMT_STORE)) < 0) return -1;
        c->k->stmts[n] = (istmt){WEFT_STMT_STORE, slot, x, y, -1, 0};
        return n;
    }
    case WEFT_STMT_ALLOCATE: {
        const weft_buffer *b = s->u.alloc.buf;
        int cls = value_class(b->dtype);
        if (cls < 0)
            return cfail(c, weft_fail(WEFT_ERR_UNSUPPORTED, "interp: buffer %s has dtype %s", b->name, weft_dtype_name(b->dtype)));
        int32_t slot = -1;
        for (int i = 0; i < c->k->n_bufs; i++)
            if (c->k->bufs[i].buf == b) slot = i;
        if (slot < 0 && (slot = add_buf(c, b, cls, -1)) < 0) return -1;
        if (!grow((void **)&c->live, &c->cap_live, c->n_live + 1, sizeof *c->live)) return cnomem(c);
        c->live[c->n_live++] = slot;
        z = compile_stmt(c, s->u.alloc.body);
        c->n_live--;
        if (z < 0 || (n = new_stmt(c, WEFT_STMT_ALLOCATE)) < 0) return -1;
        c->k->stmts[n] = (istmt){WEFT_STMT_ALLOCATE, slot, -1, -1, z, 0};
        return n;
    }
    case WEFT_STMT_IF:
        if ((x = compile_typed(c, s->u.cond.cond, V_BOOL, V_BOOL, "an if condition")) < 0 ||
            (y = compile_stmt(c, s->u.cond.then_s)) < 0)
            return -1;
        z = -1;
        if (s->u.cond.else_s && (z = compile_stmt(c, s->u.cond.else_s)) < 0) return -1;
        if ((n = new_stmt(c, WEFT_STMT_IF)) < 0) return -1;
        c->k->stmts[n] = (istmt){WEFT_STMT_IF, -1, x, y, z, 0};
        return n;
    case WEFT_STMT_SEQ: {
        int m = s->u.seq.n;
        int32_t *items = weft_malloc(sizeof *items * (size_t)(m ? m : 1));
        if (!items) return cnomem(c);
        for (int i = 0; i < m; i++)
            if ((items[i] = compile_stmt(c, s->u.seq.items[i])) < 0) {
                free(items);
                return -1;
            }
        weft_kernel *k = c->k;
        if (!grow((void **)&k->kids, &k->cap_kids, k->n_kids + m, sizeof *k->kids) || (n = new_stmt(c, WEFT_STMT_SEQ)) < 0) {
            free(items);
            return c->st ? -1 : cnomem(c);
        }
        memcpy(k->kids + k->n_kids, items, sizeof *items * (size_t)m);
        k->stmts[n] = (istmt){WEFT_STMT_SEQ, k->n_kids, m, -1, -1, 0};
        k->n_kids += m;
        free(items);
        return n;
    }
    case WEFT_STMT_PREFETCH: /* a hint only: an empty sequence */
        if ((n = new_stmt(c, WEFT_STMT_SEQ)) < 0) return -1;
        c->k->stmts[n] = (istmt){WEFT_STMT_SEQ, c->k->n_kids, 0, -1, -1, 0};
        return n;
    case WEFT_STMT_BARRIER:
        if ((n = new_stmt(c, WEFT_STMT_BARRIER)) < 0) return -1;
        c->k->stmts[n] = (istmt){WEFT_STMT_BARRIER, -1, -1, -1, -1, 0};
        return n;
    default:
        return cfail(c, weft_fail(WEFT_ERR_INTERNAL, "interp: unknown statement kind %d in %s", (int)s->kind, c->k->name));
    }
}

void weft_interp_program_destroy(weft_kernel *k)
{
    if (!k) return;
    for (int i = 0; i < k->n_bufs; i++) free(k->bufs[i].name);
    free(k->bufs);
    free(k->nodes);
    free(k->stmts);
    free(k->kids);
    free(k->name);
    free(k);
}

weft_status weft_interp_program_compile(const weft_loop_func *f, weft_kernel **out)
{
    *out = NULL;
    if (!f || !f->body) return weft_fail(WEFT_ERR_INVALID_ARG, "interp: compile needs a loop function with a body");
    /* The loop-IR rules (scopes of variables and buffers, parameters, no TLOAD) are checked
     * once, by the verifier lowering runs too; what follows checks only what this target
     * cannot run (dtypes). Every loop kind runs serially, so no caps restrict them. */
    weft_status rc = weft_ir_verify(f, NULL);
    if (rc != WEFT_OK) return rc;
    weft_kernel *k = weft_calloc(1, sizeof *k);
    if (!k || !(k->name = weft_strdup(f->name ? f->name : "?"))) {
        free(k);
        return weft_fail(WEFT_ERR_NOMEM, "interp: out of memory compiling %s", f->name ? f->name : "?");
    }
    cctx c = {.k = k, .f = f};
    k->root = compile_stmt(&c, f->body);
    free(c.vars);
    free(c.scope);
    free(c.live);
    if (c.st != WEFT_OK) {
        weft_interp_program_destroy(k);
        return c.st;
    }
    *out = k;
    return WEFT_OK;
}
