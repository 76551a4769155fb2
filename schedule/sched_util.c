#include "schedule/sched_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

weft_status weft_sched_stepf(weft_schedule *s, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    return weft_schedule_apply(s, line);
}

int64_t weft_sched_pick_tile(int64_t extent, int64_t cap, const int64_t *cands, int n)
{
    if (extent <= cap) return extent;
    for (int i = 0; i < n; i++)
        if (cands[i] > 0 && extent % cands[i] == 0) return cands[i];
    return 1;
}

weft_status weft_sched_tile(weft_schedule *s, int t, const int64_t *tiles, char *attach, char *par)
{
    weft_stage *st = &s->stages[t];
    const weft_tensor *op = st->op;
    int n = op->ndim;
    char outer[WEFT_MAX_DIMS][WEFT_SCHED_NAME + 8], inner[WEFT_MAX_DIMS][WEFT_SCHED_NAME + 8];
    int n_outer = 0, n_inner = 0, vec_inner = -1;
    weft_status rc = WEFT_OK;
    attach[0] = par[0] = '\0';
    char sname[WEFT_SCHED_NAME];
    snprintf(sname, sizeof sname, "%s", st->name);
    for (int d = 0; d < n && rc == WEFT_OK; d++) {
        char name[WEFT_SCHED_NAME];
        snprintf(name, sizeof name, "%s", s->stages[t].iters[d].name);
        int64_t tile = tiles[d];
        if (tile <= 1) snprintf(outer[n_outer++], WEFT_SCHED_NAME + 8, "%s", name);
        else if (tile >= op->shape[d]) snprintf(inner[n_inner++], WEFT_SCHED_NAME + 8, "%s", name);
        else {
            rc = weft_sched_stepf(s, "split %s %s %lld", sname, name, (long long)tile);
            snprintf(outer[n_outer++], WEFT_SCHED_NAME + 8, "%s.0", name);
            snprintf(inner[n_inner++], WEFT_SCHED_NAME + 8, "%s.1", name);
        }
        if (tile > 1 && d == n - 1) vec_inner = n_inner - 1;
    }
    if (rc != WEFT_OK) return rc;
    if (n_inner > 0 && n_outer > 0) {
        char line[1024];
        int len = snprintf(line, sizeof line, "reorder %s", sname);
        for (int i = 0; i < n_outer; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", outer[i]);
        for (int i = 0; i < n_inner; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", inner[i]);
        rc = weft_schedule_apply(s, line);
        if (rc != WEFT_OK) return rc;
    }
    /* The outer loops but the innermost are fused into one parallel loop; the innermost outer
     * loop is where a producer's tile is computed. */
    int n_fuse = n_inner > 0 && n_outer > 1 ? n_outer - 1 : n_outer;
    if (n_fuse >= 2) {
        char line[1024];
        int len = snprintf(line, sizeof line, "fuse %s", sname);
        char fused[WEFT_SCHED_NAME * 2] = "";
        for (int i = 0; i < n_fuse; i++) {
            len += snprintf(line + len, sizeof line - (size_t)len, " %s", outer[i]);
            strncat(fused, i ? "@" : "", sizeof fused - strlen(fused) - 1);
            strncat(fused, outer[i], sizeof fused - strlen(fused) - 1);
        }
        if (strlen(fused) < WEFT_SCHED_NAME) {
            rc = weft_schedule_apply(s, line);
            if (rc != WEFT_OK) return rc;
            memcpy(par, fused, strlen(fused) + 1);
        } else snprintf(par, WEFT_SCHED_NAME, "%.*s", WEFT_SCHED_NAME - 1, outer[0]);
    } else if (n_fuse == 1) snprintf(par, WEFT_SCHED_NAME, "%.*s", WEFT_SCHED_NAME - 1, outer[0]);
    if (par[0]) {
        rc = weft_sched_stepf(s, "parallel %s %s", sname, par);
        if (rc != WEFT_OK) return rc;
    }
    if (n_outer > n_fuse) snprintf(attach, WEFT_SCHED_NAME, "%.*s", WEFT_SCHED_NAME - 1, outer[n_outer - 1]);
    else snprintf(attach, WEFT_SCHED_NAME, "%s", par);
    if (vec_inner >= 0 && tiles[n - 1] <= 64) rc = weft_sched_stepf(s, "vectorize %s %s", sname, inner[vec_inner]);
    return rc;
}

weft_status weft_sched_register_tile(weft_schedule *s, int r, int unroll_axis, int vec_axis, int64_t max_vec,
                                     const int64_t *tiles)
{
    weft_stage *st = &s->stages[r];
    const weft_tensor *op = st->op;
    char line[1024], sname[WEFT_SCHED_NAME];
    snprintf(sname, sizeof sname, "%s", st->name);
    int len = snprintf(line, sizeof line, "reorder %s", sname);
    for (int k = 0; k < op->n_reduce; k++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", st->iters[op->ndim + k].name);
    for (int d = 0; d < op->ndim; d++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", st->iters[d].name);
    weft_status rc = weft_schedule_apply(s, line);
    if (rc == WEFT_OK && unroll_axis >= 0 && tiles[unroll_axis] > 1)
        rc = weft_sched_stepf(s, "unroll %s %s", sname, s->stages[r].iters[unroll_axis].name);
    if (rc == WEFT_OK && vec_axis >= 0 && tiles[vec_axis] > 1 && tiles[vec_axis] <= max_vec)
        rc = weft_sched_stepf(s, "vectorize %s %s", sname, s->stages[r].iters[vec_axis].name);
    return rc;
}
