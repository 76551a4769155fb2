/* Sketches and their decisions.
 *
 * Rules, applied by the stage patterns of a kernel (ir/pattern.h):
 *   inline        elementwise/injective stages that are not outputs are computed inline;
 *   tile + fuse   the reduction with reuse R (matmul, conv) is tiled in its consumer T: T's
 *                 spatial axes split in three levels (d.0 d.1 d.2), the .0 loops fused and
 *                 parallel, R computed per tile at T's innermost .1 loop;
 *   cache_write   when R is itself the output, its accumulator is a local cache R.local and R
 *                 becomes the elementwise copy that plays T;
 *   SRSRS in R    inside the tile, R's spatial axes split again (a.0 a.1) and its reduction
 *                 axes in two (k.0 k.1), ordered k.0 a.0 k.1 a.1: a register tile a.1 (the
 *                 vector axis vectorized, the others unrolled) over an inner reduction;
 *   annotations   auto_unroll pragma on the outer reduction loop, T's inner tile vectorized,
 *                 the outer loops fused and parallel (or not: tiny kernels may run faster serial);
 *   prefetch      when R reads an input larger than L2 (a weight streamed from memory), an
 *                 unpacked candidate may prefetch its next reduction block from the outer
 *                 reduction loop (`pragma R k.0 prefetch W`, lower/prefetch.c), as the few-row
 *                 default rule does.
 * The register tile keeps accumulators + one operand row + a broadcast within the target's
 * vector registers (16 with AVX2, 32 with AVX-512: weft_sketch_fits_registers), and a packed
 * panel within half of its L2 (weft_sketch_fits_cache).
 * Decisions: perfect factorizations of every axis (no guards), accumulator shape, reduction
 * split, unroll depth, parallel granularity.
 * A kernel whose default rule has knobs (weft_schedule_knob_space: the convolution in filter
 * blocks, whose 5-D reduction the output reads through a layout change, and the window rule of
 * pooling and depthwise convs) gets a knobbed sketch instead: candidates are knob values, scheduled by the default rule itself, and
 * their step text starts with a "# knobs RULE name=value ..." comment. Any other kernel has one
 * candidate, the default schedule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/pattern.h"
#include "ir/strbuf.h"
#include "schedule/sched_util.h"
#include "schedule/query.h"
#include "tuner/tuner.h"

uint64_t weft_tuner_rand(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int64_t pick_divisor(uint64_t *rng, int64_t n, int64_t max, int64_t prefer_multiple)
{
    int64_t divs[256];
    int nd = 0, np = 0;
    int64_t pref[256];
    for (int64_t d = 1; d <= n && nd < 256; d++)
        if (n % d == 0 && d <= max) {
            divs[nd++] = d;
            if (prefer_multiple > 1 && d % prefer_multiple == 0) pref[np++] = d;
        }
    if (nd == 0) return 1;
    if (np > 0 && weft_tuner_rand(rng) % 4 != 0) return pref[weft_tuner_rand(rng) % (uint64_t)np];
    return divs[weft_tuner_rand(rng) % (uint64_t)nd];
}

weft_status weft_sketch_make(const weft_te_func *f, const weft_target_caps *caps, weft_sketch *out)
{
    memset(out, 0, sizeof *out);
    out->lanes = caps && caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8;
    out->regs = caps && caps->vector_regs > 0 ? caps->vector_regs : 16;
    out->l2_bytes = caps && caps->l2_bytes > 0 ? caps->l2_bytes : 512 * 1024;
    weft_schedule *s = NULL;
    weft_status rc = weft_schedule_create(f, &s);
    if (rc != WEFT_OK) return rc;
    weft_strbuf sb = {0};
    for (int i = 0; i < weft_sched_n_stages(s); i++) {
        weft_op_pattern p = weft_tensor_pattern(weft_sched_stage(s, i).op);
        if (!weft_sched_stage(s, i).is_output && (p == WEFT_PATTERN_ELEMWISE || p == WEFT_PATTERN_INJECTIVE)) {
            char line[128];
            snprintf(line, sizeof line, "compute_inline %s", weft_sched_stage(s, i).name);
            if (weft_schedule_apply(s, line) == WEFT_OK) weft_strbuf_printf(&sb, "%s\n", line);
        }
    }
    int r = -1, n_reuse = 0;
    for (int i = 0; i < weft_sched_n_stages(s); i++)
        if (weft_sched_stage(s, i).is_root && weft_tensor_pattern(weft_sched_stage(s, i).op) == WEFT_PATTERN_OUT_REDUCTION_REUSE) {
            r = i;
            n_reuse++;
        }
    int t = -1;
    if (n_reuse == 1) {
        if (weft_sched_stage(s, r).is_output) {
            char line[128];
            snprintf(line, sizeof line, "cache_write %s local", weft_sched_stage(s, r).name);
            if (weft_schedule_apply(s, line) == WEFT_OK) {
                weft_strbuf_printf(&sb, "%s\n", line);
                t = r + 1;
            }
        } else {
            for (int q = 0; q < weft_sched_n_stages(s); q++) {
                if (q == r || weft_sched_stage(s, q).is_inline || !weft_sched_reads(s, q, r)) continue;
                if (t >= 0) {
                    t = -1;
                    break;
                }
                t = q;
            }
            if (t >= 0 && (!weft_sched_stage(s, t).is_output || weft_sched_stage(s, t).op->ndim != weft_sched_stage(s, r).op->ndim ||
                           weft_sched_stage(s, t).op->n_reduce))
                t = -1;
        }
    }
    /* Other reductions left at root would need their own rules; such kernels use the default. */
    bool other_red = false;
    for (int i = 0; i < weft_sched_n_stages(s); i++)
        if (i != r && i != t && weft_sched_stage(s, i).is_root && weft_sched_stage(s, i).op->n_reduce) other_red = true;
    char *prefix = weft_strbuf_take(&sb);
    if (t >= 0 && !other_red && prefix && strlen(prefix) < sizeof out->prefix) {
        weft_stage_view tv = weft_sched_stage(s, t), rv = weft_sched_stage(s, r);
        const weft_stage_view *ts = &tv, *rs = &rv;
        out->tiled = true;
        snprintf(out->prefix, sizeof out->prefix, "%s", prefix);
        snprintf(out->t, sizeof out->t, "%s", ts->name);
        snprintf(out->r, sizeof out->r, "%s", rs->name);
        out->n_sp = ts->op->ndim;
        for (int d = 0; d < out->n_sp; d++) {
            snprintf(out->sp[d], sizeof out->sp[d], "%s", weft_sched_iter_name(s, r, d));
            snprintf(out->spt[d], sizeof out->spt[d], "%s", weft_sched_iter_name(s, t, d));
            out->sp_ext[d] = ts->op->shape[d];
            if (rs->op->shape[d] != ts->op->shape[d]) out->tiled = false;
        }
        out->n_red = rs->op->n_reduce;
        for (int k = 0; k < out->n_red; k++) {
            snprintf(out->red[k], sizeof out->red[k], "%s", weft_sched_iter_name(s, r, rs->op->ndim + k));
            out->red_ext[k] = rs->op->reduce_axis[k].extent;
        }
        int u = -1;
        weft_sched_choose_tile_axes(rs->op, &u, &out->vec);
        const weft_tensor *pk = weft_sched_reused_input(f, rs->op, out->vec);
        if (pk) {
            snprintf(out->pack, sizeof out->pack, "%s", pk->name);
            snprintf(out->pack_last, sizeof out->pack_last, "ax%d", pk->ndim - 1);
            out->pack_last_ext = pk->shape[pk->ndim - 1];
        }
        const weft_tensor *reads[16];
        int nr = weft_te_reads(rs->op, reads, 16);
        int64_t big = out->l2_bytes;
        for (int i = 0; i < nr && i < 16; i++) {
            int64_t bytes = weft_te_numel(reads[i]) * (int64_t)weft_dtype_bytes(reads[i]->dtype);
            if (reads[i]->is_placeholder && bytes > big && strlen(reads[i]->name) < sizeof out->stream) {
                big = bytes;
                snprintf(out->stream, sizeof out->stream, "%s", reads[i]->name);
            }
        }
    }
    free(prefix);
    weft_schedule_destroy(s);
    if (out->n_sp > WEFT_SKETCH_MAX_AXES || out->n_red > WEFT_SKETCH_MAX_AXES) out->tiled = false;
    /* A default rule with knobs wins over the generic tiling (depthwise convs: the tiled
     * sketch's candidates measured no faster than the window rule's default on MobileNetV2). */
    weft_status krc = weft_schedule_knob_space(f, caps, &out->ks);
    if (krc != WEFT_OK) return krc;
    if (out->ks.n > 0) {
        out->knobbed = true;
        out->tiled = false;
        out->f = f;
        if (caps) out->caps = *caps;
    }
    return WEFT_OK;
}

