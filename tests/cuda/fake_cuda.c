/* A fake CUDA driver for tests (contract in tests/cuda/fake_cuda.h). It implements the driver
 * API weft loads with the prototypes of targets/cuda/driver.h, in host memory, and records
 * what it was asked to do. One mutex guards all state. */
#include "targets/cuda/driver.h"
#include "tests/cuda/fake_cuda.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

/* The driver calls with weft's prototypes (a mismatch is a compile error here). */
#define PROTO(ret, sym, field, params) API ret sym params;
WEFT_CU_CALLS(PROTO)
#undef PROTO
API void fakecuda_stats_get(fakecuda_stats *out);
API int fakecuda_launch_get(int i, fakecuda_launch *out);
API void fakecuda_reset(void);
API void fakecuda_fail(const char *call, int nth, int code);
API void *fakecuda_host(unsigned long long dev, size_t bytes);

enum {
    E_INVALID_VALUE = 1,
    E_OOM = 2,
    E_NOT_INITIALIZED = 3,
    E_NO_DEVICE = 100,
    E_INVALID_DEVICE = 101,
    E_INVALID_IMAGE = 200,
    E_INVALID_CONTEXT = 201,
    E_INVALID_HANDLE = 400,
    E_NOT_FOUND = 500,
    E_LAUNCH_FAILED = 719,
    E_UNKNOWN = 999,
};

