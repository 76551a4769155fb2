/* Schedule state: creation from a kernel, lookups, printing. */
#include "schedule/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/strbuf.h"
#include "runtime/mem.h"

void weft_sched_stage_init_iters(weft_stage *st)
{
    const weft_tensor *t = st->op;
    st->n_iters = st->n_leaves = st->n_rels = 0;
    for (int d = 0; d < t->ndim; d++) weft_sched_add_iter(st, weft_expr_var_name(t->axis[d].var), false);
    for (int r = 0; r < t->n_reduce; r++) weft_sched_add_iter(st, weft_expr_var_name(t->reduce_axis[r].var), true);
    st->n_root = st->n_iters;
}

int weft_sched_add_iter(weft_stage *st, const char *name, bool is_reduce)
{
    if (st->n_iters >= WEFT_SCHED_MAX_ITERS) return -1;
    int i = st->n_iters++;
    weft_sched_iter *it = &st->iters[i];
    memset(it, 0, sizeof *it);
    snprintf(it->name, sizeof it->name, "%s", name);
    it->is_reduce = is_reduce;
    it->annot = WEFT_FOR_SERIAL;
    it->consumed_by = -1;
    st->leaves[st->n_leaves++] = i;
    return i;
}

weft_status weft_schedule_create(const weft_te_func *f, weft_schedule **out)
{
    *out = NULL;
    if (!f) return weft_fail(WEFT_ERR_INVALID_ARG, "schedule: kernel is NULL");
    weft_schedule *s = weft_calloc(1, sizeof *s);
    if (!s) return weft_fail(WEFT_ERR_NOMEM, "schedule: out of memory");
    s->func = f;
    s->arena = weft_arena_create();
    s->stages = weft_calloc(WEFT_SCHED_MAX_STAGES, sizeof *s->stages);
    if (!s->arena || !s->stages) {
        weft_schedule_destroy(s);
        return weft_fail(WEFT_ERR_NOMEM, "schedule: out of memory");
    }
    for (int i = 0; i < f->n_tensors; i++) {
        const weft_tensor *t = f->tensors[i];
        if (t->is_placeholder) continue;
        if (s->n_stages >= WEFT_SCHED_MAX_STAGES) {
            weft_schedule_destroy(s);
            return weft_fail(WEFT_ERR_UNSUPPORTED, "schedule: kernel %s has more than %d stages", f->name,
                             WEFT_SCHED_MAX_STAGES);
        }
        for (int j = 0; j < s->n_stages; j++)
            if (!strcmp(s->stages[j].name, t->name)) {
                weft_schedule_destroy(s);
                return weft_fail(WEFT_ERR_INVALID_ARG, "schedule: kernel %s has two tensors named %s", f->name,
                                 t->name);
            }
        weft_stage *st = &s->stages[s->n_stages++];
        snprintf(st->name, sizeof st->name, "%s", t->name);
        st->ref = st->op = t;
        for (int o = 0; o < f->n_outputs; o++) st->is_output = st->is_output || f->outputs[o] == t;
        st->scope = WEFT_SCOPE_GLOBAL;
        st->attach = WEFT_ATTACH_ROOT;
        weft_sched_stage_init_iters(st);
    }
    *out = s;
    return WEFT_OK;
}

void weft_schedule_destroy(weft_schedule *s)
{
    if (!s) return;
    weft_arena_destroy(s->arena);
    free(s->stages);
    free(s->steps);
    free(s);
}

const weft_te_func *weft_schedule_func(const weft_schedule *s) { return s->func; }
int weft_schedule_n_steps(const weft_schedule *s) { return s->n_steps; }

int weft_sched_find_stage(const weft_schedule *s, const char *name)
{
    for (int i = 0; i < s->n_stages; i++)
        if (!strcmp(s->stages[i].name, name)) return i;
    weft_strbuf sb = {0};
    for (int i = 0; i < s->n_stages; i++) weft_strbuf_printf(&sb, "%s%s", i ? ", " : "", s->stages[i].name);
    char *list = weft_strbuf_take(&sb);
    weft_fail(WEFT_ERR_INVALID_ARG, "unknown stage '%s' (stages: %s)", name, list ? list : "?");
    free(list);
    return -1;
}

int weft_sched_find_iter(const weft_stage *st, const char *name)
{
    for (int i = 0; i < st->n_iters; i++)
        if (!strcmp(st->iters[i].name, name)) return i;
    weft_strbuf sb = {0};
    for (int l = 0; l < st->n_leaves; l++)
        weft_strbuf_printf(&sb, "%s%s", l ? ", " : "", st->iters[st->leaves[l]].name);
    char *list = weft_strbuf_take(&sb);
    weft_fail(WEFT_ERR_INVALID_ARG, "stage %s has no iterator '%s' (loops: %s)", st->name, name, list ? list : "?");
    free(list);
    return -1;
}

