/* Schedule state (internal to schedule/ and lower/): stages, iterators, relations, attachments.
 *
 * Every compute tensor of the kernel is a stage; cache_read/cache_write add stages. A stage
 * refers to its result by `ref`, the tensor pointer that other stages' TLOADs and the kernel's
 * outputs name; `op` is the tensor whose body currently defines it (a cache_write or cache_read
 * gives a stage a rewritten `op` but keeps `ref`, so no consumer has to be rewritten).
 *
 * Iterators of a stage: its root axes first (spatial axes, then reduction axes), then the ones
 * that splits and fuses create, in creation order. `leaves` lists the loop order (outermost
 * first). Extents are not stored: they depend on the region a stage computes, which lowering
 * infers from the attachments (lower/bound.c), so one step list serves any region.
 *
 * Invariants: names are unique per stage (iterators) and per schedule (stages); every iterator
 * is either a leaf or the input of exactly one relation; a fuse joins adjacent leaves of one
 * kind (all spatial or all reduce); stages are kept in topological order.
 */
#ifndef WEFT_SCHEDULE_STATE_H
#define WEFT_SCHEDULE_STATE_H
#include "schedule/query.h"
#include "schedule/schedule.h"

#define WEFT_SCHED_MAX_STAGES 128
#define WEFT_SCHED_MAX_ITERS 64
#define WEFT_SCHED_MAX_RELS 32
#define WEFT_SCHED_MAX_PARTS 8
#define WEFT_SCHED_NAME 64
#define WEFT_STEP_MAX_ARGS 16

typedef enum weft_rel_kind { WEFT_REL_SPLIT, WEFT_REL_FUSE } weft_rel_kind;

/* split: in[0] -> out[0..n_out-1] (outermost first). factors[i] is the extent of out[i+1]
 *        when !nparts; with nparts, factors[0] is the extent of out[0] (n_out == 2).
 * fuse:  in[0..n_in-1] (outermost first) -> out[0]. */
typedef struct weft_rel {
    weft_rel_kind kind;
    int n_in, n_out;
    int in[WEFT_SCHED_MAX_PARTS];
    int out[WEFT_SCHED_MAX_PARTS];
    bool nparts;
    int64_t factors[WEFT_SCHED_MAX_PARTS];
} weft_rel;

typedef struct weft_sched_iter {
    char name[WEFT_SCHED_NAME];
    bool is_reduce;
    weft_for_kind annot;  /* SERIAL, PARALLEL, VECTORIZED, UNROLLED, THREAD_BOUND (bind) */
    weft_thread_axis thread_axis; /* bind: the GPU axis of a THREAD_BOUND iterator */
    int auto_unroll;      /* pragma auto_unroll depth, 0 = none */
    char prefetch[WEFT_SCHED_NAME]; /* pragma prefetch: the tensor whose next-iteration reads are
                                     * prefetched in this loop (lower/prefetch.c), "" = none */
    int consumed_by;      /* relation index, -1 for a leaf */
} weft_sched_iter;

typedef enum weft_attach_kind { WEFT_ATTACH_ROOT, WEFT_ATTACH_INLINE, WEFT_ATTACH_AT } weft_attach_kind;

typedef struct weft_stage {
    char name[WEFT_SCHED_NAME];
    const weft_tensor *ref; /* the result, as named by TLOADs and outputs */
    const weft_tensor *op;  /* the definition (axes, reduce axes, body) */
    bool is_output;
    weft_scope scope;       /* GLOBAL, or the scope given to a cache stage */
    int n_root;             /* op->ndim + op->n_reduce */
    int n_iters;
    weft_sched_iter iters[WEFT_SCHED_MAX_ITERS];
    int n_leaves;
    int leaves[WEFT_SCHED_MAX_ITERS];
    int n_rels;
    weft_rel rels[WEFT_SCHED_MAX_RELS];
    weft_attach_kind attach;
    int at_stage; /* ATTACH_AT: index of the consumer stage */
    int at_iter;  /* ATTACH_AT: iterator index in that stage (a leaf) */
} weft_stage;

typedef struct weft_step {
    int kind; /* weft_step_kind */
    int n_args;
    char args[WEFT_STEP_MAX_ARGS][WEFT_SCHED_NAME];
} weft_step;

struct weft_schedule {
    const weft_te_func *func;
    weft_arena *arena; /* owns tensors created by cache steps */
    int n_stages;
    weft_stage *stages; /* [WEFT_SCHED_MAX_STAGES] */
    int n_steps, cap_steps;
    weft_step *steps;
};

typedef enum weft_step_kind {
#define X(name, text, min_args, apply) WEFT_STEP_##name,
#include "schedule/steps.def"
#undef X
    WEFT_STEP_COUNT
} weft_step_kind;

/* Lookups: index, or -1 with an error message set that names what was looked for. */
int weft_sched_find_stage(const weft_schedule *s, const char *name);
/* A stage name BASE.SUFFIX[, BASE.SUFFIX2, ...] not taken yet, into out (WEFT_SCHED_NAME bytes). */
weft_status weft_sched_unique_name(const weft_schedule *s, const char *base, const char *suffix, char *out);
int weft_sched_find_iter(const weft_stage *st, const char *name);
int weft_sched_leaf_pos(const weft_stage *st, int iter);
/* The stage whose result is tensor t, or -1 (placeholders have no stage). */
int weft_sched_stage_of(const weft_schedule *s, const weft_tensor *t);
/* Adds an iterator; returns its index or -1 when full. */
int weft_sched_add_iter(weft_stage *st, const char *name, bool is_reduce);
/* Inserts a stage at position pos (shifting attachments); returns pos or -1 when full. */
int weft_sched_insert_stage(weft_schedule *s, int pos);
/* Initializes a stage's iterators from its op: spatial axes then reduction axes, all leaves. */
void weft_sched_stage_init_iters(weft_stage *st);

/* Step application (one function per primitive family; validate, then mutate). */
weft_status weft_sched_apply_split(weft_schedule *s, const weft_step *st);
weft_status weft_sched_apply_fuse(weft_schedule *s, const weft_step *st);
weft_status weft_sched_apply_reorder(weft_schedule *s, const weft_step *st);
weft_status weft_sched_apply_annotate(weft_schedule *s, const weft_step *st);
weft_status weft_sched_apply_bind(weft_schedule *s, const weft_step *st);
weft_status weft_sched_apply_pragma(weft_schedule *s, const weft_step *st);
weft_status weft_sched_apply_compute_at(weft_schedule *s, const weft_step *st);
weft_status weft_sched_apply_compute_inline(weft_schedule *s, const weft_step *st);
weft_status weft_sched_apply_compute_root(weft_schedule *s, const weft_step *st);
weft_status weft_sched_apply_cache_write(weft_schedule *s, const weft_step *st);
weft_status weft_sched_apply_cache_read(weft_schedule *s, const weft_step *st);
weft_status weft_sched_apply_rfactor(weft_schedule *s, const weft_step *st);

/* Invariants across stages, checked after every step (schedule/compute_loc.c). */
weft_status weft_sched_check(const weft_schedule *s);

/* Step text. */
weft_status weft_sched_parse_step(const char *line, weft_step *out);
void weft_sched_print_step(const weft_step *st, char *buf, size_t n);
/* Applies a parsed step: validates it against s, mutates s and records it. */
weft_status weft_sched_apply_step(weft_schedule *s, const weft_step *st);

#endif