static const struct {
    int code;
    const char *name, *text;
} errors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {E_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {E_OOM, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {E_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {E_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {E_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {E_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {E_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {E_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {E_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {E_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {E_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

typedef struct alloc {
    unsigned char *real;
    size_t bytes;
} alloc;

typedef struct module {
    unsigned char *image;
    size_t size;
    bool live;
} module;

struct CUfunc_st {
    int module;
    char name[128];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static bool inited;
static int n_devices = 1, cc_major = 9, cc_minor = 0;
static alloc *allocs;
static int n_allocs, cap_allocs;
static module mods[256];
static int n_mods;
static struct CUfunc_st funcs[1024];
static int n_funcs;
static fakecuda_launch *launches;
static int n_launches, cap_launches;
static fakecuda_stats st;
static char fail_call[64];
static int fail_nth, fail_seen, fail_code;
static FILE *log_file;
static char hang_call[64], count_file[512];
static int hang_nth, hang_seen;
static bool hang_crash; /* FAKECUDA_CRASH: the call raises SIGSEGV instead of hanging */
static char dev_name[128] = "Fake CUDA Device";
static int driver_version = 13000, l2_bytes = 50 << 20, n_sms = 132;
static int events_live;
static char primary; /* the primary context is the address of this byte */
static __thread CUcontext current;

static void logline(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logline(const char *fmt, ...)
{
    if (!log_file) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(log_file, fmt, ap);
    va_end(ap);
    fputc('\n', log_file);
    fflush(log_file);
}

/* The next count of a call set to fail or hang: *seen + 1 in this process, or, with
 * FAKECUDA_COUNT_FILE, the next number in that file (shared by every process that loads the
 * fake, under flock: the count runs across a tuner's measuring workers). */
static int next_count(int *seen)
{
    if (!count_file[0]) return ++*seen;
    int fd = open(count_file, O_RDWR | O_CREAT, 0600);
    if (fd < 0) return ++*seen;
    int n = 0;
    if (flock(fd, LOCK_EX) == 0) {
        char buf[32] = {0};
        ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
        n = got > 0 ? atoi(buf) : 0;
        n++;
        int len = snprintf(buf, sizeof buf, "%d\n", n);
        if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)len, 0) != len) n = ++*seen;
        flock(fd, LOCK_UN);
    } else
        n = ++*seen;
    close(fd);
    return n;
}

/* Whether this call of `call` is the one set to hang: then it never returns (the process
 * sleeps until it is killed). */
static void hanging(const char *call)
{
    if (!hang_call[0] || strcmp(call, hang_call)) return;
    if (next_count(&hang_seen) != hang_nth) return;
    logline("%s %s", hang_crash ? "crash" : "hang", call);
    if (hang_crash) raise(SIGSEGV);
    for (;;) pause();
}

/* Whether this call of `call` is the one set to fail (then its code in *code). */
static bool failing(const char *call, CUresult *code)
{
    hanging(call);
    if (!fail_call[0] || strcmp(call, fail_call)) return false;
    if (next_count(&fail_seen) != fail_nth) return false;
    *code = fail_code ? fail_code
            : !strcmp(call, "cuMemAlloc_v2")                                              ? E_OOM
            : !strcmp(call, "cuLaunchKernel") || !strcmp(call, "cuCtxSynchronize")        ? E_LAUNCH_FAILED
                                                                                          : E_UNKNOWN;
    logline("fail %s -> %d", call, (int)*code);
    return true;
}

static void set_fail(const char *spec, int code)
{
    fail_call[0] = '\0';
    fail_seen = 0;
    fail_nth = 1;
    fail_code = code;
    if (!spec || !*spec) return;
    snprintf(fail_call, sizeof fail_call, "%s", spec);
    char *colon = strchr(fail_call, ':');
    if (colon) {
        *colon = '\0';
        fail_nth = atoi(colon + 1);
    }
}

/* Common entry: initialised, a current context (when ctx), not set to fail. */
#define ENTER(name, needs_ctx)                                                                                     \
    CUresult rc_ = 0;                                                                                              \
    pthread_mutex_lock(&mu);                                                                                       \
    if (!inited) rc_ = E_NOT_INITIALIZED;                                                                          \
    else if ((needs_ctx) && current != (CUcontext)&primary) rc_ = E_INVALID_CONTEXT;                               \
    else if (failing(name, &rc_)) {                                                                                \
    }                                                                                                              \
    if (rc_) {                                                                                                     \
        if (rc_ == E_INVALID_CONTEXT || rc_ == E_NOT_INITIALIZED) st.bad++;                                        \
        pthread_mutex_unlock(&mu);                                                                                 \
        return rc_;                                                                                                \
    }

#define LEAVE(rc)                                                                                                  \
    do {                                                                                                           \
        pthread_mutex_unlock(&mu);                                                                                 \
        return (rc);                                                                                               \
    } while (0)

/* The allocation holding [dev, dev + bytes), or -1. */
static int find(CUdeviceptr dev, size_t bytes)
{
    if (dev < FAKECUDA_POISON) return -1;
    uintptr_t r = (uintptr_t)(dev - FAKECUDA_POISON);
    for (int i = 0; i < n_allocs; i++) {
        uintptr_t b = (uintptr_t)allocs[i].real;
        if (b && r >= b && r + bytes <= b + allocs[i].bytes) return i;
    }
    return -1;
}

static void at_exit_report(void)
{
    if (log_file && events_live) logline("events live=%d", events_live);
    if (log_file) logline("exit live=%d modules=%d bad=%d", st.live, st.modules_live, st.bad);
}

API CUresult cuInit(unsigned flags)
{
    pthread_mutex_lock(&mu);
    CUresult rc = 0;
    if (flags) rc = E_INVALID_VALUE;
    else if (!inited) {
        const char *d = getenv("FAKECUDA_DEVICES"), *cc = getenv("FAKECUDA_CC"), *lp = getenv("FAKECUDA_LOG");
        if (d) n_devices = atoi(d);
        if (cc && sscanf(cc, "%d.%d", &cc_major, &cc_minor) != 2) cc_major = 9, cc_minor = 0;
        set_fail(getenv("FAKECUDA_FAIL"), 0);
        const char *h = getenv("FAKECUDA_HANG"), *crash = getenv("FAKECUDA_CRASH"), *cf = getenv("FAKECUDA_COUNT_FILE"), *nm = getenv("FAKECUDA_NAME");
        const char *dv = getenv("FAKECUDA_DRIVER"), *l2 = getenv("FAKECUDA_L2");
        if (crash && *crash) {
            h = crash;
            hang_crash = true;
        }
        if (h && *h) {
            snprintf(hang_call, sizeof hang_call, "%s", h);
            char *colon = strchr(hang_call, ':');
            hang_nth = colon ? atoi(colon + 1) : 1;
            if (colon) *colon = '\0';
        }
        if (cf) snprintf(count_file, sizeof count_file, "%s", cf);
        if (nm && *nm) snprintf(dev_name, sizeof dev_name, "%s", nm);
        if (dv && *dv) driver_version = atoi(dv);
        if (l2 && *l2) l2_bytes = atoi(l2);
        if (lp && *lp && (log_file = fopen(lp, "a"))) atexit(at_exit_report);
        inited = true;
        logline("init devices=%d cc=%d.%d pid=%d", n_devices, cc_major, cc_minor, (int)getpid());
    }
    LEAVE(rc);
}

API CUresult cuDeviceGetCount(int *count)
{
    ENTER("cuDeviceGetCount", false);
    *count = n_devices;
    LEAVE(n_devices > 0 ? 0 : E_NO_DEVICE);
}

API CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    ENTER("cuDeviceGet", false);
    if (ordinal < 0 || ordinal >= n_devices) LEAVE(E_INVALID_DEVICE);
    *dev = ordinal;
    LEAVE(0);
}

API CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice dev)
{
    ENTER("cuDeviceGetAttribute", false);
    if (dev < 0 || dev >= n_devices) LEAVE(E_INVALID_DEVICE);
    switch (attrib) {
    case WEFT_CU_ATTR_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case WEFT_CU_ATTR_CC_MAJOR: *value = cc_major; break;
    case WEFT_CU_ATTR_CC_MINOR: *value = cc_minor; break;
    case WEFT_CU_ATTR_L2_CACHE_SIZE: *value = l2_bytes; break;
    case WEFT_CU_ATTR_MULTIPROCESSOR_COUNT: *value = n_sms; break;
    default: LEAVE(E_INVALID_VALUE);
    }
    LEAVE(0);
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    ENTER("cuDevicePrimaryCtxRetain", false);
    if (dev < 0 || dev >= n_devices) LEAVE(E_INVALID_DEVICE);
    *ctx = (CUcontext)&primary;
    logline("context device=%d", (int)dev);
    LEAVE(0);
}

API CUresult cuCtxSetCurrent(CUcontext ctx)
{
    ENTER("cuCtxSetCurrent", false);
    if (ctx && ctx != (CUcontext)&primary) LEAVE(E_INVALID_CONTEXT);
    current = ctx;
    LEAVE(0);
}

API CUresult cuCtxSynchronize(void)
{
    ENTER("cuCtxSynchronize", true);
    st.syncs++;
    logline("sync");
    LEAVE(0);
}

API CUresult cuStreamSynchronize(CUstream s)
{
    (void)s;
    ENTER("cuStreamSynchronize", true);
    st.syncs++;
    logline("sync stream");
    LEAVE(0);
}

API CUresult cuMemAlloc_v2(CUdeviceptr *out, size_t bytes)
{
    ENTER("cuMemAlloc_v2", true);
    if (!bytes) LEAVE(E_INVALID_VALUE);
    if (n_allocs == cap_allocs) {
        int cap = cap_allocs ? 2 * cap_allocs : 64;
        alloc *a = realloc(allocs, sizeof *a * (size_t)cap);
        if (!a) LEAVE(E_OOM);
        allocs = a;
        cap_allocs = cap;
    }
    size_t n = (bytes + 255) & ~(size_t)255;
    unsigned char *p = aligned_alloc(256, n);
    if (!p) LEAVE(E_OOM);
    memset(p, 0xCD, n);
    allocs[n_allocs++] = (alloc){p, bytes};
    st.allocs++;
    st.live++;
    st.live_bytes += bytes;
    *out = (CUdeviceptr)(uintptr_t)p + FAKECUDA_POISON;
    logline("alloc %zu", bytes);
    LEAVE(0);
}

API CUresult cuMemFree_v2(CUdeviceptr dev)
{
    ENTER("cuMemFree_v2", true);
    for (int i = 0; i < n_allocs; i++)
        if (allocs[i].real && (CUdeviceptr)(uintptr_t)allocs[i].real + FAKECUDA_POISON == dev) {
            free(allocs[i].real);
            st.live_bytes -= allocs[i].bytes;
            logline("free %zu", allocs[i].bytes);
            allocs[i] = allocs[--n_allocs];
            st.frees++;
            st.live--;
            LEAVE(0);
        }
    st.bad++;
    LEAVE(E_INVALID_VALUE);
}

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream s)
{
    (void)s;
    ENTER("cuMemcpyHtoDAsync_v2", true);
    int a = find(dst, bytes);
    if (a < 0 || (uintptr_t)src >= FAKECUDA_POISON) {
        st.bad++;
        LEAVE(E_INVALID_VALUE);
    }
    memcpy((void *)(uintptr_t)(dst - FAKECUDA_POISON), src, bytes);
    st.htod++;
    st.last_htod_dst = dst;
    st.htod_bytes += bytes;
    logline("htod %zu", bytes);
    LEAVE(0);
}

API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream s)
{
    (void)s;
    ENTER("cuMemcpyDtoHAsync_v2", true);
    int a = find(src, bytes);
    if (a < 0 || (uintptr_t)dst >= FAKECUDA_POISON) {
        st.bad++;
        LEAVE(E_INVALID_VALUE);
    }
    memcpy(dst, (void *)(uintptr_t)(src - FAKECUDA_POISON), bytes);
    st.dtoh++;
    st.last_dtoh_src = src;
    st.dtoh_bytes += bytes;
    logline("dtoh %zu", bytes);
    LEAVE(0);
}

/* Size of a 64-bit little-endian ELF image from its header (0 when it is not one). */
static size_t elf_size(const unsigned char *p)
{
    if (memcmp(p, "\x7f" "ELF", 4) || p[4] != 2 || p[5] != 1) return 0;
    uint64_t shoff, phoff;
    uint16_t shentsize, shnum, phentsize, phnum;
    memcpy(&phoff, p + 0x20, 8);
    memcpy(&shoff, p + 0x28, 8);
    memcpy(&phentsize, p + 0x36, 2);
    memcpy(&phnum, p + 0x38, 2);
    memcpy(&shentsize, p + 0x3A, 2);
    memcpy(&shnum, p + 0x3C, 2);
    uint64_t a = shoff + (uint64_t)shentsize * shnum, b = phoff + (uint64_t)phentsize * phnum;
    uint64_t n = a > b ? a : b;
    return n > 64 && n < ((uint64_t)1 << 30) ? (size_t)n : 0;
}

API CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
    ENTER("cuModuleLoadData", true);
    size_t n = image ? elf_size(image) : 0;
    if (!n) LEAVE(E_INVALID_IMAGE);
    if (n_mods == (int)(sizeof mods / sizeof mods[0])) LEAVE(E_OOM);
    unsigned char *copy = malloc(n);
    if (!copy) LEAVE(E_OOM);
    memcpy(copy, image, n);
    mods[n_mods] = (module){copy, n, true};
    *mod = (CUmodule)(uintptr_t)(n_mods + 1);
    n_mods++;
    st.modules_loaded++;
    st.modules_live++;
    logline("module %zu bytes", n);
    LEAVE(0);
}

static int module_index(CUmodule mod)
{
    int i = (int)(uintptr_t)mod - 1;
    return i >= 0 && i < n_mods && mods[i].live ? i : -1;
}

API CUresult cuModuleUnload(CUmodule mod)
{
    ENTER("cuModuleUnload", true);
    int i = module_index(mod);
    if (i < 0) {
        st.bad++;
        LEAVE(E_INVALID_HANDLE);
    }
    free(mods[i].image);
    mods[i] = (module){NULL, 0, false};
    st.modules_live--;
    logline("unload");
    LEAVE(0);
}

/* The name as a whole string in the image (the ELF string table holds the kernel symbols). */
static bool image_has(const module *m, const char *name)
{
    size_t len = strlen(name) + 1;
    for (size_t i = 1; i + len <= m->size; i++)
        if (m->image[i - 1] == '\0' && !memcmp(m->image + i, name, len)) return true;
    return false;
}

API CUresult cuModuleGetFunction(CUfunction *fn, CUmodule mod, const char *name)
{
    ENTER("cuModuleGetFunction", true);
    int i = module_index(mod);
    if (i < 0) {
        st.bad++;
        LEAVE(E_INVALID_HANDLE);
    }
    if (!image_has(&mods[i], name)) LEAVE(E_NOT_FOUND);
    if (n_funcs == (int)(sizeof funcs / sizeof funcs[0])) LEAVE(E_OOM);
    funcs[n_funcs].module = i;
    snprintf(funcs[n_funcs].name, sizeof funcs[n_funcs].name, "%s", name);
    *fn = &funcs[n_funcs++];
    LEAVE(0);
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned shared_bytes, CUstream stream, void **params, void **extra)
{
    (void)stream;
    ENTER("cuLaunchKernel", true);
    if (!f || f < funcs || f >= funcs + n_funcs || !mods[f->module].live) {
        st.bad++;
        LEAVE(E_INVALID_HANDLE);
    }
    if (extra || !params || !gx || !gy || !gz || !bx || !by || !bz || (uint64_t)bx * by * bz > 1024 || gy > 65535 ||
        gz > 65535)
        LEAVE(E_INVALID_VALUE);
    fakecuda_launch l = {.grid = {gx, gy, gz}, .block = {bx, by, bz}, .shared_bytes = shared_bytes};
    snprintf(l.name, sizeof l.name, "%s", f->name);
    for (int i = 0; params[i] && i < FAKECUDA_MAX_ARGS; i++) {
        memcpy(&l.args[i], params[i], sizeof l.args[i]);
        if (find(l.args[i], 1) < 0) st.bad++; /* every weft argument is a buffer */
        l.n_args = i + 1;
    }
    if (n_launches == cap_launches) {
        int cap = cap_launches ? 2 * cap_launches : 64;
        fakecuda_launch *p = realloc(launches, sizeof *p * (size_t)cap);
        if (!p) LEAVE(E_OOM);
        launches = p;
        cap_launches = cap;
    }
    launches[n_launches++] = l;
    st.launches++;
    logline("launch %s grid=%u,%u,%u block=%u,%u,%u args=%d", l.name, gx, gy, gz, bx, by, bz, l.n_args);
    LEAVE(0);
}

API CUresult cuDriverGetVersion(int *version)
{
    if (!version) return E_INVALID_VALUE;
    pthread_mutex_lock(&mu); /* callable before cuInit, as the real one is */
    *version = driver_version;
    LEAVE(0);
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    ENTER("cuDeviceGetName", false);
    if (dev < 0 || dev >= n_devices) LEAVE(E_INVALID_DEVICE);
    if (!name || len <= 0) LEAVE(E_INVALID_VALUE);
    snprintf(name, (size_t)len, "%s", dev_name);
    LEAVE(0);
}

/* Events hold the host time of their last record: kernels do not run, so an elapsed time is
 * the host time between two records. */
struct CUevent_st {
    double t;
    bool recorded;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

API CUresult cuEventCreate(CUevent *ev, unsigned flags)
{
    (void)flags;
    ENTER("cuEventCreate", true);
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e) LEAVE(E_OOM);
    *ev = e;
    events_live++;
    logline("event create");
    LEAVE(0);
}

API CUresult cuEventDestroy_v2(CUevent ev)
{
    ENTER("cuEventDestroy_v2", true);
    if (!ev) {
        st.bad++;
        LEAVE(E_INVALID_HANDLE);
    }
    free(ev);
    events_live--;
    logline("event destroy");
    LEAVE(0);
}

API CUresult cuEventRecord(CUevent ev, CUstream s)
{
    (void)s;
    ENTER("cuEventRecord", true);
    if (!ev) LEAVE(E_INVALID_HANDLE);
    ev->t = now_s();
    ev->recorded = true;
    LEAVE(0);
}

API CUresult cuEventSynchronize(CUevent ev)
{
    ENTER("cuEventSynchronize", true);
    if (!ev) LEAVE(E_INVALID_HANDLE);
    st.syncs++;
    LEAVE(0);
}

API CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
    ENTER("cuEventElapsedTime", true);
    if (!ms || !start || !end) LEAVE(E_INVALID_HANDLE);
    if (!start->recorded || !end->recorded) LEAVE(E_INVALID_HANDLE);
    *ms = (float)((end->t - start->t) * 1e3);
    LEAVE(0);
}

API CUresult cuGetErrorName(CUresult r, const char **name)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == r) {
            *name = errors[i].name;
            return 0;
        }
    *name = NULL;
    return E_INVALID_VALUE;
}

API CUresult cuGetErrorString(CUresult r, const char **text)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == r) {
            *text = errors[i].text;
            return 0;
        }
    *text = NULL;
    return E_INVALID_VALUE;
}

