/* GPU C emitter (contract in targets/gpu/emit_c.h). Expressions are printed fully
 * parenthesised with explicit literal types so the C++ types match the IR's dtypes exactly
 * (i64 is long long, i32 int, f32 float, f64 double, bool bool). Variables and buffers are
 * printed as their names with non-identifier characters replaced by '_'; variables get their
 * id appended so that two loops named alike never clash. */
#include "targets/gpu/emit_c.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/strbuf.h"

const weft_gpu_dialect weft_gpu_dialect_cuda = {"cuda", "", "__syncthreads();"};
/* hiprtc provides the HIP device builtins (threadIdx, __syncthreads, expf, __int_as_float,
 * __launch_bounds__) without an include, under the same names as CUDA. */
const weft_gpu_dialect weft_gpu_dialect_hip = {"hip", "", "__syncthreads();"};

static const char helpers[] =
    "typedef long long i64;\n"
    "template <class T> __device__ __forceinline__ T weft_min(T a, T b) { return a < b ? a : b; }\n"
    "template <class T> __device__ __forceinline__ T weft_max(T a, T b) { return a > b ? a : b; }\n"
    "template <class T> __device__ __forceinline__ T weft_floordiv(T a, T b)\n"
    "{ T q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }\n"
    "template <class T> __device__ __forceinline__ T weft_floormod(T a, T b)\n"
    "{ T r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n\n";

typedef struct ectx {
    weft_strbuf *sb;
    const weft_gpu_launch *l;
    weft_status st;
} ectx;

