/* Features of a lowered kernel for the learned cost model (tuner/cost_model.h).
 *
 * In the spirit of Ansor's per-store features, but aggregated over every STORE of the kernel
 * (sums weighted by trip count, maxima, trip-weighted fractions) so any kernel gives exactly
 * WEFT_FEATURE_DIM floats. One walk over the statement tree keeps the loop stack (kind,
 * extent, var) and the trip count (product of enclosing extents); every STORE contributes its
 * value's arithmetic, its loads, and one access for itself. "lg(x)" below is log2(1 + x).
 *
 * Strides are the coefficient of the innermost enclosing loop's variable in a flat index,
 * found by a small linear analysis over INT/VAR/ADD/SUB/MUL-by-constant/CAST; a
 * subexpression that does not use the variable counts 0; anything else is "unknown"
 * (STRIDE_UNKNOWN, classed as "other"). Touched elements of an access: the product of the
 * extents of the enclosing loops whose variable occurs in the index (capped at the buffer's
 * size); a buffer's touched bytes are the maximum over its accesses times the element size.
 * Reuse of an access: trip count / touched elements.
 *
 * Layout (index -> meaning); slots not listed are 0.
 *   Arithmetic, summed over stores, each weighted by the store's trip count:
 *    0 lg float add/sub            1 lg float mul              2 lg float add/sub fed by a mul (fma-able)
 *    3 lg float div                4 lg float min/max          5 lg float compares + float selects
 *    6 lg intrinsic calls (all)    7 lg transcendental calls (exp log tanh erf pow sigmoid)
 *    8 lg int arithmetic (index math, also in IF conditions)   9 lg int div/floordiv/floormod
 *   10 lg other ops (int/bool compares, and/or/not, casts, non-float selects)
 *   11 lg flops: sum of the float ops of slots 0,1,3,4,5,6
 *   12 lg max over stores of trip-weighted flops
 *   13 lg max over stores of float ops per single execution
 *   Memory:
 *   14 lg loads executed (trip-weighted)   15 lg stores executed (sum of trip counts)
 *   16 loads per store (raw mean over store statements)
 *   17 fraction of accesses (loads + stores, trip-weighted) with stride 0 w.r.t. the innermost loop
 *   18 ... with unit stride        19 ... with any other (or unknown) stride
 *   20 fraction of store executions with unit stride
 *   21 lg max |stride| over accesses       22 trip-weighted mean of lg|stride|
 *   23 fraction of accesses inside a vectorized loop whose stride w.r.t. that loop's var is
 *      neither 0 nor 1 (gathers/scatters)
 *   24 lg touched bytes of global buffers  25 lg touched bytes of local/shared buffers
 *   26 lg touched bytes of the largest buffer                 27 distinct buffers accessed (raw)
 *   28 lg bytes accessed (trip-weighted accesses x element size, no caching)
 *   29 trip-weighted mean of lg(reuse)     30 lg max reuse      31 lg min reuse
 *   32 lg arithmetic intensity: flops / touched bytes (24 + 25)
 *   33 flops / bytes accessed (raw ratio)
 *   Loops:
 *   34 lanes of the innermost vectorized loop (max over stores; 0 when none; raw)
 *   35 vectorized loops (raw)      36 fraction of store executions inside a vectorized loop
 *   37 lg total unrolled steps (sum of unrolled loop extents)
 *   38 lg max product of unrolled extents enclosing a store (replication factor)
 *   39 unrolled loops (raw)
 *   40 lg extent of the outermost parallel loop (max over nests)
 *   41 1 when a parallel loop is the outermost loop of a nest
 *   42 parallel loops (raw)        43 fraction of store executions inside a parallel loop
 *   44 max loop depth at a store (raw)
 *   45 trip-weighted mean of lg(innermost extent)             46 lg min innermost extent
 *   47 lg loops                    48 lg serial loops          49 lg max auto_unroll
 *   50 lg total loop iterations (sum over loops of their trip count: loop overhead)
 *   51 lg store statements
 *   Allocation, guards, misc:
 *   52 local/shared ALLOCATEs (raw)   53 lg their total bytes   54 lg largest allocation bytes
 *   55 lg IFs inside loops (guards)   56 fraction of store executions under an IF
 *   57 thread-bound loops (raw)       58 lg product of thread-bound extents
 *   59 loops with a non-constant extent (raw)
 *   60 lg bytes of the kernel's parameters
 *   Register pressure:
 *   61 lg accumulator lanes of the register tile: max over accumulating stores into a local
 *      buffer (B[x] = B[x] + ..., the same index) of the product of the unrolled extents
 *      enclosing it times the innermost vectorized extent, i.e. the lanes the tile keeps live
 *      (with slot 34's vector width: its registers; beyond the register file it spills)
 *   GPU (kernels with threadIdx-bound loops; 0 elsewhere; see "GPU features" below):
 *   62 lg threads per block        63 loads per FMA at the thread level (raw)
 *
 * Non-constant loop extents are estimated (a MIN with a constant operand gives that constant,
 * otherwise 1). Expression trees are walked as trees; a per-store node budget keeps a
 * pathologically shared DAG from blowing up the walk. Deterministic: no hashing of pointers,
 * buffers are kept in order of first appearance.
 */
