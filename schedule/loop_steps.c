/* Loop-structure steps: split, fuse, reorder, annotations (parallel, vectorize, unroll) and the
 * auto_unroll pragma. Each validates first and mutates only when valid.
 *
 * Legality:
 *   split      ITER is a leaf; factors (or nparts) are positive integers.
 *   fuse       two or more leaves, adjacent and outermost first, all spatial or all reduce.
 *   reorder    distinct leaves; they are permuted among the slots they occupy.
 *   parallel   a spatial leaf (a parallel reduction would race).
 *   vectorize  a spatial leaf (vectorizing a reduction axis is not supported).
 *   unroll     any leaf.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "schedule/state.h"

static bool parse_int(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) return false;
    *out = v;
    return true;
}

/* Resolves STAGE and a leaf ITER; returns WEFT_OK and the indices. */
static weft_status stage_leaf(weft_schedule *s, const char *stage, const char *iter, int *si, int *ii)
{
    *ii = -1;
    *si = weft_sched_find_stage(s, stage);
    if (*si < 0) return WEFT_ERR_INVALID_ARG;
    weft_stage *st = &s->stages[*si];
    if (st->attach == WEFT_ATTACH_INLINE)
        return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is inlined and has no loops", stage);
    *ii = weft_sched_find_iter(st, iter);
    if (*ii < 0) return WEFT_ERR_INVALID_ARG;
    if (weft_sched_leaf_pos(st, *ii) < 0)
        return weft_fail(WEFT_ERR_INVALID_ARG, "iterator %s of stage %s was already split or fused", iter, stage);
    return WEFT_OK;
}

/* The largest product of split factors (an extent can be no larger: op outputs are capped at
 * 2^40 elements). */
#define SPLIT_MAX (INT64_C(1) << 40)

weft_status weft_sched_apply_split(weft_schedule *s, const weft_step *step)
{
    int si, ii;
    weft_status rc = stage_leaf(s, step->args[0], step->args[1], &si, &ii);
    if (rc != WEFT_OK) return rc;
    weft_stage *st = &s->stages[si];
    weft_rel rel = {.kind = WEFT_REL_SPLIT, .n_in = 1, .in = {ii}};
    int n_factors = step->n_args - 2;
    if (!strcmp(step->args[2], "nparts")) {
        if (step->n_args != 4) return weft_fail(WEFT_ERR_INVALID_ARG, "split ... nparts takes exactly one number");
        rel.nparts = true;
        n_factors = 1;
        if (!parse_int(step->args[3], &rel.factors[0]) || rel.factors[0] <= 0)
            return weft_fail(WEFT_ERR_INVALID_ARG, "nparts must be a positive integer, got '%s'", step->args[3]);
    } else {
        if (n_factors + 1 > WEFT_SCHED_MAX_PARTS)
            return weft_fail(WEFT_ERR_INVALID_ARG, "split into more than %d parts", WEFT_SCHED_MAX_PARTS);
        int64_t prod = 1;
        for (int f = 0; f < n_factors; f++) {
            if (!parse_int(step->args[2 + f], &rel.factors[f]) || rel.factors[f] <= 0)
                return weft_fail(WEFT_ERR_INVALID_ARG, "split factor must be a positive integer, got '%s'",
                                 step->args[2 + f]);
            /* lowering multiplies the factors: keep their product far inside int64 */
            if (rel.factors[f] > SPLIT_MAX / prod)
                return weft_fail(WEFT_ERR_INVALID_ARG, "split factors %s... multiply to more than 2^40", step->args[2]);
            prod *= rel.factors[f];
        }
    }
    rel.n_out = n_factors + 1;
    if (st->n_iters + rel.n_out > WEFT_SCHED_MAX_ITERS || st->n_rels >= WEFT_SCHED_MAX_RELS)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "stage %s has too many loops", st->name);
    char names[WEFT_SCHED_MAX_PARTS][WEFT_SCHED_NAME];
    for (int p = 0; p < rel.n_out; p++) {
        int n = snprintf(names[p], WEFT_SCHED_NAME, "%s.%d", st->iters[ii].name, p);
        if (n >= WEFT_SCHED_NAME) return weft_fail(WEFT_ERR_UNSUPPORTED, "iterator name %s.%d is too long", st->iters[ii].name, p);
        for (int k = 0; k < st->n_iters; k++)
            if (!strcmp(st->iters[k].name, names[p]))
                return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s already has an iterator named %s", st->name, names[p]);
    }
    /* Mutate: new iterators replace the leaf in place. */
    int pos = weft_sched_leaf_pos(st, ii);
    int saved_leaves[WEFT_SCHED_MAX_ITERS], n_saved = st->n_leaves;
    memcpy(saved_leaves, st->leaves, sizeof saved_leaves);
    bool red = st->iters[ii].is_reduce;
    for (int p = 0; p < rel.n_out; p++) rel.out[p] = weft_sched_add_iter(st, names[p], red);
    st->n_leaves = 0;
    for (int l = 0; l < n_saved; l++) {
        if (l == pos)
            for (int p = 0; p < rel.n_out; p++) st->leaves[st->n_leaves++] = rel.out[p];
        else st->leaves[st->n_leaves++] = saved_leaves[l];
    }
    st->iters[ii].consumed_by = st->n_rels;
    st->rels[st->n_rels++] = rel;
    return WEFT_OK;
}

