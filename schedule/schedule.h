/* Schedules are data (DESIGN #2): an ordered list of steps over the stages of one kernel.
 *
 * A schedule starts from a kernel's tensor expressions with every compute tensor a stage,
 * computed at root in topological order, its loops the tensor's axes then its reduction axes
 * (the "naive" schedule). Each step transforms the state: split, fuse, reorder, annotate
 * (parallel, vectorize, unroll), compute_at, compute_inline, compute_root, cache_write,
 * cache_read, pragma auto_unroll. Steps name stages and iterators by name and print as one line
 * of text each (grammar in schedule/step_text.c); replaying the text rebuilds the same schedule.
 *
 * Iterator names: a tensor's axes keep their names ("i", "j", reduction "k"); split of `i` into
 * n+1 parts gives "i.0" (outermost) ... "i.n"; fuse of `a` and `b` gives "a@b". Cache stages are
 * named "<tensor>.<scope>" ("C.local"); a cache_read stage of B for reader C is "B.local".
 */
#ifndef WEFT_SCHEDULE_SCHEDULE_H
#define WEFT_SCHEDULE_SCHEDULE_H
#include <stdio.h>

#include "ir/caps.h"
#include "ir/tensor.h"

typedef struct weft_schedule weft_schedule;

/* A naive schedule for f. f and its arena must outlive the schedule. Caller destroys. */
weft_status weft_schedule_create(const weft_te_func *f, weft_schedule **out);
void weft_schedule_destroy(weft_schedule *s); /* accepts NULL */
/* Parses and applies one step line (comments '#' and blank lines are no-ops). On error the
 * schedule is unchanged and the message names the step text and what is wrong. */
weft_status weft_schedule_apply(weft_schedule *s, const char *step_line);
/* Applies several lines (separated by '\n' or ';'); stops at the first error, naming its line.
 * Steps before the failing one stay applied. */
weft_status weft_schedule_apply_text(weft_schedule *s, const char *text);
/* The steps applied so far, one per line; malloc'd, caller frees. */
char *weft_schedule_text(const weft_schedule *s);
int weft_schedule_n_steps(const weft_schedule *s);
const weft_te_func *weft_schedule_func(const weft_schedule *s);
/* Prints stages, their iterators (in loop order, with annotations) and attachments. */
void weft_schedule_print(const weft_schedule *s, FILE *out);

/* Up to n_steps random valid steps (schedule/random.c); deterministic for a seed. Invalid
 * draws are rejected by the validator and not kept. */
weft_status weft_schedule_random(weft_schedule *s, uint64_t seed, int n_steps);
/* The same for GPU targets: no `parallel`; root stages' outer loops bound to blockIdx.x and
 * threadIdx.x afterwards, the thread loop often split to whole warps of caps->warp_size (32
 * when caps is NULL or says 0) (schedule/random.c). Lowering decides whether it is launchable. */
weft_status weft_schedule_random_gpu_for(weft_schedule *s, const weft_target_caps *caps, uint64_t seed, int n_steps);
/* weft_schedule_random_gpu_for with warps of 32. */
weft_status weft_schedule_random_gpu(weft_schedule *s, uint64_t seed, int n_steps);

/* Built-in schedules (schedule/default.c, schedule/manual.c). */
/* A decent schedule without tuning, by kernel pattern (elementwise, reduction, matmul/conv). */
weft_status weft_schedule_default(weft_schedule *s, const weft_target_caps *caps);
/* The default schedule's rule for a convolution in filter blocks, its pooling and depthwise
 * rules (schedule/default_conv.c): *done tells whether the kernel had one of these patterns
 * (and got the schedule); otherwise s is unchanged. */
weft_status weft_schedule_default_conv(weft_schedule *s, const weft_target_caps *caps, bool *done);
/* Knobs: the decisions of a default rule that a tuner may vary (AutoTVM's template knobs), for
 * kernels the tuner's sketches do not cover. Today: the blocked convolution's register tile
 * (tf filter vectors x tn images x ty rows x tx columns), whether the filter blocks are the
 * innermost parallel loop, and an auto_unroll pragma on its reduction (schedule/default_conv.c).
 * weft_schedule_knob_space gives sp->n = 0 when f's kernel has no rule with knobs. For GPU caps
 * the space is the GEMM tile of the default GPU schedule (rule "gpu_gemm", schedule/gemm_gpu.h).
 * weft_schedule_default_knobs schedules a fresh s by that rule with one value per knob,
 * refusing (WEFT_ERR_INVALID_ARG, s unchanged, the message naming the knob) values out of range
 * or a tile that does not fit the vector register file; the default schedule is one point of the
 * space. */
#define WEFT_KNOBS_MAX 8
#define WEFT_KNOB_VALUES_MAX 32
typedef struct weft_knob_space {
    char rule[32];
    int n;
    char name[WEFT_KNOBS_MAX][16];
    int n_values[WEFT_KNOBS_MAX];
    int64_t values[WEFT_KNOBS_MAX][WEFT_KNOB_VALUES_MAX];
} weft_knob_space;
weft_status weft_schedule_knob_space(const weft_te_func *f, const weft_target_caps *caps, weft_knob_space *sp);
weft_status weft_schedule_default_knobs(weft_schedule *s, const weft_target_caps *caps, int n, const int64_t *values);
/* GPU targets (caps->has_thread_binding; weft_schedule_default calls it): block per row for row
 * reductions, shared-memory K tiles with register tiles for matmul-like stages
 * (schedule/gemm_gpu.h), a thread per output element otherwise (schedule/default_gpu.c). */
weft_status weft_schedule_default_gpu(weft_schedule *s, const weft_target_caps *caps);
/* Hand-written expert matmul schedule for a kernel made by weft_op_matmul / weft_op_dense. */
weft_status weft_schedule_manual_matmul(weft_schedule *s, const weft_target_caps *caps);

#endif
