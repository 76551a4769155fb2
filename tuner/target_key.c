/* The target identity a database record is keyed by: backend, CPU name, a hash of its ISA
 * features, the core count and the thread count; for a CUDA device (tuned with --target cuda)
 * the device name, compute capability and driver version (nearest device: gpu_distance). New records are always stored under this
 * machine's key; serving (apply.c) and tuning (tune.c) prefer it, and where it has no record
 * for a kernel they take the record of the nearest machine in the database, in this order:
 *
 *   distance  machine of the record
 *   0 + |dt|  same CPU name and ISA features, another thread count (dt: thread difference)
 *   100       same ISA level (vector width: AVX-512F, AVX2, other) and the same thread count
 *   200 + ..  any other of the same backend: same ISA level first, then the same thread
 *             count, then the nearest thread count
 *   < 0       never: this machine's own key (looked up first, separately) or another backend
 *
 * The ISA level is derived from the feature list stored with each target (the key itself only
 * holds its hash), so databases written before this rule need no migration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#ifdef WEFT_WITH_CUDA
#include "targets/cuda/cuda.h"
#endif
#include "tuner/measure_gpu.h"
#include "tuner/tuner.h"

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* A CUDA target's key is its device's: the driver is asked here, in this process (a process
 * that serves or benchmarks on the device uses the driver anyway; the tuner never comes here
 * for a GPU, it keys by weft_tuner_target_init_gpu with what its probe worker found). Without
 * a driver or device the key says so ("dev=?"), and lookups take the nearest device's records. */
static void init_cuda(weft_tuner_target *t, const weft_target_caps *caps)
{
    weft_gpu_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "?");
#ifdef WEFT_WITH_CUDA
    weft_cuda_device cd;
    if (weft_cuda_device_query(&cd) == WEFT_OK) {
        snprintf(d.name, sizeof d.name, "%s", cd.name);
        d.cc_major = cd.cc_major;
        d.cc_minor = cd.cc_minor;
        d.driver_version = cd.driver_version;
        d.sms = cd.sms;
    }
#endif
    if (!d.cc_major && !strncmp(caps->cpu, "sm_", 3)) { /* no device: the architecture compiled for */
        int num = atoi(caps->cpu + 3);
        d.cc_major = num / 10;
        d.cc_minor = num % 10;
    }
    weft_tuner_target_init_gpu(t, &d);
}

void weft_tuner_target_init(weft_tuner_target *t, const weft_target_caps *caps, int threads)
{
    if (caps->name && !strcmp(caps->name, "cuda")) {
        init_cuda(t, caps);
        return;
    }
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", caps->name ? caps->name : "?");
    snprintf(t->features, sizeof t->features, "%s", caps->features);
    t->cores = weft_rt_cores();
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            const char *c = strchr(line, ':');
            if (c) snprintf(t->model, sizeof t->model, "%s", c + 2);
            t->model[strcspn(t->model, "\n")] = '\0';
            break;
        }
    if (f) fclose(f);
    t->threads = threads > 0 ? threads : t->cores;
    snprintf(t->key, sizeof t->key, "%s;cpu=%s;feat=%016llx;cores=%d;threads=%d", t->name, caps->cpu[0] ? caps->cpu : "?",
             (unsigned long long)fnv1a(caps->features), t->cores, t->threads);
}

void weft_tuner_target_init_gpu(weft_tuner_target *t, const weft_gpu_device *d)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "cuda");
    char name[101];
    snprintf(name, sizeof name, "%.100s", d->name[0] ? d->name : "?"); /* the key holds 160 */
    for (char *p = name; *p; p++)
        if (*p == ';' || *p == '=' || *p == '\n') *p = '_';
    snprintf(t->model, sizeof t->model, "%s", d->name);
    snprintf(t->features, sizeof t->features, "sm_%d%d", d->cc_major, d->cc_minor);
    t->cores = d->sms;
    t->threads = 1;
    snprintf(t->key, sizeof t->key, "cuda;dev=%s;cc=%d.%d;drv=%d", name, d->cc_major, d->cc_minor, d->driver_version);
}

/* Does the comma-separated feature list hold exactly `feat` ("+avx512f")? */
static bool has_feature(const char *list, const char *feat)
{
    size_t n = strlen(feat);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !strncmp(p, feat, n)) return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