weft_status weft_sched_apply_fuse(weft_schedule *s, const weft_step *step)
{
    int si = weft_sched_find_stage(s, step->args[0]);
    if (si < 0) return WEFT_ERR_INVALID_ARG;
    weft_stage *st = &s->stages[si];
    int n = step->n_args - 1;
    if (n < 2) return weft_fail(WEFT_ERR_INVALID_ARG, "fuse needs at least two iterators");
    if (n > WEFT_SCHED_MAX_PARTS) return weft_fail(WEFT_ERR_INVALID_ARG, "fuse of more than %d iterators", WEFT_SCHED_MAX_PARTS);
    weft_rel rel = {.kind = WEFT_REL_FUSE, .n_in = n, .n_out = 1};
    char name[WEFT_SCHED_NAME * 2] = "";
    int first_pos = -1;
    for (int k = 0; k < n; k++) {
        int dummy, ii;
        weft_status rc = stage_leaf(s, step->args[0], step->args[1 + k], &dummy, &ii);
        if (rc != WEFT_OK) return rc;
        int pos = weft_sched_leaf_pos(st, ii);
        if (k == 0) first_pos = pos;
        else if (pos != first_pos + k)
            return weft_fail(WEFT_ERR_INVALID_ARG, "fuse: %s and %s are not adjacent loops (outermost first)",
                             step->args[k], step->args[1 + k]);
        if (k > 0 && st->iters[ii].is_reduce != st->iters[rel.in[0]].is_reduce)
            return weft_fail(WEFT_ERR_INVALID_ARG, "fuse: cannot fuse spatial and reduction iterators (%s, %s)",
                             step->args[1], step->args[1 + k]);
        rel.in[k] = ii;
        if (strlen(name) + (k ? 1 : 0) + strlen(st->iters[ii].name) >= WEFT_SCHED_NAME)
            return weft_fail(WEFT_ERR_UNSUPPORTED, "fuse: the fused name %s%s%s is too long (at most %d characters)", name,
                             k ? "@" : "", st->iters[ii].name, WEFT_SCHED_NAME - 1);
        strcat(name, k ? "@" : "");
        strcat(name, st->iters[ii].name);
    }
    if (st->n_iters + 1 > WEFT_SCHED_MAX_ITERS || st->n_rels >= WEFT_SCHED_MAX_RELS)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "stage %s has too many loops", st->name);
    for (int k = 0; k < st->n_iters; k++)
        if (!strcmp(st->iters[k].name, name))
            return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s already has an iterator named %s", st->name, name);
    bool red = st->iters[rel.in[0]].is_reduce;
    int saved_leaves[WEFT_SCHED_MAX_ITERS], n_saved = st->n_leaves;
    memcpy(saved_leaves, st->leaves, sizeof saved_leaves);
    int f = weft_sched_add_iter(st, name, red);
    rel.out[0] = f;
    st->n_leaves = 0;
    for (int l = 0; l < n_saved; l++) {
        if (l == first_pos) st->leaves[st->n_leaves++] = f;
        else if (l > first_pos && l < first_pos + n) continue;
        else st->leaves[st->n_leaves++] = saved_leaves[l];
    }
    for (int k = 0; k < n; k++) st->iters[rel.in[k]].consumed_by = st->n_rels;
    /* An attachment at a fused-away iterator moves to the fused one. */
    for (int c = 0; c < s->n_stages; c++)
        for (int k = 0; k < n; k++)
            if (s->stages[c].attach == WEFT_ATTACH_AT && s->stages[c].at_stage == si && s->stages[c].at_iter == rel.in[k])
                s->stages[c].at_iter = f;
    st->rels[st->n_rels++] = rel;
    return WEFT_OK;
}