/* ---- knobbed sketches ---- */

/* The rule's schedule for c's knob values (NULL when the rule refuses them). */
static weft_schedule *knob_schedule(const weft_sketch *sk, const weft_cand *c)
{
    weft_schedule *s = NULL;
    if (weft_schedule_create(sk->f, &s) != WEFT_OK) return NULL;
    if (weft_schedule_default_knobs(s, &sk->caps, sk->ks.n, c->knob) != WEFT_OK) {
        weft_schedule_destroy(s);
        return NULL;
    }
    return s;
}

static bool knobs_valid(const weft_sketch *sk, const weft_cand *c)
{
    weft_schedule *s = knob_schedule(sk, c);
    weft_schedule_destroy(s);
    return s != NULL;
}

static void knob_pick(const weft_sketch *sk, uint64_t *rng, weft_cand *c, int i)
{
    c->knob[i] = sk->ks.values[i][weft_tuner_rand(rng) % (uint64_t)sk->ks.n_values[i]];
}

static void knobs_sample(const weft_sketch *sk, uint64_t *rng, weft_cand *c)
{
    for (int tries = 0; tries < 64; tries++) {
        for (int i = 0; i < sk->ks.n; i++) knob_pick(sk, rng, c, i);
        if (knobs_valid(sk, c)) return;
    }
}