#include "tuner/cost_model.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_LOOPS 64
#define MAX_BUFS 128
#define STRIDE_UNKNOWN ((int64_t)1 << 20)
#define NODE_BUDGET 65536

enum {
    F_ADDSUB = 0, F_MUL = 1, F_FMA = 2, F_DIV = 3, F_MINMAX = 4, F_CMPSEL = 5, F_INTRIN = 6, F_TRANSC = 7,
    F_INT = 8, F_INTDIV = 9, F_OTHER = 10, F_FLOPS = 11, F_FLOPS_MAX = 12, F_OPS_PER_STORE = 13,
    F_LOADS = 14, F_STORES = 15, F_LOADS_PER_STORE = 16, F_S0 = 17, F_S1 = 18, F_SN = 19, F_STORE_S1 = 20,
    F_STRIDE_MAX = 21, F_STRIDE_MEAN = 22, F_GATHER = 23, F_BYTES_GLOBAL = 24, F_BYTES_LOCAL = 25,
    F_BYTES_MAXBUF = 26, F_NBUFS = 27, F_BYTES_ACCESSED = 28, F_REUSE_MEAN = 29, F_REUSE_MAX = 30,
    F_REUSE_MIN = 31, F_AI = 32, F_AI_TRAFFIC = 33, F_VEC_LANES = 34, F_N_VEC = 35, F_VEC_FRAC = 36,
    F_UNROLL_STEPS = 37, F_UNROLL_PROD = 38, F_N_UNROLL = 39, F_PAR_EXTENT = 40, F_PAR_OUTER = 41,
    F_N_PAR = 42, F_PAR_FRAC = 43, F_DEPTH = 44, F_INNER_MEAN = 45, F_INNER_MIN = 46, F_N_LOOPS = 47,
    F_N_SERIAL = 48, F_AUTO_UNROLL = 49, F_LOOP_ITERS = 50, F_N_STORES = 51, F_N_ALLOC = 52,
    F_ALLOC_BYTES = 53, F_ALLOC_MAX = 54, F_N_GUARDS = 55, F_GUARD_FRAC = 56, F_N_THREAD = 57,
    F_THREAD_EXTENT = 58, F_N_NONCONST = 59, F_PARAM_BYTES = 60, F_REG_LANES = 61, F_GPU_TPB = 62,
    F_GPU_LOADS_PER_FMA = 63,
};
_Static_assert(F_GPU_LOADS_PER_FMA < WEFT_FEATURE_DIM, "feature layout exceeds WEFT_FEATURE_DIM");

typedef struct loop_info {
    const weft_expr *var;
    int64_t extent;
    weft_for_kind kind;
} loop_info;

typedef struct buf_info {
    const weft_buffer *buf;
    double touched; /* elements, max over accesses */
} buf_info;

/* Float op counts of one store's value (one execution). */
typedef struct op_counts {
    double addsub, mul, fma, div, minmax, cmpsel, intrin, transc, iops, idiv, other;
    int loads;
    int budget;
} op_counts;

typedef struct walk {
    loop_info loops[MAX_LOOPS];
    int depth;       /* loops on the stack (may exceed MAX_LOOPS: only the first MAX_LOOPS are kept) */
    double trip;     /* product of enclosing extents */
    int guards;      /* enclosing IFs */
    buf_info bufs[MAX_BUFS];
    int n_bufs;
    double overflow_bytes; /* touched bytes of buffers past MAX_BUFS (not deduplicated) */

    /* sums */
    double addsub, mul, fma, div, minmax, cmpsel, intrin, transc, iops, idiv, other;
    double flops_max, ops_per_store_max;
    double loads, stores, load_stmts_sum;
    double acc_total, acc_s0, acc_s1, acc_sn, store_s1;
    double stride_max, stride_lg_sum, gather;
    double bytes_accessed;
    double reuse_lg_sum, reuse_max, reuse_min;
    int have_reuse;
    double vec_lanes, vec_trips;
    int n_vec;
    double unroll_steps, unroll_prod_max, reg_lanes_max;
    int n_unroll;
    double par_extent, par_trips;
    int par_outer, n_par;
    int depth_max;
    double inner_lg_sum, inner_trips, inner_min;
    int have_inner;
    int n_loops, n_serial, auto_unroll_max;
    double loop_iters;
    int n_stores;
    int n_alloc;
    double alloc_bytes, alloc_max;
    int n_guards;
    double guard_trips;
    int n_thread;
    double thread_extent;
    int n_nonconst;
} walk;

