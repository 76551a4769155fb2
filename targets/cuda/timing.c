/* Device identity and event timing for measurement workers (contract in targets/cuda/cuda.h).
 *
 * Both initialise the driver in the calling process (weft_cu_enter): a tuner calls them only
 * in a worker process it forked before any driver call of its own (tuner/measure_gpu.c), never
 * in the tuning process, because CUDA state does not survive fork().
 *
 * Timing: two events on the default stream around each run's launches; cuEventSynchronize on
 * the end event, then cuEventElapsedTime (the device's clock, resolution about 0.5 us). Runs
 * take the argument sets in turn, so a kernel whose working set fits in L2 does not find its
 * inputs there from the run before (the caller sizes the sets).
 */
#include <stdio.h>
#include <string.h>

#include "ir/error.h"
#include "targets/cuda/cuda.h"
#include "targets/cuda/driver.h"

weft_status weft_cuda_device_query(weft_cuda_device *out)
{
    memset(out, 0, sizeof *out);
    const weft_cu_api *cu = NULL;
    weft_status st = weft_cu_enter(&cu);
    if (st != WEFT_OK) return st;
    CUdevice dev = 0;
    int l2 = 0;
    st = weft_cu_check(cu, cu->device_get(&dev, 0), "cuDeviceGet", "device 0");
    if (st == WEFT_OK) st = weft_cu_check(cu, cu->device_name(out->name, (int)sizeof out->name, dev), "cuDeviceGetName", NULL);
    if (st == WEFT_OK)
        st = weft_cu_check(cu, cu->device_attr(&out->cc_major, WEFT_CU_ATTR_CC_MAJOR, dev), "cuDeviceGetAttribute", "major");
    if (st == WEFT_OK)
        st = weft_cu_check(cu, cu->device_attr(&out->cc_minor, WEFT_CU_ATTR_CC_MINOR, dev), "cuDeviceGetAttribute", "minor");
    if (st == WEFT_OK) st = weft_cu_check(cu, cu->device_attr(&l2, WEFT_CU_ATTR_L2_CACHE_SIZE, dev), "cuDeviceGetAttribute", "L2");
    if (st == WEFT_OK)
        st = weft_cu_check(cu, cu->device_attr(&out->sms, WEFT_CU_ATTR_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute",
                           "multiprocessors");
    if (st == WEFT_OK) st = weft_cu_check(cu, cu->driver_version(&out->driver_version), "cuDriverGetVersion", NULL);
    out->name[sizeof out->name - 1] = '\0';
    out->l2_bytes = l2 > 0 ? (long)l2 : 0;
    if (st == WEFT_OK && (out->cc_major <= 0 || out->cc_major >= 100 || out->cc_minor < 0 || out->cc_minor >= 10))
        st = weft_fail(WEFT_ERR_DEVICE, "cuda: device 0 reports compute capability %d.%d", out->cc_major, out->cc_minor);
    return st;
}

weft_status weft_cuda_time_kernel(const weft_target_ops *ops, weft_kernel *k, void *const *const *sets, int n_sets,
                                  const weft_cuda_timing *o, double *times, int *n_times)
{
    *n_times = 0;
    if (!ops || !ops->run || !k || !sets || n_sets < 1 || !o || o->max_repeat < 1 || !times)
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_cuda_time_kernel: bad arguments");
    const weft_cu_api *cu = NULL;
    weft_status st = weft_cu_enter(&cu);
    if (st != WEFT_OK) return st;
    CUevent ev[2] = {NULL, NULL};
    for (int i = 0; st == WEFT_OK && i < 2; i++) st = weft_cu_check(cu, cu->event_create(&ev[i], 0), "cuEventCreate", NULL);
    /* warm-up: loads the module, and fails early on a launch error */
    for (int i = 0; st == WEFT_OK && i < (n_sets < 2 ? 1 : 2); i++) st = ops->run(k, sets[i % n_sets], NULL);
    if (st == WEFT_OK) st = weft_cu_check(cu, cu->ctx_sync(), "cuCtxSynchronize", "warm-up");
    int n = 0;
    double total = 0;
    int min_rep = o->min_repeat < 1 ? 1 : o->min_repeat;
    while (st == WEFT_OK && n < o->max_repeat && (n < min_rep || total < o->min_time_s)) {
        float ms = 0;
        st = weft_cu_check(cu, cu->event_record(ev[0], NULL), "cuEventRecord", NULL);
        if (st == WEFT_OK) st = ops->run(k, sets[n % n_sets], NULL);
        if (st == WEFT_OK) st = weft_cu_check(cu, cu->event_record(ev[1], NULL), "cuEventRecord", NULL);
        if (st == WEFT_OK) st = weft_cu_check(cu, cu->event_sync(ev[1]), "cuEventSynchronize", NULL);
        if (st == WEFT_OK) st = weft_cu_check(cu, cu->event_elapsed(&ms, ev[0], ev[1]), "cuEventElapsedTime", NULL);
        if (st != WEFT_OK) break;
        times[n++] = 1e-3 * (double)(ms > 0 ? ms : 0);
        total += 1e-3 * (double)ms;
    }
    for (int i = 0; i < 2; i++)
        if (ev[i]) cu->event_destroy(ev[i]);
    *n_times = n;
    return st;
}
