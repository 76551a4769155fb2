/* Readable printers for expressions, loop IR and tensor expressions, built on weft_strbuf.
 * Used by golden tests, WEFT_DUMP, `weft show` and error messages; the text is meant for
 * people and for literal comparison in tests, and is stable: change it only together with the
 * golden files.
 *
 * Expressions (weft_ir_print_expr):
 *   infix + - * / == != < <= > >= && || and prefix !, with parentheses only where precedence or
 *   left-to-right grouping needs them (so `a - (b - c)` keeps its parentheses and `a + b*c` has
 *   none); `*` and `/` are written without spaces, the other binary operators with;
 *   floordiv(a, b), floormod(a, b), min(a, b), max(a, b), select(c, t, f), cast<float32>(x),
 *   exp(x), pow(x, y)...; int immediates plain (bool ones as true/false); floats with %.9g
 *   (float32) or %.17g (float64) so they round-trip, always with a '.' or an exponent, and
 *   inf/-inf/nan; TLOAD as A[i, k], LOAD as A[flat_index]. Variables print by name; when two
 *   different variables that are visible together share a name, the later one (or, for a
 *   lone expression, each of them) gets "_<id>" appended.
 *
 * Loop IR (weft_ir_print_stmt, weft_ir_func_str):
 *   func matmul(A: float32[64, 32], B: float32[32, 64], C: float32[64, 64]) {
 *     parallel for (i = 0; i < 64; i++) {
 *       allocate C.local: float32[64] local
 *       for (j = 0; j < 64; j++) {
 *         C.local[j] = 0.0
 *   An ALLOCATE that is the last statement of its block prints its body at the same indent
 *   (the allocation lives until the closing brace); one followed by more statements gets braces.
 *
 * Tensor expressions (weft_te_func_str): one line per tensor, in topological order:
 *   func matmul(A, B) -> (C)
 *   placeholder A: float32[64, 32]
 *   compute C[i, j] = sum(A[i, k]*B[k, j], axis=[k:32])  # float32[64, 64]
 *
 * Ownership: the *_str functions return a malloc'd string (caller frees), or NULL when out of
 * memory; the print functions append to sb (a failed growth is sticky in sb).
 */
#ifndef WEFT_IR_PRINT_H
#define WEFT_IR_PRINT_H
#include "ir/expr.h"
#include "ir/stmt.h"
#include "ir/strbuf.h"
#include "ir/tensor.h"

/* Appends e (NULL prints as "<null>"). */
void weft_ir_print_expr(weft_strbuf *sb, const weft_expr *e);
char *weft_ir_expr_str(const weft_expr *e);

/* Appends s as indented lines (two spaces per indent level), each ending in '\n'. */
void weft_ir_print_stmt(weft_strbuf *sb, const weft_stmt *s, int indent);
char *weft_ir_stmt_str(const weft_stmt *s);
/* The whole loop function: signature with parameter buffers, then the body in braces. */
char *weft_ir_func_str(const weft_loop_func *f);

/* The tensor expressions of f, one line per tensor in topological order. */
void weft_te_print_func(weft_strbuf *sb, const weft_te_func *f);
char *weft_te_func_str(const weft_te_func *f);

#endif
