/* Measuring tuning candidates on a CUDA device (tuner/measure_gpu.c).
 *
 * The tuning process never initialises the CUDA driver: CUDA state does not survive fork(),
 * and a faulting kernel poisons the context it ran in. Everything that touches the driver runs
 * in a worker process forked for it: the probe that asks device 0 who it is (once per run), and
 * one worker per candidate that owns its context for its whole life. The parent lowers the
 * candidate and compiles it with NVRTC (not the driver) for the device's architecture, and
 * computes each task's CPU reference once (the default CPU schedule on llvm, on fixed random
 * inputs); the worker inherits both through fork(), fills random inputs, uploads them, times the
 * kernel with device events, and, when the candidate may become the task's best, runs it once
 * on the reference's inputs and compares every parameter.
 */
#ifndef WEFT_TUNER_MEASURE_GPU_H
#define WEFT_TUNER_MEASURE_GPU_H
#include <stdbool.h>

#include "weft/weft.h"

/* The device a GPU tuning run measures on, as the probe found it. */
typedef struct weft_gpu_device {
    char target[32];      /* the target candidates compile for: "cuda:sm_90" */
    char name[128];       /* "NVIDIA H100 80GB HBM3" */
    int cc_major, cc_minor;
    int driver_version;   /* 13000: CUDA 13.0 */
    long l2_bytes;
    int sms;
} weft_gpu_device;

/* Whether `spec` names a GPU tuning target ("cuda" or "cuda:sm_XX"); "llvm" and NULL are the
 * CPU. Anything else is refused by weft_gpu_probe. */
bool weft_gpu_spec_is_gpu(const char *spec);

/* Asks device 0 who it is, in a forked process that exits afterwards (this process does not
 * touch the driver); timeout_s bounds it. spec: "cuda" (compile for the device's compute
 * capability) or "cuda:sm_XX" (compile for that: refused when the device cannot run it).
 * Errors: WEFT_ERR_UNAVAILABLE "no CUDA driver (...)" / "no CUDA device (...)" / "this build has
 * no CUDA target"; WEFT_ERR_INVALID_ARG for a spec that is not a CUDA target. */
weft_status weft_gpu_probe(const char *spec, double timeout_s, weft_gpu_device *out);

/* The tuner's GPU measurer (the local measurer's counterpart, tuner.h "tune_measure.c"):
 * per candidate a forked worker with a timeout; the error texts are the candidate's. */
struct weft_task;
struct weft_tune_cand;
typedef struct weft_gpu_measurer weft_gpu_measurer;
weft_status weft_gpu_measurer_create(struct weft_task *tasks, int n, const weft_gpu_device *dev, int threads,
                                     double timeout_s, weft_gpu_measurer **out);
void weft_gpu_measurer_run(weft_gpu_measurer *m, struct weft_tune_cand *c);
void weft_gpu_measurer_destroy(weft_gpu_measurer *m);

/* Tolerance of the check against the CPU reference: max |gpu - cpu| / max(1, max |cpu|) per
 * parameter. fp32 with another summation order (K up to a few thousand, inputs in [-1, 1))
 * stays near 1e-6. */
#define WEFT_GPU_CHECK_TOL 1e-4

#endif
