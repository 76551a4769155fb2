/* A fake device target for tests: the LLVM target behind the buffer operations of a device.
 *
 * "Device memory" is host memory (aligned_alloc, filled with 0xCD) whose address is handed out
 * with FAKE_POISON added: a non-canonical address on x86-64, so any host code that
 * dereferences it crashes (and ASan reports it). Only this target translates such addresses
 * back, in run(), upload() and download(), after checking that the whole range lies in one
 * live allocation; a host pointer given where device memory is due (or the reverse) is an
 * error counted in fake.bad. Kernels remember the process that compiled them: a kernel run in
 * another process (a forked worker calling the parent's JIT code) is an error too, as it
 * would be with a real device context. Counters record what the executor asked for.
 *
 * Include it in one test file; call fake_device_register() before compiling for "fakedev".
 */
#ifndef WEFT_TESTS_FAKE_DEVICE_H
#define WEFT_TESTS_FAKE_DEVICE_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/error.h"
#include "targets/target.h"

#define FAKE_POISON ((uintptr_t)0x4000000000000000ull)
enum { FAKE_MAX_ALLOCS = 4096 };

static struct {
    struct { unsigned char *real; size_t bytes; } a[FAKE_MAX_ALLOCS];
    int n_live, allocs, frees;
    int uploads, downloads, syncs, runs, bad;
    size_t up_bytes, down_bytes;
    bool fail_alloc; /* the next alloc fails (out of device memory) */
} fake;

typedef struct fake_target { weft_target *inner; } fake_target;
typedef struct fake_kernel {
    weft_kernel *inner;
    pid_t pid;
    int n_params;
    size_t *bytes;
} fake_kernel;

static const weft_target_ops *fake_llvm(void) { return weft_target_find("llvm"); }

/* The real pointer of device range [dev, dev + bytes), or NULL (counted as bad). */
static unsigned char *fake_real(const void *dev, size_t bytes)
{
    uintptr_t d = (uintptr_t)dev;
    if (d >= FAKE_POISON) {
        uintptr_t r = d - FAKE_POISON;
        for (int i = 0; i < FAKE_MAX_ALLOCS; i++) {
            uintptr_t b = (uintptr_t)fake.a[i].real;
            if (b && r >= b && r + bytes <= b + fake.a[i].bytes) return (unsigned char *)r;
        }
    }
    fake.bad++;
    return NULL;
}

static weft_status fake_create(weft_target **out)
{
    fake_target *t = calloc(1, sizeof *t);
    if (!t) return weft_fail(WEFT_ERR_NOMEM, "fakedev: out of memory");
    weft_status rc = fake_llvm()->create(&t->inner);
    if (rc != WEFT_OK) {
        free(t);
        return rc;
    }
    *out = (weft_target *)t;
    return WEFT_OK;
}

static void fake_destroy(weft_target *t)
{
    if (!t) return;
    fake_llvm()->destroy(((fake_target *)t)->inner);
    free(t);
}

static void fake_caps(const weft_target *t, weft_target_caps *out)
{
    fake_llvm()->caps(((const fake_target *)t)->inner, out);
}

static weft_status fake_compile(weft_target *t, const weft_loop_func *f, weft_kernel **out)
{
    fake_kernel *k = calloc(1, sizeof *k);
    if (!k || !(k->bytes = calloc((size_t)f->n_params + 1, sizeof *k->bytes))) {
        free(k);
        return weft_fail(WEFT_ERR_NOMEM, "fakedev: out of memory");
    }
    weft_status rc = fake_llvm()->compile(((fake_target *)t)->inner, f, &k->inner);
    if (rc != WEFT_OK) {
        free(k->bytes);
        free(k);
        return rc;
    }
    k->pid = getpid();
    k->n_params = f->n_params;
    for (int i = 0; i < f->n_params; i++)
        k->bytes[i] = (size_t)f->params[i]->size * (size_t)weft_dtype_bytes(f->params[i]->dtype);
    *out = (weft_kernel *)k;
    return WEFT_OK;
}

