/* The CUDA target (contract in targets/cuda/cuda.h).
 *
 * compile() emits CUDA C from the lowered function, compiles it with NVRTC for the target's
 * architecture (`--gpu-architecture=sm_XX` gives the cubin) and keeps the cubin and kernel
 * names; the PTX for printing comes from a second compile for compute_XX (NVRTC returns no
 * cubin for a virtual architecture and no PTX is promised for a real one). The driver is only
 * looked up when something has to run.
 */
#include "targets/cuda/cuda.h"

#include <nvrtc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "targets/cuda/driver.h"
#include "targets/gpu/emit_c.h"

enum { WEFT_MAX_LAUNCH_ARGS = 128 };

struct weft_target {
    char arch[16]; /* "sm_90" */
};

/* A compiled function: its source (launch dimensions, kernel names, temporaries), the cubin,
 * and, once it first runs, the loaded module, its functions and its temporaries' device
 * memory (guarded by mu: the first run of a kernel may race with another). */
struct weft_kernel {
    weft_gpu_source src;
    void *cubin;
    size_t cubin_size;
    int n_params;
    pthread_mutex_t mu;
    CUmodule module;
    CUfunction fn[WEFT_GPU_MAX_LAUNCHES];
    CUdeviceptr temp[32];
    size_t temp_bytes[32];
};

bool weft_cuda_driver_available(char *why, size_t n)
{
    return weft_cu_load(why, n) != NULL;
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
    k->n_params = f->n_params;
    /* src points into f's arena, which the caller may free: keep the sizes, drop the pointers */
    for (int i = 0; i < k->src.n_temps; i++) {
        k->temp_bytes[i] = (size_t)k->src.temps[i]->size * (size_t)weft_dtype_bytes(k->src.temps[i]->dtype);
        k->src.temps[i] = NULL;
    }
    for (int i = 0; i < k->src.n_launches; i++) k->src.launches[i].body = NULL;
    pthread_mutex_init(&k->mu, NULL);
    *out = k;
    return WEFT_OK;
}

/* Loads k's cubin and looks up its functions, and allocates its temporaries, on first use.
 * Caller holds k->mu and has entered the driver. */
static weft_status load_locked(const weft_cu_api *cu, weft_kernel *k)
{
    if (k->module) return WEFT_OK;
    CUmodule mod = NULL;
    weft_status st = weft_cu_check(cu, cu->module_load(&mod, k->cubin), "cuModuleLoadData", k->src.names[0]);
    for (int i = 0; st == WEFT_OK && i < k->src.n_launches; i++)
        st = weft_cu_check(cu, cu->module_function(&k->fn[i], mod, k->src.names[i]), "cuModuleGetFunction", k->src.names[i]);
    for (int i = 0; st == WEFT_OK && i < k->src.n_temps; i++) {
        char what[160];
        snprintf(what, sizeof what, "temporary %d of %s, %zu bytes", i, k->src.names[0], k->temp_bytes[i]);
        st = weft_cu_check(cu, cu->mem_alloc(&k->temp[i], k->temp_bytes[i] ? k->temp_bytes[i] : 1), "cuMemAlloc_v2", what);
    }
    if (st != WEFT_OK) {
        for (int i = 0; i < k->src.n_temps; i++)
            if (k->temp[i]) cu->mem_free(k->temp[i]);
        memset(k->temp, 0, sizeof k->temp);
        if (mod) cu->module_unload(mod);
        return st;
    }
    k->module = mod;
    return WEFT_OK;
}

/* cuLaunchKernel's limits on grid and block extents (per axis). */
static weft_status check_dims(const weft_kernel *k, int i)
{
    static const int64_t max_grid[3] = {2147483647, 65535, 65535}, max_block[3] = {1024, 1024, 64};
    const weft_gpu_launch *l = &k->src.launches[i];
    for (int d = 0; d < 3; d++)
        if (l->grid[d] < 1 || l->grid[d] > max_grid[d] || l->block[d] < 1 || l->block[d] > max_block[d])
            return weft_fail(WEFT_ERR_INVALID_ARG, "cuda: kernel %s has grid (%lld, %lld, %lld), block (%lld, %lld, %lld): "
                                                   "axis %c is outside the launch limits (grid %lld, block %lld)",
                             k->src.names[i], (long long)l->grid[0], (long long)l->grid[1], (long long)l->grid[2],
                             (long long)l->block[0], (long long)l->block[1], (long long)l->block[2], "xyz"[d],
                             (long long)max_grid[d], (long long)max_block[d]);
    return WEFT_OK;
}

