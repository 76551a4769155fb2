/* The reference interpreter for loop IR, as the target "interp" (semantics in interp.h).
 *
 * program.c translates the statement tree into flat arrays with loop variables resolved to
 * slots of a flat environment, so run() does no lookups and no allocation per node: it
 * allocates the environment and the ALLOCATE'd buffers once per run and frees them on exit.
 *
 * Values are an untagged union (program.h): every node's class (bool, int32, int64, float32,
 * float64) is fixed at compile time from its dtype, so the evaluator knows which member is
 * live. float32 values live in the `f` member and are computed in float.
 *
 * Errors found while running (out-of-bounds access, integer division by zero) are recorded
 * in the run context, first one wins; evaluation finishes the current statement with dummy
 * values and the statement walk then unwinds.
 */
#include "targets/interp/interp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/binop.h"
#include "ir/error.h"
#include "ir/print.h"
#include "targets/interp/program.h"
#include "targets/target.h"
#include "runtime/mem.h"

struct weft_target {
    int unused;
};

static bool class_is_float(int cls) { return cls == V_F32 || cls == V_F64; }

/* ---- execution ---------------------------------------------------------------------- */

typedef struct rctx {
    const weft_kernel *k;
    ival *slots;     /* loop variable values */
    void **mem;      /* base pointer per buffer slot */
    weft_status st;  /* first run-time error */
    /* GPU mode (weft_interp_run_gpu): see exec_block. */
    bool gpu, reverse, in_block, stop;
    int64_t tid[3];   /* the running thread's threadIdx.x/y/z */
    int phase, bcount;
    int64_t budget; /* loop iterations left (weft_interp_run_budget); < 0: unlimited */
} rctx;

/* Whether the running thread's effects count: always on the CPU; in a GPU block only in the
 * phase (barrier interval) being run. */
static bool live(const rctx *c) { return !c->in_block || c->bcount == c->phase; }

static void rfail_oob(rctx *c, const char *what, const ibuf *b, int64_t i)
{
    if (c->st != WEFT_OK) return;
    c->st = weft_fail(WEFT_ERR_INTERNAL, "interp: out-of-bounds %s buffer %s in %s: index %lld, size %lld", what, b->name,
                      c->k->name, (long long)i, (long long)b->size);
}

/* Binary ops by ir/binop.c's semantics (the same as constant folding). */
static ival bin_int(rctx *c, int op, int64_t p, int64_t q, bool is32)
{
    ival r;
    if (!weft_binop_int((weft_expr_kind)op, p, q, &r.i)) {
        if (c->st == WEFT_OK)
            c->st = weft_fail(WEFT_ERR_INTERNAL, "interp: integer %s by zero in %s", weft_expr_kind_names[op], c->k->name);
        r.i = 0;
        return r;
    }
    if (is32 && !(weft_expr_kind_flags[op] & (WEFT_KF_COMPARE | WEFT_KF_LOGIC))) r.i = weft_binop_wrap(WEFT_I32, r.i);
    return r;
}

/* float32 ops computed in float; comparisons give r.i. */
static ival bin_f32(int op, float p, float q)
{
    ival r = {0};
    if (!weft_binop_f32((weft_expr_kind)op, p, q, &r.f)) weft_binop_fcmp((weft_expr_kind)op, p, q, &r.i);
    return r;
}

static ival bin_f64(int op, double p, double q)
{
    ival r = {0};
    if (!weft_binop_f64((weft_expr_kind)op, p, q, &r.d)) weft_binop_fcmp((weft_expr_kind)op, p, q, &r.i);
    return r;
}

/* Float to integer: truncation toward zero, NaN -> 0, saturating at the type's range. */
static int64_t float_to_int(double v, bool is32)
{
    double lo = is32 ? -2147483648.0 : -9223372036854775808.0, hi = is32 ? 2147483648.0 : 9223372036854775808.0;
    if (isnan(v)) return 0;
    if (v <= lo) return is32 ? INT32_MIN : INT64_MIN;
    if (v >= hi) return is32 ? INT32_MAX : INT64_MAX;
    return (int64_t)v;
}

static ival cast_value(int from, int to, ival x)
{
    ival r;
    double v = from == V_F32 ? (double)x.f : from == V_F64 ? x.d : 0.0;
    bool from_float = class_is_float(from);
    switch (to) {
    case V_BOOL: r.i = from_float ? v != 0.0 : x.i != 0; break;
    case V_I32: r.i = from_float ? float_to_int(v, true) : (int32_t)(uint32_t)(uint64_t)x.i; break;
    case V_I64: r.i = from_float ? float_to_int(v, false) : x.i; break;
    case V_F32: r.f = from == V_F32 ? x.f : from == V_F64 ? (float)x.d : (float)x.i; break;
    default: r.d = from_float ? v : (double)x.i; break;
    }
    return r;
}

