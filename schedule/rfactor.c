/* rfactor: splits a reduction into a partial-reduction stage and a final reduction (TVM's
 * rfactor). With C[i..] = sum_k body(i.., k):
 *
 *   split C k F; rfactor C k.1    C.rf[i.., k.1] = sum_{k.0} body(i.., k.0 * F + k.1)
 *                                 C[i..]         = sum_{k.1} C.rf[i.., k.1]
 *   split C k F; rfactor C k.0    the same with k.0 the new spatial axis of C.rf
 *   rfactor C k                   C.rf[i.., k] = body(i.., k) (reduced over C's other
 *                                 reduction axes); C sums C.rf over k
 *
 * The factored iterator becomes a spatial axis of C.rf (so it can be vectorized or
 * parallelized there) and the reduction axis of C, keeping its name. When the split does not
 * divide the axis, the last block of the outer part is moved back to end at the axis's end
 * (k = min(k.0 * F, K - F) + k.1) and the points it shares with the block before add the
 * reduction's identity, so no index leaves [0, K) and the index stays affine in k.1. sum, max and min are associative, so any of them can be factored.
 *
 * Legality: STAGE is a reduction that is not inlined; ITER is a root reduction axis not yet
 * split, or a part of a two-way split of a root reduction axis that is STAGE's only split or
 * fuse (rfactor rebuilds STAGE's loops: they become its spatial axes and ITER, in that order;
 * spatial annotations are kept). No stage may be attached inside STAGE's reduction loops.
 * The new stage is named STAGE.rf (STAGE.rf2, ...), computed at root in global scope.
 */
#include <string.h>

#include "ir/error.h"
#include "schedule/state.h"

/* Where ITER comes from: root reduce axis q (op->reduce_axis index), and for a split the
 * extents of both parts (outer, inner) and which part ITER is. */
typedef struct rf_src {
    int q;
    bool split;
    int part; /* 0 outer, 1 inner */
    int64_t ext[2];
} rf_src;

static weft_status locate(const weft_stage *cs, int it, rf_src *src)
{
    const weft_tensor *op = cs->op;
    memset(src, 0, sizeof *src);
    if (it < cs->n_root) {
        if (!cs->iters[it].is_reduce)
            return weft_fail(WEFT_ERR_INVALID_ARG, "rfactor: %s is a spatial iterator of %s, not a reduction", cs->iters[it].name, cs->name);
        if (cs->n_rels > 0)
            return weft_fail(WEFT_ERR_INVALID_ARG, "rfactor %s %s must come before splits and fuses of %s", cs->name,
                             cs->iters[it].name, cs->name);
        src->q = it - op->ndim;
        return WEFT_OK;
    }
    if (cs->n_rels != 1 || cs->rels[0].kind != WEFT_REL_SPLIT || cs->rels[0].n_out != 2)
        return weft_fail(WEFT_ERR_INVALID_ARG,
                         "rfactor: iterator %s must be a part of a two-way split of a reduction axis, and that split "
                         "the only split or fuse of %s",
                         cs->iters[it].name, cs->name);
    const weft_rel *rel = &cs->rels[0];
    int in = rel->in[0];
    if (in >= cs->n_root || !cs->iters[in].is_reduce)
        return weft_fail(WEFT_ERR_INVALID_ARG, "rfactor: %s is not a part of a reduction axis of %s", cs->iters[it].name, cs->name);
    src->q = in - op->ndim;
    src->split = true;
    src->part = rel->out[0] == it ? 0 : 1;
    int64_t k = op->reduce_axis[src->q].extent, f = rel->factors[0];
    if (f > k) f = k;
    src->ext[0] = rel->nparts ? f : (k + f - 1) / f;
    src->ext[1] = rel->nparts ? (k + f - 1) / f : f;
    return WEFT_OK;
}