static weft_status fake_run(weft_kernel *kk, void *const *args, const weft_exec *ex)
{
    (void)ex;
    fake_kernel *k = (fake_kernel *)kk;
    if (k->pid != getpid()) return weft_fail(WEFT_ERR_DEVICE, "fakedev: kernel compiled in process %d run in %d", (int)k->pid, (int)getpid());
    void *real[64];
    if (k->n_params > 64) return weft_fail(WEFT_ERR_UNSUPPORTED, "fakedev: more than 64 params");
    for (int i = 0; i < k->n_params; i++)
        if (!(real[i] = fake_real(args[i], k->bytes[i])))
            return weft_fail(WEFT_ERR_INVALID_ARG, "fakedev: argument %d (%p, %zu bytes) is not device memory", i, args[i],
                             k->bytes[i]);
    fake.runs++;
    return fake_llvm()->run(k->inner, real, NULL);
}

static void fake_kernel_destroy(weft_kernel *kk)
{
    fake_kernel *k = (fake_kernel *)kk;
    if (!k) return;
    fake_llvm()->kernel_destroy(k->inner);
    free(k->bytes);
    free(k);
}

static weft_status fake_alloc(weft_target *t, size_t bytes, void **out)
{
    (void)t;
    *out = NULL;
    if (fake.fail_alloc) {
        fake.fail_alloc = false;
        return weft_fail(WEFT_ERR_NOMEM, "fakedev: out of device memory (%zu bytes)", bytes);
    }
    for (int i = 0; i < FAKE_MAX_ALLOCS; i++)
        if (!fake.a[i].real) {
            size_t n = (bytes + 63) & ~(size_t)63;
            if (!(fake.a[i].real = aligned_alloc(64, n))) return weft_fail(WEFT_ERR_NOMEM, "fakedev: %zu bytes", bytes);
            memset(fake.a[i].real, 0xCD, n);
            fake.a[i].bytes = bytes;
            fake.allocs++;
            fake.n_live++;
            *out = (void *)((uintptr_t)fake.a[i].real + FAKE_POISON);
            return WEFT_OK;
        }
    return weft_fail(WEFT_ERR_NOMEM, "fakedev: more than %d allocations", FAKE_MAX_ALLOCS);
}

static void fake_free(weft_target *t, void *dev)
{
    (void)t;
    if (!dev) return;
    for (int i = 0; i < FAKE_MAX_ALLOCS; i++)
        if (fake.a[i].real && (uintptr_t)fake.a[i].real + FAKE_POISON == (uintptr_t)dev) {
            free(fake.a[i].real);
            fake.a[i].real = NULL;
            fake.frees++;
            fake.n_live--;
            return;
        }
    fake.bad++; /* not the base of an allocation */
}

static weft_status fake_upload(weft_target *t, void *dst, const void *src, size_t bytes, const weft_exec *ex)
{
    (void)t, (void)ex;
    unsigned char *d = fake_real(dst, bytes);
    if (!d || (uintptr_t)src >= FAKE_POISON) {
        if (d) fake.bad++;
        return weft_fail(WEFT_ERR_INVALID_ARG, "fakedev: upload %p <- %p is not device <- host", dst, src);
    }
    memcpy(d, src, bytes);
    fake.uploads++;
    fake.up_bytes += bytes;
    return WEFT_OK;
}

static weft_status fake_download(weft_target *t, void *dst, const void *src, size_t bytes, const weft_exec *ex)
{
    (void)t, (void)ex;
    const unsigned char *s = fake_real(src, bytes);
    if (!s || (uintptr_t)dst >= FAKE_POISON) {
        if (s) fake.bad++;
        return weft_fail(WEFT_ERR_INVALID_ARG, "fakedev: download %p <- %p is not host <- device", dst, src);
    }
    memcpy(dst, s, bytes);
    fake.downloads++;
    fake.down_bytes += bytes;
    return WEFT_OK;
}

static weft_status fake_sync(weft_target *t, const weft_exec *ex)
{
    (void)t, (void)ex;
    fake.syncs++;
    return WEFT_OK;
}

static const weft_target_ops fake_device_ops = {
    .name = "fakedev",
    .create = fake_create,
    .destroy = fake_destroy,
    .caps = fake_caps,
    .compile = fake_compile,
    .run = fake_run,
    .kernel_destroy = fake_kernel_destroy,
    .alloc = fake_alloc,
    .free_buf = fake_free,
    .upload = fake_upload,
    .download = fake_download,
    .synchronize = fake_sync,
};

static inline void fake_reset_counts(void)
{
    fake.uploads = fake.downloads = fake.syncs = fake.runs = fake.bad = 0;
    fake.up_bytes = fake.down_bytes = 0;
}

static inline weft_status fake_device_register(void) { return weft_target_register(&fake_device_ops); }

#endif