int weft_tuner_isa_level(const char *features)
{
    if (!features || !*features) return WEFT_ISA_UNKNOWN;
    if (has_feature(features, "+avx512f")) return WEFT_ISA_AVX512;
    if (has_feature(features, "+avx2")) return WEFT_ISA_AVX2;
    return WEFT_ISA_OTHER;
}

/* Field `name` ("cpu") of a key "llvm;cpu=X;feat=Y;cores=2;threads=2" into buf ("" if none). */
static void key_field(const char *key, const char *name, char *buf, size_t n)
{
    buf[0] = '\0';
    size_t len = strlen(name);
    for (const char *p = strchr(key, ';'); p; p = strchr(p + 1, ';'))
        if (!strncmp(p + 1, name, len) && p[1 + len] == '=') {
            const char *v = p + 2 + len;
            snprintf(buf, n, "%.*s", (int)strcspn(v, ";"), v);
            return;
        }
}

static int key_int(const char *key, const char *name)
{
    char buf[32];
    key_field(key, name, buf, sizeof buf);
    return buf[0] ? atoi(buf) : 0;
}

/* Compute capability "9.0" of a cuda key as 90 (0 when absent). */
static int key_cc(const char *key)
{
    char buf[16];
    int major = 0, minor = 0;
    key_field(key, "cc", buf, sizeof buf);
    return sscanf(buf, "%d.%d", &major, &minor) == 2 ? major * 10 + minor : 0;
}

/* CUDA devices: the same device (name and compute capability) under another driver 1; the
 * same compute capability 100; the same major version 200 + the minor difference; any other
 * 300 + the difference in compute capability (a record of another architecture still replays:
 * step text is not tied to one). */
static double gpu_distance(const weft_tuner_target *t, const char *key)
{
    char dev[128], my_dev[128];
    key_field(key, "dev", dev, sizeof dev);
    key_field(t->key, "dev", my_dev, sizeof my_dev);
    int cc = key_cc(key), my_cc = key_cc(t->key);
    if (cc == my_cc && !strcmp(dev, my_dev)) return 1;
    if (cc == my_cc) return 100;
    if (cc / 10 == my_cc / 10) return 200 + abs(cc - my_cc);
    return 300 + abs(cc - my_cc);
}

void weft_tuner_key_describe(const char *key, char *buf, size_t n)
{
    if (!strncmp(key, "cuda;", 5)) {
        char dev[128], cc[16];
        key_field(key, "dev", dev, sizeof dev);
        key_field(key, "cc", cc, sizeof cc);
        snprintf(buf, n, "dev=%s cc=%s drv=%d", dev[0] ? dev : "?", cc[0] ? cc : "?", key_int(key, "drv"));
        return;
    }
    char cpu[64];
    key_field(key, "cpu", cpu, sizeof cpu);
    snprintf(buf, n, "cpu=%s threads=%d", cpu[0] ? cpu : "?", key_int(key, "threads"));
}

double weft_tuner_target_distance(const weft_tuner_target *t, const char *key, const char *features)
{
    if (!key || !strcmp(key, t->key)) return -1;
    size_t nlen = strcspn(key, ";");
    if (nlen != strlen(t->name) || strncmp(key, t->name, nlen)) return -1; /* another backend */
    if (!strcmp(t->name, "cuda")) return gpu_distance(t, key);
    char cpu[64], feat[32], my_cpu[64], my_feat[32];
    key_field(key, "cpu", cpu, sizeof cpu);
    key_field(key, "feat", feat, sizeof feat);
    key_field(t->key, "cpu", my_cpu, sizeof my_cpu);
    key_field(t->key, "feat", my_feat, sizeof my_feat);
    int threads = key_int(key, "threads");
    int dt = abs(threads - t->threads);
    bool same_isa = weft_tuner_isa_level(features) == weft_tuner_isa_level(t->features) &&
                    weft_tuner_isa_level(t->features) != WEFT_ISA_UNKNOWN;
    if (!strcmp(cpu, my_cpu) && !strcmp(feat, my_feat)) return dt; /* only the thread count (or cores) differs */
    if (same_isa && dt == 0) return 100;
    return 200 + (same_isa ? 0 : 50) + (dt == 0 ? 0 : 10) + (dt < 10 ? dt : 10);
}