/* ---- control (tests/cuda/fake_cuda.h) ---- */

API void fakecuda_stats_get(fakecuda_stats *out)
{
    pthread_mutex_lock(&mu);
    *out = st;
    pthread_mutex_unlock(&mu);
}

API int fakecuda_launch_get(int i, fakecuda_launch *out)
{
    pthread_mutex_lock(&mu);
    int ok = i >= 0 && i < n_launches;
    if (ok) *out = launches[i];
    pthread_mutex_unlock(&mu);
    return ok;
}

API void fakecuda_reset(void)
{
    pthread_mutex_lock(&mu);
    int live = st.live, mlive = st.modules_live;
    size_t lb = st.live_bytes;
    st = (fakecuda_stats){.live = live, .live_bytes = lb, .modules_live = mlive};
    n_launches = 0;
    pthread_mutex_unlock(&mu);
}

API void fakecuda_fail(const char *call, int nth, int code)
{
    pthread_mutex_lock(&mu);
    set_fail(call, code);
    fail_nth = nth;
    pthread_mutex_unlock(&mu);
}

API void *fakecuda_host(unsigned long long dev, size_t bytes)
{
    pthread_mutex_lock(&mu);
    void *p = find(dev, bytes) >= 0 ? (void *)(uintptr_t)(dev - FAKECUDA_POISON) : NULL;
    pthread_mutex_unlock(&mu);
    return p;
}
