/* Thread-local error message and status names (DESIGN #7). */
#include "runtime/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[1024];

static const char *const status_names[] = {
    "WEFT_OK",          "WEFT_ERR_INVALID_ARG", "WEFT_ERR_SHAPE",   "WEFT_ERR_UNSUPPORTED",
    "WEFT_ERR_PARSE",   "WEFT_ERR_NOMEM",       "WEFT_ERR_UNAVAILABLE", "WEFT_ERR_COMPILE",
    "WEFT_ERR_DEVICE",  "WEFT_ERR_DB",          "WEFT_ERR_DB_BUSY", "WEFT_ERR_IO",
    "WEFT_ERR_TIMEOUT", "WEFT_ERR_INTERNAL",
};
_Static_assert(sizeof status_names / sizeof status_names[0] == WEFT_STATUS_COUNT,
               "status_names must list every weft_status");

const char *weft_status_name(weft_status st)
{
    if ((unsigned)st >= WEFT_STATUS_COUNT) return "WEFT_ERR_UNKNOWN";
    return status_names[st];
}

const char *weft_last_error(void) { return last_error; }

const char *weft_version(void) { return WEFT_VERSION_STRING; }

void weft_error_clear(void) { last_error[0] = '\0'; }

weft_status weft_fail(weft_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}
