/* Compute-location steps: compute_at, compute_inline, compute_root.
 *
 * Legality:
 *   compute_at P C ITER  P is not an output; every stage that reads P (directly or through
 *                        inlined stages) is C or is computed at C (TVM lets a producer sit
 *                        above its reader's own attach point: packing a panel once for many
 *                        register tiles); ITER is a leaf of C; C is not computed inside P.
 *                        P is then computed, for each iteration of C's loops down to ITER,
 *                        over the region its readers need there.
 *   compute_inline P     P is not an output, has no reduction, and nothing is attached to it.
 *   compute_root P       P gets its own loop nest at the top level again.
 */
#include <string.h>

#include "ir/error.h"
#include "schedule/state.h"

weft_status weft_sched_apply_compute_at(weft_schedule *s, const weft_step *step)
{
    if (step->n_args != 3)
        return weft_fail(WEFT_ERR_INVALID_ARG, "compute_at takes a stage, its consumer and an iterator, got %d arguments",
                         step->n_args);
    int p = weft_sched_find_stage(s, step->args[0]);
    if (p < 0) return WEFT_ERR_INVALID_ARG;
    int c = weft_sched_find_stage(s, step->args[1]);
    if (c < 0) return WEFT_ERR_INVALID_ARG;
    weft_stage *ps = &s->stages[p], *cs = &s->stages[c];
    if (ps->is_output) return weft_fail(WEFT_ERR_INVALID_ARG, "output stage %s must stay at root", ps->name);
    if (p == c) return weft_fail(WEFT_ERR_INVALID_ARG, "cannot compute %s inside itself", ps->name);
    if (cs->attach == WEFT_ATTACH_INLINE) return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is inlined", cs->name);
    int it = weft_sched_find_iter(cs, step->args[2]);
    if (it < 0) return WEFT_ERR_INVALID_ARG;
    if (weft_sched_leaf_pos(cs, it) < 0)
        return weft_fail(WEFT_ERR_INVALID_ARG, "iterator %s of stage %s was already split or fused", step->args[2], cs->name);
    /* Every reader of P must be C or computed at C (then P is computed once for them all). */
    bool c_reads = weft_sched_reads(s, c, p), attached_reader = false;
    for (int q = 0; q < s->n_stages; q++)
        if (q != p && q != c && s->stages[q].attach == WEFT_ATTACH_AT && s->stages[q].at_stage == c &&
            weft_sched_reads(s, q, p))
            attached_reader = true;
    if (!c_reads && !attached_reader)
        return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s does not read %s, so %s cannot be computed at it", cs->name,
                         ps->name, ps->name);
    for (int q = 0; q < s->n_stages; q++) {
        if (q == p || q == c || s->stages[q].attach == WEFT_ATTACH_INLINE || !weft_sched_reads(s, q, p)) continue;
        if (s->stages[q].attach == WEFT_ATTACH_AT && s->stages[q].at_stage == c) continue;
        return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is also read by %s, so it cannot be computed inside %s",
                         ps->name, s->stages[q].name, cs->name);
    }
    for (int q = c, depth = 0; s->stages[q].attach == WEFT_ATTACH_AT && depth <= s->n_stages; depth++) {
        q = s->stages[q].at_stage;
        if (q == p) return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is computed inside %s (a cycle)", cs->name, ps->name);
    }
    ps->attach = WEFT_ATTACH_AT;
    ps->at_stage = c;
    ps->at_iter = it;
    return WEFT_OK;
}

weft_status weft_sched_apply_compute_inline(weft_schedule *s, const weft_step *step)
{
    int p = weft_sched_find_stage(s, step->args[0]);
    if (p < 0) return WEFT_ERR_INVALID_ARG;
    weft_stage *ps = &s->stages[p];
    if (step->n_args != 1) return weft_fail(WEFT_ERR_INVALID_ARG, "compute_inline takes one stage");
    if (ps->is_output) return weft_fail(WEFT_ERR_INVALID_ARG, "output stage %s cannot be inlined", ps->name);
    if (ps->op->n_reduce) return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s has a reduction and cannot be inlined", ps->name);
    for (int q = 0; q < s->n_stages; q++)
        if (s->stages[q].attach == WEFT_ATTACH_AT && s->stages[q].at_stage == p)
            return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is computed inside %s; it cannot be inlined", s->stages[q].name,
                             ps->name);
    ps->attach = WEFT_ATTACH_INLINE;
    return WEFT_OK;
}

weft_status weft_sched_apply_compute_root(weft_schedule *s, const weft_step *step)
{
    int p = weft_sched_find_stage(s, step->args[0]);
    if (p < 0) return WEFT_ERR_INVALID_ARG;
    if (step->n_args != 1) return weft_fail(WEFT_ERR_INVALID_ARG, "compute_root takes one stage");
    s->stages[p].attach = WEFT_ATTACH_ROOT;
    return WEFT_OK;
}

/* Whole-schedule invariants that a step may break indirectly (a cache_read adding a reader to
 * an attached stage, a compute_root of a reader, ...): every attached stage's readers are its
 * target or computed at its target, the target point is a leaf, nothing is attached inside an
 * inlined stage, and outputs stay at root. */
weft_status weft_sched_check(const weft_schedule *s)
{
    for (int p = 0; p < s->n_stages; p++) {
        const weft_stage *ps = &s->stages[p];
        if (ps->is_output && ps->attach != WEFT_ATTACH_ROOT)
            return weft_fail(WEFT_ERR_INVALID_ARG, "output stage %s must stay at root", ps->name);
        if (ps->attach != WEFT_ATTACH_AT) continue;
        const weft_stage *ts = &s->stages[ps->at_stage];
        if (ts->attach == WEFT_ATTACH_INLINE)
            return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is computed inside %s, which is inlined", ps->name, ts->name);
        if (weft_sched_leaf_pos(ts, ps->at_iter) < 0)
            return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is computed at %s.%s, which is no longer a loop", ps->name,
                             ts->name, ts->iters[ps->at_iter].name);
        for (int q = 0; q < s->n_stages; q++) {
            const weft_stage *qs = &s->stages[q];
            if (q == p || q == ps->at_stage || qs->attach == WEFT_ATTACH_INLINE || !weft_sched_reads(s, q, p)) continue;
            if (qs->attach == WEFT_ATTACH_AT && qs->at_stage == ps->at_stage) {
                if (weft_sched_leaf_pos(ts, qs->at_iter) < weft_sched_leaf_pos(ts, ps->at_iter))
                    return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is computed at %s.%s, outside %s.%s where its input %s is",
                                     qs->name, ts->name, ts->iters[qs->at_iter].name, ts->name, ts->iters[ps->at_iter].name,
                                     ps->name);
                continue;
            }
            return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is computed inside %s but also read by %s", ps->name, ts->name,
                             qs->name);
        }
    }
    return WEFT_OK;
}
