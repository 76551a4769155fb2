/* Printers for expressions, loop IR and tensor expressions (format described in ir/print.h).
 *
 * A `printer` carries the output buffer and the variables visible in the unit being printed,
 * each with a flag saying whether it needs its id appended to stay distinguishable from another
 * variable of the same name. Loop IR and tensor lines push variables as they come into scope;
 * a lone expression collects all its variables first. A failed growth of the variable list
 * marks the output buffer failed, so the *_str functions return NULL, never a wrong text.
 */
#include "ir/print.h"
#include "runtime/mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pvar {
    const weft_expr *var;
    bool suffix; /* print as name_<id> */
} pvar;

typedef struct printer {
    weft_strbuf *sb;
    pvar *vars; /* visible variables, innermost last */
    int n_vars, cap_vars;
} printer;

/* Binding strength of the operator at the root of e; 7 is an atom. */
enum { PREC_OR = 1, PREC_AND, PREC_CMP, PREC_ADD, PREC_MUL, PREC_UNARY, PREC_ATOM };

static int prec(const weft_expr *e)
{
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_OR: return PREC_OR;
    case WEFT_EXPR_AND: return PREC_AND;
    case WEFT_EXPR_EQ: case WEFT_EXPR_NE: case WEFT_EXPR_LT:
    case WEFT_EXPR_LE: case WEFT_EXPR_GT: case WEFT_EXPR_GE: return PREC_CMP;
    case WEFT_EXPR_ADD: case WEFT_EXPR_SUB: return PREC_ADD;
    case WEFT_EXPR_MUL: case WEFT_EXPR_DIV: return PREC_MUL;
    case WEFT_EXPR_NOT: return PREC_UNARY;
    case WEFT_EXPR_INT: return e->u.imm_int < 0 && !weft_dtype_is_bool(e->dtype) ? PREC_UNARY : PREC_ATOM;
    case WEFT_EXPR_FLOAT: return signbit(e->u.imm_float) && !isnan(e->u.imm_float) ? PREC_UNARY : PREC_ATOM;
    default: return PREC_ATOM;
    }
}

static bool push_var(printer *p, const weft_expr *v, bool suffix)
{
    if (p->n_vars == p->cap_vars) {
        int cap = p->cap_vars ? 2 * p->cap_vars : 16;
        pvar *nv = weft_realloc(p->vars, sizeof *nv * (size_t)cap);
        if (!nv) {
            p->sb->failed = true;
            return false;
        }
        p->vars = nv;
        p->cap_vars = cap;
    }
    p->vars[p->n_vars++] = (pvar){v, suffix};
    return true;
}

static const char *var_name(const weft_expr *v) { return v->u.var.name ? v->u.var.name : "v"; }

/* Brings v into scope; it gets a suffix when a visible, different variable has its name. */
static bool bind_var(printer *p, const weft_expr *v)
{
    bool clash = false;
    for (int i = 0; i < p->n_vars; i++)
        clash = clash || (p->vars[i].var != v && !strcmp(var_name(p->vars[i].var), var_name(v)));
    return push_var(p, v, clash);
}

static void put_var(printer *p, const weft_expr *v)
{
    for (int i = p->n_vars - 1; i >= 0; i--)
        if (p->vars[i].var == v) {
            if (p->vars[i].suffix) weft_strbuf_printf(p->sb, "%s_%u", var_name(v), (unsigned)v->u.var.id);
            else weft_strbuf_puts(p->sb, var_name(v));
            return;
        }
    weft_strbuf_puts(p->sb, var_name(v));
}

/* Shortest decimal that reads back as the same value (at most 9 digits for float32, 17 for
 * float64), always with a '.' or an exponent so it cannot be mistaken for an int. */
static void put_float(weft_strbuf *sb, double v, int bits)
{
    if (isnan(v)) {
        weft_strbuf_puts(sb, "nan");
        return;
    }
    if (isinf(v)) {
        weft_strbuf_puts(sb, v > 0 ? "inf" : "-inf");
        return;
    }
    char buf[48];
    int max_digits = bits == 32 ? 9 : 17;
    for (int d = 1; d <= max_digits; d++) {
        snprintf(buf, sizeof buf, "%.*g", d, v);
        if (bits == 32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".e")) strcat(buf, ".0");
    weft_strbuf_puts(sb, buf);
}

