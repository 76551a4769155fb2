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

weft_status weft_sched_tile_spatial(weft_schedule *s, int t, int64_t inner_prev, int64_t inner_last, char *attach,
                                    char *par)
{
    weft_stage *st = &s->stages[t];
    const weft_tensor *op = st->op;
    int n = op->ndim;
    char outer[WEFT_MAX_DIMS][WEFT_SCHED_NAME + 8], inner[WEFT_MAX_DIMS][WEFT_SCHED_NAME + 8];
    int n_outer = 0, n_inner = 0, last_outer = -1;
    weft_status rc = WEFT_OK;
    attach[0] = par[0] = '\0';
    char sname[WEFT_SCHED_NAME];
    snprintf(sname, sizeof sname, "%s", st->name);
    for (int d = 0; d < n && rc == WEFT_OK; d++) {
        char name[WEFT_SCHED_NAME];
        snprintf(name, sizeof name, "%s", s->stages[t].iters[d].name);
        int64_t tile = d == n - 1 ? inner_last : d == n - 2 ? inner_prev : 1;
        if (tile <= 1) snprintf(outer[n_outer++], WEFT_SCHED_NAME + 8, "%s", name);
        else if (tile >= op->shape[d]) snprintf(inner[n_inner++], WEFT_SCHED_NAME + 8, "%s", name);
        else {
            rc = weft_sched_stepf(s, "split %s %s %lld", sname, name, (long long)tile);
            snprintf(outer[n_outer++], WEFT_SCHED_NAME + 8, "%s.0", name);
            snprintf(inner[n_inner++], WEFT_SCHED_NAME + 8, "%s.1", name);
        }
        if (d == n - 1 && (tile <= 1 || tile < op->shape[d])) last_outer = n_outer - 1;
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
    /* Outer loops except the last axis's are fused into one parallel loop. */
    int n_fuse = last_outer >= 0 && n_inner > 0 ? n_outer - 1 : n_outer;
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
    } else if (n_fuse == 1 || n_outer == 1) snprintf(par, WEFT_SCHED_NAME, "%.*s", WEFT_SCHED_NAME - 1, outer[0]);
    if (par[0]) {
        rc = weft_sched_stepf(s, "parallel %s %s", sname, par);
        if (rc != WEFT_OK) return rc;
    }
    if (n_outer > 0) {
        if (n_inner > 0 && last_outer >= 0 && n_fuse < n_outer) snprintf(attach, WEFT_SCHED_NAME, "%.*s", WEFT_SCHED_NAME - 1, outer[n_outer - 1]);
        else snprintf(attach, WEFT_SCHED_NAME, "%s", par);
    }
    if (n_inner > 0 && inner_last > 1 && inner_last <= 64)
        rc = weft_sched_stepf(s, "vectorize %s %s", sname, inner[n_inner - 1]);
    return rc;
}

weft_status weft_sched_register_tile(weft_schedule *s, int r, int64_t unroll_extent, int64_t vec_extent, int64_t max_vec)
{
    weft_stage *st = &s->stages[r];
    const weft_tensor *op = st->op;
    char line[1024], sname[WEFT_SCHED_NAME];
    snprintf(sname, sizeof sname, "%s", st->name);
    int len = snprintf(line, sizeof line, "reorder %s", sname);
    for (int k = 0; k < op->n_reduce; k++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", st->iters[op->ndim + k].name);
    for (int d = 0; d < op->ndim; d++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", st->iters[d].name);
    weft_status rc = weft_schedule_apply(s, line);
    if (rc == WEFT_OK && op->ndim >= 2 && unroll_extent > 1)
        rc = weft_sched_stepf(s, "unroll %s %s", sname, s->stages[r].iters[op->ndim - 2].name);
    if (rc == WEFT_OK && op->ndim >= 1 && vec_extent > 1 && vec_extent <= max_vec)
        rc = weft_sched_stepf(s, "vectorize %s %s", sname, s->stages[r].iters[op->ndim - 1].name);
    return rc;
}
