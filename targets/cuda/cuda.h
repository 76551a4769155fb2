/* The CUDA target (targets/cuda/cuda.c): loop IR -> CUDA C (targets/gpu/emit_c.h) -> NVRTC ->
 * a cubin for one compute capability (PTX kept for printing).
 *
 * Targets: "cuda" (the device's architecture when a driver and device are present, sm_90
 * otherwise) and "cuda:sm_XX" for every architecture NVRTC supports (sm_75 and up): these
 * compile without a device. dump(WEFT_DUMP_IR) gives the CUDA C source, dump(WEFT_DUMP_ASM)
 * NVRTC's PTX. The driver API is loaded lazily with dlopen("libcuda.so.1") and versioned
 * symbols, never linked: run() on a machine without it fails with "no CUDA driver". Running
 * kernels needs device buffers from the target interface; until then run() reports that. */
#ifndef WEFT_TARGETS_CUDA_H
#define WEFT_TARGETS_CUDA_H
#include <stdbool.h>
#include <stddef.h>

#include "targets/target.h"

/* The registered CUDA targets: "cuda" then "cuda:sm_XX" for each listed architecture. */
extern const weft_target_ops *const weft_target_cuda_list[];
extern const int weft_target_cuda_count;

/* Whether the CUDA driver can be loaded; when not, why (one line) in why[0..n-1]. */
bool weft_cuda_driver_available(char *why, size_t n);

/* CUDA source -> PTX and cubin for arch ("sm_90"). *ptx and *cubin are malloc'd (caller
 * frees; either pointer may be NULL when not wanted). NVRTC's log is in the error message. */
weft_status weft_cuda_nvrtc(const char *src, const char *arch, char **ptx, void **cubin, size_t *cubin_size);

#endif
