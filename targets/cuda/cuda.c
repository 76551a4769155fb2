/* The CUDA target (contract in targets/cuda/cuda.h).
 *
 * compile() emits CUDA C from the lowered function, compiles it with NVRTC for the target's
 * architecture (`--gpu-architecture=sm_XX` gives the cubin) and keeps the cubin and kernel
 * names; the PTX for printing comes from a second compile for compute_XX (NVRTC returns no
 * cubin for a virtual architecture and no PTX is promised for a real one). The driver is only
 * looked up when something has to run.
 */
#include "targets/cuda/cuda.h"

#include <dlfcn.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "targets/gpu/emit_c.h"

struct weft_target {
    char arch[16]; /* "sm_90" */
};

struct weft_kernel {
    weft_gpu_source src;
    void *cubin;
    size_t cubin_size;
};

bool weft_cuda_driver_available(char *why, size_t n)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, n, "no CUDA driver (libcuda.so.1 cannot be loaded: %s)", e ? e : "not found");
        return false;
    }
    typedef int (*init_fn)(unsigned);
    typedef int (*count_fn)(int *);
    init_fn init = (init_fn)(uintptr_t)dlsym(h, "cuInit");
    count_fn count = (count_fn)(uintptr_t)dlsym(h, "cuDeviceGetCount");
    int devs = 0;
    bool ok = init && count && init(0) == 0 && count(&devs) == 0 && devs > 0;
    if (!ok) snprintf(why, n, "no CUDA device (the CUDA driver reports none)");
    dlclose(h);
    return ok;
}

static weft_status nvrtc_fail(nvrtcProgram prog, nvrtcResult r, const char *arch, const char *what)
{
    size_t n = 0;
    char *log = NULL;
    if (prog && nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1 && (log = malloc(n)))
        if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = '\0';
    weft_status st = weft_fail(WEFT_ERR_INTERNAL, "nvrtc (%s) %s: %s%s%s", arch, what, nvrtcGetErrorString(r),
                               log && *log ? "\n" : "", log ? log : "");
    free(log);
    return st;
}

static weft_status compile_one(const char *src, const char *gpu_arch, bool want_ptx, char **ptx, void **cubin,
                               size_t *cubin_size)
{
    nvrtcProgram prog = NULL;
    nvrtcResult r = nvrtcCreateProgram(&prog, src, "weft.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) return nvrtc_fail(NULL, r, gpu_arch, "create");
    char archopt[48];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", gpu_arch);
    const char *opts[] = {archopt, "--std=c++17", "-default-device"};
    weft_status st = WEFT_OK;
    if ((r = nvrtcCompileProgram(prog, 3, opts)) != NVRTC_SUCCESS) st = nvrtc_fail(prog, r, gpu_arch, "compile");
    size_t n = 0;
    if (st == WEFT_OK && want_ptx) {
        if ((r = nvrtcGetPTXSize(prog, &n)) != NVRTC_SUCCESS) st = nvrtc_fail(prog, r, gpu_arch, "PTX size");
        else if (!(*ptx = malloc(n + 1))) st = weft_fail(WEFT_ERR_NOMEM, "nvrtc: out of memory");
        else if ((r = nvrtcGetPTX(prog, *ptx)) != NVRTC_SUCCESS) st = nvrtc_fail(prog, r, gpu_arch, "PTX");
        else (*ptx)[n] = '\0';
    }
    if (st == WEFT_OK && !want_ptx) {
        if ((r = nvrtcGetCUBINSize(prog, &n)) != NVRTC_SUCCESS) st = nvrtc_fail(prog, r, gpu_arch, "cubin size");
        else if (n == 0) st = weft_fail(WEFT_ERR_INTERNAL, "nvrtc (%s): empty cubin", gpu_arch);
        else if (!(*cubin = malloc(n))) st = weft_fail(WEFT_ERR_NOMEM, "nvrtc: out of memory");
        else if ((r = nvrtcGetCUBIN(prog, *cubin)) != NVRTC_SUCCESS) st = nvrtc_fail(prog, r, gpu_arch, "cubin");
        else *cubin_size = n;
    }
    nvrtcDestroyProgram(&prog);
    return st;
}

weft_status weft_cuda_nvrtc(const char *src, const char *arch, char **ptx, void **cubin, size_t *cubin_size)
{
    if (ptx) *ptx = NULL;
    if (cubin) *cubin = NULL;
    if (cubin_size) *cubin_size = 0;
    if (strncmp(arch, "sm_", 3)) return weft_fail(WEFT_ERR_INVALID_ARG, "cuda: architecture '%s' is not sm_XX", arch);
    weft_status st = WEFT_OK;
    if (cubin) {
        st = compile_one(src, arch, false, NULL, cubin, cubin_size);
        if (st != WEFT_OK) return st;
    }
    if (ptx) {
        char virt[16];
        snprintf(virt, sizeof virt, "compute_%s", arch + 3);
        st = compile_one(src, virt, true, ptx, NULL, NULL);
        if (st != WEFT_OK && cubin) {
            free(*cubin);
            *cubin = NULL;
            *cubin_size = 0;
        }
    }
    return st;
}

/* Whether NVRTC knows architecture sm_<num>. */
static bool arch_supported(int num)
{
    int n = 0;
    if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 256) return false;
    int archs[256];
    if (nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS) return false;
    for (int i = 0; i < n; i++)
        if (archs[i] == num) return true;
    return false;
}

