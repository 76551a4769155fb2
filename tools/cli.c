/* Argument and file helpers shared by the weft and weft-bench commands. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "runtime/mem.h"

int weft_cli_parse_shape(const char *s, int64_t *out, int max)
{
    int n = 0;
    const char *p = s;
    if (!*p) return -1;
    while (*p) {
        char *end;
        errno = 0;
        if (*p == ' ' || *p == '\t') return -1;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || n == max) return -1;
        out[n++] = v;
        if (*end == ',' && end[1]) end++;
        else if (*end) return -1;
        p = end;
    }
    return n;
}

int weft_cli_shape(const weft_args *a, int64_t *out, int max)
{
    const char *s = weft_args_str(a, "--shape", NULL);
    if (!s) return weft_args_fail(a->spec, "--shape S is required (comma-separated sizes, e.g. --shape 64,64,64)"), -1;
    int n = weft_cli_parse_shape(s, out, max);
    if (n < 0) weft_args_fail(a->spec, "--shape expects a comma-separated list of at most %d integers, got '%s'", max, s);
    return n;
}

char *weft_cli_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *buf = weft_malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0) break;
        if (len + 1 == cap) {
            char *nb = weft_realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[len] = '\0';
    return buf;
}
