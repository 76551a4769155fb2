/* Compute patterns of tensor expressions, which default schedules and fusion dispatch on. */
#ifndef WEFT_IR_PATTERN_H
#define WEFT_IR_PATTERN_H
#include "ir/tensor.h"

/* Compute patterns the default schedules dispatch on (ir/pattern.c has the exact rule):
 *   ELEMWISE             no reduction; every read indexes with the tensor's own axes in order
 *                        (dims may be dropped or fixed by constants: broadcast)
 *   INJECTIVE            no reduction; some other index form (padding clamp, transpose, ...)
 *   REDUCTION            reduction axes, no data reuse across output axes (row sum, softmax max)
 *   OUT_REDUCTION_REUSE  reduction axes and a read that walks a reduction axis but not some
 *                        output axis, so its data is reused across that axis (matmul, conv) */
typedef enum weft_op_pattern {
    WEFT_PATTERN_ELEMWISE,
    WEFT_PATTERN_INJECTIVE,
    WEFT_PATTERN_REDUCTION,
    WEFT_PATTERN_OUT_REDUCTION_REUSE,
    WEFT_PATTERN_COUNT
} weft_op_pattern;

/* "elemwise", "injective", "reduction", "out_reduction_reuse". */
extern const char *const weft_op_pattern_names[WEFT_PATTERN_COUNT];
/* Pattern of a compute tensor; a placeholder (no body) counts as ELEMWISE. */
weft_op_pattern weft_tensor_pattern(const weft_tensor *t);

#endif