static double lg(double x) { return x > 0 ? log2(1.0 + x) : 0.0; }

static int64_t est_extent(const weft_expr *e, int *nonconst)
{
    if (e->kind == WEFT_EXPR_INT) return e->u.imm_int > 0 ? e->u.imm_int : 0;
    *nonconst = 1;
    if (e->kind == WEFT_EXPR_MIN) {
        if (e->u.bin.a->kind == WEFT_EXPR_INT) return e->u.bin.a->u.imm_int > 0 ? e->u.bin.a->u.imm_int : 0;
        if (e->u.bin.b->kind == WEFT_EXPR_INT) return e->u.bin.b->u.imm_int > 0 ? e->u.bin.b->u.imm_int : 0;
    }
    return 1;
}

/* Coefficient of v in e when e is linear in v; false when unknown. Saturates large values. */
static bool lin_coef(const weft_expr *e, const weft_expr *v, int64_t *c)
{
    switch (e->kind) {
    case WEFT_EXPR_INT:
    case WEFT_EXPR_FLOAT:
        *c = 0;
        return true;
    case WEFT_EXPR_VAR:
        *c = e == v ? 1 : 0;
        return true;
    case WEFT_EXPR_ADD:
    case WEFT_EXPR_SUB: {
        int64_t a, b;
        if (!lin_coef(e->u.bin.a, v, &a) || !lin_coef(e->u.bin.b, v, &b)) return false;
        int64_t r = e->kind == WEFT_EXPR_ADD ? a + b : a - b;
        if (r > STRIDE_UNKNOWN || r < -STRIDE_UNKNOWN) return false;
        *c = r;
        return true;
    }
    case WEFT_EXPR_MUL: {
        const weft_expr *x = e->u.bin.a, *y = e->u.bin.b;
        if (y->kind == WEFT_EXPR_INT) { const weft_expr *t = x; x = y; y = t; }
        if (x->kind == WEFT_EXPR_INT) {
            int64_t k = x->u.imm_int, b;
            if (!lin_coef(y, v, &b)) return false;
            if (b == 0) { *c = 0; return true; }
            if (k > STRIDE_UNKNOWN || k < -STRIDE_UNKNOWN) return false;
            int64_t r = k * b; /* both |.| <= 2^20: no overflow */
            if (r > STRIDE_UNKNOWN || r < -STRIDE_UNKNOWN) return false;
            *c = r;
            return true;
        }
        break;
    }
    case WEFT_EXPR_CAST:
        if (weft_dtype_is_int(e->dtype)) return lin_coef(e->u.un.a, v, c);
        break;
    default:
        break;
    }
    if (!weft_expr_uses_var(e, v)) {
        *c = 0;
        return true;
    }
    return false;
}

static int64_t stride_of(const weft_expr *index, const weft_expr *v)
{
    if (!v) return 0;
    int64_t c;
    if (!lin_coef(index, v, &c)) return STRIDE_UNKNOWN;
    return c < 0 ? -c : c;
}

static buf_info *find_buf(walk *w, const weft_buffer *b)
{
    for (int i = 0; i < w->n_bufs; i++)
        if (w->bufs[i].buf == b) return &w->bufs[i];
    if (w->n_bufs == MAX_BUFS) return NULL;
    buf_info *bi = &w->bufs[w->n_bufs++];
    bi->buf = b;
    bi->touched = 0;
    return bi;
}

static const loop_info *innermost(const walk *w)
{
    int d = w->depth < MAX_LOOPS ? w->depth : MAX_LOOPS;
    return d > 0 ? &w->loops[d - 1] : NULL;
}

static const loop_info *innermost_vectorized(const walk *w)
{
    int d = w->depth < MAX_LOOPS ? w->depth : MAX_LOOPS;
    for (int i = d - 1; i >= 0; i--)
        if (w->loops[i].kind == WEFT_FOR_VECTORIZED) return &w->loops[i];
    return NULL;
}

