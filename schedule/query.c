/* Read-only stage queries (schedule/query.h) over the schedule state. */
#include "schedule/query.h"

#include <string.h>

#include "schedule/state.h"

int weft_sched_n_stages(const weft_schedule *s) { return s ? s->n_stages : 0; }

weft_stage_view weft_sched_stage(const weft_schedule *s, int i)
{
    weft_stage_view v;
    memset(&v, 0, sizeof v);
    v.at_stage = -1;
    if (!s || i < 0 || i >= s->n_stages) return v;
    const weft_stage *st = &s->stages[i];
    v.name = st->name;
    v.op = st->op;
    v.ref = st->ref;
    v.is_output = st->is_output;
    v.is_root = st->attach == WEFT_ATTACH_ROOT;
    v.is_inline = st->attach == WEFT_ATTACH_INLINE;
    v.at_stage = st->attach == WEFT_ATTACH_AT ? st->at_stage : -1;
    v.n_iters = st->n_iters;
    v.n_leaves = st->n_leaves;
    return v;
}

const char *weft_sched_iter_name(const weft_schedule *s, int i, int iter)
{
    if (!s || i < 0 || i >= s->n_stages || iter < 0 || iter >= s->stages[i].n_iters) return NULL;
    return s->stages[i].iters[iter].name;
}