int weft_sched_leaf_pos(const weft_stage *st, int iter)
{
    for (int l = 0; l < st->n_leaves; l++)
        if (st->leaves[l] == iter) return l;
    return -1;
}

int weft_sched_stage_of(const weft_schedule *s, const weft_tensor *t)
{
    for (int i = 0; i < s->n_stages; i++)
        if (s->stages[i].ref == t) return i;
    return -1;
}

static bool reads_rec(const weft_schedule *s, int c, int p, int depth)
{
    if (depth > WEFT_SCHED_MAX_STAGES) return false;
    const weft_tensor *reads[64];
    int n = weft_te_reads(s->stages[c].op, reads, 64);
    for (int i = 0; i < n; i++) {
        int q = weft_sched_stage_of(s, reads[i]);
        if (q < 0) continue;
        if (q == p) return true;
        if (s->stages[q].attach == WEFT_ATTACH_INLINE && reads_rec(s, q, p, depth + 1)) return true;
    }
    return false;
}

bool weft_sched_reads(const weft_schedule *s, int c, int p) { return reads_rec(s, c, p, 0); }

int weft_sched_insert_stage(weft_schedule *s, int pos)
{
    if (s->n_stages >= WEFT_SCHED_MAX_STAGES) return -1;
    memmove(&s->stages[pos + 1], &s->stages[pos], sizeof *s->stages * (size_t)(s->n_stages - pos));
    s->n_stages++;
    memset(&s->stages[pos], 0, sizeof s->stages[pos]);
    for (int i = 0; i < s->n_stages; i++)
        if (i != pos && s->stages[i].attach == WEFT_ATTACH_AT && s->stages[i].at_stage >= pos)
            s->stages[i].at_stage++;
    return pos;
}

char *weft_schedule_text(const weft_schedule *s)
{
    weft_strbuf sb = {0};
    char line[1200];
    for (int i = 0; i < s->n_steps; i++) {
        weft_sched_print_step(&s->steps[i], line, sizeof line);
        weft_strbuf_printf(&sb, "%s\n", line);
    }
    return weft_strbuf_take(&sb);
}

void weft_schedule_print(const weft_schedule *s, FILE *out)
{
    for (int i = 0; i < s->n_stages; i++) {
        const weft_stage *st = &s->stages[i];
        fprintf(out, "stage %s", st->name);
        if (st->scope != WEFT_SCOPE_GLOBAL) fprintf(out, " (%s)", weft_scope_names[st->scope]);
        if (st->attach == WEFT_ATTACH_INLINE) fprintf(out, " inline");
        else if (st->attach == WEFT_ATTACH_AT)
            fprintf(out, " at %s.%s", s->stages[st->at_stage].name, s->stages[st->at_stage].iters[st->at_iter].name);
        else fprintf(out, " root");
        fprintf(out, ":");
        for (int l = 0; l < st->n_leaves; l++) {
            const weft_sched_iter *it = &st->iters[st->leaves[l]];
            fprintf(out, " %s%s", it->name, it->is_reduce ? "(r)" : "");
            if (it->annot == WEFT_FOR_THREAD_BOUND) fprintf(out, "[%s]", weft_thread_axis_names[it->thread_axis]);
            else if (it->annot != WEFT_FOR_SERIAL) fprintf(out, "[%s]", weft_for_kind_names[it->annot]);
            if (it->auto_unroll) fprintf(out, "[auto_unroll %d]", it->auto_unroll);
            if (it->prefetch[0]) fprintf(out, "[prefetch %s]", it->prefetch);
        }
        fprintf(out, "\n");
    }
}

/* A stage name BASE.SUFFIX[, BASE.SUFFIX2, ...] not used by any stage yet (cache and rfactor
 * stages); fails when too long. */
weft_status weft_sched_unique_name(const weft_schedule *s, const char *base, const char *scope, char *out)
{
    char buf[3 * WEFT_SCHED_NAME];
    for (int k = 1; k < 100; k++) {
        if (k == 1) snprintf(buf, sizeof buf, "%s.%s", base, scope);
        else snprintf(buf, sizeof buf, "%s.%s%d", base, scope, k);
        if (strlen(buf) >= WEFT_SCHED_NAME) return weft_fail(WEFT_ERR_UNSUPPORTED, "stage name %s is too long", buf);
        bool taken = false;
        for (int i = 0; i < s->n_stages; i++) taken = taken || !strcmp(s->stages[i].name, buf);
        if (!taken) {
            memcpy(out, buf, strlen(buf) + 1);
            return WEFT_OK;
        }
    }
    return weft_fail(WEFT_ERR_UNSUPPORTED, "too many %s stages of %s", scope, base);
}