weft_status weft_sched_apply_reorder(weft_schedule *s, const weft_step *step)
{
    int si = weft_sched_find_stage(s, step->args[0]);
    if (si < 0) return WEFT_ERR_INVALID_ARG;
    weft_stage *st = &s->stages[si];
    int n = step->n_args - 1, iters[WEFT_STEP_MAX_ARGS], pos[WEFT_STEP_MAX_ARGS];
    for (int k = 0; k < n; k++) {
        int dummy;
        weft_status rc = stage_leaf(s, step->args[0], step->args[1 + k], &dummy, &iters[k]);
        if (rc != WEFT_OK) return rc;
        pos[k] = weft_sched_leaf_pos(st, iters[k]);
        for (int j = 0; j < k; j++)
            if (iters[j] == iters[k]) return weft_fail(WEFT_ERR_INVALID_ARG, "reorder names %s twice", step->args[1 + k]);
    }
    /* Slots in increasing order receive the iterators in the given order. */
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (pos[b] < pos[a]) {
                int t = pos[a];
                pos[a] = pos[b];
                pos[b] = t;
            }
    for (int k = 0; k < n; k++) st->leaves[pos[k]] = iters[k];
    return WEFT_OK;
}

weft_status weft_sched_apply_annotate(weft_schedule *s, const weft_step *step)
{
    if (step->n_args != 2)
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s takes a stage and one iterator, got %d arguments",
                         step->kind == WEFT_STEP_PARALLEL ? "parallel" : step->kind == WEFT_STEP_VECTORIZE ? "vectorize" : "unroll",
                         step->n_args);
    int si, ii;
    weft_status rc = stage_leaf(s, step->args[0], step->args[1], &si, &ii);
    if (rc != WEFT_OK) return rc;
    weft_sched_iter *it = &s->stages[si].iters[ii];
    weft_for_kind k = step->kind == WEFT_STEP_PARALLEL ? WEFT_FOR_PARALLEL
                      : step->kind == WEFT_STEP_VECTORIZE ? WEFT_FOR_VECTORIZED : WEFT_FOR_UNROLLED;
    /* A reduction iterator vectorizes only as its stage's innermost loop: the loop's body is then
     * the one update R[i] = R[i] + e, which the CPU target sums across lanes (a horizontal
     * reduction; targets/llvm/vector.c). Anywhere else lanes would race on R[i]. */
    if (it->is_reduce && k == WEFT_FOR_VECTORIZED && weft_sched_leaf_pos(&s->stages[si], ii) != s->stages[si].n_leaves - 1)
        return weft_fail(WEFT_ERR_INVALID_ARG,
                         "cannot vectorize reduction iterator %s of stage %s: only as the stage's innermost loop", it->name,
                         s->stages[si].name);
    if (it->is_reduce && k == WEFT_FOR_PARALLEL)
        return weft_fail(WEFT_ERR_INVALID_ARG, "cannot parallelize reduction iterator %s of stage %s (it would race)",
                         it->name, s->stages[si].name);
    it->annot = k;
    return WEFT_OK;
}