static ival call_f32(int fn, float x, float y)
{
    ival r;
    switch (fn) {
    case WEFT_INTRIN_EXP: r.f = expf(x); break;
    case WEFT_INTRIN_LOG: r.f = logf(x); break;
    case WEFT_INTRIN_SQRT: r.f = sqrtf(x); break;
    case WEFT_INTRIN_RSQRT: r.f = 1.0f / sqrtf(x); break;
    case WEFT_INTRIN_TANH: r.f = tanhf(x); break;
    case WEFT_INTRIN_ERF: r.f = erff(x); break;
    case WEFT_INTRIN_POW: r.f = powf(x, y); break;
    case WEFT_INTRIN_FABS: r.f = fabsf(x); break;
    case WEFT_INTRIN_FLOOR: r.f = floorf(x); break;
    case WEFT_INTRIN_CEIL: r.f = ceilf(x); break;
    case WEFT_INTRIN_ROUND: r.f = nearbyintf(x); break; /* default rounding mode: ties to even */
    case WEFT_INTRIN_SIN: r.f = sinf(x); break;
    case WEFT_INTRIN_COS: r.f = cosf(x); break;
    default: r.f = 1.0f / (1.0f + expf(-x)); break; /* sigmoid */
    }
    return r;
}

static ival call_f64(int fn, double x, double y)
{
    ival r;
    switch (fn) {
    case WEFT_INTRIN_EXP: r.d = exp(x); break;
    case WEFT_INTRIN_LOG: r.d = log(x); break;
    case WEFT_INTRIN_SQRT: r.d = sqrt(x); break;
    case WEFT_INTRIN_RSQRT: r.d = 1.0 / sqrt(x); break;
    case WEFT_INTRIN_TANH: r.d = tanh(x); break;
    case WEFT_INTRIN_ERF: r.d = erf(x); break;
    case WEFT_INTRIN_POW: r.d = pow(x, y); break;
    case WEFT_INTRIN_FABS: r.d = fabs(x); break;
    case WEFT_INTRIN_FLOOR: r.d = floor(x); break;
    case WEFT_INTRIN_CEIL: r.d = ceil(x); break;
    case WEFT_INTRIN_ROUND: r.d = nearbyint(x); break;
    case WEFT_INTRIN_SIN: r.d = sin(x); break;
    case WEFT_INTRIN_COS: r.d = cos(x); break;
    default: r.d = 1.0 / (1.0 + exp(-x)); break;
    }
    return r;
}

static ival eval(rctx *c, int32_t n);

/* LOAD of a float32 or int64 buffer (the common cases; others go through the generic path). */
static ival load_checked(rctx *c, const inode *e)
{
    ival x;
    int64_t i = eval(c, e->b).i;
    const ibuf *b = &c->k->bufs[e->a];
    x.i = 0;
    if (i < 0 || i >= b->size) {
        rfail_oob(c, "load from", b, i);
        return x;
    }
    if (e->cls == V_F32) x.f = ((const float *)c->mem[e->a])[i];
    else x.i = ((const int64_t *)c->mem[e->a])[i];
    return x;
}