static void put_ident(weft_strbuf *sb, const char *name)
{
    if (!name || !*name) name = "v";
    if (!((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') || *name == '_')) weft_strbuf_puts(sb, "v_");
    for (const char *p = name; *p; p++) {
        char ch = *p;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
        weft_strbuf_printf(sb, "%c", ok ? ch : '_');
    }
}

static void put_var(weft_strbuf *sb, const weft_expr *v)
{
    put_ident(sb, v->u.var.name);
    weft_strbuf_printf(sb, "_%u", (unsigned)v->u.var.id);
}

static const char *ctype(weft_dtype t)
{
    if (weft_dtype_is_bool(t)) return "bool";
    if (weft_dtype_is_float(t)) return t.bits == 64 ? "double" : "float";
    return t.bits == 64 ? "i64" : "int";
}

static void put_float(weft_strbuf *sb, double v, bool f32)
{
    if (isnan(v)) weft_strbuf_puts(sb, f32 ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000LL)");
    else if (isinf(v))
        weft_strbuf_printf(sb, f32 ? "__int_as_float(0x%s)" : "__longlong_as_double(0x%s)",
                           f32 ? (v > 0 ? "7f800000" : "ff800000") : (v > 0 ? "7ff0000000000000LL" : "fff0000000000000LL"));
    else {
        char buf[64];
        snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g", v);
        weft_strbuf_printf(sb, "%s%s%s", buf, strpbrk(buf, ".e") ? "" : ".0", f32 ? "f" : "");
    }
}

static void expr(ectx *c, const weft_expr *e);

static void call(ectx *c, const char *fn, const weft_expr *a, const weft_expr *b)
{
    weft_strbuf_printf(c->sb, "%s(", fn);
    expr(c, a);
    if (b) {
        weft_strbuf_puts(c->sb, ", ");
        expr(c, b);
    }
    weft_strbuf_puts(c->sb, ")");
}

static void expr(ectx *c, const weft_expr *e)
{
    weft_strbuf *sb = c->sb;
    bool f32 = weft_dtype_is_float(e->dtype) && e->dtype.bits == 32;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT:
        if (weft_dtype_is_bool(e->dtype)) weft_strbuf_puts(sb, e->u.imm_int ? "true" : "false");
        else if (e->dtype.bits == 64) {
            if (e->u.imm_int == INT64_MIN) weft_strbuf_puts(sb, "(-9223372036854775807LL - 1)");
            else weft_strbuf_printf(sb, e->u.imm_int < 0 ? "(%lldLL)" : "%lldLL", (long long)e->u.imm_int);
        } else weft_strbuf_printf(sb, e->u.imm_int < 0 ? "(%lld)" : "%lld", (long long)e->u.imm_int);
        return;
    case WEFT_EXPR_FLOAT:
        weft_strbuf_puts(sb, "(");
        put_float(sb, e->u.imm_float, f32);
        weft_strbuf_puts(sb, ")");
        return;
    case WEFT_EXPR_VAR: put_var(sb, e); return;
    case WEFT_EXPR_FLOORDIV: call(c, "weft_floordiv", e->u.bin.a, e->u.bin.b); return;
    case WEFT_EXPR_FLOORMOD: call(c, "weft_floormod", e->u.bin.a, e->u.bin.b); return;
    case WEFT_EXPR_MIN: call(c, "weft_min", e->u.bin.a, e->u.bin.b); return;
    case WEFT_EXPR_MAX: call(c, "weft_max", e->u.bin.a, e->u.bin.b); return;
    case WEFT_EXPR_NOT: call(c, "!", e->u.un.a, NULL); return;
    case WEFT_EXPR_SELECT:
        weft_strbuf_puts(sb, "(");
        expr(c, e->u.sel.c);
        weft_strbuf_puts(sb, " ? ");
        expr(c, e->u.sel.t);
        weft_strbuf_puts(sb, " : ");
        expr(c, e->u.sel.f);
        weft_strbuf_puts(sb, ")");
        return;
    case WEFT_EXPR_CAST:
        weft_strbuf_printf(sb, "((%s)", ctype(e->dtype));
        expr(c, e->u.un.a);
        weft_strbuf_puts(sb, ")");
        return;
    case WEFT_EXPR_CALL: {
        const weft_expr *a = e->u.call.args[0], *b = e->u.call.n > 1 ? e->u.call.args[1] : NULL;
        const char *one = f32 ? "1.0f" : "1.0";
        switch ((weft_intrin)e->u.call.fn) {
        case WEFT_INTRIN_EXP: call(c, f32 ? "expf" : "exp", a, NULL); return;
        case WEFT_INTRIN_LOG: call(c, f32 ? "logf" : "log", a, NULL); return;
        case WEFT_INTRIN_SQRT: call(c, f32 ? "sqrtf" : "sqrt", a, NULL); return;
        case WEFT_INTRIN_TANH: call(c, f32 ? "tanhf" : "tanh", a, NULL); return;
        case WEFT_INTRIN_ERF: call(c, f32 ? "erff" : "erf", a, NULL); return;
        case WEFT_INTRIN_POW: call(c, f32 ? "powf" : "pow", a, b); return;
        case WEFT_INTRIN_FABS: call(c, f32 ? "fabsf" : "fabs", a, NULL); return;
        case WEFT_INTRIN_FLOOR: call(c, f32 ? "floorf" : "floor", a, NULL); return;
        case WEFT_INTRIN_CEIL: call(c, f32 ? "ceilf" : "ceil", a, NULL); return;
        case WEFT_INTRIN_ROUND: call(c, f32 ? "rintf" : "rint", a, NULL); return; /* ties to even */
        case WEFT_INTRIN_SIN: call(c, f32 ? "sinf" : "sin", a, NULL); return;
        case WEFT_INTRIN_COS: call(c, f32 ? "cosf" : "cos", a, NULL); return;
        case WEFT_INTRIN_RSQRT:
            weft_strbuf_printf(sb, "(%s / ", one);
            call(c, f32 ? "sqrtf" : "sqrt", a, NULL);
            weft_strbuf_puts(sb, ")");
            return;
        case WEFT_INTRIN_SIGMOID:
            weft_strbuf_printf(sb, "(%s / (%s + %s(-", one, one, f32 ? "expf" : "exp");
            expr(c, a);
            weft_strbuf_puts(sb, ")))");
            return;
        default: break;
        }
        break;
    }
    case WEFT_EXPR_LOAD:
        put_ident(sb, e->u.load.buf->name);
        weft_strbuf_puts(sb, "[");
        expr(c, e->u.load.index);
        weft_strbuf_puts(sb, "]");
        return;
    default:
        if (weft_expr_is_binary(e)) {
            weft_strbuf_puts(sb, "(");
            expr(c, e->u.bin.a);
            weft_strbuf_printf(sb, " %s ", weft_expr_kind_names[e->kind]);
            expr(c, e->u.bin.b);
            weft_strbuf_puts(sb, ")");
            return;
        }
        break;
    }
    if (c->st == WEFT_OK)
        c->st = weft_fail(WEFT_ERR_UNSUPPORTED, "gpu emit: expression kind %s is not supported",
                          e->kind < WEFT_EXPR_COUNT ? weft_expr_kind_names[e->kind] : "?");
}

static void indent(weft_strbuf *sb, int n) { weft_strbuf_printf(sb, "%*s", 4 * n, ""); }

static void stmt(ectx *c, const weft_stmt *s, int ind, const weft_gpu_dialect *d)
{
    weft_strbuf *sb = c->sb;
    switch (s->kind) {
    case WEFT_STMT_FOR: {
        const weft_expr *v = s->u.loop.var;
        bool zero = weft_expr_is_int_const(s->u.loop.min, 0);
        if (s->u.loop.kind == WEFT_FOR_THREAD_BOUND) {
            int ax = s->u.loop.thread_axis;
            bool blk = ax <= WEFT_BLOCK_Z;
            int dim = blk ? ax - WEFT_BLOCK_X : ax - WEFT_THREAD_X;
            int64_t launch = blk ? c->l->grid[dim] : c->l->block[dim];
            indent(sb, ind);
            weft_strbuf_puts(sb, "{\n");
            indent(sb, ind + 1);
            weft_strbuf_puts(sb, "const i64 ");
            put_var(sb, v);
            weft_strbuf_puts(sb, " = ");
            if (!zero) {
                expr(c, s->u.loop.min);
                weft_strbuf_puts(sb, " + ");
            }
            weft_strbuf_printf(sb, "(i64)%s.%c;\n", blk ? "blockIdx" : "threadIdx", "xyz"[dim]);
            bool guard = !(s->u.loop.extent->kind == WEFT_EXPR_INT && weft_expr_int(s->u.loop.extent) == launch);
            if (guard) {
                indent(sb, ind + 1);
                weft_strbuf_puts(sb, "if (");
                put_var(sb, v);
                weft_strbuf_puts(sb, " < ");
                if (!zero) {
                    expr(c, s->u.loop.min);
                    weft_strbuf_puts(sb, " + ");
                }
                expr(c, s->u.loop.extent);
                weft_strbuf_puts(sb, ") {\n");
            }
            stmt(c, s->u.loop.body, ind + 1 + guard, d);
            if (guard) {
                indent(sb, ind + 1);
                weft_strbuf_puts(sb, "}\n");
            }
            indent(sb, ind);
            weft_strbuf_puts(sb, "}\n");
            return;
        }
        if (s->u.loop.kind == WEFT_FOR_UNROLLED || s->u.loop.kind == WEFT_FOR_VECTORIZED) {
            indent(sb, ind);
            weft_strbuf_puts(sb, "#pragma unroll\n");
        }
        indent(sb, ind);
        weft_strbuf_puts(sb, "for (i64 ");
        put_var(sb, v);
        weft_strbuf_puts(sb, " = ");
        expr(c, s->u.loop.min);
        weft_strbuf_puts(sb, "; ");
        put_var(sb, v);
        weft_strbuf_puts(sb, " < ");
        if (!zero) {
            expr(c, s->u.loop.min);
            weft_strbuf_puts(sb, " + ");
        }
        expr(c, s->u.loop.extent);
        weft_strbuf_puts(sb, "; ++");
        put_var(sb, v);
        weft_strbuf_puts(sb, ") {\n");
        stmt(c, s->u.loop.body, ind + 1, d);
        indent(sb, ind);
        weft_strbuf_puts(sb, "}\n");
        return;
    }
    case WEFT_STMT_STORE:
        indent(sb, ind);
        put_ident(sb, s->u.store.buf->name);
        weft_strbuf_puts(sb, "[");
        expr(c, s->u.store.index);
        weft_strbuf_puts(sb, "] = ");
        expr(c, s->u.store.value);
        weft_strbuf_puts(sb, ";\n");
        return;
    case WEFT_STMT_ALLOCATE: {
        const weft_buffer *b = s->u.alloc.buf;
        indent(sb, ind);
        weft_strbuf_puts(sb, "{\n");
        indent(sb, ind + 1);
        weft_strbuf_printf(sb, "%s%s ", b->scope == WEFT_SCOPE_SHARED ? "__shared__ " : "", ctype(b->dtype));
        put_ident(sb, b->name);
        weft_strbuf_printf(sb, "[%lld];\n", (long long)b->size);
        stmt(c, s->u.alloc.body, ind + 1, d);
        indent(sb, ind);
        weft_strbuf_puts(sb, "}\n");
        return;
    }
    case WEFT_STMT_IF:
        indent(sb, ind);
        weft_strbuf_puts(sb, "if (");
        expr(c, s->u.cond.cond);
        weft_strbuf_puts(sb, ") {\n");
        stmt(c, s->u.cond.then_s, ind + 1, d);
        if (s->u.cond.else_s) {
            indent(sb, ind);
            weft_strbuf_puts(sb, "} else {\n");
            stmt(c, s->u.cond.else_s, ind + 1, d);
        }
        indent(sb, ind);
        weft_strbuf_puts(sb, "}\n");
        return;
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) stmt(c, s->u.seq.items[i], ind, d);
        return;
    case WEFT_STMT_PREFETCH: return; /* a CPU cache hint: nothing on a GPU */
    case WEFT_STMT_BARRIER:
        indent(sb, ind);
        weft_strbuf_printf(sb, "%s\n", d->barrier);
        return;
    default:
        if (c->st == WEFT_OK) c->st = weft_fail(WEFT_ERR_UNSUPPORTED, "gpu emit: statement kind %d", (int)s->kind);
        return;
    }
}

static void param(weft_strbuf *sb, const weft_buffer *b, bool is_const, bool first)
{
    weft_strbuf_printf(sb, "%s%s%s *__restrict__ ", first ? "" : ", ", is_const ? "const " : "", ctype(b->dtype));
    put_ident(sb, b->name);
}

weft_status weft_gpu_emit(const weft_loop_func *f, const weft_gpu_dialect *d, weft_gpu_source *out)
{
    memset(out, 0, sizeof *out);
    int n = weft_gpu_launches(f, out->launches, WEFT_GPU_MAX_LAUNCHES, out->temps, 32, &out->n_temps);
    if (n < 0) return weft_fail(WEFT_ERR_INVALID_ARG, "gpu emit %s: a bound loop has a non-constant extent", f->name);
    if (n > WEFT_GPU_MAX_LAUNCHES || out->n_temps > 32)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "gpu emit %s: more than %d launches or 32 temporaries", f->name,
                         WEFT_GPU_MAX_LAUNCHES);
    out->n_launches = n;
    weft_strbuf sb = {0};
    ectx c = {&sb, NULL, WEFT_OK};
    weft_strbuf_printf(&sb, "// %s: %d kernel%s, generated by weft for %s\n%s%s", f->name, n, n == 1 ? "" : "s", d->name,
                       d->prelude, helpers);
    for (int i = 0; i < n; i++) {
        const weft_gpu_launch *l = &out->launches[i];
        c.l = l;
        weft_strbuf sn = {0};
        put_ident(&sn, f->name);
        weft_strbuf_printf(&sn, "_k%d", i);
        char *kn = weft_strbuf_take(&sn);
        weft_strbuf_free(&sn);
        snprintf(out->names[i], sizeof out->names[i], "%s", kn ? kn : "kernel");
        free(kn);
        int64_t threads = l->block[0] * l->block[1] * l->block[2];
        weft_strbuf_printf(&sb, "// launch %d: grid (%lld, %lld, %lld), block (%lld, %lld, %lld), %lld shared bytes\n", i,
                           (long long)l->grid[0], (long long)l->grid[1], (long long)l->grid[2], (long long)l->block[0],
                           (long long)l->block[1], (long long)l->block[2], (long long)l->shared_bytes);
        weft_strbuf_printf(&sb, "extern \"C\" __global__ void __launch_bounds__(%lld) %s(", (long long)threads, out->names[i]);
        for (int p = 0; p < f->n_params; p++) param(&sb, f->params[p], false, p == 0);
        for (int t = 0; t < out->n_temps; t++) param(&sb, out->temps[t], false, f->n_params == 0 && t == 0);
        weft_strbuf_puts(&sb, ")\n{\n");
        stmt(&c, l->body, 1, d);
        weft_strbuf_puts(&sb, "}\n\n");
    }
    if (c.st != WEFT_OK || sb.failed) {
        weft_strbuf_free(&sb);
        return c.st != WEFT_OK ? c.st : weft_fail(WEFT_ERR_NOMEM, "gpu emit %s: out of memory", f->name);
    }
    out->text = weft_strbuf_take(&sb);
    weft_strbuf_free(&sb);
    return out->text ? WEFT_OK : weft_fail(WEFT_ERR_NOMEM, "gpu emit %s: out of memory", f->name);
}