/* Launches every kernel of k in order on ex's stream. Arguments: the function's params (device
 * addresses from args) then its temporaries. kernelParams carries one extra NULL entry after
 * them: the driver reads only as many as the kernel declares, and the test suite's fake driver
 * counts up to it. */
static weft_status cuda_run(weft_kernel *k, void *const *args, const weft_exec *ex)
{
    const weft_cu_api *cu = NULL;
    weft_status st = weft_cu_enter(&cu);
    if (st != WEFT_OK) return st;
    int n = k->n_params + k->src.n_temps;
    CUdeviceptr vals[WEFT_MAX_LAUNCH_ARGS];
    void *params[WEFT_MAX_LAUNCH_ARGS + 1];
    if (n > WEFT_MAX_LAUNCH_ARGS)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "cuda: kernel %s takes %d arguments (at most %d)", k->src.names[0], n,
                         WEFT_MAX_LAUNCH_ARGS);
    CUstream stream = ex ? (CUstream)ex->queue : NULL;
    /* under mu: one run's launches are enqueued together, so two host threads running this
     * kernel on one stream do not interleave their use of its temporaries */
    pthread_mutex_lock(&k->mu);
    st = load_locked(cu, k);
    for (int i = 0; i < n; i++) {
        vals[i] = i < k->n_params ? (CUdeviceptr)(uintptr_t)args[i] : k->temp[i - k->n_params];
        params[i] = &vals[i];
    }
    params[n] = NULL;
    for (int i = 0; st == WEFT_OK && i < k->src.n_launches; i++) {
        const weft_gpu_launch *l = &k->src.launches[i];
        if ((st = check_dims(k, i)) != WEFT_OK) break;
        /* shared memory is static (__shared__ arrays in the source): no dynamic bytes */
        CUresult r = cu->launch(k->fn[i], (unsigned)l->grid[0], (unsigned)l->grid[1], (unsigned)l->grid[2],
                                (unsigned)l->block[0], (unsigned)l->block[1], (unsigned)l->block[2], 0, stream, params, NULL);
        if (r != WEFT_CU_SUCCESS) {
            char what[160];
            snprintf(what, sizeof what, "%s, grid (%lld, %lld, %lld), block (%lld, %lld, %lld)", k->src.names[i],
                     (long long)l->grid[0], (long long)l->grid[1], (long long)l->grid[2], (long long)l->block[0],
                     (long long)l->block[1], (long long)l->block[2]);
            st = weft_cu_check(cu, r, "cuLaunchKernel", what);
        }
    }
    pthread_mutex_unlock(&k->mu);
    return st;
}

static void cuda_kernel_destroy(weft_kernel *k)
{
    if (!k) return;
    const weft_cu_api *cu = NULL;
    if (k->module && weft_cu_enter(&cu) == WEFT_OK) {
        for (int i = 0; i < k->src.n_temps; i++)
            if (k->temp[i]) cu->mem_free(k->temp[i]);
        cu->module_unload(k->module);
    }
    if (k->cubin) pthread_mutex_destroy(&k->mu);
    free(k->src.text);
    free(k->cubin);
    free(k);
}

/* ---- buffer operations (targets/target.h) ---- */

static weft_status cuda_alloc(weft_target *t, size_t bytes, void **out)
{
    (void)t;
    *out = NULL;
    const weft_cu_api *cu = NULL;
    weft_status st = weft_cu_enter(&cu);
    if (st != WEFT_OK) return st;
    CUdeviceptr p = 0;
    char what[64];
    snprintf(what, sizeof what, "%zu bytes", bytes);
    /* cuMemAlloc aligns to at least 256 bytes */
    if ((st = weft_cu_check(cu, cu->mem_alloc(&p, bytes ? bytes : 1), "cuMemAlloc_v2", what)) == WEFT_OK)
        *out = (void *)(uintptr_t)p;
    return st;
}

static void cuda_free_buf(weft_target *t, void *dev)
{
    (void)t;
    const weft_cu_api *cu = NULL;
    if (dev && weft_cu_enter(&cu) == WEFT_OK) cu->mem_free((CUdeviceptr)(uintptr_t)dev);
}

