/* One interface for every backend (DESIGN #4): a target compiles a loop-IR function into a
 * callable kernel and reports what it supports, so lowering and the tuner can read its
 * capabilities. Targets are found by name from a static list (weft_target_find).
 *
 * Kernel arguments: `args[i]` is the base pointer of the loop function's param i (inputs then
 * outputs), each 64-byte aligned and sized buffer->size elements. `pool` may be NULL (serial).
 */
#ifndef WEFT_TARGETS_TARGET_H
#define WEFT_TARGETS_TARGET_H
#include <stdbool.h>

#include "ir/caps.h"
#include "ir/stmt.h"
#include "runtime/runtime.h"
#include "weft/weft.h"

/* weft_target_caps lives in ir/caps.h so lowering and schedules can read it. */

typedef struct weft_target weft_target; /* a backend instance (JIT session, device context) */
typedef struct weft_kernel weft_kernel; /* one compiled kernel */

typedef enum weft_dump_kind { WEFT_DUMP_IR, WEFT_DUMP_ASM } weft_dump_kind;

typedef struct weft_target_ops {
    const char *name;
    /* Required. */
    weft_status (*create)(weft_target **out);
    void (*destroy)(weft_target *t); /* accepts NULL; kernels must be destroyed first */
    void (*caps)(const weft_target *t, weft_target_caps *out);
    weft_status (*compile)(weft_target *t, const weft_loop_func *f, weft_kernel **out);
    weft_status (*run)(weft_kernel *k, void *const *args, weft_threadpool *pool);
    void (*kernel_destroy)(weft_kernel *k); /* accepts NULL */
    /* (optional; NULL means the target cannot print this) Target code for f as text, after
     * optimization: LLVM IR or assembly. *out is malloc'd; caller frees. */
    weft_status (*dump)(weft_target *t, const weft_loop_func *f, weft_dump_kind kind, char **out);
} weft_target_ops;

/* The target named `name`, or NULL (with weft_last_error set) when unknown or not built. */
const weft_target_ops *weft_target_find(const char *name);
/* Backends (declared in their folders, registered in targets/registry.c). */
extern const weft_target_ops weft_target_interp_ops;
#ifdef WEFT_WITH_LLVM
extern const weft_target_ops weft_target_llvm_ops;
#endif

#endif