static void knobs_mutate(const weft_sketch *sk, uint64_t *rng, weft_cand *c)
{
    for (int tries = 0; tries < 16; tries++) {
        weft_cand m = *c;
        knob_pick(sk, rng, &m, (int)(weft_tuner_rand(rng) % (uint64_t)sk->ks.n));
        if (knobs_valid(sk, &m)) {
            *c = m;
            return;
        }
    }
    knobs_sample(sk, rng, c);
}

static char *knobs_steps(const weft_sketch *sk, const weft_cand *c)
{
    weft_schedule *s = knob_schedule(sk, c);
    char *text = s ? weft_schedule_text(s) : NULL;
    weft_schedule_destroy(s);
    if (!text) return NULL;
    weft_strbuf sb = {0};
    weft_strbuf_printf(&sb, WEFT_KNOBS_COMMENT "%s", sk->ks.rule);
    for (int i = 0; i < sk->ks.n; i++) weft_strbuf_printf(&sb, " %s=%lld", sk->ks.name[i], (long long)c->knob[i]);
    weft_strbuf_printf(&sb, "\n%s", text);
    free(text);
    return weft_strbuf_take(&sb);
}

bool weft_sketch_knobs_from_steps(const weft_sketch *sk, const char *steps, weft_cand *c)
{
    size_t lc = strlen(WEFT_KNOBS_COMMENT), lr = strlen(sk->ks.rule);
    if (!sk->knobbed || !steps || strncmp(steps, WEFT_KNOBS_COMMENT, lc) || strncmp(steps + lc, sk->ks.rule, lr))
        return false;
    memset(c, 0, sizeof *c);
    const char *p = steps + lc + lr;
    for (int i = 0; i < sk->ks.n; i++) {
        size_t ln = strlen(sk->ks.name[i]);
        if (*p != ' ' || strncmp(p + 1, sk->ks.name[i], ln) || p[1 + ln] != '=') return false;
        char *end = NULL;
        c->knob[i] = strtoll(p + 2 + ln, &end, 10);
        if (end == p + 2 + ln) return false;
        p = end;
    }
    char *again = knobs_steps(sk, c);
    bool same = again && !strcmp(again, steps);
    free(again);
    return same;
}

/* Vector registers a candidate's register tile keeps live: its accumulators, one row of the
 * vector operand, and one broadcast. */
int weft_sketch_live_vectors(const weft_sketch *sk, const weft_cand *c)
{
    int64_t acc = 1, vecs = 1;
    for (int d = 0; d < sk->n_sp; d++) {
        int64_t x = d == sk->vec ? (c->r_in[d] + sk->lanes - 1) / sk->lanes : c->r_in[d];
        acc *= x;
        if (d == sk->vec) vecs = x;
    }
    return (int)(acc + vecs + 1 > 1024 ? 1024 : acc + vecs + 1);
}

bool weft_sketch_fits_registers(const weft_sketch *sk, const weft_cand *c)
{
    if (sk->knobbed) return true; /* the rule checks its own tile */
    return weft_sketch_live_vectors(sk, c) <= sk->regs;
}

bool weft_sketch_fits_cache(const weft_sketch *sk, const weft_cand *c)
{
    if (sk->knobbed || !c->pack || sk->vec < 0 || sk->vec >= sk->n_sp) return true;
    double bytes = 4.0 * (double)c->t1[sk->vec] * (double)c->t2[sk->vec];
    for (int k = 0; k < sk->n_red; k++) bytes *= (double)sk->red_ext[k];
    return bytes <= (double)sk->l2_bytes / 2;
}