static void print_expr(printer *p, const weft_expr *e);

/* Prints e, in parentheses when it binds less tightly than min_prec. */
static void print_operand(printer *p, const weft_expr *e, int min_prec)
{
    bool paren = e && prec(e) < min_prec;
    if (paren) weft_strbuf_puts(p->sb, "(");
    print_expr(p, e);
    if (paren) weft_strbuf_puts(p->sb, ")");
}

/* name(a, b, ...) */
static void print_call(printer *p, const char *name, int n, const weft_expr *const *args)
{
    weft_strbuf_printf(p->sb, "%s(", name);
    for (int i = 0; i < n; i++) {
        if (i) weft_strbuf_puts(p->sb, ", ");
        print_expr(p, args[i]);
    }
    weft_strbuf_puts(p->sb, ")");
}

static void print_expr(printer *p, const weft_expr *e)
{
    weft_strbuf *sb = p->sb;
    if (!e) {
        weft_strbuf_puts(sb, "<null>");
        return;
    }
    weft_expr_kind k = (weft_expr_kind)e->kind;
    switch (k) {
    case WEFT_EXPR_INT:
        if (weft_dtype_is_bool(e->dtype)) weft_strbuf_puts(sb, e->u.imm_int ? "true" : "false");
        else weft_strbuf_printf(sb, "%lld", (long long)e->u.imm_int);
        return;
    case WEFT_EXPR_FLOAT: put_float(sb, e->u.imm_float, e->dtype.bits); return;
    case WEFT_EXPR_VAR: put_var(p, e); return;
    case WEFT_EXPR_NOT:
        weft_strbuf_puts(sb, "!");
        print_operand(p, e->u.un.a, PREC_UNARY);
        return;
    case WEFT_EXPR_CAST:
        weft_strbuf_printf(sb, "cast<%s>(", weft_dtype_name(e->dtype));
        print_expr(p, e->u.un.a);
        weft_strbuf_puts(sb, ")");
        return;
    case WEFT_EXPR_SELECT: {
        const weft_expr *args[3] = {e->u.sel.c, e->u.sel.t, e->u.sel.f};
        print_call(p, "select", 3, args);
        return;
    }
    case WEFT_EXPR_CALL: {
        int fn = e->u.call.fn;
        print_call(p, fn >= 0 && fn < WEFT_INTRIN_COUNT ? weft_intrin_names[fn] : "?", e->u.call.n, e->u.call.args);
        return;
    }
    case WEFT_EXPR_TLOAD:
        weft_strbuf_printf(sb, "%s[", e->u.tload.tensor->name);
        for (int i = 0; i < e->u.tload.n; i++) {
            if (i) weft_strbuf_puts(sb, ", ");
            print_expr(p, e->u.tload.idx[i]);
        }
        weft_strbuf_puts(sb, "]");
        return;
    case WEFT_EXPR_LOAD:
        weft_strbuf_printf(sb, "%s[", e->u.load.buf->name);
        print_expr(p, e->u.load.index);
        weft_strbuf_puts(sb, "]");
        return;
    case WEFT_EXPR_FLOORDIV: case WEFT_EXPR_FLOORMOD: case WEFT_EXPR_MIN: case WEFT_EXPR_MAX: {
        const weft_expr *args[2] = {e->u.bin.a, e->u.bin.b};
        print_call(p, weft_expr_kind_names[k], 2, args);
        return;
    }
    default: {
        /* Infix: left-assoc, so the right operand must bind strictly tighter; comparisons do
         * not chain, so both sides of one must bind tighter. */
        int pk = prec(e);
        bool tight = pk == PREC_MUL;
        print_operand(p, e->u.bin.a, pk == PREC_CMP ? pk + 1 : pk);
        weft_strbuf_printf(sb, tight ? "%s" : " %s ", weft_expr_kind_names[k]);
        print_operand(p, e->u.bin.b, pk + 1);
        return;
    }
    }
}

