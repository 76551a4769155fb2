/* A whole text file as a NUL-terminated string (malloc'd; NULL when it cannot be opened): the
 * golden-file tests (tests/lower/test_golden.c, tests/targets/test_gpu.c, test_hip.c). */
#ifndef WEFT_TESTS_SLURP_H
#define WEFT_TESTS_SLURP_H
#include <stdio.h>
#include <stdlib.h>

static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    size_t got = s ? fread(s, 1, (size_t)n, f) : 0;
    if (s) s[got] = '\0';
    fclose(f);
    return s;
}

#endif
