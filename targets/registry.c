/* The static list of targets, selected by name at run time. */
#include <string.h>

#include "ir/error.h"
#include "targets/target.h"
#ifdef WEFT_WITH_CUDA
#include "targets/cuda/cuda.h"
#endif

static const weft_target_ops *const targets[] = {
    &weft_target_interp_ops,
#ifdef WEFT_WITH_LLVM
    &weft_target_llvm_ops,
#endif
};

const weft_target_ops *weft_target_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof targets / sizeof targets[0]; i++)
        if (!strcmp(targets[i]->name, name)) return targets[i];
#ifdef WEFT_WITH_CUDA
    for (int i = 0; name && i < weft_target_cuda_count; i++)
        if (!strcmp(weft_target_cuda_list[i]->name, name)) return weft_target_cuda_list[i];
#endif
    weft_fail(WEFT_ERR_UNAVAILABLE, "target '%s' is not available in this build", name ? name : "(null)");
    return NULL;
}