static weft_status cuda_upload(weft_target *t, void *dst, const void *src, size_t bytes, const weft_exec *ex)
{
    (void)t;
    const weft_cu_api *cu = NULL;
    weft_status st = weft_cu_enter(&cu);
    if (st != WEFT_OK || !bytes) return st;
    char what[64];
    snprintf(what, sizeof what, "%zu bytes", bytes);
    /* from pageable memory the call returns once src has been staged: src may be reused */
    return weft_cu_check(cu, cu->copy_htod((CUdeviceptr)(uintptr_t)dst, src, bytes, ex ? (CUstream)ex->queue : NULL),
                         "cuMemcpyHtoDAsync_v2", what);
}

static weft_status cuda_download(weft_target *t, void *dst, const void *src, size_t bytes, const weft_exec *ex)
{
    (void)t;
    const weft_cu_api *cu = NULL;
    weft_status st = weft_cu_enter(&cu);
    if (st != WEFT_OK || !bytes) return st;
    char what[64];
    snprintf(what, sizeof what, "%zu bytes", bytes);
    return weft_cu_check(cu, cu->copy_dtoh(dst, (CUdeviceptr)(uintptr_t)src, bytes, ex ? (CUstream)ex->queue : NULL),
                         "cuMemcpyDtoHAsync_v2", what);
}

static weft_status cuda_synchronize(weft_target *t, const weft_exec *ex)
{
    (void)t;
    const weft_cu_api *cu = NULL;
    weft_status st = weft_cu_enter(&cu);
    if (st != WEFT_OK) return st;
    if (ex && ex->queue) return weft_cu_check(cu, cu->stream_sync((CUstream)ex->queue), "cuStreamSynchronize", NULL);
    return weft_cu_check(cu, cu->ctx_sync(), "cuCtxSynchronize", NULL);
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

/* "cuda": the device's architecture when a driver and device are present, sm_90 otherwise. */
static weft_status create_default(weft_target **out)
{
    char arch[16] = "sm_90", why[512];
    const weft_cu_api *cu = weft_cu_load(why, sizeof why);
    CUdevice dev = 0;
    int major = 0, minor = 0;
    if (cu && cu->device_get(&dev, 0) == WEFT_CU_SUCCESS && cu->device_attr(&major, WEFT_CU_ATTR_CC_MAJOR, dev) == 0 &&
        cu->device_attr(&minor, WEFT_CU_ATTR_CC_MINOR, dev) == 0 && major > 0 && major < 100 && minor >= 0 && minor < 10)
        snprintf(arch, sizeof arch, "sm_%d%d", major, minor);
    return create_arch(arch, out);
}

#define CUDA_ARCHES(X) X(75) X(80) X(86) X(87) X(89) X(90) X(100) X(103) X(110) X(120) X(121)

#define CREATE(num) \
    static weft_status create_sm##num(weft_target **out) { return create_arch("sm_" #num, out); }
CUDA_ARCHES(CREATE)
#undef CREATE

/* Every CUDA target is a device target: all buffer operations set (targets/target.h). */
#define OPS(name_, create_)                                                                                         \
    {.name = name_, .create = create_, .destroy = cuda_destroy, .caps = cuda_caps, .compile = cuda_compile,         \
     .run = cuda_run, .kernel_destroy = cuda_kernel_destroy, .dump = cuda_dump, .alloc = cuda_alloc,                 \
     .free_buf = cuda_free_buf, .upload = cuda_upload, .download = cuda_download, .synchronize = cuda_synchronize}
static const weft_target_ops cuda_default_ops = OPS("cuda", create_default);
#define ARCH_OPS(num) static const weft_target_ops cuda_sm##num##_ops = OPS("cuda:sm_" #num, create_sm##num);
CUDA_ARCHES(ARCH_OPS)
#undef ARCH_OPS

#define ARCH_REF(num) &cuda_sm##num##_ops,
const weft_target_ops *const weft_target_cuda_list[] = {&cuda_default_ops, CUDA_ARCHES(ARCH_REF)};
#undef ARCH_REF
const int weft_target_cuda_count = sizeof weft_target_cuda_list / sizeof weft_target_cuda_list[0];

int weft_cuda_kernel_launch(const weft_kernel *k, int i, const char **name, weft_gpu_launch *out)
{
    if (i >= 0 && i < k->src.n_launches) {
        if (name) *name = k->src.names[i];
        if (out) *out = k->src.launches[i];
    }
    return k->src.n_launches;
}
