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

/* Device 0 as a measurement worker needs it. Initialises the driver in the calling process
 * (targets/cuda/timing.c): a tuner calls it only in a process it forked for that. */
typedef struct weft_cuda_device {
    char name[128];       /* cuDeviceGetName: "NVIDIA H100 80GB HBM3" */
    int cc_major, cc_minor;
    int driver_version;   /* cuDriverGetVersion: 13000 is CUDA 13.0 */
    long l2_bytes;
    int sms;              /* multiprocessors */
} weft_cuda_device;
weft_status weft_cuda_device_query(weft_cuda_device *out);

/* How weft_cuda_time_kernel repeats: runs until min_repeat runs and min_time_s of measured
 * time, at most max_repeat (times[] holds max_repeat entries). */
typedef struct weft_cuda_timing {
    int min_repeat, max_repeat;
    double min_time_s;
} weft_cuda_timing;
/* Times k (compiled by one of the CUDA targets, ops) with device events: untimed warm-up runs,
 * then one event pair around each run's launches on the default stream; run i takes argument
 * set sets[i % n_sets] (device addresses). Seconds per run in times[0..*n_times-1]. A driver
 * error (a faulting kernel) is returned with the call named; the context is then unusable
 * (the caller is a worker that exits). */
weft_status weft_cuda_time_kernel(const weft_target_ops *ops, weft_kernel *k, void *const *const *sets, int n_sets,
                                  const weft_cuda_timing *o, double *times, int *n_times);

#endif
