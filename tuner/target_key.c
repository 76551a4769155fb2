/* The target identity a database record is keyed by: backend, CPU name, a hash of its ISA
 * features, the core count and the thread count. New records are always stored under this
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
#include "tuner/tuner.h"

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void weft_tuner_target_init(weft_tuner_target *t, const weft_target_caps *caps, int threads)
{
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

void weft_tuner_key_describe(const char *key, char *buf, size_t n)
{
    char cpu[64];
    key_field(key, "cpu", cpu, sizeof cpu);
    snprintf(buf, n, "cpu=%s threads=%d", cpu[0] ? cpu : "?", key_int(key, "threads"));
}

double weft_tuner_target_distance(const weft_tuner_target *t, const char *key, const char *features)
{
    if (!key || !strcmp(key, t->key)) return -1;
    size_t nlen = strcspn(key, ";");
    if (nlen != strlen(t->name) || strncmp(key, t->name, nlen)) return -1; /* another backend */
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