static weft_status create_arch(const char *arch, weft_target **out)
{
    *out = NULL;
    int num = atoi(arch + 3);
    if (!arch_supported(num))
        return weft_fail(WEFT_ERR_UNAVAILABLE, "cuda: this NVRTC cannot compile for %s (CUDA %s knows sm_75 and up)", arch,
                         "13");
    weft_target *t = calloc(1, sizeof *t);
    if (!t) return weft_fail(WEFT_ERR_NOMEM, "cuda: out of memory");
    snprintf(t->arch, sizeof t->arch, "%s", arch);
    *out = t;
    return WEFT_OK;
}

static void cuda_destroy(weft_target *t) { free(t); }

static void cuda_caps(const weft_target *t, weft_target_caps *out)
{
    *out = weft_caps_gpu("cuda");
    snprintf(out->cpu, sizeof out->cpu, "%s", t->arch);
}

static weft_status cuda_compile(weft_target *t, const weft_loop_func *f, weft_kernel **out)
{
    *out = NULL;
    weft_kernel *k = calloc(1, sizeof *k);
    if (!k) return weft_fail(WEFT_ERR_NOMEM, "cuda: out of memory");
    weft_status st = weft_gpu_emit(f, &weft_gpu_dialect_cuda, &k->src);
    if (st == WEFT_OK) st = weft_cuda_nvrtc(k->src.text, t->arch, NULL, &k->cubin, &k->cubin_size);
    if (st != WEFT_OK) {
        free(k->src.text);
        free(k);
        return st;
    }
    *out = k;
    return WEFT_OK;
}

static weft_status cuda_run(weft_kernel *k, void *const *args, const weft_exec *ex)
{
    (void)k, (void)args, (void)ex;
    char why[256];
    if (!weft_cuda_driver_available(why, sizeof why)) return weft_fail(WEFT_ERR_UNAVAILABLE, "%s", why);
    return weft_fail(WEFT_ERR_UNSUPPORTED, "cuda: running kernels needs device buffers from the target interface "
                                           "(not built yet); this build compiles for CUDA only");
}

static void cuda_kernel_destroy(weft_kernel *k)
{
    if (!k) return;
    free(k->src.text);
    free(k->cubin);
    free(k);
}

static weft_status cuda_dump(weft_target *t, const weft_loop_func *f, weft_dump_kind kind, char **out)
{
    *out = NULL;
    weft_gpu_source src;
    weft_status st = weft_gpu_emit(f, &weft_gpu_dialect_cuda, &src);
    if (st != WEFT_OK) return st;
    if (kind == WEFT_DUMP_IR) {
        *out = src.text;
        return WEFT_OK;
    }
    st = weft_cuda_nvrtc(src.text, t->arch, out, NULL, NULL);
    free(src.text);
    return st;
}

/* "cuda": the device's architecture when one is present, sm_90 otherwise. */
static weft_status create_default(weft_target **out)
{
    char arch[16] = "sm_90";
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        typedef int (*init_fn)(unsigned);
        typedef int (*get_fn)(int *, int, int);
        init_fn init = (init_fn)(uintptr_t)dlsym(h, "cuInit");
        get_fn attr = (get_fn)(uintptr_t)dlsym(h, "cuDeviceGetAttribute");
        int major = 0, minor = 0;
        /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, _MINOR = 76; device 0. */
        if (init && attr && init(0) == 0 && attr(&major, 75, 0) == 0 && attr(&minor, 76, 0) == 0 && major > 0)
            snprintf(arch, sizeof arch, "sm_%d%d", major, minor);
        dlclose(h);
    }
    return create_arch(arch, out);
}

#define CUDA_ARCHES(X) X(75) X(80) X(86) X(87) X(89) X(90) X(100) X(103) X(110) X(120) X(121)

#define CREATE(num) \
    static weft_status create_sm##num(weft_target **out) { return create_arch("sm_" #num, out); }
CUDA_ARCHES(CREATE)
#undef CREATE

/* The buffer operations (alloc, upload, ...) stay NULL until device execution is built, so the
 * executor would treat this target as a host one: cuda_run refuses every run instead. */
#define OPS(name_, create_)                                                                                         \
    {.name = name_, .create = create_, .destroy = cuda_destroy, .caps = cuda_caps, .compile = cuda_compile,         \
     .run = cuda_run, .kernel_destroy = cuda_kernel_destroy, .dump = cuda_dump}
static const weft_target_ops cuda_default_ops = OPS("cuda", create_default);
#define ARCH_OPS(num) static const weft_target_ops cuda_sm##num##_ops = OPS("cuda:sm_" #num, create_sm##num);
CUDA_ARCHES(ARCH_OPS)
#undef ARCH_OPS

#define ARCH_REF(num) &cuda_sm##num##_ops,
const weft_target_ops *const weft_target_cuda_list[] = {&cuda_default_ops, CUDA_ARCHES(ARCH_REF)};
#undef ARCH_REF
const int weft_target_cuda_count = sizeof weft_target_cuda_list / sizeof weft_target_cuda_list[0];
