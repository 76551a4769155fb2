/* Error reporting for ir/ and every layer above: weft_fail and weft_error_clear, implemented in
 * runtime/error.c (the lowest layer). */
#ifndef WEFT_IR_ERROR_H
#define WEFT_IR_ERROR_H
#include "runtime/error.h"

#endif
