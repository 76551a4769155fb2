/* Default schedule of squeeze-excite's channel gate (schedule/sched_util.h,
 * weft_schedule_default_gate; called by schedule/default_conv.c): a kernel whose output
 * x * sigmoid(FC(s)) scales each channel of x by a gate computed from a small reduction.
 *
 * Pattern (by structure): one output Y [N, C, H, W] (H*W > 1, no reduction); one reduction of
 * at most N x C elements (C rounded up to whole vectors: a blocked FC); elementwise/injective
 * stages that are either that small (the gate chain; one of them [N, C, 1, 1] is read by Y) or
 * of Y's size (inlined).
 *
 * Schedule: the reduction and the gate stages Y reads at root, flat and in vectors (the FC's
 * reduction loops around a vector of outputs; stages between them inlined); Y parallel over
 * (n, c), its H*W pixels fused into one contiguous run per channel, in vectors. Inlined, the
 * gate (bias, sigmoid) ran once per output element and the FC as a scalar loop: a 1152-channel
 * 7x7 gate took 66 us, 13 us so.
 */
#include <stdio.h>
#include <string.h>

#include "ir/pattern.h"
#include "schedule/sched_util.h"

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t elems(const weft_tensor *op)
{
    int64_t n = 1;
    for (int d = 0; d < op->ndim; d++) n *= op->shape[d];
    return n;
}

/* A kernel whose one output Y [N, C, H, W] (H*W > 1, no reduction) scales its input by a
 * per-channel gate: one small reduction (per channel: at most N x C elements, C rounded up to
 * whole vectors for a blocked FC; gate_elems) feeds
 * small elementwise stages, one of them [N, C, 1, 1] read by Y; every other stage is
 * elementwise/injective of Y's size. Returns Y's index or -1. Inlined, the gate (bias,
 * sigmoid) ran once per output element and the FC as a scalar loop: 3-5x slower. */
static int64_t gate_elems(const weft_tensor *Y, int64_t lanes) { return Y->shape[0] * ceil_div(Y->shape[1], lanes) * lanes; }

static int channel_gate(const weft_schedule *s, int *red, int64_t lanes)
{
    int y = -1, r = -1;
    for (int i = 0; i < s->n_stages; i++) {
        if (s->stages[i].is_output) {
            if (y >= 0) return -1;
            y = i;
        } else if (s->stages[i].op->n_reduce) {
            if (r >= 0) return -1;
            r = i;
        }
    }
    if (y < 0 || r < 0) return -1;
    const weft_tensor *Y = s->stages[y].op;
    if (Y->ndim != 4 || Y->n_reduce || Y->shape[2] * Y->shape[3] < 2) return -1;
    int64_t nc = gate_elems(Y, lanes);
    if (elems(s->stages[r].op) > nc || 2 * nc > elems(Y)) return -1;
    bool gate = false;
    for (int i = 0; i < s->n_stages; i++) {
        const weft_tensor *op = s->stages[i].op;
        weft_op_pattern p = weft_tensor_pattern(op);
        if (i == r || i == y) continue;
        if (p != WEFT_PATTERN_ELEMWISE && p != WEFT_PATTERN_INJECTIVE) return -1;
        if (elems(op) > nc) continue; /* full size: inlined */
        if (op->ndim == 4 && op->shape[0] == Y->shape[0] && op->shape[1] == Y->shape[1] && op->shape[2] == 1 &&
            op->shape[3] == 1 && weft_sched_reads(s, y, i) && weft_sched_reads_through(s, i, r))
            gate = true;
    }
    *red = r;
    return gate ? y : -1;
}

/* All data axes of stage `name` fused into one loop, reduction axes inside it; in vectors when
 * there are at least `lanes` elements (the reduction loops then run around the vector). */
