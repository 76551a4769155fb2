/* The CPU the LLVM target generates code for, as data.
 *
 * By default that is the host: LLVM's host CPU name and feature list. WEFT_CPU (or the
 * command line's --cpu, which sets it) names another CPU of the same machine's ISA family,
 * so that one machine can produce, run and benchmark code for a lower ISA level, e.g. AVX2
 * code on an AVX-512 machine:
 *
 *     WEFT_CPU=NAME[:FEATURES]     NAME an LLVM x86 CPU name (haswell, znver3, skylake-avx512,
 *                                  znver4, ...), x86-64-v2|v3|v4, or "host";
 *                                  FEATURES extra LLVM features ("+avx512f,-evex512")
 *
 * The feature list is the host's with every feature above NAME's ISA level switched off
 * (AVX-512, AMX and AVX10 for an AVX2 CPU), then the extra features. A CPU whose level the host
 * cannot run is refused, as is a name this table does not know: the generated code must run
 * here. The level also fixes the vector register file (16 registers below AVX-512, 32 with it),
 * which register blocking reads from the caps; cache sizes come from sysfs (the host's caches,
 * whichever CPU the code is for).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/llvm/llvm_internal.h"
#include "runtime/mem.h"

typedef enum isa_level { ISA_SSE2, ISA_SSE42, ISA_AVX, ISA_AVX2, ISA_AVX512 } isa_level;

static const struct { const char *name; isa_level level; } known_cpus[] = {
    {"x86-64", ISA_SSE2},        {"x86-64-v2", ISA_SSE42},     {"nehalem", ISA_SSE42},
    {"westmere", ISA_SSE42},     {"sandybridge", ISA_AVX},     {"ivybridge", ISA_AVX},
    {"x86-64-v3", ISA_AVX2},     {"haswell", ISA_AVX2},        {"broadwell", ISA_AVX2},
    {"skylake", ISA_AVX2},       {"alderlake", ISA_AVX2},      {"raptorlake", ISA_AVX2},
    {"meteorlake", ISA_AVX2},    {"znver1", ISA_AVX2},         {"znver2", ISA_AVX2},
    {"znver3", ISA_AVX2},        {"x86-64-v4", ISA_AVX512},    {"skylake-avx512", ISA_AVX512},
    {"cascadelake", ISA_AVX512}, {"cooperlake", ISA_AVX512},   {"icelake-client", ISA_AVX512},
    {"icelake-server", ISA_AVX512}, {"tigerlake", ISA_AVX512}, {"rocketlake", ISA_AVX512},
    {"sapphirerapids", ISA_AVX512}, {"emeraldrapids", ISA_AVX512}, {"graniterapids", ISA_AVX512},
    {"znver4", ISA_AVX512},      {"znver5", ISA_AVX512},
};

static const char *level_name(isa_level l)
{
    static const char *names[] = {"SSE2", "SSE4.2", "AVX", "AVX2", "AVX-512"};
    return names[l];
}

/* True when feature f (without its sign) is above level l. */
static bool above_level(const char *f, size_t n, isa_level l)
{
    static const char *avx512_up[] = {"avx512", "evex512", "amx", "avx10", "avxvnni", "avxifma", "avxneconvert"};
    static const char *avx2_up[] = {"avx2", "fma", "vaes", "vpclmulqdq", "gfni"};
    static const char *avx_up[] = {"avx", "f16c", "xop", "fma4"};
    for (size_t i = 0; i < sizeof avx512_up / sizeof *avx512_up; i++)
        if (l < ISA_AVX512 && n >= strlen(avx512_up[i]) && !strncmp(f, avx512_up[i], strlen(avx512_up[i]))) return true;
    for (size_t i = 0; i < sizeof avx2_up / sizeof *avx2_up; i++)
        if (l < ISA_AVX2 && n == strlen(avx2_up[i]) && !strncmp(f, avx2_up[i], n)) return true;
    for (size_t i = 0; i < sizeof avx_up / sizeof *avx_up; i++)
        if (l < ISA_AVX && n == strlen(avx_up[i]) && !strncmp(f, avx_up[i], n)) return true;
    return false;
}

