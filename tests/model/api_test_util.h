/* Helpers the model-level tests share (test_api.c, test_device.c, tests/targets' model checks): reading a raw float32
 * reference file, and asserting a status together with a phrase of the error message. Include
 * after <cmocka.h>. */
#ifndef WEFT_TESTS_MODEL_API_TEST_UTIL_H
#define WEFT_TESTS_MODEL_API_TEST_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

static inline float *read_floats(const char *path, size_t *bytes)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    float *x = malloc((size_t)len + 4);
    assert_non_null(x);
    assert_int_equal(fread(x, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *bytes = (size_t)len;
    return x;
}

static inline void expect_error(weft_status got, weft_status want, const char *needle)
{
    const char *msg = weft_last_error();
    if (got != want || !strstr(msg, needle))
        fprintf(stderr, "got %s (want %s): '%s' (wanted '%s')\n", weft_status_name(got), weft_status_name(want), msg, needle);
    assert_int_equal(got, want);
    assert_non_null(strstr(msg, needle));
}

#endif