/* One access (load or store) of buffer b at index, executed w->trip times. */
static void record_access(walk *w, const weft_buffer *b, const weft_expr *index, bool is_store)
{
    double t = w->trip;
    const loop_info *in = innermost(w);
    int64_t s = stride_of(index, in ? in->var : NULL);
    w->acc_total += t;
    if (s == 0) w->acc_s0 += t;
    else if (s == 1) w->acc_s1 += t;
    else w->acc_sn += t;
    if (is_store && s == 1) w->store_s1 += t;
    if ((double)s > w->stride_max) w->stride_max = (double)s;
    w->stride_lg_sum += t * lg((double)s);
    const loop_info *vl = innermost_vectorized(w);
    if (vl) {
        int64_t vs = stride_of(index, vl->var);
        if (vs != 0 && vs != 1) w->gather += t;
    }
    int esize = weft_dtype_bytes(b->dtype);
    w->bytes_accessed += t * esize;

    double touched = 1;
    int d = w->depth < MAX_LOOPS ? w->depth : MAX_LOOPS;
    for (int i = 0; i < d; i++)
        if (weft_expr_uses_var(index, w->loops[i].var)) touched *= (double)w->loops[i].extent;
    if (b->size > 0 && touched > (double)b->size) touched = (double)b->size;
    if (touched < 1) touched = 1;
    double reuse = t / touched;
    w->reuse_lg_sum += t * lg(reuse);
    if (!w->have_reuse || reuse > w->reuse_max) w->reuse_max = reuse;
    if (!w->have_reuse || reuse < w->reuse_min) w->reuse_min = reuse;
    w->have_reuse = 1;

    buf_info *bi = find_buf(w, b);
    if (bi) {
        if (touched > bi->touched) bi->touched = touched;
    } else {
        w->overflow_bytes += touched * esize;
    }
}

static bool is_transcendental(int fn)
{
    return fn == WEFT_INTRIN_EXP || fn == WEFT_INTRIN_LOG || fn == WEFT_INTRIN_TANH || fn == WEFT_INTRIN_ERF ||
           fn == WEFT_INTRIN_POW || fn == WEFT_INTRIN_SIGMOID || fn == WEFT_INTRIN_SIN || fn == WEFT_INTRIN_COS;
}

/* Counts the ops of e into oc (one execution) and records its loads as accesses. */
static void count_expr(walk *w, const weft_expr *e, op_counts *oc)
{
    if (!e || oc->budget <= 0) return;
    oc->budget--;
    weft_expr_kind k = (weft_expr_kind)e->kind;
    switch (k) {
    case WEFT_EXPR_INT:
    case WEFT_EXPR_FLOAT:
    case WEFT_EXPR_VAR:
    case WEFT_EXPR_TLOAD:
        return;
    case WEFT_EXPR_LOAD:
        oc->loads++;
        record_access(w, e->u.load.buf, e->u.load.index, false);
        count_expr(w, e->u.load.index, oc);
        return;
    case WEFT_EXPR_NOT:
    case WEFT_EXPR_CAST:
        oc->other++;
        count_expr(w, e->u.un.a, oc);
        return;
    case WEFT_EXPR_SELECT:
        if (weft_dtype_is_float(e->dtype)) oc->cmpsel++;
        else oc->other++;
        count_expr(w, e->u.sel.c, oc);
        count_expr(w, e->u.sel.t, oc);
        count_expr(w, e->u.sel.f, oc);
        return;
    case WEFT_EXPR_CALL:
        oc->intrin++;
        if (is_transcendental(e->u.call.fn)) oc->transc++;
        for (int i = 0; i < e->u.call.n; i++) count_expr(w, e->u.call.args[i], oc);
        return;
    default:
        break;
    }
    if (!weft_expr_is_binary(e)) return;
    const weft_expr *a = e->u.bin.a, *b = e->u.bin.b;
    unsigned fl = weft_expr_kind_flags[k];
    bool fp = weft_dtype_is_float(a->dtype);
    if (fl & WEFT_KF_COMPARE) {
        if (fp) oc->cmpsel++;
        else oc->other++;
    } else if (fl & WEFT_KF_LOGIC) {
        oc->other++;
    } else if (fp) {
        switch (k) {
        case WEFT_EXPR_ADD:
        case WEFT_EXPR_SUB:
            oc->addsub++;
            if (a->kind == WEFT_EXPR_MUL || b->kind == WEFT_EXPR_MUL) oc->fma++;
            break;
        case WEFT_EXPR_MUL: oc->mul++; break;
        case WEFT_EXPR_DIV:
        case WEFT_EXPR_FLOORDIV:
        case WEFT_EXPR_FLOORMOD: oc->div++; break;
        case WEFT_EXPR_MIN:
        case WEFT_EXPR_MAX: oc->minmax++; break;
        default: oc->other++; break;
        }
    } else {
        oc->iops++;
        if (k == WEFT_EXPR_DIV || k == WEFT_EXPR_FLOORDIV || k == WEFT_EXPR_FLOORMOD) oc->idiv++;
    }
    count_expr(w, a, oc);
    count_expr(w, b, oc);
}

