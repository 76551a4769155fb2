/* The GPU GEMM rule: a block tile of a matmul-like stage, a register tile per thread, and the
 * reduction split into K tiles whose operand slices are staged in shared memory. Contract in
 * schedule/gemm_gpu.h; the default GPU schedule (schedule/default_gpu.c) and the tuner's GPU
 * sketch (tuner/sketch_gpu.c) call it.
 *
 * Matmul-like: one reduction axis k; the output's last two axes u (rows) and v (columns), any
 * axes before them batch axes; the reduction body reads exactly two distinct tensors, one (A)
 * indexed by u and k but not v, the other (B) by v and k but not u. That covers matmul,
 * dense (B transposed), batched matmul and a fused kernel's GEMM stage; not a convolution
 * (several reduction axes).
 *
 * Steps for stage C with threads tm x tn, register tile rm x rn and K tile kt:
 *
 *   cache_read A shared C; cache_read B shared C
 *   split C u rm tm; split C v rn tn; split C k kt
 *   reorder C b.. u.0 v.0 k.0 u.2 v.2 k.1 u.1 v.1
 *   bind C u.0 blockIdx.y; bind C v.0 blockIdx.x; bind C u.2 threadIdx.y; bind C v.2 threadIdx.x
 *   (batch axes fused and bound to blockIdx.z)
 *   compute_at A.shared C k.0 (B.shared alike); fuse A.shared's axes, split by tm tn, bind the
 *   parts to threadIdx.y and threadIdx.x (the block's threads load the slice together)
 *   pragma C k.1 auto_unroll UNROLL
 *
 * The thread loops are the inner parts of the splits (u.2, v.2), so neighbouring threads own
 * neighbouring columns: the stores to C and the reads of B.shared are coalesced / conflict
 * free, and each thread's register tile is strided by the thread count. Accumulation is into
 * C itself: with the tile's loops unrolled, NVRTC keeps the rm x rn sums in registers across
 * the K tiles (C is __restrict__); partial tiles get guards. No float4 loads yet: the emitter
 * prints vectorized loops as unrolled scalar loops.
 */
#include "schedule/gemm_gpu.h"

#include <stdio.h>
#include <string.h>

#include "ir/error.h"
#include "ir/pattern.h"
#include "schedule/sched_util.h"
#include "schedule/state.h"

typedef struct reads {
    const weft_tensor *t[3];
    const weft_expr *load[3];
    int n;
    bool other; /* a third tensor, or one tensor read twice */
} reads;

static void collect(void *ud, const weft_expr *e)
{
    reads *r = ud;
    if (e->kind == WEFT_EXPR_TLOAD) {
        const weft_tensor *t = weft_expr_tload_tensor(e);
        for (int i = 0; i < r->n; i++)
            if (r->t[i] == t) r->other = true;
        if (r->n == 2) r->other = true;
        else {
            r->t[r->n] = t;
            r->load[r->n++] = e;
        }
    }
    weft_expr_each_child(e, collect, ud);
}

static bool load_uses(const weft_expr *load, const weft_expr *var)
{
    for (int i = 0; i < weft_expr_tload_n(load); i++)
        if (weft_expr_uses_var(weft_expr_tload_idx(load, i), var)) return true;
    return false;
}

