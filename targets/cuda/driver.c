/* The CUDA driver loader (contract in targets/cuda/driver.h). */
#include "targets/cuda/driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/error.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static weft_cu_api api;      /* valid once `loaded` */
static bool loaded;
static CUcontext primary;    /* retained once, by process `owner` */
static pid_t owner;

static const char *library(void)
{
    const char *env = getenv("WEFT_CUDA_DRIVER");
    return env && *env ? env : "libcuda.so.1";
}

/* Loads and initialises the driver into api; false with why otherwise. Caller holds lock. */
static bool load_locked(char *why, size_t n)
{
    if (loaded) return true;
    const char *lib = library();
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, n, "no CUDA driver (%s%s cannot be loaded: %s)", getenv("WEFT_CUDA_DRIVER") ? "WEFT_CUDA_DRIVER=" : "",
                 lib, e ? e : "not found");
        return false;
    }
    weft_cu_api a;
#define LOOKUP(ret, sym, field, params)                                                                            \
    if (!(a.field = (ret(*) params)(uintptr_t)dlsym(h, #sym))) {                                                   \
        snprintf(why, n, "no CUDA driver (%s has no %s: the driver is too old for weft)", lib, #sym);             \
        dlclose(h);                                                                                                \
        return false;                                                                                              \
    }
    WEFT_CU_CALLS(LOOKUP)
#undef LOOKUP
    int devs = 0;
    CUresult r = a.init(0);
    if (r == WEFT_CU_SUCCESS) r = a.device_count(&devs);
    if (r != WEFT_CU_SUCCESS || devs <= 0) {
        const char *name = NULL;
        if (r == WEFT_CU_SUCCESS || a.error_name(r, &name) != WEFT_CU_SUCCESS || !name) name = "none found";
        snprintf(why, n, "no CUDA device (the CUDA driver %s reports %s)", lib, r == WEFT_CU_SUCCESS ? "none" : name);
        dlclose(h);
        return false;
    }
    api = a; /* the handle stays open for the life of the process */
    loaded = true;
    owner = getpid();
    return true;
}

const weft_cu_api *weft_cu_load(char *why, size_t n)
{
    pthread_mutex_lock(&lock);
    bool ok = load_locked(why, n);
    pthread_mutex_unlock(&lock);
    return ok ? &api : NULL;
}

weft_status weft_cu_enter(const weft_cu_api **out)
{
    char why[512];
    *out = NULL;
    pthread_mutex_lock(&lock);
    weft_status st = WEFT_OK;
    if (!load_locked(why, sizeof why)) st = weft_fail(WEFT_ERR_UNAVAILABLE, "%s", why);
    else if (owner != getpid())
        st = weft_fail(WEFT_ERR_DEVICE, "cuda: the CUDA driver was initialised in process %d and cannot be used in its "
                                        "forked child %d",
                       (int)owner, (int)getpid());
    else if (!primary) {
        CUdevice dev = 0;
        st = weft_cu_check(&api, api.device_get(&dev, 0), "cuDeviceGet", "device 0");
        if (st == WEFT_OK) st = weft_cu_check(&api, api.ctx_retain(&primary, dev), "cuDevicePrimaryCtxRetain", "device 0");
        if (st != WEFT_OK) primary = NULL;
    }
    CUcontext ctx = primary;
    pthread_mutex_unlock(&lock);
    if (st == WEFT_OK) st = weft_cu_check(&api, api.ctx_set_current(ctx), "cuCtxSetCurrent", NULL);
    if (st == WEFT_OK) *out = &api;
    return st;
}

weft_status weft_cu_check(const weft_cu_api *a, CUresult r, const char *call, const char *what)
{
    if (r == WEFT_CU_SUCCESS) return WEFT_OK;
    const char *name = NULL, *text = NULL;
    if (a->error_name(r, &name) != WEFT_CU_SUCCESS || !name) name = "unknown error";
    if (a->error_string(r, &text) != WEFT_CU_SUCCESS || !text) text = "";
    return weft_fail(r == WEFT_CU_ERROR_OUT_OF_MEMORY ? WEFT_ERR_NOMEM : WEFT_ERR_DEVICE, "cuda: %s%s%s%s failed: %s (%d)%s%s",
                     call, what ? " (" : "", what ? what : "", what ? ")" : "", name, (int)r, *text ? ": " : "", text);
}
