/* The CUDA target (targets/cuda/cuda.c): loop IR -> CUDA C (targets/gpu/emit_c.h) -> NVRTC ->
 * a cubin for one compute capability (PTX kept for printing).
 *
 * Targets: "cuda" (the device's architecture when a driver and device are present, sm_90
 * otherwise) and "cuda:sm_XX" for every architecture NVRTC supports (sm_75 and up): these
 * compile without a device. dump(WEFT_DUMP_IR) gives the CUDA C source, dump(WEFT_DUMP_ASM)
 * NVRTC's PTX. The driver API is loaded lazily with dlopen("libcuda.so.1") and versioned
 * symbols, never linked (targets/cuda/driver.h; $WEFT_CUDA_DRIVER names another library, such
 * as the test suite's fake driver): run() and the buffer operations on a machine without it
 * fail with "no CUDA driver". Every CUDA target is a device target (targets/target.h: all
 * buffer operations set); memory is cuMemAlloc'd in the primary context of device 0. */
#ifndef WEFT_TARGETS_CUDA_H
#define WEFT_TARGETS_CUDA_H
#include <stdbool.h>
#include <stddef.h>

#include "ir/launch.h"
#include "targets/target.h"

/* The registered CUDA targets: "cuda" then "cuda:sm_XX" for each listed architecture. */
extern const weft_target_ops *const weft_target_cuda_list[];
extern const int weft_target_cuda_count;

/* Whether the CUDA driver can be loaded; when not, why (one line) in why[0..n-1]. */
bool weft_cuda_driver_available(char *why, size_t n);

/* CUDA source -> PTX and cubin for arch ("sm_90"). *ptx and *cubin are malloc'd (caller
 * frees; either pointer may be NULL when not wanted). NVRTC's log is in the error message. */
weft_status weft_cuda_nvrtc(const char *src, const char *arch, char **ptx, void **cubin, size_t *cubin_size);

/* The launches of k (compiled by a CUDA target): returns their number; for i below it, the
 * kernel name (owned by k) and the launch's grid, block and shared bytes. Either out may be
 * NULL. */
int weft_cuda_kernel_launch(const weft_kernel *k, int i, const char **name, weft_gpu_launch *out);

#endif