void weft_sketch_sample(const weft_sketch *sk, uint64_t *rng, weft_cand *c)
{
    memset(c, 0, sizeof *c);
    if (sk->knobbed) {
        knobs_sample(sk, rng, c);
        return;
    }
    int64_t L = sk->lanes;
    for (int d = 0; d < sk->n_sp; d++) {
        int64_t e = sk->sp_ext[d];
        bool v = d == sk->vec;
        c->t2[d] = pick_divisor(rng, e, v ? 8 * L : 16, v ? L : 1);
        c->t1[d] = pick_divisor(rng, e / c->t2[d], 16, 1);
        c->r_in[d] = pick_divisor(rng, c->t2[d], v ? 4 * L : 8, v ? L : 1);
    }
    /* Keep the register tile within the register file. */
    for (int guard = 0; guard < 16; guard++) {
        if (weft_sketch_fits_registers(sk, c)) break;
        int d = (int)(weft_tuner_rand(rng) % (uint64_t)sk->n_sp);
        c->r_in[d] = pick_divisor(rng, c->t2[d], c->r_in[d] > 1 ? c->r_in[d] / 2 : 1, 1);
    }
    for (int k = 0; k < sk->n_red; k++) c->k_in[k] = pick_divisor(rng, sk->red_ext[k], 64, 1);
    static const int unrolls[] = {0, 16, 64, 512};
    c->unroll = unrolls[weft_tuner_rand(rng) % 4];
    /* 0: no parallel loop (tiny kernels can lose more to waking threads than they gain) */
    c->n_par = (int)(weft_tuner_rand(rng) % (uint64_t)(sk->n_sp + 1));
    c->pack = sk->pack[0] && weft_tuner_rand(rng) % 2;
    if (!weft_sketch_fits_cache(sk, c)) c->pack = false;
    /* drawn only for sketches that stream an input, so other sketches' draws stay as they were */
    if (sk->stream[0]) c->prefetch = weft_tuner_rand(rng) % 2;
    if (c->pack) c->prefetch = false;
}

void weft_sketch_mutate(const weft_sketch *sk, uint64_t *rng, weft_cand *c)
{
    if (sk->knobbed) {
        knobs_mutate(sk, rng, c);
        return;
    }
    weft_cand fresh;
    weft_sketch_sample(sk, rng, &fresh);
    switch (weft_tuner_rand(rng) % 5) {
    case 0: { /* one axis's whole tiling */
        int d = (int)(weft_tuner_rand(rng) % (uint64_t)sk->n_sp);
        c->t1[d] = fresh.t1[d];
        c->t2[d] = fresh.t2[d];
        c->r_in[d] = fresh.r_in[d];
        break;
    }
    case 1: { /* one axis's accumulator tile */
        int d = (int)(weft_tuner_rand(rng) % (uint64_t)sk->n_sp);
        c->r_in[d] = pick_divisor(rng, c->t2[d], d == sk->vec ? 4 * sk->lanes : 8, d == sk->vec ? sk->lanes : 1);
        break;
    }
    case 2:
        if (sk->n_red) {
            int k = (int)(weft_tuner_rand(rng) % (uint64_t)sk->n_red);
            c->k_in[k] = fresh.k_in[k];
        }
        break;
    case 3:
        c->unroll = fresh.unroll;
        c->pack = fresh.pack;
        c->prefetch = fresh.prefetch;
        break;
    default: c->n_par = fresh.n_par; break;
    }
    if (!weft_sketch_fits_registers(sk, c)) *c = fresh;
    if (!weft_sketch_fits_cache(sk, c)) c->pack = false;
    if (c->pack) c->prefetch = false;
}