/* Collects the distinct variables of e (for a lone expression's suffix decision). */
static void collect_vars(printer *p, const weft_expr *e)
{
    if (!e) return;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT: case WEFT_EXPR_FLOAT: return;
    case WEFT_EXPR_VAR:
        for (int i = 0; i < p->n_vars; i++)
            if (p->vars[i].var == e) return;
        push_var(p, e, false);
        return;
    case WEFT_EXPR_NOT: case WEFT_EXPR_CAST: collect_vars(p, e->u.un.a); return;
    case WEFT_EXPR_SELECT:
        collect_vars(p, e->u.sel.c);
        collect_vars(p, e->u.sel.t);
        collect_vars(p, e->u.sel.f);
        return;
    case WEFT_EXPR_CALL:
        for (int i = 0; i < e->u.call.n; i++) collect_vars(p, e->u.call.args[i]);
        return;
    case WEFT_EXPR_TLOAD:
        for (int i = 0; i < e->u.tload.n; i++) collect_vars(p, e->u.tload.idx[i]);
        return;
    case WEFT_EXPR_LOAD: collect_vars(p, e->u.load.index); return;
    default:
        collect_vars(p, e->u.bin.a);
        collect_vars(p, e->u.bin.b);
        return;
    }
}

void weft_ir_print_expr(weft_strbuf *sb, const weft_expr *e)
{
    printer p = {sb, NULL, 0, 0};
    collect_vars(&p, e);
    for (int i = 0; i < p.n_vars; i++)
        for (int j = 0; j < p.n_vars; j++)
            if (i != j && !strcmp(var_name(p.vars[i].var), var_name(p.vars[j].var))) p.vars[i].suffix = true;
    print_expr(&p, e);
    free(p.vars);
}

char *weft_ir_expr_str(const weft_expr *e)
{
    weft_strbuf sb = {0};
    weft_ir_print_expr(&sb, e);
    return weft_strbuf_take(&sb);
}

/* ---- loop IR ------------------------------------------------------------------------ */

static void put_indent(weft_strbuf *sb, int indent)
{
    for (int i = 0; i < indent; i++) weft_strbuf_puts(sb, "  ");
}

/* "float32[64, 32]" from the buffer's logical shape ("[size]" when it has none). */
static void put_buffer_type(weft_strbuf *sb, const weft_buffer *b)
{
    weft_strbuf_printf(sb, "%s[", weft_dtype_name(b->dtype));
    if (b->ndim == 0) weft_strbuf_printf(sb, "%lld", (long long)b->size);
    for (int d = 0; d < b->ndim; d++) weft_strbuf_printf(sb, d ? ", %lld" : "%lld", (long long)b->shape[d]);
    weft_strbuf_puts(sb, "]");
}

static const char *const for_prefix[WEFT_FOR_KIND_COUNT] = {"", "parallel ", "vectorized ", "unrolled ", ""};

/* `tail` says s is the last statement of its block, so an ALLOCATE's scope is visible
 * without braces. */