weft_status weft_sched_apply_rfactor(weft_schedule *s, const weft_step *step)
{
    if (step->n_args != 2) return weft_fail(WEFT_ERR_INVALID_ARG, "rfactor takes a stage and an iterator, got %d arguments", step->n_args);
    int c = weft_sched_find_stage(s, step->args[0]);
    if (c < 0) return WEFT_ERR_INVALID_ARG;
    weft_stage *cs = &s->stages[c];
    const weft_tensor *op = cs->op;
    if (cs->attach == WEFT_ATTACH_INLINE) return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is inlined", cs->name);
    if (!op->n_reduce || op->reduce == WEFT_REDUCE_NONE)
        return weft_fail(WEFT_ERR_INVALID_ARG, "rfactor: stage %s is not a reduction", cs->name);
    int it = weft_sched_find_iter(cs, step->args[1]);
    if (it < 0) return WEFT_ERR_INVALID_ARG;
    rf_src src;
    weft_status rc = locate(cs, it, &src);
    if (rc != WEFT_OK) return rc;
    if (op->ndim + 1 > WEFT_MAX_DIMS) return weft_fail(WEFT_ERR_UNSUPPORTED, "rfactor: %s has too many axes", cs->name);
    for (int q = 0; q < s->n_stages; q++)
        if (s->stages[q].attach == WEFT_ATTACH_AT && s->stages[q].at_stage == c && s->stages[q].at_iter >= op->ndim)
            return weft_fail(WEFT_ERR_INVALID_ARG, "rfactor: stage %s is attached inside a reduction loop of %s",
                             s->stages[q].name, cs->name);
    if (s->n_stages >= WEFT_SCHED_MAX_STAGES) return weft_fail(WEFT_ERR_UNSUPPORTED, "too many stages");
    char name[WEFT_SCHED_NAME];
    if ((rc = weft_sched_unique_name(s, cs->name, "rf", name)) != WEFT_OK) return rc;

    weft_arena *a = s->arena;
    const char *fname = cs->iters[it].name;
    int64_t f_ext = src.split ? src.ext[src.part] : op->reduce_axis[src.q].extent;
    /* C.rf: C's axes and ITER; reduces over C's other reduction axes and ITER's other part. */
    const char *names[WEFT_MAX_DIMS];
    int64_t shape[WEFT_MAX_DIMS];
    for (int d = 0; d < op->ndim; d++) {
        names[d] = weft_expr_var_name(op->axis[d].var);
        shape[d] = op->shape[d];
    }
    names[op->ndim] = fname;
    shape[op->ndim] = f_ext;
    weft_tensor *rf = weft_te_compute(a, name, op->ndim + 1, shape, names);
    if (!rf) return weft_fail(WEFT_ERR_NOMEM, "rfactor: out of memory");
    const weft_expr *from[2 * WEFT_MAX_DIMS], *to[2 * WEFT_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < op->ndim; d++) {
        from[m] = op->axis[d].var;
        to[m++] = rf->axis[d].var;
    }
    const weft_expr *fvar = rf->axis[op->ndim].var, *kexpr = fvar, *inside = NULL;
    for (int r = 0; r < op->n_reduce; r++) {
        if (r != src.q) {
            from[m] = op->reduce_axis[r].var;
            to[m++] = weft_te_reduce_axis(a, rf, weft_expr_var_name(op->reduce_axis[r].var), op->reduce_axis[r].extent);
            continue;
        }
        if (!src.split) continue;
        int other = 1 - src.part;
        const weft_expr *ov = weft_te_reduce_axis(a, rf, cs->iters[cs->rels[0].out[other]].name, src.ext[other]);
        const weft_expr *outer = src.part == 0 ? fvar : ov, *inner = src.part == 0 ? ov : fvar;
        const weft_expr *start = weft_mul(a, outer, weft_i64(a, src.ext[1]));
        kexpr = weft_add(a, start, inner);
        int64_t kext = op->reduce_axis[r].extent;
        if (src.ext[0] * src.ext[1] != kext) {
            /* The last block is moved back to end at kext (kext >= the block length), and
             * its points before the block's own start are already counted: they add the
             * identity. The index stays affine in the inner part, so its loads vectorize. */
            kexpr = weft_add(a, weft_min(a, start, weft_i64(a, kext - src.ext[1])), inner);
            inside = weft_cmp(a, WEFT_EXPR_GE, kexpr, start);
        }
    }
    from[m] = op->reduce_axis[src.q].var;
    to[m++] = kexpr;
    const weft_expr *body = weft_expr_substitute(a, op->body, m, from, to);
    if (inside && body) body = weft_select(a, inside, body, weft_te_reduce_identity(a, op->reduce, body->dtype));
    weft_te_set_body(rf, rf->n_reduce ? op->reduce : WEFT_REDUCE_NONE, body);
    /* C: sums C.rf over ITER. */
    weft_tensor *fin = weft_te_compute(a, op->name, op->ndim, op->shape, names);
    if (fin) {
        const weft_expr *idx[WEFT_MAX_DIMS];
        for (int d = 0; d < op->ndim; d++) idx[d] = fin->axis[d].var;
        idx[op->ndim] = weft_te_reduce_axis(a, fin, fname, f_ext);
        weft_te_set_body(fin, op->reduce, weft_tload(a, rf, op->ndim + 1, idx));
    }
    if (!body || !rf->body || !fin || !fin->body || weft_arena_failed(a)) return weft_fail(WEFT_ERR_NOMEM, "rfactor: out of memory");

    int pos = weft_sched_insert_stage(s, c);
    cs = &s->stages[c + 1];
    weft_stage *ls = &s->stages[pos];
    snprintf(ls->name, sizeof ls->name, "%s", name);
    ls->ref = ls->op = rf;
    ls->scope = WEFT_SCOPE_GLOBAL;
    ls->attach = WEFT_ATTACH_ROOT;
    weft_sched_stage_init_iters(ls);
    weft_sched_iter saved[WEFT_MAX_DIMS];
    memcpy(saved, cs->iters, sizeof saved);
    cs->op = fin;
    weft_sched_stage_init_iters(cs);
    for (int d = 0; d < fin->ndim; d++) {
        cs->iters[d].annot = saved[d].annot;
        cs->iters[d].auto_unroll = saved[d].auto_unroll;
        memcpy(cs->iters[d].prefetch, saved[d].prefetch, sizeof saved[d].prefetch);
    }
    return WEFT_OK;
}
