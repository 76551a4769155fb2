/* fuzz_note: with WEFT_FUZZ_VERBOSE set, says on stderr where an input stopped (the clean error
 * weft gave), so that a seed corpus can be checked to reach the deep paths. */
#ifndef WEFT_TESTS_FUZZ_NOTE_H
#define WEFT_TESTS_FUZZ_NOTE_H
#include <stdio.h>
#include <stdlib.h>

#include "weft/weft.h"

static inline void fuzz_note(const char *where)
{
    if (getenv("WEFT_FUZZ_VERBOSE")) fprintf(stderr, "  %s: %s\n", where, weft_last_error());
}
/* fuzz_reached: the same for an input that got through (no error to show). */
static inline void fuzz_reached(const char *what)
{
    if (getenv("WEFT_FUZZ_VERBOSE")) fprintf(stderr, "  %s\n", what);
}
#endif