static void add_counts(walk *w, const op_counts *oc, double t)
{
    w->addsub += t * oc->addsub;
    w->mul += t * oc->mul;
    w->fma += t * oc->fma;
    w->div += t * oc->div;
    w->minmax += t * oc->minmax;
    w->cmpsel += t * oc->cmpsel;
    w->intrin += t * oc->intrin;
    w->transc += t * oc->transc;
    w->iops += t * oc->iops;
    w->idiv += t * oc->idiv;
    w->other += t * oc->other;
}

static double flops_of(const op_counts *oc)
{
    return oc->addsub + oc->mul + oc->div + oc->minmax + oc->cmpsel + oc->intrin;
}

/* A store B[x] = B[x] + e (or e + B[x]) into a local buffer: an accumulator. */
static bool accumulates(const weft_stmt *s)
{
    const weft_expr *v = s->u.store.value;
    if (s->u.store.buf->scope == WEFT_SCOPE_GLOBAL || !v || v->kind != WEFT_EXPR_ADD) return false;
    for (int side = 0; side < 2; side++) {
        const weft_expr *x = side ? v->u.bin.b : v->u.bin.a;
        if (x->kind == WEFT_EXPR_LOAD && x->u.load.buf == s->u.store.buf && weft_expr_equal(x->u.load.index, s->u.store.index))
            return true;
    }
    return false;
}

static void visit_store(walk *w, const weft_stmt *s)
{
    double t = w->trip;
    op_counts oc = {0};
    oc.budget = NODE_BUDGET;
    count_expr(w, s->u.store.value, &oc);
    count_expr(w, s->u.store.index, &oc);
    record_access(w, s->u.store.buf, s->u.store.index, true);
    add_counts(w, &oc, t);

    double fl = flops_of(&oc);
    if (t * fl > w->flops_max) w->flops_max = t * fl;
    if (fl > w->ops_per_store_max) w->ops_per_store_max = fl;
    w->loads += t * oc.loads;
    w->stores += t;
    w->load_stmts_sum += oc.loads;
    w->n_stores++;
    if (w->guards > 0) w->guard_trips += t;
    if (w->depth > w->depth_max) w->depth_max = w->depth;

    const loop_info *vl = innermost_vectorized(w);
    if (vl) {
        if ((double)vl->extent > w->vec_lanes) w->vec_lanes = (double)vl->extent;
        w->vec_trips += t;
    }
    int d = w->depth < MAX_LOOPS ? w->depth : MAX_LOOPS;
    double uprod = 1;
    bool in_par = false;
    for (int i = 0; i < d; i++) {
        if (w->loops[i].kind == WEFT_FOR_UNROLLED) uprod *= (double)w->loops[i].extent;
        if (w->loops[i].kind == WEFT_FOR_PARALLEL) in_par = true;
    }
    if (uprod > w->unroll_prod_max) w->unroll_prod_max = uprod;
    if (in_par) w->par_trips += t;
    if (accumulates(s)) {
        double lanes = uprod * (vl ? (double)vl->extent : 1.0);
        if (lanes > w->reg_lanes_max) w->reg_lanes_max = lanes;
    }
    const loop_info *in = innermost(w);
    if (in) {
        double e = (double)in->extent;
        w->inner_lg_sum += t * lg(e);
        w->inner_trips += t;
        if (!w->have_inner || e < w->inner_min) w->inner_min = e;
        w->have_inner = 1;
    }
}

static void count_cond(walk *w, const weft_expr *c)
{
    op_counts oc = {0};
    oc.budget = NODE_BUDGET;
    count_expr(w, c, &oc);
    add_counts(w, &oc, w->trip);
    w->loads += w->trip * oc.loads;
}

