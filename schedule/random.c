/* Random valid step lists: the property-test driver for schedules (every schedule of a kernel
 * must compute what the naive one computes) and a seed for search. Steps are drawn at random
 * over the current stages and loops and applied; a step the validator rejects leaves the
 * schedule unchanged and is simply not kept, so the result is valid by construction.
 * Vectorize and unroll are only drawn for the inner parts of splits with small factors, which
 * keeps generated code small. rfactor is drawn for reduction leaves. Deterministic for a given seed. */
#include <stdio.h>
#include <string.h>

#include "schedule/state.h"

static uint64_t next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int pick(uint64_t *rng, int n) { return n <= 0 ? 0 : (int)(next(rng) % (uint64_t)n); }

/* Factor of the split that produced leaf iter `it`, or 0 when it is not an inner part. */
static int64_t inner_factor(const weft_stage *st, int it)
{
    for (int k = 0; k < st->n_rels; k++) {
        const weft_rel *rel = &st->rels[k];
        if (rel->kind != WEFT_REL_SPLIT || rel->nparts) continue;
        for (int o = 1; o < rel->n_out; o++)
            if (rel->out[o] == it) return rel->factors[o - 1];
    }
    return 0;
}

static bool draw(weft_schedule *s, uint64_t *rng, char *line, size_t n)
{
    int si = pick(rng, s->n_stages);
    const weft_stage *st = &s->stages[si];
    if (st->n_leaves == 0) return false;
    const char *leaf = st->iters[st->leaves[pick(rng, st->n_leaves)]].name;
    static const int64_t factors[] = {2, 3, 4, 8, 16};
    switch (pick(rng, 14)) {
    case 0:
    case 1:
        if (pick(rng, 3) == 0)
            snprintf(line, n, "split %s %s %lld %lld", st->name, leaf, (long long)factors[pick(rng, 4)],
                     (long long)factors[pick(rng, 4)]);
        else if (pick(rng, 4) == 0) snprintf(line, n, "split %s %s nparts %d", st->name, leaf, 2 + pick(rng, 3));
        else snprintf(line, n, "split %s %s %lld", st->name, leaf, (long long)factors[pick(rng, 5)]);
        return true;
    case 2: {
        if (st->n_leaves < 2) return false;
        int p = pick(rng, st->n_leaves - 1);
        snprintf(line, n, "fuse %s %s %s", st->name, st->iters[st->leaves[p]].name, st->iters[st->leaves[p + 1]].name);
        return true;
    }
    case 3:
    case 4: {
        int order[WEFT_SCHED_MAX_ITERS];
        for (int l = 0; l < st->n_leaves; l++) order[l] = st->leaves[l];
        for (int l = st->n_leaves - 1; l > 0; l--) {
            int j = pick(rng, l + 1), t = order[l];
            order[l] = order[j];
            order[j] = t;
        }
        size_t len = (size_t)snprintf(line, n, "reorder %s", st->name);
        for (int l = 0; l < st->n_leaves && len < n; l++) len += (size_t)snprintf(line + len, n - len, " %s", st->iters[order[l]].name);
        return true;
    }
    case 5: snprintf(line, n, "parallel %s %s", st->name, leaf); return true;
    case 6:
    case 7: {
        int it = st->leaves[st->n_leaves - 1 - pick(rng, st->n_leaves > 1 ? 2 : 1)];
        int64_t f = inner_factor(st, it);
        if (f < 2 || f > 16) return false;
        snprintf(line, n, "%s %s %s", pick(rng, 2) ? "vectorize" : "unroll", st->name, st->iters[it].name);
        return true;
    }
    case 8: { /* auto_unroll, or (drawn without another draw: earlier step lists stay as they were) a prefetch */
        int v = pick(rng, 2);
        const weft_tensor *reads[16];
        int nr = weft_te_reads(st->op, reads, 16);
        if (v && nr > 0 && nr <= 16 && (si + st->n_leaves) % 3 == 0)
            snprintf(line, n, "pragma %s %s prefetch %s", st->name, leaf, reads[si % nr]->name);
        else snprintf(line, n, "pragma %s %s auto_unroll %d", st->name, leaf, v ? 16 : 64);
        return true;
    }
    case 9: {
        int c = pick(rng, s->n_stages);
        const weft_stage *cs = &s->stages[c];
        if (c == si || cs->n_leaves == 0) return false;
        snprintf(line, n, "compute_at %s %s %s", st->name, cs->name, cs->iters[cs->leaves[pick(rng, cs->n_leaves)]].name);
        return true;
    }
    case 10:
        snprintf(line, n, "%s %s", pick(rng, 3) ? "compute_inline" : "compute_root", st->name);
        return true;
    case 11: snprintf(line, n, "cache_write %s local", st->name); return pick(rng, 2) == 0;
    case 12: {
        const weft_te_func *f = s->func;
        const weft_tensor *reads[16];
        int nr = weft_te_reads(st->op, reads, 16);
        if (nr == 0) return false;
        const weft_tensor *t = reads[pick(rng, nr)];
        (void)f;
        snprintf(line, n, "cache_read %s local %s", t->name, st->name);
        return pick(rng, 2) == 0;
    }
    case 13: { /* rfactor a reduction leaf (valid before splits, or after one split of it) */
        int red[WEFT_SCHED_MAX_ITERS], nred = 0;
        for (int l = 0; l < st->n_leaves; l++)
            if (st->iters[st->leaves[l]].is_reduce) red[nred++] = st->leaves[l];
        if (nred == 0) return false;
        snprintf(line, n, "rfactor %s %s", st->name, st->iters[red[pick(rng, nred)]].name);
        return true;
    }
    }
    return false;
}

