/* Internal error helper: formats the thread-local message and returns the status, so an error
 * site is one line: return weft_fail(WEFT_ERR_SHAPE, "matmul: K=%lld vs %lld", ka, kb);
 * It lives in runtime/, the lowest layer, so every layer (the runtime included) reports errors
 * the same way; ir/error.h re-exports it for the layers above. */
#ifndef WEFT_RUNTIME_ERROR_H
#define WEFT_RUNTIME_ERROR_H
#include "weft/weft.h"

weft_status weft_fail(weft_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clears the thread-local message. */
void weft_error_clear(void);

#endif
