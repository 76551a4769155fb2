/* The HIP target (contract in targets/hip/hip.h).
 *
 * Loading. ROCm is never linked: the first use dlopens libamdhip64.so.5 once per process and
 * looks up every function below (hiprtc lives in the same library in ROCm 5.x). The header
 * files give the types only (-D__HIP_PLATFORM_AMD__). A missing library or symbol leaves the
 * API table unloaded with its one-line reason ("no HIP runtime ..."), reported by every call
 * that needs it; the library stays loaded until the process exits.
 *
 * Architectures. hiprtcCompileProgram of ROCm 5.2 aborts the process (a failed assertion in
 * its LLVM) for an architecture it does not know, so every compile goes through the
 * HIP_ARCHES list first; each entry was compiled for with ROCm 5.2.3 (Debian 12) in a child
 * process, and gfx940-942 and gfx1100-1103 abort there.
 *
 * compile() emits the HIP source and compiles it with hiprtc (--offload-arch=ARCH -O3
 * -fno-unroll-loops, see weft_hip_hiprtc) into a
 * code object kept by the kernel. When the target is bound to a device of the same
 * architecture, the code object is loaded there too (hipModuleLoadData) and each launch's
 * function looked up; otherwise the kernel is compile-only and run() says why it cannot run.
 * run() launches the kernels in order on the context's stream (root temporaries are device
 * allocations made for the run and freed after the stream drained).
 *
 * None of the device paths (module load, launch, buffers) has been run on an AMD GPU: there
 * was none to run them on. Compiling is checked in CI (tests/targets/test_hip.c). */
#include "targets/hip/hip.h"

#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "targets/gpu/emit_c.h"

/* name, wavefront: every architecture ROCm 5.2's hiprtc compiles for (see the top). */
#define HIP_ARCHES(X)                                                                                               \
    X(gfx803, 64) X(gfx900, 64) X(gfx902, 64) X(gfx904, 64) X(gfx906, 64) X(gfx908, 64) X(gfx909, 64) X(gfx90a, 64) \
    X(gfx90c, 64) X(gfx1010, 32) X(gfx1011, 32) X(gfx1012, 32) X(gfx1013, 32) X(gfx1030, 32) X(gfx1031, 32)        \
    X(gfx1032, 32) X(gfx1033, 32) X(gfx1034, 32) X(gfx1035, 32) X(gfx1036, 32)

static const struct {
    const char *name;
    int wave;
} arches[] = {
#define ARCH_ROW(n, w) {#n, w},
    HIP_ARCHES(ARCH_ROW)
#undef ARCH_ROW
};

/* ---- the API table ------------------------------------------------------------------------ */

/* X(symbol, return type, parameters) */
#define HIP_FUNCS(X)                                                                                                \
    X(hiprtcCreateProgram, hiprtcResult, (hiprtcProgram *, const char *, const char *, int, const char **, const char **)) \
    X(hiprtcCompileProgram, hiprtcResult, (hiprtcProgram, int, const char **))                                     \
    X(hiprtcDestroyProgram, hiprtcResult, (hiprtcProgram *))                                                        \
    X(hiprtcGetProgramLogSize, hiprtcResult, (hiprtcProgram, size_t *))                                             \
    X(hiprtcGetProgramLog, hiprtcResult, (hiprtcProgram, char *))                                                   \
    X(hiprtcGetCodeSize, hiprtcResult, (hiprtcProgram, size_t *))                                                   \
    X(hiprtcGetCode, hiprtcResult, (hiprtcProgram, char *))                                                         \
    X(hiprtcGetErrorString, const char *, (hiprtcResult))                                                           \
    X(hipGetDeviceCount, hipError_t, (int *))                                                                       \
    X(hipGetDeviceProperties, hipError_t, (hipDeviceProp_t *, int))                                                 \
    X(hipSetDevice, hipError_t, (int))                                                                              \
    X(hipGetErrorString, const char *, (hipError_t))                                                                \
    X(hipMalloc, hipError_t, (void **, size_t))                                                                     \
    X(hipFree, hipError_t, (void *))                                                                                \
    X(hipMemcpyHtoDAsync, hipError_t, (hipDeviceptr_t, void *, size_t, hipStream_t))                                \
    X(hipMemcpyDtoHAsync, hipError_t, (void *, hipDeviceptr_t, size_t, hipStream_t))                                \
    X(hipStreamSynchronize, hipError_t, (hipStream_t))                                                              \
    X(hipModuleLoadData, hipError_t, (hipModule_t *, const void *))                                                 \
    X(hipModuleUnload, hipError_t, (hipModule_t))                                                                   \
    X(hipModuleGetFunction, hipError_t, (hipFunction_t *, hipModule_t, const char *))                               \
    X(hipModuleLaunchKernel, hipError_t, (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
                                          unsigned, hipStream_t, void **, void **))