weft_status weft_schedule_random(weft_schedule *s, uint64_t seed, int n_steps)
{
    uint64_t rng = seed;
    int kept = 0;
    for (int tries = 0; kept < n_steps && tries < n_steps * 20; tries++) {
        char line[1024];
        if (!draw(s, &rng, line, sizeof line)) continue;
        if (weft_schedule_apply(s, line) == WEFT_OK) kept++;
    }
    return WEFT_OK;
}

/* GPU variant: random steps without `parallel` (GPU schedules bind loops instead), then every
 * root stage's outermost leaf bound to blockIdx.x and, most of the time, the next one to
 * threadIdx.x when both are spatial; a third of the stages instead get their outermost
 * spatial leaf split by one or two warps (caps->warp_size: 64 on an AMD CDNA wavefront), the
 * outer part bound to blockIdx.x and the warp-sized part to threadIdx.x, so that blocks of
 * whole warps are drawn too. The result is a valid schedule; whether it is launchable (every
 * store under bound loops, extents within the caps) is decided by lowering. */
weft_status weft_schedule_random_gpu_for(weft_schedule *s, const weft_target_caps *caps, uint64_t seed, int n_steps)
{
    int warp = caps && caps->warp_size > 0 ? caps->warp_size : 32;
    uint64_t rng = seed ^ 0x6770755f72616e64ull;
    int kept = 0;
    for (int tries = 0; kept < n_steps && tries < n_steps * 20; tries++) {
        char line[1024];
        if (!draw(s, &rng, line, sizeof line) || !strncmp(line, "parallel ", 9)) continue;
        if (weft_schedule_apply(s, line) == WEFT_OK) kept++;
    }
    for (int i = 0; i < s->n_stages; i++) {
        const weft_stage *st = &s->stages[i];
        if (st->attach != WEFT_ATTACH_ROOT || st->n_leaves == 0) continue;
        const weft_sched_iter *a = &st->iters[st->leaves[0]];
        if (a->is_reduce) continue;
        char line[512];
        if (pick(&rng, 3) == 0) {
            char stage[WEFT_SCHED_NAME], leaf[WEFT_SCHED_NAME];
            snprintf(stage, sizeof stage, "%s", st->name);
            snprintf(leaf, sizeof leaf, "%s", a->name);
            snprintf(line, sizeof line, "split %s %s %d", stage, leaf, warp << pick(&rng, 2));
            if (weft_schedule_apply(s, line) == WEFT_OK) {
                snprintf(line, sizeof line, "bind %s %s.0 blockIdx.x", stage, leaf);
                if (weft_schedule_apply(s, line) != WEFT_OK) continue;
                snprintf(line, sizeof line, "bind %s %s.1 threadIdx.x", stage, leaf);
                (void)weft_schedule_apply(s, line);
                continue;
            }
        }
        snprintf(line, sizeof line, "bind %s %s blockIdx.x", st->name, a->name);
        if (weft_schedule_apply(s, line) != WEFT_OK) continue;
        st = &s->stages[i];
        if (st->n_leaves < 2 || pick(&rng, 4) == 0) continue;
        const weft_sched_iter *b = &st->iters[st->leaves[1]];
        if (b->is_reduce) continue;
        snprintf(line, sizeof line, "bind %s %s threadIdx.x", st->name, b->name);
        (void)weft_schedule_apply(s, line);
    }
    return WEFT_OK;
}

weft_status weft_schedule_random_gpu(weft_schedule *s, uint64_t seed, int n_steps)
{
    return weft_schedule_random_gpu_for(s, NULL, seed, n_steps);
}
