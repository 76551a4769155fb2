/* Schedule -> lowered loop IR -> compiled kernel on a target, in one call: the layer above
 * lower/ and targets/ that joins them (lowering for the target's caps). */
#include "compile/build.h"

#include "lower/lower.h"

weft_status weft_target_build(const weft_target_ops *ops, weft_target *t, const weft_schedule *s, weft_arena *a,
                              weft_loop_func **lf_out, weft_kernel **out)
{
    *out = NULL;
    weft_target_caps caps;
    ops->caps(t, &caps);
    weft_loop_func *lf = NULL;
    weft_status rc = weft_lower(s, &caps, a, &lf);
    if (rc != WEFT_OK) return rc;
    if (lf_out) *lf_out = lf;
    return ops->compile(t, lf, out);
}
