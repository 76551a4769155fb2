/* Internal error helper: formats the thread-local message and returns the status, so an error
 * site is one line: return weft_fail(WEFT_ERR_SHAPE, "matmul: K=%lld vs %lld", ka, kb); */
#ifndef WEFT_IR_ERROR_H
#define WEFT_IR_ERROR_H
#include "weft/weft.h"

weft_status weft_fail(weft_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clears the thread-local message. */
void weft_error_clear(void);

#endif
