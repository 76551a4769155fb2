/* The CUDA driver API as weft uses it (targets/cuda/driver.c): loaded with dlopen, never
 * linked, once per process, with the `_v2` names of the calls that have versions (the
 * unversioned cuMemAlloc etc. are the old 32-bit ABI).
 *
 * Which library: $WEFT_CUDA_DRIVER when set (a path, e.g. the test suite's fake driver
 * build/.../tests/cuda/libfakecuda.so), libcuda.so.1 otherwise. A library that cannot be
 * loaded, or lacks a call weft needs, is "no CUDA driver"; one whose cuInit fails or that
 * reports no device is "no CUDA device". A failed load is retried on the next call (nothing
 * is cached until it succeeds).
 *
 * Context: the primary context of device 0, retained once and kept for the life of the
 * process (one per process, shared by every target instance); weft_cu_enter() makes it
 * current on the calling thread before driver calls. A process forked after the driver was
 * initialised must not use it (CUDA does not survive fork): weft_cu_enter() refuses there.
 *
 * The types below are the driver's ABI (cuda.h), declared here so weft needs no cuda.h and
 * the fake driver implements the same prototypes. */
#ifndef WEFT_TARGETS_CUDA_DRIVER_H
#define WEFT_TARGETS_CUDA_DRIVER_H
#include <stddef.h>

#include "weft/weft.h"

typedef int CUresult; /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
    WEFT_CU_SUCCESS = 0,
    WEFT_CU_ERROR_OUT_OF_MEMORY = 2,
    WEFT_CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
    WEFT_CU_ATTR_MULTIPROCESSOR_COUNT = 16,
    WEFT_CU_ATTR_L2_CACHE_SIZE = 38,
    WEFT_CU_ATTR_CC_MAJOR = 75,
    WEFT_CU_ATTR_CC_MINOR = 76,
};

/* Every driver call weft makes: X(return type, symbol, field, parameters). */
#define WEFT_CU_CALLS(X)                                                                                           \
    X(CUresult, cuInit, init, (unsigned flags))                                                                    \
    X(CUresult, cuDeviceGetCount, device_count, (int *count))                                                      \
    X(CUresult, cuDeviceGet, device_get, (CUdevice * dev, int ordinal))                                            \
    X(CUresult, cuDeviceGetAttribute, device_attr, (int *value, int attrib, CUdevice dev))                         \
    X(CUresult, cuDevicePrimaryCtxRetain, ctx_retain, (CUcontext * ctx, CUdevice dev))                             \
    X(CUresult, cuCtxSetCurrent, ctx_set_current, (CUcontext ctx))                                                 \
    X(CUresult, cuCtxSynchronize, ctx_sync, (void))                                                                \
    X(CUresult, cuStreamSynchronize, stream_sync, (CUstream stream))                                               \
    X(CUresult, cuMemAlloc_v2, mem_alloc, (CUdeviceptr * dptr, size_t bytes))                                      \
    X(CUresult, cuMemFree_v2, mem_free, (CUdeviceptr dptr))                                                        \
    X(CUresult, cuMemcpyHtoDAsync_v2, copy_htod, (CUdeviceptr dst, const void *src, size_t bytes, CUstream s))     \
    X(CUresult, cuMemcpyDtoHAsync_v2, copy_dtoh, (void *dst, CUdeviceptr src, size_t bytes, CUstream s))           \
    X(CUresult, cuModuleLoadData, module_load, (CUmodule * mod, const void *image))                                \
    X(CUresult, cuModuleUnload, module_unload, (CUmodule mod))                                                     \
    X(CUresult, cuModuleGetFunction, module_function, (CUfunction * fn, CUmodule mod, const char *name))           \
    X(CUresult, cuLaunchKernel, launch,                                                                            \
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,                 \
       unsigned shared_bytes, CUstream stream, void **params, void **extra))                                       \
    X(CUresult, cuEventCreate, event_create, (CUevent * ev, unsigned flags))                                      \
    X(CUresult, cuEventDestroy_v2, event_destroy, (CUevent ev))                                                    \
    X(CUresult, cuEventRecord, event_record, (CUevent ev, CUstream s))                                             \
    X(CUresult, cuEventSynchronize, event_sync, (CUevent ev))                                                      \
    X(CUresult, cuEventElapsedTime, event_elapsed, (float *ms, CUevent start, CUevent end))                       \
    X(CUresult, cuDriverGetVersion, driver_version, (int *version))                                                \
    X(CUresult, cuDeviceGetName, device_name, (char *name, int len, CUdevice dev))                                 \
    X(CUresult, cuGetErrorName, error_name, (CUresult r, const char **name))                                       \
    X(CUresult, cuGetErrorString, error_string, (CUresult r, const char **text))

typedef struct weft_cu_api {
#define FIELD(ret, sym, field, params) ret(*field) params;
    WEFT_CU_CALLS(FIELD)
#undef FIELD
} weft_cu_api;

/* The loaded and initialised driver (cuInit done, at least one device), or NULL with one line
 * saying why ("no CUDA driver (...)" / "no CUDA device (...)") in why[0..n-1]. */
const weft_cu_api *weft_cu_load(char *why, size_t n);

/* weft_cu_load, then the primary context of device 0 made current on this thread. On failure
 * WEFT_ERR_UNAVAILABLE with the reason. */
weft_status weft_cu_enter(const weft_cu_api **api);

/* WEFT_OK when r is CUDA_SUCCESS; else a failure naming the call and the driver's name and
 * text for r: "cuda: cuMemAlloc_v2 (4096 bytes): CUDA_ERROR_OUT_OF_MEMORY: out of memory".
 * Out of memory is WEFT_ERR_NOMEM, everything else WEFT_ERR_DEVICE. `what` may be NULL. */
weft_status weft_cu_check(const weft_cu_api *api, CUresult r, const char *call, const char *what);

#endif
