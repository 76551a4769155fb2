/* The target identity a database record is keyed by: backend, CPU name, a hash of its ISA
 * features and the core count. A record measured under one key is never served to another. */
#include <stdio.h>
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
