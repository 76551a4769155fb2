/* Stable structural content hash of a kernel's tensor expressions: the key under which the
 * schedule database stores tuning records (STYLE §4.2: distinct from any intern hash, which may
 * read pointers).
 *
 * What goes in: expression kinds, dtypes, immediates (floats by bit pattern, so -0.0 != 0.0),
 * intrinsic ids, tensor shapes, placeholder/compute, reduce kinds and extents, the graph (a
 * TLOAD names the tensor it reads by its position in f->tensors), which tensors are the inputs
 * and the outputs (by position), and variables numbered by their binding (axis d or reduction
 * axis r of the tensor whose body uses them). What stays out: every address, every name (the
 * kernel's, the tensors', the variables'), and arena ids. So the same kernel built twice, or
 * with its tensors and variables renamed, hashes equal; a different shape, dtype, constant or
 * op does not (up to 64-bit collisions).
 *
 * weft_te_func_equal compares exactly the same facts, so equal kernels always hash equal.
 * Both are pure functions of their arguments: no allocation, thread-safe.
 */
#ifndef WEFT_IR_HASH_H
#define WEFT_IR_HASH_H
#include <stdbool.h>
#include <stdint.h>

#include "ir/tensor.h"

uint64_t weft_te_func_hash(const weft_te_func *f);
/* Structural equality under the rules above (names ignored). */
bool weft_te_func_equal(const weft_te_func *a, const weft_te_func *b);
/* The hash as 16 lower-case hex digits and a NUL. */
void weft_te_func_hash_hex(const weft_te_func *f, char out[17]);

#endif