static ival eval(rctx *c, int32_t n)
{
    const inode *e = &c->k->nodes[n];
    ival x, y, z;
    switch (e->op) {
    case OP_I64_ADD: x = eval(c, e->a), y = eval(c, e->b), x.i = (int64_t)((uint64_t)x.i + (uint64_t)y.i); return x;
    case OP_I64_SUB: x = eval(c, e->a), y = eval(c, e->b), x.i = (int64_t)((uint64_t)x.i - (uint64_t)y.i); return x;
    case OP_I64_MUL: x = eval(c, e->a), y = eval(c, e->b), x.i = (int64_t)((uint64_t)x.i * (uint64_t)y.i); return x;
    case OP_F32_ADD: x = eval(c, e->a), y = eval(c, e->b), x.f = x.f + y.f; return x;
    case OP_F32_SUB: x = eval(c, e->a), y = eval(c, e->b), x.f = x.f - y.f; return x;
    case OP_F32_MUL: x = eval(c, e->a), y = eval(c, e->b), x.f = x.f * y.f; return x;
    case OP_F32_DIV: x = eval(c, e->a), y = eval(c, e->b), x.f = x.f / y.f; return x;
    case OP_F32_LOAD:
    case OP_I64_LOAD: return load_checked(c, e);
    case WEFT_EXPR_INT:
    case WEFT_EXPR_FLOAT: return e->imm;
    case WEFT_EXPR_VAR: return c->slots[e->a];
    case WEFT_EXPR_LOAD: {
        int64_t i = eval(c, e->b).i;
        const ibuf *b = &c->k->bufs[e->a];
        const void *m = c->mem[e->a];
        x.i = 0;
        if (i < 0 || i >= b->size) {
            rfail_oob(c, "load from", b, i);
            return x;
        }
        switch (e->cls) {
        case V_F32: x.f = ((const float *)m)[i]; break;
        case V_F64: x.d = ((const double *)m)[i]; break;
        case V_I32: x.i = ((const int32_t *)m)[i]; break;
        case V_I64: x.i = ((const int64_t *)m)[i]; break;
        default: x.i = ((const uint8_t *)m)[i] != 0; break;
        }
        return x;
    }
    case WEFT_EXPR_NOT:
        x = eval(c, e->a);
        x.i = !x.i;
        return x;
    case WEFT_EXPR_CAST: return cast_value(e->cls, e->rcls, eval(c, e->a));
    case WEFT_EXPR_SELECT:
        /* All three are evaluated, like the compiled select. */
        x = eval(c, e->a);
        y = eval(c, e->b);
        z = eval(c, e->c);
        return x.i ? y : z;
    case WEFT_EXPR_CALL:
        x = eval(c, e->a);
        y = e->b >= 0 ? eval(c, e->b) : x;
        return e->cls == V_F32 ? call_f32(e->c, x.f, y.f) : call_f64(e->c, x.d, y.d);
    default:
        x = eval(c, e->a);
        y = eval(c, e->b);
        switch (e->cls) {
        case V_F32: return bin_f32(e->op, x.f, y.f);
        case V_F64: return bin_f64(e->op, x.d, y.d);
        default: return bin_int(c, e->op, x.i, y.i, e->cls == V_I32);
        }
    }
}

/* Runs statement s; false once an error has been recorded. */
static bool exec(rctx *c, int32_t si);

/* Block dimensions of the thread loops under statement si (the largest extent per axis) and
 * whether a block-bound loop is nested there. */
static void scan_block(rctx *c, int32_t si, int64_t dims[3], bool *has_block)
{
    const istmt *s = &c->k->stmts[si];
    switch (s->kind) {
    case WEFT_STMT_FOR:
        if (s->axis >= WEFT_BLOCK_X && s->axis <= WEFT_BLOCK_Z) *has_block = true;
        if (s->axis >= WEFT_THREAD_X) {
            int64_t n = eval(c, s->c).i;
            if (n > dims[s->axis - WEFT_THREAD_X]) dims[s->axis - WEFT_THREAD_X] = n;
        }
        scan_block(c, s->d, dims, has_block);
        return;
    case WEFT_STMT_ALLOCATE: scan_block(c, s->d, dims, has_block); return;
    case WEFT_STMT_IF:
        scan_block(c, s->c, dims, has_block);
        if (s->d >= 0) scan_block(c, s->d, dims, has_block);
        return;
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->b; i++) scan_block(c, c->k->kids[s->a + i], dims, has_block);
        return;
    default: return;
    }
}

/* One GPU block: statement si run by every thread of the block, phase by phase. In phase p
 * each thread in turn (threadIdx order, or reversed) replays si from the start with its
 * effects suppressed until it has passed p barriers, runs until its next barrier, and stops;
 * phases go on while some thread stopped at a barrier. Control flow in loop IR depends on
 * indices only, so a replay reaches the same barriers. Running threads one after another
 * within a phase is a legal GPU interleaving: a missing barrier shows as a wrong result
 * (forward or reverse order). */
static bool exec_block(rctx *c, int32_t si)
{
    int64_t dims[3] = {1, 1, 1};
    bool nested = false;
    scan_block(c, si, dims, &nested);
    if (c->st != WEFT_OK) return false;
    int64_t n = dims[0] * dims[1] * dims[2];
    for (int b = 0; b < c->k->n_bufs; b++) /* a new block's shared memory holds garbage */
        if (c->k->bufs[b].scope == WEFT_SCOPE_SHARED && c->k->bufs[b].param < 0) memset(c->mem[b], 0xFF, c->k->bufs[b].bytes);
    c->in_block = true;
    bool more = true, ok = true;
    for (c->phase = 0; more && ok; c->phase++) {
        more = false;
        for (int64_t t = 0; t < n && ok; t++) {
            int64_t u = c->reverse ? n - 1 - t : t;
            c->tid[0] = u % dims[0];
            c->tid[1] = u / dims[0] % dims[1];
            c->tid[2] = u / (dims[0] * dims[1]);
            c->bcount = 0;
            c->stop = false;
            ok = exec(c, si);
            more |= c->stop;
        }
    }
    c->in_block = c->stop = false;
    return ok;
}

