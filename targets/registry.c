/* The static list of targets, selected by name at run time. */
#include <string.h>

#include "ir/error.h"
#include "targets/target.h"
#ifdef WEFT_WITH_CUDA
#include "targets/cuda/cuda.h"
#endif
#ifdef WEFT_WITH_HIP
#include "targets/hip/hip.h"
#endif

static const weft_target_ops *const targets[] = {
    &weft_target_interp_ops,
#ifdef WEFT_WITH_LLVM
    &weft_target_llvm_ops,
#endif
};

/* Targets added at run time (weft_target_register). */
enum { MAX_EXTRA = 8 };
static const weft_target_ops *extra[MAX_EXTRA];
static int n_extra;

const weft_target_ops *weft_target_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof targets / sizeof targets[0]; i++)
        if (!strcmp(targets[i]->name, name)) return targets[i];
    for (int i = 0; name && i < n_extra; i++)
        if (!strcmp(extra[i]->name, name)) return extra[i];
#ifdef WEFT_WITH_CUDA
    for (int i = 0; name && i < weft_target_cuda_count; i++)
        if (!strcmp(weft_target_cuda_list[i]->name, name)) return weft_target_cuda_list[i];
#endif
#ifdef WEFT_WITH_HIP
    for (int i = 0; name && i < weft_target_hip_count; i++)
        if (!strcmp(weft_target_hip_list[i]->name, name)) return weft_target_hip_list[i];
    if (name && !strncmp(name, "hip:", 4)) { /* names the architectures hiprtc knows */
        weft_hip_check_arch(name + 4);
        return NULL;
    }
#endif
    weft_fail(WEFT_ERR_UNAVAILABLE, "target '%s' is not available in this build", name ? name : "(null)");
    return NULL;
}

weft_status weft_target_check(const weft_target_ops *ops)
{
    if (!ops) return weft_fail(WEFT_ERR_INVALID_ARG, "target: ops is NULL");
    const char *name = ops->name ? ops->name : "(unnamed)";
    const char *missing = !ops->name ? "name" : !ops->create ? "create" : !ops->destroy ? "destroy" : !ops->caps ? "caps"
                        : !ops->compile ? "compile" : !ops->run ? "run" : !ops->kernel_destroy ? "kernel_destroy" : NULL;
    if (missing) return weft_fail(WEFT_ERR_INVALID_ARG, "target '%s': the required slot %s is NULL", name, missing);
    int n = !!ops->alloc + !!ops->free_buf + !!ops->upload + !!ops->download + !!ops->synchronize;
    if (n != 0 && n != 5) {
        missing = !ops->alloc ? "alloc" : !ops->free_buf ? "free_buf" : !ops->upload ? "upload" : !ops->download ? "download"
                                                                                                      : "synchronize";
        return weft_fail(WEFT_ERR_INVALID_ARG,
                         "target '%s': buffer operations are all or none, and %s is NULL while others are set", name, missing);
    }
    return WEFT_OK;
}

weft_status weft_target_register(const weft_target_ops *ops)
{
    weft_status rc = weft_target_check(ops);
    if (rc != WEFT_OK) return rc;
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (!strcmp(targets[i]->name, ops->name))
            return weft_fail(WEFT_ERR_INVALID_ARG, "weft_target_register: a target named '%s' exists", ops->name);
    for (int i = 0; i < n_extra; i++)
        if (!strcmp(extra[i]->name, ops->name)) {
            if (extra[i] == ops) return WEFT_OK;
            return weft_fail(WEFT_ERR_INVALID_ARG, "weft_target_register: a target named '%s' exists", ops->name);
        }
    if (n_extra == MAX_EXTRA) return weft_fail(WEFT_ERR_UNSUPPORTED, "weft_target_register: more than %d targets", MAX_EXTRA);
    extra[n_extra++] = ops;
    return WEFT_OK;
}