bool weft_gpu_gemm_form(const weft_tensor *op, weft_gpu_gemm_shape *g)
{
    memset(g, 0, sizeof *g);
    if (!op || !op->body || op->ndim < 2 || op->n_reduce != 1 || weft_tensor_pattern(op) != WEFT_PATTERN_OUT_REDUCTION_REUSE)
        return false;
    reads r = {0};
    collect(&r, op->body);
    if (r.n != 2 || r.other) return false;
    const weft_expr *u = op->axis[op->ndim - 2].var, *v = op->axis[op->ndim - 1].var, *k = op->reduce_axis[0].var;
    for (int swap = 0; swap < 2; swap++) {
        const weft_expr *a = r.load[swap], *b = r.load[1 - swap];
        if (load_uses(a, u) && !load_uses(a, v) && load_uses(a, k) && load_uses(b, v) && !load_uses(b, u) && load_uses(b, k)) {
            g->a = r.t[swap];
            g->b = r.t[1 - swap];
            g->m = op->shape[op->ndim - 2];
            g->n = op->shape[op->ndim - 1];
            g->k = op->reduce_axis[0].extent;
            g->batch = 1;
            for (int d = 0; d + 2 < op->ndim; d++) g->batch *= op->shape[d];
            return true;
        }
    }
    return false;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t weft_gpu_gemm_shared_bytes(const weft_gpu_gemm_tile *t)
{
    return (t->tm * t->rm + t->tn * t->rn) * t->kt * 4;
}

int64_t weft_gpu_gemm_registers(const weft_gpu_gemm_tile *t)
{
    return t->rm * t->rn + t->rm + t->rn + 24; /* accumulators, one k's fragments, addresses */
}

weft_status weft_gpu_gemm_check(const weft_gpu_gemm_shape *g, const weft_gpu_gemm_tile *t, const weft_target_caps *caps)
{
    int64_t warp = caps && caps->warp_size > 0 ? caps->warp_size : 32;
    int64_t max_threads = caps && caps->max_threads > 0 ? caps->max_threads : 1024;
    long shared = caps && caps->shared_bytes > 0 ? caps->shared_bytes : 48 * 1024;
    int64_t threads = t->tm * t->tn;
    if (t->tm < 1 || t->tn < 1 || t->rm < 1 || t->rn < 1 || t->kt < 1 || t->unroll < 0)
        return weft_fail(WEFT_ERR_INVALID_ARG, "gpu gemm tile: sizes must be positive (tm %lld tn %lld rm %lld rn %lld kt %lld)",
                         (long long)t->tm, (long long)t->tn, (long long)t->rm, (long long)t->rn, (long long)t->kt);
    if (threads % warp || threads > max_threads || t->tn > 1024 || t->tm > 1024)
        return weft_fail(WEFT_ERR_INVALID_ARG, "gpu gemm tile: %lld x %lld threads is not a whole number of %lld-thread warps "
                         "within %lld",
                         (long long)t->tm, (long long)t->tn, (long long)warp, (long long)max_threads);
    if (t->kt > g->k)
        return weft_fail(WEFT_ERR_INVALID_ARG, "gpu gemm tile: K tile %lld exceeds K = %lld", (long long)t->kt, (long long)g->k);
    if (weft_gpu_gemm_shared_bytes(t) > shared)
        return weft_fail(WEFT_ERR_INVALID_ARG, "gpu gemm tile: %lld bytes of shared memory, the target allows %ld",
                         (long long)weft_gpu_gemm_shared_bytes(t), shared);
    if (weft_gpu_gemm_registers(t) > WEFT_GPU_GEMM_MAX_REGS)
        return weft_fail(WEFT_ERR_INVALID_ARG, "gpu gemm tile: a %lld x %lld register tile needs about %lld registers per "
                         "thread, more than %d",
                         (long long)t->rm, (long long)t->rn, (long long)weft_gpu_gemm_registers(t), WEFT_GPU_GEMM_MAX_REGS);
    if (cdiv(g->m, t->tm * t->rm) > 65535 || g->batch > 65535)
        return weft_fail(WEFT_ERR_INVALID_ARG, "gpu gemm tile: %lld row blocks or %lld batches exceed the grid's 65535",
                         (long long)cdiv(g->m, t->tm * t->rm), (long long)g->batch);
    return WEFT_OK;
}

static int64_t pow2_floor(int64_t x)
{
    int64_t p = 1;
    while (p * 2 <= x) p *= 2;
    return p;
}

void weft_gpu_gemm_default_tile(const weft_gpu_gemm_shape *g, const weft_target_caps *caps, weft_gpu_gemm_tile *t)
{
    int64_t warp = caps && caps->warp_size > 0 ? caps->warp_size : 32;
    int64_t block = caps && caps->max_threads > 0 && caps->max_threads < 256 ? caps->max_threads : 256;
    block = pow2_floor(block);
    long shared = caps && caps->shared_bytes > 0 ? caps->shared_bytes : 48 * 1024;
    /* Threads: double the axis with fewer threads (columns on a tie) among those not yet
     * covered, until the block is full or both are covered (a square thread tile where both
     * axes are long); then at least one whole warp (more columns). */
    t->tm = t->tn = 1;
    while (t->tm * t->tn < block) {
        bool more_u = g->m > t->tm, more_v = g->n > t->tn;
        if (!more_u && !more_v) break;
        if (more_v && (!more_u || t->tn <= t->tm)) t->tn *= 2;
        else t->tm *= 2;
    }
    while (t->tm * t->tn < warp || (t->tm * t->tn) % warp) t->tn *= 2;
    /* Register tiles up to 8 x 8, halved (the larger first) while the grid has fewer than
     * WEFT_GPU_GEMM_BLOCKS blocks. */
    t->rm = pow2_floor(cdiv(g->m, t->tm));
    t->rn = pow2_floor(cdiv(g->n, t->tn));
    if (t->rm > 8) t->rm = 8;
    if (t->rn > 8) t->rn = 8;
    while (t->rm * t->rn > 1 &&
           g->batch * cdiv(g->m, t->tm * t->rm) * cdiv(g->n, t->tn * t->rn) < WEFT_GPU_GEMM_BLOCKS) {
        if (t->rm >= t->rn) t->rm /= 2;
        else t->rn /= 2;
    }
    t->kt = g->k < 16 ? g->k : 16;
    while (t->kt > 1 && weft_gpu_gemm_shared_bytes(t) > shared) t->kt /= 2;
    t->unroll = 512;
}

/* The names of stage i's root axes after its first `skip`, space-separated, into out. */
static void axis_names(const weft_stage *st, int from, int to, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int d = from; d < to && len < n; d++) len += (size_t)snprintf(out + len, n - len, " %s", st->iters[d].name);
}