static bool exec(rctx *c, int32_t si)
{
    const istmt *s = &c->k->stmts[si];
    switch (s->kind) {
    case WEFT_STMT_FOR: {
        int64_t lo = eval(c, s->b).i, n = eval(c, s->c).i;
        if (c->st != WEFT_OK) return false;
        ival *v = &c->slots[s->a];
        if (c->gpu && c->in_block && s->axis >= WEFT_THREAD_X) { /* this thread's iteration */
            int64_t t = c->tid[s->axis - WEFT_THREAD_X];
            if (t >= n) return true;
            v->i = (int64_t)((uint64_t)lo + (uint64_t)t);
            return exec(c, s->d);
        }
        bool block_body = false;
        if (c->gpu && !c->in_block && s->axis >= WEFT_BLOCK_X) {
            int64_t dims[3] = {1, 1, 1};
            bool nested = false;
            scan_block(c, s->d, dims, &nested);
            block_body = !nested; /* the innermost block loop's body is one block */
        }
        if (c->gpu && !c->in_block && s->axis >= WEFT_THREAD_X) return exec_block(c, si); /* a grid of one block */
        for (int64_t j = 0; j < n; j++) {
            if (c->budget >= 0 && c->budget-- == 0) {
                if (c->st == WEFT_OK)
                    c->st = weft_fail(WEFT_ERR_TIMEOUT, "interp: %s ran past its budget of loop iterations", c->k->name);
                return false;
            }
            v->i = (int64_t)((uint64_t)lo + (uint64_t)j);
            if (!(block_body ? exec_block(c, s->d) : exec(c, s->d))) return false;
            if (c->stop) return true;
        }
        return true;
    }
    case WEFT_STMT_BARRIER:
        if (!c->in_block) return true;
        if (++c->bcount > c->phase) c->stop = true;
        return true;
    case WEFT_STMT_STORE: {
        int64_t i = eval(c, s->b).i;
        ival x = eval(c, s->c);
        if (c->st != WEFT_OK) return false;
        const ibuf *b = &c->k->bufs[s->a];
        if (i < 0 || i >= b->size) {
            rfail_oob(c, "store to", b, i);
            return false;
        }
        if (!live(c)) return true;
        void *m = c->mem[s->a];
        switch (b->cls) {
        case V_F32: ((float *)m)[i] = x.f; break;
        case V_F64: ((double *)m)[i] = x.d; break;
        case V_I32: ((int32_t *)m)[i] = (int32_t)x.i; break;
        case V_I64: ((int64_t *)m)[i] = x.i; break;
        default: ((uint8_t *)m)[i] = x.i != 0; break;
        }
        return true;
    }
    case WEFT_STMT_ALLOCATE:
        /* In a GPU block a shared buffer is the block's, filled once when the block starts
         * (exec_block), not at each entry: other threads of the phase may still read it. */
        if (live(c) && !(c->in_block && c->k->bufs[s->a].scope == WEFT_SCOPE_SHARED))
            memset(c->mem[s->a], 0xFF, c->k->bufs[s->a].bytes);
        return exec(c, s->d);
    case WEFT_STMT_IF: {
        ival x = eval(c, s->b);
        if (c->st != WEFT_OK) return false;
        if (x.i) return exec(c, s->c);
        return s->d < 0 || exec(c, s->d);
    }
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->b; i++) {
            if (!exec(c, c->k->kids[s->a + i])) return false;
            if (c->stop) return true;
        }
        return true;
    default: return false;
    }
}