static struct {
    bool loaded;
    char why[320]; /* when not loaded */
#define FIELD(sym, ret, params) ret(*sym) params;
    HIP_FUNCS(FIELD)
#undef FIELD
} api;

static pthread_once_t api_once = PTHREAD_ONCE_INIT;

static void api_load(void)
{
    const char *lib = getenv("WEFT_HIP_LIB");
    if (!lib || !*lib) lib = "libamdhip64.so.5";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(api.why, sizeof api.why, "no HIP runtime (%s cannot be loaded: %s)", lib, e ? e : "not found");
        return;
    }
#define LOOKUP(sym, ret, params)                                                                                     \
    if (!(api.sym = (ret(*) params)(uintptr_t)dlsym(h, #sym))) {                                                     \
        snprintf(api.why, sizeof api.why, "no HIP runtime (%s has no %s: not ROCm 5)", lib, #sym);                 \
        return;                                                                                                      \
    }
    HIP_FUNCS(LOOKUP)
#undef LOOKUP
    api.loaded = true;
}

/* WEFT_OK when the API table is loaded; else WEFT_ERR_UNAVAILABLE with the reason. */
static weft_status api_ready(void)
{
    pthread_once(&api_once, api_load);
    return api.loaded ? WEFT_OK : weft_fail(WEFT_ERR_UNAVAILABLE, "%s", api.why);
}

/* Device 0's properties, or false with why[] set ("no HIP runtime/device ..."). */
static bool device_props(hipDeviceProp_t *p, char *why, size_t n)
{
    if (api_ready() != WEFT_OK) {
        snprintf(why, n, "%s", api.why);
        return false;
    }
    int devs = 0;
    hipError_t e = api.hipGetDeviceCount(&devs);
    if (e != hipSuccess || devs <= 0) {
        snprintf(why, n, "no HIP device (the HIP runtime reports %s)", e == hipSuccess || e == hipErrorNoDevice
                                                                          ? "none" : api.hipGetErrorString(e));
        return false;
    }
    memset(p, 0, sizeof *p);
    if ((e = api.hipGetDeviceProperties(p, 0)) != hipSuccess) {
        snprintf(why, n, "no HIP device (device 0: %s)", api.hipGetErrorString(e));
        return false;
    }
    p->name[sizeof p->name - 1] = '\0';
    p->gcnArchName[sizeof p->gcnArchName - 1] = '\0';
    p->gcnArchName[strcspn(p->gcnArchName, ":")] = '\0'; /* "gfx90a:sramecc+:xnack-" -> "gfx90a" */
    return true;
}

bool weft_hip_device_available(char *why, size_t n)
{
    hipDeviceProp_t p;
    return device_props(&p, why, n);
}

weft_status weft_hip_check_arch(const char *arch)
{
    for (size_t i = 0; arch && i < sizeof arches / sizeof arches[0]; i++)
        if (!strcmp(arches[i].name, arch)) return WEFT_OK;
    char list[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof arches / sizeof arches[0] && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? " " : "", arches[i].name);
    return weft_fail(WEFT_ERR_UNAVAILABLE, "hip: unknown GPU architecture '%s': ROCm 5.2's hiprtc compiles for %s",
                     arch ? arch : "(null)", list);
}

int weft_hip_wavefront(const char *arch)
{
    for (size_t i = 0; arch && i < sizeof arches / sizeof arches[0]; i++)
        if (!strcmp(arches[i].name, arch)) return arches[i].wave;
    return arch && (!strncmp(arch, "gfx10", 5) || !strncmp(arch, "gfx11", 5)) ? 32 : 64;
}

/* ---- hiprtc --------------------------------------------------------------------------------- */

static weft_status hiprtc_fail(hiprtcProgram prog, hiprtcResult r, const char *arch, const char *what)
{
    size_t n = 0;
    char *log = NULL;
    if (prog && api.hiprtcGetProgramLogSize(prog, &n) == HIPRTC_SUCCESS && n > 1 && (log = calloc(1, n + 1)))
        if (api.hiprtcGetProgramLog(prog, log) != HIPRTC_SUCCESS) log[0] = '\0';
    weft_status st = weft_fail(WEFT_ERR_INTERNAL, "hiprtc (%s) %s: %s%s%s", arch, what, api.hiprtcGetErrorString(r),
                               log && *log ? "\n" : "", log ? log : "");
    free(log);
    return st;
}

/* One compile at a time: hiprtc's thread safety is not documented for ROCm 5.2. */
static pthread_mutex_t hiprtc_lock = PTHREAD_MUTEX_INITIALIZER;

weft_status weft_hip_hiprtc(const char *src, const char *arch, void **code, size_t *size)
{
    *code = NULL;
    *size = 0;
    weft_status st = weft_hip_check_arch(arch);
    if (st == WEFT_OK) st = api_ready();
    if (st != WEFT_OK) return st;
    pthread_mutex_lock(&hiprtc_lock);
    hiprtcProgram prog = NULL;
    hiprtcResult r = api.hiprtcCreateProgram(&prog, src, "weft.hip", 0, NULL, NULL);
    if (r != HIPRTC_SUCCESS) {
        pthread_mutex_unlock(&hiprtc_lock);
        return hiprtc_fail(NULL, r, arch, "create");
    }
    char archopt[48];
    snprintf(archopt, sizeof archopt, "--offload-arch=%s", arch);
    /* No automatic loop unrolling: the schedule decides (`unroll`, `#pragma unroll` loops are
     * still unrolled). ROCm 5.2's LLVM at -O2/-O3 with it ran for minutes in GVN on some
     * small guarded reduction kernels (tests/targets/test_hip.c draws such schedules). */
    const char *opts[] = {archopt, "-O3", "-fno-unroll-loops", "-std=c++17"};
    size_t n = 0;
    if ((r = api.hiprtcCompileProgram(prog, 4, opts)) != HIPRTC_SUCCESS) st = hiprtc_fail(prog, r, arch, "compile");
    else if ((r = api.hiprtcGetCodeSize(prog, &n)) != HIPRTC_SUCCESS) st = hiprtc_fail(prog, r, arch, "code size");
    else if (n == 0) st = weft_fail(WEFT_ERR_INTERNAL, "hiprtc (%s): empty code object", arch);
    else if (!(*code = malloc(n))) st = weft_fail(WEFT_ERR_NOMEM, "hiprtc: out of memory (%zu bytes)", n);
    else if ((r = api.hiprtcGetCode(prog, *code)) != HIPRTC_SUCCESS) st = hiprtc_fail(prog, r, arch, "code");
    else *size = n;
    if (st != WEFT_OK) {
        free(*code);
        *code = NULL;
    }
    api.hiprtcDestroyProgram(&prog);
    pthread_mutex_unlock(&hiprtc_lock);
    return st;
}

/* ---- the target ----------------------------------------------------------------------------- */

struct weft_target {
    char arch[16];      /* "gfx90a" */
    int wave;           /* wavefront size */
    bool device;        /* device 0 is present and of this architecture: kernels are loaded */
    char why[320];      /* when !device: why kernels cannot run here */
    char dev_name[256]; /* the device's name, or "none" */
    int max_threads;
    long shared_bytes;
};

struct weft_kernel {
    weft_target *t;
    weft_gpu_source src;
    int n_params;        /* the function's parameters; src.n_temps temporaries follow */
    size_t temp_bytes[32];
    void *code;
    size_t code_size;
    hipModule_t module;  /* NULL when compile-only */
    hipFunction_t fn[WEFT_GPU_MAX_LAUNCHES];
};

static weft_status create_arch(const char *arch, weft_target **out)
{
    *out = NULL;
    weft_status st = weft_hip_check_arch(arch);
    if (st != WEFT_OK) return st;
    weft_target *t = calloc(1, sizeof *t);
    if (!t) return weft_fail(WEFT_ERR_NOMEM, "hip: out of memory");
    snprintf(t->arch, sizeof t->arch, "%s", arch);
    t->wave = weft_hip_wavefront(arch);
    t->max_threads = 1024;
    t->shared_bytes = 64 * 1024;
    snprintf(t->dev_name, sizeof t->dev_name, "none");
    hipDeviceProp_t p;
    if (device_props(&p, t->why, sizeof t->why)) {
        if (strcmp(p.gcnArchName, arch))
            snprintf(t->why, sizeof t->why, "hip:%s kernels cannot run on HIP device 0 (%.160s, %.32s)", arch, p.name,
                     p.gcnArchName);
        else if (api.hipSetDevice(0) != hipSuccess)
            snprintf(t->why, sizeof t->why, "no HIP device (hipSetDevice(0) failed)");
        else {
            t->device = true;
            snprintf(t->dev_name, sizeof t->dev_name, "%s", p.name);
            if (p.maxThreadsPerBlock > 0) t->max_threads = p.maxThreadsPerBlock;
            if (p.sharedMemPerBlock > 0) t->shared_bytes = (long)p.sharedMemPerBlock;
            if (p.warpSize > 0) t->wave = p.warpSize;
        }
    }
    *out = t;
    return WEFT_OK;
}

static void hip_destroy(weft_target *t) { free(t); }

static void hip_caps(const weft_target *t, weft_target_caps *out)
{
    *out = weft_caps_gpu("hip");
    out->max_threads = t->max_threads;
    out->shared_bytes = t->shared_bytes;
    out->warp_size = t->wave;
    snprintf(out->cpu, sizeof out->cpu, "%s", t->arch);
    snprintf(out->features, sizeof out->features, "device=%s", t->dev_name);
}

static size_t dtype_bytes(weft_dtype d) { return d.bits <= 8 ? 1 : (size_t)d.bits / 8; }

static void hip_kernel_destroy(weft_kernel *k)
{
    if (!k) return;
    if (k->module) api.hipModuleUnload(k->module);
    free(k->src.text);
    free(k->code);
    free(k);
}

static weft_status hip_compile(weft_target *t, const weft_loop_func *f, weft_kernel **out)
{
    *out = NULL;
    weft_kernel *k = calloc(1, sizeof *k);
    if (!k) return weft_fail(WEFT_ERR_NOMEM, "hip: out of memory");
    k->t = t;
    k->n_params = f->n_params;
    weft_status st = weft_gpu_emit(f, &weft_gpu_dialect_hip, &k->src);
    if (st == WEFT_OK) st = weft_hip_hiprtc(k->src.text, t->arch, &k->code, &k->code_size);
    for (int i = 0; st == WEFT_OK && i < k->src.n_temps; i++)
        k->temp_bytes[i] = (size_t)k->src.temps[i]->size * dtype_bytes(k->src.temps[i]->dtype);
    if (st == WEFT_OK && t->device) {
        hipError_t e = api.hipModuleLoadData(&k->module, k->code);
        if (e != hipSuccess) {
            k->module = NULL;
            st = weft_fail(WEFT_ERR_INTERNAL, "hip: loading the code object of %s: %s", f->name, api.hipGetErrorString(e));
        }
        for (int i = 0; st == WEFT_OK && i < k->src.n_launches; i++)
            if ((e = api.hipModuleGetFunction(&k->fn[i], k->module, k->src.names[i])) != hipSuccess)
                st = weft_fail(WEFT_ERR_INTERNAL, "hip: kernel %s: %s", k->src.names[i], api.hipGetErrorString(e));
    }
    if (st != WEFT_OK) {
        hip_kernel_destroy(k);
        return st;
    }
    *out = k;
    return WEFT_OK;
}

static hipStream_t stream_of(const weft_exec *ex) { return ex ? (hipStream_t)ex->queue : NULL; }

static weft_status hip_check(hipError_t e, const char *what)
{
    return e == hipSuccess ? WEFT_OK : weft_fail(WEFT_ERR_INTERNAL, "hip: %s: %s", what, api.hipGetErrorString(e));
}

static weft_status hip_run(weft_kernel *k, void *const *args, const weft_exec *ex)
{
    if (!k->module) return weft_fail(WEFT_ERR_UNAVAILABLE, "%s", k->t->why);
    hipStream_t stream = stream_of(ex);
    int n_args = k->n_params + k->src.n_temps;
    void *vals[64 + 32], *params[64 + 32];
    if (k->n_params > 64) return weft_fail(WEFT_ERR_UNSUPPORTED, "hip: more than 64 kernel parameters");
    weft_status st = WEFT_OK;
    int made = 0;
    for (int i = 0; i < k->n_params; i++) vals[i] = args[i];
    for (; made < k->src.n_temps && st == WEFT_OK; made++) {
        hipError_t e = api.hipMalloc(&vals[k->n_params + made], k->temp_bytes[made] ? k->temp_bytes[made] : 1);
        if (e != hipSuccess)
            st = weft_fail(WEFT_ERR_NOMEM, "hip: a temporary of %zu bytes: %s", k->temp_bytes[made], api.hipGetErrorString(e));
    }
    if (st != WEFT_OK) made--;
    for (int i = 0; i < n_args; i++) params[i] = &vals[i];
    for (int i = 0; st == WEFT_OK && i < k->src.n_launches; i++) {
        const weft_gpu_launch *l = &k->src.launches[i];
        st = hip_check(api.hipModuleLaunchKernel(k->fn[i], (unsigned)l->grid[0], (unsigned)l->grid[1], (unsigned)l->grid[2],
                                                 (unsigned)l->block[0], (unsigned)l->block[1], (unsigned)l->block[2], 0,
                                                 stream, params, NULL),
                       k->src.names[i]);
    }
    if (made > 0) { /* the temporaries live until the launches that use them have finished */
        weft_status sync = hip_check(api.hipStreamSynchronize(stream), "synchronize");
        if (st == WEFT_OK) st = sync;
        for (int i = 0; i < made; i++) api.hipFree(vals[k->n_params + i]);
    }
    return st;
}

static weft_status hip_dump(weft_target *t, const weft_loop_func *f, weft_dump_kind kind, char **out)
{
    *out = NULL;
    weft_gpu_source src;
    weft_status st = weft_gpu_emit(f, &weft_gpu_dialect_hip, &src);
    if (st != WEFT_OK || kind == WEFT_DUMP_IR) {
        *out = src.text;
        return st;
    }
    void *code = NULL;
    size_t size = 0;
    st = weft_hip_hiprtc(src.text, t->arch, &code, &size);
    const unsigned char *e = code;
    /* an ELF64 for EM_AMDGPU (224) */
    bool elf = size > 20 && !memcmp(e, "\177ELF", 4) && e[4] == 2 && (e[18] | e[19] << 8) == 224;
    char head[160];
    snprintf(head, sizeof head, "code object for %s: %zu bytes, %s, kernels:", t->arch, size,
             elf ? "ELF64 amdgcn-amd-amdhsa" : "not an AMDGPU ELF");
    size_t len = strlen(head) + 2;
    for (int i = 0; i < src.n_launches; i++) len += strlen(src.names[i]) + 1;
    if (st == WEFT_OK && !(*out = malloc(len))) st = weft_fail(WEFT_ERR_NOMEM, "hip: out of memory");
    if (st == WEFT_OK) {
        strcpy(*out, head);
        for (int i = 0; i < src.n_launches; i++) strcat(strcat(*out, " "), src.names[i]);
    }
    free(code);
    free(src.text);
    return st;
}

/* ---- buffer operations ---------------------------------------------------------------------- */

static weft_status device_ready(weft_target *t)
{
    return t->device ? WEFT_OK : weft_fail(WEFT_ERR_UNAVAILABLE, "%s", t->why);
}

static weft_status hip_alloc(weft_target *t, size_t bytes, void **out)
{
    *out = NULL;
    weft_status st = device_ready(t);
    if (st != WEFT_OK) return st;
    hipError_t e = api.hipMalloc(out, bytes);
    if (e != hipSuccess) {
        *out = NULL;
        return weft_fail(WEFT_ERR_NOMEM, "hip: allocating %zu bytes on %s: %s", bytes, t->dev_name, api.hipGetErrorString(e));
    }
    return WEFT_OK;
}

static void hip_free_buf(weft_target *t, void *dev)
{
    if (dev && t->device) api.hipFree(dev);
}

static weft_status hip_upload(weft_target *t, void *dst, const void *src, size_t bytes, const weft_exec *ex)
{
    weft_status st = device_ready(t);
    if (st != WEFT_OK) return st;
    /* src may be reused when the call returns: wait for the copy out of pageable memory */
    st = hip_check(api.hipMemcpyHtoDAsync(dst, (void *)(uintptr_t)src, bytes, stream_of(ex)), "upload");
    return st == WEFT_OK ? hip_check(api.hipStreamSynchronize(stream_of(ex)), "upload") : st;
}

static weft_status hip_download(weft_target *t, void *dst, const void *src, size_t bytes, const weft_exec *ex)
{
    weft_status st = device_ready(t);
    if (st != WEFT_OK) return st;
    return hip_check(api.hipMemcpyDtoHAsync(dst, (void *)(uintptr_t)src, bytes, stream_of(ex)), "download");
}

static weft_status hip_synchronize(weft_target *t, const weft_exec *ex)
{
    weft_status st = device_ready(t);
    return st == WEFT_OK ? hip_check(api.hipStreamSynchronize(stream_of(ex)), "synchronize (a kernel failed?)") : st;
}

/* ---- registration --------------------------------------------------------------------------- */

/* "hip": the device's architecture when one is present, gfx90a otherwise. */
static weft_status create_default(weft_target **out)
{
    hipDeviceProp_t p;
    char why[320];
    return create_arch(device_props(&p, why, sizeof why) ? p.gcnArchName : "gfx90a", out);
}

#define CREATE(n, w) \
    static weft_status create_##n(weft_target **out) { return create_arch(#n, out); }
HIP_ARCHES(CREATE)
#undef CREATE

#define OPS(name_, create_)                                                                                         \
    {.name = name_, .create = create_, .destroy = hip_destroy, .caps = hip_caps, .compile = hip_compile,           \
     .run = hip_run, .kernel_destroy = hip_kernel_destroy, .dump = hip_dump, .alloc = hip_alloc,                   \
     .free_buf = hip_free_buf, .upload = hip_upload, .download = hip_download, .synchronize = hip_synchronize}
static const weft_target_ops hip_default_ops = OPS("hip", create_default);
#define ARCH_OPS(n, w) static const weft_target_ops hip_##n##_ops = OPS("hip:" #n, create_##n);
HIP_ARCHES(ARCH_OPS)
#undef ARCH_OPS

#define ARCH_REF(n, w) &hip_##n##_ops,
const weft_target_ops *const weft_target_hip_list[] = {&hip_default_ops, HIP_ARCHES(ARCH_REF)};
#undef ARCH_REF
const int weft_target_hip_count = sizeof weft_target_hip_list / sizeof weft_target_hip_list[0];