static bool has_feature(const char *fs, const char *f)
{
    size_t n = strlen(f);
    for (const char *p = fs; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !memcmp(p, f, n)) return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

static isa_level host_level(const char *fs)
{
    if (has_feature(fs, "+avx512f")) return ISA_AVX512;
    if (has_feature(fs, "+avx2") && has_feature(fs, "+fma")) return ISA_AVX2;
    if (has_feature(fs, "+avx")) return ISA_AVX;
    if (has_feature(fs, "+sse4.2")) return ISA_SSE42;
    return ISA_SSE2;
}

/* Replaces t->cpu / t->features (the host's) by those WEFT_CPU asks for. */
weft_status weft_llvm_select_cpu(weft_target *t)
{
    const char *spec = getenv("WEFT_CPU");
    if (!spec || !*spec) return WEFT_OK;
    char name[64];
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    if (nlen == 0 || nlen >= sizeof name)
        return weft_fail(WEFT_ERR_INVALID_ARG, "WEFT_CPU '%s': expected NAME[:+feature,-feature...]", spec);
    memcpy(name, spec, nlen);
    name[nlen] = '\0';
    const char *extra = colon ? colon + 1 : "";
    for (const char *p = extra; *p; p++)
        if (!(isalnum((unsigned char)*p) || strchr("+-,._", *p)))
            return weft_fail(WEFT_ERR_INVALID_ARG, "WEFT_CPU '%s': bad character '%c' in the feature list", spec, *p);
    for (const char *p = extra; p && *p;) {
        if ((*p != '+' && *p != '-') || !isalnum((unsigned char)p[1]))
            return weft_fail(WEFT_ERR_INVALID_ARG, "WEFT_CPU '%s': each feature is +NAME or -NAME ('%s')", spec, p);
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char f[64];
        snprintf(f, sizeof f, "+%.*s", (int)(n - 1 < sizeof f - 2 ? n - 1 : sizeof f - 2), p + 1);
        bool known = has_feature(t->features, f);
        f[0] = '-';
        if (!known && !has_feature(t->features, f))
            return weft_fail(WEFT_ERR_INVALID_ARG, "WEFT_CPU '%s': LLVM knows no feature '%.*s'", spec, (int)n - 1, p + 1);
        p = e ? e + 1 : NULL;
    }
    isa_level hl = host_level(t->features);
    isa_level level = hl;
    if (strcmp(name, "host") && strcmp(name, "native")) {
        int found = -1;
        for (size_t i = 0; i < sizeof known_cpus / sizeof *known_cpus; i++)
            if (!strcmp(known_cpus[i].name, name)) found = (int)i;
        if (found < 0)
            return weft_fail(WEFT_ERR_INVALID_ARG,
                             "WEFT_CPU '%s': unknown CPU '%s' (try haswell, znver3, skylake-avx512, znver4, "
                             "x86-64-v3, x86-64-v4 or host)", spec, name);
        level = known_cpus[found].level;
        if (level > hl)
            return weft_fail(WEFT_ERR_UNAVAILABLE, "WEFT_CPU '%s': %s needs %s, which this CPU (%s, %s) lacks", spec, name,
                             level_name(level), t->cpu, level_name(hl));
    }
    /* Host features with everything above the level switched off, then the extras. */
    size_t cap = strlen(t->features) + strlen(extra) + 4;
    char *fs = weft_malloc(cap);
    char *cpu = weft_strdup(strcmp(name, "native") && strcmp(name, "host") ? name : t->cpu);
    if (!fs || !cpu) {
        free(fs);
        free(cpu);
        return weft_fail(WEFT_ERR_NOMEM, "WEFT_CPU: feature list");
    }
    size_t len = 0;
    for (const char *p = t->features; p && *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n > 1) {
            if (len) fs[len++] = ',';
            memcpy(fs + len, p, n);
            if (p[0] == '+' && above_level(p + 1, n - 1, level)) fs[len] = '-';
            len += n;
        }
        p = e ? e + 1 : NULL;
    }
    if (*extra) {
        if (len) fs[len++] = ',';
        memcpy(fs + len, extra, strlen(extra));
        len += strlen(extra);
    }
    fs[len] = '\0';
    free(t->cpu);
    free(t->features);
    t->cpu = cpu;
    t->features = fs;
    return WEFT_OK;
}

/* Size in bytes of the host's cache of the given level ("Data"/"Unified" only), 0 if unknown. */
static long cache_bytes(int want_level)
{
    for (int i = 0; i < 8; i++) {
        char path[128], buf[64];
        int level = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f) break;
        if (fscanf(f, "%d", &level) != 1) level = 0;
        fclose(f);
        if (level != want_level) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        f = fopen(path, "r");
        if (!f) continue;
        bool ok = fgets(buf, sizeof buf, f) && (!strncmp(buf, "Data", 4) || !strncmp(buf, "Unified", 7));
        fclose(f);
        if (!ok) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        f = fopen(path, "r");
        if (!f) continue;
        long v = 0;
        char unit = 0;
        int got = fscanf(f, "%ld%c", &v, &unit);
        fclose(f);
        if (got < 1 || v <= 0) continue;
        if (got == 2 && (unit == 'K' || unit == 'k')) v *= 1024;
        else if (got == 2 && (unit == 'M' || unit == 'm')) v *= 1024 * 1024;
        return v;
    }
    return 0;
}

void weft_llvm_fill_machine_caps(const char *features, weft_target_caps *c)
{
    isa_level l = host_level(features ? features : "");
    bool wide = l == ISA_AVX512 && !has_feature(features, "-evex512");
    c->vector_bits = wide ? 512 : l >= ISA_AVX ? 256 : 128;
    c->vector_lanes_f32 = c->vector_bits / 32;
    c->vector_regs = l == ISA_AVX512 ? 32 : 16;
    c->fma = l >= ISA_AVX2;
    long l1 = cache_bytes(1), l2 = cache_bytes(2), l3 = cache_bytes(3);
    c->l1d_bytes = l1 > 0 ? l1 : 32 * 1024;
    c->l2_bytes = l2 > 0 ? l2 : 512 * 1024;
    c->l3_bytes = l3 > 0 ? l3 : 8 * 1024 * 1024;
}