static weft_status run_mode(weft_kernel *k, void *const *args, bool gpu, bool reverse, int64_t budget)
{
    if (!k) return weft_fail(WEFT_ERR_INVALID_ARG, "interp: run needs a kernel");
    rctx c = {.k = k, .gpu = gpu, .reverse = reverse, .budget = budget};
    c.slots = weft_calloc((size_t)(k->n_slots ? k->n_slots : 1), sizeof *c.slots);
    c.mem = weft_calloc((size_t)(k->n_bufs ? k->n_bufs : 1), sizeof *c.mem);
    if (!c.slots || !c.mem) {
        c.st = weft_fail(WEFT_ERR_NOMEM, "interp: out of memory running %s", k->name);
        goto done;
    }
    for (int i = 0; i < k->n_bufs; i++) {
        const ibuf *b = &k->bufs[i];
        if (b->param >= 0) {
            if (!args || !args[b->param]) {
                c.st = weft_fail(WEFT_ERR_INVALID_ARG, "interp: argument %d (%s) of %s is NULL", b->param, b->name, k->name);
                goto done;
            }
            c.mem[i] = args[b->param];
        } else if (!(c.mem[i] = weft_malloc(b->bytes ? b->bytes : 1))) {
            c.st = weft_fail(WEFT_ERR_NOMEM, "interp: out of memory allocating %s (%zu bytes) in %s", b->name, b->bytes,
                             k->name);
            goto done;
        }
    }
    exec(&c, k->root);
done:
    if (c.mem)
        for (int i = 0; i < k->n_bufs; i++)
            if (k->bufs[i].param < 0) free(c.mem[i]);
    free(c.mem);
    free(c.slots);
    return c.st;
}

static weft_status interp_run(weft_kernel *k, void *const *args, const weft_exec *ex)
{
    (void)ex; /* every loop runs serially */
    return run_mode(k, args, false, false, -1);
}

weft_status weft_interp_run_gpu(const weft_loop_func *f, void *const *args, bool reverse)
{
    weft_kernel *k = NULL;
    weft_status st = weft_interp_program_compile(f, &k);
    if (st != WEFT_OK) return st;
    st = run_mode(k, args, true, reverse, -1);
    weft_interp_program_destroy(k);
    return st;
}

weft_status weft_interp_kernel_run_gpu(weft_kernel *k, void *const *args, bool reverse)
{
    return run_mode(k, args, true, reverse, -1);
}

weft_status weft_interp_run(const weft_loop_func *f, void *const *args)
{
    weft_kernel *k = NULL;
    weft_status st = weft_interp_program_compile(f, &k);
    if (st != WEFT_OK) return st;
    st = interp_run(k, args, NULL);
    weft_interp_program_destroy(k);
    return st;
}

/* ---- target slots ------------------------------------------------------------------- */

static weft_status interp_compile(weft_target *t, const weft_loop_func *f, weft_kernel **out)
{
    (void)t;
    return weft_interp_program_compile(f, out);
}

static weft_status interp_create(weft_target **out)
{
    *out = weft_calloc(1, sizeof **out);
    return *out ? WEFT_OK : weft_fail(WEFT_ERR_NOMEM, "interp: out of memory creating the target");
}

static void interp_destroy(weft_target *t) { free(t); }

static void interp_caps(const weft_target *t, weft_target_caps *out)
{
    (void)t;
    memset(out, 0, sizeof *out);
    out->name = "interp";
    out->vector_bits = 0;
    out->vector_lanes_f32 = 1;
    out->max_threads = 1;
    out->has_thread_binding = false;
    out->scopes[WEFT_SCOPE_GLOBAL] = out->scopes[WEFT_SCOPE_LOCAL] = true;
    strcpy(out->cpu, "interp");
}

/* The "target code" of the interpreter is the loop IR itself. */
static weft_status interp_dump(weft_target *t, const weft_loop_func *f, weft_dump_kind kind, char **out)
{
    (void)t;
    *out = NULL;
    if (kind != WEFT_DUMP_IR) return weft_fail(WEFT_ERR_UNSUPPORTED, "interp: no assembly to dump");
    *out = weft_ir_func_str(f);
    return *out ? WEFT_OK : weft_fail(WEFT_ERR_NOMEM, "interp: out of memory printing %s", f->name);
}

const weft_target_ops weft_target_interp_ops = {
    .name = "interp",
    .create = interp_create,
    .destroy = interp_destroy,
    .caps = interp_caps,
    .compile = interp_compile,
    .run = interp_run,
    .kernel_destroy = weft_interp_program_destroy,
    .dump = interp_dump,
};

weft_status weft_interp_run_budget(const weft_loop_func *f, void *const *args, int64_t max_iterations)
{
    weft_kernel *k = NULL;
    weft_status st = weft_interp_program_compile(f, &k);
    if (st != WEFT_OK) return st;
    st = run_mode(k, args, false, false, max_iterations < 0 ? 0 : max_iterations);
    weft_interp_program_destroy(k);
    return st;
}