static void print_stmt(printer *p, const weft_stmt *s, int ind, bool tail)
{
    weft_strbuf *sb = p->sb;
    if (!s) {
        put_indent(sb, ind);
        weft_strbuf_puts(sb, "<null>\n");
        return;
    }
    switch (s->kind) {
    case WEFT_STMT_FOR: {
        const weft_expr *v = s->u.loop.var, *lo = s->u.loop.min, *ext = s->u.loop.extent;
        put_indent(sb, ind);
        if (s->u.loop.kind == WEFT_FOR_THREAD_BOUND) {
            int ax = s->u.loop.thread_axis;
            weft_strbuf_printf(sb, "thread_bound(%s) ", ax >= 0 && ax < WEFT_THREAD_AXIS_COUNT ? weft_thread_axis_names[ax] : "?");
        } else if ((unsigned)s->u.loop.kind < WEFT_FOR_KIND_COUNT) {
            weft_strbuf_puts(sb, for_prefix[s->u.loop.kind]);
        }
        bool bound = v && v->kind == WEFT_EXPR_VAR && bind_var(p, v);
        weft_strbuf_puts(sb, "for (");
        print_expr(p, v);
        weft_strbuf_puts(sb, " = ");
        print_expr(p, lo);
        weft_strbuf_puts(sb, "; ");
        print_expr(p, v);
        weft_strbuf_puts(sb, " < ");
        if (lo && ext && lo->kind == WEFT_EXPR_INT && ext->kind == WEFT_EXPR_INT) {
            weft_strbuf_printf(sb, "%lld", (long long)((uint64_t)lo->u.imm_int + (uint64_t)ext->u.imm_int));
        } else if (lo && weft_expr_is_int_const(lo, 0)) {
            print_operand(p, ext, PREC_CMP + 1);
        } else {
            print_operand(p, lo, PREC_ADD);
            weft_strbuf_puts(sb, " + ");
            print_operand(p, ext, PREC_ADD + 1);
        }
        weft_strbuf_puts(sb, "; ");
        print_expr(p, v);
        weft_strbuf_puts(sb, "++) {");
        if (s->u.loop.auto_unroll > 0) weft_strbuf_printf(sb, "  // auto_unroll=%d", s->u.loop.auto_unroll);
        weft_strbuf_puts(sb, "\n");
        print_stmt(p, s->u.loop.body, ind + 1, true);
        if (bound) p->n_vars--;
        put_indent(sb, ind);
        weft_strbuf_puts(sb, "}\n");
        return;
    }
    case WEFT_STMT_STORE:
        put_indent(sb, ind);
        weft_strbuf_printf(sb, "%s[", s->u.store.buf->name);
        print_expr(p, s->u.store.index);
        weft_strbuf_puts(sb, "] = ");
        print_expr(p, s->u.store.value);
        weft_strbuf_puts(sb, "\n");
        return;
    case WEFT_STMT_ALLOCATE: {
        const weft_buffer *b = s->u.alloc.buf;
        put_indent(sb, ind);
        weft_strbuf_printf(sb, "allocate %s: ", b->name);
        put_buffer_type(sb, b);
        weft_strbuf_printf(sb, " %s%s\n", (unsigned)b->scope < WEFT_SCOPE_COUNT ? weft_scope_names[b->scope] : "?",
                           tail ? "" : " {");
        print_stmt(p, s->u.alloc.body, tail ? ind : ind + 1, true);
        if (!tail) {
            put_indent(sb, ind);
            weft_strbuf_puts(sb, "}\n");
        }
        return;
    }
    case WEFT_STMT_IF:
        put_indent(sb, ind);
        weft_strbuf_puts(sb, "if (");
        print_expr(p, s->u.cond.cond);
        weft_strbuf_puts(sb, ") {\n");
        print_stmt(p, s->u.cond.then_s, ind + 1, true);
        if (s->u.cond.else_s) {
            put_indent(sb, ind);
            weft_strbuf_puts(sb, "} else {\n");
            print_stmt(p, s->u.cond.else_s, ind + 1, true);
        }
        put_indent(sb, ind);
        weft_strbuf_puts(sb, "}\n");
        return;
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) print_stmt(p, s->u.seq.items[i], ind, tail && i == s->u.seq.n - 1);
        return;
    case WEFT_STMT_BARRIER:
        put_indent(sb, ind);
        weft_strbuf_puts(sb, "barrier\n");
        return;
    case WEFT_STMT_PREFETCH:
        put_indent(sb, ind);
        weft_strbuf_printf(sb, "prefetch %s[", s->u.store.buf->name);
        print_expr(p, s->u.store.index);
        weft_strbuf_puts(sb, "]\n");
        return;
    default:
        put_indent(sb, ind);
        weft_strbuf_printf(sb, "<stmt kind %d>\n", (int)s->kind);
        return;
    }
}

void weft_ir_print_stmt(weft_strbuf *sb, const weft_stmt *s, int indent)
{
    printer p = {sb, NULL, 0, 0};
    print_stmt(&p, s, indent, true);
    free(p.vars);
}

char *weft_ir_stmt_str(const weft_stmt *s)
{
    weft_strbuf sb = {0};
    weft_ir_print_stmt(&sb, s, 0);
    return weft_strbuf_take(&sb);
}

