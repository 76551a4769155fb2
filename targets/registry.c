/* The static list of targets, selected by name at run time. */
#include <string.h>

#include "ir/error.h"
#include "targets/target.h"

static const weft_target_ops *const targets[] = {
    &weft_target_interp_ops,
#ifdef WEFT_WITH_LLVM
    &weft_target_llvm_ops,
#endif
};

const weft_target_ops *weft_target_find(const char *name)
{
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (!strcmp(targets[i]->name, name)) return targets[i];
    weft_fail(WEFT_ERR_UNAVAILABLE, "target '%s' is not available in this build", name ? name : "(null)");
    return NULL;
}
