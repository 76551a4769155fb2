/* The meaning of every binary expression kind on concrete values, in one place: constant
 * folding (ir/expr.c) and the loop-IR interpreter (targets/interp) both compute through these,
 * so a folded constant and an interpreted one never differ. The LLVM backend emits the same
 * operations (targets/llvm/expr.c: floordiv/floormod rounding toward negative infinity,
 * wrapping integer arithmetic, float min/max as llvm.minnum/maxnum), except that it lets
 * float arithmetic reassociate and contract.
 *
 * Integers: ADD, SUB, MUL wrap (two's complement); DIV truncates; FLOORDIV and FLOORMOD round
 * toward negative infinity (floormod takes the divisor's sign); x / -1 is -x wrapped (so
 * INT64_MIN / -1 is INT64_MIN) and x mod -1 is 0; division by zero is undefined (false).
 * Comparisons and AND/OR give 0 or 1. Results are int64; weft_binop_wrap narrows them to a
 * dtype (int32 wraps, bool is != 0).
 * Floats: IEEE arithmetic in the operands' precision (float32 ops are computed in float);
 * FLOORDIV is floor(p / q), FLOORMOD p - floor(p / q) * q; MIN and MAX are fmin/fmax (a NaN
 * operand yields the other one). Integer MIN/MAX are the usual.
 */
#ifndef WEFT_IR_BINOP_H
#define WEFT_IR_BINOP_H
#include <stdbool.h>
#include <stdint.h>

#include "ir/dtype.h"
#include "ir/expr.h"

/* Integer (and bool) k on p, q into *r; false when k is not an integer binary op or the
 * result is undefined (division by zero). */
bool weft_binop_int(weft_expr_kind k, int64_t p, int64_t q, int64_t *r);
/* v narrowed to dtype t as a value of t is stored (int32 wraps, bool is v != 0). */
int64_t weft_binop_wrap(weft_dtype t, int64_t v);
/* Float arithmetic k (ADD SUB MUL DIV FLOORDIV FLOORMOD MIN MAX) into *r; false for other k. */
bool weft_binop_f32(weft_expr_kind k, float p, float q, float *r);
bool weft_binop_f64(weft_expr_kind k, double p, double q, double *r);
/* Comparison k (EQ NE LT LE GT GE) on floats: 0 or 1 into *r; false for other k. float32
 * operands compare exactly as doubles. */
bool weft_binop_fcmp(weft_expr_kind k, double p, double q, int64_t *r);
/* Greatest common divisor of |a| and |b| (0 when both are 0). */
int64_t weft_gcd64(int64_t a, int64_t b);

#endif
