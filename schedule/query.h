/* Read-only questions about a schedule's stages, for code above schedule/ (the tuner's sketch
 * rules, tools) that must not depend on the schedule's internal structs (schedule/state.h,
 * which only schedule/ and lower/ read).
 *
 * Stages are numbered 0..weft_sched_n_stages(s)-1 in topological order; a stage's iterators
 * are numbered with its root axes first (spatial axes, then reduction axes), then the ones
 * splits and fuses created. Out-of-range indices give a zeroed view / NULL.
 */
#ifndef WEFT_SCHEDULE_QUERY_H
#define WEFT_SCHEDULE_QUERY_H
#include <stdbool.h>

#include "schedule/schedule.h"

typedef struct weft_stage_view {
    const char *name;       /* unique in the schedule; borrowed from s */
    const weft_tensor *op;  /* the definition (axes, reduce axes, body) */
    const weft_tensor *ref; /* the result, as consumers and outputs name it */
    bool is_output;
    bool is_root;           /* computed at the root of the kernel */
    bool is_inline;         /* expanded into its readers */
    int at_stage;           /* computed inside this stage's loops, or -1 */
    int n_iters, n_leaves;
} weft_stage_view;

int weft_sched_n_stages(const weft_schedule *s);
weft_stage_view weft_sched_stage(const weft_schedule *s, int i);
/* Name of iterator `iter` of stage i (root axes first), or NULL. */
const char *weft_sched_iter_name(const weft_schedule *s, int i, int iter);
/* True when stage c reads stage p's result, directly or through inlined stages. */
bool weft_sched_reads(const weft_schedule *s, int c, int p);

#endif