char *weft_sketch_steps(const weft_sketch *sk, const weft_cand *c)
{
    if (sk->knobbed) return knobs_steps(sk, c);
    weft_strbuf sb = {0};
    weft_strbuf_puts(&sb, sk->prefix);
    const char *T = sk->t, *R = sk->r;
    int n = sk->n_sp;
    for (int d = 0; d < n; d++) weft_strbuf_printf(&sb, "split %s %s %lld %lld\n", T, sk->spt[d], (long long)c->t1[d], (long long)c->t2[d]);
    /* Outer-level order: axis order, or the vector axis first when its panel is packed. */
    int ord[WEFT_SKETCH_MAX_AXES], m = 0;
    if (c->pack) ord[m++] = sk->vec;
    for (int d = 0; d < n; d++)
        if (!c->pack || d != sk->vec) ord[m++] = d;
    weft_strbuf_printf(&sb, "reorder %s", T);
    for (int d = 0; d < n; d++) weft_strbuf_printf(&sb, " %s.0", sk->spt[ord[d]]);
    for (int lvl = 1; lvl < 3; lvl++)
        for (int d = 0; d < n; d++) weft_strbuf_printf(&sb, " %s.%d", sk->spt[d], lvl);
    weft_strbuf_puts(&sb, "\n");
    int np = c->n_par < 1 ? 1 : c->n_par > n ? n : c->n_par;
    if (np >= 2) {
        weft_strbuf_printf(&sb, "fuse %s", T);
        for (int d = 0; d < np; d++) weft_strbuf_printf(&sb, " %s.0", sk->spt[ord[d]]);
        weft_strbuf_printf(&sb, "\nparallel %s ", T);
        for (int d = 0; d < np; d++) weft_strbuf_printf(&sb, "%s%s.0", d ? "@" : "", sk->spt[ord[d]]);
        weft_strbuf_puts(&sb, "\n");
    } else if (c->n_par > 0) weft_strbuf_printf(&sb, "parallel %s %s.0\n", T, sk->spt[ord[0]]);
    weft_strbuf_printf(&sb, "compute_at %s %s %s.1\n", R, T, sk->spt[n - 1]);
    for (int d = 0; d < n; d++) weft_strbuf_printf(&sb, "split %s %s %lld\n", R, sk->sp[d], (long long)c->r_in[d]);
    for (int k = 0; k < sk->n_red; k++) weft_strbuf_printf(&sb, "split %s %s %lld\n", R, sk->red[k], (long long)c->k_in[k]);
    weft_strbuf_printf(&sb, "reorder %s", R);
    for (int k = 0; k < sk->n_red; k++) weft_strbuf_printf(&sb, " %s.0", sk->red[k]);
    for (int d = 0; d < n; d++) weft_strbuf_printf(&sb, " %s.0", sk->sp[d]);
    for (int k = 0; k < sk->n_red; k++) weft_strbuf_printf(&sb, " %s.1", sk->red[k]);
    for (int d = 0; d < n; d++) weft_strbuf_printf(&sb, " %s.1", sk->sp[d]);
    weft_strbuf_puts(&sb, "\n");
    for (int d = 0; d < n; d++) {
        if (c->r_in[d] <= 1) continue;
        if (d == sk->vec && c->r_in[d] <= 64) weft_strbuf_printf(&sb, "vectorize %s %s.1\n", R, sk->sp[d]);
        else if (d != sk->vec && c->r_in[d] <= 16) weft_strbuf_printf(&sb, "unroll %s %s.1\n", R, sk->sp[d]);
    }
    if (c->unroll > 0 && sk->n_red) weft_strbuf_printf(&sb, "pragma %s %s.0 auto_unroll %d\n", R, sk->red[0], c->unroll);
    if (c->prefetch && !c->pack && sk->stream[0] && sk->n_red)
        weft_strbuf_printf(&sb, "pragma %s %s.0 prefetch %s\n", R, sk->red[0], sk->stream);
    if (c->pack) {
        /* the panel is computed once per iteration of the vector axis's outer loop (or of the
         * fused parallel loop that contains it) and read by every register tile inside */
        char at[WEFT_SKETCH_MAX_AXES * 68] = "";
        if (np >= 2)
            for (int d = 0; d < np; d++) {
                strcat(at, d ? "@" : "");
                strncat(at, sk->spt[ord[d]], 64);
                strcat(at, ".0");
            }
        else snprintf(at, sizeof at, "%s.0", sk->spt[ord[0]]);
        weft_strbuf_printf(&sb, "cache_read %s local %s\ncompute_at %s.local %s %s\n", sk->pack, R, sk->pack, T, at);
        if (sk->pack_last_ext % sk->lanes == 0 && sk->pack_last_ext > sk->lanes)
            weft_strbuf_printf(&sb, "split %s.local %s %d\nvectorize %s.local %s.1\n", sk->pack, sk->pack_last, sk->lanes,
                               sk->pack, sk->pack_last);
    }
    if (c->t2[n - 1] > 1 && c->t2[n - 1] <= 64) weft_strbuf_printf(&sb, "vectorize %s %s.2\n", T, sk->spt[n - 1]);
    return weft_strbuf_take(&sb);
}