char *weft_ir_func_str(const weft_loop_func *f)
{
    weft_strbuf sb = {0};
    weft_strbuf_printf(&sb, "func %s(", f->name ? f->name : "?");
    for (int i = 0; i < f->n_params; i++) {
        const weft_buffer *b = f->params[i];
        weft_strbuf_printf(&sb, "%s%s: ", i ? ", " : "", b->name);
        put_buffer_type(&sb, b);
        if (b->scope != WEFT_SCOPE_GLOBAL && (unsigned)b->scope < WEFT_SCOPE_COUNT)
            weft_strbuf_printf(&sb, " %s", weft_scope_names[b->scope]);
    }
    weft_strbuf_puts(&sb, ") {\n");
    weft_ir_print_stmt(&sb, f->body, 1);
    weft_strbuf_puts(&sb, "}\n");
    return weft_strbuf_take(&sb);
}

/* ---- tensor expressions ------------------------------------------------------------- */

static void put_shape(weft_strbuf *sb, weft_dtype t, int ndim, const int64_t *shape)
{
    weft_strbuf_printf(sb, "%s[", weft_dtype_name(t));
    for (int d = 0; d < ndim; d++) weft_strbuf_printf(sb, d ? ", %lld" : "%lld", (long long)shape[d]);
    weft_strbuf_puts(sb, "]");
}

/* compute C[i, j] = sum(body, axis=[k:32])  # float32[64, 64] */
static void print_compute(weft_strbuf *sb, const weft_tensor *t)
{
    printer p = {sb, NULL, 0, 0};
    for (int d = 0; d < t->ndim; d++) bind_var(&p, t->axis[d].var);
    for (int r = 0; r < t->n_reduce; r++) bind_var(&p, t->reduce_axis[r].var);
    weft_strbuf_printf(sb, "compute %s[", t->name);
    for (int d = 0; d < t->ndim; d++) {
        if (d) weft_strbuf_puts(sb, ", ");
        print_expr(&p, t->axis[d].var);
    }
    weft_strbuf_puts(sb, "] = ");
    bool reduce = t->reduce != WEFT_REDUCE_NONE && (unsigned)t->reduce < WEFT_REDUCE_COUNT;
    if (reduce) weft_strbuf_printf(sb, "%s(", weft_reduce_names[t->reduce]);
    print_expr(&p, t->body);
    if (reduce) {
        weft_strbuf_puts(sb, ", axis=[");
        for (int r = 0; r < t->n_reduce; r++) {
            if (r) weft_strbuf_puts(sb, ", ");
            print_expr(&p, t->reduce_axis[r].var);
            weft_strbuf_printf(sb, ":%lld", (long long)t->reduce_axis[r].extent);
        }
        weft_strbuf_puts(sb, "])");
    }
    weft_strbuf_puts(sb, "  # ");
    put_shape(sb, t->dtype, t->ndim, t->shape);
    weft_strbuf_puts(sb, "\n");
    free(p.vars);
}

void weft_te_print_func(weft_strbuf *sb, const weft_te_func *f)
{
    weft_strbuf_printf(sb, "func %s(", f->name ? f->name : "?");
    for (int i = 0; i < f->n_inputs; i++) weft_strbuf_printf(sb, "%s%s", i ? ", " : "", f->inputs[i]->name);
    weft_strbuf_puts(sb, ") -> (");
    for (int i = 0; i < f->n_outputs; i++) weft_strbuf_printf(sb, "%s%s", i ? ", " : "", f->outputs[i]->name);
    weft_strbuf_puts(sb, ")\n");
    for (int i = 0; i < f->n_tensors; i++) {
        const weft_tensor *t = f->tensors[i];
        if (t->is_placeholder) {
            weft_strbuf_printf(sb, "placeholder %s: ", t->name);
            put_shape(sb, t->dtype, t->ndim, t->shape);
            weft_strbuf_puts(sb, "\n");
        } else {
            print_compute(sb, t);
        }
    }
}

char *weft_te_func_str(const weft_te_func *f)
{
    weft_strbuf sb = {0};
    weft_te_print_func(&sb, f);
    return weft_strbuf_take(&sb);
}
