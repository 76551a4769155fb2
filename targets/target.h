/* One interface for every backend (DESIGN #4): a target compiles a loop-IR function into a
 * callable kernel, reports what it supports (so lowering and the tuner can read its
 * capabilities), and, for a device target, owns the memory its kernels read and write.
 * Targets are found by name from a static list (weft_target_find).
 *
 * Two kinds of target share this table (ggml separates buffer types from backends; here the
 * buffer operations are a group of optional slots of the same table):
 *   - host targets (llvm, interp): kernels read and write host memory; the buffer slots are
 *     all NULL, and callers pass host pointers straight to run().
 *   - device targets (CUDA, HIP): kernels read and write device memory that only the buffer
 *     slots allocate, fill and read back; the buffer slots are all set.
 * weft_target_is_host(ops) tells them apart; a table with some buffer slots set and others
 * NULL is invalid (weft_target_check refuses it).
 *
 * Addresses. A device address is a `void *` that host code never dereferences. Device memory
 * is byte-addressed: `(char *)base + off` names the byte at offset off of an allocation (CUDA
 * and HIP device pointers are integers in one address space), so the model executor plans
 * one device arena and hands out offsets into it exactly as it does on the host.
 *
 * Kernel arguments: `args[i]` is the base address of the loop function's param i (inputs then
 * outputs), host memory for a host target and device memory for a device target, each 64-byte
 * aligned and sized buffer->size elements.
 *
 * Execution context (weft_exec): where run() executes. A host target reads `pool` (parallel
 * loops run on it; NULL runs them on the calling thread); a device target reads `queue` (its
 * stream; NULL: the target's default stream). A NULL weft_exec pointer means both NULL. The
 * context is borrowed for the call; run() keeps no reference to it.
 *
 * Ordering: on a device target run(), upload() and download() are enqueued on the context's
 * queue in call order and may return before they finish; synchronize() waits for all of
 * them. download() may return before the bytes have arrived: read the host buffer only after
 * synchronize(). On a host target everything has finished when the call returns.
 *
 * Processes: kernels and device state of a target instance belong to the process that
 * created it. A forked child may not call them on a device target (a CUDA context does not
 * survive fork()); tuner/measure.c therefore compiles what it measures in the worker, with a
 * target instance of its own, for every target with buffer operations.
 */
#ifndef WEFT_TARGETS_TARGET_H
#define WEFT_TARGETS_TARGET_H
#include <stdbool.h>
#include <stddef.h>

#include "ir/caps.h"
#include "ir/stmt.h"
#include "runtime/runtime.h"
#include "weft/weft.h"

/* weft_target_caps lives in ir/caps.h so lowering and schedules can read it. */

typedef struct weft_target weft_target; /* a backend instance (JIT session, device context) */
typedef struct weft_kernel weft_kernel; /* one compiled kernel */

typedef enum weft_dump_kind { WEFT_DUMP_IR, WEFT_DUMP_ASM } weft_dump_kind;

/* Where a kernel runs (see above). Plain data, owned by the caller. */
typedef struct weft_exec {
    weft_threadpool *pool; /* host targets: the thread pool; NULL: serial on the caller */
    void *queue;           /* device targets: the stream/queue (e.g. a CUstream); NULL: default */
} weft_exec;

typedef struct weft_target_ops {
    const char *name;

    /* ---- required ---- */
    /* A new instance in *out (NULL on failure). Owns its JIT session or device context. */
    weft_status (*create)(weft_target **out);
    /* Accepts NULL. Its kernels and buffers must be destroyed / freed first. */
    void (*destroy)(weft_target *t);
    void (*caps)(const weft_target *t, weft_target_caps *out);
    /* Compiles f into *out, owned by the caller (kernel_destroy). f is not kept. */
    weft_status (*compile)(weft_target *t, const weft_loop_func *f, weft_kernel **out);
    /* Runs k once on args (see "Kernel arguments") in context ex (NULL: default). Reentrant
     * for different args; errors have a message. */
    weft_status (*run)(weft_kernel *k, void *const *args, const weft_exec *ex);
    void (*kernel_destroy)(weft_kernel *k); /* accepts NULL */

    /* ---- optional: NULL means the target cannot print this ---- */
    /* Target code for f as text, after optimization: LLVM IR, assembly, CUDA source or PTX.
     * *out is malloc'd; caller frees. */
    weft_status (*dump)(weft_target *t, const weft_loop_func *f, weft_dump_kind kind, char **out);

    /* ---- optional, all or none: buffer operations of a device target ----
     * NULL on a host target, meaning kernels take host memory. */
    /* A device allocation of `bytes` (> 0) bytes, 64-byte aligned, contents undefined, in
     * *out; owned by the caller, released with free_buf. WEFT_ERR_NOMEM (with the size) when
     * the device is out of memory. */
    weft_status (*alloc)(weft_target *t, size_t bytes, void **out);
    /* Releases an allocation from alloc (not an offset into one); accepts NULL. Waits for
     * work that uses it. */
    void (*free_buf)(weft_target *t, void *dev);
    /* Copies `bytes` host bytes from src to device address dst, ordered on ex's queue. src
     * may be reused as soon as the call returns. */
    weft_status (*upload)(weft_target *t, void *dst, const void *src, size_t bytes, const weft_exec *ex);
    /* Copies `bytes` from device address src to host memory dst, ordered on ex's queue; dst
     * holds them after synchronize(). */
    weft_status (*download)(weft_target *t, void *dst, const void *src, size_t bytes, const weft_exec *ex);
    /* Waits until everything enqueued on ex's queue has finished; reports a failure of any of
     * it (a kernel fault) as an error. */
    weft_status (*synchronize)(weft_target *t, const weft_exec *ex);
} weft_target_ops;

/* True when ops is a host target (no buffer operations: kernels take host pointers). */
static inline bool weft_target_is_host(const weft_target_ops *ops)
{
    return !ops->alloc;
}

/* WEFT_OK when ops has every required slot and either all or none of the buffer slots;
 * else WEFT_ERR_INVALID_ARG naming the target and the missing slot. */
weft_status weft_target_check(const weft_target_ops *ops);

/* Adds ops to the list weft_target_find searches (a backend built outside this library, a
 * test's fake device). Checked with weft_target_check; a name already taken is an error
 * (registering the same table twice is not). Not thread-safe: call before any lookup. */
weft_status weft_target_register(const weft_target_ops *ops);
/* The target named `name`, or NULL (with weft_last_error set) when unknown or not built. */
const weft_target_ops *weft_target_find(const char *name);
/* Backends (declared in their folders, registered in targets/registry.c). */
extern const weft_target_ops weft_target_interp_ops;
#ifdef WEFT_WITH_LLVM
extern const weft_target_ops weft_target_llvm_ops;
#endif

#endif