static void visit(walk *w, const weft_stmt *s)
{
    if (!s) return;
    switch (s->kind) {
    case WEFT_STMT_FOR: {
        int nonconst = 0;
        int64_t ext = est_extent(s->u.loop.extent, &nonconst);
        weft_for_kind kind = s->u.loop.kind;
        w->n_loops++;
        w->n_nonconst += nonconst;
        if (s->u.loop.auto_unroll > w->auto_unroll_max) w->auto_unroll_max = s->u.loop.auto_unroll;
        switch (kind) {
        case WEFT_FOR_SERIAL: w->n_serial++; break;
        case WEFT_FOR_VECTORIZED: w->n_vec++; break;
        case WEFT_FOR_UNROLLED:
            w->n_unroll++;
            w->unroll_steps += (double)ext;
            break;
        case WEFT_FOR_PARALLEL: {
            w->n_par++;
            bool outer_par = true; /* no parallel loop encloses this one */
            int d = w->depth < MAX_LOOPS ? w->depth : MAX_LOOPS;
            for (int i = 0; i < d; i++)
                if (w->loops[i].kind == WEFT_FOR_PARALLEL) outer_par = false;
            if (outer_par && (double)ext > w->par_extent) w->par_extent = (double)ext;
            if (w->depth == 0) w->par_outer = 1;
            break;
        }
        case WEFT_FOR_THREAD_BOUND:
            w->n_thread++;
            w->thread_extent *= (double)(ext > 0 ? ext : 1);
            break;
        default: break;
        }
        double saved = w->trip;
        w->trip *= (double)ext;
        w->loop_iters += w->trip;
        if (w->depth < MAX_LOOPS) {
            w->loops[w->depth].var = s->u.loop.var;
            w->loops[w->depth].extent = ext;
            w->loops[w->depth].kind = kind;
        }
        w->depth++;
        if (w->trip > 0) visit(w, s->u.loop.body);
        w->depth--;
        w->trip = saved;
        return;
    }
    case WEFT_STMT_STORE:
        visit_store(w, s);
        return;
    case WEFT_STMT_ALLOCATE: {
        const weft_buffer *b = s->u.alloc.buf;
        if (b->scope != WEFT_SCOPE_GLOBAL) {
            double bytes = (double)b->size * weft_dtype_bytes(b->dtype);
            w->n_alloc++;
            w->alloc_bytes += bytes;
            if (bytes > w->alloc_max) w->alloc_max = bytes;
        }
        visit(w, s->u.alloc.body);
        return;
    }
    case WEFT_STMT_IF:
        if (w->depth > 0) w->n_guards++;
        count_cond(w, s->u.cond.cond);
        w->guards++;
        visit(w, s->u.cond.then_s);
        visit(w, s->u.cond.else_s);
        w->guards--;
        return;
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) visit(w, s->u.seq.items[i]);
        return;
    default:
        return;
    }
}

/* ---- GPU features (slots 62 and 63) --------------------------------------------------------
 * A walk of its own over the statement tree, for kernels with threadIdx-bound loops (slots stay
 * 0 on the CPU, so CPU cost models do not change). With slots 53 (shared bytes) and 58
 * (threads x blocks over all bound loops) they give the GPU features the tuner's GPU candidates
 * differ in:
 *   62 lg threads per block: max over stores of the product of the threadIdx-bound extents
 *      enclosing the store (blocks: slot 58 less this)
 *   63 loads per FMA at the thread level (raw): over stores under a threadIdx-bound loop whose
 *      value has fma-able ops, the loads a thread issues once each load is hoisted out of the
 *      loops inside its innermost threadIdx loop that its index does not use (a load counts the
 *      product of the extents of those loops that its index uses), over the FMAs of those loops
 *      (their extents' product x the fma-able ops of the value). A GEMM with register tile
 *      rm x rn and K tile kt gets 1/rm + 1/rn + 1/kt (the loads of A, B and the C accumulator):
 *      the register tile's reuse, which the per-store counts above do not see. */
typedef struct gpu_walk {
    const weft_stmt *loops[MAX_LOOPS];
    int depth;
    double tpb_max, loads, fmas;
} gpu_walk;

/* fma-able float ops in e (an add or subtract with a multiply operand). */
static double gpu_fmas(const weft_expr *e, int *budget)
{
    if (!e || --*budget <= 0) return 0;
    double n = 0;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_LOAD: return gpu_fmas(e->u.load.index, budget);
    case WEFT_EXPR_ADD:
    case WEFT_EXPR_SUB:
        if (weft_dtype_is_float(e->dtype) && (e->u.bin.a->kind == WEFT_EXPR_MUL || e->u.bin.b->kind == WEFT_EXPR_MUL)) n = 1;
        return n + gpu_fmas(e->u.bin.a, budget) + gpu_fmas(e->u.bin.b, budget);
    case WEFT_EXPR_MUL:
    case WEFT_EXPR_DIV:
    case WEFT_EXPR_MIN:
    case WEFT_EXPR_MAX: return gpu_fmas(e->u.bin.a, budget) + gpu_fmas(e->u.bin.b, budget);
    case WEFT_EXPR_SELECT: return gpu_fmas(e->u.sel.t, budget) + gpu_fmas(e->u.sel.f, budget);
    default: return 0;
    }
}

/* The hoisted loads of e: each LOAD counts the product of the extents of loops[from..d) its
 * index uses. */