static weft_status flat_vectors(weft_schedule *s, const char *name, int64_t lanes)
{
    int i = weft_sched_find_stage(s, name);
    if (i < 0) return WEFT_ERR_INTERNAL;
    const weft_stage *st = &s->stages[i];
    int nd = st->op->ndim, nr = st->op->n_reduce;
    if (nd == 0) return WEFT_OK;
    char fused[WEFT_SCHED_NAME * 2] = "", line[1024];
    int len = snprintf(line, sizeof line, "fuse %s", name);
    for (int d = 0; d < nd; d++) {
        len += snprintf(line + len, sizeof line - (size_t)len, " %s", st->iters[d].name);
        strncat(fused, d ? "@" : "", sizeof fused - strlen(fused) - 1);
        strncat(fused, st->iters[d].name, sizeof fused - strlen(fused) - 1);
    }
    if (strlen(fused) >= WEFT_SCHED_NAME) return WEFT_OK; /* names too long: keep the naive nest */
    char red[4][WEFT_SCHED_NAME];
    for (int k = 0; k < nr && k < 4; k++) snprintf(red[k], sizeof red[k], "%s", st->iters[nd + k].name);
    if (nr > 4) return WEFT_OK;
    weft_status rc = nd > 1 ? weft_schedule_apply(s, line) : WEFT_OK;
    if (rc != WEFT_OK || elems(st->op) < lanes) return rc;
    if ((rc = weft_sched_stepf(s, "split %s %s %lld", name, fused, (long long)lanes)) != WEFT_OK) return rc;
    len = snprintf(line, sizeof line, "reorder %s %s.0", name, fused);
    for (int k = 0; k < nr; k++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", red[k]);
    snprintf(line + len, sizeof line - (size_t)len, " %s.1", fused);
    if ((rc = weft_schedule_apply(s, line)) != WEFT_OK) return rc;
    return weft_sched_stepf(s, "vectorize %s %s.1", name, fused);
}

/* The gate kernel: full-size stages inlined; the reduction and the gate stages Y reads at root
 * (flat, in vectors; stages between them inlined); Y parallel over (n, c), its H*W pixels fused
 * (one contiguous run per channel) and in vectors. */
static weft_status schedule_gate(weft_schedule *s, int r, int y, const weft_target_caps *caps)
{
    int64_t lanes = caps && caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8;
    char yname[WEFT_SCHED_NAME], rname[WEFT_SCHED_NAME], keep[WEFT_SCHED_MAX_STAGES][WEFT_SCHED_NAME];
    int n_keep = 0;
    snprintf(yname, sizeof yname, "%s", s->stages[y].name);
    snprintf(rname, sizeof rname, "%s", s->stages[r].name);
    weft_status rc = WEFT_OK;
    for (int i = 0; i < s->n_stages && rc == WEFT_OK; i++) {
        if (i == r || i == y) continue;
        const weft_tensor *op = s->stages[i].op;
        bool small = elems(op) <= gate_elems(s->stages[y].op, lanes);
        if (small && weft_sched_reads(s, y, i)) snprintf(keep[n_keep++], WEFT_SCHED_NAME, "%s", s->stages[i].name);
        else rc = weft_sched_stepf(s, "compute_inline %s", s->stages[i].name);
    }
    if (rc == WEFT_OK) rc = flat_vectors(s, rname, lanes);
    for (int k = 0; k < n_keep && rc == WEFT_OK; k++) rc = flat_vectors(s, keep[k], lanes);
    if (rc != WEFT_OK) return rc;
    y = weft_sched_find_stage(s, yname);
    char ax[4][WEFT_SCHED_NAME];
    for (int d = 0; d < 4; d++) snprintf(ax[d], sizeof ax[d], "%s", s->stages[y].iters[d].name);
    char nc[WEFT_SCHED_NAME * 2], hw[WEFT_SCHED_NAME * 2];
    snprintf(nc, sizeof nc, "%s@%s", ax[0], ax[1]);
    snprintf(hw, sizeof hw, "%s@%s", ax[2], ax[3]);
    if (strlen(nc) >= WEFT_SCHED_NAME || strlen(hw) >= WEFT_SCHED_NAME) return WEFT_ERR_INTERNAL;
    rc = weft_sched_stepf(s, "fuse %s %s %s", yname, ax[0], ax[1]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "parallel %s %s", yname, nc);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "fuse %s %s %s", yname, ax[2], ax[3]);
    if (rc != WEFT_OK) return rc;
    if (s->stages[y].op->shape[2] * s->stages[y].op->shape[3] <= lanes) return weft_sched_stepf(s, "vectorize %s %s", yname, hw);
    if ((rc = weft_sched_stepf(s, "split %s %s %lld", yname, hw, (long long)lanes)) != WEFT_OK) return rc;
    return weft_sched_stepf(s, "vectorize %s %s.1", yname, hw);
}

bool weft_schedule_default_gate(weft_schedule *s, const weft_target_caps *caps, weft_status *rc)
{
    int64_t lanes = caps && caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8;
    int r, y = channel_gate(s, &r, lanes);
    if (y < 0) return false;
    *rc = schedule_gate(s, r, y, caps);
    return true;
}
