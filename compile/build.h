/* Lowers a schedule into `a` and compiles it on target t (which must outlive the kernel).
 * *lf_out (optional) receives the loop IR. Caller destroys the kernel with
 * ops->kernel_destroy. */
#ifndef WEFT_COMPILE_BUILD_H
#define WEFT_COMPILE_BUILD_H
#include "schedule/schedule.h"
#include "targets/target.h"

weft_status weft_target_build(const weft_target_ops *ops, weft_target *t, const weft_schedule *s, weft_arena *a,
                              weft_loop_func **lf_out, weft_kernel **out);

#endif