static double gpu_loads(const gpu_walk *g, int from, int d, const weft_expr *e, int *budget)
{
    if (!e || --*budget <= 0) return 0;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_LOAD: {
        double n = 1;
        int nonconst = 0;
        for (int i = from; i < d; i++)
            if (weft_expr_uses_var(e->u.load.index, g->loops[i]->u.loop.var))
                n *= (double)est_extent(g->loops[i]->u.loop.extent, &nonconst);
        return n + gpu_loads(g, from, d, e->u.load.index, budget);
    }
    case WEFT_EXPR_NOT:
    case WEFT_EXPR_CAST: return gpu_loads(g, from, d, e->u.un.a, budget);
    case WEFT_EXPR_SELECT:
        return gpu_loads(g, from, d, e->u.sel.c, budget) + gpu_loads(g, from, d, e->u.sel.t, budget) +
               gpu_loads(g, from, d, e->u.sel.f, budget);
    case WEFT_EXPR_CALL: {
        double n = 0;
        for (int i = 0; i < e->u.call.n; i++) n += gpu_loads(g, from, d, e->u.call.args[i], budget);
        return n;
    }
    case WEFT_EXPR_INT:
    case WEFT_EXPR_FLOAT:
    case WEFT_EXPR_VAR:
    case WEFT_EXPR_TLOAD: return 0;
    default:
        if (!weft_expr_is_binary(e)) return 0;
        return gpu_loads(g, from, d, e->u.bin.a, budget) + gpu_loads(g, from, d, e->u.bin.b, budget);
    }
}

static void gpu_store(gpu_walk *g, const weft_stmt *s)
{
    int d = g->depth < MAX_LOOPS ? g->depth : MAX_LOOPS, inner = -1, nonconst = 0;
    double tpb = 1;
    for (int i = 0; i < d; i++) {
        weft_thread_axis ax = g->loops[i]->u.loop.thread_axis;
        if (g->loops[i]->u.loop.kind == WEFT_FOR_THREAD_BOUND && ax >= WEFT_THREAD_X && ax <= WEFT_THREAD_Z) {
            tpb *= (double)est_extent(g->loops[i]->u.loop.extent, &nonconst);
            inner = i;
        }
    }
    if (inner < 0) return;
    if (tpb > g->tpb_max) g->tpb_max = tpb;
    int budget = NODE_BUDGET;
    double fma = gpu_fmas(s->u.store.value, &budget);
    if (fma <= 0) return;
    double iters = 1;
    for (int i = inner + 1; i < d; i++) iters *= (double)est_extent(g->loops[i]->u.loop.extent, &nonconst);
    budget = NODE_BUDGET;
    g->loads += gpu_loads(g, inner + 1, d, s->u.store.value, &budget);
    g->fmas += iters * fma;
}

static void gpu_visit(gpu_walk *g, const weft_stmt *s)
{
    if (!s) return;
    switch (s->kind) {
    case WEFT_STMT_FOR:
        if (g->depth < MAX_LOOPS) g->loops[g->depth] = s;
        g->depth++;
        gpu_visit(g, s->u.loop.body);
        g->depth--;
        return;
    case WEFT_STMT_STORE: gpu_store(g, s); return;
    case WEFT_STMT_ALLOCATE: gpu_visit(g, s->u.alloc.body); return;
    case WEFT_STMT_IF:
        gpu_visit(g, s->u.cond.then_s);
        gpu_visit(g, s->u.cond.else_s);
        return;
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) gpu_visit(g, s->u.seq.items[i]);
        return;
    default: return;
    }
}

static void gpu_features(const weft_loop_func *f, float *out)
{
    gpu_walk g;
    memset(&g, 0, sizeof g);
    gpu_visit(&g, f->body);
    out[F_GPU_TPB] = (float)lg(g.tpb_max);
    out[F_GPU_LOADS_PER_FMA] = g.fmas > 0 ? (float)(g.loads / g.fmas) : 0.0f;
}

static float frac(double a, double total) { return total > 0 ? (float)(a / total) : 0.0f; }

