/* Default GPU schedules (simple and correct first): elementwise and injective stages that are
 * not outputs are inlined into their readers; every other stage gets one thread per output
 * element: its spatial loops are fused, split by the block size (256 threads: 8 warps of 32,
 * 4 AMD wavefronts of 64; a whole number of caps->warp_size below the caps' thread limit; or
 * the whole extent when smaller) and bound to blockIdx.x / threadIdx.x; reduction loops stay serial
 * in the thread. This covers every op class (matmul, conv, pooling, elementwise chains,
 * softmax and layer-norm rows, reductions, transposes) with one rule; faster schedules come
 * from tuning. A stage without spatial axes (a scalar) runs on one thread. */
#include "ir/error.h"
#include "ir/pattern.h"
#include "schedule/sched_util.h"
#include "schedule/state.h"

enum { GPU_BLOCK = 256 };

weft_status weft_schedule_default_gpu(weft_schedule *s, const weft_target_caps *caps)
{
    int64_t block = caps && caps->max_threads > 0 && caps->max_threads < GPU_BLOCK ? caps->max_threads : GPU_BLOCK;
    int64_t warp = caps && caps->warp_size > 0 ? caps->warp_size : 32;
    if (block >= warp) block -= block % warp; /* whole warps (wavefronts) per block */
    weft_status rc = WEFT_OK;
    for (int i = 0; i < s->n_stages && rc == WEFT_OK; i++) {
        weft_op_pattern p = weft_tensor_pattern(s->stages[i].op);
        if (!s->stages[i].is_output && (p == WEFT_PATTERN_ELEMWISE || p == WEFT_PATTERN_INJECTIVE))
            rc = weft_sched_stepf(s, "compute_inline %s", s->stages[i].name);
    }
    for (int i = 0; i < s->n_stages && rc == WEFT_OK; i++) {
        const weft_stage *st = &s->stages[i];
        if (st->attach != WEFT_ATTACH_ROOT) continue;
        const weft_tensor *op = st->op;
        char name[WEFT_SCHED_NAME];
        int64_t total = 1;
        for (int d = 0; d < op->ndim; d++) total *= op->shape[d];
        if (op->ndim == 0) {
            /* No spatial loop: a one-thread launch around the reduction is not expressible as a
             * bound loop, so the stage is left to the launch check's message. */
            continue;
        }
        if (op->ndim > 1) {
            char line[1024];
            int len = snprintf(line, sizeof line, "fuse %s", st->name);
            for (int d = 0; d < op->ndim && len < (int)sizeof line; d++)
                len += snprintf(line + len, sizeof line - (size_t)len, " %s", st->iters[d].name);
            if ((rc = weft_schedule_apply(s, line)) != WEFT_OK) break;
            st = &s->stages[i];
            snprintf(name, sizeof name, "%s", st->iters[st->leaves[0]].name);
        } else snprintf(name, sizeof name, "%s", st->iters[0].name);
        int64_t t = total < block ? total : block;
        if ((rc = weft_sched_stepf(s, "split %s %s %lld", st->name, name, (long long)t)) != WEFT_OK) break;
        if ((rc = weft_sched_stepf(s, "bind %s %s.0 blockIdx.x", st->name, name)) != WEFT_OK) break;
        rc = weft_sched_stepf(s, "bind %s %s.1 threadIdx.x", st->name, name);
    }
    return rc;
}