/* The cooperative load of shared stage `sh`: its axes fused, split by tm x tn threads. */
static weft_status coop_load(weft_schedule *s, const char *sh, const weft_gpu_gemm_tile *t)
{
    int i = weft_sched_find_stage(s, sh);
    if (i < 0) return WEFT_ERR_INTERNAL;
    const weft_stage *st = &s->stages[i];
    char fused[WEFT_SCHED_NAME], names[512];
    weft_status rc = WEFT_OK;
    if (st->op->ndim > 1) {
        axis_names(st, 0, st->op->ndim, names, sizeof names);
        if ((rc = weft_sched_stepf(s, "fuse %s%s", sh, names)) != WEFT_OK) return rc;
        st = &s->stages[i];
    }
    snprintf(fused, sizeof fused, "%s", st->iters[st->leaves[0]].name);
    if ((rc = weft_sched_stepf(s, "split %s %s %lld %lld", sh, fused, (long long)t->tm, (long long)t->tn)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "bind %s %s.1 threadIdx.y", sh, fused)) != WEFT_OK) return rc;
    return weft_sched_stepf(s, "bind %s %s.2 threadIdx.x", sh, fused);
}

weft_status weft_gpu_gemm_apply(weft_schedule *s, const char *name, const weft_gpu_gemm_tile *t, const weft_target_caps *caps)
{
    int c = weft_sched_find_stage(s, name);
    if (c < 0) return WEFT_ERR_INVALID_ARG;
    weft_gpu_gemm_shape g;
    if (!weft_gpu_gemm_form(s->stages[c].op, &g))
        return weft_fail(WEFT_ERR_INVALID_ARG, "gpu gemm: stage %s is not matmul-like (one reduction axis, two operands)", name);
    weft_status rc = weft_gpu_gemm_check(&g, t, caps);
    if (rc != WEFT_OK) return rc;
    const weft_stage *st = &s->stages[c];
    int nd = st->op->ndim;
    char u[WEFT_SCHED_NAME], v[WEFT_SCHED_NAME], k[WEFT_SCHED_NAME], batch[512], bz[WEFT_SCHED_NAME] = "";
    char an[WEFT_SCHED_NAME], bn[WEFT_SCHED_NAME];
    snprintf(u, sizeof u, "%s", st->iters[nd - 2].name);
    snprintf(v, sizeof v, "%s", st->iters[nd - 1].name);
    snprintf(k, sizeof k, "%s", st->iters[nd].name);
    axis_names(st, 0, nd - 2, batch, sizeof batch);
    snprintf(an, sizeof an, "%s.shared", g.a->name);
    snprintf(bn, sizeof bn, "%s.shared", g.b->name);
    if ((rc = weft_sched_stepf(s, "cache_read %s shared %s", g.a->name, name)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "cache_read %s shared %s", g.b->name, name)) != WEFT_OK) return rc;
    if (nd > 3) {
        if ((rc = weft_sched_stepf(s, "fuse %s%s", name, batch)) != WEFT_OK) return rc;
        c = weft_sched_find_stage(s, name);
        snprintf(bz, sizeof bz, "%s", s->stages[c].iters[s->stages[c].leaves[0]].name);
    } else if (nd == 3)
        snprintf(bz, sizeof bz, "%.*s", (int)sizeof bz - 1, batch + 1); /* one batch axis: its name */
    if ((rc = weft_sched_stepf(s, "split %s %s %lld %lld", name, u, (long long)t->rm, (long long)t->tm)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "split %s %s %lld %lld", name, v, (long long)t->rn, (long long)t->tn)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "split %s %s %lld", name, k, (long long)t->kt)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "reorder %s%s%s %s.0 %s.0 %s.0 %s.2 %s.2 %s.1 %s.1 %s.1", name, *bz ? " " : "", bz, u, v, k, u,
                               v, k, u, v)) != WEFT_OK)
        return rc;
    if (*bz && (rc = weft_sched_stepf(s, "bind %s %s blockIdx.z", name, bz)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "bind %s %s.0 blockIdx.y", name, u)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "bind %s %s.0 blockIdx.x", name, v)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "bind %s %s.2 threadIdx.y", name, u)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "bind %s %s.2 threadIdx.x", name, v)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "compute_at %s %s %s.0", an, name, k)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "compute_at %s %s %s.0", bn, name, k)) != WEFT_OK) return rc;
    if ((rc = coop_load(s, an, t)) != WEFT_OK) return rc;
    if ((rc = coop_load(s, bn, t)) != WEFT_OK) return rc;
    if (t->unroll > 0) rc = weft_sched_stepf(s, "pragma %s %s.1 auto_unroll %lld", name, k, (long long)t->unroll);
    return rc;
}