void weft_features_extract(const weft_loop_func *f, float *out)
{
    memset(out, 0, sizeof(float) * WEFT_FEATURE_DIM);
    if (!f) return;
    walk w;
    memset(&w, 0, sizeof w);
    w.trip = 1;
    w.thread_extent = 1;
    visit(&w, f->body);

    double flops = w.addsub + w.mul + w.div + w.minmax + w.cmpsel + w.intrin;
    out[F_ADDSUB] = (float)lg(w.addsub);
    out[F_MUL] = (float)lg(w.mul);
    out[F_FMA] = (float)lg(w.fma);
    out[F_DIV] = (float)lg(w.div);
    out[F_MINMAX] = (float)lg(w.minmax);
    out[F_CMPSEL] = (float)lg(w.cmpsel);
    out[F_INTRIN] = (float)lg(w.intrin);
    out[F_TRANSC] = (float)lg(w.transc);
    out[F_INT] = (float)lg(w.iops);
    out[F_INTDIV] = (float)lg(w.idiv);
    out[F_OTHER] = (float)lg(w.other);
    out[F_FLOPS] = (float)lg(flops);
    out[F_FLOPS_MAX] = (float)lg(w.flops_max);
    out[F_OPS_PER_STORE] = (float)lg(w.ops_per_store_max);

    out[F_LOADS] = (float)lg(w.loads);
    out[F_STORES] = (float)lg(w.stores);
    out[F_LOADS_PER_STORE] = w.n_stores ? (float)(w.load_stmts_sum / w.n_stores) : 0.0f;
    out[F_S0] = frac(w.acc_s0, w.acc_total);
    out[F_S1] = frac(w.acc_s1, w.acc_total);
    out[F_SN] = frac(w.acc_sn, w.acc_total);
    out[F_STORE_S1] = frac(w.store_s1, w.stores);
    out[F_STRIDE_MAX] = (float)lg(w.stride_max);
    out[F_STRIDE_MEAN] = frac(w.stride_lg_sum, w.acc_total);
    out[F_GATHER] = frac(w.gather, w.acc_total);

    double bytes_global = 0, bytes_local = 0, bytes_max = 0;
    for (int i = 0; i < w.n_bufs; i++) {
        const weft_buffer *b = w.bufs[i].buf;
        double bytes = w.bufs[i].touched * weft_dtype_bytes(b->dtype);
        if (b->scope == WEFT_SCOPE_GLOBAL) bytes_global += bytes;
        else bytes_local += bytes;
        if (bytes > bytes_max) bytes_max = bytes;
    }
    bytes_global += w.overflow_bytes;
    out[F_BYTES_GLOBAL] = (float)lg(bytes_global);
    out[F_BYTES_LOCAL] = (float)lg(bytes_local);
    out[F_BYTES_MAXBUF] = (float)lg(bytes_max);
    out[F_NBUFS] = (float)w.n_bufs;
    out[F_BYTES_ACCESSED] = (float)lg(w.bytes_accessed);
    out[F_REUSE_MEAN] = frac(w.reuse_lg_sum, w.acc_total);
    out[F_REUSE_MAX] = (float)lg(w.reuse_max);
    out[F_REUSE_MIN] = (float)lg(w.reuse_min);
    double touched = bytes_global + bytes_local;
    out[F_AI] = touched > 0 ? (float)lg(flops / touched) : 0.0f;
    out[F_AI_TRAFFIC] = frac(flops, w.bytes_accessed);

    out[F_VEC_LANES] = (float)w.vec_lanes;
    out[F_N_VEC] = (float)w.n_vec;
    out[F_VEC_FRAC] = frac(w.vec_trips, w.stores);
    out[F_UNROLL_STEPS] = (float)lg(w.unroll_steps);
    out[F_UNROLL_PROD] = (float)lg(w.n_unroll ? w.unroll_prod_max : 0);
    out[F_N_UNROLL] = (float)w.n_unroll;
    out[F_PAR_EXTENT] = (float)lg(w.par_extent);
    out[F_PAR_OUTER] = (float)w.par_outer;
    out[F_N_PAR] = (float)w.n_par;
    out[F_PAR_FRAC] = frac(w.par_trips, w.stores);
    out[F_DEPTH] = (float)w.depth_max;
    out[F_INNER_MEAN] = frac(w.inner_lg_sum, w.inner_trips);
    out[F_INNER_MIN] = (float)lg(w.have_inner ? w.inner_min : 0);
    out[F_N_LOOPS] = (float)lg(w.n_loops);
    out[F_N_SERIAL] = (float)lg(w.n_serial);
    out[F_AUTO_UNROLL] = (float)lg(w.auto_unroll_max);
    out[F_LOOP_ITERS] = (float)lg(w.loop_iters);
    out[F_N_STORES] = (float)lg(w.n_stores);

    out[F_N_ALLOC] = (float)w.n_alloc;
    out[F_ALLOC_BYTES] = (float)lg(w.alloc_bytes);
    out[F_ALLOC_MAX] = (float)lg(w.alloc_max);
    out[F_N_GUARDS] = (float)lg(w.n_guards);
    out[F_GUARD_FRAC] = frac(w.guard_trips, w.stores);
    out[F_N_THREAD] = (float)w.n_thread;
    out[F_THREAD_EXTENT] = (float)lg(w.n_thread ? w.thread_extent : 0);
    out[F_N_NONCONST] = (float)w.n_nonconst;

    double pbytes = 0;
    for (int i = 0; i < f->n_params; i++)
        if (f->params && f->params[i])
            pbytes += (double)f->params[i]->size * weft_dtype_bytes(f->params[i]->dtype);
    out[F_PARAM_BYTES] = (float)lg(pbytes);
    out[F_REG_LANES] = (float)lg(w.reg_lanes_max);
    gpu_features(f, out);
}
