/* weft — a tensor compiler and autotuner.
 *
 * Public umbrella header. Every fallible function returns a weft_status; on failure a
 * thread-local message (weft_last_error) says what went wrong, where, and expected vs got.
 * Strings returned by the library are borrowed: valid until the next weft call on the same thread.
 *
 * Worked example (a 64x64x64 matmul, default schedule, JIT-compiled for the host CPU):
 *
 *   weft_arena *a = weft_arena_create();
 *   weft_te_func *f = weft_op_matmul(a, 64, 64, 64);          // ops/ops.h
 *   weft_schedule *s = NULL;
 *   weft_schedule_create(f, &s);                              // naive: every stage at root
 *   weft_schedule_default(s, &weft_target_llvm_caps);         // or apply step text
 *   weft_loop_func *lf = NULL;
 *   weft_lower(s, a, &lf);                                    // TE + steps -> loop IR
 *   const weft_target_ops *llvm = weft_target_find("llvm");
 *   weft_target *t; weft_kernel *k;
 *   llvm->create(&t); llvm->compile(t, lf, &k);
 *   void *args[] = {A, B, C};                                 // 64-byte aligned buffers
 *   llvm->run(k, args, pool);                                 // pool may be NULL: serial
 *   llvm->kernel_destroy(k); llvm->destroy(t);
 *   weft_schedule_destroy(s); weft_arena_destroy(a);
 */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1
#define WEFT_VERSION_PATCH 0
#define WEFT_VERSION_STRING "0.1.0"

#if defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

typedef enum weft_status {
    WEFT_OK = 0,
    WEFT_ERR_INVALID_ARG,
    WEFT_ERR_SHAPE,
    WEFT_ERR_UNSUPPORTED,
    WEFT_ERR_PARSE,
    WEFT_ERR_NOMEM,
    WEFT_ERR_UNAVAILABLE, /* no driver, device or library */
    WEFT_ERR_COMPILE,
    WEFT_ERR_DEVICE,
    WEFT_ERR_DB,
    WEFT_ERR_DB_BUSY,
    WEFT_ERR_IO,
    WEFT_ERR_TIMEOUT,
    WEFT_ERR_INTERNAL,
    WEFT_STATUS_COUNT
} weft_status;

/* Name of a status code ("WEFT_ERR_PARSE"); static storage. */
WEFT_API const char *weft_status_name(weft_status st);

/* The message of the last failure on this thread; borrowed, never NULL ("" when none). */
WEFT_API const char *weft_last_error(void);

/* Library version string, static storage. */
WEFT_API const char *weft_version(void);

#ifdef __cplusplus
}
#endif
#endif