weft_status weft_sched_apply_pragma(weft_schedule *s, const weft_step *step)
{
    int si, ii;
    weft_status rc = stage_leaf(s, step->args[0], step->args[1], &si, &ii);
    if (rc != WEFT_OK) return rc;
    int64_t v;
    if (!strcmp(step->args[2], "prefetch")) {
        if (step->n_args != 4) return weft_fail(WEFT_ERR_INVALID_ARG, "pragma prefetch takes one tensor name");
        const weft_tensor *reads[32];
        int nr = weft_te_reads(s->stages[si].op, reads, 32);
        bool found = false;
        for (int r = 0; r < nr && r < 32; r++) found = found || !strcmp(reads[r]->name, step->args[3]);
        if (!found)
            return weft_fail(WEFT_ERR_INVALID_ARG, "pragma prefetch: stage %s does not read a tensor named '%s'",
                             s->stages[si].name, step->args[3]);
        snprintf(s->stages[si].iters[ii].prefetch, WEFT_SCHED_NAME, "%s", step->args[3]);
        return WEFT_OK;
    }
    if (strcmp(step->args[2], "auto_unroll"))
        return weft_fail(WEFT_ERR_INVALID_ARG, "unknown pragma '%s' (expected auto_unroll or prefetch)", step->args[2]);
    if (step->n_args != 4 || !parse_int(step->args[3], &v) || v < 0 || v > 4096)
        return weft_fail(WEFT_ERR_INVALID_ARG, "auto_unroll takes one integer in [0, 4096], got '%s'", step->args[3]);
    s->stages[si].iters[ii].auto_unroll = (int)v;
    return WEFT_OK;
}

/* bind STAGE ITER AXIS: the leaf becomes a GPU-bound loop (THREAD_BOUND) on AXIS. A reduction
 * iterator cannot be bound (threads would race on the accumulator), an axis is bound at most
 * once per stage, and block axes stay outside thread axes in the loop order. Extents are
 * checked against the device's limits when the function is lowered (lower/gpu.c), since they
 * depend on the region a stage computes. */
weft_status weft_sched_apply_bind(weft_schedule *s, const weft_step *step)
{
    if (step->n_args != 3) return weft_fail(WEFT_ERR_INVALID_ARG, "bind takes STAGE ITER AXIS");
    int si, ii;
    weft_status rc = stage_leaf(s, step->args[0], step->args[1], &si, &ii);
    if (rc != WEFT_OK) return rc;
    weft_stage *st = &s->stages[si];
    weft_thread_axis ax = WEFT_THREAD_NONE;
    for (int k = WEFT_BLOCK_X; k < WEFT_THREAD_AXIS_COUNT; k++)
        if (!strcmp(step->args[2], weft_thread_axis_names[k])) ax = (weft_thread_axis)k;
    if (ax == WEFT_THREAD_NONE)
        return weft_fail(WEFT_ERR_INVALID_ARG, "unknown GPU axis '%s' (expected blockIdx.x|y|z or threadIdx.x|y|z)",
                         step->args[2]);
    if (st->iters[ii].is_reduce)
        return weft_fail(WEFT_ERR_INVALID_ARG, "cannot bind reduction iterator %s of stage %s to %s (threads would race)",
                         st->iters[ii].name, st->name, step->args[2]);
    bool is_block = ax <= WEFT_BLOCK_Z;
    int pos = weft_sched_leaf_pos(st, ii);
    for (int l = 0; l < st->n_leaves; l++) {
        const weft_sched_iter *o = &st->iters[st->leaves[l]];
        if (st->leaves[l] == ii || o->annot != WEFT_FOR_THREAD_BOUND) continue;
        if (o->thread_axis == ax)
            return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s already binds %s to %s", st->name, o->name, step->args[2]);
        bool o_block = o->thread_axis <= WEFT_BLOCK_Z;
        if (is_block && !o_block && l < pos)
            return weft_fail(WEFT_ERR_INVALID_ARG, "block axis %s of stage %s must be outside thread loop %s (%s)",
                             step->args[2], st->name, o->name, weft_thread_axis_names[o->thread_axis]);
        if (!is_block && o_block && l > pos)
            return weft_fail(WEFT_ERR_INVALID_ARG, "thread axis %s of stage %s must be inside block loop %s (%s)",
                             step->args[2], st->name, o->name, weft_thread_axis_names[o->thread_axis]);
    }
    st->iters[ii].annot = WEFT_FOR_THREAD_BOUND;
    st->iters[ii].thread_axis = ax;
    return WEFT_OK;
}
